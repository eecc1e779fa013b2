"""HTML reports: of a run (``write_report``) and of the paired studies.

Every report is a page of the kit in ``ttrsim.report.html`` (public, for scripts that
write pages of their own): a self-contained ``index.html`` plus each figure as PNG and
each table as CSV beside it.
"""
from ttrsim.report.league import write_league_report
from ttrsim.report.run import SECTIONS, write_report
from ttrsim.report.studies import (write_comparison_report, write_fairness_report,
                                   write_route_importance_report)

__all__ = ["write_report", "write_comparison_report", "write_route_importance_report",
           "write_fairness_report", "write_league_report", "SECTIONS"]
