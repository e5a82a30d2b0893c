"""Test helpers that used to live in the package only for the tests' sake."""

from __future__ import annotations

from harness.engine.judge import JudgeGrader
from harness.models.lm import ModelSpec, build_lm
from verifiers.arxiv import ArxivVerifier
from verifiers.base import Grade

#: The arXiv verifier the arXiv grading tests share, and its tasks by ``task_id``.
ARXIV = ArxivVerifier()
ARXIV_TASKS = {task.task_id: task for task in ARXIV.tasks()}


def grade_arxiv(task_id: str, output: str) -> Grade:
    """``output`` graded as the answer to the arXiv task ``task_id`` (e.g. ``"1301.3781/id"``)."""
    return ARXIV.score(ARXIV_TASKS[task_id].question, output)


def assert_gives_up(form: str, paper: object, other: object, kind: str) -> None:
    """``form`` (with ``{w}``, the given-up answer, and ``{r}``, the one kept) answers ``{r}``: correct when it
    keeps ``paper``'s value of ``kind`` ("id", "year" or "title", a title quoted) and gives up ``other``'s, wrong
    the other way round.  Same values (a paper drawn twice): nothing to check."""
    def value(p: object) -> str:
        return {"id": p.arxiv_id, "year": str(p.year), "title": f'"{p.title}"'}[kind]  # type: ignore[attr-defined]
    right, wrong = value(paper), value(other)
    if right == wrong:
        return
    task_id = f"{paper.arxiv_id}/{kind}"  # type: ignore[attr-defined]
    assert grade_arxiv(task_id, form.format(w=wrong, r=right)).correctness == 1.0, form
    assert grade_arxiv(task_id, form.format(w=right, r=wrong)).correctness == 0.0, form


def build_judge(skill_text: str, judge_model: str = "embedded", *, api_base: str | None = None, seed: int = 0,
                max_tokens: int = 256, cache: bool = True) -> JudgeGrader:
    """A :class:`JudgeGrader` on ``judge_model`` (a test LM such as ``test/judge`` in these tests)."""
    spec = ModelSpec(judge_model, api_base=api_base or None, temperature=0.0, max_tokens=max_tokens, seed=seed,
                     cache=cache)
    return JudgeGrader(build_lm(spec), skill_text)


def load_version(skill_name: str, version: int | str) -> str:
    """The SKILL.md text of one registered version of a skill (a number, or an alias such as ``"evolved"``),
    read with MLflow's own client.

    Raises:
        PromptRegistryError: no such prompt or version.
    """
    import mlflow
    from mlflow.exceptions import MlflowException

    from harness.tracking.prompts import PromptRegistryError, prompt_name

    name = prompt_name(skill_name)
    client = mlflow.MlflowClient()
    try:
        if isinstance(version, str) and not version.isdigit():
            found = client.get_prompt_version_by_alias(name, version)
        else:
            found = client.get_prompt_version(name, int(version))
    except MlflowException:
        found = None
    if found is None:
        raise PromptRegistryError(f"prompt {name!r} has no version {version!r}")
    return str(found.template)
