"""Keeping LM faults out of results: an empty reply is a failed call, and no failed or empty reply is cached.

DSPy 3.4.1 (``dspy/clients/execution.py``) stores every call that returned in its response cache
(``_store`` -> ``dspy.cache.put``) *before* the caller sees the reply, so an HTTP 200 with empty content
would be replayed from the cache by every rerun, and would reach the adapter as a parse error and a 0.0
grade.  Two guards close that:

* :class:`GuardedLM` (what :func:`harness.models.lm.build_lm` builds) raises :class:`EmptyReplyError`
  when every completion of a call is empty or whitespace, *inside* DSPy's callback wrapper, so the
  :class:`~harness.models.usage.UsageCounter` counts it in ``lm_errors.<role>`` like any failed call;
* :class:`ReplyFilterCache` (what :func:`harness.models.lm.configure_cache` installs as ``dspy.cache``)
  refuses to store a record whose completions are all empty.  Failed calls (exceptions after DSPy's
  retries) never reach ``put`` at all.
"""

from __future__ import annotations

from typing import Any

import dspy
from dspy.clients.base_lm import BaseLM
from dspy.clients.cache import Cache
from dspy.utils.callback import with_callbacks
from dspy.utils.exceptions import LMError


class EmptyReplyError(LMError):
    """The model answered with no content (HTTP 200, empty or whitespace-only text): an infrastructure fault."""


def _text_of(output: Any) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, dict):
        if output.get("tool_calls"):
            return "tool_calls"  # a tool call is content
        return str(output.get("text") or "")
    return str(getattr(output, "text", output) or "")


def outputs_empty(outputs: Any) -> bool:
    """Whether a call's legacy ``outputs`` (list of strings or ``{"text": ...}`` dicts) hold no content at all.

    An explicit ``dspy.lm15.Request`` call returns one Response object: never treated as empty here.
    """
    if not isinstance(outputs, list):
        return False
    return all(not _text_of(o).strip() for o in outputs)


def record_empty(record: Any) -> bool:
    """Whether a DSPy cache record (``CallResult.dump()`` dict or a LiteLLM response) holds only empty replies."""
    if isinstance(record, dict) and "outputs" in record:
        return outputs_empty(list(record.get("outputs") or []))
    choices = getattr(record, "choices", None)
    if choices is None and isinstance(record, dict):
        choices = record.get("choices")
    if not choices:
        return False
    texts = []
    for choice in choices:
        message = choice.get("message") if isinstance(choice, dict) else getattr(choice, "message", None)
        content = (message.get("content") if isinstance(message, dict) else getattr(message, "content", None)) \
            if message is not None else getattr(choice, "text", None)
        texts.append(str(content or ""))
    return all(not t.strip() for t in texts)


class ReplyFilterCache(Cache):
    """DSPy's response cache that never stores an empty reply (see the module docstring)."""

    def put(self, request: dict[str, Any], value: Any, ignored_args_for_cache_key: list[str] | None = None,
            enable_memory_cache: bool = True) -> None:
        """As :meth:`dspy.clients.cache.Cache.put`, except that a record of empty replies is dropped."""
        if record_empty(value):
            return
        super().put(request, value, ignored_args_for_cache_key, enable_memory_cache)


def install_reply_filter() -> None:
    """Make the current ``dspy.cache`` a :class:`ReplyFilterCache` in place (same folders and settings)."""
    cache = dspy.cache
    if not isinstance(cache, ReplyFilterCache):
        cache.__class__ = ReplyFilterCache


class GuardedLM(dspy.LM):
    """A ``dspy.LM`` whose call raises :class:`EmptyReplyError` on an empty reply (module docstring).

    An empty reply is asked again up to ``num_retries`` times (like a 5xx: nothing was cached, so the
    retry reaches the endpoint); one callback event covers the call and its retries.

    Raises:
        EmptyReplyError: every completion of the call was empty or whitespace, on every attempt.
    """

    @with_callbacks
    def __call__(self, prompt: Any = None, *, messages: Any = None, **kwargs: Any) -> Any:
        call = BaseLM.__call__.__wrapped__  # type: ignore[attr-defined]  # DSPy's call without its callbacks
        for _ in range(max(0, int(self.num_retries or 0)) + 1):
            outputs = call(self, prompt, messages=messages, **kwargs)
            if not outputs_empty(outputs):
                return outputs
        raise EmptyReplyError(f"[{self.model}] the model returned an empty reply (no content) on every attempt; "
                              "not cached, counted as a failed call")
