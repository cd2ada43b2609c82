"""Figures of the chapter "Post-Norm vs Pre-Norm": each takes measurements of
:mod:`.experiments` (or runs one) and returns a matplotlib Figure, in the book's one palette."""

from __future__ import annotations

import math
import statistics

import numpy as np

from deepnotes.chapters.post_vs_pre_norm import experiments as ex
from deepnotes.core.config import Budget
from deepnotes.core.measure import loglog_slope
from deepnotes.core.validate import Depth, NonNegativeCount, Positive, Probability
from deepnotes.show.palette import colour
from deepnotes.show.readable import TEXT_PT, TITLE_PT

FIGURES = 7  # the figures the page shows besides its sliders' frames (tests/test_book.py counts them)

LOG_FLOOR = 1e-6  # added before a log axis/log10 so an exact 0 stays drawable
UPDATE_LOG_FLOOR = 1e-12


def identity_path(probes: dict[str, list[ex.StreamProbe]]):
    """Per block at init: cos(x_l, x_0) measured (solid) and predicted (dashed), the stream's RMS,
    and the gradient norm reaching each block; one line per style, its seed 0 (the verdicts read every seed)."""
    from deepnotes.show import plots

    probes = {norm: seeds[0] for norm, seeds in probes.items()}
    depth = len(next(iter(probes.values())).grad_norms)
    fig, axes = plots.new_figure(3, height=3.0)
    for norm, p in probes.items():
        c = colour(norm)
        axes[0].plot(p.cos_x0, color=c, label=norm)
        axes[0].plot(p.predicted_cos, "--", color=c, lw=1)
        axes[1].semilogy(p.rms, color=c, label=norm)
        axes[2].semilogy(range(1, depth + 1), p.grad_norms, color=c, label=norm)
    axes[0].set_ylabel(r"cos$(x_l, x_0)$ (dashed: derivation)")
    axes[1].set_ylabel("RMS of $x_l$")
    axes[2].set_ylabel(r"$\|\partial L/\partial\theta_l\|$")
    for ax in axes:
        ax.set_xlabel("block l")
        ax.legend(fontsize=TEXT_PT)
    axes[0].set_title(f"N = {depth}: identity path", fontsize=TITLE_PT)
    axes[1].set_title("stream scale", fontsize=TITLE_PT)
    axes[2].set_title("gradient per block", fontsize=TITLE_PT)
    return fig


SHORT_NAMES = {"rezero (trained gates)": "rezero", "rezero (fixed-step gates)": "rezero, fixed step"}
# each optimizer's marker, its fill and its name in the key
OPTIMIZER_MARKS = {"adam": ("o", "full", "Adam"), "sgd": ("s", "none", "SGD")}
ROW_OFFSET = 0.17  # Adam's point sits this far above its variant's row, SGD's as far below


def _identity_panel(ax, probes: dict[str, list[ex.StreamProbe]]) -> None:
    """cos(x_l, x_0) per block, the median over seeds (solid, a band over their range) and the derivation's
    weight from the measured branch ratios (dashed, median over seeds), one line per style."""
    for norm, seeds in probes.items():
        blocks = range(len(seeds[0].cos_x0))
        cos = np.array([p.cos_x0 for p in seeds])
        ax.plot(blocks, np.median(cos, axis=0), color=colour(norm), label=norm)
        ax.fill_between(blocks, cos.min(axis=0), cos.max(axis=0), color=colour(norm), alpha=0.2, lw=0)
        ax.plot(blocks, np.median([p.predicted_cos for p in seeds], axis=0), "--", color=colour(norm), lw=1)
    ax.plot([], [], "k--", lw=1, label="derivation")
    ax.axhline(0, color="k", lw=0.5)
    ax.set_xlabel("block l")
    ax.set_ylabel(r"weight of $x_0$: cos$(x_l, x_0)$")
    ax.set_title(f"at init, N = {len(next(iter(probes.values()))[0].grad_norms)}", fontsize=TITLE_PT)


def _learned_panel(ax, runs: dict[str, dict], n_layers: Depth, threshold: Probability) -> None:
    """Fraction learned per variant (rows) and optimizer (Adam filled circles, SGD hollow squares): the
    median over seeds with a bar over their range; a diverged seed sits at the left edge, an ✕ where the
    median diverged. The dotted line is the threshold a run needs to count as trained."""
    names = list(next(iter(runs.values())))
    finite = [f for rs in runs.values() for hs in rs.values() for f in (h.fraction_learned() for h in hs)]
    finite = [f for f in finite if math.isfinite(f)]
    lo = min([0.0, *finite])
    edge = lo - 0.15 * (max([threshold, 1.0, *finite]) - lo)  # where a diverged seed is drawn
    for opt, sign in zip(runs, (1, -1), strict=False):
        marker, fill, _ = OPTIMIZER_MARKS[opt]
        for row, name in enumerate(names):
            shown = [f if math.isfinite(f) else edge for f in (h.fraction_learned() for h in runs[opt][name])]
            med, y = statistics.median(shown), len(names) - 1 - row + sign * ROW_OFFSET
            c = colour(name)
            ax.errorbar(
                [med],
                [y],
                xerr=[[med - min(shown)], [max(shown) - med]],
                fmt=marker,
                fillstyle=fill,
                ms=5,
                capsize=2,
                color=c,
            )
            if med == edge:
                ax.plot([edge], [y], "x", ms=8, mew=2, color=c)
    for opt, (marker, fill, name) in OPTIMIZER_MARKS.items():
        if opt in runs:
            ax.plot([], [], marker, fillstyle=fill, color="k", ls="none", label=name)
    ax.axvline(threshold, color="k", ls=":", lw=1, label=f"trained: {threshold:g}")
    ax.axvline(0, color="k", lw=0.5)
    ax.set_yticks(range(len(names)), [SHORT_NAMES.get(n, n) for n in reversed(names)], fontsize=TEXT_PT)
    ax.set_ylim(-0.6, len(names) - 0.4)
    ax.set_xlabel("fraction learned (0 plateau, 1 floor)")
    ax.set_title(f"trained, N = {n_layers}", fontsize=TITLE_PT)


def answer(probes: dict[str, list[ex.StreamProbe]], runs: dict[str, dict], n_layers: Depth, threshold: Probability):
    """The chapter's answer in one small figure: the identity path's weight per block at init (Experiment 1,
    every style) beside the fraction learned of every trained variant under Adam and SGD (Experiment 2, at
    ``n_layers`` blocks); one key under both."""
    from deepnotes.show import plots

    fig, (ax_id, ax_tr) = plots.new_figure(2, width=6.0, height=2.4)
    _identity_panel(ax_id, probes)
    _learned_panel(ax_tr, runs, n_layers, threshold)
    handles, labels = (
        a + b for a, b in zip(ax_id.get_legend_handles_labels(), ax_tr.get_legend_handles_labels(), strict=True)
    )
    fig.legend(handles, labels, fontsize=TEXT_PT, ncol=4, loc="outside lower center", frameon=False)
    return fig


def depth_sweep(sweep: dict[tuple[str, int], ex.StreamProbe]):
    """Across depths: |cos(x_N, x_0)| at the top and ‖g_1‖/‖g_N‖, one line per style."""
    from deepnotes.show import plots

    styles = list(dict.fromkeys(norm for norm, _ in sweep))
    depths = sorted({n for _, n in sweep})
    fig, axes = plots.new_figure(2, height=3.0)
    for norm in styles:
        tops = [abs(sweep[(norm, n)].cos_x0[-1]) + LOG_FLOOR for n in depths]
        ratio = [sweep[(norm, n)].grad_norms[0] / sweep[(norm, n)].grad_norms[-1] for n in depths]
        axes[0].semilogy(depths, tops, "o-", color=colour(norm), label=norm)
        axes[1].semilogy(depths, ratio, "o-", color=colour(norm), label=norm)
    axes[0].set_ylabel(r"|cos$(x_N, x_0)$|")
    axes[1].set_ylabel(r"$\|g_1\| / \|g_N\|$")
    for ax in axes:
        ax.set_xlabel("depth N")
        ax.legend(fontsize=TEXT_PT)
    return fig


def training_losses(runs: dict[str, dict], n_layers: Depth, lrs: dict[str, float]):
    """Loss curves of every variant, one panel per optimizer (floor dashed, plateau dotted): the
    median over seeds, with a band from the lowest to the highest seed."""
    from deepnotes.show import plots

    fig, axes = plots.new_figure(len(runs), height=2.8)
    for ax, opt in zip(axes, runs, strict=True):
        plots.loss_curves(ax, runs[opt], title=f"N = {n_layers}, {opt.upper()} (lr {lrs[opt]:g})", legend=False)
    plots.key_below(fig, axes, title=plots.SEEDS_KEY)
    return fig


def update_maps(runs: dict[str, dict], show: list[tuple[str, str]]):
    """log10 ‖Δθ_l‖/‖θ_l‖ per block (rows) and tracked step (columns) of the runs in ``show``
    ((optimizer, label) pairs), seed 0 of each."""
    from deepnotes.show import plots

    fig, axes = plots.new_figure(len(show), height=3.0)
    for ax, (opt, name) in zip(axes, show, strict=True):
        h = runs[opt][name][0]
        ax.set_title(f"{opt.upper()}: {name} (seed 0)", fontsize=TITLE_PT)
        if not h.update_steps:  # stopped before its first tracked step (diverged at step 0, say)
            note = h.divergence_note() if h.diverged else "no step tracked"
            ax.text(0.5, 0.5, f"{note}:\nno update to show", ha="center", va="center", transform=ax.transAxes)
            ax.set_axis_off()
            continue
        upd = np.array(h.block_updates) + UPDATE_LOG_FLOOR
        im = ax.imshow(
            np.log10(upd.T),
            aspect="auto",
            origin="lower",
            cmap="viridis",
            extent=(h.update_steps[0], h.update_steps[-1], 0.5, upd.shape[1] + 0.5),
        )
        ax.set_xlabel("step")
        ax.set_ylabel("block l")
        fig.colorbar(im, ax=ax, label=r"log$_{10}$ ‖Δθ_l‖/‖θ_l‖")
    return fig


def slider_result(result: ex.SliderResult):
    """Per-block gradient norms at init (left) and the loss of the short Adam run (right)."""
    from deepnotes.show import plots

    fig, (ax_g, ax_l) = plots.new_figure(2, height=2.6)
    ax_g.semilogy(range(1, result.depth + 1), result.probe.grad_norms, color=colour(result.norm))
    ax_g.set_xlabel("block l")
    ax_g.set_ylabel(r"$\|\partial L/\partial\theta_l\|$ at init")
    beta = result.beta if result.beta is not None else "default"
    ax_g.set_title(f"N={result.depth}, {result.norm}, β={beta}", fontsize=TITLE_PT)
    title = f"Adam lr {result.lr:g}, warmup {result.warmup}"
    plots.loss_curves(ax_l, {result.norm: result.history}, title=title, legend=False)
    plots.key_below(fig, [ax_l], title=None)
    return fig


def slider_figure(
    depth: Depth,
    norm: str,
    warmup: NonNegativeCount = 0,
    beta: Positive | None = None,
    lr: Positive | None = None,
    *,
    budget: Budget,
    progress: bool = False,
):
    """The slider's render function: runs :func:`.experiments.slider_experiment` and draws it."""
    return slider_result(ex.slider_experiment(depth, norm, warmup, beta, lr, budget=budget, progress=progress))


# Reproducing the papers


def fitted_constant(measured, shape) -> float:
    """The C of a prediction C·shape(N) known up to a constant: exp(mean(log measured − log shape))
    (the least-squares fit on log axes), so the dashed curve shows the predicted growth, not a level."""
    logs = [np.log(m) - np.log(s) for m, s in zip(measured, shape, strict=True) if m > 0 and s > 0]
    return float(np.exp(np.mean(logs)))


def _depth_ticks(ax, depths) -> None:
    """Log-scaled x axis labelled at the measured depths only."""
    from matplotlib.ticker import NullFormatter

    ax.set_xticks(list(depths), [str(n) for n in depths])
    ax.xaxis.set_minor_formatter(NullFormatter())


def xiong_figure(probe: ex.XiongProbe):
    """Xiong et al. 2020 at toy scale: (a) E‖x_l‖²/d per layer at the deepest stack against Lemma 2
    (Pre-LN between (1 + l/2)d and (1 + 3l/2)d; Post-LN's FFN sum at 3d/2, its LN outputs at d);
    (b) Theorem 1, ‖∂L/∂W^{2,L}‖_F against L with the predicted slopes 0 and −1/2; (c) Fig. 3(a,b),
    ‖∂L/∂W^{2,l}‖_F (solid) and ‖∂L/∂W^{1,l}‖_F (dashed) per layer at the profile depth;
    (a)'s key in the fourth slot."""
    from deepnotes.chapters.post_vs_pre_norm.derive import lemma2_at
    from deepnotes.show import plots

    d, deep = probe.d_model, max(n for _, n in probe.stacks)
    bounds = lemma2_at(d, probe.d_ff, deep)
    layers = list(range(deep + 1))
    fig, (ax_n, ax_g, ax_l, ax_key) = plots.new_figure(3, height=2.9, key=True)
    post, pre = probe.stacks[("post", deep)], probe.stacks[("pre", deep)]
    ax_n.semilogy(layers, [s / d for s in pre.sq_norms], "o-", ms=2.5, color=colour("pre"), label=r"pre: $\|x_l\|^2/d$")
    ax_n.semilogy(
        layers[1:],
        [s / d for s in post.ffn_sum_sq],
        "o-",
        ms=2.5,
        color=colour("post"),
        label=r"post: $\|x^{post,5}_l\|^2/d$",
    )
    ax_n.semilogy(
        layers, [s / d for s in post.sq_norms], ":", color=colour("post"), label=r"post: $\|x_l\|^2/d$ (after LN)"
    )
    ax_n.plot(layers, bounds["paper pre_lower"], "k--", lw=1, label="Lemma 2 (paper, $d_{ff}=d$)")
    ax_n.plot(layers, bounds["paper pre_upper"], "k--", lw=1)
    ax_n.plot(layers, bounds["paper post_ffn_sum"], "k--", lw=1)
    ax_n.plot(
        layers, bounds["ours pre_lower"], color="gray", ls=":", lw=1, label=f"Lemma 1-2 at $d_{{ff}}={probe.d_ff}$"
    )
    ax_n.plot(layers, bounds["ours pre_upper"], color="gray", ls=":", lw=1)
    plots.label_axes(ax_n, "layer l", r"$E\|\cdot\|^2 / d$", f"Lemma 2: hidden-state norms, L = {deep}", legend=None)
    plots.legend_panel(ax_key, ax_n, title="top left")  # panel (a)'s key: five series, too many to sit on the curves
    for norm, slope in (("post", 0.0), ("pre", -0.5)):
        grads = probe.last_w2(norm)
        for depth in probe.depths:
            per_seed = probe.stacks[(norm, depth)].last_w2_per_seed
            ax_g.loglog([depth] * len(per_seed), per_seed, ".", color=colour(norm), alpha=0.3)
        ax_g.loglog(
            probe.depths,
            grads,
            "o-",
            color=colour(norm),
            label=f"{norm}: slope {loglog_slope(probe.depths, grads):.2f}",
        )
        shape = [n**slope for n in probe.depths]
        c = fitted_constant(grads, shape)
        ax_g.loglog(
            probe.depths, [c * s for s in shape], "--", color=colour(norm), lw=1, label=f"Theorem 1: slope {slope:g}"
        )
    _depth_ticks(ax_g, probe.depths)
    plots.label_axes(ax_g, "depth L", r"$\|\partial L/\partial W^{2,L}\|_F$ (dots: seeds)", "Theorem 1: last FFN layer")
    _per_layer_panel(ax_l, probe)
    return fig


def _per_layer_panel(ax, probe: ex.XiongProbe) -> None:
    """Panel (c) of :func:`xiong_figure`: ‖∂L/∂W^{2,l}‖_F (solid) and ‖∂L/∂W^{1,l}‖_F (dashed) per layer."""
    from deepnotes.show import plots

    n = probe.profile_depth
    for norm in ex.PAPER_STYLES:
        stack = probe.stacks[(norm, n)]
        ax.plot(range(1, n + 1), stack.w2_grads, "o-", color=colour(norm), label=f"{norm}: $W^2$")
        ax.plot(range(1, n + 1), stack.w1_grads, "--", color=colour(norm), label=f"{norm}: $W^1$")
    plots.label_axes(ax, "layer l", r"$\|\partial L/\partial W^{\cdot,l}\|_F$", f"Fig. 3(a,b): per layer, L = {n}")


def liu_figure(probe: ex.LiuProbe):
    """Liu et al. 2020 at toy scale: E‖F(x, W) − F(x, W + δ)‖² against depth N (mean over seeds, the
    dots each seed), with Theorem 2's predicted growth dashed: n·v/(1+v) = O(N) for Post-LN and
    H_{n+1} − 1 = O(log N) for Pre-LN (n = 2N sublayers), each scaled by its fitted constant C."""
    from deepnotes.chapters.post_vs_pre_norm.derive import liu_shapes
    from deepnotes.show import plots

    shapes = liu_shapes(probe.depths)
    label = {"post": "O(N)", "pre": "O(log N)"}
    fig, (ax,) = plots.new_figure(1, height=3.3)
    for norm in ex.PAPER_STYLES:
        for n, per_seed in zip(probe.depths, probe.changes[norm], strict=True):
            ax.loglog([n] * len(per_seed), per_seed, ".", color=colour(norm), alpha=0.3)
        mean = probe.mean(norm)
        ax.loglog(
            probe.depths, mean, "o-", color=colour(norm), label=f"{norm}: slope {loglog_slope(probe.depths, mean):.2f}"
        )
        c = fitted_constant(mean, shapes[norm])
        ax.loglog(
            probe.depths,
            [c * s for s in shapes[norm]],
            "--",
            color=colour(norm),
            lw=1,
            label=f"Theorem 2: {label[norm]}, slope {loglog_slope(probe.depths, shapes[norm]):.2f}",
        )
    _depth_ticks(ax, probe.depths)
    plots.label_axes(
        ax,
        "depth N (blocks)",
        r"$E\|F(x,W) - F(x,W+\delta)\|^2$ (dots: seeds)",
        f"output change, δ = {probe.perturbation:g}·RMS(W)·N(0, 1)",
    )
    return fig


def model_code():
    """The code this chapter is about, read from the package when the cell runs (file and line numbers
    included, so the page shows what the experiments run): ``Residual.forward``."""
    from deepnotes.core.models import Residual
    from deepnotes.show.source import source_of

    return source_of(
        Residual.forward,
        "one residual sublayer in every norm style (the readable specification the engine is tested against)",
    )
