"""Where a run's tasks come from: a task file (explicit, or beside the skill) or a registered verifier.

Order (issue 14; README "Evolve your own skill"): ``--tasks PATH`` when given; else the skill folder's
``evals/tasks.jsonl``, then ``evals/evals.json``; else the verifier registered for the skill's name.  A task
file beside the skill wins over a registered verifier, never over an explicit ``--tasks``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.config import DEFAULT_MAX_TOKENS
from verifiers import UnknownVerifierError, Verifier, available_verifiers, get_verifier, has_verifier
from verifiers.taskfile import verifier_for_skill

#: ``TaskSource.kind`` values
TASKS_FILE, REGISTERED = "tasks-file", "registered-verifier"


@dataclass(frozen=True)
class TaskSource:
    """The verifier a run's tasks and objective grades come from, and where it came from.

    Attributes:
        verifier: a :class:`~verifiers.taskfile.TaskFileVerifier` or the registered verifier.
        kind: ``"tasks-file"`` or ``"registered-verifier"``.
        path: the task file (None for a registered verifier).
        sha256: hex SHA-256 of the task file's bytes (``""`` for a registered verifier).
        format: the task file's format (``harness``, ``agent-skills``, ``hermes``; ``""`` for a registered one).
    """

    verifier: Verifier
    kind: str
    path: Path | None = None
    sha256: str = ""
    format: str = ""

    @property
    def all_checked(self) -> bool:
        """Whether every task can be graded objectively (always, for a registered verifier)."""
        return getattr(self.verifier, "all_checked", True)

    def describe(self) -> str:
        """One line for the console: ``task file <path> (<format>, sha256 <12 hex>)`` or ``verifier <name>``."""
        if self.kind == TASKS_FILE:
            return f"task file {self.path} ({self.format}, sha256 {self.sha256[:12]})"
        return f"registered verifier {self.verifier.name}"

    def params(self) -> dict[str, str]:
        """The run params ``tasks_source``, ``tasks_path`` (absolute), ``tasks_sha256``, ``tasks_format``."""
        return {"tasks_source": self.kind, "tasks_path": str(self.path.resolve()) if self.path else "",
                "tasks_sha256": self.sha256, "tasks_format": self.format}

    def dataset_source(self) -> str | None:
        """What the MLflow dataset inputs name as their source: the task file's absolute path, or None."""
        return str(self.path.resolve()) if self.path is not None else None


def registered_verifier(skill_name: str, sandbox: str | None = None) -> Verifier:
    """The verifier registered for ``skill_name``; one that runs answers' code (has ``sandbox_kind``) is built
    with ``sandbox`` as its mode when given.

    Raises:
        UnknownVerifierError: none is registered (naming the registered ones and the task-file way out).
        verifiers.pybugfix.SandboxUnavailableError: ``sandbox="required"`` and bubblewrap cannot start.
    """
    if not has_verifier(skill_name):
        raise UnknownVerifierError(
            f"no dataset for skill {skill_name!r}: no --tasks file was given, the skill folder has no "
            f"evals/tasks.jsonl or evals/evals.json, and no verifier is registered for it (registered: "
            f"{', '.join(available_verifiers())}); write a task file (README: Evolve your own skill) or "
            f"register a verifier with @register_verifier({skill_name!r})")
    verifier = get_verifier(skill_name)
    # a class attribute check: reading the property would probe bubblewrap
    if sandbox is not None and hasattr(type(verifier), "sandbox_kind"):
        verifier = get_verifier(skill_name, sandbox=sandbox)
    return verifier


def resolve_source(skill_name: str, skill_dir: Path | None, tasks: str = "", sandbox: str | None = None) -> \
        TaskSource:
    """The task source of a run (order in the module docstring).

    Args:
        skill_name: the skill's name (the registered verifier's key).
        skill_dir: the folder holding its SKILL.md.
        tasks: the ``--tasks`` value (``""`` = not given).
        sandbox: the sandbox mode for a registered verifier that runs code (``None`` = its own default).

    Raises:
        verifiers.taskfile.TaskFileError: ``--tasks`` is not a file, or the task file does not load.
        UnknownVerifierError, SandboxUnavailableError: as :func:`registered_verifier`.
    """
    found = verifier_for_skill(skill_dir, tasks or None)
    if found is not None:
        taskfile = found.taskfile
        return TaskSource(found, TASKS_FILE, taskfile.path, taskfile.sha256, taskfile.format)
    return TaskSource(registered_verifier(skill_name, sandbox), REGISTERED)


def task_max_tokens(requested: int, verifier: Verifier) -> int:
    """The task LM's completion cap: ``requested`` when set (> 0); else ``DEFAULT_MAX_TOKENS`` raised to the
    verifier's ``min_max_tokens`` attribute when it declares one (python-bugfix: a whole fixed function)."""
    if requested > 0:
        return requested
    return max(DEFAULT_MAX_TOKENS, int(getattr(verifier, "min_max_tokens", 0) or 0))


__all__ = ["REGISTERED", "TASKS_FILE", "TaskSource", "registered_verifier", "resolve_source", "task_max_tokens"]
