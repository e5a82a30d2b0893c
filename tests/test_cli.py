"""The CLI: options map to the config, user errors are one line with exit code 2 and leave no run behind."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import mlflow
import pytest
from click.testing import CliRunner

from harness.cli import main

NOTES_SKILL = "---\nname: notes\ndescription: Take notes.\n---\n# Notes\n\nWrite short notes.\n"


@pytest.fixture
def notes_dir(tmp_path: Path) -> Path:
    skill = tmp_path / "skills" / "notes"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(NOTES_SKILL, encoding="utf-8")
    return tmp_path / "skills"


def _invoke(args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(main, args)
    return result.exit_code, result.output


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--fitness", "fuzzy"], "invalid fitness='fuzzy'"),
        (["--optimizer", "adam"], "Invalid value for '--optimizer': 'adam'"),
        (["--num-cases", "2"], "num_cases=2"),
        (["--num-cases", "69"], "num_cases=69 is above the 68 tasks"),
        (["--budget", "0"], "budget=0"),
        (["--budget", "1.5"], "not a whole number"),
        (["--skill", "../../etc"], "invalid skill name"),
        (["--skill", "a/b"], "invalid skill name"),
        (["--skill", "nosuch"], "not found"),
        (["--proposer", "llm"], "reflection model"),
        (["--output-dir", "/proc/nope/x"], "not writable"),
    ],
)
def test_user_errors_are_one_line_exit_2(args: list[str], needle: str, mlflow_store: str) -> None:
    code, output = _invoke(["evolve", "--task-model", "test/oracle", *args])
    assert code == 2, output
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), output  # checked before any store is touched
    assert needle in lines[0]
    assert "Traceback" not in output
    assert mlflow.search_runs(search_all_experiments=True).empty  # no half-created run


def test_verifier_fitness_for_skill_without_verifier(notes_dir: Path, mlflow_store: str) -> None:
    code, output = _invoke(["evolve", "--skills-dir", str(notes_dir), "--skill", "notes", "--fitness", "verifier"])
    assert code == 2
    assert "no dataset for skill 'notes'" in output and "no verifier is registered for it" in output
    assert "evals/tasks.jsonl" in output  # names the task-file way out
    assert mlflow.search_runs(search_all_experiments=True).empty


def test_keyword_fitness_for_skill_without_dataset(notes_dir: Path, mlflow_store: str) -> None:
    code, output = _invoke(["evolve", "--skills-dir", str(notes_dir), "--skill", "notes", "--fitness", "keyword"])
    assert code == 2
    assert "no dataset for skill 'notes'" in output


def test_unreachable_tracking_uri(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "http://127.0.0.1:9")
    code, output = _invoke(["evolve", "--task-model", "test/oracle"])
    assert code == 2
    assert "tracking store http://127.0.0.1:9 cannot be used" in output


def test_successful_run_prints_summary_and_run_id(mlflow_store: str) -> None:
    code, output = _invoke(["evolve", "--task-model", "test/oracle", "--num-cases", "8", "--budget", "8", "--quiet"])
    assert code == 0, output
    runs = mlflow.search_runs(experiment_names=["skills/arxiv"])
    assert len(runs) == 1 and runs.status[0] == "FINISHED"
    assert f"run id: {runs.run_id[0]}" in output
    assert "verdict view" not in output  # a local store has no UI address to link to


class _Ended:
    """What :func:`harness.cli.summary.view_links` reads of a tracker whose run has ended."""

    def __init__(self, store_uri: str, holdout_run_ids: dict[str, str] | None = None) -> None:
        self.store_uri, self.experiment_id, self.holdout_experiment_id = store_uri, "3", "4"
        self.holdout_run_ids = holdout_run_ids or {}


class _Footer:
    """A reporter that keeps the footer of its summary."""

    footer: dict[str, str] = {}

    def summary(self, title: str, rows: list[tuple[str, str]], footer: dict[str, str]) -> None:
        self.footer = dict(footer)


def test_the_summary_links_the_saved_views_on_a_tracking_server() -> None:
    from harness.cli.summary import summarize_compare, view_links

    links = view_links(_Ended("http://127.0.0.1:5055"))
    assert links == {
        "verdict view": "http://127.0.0.1:5055/#/experiments/3/runs?viewStateShareKey=harness-verdict",
        "holdout traces view": "http://127.0.0.1:5055/#/experiments/4/traces?traceViewShareKey=harness-verdict"}
    assert view_links(_Ended("sqlite:////tmp/mlflow.db")) == {}
    # a run with both holdout evaluation runs also links their comparison, per task
    compared = view_links(_Ended("http://127.0.0.1:5055", {"baseline": "b1", "evolved": "e1"}))
    assert compared == {**links, "baseline vs evolved per task":
                        "http://127.0.0.1:5055/#/experiments/4/runs/e1/traces?compareToRunUuid=b1"}
    reporter = _Footer()
    summarize_compare("p1", [], reporter, None, links)  # type: ignore[arg-type]
    assert reporter.footer == {"parent run id": "p1", **links}


@pytest.mark.parametrize("quiet", [False, True])
def test_stdout_holds_only_the_summary(quiet: bool, mlflow_store: str, tmp_path: Path) -> None:
    """Libraries' progress output (DSPy's bars print to stdout) never mixes into the summary on stdout;
    --quiet hides it altogether."""
    args = ["evolve", "--task-model", "test/oracle", "--reflection-model", "test/proposer", "--num-cases", "12",
            "--budget", "10"] + (["--quiet"] if quiet else [])
    proc = subprocess.run([sys.executable, "-m", "harness.cli", *args], capture_output=True, text=True, cwd=tmp_path,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    run_id = mlflow.search_runs(experiment_names=["skills/arxiv"]).run_id[0]
    assert proc.stdout.rstrip().endswith(f"run id: {run_id}") and "skill evolution run" in proc.stdout
    # ("Evaluation completed", mlflow.genai.evaluate's closing note, is gone: the tracked holdout no longer runs
    # through it since issue 18, see harness.tracking.holdout_traces)
    for library_output in ("Average Metric", "GEPA Optimization"):
        assert library_output not in proc.stdout
        assert (library_output in proc.stderr) is not quiet, proc.stderr
    assert ("optimising with gepa" in proc.stderr) is not quiet  # our own progress lines follow --quiet too


def test_mlflow_float_spelling_of_integers_is_accepted(mlflow_store: str) -> None:
    code, output = _invoke(["evolve", "--task-model", "test/oracle", "--num-cases", "8.0", "--budget", "8.0",
                            "--seed", "1.0", "--quiet"])
    assert code == 0, output
    run = mlflow.search_runs(experiment_names=["skills/arxiv"]).iloc[0]
    assert run["params.budget"] == "8" and run["params.num_cases"] == "8"


def test_console_script_error_has_no_traceback(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "evolve", "--budget", "0"], capture_output=True,
                          text=True, cwd=tmp_path, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip() == "Error: invalid budget=0: expected a number of metric calls of at least 1"


def test_fault_inside_the_run_is_one_line_and_the_run_failed(mlflow_store: str,
                                                             break_optimizer: Callable[[BaseException], None]) -> None:
    break_optimizer(RuntimeError("the reflection LM replied in\nan unexpected format"))
    code, output = _invoke(["evolve", "--task-model", "test/oracle", "--num-cases", "8", "--budget", "8", "--quiet"])
    assert code == 1
    assert "Traceback" not in output
    line = next(x for x in output.splitlines() if x.startswith("Error: "))
    assert "the run failed: RuntimeError: the reflection LM replied in an unexpected format" in line
    run = mlflow.search_runs(experiment_names=["skills/arxiv"], output_format="list")[0]
    assert run.info.status == "FAILED"
    assert f"the MLflow run {run.info.run_id} is marked FAILED" in line  # the line names the run to look at
    assert "unexpected format" in mlflow.artifacts.load_text(f"runs:/{run.info.run_id}/error.txt")


def test_sigterm_is_plain_termination_again_after_a_command(mlflow_store: str) -> None:
    before = signal.getsignal(signal.SIGTERM)
    code, output = _invoke(["evolve", "--task-model", "test/oracle", "--num-cases", "8", "--dry-run"])
    assert code == 0, output
    assert signal.getsignal(signal.SIGTERM) is before  # no KeyboardInterrupt while the process shuts down


def test_fault_in_a_side_by_side_child_names_child_and_parent(
        mlflow_store: str, break_optimizer: Callable[[BaseException], None]) -> None:
    break_optimizer(RuntimeError("optimizer fault"))
    code, output = _invoke(["compare", "--fitness", "keyword,verifier", "--task-model", "test/oracle",
                            "--judge-model", "test/judge", "--num-cases", "8", "--budget", "8", "--quiet"])
    assert code == 1, output
    runs = mlflow.search_runs(experiment_names=["skills/arxiv"], output_format="list")
    parent = next(r for r in runs if "mlflow.parentRunId" not in r.data.tags)
    child = next(r for r in runs if r.data.tags.get("mlflow.parentRunId") == parent.info.run_id)
    assert {parent.info.status, child.info.status} == {"FAILED"}
    assert f"the MLflow run {child.info.run_id} (parent {parent.info.run_id}) is marked FAILED" in output
