"""harness.analysis.plots: each function writes a non-empty PNG and leaves no pyplot figure behind."""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from harness.analysis.plots import correctness_band, holdout_per_task_png, optimisation_curve_png, xgrade_heatmap_png

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def assert_png(path: Path) -> None:
    assert path.exists() and path.stat().st_size > 1000
    assert path.read_bytes()[:8] == PNG_SIGNATURE
    assert plt.get_fignums() == []  # nothing registered with pyplot


def holdout_frame(tasks: int, runs: int = 1) -> pd.DataFrame:
    """A holdout_table-like frame: correct / partial / wrong / unscored grades, two graders."""
    rows = []
    for run in range(runs):
        for t in range(tasks):
            for variant in ("baseline", "evolved"):
                correctness = [1.0, 0.5, 0.0, math.nan][(t + run + (variant == "evolved")) % 4]
                for grader in ("verifier", "keyword"):
                    rows.append({"run_id": f"run{run}", "task_id": f"{1500 + t}.{t:05d}/year", "variant": variant,
                                 "grader": grader, "correctness": correctness,
                                 "composite": 0.3 + 0.7 * correctness})
    frame = pd.DataFrame(rows)
    return frame.astype({"run_id": "string", "task_id": "string", "variant": "string", "grader": "string"})


@pytest.mark.parametrize(("tasks", "runs"), [(16, 1), (70, 3)])
def test_holdout_per_task_png(tmp_path: Path, tasks: int, runs: int) -> None:
    out = holdout_per_task_png(holdout_frame(tasks, runs), tmp_path / "sub" / "per_task.png")
    assert out == tmp_path / "sub" / "per_task.png"
    assert_png(out)


def test_holdout_per_task_png_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no holdout rows graded by 'judge'; graders present: keyword, verifier"):
        holdout_per_task_png(holdout_frame(4), tmp_path / "x.png", grader="judge")
    with pytest.raises(ValueError, match="correctness"):
        holdout_per_task_png(holdout_frame(4).drop(columns=["correctness"]), tmp_path / "x.png")
    assert not (tmp_path / "x.png").exists()


def test_correctness_band() -> None:
    assert [correctness_band(v) for v in (1.0, 0.5, 0.0, math.nan)] == ["correct", "partial", "wrong", "unscored"]


def test_optimisation_curve_png_from_points_and_frame(tmp_path: Path) -> None:
    points = [(0, 0.3), (1, 0.3), (2, 0.45), (3, 0.45), (4, 0.6)]
    assert_png(optimisation_curve_png(points, tmp_path / "curve.png"))
    history = pd.DataFrame({"step": [2, 0, 1], "value": [0.5, 0.2, 0.4], "timestamp": [3, 1, 2]})
    assert_png(optimisation_curve_png(history, tmp_path / "curve_df.png"))
    with pytest.raises(ValueError, match="no"):
        optimisation_curve_png([], tmp_path / "empty.png")


def test_xgrade_heatmap_png(tmp_path: Path) -> None:
    matrix = pd.DataFrame({"verifier": [0.12, -0.05, np.nan], "keyword": [-0.2, 0.3, 0.0], "judge": [0.0, 0.04, -0.4]},
                          index=pd.Index(["verifier", "keyword", "judge"], name="fitness"))
    assert_png(xgrade_heatmap_png(matrix, tmp_path / "heat.png"))
    assert_png(xgrade_heatmap_png(matrix * 0, tmp_path / "zeros.png"))  # all-zero deltas still centre at 0
    with pytest.raises(ValueError, match="empty"):
        xgrade_heatmap_png(pd.DataFrame(), tmp_path / "none.png")


def test_png_compression_level_keeps_every_pixel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast zlib level (issue 18) writes the very pixels Pillow's default level writes."""
    from PIL import Image

    from harness.analysis import plots

    fast = holdout_per_task_png(holdout_frame(16), tmp_path / "fast.png")
    monkeypatch.setattr(plots, "PNG_COMPRESS_LEVEL", 6)  # Pillow's default
    default = holdout_per_task_png(holdout_frame(16), tmp_path / "default.png")
    assert fast.read_bytes() != default.read_bytes()  # another encoding ...
    with Image.open(fast) as a, Image.open(default) as b:  # ... of the same image
        assert a.size == b.size and a.mode == b.mode
        assert np.array_equal(np.asarray(a), np.asarray(b))
