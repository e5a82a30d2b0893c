"""Instruction proposers for GEPA.

``llm`` is DSPy's own reflective proposer driven by the reflection LM.  ``feedback`` is a deterministic,
offline proposer: it re-scores the reflective minibatch with the fitness metric, takes the distinct
feedback of the worst-scored examples, and folds it into the skill text as a "lessons" section under a
size cap.  It makes no LM call, so it works with no reflection model at all.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from harness.config import LESSONS_HEADING, PROPOSER_CHOICES, resolve_proposer

__all__ = ["LESSONS_HEADING", "PROPOSER_CHOICES", "FeedbackProposer", "join_lessons", "resolve_proposer",
           "shorten", "split_lessons"]

#: longest lesson kept, in characters (cut at a word boundary)
MAX_LESSON_CHARS = 120


def shorten(text: str, limit: int = MAX_LESSON_CHARS) -> str:
    """``text`` on one line, at most ``limit`` characters.

    A longer text keeps its leading clauses (graders' feedback separates them with ``"; "``) when they fill
    at least half of ``limit``, so a lesson stays a whole statement; otherwise it is cut at a word boundary
    and ``…`` marks the cut.
    """
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    clause_end = flat[: limit + 1].rfind("; ")
    if clause_end >= limit // 2:
        return flat[:clause_end]
    return flat[: limit - 1].rsplit(" ", 1)[0] + "…"


def split_lessons(text: str) -> tuple[str, list[str]]:
    """Split a skill body into ``(text before the lessons section, lesson bullet texts)``."""
    head, sep, tail = text.partition("\n" + LESSONS_HEADING + "\n")
    if not sep:
        return text, []
    lessons = [line[2:].strip() for line in tail.splitlines() if line.startswith("- ")]
    return head, lessons


def join_lessons(head: str, lessons: Sequence[str]) -> str:
    """Inverse of :func:`split_lessons`; no section when ``lessons`` is empty."""
    if not lessons:
        return head
    bullets = "\n".join(f"- {lesson}" for lesson in lessons)
    return f"{head.rstrip()}\n\n{LESSONS_HEADING}\n{bullets}\n"


class FeedbackProposer:
    """Deterministic GEPA ``ProposalFn`` that folds worst-case feedback into the instructions.

    Args:
        score_fn: ``(inputs, outputs) -> (score, feedback)`` for one reflective record, i.e. the fitness
            metric applied to the record's ``Inputs`` and ``Generated Outputs``.
        max_chars: size cap of a proposed instruction text in characters; lessons that do not fit are
            dropped, newest first kept.
        max_new: how many new lessons one proposal adds at most.
    """

    def __init__(self, score_fn: Callable[[Mapping[str, Any], Any], tuple[float, str]], max_chars: int,
                 max_new: int = 3) -> None:
        if max_chars <= 0:
            raise ValueError("max_chars must be positive")
        self.score_fn = score_fn
        self.max_chars = max_chars
        self.max_new = max_new

    def _worst_feedback(self, records: Sequence[Mapping[str, Any]]) -> list[str]:
        scored = []
        for i, record in enumerate(records):
            score, feedback = self.score_fn(record.get("Inputs", {}), record.get("Generated Outputs", {}))
            if score < 1.0:
                scored.append((score, i, shorten(str(feedback))))
        scored.sort()
        distinct: list[str] = []
        for _, _, feedback in scored:
            if feedback and feedback not in distinct:
                distinct.append(feedback)
        return distinct[: self.max_new]

    def propose(self, text: str, records: Sequence[Mapping[str, Any]]) -> str:
        """A new instruction text: ``text`` with the worst-case feedback folded in under the cap."""
        head, lessons = split_lessons(text)
        new = [f for f in self._worst_feedback(records) if f not in lessons]
        merged = new + lessons
        while merged and len(join_lessons(head, merged)) > self.max_chars:
            merged.pop()
        return join_lessons(head, merged)

    def __call__(self, candidate: dict[str, str], reflective_dataset: Mapping[str, Sequence[Mapping[str, Any]]],
                 components_to_update: list[str]) -> dict[str, str]:
        """GEPA's ``ProposalFn``: new texts for ``components_to_update``."""
        return {name: self.propose(candidate[name], reflective_dataset.get(name, ()))
                for name in components_to_update}
