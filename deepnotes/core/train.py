"""One training loop that measures and draws nothing: it returns a :class:`History`.

What is trained on is an *objective* (:class:`NextToken`, :class:`Masked`); what is measured along
the way are *trackers* (:mod:`deepnotes.core.trackers`), passed in. A run whose loss turns NaN/inf
stops there and is recorded as diverged at that step; it never raises.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
from torch import nn

from deepnotes.core.config import TrainConfig
from deepnotes.core.data import MarkovLanguage, mask_positions
from deepnotes.core.optim import make_optimizer, make_warmup
from deepnotes.core.rng import generator
from deepnotes.core.validate import positive_int
from deepnotes.show.progress import progress as progress_bar


@dataclass
class History:
    """What one run measured, step by step (step t = the state before the t-th update)."""
    losses: list[float] = field(default_factory=list)        # training loss at each step
    lrs: list[float] = field(default_factory=list)           # learning rate used at each step
    update_rms: list[float] = field(default_factory=list)    # RMS of F(x,θ_t) − F(x,θ_0) on a fixed probe batch
    grad_steps: list[int] = field(default_factory=list)      # steps at which grad_norms were taken
    grad_norms: list[list[float]] = field(default_factory=list)  # [len(grad_steps)][N] per-block ‖∂L/∂θ_l‖
    update_steps: list[int] = field(default_factory=list)    # steps at which block_updates were taken
    block_updates: list[list[float]] = field(default_factory=list)  # [len(update_steps)][N] ‖Δθ_l‖/‖θ_l‖ of that step
    records: dict[str, tuple[list[int], list]] = field(default_factory=dict)  # name → (steps, values) of a Recorder
    diverged_at: int | None = None                           # first step with a non-finite loss
    floor: float | None = None                               # the objective's loss floor
    unigram: float | None = None                             # the context-free plateau
    seconds: float | None = None                             # wall time of the training loop (of its whole ensemble)
    ensemble_size: int = 1                                   # members trained in that loop (engine ensembles)

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

    def steps_to(self, fraction: float = 0.5, window: int = 10) -> int | None:
        """The first step t at which the mean of the ``window`` losses up to and including step t
        has gone ``fraction`` of the way from the context-free plateau to the floor; None if never
        or if the run diverged."""
        positive_int("window", window)
        if self.diverged:
            return None
        target = self.unigram - fraction * (self.unigram - self.floor)
        for t in range(window, len(self.losses) + 1):
            if sum(self.losses[t - window:t]) / window <= target:
                return t - 1
        return None

    def mean_fraction_learned(self) -> float | None:
        """Mean over the run of (plateau − loss_t)/(plateau − floor): the area under the learning
        curve in units of the plateau-to-floor gap; None if the run diverged."""
        if self.diverged or not self.losses:
            return None
        return sum(self.unigram - x for x in self.losses) / (len(self.losses) * (self.unigram - self.floor))

    def record(self, name: str) -> tuple[list[int], list]:
        """(steps, values) recorded under ``name`` by a :class:`~deepnotes.core.trackers.Recorder`."""
        return self.records.setdefault(name, ([], []))


class NextToken:
    """Next-token cross-entropy of a causal model; floor: the task's entropy rate."""

    def check(self, model: nn.Module) -> None:
        cfg = getattr(model, "cfg", None)
        if cfg is not None and not cfg.causal:
            raise ValueError("the next-token objective needs a causal model (causal=True): an encoder sees the "
                             "token it is asked to predict; train an encoder with Masked(prob)")

    def floor(self, task: MarkovLanguage) -> float:
        return task.entropy_rate()

    def loss(self, model: nn.Module, tokens: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
        return model.loss(tokens)


class Masked:
    """Masked-token cross-entropy of an encoder (isolated interior masks); floor: the masked-token
    entropy H(X_t | X_{t−1}, X_{t+1})."""

    def __init__(self, prob: float):
        if isinstance(prob, bool) or not isinstance(prob, (int, float)) or not 0 < prob < 1:
            raise ValueError(f"mask probability must be in (0, 1), got {prob!r}")
        self.prob = float(prob)

    def check(self, model: nn.Module) -> None:
        cfg = getattr(model, "cfg", None)
        if cfg is not None and cfg.causal:
            raise ValueError("the masked objective needs an encoder (causal=False)")

    def floor(self, task: MarkovLanguage) -> float:
        return task.masked_entropy()

    def mask(self, batch_size: int, seq_len: int, gen: torch.Generator) -> torch.Tensor:
        """The positions [B, T] to hide, drawn from ``gen`` after the batch's tokens."""
        return mask_positions(batch_size, seq_len, self.prob, gen)

    def loss(self, model: nn.Module, tokens: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
        return model.mlm_loss(tokens, self.mask(*tokens.shape, gen).to(tokens.device))


def train(model: nn.Module, task: MarkovLanguage, cfg: TrainConfig, *, objective=None,
          trackers: Sequence = (), params=None, progress: bool = False) -> History:
    """Train ``model`` on ``task`` for ``cfg.steps`` steps of ``cfg.optimizer`` with linear warmup.

    ``objective``: :class:`NextToken` (default) or :class:`Masked`. ``trackers``: measurements taken
    along the way (see :mod:`deepnotes.core.trackers`); each may hook ``start``, ``before_step``
    (before the forward pass), ``after_backward`` and ``after_step``. ``params``: the parameters to
    update (default: all of the model's).
    """
    objective = objective if objective is not None else NextToken()
    objective.check(model)
    device = next(model.parameters()).device
    data_gen = generator(cfg.seed + 1)
    opt = make_optimizer(model.parameters() if params is None else params, cfg)
    sched = make_warmup(opt, cfg.warmup_steps)
    hist = History(floor=objective.floor(task), unigram=task.unigram_entropy())
    hooks = {name: [getattr(t, name) for t in trackers if hasattr(t, name)]
             for name in ("start", "before_step", "after_backward", "after_step")}
    for hook in hooks["start"]:
        hook(model, task, cfg)
    model.train()
    for step in progress_bar(range(cfg.steps), progress):
        for hook in hooks["before_step"]:
            hook(model, step, hist)
        tokens = task.sample(cfg.batch_size, cfg.seq_len, data_gen).to(device)
        loss = objective.loss(model, tokens, data_gen)
        value = loss.item()
        if not math.isfinite(value):
            hist.diverged_at = step
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
