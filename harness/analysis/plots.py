"""PNG figures of evolution runs, drawn with matplotlib's object API on the Agg canvas.

Every function builds its own :class:`matplotlib.figure.Figure` (never ``pyplot``, so no global figure
state leaks between calls or threads), writes one PNG and returns its path.  Parent folders are created.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import CenteredNorm, Colormap
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.lines import Line2D

#: correctness bands of a grade and their colours (colour-blind-safe Okabe–Ito hues)
CORRECTNESS_COLOURS: dict[str, str] = {"correct": "#009E73", "partial": "#E69F00", "wrong": "#D55E00",
                                       "unscored": "#999999"}
VARIANT_MARKERS: dict[str, str] = {"baseline": "o", "evolved": "D"}
DPI = 120
#: zlib level of the PNG files: 1 instead of Pillow's 6 gives the same pixels in files about 8 % larger, and cuts
#: a 16-task holdout chart's CPU by about 30 % (0.52 -> 0.37 s; the encoding at level 6 was 0.23 s of it; issue 18)
PNG_COMPRESS_LEVEL = 1


#: inches per typographic point
_PT = 1 / 72
#: the space kept around the figure's edge and between neighbouring texts: constrained layout's default (3 pt)
_PAD = 3 * _PT
#: how far a tick label sits from its axes' edge: the tick (3.5 pt) plus the tick label pad (3.5 pt)
_TICK = 7 * _PT


class _Measure:
    """Sizes in inches of texts as the figure's Agg renderer lays them out (the renderer savefig reuses, so the
    text metrics measured here are cached for the draw).

    Why (issue 18): ``layout="constrained"`` found the margins with a dry draw of every artist (0.35 of a plot's
    0.3-0.45 s of CPU); the plots here know which texts sit in each margin, so they measure only those and place
    the axes themselves (:func:`_place`)."""

    def __init__(self, fig: Figure) -> None:
        self._renderer = FigureCanvasAgg(fig).get_renderer()
        self._dpi = float(self._renderer.dpi)

    def width(self, texts: Sequence[str], size: float | str) -> float:
        """The widest line of ``texts`` at font ``size`` (points or a name such as ``"medium"``), in inches."""
        prop = FontProperties(size=size)
        lines = [line for text in texts for line in str(text).split("\n")]
        return max((self._renderer.get_text_width_height_descent(line, prop, ismath="TeX" if "$" in line
                                                                   else False)[0] for line in lines),
                   default=0.0) / self._dpi

    def height(self, size: float | str, lines: int = 1) -> float:
        """The height of ``lines`` lines of text at font ``size``, in inches (matplotlib's line spacing, 1.2)."""
        points = FontProperties(size=size).get_size_in_points()
        return (lines * 1.2 - 0.2 + 0.17) * points * _PT  # lines apart by 1.2 sizes; a line ~1.17 sizes tall

    def extent(self, artist: Artist) -> float:
        """The width of ``artist`` (e.g. a legend) as it will be drawn, in inches."""
        return float(artist.get_window_extent(self._renderer).width) / self._dpi


def _place(fig: Figure, ax: Axes, left: float, right: float, bottom: float, top: float,
           title_width: float = 0.0) -> None:
    """Put ``ax`` in ``fig`` leaving margins of ``left``, ``right``, ``bottom`` and ``top`` inches; a title of
    ``title_width`` inches, centred over the axes, widens the margin it would otherwise overhang."""
    width, height = fig.get_size_inches()
    # the title's centre is the axes' centre: it stays on the figure while the margins differ by at most this
    slack = max(width - 2 * _PAD - title_width, 0.0)
    left, right = max(left, right - slack), max(right, left - slack)
    ax.set_position((left / width, bottom / height, 1 - (left + right) / width, 1 - (bottom + top) / height))


def correctness_band(value: float) -> str:
    """``correct`` (≥ 1), ``partial`` (in (0, 1)), ``wrong`` (≤ 0) or ``unscored`` (NaN) for a correctness score."""
    if value is None or value != value:
        return "unscored"
    if value >= 1.0:
        return "correct"
    return "partial" if value > 0.0 else "wrong"


def _mean(values: np.ndarray) -> float:
    return float(np.nanmean(values)) if np.isfinite(values).any() else math.nan


def _fmt(value: float, signed: bool = False) -> str:
    if math.isnan(value):
        return "n/a"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def _save(fig: Figure, path: str | Path) -> Path:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    FigureCanvasAgg(fig)
    fig.savefig(out, format="png", dpi=DPI, pil_kwargs={"compress_level": PNG_COMPRESS_LEVEL})
    return out


def holdout_per_task_png(table: pd.DataFrame, path: str | Path, grader: str = "verifier") -> Path:
    """Dumbbell chart: per holdout task, the baseline (circle) and evolved (diamond) composite of ``grader``.

    Each marker is coloured by that variant's correctness band (correct / partial / wrong); an unscored grade
    is a grey ``×`` at 0 with "unscored" beside the task label (never drawn as a score of 0); a grey segment
    joins two scored markers.  The title gives the means over the tasks both variants scored, and that n.
    One row per task, labelled with its task id, in the
    table's order; the figure grows with the number of tasks (readable from a handful to ~100).  When
    ``table`` holds several runs the per-task mean over runs is drawn (and said in the title).

    Args:
        table: a :func:`harness.tracking.export.holdout_table` frame (columns ``task_id, variant, grader, composite,
            correctness``; ``run_id`` optional), or a single run's logged holdout table.
        path: the PNG to write.
        grader: the grader whose grades are drawn.

    Returns:
        ``path`` as a :class:`~pathlib.Path`.

    Raises:
        ValueError: missing columns, or no rows for ``grader`` (the message lists the graders present).
    """
    needed = ["task_id", "variant", "grader", "composite", "correctness"]
    missing = [c for c in needed if c not in table.columns]
    if missing:
        raise ValueError(f"holdout_per_task_png needs the columns {', '.join(missing)}")
    rows = table[table["grader"] == grader]
    if rows.empty:
        present = ", ".join(sorted(str(g) for g in table["grader"].dropna().unique())) or "none"
        raise ValueError(f"no holdout rows graded by {grader!r}; graders present: {present}")
    runs = rows["run_id"].nunique() if "run_id" in rows.columns else 1
    means = (rows.astype({"composite": "float64", "correctness": "float64"})
             .groupby(["task_id", "variant"], sort=False, observed=True)[["composite", "correctness"]].mean())
    tasks = list(dict.fromkeys(rows["task_id"].astype(str)))
    y = np.arange(len(tasks))

    fig = Figure(figsize=(8.5, 1.6 + 0.24 * len(tasks)), dpi=DPI)
    ax = fig.subplots()
    points: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for variant in ("baseline", "evolved"):
        comp = np.array([means["composite"].get((t, variant), np.nan) for t in tasks], dtype=float)
        corr = np.array([means["correctness"].get((t, variant), np.nan) for t in tasks], dtype=float)
        points[variant] = (comp, corr)
    base, evo = points["baseline"][0], points["evolved"][0]
    ax.hlines(y, np.fmin(base, evo), np.fmax(base, evo), color="#BBBBBB", linewidth=2, zorder=1)
    for variant, (comp, corr) in points.items():
        # a small vertical offset keeps both markers visible when the two variants score the same
        bands = [correctness_band(c if x == x else math.nan) for x, c in zip(comp, corr, strict=True)]
        colours = [CORRECTNESS_COLOURS[b] for b in bands]
        offset = -0.17 if variant == "baseline" else 0.17
        scored = np.isfinite(comp)
        ax.scatter(comp[scored], (y + offset)[scored], c=[c for c, k in zip(colours, scored, strict=True) if k],
                   marker=VARIANT_MARKERS[variant], s=40, edgecolors="black", linewidths=0.5, zorder=2)
        ax.scatter(np.zeros(int((~scored).sum())), (y + offset)[~scored], c=CORRECTNESS_COLOURS["unscored"],
                   marker="x", s=30, linewidths=1.2, zorder=2)
    unscored_any = ~(np.isfinite(base) & np.isfinite(evo))
    labels = [f"{t} (unscored)" if u else t for t, u in zip(tasks, unscored_any, strict=True)]
    label_size = 8 if len(tasks) <= 40 else 6.5
    ax.set_yticks(y, labels, fontsize=label_size)
    ax.invert_yaxis()
    ax.set_ylim(len(tasks) - 0.5, -0.5)
    ax.set_xlim(-0.03, 1.03)
    ax.set_xlabel(f"composite score ({grader} grader, 0–1)")
    ax.grid(axis="x", alpha=0.3)

    paired = np.isfinite(base) & np.isfinite(evo)
    n = int(paired.sum())
    mean_b = _mean(base[paired]) if n else math.nan
    mean_e = _mean(evo[paired]) if n else math.nan
    scope = f"mean of {runs} runs" if runs > 1 else "one run"
    title = (f"Holdout per task — {grader} grader ({len(tasks)} tasks, {scope})\n"
             f"mean composite over the n = {n} of {len(tasks)} tasks scored in both: {_fmt(mean_b)} → "
             f"{_fmt(mean_e)} (Δ {_fmt(mean_e - mean_b, signed=True)})"
             + (f"; {len(tasks) - n} unscored (×)" if n < len(tasks) else ""))
    ax.set_title(title, fontsize=10)
    handles = [Line2D([], [], marker=VARIANT_MARKERS[v], linestyle="", color="white", markeredgecolor="black",
                      markersize=7, label=v) for v in ("baseline", "evolved")]
    handles += [Line2D([], [], marker="s", linestyle="", color=colour, markersize=8, label=band)
                for band, colour in CORRECTNESS_COLOURS.items()]
    legend = ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False,
                       title="variant / correctness", title_fontsize=8)
    size = _Measure(fig)
    left = _PAD + size.width(labels, label_size) + _TICK
    # the legend starts 1 % of the axes' width right of it, plus its pad (0.5 of its 8 pt font)
    legend_width = size.extent(legend) + 4 * _PT
    right = _PAD + legend_width + 0.01 * (fig.get_figwidth() - left - legend_width)
    _place(fig, ax, left, right, bottom=_PAD + 2 * size.height("medium") + _TICK + 4 * _PT,
           top=_PAD + size.height(10, lines=2) + 6 * _PT, title_width=size.width([title], 10))
    return _save(fig, path)


def _curve_points(points: Sequence[tuple[int, float]] | pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(points, pd.DataFrame):
        x_col = next((c for c in ("iteration", "step") if c in points.columns), None)
        y_col = next((c for c in ("best_val_score", "value", "score") if c in points.columns), None)
        if x_col is None or y_col is None:
            if points.shape[1] < 2:
                raise ValueError("optimisation_curve_png needs two columns: iteration and best validation score")
            x_col, y_col = points.columns[0], points.columns[1]
        frame = points[[x_col, y_col]]
    else:
        frame = pd.DataFrame(list(points), columns=["iteration", "best_val_score"])
    frame = frame.apply(pd.to_numeric, errors="coerce").dropna().sort_values(frame.columns[0], kind="stable")
    return frame.iloc[:, 0].to_numpy(dtype=float), frame.iloc[:, 1].to_numpy(dtype=float)


def optimisation_curve_png(points: Sequence[tuple[int, float]] | pd.DataFrame, path: str | Path,
                           title: str = "GEPA optimisation") -> Path:
    """Step plot of the best validation score per GEPA iteration.

    Args:
        points: ``(iteration, best_val_score)`` pairs, or a DataFrame with columns ``iteration``/``step`` and
            ``best_val_score``/``value``/``score`` (e.g. the ``gepa.best_val_score`` metric history), else its
            first two columns.  Scores are in [0, 1]; rows with a missing value are dropped.
        path: the PNG to write.
        title: figure title.

    Returns:
        ``path`` as a :class:`~pathlib.Path`.

    Raises:
        ValueError: no usable point.
    """
    x, y = _curve_points(points)
    if len(x) == 0:
        raise ValueError("optimisation_curve_png got no (iteration, score) points to plot")
    fig = Figure(figsize=(7, 4), dpi=DPI)
    ax = fig.subplots()
    ax.step(x, y, where="post", color="#0072B2", linewidth=2)
    ax.plot(x, y, "o", color="#0072B2", markersize=4)
    ax.annotate(f"{y[-1]:.3f}", (x[-1], y[-1]), textcoords="offset points", xytext=(4, 6), fontsize=9)
    ax.set_xlabel("GEPA iteration")
    ax.set_ylabel("best validation score (0–1)")
    low = min(0.0, float(np.nanmin(y)))
    high = max(1.0, float(np.nanmax(y)))
    ax.set_ylim(low - 0.02, high + 0.05)
    if np.all(np.equal(np.mod(x, 1), 0)) and len(x) <= 30:
        ax.set_xticks(np.unique(x))
    ax.grid(alpha=0.3)
    heading = f"{title}: best validation score per iteration ({len(x)} points)"
    ax.set_title(heading, fontsize=10)
    size = _Measure(fig)
    yticks = ax.yaxis.get_major_formatter().format_ticks(
        [t for t in ax.get_yticks() if ax.get_ylim()[0] <= t <= ax.get_ylim()[1]])
    xticks = ax.xaxis.get_major_formatter().format_ticks(ax.get_xticks())
    x0, x1 = ax.get_xlim()
    width = fig.get_figwidth()
    # the last score's label starts 4 pt right of the last point, which lies this far inside the axes' right edge
    inside = (x1 - x[-1]) / (x1 - x0) * 0.85 * width
    right = _PAD + max(size.width(xticks[-1:], "medium") / 2, 4 * _PT + size.width([f"{y[-1]:.3f}"], 9) - inside)
    _place(fig, ax, left=_PAD + size.height("medium") + 4 * _PT + size.width(yticks, "medium") + _TICK,
           right=right, bottom=_PAD + 2 * size.height("medium") + _TICK + 4 * _PT,
           top=_PAD + size.height(10) + 6 * _PT, title_width=size.width([heading], 10))
    return _save(fig, path)


def xgrade_heatmap_png(matrix: pd.DataFrame, path: str | Path,
                       title: str = "Holdout Δ composite (evolved − baseline)", *, counts: pd.DataFrame | None = None,
                       total: int | None = None, marks: pd.DataFrame | None = None) -> Path:
    """Heatmap of holdout deltas: rows = fitness that drove the optimisation, columns = grader.

    Cells use a diverging colormap centred at 0 (red worse, blue better; symmetric range, at least ±0.05),
    annotated with the signed value; NaN cells are grey and read ``n/a``.  With ``counts`` each cell also says
    ``n = <scored pairs>/<total>``, and a cell with no scored pair reads ``unscored`` (grey) instead of a delta;
    with ``marks`` a cell whose value is +1 / −1 (the grader's verdict improved / regressed, in every seed) gets
    a ``*``.

    Args:
        matrix: DataFrame indexed by fitness with one column per grader; values are deltas in [−1, 1].
        path: the PNG to write.
        title: figure title.
        counts: same layout as ``matrix``: scored pairs per cell (the fewest over seeds).
        total: holdout tasks per run (the n's denominator).
        marks: same layout as ``matrix``: +1 / −1 significant, 0 not.

    Returns:
        ``path`` as a :class:`~pathlib.Path`.

    Raises:
        ValueError: an empty matrix or non-numeric cells.
    """
    if matrix.empty:
        raise ValueError("xgrade_heatmap_png got an empty matrix (need fitness rows × grader columns)")
    try:
        values = matrix.to_numpy(dtype=float, na_value=np.nan)
    except (TypeError, ValueError):
        raise ValueError("xgrade_heatmap_png needs numeric deltas in every cell (NaN allowed)") from None
    n_cells = _aligned(counts, matrix)
    sig_cells = _aligned(marks, matrix)
    values = np.where(np.isfinite(n_cells) & (n_cells == 0), np.nan, values)  # no scored pair: no delta
    finite = values[np.isfinite(values)]
    half = max(float(np.abs(finite).max()) if finite.size else 0.0, 0.05)
    n_rows, n_cols = values.shape

    fig = Figure(figsize=(2.6 + 1.5 * n_cols, 1.9 + 0.8 * n_rows), layout="constrained")
    ax = fig.subplots()
    cmap = _cmap("RdBu")
    image = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, norm=CenteredNorm(vcenter=0.0, halfrange=half),
                      aspect="auto")
    for i in range(n_rows):
        for j in range(n_cols):
            v, n = values[i, j], n_cells[i, j]
            if np.isfinite(n) and n == 0:
                text = "unscored"
            else:
                text = "n/a" if not np.isfinite(v) else f"{v:+.3f}"
                if np.isfinite(sig_cells[i, j]) and sig_cells[i, j] != 0:
                    text += "*"
            if np.isfinite(n):
                text += f"\nn = {int(n)}" + (f"/{total}" if total else "")
            dark = np.isfinite(v) and abs(v) > 0.6 * half
            ax.text(j, i, text, ha="center", va="center", fontsize=9, color="white" if dark else "black")
    ax.set_xticks(range(n_cols), [str(c) for c in matrix.columns])
    ax.set_yticks(range(n_rows), [str(r) for r in matrix.index])
    ax.set_xlabel(str(matrix.columns.name or "grader"))
    ax.set_ylabel(str(matrix.index.name or "fitness (optimised)"))
    notes = []
    if marks is not None:
        notes.append("* = significant (grader's verdict improved/regressed)")
    if counts is not None:
        notes.append("n = scored pairs" + (" of holdout tasks" if total else ""))
    ax.set_title(title + ("\n" + "; ".join(notes) if notes else ""), fontsize=10)
    fig.colorbar(image, ax=ax, label="Δ composite")
    return _save(fig, path)


def confusion_heatmap_png(matrix: pd.DataFrame, path: str | Path, title: str = "Confusion matrix") -> Path:
    """Heatmap of a confusion matrix: rows = expected label, columns = answered label, cells = task counts.

    Sequential colormap from 0 to the largest count, each cell annotated with its count; the diagonal holds
    the right answers (:func:`harness.analysis.labels.confusion_matrix` puts the expected labels first).

    Args:
        matrix: counts, indexed by expected label, one column per answered label.
        path: the PNG to write.
        title: figure title.

    Returns:
        ``path`` as a :class:`~pathlib.Path`.

    Raises:
        ValueError: an empty matrix.
    """
    if matrix.empty:
        raise ValueError("confusion_heatmap_png got an empty matrix (need expected × answered label counts)")
    values = matrix.to_numpy(dtype=float)
    n_rows, n_cols = values.shape
    top = max(float(values.max()), 1.0)
    fig = Figure(figsize=(2.4 + 0.75 * n_cols, 1.8 + 0.45 * n_rows), layout="constrained")
    ax = fig.subplots()
    image = ax.imshow(values, cmap=_cmap("Blues"), vmin=0.0, vmax=top, aspect="auto")
    for i in range(n_rows):
        for j in range(n_cols):
            v = values[i, j]
            ax.text(j, i, f"{int(v)}", ha="center", va="center", fontsize=9,
                    color="white" if v > 0.6 * top else "black")
    ax.set_xticks(range(n_cols), [str(c) for c in matrix.columns], rotation=45, ha="right")
    ax.set_yticks(range(n_rows), [str(r) for r in matrix.index])
    ax.set_xlabel("answered label")
    ax.set_ylabel("expected label")
    ax.set_title(title, fontsize=10)
    fig.colorbar(image, ax=ax, label="tasks")
    return _save(fig, path)


def _aligned(frame: pd.DataFrame | None, like: pd.DataFrame) -> np.ndarray:
    """``frame`` reindexed to ``like``'s rows and columns as floats (all NaN when None)."""
    if frame is None or frame.empty:
        return np.full(like.shape, np.nan)
    return frame.reindex(index=like.index, columns=like.columns).to_numpy(dtype=float, na_value=np.nan)


def _cmap(name: str) -> Colormap:
    """A copy of a registered colormap with grey for masked (NaN) cells."""
    return colormaps[name].with_extremes(bad="#DDDDDD")


def agreement_png(confusions: dict[str, list[list[int]]], path: str | Path, reference: str = "verifier",
                  title: str = "Agreement with the verifier (correct / not correct)") -> Path:
    """One 2×2 confusion matrix per grader, side by side, each cell annotated with its count.

    Args:
        confusions: grader -> ``[[both correct, reference only], [grader only, neither]]`` (rows: the
            reference says correct / not; columns: the grader says correct / not), e.g.
            :meth:`harness.analysis.agreement.Agreement.confusion`.
        path: the PNG to write.
        reference: the reference grader's name (axis label).
        title: figure title.

    Returns:
        ``path`` as a :class:`~pathlib.Path`.

    Raises:
        ValueError: no matrix, or one that is not 2×2.
    """
    if not confusions:
        raise ValueError("agreement_png needs at least one grader's 2x2 confusion matrix")
    for grader, m in confusions.items():
        if np.asarray(m).shape != (2, 2):
            raise ValueError(f"agreement_png: the {grader} matrix must be 2x2, got shape {np.asarray(m).shape}")
    fig = Figure(figsize=(0.6 + 2.6 * len(confusions), 2.9), dpi=DPI)
    size = _Measure(fig)
    # a single matrix's figure was narrower than the title (which lost its ends): widen it to the title
    fig.set_figwidth(max(fig.get_figwidth(), size.width([title], 10) + 2 * _PAD))
    axes = np.atleast_1d(fig.subplots(1, len(confusions)))
    cmap = _cmap("Blues")
    for ax, (grader, m) in zip(axes, confusions.items(), strict=True):
        values = np.asarray(m, dtype=float)
        ax.imshow(values, cmap=cmap, vmin=0, vmax=max(1.0, float(values.max())))
        for i in range(2):
            for j in range(2):
                dark = values[i, j] > 0.6 * max(1.0, float(values.max()))
                ax.text(j, i, f"{int(values[i, j])}", ha="center", va="center", fontsize=12,
                        color="white" if dark else "black")
        ax.set_xticks([0, 1], ["correct", "not"])
        ax.set_yticks([0, 1], ["correct", "not"])
        ax.set_xlabel(f"{grader} says")
        ax.set_ylabel(f"{reference} says")
        ax.set_title(f"{grader} vs {reference} ({int(values.sum())} answers)", fontsize=9)
    fig.suptitle(title, fontsize=10)
    size = _Measure(fig)  # the renderer of the widened figure
    width, height = fig.get_size_inches()
    column = (width - 2 * _PAD) / len(confusions)
    inset = size.height("medium") + 4 * _PT + size.width(["correct", "not"], "medium") + _TICK
    bottom = _PAD + 2 * size.height("medium") + _TICK + 4 * _PT
    top = 2 * _PAD + size.height(10) + size.height(9) + 6 * _PT
    for number, ax in enumerate(axes):  # each square matrix is centred in its column's box
        ax.set_position(((_PAD + number * column + inset) / width, bottom / height,
                         (column - inset - _PAD) / width, 1 - (bottom + top) / height))
    return _save(fig, path)
