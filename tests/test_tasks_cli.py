"""``harness tasks check`` / ``generate``, and a real run on a shipped task file that logs its confusion
matrices (test LMs only: the figures say nothing about any real model)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import mlflow
import pandas as pd
import pytest
from click.testing import CliRunner

from harness.cli import main

ROOT = Path(__file__).resolve().parents[1]
TOOL_CHOICE = ROOT / "experiments" / "skills" / "tool-choice" / "evals" / "tasks.jsonl"


def _invoke(args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(main, args)
    return result.exit_code, result.output


def test_check_prints_counts_and_split() -> None:
    code, output = _invoke(["tasks", "check", str(TOOL_CHOICE), "--seed", "3"])
    assert code == 0, output
    lines = output.splitlines()
    assert lines[0].startswith(f"{TOOL_CHOICE}: harness format, 45 tasks, 45 with checks, sha256 ")
    assert "check types: choice 13, json 11, max_chars 13, tool_call 21" in lines
    split = next(line for line in lines if line.startswith("split (seed 3"))
    sizes = [int(part.split()[-1]) for part in split.split(": ", 1)[1].split(", ")]
    assert sum(sizes) == 45


def test_check_grades_answers_right_hedged_wrong_evasive(tmp_path: Path) -> None:
    right = {"tool": "get_weather", "arguments": {"city": "Lisbon", "units": "imperial"}}
    wrong = {"tool": "web_search", "arguments": {"query": "weather Lisbon"}}
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps(row) + "\n" for row in [
        {"id": "call-1", "output": json.dumps(right), "case": "right"},
        {"id": "call-1", "output": json.dumps(wrong), "case": "wrong"},
        {"id": "call-1", "output": "I can't do that.", "case": "evasive"},
    ]), encoding="utf-8")
    code, output = _invoke(["tasks", "check", str(TOOL_CHOICE), "--answers", str(answers)])
    assert code == 0, output
    graded = {line.split(" ", 1)[1].split(":")[0]: line for line in output.splitlines() if line.startswith("call-1")}
    assert "composite 1.00" in graded["[right]"] and "label get_weather -> get_weather" in graded["[right]"]
    assert "composite 0.50" in graded["[wrong]"] and "label get_weather -> web_search" in graded["[wrong]"]
    assert "composite 0.00" in graded["[evasive]"] and "-> (none)" in graded["[evasive]"]


@pytest.mark.parametrize("content, needle", [
    ('{"id": 1, "input": "q"\n', "line 1: invalid JSON"),
    ('{"id": "a", "input": "q?", "checks": [{"type": "regex", "pattern": "("}]}\n', "regex"),
    ('{"id": "a", "input": "q?"}\n', "at least 3"),
])
def test_check_bad_file_is_one_line_exit_2(tmp_path: Path, content: str, needle: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    code, output = _invoke(["tasks", "check", str(path)])
    assert code == 2
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"Error: {path}") and needle in lines[0], output


def test_check_answers_with_unknown_id_is_exit_2(tmp_path: Path) -> None:
    answers = tmp_path / "answers.jsonl"
    answers.write_text('{"id": "nosuch", "output": "x"}\n', encoding="utf-8")
    code, output = _invoke(["tasks", "check", str(TOOL_CHOICE), "--answers", str(answers)])
    assert code == 2 and "no task 'nosuch'" in output and str(answers) in output


def test_generate_writes_our_format_with_a_test_lm(tmp_path: Path) -> None:
    out = tmp_path / "drafts.jsonl"
    code, output = _invoke(["tasks", "generate", "--skill", "unit-date-math", "--model", "test/proposer",
                            "--n", "7", "--out", str(out)])
    assert code == 0, output
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 7 and all(set(r) == {"id", "input", "rubric"} for r in rows)
    assert len({r["input"] for r in rows}) == 7
    code, output = _invoke(["tasks", "check", str(out)])
    assert code == 0 and "7 tasks, 0 with checks" in output and "fitness=auto uses keyword" in output


def test_generate_refuses_before_any_lm_call(tmp_path: Path) -> None:
    existing = tmp_path / "drafts.jsonl"
    existing.write_text("keep me\n", encoding="utf-8")
    code, output = _invoke(["tasks", "generate", "--skill", "unit-date-math", "--model", "test/nosuch",
                            "--out", str(existing)])
    assert code == 2 and "exists; pass --force" in output and existing.read_text() == "keep me\n"
    code, output = _invoke(["tasks", "generate", "--skill", "unit-date-math", "--model", "test/nosuch",
                            "--out", str(tmp_path / "new.jsonl")])
    assert code == 2 and "unknown test model test/nosuch" in output
    code, output = _invoke(["tasks", "generate", "--skill", "nosuch-skill", "--model", "test/proposer",
                            "--out", str(tmp_path / "new.jsonl")])
    assert code == 2 and "not found" in output


def _artifact_table(client: mlflow.MlflowClient, run_id: str, path: str, dst: Path) -> pd.DataFrame:
    data = json.loads(Path(client.download_artifacts(run_id, path, str(dst))).read_text(encoding="utf-8"))
    return pd.DataFrame(data["data"], columns=data["columns"])


def test_tool_choice_run_logs_confusion_matrices_and_source(mlflow_store: str, tmp_path: Path) -> None:
    code, output = _invoke(["evolve", "--skill", "tool-choice", "--fitness", "verifier", "--task-model",
                            "test/lessons", "--budget", "20", "--quiet"])
    assert code == 0, output
    run = mlflow.search_runs(experiment_names=["skills/tool-choice"], output_format="list")[0]
    params, tags = run.data.params, run.data.tags
    assert params["tasks_source"] == "tasks-file" == tags["tasks.source"]
    assert params["tasks_path"] == str(TOOL_CHOICE) and params["tasks_format"] == "harness"
    assert params["tasks_sha256"] == hashlib.sha256(TOOL_CHOICE.read_bytes()).hexdigest()
    assert params["max_tokens"] == "128" and "sandbox" not in tags
    sources = {json.loads(d.dataset.source)["uri"] for d in run.inputs.dataset_inputs
               if d.dataset.name.startswith("tool-choice-")}
    assert sources == {str(TOOL_CHOICE)}
    client = mlflow.MlflowClient()
    names = {a.path for folder in ("labels", "plots") for a in client.list_artifacts(run.info.run_id, folder)}
    assert {"labels/confusion_baseline.json", "labels/confusion_evolved.json", "labels/mcnemar.json",
            "labels/answers.json", "plots/confusion_baseline.png", "plots/confusion_evolved.png"} <= names
    answers = _artifact_table(client, run.info.run_id, "labels/answers.json", tmp_path)
    evolved = _artifact_table(client, run.info.run_id, "labels/confusion_evolved.json", tmp_path)
    mcnemar = _artifact_table(client, run.info.run_id, "labels/mcnemar.json", tmp_path)
    per_variant = answers.groupby("variant").size()
    assert per_variant["baseline"] == per_variant["evolved"] > 0
    counts = evolved.set_index("expected")
    right = answers[(answers.variant == "evolved") & (answers.expected_label == answers.answered_label)]
    assert sum(counts.loc[label, label] for label in counts.index) == len(right)  # the diagonal: right labels
    assert counts.to_numpy().sum() == per_variant["evolved"]
    # test/lessons answers right only under the feedback proposer's lessons, which budget 20 adopts (seed 0)
    assert len(right) == per_variant["evolved"] and run.data.metrics["holdout.verifier.evolved"] == 1.0
    assert set(mcnemar["label"]) == set(answers["expected_label"])
    assert ((mcnemar["p_value"] >= 0) & (mcnemar["p_value"] <= 1)).all()
    assert (mcnemar["tasks"] == per_variant["evolved"]).all()
