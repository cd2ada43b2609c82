"""The stacked-weight engine computes the reference's function: same losses, gradients and training
runs as models.py trained by the test oracle's loop (tests/oracle.py), for every norm style and block
kind, in float64."""

import math

import oracle as rt
import pytest
import torch
from oracle import one_step_loss_change, train

from deepnotes.core import measure
from deepnotes.core.blocks import ENV_SWITCH, FORM_SWITCH, softmax
from deepnotes.core.config import NORM_STYLES, ModelConfig, TrainConfig
from deepnotes.core.data import MarkovLanguage, seeded
from deepnotes.core.engine import (
    GATES,
    Stack,
    block_list,
    build_stack,
    export_member,
    load_reference,
    reference_layout,
    stack_of,
)
from deepnotes.core.measure import block_matrices, per_block_grad_norms, step_probes, stream_profiles
from deepnotes.core.models import Block, build_model
from deepnotes.core.train import Masked, train_ensemble

F64 = torch.float64
TOL = 1e-10


def small(norm="post", **kw):
    return ModelConfig(n_layers=3, d_model=8, n_heads=2, d_ff=12, vocab_size=6, norm=norm, **kw)


def rel_err(a: torch.Tensor, b: torch.Tensor) -> float:
    a, b = a.detach(), b.detach()
    return float((a - b).norm() / b.norm().clamp_min(1e-300))


def member_configs(norm):
    if norm == "deepnorm":
        return [small(norm, alpha=a) for a in (1.0, 2.5, 0.7)]
    return [small(norm, beta=b) for b in (1.0, 0.5, 2.0)]


def randomize(model):
    """Move every parameter off its init (norm gains, biases and gates start at 1 or 0)."""
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.1 * torch.randn_like(p))
    return model


def check_against_reference(cfgs, causal: bool, seed: int, token_seed: int) -> dict[int, dict]:
    """A stack of ``cfgs`` loaded with randomized reference models (float64; weights drawn under ``seed``, tokens
    under ``token_seed``): every member's loss (next-token, or masked with ``causal`` False) and every gradient its
    reference has equal the reference's to TOL; returns each member's reference gradients by name."""
    k_ = len(cfgs)
    with seeded(seed):
        refs = [randomize(build_model(cfg, seed=i, dtype=F64)) for i, cfg in enumerate(cfgs)]
    stack = Stack(cfgs, seeds=list(range(k_)), dtype=F64)
    for k, ref in enumerate(refs):
        load_reference(stack, k, ref)
    tokens = torch.randint(0, 6, (k_, 4, 7), generator=torch.Generator().manual_seed(token_seed))
    if causal:
        ref_losses = [ref.loss(t) for ref, t in zip(refs, tokens, strict=True)]
        losses = stack.next_token_losses(tokens)
    else:
        mask = torch.zeros(k_, 4, 7, dtype=torch.bool)
        mask[:, :, 2] = mask[:, 1:, 4] = True
        ref_losses = [ref.mlm_loss(t, m) for ref, t, m in zip(refs, tokens, mask, strict=True)]
        losses = stack.masked_losses(tokens, mask)
    losses.sum().backward()
    out = {}
    for k, (ref, loss) in enumerate(zip(refs, ref_losses, strict=True)):
        loss.backward()
        assert abs(float(losses[k].detach()) - float(loss.detach())) <= TOL * abs(float(loss.detach()))
        out[k] = reference_layout(stack, ref, of=lambda t: t.grad, k=k)
        for name, g in out[k].items():
            assert rel_err(stack.member(name, k, grad=True), g) < TOL, (causal, k, name)
    return out


ENCODER = dict(causal=False, head_transform=True, activation="gelu", max_len=10)  # the masked-loss variant


@pytest.mark.parametrize("norm", NORM_STYLES)
@pytest.mark.parametrize("causal", [True, False])
def test_engine_matches_reference_loss_and_gradients(norm, causal):
    check_against_reference(
        [ModelConfig(**{**c.__dict__, **({} if causal else ENCODER)}) for c in member_configs(norm)],
        causal,
        seed=3,
        token_seed=0,
    )


@pytest.mark.parametrize("norm", NORM_STYLES)
def test_mlp_blocks_match_reference_blocks(norm):
    cfgs = [ModelConfig(**{**c.__dict__, "block": "mlp"}) for c in member_configs(norm)]
    with seeded(5):
        refs = [randomize(torch.nn.ModuleList([Block(c) for _ in range(c.n_layers)]).to(F64)) for c in cfgs]
    stack = Stack(cfgs, dtype=F64)
    for k, ref in enumerate(refs):
        load_reference(stack, k, ref)
    x = torch.randn(3, 2, 5, 8, dtype=F64)  # [K, B, T, d]
    probe = torch.randn(2, 5, 8, dtype=F64)
    (stack.run_blocks(x) * probe).sum().backward()
    for k, ref in enumerate(refs):
        y = x[k]
        for block in ref:
            y = block(y)
        (y * probe).sum().backward()
        assert rel_err(stack.run_blocks(x)[k].detach(), y.detach()) < TOL
        for name, g in reference_layout(stack, ref, of=lambda t: t.grad).items():
            assert rel_err(stack.member(name, k, grad=True), g) < TOL, (norm, k, name)
    assert (
        rel_err(
            torch.cat([p.flatten() for p in block_list(stack, 1).parameters()]),
            torch.cat([p.flatten() for p in refs[1].parameters()]),
        )
        == 0
    )


@pytest.mark.parametrize(
    "optimizer,lrs", [("sgd", (0.05, 0.1, 0.02)), ("adam", (1e-2, 3e-3, 2e-2)), ("lamb", (1e-2, 2e-2, 5e-3))]
)
def test_ensemble_matches_separate_reference_runs(optimizer, lrs):
    cfgs = [small("deepnorm", alpha=a) for a in (1.0, 2.0, 3.0)]
    tcfgs = [
        TrainConfig(optimizer=optimizer, lr=lr, steps=5, warmup_steps=w, batch_size=4, seq_len=6, seed=s)
        for lr, w, s in zip(lrs, (0, 3, 2), (0, 7, 9), strict=True)
    ]
    tasks = [MarkovLanguage(6, seed=s) for s in (0, 1, 0)]
    refs = [build_model(c, seed=t.seed, dtype=F64) for c, t in zip(cfgs, tcfgs, strict=True)]
    stack = Stack(cfgs, seeds=[t.seed for t in tcfgs], dtype=F64)
    for k, ref in enumerate(refs):
        load_reference(stack, k, ref)
    hists = train_ensemble(
        stack, tasks, tcfgs, trackers=[measure.BlockGradNorms(), measure.BlockUpdates(2), measure.UpdateSize()]
    )
    for k, (ref, task, tcfg) in enumerate(zip(refs, tasks, tcfgs, strict=True)):
        h = train(ref, task, tcfg, trackers=[rt.BlockGradNorms(), rt.BlockUpdates(2), rt.UpdateSize()])
        assert len(hists[k].losses) == len(h.losses) == 5
        for a, b in zip(hists[k].losses, h.losses, strict=True):
            assert abs(a - b) <= TOL * abs(b)
        assert hists[k].lrs == pytest.approx(h.lrs, rel=1e-12)
        for field in ("grad_norms", "block_updates"):
            assert torch.tensor(getattr(hists[k], field)) == pytest.approx(torch.tensor(getattr(h, field)), rel=1e-8)
        assert hists[k].update_rms == pytest.approx(h.update_rms, rel=1e-5, abs=1e-7)  # taken in float32
        # weights to 1e-8: the key bias has an exactly zero gradient (softmax ignores a shift of all
        # scores), so its ~1e-17 rounding noise differs between the two orders of summation, and Adam
        # divides it by √v̂ + ε with ε = 1e-8
        for name, w in reference_layout(stack, ref).items():
            assert rel_err(stack.member(name, k).detach(), w) < 1e-8, (optimizer, k, name)


def test_masked_objective_ensemble_matches_reference():
    cfg = ModelConfig(
        n_layers=2,
        d_model=8,
        n_heads=2,
        d_ff=12,
        vocab_size=6,
        causal=False,
        init_std=0.05,
        head_transform=True,
        activation="gelu",
        max_len=8,
    )
    tcfgs = [TrainConfig(lr=1e-2, steps=4, batch_size=3, seq_len=8, seed=s) for s in (0, 1)]
    task = MarkovLanguage(6, seed=0)
    refs = [build_model(cfg, seed=s, dtype=F64) for s in (0, 1)]
    stack = Stack([cfg, cfg], seeds=[0, 1], dtype=F64)
    for k, ref in enumerate(refs):
        load_reference(stack, k, ref)
    hists = train_ensemble(stack, task, tcfgs, objective=Masked(0.3))
    for k, ref in enumerate(refs):
        h = train(ref, task, tcfgs[k], objective=Masked(0.3))
        assert hists[k].losses == pytest.approx(h.losses, rel=TOL)
        assert hists[k].floor == h.floor


def test_export_member_round_trips():
    stack = build_stack(small("pre"), seeds=[4, 5], dtype=F64)
    ref = export_member(stack, 1)
    tokens = torch.randint(0, 6, (2, 3, 5))
    assert float(ref.loss(tokens[1]).detach()) == pytest.approx(
        float(stack.next_token_losses(tokens)[1].detach()), rel=TOL
    )


def test_same_seed_same_numbers_and_members_independent_of_each_other():
    a, b = build_stack(small(), seeds=[3, 8]), build_stack(small(), seeds=[8])
    assert torch.equal(a.member("qkv_w", 1), b.member("qkv_w", 0))
    assert torch.equal(a.member("embed", 1), b.member("embed", 0))
    assert not torch.equal(a.member("qkv_w", 0), a.member("qkv_w", 1))
    cfg = TrainConfig(steps=4, batch_size=4, seq_len=6)
    runs = [train_ensemble(build_stack(small(), seeds=[3, 8]), MarkovLanguage(6), cfg) for _ in range(2)]
    assert [h.losses for h in runs[0]] == [h.losses for h in runs[1]]


@torch.no_grad()  # reads parameters as numbers
def test_init_follows_the_reference_distributions():
    cfg = ModelConfig(n_layers=40, d_model=32, d_ff=64, norm="deepnorm")
    stack = build_stack(cfg, seeds=[0])
    beta = cfg.branch_beta
    assert float(stack.member("qkv_w", 0)[..., :32].std()) == pytest.approx(math.sqrt(1 / 32), rel=0.02)
    assert float(stack.member("qkv_w", 0)[..., 64:].std()) == pytest.approx(beta * math.sqrt(1 / 32), rel=0.02)
    assert float(stack.member("fc1_w", 0).std()) == pytest.approx(beta * math.sqrt(2 / 96), rel=0.02)
    bert = build_stack(ModelConfig(n_layers=20, init_std=0.02, causal=False), seeds=[0])
    w = bert.member("fc2_w", 0)
    assert float(w.abs().max()) <= 0.04 and float(w.std()) == pytest.approx(0.02 * 0.8796, rel=0.03)
    assert float(stack.alpha[0]) == pytest.approx(cfg.skip_alpha)


def test_a_diverging_member_is_recorded_and_the_others_train_on():
    cfg = small("none")
    tcfgs = [TrainConfig(optimizer="sgd", lr=lr, steps=30, batch_size=4, seq_len=6, seed=0) for lr in (1e6, 0.05)]
    hists = train_ensemble(build_stack(cfg, seeds=[0, 0]), MarkovLanguage(6), tcfgs)
    assert hists[0].diverged and not hists[1].diverged
    assert len(hists[1].losses) == 30 and all(math.isfinite(x) for x in hists[1].losses)
    assert len(hists[0].losses) == hists[0].diverged_at


def test_members_must_share_a_graph_and_a_loop():
    with pytest.raises(ValueError, match="share"):
        Stack([small(), ModelConfig(**{**small("pre").__dict__, "d_ff": 16})])
    with pytest.raises(ValueError, match="optimizer"):
        train_ensemble(
            build_stack(small(), seeds=[0, 1]),
            MarkovLanguage(6),
            [TrainConfig(optimizer="sgd"), TrainConfig(optimizer="adam")],
        )


def test_a_reference_model_trains_on_the_engine_as_in_the_oracle_loop():
    """stack_of loads a reference model into a member; trained with its gates set by GateSchedule and
    frozen, it follows the oracle loop step for step, and export_member gives the trained model back."""
    cfg = small("rezero")
    tcfg = TrainConfig(lr=1e-2, steps=4, batch_size=4, seq_len=6, seed=2)
    a, b = build_model(cfg, seed=2, dtype=F64), build_model(cfg, seed=2, dtype=F64)
    h_ref = train(
        a,
        MarkovLanguage(6),
        tcfg,
        trackers=[rt.GateSchedule(0.1), rt.Recorder("g", lambda m: float(m.blocks[0].sublayers[0].gate))],
        params=[p for n, p in a.named_parameters() if not n.endswith("gate")],
    )
    stack = stack_of([b], [2])
    h = train_ensemble(
        stack,
        MarkovLanguage(6),
        [tcfg],
        trainable=[n for n in stack.slots if n not in GATES],
        trackers=[measure.GateSchedule(0.1), measure.Recorder("g", lambda s: s.attn_gate[0, :, 0, 0].tolist())],
    )[0]
    assert h.losses == pytest.approx(h_ref.losses, rel=TOL)
    assert h.record("g") == h_ref.record("g")
    flat = [torch.cat([p.detach().flatten() for p in m.parameters()]) for m in (a, export_member(stack, 0))]
    assert rel_err(flat[1], flat[0]) < 1e-10  # the trained weights, read back


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_step_probes_match_the_reference_probe_per_member(optimizer):
    """The stacked one-step probe gives each member what probes.one_step_loss_change gives its exported
    model (Post-LN and DeepNorm members in one graph), and restores the weights."""
    cfgs = [small("post"), small("deepnorm", alpha=2.0, beta=0.5), small("post")]
    stack = build_stack(cfgs, seeds=[0, 1, 2], dtype=F64)
    gen = torch.Generator().manual_seed(0)
    tokens = torch.stack([MarkovLanguage(6).sample(4, 8, gen) for _ in cfgs])
    before = [p.detach().clone() for p in stack.parameters()]
    lr = {"sgd": 1e-3, "adam": 1e-5}[optimizer]
    probes = step_probes(stack, tokens, optimizer, lr)
    assert all(torch.equal(a, b) for a, b in zip(before, stack.parameters(), strict=True))
    for k, probe in enumerate(probes):
        model = export_member(stack, k)
        ref = one_step_loss_change(model, tokens[k], optimizer, lr, params=block_matrices(model))
        for field in ("loss_before", "delta_loss", "first_order", "grad_sq", "grad_l1", "update_norm"):
            assert getattr(probe, field) == pytest.approx(getattr(ref, field), rel=1e-7), field
        assert probe.block_grad_norms == pytest.approx(ref.block_grad_norms, rel=1e-10)
    with pytest.raises(ValueError, match="allowed: sgd, adam"):
        step_probes(stack, tokens, "lamb", lr)


@pytest.mark.parametrize("width", [4, 7, 15, 16, 17])
def test_padded_softmax_is_softmax(width):
    """float32 CPU rows of 7–15 entries are padded to 16 with −inf: same values, same gradients."""
    x = torch.randn(6, 5, width)
    x[..., -1] = float("-inf")  # a masked column, as in causal rows
    x.requires_grad_()
    g = torch.randn(6, 5, width)
    (softmax(x) * g).sum().backward()
    ours, x.grad = x.grad, None
    (torch.softmax(x, dim=-1) * g).sum().backward()
    assert torch.allclose(softmax(x), torch.softmax(x, dim=-1), atol=1e-7)
    assert torch.allclose(ours, x.grad, atol=1e-6)


def test_stream_profiles_match_the_reference_model_per_member():
    """RMS and cos(x_l, x_0) of the stream and per-block gradients: what the exported reference gives."""
    cfgs = [small("post"), small("deepnorm", alpha=2.0, beta=0.5)]
    stack = build_stack(cfgs, seeds=[0, 1], dtype=F64)
    gen = torch.Generator().manual_seed(0)
    tokens = torch.stack([MarkovLanguage(6).sample(4, 8, gen) for _ in cfgs])
    profiles = stream_profiles(stack, tokens)
    assert all(p.grad is None for p in stack.parameters())
    for k, prof in enumerate(profiles):
        model = export_member(stack, k)
        with torch.no_grad():
            _, stream = model.hidden(tokens[k, :, :-1], return_stream=True)
        assert prof.rms == pytest.approx([float(x.pow(2).mean().sqrt()) for x in stream], rel=1e-10)
        assert prof.cos_x0 == pytest.approx(
            [float(torch.nn.functional.cosine_similarity(x, stream[0], dim=-1).mean()) for x in stream], rel=1e-10
        )
        assert prof.cos_x0[0] == pytest.approx(1.0)
        model.loss(tokens[k]).backward()
        assert prof.grad_norms == pytest.approx(per_block_grad_norms(model), rel=1e-10)
        assert prof.loss == pytest.approx(model.loss(tokens[k]).item(), rel=1e-10)
        stream = []  # x_0 (the embedding) and every block's output, as the loss's own forward makes them
        hooks = [m.register_forward_hook(lambda _m, _i, out: stream.append(out)) for m in (model.embed, *model.blocks)]
        loss = model.loss(tokens[k])
        for hook in hooks:
            hook.remove()
        g = torch.autograd.grad(loss, stream)  # G(l) = ‖∂L/∂x_l‖ by autograd through the reference
        assert prof.stream_grads == pytest.approx([float(x.norm()) for x in g], rel=1e-10)


MIXED = [
    small("post"),
    small("pre", beta=0.7),
    small("deepnorm", alpha=2.0, beta=0.5),
    small("rezero"),
    small("none", beta=0.5),
    small("plain"),
    small("deepnorm", alpha=1.5, beta=1.0),
    small("post", beta=1.3),
]


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("form", ["cpu", "gpu"])
def test_every_member_of_a_mixed_ensemble_is_its_reference_model(causal, form, monkeypatch):
    """One graph for every style: each member's loss and every gradient equal its own reference model's,
    in both forms of the PyTorch path (the compiled kernels where they run)."""
    monkeypatch.setenv(FORM_SWITCH, form)
    extra = {} if causal else dict(causal=False, head_transform=True, activation="gelu", max_len=10)
    cfgs = [ModelConfig(**{**c.__dict__, **extra}) for c in MIXED]
    with seeded(4):
        refs = [randomize(build_model(c, seed=i, dtype=F64)) for i, c in enumerate(cfgs)]
    stack = Stack(cfgs, seeds=list(range(len(cfgs))), dtype=F64)
    for k, ref in enumerate(refs):
        load_reference(stack, k, ref)
    tokens = torch.randint(0, 6, (len(cfgs), 4, 7), generator=torch.Generator().manual_seed(1))
    if causal:
        losses, ref_losses = stack.next_token_losses(tokens), [r.loss(t) for r, t in zip(refs, tokens, strict=True)]
    else:
        mask = torch.zeros(len(cfgs), 4, 7, dtype=torch.bool)
        mask[:, :, 3] = True
        losses = stack.masked_losses(tokens, mask)
        ref_losses = [r.mlm_loss(t, m) for r, t, m in zip(refs, tokens, mask, strict=True)]
    losses.sum().backward()
    for k, (ref, loss) in enumerate(zip(refs, ref_losses, strict=True)):
        loss.backward()
        assert abs(losses[k].item() - loss.item()) <= TOL * abs(loss.item()), (cfgs[k].norm, k)
        grads = reference_layout(stack, ref, of=lambda t: t.grad, k=k)
        assert set(grads) == set(stack.member_names(k))
        for name, g in grads.items():
            assert rel_err(stack.member(name, k, grad=True), g) < TOL, (cfgs[k].norm, k, name)
        for name in set(stack.slots) - set(stack.member_names(k)):  # pieces its style lacks: 0, no gradient
            assert float(stack.member(name, k).detach().abs().max()) == 0.0
            assert float(stack.member(name, k, grad=True).abs().max()) == 0.0


@pytest.mark.parametrize("compiled", ["all", "0"])
@pytest.mark.parametrize("form", ["cpu", "gpu"])
def test_hand_written_backward_equals_autograd(compiled, form, monkeypatch):
    """The stack's one autograd node (the compiled kernels, or blocks.py's PyTorch path in either
    form) against autograd through the same blocks, op by op."""
    monkeypatch.setenv(ENV_SWITCH, compiled)
    monkeypatch.setenv(FORM_SWITCH, form)
    with seeded(6):
        stack = randomize(Stack(MIXED, seeds=list(range(len(MIXED))), dtype=F64))
    x = torch.randn(len(MIXED), 3, 6, 8, dtype=F64, requires_grad=True)  # [K, B, T, d]
    probe = torch.randn(len(MIXED), 3, 6, 8, dtype=F64)
    (stack.run_blocks(x) * probe).sum().backward()
    fused = {n: p.grad.clone() for n, p in stack.named_parameters() if p.grad is not None}, x.grad.clone()
    stack.zero_grad(), x.grad.zero_()
    y, _ = stack.run_blocks(x, return_stream=True)  # autograd, block by block
    (y * probe).sum().backward()
    assert rel_err(fused[1], x.grad) < TOL
    for name, g in fused[0].items():
        assert rel_err(g, getattr(stack, name).grad) < TOL, name


@pytest.mark.parametrize("optimizer,lr", [("adam", 1e-2), ("sgd", 0.05), ("lamb", 1e-2)])
def test_a_mixed_ensemble_trains_like_its_members_apart(optimizer, lr):
    """Five steps of every style as one ensemble equal the same runs trained one style at a time."""
    tcfgs = [
        TrainConfig(optimizer=optimizer, lr=lr, steps=5, warmup_steps=2 * (i % 2), batch_size=4, seq_len=6, seed=i)
        for i in range(len(MIXED))
    ]
    task = MarkovLanguage(6, seed=0)
    together = train_ensemble(
        Stack(MIXED, seeds=[t.seed for t in tcfgs], dtype=F64),
        task,
        tcfgs,
        trackers=[measure.BlockGradNorms(), measure.BlockUpdates(2)],
    )
    for k, (cfg, tcfg) in enumerate(zip(MIXED, tcfgs, strict=True)):
        apart = train_ensemble(
            Stack([cfg], seeds=[tcfg.seed], dtype=F64),
            task,
            [tcfg],
            trackers=[measure.BlockGradNorms(), measure.BlockUpdates(2)],
        )[0]
        assert together[k].losses == pytest.approx(apart.losses, rel=1e-10), (cfg.norm, k)
        for field in ("grad_norms", "block_updates"):
            assert torch.tensor(getattr(together[k], field)) == pytest.approx(
                torch.tensor(getattr(apart, field)), rel=1e-8
            ), (cfg.norm, field)


@pytest.mark.parametrize("path", ["compiled", "cpu", "gpu"])
@pytest.mark.parametrize("trial", range(12))
def test_hand_written_backward_equals_autograd_on_random_stacks(trial, path, monkeypatch):
    """Seeded random shapes and member mixes: heads 1–4, T from 1, MLP blocks, GELU, encoders, α ≠ 1;
    the compiled kernels and blocks.py's PyTorch path in both forms (autograd's oracle in the same form)."""
    monkeypatch.setenv(ENV_SWITCH, "all" if path == "compiled" else "0")
    if path != "compiled":
        monkeypatch.setenv(FORM_SWITCH, path)
    import random

    rnd = random.Random(trial)
    h = rnd.choice([1, 2, 4])
    shared = dict(
        d_model=h * rnd.choice([2, 4, 8]),
        n_heads=h,
        d_ff=rnd.choice([4, 12, 33]),
        vocab_size=7,
        block=rnd.choice(["transformer", "transformer", "mlp"]),
        causal=rnd.random() < 0.6,
        activation=rnd.choice(["relu", "gelu"]),
        max_len=12,
        n_layers=rnd.randint(1, 4),
    )
    cfgs = []
    for _ in range(rnd.randint(1, 5)):
        norm = rnd.choice(NORM_STYLES)
        cfgs.append(ModelConfig(norm=norm, **shared, **({"alpha": rnd.uniform(0.5, 3)} if norm == "deepnorm" else {})))
    with seeded(trial):
        stack = randomize(Stack(cfgs, seeds=list(range(len(cfgs))), dtype=F64))
        x = torch.randn(
            len(cfgs), rnd.randint(1, 3), rnd.randint(1, 9), shared["d_model"], dtype=F64, requires_grad=True
        )
        probe = torch.randn_like(x)
    (stack.run_blocks(x) * probe).sum().backward()
    fused = {n: p.grad.clone() for n, p in stack.named_parameters() if p.grad is not None}, x.grad.clone()
    stack.zero_grad(), x.grad.zero_()
    y, _ = stack.run_blocks(x, return_stream=True)
    (y * probe).sum().backward()
    assert rel_err(fused[1], x.grad) < TOL
    for name, g in fused[0].items():
        ref = getattr(stack, name).grad
        assert (rel_err(g, ref) < TOL) if float(ref.norm()) > 0 else float(g.norm()) == 0.0, name


def test_members_that_share_a_seed_share_one_draw_of_their_stream():
    """member_batches draws a batch once for members whose generators are in the same state (same task
    and shape): each member gets the tokens (and mask) its own generator would give, its generator
    ends where it would, and a member of the same seed whose generator differs is not merged."""
    from deepnotes.core.data import generator
    from deepnotes.core.train import NextToken, member_batches

    cfg = ModelConfig(n_layers=1, d_model=8, n_heads=2, d_ff=12, vocab_size=6)
    tcfgs = [TrainConfig(seed=s, batch_size=3, seq_len=5) for s in (0, 1, 0, 0, 0)]
    streams = (1, 2, 1, 1, 7)  # the last member: seed 0, another generator
    stack = Stack([cfg] * 5, seeds=[0, 1, 2, 3, 4])
    task = MarkovLanguage(6, seed=0)
    calls = []
    original = task.sample
    task.sample = lambda *a: calls.append(a) or original(*a)
    for objective in (NextToken(), Masked(0.3)):
        calls.clear()
        gens = [generator(s) for s in streams]
        alone = [generator(s) for s in streams]
        for _ in range(2):
            tokens, mask = member_batches(stack, [task] * 5, tcfgs, gens, objective)
            for k, c in enumerate(tcfgs):
                assert torch.equal(tokens[k], original(c.batch_size, c.seq_len, alone[k]))
                if mask is not None:
                    assert torch.equal(mask[k], objective.mask(c.batch_size, c.seq_len, alone[k]))
                assert torch.equal(gens[k].get_state(), alone[k].get_state())
        assert len(calls) == 3 * 2  # three distinct streams, two steps


def test_every_slot_a_stack_can_have_is_a_name_train_many_accepts():
    """trainable / frozen are checked against engine.SLOT_NAMES before training: every slot of every kind of
    stack must be in it, or a legitimate name would be refused."""
    from itertools import product

    from deepnotes.core.config import BLOCK_KINDS, NORM_STYLES
    from deepnotes.core.engine import SLOT_NAMES

    seen = set()
    for norm, block, causal, head in product(NORM_STYLES, BLOCK_KINDS, (True, False), (False, True)):
        if block == "mlp" and (not causal or head):
            continue
        cfg = ModelConfig(
            n_layers=1, d_model=8, n_heads=1, d_ff=8, norm=norm, block=block, causal=causal, head_transform=head
        )
        seen |= set(Stack([cfg]).slots)
    assert seen <= SLOT_NAMES, seen - SLOT_NAMES
    assert SLOT_NAMES - seen == set(), "a name no stack has"


def _operators_per_block_step(cfgs, form: str, monkeypatch) -> int:
    """ATen operators one training step of ``cfgs``' ensemble dispatches per block on the PyTorch path in
    ``form`` (a step at depth 3 less one at depth 2: what depth adds)."""
    from deepnotes.cost.model import counted

    monkeypatch.setenv(FORM_SWITCH, form)

    def step_at(depth):
        stack = Stack([ModelConfig(**{**c.__dict__, "n_layers": depth}) for c in cfgs], seeds=range(len(cfgs)))
        tokens = torch.randint(0, 6, (len(cfgs), 4, 8), generator=torch.Generator().manual_seed(0))
        return counted(lambda: stack.next_token_losses(tokens).sum().backward()).launches

    return int(step_at(3) - step_at(2))


@pytest.mark.parametrize("styles", ["mixed", "post"])
def test_the_gpu_form_dispatches_at_most_half_the_cpu_forms_operators_per_block(styles, monkeypatch):
    """Issue 62: on a GPU each operator is a kernel launch; the ``gpu`` form (fused attention, every layer's
    gradients at once) dispatches at most half of what the written-out ``cpu`` form does per block-step."""
    cfgs = MIXED if styles == "mixed" else [small("post")] * 3
    gpu, cpu = (_operators_per_block_step(cfgs, form, monkeypatch) for form in ("gpu", "cpu"))
    assert 0 < gpu <= cpu / 2, (gpu, cpu)


@pytest.mark.parametrize("causal", [True, False])
def test_a_gate_on_any_style_s_branch_matches_the_reference(causal):
    """Issue 65: a scalar gate g on the branch of Pre-LN, Post-LN, DeepNorm and a plain residual (SkipInit, Depth-µP's
    multiplier), members of one stack beside a style without one: the same loss and gradients as the reference
    model, the gate's own gradient included; a fresh stack starts each gate where its config says."""
    cfgs = [
        ModelConfig(**{**c.__dict__, **({} if causal else ENCODER)})
        for c in (
            small("pre", gate=0.3),
            small("post", gate=0.5),
            small("none", gate=0.2),
            small("deepnorm", alpha=2.0, gate=0.7),
            small("pre"),
        )
    ]
    fresh = Stack(cfgs, seeds=list(range(5)), dtype=F64)
    for k, cfg in enumerate(cfgs):
        for name in ("attn_gate", "ffn_gate"):
            assert torch.all(fresh.member(name, k) == (cfg.gate or 0.0)), (k, name)
    grads = check_against_reference(cfgs, causal, seed=7, token_seed=1)
    assert [("attn_gate" in grads[k]) for k in grads] == [c.gate is not None for c in cfgs]


def test_a_gate_is_refused_where_the_style_has_its_own_or_no_skip_path():
    for norm in ("rezero", "plain"):
        with pytest.raises(ValueError, match=rf"gate=0.5.*norm='{norm}'.*post, pre, deepnorm or none"):
            ModelConfig(norm=norm, gate=0.5)
    with pytest.raises(ValueError, match="gate"):
        ModelConfig(norm="pre", gate=-0.1)
