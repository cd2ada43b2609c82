"""Measurements taken during :func:`deepnotes.core.ensemble.train_ensemble`, one value per member.

The engine's counterparts of :mod:`deepnotes.core.trackers` (same names, same quantities, same
History fields); each hook gets ``(stack, step, hists, alive)`` and writes ``hists[k]`` for the
members k still alive. None changes what is trained (reading gradients and weights only, or, for
:class:`GateSchedule`, setting gates that are not trained).
"""
from __future__ import annotations

from collections.abc import Callable

import torch

from deepnotes.core import trackers as reference
from deepnotes.core.engine import GATES, Stack
from deepnotes.core.engine_reference import export_member
from deepnotes.core.rng import generator
from deepnotes.core.validate import positive_int


class BlockGradNorms:
    """‖∂L/∂θ_l‖ of every block l, every ``every`` steps → ``grad_steps``, ``grad_norms``."""

    def __init__(self, every: int = 1):
        self.every = positive_int("every", every)

    def after_backward(self, stack: Stack, step: int, hists, alive) -> None:
        if step % self.every == 0:
            norms = stack.block_grad_norms().tolist()                     # [K][N]
            for k in alive:
                hists[k].grad_steps.append(step)
                hists[k].grad_norms.append(norms[k])


class BlockUpdates:
    """‖Δθ_l‖/‖θ_l‖ of every block's update, every ``every`` steps → ``update_steps``,
    ``block_updates``."""

    def __init__(self, every: int = 1):
        self.every = positive_int("every", every)
        self._before = None

    def after_backward(self, stack: Stack, step: int, hists, alive) -> None:
        if step % self.every == 0:
            self._before = {n: getattr(stack, n).detach().clone() for n in stack.block_names}

    @torch.no_grad()
    def after_step(self, stack: Stack, step: int, hists, alive) -> None:
        if self._before is None:
            return
        num = stack.block_sq_norms({n: getattr(stack, n) - old for n, old in self._before.items()})   # [K, N]
        den = stack.block_sq_norms(self._before)
        ratio = torch.where(den > 0, (num / den.clamp_min(torch.finfo(den.dtype).tiny)).sqrt(),
                            torch.zeros_like(den)).tolist()
        for k in alive:
            hists[k].update_steps.append(step)
            hists[k].block_updates.append(ratio[k])
        self._before = None


class UpdateSize:
    """RMS of F(x, θ_t) − F(x, θ_0) (final hidden states on a fixed probe batch per member, drawn
    from its seed + 2) after every step → ``update_rms``: DeepNet's "early model update".
    ``first``: record only after the first this many steps (None: every step)."""

    def __init__(self, first: int | None = None):
        self.first = first

    def start(self, stack: Stack, tasks, cfgs) -> None:
        self._probe = torch.stack([t.sample(c.batch_size, c.seq_len, generator(c.seed + 2))
                                   for t, c in zip(tasks, cfgs)]).to(stack.embed.device)      # [K, B, T]
        self._ref = self._output(stack)

    @torch.no_grad()
    def _output(self, stack: Stack) -> torch.Tensor:
        return stack.hidden(self._probe).float()                                            # [K, B, T, d]

    def after_step(self, stack: Stack, step: int, hists, alive) -> None:
        if self.first is not None and step >= self.first:
            return
        rms = (self._output(stack) - self._ref).pow(2).flatten(1).mean(dim=1).sqrt().tolist()
        for k in alive:
            hists[k].update_rms.append(rms[k])


class Recorder:
    """``fn(stack)`` → one value per member, every ``every`` steps before that step's forward pass →
    ``hists[k].record(name)``."""

    def __init__(self, name: str, fn: Callable[[Stack], list], every: int = 1):
        self.name, self.fn, self.every = name, fn, positive_int("every", every)

    @torch.no_grad()
    def before_step(self, stack: Stack, step: int, hists, alive) -> None:
        if step % self.every == 0:
            values = self.fn(stack)
            for k in alive:
                steps, record = hists[k].record(self.name)
                steps.append(step)
                record.append(values[k])


class GateSchedule(reference.GateSchedule):
    """Su's variant of ReZero on the engine: the reference's schedule (:meth:`value`), every gate
    of every member set before each step. Train with the gates frozen
    (:data:`~deepnotes.core.engine.GATES`)."""

    @torch.no_grad()
    def before_step(self, stack: Stack, step: int, hists, alive) -> None:
        for name in GATES:
            if name in stack.slots:
                getattr(stack, name).fill_(self.value(step))


def from_reference(tracker):
    """The engine's counterpart of a :mod:`deepnotes.core.trackers` tracker (one member): same
    interval; a Recorder's ``fn(model)`` is called on the reference model member 0 is, exported."""
    if isinstance(tracker, reference.Recorder):
        return Recorder(tracker.name, lambda stack, fn=tracker.fn: [fn(export_member(stack, 0))], tracker.every)
    if isinstance(tracker, reference.GateSchedule):
        return GateSchedule(tracker.step_size)
    if isinstance(tracker, reference.UpdateSize):
        return UpdateSize()
    if isinstance(tracker, reference.BlockGradNorms):
        return BlockGradNorms(tracker.every)
    if isinstance(tracker, reference.BlockUpdates):
        return BlockUpdates(tracker.every)
    raise ValueError(f"no engine counterpart for tracker {tracker!r}")
