import math

import pytest
import sympy as sp
import torch

import deepnotes as dn
from deepnotes.core.probes import loglog_slope
from deepnotes.show.palette import PALETTE
from deepnotes.chapters.magnitude_decomposition import experiments as mg
from deepnotes.chapters.magnitude_decomposition import training as mt
from deepnotes.core import scaling as scaling
from deepnotes.core import derive as sym
from deepnotes.chapters.magnitude_decomposition import derive as sd
from deepnotes.show.verdicts import APPROX, HOLDS, UNCHECKABLE, WRONG

DEPTHS = (1, 3, 12, 100, 1000)


@pytest.mark.parametrize("opt", scaling.OPTIMIZERS)
@pytest.mark.parametrize("pick", scaling.PICKS)
def test_symbolic_solutions_match_scaling(opt, pick):
    s = sd.solve_pick(opt, pick)
    f_alpha, f_lam = (sp.lambdify(sym.N, s[k]) for k in ("alpha", "lambda"))
    for n in DEPTHS:
        a, lam = scaling.magnitude_solution(n, opt, pick)
        assert float(f_alpha(n)) == pytest.approx(a, rel=1e-12)
        assert float(f_lam(n)) == pytest.approx(lam, rel=1e-12)
        assert float(sp.lambdify(sym.N, s["branch_weight"])(n)) == pytest.approx(scaling.branch_weight(a, lam))
        assert float(s["condition"].lhs.subs({sym.N: n, sym.alpha: a, sym.lam: lam})) == pytest.approx(1.0)


def test_su_table_and_pre_ln_are_the_picks():
    for n in DEPTHS:
        assert scaling.magnitude_solution(n, "sgd") == pytest.approx(scaling.su_coefficients(n, "sgd"))
        assert scaling.magnitude_solution(n, "adam") == pytest.approx(scaling.su_coefficients(n, "adam"))
        assert scaling.magnitude_solution(n, "lamb", "alpha=1") == pytest.approx(scaling.su_coefficients(n, "lamb"))
        assert scaling.pre_ln_lambda(n, "adam") == pytest.approx(1 / (2 * n))
        assert scaling.pre_ln_lambda(n, "sgd") == pytest.approx((2 * n) ** -0.5)
    assert sd.in_two_n(sd.solve_pick("sgd", "lambda=1/alpha")["lambda"]) == sd.two_n ** sp.Rational(-1, 4)


def test_paper_constants_symbolic_match_scaling():
    pc = sd.paper_constants()
    enc = [sp.lambdify(sym.N, e) for e in pc["encoder"]]
    dec = [sp.lambdify(pc["M"], e) for e in pc["encdec decoder"]]
    for n in DEPTHS:
        assert (float(enc[0](n)), float(enc[1](n))) == pytest.approx(scaling.deepnorm_coefficients(n))
        assert (float(enc[0](n)), float(enc[1](n))) == pytest.approx(scaling.deepnorm_coefficients(n, "decoder"))
        assert (float(dec[0](n)), float(dec[1](n))) == pytest.approx(scaling.deepnorm_decoder_coefficients_encdec(n))
        assert scaling.paper_sublayer_coefficients(2 * n) == pytest.approx(scaling.deepnorm_coefficients(n))
        assert float(pc["beta/alpha encoder"].subs(sym.N, n)) == pytest.approx(1 / math.sqrt(4 * n))


def test_closed_form_lambda_matches_numeric_minimization():
    for row in mg.decomposition_table(shapes=((16, 16), (8, 24), (24, 8)), gains=(1.0, 0.3)):
        assert row.closed == pytest.approx(row.numeric, rel=1e-6)
        assert row.closed == pytest.approx(row.xavier_predicted, rel=0.15)
        if row.shape[0] <= row.shape[1]:
            assert row.spectral_closed == pytest.approx(row.spectral_numeric, rel=1e-6)
    f = sp.lambdify((sd.tr1, sd.tr2), sd.magnitude_lambda()["lambda"])
    w = torch.randn(5, 7, dtype=torch.float64)
    gram = w @ w.T
    assert f(float(gram.trace()), float(gram.pow(2).sum())) == pytest.approx(mg.lambda_closed_form(w))
    assert mg.lambda_closed_form(3 * w) == pytest.approx(3 * mg.lambda_closed_form(w))
    assert mg.lambda_closed_form(w) == pytest.approx(mg.lambda_closed_form(w.T))
    # an orthogonal matrix has λ = 1 by every definition, eq. (27) included
    q, _ = torch.linalg.qr(torch.randn(6, 6, dtype=torch.float64))
    for value in (mg.lambda_closed_form(q), mg.lambda_closed_form(q, "spectral"), mg.lambda_eq27(q)):
        assert value == pytest.approx(1.0)


def test_lambda_gradient_identity_symbolic_and_autograd():
    assert sd.lambda_gradient_identity()["difference"] == 0
    budget = dn.get_budget("smoke")
    model = mg.deepnorm_model(2, 1.7, 0.4, budget, device="cpu", dtype=torch.float64)
    tokens = mg.probe_batch(budget, 0, "cpu")
    for kind in mg.KINDS:
        by_autograd, inner = mg.lambda_gradient_by_autograd(model, tokens, block=1, kind=kind)
        assert by_autograd == pytest.approx(inner, rel=1e-9, abs=1e-15)
    assert all(isinstance(p, torch.nn.Parameter) and p.grad is None for p in model.parameters())


def test_sublayer_gradients_are_order_lambda_over_alpha():
    g = sd.sublayer_lambda_gradients()
    assert g["power of lambda"] == 1 and g["power of alpha"] == -1
    assert sp.simplify(g["dz/dlambda_2"] - sd.lam1 * sd.h_ffn / sym.alpha) == 0
    xav = sd.xavier_lambda()
    assert xav["lambda_over_gain_wide"] == sp.sqrt(2)
    assert sp.expand(xav["E_trA2"] - sd.a * sd.b * sd.s_w ** 4 * (sd.a + sd.b + 1)) == 0


def test_measured_gradient_scales_like_lambda_over_alpha():
    budget = dn.get_budget("smoke")
    sweep = mg.lambda_gradient_sweep(budget, n_layers=3, alphas=(1.0, 4.0), lambdas=(0.1, 0.4), seeds=1, device="cpu")
    for kind in ("v", "o", "fc1", "fc2"):
        assert abs(loglog_slope(*sweep.series(kind)) - 1) < 0.3
        assert sweep.rms[kind][0][0] / sweep.rms[kind][1][0] == pytest.approx(4.0, rel=0.1)   # ∝ 1/α


def test_first_step_and_identity_follow_the_analysis():
    budget = dn.get_budget("smoke")
    lamb = [mg.first_step_relative_update(4, a, lam, "lamb", 1e-2, budget, device="cpu") for a, lam in ((1.0, 0.3), (5.0, 1.0))]
    assert lamb == pytest.approx([1e-2, 1e-2], rel=1e-6)
    sgd = [mg.first_step_relative_update(4, a, 0.5, "sgd", 0.1, budget, device="cpu") for a in (1.0, 4.0)]
    assert sgd[0] / sgd[1] == pytest.approx(4.0, rel=0.2)
    small = mg.block_changes(6, *scaling.magnitude_solution(6, "sgd"), budget, device="cpu")
    post = mg.block_changes(6, 1.0, 1.0, budget, device="cpu")
    assert len(small) == 6 and max(small) < 0.5 < min(post)


def test_training_run_tracks_lambda_and_records_divergence():
    budget = dn.get_budget("smoke")
    run = mt.run_choice(2, 1.0, 0.5, "sgd", 0.1, budget, steps=4, track_every=2, device="cpu")
    assert run.lam_steps == [0, 2] and run.lam_ratio[0] == pytest.approx(1.0)
    assert len(run.history.losses) == 4
    assert 0 < run.history.unigram - run.history.floor
    area = run.history.mean_fraction_learned()
    h = run.history
    assert area == pytest.approx(sum((h.unigram - x) / (h.unigram - h.floor) for x in h.losses) / 4)
    blown = mt.run_choice(2, 1.0, 1.0, "sgd", 1e6, budget, steps=6, device="cpu")
    assert blown.history.diverged and blown.history.steps_to(0.5) is None and blown.history.mean_fraction_learned() is None


def test_derivation_verdicts_have_the_expected_statuses():
    from deepnotes.chapters.magnitude_decomposition import claims as mv
    main = {v.claim: v.status for v in mv.main_text_verdicts()}
    assert set(main.values()) == {HOLDS, APPROX, UNCHECKABLE}
    assert [c for c, s in main.items() if s == APPROX] == [
        "Xavier's result is close to an orthogonal matrix (so U is near-orthogonal)"]
    x = mv.xavier_orthogonality(d=32)
    assert x["mean_abs_cos"] < 0.2 and x["mu_min"] < 0.1 and x["mu_max"] > 1.5
    status = {v.source + v.claim: v.status for v in mv.annotated_verdicts()}
    assert status["seed 000 annotated eqs. (26)-(27)λ = argmin ‖WWᵀ/κ² − I‖_F = √(tr(WWᵀ)/d)"] == WRONG
    assert status["seed 000 annotated eq. (63)Pre-LN: ∂x_{l+1}/∂x_l = I + O(λ) per layer"] == WRONG
    assert status["seed 000 annotated eq. (65)Pre-LN: ‖∂L/∂x_1‖ ≈ ‖∂L/∂x_N‖(1 + O(λ))^N ≈ 1 when λ is small"] == APPROX
    assert sum(s == WRONG for s in status.values()) >= 10
    assert APPROX in status.values()


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="pick"):
        scaling.magnitude_solution(4, "sgd", "alpha=2")
    with pytest.raises(ValueError, match="optimizer"):
        scaling.magnitude_solution(4, "rmsprop")
    with pytest.raises(ValueError, match="n_layers"):
        scaling.magnitude_solution(0, "sgd")
    with pytest.raises(ValueError, match="n_sublayers"):
        scaling.paper_sublayer_coefficients(0)
    with pytest.raises(ValueError, match="alpha"):
        scaling.branch_weight(0.0, 1.0)
    with pytest.raises(ValueError, match="pick"):
        sd.solve_pick("sgd", "beta=1")
    with pytest.raises(ValueError, match="optimizer"):
        sd.solve_pick("rmsprop", "alpha=1")
    with pytest.raises(ValueError, match="norm"):
        mg.lambda_closed_form(torch.eye(3), "nuclear")
    with pytest.raises(ValueError, match="kind"):
        mg.lambda_gradient_by_autograd(mg.deepnorm_model(1, 1.0, 1.0, dn.get_budget("smoke"), device="cpu"),
                                       mg.probe_batch(dn.get_budget("smoke"), 0, "cpu"), kind="w3")
    with pytest.raises(ValueError, match="optimizer"):
        mg.predicted_relative_update("rmsprop", 1.0, 1.0)


def test_choice_curves_keep_each_choice_colour_for_line_and_divergence_mark():
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.colors import same_color
    from deepnotes.show import plots as plots
    ok = dn.History(losses=[2.6, 2.0, 1.8], floor=1.6, unigram=2.6)
    boom = dn.History(losses=[2.6, 9.0], diverged_at=1, floor=1.6, unigram=2.6)
    runs = {"alpha=1": mt.ChoiceRun(1.0, 0.1, boom), "lambda=1": mt.ChoiceRun(1.0, 1.0, ok)}   # ✕ drawn first
    fig, (ax,) = plots.new_figure(1)
    mt.choice_loss_curves(ax, runs)
    drawn = [line for line in ax.get_lines() if line.get_label() and not line.get_label().startswith(("_", "floor", "context"))]
    for key, line in zip(runs, drawn):
        assert line.get_label().startswith(mg.LABELS[key]) and same_color(line.get_color(), PALETTE[key])
    marks = [line for line in ax.get_lines() if line.get_marker() == "x"]
    assert len(marks) == 1 and same_color(marks[0].get_color(), PALETTE["alpha=1"])
