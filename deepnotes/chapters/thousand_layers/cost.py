"""Cost plan of the chapter "Training 1000 layers": the work its notebook does at a budget, for
:mod:`deepnotes.core.cost`. One line per experiment:

    init_profiles   each graph of PROFILE_STYLES at the headline depth (Post-LN and DeepNorm share one):
                    one forward for the stream, one forward + backward for the block gradients
    train_runs      every (label, depth, seed) of experiments.plan, in train_many's ensembles

Nothing here depends on results; the slider grid reuses the training runs and the live panel runs
nothing at build time.
"""
from __future__ import annotations

from deepnotes.chapters.thousand_layers.experiments import PROFILE_STYLES, plan as runs_plan, variant_config, \
    variant_train_config
from deepnotes.core.budget import Budget
from deepnotes.core.cost import StackPasses, Work, ensembles
from deepnotes.core.engine import graph_config


def _init_profiles(budget: Budget) -> list[StackPasses]:
    sub = budget.thousand_layers
    batch, seq = sub.train_batch
    groups: dict = {}
    for style in PROFILE_STYLES:
        cfg = variant_config(style, sub.depth, budget)
        groups.setdefault(graph_config(cfg), [cfg, 0])[1] += 1
    return [StackPasses(cfg, members, batch, seq, backward=backward)
            for cfg, members in groups.values() for backward in (False, True)]


def plan(budget: Budget) -> list[Work]:
    """The chapter's work at ``budget``: see the module's docstring."""
    runs = runs_plan(budget)
    return [
        *_init_profiles(budget),                                                          # init_profiles
        *ensembles([variant_config(lab, n, budget) for lab, n, _ in runs],                # train_runs
                   [variant_train_config(lab, budget, seed) for lab, _, seed in runs]),
    ]
