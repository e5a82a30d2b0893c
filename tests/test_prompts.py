"""Skill versions in MLflow's prompt registry: baseline = version 1, evolved versions with their tags, the CLI."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers import load_version

from harness.cli.versions import versions_command
from harness.skills.files import Skill, parse_skill
from harness.tracking.prompts import (
    BaselineMismatchError,
    PromptRegistryError,
    prompt_name,
    register_baseline,
    register_evolved,
    skill_versions,
    text_sha256,
)

#: a SKILL.md with CRLF line endings and every brace shape a real skill's code blocks contain
BRACY = (
    "---\r\nname: bracy\r\ndescription: braces {x} and {{ y }}\r\n---\r\n"
    "# Bracy\r\n\r\nFill in {{ question }} and {answer}; literal {{{triple}}} and }{ and {{.\r\n\r\n"
    "```js\r\nfunction f(a) { return {b: `${a}`}; }\r\n```\r\n"
    "```jinja\n{% for x in xs %}{{ x | upper }}{% endfor %}\n```\n"
    "Python: f\"{value!r:>{width}}\" and '{0} {1}'.format(a, b); trailing backslash \\{\n"
)


def _skill(tmp_path: Path, text: str = BRACY, folder: str = "bracy") -> Skill:
    path = tmp_path / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    return parse_skill(text, path)


def test_prompt_names_are_valid_registry_names() -> None:
    assert prompt_name("arxiv") == "skill-arxiv"
    assert prompt_name("web_search.v2") == "skill-web_search.v2"
    odd = prompt_name("my skill/v2")
    assert re.fullmatch(r"[a-zA-Z0-9_.-]+", odd) and odd.startswith("skill-my-skill-v2-")
    assert odd != prompt_name("my-skill-v2") and odd != prompt_name("my skill v2")
    with pytest.raises(ValueError):
        prompt_name("  ")


def test_registry_round_trip(mlflow_store: str, tmp_path: Path) -> None:
    import mlflow

    skill = _skill(tmp_path)
    assert register_baseline(skill) == 1
    assert register_baseline(skill) == 1  # idempotent: the same text is reused
    evolved = skill.with_body(skill.body + "\r\n## Lessons\r\n- Commit to one {answer}; never write {{ two }}.\r\n")
    mlflow.set_experiment(experiment_id=mlflow.create_experiment(
        "prompts", artifact_location=(tmp_path / "artifacts").as_uri()))
    with mlflow.start_run() as run:
        run_id = run.info.run_id
    version = register_evolved(skill, evolved, run_id, "verifier", "improved", 0.125)
    assert version == 2
    assert register_evolved(skill, evolved, run_id, "verifier", "improved", 0.125) == 2  # idempotent per run

    # byte-for-byte: braces of every shape and CRLF line endings survive the registry
    assert load_version("bracy", 1).encode("utf-8") == BRACY.encode("utf-8")
    assert load_version("bracy", "2") == evolved
    assert load_version("bracy", "baseline") == BRACY
    assert load_version("bracy", "evolved") == evolved
    assert mlflow.genai.load_prompt("prompts:/skill-bracy@evolved").template == evolved

    client = mlflow.MlflowClient()
    tags = client.get_prompt_version("skill-bracy", 2).tags
    assert {k: tags[k] for k in ("variant", "run_id", "fitness", "verdict", "holdout_delta", "sha256")} == {
        "variant": "evolved", "run_id": run_id, "fitness": "verifier", "verdict": "improved",
        "holdout_delta": "0.125", "sha256": text_sha256(evolved)}
    base_tags = client.get_prompt_version("skill-bracy", 1).tags
    assert base_tags["variant"] == "baseline" and base_tags["sha256"] == skill.sha256
    assert "run_id" not in client.get_prompt("skill-bracy").tags  # version facts stay on versions
    linked = json.loads(client.get_run(run_id).data.tags["mlflow.linkedPrompts"])  # the run page's prompt list
    assert linked == [{"name": "skill-bracy", "version": "2"}]

    frame = skill_versions("bracy")
    assert list(frame["version"]) == [1, 2]
    assert list(frame["variant"]) == ["baseline", "evolved"]
    assert list(frame["run_id"]) == ["", run_id]
    assert list(frame["verdict"]) == ["baseline", "improved"]  # issue 16: every version names its verdict
    assert math.isnan(frame["holdout_delta"][0]) and frame["holdout_delta"][1] == 0.125
    assert list(frame["aliases"]) == ["baseline", "evolved"]
    assert frame["created"][0] <= frame["created"][1]

    # a changed baseline registers nothing and says so
    changed = _skill(tmp_path, BRACY.replace("Bracy", "Curly"), folder="bracy2")
    with pytest.raises(BaselineMismatchError, match="changed since it was first registered"):
        register_baseline(changed)
    with pytest.raises(BaselineMismatchError):
        register_evolved(changed, evolved, run_id, "verifier", "improved", 0.1)
    assert len(skill_versions("bracy")) == 2


def test_versions_command_lists_versions_with_verdicts(mlflow_store: str, tmp_path: Path) -> None:
    skill = _skill(tmp_path)
    register_evolved(skill, skill.with_body("Evolved {{body}}.\n"), "run-abc", "keyword", "inconclusive", -0.05,
                     task_model="openai/gpt-4o-mini")
    runner = CliRunner()
    plain = runner.invoke(versions_command, ["--skill", "bracy", "--format", "plain"])
    assert plain.exit_code == 0, plain.output
    lines = plain.output.splitlines()
    assert "prompt skill-bracy - 2 version(s)" in lines[0]
    assert lines[1].split()[:4] == ["version", "variant", "verdict", "holdout_delta"]
    assert lines[2].split()[:2] == ["1", "baseline"]
    assert lines[1].split()[:6] == ["version", "variant", "verdict", "holdout_delta", "fitness", "task_model"]
    assert lines[3].split()[:6] == ["2", "evolved", "inconclusive", "-0.050", "keyword", "openai/gpt-4o-mini"]
    fancy = runner.invoke(versions_command, ["--skill", "bracy", "--format", "rich"], env={"COLUMNS": "200"})
    assert fancy.exit_code == 0 and "inconclusive" in fancy.output and "skill-bracy" in fancy.output
    none = runner.invoke(versions_command, ["--skill", "nothing-here"])
    assert none.exit_code == 0 and "no versions of skill 'nothing-here'" in none.output
    assert skill_versions("nothing-here").empty


def test_limits_are_reported(mlflow_store: str, tmp_path: Path) -> None:
    skill = _skill(tmp_path)
    with pytest.raises(PromptRegistryError, match="100,000"):
        register_evolved(skill, skill.with_body("x" * 100_001), "run-1", "verifier", "improved", 0.1)
    with pytest.raises(PromptRegistryError, match="run id"):
        register_evolved(skill, skill.text, "", "verifier", "improved", 0.1)
    with pytest.raises(PromptRegistryError, match="no version"):
        load_version("bracy", 7)


class _LaggingClient:
    """An ``MlflowClient`` whose first ``search_prompt_versions`` answers from just before another process
    commits its baseline: the interleaving of parallel runs that register the same skill at once."""

    def __init__(self, concurrent_commit: Callable[[], object]) -> None:
        import mlflow

        self._real = mlflow.MlflowClient()
        self._concurrent_commit: Callable[[], object] | None = concurrent_commit

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def search_prompt_versions(self, *args: Any, **kwargs: Any) -> Any:
        found = self._real.search_prompt_versions(*args, **kwargs)
        if self._concurrent_commit is not None:
            commit, self._concurrent_commit = self._concurrent_commit, None
            commit()
        return found


def test_baseline_committed_by_another_process_mid_check_is_reused(mlflow_store: str, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import mlflow

    import harness.tracking.prompts as prompts

    skill = _skill(tmp_path)
    real = mlflow.MlflowClient()
    real.create_prompt(prompt_name(skill.name))
    other = lambda: real.create_prompt_version(prompt_name(skill.name), skill.text, tags={"variant": "baseline"})  # noqa: E731
    monkeypatch.setattr(prompts, "_client", lambda client=None: _LaggingClient(other))
    assert register_baseline(skill) == 1
    # our duplicate (version 2) was dropped: only the other process's baseline remains
    assert [int(v.version) for v in real.search_prompt_versions(prompt_name(skill.name))] == [1]


def test_deleted_baseline_is_reported(mlflow_store: str, tmp_path: Path) -> None:
    import mlflow

    skill = _skill(tmp_path)
    register_evolved(skill, skill.with_body("Evolved.\n"), "run-1", "verifier", "improved", 0.1)
    mlflow.MlflowClient().delete_prompt_version(prompt_name(skill.name), "1")
    with pytest.raises(PromptRegistryError, match="no version 1 .*delete prompt 'skill-bracy'"):
        register_baseline(skill)


def test_versions_command_reports_an_unreachable_store_at_once(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"http://127.0.0.1:{port}")
    result = CliRunner().invoke(versions_command, ["--skill", "arxiv"])
    assert result.exit_code == 2
    assert f"http://127.0.0.1:{port} cannot be used" in result.output and "MLFLOW_TRACKING_URI" in result.output


def test_verified_alias_moves_only_on_improved_from_a_real_model_and_identical_text_is_reused(
        mlflow_store: str, tmp_path: Path) -> None:
    import mlflow

    from harness.tracking.prompts import trusted

    skill = _skill(tmp_path)
    client = mlflow.MlflowClient()
    first = skill.with_body("First evolution.\n")
    second = skill.with_body("Second evolution.\n")
    # an improved verdict from an offline test model: a version, tagged, but not verified
    assert register_evolved(skill, first, "run-test", "verifier", "improved", 0.5, task_model="test/lessons",
                            dataset_digest="abc123") == 2
    tags = client.get_prompt_version("skill-bracy", 2).tags
    assert (tags["task_model"], tags["dataset_digest"], tags["verdict"]) == ("test/lessons", "abc123", "improved")
    # the version page shows the first three tags: the verdict, the model it was measured with and the delta
    assert list(tags)[:3] == ["verdict", "task_model", "holdout_delta"]
    assert list(client.get_prompt_version("skill-bracy", 1).tags)[0] == "verdict"
    assert "verified" not in skill_versions("bracy")["aliases"][1]
    # a real model, inconclusive: @evolved moves, @verified does not exist yet
    assert register_evolved(skill, second, "run-real-1", "verifier", "inconclusive", -0.1,
                            task_model="openai/gpt-4o-mini", dataset_digest="abc123") == 3
    assert "verified" not in ",".join(skill_versions("bracy")["aliases"])
    # the identical text of version 2 again, improved by a real model: no new version; the run is recorded on it
    # and @verified moves there
    assert register_evolved(skill, first, "run-real-2", "verifier", "improved", 0.25,
                            task_model="openai/gpt-4o-mini", dataset_digest="abc123") == 2
    frame = skill_versions("bracy")
    assert list(frame["version"]) == [1, 2, 3]
    assert dict(zip(frame["version"], frame["aliases"], strict=True)) == {1: "baseline", 2: "verified", 3: "evolved"}
    note = client.get_prompt_version("skill-bracy", 2).tags["run.run-real-2"]
    assert note.startswith("improved · openai/gpt-4o-mini · verifier")
    assert trusted("improved", "openai/gpt-4o-mini") and not trusted("improved", "test/oracle")
    assert not trusted("inconclusive", "openai/gpt-4o-mini") and not trusted("improved", "")
