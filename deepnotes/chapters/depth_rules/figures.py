"""The chapter's figures: the answer (every style's loss, the median over seeds
and their range) and the
slider's panel."""

from __future__ import annotations

from deepnotes.chapters.depth_rules import experiments as ex
from deepnotes.core.config import Budget
from deepnotes.core.train import History
from deepnotes.core.validate import Depth

FIGURES = 1  # the figures the page shows besides its sliders' frames (tests/test_book.py counts them)


def answer(runs: dict[str, list[History]]):
    """Every style's training loss (median over seeds, band over their range)."""
    from deepnotes.show import plots

    fig, (ax,) = plots.new_figure(1)
    plots.loss_curves(ax, runs, title="Adam, no warmup: Post-LN and Pre-LN")
    return fig


def model_code():
    """The code this chapter is about, read from the package when the cell runs (file and line numbers included):
    ``Residual.forward``, where the norm style places its LayerNorm."""
    from deepnotes.core.models import Residual
    from deepnotes.show.source import source_of

    return source_of(Residual.forward, "one residual sublayer in every norm style")


def slider_figure(depth: Depth, style: str, *, budget: Budget, progress: bool = False):
    """The slider's panel: :func:`.experiments.slider_run` at one setting, its loss."""
    from deepnotes.show import plots

    hist = ex.slider_run(depth, style, budget=budget, progress=progress)
    fig, (ax,) = plots.new_figure(1)
    plots.loss_curves(ax, {style: hist}, title=f"N = {depth}, {style}")
    return fig
