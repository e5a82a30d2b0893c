"""The arXiv verifier: the 68-task pool, its paper-disjoint splits and the grading of one output."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from verifiers.arxiv.grading import CONCISE_CHARS, GRADERS, Verdict, conciseness, grade_committed
from verifiers.arxiv.matching import MAX_GRADED_CHARS, PaperMatcher, Phrase, Response, prepare
from verifiers.arxiv.normalise import FEEDBACK_MAX, clip, normalise_whitespace, quote
from verifiers.arxiv.papers import PAPERS, QUESTION_TEMPLATES, Paper, make_tasks
from verifiers.base import Grade, Splits, Task, Verifier, composite_score
from verifiers.registry import register_verifier
from verifiers.splits import split_by_group

Grader = Callable[[PaperMatcher, Response], Verdict]


@register_verifier("arxiv")
class ArxivVerifier(Verifier):
    """Objective grader for arXiv facts (ID, exact title, first author, submission year).

    ``tasks()`` is the fixed 68-task pool (``PAPERS`` x ``KINDS``); ``build_dataset`` splits it by
    paper with :func:`verifiers.splits.split_by_group`; ``score`` grades one output with regular
    expressions (rules: :mod:`verifiers.arxiv.grading` and :mod:`verifiers.arxiv.matching`).
    """

    def __init__(self, papers: Sequence[Paper] = PAPERS) -> None:
        self._tasks: tuple[Task, ...] = tuple(task for paper in papers for task in make_tasks(paper))
        self._matchers: dict[str, PaperMatcher] = {}
        for paper in papers:
            questions = {kind: t.format(title=paper.title, arxiv_id=paper.arxiv_id)
                         for kind, t in QUESTION_TEMPLATES.items()}
            self._matchers[paper.arxiv_id] = PaperMatcher.build(paper, papers, questions)
        self._echoes: dict[str, tuple[Phrase, Phrase]] = {
            t.task_id: (Phrase.sentence(t.question), Phrase.sentence(t.expected_behavior)) for t in self._tasks}
        self._index: dict[str, Task] = {}
        for task in self._tasks:
            self._index[task.question] = task
            self._index[normalise_whitespace(task.question)] = task
        #: Per task id, everything a grade of it needs, so that ``score`` looks it up once.
        self._plans: dict[str, tuple[Grader, PaperMatcher, tuple[Phrase, Phrase]]] = {
            t.task_id: (GRADERS[t.kind], self._matchers[t.group], self._echoes[t.task_id]) for t in self._tasks}
        #: The same plans keyed by the question as asked (``score``'s usual case: one dict lookup, no call).
        self._plans_by_question = {q: self._plans[t.task_id] for q, t in self._index.items()}

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
        return task if task is not None else self._index.get(normalise_whitespace(task_input))

    def score(self, task_input: str, output: str) -> Grade:
        """Grade ``output`` for the task asked by ``task_input``.

        Returns a :class:`Grade`: correctness, well_formed and conciseness in [0, 1] (conciseness
        counts only when an answer is present, see :func:`conciseness`, length in characters of the
        stripped output), composite = ``composite_score`` rounded to 6 places, feedback < 300 chars.
        Never raises for a ``str`` output; ``None`` is read as ``""``.  Only the first
        ``MAX_GRADED_CHARS`` characters are searched (beyond, the feedback says the output was too long to
        grade).  An unknown ``task_input`` scores 0.
        """
        text = output if output.__class__ is str else (
            output if isinstance(output, str) else ("" if output is None else str(output)))
        plan = self._plans_by_question.get(task_input) if task_input.__class__ is str else None
        if plan is None:
            task = self.task_for(task_input if isinstance(task_input, str) else str(task_input))
            if task is None:
                return Grade(0.0, 0.0, 0.0, 0.0,
                             clip(f"no ground truth is registered for this task: {quote(str(task_input))}"))
            plan = self._plans[task.task_id]
        grader, matcher, echoes = plan
        response = prepare(text, echoes)
        correctness, well_formed, feedback = grade_committed(grader, matcher, response)
        if not well_formed:  # conciseness counts only when an answer is present
            return _grade(correctness, well_formed, 0.0, _composite(correctness, well_formed, 0.0),
                          feedback if len(feedback) <= FEEDBACK_MAX else clip(feedback))
        if response.truncated:
            feedback += f"; output too long to grade in full (only its first {MAX_GRADED_CHARS:,} characters are read)"
        n_chars = len(text.strip())
        concise = 1.0 if n_chars <= CONCISE_CHARS else conciseness(n_chars)
        if concise < 1.0:
            feedback += f"; {n_chars} chars, keep it under {CONCISE_CHARS}"
        composite = _composite(correctness, well_formed, concise)
        return _grade(correctness, well_formed, concise, composite,
                      feedback if len(feedback) <= FEEDBACK_MAX else clip(feedback))


#: Composite per (correctness, well_formed, conciseness): a pure function of three numbers, remembered because
#: ``round(x, 6)`` formats the float (a tenth of a short answer's grade).  Bounded: correctness and well_formed
#: take a handful of values, conciseness one per output length up to MAX_CHARS.
_COMPOSITES: dict[tuple[float, float, float], float] = {}


def _composite(correctness: float, well_formed: float, concise: float) -> float:
    """``round(composite_score(correctness, well_formed, concise), 6)``, remembered per argument triple."""
    key = (correctness, well_formed, concise)
    composite = _COMPOSITES.get(key)
    if composite is None:
        composite = _COMPOSITES[key] = round(composite_score(correctness, well_formed, concise), 6)
    return composite


_new_grade = Grade.__new__


def _grade(correctness: float, well_formed: float, conciseness_: float, composite: float, feedback: str) -> Grade:
    """``Grade(correctness, well_formed, conciseness_, composite, feedback)`` without the frozen dataclass's
    ``__init__`` (five ``object.__setattr__`` calls, a tenth of a short answer's grade): the same fields in the
    instance's ``__dict__``, so the same object for every use (equality, hashing, ``asdict``)."""
    grade = _new_grade(Grade)
    grade.__dict__.update({"correctness": correctness, "well_formed": well_formed, "conciseness": conciseness_,
                           "composite": composite, "feedback": feedback})
    return grade
