"""One loader for the three task-file formats, producing the same :class:`verifiers.base.Task` objects.

Formats (detected from the content, never from the file name):

* ``harness`` (ours): JSONL, a JSON list or a YAML list of objects with ``input`` (required, the question
  or request), ``id`` (string or integer; default: the row number), ``rubric`` (what a good answer does;
  keyword and judge fitness grade against it; may be left out when there are ``checks``), ``group``
  (splits keep a group together; default: the id), ``checks`` (list, see :mod:`verifiers.taskfile.checks`),
  ``tags`` (list of strings) and ``answer`` (a short text of the expected answer, shown in datasets and used
  as ``Task.answer``; default: what the first check expects).  Other keys are an error (usually a typo).
* ``agent-skills``: an Agent Skills ``evals/evals.json`` object ``{"skill_name": ..., "evals": [{"id",
  "prompt", "expected_output", "expectations": [...], "files": [...]}]}`` (JSON or YAML).  ``prompt`` ->
  input; ``expected_output`` and ``expectations`` -> rubric; ``checks``, ``group`` and ``tags`` are
  accepted on an eval as our extension; other keys are ignored.
* ``hermes``: Hermes golden-dataset JSONL rows ``{"task_input", "expected_behavior", "category"}`` (``id``,
  ``checks`` and ``tags`` accepted too): task_input -> input, expected_behavior -> rubric, category -> group.

Detection: an object with an ``evals`` key is ``agent-skills``; otherwise the rows are ``hermes`` when the
first row has ``task_input``, else ``harness``.  Text starting with ``{`` or ``[`` is JSON (a whole document,
else JSON Lines); anything else is YAML.

Limits and rules (each broken one is a :class:`TaskFileError` naming the file, the line / item / eval id,
the field and the fix): at most ``MAX_FILE_BYTES`` bytes (10 MB) and ``MAX_TASKS`` tasks (10,000); UTF-8
(a BOM is allowed); at least ``MIN_TASKS`` tasks; unique ids; unique inputs (whitespace-normalised),
because grading is keyed by the question text; at least 3 groups and no group holding more than half of
the tasks, because splits put whole groups into trainset / valset / holdout aiming at 50 / 25 / 25 %.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from verifiers.base import Task
from verifiers.splits import MIN_CASES
from verifiers.taskfile.checks import Check, build_check, clip
from verifiers.taskfile.errors import TaskFileError
from verifiers.taskfile.params import type_name

#: Largest task file read, in bytes.
MAX_FILE_BYTES = 10_000_000
#: Most tasks in one file.
MAX_TASKS = 10_000
#: Fewest tasks: one for each of trainset, valset and holdout.
MIN_TASKS = MIN_CASES
#: Format names, as recorded on :attr:`TaskFile.format`.
FORMATS: tuple[str, ...] = ("harness", "agent-skills", "hermes")
#: Keys of a row in our format.
HARNESS_KEYS: frozenset[str] = frozenset({"id", "input", "rubric", "group", "checks", "tags", "answer"})
#: ``Task.answer`` is cut to this many characters.
ANSWER_CHARS = 200


def squash_ws(text: str) -> str:
    """``text`` with runs of whitespace collapsed to one space and the ends stripped (the question key)."""
    return " ".join(text.split())


@dataclass(frozen=True)
class TaskFile:
    """A loaded task file.

    Attributes:
        path: the file read.
        format: one of ``FORMATS``.
        sha256: hex SHA-256 of the file's bytes.
        tasks: the tasks in file order.
        checks: task id -> its checks (an empty tuple when it has none).
        tags: task id -> its tags.
        skill_name: the ``skill_name`` of an Agent Skills file, else ``None``.
    """

    path: Path
    format: str
    sha256: str
    tasks: tuple[Task, ...]
    checks: Mapping[str, tuple[Check, ...]]
    tags: Mapping[str, tuple[str, ...]]
    skill_name: str | None = None
    _by_question: dict[str, Task] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        for task in self.tasks:
            self._by_question[task.question] = task
            self._by_question[squash_ws(task.question)] = task

    def task_for(self, question: str) -> Task | None:
        """The task asked by ``question`` (exact, else whitespace-normalised), or ``None``."""
        return self._by_question.get(question) or self._by_question.get(squash_ws(question))

    def checks_for(self, question: str) -> tuple[Check, ...]:
        """The checks of the task asked by ``question`` (empty when unknown or unchecked)."""
        task = self.task_for(question)
        return self.checks.get(task.task_id, ()) if task is not None else ()

    @property
    def all_checked(self) -> bool:
        """Whether every task has at least one check (so ``fitness=verifier`` can grade all of them)."""
        return all(self.checks.get(t.task_id) for t in self.tasks)

    @property
    def unchecked_ids(self) -> list[str]:
        """Ids of the tasks without checks, in file order."""
        return [t.task_id for t in self.tasks if not self.checks.get(t.task_id)]

    def require_checked(self) -> None:
        """For ``fitness=verifier``: raise unless every task has checks.

        Raises:
            TaskFileError: naming the file, how many tasks lack checks and the first ids, and the fixes.
        """
        missing = self.unchecked_ids
        if missing:
            shown = ", ".join(map(repr, missing[:5])) + (f" (+{len(missing) - 5} more)" if len(missing) > 5 else "")
            raise TaskFileError(f"{self.path}: fitness=verifier needs checks on every task, and {len(missing)} of "
                                f"{len(self.tasks)} have none ({shown}); add 'checks' to them, or use "
                                f"fitness=keyword, judge or auto")


# ------------------------------------------------------------------------------------------ reading


def read_text(path: Path) -> tuple[str, str]:
    """``(text, sha256)`` of a task file, enforcing the size limit and UTF-8.

    Raises:
        TaskFileError: missing file, a folder, over ``MAX_FILE_BYTES``, or not UTF-8 (names the line).
    """
    if path.is_dir():
        raise TaskFileError(f"{path}: is a folder, not a task file; pass the file itself (for a skill folder "
                            f"the task file is evals/tasks.jsonl or evals/evals.json)")
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise TaskFileError(f"{path}: cannot be read ({exc.strerror or exc}); check the path") from None
    if size > MAX_FILE_BYTES:
        raise TaskFileError(f"{path}: {size:,} bytes is over the limit of {MAX_FILE_BYTES:,} bytes (10 MB); "
                            f"split the file or keep fewer, shorter tasks")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise TaskFileError(f"{path}, line {line}: not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset "
                            f"{exc.start}); save the file as UTF-8") from None
    return text, hashlib.sha256(raw).hexdigest()


def parse_document(text: str, path: Path) -> tuple[object, list[tuple[str, object]] | None]:
    """``(document, rows)``: either a whole parsed document (rows ``None``) or JSON Lines rows with their
    places (``"line N"``).

    Raises:
        TaskFileError: invalid JSON (naming the line) or YAML (naming the line), or an empty file.
    """
    stripped = text.lstrip()
    if not stripped:
        raise TaskFileError(f"{path}: the file is empty; add at least {MIN_TASKS} tasks")
    if stripped[0] in "{[":
        try:
            return json.loads(text), None
        except ValueError:
            pass  # not one JSON document: read it as JSON Lines
        rows: list[tuple[str, object]] = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                rows.append((f"line {number}", json.loads(line)))
            except ValueError as exc:
                raise TaskFileError(f"{path}, line {number}: invalid JSON ({exc.msg} at column {exc.colno}); "
                                    f"write one JSON object per line") from None
        return None, rows
    try:
        return yaml.safe_load(text), None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f", line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise TaskFileError(f"{path}{line}: invalid YAML ({problem}); fix the YAML, or write JSON Lines "
                            f"(one JSON object per line)") from None


# ------------------------------------------------------------------------------------------ rows


@dataclass
class _Row:
    """One task's fields before they become a Task: where it is, and its raw values."""

    place: str
    task_id: str
    question: str
    rubric: str | None
    group: str | None
    checks: tuple[Check, ...]
    tags: tuple[str, ...]
    answer: str | None = None


def _field_error(path: Path, place: str, key: str, problem: str, fix: str) -> TaskFileError:
    return TaskFileError(f"{path}, {place}, field {key!r}: {problem}; {fix}")


def _text_field(row: Mapping[str, Any], key: str, path: Path, place: str, *, required: bool) -> str | None:
    value = row.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        problem = "missing" if value is None else f"expected a non-empty string, got {type_name(value)}"
        raise _field_error(path, place, key, problem, f"give the task's {key} as text")
    return value


def _id_field(row: Mapping[str, Any], key: str, default: str, path: Path, place: str) -> str:
    value = row.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, str | int) or not str(value).strip():
        raise _field_error(path, place, key, f"expected a string or an integer, got {type_name(value)}",
                           "use a short unique name or number")
    return str(value)


def _checks_field(row: Mapping[str, Any], path: Path, place: str) -> tuple[Check, ...]:
    specs = row.get("checks")
    if specs is None:
        return ()
    if not isinstance(specs, list):
        raise _field_error(path, place, "checks", f"expected a list of checks, got {type_name(specs)}",
                           'write it as [{"type": ..., ...}]')
    return tuple(build_check(spec, f"{path}, {place}, checks[{i}]") for i, spec in enumerate(specs))


def _tags_field(row: Mapping[str, Any], path: Path, place: str) -> tuple[str, ...]:
    tags = row.get("tags")
    if tags is None:
        return ()
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise _field_error(path, place, "tags", f"expected a list of strings, got {type_name(tags)}",
                           'write it as ["tag1", "tag2"]')
    return tuple(tags)


def _row(data: object, place: str, default_id: str, path: Path, fmt: str) -> _Row:
    """One row of any format as a :class:`_Row` (field names mapped per format)."""
    if not isinstance(data, Mapping):
        raise TaskFileError(f"{path}, {place}: expected an object (one task), got {type_name(data)}; "
                            f"write each task as an object with an 'input'")
    if fmt == "harness":
        unknown = sorted(set(data) - HARNESS_KEYS)
        if unknown:
            raise _field_error(path, place, unknown[0], "unknown field",
                               f"use only {', '.join(sorted(HARNESS_KEYS))}")
        question_key, rubric_key, group_key = "input", "rubric", "group"
    elif fmt == "hermes":
        question_key, rubric_key, group_key = "task_input", "expected_behavior", "category"
    else:
        question_key, rubric_key, group_key = "prompt", "expected_output", "group"
    question = _text_field(data, question_key, path, place, required=True)
    rubric = _text_field(data, rubric_key, path, place, required=False)
    if fmt == "agent-skills":
        expectations = data.get("expectations") or []
        if not isinstance(expectations, list) or not all(isinstance(e, str) for e in expectations):
            raise _field_error(path, place, "expectations", f"expected a list of strings, got "
                               f"{type_name(expectations)}", 'write it as ["The answer ...", "..."]')
        if expectations:
            rubric = " ".join(filter(None, [rubric, "Expectations: " + "; ".join(expectations) + "."]))
    group = data.get(group_key)
    if group is not None and (isinstance(group, bool) or not isinstance(group, str | int) or not str(group).strip()):
        raise _field_error(path, place, group_key, f"expected a string or an integer, got {type_name(group)}",
                           "name the group")
    return _Row(place, _id_field(data, "id", default_id, path, place), question, rubric,
                None if group is None else str(group), _checks_field(data, path, place),
                _tags_field(data, path, place), _text_field(data, "answer", path, place, required=False))


def _agent_skills_rows(doc: Mapping[str, Any], path: Path) -> tuple[list[_Row], str | None]:
    skill_name = doc.get("skill_name")
    if skill_name is not None and not isinstance(skill_name, str):
        raise _field_error(path, "top level", "skill_name", f"expected a string, got {type_name(skill_name)}",
                           "give the skill's name")
    evals = doc["evals"]
    if not isinstance(evals, list):
        raise _field_error(path, "top level", "evals", f"expected a list of evals, got {type_name(evals)}",
                           'write it as [{"id": 1, "prompt": "..."}]')
    rows = []
    for index, data in enumerate(evals):
        eval_id = data.get("id") if isinstance(data, Mapping) else None
        place = f"eval id {eval_id}" if eval_id is not None else f"evals[{index}]"
        rows.append(_row(data, place, str(index + 1), path, "agent-skills"))
    return rows, skill_name


def _rows(doc: object, jsonl: list[tuple[str, object]] | None, path: Path) -> tuple[str, list[_Row], str | None]:
    """``(format, rows, skill_name)`` of a parsed file."""
    if jsonl is None and isinstance(doc, Mapping):
        if "evals" in doc:
            rows, skill_name = _agent_skills_rows(doc, path)
            return "agent-skills", rows, skill_name
        jsonl = [("line 1", doc)]  # a one-object JSON file: one row (and so too few tasks, said below)
    if jsonl is None:
        if not isinstance(doc, list):
            raise TaskFileError(f"{path}: expected a list of tasks (or an Agent Skills object with 'evals'), "
                                f"got {type_name(doc)}; see the README section 'Evolve your own skill'")
        jsonl = [(f"item {i}", item) for i, item in enumerate(doc, start=1)]
    if not jsonl:
        raise TaskFileError(f"{path}: holds no tasks; add at least {MIN_TASKS}")
    first = jsonl[0][1]
    fmt = "hermes" if isinstance(first, Mapping) and "task_input" in first else "harness"
    return fmt, [_row(data, place, str(i), path, fmt) for i, (place, data) in enumerate(jsonl, start=1)], None


# ------------------------------------------------------------------------------------------ tasks


def _answer(row: _Row) -> str:
    if row.answer is not None:
        return clip(row.answer, ANSWER_CHARS)
    answer_checks = [c for c in row.checks if c.role == "answer"] or list(row.checks)
    if answer_checks:
        return clip(answer_checks[0].expected(), ANSWER_CHARS)
    return clip(squash_ws(row.rubric or ""), ANSWER_CHARS)


def _task(row: _Row, path: Path) -> Task:
    rubric = row.rubric
    if rubric is None:
        if not row.checks:
            raise TaskFileError(f"{path}, {row.place}, field 'rubric': missing, and the task has no checks, "
                                f"so nothing says what a good answer is; add a rubric or checks")
        rubric = "A good answer gives: " + "; ".join(c.expected() for c in row.checks) + "."
    kind = row.checks[0].type if row.checks else "task"
    return Task(task_id=row.task_id, kind=kind, question=row.question, expected_behavior=rubric,
                answer=_answer(row), group=row.group if row.group is not None else row.task_id)


def _check_unique(rows: Sequence[_Row], path: Path) -> None:
    seen_ids: dict[str, str] = {}
    seen_questions: dict[str, str] = {}
    for row in rows:
        if row.task_id in seen_ids:
            raise _field_error(path, row.place, "id", f"duplicate id {row.task_id!r} (also at "
                               f"{seen_ids[row.task_id]})", "give every task its own id")
        seen_ids[row.task_id] = row.place
        key = squash_ws(row.question)
        if key in seen_questions:
            raise _field_error(path, row.place, "input", f"the same input as {seen_questions[key]}; grading is "
                               "keyed by the question text, so two tasks cannot ask the same question",
                               "reword one of them or merge them")
        seen_questions[key] = row.place


def _check_groups(tasks: Sequence[Task], path: Path) -> None:
    sizes = Counter(t.group for t in tasks)
    if len(sizes) < 3:
        raise TaskFileError(f"{path}: only {len(sizes)} group(s) ({', '.join(map(repr, sizes))}); trainset, "
                            f"valset and holdout each need a whole group, so give the tasks at least 3 groups "
                            f"(or leave 'group' out so each task is its own)")
    group, size = sizes.most_common(1)[0]
    if size * 2 > len(tasks):
        raise TaskFileError(f"{path}: group {group!r} holds {size} of {len(tasks)} tasks; splits keep a group "
                            f"whole and aim at 50/25/25 %, so no group may hold more than half of the tasks; "
                            f"split that group into smaller ones")


def load_tasks(path: str | Path) -> TaskFile:
    """Load a task file of any of the three formats (see the module docstring).

    Returns:
        a :class:`TaskFile` with the tasks in file order, their checks and tags by task id, the format and
        the file's sha256.

    Raises:
        TaskFileError: any problem, naming the file, the line / item / eval id, the field and the fix.
    """
    path = Path(path)
    text, digest = read_text(path)
    doc, jsonl = parse_document(text, path)
    fmt, rows, skill_name = _rows(doc, jsonl, path)
    if len(rows) > MAX_TASKS:
        raise TaskFileError(f"{path}: {len(rows):,} tasks is over the limit of {MAX_TASKS:,}; split the file")
    if len(rows) < MIN_TASKS:
        raise TaskFileError(f"{path}: only {len(rows)} task(s); at least {MIN_TASKS} are needed (one each for "
                            f"trainset, valset and holdout); add tasks")
    _check_unique(rows, path)
    tasks = tuple(_task(row, path) for row in rows)
    _check_groups(tasks, path)
    return TaskFile(path=path, format=fmt, sha256=digest, tasks=tasks,
                    checks={row.task_id: row.checks for row in rows},
                    tags={row.task_id: row.tags for row in rows}, skill_name=skill_name)
