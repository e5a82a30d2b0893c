"""Library half of ``harness tasks generate``: draft tasks from a skill's text with an LM, through DSPy.

The drafts carry an ``input`` and a ``rubric`` only (no checks): an author reviews them, edits them and adds
checks.  A small model drafts poor tasks; use a capable one (any DSPy / LiteLLM model string).
"""

from __future__ import annotations

import dspy
import pydantic

from verifiers.taskfile.extract import normalise

#: Rounds of asking for more when the LM returns duplicates or too few tasks.
MAX_ROUNDS = 3


class TaskDraft(pydantic.BaseModel):
    """One drafted task."""

    input: str
    rubric: str


class DraftTasks(dspy.Signature):
    """Draft evaluation tasks for an agent skill.  Each task is a realistic request a user could make that
    the skill is meant to handle, with a rubric sentence saying what a good answer does (checkable facts
    where possible).  Every task must differ from the others and from the ones to avoid."""

    skill_text: str = dspy.InputField(desc="the SKILL.md the tasks exercise")
    count: int = dspy.InputField(desc="how many tasks to draft")
    avoid: list[str] = dspy.InputField(desc="inputs already drafted; do not repeat or paraphrase them")
    tasks: list[TaskDraft] = dspy.OutputField(desc="the drafted tasks")


def draft_tasks(skill_text: str, lm: dspy.LM, n: int, max_rounds: int = MAX_ROUNDS) -> list[dict[str, str]]:
    """Ask ``lm`` for ``n`` tasks for the skill ``skill_text``; returns up to ``n`` rows of our format.

    Rows are ``{"id": "draft-<k>", "input": ..., "rubric": ...}`` (k from 1), deduplicated by normalised input
    (:func:`verifiers.taskfile.extract.normalise`), drafts with an empty input or rubric dropped.  When a
    round returns fewer new tasks than still needed, it asks again (at most ``max_rounds`` rounds), passing
    the inputs drafted so far to avoid; the result may hold fewer than ``n`` rows.

    Raises:
        ValueError: ``n`` < 1 or ``skill_text`` empty.  Errors of the LM call or of parsing its answer
        (DSPy's) propagate.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n={n!r}: pass the number of tasks to draft, an integer of at least 1")
    if not skill_text.strip():
        raise ValueError("skill_text is empty: pass the SKILL.md text the tasks should exercise")
    predict = dspy.Predict(DraftTasks)
    rows: list[dict[str, str]] = []
    seen: set[str] = set()
    for _ in range(max_rounds):
        need = n - len(rows)
        if need <= 0:
            break
        with dspy.context(lm=lm):
            drafts = predict(skill_text=skill_text, count=need, avoid=[r["input"] for r in rows]).tasks
        for draft in drafts or []:
            key = normalise(draft.input)
            if not key or not draft.rubric.strip() or key in seen or len(rows) >= n:
                continue
            seen.add(key)
            rows.append({"id": f"draft-{len(rows) + 1}", "input": draft.input.strip(),
                         "rubric": draft.rubric.strip()})
    return rows
