"""A tiny OpenAI-compatible HTTP server for tests (stdlib only, 127.0.0.1, ephemeral port, one thread).

Endpoints:

* ``POST /v1/chat/completions`` (and ``/chat/completions``): answers the last user message by rule:
  ``"arxiv"`` answers a known arXiv task correctly from the ``arxiv`` verifier's ground truth
  (``"The answer is <answer>."``) and echoes anything else; ``"echo"`` repeats the last user message.
  The reply reports ``usage`` (whitespace tokens) like a real server.
* ``GET /v1/models`` (and ``/models``): the one model the server pretends to serve.

Scriptable failures:

* ``fail_first=K``: the first K chat requests get ``fail_status`` (429 by default, or e.g. 500); later
  ones succeed.
* ``fail_when(question) -> bool``: requests whose last user message matches always get HTTP 500.

* ``fault``: how a failing request fails: ``"status"`` (``fail_status``, the default), ``"empty"`` (HTTP 200
  with empty content), ``"garbage"`` (HTTP 200 whose body is not JSON) or ``"timeout"`` (no reply for
  ``hang_s`` seconds, then an empty reply).
* ``fail_share=s``: besides ``fail_first``, a deterministic share ``s`` of requests fails (request k fails
  when ``floor(k*s) > floor((k-1)*s)``: 0.2 fails every fifth, 1.0 every one).
* ``pass_first=P``: the first P chat requests always succeed and the share counts from request P+1 on
  (``pass_first=1, fail_share=1.0``: a model that answers the preflight's probe, then fails every call).

Every status failure carries ``Retry-After: <retry_after>`` (``"0"`` by default, so DSPy retries at once).

Counters: ``requests`` (chat requests received, failed ones included), ``failures`` (answered with an
error status) and ``bodies`` (the decoded JSON request bodies, in arrival order).

Usage::

    with StubServer() as stub:
        lm = build_lm(ModelSpec("openai/stub-model", api_base=stub.url))
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
MODEL_PATHS = ("/v1/models", "/models")


def arxiv_answer(question: str) -> str | None:
    """The correct one-sentence answer to a known arXiv verifier task, or None for any other text."""
    from verifiers import get_verifier

    for task in get_verifier("arxiv").tasks():
        if task.question == question:
            return f"The answer is {task.answer}."
    return None


class StubServer:
    """An OpenAI-compatible chat server on ``127.0.0.1:<ephemeral>`` running in a daemon thread.

    Args:
        rule: ``"arxiv"`` (ground-truth answers, echo otherwise) or ``"echo"``.
        fail_first: how many of the first chat requests fail with ``fail_status``.
        fail_status: HTTP status of those failures (429 or 5xx).
        retry_after: value of the ``Retry-After`` header sent with every failure (seconds, as text; ``"0"``
            keeps DSPy's backoff instant in tests); None = no header (DSPy then waits 1, 2, 4, ... s).
        fail_when: requests whose last user message makes this true always get HTTP 500.
        model: model id reported by ``/v1/models`` and in replies.
        delay_s: seconds to wait before answering each chat request (timeouts).
        fault: ``status``, ``empty``, ``garbage`` or ``timeout`` (module docstring).
        fail_share: deterministic share of requests that fail (module docstring).
        hang_s: how long a ``timeout`` fault keeps the client waiting.
        pass_first: how many of the first chat requests always succeed (module docstring).
    """

    def __init__(self, rule: str = "arxiv", *, fail_first: int = 0, fail_status: int = 429,
                 retry_after: str | None = "0", fail_when: Callable[[str], bool] | None = None,
                 model: str = "stub-model", delay_s: float = 0.0, fault: str = "status",
                 fail_share: float = 0.0, hang_s: float = 5.0, pass_first: int = 0) -> None:
        if rule not in ("arxiv", "echo"):
            raise ValueError(f"unknown rule {rule!r}; use 'arxiv' or 'echo'")
        if fault not in ("status", "empty", "garbage", "timeout"):
            raise ValueError(f"unknown fault {fault!r}; use status, empty, garbage or timeout")
        self.fault = fault
        self.fail_share = fail_share
        self.hang_s = hang_s
        self.pass_first = pass_first
        self.rule = rule
        self.fail_first = fail_first
        self.fail_status = fail_status
        self.retry_after = retry_after
        self.fail_when = fail_when
        self.model = model
        self.delay_s = delay_s
        self.requests = 0
        self.failures = 0
        self.bodies: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The OpenAI-style base URL, ``http://127.0.0.1:<port>/v1``.

        Raises:
            RuntimeError: the server is not running.
        """
        if self._server is None:
            raise RuntimeError("the stub server is not running; call start() or use it as a context manager")
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> StubServer:
        """Bind an ephemeral port on 127.0.0.1 and serve in a daemon thread; returns self."""
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, val in (headers or {}).items():
                    self.send_header(key, val)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path.rstrip("/") in MODEL_PATHS:
                    self._send(200, {"object": "list", "data": [
                        {"id": stub.model, "object": "model", "created": 0, "owned_by": "stub"}]})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                if self.path.rstrip("/") not in CHAT_PATHS:
                    self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                    return
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    self._send(400, {"error": {"message": "body is not JSON", "type": "invalid_request_error"}})
                    return
                status, payload, headers = stub._answer(body)
                if stub.delay_s:
                    time.sleep(stub.delay_s)
                if status == -1:  # garbage: HTTP 200 whose body is not JSON
                    data = b'{"id": "chatcmpl-garbage", "choices": [ <html>oops'
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                if status == -2:  # timeout: keep the client waiting, then an empty reply
                    time.sleep(stub.hang_s)
                    with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client gave up: fine
                        self._send(200, payload, headers)
                    return
                self._send(status, payload, headers)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="openai-stub", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> StubServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any], dict[str, str]]:
        """(status, JSON payload, extra headers) for one chat request."""
        messages = body.get("messages") or []
        user = next((_text(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), "")
        with self._lock:
            self.requests += 1
            self.bodies.append(body)
            number = self.requests
            counted = number - self.pass_first  # the share counts from the first request not passed
            fail = number > self.pass_first and (counted <= self.fail_first or (
                self.fail_share > 0 and int(counted * self.fail_share) > int((counted - 1) * self.fail_share)))
            status = self.fail_status if fail else 0
            if not fail and self.fail_when is not None and self.fail_when(user):
                fail, status = True, 500
            if fail:
                self.failures += 1
        if fail and self.fault != "status":
            payload = _completion(number, body.get("model") or self.model, "", 0)
            return {"empty": 200, "garbage": -1, "timeout": -2}[self.fault], payload, {}
        if fail:
            headers = {"Retry-After": self.retry_after} if self.retry_after is not None else {}
            kind = "rate_limit_error" if status == 429 else "server_error"
            return status, {"error": {"message": f"stub failure {status} on request {number}", "type": kind,
                                      "code": str(status)}}, headers
        text = (arxiv_answer(user) if self.rule == "arxiv" else None) or user
        prompt_tokens = sum(len(_text(m.get("content")).split()) for m in messages)
        return 200, _completion(number, body.get("model") or self.model, text, prompt_tokens), {}


def _completion(number: int, model: str, text: str, prompt_tokens: int) -> dict[str, Any]:
    """An OpenAI chat.completion payload answering ``text``."""
    completion_tokens = len(text.split())
    return {
        "id": f"chatcmpl-stub-{number}", "object": "chat.completion", "created": int(time.time()), "model": model,
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }


def _text(content: Any) -> str:
    """Message content as text (a string, or OpenAI content parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""
