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
#: the hand-written candidate of an A/B run (``harness ab``), and an A/B parent's ranking and summary
CANDIDATE_SKILL = "skill/candidate/SKILL.md"
AB_RANKING = "ab/ranking.json"
AB_SUMMARY = "ab/summary.txt"
#: LM bookkeeping
PREFLIGHT = "lm/preflight.json"
LM_ERRORS = "lm/errors.json"
#: the traceback of a run that ended FAILED or KILLED
ERROR_TEXT = "error.txt"
#: a side-by-side parent's cross-grading matrix and its one-line-per-fitness summary
XGRADE_MATRIX = "xgrade/matrix.json"
XGRADE_SUMMARY = "xgrade/summary.txt"
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
TAG_RUN_KIND = "run.kind"
