"""Side-by-side experiments: parent/child structure, one shared baseline, the cross-grading matrix."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import mlflow
import pandas as pd
import pytest
from click.testing import CliRunner

import harness.run as run_module
from harness.cli import main
from harness.compare import parse_list, summary_lines, xgrade_matrix
from harness.config import ConfigError

REPO = Path(__file__).resolve().parents[1]
FAST = ["--task-model", "test/lessons", "--judge-model", "test/judge", "--num-cases", "40", "--budget", "30",
        "--quiet"]


def _children(parent_id: str) -> pd.DataFrame:
    return mlflow.search_runs(search_all_experiments=True,
                              filter_string=f"tags.mlflow.parentRunId = '{parent_id}'")


def test_compare_parent_children_matrix_and_shared_baseline(mlflow_store: str,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    variants: list[str] = []
    original = run_module.grade_variant

    def spy(body: str, variant: str, *args: object, **kwargs: object) -> object:
        variants.append(variant)
        return original(body, variant, *args, **kwargs)

    monkeypatch.setattr(run_module, "grade_variant", spy)
    result = CliRunner().invoke(main, ["compare", *FAST])
    assert result.exit_code == 0, result.output
    assert variants.count("baseline") == 1  # produced once for the whole experiment
    assert variants.count("none") == 1  # the no-skill control too, shared like the baseline
    assert variants.count("evolved") == 3

    runs = mlflow.search_runs(experiment_names=["skills/arxiv"])
    parent = runs[runs["tags.mlflow.parentRunId"].isna()]
    assert len(parent) == 1
    parent_id = parent.run_id.iloc[0]
    children = _children(parent_id)
    assert sorted(children["tags.fitness"]) == ["judge", "keyword", "verifier"]
    assert set(children.status) == {"FINISHED"}
    # the children share the dataset, splits and baseline
    assert children["params.dataset_digest"].nunique() == 1
    assert children["params.baseline_sha256"].nunique() == 1
    metrics = mlflow.get_run(parent_id).data.metrics
    for optimized_by in ("keyword", "judge", "verifier"):
        for graded_by in ("verifier", "keyword", "judge"):
            assert f"xgrade.{optimized_by}.{graded_by}.delta" in metrics
    client = mlflow.MlflowClient()
    assert {a.path for a in client.list_artifacts(parent_id, "xgrade")} >= {
        "xgrade/matrix.json", "xgrade/xgrade_heatmap.png", "xgrade/summary.txt"}
    png = mlflow.artifacts.download_artifacts(f"runs:/{parent_id}/xgrade/xgrade_heatmap.png")
    assert Path(png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # every child's table: task × variant × grader, with each grader's feedback
    child_id = children.run_id.iloc[0]
    mlflow.set_experiment("skills/arxiv")
    table = mlflow.load_table("holdout/holdout_table.json", run_ids=[child_id])
    assert set(table.grader) == {"verifier", "keyword", "judge"}
    assert set(table.variant) == {"baseline", "evolved", "none"}
    assert table.groupby(["task_id", "variant", "grader"]).size().max() == 1
    summary = mlflow.artifacts.load_text(f"runs:/{parent_id}/xgrade/summary.txt")
    assert "keyword-optimised: keyword " in summary and "verifier" in summary
    # the arms table gains the cost columns; the parent pools the agreement over its children
    arms = mlflow.load_table("xgrade/arms_table.json", run_ids=[parent_id])
    assert {"tokens", "wrong_to_right", "net_flips", "tokens_per_flip", "verified"} <= set(arms.columns)
    assert len(arms) == 3
    holdout = int(children["params.split.holdout"].iloc[0])
    assert metrics["agreement.pooled.judge.n_graded"] == 2 * holdout + 3 * holdout  # shared answers counted once
    assert "## Arms (side-by-side)" in mlflow.artifacts.load_text(f"runs:/{parent_id}/report.md")


def test_compare_under_mlflow_run_keeps_the_parent(mlflow_store: str, tmp_path: Path) -> None:
    env = dict(os.environ, MLFLOW_TRACKING_URI=mlflow_store,
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    for var in ("MLFLOW_RUN_ID", "MLFLOW_EXPERIMENT_ID", "MLFLOW_EXPERIMENT_NAME"):
        env.pop(var, None)
    params = ["skill=arxiv", "fitness=keyword,verifier", "task_model=test/lessons", "num_cases=20", "budget=20"]
    args = [sys.executable, "-m", "mlflow", "run", str(REPO), "-e", "compare", "--env-manager", "local",
            "--experiment-name", "skills/arxiv"]
    for p in params:
        args += ["-P", p]
    proc = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    runs = mlflow.search_runs(experiment_names=["skills/arxiv"])
    parents = runs[runs["tags.mlflow.parentRunId"].isna()]
    assert len(parents) == 1
    parent = mlflow.get_run(parents.run_id.iloc[0])
    assert parent.data.tags["mlflow.project.entryPoint"] == "compare"
    assert parent.info.status == "FINISHED"
    assert parent.data.tags["experiment.kind"] == "side-by-side"
    assert "holdout.verifier.evolved" not in parent.data.metrics  # no child wrote into the parent
    children = _children(parent.info.run_id)
    assert sorted(children["tags.fitness"]) == ["keyword", "verifier"]
    assert len(set(children.run_id) | {parent.info.run_id}) == 3


def test_parse_list() -> None:
    assert parse_list("all", ("keyword", "judge", "verifier", "auto"), "fitness",
                      ("keyword", "judge", "verifier")) == ["keyword", "judge", "verifier"]
    assert parse_list("verifier, keyword,verifier", ("keyword", "verifier"), "fitness", ()) == ["verifier", "keyword"]
    with pytest.raises(ConfigError, match="fitness='keyword,fuzzy'"):
        parse_list("keyword,fuzzy", ("keyword", "verifier"), "fitness", ())


def test_summary_lines_name_the_verifier_beside_each_fitness() -> None:
    matrix = pd.DataFrame({"verifier": [-0.08, 0.1], "keyword": [0.12, 0.0]}, index=["keyword", "verifier"])
    assert summary_lines(matrix) == ["keyword-optimised: keyword +0.120, verifier -0.080",
                                     "verifier-optimised: verifier +0.100"]


def test_xgrade_matrix_empty_without_results() -> None:
    assert xgrade_matrix([]).empty


def test_two_optimizers_side_by_side(mlflow_store: str) -> None:
    result = CliRunner().invoke(main, ["compare", "--fitness", "verifier", "--optimizers", "gepa,miprov2",
                                       "--task-model", "test/lessons", "--reflection-model", "test/proposer",
                                       "--judge-model", "test/judge", "--num-cases", "40", "--budget", "40",
                                       "--quiet"])
    assert result.exit_code == 0, result.output
    runs = mlflow.search_runs(experiment_names=["skills/arxiv"])
    parent_id = runs[runs["tags.mlflow.parentRunId"].isna()].run_id.iloc[0]
    children = _children(parent_id)
    assert sorted(children["tags.optimizer"]) == ["gepa", "miprov2"]
    metrics = mlflow.get_run(parent_id).data.metrics
    assert "xgrade.verifier.verifier.delta" in metrics            # the gepa arm
    assert "xgrade.verifier.miprov2.verifier.delta" in metrics    # the miprov2 arm, cross-graded the same way
    mipro = children[children["tags.optimizer"] == "miprov2"].iloc[0]
    assert "miprov2.best_val_score" in {k.removeprefix("metrics.") for k in mipro.index if k.startswith("metrics.")
                                        and mipro[k] == mipro[k]}


def test_children_as_parallel_processes(mlflow_store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["compare", "--fitness", "keyword,verifier", "--seeds", "2", "--parallel", "2",
                                       "--task-model", "test/lessons", "--judge-model", "test/judge",
                                       "--num-cases", "40", "--budget", "30", "--quiet"])
    assert result.exit_code == 0, result.output
    runs = mlflow.search_runs(experiment_names=["skills/arxiv"])
    parent_id = runs[runs["tags.mlflow.parentRunId"].isna()].run_id.iloc[0]
    children = _children(parent_id)
    assert len(children) == 4 and set(children.status) == {"FINISHED"}
    assert sorted(zip(children["tags.fitness"], children["params.seed"], strict=True)) == [
        ("keyword", "0"), ("keyword", "1"), ("verifier", "0"), ("verifier", "1")]
    parent = mlflow.get_run(parent_id)
    assert parent.data.tags["verdict.seeds.verifier"] in {"improved", "inconclusive", "regressed"}
    # issue 16: the per-seed statistics moved from seeds.<arm>.* metrics to the table stats/seeds.json
    assert "seeds/verifier/verdict" in parent.data.metrics and "seeds/verifier/mean_delta" in parent.data.metrics
    mlflow.set_experiment("skills/arxiv")
    seeds_table = mlflow.load_table("stats/seeds.json", run_ids=[parent_id])
    assert set(seeds_table.arm) == {"keyword", "verifier"} and set(seeds_table["verifier.seeds.n_seeds"]) <= {2.0}
    assert parent.data.tags["verdict"] == " · ".join(
        f"{arm}: {parent.data.tags[f'verdict.seeds.{arm}']}" for arm in ("keyword", "verifier"))
    assert parent.data.params["fitness"] == "keyword,verifier" and parent.data.params["seeds"] == "2"
    assert parent.data.tags["mlflow.note.content"].startswith("Compared 2 fitness arms (keyword, verifier) × 2 seeds")
    assert "xgrade.keyword.verifier.delta" in parent.data.metrics
    report = mlflow.artifacts.load_text(f"runs:/{parent_id}/claim_report_seeds.md")
    assert "| verifier | 2 |" in report
