# The `expert` policy: learned models decide where the search gains most over
# `tickets` (docs/expert.md).
#
# A model file holds up to two tree ensembles over the same board-independent features,
# computed from what the seat may know only (its hand and tickets, the board, public
# counts). `setup` scores every initial keep set, with features of the plan (the planner
# of _planning.pxd) joining the tickets kept; the best is kept. `turns`, when the file
# has it, scores the candidates of a turn: what `tickets` (this seat's own instance, kept
# for the whole game) would play, the claim worth most now, the longest claims the hand
# pays, a blind draw, a face-up card of each colour on offer and a ticket draw (the
# search's own turn candidates but `routes`' move, which cost a sixth of a decision and
# little strength), with features of the plan `tickets` follows. Every other decision
# (and a turn without a `turns` section) is `tickets`' own, at `tickets`' speed. The same
# compiled code gives the features to the training pipeline (ExpertPolicy.candidates),
# so the model sees in play exactly what it was trained on.
cimport cython
from libc.math cimport INFINITY
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memcmp, memcpy, memset

from ttrsim._structs cimport *
from ttrsim._engine cimport (CompiledBoard, copy_position, action_a, action_c, action_kind, hand_total,
                             is_legal, legal_actions, make_action)
from ttrsim._bits cimport lowest_bit
from ttrsim._rng cimport rng_below, rng_seed, rng_uniform
from ttrsim._policies cimport PlanFollower
from ttrsim._planning cimport (BoardInfo, Candidates, INF_COST, Needs, Plan, UNIT, Workspace,
                               board_info_init, cand_add, claim_payment, hand_most, turn_candidates,
                               own_components, plan_tickets, rounds_left, shortest_from,
                               unknown_cards)

import json
import os

import numpy as np

from ttrsim._policies import TicketsPolicy


cdef enum:
    MAX_XCAND = 32            # candidates per decision at most
    N_FEAT = 69               # features per candidate (FEATURES below)
    N_FEAT4 = 60              # of which a format-4 model reads the first N_FEAT4
    N_LONGEST = 4             # longest claims among a turn's candidates (as search:claims=4)
    N_PROP = 2                # proposers: tickets, the best claim
    MEMO_BITS = 12            # plans of initial ticket choices remembered: 4096 entries
    CHECK = 4                 # trees between two checks of which rows can still win
    N_KINDS = 5               # candidate kinds a section may favour: features 3..7
    KIND0 = 3
    N_META = 4                # a recorded decision: game, seat, kind, game turn
    REC_SETUP = 0             # recorded decision kinds (RECORD_KINDS)
    REC_TURNS = 1
    REC_KEEP = 2

# Feature names, in the order of the compiled feature vector (a model file names the
# features it was trained on; a mismatch is refused when the file is loaded).
FEATURES = (
    "is_tickets", "is_best_claim", "agree",
    "claim", "blind", "faceup", "draw_tickets", "station",
    "route_len", "route_points", "wild_used", "tunnel",
    "tickets_joined", "points_joined", "touches_network",
    "faceup_wild", "faceup_have",
    "trains_me", "trains_min_other", "trains_after", "last_round",
    "hand", "open_tickets", "open_points", "done_points",
    "ticket_deck", "players", "rounds", "route_lead",
    # what `tickets` would play, on every candidate's row (the trees compare with it)
    "tk_claim", "tk_faceup", "tk_blind", "tk_draw_tickets", "tk_route_len", "tk_joined",
    "faceup_wilds", "hand_most", "train_cards_left",
    # ticket choices (initial and drawn): the plan joining the tickets held and kept
    "keep", "setup", "kept", "kept_points", "kept_long", "plan_trains", "plan_extra",
    "plan_slack", "plan_dropped", "plan_claims", "points_per_train",
    # turns: the plan `tickets` follows (what is left to do before the end), the fewest
    # trains of any seat, and whether a claim is on the plan
    "left_trains", "left_claims", "left_points", "left_dropped", "cards_short",
    "fewest_trains", "on_plan",
    # turns: the longest claim the hand pays, the cards of a face-up candidate's colour the
    # plan still misses, the cards the plan still misses in all, the rounds left (estimate)
    "longest_claim", "colour_missing", "plan_short", "rounds_left",
    # format 5 (the whole game: ticket draws and the keep after one): the tickets the seat
    # could draw (those it has not seen: neither held nor discarded by it, long ones not
    # where they have a deck of their own), as shares of them and as points per ticket:
    # already joined by its network, and joinable within its trains to spare; those
    # trains; the Globetrotter's bonus and the seat's completed tickets against the most
    # tickets another seat holds (public); for a ticket choice the points of the kept
    # tickets already joined, and joinable within the trains to spare
    "deck_done", "deck_done_points", "deck_near", "deck_near_points", "trains_spare",
    "globetrotter", "globetrotter_lead", "kept_done_points", "kept_near_points",
)
assert len(FEATURES) == N_FEAT
# a format-4 model file names (and its trees read) the first N_FEAT4 features only
FEATURES4 = FEATURES[:N_FEAT4]
# the candidate kinds a format-5 section's `bias` may favour (features KIND0..KIND0+4)
KINDS = FEATURES[KIND0:KIND0 + N_KINDS]
# the decision kinds a recording ExpertPolicy writes (its rows' `kind`: an index here), the
# names of the model file's sections: initial tickets, turns, the keep after a draw
RECORD_KINDS = ("setup", "turns", "keep")
# the exploration stream of a recording policy: its start seed xor this (the stream of
# `tickets`, its planner, is drawn from the start seed itself)
cdef uint64_t _EXPLORE_SALT = 0x6A09E667F3BCC909ULL
EXPLORE_SALT = _EXPLORE_SALT

FORMAT = "ttrsim-expert"
FORMAT_VERSION = 5
# the versions read: 4 (the initial tickets and turns over FEATURES4) and 5 (every
# feature, and a `keep` section for the tickets kept after a draw)
FORMAT_VERSIONS = (4, 5)
# trained against the field (docs/expert.md, "Trained against the field")
DEFAULT_MODEL = "expert-v4-field.json"
# the models shipped in the package, played by name: expert:model=NAME (docs/expert.md);
# "v4" was the default until 2026-11-28, trained against `tickets` only; "whole" (format 5)
# draws tickets and keeps them as the search does (docs/expert.md, "The whole game")
SHIPPED_MODELS = {"field": "expert-v4-field.json", "v4": "expert-v4.json",
                  "usa1910": "expert-v4-usa1910.json", "whole": "expert-v5-whole.json"}


class ModelFileError(ValueError):
    """The expert model file is missing, unreadable or not a valid model."""


ctypedef struct SetupMemo:
    # a plan of initial tickets on the empty board: it depends on the board, the tickets
    # and the trains only (nothing is claimed yet), and many deals repeat ticket subsets
    uint64_t uid
    uint64_t tickets[2]
    int trains
    int plan_trains
    int claims
    int dropped


ctypedef struct OpenTickets:
    # the seat's tickets its own routes do not join yet: the components of their cities
    # in its own network (own_components) and their points
    int n
    int8_t ca[MAX_TICKETS]
    int8_t cb[MAX_TICKETS]
    int16_t points[MAX_TICKETS]


cdef void open_tickets(const BoardC* b, const GameState* s, int seat, const int8_t* comp,
                       OpenTickets* o) noexcept nogil:
    cdef int t
    o.n = 0
    for t in range(b.n_tickets):
        if (s.p[seat].tickets[t >> 6] >> (t & 63) & 1) and comp[b.ticket_a[t]] != comp[b.ticket_b[t]]:
            o.ca[o.n] = comp[b.ticket_a[t]]
            o.cb[o.n] = comp[b.ticket_b[t]]
            o.points[o.n] = b.ticket_points[t]
            o.n += 1


cdef inline int joins(const BoardC* b, int r, const int8_t* comp, const OpenTickets* o,
                      int* points) noexcept nogil:
    """Open tickets (o) that route r would join; their points in *points. Adding r joins
    a ticket exactly when its two cities' components are r's two ends' components."""
    cdef int i, n = 0
    cdef int cx = comp[b.route_a[r]], cy = comp[b.route_b[r]]
    points[0] = 0
    if cx == cy:
        return 0
    for i in range(o.n):
        if (o.ca[i] == cx and o.cb[i] == cy) or (o.ca[i] == cy and o.cb[i] == cx):
            n += 1
            points[0] += o.points[i]
    return n


ctypedef struct Node:
    double threshold          # a leaf: +inf, so that every row stays there
    int32_t feature           # a leaf: 0 (any feature: it is never above +inf)
    int32_t left              # the left child, the right one is left + 1; a leaf: itself


cdef inline int fewest_trains(const GameState* s) noexcept nogil:
    cdef int q, n = s.p[0].trains
    for q in range(1, s.n_players):
        if s.p[q].trains < n:
            n = s.p[q].trains
    return n


cdef class TreeModel:
    """Gradient-boosted regression trees in flat arrays: node i tests
    ``x[feature[i]] <= threshold[i]``; tree t starts at node roots[t] and has leaves
    depth[t] steps down at most; a leaf leads to itself and is worth value[i]. The score
    of a candidate is base + the sum of its leaves. Every walk of a tree takes the same
    depth[t] steps, so that the walks of several candidates through one tree run side
    by side (independent loads the processor overlaps) instead of one after the other."""
    cdef int n_nodes
    cdef int n_trees
    cdef Node* nodes
    cdef double* value
    cdef int32_t* roots
    cdef int32_t* depth
    cdef double* above                # above[t]: the most trees t.. can add (their top leaves)
    cdef double* below                # below[t]: the least
    cdef readonly double base
    cdef readonly double margin  # the section's margin: added to tickets' own choice
    cdef double kbias[N_KINDS]          # format 5: added to a candidate of each kind (KINDS)
    cdef bint biased                    #   (any not 0)
    cdef readonly int max_trains        # turns: scored only once a seat has this many trains
                                        # or fewer (the end game); otherwise tickets' own
    cdef readonly int widest            # the highest feature a node tests (-1: none)

    def __cinit__(self):
        self.nodes = NULL
        self.value = NULL
        self.roots = NULL
        self.depth = NULL
        self.above = NULL
        self.below = NULL

    def __dealloc__(self):
        free(self.nodes)
        free(self.value)
        free(self.roots)
        free(self.depth)
        free(self.above)
        free(self.below)

    @property
    def n_trees_(self):
        return self.n_trees

    @property
    def n_nodes_(self):
        return self.n_nodes

    cdef inline double tree(self, int t, const float* x) noexcept nogil:
        cdef int i = self.roots[t], d
        cdef const Node* nd
        for d in range(self.depth[t]):
            # sklearn's trees compare the float32 feature with a float64 threshold;
            # the right child follows the left one
            nd = &self.nodes[i]
            i = nd.left + (<double>x[nd.feature] > nd.threshold)
        return self.value[i]

    cdef double score(self, const float* x) noexcept nogil:
        cdef double total = self.base
        cdef int t
        for t in range(self.n_trees):
            total += self.tree(t, x)
        return total

    cdef inline double offset(self, const float* row, int k) noexcept nogil:
        """What the section adds to row k's trees: its margin to row 0 (tickets' own
        choice), its bias to a candidate of each kind."""
        cdef double o = self.margin if k == 0 else 0.0
        cdef int i
        if self.biased:
            for i in range(N_KINDS):
                if row[KIND0 + i] > 0.5:            # the kind flags are 0 or 1
                    o += self.kbias[i]
        return o

    cdef int best(self, const float* x, int stride, int n, double* out) noexcept nogil:
        """The row (of n; row k at x + k * stride) with the highest score, the section's
        margin added to row 0's and its bias to each row of a favoured kind (offset);
        ties go to the earlier row. Exactly the argmax of the
        rows' scores, found sooner: CHECK trees at a time over the rows still in the
        running, all those walks side by side, and after every CHECK trees a row whose
        sum so far plus the most the remaining trees can add stays below another's sum so
        far plus the least they can add cannot win and is no longer scored. out[]: the
        rows' sums so far."""
        cdef int live[MAX_XCAND]
        cdef int at[CHECK * MAX_XCAND]      # the node each (tree, row) walk is at
        cdef const float* row[MAX_XCAND]
        cdef double off[MAX_XCAND]
        cdef int n_live = n, t = 0, end, j, k, keep, win, d, deepest, w, n_walks
        cdef double floor, top
        cdef const Node* nd
        for k in range(n):
            out[k] = self.base
            live[k] = k
            off[k] = self.offset(x + k * stride, k)
        while t < self.n_trees:
            end = t + CHECK if t + CHECK < self.n_trees else self.n_trees
            # the walks of CHECK trees by every live row, side by side; a walk past its
            # leaf stays on it, so all take the deepest tree's steps
            deepest = 0
            n_walks = 0
            for k in range(t, end):
                if self.depth[k] > deepest:
                    deepest = self.depth[k]
                for j in range(n_live):
                    at[n_walks] = self.roots[k]
                    n_walks += 1
            for j in range(n_live):
                row[j] = x + live[j] * stride
            for d in range(deepest):
                w = 0
                while w < n_walks:
                    for j in range(n_live):
                        nd = &self.nodes[at[w]]
                        at[w] = nd.left + (<double>row[j][nd.feature] > nd.threshold)
                        w += 1
            w = 0
            while t < end:                  # the rows' sums in tree order, as in score()
                for j in range(n_live):
                    out[live[j]] += self.value[at[w]]
                    w += 1
                t += 1
            if t == self.n_trees:
                break
            floor = -1e300
            for j in range(n_live):
                k = live[j]
                top = out[k] + off[k] + self.below[t]
                if top > floor:
                    floor = top
            keep = 0
            for j in range(n_live):
                k = live[j]
                # the slack covers the rounding of sums taken in another order
                if out[k] + off[k] + self.above[t] + 1e-9 >= floor:
                    live[keep] = k
                    keep += 1
            n_live = keep
            if n_live == 1:
                return live[0]
        for j in range(n_live):
            out[live[j]] += off[live[j]]
        win = live[0]
        for j in range(1, n_live):
            if out[live[j]] > out[win]:
                win = live[j]
        return win

    def offsets(self, X):
        """What the section adds to each row of one decision's feature matrix (row 0:
        tickets' own choice): its margin to row 0 and its bias to each favoured kind."""
        cdef float[:, ::1] xv = np.ascontiguousarray(X, dtype=np.float32)
        out = np.empty(xv.shape[0], dtype=np.float64)
        cdef Py_ssize_t k
        for k in range(xv.shape[0]):
            out[k] = self.offset(&xv[k, 0], k)
        return out

    @property
    def bias(self):
        """The section's bias per candidate kind (KINDS), zeros where it has none."""
        return {KINDS[i]: self.kbias[i] for i in range(N_KINDS)}

    def pick(self, X):
        """The row of a feature matrix that play chooses: the highest score, the margin
        added to row 0's, ties to the earlier row (at most 32 rows)."""
        cdef float[:, ::1] xv = np.ascontiguousarray(X, dtype=np.float32)
        cdef double out[MAX_XCAND]
        self.check_width(xv.shape[1])
        if not 0 < xv.shape[0] <= MAX_XCAND:
            raise ValueError(f"expected 1 to {MAX_XCAND} rows of features")
        return self.best(&xv[0, 0], xv.shape[1], xv.shape[0], out)

    def check_width(self, n):
        """Refuse rows of n features unless they hold every feature a node tests (rows of
        the N_FEAT4 features of format 4, or all N_FEAT)."""
        if n not in (N_FEAT4, N_FEAT) or self.widest >= n:
            raise ValueError(f"expected rows of {N_FEAT} features (or {N_FEAT4} for trees "
                             f"of format 4), got {n}")

    def predict(self, X):
        """Scores of the rows of a feature matrix (n, len(FEATURES)), as in play."""
        cdef float[:, ::1] xv = np.ascontiguousarray(X, dtype=np.float32)
        self.check_width(xv.shape[1])
        out = np.empty(xv.shape[0], dtype=np.float64)
        cdef double[::1] ov = out
        cdef Py_ssize_t i
        for i in range(xv.shape[0]):
            ov[i] = self.score(&xv[i, 0])
        return out


cdef class ExpertModel:
    """The content of a model file: ``setup`` scores initial ticket choices; ``turns``
    (None when the file has none) scores the candidates of a turn; ``keep`` (format 5,
    None when the file has none) scores the tickets kept after a draw. Every other
    decision is ``tickets``' own."""
    cdef readonly TreeModel setup
    cdef readonly object turns         # TreeModel or None
    cdef readonly object keep          # TreeModel or None
    cdef readonly int version          # the file's format version (FORMAT_VERSIONS)
    cdef readonly str path
    cdef readonly dict meta


def _trees_from_dict(sec, bad, name, int n_feat=N_FEAT):
    """A TreeModel from one section of a model file ({trees, base, margin})."""
    try:
        trees = sec["trees"]
        feature = np.asarray(trees["feature"], dtype=np.int64)
        threshold = np.asarray(trees["threshold"], dtype=np.float64)
        left = np.asarray(trees["left"], dtype=np.int64)
        right = np.asarray(trees["right"], dtype=np.int64)
        value = np.asarray(trees["value"], dtype=np.float64)
        roots = np.asarray(trees["roots"], dtype=np.int64)
        base = float(sec["base"])
        bonus = float(sec.get("margin", 0.0))
        max_trains = int(sec.get("max_trains", 1000))
        kbias = sec.get("bias", {}) or {}
        if not isinstance(kbias, dict):
            raise TypeError("bias must map candidate kinds to numbers")
        kbias = {str(k): float(v) for k, v in kbias.items()}
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise bad(f"{name}: missing or malformed field ({exc!r})") from None
    n = len(feature)
    if n == 0 or len(roots) == 0 or any(len(a) != n for a in (threshold, left, right, value)):
        raise bad(f"{name}: the node arrays are empty or of different lengths")
    inner = feature >= 0
    if (feature >= n_feat).any() or (feature < -1).any():
        raise bad(f"{name}: a node tests a feature that does not exist")
    if (roots < 0).any() or (roots >= n).any():
        raise bad(f"{name}: a tree root is outside the node arrays")
    # children must be later nodes of the same file: no cycle, no jump outside
    idx = np.arange(n)
    if ((left[inner] <= idx[inner]) | (left[inner] >= n) | (right[inner] <= idx[inner])
            | (right[inner] >= n)).any():
        raise bad(f"{name}: a node's children are not later nodes (corrupt tree)")
    if not (np.isfinite(threshold[inner]).all() and np.isfinite(value).all()
            and np.isfinite(base) and np.isfinite(bonus)):
        raise bad(f"{name}: a threshold or value is not a finite number")
    cdef TreeModel m = TreeModel()
    m.n_trees = len(roots)
    # lay every tree out breadth first with the two children of a node side by side,
    # so that a step is nodes[left + (x > threshold)]: no branch to mispredict
    order, new_left, new_roots, depths = [], {}, [], []
    for r in roots:
        new_roots.append(len(order))
        queue = [(int(r), 0)]
        order.append(int(r))
        deepest = 0
        while queue:
            node, d = queue.pop(0)
            deepest = max(deepest, d)
            if feature[node] >= 0:
                new_left[node] = len(order)
                order += [int(left[node]), int(right[node])]
                queue += [(int(left[node]), d + 1), (int(right[node]), d + 1)]
        depths.append(deepest)
    n = len(order)
    m.n_nodes = n
    m.nodes = <Node*>malloc(n * sizeof(Node))
    m.value = <double*>malloc(n * sizeof(double))
    m.roots = <int32_t*>malloc(m.n_trees * sizeof(int32_t))
    m.depth = <int32_t*>malloc(m.n_trees * sizeof(int32_t))
    if m.nodes == NULL or m.value == NULL or m.roots == NULL or m.depth == NULL:
        raise MemoryError()
    cdef int i
    is_leaf = []
    for i in range(n):
        node = order[i]
        is_leaf.append(feature[node] < 0)
        if feature[node] >= 0:
            m.nodes[i].feature = feature[node]
            m.nodes[i].threshold = threshold[node]
            m.nodes[i].left = new_left[node]
            m.value[i] = 0.0
        else:                           # a leaf: every row stays on it
            m.nodes[i].feature = 0
            m.nodes[i].threshold = INFINITY
            m.nodes[i].left = i
            m.value[i] = value[node]
    for i in range(m.n_trees):
        m.roots[i] = new_roots[i]
        m.depth[i] = depths[i]
    # the most and least each tree can add (its top and bottom leaves), summed from the end
    m.above = <double*>malloc((m.n_trees + 1) * sizeof(double))
    m.below = <double*>malloc((m.n_trees + 1) * sizeof(double))
    if m.above == NULL or m.below == NULL:
        raise MemoryError()
    m.above[m.n_trees] = m.below[m.n_trees] = 0.0
    bounds = new_roots + [n]
    for i in range(m.n_trees - 1, -1, -1):
        leaves = [m.value[j] for j in range(bounds[i], bounds[i + 1]) if is_leaf[j]]
        m.above[i] = m.above[i + 1] + max(leaves)
        m.below[i] = m.below[i + 1] + min(leaves)
    if max_trains < 0:
        raise bad(f"{name}: max_trains must be >= 0")
    if kbias and n_feat < N_FEAT:
        raise bad(f"{name}: a bias per candidate kind needs format version 5")
    unknown = sorted(set(kbias) - set(KINDS))
    if unknown:
        raise bad(f"{name}: bias names {unknown}, not candidate kinds ({', '.join(KINDS)})")
    if not all(np.isfinite(v) for v in kbias.values()):
        raise bad(f"{name}: a bias is not a finite number")
    m.biased = False
    for i in range(N_KINDS):
        m.kbias[i] = kbias.get(KINDS[i], 0.0)
        m.biased |= m.kbias[i] != 0.0
    m.base = base
    m.margin = bonus
    m.max_trains = max_trains
    m.widest = int(feature.max())
    return m


def section_from_dict(sec, path="<model>", name="section"):
    """A TreeModel from one section of a model file ({trees, base, margin}), e.g. what
    ``ttrsim.training.fit`` returns; ModelFileError naming `path` if malformed."""
    def bad(why):
        return ModelFileError(f"expert model file {path}: {why}")
    return _trees_from_dict(sec, bad, name)


def model_from_dict(d, path="<model>"):
    """An ExpertModel from the content of a model file (docs/expert.md, "The model
    file"); anything missing or inconsistent raises ModelFileError naming `path`."""
    def bad(why):
        return ModelFileError(f"expert model file {path}: {why}; reinstall ttrsim or retrain "
                              "with scripts/train_expert.py")
    if not isinstance(d, dict) or d.get("format") != FORMAT:
        raise bad(f"not a ttrsim expert model (format must be {FORMAT!r})")
    version = d.get("version")
    if version not in FORMAT_VERSIONS or isinstance(version, bool):
        raise bad(f"format version {version!r}, this ttrsim reads versions "
                  f"{', '.join(map(str, FORMAT_VERSIONS))}")
    names = list(FEATURES if version >= 5 else FEATURES4)
    given = d.get("features")
    if not isinstance(given, list):
        raise bad("no 'features' list (the names of the features its trees read, in order)")
    if given != names:
        # names and order both matter: a tree reads its features by position
        if len(given) != len(names):
            what = f"{len(given)} given, {len(names)} expected for format {version}"
        else:
            i = next(k for k in range(len(names)) if given[k] != names[k])
            what = (f"feature {i} is {given[i]!r}, this ttrsim's is {names[i]!r}: "
                    + ("another order" if sorted(map(str, given)) == sorted(names)
                       else "other names"))
        raise bad(f"its feature list differs from this ttrsim's features ({what})")
    if not isinstance(d.get("setup"), dict):
        raise bad("no 'setup' section (the trees that choose initial tickets)")
    # a file cut short must not play as a model without some of its trees
    for key, what in (("turns", "the trees that choose a turn's move"),
                      ("keep", "the trees that choose the tickets kept after a draw")):
        if key == "keep" and version < 5:
            if key in d:
                raise bad("a 'keep' section needs format version 5")
            continue
        if key not in d:
            raise bad(f"no '{key}' section ({what}; a model without them says "
                      f"\"{key}\": null)")
        if d.get(key) is not None and not isinstance(d.get(key), dict):
            raise bad(f"'{key}' must be a section of trees or null")
    cdef ExpertModel m = ExpertModel()
    m.version = int(version)
    m.setup = _trees_from_dict(d["setup"], bad, "setup", len(names))
    m.turns = (_trees_from_dict(d["turns"], bad, "turns", len(names))
               if d.get("turns") is not None else None)
    m.keep = (_trees_from_dict(d["keep"], bad, "keep", len(names))
              if d.get("keep") is not None else None)
    m.path = str(path)
    m.meta = dict(d.get("training", {}) or {})
    return m


def default_model_path(name=None):
    """The model file shipped inside the package (with `name`, the shipped model of that
    name: SHIPPED_MODELS)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "data",
                        SHIPPED_MODELS[name] if name else DEFAULT_MODEL)


def model_file(model=None):
    """The path of the model `model` names: None or "" the default shipped model, a name
    of SHIPPED_MODELS that shipped model, anything else a file path."""
    if not model:
        return default_model_path()
    if str(model) in SHIPPED_MODELS:
        return default_model_path(str(model))
    return os.path.abspath(os.path.expanduser(str(model)))


cdef dict _models = {}                # resolved path -> (mtime, ExpertModel): loaded once per process


def load_model(path=None):
    """The ExpertModel of a model file (default: the one shipped with ttrsim), loaded once
    per process. A missing, unreadable or corrupt file raises ModelFileError naming it."""
    path = model_file(path)
    try:
        stamp = os.stat(path).st_mtime_ns
    except OSError:
        raise ModelFileError(f"expert model file {path} not found; reinstall ttrsim, or give "
                             "an existing file as expert:model=PATH (or a shipped model: "
                             f"{', '.join(sorted(SHIPPED_MODELS))})") from None
    hit = _models.get(path)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    try:
        with open(path, encoding="utf-8") as f:
            d = json.load(f)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ModelFileError(f"expert model file {path} cannot be read as JSON ({exc}); "
                             "reinstall ttrsim or retrain with scripts/train_expert.py") from None
    model = model_from_dict(d, path)
    _models[path] = (stamp, model)
    return model


cdef class ExpertPolicy(PlanFollower):
    """``expert``: gradient-boosted trees, fitted to the search's values, choose the
    initial tickets (and the moves of a turn, if the model has a `turns` section);
    everything else is ``tickets``' own (docs/expert.md)."""
    cdef readonly str model_path       # "" : the model shipped with ttrsim
    cdef readonly ExpertModel model
    cdef TreeModel setup_trees
    cdef TreeModel turn_trees
    cdef TreeModel keep_trees           # format 5: the tickets kept after a draw
    cdef bint has_turns                 # False: turns are tickets' own
    cdef bint has_keep                  # False: the keep after a draw is tickets' own
    cdef bint whole                     # format 5: the features of ticket draws too
    cdef int reach                      # the turn trees decide once a seat has this many
    cdef int reach_param                #   trains or fewer (-1 given: the model's own)
    # its planner (tk) is this seat's tickets (a proposer), kept for the whole game; its
    # risk serves the best claim too, its `tunnels` 0: no tunnel claims at all
    cdef int wide                       # 1: the search's whole turn candidates (docs/expert.md)
    cdef int n_cand
    cdef int32_t cand[MAX_XCAND]
    cdef int32_t prop[N_PROP]
    cdef float x[MAX_XCAND][N_FEAT]
    cdef double scores[MAX_XCAND]
    # the planner, for ticket choices (turns read tickets' own plan)
    cdef BoardInfo* bi                  # per board (malloc: tens of kB)
    cdef uint64_t bi_uid
    cdef Workspace ws
    cdef Plan plan
    cdef SetupMemo* memo                # plans on the empty board (MEMO_BITS entries)
    cdef int8_t comp[MAX_CITIES]        # components of the seat's own network, this decision
    cdef int longest                    # the longest claim the hand pays, this decision
    cdef int32_t* legal                 # legal actions of a turn the model decides (malloc)
    cdef OpenTickets open               # its tickets not joined yet, this decision
    cdef int16_t* tdist0                # fewest trains between two cities, empty board
    cdef uint64_t td_uid                #   (per board, MAX_CITIES x MAX_CITIES, malloc)
    cdef int32_t ndist[MAX_CITIES]      # fewest trains from the own network, this decision
    cdef uint64_t dkey[10]              # what the last draw features were computed from
    cdef int dval[6]                    #   and their counts (draw_features)
    # recording (record=1): each decision the model makes among several candidates, the
    # candidate played (the model's, or with probability epsilon another one drawn
    # uniformly from xrng) appended as a row: meta (game, seat, kind, turn) and x
    cdef readonly bint record
    cdef readonly double epsilon
    cdef Rng xrng                       # exploration, seeded by every start
    cdef int64_t n_starts               # games started since construction
    cdef float* rx                      # rows x N_FEAT features (malloc, grown by doubling)
    cdef int32_t* rmeta                 # rows x N_META
    cdef Py_ssize_t rn
    cdef Py_ssize_t rcap

    def __cinit__(self, *args, **kwargs):
        self.bi = <BoardInfo*>malloc(sizeof(BoardInfo))
        if self.bi == NULL:
            raise MemoryError()
        self.bi_uid = 0
        self.memo = <SetupMemo*>calloc(1 << MEMO_BITS, sizeof(SetupMemo))
        self.legal = <int32_t*>malloc(MAX_ACTIONS * sizeof(int32_t))
        self.tdist0 = <int16_t*>malloc(MAX_CITIES * MAX_CITIES * sizeof(int16_t))
        self.td_uid = 0
        memset(self.dkey, 0, sizeof(self.dkey))
        self.rx = NULL
        self.rmeta = NULL
        self.rn = self.rcap = 0
        self.n_starts = 0
        if self.memo == NULL or self.legal == NULL or self.tdist0 == NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(self.bi)
        free(self.memo)
        free(self.legal)
        free(self.tdist0)
        free(self.rx)
        free(self.rmeta)

    def __init__(self, model="", stations=1, tunnels=1, risk=0.3, draw=12, reach=-1,
                 wide=0, record=0, epsilon=0.0, spec=None):
        """`model`: a model file ("" : the one shipped with ttrsim). `stations`, `tunnels`,
        `risk`, `draw`: those of the seat's own `tickets` (every decision the model does
        not make is its), also obeyed by the other candidates. `reach`: the turn trees
        decide once some seat has this many trains or fewer (-1: the model's own
        `max_trains`; fewer is faster and weaker, docs/expert.md). `wide`: 1 adds the
        four longest claims the hand pays and a face-up card of each colour to a turn's
        candidates (the search's turn candidates, on which the turn trees were trained:
        about three times slower, docs/expert.md). `record`: 1 keeps a row for every
        decision the model makes among more than one candidate (``recorded()``), and plays
        there, with probability `epsilon`, another candidate than the model's, drawn
        uniformly (a stream of its own, seeded by each game's start seed: the same games
        give the same rows); record 0 plays as the model does (`epsilon` must be 0)."""
        PlanFollower.__init__(self, "expert", TicketsPolicy(stations=stations, tunnels=tunnels,
                                                            risk=risk, draw=draw, spec="tickets"),
                              spec)
        self.model_path = str(model or "")
        self.model = load_model(self.model_path or None)
        self.setup_trees = self.model.setup
        self.turn_trees = self.model.turns
        self.has_turns = self.turn_trees is not None
        self.keep_trees = self.model.keep
        self.has_keep = self.keep_trees is not None
        self.whole = self.model.version >= 5
        whole = isinstance(reach, (int, np.integer)) and not isinstance(reach, bool)
        if not (whole or isinstance(reach, float) and reach.is_integer()) or reach < -1:
            raise ValueError(f"expert: reach must be a whole number of trains >= 0 (or -1: "
                             f"the model's own), got {reach!r}")
        if wide not in (0, 1):
            raise ValueError(f"expert: wide must be 0 or 1, got {wide!r}")
        self.wide = int(wide)
        if record not in (0, 1):
            raise ValueError(f"expert: record must be 0 or 1, got {record!r}")
        if not 0.0 <= float(epsilon) <= 1.0 or (float(epsilon) > 0 and not record):
            raise ValueError(f"expert: epsilon must be within 0..1, and 0 without record, "
                             f"got {epsilon!r}")
        self.record = bool(record)
        self.epsilon = float(epsilon)
        self.reach_param = int(reach)
        self.reach = (self.reach_param if self.reach_param >= 0 else
                      self.turn_trees.max_trains if self.has_turns else 0)
        self.n_cand = 0

    def own_params(self):
        # the planner (`planner`): this seat's own tickets, which proposes a candidate,
        # makes every decision the model does not, and whose plan gives the turn features
        own = dict(model=self.model_path, reach=self.reach_param, wide=self.wide)
        if self.record:
            own.update(record=1, epsilon=self.epsilon)
        return own

    cdef void start_game(self, const BoardC* b, const GameState* s, int seat,
                         uint64_t seed) noexcept nogil:
        PlanFollower.start_game(self, b, s, seat, seed)
        self.n_starts += 1
        if self.record:
            rng_seed(&self.xrng, seed ^ _EXPLORE_SALT)

    @cython.final
    cdef void add(self, int32_t act) noexcept nogil:
        cdef Candidates c
        c.act = self.cand
        c.n = self.n_cand
        c.cap = MAX_XCAND
        c.one_ticket_draw = False
        cand_add(&c, act)
        self.n_cand = c.n

    @cython.final
    cdef int list_candidates(self, const BoardC* b, const GameState* s, int seat,
                             const int32_t* legal, int n_legal, bint always) noexcept nogil:
        """Fill cand[] and x[] (x[] only when there is a choice, or `always`); return -1
        when a proposer failed (self.error says why)."""
        cdef int32_t act
        cdef int mask
        cdef Candidates c
        self.n_cand = 0
        own_components(b, s, seat, self.comp)
        open_tickets(b, s, seat, self.comp, &self.open)
        act = self.tickets_choice(b, s, seat)
        if act < 0:
            return -1
        self.prop[0] = act
        self.prop[1] = -1
        self.add(act)
        if s.phase == PH_SETUP_TICKETS or s.phase == PH_KEEP_TICKETS:
            # every legal choice of the offered tickets
            for mask in range(1, 1 << s.n_pending[seat]):
                act = make_action(ACT_KEEP, mask, 0, 0)
                if is_legal(b, s, act):
                    self.add(act)
            if always or self.n_cand > 1:
                self.keep_features(b, s, seat, always)
            return 0
        if s.phase != PH_TURN:
            if always:
                self.features(b, s, seat)
            return 0
        self.prop[1] = self.best_claim(b, s, seat)
        self.add(self.prop[1])
        # the turn candidates the search lists too (_planning's turn_candidates): a blind
        # draw, a ticket draw and, with `wide`, the N_LONGEST longest claims the hand pays
        # (tunnels only if the seat claims tunnels at all) and a face-up card of each
        # colour on offer (those two from the legal list, which `wide` lists)
        c.act = self.cand
        c.n = self.n_cand
        c.cap = MAX_XCAND
        c.one_ticket_draw = False
        self.longest = turn_candidates(b, s, seat, legal, n_legal, &c,
                                       N_LONGEST if self.wide else 0,
                                       self.tunnels != 0, self.wide != 0)
        self.n_cand = c.n
        if always or self.n_cand > 1:
            self.features(b, s, seat)
            self.plan_features(b, s, seat)
            if self.whole or always:
                self.draw_features(b, s, seat, s.p[seat].trains - self.tk_plan.trains)
        return 0

    @cython.final
    cdef void features(self, const BoardC* b, const GameState* s, int seat) noexcept nogil:
        """x[k] for every candidate: only the seat's own hand and tickets and public
        information (routes, trains, face-up cards, deck counts) enter."""
        cdef int k, f, q, t, kind, r, j, typ
        cdef int32_t act
        cdef float* x
        cdef double init = b.trains if b.trains > 0 else 1.0
        cdef int min_other = 1 << 20, best_other = -(1 << 20), me_pts
        cdef int open_n = 0, open_pts = 0, done_pts = 0, joined, joined_pts, max_pts = 1
        cdef float tk[9]
        for q in range(s.n_players):
            if q != seat:
                if s.p[q].trains < min_other:
                    min_other = s.p[q].trains
                if s.p[q].route_points > best_other:
                    best_other = s.p[q].route_points
        me_pts = s.p[seat].route_points
        for t in range(b.n_tickets):
            if s.p[seat].tickets[t >> 6] >> (t & 63) & 1:
                if self.comp[b.ticket_a[t]] == self.comp[b.ticket_b[t]]:
                    done_pts += b.ticket_points[t]
                else:
                    open_n += 1
                    open_pts += b.ticket_points[t]
        for j in range(MAX_LEN):
            if b.route_points[j] > max_pts:
                max_pts = b.route_points[j]
        # what tickets would play, and public card counts: the same on every row
        kind = action_kind(self.prop[0])
        tk[0] = kind == ACT_CLAIM
        tk[1] = kind == ACT_DRAW_FACEUP
        tk[2] = kind == ACT_DRAW_BLIND
        tk[3] = kind == ACT_DRAW_TICKETS
        tk[4] = 0
        tk[5] = 0
        if kind == ACT_CLAIM:
            r = action_a(self.prop[0])
            tk[4] = b.route_len[r]
            tk[5] = joins(b, r, self.comp, &self.open, &joined_pts)
        tk[6] = 0
        for j in range(N_FACEUP):
            tk[6] += s.faceup[j] == WILD
        tk[7] = 0
        for j in range(N_CARD_TYPES):
            if j != WILD and s.p[seat].hand[j] > tk[7]:
                tk[7] = s.p[seat].hand[j]
        tk[8] = s.deck_n
        for j in range(N_CARD_TYPES):
            tk[8] += s.discard[j]
        for k in range(self.n_cand):
            act = self.cand[k]
            x = &self.x[k][0]
            for f in range(N_FEAT):
                x[f] = 0.0
            x[0] = act == self.prop[0]
            x[1] = act == self.prop[1]
            x[2] = x[0] + x[1]
            kind = action_kind(act)
            x[3] = kind == ACT_CLAIM
            x[4] = kind == ACT_DRAW_BLIND
            x[5] = kind == ACT_DRAW_FACEUP
            x[6] = kind == ACT_DRAW_TICKETS
            x[7] = kind == ACT_STATION
            x[19] = s.p[seat].trains / init
            if kind == ACT_CLAIM:
                r = action_a(act)
                x[8] = b.route_len[r]
                x[9] = b.route_points[b.route_len[r]] / <double>max_pts
                x[10] = action_c(act)
                x[11] = b.route_tunnel[r]
                joined = joins(b, r, self.comp, &self.open, &joined_pts)
                x[12] = joined
                x[13] = joined_pts
                x[14] = ((s.p[seat].cities >> b.route_a[r]) & 1) | ((s.p[seat].cities >> b.route_b[r]) & 1)
                x[19] = (s.p[seat].trains - b.route_len[r]) / init
            elif kind == ACT_STATION:
                x[10] = action_c(act)
            elif kind == ACT_DRAW_FACEUP:
                typ = s.faceup[action_a(act)]
                if typ >= 0:
                    x[15] = typ == WILD
                    x[16] = s.p[seat].hand[typ]
            x[17] = s.p[seat].trains / init
            x[18] = (min_other if min_other < (1 << 20) else 0) / init
            x[20] = s.last_round
            x[21] = hand_total(s, seat)
            x[22] = open_n
            x[23] = open_pts
            x[24] = done_pts
            x[25] = s.tdeck_n
            x[26] = s.n_players
            x[27] = s.turn / <double>s.n_players
            x[28] = me_pts - (best_other if best_other > -(1 << 20) else 0)
            for j in range(9):
                x[29 + j] = tk[j]

    @cython.final
    cdef int32_t best_claim(self, const BoardC* b, const GameState* s, int seat) noexcept nogil:
        """The claim the hand pays now that is worth most: route points plus the points of
        the own tickets it joins (longer first on a tie), with the cheapest payment; a
        tunnel only within `tickets`' risk (none with tunnels=0). -1: no claim."""
        cdef int r, w, c, k, v, best_v = -1, pts, open_pts = 0, i
        cdef const int16_t* hand = &s.p[seat].hand[0]
        cdef int wild = hand[WILD], most = hand_most(b, hand)
        # indices into the board's per-length route sets (lengths stop at MAX_LEN - 1)
        cdef int trains = s.p[seat].trains if s.p[seat].trains < MAX_LEN - 1 else MAX_LEN - 1
        cdef int ferry = wild if wild < MAX_LEN - 1 else MAX_LEN - 1
        cdef int32_t act = -1, best = -1
        cdef int pool[N_CARD_TYPES]
        cdef uint64_t bits[2]
        unknown_cards(b, s, seat, pool)
        for i in range(self.open.n):
            open_pts += self.open.points[i]
        # the routes may_afford passes, no longer than the seat's trains and open to it
        # (route_open's rules as GameState's bitsets), from the board's route classes
        for w in range(2):
            bits[w] = 0
            for c in range(MAX_COLORS + 1):
                k = (hand[c] if c < MAX_COLORS else most) + wild
                bits[w] |= b.class_upto[c][k if k < trains else trains][w]
            bits[w] &= ~(s.closed[w] | s.closed_to[seat][w] | b.ferry_over[ferry][w])
        for w in range(2):
            while bits[w]:                      # in index order, as a plain scan
                r = 64 * w + lowest_bit(bits[w])
                bits[w] &= bits[w] - 1
                if b.route_tunnel[r] and not self.tunnels:
                    continue
                v = 4 * b.route_points[b.route_len[r]] + b.route_len[r]
                if v + 4 * open_pts <= best_v:   # not even with every open ticket joined
                    continue
                joins(b, r, self.comp, &self.open, &pts)
                v += 4 * pts
                if v > best_v and claim_payment(b, s, seat, r, NULL, self.risk, pool, &act) >= 0:
                    best_v = v
                    best = act
        return best

    @cython.final
    cdef void plan_of(self, const BoardC* b, const GameState* s, int seat,
                      const uint64_t* tickets, int* trains, int* claims,
                      int* dropped) noexcept nogil:
        """Trains and claims of the plan joining `tickets` with the seat's trains, and the
        points of the tickets it must give up; remembered on the empty board (setup)."""
        cdef SetupMemo* e = NULL
        cdef uint64_t h
        cdef int t
        if s.phase == PH_SETUP_TICKETS and s.p[seat].n_routes == 0 \
                and s.closed[0] == 0 and s.closed[1] == 0:
            h = b.uid * 0x9E3779B97F4A7C15ULL ^ tickets[0] * 0xBF58476D1CE4E5B9ULL \
                ^ tickets[1] * 0x94D049BB133111EBULL ^ <uint64_t>s.p[seat].trains
            h ^= h >> 29
            e = &self.memo[(h * 0xD6E8FEB86659FD93ULL) >> (64 - MEMO_BITS)]
            if (e.uid == b.uid and e.tickets[0] == tickets[0] and e.tickets[1] == tickets[1]
                    and e.trains == s.p[seat].trains):
                trains[0] = e.plan_trains
                claims[0] = e.claims
                dropped[0] = e.dropped
                return
        plan_tickets(self.bi, &self.prm, s, seat, tickets, s.p[seat].trains, &self.plan,
                     &self.ws)
        trains[0] = self.plan.trains
        claims[0] = self.plan.claims
        dropped[0] = 0
        for t in range(b.n_tickets):
            if (self.plan.dropped[t >> 6] >> (t & 63)) & 1:
                dropped[0] += b.ticket_points[t]
        if e != NULL:
            e.uid = b.uid
            e.tickets[0] = tickets[0]
            e.tickets[1] = tickets[1]
            e.trains = s.p[seat].trains
            e.plan_trains = trains[0]
            e.claims = claims[0]
            e.dropped = dropped[0]

    @cython.final
    cdef void board_info(self, const BoardC* b) noexcept nogil:
        if self.bi_uid != b.uid or self.bi.b != b:
            board_info_init(self.bi, b, &self.prm)
            self.bi_uid = b.uid

    @cython.final
    cdef void plan_features(self, const BoardC* b, const GameState* s, int seat) noexcept nogil:
        """x[49:60] of a turn's candidates, from the plan `tickets` follows (its decision
        of this turn, list_candidates' first, brought it up to date): trains and claims
        still needed, planned points still open, points given up, trains still needed
        beyond the cards in hand; the fewest trains of any seat (how near the end is);
        whether a claim is on the plan; the longest claim the hand pays; for a face-up
        card the cards of its colour the plan still misses (a wild card: all it misses);
        the cards it misses; the rounds left (rounds_left: trains placed so far and
        public hand sizes). Own tickets and hand and public information only."""
        cdef int k, r, t, typ, dropped = 0
        cdef int fewest = fewest_trains(s)
        cdef double rounds = rounds_left(b, s)
        cdef const Plan* plan = self.tk_plan
        cdef const Needs* nd = self.tk_nd
        cdef float* x
        for t in range(b.n_tickets):
            if (plan.dropped[t >> 6] >> (t & 63)) & 1:
                dropped += b.ticket_points[t]
        for k in range(self.n_cand):
            x = &self.x[k][0]
            x[49] = plan.trains
            x[50] = plan.claims
            x[51] = plan.points - plan.done_points
            x[52] = dropped
            x[53] = plan.trains - hand_total(s, seat)
            x[54] = fewest
            if action_kind(self.cand[k]) == ACT_CLAIM:
                r = action_a(self.cand[k])
                x[55] = (plan.routes[r >> 6] >> (r & 63)) & 1
            elif action_kind(self.cand[k]) == ACT_DRAW_FACEUP:
                typ = s.faceup[action_a(self.cand[k])]
                if typ >= 0:
                    x[57] = nd.short if typ == WILD else nd.missing[typ]
            x[56] = self.longest
            x[58] = nd.short
            x[59] = rounds

    @cython.final
    cdef void train_distances(self, const BoardC* b) noexcept nogil:
        """tdist0: the fewest trains between every two cities of the empty board (once
        per board; Floyd-Warshall over route lengths)."""
        cdef int x, y, z, r, n = b.n_cities, d
        cdef int16_t* t = self.tdist0
        if self.td_uid == b.uid:
            return
        for x in range(n):
            for y in range(n):
                t[x * MAX_CITIES + y] = 0 if x == y else 10000
        for r in range(b.n_routes):
            x = b.route_a[r]
            y = b.route_b[r]
            if b.route_len[r] < t[x * MAX_CITIES + y]:
                t[x * MAX_CITIES + y] = t[y * MAX_CITIES + x] = b.route_len[r]
        for z in range(n):
            for x in range(n):
                for y in range(n):
                    d = t[x * MAX_CITIES + z] + t[z * MAX_CITIES + y]
                    if d < t[x * MAX_CITIES + y]:
                        t[x * MAX_CITIES + y] = d
        self.td_uid = b.uid

    @cython.final
    cdef void network_distances(self, const BoardC* b, const GameState* s,
                                int seat) noexcept nogil:
        """ndist[c]: the fewest trains joining city c to the seat's own network over its
        own routes and the routes it may still claim (INF_COST: none, or no network)."""
        cdef int32_t w[MAX_ROUTES]
        cdef int16_t pred[MAX_CITIES]
        cdef int r
        for r in range(b.n_routes):
            if s.route_owner[r] == seat:
                w[r] = 0
            elif ((s.closed[r >> 6] | s.closed_to[seat][r >> 6]) >> (r & 63)) & 1 \
                    or b.route_len[r] > s.p[seat].trains:
                w[r] = INF_COST
            else:
                w[r] = b.route_len[r]
        self.board_info(b)
        shortest_from(self.bi, w, s.p[seat].cities, -1, self.ndist, pred)

    @cython.final
    cdef inline int ticket_cost(self, const BoardC* b, const GameState* s, int seat,
                                int t) noexcept nogil:
        """Trains that would join ticket t (not joined yet): its cities' distances from
        the own network (ndist), or their distance on the empty board when that is less
        (or there is no network). An estimate: no card, no rival claim ahead."""
        cdef int x = b.ticket_a[t], y = b.ticket_b[t]
        cdef int c = self.tdist0[x * MAX_CITIES + y]
        cdef int32_t n = self.ndist[x] + self.ndist[y]
        if s.p[seat].cities and n < c:
            c = n
        return c

    @cython.final
    cdef void draw_features(self, const BoardC* b, const GameState* s, int seat,
                            int spare) noexcept nogil:
        """x[60:67] for every candidate (format 5): the tickets the seat could draw, as
        it sees them (neither held nor discarded by it; a long ticket only where it shares
        the deck), as shares and points per ticket of those already joined by its network
        (comp) and of those joinable within `spare` trains; `spare`; the Globetrotter's
        bonus and the seat's completed tickets minus the most tickets another seat holds
        (public counts). Own tickets and network and public information only."""
        cdef int t, k, q, n = 0, done = 0, near = 0, done_pts = 0, near_pts = 0
        cdef int completed = 0, most = 0
        cdef uint64_t held
        cdef uint64_t key[10]
        cdef float* x
        # the counts change only with the routes claimed, the seat's trains, tickets and
        # discards, and `spare`: between two of its claims they are reused
        key[0] = b.uid
        key[1] = s.closed[0]
        key[2] = s.closed[1]
        key[3] = s.p[seat].routes[0]
        key[4] = s.p[seat].routes[1]
        key[5] = s.p[seat].tickets[0]
        key[6] = s.p[seat].tickets[1]
        key[7] = s.p[seat].discarded[0] ^ (s.p[seat].discarded[1] * 0x9E3779B97F4A7C15ULL)
        key[8] = (<uint64_t>seat << 48) | (<uint64_t>(s.p[seat].trains & 0xFFFF) << 32) \
            | (<uint32_t>spare)
        key[9] = s.p[seat].discarded[1]
        if memcmp(key, self.dkey, sizeof(key)) == 0:
            n, done, done_pts, near, near_pts, completed = (
                self.dval[0], self.dval[1], self.dval[2], self.dval[3], self.dval[4], self.dval[5])
        else:
            self.train_distances(b)
            self.network_distances(b, s, seat)
            n, done, done_pts, near, near_pts, completed = self.deck_counts(b, s, seat, spare)
            memcpy(self.dkey, key, sizeof(key))
            self.dval[0] = n
            self.dval[1] = done
            self.dval[2] = done_pts
            self.dval[3] = near
            self.dval[4] = near_pts
            self.dval[5] = completed
        for q in range(s.n_players):
            if q != seat and s.p[q].n_tickets > most:
                most = s.p[q].n_tickets
        if n == 0:
            n = 1
        for k in range(self.n_cand):
            x = &self.x[k][0]
            x[60] = done / <double>n
            x[61] = done_pts / <double>n
            x[62] = near / <double>n
            x[63] = near_pts / <double>n
            x[64] = spare
            x[65] = b.globetrotter_bonus
            x[66] = completed - most

    @cython.final
    cdef (int, int, int, int, int, int) deck_counts(self, const BoardC* b, const GameState* s,
                                                    int seat, int spare) noexcept nogil:
        """draw_features' counts: the tickets the seat could draw, those of them its
        network joins and their points, those joinable within `spare` and their points,
        and its own tickets completed (ndist and comp up to date)."""
        cdef int t, n = 0, done = 0, near = 0, done_pts = 0, near_pts = 0, completed = 0
        cdef uint64_t held
        for t in range(b.n_tickets):
            held = (s.p[seat].tickets[t >> 6] | s.p[seat].discarded[t >> 6]) >> (t & 63)
            if held & 1:
                if (s.p[seat].tickets[t >> 6] >> (t & 63)) & 1 and \
                        self.comp[b.ticket_a[t]] == self.comp[b.ticket_b[t]]:
                    completed += 1
                continue
            if b.ticket_long[t] and b.deal_long > 0:
                continue
            n += 1
            if self.comp[b.ticket_a[t]] == self.comp[b.ticket_b[t]]:
                done += 1
                done_pts += b.ticket_points[t]
            elif self.ticket_cost(b, s, seat, t) <= spare:
                near += 1
                near_pts += b.ticket_points[t]
        return n, done, done_pts, near, near_pts, completed

    @cython.final
    cdef void keep_features(self, const BoardC* b, const GameState* s, int seat,
                            bint always) noexcept nogil:
        """x[k] of ticket choices: the turn features, then the plan joining the tickets
        held and those kept (own tickets, offered tickets and public routes only); for
        format 5 (or `always`) the rounds left, the trains to spare beyond the plan of
        the tickets held, the tickets the seat could draw, and the points of the kept
        tickets already joined and joinable within those trains."""
        cdef int k, i, t, mask, kept, kept_pts, kept_long, base_trains, plan_trains
        cdef int claims, dropped, done_pts, near_pts, spare
        cdef double rounds
        cdef uint64_t tickets[2]
        cdef float* x
        cdef double init = b.trains if b.trains > 0 else 1.0
        self.features(b, s, seat)
        self.board_info(b)
        self.plan_of(b, s, seat, s.p[seat].tickets, &base_trains, &claims, &dropped)
        for k in range(self.n_cand):
            x = &self.x[k][0]
            mask = action_a(self.cand[k])
            tickets[0] = s.p[seat].tickets[0]
            tickets[1] = s.p[seat].tickets[1]
            kept = kept_pts = kept_long = 0
            for i in range(s.n_pending[seat]):
                if (mask >> i) & 1:
                    t = s.pending[seat][i]
                    tickets[t >> 6] |= (<uint64_t>1) << (t & 63)
                    kept += 1
                    kept_pts += b.ticket_points[t]
                    kept_long |= b.ticket_long[t]
            self.plan_of(b, s, seat, tickets, &plan_trains, &claims, &dropped)
            x[38] = 1
            x[39] = s.phase == PH_SETUP_TICKETS
            x[40] = kept
            x[41] = kept_pts
            x[42] = kept_long
            x[43] = plan_trains
            x[44] = plan_trains - base_trains
            x[45] = (s.p[seat].trains - plan_trains) / init
            x[46] = dropped
            x[47] = claims
            x[48] = kept_pts / <double>(x[44] if x[44] > 1 else 1)
        if not (self.whole or always):
            return
        spare = s.p[seat].trains - base_trains
        rounds = rounds_left(b, s)
        self.draw_features(b, s, seat, spare)
        for k in range(self.n_cand):
            x = &self.x[k][0]
            mask = action_a(self.cand[k])
            done_pts = near_pts = 0
            for i in range(s.n_pending[seat]):
                if (mask >> i) & 1:
                    t = s.pending[seat][i]
                    if self.comp[b.ticket_a[t]] == self.comp[b.ticket_b[t]]:
                        done_pts += b.ticket_points[t]
                    elif self.ticket_cost(b, s, seat, t) <= spare:
                        near_pts += b.ticket_points[t]
            x[59] = rounds
            x[67] = done_pts
            x[68] = near_pts

    cdef int32_t choose(self, const BoardC* b, const GameState* s, int seat,
                        const int32_t* legal, int n_legal) noexcept nogil:
        cdef int best
        cdef bint at_setup = s.phase == PH_SETUP_TICKETS
        cdef bint at_keep = s.phase == PH_KEEP_TICKETS and self.has_keep
        if not at_setup and not at_keep and not (s.phase == PH_TURN and self.has_turns
                                                 and fewest_trains(s) <= self.reach):
            # second draws, tunnels, drawn tickets and turns without trees for them
            return self.tickets_choice(b, s, seat)
        if self.wide and n_legal <= 0 and s.phase == PH_TURN:
            # the compiled loops list no legal action for a built-in policy (needs_legal
            # is False); the wide candidates take face-up draws and claims from the list
            n_legal = legal_actions(b, s, self.legal)
            legal = self.legal
        if self.list_candidates(b, s, seat, legal, n_legal, False) < 0:
            return -1
        if self.n_cand == 1:
            return self.cand[0]
        # tickets' own choice (the first) keeps the section's margin: another candidate
        # must be predicted better by it; ties go to the earlier candidate
        if at_setup:
            best = self.setup_trees.best(&self.x[0][0], N_FEAT, self.n_cand, self.scores)
        elif at_keep:
            best = self.keep_trees.best(&self.x[0][0], N_FEAT, self.n_cand, self.scores)
        else:
            best = self.turn_trees.best(&self.x[0][0], N_FEAT, self.n_cand, self.scores)
        if self.record:
            best = self.record_decision(b, s, seat, best, REC_SETUP if at_setup else
                                        REC_KEEP if at_keep else REC_TURNS)
        return self.cand[best] if best >= 0 else -1

    @cython.final
    cdef int record_decision(self, const BoardC* b, const GameState* s, int seat, int best,
                             int kind) noexcept nogil:
        """The candidate played instead of the model's `best`: with probability epsilon
        another one, drawn uniformly; its row appended (every feature, as ``candidates``
        gives them, also for a format-4 model, whose play reads fewer). -1: no memory."""
        cdef Py_ssize_t cap
        cdef float* grown_x
        cdef int32_t* grown_m
        cdef int32_t* m
        if self.epsilon > 0 and rng_uniform(&self.xrng) < self.epsilon:
            best = (best + 1 + rng_below(&self.xrng, self.n_cand - 1)) % self.n_cand
        if not self.whole:
            # the features a format-4 model's play leaves out (computed after its choice)
            if kind == REC_TURNS:
                self.draw_features(b, s, seat, s.p[seat].trains - self.tk_plan.trains)
            else:
                self.keep_features(b, s, seat, True)
        if self.rn == self.rcap:
            cap = 1024 if self.rcap == 0 else 2 * self.rcap
            grown_x = <float*>realloc(self.rx, cap * N_FEAT * sizeof(float))
            if grown_x != NULL:
                self.rx = grown_x
            grown_m = <int32_t*>realloc(self.rmeta, cap * N_META * sizeof(int32_t))
            if grown_m != NULL:
                self.rmeta = grown_m
            if grown_x == NULL or grown_m == NULL:
                with gil:
                    self.error = MemoryError("expert: out of memory for the recorded rows")
                return -1
            self.rcap = cap
        memcpy(&self.rx[self.rn * N_FEAT], &self.x[best][0], N_FEAT * sizeof(float))
        m = &self.rmeta[self.rn * N_META]
        m[0] = <int32_t>(self.n_starts - 1)
        m[1] = seat
        m[2] = kind
        m[3] = s.turn
        self.rn += 1
        return best

    # --- for training and tests (Python) ----------------------------------------------
    @property
    def games_started(self):
        """Games started since the policy was made (a recorded row's `game` counts them
        from 0)."""
        return self.n_starts

    def recorded(self, bint clear=False):
        """The rows recorded so far (record=1), one per decision the model made among
        more than one candidate, in the order played: a dict of numpy arrays ``game``
        (the game's number among those the policy started, from 0), ``seat``, ``kind``
        (an index into RECORD_KINDS), ``turn`` (the game turn) and ``X`` (the features
        of the candidate played, (n, len(FEATURES)) float32). `clear`: forget them."""
        cdef Py_ssize_t n = self.rn
        X = np.empty((n, N_FEAT), dtype=np.float32)
        meta = np.empty((n, N_META), dtype=np.int32)
        cdef float[:, ::1] xv = X
        cdef int32_t[:, ::1] mv = meta
        if n:
            memcpy(&xv[0, 0], self.rx, n * N_FEAT * sizeof(float))
            memcpy(&mv[0, 0], self.rmeta, n * N_META * sizeof(int32_t))
        if clear:
            self.rn = 0
        return {"game": meta[:, 0].astype(np.int64), "seat": meta[:, 1].copy(),
                "kind": meta[:, 2].copy(), "turn": meta[:, 3].copy(), "X": X}

    def start(self, game, int seat, uint64_t seed=0):
        """Start a game for `seat` as the batch loop does (before its first decision)."""
        cdef GameState s
        cdef CompiledBoard cb = copy_position(game, &s)
        self.start_game(&cb.c, &s, seat, seed)

    def candidates(self, game):
        """``(codes, X)`` for the seat to move in `game` (a ``ttrsim.Game``): the candidate
        action codes (tickets' choice first) and their features, an (n, len(FEATURES))
        float32 array. It advances the policy's state exactly as a decision does (call
        ``start`` first); the game is not changed."""
        cdef GameState s
        cdef CompiledBoard cb = copy_position(game, &s)
        cdef int n_legal
        if s.phase == PH_OVER:
            raise ValueError("the game is over")
        n_legal = legal_actions(&cb.c, &s, self.legal) if self.wide else 0
        if self.list_candidates(&cb.c, &s, s.current, self.legal, n_legal, True) < 0:
            raise self.take_error()
        codes = np.array([self.cand[k] for k in range(self.n_cand)], dtype=np.int32)
        X = np.array([[self.x[k][f] for f in range(N_FEAT)] for k in range(self.n_cand)],
                     dtype=np.float32).reshape(self.n_cand, N_FEAT)
        return codes, X




