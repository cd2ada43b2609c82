"""Measurements taken during :func:`deepnotes.core.train.train`, passed in as ``trackers=[...]``.

Each tracker implements any of ``start(model, task, cfg)``, ``before_step(model, step, hist)``,
``after_backward(model, step, hist)`` and ``after_step(model, step, hist)``; none changes what is
trained (reading gradients and weights only, or, for :class:`GateSchedule`, setting frozen gates).
"""
from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from deepnotes.core.probes import per_block_grad_norms
from deepnotes.core.rng import generator
from deepnotes.core.validate import positive_float, positive_int


def every_for(steps: int, points: int) -> int:
    """The interval that records about ``points`` times over a run of ``steps`` steps."""
    return max(1, steps // positive_int("points", points))


class BlockGradNorms:
    """‖∂L/∂θ_l‖ of every block l, every ``every`` steps → ``hist.grad_steps``, ``hist.grad_norms``."""

    def __init__(self, every: int = 1):
        self.every = positive_int("every", every)

    def after_backward(self, model: nn.Module, step: int, hist) -> None:
        if step % self.every == 0:
            hist.grad_steps.append(step)
            hist.grad_norms.append(per_block_grad_norms(model))


class BlockUpdates:
    """‖Δθ_l‖/‖θ_l‖ of every block's update, every ``every`` steps → ``hist.update_steps``,
    ``hist.block_updates``."""

    def __init__(self, every: int = 1):
        self.every = positive_int("every", every)
        self._before = None

    def after_backward(self, model: nn.Module, step: int, hist) -> None:
        if step % self.every == 0:
            self._before = [[p.detach().clone() for p in b.parameters()] for b in model.blocks]

    @torch.no_grad()
    def after_step(self, model: nn.Module, step: int, hist) -> None:
        if self._before is None:
            return
        out = []
        for block, old in zip(model.blocks, self._before):
            num = sum(float((p - q).pow(2).sum()) for p, q in zip(block.parameters(), old))
            den = sum(float(q.pow(2).sum()) for q in old)
            out.append((num / den) ** 0.5 if den > 0 else 0.0)
        hist.update_steps.append(step)
        hist.block_updates.append(out)
        self._before = None


class UpdateSize:
    """RMS of F(x, θ_t) − F(x, θ_0) (the final hidden states on a fixed probe batch, drawn from the
    run's seed + 2) after every step → ``hist.update_rms``: DeepNet's "early model update"."""

    def start(self, model: nn.Module, task, cfg) -> None:
        device = next(model.parameters()).device
        self._probe = task.sample(cfg.batch_size, cfg.seq_len, generator(cfg.seed + 2)).to(device)
        self._ref = self._output(model)

    @torch.no_grad()
    def _output(self, model: nn.Module) -> torch.Tensor:
        return model.hidden(self._probe).float()                    # F(x, θ): [B, T, d]

    def after_step(self, model: nn.Module, step: int, hist) -> None:
        hist.update_rms.append(float((self._output(model) - self._ref).pow(2).mean().sqrt()))


class Recorder:
    """``fn(model)`` every ``every`` steps, before that step's forward pass → ``hist.record(name)``."""

    def __init__(self, name: str, fn: Callable[[nn.Module], object], every: int = 1):
        self.name, self.fn, self.every = name, fn, positive_int("every", every)

    @torch.no_grad()
    def before_step(self, model: nn.Module, step: int, hist) -> None:
        if step % self.every == 0:
            steps, values = hist.record(self.name)
            steps.append(step)
            values.append(self.fn(model))


class GateSchedule:
    """Su's variant of ReZero: the gates are not trained; before step t every gate is set to
    α_t = min(1, (t+1)·step_size). Train with the gates left out of ``params``."""

    def __init__(self, step_size: float):
        self.step_size = positive_float("gate step size", step_size)

    def value(self, step: int) -> float:
        """α_t = min(1, (t+1)·step_size)."""
        return min(1.0, (step + 1) * self.step_size)

    @torch.no_grad()
    def before_step(self, model: nn.Module, step: int, hist) -> None:
        value = self.value(step)
        for block in model.blocks:
            for res in block.sublayers:
                res.gate.fill_(value)
