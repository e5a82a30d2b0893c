"""TaskFileVerifier, the shipped skills' task files, the tasks-check library and the drafting of tasks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verifiers.base import DatasetError
from verifiers.taskfile import TaskFileError, TaskFileVerifier, find_task_file, load_tasks
from verifiers.taskfile.report import grade_answers, load_answers, summarize

SKILLS = Path(__file__).resolve().parents[1] / "experiments" / "skills"
SHIPPED = ("unit-date-math", "tool-choice")


def shipped(name: str) -> TaskFileVerifier:
    path = find_task_file(SKILLS / name)
    assert path == SKILLS / name / "evals" / "tasks.jsonl"
    return TaskFileVerifier(load_tasks(path))


def test_verifier_for_skill() -> None:
    from verifiers.taskfile import verifier_for_skill

    assert verifier_for_skill(SKILLS / "arxiv") is None  # no task file: the registered verifier applies
    found = verifier_for_skill(SKILLS / "arxiv", SKILLS / "tool-choice" / "evals" / "tasks.jsonl")
    assert found is not None and found.name == "tool-choice" and len(found.tasks()) == 45
    with pytest.raises(TaskFileError, match="does not exist"):
        verifier_for_skill(SKILLS / "arxiv", "missing.jsonl")


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_task_files_load_fully_checked(name: str) -> None:
    verifier = shipped(name)
    assert len(verifier.tasks()) >= 40 and verifier.all_checked
    assert verifier.name == name
    splits = verifier.build_dataset(seed=0)
    assert all(splits.sizes.values())
    groups = [{t.group for t in tasks} for _, tasks in splits.items()]
    assert not (groups[0] & groups[1] or groups[0] & groups[2] or groups[1] & groups[2])
    assert splits.digest() == verifier.build_dataset(seed=0).digest() != verifier.build_dataset(seed=1).digest()


def test_shipped_skills_exercise_every_check_type() -> None:
    from verifiers.taskfile.checks import CHECK_TYPES

    used = {c.type for name in SHIPPED for checks in shipped(name).taskfile.checks.values() for c in checks}
    assert used == set(CHECK_TYPES)


def by_id(verifier: TaskFileVerifier, task_id: str) -> str:
    return next(t.question for t in verifier.tasks() if t.task_id == task_id)


# (task id, case, output, composite): hand-written answers, graded as the scale says
UNIT_DATE_CASES = [
    ("len-1", "right", "8.05 km", 1.0), ("len-1", "hedged", "8.05 km, or about 8.1 km", 0.75),
    ("len-1", "wrong", "8.5 km", 0.5), ("len-1", "evasive", "I'm not sure, sorry.", 0.0),
    ("temp-2", "right", "-40 °F", 1.0), ("temp-2", "wrong", "40 °F", 0.5),
    ("add-1", "right", "2024-04-14", 1.0), ("add-1", "hedged (off-by-one forbidden)", "2024-04-14 or 2024-04-13", 0.5),
    ("add-1", "wrong", "April 14, 2024", 0.5), ("add-1", "evasive", "I cannot determine that.", 0.0),
    ("wd-1", "right", "Saturday", 1.0), ("wd-1", "hedged (other weekday forbidden)", "Saturday or Sunday", 0.5),
    ("leap-1", "right", "No.", 1.0), ("leap-1", "wrong", "yes", 0.5),
    ("diff-1", "right", "29 days", 1.0), ("diff-1", "hedged", "29 or 30 days", 0.75),
    ("isoweek-1", "right", "2025-W01", 1.0), ("vol-2", "right", "16.91 fl oz", 1.0),
    ("add-wd-1", "right", "2024-05-30, a Thursday", 1.0),
]
TOOL_CASES = [
    ("call-1", "right", '{"tool": "get_weather", "arguments": {"city": "Lisbon", "units": "imperial"}}', 1.0),
    ("call-1", "hedged", '{"tool": "get_weather", "arguments": {"city": "Lisbon", "units": "imperial"}}\nor\n'
                         '{"tool": "web_search", "arguments": {"query": "Lisbon weather"}}', 0.75),
    ("call-1", "wrong", '{"tool": "web_search", "arguments": {"query": "Lisbon weather"}}', 0.5),
    ("call-1", "evasive", "I don't know which tool to use.", 0.0),
    ("call-15", "right", '```json\n{"tool": "run_shell", "arguments": {"command": "pytest", "timeout_s": 300}}\n```',
     1.0),
    ("choose-13", "right", "fetch_url", 1.0), ("choose-13", "hedged", "fetch_url or read_file", 0.75),
    ("choose-13", "wrong", "read_file", 0.5), ("choose-13", "evasive", "No idea.", 0.0),
    ("plan-6", "right", '{"plan": ["read_file", "translate", "write_file"]}', 1.0),
    ("plan-6", "wrong", '{"plan": ["read_file", "write_file"]}', 0.5),
    ("plan-6", "evasive", "Sorry, I cannot answer that.", 0.0),
]


@pytest.mark.parametrize(("name", "task_id", "case", "output", "expected"),
                         [("unit-date-math", *c) for c in UNIT_DATE_CASES] + [("tool-choice", *c) for c in TOOL_CASES])
def test_shipped_answers_grade_as_the_scale_says(name: str, task_id: str, case: str, output: str,
                                                 expected: float) -> None:
    verifier = shipped(name)
    grade = verifier.score(by_id(verifier, task_id), output)
    assert grade.composite == pytest.approx(expected), (case, grade)


def test_partly_right_tool_call_sits_between_wrong_and_right() -> None:
    verifier = shipped("tool-choice")
    grade = verifier.score(by_id(verifier, "call-1"), '{"tool": "get_weather", "arguments": {"city": "Lisbon"}}')
    assert 0.5 < grade.composite < 1.0 and "units expected" in grade.feedback


def test_labels_for_confusion_matrices() -> None:
    verifier = shipped("tool-choice")
    assert verifier.labelled
    assert verifier.labels(by_id(verifier, "choose-13"), "read_file") == ("fetch_url", "read_file")
    assert verifier.labels(by_id(verifier, "choose-13"), "read_file or fetch_url") == ("fetch_url", "(hedged)")
    assert verifier.labels(by_id(verifier, "call-1"), "") == ("get_weather", "(none)")
    assert verifier.labels(by_id(verifier, "plan-1"), "{}") is None
    assert verifier.labels("unknown question", "x") is None
    assert not shipped("unit-date-math").labelled


def write_tasks(tmp_path: Path, rows: list[dict]) -> Path:
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_unknown_and_unchecked_tasks_score_zero(tmp_path: Path) -> None:
    rows = [{"id": f"t{i}", "input": f"Question {i}?", "rubric": "r",
             **({"checks": [{"type": "exact", "value": "x"}]} if i else {})} for i in range(4)]
    verifier = TaskFileVerifier(load_tasks(write_tasks(tmp_path, rows)))
    assert not verifier.all_checked
    with pytest.raises(TaskFileError, match=r"tasks.jsonl: fitness=verifier needs checks on every task, and 1 of 4 "
                                            r"have none \('t0'\)"):
        verifier.taskfile.require_checked()
    shipped("tool-choice").taskfile.require_checked()
    assert "no ground truth" in verifier.score("Another question?", "x").feedback
    unchecked = verifier.score("Question 0?", "x")
    assert unchecked.composite == 0.0 and "has no checks" in unchecked.feedback
    assert verifier.score("Question  1?", "x").composite == 1.0
    with pytest.raises(DatasetError):
        verifier.build_dataset(num_cases=5)


def test_summary_counts_groups_check_types_and_the_split() -> None:
    taskfile = shipped("tool-choice").taskfile
    summary = summarize(taskfile, seed=3)
    assert summary.tasks == summary.checked == 45 and summary.format == "harness"
    assert summary.check_types == {"choice": 13, "json": 11, "max_chars": 13, "tool_call": 21}
    assert sum(summary.groups.values()) == 45 and sum(summary.split_sizes.values()) == 45
    assert summary.split_digest == TaskFileVerifier(taskfile).build_dataset(seed=3).digest()
    assert json.loads(json.dumps(summary.to_dict()))["seed"] == 3


def test_answers_file_grades_and_errors(tmp_path: Path) -> None:
    taskfile = shipped("tool-choice").taskfile
    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps({"id": "choose-13", "output": "fetch_url", "case": "right"}) + "\n\n"
                       + json.dumps({"id": "choose-13", "output": "read_file or fetch_url"}) + "\n", encoding="utf-8")
    graded = grade_answers(taskfile, load_answers(answers), answers)
    assert [g.grade.composite for g in graded] == [1.0, 0.75]
    assert graded[1].to_dict()["answered_label"] == "(hedged)" and graded[0].answer.case == "right"
    answers.write_text(json.dumps({"id": "nope", "output": "x"}) + "\n", encoding="utf-8")
    with pytest.raises(TaskFileError, match=r"line 1, field 'id': no task 'nope'"):
        grade_answers(taskfile, load_answers(answers), answers)
    for bad, needle in (('{"id": 1}', "field 'output'"), ("[1]", "expected an object"), ("{", "invalid JSON"),
                        ('{"id": 1, "output": "x", "case": 2}', "field 'case'")):
        answers.write_text(bad + "\n", encoding="utf-8")
        with pytest.raises(TaskFileError, match=needle):
            load_answers(answers)


def test_draft_tasks_with_a_dummy_lm() -> None:
    from dspy.utils.dummies import DummyLM

    from verifiers.taskfile.generate import draft_tasks

    first = [{"input": "Convert 3 miles to km.", "rubric": "Gives 4.83 km."},
             {"input": "convert 3 miles to KM", "rubric": "Duplicate after normalisation."},
             {"input": "What weekday is 2024-01-01?", "rubric": ""}]
    second = [{"input": "How many days are in 2024?", "rubric": "Gives 366."},
              {"input": "Convert 3 miles to km.", "rubric": "Repeat."}]
    lm = DummyLM([{"tasks": json.dumps(first)}, {"tasks": json.dumps(second)}, {"tasks": "[]"}])
    rows = draft_tasks("# Units\nConvert units.", lm, n=3)
    assert rows == [{"id": "draft-1", "input": "Convert 3 miles to km.", "rubric": "Gives 4.83 km."},
                    {"id": "draft-2", "input": "How many days are in 2024?", "rubric": "Gives 366."}]
    with pytest.raises(ValueError, match="at least 1"):
        draft_tasks("skill", lm, n=0)


#: The unit-date-math answers worked out by hand, independently of the generator (rounded as each task asks):
#: a second computation of every expected answer in the shipped file.
HAND_ANSWERS: dict[str, float | str] = {
    "len-1": 8.05, "len-2": 26.22, "len-3": 188.0, "len-4": 7.87, "len-5": 91.44, "mass-1": 68.04, "mass-2": 5.51,
    "mass-3": 340.2, "mass-4": 794, "vol-1": 11.36, "vol-2": "16.91 fl oz", "vol-3": 52.83, "vol-4": 236.6,
    "temp-1": 37.0, "temp-2": -40, "temp-3": 373.15, "temp-4": 176.7, "temp-5": -273.15, "speed-1": 25.0,
    "speed-2": 104.6, "area-1": 8094, "area-2": 4.047, "data-1": 3221225472, "data-2": 238.42, "time-1": 12600,
    "time-2": 10080, "add-1": "2024-04-14", "add-2": "2023-01-24", "add-3": "2026-02-27", "add-4": "2025-02-08",
    "add-5": "2002-09-27", "add-6": "2100-02-28", "diff-1": 29, "diff-2": 28, "diff-3": 366, "diff-4": 22,
    "diff-5": 60, "wd-1": "Saturday", "wd-2": "Sunday", "wd-3": "Thursday", "wd-4": "Tuesday", "wd-5": "Thursday",
    "leap-1": "no", "leap-2": "yes", "leap-3": "yes", "leap-4": "no", "isoweek-1": "2025-W01",
    "unix-1": 1704067200, "add-wd-1": "2024-05-30, Thursday",
}


def test_unit_date_math_answers_match_a_hand_computation() -> None:
    verifier = shipped("unit-date-math")
    assert {t.task_id for t in verifier.tasks()} == set(HAND_ANSWERS)
    for task in verifier.tasks():
        hand = HAND_ANSWERS[task.task_id]
        unit = f" {task.answer.split()[-1]}" if task.kind == "number" and " " in task.answer else ""
        output = f"{hand}{unit}" if not isinstance(hand, str) else hand
        grade = verifier.score(task.question, output)
        assert grade.composite == 1.0, (task.task_id, output, grade.feedback)


def test_tool_choice_tasks_use_only_catalogue_tools_and_arguments() -> None:
    import re

    from verifiers.taskfile.checks import Choice, Json, ToolCall

    skill = (SKILLS / "tool-choice" / "SKILL.md").read_text(encoding="utf-8")
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| `(\w+)` \|[^|]*\|([^\n]*)\|$", skill, re.M)}
    assert len(rows) == 12
    for checks in shipped("tool-choice").taskfile.checks.values():
        for check in checks:
            if isinstance(check, ToolCall):
                assert check.tool in rows and set(check.tools) == set(rows)
                for argument in check.arguments:
                    assert f"`{argument}`" in rows[check.tool], (check.tool, argument)
            elif isinstance(check, Choice):
                assert set(check.options) == set(rows) and check.answer in rows
            elif isinstance(check, Json):
                assert set(check.value) <= set(rows)


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_task_answer_is_a_right_answer(name: str) -> None:
    """``Task.answer`` of a shipped task, bare or as "The answer is ...", grades 1.0 (so test LMs and readers
    of the dataset see a right answer)."""
    verifier = shipped(name)
    for task in verifier.tasks():
        for output in (task.answer, f"The answer is {task.answer}."):
            grade = verifier.score(task.question, output)
            assert grade.composite == 1.0, (task.task_id, output, grade.feedback)


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_skill_files_have_frontmatter_and_a_body(name: str) -> None:
    import yaml

    text = (SKILLS / name / "SKILL.md").read_text(encoding="utf-8")
    _, header, body = text.split("---\n", 2)
    meta = yaml.safe_load(header)
    assert meta["name"] == name and len(meta["description"]) > 40
    assert body.count("\n## ") >= 2 and len(body) > 1000
