"""Training-outcome verdicts carry their claim's direction (issue 30): the status is computed from
which runs the source says train and what each measured, never from the claim's words."""
import json
import math
from dataclasses import asdict

import pytest

from deepnotes.show import verdicts as vd


def _verdict(expected, measured):
    return vd.check_outcome(claim="c", source="s", expected=expected, measured=measured, threshold=0.5, reason="r")


def test_a_claim_that_a_run_does_not_train_holds_when_it_does_not():
    assert _verdict({"plain": False}, {"plain": 0.07}).status == vd.HOLDS       # "necessarily hard to train"
    assert _verdict({"plain": False}, {"plain": 0.9}).status == vd.WRONG
    assert _verdict({"plain": False, "residual": True}, {"plain": 0.07, "residual": 0.8}).status == vd.HOLDS
    assert _verdict({"plain": False, "residual": True}, {"plain": 0.07, "residual": 0.2}).status == vd.WRONG
    assert _verdict({"post": False}, {"post": -math.inf}).status == vd.HOLDS    # diverged: did not train


def test_the_direction_survives_the_record_and_bad_input_is_refused():
    v = _verdict({"a": True, "b": False}, {"a": 0.5, "b": -math.inf})
    back = vd.outcome_of(json.loads(json.dumps(asdict(v.outcome))))
    assert back == v.outcome and back.holds() and "a: trains; b: does not train" in v.claimed
    with pytest.raises(ValueError, match="measured lacks"):
        _verdict({"a": True}, {"b": 0.1})
    with pytest.raises(ValueError, match="True .trains. or False"):
        _verdict({"a": "yes"}, {"a": 0.1})


def test_a_take_away_is_written_from_the_verdict_table():
    """Issue 30: magnitude decomposition listed eqs. (53), (54), (73) as wrong beside 'holds
    approximately'; its take-away is now the table's own grouping."""
    from deepnotes.chapters.magnitude_decomposition import claims
    table = claims.annotated_verdicts()
    text = vd.summary_markdown(table, "The annotated section")
    for status in (vd.WRONG, vd.APPROX, vd.HOLDS):
        count = sum(v.status == status for v in table)
        assert f"**{status}** ({count}):" in text
    line = next(part for part in text.split("\n- ") if part.startswith(f"**{vd.APPROX}**"))
    assert all(v.claim in line for v in table if "(53)" in v.source or "(54)" in v.source)
    assert all(v.status == vd.APPROX for v in table if "(53)" in v.source or "(54)" in v.source)
