"""Chapter "Increment explosion": derivations, experiments, figures, verdicts and slider controls."""

import dataclasses

import matplotlib
import pytest
import sympy as sp
import torch

import deepnotes as dn
from deepnotes.chapters.increment_explosion import answer, claims, derive, equations, figures
from deepnotes.chapters.increment_explosion import experiments as inc
from deepnotes.chapters.increment_explosion.budget import sizes as increment_explosion_sizes
from deepnotes.core import derive as sym
from deepnotes.core import scaling
from deepnotes.core.data import probe_batch
from deepnotes.core.measure import StepProbe, count_matrices, loglog_slope
from deepnotes.core.train import History
from deepnotes.shared import warmup
from deepnotes.show import verdicts as vd
from deepnotes.show.png import DPI
from deepnotes.show.readable import problems as figure_problems

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def budget():
    return dn.get_budget("smoke")


@pytest.fixture(scope="module")
def d():
    return derive.increment()


# derivations


def test_increment_derivation_returns_its_symbols_and_the_linear_growth(d):
    N, K, P, eta, g = (d["symbols"][k] for k in ("N", "K", "P", "eta", "g"))
    assert d["loss_change"]["sgd"]["delta_L"] == -eta * N * K * P * g**2
    assert d["loss_change"]["adam"]["delta_L"] == -eta * N * K * P * g
    assert d["exponent"] == {"sgd": 1, "adam": 1}
    assert d["cancelling_exponent"] == {"sgd": sp.Rational(-1, 2), "adam": -1}
    assert d["warmup_lr"] == {"sgd": eta / N, "adam": eta / N}
    # the exponent p really cancels the depth: ΔL(g₀N^p) has no N left
    for opt in ("sgd", "adam"):
        scaled = d["loss_change"][opt]["delta_L"].subs(
            g, sp.Symbol("g0", positive=True) * N ** d["cancelling_exponent"][opt]
        )
        assert not sp.simplify(scaled).has(N)
    ratios = {opt: sp.simplify(r["lambda"] / r["alpha"]) for opt, r in d["deepnorm"].items()}
    assert ratios["sgd"] == 1 / sp.sqrt(2 * N) and ratios["adam"] == 1 / (2 * N)
    assert d["deepnorm"]["lamb"]["alpha"] == 1


def test_deepnorm_ratio_agrees_with_scaling_from_1_to_1000(d):
    """SymPy's (α, λ) and DeepNet's β/α, lambdified, against the plain formulas of core.scaling."""
    N = d["symbols"]["N"]
    enc = derive.deepnet_encoder()
    assert enc["ratio"] == 1 / (2 * sp.sqrt(N)) and enc["n_layers"] == derive.EXAMPLE_DEPTH
    ratio = sp.lambdify(N, enc["ratio"])
    su = {
        opt: sp.lambdify(N, (d["deepnorm"][opt]["alpha"], d["deepnorm"][opt]["lambda"]))
        for opt in ("sgd", "adam", "lamb")
    }
    for n in (1, 2, 7, 100, 1000):
        a, b = scaling.deepnorm_coefficients(n)
        assert b / a == pytest.approx(ratio(n), rel=1e-12)
        for opt, f in su.items():
            assert f(n) == pytest.approx(scaling.su_coefficients(n, opt), rel=1e-12)
    assert derive.depth_ratio(d["loss_change"]["sgd"]["delta_L"], 100, 10)["ratio"] == 10


def test_shown_equations_print_the_derived_expressions(d):
    lines = [repr(e) for e in equations.loss_change(d) + equations.cures(d) + equations.deepnorm(d)]
    assert lines[0] == "dL_SGD = -K*N*P*eta*g**2" and lines[5] == "p_Adam = -1"
    assert lines[-1] == "lamb: (alpha, lambda) = (1, sqrt(2)/(2*sqrt(N)))"
    assert "1/sqrt(4N) = 0.05000" in equations.deepnet_encoder_line(derive.deepnet_encoder())


def test_jacobian_counterexamples_break_the_annotated_bounds():
    jc = derive.jacobian_counterexamples()
    beta = jc["symbols"]["beta"]
    lb = jc["lower_bound"]
    assert lb["norm_J"] == beta and lb["norm_product"] == 0 != lb["claimed"]
    assert (lb["J"] * lb["J"]).is_zero_matrix
    assert min(jc["residual"]["eigenvalues"]) == sp.Rational(1, 2)


def test_derivation_verdicts_are_the_computed_ones(d):
    table = claims.derivation_verdicts(d)
    by_source = {}
    for v in table:
        by_source.setdefault(v.source, []).append(v.status)
    assert len(table) == 16
    assert by_source["seed 000 annotated eq. (5)"] == [vd.WRONG]  # 0.9^99 is not 2.65e-5
    assert by_source["seed 000 annotated eq. (12)"] == [vd.HOLDS]
    assert by_source["seed 000 annotated eq. (49), §8.2 claim §8.2.3"] == [vd.WRONG]
    # ‖J_i‖ = β > 1 does not bound ‖Π J_i‖ below (J = [[0, β], [0, 0]] is nilpotent)
    assert by_source["seed 000 annotated §1.2 eq. (4)"] == [vd.WRONG]
    # I + diag(−1/2, 1/2) has an eigenvalue 1/2 < 1
    assert by_source["seed 000 annotated §1.3 claim §1.3.1; seed 000 annotated §13 claim §13.3"] == [vd.WRONG]
    assert by_source["seed 000 annotated eq. (53)"] == [vd.APPROX]
    assert by_source["seed 000 annotated eq. (72)"] == [vd.WRONG]
    k_row = next(v for v in table if v.claim.startswith("K ≈ 6"))
    assert k_row.computed == str(count_matrices(dn.Block(dn.ModelConfig(n_layers=1)))) == "6"


# experiments


def test_loss_change_sweep_probes_each_depth_on_the_shared_probe_batch(budget):
    sweep = inc.loss_change_sweep(
        dn.RunContext.here(budget, device="cpu"), variants=("post", "deepnorm"), depths=(2, 4)
    )
    assert sweep.variants == ("post", "deepnorm") and sweep.optimizers == ("sgd", "adam")
    assert sweep.lrs == dict(increment_explosion_sizes(budget).probe_lrs)
    for (v, o), per_depth in sweep.probes.items():
        assert [len(reps) for reps in per_depth] == [increment_explosion_sizes(budget).probe_repeats] * 2
        for n, reps in zip(sweep.depths, per_depth, strict=True):
            assert len(reps[0].block_grad_norms) == n
            # a tiny step: the measured ΔL is the first-order term
            assert reps[0].delta_loss == pytest.approx(reps[0].first_order, rel=claims.FIRST_ORDER_RTOL)
    assert sweep.first_order_per_lr("post", "sgd") == pytest.approx(sweep.mean("post", "sgd", "grad_sq"), rel=1e-6)
    # the probe batch is the shared one: generator(100 + seed)
    task = inc.task_for(budget)
    manual = task.sample(budget.batch_size, budget.seq_len, torch.Generator().manual_seed(100))
    assert torch.equal(probe_batch(task, budget.batch_size, budget.seq_len, seed=0), manual)


def test_post_ln_early_update_grows_with_depth_and_dwarfs_deepnorms(budget):
    """DeepNet's early-update figure at smoke size: Post-LN's first-step model update grows with
    depth, and DeepNorm's is several times smaller at every depth. (Whether DeepNorm's stays *flat*
    is what the chapter measures; at these sizes it does not, see the chapter's verdicts.)"""
    depths = (2, 8, 32)
    lr = increment_explosion_sizes(budget).update_lr
    first = {
        v: [inc.run(v, n, dn.RunContext.here(budget), "adam", lr, steps=1).update_rms[0] for n in depths]
        for v in ("post", "deepnorm")
    }
    assert loglog_slope(depths, first["post"]) > 0.1
    assert all(d < p / 3 for d, p in zip(first["deepnorm"], first["post"], strict=True))


def test_bad_settings_raise(budget):
    with pytest.raises(ValueError, match="allowed: post, pre, deepnorm"):
        inc.variant_config("layernorm", 4, budget)
    with pytest.raises(ValueError, match="allowed: post, pre, deepnorm"):
        inc.variant_config("plain", 4, budget)
    with pytest.raises(ValueError, match="allowed: all, matrices"):
        inc.run("post", 2, dn.RunContext.here(budget), params="some")
    with pytest.raises(ValueError, match="allowed: adam, sgd, lamb"):
        inc.slider_run(2, "post", "rmsprop", budget=budget)


def test_deepnorm_adam_variant_uses_su_constants(budget):
    cfg = inc.variant_config("deepnorm/adam", 8, budget)
    assert (cfg.norm, cfg.alpha, cfg.beta) == ("deepnorm", *scaling.su_coefficients(8, "adam"))


# figures


def test_slider_figure_draws_the_run_it_titles(budget):
    fig = figures.slider_figure(2, "pre", "sgd", budget=budget)
    ax_loss, ax_upd = fig.axes
    lr = increment_explosion_sizes(budget).slider_lrs["sgd"]
    assert ax_loss.get_title() == f"N=2, pre, sgd η={lr:g}, warmup 0"
    res = inc.slider_run(2, "pre", "sgd", budget=budget)
    (curve,) = [line for line in ax_loss.lines if line.get_label() == "pre"]
    assert list(curve.get_ydata()) == res.history.losses
    assert len(res.history.losses) == increment_explosion_sizes(budget).slider_steps
    assert list(ax_upd.lines[0].get_ydata()) == res.history.update_rms


def test_loss_change_figure_plots_first_order_per_lr_and_block_norms(budget):
    sweep = inc.loss_change_sweep(dn.RunContext.here(budget, device="cpu"), variants=("post", "pre"), depths=(2, 4))
    fig = figures.loss_change_figure(sweep)
    assert len(fig.axes) == 3
    sgd_ax, adam_ax, blocks_ax = fig.axes
    assert sgd_ax.get_title() == f"SGD (lr {sweep.lrs['sgd']:g})"
    post = next(line for line in sgd_ax.lines if line.get_label().startswith("post: "))
    assert list(post.get_ydata()) == pytest.approx(sweep.first_order_per_lr("post", "sgd"))
    (key,) = fig.legends  # one key under the figure: each variant with its slope per panel
    entries = [t.get_text() for t in key.get_texts()]
    slopes = [loglog_slope(sweep.depths, sweep.first_order_per_lr("post", opt)) for opt in ("sgd", "adam")]
    assert f"post: {slopes[0]:.2f} / {slopes[1]:.2f}" in entries
    predicted = [inc.predicted_slope("post", opt) for opt in ("sgd", "adam")]
    assert f"derivation: {predicted[0]:g} / {predicted[1]:g}" in entries
    assert key.get_title().get_text() == "fitted log-log slopes: SGD / ADAM"
    pre = blocks_ax.lines[list(sweep.variants).index("pre")]
    assert list(pre.get_ydata()) == list(sweep.deepest_block_grad_norms("pre"))
    assert blocks_ax.get_title() == "N = 4"


def test_early_update_and_training_figures_and_tables(budget):
    updates = inc.early_updates(dn.RunContext.here(budget))
    assert set(updates) == set(inc.PARAM_SETS)
    fig = figures.early_update_figure(updates, budget)
    depths = increment_explosion_sizes(budget).update_depths
    first = inc.first_step_updates(updates["matrices"], depths)
    assert list(first) == list(inc.EARLY_UPDATE_VARIANTS)
    post = next(line for line in fig.axes[2].lines if line.get_label().startswith("post"))
    assert list(post.get_ydata()) == pytest.approx(first["post"])
    assert len(fig.axes[0].lines) == len(inc.EARLY_UPDATE_VARIANTS) * len(depths)
    table = claims.early_update_table(updates, budget)
    assert len(table) == 2 * (1 + 2 * (len(inc.EARLY_UPDATE_VARIANTS) - 1))
    # the tiny-model update figure is DeepNet's Fig. 5 (its Fig. 3 is 18L-18L's gradients and loss)
    assert all("DeepNet Fig. 5" in v.source and "Fig. 3" not in v.source for v in table)

    # DeepNet Fig. 5 at the paper's own size, 64-128-2
    cfg = inc.variant_config("deepnorm", 6, budget, increment_explosion_sizes(budget).paper_shape)
    assert (cfg.d_model, cfg.d_ff, cfg.n_heads) == (64, 128, 2) and cfg.n_layers == 6
    paper = inc.paper_size_updates(dn.RunContext.here(budget))
    assert set(paper) == set(updates["all"]) and all(len(h.update_rms) for hs in paper.values() for h in hs)
    assert paper[("post", depths[0])][0].update_rms != updates["all"][("post", depths[0])][0].update_rms
    seeds = increment_explosion_sizes(budget).update_seeds
    assert all(len(hs) == seeds for hs in paper.values())  # issue 44: every seed, each its own initialization
    first = paper[("post", depths[0])]
    assert first[0].update_rms[0] != first[1].update_rms[0]
    fig = figures.paper_size_figure(paper, budget)
    assert fig.axes[0].get_title().startswith("64-128-2")
    assert all("64-128-2 (DeepNet's size)" in v.source for v in claims.paper_size_verdicts(paper, budget))

    runs = inc.training_comparisons(dn.RunContext.here(budget))
    assert list(runs) == list(increment_explosion_sizes(budget).train_depths)
    fig = figures.training_figure(runs, budget)
    assert fig.axes[0].get_title().endswith("peak lr 3e-3")
    n = increment_explosion_sizes(budget).train_depths[0]
    labels = {line.get_label() for line in fig.axes[0].lines}
    assert all(any(lab.startswith(name) for lab in labels) for name in runs[n])  # "pre (3 seeds)"
    assert all(len(hs) == budget.warmup.seeds for r in runs.values() for hs in r.values())
    assert len(claims.training_table(runs, budget)) == 4 * len(runs)
    grads = claims.gradient_table(runs, budget)  # the annotated §10.2 on the same runs' gradients
    assert [v.source.split(" §10.2 ")[1] for v in grads[:2]] == ["claim §10.2.2", "eq. (61)"]
    h = runs[n][warmup.warmed(budget)][0]
    assert warmup.gradient_norm(h)[0] == pytest.approx(sum(g * g for g in h.grad_norms[0]) ** 0.5)


# verdicts on synthetic measurements: the thresholds decide


def _sweep(
    slope: float, overshoot: float = 1.0, upper: float | None = None, seeds: int = 3, spread: float = 0.0
) -> inc.LossChangeSweep:
    """A sweep whose −⟨∇L, Δθ⟩ grows like N^slope (N^upper from N = 8 on), seed k scaled by 1 + k/10 and its
    exponent moved by (k − 1)·spread."""
    depths = (2, 4, 8, 16)

    def probe(n, k):
        power = slope + (k - 1) * spread
        fo = -(n**power if upper is None or n <= 4 else 4**power * (n / 4) ** upper) * (1 + k / 10)
        return StepProbe(
            loss_before=1.0,
            delta_loss=fo * overshoot,
            first_order=fo,
            grad_sq=0.0,
            grad_l1=0.0,
            update_norm=0.0,
            block_grad_norms=(1.0,) * n,
        )

    reps = {("post", "sgd"): [[probe(n, k) for k in range(seeds)] for n in depths]}
    return inc.LossChangeSweep(depths, {"sgd": 1e-4}, reps)


def test_loss_change_verdicts_follow_the_slope_and_first_order_thresholds():
    ok = claims.loss_change_verdicts(_sweep(1.0 + claims.SLOPE_ATOL / 2))
    assert [v.status for v in ok] == [vd.HOLDS, vd.HOLDS]
    assert "N = 2..4: 1.1 (1.1–1.1, holds)" in ok[0].computed and "N = 8..16" in ok[0].computed
    bad = claims.loss_change_verdicts(_sweep(1.0 + 2 * claims.SLOPE_ATOL, overshoot=1 + 2 * claims.FIRST_ORDER_RTOL))
    assert [v.status for v in bad] == [vd.WRONG, vd.UNCHECKABLE]  # issue 30: the step is the book's choice
    assert bad[1].computed == "off at N = [2, 4, 8, 16]" and "names no step size" in bad[1].reason
    bent = claims.loss_change_verdicts(_sweep(1.0, upper=2.0))[0]  # issue 44: the law changes with the range
    assert bent.status == vd.UNCHECKABLE and "the ranges disagree" in bent.reason
    noisy = claims.loss_change_verdicts(_sweep(1.0, spread=1.0))[0]  # seeds with slopes 0, 1, 2
    assert noisy.status == vd.UNCHECKABLE and "cannot decide" in noisy.reason
    few = claims.loss_change_verdicts(_sweep(1.0, seeds=2))[0]
    assert few.status == vd.UNCHECKABLE and "2 seeds at this budget" in few.reason


def _history(final: float) -> History:
    return History(losses=[2.0] * 5 + [final] * 10, floor=1.0, unigram=2.0)


def test_training_verdicts_follow_the_seeds_median_in_the_sources_direction(budget):
    """Issue 30: the warmup verdicts are the shared comparison's, on ≥ 3 seeds' median; "does not
    train" holds when the runs do not train, and one lucky seed does not carry a median."""
    warm = warmup.warmed(budget)
    runs = {
        "post, no warmup": [_history(1.9)] * 3,
        warm: [_history(1.1)] * 3,
        "pre": [_history(1.8)] * 3,
        "deepnorm": [_history(1.2)] * 3,
    }
    table = claims.training_table({4: runs}, budget)
    assert [v.status for v in table] == [vd.HOLDS, vd.HOLDS, vd.WRONG, vd.HOLDS]
    assert all(v.outcome.seeds == 3 and v.outcome.setting == warmup.setting(budget, 4) for v in table)
    runs[warm] = [_history(1.1), _history(1.95), _history(1.95)]
    assert claims.training_table({4: runs}, budget)[1].status == vd.WRONG
    with pytest.raises(ValueError, match="at least 3 seeds"):
        claims.training_table({4: {**runs, "pre": [_history(1.1)]}}, budget)


# controls


def test_live_panel_reruns_the_chapter_experiment_in_a_real_kernel():
    """In a Jupyter kernel (as in Jupyter, Colab, Binder), 'Run live' trains at an off-grid
    setting, shows the figure, and serves a second click from the cache."""
    import nbformat
    from nbclient import NotebookClient

    source = """
import ipywidgets as W
import deepnotes as dn
from deepnotes.chapters.increment_explosion import experiments as inc, figures
from deepnotes.show.widgets import live_panel
budget = dn.get_budget("smoke")
controls = {"depth": W.IntSlider(value=3), "norm": W.Dropdown(options=inc.VARIANTS, value="rezero"),
            "optimizer": W.Dropdown(options=["adam", "sgd", "lamb"], value="lamb")}
trained = []
def counted(**settings):
    trained.append(settings)
    return figures.slider_figure(**settings)
panel = live_panel(counted, controls, fixed={"budget": budget})
button = [w for w in panel.children[1].children if isinstance(w, W.Button)][0]
button.click(); button.click()
image = panel.children[-1]
print(len(image.value) > 1000, image.layout.display is None, len(trained) == 1)
"""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
    NotebookClient(nb, timeout=300, kernel_name="python3").execute()
    out = "".join(o.get("text", "") for o in nb.cells[0].outputs if o.output_type == "stream")
    assert out.split()[-3:] == ["True", "True", "True"], out


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_predicted_slopes_equal_sympy_exponents(optimizer):
    quarter, half = sp.Rational(1, 4), sp.Rational(1, 2)
    paper = (8 * sym.N) ** -quarter / (2 * sym.N) ** quarter  # β/α of DeepNet's encoder
    su_adam = (2 * sym.N) ** -half / (2 * sym.N) ** half  # λ/α of Su's Adam constants
    assert inc.predicted_slope("deepnorm", optimizer) == float(sym.loss_change_exponent(optimizer, paper))
    assert inc.predicted_slope("deepnorm/adam", optimizer) == float(sym.loss_change_exponent(optimizer, su_adam))
    assert inc.predicted_slope("post", optimizer) == 1.0


def test_gradient_verdicts_follow_the_recorded_gradients(budget):
    """The annotated §10.2 on made-up runs: gradients that fall hold 'larger early'; a gradient that
    falls as 1/t through a linear warmup keeps η(t)·‖∇L‖ constant, a level one does not."""
    budget = dataclasses.replace(budget, warmup=dataclasses.replace(budget.warmup, steps=30, warmup=10))
    w, steps = budget.warmup.warmup, budget.warmup.steps
    lrs = [min(1.0, (t + 1) / w) for t in range(steps)]  # a linear warmup to 1: η rises ×5 inside

    def hist(grad):
        return History(
            losses=[1.0] * steps,
            floor=0.5,
            unigram=2.0,
            lrs=lrs,
            grad_steps=list(range(steps)),
            grad_norms=[[grad(t)] for t in range(steps)],
        )

    falling = {label: [hist(lambda t: 1 / (t + 1))] * 3 for label in warmup.variants(budget)}
    assert [v.status for v in warmup.gradient_verdicts(falling, budget, 4)] == [vd.HOLDS, vd.HOLDS]
    level = {label: [hist(lambda t: 1.0)] * 3 for label in warmup.variants(budget)}
    assert [v.status for v in warmup.gradient_verdicts(level, budget, 4)] == [vd.WRONG, vd.WRONG]


def test_deepnets_fig5_rows_read_every_seed_and_flip_with_them():
    """Issues 44, 61: made-up first-step updates over three seeds: Post-LN growing like √N and DeepNorm flat and
    smaller are reproduced; the reverse is not reproduced; two seeds cannot decide. The figure's curves are particular
    to DeepNet's setting, which these runs do not share, so no row is judged wrong or right: each says whether the
    runs reproduce the figure and names the differences."""
    from deepnotes.core.train import History

    depths = (6, 12, 24, 50, 100)
    smoke = dn.get_budget("smoke")
    budget = smoke.with_sizes(dataclasses.replace(increment_explosion_sizes(smoke), update_depths=depths))

    def sweep(post_power, other_power, seeds=3):
        out = {}
        for v, power, scale in (("post", post_power, 1.0), ("deepnorm", other_power, 0.1)):
            for n in depths:
                out[(v, n)] = [History(update_rms=[scale * n**power * (1 + 0.01 * k)]) for k in range(seeds)]
        return out

    good = claims.early_update_verdicts(sweep(0.5, 0.0), budget)
    assert {v.status for v in good} == {vd.UNCHECKABLE} and all(v.reason.startswith("reproduced here (") for v in good)
    bad = claims.early_update_verdicts(sweep(0.0, 0.6), budget)  # flat Post-LN; DeepNorm grows, passes it at N = 100
    assert {v.status for v in bad} == {vd.UNCHECKABLE}
    assert all(v.reason.startswith("not reproduced here (these runs: wrong)") for v in bad)
    assert all("encoder-decoder" in v.reason and "without warmup" in v.reason for v in bad)
    few = claims.early_update_verdicts(sweep(0.5, 0.0, seeds=2), budget)
    assert {v.status for v in few} == {vd.UNCHECKABLE}
    assert all(v.reason.startswith("neither reproduced nor refuted here") for v in few)


# the answer the page opens with


def _sloped_sweep(slopes: dict[tuple[str, str], float], depths=(2, 4, 8)) -> inc.LossChangeSweep:
    """A sweep whose −⟨∇L, Δθ⟩/η is exactly N^slope for each (variant, optimizer) of ``slopes``, three seeds."""
    lrs = {"sgd": 1e-4, "adam": 1e-6}

    def probe(n, lr, power):
        fo = -lr * n**power
        return StepProbe(loss_before=1.0, delta_loss=fo, first_order=fo, grad_sq=0.0, grad_l1=0.0, update_norm=0.0)

    reps = {(v, o): [[probe(n, lrs[o], s)] * 3 for n in depths] for (v, o), s in slopes.items()}
    return inc.LossChangeSweep(depths, lrs, reps)


def test_the_answer_figure_draws_the_sweep_under_both_optimizers(budget):
    sweep = inc.loss_change_sweep(
        dn.RunContext.here(budget, device="cpu"), variants=("post", "deepnorm"), depths=(2, 4)
    )
    fig = figures.answer(sweep)
    assert [ax.get_title() for ax in fig.axes] == [f"{o.upper()} (lr {sweep.lrs[o]:g})" for o in sweep.optimizers]
    post = next(line for line in fig.axes[1].lines if line.get_label().startswith("post: "))
    assert list(post.get_ydata()) == pytest.approx(sweep.first_order_per_lr("post", "adam"))
    entries = [t.get_text() for t in fig.legends[0].get_texts()]
    assert f"post: {answer.slope(sweep, 'post', 'sgd'):.2f} / {answer.slope(sweep, 'post', 'adam'):.2f}" in entries
    assert figure_problems(fig, DPI) == []
    matplotlib.pyplot.close(fig)
