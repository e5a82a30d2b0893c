"""The options shared by ``evolve`` and ``compare`` (each maps 1:1 to an MLproject parameter), the config they
make, the checks that need no run, and the dry run's plan."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from harness.cli.common import WHOLE, UsageError, check_output_dir
from harness.config import (
    DEFAULT_BUDGET,
    OPTIMIZER_CHOICES,
    PROPOSER_CHOICES,
    ConfigError,
    EvolveConfig,
)


def run_options(fitness_default: str, fitness_help: str, exclude: tuple[str, ...] = ()) -> Any:
    """The options shared by ``evolve`` and ``compare`` (each maps 1:1 to an MLproject parameter);
    ``exclude`` names options a command replaces with its own."""
    options: list[tuple[str, Any]] = [
        (
            "skill",
            click.option(
                "--skill", default="arxiv", show_default=True, help="Skill name (folder name or frontmatter name)."
            ),
        ),
        ("fitness", click.option("--fitness", default=fitness_default, show_default=True, help=fitness_help)),
        (
            "optimizer",
            click.option("--optimizer", type=click.Choice(OPTIMIZER_CHOICES), default="gepa", show_default=True),
        ),
        (
            "budget",
            click.option(
                "--budget", type=WHOLE, default=DEFAULT_BUDGET, show_default=True, help="GEPA max_metric_calls."
            ),
        ),
        (
            "num_cases",
            click.option(
                "--num-cases", type=WHOLE, default=0, show_default=True, help="Tasks in the dataset; 0 = all."
            ),
        ),
        ("seed", click.option("--seed", type=WHOLE, default=0, show_default=True)),
        (
            "task_model",
            click.option(
                "--task-model",
                default="embedded",
                show_default=True,
                help="DSPy/LiteLLM model string, or 'embedded' for the bundled SmolLM2-135M.",
            ),
        ),
        (
            "reflection_model",
            click.option(
                "--reflection-model", default="", help="Model for GEPA reflection; empty = none (feedback proposer)."
            ),
        ),
        (
            "judge_model",
            click.option(
                "--judge-model",
                default="embedded",
                show_default=True,
                help="Model of the LLM judge (fitness=judge; side-by-side experiments).",
            ),
        ),
        (
            "api_base",
            click.option("--api-base", default="", help="OpenAI-compatible endpoint (Ollama, vLLM, llama.cpp server)."),
        ),
        (
            "skills_dir",
            click.option(
                "--skills-dir",
                default="",
                help="Look for skills here first (then $HERMES_AGENT_REPO/skills, "
                "then the bundled experiments/skills).",
            ),
        ),
        (
            "proposer",
            click.option(
                "--proposer",
                type=click.Choice(PROPOSER_CHOICES),
                default="auto",
                show_default=True,
                help="llm = reflection model; feedback = deterministic offline proposer; auto picks.",
            ),
        ),
        (
            "num_threads",
            click.option("--num-threads", type=WHOLE, default=1, show_default=True, help="Evaluation threads."),
        ),
        (
            "max_tokens",
            click.option(
                "--max-tokens", type=WHOLE, default=128, show_default=True, help="Completion cap of the task LM."
            ),
        ),
        (
            "output_dir",
            click.option("--output-dir", default="", help="Also keep the run's files here (never the skills folder)."),
        ),
        (
            "experiment",
            click.option(
                "--experiment",
                default="",
                help="MLflow experiment (default skills/<skill>; ignored under "
                "'mlflow run', which picks the experiment itself).",
            ),
        ),
        (
            "alpha",
            click.option(
                "--alpha",
                type=float,
                default=0.05,
                show_default=True,
                help="Significance level of the paired tests behind the verdict.",
            ),
        ),
        (
            "cache_dir",
            click.option(
                "--cache-dir",
                default="",
                help="DSPy response cache folder (default $DSPY_CACHEDIR or "
                "~/.dspy_cache); reruns with the same models and seed make no new LM calls.",
            ),
        ),
        (
            "dry_run",
            click.option(
                "--dry-run",
                type=click.BOOL,
                is_flag=False,
                flag_value=True,
                default=False,
                help="Check the skill, dataset, models and store, print the plan, and exit without a run.",
            ),
        ),
        ("quiet", click.option("--quiet", is_flag=True, help="Print only the summary and warnings.")),
    ]

    def decorate(func: Any) -> Any:
        for name, option in reversed(options):
            if name not in exclude:
                func = option(func)
        return func

    return decorate


def make_config(num_cases: int, options: dict[str, Any]) -> EvolveConfig:
    try:
        config = EvolveConfig(num_cases=num_cases or None, **options)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    if config.output_dir:
        refuse_output_in_skills(config)  # before the folder is created
    check_output_dir(config.output_dir)
    return config


def refuse_output_in_skills(config: EvolveConfig) -> None:
    """``--output-dir`` inside the skill's folder or the named skills folder is a usage error (issue 20),
    checked before the folder is created.  A skill that cannot be found is left to :func:`preflight`."""
    from harness.skills.files import SkillError, check_output_outside, find_skill

    folders = [config.skills_dir] if config.skills_dir else []
    try:
        skill = find_skill(config.skill, Path(config.skills_dir) if config.skills_dir else None)
        folders.append(str(skill.path.parent))
    except SkillError:
        pass
    try:
        check_output_outside(config.output_dir, folders)
    except SkillError as exc:
        raise UsageError(str(exc)) from None



def print_plan(
    config: EvolveConfig, fitnesses: list[str], optimizers: list[str] | None = None, seeds: int = 1
) -> None:
    """The dry run: every check of a real run, then the plan; no MLflow run is created."""
    from harness.cli.console import Reporter
    from harness.dryrun import plan

    result = plan(config, fitnesses, optimizers or [config.optimizer], seeds)
    Reporter().summary(
        "dry run: what this run would do", result.rows, {"dry run": "all checks passed; no MLflow run was created"}
    )


def preflight(config: EvolveConfig) -> None:
    """Checks that need no run: the skill, the fitness and the dataset size (errors before a run exists)."""
    from harness.engine.registry import resolve_fitness
    from harness.engine.sources import dataset_verifier
    from harness.skills.files import find_skill

    skill = find_skill(config.skill, Path(config.skills_dir) if config.skills_dir else None)
    resolve_fitness(config.fitness, skill.name)
    pool = len(dataset_verifier(skill.name).tasks())
    if config.num_cases is not None and config.num_cases > pool:
        from verifiers import DatasetError

        raise DatasetError(
            f"num_cases={config.num_cases} is above the {pool} tasks the {skill.name} verifier has; "
            f"pass 3..{pool}, or 0 for all"
        )

