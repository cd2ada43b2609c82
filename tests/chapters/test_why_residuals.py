"""The chapter "Why residuals?": derivations, probes, training runs, figures and verdicts."""

import ast
import dataclasses
import io
import json
import math
import statistics
from pathlib import Path

import pytest
import sympy as sp
import torch
from PIL import Image

import deepnotes as dn
from deepnotes.chapters.why_residuals import answer as wa
from deepnotes.chapters.why_residuals import claims as wc
from deepnotes.chapters.why_residuals import derive as sr
from deepnotes.chapters.why_residuals import experiments as rt
from deepnotes.chapters.why_residuals import figures as wf
from deepnotes.chapters.why_residuals import probes as rs
from deepnotes.chapters.why_residuals.budget import sizes as why_residuals_sizes
from deepnotes.core import derive as sym
from deepnotes.show import readable, say
from deepnotes.show.png import MIN_TEXT_KEY, PROBLEMS_KEY, figure_png, png_text
from deepnotes.show.verdicts import APPROX, HOLDS, UNCHECKABLE, WRONG

ROOT = Path(__file__).resolve().parents[2]
SMOKE = dn.get_budget("smoke")


def test_plain_layer_derivation_reuses_the_linear_moment_and_telescopes():
    d = sr.plain_layer_moments()
    assert d["symbols"]["n"] is sr.n_in and d["symbols"]["m"] is sr.n_out
    assert d["forward_var"] == 1 / sr.n_in and d["backward_var"] == 1 / sr.n_out
    assert sp.simplify(d["backward_gain"] - sr.n_out / sr.n_in) == 0
    assert sp.simplify(d["xavier"] - 2 / (sr.n_in + sr.n_out)) == 0
    assert d["he_forward_var"] == 2 / sr.n_in
    stack = sr.plain_stack_backward_gain(5)
    assert stack["total"] == stack["symbols"]["d5"] / stack["symbols"]["d0"]
    g = sr.plain_stack_gradients()
    assert g["grad_every_layer_stable"] == 1 and g["grad_output_stable"] == 1 / sr.gain and g["g_for_1/N"] == sym.N


def test_residual_and_growth_limits():
    r = sr.residual_layer()
    assert r["param_grad_scale"] == sr.eps
    assert r["dy/dx"] == 1 + sr.eps * sp.Derivative(r["f"], r["symbols"]["x"])
    inc = sr.increment_with_eps()
    assert inc["p"] == sp.Rational(1, 2) and inc["exponent"].subs(inc["symbols"]["p"], inc["p"]) == 0
    assert sr.one_d_eps_exponent()["p"] == 1
    lim = sr.growth_limits()
    assert set(lim) == set(sr.EPS_CHOICES) | {"symbols"}
    assert lim["1/N"]["one_d_limit"] == sp.E and lim["1/sqrt(N)"]["one_d_limit"] == sp.oo
    assert lim["1/sqrt(N)"]["high_d_limit"] == sp.E and lim["1/N"]["high_d_limit"] == 1
    c = sr.comment_estimate()
    assert c["ratio_limit"] == sp.exp(-sp.Rational(1, 2)) and c["e_squared_case"] == sp.exp(2)
    n = 10_000.0  # the series against the exact log
    assert float(c["log_factor"].subs(sym.N, n)) == pytest.approx(
        n * math.log1p(n**-0.5), abs=1e-6
    )  # next term N^{-3/2}/5
    assert c["ratio_at"][1000] == pytest.approx(math.exp(-0.5), rel=0.02)  # tends to e^{-1/2}
    assert sr.high_dim_layer()["factor"] == 1 + sr.eps**2
    sk = sr.skip_vs_branch_scaling()
    assert sk["relative_speed"] == sk["symbols"]["alpha"] ** 2
    assert sr.layernorm_scale_invariance(3)["difference"] == sp.zeros(3, 1)


def test_bad_inputs_name_the_value_and_the_allowed_ones():
    with pytest.raises(ValueError, match=r"1/sqrt\(N\)"):
        rs.eps_for_depth("sqrt", 10)
    with pytest.raises(ValueError, match="depth"):
        rs.eps_for_depth("1", 0)
    with pytest.raises(ValueError, match="width"):
        rs.ResidualMLP(0, 3)
    with pytest.raises(ValueError, match="exponent"):
        rs.eps_for_depth(-1.0, 10)
    with pytest.raises(ValueError, match="kind"):
        rt.MLPLanguageModel(8, 4, 2, "resnet")
    assert rs.eps_for_depth("1/sqrt(N)", 100) == pytest.approx(0.1)
    assert rs.eps_for_depth(1.0, 50) == pytest.approx(0.02)
    assert rs.STACK_KINDS == ("plain", "1", "1/sqrt(N)", "1/N")


def test_jacobian_probe_matches_autograd_and_the_high_dimensional_prediction():
    gen = torch.Generator().manual_seed(4)  # the probe draws x_0 then v from seed + 1
    x0, v0 = torch.randn(1, 8, generator=gen), torch.randn(1, 8, generator=gen)
    probe = rs.jacobian_growth("1", 8, 5, batch=1, seed=3, device="cpu")
    _, vjp0 = torch.func.vjp(rs.build_stack("1", 8, 5, seed=3, device="cpu", dtype=torch.float64), x0[0].double())
    exact = math.log(float(vjp0(v0[0].double())[0].detach().pow(2).sum() / v0.double().pow(2).sum()))
    assert probe.log_growth[0] == pytest.approx(exact, abs=1e-4)  # the renormalized VJP is exact
    wide = rs.jacobian_growth("1", 128, 200, batch=8, device="cpu")  # 2^200: no overflow
    pred = rs.predicted_log_growth("1", 200)
    assert math.isfinite(wide.typical) and wide.typical == pytest.approx(pred["high_d"], rel=0.05)
    assert wide.typical < 0.6 * pred["one_d"]
    assert wide.cos_vu < 0.15 and wide.norm_ratio == pytest.approx(1.0, rel=0.1)
    small = rs.jacobian_growth("1/N", 64, 100, batch=8, device="cpu")
    assert abs(small.typical) < 0.1


def test_build_stack_is_seeded_and_leaves_the_global_rng_alone():
    state = torch.random.get_rng_state()
    a = rs.build_stack("1/N", 8, 3, seed=7, device="cpu")
    b = rs.build_stack("1/N", 8, 3, seed=7, device="cpu")
    assert torch.equal(torch.random.get_rng_state(), state)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))
    m1, m2 = rt.build_lm("plain", 3, SMOKE, seed=2, device="cpu"), rt.build_lm("plain", 3, SMOKE, seed=2, device="cpu")
    assert torch.equal(m1.embed.weight, m2.embed.weight) and torch.equal(torch.random.get_rng_state(), state)


def test_language_model_loss_is_the_next_token_cross_entropy():
    model = rt.build_lm("1/sqrt(N)", 3, SMOKE, device="cpu")
    tokens = torch.randint(0, SMOKE.vocab_size, (4, 6), generator=torch.Generator().manual_seed(0))
    logp = model(tokens[:, :-1]).log_softmax(-1)  # [B, T-1, V]
    by_hand = -logp.gather(-1, tokens[:, 1:, None]).mean()
    torch.testing.assert_close(model.loss(tokens), by_hand)


def test_one_dimensional_plain_relu_stack_stops_gradients_without_nans():
    p = rs.jacobian_growth("plain", 1, 30, batch=16, device="cpu")
    assert all(not math.isnan(t) for t in p.log_growth) and p.typical == -math.inf


def test_plain_moments_follow_the_m_over_n_rule():
    m = rs.plain_moments(32, 128, 3, batch=512, device="cpu")
    assert len(m.forward) == len(m.backward) == len(m.predicted_backward) == 7
    assert m.predicted_backward[-1] == 1.0 and m.predicted_backward[-2] == pytest.approx(32 / 128)
    for got, want in zip(m.backward, m.predicted_backward, strict=True):
        assert got == pytest.approx(want, rel=0.35)
    assert max(m.forward) < 2.0 and min(m.forward) > 0.5


def test_layer_gradients_scale_with_eps():
    plain = rs.layer_gradients("plain", 32, 10, batch=64, device="cpu")
    small = rs.layer_gradients("1/N", 32, 10, batch=64, device="cpu")
    assert len(plain) == 10 and sum(small) < 0.1 * sum(plain)


def test_training_runs_record_histories_and_divergence():
    h = rt.mlp_runs([rt.mlp_setting("1/sqrt(N)", 4, SMOKE, steps=3)], dn.RunContext.here(SMOKE, device="cpu"))[0]
    assert len(h.losses) == 3 and len(h.grad_norms[0]) == 4 and not h.diverged
    boom = rt.mlp_runs(
        [rt.mlp_setting("1", 60, SMOKE, optimizer="sgd", lr=1.0, steps=5)], dn.RunContext.here(SMOKE, device="cpu")
    )[0]
    assert boom.diverged and "diverged" in rt.outcome(boom)
    t = rt.transformer_runs(
        [rt.transformer_setting("1/N", 2, SMOKE, steps=2)], dn.RunContext.here(SMOKE, device="cpu")
    )[0]
    assert len(t.losses) == 2
    p = rt.transformer_runs(
        [rt.transformer_setting("plain", 2, SMOKE, steps=2)], dn.RunContext.here(SMOKE, device="cpu")
    )[0]
    assert len(p.losses) == 2 and len(p.grad_norms[0]) == 2


def test_plain_transformer_is_forward_stable_per_sublayer_and_collapses_positions():
    model = rt.build_transformer("plain", 2, dn.get_budget("cpu"), device="cpu")
    assert all(s.norm_style == "plain" and s.norm is None for b in model.blocks for s in b.sublayers)
    x = torch.randn(8192, model.cfg.d_model)  # [B, d], E[x²] = 1
    block = model.blocks[0]
    with torch.no_grad():
        assert block.ffn(x).pow(2).mean().item() == pytest.approx(1.0, rel=0.1)  # He + LeCun
        assert block.attn.out_proj(block.attn.v_proj(x)).pow(2).mean().item() == pytest.approx(1.0, rel=0.1)
    c0, plain = rt.position_cosine("plain", 12, SMOKE, device="cpu")
    _, residual = rt.position_cosine("1/N", 12, SMOKE, device="cpu")
    assert plain > 0.99 and residual < 0.5 and c0 < 0.5  # rank collapse without skips
    with pytest.raises(ValueError, match="unknown epsilon rule"):
        rt.build_transformer("2", 4, SMOKE)


def test_gradient_prediction_is_the_symbolic_one_and_matches_residual_stacks():
    c = sr.branch_gradient_moment()
    w, h, b = (c["symbols"][k] for k in ("w", "h", "B"))
    assert float(c["total"].subs({w: 16, h: 64, b: 32})) == rs.branch_gradient_moment(16, 64, batch=32)
    got = sum(rs.layer_gradients("1/sqrt(N)", 32, 20, batch=64, device="cpu"))
    assert got == pytest.approx(rs.predicted_total_gradient("1/sqrt(N)", 32, 20, batch=64), rel=0.3)
    assert rs.predicted_total_gradient("plain", 32, 20, batch=64) == pytest.approx(
        20 * rs.branch_gradient_moment(32, batch=64)
    )


def test_correlation_map_and_token_cosines():
    assert rs.relu_correlation_map(1.0) == pytest.approx(1.0)
    assert rs.relu_correlation_map(0.0) == pytest.approx(1 / math.pi)
    assert 0.98 < rs.predicted_cosine("plain", 50, 0.0) < rs.predicted_cosine("plain", 100, 0.0) < 1
    assert rs.predicted_cosine("1/N", 50, 0.0) < 0.02
    got, want = rt.token_cosines("plain", 30, SMOKE, width=32, device="cpu")
    assert got > 0.9 and want > 0.9
    got, want = rt.token_cosines("1/N", 30, SMOKE, width=32, device="cpu")
    assert abs(got - want) < 0.2


def test_branch_jacobian_is_not_a_multiple_of_an_orthogonal_matrix_but_keeps_norms_on_average():
    sv = torch.tensor(rs.branch_jacobian_singular_values(64, device="cpu"))
    assert len(sv) == 64 and sv.pow(2).mean() == pytest.approx(1.0, rel=0.3)  # E‖v ∂f/∂x‖² = ‖v‖²
    assert (sv < 1e-8 * sv.max()).float().mean() > 0.3  # relu: rank ≈ width/2


def test_orthogonal_matrix_keeps_norms_not_angles():
    c = rs.orthogonal_cosines(128, samples=128)
    assert c["identity"] == pytest.approx(1.0)
    assert c["random"] == pytest.approx(c["expected"], rel=0.3)
    with pytest.raises(ValueError, match="width"):
        rs.orthogonal_cosines(0)


# --- sweeps, figures and verdicts at the smoke budget


@pytest.fixture(scope="module")
def sweeps():
    import matplotlib

    matplotlib.use("Agg")
    return {
        "grad": rs.gradient_sweep(SMOKE),
        "growth": rs.growth_sweep(SMOKE),
        "train": rt.train_sweep(dn.RunContext.here(SMOKE)),
        "tf": rt.transformer_sweep(dn.RunContext.here(SMOKE)),
    }


def test_sweeps_cover_the_budget_grid(sweeps):
    rb = why_residuals_sizes(SMOKE)
    g = sweeps["grad"]
    assert set(g.totals) == {(k, w, n) for k in rs.STACK_KINDS for w in rb.grad_widths for n in rb.grad_depths}
    assert g.ratio[("1", rb.grad_widths[0], rb.grad_depths[0])] == pytest.approx(
        g.totals[("1", rb.grad_widths[0], rb.grad_depths[0])]
        / rs.predicted_total_gradient("1", rb.grad_widths[0], rb.grad_depths[0], batch=rb.grad_batch)
    )
    assert len(g.moments.forward) == 2 * rb.grad_depths[0] + 1
    assert set(sweeps["growth"].probes) == {(w, k, n) for w in rb.widths for k in rs.STACK_KINDS for n in rb.depths}
    assert len(sweeps["growth"].probes[(1, "1", rb.depths[0])].log_growth) == rb.probe_batch * rb.width1_batch_factor
    assert set(sweeps["train"]) == {(n, o, k) for n in rb.train_depths for o in rt.OPTIMIZERS for k in rs.STACK_KINDS}
    assert all(len(hs) == rb.train_seeds >= vd.MIN_SEEDS for hs in sweeps["train"].values())
    assert all(len(h.losses) == rb.train_steps or h.diverged for hs in sweeps["train"].values() for h in hs)
    assert all(len(hs) == rb.train_seeds for hs in sweeps["tf"].runs.values())
    assert (
        set(sweeps["tf"].runs)
        == set(sweeps["tf"].cosines)
        == {(n, k) for n in rb.transformer_depths for k in rs.STACK_KINDS}
    )


def _lines(ax):
    return [line for line in ax.get_lines() if len(line.get_xdata())]


def test_figures_draw_the_measurements(sweeps):
    rb = why_residuals_sizes(SMOKE)
    g = sweeps["grad"]
    fig = wf.gradient_figure(g)
    ax_m, ax_r, ax_t, ax_1 = fig.axes[:4]
    assert list(_lines(ax_m)[0].get_ydata()) == g.moments.forward
    assert list(_lines(ax_m)[2].get_ydata()) == g.moments.predicted_backward
    assert len(_lines(ax_r)) == len(rs.STACK_KINDS) * len(rb.grad_widths) + 1  # + the line at 1
    assert [line.get_color() for line in _lines(ax_1)] == [dn.show.palette.PALETTE["1"]] * 2
    fig = wf.growth_figure(sweeps["growth"])
    assert len(fig.axes) == len(rb.widths)
    first = _lines(fig.axes[-1])[0]  # plain markers, widest width
    want = [sweeps["growth"].probes[(rb.widths[-1], "plain", n)].typical / math.log(10) for n in rb.depths]
    assert list(first.get_xdata()) == list(rb.depths) and list(first.get_ydata()) == pytest.approx(want)
    fig = wf.training_figure(sweeps["train"], SMOKE)
    assert len(fig.axes) == len(rb.train_depths) * len(rt.OPTIMIZERS)
    run = sweeps["train"][(rb.train_depths[0], "adam", "plain")][0]  # the figures draw seed 0
    top = wf.LOSS_TOP_FACTOR * run.unigram
    assert list(_lines(fig.axes[0])[0].get_ydata()) == [min(v, top) for v in run.losses]
    fig = wf.first_step_gradient_figure(sweeps["train"], SMOKE)
    plain = sweeps["train"][(rb.train_depths[-1], "adam", "plain")][0].grad_norms[0]
    assert list(_lines(fig.axes[0])[0].get_ydata()) == pytest.approx(plain)
    assert len(wf.transformer_loss_figure(sweeps["tf"]).axes) == len(rb.transformer_depths)
    assert len(_lines(wf.transformer_gradient_figure(sweeps["tf"]).axes[0])) == len(rs.STACK_KINDS)
    n, n_tf = rb.train_depths[-1], rb.transformer_depths[-1]
    fig = wf.answer(sweeps["train"], sweeps["tf"], SMOKE)
    assert [ax.get_title() for ax in fig.axes] == [f"MLP, N = {n}, Adam", f"Transformer, no norm, N = {n_tf}, Adam"]
    assert fig.get_size_inches()[1] <= 0.5 * fig.get_size_inches()[0]  # compact: under the answer
    png = figure_png(fig)
    assert png_text(png)[PROBLEMS_KEY] == ""
    width = Image.open(io.BytesIO(png)).width  # titles wider than the panels widen the PNG and shrink its text
    shown = float(png_text(png)[MIN_TEXT_KEY]) * min(1.0, readable.COLUMN_PX[390] / width)
    assert shown >= readable.MIN_TEXT_PX[390], (width, shown)
    assert wf.answer(sweeps["train"], None, SMOKE).axes[1].get_title() == f"MLP, N = {n}, SGD"


def test_slider_figure_draws_growth_and_losses():
    import matplotlib

    matplotlib.use("Agg")
    fig = wf.slider_figure(4, 8, 0.5, budget=SMOKE)
    ax_j, ax_l = fig.axes
    measured = _lines(ax_j)[0]
    assert len(measured.get_xdata()) == 5 and measured.get_ydata()[0] == 0.0  # k = 0..N, no growth at k = 0
    (key,) = fig.legends  # one key under the figure
    assert "ε = N^-0.5" in [t.get_text() for t in key.get_texts()][1]
    assert len(_lines(ax_l)[0].get_ydata()) == why_residuals_sizes(SMOKE).slider_steps


def test_derivation_verdicts_are_decided_by_sympy():
    table = wc.derivation_verdicts()
    status = {v.claim: v.status for v in table}
    assert status["Reader: with ε = 1/√N the expansion factor tends to e²"] == WRONG
    assert status["Su's reply: (1 + 1/√N)^N ≈ e^{√N}"] == APPROX
    assert sum(s == HOLDS for s in status.values()) == len(table) - 2


def test_measured_verdicts_and_summary(sweeps):
    rb = why_residuals_sizes(SMOKE)
    assert len(wc.gradient_verdicts(sweeps["grad"])) == 1 + len(rs.STACK_KINDS) * len(rb.grad_widths)
    growth = wc.growth_verdicts(sweeps["growth"])
    assert "Kk/Su" in growth[len(rb.widths[1:]) * len(rs.EPS_NAMES)].claim
    # §稳定传播 claims the backward *second moment*: judged on the mean over samples with its bootstrap
    # interval (issue 44), at the deepest N where such a mean can reach the expectation (the variance of
    # the samples' logs at most ln(n) for a lognormal-like ratio), and not judged where no depth qualifies
    import dataclasses

    growth = sweeps["growth"]

    def second_moment_row(logs):
        plain = {
            k: dataclasses.replace(p, log_growth=logs)
            for k, p in growth.probes.items()
            if k[:2] == (growth.wide, "plain")
        }
        table = wc.growth_verdicts(dataclasses.replace(growth, probes={**growth.probes, **plain}))
        return next(v for v in table if "second moment fixed" in v.claim)

    heavy = [-2.0, -2.0, -2.0, math.log(4 - 3 * math.exp(-2.0))]  # mean of exp: exactly 1; median: -2
    assert second_moment_row(heavy).status == UNCHECKABLE  # a typical sample far off: the mean is out of reach
    assert second_moment_row([0.05 * math.sin(i) for i in range(32)]).status == HOLDS
    assert second_moment_row([0.9] * 20 + [3.0] * 12).status == WRONG  # typical 0.9, mean e^2.2
    assert f"at N = {max(growth.depths)}" in second_moment_row([0.0] * 8).claimed  # every depth qualifies
    # the growth rows judge the median over the probe's samples with its interval (issue 44's door)
    deep = max(growth.depths)
    key = next(
        k
        for k in growth.probes
        if k[0] == growth.wide
        and k[1] in rs.EPS_NAMES
        and k[2] == deep
        and wc.predicted_log_growth(k[1], deep)["high_d"] <= wc.VISIBLE_LOG_GROWTH
    )

    def bounded_row(logs):
        changed = {key: dataclasses.replace(growth.probes[key], log_growth=logs)}
        table = wc.growth_verdicts(dataclasses.replace(growth, probes={**growth.probes, **changed}))
        return next(v for v in table if v.claim == f"width {key[0]}, N = {deep}, ε = {key[1]}: growth ≈ 1")

    assert bounded_row([0.01 * math.sin(i) for i in range(16)]).status == HOLDS
    assert bounded_row([0.5 + 0.01 * math.sin(i) for i in range(16)]).status == WRONG
    assert bounded_row([0.0, 0.5] * 8).status == UNCHECKABLE  # half the samples in, half out: cannot decide
    train = wc.training_verdicts(sweeps["train"], SMOKE)
    assert [v.status for v in train] == [  # the source's direction: plain fails, scaled train; the claims that
        # deep stacks fail (plain, ε = 1) not judged below DEEP layers (one rule, issue 61)
        UNCHECKABLE
        if kind in ("1", "plain") and n < wc.DEEP
        else HOLDS
        if (statistics.median(h.fraction_learned() for h in hs) >= wc.LEARNED_FRACTION) == (kind != "plain")
        else WRONG
        for (n, _, kind), hs in sweeps["train"].items()
    ]
    for v, (_, _, kind) in zip(train, sweeps["train"], strict=True):  # issue 44: each run's claim, subject first
        assert ("hard to train" in v.claim) == (kind == "plain")
        assert ("does not avoid increment explosion" in v.claim) == (kind == "1")
        assert v.source.startswith(
            {"plain": "seed 004 §稳定传播 claim 20", "1": "seed 004 comment 11"}.get(
                kind, "seed 004 §残差初现 claim 24"
            )
        )
    positions = wc.transformer_verdicts(sweeps["tf"], SMOKE)[len(sweeps["tf"].runs) :]
    for v, ((n, kind), seeds) in zip(positions, sweeps["tf"].cosines.items(), strict=True):  # Dong et al.'s way
        assert ("collapse" in v.claim) == (kind == "plain") and len(seeds) == rt.TOKEN_COSINE_SEEDS >= vd.MIN_SEEDS
        shows = [(cn >= wc.POSITION_COS_MAX) == (kind == "plain") for _, cn in seeds]
        assert v.status == (HOLDS if all(shows) else WRONG if not any(shows) else UNCHECKABLE)  # 3 stacks, each read
    assert len(wc.transformer_verdicts(sweeps["tf"], SMOKE)) == 2 * len(sweeps["tf"].runs)
    summary = wc.measured_summary(sweeps["train"], SMOKE)
    text = summary.text
    assert all(say.unrendered(x.text) == [] for x in summary.sentences)  # issue 61: measurements, no outcome claimed
    seeds = why_residuals_sizes(SMOKE).train_seeds
    assert text.startswith(f"**Measured at the smoke budget, {seeds} seeds per run.**")
    assert text.count("\n- **") == len(rs.STACK_KINDS)  # issue 44: every seed's fraction learned, not seed 0's
    h = sweeps["train"][(why_residuals_sizes(SMOKE).train_depths[0], "adam", "plain")]
    assert vd.seeds_text([x.fraction_learned(why_residuals_sizes(SMOKE).loss_window) for x in h]) in text
    said = wc.run_takeaways(sweeps["train"], sweeps["tf"], SMOKE)
    sqrt_runs = [hs for (_, _, k), hs in sweeps["train"].items() if k == "1/sqrt(N)"]
    rows = {v.anchor: dataclasses.asdict(v) for v in wc.training_verdicts(sweeps["train"], SMOKE)}
    rows |= {v.anchor: dataclasses.asdict(v) for v in wc.transformer_verdicts(sweeps["tf"], SMOKE)}
    assert len(said["mlp_sqrt_trained"].spans) >= 2  # the phrase, and each setting linked to its row
    assert {s.anchor for s in said["mlp_sqrt_trained"].spans} <= rows.keys()
    assert len({s.anchor for s in said["mlp_sqrt_trained"].spans}) == len(sqrt_runs)
    assert all(say.problems(said[k], rows) == [] for k in said)
    assert wc.run_takeaways(sweeps["train"], None, SMOKE)["tf_outcomes"].text == "the smoke budget skips them"


def _history(trains: bool) -> dn.History:
    """A run that goes from the plateau to the floor (trains) or stays on the plateau."""
    return dn.History(losses=[3.0] * 10 + ([1.0] if trains else [3.0]) * 10, floor=1.0, unigram=3.0)


def test_comment_11_is_judged_only_very_deep_and_as_a_contrast():
    """Issue 44: ε = 1 "does not avoid increment explosion: very deep ones fail" (comment 11) is not
    checkable below DEEP blocks; there it holds only where ε = 1 fails *and* ε = 1/√N trains."""
    deep = wc.DEEP

    def row(n, eps1_trains, scaled_trains):
        runs = {(n, "adam", "1"): [_history(eps1_trains)] * 3, (n, "adam", "1/sqrt(N)"): [_history(scaled_trains)] * 3}
        return wc.training_verdicts(runs, SMOKE)[0]

    assert row(deep - 1, False, True).status == UNCHECKABLE
    assert row(deep, False, True).status == HOLDS and "where ε = 1/sqrt(N) does" in row(deep, False, True).claim
    assert row(deep, False, False).status == WRONG  # nothing trains: no contrast, so the claim does not hold
    assert row(deep, True, True).status == WRONG


def test_mean_field_rows_use_the_mean_where_the_seeds_spread_allows_it():
    """Issue 44: E‖∇θL‖² against the mean-field prediction over initializations (check_estimate), at the
    deepest depth whose seeds' log-spread lets a mean reach an expectation; residual kinds cite eq. (7)."""
    base = rs.GradientSweep(
        moments=rs.PlainMoments([8, 32, 8], [1.0] * 3, [1.0] * 3, [1.0] * 3, [1.0] * 2),
        moment_width=8,
        moment_hidden=32,
        moment_depth=2,
        moment_batch=4,
        kinds=("plain", "1/N"),
        widths=(8,),
        depths=(4, 8),
        seeds=3,
        samples={},
        predicted={},
    )
    keys = [(k, 8, n) for k in base.kinds for n in base.depths]
    predicted = {key: 2.0 for key in keys}

    def rows(at_8):  # the samples at N = 8 (at N = 4: all equal to the prediction)
        samples = {key: ([2.0, 2.0, 2.0] if key[2] == 4 else at_8) for key in keys}
        sweep = dataclasses.replace(base, samples=samples, predicted=predicted)
        return [wc._mean_field_row(sweep, kind, 8) for kind in base.kinds]

    plain, scaled = rows([2.2, 1.8, 2.0])
    assert plain.status == scaled.status == HOLDS and "at N = 8" in plain.claimed
    assert plain.source.startswith("seed 004 §稳定传播 claim 19") and scaled.source.startswith(
        "seed 004 §残差初现 eq. (7)"
    )
    assert "at N = 4" in rows([2e-6, 2.0, 2e3])[0].claimed  # N = 8 too spread for a mean: judged at N = 4
    assert rows([20.0, 22.0, 24.0])[0].status == WRONG
    # three seeds of a heavy-tailed ratio understate its spread: judged by the spread's upper bound, N = 8's
    # 0.15, 0.45, 0.075 (sample variance of the logs 0.86, bound 8) cannot carry a mean; N = 4 is judged
    assert "at N = 4" in rows([0.3, 0.9, 0.15])[0].claimed


def test_steps_to_half():
    h = dn.History(losses=[3.0] * 10 + [1.0] * 10, floor=1.0, unigram=3.0)
    assert h.steps_to(0.5, window=2) == 10  # losses 9, 10 average to the half-way 2.0
    assert dn.History(losses=[3.0] * 5, floor=1.0, unigram=3.0).steps_to(0.5) is None
    assert dn.History(losses=[3.0, 1.0], floor=1.0, unigram=3.0, diverged_at=2).steps_to(0.5, window=1) is None


def test_claims_thresholds_are_named_and_statuses_computed():
    src = (ROOT / "deepnotes/chapters/why_residuals/claims.py").read_text()
    tree = ast.parse(src)
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "ok":
            assert not isinstance(node.value, ast.Constant), ast.unparse(node)
        if isinstance(node, ast.Compare):
            numbers = [
                c.value for c in node.comparators if isinstance(c, ast.Constant) and isinstance(c.value, (int, float))
            ]
            assert all(v in (0, 1) for v in numbers), ast.unparse(node)  # a threshold has a name


def test_notebook_cells_call_the_package():
    nb = json.loads((ROOT / "book/why_residuals.ipynb").read_text())
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        src = "".join(cell["source"])
        assert len([line for line in src.splitlines() if line.strip()]) <= 25
        assert not any(w in src for w in ("def ", "class ", "lambda")), src
        assert "fork_rng" not in src and "sp.Symbol(" not in src


# ReZero's input-output Jacobian spectra -----------------------------------------------------------------
from deepnotes.chapters.why_residuals import spectrum as wspec  # noqa: E402
from deepnotes.show import verdicts as vd  # noqa: E402


def test_io_jacobian_matches_autograd_jacobian_and_rezero_at_zero_is_the_identity():
    b = dn.get_budget("smoke")
    stack = wspec.encoder_stack(b, "pre", 2)
    x0 = torch.randn(3, b.d_model, dtype=torch.float64)
    full = torch.autograd.functional.jacobian(lambda z: stack(z.unsqueeze(0)).reshape(-1), x0).reshape(
        3 * b.d_model, -1
    )
    assert torch.allclose(wspec.io_jacobian(stack, x0), full, atol=1e-10)
    ident = wspec.encoder_stack(b, "rezero", 3, gate=0.0)
    assert torch.allclose(wspec.io_jacobian(ident, x0), torch.eye(3 * b.d_model, dtype=torch.float64))


def test_spectra_at_smoke_are_seeded_and_post_ln_has_one_zero_per_token():
    b = dn.get_budget("smoke")
    sub = why_residuals_sizes(b)
    spectra = wspec.jacobian_spectra(b)
    assert set(spectra) == {(k, n) for k in wspec.SPECTRUM_STYLES for n in sub.jacobian_depths} | {
        ("rezero g=0", max(sub.jacobian_depths))
    }
    post = spectra[("post", max(sub.jacobian_depths))]
    assert len(post.singular) == sub.jacobian_seeds * sub.jacobian_tokens * b.d_model
    assert post.zeros() >= 1 / b.d_model - 1e-12  # LayerNorm removes each token's mean direction
    assert wspec.jacobian_spectra(b)[("pre", 2)] == spectra[("pre", 2)]
    with pytest.raises(ValueError, match="unknown norm style 'deepnorm'"):
        wspec.encoder_stack(b, "deepnorm", 2)


def _spectra(post_deep, pre_deep, rezero_deep, shallow=(1.0, 1.0, 1.0), identity=1.0):
    """Made-up spectra: each entry a tuple of singular values."""
    b = dn.get_budget("smoke")
    lo, hi = why_residuals_sizes(b).jacobian_depths[0], why_residuals_sizes(b).jacobian_depths[-1]

    def mk(k, n, vals):
        return wspec.Spectrum(k, n, None, tuple(vals))

    out = {(k, lo): mk(k, lo, [v] * 4) for k, v in zip(("post", "pre", "rezero"), shallow, strict=True)}
    out.update(
        {
            ("post", hi): mk("post", hi, post_deep),
            ("pre", hi): mk("pre", hi, pre_deep),
            ("rezero", hi): mk("rezero", hi, rezero_deep),
            ("rezero g=0", hi): mk("rezero", hi, [identity] * 4),
        }
    )
    return out, b


def test_spectrum_verdicts_follow_the_measurement():
    wide, narrow, medium = (1e-3, 1e-2, 1e2, 1e3), (0.9, 1.0, 1.0, 1.1), (1e-3, 1.0, 1.0, 1e3)
    spectra, b = _spectra(wide, wide, narrow)
    v = wc.spectrum_verdicts(spectra, b)
    assert [x.status for x in v] == [vd.HOLDS, vd.HOLDS, vd.HOLDS]
    spectra, b = _spectra(wide, wide, medium, shallow=(0.01, 1.0, 1.0), identity=1.1)
    v = wc.spectrum_verdicts(spectra, b)
    # the identity start is decided by the derivation (a mismeasured λ_io = 1.1 is reported, not believed)
    assert [x.status for x in v] == [vd.HOLDS, vd.WRONG, vd.APPROX]  # ordering kept, not the factor
    assert "departs from it" in v[0].reason
    spectra, b = _spectra(narrow, narrow, wide)
    assert wc.spectrum_verdicts(spectra, b)[2].status == vd.WRONG


def test_rezero_is_judged_on_the_papers_histograms_in_its_setting():
    """Issue 30: the paper shows histograms of log λ_io (vanilla Transformer at 4, 12, 64 layers, ReZero
    during training); the verdicts read their width and centre, and the status follows them."""
    paper = wspec.paper_spectra(SMOKE)
    rb = why_residuals_sizes(SMOKE)
    assert set(paper.vanilla) == set(rb.paper_jacobian_depths) and set(paper.rezero) == set(rb.paper_rezero_steps)
    assert all(len(seeds) == wspec.PAPER_SEEDS >= 3 for seeds in [*paper.vanilla.values(), *paper.rezero.values()])
    assert all(abs(v - 1) < 1e-9 for seed in paper.rezero[0] for v in seed)  # every gate 0: J = I
    assert wspec.log10_quartiles([1.0, 10.0, 100.0, 0.0]) == (0.5, 1.0, 1.5)  # exact zeros left out …
    assert wspec.zeros([1.0, 10.0, 100.0, 0.0]) == 1  # … and counted
    table = wc.paper_spectrum_verdicts(paper)
    assert [v.status for v in table] == [vd.HOLDS, vd.HOLDS]
    # issue 44: each seed's histogram is read apart, and the statuses follow the widths
    seeds = wspec.PAPER_SEEDS

    def spread(width):  # a histogram of log10 λ with this interquartile range
        return (1.0, 10 ** (width / 2), 10**width, 10 ** (3 * width / 2))

    narrowing = dataclasses.replace(
        paper,
        vanilla={4: [spread(1.0)] * seeds, 12: [spread(0.5)] * seeds, 64: [spread(0.2)] * seeds},
        rezero={0: [(1.0,) * 4] * seeds, 50: [spread(2.0)] * seeds},
        rezero_depth=64,
    )
    assert [v.status for v in wc.paper_spectrum_verdicts(narrowing)] == [vd.WRONG, vd.WRONG]
    one_seed = dataclasses.replace(
        paper, vanilla={n: s[:1] for n, s in paper.vanilla.items()}, rezero={k: s[:1] for k, s in paper.rezero.items()}
    )
    assert {v.status for v in wc.paper_spectrum_verdicts(one_seed)} == {vd.UNCHECKABLE}
    fig = wf.paper_spectrum_figure(paper)
    assert len(fig.axes) == 2


@pytest.mark.parametrize(("kind", "optimizer"), [("plain", "adam"), ("1/sqrt(N)", "sgd"), ("1", "adam")])
def test_the_mlp_on_the_engine_trains_as_the_reference_mlp_in_the_oracle_loop(kind, optimizer):
    """The chapter's MLP language model, started on the engine by start_mlp (biases held at 0, the gate at ε)
    and trained with its weights only, follows MLPLanguageModel under the oracle loop (float64)."""
    import oracle

    from deepnotes.core.engine import Stack
    from deepnotes.core.train import train_ensemble

    budget, depth, width, seed = dn.get_budget("smoke"), 5, 8, 3
    cfg = dn.TrainConfig(optimizer=optimizer, lr=1e-2, steps=6, batch_size=4, seq_len=8, seed=seed)
    task = dn.MarkovLanguage(budget.vocab_size, seed=seed)
    with dn.core.data.seeded(seed):
        reference = rt.MLPLanguageModel(budget.vocab_size, width, depth, kind).double()
    ref = oracle.train(reference, task, cfg, trackers=[oracle.BlockGradNorms(2)])
    stack = Stack([rt.mlp_config(kind, depth, budget, width)], seeds=[seed], dtype=torch.float64)
    rt.start_mlp(kind, depth, width, budget.vocab_size, seed, stack, 0)
    trainable = [n for n in stack.slots if n not in rt.MLP_FROZEN]
    (engine,) = train_ensemble(stack, task, [cfg], trainable=trainable, trackers=rt._mlp_trackers(2))
    assert engine.losses == pytest.approx(ref.losses, rel=1e-10)
    assert engine.grad_steps == ref.grad_steps
    for a, b in zip(engine.grad_norms, ref.grad_norms, strict=True):
        assert a == pytest.approx(b, rel=1e-9)


def test_sus_premise_rows_read_every_sample_and_flip_with_them():
    """Issue 44: the premise rows (v·∂f/∂x ⟂ v with norm ‖v‖; ∂f/∂x close to orthogonal; an orthogonal W makes
    xW ⟂ x) are judged on samples through the door, or decided by a counterexample derivation."""
    probe = dataclasses.replace(
        rs.jacobian_growth("1/sqrt(N)", 64, 8, batch=16, device="cpu"),
        cos_samples=[0.02] * 16,
        ratio_samples=[1.0] * 16,
    )
    assert [v.status for v in wc._orthogonal_premise_rows(probe, 64)] == [HOLDS, HOLDS]
    far = dataclasses.replace(probe, cos_samples=[0.9] * 16, ratio_samples=[3.0] * 16)
    assert [v.status for v in wc._orthogonal_premise_rows(far, 64)] == [WRONG, WRONG]
    measured = rs.jacobian_growth("1/sqrt(N)", 64, 8, batch=16, device="cpu")
    assert len(measured.cos_samples) == len(measured.ratio_samples) == 16
    assert statistics.mean(measured.cos_samples) == pytest.approx(measured.cos_vu, rel=0.05)
    assert wc._branch_spectrum_row(64, [[0.0, 1.0, 2.0]] * 5).status == WRONG  # rank-deficient branches
    assert wc._branch_spectrum_row(64, [[1.0, 1.0, 1.0]] * 5).status == HOLDS  # orthogonal ones
    assert wc._branch_spectrum_row(64, [[1.0, 1.0, 1.0]] * 2).status == UNCHECKABLE  # too few branches
    assert wc.identity_cosine() == 1.0
    assert wc._orthogonal_w_row(64, 0.1).status == WRONG  # W = I: xW ∥ x, whatever a random W does


def test_the_mean_field_rows_judge_the_mean_over_random_stacks():
    """Issue 44: the arc-cosine iteration is an expectation; its row reads the mean over random stacks."""
    near = {(20, "plain"): [(0.51, 0.5), (0.49, 0.5), (0.5, 0.5)]}
    far = {(20, "plain"): [(0.9, 0.5), (0.95, 0.5), (0.92, 0.5)]}
    assert wc.token_cosine_verdicts(near)[0].status == HOLDS
    assert wc.token_cosine_verdicts(far)[0].status == WRONG
    assert wc.token_cosine_verdicts({(20, "plain"): near[(20, "plain")][:2]})[0].status == UNCHECKABLE


def test_rezeros_identity_start_is_decided_by_the_derivation():
    """Issue 44: J = I at g = 0 whatever the weights, so one random stack's spectrum is context, not the test."""
    assert wc.rezero_gate_zero_jacobian() == 1
    spectra = {("rezero g=0", 4): dataclasses.make_dataclass("S", ["singular"])([1.0, 1.0 + 1e-12])}
    row = wc._isometry_row(spectra, 4)
    assert row.status == HOLDS and "agrees within" in row.reason
    off = {("rezero g=0", 4): dataclasses.make_dataclass("S", ["singular"])([1.0, 1.5])}
    assert "departs from it" in wc._isometry_row(off, 4).reason


# --- the answer at the top of the page


def _learned(f: float) -> dn.History:
    """A run whose fraction learned is ``f`` (plateau 3, floor 1, the last 10 losses read), or a diverged one (nan)."""
    if math.isnan(f):
        return dn.History(losses=[3.0] * 3, diverged_at=3, floor=1.0, unigram=3.0)
    return dn.History(losses=[3.0] * 10 + [3.0 - 2 * f] * 10, floor=1.0, unigram=3.0)


def _answer_runs(plain=(0.1, 0.2, 0.0), scaled=(0.9,) * 3, shallow=(0.8,) * 3, sgd_plain=(0.1,) * 3):
    """MLP runs at the cpu budget's depths (20, 100) and a Transformer sweep at (12, 48): (runs, sweep)."""
    runs = {}
    for n in (20, 100):
        for opt in ("adam", "sgd"):
            for kind in rs.STACK_KINDS:
                f = {"plain": plain, "1/sqrt(N)": scaled, "1/N": (0.9,) * 3, "1": (math.nan,) * 3}[kind]
                f = (
                    shallow
                    if (n, opt, kind) == (20, "adam", "plain")
                    else sgd_plain
                    if (opt, kind) == ("sgd", "plain")
                    else f
                )
                runs[(n, opt, kind)] = [_learned(x) for x in f]
    tf = {(n, k): [_learned(0.0 if k == "plain" else 0.9)] * 3 for n in (12, 48) for k in rs.STACK_KINDS}
    return runs, rt.TransformerSweep((12, 48), rs.STACK_KINDS, 3e-4, tf, {})


def _text(runs, sweep, part=wa.markdown) -> str:
    """The answer's text at the cpu budget's sizes, its no-break spaces (ε = 1/√N kept on one line) as spaces."""
    text = part(runs, sweep, "cpu")
    assert wa.SCALED_TEXT in text
    return text.replace("\u00a0", " ")
