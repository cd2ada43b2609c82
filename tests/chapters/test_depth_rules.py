"""The chapter "depth_rules" at smoke: its runs, its verdict and its answer, and the slider's panel."""

from __future__ import annotations

import matplotlib
import sympy as sp

import deepnotes as dn
from deepnotes.chapters.depth_rules import answer, claims, controls, derive, experiments, figures
from deepnotes.show.verdict_words import HOLDS, UNCHECKABLE, WRONG

matplotlib.use("Agg")
SMOKE = dn.get_budget("smoke")


def test_the_runs_the_verdict_and_the_answer_agree():
    runs = experiments.train_runs(dn.RunContext.here(SMOKE))
    assert set(runs) == set(experiments.STYLES) and all(len(h) == 3 for h in runs.values())
    (row,) = claims.training(runs, SMOKE)
    assert row.status in (HOLDS, WRONG, UNCHECKABLE) and "bootstrap interval" in row.computed
    assert answer.markdown(runs, SMOKE).text
    matplotlib.pyplot.close(figures.answer(runs))


def test_the_derivation_solves_the_recursion():
    moment = derive.pre_ln_stream_moment()["moment"]
    assert sp.simplify(moment - (1 + sp.Symbol("l", integer=True, nonnegative=True))) == 0


def test_the_slider_panel_trains_one_run_and_refuses_a_depth_outside_its_range():
    slider = controls.sliders(SMOKE)["runs"]
    assert set(slider.grid) == {"depth", "style"}
    hist = experiments.slider_run(2, "pre", budget=SMOKE)
    assert len(hist.losses) == 3
    try:
        experiments.slider_run(10**5, "pre", budget=SMOKE)
    except ValueError as refused:
        assert "depth" in str(refused)
    else:
        raise AssertionError("a depth past the live range was accepted")
