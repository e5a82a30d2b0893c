"""harness.tracking.export: tidy holdout tables from MLflow runs, pivot, run summary, writers and the CLI command."""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.cli.export import export_command
from harness.tracking import export
from harness.tracking.export import (
    EXPORT_COLUMNS,
    holdout_pivot,
    holdout_table,
    run_summary,
    write_table,
)

# IDs pandas.read_json would mangle: trailing zero, leading zero, a bare year, a dotted year
TASKS: list[dict[str, str]] = [
    {"task_id": "1706.03760/year", "kind": "year", "paper_id": "1706.03760", "answer": "2017"},
    {"task_id": "0704.0001/author", "kind": "author", "paper_id": "0704.0001", "answer": "Balázs"},
    {"task_id": "2015", "kind": "year", "paper_id": "1503.02531", "answer": "2015"},
]
GRADERS = ("verifier", "keyword", "judge")
VARIANTS = ("baseline", "evolved")
STRING_COLUMNS = [c for c in EXPORT_COLUMNS
                  if c not in ("seed", "correctness", "well_formed", "conciseness", "composite")]


@pytest.fixture
def store(mlflow_store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """``mlflow_store``, run from ``tmp_path`` so MLflow's default artifact folder (./mlruns) lands there."""
    monkeypatch.chdir(tmp_path)
    yield mlflow_store


def score(task: int, variant: str, grader: str) -> float:
    """A deterministic composite: evolved beats baseline by 0.25 on the verifier."""
    base = 0.25 + 0.1 * task
    return base + (0.25 if variant == "evolved" and grader == "verifier" else 0.0)


def holdout_rows(tasks: Sequence[dict[str, str]] = TASKS, graders: Sequence[str] = GRADERS) -> pd.DataFrame:
    """A holdout table as harness.run logs it; the judge leaves every grade unscored (NaN)."""
    rows = []
    for i, task in enumerate(tasks):
        for variant in VARIANTS:
            for grader in graders:
                nan = grader == "judge"
                value = math.nan if nan else score(i, variant, grader)
                rows.append({"task_id": task["task_id"], "kind": task["kind"], "paper_id": task["paper_id"],
                             "variant": variant, "grader": grader, "output": f"The answer is {task['answer']}.",
                             "correctness": math.nan if nan else float(variant == "evolved"),
                             "well_formed": math.nan if nan else 1.0, "conciseness": math.nan if nan else 1.0,
                             "composite": value,
                             "feedback": "unscored by judge" if nan else f"expected {task['answer']}",
                             "error": ""})
    return pd.DataFrame(rows)


def log_run(experiment: str, *, fitness: str = "verifier", seed: str = "0", verdict: str | None = None,
            table: pd.DataFrame | None = None, parent: str | None = None, with_table: bool = True,
            reflection_model: str = "") -> str:
    """Log one synthetic evolution run the way harness.run does; returns its id."""
    import mlflow

    mlflow.set_experiment(experiment)
    tags: dict[str, Any] = {"skill": "arxiv", "fitness": fitness, "optimizer": "gepa", "proposer": "feedback",
                            "task_model": "test/oracle"}
    if verdict:
        tags["verdict"] = verdict
    if parent:
        tags["mlflow.parentRunId"] = parent
    with mlflow.start_run(tags=tags) as run:
        mlflow.log_params({"skill": "arxiv", "fitness": fitness, "fitness_resolved": fitness, "optimizer": "gepa",
                           "seed": seed, "task_model": "test/oracle", "reflection_model": reflection_model,
                           "budget": "12", "num_cases": "12", "dataset_digest": "abc123"})
        mlflow.log_metrics({"holdout.verifier.baseline": 0.35, "holdout.verifier.evolved": 0.6,
                            "holdout.verifier.delta": 0.25})
        for step, value in enumerate((0.3, 0.5, 0.5)):
            mlflow.log_metric("gepa.best_val_score", value, step=step)
        if with_table:
            mlflow.log_table(data=holdout_rows() if table is None else table,
                             artifact_file="holdout/holdout_table.json")
    return run.info.run_id


def test_rows_columns_dtypes_and_exact_strings(store: str) -> None:
    first = log_run("skills/arxiv", fitness="verifier", seed="3", verdict="improved")
    second = log_run("skills/arxiv", fitness="keyword", seed="4")
    log_run("other", fitness="keyword")

    df = holdout_table(experiment="skills/arxiv")

    assert list(df.columns) == list(EXPORT_COLUMNS)
    assert len(df) == 2 * len(TASKS) * len(VARIANTS) * len(GRADERS)
    assert list(dict.fromkeys(df["run_id"])) == [first, second]  # oldest first
    for column in STRING_COLUMNS:
        assert df[column].dtype == pd.StringDtype(), column
    for column in ("correctness", "well_formed", "conciseness", "composite"):
        assert df[column].dtype == "float64", column
    assert df["seed"].dtype == "Int64"
    assert set(df["paper_id"]) == {"1706.03760", "0704.0001", "1503.02531"}
    assert set(df["task_id"]) == {"1706.03760/year", "0704.0001/author", "2015"}
    assert "The answer is 2017." in set(df["output"])
    judge = df[df["grader"] == "judge"]
    assert judge[["correctness", "well_formed", "conciseness", "composite"]].isna().all().all()
    assert df.loc[df["grader"] != "judge", "composite"].notna().all()
    by_run = df.drop_duplicates("run_id").set_index("run_id")
    assert by_run.loc[first, "verdict"] == "improved" and pd.isna(by_run.loc[second, "verdict"])
    assert by_run.loc[first, "seed"] == 3 and by_run.loc[second, "fitness"] == "keyword"
    assert (by_run["skill"] == "arxiv").all() and (by_run["reflection_model"] == "").all()
    assert df.attrs["notes"] == [] and df.attrs["run_count"] == 2


def test_experiment_by_id_and_unknown_experiment(store: str) -> None:
    import mlflow

    log_run("skills/arxiv")
    experiment_id = mlflow.get_experiment_by_name("skills/arxiv").experiment_id
    assert len(holdout_table(experiment=experiment_id)) == len(TASKS) * 6
    with pytest.raises(ValueError, match="unknown experiment 'skills/nope'"):
        holdout_table(experiment="skills/nope")


def test_selector_required(store: str) -> None:
    with pytest.raises(ValueError, match="experiment=.*run_ids=.*parent_run_id="):
        holdout_table()
    with pytest.raises(ValueError, match="experiment="):
        run_summary()


def test_select_by_run_ids_keeps_given_order(store: str) -> None:
    a = log_run("skills/arxiv")
    log_run("skills/arxiv")
    c = log_run("elsewhere")
    df = holdout_table(run_ids=[c, a])
    assert list(dict.fromkeys(df["run_id"])) == [c, a]
    with pytest.raises(ValueError, match="0123456789abcdef"):
        holdout_table(run_ids=[a, "0123456789abcdef"])
    with pytest.raises(ValueError, match="not a valid MLflow run id"):
        holdout_table(run_ids=["x' OR '1'='1"])


def test_select_children_of_parent(store: str) -> None:
    import mlflow

    mlflow.set_experiment("side-by-side")
    with mlflow.start_run() as parent:
        pass
    kids = [log_run("side-by-side", fitness=f, parent=parent.info.run_id) for f in ("verifier", "keyword")]
    log_run("side-by-side")  # not a child
    df = holdout_table(parent_run_id=parent.info.run_id)
    assert set(df["run_id"]) == set(kids)
    assert set(df["fitness"]) == {"verifier", "keyword"}
    narrowed = holdout_table(experiment="side-by-side", parent_run_id=parent.info.run_id, run_ids=[kids[1]])
    assert set(narrowed["run_id"]) == {kids[1]}
    with pytest.raises(ValueError, match="parent run 'ffffffffffffffffffffffffffffffff' not found"):
        holdout_table(parent_run_id="f" * 32)


def test_run_without_table_is_skipped_with_note(store: str, caplog: pytest.LogCaptureFixture) -> None:
    import mlflow

    with_table = log_run("skills/arxiv")
    without = log_run("skills/arxiv", with_table=False)
    broken = log_run("skills/arxiv", with_table=False)
    with mlflow.start_run(run_id=broken):
        mlflow.log_dict({"columns": ["task_id", "variant", "grader"], "data": [["t1", "baseline"]]},
                        "holdout/holdout_table.json")
    with caplog.at_level(logging.WARNING, logger="harness.tracking.export"):
        df = holdout_table(experiment="skills/arxiv")
    assert set(df["run_id"]) == {with_table}
    assert df.attrs["skipped_run_ids"] == [without, broken]
    notes = df.attrs["notes"]
    assert len(notes) == 2 and without in notes[0] and broken in notes[1] and "do not match" in notes[1]
    assert without in caplog.text and broken in caplog.text


def test_only_runs_without_tables_gives_typed_empty_frame(store: str) -> None:
    log_run("skills/arxiv", with_table=False)
    df = holdout_table(experiment="skills/arxiv")
    assert df.empty and list(df.columns) == list(EXPORT_COLUMNS)
    assert df["paper_id"].dtype == pd.StringDtype() and df["composite"].dtype == "float64"
    assert df["seed"].dtype == "Int64"


def test_tables_with_other_column_sets_are_aligned(store: str) -> None:
    old_style = holdout_rows().drop(columns=["error"])[["grader", "variant", *holdout_rows().columns[:2]]]
    old = log_run("skills/arxiv", table=old_style)
    new = log_run("skills/arxiv")
    df = holdout_table(experiment="skills/arxiv")
    assert list(dict.fromkeys(df["run_id"])) == [old, new]
    assert df.loc[df["run_id"] == old, ["paper_id", "error"]].isna().all().all()
    assert (df.loc[df["run_id"] == new, "error"] == "").all()


def test_remote_artifact_path_downloads(store: str, monkeypatch: pytest.MonkeyPatch) -> None:
    run_id = log_run("skills/arxiv")
    monkeypatch.setattr(export, "_local_artifact_dir", lambda uri: None)  # as if artifacts were remote
    df = holdout_table(run_ids=[run_id])
    assert len(df) == len(TASKS) * 6 and set(df["paper_id"]) == {t["paper_id"] for t in TASKS}


def test_pivot_side_by_side_with_delta(store: str) -> None:
    log_run("skills/arxiv")
    log_run("skills/arxiv")
    table = holdout_table(experiment="skills/arxiv")
    wide = holdout_pivot(table)
    assert len(wide) == 2 * len(TASKS) * len(GRADERS)
    for name in ("composite", "correctness"):
        for suffix in ("baseline", "evolved", "delta"):
            assert wide[f"{name}_{suffix}"].dtype == "float64"
    assert wide["output_baseline"].dtype == pd.StringDtype()
    pd.testing.assert_series_equal(wide["composite_delta"], wide["composite_evolved"] - wide["composite_baseline"],
                                   check_names=False)
    verifier = wide[wide["grader"] == "verifier"]
    assert verifier["composite_delta"].round(9).eq(0.25).all()
    assert verifier["correctness_delta"].eq(1.0).all()
    assert wide.loc[wide["grader"] == "judge", "composite_delta"].isna().all()
    row = wide[(wide["task_id"] == "1706.03760/year") & (wide["grader"] == "keyword")].iloc[0]
    assert row["paper_id"] == "1706.03760" and row["output_evolved"] == "The answer is 2017."
    with pytest.raises(ValueError, match="variant"):
        holdout_pivot(table.drop(columns=["variant"]))


def test_run_summary(store: str) -> None:
    a = log_run("skills/arxiv", verdict="improved")
    b = log_run("skills/arxiv", fitness="keyword", with_table=False)
    summary = run_summary(experiment="skills/arxiv")
    assert list(summary["run_id"]) == [a, b]
    assert list(summary.columns[:6]) == ["run_id", "run_name", "status", "skill", "fitness", "verdict"]
    assert list(summary["fitness"]) == ["verifier", "keyword"]
    assert summary["verdict"].iloc[0] == "improved" and pd.isna(summary["verdict"].iloc[1])
    assert summary["metrics.holdout.verifier.delta"].tolist() == [0.25, 0.25]
    assert summary["metrics.gepa.best_val_score"].tolist() == [0.5, 0.5]  # latest step
    assert summary["params.seed"].tolist() == ["0", "0"] and "tags.mlflow.runName" in summary.columns
    assert (summary["status"] == "FINISHED").all()


def test_csv_and_parquet_round_trips(store: str, tmp_path: Path) -> None:
    log_run("skills/arxiv", verdict="improved")
    log_run("skills/arxiv")
    df = holdout_table(experiment="skills/arxiv")

    pq = write_table(df, tmp_path / "deep" / "er" / "holdout.parquet")
    back = pd.read_parquet(pq)
    pd.testing.assert_frame_equal(back, df)  # values and dtypes

    csv = write_table(df, tmp_path / "out" / "holdout.csv")
    as_text = pd.read_csv(csv, dtype="string", keep_default_na=False)
    for column in ("paper_id", "task_id", "output", "run_id", "error", "reflection_model"):
        assert as_text[column].tolist() == df[column].tolist(), column
    read = pd.read_csv(csv)
    pd.testing.assert_frame_equal(read[["composite", "correctness"]], df[["composite", "correctness"]])
    assert read["seed"].tolist() == df["seed"].astype(int).tolist()
    assert read["verdict"].isna().tolist() == df["verdict"].isna().tolist()

    with pytest.raises(ValueError, match=r"'\.xlsx'.*\.csv, \.parquet, \.pq"):
        write_table(df, tmp_path / "holdout.xlsx")
    assert write_table(df, tmp_path / "holdout.PQ").exists()


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(paper=st.from_regex(r"\A[0-9]{4}\.[0-9]{4,5}0\Z"), year=st.integers(1991, 2030).map(str))
def test_id_like_strings_survive_export_and_parquet(store: str, tmp_path: Path, paper: str,
                                                    year: str) -> None:
    table = holdout_rows(tasks=[{"task_id": year, "kind": "year", "paper_id": paper, "answer": year}],
                         graders=["verifier"])
    run_id = log_run(f"prop-{paper}-{year}", table=table)
    df = holdout_table(run_ids=[run_id])
    assert set(df["paper_id"]) == {paper} and set(df["task_id"]) == {year}
    back = pd.read_parquet(write_table(df, tmp_path / f"{run_id}.parquet"))
    assert set(back["paper_id"]) == {paper} and set(back["task_id"]) == {year}
    # the CSV holds them as written; read back the way the README says
    csv = pd.read_csv(write_table(df, tmp_path / f"{run_id}.csv"), dtype={"paper_id": str, "task_id": str})
    assert set(csv["paper_id"]) == {paper} and set(csv["task_id"]) == {year}


def test_cli_export_writes_file(store: str, tmp_path: Path) -> None:
    run_id = log_run("skills/arxiv")
    log_run("skills/arxiv", with_table=False)
    out = tmp_path / "exports" / "holdout.parquet"
    result = CliRunner().invoke(export_command, ["--experiment", "skills/arxiv", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert out.exists() and len(pd.read_parquet(out)) == len(TASKS) * 6
    assert f"{len(TASKS) * 6} rows from 2 run(s) (1 skipped" in result.output and str(out) in result.output

    summary = tmp_path / "summary.csv"
    result = CliRunner().invoke(export_command, ["--run-id", run_id, "--summary", "--out", str(summary),
                                                 "--tracking-uri", store])
    assert result.exit_code == 0, result.output
    assert pd.read_csv(summary)["run_id"].tolist() == [run_id]


def test_cli_user_errors_exit_2_with_one_line(store: str, tmp_path: Path) -> None:
    log_run("skills/arxiv")
    runner = CliRunner()
    bad_ext = runner.invoke(export_command, ["--experiment", "skills/arxiv", "--out", str(tmp_path / "t.xlsx")])
    assert bad_ext.exit_code == 2
    assert bad_ext.output.strip().count("\n") == 0 and "'.xlsx'" in bad_ext.output
    assert not (tmp_path / "t.xlsx").exists()

    unknown = runner.invoke(export_command, ["--experiment", "nope", "--out", str(tmp_path / "t.csv")])
    assert unknown.exit_code == 2 and "unknown experiment 'nope'" in unknown.output
    assert unknown.output.strip().count("\n") == 0

    nothing = runner.invoke(export_command, ["--out", str(tmp_path / "t.csv")])
    assert nothing.exit_code == 2 and "--experiment" in nothing.output


def test_cli_empty_selection_writes_nothing_and_says_why(store: str, tmp_path: Path) -> None:
    parent = log_run("skills/arxiv", with_table=False)
    runner = CliRunner()
    out = tmp_path / "t.csv"
    no_children = runner.invoke(export_command, ["--parent-run-id", parent, "--out", str(out)])
    assert no_children.exit_code == 2, no_children.output
    assert f"parent run {parent} has no child runs" in no_children.output
    assert "nothing was written" in no_children.output
    assert no_children.output.strip().count("\n") == 0 and not out.exists()

    no_tables = runner.invoke(export_command, ["--run-id", parent, "--out", str(out)])
    assert no_tables.exit_code == 2 and "none of the 1 selected run(s)" in no_tables.output and not out.exists()
    assert runner.invoke(export_command, ["--run-id", parent, "--summary", "--out", str(out)]).exit_code == 0


def test_cli_prints_each_skip_note_once(store: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    log_run("skills/arxiv")
    skipped = log_run("skills/arxiv", with_table=False)
    with caplog.at_level(logging.WARNING, logger="harness.tracking.export"):
        result = CliRunner().invoke(export_command, ["--experiment", "skills/arxiv", "--out", str(tmp_path / "t.csv")])
        assert result.exit_code == 0, result.output
        assert result.stderr.count(skipped) == 1  # echoed as a note ...
        assert not [r for r in caplog.records if skipped in r.getMessage()]  # ... and not logged as well
        holdout_table(experiment="skills/arxiv")  # the library call still logs it
        assert [r for r in caplog.records if skipped in r.getMessage()]


@pytest.mark.parametrize("value", ["", "openai/llama 3", "it's", "plain", "'"])
def test_mlflow_projects_quoted_params_read_back_as_given(value: str) -> None:
    import shlex

    from harness.tracking.export import unquote_param

    assert unquote_param(shlex.quote(value)) == value  # what MLflow Projects logs, read back
    if not value.startswith("'"):
        assert unquote_param(value) == value  # what harness evolve logs stays as it is


def test_export_reads_an_mlflow_run_empty_param_as_empty(store: str) -> None:
    projects_run = log_run("skills/arxiv", reflection_model="''")  # as `mlflow run` logs an empty parameter
    harness_run = log_run("skills/arxiv", reflection_model="")  # as `harness evolve` logs it
    df = holdout_table(run_ids=[projects_run, harness_run])
    assert set(df["reflection_model"]) == {""}
