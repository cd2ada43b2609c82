"""The chapter's slider: the grid precomputed for the static page (depth × norm style) and the live
panel's widgets, each offering only settings :func:`.experiments.slider_experiment` accepts (the norm
styles of ``STYLES``, depths ≥ 1, warmups within the run, positive β and learning rates)."""

from __future__ import annotations

from deepnotes.chapters.post_vs_pre_norm import figures
from deepnotes.chapters.post_vs_pre_norm.budget import sizes
from deepnotes.chapters.post_vs_pre_norm.experiments import STYLES
from deepnotes.core.config import Budget
from deepnotes.show import widgets as ui


def sliders(budget: Budget) -> dict[str, ui.Slider]:
    """ "init": per-block gradients at init and the first Adam steps."""
    sub = sizes(budget)

    def live():
        return {
            "depth": ui.int_slider("depth", sub.live_depth),
            "norm": ui.dropdown("norm", STYLES),
            "warmup": ui.int_slider("warmup", (0, 0, sub.slider_steps)),
            "beta": ui.log_slider("β", sub.live_beta),
            "lr": ui.log_slider("lr", sub.live_lr),
        }

    grid = {"depth": sub.slider_depths, "norm": STYLES}
    return {
        "init": ui.Slider(
            "Gradients at init and the first steps", figures.slider_figure, grid, live, {"budget": budget}
        )
    }
