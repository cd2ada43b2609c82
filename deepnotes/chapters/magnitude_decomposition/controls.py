"""The chapter's slider: depth × optimizer precomputed for the static page, and a live panel over any
depth, optimizer and learning rate, every value of which :func:`.figures.slider_figure` accepts."""

from __future__ import annotations

from deepnotes.chapters.magnitude_decomposition import figures
from deepnotes.chapters.magnitude_decomposition.budget import sizes
from deepnotes.core import scaling
from deepnotes.core.config import Budget
from deepnotes.show import widgets as ui


def sliders(budget: Budget) -> dict[str, ui.Slider]:
    """ "choices": the (α, λ) choices of the magnitude analysis, derived and trained."""
    mb = sizes(budget)

    def live():
        return {
            "depth": ui.int_slider("depth", mb.live_depth),
            "optimizer": ui.dropdown("optimizer", scaling.OPTIMIZERS),
            "lr": ui.log_slider("lr", mb.live_lr),
        }

    return {
        "choices": ui.Slider(
            "The (α, λ) choices of the magnitude analysis, derived and trained",
            figures.slider_figure,
            {"depth": mb.slider_depths, "optimizer": scaling.OPTIMIZERS},
            live,
            {"budget": budget},
        )
    }
