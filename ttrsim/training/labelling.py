"""Labelling decisions with the search: initial ticket choices (:func:`generate_setup`),
end-game turns (:func:`generate_endgame`), and both over many small tasks spread over
workers (:func:`label`). Same seed, same positions and labels, whatever the workers."""
from __future__ import annotations

import time
from contextlib import closing
from pathlib import Path

import numpy as np

from ttrsim._expert import load_model, model_file
from ttrsim.game import Game
from ttrsim.policies import PolicySpec, parse_spec, policy_spec
from ttrsim.seats import Table, play_game, seat_value
from ttrsim.training.model_file import expert_spec
from ttrsim.training.positions import Positions, from_lists, join

__all__ = ["CHUNKS", "CLAIMS", "KINDS", "check_field", "expert_move", "generate_endgame",
           "generate_games", "generate_outcomes", "generate_setup", "generate_student", "label",
           "labelling_specs", "outcome", "outcome_values", "play_experts"]


def labelling_specs(search, rollout_model) -> tuple[PolicySpec, PolicySpec]:
    """The labelling search's spec (``search``, a spec or its value, with its rollouts by
    ``expert`` with ``rollout_model``, else ``tickets``) and the other seats' spec (the
    same policy), as values; a bad model file is refused now rather than in a game."""
    if rollout_model is None:
        other = policy_spec("tickets")
    else:
        load_model(rollout_model)
        other = expert_spec(rollout_model)
    return parse_spec(search).replace(rollout=other), other


def generate_setup(board="europe", players: int = 2, positions: int = 100, seed: int = 0, *,
                   playouts: int = 256, rollout_model=None, progress: bool = False) -> Positions:
    """Label initial ticket choices: ``positions`` fresh deals, in each the choice of one
    seat (seat ``i % players``; the seats before it keep what ``tickets`` keeps, or what
    ``expert`` with ``rollout_model`` keeps), every legal keep set valued by the search
    with ``playouts`` playouts each on the same sampled worlds (``ttrsim.analyse``'s
    uniform mode; rollouts by ``tickets``, or by ``expert`` with ``rollout_model``).
    ``value``: the keep set's mean value minus the mean over the position's keep sets;
    ``chosen``: the best-valued one. The expert's candidates are every legal keep set,
    tickets' own first. Same seed, same positions and labels."""
    from tqdm.auto import tqdm

    from ttrsim._expert import ExpertPolicy
    from ttrsim.policies import decide, make_policy

    spec, other = labelling_specs(policy_spec("search", playouts=int(playouts)), rollout_model)
    seeds = np.random.SeedSequence([int(seed), int(players), 0x5E7]).generate_state(
        3 * int(positions), dtype=np.uint64)
    part = ([], [], [], [], [], [])       # X, value, chosen, group, game, boards
    t0 = time.process_time()
    for i in tqdm(range(int(positions)), desc=f"setup {board} {players}p", disable=not progress):
        g = Game(board, players, seed=int(seeds[3 * i]))
        me = i % players
        others = [None if q == me else other for q in range(players)]
        play_game(Table(g, others, seed=int(seeds[3 * i + 2])), stop=lambda t: t.seat == me)
        expert = ExpertPolicy()
        expert.start(g, me, int(seeds[3 * i + 1]))
        codes, feats = expert.candidates(g)
        search = make_policy(spec, g.board)
        search.uniform = True                  # every keep set gets the same playouts
        decide(search, g, seed=int(seeds[3 * i + 2]))
        mean = {int(c): u / n for c, n, u, *_ in search.last_decision()[0] if n}
        _record(part, feats, [mean[int(c)] for c in codes], i, i, board)
    return from_lists(*part, time.process_time() - t0)


CLAIMS = 4          # generate_endgame's search also values the 4 longest claims the hand pays


def expert_move(model, phase: str, codes, X, fewest_trains: int) -> int:
    """The move ``expert`` with ``model`` (an ExpertModel) makes among its candidates
    (``ExpertPolicy.candidates``): what the compiled policy decides, in Python."""
    return int(codes[expert_pick(model, phase, X, fewest_trains)])


def expert_pick(model, phase: str, X, fewest_trains: int) -> int:
    """The index among the candidates' rows ``X`` of ``expert_move``'s move."""
    sec = model.setup if phase == "setup_tickets" else model.keep if phase == "keep_tickets" else (
        model.turns if phase == "turn" and model.turns is not None
        and fewest_trains <= model.turns.max_trains else None)
    if sec is None or len(X) < 2:
        return 0
    return int(np.argmax(sec.predict(X) + sec.offsets(X)))


def generate_endgame(board="europe", players: int = 2, games: int = 100, seed: int = 0, *,
                     playouts: int = 400, max_trains: int = 12, model=None,
                     rollout_model=None, rollout: str | None = None, field=None, wide: bool = True,
                     progress: bool = False) -> Positions:
    """Label end-game turns: in each game one seat (seat ``game % players``) plays
    ``expert`` with ``model`` (a model file; None: the shipped one) against ``tickets``
    (or, with ``rollout_model``, against ``expert`` with it); at each of its turns once
    some seat has ``max_trains`` trains or fewer, every candidate of the search gets
    ``playouts`` playouts on the same sampled worlds (rollouts by ``tickets``, or by
    ``expert`` with ``rollout_model``). ``value``: each expert candidate's mean value
    minus that of tickets' choice (NaN where the search did not value it); ``chosen``:
    the best-valued. The game follows the expert's own moves (the positions it reaches).
    ``field``: policy specs the other seats are drawn from instead (built-in specs, e.g.
    ``("expert", "blocker", "rush", "tickets")``): the k-th other seat of game i plays
    ``field[(i * (players - 1) + k) % len(field)]``, so every spec meets the expert
    equally often. ``wide``: the expert's candidates are the search's whole turn set (as
    the shipped trees were trained; ``expert:wide=1``), or with False the set it plays by
    default, so that the game follows the moves of ``expert`` as it plays. Same seed,
    same positions and labels."""
    from tqdm.auto import tqdm

    from ttrsim._expert import ExpertPolicy
    from ttrsim.policies import decide, make_policy

    follow = load_model(model)
    spec, other = labelling_specs(policy_spec("search", playouts=int(playouts), claims=CLAIMS),
                                   rollout_model)
    field = [seat_value(f) for f in check_field(field) or ()]
    seeds = np.random.SeedSequence([int(seed), int(players), 0xE6]).generate_state(
        3 * int(games), dtype=np.uint64)
    part = ([], [], [], [], [], [])       # X, value, chosen, group, game, boards
    n_dec = 0
    t0 = time.process_time()
    for i in tqdm(range(int(games)), desc=f"end game {board} {players}p", disable=not progress):
        g = Game(board, players, seed=int(seeds[3 * i]))
        me = i % players
        search = make_policy(spec, g.board)
        search.uniform = True                  # every candidate gets the same playouts
        expert = ExpertPolicy("" if model is None else str(Path(model).resolve()),
                              wide=int(bool(wide)))
        expert.start(g, me, int(seeds[3 * i + 1]))
        seats = [q for q in range(players) if q != me]
        others = {q: make_policy(other if not field else
                                 field[(i * (players - 1) + k) % len(field)], g.board)
                  for k, q in enumerate(seats)}
        k = 0

        def learner(table):
            nonlocal k, n_dec
            if table.seat != me:
                return None
            codes, feats = expert.candidates(g)
            fewest = min(p["trains"] for p in g.state()["players"])
            k += 1
            if g.phase == "turn" and fewest <= max_trains and len(codes) > 1:
                decide(search, g, seed=int(seeds[3 * i + 2]) ^ (k << 8))
                mean = {int(c): u / n for c, n, u, *_ in search.last_decision()[0] if n}
                base = mean.get(int(codes[0]))
                if base is not None:
                    v = np.array([mean.get(int(c), np.nan) - base for c in codes], np.float32)
                    _record(part, feats, v, n_dec, i, board, centre=False)
                    n_dec += 1
            return expert_move(follow, g.phase, codes, feats, fewest)

        play_game(Table(g, [others.get(q) for q in range(players)], seed=int(seeds[3 * i + 2])),
                  learner)
    return from_lists(*part, time.process_time() - t0)


KINDS = {"setup_tickets": "setup", "turn": "turns", "keep_tickets": "keep"}


def generate_games(board="usa", players: int = 4, games: int = 10, seed: int = 0, *,
                   playouts: int = 24, keep_playouts: int | None = None, model=None,
                   rollout_model=None, rollout: str | None = None, field=None,
                   teacher: str | None = None, teacher_share: float = 0.0,
                   turn_share: float = 0.5, wide: bool = True,
                   progress: bool = False) -> dict:
    """Label every kind of decision the expert makes, over whole games: in game i seat
    ``i % players`` plays ``expert`` with ``model`` (None: the shipped one) or, in a
    share ``teacher_share`` of the games, the policy ``teacher`` (e.g. ``"search"``: the
    positions the teacher reaches, not only the student's); the other seats are drawn in
    turn from ``field`` (policy specs; ``search`` allowed; default ``expert`` with
    ``rollout_model``). At its initial ticket choice, at every keep after a ticket draw
    and at a share ``turn_share`` of its turns (drawn from the game's seed), the
    expert's candidates (``ExpertPolicy.candidates``; ``wide``: the search's whole turn
    set) are valued by the search with ``playouts`` playouts each on the same sampled
    worlds (ticket choices: ``keep_playouts``, default ``playouts``; ``value_actions``;
    rollouts by ``expert`` with ``rollout_model``, or by the built-in policy spec
    ``rollout`` (e.g. ``"tickets"``: a sixth of the cost), None: the search's own rollout
    policy). ``value``: each candidate's mean value minus the mean
    over the decision's candidates. Returns {"setup", "turns", "keep"}: the labelled
    decisions of each kind. Same seed, same positions and labels."""
    from tqdm.auto import tqdm

    from ttrsim._expert import ExpertPolicy
    from ttrsim.policies import make_policy
    from ttrsim.search import value_actions

    follow = load_model(model)
    roll = _games_rollout(rollout, rollout_model, teacher, teacher_share, turn_share)
    keep_playouts = int(playouts if keep_playouts is None else keep_playouts)
    field = tuple(seat_value(f) for f in field) if field else (expert_spec(rollout_model),)
    teacher = seat_value(teacher) if teacher else None
    seeds = np.random.SeedSequence([int(seed), int(players), 0x3A7E]).generate_state(
        4 * int(games), dtype=np.uint64)
    parts = {k: ([], [], [], [], [], []) for k in KINDS.values()}
    n_dec = 0
    t0 = time.process_time()
    for i in tqdm(range(int(games)), desc=f"whole game {board} {players}p", disable=not progress):
        g = Game(board, players, seed=int(seeds[4 * i]))
        me = i % players
        rng = np.random.default_rng(int(seeds[4 * i + 3]))
        taught = bool(teacher) and rng.random() < float(teacher_share)
        lead = make_policy(teacher, g.board) if taught else None
        search = {n: make_policy(policy_spec("search", playouts=n, **roll), g.board)
                  for n in {int(playouts), keep_playouts}}
        expert = ExpertPolicy("" if model is None else str(Path(model).resolve()),
                              wide=int(bool(wide)))
        expert.start(g, me, int(seeds[4 * i + 1]))
        others = {q: make_policy(field[(i * (players - 1) + k) % len(field)], g.board)
                  for k, q in enumerate(q for q in range(players) if q != me)}
        base = int(seeds[4 * i + 2])
        k = 0

        def learner(table):
            nonlocal k, n_dec
            if table.seat != me:
                return None
            phase = g.phase
            codes, feats = expert.candidates(g)
            k += 1
            kind = KINDS.get(phase)
            if kind is not None and len(codes) > 1 and (kind != "turns"
                                                       or rng.random() < float(turn_share)):
                budget = int(playouts) if kind == "turns" else keep_playouts
                rows, _ = value_actions(search[budget], g, codes, seed=base ^ (k << 8))
                _record(parts[kind], feats, [u / n for _, n, u, *_ in rows], n_dec, i, board)
                n_dec += 1
            if lead is not None:
                return None                    # the teacher plays the seat
            fewest = min(p["trains"] for p in g.state()["players"])
            return expert_move(follow, phase, codes, feats, fewest)

        seated = [lead if q == me else others[q] for q in range(players)]
        play_game(Table(g, seated, seed=base), learner)
    cpu = time.process_time() - t0
    return {kind: from_lists(*parts[kind], cpu if kind == "turns" else 0.0)
            for kind in parts}


def _games_rollout(rollout, rollout_model, teacher, teacher_share, turn_share) -> dict:
    """generate_games' arguments checked; the search spec's rollout parameter ({} : its
    own default)."""
    if rollout is not None and rollout_model is not None:
        raise ValueError("give rollout_model (a model file) or rollout (a policy spec), not both")
    if not 0.0 <= float(teacher_share) <= 1.0 or not 0.0 <= float(turn_share) <= 1.0:
        raise ValueError("teacher_share and turn_share must be within 0..1")
    if teacher_share > 0 and not teacher:
        raise ValueError("teacher_share > 0 needs a teacher policy spec")
    return ({"rollout": rollout} if rollout else
            {} if rollout_model is None else {"rollout": expert_spec(rollout_model)})


def _record(part, feats, values, decision: int, game: int, board, centre: bool = True) -> None:
    """Append one labelled decision to `part` (lists of X, value, chosen, group, game,
    boards): its values (with `centre`, relative to their mean), its best marked (NaN:
    a candidate not valued)."""
    X, value, chosen, group, game_ids, boards = part
    v = np.asarray(values, dtype=np.float64)
    X.append(feats)
    value.append((v - v.mean() if centre else v).astype(np.float32))
    best = np.zeros(len(v), np.int8)
    best[int(np.nanargmax(v))] = 1
    chosen.append(best)
    group.append(np.full(len(v), decision, dtype=np.int64))
    game_ids.append(np.full(len(v), game, dtype=np.int64))
    boards.append(str(board))


def check_field(field):
    """``field`` as a tuple of built-in policy specs (None or empty: None); a spec that
    names no built-in policy, or ``search``, is refused with the list of those allowed."""
    from ttrsim.policies import REGISTRY, parse_spec

    if not field:
        return None
    if isinstance(field, str):
        field = [f for f in field.split(";") if f.strip()]
    out = []
    for spec in field:
        name = str(spec).partition(":")[0].strip()
        if name not in REGISTRY or name == "search":
            known = ", ".join(sorted(k for k in REGISTRY if k != "search"))
            raise ValueError(f"field: {spec!r} is not a built-in policy other than search; "
                             f"use specs of: {known}")
        parse_spec(spec)                   # the parameters checked
        out.append(str(spec).strip())
    return tuple(out)


CHUNKS = {"setup": 50, "endgame": 10}   # positions / games per labelling task


CHUNKS["games"] = 4
CHUNKS["student"] = 20


def generate_student(board="usa", players: int = 4, games: int = 20, seed: int = 0, *,
                     student=None, teacher="field", teacher_seats: float = 1 / 3,
                     progress: bool = False) -> Positions:
    """The turns a student model reaches, scored by a teacher model: what distilling a
    teacher needs beyond the teacher's own positions (DAgger: the student's mistakes
    lead to positions the teacher never reaches). In game i, seat ``i % players`` plays
    ``expert`` with ``student``; in a share ``teacher_seats`` of the games (drawn from
    the game's seed) the other seats play the teacher, else the student too. At every
    turn of a student seat with more than one candidate, ``value`` is the teacher's
    turn score of each candidate (relative to the decision's mean) and ``chosen`` the
    teacher's choice; the game goes on with the student's move. Same seed, same
    positions and scores."""
    from tqdm.auto import tqdm

    from ttrsim._expert import ExpertPolicy

    models = {"student": student, "teacher": teacher}
    loaded = {k: load_model(v) for k, v in models.items()}
    paths = {k: str(Path(model_file(v)).resolve()) for k, v in models.items()}
    if loaded["teacher"].turns is None:
        raise ValueError(f"the teacher {teacher!r} has no turns section to distil")
    seeds = np.random.SeedSequence([int(seed), int(players), 0x57D7]).generate_state(
        3 * int(games), dtype=np.uint64)
    part = ([], [], [], [], [], [])
    n_dec = 0
    t0 = time.process_time()
    for i in tqdm(range(int(games)), desc=f"student {board} {players}p", disable=not progress):
        g = Game(board, players, seed=int(seeds[3 * i]))
        rng = np.random.default_rng(int(seeds[3 * i + 1]))
        me = i % players
        mixed = rng.random() < float(teacher_seats)
        who = ["student" if q == me or not mixed else "teacher" for q in range(players)]
        seats = []
        for q in range(players):
            e = ExpertPolicy(paths[who[q]])
            e.start(g, q, int(rng.integers(1 << 62)))
            seats.append(e)

        def score(q, phase, codes, feats, pick):
            nonlocal n_dec
            if who[q] == "student" and phase == "turn" and len(codes) > 1:
                _record(part, feats, loaded["teacher"].turns.predict(feats), n_dec, i, board)
                n_dec += 1
            return pick
        play_experts(g, seats, [loaded[w] for w in who], score)
    return from_lists(*part, time.process_time() - t0)


def play_experts(g, seats, models, hook=None) -> None:
    """Play ``g`` to its end (or the run's turn limit) with ``expert`` in every seat: seat
    q's ``ExpertPolicy`` ``seats[q]`` (started) lists the candidates, its model
    ``models[q]`` (an ExpertModel) picks as the compiled policy would (``expert_pick``).
    ``hook(q, phase, codes, feats, pick)``, at every decision, returns the index of the
    candidate played (``pick``: the model's; another: exploration) and may record it."""
    def decide(table):
        q, phase = table.seat, g.phase
        codes, feats = seats[q].candidates(g)
        fewest = min(p["trains"] for p in g.state()["players"])
        pick = expert_pick(models[q], phase, feats, fewest)
        if hook is not None:
            pick = int(hook(q, phase, codes, feats, pick))
        return int(codes[pick])

    play_game(Table(g, [None] * g.n_players), decide)


def _label_task(kind, board, players, n, seed, kw):
    if kind == "outcomes":
        return generate_outcomes(board, players, n, seed, **kw)
    if kind == "setup":
        return generate_setup(board, players, n, seed, **kw)
    if kind == "games":
        return generate_games(board, players, n, seed, **kw)
    if kind == "student":
        return generate_student(board, players, n, seed, **kw)
    return generate_endgame(board, players, n, seed, **kw)


def _indexed(i, args):
    return i, _label_task(*args)


def label(kind: str, parts, *, seed: int = 0, n_jobs: int = 1, progress: bool = True,
          cache=None, backend: str = "loky", scheduler: str | None = None,
          **kw) -> Positions:
    """``generate_setup`` (``kind="setup"``; ``parts``: (board, players, positions)),
    ``generate_endgame`` (``kind="endgame"``; (board, players, games)) or
    ``generate_games`` (``kind="games"``; (board, players, games): a dict of Positions
    by decision kind) or ``generate_student`` (``kind="student"``) over ``parts``, in
    small tasks spread over ``n_jobs`` workers (``kw`` goes to the generator). The same positions and labels whatever ``n_jobs``:
    each task has its own seed and the tasks are put back in order. ``cache``: a
    directory where each finished task is saved (atomically, under a key of its
    arguments), so that a labelling cut short goes on from the tasks it finished.
    ``backend="dask"`` with ``scheduler`` spreads the tasks over a dask cluster
    (``ttrsim.dispatch.run_tasks``), as ``simulate`` does."""
    from ttrsim.dispatch import progress_bar, run_tasks

    if kind not in CHUNKS:
        raise ValueError(f"kind must be one of {sorted(CHUNKS)}, got {kind!r}")
    if kind == "games" and kw.get("field"):
        kw["field"] = tuple(kw["field"])
    for key in ("student", "teacher"):          # names of shipped models as their paths
        if key in kw:
            kw[key] = model_file(kw[key])
    if kind == "outcomes":
        kw["model"] = model_file(kw.get("model", "whole"))
        kw["field"] = tuple(str(Path(model_file(m)).resolve()) for m in kw.get("field") or ())
    for key in ("model", "rollout_model", "student", "teacher"):
        if kw.get(key) is not None:
            kw[key] = str(Path(kw[key]).resolve())
    size = CHUNKS[kind]
    tasks = []
    for j, (board, players, n) in enumerate(parts):
        for c in range(0, int(n), size):
            tasks.append((kind, board, int(players), min(size, int(n) - c),
                          int(seed) * 1_000_003 + j * 10_007 + c, kw))
    kinds = list(KINDS.values()) if kind in ("games", "outcomes") else [None]
    out = {}
    for i, task in enumerate(tasks):
        hit = _cached(cache, i, task, kinds)
        if hit is not None:
            out[i] = hit
    todo = [(i, t) for i, t in enumerate(tasks) if i not in out]
    bar = progress_bar(progress, sum(t[3] for _, t in todo),
                       unit="position" if kind == "setup" else "game", desc=f"labelling {kind}")
    try:
        with closing(run_tasks(_indexed, todo, n_jobs, backend, scheduler, bar=bar,
                               sizes=[t[3] for _, t in todo])) as results:
            for i, p in results:
                out[i] = p
                _store(cache, i, tasks[i], kinds, p)
    finally:
        if bar is not None:
            bar.close()
    if kind in ("games", "outcomes"):
        return {k: join([out[i][k] for i in range(len(tasks))]) for k in KINDS.values()}
    return join([out[i] for i in range(len(tasks))])


def _task_key(task) -> str:
    import json
    from ttrsim._expert import FEATURES

    return json.dumps([task[:5], sorted((k, str(v)) for k, v in task[5].items()),
                       list(FEATURES)], default=str)


def _task_files(cache, i, kinds):
    return [Path(cache) / (f"task{i:05d}" + (f"-{k}" if k else "") + ".npz") for k in kinds]


def _cached(cache, i, task, kinds):
    """Task i's saved labels, if `cache` holds them under this task's key."""
    from ttrsim.training.positions import load_positions

    if cache is None or task is None:
        return None
    files = _task_files(cache, i, kinds)
    if not all(f.exists() for f in files):
        return None
    loaded = [load_positions(f, with_key=True) for f in files]
    if any(key != _task_key(task) for _, key in loaded):
        return None
    return dict(zip(kinds, (p for p, _ in loaded))) if kinds != [None] else loaded[0][0]


def _store(cache, i, task, kinds, result) -> None:
    from ttrsim.training.positions import save_positions

    if cache is None:
        return
    Path(cache).mkdir(parents=True, exist_ok=True)
    for k, f in zip(kinds, _task_files(cache, i, kinds)):
        save_positions(result[k] if k else result, f, _task_key(task))


CHUNKS["outcomes"] = 200       # games a task: the batch loop plays them in about a second
TARGETS = ("win", "margin")


def outcome(scores, seat: int, target: str = "margin") -> float:
    """The final result of ``seat`` from the game's ``scores()``: ``"win"``, 1 for a seat
    ranked first (shared equally by the seats tied first) and 0 else; ``"margin"``, its
    total minus the best total of the other seats, in hundreds of points (positive for a
    winner)."""
    if target == "win":
        firsts = sum(1 for s in scores if s["rank"] == 1)
        return 1.0 / firsts if scores[seat]["rank"] == 1 else 0.0
    if target == "margin":
        best = max(s["total"] for q, s in enumerate(scores) if q != seat)
        return (scores[seat]["total"] - best) / 100.0
    raise ValueError(f"target must be one of {', '.join(TARGETS)}, got {target!r}")


def generate_outcomes(board="usa", players: int = 4, games: int = 20, seed: int = 0, *,
                      model="whole", field=None, epsilon: float = 0.1, target: str = "margin",
                      details: bool = False, progress: bool = False):
    """Decisions labelled by how the game ended (Monte-Carlo learning, as DouZero): every
    seat plays ``expert`` with ``model`` (a name or file), or, with ``field`` (model names
    or files), the other seats of game i draw theirs from it in turn (seat
    ``i % players`` keeps ``model``); at each decision its model decides (initial
    tickets, turns where its turn trees decide, keeps after a draw where it has keep
    trees; ``KINDS``) with more than one candidate a seat plays, with probability
    ``epsilon`` (drawn from the game's seed), another candidate than its model's, drawn
    uniformly (exploration: ticket draws, keeps and claims the model would not make).
    The games are played by the compiled batch loop, each seat a recording
    ``ExpertPolicy`` (``record=1``). Each such decision gives one row: the features of
    the candidate played, ``value`` its seat's final result (``outcome``: ``target``),
    ``chosen`` 1; ``group`` one id per decision, ``game`` the game; rows in play order. Returns {"setup", "turns", "keep"}: the rows of each kind; with
    ``details`` also ({kind: seat of each row}, per game a list of each seat's final
    score parts: dicts of ``SCORE_COLS``, the total as ``"total"``). Same seed, same
    games and labels."""
    from ttrsim._expert import RECORD_KINDS
    from ttrsim.batches import SCORE_COLS

    if target not in TARGETS:
        raise ValueError(f"target must be one of {', '.join(TARGETS)}, got {target!r}")
    if not 0.0 <= float(epsilon) <= 1.0:
        raise ValueError(f"epsilon must be within 0..1, got {epsilon}")
    players, games = int(players), int(games)
    names = [model] + list(field or ())
    paths = {m: str(Path(model_file(m)).resolve()) for m in names}
    for m in names:
        load_model(paths[m])                        # a bad file refused before any game
    scores, rec, cpu = _recorded_games(board, players, games, seed, model, field, paths,
                                       float(epsilon), progress)
    value = outcome_values(scores[:, :, 0], scores[:, :, SCORE_COLS.index("rank")], target)
    data, seat_of = {}, {}
    for k, kind in enumerate(RECORD_KINDS):
        m = rec["kind"] == k
        n = int(m.sum())
        # group: the row's place in the game's play order (one decision a row)
        data[kind] = Positions(rec["X"][m],
                               value[rec["game"][m], rec["seat"][m]].astype(np.float32),
                               np.ones(n, np.int8), np.flatnonzero(m).astype(np.int64),
                               rec["game"][m], [str(board)] * n,
                               cpu if kind == "turns" else 0.0)
        seat_of[kind] = rec["seat"][m].astype(np.int64)
    if details:
        finals = [[dict(zip(SCORE_COLS, map(int, scores[i, q])), total=int(scores[i, q, 0]))
                   for q in range(players)] for i in range(games)]
        return data, seat_of, finals
    return data


def _recorded_games(board, players, games, seed, model, field, paths, epsilon, progress):
    """generate_outcomes' games played by the batch loop, each seat a recording
    ``ExpertPolicy``: their final score parts (games, players, SCORE_COLS), the rows
    recorded (``ExpertPolicy.recorded``, ``game`` the game's index) in play order, and
    the CPU seconds of play."""
    from ttrsim._expert import RECORD_KINDS, ExpertPolicy
    from ttrsim.batches import SCORE_COLS, game_seeds, play_batch
    from ttrsim.dispatch import progress_bar
    from ttrsim.game import compile_board
    from ttrsim.maps import resolve_board

    key = int(np.random.SeedSequence([int(seed), players, 0x0C7]).generate_state(
        1, dtype=np.uint64)[0])
    seeds = game_seeds(key, games, 0)
    # the models of game i's seats; the games of one line-up are one call into the core
    lineups: dict[tuple, list[int]] = {}
    for i in range(games):
        others = iter(range(i * (players - 1), (i + 1) * (players - 1)))
        who = tuple(model if q == i % players or not field else field[next(others) % len(field)]
                    for q in range(players))
        lineups.setdefault(who, []).append(i)
    cb = compile_board(resolve_board(board))
    scores = np.zeros((games, players, len(SCORE_COLS)), np.int64)
    rows = []                                       # per seat of a line-up: recorded rows
    bar = progress_bar(progress, games, desc=f"outcomes {board} {players}p")
    t0 = time.process_time()
    try:
        for who, idx in lineups.items():
            idx = np.array(idx, np.int64)
            seats = [ExpertPolicy(paths[m], record=1, epsilon=epsilon) for m in who]
            out = play_batch(cb, players, seats, np.ascontiguousarray(seeds[idx]), 0, False,
                             True)
            scores[idx] = out["scores"]
            for q, e in enumerate(seats):
                got = e.recorded()
                got["game"] = idx[got["game"]]
                rows.append(got)
            if bar is not None:
                bar.update(len(idx))
    finally:
        if bar is not None:
            bar.close()
    cpu = time.process_time() - t0
    if not rows:                                    # no game
        rows = [ExpertPolicy(paths[model], record=1).recorded()]
    rec = {k: np.concatenate([r[k] for r in rows]) for k in rows[0]}
    # play order: a game's initial ticket choices first (in seat order, all before turn
    # 0), then by game turn (one seat acts in a turn; a seat's rows are in its order)
    order = np.lexsort((rec["seat"], rec["turn"], rec["kind"] != RECORD_KINDS.index("setup"),
                        rec["game"]))
    return scores, {k: v[order] for k, v in rec.items()}, cpu


def outcome_values(totals, ranks, target: str = "margin") -> np.ndarray:
    """``outcome`` of every seat of every game at once: (games, players) arrays of the
    final totals and ranks -> (games, players) float64 results."""
    totals = np.asarray(totals, np.float64)
    ranks = np.asarray(ranks)
    if target == "win":
        first = ranks == 1
        return first / np.maximum(first.sum(axis=1, keepdims=True), 1)
    if target == "margin":
        n = totals.shape[1]
        best = np.stack([np.delete(totals, q, axis=1).max(axis=1) for q in range(n)], axis=1)
        return (totals - best) / 100.0
    raise ValueError(f"target must be one of {', '.join(TARGETS)}, got {target!r}")
