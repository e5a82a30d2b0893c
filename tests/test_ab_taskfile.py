"""``harness ab`` on a task-file skill (``unit-date-math``: ``evals/tasks.jsonl`` with declarative checks).

The arxiv tests (tests/test_ab.py) exercise a registered verifier; these run the same command end to end on a
skill whose only verifier is its task file, with the offline test LMs: ``test/lessons`` answers right only under
a skill with the lessons heading (so a candidate that adds it must come out ahead), ``test/oracle`` answers every
task right whatever the skill says (so two skills must tie exactly).  The figures check the machinery, not any
model.
"""

from __future__ import annotations

import json
from pathlib import Path

import mlflow
import pandas as pd
import pytest
from click.testing import CliRunner

from harness.cli import main
from harness.config import LESSONS_HEADING
from harness.skills.files import find_skill

SKILL = "unit-date-math"
BASELINE = find_skill(SKILL)
TASKS = BASELINE.path.parent / "evals" / "tasks.jsonl"
#: the hand-written candidate shipped beside the skill (a clearer answer-format section)
SHIPPED = BASELINE.path.parent / "variants" / "answer-format.md"
FAST = ["--skill", SKILL, "--judge-model", "", "--num-cases", "12", "--quiet"]


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["ab", *args])
    return result.exit_code, result.output


def _only_run() -> mlflow.entities.Run:
    runs = mlflow.search_runs(experiment_names=[f"skills/{SKILL}"])
    assert len(runs) == 1, runs
    return mlflow.get_run(runs.run_id.iloc[0])


def _table(run_id: str, artifact_file: str = "holdout/holdout_table.json") -> pd.DataFrame:
    mlflow.set_experiment(f"skills/{SKILL}")
    return mlflow.load_table(artifact_file, run_ids=[run_id])


def test_a_better_candidate_wins_on_the_task_files_checks(mlflow_store: str, tmp_path: Path) -> None:
    body = BASELINE.body.rstrip() + f"\n\n{LESSONS_HEADING}\n- Give only the final result.\n"
    candidate = _write(tmp_path / "lessons.md", BASELINE.with_body(body))
    code, out = _invoke("--candidate", str(candidate), "--task-model", "test/lessons", *FAST)
    assert code == 0, out
    run = _only_run()
    tags, metrics, params = run.data.tags, run.data.metrics, run.data.params
    assert tags["run.kind"] == "ab" and tags["mlflow.runName"] == f"{tags['verdict']} · {SKILL}-ab-lessons"
    assert tags["tasks.source"] == "tasks-file" and params["tasks_path"] == str(TASKS.resolve())
    assert metrics["holdout.verifier.baseline"] == pytest.approx(0.5)  # test/lessons: confidently wrong ...
    assert metrics["holdout.verifier.evolved"] == pytest.approx(1.0)   # ... and right under the lessons
    assert metrics["holdout.verifier.delta"] == pytest.approx(0.5)
    assert "holdout.keyword.delta" in metrics and not any(k.startswith("stats.") for k in metrics)
    stats = _table(run.info.run_id, "stats/statistics.json").set_index("grader")
    assert 0.0 < stats.loc["verifier", "wilcoxon_p"] <= 1.0  # the long tail lives in the statistics table
    assert tags["verdict"] in ("improved", "inconclusive")  # 3 holdout tasks: significance is not expected
    table = _table(run.info.run_id)
    ids = {json.loads(line)["id"] for line in TASKS.read_text(encoding="utf-8").splitlines() if line.strip()}
    assert set(table.task_id) <= ids and table.task_id.nunique() == int(params["ab.tasks"]) == 3
    assert set(table.variant) == {"baseline", "evolved"} and set(table.grader) == {"verifier", "keyword"}
    claim = mlflow.artifacts.load_text(f"runs:/{run.info.run_id}/claim_report.md")
    assert claim.startswith("> **A/B comparison (`harness ab`), not an evolution run**")
    assert str(candidate.resolve()) in claim and f"# Claim: {SKILL}" in claim
    assert tags["mlflow.note.content"].startswith("A/B comparison (no optimizer) of the candidate `lessons.md`")
    assert "verifier" in tags["mlflow.note.content"] and metrics["verifier/delta"] == pytest.approx(0.5)
    per_task = mlflow.load_table("holdout/per_task.json", run_ids=[run.info.run_id])
    assert set(per_task.flipped) == {"↑ now correct"} and len(per_task) == 3  # as an evolution run's table


def test_the_shipped_candidate_runs_and_ties_under_an_oracle(mlflow_store: str) -> None:
    code, out = _invoke("--candidate", str(SHIPPED), "--task-model", "test/oracle", "--split", "all", *FAST)
    assert code == 0, out
    run = _only_run()
    metrics = run.data.metrics
    assert run.data.params["ab.tasks"] == "12"  # --split all: every task of the 12-task dataset
    for grader in ("verifier", "keyword"):  # the oracle ignores the skill: the two versions tie on every task
        assert metrics[f"holdout.{grader}.delta"] == 0.0, grader
    assert metrics["holdout.verifier.baseline"] == pytest.approx(1.0)
    assert run.data.tags["verdict"] != "improved" and run.data.tags["ab.candidate"] == "answer-format"


@pytest.mark.parametrize("case, needles", [
    ("missing", ["nope.md: file not found"]),
    ("frontmatter", ["frontmatter differs from the baseline's", "+description: Something else."]),
    ("gates", ["fails the gates", "heading '## How to answer' of the baseline is missing"]),
])
def test_errors_on_a_task_file_skill_are_clear_and_exit_2(case: str, needles: list[str], tmp_path: Path) -> None:
    files = {"frontmatter": BASELINE.frontmatter_text.replace(BASELINE.description, "Something else.")
             + BASELINE.body,
             "gates": BASELINE.text.replace("## How to answer", "## Answering")}
    path = _write(tmp_path / f"{case}.md", files[case]) if case in files else tmp_path / "nope.md"
    code, out = _invoke("--skill", SKILL, "--candidate", str(path), "--task-model", "test/oracle")
    assert code == 2, out
    assert out.startswith("Error: ") and "Traceback" not in out
    for needle in needles:
        assert needle in out, out
