"""The ``harness`` command line: one click command per verb.

Domain errors become one-line ``click`` errors with exit code 2 here and nowhere else; the library
raises.  During a run SIGTERM is turned into :class:`Terminated` (a ``KeyboardInterrupt``) so an interrupted run
ends as KILLED in MLflow; the exit code is 130 after Ctrl-C and 143 after SIGTERM.
"""

from __future__ import annotations

import os
import signal
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from types import FrameType
from typing import Any

import click

from harness.config import DEFAULT_BUDGET, ConfigError, EvolveConfig
from harness.fitness import FITNESS_CHOICES
from harness.optimize import OPTIMIZER_CHOICES
from harness.proposers import PROPOSER_CHOICES


class UsageError(click.ClickException):
    """A user-fixable error: printed as one line, exit code 2."""

    exit_code = 2

    def format_message(self) -> str:
        return self.message

    def show(self, file: Any = None) -> None:
        click.echo(f"Error: {self.format_message()}", err=True)


def _user_errors() -> tuple[type[BaseException], ...]:
    from harness.lm import ModelError
    from harness.skills import SkillError
    from harness.tracking import TrackingError
    from verifiers import DatasetError, UnknownVerifierError

    return (ConfigError, SkillError, DatasetError, UnknownVerifierError, ModelError, TrackingError)


class WholeNumber(click.ParamType):
    """An integer that also accepts MLflow's float spelling of one (``60.0``): MLproject has no int type."""

    name = "integer"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        try:
            number = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a whole number", param, ctx)
        if not number.is_integer():
            self.fail(f"{value!r} is not a whole number", param, ctx)
        return int(number)


WHOLE = WholeNumber()


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the program is, so a run ends as KILLED exactly as on Ctrl-C (exit code 143)."""


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated(f"received signal {signal.Signals(signum).name}")


def _check_output_dir(path: str) -> None:
    if not path:
        return
    target = Path(path)
    try:
        target.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=target):
            pass
    except OSError as exc:
        raise UsageError(f"output folder {path} is not writable ({exc.strerror}); pass another --output-dir") from None


class OneLineErrors(click.Group):
    """A click group whose usage errors are one line (``Error: ...``) with exit code 2, no usage dump."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["standalone_mode"] = False
        try:
            rv = super().main(*args, **kwargs)
        except click.ClickException as exc:
            click.echo(f"Error: {exc.format_message()}", err=True)
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo("Aborted.", err=True)
            sys.exit(130)
        sys.exit(rv if isinstance(rv, int) else 0)


@click.group(cls=OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="skill-evolution-harness")
def main() -> None:
    """Evolve SKILL.md files with DSPy optimizers and grade them objectively, tracked in MLflow."""


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


def _make_config(num_cases: int, options: dict[str, Any]) -> EvolveConfig:
    try:
        config = EvolveConfig(num_cases=num_cases or None, **options)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    _check_output_dir(config.output_dir)
    return config


def _which_runs(exc: BaseException) -> str:
    """``the MLflow run <id>`` (``... <child> (parent <id>)`` for a child run) of the runs ``exc`` ended;
    ``""`` when it ended none."""
    from harness.tracking import ended_runs

    ids = ended_runs(exc)
    if not ids:
        return ""
    return f"the MLflow run {ids[0]}" + (f" (parent {', '.join(ids[1:])})" if len(ids) > 1 else "")


def _guarded(work: Any, cache_dir: str | None = None) -> None:
    """Run ``work()`` with user errors as one-line exit-2 errors and SIGTERM/Ctrl-C as an interrupt.

    ``cache_dir`` (when not None) turns DSPy's cache on there first; the resolved folder goes into
    ``DSPY_CACHEDIR`` so child processes share it and the run records it.
    """
    from harness.lm import configure_cache

    errors = _user_errors()
    previous_handler = signal.signal(signal.SIGTERM, _raise_terminated)
    _quiet_library_logs()
    try:
        if cache_dir is not None:
            os.environ["DSPY_CACHEDIR"] = str(configure_cache(cache_dir))
        work()
    except errors as exc:
        raise UsageError(str(exc)) from None
    except KeyboardInterrupt as exc:
        runs = _which_runs(exc)
        click.echo(f"interrupted: {runs} ended as KILLED with what it had logged" if runs
                   else "interrupted before an MLflow run was started", err=True)
        sys.exit(128 + signal.SIGTERM if isinstance(exc, Terminated) else 130)  # the shell's codes for the signals
    except Exception as exc:  # a fault inside the run: the run is FAILED and keeps the traceback as error.txt
        message = " ".join(str(exc).split())[:400] or type(exc).__name__
        runs = _which_runs(exc)
        where = (f"{runs} is marked FAILED; the full traceback is its error.txt artifact" if runs
                 else "no MLflow run was started; HARNESS_TRACEBACK=1 shows the traceback")
        click.echo(f"Error: the run failed: {type(exc).__name__}: {message} ({where})", err=True)
        if os.environ.get("HARNESS_TRACEBACK"):
            raise
        sys.exit(1)
    finally:  # after the run, SIGTERM is plain termination again (no KeyboardInterrupt during shutdown)
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous_handler is None else previous_handler)


@main.command()
@run_options(
    "verifier",
    "Fitness that drives the optimizer: keyword, judge, verifier, auto, or 'all' / a comma "
    "list for a side-by-side experiment.",
)
def evolve(quiet: bool, num_cases: int, fitness: str, **options: Any) -> None:
    """Evolve one skill and log the run to MLflow (several fitness signals: a side-by-side experiment)."""
    if fitness == "all" or "," in fitness:
        _run_compare(quiet, num_cases, fitness, options.get("optimizer", "gepa"), 1, options)
        return
    if fitness not in FITNESS_CHOICES:
        raise UsageError(f"invalid fitness={fitness!r}: expected one of {', '.join(FITNESS_CHOICES)}, or 'all'")
    config = _make_config(num_cases, {**options, "fitness": fitness})

    def work() -> None:
        from harness.console import Reporter
        from harness.run import evolve as run_evolve
        from harness.summary import summarize_run
        from harness.tracking import MlflowTracker, check_tracking_store

        _preflight(config)
        if config.dry_run:
            _print_plan(config, [config.fitness])
            return
        check_tracking_store()
        reporter = Reporter(quiet=quiet)
        with reporter.library_output(), \
                MlflowTracker(config.experiment_name(), run_name=f"{config.skill}-{config.fitness}") as tracker:
            result = run_evolve(config, tracker, reporter)
        summarize_run(result, reporter)

    _guarded(work, config.cache_dir)


@main.command()
@run_options(
    "all", "Fitness signals to compare: 'all' (keyword, judge, verifier) or a comma list.", exclude=("optimizer",)
)
@click.option("--optimizers", default="gepa", show_default=True, help="Comma list of optimizers to compare.")
@click.option(
    "--seeds",
    type=WHOLE,
    default=1,
    show_default=True,
    help="Repeat each optimisation with this many seeds (child runs) on the same splits.",
)
@click.option(
    "--parallel",
    type=WHOLE,
    default=1,
    show_default=True,
    help="Child runs at once, each in its own process (1 = one after another in this process).",
)
def compare(
    quiet: bool, num_cases: int, fitness: str, optimizers: str, seeds: int, parallel: int, **options: Any
) -> None:
    """Side-by-side: one parent run, one child per fitness × optimizer × seed, every child cross-graded."""
    _run_compare(quiet, num_cases, fitness, optimizers, seeds, options, parallel)


@main.command(hidden=True)
@click.argument("spec", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def child(spec: Path) -> None:
    """Run one child of a side-by-side experiment from the parent's spec file (internal)."""
    from harness.compare import run_child
    from harness.console import Reporter

    _guarded(lambda: run_child(spec, Reporter(quiet=True)), cache_dir="")


def _run_compare(
    quiet: bool, num_cases: int, fitness: str, optimizers: str, seeds: int, options: dict[str, Any], parallel: int = 1
) -> None:
    from harness.compare import ALL_FITNESS, parse_list

    try:
        fitnesses = parse_list(fitness, FITNESS_CHOICES, "fitness", ALL_FITNESS)
        optimizer_list = parse_list(optimizers, OPTIMIZER_CHOICES, "optimizers", OPTIMIZER_CHOICES)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    options = {**options, "optimizer": optimizer_list[0]}  # children set their own
    config = _make_config(num_cases, {**options, "fitness": fitnesses[0]})

    def work() -> None:
        from harness.compare import compare as run_compare
        from harness.compare import plan_arms
        from harness.console import Reporter
        from harness.summary import summarize_compare
        from harness.tracking import MlflowTracker, check_tracking_store

        for f in fitnesses:
            _preflight(replace(config, fitness=f))
        plan_arms(fitnesses, optimizer_list, seeds, config.seed, config.skill)
        if config.dry_run:
            _print_plan(config, fitnesses, optimizer_list, seeds)
            return
        check_tracking_store()
        reporter = Reporter(quiet=quiet)
        with reporter.library_output(), \
                MlflowTracker(config.experiment_name(), run_name=f"{config.skill}-side-by-side") as parent:
            results = run_compare(config, fitnesses, optimizer_list, seeds, parent, reporter, parallel=parallel)
        summarize_compare(parent.run_id, results, reporter)

    _guarded(work, config.cache_dir)


def _print_plan(
    config: EvolveConfig, fitnesses: list[str], optimizers: list[str] | None = None, seeds: int = 1
) -> None:
    """The dry run: every check of a real run, then the plan; no MLflow run is created."""
    from harness.console import Reporter
    from harness.dryrun import plan

    result = plan(config, fitnesses, optimizers or [config.optimizer], seeds)
    Reporter().summary(
        "dry run: what this run would do", result.rows, {"dry run": "all checks passed; no MLflow run was created"}
    )


def _quiet_library_logs() -> None:
    """DSPy logs every proposed instruction text at INFO; the console shows our own progress instead."""
    import logging

    for name in ("dspy", "gepa", "LiteLLM", "httpx"):
        logging.getLogger(name).setLevel(logging.WARNING)


def _preflight(config: EvolveConfig) -> None:
    """Checks that need no run: the skill, the fitness and the dataset size (errors before a run exists)."""
    from harness.run import dataset_verifier, resolve_fitness
    from harness.skills import find_skill

    skill = find_skill(config.skill, Path(config.skills_dir) if config.skills_dir else None)
    resolve_fitness(config.fitness, skill.name)
    pool = len(dataset_verifier(skill.name).tasks())
    if config.num_cases is not None and config.num_cases > pool:
        from verifiers import DatasetError

        raise DatasetError(
            f"num_cases={config.num_cases} is above the {pool} tasks the {skill.name} verifier has; "
            f"pass 3..{pool}, or 0 for all"
        )


def _register_commands() -> None:
    """Commands that live in their own modules (imported here, at the CLI boundary only)."""
    from harness.export import export_command
    from harness.prompts import versions_command

    main.add_command(export_command)
    main.add_command(versions_command)


_register_commands()

if __name__ == "__main__":  # pragma: no cover
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
