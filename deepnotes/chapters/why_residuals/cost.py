"""Cost plan of the chapter "Why residuals?": the work its notebook does at a budget, for
:mod:`deepnotes.core.cost`. One line per experiment; a residual MLP block is two width × width matmuls
(x + ε·relu(x W1ᵀ) W2ᵀ), so an MLP of N blocks counts as 2N layers:

    gradient_sweep     layer_gradients: one forward + backward per kind, width, depth and seed (float64)
    growth_sweep       jacobian_growth: a forward and a vector-Jacobian pass per width, kind and depth
    train_sweep        the MLP language models: train_steps steps per depth, optimizer and kind (reference loop)
    transformer_sweep  the Transformer variant: one one-member ensemble per depth and kind (train_model)
    jacobian_spectra   io_jacobian: one forward + backward of T·d copies per style, depth and seed (+ ReZero g = 0)
    slider grid        a short MLP run per slider depth, width and kind (plain and every exponent)

Counts are estimates except the Transformer ensembles (checked against the build's log). Left out as
small: plain_moments, the branch singular values, the cosines, SymPy. Nothing depends on results;
the live panel runs nothing at build time.
"""
from __future__ import annotations

from deepnotes.chapters.why_residuals.experiments import STACK_KINDS
from deepnotes.chapters.why_residuals.spectrum import SPECTRUM_STYLES
from deepnotes.chapters.why_residuals.training import OPTIMIZERS
from deepnotes.core.budget import Budget
from deepnotes.core.cost import MLPPasses, StackPasses, TrainRuns, Work

LAYERS_PER_BLOCK = 2       # W1 and W2 of a residual MLP block


def _mlp(width: int, depth: int, batch: int, passes: int = 1, backward: bool = False) -> MLPPasses:
    return MLPPasses(width=width, depth=LAYERS_PER_BLOCK * depth, batch=batch, passes=passes, backward=backward)


def plan(budget: Budget) -> list[Work]:
    """The chapter's work at ``budget``: see the module's docstring."""
    rb = budget.why_residuals
    tokens = budget.batch_size * budget.seq_len
    kinds = len(STACK_KINDS)
    spectra = [(style, n) for n in rb.jacobian_depths for style in SPECTRUM_STYLES] + \
        [("rezero", max(rb.jacobian_depths))]
    jacobian_rows = rb.jacobian_tokens * budget.d_model
    return [
        *(_mlp(w, n, rb.grad_batch, passes=kinds * rb.grad_seeds, backward=True)          # gradient_sweep
          for w in rb.grad_widths for n in rb.grad_depths),
        *(_mlp(w, n, rb.probe_batch * (rb.width1_batch_factor if w == 1 else 1), passes=2 * kinds)   # growth_sweep
          for w in rb.widths for n in rb.depths),
        *(_mlp(rb.train_width, n, tokens, passes=rb.train_steps * len(OPTIMIZERS) * kinds, backward=True)
          for n in rb.train_depths),                                                      # train_sweep
        *(TrainRuns(budget.model_config(n, norm="plain" if kind == "plain" else "none"), 1,   # transformer_sweep
                    budget.train_config("adam", rb.transformer_lr, rb.train_steps))
          for n in rb.transformer_depths for kind in STACK_KINDS),     # build_transformer's graphs (β aside)
        *(StackPasses(budget.model_config(n, norm=style, causal=False), 1, jacobian_rows, rb.jacobian_tokens,
                      passes=rb.jacobian_seeds) for style, n in spectra),                 # jacobian_spectra
        *(_mlp(w, n, tokens, passes=rb.slider_steps * (1 + len(rb.slider_exponents)), backward=True)
          for n in rb.slider_depths for w in rb.slider_widths),                           # slider grid
    ]
