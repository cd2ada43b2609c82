"""Probes of the chapter "Magnitude decomposition and the DeepNorm scalings": the decomposition
W = λU of a matrix, the scalar gradient ∂L/∂λ = ⟨∂L/∂W, U⟩ in real DeepNorm stacks, how close the
stack starts to the identity, and the size of the first update. They measure and return numbers
(dataclasses); :mod:`.figures` draws them and :mod:`.claims` judges them. Sizes and rates come from
``sizes(budget)``.

Convention: Su writes a sublayer as x·W (W is d_in × d_out); a PyTorch ``nn.Linear`` stores
Wᵀ. The Frobenius λ below is the same for W and Wᵀ (tr(WWᵀ)ᵏ = tr(WᵀW)ᵏ), so either can be passed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

from deepnotes.chapters.magnitude_decomposition.budget import sizes
from deepnotes.core import scaling
from deepnotes.core.config import Budget, check_allocation
from deepnotes.core.config import device as default_device
from deepnotes.core.data import MarkovLanguage, generator
from deepnotes.core.data import probe_batch as core_probe_batch
from deepnotes.core.models import build_model
from deepnotes.core.validate import (
    AtLeastTwo,
    Count,
    Depth,
    NonNegativeCount,
    Positive,
    Real,
    Repeats,
    Seed,
    choice,
    given,
)
from deepnotes.cost.model import Builds, ReferencePasses, StackPasses

NORMS = ("fro", "spectral")
KINDS = ("q", "k", "v", "o", "fc1", "fc2")  # the six matrices of a block
BETA_KINDS = ("v", "o", "fc1", "fc2")  # those DeepNet initializes with gain β (= λ)
LABELS = {"lambda=1/alpha": "λ=1/α", "alpha=1": "α=1", "lambda=1": "λ=1", "paper": "paper"}  # for legends
CHECK_ALPHA, CHECK_LAMBDA = 2.0, 0.3  # the (α, λ) of the autograd check: any values do
CHECK_BLOCK = 1  # its block (the second)


def _check_norm(norm: str) -> None:
    choice("norm", norm, NORMS)


def _checked_matrix(w: torch.Tensor) -> torch.Tensor:
    """``w`` as a float64 matrix [a, b] with finite, not all zero entries: λ = ‖WWᵀ‖_F/‖W‖_F and every κ of the
    decomposition are 0/0 for W = 0 (W = λU has no magnitude to find), refused by name rather than NaN."""
    if not isinstance(w, torch.Tensor) or w.dim() != 2 or not w.is_floating_point():
        raise ValueError(f"w must be a floating-point matrix [rows, cols], got {getattr(w, 'shape', type(w).__name__)}")
    w = w.detach().double()
    if not bool(torch.isfinite(w).all()):
        raise ValueError("w must have finite entries (it holds NaN or inf)")
    if not bool(w.any()):
        raise ValueError(f"w is a zero matrix {tuple(w.shape)}: W = λU has no magnitude λ to find (0/0)")
    return w


def lambda_closed_form(w: torch.Tensor, norm: str = "fro") -> float:
    """λ = argmin_κ ‖WWᵀ/κ² − I‖ in closed form (w: [a, b]).

    fro:      λ² = tr((WWᵀ)²)/tr(WWᵀ) = ‖WWᵀ‖_F²/‖W‖_F²   (SymPy: ``derive.magnitude_lambda``)
    spectral: λ² = (μ_max + μ_min)/2, μ the eigenvalues of WWᵀ (the minimax of |μ/κ² − 1|)
    """
    _check_norm(norm)
    w = _checked_matrix(w)
    gram = w @ w.T  # [a, a]
    if norm == "fro":
        return float((gram.pow(2).sum() / gram.trace()).sqrt())
    mu = torch.linalg.eigvalsh(gram)
    return float(((mu.max() + mu.min().clamp_min(0)) / 2).sqrt())


def lambda_eq27(w: torch.Tensor) -> float:
    """The annotated eq. (27): λ = ‖W‖_F/√d with d the size of WWᵀ (w: [d, b])."""
    return float(_checked_matrix(w).norm() / math.sqrt(w.shape[0]))


def decomposition_objective(w: torch.Tensor, kappa: Positive, norm: str = "fro") -> float:
    """‖WWᵀ/κ² − I‖ in the Frobenius or the spectral norm."""
    _check_norm(norm)
    w = _checked_matrix(w)
    r = w @ w.T / kappa**2 - torch.eye(w.shape[0], dtype=w.dtype)
    return float(r.norm() if norm == "fro" else torch.linalg.eigvalsh(r).abs().max())


def lambda_numeric(w: torch.Tensor, norm: str = "fro", iters: Repeats = 200) -> float:
    """Minimize ``decomposition_objective`` over log κ by golden-section search on
    [λ₂₇/100, 100·λ₂₇] (the objective is unimodal in κ: a parabola / a convex max in 1/κ²)."""
    lo, hi = math.log(lambda_eq27(w) / 100), math.log(lambda_eq27(w) * 100)
    phi = (math.sqrt(5) - 1) / 2

    def f(u):
        return decomposition_objective(w, math.exp(u), norm)

    a, b = hi - phi * (hi - lo), lo + phi * (hi - lo)
    fa, fb = f(a), f(b)
    for _ in range(iters):
        if fa < fb:
            hi, b, fb = b, a, fa
            a = hi - phi * (hi - lo)
            fa = f(a)
        else:
            lo, a, fa = a, b, fb
            b = lo + phi * (hi - lo)
            fb = f(b)
    return math.exp((lo + hi) / 2)


@dataclass(frozen=True)
class DecompositionRow:
    shape: tuple[int, int]
    gain: Positive
    closed: Real  # Frobenius λ, closed form
    numeric: Real  # Frobenius λ, golden-section search
    spectral_closed: Real
    spectral_numeric: Real
    eq27: Real  # the annotated eq. (27)
    xavier_predicted: Real  # √(2g²(a+b+1)/(a+b)), SymPy's expectation


def decomposition_table(shapes=None, gains=(1.0, 0.25), seed: Seed = 0, *, budget: Budget):
    """λ of Xavier-normal matrices (gain g, std g·√(2/(a+b))) by every route, one row per shape × gain;
    ``shapes`` default to the budget's ``table_shapes``."""
    shapes = given(shapes, sizes(budget).table_shapes)
    gen = generator(seed)
    rows = []
    for a, b in shapes:
        for g in gains:
            w = torch.randn(a, b, generator=gen, dtype=torch.float64) * g * math.sqrt(2 / (a + b))
            rows.append(
                DecompositionRow(
                    (a, b),
                    g,
                    lambda_closed_form(w),
                    lambda_numeric(w),
                    lambda_closed_form(w, "spectral"),
                    lambda_numeric(w, "spectral"),
                    lambda_eq27(w),
                    math.sqrt(2 * g**2 * (a + b + 1) / (a + b)),
                )
            )
    return rows


@dataclass(frozen=True)
class Orthogonality:
    """How orthogonal a square Xavier-normal matrix W (d × d, entries N(0, 1/d)) is."""

    d: Count
    mean_abs_cos: float  # mean |cos| between distinct rows (≈ √(2/(πd)) for random directions)
    mu_min: float  # extreme eigenvalues of WWᵀ/λ_F² (all 1 for an orthogonal matrix;
    mu_max: float  # Marchenko-Pastur spreads them over about [0, 2])


def xavier_orthogonality(d: AtLeastTwo | None = None, seed: Seed = 0, *, budget: Budget) -> Orthogonality:
    """Row cosines and the spectrum of WWᵀ/λ_F² for one draw of W (d: the budget's ``orthogonality_dim``)."""
    d = given(d, sizes(budget).orthogonality_dim)
    check_allocation(6 * d * d, {"d": d}, bytes_each=8)  # W, its rows, their cosines, WWᵀ and eigvalsh's copies
    w = torch.randn(d, d, generator=generator(seed), dtype=torch.float64) / math.sqrt(d)  # [d, d]
    rows = w / w.norm(dim=1, keepdim=True)
    cos = (rows @ rows.T - torch.eye(d, dtype=w.dtype)).abs()  # [d, d]
    mu = torch.linalg.eigvalsh(w @ w.T / lambda_closed_form(w) ** 2)
    return Orthogonality(d, float(cos.sum() / (d * (d - 1))), float(mu.min()), float(mu.max()))


# ---- ∂L/∂λ in a real stack -------------------------------------------------------------------------


def block_linears(block) -> dict[str, torch.nn.Linear]:
    """The block's six linear maps by kind (an MLP block has only fc1, fc2)."""
    out = {"fc1": block.ffn.fc1, "fc2": block.ffn.fc2}
    if block.attn is not None:
        att = block.attn
        out = {"q": att.q_proj, "k": att.k_proj, "v": att.v_proj, "o": att.out_proj, **out}
    return out


def block_weights(block) -> dict[str, torch.Tensor]:
    """The block's weight matrices by kind, each [d_out, d_in]."""
    return {kind: lin.weight for kind, lin in block_linears(block).items()}


def probe_batch(budget: Budget, seed: Seed, device) -> torch.Tensor:
    """The budget's probe batch ``seed`` [B, T] of the Markov language (task seed 0)."""
    return core_probe_batch(MarkovLanguage(budget.vocab_size, seed=0), budget.batch_size, budget.seq_len, seed, device)


def deepnorm_model(
    n_layers: Depth, alpha: Positive, lam: Positive, budget: Budget, seed: Seed = 0, device=None, dtype=None
):
    """The budget's DeepNorm Transformer with skip weight α and init gain λ on v/out/FFN."""
    return build_model(
        budget.model_config(n_layers, norm="deepnorm", alpha=alpha, beta=lam),
        seed=seed,
        device=device or default_device(),
        dtype=dtype,
    )


def lambda_gradients(model, tokens: torch.Tensor) -> dict[str, list[float]]:
    """∂L/∂λ = ⟨∂L/∂W, U⟩ with U = W/λ_F(W), per kind and block (one backward of the LM loss)."""
    model.zero_grad(set_to_none=True)
    model.loss(tokens).backward()
    out: dict[str, list[float]] = {}
    for block in model.blocks:
        for kind, w in block_weights(block).items():
            u = w.detach() / lambda_closed_form(w)
            out.setdefault(kind, []).append(float((w.grad * u).sum()))
    model.zero_grad(set_to_none=True)
    return out


def lambda_gradient_by_autograd(
    model, tokens: torch.Tensor, block: NonNegativeCount = 0, kind: str = "fc1"
) -> tuple[float, float]:
    """(∂L/∂λ by autograd through W = λU, ⟨∂L/∂W, U⟩) for one matrix: the identity, checked."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; allowed: {', '.join(KINDS)}")
    if block >= len(model.blocks):
        raise ValueError(
            f"block={block} is not a block of this model: it has {len(model.blocks)} (0 to {len(model.blocks) - 1})"
        )
    linear = block_linears(model.blocks[block])[kind]
    w0 = linear.weight
    lam0 = lambda_closed_form(w0)
    u = w0.detach() / lam0
    scale = torch.tensor(lam0, dtype=w0.dtype, device=w0.device, requires_grad=True)
    del linear.weight
    linear.weight = scale * u  # W = λU, with λ a leaf
    try:
        loss = model.loss(tokens)
    finally:
        del linear.weight
        linear.weight = w0  # the parameter back in place
    (d_scale,) = torch.autograd.grad(loss, scale)
    model.zero_grad(set_to_none=True)
    model.loss(tokens).backward()
    inner = float((w0.grad * u).sum())
    model.zero_grad(set_to_none=True)
    return float(d_scale), inner


def autograd_identity_check(budget: Budget) -> dict[str, tuple[float, float]]:
    """kind → (∂L/∂λ by autograd, ⟨∂L/∂W, U⟩) for the six matrices of block 2 of a float64 DeepNorm
    stack of the budget's ``check_depth`` on CPU."""
    model = deepnorm_model(
        sizes(budget).check_depth, CHECK_ALPHA, CHECK_LAMBDA, budget, device="cpu", dtype=torch.float64
    )
    tokens = probe_batch(budget, 0, "cpu")
    return {k: lambda_gradient_by_autograd(model, tokens, block=CHECK_BLOCK, kind=k) for k in KINDS}


def largest_relative_gap(pairs: dict[str, tuple[float, float]]) -> float:
    """max |a − b|/|b| over the pairs of :func:`autograd_identity_check`."""
    return max(abs(a - b) / abs(b) for a, b in pairs.values())


@dataclass
class GradientSweep:
    """rms[kind][i][j]: RMS over blocks and seeds of ∂L/∂λ at alphas[i], lambdas[j]; per_seed[kind][s][i][j]:
    the same over the blocks of seed s alone (what the verdicts judge, seed by seed)."""

    n_layers: Depth
    alphas: tuple[float, ...]
    lambdas: tuple[float, ...]
    rms: dict[str, list[list[float]]]
    per_seed: dict[str, list[list[list[float]]]] = field(default_factory=dict)

    @property
    def seeds(self) -> int:
        """How many initializations per (α, λ) the sweep holds one by one (0 where it kept only the pooled RMS)."""
        return len(next(iter(self.per_seed.values()), []))

    def series(self, kind: str, seed: int | None = None) -> tuple[list[float], list[float]]:
        """(λ/α, measured) over the whole grid, for a log-log fit against the O(λ/α) prediction: pooled
        over the seeds, or of one ``seed``."""
        grid = self.rms[kind] if seed is None else self.per_seed[kind][seed]
        xs = [lam / a for a in self.alphas for lam in self.lambdas]
        ys = [v for row in grid for v in row]
        return xs, ys


def lambda_gradient_sweep(
    budget: Budget,
    n_layers: Depth | None = None,
    alphas=None,
    lambdas=None,
    seeds: Repeats | None = None,
    device=None,
) -> GradientSweep:
    """∂L/∂λ of every matrix in DeepNorm stacks over a grid of (α, λ), float64, at initialization."""
    seeds = given(seeds, sizes(budget).probe_seeds)
    n_layers = given(n_layers, sizes(budget).probe_depth)
    alphas, lambdas = (
        tuple(given(alphas, sizes(budget).alphas)),
        tuple(given(lambdas, sizes(budget).lambdas)),
    )
    device = device or default_device()
    rms = {k: [[0.0] * len(lambdas) for _ in alphas] for k in KINDS}
    per_seed = {k: [[[0.0] * len(lambdas) for _ in alphas] for _ in range(seeds)] for k in KINDS}
    for i, a in enumerate(alphas):
        for j, lam in enumerate(lambdas):
            acc: dict[str, list[float]] = {}
            for s in range(seeds):
                model = deepnorm_model(n_layers, a, lam, budget, seed=s, device=device, dtype=torch.float64)
                for kind, vals in lambda_gradients(model, probe_batch(budget, s, device)).items():
                    acc.setdefault(kind, []).extend(vals)
                    per_seed[kind][s][i][j] = math.sqrt(sum(v * v for v in vals) / len(vals))
            for kind, vals in acc.items():
                rms[kind][i][j] = math.sqrt(sum(v * v for v in vals) / len(vals))
    return GradientSweep(n_layers, alphas, lambdas, rms, per_seed)


# ---- near-identity at initialization ---------------------------------------------------------------


@torch.no_grad()
def block_changes(
    n_layers: Depth, alpha: Positive, lam: Positive, budget: Budget, seed: Seed = 0, device=None
) -> list[float]:
    """‖x_{l+1} − x_l‖/‖x_l‖ (RMS over the batch) for each block l = 0..N−1 at initialization."""
    device = device or default_device()
    model = deepnorm_model(n_layers, alpha, lam, budget, seed=seed, device=device)
    _, stream = model.hidden(probe_batch(budget, seed, device), return_stream=True)  # N+1 × [B, T, d]
    return [float((y - x).norm() / x.norm()) for x, y in zip(stream[:-1], stream[1:], strict=True)]


def mean_change(changes: list[float]) -> float:
    """Mean of ‖x_{l+1} − x_l‖/‖x_l‖ over blocks 2..N. Block 1 is left out: its LayerNorm also
    normalizes the raw embedding x_0 (per-token mean and scale fluctuate by O(1/√d)), a change that
    has nothing to do with the branch weight λ²/α."""
    tail = changes[1:] or changes
    return sum(tail) / len(tail)


def choices(n_layers: Depth, optimizer: str) -> dict[str, tuple[float, float]]:
    """The (α, λ) choices compared in the chapter: the three picks of the magnitude analysis for
    ``optimizer`` and DeepNet's encoder constants."""
    out = {pick: scaling.magnitude_solution(n_layers, optimizer, pick) for pick in scaling.PICKS}
    out["paper"] = scaling.deepnorm_coefficients(n_layers)
    return out


def first_step_relative_update(
    n_layers: Depth,
    alpha: Positive,
    lam: Positive,
    optimizer: str,
    lr: Positive,
    budget: Budget,
    seed: Seed = 0,
    device=None,
) -> float:
    """‖ΔW‖_F/‖W‖_F of the first optimizer step, over the β-scaled matrices (v, o, fc1, fc2) of all
    blocks. The analysis predicts: SGD ∝ (λ/α)/λ = 1/α; Adam ∝ 1/λ; LAMB = η whatever α and λ."""
    from deepnotes.core.config import TrainConfig
    from deepnotes.core.engine import stack_of
    from deepnotes.core.optim import EnsembleOptimizer

    device = device or default_device()
    stack = stack_of(
        [deepnorm_model(n_layers, alpha, lam, budget, seed=seed, device=device, dtype=torch.float64)], [seed]
    )
    before = [w.detach().clone() for w in stack.beta_scaled()]
    opt = EnsembleOptimizer(stack, [TrainConfig(optimizer=optimizer, lr=lr)])
    stack.next_token_losses(probe_batch(budget, seed, device).unsqueeze(0)).sum().backward()
    opt.step(0)
    num = sum(float((w.detach() - w0).pow(2).sum()) for w, w0 in zip(stack.beta_scaled(), before, strict=True))
    den = sum(float(w0.pow(2).sum()) for w0 in before)
    return math.sqrt(num / den)


@dataclass(frozen=True)
class FirstStep:
    alpha: Positive
    lam: Positive
    relative_update: float  # ‖ΔW‖_F/‖W‖_F of the first step over the β-scaled matrices
    lr: Positive


def first_step_sweep(budget: Budget, device=None) -> dict[tuple[str, int, str], FirstStep]:
    """(optimizer, depth, choice) → the first step at the budget's ``first_step_lrs``, over its update depths."""
    mb = sizes(budget)
    return {
        (opt, n, label): FirstStep(a, lam, first_step_relative_update(n, a, lam, opt, lr, budget, device=device), lr)
        for opt, lr in mb.first_step_lrs.items()
        for n in mb.update_depths
        for label, (a, lam) in choices(n, opt).items()
    }


def predicted_relative_update(optimizer: str, alpha: Positive, lam: Positive) -> float:
    """The analysis' first-step ‖ΔW‖/‖W‖ up to a constant: SGD ‖∇‖/‖W‖ ∝ (λ/α)/λ = 1/α;
    Adam ≈ η·√P/(λ√P) ∝ 1/λ; LAMB exactly η (returned as 1)."""
    if optimizer == "sgd":
        return 1 / alpha
    if optimizer == "adam":
        return 1 / lam
    if optimizer == "lamb":
        return 1.0
    raise ValueError(f"unknown optimizer {optimizer!r}; allowed: sgd, adam, lamb")


@dataclass(frozen=True)
class IdentityProbe:
    alpha: Positive
    lam: Positive
    changes: list[float]  # ‖x_{l+1} − x_l‖/‖x_l‖ per block at init
    key: str  # the setting's key in deepnotes.show.palette.PALETTE

    @property
    def branch_weight(self) -> float:
        return scaling.branch_weight(self.alpha, self.lam)

    @property
    def mean_change(self) -> float:
        return mean_change(self.changes)


def identity_settings(n_layers: Depth) -> dict[str, tuple[str, tuple[float, float]]]:
    """label → (key, (α, λ)) of :func:`identity_sweep`: SGD's three picks, Su's Adam constants (LAMB's α = 1
    pick equals SGD's), the paper's, and Post-LN (α = λ = 1) for contrast."""
    settings = {f"SGD {LABELS[k]}": (k, v) for k, v in choices(n_layers, "sgd").items() if k != "paper"}
    settings[f"Adam {LABELS['lambda=1/alpha']}"] = ("deepnorm/adam", scaling.magnitude_solution(n_layers, "adam"))
    settings["paper"] = ("paper", scaling.deepnorm_coefficients(n_layers))
    settings["post-LN"] = ("post", (1.0, 1.0))
    return settings


def identity_sweep(budget: Budget, n_layers: Depth | None = None, device=None) -> dict[str, IdentityProbe]:
    """label → per-block ‖x_{l+1} − x_l‖/‖x_l‖ at init for every setting of :func:`identity_settings`."""
    n = given(n_layers, sizes(budget).identity_depth)
    return {
        label: IdentityProbe(a, lam, block_changes(n, a, lam, budget, device=device), key)
        for label, (key, (a, lam)) in identity_settings(n).items()
    }


HOMOGENEITY_SCALES = (0.5, 2.0)  # λ at which φ(λx) is compared with λφ(x)
HOMOGENEITY_SAMPLES = 200_000  # draws of x ~ N(0, 1)


def activation_homogeneity(seed: Seed = 0) -> dict[str, dict[float, float]]:
    """How far GELU and Swish are from positive homogeneity φ(λx) = λφ(x) (exact for ReLU): per
    activation and λ, the relative RMS deviation ‖φ(λx) − λφ(x)‖ / ‖λφ(x)‖ over x ~ N(0, 1), float64."""
    x = torch.randn(HOMOGENEITY_SAMPLES, generator=generator(seed), dtype=torch.float64)  # [S]
    acts = {"GELU": torch.nn.functional.gelu, "Swish": torch.nn.functional.silu}
    return {
        name: {lam: float((f(lam * x) - lam * f(x)).norm() / (lam * f(x)).norm()) for lam in HOMOGENEITY_SCALES}
        for name, f in acts.items()
    }


def attention_average(tokens: Count = 64, width: Count = 32, draws: Repeats = 100, seed: Seed = 0) -> dict[str, float]:
    """For ``tokens`` independent N(0, I) vectors v_i of ``width``: the largest ‖Σ_i p_i v_i‖ / max_i ‖v_i‖
    over ``draws`` random softmax weights p (scores N(0, 9): from peaked to spread), and
    ‖Σ_i v_i/T‖ / mean_i ‖v_i‖ with uniform weights (attention spread evenly)."""
    typed = {"tokens": tokens, "width": width, "draws": draws}
    check_allocation(tokens * width + 2 * draws * tokens + draws * width, typed, bytes_each=8)
    gen = generator(seed)
    v = torch.randn(tokens, width, generator=gen, dtype=torch.float64)  # [T, d]
    p = torch.softmax(3 * torch.randn(draws, tokens, generator=gen, dtype=torch.float64), dim=1)  # [K, T]
    norms = v.norm(dim=1)  # [T]
    return {
        "bound": float((p @ v).norm(dim=1).max() / norms.max()),
        "uniform": float(v.mean(0).norm() / norms.mean()),
        "tokens": tokens,
    }


def sign_values() -> set[float]:
    """The values sign(g) takes in Adam's large-step limit, on gradients of each sign and zero."""
    return {float(s) for s in torch.sign(torch.tensor([-2.0, 0.0, 3.0]))}


# ---- the probes' work, for the chapter's estimate ------------------------------------------------------


def probes_work(budget: Budget) -> list[Builds | ReferencePasses | StackPasses]:
    """What the probes above compute at ``budget``, as :mod:`deepnotes.cost.model` counts it (every stack a
    DeepNorm stack: α and λ change no count; the float64 probes counted as float32 passes):

        lambda_gradient_sweep   per (α, λ) of the grid and seed: a reference model of probe_depth blocks built,
                                one forward + backward of its modules on batch_size × seq_len tokens
        first_step_sweep        per optimizer, update depth and choice: a reference model built, loaded into a
                                one-member Stack, one forward + backward on PyTorch's path (the optimizer step's
                                few operators per matrix left out)
        identity_sweep          per setting of :func:`identity_settings`: a reference model built, one forward of
                                its modules keeping the stream (no gradients)

    Left out as small: the decomposition table and the orthogonality check (CPU matrices of at most
    128 × 128), the autograd check (check_depth blocks, three passes per matrix kind), the Python loops that
    read each matrix's ∂L/∂λ."""
    mb = sizes(budget)
    b, t = budget.batch_size, budget.seq_len

    def model(n_layers: int):
        return budget.model_config(n_layers, norm="deepnorm")

    grid = len(mb.alphas) * len(mb.lambdas) * mb.probe_seeds
    identity = len(identity_settings(mb.identity_depth))
    return [
        Builds(model(mb.probe_depth), grid),
        ReferencePasses(model(mb.probe_depth), b, t, passes=grid),
        *(
            w
            for opt in mb.first_step_lrs
            for n in mb.update_depths
            for w in [
                Builds(model(n), len(choices(n, opt))),
                StackPasses(model(n), 1, b, t, passes=len(choices(n, opt)), compiled=False),
            ]
        ),
        Builds(model(mb.identity_depth), identity),
        ReferencePasses(model(mb.identity_depth), b, t, passes=identity, backward=False),
    ]
