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
    # BERT's 0.02 chapter (issue 6): stds are given at BERT's width 768 and mapped to width d as
    # s·√(768/d) (same d·s², hence the same variances at init)
    bert_stds: tuple[float, ...]          # init stds swept at initialization (BERT-base equivalent)
    bert_probe_width: int                 # width of the encoder swept at init (768 = BERT-base)
    bert_table_width: int                 # width of the 12-layer encoder set beside the annotated tables
    bert_probe_depths: tuple[int, ...]    # its depths (the last is the experiment's; 12 = BERT-base)
    bert_probe_tokens: tuple[int, int]    # (sequences, tokens per sequence) of the probe batch
    bert_train_stds: tuple[float, ...]    # stds of the MLM training runs (the annotated §9.3 table's)
    bert_gain_stds: tuple[float, ...]     # stds also trained without the extra Dense+LN head (γ story)
    bert_train_width: int                 # the trained encoder: width, depth, steps, warmup, batch
    bert_train_depth: int
    bert_train_steps: int
    bert_train_warmup: int
    bert_train_batch: tuple[int, int]     # (sequences, tokens per sequence)
    bert_vocab: int                       # tokens of the synthetic language
    # magnitude decomposition / DeepNorm chapter (issue 7): fields go here
    mag_probe_depth: int              # depth of the ∂L/∂λ grid over (α, λ)
    mag_alphas: tuple[float, ...]     # α values of that grid
    mag_lambdas: tuple[float, ...]    # λ values of that grid
    mag_update_depths: tuple[int, ...]  # depths of the first-step relative-update sweep
    mag_train_depths: tuple[int, ...]   # depths of the (α, λ) training comparison
    mag_train_steps: int              # its optimizer steps
    mag_identity_depth: int           # depth of the near-identity probe
    mag_slider_depths: tuple[int, ...]  # slider grid: depths (× the three optimizers)
    mag_slider_steps: int             # slider runs' steps
    # why-residuals chapter (issue 8): fields go here
    res_widths: tuple[int, ...] = (1, 8)          # widths of the Jacobian-growth probe (1 = the 1-D model)
    res_depths: tuple[int, ...] = (4, 16)         # its depths N (to 1000 at cpu)
    res_probe_batch: int = 8                      # random (x_0, v) pairs per probe (×16 at width 1)
    res_grad_depths: tuple[int, ...] = (4, 8)     # depths of the per-layer gradient probe (float64)
    res_grad_widths: tuple[int, ...] = (8,)       # its widths
    res_grad_seeds: int = 1                       # independent initializations per setting (median)
    res_train_width: int = 8                      # width of the trained MLP language model
    res_train_depths: tuple[int, ...] = (4,)      # depths of the plain-vs-residual training runs
    res_train_steps: int = 5
    res_transformer_depths: tuple[int, ...] = ()  # the Transformer variant (no LayerNorm); () = skipped
    res_slider_depths: tuple[int, ...] = (4, 8)
    res_slider_widths: tuple[int, ...] = (8,)
    res_slider_exponents: tuple[float, ...] = (0.0, 0.5)
    res_slider_steps: int = 3

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
        # issue 6 (BERT 0.02)
        bert_stds=(0.01, 0.02, 0.05), bert_probe_width=64, bert_table_width=64, bert_probe_depths=(2, 3), bert_probe_tokens=(4, 16),
        bert_train_stds=(0.02, 0.05), bert_gain_stds=(0.02,), bert_train_width=32, bert_train_depth=2, bert_train_steps=6,
        bert_train_warmup=2, bert_train_batch=(4, 16), bert_vocab=8,
        # issue 7 (magnitude decomposition / DeepNorm)
        mag_probe_depth=3, mag_alphas=(1.0, 4.0), mag_lambdas=(0.25, 1.0), mag_update_depths=(2, 8),
        mag_train_depths=(2,), mag_train_steps=4, mag_identity_depth=6, mag_slider_depths=(2, 4),
        mag_slider_steps=3,
        # issue 8 (why residuals)
        res_widths=(1, 8), res_depths=(4, 16), res_probe_batch=8, res_grad_depths=(4, 8), res_grad_widths=(8,),
        res_grad_seeds=1, res_train_width=8,
        res_train_depths=(4,), res_train_steps=5, res_transformer_depths=(2,), res_slider_depths=(4, 8),
        res_slider_widths=(8,), res_slider_exponents=(0.0, 0.5), res_slider_steps=3,
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
        # issue 6 (BERT 0.02)
        bert_stds=(0.005, 0.01, 0.02, 0.0361, 0.05, 0.1), bert_probe_width=128, bert_table_width=768, bert_probe_depths=(3, 6, 12, 24),
        bert_probe_tokens=(4, 64), bert_train_stds=(0.01, 0.02, 0.0361, 0.05), bert_gain_stds=(0.01, 0.02), bert_train_width=64,
        bert_train_depth=6, bert_train_steps=500, bert_train_warmup=50, bert_train_batch=(32, 32), bert_vocab=16,
        # issue 7 (magnitude decomposition / DeepNorm)
        mag_probe_depth=12, mag_alphas=(1.0, 2.0, 4.0, 8.0, 16.0), mag_lambdas=(0.0625, 0.125, 0.25, 0.5, 1.0),
        mag_update_depths=(4, 16, 64), mag_train_depths=(6, 24), mag_train_steps=100, mag_identity_depth=48,
        mag_slider_depths=(6, 24), mag_slider_steps=20,
        # issue 8 (why residuals)
        res_widths=(1, 16, 256), res_depths=(10, 30, 100, 300, 1000), res_probe_batch=32,
        res_grad_depths=(10, 30, 100, 300), res_grad_widths=(16, 64), res_grad_seeds=3, res_train_width=32,
        res_train_depths=(20, 100), res_train_steps=150,
        res_transformer_depths=(12, 48), res_slider_depths=(10, 100), res_slider_widths=(16, 64),
        res_slider_exponents=(0.0, 0.5, 1.0), res_slider_steps=20,
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
        # issue 6 (BERT 0.02)
        bert_stds=(0.005, 0.01, 0.02, 0.0361, 0.05, 0.1), bert_probe_width=768, bert_table_width=768, bert_probe_depths=(3, 6, 12, 24, 48),
        bert_probe_tokens=(8, 128), bert_train_stds=(0.01, 0.02, 0.0361, 0.05), bert_gain_stds=(0.01, 0.02, 0.05), bert_train_width=256,
        bert_train_depth=12, bert_train_steps=3000, bert_train_warmup=300, bert_train_batch=(64, 64), bert_vocab=64,
        # issue 7 (magnitude decomposition / DeepNorm)
        mag_probe_depth=24, mag_alphas=(1.0, 2.0, 4.0, 8.0, 16.0, 32.0),
        mag_lambdas=(0.03125, 0.0625, 0.125, 0.25, 0.5, 1.0), mag_update_depths=(4, 16, 64, 256),
        mag_train_depths=(12, 48, 192), mag_train_steps=1000, mag_identity_depth=192,
        mag_slider_depths=(6, 24, 96), mag_slider_steps=40,
        # issue 8 (why residuals)
        res_widths=(1, 16, 256, 1024), res_depths=(10, 30, 100, 300, 1000, 3000), res_probe_batch=128,
        res_grad_depths=(10, 30, 100, 300), res_grad_widths=(16, 64, 256), res_grad_seeds=5, res_train_width=256,
        res_train_depths=(20, 100, 300),
        res_train_steps=1000, res_transformer_depths=(24, 96), res_slider_depths=(10, 100, 300),
        res_slider_widths=(16, 256), res_slider_exponents=(0.0, 0.25, 0.5, 1.0), res_slider_steps=60,
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
