"""Cost plan of the chapter "Increment explosion": the work its notebook does at a budget, for
:mod:`deepnotes.cost.model`. One line per experiment:

    loss_change_sweep     per probe depth and graph group of PROBED_VARIANTS (Post-LN with both DeepNorms; Pre-LN),
                          a stack of its variants × probe_repeats: per optimizer (SGD, Adam) one forward + backward
                          and one forward after the step (step_probes), on batch_size × seq_len tokens
    early_updates         per parameter set (all, matrices only): per update depth one ensemble of the three
                          EARLY_UPDATE_VARIANTS (one graph), update_steps Adam steps at update_lr
    paper_size_updates    the same with every parameter trained, at paper_shape (DeepNet Fig. 5's 64-128-2)
    training_comparisons  the shared warmup comparison (deepnotes.shared.warmup) at every train depth, as
                          train_many groups its runs
    slider_grid           per slider depth and optimizer, the slider_norms as train_many groups them
                          (every norm style shares one graph), slider_steps steps at slider_lrs

The loss-change probes run in float64; they are counted as float32 passes (the same FLOPs and launches).
Nothing here depends on results; the SymPy derivations are priced as :class:`Derivations`, and the live panel
runs nothing at build time (every slider setting drawn at build time comes from slider_grid).
"""

from __future__ import annotations

import inspect
from dataclasses import replace

from deepnotes.chapters.increment_explosion import controls
from deepnotes.chapters.increment_explosion.budget import sizes
from deepnotes.chapters.increment_explosion.experiments import (
    EARLY_UPDATE_VARIANTS,
    PARAM_SETS,
    PROBED_VARIANTS,
    graph_groups,
    loss_change_sweep,
    variant_config,
)
from deepnotes.core.config import Budget, TrainConfig, resolve_budget
from deepnotes.cost.model import Derivations, Render, StackPasses, TrainRuns, Work, ensembles, slider_frames
from deepnotes.shared import warmup

# the figures the page shows besides its sliders' frames (tests/test_book.py counts them in the smoke build)
FIGURES = 4


def _grouped(
    settings: list[tuple[str, int, TrainConfig]], budget: Budget | str, shape: tuple[int, int, int] | None = None
) -> list[TrainRuns]:
    """:func:`~deepnotes.chapters.increment_explosion.experiments.runs`: train_many's ensembles of
    (variant, depth, train config) settings."""
    return ensembles([variant_config(v, n, budget, shape) for v, n, _ in settings], [t for _, _, t in settings])


def _loss_change_probes(budget: Budget | str) -> list[StackPasses]:
    """:func:`~deepnotes.chapters.increment_explosion.experiments.loss_change_sweep` at its defaults:
    per (depth, graph group) stack, per optimizer, a forward + backward and a forward without gradients."""
    sub = sizes(budget)
    optimizers = len(inspect.signature(loss_change_sweep).parameters["optimizers"].default)
    b, t = budget.batch_size, budget.seq_len
    out = []
    for n in sub.probe_depths:
        for group in graph_groups(PROBED_VARIANTS, n, budget):
            model, members = variant_config(group[0], n, budget), len(group) * sub.probe_repeats
            out += [
                StackPasses(model, members, b, t, passes=optimizers),
                StackPasses(model, members, b, t, passes=optimizers, backward=False),
            ]
    return out


def _early_update_sweep(budget: Budget | str, shape: tuple[int, int, int] | None = None) -> list[TrainRuns]:
    """:func:`~deepnotes.chapters.increment_explosion.experiments.early_update_sweep` (Adam, update_lr)."""
    sub = sizes(budget)
    train = replace(budget.train_config("adam", sub.update_lr, sub.update_steps), held_out=0)
    settings = [
        (v, n, replace(train, seed=s))
        for v in EARLY_UPDATE_VARIANTS
        for n in sub.update_depths
        for s in range(sub.update_seeds)
    ]
    return _grouped(settings, budget, shape)


def _slider_grid(budget: Budget | str) -> list[TrainRuns]:
    """:func:`~deepnotes.chapters.increment_explosion.experiments.slider_grid`: one runs call."""
    sub = sizes(budget)
    return _grouped(
        [
            (v, n, budget.train_config(o, sub.slider_lrs[o], sub.slider_steps))
            for n in sub.slider_depths
            for v in sub.slider_norms
            for o in sub.slider_optimizers
        ],
        budget,
    )


def derivations() -> Derivations:
    """The page's SymPy derivations and the verdict tables that run no experiment (as its cells call them)."""
    from deepnotes.chapters.increment_explosion import derive  # here: the derivations import SymPy, the plan need not

    return Derivations(
        (
            (derive.increment, ()),
            (derive.deepnet_encoder, ()),
        )
    )


def plan(budget: Budget | str) -> list[Work]:
    """The chapter's work at ``budget``: see the module's docstring."""
    budget = resolve_budget(budget)
    return [
        *_loss_change_probes(budget),  # loss_change_sweep
        *(w for _ in PARAM_SETS for w in _early_update_sweep(budget)),  # early_updates
        *_early_update_sweep(budget, sizes(budget).paper_shape),  # paper_size_updates
        *warmup.work(budget, sizes(budget).train_depths),  # training_comparisons
        *_slider_grid(budget),  # slider_grid (slider "training")
        derivations(),
        Render(FIGURES + slider_frames(controls.sliders(budget).values())),  # the page's figures and slider frames
    ]
