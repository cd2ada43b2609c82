"""Verdicts of the chapter "Increment explosion": each claim of the sources set against what the
derivation (:mod:`.derive`) or the measurements (:mod:`.experiments`) computed; every status is
decided by a comparison with one of the thresholds named below."""

from __future__ import annotations

import math

import sympy as sp
import torch

from deepnotes.chapters.increment_explosion import derive
from deepnotes.chapters.increment_explosion import experiments as ex
from deepnotes.chapters.increment_explosion.budget import sizes
from deepnotes.chapters.increment_explosion.derive import EXAMPLE_DEPTH, depth_ratio, jacobian_counterexamples
from deepnotes.core import scaling
from deepnotes.core.config import Budget, ModelConfig
from deepnotes.core.measure import count_matrices, loglog_slope
from deepnotes.core.models import Block
from deepnotes.core.train import History
from deepnotes.cost.model import Derivations
from deepnotes.shared import warmup
from deepnotes.show import verdicts as vd
from deepnotes.show.cite import cite
from deepnotes.show.say import Statement, joined, link, sentence

# thresholds
PRINTED_VALUE_RTOL = 0.05  # a number printed in the source "holds approximately" within 5 %
SLOPE_ATOL = 0.2  # a measured log-log slope matches the derivation's within ±0.2
FIRST_ORDER_RTOL = 0.2  # the measured ΔL equals ⟨∇L, Δθ⟩ within 20 %
UPDATE_FIGURE = "DeepNet Fig. 5"  # the model update of 64-128-2 models from 6L-6L to 100L-100L (Fig. 3 is 18L-18L's
# gradient norms and validation loss)
# what separates these runs from the ones DeepNet Fig. 5 plots: its curves are particular to that setting
FIGURE_DIFFERENCES = (
    "the figure follows the first steps of warmed-up encoder-decoder translation runs (Adam with warmup); here the "
    "update is that of Adam's first step without warmup, in a decoder-only stack on a Markov language"
)
GROWTH_MIN_SLOPE = 0.1  # "grows with depth": log-log slope of the first-step update above this
FLAT_MAX_SLOPE = 0.15  # "stays nearly flat": |slope| below this

# the sources' worked examples (their numbers, not budget values)
SHALLOW_DEPTH = 10  # eq. (12): ΔL at N = EXAMPLE_DEPTH against N = 10
EXAMPLE_BETA = 2  # eq. (4) tested at one β > 1: ‖J·J‖ against β²
VANISHING_FACTOR, VANISHING_LAYERS = 0.9, 99  # eq. (5): 0.9^99
WARMUP_PEAK_LR, WARMUP_STEPS, WARMUP_FIRST_LR = 1e-4, 1000, 1e-7  # eq. (62) and §10.3
DEEPNORM_LAYER_FACTOR, DEEPNORM_LAYERS = 1.045, 1000  # eq. (72)


def _main_text_rows(d: dict) -> list[vd.Verdict]:
    """The main text's increment explosion (seeds 000, 001, 004): ΔL = O(ηNK), warmup, 1/√N and Adam's 1/N."""
    N, eta = (d["symbols"][k] for k in ("N", "eta"))
    adam = d["deepnorm"]["adam"]
    return [
        vd.check_expr(
            "SGD: ΔL = O(ηNK), i.e. linear in depth N",
            cite(  # the depth law in each source; claims 5, 8 and eq. (9) (ΔL ≈ −η‖∇L‖²) are its premise
                "seed 000 §增量爆炸 claims 5, 6; seed 004 §增量爆炸 claims 5, 6; seed 001 §1）增量爆炸 claims 8, 9; "
                "seed 001 side note 2; seed 000 annotated eq. (9)",
                tests=("000 claim 6", "004 claim 6", "001 claim 9", "side note 2"),
            ),
            N,
            N ** d["exponent"]["sgd"],
        ),
        vd.check_expr(
            "Warmup: the early learning rate must not exceed order η/N",
            cite("seed 000 §增量爆炸 claim 8; seed 001 §1）增量爆炸 claim 11", tests=("000 claim 8", "001 claim 11")),
            eta / N,
            d["warmup_lr"]["sgd"],
        ),
        vd.check_expr(
            "Gradients of order 1/√N cancel the depth (SGD)",
            cite(
                "seed 000 §增量爆炸 claim 9; seed 001 §1）增量爆炸 claim 12; seed 004 §治标之法 claim 10",
                tests=("000 claim 9", "001 claim 12", "004 claim 10"),
            ),
            sp.Rational(-1, 2),
            d["cancelling_exponent"]["sgd"],
        ),
        vd.check_expr(
            "Adam: ΔL ∝ ‖g‖₁, so gradients must shrink like 1/N (λ/α = 1/(2N))",
            cite(  # claim 26 (Adam's ΔL ≈ −η‖∇L‖₁) is the premise
                "seed 000 §多种优化 claim 23; seed 001 §6）多种优化器 claims 26, 27",
                tests=("000 claim 23", "001 claim 27"),
            ),
            1 / (2 * N),
            adam["lambda"] / adam["alpha"],
        ),
    ]


def _jacobian_rows() -> list[vd.Verdict]:
    """Annotated §1.2–§1.3, eqs. (4), (5): vanishing and exploding Jacobian products, the residual's I."""
    vanishing = VANISHING_FACTOR**VANISHING_LAYERS
    jc = jacobian_counterexamples()
    lb, res = jc["lower_bound"], jc["residual"]
    return [
        vd.check_number(
            "0.9^99 ≈ 2.65e-5 (vanishing gradient example)",
            cite("seed 000 annotated eq. (5)", tests="eq. (5)"),
            2.65e-5,
            vanishing,
            approx_rtol=PRINTED_VALUE_RTOL,
            reason=f"0.9^99 = {vanishing:.3e}; the printed value is 0.9^100 = "
            f"{VANISHING_FACTOR ** (VANISHING_LAYERS + 1):.3e}",
        ),
        vd.check_number(
            "… so the gradient decays by about 10^5",
            cite("seed 000 annotated §1.2 claim §1.2.1", tests="claim §1.2.1"),
            1e5,
            1 / vanishing,
            approx_rtol=PRINTED_VALUE_RTOL,
            reason=f"1/0.9^99 = {1 / vanishing:.3g}: about 3×10^4, half an order of magnitude less",
        ),
        vd.check_true(
            claim="‖J_i‖ = β > 1 for every layer ⇒ ‖Π J_i‖ ≥ β^{N−l} (gradient explosion)",
            source=cite("seed 000 annotated §1.2 eq. (4)", tests="eq. (4)"),
            claimed="‖J·J‖ ≥ β²",
            computed=f"J = [[0, β], [0, 0]]: ‖J‖ = {sp.sstr(lb['norm_J'])}, ‖J·J‖ = {sp.sstr(lb['norm_product'])}",
            ok=bool(
                lb["norm_product"].subs(jc["symbols"]["beta"], EXAMPLE_BETA)
                >= lb["claimed"].subs(jc["symbols"]["beta"], EXAMPLE_BETA)
            ),
            reason="norms bound a product from above only (eq. (2)); large factors can still multiply to 0",
        ),
        vd.check_true(
            claim="The residual's I makes every eigenvalue of J_l at least 1",
            source=cite(  # one counterexample refutes the claim and the summary's J_l ⪰ I alike
                "seed 000 annotated §1.3 claim §1.3.1; seed 000 annotated §13 claim §13.3",
                tests=("claim §1.3.1", "claim §13.3"),
            ),
            claimed="eigenvalues of I + A ≥ 1",
            computed=f"A = diag(−1/2, 1/2): eigenvalues of I + A {', '.join(map(sp.sstr, res['eigenvalues']))}",
            ok=min(res["eigenvalues"]) >= 1,
            reason="I + A shifts each eigenvalue of A by 1: a branch Jacobian with a negative eigenvalue "
            "gives one below 1",
        ),
    ]


def _loss_change_rows(d: dict) -> list[vd.Verdict]:
    """Annotated §2.1, eqs. (10)–(12), (49), (53): K, ΔL = O(ηN) for SGD and Adam's λ/α."""
    N, eta, K, g, P = (d["symbols"][k] for k in ("N", "eta", "K", "g", "P"))
    dl_sgd = d["loss_change"]["sgd"]["delta_L"]
    ratio_deep_shallow = depth_ratio(dl_sgd, EXAMPLE_DEPTH, SHALLOW_DEPTH)["ratio"]
    k_ours = count_matrices(Block(ModelConfig(n_layers=1)))
    k_torch = count_matrices(
        torch.nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16)
    )  # an independent count
    return [
        vd.check_number(
            "K ≈ 6 matrices per Transformer layer (q, k, v, o, two FFN)",
            cite("seed 000 annotated §2.1 claim §2.1.1", tests="claim §2.1.1"),
            6,
            k_torch,
            reason=f"counted in PyTorch's nn.TransformerEncoderLayer (its packed in_proj holds "
            f"q, k, v): {k_torch}; deepnotes' Block: {k_ours}",
        ),
        vd.check_expr(
            "‖∇L‖² = NKg², so ΔL ≈ −ηNKg² = O(ηN)",
            cite("seed 000 annotated eqs. (10)-(11)", tests=("eq. (10)", "eq. (11)")),
            -eta * N * K * g**2 * P,
            dl_sgd,
            reason="holds with g the per-entry size and P entries per matrix (the annotation folds P into g)",
        ),
        vd.check_number(
            "ΔL at N=100 is 10× ΔL at N=10 (same lr)",
            cite("seed 000 annotated eq. (12)", tests="eq. (12)"),
            10,
            float(ratio_deep_shallow),
            reason="follows from ΔL ∝ N; the experiment below measures it",
        ),
        vd.check_scaling(
            "Adam: ΔL = O(η√(NK)·λ/α), hence λ/α = 1/√N",
            cite(  # the √(NK) of eq. (49) and the 1/√N drawn from it fall together
                "seed 000 annotated eq. (49), §8.2 claim §8.2.3", tests=("eq. (49)", "claim §8.2.3")
            ),
            1 / sp.sqrt(N),
            1 / (2 * N),
            N,
            reason="‖g‖₁ sums NK terms of size λ/α: it is O(NK·λ/α), not √(NK); λ/α must be 1/(2N)",
        ),
        vd.check_scaling(
            "Adam: α = N^{1/2}, λ = N^{-1/2} (so λ/α = 1/N)",
            cite("seed 000 annotated eq. (53)", tests="eq. (53)"),
            1 / N,
            1 / (2 * N),
            N,
            reason="right power of N, but counts N sublayers instead of 2N; contradicts its own eq. (49)",
        ),
    ]


def _warmup_rows() -> list[vd.Verdict]:
    """Annotated eqs. (62), (72) and §10.3: the warmup example and DeepNorm's compounded gradient ratio."""
    compounded = DEEPNORM_LAYER_FACTOR**DEEPNORM_LAYERS
    bound = scaling.warmup_start_lr(WARMUP_PEAK_LR, EXAMPLE_DEPTH)
    return [
        vd.check_number(
            "Warmup example: at t=1 of 1000 warmup steps to 1e-4 the step is 1e-7, 1000× smaller",
            cite("seed 000 annotated eq. (62)", tests="eq. (62)"),
            WARMUP_FIRST_LR,
            WARMUP_PEAK_LR * scaling.linear_warmup_factor(0, WARMUP_STEPS),
            reason="true at the first step only; at step t the factor is t/1000",
        ),
        vd.check_number(
            "G(1)/G(1000) = (1.045)^1000 ≈ 2.1 for a 1000-layer DeepNorm stack",
            cite("seed 000 annotated eq. (72)", tests="eq. (72)"),
            2.1,
            compounded,
            approx_rtol=PRINTED_VALUE_RTOL,
            reason=f"1.045^1000 = {compounded:.3g}, {math.log10(compounded / 2.1):.0f} orders of magnitude above 2.1",
        ),
        vd.check_true(
            claim="That warmup respects the η/N bound for N=100",
            source=cite(  # §10.3.2 is the example's schedule; §10.3.3 says its early updates are small enough
                "seed 000 annotated §10.3 claims §10.3.2, §10.3.3", tests="claim §10.3.3"
            ),
            claimed="1e-7 ≤ η/N",
            computed=f"η/N = {bound:.0e}",
            ok=WARMUP_FIRST_LR <= bound,
            reason="the start of the warmup is 10× below η/N",
        ),
    ]


def derivation_verdicts(d: dict) -> vd.VerdictTable:
    """The increment-explosion sections and the annotated derivations of seed 000 against the
    SymPy results ``d`` of :func:`.derive.increment`."""
    return vd.VerdictTable(_main_text_rows(d) + _jacobian_rows() + _loss_change_rows(d) + _warmup_rows())


# the derivation each variant's predicted slope comes from (SGD: ΔL ∝ ‖g‖², Adam: ΔL ∝ ‖g‖₁)
SLOPE_SOURCE = {  # (variant, optimizer) → (the items the row cites, those the slope decides): claim 6 is SGD's
    # ΔL = O(ηNK), claim 23 Adam's ΔL ≈ −η‖∇L‖₁ (both ∝ N with O(1) gradients per matrix), claim 27 carries them
    # to Pre-LN; eq. (14) (SGD's constants) cancels the depth under SGD only: under Adam it leaves √N, claim 23's
    # case; eq. (15) (Adam's constants) cancels it under Adam and over-cancels under SGD (‖g‖² against ‖g‖₁)
    ("post", "sgd"): ("seed 000 §增量爆炸 claim 6; seed 000 §多种优化 claim 23", "claim 6"),
    ("post", "adam"): ("seed 000 §多种优化 claim 23; seed 000 §增量爆炸 claim 6", "claim 23"),
    # claim 27 (the analysis carries over to Pre-LN: α = 1, λ recomputed) is tested by "pre/λ"; standard Pre-LN
    # (λ = 1) is the contrast shown in its row (no source states a law for it: SOURCE-less variants get no slope row)
    ("pre/λ", "sgd"): ("seed 000 §事后分析 claims 27, 27.1; seed 000 §增量爆炸 claim 6", ("claim 27", "claim 27.1")),
    ("pre/λ", "adam"): ("seed 000 §事后分析 claims 27, 27.1; seed 000 §多种优化 claim 23", "claim 23"),
    ("deepnorm", "sgd"): ("seed 000 §初步结论 eq. (14); seed 000 §多种优化 claim 23", "eq. (14)"),
    ("deepnorm", "adam"): ("seed 000 §初步结论 eq. (14); seed 000 §多种优化 claim 23", "claim 23"),
    ("deepnorm/adam", "sgd"): ("seed 000 §多种优化 eq. (15), claim 23", "claim 23"),
    ("deepnorm/adam", "adam"): ("seed 000 §多种优化 eq. (15), claim 23", ("eq. (15)", "claim 23")),
}


def loss_change_verdicts(sweep: ex.LossChangeSweep) -> vd.VerdictTable:
    """Per variant and optimizer: the log-log slope of the first-order −⟨∇L, Δθ⟩ against N (the
    derivation says 1; 10^slope is the annotated eq. (12) ratio ΔL(100)/ΔL(10)), per seed over two depth
    ranges (:func:`~deepnotes.show.verdicts.check_slope`), and the depths at which the measured ΔL departs
    from the first-order term by more than FIRST_ORDER_RTOL."""
    rows = []
    for variant, opt in sweep.probes:
        fo = [-d for d in sweep.mean(variant, opt, "first_order")]
        dl = [-d for d in sweep.mean(variant, opt, "delta_loss")]
        if (variant, opt) in SLOPE_SOURCE:
            rows.append(_slope_row(sweep, variant, opt))
        rows.append(_first_order_row(sweep, variant, opt, dl, fo))
    return vd.VerdictTable(rows)


def _slope_row(sweep: ex.LossChangeSweep, variant: str, opt: str) -> vd.Verdict:
    """The derivation's law −ΔL ∝ N^slope for one variant and optimizer (check_slope over the seeds, two depth
    ranges); Pre-LN with λ recomputed shows standard Pre-LN's fitted slope beside it, the contrast."""
    want = ex.predicted_slope(variant, opt)
    text, tests = SLOPE_SOURCE[(variant, opt)]
    contrast = ""
    if variant == "pre/λ" and ("pre", opt) in sweep.probes:
        standard = loglog_slope(sweep.depths, sweep.first_order_per_lr("pre", opt))
        contrast = f"; standard Pre-LN (λ = 1) beside it: fitted slope {standard:.2f}"
    return vd.check_slope(
        claim=f"{variant}, {opt}: −ΔL ∝ N^{want:g} (the derivation's slope)",
        source=cite(f"{text}; measured, N = {sweep.depths[0]}..{sweep.depths[-1]}", tests=tests),
        want=want,
        atol=SLOPE_ATOL,
        depths=sweep.depths,
        samples_by_depth=[[-p.first_order for p in reps] for reps in sweep.probes[(variant, opt)]],
        reason=f"−⟨∇L, Δθ⟩ of one step; ΔL(100)/ΔL(10) ≈ 10^slope (derivation: {10**want:.3g}){contrast}",
    )


def _first_order_row(sweep: ex.LossChangeSweep, variant: str, opt: str, dl: list, fo: list) -> vd.Verdict:
    """eq. (1) measured: the loss change of one step equals its first-order term ⟨∇L, Δθ⟩ at every depth,
    seed by seed; not checkable where the mean over seeds overshoots at some depth (the step is the book's)."""
    off = [n for n, a, b in zip(sweep.depths, dl, fo, strict=True) if abs(a - b) > FIRST_ORDER_RTOL * abs(b)]
    claim = f"{variant}, {opt}: the measured ΔL equals ⟨∇L, Δθ⟩ at lr {sweep.lrs[opt]:g}"
    source = cite(  # the first-order expansion as each source states it (annotated eq. (8) restates main eq. (1))
        "seed 000 §增量爆炸 eq. (1); seed 000 annotated eq. (8); seed 001 §1）增量爆炸 eq. (1); "
        "seed 004 §增量爆炸 eq. (1); measured",
        tests=("000 main eq. (1)", "eq. (8)", "001 eq. (1)", "004 eq. (1)"),
    )
    claimed = f"within {FIRST_ORDER_RTOL:.0%} at every depth"
    if off:  # a first-order expansion holds for a small enough step; the source names no step size
        return vd.Verdict(
            claim,
            source,
            claimed,
            f"off at N = {off}",
            vd.UNCHECKABLE,
            "not checkable: the source names no step size, and the first order holds only "
            "for a small enough one; at this probe's step the loss is curved enough there to "
            "overshoot (the book's choice of step, not the source's claim)",
        )
    reps = sweep.probes[(variant, opt)]
    return vd.check_each_seed(
        claim=claim,
        source=source,
        claimed=claimed,
        computed="the mean over seeds at every depth",
        shows=[
            all(abs(r[k].delta_loss - r[k].first_order) <= FIRST_ORDER_RTOL * abs(r[k].first_order) for r in reps)
            for k in range(min(len(r) for r in reps))
        ],
        reason="first order holds at this probe's step, seed by seed",
    )


def early_update_verdicts(
    updates: dict[tuple[str, int], list[History]], budget: Budget, params: str = "all", size: str | None = None
) -> vd.VerdictTable:
    """DeepNet Fig. 5 at toy scale: does Post-LN's first-step update grow with depth, and DeepNorm's
    stay flat? Each over the sweep's seeds: the growth laws by :func:`~deepnotes.show.verdicts.check_slope`
    (the slope of the mean over seeds in both depth halves), "smaller than Post-LN at every depth" by the
    fraction of seeds where it is. ``size`` names a model size other than the budget's (e.g. 64-128-2)."""
    which = {"all": "all parameters trained", "matrices": "block matrices trained only"}[params]
    which = which if size is None else f"{which}, {size}"
    depths = sizes(budget).update_depths
    samples = ex.first_step_samples(updates, depths)  # variant → per depth → per seed
    source = cite(f"{UPDATE_FIGURE}; measured N = {depths}, {which}", paper="DeepNet")
    rows = [
        vd.check_slope(
            claim="Post-LN's early model update grows with depth",
            source=source,
            want=GROWTH_MIN_SLOPE,
            atol=0.0,
            band=(GROWTH_MIN_SLOPE, vd.NO_BOUND),
            depths=depths,
            samples_by_depth=samples["post"],
            reason="log-log slope of the first-step update against N",
        )
    ]
    for v in samples:
        if v == "post":
            continue
        rows.append(
            vd.check_slope(
                claim=f"{v}: the early update stays nearly flat in depth",
                source=source,
                want=0.0,
                atol=FLAT_MAX_SLOPE,
                depths=depths,
                samples_by_depth=samples[v],
                reason="log-log slope of the first-step update against N",
            )
        )
        seeds = range(min(len(s) for s in samples[v]))
        ratios = [[u[k] / p[k] for u, p in zip(samples[v], samples["post"], strict=True)] for k in seeds]
        rows.append(
            vd.check_each_seed(
                claim=f"{v}: smaller early update than Post-LN at every depth",
                source=cite(f"{UPDATE_FIGURE}; measured, {which}", paper="DeepNet"),
                claimed="smaller at every depth",
                computed="ratio to Post-LN per seed: " + "; ".join(f"{min(r):.2g}..{max(r):.2g}" for r in ratios),
                shows=[max(r) < 1 for r in ratios],
                reason="DeepNorm's down-scaled branches move the output less; seed k of each variant is "
                "initialization k",
            )
        )
    return vd.VerdictTable([vd.in_another_setting(v, FIGURE_DIFFERENCES) for v in rows])


def early_update_table(updates: dict[str, dict[tuple[str, int], list[History]]], budget: Budget) -> vd.VerdictTable:
    """:func:`early_update_verdicts` for each parameter set of :func:`.experiments.early_updates`."""
    return vd.VerdictTable([v for which in ex.PARAM_SETS for v in early_update_verdicts(updates[which], budget, which)])


def training_table(runs: dict[int, dict[str, list]], budget: Budget) -> vd.VerdictTable:
    """The shared warmup comparison's verdicts (:func:`deepnotes.shared.warmup.verdicts`) at each depth
    of :func:`.experiments.training_comparisons`: at the comparison's own depth the rows Post-Norm vs
    Pre-Norm shows too."""
    return vd.VerdictTable([v for n, r in runs.items() for v in warmup.verdicts(r, budget, n)])


def gradient_table(runs: dict[int, dict[str, list]], budget: Budget) -> vd.VerdictTable:
    """The annotated §10.2's claims on gradients along a run (:func:`deepnotes.shared.warmup.gradient_verdicts`)
    at each depth of :func:`.experiments.training_comparisons`."""
    return vd.VerdictTable([v for n, r in runs.items() for v in warmup.gradient_verdicts(r, budget, n)])


def paper_size_verdicts(updates: dict[tuple[str, int], list[History]], budget: Budget) -> vd.VerdictTable:
    """:func:`early_update_verdicts` for the runs at DeepNet Fig. 5's own model size."""
    d_model, d_ff, heads = sizes(budget).paper_shape
    return early_update_verdicts(updates, budget, size=f"{d_model}-{d_ff}-{heads} (DeepNet's size)")


def paper_size_reading(updates: dict[tuple[str, int], list[History]], budget: Budget) -> Statement:
    """What the runs at DeepNet Fig. 5's size show, read from :func:`paper_size_verdicts`' rows and the runs (the median
    over seeds at each depth): per variant, the fitted log-log slope of the first-step update against depth and its
    range, each linked to its row, which says whether the figure's curve is reproduced here (the figure's setting
    differs: :data:`FIGURE_DIFFERENCES`); for the DeepNorms, how much smaller their update is than Post-LN's."""
    depths = sizes(budget).update_depths
    first = ex.first_step_updates(updates, depths)
    rows = {v.claim: v for v in paper_size_verdicts(updates, budget)}
    parts = []
    for v, ups in first.items():
        row = rows[
            "Post-LN's early model update grows with depth"
            if v == "post"
            else f"{v}: the early update stays nearly flat in depth"
        ]
        head = row.reason.split(" (these runs", 1)[0]  # "reproduced here" / "not reproduced here" / …
        times = (
            ""
            if v == "post"
            else f", {min(p / u for p, u in zip(first['post'], ups, strict=True)):.2g} to "
            f"{max(p / u for p, u in zip(first['post'], ups, strict=True)):.2g} times smaller than Post-LN's"
        )
        parts.append(
            sentence(
                f"`{v}`: slope {loglog_slope(depths, ups):.2f} ({ups[0]:.2g} at {depths[0]} blocks to {ups[-1]:.2g} at "
                f"{depths[-1]}{times}), DeepNet's curve ",
                link(row, head),
            )
        )
    lead = sentence(
        "In these runs (medians over seeds), the first-step update against depth: ", joined(parts, ";", sep="; "), "."
    )
    tail = sentence(
        "The Adam argument above predicts slope ½ for the paper's constants, which were derived for SGD, and 0 for "
        "Su's Adam constants; the rows say how the figure's setting differs from these runs."
    )
    return Statement([lead, tail])


def derivations(budget: Budget) -> Derivations:
    """The page's SymPy derivations and the verdict tables that run no experiment, as its cells call them
    (priced in the chapter's estimate: :mod:`deepnotes.chapters.catalog`; the same at every budget)."""
    return Derivations(
        (
            (derive.increment, ()),
            (derive.deepnet_encoder, ()),
        )
    )
