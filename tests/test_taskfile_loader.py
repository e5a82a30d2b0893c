"""Task files: the three formats load into the same tasks; every bad file is one clear TaskFileError."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml

from verifiers.taskfile import TaskFileError, find_task_file, load_tasks
from verifiers.taskfile import loader as loader_module

QUESTIONS = ["What is 2 + 2?", "Name the capital of France.", "Which tool reads files?", "Spell 'cat' backwards."]
GROUPS = ["math", "geo", "tools", "words"]
CHECKS = [[{"type": "number", "value": 4}], [{"type": "exact", "value": "Paris"}],
          [{"type": "choice", "options": ["read_file", "web_search"], "answer": "read_file"}],
          [{"type": "contains", "phrases": ["tac"]}]]


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def ours_rows() -> list[dict]:
    return [{"id": str(i + 1), "input": q, "rubric": f"Answers: {q}", "group": g, "checks": c, "tags": ["t"]}
            for i, (q, g, c) in enumerate(zip(QUESTIONS, GROUPS, CHECKS, strict=True))]


def test_three_formats_load_into_the_same_tasks(tmp_path: Path) -> None:
    ours = load_tasks(write(tmp_path / "ours.jsonl", jsonl(ours_rows())))
    as_yaml = load_tasks(write(tmp_path / "ours.yaml", yaml.safe_dump(ours_rows())))
    skill = tmp_path / "my-skill"
    write(skill / "SKILL.md", "---\nname: my-skill\ndescription: d\n---\nbody\n")
    evals = {"skill_name": "my-skill", "evals": [
        {"id": i + 1, "prompt": q, "expected_output": f"Answers: {q}", "files": [], "group": g, "checks": c,
         "tags": ["t"]} for i, (q, g, c) in enumerate(zip(QUESTIONS, GROUPS, CHECKS, strict=True))]}
    write(skill / "evals" / "evals.json", json.dumps(evals))
    agent = load_tasks(find_task_file(skill))
    hermes = load_tasks(write(tmp_path / "golden.jsonl", jsonl([
        {"id": str(i + 1), "task_input": q, "expected_behavior": f"Answers: {q}", "category": g, "checks": c,
         "tags": ["t"]} for i, (q, g, c) in enumerate(zip(QUESTIONS, GROUPS, CHECKS, strict=True))])))
    assert [f.format for f in (ours, as_yaml, agent, hermes)] == ["harness", "harness", "agent-skills", "hermes"]
    assert ours.tasks == as_yaml.tasks == agent.tasks == hermes.tasks
    assert [t.kind for t in ours.tasks] == ["number", "exact", "choice", "contains"]
    assert [t.answer for t in ours.tasks] == ["4", "Paris", "read_file", "tac"]
    assert agent.skill_name == "my-skill"
    for loaded in (ours, agent, hermes):
        assert loaded.all_checked and loaded.tags["1"] == ("t",)
        assert [c.type for c in loaded.checks_for("What is 2 + 2?")] == ["number"]


def test_agent_skills_expectations_join_the_rubric_and_ids_default_to_groups(tmp_path: Path) -> None:
    evals = {"skill_name": "s", "evals": [
        {"id": n, "prompt": f"Prompt {n}", "expected_output": f"Output {n}.", "expectations": ["Is short", "Is kind"]}
        for n in (1, 2, 3)]}
    loaded = load_tasks(write(tmp_path / "evals.json", json.dumps(evals)))
    task = loaded.tasks[0]
    assert task.expected_behavior == "Output 1. Expectations: Is short; Is kind."
    assert (task.task_id, task.group, task.kind) == ("1", "1", "task")
    assert not loaded.all_checked and loaded.unchecked_ids == ["1", "2", "3"]


def test_hermes_rows_without_category_or_id(tmp_path: Path) -> None:
    rows = [{"task_input": f"Do thing {n}", "expected_behavior": f"Does thing {n}"} for n in range(4)]
    loaded = load_tasks(write(tmp_path / "g.jsonl", jsonl(rows)))
    assert [t.task_id for t in loaded.tasks] == ["1", "2", "3", "4"]
    assert [t.group for t in loaded.tasks] == ["1", "2", "3", "4"]
    assert loaded.tasks[2].answer == "Does thing 2"


def test_sha256_format_and_whitespace_insensitive_lookup(tmp_path: Path) -> None:
    path = write(tmp_path / "t.jsonl", jsonl(ours_rows()))
    loaded = load_tasks(path)
    assert loaded.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert loaded.task_for("  What is  2 + 2? ").task_id == "1"
    assert loaded.task_for("What is 3 + 3?") is None


def test_answer_field_overrides_the_checks_expectation(tmp_path: Path) -> None:
    rows = [{"input": f"Date {n}?", "rubric": "r", "answer": f"2024-01-0{n + 1}",
             "checks": [{"type": "regex", "pattern": f"2024-01-0{n + 1}"}]} for n in range(3)]
    loaded = load_tasks(write(tmp_path / "t.jsonl", jsonl(rows)))
    assert [t.answer for t in loaded.tasks] == ["2024-01-01", "2024-01-02", "2024-01-03"]
    assert loaded.tasks[0].kind == "regex"


def test_rubric_may_be_derived_from_checks(tmp_path: Path) -> None:
    rows = [{"input": f"Q{n}?", "checks": [{"type": "number", "value": n, "unit": "km"}]} for n in range(3)]
    loaded = load_tasks(write(tmp_path / "t.jsonl", jsonl(rows)))
    assert loaded.tasks[1].expected_behavior == "A good answer gives: 1 km."


def rows_with(**changes: object) -> list[dict]:
    rows = ours_rows()
    rows[1].update(changes)
    return rows


# (file name, content, substrings the message must contain)
BAD_FILES: list[tuple[str, str | bytes, tuple[str, ...]]] = [
    ("bad.jsonl", jsonl(ours_rows()) + "{not json}\n", ("line 5", "invalid JSON")),
    ("bad.yaml", "- input: a\n  rubric: [unclosed\n", ("invalid YAML", "line")),
    ("bad.jsonl", jsonl(rows_with(input=None)), ("line 2", "'input'", "missing")),
    ("bad.json", json.dumps({"evals": [{"id": 7, "expected_output": "x"}] * 3}), ("eval id 7", "'prompt'")),
    ("bad.jsonl", jsonl(rows_with(id="1")), ("line 2", "'id'", "duplicate id '1'", "line 1")),
    ("bad.jsonl", jsonl(rows_with(input="What is 2 +  2?")), ("line 2", "'input'", "keyed by the question text")),
    ("bad.jsonl", jsonl(rows_with(checks=[{"type": "fuzzy"}])), ("line 2", "checks[0]", "unknown check type 'fuzzy'",
                                                                  "tool_call")),
    ("bad.jsonl", jsonl(rows_with(checks=[{"type": "number"}])), ("line 2", "number check", "'value'", "missing")),
    ("bad.jsonl", jsonl(rows_with(checks=[{"type": "number", "value": "four"}])), ("'value'", "expected a number")),
    ("bad.jsonl", jsonl(rows_with(checks=[{"type": "number", "value": 4, "tolerance": 1}])),
     ("'tolerance'", "unknown parameter", "abs_tol")),
    ("bad.jsonl", jsonl(rows_with(checks=[{"type": "regex", "pattern": "(unclosed"}])),
     ("line 2", "'pattern'", "does not compile")),
    ("bad.jsonl", jsonl(rows_with(checks=[{"type": "json", "schema": {"type": "nope"}}])),
     ("line 2", "'schema'", "not a valid JSON Schema")),
    ("bad.jsonl", jsonl(rows_with(checks=[{"type": "choice", "options": ["a", "b"], "answer": "c"}])),
     ("'answer'", "not one of the options")),
    ("bad.jsonl", jsonl(rows_with(checks=[{"type": "contains", "phrases": "x", "weight": -1}])),
     ("'weight'", "above 0")),
    ("bad.jsonl", jsonl(rows_with(checks={"type": "exact"})), ("'checks'", "expected a list")),
    ("bad.jsonl", jsonl(rows_with(rubrik="typo")), ("line 2", "'rubrik'", "unknown field")),
    ("bad.jsonl", jsonl(rows_with(rubric=None, checks=None)), ("line 2", "'rubric'", "no checks")),
    ("bad.jsonl", jsonl(ours_rows())[:-1].encode() + b"\n\xff\xfe\n", ("line 5", "not valid UTF-8")),
    ("bad.jsonl", jsonl(ours_rows()[:2]), ("only 2 task(s)", "at least 3")),
    ("bad.jsonl", jsonl([{**r, "group": "g" if i else "h"} for i, r in enumerate(ours_rows())]),
     ("only 2 group(s)",)),
    ("bad.jsonl", jsonl([{"id": str(i), "input": f"q{i}", "rubric": "r", "group": "big" if i < 5 else f"g{i}"}
                         for i in range(8)]), ("group 'big' holds 5 of 8 tasks", "more than half")),
    ("empty.jsonl", "\n\n", ("empty",)),
    ("scalar.yaml", "just text\n", ("expected a list of tasks",)),
]


@pytest.mark.parametrize(("name", "content", "needles"), BAD_FILES)
def test_bad_files_raise_one_clear_error(tmp_path: Path, name: str, content: str | bytes,
                                         needles: tuple[str, ...]) -> None:
    path = write(tmp_path / name, content)
    with pytest.raises(TaskFileError) as info:
        load_tasks(path)
    message = str(info.value)
    assert message.startswith(str(path)), message
    for needle in needles:
        assert needle in message, message


def test_size_and_task_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path / "t.jsonl", jsonl(ours_rows()))
    monkeypatch.setattr(loader_module, "MAX_FILE_BYTES", 100)
    with pytest.raises(TaskFileError, match="over the limit of 100 bytes"):
        load_tasks(path)
    monkeypatch.setattr(loader_module, "MAX_FILE_BYTES", 10_000_000)
    monkeypatch.setattr(loader_module, "MAX_TASKS", 3)
    with pytest.raises(TaskFileError, match="4 tasks is over the limit of 3"):
        load_tasks(path)


def test_missing_file_and_folder(tmp_path: Path) -> None:
    with pytest.raises(TaskFileError, match="cannot be read"):
        load_tasks(tmp_path / "nope.jsonl")
    with pytest.raises(TaskFileError, match="is a folder"):
        load_tasks(tmp_path)


def test_discovery_order(tmp_path: Path) -> None:
    skill = tmp_path / "skill"
    (skill / "evals").mkdir(parents=True)
    assert find_task_file(skill, None) is None
    assert find_task_file(None, None) is None
    evals = write(skill / "evals" / "evals.json", "{}")
    assert find_task_file(skill, None) == evals
    tasks = write(skill / "evals" / "tasks.jsonl", "")
    assert find_task_file(skill, "") == tasks
    explicit = write(tmp_path / "other.yaml", "")
    assert find_task_file(skill, str(explicit)) == explicit
    with pytest.raises(TaskFileError, match="does not exist"):
        find_task_file(skill, str(tmp_path / "missing.jsonl"))
    with pytest.raises(TaskFileError, match="is a folder"):
        find_task_file(skill, str(tmp_path))
