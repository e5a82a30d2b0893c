"""The hostile corpus (tests/pybugfix_hostile.py), inside bubblewrap and with the limits alone.

Each answer must grade as a failure and harm nothing: the sentinel folder outside the sandbox and the
project are unchanged, the canary secret (in the grading process's environment and in a world-readable
``.ssh/id_rsa``) shows up in no grade, the TCP listener on 127.0.0.1 got no connection, and no sandbox
process is left.  The bubblewrap variant skips only where bubblewrap cannot start, and fails instead
when ``CI=true``.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pybugfix_hostile import CANARY_ENV, CORPUS, NEEDS_ISOLATION, ROOT, sandbox_processes

from verifiers.pybugfix.sandbox import KIND_BUBBLEWRAP, Sandbox, SandboxWarning

DRIVER = Path(__file__).with_name("pybugfix_hostile.py")
DRIVER_TIMEOUT_S = 180


def snapshot(folder: Path) -> dict[str, tuple[int, str]]:
    """Every path under ``folder`` with its mode and content hash (folders: mode only)."""
    state: dict[str, tuple[int, str]] = {".": (folder.stat().st_mode, "")}
    for path in sorted(folder.rglob("*")):
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""
        state[str(path.relative_to(folder))] = (path.stat().st_mode, digest)
    return state


class Listener:
    """A TCP server on 127.0.0.1 that records every connection it accepts."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()


def bubblewrap_or_skip() -> None:
    """Skip when bubblewrap cannot start here; under ``CI=true`` fail instead."""
    sandbox = Sandbox("auto")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SandboxWarning)
        kind = sandbox.kind
    if kind != KIND_BUBBLEWRAP:
        reason = f"bubblewrap cannot start here: {sandbox.fallback_reason}"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason} (CI=true: the bubblewrap variant must run)")
        pytest.skip(reason)


@pytest.fixture(scope="module", params=["bubblewrap", "limits"])
def corpus_run(request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    """Grade the whole corpus once per sandbox in a driver subprocess; yield its report and the checks."""
    if request.param == "bubblewrap":
        bubblewrap_or_skip()
    sentinel = Path(tempfile.mkdtemp(prefix="pybugfix-sentinel-", dir="/tmp"))
    canary = "canary-" + secrets.token_hex(16)
    (sentinel / "keep.txt").write_text("keep me\n")
    (sentinel / ".ssh").mkdir()
    (sentinel / ".ssh" / "id_rsa").write_text(f"-----BEGIN KEY-----\n{canary}\n")
    for path in (sentinel, sentinel / ".ssh"):
        path.chmod(0o755)
    for path in (sentinel / "keep.txt", sentinel / ".ssh" / "id_rsa"):
        path.chmod(0o644)  # readable by anyone on purpose: the sandbox, not the mode bits, must stop it
    before, root_before = snapshot(sentinel), sorted(os.listdir(ROOT))
    listener = Listener()
    mode = "required" if request.param == "bubblewrap" else "limits"
    env = {**os.environ, CANARY_ENV: canary, "PYTHONPATH": os.pathsep.join([str(ROOT), str(DRIVER.parent)])}
    try:
        done = subprocess.run([sys.executable, str(DRIVER), mode, str(sentinel), str(listener.port)], env=env,
                              capture_output=True, text=True, timeout=DRIVER_TIMEOUT_S, check=False)
    finally:
        listener.close()
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    report.update(canary=canary, sentinel_changes=_changes(before, snapshot(sentinel)),
                  root_changes=sorted(set(os.listdir(ROOT)) ^ set(root_before)), connections=listener.connections,
                  tmp_fill=Path("/tmp/pybugfix_fill0").exists(), leftovers_after=sandbox_processes(),
                  variant=request.param)
    yield report
    shutil.rmtree(sentinel, ignore_errors=True)


def _changes(before: dict[str, tuple[int, str]], after: dict[str, tuple[int, str]]) -> list[str]:
    return sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))


def test_corpus_is_big_enough() -> None:
    assert len(CORPUS) >= 25
    assert len({case_id for case_id, _, _ in CORPUS}) == len(CORPUS)


def test_corpus_harms_nothing(corpus_run: dict[str, Any]) -> None:
    assert corpus_run["kind"] == corpus_run["variant"]
    assert corpus_run["sentinel_changes"] == []
    assert corpus_run["root_changes"] == []
    assert corpus_run["connections"] == 0
    assert not corpus_run["tmp_fill"]
    assert corpus_run["leftovers"] == [] and corpus_run["leftovers_after"] == []


@pytest.mark.parametrize(("case_id", "expectation"), [(c, e) for c, _, e in CORPUS])
def test_hostile_answer_is_graded_as_a_failure(corpus_run: dict[str, Any], case_id: str, expectation: str) -> None:
    if case_id in corpus_run["skipped"]:
        assert corpus_run["variant"] == "limits" and case_id in NEEDS_ISOLATION
        pytest.skip("limits alone without root cannot protect the harness user's own files and processes")
    grade = corpus_run["grades"][case_id]
    assert grade["correctness"] == 0.0, grade
    if expectation == "zero":
        assert grade["composite"] == 0.0, grade
    assert grade["composite"] <= 0.5, grade
    assert corpus_run["canary"] not in json.dumps(grade)
