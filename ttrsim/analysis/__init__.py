"""Analysis of simulation results: tidy tables with confidence intervals.

Every function takes a run (per-event or summary mode, see ``docs/tables.md``) or the
DataFrame(s) it needs, and returns a tidy DataFrame. Rates carry Wilson score intervals,
means of per-event tables percentile-bootstrap intervals and means of summary tables
normal intervals, as columns ``<name>_low`` and ``<name>_high`` (default confidence 0.95).
See ``docs/analysis.md`` for a guide.

``ttrsim.analysis.studies`` (re-exported here) plays new games on common random numbers:
``compare``, ``route_importance``, ``ticket_fairness``; ``compare_play``,
``compare_importance``, ``compare_fairness`` and ``compare_variant`` set a run or study
beside the same games under stronger play; ``league`` plays every policy against every
other and rates them. ``profile`` is a run's game profile (how its
seats play and score, per policy and for the winners); ``compare_profiles`` sets several
runs' profiles, and people's figures (``read_people``), side by side with the differences.
"""
from ttrsim.analysis.game_profile import Profile, profile
from ttrsim.analysis.profile_comparison import ProfileComparison, compare_profiles, read_people
from ttrsim.analysis.inputs import MissingTable
from ttrsim.analysis.routes import binned_quantile, route_claims
from ttrsim.analysis.seats import (bonus_shares, by_player_count, policy_win_matrix,
                                   score_distribution, seat_advantage)
from ttrsim.analysis.stations import station_usage, station_value
from ttrsim.stats import (
    Estimate,
    bootstrap_diff,
    bootstrap_mean,
    bootstrap_ratio,
    normal_mean_interval,
    wilson_interval,
)
from ttrsim.analysis.tickets import ticket_balance, ticket_completion
from ttrsim.analysis.tunnels import parse_counts, tunnel_extra_distribution, tunnel_odds, tunnel_outcomes
# The studies (which play games and load the runner) are imported on first use, so that
# the tables of a finished run and commands such as tunnel-odds start quickly.
# Every name of ttrsim.analysis.studies (tests/test_namespace.py holds them equal).
_STUDIES = ('Comparison', 'Fairness', 'League', 'PlayComparison', 'RouteImportance',
            'StudyComparison', 'check_same_games', 'compare', 'compare_fairness',
            'compare_importance', 'compare_play', 'compare_variant', 'league', 'load_league',
            'route_importance', 'ticket_difficulty', 'ticket_fairness')

__all__ = [
    "Comparison",
    "Fairness",
    "League",
    "check_same_games",
    "league",
    "load_league",
    "PlayComparison",
    "RouteImportance",
    "StudyComparison",
    "compare",
    "compare_fairness",
    "compare_importance",
    "compare_play",
    "compare_variant",
    "route_importance",
    "ticket_difficulty",
    "ticket_fairness",
    "Estimate",
    "MissingTable",
    "Profile",
    "profile",
    "ProfileComparison",
    "compare_profiles",
    "read_people",
    "binned_quantile",
    "bootstrap_diff",
    "bootstrap_mean",
    "bootstrap_ratio",
    "bonus_shares",
    "by_player_count",
    "normal_mean_interval",
    "parse_counts",
    "policy_win_matrix",
    "route_claims",
    "score_distribution",
    "seat_advantage",
    "station_usage",
    "station_value",
    "ticket_balance",
    "ticket_completion",
    "tunnel_extra_distribution",
    "tunnel_odds",
    "tunnel_outcomes",
    "wilson_interval",
]


def __getattr__(name: str):
    if name in _STUDIES:
        from ttrsim.analysis import studies

        value = getattr(studies, name)
        globals()[name] = value
        return value
    if name == "studies":
        from importlib import import_module

        return import_module("ttrsim.analysis.studies")
    raise AttributeError(f"module 'ttrsim.analysis' has no attribute {name!r}")


def __dir__() -> list:
    return sorted(set(globals()) | set(__all__) | {"studies"})
