"""Cost plan of the chapter "Training 1000 layers": the work its notebook does at a budget, for
:mod:`deepnotes.cost.model`. One line per experiment:

    init_profiles     each graph of PROFILE_STYLES at the headline depth as one Stack (every style
                      in one): stream_profiles' forward + backward, block by block on PyTorch's path
                      (it keeps the stream and its gradients), on train_batch tokens
    train_runs        every Run of experiments.plan (the frontier, warmup's test, DeepNet's constants
                      apart, the map's other rates, the deepest DeepNorm beside Post-LN) in train_many's
                      ensembles
    slider "frontier" the precomputed grid (slider_depths × MAP_STYLES) reads train_runs' histories; a
                      setting they lack would be a live_run (a one-member ensemble). At every budget the
                      slider's depths are frontier or headline depths, so this adds nothing

Nothing here depends on results; the live panel runs nothing at build time. Left out: the readings of
the runs (frontier, summaries); the SymPy derivations are priced as :class:`Derivations`.
"""

from __future__ import annotations

from deepnotes.chapters.thousand_layers import controls
from deepnotes.chapters.thousand_layers.budget import sizes
from deepnotes.chapters.thousand_layers.experiments import (
    MAP_STYLES,
    PROFILE_SEEDS,
    PROFILE_STYLES,
    Run,
    variant_config,
    variant_train_config,
)
from deepnotes.chapters.thousand_layers.experiments import plan as runs_plan
from deepnotes.core.config import Budget, resolve_budget
from deepnotes.core.engine import graph_config
from deepnotes.cost.model import Derivations, Render, StackPasses, TrainRuns, Work, ensembles, slider_frames

# the figures the page shows besides its sliders' frames (tests/test_book.py counts them in the smoke build)
FIGURES = 6


def _init_profiles(budget: Budget | str) -> list[StackPasses]:
    """:func:`~deepnotes.chapters.thousand_layers.experiments.init_profiles`: one Stack per graph of
    PROFILE_STYLES (members: its styles × PROFILE_SEEDS), one forward + backward block by block (PyTorch's path)."""
    sub = sizes(budget)
    batch, seq = sub.train_batch
    groups: dict = {}  # graph → [a member's config, members]
    for style in PROFILE_STYLES:
        cfg = variant_config(style, sub.depth, budget)
        groups.setdefault(graph_config(cfg), [cfg, 0])[1] += PROFILE_SEEDS
    return [StackPasses(cfg, members, batch, seq, compiled=False) for cfg, members in groups.values()]


def _train_runs(budget: Budget | str, runs: list[Run]) -> list[TrainRuns]:
    """:func:`~deepnotes.chapters.thousand_layers.experiments.train_runs` of ``runs``: train_many's ensembles."""
    return ensembles(
        [variant_config(r.label, r.depth, budget) for r in runs],
        [variant_train_config(r.label, r.depth, budget, r.seed, r.lr) for r in runs],
    )


def _slider_live_runs(budget: Budget | str, runs: list[Run]) -> list[TrainRuns]:
    """:func:`~deepnotes.chapters.thousand_layers.figures.slider_figure` over the grid: a live_run (seed 0,
    one member, the chapter's rate) for each setting the chapter's runs lack."""
    sub = sizes(budget)
    trained = {r.cell for r in runs}
    grid = [(style, n) for n in sub.slider_depths for style in MAP_STYLES]
    return [
        w for lab, n in grid if (lab, n, sub.lr) not in trained for w in _train_runs(budget, [Run(lab, n, sub.lr, 0)])
    ]


def derivations() -> Derivations:
    """The page's SymPy derivations and the verdict tables that run no experiment (as its cells call them)."""
    from deepnotes.chapters.thousand_layers import (
        claims,
        derive,
    )  # here: the derivations import SymPy, the plan need not

    return Derivations(
        (
            (derive.deepnorm_constants, (derive.DEEPNET_DEPTH,)),
            (derive.identity_weights, ()),
            (derive.identity_at, (derive.DEEPNET_DEPTH,)),
            (derive.loss_change_growth, (derive.DEEPNET_DEPTH, derive.REFERENCE_DEPTH)),
            (derive.warmup_length, ()),
            (claims.predictions, (derive.DEEPNET_DEPTH,)),
        )
    )


def plan(budget: Budget | str) -> list[Work]:
    """The chapter's work at ``budget``: see the module's docstring."""
    budget = resolve_budget(budget)
    runs = runs_plan(budget)
    return [
        *_init_profiles(budget),  # init_profiles
        *_train_runs(budget, runs),  # train_runs
        *_slider_live_runs(budget, runs),  # slider "frontier" (live runs for settings not trained)
        derivations(),
        Render(FIGURES + slider_frames(controls.sliders(budget).values())),  # the page's figures and slider frames
    ]
