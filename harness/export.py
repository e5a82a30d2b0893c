"""The export to pandas, where the README has always shown it; it lives in :mod:`harness.tracking.export`."""

from harness.tracking.export import holdout_pivot, holdout_table, run_summary, unquote_param, write_table

__all__ = ["holdout_pivot", "holdout_table", "run_summary", "unquote_param", "write_table"]
