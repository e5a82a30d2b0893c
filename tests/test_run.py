"""The engine end to end with offline test LMs, with and without a tracking store."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import mlflow
import pytest

from harness.cli.console import Reporter
from harness.config import EvolveConfig
from harness.run import evolve
from harness.skills.files import bundled_skills_dir
from harness.tracking.tracker import MlflowTracker, NullTracker

QUIET = Reporter(quiet=True)


def _config(**kw: object) -> EvolveConfig:
    base = dict(task_model="test/lessons", num_cases=20, budget=30, seed=0)
    base.update(kw)
    return EvolveConfig(**base)  # type: ignore[arg-type]


def test_engine_runs_without_a_store_and_evolves_the_skill() -> None:
    baseline = (bundled_skills_dir() / "arxiv" / "SKILL.md").read_bytes()
    result = evolve(_config(), NullTracker(), QUIET)
    assert result.gate.passed
    assert result.evolved_text != result.skill.text
    assert result.evolved_text.startswith(result.skill.frontmatter_text)  # frontmatter kept byte for byte
    # test/lessons answers right only with a lessons section, which the feedback proposer adds
    assert result.metrics["holdout.verifier.baseline"] == pytest.approx(0.5)
    assert result.metrics["holdout.verifier.evolved"] == pytest.approx(1.0)
    assert result.metrics["holdout.verifier.delta"] == pytest.approx(0.5)
    assert result.metrics["holdout.verifier.evolved.correct_share"] == 1.0
    assert {r.grader for r in result.rows} == {"verifier", "keyword"}
    assert len(result.rows) == 2 * 3 * len(result.splits.holdout)  # baseline, evolved, no-skill control
    assert (bundled_skills_dir() / "arxiv" / "SKILL.md").read_bytes() == baseline  # never overwritten


def test_run_logs_params_metrics_artifacts_and_datasets(mlflow_store: str) -> None:
    config = _config(num_cases=40)  # 10+ holdout pairs: enough for an exact test to reach p < 0.05
    with MlflowTracker(config.experiment_name()) as tracker:
        result = evolve(config, tracker, QUIET)
    run = mlflow.get_run(result.run_id)
    assert run.info.status == "FINISHED"
    assert mlflow.get_experiment(run.info.experiment_id).name == "skills/arxiv"
    params = run.data.params
    for key in ("skill", "fitness", "optimizer", "budget", "num_cases", "seed", "task_model", "reflection_model",
                "skills_dir", "skill_path", "baseline_sha256", "dataset_digest", "split.trainset", "split.valset",
                "split.holdout"):
        assert key in params, key
    assert params["baseline_sha256"] == result.skill.sha256
    assert params["dataset_digest"] == result.splits.digest()
    assert all(len(v) <= 500 for v in params.values())
    metrics = run.data.metrics
    for key in ("holdout.verifier.baseline", "holdout.verifier.evolved", "holdout.verifier.delta",
                "holdout.keyword.delta", "lm_calls.task", "wall_time_s", "verdict/score", "verifier/baseline",
                "verifier/evolved", "verifier/delta", "verifier/flipped_up", "verifier/flipped_down", "keyword/delta"):
        assert key in metrics, key
    # the long tail is a table, not metric columns (issue 16; migrated from the metrics holdout.*.correct_share
    # and stats.*)
    assert not any(k.startswith("stats.") or (k.startswith("holdout.") and k.endswith((".correct_share", ".unscored")))
                   for k in metrics)
    assert metrics["verdict/score"] == 1.0 and metrics["verifier/flipped_down"] == 0
    assert metrics["verifier/delta"] == pytest.approx(metrics["holdout.verifier.delta"])
    history = mlflow.MlflowClient().get_metric_history(result.run_id, "gepa.best_val_score")
    assert [m.step for m in history][0] == 0 and len(history) >= 2
    artifacts = {a.path for a in mlflow.MlflowClient().list_artifacts(result.run_id, "skill")}
    assert {"skill/baseline", "skill/evolved", "skill/diff.patch"} <= artifacts
    diff = mlflow.artifacts.load_text(f"runs:/{result.run_id}/skill/diff.patch")
    assert diff.startswith("--- a/SKILL.md") and "+## Lessons from graded answers" in diff
    mlflow.set_experiment("skills/arxiv")
    table = mlflow.load_table("holdout/holdout_table.json", run_ids=[result.run_id])
    assert set(table.columns) >= {"task_id", "kind", "paper_id", "variant", "grader", "output", "correctness",
                                  "well_formed", "conciseness", "composite", "feedback"}
    assert len(table) == len(result.rows)
    contexts = {t.value for i in run.inputs.dataset_inputs for t in i.tags if t.key == "mlflow.data.context"}
    assert {"holdout", "trainset", "valset"} <= contexts
    assert run.data.tags["verdict"] == "improved"  # test/lessons is a mechanical stand-in, not a finding
    report = mlflow.artifacts.load_text(f"runs:/{result.run_id}/claim_report.md")
    assert "improved" in report and "holdout/holdout_table.json" in report
    stats = mlflow.load_table("stats/statistics.json", run_ids=[result.run_id])
    assert set(stats.grader) == {"verifier", "keyword"}
    assert {"wilcoxon_p", "mcnemar_p", "evolved.correct_share", "baseline.unscored", "verdict"} <= set(stats.columns)
    # the description: verdict, baseline -> evolved with flips, where the evidence is
    note = run.data.tags["mlflow.note.content"]
    assert note.startswith("**improved** (verifier grader)")
    assert "verifier 0.500 → 1.000" in note and "flipped to correct" in note and "claim_report.md" in note
    # per-task pivot, previews of the diff and the skill files
    pivot = mlflow.load_table("holdout/per_task.json", run_ids=[result.run_id])
    assert {"task_id", "baseline answer", "baseline verifier", "evolved answer", "evolved verifier",
            "flipped"} <= set(pivot.columns)
    assert (pivot.flipped == "↑ now correct").sum() == metrics["verifier/flipped_up"] > 0
    assert mlflow.artifacts.load_text(f"runs:/{result.run_id}/skill/diff.md").count("```diff") == 1
    preview = mlflow.artifacts.load_text(f"runs:/{result.run_id}/skill/evolved/preview.md")
    assert "```yaml\nname: arxiv" in preview and preview.count("\n---") == 0
    # one evaluation run per variant, holding its traces, in <experiment>/holdout
    for variant in ("baseline", "evolved"):
        eval_run = mlflow.get_run(run.data.tags[f"holdout.{variant}.run_id"])
        assert mlflow.get_experiment(eval_run.info.experiment_id).name == "skills/arxiv/holdout"
        assert eval_run.data.tags["holdout.evaluation_of"] == result.run_id
        assert eval_run.info.run_name.startswith(f"{variant} · ")
        assert eval_run.data.metrics["verifier/scored"] == len(result.splits.holdout)
        traces = mlflow.search_traces(locations=[eval_run.info.experiment_id], run_id=eval_run.info.run_id,
                                      return_type="list")
        assert len(traces) == len(result.splits.holdout)
        assert {t.info.tags["variant"] for t in traces} == {variant}


def test_long_param_goes_to_an_artifact(mlflow_store: str) -> None:
    with MlflowTracker("skills/x") as tracker:
        tracker.log_params({"short": "a", "long": "x" * 11_000})
    run = mlflow.get_run(tracker.run_id)
    assert run.data.params["short"] == "a"
    assert "artifact" in run.data.params["long"]
    assert mlflow.artifacts.load_text(f"runs:/{tracker.run_id}/params/long.txt") == "x" * 11_000


def test_exception_ends_run_failed_with_error_artifact(mlflow_store: str,
                                                     break_optimizer: Callable[[BaseException], None]) -> None:
    break_optimizer(RuntimeError("optimizer exploded"))
    config = _config()
    with pytest.raises(RuntimeError), MlflowTracker(config.experiment_name()) as tracker:
        evolve(config, tracker, QUIET)
    run = mlflow.get_run(tracker.run_id)
    assert run.info.status == "FAILED"
    assert "optimizer exploded" in mlflow.artifacts.load_text(f"runs:/{tracker.run_id}/error.txt")
    assert "dataset_digest" in run.data.params  # what was logged before the failure stays


def test_interrupt_ends_run_killed_keeping_what_was_logged(mlflow_store: str,
                                                           break_optimizer: Callable[[BaseException], None]) -> None:
    break_optimizer(KeyboardInterrupt())
    config = _config()
    with pytest.raises(KeyboardInterrupt), MlflowTracker(config.experiment_name()) as tracker:
        evolve(config, tracker, QUIET)
    run = mlflow.get_run(tracker.run_id)
    assert run.info.status == "KILLED"
    names = {a.path for a in mlflow.MlflowClient().list_artifacts(tracker.run_id)}
    assert {"dataset", "skill"} <= names


def test_temporary_run_folder_is_removed_after_success_and_kept_after_a_fault(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, break_optimizer: Callable[[BaseException], None]) -> None:
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    evolve(_config(), NullTracker(), QUIET)
    assert not list(tmp_path.glob("harness-run-*"))  # everything in it was logged

    break_optimizer(RuntimeError("optimizer fault"))
    with pytest.raises(RuntimeError, match="optimizer fault"):
        evolve(_config(), NullTracker(), QUIET)
    kept = list(tmp_path.glob("harness-run-*"))
    assert len(kept) == 1 and (kept[0] / "dataset" / "holdout.jsonl").is_file()


def test_output_dir_receives_run_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    evolve(_config(output_dir=str(out)), NullTracker(), QUIET)
    assert (out / "SKILL.evolved.verifier.md").is_file()
    assert sorted(p.name for p in (out / "dataset").iterdir()) == ["holdout.jsonl", "trainset.jsonl", "valset.jsonl"]
    assert (out / "holdout_table.verifier.csv").is_file()


def test_unchanged_candidate_is_the_baseline_byte_for_byte(tmp_path: Path) -> None:
    from harness.run import evolved_skill_text
    from harness.skills.files import parse_skill

    text = "---\nname: notes\ndescription: Take notes.\n---\n\n# Notes\n\nWrite short notes.\n\n"
    skill = parse_skill(text, tmp_path / "SKILL.md")
    assert evolved_skill_text(skill, skill.body.strip()) == text  # DSPy strips instructions; still the baseline
    changed = evolved_skill_text(skill, "# Notes\n\nWrite short, dated notes.")
    assert changed == "---\nname: notes\ndescription: Take notes.\n---\n# Notes\n\nWrite short, dated notes.\n\n"


def test_run_that_changes_nothing_registers_no_version(mlflow_store: str) -> None:
    from harness.tracking.prompts import skill_versions

    config = _config(task_model="test/oracle", num_cases=12, budget=10)  # always right: nothing to learn
    with MlflowTracker(config.experiment_name()) as tracker:
        result = evolve(config, tracker, QUIET)
    assert result.evolved_text == result.skill.text
    client = mlflow.MlflowClient()
    assert mlflow.artifacts.load_text(f"runs:/{tracker.run_id}/skill/diff.patch") == "(no change)\n"
    assert "registry.version" not in client.get_run(tracker.run_id).data.tags
    assert skill_versions("arxiv").empty


def test_a_cached_rerun_copies_its_plots_instead_of_drawing_them(mlflow_store: str, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import dspy

    from harness.analysis import plots
    from harness.models.lm import configure_cache

    monkeypatch.setattr(dspy, "cache", dspy.cache)  # restored after the test: the session's cache
    configure_cache(tmp_path / "dspy-cache")  # empty: the first run answers and draws everything
    drawn, original = tmp_path / "drawn.log", plots.holdout_per_task_png

    def counted(table: object, path: Path, grader: str = "verifier") -> Path:  # inherited by the plot process
        with open(drawn, "a") as handle:
            handle.write(f"{grader}\n")
        return original(table, path, grader=grader)  # type: ignore[arg-type]

    monkeypatch.setattr(plots, "holdout_per_task_png", counted)
    for attempt in ("first", "rerun"):
        config = _config(output_dir=str(tmp_path / attempt))
        with MlflowTracker(config.experiment_name()) as tracker:
            result = evolve(config, tracker, QUIET)
        logged = {a.path for a in mlflow.MlflowClient().list_artifacts(result.run_id, "plots")}
        assert {"plots/holdout_keyword.png", "plots/holdout_verifier.png", "plots/optimisation_curve.png"} <= logged
    assert drawn.read_text().splitlines() == ["keyword", "verifier"]  # by the first run only
    for name in ("holdout_keyword.png", "holdout_verifier.png", "optimisation_curve.png"):
        first, rerun = (tmp_path / attempt / "plots-verifier" / name for attempt in ("first", "rerun"))
        assert rerun.read_bytes() == first.read_bytes()
