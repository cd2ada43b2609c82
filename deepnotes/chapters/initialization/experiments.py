"""Experiments of the chapter "Initialization, parametrization and normalization": truncated-normal
samplers, second moments through deep plain MLPs and bounded activations, the softmax with and
without 1/√d, NTK vs standard parametrization under Adam, and LayerNorm vs RMSNorm. They measure
and return dataclasses; :mod:`.figures` draws them and :mod:`.claims` judges them."""

from __future__ import annotations

import inspect
import math
import statistics
from dataclasses import dataclass

import torch

from deepnotes.chapters.initialization.budget import sizes
from deepnotes.chapters.initialization.mlp import ACTIVATIONS, plain_mlp, predicted_second_moments, scalar_activation
from deepnotes.core import models as ini
from deepnotes.core.config import Budget, check_allocation, get_budget
from deepnotes.core.config import device as default_device
from deepnotes.core.data import generator, seeded
from deepnotes.core.validate import (
    Count,
    Depth,
    Positive,
    Real,
    Repeats,
    Seed,
    given,
)
from deepnotes.cost.model import MLPPasses, Timed

BERT_STD = 0.02  # the std the truncated-normal samplers are asked for (BERT's)
TRUNCATION_K = 2  # cut at ±2σ
INIT_GAINS = {"lecun": 1.0, "he": 2.0, "xavier": 1.0}  # E[w²] in units of 1/m (square layers)
BOUNDED_GAINS = (1, 100, 10_000)  # pre-activation second moments c at which tanh, sigmoid are probed
ROW_SEED = 1  # the slider's one attention row
NORM_EPS = 1e-5  # LayerNorm's default ε, given to RMSNorm too
NORM_INPUT_SHIFT = 0.5  # mean of the shifted input of the norm comparison
MOMENT_INITS = ("lecun", "he")  # moment_table's initializations (Xavier equals LeCun for square layers)
PARAMETRIZATIONS = (False, True)  # ntk_comparison's runs: standard (He), NTK
PROBE_SEEDS = 3  # draws behind Experiments 2 and 3's verdicts (queries and keys, or init and data): the door's fewest


# ---- sampling ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class TruncSample:
    label: str
    nominal_std: Positive  # the std asked for
    std: Positive  # measured std of the draws
    max_over_std: float  # max |w| / nominal_std
    expected_std: Positive  # what the sampler should give


@dataclass(frozen=True)
class TorchTruncDefaults:
    a: Real  # torch.nn.init.trunc_normal_'s default lower bound (absolute units)
    b: Real


def torch_trunc_defaults() -> TorchTruncDefaults:
    """The default bounds of ``torch.nn.init.trunc_normal_``, read from its signature."""
    params = inspect.signature(torch.nn.init.trunc_normal_).parameters
    return TorchTruncDefaults(params["a"].default, params["b"].default)


def truncation_samples(budget: Budget, std: Positive = BERT_STD, seed: Seed = 0) -> dict[str, TruncSample]:
    """``sizes(budget).trunc_samples`` draws of: torch's trunc_normal_ with its default bounds,
    deepnotes' cut at ±2σ, and deepnotes' cut at ±2σ with the std corrected (``match_std``)."""
    n = sizes(budget).trunc_samples
    t = torch.empty(n)
    gamma = ini.truncated_normal_variance_factor(TRUNCATION_K)
    defaults = torch_trunc_defaults()
    draws = {
        "torch": (
            f"torch trunc_normal_(std={std}), defaults a={defaults.a:g}, b={defaults.b:g}",
            torch.nn.init.trunc_normal_(t.clone(), std=std, generator=generator(seed)),
            std,
        ),
        "cut": (
            f"deepnotes trunc_normal_(std={std}): cut at ±{TRUNCATION_K}σ",
            ini.trunc_normal_(t.clone(), std, k=TRUNCATION_K, generator=generator(seed)),
            std * math.sqrt(gamma),
        ),
        "matched": (
            f"deepnotes trunc_normal_(std={std}, match_std=True)",
            ini.trunc_normal_(t.clone(), std, k=TRUNCATION_K, match_std=True, generator=generator(seed)),
            std,
        ),
    }
    return {
        key: TruncSample(label, std, float(w.std()), float(w.abs().max() / std), expected)
        for key, (label, w, expected) in draws.items()
    }


# ---- second moments ---------------------------------------------------------------------------


@dataclass(frozen=True)
class BoundedMoments:
    act: str
    gains: tuple[float, ...]
    moments: tuple[float, ...]  # E[φ(√c z)²] per gain c

    @property
    def sup(self) -> float:
        return max(self.moments)


def bounded_second_moments(acts=("tanh", "sigmoid"), gains=BOUNDED_GAINS) -> dict[str, BoundedMoments]:
    """E[φ(√c·z)²], z ~ N(0,1), for bounded activations at growing c: they stay below 1."""
    return {
        act: BoundedMoments(
            act, tuple(gains), tuple(ini.gaussian_second_moment(scalar_activation(act), c) for c in gains)
        )
        for act in acts
    }


@torch.no_grad()
def forward_second_moments(
    act: str, gain: Positive, depth: Depth, width: Count, batch: Count, seed: Seed = 0, device=None
) -> list[float]:
    """Measured E[x_l²] (mean over batch and units) for l = 0..depth of a plain MLP
    x_{l+1} = φ(x_l W_l), E[w²] = gain/m, on inputs x_0 ~ N(0, 1)."""
    device = device or default_device()
    check_allocation(
        depth * width * width + 2 * batch * width, {"depth": depth, "width": width, "batch": batch}, device
    )
    with seeded(seed):
        net = plain_mlp(width, depth, act, gain=gain).to(device)
        x = torch.randn(batch, width, device=device)  # [B, m]
    moments = [float(x.pow(2).mean())]
    for k in range(0, len(net), 2):  # (linear, activation) pairs
        x = net[k + 1](net[k](x))
        moments.append(float(x.pow(2).mean()))
    return moments


@dataclass(frozen=True)
class MomentCurve:
    act: str
    gain: Positive  # E[w²] in units of 1/m
    measured: list[float]  # E[x_l²], l = 0..depth (weight draw 0)
    predicted: list[float]  # the mean-field recursion
    draws: tuple[tuple[float, ...], ...] = ()  # E[x_l²] of each weight draw (seed 0, 1, …), where measured

    @property
    def ratio(self) -> float:
        """Measured / predicted at the last layer (nan where the prediction is 0)."""
        return self.measured[-1] / self.predicted[-1] if self.predicted[-1] else float("nan")


def moment_curve(act: str, gain: Positive, depth: Depth, budget: Budget, seeds: Repeats = 1) -> MomentCurve:
    """Measured and predicted per-layer second moments at the budget's width and batch, over ``seeds``
    weight draws (the curve shown is draw 0's)."""
    b = sizes(budget)
    draws = tuple(
        tuple(forward_second_moments(act, gain, depth, b.moment_width, b.moment_batch, seed=s)) for s in range(seeds)
    )
    return MomentCurve(act, gain, list(draws[0]), predicted_second_moments(act, gain, depth), draws)


def moment_table(budget: Budget, inits=MOMENT_INITS, acts=ACTIVATIONS) -> dict[tuple[str, str], MomentCurve]:
    """{(init, act): MomentCurve} at the budget's depth/width over its ``moment_seeds`` weight draws. LeCun =
    gain 1, He = gain 2 (in units of 1/m); Xavier equals LeCun for these square layers."""
    b = sizes(budget)
    return {
        (init, act): moment_curve(act, INIT_GAINS[init], b.moment_depth, budget, b.moment_seeds)
        for init in inits
        for act in acts
    }


# ---- the softmax with and without 1/√d ---------------------------------------------------------


@dataclass(frozen=True)
class SoftmaxProbe:
    d: Count
    scaled: bool
    max_weight: float  # mean over queries of max_j softmax(s)_j
    entropy: float  # mean entropy of the attention row (nats); log(n_keys) is uniform
    jacobian_norm: float  # mean ‖∂softmax(s)/∂s‖_F = ‖diag(p) − ppᵀ‖_F
    n_keys: Count


def softmax_probe(
    d: Count, scaled: bool, n_keys: Count | None = None, n_queries: Count | None = None, seed: Seed = 0
) -> SoftmaxProbe:
    """Attention scores s_j = q·k_j (/√d if ``scaled``) for q, k with i.i.d. N(0,1) entries;
    ``n_keys``, ``n_queries`` default to the budget's."""
    b = sizes(get_budget())
    n_keys, n_queries = given(n_keys, b.softmax_keys), given(n_queries, b.softmax_queries)
    typed = {"d": d, "n_keys": n_keys, "n_queries": n_queries}
    check_allocation((n_queries + n_keys) * d + 4 * n_queries * n_keys, typed, bytes_each=8)  # q, k; s, p, log p
    gen = generator(seed)
    q = torch.randn(n_queries, d, generator=gen, dtype=torch.float64)  # [Q, d]
    k = torch.randn(n_keys, d, generator=gen, dtype=torch.float64)  # [K, d]
    s = q @ k.T / (math.sqrt(d) if scaled else 1.0)  # [Q, K]
    p = torch.softmax(s, dim=-1)
    entropy = -(p * torch.log(p.clamp_min(1e-300))).sum(-1)
    jac = torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-2)  # [Q, K, K]
    return SoftmaxProbe(
        d,
        scaled,
        float(p.max(-1).values.mean()),
        float(entropy.mean()),
        float(jac.flatten(1).norm(dim=-1).mean()),
        n_keys,
    )


def softmax_sweep(budget: Budget) -> dict[tuple[int, bool], SoftmaxProbe]:
    """{(d, scaled): SoftmaxProbe} over the budget's ``softmax_dims``, without and with 1/√d."""
    b = sizes(budget)
    return {
        (dd, s): softmax_probe(dd, s, b.softmax_keys, b.softmax_queries) for dd in b.softmax_dims for s in (False, True)
    }


def softmax_seeds(budget: Budget) -> dict[tuple[int, bool], list[SoftmaxProbe]]:
    """{(d, scaled): one SoftmaxProbe per seed s < PROBE_SEEDS (queries and keys drawn from seed s; seed 0 is
    :func:`softmax_sweep`'s)}: what the verdicts read."""
    b = sizes(budget)
    return {
        (dd, s): [softmax_probe(dd, s, b.softmax_keys, b.softmax_queries, seed) for seed in range(PROBE_SEEDS)]
        for dd in b.softmax_dims
        for s in (False, True)
    }


@dataclass(frozen=True)
class AttentionRow:
    d: Count
    scaled: bool
    weights: list[float]  # softmax over the keys of one query


def attention_row(d: Count, scaled: bool, n_keys: Count | None = None, seed: Seed = ROW_SEED) -> AttentionRow:
    """One query's attention weights over ``n_keys`` keys (float32, N(0,1) entries)."""
    n_keys = given(n_keys, sizes(get_budget()).softmax_keys)
    check_allocation((n_keys + 1) * d + 2 * n_keys, {"d": d, "n_keys": n_keys})
    gen = generator(seed)
    q, k = torch.randn(d, generator=gen), torch.randn(n_keys, d, generator=gen)  # [d], [K, d]
    p = torch.softmax(k @ q / (math.sqrt(d) if scaled else 1.0), dim=0)
    return AttentionRow(d, scaled, p.tolist())


# ---- NTK vs standard parametrization under Adam ------------------------------------------------


@dataclass(frozen=True)
class UpdateRun:
    ntk: bool
    lr: Positive
    width: Count
    per_step: list[list[float]]  # per step, per layer: ‖ΔW‖/‖W‖ of the effective weight

    @property
    def first_step_mean(self) -> float:
        """The mean over layers of the first step's relative update."""
        return sum(self.per_step[0]) / len(self.per_step[0])

    def layer(self, k: int) -> list[float]:
        """Layer ``k``'s relative update per step."""
        return [step[k] for step in self.per_step]


def relative_updates(
    ntk: bool, width: Count, depth: Depth, steps: Repeats, lr: Positive, batch: Count, seed: Seed = 0, device=None
) -> UpdateRun:
    """Train a plain ReLU MLP (He init, or NTK parametrization with N(0,1) weights) with Adam on a
    random linear regression target; per step and hidden layer, ‖ΔW‖/‖W‖ of the *effective*
    weight (W/√m for NTK)."""
    device = device or default_device()
    typed = {"width": width, "depth": depth, "batch": batch}
    check_allocation(4 * depth * width * width + 2 * depth * batch * width, typed, device)  # weights, Adam, activations
    with seeded(seed):
        net = plain_mlp(width, depth, "relu", init="he", ntk=ntk).to(device)
        x = torch.randn(batch, width, device=device)  # [B, m]
        target = x @ torch.randn(width, width, device=device) / math.sqrt(width)
    layers = [net[k] for k in range(0, len(net), 2)]
    opt = torch.optim.Adam(net.parameters(), lr=lr)

    def effective(layer):
        return layer.weight.detach() * (layer.scale if ntk else 1.0)

    history = []
    for _ in range(steps):
        before = [effective(layer).clone() for layer in layers]
        loss = (net(x) - target).pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        history.append(
            [float((effective(layer) - w0).norm() / w0.norm()) for layer, w0 in zip(layers, before, strict=True)]
        )
    return UpdateRun(ntk, lr, width, history)


def ntk_comparison(budget: Budget) -> dict[bool, UpdateRun]:
    """{ntk: UpdateRun} for the standard (He) and the NTK parametrization at the budget's sizes."""
    b = sizes(budget)
    return {
        ntk: relative_updates(ntk, b.ntk_width, b.ntk_depth, b.ntk_steps, b.ntk_lr, b.ntk_batch)
        for ntk in PARAMETRIZATIONS
    }


def ntk_first_steps(budget: Budget, runs: dict[bool, UpdateRun]) -> dict[bool, list[UpdateRun]]:
    """{ntk: the run of :func:`ntk_comparison` (seed 0, ``runs``), then one first Adam step for each further seed
    s < PROBE_SEEDS (initialization and data drawn from seed s)}: the first step's relative update per seed."""
    b = sizes(budget)
    return {
        ntk: [
            run,
            *(
                relative_updates(ntk, b.ntk_width, b.ntk_depth, 1, b.ntk_lr, b.ntk_batch, seed)
                for seed in range(1, PROBE_SEEDS)
            ),
        ]
        for ntk, run in runs.items()
    }


# ---- LayerNorm vs RMSNorm ----------------------------------------------------------------------


@dataclass(frozen=True)
class NormComparison:
    shape: tuple[int, int, int]  # [B, T, d]
    zero_mean_gap: Real  # max |LN − RMSNorm| on a zero-mean input
    shifted_gap: Real  # … on an input of mean NORM_INPUT_SHIFT
    forward: dict[str, float]  # median seconds per forward, by module (median over the rounds)
    forward_backward: dict[str, float]
    rounds: tuple[float, ...] = ()  # RMSNorm's forward+backward time over LayerNorm's, per interleaved round

    def ratio(self, which: str = "forward_backward") -> float:
        """RMSNorm's time over LayerNorm's."""
        t = getattr(self, which)
        return t["RMSNorm"] / t["LayerNorm"]

    def round_ratios(self) -> tuple[float, ...]:
        """The per-round forward+backward ratios (one round, the medians' ratio, where none were kept)."""
        return self.rounds or (self.ratio("forward_backward"),)


def norm_comparison(budget: Budget, seed: Seed = 0) -> NormComparison:
    """PyTorch's LayerNorm and RMSNorm (no affine) on the same input: the outputs' difference on a
    zero-mean and a shifted input, and the median time of forward and forward+backward."""
    from torch.utils import benchmark

    b = sizes(budget)
    shape = tuple(b.norm_shape)
    with seeded(seed):
        xb = torch.randn(*shape) + NORM_INPUT_SHIFT  # [B, T, d]
    d = shape[-1]
    mods = {
        "LayerNorm": torch.nn.LayerNorm(d, elementwise_affine=False),
        "RMSNorm": torch.nn.RMSNorm(d, elementwise_affine=False, eps=NORM_EPS),
    }
    centered = xb - xb.mean(-1, keepdim=True)
    gap = {
        name: float((mods["LayerNorm"](v) - mods["RMSNorm"](v)).abs().max())
        for name, v in (("zero", centered), ("shifted", xb))
    }
    xg = xb.clone().requires_grad_(True)
    fwd, both = {name: [] for name in mods}, {name: [] for name in mods}
    per_round = b.norm_timer_seconds / b.norm_rounds
    for _ in range(b.norm_rounds):  # the two modules take turns, so drift hits both alike
        for name, mod in mods.items():
            fwd[name].append(
                benchmark.Timer("m(x)", globals={"m": mod, "x": xb}).blocked_autorange(min_run_time=per_round).median
            )
            both[name].append(
                benchmark.Timer("m(x).sum().backward()", globals={"m": mod, "x": xg})
                .blocked_autorange(min_run_time=per_round)
                .median
            )
    rounds = tuple(r / l for r, l in zip(both["RMSNorm"], both["LayerNorm"], strict=True))
    return NormComparison(
        shape,
        gap["zero"],
        gap["shifted"],
        {k: statistics.median(v) for k, v in fwd.items()},
        {k: statistics.median(v) for k, v in both.items()},
        rounds,
    )


LN_INPUT_SCALES = (0.1, 1.0, 10.0)  # stds of the LayerNorm inputs whose backward is compared


def layernorm_input_gradient(width: Count = 64, seed: Seed = 0) -> dict[float, float]:
    """‖∂L/∂x‖ through a LayerNorm (no gain, float64) for one upstream gradient ∂L/∂y and inputs x = s·u
    of each std s of :data:`LN_INPUT_SCALES` (u ~ N(0, I) fixed): LN(s·u) = LN(u), so the Jacobian at s·u
    is 1/s times the one at u."""
    check_allocation(4 * width, {"width": width}, bytes_each=8)
    gen = generator(seed)
    u = torch.randn(width, generator=gen, dtype=torch.float64)  # [d]
    upstream = torch.randn(width, generator=gen, dtype=torch.float64)  # [d] ∂L/∂y
    out = {}
    for s in LN_INPUT_SCALES:
        x = (s * u).requires_grad_(True)
        torch.nn.functional.layer_norm(x, (width,)).backward(upstream)
        out[s] = float(x.grad.norm())
    return out


# ---- the chapter's work, for its estimate ------------------------------------------------------------


def work(budget: Budget) -> list[MLPPasses | Timed]:
    """What the experiments above compute at ``budget``, as :mod:`deepnotes.cost.model` counts it (the page
    adds its derivations and figures: :mod:`deepnotes.chapters.catalog`). The chapter trains no Transformer;
    its device work is plain MLPs:

        moment_table     one forward pass of a moment_depth × moment_width MLP on moment_batch inputs per
                         (init, activation) and weight draw (moment_seeds)
        moment_figure    the same per setting of the precomputed slider grid (activation × slider_gains)
        ntk_comparison   per parametrization (standard, NTK): ntk_steps Adam steps (forward + backward) of an
                         ntk_depth × ntk_width MLP on ntk_batch inputs
        ntk_first_steps  per parametrization and each further seed of PROBE_SEEDS: one Adam step of that MLP
        norm_comparison  LayerNorm and RMSNorm timed for norm_timer_seconds per timer (four timers)

    Left out as too small to matter: the truncated-normal draws, the mean-field recursions (scalar work on the
    CPU), the softmax probes and attention rows (at most 256 × 1024 scores). The live panels run nothing at
    build time."""
    b = sizes(budget)

    def moments(curves: int) -> MLPPasses:  # each curve builds its own MLP: the same cost
        return MLPPasses(width=b.moment_width, depth=b.moment_depth, batch=b.moment_batch, passes=curves)

    def ntk_steps(steps: int) -> MLPPasses:
        return MLPPasses(width=b.ntk_width, depth=b.ntk_depth, batch=b.ntk_batch, passes=steps, backward=True)

    return [
        moments(len(MOMENT_INITS) * len(ACTIVATIONS) * b.moment_seeds),
        moments(len(ACTIVATIONS) * len(b.slider_gains)),
        *(ntk_steps(b.ntk_steps) for _ in PARAMETRIZATIONS),
        *(ntk_steps(1) for _ in PARAMETRIZATIONS for _ in range(1, PROBE_SEEDS)),
        Timed(4 * b.norm_timer_seconds),  # 2 modules × (forward, forward + backward) timers
    ]
