"""The models layer's error."""

from __future__ import annotations


class ModelError(RuntimeError):
    """A model cannot be constructed or reached (message names the model and the fix)."""
