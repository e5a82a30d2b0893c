"""Objective graders: verifiers that build checkable tasks and grade outputs in pure Python."""

from verifiers.base import (
    COMPOSITE_WEIGHTS,
    DatasetError,
    Grade,
    Splits,
    Task,
    Unscored,
    Verifier,
    composite_score,
)
from verifiers.registry import (
    UnknownVerifierError,
    available_verifiers,
    get_verifier,
    has_verifier,
    register_verifier,
)

__all__ = [
    "COMPOSITE_WEIGHTS",
    "DatasetError",
    "Grade",
    "Splits",
    "Task",
    "Unscored",
    "UnknownVerifierError",
    "Verifier",
    "available_verifiers",
    "composite_score",
    "get_verifier",
    "has_verifier",
    "register_verifier",
]
