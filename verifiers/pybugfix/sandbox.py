"""Run an answer's code against hidden test calls in a separate, confined process.

Two sandboxes, chosen by the mode (constructor argument, else env ``HARNESS_SANDBOX``, else ``auto``):

* ``bubblewrap`` (``bwrap``): a new user, network, PID, IPC, UTS and cgroup namespace
  (``--unshare-all``), a root of its own holding only read-only binds of ``/usr`` (and the
  ``/bin``, ``/lib*``, ``/sbin`` links) and of the interpreter's prefix, ``/dev`` (minimal), a private
  size-capped tmpfs at ``/tmp`` (the working directory), no ``/proc``, no home, no project, a
  scrubbed environment, ``--die-with-parent`` and ``--new-session``.  Started as a dedicated uid when
  the harness runs as root, so the process-count limit applies (the kernel exempts uid 0).
* ``limits``: no namespaces.  The runner imports a fixed set of modules (``_runner.PRELOAD``), then,
  when the harness runs as root, chroots into an empty directory it cannot write and drops to a
  dedicated uid; then it keeps only file descriptors 0-3 open under RLIMIT_NOFILE = 4, so the answer
  cannot open a file, a socket or a pipe, import anything else or start a dynamically linked program.
  Without root it runs as the harness's user: it can still delete or rename that user's files and
  signal that user's processes (see the README).

Always, in either: RLIMIT_CPU, RLIMIT_AS, RLIMIT_FSIZE, RLIMIT_NPROC, RLIMIT_NOFILE and no core
dumps, set by the runner before any answer code runs; ``python -I -S`` (no site, no user paths); a
wall-clock timeout after which the whole process group is killed; after every run, every process of the
dedicated uid and every process whose command line holds the run's token (forks keep the runner's argv,
even after ``setsid``) is killed; stdout and stderr captured up to ``Limits.output_bytes``.

Mode ``auto`` uses bubblewrap when it starts (probed once per :class:`Sandbox`), else the limits with a
single :class:`SandboxWarning`; ``required`` raises :class:`SandboxUnavailableError` instead;
``limits`` never tries bubblewrap.  ``Sandbox.kind`` says which was used (``"bubblewrap"`` / ``"limits"``).
"""

from __future__ import annotations

import json
import os
import queue
import secrets
import select
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Environment variable choosing the sandbox mode when no mode is passed.
SANDBOX_ENV = "HARNESS_SANDBOX"
MODES: tuple[str, ...] = ("auto", "required", "limits")
KIND_BUBBLEWRAP = "bubblewrap"
KIND_LIMITS = "limits"
#: Sandboxed uids when the harness runs as root: ``UID_BASE + (pid % 4096) * UID_SLOTS + slot``.
UID_BASE = 200_000
UID_SLOTS = 64
#: System paths shown read-only inside bubblewrap (symlinks are recreated as symlinks).
SYSTEM_PATHS: tuple[str, ...] = ("/usr", "/bin", "/lib", "/lib32", "/lib64", "/libx32", "/sbin")
#: Interpreters tried, after the harness's own base interpreter, when a dedicated uid must read it.
FALLBACK_PYTHONS: tuple[str, ...] = ("/usr/bin/python3", "/usr/local/bin/python3")
RUNNER_SOURCE = (Path(__file__).with_name("_runner.py")).read_text(encoding="utf-8")
#: argv marker of every sandboxed runner, followed by a per-run token (leftovers are found by it)
ARGV_MARKER = "pybugfix-sandbox"


class SandboxUnavailableError(RuntimeError):
    """Mode ``required`` but bubblewrap is missing or cannot start here (the message says why)."""


class SandboxWarning(UserWarning):
    """Mode ``auto`` fell back to the limits alone (emitted once per :class:`Sandbox`)."""


@dataclass(frozen=True)
class Limits:
    """Resource limits of one sandboxed run.

    Attributes:
        cpu_s: RLIMIT_CPU, seconds of CPU (SIGXCPU, then SIGKILL one second later).
        wall_s: wall-clock seconds before the whole process group is killed.
        memory_bytes: RLIMIT_AS, bytes of address space.
        file_bytes: RLIMIT_FSIZE, largest file (and captured output) the process may write.
        nproc_margin: RLIMIT_NPROC is the sandbox uid's process count at start plus this.
        nofile: RLIMIT_NOFILE, open file descriptors.
        output_bytes: bytes of stdout+stderr kept; results are capped at ``result_bytes``.
        tmp_bytes: size of the private tmpfs inside bubblewrap.
    """

    cpu_s: int = 2
    wall_s: float = 4.0
    memory_bytes: int = 512 * 2**20
    file_bytes: int = 2**20
    nproc_margin: int = 16
    nofile: int = 32
    output_bytes: int = 16 * 2**10
    result_bytes: int = 4 * 2**20
    tmp_bytes: int = 16 * 2**20


#: The limits used when none are given.
DEFAULT_LIMITS = Limits()


@dataclass(frozen=True)
class Outcome:
    """What one call did: ``ok`` with the returned ``value`` (decoded plain data), or ``error`` text."""

    ok: bool
    value: Any = None
    error: str = ""


@dataclass(frozen=True)
class RunResult:
    """One sandboxed run.

    Attributes:
        outcomes: one :class:`Outcome` per call, or ``None`` when the runner did not report.
        failure: why there are no outcomes ("" when there are).
        output: captured stdout+stderr (decoded, at most ``Limits.output_bytes``).
        kind: the sandbox used, ``"bubblewrap"`` or ``"limits"``.
        seconds: wall time of the run.
    """

    outcomes: tuple[Outcome, ...] | None
    failure: str
    output: str
    kind: str
    seconds: float


def resolve_mode(mode: str | None, env: Mapping[str, str] | None = None) -> str:
    """``mode``, else ``$HARNESS_SANDBOX``, else ``"auto"``.

    Raises:
        ValueError: a value outside :data:`MODES`, naming where it came from.
    """
    source = "mode"
    if mode is None:
        mode, source = (os.environ if env is None else env).get(SANDBOX_ENV, "") or "auto", SANDBOX_ENV
    value = mode.strip().lower()
    if value not in MODES:
        raise ValueError(f"sandbox {source}={mode!r} is not one of {', '.join(MODES)}")
    return value


def decode(data: Any) -> Any:
    """Inverse of the runner's tagged JSON (``{"list": [...]}``, ``{"tuple": ...}``, ``{"set": ...}``,
    ``{"dict": [[k, v], ...]}``, ``{"float": "nan"}``).

    Raises:
        ValueError: on anything else (a malformed or forged report).
    """
    if data is None or isinstance(data, (bool, int, float, str)):
        return data
    if isinstance(data, dict) and len(data) == 1:
        (tag, body), = data.items()
        if tag == "float" and body in ("nan", "inf", "-inf"):
            return float(body)
        if isinstance(body, list):
            if tag == "list":
                return [decode(item) for item in body]
            if tag == "tuple":
                return tuple(decode(item) for item in body)
            if tag == "set":
                return {decode(item) for item in body}
            if tag == "dict" and all(isinstance(pair, list) and len(pair) == 2 for pair in body):
                return {decode(k): decode(v) for k, v in body}
    raise ValueError("malformed value in the sandbox report")


def _world_usable(path: Path) -> bool:
    """Whether any user may execute ``path`` and traverse every directory above it."""
    try:
        if not path.stat().st_mode & stat.S_IXOTH:
            return False
        return all(parent.stat().st_mode & stat.S_IXOTH for parent in path.parents)
    except OSError:
        return False


def _base_python() -> Path:
    """The real path of the interpreter behind this one (a venv's base interpreter)."""
    return Path(os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable))


def _proc_entries() -> list[tuple[int, int, Path]]:
    """``(pid, uid, /proc/<pid>)`` of every process listed in ``/proc`` ([] without it)."""
    entries = []
    if os.path.isdir("/proc"):
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                try:
                    entries.append((int(entry.name), entry.stat().st_uid, Path(entry.path)))
                except OSError:
                    continue
    return entries


def _is_live(proc_dir: Path) -> bool:
    """Not a zombie (and still there).  Zombies are dead: bubblewrap's namespace init is reparented to
    PID 1 when the sandbox ends and stays a zombie until the system's init reaps it."""
    try:
        state = (proc_dir / "stat").read_bytes().rpartition(b")")[2].split()[0]
    except (OSError, IndexError):
        return False
    return state not in (b"Z", b"X")


def live_pids(uid: int, zombies: bool = False) -> list[int]:
    """Pids of the processes whose uid is ``uid``, zombies left out unless ``zombies`` (from ``/proc``)."""
    return [pid for pid, owner, path in _proc_entries() if owner == uid and (zombies or _is_live(path))]


def tagged_pids(tag: str) -> list[int]:
    """Pids of live processes whose command line holds ``tag`` (a run's token: forks keep the runner's argv)."""
    needle = tag.encode()
    found = []
    for pid, _, path in _proc_entries():
        try:
            cmdline = (path / "cmdline").read_bytes()
        except OSError:
            continue
        if needle in cmdline and _is_live(path):
            found.append(pid)
    return found


def sweep(uid: int | None, tag: str) -> None:
    """SIGKILL every live process of the dedicated ``uid`` (when given) and every one tagged ``tag``, until
    none is left (at most 50 sweeps, 5 ms apart)."""
    for _ in range(50):
        pids = set(tagged_pids(tag)) | (set(live_pids(uid)) if uid is not None else set())
        pids.discard(os.getpid())
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                continue
        time.sleep(0.005)


_POOL_LOCK = threading.Lock()
_POOLS: dict[int, queue.SimpleQueue[int]] = {}


def _uid_pool() -> queue.SimpleQueue[int]:
    """This process's free sandbox uids, shared by every :class:`Sandbox` in it (two sandboxes never run
    as one uid at once: the sweep after a run kills every process of its uid)."""
    pid = os.getpid()  # a forked child gets a pool of its own
    with _POOL_LOCK:
        pool = _POOLS.get(pid)
        if pool is None:
            pool = _POOLS[pid] = queue.SimpleQueue()
            base = UID_BASE + (pid % 4096) * UID_SLOTS
            for slot in range(UID_SLOTS):
                pool.put(base + slot)
        return pool


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


#: what a fatal signal means here
SIGNAL_NOTES: dict[int, str] = {signal.SIGXCPU: " (CPU time limit)", signal.SIGXFSZ: " (file size limit)",
                                signal.SIGKILL: "", signal.SIGSEGV: " (crash or memory limit)"}


def _describe_exit(code: int | None, kind: str) -> str:
    """``"was killed by SIGXCPU (CPU time limit)"`` or ``"exited with code 3"``; bubblewrap reports a
    child killed by signal N as exit code 128 + N."""
    if code is None:
        return "did not exit"
    number = -code if code < 0 else code - 128 if kind == KIND_BUBBLEWRAP and 128 < code < 160 else 0
    if number:
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        return f"was killed by {name}{SIGNAL_NOTES.get(number, '')}"
    return f"exited with code {code}"


class Sandbox:
    """Runs answers' code confined (see the module docstring); safe to share between threads.

    Args:
        mode: ``auto``, ``required`` or ``limits``; ``None`` reads ``$HARNESS_SANDBOX`` (default ``auto``).
        limits: resource limits of every run.
        bwrap: the bubblewrap executable (a name looked up on ``PATH``, or a path).

    Raises:
        ValueError: unknown mode.
        SandboxUnavailableError: mode ``required`` and bubblewrap does not start (probed here).
    """

    def __init__(self, mode: str | None = None, limits: Limits = DEFAULT_LIMITS, bwrap: str = "bwrap") -> None:
        self.mode = resolve_mode(mode)
        self.limits = limits
        self._bwrap = shutil.which(bwrap)
        self._root = os.geteuid() == 0
        self._lock = threading.Lock()
        self._kind: str | None = KIND_LIMITS if self.mode == "limits" else None
        #: why bubblewrap is not used ("" when it is, or not yet probed)
        self.fallback_reason = "mode limits" if self.mode == "limits" else ""
        if self.mode == "required":
            _ = self.kind

    # ------------------------------------------------------------------------------ choosing the sandbox

    @property
    def kind(self) -> str:
        """``"bubblewrap"`` or ``"limits"``: probes bubblewrap on first use (mode ``auto``/``required``).

        Raises:
            SandboxUnavailableError: mode ``required`` and bubblewrap does not start.
        """
        with self._lock:
            if self._kind is None:
                reason = self._probe_bwrap()
                if not reason:
                    self._kind = KIND_BUBBLEWRAP
                elif self.mode == "required":
                    raise SandboxUnavailableError(
                        f"sandbox required but bubblewrap cannot start: {reason}; install Debian's "
                        f"'bubblewrap' (apt-get install bubblewrap) and allow user namespaces, or use "
                        f"{SANDBOX_ENV}=auto to grade with resource limits alone")
                else:
                    self._kind, self.fallback_reason = KIND_LIMITS, reason
                    warnings.warn(f"bubblewrap cannot start ({reason}); grading python-bugfix answers with "
                                  f"resource limits alone (no filesystem or network isolation)",
                                  SandboxWarning, stacklevel=3)
            return self._kind

    def _bwrap_python(self) -> Path | None:
        """An interpreter the sandbox uid can run: the base interpreter, else a system one."""
        base = _base_python()
        if not self._root:
            return base
        for candidate in (base, *map(Path, FALLBACK_PYTHONS)):
            real = Path(os.path.realpath(candidate))
            if real.is_file() and _world_usable(real):
                return real
        return None

    def _probe_bwrap(self) -> str:
        """"" when bubblewrap runs the runner here, else the reason it does not."""
        if self._bwrap is None:
            return "the 'bwrap' executable is not on PATH"
        if self._bwrap_python() is None:
            return "no Python interpreter readable by an unprivileged uid was found"
        result = self._run_kind(KIND_BUBBLEWRAP, "def probe():\n    return 41 + 1\n", ["probe()"],
                                Limits(wall_s=15.0))
        if result.outcomes == (Outcome(True, 42),):
            return ""
        detail = " ".join((result.failure or "unexpected probe result").split())
        output = " ".join(result.output.split())[:200]
        return f"{detail}; output: {output}" if output else detail

    # ------------------------------------------------------------------------------------------- running

    def run(self, source: str, calls: Sequence[str]) -> RunResult:
        """Exec ``source`` and evaluate each expression of ``calls`` in a fresh namespace, confined.

        Returns a :class:`RunResult`; never raises for any ``source`` (a crash, a timeout or a forged
        report is a result with ``outcomes=None`` and a ``failure`` reason).
        """
        return self._run_kind(self.kind, source, list(calls), self.limits)

    def _bwrap_argv(self, python: Path, limits: Limits) -> list[str]:
        """bubblewrap's options (see the module docstring) for running ``python``."""
        argv = [self._bwrap or "bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
        for name in SYSTEM_PATHS:
            path = Path(name)
            if path.is_symlink():
                argv += ["--symlink", os.readlink(path), name]
            elif path.is_dir():
                argv += ["--ro-bind", name, name]
        prefix = python.parents[1]  # <prefix>/bin/python3.x
        if not any(prefix == Path(p) or Path(p) in prefix.parents for p in SYSTEM_PATHS):
            argv += ["--ro-bind", str(prefix), str(prefix)]
        argv += ["--dev", "/dev", "--size", str(limits.tmp_bytes), "--tmpfs", "/tmp",
                 "--chdir", "/tmp", "--remount-ro", "/"]
        return argv

    def _run_kind(self, kind: str, source: str, calls: list[str], limits: Limits) -> RunResult:
        uid = _uid_pool().get() if self._root else None
        tag = f"{ARGV_MARKER}-{secrets.token_hex(8)}"
        try:
            return self._run_once(kind, source, calls, limits, uid, tag)
        finally:
            sweep(uid, tag)
            if uid is not None:
                _uid_pool().put(uid)

    def _run_once(self, kind: str, source: str, calls: list[str], limits: Limits, uid: int | None,
                  tag: str) -> RunResult:
        start = time.monotonic()
        nonce = secrets.token_hex(16)
        workdir = tempfile.mkdtemp(prefix="pybugfix-")  # 0700: a root-owned jail the sandbox uid cannot write
        read_fd, write_fd = os.pipe()
        target_uid = os.getuid() if uid is None else uid
        payload = {"source": source, "calls": calls, "nonce": nonce, "result_fd": write_fd,
                   "cpu_s": limits.cpu_s, "memory_bytes": limits.memory_bytes, "file_bytes": limits.file_bytes,
                   "nproc": len(live_pids(target_uid, zombies=True)) + limits.nproc_margin, "nofile": limits.nofile,
                   "chroot": workdir if kind == KIND_LIMITS and uid is not None else None,
                   "uid": uid if kind == KIND_LIMITS else None, "seal": kind == KIND_LIMITS}
        if kind == KIND_BUBBLEWRAP:
            python = self._bwrap_python() or _base_python()
            argv = [*self._bwrap_argv(python, limits), str(python)]
            env, user, cwd = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/tmp"}, uid, "/"
        else:
            argv = [str(_base_python())]
            env, user, cwd = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": workdir}, None, workdir
        argv += ["-I", "-S", "-c", RUNNER_SOURCE, tag]
        outcomes, failure, output = None, "", ""
        with tempfile.TemporaryFile() as stdin, tempfile.TemporaryFile() as out:
            stdin.write(json.dumps(payload).encode("utf-8"))
            stdin.seek(0)
            try:
                proc = subprocess.Popen(argv, stdin=stdin, stdout=out, stderr=out, pass_fds=(write_fd,),
                                        env=env, cwd=cwd, user=user, group=user,
                                        extra_groups=[] if user is not None else None, start_new_session=True)
            except OSError as exc:
                os.close(read_fd)
                os.close(write_fd)
                shutil.rmtree(workdir, ignore_errors=True)
                return RunResult(None, f"the sandbox could not start: {exc}", "", kind, time.monotonic() - start)
            os.close(write_fd)
            try:
                report, timed_out = self._read_report(read_fd, start + limits.wall_s, limits.result_bytes)
                if not timed_out:
                    try:
                        proc.wait(timeout=max(0.0, start + limits.wall_s - time.monotonic()))
                    except subprocess.TimeoutExpired:
                        timed_out = True
            finally:
                _kill_group(proc.pid)
                proc.wait()
                os.close(read_fd)
            out.seek(0)
            output = out.read(limits.output_bytes).decode("utf-8", errors="replace")
        shutil.rmtree(workdir, ignore_errors=True)
        if timed_out:
            failure = f"timed out after {limits.wall_s:g} s (wall clock); the process group was killed"
        else:
            outcomes, failure = _parse_report(report, nonce, len(calls))
            if outcomes is None:
                failure = f"the test process {_describe_exit(proc.returncode, kind)} {failure}"
        return RunResult(outcomes, failure, output, kind, time.monotonic() - start)

    @staticmethod
    def _read_report(fd: int, deadline: float, cap: int) -> tuple[bytes, bool]:
        """Bytes from ``fd`` until EOF (``(data, False)``) or the deadline (``(data, True)``); keeps ``cap``."""
        chunks: list[bytes] = []
        size = 0
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return b"".join(chunks), True
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                return b"".join(chunks), False
            if size < cap:
                chunks.append(chunk[: cap - size])
                size += len(chunk)


def _parse_report(report: bytes, nonce: str, n_calls: int) -> tuple[tuple[Outcome, ...] | None, str]:
    """``(outcomes, "")`` from a well-formed report carrying ``nonce`` and ``n_calls`` results, else
    ``(None, reason)``."""
    if not report:
        return None, "before reporting any result"
    try:
        data = json.loads(report.decode("utf-8"))
        if not isinstance(data, dict) or data.get("nonce") != nonce:
            return None, "and its report did not carry this run's nonce"
        results = data["results"]
        if not isinstance(results, list) or len(results) != n_calls:
            return None, "and its report does not hold one result per test"
        outcomes = []
        for status, body in results:
            if status == "ok":
                outcomes.append(Outcome(True, decode(body)))
            elif status == "error" and isinstance(body, str):
                outcomes.append(Outcome(False, error=body))
            else:
                raise ValueError(status)
    except (ValueError, TypeError, KeyError, UnicodeDecodeError, RecursionError):
        return None, "and its report is malformed"
    return tuple(outcomes), ""
