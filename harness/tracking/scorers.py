"""Every grader as an MLflow GenAI scorer, usable in ``mlflow.genai.evaluate`` on its own.

A scorer made by :func:`grader_scorer` grades one row of an evaluation and returns one
:class:`mlflow.entities.Feedback`:

* ``value``: the grade's composite, a float in [0, 1];
* ``rationale``: the grade's feedback string (what was expected, what the output said);
* ``metadata``: ``correctness``, ``well_formed``, ``conciseness`` (``repr`` of floats in [0, 1]; MLflow
  stores assessment metadata as strings, ``float()`` reads them back exactly) and ``grader`` (its name).

A grader that cannot grade (``grade`` returns :class:`verifiers.Unscored`: an unparseable judge reply) yields a
Feedback holding an :class:`mlflow.entities.AssessmentError` with code :data:`UNSCORED_ERROR_CODE` and no value,
never a number; its message is :func:`harness.engine.graders.unscored_feedback` of the grader and the reason it
gave - the text ``harness.engine.holdout.grade`` writes as the row's feedback.  An exception raised by a grader
(an LM failure of the judge) is caught and becomes an assessment error with code :data:`GRADER_ERROR_CODE`, message
``"<ExceptionType>: <message>"`` and the stack trace; a malformed row (no question, an unusable ``outputs``)
raises, which MLflow records as an error assessment with code ``SCORER_ERROR``.

Evaluation rows look like::

    {"inputs": {"question": "..."},
     "expectations": {"task_id": "...", "kind": "...", "expected_behavior": "...", "answer": "...",
                      "group": "..."}}          # every expectation is optional

The scorer rebuilds a :class:`verifiers.Task` from them (:func:`task_from_row`); a task the verifier does
not know is graded by it as "no ground truth" (value 0, with that rationale).  ``outputs`` (what the
``predict_fn`` returned) may be a string, ``None`` (the call failed: graded as the empty output), a mapping
with an ``"answer"`` key, or an object with an ``answer`` attribute (a ``dspy.Prediction``).

Example (standalone, no harness run needed)::

    import mlflow
    from harness.tracking.scorers import arxiv_verifier_scorer

    mlflow.genai.evaluate(data=[{"inputs": {"question": q}} for q in questions],
                          predict_fn=lambda question: my_agent(question),
                          scorers=[arxiv_verifier_scorer()])
"""

from __future__ import annotations

import contextlib
import traceback
from collections.abc import Iterator, Mapping
from typing import Any

import dspy
from mlflow.entities import AssessmentError, AssessmentSource, Feedback
from mlflow.genai.scorers import Scorer
from pydantic import PrivateAttr

from harness.engine.graders import Grader, VerifierGrader, split_grade, unscored_feedback
from verifiers import Task, get_verifier

#: error code of the assessment a grader gives when it cannot grade (``grade`` returned ``None``)
UNSCORED_ERROR_CODE = "UNSCORED"
#: error code of the assessment when the grader raised (message ``"<ExceptionType>: <message>"``)
GRADER_ERROR_CODE = "GRADER_ERROR"

#: metadata keys of a grade's sub-scores on a Feedback (floats written with ``repr``)
SUB_SCORE_KEYS: tuple[str, str, str] = ("correctness", "well_formed", "conciseness")

#: the expectation keys a scorer reads (all optional); ``expected`` is accepted as an alias of ``answer``
EXPECTATION_KEYS: tuple[str, ...] = ("task_id", "kind", "expected_behavior", "answer", "group")

#: graders whose assessments are made by a language model (source type ``LLM_JUDGE``, else ``CODE``)
LLM_GRADERS: frozenset[str] = frozenset({"judge"})


def task_from_row(inputs: Mapping[str, Any] | None, expectations: Mapping[str, Any] | None) -> Task:
    """The :class:`Task` of one evaluation row: ``question`` from ``inputs``, the rest from ``expectations``.

    Missing expectations become ``""`` (an unknown task); non-string values are converted with ``str``.

    Raises:
        ValueError: ``inputs`` has no ``question``.
    """
    if not isinstance(inputs, Mapping) or inputs.get("question") is None:
        raise ValueError("a grader scorer needs inputs={'question': ...}; got inputs=" + repr(inputs)[:200])
    exp: Mapping[str, Any] = expectations if isinstance(expectations, Mapping) else {}

    def get(key: str, alias: str | None = None) -> str:
        value = exp.get(key)
        if value is None and alias is not None:
            value = exp.get(alias)
        return "" if value is None else str(value)

    return Task(task_id=get("task_id"), kind=get("kind"), question=str(inputs["question"]),
                expected_behavior=get("expected_behavior"), answer=get("answer", "expected"), group=get("group"))


def output_text(outputs: Any) -> str:
    """The answer text of a ``predict_fn`` result (see the module docstring for the accepted shapes).

    Raises:
        TypeError: a mapping without an ``"answer"`` key, or a value of any other type.
    """
    if outputs is None:
        return ""
    if isinstance(outputs, str):
        return outputs
    if isinstance(outputs, Mapping):
        if "answer" not in outputs:
            raise TypeError(f"outputs is a mapping without an 'answer' key (keys: {sorted(map(str, outputs))})")
        value = outputs["answer"]
        return "" if value is None else str(value)
    if hasattr(outputs, "answer"):
        value = outputs.answer
        return "" if value is None else str(value)
    raise TypeError(f"outputs must be a str, None, {{'answer': str}} or have an .answer; got {type(outputs).__name__}")


@contextlib.contextmanager
def untraced_dspy_calls() -> Iterator[None]:
    """Within the block (this thread only), DSPy calls are not traced by MLflow's DSPy autologging.

    A scorer runs outside the trace it grades; left alone, the DSPy calls of an LM grader (the judge)
    would each start a stray trace of their own.  With ``MLFLOW_GENAI_EVAL_ENABLE_SCORER_TRACING=true``
    MLflow traces the scorer itself, and the block changes nothing, so the judge's calls nest in that trace.
    """
    from mlflow.environment_variables import MLFLOW_GENAI_EVAL_ENABLE_SCORER_TRACING

    if MLFLOW_GENAI_EVAL_ENABLE_SCORER_TRACING.get():
        yield
        return
    try:
        from mlflow.dspy.callback import MlflowCallback
    except ImportError:  # pragma: no cover - mlflow without its dspy flavor
        yield
        return
    callbacks = [c for c in (dspy.settings.callbacks or []) if not isinstance(c, MlflowCallback)]
    with dspy.context(callbacks=callbacks):
        yield


def format_sub_score(value: float) -> str:
    """A sub-score as assessment metadata: ``repr(float(value))`` (``float()`` of it is exact)."""
    return repr(float(value))


class GraderScorer(Scorer):
    """An MLflow scorer wrapping one :class:`harness.engine.graders.Grader` (build it with :func:`grader_scorer`).

    Called by MLflow with ``inputs``, ``outputs`` and ``expectations`` of one row; returns one Feedback
    named after the scorer (see the module docstring).  Thread-safe when the grader is (all of the
    project's graders are).  Not serialisable for MLflow's scorer registry (it holds a live grader).
    """

    _grader: Any = PrivateAttr(default=None)

    def __init__(self, grader: Grader, **data: Any) -> None:
        super().__init__(**data)
        self._grader = grader

    @property
    def grader(self) -> Grader:
        """The wrapped grader."""
        return self._grader

    def __call__(self, *, inputs: Any = None, outputs: Any = None, expectations: Any = None) -> Feedback:
        """Grade one row; see the module docstring.

        Raises:
            ValueError, TypeError: malformed ``inputs`` / ``outputs`` (MLflow records a ``SCORER_ERROR``).
        """
        grader = self._grader
        task = task_from_row(inputs, expectations)
        text = output_text(outputs)
        source_type = "LLM_JUDGE" if grader.name in LLM_GRADERS else "CODE"
        source = AssessmentSource(source_type=source_type, source_id=f"harness.{grader.name}")
        try:
            with untraced_dspy_calls():
                grade, reason = split_grade(grader.grade(task, text))
                message = unscored_feedback(grader.name, reason)
        except Exception as exc:  # a grader's failure (e.g. its LM) is an assessment error, never a number
            return Feedback(name=self.name, source=source, metadata={"grader": grader.name},
                            error=AssessmentError(error_code=GRADER_ERROR_CODE,
                                                  error_message=f"{type(exc).__name__}: {exc}",
                                                  stack_trace=traceback.format_exc()))
        if grade is None:
            return Feedback(name=self.name, source=source, metadata={"grader": grader.name},
                            error=AssessmentError(error_code=UNSCORED_ERROR_CODE, error_message=message))
        metadata = {key: format_sub_score(getattr(grade, key)) for key in SUB_SCORE_KEYS}
        metadata["grader"] = grader.name
        return Feedback(name=self.name, value=float(grade.composite), rationale=grade.feedback, source=source,
                        metadata=metadata)


def grader_scorer(grader: Grader, name: str | None = None, *, aggregations: list[Any] | None = None,
                  timeout: float | None = None) -> GraderScorer:
    """An MLflow scorer grading with ``grader``.

    Args:
        grader: any :class:`harness.engine.graders.Grader` (keyword, judge, verifier, ...).
        name: the scorer and assessment name; default ``grader.name``.
        aggregations: MLflow run metrics computed by ``mlflow.genai.evaluate`` from the values
            (``None`` = MLflow's default, the mean, logged as ``<name>/mean``; ``[]`` = none).
        timeout: seconds one grading may take inside ``mlflow.genai.evaluate`` before MLflow records a
            ``SCORER_ERROR`` (``None`` = MLflow's default of 300 s; ``0`` = no limit).
    """
    return GraderScorer(grader, name=name or grader.name, aggregations=aggregations, timeout=timeout,
                        description=f"harness {grader.name} grader: value = composite grade in [0, 1]")


def verifier_scorer(skill_name: str, name: str = "verifier") -> GraderScorer:
    """A scorer grading with the verifier registered for ``skill_name`` (``verifiers.get_verifier``).

    Raises:
        verifiers.UnknownVerifierError: no verifier is registered for ``skill_name``.
    """
    return grader_scorer(VerifierGrader(get_verifier(skill_name)), name=name)


def arxiv_verifier_scorer(name: str = "verifier") -> GraderScorer:
    """The arXiv verifier as a scorer: correct and concise 1.0, hedged 0.75, confidently wrong 0.5, evasive 0;
    a question outside its 68 tasks scores 0 with a "no ground truth" rationale."""
    return verifier_scorer("arxiv", name=name)
