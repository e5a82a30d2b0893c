"""Settings of one evolution run, checked before anything runs, and every choice list (standard library only).

This module sits below every other module of the harness: the CLI reads its choices without importing DSPy,
pandas or MLflow, and the engine, the models and the CLI share one spelling of each name.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

#: fitness signals a run can optimise with (``auto``: verifier when the skill has one, else keyword)
FITNESS_CHOICES: tuple[str, ...] = ("keyword", "judge", "verifier", "auto")
#: graders every holdout can be graded by, in table order
GRADER_NAMES: tuple[str, ...] = ("verifier", "keyword", "judge")
#: DSPy optimizers behind ``--optimizer``
OPTIMIZER_CHOICES: tuple[str, ...] = ("gepa", "miprov2")
#: sandbox modes of verifiers that run answers' code (python-bugfix): ``auto`` falls back to resource limits
#: when bubblewrap cannot start, ``required`` makes that an error, ``limits`` never tries bubblewrap
SANDBOX_CHOICES: tuple[str, ...] = ("auto", "required", "limits")
#: the task LM's completion cap when ``max_tokens`` is 0 and the verifier recommends no larger one
DEFAULT_MAX_TOKENS = 128
#: instruction proposers of GEPA (``auto``: ``llm`` with a reflection model, else ``feedback``)
PROPOSER_CHOICES: tuple[str, ...] = ("auto", "llm", "feedback")
#: what ``harness ab`` answers: the holdout split, or every task of the dataset
AB_SPLIT_CHOICES: tuple[str, ...] = ("holdout", "all")
#: model strings of the deterministic offline test LMs start with this (see :mod:`harness.models.testing`)
TEST_PREFIX = "test/"
#: heading of the section the feedback proposer maintains at the end of the skill body
LESSONS_HEADING = "## Lessons from graded answers"
#: delimiters of the graded task and output inside a judge prompt (the judge writes them, the test judge reads them)
JUDGE_TASK_TAGS: tuple[str, str] = ("<task>", "</task>")
JUDGE_OUTPUT_TAGS: tuple[str, str] = ("<output>", "</output>")
#: llama.cpp GBNF grammar of the judge's terse reply, ``<correctness> <procedure> <conciseness> <feedback words>``
#: (the format harness.engine.judge asks for and parses): the embedded judge decodes under it, so every reply parses
#: (unconstrained, the 135M model's replies parsed in 0 of 112 fitness grades of a side-by-side run; issue 18)
JUDGE_REPLY_GRAMMAR = r"""
root  ::= score " " score " " score " " words
score ::= "0" | "1" | "0." [0-9]
words ::= [a-zA-Z] [a-zA-Z0-9 ,;:'()-]*
"""

#: environment defaults for an offline-safe process (a user's own setting wins):
#: LiteLLM fetches its model cost map from the network at import time unless told to use the copy it ships,
#: and MLflow sends usage telemetry to its own host unless told not to; a run on the embedded model must make
#: no network connection at all.
ENVIRONMENT_DEFAULTS: dict[str, str] = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "MLFLOW_DISABLE_TELEMETRY": "true"}


def apply_environment_defaults() -> None:
    """Set each of :data:`ENVIRONMENT_DEFAULTS` that the environment does not set yet.

    Called by the CLI before it imports DSPy or MLflow (library users call it themselves, first).
    """
    for key, value in ENVIRONMENT_DEFAULTS.items():
        os.environ.setdefault(key, value)


def ensure_writable_folder(path: str | os.PathLike[str]) -> Path:
    """Create ``path`` (and its parents) when missing and prove it writable by creating a uniquely named
    temporary file in it (processes may share the folder); returns the absolute, resolved path.

    Raises:
        OSError: the folder cannot be created or written (``strerror`` says why).
    """
    folder = Path(path).expanduser().resolve()
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=folder, prefix=".harness-write-probe-"):
        pass
    return folder


def resolve_proposer(proposer: str, reflection_model: str | None) -> str:
    """``auto`` -> ``llm`` when a reflection model is configured, else ``feedback``.

    Raises:
        ValueError: an unknown proposer, or ``llm`` without a reflection model.
    """
    if proposer not in PROPOSER_CHOICES:
        raise ValueError(f"unknown proposer {proposer!r}; choose one of {', '.join(PROPOSER_CHOICES)}")
    if proposer == "auto":
        return "llm" if reflection_model else "feedback"
    if proposer == "llm" and not reflection_model:
        raise ValueError("proposer=llm needs a reflection model: pass --reflection-model (e.g. 'embedded')")
    return proposer

#: default GEPA budget (metric calls): sized so the README's first command ends in under 10 minutes on
#: 2 cores with the embedded model (see README, "What the first command does")
DEFAULT_BUDGET = 60


#: longest MLflow experiment name (MLflow's SQL stores hold 500 characters; a longer one fails mid-run)
MAX_EXPERIMENT_CHARS = 500


class ConfigError(ValueError):
    """A setting is invalid; the message names the setting, the value and what to pass instead."""


@dataclass(frozen=True)
class EvolveConfig:
    """Every option of ``harness evolve`` (each maps 1:1 to an MLproject parameter).

    Attributes:
        skill: skill name (folder name or frontmatter ``name``).
        fitness: keyword | judge | verifier | auto.
        optimizer: gepa.
        budget: GEPA ``max_metric_calls`` (>= 1).
        num_cases: tasks in the dataset (None = the verifier's whole pool).
        seed: seed for the dataset split, GEPA and the LMs.
        task_model / reflection_model: DSPy/LiteLLM model strings or ``embedded``; an empty
            reflection model means none (then ``proposer=auto`` picks the offline ``feedback`` proposer).
        judge_model: the LLM judge's model (fitness=judge, and the judge column of side-by-side experiments).
        api_base: OpenAI-compatible endpoint for non-embedded models.
        skills_dir: where to look for skills first (else $HERMES_AGENT_REPO/skills, then bundled).
        proposer: auto | llm | feedback.
        num_threads: worker threads for evaluation.
        max_tokens: completion cap of the task LM; 0 = automatic (``DEFAULT_MAX_TOKENS``, raised to the verifier's
            ``min_max_tokens`` when it declares one, see :func:`harness.engine.sources.task_max_tokens`).
        tasks: a task file to take the tasks from (empty = the skill's ``evals/`` file, else its verifier).
        sandbox: auto | required | limits, for verifiers that run answers' code (python-bugfix).
        output_dir: local folder for the run's files (dataset, evolved skill, tables); empty = temporary.
        experiment: MLflow experiment for runs not started by ``mlflow run`` (empty = ``skills/<skill>``).
        alpha: significance level of the paired tests behind the verdict.
        cache_dir: DSPy's response cache folder (empty = ``$DSPY_CACHEDIR`` or ``~/.dspy_cache``); a rerun with
            the same models and seed is answered from it.
        control: also answer the holdout with no skill (the ``none`` variant), once per experiment.
    """

    skill: str = "arxiv"
    fitness: str = "verifier"
    optimizer: str = "gepa"
    budget: int = DEFAULT_BUDGET
    num_cases: int | None = None
    seed: int = 0
    task_model: str = "embedded"
    reflection_model: str = ""
    judge_model: str = "embedded"
    api_base: str = ""
    skills_dir: str = ""
    proposer: str = "auto"
    num_threads: int = 1
    max_tokens: int = 0
    output_dir: str = ""
    experiment: str = ""
    alpha: float = 0.05
    cache_dir: str = ""
    dry_run: bool = False
    tasks: str = ""
    sandbox: str = "auto"
    control: bool = True

    def __post_init__(self) -> None:
        checks = [
            (self.fitness in FITNESS_CHOICES, "fitness", self.fitness, f"one of {', '.join(FITNESS_CHOICES)}"),
            (self.optimizer in OPTIMIZER_CHOICES, "optimizer", self.optimizer,
             f"one of {', '.join(OPTIMIZER_CHOICES)}"),
            (self.proposer in PROPOSER_CHOICES, "proposer", self.proposer, f"one of {', '.join(PROPOSER_CHOICES)}"),
            (self.budget >= 1, "budget", self.budget, "a number of metric calls of at least 1"),
            (self.num_cases is None or self.num_cases >= 3, "num_cases", self.num_cases, "at least 3 (or 0 for all)"),
            (self.num_threads >= 1, "num_threads", self.num_threads, "at least 1"),
            (self.max_tokens >= 0, "max_tokens", self.max_tokens, "at least 1 (or 0 for automatic)"),
            (self.sandbox in SANDBOX_CHOICES, "sandbox", self.sandbox, f"one of {', '.join(SANDBOX_CHOICES)}"),
            (0.0 < self.alpha < 0.5, "alpha", self.alpha, "a significance level between 0 and 0.5"),
            (bool(self.task_model.strip()), "task_model", self.task_model, "a model string or 'embedded'"),
            (len(self.experiment_name()) <= MAX_EXPERIMENT_CHARS, "experiment", self.experiment_name()[:40] + "…",
             f"an MLflow experiment name of at most {MAX_EXPERIMENT_CHARS} characters"),
        ]
        for ok, name, value, expected in checks:
            if not ok:
                raise ConfigError(f"invalid {name}={value!r}: expected {expected}")
        try:
            self.resolved_proposer()
        except ValueError as exc:
            raise ConfigError(str(exc)) from None

    def resolved_proposer(self) -> str:
        """``auto`` resolved against the reflection model (see :func:`resolve_proposer`)."""
        return resolve_proposer(self.proposer, self.reflection_model.strip() or None)

    def experiment_name(self) -> str:
        """MLflow experiment for this run: ``experiment`` or ``skills/<skill>``."""
        return self.experiment or f"skills/{self.skill}"
