"""The one training loop: K members of a :class:`~deepnotes.core.engine.Stack` in one pass and one
optimizer step, measuring and drawing nothing; it returns one :class:`History` per member.

Member k is trained as it would be alone with ``cfgs[k]``: its own data stream
(``generator(seed + 1)``), its own task, its own learning rate and warmup. The members' losses are
summed before ``backward``; their parameters are disjoint slices, so each slice gets its own member's
gradient. What is trained on is an *objective* (:class:`NextToken`, :class:`Masked`); what is measured
along the way are *trackers* (:mod:`deepnotes.core.measure`), passed in. A member whose loss turns
NaN/inf, or blows up (:data:`BLOWUP_FACTOR`), is recorded as diverged at that step and stops
recording; the others go on (its slice can hold NaN: no operation mixes members). Nothing raises. The step reads
nothing back from the device: divergence is judged there and the losses are read every :data:`READ_EVERY` steps
(:class:`LossRecord`; the section "the step's device side"); on a GPU the steps after the warmups replay one step
captured as a CUDA graph (:class:`CapturedStep`; the section "the captured step").

:func:`train` is one run; :func:`deepnotes.core.ensembles.train_many` trains any list of runs in as
few ensembles as possible, on worker processes. Progress bars (:func:`progress`): tqdm's (a widget in
Jupyter, text elsewhere), closed and removed however the loop ends. Whoever wants to know what was
trained (the cost package's work log) adds a function to :data:`ENSEMBLE_OBSERVERS`: it is called
once per ensemble, before it trains, in the process that asked for it.
"""

from __future__ import annotations

import math
import os
import statistics
import time
import warnings
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TypeVar

import torch
from torch import nn

from deepnotes.core.config import ModelConfig, TrainConfig, check_allocation, check_fits
from deepnotes.core.config import device as default_device
from deepnotes.core.data import MarkovLanguage, generator, mask_positions
from deepnotes.core.engine import Stack, check_slot_names
from deepnotes.core.models import check_tokens, ids_checked_on_host, model_vocab
from deepnotes.core.optim import EnsembleOptimizer, check_members
from deepnotes.core.validate import (
    Count,
    Finite,
    NonNegative,
    NonNegativeCount,
    Positive,
    Probability,
    Real,
    Recorded,
    given,
)

T = TypeVar("T")


def progress(items: Iterable[T], enabled: bool = True, total: Count | None = None) -> Iterator[T]:
    """Yield ``items``; with ``enabled``, under a tqdm bar that is closed and removed at the end
    (``total``: the number of items, for iterators that have no length). A plain function around the
    generator, so that its arguments are checked at the call, not at the first item."""
    return _progress(items, enabled, total)


def _progress(items: Iterable[T], enabled: bool, total: int | None) -> Iterator[T]:
    if not enabled:
        yield from items
        return
    from tqdm.auto import tqdm  # imported here: `import deepnotes` stays light

    bar = tqdm(items, leave=False, total=total)
    try:
        yield from bar
    finally:
        bar.close()
        container = getattr(bar, "container", None)  # only the notebook (ipywidgets) bar has one
        if container is not None:
            container.layout.display = "none"


_bar = progress  # the loops' own argument is called progress


# A run has blown up when its loss exceeds BLOWUP_FACTOR × max(its first loss, the context-free plateau):
# with V = 16 tokens that is above ~28 nats, far past anything a run that is still learning shows
# (a loss at the plateau is ≤ log V ≈ 2.8). The one place this threshold is set.
BLOWUP_FACTOR = 10.0


@dataclass
class History:
    """What one run measured, step by step (step t = the state before the t-th update)."""

    losses: list[float] = field(default_factory=list)  # training loss at each step
    lrs: list[float] = field(default_factory=list)  # learning rate used at each step
    update_rms: list[float] = field(default_factory=list)  # RMS of F(x,θ_t) − F(x,θ_0) on a fixed probe batch
    grad_steps: list[int] = field(default_factory=list)  # steps at which grad_norms were taken
    grad_norms: list[list[float]] = field(default_factory=list)  # [len(grad_steps)][N] per-block ‖∂L/∂θ_l‖
    update_steps: list[int] = field(default_factory=list)  # steps at which block_updates were taken
    block_updates: list[list[float]] = field(default_factory=list)  # [len(update_steps)][N] ‖Δθ_l‖/‖θ_l‖ of that step
    records: dict[str, tuple[list[int], list]] = field(default_factory=dict)  # name → (steps, values) of a Recorder
    diverged_at: NonNegativeCount | None = None  # first step with a non-finite or blown-up loss
    diverged_loss: Recorded | None = None  # the loss at that step (nan, inf, or the blow-up)
    floor: Real | None = None  # the objective's loss floor
    unigram: Real | None = None  # the context-free plateau
    held_out_loss: Real | None = None  # the final model's expected loss on its task's held-out sample
    held_out_se: float | None = None  # its standard error over the sample's sequences
    held_out_sequences: NonNegativeCount = 0  # the sample's size (0: none was read)
    seconds: NonNegative | None = None  # wall time of the training loop (of its whole ensemble)
    ensemble_size: Count = 1  # members trained in that loop (engine ensembles)

    @property
    def diverged(self) -> bool:
        return self.diverged_at is not None

    def blowup_threshold(self) -> float | None:
        """BLOWUP_FACTOR × max(first loss, context-free plateau); None before the first loss."""
        if not self.losses:
            return None
        return BLOWUP_FACTOR * max(self.losses[0], self.unigram if self.unigram is not None else 0.0)

    def observe(self, step: int, loss: float) -> bool:  # NaN and ±inf are what it is there to record
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

    def fraction_learned(self, window: Count = 10) -> float:
        """(plateau − final loss) / (plateau − floor): 0 on the context-free plateau, 1 at the floor,
        −inf for a run that diverged. The final loss is the held-out loss where the run measured one (the
        trained model on a fixed sample, :func:`held_out_losses`), else the mean of the last ``window``
        training losses (a run trained with ``held_out=0``, or a History built by hand). A History without
        both reference losses, or whose floor is not below its plateau, has no such fraction: ValueError."""
        if self.unigram is None or self.floor is None or not self.floor < self.unigram:
            raise ValueError(
                f"fraction_learned needs the History's floor below its plateau (unigram); got floor={self.floor!r}, "
                f"unigram={self.unigram!r}: a trained run sets both from its task and objective"
            )
        return (self.unigram - self.end_loss(window)) / (self.unigram - self.floor)

    def end_loss(self, window: Count = 10) -> float:
        """The loss :meth:`fraction_learned` reads: the held-out loss where the run measured one, else
        :meth:`final_loss` (inf for a run that diverged)."""
        return self.held_out_loss if self.held_out_loss is not None and not self.diverged else self.final_loss(window)

    def fraction_se(self) -> float | None:
        """The standard error of :meth:`fraction_learned` from the held-out sample (its loss's standard
        error over the plateau–floor gap); None without a held-out loss."""
        if self.held_out_se is None or self.diverged:
            return None
        return self.held_out_se / (self.unigram - self.floor)

    def final_loss(self, window: Count = 10) -> float:
        """Mean of the last ``window`` finite losses (inf if the run diverged)."""
        if self.diverged:
            return math.inf
        if not self.losses:
            raise ValueError("final_loss: this History has no losses (a run of 0 steps, or one built without any)")
        tail = self.losses[-window:]
        return sum(tail) / len(tail)

    def steps_to(self, fraction: Finite = 0.5, window: Count = 10) -> int | None:
        """The first step t at which the mean of the ``window`` losses up to and including step t
        has gone ``fraction`` of the way from the context-free plateau to the floor; None if never
        or if the run diverged."""
        if self.diverged:
            return None
        target = self.unigram - fraction * (self.unigram - self.floor)
        for t in range(window, len(self.losses) + 1):
            if sum(self.losses[t - window : t]) / window <= target:
                return t - 1
        return None

    def mean_fraction_learned(self) -> float | None:
        """Mean over the run of (plateau − loss_t)/(plateau − floor): the area under the learning
        curve in units of the plateau-to-floor gap; None if the run diverged."""
        if self.diverged or not self.losses:
            return None
        return sum(self.unigram - x for x in self.losses) / (len(self.losses) * (self.unigram - self.floor))

    def record(self, name: str) -> tuple[list[int], list]:
        """(steps, values) recorded under ``name`` by a :class:`~deepnotes.core.measure.Recorder`."""
        return self.records.setdefault(name, ([], []))


def median_fraction_learned(hists: Sequence[History], window: Count = 10) -> float:
    """The median over seeds of :meth:`History.fraction_learned` (−inf for a seed that diverged, so a median over
    mostly diverged seeds is −inf): how the chapters' answers and verdicts read an ensemble. Empty: ValueError."""
    if not hists:
        raise ValueError("hists is empty: the median fraction learned needs at least one run")
    return float(statistics.median(h.fraction_learned(window) for h in hists))


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
        raise ValueError(
            f"the task has vocab_size={task.vocab_size} but the model reads {vocab} tokens; "
            "build both with the same vocab_size"
        )
    objective.check(getattr(model, "cfg", None), cfg)


class NextToken:
    """Next-token cross-entropy of a causal model; floor: the task's entropy rate."""

    def check(self, model_cfg: ModelConfig | None, cfg: TrainConfig) -> None:
        """A causal model (an encoder sees the token it is asked to predict) and seq_len ≥ 2 (TrainConfig)."""
        if isinstance(model_cfg, ModelConfig) and not model_cfg.causal:
            raise ValueError(
                "the next-token objective needs a causal model (causal=True): an encoder sees the "
                "token it is asked to predict; train an encoder with Masked(prob)"
            )

    def floor(self, task: MarkovLanguage) -> float:
        return task.entropy_rate()

    def loss(self, model: nn.Module, tokens: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
        return model.loss(tokens)

    def expected_losses(
        self, stack: Stack, tokens: torch.Tensor, mask: torch.Tensor | None, truth: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Σ_t H(P[x_t], q(·|x_≤t)) = −Σ_t Σ_v P[x_t, v] log q(v|x_≤t) per member and sequence, and the
        number of predicted positions: [K, B] each, from tokens [K, B, T] and the members' transition
        matrices ``truth`` [K, V, V]. The expectation over the next token of the sampled loss."""
        logp = torch.log_softmax(stack(tokens[..., :-1]).float(), dim=-1)  # [K, B, T−1, V]
        members = torch.arange(tokens.size(0), device=tokens.device)[:, None, None]
        ce = -(truth[members, tokens[..., :-1]] * logp).sum(dim=-1)  # [K, B, T−1]
        return ce.sum(dim=-1), torch.full_like(ce[..., 0], ce.size(-1))


class Masked:
    """Masked-token cross-entropy of an encoder (isolated interior masks); floor: the masked-token
    entropy H(X_t | X_{t−1}, X_{t+1})."""

    def __init__(self, prob: Probability):
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
            raise ValueError(
                f"seq_len={cfg.seq_len} exceeds the encoder's max_len={model_cfg.max_len} "
                "(its position table); raise max_len or shorten the sequences"
            )

    def floor(self, task: MarkovLanguage) -> float:
        return task.masked_entropy()

    def mask(self, batch_size: int, seq_len: int, gen: torch.Generator) -> torch.Tensor:
        """The positions [B, T] to hide, drawn from ``gen`` after the batch's tokens."""
        return mask_positions(batch_size, seq_len, self.prob, gen)

    def loss(self, model: nn.Module, tokens: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
        return model.mlm_loss(tokens, self.mask(*tokens.shape, gen).to(tokens.device))

    def expected_losses(
        self, stack: Stack, tokens: torch.Tensor, mask: torch.Tensor | None, truth: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Per member and sequence [K, B]: Σ over the hidden positions t of −Σ_v p(v | x_{t−1}, x_{t+1}) log q(v),
        with the language's p(v | a, b) ∝ P[a, v] P[v, b] (masks are interior and never side by side), and
        the number of hidden positions. ``truth``: the members' transition matrices [K, V, V]."""
        logits = stack(tokens.masked_fill(mask, stack.mask_id)).float()  # [K, B, T, V]
        logp = torch.log_softmax(logits, dim=-1)[..., 1:-1, :]  # interior positions [K, B, T−2, V]
        members = torch.arange(tokens.size(0), device=tokens.device)[:, None, None]
        before = truth[members, tokens[..., :-2]]  # P[x_{t−1}, v]  [K, B, T−2, V]
        after = truth.transpose(1, 2)[members, tokens[..., 2:]]  # P[v, x_{t+1}]  [K, B, T−2, V]
        posterior = before * after / (before * after).sum(dim=-1, keepdim=True)
        hidden = mask[..., 1:-1].float()  # [K, B, T−2]
        ce = -(posterior * logp[..., : posterior.size(-1)]).sum(dim=-1)  # [K, B, T−2]
        return (ce * hidden).sum(dim=-1), hidden.sum(dim=-1)


# Called once per ensemble before it trains, as f(model_cfg, members, train_cfg, mask_prob or None, spread)
# (spread: in a worker process beside others): the cost package's work log adds itself here
# (deepnotes/cost/log.py). Nothing in core reads it.
ENSEMBLE_OBSERVERS: list[Callable[[ModelConfig, int, TrainConfig, float | None, bool], None]] = []


def notify_observers(model_cfg: ModelConfig, members: Count, cfg: TrainConfig, objective, spread: bool = False) -> None:
    """Tell every function of :data:`ENSEMBLE_OBSERVERS` that an ensemble of ``members`` runs of ``model_cfg`` is about
    to train with ``cfg`` (``spread``: in a worker process beside others)."""
    for observer in ENSEMBLE_OBSERVERS:
        observer(model_cfg, members, cfg, objective.prob if isinstance(objective, Masked) else None, spread)


def member_tasks(tasks, k: Count) -> list[MarkovLanguage]:
    """One task per member: the same task for all, or a list or tuple of k tasks."""
    if not isinstance(tasks, (MarkovLanguage, list, tuple)):
        raise TypeError(
            f"task must be a MarkovLanguage (or a list of them, one per member), got {type(tasks).__name__}"
        )
    tasks = [tasks] * k if isinstance(tasks, MarkovLanguage) else list(tasks)
    if len(tasks) != k:
        raise ValueError(f"{len(tasks)} tasks for a stack of {k} members")
    return tasks


# ---- the step's device side (issue 62) ----------------------------------------------------------
# The step reads nothing back from the device: the members' losses are judged where they were computed, and the host
# reads them every few steps. The loop used to read every step's K losses back to decide which members had
# diverged, a host–device sync per step (on a GPU, the queue drains every step and a CUDA graph cannot hold the step).
# Here, with ℓ_k(t) member k's loss at step t and P_k its context-free plateau:
#
#     ok_k(t) = ok_k(t−1) ∧ isfinite(ℓ_k(t)) ∧ ℓ_k(t) ≤ B_k,   B_k = BLOWUP · max(ℓ_k(0), P_k)   (B_k = ∞ at t = 0)
#
# is a [K] mask on the device, the loss backpropagated is Σ_k [ok_k(t)] ℓ_k(t) (a member that diverged gets no
# gradient from its own loss, as before), and the losses ℓ(t) [K] go into a buffer [R, K] that
# :meth:`LossRecord.read_back` copies to the host every R steps (or when a tracker needs the histories), where
# :meth:`History.observe` decides the same in double precision, step by step, and the two must agree (else: a bug,
# raised). Nothing here mixes members.
#
# :class:`BatchesAhead` draws the next R steps' batches on the CPU generators, in the order the step would draw them
# (:func:`drawn_batches`' rules), and copies them to the device in one transfer.

READ_EVERY = 32  # steps between read-backs on a GPU where no tracker needs the histories sooner
# On the CPU a read is free and a read every step stops an ensemble whose every member diverged at once (with 32, up
# to 31 steps more were computed: +3–5 % per member-step on the 1000-layer headline, RESULTS.md 2026-11-29).
READ_EVERY_CPU = 1


class LossRecord:
    """The members' losses of the steps not yet read back, on the device, and which members still train
    (``ok`` [K]); the host's view (``alive``, the Histories) as of the last :meth:`read_back`."""

    def __init__(self, hists: Sequence, lr_values: Callable[[int], list[float]], blowup: Positive, rows: Count):
        self.hists, self.lr_values, self.blowup = list(hists), lr_values, blowup
        self.rows = rows
        self.alive = list(range(len(self.hists)))
        self.steps: list[int] = []  # the steps held in the buffer, in order
        self.ok = self.limit = self.plateau = self.losses = self.oks = self.seen = None

    def _start(self, losses: torch.Tensor) -> None:
        """The device state, shaped after the first losses [K] (their dtype and device)."""
        k, dev = losses.shape[0], losses.device
        self.ok = torch.ones(k, dtype=torch.bool, device=dev)
        self.limit = torch.full((k,), math.inf, dtype=torch.float64, device=dev)
        self.plateau = torch.tensor([h.unigram or 0.0 for h in self.hists], dtype=torch.float64, device=dev)
        self.losses = torch.empty((self.rows, k), dtype=losses.dtype, device=dev)  # [R, K]
        self.oks = torch.empty((self.rows, k), dtype=torch.bool, device=dev)  # [R, K]

    def judge(self, step: int, losses: torch.Tensor) -> torch.Tensor:
        """Step ``step``'s losses [K]: the members that still train (ok ∧ finite ∧ ≤ B_k) updated on the device, the
        losses kept for the read-back, and the loss to backpropagate returned, [K]: ℓ_k where ok_k, else 0."""
        masked = self.judged(losses, first=step == 0)
        self.keep(step)
        return masked

    def judged(self, losses: torch.Tensor, first: bool = False) -> torch.Tensor:
        """:meth:`judge`'s device part, which a CUDA graph can hold (no Python value of the step in it): ok updated,
        the losses held in ``seen`` for :meth:`keep`; ``first``: the first step, whose loss sets each limit B_k."""
        if self.ok is None:
            self._start(losses)
        self.seen = losses.detach()
        wide = self.seen.double()  # the host compares doubles: the same rounding here
        self.ok &= torch.isfinite(wide) & (wide <= self.limit)
        if first:  # History.blowup_threshold, from the first recorded loss
            self.limit.copy_(torch.where(self.ok, self.blowup * torch.maximum(wide, self.plateau), self.limit))
        return torch.where(self.ok, losses, torch.zeros_like(losses))

    def keep(self, step: int) -> None:
        """:meth:`judge`'s bookkeeping: the last judged losses and ok as step ``step``'s row of the buffer."""
        if len(self.steps) == self.rows:
            raise RuntimeError(f"the loss buffer holds {self.rows} steps: read it back before step {step}")
        row = len(self.steps)
        self.losses[row].copy_(self.seen)
        self.oks[row].copy_(self.ok)
        self.steps.append(step)

    def due(self) -> bool:
        """Whether the buffer is full (the next step needs a read-back first)."""
        return len(self.steps) == self.rows

    def read_back(self) -> list[int]:
        """Copy the pending steps' losses to the host (one sync) and append them to the Histories in order, each step
        judged again by :meth:`History.observe` with its learning rates; the members alive after the last one."""
        if not self.steps:
            return self.alive
        values = self.losses[: len(self.steps)].tolist()  # [S][K]
        oks = self.oks[: len(self.steps)].tolist()
        for step, row, ok in zip(self.steps, values, oks, strict=True):
            alive = [i for i in self.alive if self.hists[i].observe(step, row[i])]
            if alive != [i for i in self.alive if ok[i]]:
                raise RuntimeError(f"step {step}: the device and the host disagree on which members diverged")
            lrs = self.lr_values(step)
            for i in alive:
                self.hists[i].losses.append(row[i])
                self.hists[i].lrs.append(lrs[i])
            self.alive = alive
        self.steps = []
        return self.alive


class BatchesAhead:
    """Each step's batch, drawn ``ahead`` steps at a time by ``draw()`` (tokens [K, B, T] and a mask or None, on the
    CPU), their ids checked against ``vocab`` there, and moved to ``device`` in one copy: the same batches, in the
    same order, as drawing one per step."""

    def __init__(
        self, draw: Callable[[], tuple], steps: Count, ahead: Count, device: torch.device, vocab: Count | None = None
    ):
        self.draw, self.left, self.ahead = draw, steps, ahead
        self.device, self.vocab = device, vocab
        self.queue: list[tuple] = []

    def _fill(self) -> None:
        drawn = [self.draw() for _ in range(min(self.ahead, self.left))]
        self.left -= len(drawn)
        tokens = torch.stack([t for t, _ in drawn])  # [S, K, B, T]
        check_tokens(tokens, self.vocab)  # here on the CPU: the device's forward takes them as checked
        masks = torch.stack([m for _, m in drawn]) if drawn[0][1] is not None else None
        if self.device.type == "cuda":  # one transfer from pinned memory, queued behind the running step
            tokens = tokens.pin_memory().to(self.device, non_blocking=True)
            masks = masks.pin_memory().to(self.device, non_blocking=True) if masks is not None else None
        else:
            tokens = tokens.to(self.device)
            masks = masks.to(self.device) if masks is not None else None
        self.queue = [(tokens[s], None if masks is None else masks[s]) for s in range(tokens.shape[0])][::-1]

    def next(self) -> tuple:
        """The next step's tokens [K, B, T] and mask [K, B, T] (or None)."""
        if not self.queue:
            if self.left == 0:
                raise RuntimeError("every planned step's batch was already taken")
            self._fill()
        return self.queue.pop()


def drawn_batches(tasks, cfgs, gens, objective) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Each member's batch from its own stream, in the reference's order (tokens, then the mask), on the CPU:
    tokens [K, B, T] and, for :class:`Masked`, the mask [K, B, T]. Members whose generators are in the
    same state, with the same task and batch shape, would draw the same batch (members of one seed):
    it is drawn once and the others' generators are moved to where the drawing one ends (sampling a
    small batch costs more than a block at small depth)."""
    groups: dict[tuple, list[int]] = {}
    for k, (task, cfg, gen) in enumerate(zip(tasks, cfgs, gens, strict=True)):
        groups.setdefault((id(task), cfg.batch_size, cfg.seq_len, gen.get_state().numpy().tobytes()), []).append(k)
    drawn: list = [None] * len(gens)
    for first, *rest in groups.values():
        task, cfg, gen = tasks[first], cfgs[first], gens[first]
        tokens = task.sample(cfg.batch_size, cfg.seq_len, gen)
        mask = objective.mask(cfg.batch_size, cfg.seq_len, gen) if isinstance(objective, Masked) else None
        state = gen.get_state()
        for k in (first, *rest):
            drawn[k] = tokens, mask
            if k != first:
                gens[k].set_state(state)
    tokens = torch.stack([t for t, _ in drawn])
    return tokens, (torch.stack([m for _, m in drawn]) if isinstance(objective, Masked) else None)


def member_batches(stack: Stack, tasks, cfgs, gens, objective) -> tuple[torch.Tensor, torch.Tensor | None]:
    """:func:`drawn_batches` on the stack's device: tokens [K, B, T] and the mask [K, B, T] (or None)."""
    device = stack.embed.device
    tokens, mask = drawn_batches(tasks, cfgs, gens, objective)
    return tokens.to(device), (mask.to(device) if mask is not None else None)


def member_losses(stack: Stack, objective, tokens: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """[K] losses of the objective on each member's batch."""
    if isinstance(objective, Masked):
        return stack.masked_losses(tokens, mask)
    return stack.next_token_losses(tokens)


# "Fraction learned" is read on a fixed held-out sample, not on the last training batches (issue 44): a run's
# ``held_out`` sequences of its length, drawn from its task by generator(HELD_OUT_SEED) (no training stream or probe
# batch starts there), the same sample for every run of that task. Each predicted position counts the model's
# cross-entropy against the language's true distribution of that token given the rest, the expectation over the
# token that the sampled loss estimates: an unbiased estimate of the model's loss with the noise of the contexts
# only. With 256 sequences its standard error is under 0.02 of the plateau–floor gap on the book's languages
# (tests/core/test_train_data.py checks it on a trained run; the pages print the largest one).
FRACTION_READ = "fraction of the way from the plateau to the floor on the held-out sample"  # verdicts' reasons
HELD_OUT_SEED = 2**40
HELD_OUT_CHUNK = 64  # sequences per forward pass


def held_out_sample(task: MarkovLanguage, sequences: Count, seq_len: Count, objective) -> tuple:
    """The task's held-out sample: tokens [S, T] and, for :class:`Masked`, the hidden positions [S, T] (None
    otherwise), S = ``sequences``, drawn by generator(HELD_OUT_SEED): the same for every run of the task."""
    check_allocation(2 * sequences * seq_len, {"sequences": sequences, "seq_len": seq_len}, bytes_each=8)
    gen = generator(HELD_OUT_SEED)
    tokens = task.sample(sequences, seq_len, gen)
    return tokens, (objective.mask(sequences, seq_len, gen) if isinstance(objective, Masked) else None)


@torch.no_grad()
def held_out_losses(
    stack: Stack, tasks, sequences: Count, seq_len: Count, objective, chunk: Count = HELD_OUT_CHUNK
) -> list[tuple[float, float]]:
    """Per member: the expected loss on its task's held-out sample (:func:`held_out_sample`) and its standard
    error, the ratio estimator's over the sample's sequences: L = Σ_i s_i / Σ_i c_i (s_i the sequence's summed
    expected cross-entropy, c_i its predicted positions), SE² = Σ_i (s_i − L c_i)² / (S (S − 1) c̄²).
    ``chunk``: sequences per forward pass; ``objective`` None: :class:`NextToken`."""
    objective = objective if objective is not None else NextToken()
    device = stack.embed.device
    samples: dict[int, tuple] = {}
    for task in tasks:
        samples.setdefault(id(task), held_out_sample(task, sequences, seq_len, objective))
    tokens = torch.stack([samples[id(t)][0] for t in tasks]).to(device)  # [K, S, T]
    mask = torch.stack([samples[id(t)][1] for t in tasks]).to(device) if isinstance(objective, Masked) else None
    truth = torch.stack([t.transition.float() for t in tasks]).to(device)  # [K, V, V]
    sums, counts = [], []
    for start in range(0, sequences, chunk):
        part = slice(start, start + chunk)
        s, c = objective.expected_losses(stack, tokens[:, part], None if mask is None else mask[:, part], truth)
        sums.append(s.double())
        counts.append(c.double())
    s, c = torch.cat(sums, dim=1), torch.cat(counts, dim=1)  # [K, S]
    loss = s.sum(dim=1) / c.sum(dim=1)  # [K]
    spread = (s - loss[:, None] * c).pow(2).sum(dim=1) / max(sequences * (sequences - 1), 1)
    return list(zip(loss.tolist(), (spread.sqrt() / c.mean(dim=1)).tolist(), strict=True))


def train_ensemble(
    stack: Stack,
    tasks,
    cfgs: TrainConfig | Sequence[TrainConfig],
    *,
    objective=None,
    trackers: Sequence = (),
    trainable: Collection[str] | None = None,
    progress: bool = False,
    read_every: Count | None = None,
) -> list[History]:
    """Train every member of ``stack`` for ``steps`` steps; one History per member.

    ``tasks``: one task for all members or one per member. ``cfgs``: one TrainConfig per member (or
    one for all, with per-member seeds taken from the stack). ``objective``: :class:`NextToken`
    (default) or :class:`Masked`. ``trackers``: from :mod:`deepnotes.core.measure`.
    ``trainable``: the parameter names to update (default all). ``read_every``: steps between read-backs of the
    losses (default: :data:`READ_EVERY` on a GPU, every step on the CPU; :func:`train_stack`).
    """
    objective = objective if objective is not None else NextToken()
    if not isinstance(objective, (NextToken, Masked)):
        raise TypeError(f"objective must be NextToken() or Masked(prob), got {objective!r}")
    if isinstance(trainable, (str, bytes)):  # a string is a collection of its letters: 'qkv_w' is not q, k, v, _, w
        raise TypeError(
            f"trainable must be a collection of parameter names, such as {{{trainable!r}}}, got {trainable!r}"
        )
    first = cfgs if isinstance(cfgs, TrainConfig) else list(cfgs)[0]
    check_fits(stack.cfg, stack.n_members, first, where=stack.embed.device)  # the gradients, moments, activations
    notify_observers(stack.cfgs[0], stack.n_members, first, objective)
    return train_stack(stack, tasks, cfgs, objective, trackers, trainable, progress, read_every)


def _checked_members(stack: Stack, tasks, cfgs, objective) -> tuple[list[TrainConfig], list[MarkovLanguage]]:
    """One train config and one task per member, each checked against the stack and the objective (one config for
    all: each member's seed from the stack)."""
    k = stack.n_members
    if isinstance(cfgs, TrainConfig):
        cfgs = [cfgs] if k == 1 else [replace(cfgs, seed=s) for s in stack.seeds]
    cfgs = check_members(stack, cfgs)  # the memory was checked by the caller (train_ensemble, train_many)
    tasks = member_tasks(tasks, k)
    for task, cfg in zip(tasks, cfgs, strict=True):
        check_setup(stack, task, cfg, objective)
    return cfgs, tasks


def _read_every(stack: Stack) -> int:
    """The loop's default steps between read-backs on the stack's device: READ_EVERY on a GPU, READ_EVERY_CPU."""
    return READ_EVERY if stack.embed.device.type == "cuda" else READ_EVERY_CPU


def needs_host(tracker) -> Callable[[int], bool] | None:
    """A tracker's ``needs_host(step)``: whether at ``step`` it reads the members' Histories or which are alive
    (the loop then reads the losses back first, a device sync). None for a tracker that does not say: it is given
    them every step (every step syncs)."""
    return getattr(tracker, "needs_host", None)


def train_stack(
    stack: Stack,
    tasks,
    cfgs,
    objective,
    trackers: Sequence,
    trainable: Collection[str] | None,
    progress: bool,
    read_every: Count | None = None,
) -> list[History]:
    """The loop: the losses judged on the device and backpropagated where members still train (:class:`LossRecord`),
    read back every ``read_every`` steps (default: :data:`READ_EVERY` on a GPU, every step on the CPU) or where a
    tracker needs the Histories (:func:`needs_host`); on a GPU the steps after the warmups replay one captured
    step (:class:`CapturedStep`)."""
    k = stack.n_members
    cfgs, tasks = _checked_members(stack, tasks, cfgs, objective)
    gens = [generator(c.seed + 1) for c in cfgs]
    opt = EnsembleOptimizer(stack, cfgs, trainable)
    hists = [History(floor=objective.floor(t), unigram=t.unigram_entropy()) for t in tasks]
    hooks = _started_hooks(trackers, stack, tasks, cfgs)
    steps = cfgs[0].steps
    rows = 1 if any(needs_host(t) is None for t in trackers) else given(read_every, _read_every(stack))
    record = LossRecord(hists, opt.lr_values, BLOWUP_FACTOR, min(rows, steps))
    vocab = stack.embed.shape[1]
    batches = BatchesAhead(
        lambda: drawn_batches(tasks, cfgs, gens, objective), steps, record.rows, stack.embed.device, vocab
    )

    def device_step(tokens: torch.Tensor, mask: torch.Tensor | None, step: int) -> None:
        """The step past the loss's judging: backward (Adam in it where no one reads the gradients), the update."""
        loss = record.judged(member_losses(stack, objective, tokens, mask), first=step == 0)
        opt.zero_grad()
        if not hooks["after_backward"]:
            opt.arm(step)
        loss.sum().backward()
        opt.step(step)

    captured = CapturedStep.planned(stack, cfgs, trackers, device_step, opt)
    started = time.perf_counter()
    with ids_checked_on_host():
        for step in _bar(range(steps), progress):
            host = any(needs_host(t) is None or needs_host(t)(step) for t in trackers)  # one reads the Histories now
            if host or record.due():
                record.read_back()
            if not record.alive:
                break
            if captured is not None and captured.takes(step):
                captured.run(step, *batches.next())
                record.keep(step)
            elif not _hooked_step(stack, objective, opt, record, hooks, step, batches, host):
                break
    alive = record.read_back()
    seconds = time.perf_counter() - started
    _read_held_out(stack, tasks, cfgs[0], objective, hists, alive)
    for h in hists:
        h.seconds, h.ensemble_size = seconds, k
    return hists


def train_group(
    model_cfgs, train_cfgs, tasks, inits, objective, trackers, trainable, frozen, device, dtype, progress, check_memory
) -> list[History]:
    """One ensemble of :func:`~deepnotes.core.ensembles.train_many` (the job a worker runs): build its Stack,
    start each member, train it, return its Histories. Its memory is checked once: here where ``check_memory`` (on
    an executor's machine), else by train_many before any ensemble started."""
    if check_memory:
        check_fits(model_cfgs[0], len(model_cfgs), train_cfgs[0], where=device)
    stack = Stack(model_cfgs, seeds=[c.seed for c in train_cfgs], device=device, dtype=dtype, memory_checked=True)
    with torch.no_grad():
        for k, init in enumerate(inits):
            if init is not None:
                init(stack, k)
    names = [n for n in (stack.slots if trainable is None else trainable) if n in stack.slots and n not in frozen]
    return train_stack(stack, tasks, train_cfgs, objective, trackers(), names, progress)


def _started_hooks(trackers: Sequence, stack: Stack, tasks, cfgs) -> dict[str, list]:
    """The trackers' hooks by name (start, before_step, after_backward, after_step), the start hooks called."""
    hooks = {
        name: [getattr(t, name) for t in trackers if hasattr(t, name)]
        for name in ("start", "before_step", "after_backward", "after_step")
    }
    for hook in hooks["start"]:
        hook(stack, tasks, cfgs)
    return hooks


def _hooked_step(stack, objective, opt, record, hooks, step: int, batches: BatchesAhead, host: bool) -> bool:
    """One step with the trackers' hooks between its parts; False where a read-back finds no member alive."""
    hists = record.hists
    for hook in hooks["before_step"]:
        hook(stack, step, hists, record.alive)
    tokens, mask = batches.next()
    loss = record.judge(step, member_losses(stack, objective, tokens, mask))  # [K], 0 where diverged
    if host and not record.read_back():  # the hooks below see this step's survivors, as they always did
        return False
    opt.zero_grad()
    if not hooks["after_backward"]:  # no one reads the gradients: step in the backward
        opt.arm(step)
    loss.sum().backward()
    for hook in hooks["after_backward"]:
        hook(stack, step, hists, record.alive)
    opt.step(step)
    for hook in hooks["after_step"]:
        hook(stack, step, hists, record.alive)
    return True


# ---- the captured step ------------------------------------------------------------------------------------------
# On a GPU a step of a thousand blocks is some sixty thousand small kernels (blocks.block_form's "gpu" form), each
# launched by the CPU; captured once as a CUDA graph (torch.cuda.graph), the step is replayed by one call. What a
# graph holds must not change from step to step: the batch is copied into the graph's own input tensors, the
# learning rates are the optimizer's tensor (constant once every member's warmup is over), judging divergence and
# counting Adam's steps are device operations (LossRecord.judged, the fused Adam's step tensors), and the host's
# bookkeeping (LossRecord.keep, the optimizer's counters) runs around each replay. Steps with trackers (their
# hooks run host code between the step's parts) and LAMB's (its bias corrections are numbers of the step) are not
# captured. tools/gpu_check.py compares captured, uncaptured and CPU runs on a GPU.

CAPTURE_SWITCH = "DEEPNOTES_CAPTURE"  # "0": never; "1" (default): on CUDA; "emulate": the same steps without a graph
CAPTURE_WARMUP = 3  # steps run on a side stream before the capture (PyTorch's rule for capturing autograd)


class CapturedStep:
    """Steps ``first`` on of one ensemble's loop: :data:`CAPTURE_WARMUP` of them run as they are (on a side stream
    on CUDA), the next is captured as a CUDA graph and run by a replay, and so is every later one, its batch copied
    into the graph's inputs first. ``mode`` ``emulate`` runs the same code with no graph: each replay is
    ``device_step`` called on the input tensors (the tests' way to check on a CPU everything but the graph)."""

    def __init__(self, device_step: Callable, opt: EnsembleOptimizer, first: NonNegativeCount, mode: str):
        if mode not in ("graph", "emulate"):
            raise ValueError(f"mode must be 'graph' or 'emulate', got {mode!r}")
        self.device_step, self.opt, self.first, self.mode = device_step, opt, first, mode
        self.inputs: tuple | None = None
        self.graph = self.advance = None

    @classmethod
    def planned(cls, stack: Stack, cfgs: Sequence[TrainConfig], trackers: Sequence, device_step, opt):
        """The captured step of this loop, or None where its steps run uncaptured: on a CPU (one warning where
        ``$DEEPNOTES_CAPTURE=1`` asked for a graph), with trackers, with LAMB, or ``$DEEPNOTES_CAPTURE=0``. The
        first step it takes is the first whose rates are every member's peak rate (after the longest warmup)."""
        switch = os.environ.get(CAPTURE_SWITCH, "")
        if switch == "0" or trackers or cfgs[0].optimizer == "lamb":
            return None
        first = max(max(c.warmup_steps for c in cfgs), 1)  # step 0 sets the blow-up limits: never captured
        if switch == "emulate":
            return cls(device_step, opt, first, "emulate")
        if stack.embed.device.type != "cuda":
            if switch == "1":
                warnings.warn(
                    f"{CAPTURE_SWITCH}=1: a CUDA graph needs a CUDA device, and this stack is on "
                    f"{stack.embed.device}: its steps run uncaptured",
                    stacklevel=3,
                )
            return None
        return cls(device_step, opt, first, "graph")

    def takes(self, step: int) -> bool:
        """Whether step ``step`` is one of this captured step's."""
        return step >= self.first

    def run(self, step: int, tokens: torch.Tensor, mask: torch.Tensor | None) -> None:
        """Step ``step`` on tokens [K, B, T] (and the mask): a warmup step, the capture, or a replay."""
        if self.inputs is None:
            if step < self.first + CAPTURE_WARMUP:
                self._warm(step, tokens, mask)
                return
            self.inputs = (tokens.clone(), None if mask is None else mask.clone())
            if self.mode == "graph":
                self._capture(step)
                self.graph.replay()  # the capture ran the host's part of this step, and no kernel
                return
        else:
            self.inputs[0].copy_(tokens)
            if mask is not None:
                self.inputs[1].copy_(mask)
        if self.mode == "emulate":
            self.device_step(*self.inputs, step)
        else:
            self.graph.replay()
            self.opt.replayed(*self.advance)

    def _warm(self, step: int, tokens, mask) -> None:
        if self.mode == "emulate":
            self.device_step(tokens, mask, step)
            return
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            self.device_step(tokens, mask, step)
        torch.cuda.current_stream().wait_stream(side)

    def _capture(self, step: int) -> None:
        self.opt.zero_grad()  # the gradients are the graph's own tensors from here on
        before = self.opt.counters()
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.device_step(*self.inputs, step)
        self.advance = before, self.opt.counters()


def _read_held_out(stack: Stack, tasks, cfg: TrainConfig, objective, hists: list[History], alive: list[int]) -> None:
    """Each surviving member's loss on its task's held-out sample (:func:`held_out_losses`), into its History."""
    if not alive or cfg.held_out <= 1:
        return
    for i, (loss, se) in enumerate(held_out_losses(stack, tasks, cfg.held_out, cfg.seq_len, objective)):
        if i in alive:
            hists[i].held_out_loss, hists[i].held_out_se = loss, se
            hists[i].held_out_sequences = cfg.held_out


def train(
    model_cfg: ModelConfig,
    cfg: TrainConfig,
    task: MarkovLanguage | None = None,
    *,
    objective=None,
    trackers: Sequence = (),
    trainable: Collection[str] | None = None,
    device=None,
    progress: bool = False,
) -> History:
    """One run: the model of ``model_cfg`` initialized from ``cfg.seed``, trained on ``task`` (default:
    the Markov language of the model's vocabulary, seeded by ``cfg.seed``) as a one-member ensemble."""
    if not isinstance(model_cfg, ModelConfig):
        raise TypeError(f"model_cfg must be a ModelConfig, got {type(model_cfg).__name__}")
    if not isinstance(cfg, TrainConfig):
        raise TypeError(f"cfg must be a TrainConfig, got {type(cfg).__name__}")
    check_slot_names("trainable", trainable, empty_ok=False)
    check_fits(model_cfg, 1, cfg, where=device or default_device())  # the run's one memory check
    task = task if task is not None else MarkovLanguage(model_cfg.vocab_size, seed=cfg.seed)
    stack = Stack([model_cfg], seeds=[cfg.seed], device=device or default_device(), memory_checked=True)
    objective = objective if objective is not None else NextToken()
    notify_observers(model_cfg, 1, cfg, objective)
    return train_stack(stack, task, [cfg], objective, trackers, trainable, progress)[0]
