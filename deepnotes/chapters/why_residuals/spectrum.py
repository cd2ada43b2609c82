"""Input-output Jacobian spectra of Transformer encoder stacks at initialization: ReZero's signal
propagation check (Bachlechner et al. 2020, "ReZero is All You Need", and its authors' example
notebook ReZero-Deep_Fast_Transformer.ipynb, whose ``plot_jacobians`` compares 12 and 128 layers).

For a stack F of N encoder blocks (bidirectional attention then FFN, each sublayer residual with the
block's norm style) and one input x_0 of T tokens of width d, the Jacobian

    J = ∂ vec(F(x_0)) / ∂ vec(x_0)        [T·d, T·d]

has singular values λ_io. Dynamical isometry is every λ_io ≈ 1: each input direction reaches the output
neither vanished nor amplified. ReZero (x + g·F(x)) with every gate g = 0 is the identity, J = I
exactly; like the authors' notebook we also set g = 0.1 to see a non-trivial spectrum.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, replace

import torch

from deepnotes.chapters.why_residuals.budget import sizes
from deepnotes.core.config import Budget
from deepnotes.core.config import device as default_device
from deepnotes.core.data import seeded
from deepnotes.core.models import Block
from deepnotes.core.validate import Depth, Finite, Positive, Real, Seed, choice
from deepnotes.cost.model import StackPasses, TrainRuns

SPECTRUM_STYLES = ("post", "pre", "rezero")  # the notebook's vanilla (Post-LN), pre-norm and ReZero
NULL_SINGULAR = 1e-8  # λ below this is an exact zero (float64 round-off)


@dataclass(frozen=True)
class Spectrum:
    """The singular values λ_io of one stack's input-output Jacobian, pooled over seeds."""

    style: str
    depth: Depth
    gate: Real | None  # ReZero's gate value (None for the LayerNorm stacks)
    singular: tuple[float, ...]  # every λ_io of every seed, descending per seed

    def near_one(self, factor: Finite = 2.0) -> float:
        """Fraction of λ_io within ``factor`` of one: 1/factor ≤ λ ≤ factor."""
        return sum(1 / factor <= s <= factor for s in self.singular) / len(self.singular)

    def zeros(self) -> float:
        """Fraction of λ_io that are exact zeros (below NULL_SINGULAR)."""
        return sum(s < NULL_SINGULAR for s in self.singular) / len(self.singular)

    def log_spread(self) -> float:
        """Standard deviation of ln λ_io over the non-zero singular values."""
        logs = [math.log(s) for s in self.singular if s >= NULL_SINGULAR]
        mean = sum(logs) / len(logs)
        return math.sqrt(sum((v - mean) ** 2 for v in logs) / len(logs))


def encoder_stack(budget: Budget, style: str, depth: Depth, gate: Real = 0.0) -> torch.nn.Sequential:
    """N encoder blocks of the budget's width (no embedding, no head, no final LayerNorm: the notebook's
    ``nn.TransformerEncoder``), in float64; ReZero's gates set to ``gate``."""
    choice("norm style", style, SPECTRUM_STYLES)
    cfg = budget.model_config(depth, norm=style, causal=False)
    blocks = torch.nn.Sequential(*[Block(cfg) for _ in range(depth)]).double()
    with torch.no_grad():
        for module in blocks.modules():
            if getattr(module, "gate", None) is not None:
                module.gate.fill_(gate)
    return blocks


def io_jacobian(stack: torch.nn.Module, x0: torch.Tensor) -> torch.Tensor:
    """J[i, j] = ∂ vec(F(x_0))_i / ∂ vec(x_0)_j for x_0: [T, d]; one backward pass over T·d copies of x_0
    (row i of the output's identity seeds copy i's gradient)."""
    T, d = x0.shape
    n = T * d
    copies = x0.reshape(1, n).repeat(n, 1).requires_grad_(True)  # [T·d, T·d]
    out = stack(copies.reshape(n, T, d)).reshape(n, n)  # copy i → vec(F(x_0))
    out.backward(torch.eye(n, dtype=out.dtype, device=out.device))
    return copies.grad  # [T·d, T·d]: row i = ∂out_i/∂x_0


def spectrum(budget: Budget, style: str, depth: Depth, gate: Real = 0.0, device=None) -> Spectrum:
    """λ_io of ``style`` at ``depth`` for the budget's seeds (one random x_0 ~ N(0, I) per seed)."""
    sub = sizes(budget)
    device = device or default_device()
    values: list[float] = []
    for seed in range(sub.jacobian_seeds):
        with seeded(seed):
            stack = encoder_stack(budget, style, depth, gate).to(device)
            x0 = torch.randn(sub.jacobian_tokens, budget.d_model, dtype=torch.float64).to(device)  # [T, d]
        values += torch.linalg.svdvals(io_jacobian(stack, x0)).cpu().tolist()
    return Spectrum(style, depth, gate if style == "rezero" else None, tuple(values))


def jacobian_spectra(budget: Budget, device=None) -> dict[tuple[str, int], Spectrum]:
    """Every style of SPECTRUM_STYLES at every depth of ``sizes(budget).jacobian_depths``
    (ReZero with the notebook's gate), plus ReZero with g = 0 (the identity) at the deepest."""
    sub = sizes(budget)
    out = {
        (style, n): spectrum(budget, style, n, sub.jacobian_gate, device)
        for n in sub.jacobian_depths
        for style in SPECTRUM_STYLES
    }
    deepest = max(sub.jacobian_depths)
    out[("rezero g=0", deepest)] = spectrum(budget, "rezero", deepest, 0.0, device)
    return out


# ---- the paper's own setting: its figure's depths, and ReZero during training -------------------------


def log10_quartiles(values) -> tuple[float, float, float]:
    """(first quartile, median, third quartile) of log10 λ over the non-zero λ_io (at least NULL_SINGULAR):
    where a histogram of log λ_io (the paper's plot) sits and how wide it is."""
    import numpy as np

    logs = np.log10([s for s in values if s >= NULL_SINGULAR])
    q1, med, q3 = np.percentile(logs, (25, 50, 75))
    return float(q1), float(med), float(q3)


def zeros(values) -> int:
    """How many λ_io are exact zeros (below NULL_SINGULAR)."""
    return sum(s < NULL_SINGULAR for s in values)


def model_spectrum(model: torch.nn.Module, budget: Budget, seed: Seed = 0) -> tuple[float, ...]:
    """λ_io of a language model's block stack (the book's causal blocks, as trained), in float64, at one
    x_0 ~ N(0, I) of ``jacobian_tokens`` tokens."""
    blocks = copy.deepcopy(torch.nn.Sequential(*model.blocks)).double()
    gen = torch.Generator().manual_seed(seed)
    x0 = torch.randn(sizes(budget).jacobian_tokens, budget.d_model, generator=gen, dtype=torch.float64)
    x0 = x0.to(next(blocks.parameters()).device)  # [T, d]
    return tuple(torch.linalg.svdvals(io_jacobian(blocks, x0)).cpu().tolist())


PAPER_SEEDS = 3  # initializations (each with its input and, for ReZero, its data) behind the paper's verdicts


@dataclass(frozen=True)
class PaperSpectra:
    """ReZero's figure at toy scale: the vanilla (Post-LN) Transformer's λ_io at init per depth, and
    ReZero's at ``rezero_depth`` after each number of training steps (its gates start at 0); every one per
    seed (the figure pools the seeds, the verdicts read each)."""

    vanilla: dict[int, list[tuple[float, ...]]]  # depth → λ_io per seed
    rezero: dict[int, list[tuple[float, ...]]]  # training steps → λ_io per seed
    rezero_depth: Depth
    lr: Positive

    @staticmethod
    def pooled(series: dict[int, list[tuple[float, ...]]]) -> dict[int, tuple[float, ...]]:
        """Every seed's λ_io in one histogram per key (what the figure draws)."""
        return {key: tuple(v for seed in seeds for v in seed) for key, seeds in series.items()}


def paper_spectra(budget: Budget, device=None) -> PaperSpectra:
    """The book's causal language model in the paper's two panels, each from PAPER_SEEDS seeds: Post-LN at each
    of ``paper_jacobian_depths`` at initialization, and ReZero at the deepest of them after each of
    ``paper_rezero_steps`` Adam steps on the Markov language (0 = at init, every gate 0: J = I), the seeds trained
    together as one ensemble (seed s: initialization, data and input x_0); a run of k steps is the first k steps
    of the longest (same seeds, same data, no schedule)."""
    from deepnotes.core.data import MarkovLanguage
    from deepnotes.core.engine import export_member, stack_of
    from deepnotes.core.models import build_model
    from deepnotes.core.train import train_ensemble

    sub = sizes(budget)
    device = device or default_device()
    seeds = range(PAPER_SEEDS)
    vanilla = {
        n: [
            model_spectrum(build_model(budget.model_config(n, norm="post"), seed=seed, device=device), budget, seed)
            for seed in seeds
        ]
        for n in sub.paper_jacobian_depths
    }
    deep = max(sub.paper_jacobian_depths)
    rezero = {}
    for steps in sub.paper_rezero_steps:
        models = [build_model(budget.model_config(deep, norm="rezero"), seed=seed, device=device) for seed in seeds]
        if steps:  # trained on the engine from these weights, then read back
            stack = stack_of(models, list(seeds))
            train_ensemble(
                stack,
                MarkovLanguage(budget.vocab_size, seed=0),
                [
                    replace(budget.train_config("adam", sub.transformer_lr, steps, seed=seed), held_out=0)
                    for seed in seeds
                ],  # no loss read
            )
            models = [export_member(stack, k) for k in range(len(models))]
        rezero[steps] = [model_spectrum(model, budget, seed) for seed, model in zip(seeds, models, strict=True)]
    return PaperSpectra(vanilla, rezero, deep, sub.transformer_lr)


# ---- the spectra's work, for the chapter's estimate ----------------------------------------------------


def spectra_work(budget: Budget) -> list[StackPasses | TrainRuns]:
    """What the spectra above compute at ``budget``, as :mod:`deepnotes.cost.model` counts it (float64 work as
    float32 passes; the SVDs left out):

        jacobian_spectra   io_jacobian: one forward + backward of jacobian_tokens · d_model copies of an encoder
                           input per style, jacobian depth and seed, and ReZero with g = 0 at the deepest
        paper_spectra      the same on the causal blocks: Post-LN per paper depth and seed, ReZero per step
                           count and seed, and a PAPER_SEEDS-member Adam run (train_ensemble) per nonzero count"""
    rb = sizes(budget)
    tokens = rb.jacobian_tokens
    copies, deep = tokens * budget.d_model, max(rb.paper_jacobian_depths)
    settings = [(style, n) for n in rb.jacobian_depths for style in SPECTRUM_STYLES]
    settings.append(("rezero", max(rb.jacobian_depths)))  # ReZero with g = 0
    rezero = budget.model_config(deep, norm="rezero")
    return [
        *(
            StackPasses(budget.model_config(n, norm=style, causal=False), 1, copies, tokens, passes=rb.jacobian_seeds)
            for style, n in settings
        ),
        *(
            StackPasses(budget.model_config(n, norm="post"), 1, copies, tokens, passes=PAPER_SEEDS)
            for n in rb.paper_jacobian_depths
        ),
        StackPasses(rezero, 1, copies, tokens, passes=len(rb.paper_rezero_steps) * PAPER_SEEDS),
        *(
            TrainRuns(rezero, PAPER_SEEDS, replace(budget.train_config("adam", rb.transformer_lr, k), held_out=0))
            for k in rb.paper_rezero_steps
            if k
        ),
    ]
