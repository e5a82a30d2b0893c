"""The graders and optimizers a run is built from, by name.

A fitness name (``keyword``, ``judge``, ``verifier``, ``auto``) resolves to a grader; every holdout is graded by
the verifier, the keyword heuristic and, when the experiment has a judge LM, the judge.  The judge grades
procedure against the *baseline* skill text, so both variants and every child run of an experiment are judged by
the same standard: one :class:`~harness.engine.judge.JudgeGrader` per (judge LM, baseline text), built once and
shared (its cache with it).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable

import dspy

from harness.engine.gepa import GepaOptimizer
from harness.engine.graders import Grader, KeywordGrader, VerifierGrader
from harness.engine.judge import JudgeGrader
from harness.engine.miprov2 import Miprov2Optimizer
from harness.engine.optimizer import Optimizer, OptimizerSettings
from harness.engine.sources import TASKS_FILE, TaskSource
from verifiers import Verifier, get_verifier, has_verifier

#: optimizer name -> constructor taking :class:`OptimizerSettings` (every name of ``config.OPTIMIZER_CHOICES``)
OPTIMIZERS: dict[str, Callable[[OptimizerSettings], Optimizer]] = {"gepa": GepaOptimizer,
                                                                     "miprov2": Miprov2Optimizer}

_JUDGES: weakref.WeakKeyDictionary[dspy.LM, dict[str, JudgeGrader]] = weakref.WeakKeyDictionary()
_JUDGES_LOCK = threading.Lock()


def resolve_fitness(fitness: str, source: TaskSource | str) -> str:
    """The fitness actually used.  ``auto`` -> ``verifier`` when the tasks are objectively gradable (a
    registered verifier, or a task file with checks on every task), else ``keyword``.

    Args:
        source: the run's :class:`~harness.engine.sources.TaskSource`; a skill name stands for its registered
            verifier (or none).

    Raises:
        UnknownVerifierError: ``verifier`` for a skill name with no registered verifier.
        verifiers.taskfile.TaskFileError: ``verifier`` on a task file where some task has no checks (naming
            the file: :meth:`verifiers.taskfile.TaskFile.require_checked`).
    """
    if isinstance(source, str):
        gradable = has_verifier(source)
        if fitness == "verifier" and not gradable:
            get_verifier(source)  # raises UnknownVerifierError with the list of registered verifiers
    else:
        gradable = source.all_checked
        if fitness == "verifier" and not gradable:
            source.verifier.taskfile.require_checked()  # type: ignore[attr-defined]  # raises, naming the file
    if fitness == "auto":
        return "verifier" if gradable else "keyword"
    return fitness


def auto_fitness_note(fitness: str, source: TaskSource) -> str:
    """Why ``auto`` resolved as it did (for the summary and the tag ``fitness.auto``); ``""`` for any other
    fitness."""
    if fitness != "auto":
        return ""
    if source.all_checked:
        return "verifier: " + ("every task has checks" if source.kind == TASKS_FILE
                               else f"the {source.verifier.name} verifier grades every task")
    missing = len(source.verifier.taskfile.unchecked_ids)  # type: ignore[attr-defined]
    return f"keyword: {missing} task(s) of {source.path} have no checks"


def judge_grader(judge_lm: dspy.LM | None, skill_text: str) -> JudgeGrader:
    """The experiment's one judge for ``judge_lm`` and the baseline ``skill_text`` (built on first use).

    Raises:
        ValueError: no judge LM.
    """
    if judge_lm is None:
        raise ValueError("fitness=judge needs a judge model (judge_model)")
    with _JUDGES_LOCK:
        by_text = _JUDGES.setdefault(judge_lm, {})
        if skill_text not in by_text:
            by_text[skill_text] = JudgeGrader(judge_lm, skill_text)
        return by_text[skill_text]


def build_grader(fitness: str, verifier: Verifier, skill_text: str, judge_lm: dspy.LM | None) -> Grader:
    """The grader that drives optimisation for ``fitness`` (keyword, judge or verifier).

    Raises:
        ValueError: an unknown fitness, or ``judge`` without a judge LM.
    """
    if fitness == "verifier":
        return VerifierGrader(verifier)
    if fitness == "keyword":
        return KeywordGrader()
    if fitness == "judge":
        return judge_grader(judge_lm, skill_text)
    raise ValueError(f"fitness {fitness!r} has no grader; use keyword, judge, verifier or auto")


def holdout_graders(verifier: Verifier, skill_text: str, judge_lm: dspy.LM | None) -> list[Grader]:
    """Every grader a holdout is graded with: the verifier, keyword, and the judge when there is a judge LM."""
    graders: list[Grader] = [VerifierGrader(verifier), KeywordGrader()]
    if judge_lm is not None:
        graders.append(judge_grader(judge_lm, skill_text))
    return graders


def build_optimizer(name: str, settings: OptimizerSettings) -> Optimizer:
    """The optimizer registered as ``name``, constructed with ``settings``.

    Raises:
        ValueError: an unknown name (naming the registered ones), or settings the optimizer refuses.
    """
    try:
        factory = OPTIMIZERS[name]
    except KeyError:
        raise ValueError(f"unknown optimizer {name!r}; choose one of {', '.join(OPTIMIZERS)}") from None
    return factory(settings)
