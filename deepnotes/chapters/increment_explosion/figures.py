"""Figures of the chapter "Increment explosion": each takes the measurements of :mod:`.experiments`
(or runs the slider's cached experiment) and returns a matplotlib Figure."""

from __future__ import annotations

from deepnotes.chapters.increment_explosion import experiments as ex
from deepnotes.chapters.increment_explosion.budget import sizes
from deepnotes.core.config import Budget
from deepnotes.core.train import History
from deepnotes.core.validate import Depth, Finite, NonNegativeCount, Positive
from deepnotes.show.readable import TITLE_PT

FIGURES = 5  # the figures the page shows besides its sliders' frames (tests/test_book.py counts them)


def _loss_change_panels(axes, sweep: ex.LossChangeSweep) -> list[dict[str, float]]:
    """−⟨∇L, Δθ⟩/η against N, one log-log panel per optimizer (the derivation's Post-LN/Pre-LN slope dashed);
    returns each panel's fitted slopes."""
    from deepnotes.show import plots

    slopes = []
    for ax, opt in zip(axes, sweep.optimizers, strict=True):
        series = {v: sweep.first_order_per_lr(v, opt) for v in sweep.variants}
        slopes.append(
            plots.loglog_sweep(
                ax,
                sweep.depths,
                series,
                predicted_slope=ex.predicted_slope("post", opt),
                ylabel=r"$-\langle\nabla\mathcal{L},\Delta\theta\rangle/\eta$",
                legend=False,
            )
        )
        ax.set_title(f"{opt.upper()} (lr {sweep.lrs[opt]:g})", fontsize=TITLE_PT)
    return slopes


def answer(sweep: ex.LossChangeSweep):
    """The chapter's answer in one small figure: the loss change of one step against depth under SGD and
    Adam (Experiment 1's first two panels, :func:`loss_change_figure`), one key with the fitted slopes."""
    from deepnotes.show import plots

    fig, axes = plots.new_figure(len(sweep.optimizers), width=6.0, height=1.9)
    slopes = _loss_change_panels(axes, sweep)
    predicted = [ex.predicted_slope("post", opt) for opt in sweep.optimizers]
    plots.slopes_key(fig, axes, slopes, [opt.upper() for opt in sweep.optimizers], predicted)
    return fig


def loss_change_figure(sweep: ex.LossChangeSweep):
    """Experiment 1: −⟨∇L, Δθ⟩/η against N for SGD and Adam (log-log, with the derivation's slope
    for Post-LN/Pre-LN dashed), and the per-block gradient norms at the deepest probed depth."""
    from deepnotes.show import plots

    fig, axes = plots.new_figure(3, height=2.6)
    slopes = _loss_change_panels(axes[:2], sweep)  # the third panel: block norms
    ax = axes[2]
    for v in sweep.variants:
        norms = sweep.deepest_block_grad_norms(v)
        ax.semilogy(range(1, len(norms) + 1), norms, color=plots.colour(v))
    plots.label_axes(
        ax, "block l", r"$\|\partial L/\partial\theta_l\|$ at init", f"N = {sweep.depths[-1]}", legend=None
    )
    predicted = [ex.predicted_slope("post", opt) for opt in sweep.optimizers]
    plots.slopes_key(fig, axes, slopes, [opt.upper() for opt in sweep.optimizers], predicted)
    return fig


def early_update_figure(updates: dict[str, dict[tuple[str, int], list[History]]], budget: Budget):
    """Experiment 2: the model update per step with every parameter trained (darker = deeper; seed 0), and
    the first-step update against depth for each parameter set (``updates[which]``; the median over seeds)."""
    from deepnotes.show import plots

    depths = sizes(budget).update_depths
    fig, axes = plots.new_figure(3, height=2.6)
    _update_curves(axes[0], updates["all"], depths, f"all parameters; N = {depths} (darker = deeper)")
    slopes = []
    for ax, which in zip(axes[1:], ex.PARAM_SETS, strict=True):
        steps = ex.first_step_updates(updates[which], depths)
        slopes.append(plots.loglog_sweep(ax, depths, steps, ylabel="update after the first step", legend=False))
        ax.set_title(f"first step, {which} trained", fontsize=TITLE_PT)
    plots.slopes_key(fig, axes, slopes, [f"{which} trained" for which in ex.PARAM_SETS])
    return fig


def _update_curves(ax, updates: dict[tuple[str, int], list[History]], depths, title: str) -> None:
    """The model update per step of every variant at every depth (darker = deeper; seed 0), log scale."""
    from deepnotes.show import plots

    for v in ex.first_step_updates(updates, depths):
        for k, n in enumerate(depths):
            h = updates[(v, n)][0]
            ax.plot(
                range(1, len(h.update_rms) + 1),
                h.update_rms,
                color=plots.colour(v),
                alpha=0.3 + 0.7 * k / len(depths),
                label=v if n == depths[-1] else None,
            )
    ax.set_xlabel("step t")
    ax.set_ylabel(r"RMS of $F(x,\theta_t)-F(x,\theta_0)$")
    ax.set_yscale("log")
    ax.set_title(title, fontsize=TITLE_PT)


def paper_size_figure(updates: dict[tuple[str, int], list[History]], budget: Budget):
    """DeepNet Fig. 5 at the paper's 64-128-2: the update per step and the first-step update against depth."""
    from deepnotes.show import plots

    depths = sizes(budget).update_depths
    d_model, d_ff, heads = sizes(budget).paper_shape
    fig, axes = plots.new_figure(2, height=2.6)
    _update_curves(axes[0], updates, depths, f"{d_model}-{d_ff}-{heads}; N = {depths} (darker = deeper)")
    steps = ex.first_step_updates(updates, depths)
    slopes = plots.loglog_sweep(axes[1], depths, steps, ylabel="update after the first step", legend=False)
    axes[1].set_title(f"first step, {d_model}-{d_ff}-{heads}, all trained", fontsize=TITLE_PT)
    plots.slopes_key(fig, axes, [slopes], ["first step"])
    return fig


def _short(lr: Finite) -> str:
    """3e-3, not 0.003 or 3e-03."""
    mantissa, exponent = f"{lr:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def training_figure(runs: dict[int, dict[str, list[History]]], budget: Budget):
    """Experiment 3: the loss curves of :func:`experiments.training_comparisons`, one panel per depth
    (the median over seeds, a band from the lowest to the highest seed)."""
    from deepnotes.show import plots

    lr = _short(budget.warmup.lr)
    fig, axes = plots.new_figure(len(runs), height=2.8)
    for ax, (n, r) in zip(axes, runs.items(), strict=True):
        plots.loss_curves(ax, r, title=f"N = {n} blocks, Adam, peak lr {lr}", legend=False)
    plots.key_below(fig, axes, title=plots.SEEDS_KEY)
    return fig


def slider_figure(
    depth: Depth,
    norm: str,
    optimizer: str,
    lr: Positive | None = None,
    warmup: NonNegativeCount = 0,
    *,
    budget: Budget,
    progress: bool = False,
):
    """The slider's figure: :func:`experiments.slider_run` at one setting; loss and
    ‖F(x,θ_t) − F(x,θ_0)‖ per step."""
    from deepnotes.show import plots

    res = ex.slider_run(depth, norm, optimizer, lr, warmup, budget=budget, progress=progress)
    fig, (ax_loss, ax_upd) = plots.new_figure(2, height=2.6)
    title = f"N={res.depth}, {res.norm}, {res.optimizer} η={res.lr:g}, warmup {res.warmup}"
    plots.loss_curves(ax_loss, {norm: res.history}, title=title, legend=False)
    plots.update_curves(ax_upd, {norm: res.history}, title="model update")
    plots.key_below(fig, [ax_loss, ax_upd], title=None)
    return fig


def model_code():
    """The code this chapter is about, read from the package when the cell runs (file and line numbers
    included, so the page shows what the experiments run): ``core_derive.loss_change``."""
    from deepnotes.core import derive as core_derive
    from deepnotes.show.source import source_of

    return source_of(core_derive.loss_change, "the increment ΔL ≈ ⟨∇L, Δθ⟩ under SGD and Adam, derived by SymPy")
