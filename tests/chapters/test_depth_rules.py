"""The chapter "depth_rules" at smoke: the first-step probe of every published rule, its verdicts and the answer; the
frontier and the depth × rate map (a learnable gate trains, a fixed one is frozen), their verdicts and figures; the
reader's form (a typed rule derived and trained beside DeepNorm) and its refusals in plain words."""

from __future__ import annotations

import math

import matplotlib
import pytest
import torch

import deepnotes as dn
from deepnotes.chapters.depth_rules import answer, claims, controls, derive, figures, reader
from deepnotes.chapters.depth_rules import experiments as ex
from deepnotes.chapters.depth_rules.budget import sizes
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


def test_the_verdicts_and_the_answer_agree(steps, runs):
    rows = claims.first_step_verdicts(steps)
    assert len(rows) == 2 * len(PUBLISHED)
    assert {r.status for r in rows} <= {HOLDS, APPROX, WRONG, UNCHECKABLE}
    details = answer.details(steps, runs, SMOKE)
    assert "the best Adam rate of" in details.text
    for opt, statement in (("adam", answer.markdown(steps)), ("sgd", details)):
        text = statement.text
        assert f"Under {answer.NAMES[opt]}" in text
        assert all(r in text for r in derive.bounded_rules(opt))


def test_the_answer_figure_draws_every_rule_in_both_panels(steps):
    fig = figures.answer(steps)
    assert len([ax for ax in fig.axes if ax.get_lines()]) == 2
    assert all(len(ax.get_lines()) == len(PUBLISHED) for ax in fig.axes if ax.get_lines())


@pytest.fixture(scope="module")
def runs():
    return ex.train_runs(dn.RunContext.here(SMOKE))


def test_every_rule_trains_at_every_frontier_depth_and_map_cell(runs):
    sub = sizes(SMOKE)
    assert runs.rules == tuple(PUBLISHED)
    for rule in PUBLISHED:
        for n in sub.frontier_depths:
            hists = runs.at(rule, n, sub.lr, sub.train_steps)
            assert len(hists) == sub.seeds and all(len(h.losses) == sub.train_steps for h in hists), (rule, n)
        for n in sub.map_depths:
            for lr in sub.map_rates:
                assert len(runs.fractions(rule, n, lr, sub.map_steps)) == sub.seeds


def test_a_fixed_gate_is_frozen_and_a_learnable_one_is_not():
    runs = [ex.RuleRun(r, 4, 1e-3, 2, 0) for r in ("Depth-µP", "SkipInit", "Pre-LN")]
    plans = ex.training_plans(SMOKE, runs)
    frozen = {tuple(runs[i].rule for i in index): set(p.frozen) for index, p in plans}
    assert frozen == {("SkipInit", "Pre-LN"): set(), ("Depth-µP",): set(GATES)}


def test_the_frontier_and_transfer_rows_judge_every_rule(runs):
    front = claims.frontier_verdicts(runs, SMOKE)
    moved = claims.transfer_verdicts(runs, SMOKE)
    assert len(front) == len(moved) == len(PUBLISHED)
    assert {r.status for r in [*front, *moved]} <= {HOLDS, APPROX, WRONG, UNCHECKABLE}
    assert "Depth-µP: the best rate transfers" in moved[-1].claim  # its derived order under Adam is 0


def test_the_best_rate_reads_the_grid_and_leaves_its_ends_unread(runs):
    """A seed's best rate is the map cell that learned most; at an end of the grid, or where no rate reached the
    threshold (here 1: the floor itself), it is not read (None)."""
    sub = sizes(SMOKE)
    for rule in PUBLISHED:
        best = runs.best_rates(rule, sub.map_depths[0], sub.map_rates, sub.map_steps, 0.0)
        assert len(best) == sub.seeds and all(b is None or 0 < b < len(sub.map_rates) - 1 for b in best)
        assert all(b is None for b in runs.best_rates(rule, sub.map_depths[0], sub.map_rates, sub.map_steps, 1.0))


def test_a_seed_agrees_with_the_derivation_only_in_its_direction():
    assert claims.as_derived(1, 0.0) and claims.as_derived(-1, 0.4) and not claims.as_derived(-2, 0.0)
    assert claims.as_derived(-2, -2.4) and not claims.as_derived(2, -2.4) and not claims.as_derived(-1, -2.4)


def test_a_rule_that_scales_one_optimizer_s_rate_leaves_the_other_s_alone():
    from deepnotes.core.rules import Rule

    rule = Rule("adam only", "pre", lr_scale={"adam": "1/sqrt(N)"})
    assert rule.at(4)["lr_scale[sgd]"] == 1 and rule.at(4)["lr_scale[adam]"] == 0.5


def test_the_derived_shift_points_down_for_a_growing_first_step():
    kept = claims.predicted_shift("Depth-µP", 6, 100, 0.5)
    assert kept == 0 and f"{kept:+.1f}" == "+0.0"  # not "-0.0" on the page
    assert claims.predicted_shift("GPT-2", 6, 100, 0.5) == pytest.approx(-2 * math.log10(100 / 6))


def test_the_figures_draw_every_rule(runs):
    assert len(figures.frontier(runs, SMOKE, claims.TRAINED).axes[0].get_lines()) >= len(PUBLISHED)
    assert len(figures.rate_map(runs, SMOKE, claims.TRAINED).axes) >= len(sizes(SMOKE).map_depths)
    assert figures.slider_figure(2, "GPT-2", budget=SMOKE, runs=runs).axes[0].get_lines()


def test_the_stream_rows_compare_gpt2_and_depth_mup_with_pre_ln(steps):
    rows = claims.growth_verdicts(steps)
    assert [r.claim.split(" ")[0] for r in rows] == ["GPT-2", "Depth-µP", "Pre-LN"]
    assert all(len(v) == 3 and all(x > 0 for x in v) for g in steps.growth.values() for v in g)


def test_the_frontier_trains_at_the_thousand_layer_chapter_s_sizes():
    """Issue 65: the frontier at the 1000-layer chapter's cpu sizes (its steps, batches, rate and seeds), to its
    1000 blocks."""
    from deepnotes.chapters.thousand_layers.budget import sizes as thousand

    ours, theirs = sizes(dn.get_budget("cpu")), thousand(dn.get_budget("cpu"))
    assert (ours.train_steps, ours.train_batch, ours.lr, ours.seeds) == (
        theirs.train_steps,
        theirs.train_batch,
        theirs.lr,
        theirs.seeds,
    )
    assert {6, 18, 100, 1000} <= set(ours.frontier_depths)


def test_a_reader_s_rule_is_derived_and_trained_beside_deepnorm():
    rule = reader.typed_rule("pre", branch="1/sqrt(N)", lr_scale="1/sqrt(N)")
    tried = reader.try_rule(rule, (2, 6), dn.RunContext.here(SMOKE))
    assert tried.steps.rules == (reader.NAME, reader.CONTRAST) and tried.runs.rules == (reader.NAME, reader.CONTRAST)
    assert tried.orders["adam"]["order"] == 0 and "$N^{0}$" in reader.trial_markdown(tried)
    assert len(figures.trial(tried, claims.TRAINED).axes) >= 3
    assert reader.trial_estimate(rule, (2, 6), SMOKE).count.flops > 0


@pytest.mark.parametrize(
    ("fields", "depths", "named"),
    [
        ({"placement": "middle"}, (2, 6), "placement"),
        ({"alpha": "M + 1"}, (2, 6), "alpha.*M"),
        ({"alpha": "N.foo"}, (2, 6), "alpha='N.foo' is not a formula"),
        ({"beta": "1/(N - 2)"}, (2, 6), "beta.*N = 2"),
        ({"branch": "-1"}, (2, 6), "branch.*N = 2"),
        ({"lr_scale": "log(N - 1)"}, (2, 6), r"lr_scale\[sgd\].*N = 2"),
        ({}, (2,), "depths.*two"),
        ({}, (2, 10**7), "depths=10000000"),
    ],
)
def test_the_form_refuses_a_bad_field_by_name(fields, depths, named):
    with pytest.raises(ValueError, match=named):
        reader.trial_depths(reader.typed_rule(**fields), depths, SMOKE)


def test_the_form_runs_a_typed_rule_and_says_why_it_refuses_one(capsys):
    form = controls.rule_form(SMOKE)
    form.run()
    shown = capsys.readouterr().out
    assert "Estimated cost" in shown and "Not run" not in shown
    form.children[1].value = "K"  # alpha
    form.run()
    assert "Not run: alpha='K' must be a function of the depth N alone" in capsys.readouterr().out
    for text in ("6, eighteen", "6, ¹8"):
        with pytest.raises(ValueError, match="depths must be whole numbers"):
            reader.typed_depths(text)


def test_a_bad_setting_is_refused_by_name():
    with pytest.raises(ValueError, match=r"'GPT-3'.*Post-LN"):
        ex.rule_named("GPT-3")
    with pytest.raises(ValueError, match="depth"):
        ex.live_run(10**5, "Pre-LN", budget=SMOKE)


def test_the_derived_orders_are_what_the_page_shows():
    table = derive.order_table()
    assert set(table) == set(PUBLISHED)
    assert table["Depth-µP"] == (0, 0) and table["GPT-2"] == (1, 1)
    assert str(derive.first_step_formulas("adam")["Pre-LN"]).count("N") >= 1


def test_the_rules_stack_is_float64_with_the_rule_s_init():
    stack = ex.rule_stack(PUBLISHED["GPT-2"], 4, SMOKE, 2)
    assert stack.member("out_w", 0).dtype == torch.float64
