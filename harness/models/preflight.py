"""Model preflight: prove every model of a run can answer before optimisation starts.

:func:`check_models` takes the run's :class:`~harness.models.lm.ModelSpec` per role and, per kind of model:

* ``test/<name>``: OK at once (offline scripted engines; nothing to reach).
* ``embedded``: the GGUF file exists and the model answers one short call (loads it, ~100 MB).
* any provider model (``openai/...``, ``anthropic/...``, ``openrouter/...``, ``ollama_chat/...``):

  1. **key**, offline: the key comes from the provider's usual environment variable only.  LiteLLM's
     ``validate_environment(model)`` names the variables it is missing; DSPy's native engine also reads
     the variables lm15 declares for the provider (e.g. ``GOOGLE_API_KEY`` for Gemini), so one of those
     being set counts too.  Keyless local providers (Ollama) need none.  With an ``api_base`` a missing
     key does not block: a local OpenAI-compatible server needs no real key, and
     :func:`~harness.models.lm.build_lm` sends the placeholder ``api_key="not-needed"`` when no key variable
     is set.  A missing address variable (``AZURE_API_BASE``) blocks only when DSPy knows no default
     endpoint and no ``api_base`` is given.
  2. **call**: one tiny completion (at most 8 tokens, no cache, at most :data:`PREFLIGHT_RETRIES` retries
     of a 429 or 5xx after ``Retry-After`` (else 1, 2 s), none of a timeout, ``timeout_s`` seconds per wait;
     connecting is bounded by lm15's 10 s).  It must
     answer with content: a 429 or 5xx still failing after the retries, a timeout, a reply that is not JSON
     or an empty reply is *not reachable* and raises (a run would only collect failed calls; decided in
     issue 20, where a 429 accepted as "reachable" led to a run of failed calls).

Failures raise :class:`~harness.models.lm.ModelError` (a user error: one line at the CLI, exit 2), naming the
role, the model and the variable or the address (``api_base``, or the provider's default endpoint)
and the underlying error in a few words; all failing roles are reported together.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, replace

from harness.messages import redact_text, redact_url
from harness.models.lm import (
    EMBEDDED_MODEL,
    ModelError,
    ModelSpec,
    ProviderInfo,
    build_lm,
    embedded_model_path,
    is_embedded,
    is_test_model,
    provider_info,
)

#: default per-wait timeout of the preflight call (seconds)
PREFLIGHT_TIMEOUT_S = 10.0
#: completion cap of the preflight call (tokens)
PREFLIGHT_MAX_TOKENS = 8
PREFLIGHT_PROMPT = "Reply with the single word OK."
#: retries of the preflight call on a rate limit or a transient error (capped by the spec's ``num_retries``)
PREFLIGHT_RETRIES = 2
_ADDRESS_SUFFIXES = ("_API_BASE", "_BASE_URL", "_ENDPOINT", "_API_URL")


@dataclass(frozen=True)
class ModelReport:
    """The preflight result of one role's model.

    Attributes:
        role: ``task``, ``reflection``, ``judge``, ...
        model: the model string checked.
        ok: it answered (or is an offline test model).
        latency_s: wall time of the preflight call in seconds (0.0 for test models; None when not called).
        address: where it was reached (``api_base``, the provider's default endpoint, ``in-process``,
            ``offline``); None when unknown.
        detail: a short note (``answered``, ``rate-limited (429) but reachable``, ...).
    """

    role: str
    model: str
    ok: bool
    latency_s: float | None
    address: str | None
    detail: str = ""


def check_models(specs: Mapping[str, ModelSpec | None], *,
                 timeout_s: float = PREFLIGHT_TIMEOUT_S) -> dict[str, ModelReport]:
    """Check every role's model: keys first (offline, all roles), then one tiny call per distinct model.

    Args:
        specs: role -> spec; a None spec (role unused) is skipped.
        timeout_s: per-wait timeout of the preflight call in seconds (capped by each spec's ``timeout_s``).

    Returns:
        role -> :class:`ModelReport` (every report ``ok``), in the order of ``specs``.

    Raises:
        ModelError: a missing key, an unreachable endpoint, an error reply or a missing embedded model
            file; the message lists every failing role (``"; "``-separated), each naming the model and
            the variable or address.
    """
    active = {role: spec for role, spec in specs.items() if spec is not None}
    problems = [p for role, spec in active.items() if (p := missing_key(role, spec))]
    if problems:
        raise ModelError("; ".join(problems))
    reports: dict[str, ModelReport] = {}
    seen: dict[tuple[str, str | None], ModelReport] = {}
    failures: list[str] = []
    for role, spec in active.items():
        key = (spec.model.strip(), spec.api_base or None)
        try:
            if key in seen:
                report = replace(seen[key], role=role)
            else:
                report = seen[key] = _check_one(role, spec, timeout_s)
            reports[role] = report
        except ModelError as exc:
            failures.append(str(exc))
    if failures:
        raise ModelError("; ".join(failures))
    return reports


def missing_key(role: str, spec: ModelSpec) -> str | None:
    """Why ``spec``'s model lacks its key or address in the environment (no network), or None when it
    can be called: test and embedded models, keyless providers, an ``api_base``, or a key variable set."""
    model = spec.model.strip()
    if not model or is_test_model(model) or is_embedded(model) or spec.api_base:
        return None  # with an api_base a local/compatible server needs no real key: build_lm sends a placeholder
    info = provider_info(model)
    if info.keyless or info.key_in_env():
        return None
    missing = _litellm_missing(model) or []
    keys = [name for name in missing if not name.endswith(_ADDRESS_SUFFIXES)]
    addresses = [name for name in missing if name.endswith(_ADDRESS_SUFFIXES)]
    if info.provider is not None:  # DSPy's native engine reads lm15's variables, none of which is set
        keys = list(dict.fromkeys([*keys, *info.key_vars]))
    parts = []
    if keys:
        parts.append(" or ".join(keys) + " (not set)")
    if addresses and info.default_endpoint is None:
        parts.append(" and ".join(addresses) + " (not set) or an api_base")
    if not parts:
        return None
    return (f"{role} model {model} needs {' and '.join(parts)}: keys are read from environment variables "
            "only; export the variable, or pass an api_base for a local OpenAI-compatible server")


def _litellm_missing(model: str) -> list[str] | None:
    """LiteLLM's ``validate_environment(model)["missing_keys"]`` (offline); None when LiteLLM cannot say."""
    try:
        import litellm

        result = litellm.validate_environment(model)
    except Exception:
        return None
    return [str(name) for name in result.get("missing_keys") or []]


def address_of(spec: ModelSpec, info: ProviderInfo | None = None) -> str:
    """Where ``spec``'s model is reached: its ``api_base``, else the provider's default endpoint."""
    if spec.api_base:
        return spec.api_base
    info = info or provider_info(spec.model)
    return info.default_endpoint or f"the default endpoint of {spec.model.split('/', 1)[0]}"


def _check_one(role: str, spec: ModelSpec, timeout_s: float) -> ModelReport:
    model = spec.model.strip()
    if is_test_model(model):
        build_lm(replace(spec, cache=False))  # an unknown test model name raises here
        return ModelReport(role, model, True, 0.0, "offline", "offline test model")
    if is_embedded(model):
        embedded_model_path()  # raises ModelError naming the missing package or file
        lm = build_lm(replace(spec, cache=False, max_tokens=PREFLIGHT_MAX_TOKENS))
        started = time.perf_counter()
        try:
            lm(PREFLIGHT_PROMPT)
        except Exception as exc:
            raise ModelError(f"{role} model {EMBEDDED_MODEL} (in-process) failed to answer: {_brief(exc)}") from exc
        return ModelReport(role, model, True, time.perf_counter() - started, "in-process", "answered")
    info = provider_info(model)
    address = redact_url(address_of(spec, info))  # the report is logged: no credentials from the URL
    ping = replace(spec, cache=False, num_retries=0, timeout_s=min(spec.timeout_s, timeout_s),
                   max_tokens=min(spec.max_tokens, PREFLIGHT_MAX_TOKENS))
    try:
        lm = build_lm(ping)
    except ModelError:
        lm = build_lm(replace(ping, max_tokens=spec.max_tokens))  # e.g. reasoning models refuse small caps
    started = time.perf_counter()
    try:
        _call_retrying(lm, min(spec.num_retries, PREFLIGHT_RETRIES))
    except Exception as exc:
        raise ModelError(_failure_message(role, model, address, info, exc, ping.timeout_s)) from exc
    finally:
        lm.close()
    return ModelReport(role, model, True, time.perf_counter() - started, address, "answered")


def _call_retrying(lm: object, retries: int) -> None:
    """One preflight call; a rate limit (429) or server error (5xx) is asked again up to ``retries`` times after
    the server's ``Retry-After`` (else 1, 2 s).  A timeout is not retried (the wait is already bounded)."""
    from dspy.utils.exceptions import LMRateLimitError, LMServerError

    for attempt in range(retries + 1):
        try:
            lm(PREFLIGHT_PROMPT)  # type: ignore[operator]
            return
        except (LMRateLimitError, LMServerError) as exc:
            if attempt == retries:
                raise
            hint = getattr(exc, "retry_after", None)
            time.sleep(min(float(hint), 10.0) if isinstance(hint, int | float) and hint >= 0 else 2.0 ** attempt)


def _failure_message(role: str, model: str, address: str, info: ProviderInfo, exc: BaseException,
                     timeout_s: float) -> str:
    """One line naming the role, model, address (or key variable) and what went wrong."""
    from dspy.utils.exceptions import (
        LMAuthError,
        LMInvalidRequestError,
        LMNotConfiguredError,
        LMRateLimitError,
        LMServerError,
        LMTimeoutError,
        LMTransportError,
    )

    from harness.models.guard import EmptyReplyError

    brief = redact_text(_brief(exc))
    address = redact_url(address)
    if isinstance(exc, LMRateLimitError):
        return (f"{role} model {model} is rate-limited at {address} (HTTP 429 after retries): {brief}; "
                "wait, lower --num-threads, or use another key or endpoint")
    if isinstance(exc, LMServerError):
        return (f"{role} model {model} has a server error at {address} (after retries): {brief}; "
                "check the server (its log names the error) or use another endpoint, then rerun")
    if isinstance(exc, EmptyReplyError):
        return f"{role} model {model} answered with empty content at {address}: check the model name and server"

    keys = " or ".join(info.key_vars) or "the provider's key variable"
    if isinstance(exc, LMNotConfiguredError):
        return f"{role} model {model} has no credential ({keys} not set): {brief}"
    if isinstance(exc, LMAuthError):
        return f"{role} model {model} was refused at {address}: authentication failed ({brief}); check {keys}"
    if isinstance(exc, LMTimeoutError) or _timed_out(exc):
        return (f"{role} model {model} did not answer at {address} within {timeout_s:g} s: {brief}; "
                "check that the server is up and has the model loaded")
    if isinstance(exc, LMTransportError):
        return f"{role} model {model} is unreachable at {address}: {brief}"
    if isinstance(exc, LMInvalidRequestError):
        return f"{role} model {model} was rejected at {address}: {brief}"
    return f"{role} model {model} failed its preflight call at {address}: {brief}"


def _timed_out(exc: BaseException) -> bool:
    """Whether a timeout caused ``exc`` (DSPy reports lm15's read timeout as a transport error)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, TimeoutError) or "Timeout" in type(current).__name__:
            return True
        current = current.__cause__ or current.__context__
    return False


def _brief(exc: BaseException, limit: int = 160) -> str:
    """The exception's first line without DSPy's ``[model]`` prefix and its type, in about ``limit``
    characters (a long line is cut at its first ``"; "``, else truncated)."""
    text = str(exc).strip()
    if text.startswith("[") and "] " in text:
        text = text.split("] ", 1)[1]
    text = text.splitlines()[0].strip() if text else ""
    if len(text) > limit and 0 < text.find("; ") < limit:
        text = text[: text.find("; ")]
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return f"{text} ({type(exc).__name__})" if text else type(exc).__name__
