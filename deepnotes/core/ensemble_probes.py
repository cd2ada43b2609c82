"""Probes at initialization on a :class:`~deepnotes.core.engine.Stack`: one value per member.

The engine's counterparts of :mod:`deepnotes.core.probes`; member k's result is what the reference
probe gives on member k exported as a model (tests/core/test_engine.py checks it).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from deepnotes.core.config import TrainConfig
from deepnotes.core.engine import Stack
from deepnotes.core.optim import make_optimizer
from deepnotes.core.probes import StepProbe
from deepnotes.core.validate import choice

ELEMENTWISE = ("sgd", "adam")      # optimizers that step a stacked tensor as they step its slices


def member_sums(stack: Stack, name: str, t: torch.Tensor) -> torch.Tensor:
    """Σ over everything but the member axis of a tensor laid out like parameter ``name``: [K]."""
    return t.movedim(stack.slots[name].member_axis, 0).flatten(1).sum(1)


def step_probes(stack: Stack, tokens: torch.Tensor, optimizer: str, lr: float,
                names: Sequence[str] | None = None) -> list[StepProbe]:
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
    loss0 = stack.next_token_losses(tokens)                                # [K]
    loss0.sum().backward()                # members are disjoint slices: each gets its own gradient
    loss0 = loss0.detach()
    grads = [p.grad.detach().clone() for p in params]
    blocks = stack.block_grad_norms().tolist()                             # [K][N]
    make_optimizer(params, TrainConfig(optimizer=optimizer, lr=lr)).step()
    with torch.no_grad():
        loss1 = stack.next_token_losses(tokens)                            # [K]
        deltas = [p - s for p, s in zip(params, saved)]
        first_order = sum(member_sums(stack, n, g * d) for n, g, d in zip(names, grads, deltas))
        update_sq = sum(member_sums(stack, n, d.pow(2)) for n, d in zip(names, deltas))
        grad_sq = sum(member_sums(stack, n, g.pow(2)) for n, g in zip(names, grads))
        grad_l1 = sum(member_sums(stack, n, g.abs()) for n, g in zip(names, grads))
        for p, s in zip(params, saved):
            p.copy_(s)
    stack.zero_grad(set_to_none=True)
    delta = (loss1 - loss0).tolist()
    return [StepProbe(loss_before=float(loss0[k]), delta_loss=delta[k], first_order=float(first_order[k]),
                      grad_sq=float(grad_sq[k]), grad_l1=float(grad_l1[k]), update_norm=float(update_sq[k]) ** 0.5,
                      block_grad_norms=tuple(blocks[k]))
            for k in range(stack.n_members)]


@dataclass(frozen=True)
class StreamProfile:
    """One batch through a member at initialization (lists over l = 0..N for the stream, l = 1..N for
    the blocks)."""
    rms: tuple[float, ...]            # √E[x_l²] over batch, tokens and features
    cos_x0: tuple[float, ...]         # mean over tokens of cos(x_l, x_0): the identity path's weight
    grad_norms: tuple[float, ...]     # ‖∂L/∂θ_l‖ over all parameters of block l, next-token loss
    loss: float                       # the next-token loss at θ₀


def stream_profiles(stack: Stack, tokens: torch.Tensor) -> list[StreamProfile]:
    """For every member k on its batch ``tokens[k]`` ([K, B, T]): the residual stream x_0..x_N of
    the model's input ``tokens[k, :, :-1]`` (RMS and cosine to x_0 per token, as the reference's
    ``hidden(return_stream=True)`` gives it) and the per-block gradient norms of the next-token loss.
    Gradients are cleared afterwards."""
    with torch.no_grad():
        _, stream = stack.hidden(tokens[..., :-1], return_stream=True)         # N+1 × [K, B, T, d]
        x0 = stream[0]
        rms = torch.stack([x.pow(2).flatten(1).mean(1).sqrt() for x in stream], 1).tolist()                # [K][N+1]
        cos = torch.stack([F.cosine_similarity(x, x0, dim=-1).flatten(1).mean(1) for x in stream], 1).tolist()
    stack.zero_grad(set_to_none=True)
    losses = stack.next_token_losses(tokens)                                      # [K]
    losses.sum().backward()
    grads = stack.block_grad_norms().tolist()                                     # [K][N]
    losses = losses.detach()
    stack.zero_grad(set_to_none=True)
    return [StreamProfile(tuple(rms[k]), tuple(cos[k]), tuple(grads[k]), float(losses[k]))
            for k in range(stack.n_members)]
