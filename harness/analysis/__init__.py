"""Statistics over graded holdouts: paired tests and verdicts, the claim report, plots (no MLflow, no LM)."""
