"""Matplotlib figures from measurements; no global rcParams are changed."""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt

from deepnotes.core.measure import loglog_slope
from deepnotes.core.train import History
from deepnotes.core.validate import Count, NonNegativeCount, Positive, Real
from deepnotes.show.palette import MARKERS, PALETTE, colour, dash  # noqa: F401  (re-exported)
from deepnotes.show.png import show_figures  # noqa: F401  (re-exported: the cell's way to show figures)
from deepnotes.show.readable import FIGURE_WIDTH_IN, PANELS_PER_ROW, TEXT_PT, TITLE_PT

LEGEND_PT = TEXT_PT  # legends, notes in a panel and tick labels are never smaller than this
SINGLE_WIDTH_IN = 4.6  # one panel: narrower than the column, so its text is not scaled down on a laptop
MAX_PANELS = 24  # a figure with more panels is unreadable on a page (and would take long to draw)
MAX_ROW_HEIGHT_IN = 12.0  # a row taller than a phone's screen is a mistake, not a figure


def label_axes(
    ax,
    xlabel: str = "",
    ylabel: str = "",
    title: str = "",
    legend: Positive | None = LEGEND_PT,
    title_size: Positive = TITLE_PT,
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
    predicted_slope: Real | None = None,
    ylabel: str = "",
    legend: bool = True,
) -> dict[str, float]:
    """Measured values against depth on log-log axes, each with its fitted slope in the legend,
    and a dashed reference line of the predicted slope. Returns the fitted slopes. With ``legend``
    False the lines keep their plain labels and the slopes go to one key (:func:`slopes_key`)."""
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in depths):
        raise ValueError(f"depths must be integers >= 1 (a log axis), got {list(depths)!r}")
    slopes, dropped, undrawn = {}, 0, []
    for label, values in series.items():
        if len(values) != len(depths):
            raise ValueError(f"series {label!r} has {len(values)} values for {len(depths)} depths")
        pts = [(n, v) for n, v in zip(depths, values, strict=True) if v is not None and math.isfinite(v) and v > 0]
        dropped += sum(v is not None for v in values) - len(pts)  # None: not measured at that depth, not dropped
        if len(pts) < 2:  # no line through fewer than two points: the axis label names the series
            undrawn.append(label)
            continue
        xs, ys = zip(*pts, strict=True)
        slopes[label] = loglog_slope(xs, ys)
        ax.loglog(xs, ys, "o-", color=colour(label), label=f"{label}: slope {slopes[label]:.2f}" if legend else label)
    if predicted_slope is not None and slopes:
        first = next(iter(series.values()))
        n0, v0 = depths[0], first[0]
        xs = [depths[0], depths[-1]]
        ax.loglog(
            xs,
            [v0 * (x / n0) ** predicted_slope for x in xs],
            "k--",
            lw=1,
            label=f"derivation: slope {predicted_slope:g}" if legend else "derivation",
        )
    ax.set_xlabel("depth N (blocks)" + dropped_note(dropped) + undrawn_note(undrawn, "fewer than 2 values to draw"))
    ax.set_ylabel(ylabel)
    if not slopes:
        nothing_drawn(ax, "no series has two positive finite values" if series else "no series given")
    if legend and slopes:
        ax.legend(fontsize=LEGEND_PT)
    return slopes


def undrawn_note(labels: Sequence[str], why: str) -> str:
    """The series an axes could not draw, for its axis label: '' when none, else '(not drawn, fewer than 2 values
    to draw: a, b)' on a line of its own."""
    return f"\n(not drawn, {why}: {', '.join(map(str, labels))})" if labels else ""


def nothing_drawn(ax, why: str) -> None:
    """Say in the middle of an empty panel that it draws nothing and why, rather than leave blank axes."""
    ax.text(0.5, 0.5, f"nothing to draw:\n{why}", ha="center", va="center", transform=ax.transAxes, fontsize=LEGEND_PT)


def dropped_note(dropped: NonNegativeCount) -> str:
    """What a log axis left out, for the axis label: '' when nothing, else '(3 values ≤ 0 or not finite not
    drawn)' on a line of its own."""
    if not dropped:
        return ""
    return f"\n({dropped} value{'s' if dropped > 1 else ''} ≤ 0 or not finite not drawn)"


def _loss_runs(runs: Mapping[str, History | Sequence[History]]) -> dict[str, list[History]]:
    """:func:`_seeds`, refusing what a loss figure would draw wrongly or not at all: no runs, a run without a
    loss that did not diverge, a NaN or ±inf loss in a run not marked diverged (History.observe marks it)."""
    seeds = _seeds(runs)
    if not seeds:
        raise ValueError("runs is empty: a loss figure needs at least one run")
    for label, hists in seeds.items():
        for h in hists:
            if not h.losses and not h.diverged:
                raise ValueError(f"runs[{label!r}] has no losses and did not diverge: a run of 0 steps draws nothing")
            bad = next((t for t, x in enumerate(h.losses) if not math.isfinite(x)), None)
            if bad is not None and not h.diverged:
                raise ValueError(
                    f"runs[{label!r}] has loss {h.losses[bad]} at step {bad} but is not marked diverged "
                    "(History.observe marks a run at its first non-finite loss)"
                )
    return seeds


def slopes_key(fig, axes, slopes: Sequence[Mapping[str, float]], panels: Sequence[str], predicted=()) -> None:
    """One key under the figure for :func:`loglog_sweep` panels drawn without legends: each variant with
    its fitted slope in every panel ("post: 1.24 / 0.95"), the derivation's slope per panel where
    ``predicted`` gives it, and the panels named in the key's title."""
    suffix = {
        label: " / ".join(f"{s[label]:.2f}" if label in s else "–" for s in slopes) for s in slopes for label in s
    }
    if predicted:
        suffix["derivation"] = " / ".join("–" if p is None else f"{p:g}" for p in predicted)
    for ax in axes:
        for line in ax.get_lines():
            if line.get_label() in suffix:
                line.set_label(f"{line.get_label()}: {suffix[line.get_label()]}")
    key_below(fig, axes, title="fitted log-log slopes: " + " / ".join(panels))


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


def _unused_dash(c: str | None, wanted: str, used: set) -> str:
    """The palette's dash for a line of colour ``c`` unless a line of that colour already has it: then
    the next dash no line of that colour has (labels outside the palette's rule stay apart)."""
    order = [wanted] + [d for d in ("-", "--", "-.", ":") if d != wanted]
    style = next((d for d in order if (c, d) not in used), wanted) if c is not None else wanted
    used.add((c, style))
    return style


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
    legend: bool = True,
) -> None:
    """Training losses with the floor (the entropy rate, or what ``floor_label`` names) and the
    context-free plateau. A label maps to one History, or to one per seed: then the line is the
    median over seeds and a shaded band spans their min and max. A diverged run ends in an ✕ at the
    step it diverged (drawn at the top edge when its last loss is off the axes). ``colours``
    (label → colour) overrides :func:`colour`. With ``legend`` False the lines keep their plain labels
    (no seed counts, which differ between panels) for one key under the figure (:func:`key_below`)."""
    floor = unigram = None
    used: set[tuple[str | None, str]] = set()
    seeds = _loss_runs(runs)
    finite = [h.losses[0] for hs in seeds.values() for h in hs if h.losses and math.isfinite(h.losses[0])]
    first_floor = next(iter(seeds.values()))[0].floor
    limits = (0.9 * first_floor, 1.2 * max(finite)) if first_floor is not None and finite else None
    for label, hists in seeds.items():
        c = colours[label] if colours and label in colours else colour(label)
        style = _unused_dash(c, dash(label), used)
        steps, med, lo, hi = median_and_range(hists)
        capped = _cap_on_edges(steps, med, limits) if limits else []
        if limits:
            lo, hi = ([min(max(v, limits[0]), limits[1]) for v in band] for band in (lo, hi))
        (line,) = ax.plot(steps, med, lw=1, ls=style, color=c, label=label)
        for step, edge, marker in capped:
            ax.plot([step], [edge], marker, ms=6, color=line.get_color(), clip_on=False, label="_capped")
        if len(hists) > 1:
            ax.fill_between(steps, lo, hi, color=line.get_color(), alpha=0.2, lw=0)
        diverged = [h for h in hists if h.diverged]
        for hist in diverged:
            y = hist.losses[-1] if hist.losses and math.isfinite(hist.losses[-1]) else (hist.unigram or 0)
            top = 1.2 * max(finite) if hist.floor is not None and finite else y
            ax.plot([hist.diverged_at], [min(y, top)], "x", ms=10, mew=2, color=line.get_color(), clip_on=False)
        if legend and len(hists) > 1:
            line.set_label(f"{label} ({len(hists)} seeds" + (f", {len(diverged)} diverged)" if diverged else ")"))
        elif legend and diverged:
            line.set_label(f"{label} ({diverged[0].divergence_note()})")
        if legend and capped:
            line.set_label(f"{line.get_label()}, {CAPPED_NOTE}")
        floor, unigram = hists[0].floor, hists[0].unigram
    if limits:  # a run that blew up would squash the rest: the axes end at 1.2× the start (a capped run on its edge)
        ax.set_ylim(*limits)
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
        ax.set_title(title, fontsize=TITLE_PT)
    if legend:
        ax.legend(fontsize=LEGEND_PT)


SEEDS_KEY = "lines: median over seeds, band: their min–max, ✕: a seed diverged there"
CAPPED_NOTE = "▲▼ off the axes"


def _cap_on_edges(steps, values: list, limits: tuple[float, float]) -> list[tuple[int, float, str]]:
    """``values`` capped in place to ``limits`` (low, high) = the axes' y range; returns where each capped stretch
    starts, (step, edge, marker), to be marked by a ▲ (above the top) or ▼ (below the bottom) on the edge: the
    axes never cut a curve off unmarked (readable.clipped_curves)."""
    low, high = limits
    starts = []
    for k, v in enumerate(values):
        if not math.isfinite(v) or low <= v <= high:
            continue
        edge, marker = (high, "^") if v > high else (low, "v")
        if not k or values[k - 1] != edge:  # the first step of a capped stretch
            starts.append((steps[k], edge, marker))
        values[k] = edge
    return starts


KEY_LINE_IN = LEGEND_PT * 1.45 / 72  # the height of one legend row


def _handles(axes) -> dict[str, object]:
    """label → the first line drawn with it, over ``axes`` in order (each label once)."""
    handles: dict[str, object] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, handle)
    return handles


def _key(where, handles: dict[str, object], title: str | None, **placement) -> None:
    """A frameless legend of ``handles`` on ``where`` (a figure or an axes) in the book's key font."""
    where.legend(
        list(handles.values()),
        list(handles),
        fontsize=LEGEND_PT,
        title=title,
        title_fontsize=LEGEND_PT,
        frameon=False,
        **placement,
    )


def key_below(fig, axes, title: str | None = None, ncol: Count | None = None) -> None:
    """One key under the whole figure for the lines of ``axes`` (each label once, in order of appearance),
    in place of their own legends; the figure grows by the key's height so the panels keep theirs. Two
    columns when the labels are short enough to fit side by side in the column. ``title``: what the
    lines are (:data:`SEEDS_KEY` where each is a median over seeds)."""
    handles = _handles(axes)
    for ax in axes:
        if ax.get_legend() is not None:
            ax.get_legend().remove()
    if not handles:
        return
    ncol = ncol or (2 if max(map(len, handles)) <= 30 else 1)
    rows = math.ceil(len(handles) / ncol) + (1 if title else 0)
    fig.set_figheight(fig.get_figheight() + rows * KEY_LINE_IN + 0.15)
    _key(fig, handles, title, loc="outside lower center", ncol=ncol)


def update_curves(ax, runs: Mapping[str, History], title: str = "") -> None:
    """RMS of F(x,θ_t) − F(x,θ_0) against the step t; a run that took no step says so in the panel. The
    axis is scaled to the runs that did not diverge: a diverged run's values above that top (or not
    finite) run along the top edge, and an ✕ marks its first non-finite value. No runs, or a NaN/inf in a run
    not marked diverged, is a ValueError."""
    if not runs:
        raise ValueError("runs is empty: an update figure needs at least one run")
    for label, hist in runs.items():
        if not hist.diverged and not all(math.isfinite(u) for u in hist.update_rms):
            raise ValueError(f"runs[{label!r}] has a NaN or inf update but is not marked diverged")
    healthy = [u for h in runs.values() if not h.diverged for u in h.update_rms if math.isfinite(u)]
    top = 1.2 * max(healthy) if healthy else None
    for label, hist in runs.items():
        ys = [u if math.isfinite(u) else math.inf for u in hist.update_rms]
        shown = [min(u, top) for u in ys] if top is not None else [u if math.isfinite(u) else math.nan for u in ys]
        (line,) = ax.plot(range(1, len(ys) + 1), shown, lw=1, color=colour(label), label=label)
        bad = next((t for t, u in enumerate(ys) if not math.isfinite(u)), None)
        if bad is not None and top is not None:
            ax.plot([bad + 1], [top], "x", ms=9, mew=2, color=line.get_color(), clip_on=False)
    if top is not None and any(h.diverged for h in runs.values()):
        ax.set_ylim(top=top)
    if not any(hist.update_rms for hist in runs.values()):
        ax.text(
            0.5,
            0.5,
            "no update measured:\nno run took a step",
            ha="center",
            va="center",
            transform=ax.transAxes,
            fontsize=LEGEND_PT,
        )
    ax.set_xlabel("step t")
    ax.set_ylabel(r"RMS of $F(x,\theta_t)-F(x,\theta_0)$")
    if title:
        ax.set_title(title, fontsize=TITLE_PT)
    ax.legend(fontsize=LEGEND_PT)


def new_figure(panels: Count = 1, height: Positive = 2.6, width: Positive | None = None, key: bool = False):
    """A figure of ``panels`` axes, plus one spare axes for a legend when ``key``, laid out for the book's
    column: at most two panels per row, more stack in rows of two (a left-over slot is removed). Each
    row is ``height`` inches tall; the figure ``width`` inches wide (default 4.6 for one panel,
    6.0 for two), never wider than :data:`~deepnotes.show.readable.FIGURE_WIDTH_IN`, so that text of
    :data:`LEGEND_PT` points stays readable on a phone. Returns (fig, axes) with axes row by row."""
    if panels > MAX_PANELS or height > MAX_ROW_HEIGHT_IN:
        raise ValueError(
            f"a figure of the book has at most {MAX_PANELS} panels of at most {MAX_ROW_HEIGHT_IN} inches a row, "
            f"got panels={panels!r}, height={height!r}"
        )
    slots = panels + bool(key)
    ncols = min(slots, PANELS_PER_ROW)
    nrows = math.ceil(slots / ncols)
    width = (SINGLE_WIDTH_IN if ncols == 1 else FIGURE_WIDTH_IN) if width is None else width
    if width > FIGURE_WIDTH_IN:
        raise ValueError(f"width must be at most the column's {FIGURE_WIDTH_IN} inches, got {width!r}")
    fig, grid = plt.subplots(nrows, ncols, figsize=(width, height * nrows), squeeze=False, layout="constrained")
    axes = [ax for row in grid for ax in row]
    for ax in axes[slots:]:
        fig.delaxes(ax)
    return fig, axes[:slots]


def legend_panel(ax, *sources, title: str | None = None) -> None:
    """Turn the spare axes ``ax`` of a grid into a legend of the ``sources``' lines (one key for panels
    that draw the same series; each label once), titled with the panel it belongs to where that is
    not every panel."""
    ax.axis("off")
    _key(ax, _handles(sources), title, loc="center")


MOMENTS_KEY = "solid: measured, dashed: the derivation's recursion"


def moment_curves(ax, series, title: str = "", legend: bool = True) -> None:
    """Per-layer second moments: measured (solid) against the derivation's recursion (dashed),
    on a log axis; ``series`` maps a label to (measured, predicted). With ``legend`` False only the
    measured lines are labelled, for one key under the figure titled :data:`MOMENTS_KEY`."""
    dropped, undrawn, drawn = 0, [], 0
    for label, (measured, predicted) in series.items():
        shown = [sum(math.isfinite(v) and v > 0 for v in values) for values in (measured, predicted)]
        undrawn += [f"{label} {what}" for what, n in zip(("measured", "derivation"), shown, strict=True) if not n]
        drawn += sum(shown)
        name = f"{label} measured" if legend else label
        (line,) = ax.semilogy(range(len(measured)), measured, lw=1.2, label=name if shown[0] else "_undrawn")
        derived = f"{label} derivation" if legend and shown[1] else None
        ax.semilogy(range(len(predicted)), predicted, "--", lw=1, color=line.get_color(), label=derived)
        dropped += sum(not (math.isfinite(v) and v > 0) for v in (*measured, *predicted))
    ax.set_xlabel("layer l" + dropped_note(dropped) + undrawn_note(undrawn, "no positive finite value"))
    ax.set_ylabel(r"$E[x_l^2]$")
    if title:
        ax.set_title(title, fontsize=TITLE_PT)
    if not drawn:
        nothing_drawn(ax, "no positive finite second moment" if series else "no series given")
    if legend and drawn:
        ax.legend(fontsize=LEGEND_PT)


DIVERGED_FRACTION = -0.25  # where a diverged run's fraction learned is drawn (an ✕ marks it), below the plateau's 0


def seeds_point(values: Sequence[float]) -> tuple[float, float, float]:
    """(median, min, max) of the seeds' fractions learned, a diverged seed (−inf) drawn at DIVERGED_FRACTION."""
    shown = [v if math.isfinite(v) else DIVERGED_FRACTION for v in values]
    return statistics.median(shown), min(shown), max(shown)


def fractions_over_seeds(ax, xs: Sequence[float], per_seed: Sequence[Sequence[float]], label: str, **line) -> None:
    """One run's fraction learned against ``xs`` (``per_seed[i]``: one value per seed at xs[i]): the median's line
    (``line``: colour and dash, the legend's sample), a bar spanning the seeds, ✕ where most seeds diverged."""
    pts = [seeds_point(v) for v in per_seed]
    med = [p[0] for p in pts]
    (drawn,) = ax.plot(xs, med, lw=1.2, label=label, **line)
    colour_of = drawn.get_color()
    low, high = [p[0] - p[1] for p in pts], [p[2] - p[0] for p in pts]
    ax.errorbar(xs, med, yerr=[low, high], fmt="o", ms=4, capsize=2, color=colour_of)
    bad = [x for x, p in zip(xs, pts, strict=True) if p[0] == DIVERGED_FRACTION]
    ax.plot(bad, [DIVERGED_FRACTION] * len(bad), "x", ms=9, mew=2, color=colour_of)
