"""Fault pass (issue 20): evolve runs against a stub OpenAI-compatible server on 127.0.0.1 that fails on purpose.

Each fault (HTTP 429, HTTP 500, a timeout, a reply that is not JSON, an empty reply) at two shares of calls
(20 % and 100 %), one `harness evolve` each, in one process, against a fresh SQLite store in a temporary folder.
Bounded: 10 tasks, budget 6, client timeout 2 s (the stub hangs 3 s on a timeout fault), 3 retries with
``Retry-After: 0``.  No network beyond 127.0.0.1.

    PYTHONPATH=. python experiments/faults/fault_pass.py [--shares 0.2,1.0] [--faults 429,500,timeout,garbage,empty]

Prints one line per case: exit code, run status, LM calls/errors, verifier delta and the error's first line.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

FAULTS = ("429", "500", "timeout", "garbage", "empty")


def _stub(fault: str, share: float):  # type: ignore[no-untyped-def]
    from openai_stub import StubServer

    if fault in ("429", "500"):
        return StubServer(fail_share=share, fail_status=int(fault))
    return StubServer(fault=fault, fail_share=share, hang_s=3.0)


def run_case(fault: str, share: float, store: str) -> str:
    """One evolve run under one fault; returns the result line."""
    import mlflow
    from click.testing import CliRunner

    import harness.models.roles as roles
    from harness.cli import main

    original = roles.ModelSpec
    roles.ModelSpec = lambda *a, **k: replace(original(*a, **k), timeout_s=2.0)  # type: ignore[misc]
    experiment = f"faults/{fault}-{share:g}"
    started = time.perf_counter()
    try:
        with _stub(fault, share) as stub:
            result = CliRunner().invoke(main, ["evolve", "--task-model", "openai/stub-model", "--api-base", stub.url,
                                               "--num-cases", "10", "--budget", "6", "--experiment", experiment,
                                               "--fitness", "verifier", "--quiet"])
            requests = stub.requests
    finally:
        roles.ModelSpec = original  # type: ignore[misc]
    wall = time.perf_counter() - started
    runs = mlflow.MlflowClient(tracking_uri=store).search_runs(
        [e.experiment_id for e in mlflow.MlflowClient(tracking_uri=store).search_experiments()
         if e.name == experiment]) if mlflow.MlflowClient(tracking_uri=store).get_experiment_by_name(experiment) \
        else []
    status = runs[0].info.status if runs else "no run"
    metrics = runs[0].data.metrics if runs else {}
    error = (runs[0].data.tags.get("run.error", "") if runs else "") or \
        next((ln for ln in result.output.splitlines() if ln.startswith("Error")), "")
    return (f"{fault:>7} {share:>4.0%}  exit {result.exit_code}  {status:<8}  requests {requests:>3}  "
            f"lm_calls {metrics.get('lm_calls.total', float('nan')):>4.0f}  "
            f"lm_errors {metrics.get('lm_errors.total', float('nan')):>3.0f}  "
            f"delta {metrics.get('holdout.verifier.delta', float('nan')):+.3f}  {wall:5.1f} s  {error[:150]}")


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shares", default="0.2,1.0")
    parser.add_argument("--faults", default=",".join(FAULTS))
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="fault-pass-"))
    store = f"sqlite:///{folder / 'mlflow.db'}"
    os.environ["MLFLOW_TRACKING_URI"] = store
    os.environ["DSPY_CACHEDIR"] = str(folder / "cache")
    for fault in args.faults.split(","):
        for share in (float(s) for s in args.shares.split(",")):
            with contextlib.redirect_stderr(io.StringIO()):
                line = run_case(fault, share, store)
            print(line, flush=True)


if __name__ == "__main__":
    main_()
