"""Evolve a skill body with DSPy's MIPROv2, instructions only, on GEPA's scale and budget.

MIPROv2 (Opsahl-Ong et al. 2024, "Optimizing Instructions and Demonstrations for Multi-Stage Language
Model Programs"; ``dspy.MIPROv2`` in DSPy 3.4) proposes whole new instructions with a *grounded proposer*
(a prompt model shown a dataset summary, the program's code, bootstrapped example traces and a random
prompting tip), then searches over them with Optuna's TPE sampler, scoring each trial on the valset.

How it is fitted to this harness:

* **Instructions only.**  A SKILL.md cannot hold few-shot demos, so ``max_bootstrapped_demos=0`` and
  ``max_labeled_demos=0`` (MIPROv2's zero-shot mode).  MIPROv2 still bootstraps a few example traces
  from the trainset to *show the proposer*; they never reach the program.  The returned program is
  checked: any demo attached to it raises.
* **Scale.**  MIPROv2 reports scores as percentages (0-100, rounded to 2 decimals); every score here is
  the metric's exact 0-1 average, recomputed from each evaluation's per-example scores.
* **Prompt model.**  ``settings.reflection_lm`` when given, else the task LM from ``dspy.settings.lm``
  (MIPROv2's own default).  The task model is always ``dspy.settings.lm``.
* **Budget** (metric calls, as GEPA's ``max_metric_calls``) -> ``num_trials`` / ``num_candidates`` /
  minibatching with ``auto=None``: see :func:`plan_miprov2`.
* **Progress** comes from DSPy callbacks on each ``Evaluate`` call (MIPROv2's ``track_stats`` attaches its
  trial logs only at the end, with rounded percentages), so ``on_point`` sees every trial as it ends.
* **No silent fallback.**  MIPROv2 on its own would log and score 0 a failed evaluation, drop the
  dataset summary or program description when the prompt model fails, and skip failed bootstrap
  examples.  Here the first exception raised by the metric, the task program, any DSPy module the
  proposer runs, or ``on_point`` is recorded and re-raised at the next phase or trial boundary (and
  after ``compile``), so a run either finishes cleanly or fails with that exception.
* **Unparseable proposals are unusable, not fatal.**  One exception to the rule above: a proposal step whose
  prompt-model reply does not follow DSPy's structured format (``AdapterParseError``; the embedded 135M model's
  usual reply) gives no new candidate and counts as an unusable proposal, as GEPA's do, and the run goes on
  with the candidates it has (the unchanged skill at worst; issue 18).  Any other failure still stops the run.
"""

from __future__ import annotations

import contextlib
import importlib.util
import math
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import dspy
from dspy.propose.grounded_proposer import GroundedProposer
from dspy.teleprompt import mipro_optimizer_v2
from dspy.teleprompt.utils import get_signature
from dspy.utils.callback import BaseCallback
from dspy.utils.exceptions import AdapterParseError

from harness.engine.graders import FitnessMetric, task_to_example
from harness.engine.optimizer import OptimizationResult, OptimizerSettings, ProgressPoint
from harness.engine.program import SkillProgram
from verifiers import Task

#: MIPROv2 uses minibatch trials only for a valset larger than this (its own ``MIN_MINIBATCH_SIZE`` rule)
MIN_MINIBATCH_VALSET = 50
#: examples per minibatch trial (MIPROv2's default ``minibatch_size``)
MINIBATCH_SIZE = 35
#: minibatch trials between full-valset evaluations (MIPROv2's default ``minibatch_full_eval_steps``)
MINIBATCH_FULL_EVAL_STEPS = 5
#: most instruction candidates (MIPROv2's heaviest ``auto`` setting, ``heavy``: n=18)
MAX_CANDIDATES = 18
#: demo traces per bootstrapped set shown to the proposer (MIPROv2's ``BOOTSTRAPPED_FEWSHOT_EXAMPLES_IN_CONTEXT``)
BOOTSTRAP_DEMOS_PER_SET = 3

#: MIPROv2 methods this module wraps to stop a run at the first failure; checked at call time
_HOOKED_METHODS = ("_bootstrap_fewshot_examples", "_propose_instructions", "_select_and_insert_instructions_and_demos")


def mipro_trials_for(num_candidates: int) -> int:
    """MIPROv2's recommended trials for one predictor in zero-shot mode, ``max(2·log2 N, 1.5·N)``.

    The same formula as ``MIPROv2._set_num_trials_from_num_candidates`` with one instruction variable.
    """
    return int(max(2 * math.log2(num_candidates), 1.5 * num_candidates))


def candidates_for(num_trials: int) -> int:
    """The most instruction candidates (>= 2, <= :data:`MAX_CANDIDATES`) that ``num_trials`` trials cover by
    MIPROv2's rule :func:`mipro_trials_for`; 2 (the skill and one proposal) when even that needs more trials."""
    best = 2
    for n in range(2, MAX_CANDIDATES + 1):
        if mipro_trials_for(n) <= num_trials:
            best = n
    return best


def eval_metric_calls(num_trials: int, valset_size: int, minibatch: bool, minibatch_size: int,
                      full_eval_steps: int) -> int:
    """Exact metric calls of MIPROv2's evaluation phase (``_optimize_prompt_parameters``).

    One full-valset evaluation of the unchanged program, then ``num_trials`` Optuna trials: each a
    full-valset evaluation, or with ``minibatch`` a ``minibatch_size`` evaluation plus a full-valset
    evaluation of the best-averaging unevaluated combination whenever MIPROv2's trial number is a
    multiple of ``full_eval_steps + 1`` and once at the end (each such evaluation takes a trial number).
    """
    if not minibatch:
        return valset_size * (1 + num_trials)
    extra = 1 if num_trials % full_eval_steps else 0
    adjusted = num_trials + num_trials // full_eval_steps + 1 + extra
    calls, trials_in_study = valset_size, 1
    for _ in range(num_trials):
        trial_num = trials_in_study + 1
        trials_in_study += 1
        calls += minibatch_size
        if trial_num % (full_eval_steps + 1) == 0 or trial_num == adjusted - 1:
            calls += valset_size
            trials_in_study += 1
    return calls


@dataclass(frozen=True)
class MiproPlan:
    """MIPROv2 knobs for a budget (see :func:`plan_miprov2`).

    Attributes:
        num_candidates: instruction candidates, including the unchanged skill body (MIPROv2's index 0);
            the proposer writes ``num_candidates - 1`` new ones.
        num_trials: Optuna trials after the full-valset evaluation of the unchanged program.
        minibatch: whether trials are scored on minibatches (with periodic full-valset evaluations).
        minibatch_size: examples per minibatch trial (the valset size when ``minibatch`` is False).
        minibatch_full_eval_steps: minibatch trials between full-valset evaluations.
        bootstrap_calls: metric calls reserved for bootstrapping the proposer's example traces:
            ``(num_candidates - 1)`` sets, each stopping after 1-3 graded answers that score above 0, so
            ``min(3, |trainset|)`` per set.  A bound while answers score above 0; a set whose answers score
            0 keeps walking the trainset, the one way a run can overshoot (by up to ``|trainset|`` per set).
        eval_calls: exact metric calls of the evaluations (:func:`eval_metric_calls`).
    """

    num_candidates: int
    num_trials: int
    minibatch: bool
    minibatch_size: int
    minibatch_full_eval_steps: int
    bootstrap_calls: int
    eval_calls: int

    @property
    def metric_calls(self) -> int:
        """Expected metric calls of the whole run."""
        return self.bootstrap_calls + self.eval_calls


def plan_miprov2(budget: int, trainset_size: int, valset_size: int) -> MiproPlan:
    """Map a budget of metric calls to MIPROv2's knobs (``auto=None``).

    * Minibatching follows MIPROv2's own ``auto`` rule: only for a valset of more than
      :data:`MIN_MINIBATCH_VALSET` tasks, with MIPROv2's default minibatch size (35) and a full-valset
      evaluation every 5 trials.  Otherwise every trial is a full-valset evaluation.
    * ``num_trials`` is the largest count whose run fits the budget, and ``num_candidates`` the most
      candidates those trials cover by MIPROv2's rule ``trials ≈ max(2·log2 N, 1.5·N)`` (at least 2: the
      skill and one proposal).  Both stop at MIPROv2's ``heavy`` setting, 18 candidates and 27 trials;
      a larger budget is left unspent.
    * Cost = :attr:`MiproPlan.bootstrap_calls` + :attr:`MiproPlan.eval_calls`.  With full-valset trials that
      is ``(N-1)·min(3, |train|) + |val|·(1 + trials)``; e.g. budget 60, |val| 16 -> 2 trials, 2 candidates;
      budget 30, |val| 3, |train| 6 -> 6 trials, 4 candidates.

    Prompt-model calls (about 3 per candidate plus a dataset summary) are not metric calls and are not
    counted, as GEPA's reflection calls are not.

    Raises:
        ValueError: an empty trainset or valset, or a budget below the smallest run (one trial).
    """
    if trainset_size < 1 or valset_size < 1:
        raise ValueError(f"MIPROv2 needs a non-empty trainset and valset, got {trainset_size} and {valset_size}")
    minibatch = valset_size > MIN_MINIBATCH_VALSET
    size = min(MINIBATCH_SIZE, valset_size) if minibatch else valset_size
    per_set = min(BOOTSTRAP_DEMOS_PER_SET, trainset_size)

    def plan(trials: int) -> MiproPlan:
        n = candidates_for(trials)
        return MiproPlan(num_candidates=n, num_trials=trials, minibatch=minibatch, minibatch_size=size,
                         minibatch_full_eval_steps=MINIBATCH_FULL_EVAL_STEPS, bootstrap_calls=(n - 1) * per_set,
                         eval_calls=eval_metric_calls(trials, valset_size, minibatch, size, MINIBATCH_FULL_EVAL_STEPS))

    best: MiproPlan | None = None
    for trials in range(1, mipro_trials_for(MAX_CANDIDATES) + 1):
        candidate = plan(trials)
        if candidate.metric_calls > budget:
            break
        best = candidate
    if best is None:
        raise ValueError(f"budget {budget} is below the smallest MIPROv2 run ({plan(1).metric_calls} metric calls "
                         f"for a valset of {valset_size}: the unchanged skill, one trial and the proposer's "
                         f"bootstrapped examples); raise the budget or use optimizer=gepa")
    return best


class _Failures:
    """The first exception seen anywhere in a run (thread-safe); :meth:`check` re-raises it.

    While :meth:`tolerating_parse_errors` is active in a thread, an ``AdapterParseError`` raised there (the
    prompt model's reply did not follow DSPy's format) is not a failure: the proposal step it belongs to
    counts as unusable instead (see :class:`_TolerantProposer`).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._local = threading.local()
        self.error: BaseException | None = None

    @contextlib.contextmanager
    def tolerating_parse_errors(self) -> Iterator[None]:
        """Within the block (this thread), unparseable replies are not recorded as failures."""
        self._local.tolerate = True
        try:
            yield
        finally:
            self._local.tolerate = False

    def record(self, exc: BaseException) -> None:
        if getattr(self._local, "tolerate", False) and isinstance(exc, AdapterParseError):
            return
        with self._lock:
            if self.error is None:
                self.error = exc

    def check(self) -> None:
        if self.error is not None:
            raise self.error


class CountingMetric:
    """The float form of a :class:`FitnessMetric` that counts its calls and records its failures.

    ``metric(gold, pred)`` / ``metric(gold, pred, trace)`` -> float in [0, 1] (MIPROv2's conventions).
    """

    def __init__(self, metric: FitnessMetric, failures: _Failures) -> None:
        self.metric = metric
        self.failures = failures
        self.calls = 0
        self._lock = threading.Lock()

    def __call__(self, gold: Any, pred: Any, trace: Any = None) -> float:
        with self._lock:
            self.calls += 1
        try:
            return float(self.metric(gold, pred, trace))
        except BaseException as exc:
            self.failures.record(exc)
            raise


class _Observer(BaseCallback):
    """DSPy callback: records each MIPROv2 evaluation as a progress point and every failed module call.

    MIPROv2 calls ``Evaluate`` once per trial number (1 = the unchanged program on the full valset, then
    each minibatch or full-valset trial), so evaluation ``k`` (0-based) is iteration ``k``.
    """

    def __init__(self, result: OptimizationResult, metric: CountingMetric, valset_size: int, failures: _Failures,
                 on_point: Callable[[ProgressPoint], None] | None) -> None:
        super().__init__()
        self.result = result
        self.metric = metric
        self.valset_size = valset_size
        self.failures = failures
        self.on_point = on_point
        #: best full-valset score (0-1) of each instruction text evaluated on the full valset
        self.full_scores: dict[str, float] = {}
        self._pending: dict[str, str] = {}
        self._evaluations = 0

    def on_module_end(self, call_id: str, outputs: Any | None, exception: Exception | None = None) -> None:
        if exception is not None:
            self.failures.record(exception)

    def on_evaluate_start(self, call_id: str, instance: Any, inputs: dict[str, Any]) -> None:
        try:
            self._pending[call_id] = inputs["program"].instructions
        except BaseException as exc:  # DSPy only logs exceptions raised by callbacks
            self.failures.record(exc)

    def on_evaluate_end(self, call_id: str, outputs: Any | None, exception: Exception | None = None) -> None:
        instructions = self._pending.pop(call_id, "")
        if exception is not None:
            self.failures.record(exception)
            return
        try:
            self._record(instructions, [float(score) for *_, score in outputs.results])
        except BaseException as exc:  # DSPy only logs exceptions raised by callbacks
            self.failures.record(exc)

    def _record(self, instructions: str, scores: list[float]) -> None:
        if len(scores) >= self.valset_size:
            score = sum(scores) / len(scores)
            self.full_scores[instructions] = max(score, self.full_scores.get(instructions, score))
        point = ProgressPoint(iteration=self._evaluations, metric_calls=self.metric.calls,
                              best_val_score=max(self.full_scores.values(), default=0.0),
                              num_candidates=len(self.full_scores))
        self._evaluations += 1
        self.result.progress.append(point)
        if self.on_point is not None:
            self.on_point(point)


class _TolerantProposer(GroundedProposer):
    """MIPROv2's grounded proposer, except that a proposal whose prompt-model reply cannot be parsed
    (``AdapterParseError``: a small model ignoring DSPy's structured format) yields the predictor's current
    instruction, an unusable proposal (counted as such by :func:`_fill_candidates`, as GEPA's are), and
    the run goes on with the candidates it has.  ``unparseable`` counts those steps (class attribute reset
    per run by :func:`_checked_mipro`; MIPROv2 builds the proposer itself)."""

    unparseable = 0

    def propose_instruction_for_predictor(self, *args: Any, predictor: Any = None, **kwargs: Any) -> str:
        try:
            return super().propose_instruction_for_predictor(*args, predictor=predictor, **kwargs)
        except AdapterParseError:
            type(self).unparseable += 1
            return get_signature(predictor).instructions


def _checked_mipro(failures: _Failures, proposals: dict[str, Any], **kwargs: Any) -> dspy.MIPROv2:
    """A ``dspy.MIPROv2`` that re-raises a recorded failure after bootstrapping, after proposing and before
    each trial, and keeps the proposed instruction candidates in ``proposals["texts"]``.  Proposing runs with
    a :class:`_TolerantProposer` (MIPROv2's module attribute ``GroundedProposer`` is swapped for the call and
    put back) and tolerates unparseable prompt-model replies; their count is ``proposals["unparseable"]``.

    Raises:
        RuntimeError: the installed DSPy lacks a method this wraps (a changed MIPROv2).
    """
    missing = [name for name in _HOOKED_METHODS if not hasattr(dspy.MIPROv2, name)]
    if missing:
        raise RuntimeError(f"dspy {dspy.__version__} MIPROv2 lacks {', '.join(missing)}; harness.engine.miprov2 needs "
                           "DSPy 3.4's MIPROv2")

    class CheckedMIPROv2(dspy.MIPROv2):
        def _bootstrap_fewshot_examples(self, *args: Any, **kw: Any) -> Any:
            demos = super()._bootstrap_fewshot_examples(*args, **kw)
            failures.check()
            return demos

        def _propose_instructions(self, *args: Any, **kw: Any) -> Any:
            proposer_class = mipro_optimizer_v2.GroundedProposer
            mipro_optimizer_v2.GroundedProposer = _TolerantProposer
            _TolerantProposer.unparseable = 0
            try:
                with failures.tolerating_parse_errors():
                    candidates = super()._propose_instructions(*args, **kw)
            finally:
                mipro_optimizer_v2.GroundedProposer = proposer_class
            failures.check()
            proposals["texts"] = list(candidates[0])
            proposals["unparseable"] = _TolerantProposer.unparseable
            return candidates

        def _select_and_insert_instructions_and_demos(self, *args: Any, **kw: Any) -> Any:
            failures.check()
            return super()._select_and_insert_instructions_and_demos(*args, **kw)

    return CheckedMIPROv2(**kwargs)


def _fill_candidates(result: OptimizationResult, proposed: list[str], full_scores: dict[str, float],
                     baseline: str) -> None:
    """Candidates table rows (one per distinct instruction scored on the full valset) and proposal counts."""
    index: dict[str, int] = {}
    for i, text in enumerate(proposed):
        index.setdefault(text, i)
    for text in full_scores:  # every evaluated text is a proposed one; numbered after them if not
        index.setdefault(text, len(proposed) + sum(1 for i in index.values() if i >= len(proposed)))
    result.candidates = [
        {"index": index[text], "val_score": score, "parents": [], "instructions": text}
        for text, score in sorted(full_scores.items(), key=lambda item: index[item[0]])
    ]
    new = proposed[1:]
    result.proposals = len(new)
    result.unusable_proposals = sum(1 for text in new if not text.strip() or text == baseline)


def run_miprov2(baseline_body: str, metric: FitnessMetric, trainset: Sequence[Task], valset: Sequence[Task],
                settings: OptimizerSettings, result: OptimizationResult,
                on_point: Callable[[ProgressPoint], None] | None = None) -> OptimizationResult:
    """Evolve ``baseline_body`` with ``dspy.MIPROv2`` (instructions only); fills and returns ``result``.

    Runs under the caller's ``dspy.settings`` (the task LM is ``dspy.settings.lm``; wrap the call in
    ``dspy.context(lm=task_lm)``).  Uses from ``settings``: ``budget`` (metric calls, mapped by
    :func:`plan_miprov2`), ``seed``, ``num_threads`` and ``reflection_lm`` (the prompt model; None = the task
    LM).  ``instruction_proposer`` (a GEPA proposer) must be None: MIPROv2 proposes with its own.

    Fills ``result``:

    * ``instructions``: the best instruction text (MIPROv2's best full-valset score; the unchanged body
      unless a candidate scored strictly higher).
    * ``progress``: one :class:`ProgressPoint` per MIPROv2 trial, in order: ``iteration`` = trial number - 1
      (0 = the unchanged body on the full valset), ``metric_calls`` = metric calls so far (bootstrapping
      included), ``best_val_score`` = best full-valset average so far in [0, 1] (minibatch scores never
      count), ``num_candidates`` = distinct instructions scored on the full valset so far.
    * ``candidates``: one dict per distinct instruction scored on the full valset: ``index`` (MIPROv2's
      candidate index; 0 = the unchanged body), ``val_score`` (its best full-valset average, 0-1),
      ``parents`` (``[]``: MIPROv2 proposes each candidate from the original), ``instructions``.
    * ``proposals`` = new candidates proposed; ``unusable_proposals`` = those empty or equal to the body;
      ``metric_calls`` = metric calls spent (also on failure).

    Raises:
        ImportError: optuna is not installed (checked before any LM call).
        ValueError: ``settings.instruction_proposer`` is set, an empty trainset or valset, or a budget too small
            for one trial (:func:`plan_miprov2`); no LM in ``dspy.settings`` (from MIPROv2).
        RuntimeError: MIPROv2 attached few-shot demos to the returned program, or the installed DSPy's MIPROv2
            lacks the methods this wraps.
        Exception: the first failure of the metric, the task program, the proposer's DSPy modules or ``on_point``
            (MIPROv2 would otherwise log it and go on); nothing is swallowed.
    """
    if settings.instruction_proposer is not None:
        raise ValueError("optimizer=miprov2 proposes instructions with MIPROv2's grounded proposer; "
                         "settings.instruction_proposer (a GEPA proposer) cannot be used with it")
    if settings.budget < 1:
        raise ValueError(f"budget must be at least 1 metric call, got {settings.budget}")
    plan = plan_miprov2(settings.budget, len(trainset), len(valset))
    if importlib.util.find_spec("optuna") is None:  # MIPROv2 imports it only after bootstrapping and proposing
        raise ImportError("optimizer=miprov2 needs the 'optuna' package (MIPROv2's search): pip install optuna")
    failures = _Failures()
    counting = CountingMetric(metric, failures)
    observer = _Observer(result, counting, len(valset), failures, on_point)
    proposals: dict[str, Any] = {}
    optimizer = _checked_mipro(
        failures, proposals, metric=counting, prompt_model=settings.reflection_lm, task_model=None,
        max_bootstrapped_demos=0, max_labeled_demos=0, auto=None, num_candidates=plan.num_candidates,
        num_threads=settings.num_threads, seed=settings.seed, verbose=False, track_stats=False, log_dir=None,
    )
    student = SkillProgram(baseline_body)
    try:
        with dspy.context(callbacks=[*dspy.settings.get("callbacks", []), observer]):
            evolved = optimizer.compile(
                student, trainset=[task_to_example(t) for t in trainset], valset=[task_to_example(t) for t in valset],
                num_trials=plan.num_trials, minibatch=plan.minibatch, minibatch_size=plan.minibatch_size,
                minibatch_full_eval_steps=plan.minibatch_full_eval_steps, seed=settings.seed,
            )
        failures.check()
    finally:
        result.metric_calls = counting.calls
    attached = {name: len(pred.demos) for name, pred in evolved.named_predictors() if pred.demos}
    if attached:
        raise RuntimeError(f"MIPROv2 attached few-shot demos to {attached}; a SKILL.md cannot hold them")
    _fill_candidates(result, proposals.get("texts", []), observer.full_scores, baseline_body)
    result.instructions = evolved.instructions
    return result


class Miprov2Optimizer:
    """``dspy.MIPROv2`` behind the :class:`~harness.engine.optimizer.Optimizer` protocol (see :func:`run_miprov2`)."""

    name = "miprov2"

    def __init__(self, settings: OptimizerSettings) -> None:
        self.settings = settings

    def compile(self, baseline_body: str, metric: FitnessMetric, trainset: Sequence[Task], valset: Sequence[Task],
                result: OptimizationResult,
                on_point: Callable[[ProgressPoint], None] | None = None) -> OptimizationResult:
        """Evolve ``baseline_body``; fills and returns ``result`` (see :func:`run_miprov2`)."""
        return run_miprov2(baseline_body, metric, trainset, valset, self.settings, result, on_point)
