"""Issue 20: faults never become results (LM failures, credentials, skills folders, the store, bad parameters)."""

from __future__ import annotations

import hashlib
import logging
import os
import subprocess
import sys
from pathlib import Path

import mlflow
import pytest
from click.testing import CliRunner
from openai_stub import StubServer

from harness.analysis.stats import pairs_from_rows
from harness.cli import main
from harness.engine.faults import LMFaultError, check_lm_faults
from harness.engine.holdout import HoldoutRow
from harness.messages import redact_text, redact_url
from harness.models.lm import ModelError, ModelSpec, build_lm, configure_cache
from harness.models.preflight import check_models
from harness.models.usage import UsageCounter
from harness.skills.diff import evolved_skill_text
from harness.skills.files import SkillError, find_skill, load_skill, parse_skill

ROOT = Path(__file__).resolve().parents[1]
ARXIV = ROOT / "experiments" / "skills" / "arxiv" / "SKILL.md"


def _invoke(*args: str) -> object:
    return CliRunner().invoke(main, list(args))


# --- 1. LM error share, preflight, summary, quiet logs ------------------------------------------------------


def test_run_whose_lm_fails_every_holdout_call_is_failed(mlflow_store: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import harness.engine.holdout as holdout

    real = holdout.generate

    def failing(program, tasks, num_threads=1, on_done=None):  # type: ignore[no-untyped-def]
        return [holdout.Output(o.task, "", "LMRateLimitError: 429 after retries")
                for o in real(program, tasks, num_threads, on_done)]

    monkeypatch.setattr(holdout, "generate", failing)
    monkeypatch.setattr("harness.tracking.tracker.MlflowTracker.evaluate_holdout",
                        lambda self, program, tasks, graders, variant, **kw: holdout.grade(
                            failing(program, tasks), graders, variant))
    result = _invoke("evolve", "--task-model", "test/oracle", "--num-cases", "20", "--budget", "10", "--quiet")
    assert result.exit_code == 1, result.output
    assert "too many LM calls failed" in result.output and "baseline holdout" in result.output
    run = mlflow.search_runs(experiment_names=["skills/arxiv"], output_format="list")[0]
    assert run.info.status == "FAILED"
    assert "too many LM calls failed" in run.data.tags["run.error"]
    assert "verdict" not in run.data.tags


def test_error_share_rule_per_role_and_variant() -> None:
    check_lm_faults({"lm_calls.task": 95, "lm_errors.task": 5})  # 5 % is tolerated
    with pytest.raises(LMFaultError, match="task LM: 20 of 100 calls failed"):
        check_lm_faults({"lm_calls.task": 80, "lm_errors.task": 20})
    rows = [HoldoutRow(f"t{i}", "id", "p", v, "verifier", "", 0.0, 0.0, 0.0, 0.0, "", "boom" if i < 2 else "")
            for i in range(5) for v in ("baseline", "evolved")]
    with pytest.raises(LMFaultError, match="baseline holdout: 2 of 5 task calls failed"):
        check_lm_faults({}, rows)


def test_failed_holdout_pair_is_excluded_and_counted() -> None:
    def row(task: str, variant: str, composite: float, error: str = "") -> HoldoutRow:
        return HoldoutRow(task, "id", "p", variant, "verifier", "", composite, 1.0, 1.0, composite, "", error)

    rows = [row("a", "baseline", 0.0, "LMProviderError: reply is not JSON"), row("a", "evolved", 1.0),
            row("b", "baseline", 0.5), row("b", "evolved", 0.5)]
    sample = pairs_from_rows(rows, "verifier")
    assert sample.task_ids == ("b",)  # the fault is never graded as the model's answer
    assert sample.faulted == 1 and sample.dropped == 1


def test_claim_report_says_pairs_were_excluded_for_faults() -> None:
    from harness.analysis.claim import claim_report
    from harness.analysis.stats import overall_verdict, paired_stats

    rows = [HoldoutRow(t, "id", "p", v, "verifier", "", 0.5, 1.0, 1.0, 0.5, "", "LMTimeoutError" if t == "a" else "")
            for t in "abcd" for v in ("baseline", "evolved")]
    stats = {"verifier": paired_stats(pairs_from_rows(rows, "verifier"))}
    assert stats["verifier"].faulted_pairs == 1
    report = claim_report("arxiv", None, "verifier", stats, overall_verdict(stats), 0.05)
    assert "1 holdout pair(s) were excluded" in report


@pytest.mark.parametrize(("status", "what", "fix"), [(429, "rate-limited", "lower --num-threads"),
                                                    (500, "server error", "check the server")])
def test_preflight_refuses_429_and_5xx_after_retries_naming_the_fix(status: int, what: str, fix: str) -> None:
    with StubServer(fail_first=100, fail_status=status) as stub:
        with pytest.raises(ModelError, match=what) as info:
            check_models({"task": ModelSpec("openai/stub-model", api_base=stub.url)})
        assert stub.requests == 3  # one call and two retries
    assert fix in str(info.value)  # the one line says what to do, not only what happened


def test_summary_shows_lm_errors() -> None:
    from harness.cli.summary import lm_error_rows

    assert lm_error_rows({"lm_errors.total": 0.0}) == []
    rows = lm_error_rows({"lm_errors.total": 3.0, "lm_errors.task": 2.0, "lm_errors.judge": 1.0})
    assert rows and "3 failed calls" in rows[0][1] and "task 2" in rows[0][1]


def test_quiet_log_lines_carry_no_traceback() -> None:
    import io

    from harness.cli.console import _warnings_to

    stream = io.StringIO()
    with _warnings_to(stream):
        try:
            raise RuntimeError("LM call failed\nsecond line")
        except RuntimeError:
            logging.getLogger("dspy.test").error("Error for example: LM call failed", exc_info=True)
    assert "Error for example" in stream.getvalue()
    assert "Traceback" not in stream.getvalue() and "second line" not in stream.getvalue()


# --- 2. empty replies: never cached, counted -----------------------------------------------------------------


def test_empty_reply_is_a_counted_failure_and_never_cached(tmp_path: Path) -> None:
    configure_cache(tmp_path / "cache")
    with StubServer("echo", fault="empty", fail_first=1) as stub:
        lm = build_lm(ModelSpec("openai/stub-model", api_base=stub.url, num_retries=0))
        usage = UsageCounter()
        usage.attach(lm, "task")
        with pytest.raises(Exception, match="empty reply"):
            lm("a question nobody asked before")
        assert usage.metrics()["lm_errors.task"] == 1.0
        assert lm("a question nobody asked before") == ["a question nobody asked before"]
        assert stub.requests == 2  # the empty reply was not replayed from the cache


# --- 3. credentials in URLs ----------------------------------------------------------------------------------


def test_urls_are_redacted() -> None:
    assert redact_url("http://user:pw@host:8/v1?api_key=k&x=1") == "http://REDACTED@host:8/v1?api_key=REDACTED&x=1"
    assert "s3cr3t" not in redact_text("at https://h/v1?token=s3cr3t&sig=abc: refused")
    assert redact_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"


def test_api_base_credentials_never_reach_the_store(mlflow_store: str) -> None:
    url = "http://user:canary-password@127.0.0.1:9/v1?api_key=canary-key"
    result = _invoke("evolve", "--task-model", "openai/x", "--api-base", url, "--num-cases", "20", "--quiet")
    assert result.exit_code == 2, result.output
    assert "canary" not in result.output
    from harness.config import EvolveConfig
    from harness.tracking.params import run_params

    skill = load_skill(ARXIV)
    from verifiers import get_verifier

    params = run_params(EvolveConfig(api_base=url), skill, get_verifier("arxiv").build_dataset(20, 0), "verifier")
    assert "canary" not in params["api_base"]


# --- 4. output dir inside the skills folder ------------------------------------------------------------------


def _user_skills(tmp_path: Path) -> Path:
    folder = tmp_path / "skills" / "research" / "arxiv"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_bytes(ARXIV.read_bytes())
    return tmp_path / "skills"


@pytest.mark.parametrize("where", ["own", "sub", "dotdot", "symlink", "root"])
def test_output_dir_inside_skills_is_refused(where: str, tmp_path: Path, mlflow_store: str) -> None:
    skills = _user_skills(tmp_path)
    own = skills / "research" / "arxiv"
    (tmp_path / "link").symlink_to(own)
    out = {"own": own, "sub": own / "out", "dotdot": tmp_path / "elsewhere" / ".." / "skills" / "research",
           "symlink": tmp_path / "link" / "runs", "root": skills}[where]
    before = sorted(p.name for p in own.iterdir())
    result = _invoke("evolve", "--skills-dir", str(skills), "--output-dir", str(out), "--task-model", "test/oracle",
                     "--num-cases", "20", "--budget", "5", "--quiet")
    assert result.exit_code == 2, result.output
    assert "inside the skills folder" in result.output and "--output-dir outside" in result.output
    assert sorted(p.name for p in own.iterdir()) == before


# --- 5. unusable skills locations ---------------------------------------------------------------------------


def test_named_location_with_only_a_broken_skill_is_an_error(tmp_path: Path) -> None:
    broken = tmp_path / "mine" / "arxiv-notes"
    broken.mkdir(parents=True)
    (broken / "SKILL.md").write_text("---\nname: [unclosed\n---\nbody\n", encoding="utf-8")
    with pytest.raises(SkillError, match="fail to load"):
        find_skill("arxiv", tmp_path / "mine")


def test_hermes_repo_pointing_nowhere_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SkillError, match="HERMES_AGENT_REPO"):
        find_skill("arxiv", env={"HERMES_AGENT_REPO": str(tmp_path / "nowhere")})


def test_unreadable_skills_dir_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "mine"
    (root / "locked").mkdir(parents=True)
    real_scandir = os.scandir

    def scandir(path: object) -> object:  # as root, chmod cannot make a folder unreadable
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", scandir)
    with pytest.raises(SkillError, match="cannot be read"):
        find_skill("arxiv", root)


# --- 6. concurrent first use of a new SQLite store -----------------------------------------------------------


def test_eight_processes_on_a_new_sqlite_store(tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path / 'new' / 'mlflow.db'}"
    (tmp_path / "new").mkdir()
    code = "from harness.tracking.store import check_tracking_store; import sys; check_tracking_store(sys.argv[1])"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    procs = [subprocess.Popen([sys.executable, "-c", code, uri], env=env, stderr=subprocess.PIPE, text=True)
             for _ in range(8)]
    errors = [p.communicate(timeout=300)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * 8, "\n".join(e[-500:] for e in errors)
    client = mlflow.MlflowClient(tracking_uri=uri)
    client.create_experiment("after")  # the store works for every later command
    assert client.get_experiment_by_name("after") is not None


# --- 8. read-only store --------------------------------------------------------------------------------------


def test_read_only_sqlite_store_fails_the_probe(mlflow_store: str) -> None:
    from harness.tracking.store import TrackingError, check_tracking_store

    path = mlflow_store.removeprefix("sqlite:///")
    read_only = f"sqlite:///file:{path}?mode=ro&uri=true"
    mlflow.MlflowClient(tracking_uri=read_only).search_experiments(max_results=1)  # it can be read ...
    with pytest.raises(TrackingError, match="cannot be used"):
        check_tracking_store(read_only)  # ... but not written


# --- 9. bad `mlflow run -P` values ---------------------------------------------------------------------------


@pytest.mark.parametrize("args", [["--budget", "abc"], ["--alpha", "x"], ["--dry-run", "maybe"], ["--unknown", "1"]])
def test_bad_projects_parameter_is_recorded_on_the_projects_run(args: list[str], mlflow_store: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    client = mlflow.MlflowClient()
    run = client.create_run(client.create_experiment("projects"))
    monkeypatch.setenv("MLFLOW_RUN_ID", run.info.run_id)
    proc = subprocess.run([sys.executable, "-m", "harness.cli", "evolve", *args], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=120)
    assert proc.returncode == 2, proc.stderr
    done = client.get_run(run.info.run_id)
    assert done.info.status == "FAILED"
    assert done.data.tags["run.error"] and done.data.tags["run.error"] in proc.stderr
    assert "error.txt" in {a.path for a in client.list_artifacts(run.info.run_id)}


# --- 10. the smaller points ----------------------------------------------------------------------------------


def test_duplicate_frontmatter_keys_are_refused() -> None:
    with pytest.raises(SkillError, match="duplicate key 'name'"):
        parse_skill("---\nname: arxiv\ndescription: d\nname: other\n---\nbody\n", Path("x/SKILL.md"))


def test_bom_kept_in_logged_baseline_and_evolved(tmp_path: Path, mlflow_store: str) -> None:
    skills = tmp_path / "skills" / "arxiv"
    skills.mkdir(parents=True)
    (skills / "SKILL.md").write_bytes(b"\xef\xbb\xbf" + ARXIV.read_bytes())
    result = _invoke("evolve", "--skills-dir", str(tmp_path / "skills"), "--task-model", "test/lessons",
                     "--num-cases", "20", "--budget", "30", "--quiet")
    assert result.exit_code == 0, result.output
    run = mlflow.search_runs(experiment_names=["skills/arxiv"], output_format="list")[0]
    baseline = Path(mlflow.artifacts.download_artifacts(run_id=run.info.run_id, artifact_path="skill/baseline/SKILL.md",
                                                        dst_path=str(tmp_path / "dl")))
    assert hashlib.sha256(baseline.read_bytes()).hexdigest() == run.data.params["baseline_sha256"]
    evolved = Path(mlflow.artifacts.download_artifacts(run_id=run.info.run_id, artifact_path="skill/evolved/SKILL.md",
                                                       dst_path=str(tmp_path / "dl")))
    assert evolved.read_bytes().startswith(b"\xef\xbb\xbf")


def test_crlf_skill_keeps_crlf_where_lessons_are_added() -> None:
    skill = parse_skill(ARXIV.read_text(encoding="utf-8").replace("\n", "\r\n"), ARXIV)
    evolved = evolved_skill_text(skill, skill.body.replace("\r\n", "\n") + "\n## Lessons from graded answers\n- x\n")
    assert "\n" not in evolved.replace("\r\n", "")


def test_no_verifier_hint_points_to_a_task_file() -> None:
    from harness.engine.sources import registered_verifier
    from verifiers import UnknownVerifierError, get_verifier

    for call in (registered_verifier, get_verifier):
        with pytest.raises(UnknownVerifierError) as info:
            call("no-such-skill")
        assert "fitness=keyword" not in str(info.value) and "evals/tasks.jsonl" in str(info.value)


def test_whole_numbers_are_exact(mlflow_store: str) -> None:
    from harness.cli.common import WHOLE

    assert WHOLE.convert("99999999999999999999", None, None) == 99999999999999999999
    assert WHOLE.convert("60.0", None, None) == 60
    with pytest.raises(Exception, match="not a whole number"):
        WHOLE.convert("1e400x", None, None)


def test_experiment_name_over_500_characters_is_a_usage_error(mlflow_store: str) -> None:
    result = _invoke("evolve", "--experiment", "e" * 501, "--task-model", "test/oracle", "--quiet")
    assert result.exit_code == 2, result.output
    assert "at most 500 characters" in result.output


@pytest.mark.parametrize("kind", ["directory", "fifo"])
def test_skill_md_that_is_not_a_file_says_what_it_is(kind: str, tmp_path: Path) -> None:
    folder = tmp_path / "skills" / "arxiv"
    folder.mkdir(parents=True)
    if kind == "directory":
        (folder / "SKILL.md").mkdir()
    else:
        os.mkfifo(folder / "SKILL.md")
    with pytest.raises(SkillError, match="is a directory" if kind == "directory" else "is a FIFO"):
        find_skill("arxiv", tmp_path / "skills")
