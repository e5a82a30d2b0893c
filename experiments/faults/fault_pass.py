"""Fault pass (issue 20): evolve runs against a stub OpenAI-compatible server on 127.0.0.1 that fails on purpose.

Each fault (HTTP 429, HTTP 500, a timeout, a reply that is not JSON, an empty reply) in three modes, one
``harness evolve`` each, in one process, against a fresh SQLite store in a temporary folder:

* ``0.05``, ``0.2``: every 20th, every fifth chat request fails (the preflight's probe is request 1 and
  succeeds); 5 % of faults that outlast DSPy's retries stays under the error-share rule's 10 %, so the run
  finishes and shows the faulted holdout pairs left out of the paired test;
* ``1.0``: every request fails, the preflight's probe included;
* ``1.0p``: the probe succeeds, then every request fails (issue 20, point 1: "an LM that fails every call
  after the preflight").

After each faulted run the same command runs again against a healthy stub with the same DSPy cache folder:
a faulted reply that had been cached would be replayed there (an empty reply fails again as
``EmptyReplyError``, so ``lm_errors`` > 0).  The cache folder is also read directly for empty records.

Bounded: 50 tasks (about 12 holdout pairs), budget 6, 4 threads, client timeout 2 s (the stub hangs 3 s on a
timeout fault), DSPy's 3 retries with ``Retry-After: 0`` on 429/5xx.  No network beyond 127.0.0.1.

    PYTHONPATH=. python experiments/faults/fault_pass.py [--modes 0.05,0.2,1.0,1.0p] [--faults 429,500,...]
        [--num-cases 50] [--markdown experiments/faults/RESULTS.md]

Prints one line per case; ``--markdown`` also writes the table (``RESULTS.md``'s format).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

FAULTS = ("429", "500", "timeout", "garbage", "empty")
MODES = ("0.05", "0.2", "1.0", "1.0p")
#: the client's per-attempt timeout in the pass (seconds) and how long the stub hangs on a timeout fault
CLIENT_TIMEOUT_S = 2.0
HANG_S = 3.0


@dataclass
class Outcome:
    """What one ``harness evolve`` did: from its exit, its output and its MLflow run."""

    exit_code: int
    status: str
    reason: str
    errors: dict[str, int] = field(default_factory=dict)
    verdict: str = ""
    #: (baseline, evolved) and the no-skill control's (none, baseline): failed-call tasks in the holdout table
    #: (either side), pairs the paired test left out for faults, pairs it tested; NaN when not recorded
    pairs: dict[str, tuple[int, float, float]] = field(default_factory=dict)
    #: what the user saw under ``--quiet``: a traceback anywhere in stdout/stderr; the summary's "LM errors" row
    traceback: bool = False
    summary_errors: bool = False
    requests: int = 0
    wall_s: float = 0.0


@dataclass
class Case:
    """One fault x mode: the faulted run, the healthy rerun and the empty records found in the cache."""

    fault: str
    mode: str
    faulted: Outcome
    rerun: Outcome
    cached_empty: int

    def pairs_ok(self) -> str:
        """Whether every holdout task with a failed call on either side was left out of each paired test
        (evolved vs baseline, and the no-skill control vs baseline); ``n/a`` when the run tested nothing."""
        run = self.faulted
        if run.status != "FINISHED" or not run.pairs:
            return "n/a (no paired test)"
        ok = all(excluded == faulted for faulted, excluded, _ in run.pairs.values())
        return ("yes" if ok else "NO") + ": " + "; ".join(
            f"{name}: {faulted} faulted task(s), {excluded:.0f} excluded, {tested:.0f} tested"
            for name, (faulted, excluded, tested) in run.pairs.items())

    def output(self) -> str:
        """What ``--quiet`` showed: a traceback or none, and for a finished run with failed calls whether the
        summary has its "LM errors" row."""
        run = self.faulted
        text = "traceback" if run.traceback else "no traceback"
        if run.status == "FINISHED" and run.errors:
            text += "; summary lists LM errors" if run.summary_errors else "; summary does NOT list LM errors"
        return text

    def verdict_ok(self) -> str:
        """Whether no verdict rests on faults: a FAILED run has none; a FINISHED one tested only clean pairs."""
        run = self.faulted
        if run.status != "FINISHED":
            return "none" if not run.verdict else f"NO: {run.verdict}"
        return f"{run.verdict} (clean pairs only)" if self.pairs_ok().startswith("yes") else f"NO: {run.verdict}"


def _stub(fault: str, mode: str, healthy: bool = False) -> Any:
    from openai_stub import StubServer

    if healthy:
        return StubServer()
    share = float(mode.removesuffix("p"))
    pass_first = 1 if mode.endswith("p") else 0
    if fault in ("429", "500"):
        return StubServer(fail_share=share, fail_status=int(fault), pass_first=pass_first)
    return StubServer(fault=fault, fail_share=share, hang_s=HANG_S, pass_first=pass_first)


@contextlib.contextmanager
def short_timeouts(seconds: float) -> Iterator[None]:
    """Every role's :class:`~harness.models.lm.ModelSpec` built by the run gets ``timeout_s=seconds``."""
    import harness.models.roles as roles

    original = roles.ModelSpec
    roles.ModelSpec = lambda *a, **k: replace(original(*a, **k), timeout_s=seconds)  # type: ignore[misc,assignment]
    try:
        yield
    finally:
        roles.ModelSpec = original  # type: ignore[misc]


def evolve_once(stub: Any, experiment: str, cache: Path, num_cases: int) -> Outcome:
    """One ``harness evolve`` against ``stub`` (in process), read back from the store."""
    from click.testing import CliRunner

    from harness.cli import main

    started = time.perf_counter()
    with short_timeouts(CLIENT_TIMEOUT_S), stub, contextlib.redirect_stderr(io.StringIO()) as stderr:
        result = CliRunner().invoke(main, ["evolve", "--task-model", "openai/stub-model", "--api-base", stub.url,
                                           "--num-cases", str(num_cases), "--budget", "6", "--num-threads", "4",
                                           "--experiment", experiment, "--fitness", "verifier",
                                           "--cache-dir", str(cache), "--quiet"])
        requests = stub.requests
    outcome = read_run(experiment, result.output)
    outcome.exit_code, outcome.requests, outcome.wall_s = result.exit_code, requests, time.perf_counter() - started
    outcome.traceback = "Traceback" in result.output + stderr.getvalue()
    outcome.summary_errors = any(line.lstrip("│ ").startswith("LM errors") for line in result.output.splitlines())
    return outcome


def read_run(experiment: str, output: str) -> Outcome:
    """The outcome recorded by the latest run of ``experiment`` (exit code, requests and wall time left 0)."""
    import mlflow

    from harness import artifacts

    client = mlflow.MlflowClient()
    found = client.get_experiment_by_name(experiment)
    runs = client.search_runs([found.experiment_id], order_by=["attributes.start_time DESC"]) if found else []
    shown = next((ln for ln in output.splitlines() if ln.startswith("Error")), "")
    if not runs:
        return Outcome(0, "no run", shown)
    run = runs[0]
    reason = run.data.tags.get("run.error", "") or shown
    outcome = Outcome(0, run.info.status, reason, verdict=run.data.tags.get("verdict", ""))
    stats = _artifact_json(client, run.info.run_id, artifacts.STATS_TABLE)
    verifier = next((row for row in _rows(stats) if row["grader"] == "verifier"), None) if stats else None
    metrics = run.data.metrics
    main = verifier or {}
    recorded = {"evolved": (main.get("faulted_pairs", math.nan), main.get("n_pairs", math.nan)),
                "control": (metrics.get("control.baseline.verifier.faulted_pairs", math.nan),
                            metrics.get("control.baseline.verifier.n_pairs", math.nan))}
    errors = _artifact_json(client, run.info.run_id, artifacts.LM_ERRORS)
    if errors:
        outcome.errors = dict(Counter(f"{e['role']}:{e['error'].split(':', 1)[0]}" for e in errors["errors"]))
    table = _artifact_json(client, run.info.run_id, artifacts.HOLDOUT_TABLE)
    if table:
        failed: dict[str, set[str]] = {}
        for row in _rows(table):
            if _failed(row.get("error")):
                failed.setdefault(row["variant"], set()).add(row["task_id"])
        sides = {"evolved": ("baseline", "evolved"), "control": ("none", "baseline")}
        for name, (before, after) in sides.items():
            if not math.isnan(recorded[name][1]):
                faulted = len(failed.get(before, set()) | failed.get(after, set()))
                outcome.pairs[name] = (faulted, float(recorded[name][0]), float(recorded[name][1]))
    return outcome


def _rows(table: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of an MLflow ``log_table`` JSON artifact (``{"columns": [...], "data": [[...], ...]}``)."""
    return [dict(zip(table["columns"], values, strict=True)) for values in table["data"]]


def _failed(error: Any) -> bool:
    """Whether a holdout row's ``error`` cell records a failed call (a non-blank string; NaN/None = no)."""
    return isinstance(error, str) and bool(error.strip())


def _artifact_json(client: Any, run_id: str, path: str) -> Any:
    """The JSON artifact ``path`` of ``run_id`` (an MLflow table is ``{"columns": [...], "data": [[...]]}``),
    or None when the run has none."""
    try:
        local = client.download_artifacts(run_id, path, tempfile.mkdtemp(prefix="fault-run-"))
    except Exception:  # MLflow raises its own errors for a missing artifact
        return None
    return json.loads(Path(local).read_text(encoding="utf-8"))


def cached_empty_records(cache: Path) -> int:
    """How many records in the DSPy disk cache at ``cache`` hold only empty replies."""
    from diskcache import FanoutCache

    from harness.models.guard import record_empty

    disk = FanoutCache(str(cache), shards=16)
    try:
        return sum(1 for key in disk if record_empty(disk.get(key)))
    finally:
        disk.close()


def run_case(fault: str, mode: str, folder: Path, num_cases: int) -> Case:
    """The faulted run, then the healthy rerun on the same cache."""
    cache = folder / f"cache-{fault}-{mode}"
    name = f"faults/{fault}-{mode}"
    faulted = evolve_once(_stub(fault, mode), name, cache, num_cases)
    empty = cached_empty_records(cache) if cache.exists() else 0
    rerun = evolve_once(_stub(fault, mode, healthy=True), f"{name}/healthy-rerun", cache, num_cases)
    return Case(fault, mode, faulted, rerun, empty)


def _errors_text(errors: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(errors.items())) or "0"


def _cell(text: str, limit: int = 230) -> str:
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


HEADER = ("| fault | share | exit | status | reason shown | lm_errors (role:type count) | faulted pairs out of "
          "the paired test | verdict | --quiet output | empty records cached | healthy rerun: exit, status, "
          "lm_errors, requests | wall s |\n|---|---|---|---|---|---|---|---|---|---|---|---|")


def table_row(case: Case) -> str:
    """One markdown table row of ``case``."""
    f, r = case.faulted, case.rerun
    mode = {"1.0p": "100 % after the preflight", "1.0": "100 %", "0.2": "20 %", "0.05": "5 %"}[case.mode]
    return (f"| {case.fault} | {mode} | {f.exit_code} | {f.status} | {_cell(f.reason) or '-'} | "
            f"{_errors_text(f.errors)} | {case.pairs_ok()} | {case.verdict_ok()} | {case.output()} | "
            f"{case.cached_empty} | "
            f"{r.exit_code}, {r.status}, {_errors_text(r.errors)}, {r.requests} | {f.wall_s:.0f} + {r.wall_s:.0f} |")


def main_() -> None:
    """Run every fault x mode; print one row each, and the table to ``--markdown`` when given."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated: " + ", ".join(MODES))
    parser.add_argument("--num-cases", type=int, default=50, help="tasks per run (about a fifth are holdout)")
    parser.add_argument("--faults", default=",".join(FAULTS), help="comma-separated: " + ", ".join(FAULTS))
    parser.add_argument("--markdown", default="", help="also write the markdown table to this file")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="fault-pass-"))
    os.environ["MLFLOW_TRACKING_URI"] = f"sqlite:///{folder / 'mlflow.db'}"
    os.environ["MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR"] = "false"  # no download bars between the rows
    rows = []
    print(HEADER, flush=True)
    for fault in args.faults.split(","):
        for mode in args.modes.split(","):
            case = run_case(fault, mode, folder, args.num_cases)
            rows.append(table_row(case))
            print(rows[-1], flush=True)
    if args.markdown:
        Path(args.markdown).write_text(HEADER + "\n" + "\n".join(rows) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main_()
