"""Experiment sizes per budget, in one table, and the device every experiment runs on.

``DEEPNOTES_BUDGET`` picks the row: ``smoke`` (tests: seconds per chapter), ``cpu`` (a reader on a
2-core laptop or Binder: a chapter in a few minutes) or ``gpu`` (Colab or a GPU machine: the full
sizes). Unset, it is ``gpu`` when CUDA is available and ``cpu`` otherwise.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import torch

from .config import ModelConfig

BUDGET_ENV = "DEEPNOTES_BUDGET"


@dataclass(frozen=True)
class Budget:
    name: str
    # the tiny Transformer every chapter trains (width is fixed; depth is what varies)
    d_model: int           # residual-stream width d
    n_heads: int           # attention heads
    d_ff: int              # FFN hidden width
    vocab_size: int        # tokens of the synthetic Markov language
    seq_len: int           # tokens per sequence
    batch_size: int        # sequences per step
    # increment explosion: the one-step loss change at initialization
    probe_depths: tuple[int, ...]     # N swept on log axes (two orders of magnitude at cpu)
    probe_repeats: int                # seeds averaged per depth
    # the DeepNet-style "early model update" sweep (the paper's 6L .. 100L)
    update_depths: tuple[int, ...]
    update_steps: int                 # optimizer steps whose ‖F(x,θ_t) − F(x,θ_0)‖ is tracked
    # full training runs (Post-LN with/without warmup, Pre-LN, DeepNorm)
    train_depths: tuple[int, ...]    # depths of the training comparison
    train_steps: int
    train_warmup: int
    # the precomputed slider grid (static HTML) and the live slider's run length
    slider_depths: tuple[int, ...]
    slider_norms: tuple[str, ...]
    slider_optimizers: tuple[str, ...]
    slider_steps: int
    # initialization chapter: plain MLPs, softmax, NTK vs standard parametrization
    moment_width: int                 # width of the plain MLP
    moment_depth: int                 # its depth (50+ at cpu)
    moment_batch: int                 # inputs per measurement
    ntk_width: int
    ntk_steps: int
    moment_slider_depths: tuple[int, ...]
    moment_slider_gains: tuple[float, ...]
    softmax_slider_dims: tuple[int, ...]


    def model_config(self, n_layers: int, **overrides) -> ModelConfig:
        """The budget's tiny Transformer at depth ``n_layers`` (``overrides``: norm, alpha, beta, …)."""
        return ModelConfig(n_layers=n_layers, d_model=self.d_model, n_heads=self.n_heads, d_ff=self.d_ff,
                           vocab_size=self.vocab_size, **overrides)


BUDGETS: dict[str, Budget] = {
    "smoke": Budget(
        name="smoke", d_model=16, n_heads=2, d_ff=32, vocab_size=8, seq_len=8, batch_size=4,
        probe_depths=(2, 4, 8), probe_repeats=1,
        update_depths=(2, 6), update_steps=3,
        train_depths=(4,), train_steps=6, train_warmup=3,
        slider_depths=(2, 4), slider_norms=("post", "deepnorm"), slider_optimizers=("adam",),
        slider_steps=3,
        moment_width=32, moment_depth=8, moment_batch=64, ntk_width=16, ntk_steps=3,
        moment_slider_depths=(4,), moment_slider_gains=(1.0, 2.0), softmax_slider_dims=(16, 64),
    ),
    "cpu": Budget(
        name="cpu", d_model=32, n_heads=2, d_ff=64, vocab_size=16, seq_len=16, batch_size=16,
        probe_depths=(2, 4, 8, 16, 32, 64, 128, 256), probe_repeats=2,
        update_depths=(6, 12, 24, 50, 100), update_steps=20,
        train_depths=(12, 24), train_steps=600, train_warmup=200,
        slider_depths=(6, 12, 24, 48, 96), slider_norms=("post", "pre", "deepnorm"),
        slider_optimizers=("adam", "sgd"), slider_steps=15,
        moment_width=256, moment_depth=60, moment_batch=1024, ntk_width=128, ntk_steps=50,
        moment_slider_depths=(10, 30, 60), moment_slider_gains=(0.5, 1.0, 2.0, 4.0),
        softmax_slider_dims=(16, 64, 256, 1024),
    ),
    "gpu": Budget(
        name="gpu", d_model=128, n_heads=4, d_ff=512, vocab_size=32, seq_len=64, batch_size=32,
        probe_depths=(2, 4, 8, 16, 32, 64, 128, 256, 512, 1024), probe_repeats=3,
        update_depths=(6, 12, 24, 50, 100), update_steps=50,
        train_depths=(24, 96), train_steps=2000, train_warmup=500,
        slider_depths=(6, 12, 24, 48, 96, 192), slider_norms=("post", "pre", "deepnorm"),
        slider_optimizers=("adam", "sgd"), slider_steps=30,
        moment_width=1024, moment_depth=100, moment_batch=4096, ntk_width=512, ntk_steps=200,
        moment_slider_depths=(10, 30, 60, 100), moment_slider_gains=(0.5, 1.0, 2.0, 4.0),
        softmax_slider_dims=(16, 64, 256, 1024),
    ),
}


def get_budget(name: str | None = None) -> Budget:
    """The budget named ``name``, else ``$DEEPNOTES_BUDGET``, else ``gpu`` with CUDA or ``cpu``."""
    if name is None:
        name = os.environ.get(BUDGET_ENV) or ("gpu" if torch.cuda.is_available() else "cpu")
    if name not in BUDGETS:
        raise ValueError(f"unknown budget {name!r}; allowed: {', '.join(sorted(BUDGETS))}")
    return BUDGETS[name]


def device() -> torch.device:
    """CUDA when present, else the CPU."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")
