"""The compiled blocks and Adam step (deepnotes/core/kernels/*.cpp) compute what the PyTorch
path computes: every output and gradient in float64 to relative 1e-10, for every norm style and block
kind; the same numbers for any thread count; a clear fallback where no compiler is found."""

import random
import warnings

import pytest
import torch

from deepnotes.core import blocks, kernels
from deepnotes.core.config import NORM_STYLES, ModelConfig, TrainConfig
from deepnotes.core.data import MarkovLanguage, seeded
from deepnotes.core.engine import Stack
from deepnotes.core.optim import ADAM_EPS, EnsembleOptimizer
from deepnotes.core.train import train_ensemble

F64 = torch.float64
TOL = 1e-10

needs_compiler = pytest.mark.skipif(kernels.compiler() is None, reason="no C++ compiler on this machine")


def rel_err(a, b) -> float:
    a, b = a.detach(), b.detach()
    return float((a - b).norm() / b.norm().clamp_min(1e-300))


def random_stack(trial: int, dtype=F64):
    """Seeded random shapes and member mixes: heads 1–4, T from 1, MLP blocks, GELU, encoders, α ≠ 1, gates on
    any style's branch, widths that are not multiples of a vector (the kernels' scalar tails)."""
    rnd = random.Random(trial)
    h = rnd.choice([1, 2, 4])
    shared = dict(
        d_model=h * rnd.choice([2, 3, 4, 8, 16]),
        n_heads=h,
        d_ff=rnd.choice([4, 12, 33, 64]),
        vocab_size=7,
        block=rnd.choice(["transformer", "transformer", "mlp"]),
        causal=rnd.random() < 0.6,
        activation=rnd.choice(["relu", "gelu"]),
        max_len=20,
        n_layers=rnd.randint(1, 5),
    )
    gates = random.Random(1000 + trial)  # issue 65: half the members of a style with a skip path get a gate
    cfgs = [
        ModelConfig(
            norm=norm,
            **shared,
            **({"alpha": rnd.uniform(0.5, 3)} if norm == "deepnorm" else {}),
            **({"gate": gates.uniform(0.1, 1.5)} if norm not in ("rezero", "plain") and gates.random() < 0.5 else {}),
        )
        for norm in (rnd.choice(NORM_STYLES) for _ in range(rnd.randint(1, 6)))
    ]
    with seeded(trial):
        stack = Stack(cfgs, seeds=list(range(len(cfgs))), dtype=dtype)
        with torch.no_grad():
            for p in stack.parameters():
                p.add_(0.1 * torch.randn_like(p))
        x = torch.randn(len(cfgs), rnd.randint(1, 3), rnd.randint(1, 17), shared["d_model"], dtype=dtype)
    return stack, x


def outputs_and_gradients(stack, x, compiled: bool, monkeypatch):
    """x_N, ∂L/∂x_0 and every parameter gradient of L = Σ x_N ⊙ probe, on the chosen path."""
    monkeypatch.setenv(blocks.ENV_SWITCH, "all" if compiled else "0")
    stack.zero_grad(set_to_none=True)
    x = x.clone().requires_grad_(True)
    y = stack.run_blocks(x)
    probe = torch.linspace(-1, 1, y.numel(), dtype=y.dtype).view_as(y)
    (y * probe).sum().backward()
    return y.detach(), x.grad, {n: p.grad.clone() for n, p in stack.named_parameters() if p.grad is not None}


@needs_compiler
@pytest.mark.parametrize("trial", range(16))
def test_compiled_blocks_equal_the_pytorch_path(trial, monkeypatch):
    stack, x = random_stack(trial)
    monkeypatch.setenv(blocks.ENV_SWITCH, "all")
    assert blocks.compiled_usable(
        stack.styles, stack.block_names, x.flatten(1, 2), [getattr(stack, n) for n in stack.block_names]
    )
    y, dx, grads = outputs_and_gradients(stack, x, True, monkeypatch)
    y_ref, dx_ref, grads_ref = outputs_and_gradients(stack, x, False, monkeypatch)
    assert rel_err(y, y_ref) < TOL
    assert rel_err(dx, dx_ref) < TOL
    assert set(grads) == set(grads_ref)
    for name, g in grads_ref.items():
        assert (rel_err(grads[name], g) < TOL) if float(g.norm()) > 0 else float(grads[name].norm()) == 0.0, name


def float32_stack(trial: int, activation: str = "relu", widths=(8, 12, 16)):
    """Every norm style (and Pre-LN, Post-LN with a gate) in float32, head widths ``widths`` times 1, 2 or 4 heads
    (whole 8 × 8 transpose blocks, whole vectors of every target's width, and their edges)."""
    rnd = random.Random(trial)
    h = rnd.choice([1, 2, 4])
    shared = dict(
        d_model=h * rnd.choice(widths),
        n_heads=h,
        d_ff=rnd.choice([16, 24, 64]),
        vocab_size=7,
        causal=rnd.random() < 0.6,
        activation=activation,
        max_len=20,
        n_layers=rnd.randint(1, 4),
    )
    cfgs = [ModelConfig(norm=norm, **shared) for norm in NORM_STYLES]
    cfgs += [ModelConfig(norm=norm, gate=0.4, **shared) for norm in ("pre", "post")]  # a gate on a LayerNorm style
    with seeded(trial):
        stack = Stack(cfgs, seeds=list(range(len(cfgs))), dtype=torch.float32)
        x = torch.randn(len(cfgs), rnd.randint(1, 3), rnd.randint(5, 17), shared["d_model"])
    return stack, x


def assert_float32_close(got, ref):
    """x_N, ∂L/∂x_0 and every gradient to float32 rounding (a gradient that is 0 stays exactly 0)."""
    (y, dx, grads), (y_ref, dx_ref, grads_ref) = got, ref
    assert rel_err(y, y_ref) < 1e-5 and rel_err(dx, dx_ref) < 1e-4
    assert set(grads) == set(grads_ref)
    for name, g in grads_ref.items():
        assert rel_err(grads[name], g) < 1e-4 if float(g.norm()) > 0 else float(grads[name].norm()) == 0.0, name


@needs_compiler
@pytest.mark.parametrize("trial", range(16, 24))
def test_compiled_float32_blocks_equal_the_pytorch_path(trial, monkeypatch):
    """float32 takes code of its own (8 × 8 vector transposes, the target's tiles): against the PyTorch
    path in float32, to float32 rounding."""
    stack, x = float32_stack(trial)
    assert_float32_close(
        outputs_and_gradients(stack, x, True, monkeypatch), outputs_and_gradients(stack, x, False, monkeypatch)
    )


@needs_compiler
@pytest.mark.parametrize("trial", range(4))
def test_kept_intermediates_and_recomputed_ones_give_the_same_bits(trial, monkeypatch):
    """Under KEEP_LIMIT_BYTES the forward pass keeps each layer's intermediates; past it the backward
    recomputes them from the layer's input: the same arithmetic, so the same bits (float32)."""
    stack, x = random_stack(trial, dtype=torch.float32)
    kept = outputs_and_gradients(stack, x, True, monkeypatch)
    monkeypatch.setattr(blocks, "KEEP_LIMIT_BYTES", 0)
    recomputed = outputs_and_gradients(stack, x, True, monkeypatch)
    assert torch.equal(kept[0], recomputed[0]) and torch.equal(kept[1], recomputed[1])
    assert kept[2].keys() == recomputed[2].keys()
    assert all(torch.equal(kept[2][n], recomputed[2][n]) for n in kept[2])


@needs_compiler
@pytest.mark.parametrize("limit", [blocks.KEEP_LIMIT_BYTES, 0])
def test_two_forward_passes_before_one_backward(limit, monkeypatch):
    """What a forward pass keeps for its backward is reused across steps only when no graph holds it:
    two graphs alive at once each keep their own."""
    monkeypatch.setattr(blocks, "KEEP_LIMIT_BYTES", limit)
    stack, x = random_stack(4)
    grads = {}
    for switch in ("all", "0"):
        monkeypatch.setenv(blocks.ENV_SWITCH, switch)
        stack.zero_grad(set_to_none=True)
        first, second = stack.run_blocks(x), stack.run_blocks(-2 * x)
        ((first**2).sum() + (second**3).sum()).backward()
        grads[switch] = {n: p.grad.clone() for n, p in stack.named_parameters() if p.grad is not None}
    for name, g in grads["0"].items():
        assert rel_err(grads["all"][name], g) < TOL, name


@needs_compiler
def test_compiled_forward_without_gradients_equals_the_pytorch_path(monkeypatch):
    stack, x = random_stack(3)
    with torch.no_grad():
        monkeypatch.setenv(blocks.ENV_SWITCH, "all")
        y = stack.run_blocks(x)
        monkeypatch.setenv(blocks.ENV_SWITCH, "0")
        assert rel_err(y, stack.run_blocks(x)) < TOL


@needs_compiler
def test_same_numbers_for_any_thread_count(monkeypatch):
    """Each member runs on one thread in a fixed order: 1 and 3 threads give the same bits (float32)."""
    stack, x = random_stack(5, dtype=torch.float32)
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = outputs_and_gradients(stack, x, True, monkeypatch)
        torch.set_num_threads(3)
        three = outputs_and_gradients(stack, x, True, monkeypatch)
    finally:
        torch.set_num_threads(threads)
    assert torch.equal(one[0], three[0]) and torch.equal(one[1], three[1])
    assert all(torch.equal(one[2][n], three[2][n]) for n in one[2])


@needs_compiler
def test_a_gradient_someone_still_holds_is_not_overwritten(monkeypatch):
    """The kernel reuses last step's gradient buffer only when nothing holds that gradient."""
    stack, x = random_stack(1)
    _, _, first = outputs_and_gradients(stack, x, True, monkeypatch)
    held = {n: p.grad for n, p in stack.named_parameters() if p.grad is not None}
    stack.zero_grad(set_to_none=True)
    (stack.run_blocks(2 * x) ** 2).sum().backward()  # a different gradient
    for name, g in held.items():
        assert torch.equal(g, first[name]), name


@needs_compiler
def test_gradients_accumulate_over_two_backward_passes(monkeypatch):
    stack, x = random_stack(2)
    monkeypatch.setenv(blocks.ENV_SWITCH, "all")
    stack.zero_grad(set_to_none=True)
    (stack.run_blocks(x) ** 2).sum().backward()
    once = {n: p.grad.clone() for n, p in stack.named_parameters() if p.grad is not None}
    (stack.run_blocks(x) ** 2).sum().backward()
    for name, g in once.items():
        assert rel_err(getattr(stack, name).grad, 2 * g) < TOL, name


@needs_compiler
@pytest.mark.parametrize("optimizer", ["adam", "sgd", "lamb"])
def test_training_with_members_own_rates_equals_the_pytorch_path(optimizer, monkeypatch):
    """Five steps with warmups that differ per member (Adam's compiled own-rate step) equal the same
    steps on the PyTorch path, loss by loss."""
    cfgs = [
        ModelConfig(n_layers=3, d_model=8, n_heads=2, d_ff=12, vocab_size=6, norm=n)
        for n in ("post", "pre", "deepnorm", "rezero")
    ]
    tcfgs = [
        TrainConfig(optimizer=optimizer, lr=1e-2, steps=5, warmup_steps=3 * (i % 2), batch_size=4, seq_len=6, seed=i)
        for i in range(len(cfgs))
    ]
    task = MarkovLanguage(6, seed=0)
    runs = {}
    for switch in ("1", "0"):
        monkeypatch.setenv(blocks.ENV_SWITCH, switch)
        runs[switch] = train_ensemble(Stack(cfgs, seeds=[t.seed for t in tcfgs], dtype=F64), task, tcfgs)
    for compiled, plain in zip(runs["1"], runs["0"], strict=True):
        assert compiled.losses == pytest.approx(plain.losses, rel=1e-10)


@needs_compiler
def test_adam_in_the_backward_pass_equals_adam_after_it(monkeypatch):
    """Without a tracker reading gradients, the compiled backward steps each layer's θ, m, v as soon as
    its gradient is known (no block gradient is left); with one (BlockGradNorms), the optimizer steps
    after the backward pass. Five steps of members with their own warmups: the same losses."""
    from deepnotes.core.measure import BlockGradNorms

    monkeypatch.setenv(blocks.ENV_SWITCH, "1")
    cfgs = [
        ModelConfig(n_layers=3, d_model=8, n_heads=2, d_ff=12, vocab_size=6, norm=n)
        for n in ("post", "pre", "deepnorm", "rezero")
    ]
    tcfgs = [
        TrainConfig(lr=1e-2, steps=5, warmup_steps=3 * (i % 2), batch_size=4, seq_len=7, seed=i)
        for i in range(len(cfgs))
    ]
    task = MarkovLanguage(6, seed=0)
    runs, stacks = {}, {}
    for when, trackers in (("in", ()), ("after", (BlockGradNorms(),))):
        stacks[when] = Stack(cfgs, seeds=[t.seed for t in tcfgs], dtype=F64)
        runs[when] = train_ensemble(stacks[when], task, tcfgs, trackers=trackers)
    for a, b in zip(runs["in"], runs["after"], strict=True):
        assert a.losses == pytest.approx(b.losses, rel=1e-10)
    stepped, plain = stacks["in"], stacks["after"]
    assert all(getattr(stepped, n).grad is None for n in stepped.block_names)
    assert all(getattr(plain, n).grad is not None for n in plain.block_names)
    assert all(len(h.grad_norms) == 5 for h in runs["after"])
    for name in stepped.block_names:
        assert rel_err(getattr(stepped, name), getattr(plain, name)) < TOL, name


@needs_compiler
def test_compiled_adam_is_pytorch_adam_per_member(monkeypatch):
    """One step of the own-rate kernel equals torch.optim.Adam run on each member's slice at its rate."""
    cfgs = [ModelConfig(n_layers=2, d_model=8, n_heads=2, d_ff=12, vocab_size=6)] * 3
    lrs = [1e-2, 3e-3, 1e-4]
    stack = Stack(cfgs, seeds=[0, 1, 2], dtype=F64)
    opt = EnsembleOptimizer(stack, [TrainConfig(lr=lr, steps=2) for lr in lrs])
    monkeypatch.setenv(blocks.ENV_SWITCH, "1")
    with seeded(0):
        grads = [{n: torch.randn_like(p) for n, p in stack.named_parameters()} for _ in range(2)]
    before = {n: p.detach().clone() for n, p in stack.named_parameters()}
    for step, g in enumerate(grads):
        for n, p in stack.named_parameters():
            p.grad = g[n].clone()
        opt.step(step)
    for k, lr in enumerate(lrs):
        ref = {n: before[n].select(stack.slots[n].member_axis, k).clone().requires_grad_(True) for n in before}
        ref_opt = torch.optim.Adam(ref.values(), lr=lr, betas=(opt.b1, opt.b2), eps=ADAM_EPS)
        for g in grads:
            for n, t in ref.items():
                t.grad = g[n].select(stack.slots[n].member_axis, k).clone()
            ref_opt.step()
        for n, t in ref.items():
            assert rel_err(stack.member(n, k), t.detach()) < TOL, (k, n)


def test_without_a_compiler_the_pytorch_path_runs_and_says_so(monkeypatch, tmp_path):
    monkeypatch.setenv("CXX", str(tmp_path / "no-such-compiler"))
    monkeypatch.setenv("DEEPNOTES_CACHE", str(tmp_path))
    kernels._library.cache_clear()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert kernels.library() is None
            stack, x = random_stack(0)
            assert stack.run_blocks(x).isfinite().all()  # the PyTorch path
        assert any("PyTorch operations" in str(w.message) for w in caught)
    finally:
        kernels._library.cache_clear()


@needs_compiler
def test_an_input_of_any_layout_takes_the_compiled_path(monkeypatch):
    """The same input for every member (an expanded view, as a benchmark feeds it) is copied, not refused."""
    stack, x = random_stack(4)
    monkeypatch.setenv(blocks.ENV_SWITCH, "all")
    shared = x[:1].expand_as(x)  # stride 0 over the members
    assert blocks.compiled_usable(
        stack.styles, stack.block_names, shared.flatten(1, 2), [getattr(stack, n) for n in stack.block_names]
    )
    with torch.no_grad():
        y = stack.run_blocks(shared)
        monkeypatch.setenv(blocks.ENV_SWITCH, "0")
        assert rel_err(y, stack.run_blocks(shared.contiguous())) < TOL


@needs_compiler
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_small_blocks_take_the_compiled_path_large_ones_pytorchs(activation, monkeypatch):
    """The rule of compiled_wins: GELU stacks take the compiled path as ReLU ones do (the kernels' GELU is
    vectorized); a layer past COMPILED_LAYER_FLOPS takes PyTorch's, unless DEEPNOTES_FUSED=all."""
    small = ModelConfig(n_layers=2, d_model=8, n_heads=2, d_ff=12, vocab_size=6, activation=activation)
    large = ModelConfig(n_layers=1, d_model=64, n_heads=2, d_ff=256, vocab_size=6, activation=activation)
    monkeypatch.setenv(blocks.ENV_SWITCH, "1")
    for cfg, tokens, expected in ((small, 4, True), (large, 1024, False)):
        stack = Stack([cfg], seeds=[0], dtype=F64)
        x, params = torch.zeros(1, tokens, cfg.d_model, dtype=F64), [getattr(stack, n) for n in stack.block_names]
        assert blocks.compiled_wins(tokens, cfg.d_model, cfg.d_ff, True) is expected
        assert blocks.compiled_usable(stack.styles, stack.block_names, x, params) is expected
    monkeypatch.setenv(blocks.ENV_SWITCH, "all")
    assert blocks.compiled_usable(stack.styles, stack.block_names, x, params)
    monkeypatch.setenv(blocks.ENV_SWITCH, "0")
    assert not blocks.compiled_usable(stack.styles, stack.block_names, x, params)


def test_the_rule_counts_a_layers_matrix_products():
    """2·M·(4d² + 2·d·d_ff): the 1000-layer chapter's blocks (32 tokens, d = 32, d_ff = 64) are far
    below the limit, BERT's MLM encoder (1024 tokens, d = 64, d_ff = 256) above it."""
    assert blocks.layer_flops(32, 32, 64, True) == 2 * 32 * (4 * 32 * 32 + 2 * 32 * 64) == 524288
    assert blocks.layer_flops(32, 32, 64, False) == 2 * 32 * 2 * 32 * 64
    assert blocks.compiled_wins(32, 32, 64, True)
    assert not blocks.compiled_wins(1024, 64, 256, True)
