"""Matplotlib figures from measurements; no global rcParams are changed."""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt

from deepnotes.core.measure import loglog_slope
from deepnotes.core.train import History
from deepnotes.core.validate import positive_float, positive_int
from deepnotes.show.palette import MARKERS, PALETTE, colour  # noqa: F401  (re-exported)


def label_axes(
    ax, xlabel: str = "", ylabel: str = "", title: str = "", legend: float | None = 7, title_size: float = 9
) -> None:
    """Axis labels, a title and (unless ``legend`` is None) a legend of font size ``legend``."""
    if xlabel:
        ax.set_xlabel(xlabel)
    if ylabel:
        ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title, fontsize=title_size)
    if legend is not None:
        ax.legend(fontsize=legend)


def loglog_sweep(
    ax,
    depths: Sequence[int],
    series: Mapping[str, Sequence[float]],
    predicted_slope: float | None = None,
    ylabel: str = "",
) -> dict[str, float]:
    """Measured values against depth on log-log axes, each with its fitted slope in the legend,
    and a dashed reference line of the predicted slope. Returns the fitted slopes."""
    slopes = {}
    for label, values in series.items():
        if len(values) != len(depths):
            raise ValueError(f"series {label!r} has {len(values)} values for {len(depths)} depths")
        pts = [(n, v) for n, v in zip(depths, values) if v is not None and math.isfinite(v) and v > 0]
        if len(pts) < 2:
            continue
        xs, ys = zip(*pts)
        slopes[label] = loglog_slope(xs, ys)
        ax.loglog(xs, ys, "o-", color=colour(label), label=f"{label}: slope {slopes[label]:.2f}")
    if predicted_slope is not None and slopes:
        first = next(iter(series.values()))
        n0, v0 = depths[0], first[0]
        xs = [depths[0], depths[-1]]
        ax.loglog(
            xs,
            [v0 * (x / n0) ** predicted_slope for x in xs],
            "k--",
            lw=1,
            label=f"derivation: slope {predicted_slope:g}",
        )
    ax.set_xlabel("depth N (blocks)")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=7)
    return slopes


def _seeds(runs: Mapping[str, History | Sequence[History]]) -> dict[str, list[History]]:
    """label → its runs (one History, or one per seed)."""
    if not isinstance(runs, Mapping):
        raise TypeError(f"runs must map a label to a History or a list of them, got {type(runs).__name__}")
    out = {}
    for label, r in runs.items():
        hists = [r] if isinstance(r, History) else list(r) if isinstance(r, (list, tuple)) else None
        if not hists or not all(isinstance(h, History) for h in hists):
            raise TypeError(f"runs[{label!r}] must be a History or a non-empty list of them, got {type(r).__name__}")
        out[label] = hists
    return out


def median_and_range(hists: Sequence[History]) -> tuple[list[int], list[float], list[float], list[float]]:
    """Per step, over the seeds that still have a finite loss there: (steps, median, min, max)."""
    steps, med, lo, hi = [], [], [], []
    for t in range(max((len(h.losses) for h in hists), default=0)):
        vals = sorted(h.losses[t] for h in hists if t < len(h.losses) and math.isfinite(h.losses[t]))
        if vals:
            steps.append(t)
            med.append(statistics.median(vals))
            lo.append(vals[0])
            hi.append(vals[-1])
    return steps, med, lo, hi


def loss_curves(
    ax,
    runs: Mapping[str, History | Sequence[History]],
    title: str = "",
    floor_label: str = "floor (entropy rate)",
    colours: Mapping[str, str] | None = None,
) -> None:
    """Training losses with the floor (the entropy rate, or what ``floor_label`` names) and the
    context-free plateau. A label maps to one History, or to one per seed: then the line is the
    median over seeds and a shaded band spans their min and max. A diverged run ends in an ✕ at the
    step it diverged (drawn at the top edge when its last loss is off the axes). ``colours``
    (label → colour) overrides :func:`colour`."""
    floor = unigram = None
    used: dict[str | None, int] = {}
    seeds = _seeds(runs)
    finite = [h.losses[0] for hs in seeds.values() for h in hs if h.losses and math.isfinite(h.losses[0])]
    for label, hists in seeds.items():
        c = colours[label] if colours and label in colours else colour(label)
        style = ("-", "-.", ":")[min(used.get(c, 0), 2)] if c is not None else "-"  # same style, other line
        used[c] = used.get(c, 0) + 1
        steps, med, lo, hi = median_and_range(hists)
        (line,) = ax.plot(steps, med, lw=1, ls=style, color=c, label=label)
        if len(hists) > 1:
            ax.fill_between(steps, lo, hi, color=line.get_color(), alpha=0.2, lw=0)
        diverged = [h for h in hists if h.diverged]
        for hist in diverged:
            y = hist.losses[-1] if hist.losses and math.isfinite(hist.losses[-1]) else (hist.unigram or 0)
            top = 1.2 * max(finite) if hist.floor is not None and finite else y
            ax.plot([hist.diverged_at], [min(y, top)], "x", ms=10, mew=2, color=line.get_color(), clip_on=False)
        if len(hists) > 1:
            line.set_label(f"{label} ({len(hists)} seeds" + (f", {len(diverged)} diverged)" if diverged else ")"))
        elif diverged:
            line.set_label(f"{label} ({diverged[0].divergence_note()})")
        floor, unigram = hists[0].floor, hists[0].unigram
    if floor is not None and finite:  # a run that blew up would squash the rest: clip at 1.2× the start
        ax.set_ylim(0.9 * floor, 1.2 * max(finite))
    longest = max((len(h.losses) for hs in seeds.values() for h in hs), default=0)
    if longest < 2:  # every run stopped at once: a readable step axis around the marks
        ax.set_xlim(-0.5, max([1] + [h.diverged_at + 1 for hs in seeds.values() for h in hs if h.diverged]))
    if floor is not None:
        ax.axhline(floor, color="k", ls="--", lw=1, label=f"{floor_label} {floor:.3f}")
    if unigram is not None:
        ax.axhline(unigram, color="k", ls=":", lw=1, label=f"context-free plateau {unigram:.3f}")
    ax.set_xlabel("step")
    ax.set_ylabel("loss (nats/token)")
    if title:
        ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)


def update_curves(ax, runs: Mapping[str, History], title: str = "") -> None:
    """RMS of F(x,θ_t) − F(x,θ_0) against the step t; a run that took no step says so in the panel."""
    for label, hist in runs.items():
        ax.plot(range(1, len(hist.update_rms) + 1), hist.update_rms, lw=1, color=colour(label), label=label)
    if not any(hist.update_rms for hist in runs.values()):
        ax.text(
            0.5,
            0.5,
            "no update measured:\nno run took a step",
            ha="center",
            va="center",
            transform=ax.transAxes,
            fontsize=8,
        )
    ax.set_xlabel("step t")
    ax.set_ylabel(r"RMS of $F(x,\theta_t)-F(x,\theta_0)$")
    if title:
        ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)


def new_figure(ncols: int = 1, width: float = 4.2, height: float = 3.0, nrows: int = 1):
    """A figure with ``nrows`` × ``ncols`` axes of ``width`` × ``height`` inches each, returned row by
    row as one list. The book's column is about 7 inches wide: three panels side by side are shrunk
    to half size there, so wider figures take two rows."""
    positive_int("ncols", ncols)
    positive_int("nrows", nrows)
    positive_float("width", width)
    positive_float("height", height)
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=False)
    return fig, [ax for row in axes for ax in row]


def legend_panel(ax, source) -> None:
    """Turn the spare axes ``ax`` of a grid into a legend of ``source``'s lines (one key for panels
    that draw the same series)."""
    handles, labels = source.get_legend_handles_labels()
    ax.axis("off")
    ax.legend(handles, labels, loc="center", fontsize=8, frameon=False)


def moment_curves(ax, series, title: str = "") -> None:
    """Per-layer second moments: measured (solid) against the derivation's recursion (dashed),
    on a log axis; ``series`` maps a label to (measured, predicted)."""
    for label, (measured, predicted) in series.items():
        (line,) = ax.semilogy(range(len(measured)), measured, lw=1.2, label=f"{label} measured")
        ax.semilogy(range(len(predicted)), predicted, "--", lw=1, color=line.get_color(), label=f"{label} derivation")
    ax.set_xlabel("layer l")
    ax.set_ylabel(r"$E[x_l^2]$")
    if title:
        ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
