"""The options shared by ``evolve`` and ``compare`` (each maps 1:1 to an MLproject parameter), the config they
make, the checks that need no run, and the dry run's plan."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from harness.cli.common import WHOLE, UsageError, check_output_dir
from harness.config import (
    DEFAULT_BUDGET,
    OPTIMIZER_CHOICES,
    PROPOSER_CHOICES,
    SANDBOX_CHOICES,
    ConfigError,
    EvolveConfig,
)

if TYPE_CHECKING:
    from harness.engine.sources import TaskSource


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
            "tasks",
            click.option(
                "--tasks",
                default="",
                help="Task file (JSONL/YAML, Agent Skills evals.json, Hermes JSONL); empty = the skill's "
                "evals/tasks.jsonl or evals/evals.json, else its registered verifier.",
            ),
        ),
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
                "--max-tokens",
                type=WHOLE,
                default=0,
                show_default=True,
                help="Completion cap of the task LM; 0 = 128, or the verifier's recommended minimum "
                "(python-bugfix: 384).",
            ),
        ),
        (
            "sandbox",
            click.option(
                "--sandbox",
                type=click.Choice(SANDBOX_CHOICES),
                default="auto",
                show_default=True,
                envvar="HARNESS_SANDBOX",
                help="For verifiers that run answers' code (python-bugfix): auto = bubblewrap, else resource "
                "limits; required = bubblewrap or an error; limits = never bubblewrap.",
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
        (
            "control",
            click.option(
                "--control",
                type=click.BOOL,
                default=True,
                show_default=True,
                help="Also answer the holdout with no skill (neutral instruction), graded and tested like the "
                "skill variants; once per experiment.",
            ),
        ),
        ("no_control", click.option("--no-control", is_flag=True, help="Same as --control false.")),
        ("quiet", click.option("--quiet", is_flag=True, help="Print only the summary and warnings.")),
    ]

    def decorate(func: Any) -> Any:
        for name, option in reversed(options):
            if name not in exclude:
                func = option(func)
        return func

    return decorate


def make_config(num_cases: int, options: dict[str, Any]) -> EvolveConfig:
    options = dict(options)
    control, no_control = bool(options.pop("control", True)), bool(options.pop("no_control", False))
    options["control"] = control and not no_control
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


def preflight(config: EvolveConfig) -> TaskSource:
    """Checks that need no run: the skill, its task source, the fitness, the dataset size and (``--sandbox
    required``) bubblewrap; returns the task source (errors before a run exists)."""
    from harness.engine.registry import resolve_fitness
    from harness.engine.sources import resolve_source
    from harness.skills.files import find_skill

    skill = find_skill(config.skill, Path(config.skills_dir) if config.skills_dir else None)
    source = resolve_source(skill.name, skill.path.parent, config.tasks, config.sandbox)
    resolve_fitness(config.fitness, source)
    pool = len(source.verifier.tasks())
    if config.num_cases is not None and config.num_cases > pool:
        from verifiers import DatasetError

        raise DatasetError(
            f"num_cases={config.num_cases} is above the {pool} tasks of the {source.describe()}; "
            f"pass 3..{pool}, or 0 for all"
        )
    return source


def with_task_max_tokens(config: EvolveConfig, source: TaskSource) -> EvolveConfig:
    """``config`` with ``max_tokens`` resolved (:func:`harness.engine.sources.task_max_tokens`), so the run,
    its params and its child processes all see the cap actually used."""
    from dataclasses import replace

    from harness.engine.sources import task_max_tokens

    return replace(config, max_tokens=task_max_tokens(config.max_tokens, source.verifier))
