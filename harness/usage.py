"""Counting LM calls and tokens per role (task, reflection, judge) from DSPy's LM history."""

from __future__ import annotations

from typing import Any

import dspy


class UsageCounter:
    """Per-role LM call and token counts.

    An LM is attached under a role; counts are read from ``lm.history`` (one entry per call, cached
    calls included; DSPy keeps up to ``settings.max_history_size`` = 10,000 entries per LM), so the
    counter adds nothing to the call path.  Token counts come from the provider's ``usage``
    (``prompt_tokens``/``completion_tokens``); a cache hit reports none.
    """

    def __init__(self) -> None:
        self._lms: dict[str, list[dspy.LM]] = {}
        self._start: dict[int, int] = {}

    def attach(self, lm: dspy.LM, role: str) -> None:
        """Count ``lm``'s calls from now on under ``role``."""
        self._lms.setdefault(role, []).append(lm)
        self._start[id(lm)] = len(lm.history)

    def _entries(self, role: str) -> list[dict[str, Any]]:
        return [e for lm in self._lms.get(role, []) for e in lm.history[self._start[id(lm)]:]]

    def metrics(self) -> dict[str, float]:
        """``lm_calls.<role>``, ``tokens.<role>.prompt``, ``tokens.<role>.completion`` and ``cost.<role>``
        (USD, only where the provider reports a price), plus ``lm_calls.total``."""
        out: dict[str, float] = {}
        for role in self._lms:
            entries = self._entries(role)
            usage = [e.get("usage") or {} for e in entries]
            out[f"lm_calls.{role}"] = float(len(entries))
            out[f"tokens.{role}.prompt"] = float(sum(u.get("prompt_tokens") or 0 for u in usage))
            out[f"tokens.{role}.completion"] = float(sum(u.get("completion_tokens") or 0 for u in usage))
            costs = [e["cost"] for e in entries if e.get("cost") is not None]
            if costs:
                out[f"cost.{role}"] = float(sum(costs))
        out["lm_calls.total"] = float(sum(v for k, v in out.items() if k.startswith("lm_calls.")))
        return out
