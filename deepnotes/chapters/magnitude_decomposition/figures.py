"""Figures of the chapter "Magnitude decomposition and the DeepNorm scalings". Each function takes
measurements of :mod:`.probes` / :mod:`.experiments` (or runs them, for the slider) and returns a
matplotlib Figure; colours and markers come from :mod:`deepnotes.show.palette`."""

from __future__ import annotations

import math

from deepnotes.chapters.magnitude_decomposition.budget import sizes
from deepnotes.chapters.magnitude_decomposition.experiments import ChoiceRun, run_choices
from deepnotes.chapters.magnitude_decomposition.probes import (
    KINDS,
    LABELS,
    FirstStep,
    GradientSweep,
    IdentityProbe,
    choices,
    predicted_relative_update,
)
from deepnotes.core import scaling
from deepnotes.core.config import Budget, live_range
from deepnotes.core.ensembles import RunContext
from deepnotes.core.measure import loglog_slope
from deepnotes.core.validate import Depth, Positive, choice
from deepnotes.show.palette import MARKERS, PALETTE
from deepnotes.show.readable import TEXT_PT, TITLE_PT

FIGURES = 6  # the figures the page shows besides its sliders' frames (tests/test_book.py counts them)

LEGEND = TEXT_PT  # legend font size: the book's smallest figure text
TITLE = 10  # title font size
LAMB_YLIM = (0.5, 2)  # LAMB's first-step panel spans η/2 … 2η
ANSWER_OPTIMIZERS = ("sgd", "adam")  # the answer's panels: the optimizer DeepNet's constants were derived for, and Adam
ANSWER_SIZE = (6.0, 2.1)  # its width and panel height (in): the key below adds its two rows


def _geometric_mean_ratio(xs, ys) -> float:
    """exp(mean log(y/x)): the constant of a line y ∝ x through the points' geometric centre."""
    return math.exp(sum(math.log(y / x) for x, y in zip(xs, ys, strict=True)) / len(xs))


def gradient_sweep(sweep: GradientSweep):
    """Experiment 1: RMS ∂L/∂λ of each matrix kind against λ/α over the whole grid (left), and against
    α at the middle λ of the grid (right), each with its fitted log-log slope."""
    from deepnotes.show import plots

    fig, (ax_all, ax_a) = plots.new_figure(2, height=2.8)
    j = len(sweep.lambdas) // 2
    for kind in KINDS:
        xs, ys = sweep.series(kind)
        along_alpha = [row[j] for row in sweep.rms[kind]]
        slopes = f"{loglog_slope(xs, ys):.2f} / {loglog_slope(sweep.alphas, along_alpha):.2f}"
        ax_all.loglog(xs, ys, "o", ms=3, alpha=0.8, label=f"{kind}: slopes {slopes}")
        ax_a.loglog(sweep.alphas, along_alpha, "o-")
    xs = sorted(set(sweep.series("fc1")[0]))
    y0 = _geometric_mean_ratio(*sweep.series("fc1"))
    ax_all.loglog(xs, [y0 * x for x in xs], "k--", lw=1, label="prediction ∝ λ/α")
    ax_all.set_xlabel(r"$\lambda/\alpha$")
    ax_all.set_ylabel(r"RMS of $\partial\mathcal{L}/\partial\lambda$")
    ax_all.set_title(f"N = {sweep.n_layers}, all (α, λ) of the grid", fontsize=TITLE)
    ax_a.set_xlabel(r"$\alpha$")
    ax_a.set_title(f"λ = {sweep.lambdas[j]:g}, α varied (prediction: −1)", fontsize=TITLE)
    plots.key_below(fig, [ax_all], title="fitted slopes: all of the grid (left) / α varied (right)")
    return fig


def first_step(first: dict[tuple[str, int, str], FirstStep]):
    """Experiment 2: the first step's ‖ΔW‖/‖W‖ per optimizer against the analysis' prediction
    (1/α for SGD, 1/λ for Adam; flat at η for LAMB, drawn against 1/λ), one line per choice over depths."""
    from deepnotes.show import plots

    fig, axes = plots.new_figure(3, height=3.2)
    for ax, opt in zip(axes, scaling.OPTIMIZERS, strict=True):
        runs = {k: r for k, r in first.items() if k[0] == opt}
        depths = sorted({n for _, n, _ in runs})
        lr = next(iter(runs.values())).lr
        if opt == "lamb":  # the range first: LAMB's points may all lie at η, a flat y range autoscaling warns about
            ax.set_yscale("log")
            ax.set_ylim(LAMB_YLIM[0] * lr, LAMB_YLIM[1] * lr)
        for label in (*scaling.PICKS, "paper"):
            pts = [
                (1 / r.lam if opt == "lamb" else predicted_relative_update(opt, r.alpha, r.lam), r.relative_update)
                for r in (runs[(opt, n, label)] for n in depths)
            ]
            ax.loglog(
                *zip(*pts, strict=True),
                ls="-",
                marker=MARKERS[label],
                mfc="none",
                ms=7,
                color=PALETTE[label],
                label=LABELS[label],
            )
        pred = [predicted_relative_update(opt, r.alpha, r.lam) for r in runs.values()]
        meas = [r.relative_update for r in runs.values()]
        if opt != "lamb":
            c0 = _geometric_mean_ratio(pred, meas)
            xs = [min(pred), max(pred)]
            ax.loglog(xs, [c0 * x for x in xs], "k--", lw=1, label="∝ prediction")
        ax.set_xlabel(
            {"sgd": r"$1/\alpha$", "adam": r"$1/\lambda$", "lamb": r"$1/\lambda$ (prediction: flat at η)"}[opt]
        )
        if opt == "lamb":
            ax.axhline(lr, color="k", ls=":", lw=1, label="η (LAMB's prediction)")
        ax.set_ylabel(r"first-step $\|\Delta W\|/\|W\|$")
        fit = "" if opt == "lamb" else f", fit slope {loglog_slope(pred, meas):.2f}"
        ax.set_title(f"{opt.upper()} lr {lr:g}{fit}", fontsize=TITLE_PT)
    plots.key_below(fig, axes, title=f"points: N = {', '.join(map(str, depths))}")
    return fig


def identity(probes: dict[str, IdentityProbe]):
    """Experiment 3: ‖x_{l+1} − x_l‖/‖x_l‖ per block at init (left) and its mean over blocks 2..N
    against the branch weight λ²/α (right), one colour per setting."""
    from deepnotes.show import plots

    fig, (ax_l, ax_w) = plots.new_figure(2, height=2.8)
    for p in probes.values():
        ax_l.semilogy(range(1, len(p.changes) + 1), p.changes, lw=1.2, color=PALETTE[p.key])
    depth = len(next(iter(probes.values())).changes)
    ax_l.set_xlabel("block l")
    ax_l.set_ylabel(r"$\|x_{l+1}-x_l\|/\|x_l\|$ at init")
    ax_l.set_title(f"N = {depth} (colours as in the right panel)", fontsize=TITLE)
    xs = [p.branch_weight for p in probes.values()]
    ys = [p.mean_change for p in probes.values()]
    for label, p in probes.items():
        ax_w.loglog(
            [p.branch_weight],
            [p.mean_change],
            "o",
            color=PALETTE[p.key],
            label=f"{label} (α={p.alpha:.3g}, λ={p.lam:.3g})",
        )
    ax_w.loglog([min(xs), max(xs)], [min(xs), max(xs)], "k--", lw=1, label="y = λ²/α")
    ax_w.set_xlabel(r"branch weight $\lambda^2/\alpha$")
    ax_w.set_ylabel("mean over blocks 2..N")
    ax_w.set_title(f"fitted slope {loglog_slope(xs, ys):.2f} (prediction 1)", fontsize=TITLE)
    plots.key_below(fig, [ax_w], title=None)
    return fig


def choice_loss_curves(ax, runs: dict[str, ChoiceRun], title: str = "", seeds: bool = False) -> None:
    """:func:`deepnotes.show.plots.loss_curves` for the runs of one setting (choice → run), each labelled
    by its choice and drawn in the choice's colour of :data:`~deepnotes.show.palette.PALETTE`, for one key
    under the figure (the (α, λ) of each choice are in the tables; they differ between panels). With ``seeds``
    each line is the median over the choice's seeds (:meth:`.ChoiceRun.per_seed`) in a band of their range."""
    from deepnotes.show import plots

    names = {k: LABELS[k] for k in runs}
    plots.loss_curves(
        ax,
        {names[k]: [s.history for s in r.per_seed()] if seeds else r.history for k, r in runs.items()},
        title=title,
        colours={names[k]: PALETTE[k] for k in runs},
        legend=False,
    )


def _settings(comp) -> tuple[list[tuple[str, float]], list[int]]:
    """The (optimizer, lr) columns in the order sgd, adam, lamb (by lr), and the depths, of a comparison."""
    settings = sorted({(o, lr) for o, lr, _ in comp}, key=lambda k: (scaling.OPTIMIZERS.index(k[0]), k[1]))
    return settings, sorted({n for _, _, n in comp})


def training_grid(comp: dict[tuple[str, float, int], dict[str, ChoiceRun]]):
    """Experiment 4: the loss curves of every choice, one panel per depth (rows) × (optimizer, lr) (columns)."""
    from deepnotes.show import plots

    settings, depths = _settings(comp)
    fig, axes = plots.new_figure(len(depths) * len(settings), height=2.8)
    for i, n in enumerate(depths):
        for j, (opt, lr) in enumerate(settings):
            choice_loss_curves(axes[i * len(settings) + j], comp[(opt, lr, n)], title=f"N={n}, {opt.upper()} lr {lr:g}")
    plots.key_below(fig, axes, title=None)
    return fig


def answer(comp: dict[tuple[str, float, int], dict[str, ChoiceRun]]):
    """The chapter's answer in one small figure: the loss curves of every choice at the deepest training depth,
    under SGD at its first rate (left) and under Adam (right), each the median over seeds in a band of their range."""
    from deepnotes.show import plots

    settings, depths = _settings(comp)
    panels = [next((s for s in settings if s[0] == opt), None) for opt in ANSWER_OPTIMIZERS]
    if None in panels:
        raise ValueError(f"comp needs runs of {' and '.join(ANSWER_OPTIMIZERS)}: pass training.choice_comparison's")
    fig, axes = plots.new_figure(len(panels), height=ANSWER_SIZE[1], width=ANSWER_SIZE[0])
    for ax, (opt, lr) in zip(axes, panels, strict=True):
        choice_loss_curves(ax, comp[(opt, lr, depths[-1])], f"N={depths[-1]}, {opt.upper()} lr {lr:g}", seeds=True)
    plots.key_below(fig, axes, title=None, ncol=3)  # what the lines and bands are: answer.details, under it
    return fig


def lambda_drift(comp: dict[tuple[str, float, int], dict[str, ChoiceRun]]):
    """Experiment 4: mean λ_F(W_t)/λ_F(W_0) of the β-scaled matrices along training, at the deepest depth."""
    from deepnotes.show import plots

    settings, depths = _settings(comp)
    fig, axes = plots.new_figure(len(settings), height=2.8)
    for ax, (opt, lr) in zip(axes, settings, strict=True):
        for k, r in comp[(opt, lr, depths[-1])].items():
            ax.plot(r.lam_steps, r.lam_ratio, color=PALETTE[k], label=LABELS[k])
        ax.set_xlabel("step")
        ax.set_ylabel(r"mean $\lambda_F(W_t)/\lambda_F(W_0)$")
        ax.set_title(f"N={depths[-1]}, {opt.upper()} lr {lr:g}", fontsize=TITLE_PT)
        ax.legend(fontsize=LEGEND)
    return fig


def slider_figure(depth: Depth, optimizer: str, lr: Positive | None = None, *, budget: Budget, progress: bool = False):
    """The slider's panel at one depth and optimizer: the derived (α, λ, λ²/α) of each choice, and a
    short training run of each (lr: the optimizer's first rate of the budget's ``train_lrs``)."""
    from deepnotes.show import plots

    mb = sizes(budget)
    live_range("depth", depth, mb.live_depth, budget)
    lr = lr if lr is not None else mb.train_lrs[choice("optimizer", optimizer, mb.train_lrs)][0]
    picks = choices(depth, optimizer)
    context = RunContext.here(budget, progress=progress)  # the slider is an entry point: the widget calls it
    runs = run_choices(depth, picks, optimizer, lr, context, steps=mb.slider_steps)
    fig, (ax_c, ax_l) = plots.new_figure(2, height=2.8)
    xs = range(len(picks))
    constants = {
        "α": [a for a, _ in picks.values()],
        "λ": [lam for _, lam in picks.values()],
        "λ²/α": [scaling.branch_weight(a, lam) for a, lam in picks.values()],
    }
    width = 0.27
    for k, (name, values) in enumerate(constants.items()):
        ax_c.bar([x + width * (k - 1) for x in xs], values, width=width, label=name)
    ax_c.set_yscale("log")
    ax_c.set_xticks(list(xs), [LABELS[p] for p in picks], fontsize=LEGEND)
    ax_c.set_title(f"derived constants, N={depth}, {optimizer}", fontsize=TITLE_PT)
    ax_c.legend(fontsize=LEGEND)
    choice_loss_curves(ax_l, runs, title=f"{optimizer} lr {lr:g}, {mb.slider_steps} steps")
    plots.key_below(fig, [ax_l], title=None)
    return fig


def model_code():
    """The code this chapter is about, read from the package when the cell runs (file and line numbers
    included, so the page shows what the experiments run): ``Block.reset_parameters``."""
    from deepnotes.core.models import Block
    from deepnotes.show.source import source_of

    return source_of(
        Block.reset_parameters,
        "DeepNet's initialization: Xavier-normal with gain β on v, out, fc1 and fc2, gain 1 on q and k",
    )
