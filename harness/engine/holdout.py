"""Holdout evaluation: produce a variant's outputs once, then grade them with every grader.

Generation and grading are separate steps so one set of outputs can be graded by several graders
(and, in a side-by-side experiment, shared between runs).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass

import dspy

from harness.engine.graders import Grader, split_grade, unscored_feedback
from harness.engine.program import SkillProgram
from verifiers import Task

#: ``none`` is the no-skill control (:data:`harness.engine.program.CONTROL_INSTRUCTIONS`, no skill body)
VARIANTS: tuple[str, ...] = ("baseline", "evolved", "none")


@dataclass(frozen=True)
class Output:
    """One task LM output: ``text`` is ``""`` and ``error`` set when the call failed."""

    task: Task
    text: str
    error: str = ""


@dataclass(frozen=True)
class HoldoutRow:
    """One grade of one output: a row of the per-task holdout table.

    ``correctness`` .. ``composite`` are floats in [0, 1], or NaN when the grader left it unscored.
    """

    task_id: str
    kind: str
    paper_id: str
    variant: str
    grader: str
    output: str
    correctness: float
    well_formed: float
    conciseness: float
    composite: float
    feedback: str
    error: str = ""

    def to_dict(self) -> dict[str, str | float]:
        """Plain dict for a table row."""
        return asdict(self)


def holdout_threads(num_threads: int, verifier: object) -> int:
    """Worker threads of a holdout evaluation: ``num_threads``, raised to the number of cores for a verifier
    whose grading is process-bound (it has ``score_many``: python-bugfix runs each answer in a sandboxed
    process), so its gradings do not wait on one another (issue 15: grading runs in parallel up to the
    number of cores).  The embedded task LM still answers one call at a time (its own lock)."""
    if hasattr(verifier, "score_many"):
        return max(num_threads, os.cpu_count() or 1)
    return num_threads


def generate(program: SkillProgram, tasks: Sequence[Task], num_threads: int = 1,
             on_done: Callable[[], None] | None = None) -> list[Output]:
    """Run ``program`` on every task (in order); a failed call yields an :class:`Output` with ``error``.

    Args:
        num_threads: worker threads; DSPy settings are copied into each worker by ``dspy.context``.
        on_done: called after each task (progress reporting).
    """
    settings = dspy.settings.config.copy()

    def one(task: Task) -> Output:
        try:
            with dspy.context(**settings):
                pred = program(question=task.question)
            return Output(task, str(pred.answer or ""))
        except Exception as exc:  # an example's failure is a failure grade, counted and kept
            return Output(task, "", f"{type(exc).__name__}: {exc}")
        finally:
            if on_done is not None:
                on_done()

    if num_threads <= 1:
        return [one(t) for t in tasks]
    with ThreadPoolExecutor(max_workers=num_threads) as pool:
        return list(pool.map(one, tasks))


def grade(outputs: Sequence[Output], graders: Sequence[Grader], variant: str) -> list[HoldoutRow]:
    """One :class:`HoldoutRow` per output × grader; an unscored grade becomes NaN with its reason."""
    rows = []
    for out in outputs:
        for grader in graders:
            try:
                g, why = split_grade(grader.grade(out.task, out.text))
                reason = "" if g else unscored_feedback(grader.name, why)
            except Exception as exc:  # a grader's LM failing on one output leaves that grade unscored, with why
                g, reason = None, unscored_feedback(grader.name, f"{type(exc).__name__}: {exc}")
            nan = float("nan")
            values = tuple(float(v) for v in (g.correctness, g.well_formed, g.conciseness, g.composite)) if g \
                else (nan, nan, nan, nan)
            feedback = g.feedback if g else reason
            rows.append(HoldoutRow(out.task.task_id, out.task.kind, out.task.group, variant, grader.name,
                                   out.text, *values, feedback=feedback, error=out.error))
    return rows


def summarize(rows: Sequence[HoldoutRow]) -> dict[str, float]:
    """Holdout metrics per grader: ``holdout.<grader>.<variant>`` (mean composite),
    ``holdout.<grader>.<variant>.correct_share`` (share with correctness 1), ``holdout.<grader>.delta``
    (evolved − baseline) and ``holdout.<grader>.<variant>.unscored`` (count); NaN grades are left out of means.
    """
    metrics: dict[str, float] = {}
    graders = sorted({r.grader for r in rows})
    for grader in graders:
        for variant in VARIANTS:
            sel = [r for r in rows if r.grader == grader and r.variant == variant]
            if not sel:
                continue
            scored = [r for r in sel if r.composite == r.composite]
            key = f"holdout.{grader}.{variant}"
            metrics[key] = sum(r.composite for r in scored) / len(scored) if scored else float("nan")
            metrics[f"{key}.correct_share"] = (sum(r.correctness >= 1.0 for r in scored) / len(scored)
                                               if scored else float("nan"))
            metrics[f"{key}.unscored"] = float(len(sel) - len(scored))
        if f"holdout.{grader}.baseline" in metrics and f"holdout.{grader}.evolved" in metrics:
            metrics[f"holdout.{grader}.delta"] = (metrics[f"holdout.{grader}.evolved"]
                                                  - metrics[f"holdout.{grader}.baseline"])
    return metrics
