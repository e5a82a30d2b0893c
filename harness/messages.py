"""Exception text for one-line messages (CLI errors, skip notes)."""

from __future__ import annotations


def first_line(exc: BaseException, limit: int | None = None) -> str:
    """The first line of ``str(exc)`` (stripped), or the exception's type name when the message is empty;
    at most ``limit`` characters when given (cut, no marker)."""
    lines = str(exc).strip().splitlines()
    text = lines[0] if lines else type(exc).__name__
    return text if limit is None else text[:limit]
