"""Every norm style now trains in one graph, so the chapters' runs form fewer, mixed ensembles. Each
chapter that trains several styles gives the same numbers with the new grouping as with the old one
(one graph per style; Post-LN beside DeepNorm), to float32 rounding, at the smoke budget. The other
chapters' ensembles hold one style (bert_init, magnitude decomposition) or Post-LN and DeepNorm only
(increment explosion's training runs), which always shared a graph."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from deepnotes import RunContext
from deepnotes.core import ensembles as ensemble
from deepnotes.core import optim
from deepnotes.core.config import get_budget

SMOKE = get_budget("smoke")
FLOAT32_REL = 1e-4  # members are independent; only the batched kernels' summation order may differ


def old_groups(model_cfgs, train_cfgs):
    """The grouping before styles became data: one graph per norm style (Post-LN = DeepNorm at α = 1)."""
    groups: dict[tuple, list[int]] = {}
    for i, (mc, tc) in enumerate(zip(model_cfgs, train_cfgs, strict=True)):
        graph = replace(mc, alpha=None, beta=None, init_std=None, norm="deepnorm" if mc.norm == "post" else mc.norm)
        groups.setdefault((graph, *(getattr(tc, f) for f in optim.SHARED_FIELDS)), []).append(i)
    return list(groups.values())


def _histories(result) -> list:
    """The Histories of a chapter function's result, in a fixed order."""
    if hasattr(result, "histories"):
        result = result.histories
    if isinstance(result, dict):
        return [h for key in sorted(result, key=str) for h in _histories(result[key])]
    if isinstance(result, (list, tuple)):
        return [h for item in result for h in _histories(item)]
    return [result]


def _thousand_layers():
    from deepnotes.chapters.thousand_layers.experiments import train_runs

    return train_runs(RunContext.here(SMOKE, workers=1))


def _post_vs_pre_norm():
    from deepnotes.chapters.post_vs_pre_norm.experiments import training_runs

    return training_runs(RunContext.here(SMOKE))


@pytest.mark.parametrize("chapter", [_thousand_layers, _post_vs_pre_norm], ids=["thousand_layers", "post_vs_pre_norm"])
def test_a_chapter_gives_the_same_numbers_in_mixed_ensembles(chapter, monkeypatch):
    real, made = ensemble.ensemble_groups, {"new": [], "old": []}

    def recording(kind, grouping):  # counts the groups before they are cut to balance the workers
        return lambda m, t, w=1, limit=None: made[kind].append(grouping(m, t, 1)) or grouping(m, t, w)

    monkeypatch.setattr(ensemble, "ensemble_groups", recording("new", real))
    new = _histories(chapter())
    monkeypatch.setattr(ensemble, "ensemble_groups", recording("old", lambda m, t, w: old_groups(m, t)))
    old = _histories(chapter())
    count = {k: sum(len(groups) for groups in v) for k, v in made.items()}
    assert count["old"] > count["new"] >= 1  # the styles now share ensembles
    assert len(new) == len(old)
    for a, b in zip(new, old, strict=True):
        assert a.diverged_at == b.diverged_at
        assert len(a.losses) == len(b.losses) and a.losses
        for x, y in zip(a.losses, b.losses, strict=True):
            assert math.isclose(x, y, rel_tol=FLOAT32_REL, abs_tol=1e-6), (x, y)
