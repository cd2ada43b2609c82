"""Residual stacks with one switch for the normalization style.

A sublayer F (attention or FFN) sits in a :class:`Residual` wrapper whose ``norm`` picks

    post      x ← LN(x + F(x))                 (original Transformer, BERT)
    deepnorm  x ← LN(α·x + F(x))               (DeepNet; α on the skip path, not on F)
    pre       x ← x + F(LN(x))                 (GPT-2 onwards)
    none      x ← x + F(x)                     (no normalization at all)
    rezero    x ← x + g·F(x), g learnable, 0 at init  (ReZero; SkipInit without the BN)

Weights are Xavier-normal. The v-projection, the out-projection and both FFN matrices get gain β
(DeepNet's pseudocode: ``xavier_normal_(w, gain=β)``), q and k gain 1; biases start at 0.
Layers are built in a loop, each with its own weights.

``causal=False`` builds BERT's encoder: token + learned position embeddings followed by a LayerNorm,
an extra [MASK] token, and an output head tied to the token embedding (logits = h·Eᵀ + b).

Initialization shared by the chapters: BERT's truncated normal (cut at ±kσ) and Gaussian second
moments of an activation.

Second moments, not variances: for y_j = Σ_i x_i w_ij with i.i.d. zero-mean w independent of x,
E[y_j²] = m·E[w²]·E[x²] whatever the mean of x (seed 002, "稳定二阶矩"). Through an activation φ,
with pre-activations y ~ N(0, q), the next second moment is E_z[φ(√q z)²], z ~ N(0, 1).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import math
from collections.abc import Callable, Iterator

import torch
import torch.nn.functional as F
from torch import nn

from deepnotes.core.config import NORM_STYLES, ModelConfig, check_allocation, check_fits, checked_device
from deepnotes.core.data import seeded
from deepnotes.core.validate import Count, Finite, NonNegative, Positive, Real, Repeats, Seed, choice


def truncated_normal_variance_factor(k: Positive = 2.0) -> float:
    """γ(k) = Var of N(0,1) truncated to [−k, k] = 1 − 2kφ(k)/(2Φ(k) − 1); γ(2) = 0.77374…"""
    if not k > 0:
        raise ValueError(f"truncation k must be > 0, got {k!r}")
    phi = math.exp(-k * k / 2) / math.sqrt(2 * math.pi)
    mass = math.erf(k / math.sqrt(2))  # 2Φ(k) − 1
    return 1 - 2 * k * phi / mass


@torch.no_grad()
def trunc_normal_(
    tensor: torch.Tensor,
    std: Positive,
    k: Positive = 2.0,
    match_std: bool = False,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Fill ``tensor`` from N(0, σ²) truncated at ±kσ (relative to σ, unlike
    ``torch.nn.init.trunc_normal_``, whose a=−2, b=2 are absolute), by the inverse CDF:

        u ~ U(2Φ(−k) − 1, 2Φ(k) − 1),   x = σ·√2·erfinv(u)   (then clamped to ±kσ against rounding)

    one uniform draw per entry (torch's own redraws the whole tensor until no entry falls outside:
    about 7 rounds at BERT-base's 768 × 3072, ten times as long). ``match_std=True`` passes σ/√γ(k) so
    that the result has standard deviation σ.
    """
    if std < 0:
        raise ValueError(f"std must be >= 0, got {std!r}")
    if not k > 0:
        raise ValueError(f"truncation k must be > 0, got {k!r}")
    sigma = std / math.sqrt(truncated_normal_variance_factor(k)) if match_std else std
    edge = math.erf(k / math.sqrt(2))  # 2Φ(k) − 1
    tensor.uniform_(-edge, edge, generator=generator).erfinv_().mul_(sigma * math.sqrt(2))
    return tensor.clamp_(-k * sigma, k * sigma)


def gaussian_second_moment(phi: Callable[[float], float], q: NonNegative = 1.0, n: Repeats = 4001) -> float:
    """E_z[φ(√q·z)²], z ~ N(0,1), by the trapezoid rule on [−10, 10] (error far below 1e-9); kept per
    (φ, q, n): the BERT chapter's figures ask for the same few q hundreds of times (16 ms each)."""
    return _gaussian_second_moment(phi, q, n)


@functools.lru_cache(maxsize=1024)
def _gaussian_second_moment(phi: Callable[[float], float], q: NonNegative = 1.0, n: Repeats = 4001) -> float:
    """The cache behind :func:`gaussian_second_moment`: the door checks the arguments there, before hashing."""
    h = 20.0 / (n - 1)
    total = 0.0
    for k in range(n):
        z = -10.0 + k * h
        w = 0.5 if k in (0, n - 1) else 1.0
        total += w * math.exp(-z * z / 2) * phi(math.sqrt(q) * z) ** 2
    return total * h / math.sqrt(2 * math.pi)


def relu(x: Real) -> float:
    """max(x, 0)."""
    return max(x, 0.0)


def gelu(x: Real) -> float:
    """x·Φ(x), the exact GELU (BERT's FFN activation)."""
    return x * 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


ACTIVATIONS: dict[str, Callable[[float], float]] = {"relu": relu, "gelu": gelu}


def ffn_branch_variance(q: NonNegative, activation: str = "gelu", ffn_ratio: Count = 4) -> float:
    """v_FFN = r·q·E[φ(h)²], h ~ N(0, q): the second moment that an FFN branch φ(xW₁)W₂ (d → r·d → d,
    i.i.d. weights of second moment s², q = d·s²) adds to a stream of second moment 1. ReLU gives
    r·q²/2 exactly; GELU, BERT's activation, by quadrature."""
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
    if not (math.isfinite(q) and q >= 0):
        raise ValueError(f"q must be a finite number >= 0, got {q!r}")
    return ffn_ratio * q * gaussian_second_moment(ACTIVATIONS[activation], q)


class SelfAttention(nn.Module):
    """Multi-head softmax attention: softmax(QKᵀ/√d_h)·V, then the out-projection."""

    def __init__(self, d_model: Count, n_heads: Count, causal: bool):
        super().__init__()
        check_allocation(4 * d_model * (d_model + 1), {"d_model": d_model})  # q, k, v, out
        self.n_heads = n_heads
        self.causal = causal
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape  # x: [B, T, d]
        h = self.n_heads

        def heads(y):  # [B, T, d] -> [B, h, T, d/h]
            return y.view(b, t, h, d // h).transpose(1, 2)

        y = F.scaled_dot_product_attention(
            heads(self.q_proj(x)), heads(self.k_proj(x)), heads(self.v_proj(x)), is_causal=self.causal
        )
        return self.out_proj(y.transpose(1, 2).reshape(b, t, d))  # [B, T, d]


class FeedForward(nn.Module):
    """φ(x W₁ + b₁) W₂ + b₂ with φ = ReLU (positively homogeneous, as the magnitude analysis assumes)
    or GELU (BERT)."""

    def __init__(self, d_model: Count, d_ff: Count, activation: str = "relu"):
        super().__init__()
        check_allocation(2 * d_model * d_ff + d_ff + d_model, {"d_model": d_model, "d_ff": d_ff})  # fc1, fc2
        self.fc1 = nn.Linear(d_model, d_ff)
        self.fc2 = nn.Linear(d_ff, d_model)
        self.act = F.gelu if activation == "gelu" else torch.relu

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.act(self.fc1(x)))  # [..., d] -> [..., d]


class Residual(nn.Module):
    """One sublayer with its skip path and norm; the only place the norm style branches
    ("plain" drops the skip path too: x ← F(x))."""

    def __init__(
        self, sublayer: nn.Module, d_model: Count, norm: str, alpha: Positive = 1.0, gate: NonNegative | None = None
    ):
        super().__init__()
        choice("norm", norm, NORM_STYLES)
        check_allocation(2 * d_model, {"d_model": d_model})  # the norm's gain and bias
        self.sublayer = sublayer
        self.norm_style = norm
        self.alpha = alpha
        self.norm = nn.LayerNorm(d_model) if norm in ("post", "deepnorm", "pre") else None
        gated = norm == "rezero" or gate is not None  # ReZero's gate starts at 0; another style's where ``gate`` says
        self.gate = nn.Parameter(torch.full((), float(gate or 0.0))) if gated else None

    def branch(self, u: torch.Tensor) -> torch.Tensor:
        """g·F(u) where the sublayer has a gate, else F(u)."""
        f = self.sublayer(u)
        return f if self.gate is None else self.gate * f

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        style = self.norm_style
        if style == "post":
            return self.norm(x + self.branch(x))  # LN(x + F(x)); g·F(x) where the branch has a gate
        if style == "deepnorm":
            return self.norm(self.alpha * x + self.branch(x))  # LN(αx + F(x))
        if style == "pre":
            return x + self.branch(self.norm(x))  # x + F(LN(x))
        if style == "plain":
            return self.sublayer(x)  # F(x): no skip path
        return x + self.branch(x)  # none: x + F(x); rezero: x + g·F(x), g from 0


class Block(nn.Module):
    """A Transformer block (attention then FFN) or an MLP block (FFN only), each sublayer residual."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        alpha = cfg.skip_alpha
        self.attn = SelfAttention(cfg.d_model, cfg.n_heads, cfg.causal) if cfg.block == "transformer" else None
        self.ffn = FeedForward(cfg.d_model, cfg.d_ff, cfg.activation)
        self.sublayers = nn.ModuleList(
            [Residual(m, cfg.d_model, cfg.norm, alpha, cfg.gate) for m in (self.attn, self.ffn) if m is not None]
        )
        self.reset_parameters(cfg.branch_beta, cfg.init_std)

    def beta_scaled_weights(self) -> list[torch.Tensor]:
        """The weights DeepNet initializes with gain β: v_proj, out_proj, fc1, fc2."""
        weights = [self.ffn.fc1.weight, self.ffn.fc2.weight]
        if self.attn is not None:
            weights = [self.attn.v_proj.weight, self.attn.out_proj.weight] + weights
        return weights

    def unit_gain_weights(self) -> list[torch.Tensor]:
        """The weights initialized with gain 1: q_proj, k_proj."""
        return [] if self.attn is None else [self.attn.q_proj.weight, self.attn.k_proj.weight]

    @torch.no_grad()
    def reset_parameters(self, beta: Finite, init_std: Finite | None = None) -> None:
        """Xavier-normal (gain β on v/out/FFN), or with ``init_std`` BERT's N(0, std²) cut at ±2σ."""
        for w in self.unit_gain_weights():
            trunc_normal_(w, init_std) if init_std is not None else nn.init.xavier_normal_(w, gain=1.0)
        for w in self.beta_scaled_weights():
            trunc_normal_(w, init_std) if init_std is not None else nn.init.xavier_normal_(w, gain=beta)
        for module in self.modules():
            if isinstance(module, nn.Linear):
                nn.init.zeros_(module.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for sublayer in self.sublayers:
            x = sublayer(x)
        return x


class TransformerLM(nn.Module):
    """Embedding → N blocks → (final LN for Pre-LN) → linear head: a causal language model, or with
    ``causal=False`` BERT's encoder (positions, embedding LN, head tied to the token embedding)."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        if not isinstance(cfg, ModelConfig):
            raise TypeError(f"a model is built from a ModelConfig, got {type(cfg).__name__}")
        if cfg.block != "transformer":
            raise ValueError(f"TransformerLM needs block='transformer', got {cfg.block!r}")
        check_fits(cfg)  # before the first layer is allocated
        self.cfg = cfg
        self.mask_id = cfg.vocab_size  # encoders get one extra token: [MASK]
        self.embed = nn.Embedding(cfg.vocab_size + (0 if cfg.causal else 1), cfg.d_model)
        self.positions = None if cfg.causal else nn.Embedding(cfg.max_len, cfg.d_model)
        self.embed_norm = nn.Identity() if cfg.causal else nn.LayerNorm(cfg.d_model)
        self.blocks = nn.ModuleList([Block(cfg) for _ in range(cfg.n_layers)])
        self.final_norm = nn.LayerNorm(cfg.d_model) if cfg.norm == "pre" else nn.Identity()
        self.head_transform = (
            nn.Sequential(nn.Linear(cfg.d_model, cfg.d_model), nn.GELU(), nn.LayerNorm(cfg.d_model))
            if cfg.head_transform
            else nn.Identity()
        )
        # BERT ties the MLM decoder to the token embedding and keeps only an output bias of its own
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size) if cfg.causal else None
        self.head_bias = None if cfg.causal else nn.Parameter(torch.zeros(cfg.vocab_size))
        with torch.no_grad():
            if cfg.head_transform:
                dense = self.head_transform[0]
                trunc_normal_(dense.weight, cfg.init_std) if cfg.init_std is not None else nn.init.xavier_normal_(
                    dense.weight
                )
                nn.init.zeros_(dense.bias)
            tables = [self.embed.weight] + ([] if self.positions is None else [self.positions.weight])
            for table in tables:
                if cfg.init_std is not None:  # BERT: embeddings like every matrix
                    trunc_normal_(table, cfg.init_std)
                else:
                    nn.init.normal_(table, std=1.0)  # unit-variance x_0, as the derivations assume
            if self.head is not None:
                trunc_normal_(self.head.weight, cfg.init_std) if cfg.init_std is not None else nn.init.xavier_normal_(
                    self.head.weight
                )
                nn.init.zeros_(self.head.bias)

    def hidden(self, tokens: torch.Tensor, return_stream: bool = False):
        """Final hidden states [B, T, d]; with ``return_stream`` also [x_0, x_1, …, x_N]. Token ids are checked as the
        loss checks them (an id past the vocabulary is refused by value, not torch's IndexError)."""
        check_tokens(tokens, self.cfg.vocab_size + (not self.cfg.causal))  # an encoder's [MASK] id is the last row
        x = self.embed(tokens)  # [B, T, d]
        if self.positions is not None:  # BERT: LN(token + position)
            x = self.embed_norm(x + self.positions.weight[: tokens.size(1)])
        stream = [x]
        for block in self.blocks:
            x = block(x)
            if return_stream:
                stream.append(x)
        x = self.final_norm(x)
        return (x, stream) if return_stream else x

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        h = self.head_transform(self.hidden(tokens))  # [B, T, d]
        if self.head is not None:
            return self.head(h)  # [B, T, V]
        return F.linear(h, self.embed.weight[: self.cfg.vocab_size], self.head_bias)  # tied: h·Eᵀ + b

    def mlm_loss(self, tokens: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Masked-token cross-entropy (nats): hide ``mask`` [B, T] behind [MASK], predict the originals."""
        if self.cfg.causal:
            raise ValueError("mlm_loss needs an encoder: ModelConfig(causal=False)")
        check_tokens(tokens, self.cfg.vocab_size)
        logits = self(tokens.masked_fill(mask, self.mask_id))  # [B, T, V]
        return F.cross_entropy(logits[mask], tokens[mask])

    def loss(self, tokens: torch.Tensor) -> torch.Tensor:
        """Next-token cross-entropy (nats) over positions 1..T−1."""
        return next_token_loss(self, tokens)


def model_vocab(model) -> int | None:
    """The vocabulary a model reads and predicts: its config's, or its ``embed`` table's rows."""
    cfg = getattr(model, "cfg", None)
    if isinstance(cfg, ModelConfig):
        return cfg.vocab_size
    embed = getattr(model, "embed", None)
    return embed.num_embeddings if isinstance(embed, nn.Embedding) else None


_IDS_CHECKED = contextvars.ContextVar("ids_checked_on_host", default=False)


@contextlib.contextmanager
def ids_checked_on_host() -> Iterator[None]:
    """Within it, :func:`check_tokens` takes the ids' range as checked: the caller checked them on the CPU before
    moving them to the device (the training loop, :class:`deepnotes.core.train.BatchesAhead`), where reading their
    smallest and largest value would stop a GPU's queue twice a step (and cannot run inside a CUDA graph)."""
    token = _IDS_CHECKED.set(True)
    try:
        yield
    finally:
        _IDS_CHECKED.reset(token)


def check_tokens(tokens: torch.Tensor, vocab: Count | None) -> None:
    """Token ids [..., B, T] must be integers in [0, vocab): refused here, not as an index error in torch
    (or, in a stack of members, a silent read of the next member's embedding row). Their type is checked always,
    their range unless :func:`ids_checked_on_host` says the caller did."""
    if not isinstance(tokens, torch.Tensor) or tokens.dtype not in (torch.int64, torch.int32):
        raise TypeError(
            f"tokens must be an integer tensor [..., batch, seq_len], got {type(tokens).__name__}"
            + (f" of {tokens.dtype}" if isinstance(tokens, torch.Tensor) else "")
        )
    if _IDS_CHECKED.get():
        return
    if vocab is not None and tokens.numel() and (int(tokens.min()) < 0 or int(tokens.max()) >= vocab):
        raise ValueError(f"token ids must lie in [0, {vocab}), got ids from {int(tokens.min())} to {int(tokens.max())}")


def next_token_loss(model: nn.Module, tokens: torch.Tensor) -> torch.Tensor:
    """−(1/(B(T−1))) Σ log p(x_{t+1} | x_{≤t}) in nats, for any ``model`` mapping tokens [B, T−1] to
    logits [B, T−1, V]."""
    check_tokens(tokens, model_vocab(model))
    if tokens.dim() != 2 or tokens.size(1) < 2:
        raise ValueError(f"next-token loss needs tokens [batch, seq_len >= 2], got shape {tuple(tokens.shape)}")
    logits = model(tokens[:, :-1])  # [B, T-1, V]
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), tokens[:, 1:].reshape(-1))


def build_model(
    cfg: ModelConfig, seed: Seed = 0, device: torch.device | str | None = None, dtype: torch.dtype | None = None
) -> TransformerLM:
    """A :class:`TransformerLM` initialized from ``seed`` (the global RNG is left untouched); ``device`` None: the
    CPU (a CUDA device on a machine without one is refused by name)."""
    where = checked_device(device)
    with seeded(seed):
        model = TransformerLM(cfg)
    return model.to(device=where, dtype=dtype)
