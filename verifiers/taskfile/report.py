"""Library half of ``harness tasks check PATH [--answers FILE]``: what a task file holds, and how given
answers grade.  Returns data; the CLI prints it.

Answers file (``--answers``): JSON Lines, one object per line, ``{"id": <task id>, "output": <the answer
text>}`` with an optional ``"case"`` string (a label for the row, e.g. ``"hedged"``, shown beside the grade).
Blank lines are skipped; the size limit is the task files' (``MAX_FILE_BYTES``).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from verifiers.base import Grade
from verifiers.taskfile.errors import TaskFileError
from verifiers.taskfile.loader import TaskFile, read_text
from verifiers.taskfile.params import type_name
from verifiers.taskfile.verifier import TaskFileVerifier


@dataclass(frozen=True)
class TaskFileSummary:
    """What a task file holds and the split it makes.

    Attributes:
        path, format, sha256: as on the :class:`TaskFile`.
        tasks: number of tasks; checked: how many have checks.
        groups: group -> number of tasks (file order of first appearance).
        check_types: check type -> number of checks of that type (over all tasks).
        seed: the seed of the split below; split_sizes: split name -> tasks; split_groups: split -> groups;
        split_digest: ``Splits.digest()`` of that split.
    """

    path: str
    format: str
    sha256: str
    tasks: int
    checked: int
    groups: dict[str, int]
    check_types: dict[str, int]
    seed: int
    split_sizes: dict[str, int]
    split_groups: dict[str, list[str]]
    split_digest: str

    def to_dict(self) -> dict[str, Any]:
        """Plain dict, JSON-serialisable."""
        return asdict(self)


def summarize(taskfile: TaskFile, seed: int = 0, num_cases: int | None = None) -> TaskFileSummary:
    """Counts per group and per check type, and the split ``build_dataset(num_cases, seed)`` would make.

    Raises:
        verifiers.DatasetError: ``num_cases`` out of range.
    """
    splits = TaskFileVerifier(taskfile).build_dataset(num_cases, seed)
    types = Counter(check.type for checks in taskfile.checks.values() for check in checks)
    return TaskFileSummary(
        path=str(taskfile.path), format=taskfile.format, sha256=taskfile.sha256, tasks=len(taskfile.tasks),
        checked=len(taskfile.tasks) - len(taskfile.unchecked_ids),
        groups=dict(Counter(task.group for task in taskfile.tasks)), check_types=dict(sorted(types.items())),
        seed=seed, split_sizes=splits.sizes, split_groups=dict(splits.extra["groups"]),
        split_digest=splits.digest())


@dataclass(frozen=True)
class Answer:
    """One row of an answers file: the task id, the answer text, an optional case label, and its line."""

    task_id: str
    output: str
    case: str = ""
    place: str = ""


@dataclass(frozen=True)
class GradedAnswer:
    """One graded answer: the answer, its task's question, the grade and (choice/tool_call) the labels."""

    answer: Answer
    question: str
    grade: Grade
    labels: tuple[str, str] | None

    def to_dict(self) -> dict[str, Any]:
        """Plain dict, JSON-serialisable."""
        return {"id": self.answer.task_id, "case": self.answer.case, "output": self.answer.output,
                "question": self.question, **self.grade.to_dict(),
                "expected_label": self.labels[0] if self.labels else None,
                "answered_label": self.labels[1] if self.labels else None}


def load_answers(path: str | Path) -> list[Answer]:
    """Read an answers file (format in the module docstring).

    Raises:
        TaskFileError: unreadable, too big, not UTF-8, invalid JSON, or a row without a string ``id`` /
            ``output`` (naming the file, the line and the field).
    """
    path = Path(path)
    text, _ = read_text(path)
    answers = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        place = f"{path}, line {number}"
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise TaskFileError(f"{place}: invalid JSON ({exc.msg}); write one JSON object per line, "
                                f'{{"id": ..., "output": ...}}') from None
        if not isinstance(row, dict):
            raise TaskFileError(f"{place}: expected an object, got {type_name(row)}; write "
                                f'{{"id": ..., "output": ...}}')
        task_id, output, case = row.get("id"), row.get("output"), row.get("case", "")
        if isinstance(task_id, bool) or not isinstance(task_id, str | int):
            raise TaskFileError(f"{place}, field 'id': expected the task's id, got {type_name(task_id)}; "
                                f"copy the id from the task file")
        if not isinstance(output, str):
            raise TaskFileError(f"{place}, field 'output': expected the answer as a string, got "
                                f"{type_name(output)}; quote the answer text")
        if not isinstance(case, str):
            raise TaskFileError(f"{place}, field 'case': expected a string, got {type_name(case)}; "
                                f"use a short label such as \"hedged\" or leave it out")
        answers.append(Answer(str(task_id), output, case, f"line {number}"))
    return answers


def grade_answers(taskfile: TaskFile, answers: Iterable[Answer], answers_path: str | Path = "answers") -> \
        list[GradedAnswer]:
    """Grade each answer with its task's checks, in order.

    Raises:
        TaskFileError: an answer names a task id that is not in the task file (naming ``answers_path``
            and the answer's line).
    """
    verifier = TaskFileVerifier(taskfile)
    by_id = {task.task_id: task for task in taskfile.tasks}
    graded = []
    for answer in answers:
        task = by_id.get(answer.task_id)
        if task is None:
            raise TaskFileError(f"{answers_path}, {answer.place or 'an answer'}, field 'id': no task "
                                f"{answer.task_id!r} in {taskfile.path}; use one of its ids")
        graded.append(GradedAnswer(answer, task.question, verifier.score(task.question, answer.output),
                                   verifier.labels(task.question, answer.output)))
    return graded
