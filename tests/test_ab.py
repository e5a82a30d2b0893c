"""``harness ab``: a hand-written candidate against the baseline, logged like an evolution run, never mistaken for one.

The test LMs make the figures: ``test/lessons`` answers right only under a skill with the lessons heading, so a
candidate that adds it must come out ahead on every grader.  These numbers check the machinery, not any model.
"""

from __future__ import annotations

import math
from pathlib import Path

import mlflow
import pandas as pd
import pytest
from click.testing import CliRunner

from harness.ab import AbPlan, AbResult, disagreements, ranking, summary_text
from harness.analysis.assess import assess
from harness.cli import main
from harness.config import LESSONS_HEADING
from harness.engine.holdout import HoldoutRow
from harness.skills.candidates import Candidate, candidate_files
from harness.skills.files import find_skill
from harness.skills.gates import GateResult

BASELINE = find_skill("arxiv")
FAST = ["--task-model", "test/lessons", "--judge-model", "test/judge", "--num-cases", "12", "--quiet"]
VARIANTS = Path(__file__).resolve().parents[1] / "experiments" / "skills" / "arxiv" / "variants"


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _lessons(tmp_path: Path, name: str = "lessons.md") -> Path:
    body = BASELINE.body.rstrip() + f"\n\n{LESSONS_HEADING}\n- Give only the answer.\n"
    return _write(tmp_path / name, BASELINE.with_body(body))


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["ab", *args])
    return result.exit_code, result.output


def _runs() -> pd.DataFrame:
    return mlflow.search_runs(experiment_names=["skills/arxiv"])


def test_ab_logs_one_tagged_run_with_statistics_and_claim(mlflow_store: str, tmp_path: Path) -> None:
    code, out = _invoke("--candidate", str(_lessons(tmp_path)), *FAST)
    assert code == 0, out
    runs = _runs()
    assert len(runs) == 1
    run = mlflow.get_run(runs.run_id.iloc[0])
    tags, metrics, params = run.data.tags, run.data.metrics, run.data.params
    assert tags["mlflow.runName"] == f"{tags['verdict']} · arxiv-ab-lessons"  # the verdict leads the name
    assert tags["run.kind"] == "ab"
    assert tags["fitness"] == tags["optimizer"] == "none"  # never read as an evolution run
    assert tags["ab.candidate_path"] == str((tmp_path / "lessons.md").resolve())
    assert tags["verdict"] in ("improved", "inconclusive")
    assert params["ab.split"] == "holdout" and params["ab.tasks"] == "3"
    mlflow.set_experiment("skills/arxiv")
    stats = mlflow.load_table("stats/statistics.json", run_ids=[run.info.run_id]).set_index("grader")
    for grader in ("verifier", "keyword", "judge"):
        assert metrics[f"holdout.{grader}.delta"] > 0, grader  # test/lessons: right only under the lessons
        assert not math.isnan(stats.loc[grader, "wilcoxon_p"]) and not math.isnan(stats.loc[grader, "mcnemar_p"])
        assert not any(k.startswith("stats.") for k in metrics)  # the long tail is the table, as in evolution runs
    # what the UI shows at a glance, as for an evolution run (issue 16): description, headline metrics, pivot
    note = tags["mlflow.note.content"]
    assert note.startswith("A/B comparison (no optimizer) of the candidate `lessons.md` against the baseline: **")
    assert "verifier 0.500 → 1.000 (Δ +0.500) on 3 of 3 holdout tasks; 3 tasks flipped to correct, 0 to wrong" in note
    assert metrics["verifier/delta"] == pytest.approx(0.5) and metrics["verifier/flipped_up"] == 3
    pivot = mlflow.load_table("holdout/per_task.json", run_ids=[run.info.run_id])
    assert list(pivot.columns[:2]) == ["task_id", "flipped"] and set(pivot.flipped) == {"↑ now correct"}
    preview = mlflow.artifacts.load_text(f"runs:/{run.info.run_id}/skill/candidate/preview.md")
    assert preview.startswith("*Preview of `skill/candidate/SKILL.md`") and "```yaml\nname: arxiv" in preview
    diff = mlflow.artifacts.load_text(f"runs:/{run.info.run_id}/skill/diff.md")
    assert "```diff" in diff and f"+{LESSONS_HEADING}" in diff
    assert metrics["holdout.verifier.baseline"] == pytest.approx(0.5)  # confidently wrong
    assert metrics["holdout.verifier.evolved"] == pytest.approx(1.0)
    claim = mlflow.artifacts.load_text(f"runs:/{run.info.run_id}/claim_report.md")
    assert claim.startswith("> **A/B comparison (`harness ab`), not an evolution run**")
    assert "# Claim: arxiv" in claim and "| verifier |" in claim
    table = mlflow.load_table("holdout/holdout_table.json", run_ids=[run.info.run_id])
    assert set(table.variant) == {"baseline", "evolved"} and set(table.grader) == {"verifier", "keyword", "judge"}
    assert len(table) == 3 * 2 * 3
    paths = {a.path for a in mlflow.MlflowClient().list_artifacts(run.info.run_id, "plots")}
    assert "plots/holdout_verifier.png" in paths
    client = mlflow.MlflowClient()
    eval_runs = [tags[f"holdout.{variant}.run_id"] for variant in ("baseline", "evolved")]  # one evaluation run each
    assert sum(mlflow.search_traces(locations=[client.get_run(r).info.experiment_id], run_id=r).shape[0]
               for r in eval_runs) == 6  # one trace per task and variant
    assert "registry.version" not in tags  # a hand-written candidate is not a registered evolution


def test_against_replaces_the_baseline(mlflow_store: str, tmp_path: Path) -> None:
    against = _lessons(tmp_path)
    candidate = _write(tmp_path / "more.md", against.read_text(encoding="utf-8") + "- Be brief.\n")
    code, out = _invoke("--candidate", str(candidate), "--against", str(against), *FAST)
    assert code == 0, out
    run = mlflow.get_run(_runs().run_id.iloc[0])
    assert run.data.tags["ab.baseline_path"] == str(against.resolve())
    # the --against file answered as the baseline: right under test/lessons (the skill's own file is not)
    assert run.data.metrics["holdout.verifier.baseline"] == pytest.approx(1.0)
    assert run.data.metrics["holdout.verifier.delta"] == pytest.approx(0.0)


def test_split_all_answers_every_task(mlflow_store: str, tmp_path: Path) -> None:
    code, out = _invoke("--candidate", str(_lessons(tmp_path)), "--split", "all", *FAST, "--judge-model", "",
                        "--num-cases", "8")
    assert code == 0, out
    run = mlflow.get_run(_runs().run_id.iloc[0])
    assert run.data.params["ab.tasks"] == "8"
    mlflow.set_experiment("skills/arxiv")
    table = mlflow.load_table("holdout/holdout_table.json", run_ids=[run.info.run_id])
    assert set(table.grader) == {"verifier", "keyword"}  # an empty judge model: no judge
    assert table.task_id.nunique() == 8


def test_candidates_rank_children_under_one_parent(mlflow_store: str, tmp_path: Path) -> None:
    folder = tmp_path / "cands"
    _lessons(folder)
    _write(folder / "same" / "SKILL.md", BASELINE.text)
    code, out = _invoke("--candidates", str(folder), *FAST)
    assert code == 0, out
    runs = _runs()
    parent = runs[runs["tags.mlflow.parentRunId"].isna()]
    children = runs[runs["tags.mlflow.parentRunId"].notna()]
    assert len(parent) == 1 and len(children) == 2
    parent_id = parent.run_id.iloc[0]
    assert parent["tags.run.kind"].iloc[0] == "ab" and set(children["tags.run.kind"]) == {"ab"}
    assert sorted(children["tags.mlflow.runName"].str.split(" · ").str[-1]) == ["arxiv-ab-lessons", "arxiv-ab-same"]
    names = zip(children["tags.mlflow.runName"], children["tags.verdict"], strict=True)
    assert all(n.startswith(f"{v} · ") for n, v in names)
    # the parent: how many candidates improved, then its own name
    improved = sum(v == "improved" for v in children["tags.verdict"])
    assert parent["tags.mlflow.runName"].iloc[0] == f"{improved}/2 improved · arxiv-ab-cands"
    assert children["params.dataset_digest"].nunique() == 1
    mlflow.set_experiment("skills/arxiv")
    frame = mlflow.load_table("ab/ranking.json", run_ids=[parent_id])
    assert list(frame.candidate) == ["lessons", "same"]  # by the verifier's delta
    assert list(frame["rank"]) == [1, 2]
    assert frame.verifier_delta.iloc[0] == pytest.approx(0.5) and frame.verifier_delta.iloc[1] == 0
    assert {"keyword_delta", "judge_delta", "run_id"} <= set(frame.columns)
    summary = mlflow.artifacts.load_text(f"runs:/{parent_id}/ab/summary.txt")
    assert summary.splitlines()[2].split()[:2] == ["rank", "candidate"]
    assert "1     lessons" in summary and "Disagreements: none" in summary
    assert "1. lessons" in out and "parent run id:" in out
    # the parent says what it compared and each candidate's verdict (issue 16)
    tags = mlflow.get_run(parent_id).data.tags
    verdicts = dict(part.split(": ") for part in tags["verdict"].split(" · "))
    assert list(verdicts) == ["lessons", "same"] and verdicts["same"] == "inconclusive"
    note = tags["mlflow.note.content"]
    assert note.startswith(f"A/B of 2 hand-written candidates against `{BASELINE.path}` (no optimizer) on the same "
                           "3 tasks (holdout), task model `test/lessons`. **Verdicts: lessons ")
    assert "Ranked by the verifier's paired Δ: 1. lessons Δ +0.500; 2. same Δ 0.000" in note
    assert "`ab/ranking.json`" in note and "`claim_report.md`" in note


def _rows(grader: str, baseline: list[float], evolved: list[float]) -> list[HoldoutRow]:
    rows = []
    for variant, values in (("baseline", baseline), ("evolved", evolved)):
        for i, v in enumerate(values):
            rows.append(HoldoutRow(f"t{i}", "id", f"g{i}", variant, grader, "out", v, 1.0, 1.0, v, ""))
    return rows


def _result(name: str, verifier: list[float], keyword: list[float]) -> AbResult:
    n = len(verifier)
    rows = _rows("verifier", [0.5] * n, verifier) + _rows("keyword", [0.5] * n, keyword)
    claim = assess(rows, GateResult(True, ()), skill="arxiv", fitness="none", run_id=None, alpha=0.05, seed=0)
    vd, kd = sum(verifier) / n - 0.5, sum(keyword) / n - 0.5
    metrics = {"holdout.verifier.delta": vd, "holdout.keyword.delta": kd}
    return AbResult(Candidate(name, BASELINE), None, metrics, rows, claim, n, 0.0)


def test_disagreement_names_the_candidate_and_both_directions() -> None:
    trap = _result("echo", verifier=[0.0] * 8, keyword=[1.0] * 8)   # keyword up, verifier down
    good = _result("good", verifier=[1.0] * 8, keyword=[1.0] * 8)
    lines = disagreements([trap, good])
    assert lines == ["echo: keyword says improved (Δ +0.500), verifier says regressed (Δ -0.500); paired "
                     "verdicts: keyword improved, verifier regressed"]
    frame = ranking([trap, good])
    assert list(frame.candidate) == ["good", "echo"]
    assert math.isnan(frame.judge_delta.iloc[0])
    text = summary_text(AbPlan(BASELINE, ()), [trap, good], "holdout")
    assert "Disagreements (by the sign of the mean delta):\n- echo: keyword says improved" in text


def test_shipped_variants_pass_the_gates() -> None:
    from harness.ab import load_plan
    from harness.config import EvolveConfig

    plan = load_plan(EvolveConfig(), candidate_files(VARIANTS))
    assert [c.name for c in plan.candidates] == ["hedge", "id-format", "padded", "rubric-echo"]


@pytest.mark.parametrize("case, needles", [
    ("missing", ["nope.md: file not found"]),
    ("not-a-skill", ["no frontmatter"]),
    ("frontmatter", ["frontmatter differs from the baseline's", "-description: Answer questions",
                     "+description: Something else."]),
    ("gates", ["fails the gates", "heading '## How to answer' of the baseline is missing"]),
    ("grown", ["fails the gates", "over the baseline"]),
    ("both", ["exactly one of --candidate FILE and --candidates DIR"]),
    ("empty-dir", ["holds no *.md file"]),
    ("split", ["Invalid value for '--split'"]),
])
def test_errors_are_clear_and_exit_2(case: str, needles: list[str], tmp_path: Path) -> None:
    fm = BASELINE.frontmatter_text
    files = {
        "not-a-skill": "just some notes\n",
        "frontmatter": fm.replace(BASELINE.description, "Something else.") + BASELINE.body,
        "gates": BASELINE.text.replace("## How to answer", "## Answering"),
        "grown": BASELINE.text + "\n- filler line to grow the file well past its limit.\n" * 10,
    }
    args = ["--candidate", str(tmp_path / "nope.md")]
    if case in files:
        args = ["--candidate", str(_write(tmp_path / f"{case}.md", files[case]))]
    elif case == "both":
        args += ["--candidates", str(tmp_path)]
    elif case == "empty-dir":
        args = ["--candidates", str(tmp_path)]
    elif case == "split":
        args += ["--split", "train"]
    code, out = _invoke(*args, "--task-model", "test/oracle")
    assert code == 2, out
    assert out.startswith("Error: ") and "Traceback" not in out
    for needle in needles:
        assert needle in out, out


def test_a_folder_lists_every_refused_candidate(tmp_path: Path) -> None:
    _write(tmp_path / "a.md", "no frontmatter here\n")
    _write(tmp_path / "b.md", BASELINE.text.replace("# arXiv papers", "# Papers"))
    code, out = _invoke("--candidates", str(tmp_path), "--task-model", "test/oracle")
    assert code == 2, out
    assert "a.md: no frontmatter" in out and "b.md: the candidate fails the gates" in out


def test_mlproject_entry_point_mirrors_the_options() -> None:
    import yaml

    from harness.cli.ab import ab_command

    entry = yaml.safe_load((VARIANTS.parents[3] / "MLproject").read_text(encoding="utf-8"))["entry_points"]["ab"]
    options = {p.name for p in ab_command.params} - {"quiet", "experiment"}  # mlflow run picks the experiment
    assert set(entry["parameters"]) == options
    for name in options:
        assert f"--{name.replace('_', '-')} {{{name}}}" in entry["command"]


def test_dry_run_checks_everything_and_creates_no_run(mlflow_store: str) -> None:
    code, out = _invoke("--candidates", str(VARIANTS), "--task-model", "test/oracle", "--judge-model", "",
                        "--dry-run", "true")
    assert code == 0, out
    assert "candidate rubric-echo" in out and "task 80" in out and "judge" not in out.split("expected LM calls")[1]
    assert _runs().empty
