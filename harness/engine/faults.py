"""When LM faults make a run's result meaningless: the error-share rule.

A call that still fails after DSPy's retries (rate limit, 5xx, timeout, a reply that is not JSON, an empty
reply) is an infrastructure fault, never the model's answer.  A few are tolerated: a holdout pair with a
failed call on either side is left out of the paired test (:func:`harness.analysis.stats.pairs_from_rows`)
and counted.  Past :data:`MAX_LM_ERROR_SHARE` the run fails (FAILED, exit 1) with the reason, because the
verdict would rest on the faults:

* **per role** (task, reflection, judge): failed calls / (calls that returned + failed calls), counted by
  :class:`harness.models.usage.UsageCounter`;
* **per variant** (baseline, evolved): holdout tasks whose task LM call failed / holdout tasks.

The rule is checked after the optimisation (roles only) and after the holdout (roles and variants).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from harness.engine.holdout import VARIANTS, HoldoutRow

#: largest tolerated share of failed LM calls per role, and of failed holdout task calls per variant
MAX_LM_ERROR_SHARE = 0.10


class LMFaultError(RuntimeError):
    """Too many LM calls failed for the run's result to mean anything (message names role/variant and counts)."""


def error_shares(metrics: Mapping[str, float]) -> dict[str, tuple[int, int]]:
    """Per role: ``(failed, attempted)`` from the :meth:`UsageCounter.metrics` keys ``lm_calls.<role>`` and
    ``lm_errors.<role>``."""
    out: dict[str, tuple[int, int]] = {}
    for key, value in metrics.items():
        if key.startswith("lm_errors.") and key != "lm_errors.total":
            role = key.removeprefix("lm_errors.")
            failed = int(value)
            out[role] = (failed, failed + int(metrics.get(f"lm_calls.{role}", 0)))
    return out


def variant_failures(rows: Sequence[HoldoutRow]) -> dict[str, tuple[int, int]]:
    """Per variant: ``(tasks whose task LM call failed, tasks)`` over the holdout rows."""
    out: dict[str, tuple[int, int]] = {}
    for variant in VARIANTS:
        tasks: dict[str, bool] = {}
        for r in rows:
            if r.variant == variant:
                tasks[r.task_id] = tasks.get(r.task_id, False) or bool(r.error)
        if tasks:
            out[variant] = (sum(tasks.values()), len(tasks))
    return out


def check_lm_faults(metrics: Mapping[str, float], rows: Sequence[HoldoutRow] = (),
                    max_share: float = MAX_LM_ERROR_SHARE) -> None:
    """Raise when a role's or a variant's failed share is above ``max_share`` (module docstring).

    Raises:
        LMFaultError: naming every role and variant over the share, with counts and the share allowed.
    """
    problems = [f"{role} LM: {failed} of {total} calls failed"
                for role, (failed, total) in sorted(error_shares(metrics).items())
                if total and failed / total > max_share]
    problems += [f"{variant} holdout: {failed} of {total} task calls failed"
                 for variant, (failed, total) in variant_failures(rows).items() if total and failed / total > max_share]
    if problems:
        raise LMFaultError("too many LM calls failed (" + "; ".join(problems) + f"; at most {max_share:.0%} "
                           "may fail): the result would rest on faults, not on the skill. Check the endpoint "
                           "(lm_errors.json lists the errors) and rerun")
