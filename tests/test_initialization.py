import math

import pytest
import torch

from deepnotes.core import init as ini
from deepnotes.chapters.initialization import derive as init_derive, mlp
from deepnotes.chapters.initialization import experiments as mo
from deepnotes.core import norms as norms
from deepnotes.core import derive as sym


def test_symbolic_matches_plain_formulas():
    assert float(sym.truncated_normal_gamma(2)["gamma"]) == pytest.approx(ini.truncated_normal_variance_factor(2), rel=1e-12)
    lin = sym.linear_second_moment()
    for m in (3, 64, 1000):
        assert float(lin["lecun"].subs(sym.m, m)) == pytest.approx(mlp.weight_variance("lecun", m, m))
        assert float(lin["he"].subs(sym.m, m)) == pytest.approx(mlp.weight_variance("he", m, m))
    a, b = mlp.uniform_bounds(0.5, 2.0)
    uni = init_derive.uniform_with_moments()
    assert float(uni["a"].subs({sym.mu: 0.5, sym.sigma: 2.0})) == pytest.approx(a)
    assert float(uni["b"].subs({sym.mu: 0.5, sym.sigma: 2.0})) == pytest.approx(b)
    selu = init_derive.selu_constants(20)
    assert float(selu["alpha_value"]) == pytest.approx(mlp.SELU_ALPHA, rel=1e-15)
    assert float(selu["lambda_value"]) == pytest.approx(mlp.SELU_LAMBDA, rel=1e-15)
    assert float(init_derive.sigmoid_second_moment()) == pytest.approx(ini.gaussian_second_moment(mlp.scalar_activation("sigmoid")), rel=1e-9)


def test_selu_constants_make_mean_zero_and_second_moment_one():
    z = torch.randn(2_000_000, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    y = torch.selu(z)
    assert float(y.mean()) == pytest.approx(0, abs=2e-3)
    assert float(y.pow(2).mean()) == pytest.approx(1, abs=3e-3)


def test_trunc_normal_cuts_at_k_sigma_and_can_match_the_std():
    t = torch.empty(400_000)
    w = ini.trunc_normal_(t.clone(), 0.02, generator=torch.Generator().manual_seed(0))
    assert float(w.abs().max()) <= 0.04 + 1e-9
    assert float(w.std()) == pytest.approx(0.02 * math.sqrt(ini.truncated_normal_variance_factor(2)), rel=0.01)
    w = ini.trunc_normal_(t.clone(), 0.02, match_std=True, generator=torch.Generator().manual_seed(0))
    assert float(w.std()) == pytest.approx(0.02, rel=0.01)
    # the trap: torch's defaults are absolute bounds, far outside ±2σ for a small std
    w = torch.nn.init.trunc_normal_(t.clone(), std=0.02, generator=torch.Generator().manual_seed(0))
    assert float(w.abs().max()) > 0.04
    with pytest.raises(ValueError, match="std"):
        ini.trunc_normal_(t, -1.0)


def test_bad_names_raise_with_the_allowed_ones():
    with pytest.raises(ValueError, match="allowed: lecun, he, xavier"):
        mlp.weight_variance("glorot", 3, 3)
    with pytest.raises(ValueError, match="allowed: linear, relu, tanh"):
        mlp.activation("gelu")
    with pytest.raises(ValueError, match="depth"):
        mlp.plain_mlp(8, 0, "relu")


def test_recursion_fixed_points():
    assert mlp.predicted_second_moments("relu", 2.0, 5) == pytest.approx([1.0] * 6)
    assert mlp.predicted_second_moments("linear", 2.0, 3) == pytest.approx([1, 2, 4, 8])
    assert mlp.predicted_second_moments("sigmoid_rescaled", 1.0, 2) == pytest.approx([1, 1, 1], rel=1e-6)
    assert mlp.predicted_second_moments("selu", 1.0, 2) == pytest.approx([1, 1, 1], rel=1e-6)
    assert mlp.predicted_second_moments("sigmoid", 1.0, 1)[1] == pytest.approx(0.293379, rel=1e-5)


def test_measured_second_moments_follow_the_recursion():
    for act, gain in (("linear", 2.0), ("relu", 1.0), ("tanh", 2.0)):
        meas = mo.forward_second_moments(act, gain, depth=6, width=512, batch=512)
        pred = mlp.predicted_second_moments(act, gain, 6)
        assert meas[-1] == pytest.approx(pred[-1], rel=0.25), act


def test_norm_gradients_closed_form_and_the_annotated_formulas():
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(3, 10, dtype=torch.float64, generator=gen)
    gamma, beta, g = (torch.randn(10, dtype=torch.float64, generator=gen) for _ in range(3))
    for fn, grad in ((lambda a, gm: norms.layer_norm(a, gm, beta), norms.layer_norm_input_grad),
                     (norms.rms_norm, norms.rms_norm_input_grad)):
        for gm, outside_ok in ((gamma, False), (torch.ones(10, dtype=torch.float64), True)):
            xx = x.clone().requires_grad_(True)
            (fn(xx, gm) * g).sum().backward()
            torch.testing.assert_close(grad(x, gm, g), xx.grad)
            assert torch.allclose(grad(x, gm, g, gamma_outside=True), xx.grad) == outside_ok


def test_ntk_layer_keeps_second_moment_and_adam_moves_it_by_lr():
    layer = mlp.NTKLinear(256, 256)
    x = torch.randn(512, 256)
    with torch.no_grad():
        assert float(layer(x).pow(2).mean()) == pytest.approx(1.0, rel=0.15)
    first = mo.relative_updates(True, 64, 3, 1, 1e-2)[0]
    assert sum(first) / len(first) == pytest.approx(1e-2, rel=0.1)
    standard = mo.relative_updates(False, 64, 3, 1, 1e-2)[0]
    assert sum(standard) / len(standard) > 3e-2     # η·√(m/2) ≈ 0.057 at m = 64


def test_softmax_concentrates_without_scaling():
    unscaled = [mo.softmax_probe(d, False).max_weight for d in (16, 256)]
    scaled = [mo.softmax_probe(d, True).max_weight for d in (16, 256)]
    assert unscaled[1] > unscaled[0] > max(scaled)
    assert mo.softmax_probe(256, False).jacobian_norm < mo.softmax_probe(256, True).jacobian_norm
    with pytest.raises(ValueError, match="d must be"):
        mo.softmax_probe(0, True)


def test_formula_checks_separate_right_from_wrong():
    checks = norms.formula_checks()
    for key in ("LN formula", "RMSNorm formula", "LN gradient", "RMSNorm gradient", "eq. (15), gamma = 1", "eq. (18), gamma = 1"):
        assert [v for k, v in checks.items() if k.startswith(key)][0] < 1e-12, key
    assert checks["eq. (15), random gamma"] > 1e-3 and checks["eq. (18), random gamma"] > 1e-3
