"""Cost plan of the chapter "Magnitude decomposition and the DeepNorm scalings": the work its notebook
does at a budget, for :mod:`deepnotes.cost.model`. One line per experiment:

    lambda_gradient_sweep   one forward + backward of the probe_depth DeepNorm stack per (α, λ) of the
                            alphas × lambdas grid and seed (probe_seeds), on batch_size × seq_len tokens
    first_step_sweep        one forward + backward (then one optimizer step) per optimizer of first_step_lrs,
                            update depth and (α, λ) choice of experiments.choices
    identity_sweep          one forward (the stream, no gradients) per setting at identity_depth
    choice_comparison       run_choices: one ensemble per training depth, optimizer and rate of train_lrs,
                            a member per choice of training.PLAN, train_steps steps
    slider "choices"        the precomputed grid (slider_depths × scaling.OPTIMIZERS): run_choices of every
                            choice at the optimizer's first rate (one ensemble), slider_steps steps

Every stack is a DeepNorm stack (deepnorm_model); α and λ change no count, so each item uses the
budget's DeepNorm config. The probes run in float64 and are counted as float32 passes (same FLOPs and
launches). Left out as small: the decomposition table and the orthogonality check (CPU matrices of at
most 128 × 128), the autograd check (check_depth blocks, three passes per matrix kind), SymPy. Nothing
depends on results; the live panel runs nothing at build time.
"""

from __future__ import annotations

from deepnotes.chapters.magnitude_decomposition import controls
from deepnotes.chapters.magnitude_decomposition.experiments import choices
from deepnotes.chapters.magnitude_decomposition.training import PLAN
from deepnotes.core import scaling
from deepnotes.core.config import Budget, ModelConfig, resolve_budget
from deepnotes.core.validate import Finite
from deepnotes.cost.model import Render, StackPasses, TrainRuns, Work, slider_frames

# identity_sweep's settings besides SGD's picks: Adam's λ = 1/α, the paper's constants, Post-LN
IDENTITY_EXTRA_SETTINGS = 3

# the figures the page shows besides its sliders' frames (tests/test_book.py counts them in the smoke build)
FIGURES = 5


def _deepnorm(budget: Budget | str, n_layers: int) -> ModelConfig:
    """:func:`~deepnotes.chapters.magnitude_decomposition.experiments.deepnorm_model`'s config (any α, λ)."""
    return budget.model_config(n_layers, norm="deepnorm")


def _probe(budget: Budget | str, n_layers: int, passes: int, backward: bool = True) -> StackPasses:
    """``passes`` passes of one DeepNorm stack at init on the budget's probe batch."""
    return StackPasses(
        _deepnorm(budget, n_layers), 1, budget.batch_size, budget.seq_len, passes=passes, backward=backward
    )


def _run_choices(
    budget: Budget | str, n_layers: int, optimizer: str, lr: Finite, steps: int, members: int
) -> TrainRuns:
    """:func:`~deepnotes.chapters.magnitude_decomposition.training.run_choices`: one ensemble, a member
    per choice."""
    return TrainRuns(_deepnorm(budget, n_layers), members, budget.train_config(optimizer, lr, steps))


def plan(budget: Budget | str) -> list[Work]:
    """The chapter's work at ``budget``: see the module's docstring."""
    budget = resolve_budget(budget)
    mb = budget.magnitude_decomposition
    sgd_picks = len(choices(mb.identity_depth, "sgd")) - 1  # identity_sweep: SGD's choices less the paper's
    return [
        _probe(budget, mb.probe_depth, len(mb.alphas) * len(mb.lambdas) * mb.probe_seeds),  # lambda_gradient_sweep
        *(
            _probe(budget, n, len(choices(n, opt)))  # first_step_sweep
            for opt in mb.first_step_lrs
            for n in mb.update_depths
        ),
        _probe(budget, mb.identity_depth, sgd_picks + IDENTITY_EXTRA_SETTINGS, backward=False),  # identity_sweep
        *(
            _run_choices(budget, n, opt, lr, mb.train_steps, len(PLAN[opt]))  # choice_comparison
            for n in mb.train_depths
            for opt, lrs in mb.train_lrs.items()
            for lr in lrs
        ),
        *(
            _run_choices(budget, n, opt, mb.train_lrs[opt][0], mb.slider_steps, len(choices(n, opt)))  # slider grid
            for n in mb.slider_depths
            for opt in scaling.OPTIMIZERS
        ),
        Render(FIGURES + slider_frames(controls.sliders(budget).values())),  # the page's figures and slider frames
    ]
