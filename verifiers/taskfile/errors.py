"""The one error a task file raises, with a message that names the place and the fix."""

from __future__ import annotations


class TaskFileError(ValueError):
    """A task file (or an answers file) cannot be read, parsed or used.

    The message names the file, then where in it (``line N`` for JSONL, ``eval id X`` for Agent Skills
    evals, ``task id X`` / ``row N`` otherwise) and the field, says what is wrong and how to fix it.
    """


def where(path: object, place: str | None = None, field: str | None = None) -> str:
    """``"<path>, <place>, field '<field>'"`` with the missing parts left out (the prefix of every message)."""
    parts = [str(path)]
    if place:
        parts.append(place)
    if field:
        parts.append(f"field {field!r}")
    return ", ".join(parts)
