"""Frozen, validated configurations of a model and of a training run."""
from __future__ import annotations

from dataclasses import dataclass

from deepnotes.core import scaling
from deepnotes.core.validate import boolean, choice, int_at_least, integer, nonnegative_int, positive_float, positive_int

NORM_STYLES = ("post", "pre", "deepnorm", "none", "rezero", "plain")   # "plain": no skip path, no norm
BLOCK_KINDS = ("transformer", "mlp")
FFN_ACTIVATIONS = ("relu", "gelu")


@dataclass(frozen=True)
class ModelConfig:
    n_layers: int = 6            # N: residual blocks (transformer: attention + FFN sublayers each)
    d_model: int = 32            # d: width of the residual stream
    n_heads: int = 2             # attention heads (d_model must divide by it)
    d_ff: int = 64               # FFN hidden width
    vocab_size: int = 16         # tokens in and out (transformer only)
    norm: str = "post"           # one of NORM_STYLES
    block: str = "transformer"   # one of BLOCK_KINDS
    alpha: float | None = None   # skip weight, deepnorm only: LN(α·x + F(x)); None = DeepNet's (2N)^{1/4}
    beta: float | None = None    # init gain of v/out/FFN weights; None = 1, or (8N)^{-1/4} for deepnorm
    causal: bool = True          # causal attention mask (a language model); False = an encoder
    init_std: float | None = None  # BERT-style init: every matrix (and the embedding) from N(0, std²) cut at ±2σ
    head_transform: bool = False # BERT's extra Dense + GELU + LayerNorm before the output head
    activation: str = "relu"     # FFN activation, one of FFN_ACTIVATIONS (BERT: gelu)
    max_len: int = 128           # encoders (causal=False): rows of the learned position embedding

    def __post_init__(self):
        for name in ("n_layers", "d_model", "n_heads", "d_ff", "vocab_size", "max_len"):
            positive_int(name, getattr(self, name))
        int_at_least("vocab_size", self.vocab_size, 2, "one token predicts nothing")
        choice("norm style", self.norm, NORM_STYLES)
        choice("block kind", self.block, BLOCK_KINDS)
        choice("FFN activation", self.activation, FFN_ACTIVATIONS)
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} is not divisible by n_heads={self.n_heads}")
        if self.alpha is not None:
            if self.norm != "deepnorm":
                raise ValueError(f"alpha is the DeepNorm skip weight; norm={self.norm!r} has none "
                                 "(use norm='deepnorm')")
            positive_float("alpha", self.alpha)
        if self.beta is not None:
            positive_float("beta", self.beta)
        for name in ("causal", "head_transform"):
            boolean(name, getattr(self, name))
        if self.init_std is not None:
            positive_float("init_std", self.init_std)
            if self.beta is not None:
                raise ValueError("init_std replaces the Xavier init that beta scales; give one of them")

    @property
    def skip_alpha(self) -> float:
        """α actually used: 1 except for DeepNorm (given, or the paper's encoder constant)."""
        if self.norm != "deepnorm":
            return 1.0
        return self.alpha if self.alpha is not None else scaling.deepnorm_coefficients(self.n_layers)[0]

    @property
    def branch_beta(self) -> float:
        """β actually used for v/out/FFN init gains."""
        if self.beta is not None:
            return float(self.beta)
        if self.norm == "deepnorm":
            return scaling.deepnorm_coefficients(self.n_layers)[1]
        return 1.0


OPTIMIZER_NAMES = scaling.OPTIMIZERS


@dataclass(frozen=True)
class TrainConfig:
    optimizer: str = "adam"      # one of OPTIMIZER_NAMES
    lr: float = 1e-3             # peak learning rate η
    steps: int = 100             # optimizer steps
    warmup_steps: int = 0        # linear warmup length (0 = none)
    batch_size: int = 16         # sequences per step
    seq_len: int = 16            # tokens per sequence
    seed: int = 0                # seeds the model's initialization and the data stream
    betas: tuple[float, float] = (0.9, 0.98)  # Adam/LAMB moment decays

    def __post_init__(self):
        choice("optimizer", self.optimizer, OPTIMIZER_NAMES)
        positive_float("lr", self.lr)
        for name in ("steps", "batch_size", "seq_len"):
            positive_int(name, getattr(self, name))
        int_at_least("seq_len", self.seq_len, 2, "a token and the next one it predicts")
        nonnegative_int("warmup_steps", self.warmup_steps)
        if (not isinstance(self.betas, tuple) or len(self.betas) != 2
                or not all(isinstance(b, (int, float)) and not isinstance(b, bool) and 0 <= b < 1 for b in self.betas)):
            raise ValueError(f"betas must be a tuple of two numbers in [0, 1), got {self.betas!r}")
        integer("seed", self.seed)
