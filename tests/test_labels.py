"""Confusion matrices and the exact McNemar test per label (harness/analysis/labels.py)."""

from __future__ import annotations

import pandas as pd
import pytest
from scipy.stats import binomtest

from harness.analysis.labels import MCNEMAR_COLUMNS, confusion_matrix, mcnemar_by_label


def rows(variant: str, pairs: list[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"task_id": f"t{i}", "variant": variant, "expected_label": e, "answered_label": a}
            for i, (e, a) in enumerate(pairs)]


def test_confusion_matrix_diagonal_first_then_other_answers() -> None:
    table = confusion_matrix(rows("baseline", [("a", "a"), ("a", "b"), ("b", "b"), ("b", "(hedged)"),
                                               ("c", "(none)")]))
    assert list(table.index) == ["a", "b", "c"]
    assert list(table.columns) == ["a", "b", "c", "(hedged)", "(none)"]
    assert table.loc["a", "a"] == 1 and table.loc["a", "b"] == 1 and table.loc["c", "c"] == 0
    assert table.to_numpy().sum() == 5 and table.dtypes.eq(int).all()


def test_confusion_matrix_empty_and_bad_rows() -> None:
    assert confusion_matrix([]).empty
    with pytest.raises(ValueError, match="answered_label"):
        confusion_matrix([{"expected_label": "a"}])


def test_mcnemar_counts_discordant_pairs_one_vs_rest() -> None:
    base = rows("baseline", [("a", "b")] * 6 + [("a", "a")] * 2 + [("b", "b")] * 2)
    evolved = rows("evolved", [("a", "a")] * 6 + [("a", "a")] * 2 + [("b", "a")] * 2)
    table = mcnemar_by_label(base + evolved).set_index("label")
    assert list(table.reset_index().columns) == list(MCNEMAR_COLUMNS)
    a = table.loc["a"]
    # label a: tasks 0-5 flip wrong -> right (evolved names a where a is right); tasks 8-9 flip right -> wrong
    assert (a["tasks"], a["baseline_only"], a["evolved_only"]) == (10, 2, 6)
    assert a["p_value"] == pytest.approx(binomtest(6, 8, 0.5).pvalue)
    b = table.loc["b"]
    # label b: tasks 0-5 named b wrongly (baseline wrong for b), fixed in evolved; tasks 8-9 lost b
    assert (b["baseline_only"], b["evolved_only"]) == (2, 6)


def test_mcnemar_no_discordance_and_unpaired_tasks() -> None:
    base = rows("baseline", [("a", "a"), ("b", "b")])
    evolved = rows("evolved", [("a", "a")])
    table = mcnemar_by_label(pd.DataFrame(base + evolved))
    assert table["tasks"].tolist() == [1, 1] and table["p_value"].tolist() == [1.0, 1.0]
    assert mcnemar_by_label([]).empty


def test_mcnemar_rejects_mismatched_pairs() -> None:
    with pytest.raises(ValueError, match="expected label"):
        mcnemar_by_label(rows("baseline", [("a", "a")]) + rows("evolved", [("b", "a")]))
