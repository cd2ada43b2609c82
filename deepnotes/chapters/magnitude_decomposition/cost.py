"""Cost plan of the chapter "Magnitude decomposition and the DeepNorm scalings": the work its notebook
does at a budget, for :mod:`deepnotes.core.cost`. One line per experiment:

    lambda_gradient_sweep   one forward + backward of the probe-depth DeepNorm stack per (α, λ, seed) (float64)
    first_step_sweep        one forward + backward per optimizer, update depth and choice of (α, λ)
    identity_sweep          one forward per setting at the identity depth
    choice_comparison       one run (a one-member ensemble) per training depth, optimizer, rate and choice
    slider grid             one short run per slider depth, optimizer and choice (slider_figure)

The (α, λ) values do not change a count, so every item uses the budget's DeepNorm graph. Left out as
small: the decomposition table, the orthogonality check and the autograd check (check_depth blocks).
Nothing depends on results; the live panel runs nothing at build time.
"""
from __future__ import annotations

from deepnotes.chapters.magnitude_decomposition.experiments import choices
from deepnotes.chapters.magnitude_decomposition.training import PLAN
from deepnotes.core import scaling
from deepnotes.core.budget import Budget
from deepnotes.core.cost import StackPasses, TrainRuns, Work

IDENTITY_SETTINGS = 6      # identity_sweep: SGD's three picks, Adam's, the paper's, Post-LN


def plan(budget: Budget) -> list[Work]:
    """The chapter's work at ``budget``: see the module's docstring."""
    mb = budget.magnitude_decomposition
    b, t = budget.batch_size, budget.seq_len

    def stack(n: int) -> object:
        return budget.model_config(n, norm="deepnorm")

    def run(n: int, opt: str, lr: float, steps: int) -> TrainRuns:
        return TrainRuns(stack(n), 1, budget.train_config(opt, lr, steps))

    return [
        StackPasses(stack(mb.probe_depth), 1, b, t,                                        # lambda_gradient_sweep
                    passes=len(mb.alphas) * len(mb.lambdas) * mb.probe_seeds),
        *(StackPasses(stack(n), 1, b, t, passes=len(choices(n, opt)))                      # first_step_sweep
          for opt in mb.first_step_lrs for n in mb.update_depths),
        StackPasses(stack(mb.identity_depth), 1, b, t, passes=IDENTITY_SETTINGS, backward=False),   # identity_sweep
        *(run(n, opt, lr, mb.train_steps) for n in mb.train_depths for opt, lrs in mb.train_lrs.items()
          for lr in lrs for _ in PLAN[opt]),                                                # choice_comparison
        *(run(n, opt, mb.train_lrs[opt][0], mb.slider_steps) for n in mb.slider_depths      # slider grid
          for opt in scaling.OPTIMIZERS for _ in choices(n, opt)),
    ]
