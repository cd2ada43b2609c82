"""The chapter's figures: the answer (every rule's first-step loss change against depth, SGD and Adam) and the
slider's panel (a short Adam run of one rule at one depth)."""

from __future__ import annotations

from deepnotes.chapters.depth_rules import experiments as ex
from deepnotes.core.config import Budget
from deepnotes.core.validate import Depth

FIGURES = 1  # the figures the page shows besides its sliders' frames (tests/test_book.py counts them)
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


def slider_figure(depth: Depth, rule: str, *, budget: Budget, progress: bool = False):
    """The slider's panel: :func:`.experiments.rule_run` at one setting, its loss."""
    from deepnotes.show import plots

    hist = ex.rule_run(depth, rule, budget=budget, progress=progress)
    fig, (ax,) = plots.new_figure(1)
    plots.loss_curves(ax, {rule: hist}, title=f"N = {depth}, {rule}, Adam")
    return fig
