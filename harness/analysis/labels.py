"""Label analysis of choice / tool_call tasks: confusion matrices and an exact McNemar test per label.

Rows are mappings (or a DataFrame) with at least ``task_id``, ``variant`` (e.g. ``"baseline"`` /
``"evolved"``), ``expected_label`` and ``answered_label`` (as from
``verifiers.taskfile.TaskFileVerifier.labels``: the answered label may be ``"(hedged)"`` or ``"(none)"``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd
from scipy.stats import binomtest

EXPECTED, ANSWERED, TASK, VARIANT = "expected_label", "answered_label", "task_id", "variant"
MCNEMAR_COLUMNS: tuple[str, ...] = ("label", "tasks", "baseline_right", "evolved_right", "baseline_only",
                                    "evolved_only", "p_value")


def _frame(rows: Iterable[Mapping[str, Any]] | pd.DataFrame, columns: tuple[str, ...]) -> pd.DataFrame:
    frame = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))
    missing = [c for c in columns if c not in frame.columns]
    if missing and len(frame):
        raise ValueError(f"label rows lack column(s) {', '.join(missing)}; pass rows with "
                         f"{', '.join(columns)}")
    return frame if len(frame) else pd.DataFrame(columns=list(columns))


def confusion_matrix(rows: Iterable[Mapping[str, Any]] | pd.DataFrame) -> pd.DataFrame:
    """Counts of (expected label x answered label).

    Returns:
        a DataFrame indexed by the expected labels (sorted), with one column per answered label: the expected
        labels first (same order, so the diagonal is the right answers), then the other answered labels
        (e.g. ``"(hedged)"``, ``"(none)"``) sorted; integer counts, zeros filled.  Empty rows give an empty
        frame.

    Raises:
        ValueError: rows without ``expected_label`` / ``answered_label``.
    """
    frame = _frame(rows, (EXPECTED, ANSWERED))
    if frame.empty:
        return pd.DataFrame(dtype=int)
    expected = sorted(frame[EXPECTED].astype(str).unique())
    others = sorted(set(frame[ANSWERED].astype(str)) - set(expected))
    table = pd.crosstab(frame[EXPECTED].astype(str), frame[ANSWERED].astype(str))
    table = table.reindex(index=expected, columns=expected + others, fill_value=0).astype(int)
    table.index.name, table.columns.name = "expected", "answered"
    return table


def mcnemar_by_label(rows: Iterable[Mapping[str, Any]] | pd.DataFrame, baseline: str = "baseline",
                     evolved: str = "evolved") -> pd.DataFrame:
    """Exact McNemar test per label, baseline vs evolved, paired by task.

    For each label ``L`` (every expected label), each task present in both variants is one pair of binary
    outcomes, one-vs-rest: a variant is *right for L* on a task when ``(answered == L) == (expected == L)``,
    i.e. it names L exactly when L is the right label.  ``baseline_only`` counts the pairs right only for the
    baseline, ``evolved_only`` those right only for the evolved variant; the two-sided exact p-value is
    ``scipy.stats.binomtest(evolved_only, baseline_only + evolved_only, 0.5)`` (McNemar's exact test), 1.0
    when there are no discordant pairs.

    Returns:
        a DataFrame with ``MCNEMAR_COLUMNS`` (``tasks`` = paired tasks), one row per label, sorted by label.

    Raises:
        ValueError: rows lacking a column, or a task whose expected label differs between the variants.
    """
    frame = _frame(rows, (TASK, VARIANT, EXPECTED, ANSWERED))
    if frame.empty:
        return pd.DataFrame(columns=list(MCNEMAR_COLUMNS))
    frame = frame.astype({TASK: str, EXPECTED: str, ANSWERED: str})
    base = frame[frame[VARIANT] == baseline].drop_duplicates(TASK).set_index(TASK)
    evol = frame[frame[VARIANT] == evolved].drop_duplicates(TASK).set_index(TASK)
    paired = base[[EXPECTED, ANSWERED]].merge(evol[[EXPECTED, ANSWERED]], how="inner", left_index=True,
                                              right_index=True, suffixes=("_b", "_e"))
    clash = paired[paired[EXPECTED + "_b"] != paired[EXPECTED + "_e"]]
    if len(clash):
        raise ValueError(f"task {clash.index[0]!r} has expected label {clash.iloc[0][EXPECTED + '_b']!r} for "
                         f"{baseline} but {clash.iloc[0][EXPECTED + '_e']!r} for {evolved}; pair rows of one task")
    out = []
    for label in sorted(frame[EXPECTED].unique()):
        is_label = paired[EXPECTED + "_b"] == label
        right_b = (paired[ANSWERED + "_b"] == label) == is_label
        right_e = (paired[ANSWERED + "_e"] == label) == is_label
        only_b, only_e = int((right_b & ~right_e).sum()), int((right_e & ~right_b).sum())
        p_value = binomtest(only_e, only_b + only_e, 0.5).pvalue if only_b + only_e else 1.0
        out.append((label, len(paired), int(right_b.sum()), int(right_e.sum()), only_b, only_e, float(p_value)))
    return pd.DataFrame(out, columns=list(MCNEMAR_COLUMNS))
