"""The chapter's slider: depth × width × p precomputed for the static page, and a live panel whose
widgets offer only what the stacks accept (depth and width ≥ 1, p within :func:`.probes.eps_exponent`'s
range)."""

from __future__ import annotations

from deepnotes.chapters.why_residuals import figures
from deepnotes.chapters.why_residuals.budget import sizes
from deepnotes.core.config import Budget
from deepnotes.show import widgets as ui


def sliders(budget: Budget) -> dict[str, ui.Slider]:
    """ "growth": Jacobian growth and a short training run."""
    rb = sizes(budget)

    def live():
        return {
            "depth": ui.int_slider("depth", rb.live_depth),
            "width": ui.int_slider("width", rb.live_width),
            "exponent": ui.float_slider("p (ε = N^-p)", rb.live_exponent, rb.live_exponent_step),
        }

    grid = {"depth": rb.slider_depths, "width": rb.slider_widths, "exponent": rb.slider_exponents}
    return {
        "growth": ui.Slider(
            "Jacobian growth and a short training run", figures.slider_figure, grid, live, {"budget": budget}
        )
    }
