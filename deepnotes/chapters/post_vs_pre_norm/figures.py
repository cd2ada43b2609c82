"""Figures of the chapter "Post-Norm vs Pre-Norm": each takes measurements of
:mod:`.experiments` (or runs one) and returns a matplotlib Figure, in the book's one palette."""
from __future__ import annotations

import numpy as np

from deepnotes.chapters.post_vs_pre_norm import experiments as ex
from deepnotes.show.palette import colour

LOG_FLOOR = 1e-6            # added before a log axis/log10 so an exact 0 stays drawable
UPDATE_LOG_FLOOR = 1e-12


def identity_path(probes: dict[str, ex.StreamProbe]):
    """Per block at init: cos(x_l, x_0) measured (solid) and predicted (dashed), the stream's RMS,
    and the gradient norm reaching each block; one line per style."""
    from deepnotes.show import plots
    depth = len(next(iter(probes.values())).grad_norms)
    fig, axes = plots.new_figure(3, width=3.8, height=3.0)
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
        ax.legend(fontsize=7)
    axes[0].set_title(f"N = {depth}: identity path", fontsize=9)
    axes[1].set_title("stream scale", fontsize=9)
    axes[2].set_title("gradient per block", fontsize=9)
    fig.tight_layout()
    return fig


def depth_sweep(sweep: dict[tuple[str, int], ex.StreamProbe]):
    """Across depths: |cos(x_N, x_0)| at the top and ‖g_1‖/‖g_N‖, one line per style."""
    from deepnotes.show import plots
    styles = list(dict.fromkeys(norm for norm, _ in sweep))
    depths = sorted({n for _, n in sweep})
    fig, axes = plots.new_figure(2, width=4.2, height=3.0)
    for norm in styles:
        tops = [abs(sweep[(norm, n)].cos_x0[-1]) + LOG_FLOOR for n in depths]
        ratio = [sweep[(norm, n)].grad_norms[0] / sweep[(norm, n)].grad_norms[-1] for n in depths]
        axes[0].semilogy(depths, tops, "o-", color=colour(norm), label=norm)
        axes[1].semilogy(depths, ratio, "o-", color=colour(norm), label=norm)
    axes[0].set_ylabel(r"|cos$(x_N, x_0)$|")
    axes[1].set_ylabel(r"$\|g_1\| / \|g_N\|$")
    for ax in axes:
        ax.set_xlabel("depth N")
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def training_losses(runs: dict[str, dict], n_layers: int, lrs: dict[str, float]):
    """Loss curves of every variant, one panel per optimizer (floor dashed, plateau dotted): the
    median over seeds, with a band from the lowest to the highest seed."""
    from deepnotes.show import plots
    fig, axes = plots.new_figure(len(runs), width=4.8, height=3.4)
    for ax, opt in zip(axes, runs):
        plots.loss_curves(ax, runs[opt], title=f"N = {n_layers}, {opt.upper()} (lr {lrs[opt]:g})")
    fig.tight_layout()
    return fig


def update_maps(runs: dict[str, dict], show: list[tuple[str, str]]):
    """log10 ‖Δθ_l‖/‖θ_l‖ per block (rows) and tracked step (columns) of the runs in ``show``
    ((optimizer, label) pairs), seed 0 of each."""
    from deepnotes.show import plots
    fig, axes = plots.new_figure(len(show), width=3.8, height=3.0)
    for ax, (opt, name) in zip(axes, show):
        h = runs[opt][name][0]
        upd = np.array(h.block_updates) + UPDATE_LOG_FLOOR
        im = ax.imshow(np.log10(upd.T), aspect="auto", origin="lower", cmap="viridis",
                       extent=(h.update_steps[0], h.update_steps[-1], 0.5, upd.shape[1] + 0.5))
        ax.set_title(f"{opt.upper()}: {name} (seed 0)", fontsize=9)
        ax.set_xlabel("step")
        ax.set_ylabel("block l")
        fig.colorbar(im, ax=ax, label=r"log$_{10}$ ‖Δθ_l‖/‖θ_l‖")
    fig.tight_layout()
    return fig


def slider_result(result: ex.SliderResult):
    """Per-block gradient norms at init (left) and the loss of the short Adam run (right)."""
    from deepnotes.show import plots
    fig, (ax_g, ax_l) = plots.new_figure(2, width=3.6, height=2.6)
    ax_g.semilogy(range(1, result.depth + 1), result.probe.grad_norms, color=colour(result.norm))
    ax_g.set_xlabel("block l")
    ax_g.set_ylabel(r"$\|\partial L/\partial\theta_l\|$ at init")
    beta = result.beta if result.beta is not None else "default"
    ax_g.set_title(f"N={result.depth}, {result.norm}, β={beta}", fontsize=8)
    plots.loss_curves(ax_l, {result.norm: result.history}, title=f"Adam lr {result.lr:g}, warmup {result.warmup}")
    fig.tight_layout()
    return fig


def slider_figure(depth: int, norm: str, warmup: int = 0, beta: float | None = None, lr: float | None = None,
                  budget=None, progress: bool = False):
    """The slider's render function: runs :func:`.experiments.slider_experiment` and draws it."""
    return slider_result(ex.slider_experiment(depth, norm, warmup, beta, lr, budget, progress))
