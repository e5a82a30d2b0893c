"""Temporarily setting environment variables (MLflow reads several of its settings from them per call)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping


@contextlib.contextmanager
def temporary_env(values: Mapping[str, str | None]) -> Iterator[None]:
    """Set (str) or unset (None) environment variables for the block, then restore them exactly."""
    saved = {key: os.environ.get(key) for key in values}
    try:
        _apply(values)
        yield
    finally:
        _apply(saved)


def _apply(values: Mapping[str, str | None]) -> None:
    """Set each variable to its str value; unset those mapped to None."""
    for key, value in values.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
