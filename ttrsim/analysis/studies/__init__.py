"""Studies that play new games on common random numbers.

``compare`` (a board against a variant), ``route_importance`` (each route removed in
turn) and ``ticket_fairness`` (fairer ticket points) play the same seeds on both sides and
share the paired machinery of ``paired``; ``compare_play`` applies it to two finished runs
of the same games under different policies (a run's headline measures under stronger
play), ``compare_importance``, ``compare_fairness`` and ``compare_variant`` set the other
studies likewise beside themselves under stronger play (modules ``stronger_run`` and
``stronger_studies``; the verdicts both read their rows by are in ``verdicts``). Each
returns a result object with its manifest; ``league`` plays every policy against every
other and rates them. Figures are in ``ttrsim.plots``, HTML reports in ``ttrsim.report``.
"""
from ttrsim.analysis.studies.comparison import Comparison, compare
from ttrsim.analysis.studies.fairness import Fairness, ticket_difficulty, ticket_fairness
from ttrsim.analysis.studies.leagues import League, league, load_league
from ttrsim.analysis.studies.importance import RouteImportance, route_importance
from ttrsim.analysis.studies.stronger_run import PlayComparison, check_same_games, compare_play
from ttrsim.analysis.studies.stronger_studies import (StudyComparison, compare_fairness,
                                                      compare_importance, compare_variant)

__all__ = ["Comparison", "compare", "Fairness", "ticket_fairness", "ticket_difficulty",
           "RouteImportance", "route_importance", "PlayComparison", "compare_play",
           "check_same_games", "StudyComparison", "compare_importance", "compare_fairness",
           "compare_variant", "League", "league", "load_league"]
