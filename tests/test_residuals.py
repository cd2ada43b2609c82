import math

import pytest
import sympy as sp
import torch

import deepnotes as dn
from deepnotes.chapters.why_residuals import training as rt
from deepnotes.chapters.why_residuals import experiments as rs
from deepnotes.core import derive as sym
from deepnotes.chapters.why_residuals import derive as sr


def test_plain_layer_derivation_reuses_the_linear_moment_and_telescopes():
    d = sr.plain_layer_moments()
    assert d["forward_var"] == 1 / sr.n_in and d["backward_var"] == 1 / sr.n_out
    assert sp.simplify(d["backward_gain"] - sr.n_out / sr.n_in) == 0
    assert sp.simplify(d["xavier"] - 2 / (sr.n_in + sr.n_out)) == 0
    assert d["he_forward_var"] == 2 / sr.n_in
    stack = sr.plain_stack_backward_gain(5)
    assert stack["total"] == stack["dims"][-1] / stack["dims"][0]
    g = sr.plain_stack_gradients()
    assert g["grad_every_layer_stable"] == 1 and g["grad_output_stable"] == 1 / sr.gain and g["g_for_1/N"] == sym.N


def test_residual_and_growth_limits():
    r = sr.residual_layer()
    assert r["param_grad_scale"] == sr.eps
    assert sr.increment_with_eps()["p"] == sp.Rational(1, 2)
    lim = sr.growth_limits()
    assert lim["1/N"]["one_d_limit"] == sp.E and lim["1/sqrt(N)"]["one_d_limit"] == sp.oo
    assert lim["1/sqrt(N)"]["high_d_limit"] == sp.E and lim["1/N"]["high_d_limit"] == 1
    c = sr.comment_estimate()
    assert c["ratio_limit"] == sp.exp(-sp.Rational(1, 2)) and c["e_squared_case"] == sp.exp(2)
    n = 10_000.0                                 # the series against the exact log
    assert float(c["log_factor"].subs(sym.N, n)) == pytest.approx(n * math.log1p(n ** -0.5), abs=1e-6)  # next term N^{-3/2}/5
    assert sr.high_dim_layer()["factor"] == 1 + sr.eps ** 2
    assert sr.skip_vs_branch_scaling()["relative_speed"] == sp.Symbol("alpha", positive=True) ** 2


def test_bad_inputs_name_the_value_and_the_allowed_ones():
    with pytest.raises(ValueError, match=r"'1/sqrt\(N\)'|1/sqrt\(N\)"):
        rs.branch_weight("sqrt", 10)
    with pytest.raises(ValueError, match="depth"):
        rs.branch_weight("1", 0)
    with pytest.raises(ValueError, match="width"):
        rs.ResidualMLP(0, 3)
    with pytest.raises(ValueError, match="exponent"):
        rs.branch_weight(-1.0, 10)
    with pytest.raises(ValueError, match="kind"):
        rt.MLPLanguageModel(8, 4, 2, "resnet")
    assert rs.branch_weight("1/sqrt(N)", 100) == pytest.approx(0.1)
    assert rs.branch_weight(1.0, 50) == pytest.approx(0.02)


def test_jacobian_probe_matches_autograd_and_the_high_dimensional_prediction():
    gen = torch.Generator().manual_seed(4)          # the probe draws x_0 then v from seed + 1
    x0, v0 = torch.randn(1, 8, generator=gen), torch.randn(1, 8, generator=gen)
    probe = rs.jacobian_growth("1", 8, 5, batch=1, seed=3, device="cpu")
    _, vjp0 = torch.func.vjp(rs.build_stack("1", 8, 5, seed=3, device="cpu", dtype=torch.float64), x0[0].double())
    exact = math.log(float(vjp0(v0[0].double())[0].detach().pow(2).sum() / v0.double().pow(2).sum()))
    assert probe.log_growth[0] == pytest.approx(exact, abs=1e-4)                 # the renormalized VJP is exact
    wide = rs.jacobian_growth("1", 128, 200, batch=8, device="cpu")      # 2^200: no overflow
    pred = rs.predicted_log_growth("1", 200)
    assert math.isfinite(wide.typical) and wide.typical == pytest.approx(pred["high_d"], rel=0.05)
    assert wide.typical < 0.6 * pred["one_d"]
    assert wide.cos_vu < 0.15 and wide.norm_ratio == pytest.approx(1.0, rel=0.1)
    small = rs.jacobian_growth("1/N", 64, 100, batch=8, device="cpu")
    assert abs(small.typical) < 0.1


def test_one_dimensional_plain_relu_stack_stops_gradients_without_nans():
    p = rs.jacobian_growth("plain", 1, 30, batch=16, device="cpu")
    assert all(not math.isnan(t) for t in p.log_growth) and p.typical == -math.inf


def test_plain_moments_follow_the_m_over_n_rule():
    m = rs.plain_moments(32, 128, 3, batch=512, device="cpu")
    assert len(m.forward) == len(m.backward) == len(m.predicted_backward) == 7
    assert m.predicted_backward[-1] == 1.0 and m.predicted_backward[-2] == pytest.approx(32 / 128)
    for got, want in zip(m.backward, m.predicted_backward):
        assert got == pytest.approx(want, rel=0.35)
    assert max(m.forward) < 2.0 and min(m.forward) > 0.5


def test_layer_gradients_scale_with_eps():
    plain = rs.layer_gradients("plain", 32, 10, device="cpu")
    small = rs.layer_gradients("1/N", 32, 10, device="cpu")
    assert len(plain) == 10 and sum(small) < 0.1 * sum(plain)


def test_training_runs_record_histories_and_divergence():
    budget = dn.get_budget("smoke")
    h = rt.mlp_run("1/sqrt(N)", 4, budget, steps=3, device="cpu")
    assert len(h.losses) == 3 and len(h.grad_norms[0]) == 4 and not h.diverged
    boom = rt.mlp_run("1", 60, budget, optimizer="sgd", lr=1.0, steps=5, device="cpu")
    assert boom.diverged and "diverged" in rt.outcome(boom)
    t = rt.transformer_run("1/N", 2, budget, steps=2, device="cpu")
    assert len(t.losses) == 2
    p = rt.transformer_run("plain", 2, budget, steps=2, device="cpu")
    assert len(p.losses) == 2 and len(p.grad_norms[0]) == 2


def test_plain_transformer_is_forward_stable_per_sublayer_and_collapses_positions():
    model = rt.build_transformer("plain", 2, dn.get_budget("cpu"), device="cpu")
    assert all(s.norm_style == "plain" and s.norm is None for b in model.blocks for s in b.sublayers)
    x = torch.randn(8192, model.cfg.d_model)                                     # [B, d], E[x²] = 1
    block = model.blocks[0]
    with torch.no_grad():
        assert block.ffn(x).pow(2).mean().item() == pytest.approx(1.0, rel=0.1)  # He + LeCun
        assert block.attn.out_proj(block.attn.v_proj(x)).pow(2).mean().item() == pytest.approx(1.0, rel=0.1)
    budget = dn.get_budget("smoke")
    c0, plain = rt.position_cosine("plain", 12, budget, device="cpu")
    _, residual = rt.position_cosine("1/N", 12, budget, device="cpu")
    assert plain > 0.99 and residual < 0.5 and c0 < 0.5                         # rank collapse without skips
    with pytest.raises(ValueError, match="unknown epsilon rule"):
        rt.build_transformer("2", 4, budget)


def test_slider_figure_draws():
    import matplotlib
    matplotlib.use("Agg")
    fig = rt.slider_figure(4, 8, 0.5, budget=dn.get_budget("smoke"))
    assert len(fig.axes) == 2


def test_gradient_prediction_is_the_symbolic_one_and_matches_residual_stacks():
    c = sr.branch_gradient_moment()
    w, h, b = c["symbols"]
    assert float(c["total"].subs({w: 16, h: 64, b: 32})) == rs.branch_gradient_moment(16, 64, 32)
    got = sum(rs.layer_gradients("1/sqrt(N)", 32, 20, device="cpu"))
    assert got == pytest.approx(rs.predicted_total_gradient("1/sqrt(N)", 32, 20), rel=0.3)
    assert rs.predicted_total_gradient("plain", 32, 20) == pytest.approx(20 * rs.branch_gradient_moment(32))


def test_correlation_map_and_token_cosines():
    assert rs.relu_correlation_map(1.0) == pytest.approx(1.0)
    assert rs.relu_correlation_map(0.0) == pytest.approx(1 / math.pi)
    assert 0.98 < rs.predicted_cosine("plain", 50, 0.0) < rs.predicted_cosine("plain", 100, 0.0) < 1
    assert rs.predicted_cosine("1/N", 50, 0.0) < 0.02
    budget = dn.get_budget("smoke")
    got, want = rt.token_cosines("plain", 30, budget, width=32, device="cpu")
    assert got > 0.9 and want > 0.9
    got, want = rt.token_cosines("1/N", 30, budget, width=32, device="cpu")
    assert abs(got - want) < 0.2


def test_steps_to_half():
    h = dn.History(losses=[3.0] * 10 + [1.0] * 10, floor=1.0, unigram=3.0)
    assert h.steps_to(0.5, window=2) == 10      # losses 9, 10 average to the half-way 2.0
    assert dn.History(losses=[3.0] * 5, floor=1.0, unigram=3.0).steps_to(0.5) is None
    assert dn.History(losses=[3.0, 1.0], floor=1.0, unigram=3.0, diverged_at=2).steps_to(0.5, window=1) is None


def test_branch_jacobian_is_not_a_multiple_of_an_orthogonal_matrix_but_keeps_norms_on_average():
    sv = torch.tensor(rs.branch_jacobian_singular_values(64, device="cpu"))
    assert len(sv) == 64 and sv.pow(2).mean() == pytest.approx(1.0, rel=0.3)     # E‖v ∂f/∂x‖² = ‖v‖²
    assert (sv < 1e-8 * sv.max()).float().mean() > 0.3                          # relu: rank ≈ width/2


def test_orthogonal_matrix_keeps_norms_not_angles():
    c = rs.orthogonal_cosines(128, samples=128)
    assert c["identity"] == pytest.approx(1.0)
    assert c["random"] == pytest.approx(c["expected"], rel=0.3)
    with pytest.raises(ValueError, match="width"):
        rs.orthogonal_cosines(0)
