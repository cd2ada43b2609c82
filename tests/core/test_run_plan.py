"""Issue 45: a train_many call as data. A RunPlan is what a chapter trains (train_plan) and what its estimate
prices (planned_ensembles): the same runs, grouped the same way, with the same numbers as train_many itself."""

from __future__ import annotations

import pytest

import deepnotes as dn
from deepnotes.core.ensembles import RunPlan, ensemble_groups, train_many, train_plan
from deepnotes.core.train import Masked
from deepnotes.cost.model import planned_ensembles

SMOKE = dn.get_budget("smoke")


def _runs(n: int = 3):
    models = [SMOKE.model_config(2, norm=norm) for norm in ("post", "pre", "deepnorm")][:n]
    trains = [SMOKE.train_config("adam", 1e-3, 2, seed=s) for s in range(n)]
    return models, trains


def test_train_plan_is_train_many_of_the_plans_runs():
    models, trains = _runs()
    task = dn.MarkovLanguage(SMOKE.vocab_size, seed=0)
    planned = train_plan(RunPlan(models, trains, task))
    direct = train_many(models, trains, task)
    assert [h.losses for h in planned] == [h.losses for h in direct]


def test_planned_ensembles_are_the_groups_train_many_makes():
    models, trains = _runs()
    plan = RunPlan(models, trains, None)
    for workers in (1, 2):
        ensembles = planned_ensembles(plan, workers=workers)
        groups = ensemble_groups(models, trains, workers)
        assert [e.members for e in ensembles] == [len(g) for g in groups]
        assert all(e.masked is None for e in ensembles)
    encoder = [SMOKE.model_config(2, causal=False)]
    masked = planned_ensembles(RunPlan(encoder, trains[:1], None, objective=Masked(0.15)))
    assert [e.masked for e in masked] == [0.15]  # the masked objective's probability is priced


@pytest.mark.parametrize(
    "make, bad",
    [
        (lambda: RunPlan(*_runs(3)[:1], _runs(2)[1], None), "3 model configs for 2 train configs"),
        (lambda: RunPlan(_runs()[0], "not configs", None), "violates"),
    ],
)
def test_a_plan_of_mismatched_runs_is_refused(make, bad):
    with pytest.raises((ValueError, TypeError), match=bad):
        make()
