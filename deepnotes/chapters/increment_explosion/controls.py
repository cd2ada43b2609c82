"""The chapter's slider: the grid precomputed for the static page and the live panel's widgets, each
offering only settings :func:`.experiments.slider_run` accepts (its variants, the optimizers it has a
learning rate for, depths ≥ 1, warmups within the run)."""

from __future__ import annotations

from deepnotes.chapters.increment_explosion import figures
from deepnotes.chapters.increment_explosion.budget import sizes
from deepnotes.chapters.increment_explosion.experiments import VARIANTS
from deepnotes.core.config import Budget
from deepnotes.show import widgets as ui


def sliders(budget: Budget) -> dict[str, ui.Slider]:
    """ "training": short runs at initialization, depth × norm style × optimizer."""
    sub = sizes(budget)

    def live():
        return {
            "depth": ui.int_slider("depth", sub.live_depth),
            "norm": ui.dropdown("norm", VARIANTS),
            "optimizer": ui.dropdown("optimizer", sub.slider_lrs),
            "lr": ui.log_slider("lr", sub.live_lr),
            "warmup": ui.int_slider("warmup", (0, 0, sub.slider_steps)),
        }

    grid = {"depth": sub.slider_depths, "norm": sub.slider_norms, "optimizer": sub.slider_optimizers}
    return {
        "training": ui.Slider(
            "Short training runs at initialization", figures.slider_figure, grid, live, {"budget": budget}
        )
    }
