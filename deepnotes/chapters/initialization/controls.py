"""The chapter's two sliders: a grid precomputed for the static page and a live panel whose widgets
offer only settings the experiments accept (every activation name, any gain c > 0, depths and d ≥ 1
within the budget's live spans)."""

from __future__ import annotations

from deepnotes.chapters.initialization import figures
from deepnotes.chapters.initialization.budget import sizes
from deepnotes.chapters.initialization.mlp import ACTIVATIONS
from deepnotes.core.config import Budget
from deepnotes.show import widgets as ui

LIVE_ACT = "tanh"  # the live panel's first activation


def sliders(budget: Budget) -> dict[str, ui.Slider]:
    """ "moments": second moments through a plain MLP; "softmax": one query's attention weights."""
    b = sizes(budget)

    def live_moments():
        return {
            "act": ui.dropdown("act", ACTIVATIONS, LIVE_ACT),
            "gain": ui.log_slider("c", b.live_gain),
            "depth": ui.int_slider("depth", b.live_depth),
        }

    def live_softmax():
        return {"d": ui.int_slider("d", b.live_d), "scaled": ui.checkbox("divide by √d")}

    return {
        "moments": ui.Slider(
            "Second moment through a plain MLP",
            figures.moment_figure,
            {"act": ACTIVATIONS, "gain": b.slider_gains},
            live_moments,
            {"budget": budget, "depth": b.moment_depth},
        ),
        "softmax": ui.Slider(
            f"One query's attention weights over {b.softmax_keys} keys",
            figures.softmax_figure,
            {"d": b.softmax_slider_dims, "scaled": (True, False)},
            live_softmax,
            {"budget": budget},
        ),
    }
