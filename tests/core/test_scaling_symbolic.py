import pytest
import sympy as sp

from deepnotes.core import derive as sym
from deepnotes.core import scaling as scaling

DEPTHS = [1, 2, 6, 12, 50, 100, 1000]


@pytest.mark.parametrize("optimizer", ["sgd", "adam", "lamb"])
def test_symbolic_alpha_lambda_equal_su_coefficients(optimizer):
    res = sym.deepnorm_ratio(optimizer)
    f_alpha = sp.lambdify(sym.N, res["alpha"])
    f_lam = sp.lambdify(sym.N, res["lambda"])
    for n in DEPTHS:
        alpha, lam = scaling.su_coefficients(n, optimizer)
        assert float(f_alpha(n)) == pytest.approx(alpha, rel=1e-12)
        assert float(f_lam(n)) == pytest.approx(lam, rel=1e-12)


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_symbolic_loss_change_equals_scaling_formula(optimizer):
    dl = sp.lambdify((sym.eta, sym.N, sym.K, sym.P, sym.g), sym.loss_change(optimizer)["delta_L"])
    for args in [(0.1, 3, 6, 100, 0.2), (1e-3, 200, 6, 4096, 1.7)]:
        eta, n, k, p, g = args
        assert dl(*args) == pytest.approx(scaling.loss_change_first_order(optimizer, eta, n * k, p, g))


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_loss_change_grows_linearly_and_cancelling_exponent_matches(optimizer):
    assert sym.depth_exponent(sym.loss_change(optimizer)["delta_L"]) == 1
    assert float(sym.depth_cancelling_exponent(optimizer)) == scaling.depth_cancelling_grad_exponent(optimizer)


def test_warmup_bound_is_eta_over_n():
    f = sp.lambdify((sym.eta, sym.N), sym.warmup_lr("sgd"))
    for n in DEPTHS:
        assert f(0.3, n) == pytest.approx(scaling.warmup_start_lr(0.3, n))


def test_paper_ratio_is_one_over_sqrt_4n():
    for n in DEPTHS:
        alpha, beta = scaling.deepnorm_coefficients(n)
        assert beta / alpha == pytest.approx((4 * n) ** -0.5)


def test_encoder_decoder_constants():
    a, b = scaling.deepnorm_coefficients(6, "encoder-decoder", n_decoder_layers=6)
    assert a == pytest.approx(0.81 * (6**5) ** (1 / 16))
    assert b == pytest.approx(0.87 * (6**5) ** (-1 / 16))
    assert scaling.deepnorm_decoder_coefficients_encdec(6) == pytest.approx((18**0.25, 72**-0.25))


def test_linear_warmup_factor():
    assert scaling.linear_warmup_factor(0, 0) == 1.0
    assert scaling.linear_warmup_factor(0, 1000) == pytest.approx(1e-3)
    assert scaling.linear_warmup_factor(5000, 1000) == 1.0
