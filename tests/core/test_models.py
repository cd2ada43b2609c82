import pytest
import torch
from torch import nn

import deepnotes as dn
from deepnotes.core.models import Block, Residual


def cfg(**kw):
    base = dict(n_layers=3, d_model=16, n_heads=2, d_ff=32, vocab_size=8)
    base.update(kw)
    return dn.ModelConfig(**base)


def test_deepnorm_with_alpha_beta_one_equals_post_ln():
    tokens = torch.randint(0, 8, (2, 5), generator=torch.Generator().manual_seed(0))
    post = dn.build_model(cfg(norm="post"), seed=3)
    deep = dn.build_model(cfg(norm="deepnorm", alpha=1.0, beta=1.0), seed=3)
    torch.testing.assert_close(post(tokens), deep(tokens))
    # and α ≠ 1 changes the function
    deep2 = dn.build_model(cfg(norm="deepnorm", alpha=2.0, beta=1.0), seed=3)
    assert not torch.allclose(post(tokens), deep2(tokens))


def test_deepnorm_puts_alpha_on_the_skip_path():
    sub = nn.Linear(4, 4)
    res = Residual(sub, 4, "deepnorm", alpha=3.0)
    x = torch.randn(2, 4)
    torch.testing.assert_close(res(x), res.norm(3.0 * x + sub(x)))


def test_pre_ln_computes_x_plus_f_of_ln_x():
    sub = nn.Linear(4, 4)
    res = Residual(sub, 4, "pre")
    x = torch.randn(2, 4)
    torch.testing.assert_close(res(x), x + sub(torch.nn.functional.layer_norm(x, (4,))))


def test_rezero_is_identity_at_init_none_is_plain_sum_and_plain_has_no_skip():
    sub = nn.Linear(4, 4)
    x = torch.randn(2, 4)
    torch.testing.assert_close(Residual(sub, 4, "rezero")(x), x)
    torch.testing.assert_close(Residual(sub, 4, "none")(x), x + sub(x))
    torch.testing.assert_close(Residual(sub, 4, "plain")(x), sub(x))


def test_layers_start_with_different_weights():
    model = dn.build_model(cfg(n_layers=4), seed=0)
    w = [b.attn.q_proj.weight for b in model.blocks]
    assert all(not torch.equal(w[0], other) for other in w[1:])
    assert model.blocks[0].attn.q_proj.weight.data_ptr() != model.blocks[1].attn.q_proj.weight.data_ptr()


def test_beta_scales_exactly_v_out_ffn_and_not_q_k():
    torch.manual_seed(0)
    a = Block(cfg(d_model=64, d_ff=128, n_heads=4, beta=1.0))
    torch.manual_seed(0)
    b = Block(cfg(d_model=64, d_ff=128, n_heads=4, beta=0.25))
    for wa, wb in zip(a.beta_scaled_weights(), b.beta_scaled_weights(), strict=True):
        torch.testing.assert_close(wb, 0.25 * wa)  # same draw, gain 0.25
    for wa, wb in zip(a.unit_gain_weights(), b.unit_gain_weights(), strict=True):
        torch.testing.assert_close(wb, wa)
    names = {id(w) for w in b.beta_scaled_weights()}
    assert names == {id(b.attn.v_proj.weight), id(b.attn.out_proj.weight), id(b.ffn.fc1.weight), id(b.ffn.fc2.weight)}


def test_xavier_normal_std_matches_gain():
    block = Block(cfg(d_model=256, d_ff=256, n_heads=4, beta=0.5))
    std = block.ffn.fc1.weight.std().item()
    assert std == pytest.approx(0.5 * (2 / 512) ** 0.5, rel=0.03)


@pytest.mark.parametrize("norm", dn.NORM_STYLES)
def test_every_norm_style_runs_transformer_and_mlp(norm):
    model = dn.build_model(cfg(norm=norm), seed=0)
    tokens = torch.randint(0, 8, (2, 5))
    assert model(tokens).shape == (2, 5, 8)
    mlp = dn.Block(cfg(norm=norm, block="mlp"))
    assert mlp(torch.randn(4, 3, 16)).shape == (4, 3, 16)
    assert mlp.attn is None and len(mlp.sublayers) == 1


def test_causal_attention_ignores_the_future():
    model = dn.build_model(cfg(norm="pre"), seed=0)
    a = torch.tensor([[1, 2, 3, 4]])
    b = torch.tensor([[1, 2, 3, 7]])
    torch.testing.assert_close(model(a)[:, :3], model(b)[:, :3])


def test_dtype_and_device_follow_arguments():
    model = dn.build_model(cfg(), seed=0, dtype=torch.float64)
    assert model(torch.tensor([[1, 2]])).dtype == torch.float64


def test_bert_init_std_truncates_at_two_sigma_everywhere():
    cfg = dn.ModelConfig(n_layers=2, d_model=64, n_heads=2, d_ff=256, vocab_size=50, init_std=0.02)
    model = dn.build_model(cfg, seed=0)
    for name, p in model.named_parameters():
        p = p.detach()
        if p.dim() == 2:
            assert float(p.abs().max()) <= 0.04 + 1e-9, name
            assert float(p.std()) == pytest.approx(0.02 * 0.8796, rel=0.1), name
    with pytest.raises(ValueError, match="init_std"):
        dn.ModelConfig(init_std=0.02, beta=0.5)
    with pytest.raises(ValueError, match="init_std"):
        dn.ModelConfig(init_std=-0.02)
