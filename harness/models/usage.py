"""Counting LM calls, failures, tokens, cost and LM time per role (task, reflection, judge).

An LM attached to a :class:`UsageCounter` gets a DSPy callback (``lm.callbacks``) that sees every call
through it (``on_lm_start``/``on_lm_end``), cached, uncached and failed, from any thread; copies made
with ``lm.copy()`` share it.  For a call that returned, the callback finds the call's ``lm.history``
entry (the one whose ``outputs`` is the returned object) and reads its ``usage`` and ``cost``.

Cached vs uncached (DSPy 3.4.1, ``dspy/clients/execution.py``): a response served from DSPy's cache
is recorded with ``usage == {}`` (both cache formats: ``CallResult.load`` and the LiteLLM-record branch
of ``_cached``) but keeps the ``cost`` stored with it, while a call answered by an engine records the
provider's token counts.  So a call counts as *uncached* when its entry has usage, or when it did not
use the cache at all (``cache=False``).  Limitation: a provider that reports no usage at all, reached
through DSPy's native engine with the cache on, is indistinguishable from a cache hit and counted as
cached (every mainstream OpenAI-compatible server, the embedded model and the test models report usage).
Tokens and cost are summed over uncached calls only: a cache hit costs nothing.  LM time is the wall time from
``on_lm_start`` to ``on_lm_end`` of every call (cached, uncached and failed; calls overlapping in threads each
count in full), so ``lm_time_s.total / wall_time_s`` is the LM's share of a serial run.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

import dspy
from dspy.utils.callback import BaseCallback

#: failed-call messages kept per counter (the most recent ones)
MAX_ERRORS = 200
#: characters kept of one error message
MAX_ERROR_CHARS = 1000


@dataclass
class _RoleCounts:
    calls: int = 0
    uncached: int = 0
    errors: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    priced: bool = False
    seconds: float = 0.0


class _RoleCallback(BaseCallback):
    """The per-LM callback: forwards LM starts and ends to its counter under one role.

    Copies (``copy.copy``/``copy.deepcopy`` of an LM and its callbacks) keep this very object, so a
    copied LM is still counted by the same counter.
    """

    def __init__(self, counter: UsageCounter, role: str) -> None:
        self.counter = counter
        self.role = role

    def __copy__(self) -> _RoleCallback:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> _RoleCallback:
        return self

    def on_lm_start(self, call_id: str, instance: Any, inputs: dict[str, Any]) -> None:
        self.counter._start(call_id, self.role, instance, inputs)

    def on_lm_end(self, call_id: str, outputs: Any | None, exception: Exception | None = None) -> None:
        self.counter._end(call_id, outputs, exception)


class UsageCounter:
    """Per-role LM call, failure, token and cost counts (thread-safe).

    Usage::

        usage = UsageCounter()
        usage.attach(task_lm, "task")
        ...  # run
        tracker.log_metrics(usage.metrics())
        tracker.log_dict({"errors": usage.errors()}, "lm_errors.json")
    """

    def __init__(self, max_errors: int = MAX_ERRORS) -> None:
        self._roles: dict[str, _RoleCounts] = {}
        self._pending: dict[str, tuple[str, Any, bool, float]] = {}
        self._errors: deque[dict[str, str]] = deque(maxlen=max_errors)
        self._lock = threading.Lock()

    def attach(self, lm: dspy.LM, role: str) -> None:
        """Count ``lm``'s calls from now on under ``role`` (adds a callback to ``lm.callbacks``).

        Attaching the same LM again under the same role is a no-op; under another role its calls are
        counted under both.
        """
        with self._lock:
            self._roles.setdefault(role, _RoleCounts())
        callbacks = getattr(lm, "callbacks", None)
        if callbacks is None:
            lm.callbacks = callbacks = []
        if any(isinstance(cb, _RoleCallback) and cb.counter is self and cb.role == role for cb in callbacks):
            return
        callbacks.append(_RoleCallback(self, role))

    def _start(self, call_id: str, role: str, lm: Any, inputs: dict[str, Any]) -> None:
        kwargs = inputs.get("kwargs") or {}
        uses_cache = bool(kwargs.get("cache", getattr(lm, "cache", True)))
        with self._lock:
            self._pending[call_id] = (role, lm, uses_cache, time.perf_counter())

    def _end(self, call_id: str, outputs: Any, exception: BaseException | None) -> None:
        with self._lock:
            pending = self._pending.pop(call_id, None)
        if pending is None:
            return
        role, lm, uses_cache, started = pending
        elapsed = time.perf_counter() - started
        if exception is not None:
            message = f"{type(exception).__name__}: {exception}"[:MAX_ERROR_CHARS]
            with self._lock:
                self._roles[role].seconds += elapsed
                self._roles[role].errors += 1
                self._errors.append({"role": role, "model": str(getattr(lm, "model", "")), "error": message})
            return
        entry = _history_entry(lm, outputs)
        usage = (entry or {}).get("usage") or {}
        # no entry (history disabled or trimmed under threads): counted as uncached, tokens unknown
        uncached = entry is None or bool(usage) or not uses_cache
        with self._lock:
            counts = self._roles[role]
            counts.seconds += elapsed
            counts.calls += 1
            if uncached:
                counts.uncached += 1
                counts.prompt_tokens += int(usage.get("prompt_tokens") or 0)
                counts.completion_tokens += int(usage.get("completion_tokens") or 0)
                cost = (entry or {}).get("cost")
                if cost is not None:
                    counts.cost += float(cost)
                    counts.priced = True

    def metrics(self) -> dict[str, float]:
        """Counts since attaching, as MLflow metrics.

        Per attached role: ``lm_calls.<role>`` (calls that returned, cache hits included),
        ``lm_calls.<role>.uncached`` (of those, answered by the engine/provider), ``lm_errors.<role>``
        (calls that raised after DSPy's retries), ``tokens.<role>.prompt`` and ``tokens.<role>.completion``
        (uncached calls only) and ``cost.<role>`` (USD, uncached calls only; present only when the
        provider or LiteLLM's price table gave a price) and ``lm_time_s.<role>`` (seconds spent inside the
        role's LM calls, see the module docstring).  Totals: ``lm_calls.total``, ``lm_calls.uncached``,
        ``lm_errors.total`` and ``lm_time_s.total``.
        """
        out: dict[str, float] = {}
        with self._lock:
            roles = {role: _RoleCounts(**vars(c)) for role, c in self._roles.items()}
        for role, c in roles.items():
            out[f"lm_calls.{role}"] = float(c.calls)
            out[f"lm_calls.{role}.uncached"] = float(c.uncached)
            out[f"lm_errors.{role}"] = float(c.errors)
            out[f"tokens.{role}.prompt"] = float(c.prompt_tokens)
            out[f"tokens.{role}.completion"] = float(c.completion_tokens)
            out[f"lm_time_s.{role}"] = c.seconds
            if c.priced:
                out[f"cost.{role}"] = c.cost
        out["lm_calls.total"] = float(sum(c.calls for c in roles.values()))
        out["lm_calls.uncached"] = float(sum(c.uncached for c in roles.values()))
        out["lm_errors.total"] = float(sum(c.errors for c in roles.values()))
        out["lm_time_s.total"] = sum(c.seconds for c in roles.values())
        return out

    def errors(self) -> list[dict[str, str]]:
        """The most recent failed calls (up to ``max_errors``), oldest first:
        ``[{"role": ..., "model": ..., "error": "<ExceptionType>: <message>"}, ...]``."""
        with self._lock:
            return list(self._errors)


def _history_entry(lm: Any, outputs: Any) -> dict[str, Any] | None:
    """The ``lm.history`` entry DSPy recorded for the call that returned ``outputs`` (None when absent).

    ``LM.__call__`` returns the very ``outputs`` list it puts in the entry (or, for an explicit
    ``dspy.lm15.Request``, the entry's ``response``); other threads may have appended after it.
    """
    if outputs is None:
        return None
    history = getattr(lm, "history", None) or []
    for entry in reversed(history[-1000:]):
        if entry.get("outputs") is outputs or entry.get("response") is outputs:
            return entry
    return None
