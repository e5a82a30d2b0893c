"""Label analysis of a run's holdout: for tasks graded by ``choice`` or ``tool_call`` checks, which label each
variant answered, a confusion matrix per variant and an exact McNemar test per label (issue 14).

The numbers come from :mod:`harness.analysis.labels`; this module collects the labels from the holdout
outputs (``verifier.labels(question, output)``, as :class:`verifiers.taskfile.TaskFileVerifier` gives them)
and draws the heatmaps.  It returns frames and PNG paths; the run logs them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from harness.analysis.labels import confusion_matrix, mcnemar_by_label
from harness.analysis.plots import confusion_heatmap_png
from harness.engine.holdout import VARIANTS, HoldoutRow
from verifiers import Task, Verifier

#: artifact folder of the label tables (``labels/confusion_<variant>.json``, ``labels/mcnemar.json``,
#: ``labels/answers.json``) and the heatmaps' file names (``plots/confusion_<variant>.png``)
LABELS_DIR = "labels"


@dataclass(frozen=True)
class LabelAnalysis:
    """What a run logs about labels.

    Attributes:
        rows: one row per (variant, labelled task): ``task_id``, ``variant``, ``expected_label``,
            ``answered_label``.
        matrices: variant -> its confusion matrix (expected x answered counts).
        mcnemar: :func:`harness.analysis.labels.mcnemar_by_label` of ``rows`` (empty without both variants).
        tables: artifact file -> table frame (what the tracker's ``log_table`` gets).
        plots: the heatmap PNGs written.
    """

    rows: pd.DataFrame
    matrices: dict[str, pd.DataFrame]
    mcnemar: pd.DataFrame
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    plots: list[Path] = field(default_factory=list)


def label_rows(verifier: Verifier, tasks: Sequence[Task], rows: Sequence[HoldoutRow]) -> pd.DataFrame:
    """``(task_id, variant, expected_label, answered_label)`` for every holdout output of a labelled task.

    Each (variant, task) output counts once, whatever the number of graders.  Tasks the verifier gives no
    labels for (no ``choice`` / ``tool_call`` check), and outputs of tasks not in ``tasks``, are left out.
    A verifier without a ``labels`` method gives an empty frame.
    """
    columns = ["task_id", "variant", "expected_label", "answered_label"]
    labels: Any = getattr(verifier, "labels", None)
    by_id = {task.task_id: task for task in tasks}
    out: list[tuple[str, str, str, str]] = []
    seen: set[tuple[str, str]] = set()
    for row in rows if labels is not None else ():
        task = by_id.get(row.task_id)
        if task is None or (row.variant, row.task_id) in seen:
            continue
        seen.add((row.variant, row.task_id))
        pair = labels(task.question, row.output)
        if pair is not None:
            out.append((row.task_id, row.variant, *pair))
    return pd.DataFrame(out, columns=columns)


def label_analysis(verifier: Verifier, tasks: Sequence[Task], rows: Sequence[HoldoutRow],
                   folder: Path) -> LabelAnalysis | None:
    """Confusion matrices (tables and heatmaps in ``folder``) and McNemar per label; ``None`` when no holdout
    task has a ``choice`` or ``tool_call`` check.

    Raises:
        ValueError: as :func:`harness.analysis.labels.mcnemar_by_label` (a task with two expected labels).
    """
    frame = label_rows(verifier, tasks, rows)
    if frame.empty:
        return None
    present = [v for v in VARIANTS if v in set(frame["variant"])]
    matrices = {v: confusion_matrix(frame[frame["variant"] == v]) for v in present}
    mcnemar = mcnemar_by_label(frame) if len(present) == len(VARIANTS) else pd.DataFrame()
    tables: dict[str, pd.DataFrame] = {f"{LABELS_DIR}/answers.json": frame}
    plots = []
    for variant, matrix in matrices.items():
        tables[f"{LABELS_DIR}/confusion_{variant}.json"] = matrix.reset_index()
        plots.append(confusion_heatmap_png(matrix, folder / f"confusion_{variant}.png",
                                           title=f"{variant}: expected × answered label"))
    if not mcnemar.empty:
        tables[f"{LABELS_DIR}/mcnemar.json"] = mcnemar
    return LabelAnalysis(frame, matrices, mcnemar, tables, plots)
