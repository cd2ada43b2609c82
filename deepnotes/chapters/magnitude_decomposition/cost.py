"""Cost plan of the chapter "Magnitude decomposition and the DeepNorm scalings": the work its notebook
does at a budget, for :mod:`deepnotes.cost.model`. One line per experiment:

    lambda_gradient_sweep   per (α, λ) of the alphas × lambdas grid and seed (probe_seeds): a float64
                            reference model of probe_depth blocks built, one forward + backward of its
                            modules on batch_size × seq_len tokens
    first_step_sweep        per optimizer of first_step_lrs, update depth and (α, λ) choice of
                            experiments.choices: a float64 reference model built, loaded into a Stack, one
                            forward + backward on PyTorch's path (the kernels are float32), one optimizer step
    identity_sweep          per setting at identity_depth: a reference model built, one forward of its
                            modules keeping the stream (no gradients)
    choice_comparison       run_choices: one ensemble per training depth, optimizer and rate of train_lrs,
                            a member per choice of training.PLAN (each built as a reference model first),
                            train_steps steps
    slider "choices"        the precomputed grid (slider_depths × scaling.OPTIMIZERS): run_choices of every
                            choice at the optimizer's first rate (one ensemble), slider_steps steps

Every stack is a DeepNorm stack (deepnorm_model); α and λ change no count, so each item uses the
budget's DeepNorm config. The float64 probes are counted as float32 passes (same FLOPs and launches).
Left out as small or not counted: the decomposition table and the orthogonality check (CPU matrices of
at most 128 × 128), the autograd check (check_depth blocks, three passes per matrix kind), the λ_F
tracker of the training runs (every track_every steps, a Gram matrix per β-scaled matrix), the Python
loops that read each matrix's ∂L/∂λ, the float64 probes' extra cost over float32. The SymPy derivations and
the verdict tables that run no experiment are priced as :class:`Derivations` (:func:`derivations`).
Nothing depends on results; the live panel runs nothing at build time.
"""

from __future__ import annotations

from deepnotes.chapters.magnitude_decomposition import controls
from deepnotes.chapters.magnitude_decomposition.budget import sizes
from deepnotes.chapters.magnitude_decomposition.experiments import choices
from deepnotes.chapters.magnitude_decomposition.training import PLAN
from deepnotes.core import scaling
from deepnotes.core.config import Budget, ModelConfig, resolve_budget
from deepnotes.core.validate import Finite
from deepnotes.cost.model import (
    Builds,
    Derivations,
    ReferencePasses,
    Render,
    StackPasses,
    TrainRuns,
    Work,
    slider_frames,
)

# identity_sweep's settings besides SGD's picks: Adam's λ = 1/α, the paper's constants, Post-LN
IDENTITY_EXTRA_SETTINGS = 3

# the figures the page shows besides its sliders' frames (tests/test_book.py counts them in the smoke build)
FIGURES = 5


def _deepnorm(budget: Budget | str, n_layers: int) -> ModelConfig:
    """:func:`~deepnotes.chapters.magnitude_decomposition.experiments.deepnorm_model`'s config (any α, λ)."""
    return budget.model_config(n_layers, norm="deepnorm")


def _reference_probes(budget: Budget | str, n_layers: int, probes: int, backward: bool = True) -> list[Work]:
    """``probes`` reference models of one DeepNorm config built, one pass of each on the budget's probe
    batch through its modules."""
    model = _deepnorm(budget, n_layers)
    return [
        Builds(model, probes),
        ReferencePasses(model, budget.batch_size, budget.seq_len, passes=probes, backward=backward),
    ]


def _first_steps(budget: Budget | str, n_layers: int, probes: int) -> list[Work]:
    """``probes`` first steps: a reference model built, one pass of a one-member float64 Stack on PyTorch's
    path (the optimizer step's few operators per matrix are left out)."""
    model = _deepnorm(budget, n_layers)
    return [
        Builds(model, probes),
        StackPasses(model, 1, budget.batch_size, budget.seq_len, passes=probes, compiled=False),
    ]


def _run_choices(
    budget: Budget | str, n_layers: int, optimizer: str, lr: Finite, steps: int, members: int
) -> list[Work]:
    """:func:`~deepnotes.chapters.magnitude_decomposition.training.run_choices`: a reference model built per
    choice and seed, then one ensemble, a member per choice and seed."""
    model = _deepnorm(budget, n_layers)
    return [Builds(model, members), TrainRuns(model, members, budget.train_config(optimizer, lr, steps))]


def derivations(budget: Budget | str) -> Derivations:
    """The page's SymPy derivations and the verdict tables that run no experiment (as its cells call them)."""
    budget = resolve_budget(budget)
    from deepnotes.chapters.magnitude_decomposition import (
        claims,
        derive,
    )  # here: the derivations import SymPy, the plan need not

    return Derivations(
        (
            (derive.magnitude_lambda, ()),
            (derive.xavier_lambda, ()),
            (derive.lambda_gradient_identity, ()),
            (derive.relu_homogeneity, ()),
            *((derive.solve_pick, (opt, pick)) for opt in scaling.OPTIMIZERS for pick in scaling.PICKS),
            (derive.paper_constants, ()),
            (claims.main_text_verdicts, (budget.name,)),
            (claims.annotated_verdicts, ()),
            (claims.annotated_verdicts, ()),  # twice: the verdicts and the summary,
        )
    )


def plan(budget: Budget | str) -> list[Work]:
    """The chapter's work at ``budget``: see the module's docstring."""
    budget = resolve_budget(budget)
    mb = sizes(budget)
    sgd_picks = len(choices(mb.identity_depth, "sgd")) - 1  # identity_sweep: SGD's choices less the paper's
    return [
        *_reference_probes(budget, mb.probe_depth, len(mb.alphas) * len(mb.lambdas) * mb.probe_seeds),  # lambda sweep
        *(
            work  # first_step_sweep
            for opt in mb.first_step_lrs
            for n in mb.update_depths
            for work in _first_steps(budget, n, len(choices(n, opt)))
        ),
        *_reference_probes(budget, mb.identity_depth, sgd_picks + IDENTITY_EXTRA_SETTINGS, backward=False),  # identity
        *(
            work  # choice_comparison
            for n in mb.train_depths
            for opt, lrs in mb.train_lrs.items()
            for lr in lrs
            for work in _run_choices(budget, n, opt, lr, mb.train_steps, len(PLAN[opt]) * mb.train_seeds)
        ),
        *(
            work  # slider grid
            for n in mb.slider_depths
            for opt in scaling.OPTIMIZERS
            for work in _run_choices(budget, n, opt, mb.train_lrs[opt][0], mb.slider_steps, len(choices(n, opt)))
        ),
        derivations(budget),
        Render(FIGURES + slider_frames(controls.sliders(budget).values())),  # the page's figures and slider frames
    ]
