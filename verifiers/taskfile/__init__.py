"""Task files: any skill's tasks with declarative checks, graded in pure Python (issue 14).

* :func:`load_tasks` reads our JSONL / YAML format, Agent Skills ``evals/evals.json`` and Hermes golden JSONL
  into :class:`verifiers.base.Task` objects (a :class:`TaskFile`), raising :class:`TaskFileError`;
* :func:`find_task_file` finds a skill's task file (``--tasks``, then ``evals/tasks.jsonl``, ``evals/evals.json``);
* :class:`TaskFileVerifier` is the verifier of a task file (splits, grades, confusion labels);
* :mod:`verifiers.taskfile.checks` holds the check types (``CHECK_TYPES``), :mod:`verifiers.taskfile.grading`
  the grade rules, :mod:`verifiers.taskfile.report` the ``harness tasks check`` library and
  :mod:`verifiers.taskfile.generate` the ``harness tasks generate`` drafting.
"""

from verifiers.taskfile.checks import CHECK_TYPES, Check, build_check, register_check
from verifiers.taskfile.discover import SKILL_TASK_FILES, find_task_file
from verifiers.taskfile.errors import TaskFileError
from verifiers.taskfile.grading import grade_output
from verifiers.taskfile.loader import FORMATS, MAX_FILE_BYTES, MAX_TASKS, TaskFile, load_tasks
from verifiers.taskfile.verifier import TaskFileVerifier, verifier_for_skill

__all__ = [
    "CHECK_TYPES",
    "FORMATS",
    "MAX_FILE_BYTES",
    "MAX_TASKS",
    "SKILL_TASK_FILES",
    "Check",
    "TaskFile",
    "TaskFileError",
    "TaskFileVerifier",
    "build_check",
    "find_task_file",
    "grade_output",
    "load_tasks",
    "register_check",
    "verifier_for_skill",
]
