"""deepnotes.core.models (truncated normal, Gaussian second moments) and deepnotes.chapters.initialization.norms
(LayerNorm/RMSNorm formulas and their input gradients)."""

import math

import pytest
import torch

from deepnotes.chapters.initialization import norms
from deepnotes.core import derive as sym
from deepnotes.core import models as ini


@pytest.mark.parametrize("k", [1, 2, 3])
def test_truncated_normal_gamma_symbolic_matches_the_plain_formula(k):
    assert float(sym.truncated_normal_gamma(k)["gamma"]) == pytest.approx(
        ini.truncated_normal_variance_factor(k), rel=1e-12
    )
    assert float(sym.truncated_normal_gamma(k)["std_factor"]) == pytest.approx(
        ini.truncated_normal_variance_factor(k) ** -0.5, rel=1e-12
    )
    with pytest.raises(ValueError, match="k=0"):
        ini.truncated_normal_variance_factor(0)


def test_gaussian_second_moment_against_closed_forms():
    assert ini.gaussian_second_moment(lambda x: x, 3.0) == pytest.approx(3.0, rel=1e-9)
    relu = ini.gaussian_second_moment(lambda x: max(x, 0.0), 5.0)
    assert relu == pytest.approx(float(sym.linear_second_moment()["relu_factor"]) * 5.0, rel=1e-9)


def test_linear_second_moment_matches_a_sampled_layer():
    lin = sym.linear_second_moment()
    m, s_w = 64, 0.3
    gen = torch.Generator().manual_seed(0)
    x = (
        torch.rand(512, m, generator=gen, dtype=torch.float64) + 1.0
    )  # all positive, E[x²] = 7/3; many columns: E[y²] is an average over w
    w = torch.randn(m, 8192, generator=gen, dtype=torch.float64) * math.sqrt(s_w)
    predicted = float(lin["E[y^2]"].subs({sym.m: m, sym.s_w: s_w, sym.s_x: 7 / 3}))
    assert float((x @ w).pow(2).mean()) == pytest.approx(predicted, rel=0.05)


def test_trunc_normal_cuts_at_k_sigma_and_can_match_the_std():
    t = torch.empty(400_000)
    w = ini.trunc_normal_(t.clone(), 0.02, generator=torch.Generator().manual_seed(0))
    assert float(w.abs().max()) <= 0.04 + 1e-9
    assert float(w.std()) == pytest.approx(0.02 * math.sqrt(ini.truncated_normal_variance_factor(2)), rel=0.01)
    # the cut normal's shape: P(|x| < σ | |x| < 2σ) = (2Φ(1) − 1)/(2Φ(2) − 1) = 0.7160
    inside = float((w.abs() < 0.02).double().mean())
    assert inside == pytest.approx(math.erf(1 / math.sqrt(2)) / math.erf(2 / math.sqrt(2)), abs=0.003)
    w = ini.trunc_normal_(t.clone(), 0.02, match_std=True, generator=torch.Generator().manual_seed(0))
    assert float(w.std()) == pytest.approx(0.02, rel=0.01)
    # the trap: torch's defaults are absolute bounds, far outside ±2σ for a small std
    w = torch.nn.init.trunc_normal_(t.clone(), std=0.02, generator=torch.Generator().manual_seed(0))
    assert float(w.abs().max()) > 0.04
    with pytest.raises(ValueError, match="std"):
        ini.trunc_normal_(t, -1.0)


def test_norm_gradients_closed_form_and_the_annotated_formulas():
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(3, 10, dtype=torch.float64, generator=gen)
    gamma, beta, g = (torch.randn(10, dtype=torch.float64, generator=gen) for _ in range(3))
    for fn, grad in (
        (lambda a, gm: norms.layer_norm(a, gm, beta), norms.layer_norm_input_grad),
        (norms.rms_norm, norms.rms_norm_input_grad),
    ):
        for gm, outside_ok in ((gamma, False), (torch.ones(10, dtype=torch.float64), True)):
            xx = x.clone().requires_grad_(True)
            (fn(xx, gm) * g).sum().backward()
            torch.testing.assert_close(grad(x, gm, g), xx.grad)
            assert torch.allclose(grad(x, gm, g, gamma_outside=True), xx.grad) == outside_ok


def test_formula_checks_separate_right_from_wrong():
    checks = norms.formula_checks()
    for key in (
        "LN formula",
        "RMSNorm formula",
        "LN gradient",
        "RMSNorm gradient",
        "eq. (15), gamma = 1",
        "eq. (18), gamma = 1",
    ):
        assert [v for k, v in checks.items() if k.startswith(key)][0] < 1e-12, key
    assert checks["eq. (15), random gamma"] > 1e-3 and checks["eq. (18), random gamma"] > 1e-3


def test_ffn_branch_variance_is_r_q_times_the_activations_second_moment():
    assert ini.ffn_branch_variance(0.3, "relu") == pytest.approx(4 * 0.3**2 / 2, rel=1e-9)  # ReLU: r·q²/2
    assert ini.ffn_branch_variance(1.0, "gelu", ffn_ratio=1) == pytest.approx(0.4252, abs=1e-4)
    assert ini.ffn_branch_variance(0.0, "gelu") == 0.0
    with pytest.raises(ValueError, match="activation must be one of \\['gelu', 'relu'\\], got 'tanh'"):
        ini.ffn_branch_variance(1.0, "tanh")
    with pytest.raises(ValueError, match="q=-1"):
        ini.ffn_branch_variance(-1.0, "relu")
