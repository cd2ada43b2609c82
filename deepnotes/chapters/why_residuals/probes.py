"""Models and probes of the chapter "Why residuals?" (Su Jianlin, kexue.fm/archives/8994).

One stack, two wirings. Layer l has a branch f_l(x) = relu(x W1_l) W2_l (W1: width → hidden, He
init E[w²] = 2/width; W2: hidden → width, LeCun init E[w²] = 1/hidden; no biases), so that
E[f(x)²] = E[x²] and E‖v·∂f/∂x‖² = ‖v‖² at initialization. Then

    residual  x_l = x_{l−1} + ε·f_l(x_{l−1})         (ε = N^{−p}: p = 0, 1/2, 1 → ε = 1, 1/√N, 1/N)
    plain     x_l = f_l(x_{l−1})                     (a forward-stable plain MLP of 2N linear layers)

Probes: the growth of ‖v·∂x_N/∂x_0‖² (renormalizing v at every layer and adding up the log-norms,
so that depth 1000 with ε = 1, a factor ≈ 2^1000, neither overflows nor loses precision), per-layer
second moments of a plain stack, and per-layer parameter gradients (float64 autograd).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from deepnotes.chapters.why_residuals.budget import sizes
from deepnotes.core.config import Budget, check_allocation
from deepnotes.core.config import device as default_device
from deepnotes.core.data import generator, seeded
from deepnotes.core.validate import Count, Depth, Positive, Real, Repeats, Seed
from deepnotes.cost.model import MLPPasses, ProbeCalls

EPS_RULES = {"1": 0.0, "1/sqrt(N)": 0.5, "1/N": 1.0}  # name → p in ε = N^{−p}
EPS_NAMES = tuple(EPS_RULES)  # the three residual stacks, in the book's order
STACK_KINDS = ("plain",) + EPS_NAMES  # what a stack can be


def label(kind) -> str:
    """ "plain", or "ε = <rule>" for a residual stack (a number p: "ε = N^-p")."""
    return "plain" if kind == "plain" else f"ε = {kind}" if isinstance(kind, str) else f"ε = N^-{kind:g}"


def eps_exponent(rule) -> float:
    """p of ε = N^{−p} from a rule name ("1", "1/sqrt(N)", "1/N") or a number p in [0, 2]."""
    if isinstance(rule, str):
        if rule not in EPS_RULES:
            raise ValueError(f"unknown epsilon rule {rule!r}; allowed: {', '.join(EPS_RULES)} or a number p in [0, 2]")
        return EPS_RULES[rule]
    if isinstance(rule, bool) or not isinstance(rule, (int, float)) or not 0 <= rule <= 2:
        raise ValueError(
            f"epsilon exponent must be a number p in [0, 2] (or one of {', '.join(EPS_RULES)}), got {rule!r}"
        )
    return float(rule)


def eps_for_depth(rule, depth: Depth) -> float:
    """ε = N^{−p} for a stack of ``depth`` = N layers (not :func:`deepnotes.core.scaling.branch_weight`,
    DeepNorm's λ²/α)."""
    return float(depth) ** -eps_exponent(rule)


class Branch(nn.Module):
    """f(x) = relu(x W1) W2: [..., width] → [..., hidden] → [..., width]."""

    def __init__(self, width: Count, hidden: Count):
        super().__init__()
        check_allocation(2 * width * hidden, {"width": width, "hidden": hidden})  # W1, W2
        self.w1 = nn.Linear(width, hidden, bias=False)
        self.w2 = nn.Linear(hidden, width, bias=False)
        with torch.no_grad():
            nn.init.normal_(self.w1.weight, std=math.sqrt(2.0 / width))  # He: E[relu(xW1)²] = E[x²]
            nn.init.normal_(self.w2.weight, std=math.sqrt(1.0 / hidden))  # LeCun

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w2(torch.relu(self.w1(x)))


class ResidualMLP(nn.Module):
    """``depth`` layers x ← x + ε f_l(x) (``residual``) or x ← f_l(x) (plain), built in a loop."""

    def __init__(
        self, width: Count, depth: Depth, eps: Positive = 1.0, residual: bool = True, hidden: Count | None = None
    ):
        super().__init__()
        hidden = width if hidden is None else hidden
        if not eps > 0:
            raise ValueError(f"eps must be > 0, got {eps!r}")
        check_allocation(2 * depth * width * hidden, {"width": width, "depth": depth, "hidden": hidden})
        self.eps, self.residual = float(eps), residual
        self.blocks = nn.ModuleList([Branch(width, hidden) for _ in range(depth)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [..., width] → [..., width]
        for f in self.blocks:
            x = x + self.eps * f(x) if self.residual else f(x)
        return x


def build_stack(
    kind: str | float, width: Count, depth: Depth, seed: Seed = 0, hidden: Count | None = None, device=None, dtype=None
) -> ResidualMLP:
    """``kind`` = "plain" or an ε rule (see :data:`EPS_RULES`), or a number p (ε = N^{−p})."""
    if kind == "plain":
        residual, eps = False, 1.0
    else:
        residual, eps = True, eps_for_depth(kind, depth)
    with seeded(seed):
        stack = ResidualMLP(width, depth, eps, residual, hidden)
    return stack.to(device=device or default_device(), dtype=dtype)


@dataclass
class JacobianProbe:
    """‖v·∂x_N/∂x_0‖² / ‖v‖² for ``batch`` random inputs x_0 and vectors v (natural logs)."""

    kind: str | float
    width: Count
    depth: Depth
    eps: Positive
    log_growth: list[float]  # per sample: log(‖v J‖²/‖v‖²) through all N layers
    curve: list[float]  # median over samples of the log growth through the top k layers, k = 0..N
    forward_log_growth: float  # median over samples of log(‖x_N‖²/‖x_0‖²)
    cos_vu: float  # mean |cos(v, v·∂f/∂x)| over layers and samples (Su: ≈ 0)
    norm_ratio: float  # mean ‖v·∂f/∂x‖²/‖v‖² (Su: ≈ 1)
    forward_samples: list[float] = field(default_factory=list)  # per sample: log(‖x_N‖²/‖x_0‖²)
    cos_samples: list[float] = field(default_factory=list)  # per sample: mean over layers of |cos(v, v·∂f/∂x)|
    ratio_samples: list[float] = field(default_factory=list)  # per sample: mean over layers of ‖v·∂f/∂x‖²/‖v‖²

    @property
    def typical(self) -> float:
        """Median over samples of log(‖vJ‖²/‖v‖²): the growth of a typical v."""
        return float(torch.tensor(self.log_growth).median())


def predicted_log_growth(kind: str | float, depth: Depth) -> dict[str, float]:
    """log of the predicted ‖vJ‖² growth through N layers: the article's one-dimensional estimate
    (1+ε)^{2N} (the factor (1+ε)^N, squared), its high-dimensional (1+ε²)^N (exact in mean square
    for this branch), and 1 for a plain stack (He init keeps the backward second moment)."""
    if kind == "plain":
        return {"one_d": 0.0, "high_d": 0.0}
    e = eps_for_depth(kind, depth)
    return {"one_d": 2 * depth * math.log1p(e), "high_d": depth * math.log1p(e * e)}


@torch.no_grad()
def jacobian_growth(
    kind: str | float,
    width: Count,
    depth: Depth,
    *,
    batch: Count,
    seed: Seed = 0,
    hidden: Count | None = None,
    device=None,
) -> JacobianProbe:
    """Forward x_0 ~ N(0, I) through the stack, then pull v ~ N(0, I) back:
    v ← v + ε·((v W2) ⊙ 1[x W1ᵀ > 0]) W1  (the VJP of x + ε relu(x W1ᵀ) W2ᵀ; plain: without the v +).

    Both x and v are rescaled to RMS 1 after every layer and their log-norms summed: f is
    positively homogeneous, so rescaling x leaves the Jacobian unchanged.
    """
    _check_probe(width, depth, batch, hidden, where=device)
    stack = build_stack(kind, width, depth, seed, hidden, device)
    dev = next(stack.parameters()).device
    gen = generator(seed + 1, dev)
    x = torch.randn(batch, width, generator=gen, device=dev)  # [B, m]
    v = torch.randn(batch, width, generator=gen, device=dev)  # [B, m]
    fwd, masks = _forward_log_growth(stack, x)
    acc = torch.zeros(batch, device=dev, dtype=torch.float64)
    curve, cosines, ratios = [0.0], [], []
    cos_sum, ratio_sum, layers = (torch.zeros(batch, device=dev, dtype=torch.float64) for _ in range(3))  # [B]
    for f, mask in zip(reversed(stack.blocks), reversed(masks), strict=True):
        u = (v @ f.w2.weight * mask) @ f.w1.weight  # v·∂f/∂x: [B, m]
        alive = v.pow(2).sum(-1) > 0  # rows not yet stopped
        if alive.any():
            cos = torch.nn.functional.cosine_similarity(u, v, dim=-1, eps=1e-30).abs().double()  # [B]
            ratio = u.pow(2).sum(-1).double() / v.pow(2).sum(-1).double().clamp_min(1e-300)  # [B]
            cosines.append(float(cos[alive].mean()))
            ratios.append(float(ratio[alive].mean()))
            cos_sum += torch.where(alive, cos, 0.0)  # per sample, the layers its v reached
            ratio_sum += torch.where(alive, ratio, 0.0)
            layers += alive
        new = v + stack.eps * u if stack.residual else u
        acc += _renorm_log(new, v)
        curve.append(float(acc.median()))
        v = _rescaled(new)
    seen = layers > 0  # samples whose v reached at least one layer
    return JacobianProbe(
        kind,
        width,
        depth,
        stack.eps,
        acc.tolist(),
        curve,
        float(fwd.median()),
        sum(cosines) / max(len(cosines), 1),
        sum(ratios) / max(len(ratios), 1),
        fwd.tolist(),
        (cos_sum[seen] / layers[seen]).tolist(),
        (ratio_sum[seen] / layers[seen]).tolist(),
    )


def _check_probe(width: int, depth: int, batch: int, hidden: int | None, where=None, bytes_each: int = 4) -> None:
    """Refuse a probe whose weights (2·N·m·h) and kept activations (2·N·B·(m + h)) would not fit."""
    hidden = width if hidden is None else hidden
    numbers = 2 * depth * width * hidden + 2 * depth * batch * (width + hidden)
    check_allocation(numbers, {"width": width, "depth": depth, "batch": batch, "hidden": hidden}, where, bytes_each)


def _forward_log_growth(stack: ResidualMLP, x: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """x [B, m] through the stack, rescaled to RMS 1 after every layer: (Σ log-growth per sample [B], float64;
    each layer's ReLU mask [B, h], for the pull-back)."""
    fwd = torch.zeros(x.shape[0], device=x.device, dtype=torch.float64)
    masks = []
    for f in stack.blocks:
        pre = f.w1(x)  # [B, h]
        masks.append(pre > 0)
        y = x + stack.eps * f.w2(torch.relu(pre)) if stack.residual else f.w2(torch.relu(pre))
        fwd += _renorm_log(y, x)
        x = _rescaled(y)
    return fwd, masks


def _renorm_log(new: torch.Tensor, old: torch.Tensor) -> torch.Tensor:
    """log(‖new‖²/‖old‖²) per row, in float64 ([B]); a row that is or became 0 gives −inf (a
    one-dimensional plain ReLU stack stops every gradient the first time its unit is off)."""
    new_sq, old_sq = new.double().pow(2).sum(-1), old.double().pow(2).sum(-1)
    out = new_sq.log() - old_sq.log()
    return torch.where(old_sq > 0, out, torch.full_like(out, -math.inf))


def _rescaled(t: torch.Tensor) -> torch.Tensor:
    """Each row scaled to RMS 1 (rows of 0 stay 0)."""
    rms = t.pow(2).mean(-1, keepdim=True).sqrt()
    return t / torch.where(rms > 0, rms, torch.ones_like(rms))


@torch.no_grad()
def branch_jacobian_singular_values(
    width: Count, hidden: Count | None = None, seed: Seed = 0, device=None
) -> list[float]:
    """Singular values (descending) of one branch's Jacobian ∂f/∂x = W2 · diag(1[x W1ᵀ > 0]) · W1
    ([width, hidden]·[hidden, hidden]·[hidden, width], the matrix that v·∂f/∂x multiplies) at a random
    x ~ N(0, I), in float64. A multiple of an orthogonal matrix would have them all equal; the ReLU
    zeroes about half of the hidden units, so about width − hidden/2 of them are 0."""
    check_allocation(3 * width * (width if hidden is None else hidden), {"width": width, "hidden": hidden}, device, 8)
    stack = build_stack("1", width, 1, seed, hidden, device, torch.float64)
    f = stack.blocks[0]
    dev = next(stack.parameters()).device
    gen = generator(seed + 1, dev)
    x = torch.randn(width, generator=gen, device=dev, dtype=torch.float64)  # [m]
    mask = (f.w1(x) > 0).double()  # [h]
    jac = f.w2.weight @ torch.diag(mask) @ f.w1.weight  # [m, m]
    return torch.linalg.svdvals(jac).tolist()


@torch.no_grad()
def orthogonal_cosines(width: Count, samples: Count = 256, seed: Seed = 0) -> dict[str, float]:
    """Mean |cos(x, xQ)| over ``samples`` random x ~ N(0, I_width) for a Haar-random orthogonal Q
    (QR of a Gaussian matrix, signs fixed by diag(R)) and for Q = I. An orthogonal matrix keeps
    norms, not angles: Q = I gives 1; a random Q gives about √(2/(π·width)) (returned as "expected")."""
    check_allocation(3 * width * width + 3 * samples * width, {"width": width, "samples": samples}, bytes_each=8)
    gen = generator(seed)
    q, r = torch.linalg.qr(torch.randn(width, width, generator=gen, dtype=torch.float64))
    q = q * torch.sign(torch.diagonal(r))  # Haar measure
    x = torch.randn(samples, width, generator=gen, dtype=torch.float64)  # [S, m]
    cos = torch.nn.functional.cosine_similarity
    return {
        "random": float(cos(x, x @ q, dim=-1).abs().mean()),
        "identity": float(cos(x, x @ torch.eye(width, dtype=torch.float64), dim=-1).abs().mean()),
        "expected": math.sqrt(2 / (math.pi * width)),
    }


@dataclass
class PlainMoments:
    """Per linear layer k = 1..2N of a plain stack (W1, W2 alternating), per-entry second moments."""

    widths: list[int]  # d_0, d_1, …, d_2N (the dims between linear layers)
    forward: list[float]  # E[x_k²] at the output of layer k, k = 0..2N
    backward: list[float]  # E[(∂L/∂x_k)²], k = 0..2N (E[(∂L/∂x_2N)²] = 1)
    predicted_backward: list[float]  # Π_{j>k} (fan-out_j / fan-in_j): the m/n rule
    weight_grad: list[float]  # E[(∂L/∂W_k)²] per entry, k = 1..2N


def plain_moments(
    width: Count, hidden: Count, depth: Depth, *, batch: Count, seed: Seed = 0, device=None
) -> PlainMoments:
    """A plain He/LeCun stack width → hidden → width → … (2N linear layers) in float64, loss
    L = Σ x_2N·r with r ~ N(0, 1) so that ∂L/∂x_2N has second moment 1."""
    _check_probe(width, depth, batch, hidden, device, bytes_each=8)
    stack = build_stack("plain", width, depth, seed, hidden, device, torch.float64)
    dev = next(stack.parameters()).device
    gen = generator(seed + 1, dev)
    x = torch.randn(batch, width, generator=gen, device=dev, dtype=torch.float64)  # [B, m]
    xs = [x.requires_grad_()]
    for f in stack.blocks:
        xs.append(torch.relu(f.w1(xs[-1])))  # relu(x W1): [B, h]
        xs[-1].retain_grad()
        xs.append(f.w2(xs[-1]))  # · W2: [B, m]
        xs[-1].retain_grad()
    r = torch.randn(xs[-1].shape, generator=gen, device=dev, dtype=torch.float64)
    (xs[-1] * r).sum().backward()
    widths = [width] + [hidden, width] * depth
    pred = [1.0]
    for k in range(len(widths) - 1, 0, -1):  # layer k maps d_{k−1} → d_k
        pred.append(pred[-1] * widths[k] / widths[k - 1])
    grads = [p.grad.pow(2).mean().item() for f in stack.blocks for p in (f.w1.weight, f.w2.weight)]
    return PlainMoments(
        widths,
        [float(t.detach().pow(2).mean()) for t in xs],
        [float(t.grad.pow(2).mean()) for t in xs],
        pred[::-1],
        grads,
    )


def branch_gradient_moment(width: Count, hidden: Count | None = None, *, batch: Count) -> float:
    """C = E‖∂L/∂θ_f‖² of one branch with unit moments in and out: width·(hidden + width/2)/batch
    (``derive.branch_gradient_moment``)."""
    hidden = width if hidden is None else hidden
    return width * (hidden + width / 2) / batch


def predicted_total_gradient(kind: str | float, width: Count, depth: Depth, *, batch: Count) -> float:
    """E‖∇_θL‖² of the whole stack at initialization, mean field: N·C for a plain stack (every
    layer sees unit moments both ways), N·ε²·(1+ε²)^{N−1}·C for x + εf (layer l's input has grown
    by (1+ε²)^{l−1}, the gradient reaching its output by (1+ε²)^{N−l}, and ε multiplies both
    weight gradients' chain once)."""
    c = branch_gradient_moment(width, None, batch=batch)
    if kind == "plain":
        return depth * c
    e = eps_for_depth(kind, depth)
    return depth * e * e * (1 + e * e) ** (depth - 1) * c


def relu_correlation_map(c: Real) -> float:
    """ρ(c) = (√(1−c²) + (π − arccos c)·c)/π: the cosine of relu(u), relu(u') for jointly Gaussian
    pre-activations of cosine c, normalized by E[relu(u)²] (the degree-1 arc-cosine kernel of Cho &
    Saul, 2009). A linear layer after it keeps the cosine, so one branch maps c → ρ(c)."""
    c = max(-1.0, min(1.0, c))
    return (math.sqrt(1 - c * c) + (math.pi - math.acos(c)) * c) / math.pi


def predicted_cosine(kind, depth: Depth, c0: Real) -> float:
    """Cosine of x_N, x'_N for inputs of cosine c0, mean field. Plain: c ← ρ(c) per layer (tends
    to 1: every input ends up in the same direction). Residual: E[(x + εf)·(x' + εf')] =
    x·x' + ε² f·f' and ‖x + εf‖² = (1 + ε²)‖x‖², so c ← (c + ε²ρ(c))/(1 + ε²)."""
    c = c0
    e2 = None if kind == "plain" else eps_for_depth(kind, depth) ** 2
    for _ in range(depth):
        c = relu_correlation_map(c) if e2 is None else (c + e2 * relu_correlation_map(c)) / (1 + e2)
    return c


def layer_gradients(
    kind: str | float, width: Count, depth: Depth, *, batch: Count, seed: Seed = 0, device=None
) -> list[float]:
    """‖∂L/∂θ_l‖² per layer l = 1..N at initialization, L = Σ_b x_N,b·r_b/B (r ~ N(0, I)), in
    float64 (ε = 1 at N = 300 reaches ~2^300 without overflow)."""
    _check_probe(width, depth, batch, None, device, bytes_each=8)
    stack = build_stack(kind, width, depth, seed, None, device, torch.float64)
    dev = next(stack.parameters()).device
    gen = generator(seed + 1, dev)
    x = torch.randn(batch, width, generator=gen, device=dev, dtype=torch.float64)
    r = torch.randn(batch, width, generator=gen, device=dev, dtype=torch.float64)
    (stack(x) * r).sum().div(batch).backward()
    return [sum(float(p.grad.pow(2).sum()) for p in f.parameters()) for f in stack.blocks]


@dataclass
class GradientSweep:
    """Experiment 1: one plain stack's per-layer moments, and ‖∇_θL‖² at init of every stack kind
    (one per seed) against :func:`predicted_total_gradient`, per (kind, width, N)."""

    moments: PlainMoments  # the plain stack width ↔ hidden, depth ``moment_depth``
    moment_width: Count
    moment_hidden: Count
    moment_depth: Depth
    moment_batch: Count
    kinds: tuple[str, ...]
    widths: tuple[int, ...]
    depths: tuple[int, ...]
    seeds: Repeats
    samples: dict[tuple, list[float]]  # (kind, width, N) → measured ‖∇_θL‖², one per seed
    predicted: dict[tuple, float]  # (kind, width, N) → mean-field prediction

    @property
    def totals(self) -> dict[tuple, float]:
        """The median measured ‖∇_θL‖² over seeds per (kind, width, N)."""
        return {key: float(np.median(values)) for key, values in self.samples.items()}

    @property
    def ratio(self) -> dict[tuple, float]:
        """median measured / predicted per (kind, width, N)."""
        return {key: t / self.predicted[key] for key, t in self.totals.items()}

    def sample_ratios(self, key: tuple) -> list[float]:
        """measured / predicted for each seed at ``key`` = (kind, width, N)."""
        return [t / self.predicted[key] for t in self.samples[key]]


def gradient_sweep(budget: Budget) -> GradientSweep:
    """Experiment 1 at the budget's sizes."""
    rb = sizes(budget)
    width, depth = rb.train_width, rb.grad_depths[0]
    hidden = rb.moment_hidden_factor * width
    moments = plain_moments(width, hidden, depth, batch=rb.moment_batch)
    keys = [(k, w, n) for k in STACK_KINDS for w in rb.grad_widths for n in rb.grad_depths]
    samples = {
        (k, w, n): [float(sum(layer_gradients(k, w, n, batch=rb.grad_batch, seed=s))) for s in range(rb.grad_seeds)]
        for k, w, n in keys
    }
    predicted = {(k, w, n): predicted_total_gradient(k, w, n, batch=rb.grad_batch) for k, w, n in keys}
    return GradientSweep(
        moments,
        width,
        hidden,
        depth,
        rb.moment_batch,
        STACK_KINDS,
        rb.grad_widths,
        rb.grad_depths,
        rb.grad_seeds,
        samples,
        predicted,
    )


BRANCH_SEEDS = 5  # random branches whose ∂f/∂x spectrum is read (each one SVD at the widest width)


@dataclass
class GrowthSweep:
    """Experiment 2: Jacobian probes of every kind, width and depth, and the two checks of Su's
    premise at the widest width (one branch's singular values; cosines under an orthogonal matrix)."""

    widths: tuple[int, ...]
    depths: tuple[int, ...]
    probes: dict[tuple, JacobianProbe]  # (width, kind, N) → probe
    singular_values: list[list[float]]  # per random branch (seed): the singular values of its ∂f/∂x, widest width
    orthogonal: dict[str, float]  # orthogonal_cosines at the widest width

    @property
    def wide(self) -> int:
        return self.widths[-1]

    @property
    def deepest(self) -> int:
        return self.depths[-1]


def growth_sweep(budget: Budget) -> GrowthSweep:
    """Experiment 2 at the budget's sizes (width 1 gets ``width1_batch_factor`` × the probe batch)."""
    rb = sizes(budget)
    probes = {
        (w, k, n): jacobian_growth(k, w, n, batch=rb.probe_batch * (rb.width1_batch_factor if w == 1 else 1))
        for w in rb.widths
        for k in STACK_KINDS
        for n in rb.depths
    }
    wide = rb.widths[-1]
    spectra = [branch_jacobian_singular_values(wide, seed=s) for s in range(BRANCH_SEEDS)]
    return GrowthSweep(rb.widths, rb.depths, probes, spectra, orthogonal_cosines(wide))


# ---- the probes' work, for the chapter's estimate ------------------------------------------------------

LAYERS_PER_BLOCK = 2  # W1 and W2 of a block: a stack of N blocks counts as an MLP of 2N square layers


def _growth_probe(kind, width: int, depth: int, batch: int) -> None:
    """One :func:`jacobian_growth` on the CPU, as :class:`~deepnotes.cost.model.ProbeCalls` counts it."""
    jacobian_growth(kind, width, depth, batch=batch, device="cpu")


def growth_probe_calls(kinds, width: Count, depth: Depth, batch: Count) -> list[ProbeCalls]:
    """One :func:`jacobian_growth` per kind, counted by running it (a forward and a vector-Jacobian pass, no
    autograd, and its per-block read-backs of cosines, ratios and the running median); a plain stack has no
    ``v +`` and counts apart."""
    return [ProbeCalls(_growth_probe, (kind, width), depth, batch) for kind in kinds]


def probes_work(budget: Budget) -> list[MLPPasses | ProbeCalls]:
    """What the probes above compute at ``budget``, as :mod:`deepnotes.cost.model` counts it (float64 work as
    float32 passes):

        gradient_sweep   layer_gradients: one forward + backward per kind, grad width, grad depth and seed
                         (grad_seeds) on grad_batch inputs
        growth_sweep     :func:`growth_probe_calls` per width, kind and depth on probe_batch inputs
                         (× width1_batch_factor at width 1)"""
    rb = sizes(budget)
    return [
        *(
            MLPPasses(
                width=w,
                depth=LAYERS_PER_BLOCK * n,
                batch=rb.grad_batch,
                passes=len(STACK_KINDS) * rb.grad_seeds,
                backward=True,
            )
            for w in rb.grad_widths
            for n in rb.grad_depths
        ),
        *(
            probe
            for w in rb.widths
            for n in rb.depths
            for probe in growth_probe_calls(
                STACK_KINDS, w, n, rb.probe_batch * (rb.width1_batch_factor if w == 1 else 1)
            )
        ),
    ]
