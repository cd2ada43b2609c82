"""Training-outcome verdicts carry their claim's direction (issue 30): the status is computed from
which runs the source says train and what each measured, never from the claim's words."""

import json
import math
from dataclasses import asdict

import pytest

from deepnotes.show import statistics as stats
from deepnotes.show import verdict_words as words
from deepnotes.show import verdicts as vd


def _verdict(expected, measured):
    """``measured``: one value per run, given to all three seeds."""
    return vd.check_outcome(
        claim="c",
        source="s",
        expected=expected,
        threshold=0.5,
        reason="r",
        measured={run: [v] * vd.MIN_SEEDS for run, v in measured.items()},
    )


def test_a_claim_that_a_run_does_not_train_holds_when_it_does_not():
    assert _verdict({"plain": False}, {"plain": 0.07}).status == vd.HOLDS  # "necessarily hard to train"
    assert _verdict({"plain": False}, {"plain": 0.9}).status == vd.WRONG
    assert _verdict({"plain": False, "residual": True}, {"plain": 0.07, "residual": 0.8}).status == vd.HOLDS
    assert _verdict({"plain": False, "residual": True}, {"plain": 0.07, "residual": 0.2}).status == vd.WRONG
    assert _verdict({"post": False}, {"post": -math.inf}).status == vd.HOLDS  # diverged: did not train


def test_the_direction_survives_the_record_and_bad_input_is_refused():
    v = _verdict({"a": True, "b": False}, {"a": 0.5, "b": -math.inf})
    back = vd.outcome_of(json.loads(json.dumps(asdict(v.outcome))))
    assert back == v.outcome and back.holds() and "a: trains; b: does not train" in v.claimed
    with pytest.raises(ValueError, match="measured lacks"):
        _verdict({"a": True}, {"b": 0.1})
    with pytest.raises(TypeError, match=r"parameter expected=\{'a': 'yes'\} violates type hint dict\[str, bool\]"):
        _verdict({"a": "yes"}, {"a": 0.1})  # refused at the door (deepnotes' type check)


def test_an_outcome_rests_on_three_seeds_and_shows_them():
    """Issue 30: a training-outcome verdict on one seed (increment explosion's 0.10) is refused; the
    median decides and every seed is shown."""

    def check(values):
        return vd.check_outcome(
            claim="c", source="s", expected={"warm": True}, measured={"warm": values}, threshold=0.5, reason="r"
        )

    for bad in ([0.1], [0.1, 0.9], [0.1, float("nan"), 0.9]):
        with pytest.raises(ValueError, match="at least 3 seeds"):
            check(bad)
    for bad in (0.1, "0.1, 0.9, 0.8"):  # not a list of seeds at all: refused at the door by its type
        with pytest.raises(TypeError, match="parameter measured="):
            check(bad)
    v = check([0.10, 0.91, 0.88])
    assert v.status == vd.HOLDS and v.outcome.seeds == 3 and "0.88 (0.10, 0.91, 0.88)" in v.computed
    assert check([0.91, 0.10, 0.12]).status == vd.WRONG  # one lucky seed is not a median
    assert "div." in check([-math.inf, 0.9, 0.8]).computed


def test_chapters_that_disagree_on_one_experiment_are_found():
    from deepnotes.ledger.page import disagreements
    from deepnotes.ledger.record import ChapterRecord, Record

    def record(chapter, values):
        v = vd.check_outcome(
            claim="Post-LN with warmup trains",
            source="s",
            expected={"warm": True},
            measured={"warm": values},
            threshold=0.5,
            reason="r",
            setting="N = 12, warmup 200",
        )
        row = Record(
            chapter, "cpu", v.claim, v.source, v.claimed, v.computed, v.status, v.reason, v.anchor, asdict(v.outcome)
        )
        return ChapterRecord(chapter, "cpu", "", (row,))

    same = {c: record(c, [0.10, 0.91, 0.88]) for c in ("increment_explosion", "post_vs_pre_norm")}
    assert disagreements(same) == []
    apart = {**same, "increment_explosion": record("increment_explosion", [0.10, 0.10, 0.10])}
    found = disagreements(apart)
    assert len(found) == 2 and "measured" in found[0] and "judged" in found[1]


def test_a_take_away_is_written_from_the_verdict_table():
    """Issue 30: magnitude decomposition listed eqs. (53), (54), (73) as wrong beside 'holds
    approximately'; its take-away is now the table's own grouping."""
    from deepnotes.chapters.magnitude_decomposition import claims

    table = claims.annotated_verdicts()
    text = words.summary_markdown(table, "The annotated section")
    for status in (vd.WRONG, vd.APPROX, vd.HOLDS):
        count = sum(v.status == status for v in table)
        assert f"**{status}** ({count}):" in text
    line = next(part for part in text.split("\n- ") if part.startswith(f"**{vd.APPROX}**"))
    assert all(v.claim in line for v in table if "(53)" in v.source or "(54)" in v.source)
    assert all(v.status == vd.APPROX for v in table if "(53)" in v.source or "(54)" in v.source)


def test_a_sampled_quantity_is_judged_through_its_estimator_and_interval():
    """Issue 44's one door: the stated estimator and its bootstrap interval decide; an interval across
    the claimed range's bound is "not checkable here"; the same samples give the same interval."""
    near = [1.0 + 0.01 * math.sin(i) for i in range(20)]

    def judge(samples, estimator="mean", low=0.9, high=1.1):
        return vd.check_estimate(
            claim="c",
            source="measured",
            claimed="1",
            samples=samples,
            estimator=estimator,
            limits=vd.Limits(low, high),
            reason="r",
        )

    assert judge(near).status == vd.HOLDS and judge([2.0 + 0.01 * i for i in range(5)]).status == vd.WRONG
    assert judge([0.1, 0.1, 0.1, 3.7]).status == vd.UNCHECKABLE  # mean 1, but four heavy-tailed samples
    assert "cannot decide" in judge([0.1, 0.1, 0.1, 3.7]).reason
    assert judge([1, 1, 0, 1, 1, 1, 1, 1], "fraction", 0.5, 1.0).computed.startswith("fraction 0.875")
    assert stats.bootstrap_interval(near, "median") == stats.bootstrap_interval(near, "median")
    with pytest.raises(ValueError, match="unknown estimator 'mode'; allowed: mean, median, fraction"):
        judge(near, "mode")
    one_seed = judge([1.0])  # a budget that trains one seed: said, not judged
    assert one_seed.status == vd.UNCHECKABLE and "1 seed at this budget" in one_seed.reason
    assert judge([1.0, 1.0]).computed == "mean 1 over 2 seeds"
    with pytest.raises(ValueError, match="finite samples"):
        judge([])
    with pytest.raises(ValueError, match="each must be 0 or 1"):
        judge([0.5, 1, 1], "fraction")
    with pytest.raises(ValueError, match="low"):
        judge(near, low=2.0, high=1.0)


def test_a_statistic_of_all_seeds_goes_through_the_same_door():
    """check_statistic: a quantity computed from the seeds together (the drift of a mean profile) is bootstrapped
    over the seeds and judged by the same rule as check_estimate; one seed is shown, not judged."""

    def drift(profiles):  # seeds × layers → the last layer over the first of the mean profile, minus 1
        mean = [sum(col) / len(col) for col in zip(*profiles, strict=True)]
        return mean[-1] / mean[0] - 1

    def judge(profiles, low=-0.2, high=0.2, statistic=drift):
        return vd.check_statistic(
            claim="flat",
            source="measured",
            claimed="flat",
            seeds=profiles,
            statistic=statistic,
            name="drift of the mean",
            limits=vd.Limits(low, high),
            reason="r",
        )

    flat = [[1 + 0.01 * k, 1.0, 1 + 0.01 * k] for k in range(6)]
    rising = [[1.0, 2.0, 3 + 0.1 * k] for k in range(6)]
    noisy = [[1.0, 1.0, x] for x in (0.5, 1.6, 0.7, 1.5, 0.9, 1.3)]
    assert judge(flat).status == vd.HOLDS and judge(rising).status == vd.WRONG
    assert judge(noisy).status == vd.UNCHECKABLE and "cannot decide" in judge(noisy).reason
    assert judge(rising).computed.startswith("drift of the mean 2.25 (95% bootstrap interval")
    one = judge(flat[:1])
    assert one.status == vd.UNCHECKABLE and "1 seed at this budget" in one.reason
    with pytest.raises(ValueError, match="low"):
        judge(flat, low=1.0, high=0.0)
    with pytest.raises(ValueError, match="not finite on some resample"):  # a NaN seed cannot hide in a min
        judge([1.0, float("nan"), 2.0], low=0.0, high=5.0, statistic=min)
    # check_estimate is this door for one number per seed: the same interval either way
    values = [1.0, 1.2, 0.9, 1.1, 1.05]
    by_estimate = vd.check_estimate(
        claim="c", source="s", claimed="1", samples=values, estimator="mean", limits=vd.Limits(0.5, 1.5), reason="r"
    )
    by_statistic = vd.check_statistic(
        claim="c",
        source="s",
        claimed="1",
        seeds=values,
        statistic=lambda v: sum(v) / len(v),
        name="mean",
        limits=vd.Limits(0.5, 1.5),
        reason="r",
    )
    assert by_estimate.computed == by_statistic.computed


def test_a_law_falls_to_one_counterexample_and_a_particular_claim_is_judged_in_its_setting():
    """Issue 61: a claim measured in several settings is declared a law (refuted by any setting where it fails, holds
    only where every setting agrees) or particular to one setting (judged there, the others context); each row says
    which. The rule it replaces made BERT's eqs. (42)/(54) "not checkable" because a setting the book chose agreed."""
    fails = vd.check_number("§9.2 row", "seed 003 annotated §9.2 table", 0.98, 0.558)
    agrees = vd.check_number("§9.2 row", "seed 003 annotated §9.2 table", 0.98, 0.98)
    near = vd.check_number("§9.2 row", "seed 003 annotated §9.2 table", 0.98, 0.9)
    undecided = vd.Verdict("§9.2 row", "seed 003 annotated §9.2 table", "0.98", "—", vd.UNCHECKABLE, "2 seeds")
    settings = ("the tables' setting", "BERT's")
    law = vd.judge_settings([agrees, fails], settings, vd.LAW)
    assert law.status == vd.WRONG and "0.558" in law.computed and "0.98" in law.computed
    assert law.reason.startswith("a law, refuted by a setting inside its premises (BERT's)")
    assert vd.judge_settings([agrees, agrees], settings, vd.LAW).status == vd.HOLDS
    assert vd.judge_settings([agrees, near], settings, vd.LAW).status == vd.APPROX
    assert vd.judge_settings([agrees, undecided], settings, vd.LAW).status == vd.UNCHECKABLE
    assert vd.judge_settings([undecided, fails], settings, vd.LAW).status == vd.WRONG  # a counterexample still counts
    mine = vd.judge_settings([fails, agrees], settings, vd.PARTICULAR, own=1)
    assert mine.status == vd.HOLDS and mine.reason.startswith("particular to BERT's, judged there")
    assert "wrong in the tables' setting" in mine.reason
    assert vd.judge_settings([agrees, fails], settings, vd.PARTICULAR, own=1).status == vd.WRONG
    with pytest.raises(ValueError, match="one verdict per setting"):
        vd.judge_settings([agrees], settings[:1], vd.LAW)
    with pytest.raises(ValueError, match="kind"):
        vd.judge_settings([agrees, agrees], settings, "usually")
    with pytest.raises(ValueError, match="own must index"):
        vd.judge_settings([agrees, agrees], settings, vd.PARTICULAR, own=2)
    other = vd.check_number("another row", "seed 003 annotated §9.2 table", 0.98, 0.98)
    with pytest.raises(ValueError, match="one claim of one source"):
        vd.judge_settings([agrees, other], settings, vd.LAW)


def _near(samples, value=1.0, rtol=0.1, approx_rtol=0.3):
    return vd.check_near(
        claim="c",
        source="s",
        claimed=str(value),
        value=value,
        samples=samples,
        estimator="mean",
        rtol=rtol,
        approx_rtol=approx_rtol,
        reason="r",
    )


def test_a_measurement_against_a_number_keeps_check_numbers_grades_through_the_door():
    """check_near: within rtol holds, within approx_rtol holds approximately, wholly beyond it wrong, an interval
    across a band's edge not checkable; one seed is not judged; no relative band around 0."""
    assert _near([1.0, 1.01, 0.99, 1.02]).status == vd.HOLDS
    assert _near([1.2, 1.21, 1.19, 1.22]).status == vd.APPROX
    assert _near([2.0, 2.1, 1.9, 2.05]).status == vd.WRONG
    assert _near([0.5, 1.5, 0.6, 1.6]).status == vd.UNCHECKABLE
    assert _near([1.0]).status == vd.UNCHECKABLE
    with pytest.raises(ValueError, match="rtol"):
        _near([1.0] * 3, rtol=0.5, approx_rtol=0.1)
    with pytest.raises(ValueError, match="value must not be 0"):
        _near([0.0] * 3, value=0.0)


def test_the_seeds_text_keeps_a_huge_value_short():
    assert vd.seeds_text([0.88, 0.1, 0.91]) == "0.88 (0.88, 0.10, 0.91)"
    assert vd.seeds_text([-35714856846.96, -2.3e10, 0.5]) == "-2.3e+10 (-3.6e+10, -2.3e+10, 0.50)"
    assert vd.seeds_text([float("-inf"), float("-inf"), 0.5]) == "diverged (div., div., 0.50)"
