"""A :class:`verifiers.base.Verifier` built from a task file: its tasks, its splits, its checks."""

from __future__ import annotations

from pathlib import Path

from verifiers.base import Grade, Splits, Task, Verifier
from verifiers.splits import split_by_group
from verifiers.taskfile.checks import Choice, ToolCall
from verifiers.taskfile.discover import find_task_file
from verifiers.taskfile.extract import Output, quote
from verifiers.taskfile.grading import Plan, grade_planned, plan_for
from verifiers.taskfile.loader import TaskFile, load_tasks


class TaskFileVerifier(Verifier):
    """Objective grader for a task file's checks (see :mod:`verifiers.taskfile.grading` for the rules).

    Not in the verifier registry: the harness builds it from the task file it found
    (:func:`verifiers.taskfile.discover.find_task_file`, :func:`verifiers.taskfile.loader.load_tasks`).
    ``name`` is the Agent Skills ``skill_name`` when given, else the skill folder's name for a file in
    ``<skill>/evals/``, else the file's stem.
    """

    def __init__(self, taskfile: TaskFile) -> None:
        self.taskfile = taskfile
        path = taskfile.path
        self.name = taskfile.skill_name or (path.parent.parent.name if path.parent.name == "evals" else path.stem)
        #: question exactly as in the file -> (question, grading plan, task id): the look-up of every grade
        self._graded: dict[str, tuple[str, Plan, str]] = {t.question: self._entry(t) for t in taskfile.tasks}

    def _entry(self, task: Task) -> tuple[str, Plan, str]:
        return task.question, plan_for(self.taskfile.checks.get(task.task_id, ())), task.task_id

    def tasks(self) -> tuple[Task, ...]:
        """All tasks of the file, in file order."""
        return self.taskfile.tasks

    def build_dataset(self, num_cases: int | None = None, seed: int = 0) -> Splits:
        """Group-disjoint split of ``num_cases`` tasks (default all), by :func:`verifiers.splits.split_by_group`.

        Raises:
            DatasetError: when ``num_cases`` is below 3 or above the number of tasks.
        """
        return split_by_group(self.taskfile.tasks, num_cases, seed)

    @property
    def all_checked(self) -> bool:
        """Whether every task has checks (``fitness=verifier`` needs it; ``auto`` picks verifier only then)."""
        return self.taskfile.all_checked

    @property
    def labelled(self) -> bool:
        """Whether some task has a ``choice`` or ``tool_call`` check (so confusion matrices apply)."""
        return any(isinstance(c, Choice | ToolCall) for checks in self.taskfile.checks.values() for c in checks)

    def gradable(self, task_input: str) -> bool:
        """Whether the task asked by ``task_input`` is known and has checks (the harness records the others
        as unscored rather than 0)."""
        return bool(self.taskfile.checks_for(task_input if isinstance(task_input, str) else str(task_input)))

    def score(self, task_input: str, output: str) -> Grade:
        """Grade ``output`` for the task asked by ``task_input`` with that task's checks.

        Never raises.  An unknown ``task_input``, or a task without checks, scores 0 with feedback saying so.
        """
        question = task_input if isinstance(task_input, str) else str(task_input)
        known = self._graded.get(question)
        if known is None:
            task = self.taskfile.task_for(question)
            if task is None:
                return Grade(0.0, 0.0, 0.0, 0.0, f"no ground truth is registered for this task: {quote(question)}")
            known = self._entry(task)
        asked, plan, task_id = known
        if not plan.n_checks:
            return Grade(0.0, 0.0, 0.0, 0.0, f"task {task_id!r} has no checks in {self.taskfile.path.name}; "
                                             "grade it with keyword or judge fitness, or add checks")
        return grade_planned(plan, asked, output)

    def labels(self, task_input: str, output: str) -> tuple[str, str] | None:
        """``(expected label, answered label)`` of the task's first ``choice`` or ``tool_call`` check, or
        ``None`` when the task has none (or is unknown).

        The answered label is the one label named (the tool called), ``"(hedged)"`` when several are, and
        ``"(none)"`` when none is.
        """
        question = task_input if isinstance(task_input, str) else str(task_input)
        for check in self.taskfile.checks_for(question):
            if isinstance(check, Choice | ToolCall):
                text = output if isinstance(output, str) else ("" if output is None else str(output))
                result = check.evaluate(Output(text, question))
                return check.expected_label, result.label or "(none)"
        return None


def verifier_for_skill(skill_dir: str | Path | None, explicit: str | Path | None = None) -> TaskFileVerifier | None:
    """The task-file verifier of a skill: :func:`~verifiers.taskfile.discover.find_task_file` then
    :func:`~verifiers.taskfile.loader.load_tasks`; ``None`` when there is no task file (fall back to a
    registered verifier).

    Raises:
        TaskFileError: an explicit path that is not a file, or a task file that does not load.
    """
    path = find_task_file(skill_dir, explicit)
    return None if path is None else TaskFileVerifier(load_tasks(path))
