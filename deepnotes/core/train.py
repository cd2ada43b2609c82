"""One training loop that measures and draws nothing: it returns a :class:`History`.

What is trained on is an *objective* (:class:`NextToken`, :class:`Masked`); what is measured along
the way are *trackers* (:mod:`deepnotes.core.trackers`), passed in. A run whose loss turns NaN/inf,
or blows up (:data:`BLOWUP_FACTOR`), stops there and is recorded as diverged at that step; it never
raises.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
from torch import nn

from deepnotes.core.config import ModelConfig, TrainConfig
from deepnotes.core.data import MarkovLanguage, mask_positions
from deepnotes.core.models import model_vocab
from deepnotes.core.optim import make_optimizer, make_warmup
from deepnotes.core.rng import generator
from deepnotes.core.validate import positive_int
from deepnotes.show.progress import progress as progress_bar

# A run has blown up when its loss exceeds BLOWUP_FACTOR × max(its first loss, the context-free plateau):
# with V = 16 tokens that is above ~28 nats, far past anything a run that is still learning shows
# (a loss at the plateau is ≤ log V ≈ 2.8). The one place this threshold is set.
BLOWUP_FACTOR = 10.0


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
    diverged_at: int | None = None                           # first step with a non-finite or blown-up loss
    diverged_loss: float | None = None                       # the loss at that step (nan, inf, or the blow-up)
    floor: float | None = None                               # the objective's loss floor
    unigram: float | None = None                             # the context-free plateau
    seconds: float | None = None                             # wall time of the training loop (of its whole ensemble)
    ensemble_size: int = 1                                   # members trained in that loop (engine ensembles)

    @property
    def diverged(self) -> bool:
        return self.diverged_at is not None

    def blowup_threshold(self) -> float | None:
        """BLOWUP_FACTOR × max(first loss, context-free plateau); None before the first loss."""
        if not self.losses:
            return None
        return BLOWUP_FACTOR * max(self.losses[0], self.unigram if self.unigram is not None else 0.0)

    def observe(self, step: int, loss: float) -> bool:
        """Whether the run may go on with ``loss`` at ``step``: False (and the run marked diverged at
        ``step``) when the loss is NaN/inf or above :meth:`blowup_threshold`. The loss itself is not
        appended here: a training loop appends it with the step's learning rate."""
        limit = self.blowup_threshold()
        if math.isfinite(loss) and (limit is None or loss <= limit):
            return True
        self.diverged_at, self.diverged_loss = step, loss
        return False

    def divergence_note(self) -> str:
        """'' for a run that did not diverge, else 'diverged at step 3 (loss nan)' or
        'diverged at step 7 (loss 4.9e+03 > 28)' (just the step when the loss was not recorded)."""
        if not self.diverged:
            return ""
        loss, text = self.diverged_loss, f"diverged at step {self.diverged_at}"
        if loss is None:
            return text
        if not math.isfinite(loss):
            return f"{text} (loss {loss})"
        return f"{text} (loss {loss:.3g} > {self.blowup_threshold():.3g})"

    def fraction_learned(self, window: int = 10) -> float:
        """(plateau − final loss) / (plateau − floor): 0 on the context-free plateau, 1 at the floor,
        −inf for a run that diverged."""
        positive_int("window", window)
        return (self.unigram - self.final_loss(window)) / (self.unigram - self.floor)

    def final_loss(self, window: int = 10) -> float:
        """Mean of the last ``window`` finite losses (inf if the run diverged)."""
        positive_int("window", window)
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


def check_setup(model, task, cfg: TrainConfig, objective) -> None:
    """Refuse, before any step, a setting whose loss would be wrong or empty rather than train it:
    a task that is not a :class:`MarkovLanguage`, a task whose vocabulary differs from the model's,
    a train config that is not a :class:`TrainConfig`, and what ``objective.check`` refuses."""
    if not isinstance(task, MarkovLanguage):
        raise TypeError(f"task must be a MarkovLanguage, got {type(task).__name__}")
    if not isinstance(cfg, TrainConfig):
        raise TypeError(f"cfg must be a TrainConfig, got {type(cfg).__name__}")
    vocab = model_vocab(model)
    if vocab is not None and vocab != task.vocab_size:
        raise ValueError(f"the task has vocab_size={task.vocab_size} but the model reads {vocab} tokens; "
                         "build both with the same vocab_size")
    objective.check(getattr(model, "cfg", None), cfg)


class NextToken:
    """Next-token cross-entropy of a causal model; floor: the task's entropy rate."""

    def check(self, model_cfg: ModelConfig | None, cfg: TrainConfig) -> None:
        """A causal model (an encoder sees the token it is asked to predict) and seq_len ≥ 2 (TrainConfig)."""
        if isinstance(model_cfg, ModelConfig) and not model_cfg.causal:
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

    def check(self, model_cfg: ModelConfig | None, cfg: TrainConfig) -> None:
        """An encoder (a causal model cannot see the right neighbour), seq_len ≥ 3 (a masked token needs
        two visible neighbours) and seq_len ≤ the encoder's max_len (its position table)."""
        if not isinstance(model_cfg, ModelConfig) or model_cfg.causal:
            raise ValueError("the masked objective needs an encoder: a model with ModelConfig(causal=False)")
        if cfg.seq_len < 3:
            raise ValueError(f"the masked objective needs seq_len >= 3 (interior positions), got {cfg.seq_len}")
        if cfg.seq_len > model_cfg.max_len:
            raise ValueError(f"seq_len={cfg.seq_len} exceeds the encoder's max_len={model_cfg.max_len} "
                             "(its position table); raise max_len or shorten the sequences")

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
    check_setup(model, task, cfg, objective)
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
