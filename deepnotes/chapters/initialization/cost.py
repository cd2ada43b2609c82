"""Cost plan of the chapter "Initialization, parametrization and normalization": the work its notebook
does at a budget, for :mod:`deepnotes.cost.model`. The chapter trains no Transformer (no ensemble of
``train_ensemble``); its device work is plain MLPs:

    moment_table     one forward pass of a moment_depth × moment_width MLP on moment_batch inputs per (init, activation)
                     and weight draw (moment_seeds)
    moment_figure    the same per setting of the precomputed slider grid (activation × slider_gains, at moment_depth)
    ntk_comparison   per parametrization (standard, NTK): ntk_steps Adam steps (forward + backward) of an
                     ntk_depth × ntk_width MLP on ntk_batch inputs
    ntk_first_steps  per parametrization and each further seed of PROBE_SEEDS: one Adam step of the same MLP

Left out as too small to matter: the truncated-normal draws, the mean-field recursions (scalar work on
the CPU), the softmax probes and attention rows (at most 256 × 1024
scores), and norm_comparison, which times LayerNorm and RMSNorm for ``norm_timer_seconds`` per timer
(four timers: a fixed couple of seconds, whatever the device). The live panels run nothing at build time.
"""

from __future__ import annotations

import inspect

from deepnotes.chapters.initialization import controls
from deepnotes.chapters.initialization.budget import sizes
from deepnotes.chapters.initialization.experiments import PROBE_SEEDS, moment_table
from deepnotes.chapters.initialization.mlp import ACTIVATIONS
from deepnotes.core.config import Budget, resolve_budget
from deepnotes.cost.model import Derivations, MLPPasses, Render, Timed, Work, slider_frames

PARAMETRIZATIONS = (False, True)  # ntk_comparison's runs: standard (He), NTK

# the figures the page shows besides its sliders' frames (tests/test_book.py counts them in the smoke build)
FIGURES = 3


def _moment_passes(budget: Budget | str, curves: int) -> MLPPasses:
    """``curves`` forward passes of the second-moment MLP (each curve builds its own MLP: same cost)."""
    b = sizes(budget)
    return MLPPasses(width=b.moment_width, depth=b.moment_depth, batch=b.moment_batch, passes=curves)


def derivations() -> Derivations:
    """The page's SymPy derivations and the verdict tables that run no experiment (as its cells call them)."""
    from deepnotes.chapters.initialization import derive, norms  # here: the derivations import SymPy, the plan need not

    return Derivations(
        (
            (derive.sampling, ()),
            (derive.second_moments, ()),
            (derive.selu_constants, (20,)),
            (derive.layernorm_jacobian_check, ()),
            (norms.formula_checks, ()),
            (derive.ntk_and_attention, ()),
        )
    )


def plan(budget: Budget | str) -> list[Work]:
    """The chapter's work at ``budget``: see the module's docstring."""
    budget = resolve_budget(budget)
    b = sizes(budget)
    table = inspect.signature(moment_table).parameters  # the notebook calls it with its defaults
    return [
        _moment_passes(
            budget, len(table["inits"].default) * len(table["acts"].default) * b.moment_seeds
        ),  # moment_table, every weight draw
        _moment_passes(budget, len(ACTIVATIONS) * len(b.slider_gains)),  # moment_figure (grid)
        *(
            MLPPasses(width=b.ntk_width, depth=b.ntk_depth, batch=b.ntk_batch, passes=b.ntk_steps, backward=True)
            for _ in PARAMETRIZATIONS
        ),  # ntk_comparison
        *(
            MLPPasses(width=b.ntk_width, depth=b.ntk_depth, batch=b.ntk_batch, passes=1, backward=True)
            for _ in PARAMETRIZATIONS
            for _ in range(1, PROBE_SEEDS)
        ),  # ntk_first_steps: one step of every further seed
        Timed(4 * b.norm_timer_seconds),  # norm_comparison: 2 modules × forward, forward + backward timers
        derivations(),
        Render(FIGURES + slider_frames(controls.sliders(budget).values())),  # the page's figures and slider frames
    ]
