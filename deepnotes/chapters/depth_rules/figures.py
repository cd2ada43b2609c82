"""The chapter's figures: the answer (every rule's first-step loss change against depth, SGD and Adam), the frontier
(fraction learned against depth), the depth × rate map, and the slider's panel (one rule at one depth)."""

from __future__ import annotations

import statistics

from deepnotes.chapters.depth_rules import experiments as ex
from deepnotes.chapters.depth_rules.budget import sizes
from deepnotes.chapters.depth_rules.reader import Trial
from deepnotes.core.config import Budget
from deepnotes.core.validate import Depth, Probability
from deepnotes.show.readable import TEXT_PT

FIGURES = 3  # the figures the page shows besides its sliders' frames (tests/test_book.py counts them)
NAMES = {"sgd": "SGD", "adam": "Adam"}


def answer(steps: ex.FirstSteps):
    """−⟨∇L, Δθ⟩ of the first step per unit of the base rate (mean over seeds) against N, every rule, one panel per
    optimizer; the key gives each rule's fitted slope in both."""
    from deepnotes.show import plots

    fig, axes = plots.new_figure(2, height=1.7)
    slopes = [
        plots.loglog_sweep(
            ax, steps.depths, {r: steps.mean(r, opt) for r in steps.rules}, ylabel=f"−ΔL/η, {NAMES[opt]}", legend=False
        )
        for ax, opt in zip(axes, ex.OPTIMIZERS, strict=True)
    ]
    plots.slopes_key(fig, axes, slopes, [NAMES[o] for o in ex.OPTIMIZERS])
    return fig


def model_code():
    """The code this chapter is about, read from the package when the cell runs (file and line numbers included):
    ``engine_config``, how a rule becomes the block the engine trains."""
    from deepnotes.core.rules import engine_config
    from deepnotes.show.source import source_of

    return source_of(engine_config, "a residual rule as the engine builds it")


def _fraction_axes(ax, xs, xlabel: str, title: str, threshold: Probability) -> None:
    from deepnotes.show import plots

    ax.set_xscale("log")
    ax.set_xticks(xs, [f"{x:g}" if x >= 1 else f"{x:.2g}".replace("e-0", "e-") for x in xs], fontsize=TEXT_PT)
    ax.minorticks_off()
    ax.axhline(threshold, color="k", ls=":", lw=1)
    ax.axhline(0, color="k", lw=0.5)
    plots.label_axes(ax, xlabel, "fraction learned", title, legend=None)


def frontier(runs: ex.RuleRuns, budget: Budget, threshold: Probability):
    """Fraction learned (median over seeds, the bar spanning them; ✕: diverged) against depth at the chapter's rate,
    every rule; the dotted line is the threshold a run must pass to count as trained."""
    from deepnotes.show import plots

    sub = sizes(budget)
    fig, (ax,) = plots.new_figure(1, height=2.8)
    depths = sub.frontier_depths
    for rule in runs.rules:
        plots.fractions_over_seeds(ax, depths, [runs.fractions(rule, n, sub.lr, sub.train_steps) for n in depths], rule)
    _fraction_axes(ax, depths, "depth N (blocks)", f"Adam {sub.lr:g} × s(N), {sub.train_steps} steps", threshold)
    plots.key_below(fig, [ax])
    return fig


def rate_map(runs: ex.RuleRuns, budget: Budget, threshold: Probability):
    """The depth × rate map: one panel per map depth, fraction learned against the Adam base rate, every rule; a
    rule's best rate is its curve's peak, and it transfers where the peak stays put from panel to panel."""
    from deepnotes.show import plots

    sub = sizes(budget)
    fig, axes = plots.new_figure(len(sub.map_depths), height=2.6)
    for ax, n in zip(axes, sub.map_depths, strict=True):
        for rule in runs.rules:
            per_rate = [runs.fractions(rule, n, lr, sub.map_steps) for lr in sub.map_rates]
            plots.fractions_over_seeds(ax, sub.map_rates, per_rate, rule)
        _fraction_axes(ax, sub.map_rates, "Adam base rate", f"N = {n}, {sub.map_steps} steps", threshold)
    plots.key_below(fig, list(axes))
    return fig


def slider_figure(depth: Depth, rule: str, *, budget: Budget, runs: ex.RuleRuns | None = None, progress: bool = False):
    """The slider's panel: the frontier's runs of (depth, rule) where ``runs`` has them, else one live run
    (:func:`.experiments.live_run`); their loss."""
    from deepnotes.show import plots

    sub = sizes(budget)
    if runs is None or not runs.has(rule, depth, sub.lr, sub.train_steps):
        runs = ex.live_run(depth, rule, budget=budget, progress=progress)
    hists = runs.at(rule, depth, sub.lr, sub.train_steps)
    fig, (ax,) = plots.new_figure(1)
    plots.loss_curves(ax, {rule: hists}, title=f"N = {depth}, {rule}, Adam {sub.lr:g} × s(N)")
    return fig


def trial(tried: Trial, threshold: Probability):
    """A reader's rule beside DeepNorm (:class:`.reader.Trial`): the first Adam step's loss change per unit rate,
    the stream's growth at initialization, and the fraction learned, each against N (the dotted line: ``threshold``,
    the fraction a run must pass to count as trained)."""
    from deepnotes.show import plots

    steps, runs, depths = tried.steps, tried.runs, tried.depths
    fig, (ax_s, ax_g, ax_f) = plots.new_figure(3, height=2.4)
    for rule in steps.rules:
        ax_s.loglog(depths, steps.mean(rule, "adam"), "o-", ms=3, label=rule)
        ax_g.loglog(depths, [statistics.fmean(v) for v in steps.growth[rule]], "o-", ms=3, label=rule)
    plots.label_axes(ax_s, "depth N", "−ΔL/η, Adam", "first step", legend=None)
    plots.label_axes(ax_g, "depth N", "E[x_N²]/E[x_0²]", "stream at init", legend=None)
    lr, steps_n = tried.lr, tried.train_steps
    for rule in runs.rules:
        plots.fractions_over_seeds(ax_f, depths, [runs.fractions(rule, n, lr, steps_n) for n in depths], rule)
    _fraction_axes(ax_f, depths, "depth N", f"Adam {lr:g} × s(N), {steps_n} steps", threshold)
    plots.key_below(fig, [ax_s])
    return fig
