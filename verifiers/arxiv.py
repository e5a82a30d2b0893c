"""The arXiv verifier: 17 landmark ML papers, four checkable facts each, graded by regex.

Ground truth (``PAPERS``) is the arXiv ID, the exact title and the first author as listed on arXiv;
``python -m verifiers.arxiv --validate`` re-checks it against the live arXiv API.  The submission year
is derived from the identifier: arXiv identifiers are ``YYMM.NNNN`` (to 2014-12) or ``YYMM.NNNNN``
(from 2015-01) with an optional ``vN`` version suffix, so the year is ``2000 + YY``
(source: https://info.arxiv.org/help/arxiv_identifier.html).

Every paper yields four tasks (68 in all): ``id`` (title -> ID), ``title`` (ID -> exact title),
``author`` (title and ID -> first author) and ``year`` (ID -> submission year).  Grading is pure
Python (regular expressions and normalisation, no LLM); composite = 0.5 correctness + 0.3 well_formed
+ 0.2 conciseness, so: correct and concise 1.00, correct but hedged 0.75, confidently wrong 0.50,
evasive or empty 0.00.

CLI: ``python -m verifiers.arxiv --demo`` prints how sample answers are graded;
``python -m verifiers.arxiv --validate`` checks the facts against ``http://export.arxiv.org/api/query``.
"""

from __future__ import annotations

import re
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from http.client import HTTPException

import click

from verifiers.base import Grade, Splits, Task, Verifier, composite_score
from verifiers.registry import register_verifier
from verifiers.splits import split_by_group

if __name__ == "__main__":
    # ``python -m verifiers.arxiv`` executes this file as ``__main__``.  Re-enter through the package
    # module so that ArxivVerifier is defined and registered exactly once (as verifiers.arxiv's).
    from verifiers.arxiv import main as _package_main

    raise SystemExit(_package_main())

# --------------------------------------------------------------------------------------------------
# Facts
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Paper:
    """One paper's ground truth as listed on arXiv.

    Attributes:
        arxiv_id: identifier without version, ``YYMM.NNNN`` or ``YYMM.NNNNN``.
        title: the exact arXiv title (whitespace-normalised).
        first_author: the first author's name as arXiv lists it.
    """

    arxiv_id: str
    title: str
    first_author: str

    @property
    def yymm(self) -> str:
        """The ``YYMM`` prefix of the identifier (year and month of submission)."""
        return self.arxiv_id[:4]

    @property
    def year(self) -> int:
        """Submission year, ``2000 + YY`` of the identifier's ``YYMM`` prefix."""
        return 2000 + int(self.arxiv_id[:2])

    @property
    def last_name(self) -> str:
        """The first author's last name (last whitespace-separated word of ``first_author``)."""
        return self.first_author.split()[-1]


#: Ground truth, checked against arXiv (``--validate``).  Order is the pool order.
PAPERS: tuple[Paper, ...] = (
    Paper("1301.3781", "Efficient Estimation of Word Representations in Vector Space", "Tomas Mikolov"),
    Paper("1406.2661", "Generative Adversarial Networks", "Ian J. Goodfellow"),
    Paper("1412.6980", "Adam: A Method for Stochastic Optimization", "Diederik P. Kingma"),
    Paper("1503.02531", "Distilling the Knowledge in a Neural Network", "Geoffrey Hinton"),
    Paper("1512.03385", "Deep Residual Learning for Image Recognition", "Kaiming He"),
    Paper("1706.03762", "Attention Is All You Need", "Ashish Vaswani"),
    Paper("1810.04805", "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding",
          "Jacob Devlin"),
    Paper("2005.14165", "Language Models are Few-Shot Learners", "Tom B. Brown"),
    Paper("2006.11239", "Denoising Diffusion Probabilistic Models", "Jonathan Ho"),
    Paper("2010.11929", "An Image is Worth 16x16 Words: Transformers for Image Recognition at Scale",
          "Alexey Dosovitskiy"),
    Paper("2103.00020", "Learning Transferable Visual Models From Natural Language Supervision",
          "Alec Radford"),
    Paper("2106.09685", "LoRA: Low-Rank Adaptation of Large Language Models", "Edward J. Hu"),
    Paper("2201.11903", "Chain-of-Thought Prompting Elicits Reasoning in Large Language Models", "Jason Wei"),
    Paper("2203.02155", "Training language models to follow instructions with human feedback", "Long Ouyang"),
    Paper("2310.03714", "DSPy: Compiling Declarative Language Model Calls into Self-Improving Pipelines",
          "Omar Khattab"),
    Paper("2402.03300", "DeepSeekMath: Pushing the Limits of Mathematical Reasoning in Open Language Models",
          "Zhihong Shao"),
    Paper("2507.19457", "GEPA: Reflective Prompt Evolution Can Outperform Reinforcement Learning",
          "Lakshya A Agrawal"),
)

#: Task kinds, in pool order within each paper.
KINDS: tuple[str, ...] = ("id", "title", "author", "year")

QUESTION_TEMPLATES: dict[str, str] = {
    "id": 'What is the arXiv identifier of the paper titled "{title}"?',
    "title": "What is the exact title of the arXiv paper {arxiv_id}?",
    "author": 'Who is the first author of the paper "{title}" (arXiv:{arxiv_id})?',
    "year": "In which year was the arXiv paper {arxiv_id} submitted?",
}

RUBRIC_TEMPLATES: dict[str, str] = {
    "id": "States the arXiv identifier {arxiv_id} of '{title}' and nothing else, without listing other "
          "candidate identifiers.",
    "title": "Gives the exact title '{title}' of arXiv paper {arxiv_id}, committing to a single title.",
    "author": "Names {first_author} as the first author of '{title}' (arXiv {arxiv_id}).",
    "year": "States {year} as the submission year of arXiv paper {arxiv_id} (the YYMM prefix {yymm} means "
            "2000 + {yy}) and gives a single year.",
}

# --------------------------------------------------------------------------------------------------
# Grading constants
# --------------------------------------------------------------------------------------------------

#: Conciseness is 1.0 up to this many characters of (stripped) output ...
CONCISE_CHARS = 800
#: ... and falls linearly to 0.0 at this many.
MAX_CHARS = 4000
#: Only this many leading characters are searched for an answer (bounds the work on huge outputs).
MAX_GRADED_CHARS = 200_000
#: Correctness when the right ID / year is given among other distinct candidates.
HEDGED_CREDIT = 0.5
#: A partial title needs at least this share of the title's content words ...
PARTIAL_TITLE_MIN_SHARE = 0.5
#: ... and earns that share, capped here so only the full title scores 1.
PARTIAL_TITLE_CAP = 0.9
#: Feedback quotes at most this many characters of the response; feedback stays below FEEDBACK_MAX.
QUOTE_CHARS = 80
FEEDBACK_MAX = 299

#: Words ignored when counting a title's content words.
STOP_WORDS: frozenset[str] = frozenset(
    "a an the of in into on at to for from by with and or is are be can its it all you we our".split()
)
#: Last names that are also common English words: the given name must appear too ("Kaiming He").
AMBIGUOUS_LAST_NAMES: frozenset[str] = frozenset({"he"})

#: An arXiv identifier, base ``YYMM.NNNN(N)`` in group 1, optional ``vN``; not part of a longer number.
ID_RE = re.compile(
    r"(?<![0-9])(?<![0-9]\.)([0-9]{2}(?:0[1-9]|1[0-2])\.[0-9]{4,5})(?:v[0-9]+)?(?![0-9])(?!\.[0-9])"
)
#: Decimal numbers (ID-shaped substrings like 2005.14165v4) are skipped; group 1 is a whole-word year.
#: The skip branch starts only at the start of a digit run and is possessive: linear on long digit runs.
YEAR_RE = re.compile(
    r"(?<![0-9])[0-9]++(?:\.[0-9]++)++(?:v[0-9]+)?|(?<![0-9A-Za-z_])((?:19|20)[0-9]{2})(?![0-9A-Za-z_])"
)
#: Something title- or name-like: at least one letter in any script.
LETTER_RE = re.compile(r"[^\W\d_]")
#: Phrases of a non-answer (used only when nothing correct was found).
EVASION_RE = re.compile(
    r"\b(?:i\s+(?:do\s*n[o']?t|don[’']?t|cannot|can[’']?t)\s+(?:know|recall|remember)|not\s+sure|no\s+idea"
    r"|i[’']?m\s+sorry|i\s+am\s+sorry|(?:cannot|can[’']?t|can\s+not|unable\s+to|could\s*n[o’']?t)\s+"
    r"(?:determine|find|recall|verify|answer|provide|say|confirm|access|browse|look))\b",
    re.IGNORECASE,
)
_NON_ALNUM_RE = re.compile(r"[\W_]+")
_WORD_PART_RE = re.compile(r"[0-9]+|[^\W\d_]+")
_TITLE_TRANSLATION = str.maketrans({"×": "x"})  # "16×16" reads as "16x16"
_GAP = r"[\W_]*"  # optional separator inside a hyphen-fused word: "pre-training" / "pre training"


# --------------------------------------------------------------------------------------------------
# Tasks
# --------------------------------------------------------------------------------------------------


def _fields(paper: Paper) -> dict[str, str | int]:
    return {"arxiv_id": paper.arxiv_id, "title": paper.title, "first_author": paper.first_author,
            "year": paper.year, "yymm": paper.yymm, "yy": paper.arxiv_id[:2]}


def _answer(paper: Paper, kind: str) -> str:
    return {"id": paper.arxiv_id, "title": paper.title, "author": paper.first_author,
            "year": str(paper.year)}[kind]


def make_tasks(paper: Paper) -> tuple[Task, ...]:
    """The four tasks (in ``KINDS`` order) of one paper; ``task_id`` is ``"<arxiv_id>/<kind>"``."""
    fields = _fields(paper)
    return tuple(
        Task(task_id=f"{paper.arxiv_id}/{kind}", kind=kind,
             question=QUESTION_TEMPLATES[kind].format(**fields),
             expected_behavior=RUBRIC_TEMPLATES[kind].format(**fields),
             answer=_answer(paper, kind), group=paper.arxiv_id)
        for kind in KINDS
    )


# --------------------------------------------------------------------------------------------------
# Normalisation and matching
# --------------------------------------------------------------------------------------------------


def fold(text: str) -> str:
    """Case-folded text with look-alike characters mapped (``×`` -> ``x``)."""
    return text.casefold().translate(_TITLE_TRANSLATION)


def squash(text: str) -> str:
    """``fold(text)`` without any non-alphanumeric characters: case, punctuation, spacing and hyphens
    no longer matter ("Pre-training" = "Pretraining" = "pre training" -> ``"pretraining"``)."""
    return _NON_ALNUM_RE.sub("", fold(text))


def _word_pattern(word: str) -> re.Pattern[str]:
    """Whole-word pattern (on folded text) of one title or name word, hyphen-fused spellings allowed."""
    parts = _WORD_PART_RE.findall(fold(word))
    return re.compile(r"(?<![^\W_])" + _GAP.join(map(re.escape, parts)) + r"(?![^\W_])")


def content_words(title: str) -> tuple[str, ...]:
    """Distinct content words of a title, in order: whitespace-separated words, squashed, minus
    ``STOP_WORDS``.  A hyphenated compound ("Chain-of-Thought") is one word."""
    words = (squash(word) for word in title.split())
    return tuple(dict.fromkeys(word for word in words if word and word not in STOP_WORDS))


def conciseness(n_chars: int) -> float:
    """Length credit in [0, 1]: 1.0 up to ``CONCISE_CHARS`` characters, linear to 0.0 at ``MAX_CHARS``."""
    if n_chars <= CONCISE_CHARS:
        return 1.0
    if n_chars >= MAX_CHARS:
        return 0.0
    return (MAX_CHARS - n_chars) / (MAX_CHARS - CONCISE_CHARS)


@dataclass(frozen=True)
class PaperMatcher:
    """Precompiled matchers for one paper (built once per verifier, used on every grade)."""

    paper: Paper
    squashed_title: str
    title_words: tuple[tuple[str, re.Pattern[str]], ...]
    author_patterns: tuple[re.Pattern[str], ...]

    @classmethod
    def build(cls, paper: Paper) -> PaperMatcher:
        """Compile the title and author patterns of ``paper``."""
        words = {squash(w): w for w in paper.title.split()}
        title_words = tuple((key, _word_pattern(words[key])) for key in content_words(paper.title))
        names = [paper.last_name]
        if paper.last_name.casefold() in AMBIGUOUS_LAST_NAMES:
            names.append(paper.first_author.split()[0])
        return cls(paper, squash(paper.title), title_words, tuple(_word_pattern(n) for n in names))


# --------------------------------------------------------------------------------------------------
# Per-kind grading: (matcher, text) -> (correctness, well_formed, feedback)
# --------------------------------------------------------------------------------------------------

Verdict = tuple[float, float, str]


def quote(text: str) -> str:
    """At most ``QUOTE_CHARS`` characters of ``text``, whitespace collapsed, in double quotes."""
    snippet = " ".join(text.lstrip()[: QUOTE_CHARS * 4].split())
    if len(snippet) > QUOTE_CHARS:
        snippet = snippet[: QUOTE_CHARS - 1] + "…"
    return f'"{snippet}"' if snippet else "(empty)"


def _listing(values: Sequence[str], limit: int = 3) -> str:
    shown = ", ".join(values[:limit])
    return shown if len(values) <= limit else f"{shown} (+{len(values) - limit} more)"


def _is_answer_like(text: str) -> bool:
    """Some letters, and not a stock non-answer ("I don't know", "I cannot determine ...")."""
    return LETTER_RE.search(text) is not None and EVASION_RE.search(text) is None


def _no_answer(expected: str, shape: str, text: str) -> Verdict:
    return 0.0, 0.0, (f"expected {expected}; no answer of the expected shape ({shape}) was found; "
                      f"response: {quote(text)}")


def _committed_or_hedged(found: list[str], want: str, what: str, hint: str = "") -> Verdict:
    """The shared rule of the ID and year kinds, for a non-empty list of distinct values ``found``: the right
    value alone is correct (1), the right value among others is hedging (``HEDGED_CREDIT``), only wrong
    values are confidently wrong (0, but well formed)."""
    if found == [want]:
        return 1.0, 1.0, f"correct: expected {what} {want}, response said {want}{hint}"
    if want in found:
        others = [v for v in found if v != want]
        return HEDGED_CREDIT, 1.0, (f"expected {what} {want}; the right {what} was given among others "
                                    f"({_listing(others)}); commit to one {what}{hint}")
    return 0.0, 1.0, f"expected {what} {want}, response said {_listing(found)}{hint}"


def grade_id(m: PaperMatcher, text: str) -> Verdict:
    """Correctness 1 for the right ID alone (repeats and ``vN`` allowed), 0.5 among other IDs,
    0 for wrong IDs only; not well formed when no ``YYMM.NNNN(N)`` identifier is present."""
    want = m.paper.arxiv_id
    found = list(dict.fromkeys(match.group(1) for match in ID_RE.finditer(text)))
    if not found:
        return _no_answer(f"ID {want}", "an arXiv ID like YYMM.NNNNN", text)
    return _committed_or_hedged(found, want, "ID")


def grade_title(m: PaperMatcher, text: str) -> Verdict:
    """Correctness 1 when the full title is present (case, punctuation, spacing and hyphens ignored);
    else the share of content words present when it is at least one half (capped at
    ``PARTIAL_TITLE_CAP``); else 0.  Well formed when some title-like text is present."""
    title = m.paper.title
    folded = fold(text)
    squashed = _NON_ALNUM_RE.sub("", folded)
    if m.squashed_title in squashed:
        return 1.0, 1.0, f"correct: expected title '{title}' found in the response"
    # the substring test is a cheap necessary condition for the whole-word pattern
    hits = sum(1 for key, pattern in m.title_words if key in squashed and pattern.search(folded))
    share = hits / len(m.title_words) if m.title_words else 0.0
    if share >= PARTIAL_TITLE_MIN_SHARE:
        credit = min(share, PARTIAL_TITLE_CAP)
        return credit, 1.0, (f"expected title '{title}'; response had {hits}/{len(m.title_words)} of its "
                             f"content words (credit {credit:.2f}), not the full title: {quote(text)}")
    if not _is_answer_like(text):
        return _no_answer(f"title '{title}'", "a title", text)
    return 0.0, 1.0, f"expected title '{title}', response said {quote(text)}"


def grade_author(m: PaperMatcher, text: str) -> Verdict:
    """Correctness 1 when the first author's last name appears as a whole word (case-insensitive;
    other authors may be named too); for ``AMBIGUOUS_LAST_NAMES`` the given name must appear as well.
    Well formed when some name-like text is present."""
    name, last = m.paper.first_author, m.paper.last_name
    folded = fold(text)
    if all(pattern.search(folded) for pattern in m.author_patterns):
        return 1.0, 1.0, f"correct: expected first author {name}, response names {last}"
    if not _is_answer_like(text):
        return _no_answer(f"first author {name}", "a name", text)
    hint = " (give the full name)" if len(m.author_patterns) > 1 else ""
    return 0.0, 1.0, f"expected first author {name} (last name {last}){hint}, response said {quote(text)}"


def grade_year(m: PaperMatcher, text: str) -> Verdict:
    """Years are whole-word ``19xx`` / ``20xx`` after skipping ID-shaped numbers (``2005.14165`` is not
    the year 2005).  One distinct year: 1 if right else 0; several including the right one: 0.5;
    none: not well formed."""
    p = m.paper
    want = str(p.year)
    hint = f"the YYMM prefix {p.yymm} of {p.arxiv_id} gives the year 2000 + {p.arxiv_id[:2]}"
    found = list(dict.fromkeys(y for y in (match.group(1) for match in YEAR_RE.finditer(text)) if y))
    if not found:
        return 0.0, 0.0, (f"expected year {want}; no answer of the expected shape (a 4-digit year) was "
                          f"found ({hint}); response: {quote(text)}")
    return _committed_or_hedged(found, want, "year", f" ({hint})")


GRADERS: dict[str, Callable[[PaperMatcher, str], Verdict]] = {
    "id": grade_id, "title": grade_title, "author": grade_author, "year": grade_year,
}


def _normalise_whitespace(text: str) -> str:
    return " ".join(text.split())


def _clip(feedback: str) -> str:
    return feedback if len(feedback) <= FEEDBACK_MAX else feedback[: FEEDBACK_MAX - 1] + "…"


# --------------------------------------------------------------------------------------------------
# The verifier
# --------------------------------------------------------------------------------------------------


@register_verifier("arxiv")
class ArxivVerifier(Verifier):
    """Objective grader for arXiv facts (ID, exact title, first author, submission year).

    ``tasks()`` is the fixed 68-task pool (``PAPERS`` x ``KINDS``); ``build_dataset`` splits it by
    paper with :func:`verifiers.splits.split_by_group`; ``score`` grades one output with regular
    expressions (see ``grade_id``, ``grade_title``, ``grade_author``, ``grade_year``).
    """

    def __init__(self, papers: Sequence[Paper] = PAPERS) -> None:
        self._tasks: tuple[Task, ...] = tuple(task for paper in papers for task in make_tasks(paper))
        self._matchers: dict[str, PaperMatcher] = {p.arxiv_id: PaperMatcher.build(p) for p in papers}
        self._index: dict[str, Task] = {}
        for task in self._tasks:
            self._index[task.question] = task
            self._index[_normalise_whitespace(task.question)] = task

    def tasks(self) -> tuple[Task, ...]:
        """The 68-task pool, in ``PAPERS`` order then ``KINDS`` order."""
        return self._tasks

    def build_dataset(self, num_cases: int | None = None, seed: int = 0) -> Splits:
        """Paper-disjoint split of ``num_cases`` tasks (default all 68), about 50/25/25 % of tasks.

        Raises:
            DatasetError: when ``num_cases`` is below 3 or above 68.
        """
        return split_by_group(self._tasks, num_cases, seed)

    def task_for(self, task_input: str) -> Task | None:
        """The task whose question is ``task_input`` (whitespace-insensitive), or ``None``."""
        task = self._index.get(task_input)
        return task if task is not None else self._index.get(_normalise_whitespace(task_input))

    def score(self, task_input: str, output: str) -> Grade:
        """Grade ``output`` for the task asked by ``task_input``.

        Returns a :class:`Grade`: correctness, well_formed and conciseness in [0, 1] (conciseness
        counts only when an answer is present, see :func:`conciseness`, length in characters of the
        stripped output), composite = ``composite_score`` rounded to 6 places, feedback < 300 chars.
        Never raises for a ``str`` output; ``None`` is read as ``""``.  Only the first
        ``MAX_GRADED_CHARS`` characters are searched.  An unknown ``task_input`` scores 0.
        """
        text = output if isinstance(output, str) else ("" if output is None else str(output))
        task = self.task_for(task_input if isinstance(task_input, str) else str(task_input))
        if task is None:
            return Grade(0.0, 0.0, 0.0, 0.0,
                         _clip(f"no ground truth is registered for this task: {quote(str(task_input))}"))
        correctness, well_formed, feedback = GRADERS[task.kind](self._matchers[task.group],
                                                                text[:MAX_GRADED_CHARS])
        n_chars = len(text.strip())
        concise = conciseness(n_chars) if well_formed else 0.0
        if well_formed and concise < 1.0:
            feedback += f"; {n_chars} chars, keep it under {CONCISE_CHARS}"
        composite = round(composite_score(correctness, well_formed, concise), 6)
        return Grade(correctness, well_formed, concise, composite, _clip(feedback))


# --------------------------------------------------------------------------------------------------
# Live check against the arXiv API
# --------------------------------------------------------------------------------------------------

#: arXiv API query endpoint (https://info.arxiv.org/help/api/user-manual.html).
ARXIV_API_URL = "http://export.arxiv.org/api/query"
#: Environment variable overriding the API URL for ``--validate`` (tests point it at 127.0.0.1:9).
API_URL_ENV = "ARXIV_API_URL"
#: Seconds to wait for the API.
API_TIMEOUT_S = 10.0
ATOM_NS: dict[str, str] = {"atom": "http://www.w3.org/2005/Atom"}
#: ``http://arxiv.org/abs/1706.03762v7`` -> ``1706.03762`` (API error entries do not match).
ABS_ID_RE = re.compile(r"arxiv\.org/abs/(.+?)(?:v[0-9]+)?$")


class ArxivApiError(RuntimeError):
    """The arXiv API could not be reached or answered with something that is not Atom XML."""


def parse_atom(xml_text: str) -> dict[str, dict[str, str]]:
    """Parse an arXiv API Atom response.

    Returns:
        ``{arxiv_id_without_version: {"title": whitespace-normalised title, "first_author": name}}``
        for each ``feed/entry`` whose ``id`` is an ``arxiv.org/abs/...`` URL (error entries skipped).

    Raises:
        ValueError: when ``xml_text`` is not well-formed XML.
    """
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError as exc:
        raise ValueError(f"not well-formed Atom XML: {exc}") from exc
    papers: dict[str, dict[str, str]] = {}
    for entry in root.iterfind("atom:entry", ATOM_NS):
        match = ABS_ID_RE.search((entry.findtext("atom:id", "", ATOM_NS) or "").strip())
        if match is None:
            continue
        name = entry.findtext("atom:author/atom:name", "", ATOM_NS) or ""
        papers[match.group(1)] = {
            "title": _normalise_whitespace(entry.findtext("atom:title", "", ATOM_NS) or ""),
            "first_author": _normalise_whitespace(name),
        }
    return papers


def query_url(ids: Iterable[str], api_url: str = ARXIV_API_URL) -> str:
    """The API URL asking for exactly ``ids`` (``id_list`` plus a matching ``max_results``)."""
    id_list = list(ids)
    query = urllib.parse.urlencode({"id_list": ",".join(id_list), "max_results": len(id_list)}, safe=",")
    return f"{api_url}?{query}"


def fetch_atom(url: str, timeout: float = API_TIMEOUT_S) -> str:
    """GET ``url`` and return the body as text.

    Raises:
        ArxivApiError: one-line message naming the URL when it cannot be fetched.
    """
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 - fixed http(s) API URL
            return response.read().decode("utf-8", errors="replace")
    except (OSError, HTTPException, ValueError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise ArxivApiError(f"arXiv API unreachable at {url}: {_normalise_whitespace(str(reason))}") from exc


def compare_facts(papers: Sequence[Paper], fetched: Mapping[str, Mapping[str, str]]) -> list[str]:
    """One line per disagreement between ``papers`` and ``parse_atom`` output (empty when all match)."""
    problems: list[str] = []
    for paper in papers:
        got = fetched.get(paper.arxiv_id)
        if got is None:
            problems.append(f"{paper.arxiv_id}: not returned by the arXiv API")
            continue
        for key, expected in (("title", paper.title), ("first_author", paper.first_author)):
            if got.get(key, "") != expected:
                problems.append(f"{paper.arxiv_id}: {key} expected {expected!r}, arXiv says {got.get(key)!r}")
    return problems


def validate(papers: Sequence[Paper] = PAPERS, api_url: str = ARXIV_API_URL,
             timeout: float = API_TIMEOUT_S) -> list[str]:
    """Check ``papers`` against the live arXiv API; returns the mismatches (empty when all match).

    Raises:
        ArxivApiError: when the API cannot be reached or does not answer with Atom XML.
    """
    url = query_url((p.arxiv_id for p in papers), api_url)
    body = fetch_atom(url, timeout)
    try:
        fetched = parse_atom(body)
    except ValueError as exc:
        raise ArxivApiError(f"arXiv API at {url} did not answer with Atom XML: {exc}") from exc
    return compare_facts(papers, fetched)


# --------------------------------------------------------------------------------------------------
# Demo
# --------------------------------------------------------------------------------------------------

#: Console width of the demo table when stdout is not a terminal.
DEMO_WIDTH = 160
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
    ("1810.04805/title", "wrong", "RoBERTa: A Robustly Optimized BERT Pretraining Approach"),
    ("1810.04805/title", "evasive", "I cannot recall the exact title."),
    ("1810.04805/title", "empty", ""),
    ("1412.6980/author", "correct", "Diederik P. Kingma"),
    ("1412.6980/author", "hedged", "Kingma or Ba"),
    ("1412.6980/author", "wrong", "Jimmy Ba"),
    ("1412.6980/author", "evasive", "I don't know."),
    ("2005.14165/year", "correct", "2020"),
    ("2005.14165/year", "hedged", "2019 or 2020"),
    ("2005.14165/year", "wrong", "2005"),
    ("2005.14165/year", "ID, no year", "2005.14165"),
    ("2005.14165/year", "verbose correct", "It was submitted in 2020. " + _FILLER * 60),
)


def demo_rows(verifier: ArxivVerifier | None = None) -> list[tuple[str, str, Grade]]:
    """``(task_id, case, grade)`` for every ``DEMO_CASES`` row."""
    v = verifier or ArxivVerifier()
    by_id = {task.task_id: task for task in v.tasks()}
    return [(task_id, case, v.score(by_id[task_id].question, output)) for task_id, case, output in DEMO_CASES]


def print_demo(rows: Sequence[tuple[str, str, Grade]], title: str = "arXiv verifier: how answers are graded") -> None:
    """Print the demo score table (a ``rich`` table when rich is importable, else plain text)."""
    headers = ("task", "case", "correct", "formed", "concise", "composite", "feedback")
    cells = [(t, c, f"{g.correctness:.2f}", f"{g.well_formed:.0f}", f"{g.conciseness:.2f}",
              f"{g.composite:.2f}", g.feedback) for t, c, g in rows]
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        for row in (headers, *cells):
            click.echo(" | ".join(row))
        return
    console = Console()
    if not console.is_terminal:  # piped output: do not squeeze the feedback column into 80 columns
        console = Console(width=DEMO_WIDTH)
    table = Table(title=title, show_lines=True)
    for header in headers:
        table.add_column(header, no_wrap=header != "feedback", overflow="fold")
    for row in cells:
        table.add_row(*row)
    console.print(table)


# --------------------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------------------


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--demo", is_flag=True,
              help="Print how correct, hedged, wrong, evasive and verbose answers score.")
@click.option("--validate", "run_validate", is_flag=True,
              help="Re-check the 17 facts against the live arXiv API (exit 1: unreachable, 2: mismatch).")
@click.option("--api-url", default=ARXIV_API_URL, envvar=API_URL_ENV, show_default=True,
              help=f"arXiv API query endpoint (env {API_URL_ENV}).")
@click.option("--timeout", default=API_TIMEOUT_S, show_default=True, type=float, help="API timeout, seconds.")
@click.pass_context
def main(ctx: click.Context, demo: bool, run_validate: bool, api_url: str, timeout: float) -> None:
    """The arXiv verifier: grading demo and live fact check."""
    if not (demo or run_validate):
        raise click.UsageError("pass --demo and/or --validate")
    if demo:
        print_demo(demo_rows())
    if run_validate:
        ctx.exit(_run_validate(api_url, timeout))


def _run_validate(api_url: str, timeout: float) -> int:
    try:
        problems = validate(PAPERS, api_url, timeout)
    except ArxivApiError as exc:
        click.echo(str(exc), err=True)
        return 1
    for problem in problems:
        click.echo(f"MISMATCH {problem}")
    if problems:
        click.echo(f"{len(problems)} mismatch(es) against the arXiv API", err=True)
        return 2
    click.echo(f"all {len(PAPERS)} papers match the arXiv API ({api_url})")
    return 0
