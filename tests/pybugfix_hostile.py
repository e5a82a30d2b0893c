"""Hostile answers for the python-bugfix sandbox, and a driver that grades them (run by
tests/test_pybugfix_hostile.py in a subprocess, so the canary secret is in the grading process's initial
environment, where ``/proc/<pid>/environ`` shows it).

Every answer targets the task ``off_by_one/sum_first`` (hidden tests expect 5, 6, 0 and 10) and returns
nothing a hidden test expects, so an answer can only score if it breaks out (e.g. imports the task pool).
Placeholders: ``SENTINEL`` (a folder outside the sandbox holding ``keep.txt`` and ``.ssh/id_rsa`` with the
canary), ``ROOT`` (the project), ``PORT`` (a TCP listener on 127.0.0.1), ``CANARY_ENV`` (the canary's
environment variable name).

Usage: ``python tests/pybugfix_hostile.py MODE SENTINEL PORT`` (MODE ``required`` or ``limits``) prints
``{"kind": ..., "grades": {case: grade dict}, "leftovers": [...]}`` as JSON.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CANARY_ENV = "PYBUGFIX_CANARY_SECRET"
H = "def sum_first(xs, n):\n"

#: (case id, answer code, expectation): "zero" = composite 0 (no function), "wrong" = correctness 0.
CORPUS: tuple[tuple[str, str, str], ...] = (
    ("infinite_loop", H + "    while True:\n        pass\n", "wrong"),
    ("sleep_forever", "import time\n" + H + "    time.sleep(1000)\n", "wrong"),
    ("fork_bomb", "import os\n" + H + "    while True:\n        try:\n            os.fork()\n"
                                      "        except OSError:\n            pass\n", "wrong"),
    ("orphan_sleepers", "import os, time\n" + H + "    for _ in range(3):\n        if os.fork() == 0:\n"
                        "            os.setsid()\n            time.sleep(1000)\n            os._exit(0)\n"
                        "    return 'pwned'\n", "wrong"),
    ("thread_bomb", "import threading, time\n" + H + "    for _ in range(10000):\n"
                    "        threading.Thread(target=time.sleep, args=(1000,), daemon=True).start()\n"
                    "    return 'pwned'\n", "wrong"),
    ("memory_bomb", H + "    block = bytearray(8 * 1024 ** 3)\n    return 'pwned'\n", "wrong"),
    ("memory_growth", H + "    chunks = []\n    while True:\n        chunks.append('x' * 10 ** 7)\n", "wrong"),
    ("huge_stdout", H + "    while True:\n        print('x' * 100000)\n", "wrong"),
    ("huge_stderr", "import os\n" + H + "    while True:\n        os.write(2, b'y' * 100000)\n", "wrong"),
    ("os_system", "import os\n" + H + "    os.system('touch SENTINEL/pwned_system; rm -f SENTINEL/keep.txt')\n"
                  "    return 'pwned'\n", "wrong"),
    ("subprocess_rm", "import subprocess\n" + H + "    done = subprocess.run(['rm', '-rf', 'SENTINEL'])\n"
                      "    return ('pwned', done.returncode)\n", "wrong"),
    ("popen_shell", "import os\n" + H + "    return ('pwned', os.popen('cat /etc/shadow; ls /root').read())\n",
     "wrong"),
    ("write_outside", H + "    with open('SENTINEL/pwned_write.txt', 'w') as fh:\n        fh.write('pwned')\n"
                      "    return 'pwned'\n", "wrong"),
    ("write_project", H + "    with open('ROOT/PWNED_BY_ANSWER', 'w') as fh:\n        fh.write('pwned')\n"
                      "    return 'pwned'\n", "wrong"),
    ("append_existing", H + "    with open('SENTINEL/keep.txt', 'a') as fh:\n        fh.write('pwned')\n"
                        "    return 'pwned'\n", "wrong"),
    ("delete_file", "import os\n" + H + "    os.remove('SENTINEL/keep.txt')\n    return 'pwned'\n", "wrong"),
    ("rmtree_folder", "import shutil\n" + H + "    shutil.rmtree('SENTINEL')\n    return 'pwned'\n", "wrong"),
    ("rename_file", "import os\n" + H + "    os.rename('SENTINEL/keep.txt', 'SENTINEL/moved.txt')\n"
                    "    return 'pwned'\n", "wrong"),
    ("chmod_files", "import os\n" + H + "    os.chmod('SENTINEL', 0o777)\n    os.chmod('SENTINEL/keep.txt', 0o666)\n"
                    "    return 'pwned'\n", "wrong"),
    ("fill_tmp", H + "    for i in range(100):\n        with open('/tmp/pybugfix_fill%d' % i, 'wb') as fh:\n"
                 "            fh.write(b'x' * 2 ** 20)\n    return 'pwned'\n", "wrong"),
    ("read_ssh_keys", "import os\n" + H + "    found = []\n"
                      "    for path in ('SENTINEL/.ssh/id_rsa', os.path.expanduser('~/.ssh/id_rsa'),\n"
                      "                 '/root/.ssh/id_rsa'):\n"
                      "        try:\n            found.append(open(path).read()[-40:])\n"
                      "        except OSError as exc:\n            found.append(type(exc).__name__)\n"
                      "    return found\n", "wrong"),
    ("env_canary", "import os\n" + H + "    return [os.environ.get('CANARY_ENV'), sorted(os.environ)]\n", "wrong"),
    ("proc_environ", "import os\n" + H + "    found = []\n"
                     "    for pid in ('self', str(os.getppid()), str(os.getpgrp()), '1'):\n"
                     "        try:\n            data = open('/proc/%s/environ' % pid, 'rb').read().decode('latin-1')\n"
                     "            found += [v for v in data.split('\\0') if 'CANARY_ENV' in v]\n"
                     "        except OSError as exc:\n            found.append(type(exc).__name__)\n"
                     "    return found\n", "wrong"),
    ("socket_localhost", "import socket\n" + H + "    s = socket.create_connection(('127.0.0.1', PORT), timeout=1)\n"
                         "    s.sendall(b'pwned')\n    return 'pwned'\n", "wrong"),
    ("import_project_forge", "import sys\n" + H + "    sys.path.insert(0, 'ROOT')\n"
                             "    from verifiers.pybugfix.tasks import SPECS\n"
                             "    spec = next(s for s in SPECS if s.name == 'sum_first')\n    ns = {}\n"
                             "    exec(spec.fixed, ns)\n    return ns['sum_first'](xs, n)\n", "wrong"),
    ("import_harness", H + "    import harness\n    return 'pwned'\n", "wrong"),
    ("patch_runner_encode", "import sys\n" + H + "    runner = sys.modules['__main__']\n"
                            "    runner.encode = lambda value, *a, **k: 'all tests passed'\n    return -1\n", "wrong"),
    ("forge_report", "import os, sys, json\n" + H + "    frame = sys._getframe()\n"
                     "    while frame is not None and 'nonce' not in frame.f_locals:\n        frame = frame.f_back\n"
                     "    if frame is not None:\n        local = frame.f_locals\n"
                     "        rows = [['ok', 'all tests passed']] * len(local['payload']['calls'])\n"
                     "        report = {'nonce': local['nonce'], 'results': rows}\n"
                     "        os.write(local['result_fd'], json.dumps(report).encode())\n"
                     "        os._exit(0)\n    return -1\n", "wrong"),
    ("print_fake_pass", H + "    print('all tests passed')\n    print('OK (4 tests)')\n    return None\n", "wrong"),
    ("sys_exit_in_function", "import sys\n" + H + "    sys.exit(0)\n", "wrong"),
    ("sys_exit_top_level", "import sys\nsys.exit(0)\n" + H + "    return -1\n", "wrong"),
    ("patch_runner_top_level", "import sys\nsys.modules['__main__'].describe = None\n" + H + "    return -1\n",
     "wrong"),
    ("os_exit", "import os\n" + H + "    os._exit(0)\n", "wrong"),
    ("keyboard_interrupt", H + "    raise KeyboardInterrupt\n", "wrong"),
    ("syntax_error", "def sum_first(xs, n)\n    return sum(xs[:n])\n", "zero"),
    ("defined_twice", H + "    return sum(xs[:n])\n\n\n" + H + "    return -1\n", "zero"),
    ("kill_parent", "import os, signal\n" + H + "    os.kill(os.getppid(), signal.SIGKILL)\n    return 'pwned'\n",
     "wrong"),
    ("kill_everything", "import os, signal\n" + H + "    os.kill(-1, signal.SIGKILL)\n    return 'pwned'\n", "wrong"),
    ("ignore_signals_and_spin", "import signal\n" + H +
     "    for sig in (signal.SIGTERM, signal.SIGXCPU, signal.SIGINT, signal.SIGHUP):\n"
     "        signal.signal(sig, signal.SIG_IGN)\n    while True:\n        pass\n", "wrong"),
    ("stack_overflow_crash", "import sys\n" + H + "    sys.setrecursionlimit(10 ** 8)\n\n    def down(k):\n"
                             "        return down(k + 1) + 1\n    return down(0)\n", "wrong"),
    ("exception_str_loops", H + "    class Boom(Exception):\n        def __str__(self):\n            while True:\n"
                            "                pass\n    raise Boom()\n", "wrong"),
    ("lying_object", H + "    class Liar:\n        def __eq__(self, other):\n            return True\n\n"
                     "        def __repr__(self):\n            return '5'\n    return Liar()\n", "wrong"),
    ("lying_int_subclass", H + "    class Five(int):\n        def __eq__(self, other):\n            return True\n"
                           "    return Five(5)\n", "wrong"),
)

#: Cases that only a dedicated uid (the harness running as root) or bubblewrap keeps harmless: without
#: root, the limits-only sandbox runs as the harness's user, who may delete, rename and chmod their own files
#: and signal their own processes (the README says so).  Skipped in that one configuration.
NEEDS_ISOLATION: frozenset[str] = frozenset({"delete_file", "rmtree_folder", "rename_file", "chmod_files",
                                             "kill_parent", "kill_everything", "os_system"})


def render(code: str, sentinel: str, port: int) -> str:
    """The answer text: ``code`` with its placeholders filled, in a fenced block."""
    filled = (code.replace("SENTINEL", sentinel).replace("ROOT", str(ROOT)).replace("PORT", str(port))
              .replace("CANARY_ENV", CANARY_ENV))
    return f"```python\n{filled}```\n"


def sandbox_processes() -> list[str]:
    """Live processes that belong to a sandbox: a sandbox uid's, or one with the runner's argv marker."""
    from verifiers.pybugfix.sandbox import ARGV_MARKER, UID_BASE, UID_SLOTS, live_pids, tagged_pids

    pids = set(tagged_pids(ARGV_MARKER))
    for entry in os.scandir("/proc"):
        try:
            uid = entry.stat().st_uid if entry.name.isdigit() else -1
        except OSError:
            continue
        if UID_BASE <= uid < UID_BASE + 4096 * UID_SLOTS:
            pids.update(live_pids(uid))
    found = []
    for pid in sorted(pids):
        try:
            found.append(f"pid {pid}: {Path(f'/proc/{pid}/cmdline').read_bytes()[:60]!r}")
        except OSError:
            continue
    return found


def main(argv: list[str]) -> int:
    mode, sentinel, port = argv[0], argv[1], int(argv[2])
    sys.path.insert(0, str(ROOT))
    from verifiers.pybugfix import Limits, PythonBugfixVerifier, Sandbox

    verifier = PythonBugfixVerifier(sandbox=Sandbox(mode, Limits(cpu_s=1, wall_s=2.0)))
    question = next(t.question for t in verifier.tasks() if t.task_id == "off_by_one/sum_first")
    skip = NEEDS_ISOLATION if mode == "limits" and os.geteuid() != 0 else frozenset()
    cases = [(case_id, code) for case_id, code, _ in CORPUS if case_id not in skip]
    grades = verifier.score_many([(question, render(code, sentinel, port)) for _, code in cases])
    result = {"kind": verifier.sandbox_kind, "skipped": sorted(skip),
              "grades": {case_id: g.to_dict() for (case_id, _), g in zip(cases, grades, strict=True)},
              "leftovers": sandbox_processes()}
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
