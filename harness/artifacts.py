"""Where a run's files go (artifact paths) and the tag keys the harness sets: one place, so the engine, the
tracking package, the export and the reports agree on every name (standard library only)."""

from __future__ import annotations

#: the per-task holdout table (one row per task x variant x grader), an ``MlflowClient.log_table`` artifact
HOLDOUT_TABLE = "holdout/holdout_table.json"
#: a side-by-side parent's table of the shared baseline's holdout rows
BASELINE_TABLE = "holdout/baseline_table.json"
#: the claim a run makes, with the tests behind its verdict
CLAIM_REPORT = "claim_report.md"
#: a side-by-side parent's report across seeds
SEEDS_REPORT = "claim_report_seeds.md"
#: the skill files of a run
BASELINE_SKILL = "skill/baseline/SKILL.md"
EVOLVED_SKILL = "skill/evolved/SKILL.md"
REJECTED_SKILL = "skill/rejected/SKILL.md"
REJECTED_REASONS = "skill/rejected/reasons.txt"
SKILL_DIFF = "skill/diff.patch"
#: LM bookkeeping
PREFLIGHT = "lm/preflight.json"
LM_ERRORS = "lm/errors.json"
#: the traceback of a run that ended FAILED or KILLED
ERROR_TEXT = "error.txt"
#: a side-by-side parent's cross-grading matrix and its one-line-per-fitness summary
XGRADE_MATRIX = "xgrade/matrix.json"
XGRADE_SUMMARY = "xgrade/summary.txt"
#: the run report (``harness report`` writes the same), per-gate statuses, grader agreement, a parent's arms
RUN_REPORT = "report.md"
GATES_JSON = "skill/gates.json"
AGREEMENT_TABLE = "agreement/agreement_table.json"
AGREEMENT_DIR = "agreement"
ARMS_TABLE = "xgrade/arms_table.json"
#: folders
DATASET_DIR = "dataset"
PLOTS_DIR = "plots"

#: tag keys
TAG_VERDICT = "verdict"
TAG_GATES = "gates"
TAG_OUTCOME = "run.outcome"
TAG_ERROR = "run.error"
TAG_REGISTRY_VERSION = "registry.version"
TAG_REGISTRY_NOTE = "registry.note"
