"""Models: provider models through an ``api_base`` (a stub OpenAI-compatible server on 127.0.0.1), retries,
preflight failures, per-role usage (cached vs uncached, errors), the DSPy cache, and no network offline."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dspy
import mlflow
import pytest
from click.testing import CliRunner
from openai_stub import StubServer, arxiv_answer

from harness.cli import main
from harness.cli.console import Reporter
from harness.config import EvolveConfig
from harness.engine import holdout as evaluate
from harness.engine.graders import VerifierGrader
from harness.engine.program import SkillProgram
from harness.models.lm import PLACEHOLDER_API_KEY, ModelError, ModelSpec, build_lm, configure_cache
from harness.models.preflight import check_models, missing_key
from harness.models.usage import UsageCounter
from harness.run import evolve
from harness.tracking.tracker import NullTracker
from verifiers import Unscored, get_verifier

REPO = Path(__file__).resolve().parents[1]
STUB_MODEL = "openai/stub-model"
TASKS = get_verifier("arxiv").tasks()


@pytest.fixture
def own_cache(tmp_path: Path) -> Iterator[Path]:
    """A fresh DSPy disk cache in ``tmp_path`` for this test; the session cache is put back afterwards."""
    saved = dspy.cache
    path = configure_cache(tmp_path / "dspy-cache")
    yield path
    dspy.cache = saved


@pytest.fixture
def no_openai_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stub needs no key: prove the api_base path works with OPENAI_API_KEY unset."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.fixture
def stub() -> Iterator[StubServer]:
    with StubServer() as server:
        yield server


def _stub_lm(url: str, **spec: Any) -> dspy.LM:
    return build_lm(ModelSpec(STUB_MODEL, api_base=url, **spec))


def test_api_base_model_answers_through_the_skill_program(stub: StubServer, no_openai_key: None) -> None:
    task = TASKS[0]
    lm = _stub_lm(stub.url, cache=False)
    assert lm.kwargs["api_key"] == PLACEHOLDER_API_KEY and lm.kwargs["timeout"] == 60.0 and lm.num_retries == 3
    usage = UsageCounter()
    usage.attach(lm, "task")
    with dspy.context(lm=lm):
        pred = SkillProgram("Answer in one sentence.")(question=task.question)
    assert task.answer in pred.answer
    assert stub.requests == 1
    assert stub.bodies[0]["messages"] == [{"role": "system", "content": "Answer in one sentence."},
                                          {"role": "user", "content": task.question}]
    metrics = usage.metrics()
    assert metrics["lm_calls.task"] == metrics["lm_calls.task.uncached"] == 1
    assert metrics["tokens.task.prompt"] > 0 and metrics["tokens.task.completion"] > 0


def test_evolve_cli_against_an_api_base_finishes_with_usage_metrics(stub: StubServer, no_openai_key: None,
                                                                     own_cache: Path, mlflow_store: str) -> None:
    result = CliRunner().invoke(main, ["evolve", "--task-model", STUB_MODEL, "--api-base", stub.url,
                                       "--num-cases", "8", "--budget", "8", "--quiet"])
    assert result.exit_code == 0, result.output
    # the holdout evaluation runs live in skills/arxiv/holdout (issue 16); the run itself is the one in skills/arxiv
    (run,) = mlflow.search_runs(experiment_names=["skills/arxiv"], output_format="list")
    assert run.info.status == "FINISHED"
    metrics = run.data.metrics
    assert metrics["lm_calls.task"] >= metrics["lm_calls.task.uncached"] > 0
    # every request the server saw is counted once, besides the preflight's single probe call
    assert metrics["lm_calls.task.uncached"] + 1 == stub.requests
    assert metrics["lm_calls.uncached"] == metrics["lm_calls.task.uncached"]
    assert metrics["lm_errors.task"] == 0 and metrics["tokens.task.prompt"] > 0
    assert metrics["holdout.verifier.baseline"] == pytest.approx(1.0)  # the stub answers arXiv tasks right
    assert run.data.params["task_model"] == STUB_MODEL and run.data.params["api_base"] == stub.url


def test_rate_limit_is_retried_with_retry_after(no_openai_key: None) -> None:
    task = TASKS[1]
    with StubServer(fail_first=1, fail_status=429, retry_after="0") as server:
        lm = _stub_lm(server.url, cache=False, num_retries=2)
        usage = UsageCounter()
        usage.attach(lm, "task")
        started = time.perf_counter()
        answer = lm(task.question)
        elapsed = time.perf_counter() - started
    assert answer == [arxiv_answer(task.question)]
    assert (server.requests, server.failures) == (2, 1)  # one 429, then the answer
    assert elapsed < 5  # Retry-After: 0 replaces DSPy's 1 s first backoff
    metrics = usage.metrics()
    assert metrics["lm_calls.task"] == 1 and metrics["lm_errors.task"] == 0 and usage.errors() == []


def test_rate_limit_without_retries_is_an_error_counted_and_kept(no_openai_key: None) -> None:
    with StubServer(fail_first=1, fail_status=429) as server:
        lm = _stub_lm(server.url, cache=False, num_retries=0)
        usage = UsageCounter()
        usage.attach(lm, "judge")
        with pytest.raises(Exception, match="429"):
            lm(TASKS[1].question)
    assert server.requests == 1
    assert usage.metrics()["lm_errors.judge"] == 1 and usage.metrics()["lm_calls.judge"] == 0
    (error,) = usage.errors()
    assert error["role"] == "judge" and error["model"] == STUB_MODEL and "LMRateLimitError" in error["error"]


def test_failures_after_retries_are_counted_kept_and_graded_as_failures(no_openai_key: None) -> None:
    tasks = TASKS[:5]
    failing = {tasks[1].question, tasks[3].question}
    with StubServer(fail_when=lambda q: q in failing) as server:
        lm = _stub_lm(server.url, cache=False, num_retries=1)
        usage = UsageCounter()
        usage.attach(lm, "task")
        with dspy.context(lm=lm):
            outputs = evaluate.generate(SkillProgram("Answer."), tasks)
    assert server.requests == 3 + 2 * 2  # three answers; two questions x (1 attempt + 1 retry)
    failed = [o for o in outputs if o.error]
    assert {o.task.question for o in failed} == failing
    assert all(o.text == "" and "LMServerError" in o.error for o in failed)
    rows = evaluate.grade(outputs, [VerifierGrader(get_verifier("arxiv"))], "baseline")
    grades = {r.task_id: r.correctness for r in rows}
    assert [grades[t.task_id] for t in tasks] == [1.0, 0.0, 1.0, 0.0, 1.0]
    metrics = usage.metrics()
    assert metrics["lm_errors.task"] == 2 and metrics["lm_calls.task"] == 3 and metrics["lm_errors.total"] == 2
    assert [e["role"] for e in usage.errors()] == ["task", "task"]
    assert all("500" in e["error"] for e in usage.errors())


def test_cache_hits_count_as_calls_but_not_as_uncached_tokens_or_cost(no_openai_key: None, own_cache: Path) -> None:
    # gpt-4o-mini has a price in LiteLLM's bundled cost map, so the stub's usage gets a cost
    with StubServer() as server:
        lm = build_lm(ModelSpec("openai/gpt-4o-mini", api_base=server.url))
        usage = UsageCounter()
        usage.attach(lm, "reflection")
        first, second = lm(TASKS[2].question), lm(TASKS[2].question)
    assert first == second and server.requests == 1
    assert lm.history[0]["cost"] and lm.history[1]["usage"] == {}  # DSPy keeps the cost on a cache hit
    metrics = usage.metrics()
    assert metrics["lm_calls.reflection"] == 2 and metrics["lm_calls.reflection.uncached"] == 1
    assert metrics["tokens.reflection.prompt"] == lm.history[0]["usage"]["prompt_tokens"]
    assert metrics["cost.reflection"] == pytest.approx(lm.history[0]["cost"])  # counted once, not twice


def test_test_model_cache_hits_are_not_uncached(own_cache: Path) -> None:
    lm = build_lm(ModelSpec("test/oracle"))
    usage = UsageCounter()
    usage.attach(lm, "task")
    with dspy.context(lm=lm):
        for task in TASKS[:3] * 2:
            SkillProgram("Answer.")(question=task.question)
    metrics = usage.metrics()
    assert (metrics["lm_calls.task"], metrics["lm_calls.task.uncached"], metrics["lm_calls.total"]) == (6, 3, 6)


def test_second_identical_run_makes_no_uncached_calls(no_openai_key: None, tmp_path: Path) -> None:
    saved = dspy.cache
    try:
        with StubServer() as server:
            config = EvolveConfig(task_model=STUB_MODEL, api_base=server.url, num_cases=8, budget=8, seed=3)
            configure_cache(tmp_path / "cache")
            first = evolve(config, NullTracker(), Reporter(quiet=True))
            requests_after_first = server.requests
            configure_cache(tmp_path / "cache")  # a new Cache object: its memory layer is empty, the disk is not
            second = evolve(config, NullTracker(), Reporter(quiet=True))
    finally:
        dspy.cache = saved
    # besides the preflight's one uncached probe per run (it proves the endpoint is up before optimising),
    # every request the server saw was a run's LM call, and the rerun made none
    assert first.metrics["lm_calls.task.uncached"] + 1 == requests_after_first > 1
    assert second.metrics["lm_calls.task.uncached"] == 0 and second.metrics["lm_calls.uncached"] == 0
    assert server.requests == requests_after_first + 1  # only the second run's preflight probe
    assert second.metrics["lm_calls.task"] == first.metrics["lm_calls.task"]
    assert second.metrics.get("tokens.task.prompt") == 0
    assert [r.to_dict() for r in second.rows] == [r.to_dict() for r in first.rows]
    assert second.evolved_text == first.evolved_text


def test_configure_cache_resolves_the_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    saved = dspy.cache
    try:
        assert configure_cache(tmp_path / "a") == (tmp_path / "a").resolve()
        monkeypatch.setenv("DSPY_CACHEDIR", str(tmp_path / "from-env"))
        assert configure_cache(None) == (tmp_path / "from-env").resolve()
        assert configure_cache("") == (tmp_path / "from-env").resolve()
        assert (tmp_path / "from-env").is_dir()
        assert dspy.cache is not saved
        (tmp_path / "file").write_text("x")
        with pytest.raises(ValueError, match="not writable"):
            configure_cache(tmp_path / "file" / "sub")
    finally:
        dspy.cache = saved


def test_preflight_reports_a_live_stub_and_test_models(stub: StubServer, no_openai_key: None) -> None:
    reports = check_models({"task": ModelSpec(STUB_MODEL, api_base=stub.url), "reflection": None,
                            "judge": ModelSpec("test/judge")})
    assert list(reports) == ["task", "judge"]
    assert reports["task"].ok and reports["task"].address == stub.url and reports["task"].latency_s is not None
    assert reports["judge"].ok and reports["judge"].latency_s == 0.0
    assert stub.requests == 1 and stub.bodies[0]["max_completion_tokens"] <= 8


def test_preflight_dead_endpoint_fails_fast_naming_model_and_address(no_openai_key: None) -> None:
    dead = "http://127.0.0.1:9/v1"
    started = time.perf_counter()
    with pytest.raises(ModelError) as info:
        check_models({"task": ModelSpec(STUB_MODEL, api_base=dead)})
    assert time.perf_counter() - started < 15
    message = str(info.value)
    assert "task model openai/stub-model" in message and dead in message and "unreachable" in message
    assert "\n" not in message


def test_preflight_timeout_names_the_wait_and_rate_limit_is_retried_then_refused(no_openai_key: None) -> None:
    defaults = ModelSpec(STUB_MODEL)
    with StubServer(delay_s=3) as slow:
        started = time.perf_counter()
        with pytest.raises(ModelError, match=r"task model openai/stub-model did not answer at .* within 1 s"):
            check_models({"task": ModelSpec(STUB_MODEL, api_base=slow.url)}, timeout_s=1)
        assert time.perf_counter() - started < 2.5 and slow.requests == 1  # no retries in preflight
    with StubServer(fail_first=1, fail_status=429) as limited:  # a transient 429 is retried (issue 20) ...
        report = check_models({"task": ModelSpec(STUB_MODEL, api_base=limited.url)})["task"]
    assert report.ok and report.detail == "answered" and limited.requests == 2
    with StubServer(fail_first=5, fail_status=429) as limited:  # ... a lasting one is not "reachable"
        with pytest.raises(ModelError, match="rate-limited"):
            check_models({"task": ModelSpec(STUB_MODEL, api_base=limited.url)})
    assert defaults.num_retries == 3 and defaults.timeout_s == 60.0  # the run's own defaults


def test_preflight_missing_key_fails_without_network(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    attempts: list[str] = []
    real_connect = socket.socket.connect

    def connect(self: socket.socket, address: Any) -> None:
        if self.family == getattr(socket, "AF_UNIX", None):
            return real_connect(self, address)
        attempts.append(f"connect {address!r}")
        raise OSError("network disabled by the test")

    def create_connection(address: Any, *args: Any, **kwargs: Any) -> socket.socket:
        attempts.append(f"create_connection {address!r}")
        raise OSError("network disabled by the test")

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "create_connection", create_connection)
    model = "anthropic/claude-3-5-haiku-latest"
    with pytest.raises(ModelError, match="ANTHROPIC_API_KEY") as info:
        check_models({"task": ModelSpec("test/oracle"), "judge": ModelSpec(model)})
    assert f"judge model {model} needs ANTHROPIC_API_KEY (not set)" in str(info.value)
    assert attempts == []
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    assert missing_key("judge", ModelSpec(model)) is None


def test_api_base_lifts_the_key_requirement_and_a_set_key_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert "OPENAI_API_KEY" in (missing_key("task", ModelSpec("openai/gpt-4o-mini")) or "")
    local = ModelSpec("openai/gpt-4o-mini", api_base="http://127.0.0.1:1/v1")
    assert missing_key("task", local) is None
    assert build_lm(local).kwargs["api_key"] == PLACEHOLDER_API_KEY
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real")
    assert "api_key" not in build_lm(local).kwargs  # DSPy reads the variable itself
    assert missing_key("task", ModelSpec("ollama_chat/llama3.2")) is None  # keyless local server


def test_bad_model_settings_are_model_errors() -> None:
    with pytest.raises(ModelError, match="unknown test model"):
        check_models({"task": ModelSpec("test/nonexistent")})
    with pytest.raises(ModelError, match="num_retries"):
        build_lm(ModelSpec(STUB_MODEL, api_base="http://127.0.0.1:1/v1", num_retries=-1))
    with pytest.raises(ModelError, match="timeout_s"):
        build_lm(ModelSpec(STUB_MODEL, api_base="http://127.0.0.1:1/v1", timeout_s=0))


_OFFLINE_SCRIPT = textwrap.dedent("""
    import json, os, socket, sys
    attempts = []
    _connect, _connect_ex = socket.socket.connect, socket.socket.connect_ex

    def _unix(sock):
        return sock.family == getattr(socket, "AF_UNIX", None)

    def connect(self, address):
        if _unix(self):
            return _connect(self, address)
        attempts.append("connect %r" % (address,))
        raise OSError("network disabled by the test")

    def connect_ex(self, address):
        if _unix(self):
            return _connect_ex(self, address)
        attempts.append("connect_ex %r" % (address,))
        return 111

    def create_connection(address, *args, **kwargs):
        attempts.append("create_connection %r" % (address,))
        raise OSError("network disabled by the test")

    def getaddrinfo(host, *args, **kwargs):
        attempts.append("getaddrinfo %r" % (host,))
        raise socket.gaierror("network disabled by the test")

    socket.socket.connect, socket.socket.connect_ex = connect, connect_ex
    socket.create_connection, socket.getaddrinfo = create_connection, getaddrinfo

    from harness.config import apply_environment_defaults
    apply_environment_defaults()  # LITELLM_LOCAL_MODEL_COST_MAP before anything imports LiteLLM (the CLI does this)
    import dspy, litellm, mlflow
    from harness.models.lm import ModelSpec, build_lm
    from harness.models.preflight import check_models
    from harness.engine.program import SkillProgram
    from harness.models.usage import UsageCounter

    with mlflow.start_run():
        mlflow.log_metric("probe", 1.0)
    reports = check_models({"task": ModelSpec("embedded", max_tokens=8), "judge": ModelSpec("embedded")})
    lm = build_lm(ModelSpec("embedded", max_tokens=8, cache=False))
    usage = UsageCounter()
    usage.attach(lm, "task")
    with dspy.context(lm=lm):
        answer = SkillProgram("Answer with a four-digit year.")(question=sys.argv[1]).answer
    print(json.dumps({"attempts": attempts, "ok": [r.ok for r in reports.values()],
                      "address": reports["task"].address, "answer": answer, "metrics": usage.metrics(),
                      "cost_map": len(litellm.model_cost)}))
""")


#: variables that make MLflow think it runs in CI or under pytest, which silently turns its telemetry off
_CI_VARIABLES = ("PYTEST_CURRENT_TEST", "CI", "GITHUB_ACTIONS", "GITLAB_CI", "CIRCLECI", "JENKINS_URL", "TRAVIS",
                 "TF_BUILD", "BUILDKITE", "BITBUCKET_BUILD_NUMBER", "CODEBUILD_BUILD_ARN", "TEAMCITY_VERSION",
                 "CLOUD_RUN_EXECUTION", "RUNBOT_HOST_URL", "RUNBOT_BUILD_NAME", "RUNBOT_WORKER_ID")


def _user_env(**extra: str) -> dict[str, str]:
    """This process's environment as a user's shell would have it: no pytest/CI markers, no cost-map switch."""
    drop = {*_CI_VARIABLES, "LITELLM_LOCAL_MODEL_COST_MAP", "MLFLOW_DISABLE_TELEMETRY", "DO_NOT_TRACK"}
    return {**{k: v for k, v in os.environ.items() if k not in drop}, "PYTHONPATH": str(REPO), **extra}


def test_embedded_run_makes_no_network_connection(mlflow_store: str, tmp_path: Path) -> None:
    """Imports (LiteLLM's cost map included), an MLflow sqlite run, the embedded preflight and one answer,
    with every non-unix socket connection and DNS lookup refused and recorded.

    MLflow telemetry is switched off here the way a user would (``MLFLOW_DISABLE_TELEMETRY``); that the
    harness does it by itself is :func:`test_harness_turns_mlflow_telemetry_off`.
    """
    env = _user_env(MLFLOW_TRACKING_URI=mlflow_store, DSPY_CACHEDIR=str(tmp_path / "cache"),
                    MLFLOW_DISABLE_TELEMETRY="true")
    question = next(t for t in TASKS if t.kind == "year").question
    proc = subprocess.run([sys.executable, "-c", _OFFLINE_SCRIPT, question], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["attempts"] == []
    assert result["ok"] == [True, True] and result["address"] == "in-process"
    assert result["answer"].strip()
    assert result["metrics"]["lm_calls.task"] == 1 and result["metrics"]["tokens.task.prompt"] > 0
    assert result["cost_map"] > 100  # LiteLLM loaded its bundled price table instead of fetching one


def test_harness_turns_mlflow_telemetry_off(tmp_path: Path) -> None:
    code = ("from harness.cli import main\ntry:\n    main(['--version'])\nexcept SystemExit:\n    pass\n"
            "import mlflow.telemetry.utils as t; print(t.is_telemetry_disabled())")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=_user_env(), capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().splitlines()[-1] == "True"  # after the version line


def test_lm_time_is_the_time_inside_the_calls_per_role(own_cache: Path) -> None:
    task_lm, judge_lm = build_lm(ModelSpec("test/sleepy-50", cache=False)), build_lm(ModelSpec("test/oracle"))
    usage = UsageCounter()
    usage.attach(task_lm, "task")
    usage.attach(judge_lm, "judge")
    started = time.perf_counter()
    for task in TASKS[:3]:
        task_lm(task.question)
        judge_lm(task.question)
    wall = time.perf_counter() - started
    metrics = usage.metrics()
    assert 3 * 0.05 <= metrics["lm_time_s.task"] <= wall  # each call sleeps 50 ms inside the call
    assert 0 < metrics["lm_time_s.judge"]
    assert metrics["lm_time_s.task"] + metrics["lm_time_s.judge"] <= wall  # serial calls: no overlap
    assert metrics["lm_time_s.total"] == pytest.approx(metrics["lm_time_s.task"] + metrics["lm_time_s.judge"])


def test_the_embedded_judge_runs_in_its_own_llama_cpp_context() -> None:
    from harness.config import EvolveConfig
    from harness.models.embedded import embedded_engine
    from harness.models.roles import JUDGE_CONTEXT, JUDGE_MAX_TOKENS, model_specs

    specs = model_specs(EvolveConfig(), judge=True)  # the embedded defaults
    assert specs["task"].context == "" and specs["judge"].context == JUDGE_CONTEXT
    assert specs["judge"].max_tokens == JUDGE_MAX_TOKENS
    # engines are built lazily (no model load here): one per (seed, context)
    assert embedded_engine(0, JUDGE_CONTEXT) is embedded_engine(0, JUDGE_CONTEXT)
    assert embedded_engine(0, JUDGE_CONTEXT) is not embedded_engine(0)


def test_the_embedded_judge_decodes_under_the_reply_grammar() -> None:
    from harness.config import JUDGE_REPLY_GRAMMAR
    from harness.models.embedded import embedded_engine
    from harness.models.roles import model_specs

    specs = model_specs(EvolveConfig(), judge=True)
    assert specs["judge"].grammar == JUDGE_REPLY_GRAMMAR and specs["task"].grammar == ""
    assert embedded_engine(0, "judge", JUDGE_REPLY_GRAMMAR) is not embedded_engine(0, "judge")
    assert embedded_engine(0, "judge", JUDGE_REPLY_GRAMMAR).grammar == JUDGE_REPLY_GRAMMAR


@pytest.mark.parametrize("reply", ["0 1 1 wrong year; the rubric expects 2017", "1 0.5 0 padded",
                                   "0.7 1 0.2 right title, but (too) long-winded"])
def test_replies_the_judge_grammar_allows_parse(reply: str) -> None:
    from llama_cpp import LlamaGrammar

    from harness.config import JUDGE_REPLY_GRAMMAR
    from harness.engine.judge import parse_judgement

    LlamaGrammar.from_string(JUDGE_REPLY_GRAMMAR, verbose=False)  # raises when llama.cpp cannot parse it
    grade, error = parse_judgement(reply)
    assert grade is not None, error


@pytest.mark.e2e
def test_every_embedded_judge_reply_parses() -> None:
    from harness.engine.judge import JudgeGrader
    from harness.models.roles import build_models

    models = build_models(EvolveConfig(), judge=True)  # the embedded defaults: task and judge
    skill = (Path(__file__).resolve().parents[1] / "experiments/skills/arxiv/SKILL.md").read_text()
    judge = JudgeGrader(models.judge, skill)
    verifier = get_verifier("arxiv")
    outputs = ["", "I cannot browse the internet.", "The paper was submitted in 2017.",
               "1706.03762, or perhaps 1512.03385."]
    for task, output in zip(verifier.tasks()[:4], outputs, strict=True):
        grade = judge.grade(task, output)
        assert not isinstance(grade, Unscored), grade
        assert 0.0 <= grade.composite <= 1.0
    assert judge.unscored == 0
