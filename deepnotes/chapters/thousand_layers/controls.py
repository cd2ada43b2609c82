"""The chapter's slider: depth × norm style at the chapter's rate, precomputed for the static page from
the frontier's runs (no run of its own), and a live panel that trains any variant (warmup and
DeepNet's constants apart included) at any depth up to the budget's maximum (3,000 blocks at cpu),
offering only settings :func:`.experiments.live_run` accepts."""

from __future__ import annotations

from deepnotes.chapters.thousand_layers import figures
from deepnotes.chapters.thousand_layers.budget import sizes
from deepnotes.chapters.thousand_layers.experiments import MAP_STYLES, VARIANTS, Runs
from deepnotes.core.config import Budget
from deepnotes.show import widgets as ui


def sliders(budget: Budget, runs: Runs | None = None) -> dict[str, ui.Slider]:
    """ "frontier": the loss and the early update of one variant at one depth. ``runs`` (of
    :func:`.experiments.train_runs`) serve the grid; without them every setting trains live."""
    sub = sizes(budget)

    def live():
        return {"depth": ui.int_slider("depth", sub.live_depth), "variant": ui.dropdown("variant", tuple(VARIANTS))}

    grid = {"depth": sub.slider_depths, "variant": MAP_STYLES}
    return {
        "frontier": ui.Slider(
            "One style at one depth: loss and early update",
            figures.slider_figure,
            grid,
            live,
            {"budget": budget, "runs": runs},
        )
    }
