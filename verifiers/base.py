"""The verifier contract: tasks with checkable answers, and grades with feedback.

A verifier owns both halves of an objective fitness signal:

* ``build_dataset(num_cases, seed) -> Splits``: tasks whose answers are checkable facts,
  split into trainset / valset / holdout;
* ``score(task_input, output) -> Grade``: a pure-Python grade of one output, with a feedback
  string that names what was expected and what was found (GEPA reflects on it).

The harness engine only depends on this module and on :mod:`verifiers.registry`; it never
imports a concrete verifier.
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

#: Composite weights shared by every grader (verifier and judge): correctness, well_formed,
#: conciseness.  Source: issue #2 ("Composite = 0.5·correctness + 0.3·well_formed + 0.2·conciseness").
COMPOSITE_WEIGHTS: tuple[float, float, float] = (0.5, 0.3, 0.2)


def composite_score(correctness: float, well_formed: float, conciseness: float) -> float:
    """Weighted composite in [0, 1] of three sub-scores, each in [0, 1] (see COMPOSITE_WEIGHTS)."""
    wc, ww, wz = COMPOSITE_WEIGHTS
    return wc * correctness + ww * well_formed + wz * conciseness


@dataclass(frozen=True)
class Task:
    """One checkable task.

    Attributes:
        task_id: stable identifier, unique within a verifier's pool (e.g. ``"1706.03762/title"``).
        kind: the task family (e.g. ``"id"``, ``"title"``, ``"author"``, ``"year"``).
        question: the text the task LM sees (the ``task_input`` passed to ``Verifier.score``).
        expected_behavior: a rubric sentence, so keyword and judge fitness grade the same task.
        answer: the ground-truth answer as a string (IDs and years stay strings).
        group: the unit that must not straddle splits (for arXiv: the paper's ID).
    """

    task_id: str
    kind: str
    question: str
    expected_behavior: str
    answer: str
    group: str

    def to_dict(self) -> dict[str, str]:
        """Plain dict, JSON-serialisable."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Task:
        """Inverse of :meth:`to_dict`; raises ``TypeError`` on missing or extra keys."""
        return cls(**data)


@dataclass(frozen=True)
class Grade:
    """One grade of one output.

    Attributes:
        correctness: 0..1, how right the answer is (1 = right and committed, 0.5 = hedged, ...).
        well_formed: 0 or 1, whether an answer of the expected shape was present at all.
        conciseness: 0..1, length credit; counts only when an answer is present.
        composite: 0..1, ``composite_score(correctness, well_formed, conciseness)``.
        feedback: human-readable text naming what was expected and what the output said.
    """

    correctness: float
    well_formed: float
    conciseness: float
    composite: float
    feedback: str

    def to_dict(self) -> dict[str, float | str]:
        """Plain dict, JSON-serialisable."""
        return asdict(self)


@dataclass(frozen=True)
class Unscored:
    """A grader's word that it could not grade an output, with the reason (as inspect_ai's unscored ``Score``
    carries its explanation): recorded as unscored (NaN), never as a number.

    Attributes:
        reason: why no grade could be made (an unparseable judge reply, ...); ``""`` when the grader gave none.
    """

    reason: str = ""


@dataclass(frozen=True)
class Splits:
    """A dataset split three ways; no ``Task.group`` appears in two splits."""

    trainset: tuple[Task, ...]
    valset: tuple[Task, ...]
    holdout: tuple[Task, ...]
    seed: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def items(self) -> Iterable[tuple[str, tuple[Task, ...]]]:
        """``(split_name, tasks)`` pairs in the order trainset, valset, holdout."""
        return (("trainset", self.trainset), ("valset", self.valset), ("holdout", self.holdout))

    @property
    def sizes(self) -> dict[str, int]:
        """Number of tasks per split name."""
        return {name: len(tasks) for name, tasks in self.items()}

    def digest(self) -> str:
        """sha256 (hex, first 16 chars) of the canonical JSON of all three splits."""
        payload = {name: [t.to_dict() for t in tasks] for name, tasks in self.items()}
        blob = json.dumps(payload, sort_keys=True, ensure_ascii=False).encode("utf-8")
        return hashlib.sha256(blob).hexdigest()[:16]

    def save_jsonl(self, directory: Path) -> dict[str, Path]:
        """Write ``<split>.jsonl`` (one task per line) into ``directory``; return the paths."""
        directory.mkdir(parents=True, exist_ok=True)
        paths: dict[str, Path] = {}
        for name, tasks in self.items():
            path = directory / f"{name}.jsonl"
            with path.open("w", encoding="utf-8") as fh:
                for task in tasks:
                    fh.write(json.dumps(task.to_dict(), ensure_ascii=False) + "\n")
            paths[name] = path
        return paths


class DatasetError(ValueError):
    """A dataset cannot be built with the requested size (message says what to pass instead)."""


class Verifier(ABC):
    """Base class for objective graders. Subclasses set ``name`` and implement both methods."""

    #: the verifier's registry name (normally the skill name it grades)
    name: str = ""

    @abstractmethod
    def tasks(self) -> Sequence[Task]:
        """The full pool of tasks this verifier has ground truth for."""

    @abstractmethod
    def build_dataset(self, num_cases: int | None = None, seed: int = 0) -> Splits:
        """Deterministic trainset/valset/holdout split of ``num_cases`` tasks (default: all).

        Raises:
            DatasetError: when ``num_cases`` is below 3 or above the pool size.
        """

    @abstractmethod
    def score(self, task_input: str, output: str) -> Grade:
        """Grade ``output`` for the task whose question is ``task_input``.

        Never raises for any string ``output``; an unknown ``task_input`` scores 0 with feedback
        saying no ground truth is registered for it.
        """
