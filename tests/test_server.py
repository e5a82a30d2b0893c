"""Runs against a real ``mlflow server`` (SQLite backend; PostgreSQL with 8 processes at once) and threaded
holdout generation.

The server tests start ``mlflow server`` on 127.0.0.1 as a subprocess with its own artifact destination, run
``harness evolve`` (offline test LM) as separate processes with ``MLFLOW_TRACKING_URI`` pointing at it, and
read everything back through ``MlflowClient``.  The PostgreSQL test needs ``HARNESS_TEST_POSTGRES_URI`` (set by
``.ci/postgres.sh``, which ``.ci/run`` sources); without it the test skips locally and fails in CI (``CI`` set),
so the check cannot silently vanish there.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dspy
import pytest
from mlflow import MlflowClient

from harness.engine.holdout import generate
from harness.engine.program import SkillProgram
from harness.models.lm import ModelSpec, build_lm
from harness.skills.files import bundled_skills_dir, load_skill
from harness.tracking.export import holdout_table
from verifiers import get_verifier

EXPERIMENT = "skills/arxiv"
HOLDOUT_TABLE = "holdout/holdout_table.json"
EVOLVED_SKILL = "skill/evolved/SKILL.md"
#: rows of a holdout table per holdout task: 3 variants (baseline, evolved, the no-skill control) × 2 graders
ROWS_PER_TASK = 6
SERVER_START_TIMEOUT_S = 120
PARALLEL_RUNS = 8


@dataclass
class Server:
    """A running ``mlflow server`` subprocess."""

    url: str
    process: subprocess.Popen[bytes]
    artifacts: Path
    log: Path

    def log_tail(self, chars: int = 3000) -> str:
        """The end of the server's combined output (for failure messages)."""
        return self.log.read_text(errors="replace")[-chars:] if self.log.exists() else "(no log)"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _child_env(tracking_uri: str | None = None) -> dict[str, str]:
    """This process's environment without a run/experiment of its own, pointed at ``tracking_uri``."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("MLFLOW_RUN_ID", "MLFLOW_EXPERIMENT_NAME", "MLFLOW_EXPERIMENT_ID", "MLFLOW_TRACKING_URI")}
    env["PYTHONUNBUFFERED"] = "1"
    if tracking_uri:
        env["MLFLOW_TRACKING_URI"] = tracking_uri
    return env


def _stop(process: subprocess.Popen[Any]) -> None:
    """Stop a process started with ``start_new_session=True`` and its own children (its process group)."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=15)
    except ProcessLookupError:
        return
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=15)


def start_server(backend_store_uri: str, root: Path, workers: int = 1) -> Server:
    """Start ``mlflow server`` on a free 127.0.0.1 port with artifacts under ``root/artifacts``; wait for /health.

    Raises:
        RuntimeError: the server exited or did not answer /health within ``SERVER_START_TIMEOUT_S``.
    """
    port = _free_port()
    artifacts = root / "artifacts"
    log = root / "server.log"
    args = [sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(port),
            "--workers", str(workers), "--backend-store-uri", backend_store_uri,
            "--artifacts-destination", str(artifacts)]
    # no background job runner (GenAI evaluation jobs): one process less competing for the CPU
    env = {**_child_env(), "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
    with log.open("wb") as out:
        process = subprocess.Popen(args, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    server = Server(f"http://127.0.0.1:{port}", process, artifacts, log)
    deadline = time.monotonic() + SERVER_START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"mlflow server exited with {process.returncode}:\n{server.log_tail()}")
        try:
            with urllib.request.urlopen(f"{server.url}/health", timeout=2) as response:
                if response.status == 200:
                    return server
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.25)
    _stop(process)
    raise RuntimeError(f"mlflow server did not answer /health in {SERVER_START_TIMEOUT_S} s:\n{server.log_tail()}")


@pytest.fixture
def sqlite_server(tmp_path: Path, _migrated_store: Path) -> Iterator[Server]:
    """A tracking server with a SQLite backend store and a proxied artifact destination, both in ``tmp_path``.

    The database starts as a copy of the session's migrated empty store (conftest), which saves the server
    its schema migrations.
    """
    shutil.copy(_migrated_store, tmp_path / "server.db")
    server = start_server(f"sqlite:///{tmp_path / 'server.db'}", tmp_path)
    try:
        yield server
    finally:
        _stop(server.process)


def _postgres_uri() -> str:
    uri = os.environ.get("HARNESS_TEST_POSTGRES_URI", "")
    if not uri:
        if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
            pytest.fail("HARNESS_TEST_POSTGRES_URI is not set in CI: .ci/run must source .ci/postgres.sh")
        pytest.skip("HARNESS_TEST_POSTGRES_URI is not set (`. .ci/postgres.sh` starts PostgreSQL and sets it)")
    return uri


def sqlalchemy_postgres_uri(uri: str) -> str:
    """``postgresql://`` / ``postgres://`` -> ``postgresql+psycopg2://`` (other driver prefixes kept).

    SQLAlchemy 2.1 maps a bare ``postgresql://`` to the psycopg 3 driver; the dev extra installs psycopg2.
    """
    scheme, sep, rest = uri.partition("://")
    return f"postgresql+psycopg2://{rest}" if sep and scheme in ("postgresql", "postgres") else uri


@contextmanager
def fresh_postgres_database() -> Iterator[str]:
    """A fresh, empty PostgreSQL database for this test run (dropped afterwards); yields its SQLAlchemy URI.

    A new database ``<db>_test_<hex>`` is created next to the one in ``HARNESS_TEST_POSTGRES_URI`` (its role
    needs CREATEDB, as ``.ci/postgres.sh`` grants); without that privilege the given database's ``public``
    schema is dropped and recreated instead.  Either way no earlier run is visible.
    """
    import psycopg2
    from psycopg2 import errors, sql

    base = _postgres_uri()  # skips (locally) or fails (CI) without a server: called in the test, not a fixture
    parts = urllib.parse.urlsplit(base)
    name = f"{parts.path.lstrip('/') or 'mlflow'}_test_{uuid.uuid4().hex[:12]}"
    admin = psycopg2.connect(urllib.parse.urlunsplit(parts._replace(scheme="postgresql")))  # libpq: no +driver
    admin.autocommit = True
    created = True
    try:
        with admin.cursor() as cur:
            cur.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    except errors.InsufficientPrivilege:
        created = False
        with admin.cursor() as cur:
            cur.execute("DROP SCHEMA IF EXISTS public CASCADE; CREATE SCHEMA public")
    try:
        yield sqlalchemy_postgres_uri(urllib.parse.urlunsplit(parts._replace(path=f"/{name}")) if created else base)
    finally:
        if created:
            with admin.cursor() as cur:
                cur.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        admin.close()


def _harness() -> list[str]:
    """The ``harness`` console script of this interpreter's environment."""
    script = Path(sys.executable).parent / "harness"
    return [str(script)] if script.exists() else [sys.executable, "-m", "harness.cli"]


def _evolve_args(num_cases: int, budget: int, seed: int, output_dir: Path) -> list[str]:
    """``harness evolve`` with the offline oracle LM; its local files go to ``output_dir`` (not a temp folder)."""
    return [*_harness(), "evolve", "--task-model", "test/oracle", "--num-cases", str(num_cases),
            "--budget", str(budget), "--seed", str(seed), "--output-dir", str(output_dir), "--quiet"]


def _load_json_artifact(client: MlflowClient, run_id: str, path: str, dst: Path) -> Any:
    return json.loads(Path(client.download_artifacts(run_id, path, str(dst))).read_text(encoding="utf-8"))


def _check_run(client: MlflowClient, run_id: str, num_cases: int, seed: int, dst: Path) -> int:
    """Assert that one ``harness evolve`` run arrived whole; returns its holdout table's row count."""
    run = client.get_run(run_id)
    assert run.info.status == "FINISHED", run.info
    params = run.data.params
    splits = get_verifier("arxiv").build_dataset(num_cases, seed)
    expected = {"skill": "arxiv", "fitness": "verifier", "task_model": "test/oracle", "num_cases": str(num_cases),
                "seed": str(seed), "dataset_digest": splits.digest(),
                "split.holdout": str(splits.sizes["holdout"])}
    assert {k: params.get(k) for k in expected} == expected
    metrics = run.data.metrics
    for key in ("holdout.verifier.baseline", "holdout.verifier.evolved", "holdout.verifier.delta",
                "holdout.keyword.baseline", "holdout.keyword.evolved", "wall_time_s", "lm_calls.task"):
        assert key in metrics, key
    assert metrics["holdout.verifier.baseline"] == pytest.approx(1.0)  # test/oracle answers every task right
    assert client.get_metric_history(run_id, "gepa.best_val_score"), "no optimisation progress logged"
    contexts = {t.value for i in run.inputs.dataset_inputs for t in i.tags if t.key == "mlflow.data.context"}
    assert contexts >= {"holdout", "trainset", "valset"}  # the harness's splits (MLflow may log inputs of its own)

    assert run.info.artifact_uri.startswith("mlflow-artifacts:"), run.info.artifact_uri  # proxied by the server
    evolved = Path(client.download_artifacts(run_id, EVOLVED_SKILL, str(dst / run_id)))
    baseline = load_skill(bundled_skills_dir() / "arxiv" / "SKILL.md")
    assert evolved.read_text(encoding="utf-8").startswith(baseline.frontmatter_text)
    table = _load_json_artifact(client, run_id, HOLDOUT_TABLE, dst / run_id)
    assert set(table) >= {"columns", "data"}
    assert {"task_id", "variant", "grader", "composite"} <= set(table["columns"])
    assert len(table["data"]) == splits.sizes["holdout"] * ROWS_PER_TASK
    return len(table["data"])


def test_evolution_logs_to_a_tracking_server(sqlite_server: Server, tmp_path: Path) -> None:
    """One ``harness evolve`` process against ``mlflow server`` (SQLite backend, proxied artifacts)."""
    proc = subprocess.run(_evolve_args(12, 12, 0, tmp_path / "out"), cwd=tmp_path, env=_child_env(sqlite_server.url),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}\n{sqlite_server.log_tail()}"
    assert not (tmp_path / "mlflow.db").exists() and not (tmp_path / "mlruns").exists()  # nothing logged locally

    client = MlflowClient(tracking_uri=sqlite_server.url)
    experiment = client.get_experiment_by_name(EXPERIMENT)
    assert experiment is not None
    runs = client.search_runs([experiment.experiment_id])
    assert len(runs) == 1
    run_id = runs[0].info.run_id
    assert run_id in proc.stdout
    rows = _check_run(client, run_id, 12, 0, tmp_path / "downloads")
    # the files are in the server's artifact destination, not under the client's working folder
    assert list(sqlite_server.artifacts.rglob(HOLDOUT_TABLE.split("/")[-1]))

    frame = holdout_table(experiment=EXPERIMENT, tracking_uri=sqlite_server.url)
    assert len(frame) == rows
    assert set(frame["run_id"]) == {run_id}
    assert frame.attrs["skipped_run_ids"] == []


def test_eight_processes_log_to_a_postgres_backed_server_at_once(tmp_path: Path) -> None:
    """8 concurrent ``harness evolve`` processes, one server on PostgreSQL: every run arrives whole."""
    with fresh_postgres_database() as backend_store_uri:
        _eight_processes_at_once(backend_store_uri, tmp_path)


def _eight_processes_at_once(backend_store_uri: str, tmp_path: Path) -> None:
    server = start_server(backend_store_uri, tmp_path, workers=2)
    procs: list[tuple[int, int, subprocess.Popen[str]]] = []
    try:
        env = _child_env(server.url)
        for seed in range(PARALLEL_RUNS):
            num_cases = (12, 16, 20)[seed % 3]  # different sizes: each table has its own row count
            logs = tmp_path / f"evolve-{seed}.log"
            with logs.open("w") as out:
                procs.append((seed, num_cases, subprocess.Popen(
                    _evolve_args(num_cases, 10, seed, tmp_path / f"out-{seed}"), cwd=tmp_path, env=env, stdout=out,
                    stderr=subprocess.STDOUT, text=True, start_new_session=True)))
        deadline = time.monotonic() + 600
        for seed, _, proc in procs:
            try:
                proc.wait(timeout=max(1.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pytest.fail(f"harness evolve --seed {seed} did not finish in time")
        failed = {seed: (tmp_path / f"evolve-{seed}.log").read_text()[-2000:]
                  for seed, _, proc in procs if proc.returncode != 0}
        assert not failed, f"{failed}\n{server.log_tail()}"

        client = MlflowClient(tracking_uri=server.url)
        experiment = client.get_experiment_by_name(EXPERIMENT)
        assert experiment is not None
        runs = client.search_runs([experiment.experiment_id], max_results=100)
        assert len(runs) == PARALLEL_RUNS
        assert not client.search_runs([experiment.experiment_id], "attributes.status != 'FINISHED'")
        by_seed = {int(r.data.params["seed"]): r.info.run_id for r in runs}
        assert sorted(by_seed) == list(range(PARALLEL_RUNS))
        total = sum(_check_run(client, by_seed[seed], num_cases, seed, tmp_path / "downloads")
                    for seed, num_cases, _ in procs)

        frame = holdout_table(experiment=EXPERIMENT, tracking_uri=server.url)
        assert len(frame) == total
        assert frame.attrs["run_count"] == PARALLEL_RUNS and frame.attrs["skipped_run_ids"] == []
    finally:
        for _, _, proc in procs:
            _stop(proc)
        _stop(server.process)
        shutil.rmtree(tmp_path / "downloads", ignore_errors=True)


def test_threaded_generation_keeps_task_order_and_values() -> None:
    """``generate`` with 8 threads returns the same outputs, in task order, as with 1 thread."""
    tasks = get_verifier("arxiv").tasks()[:16]
    body = load_skill(bundled_skills_dir() / "arxiv" / "SKILL.md").body
    lm = build_lm(ModelSpec("test/sleepy-50", cache=False))
    done: list[int] = []
    with dspy.context(lm=lm):
        serial = generate(SkillProgram(body), tasks, num_threads=1)
        threaded = generate(SkillProgram(body), tasks, num_threads=8, on_done=lambda: done.append(1))
    assert [o.task.task_id for o in threaded] == [t.task_id for t in tasks]
    assert threaded == serial
    assert all(o.text and not o.error for o in threaded)
    assert len(done) == len(tasks)
    assert len(lm.history) == 2 * len(tasks)  # every call recorded once, under threads too
