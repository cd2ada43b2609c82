"""Figures of the chapter "Initialization, parametrization and normalization". Each function takes
measurements (or, for a slider, runs the experiment at its setting) and returns a matplotlib
Figure. Colours: the book's palette (:mod:`deepnotes.show.palette`) has no entry for these
variants, so each series keeps matplotlib's cycle colour and a reference line takes the colour of
the series it belongs to."""

from __future__ import annotations

import math
import statistics
from dataclasses import replace

from deepnotes.chapters.initialization import experiments as ex
from deepnotes.chapters.initialization.budget import sizes
from deepnotes.chapters.initialization.mlp import weight_variance
from deepnotes.core.config import Budget, live_range
from deepnotes.core.validate import Count, Depth, Positive
from deepnotes.show.readable import TEXT_PT, TITLE_PT

FIGURES = 4  # the figures the page shows besides its sliders' frames (tests/test_book.py counts them)

SCALINGS = (False, True)  # the softmax series, in drawing order (without, with 1/√d)
NTK_LAYER = 1  # the hidden layer whose relative updates are drawn (0-based)


def _scaling_label(scaled: bool) -> str:
    return "with 1/√d" if scaled else "without"


def moment_panels(
    table: dict[tuple[str, str], ex.MomentCurve],
    budget: Budget,
    height: Positive = 3.0,
    band: Positive | None = None,
    key: str | None = None,
):
    """Experiment 1: measured vs predicted E[x_l²] per layer, one panel per init, one colour per activation;
    with ``band``, a grey band from 1/band to band (near 1; ``key`` should say so); ``key``: the key's title
    (default: the width and :data:`~deepnotes.show.plots.MOMENTS_KEY`); with a band, the key in three columns."""
    from deepnotes.show import plots

    inits = list(dict.fromkeys(init for init, _ in table))
    fig, axes = plots.new_figure(len(inits), height=height)
    for ax, init in zip(axes, inits, strict=True):
        if band is not None:
            ax.axhspan(1 / band, band, color="0.85", lw=0, zorder=0)
        curves = {act: (c.measured, c.predicted) for (i, act), c in table.items() if i == init}
        title = f"{init}: E[w²] = {ex.INIT_GAINS[init]:g}/m"
        plots.moment_curves(ax, curves, title=title, legend=False)
    plots.key_below(
        fig,
        axes,
        title=key or f"width {sizes(budget).moment_width}; {plots.MOMENTS_KEY}",
        ncol=3 if band is not None else None,
    )
    return fig


def answer(table: dict[tuple[str, str], ex.MomentCurve], budget: Budget, factor: Positive):
    """The chapter's answer in one small figure: :func:`moment_panels` of the mean over the weight draws
    of E[x_l²] per layer (the value the answer's text judges), with the band within ×``factor`` of 1."""
    means = {
        k: replace(c, measured=[statistics.fmean(layer) for layer in zip(*c.draws, strict=True)]) if c.draws else c
        for k, c in table.items()
    }
    draws = max((len(c.draws) for c in table.values()), default=1)
    key = f"solid: measured (mean of {draws} draws), dashed: the recursion; grey: within ×{factor:g} of 1"
    return moment_panels(means, budget, height=1.6, band=factor, key=key)


def moment_figure(act: str, gain: Positive, depth: Depth, budget: Budget, progress: bool = False):
    """The slider's experiment: measured vs predicted per-layer second moment of a plain MLP."""
    from deepnotes.show import plots

    live_range("depth", depth, sizes(budget).live_depth, budget)
    curve = ex.moment_curve(act, gain, depth, budget)
    fig, (ax,) = plots.new_figure(1, height=3.0)
    plots.moment_curves(
        ax, {act: (curve.measured, curve.predicted)}, title=f"{act}, E[w²] = {gain:g}/m, {depth} layers"
    )
    return fig


def softmax_sweep_figure(probes: dict[tuple[int, bool], ex.SoftmaxProbe]):
    """Experiment 2: mean max weight, mean row entropy and the softmax Jacobian's norm against d,
    without and with 1/√d; the entropy panel marks the uniform row, log(n_keys)."""
    from deepnotes.show import plots

    dims = sorted({dd for dd, _ in probes})
    n_keys = next(iter(probes.values())).n_keys
    fig, axes = plots.new_figure(3, height=2.6)
    for s, style in zip(
        SCALINGS, ("o-", "s"), strict=True
    ):  # markers without a line where the other has one: no dash hidden
        for ax, field in zip(axes, ("max_weight", "entropy", "jacobian_norm"), strict=True):
            ax.semilogx(dims, [getattr(probes[(dd, s)], field) for dd in dims], style, label=_scaling_label(s))
    axes[1].axhline(math.log(n_keys), color="k", ls=":", lw=1, label="uniform")
    for ax, title in zip(axes, ("mean max weight", "mean row entropy (nats)", "‖softmax Jacobian‖_F"), strict=True):
        ax.set_title(title, fontsize=TITLE_PT)
        ax.set_xlabel("d")
    plots.key_below(fig, axes, title=None)
    return fig


def softmax_figure(d: Count, scaled: bool, budget: Budget, progress: bool = False):
    """The slider's second experiment: one row of attention weights at this d, scaled or not,
    titled with the probe's mean max weight and entropy."""
    from deepnotes.show import plots

    b = sizes(budget)
    live_range("d", d, b.live_d, budget)
    probe = ex.softmax_probe(d, scaled, b.softmax_keys, b.softmax_queries)
    row = ex.attention_row(d, scaled, b.softmax_keys)
    fig, (ax,) = plots.new_figure(1, height=2.6)
    ax.bar(range(len(row.weights)), row.weights, color=f"C{SCALINGS.index(scaled)}")  # the sweep's colour
    ax.set_ylim(0, 1)
    ax.set_xlabel("key j")
    ax.set_ylabel("attention weight")
    ax.set_title(
        f"d={d}, {'with' if scaled else 'without'} 1/√d: mean max weight {probe.max_weight:.2f}, "
        f"entropy {probe.entropy:.2f}",
        fontsize=TEXT_PT,
    )
    return fig


def update_figure(runs: dict[bool, ex.UpdateRun]):
    """Experiment 3: ‖ΔW‖/‖W‖ of hidden layer 2 per Adam step, standard (He) vs NTK, with the
    derivation's first-step sizes: η (NTK) and η/RMS(w) (He)."""
    from deepnotes.show import plots

    fig, (ax,) = plots.new_figure(1, height=3.0)
    for ntk in (False, True):
        run = runs[ntk]
        values = run.layer(NTK_LAYER)
        (line,) = ax.semilogy(range(1, len(values) + 1), values, label="NTK" if ntk else "standard (He)")
        if ntk:
            ax.axhline(run.lr, color=line.get_color(), ls=":", lw=1, label="η")
        else:
            rms = math.sqrt(weight_variance("he", run.width, run.width))
            ax.axhline(run.lr / rms, color=line.get_color(), ls=":", lw=1, label="η/RMS(w), He")
    ax.set_xlabel("step")
    ax.set_ylabel(f"‖ΔW‖/‖W‖ (hidden layer {NTK_LAYER + 1})")
    ax.legend(fontsize=TEXT_PT)
    return fig


def model_code():
    """The code this chapter is about, read from the package when the cell runs (file and line numbers
    included, so the page shows what the experiments run): ``layer_norm_input_grad``."""
    from deepnotes.chapters.initialization.norms import layer_norm_input_grad
    from deepnotes.show.source import source_of

    return source_of(
        layer_norm_input_grad, "LayerNorm's input gradient in closed form (and source 000's eq. (15) beside it)"
    )
