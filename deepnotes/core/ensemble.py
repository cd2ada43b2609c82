"""Training a :class:`~deepnotes.core.engine.Stack`: K members in one pass and one optimizer step.

Member k is trained exactly as :func:`deepnotes.core.train.train` would train it alone with
``cfgs[k]``: its own data stream (``generator(seed + 1)``), its own task, its own learning rate and
warmup; one :class:`~deepnotes.core.train.History` per member. The members' losses are summed before
``backward``; their parameters are disjoint slices, so each slice gets its own member's gradient.

The optimizers are the reference's (:mod:`deepnotes.core.optim`) written over stacked tensors with a
learning rate per member, η_k(t) = η_k · min(1, (t+1)/T_k):

    SGD   θ ← θ − η_k g
    Adam  m ← β₁m + (1−β₁)g,  v ← β₂v + (1−β₂)g²,  θ ← θ − η_k · m̂ / (√v̂ + ε)     (ε = 1e-8;
          PyTorch's fused kernel)
    LAMB  r = m̂ / (√v̂ + ε),  θ ← θ − η_k · (‖θ‖/‖r‖) · r    (norms per reference tensor, ε = 1e-6)

A member whose loss turns NaN/inf is recorded as diverged at that step and stops recording; the
others go on (its slice can hold NaN: no operation mixes members). Nothing raises.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import replace

import torch

from deepnotes.core import fused, scaling
from deepnotes.core.config import ModelConfig, TrainConfig
from deepnotes.core.work_log import log_train_runs
from deepnotes.core.data import MarkovLanguage
from deepnotes.core.engine import Stack, graph_config
from deepnotes.core.engine_reference import load_reference, write_reference
from deepnotes.core.ensemble_trackers import from_reference
from deepnotes.core.models import TransformerLM
from deepnotes.core.rng import generator
from deepnotes.core.train import History, Masked, NextToken, check_setup
from deepnotes.core.workers import run_jobs
from deepnotes.show.progress import progress as progress_bar

SHARED_FIELDS = ("optimizer", "steps", "batch_size", "seq_len", "betas")   # one graph, one loop
ADAM_EPS, LAMB_EPS = 1e-8, 1e-6


def check_members(stack: Stack, cfgs: Sequence[TrainConfig]) -> list[TrainConfig]:
    """One TrainConfig per member, agreeing on :data:`SHARED_FIELDS` (lr, warmup, seed may differ)."""
    cfgs = list(cfgs)
    for c in cfgs:
        if not isinstance(c, TrainConfig):
            raise TypeError(f"train configs must be TrainConfig, got {type(c).__name__}")
    if len(cfgs) != stack.n_members:
        raise ValueError(f"{len(cfgs)} train configs for a stack of {stack.n_members} members")
    for name in SHARED_FIELDS:
        values = {getattr(c, name) for c in cfgs}
        if len(values) > 1:
            raise ValueError(f"members must share {name} to train as one pass, got {sorted(map(str, values))}")
    return cfgs


class EnsembleOptimizer:
    """SGD, Adam or LAMB over a stack's tensors, one learning rate per member."""

    def __init__(self, stack: Stack, cfgs: Sequence[TrainConfig], trainable: Collection[str] | None = None):
        cfgs = check_members(stack, cfgs)
        names = list(stack.slots) if trainable is None else list(trainable)
        unknown = [n for n in names if n not in stack.slots]
        if unknown:
            raise ValueError(f"unknown parameters {unknown}; the stack has {list(stack.slots)}")
        self.stack, self.names = stack, names
        self.kind, (self.b1, self.b2) = cfgs[0].optimizer, cfgs[0].betas
        p0 = next(stack.parameters())
        self.peaks = [c.lr for c in cfgs]
        self.warmups = [c.warmup_steps for c in cfgs]
        self.t = 0
        self.state = {n: (torch.zeros_like(getattr(stack, n)), torch.zeros_like(getattr(stack, n)))
                      for n in names} if self.kind != "sgd" else {}
        self.steps = {n: torch.zeros((), dtype=p0.dtype, device=p0.device) for n in names}   # the fused kernel's t
        self.counts = dict.fromkeys(names, 0)                           # the same t, read without a device sync
        self.buffers: dict[str, torch.Tensor] = {}
        self.pending: fused.AdamStep | None = None

    def lr_values(self, step: int) -> list[float]:
        """η_k(step) = η_k · min(1, (step+1)/T_k), as Python floats (what each History records)."""
        return [lr * scaling.linear_warmup_factor(step, w) for lr, w in zip(self.peaks, self.warmups)]

    def lrs(self, step: int) -> torch.Tensor:
        """η_k(step): [K], in the parameters' dtype."""
        p0 = next(self.stack.parameters())
        return torch.tensor(self.lr_values(step), dtype=p0.dtype, device=p0.device)

    def _per_member(self, values: torch.Tensor, name: str) -> torch.Tensor:
        """[K] values shaped to broadcast over parameter ``name``."""
        p, axis = getattr(self.stack, name), self.stack.slots[name].member_axis
        shape = [1] * p.dim()
        shape[axis] = -1
        return values.view(shape)

    def arm(self, step: int) -> None:
        """Offer step ``step``'s Adam update to the compiled backward pass (:class:`deepnotes.core.fused.AdamStep`):
        the block parameters it steps while computing their gradients get no gradient, and :meth:`step`
        counts them as stepped. Only Adam, only parameters without a gradient yet (one to add to must
        stay), and only before a backward pass whose gradients nothing else reads."""
        self.disarm()
        if self.kind != "adam":
            return
        states = {n: (getattr(self.stack, n), *self.state[n]) for n in self.names
                  if getattr(self.stack, n).grad is None and self.counts[n] == self.t}
        self.pending = fused.AdamStep(states, self.lr_values(step), (self.b1, self.b2), ADAM_EPS, self.t + 1)
        for p, _, _ in states.values():
            p._adam_step = self.pending

    def disarm(self) -> None:
        """Take back an offer of :meth:`arm` (after the step, or unused)."""
        if self.pending is not None:
            for p, _, _ in self.pending.states.values():
                del p._adam_step
        self.pending = None

    @torch.no_grad()
    def step(self, step: int) -> None:
        values = self.lr_values(step)
        lrs = self.lrs(step)
        uniform = all(v == values[0] for v in values)                   # read from Python: no device sync
        done = self.pending.done if self.pending is not None else set()
        self.disarm()
        self.t += 1
        for name in self.names:
            p = getattr(self.stack, name)
            if name in done:                                            # stepped in the backward pass
                self._count(name)
                continue
            if p.grad is None:
                continue
            g, lr = p.grad, self._per_member(lrs, name)
            if self.kind == "sgd":
                p.addcmul_(g, lr, value=-1.0)
            elif self.kind == "adam":
                self._adam(name, p, g, lr, values, uniform)
            else:
                self._lamb(name, p, g, lr)

    def _adam(self, name: str, p: torch.Tensor, g: torch.Tensor, lr: torch.Tensor, values: list[float],
              uniform: bool) -> None:
        """One Adam step in one pass over θ, g, m, v: where every member has the same η, PyTorch's fused
        kernel straight onto θ (9 ms against 104 ms for the elementwise ops over 13.6 M parameters on a
        2-core CPU); where members have their own η (a warmup on some), the compiled own-rate step
        (:func:`deepnotes.core.fused.adam`), else the fused kernel onto a zeroed buffer u at η = 1
        (u = −m̂/(√v̂ + ε)) and then θ ← θ + η_k·u (11 passes over memory instead of 7)."""
        m, v = self.state[name]
        step_t = self._count(name)
        if not uniform and fused.adam_usable(p, g, m, v):   # members' own rates: one compiled pass
            fused.adam(p, g, m, v, values, self.stack.slots[name].member_axis, (self.b1, self.b2), ADAM_EPS,
                       self.counts[name])
            return
        shared_lr = values[0] if uniform else None
        target = p if shared_lr is not None else self._buffer(name).zero_()
        torch._fused_adam_([target], [g], [m], [v], [], [step_t], lr=shared_lr if shared_lr is not None else 1.0,
                           beta1=self.b1, beta2=self.b2, weight_decay=0.0, eps=ADAM_EPS, amsgrad=False,
                           maximize=False)
        if shared_lr is None:
            p.addcmul_(target, lr)

    def _count(self, name: str) -> torch.Tensor:
        """One more step of ``name``: t as the fused kernel's tensor (it reads t, it does not count it)."""
        self.counts[name] += 1
        return self.steps[name].add_(1)

    def _buffer(self, name: str) -> torch.Tensor:
        if name not in self.buffers:
            self.buffers[name] = torch.zeros_like(getattr(self.stack, name))
        return self.buffers[name]

    def _lamb(self, name: str, p: torch.Tensor, g: torch.Tensor, lr: torch.Tensor) -> None:
        m, v = self.state[name]
        m.lerp_(g, 1 - self.b1)
        v.mul_(self.b2).addcmul_(g, g, value=1 - self.b2)
        bc1, bc2 = 1 - self.b1 ** self.t, 1 - self.b2 ** self.t
        r = (m / bc1) / (v / bc2).sqrt_().add_(LAMB_EPS)
        split = self._split_shape(p, self.stack.slots[name].parts)
        p.view(split).addcmul_(r.view(split) * self._trust(p.view(split), r.view(split)),
                               lr.view(*lr.shape, 1), value=-1.0)

    @staticmethod
    def _split_shape(p: torch.Tensor, parts: int) -> tuple[int, ...]:
        """[..., r, c] → [..., r, parts, c/parts]: one reference tensor per index of the parts axis."""
        return (*p.shape[:-1], parts, p.shape[-1] // parts)

    @staticmethod
    def _trust(p: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
        """‖θ‖/‖r‖ per reference tensor (norms over dims −3 and −1 of the split view; 1 where either
        norm is 0): [..., 1, parts, 1]."""
        w_norm = torch.linalg.vector_norm(p, dim=(-3, -1), keepdim=True)
        r_norm = torch.linalg.vector_norm(r, dim=(-3, -1), keepdim=True)
        ok = (w_norm > 0) & (r_norm > 0)
        return torch.where(ok, w_norm / torch.where(ok, r_norm, torch.ones_like(r_norm)), torch.ones_like(w_norm))

    def zero_grad(self) -> None:
        for p in self.stack.parameters():
            p.grad = None


def _tasks(tasks, k: int) -> list[MarkovLanguage]:
    tasks = [tasks] * k if isinstance(tasks, MarkovLanguage) else list(tasks)
    if len(tasks) != k:
        raise ValueError(f"{len(tasks)} tasks for a stack of {k} members")
    return tasks


def member_batches(stack: Stack, tasks, cfgs, gens, objective) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Each member's batch from its own stream, in the reference's order (tokens, then the mask):
    tokens [K, B, T] and, for :class:`Masked`, the mask [K, B, T]. Members whose generators are in the
    same state, with the same task and batch shape, would draw the same batch (members of one seed):
    it is drawn once and the others' generators are moved to where the drawing one ends (sampling a
    small batch costs more than a block at small depth)."""
    device = stack.embed.device
    groups: dict[tuple, list[int]] = {}
    for k, (task, cfg, gen) in enumerate(zip(tasks, cfgs, gens)):
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
    tokens = torch.stack([t for t, _ in drawn]).to(device)
    return tokens, (torch.stack([m for _, m in drawn]).to(device) if isinstance(objective, Masked) else None)


def member_losses(stack: Stack, objective, tokens: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """[K] losses of the objective on each member's batch."""
    if isinstance(objective, Masked):
        return stack.masked_losses(tokens, mask)
    return stack.next_token_losses(tokens)


def train_ensemble(stack: Stack, tasks, cfgs: TrainConfig | Sequence[TrainConfig], *, objective=None,
                   trackers: Sequence = (), trainable: Collection[str] | None = None,
                   progress: bool = False) -> list[History]:
    """Train every member of ``stack`` for ``steps`` steps; one History per member.

    ``tasks``: one task for all members or one per member. ``cfgs``: one TrainConfig per member (or
    one for all, with per-member seeds taken from the stack). ``objective``: :class:`NextToken`
    (default) or :class:`Masked`. ``trackers``: from :mod:`deepnotes.core.ensemble_trackers`.
    ``trainable``: the parameter names to update (default all).
    """
    objective = objective if objective is not None else NextToken()
    k = stack.n_members
    if isinstance(cfgs, TrainConfig):
        cfgs = [cfgs] if k == 1 else [replace(cfgs, seed=s) for s in stack.seeds]
    cfgs = check_members(stack, cfgs)
    tasks = _tasks(tasks, k)
    for task, cfg in zip(tasks, cfgs):
        check_setup(stack, task, cfg, objective)
    log_train_runs(stack.cfgs[0], k, cfgs[0], objective.prob if isinstance(objective, Masked) else None)
    gens = [generator(c.seed + 1) for c in cfgs]
    opt = EnsembleOptimizer(stack, cfgs, trainable)
    hists = [History(floor=objective.floor(t), unigram=t.unigram_entropy()) for t in tasks]
    hooks = {name: [getattr(t, name) for t in trackers if hasattr(t, name)]
             for name in ("start", "before_step", "after_backward", "after_step")}
    for hook in hooks["start"]:
        hook(stack, tasks, cfgs)
    alive = list(range(k))
    started = time.perf_counter()
    for step in progress_bar(range(cfgs[0].steps), progress):
        for hook in hooks["before_step"]:
            hook(stack, step, hists, alive)
        tokens, mask = member_batches(stack, tasks, cfgs, gens, objective)
        losses = member_losses(stack, objective, tokens, mask)                    # [K]
        values = losses.tolist()
        alive = [i for i in alive if hists[i].observe(step, values[i])]      # drops diverged members
        if not alive:
            break
        opt.zero_grad()
        if not hooks["after_backward"]:                  # no one reads the gradients: step in the backward
            opt.arm(step)
        losses[alive].sum().backward()
        for hook in hooks["after_backward"]:
            hook(stack, step, hists, alive)
        lrs = opt.lr_values(step)
        for i in alive:
            hists[i].losses.append(values[i])
            hists[i].lrs.append(lrs[i])
        opt.step(step)
        for hook in hooks["after_step"]:
            hook(stack, step, hists, alive)
    seconds = time.perf_counter() - started
    for h in hists:
        h.seconds, h.ensemble_size = seconds, k
    return hists


def train_model(model: TransformerLM, task: MarkovLanguage, cfg: TrainConfig, *, objective=None,
                trackers: Sequence = (), trainable: Collection[str] | None = None, frozen: Collection[str] = (),
                progress: bool = False, dtype: torch.dtype | None = None) -> History:
    """:func:`deepnotes.core.train.train` on the engine: ``model``'s weights go into a one-member
    :class:`Stack`, train there, and come back into ``model``. ``trackers``: reference trackers
    (:mod:`deepnotes.core.trackers`), run as their engine counterparts. ``trainable``: parameter
    names to update (default all but ``frozen``; see :data:`deepnotes.core.engine.MATRICES`,
    :data:`~deepnotes.core.engine.GATES`)."""
    ref = next(model.parameters())
    stack = Stack([model.cfg], seeds=[cfg.seed], device=ref.device, dtype=dtype or ref.dtype)
    load_reference(stack, 0, model)
    names = [n for n in (stack.slots if trainable is None else trainable) if n not in frozen]
    hist = train_ensemble(stack, task, [cfg], objective=objective, trainable=names, progress=progress,
                          trackers=[from_reference(t) for t in trackers])[0]
    write_reference(stack, 0, model)
    return hist


def _train_group(model_cfgs, train_cfgs, tasks, objective, trackers, trainable, frozen, device, dtype,
                 progress) -> list[History]:
    """One ensemble of :func:`train_many`: build its Stack, train it, return its Histories."""
    stack = Stack(model_cfgs, seeds=[c.seed for c in train_cfgs], device=device, dtype=dtype)
    names = [n for n in (stack.slots if trainable is None else trainable) if n in stack.slots and n not in frozen]
    return train_ensemble(stack, tasks, train_cfgs, objective=objective, trackers=trackers(), trainable=names,
                          progress=progress)


def ensemble_cost(model_cfg: ModelConfig, train_cfg: TrainConfig, members: int) -> float:
    """A number proportional to an ensemble's run time: a step costs about (one member's dispatch +
    a little per extra member) per block, times the steps."""
    return model_cfg.n_layers * (4 + members) * train_cfg.steps


MEMORY_SHARE = 0.5      # an ensemble on a GPU may take at most this share of the device's memory
STATE_BYTES = 16         # per float32 parameter: the weight, its gradient and Adam's two moments


def member_bytes(model_cfg: ModelConfig, train_cfg: TrainConfig) -> int:
    """About the memory one member takes in training: STATE_BYTES per block parameter
    (4d² + 2·d·d_ff weights per block) plus the float32 activations kept for the backward
    (B·T tokens × (12d + 2·d_ff) per block, and the B·heads·T² attention weights)."""
    d, f, n = model_cfg.d_model, model_cfg.d_ff, model_cfg.n_layers
    tokens = train_cfg.batch_size * train_cfg.seq_len
    per_block = STATE_BYTES * (4 * d * d + 2 * d * f) + 4 * (tokens * (12 * d + 2 * f)
                                                           + train_cfg.batch_size * model_cfg.n_heads * train_cfg.seq_len ** 2)
    return n * per_block


def member_limit(model_cfg: ModelConfig, train_cfg: TrainConfig, device) -> int | None:
    """How many members of this shape one ensemble may hold on ``device``: MEMORY_SHARE of a GPU's
    memory over :func:`member_bytes` (at least 1); None (no limit) on the CPU, whose ensembles the
    chapters' budgets size."""
    if device is None or torch.device(device).type != "cuda":
        return None
    total = torch.cuda.get_device_properties(torch.device(device)).total_memory
    return max(1, int(MEMORY_SHARE * total // member_bytes(model_cfg, train_cfg)))


def ensemble_groups(model_cfgs: Sequence[ModelConfig], train_cfgs: Sequence[TrainConfig],
                    workers: int = 1, limit=None) -> list[list[int]]:
    """How :func:`train_many` splits runs into ensembles: the indices of the runs that share a graph
    (:func:`~deepnotes.core.engine.graph_config`) and a loop (:data:`SHARED_FIELDS`), in first-seen
    order. With ``workers`` > 1, an ensemble that would keep one worker busy longer than an even
    share of the whole (by :func:`ensemble_cost`) is halved until none does, so that the cores finish
    together: the chapter of 1000 layers trains its 17 runs at N = 1000 as two ensembles on 2 cores.
    ``limit`` (a function of a member's model and train configs, as :func:`member_limit`): the most
    members an ensemble may hold; a larger group is cut into consecutive pieces of that size first."""
    groups: dict[tuple, list[int]] = {}
    for i, (mc, tc) in enumerate(zip(model_cfgs, train_cfgs)):
        groups.setdefault((graph_config(mc), *(getattr(tc, f) for f in SHARED_FIELDS)), []).append(i)
    out = []
    for g in groups.values():
        most = (limit(model_cfgs[g[0]], train_cfgs[g[0]]) if limit else None) or len(g)
        out += [g[k:k + most] for k in range(0, len(g), most)]
    cost = lambda g: ensemble_cost(model_cfgs[g[0]], train_cfgs[g[0]], len(g))     # noqa: E731
    while workers > 1:
        share = sum(map(cost, out)) / workers
        big = max((g for g in out if len(g) > 1), key=cost, default=None)
        if big is None or cost(big) <= share:
            return out
        at = out.index(big)
        out[at:at + 1] = [big[:(len(big) + 1) // 2], big[(len(big) + 1) // 2:]]
    return out


def train_many(model_cfgs: Sequence[ModelConfig], train_cfgs: Sequence[TrainConfig], tasks, *, objective=None,
               trackers: Callable[[], Sequence] = tuple, trainable: Collection[str] | None = None,
               frozen: Collection[str] = (), progress: bool = False, device=None,
               dtype: torch.dtype | None = None, workers: int = 1) -> list[History]:
    """Train one model per (model config, train config, task), in as few ensembles as possible:
    runs that share a graph (:func:`~deepnotes.core.engine.graph_config`: every norm style) and a loop
    (:data:`SHARED_FIELDS`) train together as members of one :class:`Stack` (:func:`ensemble_groups`,
    which halves an ensemble that would leave the other workers idle), each initialized from
    its train config's seed. ``trackers``: a factory of fresh engine trackers for each ensemble.
    ``workers`` > 1 trains the ensembles in that many one-thread
    processes (:func:`deepnotes.core.workers.run_jobs`; ``trackers``, ``objective`` and the tasks
    must then be picklable, and results equal the serial ones up to the rounding of another thread
    count). Returns the Histories in the order of the configs."""
    model_cfgs, train_cfgs = list(model_cfgs), list(train_cfgs)
    if len(model_cfgs) != len(train_cfgs):
        raise ValueError(f"{len(model_cfgs)} model configs for {len(train_cfgs)} train configs")
    tasks = _tasks(tasks, len(model_cfgs))
    members = ensemble_groups(model_cfgs, train_cfgs, workers, limit=lambda m, t: member_limit(m, t, device))
    single = len(members) == 1
    jobs = [([model_cfgs[i] for i in m], [train_cfgs[i] for i in m], [tasks[i] for i in m], objective, trackers,
             trainable, frozen, device, dtype, progress and single) for m in members]
    costs = [ensemble_cost(model_cfgs[m[0]], train_cfgs[m[0]], len(m)) for m in members]
    results = run_jobs(_train_group, jobs, workers, costs, progress=progress and not single)
    out: list[History | None] = [None] * len(model_cfgs)
    for m, hists in zip(members, results):
        for i, h in zip(m, hists):
            out[i] = h
    return out
