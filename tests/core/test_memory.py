"""Sizes are checked against a memory estimate before anything is allocated (issue 33): a depth or width a
machine cannot hold is a ValueError naming the sizes and the estimate, raised at once, not an allocation
of gigabytes, a torch error or a minutes-long loop over layers."""

from __future__ import annotations

import pytest
import torch
from torch.overrides import TorchFunctionMode

from deepnotes.core import config
from deepnotes.core.config import ModelConfig, TrainConfig, check_fits, parameter_counts, stack_bytes
from deepnotes.core.engine import Stack
from deepnotes.core.models import build_model
from deepnotes.core.train import train

SHAPES = [
    ModelConfig(n_layers=3),
    ModelConfig(n_layers=2, d_model=48, n_heads=4, d_ff=96, vocab_size=40, norm="deepnorm"),
    ModelConfig(n_layers=2, causal=False, head_transform=True, activation="gelu", init_std=0.02, max_len=16),
    ModelConfig(n_layers=4, block="mlp", norm="rezero"),
]


@pytest.mark.parametrize("cfg", SHAPES, ids=lambda c: f"{c.block}-{c.norm}-causal{c.causal}")
def test_the_parameter_estimate_bounds_the_engines_tensors_from_above_and_closely(cfg):
    stack = Stack([cfg, cfg])
    actual = sum(p.numel() for p in stack.parameters())  # both members
    per_block, top = parameter_counts(cfg)
    estimate = 2 * (cfg.n_layers * per_block + top)
    assert actual <= estimate < 1.3 * actual
    assert stack_bytes(cfg, 2) == config.FLOAT_BYTES * estimate


def test_training_needs_the_four_copies_and_the_activations():
    cfg, train_cfg = ModelConfig(n_layers=2), TrainConfig(batch_size=4, seq_len=8)
    weights = stack_bytes(cfg, 3)
    assert stack_bytes(cfg, 3, train_cfg) == config.STATE_COPIES * weights + 3 * config.FLOAT_BYTES * (
        config.activation_floats(cfg, train_cfg)
    )


def test_the_cpu_reports_the_memory_it_has():
    free = config.available_bytes("cpu")
    assert free is None or 2**26 < free < 2**50


@pytest.mark.parametrize(
    "build",
    [
        lambda: Stack([ModelConfig(n_layers=10**6, d_model=1024, n_heads=16, d_ff=4096)]),
        lambda: Stack([ModelConfig(d_model=2**20, n_heads=1, d_ff=2**20)] * 2),
        lambda: build_model(ModelConfig(n_layers=10**6, d_model=1024, n_heads=16, d_ff=4096)),
        lambda: train(ModelConfig(n_layers=2), TrainConfig(steps=1, batch_size=10**7, seq_len=10**4)),
    ],
    ids=["stack-depth", "stack-width", "reference-model-depth", "train-activations"],
)
def test_a_stack_that_cannot_fit_is_refused_at_once_with_the_estimate(build):
    """Refused before any layer is allocated: every tensor a torch operator returns on the way to the error is
    counted (a behaviour, not a time, so that it holds on a slow machine as on a fast one)."""
    refused = r"needs about [\d.e+]+ GiB .* more than the .* GiB free on (cpu|cuda)"
    with Allocations() as spy, pytest.raises(ValueError, match=refused):
        build()
    assert spy.elements <= ALLOWED_ELEMENTS, spy.elements


class Allocations(TorchFunctionMode):
    """Counts the elements of every tensor that a torch function or tensor method returns while the mode is on."""

    def __init__(self):
        super().__init__()
        self.elements = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        results = out if isinstance(out, (tuple, list)) else (out,)
        self.elements += sum(t.numel() for t in results if isinstance(t, torch.Tensor))
        return out


def test_the_allocation_count_sees_a_layer_being_built():
    """The spy can fail: one d_model = 1024 linear layer is past the allowance."""
    with Allocations() as spy:
        torch.nn.Linear(1024, 1024)
    assert spy.elements > ALLOWED_ELEMENTS


# less than one of the refused models' layers: a d_model = 1024 layer's attention weights alone are 4·1024²
ALLOWED_ELEMENTS = 10**6


def test_the_message_names_the_sizes(monkeypatch):
    monkeypatch.setattr(config, "available_bytes", lambda where=None: 10**6)
    cfg = ModelConfig(n_layers=100, d_model=64, n_heads=2, d_ff=128)
    with pytest.raises(ValueError, match=r"n_layers=100, width d_model=64, d_ff=128, vocab_size=16, batch_size=16"):
        check_fits(cfg, 2, TrainConfig())
    assert check_fits(ModelConfig(n_layers=1, d_model=8, n_heads=1, d_ff=8), 1) < 10**6


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_the_estimate_bounds_what_training_takes_on_a_gpu():
    cfg = ModelConfig(n_layers=24, d_model=128, n_heads=4, d_ff=512, vocab_size=64)
    train_cfg = TrainConfig(steps=2, batch_size=16, seq_len=64)
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    train(cfg, train_cfg, device="cuda")
    peak = torch.cuda.max_memory_allocated() - base
    estimate = stack_bytes(cfg, 1, train_cfg)
    assert peak <= estimate < 6 * peak, f"peak {peak / 2**20:.1f} MiB, estimate {estimate / 2**20:.1f} MiB"
