"""Every chapter's sliders: the grid the static page precomputes and every setting the live panel
offers (each widget at each end, the others at their start) render at the smoke budget."""

from __future__ import annotations

import importlib

import matplotlib
import pytest

import deepnotes as dn
from deepnotes.show import widgets as ui

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from book_paths import CHAPTERS  # noqa: E402

STEMS = sorted(entry.removeprefix("book/") for entry in CHAPTERS)  # the appendix has no sliders
SMOKE = dn.get_budget("smoke")


def chapter_sliders():
    for stem in STEMS:
        controls = importlib.import_module(f"deepnotes.chapters.{stem}.controls")
        for name, slider in controls.sliders(SMOKE).items():
            yield pytest.param(slider, id=f"{stem}:{name}")


@pytest.mark.parametrize("slider", chapter_sliders())
def test_the_live_panel_offers_only_settings_its_experiment_accepts(slider):
    settings = list(slider.live_settings())
    assert settings, "a slider without a live panel"
    live = slider.live()
    for name, values in slider.grid.items():  # the grid is a subset of what the panel offers
        assert name in live, f"grid slider {name!r} has no live widget"
    for setting in settings:
        fig = slider.render(**{**slider.fixed, **setting})
        assert isinstance(fig, matplotlib.figure.Figure) and fig.axes, setting
        plt.close(fig)


def test_offered_values_reads_each_kind_of_widget():
    assert ui.offered_values(ui.dropdown("a", ("x", "y"))) == ("x", "y")
    assert ui.offered_values(ui.checkbox("b")) == (False, True)
    assert ui.offered_values(ui.int_slider("c", (1, 5, 9))) == (1, 9)
    lo, hi = ui.offered_values(ui.log_slider("d", (1e-3, 1e-2, 1.0)))
    assert lo == pytest.approx(1e-3) and hi == pytest.approx(1.0)
    with pytest.raises(TypeError, match="Dropdown"):
        ui.offered_values(ui.W.Text())
