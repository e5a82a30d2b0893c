"""Where a skill's task file is: an explicit path first, then the skill's own ``evals/`` folder.

Order (issue 14): ``--tasks PATH`` (the MLproject parameter ``tasks``) when given, and then it must
exist; else ``<skill folder>/evals/tasks.jsonl``; else ``<skill folder>/evals/evals.json`` (the Agent
Skills layout); else ``None``, and the caller falls back to a registered verifier.  A file beside the
skill never overrides an explicit path.
"""

from __future__ import annotations

from pathlib import Path

from verifiers.taskfile.errors import TaskFileError

#: Files looked for inside ``<skill folder>/``, in order.
SKILL_TASK_FILES: tuple[str, ...] = ("evals/tasks.jsonl", "evals/evals.json")


def find_task_file(skill_dir: str | Path | None, explicit: str | Path | None = None) -> Path | None:
    """The task file to use for the skill in ``skill_dir`` (the folder holding its SKILL.md).

    Args:
        skill_dir: the skill's folder, or ``None`` when only ``explicit`` can apply.
        explicit: the ``--tasks`` value; ``None`` or ``""`` means not given.

    Returns:
        ``explicit`` when given; else the first of ``SKILL_TASK_FILES`` that exists in ``skill_dir``; else
        ``None``.

    Raises:
        TaskFileError: ``explicit`` is given but is not an existing file.
    """
    if explicit is not None and str(explicit) != "":
        path = Path(explicit).expanduser()
        if not path.is_file():
            problem = "is a folder" if path.is_dir() else "does not exist"
            raise TaskFileError(f"{path}: the task file given with --tasks {problem}; pass the path of a "
                                f"JSONL, YAML or evals.json task file")
        return path
    if skill_dir is None:
        return None
    for name in SKILL_TASK_FILES:
        candidate = Path(skill_dir) / name
        if candidate.is_file():
            return candidate
    return None
