"""The arXiv verifier: 17 landmark ML papers, four checkable facts each, graded by regular expressions.

Modules: :mod:`~verifiers.arxiv.papers` (ground truth and tasks), :mod:`~verifiers.arxiv.normalise`
(normalisation and word lists), :mod:`~verifiers.arxiv.matching` (what a response offers, echoes, refuses or
retracts), :mod:`~verifiers.arxiv.grading` (the per-kind rules), :mod:`~verifiers.arxiv.verifier`
(:class:`ArxivVerifier`, registered as ``arxiv``), :mod:`~verifiers.arxiv.live` (the arXiv API check),
:mod:`~verifiers.arxiv.demo` (demo rows) and ``__main__`` (``python -m verifiers.arxiv --demo`` /
``--validate``, the only code that prints).  Grading is pure Python; composite = 0.5 correctness + 0.3
well_formed + 0.2 conciseness, so: correct and concise 1.00, correct but hedged 0.75, confidently wrong 0.50,
evasive or empty 0.00.
"""

from __future__ import annotations

from typing import Any

from verifiers.arxiv.demo import DEMO_CASES, demo_rows, demo_table
from verifiers.arxiv.grading import (
    CONCISE_CHARS,
    GRADERS,
    HEDGED_CREDIT,
    MAX_CHARS,
    PARTIAL_TITLE_MIN_SHARE,
    PARTIAL_TITLE_WEIGHT,
    Verdict,
    conciseness,
    grade_author,
    grade_id,
    grade_title,
    grade_year,
)
from verifiers.arxiv.live import (
    API_TIMEOUT_S,
    API_URL_ENV,
    ARXIV_API_URL,
    ArxivApiError,
    compare_facts,
    fetch_atom,
    parse_atom,
    query_url,
    validate,
)
from verifiers.arxiv.matching import (
    ID_RE,
    MAX_GRADED_CHARS,
    REFUSAL_RE,
    STOP_WORDS,
    YEAR_RE,
    PaperMatcher,
    Response,
    content_words,
    prepare,
)
from verifiers.arxiv.normalise import fold, quote, squash
from verifiers.arxiv.papers import KINDS, PAPERS, QUESTION_TEMPLATES, RUBRIC_TEMPLATES, Paper, make_tasks
from verifiers.arxiv.verifier import ArxivVerifier


def __getattr__(name: str) -> Any:
    # The click command lives in __main__ (the only module that prints); importing it eagerly here would make
    # ``python -m verifiers.arxiv`` warn that the module was imported before being run.
    if name in ("main", "print_demo"):
        from verifiers.arxiv import __main__ as cli

        return getattr(cli, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "API_TIMEOUT_S", "API_URL_ENV", "ARXIV_API_URL", "CONCISE_CHARS", "DEMO_CASES", "GRADERS", "HEDGED_CREDIT",
    "ID_RE", "KINDS", "MAX_CHARS", "MAX_GRADED_CHARS", "PAPERS", "PARTIAL_TITLE_MIN_SHARE", "PARTIAL_TITLE_WEIGHT",
    "QUESTION_TEMPLATES", "REFUSAL_RE", "RUBRIC_TEMPLATES", "STOP_WORDS", "YEAR_RE", "ArxivApiError",
    "ArxivVerifier", "Paper", "PaperMatcher", "Response", "Verdict", "compare_facts", "conciseness",
    "content_words", "demo_rows", "demo_table", "fetch_atom", "fold", "grade_author", "grade_id", "grade_title",
    "grade_year", "main", "make_tasks", "parse_atom", "prepare", "print_demo", "query_url", "quote", "squash",
    "validate",
]
