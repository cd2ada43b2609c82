"""The test oracle: the readable training loop, trackers and optimizers the engine is checked against.

The book trains every model on the engine (:func:`deepnotes.core.train.train_ensemble`); this module
trains a :mod:`deepnotes.core.models` reference model the plain way, one ``nn.Module`` and PyTorch's
optimizers, so that ``test_engine.py`` can hold the engine to it (float64, relative 1e-10). Nothing in
``deepnotes/`` imports it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import nn

from deepnotes.core import optim, scaling
from deepnotes.core.config import TrainConfig
from deepnotes.core.data import MarkovLanguage, generator
from deepnotes.core.measure import StepProbe, per_block_grad_norms
from deepnotes.core.train import History, NextToken, check_setup
from deepnotes.core.train import progress as progress_bar
from deepnotes.core.validate import positive_float, positive_int


class Lamb(torch.optim.Optimizer):
    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-6):
        if not lr > 0:
            raise ValueError(f"lr must be > 0, got {lr!r}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps))

    @torch.no_grad()
    def step(self, closure=None):
        loss = None if closure is None else closure()
        for group in self.param_groups:
            b1, b2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["step"] = 0
                    state["m"] = torch.zeros_like(p)
                    state["v"] = torch.zeros_like(p)
                state["step"] += 1
                t = state["step"]
                state["m"].mul_(b1).add_(p.grad, alpha=1 - b1)
                state["v"].mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)
                r = (state["m"] / (1 - b1**t)) / ((state["v"] / (1 - b2**t)).sqrt() + group["eps"])
                w_norm, r_norm = p.norm(), r.norm()
                trust = torch.where((w_norm > 0) & (r_norm > 0), w_norm / r_norm, torch.ones_like(w_norm))
                p.add_(r, alpha=-group["lr"] * float(trust))
        return loss


def make_optimizer(params, cfg: TrainConfig) -> torch.optim.Optimizer:
    """The package's SGD or Adam (PyTorch's own), or this module's :class:`Lamb`, by ``cfg.optimizer``."""
    return Lamb(params, lr=cfg.lr, betas=cfg.betas) if cfg.optimizer == "lamb" else optim.make_optimizer(params, cfg)


def make_warmup(optimizer: torch.optim.Optimizer, warmup_steps: int) -> torch.optim.lr_scheduler.LambdaLR:
    """η_t = η · min(1, (t+1)/T_warmup): linear warmup, then constant."""
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: scaling.linear_warmup_factor(step, warmup_steps))


def train(
    model: nn.Module,
    task: MarkovLanguage,
    cfg: TrainConfig,
    *,
    objective=None,
    trackers: Sequence = (),
    params=None,
    progress: bool = False,
) -> History:
    """Train ``model`` on ``task`` for ``cfg.steps`` steps of ``cfg.optimizer`` with linear warmup.

    ``objective``: :class:`NextToken` (default) or :class:`Masked`. ``trackers``: measurements taken
    along the way (see :mod:`deepnotes.core.measure`); each may hook ``start``, ``before_step``
    (before the forward pass), ``after_backward`` and ``after_step``. ``params``: the parameters to
    update (default: all of the model's).
    """
    objective = objective if objective is not None else NextToken()
    check_setup(model, task, cfg, objective)
    device = next(model.parameters()).device
    data_gen = generator(cfg.seed + 1)
    opt = make_optimizer(model.parameters() if params is None else params, cfg)
    sched = make_warmup(opt, cfg.warmup_steps)
    hist = History(floor=objective.floor(task), unigram=task.unigram_entropy())
    hooks = {
        name: [getattr(t, name) for t in trackers if hasattr(t, name)]
        for name in ("start", "before_step", "after_backward", "after_step")
    }
    for hook in hooks["start"]:
        hook(model, task, cfg)
    model.train()
    for step in progress_bar(range(cfg.steps), progress):
        for hook in hooks["before_step"]:
            hook(model, step, hist)
        tokens = task.sample(cfg.batch_size, cfg.seq_len, data_gen).to(device)
        loss = objective.loss(model, tokens, data_gen)
        value = loss.item()
        if not hist.observe(step, value):
            break
        opt.zero_grad(set_to_none=True)
        loss.backward()
        for hook in hooks["after_backward"]:
            hook(model, step, hist)
        hist.losses.append(value)
        hist.lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        for hook in hooks["after_step"]:
            hook(model, step, hist)
        sched.step()
    return hist


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
        for block, old in zip(model.blocks, self._before, strict=True):
            num = sum(float((p - q).pow(2).sum()) for p, q in zip(block.parameters(), old, strict=True))
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
        return model.hidden(self._probe).float()  # F(x, θ): [B, T, d]

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


def one_step_loss_change(
    model: nn.Module, tokens: torch.Tensor, optimizer: str, lr: float, params: list[torch.Tensor] | None = None
) -> StepProbe:
    """Take one step of ``optimizer`` at learning rate ``lr`` on ``tokens`` and measure ΔL.

    ΔL = L(θ₀ + Δθ) − L(θ₀) ≈ ⟨∇L, Δθ⟩, with Δθ = −η∇L (SGD) or ≈ −η·sign(∇L) (Adam's first step).
    ``params``: the parameters that step (default all); the norms are over those. The model's
    parameters are restored afterwards.
    """
    params = [p for p in model.parameters() if p.requires_grad] if params is None else list(params)
    saved = [p.detach().clone() for p in params]
    model.zero_grad(set_to_none=True)
    loss0 = model.loss(tokens)
    loss0.backward()
    loss0 = loss0.detach()
    grads = [torch.zeros_like(p) if p.grad is None else p.grad.detach().clone() for p in params]
    blocks = tuple(per_block_grad_norms(model)) if hasattr(model, "blocks") else ()
    opt = make_optimizer(params, TrainConfig(optimizer=optimizer, lr=lr))
    opt.step()
    with torch.no_grad():
        loss1 = float(model.loss(tokens))
        deltas = [p - s for p, s in zip(params, saved, strict=True)]
        first_order = sum(float((g * d).sum()) for g, d in zip(grads, deltas, strict=True))
        update_norm = sum(float(d.pow(2).sum()) for d in deltas) ** 0.5
        for p, s in zip(params, saved, strict=True):
            p.copy_(s)
    model.zero_grad(set_to_none=True)
    return StepProbe(
        loss_before=float(loss0),
        delta_loss=loss1 - float(loss0),
        first_order=first_order,
        grad_sq=sum(float(g.pow(2).sum()) for g in grads),
        grad_l1=sum(float(g.abs().sum()) for g in grads),
        update_norm=update_norm,
        block_grad_norms=blocks,
    )
