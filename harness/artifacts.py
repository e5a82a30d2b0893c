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
#: a side-by-side parent's per-arm statistics across seeds (the long tail, instead of metric columns)
SEEDS_TABLE = "stats/seeds.json"
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
#: markdown copies the artifact viewer previews (it shows no ``.patch``; a bare frontmatter renders as a heading)
SKILL_DIFF_PREVIEW = "skill/diff.md"
BASELINE_SKILL_PREVIEW = "skill/baseline/preview.md"
EVOLVED_SKILL_PREVIEW = "skill/evolved/preview.md"
CANDIDATE_SKILL_PREVIEW = "skill/candidate/preview.md"
#: one row per holdout task: each variant's answer and grades side by side, and the flip
PER_TASK_TABLE = "holdout/per_task.json"
#: the long tail of statistics (one row per grader), instead of dozens of metric columns
STATS_TABLE = "stats/statistics.json"
#: the holdout evaluation runs (one per variant, holding its traces) live in experiment ``<experiment>/holdout``
HOLDOUT_EXPERIMENT_SUFFIX = "/holdout"
#: LM bookkeeping
PREFLIGHT = "lm/preflight.json"
LM_ERRORS = "lm/errors.json"
#: the traceback of a run that ended FAILED or KILLED
ERROR_TEXT = "error.txt"
#: a side-by-side parent's cross-grading matrix and its one-line-per-fitness summary
XGRADE_MATRIX = "xgrade/matrix.json"
XGRADE_SUMMARY = "xgrade/summary.txt"
XGRADE_HEATMAP = "xgrade/xgrade_heatmap.png"
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
TAG_RUN_KIND = "run.kind"
#: MLflow shows this tag as the run's description
TAG_DESCRIPTION = "mlflow.note.content"
#: on a holdout evaluation run: the run it belongs to; on that run: ``holdout.<variant>.run_id``
TAG_EVALUATION_OF = "holdout.evaluation_of"
