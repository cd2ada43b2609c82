"""The chapter "depth_rules" at smoke: the first-step probe of every published rule, its verdicts and the answer, the
slider's short runs (a learnable gate trains, a fixed one stays), and refusals in plain words."""

from __future__ import annotations

import math

import matplotlib
import pytest
import torch

import deepnotes as dn
from deepnotes.chapters.depth_rules import answer, claims, derive, figures
from deepnotes.chapters.depth_rules import experiments as ex
from deepnotes.core.engine import GATES
from deepnotes.core.rules import PUBLISHED
from deepnotes.show.verdict_words import APPROX, HOLDS, UNCHECKABLE, WRONG

matplotlib.use("Agg")
SMOKE = dn.get_budget("smoke")


@pytest.fixture(scope="module")
def steps():
    return ex.first_steps(dn.RunContext.here(SMOKE))


def test_every_rule_is_probed_at_every_depth_and_seed(steps):
    assert steps.rules == tuple(PUBLISHED) and steps.depths == (2, 4, 8)
    for key, per_depth in steps.samples.items():
        assert len(per_depth) == 3 and all(len(s) == 3 for s in per_depth), key
        assert all(math.isfinite(v) and v >= 0 for s in per_depth for v in s), key


def test_a_learnable_branch_starting_at_zero_moves_only_its_gates(steps):
    """ReZero's and SkipInit's matrices get no gradient at g = 0: their first step's loss change is the gates' alone,
    and it is not 0."""
    rule = PUBLISHED["SkipInit"]
    stack = ex.rule_stack(rule, 4, SMOKE, 2)
    assert set(ex.stepped(rule, stack)) >= set(GATES)
    assert all(v > 0 for s in steps.samples[("SkipInit", "adam")] for v in s)


def test_the_verdicts_and_the_answer_agree(steps):
    rows = claims.first_step_verdicts(steps)
    assert len(rows) == 2 * len(PUBLISHED)
    assert {r.status for r in rows} <= {HOLDS, APPROX, WRONG, UNCHECKABLE}
    for opt, statement in (("adam", answer.markdown(steps)), ("sgd", answer.details(steps))):
        text = statement.text
        assert f"Under {answer.NAMES[opt]}" in text
        assert all(r in text for r in derive.bounded_rules(opt))


def test_the_answer_figure_draws_every_rule_in_both_panels(steps):
    fig = figures.answer(steps)
    assert len([ax for ax in fig.axes if ax.get_lines()]) == 2
    assert all(len(ax.get_lines()) == len(PUBLISHED) for ax in fig.axes if ax.get_lines())


def test_a_short_run_of_each_rule_trains_and_keeps_a_fixed_gate_fixed():
    for name in PUBLISHED:
        hist = ex.rule_run(2, name, budget=SMOKE)
        assert len(hist.losses) == 3 and all(math.isfinite(v) for v in hist.losses), name
    context = dn.RunContext.here(SMOKE, workers=1)
    fixed = ex.rule_plan(PUBLISHED["Depth-µP"], 4, SMOKE)
    learnable = ex.rule_plan(PUBLISHED["SkipInit"], 4, SMOKE)
    assert set(fixed.frozen) == set(GATES) and not learnable.frozen
    assert context.train(fixed)[0].losses and context.train(learnable)[0].losses


def test_a_bad_setting_is_refused_by_name():
    with pytest.raises(ValueError, match=r"'GPT-3'.*Post-LN"):
        ex.rule_named("GPT-3")
    with pytest.raises(ValueError, match="depth"):
        ex.rule_run(10**5, "Pre-LN", budget=SMOKE)


def test_the_derived_orders_are_what_the_page_shows():
    table = derive.order_table()
    assert set(table) == set(PUBLISHED)
    assert table["Depth-µP"] == (0, 0) and table["GPT-2"] == (1, 1)
    assert str(derive.first_step_formulas("adam")["Pre-LN"]).count("N") >= 1


def test_the_rules_stack_is_float64_with_the_rule_s_init():
    stack = ex.rule_stack(PUBLISHED["GPT-2"], 4, SMOKE, 2)
    assert stack.member("out_w", 0).dtype == torch.float64
