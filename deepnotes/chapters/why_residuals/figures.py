"""Every figure of the chapter "Why residuals?": functions that take the measurements of
``probes.py`` / ``experiments.py`` (or, for the slider, run them) and return a matplotlib Figure.
Colours come from the book's one palette."""

from __future__ import annotations

import math

from deepnotes.chapters.why_residuals.budget import sizes
from deepnotes.chapters.why_residuals.experiments import OPTIMIZERS, TransformerSweep, first_seed, mlp_runs, mlp_setting
from deepnotes.chapters.why_residuals.probes import (
    EPS_NAMES,
    GradientSweep,
    GrowthSweep,
    JacobianProbe,
    jacobian_growth,
    label,
    predicted_log_growth,
)
from deepnotes.core.config import Budget, live_range
from deepnotes.core.ensembles import RunContext
from deepnotes.core.train import History
from deepnotes.core.validate import Count, Depth, Positive, Real
from deepnotes.show.cache import LIVE_RESULTS_KEPT, LRU
from deepnotes.show.palette import PALETTE
from deepnotes.show.readable import TEXT_PT, TITLE_PT

FIGURES = 9  # the figures the page shows besides its sliders' frames (tests/test_book.py counts them)

LN10 = math.log(10)
GROWTH_YLIM = (-1e3, 2e3)  # log10 axis of experiment 2: ε = 1's 2^N at N = 3000 fits; a stopped gradient at the bottom
LOSS_TOP_FACTOR = 1.6  # loss curves clipped at this × the context-free plateau
ANSWER_SIZE = (6.0, 2.1)  # the answer's width and panel height (in): the key below adds its two rows


CLIPPED_KEY = "✕: diverged; a line along the top edge is clipped there"


def loss_panel(ax, runs: dict, title: str = "", top_factor: Positive = LOSS_TOP_FACTOR, legend: bool = True) -> None:
    """Loss curves of ``runs`` (kind → History) clipped at ``top_factor`` × the context-free
    plateau, so that a run starting at a loss of 10^14 does not flatten the others: a clipped run
    runs along the top edge and gives its largest (and, unless diverged, its last) loss in its
    label; a diverged one ends in an ✕ (at the top edge if clipped). With ``legend`` False the lines keep
    their plain labels (the notes differ between panels) for one key under the figure."""
    floor = unigram = None
    for kind, hist in runs.items():
        floor, unigram = hist.floor, hist.unigram
        top = top_factor * unigram
        text = label(kind)
        if legend and hist.losses and max(hist.losses) > top:  # drawn at the top edge where clipped
            finite = [v for v in hist.losses if math.isfinite(v)]
            last = f", last {finite[-1]:.3g}" if finite and not hist.diverged else ""
            text += f" (clipped; max {max(hist.losses):.3g}{last})"
        if legend and hist.diverged:
            text += f", diverged at step {hist.diverged_at}"
        ys = [min(v, top) for v in hist.losses]
        (line,) = ax.plot(range(len(ys)), ys, lw=1, color=PALETTE.get(kind), label=text)
        if hist.diverged:
            ax.plot(
                [hist.diverged_at], [ys[-1] if ys else top], "x", ms=9, mew=2, color=line.get_color(), clip_on=False
            )
    if floor is not None:
        ax.axhline(floor, color="k", ls="--", lw=1, label=f"floor (entropy rate) {floor:.3f}")
        ax.axhline(unigram, color="k", ls=":", lw=1, label=f"context-free plateau {unigram:.3f}")
        ax.set_ylim(0.9 * floor, top_factor * unigram * 1.03)
    ax.set_xlabel("step")
    ax.set_ylabel("loss (nats/token)")
    if title:
        ax.set_title(title, fontsize=TITLE_PT)
    if legend:
        ax.legend(fontsize=TEXT_PT)


def gradient_panel(ax, runs: dict, title: str = "", xlabel: str = "layer l") -> None:
    """‖∂L/∂θ_l‖ per layer (or block) at step 0 of each of ``runs`` (kind → History), log scale.
    Non-finite norms (a run whose first loss already overflowed) are left out and counted in the
    label."""
    for kind, hist in runs.items():
        if not hist.grad_norms:
            continue
        g0 = hist.grad_norms[0]  # [N]
        pts = [(l, g) for l, g in enumerate(g0, start=1) if math.isfinite(g) and g > 0]
        text = label(kind) + (f" ({len(g0) - len(pts)} of {len(g0)} non-finite)" if len(pts) < len(g0) else "")
        ax.semilogy([l for l, _ in pts], [g for _, g in pts], color=PALETTE.get(kind), label=text)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(r"$\|\partial L/\partial\theta_l\|$ at step 0")
    if title:
        ax.set_title(title, fontsize=TITLE_PT)
    ax.legend(fontsize=TEXT_PT)


def log10_axis(ax) -> None:
    """A vertical axis of log10 values that spans ε = 1's 2^N: linear within ±1, logarithmic beyond,
    ticks labelled with the log10 values themselves (100 means a factor 10^100)."""
    from matplotlib.ticker import FuncFormatter

    ax.set_yscale("symlog", linthresh=1)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))


def gradient_figure(sweep: GradientSweep):
    """Experiment 1: the plain stack's per-layer moments against the m/n rule (top left), measured /
    predicted ‖∇_θL‖² (top right), and the total squared gradient against depth (bottom: plain and
    small ε; ε = 1)."""
    from deepnotes.show import plots

    fig, (ax_m, ax_r, ax_t, ax_1) = plots.new_figure(4, height=3.0)
    _moments_panel(ax_m, sweep)
    _depth_curves(ax_r, ax_t, ax_1, sweep)
    _label_depth_panels(ax_r, ax_t, ax_1, sweep.widths)
    return fig


def _moments_panel(ax_m, sweep: GradientSweep) -> None:
    """Top left of :func:`gradient_figure`: the plain stack's per-layer forward and backward moments, the m/n rule."""
    pm = sweep.moments
    k = range(len(pm.forward))
    ax_m.semilogy(k, pm.forward, "o-", ms=3, label="forward $E[x_k^2]$")
    ax_m.semilogy(k, pm.backward, "s-", ms=3, label=r"backward $E[\delta_k^2]$")
    ax_m.semilogy(k, pm.predicted_backward, "k--", lw=1, label="m/n rule")
    ax_m.set_ylim(top=40 * max(pm.forward + pm.backward))  # room for the legend above the curves
    ax_m.legend(fontsize=TEXT_PT, loc="upper right")
    ax_m.set_xlabel("layer k (W1, W2 alternate)")
    ax_m.set_ylabel("per-entry second moment")
    ax_m.set_title(
        f"plain, width {sweep.moment_width}↔{sweep.moment_hidden}, N = {sweep.moment_depth}", fontsize=TITLE_PT
    )


def _depth_curves(ax_r, ax_t, ax_1, sweep: GradientSweep) -> None:
    """The curves against depth of :func:`gradient_figure`: measured / predicted ‖∇_θL‖² (top right) and the totals."""
    depths, widths = sweep.depths, sweep.widths
    ratio = sweep.ratio
    for kind in sweep.kinds:
        styles = ("o-", "--", ":")[: len(widths)]  # a marker on the solid line only: it would hide a dash
        for w, style in zip(widths, styles, strict=True):  # more widths than styles: an error, not a width left out
            ax_r.loglog(
                depths,
                [ratio[(kind, w, n)] for n in depths],
                style,
                ms=3,
                color=PALETTE[kind],
                label=label(kind) if w == widths[0] else f"{label(kind)}, width {w}",
            )
        ax = ax_1 if kind == "1" else ax_t
        ax.loglog(
            depths,
            [sweep.totals[(kind, widths[-1], n)] for n in depths],
            "o-",
            ms=3,
            color=PALETTE[kind],
            label=label(kind),
        )
        # the derivation dash-dotted: dashed is a width of the top right panel ("plain, width 64" is black dashed)
        ax.loglog(depths, [sweep.predicted[(kind, widths[-1], n)] for n in depths], "-.", lw=1, color=PALETTE[kind])


def _label_depth_panels(ax_r, ax_t, ax_1, widths) -> None:
    """The labels, legends and the line at 1 of :func:`gradient_figure`'s panels against depth."""
    from deepnotes.show import plots

    ax_r.axhline(1, color="k", lw=0.8)
    plots.label_axes(
        ax_r,
        "depth N",
        "measured / mean-field prediction",
        r"$\|\nabla_\theta L\|^2$ against the derivation",
        legend=None,
    )
    for ax, what in ((ax_t, "plain and small ε"), (ax_1, "ε = 1")):
        plots.label_axes(ax, "depth N", r"$\|\nabla_\theta L\|^2$ at init", f"width {widths[-1]}: {what}", legend=None)
    ax_t.plot([], [], "k-.", lw=1, label="derivation (bottom panels)")
    plots.key_below(
        ax_r.figure,
        [ax_r, ax_t, ax_1],
        title=f"the colour is the branch; top right, the width {widths[0]} solid, others dashed"
        if len(widths) > 1
        else None,
    )


def growth_curves(ax, probe: JacobianProbe, title: str = "") -> None:
    """Measured log10 ‖vJ‖²/‖v‖² through the top k layers (median over v) against the two predictions."""
    k = range(probe.depth + 1)
    per_layer = {name: value / probe.depth for name, value in predicted_log_growth(probe.kind, probe.depth).items()}
    ax.plot(k, [c / LN10 for c in probe.curve], lw=1.5, label="measured (median over v)")
    ax.plot(k, [i * per_layer["high_d"] / LN10 for i in k], "k--", lw=1, label=r"$(1+\varepsilon^2)^k$")
    if probe.kind != "plain":
        ax.plot(k, [i * per_layer["one_d"] / LN10 for i in k], "k:", lw=1, label=r"$(1+\varepsilon)^{2k}$ (1-D)")
    ax.set_xlabel("layers k pulled back through")
    ax.set_ylabel(r"$\log_{10}\|vJ\|^2/\|v\|^2$")
    log10_axis(ax)
    if title:
        ax.set_title(title, fontsize=TITLE_PT)
    ax.legend(fontsize=TEXT_PT)


def growth_figure(sweep: GrowthSweep):
    """Experiment 2: per width, the median log10 ‖vJ‖²/‖v‖² of each stack kind against depth N
    (markers), the high-dimensional (1+ε²)^N (solid) and the one-dimensional (1+ε)^{2N} (dashed)."""
    from deepnotes.show import plots

    probes, widths, depths = sweep.probes, sweep.widths, sweep.depths
    kinds = sorted({kind for _, kind, _ in probes}, key=(("plain",) + EPS_NAMES).index)
    fig, axes = plots.new_figure(len(widths), height=3.2)
    for ax, width in zip(axes, widths, strict=True):
        for kind in kinds:
            ys = [probes[(width, kind, n)].typical / LN10 for n in depths]
            ys = [y if math.isfinite(y) else GROWTH_YLIM[0] for y in ys]  # a stopped gradient: drawn at the bottom
            (line,) = ax.plot(depths, ys, "o", ms=4, color=PALETTE[kind], label=label(kind))
            pred = [predicted_log_growth(kind, n) for n in depths]
            ax.plot(depths, [p["high_d"] / LN10 for p in pred], "-", lw=1, color=line.get_color())
            if kind != "plain":
                ax.plot(depths, [p["one_d"] / LN10 for p in pred], "--", lw=1, color=line.get_color())
        ax.set_xscale("log")
        log10_axis(ax)
        ax.set_ylim(*GROWTH_YLIM)
        ax.set_xlabel("depth N")
        ax.set_title(f"width {width}", fontsize=TITLE_PT)
    axes[0].set_ylabel(r"$\log_{10}\|vJ\|^2/\|v\|^2$ (median)")
    axes[-1].plot([], [], "k-", lw=1, label=r"$(1+\varepsilon^2)^N$ (high-D)")
    axes[-1].plot([], [], "k--", lw=1, label=r"$(1+\varepsilon)^{2N}$ (1-D)")
    fig.legend(
        *axes[-1].get_legend_handles_labels(), loc="outside lower center", ncol=2, fontsize=TEXT_PT, frameon=False
    )
    return fig


def training_figure(runs: dict[tuple, list[History]], budget: Budget):
    """The MLP runs (seed 0): one row per depth, one column per optimizer (``runs``: (N, optimizer,
    kind) → one History per seed)."""
    from deepnotes.show import plots

    rb = sizes(budget)
    runs = first_seed(runs)
    kinds = list(dict.fromkeys(kind for _, _, kind in runs))
    fig, axes = plots.new_figure(len(rb.train_depths) * len(OPTIMIZERS), height=3.0)
    for i, n in enumerate(rb.train_depths):
        for j, opt in enumerate(OPTIMIZERS):
            loss_panel(
                axes[i * len(OPTIMIZERS) + j],
                {k: runs[(n, opt, k)] for k in kinds},
                title=f"N = {n}, width {rb.train_width}, {opt.upper()} (lr {rb.lrs[opt]:g}), seed 0",
                legend=False,
            )
    plots.key_below(fig, axes, title=CLIPPED_KEY)
    return fig


def answer(runs: dict[tuple, list[History]], sweep: TransformerSweep | None, budget: Budget):
    """The chapter's answer in one small figure (seed 0, every kind): the MLP runs at the deepest training depth
    under Adam (left) beside the deepest Transformers without LayerNorm (right; the deepest MLPs under SGD where
    the budget skips the Transformers). What the ✕ and the top edge mean is said under it (answer.details)."""
    from deepnotes.show import plots

    rb = sizes(budget)
    first, n = first_seed(runs), max(rb.train_depths)
    kinds = list(dict.fromkeys(kind for _, _, kind in first))
    panels = [({k: first[(n, "adam", k)] for k in kinds}, f"MLP, N = {n}, Adam")]  # the rates: answer.details
    if sweep is None:
        panels.append(({k: first[(n, "sgd", k)] for k in kinds}, f"MLP, N = {n}, SGD"))
    else:
        n_tf, tf = max(sweep.depths), first_seed(sweep.runs)
        panels.append(({k: tf[(n_tf, k)] for k in sweep.kinds}, f"Transformer, no norm, N = {n_tf}, Adam"))
    fig, axes = plots.new_figure(len(panels), height=ANSWER_SIZE[1], width=ANSWER_SIZE[0])
    for ax, (shown, title) in zip(axes, panels, strict=True):
        loss_panel(ax, shown, title=title, legend=False)
    plots.key_below(fig, axes, title=None, ncol=3)
    return fig


def first_step_gradient_figure(runs: dict[tuple, list[History]], budget: Budget):
    """‖∂L/∂θ_l‖ per layer at step 0 of the deepest Adam runs (seed 0)."""
    from deepnotes.show import plots

    rb = sizes(budget)
    runs = first_seed(runs)
    n_deep = rb.train_depths[-1]
    kinds = list(dict.fromkeys(kind for _, _, kind in runs))
    fig, (ax,) = plots.new_figure(1, height=3.0)
    gradient_panel(ax, {k: runs[(n_deep, "adam", k)] for k in kinds}, f"N = {n_deep}, width {rb.train_width}, seed 0")
    return fig


def transformer_loss_figure(sweep: TransformerSweep):
    """Loss curves of the Transformers without normalization (seed 0), one panel per depth."""
    from deepnotes.show import plots

    runs = first_seed(sweep.runs)
    fig, axes = plots.new_figure(len(sweep.depths), height=2.8)
    for ax, n in zip(axes, sweep.depths, strict=True):
        loss_panel(
            ax,
            {k: runs[(n, k)] for k in sweep.kinds},
            title=f"no norm, N = {n}, Adam {sweep.lr:g}, seed 0",
            legend=False,
        )
    plots.key_below(fig, axes, title=CLIPPED_KEY)
    return fig


def transformer_gradient_figure(sweep: TransformerSweep):
    """‖∂L/∂θ_l‖ per block at step 0 of the deepest Transformers (seed 0)."""
    from deepnotes.show import plots

    runs = first_seed(sweep.runs)
    n_tf = sweep.depths[-1]
    fig, (ax,) = plots.new_figure(1, height=3.0)
    gradient_panel(
        ax,
        {k: runs[(n_tf, k)] for k in sweep.kinds},
        f"Transformer, N = {n_tf}: gradients at init, seed 0",
        xlabel="block l",
    )
    return fig


SPECTRUM_BINS = 40  # histogram bins of log10 λ_io per panel
ZERO_AT = -9  # where exact zeros are drawn on the log10 λ axis (below every real value)


def spectrum_figure(spectra: dict, depths) -> object:
    """Histograms of log10 λ_io per style, one panel per depth; exact zeros (Post-LN's LayerNorms remove
    each token's mean direction) are drawn as a bar at ZERO_AT."""
    import numpy as np

    from deepnotes.show import plots

    fig, axes = plots.new_figure(len(depths), height=2.8)
    for ax, n in zip(axes, depths, strict=True):
        keys = [k for k in spectra if k[1] == n and k[0] != "rezero g=0"]
        logs = {k: np.log10(np.maximum(spectra[k].singular, 10.0**ZERO_AT)) for k in keys}
        lo = min(v.min() for v in logs.values())
        bins = np.linspace(lo, max(v.max() for v in logs.values()) + 1e-9, SPECTRUM_BINS)
        for (style, _), v in logs.items():
            gate = spectra[(style, n)].gate
            name = style if gate is None else f"rezero, g = {gate:g}"
            ax.hist(v, bins=bins, histtype="step", linewidth=1.6, color=PALETTE.get(style), label=name)
        ax.axvline(0, color="grey", linewidth=0.8, linestyle=":")
        plots.label_axes(ax, "log10 λ_io", "count", f"N = {n} encoder blocks", legend=None)
    plots.key_below(fig, axes, title="exact zeros are drawn at the far left")
    return fig


_PLAIN_RUNS = LRU(LIVE_RESULTS_KEPT)  # the slider's plain runs, by (budget, depth, width)


def slider_figure(depth: Depth, width: Count, exponent: Real, budget: Budget, progress: bool = False):
    """The slider: Jacobian growth of a residual stack with ε = N^{−p}, and a short Adam run of the
    MLP language model, plain against residual with that ε."""
    from deepnotes.show import plots

    rb = sizes(budget)
    live_range("depth", depth, rb.live_depth, budget)
    live_range("width", width, rb.live_width, budget)
    probe = jacobian_growth(exponent, width, depth, batch=rb.probe_batch)
    key = (budget.name, depth, width)
    context = RunContext.here(budget, progress=progress)  # the slider is an entry point: the widget calls it

    def short_run(kind) -> History:
        return mlp_runs([mlp_setting(kind, depth, budget, steps=rb.slider_steps, width=width)], context)[0]

    plain = _PLAIN_RUNS.get_or_compute(key, lambda: short_run("plain"))  # the plain run does not depend on the exponent
    runs = {"plain": plain, exponent: short_run(exponent)}
    fig, (ax_j, ax_l) = plots.new_figure(2, height=2.8)
    growth_curves(ax_j, probe, f"N={depth}, width {width}, ε = N^-{exponent:g} = {probe.eps:.3g}")
    loss_panel(ax_l, runs, title=f"Adam lr {rb.lrs['adam']:g}, {rb.slider_steps} steps", legend=False)
    plots.key_below(fig, [ax_l], title=CLIPPED_KEY)
    return fig


def paper_spectrum_figure(paper) -> object:
    """ReZero's figure at toy scale: histograms of log10 λ_io, the vanilla (Post-LN) Transformer per depth
    at init (left) and ReZero per training step (right, counts on a log axis: step 0 is one spike at 0),
    every seed pooled; exact zeros are left out and counted in the legend."""
    import numpy as np

    from deepnotes.chapters.why_residuals.spectrum import NULL_SINGULAR
    from deepnotes.show import plots

    fig, (ax_v, ax_r) = plots.new_figure(2, height=3.0)
    panels = (
        (ax_v, paper.pooled(paper.vanilla), "N = {}", "vanilla (Post-LN) at init"),
        (ax_r, paper.pooled(paper.rezero), "step {}", f"ReZero, N = {paper.rezero_depth}, training"),
    )
    for ax, series, name, title in panels:
        for i, (key, values) in enumerate(sorted(series.items())):
            logs = np.log10([v for v in values if v >= NULL_SINGULAR])
            n_zero = len(values) - len(logs)
            ax.hist(
                logs,
                bins=SPECTRUM_BINS,
                histtype="step",
                lw=1.5,
                color=f"C{i}",
                label=name.format(key) + (f" ({n_zero} zeros)" if n_zero else ""),
            )
        ax.set_xlabel(r"log$_{10}$ λ$_{io}$")
        ax.set_ylabel("count")
        ax.set_title(title, fontsize=TITLE_PT)
        ax.legend(fontsize=TEXT_PT)
    ax_r.set_yscale("log")
    return fig


def model_code():
    """The code this chapter is about, read from the package when the cell runs (file and line numbers
    included, so the page shows what the experiments run): ``ResidualMLP.forward``."""
    from deepnotes.chapters.why_residuals.probes import ResidualMLP
    from deepnotes.show.source import source_of

    return source_of(ResidualMLP.forward, "the chapter's stack: x ← x + ε·f(x) or, plain, x ← f(x)")
