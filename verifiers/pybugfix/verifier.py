"""The python-bugfix verifier: fix a small buggy function; graded by hidden tests run in a sandbox."""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from verifiers.base import Grade, Splits, Task, Verifier
from verifiers.pybugfix.extract import extract
from verifiers.pybugfix.grading import _clip, grade_answer, normalised_function, quote
from verifiers.pybugfix.sandbox import DEFAULT_LIMITS, Limits, Sandbox
from verifiers.pybugfix.tasks import SPECS, BugSpec
from verifiers.registry import register_verifier
from verifiers.splits import split_by_group

QUESTION_TEMPLATE = (
    "Fix the bug in the Python function `{name}` below. Keep its name and signature, and change as little "
    "as possible.\n\n```python\n{buggy}```\n\nFailing example: `{call}` should return `{expected}`, but {got}."
    "\n\nAnswer with one fenced python code block holding the whole fixed function."
)
RUBRIC_TEMPLATE = (
    "Returns the whole function {name}() with its signature unchanged, fixed so that {call} returns {expected} "
    "and the hidden tests pass, changing only the buggy line(s)."
)


def _got(outcome: str) -> str:
    return f"it {outcome}" if outcome.startswith("raises ") else f"it returns `{outcome}`"


def make_task(spec: BugSpec) -> Task:
    """The :class:`Task` of one spec: the question is the prompt, ``answer`` the fenced reference fix,
    ``group`` the bug family."""
    call, expected, outcome = spec.shown
    return Task(task_id=spec.task_id, kind=spec.family,
                question=QUESTION_TEMPLATE.format(name=spec.name, buggy=spec.buggy, call=call, expected=expected,
                                                  got=_got(outcome)),
                expected_behavior=RUBRIC_TEMPLATE.format(name=spec.name, call=call, expected=expected),
                answer=f"```python\n{spec.fixed}```", group=spec.family)


def _normalise_whitespace(text: str) -> str:
    return " ".join(text.split())


@register_verifier("python-bugfix")
class PythonBugfixVerifier(Verifier):
    """Objective grader for the python-bugfix skill.

    ``tasks()`` is the 64-task pool (16 bug families x 4, :mod:`verifiers.pybugfix.tasks`);
    ``build_dataset`` splits it by family; ``score`` extracts the function
    (:mod:`~verifiers.pybugfix.extract`), runs the hidden tests in the sandbox
    (:mod:`~verifiers.pybugfix.sandbox`) and grades (:mod:`~verifiers.pybugfix.grading`).

    Args:
        sandbox: a :class:`Sandbox`, or its mode (``auto``, ``required``, ``limits``); ``None`` reads
            ``$HARNESS_SANDBOX`` (default ``auto``).
        limits: resource limits when the sandbox is built here.
        specs: the task pool.

    Raises:
        ValueError: unknown sandbox mode.
        SandboxUnavailableError: mode ``required`` and bubblewrap cannot start.
    """

    #: the task LM's completion cap a run uses when ``--max-tokens`` is not set: a whole fixed function
    #: (prompt, fence and up to ~25 lines) does not fit the default 128 tokens
    min_max_tokens = 384

    def __init__(self, sandbox: Sandbox | str | None = None, limits: Limits = DEFAULT_LIMITS,
                 specs: Sequence[BugSpec] = SPECS) -> None:
        self.sandbox = sandbox if isinstance(sandbox, Sandbox) else Sandbox(sandbox, limits)
        self._specs = {spec.task_id: spec for spec in specs}
        self._tasks = tuple(make_task(spec) for spec in specs)
        self._index: dict[str, Task] = {}
        for task in self._tasks:
            self._index[task.question] = task
            self._index[_normalise_whitespace(task.question)] = task
        self._functions = {spec.task_id: (normalised_function(spec.buggy, spec.name),
                                          normalised_function(spec.fixed, spec.name)) for spec in specs}

    @property
    def sandbox_kind(self) -> str:
        """``"bubblewrap"`` or ``"limits"`` (probes on first use; the run tags it as ``sandbox``)."""
        return self.sandbox.kind

    def tasks(self) -> tuple[Task, ...]:
        """The task pool, in :data:`SPECS` order."""
        return self._tasks

    def build_dataset(self, num_cases: int | None = None, seed: int = 0) -> Splits:
        """Family-disjoint split of ``num_cases`` tasks (default all 64), about 50/25/25 %.

        Raises:
            DatasetError: when ``num_cases`` is below 3 or above the pool size.
        """
        return split_by_group(self._tasks, num_cases, seed)

    def task_for(self, task_input: str) -> Task | None:
        """The task whose question is ``task_input`` (whitespace-insensitive), or ``None``."""
        task = self._index.get(task_input)
        return task if task is not None else self._index.get(_normalise_whitespace(task_input))

    def spec_for(self, task_input: str) -> BugSpec | None:
        """The :class:`BugSpec` behind the question ``task_input``, or ``None``."""
        task = self.task_for(task_input)
        return None if task is None else self._specs[task.task_id]

    def score(self, task_input: str, output: str) -> Grade:
        """Grade ``output`` for the task asked by ``task_input`` (rules: :mod:`verifiers.pybugfix.grading`).

        Never raises for any ``output``; ``None`` reads as ``""``; an unknown ``task_input`` scores 0.
        Runs one sandboxed process (tens of milliseconds; at most ``Limits.wall_s``).
        """
        spec = self.spec_for(task_input if isinstance(task_input, str) else str(task_input))
        if spec is None:
            return Grade(0.0, 0.0, 0.0, 0.0,
                         _clip(f"no ground truth is registered for this task: {quote(str(task_input))}"))
        text = output if isinstance(output, str) else ("" if output is None else str(output))
        extraction = extract(text, spec.name, spec.buggy)
        run = self.sandbox.run(extraction.source, [call for call, _ in spec.hidden]) \
            if extraction.status == "ok" else None
        buggy_fn, fixed_fn = self._functions[spec.task_id]
        return grade_answer(spec, extraction, run, buggy_fn, fixed_fn)

    def score_many(self, pairs: Sequence[tuple[str, str]], max_workers: int | None = None) -> list[Grade]:
        """``[score(task_input, output) for task_input, output in pairs]``, up to ``max_workers`` at once
        (default ``os.cpu_count()``): threads, each waiting on its own sandboxed process."""
        if not pairs:
            return []
        workers = max(1, min(len(pairs), max_workers or os.cpu_count() or 1))
        _ = self.sandbox_kind  # probe once, before the threads
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="pybugfix") as pool:
            return list(pool.map(lambda pair: self.score(*pair), pairs))
