"""Can a grader be trusted here?  Agreement of the judge (and the keyword heuristic) with the verifier.

Wherever the same holdout answer (one task × one variant, in one run) was graded by both a grader and the
reference grader (the objective verifier), the two grades are compared:

* **correct / incorrect**, by a stated rule per grader (:data:`CORRECT_AT`, inclusive thresholds on
  ``Grade.correctness``):

  - verifier: ``correctness >= 1`` (the shared grade scale gives 1 only to a right answer; a hedged right
    answer has 0.5, and counts as not correct, as in :func:`harness.analysis.stats.pairs_from_rows`);
  - judge: ``correctness >= 0.5`` (the judge's own 0-1 number for "does what the rubric says"; at or above
    the midpoint it leans correct);
  - keyword: ``correctness >= 0.5``, i.e. at least half of the rubric's words appear in the answer (its
    correctness is the rubric-word overlap).

  Cohen's kappa of the two labels (``sklearn.metrics.cohen_kappa_score``; NaN when undefined, i.e. both
  graders put every answer in the same single class) and the 2×2 confusion matrix (rows: the reference says
  correct / not correct; columns: the grader says correct / not correct);
* **composites**: Pearson's r and Spearman's rho (``scipy.stats.pearsonr`` / ``spearmanr``; NaN with fewer
  than 3 answers or a constant side);
* **unscored**: how many of the answers both were asked to grade the grader left unscored (NaN), and how
  many the reference did.

Only answers both graders scored enter kappa, the matrix and the correlations.  Units: answers, not tasks;
a run's holdout of n tasks has up to 3n answers (baseline, evolved, no-skill control).  An experiment pools
its runs (:func:`pooled_rows`): the answers shared by every child (baseline, control) count once.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

#: inclusive correctness threshold above which each grader's grade counts as "correct" (see the module docstring)
CORRECT_AT: dict[str, float] = {"verifier": 1.0, "judge": 0.5, "keyword": 0.5}
#: the reference grader every other grader is compared with
REFERENCE = "verifier"
#: graders compared with the reference, in report order
COMPARED: tuple[str, ...] = ("judge", "keyword")
#: how the report names each grader
DISPLAY_NAMES: dict[str, str] = {"verifier": "verifier", "judge": "judge", "keyword": "keyword heuristic"}
#: variants every child run of an experiment shares (graded once, in the parent)
SHARED_VARIANTS: tuple[str, ...] = ("baseline", "none")

_NAN = float("nan")


def correct_rule(grader: str) -> str:
    """The rule in words, e.g. ``"judge: correctness >= 0.5"``.

    Raises:
        ValueError: a grader without a stated rule (the message lists the known ones).
    """
    return f"{grader}: correctness >= {threshold(grader):g}"


def threshold(grader: str) -> float:
    """:data:`CORRECT_AT` of ``grader``.

    Raises:
        ValueError: a grader without a stated rule.
    """
    try:
        return CORRECT_AT[grader]
    except KeyError:
        raise ValueError(f"no correct/incorrect rule for grader {grader!r}; known: {', '.join(CORRECT_AT)}") from None


@dataclass(frozen=True)
class Agreement:
    """Agreement of ``grader`` with ``reference`` on the answers both graded.

    Attributes:
        grader, reference: grader names (e.g. judge, verifier).
        n_graded: answers both were asked to grade.
        n_scored: of those, answers both scored (kappa, matrix and correlations are over these).
        unscored: answers ``grader`` left unscored; ``reference_unscored``: those the reference did.
        agree: scored answers both call correct or both call not correct.
        both_correct, reference_only, grader_only, both_wrong: the confusion matrix cells (reference correct
            and grader correct; reference correct only; grader correct only; neither).
        kappa: Cohen's kappa in [-1, 1] (NaN: undefined or no scored answer).
        pearson_r, pearson_p, spearman_rho, spearman_p: correlation of the composites and two-sided p-values
            (NaN with fewer than 3 scored answers or a constant side).
    """

    grader: str
    reference: str
    n_graded: int
    n_scored: int
    unscored: int
    reference_unscored: int
    agree: int
    both_correct: int
    reference_only: int
    grader_only: int
    both_wrong: int
    kappa: float
    pearson_r: float
    pearson_p: float
    spearman_rho: float
    spearman_p: float

    def confusion(self) -> list[list[int]]:
        """``[[both_correct, reference_only], [grader_only, both_wrong]]``: rows = reference correct / not,
        columns = grader correct / not."""
        return [[self.both_correct, self.reference_only], [self.grader_only, self.both_wrong]]

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (a row of the agreement table)."""
        return asdict(self)

    def to_metrics(self, prefix: str = "agreement") -> dict[str, float]:
        """``{prefix}.{grader}.{field}`` for every number (NaN kept; the logger skips it)."""
        skip = ("grader", "reference")
        return {f"{prefix}.{self.grader}.{k}": float(v) for k, v in asdict(self).items() if k not in skip}

    def sentence(self) -> str:
        """One line, e.g. ``the judge agreed with the verifier on 11 of 13 scored answers, kappa 0.62 ...``."""
        grader, reference = (DISPLAY_NAMES.get(g, g) for g in (self.grader, self.reference))
        if self.n_graded == 0:
            return f"the {grader} and the {reference} graded no answer in common"
        if self.n_scored == 0:
            return (f"the {grader} and the {reference} scored no answer in common ({self.n_graded} graded "
                    f"by both; {self.unscored} left unscored by the {grader}, {self.reference_unscored} by "
                    f"the {reference})")
        kappa = f"kappa {self.kappa:.2f}" if math.isfinite(self.kappa) else \
            "kappa undefined (every answer in one class)"
        text = (f"the {grader} agreed with the {reference} on {self.agree} of {self.n_scored} scored "
                f"answers, {kappa}")
        if math.isfinite(self.pearson_r):
            text += f"; composites correlate at Pearson r {self.pearson_r:.2f} (Spearman {self.spearman_rho:.2f})"
        if self.unscored:
            text += f"; the {grader} left {self.unscored} of {self.n_graded} answers unscored"
        return text


def _get(row: Any, name: str, default: Any = None) -> Any:
    if isinstance(row, Mapping):
        return row.get(name, default)
    return getattr(row, name, default)


def _records(rows: Sequence[Any] | Any) -> list[Any]:
    if hasattr(rows, "to_dict") and hasattr(rows, "columns"):  # a pandas DataFrame
        return list(rows.to_dict("records"))
    return list(rows)


def _number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return _NAN


def _grades(records: Sequence[Any], grader: str) -> dict[tuple[str, str, str], tuple[float, float]]:
    """(unit, variant, task_id) -> (correctness, composite) of one grader; a duplicate key keeps the last."""
    out: dict[tuple[str, str, str], tuple[float, float]] = {}
    for r in records:
        if str(_get(r, "grader")) != grader:
            continue
        key = (str(_get(r, "unit", "") or ""), str(_get(r, "variant")), str(_get(r, "task_id")))
        out[key] = (_number(_get(r, "correctness")), _number(_get(r, "composite")))
    return out


def _correlation(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float, float]:
    from scipy import stats as st

    if x.size < 3 or np.all(x == x[0]) or np.all(y == y[0]):
        return _NAN, _NAN, _NAN, _NAN
    pearson = st.pearsonr(x, y)
    spearman = st.spearmanr(x, y)
    return (float(pearson.statistic), float(pearson.pvalue), float(spearman.statistic), float(spearman.pvalue))


def agreement(rows: Sequence[Any] | Any, grader: str, reference: str = REFERENCE) -> Agreement | None:
    """Agreement of ``grader`` with ``reference`` on ``rows`` (see :class:`Agreement` and the module docstring).

    Args:
        rows: holdout rows (:class:`harness.engine.holdout.HoldoutRow`, mappings or a DataFrame) with
            ``task_id, variant, grader, correctness, composite`` and optionally ``unit`` (which run an answer
            belongs to, when rows of several runs are pooled; see :func:`pooled_rows`).
        grader, reference: grader names with a rule in :data:`CORRECT_AT`.
    Returns:
        None when no answer was graded by both.
    Raises:
        ValueError: a grader without a correct/incorrect rule.
    """
    from sklearn.metrics import cohen_kappa_score

    cut, ref_cut = threshold(grader), threshold(reference)
    records = _records(rows)
    mine, ref = _grades(records, grader), _grades(records, reference)
    common = [k for k in ref if k in mine]
    if not common:
        return None
    scored = [k for k in common if all(math.isfinite(v) for v in (*mine[k], *ref[k]))]
    ref_ok = np.array([ref[k][0] >= ref_cut for k in scored], dtype=bool)
    my_ok = np.array([mine[k][0] >= cut for k in scored], dtype=bool)
    kappa = _NAN
    if scored:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # one class only: sklearn warns and returns NaN, which we report
            kappa = float(cohen_kappa_score(ref_ok, my_ok, labels=[True, False], replace_undefined_by=_NAN))
    corr = _correlation(np.array([mine[k][1] for k in scored], dtype=float),
                        np.array([ref[k][1] for k in scored], dtype=float))
    return Agreement(
        grader=grader, reference=reference, n_graded=len(common), n_scored=len(scored),
        unscored=sum(1 for k in common if not math.isfinite(mine[k][0]) or not math.isfinite(mine[k][1])),
        reference_unscored=sum(1 for k in common if not math.isfinite(ref[k][0]) or not math.isfinite(ref[k][1])),
        agree=int(np.sum(ref_ok == my_ok)), both_correct=int(np.sum(ref_ok & my_ok)),
        reference_only=int(np.sum(ref_ok & ~my_ok)), grader_only=int(np.sum(~ref_ok & my_ok)),
        both_wrong=int(np.sum(~ref_ok & ~my_ok)), kappa=kappa, pearson_r=corr[0], pearson_p=corr[1],
        spearman_rho=corr[2], spearman_p=corr[3])


def agreements(rows: Sequence[Any] | Any, reference: str = REFERENCE) -> dict[str, Agreement]:
    """:func:`agreement` of every grader of :data:`COMPARED` present in ``rows`` with ``reference`` (those
    that share no answer with it are left out)."""
    records = _records(rows)
    present = {str(_get(r, "grader")) for r in records}
    out = {}
    for grader in COMPARED:
        if grader in present and grader != reference:
            found = agreement(records, grader, reference)
            if found is not None:
                out[grader] = found
    return out


def pooled_rows(runs: Sequence[tuple[str, str, Sequence[Any] | Any]],
                shared_variants: Sequence[str] = SHARED_VARIANTS) -> list[dict[str, Any]]:
    """The holdout rows of several runs, each answer once, as dicts with a ``unit`` key.

    Args:
        runs: ``(unit, shared_unit, rows)`` per run: ``unit`` names the run (e.g. its id or arm label);
            ``shared_unit`` names where its ``shared_variants`` rows come from (the parent of a side-by-side
            experiment, which grades them once and copies them into every child; a single run: its own
            ``unit``).  A shared row is kept once per ``shared_unit``; every other row under its run's unit.
    """
    out: list[dict[str, Any]] = []
    seen: set[tuple[str, str, str, str]] = set()
    for unit, shared_unit, rows in runs:
        for r in _records(rows):
            record = dict(r) if isinstance(r, Mapping) else dict(r.to_dict())
            variant = str(record.get("variant"))
            if variant in shared_variants:
                key = (str(shared_unit), variant, str(record.get("task_id")), str(record.get("grader")))
                if key in seen:
                    continue
                seen.add(key)
                record["unit"] = f"shared:{shared_unit}"
            else:
                record["unit"] = str(unit)
            out.append(record)
    return out


def agreement_frame_rows(found: Mapping[str, Agreement]) -> list[dict[str, Any]]:
    """Table rows (one per compared grader) with the rule each grader's "correct" follows."""
    return [{**a.to_dict(), "grader_rule": correct_rule(a.grader), "reference_rule": correct_rule(a.reference)}
            for a in found.values()]


def agreement_lines(found: Mapping[str, Agreement], scope: str = "this run") -> list[str]:
    """Markdown bullets: one :meth:`Agreement.sentence` per grader, then the rules; a line saying nothing
    could be measured when ``found`` is empty."""
    if not found:
        return [f"- agreement with the {REFERENCE} could not be measured in {scope}: no holdout answer was "
                f"graded by both the {REFERENCE} and another grader"]
    lines = [f"- {a.sentence()} ({scope})." for a in found.values()]
    rules = "; ".join(correct_rule(g) for g in (REFERENCE, *found))
    lines.append(f"- \"correct\" means {rules} (kappa over correct/not correct; matrix rows = {REFERENCE}).")
    return lines


def judge_trust_line(found: Mapping[str, Agreement], scope: str) -> str:
    """For a verdict that rests on the judge: how well the same judge agreed with a verifier in ``scope``
    (or that it could not be measured)."""
    judge = found.get("judge")
    if judge is None or judge.n_scored == 0:
        return (f"This verdict rests on the judge, and the judge's agreement with a verifier could not be measured "
                f"in {scope}: no answer was scored by both.")
    return f"This verdict rests on the judge; as a check on it, {judge.sentence()} ({scope})."
