"""A training loop that measures and draws nothing: it returns a :class:`History`.

A run whose loss turns NaN/inf stops there and is recorded as diverged at that step; it never raises.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

from .config import ModelConfig, TrainConfig
from .data import MarkovLanguage, mask_positions
from .models import TransformerLM, build_model
from .optim import make_optimizer, make_warmup
from .probes import per_block_grad_norms
from .progress import progress as progress_bar


@dataclass
class History:
    """What one run measured, step by step (step t = the state before the t-th update)."""
    losses: list[float] = field(default_factory=list)        # training loss at each step
    lrs: list[float] = field(default_factory=list)           # learning rate used at each step
    update_rms: list[float] = field(default_factory=list)    # RMS of F(x,θ_t) − F(x,θ_0) on a fixed probe batch
    grad_steps: list[int] = field(default_factory=list)      # steps at which grad_norms were taken
    grad_norms: list[list[float]] = field(default_factory=list)  # [len(grad_steps)][N] per-block ‖∂L/∂θ_l‖
    block_updates: list[list[float]] = field(default_factory=list)  # [len(grad_steps)][N] ‖Δθ_l‖/‖θ_l‖ of that step
    diverged_at: int | None = None                           # first step with a non-finite loss
    floor: float | None = None                               # the task's loss floor (entropy rate)
    unigram: float | None = None                             # the context-free plateau

    @property
    def diverged(self) -> bool:
        return self.diverged_at is not None

    def fraction_learned(self, window: int = 10) -> float:
        """(plateau − final loss) / (plateau − floor): 0 on the context-free plateau, 1 at the floor,
        −inf for a run that diverged."""
        return (self.unigram - self.final_loss(window)) / (self.unigram - self.floor)

    def final_loss(self, window: int = 10) -> float:
        """Mean of the last ``window`` finite losses (inf if the run diverged)."""
        if self.diverged:
            return math.inf
        tail = self.losses[-window:]
        return sum(tail) / len(tail)


def train(model: TransformerLM, task: MarkovLanguage, cfg: TrainConfig, progress: bool = False,
          track_update: bool = True, params=None, on_step=None, track_block_updates: bool = False,
          mask_prob: float | None = None) -> History:
    """Train ``model`` on ``task`` for ``cfg.steps`` steps of ``cfg.optimizer`` with linear warmup.

    ``params``: the parameters to update (default: all of the model's). ``on_step(model, step)`` is
    called before each step's forward pass (e.g. a fixed gate schedule). ``track_block_updates``
    records each block's relative update ‖Δθ_l‖/‖θ_l‖ at the steps where gradients are tracked.
    ``mask_prob`` trains masked-language modelling instead (an encoder; isolated interior masks,
    floor = the masked-token entropy).
    """
    device = next(model.parameters()).device
    data_gen = torch.Generator().manual_seed(cfg.seed + 1)
    probe = task.sample(cfg.batch_size, cfg.seq_len, torch.Generator().manual_seed(cfg.seed + 2)).to(device)
    opt = make_optimizer(model.parameters() if params is None else params, cfg)
    sched = make_warmup(opt, cfg.warmup_steps)
    floor = task.masked_entropy() if mask_prob is not None else task.entropy_rate()
    hist = History(floor=floor, unigram=task.unigram_entropy())
    ref = _probe_output(model, probe) if track_update else None

    steps = progress_bar(range(cfg.steps), progress)
    model.train()
    for step in steps:
        if on_step is not None:
            on_step(model, step)
        tokens = task.sample(cfg.batch_size, cfg.seq_len, data_gen).to(device)
        if mask_prob is None:
            loss = model.loss(tokens)
        else:
            loss = model.mlm_loss(tokens, mask_positions(cfg.batch_size, cfg.seq_len, mask_prob, data_gen).to(device))
        value = loss.item()
        if not math.isfinite(value):
            hist.diverged_at = step
            break
        opt.zero_grad(set_to_none=True)
        loss.backward()
        tracked = step % cfg.track_every == 0
        if tracked:
            hist.grad_steps.append(step)
            hist.grad_norms.append(per_block_grad_norms(model))
            before = [[p.detach().clone() for p in b.parameters()] for b in model.blocks] if track_block_updates else None
        hist.losses.append(value)
        hist.lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        if tracked and track_block_updates:
            hist.block_updates.append(_relative_block_updates(model, before))
        sched.step()
        if track_update:
            hist.update_rms.append(_rms(_probe_output(model, probe) - ref))
    return hist


def train_lm(model_cfg: ModelConfig, train_cfg: TrainConfig, task: MarkovLanguage | None = None,
             device: torch.device | str | None = None, progress: bool = False,
             track_update: bool = True) -> History:
    """Build a :class:`TransformerLM` from ``model_cfg`` (seeded by ``train_cfg.seed``) and train it."""
    if task is None:
        task = MarkovLanguage(model_cfg.vocab_size, seed=train_cfg.seed)
    model = build_model(model_cfg, seed=train_cfg.seed, device=device)
    return train(model, task, train_cfg, progress=progress, track_update=track_update)


@torch.no_grad()
def _relative_block_updates(model, before) -> list[float]:
    out = []
    for block, old in zip(model.blocks, before):
        num = sum(float((p - q).pow(2).sum()) for p, q in zip(block.parameters(), old))
        den = sum(float(q.pow(2).sum()) for q in old)
        out.append((num / den) ** 0.5 if den > 0 else 0.0)
    return out


@torch.no_grad()
def _probe_output(model: TransformerLM, probe: torch.Tensor) -> torch.Tensor:
    return model.hidden(probe).float()                       # F(x, θ): [B, T, d]


def _rms(t: torch.Tensor) -> float:
    return float(t.pow(2).mean().sqrt())
