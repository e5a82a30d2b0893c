"""Headless Chromium driven over its DevTools protocol, for screenshots that need what a user does once (issue 16).

The protocol runs over a pipe (Chromium's ``--remote-debugging-pipe``: it reads commands from file descriptor 3
and writes replies and events to 4, each message JSON ending in a NUL byte), so no websocket client and no port
are needed.  Every input is a real input event (``Input.dispatchMouseEvent``) at a point on the screen, as a
mouse gives it; scripts only read the page (where a button or a column header is), they never change it.
Protocol reference: https://chromedevtools.github.io/devtools-protocol/ (Target, Page, Runtime, Input).
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any


class DevToolsError(RuntimeError):
    """Chromium answered a command with an error, closed the pipe, or a wait ran out of time."""


class Browser:
    """One headless Chromium (a fresh profile) with one page attached, driven through the DevTools pipe.

    Use as a context manager; ``chromium`` is the command line without profile, window size or URL.
    Raises :class:`DevToolsError` from every method when Chromium fails.
    """

    def __init__(self, chromium: Sequence[str], width: int = 1600, height: int = 1000,
                 extra_args: Sequence[str] = ()) -> None:
        self._profile = tempfile.mkdtemp(prefix="chromium-")
        to_child, self._to_browser = os.pipe()
        self._from_browser, from_child = os.pipe()

        def _fds() -> None:  # in the child, before exec: the pipe ends become fds 3 (commands) and 4 (replies)
            read_end, write_end = os.dup(to_child), os.dup(from_child)
            os.dup2(read_end, 3)
            os.dup2(write_end, 4)

        cmd = [*chromium, f"--user-data-dir={self._profile}", f"--window-size={width},{height}",
               "--remote-debugging-pipe", *extra_args, "about:blank"]
        self._proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                      pass_fds=(3, 4), preexec_fn=_fds)
        os.close(to_child)
        os.close(from_child)
        self._buffer = b""
        self._next_id = 0
        self.session = ""
        try:
            pages = [t for t in self.send("Target.getTargets")["targetInfos"] if t["type"] == "page"]
            if not pages:
                raise DevToolsError("Chromium opened no page")
            self.session = self.send("Target.attachToTarget", targetId=pages[0]["targetId"],
                                     flatten=True)["sessionId"]
            self.send("Page.enable")
        except DevToolsError:
            self.close()
            raise

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Ask Chromium to quit (kill it after 10 s), close the pipe and remove the profile."""
        try:
            self.session = ""
            self.send("Browser.close", timeout=10)
        except DevToolsError:
            pass
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self._profile, ignore_errors=True)

    def send(self, method: str, timeout: float = 60, **params: Any) -> dict[str, Any]:
        """Send one command (to the attached page unless it is a ``Target``/``Browser`` one) and return its result.

        Raises:
            DevToolsError: Chromium replied with an error, closed the pipe or did not reply within ``timeout`` s.
        """
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if self.session and not method.startswith(("Target.", "Browser.")):
            message["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise DevToolsError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def _read(self, deadline: float) -> dict[str, Any]:
        """The next message from Chromium (events are read and dropped by :meth:`send`)."""
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_browser], [], [], left)[0]:
                raise DevToolsError("Chromium did not reply in time")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise DevToolsError("Chromium closed the DevTools pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression that only reads the page (JSON-serialisable result)."""
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise DevToolsError(f"{expression[:80]}: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    def goto(self, url: str) -> None:
        """Navigate to ``url`` and wait for its load event."""
        self.send("Page.navigate", url=url)
        self.wait_for("document.readyState === 'complete'", timeout=60)

    def wait_for(self, expression: str, timeout: float = 60, poll: float = 0.5) -> Any:
        """Poll a read-only expression until it is truthy; returns its value.

        Raises:
            DevToolsError: still falsy after ``timeout`` s (the expression is named).
        """
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(poll)
        raise DevToolsError(f"waited {timeout:.0f} s for {expression[:120]}")

    def click(self, x: float, y: float) -> None:
        """A left click at viewport point (``x``, ``y``): mouse moved there, pressed, released."""
        self.send("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def wheel(self, x: float, y: float, dx: float = 0, dy: float = 0) -> None:
        """A mouse-wheel (or trackpad) scroll of (``dx``, ``dy``) px with the pointer at (``x``, ``y``)."""
        self.send("Input.dispatchMouseEvent", type="mouseWheel", x=x, y=y, deltaX=dx, deltaY=dy)

    def screenshot(self, out: Path) -> None:
        """The viewport as a PNG into ``out``."""
        out.write_bytes(base64.b64decode(self.send("Page.captureScreenshot", format="png")["data"]))
