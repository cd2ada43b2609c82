"""Frozen, validated configurations of a model and of a training run; the budget table (experiment
sizes and rates per budget) and the device every experiment runs on.

``DEEPNOTES_BUDGET`` picks the row: ``smoke`` (tests: seconds per chapter), ``cpu`` (a reader on a
2-core laptop or Binder: a chapter in a few minutes), ``gpu`` (Colab's T4 or any CUDA machine: a
chapter in at most :data:`GPU_MINUTES_PER_CHAPTER` minutes on a T4 by :mod:`deepnotes.cost.estimate`'s
estimate, unless the chapter's ``budget.py`` gives it more ``GPU_MINUTES``) or ``full`` (the full sizes, opt-in
by name: up to 2.6 hours a chapter on a T4). Unset, it is ``gpu`` when CUDA is available and ``cpu``
otherwise.

A :class:`Budget` holds the sizes every chapter shares (the tiny Transformer, its data, the warmup
comparison two chapters report); a chapter's own sizes live in ``deepnotes/chapters/<stem>/budget.py``
as one typed row per budget, read by that module's ``sizes(budget)`` (:func:`chapter_sizes`):
``sizes(budget).train_steps``. Learning rates
and tracking intervals are budget fields too: no chapter module or notebook types a size or a rate.
Rates are the same at every budget unless a row says otherwise (the field defaults).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TypeVar

import torch

from deepnotes.core import scaling
from deepnotes.core.validate import (
    Amount,
    AtLeastTwo,
    Count,
    Depth,
    Finite,
    NonNegative,
    NonNegativeCount,
    Positive,
    Repeats,
    Seed,
    choice,
)

T = TypeVar("T")  # a chapter's sizes class

NORM_STYLES = ("post", "pre", "deepnorm", "none", "rezero", "plain")  # "plain": no skip path, no norm
BLOCK_KINDS = ("transformer", "mlp")
FFN_ACTIVATIONS = ("relu", "gelu")


@dataclass(frozen=True)
class ModelConfig:
    n_layers: Depth = 6  # N: residual blocks (transformer: attention + FFN sublayers each)
    d_model: Count = 32  # d: width of the residual stream
    n_heads: Count = 2  # attention heads (d_model must divide by it)
    d_ff: Count = 64  # FFN hidden width
    vocab_size: AtLeastTwo = 16  # tokens in and out (transformer only; one token predicts nothing)
    norm: str = "post"  # one of NORM_STYLES
    block: str = "transformer"  # one of BLOCK_KINDS
    alpha: Positive | None = None  # skip weight, deepnorm only: LN(α·x + F(x)); None = DeepNet's (2N)^{1/4}
    beta: Positive | None = None  # init gain of v/out/FFN weights; None = 1, or (8N)^{-1/4} for deepnorm
    causal: bool = True  # causal attention mask (a language model); False = an encoder
    init_std: Positive | None = None  # BERT-style init: every matrix (and the embedding) from N(0, std²) cut at ±2σ
    head_transform: bool = False  # BERT's extra Dense + GELU + LayerNorm before the output head
    activation: str = "relu"  # FFN activation, one of FFN_ACTIVATIONS (BERT: gelu)
    max_len: Count = 128  # encoders (causal=False): rows of the learned position embedding
    gate: NonNegative | None = None  # a scalar gate g on every branch, starting here (SkipInit 0, Depth-µP N^{-1/2})

    def __post_init__(self):
        choice("norm style", self.norm, NORM_STYLES)
        choice("block kind", self.block, BLOCK_KINDS)
        choice("FFN activation", self.activation, FFN_ACTIVATIONS)
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} is not divisible by n_heads={self.n_heads}")
        if self.alpha is not None:
            if self.norm != "deepnorm":
                raise ValueError(
                    f"alpha is the DeepNorm skip weight; norm={self.norm!r} has none (use norm='deepnorm')"
                )
        if self.gate is not None and self.norm in ("rezero", "plain"):
            raise ValueError(
                f"gate={self.gate!r} puts a scalar gate on the branch of a style with a skip path; norm={self.norm!r} "
                "has its own (rezero: a gate from 0) or none (plain); use post, pre, deepnorm or none"
            )
        if self.init_std is not None and self.beta is not None:
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
    optimizer: str = "adam"  # one of OPTIMIZER_NAMES
    lr: Positive = 1e-3  # peak learning rate η
    steps: Repeats = 100  # optimizer steps
    warmup_steps: NonNegativeCount = 0  # linear warmup length (0 = none)
    batch_size: Count = 16  # sequences per step
    seq_len: AtLeastTwo = 16  # tokens per sequence (a token and the next one it predicts)
    seed: Seed = 0  # seeds the model's initialization and the data stream
    betas: tuple[float, float] = (0.9, 0.98)  # Adam/LAMB moment decays
    held_out: NonNegativeCount = 256  # sequences of the held-out sample the final loss is read on (0: none)

    def __post_init__(self):
        choice("optimizer", self.optimizer, OPTIMIZER_NAMES)
        if self.held_out == 1:
            raise ValueError("held_out=1: a standard error needs at least 2 held-out sequences; give 0 (none) or >= 2")
        if self.warmup_steps > self.steps:
            raise ValueError(
                f"warmup_steps={self.warmup_steps} is longer than the run (steps={self.steps}): the rate would never "
                f"reach lr={self.lr:g}; give at most steps warmup steps"
            )
        if (
            not isinstance(self.betas, tuple)
            or len(self.betas) != 2
            or not all(isinstance(b, (int, float)) and not isinstance(b, bool) and 0 <= b < 1 for b in self.betas)
        ):
            raise ValueError(f"betas must be a tuple of two numbers in [0, 1), got {self.betas!r}")


BUDGET_ENV = "DEEPNOTES_BUDGET"


def rates(**per_key) -> MappingProxyType:
    """A read-only mapping (optimizer → learning rate, say) for a frozen budget field."""
    return MappingProxyType(dict(per_key))


def chapter_rates(**per_key):
    """A budget field holding :func:`rates` (left out of comparisons and hashes: a mapping has none)."""
    return field(default_factory=lambda: rates(**per_key), compare=False)


@dataclass(frozen=True)
class WarmupBudget:
    """The warmup comparison that "Increment explosion" and "Post-Norm vs Pre-Norm" both report
    (:mod:`deepnotes.shared.warmup`): Post-LN without and with a linear warmup, Pre-LN and DeepNorm,
    Adam at ``lr``, ``seeds`` seeds each. One entry, so the two pages cannot run it differently."""

    depth: Depth  # blocks (the increment chapter also trains its deeper train_depths)
    steps: Repeats
    warmup: NonNegativeCount  # linear warmup steps of the "post, warmup" run
    seeds: Repeats  # per run (training-outcome verdicts need at least 3)
    lr: Positive = 3e-3  # Adam peak
    track_points: Repeats = 20  # steps at which block updates and gradients are recorded


@dataclass(frozen=True)
class Budget:
    """The sizes every chapter's runs share at one budget (smoke, cpu, gpu, full). A page's setup cell resolves its
    budget once (``get_budget()``: the name in $DEEPNOTES_BUDGET, else the machine's default) and hands this object
    down; the chapters' functions take it and never a name (issue 64)."""

    name: str
    # the tiny Transformer every chapter trains (width is fixed; depth is what varies)
    d_model: Count  # residual-stream width d
    n_heads: Count  # attention heads
    d_ff: Count  # FFN hidden width
    vocab_size: Count  # tokens of the synthetic Markov language
    seq_len: Count  # tokens per sequence
    batch_size: Count  # sequences per step
    # an experiment two chapters report, sized once (deepnotes.shared.warmup)
    warmup: WarmupBudget
    # a chapter's sizes are its own (deepnotes/chapters/<stem>/budget.py, read by its ``sizes(budget)``);
    # ``overrides`` holds chapter sizes put in place of a chapter's row by :meth:`with_sizes` (one per class)
    overrides: tuple = ()

    def with_sizes(self, sizes) -> Budget:
        """This budget with ``sizes`` (a chapter's sizes object, e.g. a benchmark's shorter run) in place of
        that chapter's own row: :func:`chapter_sizes` returns it for the chapter whose class it is."""
        kept = tuple(o for o in self.overrides if type(o) is not type(sizes))
        return replace(self, overrides=(*kept, sizes))

    @staticmethod
    def door_hint(value) -> str:
        """What the door's message adds when a budget's parameter is given ``value`` instead: how to resolve a name."""
        return (
            f"; resolve a budget's name once, as a page does: deepnotes.get_budget({value!r})"
            if isinstance(value, str)
            else ""
        )

    def model_config(self, n_layers: int, **overrides) -> ModelConfig:
        """The budget's tiny Transformer at depth ``n_layers`` (``overrides``: norm, alpha, beta, …)."""
        return ModelConfig(
            n_layers=n_layers,
            d_model=self.d_model,
            n_heads=self.n_heads,
            d_ff=self.d_ff,
            vocab_size=self.vocab_size,
            **overrides,
        )

    def train_config(self, optimizer: str, lr: Finite, steps: int, warmup: int = 0, seed: int = 0) -> TrainConfig:
        """A run on the budget's batches (``batch_size`` sequences of ``seq_len`` tokens)."""
        return TrainConfig(
            optimizer=optimizer,
            lr=lr,
            steps=steps,
            warmup_steps=warmup,
            batch_size=self.batch_size,
            seq_len=self.seq_len,
            seed=seed,
        )


BUDGETS: dict[str, Budget] = {
    "smoke": Budget(
        name="smoke",
        d_model=16,
        n_heads=2,
        d_ff=32,
        vocab_size=8,
        seq_len=8,
        batch_size=4,
        warmup=WarmupBudget(depth=4, steps=6, warmup=3, seeds=3),
    ),
    "cpu": Budget(
        name="cpu",
        d_model=32,
        n_heads=2,
        d_ff=64,
        vocab_size=16,
        seq_len=16,
        batch_size=16,
        warmup=WarmupBudget(depth=12, steps=600, warmup=200, seeds=3),
    ),
    "full": Budget(
        name="full",
        d_model=128,
        n_heads=4,
        d_ff=512,
        vocab_size=32,
        seq_len=64,
        batch_size=32,
        warmup=WarmupBudget(depth=24, steps=2000, warmup=500, seeds=5),
    ),
}
# The CUDA default: the full sizes, cut where a chapter's counted work would take a T4 more than
# GPU_MINUTES_PER_CHAPTER minutes (deepnotes.cost.estimate; tests/core/test_cost.py holds every chapter to it),
# or more than the GPU_MINUTES a chapter's budget.py gives, with the reason it needs them.
GPU_MINUTES_PER_CHAPTER = 10
_full = BUDGETS["full"]
BUDGETS["gpu"] = replace(
    _full,
    name="gpu",
    warmup=replace(_full.warmup, steps=600, warmup=200, seeds=3),
)
# what each row is for (the introduction's budget table prints it beside the row's sizes)
BUDGET_USES = {
    "smoke": "the test suite: every chapter in seconds, curves too short to mean anything",
    "cpu": "a reader on a 2-core laptop or Binder: a chapter in minutes",
    "gpu": "Colab's T4 or any CUDA machine",
    "full": "the full sizes, on a fast GPU",
}


def default_budget_name(cuda: bool | None = None) -> str:
    """The budget an unset ``$DEEPNOTES_BUDGET`` means: ``gpu`` where CUDA is available (``cuda``: whether
    it is; None asks PyTorch), else ``cpu``."""
    if cuda is None:
        cuda = torch.cuda.is_available()
    return "gpu" if cuda else "cpu"


def get_budget(name: str | None = None) -> Budget:
    """The budget named ``name``, else ``$DEEPNOTES_BUDGET``, else :func:`default_budget_name`'s."""
    if name is None:
        name = os.environ.get(BUDGET_ENV) or default_budget_name()
    choice("budget", name, sorted(BUDGETS))
    return BUDGETS[name]


def resolve_budget(budget: Budget | str | None = None) -> Budget:
    """What a chapter function's ``budget`` argument means: a :class:`Budget` as given, a budget's
    name (``"cpu"``), or None for :func:`get_budget`'s default; anything else is a TypeError."""
    if budget is None or isinstance(budget, str):
        return get_budget(budget)
    if not isinstance(budget, Budget):
        raise TypeError(
            f"budget must be a Budget, a budget name ({', '.join(sorted(BUDGETS))}) or None, "
            f"got {type(budget).__name__}"
        )
    return budget


def chapter_sizes(budget: Budget, rows: Mapping[str, T], kind: type[T]) -> T:
    """A chapter's sizes at ``budget``: the sizes of class ``kind`` the budget carries (:meth:`Budget.with_sizes`),
    else ``rows[budget.name]``, the chapter's own row (``rows`` must give one for every budget of :data:`BUDGETS`).
    Each chapter's ``budget.py`` defines ``sizes(budget)`` as this call on its rows."""
    if set(rows) != set(BUDGETS):
        raise ValueError(
            f"{kind.__name__} rows give budgets {sorted(rows)}; every one of {sorted(BUDGETS)} needs a row"
        )
    for sizes in budget.overrides:
        if type(sizes) is kind:
            return sizes
    return rows[budget.name]


def device() -> torch.device:
    """CUDA when present, else the CPU."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


# ---- memory: what a stack needs, checked against what the device has before anything is allocated ----

FLOAT_BYTES = 4  # float32
STATE_COPIES = 4  # in training, per parameter: the weight, its gradient and Adam's two moments


def parameter_counts(cfg: ModelConfig) -> tuple[int, int]:
    """(per block, outside the blocks) parameters of one member of ``cfg``, as the engine lays them out:
    a block holds qkv (d·3d + 3d), out (d² + d) for a Transformer, fc1/fc2 (2·d·d_ff + d_ff + d), and a
    norm (2d) and a gate (1) per sublayer; outside the blocks the embedding (V·d, an encoder's [MASK] one
    row more), an encoder's positions and embedding norm (max_len·d + 2d), a final norm (2d), BERT's dense
    and its norm (d² + 3d), and the head (d·V + V, or an encoder's tied head's bias V)."""
    d, f, v = cfg.d_model, cfg.d_ff, cfg.vocab_size
    ffn = 2 * d * f + f + d
    attn = 3 * d * d + 3 * d + d * d + d if cfg.block == "transformer" else 0
    sublayers = 2 if cfg.block == "transformer" else 1
    per_block = attn + ffn + sublayers * (2 * d + 1)
    encoder = not cfg.causal
    top = (v + encoder) * d + encoder * (cfg.max_len * d + 2 * d) + 2 * d + cfg.head_transform * (d * d + 3 * d)
    return per_block, top + (v if encoder else d * v + v)


def activation_floats(cfg: ModelConfig, train: TrainConfig) -> int:
    """Floats one member keeps for the backward: per block, B·T tokens × (12d + 2·d_ff) (the inputs and
    outputs of every matrix, norm and activation) and 3 × B·heads·T² for attention (its scores, their
    softmax and the softmax's backward). With the attention term counted once the estimate fell 9 % short
    of the peak CUDA memory of a training run measured on an H200 (N = 24, d = 128, B·T = 16·64; 2026-11-26);
    with 3 it lies 4–22 % above the peak at that shape and four others (benchmarks/RESULTS.md)."""
    tokens = train.batch_size * train.seq_len
    attention = 3 * train.batch_size * cfg.n_heads * train.seq_len**2 if cfg.block == "transformer" else 0
    return cfg.n_layers * (tokens * (12 * cfg.d_model + 2 * cfg.d_ff) + attention)


def stack_bytes(cfg: ModelConfig, members: Count = 1, train: TrainConfig | None = None) -> int:
    """Bytes of ``members`` members of ``cfg``: their float32 weights, P·4 (``train`` None: a model built,
    not trained), or in training P·4·STATE_COPIES plus the activations (:func:`activation_floats`)."""
    per_block, top = parameter_counts(cfg)
    params = cfg.n_layers * per_block + top
    if train is None:
        return members * FLOAT_BYTES * params
    return members * FLOAT_BYTES * (STATE_COPIES * params + activation_floats(cfg, train))


def checked_device(where: torch.device | str | None) -> torch.device:
    """``where`` as a torch.device (None: the CPU), refusing a CUDA device on a machine without one with a
    ValueError that names it, rather than torch's AssertionError from deep inside the first allocation."""
    try:
        where = torch.device(where) if where is not None else torch.device("cpu")
    except (RuntimeError, TypeError) as err:
        raise ValueError(f"device {where!r} is not a device torch knows ('cpu', 'cuda', 'cuda:0'): {err}") from None
    if where.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(
            f"device {str(where)!r} was asked for, but this machine has no CUDA GPU; leave device out (CUDA when "
            "present, else the CPU) or pass 'cpu'"
        )
    return where


def available_bytes(where: torch.device | str | None = None) -> int | None:
    """Memory free for a new tensor on ``where``: a GPU's free memory (``torch.cuda.mem_get_info``), the
    system's available memory (``MemAvailable`` of /proc/meminfo on Linux; the physical memory elsewhere),
    or None where neither can be read."""
    where = checked_device(where)
    if where.type == "cuda":
        return torch.cuda.mem_get_info(where)[0]
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None


def live_range(name: str, value: int, span: tuple[int, int, int], budget: Budget) -> int:
    """``value`` if it lies in a live panel's range ``span`` = (lowest, default, highest) from the chapter's budget
    row (the slider's own range), else a ValueError naming the argument, the range and the budget: a live panel
    runs while the reader waits, so a depth or width past what the budget's slider offers is refused, not run."""
    low, _, high = span
    if not low <= value <= high:
        raise ValueError(
            f"{name}={value} is outside the live panel's range at the {budget.name!r} budget ({low} to {high}, the "
            f"slider's range); a larger {name} belongs in a run of its own (the chapter's functions, not the panel)"
        )
    return value


def check_allocation(numbers: Amount, sizes: dict[str, int], where=None, bytes_each: Count = FLOAT_BYTES) -> int:
    """Refuse, before anything is allocated, work that holds ``numbers`` numbers of ``bytes_each`` bytes at once
    when that exceeds :func:`available_bytes` (``bytes = numbers · bytes_each``). The message names the arguments
    as the reader typed them (``sizes``: name → value, e.g. ``{"depth": 10**9, "width": 64}``) and the estimate.
    Returns the bytes."""
    needed = numbers * bytes_each
    free = available_bytes(where)
    if free is not None and needed > free:
        typed = ", ".join(f"{name}={value}" for name, value in sizes.items())
        raise ValueError(
            f"{typed} needs about {_gib(needed)} GiB at once by deepnotes' estimate (numbers={numbers} of "
            f"bytes_each={bytes_each} bytes), more than the {_gib(free)} GiB free on {torch.device(where or 'cpu')}; "
            f"choose a smaller {' or '.join(sizes)}"
        )
    return needed


def _gib(size: int) -> str:
    """Bytes in GiB to 3 significant digits, also past a float's range (10**400 bytes: "1e+391")."""
    if size < 2**1000:
        return f"{size / 2**30:.3g}"
    digits = str(size // 2**30)
    return f"{digits[0]}.{digits[1:3]}e+{len(digits) - 1}"


def check_fits(cfg: ModelConfig, members: Count = 1, train: TrainConfig | None = None, where=None) -> int:
    """Refuse, before anything is allocated, a stack that :func:`stack_bytes` says would not fit in
    :func:`available_bytes`; the message names the sizes and the estimate. Returns the estimate."""
    needed = stack_bytes(cfg, members, train)
    free = available_bytes(where)
    if free is not None and needed > free:
        what = "training" if train is not None else "the weights of"
        sizes = (  # as the model names them, and as the chapters' functions take them (depth, width)
            f"depth n_layers={cfg.n_layers}, width d_model={cfg.d_model}, d_ff={cfg.d_ff}, vocab_size={cfg.vocab_size}"
        )
        if train is not None:
            sizes += f", batch_size={train.batch_size}, seq_len={train.seq_len}"
        raise ValueError(
            f"{what} {members} member(s) with {sizes} needs about {needed / 2**30:.3g} GiB by deepnotes' "
            f"estimate, more than the {free / 2**30:.3g} GiB free on {torch.device(where or 'cpu')}; "
            "make the stack shallower or narrower, or train fewer members at once"
        )
    return needed
