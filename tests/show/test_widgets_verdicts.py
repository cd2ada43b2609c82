import ipywidgets as W
import matplotlib
import pytest
import sympy as sp

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from deepnotes.show import verdicts as vd  # noqa: E402
from deepnotes.show import widgets as ui  # noqa: E402
from deepnotes.show.widgets import slider_control  # noqa: E402

CALLS = []


def render(a, b, scale=1.0, progress=False):
    CALLS.append((a, b, progress))
    fig, ax = plt.subplots(figsize=(1, 1))
    ax.set_title(f"{a} {b} {scale}")
    return fig


def stacks_and_images(widget):
    out = {"stack": [], "image": []}

    def walk(w):
        if isinstance(w, W.Stack):
            out["stack"].append(w)
        if isinstance(w, W.Image):
            out["image"].append(w)
        for c in getattr(w, "children", ()):
            walk(c)

    walk(widget)
    return out


def test_slider_control_precomputes_every_combination_and_links_sliders():
    CALLS.clear()
    n_open = len(plt.get_fignums())
    ctl = slider_control(render, {"a": [1, 2, 3], "b": [10, 20]}, fixed={"scale": 2.0})
    assert sorted(CALLS) == sorted((a, b, False) for a in (1, 2, 3) for b in (10, 20))
    assert len(plt.get_fignums()) == n_open  # figures were closed
    found = stacks_and_images(ctl)
    assert len(found["stack"]) == 1 + 3  # one outer, one inner per value of a
    grid_images = [im for im in found["image"] if im.value]
    assert len(grid_images) == 6 and len({bytes(im.value) for im in grid_images}) == 6
    sliders = ctl.children[0].children
    outer, inner = found["stack"][0], found["stack"][1:]  # walk visits parents first
    for slider, targets in zip(sliders, ([outer], inner), strict=True):
        mine = [link for link in ctl.links if link.source[0] is slider]
        assert {id(link.target[0]) for link in mine} == {id(t) for t in targets}
        assert all(link.source[1] == "index" and link.target[1] == "selected_index" for link in mine)


def test_live_panel_runs_and_caches():
    CALLS.clear()
    live = {"a": W.IntSlider(value=7), "b": W.IntSlider(value=5)}
    ctl = slider_control(render, {"a": [1], "b": [1]}, live=live)
    panel = ctl.children[-1]
    button = [w for w in panel.children[1].children if isinstance(w, W.Button)][0]
    button.click()
    button.click()
    assert CALLS.count((7, 5, True)) == 1  # second click served from the cache
    assert panel.children[-1].value  # the image shows it
    assert panel.children[-1].layout.display is None  # and is visible


def test_empty_grid_is_an_error():
    with pytest.raises(ValueError, match="non-empty"):
        slider_control(render, {})
    with pytest.raises(ValueError, match="'a' has no values"):
        slider_control(render, {"a": []})


def test_verdict_status_is_computed():
    assert vd.check_number("x", "s", 2.65e-5, 0.9**99, approx_rtol=0.05).status == vd.WRONG
    assert vd.check_number("x", "s", 2.65e-5, 0.9**100).status == vd.HOLDS
    assert vd.check_number("x", "s", 1.1, 1.0).status == vd.APPROX
    n = sp.symbols("N", positive=True)
    assert vd.check_expr("x", "s", 1 / sp.sqrt(2 * n), (2 * n) ** sp.Rational(-1, 2)).status == vd.HOLDS
    assert vd.check_expr("x", "s", 1 / sp.sqrt(n), 1 / n).status == vd.WRONG
    assert vd.check_scaling("x", "s", 1 / n, 1 / (2 * n), n).status == vd.APPROX
    assert vd.check_scaling("x", "s", 1 / sp.sqrt(n), 1 / (2 * n), n).status == vd.WRONG
    table = vd.VerdictTable([vd.check_number("c", "s", 1, 1)])
    assert "holds" in repr(table) and "<table" in table._repr_html_()


def test_an_order_claim_holds_when_equal_is_loose_when_weaker_and_wrong_when_too_strong():
    lam, h = sp.symbols("lambda h", positive=True)
    assert vd.check_order("c", "s", lam**2, lam**2 * h + lam**3, lam).status == vd.HOLDS
    loose = vd.check_order("c", "s", lam, lam**2 * h, lam)
    assert loose.status == vd.APPROX and loose.computed == "O(lambda**2)"
    assert vd.check_order("c", "s", lam**2, lam + lam**2, lam).status == vd.WRONG


def fails_on_three(a, b=1, progress=False):
    if a == 3:
        raise ValueError("a = 3 is not allowed here\nsecond line")
    return render(a=a, b=b, progress=progress)


def test_a_failing_live_setting_shows_one_line_in_the_figure_s_place_and_nothing_stale():
    slider = W.IntSlider(value=1)
    panel = ui.live_panel(fails_on_three, {"a": slider})
    panel.run()
    assert panel.image.value and panel.image.layout.display is None and panel.message.layout.display == "none"
    slider.value = 3
    panel.run()  # no exception, no second one
    assert panel.image.layout.display == "none"  # the previous setting's figure is gone
    assert panel.message.layout.display is None
    assert "ValueError: a = 3 is not allowed here" in panel.message.value and "second line" not in panel.message.value
    assert len(panel.cache) == 1  # the failure is not cached
    slider.value = 1
    panel.run()  # a good setting again: its figure, no message
    assert panel.image.layout.display is None and panel.message.layout.display == "none"


def test_the_live_cache_keeps_the_most_recent_settings_only():
    slider = W.IntSlider(value=0, max=50)
    panel = ui.live_panel(fails_on_three, {"a": slider}, cache_size=3)
    for a in (1, 2, 5, 1, 4):
        slider.value = a
        panel.run()
    assert len(panel.cache) == 3
    assert (("a", 1),) in panel.cache and (("a", 4),) in panel.cache and (("a", 2),) not in panel.cache


def test_lru_drops_the_least_recently_used():
    from deepnotes.show.cache import LRU

    lru = LRU(2)
    lru.put("a", 1)
    lru.put("b", 2)
    assert lru.get("a") == 1  # a is now the most recent
    lru.put("c", 3)
    assert "b" not in lru and lru.get("a") == 1 and lru.get("c") == 3
    assert lru.get_or_compute("d", lambda: 4) == 4 and len(lru) == 2


def test_a_late_training_claim_is_judged_only_on_long_enough_runs():
    from deepnotes.core.config import BUDGETS

    kw = dict(claim="the loss settles, then diverges", source="s", claimed="plateau, then NaN", computed="0 of 3")
    short = vd.late_training_gate(**kw, steps=vd.LONG_TRAINING_STEPS - 1)
    assert short.status == vd.UNCHECKABLE and f"not these {vd.LONG_TRAINING_STEPS - 1}" in short.reason
    assert vd.late_training_gate(**kw, steps=vd.LONG_TRAINING_STEPS) is None
    # the book's longest runs reach it, so the claim is judged somewhere
    assert max(b.warmup.steps for b in BUDGETS.values()) >= vd.LONG_TRAINING_STEPS


def test_a_long_readout_gets_a_class_the_stylesheet_defines_and_a_short_one_none():
    import re
    from pathlib import Path

    from deepnotes.show import widgets

    assert widgets.readout_class(["linear", "relu"]) == ""  # within the readout's own 9 characters
    assert widgets.readout_class(["relu", "sigmoid_rescaled"]) == "deepnotes-readout-16"
    assert widgets.readout_class(["x" * 40]) == f"deepnotes-readout-{widgets.READOUT_CH_MAX}"
    css = (Path(__file__).resolve().parents[2] / "_ext" / "static" / "deepnotes.css").read_text()
    defined = {int(n) for n in re.findall(r"\.deepnotes-readout-(\d+) \.widget-readout", css)}
    assert defined == set(range(widgets.READOUT_CH + 1, widgets.READOUT_CH_MAX + 1))
