"""The chapter's slider: depth × published rule, precomputed for the static page, live in a kernel."""

from __future__ import annotations

from deepnotes.chapters.depth_rules import figures
from deepnotes.chapters.depth_rules.budget import sizes
from deepnotes.core.config import Budget
from deepnotes.core.rules import PUBLISHED
from deepnotes.show import widgets as ui


def sliders(budget: Budget) -> dict[str, ui.Slider]:
    """ "runs": one short Adam run per setting."""
    sub = sizes(budget)
    rules = tuple(PUBLISHED)

    def live():
        return {"depth": ui.int_slider("depth", sub.live_depth), "rule": ui.dropdown("rule", rules)}

    grid = {"depth": sub.slider_depths, "rule": rules}
    return {"runs": ui.Slider("A short Adam run of one rule", figures.slider_figure, grid, live, {"budget": budget})}
