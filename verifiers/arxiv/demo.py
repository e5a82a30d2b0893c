"""Demo rows of the arXiv verifier: how typical answers grade (data only; ``__main__`` prints them)."""

from __future__ import annotations

from verifiers.arxiv.verifier import ArxivVerifier
from verifiers.base import Grade

_FILLER = "It is a widely cited paper in machine learning and is often discussed in surveys. "
_VERBOSE_PAD = _FILLER * 30  # about 2,500 characters

#: (task_id, case label, output) rows of the demo table.
DEMO_CASES: tuple[tuple[str, str, str], ...] = (
    ("1706.03762/id", "correct", "1706.03762"),
    ("1706.03762/id", "correct, versioned", "arXiv:1706.03762v7"),
    ("1706.03762/id", "hedged", "Either 1706.03762 or 1706.03799."),
    ("1706.03762/id", "wrong", "1706.03799"),
    ("1706.03762/id", "evasive", "I'm not sure, I cannot browse arXiv."),
    ("1706.03762/id", "verbose correct", "The identifier is 1706.03762. " + _VERBOSE_PAD),
    ("1810.04805/title", "correct, fused", "BERT: Pretraining of Deep Bidirectional Transformers for "
                                           "Language Understanding"),
    ("1810.04805/title", "partial", "Deep Bidirectional Transformers for Language Understanding"),
    ("1810.04805/title", "hedged", '"BERT: Pre-training of Deep Bidirectional Transformers for Language '
                                   'Understanding" or "RoBERTa: A Robustly Optimized BERT Pretraining Approach"'),
    ("1810.04805/title", "wrong", "RoBERTa: A Robustly Optimized BERT Pretraining Approach"),
    ("1810.04805/title", "evasive", "I cannot recall the exact title."),
    ("1810.04805/title", "filler", "Great question! That is a well-known paper."),
    ("1810.04805/title", "empty", ""),
    ("1412.6980/author", "correct", "Diederik P. Kingma"),
    ("1412.6980/author", "correct, et al.", "Kingma et al."),
    ("1412.6980/author", "hedged", "Kingma or Ba"),
    ("1412.6980/author", "corrected", "Ba is the second author; the first is Kingma."),
    ("1412.6980/author", "wrong", "Jimmy Ba"),
    ("1412.6980/author", "evasive", "I don't know."),
    ("2005.14165/year", "correct", "2020"),
    ("2005.14165/year", "correct, in a date", "28.05.2020"),
    ("2005.14165/year", "hedged", "2019 or 2020"),
    ("2005.14165/year", "negated", "Not 2019; it is 2020."),
    ("2005.14165/year", "wrong", "2005"),
    ("2005.14165/year", "refusal with a number", "I'm sorry, I can't say: my knowledge cut-off is 2021."),
    ("2005.14165/year", "ID, no year", "2005.14165"),
    ("2005.14165/year", "verbose correct", "It was submitted in 2020. " + _FILLER * 60),
)

#: Column headers of :func:`demo_table`.
DEMO_HEADERS: tuple[str, ...] = ("task", "case", "correct", "formed", "concise", "composite", "feedback")


def demo_rows(verifier: ArxivVerifier | None = None) -> list[tuple[str, str, Grade]]:
    """``(task_id, case, grade)`` for every ``DEMO_CASES`` row."""
    v = verifier or ArxivVerifier()
    by_id = {task.task_id: task for task in v.tasks()}
    return [(task_id, case, v.score(by_id[task_id].question, output)) for task_id, case, output in DEMO_CASES]


def demo_table(rows: list[tuple[str, str, Grade]]) -> list[tuple[str, ...]]:
    """The demo rows as text cells, in ``DEMO_HEADERS`` order (scores to two places)."""
    return [(t, c, f"{g.correctness:.2f}", f"{g.well_formed:.0f}", f"{g.conciseness:.2f}", f"{g.composite:.2f}",
             g.feedback) for t, c, g in rows]
