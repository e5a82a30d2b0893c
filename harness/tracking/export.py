"""Export what evolution runs logged to MLflow as tidy tables (CSV / Parquet) for analysis outside the UI.

* :func:`holdout_table` — one row per run × holdout task × variant × grader, read from each run's
  ``holdout/holdout_table.json`` (the ``mlflow.log_table`` artifact) with the run's settings joined in.
* :func:`holdout_pivot` — the same, baseline and evolved side by side with their deltas.
* :func:`run_summary` — one row per run: params, metrics and tags in ``mlflow.search_runs``' layout.
* :func:`write_table` — CSV or Parquet by file extension.
* :func:`export` — select, build and write (what ``harness export`` runs).

Runs are selected by experiment (name or id), explicit run ids, or the children of a parent run
(``tags.mlflow.parentRunId``); several selectors narrow each other down.  Runs are fetched with one paged
``MlflowClient.search_runs`` query set; a holdout table whose artifact URI is local is read straight from
disk, otherwise it is downloaded.  IDs, years and task ids stay strings: the JSON is parsed as JSON (orjson,
else :mod:`json`), never with ``pandas.read_json``'s type inference (which turns ``"1503.02531"`` into a float).
"""

from __future__ import annotations

import gc
import json
import logging
import re
import shlex
import tempfile
import urllib.parse
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from harness.artifacts import HOLDOUT_TABLE
from harness.messages import first_line

try:
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson comes with dspy
    _orjson = None

if TYPE_CHECKING:
    from mlflow import MlflowClient
    from mlflow.entities import Run

_logger = logging.getLogger(__name__)

#: where :func:`harness.run.evolve` logs the per-task holdout grades
HOLDOUT_ARTIFACT = HOLDOUT_TABLE


class ExportError(ValueError):
    """An export cannot be made as asked (the message names the input and the fix)."""

#: columns of the logged holdout table (:class:`harness.engine.holdout.HoldoutRow`)
TABLE_STRING_COLUMNS: tuple[str, ...] = ("task_id", "kind", "paper_id", "variant", "grader", "output")
SCORE_COLUMNS: tuple[str, ...] = ("correctness", "well_formed", "conciseness", "composite")
TABLE_TEXT_COLUMNS: tuple[str, ...] = ("feedback", "error")
TABLE_COLUMNS: tuple[str, ...] = TABLE_STRING_COLUMNS + SCORE_COLUMNS + TABLE_TEXT_COLUMNS

#: run-level columns joined into every row of :func:`holdout_table`
RUN_COLUMNS: tuple[str, ...] = ("run_id", "experiment_id", "skill", "fitness", "optimizer", "task_model",
                                "reflection_model", "seed", "verdict")
EXPORT_COLUMNS: tuple[str, ...] = RUN_COLUMNS + TABLE_COLUMNS

#: where each run-level column is read from, first present wins (tags hold resolved values)
_RUN_SOURCES: dict[str, tuple[str, ...]] = {
    "skill": ("tags.skill", "params.skill_name", "params.skill"),
    "fitness": ("tags.fitness", "params.fitness_resolved", "params.fitness"),
    "optimizer": ("tags.optimizer", "params.optimizer"),
    "task_model": ("tags.task_model", "params.task_model"),
    "reflection_model": ("params.reflection_model", "tags.reflection_model"),
    "seed": ("params.seed",),
    "verdict": ("tags.verdict",),
}

#: keys of a run × task × grader in :func:`holdout_pivot`
PIVOT_KEYS: tuple[str, ...] = ("run_id", "task_id", "grader")
_VARIANT_ORDER: tuple[str, ...] = ("baseline", "evolved")
_RUNS_PER_PAGE = 10_000
_IDS_PER_QUERY = 100
_DOWNLOAD_THREADS = 8
_ID_PATTERN = re.compile(r"^[A-Za-z0-9_\-]+$")
_OUTPUT_FORMATS = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}


# --------------------------------------------------------------------------------------------- selection


def _client(tracking_uri: str | None) -> MlflowClient:
    from mlflow import MlflowClient

    return MlflowClient(tracking_uri=tracking_uri)


def _check_id(value: str, what: str) -> str:
    if not isinstance(value, str) or not _ID_PATTERN.match(value):
        raise ValueError(f"{what} {value!r} is not a valid MLflow run id (letters, digits, '-' and '_' only)")
    return value


def _resolve_experiment(client: MlflowClient, experiment: str) -> str:
    """The id of the experiment named (or numbered) ``experiment``; ValueError naming it when unknown."""
    from mlflow.exceptions import MlflowException

    found = client.get_experiment_by_name(experiment)
    if found is None and experiment.strip().isdigit():
        try:
            found = client.get_experiment(experiment.strip())
        except MlflowException:
            found = None
    if found is not None:
        return str(found.experiment_id)
    names = sorted(e.name for e in client.search_experiments(max_results=50))
    known = ", ".join(names[:20]) + (" …" if len(names) > 20 else "") if names else "(none)"
    raise ValueError(f"unknown experiment {experiment!r} in tracking store {client.tracking_uri}; "
                     f"known experiments: {known}")


def _all_experiment_ids(client: MlflowClient) -> list[str]:
    from mlflow.entities import ViewType

    ids: list[str] = []
    token: str | None = None
    while True:
        page = client.search_experiments(view_type=ViewType.ALL, max_results=1000, page_token=token)
        ids.extend(str(e.experiment_id) for e in page)
        token = page.token
        if not token:
            return ids


def _search(client: MlflowClient, experiment_ids: list[str], filter_string: str) -> list[Run]:
    """Every run matching ``filter_string`` in ``experiment_ids``, oldest first, fetched page by page."""
    runs: list[Run] = []
    token: str | None = None
    while True:
        page = client.search_runs(experiment_ids, filter_string=filter_string, max_results=_RUNS_PER_PAGE,
                                  order_by=["attributes.start_time ASC"], page_token=token)
        runs.extend(page)
        token = page.token
        if not token:
            return runs


def _select_runs(client: MlflowClient, experiment: str | None, run_ids: Sequence[str] | None,
                 parent_run_id: str | None) -> tuple[list[Run], list[str]]:
    """The runs the selectors pick (all selectors given must hold) and notes on the selection."""
    from mlflow.exceptions import MlflowException

    if isinstance(run_ids, str):
        run_ids = [run_ids]
    if not experiment and not run_ids and not parent_run_id:
        raise ValueError("select runs with at least one of experiment=, run_ids= or parent_run_id= "
                         "(CLI: --experiment, --run-id, --parent-run-id)")
    notes: list[str] = []
    experiment_ids = [_resolve_experiment(client, experiment)] if experiment else _all_experiment_ids(client)
    filters: list[str] = []
    if parent_run_id:
        _check_id(parent_run_id, "parent run id")
        try:
            client.get_run(parent_run_id)
        except MlflowException:
            raise ValueError(f"parent run {parent_run_id!r} not found in tracking store {client.tracking_uri}") \
                from None
        filters.append(f"tags.mlflow.parentRunId = '{parent_run_id}'")
    if not run_ids:
        runs = _search(client, experiment_ids, " and ".join(filters))
        if parent_run_id and not runs:
            notes.append(f"parent run {parent_run_id} has no child runs"
                         + (f" in experiment {experiment!r}" if experiment else ""))
        return runs, notes

    wanted = list(dict.fromkeys(_check_id(r, "run id") for r in run_ids))
    found: dict[str, Run] = {}
    for start in range(0, len(wanted), _IDS_PER_QUERY):
        chunk = wanted[start:start + _IDS_PER_QUERY]
        ids = ", ".join(f"'{r}'" for r in chunk)
        for run in _search(client, experiment_ids, " and ".join([*filters, f"attributes.run_id IN ({ids})"])):
            found[run.info.run_id] = run
    missing = [r for r in wanted if r not in found]
    if missing:
        scope = []
        if experiment:
            scope.append(f"experiment {experiment!r}")
        if parent_run_id:
            scope.append(f"children of {parent_run_id}")
        where = " among " + " and ".join(scope) if scope else ""
        raise ValueError(f"run id(s) not found{where} in tracking store {client.tracking_uri}: "
                         + ", ".join(missing))
    return [found[r] for r in wanted], notes


# ------------------------------------------------------------------------------------------ run columns


def _run_value(run: Run, column: str) -> str | None:
    for source in _RUN_SOURCES[column]:
        kind, _, key = source.partition(".")
        values = run.data.tags if kind == "tags" else run.data.params
        if key in values:
            return values[key] if kind == "tags" else unquote_param(values[key])
    return None


def unquote_param(value: str) -> str:
    """A param value as given: MLflow Projects logs a project's parameters shell-quoted (``shlex.quote``:
    ``''`` for an empty value, ``'a b'`` for one with spaces), ``harness evolve`` logs them as they are.
    A value that is not exactly one quoted shell word is returned unchanged."""
    if not value.startswith("'"):
        return value
    try:
        words = shlex.split(value)
    except ValueError:
        return value
    return words[0] if len(words) == 1 and shlex.quote(words[0]) == value else value


def _seed_column(values: Iterable[Any]) -> pd.Series:
    """Seeds as nullable integers; a non-integral or non-numeric seed becomes <NA>."""
    numbers = pd.to_numeric(pd.Series(list(values), dtype="object"), errors="coerce").astype("float64")
    return numbers.where(numbers % 1 == 0).astype("Int64")


def _run_frame(runs: Sequence[Run]) -> pd.DataFrame:
    """One row per run with :data:`RUN_COLUMNS` (strings as ``string``, seed as ``Int64``)."""
    data: dict[str, Any] = {
        "run_id": pd.array([r.info.run_id for r in runs], dtype="string"),
        "experiment_id": pd.array([str(r.info.experiment_id) for r in runs], dtype="string"),
    }
    for column in RUN_COLUMNS[2:]:
        values = [_run_value(r, column) for r in runs]
        data[column] = _seed_column(values) if column == "seed" else pd.array(values, dtype="string")
    return pd.DataFrame(data, columns=list(RUN_COLUMNS))


# ------------------------------------------------------------------------------------------- artifacts


def _local_artifact_dir(artifact_uri: str) -> Path | None:
    """The folder of a run's artifacts when they live on this machine (``file:`` URI or plain path)."""
    from mlflow.utils.file_utils import local_file_uri_to_path

    scheme = urllib.parse.urlparse(artifact_uri).scheme
    if scheme == "file" or scheme == "" or len(scheme) == 1:  # one letter: a Windows drive
        return Path(local_file_uri_to_path(artifact_uri))
    return None


@dataclass
class _Loaded:
    columns: tuple[str, ...] | None = None
    data: list[list[Any]] | None = None
    note: str = ""


def _parse_table(payload: Any, run_id: str) -> _Loaded:
    if not (isinstance(payload, dict) and isinstance(payload.get("columns"), list)
            and isinstance(payload.get("data"), list)):
        return _Loaded(note=f"run {run_id}: {HOLDOUT_ARTIFACT} is not a log_table JSON "
                            "({'columns': [...], 'data': [[...]]}); skipped")
    columns = tuple(str(c) for c in payload["columns"])
    missing = [c for c in ("task_id", "variant", "grader") if c not in columns]
    if missing:
        return _Loaded(note=f"run {run_id}: {HOLDOUT_ARTIFACT} lacks column(s) {', '.join(missing)}; skipped")
    width = len(columns)
    data = payload["data"]
    if not all(type(row) is list and len(row) == width for row in data):
        return _Loaded(note=f"run {run_id}: {HOLDOUT_ARTIFACT} has rows that do not match its {width} columns; "
                            "skipped")
    return _Loaded(columns, data)


def _loads(raw: bytes) -> Any:
    """Parse JSON with orjson when installed (a DSPy dependency; ~2x faster), else :mod:`json`.

    orjson rejects the ``NaN`` literal that other writers may emit; such files fall back to :mod:`json`.
    """
    if _orjson is not None:
        try:
            return _orjson.loads(raw)
        except _orjson.JSONDecodeError:
            pass
    return json.loads(raw)


def _read_local(path: Path, run_id: str) -> _Loaded:
    try:
        payload = _loads(path.read_bytes())
    except FileNotFoundError:
        return _Loaded(note=f"run {run_id} has no {HOLDOUT_ARTIFACT}; skipped")
    except (OSError, ValueError) as exc:
        return _Loaded(note=f"run {run_id}: {HOLDOUT_ARTIFACT} could not be read ({exc}); skipped")
    return _parse_table(payload, run_id)


def _download(run_id: str, tracking_uri: str | None) -> _Loaded:
    import mlflow

    with tempfile.TemporaryDirectory(prefix="harness-export-") as tmp:
        try:
            local = mlflow.artifacts.download_artifacts(run_id=run_id, artifact_path=HOLDOUT_ARTIFACT,
                                                        dst_path=tmp, tracking_uri=tracking_uri)
        except Exception as exc:  # not found and unreachable look alike across artifact stores
            return _Loaded(note=f"run {run_id} has no readable {HOLDOUT_ARTIFACT} ({first_line(exc, 200)}); skipped")
        return _read_local(Path(local), run_id)


def _load_tables(runs: Sequence[Run], tracking_uri: str | None) -> list[_Loaded]:
    """Each run's holdout table: read from disk when local, downloaded (in a few threads) otherwise."""
    loaded: list[_Loaded | None] = [None] * len(runs)
    remote: list[int] = []
    for i, run in enumerate(runs):
        folder = _local_artifact_dir(run.info.artifact_uri or "")
        if folder is None:
            remote.append(i)
        else:
            loaded[i] = _read_local(folder / HOLDOUT_ARTIFACT, run.info.run_id)
    if remote:
        with ThreadPoolExecutor(max_workers=min(_DOWNLOAD_THREADS, len(remote))) as pool:
            results = pool.map(lambda i: _download(runs[i].info.run_id, tracking_uri), remote)
            for i, result in zip(remote, results, strict=True):
                loaded[i] = result
    return [x if x is not None else _Loaded(note="internal: not loaded") for x in loaded]


# ----------------------------------------------------------------------------------------------- frames


def _empty_table() -> pd.DataFrame:
    frame = pd.DataFrame({c: pd.array([], dtype="string") for c in EXPORT_COLUMNS})
    frame["seed"] = frame["seed"].astype("Int64")
    for column in SCORE_COLUMNS:
        frame[column] = frame[column].astype("float64")
    return frame


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    """Holdout columns in their export dtypes: strings as ``string``, scores as ``float64`` (null -> NaN)."""
    out: dict[str, Any] = {}
    for column in TABLE_COLUMNS:
        series = frame[column]
        if column in SCORE_COLUMNS:
            out[column] = pd.to_numeric(series, errors="coerce").astype("float64")
        else:
            out[column] = series.astype("string")
    return pd.DataFrame(out, index=frame.index)


def holdout_table(experiment: str | None = None, run_ids: Sequence[str] | None = None,
                  parent_run_id: str | None = None, tracking_uri: str | None = None) -> pd.DataFrame:
    """The holdout grades of every selected run, tidy: one row per run × task × variant × grader.

    Selectors (at least one; when several are given a run must match all): ``experiment`` (name, or id),
    ``run_ids`` (explicit, output in that order), ``parent_run_id`` (its child runs, tagged
    ``mlflow.parentRunId``).  Runs come oldest first.  A run without a readable
    ``holdout/holdout_table.json`` is skipped; each skip is a note in ``df.attrs["notes"]`` (also logged
    as a warning) and its id is in ``df.attrs["skipped_run_ids"]``.  ``df.attrs["run_count"]`` is the
    number of runs selected.

    Returns:
        DataFrame with rows = Σ over runs of (tasks × variants × graders) and columns :data:`EXPORT_COLUMNS`:
        ``run_id, experiment_id, skill, fitness, optimizer, task_model, reflection_model, seed, verdict``
        (from the run's tags/params; ``verdict`` <NA> when untagged), then the logged table's
        ``task_id, kind, paper_id, variant, grader, output, correctness, well_formed, conciseness,
        composite, feedback, error``.  Text columns have dtype ``string`` (IDs such as ``"1503.02531"``
        and years stay strings exactly), scores ``float64`` in [0, 1] with NaN for unscored grades,
        ``seed`` ``Int64``.  Extra columns a table may carry are left out; missing ones are <NA>/NaN.

    Raises:
        ValueError: no selector; an unknown experiment; a parent run or run id not in the store.
        mlflow.exceptions.MlflowException: the tracking store cannot be queried.
    """
    client = _client(tracking_uri)
    # ~10^6 short-lived containers (ORM rows, parsed JSON): the cyclic GC would rescan them many times over
    with _gc_paused():
        runs, notes = _select_runs(client, experiment, run_ids, parent_run_id)
        frame, skipped = _assemble(runs, _load_tables(runs, tracking_uri), notes)
    for note in notes:
        _logger.warning(note)
    frame.attrs["notes"] = notes
    frame.attrs["skipped_run_ids"] = skipped
    frame.attrs["run_count"] = len(runs)
    return frame


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector (if on) for an allocation-heavy, cycle-free block."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _assemble(runs: Sequence[Run], loaded: Sequence[_Loaded], notes: list[str]) -> tuple[pd.DataFrame, list[str]]:
    """The tidy frame of the loaded tables with the run columns joined; appends skip notes to ``notes``."""
    # group runs by the exact column list of their table: one DataFrame construction per group (usually one)
    groups: dict[tuple[str, ...], tuple[list[list[Any]], list[np.ndarray]]] = {}
    skipped: list[str] = []
    for pos, (run, table) in enumerate(zip(runs, loaded, strict=True)):
        if table.columns is None or table.data is None:
            notes.append(table.note)
            skipped.append(run.info.run_id)
            continue
        rows, positions = groups.setdefault(table.columns, ([], []))
        rows.extend(table.data)
        positions.append(np.full(len(table.data), pos, dtype=np.int64))
    if not groups:
        return _empty_table(), skipped

    parts = [pd.DataFrame(rows, columns=list(cols)).reindex(columns=list(TABLE_COLUMNS))
             for cols, (rows, _) in groups.items()]
    position = np.concatenate([p for _, positions in groups.values() for p in positions])
    table = _typed(pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0])
    if len(parts) > 1:  # restore run order across column groups
        order = np.argsort(position, kind="stable")
        table, position = table.take(order), position[order]
    run_part = _run_frame(runs).take(position)
    frame = pd.concat([run_part.reset_index(drop=True), table.reset_index(drop=True)], axis=1)
    return frame, skipped


def holdout_pivot(table: pd.DataFrame) -> pd.DataFrame:
    """Baseline and evolved side by side: one row per run × task × grader.

    Args:
        table: a :func:`holdout_table` frame (needs ``run_id, task_id, grader, variant`` and the score
            columns; other run/task columns present are carried along).

    Returns:
        DataFrame with the run columns, ``task_id, kind, paper_id, grader``, then for each score
        ``<score>_baseline, <score>_evolved, <score>_delta`` (delta = evolved − baseline, NaN when either is
        NaN; scores in [0, 1], deltas in [−1, 1]) for correctness, well_formed, conciseness, composite, and
        ``output_*``, ``feedback_*``, ``error_*`` per variant.  A variant a task lacks gives <NA>/NaN
        cells.  Variants other than baseline/evolved get their own ``<column>_<variant>`` columns, no delta.
        When a run × task × grader × variant occurs twice (a table logged twice), the last row wins and
        ``attrs["notes"]`` says so.

    Raises:
        ValueError: ``table`` lacks a key column.
    """
    keys = list(PIVOT_KEYS)
    missing = [c for c in [*keys, "variant"] if c not in table.columns]
    if missing:
        raise ValueError(f"holdout_pivot needs the columns {', '.join(missing)} (pass a holdout_table() frame)")
    notes: list[str] = []
    deduped = table.drop_duplicates([*keys, "variant"], keep="last")
    if len(deduped) < len(table):
        notes.append(f"{len(table) - len(deduped)} duplicate run × task × grader × variant rows; kept the last")
    values = [c for c in (*SCORE_COLUMNS, "output", "feedback", "error") if c in table.columns]
    descriptors = [c for c in (*RUN_COLUMNS, "kind", "paper_id") if c in table.columns and c not in keys]

    wide = deduped.set_index([*keys, "variant"])[values].unstack("variant")
    present = [str(v) for v in wide.columns.get_level_values("variant").unique()]
    variants = [*_VARIANT_ORDER, *sorted(v for v in present if v not in _VARIANT_ORDER)]
    wide = wide.reindex(columns=pd.MultiIndex.from_product([values, variants], names=[None, "variant"]))
    wide.columns = [f"{value}_{variant}" for value, variant in wide.columns]
    for score in SCORE_COLUMNS:
        if score in values:
            wide[f"{score}_delta"] = wide[f"{score}_evolved"] - wide[f"{score}_baseline"]
    score_columns = [f"{s}_{suffix}" for s in SCORE_COLUMNS if s in values for suffix in (*variants, "delta")]
    text_columns = [f"{t}_{v}" for t in ("output", "feedback", "error") if t in values for v in variants]
    ordered = score_columns + text_columns

    first = deduped.drop_duplicates(keys, keep="first").set_index(keys)[descriptors]
    out = first.join(wide[ordered], how="inner").reset_index()
    out = out[[*[c for c in RUN_COLUMNS if c in out.columns],
               *[c for c in ("task_id", "kind", "paper_id", "grader") if c in out.columns], *ordered]]
    out = out.astype({**dict.fromkeys(score_columns, "float64"), **dict.fromkeys(text_columns, "string")})
    out.attrs = {"notes": [*table.attrs.get("notes", []), *notes]}
    return out


def run_summary(experiment: str | None = None, run_ids: Sequence[str] | None = None,
                parent_run_id: str | None = None, tracking_uri: str | None = None) -> pd.DataFrame:
    """One row per selected run: its info, metrics, params and tags (same selectors as :func:`holdout_table`).

    Columns: the convenience columns ``run_id, run_name, status, skill, fitness, verdict`` first (strings;
    <NA> when not logged; skill/fitness from the tags, else the params), then ``mlflow.search_runs``' own
    layout: ``experiment_id, artifact_uri, start_time, end_time`` (UTC timestamps), ``metrics.<key>`` (latest
    value, float64, NaN when not logged — e.g. ``metrics.holdout.verifier.delta``), ``params.<key>`` and
    ``tags.<key>`` (strings, None when not logged).  The runs are fetched with ``MlflowClient.search_runs``
    on ``tracking_uri`` (``mlflow.search_runs`` itself cannot be pointed at another store without changing
    the process-wide tracking URI), and laid out as ``mlflow.search_runs`` does.

    Raises:
        ValueError: no selector; an unknown experiment; a parent run or run id not in the store.
        mlflow.exceptions.MlflowException: the tracking store cannot be queried.
    """
    client = _client(tracking_uri)
    runs, notes = _select_runs(client, experiment, run_ids, parent_run_id)
    for note in notes:
        _logger.warning(note)
    records = []
    for run in runs:
        record: dict[str, Any] = {
            "run_id": run.info.run_id, "experiment_id": str(run.info.experiment_id), "status": run.info.status,
            "artifact_uri": run.info.artifact_uri,
            "start_time": pd.to_datetime(run.info.start_time, unit="ms", utc=True),
            "end_time": pd.to_datetime(run.info.end_time, unit="ms", utc=True),
        }
        record.update({f"metrics.{k}": v for k, v in sorted(run.data.metrics.items())})
        record.update({f"params.{k}": v for k, v in sorted(run.data.params.items())})
        record.update({f"tags.{k}": v for k, v in sorted(run.data.tags.items())})
        records.append(record)
    frame = pd.DataFrame.from_records(records)
    metric_cols = [c for c in frame.columns if c.startswith("metrics.")]
    if metric_cols:
        frame[metric_cols] = frame[metric_cols].astype("float64")
    convenience = pd.DataFrame({
        "run_id": pd.array([r.info.run_id for r in runs], dtype="string"),
        "run_name": pd.array([r.info.run_name for r in runs], dtype="string"),
        "status": pd.array([r.info.status for r in runs], dtype="string"),
        **{c: pd.array([_run_value(r, c) for r in runs], dtype="string") for c in ("skill", "fitness", "verdict")},
    })
    frame = pd.concat([convenience, frame.drop(columns=["run_id", "status"], errors="ignore")], axis=1)
    frame.attrs["notes"] = notes
    frame.attrs["skipped_run_ids"] = []
    frame.attrs["run_count"] = len(runs)
    return frame


def write_table(df: pd.DataFrame, out: str | Path) -> Path:
    """Write ``df`` as CSV (``.csv``) or Parquet (``.parquet`` / ``.pq``, pyarrow; dtypes kept), without the index.

    Parent folders are created.  CSV keeps values, not dtypes: read IDs back with ``dtype="string"``.

    Returns:
        The path written.

    Raises:
        ValueError: another extension (the message names it and the choices).
        OSError: the file cannot be written.
    """
    path = Path(out)
    suffix = path.suffix.lower()
    fmt = _OUTPUT_FORMATS.get(suffix)
    if fmt is None:
        shown = repr(path.suffix) if path.suffix else "no extension"
        raise ValueError(f"cannot write {path.name}: {shown} is not a table format; "
                         f"use one of {', '.join(_OUTPUT_FORMATS)}")
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "csv":
        df.to_csv(path, index=False)
    else:
        frame = df.copy(deep=False)
        frame.attrs = {k: v for k, v in df.attrs.items() if _json_safe(v)}
        frame.to_parquet(path, index=False, engine="pyarrow")
    return path


def _json_safe(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


@contextmanager
def notes_not_logged() -> Iterator[None]:
    """Keep this module's warnings (the skip notes) off the log while a caller reports them itself."""
    level = _logger.level
    _logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        _logger.setLevel(level)


def check_not_empty(frame: pd.DataFrame, summary: bool) -> None:
    """Raise ValueError (nothing gets written) when the selection matched no run, or no run had a table."""
    notes = "; ".join(frame.attrs.get("notes", []))
    runs = frame.attrs.get("run_count", len(frame))
    if runs == 0 or (summary and frame.empty):
        raise ValueError("no runs matched the selection" + (f" ({notes})" if notes else "")
                         + "; nothing was written")
    if not summary and frame.empty:
        raise ValueError(f"none of the {runs} selected run(s) has a readable {HOLDOUT_ARTIFACT} "
                         f"(runs that failed before grading have none); nothing was written. "
                         f"Use --summary for their params and metrics")


def export(out: str | Path, *, experiment: str | None = None, run_ids: Sequence[str] | None = None,
           parent_run_id: str | None = None, tracking_uri: str | None = None,
           summary: bool = False) -> tuple[pd.DataFrame, Path]:
    """Select runs, build the holdout table (or with ``summary`` the run summary) and write it to ``out``.

    Returns ``(frame, path written)``; the frame's ``attrs`` hold ``notes``, ``run_count`` and
    ``skipped_run_ids`` (see :func:`holdout_table`).

    Raises:
        ExportError: ``out`` is not a table format, no selection was given, the store cannot be used, the
            query failed, nothing matched, or the file cannot be written (the message names the fix).
    """
    from mlflow.exceptions import MlflowException

    from harness.tracking.store import TrackingError, check_tracking_store

    if Path(out).suffix.lower() not in _OUTPUT_FORMATS:
        shown = repr(Path(out).suffix) if Path(out).suffix else "no extension"
        raise ExportError(f"--out {out}: {shown} is not a table format; use one of {', '.join(_OUTPUT_FORMATS)}")
    if not experiment and not run_ids and not parent_run_id:
        raise ExportError("select runs with --experiment, --run-id or --parent-run-id")
    try:
        check_tracking_store(tracking_uri)
        select = {"experiment": experiment, "run_ids": list(run_ids or []) or None, "parent_run_id": parent_run_id,
                  "tracking_uri": tracking_uri}
        with notes_not_logged():  # the caller reports the notes, once
            frame = run_summary(**select) if summary else holdout_table(**select)
        check_not_empty(frame, summary)
        return frame, write_table(frame, out)
    except (ValueError, TrackingError) as exc:
        raise ExportError(str(exc)) from None
    except MlflowException as exc:
        raise ExportError(f"tracking store query failed: {first_line(exc, 300)}") from None
    except OSError as exc:
        raise ExportError(f"cannot write {out}: {exc.strerror or exc}") from None
