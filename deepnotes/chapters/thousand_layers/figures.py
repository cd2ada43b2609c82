"""Figures of the chapter "Training 1000 layers": each takes measurements of :mod:`.experiments`
(or runs one, for the live panel) and returns a matplotlib Figure, in the book's one palette."""

from __future__ import annotations

import math
import statistics

from deepnotes.chapters.thousand_layers import experiments as ex
from deepnotes.chapters.thousand_layers.budget import sizes
from deepnotes.core.config import Budget
from deepnotes.core.measure import StreamProfile
from deepnotes.core.validate import Count, Depth, Positive, Probability
from deepnotes.show.palette import colour, line_style
from deepnotes.show.readable import TEXT_PT

LOG_FLOOR = 1e-12  # added before a log axis so an exact 0 stays drawable

FIGURES = 6  # the figures the page shows besides its sliders' frames (tests/test_book.py counts them)


def init_profiles(profiles: dict[str, list[StreamProfile]], predicted: dict[str, list[float]]):
    """Per block at init: cos(x_l, x_0) measured (solid) and derived (dashed), the stream's RMS (Pre-LN's
    √(1 + 2l) dashed) and the gradient norm reaching each block; one line per style, its seed 0 (the
    verdicts read every seed)."""
    from deepnotes.show import plots

    profiles = {style: seeds[0] for style, seeds in profiles.items()}

    depth = len(next(iter(profiles.values())).grad_norms)
    fig, axes = plots.new_figure(3, height=2.6, key=True)  # the fourth slot holds the key
    for norm, p in profiles.items():
        c = colour(norm)
        axes[0].plot(p.cos_x0, color=c, label=norm)
        axes[0].plot(predicted[norm], "--", color=c, lw=1)
        axes[1].semilogy(p.rms, color=c, label=norm)
        axes[2].semilogy(range(1, depth + 1), [g + LOG_FLOOR for g in p.grad_norms], color=c, label=norm)
    axes[1].semilogy(predicted["pre_rms"], "--", color=colour("pre"), lw=1, label=r"pre: $\sqrt{1+2l}$")
    plots.label_axes(
        axes[0], "block l", r"cos$(x_l, x_0)$ (dashed: derivation)", f"N = {depth}: identity path", legend=None
    )
    plots.label_axes(axes[1], "block l", "RMS of $x_l$", "stream scale", legend=None)
    plots.label_axes(axes[2], "block l", r"$\|\partial L/\partial\theta_l\|$", "gradient per block", legend=None)
    plots.legend_panel(axes[3], axes[1])
    return fig


def _panels(labels: tuple[str, ...]) -> list[tuple[str, ...]]:
    """The headline variants in two panels: the styles, then DeepNorm taken apart."""
    deep = tuple(lab for lab in labels if lab.startswith("deepnorm"))
    return [tuple(lab for lab in labels if lab not in deep), deep]


def training(runs: ex.Runs, depth: Depth, labels: tuple[str, ...] = ex.HEADLINE):
    """Loss curves at ``depth`` and the chapter's rate (median over seeds, min–max band, ✕ where a seed
    diverged; floor dashed, context-free plateau dotted), in two panels, and the early model update RMS
    of F(x,θ_t) − F(x,θ_0) over the first steps (median over seeds). Variants not trained at ``depth``
    are left out."""
    from deepnotes.show import plots

    labels = tuple(lab for lab in labels if runs.has(lab, depth))
    fig, axes = plots.new_figure(3, height=2.8, key=True)  # the fourth slot holds the update's key
    for ax, group in zip(axes[:2], _panels(labels), strict=True):  # axes[2]: the update
        plots.loss_curves(
            ax,
            {lab: runs.at(lab, depth) for lab in group},
            title=f"N = {depth}, Adam lr {runs.lr:g}, {runs.steps} steps",
            legend=False,
        )
    ax = axes[2]
    for lab in labels:
        hists = [h for h in runs.at(lab, depth) if h.update_rms]
        if not hists:
            continue
        steps = min(len(h.update_rms) for h in hists)
        med = [statistics.median(h.update_rms[t] for h in hists) + LOG_FLOOR for t in range(steps)]
        ax.semilogy(range(1, steps + 1), med, **line_style(lab), label=lab)
    plots.label_axes(ax, "step t", r"RMS of $F(x,\theta_t)-F(x,\theta_0)$", "early model update", legend=None)
    plots.legend_panel(axes[3], ax, *axes[:2])  # the variants once, then the floor and the plateau
    return fig


def frontier(
    runs: ex.Runs,
    window: Count,
    depths: tuple[int, ...],
    threshold: Probability,
    deepest: tuple[int, float] | None = None,
    labels: tuple[str, ...] = ex.FRONTIER,
    width: Positive = 6.0,
    height: Positive = 3.2,
):
    """Fraction learned (median over seeds, the bar spanning them) against depth at the chapter's rate:
    solid without warmup, dashed with; a diverged run is an ✕ below zero. ``deepest`` (depth, rate):
    the deepest stack's runs (hollow markers, each variant's colour). The dotted line is the threshold
    a run must pass to count as trained."""
    from deepnotes.show import plots

    fig, (ax,) = plots.new_figure(1, width=width, height=height)
    for lab in labels:
        ns = [n for n in depths if runs.has(lab, n)]
        plots.fractions_over_seeds(ax, ns, [runs.fractions(lab, n, window) for n in ns], lab, **line_style(lab))
    if deepest is not None:
        n, rate = deepest
        for lab in ex.DEEPEST:
            if runs.has(lab, n, rate):
                m, lo, hi = plots.seeds_point(runs.fractions(lab, n, window, rate))
                ax.errorbar(
                    [n],
                    [m],
                    yerr=[[m - lo], [hi - m]],
                    fmt="D",
                    mfc="none",
                    ms=6,
                    capsize=2,
                    color=colour(lab),
                    label=f"{lab}, lr {rate:.2g}",
                )
    ax.set_xscale("log")
    ticks = sorted({*depths, *([deepest[0]] if deepest else [])})
    ax.set_xticks(ticks, [str(n) for n in ticks], fontsize=TEXT_PT)
    ax.minorticks_off()
    ax.axhline(threshold, color="k", ls=":", lw=1, label=f"trained: {threshold:g}")
    ax.axhline(0, color="k", lw=0.5)
    plots.label_axes(ax, "depth N (blocks)", "fraction learned\n(0 plateau, 1 floor)", "", legend=None)
    fig.set_layout_engine("constrained")
    fig.legend(*ax.get_legend_handles_labels(), fontsize=TEXT_PT, ncol=3, loc="outside lower center", frameon=False)
    return fig


def answer(runs: ex.Runs, budget: Budget, threshold: Probability):
    """The chapter's answer in one small figure: :func:`frontier` of the four styles at the chapter's
    rate from 3 to the headline depth, and the deepest stack's DeepNorm beside Post-LN."""
    sub = sizes(budget)
    return frontier(
        runs,
        sub.loss_window,
        (*sub.frontier_depths, sub.depth),
        threshold,
        (sub.deepest, ex.deepest_rate(budget)),
        labels=ex.MAP_STYLES,
        width=6.0,
        height=2.9,
    )


def deepest(runs: ex.Runs, depth: Depth, deepest_depth: Depth, rate: Positive):
    """The deepest stack's runs (DeepNorm and Post-LN, warmup rule, ``rate``) beside DeepNorm at the
    headline depth and the chapter's rate."""
    from deepnotes.show import plots

    fig, (ax,) = plots.new_figure(1, height=3.4)
    curves = {
        f"{lab}, N = {deepest_depth}": runs.at(lab, deepest_depth, rate)
        for lab in ex.DEEPEST
        if runs.has(lab, deepest_depth, rate)
    }
    curves[f"deepnorm, N = {depth}"] = runs.at("deepnorm", depth)
    plots.loss_curves(
        ax,
        curves,
        title=f"past DeepNet: {deepest_depth} blocks, lr {rate:.2g}",
        colours={f"deepnorm, N = {depth}": "tab:gray"},
        legend=False,
    )
    plots.key_below(fig, [ax], title=plots.SEEDS_KEY)
    return fig


def slider_result(runs: ex.Runs, depth: Depth, label: str):
    """One variant at one depth: its loss curve(s) and its early model update."""
    from deepnotes.show import plots

    hists = runs.at(label, depth)
    fig, (ax_l, ax_u) = plots.new_figure(2, height=2.8)
    plots.loss_curves(ax_l, {label: hists}, title=f"N = {depth}, {label}, Adam lr {runs.lr:g}", legend=False)
    measured = [h.update_rms for h in hists if h.update_rms]
    steps = min((len(u) for u in measured), default=0)
    per_step = [sorted(u[t] + LOG_FLOOR for u in measured) for t in range(steps)]  # [steps][seeds]
    if per_step:
        t = range(1, steps + 1)
        ax_u.semilogy(
            t, [statistics.median(v) for v in per_step], **line_style(label), label=label
        )  # one key entry with the loss line
        if len(measured) > 1:
            ax_u.fill_between(
                t, [v[0] for v in per_step], [v[-1] for v in per_step], color=colour(label), alpha=0.2, lw=0
            )
    plots.label_axes(ax_u, "step t", r"RMS of $F(x,\theta_t)-F(x,\theta_0)$", "early model update", legend=None)
    plots.key_below(fig, [ax_l, ax_u], title=plots.SEEDS_KEY if len(hists) > 1 else None)
    return fig


def slider_figure(depth: Depth, variant: str, budget: Budget, runs: ex.Runs | None = None, progress: bool = False):
    """The slider's render function: the stored run of (depth, variant) where ``runs`` has it, else a
    live run (:func:`.experiments.live_run`)."""
    if runs is None or not runs.has(variant, depth):
        runs = ex.live_run(depth, variant, budget, progress=progress)
    return slider_result(runs, depth, ex.variant(variant).label)


def trainability_map(tmap: ex.TrainabilityMap, window: Count, threshold: Probability):
    """One panel per style: depth (rows) × Adam rate (columns), the colour and the number the median
    fraction learned (0: the plateau, 1: the floor); ✕ where most seeds diverged; cells at or past
    ``threshold`` (what "trains" means in the chapter) framed."""
    from matplotlib.patches import Rectangle

    from deepnotes.show import plots

    ncols = min(len(tmap.styles), plots.PANELS_PER_ROW)
    fig, axes = plots.new_figure(len(tmap.styles), height=0.4 * len(tmap.depths) + 1.2)
    image = None
    for k, (ax, style) in enumerate(zip(axes, tmap.styles, strict=True)):
        grid = [[tmap.fraction(style, n, r, window) for r in tmap.rates] for n in tmap.depths]  # [depths][rates]
        shown = [[min(max(f, 0.0), 1.0) if math.isfinite(f) else math.nan for f in row] for row in grid]
        image = ax.imshow(shown, cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto", origin="lower")
        for i, row in enumerate(grid):
            for j, f in enumerate(row):
                text = "✕" if not math.isfinite(f) else f"{f:.2f}"
                ax.text(
                    j,
                    i,
                    text,
                    ha="center",
                    va="center",
                    fontsize=TEXT_PT,
                    color="black" if math.isfinite(f) and f > 0.6 else "white",
                )
                if math.isfinite(f) and f >= threshold:  # dark on the light cells, where a white frame vanishes
                    ax.add_patch(
                        Rectangle(
                            (j - 0.45, i - 0.45),
                            0.9,
                            0.9,
                            fill=False,
                            lw=1.5,
                            edgecolor="black" if f > 0.6 else "white",
                        )
                    )
        ax.set_xticks(
            range(len(tmap.rates)), [f"{r:.1e}".replace("e-0", "e-") for r in tmap.rates], fontsize=TEXT_PT, rotation=30
        )
        ax.set_yticks(range(len(tmap.depths)), [str(n) for n in tmap.depths], fontsize=TEXT_PT)
        last_row = k + ncols >= len(tmap.styles)
        plots.label_axes(
            ax, "Adam learning rate" if last_row else "", "blocks N" if k % ncols == 0 else "", style, legend=None
        )
    fig.colorbar(image, ax=axes, shrink=0.8, label="fraction learned")
    return fig


def model_code():
    """The code this chapter is about, read from the package when the cell runs (file and line numbers
    included, so the page shows what the experiments run): ``blocks._sublayer_forward``."""
    from deepnotes.core import blocks
    from deepnotes.show.source import source_of

    return source_of(blocks._sublayer_forward, "the engine's residual sublayer, every norm style as per-member data")
