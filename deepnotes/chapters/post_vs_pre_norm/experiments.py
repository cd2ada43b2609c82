"""Experiments of the chapter "Post-Norm vs Pre-Norm": the residual stream and the gradients at
initialization, per block, training runs with warmup and ReZero variants, and two papers' results
at toy scale (Xiong et al. 2020's norms and gradients at initialization, Liu et al. 2020's output
change under a random perturbation). They measure and return numbers; figures come from
:mod:`deepnotes.chapters.post_vs_pre_norm.figures`.

Per sublayer k the *branch ratio* v_k = E[F_k(x)²]/E[x²] (x the sublayer's input) is measured;
the derivations predict the weight of x_0 in x_l from it:

    post      Π_k (1 + v_k)^{-1/2}          (each LN divides by √(1 + v))
    deepnorm  Π_k α (α² + v_k)^{-1/2}
    pre       (1 + Σ_k v_k)^{-1/2}          (x_0 kept, the stream's second moment grows by v each)
    rezero    1                             (the gates start at 0)
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from deepnotes.chapters.post_vs_pre_norm.budget import sizes
from deepnotes.core import measure
from deepnotes.core.config import Budget, ModelConfig, live_range
from deepnotes.core.config import device as default_device
from deepnotes.core.data import MarkovLanguage, generator, probe_batch
from deepnotes.core.engine import GATES
from deepnotes.core.ensembles import RunContext, RunPlan
from deepnotes.core.measure import block_matrices, every_for, per_block_grad_norms
from deepnotes.core.models import build_model
from deepnotes.core.scaling import predicted_identity_weight
from deepnotes.core.train import History
from deepnotes.core.validate import (
    Count,
    Depth,
    Finite,
    NonNegative,
    NonNegativeCount,
    Positive,
    Real,
    Repeats,
    Seed,
    choice,
    given,
)
from deepnotes.cost.model import StackPasses, TrainRuns, planned_ensembles
from deepnotes.shared import warmup as shared_warmup

STYLES = ("post", "pre", "deepnorm", "rezero")  # the norm styles this chapter compares
OPTIMIZERS = ("adam", "sgd")  # the optimizers of the training comparison


def style_config(norm: str, n_layers: Depth, budget: Budget, beta: Positive | None = None) -> ModelConfig:
    return budget.model_config(n_layers, norm=choice("norm style", norm, STYLES), beta=beta)


@dataclass
class StreamProbe:
    """Per block l = 0..N (index 0 = the embedding output x_0) at initialization."""

    norm: str
    rms: list[float]  # RMS of x_l
    cos_x0: list[float]  # mean over tokens of cos(x_l, x_0)
    predicted_cos: list[float]  # the derivation's weight of x_0, from the measured branch ratios
    branch_ratio: list[float]  # v_k per sublayer (2 per block)
    grad_norms: list[float]  # ‖∂L/∂θ_l‖ per block l = 1..N


def stream_probe(
    norm: str,
    n_layers: Depth,
    budget: Budget,
    beta: Positive | None = None,
    seed: Seed = 0,
    device=None,
) -> StreamProbe:
    """One batch through a freshly initialized stack: stream RMS, cosine to x_0, branch ratios,
    per-block gradient norms of the LM loss."""
    device = device or default_device()
    cfg = style_config(norm, n_layers, budget, beta)
    model = build_model(cfg, seed=seed, device=device)
    tokens = probe_batch(
        MarkovLanguage(budget.vocab_size, seed=0), budget.batch_size, budget.seq_len, seed=seed, device=device
    )
    ratios = []

    def record(module, inputs, output):
        x = inputs[0].detach()
        ratios.append(float(output.detach().pow(2).mean() / x.pow(2).mean()))

    hooks = [res.sublayer.register_forward_hook(record) for block in model.blocks for res in block.sublayers]
    with torch.no_grad():
        _, stream = model.hidden(tokens[:, :-1], return_stream=True)
    for h in hooks:
        h.remove()
    x0 = stream[0]
    rms = [float(x.pow(2).mean().sqrt()) for x in stream]
    cos = [float(torch.nn.functional.cosine_similarity(x, x0, dim=-1).mean()) for x in stream]
    model.zero_grad(set_to_none=True)
    model.loss(tokens).backward()
    return StreamProbe(
        norm, rms, cos, predicted_identity_weight(norm, ratios, cfg.skip_alpha), ratios, per_block_grad_norms(model)
    )


def stream_probe_work(norm: str, n_layers: Depth, budget: Budget) -> list[StackPasses]:
    """:func:`stream_probe`'s work, for the chapter's plan: the stream without gradients, then the loss's
    forward and backward, on the budget's batch."""
    model = style_config(norm, n_layers, budget)
    return [
        StackPasses(model, 1, budget.batch_size, budget.seq_len, backward=False),
        StackPasses(model, 1, budget.batch_size, budget.seq_len),
    ]


PROBE_SEEDS = 3  # initializations (and probe batches) of Experiment 1's probes: the door's fewest


def init_probes(budget: Budget, depth: Depth | None = None) -> dict[str, list[StreamProbe]]:
    """:func:`stream_probe` of every style at ``depth`` (default: the budget's largest probe depth), one per
    seed s < PROBE_SEEDS (initialization s, probe batch s): style → one probe per seed."""
    depth = given(depth, sizes(budget).probe_depths[-1])
    return {norm: [stream_probe(norm, depth, budget, seed=s) for s in range(PROBE_SEEDS)] for norm in STYLES}


def depth_sweep(
    budget: Budget, probes: dict[str, list[StreamProbe]] | None = None
) -> dict[tuple[str, int], StreamProbe]:
    """:func:`stream_probe` of every style at each of the budget's probe depths (seed 0); ``probes`` (of
    :func:`init_probes`) are reused at the largest depth instead of measured again."""
    depths = sizes(budget).probe_depths
    return {
        (norm, n): (probes[norm][0] if probes is not None and n == depths[-1] else stream_probe(norm, n, budget))
        for norm in STYLES
        for n in depths
    }


def rates(budget: Budget) -> dict[str, float]:
    """optimizer → the training comparison's rate: Adam's is the shared warmup comparison's peak."""
    return {"adam": budget.warmup.lr, "sgd": sizes(budget).sgd_lr}


def run_plan(
    norm: str,
    n_layers: Depth,
    budget: Budget,
    optimizer: str = "adam",
    lr: Positive | None = None,
    warmup: NonNegativeCount = 0,
    steps: Repeats | None = None,
    seed: Seed = 0,
    beta: Positive | None = None,
    gate_step: Real | None = None,
) -> RunPlan:
    """One run of one norm style as a train_many call (``lr`` default: the training comparison's rate for
    ``optimizer``, ``steps`` its length) on the language of ``seed``; ``gate_step`` turns rezero into the
    fixed-step schedule (the gates are then frozen and set by :class:`~deepnotes.core.measure.GateSchedule`)."""
    steps = given(steps, budget.warmup.steps)
    lr = lr if lr is not None else rates(budget)[choice("optimizer", optimizer, OPTIMIZERS)]
    every = every_for(steps, budget.warmup.track_points)
    if gate_step is not None and norm != "rezero":
        raise ValueError(f"gate_step needs norm='rezero', got norm={norm!r}")
    return RunPlan(
        [style_config(norm, n_layers, budget, beta)],
        [budget.train_config(optimizer, lr, steps, warmup, seed)],
        MarkovLanguage(budget.vocab_size, seed=seed),
        frozen=GATES if gate_step is not None else (),
        trackers=functools.partial(_training_trackers, every, gate_step),
    )


def run(
    norm: str,
    n_layers: Depth,
    context: RunContext,
    optimizer: str = "adam",
    lr: Positive | None = None,
    **settings,
) -> History:
    """Train :func:`run_plan`'s one run where ``context`` says, as the training comparison's runs train
    (``settings``: run_plan's warmup, steps, seed, beta, gate_step)."""
    return context.train(run_plan(norm, n_layers, context.budget, optimizer, lr, **settings))[0]


def variants(budget: Budget) -> dict[str, dict]:
    """The variants of the training comparison: label → keyword arguments of :func:`run`. The shared
    warmup comparison's four (Post-LN without and with warmup, Pre-LN, DeepNorm), then ReZero with
    trained gates and with Su's fixed-step gates (α_t = min(1, t/T), T the warmup length)."""
    w = budget.warmup.warmup
    shared = {
        label: dict(norm=norm, **({"warmup": steps} if steps else {}))
        for label, (norm, steps) in shared_warmup.variants(budget).items()
    }
    return {
        **shared,
        "rezero (trained gates)": dict(norm="rezero"),
        "rezero (fixed-step gates)": dict(norm="rezero", gate_step=1 / w),
    }


def _training_trackers(every: int, gate_step: Finite | None) -> list:
    """Fresh trackers of :func:`training_runs`: block gradients and updates, and the gates' schedule
    where they are set rather than trained (module-level, for the worker processes)."""
    return shared_warmup.trackers(every) + ([] if gate_step is None else [measure.GateSchedule(gate_step)])


def own_runs(budget: Budget) -> list[tuple[str, str, int]]:
    """The (optimizer, label, seed) runs this chapter trains itself: every run of :func:`variants`
    but the Adam runs of the shared warmup comparison."""
    shared = shared_warmup.variants(budget)
    return [
        (opt, name, seed)
        for opt in OPTIMIZERS
        for name in variants(budget)
        for seed in range(budget.warmup.seeds)
        if not (opt == "adam" and name in shared)
    ]


def own_training_plans(budget: Budget) -> list[tuple[list[tuple[str, str, int]], RunPlan]]:
    """The runs of :func:`own_runs` as train_many calls, each with its (optimizer, label, seed) keys: the runs
    with trained gates (every style shares one graph), then the fixed-step ReZero, whose gates are set rather
    than trained, in a call of its own; all at the warmup comparison's depth on one language (seed 0)."""
    sub = budget.warmup
    plan = variants(budget)
    every = every_for(sub.steps, sub.track_points)
    keys = own_runs(budget)
    out = []
    for fixed_gates in (False, True):
        part = [key for key in keys if ("gate_step" in plan[key[1]]) == fixed_gates]
        gate_step = next((plan[name]["gate_step"] for _, name, _ in part), None) if fixed_gates else None
        runs = RunPlan(
            [style_config(plan[name]["norm"], sub.depth, budget) for _, name, _ in part],
            [
                budget.train_config(opt, rates(budget)[opt], sub.steps, plan[name].get("warmup", 0), seed)
                for opt, name, seed in part
            ],
            MarkovLanguage(budget.vocab_size, seed=0),
            frozen=GATES if fixed_gates else (),
            trackers=functools.partial(_training_trackers, every, gate_step),
        )
        out.append((part, runs))
    return out


def training_runs(context: RunContext) -> dict[str, dict[str, list[History]]]:
    """Every variant of :func:`variants` at the warmup comparison's depth, with each optimizer
    at its rate (:func:`rates`) and ``budget.warmup.seeds`` seeds (seed s: initialization s and data
    stream s, on one language): optimizer → label → one History per seed. The Adam runs of Post-LN
    (both), Pre-LN and DeepNorm are :func:`deepnotes.shared.warmup.runs`, the same runs the increment
    chapter shows; the others train here as :func:`own_training_plans` lays them out."""
    budget = context.budget
    sub = budget.warmup
    out: dict[tuple[str, str, int], History] = {}
    for part, runs in own_training_plans(budget):
        out.update(zip(part, context.train(runs), strict=True))
    shared = shared_warmup.runs(context)[sub.depth]
    out.update({("adam", name, seed): h for name, hs in shared.items() for seed, h in enumerate(hs)})
    return {
        opt: {name: [out[(opt, name, seed)] for seed in range(sub.seeds)] for name in variants(budget)}
        for opt in OPTIMIZERS
    }


def update_map_runs(budget: Budget) -> list[tuple[str, str]]:
    """The (optimizer, label) runs whose per-block updates are compared: Post-LN with Adam without
    and with warmup, and with SGD."""
    return [("adam", shared_warmup.NO_WARMUP), ("adam", shared_warmup.warmed(budget)), ("sgd", shared_warmup.NO_WARMUP)]


def bottom_top_update_ratio(hist: History, steps: Repeats | None = None) -> float:
    """Mean over the tracked steps (the first ``steps`` of them) of ‖Δθ_1‖/‖θ_1‖ ÷ ‖Δθ_N‖/‖θ_N‖:
    how much the first block learns relative to the last."""
    ups = hist.block_updates if steps is None else hist.block_updates[:steps]
    return sum(u[0] / u[-1] for u in ups) / len(ups)


@dataclass
class SliderResult:
    """The slider's experiment at one setting."""

    depth: Depth
    norm: str
    warmup: NonNegativeCount
    beta: Positive | None
    lr: Positive
    probe: StreamProbe  # per-block gradient norms at init
    history: History  # a short Adam run


def slider_experiment(
    depth: Depth,
    norm: str,
    warmup: NonNegativeCount = 0,
    beta: Positive | None = None,
    lr: Positive | None = None,
    *,
    budget: Budget,
    progress: bool = False,
) -> SliderResult:
    """The slider's experiment: the probe at init and a short Adam run (``lr`` default: the
    budget's slider rate)."""
    sub = sizes(budget)
    live_range("depth", depth, sub.live_depth, budget)
    lr = lr if lr is not None else sub.slider_lr
    probe = stream_probe(norm, depth, budget, beta=beta)
    context = RunContext.here(budget, progress=progress)  # the slider is an entry point: the widget calls it
    hist = run(norm, depth, context, "adam", lr, warmup=warmup, steps=sub.slider_steps, beta=beta)
    return SliderResult(depth, norm, warmup, beta, lr, probe, hist)


# Reproducing the papers: Xiong et al. 2020 (arXiv:2002.04745) and Liu et al. 2020 (arXiv:2004.08249)

PAPER_STYLES = ("post", "pre")  # the two styles both papers compare


def mean_over_seeds(rows: list[list[float]]) -> list[float]:
    """The mean over seeds at each position: seeds × positions → positions ([] for no positions)."""
    return [sum(col) / len(col) for col in zip(*rows, strict=True)]


@dataclass
class XiongStack:
    """One stack of :func:`xiong_probe` at depth L, per seed (initialization s with its own probe batch s), each
    value a mean over tokens; the properties give the mean over seeds (what the figures draw; the verdicts read
    the seeds, :func:`.claims.xiong_verdicts`)."""

    sq_norms_per_seed: list[list[float]]  # seeds × (L+1): E‖x_l‖² for l = 0..L (x_0 the embedding)
    ffn_sum_per_seed: list[list[float]]  # seeds × L: Post-LN's E‖u + FFN(u)‖², block l's last LN input; [] for Pre-LN
    w2_per_seed: list[list[float]]  # seeds × L: ‖∂L/∂W^{2,l}‖_F (the FFN's second matrix), l = 1..L
    w1_per_seed: list[list[float]]  # seeds × L: ‖∂L/∂W^{1,l}‖_F

    @property
    def sq_norms(self) -> list[float]:
        """E‖x_l‖², l = 0..L, mean over seeds."""
        return mean_over_seeds(self.sq_norms_per_seed)

    @property
    def ffn_sum_sq(self) -> list[float]:
        """Post-LN's E‖x^{post,5}_l‖², l = 1..L, mean over seeds ([] for Pre-LN)."""
        return mean_over_seeds(self.ffn_sum_per_seed)

    @property
    def w2_grads(self) -> list[float]:
        """‖∂L/∂W^{2,l}‖_F, l = 1..L, mean over seeds."""
        return mean_over_seeds(self.w2_per_seed)

    @property
    def w1_grads(self) -> list[float]:
        """‖∂L/∂W^{1,l}‖_F, l = 1..L, mean over seeds."""
        return mean_over_seeds(self.w1_per_seed)

    @property
    def last_w2_per_seed(self) -> list[float]:
        """‖∂L/∂W^{2,L}‖_F of each seed (Theorem 1's quantity)."""
        return [w[-1] for w in self.w2_per_seed]


@dataclass
class XiongProbe:
    """Xiong et al. 2020 at initialization, per (style, depth): Lemma 2's hidden-state norms, Theorem 1's
    last-layer FFN gradient, their Fig. 3's layer-wise FFN gradients."""

    depths: tuple[int, ...]  # the Theorem 1 sweep over L (paper_depths)
    profile_depth: Depth  # depth of the layer-wise gradient profile (the paper's 6 layers)
    d_model: Count
    d_ff: Count
    seeds: Repeats
    stacks: dict[tuple[str, int], XiongStack]

    def last_w2(self, norm: str) -> list[float]:
        """Mean over seeds of ‖∂L/∂W^{2,L}‖_F at each depth of ``depths``."""
        return [sum(s) / len(s) for s in (self.stacks[(norm, n)].last_w2_per_seed for n in self.depths)]


def _xiong_stack(norm: str, n_layers: int, budget: Budget, seeds: int, device) -> XiongStack:
    """Per seed: one probe batch through a fresh stack, the squared norms of x_l and (Post-LN) of the
    FFN sum before its LN, then ∂L/∂W^{1,l}, ∂L/∂W^{2,l} of the LM loss; kept per seed."""
    cfg = style_config(norm, n_layers, budget)
    task = MarkovLanguage(budget.vocab_size, seed=0)
    sq, ffn_sum, w2, w1 = [], [], [], []
    for seed in range(seeds):
        model = build_model(cfg, seed=seed, device=device)
        tokens = probe_batch(task, budget.batch_size, budget.seq_len, seed=seed, device=device)  # [B, T]
        sums: list[float] = []

        def record(module, inputs, output):  # inputs[0]: u + FFN(u) [B, T-1, d]
            sums.append(float(inputs[0].detach().pow(2).sum(-1).mean()))

        hooks = (
            [block.sublayers[-1].norm.register_forward_hook(record) for block in model.blocks] if norm == "post" else []
        )
        hidden, stream = model.hidden(tokens[:, :-1], return_stream=True)  # stream: L+1 × [B, T-1, d]
        for h in hooks:
            h.remove()
        logits = model.head(model.head_transform(hidden))  # [B, T-1, V]
        loss = F.cross_entropy(logits.flatten(0, 1), tokens[:, 1:].flatten())  # = model.loss(tokens)
        loss.backward()
        sq.append([float(x.detach().pow(2).sum(-1).mean()) for x in stream])
        ffn_sum.append(sums)
        w2.append([float(block.ffn.fc2.weight.grad.norm()) for block in model.blocks])
        w1.append([float(block.ffn.fc1.weight.grad.norm()) for block in model.blocks])

    return XiongStack(sq, ffn_sum, w2, w1)


def xiong_probe(budget: Budget, device=None) -> XiongProbe:
    """Xiong et al. 2020 with the chapter's Post-LN and Pre-LN stacks at initialization, at each of
    ``paper_depths`` and ``profile_depth``:

        Lemma 2     Post-LN E‖x^{post,5}_l‖² = (3/2)d;  Pre-LN (1 + l/2)d ≤ E‖x_l‖² ≤ (1 + 3l/2)d
        Theorem 1   ‖∂L/∂W^{2,L}‖_F = O(d√(ln d)) (Post-LN),  O(d√(ln d / L)) (Pre-LN)
        Fig. 3(a,b) ‖∂L/∂W^{·,l}‖_F grows with l (Post-LN), stays about the same (Pre-LN)"""
    device = device or default_device()
    sub = sizes(budget)
    depths = sorted(set(sub.paper_depths) | {sub.profile_depth})
    stacks = {
        (norm, n): _xiong_stack(norm, n, budget, sub.paper_seeds, device) for norm in PAPER_STYLES for n in depths
    }
    return XiongProbe(tuple(sub.paper_depths), sub.profile_depth, budget.d_model, budget.d_ff, sub.paper_seeds, stacks)


@dataclass
class LiuProbe:
    """Liu et al. 2020's output change at initialization: E‖F(x, W) − F(x, W + δ)‖² per token."""

    depths: tuple[int, ...]  # N (blocks; 2N sublayers)
    perturbation: Positive  # ε: δ = ε·RMS(W)·N(0, 1) on every weight matrix W of the blocks
    changes: dict[str, list[list[float]]]  # style → per depth → per seed

    def mean(self, norm: str) -> list[float]:
        """Mean over seeds of the output change at each depth."""
        return [sum(c) / len(c) for c in self.changes[norm]]


@torch.no_grad()
def output_change(model, tokens: torch.Tensor, eps: NonNegative, generator: torch.Generator) -> float:
    """E over tokens of ‖F(x, W) − F(x, W + δ)‖², F the final hidden state (after Pre-LN's final LN)
    [B, T, d], δ = ε·RMS(W)·N(0, I) drawn on the CPU from ``generator`` for every block matrix W; the
    model's weights are restored afterwards."""
    before = model.hidden(tokens)  # [B, T, d]
    mats = block_matrices(model)
    saved = [w.clone() for w in mats]
    for w in mats:
        noise = torch.randn(w.shape, generator=generator).to(w.device, w.dtype)
        w.add_(eps * w.pow(2).mean().sqrt() * noise)
    after = model.hidden(tokens)  # [B, T, d]
    for w, s in zip(mats, saved, strict=True):
        w.copy_(s)
    return float((after - before).pow(2).sum(-1).mean())


def liu_output_change(budget: Budget, device=None) -> LiuProbe:
    """Liu et al. 2020 (Theorem 2, Corollaries 1-2, Fig. 4) with the chapter's stacks: how far a small
    random perturbation of every block matrix moves the output, Post-LN against Pre-LN, at each of
    ``paper_depths`` (``paper_seeds`` initializations, each with its own probe batch and δ)."""
    device = device or default_device()
    sub = sizes(budget)
    task = MarkovLanguage(budget.vocab_size, seed=0)
    changes: dict[str, list[list[float]]] = {}
    for norm in PAPER_STYLES:
        changes[norm] = []
        for n_layers in sub.paper_depths:
            per_seed = []
            for seed in range(sub.paper_seeds):
                model = build_model(style_config(norm, n_layers, budget), seed=seed, device=device)
                tokens = probe_batch(task, budget.batch_size, budget.seq_len, seed=seed, device=device)[
                    :, :-1
                ]  # [B, T-1]
                per_seed.append(output_change(model, tokens, sub.perturbation, generator(seed)))
            changes[norm].append(per_seed)
    return LiuProbe(tuple(sub.paper_depths), sub.perturbation, changes)


# ---- the chapter's work, for its estimate ------------------------------------------------------------


def work(budget: Budget) -> list[StackPasses | TrainRuns]:
    """What the experiments above compute at ``budget``, as :mod:`deepnotes.cost.model` counts it (the page
    adds its derivations and figures: :mod:`deepnotes.chapters.catalog`):

        init_probes        :func:`stream_probe_work` of every style at the last probe depth, PROBE_SEEDS times
        depth_sweep        the same at every other probe depth (the last one's probes are reused)
        training_runs      :func:`own_training_plans`' ensembles, then the shared warmup comparison's
        xiong_probe        Post-LN and Pre-LN at each of paper_depths and profile_depth: one forward + backward
                           per seed
        liu_output_change  Post-LN and Pre-LN at each of paper_depths: two forwards (before and after δ) per seed
        slider_experiment  per setting of the precomputed grid (slider_depths × STYLES): a stream probe and
                           :func:`run_plan`'s one-member Adam run of slider_steps steps at slider_lr

    Nothing here depends on results; the live panel runs nothing at build time."""
    sub = sizes(budget)
    b, t = budget.batch_size, budget.seq_len
    last = sub.probe_depths[-1]
    xiong_depths = sorted(set(sub.paper_depths) | {sub.profile_depth})
    slider = [
        w
        for n in sub.slider_depths
        for norm in STYLES
        for w in [
            *stream_probe_work(norm, n, budget),
            *planned_ensembles(run_plan(norm, n, budget, "adam", sub.slider_lr, steps=sub.slider_steps)),
        ]
    ]
    return [
        *(w for norm in STYLES for _ in range(PROBE_SEEDS) for w in stream_probe_work(norm, last, budget)),
        *(w for norm in STYLES for n in sub.probe_depths if n != last for w in stream_probe_work(norm, n, budget)),
        *(w for _, runs in own_training_plans(budget) for w in planned_ensembles(runs)),
        *shared_warmup.work(budget),
        *(
            StackPasses(style_config(norm, n, budget), 1, b, t, passes=sub.paper_seeds)
            for norm in PAPER_STYLES
            for n in xiong_depths
        ),
        *(
            StackPasses(style_config(norm, n, budget), 1, b, t, passes=2 * sub.paper_seeds, backward=False)
            for norm in PAPER_STYLES
            for n in sub.paper_depths
        ),
        *slider,
    ]
