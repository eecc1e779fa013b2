"""Policy registry: built-in compiled policies by name, Python policies by adapter.

A policy spec is ``"name"`` or ``"name:param=value,param=value"`` (``ttrsim policies``
lists names and parameters), a ``ttrsim.Policy`` instance, or any Python object with a
``choose(observation, legal_actions)`` method or a plain callable
``f(observation, legal_actions)`` (see docs/policies.md). A Python policy can also be named
by a string, ``"path/to/file.py:function"`` or ``"module:callable"`` (a class is
instantiated once per seat), which is how the command line takes one. Any spec string may
end in a label, ``"tickets#a"``, so that two seats with the same spec stay apart in the
results.
"""
from __future__ import annotations

import copy
import functools
import importlib
import importlib.util
import os
import re
import sys
from dataclasses import dataclass, field

from ttrsim._policies import (GreedyPolicy, RandomPolicy, RoutesPolicy, TicketsPolicy, decide,
                              start_policy)
from ttrsim._policy import Policy, PolicyError, PyPolicy
from ttrsim._search import SearchPolicy, search_params
from ttrsim._expert import ExpertPolicy
from ttrsim._counter import BlockerPolicy, RushPolicy
from ttrsim._validate import is_int

__all__ = ["DEFAULT_POLICY", "Policy", "PolicyError", "PolicySpec", "REGISTRY", "check_policy",
           "decide", "display_name", "load_python_policy", "seat_specs", "expert_models",
           "replace_policy", "make_policy", "make_search_policy", "parse_spec", "policy_name", "policy_spec",
           "policy_table", "python_ref", "search_budgets", "split_label", "start_policy"]


@dataclass(frozen=True)
class PolicyInfo:
    """A built-in policy: its class, description and parameters (name -> (default, doc));
    ``build(**params)`` makes an instance when calling the class is not enough."""

    cls: type
    doc: str
    params: dict = field(default_factory=dict)
    build: object = None
    nested: tuple = ()          # parameters whose value is itself a built-in policy's spec


_TUNNELS = (1, "0: never attempt a tunnel (plans route around them)")
_RISK = (0.3, "largest accepted probability that a tunnel reveals more extra cards than "
              "the hand can pay (then the claim is declined and the turn lost)")
_DRAW = (12, "once its tickets are done, draw more only while at least this many trains "
             "remain (and a draw is expected to beat playing for route points)")

_PROPOSERS = ("tickets", "greedy", "routes")
# the search plays its playouts with the expert model trained against `tickets`: the model
# trained against the field measured no stronger there at more CPU a playout (docs/expert.md)
SEARCH_ROLLOUT = "expert:model=v4"
# playouts per decision of a search whose `playouts` is 0, by rollout policy. 35 expert
# playouts cost about what 200 of tickets do (an expert playout costs 5-6 times a tickets
# one); since 2026-12-02 the expert's are 60, about 1.7 times that CPU, stronger on every
# board (docs/search.md, "The default's budget")
_BUDGET, _EXPERT_BUDGET = 200, 60
_EXPERT_BUDGET_BEFORE = 35      # the default with expert rollouts until 2026-12-02


def search_budget(rollout: str, playouts: int = 0) -> int:
    """The playouts per decision of a search with rollout policy ``rollout`` (a spec):
    ``playouts`` when given (> 0), else the rollout's default budget, 60 for ``expert``
    (35 until 2026-12-02) and 200 for any other policy."""
    if playouts:
        return playouts
    name = rollout.name if isinstance(rollout, PolicySpec) else str(rollout).partition(":")[0].strip()
    return _EXPERT_BUDGET if name == "expert" else _BUDGET


def _builtin_spec(role: str, spec: str) -> PolicySpec:
    """`spec` (a string or a ``PolicySpec``) parsed, checked to name a built-in policy
    other than ``search``."""
    if not isinstance(spec, PolicySpec):
        spec = str(spec).strip()
    name = spec.name if isinstance(spec, PolicySpec) else spec.partition(":")[0].strip()
    if name not in REGISTRY or name == "search":
        known = ", ".join(sorted(k for k in REGISTRY if k != "search"))
        text = spec.text if isinstance(spec, PolicySpec) else spec
        raise ValueError(f"search: unknown {role} policy {text!r}; use one of the "
                         f"built-in policies: {known}")
    return parse_spec(spec)


def make_search_policy(rollout: str = SEARCH_ROLLOUT, lead: str = "", playouts: int = 0,
                       foes: str = "", **params) -> SearchPolicy:
    """A ``search`` policy whose rollout is the built-in policy ``rollout`` (a spec such as
    ``"greedy"`` or ``"tickets:risk=0.2"``; any built-in but ``search``), handed its rollout
    instances and its proposers. ``playouts`` per decision; 0: :func:`search_budget`'s
    default for the rollout (60 with ``expert``, 200 with the others). ``lead`` (a
    built-in spec; "" : the rollout) plays the real game: its choice is the default
    candidate, which the search leaves only on evidence, and it makes the decisions that
    are not searched. ``params`` are the search's own (``ttrsim policies``). The
    proposers: of the rollout followed by tickets, greedy and routes (without the
    rollout), the first three less any that plays at random, less the first when it is
    the default candidate (no `lead`). ``foes`` (a built-in spec; "" : the rollout) plays
    the other seats in the playouts."""
    roll = _builtin_spec("rollout", rollout)
    lead = _builtin_spec("lead", lead) if lead else None
    rollouts = [roll.build() for _ in range(5)] + [(lead or roll).build()]
    others = [p for p in _PROPOSERS if p != roll.text and p in REGISTRY][:2]
    proposers = [p for p in [roll.build()] + [PolicySpec(n).build() for n in others]
                 if not isinstance(p, RandomPolicy)]
    foes = _builtin_spec("foes", foes) if foes else None
    foe = [foes.build() for _ in range(5)] if foes else []
    return SearchPolicy(rollouts, proposers if lead else proposers[1:],
                        rollout=_nested_text(roll), lead=_nested_text(lead) if lead else "",
                        playouts=search_budget(roll, playouts), foes=foe,
                        foe_spec=_nested_text(foes) if foes else "", **params)


def _check_search(values: dict) -> None:
    """A search spec's parameters checked as ``make_search_policy`` would take them, building
    one instance of its rollout policy and one of its lead (not the search's nine)."""
    own = dict(values)
    rollout, lead = _builtin_spec("rollout", own.pop("rollout")), own.pop("lead")
    foes = own.pop("foes", "")
    rollout.build()
    if foes:
        _builtin_spec("foes", foes).build()
    if lead:
        _builtin_spec("lead", lead).build()
    own["playouts"] = search_budget(rollout, own["playouts"])
    search_params(**own)


REGISTRY: dict[str, PolicyInfo] = {
    "random": PolicyInfo(RandomPolicy, "a uniformly random legal action at every decision"),
    "tickets": PolicyInfo(
        TicketsPolicy,
        "plans the cheapest network joining its tickets (Steiner heuristic over the open "
        "routes), collects the colours it needs and claims along the plan, replanning "
        "when blocked; draws more tickets when done, then takes the best-scoring routes",
        {"stations": (1, "0: never build a station (Europe); 1: borrow a blocked route "
                         "through a station when that is the cheapest way round"),
         "tunnels": _TUNNELS, "risk": _RISK, "draw": _DRAW}),
    "routes": PolicyInfo(
        RoutesPolicy,
        "a long-route strategy: keeps the fewest, cheapest initial tickets and joins them "
        "along long routes, otherwise claims the longest route it can afford with the "
        "trains its tickets do not need and collects for the longest within reach; draws "
        "no more tickets",
        {"tunnels": _TUNNELS, "risk": _RISK,
         "min_len": (3, "shortest route it aims for off its ticket plan while a longer "
                        "one is open and the end is not near (it aims for the longest "
                        "first, so this seldom changes a game)")}),
    "greedy": PolicyInfo(
        GreedyPolicy,
        "one-step lookahead: claims the route worth most in points plus ticket progress "
        "when that beats drawing cards, else draws toward the best route it cannot pay",
        {"tunnels": _TUNNELS, "risk": _RISK, "draw": _DRAW}),
    "search": PolicyInfo(
        SearchPolicy,
        "information-set Monte Carlo search: samples worlds consistent with what the seat "
        "knows, plays a few candidate actions (the heuristics' choices, a blind draw, a "
        "ticket draw, the longest claims) out to the end with the rollout policy and "
        "departs from the rollout policy's own choice only for a candidate better by z "
        "paired standard errors (sequential halving over the candidates; docs/search.md)",
        {"playouts": (0, "playouts per decision (the budget; more is stronger and slower); "
                         "0: 60 with expert rollouts (35 until 2026-12-02) and 200 "
                         "with any other"),
         "rollout": (SEARCH_ROLLOUT, "built-in policy that plays every seat in the playouts "
                                     "(until ttrsim 0.2: tickets, with 200 playouts)"),
         "lead": ("", "built-in policy whose choice is the default candidate and which makes "
                      "the decisions not searched (e.g. expert); empty: the rollout policy"),
         "worlds": (0, "distinct sampled worlds per decision (0: a fresh one per playout)"),
         "c": (0.0, "UCB1 exploration constant; 0 uses sequential halving instead"),
         "utility": (0.2, "weight of the final score margin in a playout's value "
                          "(0: wins only, 1: margin only; 50 points of margin = full range)"),
         "claims": (0, "claims considered besides the heuristics' choices (longest first); "
                      "more candidates dilute the budget: 3 lost clearly to 0 (docs/search.md)"),
         "draws": (0, "1: search second card draws too; 0: the rollout policy takes them"),
         "z": (1.0, "another candidate replaces the rollout policy's own choice only when "
                    "its mean value is higher by z standard errors (paired over the same "
                    "worlds); 0: the best mean wins"),
         "infer": (5.0, "in each sampled world the others' tickets are dealt again, a ticket "
                        "weighted by exp(infer x the number of its cities their own routes "
                        "touch); 0: uniformly at random"),
         "ticket_draws": (1, "0: a ticket draw is a candidate only when the rollout policy "
                             "itself would draw (to measure what ticket draws are worth)"),
         "rare": (1, "budget multiple at the rare, costly decisions: the initial and drawn "
                     "ticket choices and the turns before the seat's first claim (1: the "
                     "same budget everywhere)"),
         "foes": ("", "built-in policy that plays the other seats in the playouts (e.g. "
                      "tickets, which claims early); empty: the rollout policy"),
         "phases": (31, "decisions searched, a sum of 1 (initial tickets), 2 (drawn "
                        "tickets), 4 (turns), 8 (second draws, with draws=1) and 16 "
                        "(tunnels); the others are the rollout policy's own (to measure "
                        "where the search's strength lies)")},
        build=make_search_policy, nested=("rollout", "lead", "foes")),
    "expert": PolicyInfo(
        ExpertPolicy,
        "learned from the search and trained further against the field: gradient-boosted "
        "trees over board-independent features choose the initial tickets and the move of "
        "every turn; second draws, tunnels and later tickets are tickets' own "
        "(docs/expert.md)",
        {"model": ("", "model file (JSON) to use instead of the default shipped with ttrsim "
                       "(field), or a model shipped beside it: v4 (the default until "
                       "2026-11-28, trained against tickets only; the search's rollouts), "
                       "usa1910 (trained further on the USA 1910 decks), whole (format 5: "
                       "also draws tickets after the deal and keeps them with trees of its "
                       "own; docs/expert.md)"),
         "reach": (-1, "the turn trees decide once some seat has this many trains or fewer "
                       "(-1: the model's own, every turn); smaller is faster and weaker"),
         "wide": (0, "1: a turn's candidates also hold the four longest claims the hand "
                     "pays and a face-up card of each colour (the search's turn candidates, "
                     "as in training); about three times slower"),
         "stations": (1, "0: never build a station (its tickets' own parameter)"),
         "tunnels": _TUNNELS, "risk": _RISK, "draw": _DRAW}),
    "blocker": PolicyInfo(
        BlockerPolicy,
        "plays tickets, but claims a route that cuts the cheapest connection another "
        "player is inferred (from the cities its routes touch, public information only) to "
        "be building, when that costs it little (docs/policies.md)",
        {"max_len": (3, "longest route it claims off its own plan to block"),
         "margin": (8.0, "points by which a cut's value (the other player's detour, up to "
                         "twice the ticket) must beat its cost (trains and cards off its "
                         "plan less the route's points)"),
         "single": (0.3, "weight of a ticket only one of whose cities the other player's "
                         "routes touch (1 for both cities touched, not yet joined)"),
         "stations": (1, "0: never build a station (its tickets' own parameter)"),
         "tunnels": _TUNNELS, "risk": _RISK, "draw": _DRAW}),
    "rush": PolicyInfo(
        RushPolicy,
        "ends the game early: keeps the fewest, cheapest tickets and never draws more, "
        "claims the longest route its hand pays (at least min_len), else a route of its "
        "ticket plan, else draws toward the long route closest to affordable",
        {"min_len": (6, "shortest route it claims or collects for off its ticket plan "
                        "while the end is not near"),
         "tunnels": _TUNNELS, "risk": _RISK}),
}
DEFAULT_POLICY = "tickets"


def seat_specs(board, players) -> tuple:
    """One policy spec per seat: ``players`` is a player count (every seat plays the
    default policy) or a list of specs, one per seat; the board must allow that count. A
    Python policy file is named by its absolute path (:func:`policy_name`), so that the
    workers of a cluster, each in a folder of its own, find it on a disk they share."""
    if is_int(players):
        board.check_players(int(players))
        return (DEFAULT_POLICY,) * int(players)
    if isinstance(players, (list, tuple)):
        board.check_players(len(players))
        return tuple(_absolute_file(s) for s in players)
    raise ValueError(f"players must be a player count or a list of policy specs, one per "
                     f"seat; got {players!r}")


def split_label(spec: str) -> tuple[str, str]:
    """``"tickets:risk=0.2#cautious"`` -> ``("tickets:risk=0.2", "cautious")``; the label is
    ``""`` when there is none. A label only renames the seat's policy in the results."""
    depth, cut = 0, -1
    for i, ch in enumerate(spec):           # the '#' outside a nested spec's parentheses
        depth += (ch == "(") - (ch == ")")
        if ch == "#" and depth == 0:
            cut = i
            break
    body, sep, label = (spec[:cut], "#", spec[cut + 1:]) if cut >= 0 else (spec, "", "")
    label = label.strip()
    if sep and not re.fullmatch(r"[\w.+-]+", label):
        raise ValueError(f"policy {spec!r}: a label after '#' is letters, digits, '_', '.', '+' or "
                         "'-', e.g. 'tickets#a'")
    return body.strip(), label


def replace_policy(specs, policy: str) -> list[str]:
    """Each spec with its policy name replaced by ``policy``, keeping its settings and
    label (``"tickets:risk=0#a"`` -> ``"expert:risk=0#a"``): the same seats under another
    policy, e.g. to play a study again under stronger play. A setting ``policy`` does not
    take is refused (ValueError naming it)."""
    if ":" in policy or "#" in policy:
        raise ValueError(f"{policy!r}: give a built-in policy name only (its settings come "
                         "from each seat's spec)")
    out = []
    for spec in specs:
        body, label = split_label(str(spec))
        rest = body.partition(":")[2]
        new = policy + (f":{rest}" if rest else "")
        parse_spec(new)
        out.append(new + (f"#{label}" if label else ""))
    return out


_IDENT = r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*"


def _python_ref(body: str):
    """``(source, attribute)`` when ``body`` names a Python policy (``file.py:function`` or
    ``module:callable``), else None (then it is a built-in spec)."""
    source, sep, attr = body.rpartition(":")
    if not sep or source.strip() in REGISTRY or source.partition(":")[0].strip() in REGISTRY:
        return None
    source, attr = source.strip(), attr.strip()
    if not re.fullmatch(_IDENT, attr):
        return None
    if source.endswith(".py") or "/" in source or "\\" in source or re.fullmatch(_IDENT, source):
        return source, attr
    return None


_LOADED: dict = {}


def python_ref(spec: str):
    """``(source, attribute)`` when the spec string names a Python policy
    (``"file.py:function"``, ``"module:callable"``, a label allowed), else None."""
    return _python_ref(split_label(spec)[0])


def load_python_policy(ref: str):
    """The Python object a ``"path/to/file.py:name"`` or ``"module:name"`` string names
    (a label ``#...`` is ignored). Raises ValueError with what went wrong: no such file or
    module, the file failing to load, or no such name in it."""
    body, _ = split_label(ref)
    parsed = _python_ref(body)
    if parsed is None:
        raise ValueError(f"{ref!r} does not name a Python policy: give path/to/file.py:function "
                         "or module:callable")
    return _load_ref(body, *parsed)


def _is_file(source: str) -> bool:
    """Whether a Python policy's ``source`` is a file (else a module)."""
    return source.endswith(".py") or "/" in source or "\\" in source


def _ref_name(ref: tuple, label: str) -> str:
    """The name a Python policy named by ``(source, attribute)`` goes by in results: a file
    by its absolute path, the same whatever the folder it is then read from."""
    source, attr = ref
    if _is_file(source):
        source = os.path.abspath(os.path.expanduser(source))
    return f"{source}:{attr}" + (f"#{label}" if label else "")


def display_name(name: str) -> str:
    """The name a results' policy goes by on screen: a Python policy file inside the working
    folder by its path from there (``mine.py:cautious``, as it is usually typed), any other
    name as it is. The results keep the absolute path, which names the policy whatever
    folder reads them."""
    body, label = split_label(str(name))
    ref = _python_ref(body)
    if ref is None or not _is_file(ref[0]) or not os.path.isabs(ref[0]):
        return str(name)
    try:
        rel = os.path.relpath(ref[0])
    except ValueError:                       # another drive (Windows)
        return str(name)
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return str(name)
    return f"{rel}:{ref[1]}" + (f"#{label}" if label else "")


def _absolute_file(spec):
    """A spec naming a Python policy file, with the file's absolute path; any other spec
    as it is."""
    if isinstance(spec, str):
        body, label = split_label(spec)
        ref = _python_ref(body)
        if ref is not None and _is_file(ref[0]):
            return _ref_name(ref, label)
    return spec


def _load_ref(body: str, source: str, attr: str):
    """The object ``attr`` of the file or module ``source`` (``body``: the spec, in errors)."""
    if _is_file(source):
        module = _load_file(source)
        where = f"policy file {source}"
    else:
        try:
            module = importlib.import_module(source)
        except ImportError as exc:
            raise ValueError(f"policy {body!r}: cannot import module {source!r} ({exc}); give "
                             "path/to/file.py:function or a module on the Python path") from None
        except Exception as exc:
            raise ValueError(f"policy {body!r}: module {source!r} failed to load: "
                             f"{type(exc).__name__}: {exc}") from None
        where = f"module {source}"
    target = module
    for part in attr.split("."):
        if not hasattr(target, part):
            names = sorted(n for n in vars(module) if not n.startswith("_")
                           and callable(getattr(module, n)))
            raise ValueError(f"{where} has no {attr!r}; callables in it: "
                             f"{', '.join(names) or 'none'}")
        target = getattr(target, part)
    return target


def _load_file(source: str):
    from pathlib import Path

    path = Path(source).expanduser()
    if not path.is_file():
        raise ValueError(f"policy file {source!r} not found" +
                         ("" if path.is_absolute() else f" (from {Path.cwd()})"))
    key = str(path.resolve())
    if key in _LOADED:
        return _LOADED[key]
    stem = re.sub(r"\W", "_", path.stem)
    name = f"_ttrsim_policy_file_{len(_LOADED)}_{stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise ValueError(f"policy file {source} failed to load: {type(exc).__name__}: {exc}") from None
    _LOADED[key] = module
    return module


@dataclass(frozen=True)
class PolicySpec:
    """A built-in policy spec parsed once (:func:`parse_spec`): the policy's ``name``, the
    ``params`` given (typed as their defaults; the others take their default) and the
    seat's ``label`` ("" : none). ``text`` is the name it goes by in results,
    ``build()`` makes a fresh instance."""

    name: str
    params: dict = field(default_factory=dict)
    label: str = ""

    def values(self) -> dict:
        """Every parameter of the policy: its defaults, updated by those given (a nested
        spec's default as a ``PolicySpec`` too, parsed once per process)."""
        info = REGISTRY[self.name]
        return {k: _default_spec(v[0]) if k in info.nested and v[0] else v[0]
                for k, v in info.params.items()} | self.params

    @property
    def text(self) -> str:
        """``"name:a=1,b=2#label"``, parameters sorted (``policy_name``)."""
        return canonical_spec(self.name, self.params) + (f"#{self.label}" if self.label else "")

    def replace(self, label: str | None = None, **params) -> "PolicySpec":
        """The same spec with ``params`` given (checked as :func:`policy_spec` checks
        them) and, when given, another ``label``."""
        return policy_spec(self.name, self.label if label is None else label,
                           **(self.params | params))

    def build(self) -> Policy:
        """A fresh instance for one seat, named ``text``."""
        info = REGISTRY[self.name]
        values = self.values()
        make = info.build or info.cls
        policy = make(**values) if values else make()
        policy.spec = self.text
        return policy


def parse_spec(spec) -> PolicySpec:
    """Parse ``"name:a=1,b=x#label"`` into ``PolicySpec("name", {"a": 1.0, "b": "x"},
    "label")`` after checking the name and the parameters against the registry (a
    ``PolicySpec`` is returned as it is)."""
    if isinstance(spec, PolicySpec):
        return spec
    body, label = split_label(str(spec))
    return _parse_body(body, label)


def _parse_body(body: str, label: str) -> PolicySpec:
    """The work of :func:`parse_spec` once the label is split off."""
    name, _, rest = body.partition(":")
    name = name.strip()
    if name not in REGISTRY:
        if name.endswith(".py") and not rest:
            raise ValueError(f"policy file {name!r}: name the policy in it too, as "
                             f"{name}:function")
        raise ValueError(f"unknown policy {name!r}; built-in policies: {', '.join(sorted(REGISTRY))}"
                         "; a Python policy is given as path/to/file.py:function or "
                         "module:callable (or, in Python, as the callable itself)")
    info = REGISTRY[name]
    params = {}
    for item in _top_level_items(rest, name):
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq:
            _unknown_parameter(name, item)
        params[key] = _param_value(name, key, value.strip(), item)
    return PolicySpec(name, params, label)


def _unknown_parameter(name: str, item) -> None:
    info = REGISTRY[name]
    known = ", ".join(info.params) or "none"
    nest = (f"; a nested spec with several parameters goes in parentheses, e.g. "
            f"{info.nested[0]}=(tickets:risk=0.2,draw=10)" if info.nested else "")
    raise ValueError(f"policy {name!r}: bad parameter {item!r}; parameters: {known}{nest}")


def _param_value(name: str, key: str, value, item=None):
    """Parameter ``key`` of policy ``name`` checked and typed as its default: ``value``
    is its text in a spec (``item`` the whole ``key=value``) or, from
    :func:`policy_spec`, a value (a number, a text, a ``PolicySpec`` for a nested one)."""
    info = REGISTRY[name]
    item = f"{key}={value}" if item is None else item
    if key not in info.params:
        _unknown_parameter(name, item)
    default = info.params[key][0]
    if isinstance(value, str) and not value.strip():
        # "model=" must not fall back to the default silently
        raise ValueError(f"policy {name!r}: parameter {key} has no value ({item!r}); give "
                         f"{key}=VALUE ({info.params[key][1]}) or leave it out for the "
                         "default")
    if key in info.nested:
        if isinstance(value, PolicySpec):
            return value
        value = str(value).strip()
        inner = value[1:-1] if value.startswith("(") and value.endswith(")") else value
        if "#" in inner:
            raise ValueError(f"policy {name!r}: parameter {key}={value}: a nested spec takes "
                             "no label ('#...')")
        inner = inner.strip()
        nested = inner.partition(":")[0].strip()
        if nested not in REGISTRY or nested == name:
            known = ", ".join(sorted(k for k in REGISTRY if k != name))
            raise ValueError(f"{name}: unknown {key} policy {inner!r}; use one of the "
                             f"built-in policies: {known}")
        return _parse_body(inner, "")
    if isinstance(value, PolicySpec) or "(" in str(value) or ")" in str(value):
        raise ValueError(f"policy {name!r}: parameter {key}={value}: only a nested spec "
                         f"({', '.join(info.nested) or 'none here'}) takes parentheses")
    if not isinstance(default, (int, float)):
        return str(value)
    try:
        if isinstance(value, bool):
            raise ValueError
        number = float(value)
        typed = type(default)(number)
    except (TypeError, ValueError):
        raise ValueError(f"policy {name!r}: parameter {key} needs a number, got {value!r}") from None
    if isinstance(default, int) and typed != number:
        raise ValueError(f"policy {name!r}: parameter {key} needs a whole number, got {value!r}")
    return typed


def policy_spec(name: str, label: str = "", **params) -> "PolicySpec":
    """A built-in policy's spec built as a value, with no text to parse:
    ``policy_spec("search", playouts=256, rollout=policy_spec("tickets", risk=0.2))``.
    The parameters are checked and typed as :func:`parse_spec` checks them (ValueError
    saying what is wrong); a nested one (a search's ``rollout``, ``lead``) takes a
    ``PolicySpec`` or a spec string."""
    if name not in REGISTRY:
        raise ValueError(f"unknown policy {name!r}; built-in policies: {', '.join(sorted(REGISTRY))}")
    return PolicySpec(name, {k: _param_value(name, k, v) for k, v in params.items()}, label)


def _top_level_items(rest: str, name: str) -> list[str]:
    """The parameters of a spec, split at the commas outside parentheses (those inside
    belong to a nested spec); unbalanced parentheses are refused."""
    items, depth, start = [], 0, 0
    for i, ch in enumerate(rest):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                break
        elif ch == "," and depth == 0:
            items.append(rest[start:i])
            start = i + 1
    if depth != 0:
        raise ValueError(f"policy {name!r}: unbalanced parentheses in {rest!r}; a nested spec "
                         "is written name=(policy:a=1,b=2)")
    items.append(rest[start:])
    return [s.strip() for s in items if s.strip()]


@functools.lru_cache(maxsize=None)
def _default_spec(text: str) -> "PolicySpec":
    """A nested parameter's default spec (e.g. the search's rollout), parsed once."""
    return parse_spec(text)


def _nested_text(spec: "PolicySpec") -> str:
    """A nested spec as it stands inside another: in parentheses when it has several
    parameters, so that its commas are not the outer spec's."""
    text = spec.text
    return f"({text})" if "," in text else text


def make_policy(spec, board) -> Policy:
    """A fresh ``Policy`` instance for one seat from a spec (see module docstring), or a
    ``PolicySpec``."""
    if isinstance(spec, Policy):
        return copy.copy(spec) if not isinstance(spec, PyPolicy) else spec
    if isinstance(spec, PolicySpec):
        return spec.build()
    if isinstance(spec, str):
        body, label = split_label(spec)
        ref = _python_ref(body)
        if ref is None:
            return _parse_body(body, label).build()
        target = _load_ref(body, *ref)
        if isinstance(target, type):
            try:
                target = target()
            except Exception as exc:
                raise ValueError(f"policy {spec!r}: {target.__name__}() failed: "
                                 f"{type(exc).__name__}: {exc}") from None
        try:
            guarded = _Guarded(target)
        except TypeError:
            raise ValueError(f"policy {spec!r} is not a policy: name a function "
                             "f(observation, legal_actions), or a class or object with a "
                             "choose(observation, legal_actions) method") from None
        guarded.name = _ref_name(ref, label)           # errors name it as results do
        return PyPolicy(guarded, board, spec=guarded.name)
    return PyPolicy(_Guarded(spec), board, spec=_python_name(spec))


def check_policy(spec, board=None) -> str:
    """Refuse an unknown policy or a bad parameter before any game (ValueError saying what
    is wrong) and return the name the spec goes by in results (:func:`policy_name`). It
    builds as little as it can: one instance of a built-in policy, for a search one of its
    rollout policy and one of its lead (not the nine it plays with); a Python policy is
    loaded and made as ``make_policy`` makes it."""
    if isinstance(spec, Policy):
        return spec.spec
    parsed = spec if isinstance(spec, PolicySpec) else None
    if isinstance(spec, str):
        body, label = split_label(spec)
        if _python_ref(body) is None:
            parsed = _parse_body(body, label)
    if parsed is None:
        return make_policy(spec, board).spec
    if parsed.name == "search":
        _check_search(parsed.values())
    else:
        parsed.build()
    return parsed.text


def _python_name(target) -> str:
    from ttrsim.actions import describe_policy

    return describe_policy(target)


class _Guarded:
    """Runs a Python policy for ``PyPolicy`` and turns an exception raised inside it into
    a ``PolicyError`` naming the policy, the seat, the turn and the legal actions (an
    illegal or malformed answer gets the same message from ``ttrsim.actions.check_choice``)."""

    def __init__(self, target):
        choose = getattr(target, "choose", None)
        if callable(choose):
            self._choose = choose
        elif callable(target):
            self._choose = target
        else:
            raise TypeError(f"{target!r} is not a policy: give a callable "
                            "f(observation, legal_actions) or an object with a choose() method")
        self.target = target
        self.name = _python_name(target)

    def start_game(self, seat, seed):
        start = getattr(self.target, "start_game", None)
        if callable(start):
            start(seat, seed)

    def choose(self, observation, legal_actions):
        try:
            return self._choose(observation, legal_actions)
        except PolicyError:
            raise
        except Exception as exc:
            raise PolicyError(
                f"policy {self.name!r} (seat {observation['seat']}, turn {observation['turn']}) "
                f"raised {exc!r}; legal actions: {_listing(legal_actions)}") from exc


def _listing(actions, limit: int = 20) -> str:
    text = "; ".join(f"{a.code}: {a}" for a in actions[:limit])
    return text + (f" (and {len(actions) - limit} more)" if len(actions) > limit else "")


def expert_models(specs) -> dict:
    """The ``expert`` model files a list of policy specs plays, as {path: the first 12
    hex digits of its SHA-256} ("missing" for a file that cannot be read): the shipped
    model for ``expert`` without ``model=`` and the models shipped beside it by name
    (each named by its place in the package, ``ttrsim/data/...``, the same on every
    machine), the named file otherwise (its absolute path), nested specs (a search's rollout and lead, given or by default)
    included. Empty when no spec plays ``expert``. A run's manifest carries it: the same
    spec plays other games with another model."""
    import hashlib
    from pathlib import Path

    from ttrsim._expert import SHIPPED_MODELS, model_file

    out = {}

    def visit(spec: str) -> None:
        try:
            parsed = parse_spec(spec)
        except ValueError:             # a Python policy, or a parameter that is no spec
            return
        if parsed.name == "expert":
            model = parsed.params.get("model")
            path = model_file(model)
            # a shipped model by its place in the package, the same on every machine
            key = (f"ttrsim/data/{Path(path).name}" if not model or model in SHIPPED_MODELS
                   else str(Path(path).resolve()))
            try:
                out[key] = hashlib.sha256(Path(path).read_bytes()).hexdigest()[:12]
            except OSError:
                out[key] = "missing"
        for value in parsed.values().values():     # nested specs: a search's rollout
            if isinstance(value, PolicySpec) or isinstance(value, str) and value:
                visit(value)

    for spec in specs:
        if isinstance(spec, (str, PolicySpec)):
            visit(spec)
    return out


def search_budgets(specs, before: bool = False) -> dict:
    """The playouts a decision of each ``search`` among ``specs`` that takes its budget from
    the default (no ``playouts``, or 0), as {spec: playouts}; ``before``: under the default
    of runs that did not record it (35 with ``expert`` rollouts until 2026-12-02, 60 since).
    A run's manifest carries it, so that a run saved under another default is not resumed
    with this one. Empty when no such search plays."""
    out = {}
    for spec in specs:
        if not isinstance(spec, (str, PolicySpec)):
            continue
        try:
            parsed = parse_spec(spec)
        except ValueError:             # a Python policy
            continue
        if parsed.name == "search" and not parsed.values().get("playouts"):
            n = search_budget(parsed.values()["rollout"])
            out[parsed.text] = _EXPERT_BUDGET_BEFORE if before and n == _EXPERT_BUDGET else n
    return out


def policy_name(spec, board=None) -> str:
    """The name a spec goes by in results: ``"tickets:risk=0.2"``, or a Python policy's
    name (its ``name`` attribute or its qualified name)."""
    if isinstance(spec, PolicySpec):
        return spec.text
    if isinstance(spec, str):
        body, label = split_label(spec)
        ref = _python_ref(body)
        return _ref_name(ref, label) if ref else _parse_body(body, label).text
    if isinstance(spec, Policy):
        return spec.spec
    from ttrsim.actions import describe_policy

    return describe_policy(spec)


def canonical_spec(name: str, params: dict) -> str:
    """``"name:a=1,b=2"``, parameters sorted; a nested spec in parentheses when it has
    several parameters (``search:rollout=(tickets:draw=10,risk=0.2)``)."""
    if not params:
        return name

    def text(v):
        return f"{v:g}" if isinstance(v, float) else _nested_text(v) if isinstance(v, PolicySpec) else f"{v}"
    return name + ":" + ",".join(f"{k}={text(params[k])}" for k in sorted(params))


def policy_table(width: int = 88) -> str:
    """Text table of the built-in policies and their parameters (``ttrsim policies``)."""
    import textwrap

    lines = []
    for name in sorted(REGISTRY):
        info = REGISTRY[name]
        title = f"{name} (default)" if name == DEFAULT_POLICY else name
        lines.append(title)
        lines += textwrap.wrap(info.doc, width, initial_indent="    ", subsequent_indent="    ")
        for key, (default, doc) in info.params.items():
            lines += textwrap.wrap(f"{key}={default}: {doc}", width, initial_indent="      ",
                                   subsequent_indent="        ")
    lines.append("")
    lines.append('Select one as "name" or "name:param=value,...", e.g. "tickets:stations=0,risk=0.2".')
    return "\n".join(lines)
