"""The no-skill control, agreement, cost and the run report in real runs with the offline test LMs."""

from __future__ import annotations

from pathlib import Path

import mlflow
import pytest

from harness.cli import main
from harness.cli.console import Reporter
from harness.config import EvolveConfig
from harness.dryrun import expected_calls
from harness.run import evolve
from harness.tracking.tracker import MlflowTracker, NullTracker

QUIET = Reporter(quiet=True)


def _config(**kw: object) -> EvolveConfig:
    base = dict(task_model="test/lessons", num_cases=40, budget=20, seed=0)
    base.update(kw)
    return EvolveConfig(**base)  # type: ignore[arg-type]


def _cli(args: list[str]) -> int:
    try:
        main(args)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def test_control_run_logs_the_none_variant_agreement_cost_and_report(mlflow_store: str, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    config = _config(fitness="judge", judge_model="test/judge")
    with MlflowTracker(config.experiment_name()) as tracker:
        result = evolve(config, tracker, QUIET)
    holdout = len(result.splits.holdout)
    assert sum(r.variant == "none" for r in result.rows) == 3 * holdout  # graded by verifier, keyword, judge
    run = mlflow.get_run(result.run_id)
    m, tags = run.data.metrics, run.data.tags
    # test/lessons answers wrong without a lessons section: no skill and the baseline tie, the evolved skill wins
    assert m["holdout.verifier.none"] == pytest.approx(0.5)
    assert tags["verdict.control.baseline"] == "inconclusive" and tags["verdict.control.evolved"] == "improved"
    assert m["control.evolved.verifier.discordant_improved"] == holdout
    # test/judge calls an answer correct exactly when the ground truth is in it, as the verifier does here
    assert m["agreement.judge.n_scored"] == 3 * holdout and m["agreement.judge.kappa"] == pytest.approx(1.0)
    assert "agreement.keyword.kappa" in m
    assert m["flips.verifier.wrong_to_right"] == holdout and m["per_flip.lm_calls"] > 0
    claim = mlflow.artifacts.load_text(f"runs:/{result.run_id}/claim_report.md")
    assert "the evolved skill beats no skill" in claim and "the judge agreed with the verifier on" in claim
    report = mlflow.artifacts.load_text(f"runs:/{result.run_id}/report.md")
    assert "## Gates" in report and "Figures from offline test LMs" in report
    names = {a.path for a in mlflow.MlflowClient().list_artifacts(result.run_id, "agreement")}
    assert {"agreement/agreement.png", "agreement/agreement_table.json"} <= names

    md, page = tmp_path / "out" / "report.md", tmp_path / "report.html"
    assert _cli(["report", "--experiment", "skills/arxiv", "--out", str(md)]) == 0
    assert _cli(["report", "--experiment", "skills/arxiv", "--run", result.run_id, "--out", str(page),
                 "--format", "html"]) == 0
    text = md.read_text(encoding="utf-8")
    assert f"Run `{result.run_id}`" in text and "| judge | " in text and "no skill composite" in text
    assert "data:image/png;base64," in page.read_text(encoding="utf-8")
    assert f"report of run {result.run_id} (md)" in capsys.readouterr().out


def test_report_cli_errors_are_one_line(mlflow_store: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _cli(["report", "--experiment", "skills/none-such", "--out", str(tmp_path / "r.md")]) == 2
    assert "unknown experiment 'skills/none-such'" in capsys.readouterr().err
    mlflow.MlflowClient().create_experiment("skills/empty")
    assert _cli(["report", "--experiment", "skills/empty", "--out", str(tmp_path / "r.md")]) == 2
    assert "no top-level run" in capsys.readouterr().err


def test_no_control_grades_no_none_variant() -> None:
    result = evolve(_config(control=False), NullTracker(), QUIET)
    assert {r.variant for r in result.rows} == {"baseline", "evolved"}
    assert result.evidence is not None and result.evidence.control == []
    assert "--no-control" in result.evidence.markdown()
    assert not any(k.startswith("control.") for k in result.metrics)


def test_no_control_cli_option_and_mlflow_spelling() -> None:
    from harness.cli.options import make_config

    base = {"skill": "arxiv", "fitness": "verifier"}
    assert make_config(0, {**base, "control": True, "no_control": False}).control is True
    assert make_config(0, {**base, "control": True, "no_control": True}).control is False
    assert make_config(0, {**base, "control": False, "no_control": False}).control is False
    mlproject = (Path(__file__).parents[1] / "MLproject").read_text(encoding="utf-8")
    assert mlproject.count("--control {control}") == 2 and 'control: {type: string, default: "true"}' in mlproject


def test_dry_run_counts_the_control_calls() -> None:
    on, off = EvolveConfig(budget=60), EvolveConfig(budget=60, control=False)
    with_control = expected_calls(on, holdout=16, valset=16, arms=3, judge=True)
    without = expected_calls(off, holdout=16, valset=16, arms=3, judge=True)
    assert with_control["task"] - without["task"] == 16  # once per experiment, not per arm
    assert with_control["judge"] - without["judge"] == 16


def test_dry_run_bound_holds_with_the_control() -> None:
    config = _config(budget=10, num_cases=12)
    result = evolve(config, NullTracker(), QUIET)
    bound = expected_calls(config, len(result.splits.holdout), len(result.splits.valset), 1, judge=False)["task"]
    assert result.metrics["lm_calls.task"] <= bound
