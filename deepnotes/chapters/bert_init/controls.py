"""The chapter's two sliders: grids precomputed for the static page, and live panels whose widgets
offer only settings the experiments accept (any std > 0 on a log slider, depths ≥ 1, the head on or
off)."""

from __future__ import annotations

from deepnotes.chapters.bert_init import figures
from deepnotes.chapters.bert_init.budget import sizes
from deepnotes.core.config import Budget
from deepnotes.show import widgets as ui


def sliders(budget: Budget) -> dict[str, ui.Slider]:
    """ "init": the encoder at initialization; "gains": LayerNorm gains during MLM training."""
    b = sizes(budget)

    def live_init():
        return {"std": ui.log_slider("std", b.live_std), "depth": ui.int_slider("depth", b.live_depth)}

    def live_gains():
        return {"std": ui.log_slider("std", b.live_std), "head_transform": ui.checkbox("extra Dense+LN")}

    return {
        "init": ui.Slider(
            "A BERT-shaped Post-LN encoder at initialization",
            figures.init_figure,
            {"std": b.stds, "depth": b.probe_depths},
            live_init,
            {"budget": budget},
        ),
        "gains": ui.Slider(
            "LayerNorm gains during MLM training",
            figures.gain_figure,
            {"std": b.gain_stds, "head_transform": (True, False)},
            live_gains,
            {"budget": budget},
        ),
    }
