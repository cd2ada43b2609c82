"""What is measured on a model, during training and at initialization.

Trackers, passed to :func:`deepnotes.core.train.train_ensemble` as ``trackers=[...]``, implement any
of ``start(stack, tasks, cfgs)``, ``before_step(stack, step, hists, alive)``,
``after_backward(…)`` and ``after_step(…)`` and write ``hists[k]`` for the members k still alive, and say at which
steps they read those (``needs_host(step)``: the loop reads the losses back first; without it, every step);
none changes what is trained (reading gradients and weights only, or, for :class:`GateSchedule`,
setting gates that are not trained).

Probes at initialization on a :class:`~deepnotes.core.engine.Stack` give one value per member
(:func:`step_probes`, :func:`stream_profiles`); member k's result is what the same probe gives on the
reference model member k is (``tests/core/test_engine.py``). A few probes read a reference model of
:mod:`deepnotes.core.models` directly (:func:`per_block_grad_norms`, :func:`block_matrices`,
:func:`count_matrices`): the chapters' hooks into a sublayer's output need its modules. And the fits
the chapters read scaling laws with (:func:`loglog_slope`, :func:`scaling_fits`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from deepnotes.core.config import TrainConfig
from deepnotes.core.data import generator
from deepnotes.core.engine import GATES, Stack
from deepnotes.core.optim import make_optimizer
from deepnotes.core.validate import (
    Count,
    NonNegativeCount,
    Positive,
    Real,
    Repeats,
    choice,
)


# ---- trackers --------------------------------------------------------------------------------
def every_for(steps: Repeats, points: Repeats) -> int:
    """The interval that records about ``points`` times over a run of ``steps`` steps."""
    return max(1, steps // points)


class BlockGradNorms:
    """‖∂L/∂θ_l‖ of every block l, every ``every`` steps → ``grad_steps``, ``grad_norms``; over the
    block parameters ``names`` (default all: a frozen parameter's gradient counts too)."""

    def __init__(self, every: Count = 1, names: Sequence[str] | None = None):
        self.every = every
        self.names = None if names is None else tuple(names)

    def needs_host(self, step: int) -> bool:
        """It writes the Histories of the members alive at the steps it records."""
        return step % self.every == 0

    def after_backward(self, stack: Stack, step: int, hists, alive) -> None:
        if step % self.every == 0:
            norms = stack.block_grad_norms(self.names).tolist()  # [K][N]
            for k in alive:
                hists[k].grad_steps.append(step)
                hists[k].grad_norms.append(norms[k])


class BlockUpdates:
    """‖Δθ_l‖/‖θ_l‖ of every block's update, every ``every`` steps → ``update_steps``,
    ``block_updates``."""

    def __init__(self, every: Count = 1):
        self.every = every
        self._before = None

    def needs_host(self, step: int) -> bool:
        """It writes the Histories of the members alive at the steps it records."""
        return step % self.every == 0

    def after_backward(self, stack: Stack, step: int, hists, alive) -> None:
        if step % self.every == 0:
            self._before = {n: getattr(stack, n).detach().clone() for n in stack.block_names}

    @torch.no_grad()
    def after_step(self, stack: Stack, step: int, hists, alive) -> None:
        if self._before is None:
            return
        num = stack.block_sq_norms({n: getattr(stack, n) - old for n, old in self._before.items()})  # [K, N]
        den = stack.block_sq_norms(self._before)
        ratio = torch.where(
            den > 0, (num / den.clamp_min(torch.finfo(den.dtype).tiny)).sqrt(), torch.zeros_like(den)
        ).tolist()
        for k in alive:
            hists[k].update_steps.append(step)
            hists[k].block_updates.append(ratio[k])
        self._before = None


class UpdateSize:
    """RMS of F(x, θ_t) − F(x, θ_0) (final hidden states on a fixed probe batch per member, drawn
    from its seed + 2) after every step → ``update_rms``: DeepNet's "early model update".
    ``first``: record only after the first this many steps (None: every step)."""

    def __init__(self, first: NonNegativeCount | None = None):
        self.first = first

    def needs_host(self, step: int) -> bool:
        """It writes the Histories of the members alive after every step it records."""
        return self.first is None or step < self.first

    def start(self, stack: Stack, tasks, cfgs) -> None:
        self._probe = torch.stack(
            [t.sample(c.batch_size, c.seq_len, generator(c.seed + 2)) for t, c in zip(tasks, cfgs, strict=True)]
        ).to(stack.embed.device)  # [K, B, T]
        self._ref = self._output(stack)

    @torch.no_grad()
    def _output(self, stack: Stack) -> torch.Tensor:
        return stack.hidden(self._probe).float()  # [K, B, T, d]

    def after_step(self, stack: Stack, step: int, hists, alive) -> None:
        if self.first is not None and step >= self.first:
            return
        rms = (self._output(stack) - self._ref).pow(2).flatten(1).mean(dim=1).sqrt().tolist()
        for k in alive:
            hists[k].update_rms.append(rms[k])


class Recorder:
    """``fn(stack)`` → one value per member, every ``every`` steps before that step's forward pass →
    ``hists[k].record(name)``."""

    def __init__(self, name: str, fn: Callable[[Stack], list], every: Count = 1):
        self.name, self.fn, self.every = name, fn, every

    def needs_host(self, step: int) -> bool:
        """It writes the Histories of the members alive at the steps it records."""
        return step % self.every == 0

    @torch.no_grad()
    def before_step(self, stack: Stack, step: int, hists, alive) -> None:
        if step % self.every == 0:
            values = self.fn(stack)
            for k in alive:
                steps, record = hists[k].record(self.name)
                steps.append(step)
                record.append(values[k])


class GateSchedule:
    """Su's variant of ReZero: the gates are not trained; before step t every gate of every member is
    set to α_t = min(1, (t+1)·step_size). Train with the gates frozen (:data:`~deepnotes.core.engine.GATES`)."""

    def __init__(self, step_size: Positive):
        self.step_size = step_size

    def needs_host(self, step: int) -> bool:
        """It sets gates from the step's number only: never."""
        return False

    def value(self, step: int) -> float:
        """α_t = min(1, (t+1)·step_size)."""
        return min(1.0, (step + 1) * self.step_size)

    @torch.no_grad()
    def before_step(self, stack: Stack, step: int, hists, alive) -> None:
        for name in GATES:
            if name in stack.slots:
                getattr(stack, name).fill_(self.value(step))


# ---- probes ---------------------------------------------------------------------------------
def per_block_grad_norms(model: nn.Module) -> list[float]:
    """‖∂L/∂θ_l‖₂ over all parameters of block l, for l = 1..N (call after ``backward``)."""
    norms = []
    for block in model.blocks:
        sq = sum(float(p.grad.pow(2).sum()) for p in block.parameters() if p.grad is not None)
        norms.append(sq**0.5)
    return norms


@dataclass(frozen=True)
class StepProbe:
    """One optimizer step from θ₀ on one batch."""

    loss_before: Real
    delta_loss: Real  # L(θ₀ + Δθ) − L(θ₀), measured
    first_order: Real  # ⟨∇L(θ₀), Δθ⟩, the first-order prediction of delta_loss
    grad_sq: float  # ‖∇L‖²
    grad_l1: float  # ‖∇L‖₁
    update_norm: float  # ‖Δθ‖
    block_grad_norms: tuple[float, ...] = ()  # ‖∂L/∂θ_l‖ per block l = 1..N, at θ₀


def block_matrices(model: nn.Module) -> list[torch.Tensor]:
    """The N·K weight matrices of the model's blocks (not the embedding, head, biases or norms)."""
    return [p for block in model.blocks for p in block.parameters() if p.dim() == 2]


PACKED_MATRICES = {"in_proj_weight": 3}  # nn.MultiheadAttention packs W_q, W_k, W_v into one parameter


def count_matrices(block: nn.Module) -> int:
    """K: the number of weight matrices in one block (2-D parameters; a packed parameter of
    :data:`PACKED_MATRICES` counts as the matrices it holds)."""
    return sum(PACKED_MATRICES.get(name.rsplit(".", 1)[-1], 1) for name, p in block.named_parameters() if p.dim() == 2)


NOISE_SIGMAS = 3  # a cosine of two unrelated vectors stays below this many of its spreads 1/√d


def unrelated_cosine_floor(width: Count) -> float:
    """NOISE_SIGMAS/√d: the cosine of two independent random width-``width`` vectors has mean 0 and spread
    1/√d, so a measured |cos| below this cannot be told from no relation at all."""
    return NOISE_SIGMAS / math.sqrt(width)


def loglog_slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Least-squares slope b of log y = a + b·log x (the exponent of a power law y ∝ x^b), over the
    points where both are finite and positive."""
    pts = [(x, y) for x, y in zip(xs, ys, strict=True) if x > 0 and y > 0 and math.isfinite(x) and math.isfinite(y)]
    lx = [math.log(x) for x, _ in pts]
    ly = [math.log(y) for _, y in pts]
    if len(set(lx)) < 2:
        raise ValueError(
            f"loglog_slope needs at least two distinct positive x with positive y, got xs={list(xs)!r}, ys={list(ys)!r}"
        )
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    sxx = sum((x - mx) ** 2 for x in lx)
    return sum((x - mx) * (y - my) for x, y in zip(lx, ly, strict=True)) / sxx


def scaling_fits(xs: Sequence[float], ys: Sequence[float], forms: dict[str, Sequence[float]]) -> dict[str, float]:
    """How well each candidate growth law explains ys: for every form f (its values at xs), the least-
    squares fit y ≈ a·f + b and its RMS residual over the mean of |y| (0: a perfect fit). A claim such as
    "grows like O(log N)" is judged by which form fits best, not by one log-log slope, which cannot tell
    log N from √N over a short range."""
    ys = [float(y) for y in ys]
    scale = sum(abs(y) for y in ys) / len(ys)
    if len(ys) < 3 or not scale:
        raise ValueError(f"scaling_fits needs at least three points with some nonzero y, got ys={ys!r}")
    out = {}
    for name, f in forms.items():
        if len(f) != len(ys):
            raise ValueError(f"form {name!r} has {len(f)} values for {len(ys)} points")
        a, b = np.polyfit(np.asarray(f, dtype=float), ys, 1)
        out[name] = float(np.sqrt(np.mean((np.asarray(ys) - a * np.asarray(f, dtype=float) - b) ** 2)) / scale)
    return out


ELEMENTWISE = ("sgd", "adam")  # optimizers that step a stacked tensor as they step its slices


def member_sums(stack: Stack, name: str, t: torch.Tensor) -> torch.Tensor:
    """Σ over everything but the member axis of a tensor laid out like parameter ``name``: [K]."""
    return t.movedim(stack.slots[name].member_axis, 0).flatten(1).sum(1)


def step_probes(
    stack: Stack, tokens: torch.Tensor, optimizer: str, lr: Positive, names: Sequence[str] | None = None
) -> list[StepProbe]:
    """One step of ``optimizer`` at learning rate ``lr`` from θ₀ for every member, on its own batch
    ``tokens[k]`` ([K, B, T]): ΔL_k = L_k(θ₀ + Δθ) − L_k(θ₀) beside its first-order term ⟨∇L_k, Δθ_k⟩.

    ``names``: the stacked parameters that step (default the blocks' weight matrices, as
    ``block_matrices`` in the reference). SGD and Adam act elementwise, so one optimizer over the
    stacked tensors steps each member exactly as its own optimizer would. The parameters are
    restored afterwards.
    """
    choice("optimizer", optimizer, ELEMENTWISE)
    names = list(stack.matrix_names if names is None else names)
    params = [getattr(stack, n) for n in names]
    saved = [p.detach().clone() for p in params]
    stack.zero_grad(set_to_none=True)
    loss0 = stack.next_token_losses(tokens)  # [K]
    loss0.sum().backward()  # members are disjoint slices: each gets its own gradient
    loss0 = loss0.detach()
    grads = [p.grad.detach().clone() for p in params]
    blocks = stack.block_grad_norms().tolist()  # [K][N]
    make_optimizer(params, TrainConfig(optimizer=optimizer, lr=lr)).step()
    with torch.no_grad():
        loss1 = stack.next_token_losses(tokens)  # [K]
        deltas = [p - s for p, s in zip(params, saved, strict=True)]
        first_order = sum(member_sums(stack, n, g * d) for n, g, d in zip(names, grads, deltas, strict=True))
        update_sq = sum(member_sums(stack, n, d.pow(2)) for n, d in zip(names, deltas, strict=True))
        grad_sq = sum(member_sums(stack, n, g.pow(2)) for n, g in zip(names, grads, strict=True))
        grad_l1 = sum(member_sums(stack, n, g.abs()) for n, g in zip(names, grads, strict=True))
        for p, s in zip(params, saved, strict=True):
            p.copy_(s)
    stack.zero_grad(set_to_none=True)
    delta = (loss1 - loss0).tolist()
    return [
        StepProbe(
            loss_before=float(loss0[k]),
            delta_loss=delta[k],
            first_order=float(first_order[k]),
            grad_sq=float(grad_sq[k]),
            grad_l1=float(grad_l1[k]),
            update_norm=float(update_sq[k]) ** 0.5,
            block_grad_norms=tuple(blocks[k]),
        )
        for k in range(stack.n_members)
    ]


@dataclass(frozen=True)
class StreamProfile:
    """One batch through a member at initialization (lists over l = 0..N for the stream, l = 1..N for
    the blocks)."""

    rms: tuple[float, ...]  # √E[x_l²] over batch, tokens and features
    cos_x0: tuple[float, ...]  # mean over tokens of cos(x_l, x_0): the identity path's weight
    grad_norms: tuple[float, ...]  # ‖∂L/∂θ_l‖ over all parameters of block l, next-token loss
    loss: float  # the next-token loss at θ₀
    stream_grads: tuple[float, ...] = ()  # G(l) = ‖∂L/∂x_l‖ over batch, tokens and features, l = 0..N


def stream_profiles(stack: Stack, tokens: torch.Tensor) -> list[StreamProfile]:
    """For every member k on its batch ``tokens[k]`` ([K, B, T]): the residual stream x_0..x_N of
    the model's input ``tokens[k, :, :-1]`` (RMS and cosine to x_0 per token, as the reference's
    ``hidden(return_stream=True)`` gives it), the per-block gradient norms of the next-token loss and
    the norms of its gradient with respect to each x_l, G(l) = ‖∂L/∂x_l‖. One forward pass, block by
    block, and one backward. Gradients are cleared afterwards."""
    stack.zero_grad(set_to_none=True)
    losses, stream = stack.next_token_losses_and_stream(tokens)  # [K]; N+1 × [K, B, T, d]
    for x in stream:
        x.retain_grad()
    losses.sum().backward()  # member k's loss reaches only member k's stream
    grads = stack.block_grad_norms().tolist()  # [K][N]
    with torch.no_grad():
        x0 = stream[0]
        rms = torch.stack([x.pow(2).flatten(1).mean(1).sqrt() for x in stream], 1).tolist()  # [K][N+1]
        cos = torch.stack([F.cosine_similarity(x, x0, dim=-1).flatten(1).mean(1) for x in stream], 1).tolist()
        g_stream = torch.stack([x.grad.flatten(1).norm(dim=1) for x in stream], 1).tolist()  # [K][N+1]
    losses = losses.detach()
    stack.zero_grad(set_to_none=True)
    return [
        StreamProfile(tuple(rms[k]), tuple(cos[k]), tuple(grads[k]), float(losses[k]), tuple(g_stream[k]))
        for k in range(stack.n_members)
    ]
