"""The chapter's slider: depth × norm style, precomputed for the static page, live in a
kernel."""

from __future__ import annotations

from deepnotes.chapters.depth_rules import figures
from deepnotes.chapters.depth_rules.budget import sizes
from deepnotes.chapters.depth_rules.experiments import STYLES
from deepnotes.core.config import Budget
from deepnotes.show import widgets as ui


def sliders(budget: Budget) -> dict[str, ui.Slider]:
    """ "runs": one short Adam run per setting."""
    sub = sizes(budget)

    def live():
        return {"depth": ui.int_slider("depth", sub.live_depth), "style": ui.dropdown("style", STYLES)}

    grid = {"depth": sub.slider_depths, "style": STYLES}
    return {"runs": ui.Slider("A short run at one setting", figures.slider_figure, grid, live, {"budget": budget})}
