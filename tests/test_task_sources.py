"""Where a run's tasks come from (--tasks, the skill's evals/ file, a registered verifier), the fitness ``auto``
picks from them, what a run logs about them, the sandbox option and the verifier's max_tokens floor."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from harness.cli import main
from harness.config import DEFAULT_MAX_TOKENS, EvolveConfig
from harness.engine.registry import auto_fitness_note, resolve_fitness
from harness.engine.sources import REGISTERED, TASKS_FILE, resolve_source, task_max_tokens
from harness.run import log_setup, prepare
from harness.tracking.tracker import NullTracker
from verifiers.taskfile import TaskFileError

SKILL = "---\nname: {name}\ndescription: A test skill.\n---\n# {name}\n\nAnswer briefly.\n"


def _rows(prefix: str, n: int = 6, checked: bool = True) -> list[dict[str, Any]]:
    rows = []
    for i in range(n):
        row: dict[str, Any] = {"id": f"{prefix}-{i}", "group": f"g{i % 3}", "input": f"{prefix} question {i}?",
                               "rubric": f"Says {prefix}{i}."}
        if checked:
            row["checks"] = [{"type": "any_of", "values": [f"{prefix}{i}"]}]
        rows.append(row)
    return rows


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _skill(root: Path, name: str) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL.format(name=name), encoding="utf-8")
    return folder


def _evals_json(folder: Path, prefix: str) -> Path:
    evals = {"skill_name": folder.name,
             "evals": [{"id": r["id"], "prompt": r["input"], "expected_output": r["rubric"], "checks": r["checks"]}
                       for r in _rows(prefix)]}
    path = folder / "evals" / "evals.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(evals), encoding="utf-8")
    return path


def test_order_explicit_then_tasks_jsonl_then_evals_json_then_registered(tmp_path: Path) -> None:
    folder = _skill(tmp_path / "skills", "mine")
    with pytest.raises(Exception, match="no dataset for skill 'mine'"):
        resolve_source("mine", folder)
    evals = _evals_json(folder, "ev")
    source = resolve_source("mine", folder)
    assert (source.kind, source.path, source.format) == (TASKS_FILE, evals, "agent-skills")
    beside = _write_jsonl(folder / "evals" / "tasks.jsonl", _rows("tj"))
    source = resolve_source("mine", folder)
    assert (source.path, source.format) == (beside, "harness")  # tasks.jsonl before evals.json
    explicit = _write_jsonl(tmp_path / "other.jsonl", _rows("ex"))
    source = resolve_source("mine", folder, str(explicit))
    assert source.path == explicit and source.verifier.tasks()[0].question == "ex question 0?"  # never overridden
    assert source.sha256 == hashlib.sha256(explicit.read_bytes()).hexdigest()
    assert source.params() == {"tasks_source": "tasks-file", "tasks_path": str(explicit.resolve()),
                               "tasks_sha256": source.sha256, "tasks_format": "harness"}


def test_registered_verifier_when_no_file_and_a_file_beats_it(tmp_path: Path) -> None:
    folder = _skill(tmp_path / "skills", "arxiv")
    source = resolve_source("arxiv", folder)
    assert source.kind == REGISTERED and source.path is None and source.dataset_source() is None
    assert source.params()["tasks_source"] == "registered-verifier"
    _write_jsonl(folder / "evals" / "tasks.jsonl", _rows("tj"))
    assert resolve_source("arxiv", folder).kind == TASKS_FILE  # a file beside the skill wins over a verifier


def test_explicit_tasks_that_is_missing_is_an_error_naming_it(tmp_path: Path) -> None:
    folder = _skill(tmp_path / "skills", "mine")
    _write_jsonl(folder / "evals" / "tasks.jsonl", _rows("tj"))
    with pytest.raises(TaskFileError, match="nope.jsonl.*does not exist"):
        resolve_source("mine", folder, str(tmp_path / "nope.jsonl"))  # no silent fallback to the file beside


def test_auto_fitness_and_verifier_on_unchecked_file(tmp_path: Path) -> None:
    folder = _skill(tmp_path / "skills", "mine")
    path = _write_jsonl(folder / "evals" / "tasks.jsonl", _rows("a", checked=True)[:3] + _rows("b", checked=False))
    source = resolve_source("mine", folder)
    assert resolve_fitness("auto", source) == "keyword"
    assert auto_fitness_note("auto", source) == f"keyword: 6 task(s) of {path} have no checks"
    assert resolve_fitness("keyword", source) == "keyword" and auto_fitness_note("keyword", source) == ""
    with pytest.raises(TaskFileError, match=rf"{path.name}: fitness=verifier needs checks on every task, and 6 of 9"):
        resolve_fitness("verifier", source)
    _write_jsonl(path, _rows("c"))
    checked = resolve_source("mine", folder)
    assert resolve_fitness("auto", checked) == "verifier" == resolve_fitness("verifier", checked)
    assert auto_fitness_note("auto", checked) == "verifier: every task has checks"
    registered = resolve_source("arxiv", None)
    assert resolve_fitness("auto", registered) == "verifier"


def test_unchecked_tasks_are_unscored_by_the_verifier_grader(tmp_path: Path) -> None:
    from harness.engine.graders import VerifierGrader
    from verifiers import Unscored

    folder = _skill(tmp_path / "skills", "mine")
    _write_jsonl(folder / "evals" / "tasks.jsonl", _rows("a")[:3] + _rows("b", checked=False))
    source = resolve_source("mine", folder)
    grader = VerifierGrader(source.verifier)
    tasks = {t.task_id: t for t in source.verifier.tasks()}
    assert isinstance(grader.grade(tasks["b-0"], "b0"), Unscored)
    assert grader.grade(tasks["a-0"], "The answer is a0.").composite == 1.0


class Recorder(NullTracker):
    """Keeps what a run logs (params, tags, dataset inputs)."""

    def __init__(self) -> None:
        self.params: dict[str, Any] = {}
        self.tags: dict[str, str] = {}
        self.datasets: list[tuple[str, str, str | None]] = []

    def log_params(self, params: Any) -> None:
        self.params.update(params)

    def set_tags(self, tags: Any) -> None:
        self.tags.update(tags)

    def log_dataset(self, frame: Any, name: str, context: str, digest: str, source: str | None = None) -> None:
        self.datasets.append((name, context, source))


def test_prepare_and_log_setup_record_the_source(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    folder = _skill(skills, "mine")
    path = _write_jsonl(folder / "evals" / "tasks.jsonl", _rows("a", n=9, checked=False))
    config = EvolveConfig(skill="mine", skills_dir=str(skills), fitness="auto", output_dir=str(tmp_path / "out"))
    setup = prepare(config)
    assert setup.source is not None and setup.source.path == path and len(setup.splits.holdout) >= 1
    recorder = Recorder()
    log_setup(setup, config, resolve_fitness(config.fitness, setup.source), recorder)
    assert recorder.params["tasks_source"] == "tasks-file" and recorder.params["tasks_path"] == str(path.resolve())
    assert recorder.params["tasks_format"] == "harness" and len(recorder.params["tasks_sha256"]) == 64
    assert recorder.params["fitness_resolved"] == "keyword"
    assert recorder.tags["tasks.source"] == "tasks-file"
    assert recorder.tags["fitness.auto"].startswith("keyword: 9 task(s)")
    assert "sandbox" not in recorder.tags  # only verifiers that run code have one
    assert {d[1] for d in recorder.datasets} == {"trainset", "valset", "holdout"}
    assert all(d[2] == str(path.resolve()) for d in recorder.datasets)


def test_python_bugfix_sandbox_mode_is_passed_and_tagged(tmp_path: Path) -> None:
    config = EvolveConfig(skill="python-bugfix", sandbox="limits", output_dir=str(tmp_path / "out"))
    setup = prepare(config)
    assert setup.verifier.sandbox.mode == "limits"  # type: ignore[attr-defined]
    recorder = Recorder()
    log_setup(setup, config, "verifier", recorder)
    assert recorder.tags["sandbox"] == "limits" == recorder.params["sandbox_resolved"]
    assert recorder.params["sandbox"] == "limits" and recorder.params["tasks_source"] == "registered-verifier"


def test_max_tokens_floor_of_the_verifier() -> None:
    from verifiers import get_verifier

    pybugfix, arxiv = get_verifier("python-bugfix", sandbox="limits"), get_verifier("arxiv")
    assert task_max_tokens(0, pybugfix) == 384 and task_max_tokens(0, arxiv) == DEFAULT_MAX_TOKENS
    assert task_max_tokens(64, pybugfix) == 64  # the user's --max-tokens wins


def _invoke(args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(main, args)
    return result.exit_code, result.output


def test_cli_sandbox_required_without_bubblewrap_is_exit_2(tmp_path: Path, mlflow_store: str,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import mlflow

    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on PATH
    code, output = _invoke(["evolve", "--skill", "python-bugfix", "--sandbox", "required", "--task-model",
                            "test/oracle"])
    assert code == 2, output
    assert output.startswith("Error: sandbox required but bubblewrap cannot start: the 'bwrap' executable")
    assert mlflow.search_runs(search_all_experiments=True).empty


def test_cli_bad_task_file_and_unchecked_verifier_are_exit_2(tmp_path: Path, mlflow_store: str) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "input": "q?", "checks": [{"type": "nosuch"}]}\n', encoding="utf-8")
    code, output = _invoke(["evolve", "--tasks", str(bad), "--task-model", "test/oracle"])
    assert code == 2 and output.startswith(f"Error: {bad}, line 1") and "nosuch" in output, output
    unchecked = _write_jsonl(tmp_path / "unchecked.jsonl", _rows("u", checked=False))
    code, output = _invoke(["evolve", "--tasks", str(unchecked), "--fitness", "verifier", "--task-model",
                            "test/oracle"])
    assert code == 2 and "fitness=verifier needs checks on every task" in output and str(unchecked) in output
    code, output = _invoke(["compare", "--tasks", str(unchecked), "--fitness", "keyword,verifier",
                            "--task-model", "test/oracle"])
    assert code == 2 and "fitness=verifier needs checks on every task" in output


def test_dry_run_names_the_task_file_and_resolves_auto(mlflow_store: str, tmp_path: Path) -> None:
    from harness.dryrun import plan

    config = EvolveConfig(skill="unit-date-math", fitness="auto", task_model="test/oracle",
                          output_dir=str(tmp_path / "out"))
    rows = dict(plan(config, ["auto"]).rows)
    assert rows["tasks"].startswith("task file ")
    assert "unit-date-math/evals/tasks.jsonl (harness, sha256" in rows["tasks"]
    assert rows["fitness"] == "verifier"  # every shipped task has checks


def test_holdout_threads_parallel_for_process_bound_grading() -> None:
    import os

    from harness.engine.holdout import holdout_threads
    from verifiers import get_verifier

    pybugfix, arxiv = get_verifier("python-bugfix", sandbox="limits"), get_verifier("arxiv")
    assert holdout_threads(1, pybugfix) == max(1, os.cpu_count() or 1)
    assert holdout_threads(64, pybugfix) == 64
    assert holdout_threads(1, arxiv) == 1 and holdout_threads(3, arxiv) == 3
