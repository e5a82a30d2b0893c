"""The test runner that runs inside the sandbox (stdlib only; passed to ``python -I -S -c``).

Protocol (see :mod:`verifiers.pybugfix.sandbox`): a JSON payload arrives on stdin, results leave as one
JSON object on the file descriptor ``payload["result_fd"]``, written once, after every call has run.
The runner never sees expected values: it only evaluates the calls and reports what they returned (as
tagged JSON) or what they raised; the harness compares.  So an answer that meddles with the runner, exits
early or prints "all tests passed" gains nothing: a missing or malformed report fails every test.

Order of work: read the payload; (limits mode) import the preloaded modules; (limits mode as root) chroot
into an empty directory and drop to an unprivileged uid; (limits mode) seal the file descriptors; set the
resource limits; then, per call, exec the answer's code in a fresh namespace and evaluate the call.
"""

import builtins
import json
import os
import resource
import sys

#: Imported first in limits mode, where nothing can be imported later (chroot, no free file descriptor);
#: inside bubblewrap the whole standard library stays importable and nothing is preloaded (~50 ms a run).
#: The list holds what small functions use, and the modules an attack needs (signal, socket, subprocess,
#: shutil, threading), so that the limits, not a failed import, are what stops it.
PRELOAD = ("math", "re", "string", "collections", "itertools", "functools", "operator", "heapq", "bisect",
           "fractions", "decimal", "statistics", "typing", "dataclasses", "copy", "random", "time", "signal",
           "threading", "shutil", "socket", "subprocess")
#: Encoding budget of one returned value: nodes, nesting depth, characters of one string, bits of one int.
MAX_NODES = 10_000
MAX_DEPTH = 50
MAX_STR = 10_000
MAX_INT_BITS = 4_000
MAX_ERROR = 300


class Unsupported(Exception):
    """The returned value cannot be reported (a type other than plain data, or too large)."""


def encode(value, depth=0, budget=None):
    """Tagged JSON of plain data; exact types only, so no method of the answer's objects is called."""
    budget = [MAX_NODES] if budget is None else budget
    budget[0] -= 1
    if budget[0] < 0 or depth > MAX_DEPTH:
        raise Unsupported("the returned value is too large or too deeply nested")
    kind = type(value)
    if value is None or kind is bool:
        return value
    if kind is int:
        if value.bit_length() > MAX_INT_BITS:
            raise Unsupported("the returned integer is too large")
        return value
    if kind is float:
        return value if value == value and value not in (float("inf"), float("-inf")) else {"float": repr(value)}
    if kind is str:
        if len(value) > MAX_STR:
            raise Unsupported("the returned string is too long")
        return value
    if kind in (list, tuple, set, frozenset):
        tag = {list: "list", tuple: "tuple", set: "set", frozenset: "set"}[kind]
        return {tag: [encode(item, depth + 1, budget) for item in value]}
    if kind is dict:
        return {"dict": [[encode(k, depth + 1, budget), encode(v, depth + 1, budget)]
                         for k, v in dict.items(value)]}
    raise Unsupported("unsupported return type " + str(kind.__name__))


def describe(exc):
    """``"Type: message"`` of an exception, bounded; never raises."""
    try:
        name = type(exc).__name__
        text = str(exc)
    except BaseException:  # noqa: BLE001 - an answer's exception may break str()
        return "exception"
    return (name + ": " + text if text else name)[:MAX_ERROR]


def seal_fds(result_fd):
    """Limits mode: the report goes to fd 3, fd 0 repeats stdout, every other fd is closed, so with
    RLIMIT_NOFILE = 4 no file, socket or pipe can be opened (nor a dynamically linked program started)."""
    os.dup2(result_fd, 3)
    os.closerange(4, 65536)
    os.dup2(1, 0)
    return 3


def main():
    payload = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    sealed = bool(payload.get("seal"))
    if sealed:
        for name in PRELOAD:
            __import__(name)
    write, dumps, exit_now = os.write, json.dumps, os._exit  # bound now: the answer may patch the modules
    streams = (sys.stdout, sys.stderr)
    result_fd, nonce = payload["result_fd"], payload["nonce"]
    if payload.get("chroot"):
        os.chroot(payload["chroot"])
        os.chdir("/")
    uid = payload.get("uid")
    if uid is not None:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    if sealed:
        result_fd = seal_fds(result_fd)
    else:
        os.close(0)
    nofile = 4 if sealed else payload["nofile"]
    for limit, value in ((resource.RLIMIT_CPU, payload["cpu_s"]), (resource.RLIMIT_AS, payload["memory_bytes"]),
                         (resource.RLIMIT_FSIZE, payload["file_bytes"]), (resource.RLIMIT_NPROC, payload["nproc"]),
                         (resource.RLIMIT_NOFILE, nofile), (resource.RLIMIT_CORE, 0)):
        hard = value + 1 if limit == resource.RLIMIT_CPU else value  # soft CPU limit: SIGXCPU, then SIGKILL
        resource.setrlimit(limit, (value, hard))
    results = []
    try:
        code = compile(payload["source"], "<answer>", "exec")
        calls = [compile(call, "<call>", "eval") for call in payload["calls"]]
    except BaseException as exc:  # noqa: BLE001 - reported as every test's error
        results = [["error", describe(exc)] for _ in payload["calls"]]
        calls = []
    for call in calls:
        namespace = {"__name__": "__answer__", "__builtins__": builtins}
        try:
            exec(code, namespace)  # noqa: S102 - this process is the sandbox
            value = eval(call, namespace)  # noqa: S307
            results.append(["ok", encode(value)])
        except Unsupported as exc:
            results.append(["error", "Unsupported: " + str(exc)])
        except BaseException as exc:  # noqa: BLE001 - SystemExit and KeyboardInterrupt are failures too
            results.append(["error", describe(exc)])
    for stream in streams:  # os._exit skips the flush at exit: the captured output would be lost
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001 - a full output file (RLIMIT_FSIZE) or a patched stream
            pass
    data = dumps({"nonce": nonce, "results": results}).encode("utf-8")
    while data:
        data = data[write(result_fd, data):]
    exit_now(0)  # skip atexit handlers and finalisers an answer may have registered


if __name__ == "__main__":
    main()
