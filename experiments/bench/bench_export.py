"""Benchmark :func:`harness.tracking.export.holdout_table` on a local sqlite store with many runs.

Builds a temporary store (sqlite backend, local artifact folder) with ``num_runs`` synthetic evolution runs,
each logging a few params/tags/metrics and a holdout table of ``tasks`` tasks × 2 variants × 2 graders with
``mlflow.log_table`` — the same calls ``harness evolve`` makes.  Building the store is not timed; the
export (``holdout_table(experiment=...)``) is timed three times and the median printed on one line with the
row count and the machine.

Usage::

    python experiments/bench/bench_export.py [--runs 1000] [--tasks 68]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pandas as pd

EXPERIMENT = "bench/export"
KINDS = ("id_from_title", "title_from_id", "author", "year")
GRADERS = ("verifier", "keyword")
VARIANTS = ("baseline", "evolved")


def machine() -> dict[str, Any]:
    """``nproc`` (CPUs usable by this process) and the CPU model from /proc/cpuinfo."""
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    nproc = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return {"nproc": nproc, "cpu_model": model}


def synthetic_table(tasks: int, run_index: int) -> pd.DataFrame:
    """A holdout table like :func:`harness.engine.holdout.grade` makes: ``tasks`` × variants × graders rows."""
    rows = []
    for t in range(tasks):
        paper = f"{15 + t % 9:02d}{(t % 12) + 1:02d}.{(t * 7919 + 2531) % 100000:05d}"
        kind = KINDS[t % len(KINDS)]
        year = str(2015 + t % 9)
        for variant in VARIANTS:
            right = (t + run_index + (variant == "evolved")) % 3 != 0
            output = f"The answer is {year}." if right else "I am not sure."
            for grader in GRADERS:
                correctness = (1.0 if right else 0.0) if grader == "verifier" else 0.05 * (t % 7)
                composite = 0.7 * correctness + 0.3
                rows.append({"task_id": f"{paper}/{kind}", "kind": kind, "paper_id": paper, "variant": variant,
                             "grader": grader, "output": output, "correctness": correctness,
                             "well_formed": 1.0, "conciseness": 1.0, "composite": composite,
                             "feedback": (f"correct: expected year {year}, response said {year}" if right
                                          else f"wrong: expected year {year}, response gave no year"),
                             "error": ""})
    return pd.DataFrame(rows)


def build_store(root: Path, num_runs: int, tasks: int) -> str:
    """Create the sqlite store under ``root`` with ``num_runs`` runs; returns its tracking URI."""
    import mlflow
    from mlflow import MlflowClient
    from mlflow.entities import Metric, Param, RunTag

    uri = f"sqlite:///{root / 'mlflow.db'}"
    client = MlflowClient(tracking_uri=uri)
    experiment_id = client.create_experiment(EXPERIMENT, artifact_location=(root / "artifacts").as_uri())
    for i in range(num_runs):
        run = client.create_run(experiment_id, run_name=f"bench-{i}")
        run_id = run.info.run_id
        fitness = ("verifier", "keyword")[i % 2]
        now = int(time.time() * 1000)
        client.log_batch(
            run_id,
            metrics=[Metric("holdout.verifier.baseline", 0.5, now, 0), Metric("holdout.verifier.evolved", 0.6, now, 0),
                     Metric("holdout.verifier.delta", 0.1, now, 0), Metric("gepa.best_val_score", 0.6, now, 3)],
            params=[Param("skill", "arxiv"), Param("fitness", fitness), Param("fitness_resolved", fitness),
                    Param("optimizer", "gepa"), Param("seed", str(i % 5)), Param("task_model", "test/oracle"),
                    Param("reflection_model", ""), Param("budget", "60"), Param("num_cases", str(tasks)),
                    Param("dataset_digest", "0123456789abcdef")],
            tags=[RunTag("skill", "arxiv"), RunTag("fitness", fitness), RunTag("optimizer", "gepa"),
                  RunTag("proposer", "feedback"), RunTag("task_model", "test/oracle")],
        )
        client.log_table(run_id, data=synthetic_table(tasks, i), artifact_file="holdout/holdout_table.json")
        client.set_terminated(run_id, "FINISHED")
    mlflow.set_tracking_uri(None)
    return uri


def bench_export(num_runs: int = 1000, tasks: int = 68) -> dict[str, Any]:
    """Build a store with ``num_runs`` runs × ``tasks`` tasks and time ``holdout_table(experiment=...)``.

    Returns:
        ``{"seconds": median of 3 (s), "times": [s, s, s], "rows", "runs", "tasks", "setup_seconds",
        "nproc", "cpu_model"}``.

    Raises:
        AssertionError: the export did not return runs × tasks × 2 × 2 rows.
    """
    from harness.tracking.export import holdout_table

    with tempfile.TemporaryDirectory(prefix="bench-export-") as tmp:
        started = time.perf_counter()
        uri = build_store(Path(tmp), num_runs, tasks)
        setup = time.perf_counter() - started
        times = []
        rows = 0
        for _ in range(3):
            t0 = time.perf_counter()
            frame = holdout_table(experiment=EXPERIMENT, tracking_uri=uri)
            times.append(time.perf_counter() - t0)
            rows = len(frame)
        expected = num_runs * tasks * len(VARIANTS) * len(GRADERS)
        assert rows == expected, f"exported {rows} rows, expected {expected}"
    return {"seconds": statistics.median(times), "times": times, "rows": rows, "runs": num_runs, "tasks": tasks,
            "setup_seconds": setup, **machine()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--tasks", type=int, default=68)
    args = parser.parse_args(argv)
    r = bench_export(args.runs, args.tasks)
    print(f"holdout_table: {r['runs']} runs x {r['tasks']} tasks -> {r['rows']} rows in {r['seconds']:.2f} s "
          f"(median of 3: {', '.join(f'{t:.2f}' for t in r['times'])}; setup {r['setup_seconds']:.0f} s) "
          f"on {r['nproc']} CPUs, {r['cpu_model']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
