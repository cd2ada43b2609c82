"""Cost plan of the chapter "Why residuals?": the work its notebook does at a budget, for
:mod:`deepnotes.cost.model`. One line per experiment; a plain or residual MLP block is two width × width
matmuls (x + ε·relu(x W1ᵀ) W2ᵀ), so a stack of N blocks counts as an MLP of 2N layers:

    gradient_sweep     layer_gradients: one forward + backward per kind, grad width, grad depth and seed
                       (grad_seeds) on grad_batch inputs (float64)
    growth_sweep       jacobian_growth per width, kind and depth on probe_batch inputs (× width1_batch_factor
                       at width 1): counted by running it (a forward and a vector-Jacobian pass, no autograd,
                       and its per-block read-backs of cosines, ratios and the running median)
    train_sweep        mlp_runs: the MLP language model (the engine's MLP block) at train_width, train_steps
                       steps per depth, optimizer, kind and seed, as train_many groups them into ensembles
    transformer_sweep  transformer_runs: every transformer depth, kind and seed, Adam at transformer_lr, as
                       train_many groups them (nothing when the budget has no transformer_depths)
    paper_spectra      the same on the language model's causal blocks at paper_jacobian_depths (Post-LN) and for
                       ReZero after each of paper_rezero_steps, PAPER_SEEDS seeds each, with a PAPER_SEEDS-member
                       Adam run per nonzero step count
    jacobian_spectra   io_jacobian: one forward + backward of jacobian_tokens · d_model copies of an encoder
                       input per style and jacobian depth and seed, and ReZero with g = 0 at the deepest (float64)
    slider "growth"    the precomputed grid (slider_depths × slider_widths × slider_exponents): a jacobian_growth
                       probe (counted by running it) and a one-member mlp_run of slider_steps steps per setting,
                       and one plain mlp_run per depth and width (cached across exponents)

Counts are estimates except the training ensembles (checked against the build's log); float64 work
is counted as float32 passes. Left out as small: plain_moments (one float64 pass of a train_width stack
of grad_depths[0] blocks), the branch singular values and orthogonal cosines, token_cosine_sweep and
position_cosine (one forward each at init, beside hundreds of training steps), the SVDs of the spectra
(SymPy is priced as :class:`Derivations`). Nothing depends on results; the live panel runs nothing at build time.
"""

from __future__ import annotations

from dataclasses import replace

from deepnotes.chapters.why_residuals import controls
from deepnotes.chapters.why_residuals.budget import sizes
from deepnotes.chapters.why_residuals.experiments import STACK_KINDS, jacobian_growth
from deepnotes.chapters.why_residuals.spectrum import PAPER_SEEDS, SPECTRUM_STYLES
from deepnotes.chapters.why_residuals.training import (
    mlp_config,
    mlp_setting,
    train_sweep_settings,
    transformer_config,
    transformer_sweep_settings,
)
from deepnotes.core.config import Budget, resolve_budget
from deepnotes.cost.model import (
    Derivations,
    MLPPasses,
    ProbeCalls,
    Render,
    StackPasses,
    TrainRuns,
    Work,
    ensembles,
    slider_frames,
)

LAYERS_PER_BLOCK = 2  # W1 and W2 of a block

# the figures the page shows besides its sliders' frames (tests/test_book.py counts them in the smoke build)
FIGURES = 8


def _stack(width: int, depth: int, batch: int, passes: int, backward: bool) -> MLPPasses:
    """``passes`` passes of a ResidualMLP of ``depth`` blocks (2·depth square layers)."""
    return MLPPasses(width=width, depth=LAYERS_PER_BLOCK * depth, batch=batch, passes=passes, backward=backward)


def _growth_probe(kind, width: int, depth: int, batch: int) -> None:
    """One :func:`~deepnotes.chapters.why_residuals.experiments.jacobian_growth` on the CPU, as
    :class:`~deepnotes.cost.model.ProbeCalls` counts it."""
    jacobian_growth(kind, width, depth, batch=batch, device="cpu")


def _jacobian_growth(kinds, width: int, depth: int, batch: int) -> list[ProbeCalls]:
    """One jacobian_growth call per kind (a plain stack has no ``v +`` and counts apart)."""
    return [ProbeCalls(_growth_probe, (kind, width), depth, batch) for kind in kinds]


def _mlp_ensembles(budget: Budget | str, settings: list[tuple]) -> list[TrainRuns]:
    """The ensembles :func:`~deepnotes.chapters.why_residuals.training.mlp_runs` trains for ``settings``
    (:func:`~deepnotes.chapters.why_residuals.training.mlp_setting`'s tuples)."""
    return ensembles([mlp_config(kind, n, budget, w) for kind, n, w, _ in settings], [cfg for *_, cfg in settings])


def _gradient_sweep(budget: Budget | str) -> list[MLPPasses]:
    """:func:`~deepnotes.chapters.why_residuals.experiments.gradient_sweep`'s layer_gradients."""
    rb = sizes(budget)
    return [
        _stack(w, n, rb.grad_batch, len(STACK_KINDS) * rb.grad_seeds, backward=True)
        for w in rb.grad_widths
        for n in rb.grad_depths
    ]


def _growth_sweep(budget: Budget | str) -> list[ProbeCalls]:
    """:func:`~deepnotes.chapters.why_residuals.experiments.growth_sweep`."""
    rb = sizes(budget)
    return [
        probe
        for w in rb.widths
        for n in rb.depths
        for probe in _jacobian_growth(STACK_KINDS, w, n, rb.probe_batch * (rb.width1_batch_factor if w == 1 else 1))
    ]


def _train_sweep(budget: Budget | str) -> list[TrainRuns]:
    """:func:`~deepnotes.chapters.why_residuals.training.train_sweep`: its runs in one train_many call."""
    return _mlp_ensembles(budget, [setting for _, setting in train_sweep_settings(budget)])


def _transformer_sweep(budget: Budget | str) -> list[TrainRuns]:
    """:func:`~deepnotes.chapters.why_residuals.training.transformer_sweep`: its runs in one train_many call."""
    settings = [setting for _, setting in transformer_sweep_settings(budget)]
    return ensembles([transformer_config(kind, n, budget) for kind, n, _ in settings], [cfg for *_, cfg in settings])


def _jacobian_spectra(budget: Budget | str) -> list[StackPasses]:
    """:func:`~deepnotes.chapters.why_residuals.spectrum.jacobian_spectra`: io_jacobian per seed, on
    T·d copies of a [T, d] input."""
    rb = sizes(budget)
    settings = [(style, n) for n in rb.jacobian_depths for style in SPECTRUM_STYLES]
    settings.append(("rezero", max(rb.jacobian_depths)))  # ReZero with g = 0
    copies = rb.jacobian_tokens * budget.d_model
    return [
        StackPasses(
            budget.model_config(n, norm=style, causal=False), 1, copies, rb.jacobian_tokens, passes=rb.jacobian_seeds
        )
        for style, n in settings
    ]


def _paper_spectra(budget: Budget | str) -> list[StackPasses | TrainRuns]:
    """:func:`~deepnotes.chapters.why_residuals.spectrum.paper_spectra`: io_jacobian of the causal blocks,
    Post-LN per paper depth and seed, ReZero per step count and seed; and a PAPER_SEEDS-member run per nonzero
    step count."""
    rb = sizes(budget)
    copies, deep = rb.jacobian_tokens * budget.d_model, max(rb.paper_jacobian_depths)
    out: list[StackPasses | TrainRuns] = [
        StackPasses(budget.model_config(n, norm="post"), 1, copies, rb.jacobian_tokens, passes=PAPER_SEEDS)
        for n in rb.paper_jacobian_depths
    ]
    out += [
        StackPasses(
            budget.model_config(deep, norm="rezero"),
            1,
            copies,
            rb.jacobian_tokens,
            passes=len(rb.paper_rezero_steps) * PAPER_SEEDS,
        )
    ]
    out += [
        TrainRuns(
            budget.model_config(deep, norm="rezero"),
            PAPER_SEEDS,
            replace(budget.train_config("adam", rb.transformer_lr, k), held_out=0),
        )
        for k in rb.paper_rezero_steps
        if k
    ]
    return out


def _slider_grid(budget: Budget | str) -> list[MLPPasses | ProbeCalls]:
    """:func:`~deepnotes.chapters.why_residuals.figures.slider_figure` over the grid: per setting a
    jacobian_growth probe (probe_batch) and a residual mlp_run; per (depth, width) one plain mlp_run."""
    rb = sizes(budget)
    out = []
    for n in rb.slider_depths:
        for w in rb.slider_widths:
            out += [
                *_jacobian_growth(rb.slider_exponents, w, n, rb.probe_batch),
                *[  # one one-run mlp_run per setting, as the slider calls it
                    run
                    for kind in ("plain", *rb.slider_exponents)
                    for run in _mlp_ensembles(budget, [mlp_setting(kind, n, budget, steps=rb.slider_steps, width=w)])
                ],
            ]
    return out


def derivations() -> Derivations:
    """The page's SymPy derivations and the verdict tables that run no experiment (as its cells call them)."""
    from deepnotes.chapters.why_residuals import claims, derive  # here: the derivations import SymPy, the plan need not

    return Derivations(
        (
            (derive.plain_layer_moments, ()),
            (derive.plain_stack_backward_gain, (4,)),
            (derive.plain_stack_gradients, ()),
            (derive.residual_layer, ()),
            (derive.increment_with_eps, ()),
            (derive.high_dim_layer, ()),
            (derive.comment_estimate, ()),
            (derive.skip_vs_branch_scaling, ()),
            (claims.derivation_verdicts, ()),
            (derive.branch_gradient_moment, ()),
        )
    )


def plan(budget: Budget | str) -> list[Work]:
    """The chapter's work at ``budget``: see the module's docstring."""
    budget = resolve_budget(budget)
    return [
        *_gradient_sweep(budget),  # gradient_sweep
        *_growth_sweep(budget),  # growth_sweep
        *_train_sweep(budget),  # train_sweep
        *_transformer_sweep(budget),  # transformer_sweep
        *_jacobian_spectra(budget),  # jacobian_spectra
        *_paper_spectra(budget),  # paper_spectra
        *_slider_grid(budget),  # slider "growth" (figures.slider_figure)
        derivations(),
        Render(FIGURES + slider_frames(controls.sliders(budget).values())),  # the page's figures and slider frames
    ]
