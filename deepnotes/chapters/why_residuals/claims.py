"""Verdicts of the chapter "Why residuals?" (Su Jianlin, kexue.fm/archives/8994, and its comment
thread): the derivations (SymPy, :mod:`.derive`) and the measurements (:mod:`.probes`,
:mod:`.experiments`). Every status is decided by :mod:`deepnotes.show.verdicts` from a computed
comparison; every threshold is a named constant below.
"""

from __future__ import annotations

import math
import statistics
from itertools import pairwise

import numpy as np
import sympy as sp

from deepnotes.chapters.why_residuals import derive as sr
from deepnotes.chapters.why_residuals.budget import sizes
from deepnotes.chapters.why_residuals.experiments import TransformerSweep
from deepnotes.chapters.why_residuals.probes import (
    EPS_NAMES,
    GradientSweep,
    GrowthSweep,
    label,
    predicted_log_growth,
)
from deepnotes.chapters.why_residuals.spectrum import PaperSpectra, log10_quartiles, zeros
from deepnotes.core.config import Budget
from deepnotes.core.derive import N, depth_cancelling_exponent
from deepnotes.core.train import FRACTION_READ, History
from deepnotes.core.validate import Finite
from deepnotes.cost.model import Derivations
from deepnotes.show import verdicts as vd
from deepnotes.show.cite import Cite, Source, cite
from deepnotes.show.say import Sentence, Statement, grouped, joined, link, say, sentence, tally

# --- the derivation
BELOW_E_CHECKED_UP_TO = 100_000  # (1 + 1/N)^N < e checked for N = 1..this
SHRINK_EXAMPLE = {"g": sp.Rational(1, 2), "N": 10}  # the gain and depth of the "shrinking is easy" example
SHRUNK_BELOW = 1  # ... whose gradient must fall below this (the every-layer-stable value)
SPEED_ALPHA = 2  # an α > 1 at which ε's relative Adam step must beat α's
LN_DIM = 3  # dimension of the LayerNorm scale-invariance check
# --- experiment 1
MN_RULE_FACTOR = 1.5  # per-layer backward moments within this factor of the m/n rule
MEAN_FIELD_FACTOR = 2  # ‖∇θL‖² within this factor of the mean-field prediction
# --- experiment 2
GROWTH_OVER_BOUND = 0.35  # eq. (10)'s order bound: the measured log growth may pass N log(1+ε²) by this fraction
VISIBLE_LOG_GROWTH = 0.1  # a predicted log growth above this is compared relatively ...
BOUNDED_LOG_GROWTH = 0.1  # ... below it, the measured one must stay within ± this
UNSTABLE_LOG10 = 10  # ε = 1 is unstable if ‖vJ‖² (or ‖x_N‖²) grows by more than 10^this
# "deep" as the article means it: "这里的深层可能是百层、千层甚至万层" (opening: a hundred, a thousand or ten thousand
# layers); comment 11's "very deep" (层数非常深) is at least that. One rule for every claim that deep stacks fail (a
# plain stack "is hard to train", ε = 1 "fails"): judged at N ≥ DEEP only, "not checkable here" below (issue 61)
DEEP = 100
COMMENT_11 = "seed 004 comment 11 (2022-06-30)"
ORTHO_COS_FACTOR = 1.5  # mean |cos(v, v∂f/∂x)| below this × 1/√width
NORM_RATIO_ATOL = 0.2  # ‖v∂f/∂x‖²/‖v‖² within this of 1
NO_BOUND = vd.NO_BOUND
FORWARD_ATOL, FORWARD_RTOL = 0.1, 0.05  # forward log growth against N log(1+ε²)
SINGULAR_SPREAD = 0.5  # "close to orthogonal": smallest singular value above this × the largest
NEAR_ZERO_SINGULAR = 0.01  # a singular value below this × the largest counts as ≈ 0 (reported)
RANDOM_COS_FACTOR = 3  # orthogonal W: mean |cos(x, xW)| below this × √(2/(π·width)) for "⟂"
PLAIN_DRIFT_LOG = 1  # a plain stack's log second-moment growth within ± this
# --- training
TOKEN_COS_ATOL = 0.1  # measured token cosine at init within this of the arc-cosine iteration
LEARNED_FRACTION = 0.5  # "trains": more than this fraction of the way from plateau to floor
POSITION_COS_MAX = 0.99  # positions kept apart: mean cosine at x_N below this
# ReZero's input-output Jacobian spectra (Bachlechner et al. 2020 and the authors' notebook)
NEAR_ONE_FACTOR = 2  # "close to one": 1/2 ≤ λ_io ≤ 2
MOST = 0.5  # "many / most" singular values: more than this fraction
ISOMETRY_ATOL = 1e-9  # ReZero with g = 0: every λ_io equals 1 within this
SPREAD_RATIO = 0.5  # "much closer to one": ReZero's ln λ spread below this × each LayerNorm stack's
PROXY = "the notebook's setting and the book's summary statistics (the paper's histograms are judged below): "
REZERO_PAPER = (
    "ReZero (Bachlechner et al. 2020, arXiv 2003.04887) §3, its histograms of log λ_io (vanilla "
    "Transformer at 4, 12 and 64 layers; ReZero at 64 during its first iterations)"
)
HALF_WAY = 0.5  # the summary reports the step at which a run is this fraction of the way down


def _stable_propagation_rows() -> list[vd.Verdict]:
    """§治标之法 and §稳定传播: ΔL = O(ηNK), the forward- and backward-stable inits, shrinking the gradients."""
    return _variance_rule_rows() + _stable_gradient_rows()


def _variance_rule_rows() -> list[vd.Verdict]:
    """§治标之法 claim 10 and §稳定传播 eq. (3), claims 13–17: ΔL = O(ηNK), the forward- and backward-stable inits."""
    pl = sr.plain_layer_moments()
    n_, m_ = sr.n_in, sr.n_out
    return [
        vd.check_expr(
            "With O(1) gradients ΔL = O(ηNK); to cancel N the gradients must be O(1/√N)",
            cite("seed 004 §治标之法 claim 10", tests="claim 10"),
            -sp.Rational(1, 2),
            depth_cancelling_exponent("sgd"),
        ),
        vd.check_expr(
            "Forward-stable init of y = xW: zero mean, variance 1/n",
            cite("seed 004 §稳定传播 claim 13; seed 000 annotated eq. (30)", tests=("claim 13", "eq. (30)")),
            1 / n_,
            pl["forward_var"],
        ),
        vd.check_expr(
            "With ReLU the variance becomes 2/n",
            cite("seed 004 §稳定传播 claim 14; seed 003 annotated eq. (16)", tests=("claim 14", "eq. (16)")),
            2 / n_,
            pl["he_forward_var"],
        ),
        vd.check_expr(
            "Backward-stable init: variance 1/m",
            cite("seed 004 §稳定传播 eq. (3), claim 15; seed 003 annotated eq. (8)", tests=("claim 15", "eq. (8)")),
            1 / m_,
            pl["backward_var"],
        ),
        vd.check_expr(
            "Xavier averages the two: 2/(n+m)",
            cite("seed 004 §稳定传播 claim 16; seed 000 annotated eq. (31)", tests=("claim 16", "eq. (31)")),
            2 / (n_ + m_),
            pl["xavier"],
        ),
        vd.check_expr(
            "With the forward-stable init the backward second moment is m/n times the original",
            cite("seed 004 §稳定传播 claim 17; seed 003 annotated eq. (7)", tests="claim 17"),
            m_ / n_,
            pl["backward_gain"],
        ),
    ]


def _stable_gradient_rows() -> list[vd.Verdict]:
    """§稳定传播 claims 11, 18, 19: forward stable fixes the backward pass; only shrinking the gradients is easy."""
    pg = sr.plain_stack_gradients()
    shrunk = pg["grad"].subs({sr.out_gain: 1, sr.gain: SHRINK_EXAMPLE["g"], N: SHRINK_EXAMPLE["N"]})
    return [
        vd.check_true(
            claim="Forward stable ⇒ backward fixed: no depth-dependent gradient scale is left",
            source=cite("seed 004 §稳定传播 claims 18, 19", tests=("claim 18", "claim 19")),
            claimed="gradients independent of N",
            computed=f"every layer stable: {sp.sstr(pg['grad_every_layer_stable'])}; "
            f"output only: {sp.sstr(pg['grad_output_stable'])}, "
            f"1/N needs g = {sp.sstr(pg['g_for_1/N'])}, hidden moments g^l",
            ok=not pg["grad_every_layer_stable"].has(N),
            reason=(
                "holds when every layer is stable; a stable output "
                "alone leaves g free but g = N blows up the hidden layers"
            ),
        ),
        vd.check_true(
            claim="Only shrinking the gradients is easy: lower the init variance",
            source=cite("seed 004 §稳定传播 claim 11; asked by 小刘lhy, 2022-03-19", tests="claim 11"),
            claimed="gradients shrink",
            computed=f"gradient {sp.sstr(pg['grad'].subs(sr.out_gain, 1))}, "
            f"hidden moments {sp.sstr(pg['hidden_moment'])}; "
            f"g = {SHRINK_EXAMPLE['g']}, N = {SHRINK_EXAMPLE['N']}: {sp.sstr(shrunk)}",
            ok=shrunk < SHRUNK_BELOW,
            reason="g < 1 shrinks every gradient by g^(N−1), and the forward pass with it",
        ),
    ]


def _main(section: str, ref: str) -> Cite:
    """One item of source 004's main text, ``ref`` in §``section``, as the verdict's citation and its subject."""
    return cite(f"seed 004 §{section} {ref}", tests=ref)


def _residual_rows() -> list[vd.Verdict]:
    """§残差初现 eqs. (6), (7) and §足够的小: the residual's Jacobian, ε = 1/√N, 1-D and high-D growth."""
    res, inc, lim, hd = sr.residual_layer(), sr.increment_with_eps(), sr.growth_limits(), sr.high_dim_layer()
    e_ = sr.eps
    below_e = all(n * math.log1p(1 / n) < 1 for n in range(1, BELOW_E_CHECKED_UP_TO + 1))  # (1+1/N)^N < e
    one_d_p = sr.one_d_eps_exponent()["p"]  # (1+eps)^N ~ e^{N eps}: N eps bounded
    x_ = res["symbols"]["x"]
    return [
        vd.check_expr(
            "Residual Jacobian: ∂y/∂x = I + ε ∂f/∂x",
            _main("残差初现", "eq. (6)"),
            1 + e_ * sp.Derivative(res["f"], x_),
            res["dy/dx"],
        ),
        vd.check_expr(
            "Parameter gradient: ∂L/∂θ = ε ∂L/∂y ∂f/∂θ", _main("残差初现", "eq. (7)"), e_, res["param_grad_scale"]
        ),
        vd.check_expr(
            "ε = 1/√N scales the gradients by 1/√N and removes N from ΔL",
            _main("残差初现", "claim 23"),
            sp.Integer(0),
            inc["exponent"].subs(inc["symbols"]["p"], sp.Rational(1, 2)),
        ),
        vd.check_expr("(1 + 1/N)^N tends to e", _main("足够的小", "eq. (8)"), sp.E, lim["1/N"]["one_d_limit"]),
        vd.check_true(
            claim="(1 + 1/N)^N < e",
            source=_main("足够的小", "eq. (8)"),
            claimed="< e for every N",
            computed=f"N = 1..{BELOW_E_CHECKED_UP_TO} checked",
            ok=below_e,
            reason="the sequence increases to its limit e",
        ),
        vd.check_true(
            claim="1-D: ε = 1/√N is not enough, (1 + 1/√N)^N is unbounded",
            source=cite("seed 004 §足够的小 claims 26, 25", tests="claim 26"),
            claimed="unbounded",
            computed=sp.sstr(lim["1/sqrt(N)"]["one_d_limit"]),
            ok=lim["1/sqrt(N)"]["one_d_limit"] == sp.oo,
            reason="SymPy limit",
        ),
        vd.check_expr(
            "1-D: ε must be O(1/N), i.e. ε = N^{-p} with p ≥ 1",
            _main("足够的小", "claim 26"),
            sp.Integer(1),
            one_d_p,
            "log(1+ε)^N ≈ Nε is bounded iff N^{1-p} is",
        ),
        vd.check_expr(
            "High-D: ‖v ∂y/∂x‖² ≈ (1 + ε²)‖v‖² when v·∂f/∂x ⟂ v with the same norm",
            cite("seed 004 §足够的小 eqs. (9), (10)", tests="eq. (10)"),
            1 + e_**2,
            hd["factor"],
        ),
        vd.check_expr(
            "High-D: ε = 1/√N basically suffices, (1 + 1/N)^N → e",
            _main("足够的小", "claim 28"),
            sp.E,
            lim["1/sqrt(N)"]["high_d_limit"],
        ),
    ]


# Su's first reply to alann, and where the other sources state the same LayerNorm equivalence
ALANN_SOURCE = "seed 004 comment 1 (2022-03-21); seed 000 annotated eq. (24); seed 001 §3）FFN 层梯度 eq. (4)"


def _comment_rows() -> list[vd.Verdict]:
    """The comment thread: the reader's e², Su's replies, and αx + f(x) against x + εf(x) (Su to alann)."""
    ce, sk, ln = sr.comment_estimate(), sr.skip_vs_branch_scaling(), sr.layernorm_scale_invariance(LN_DIM)
    a_ = sk["symbols"]["alpha"]
    alpha_wins = sp.reduce_inequalities(sk["alpha_form_growth"].base - sk["eps_form_growth"].base > 0, a_)
    return [
        vd.check_expr(
            "Reader: with ε = 1/√N the expansion factor tends to e²",
            cite("seed 004 comment 4 (2022-03-21)", tests="comment 4"),
            sp.exp(2),
            ce["limit"],
            f"the limit is {sp.sstr(ce['limit'])}: the factor grows without bound",
        ),
        vd.check_scaling(
            "Su's reply: (1 + 1/√N)^N ≈ e^{√N}",
            cite("seed 004 comment 5 (2022-03-21)", tests="comment 5"),
            sp.exp(sp.sqrt(N)),
            sp.exp(sp.sqrt(N)) * ce["ratio_limit"],
            N,
            f"right growth, off by a constant: the ratio tends to e^(-1/2) = {float(ce['ratio_limit']):.3f} "
            "(computed: e^√N times SymPy's limit of the ratio)",
        ),
        vd.check_true(
            claim="王珣: the limit is not e²",
            source=cite("seed 004 comment 6 (2022-03-21)", tests="comment 6"),
            claimed="≠ e²",
            computed=sp.sstr(ce["limit"]),
            ok=ce["limit"] != sp.exp(2),
            reason="SymPy limit",
        ),
        vd.check_expr(
            "于锡祥: e² would need the exponent 2√N; with exponent N Su is right",
            cite("seed 004 comment 7 (2022-04-06)", tests="comment 7"),
            sp.exp(2),
            ce["e_squared_case"],
        ),
        vd.check_expr(
            "Su to alann (1): with a Norm after it, αx + f(x) and x + εf(x) are equivalent",
            cite(ALANN_SOURCE, tests=("comment 1", "eq. (24)", "eq. (4)")),
            sp.Integer(0),
            sp.simplify(ln["difference"].norm()),
            "‖LN(c z) − LN(z)‖ = 0 for c > 0, so LN(αx + f) = LN(α(x + εf)) = LN(x + εf)",
        ),
        vd.check_true(
            claim="Su to alann (2): without a Norm, x + εf(x) diverges less easily",
            source=cite("seed 004 comment 2 (2022-03-21)", tests="comment 2"),
            claimed="x + εf grows slower",
            computed=f"per-layer factors α² + 1 vs 1 + 1/α²; the first is larger for {sp.sstr(alpha_wins)}",
            ok=alpha_wins.as_set() == sp.Interval.open(1, sp.oo),
            reason="α² + 1 > 1 + ε² exactly when α > 1 > ε",
        ),
        vd.check_true(
            claim="Su to alann (3): trained with the same lr, ε learns faster (relatively) than α",
            source=cite("seed 004 comment 3 (2022-03-21)", tests="comment 3"),
            claimed="ε faster",
            computed=f"relative Adam step of ε over that of α: {sp.sstr(sk['relative_speed'])}",
            ok=sk["relative_speed"].subs(a_, SPEED_ALPHA) > 1,
            reason="η/ε ÷ η/α = α² > 1 for α > 1",
        ),
    ]


def derivation_verdicts() -> vd.VerdictTable:
    """The article's and its comments' derivations, checked by SymPy."""
    return vd.VerdictTable(_stable_propagation_rows() + _residual_rows() + _comment_rows())


def _per_layer_mn_row(sweep: GradientSweep) -> vd.Verdict:
    """§稳定传播 claim 17 in its own unit, one layer, as an expectation: the backward second moment's factor
    across each linear layer, E[(∂L/∂x_{k−1})²]/E[(∂L/∂x_k)²], over the m/n rule's (fan-out/fan-in of that
    layer); each layer is one draw of that factor, judged by their mean and its bootstrap interval."""
    pm = sweep.moments
    factors = [
        (pm.backward[k - 1] / pm.backward[k]) / (pm.predicted_backward[k - 1] / pm.predicted_backward[k])
        for k in range(1, len(pm.backward))
    ]
    return vd.check_estimate(
        claim="Backward second moment per layer × m/n under the forward-stable init",
        source=cite("seed 004 §稳定传播 claim 17; measured", tests="claim 17"),
        claimed=f"each layer's factor = its m/n on average (within × {MN_RULE_FACTOR:g})",
        samples=factors,
        estimator="mean",
        limits=vd.Limits(1 / MN_RULE_FACTOR, MN_RULE_FACTOR),
        reason=f"measured/(m/n) per layer from {min(factors):.2f} to {max(factors):.2f}: per-entry second moments "
        f"of one plain stack (width {sweep.moment_width} ↔ {sweep.moment_hidden}), {sweep.moment_batch} inputs, "
        "each layer one draw of the claim's per-layer factor (the product over layers is claim 19's)",
    )


def _mean_field_row(sweep: GradientSweep, kind: str, width: int) -> vd.Verdict:
    """E‖∇θL‖² at init against the mean-field prediction for one stack kind and width, over initializations
    (:func:`~deepnotes.show.verdicts.check_mean_at_deepest`). Residual kinds test §残差初现 eq. (7)'s
    ε-scaled gradient; the plain stack tests §稳定传播 claim 19's depth-fixed one."""
    depths = sweep.depths
    source = (
        cite("seed 004 §稳定传播 claim 19; measured", tests="claim 19")
        if kind == "plain"
        else cite("seed 004 §残差初现 eq. (7); seed 004 §稳定传播 claim 19; measured", tests="eq. (7)")
    )
    medians = ", ".join(f"{sweep.ratio[(kind, width, n)]:.2g}" for n in depths)
    return vd.check_mean_at_deepest(
        f"width {width}, {label(kind)}: E‖∇θL‖² = mean-field prediction at N = {depths[0]}..{depths[-1]}",
        source,
        f"mean ratio 1 (within × {MEAN_FIELD_FACTOR})",
        {n: sweep.sample_ratios((kind, width, n)) for n in depths},
        (1 / MEAN_FIELD_FACTOR, MEAN_FIELD_FACTOR),
        f"{sweep.seeds} initializations per depth; median ratios over depths {medians}",
    )


def gradient_verdicts(sweep: GradientSweep) -> vd.VerdictTable:
    """Experiment 1: the m/n rule per layer, and E‖∇θL‖² against the mean-field prediction."""
    rows = [_per_layer_mn_row(sweep)]
    rows += [_mean_field_row(sweep, kind, w) for w in sweep.widths for kind in sweep.kinds]
    return vd.VerdictTable(rows)


def _backward_growth_rows(sweep: GrowthSweep) -> list[vd.Verdict]:
    """§足够的小 eq. (10) and §残差初现 claim 22 per width and ε, measured; comment 11 (ε = 1 is unstable)."""
    probes, n_max = sweep.probes, sweep.deepest
    rows = []
    for width in sweep.widths[1:]:
        for kind in EPS_NAMES:
            p, pred = probes[(width, kind, n_max)], predicted_log_growth(kind, n_max)
            if pred["high_d"] > VISIBLE_LOG_GROWTH:
                rows.append(
                    vd.check_estimate(
                        claim=f"width {width}, N = {n_max}, ε = {kind}: per-layer growth of ‖vJ‖² is of order 1+ε², "
                        "not 1+ε",
                        source=cite(
                            "seed 004 §足够的小 eq. (10), claim 28; seed 004 §残差初现 claim 22; measured",
                            tests=("eq. (10)", "claim 28"),
                        ),
                        claimed=f"log ‖vJ‖²/‖v‖² ≲ N log(1+ε²) = {pred['high_d']:.3g}, nearer it than the 1-D "
                        f"N log(1+ε)² = {pred['one_d']:.3g}",
                        samples=p.log_growth,
                        estimator="median",
                        limits=vd.Limits(
                            -NO_BOUND,
                            min((1 + GROWTH_OVER_BOUND) * pred["high_d"], (pred["high_d"] + pred["one_d"]) / 2),
                        ),
                        reason=f"eq. (10) is an order bound, O((1+ε²)‖v‖²), and the text's point is 1+ε² rather "
                        f"than 1+ε: at most {1 + GROWTH_OVER_BOUND:g} × the bound, and nearer it than the 1-D "
                        "estimate; the median over the probe's (x, v) samples (a typical v: a median sits below the "
                        "expectation at finite width)",
                    )
                )
            else:
                rows.append(
                    vd.check_estimate(
                        claim=f"width {width}, N = {n_max}, ε = {kind}: growth ≈ 1",
                        source=cite("seed 004 §足够的小 eq. (10); measured", tests="eq. (10)"),
                        claimed=f"log ≈ {pred['high_d']:.2g}",
                        samples=p.log_growth,
                        estimator="median",
                        limits=vd.Limits(-BOUNDED_LOG_GROWTH, BOUNDED_LOG_GROWTH),
                        reason="bounded, as for ε = O(1/N); the median over the probe's (x, v) samples",
                    )
                )
    rows.append(_comment_11_growth_row(sweep))
    return rows


def _deep_gate(claim: str, claimed: str, n: int, source: Source) -> vd.Verdict | None:
    """A claim that deep stacks fail (§稳定传播's plain stack, comment 11's ε = 1) speaks of the article's deep stacks,
    hundreds of layers or more: "not checkable here" below DEEP."""
    if n >= DEEP:
        return None
    return vd.uncheckable(
        claim,
        source,
        claimed,
        f"a claim about deep stacks, which the article puts at a hundred layers or more (百层、千层甚至万层; "
        f"comment 11: 层数非常深): judged at N ≥ {DEEP}, and this is N = {n}",
    )


def _comment_11_growth_row(sweep: GrowthSweep) -> vd.Verdict:
    """Comment 11 on the passes: with ε = 1 the backward factor ‖vJ‖² of a very deep stack explodes."""
    e1, n_max = sweep.probes[(sweep.wide, "1", sweep.deepest)], sweep.deepest
    claim = "Kk/Su: with ε = 1 (the original ResNet) very deep stacks become unstable"
    claimed = f"‖vJ‖² grows by more than 10^{UNSTABLE_LOG10}"
    source = cite(COMMENT_11, tests="comment 11")
    return _deep_gate(claim, claimed, n_max, source) or vd.check_estimate(
        claim=claim,
        source=source,
        claimed=claimed,
        computed=f"log10 of ‖vJ‖²'s growth at N = {n_max}",
        samples=[g / math.log(10) for g in e1.log_growth],
        estimator="median",
        limits=vd.Limits(UNSTABLE_LOG10, NO_BOUND),
        reason="the backward factor explodes like 2^N; the median over the probe's (x, v) samples",
    )


def _comment_11_forward_row(sweep: GrowthSweep) -> vd.Verdict:
    """Comment 11 on the forward pass: with ε = 1 ‖x_N‖² of a very deep stack grows with depth (claim 21's
    "ε small enough" does not cover ε = 1)."""
    p, n_max, wide = sweep.probes[(sweep.wide, "1", sweep.deepest)], sweep.deepest, sweep.wide
    claim = f"ε = 1: the forward pass of a very deep stack is not stable (width {wide}, N = {n_max})"
    claimed = f"log ‖x_N‖²/‖x_0‖² > {UNSTABLE_LOG10} ln 10"
    gate = _deep_gate(claim, claimed, n_max, cite(COMMENT_11, tests="comment 11"))
    return gate or vd.check_estimate(
        claim=claim,
        source=cite(COMMENT_11 + "; seed 004 §残差初现 claim 21", tests="comment 11"),
        claimed=claimed,
        computed=f"log ‖x_N‖²/‖x_0‖² (N log 2 = {n_max * math.log(2):.3g})",
        samples=p.forward_samples,
        estimator="median",
        limits=vd.Limits(UNSTABLE_LOG10 * math.log(10), NO_BOUND),
        reason="the forward second moment grows by about (1+ε²) = 2 per block; the median over the probe's inputs",
    )


def _one_d_row(probes: dict, n_max: int | None) -> vd.Verdict:
    """Seed 004 claim 25, inside its premise (∂f/∂x ≈ +1 in every layer): SymPy's product of the N factors 1 + ε·1 is
    (1+ε)^N, and for 0 ≤ ∂f/∂x ≤ 1 it is the largest (the worst case the page's prose calls it). A random width-1
    stack, whose ∂f/∂x = w₁w₂·1[xw₁ > 0] has random sign, lies outside that premise: its growth is shown, not judged."""
    eps, d, n, layer = sp.symbols("epsilon d N l", positive=True)
    product = sp.simplify(sp.product(1 + eps * 1, (layer, 1, n)))
    worst = sp.simplify(sp.diff((1 + eps * d) ** n, d) / ((1 + eps * d) ** (n - 1)))  # N ε > 0: rises with d
    shown = ""
    if n_max is not None:
        one = probes[(1, "1", n_max)].typical
        shown = f"; a random width-1 stack (outside the premise) at N = {n_max}, ε = 1: median log growth {one:.3g}"
    return vd.check_expr(
        "1-D model: with ∂f/∂x = 1 in every layer the factor over N layers is (1+ε)^N, the largest for 0 ≤ ∂f/∂x ≤ 1",
        cite("seed 004 §足够的小 claim 25 (premise ∂f/∂x ≈ 1)", tests="claim 25"),
        (1 + eps) ** n,
        product,
        f"SymPy: Π_(l=1..N) (1 + ε·1) = {sp.sstr(product)}; d/d(∂f/∂x) of (1+ε ∂f/∂x)^N is (1+ε ∂f/∂x)^(N−1) "
        f"times {sp.sstr(worst)}, {'> 0' if worst.is_positive else 'of undecided sign'}{shown}",
    )


def _premise_rows(sweep: GrowthSweep) -> list[vd.Verdict]:
    """Su's premises, measured: v·∂f/∂x ⟂ v (comments 8, 10), the 1-D estimate at width 1, the forward pass."""
    probes, wide, n_max = sweep.probes, sweep.wide, sweep.deepest
    rows = []
    for width in sweep.widths[1:]:
        rows += _orthogonal_premise_rows(probes[(width, "1/sqrt(N)", n_max)], width)
    rows.append(_one_d_row(probes, n_max if 1 in sweep.widths else None))
    for kind in EPS_NAMES[1:]:  # ε = 1 is not "small enough": comment 11's row below
        p, pred = probes[(wide, kind, n_max)], predicted_log_growth(kind, n_max)["high_d"]
        tol = FORWARD_ATOL + FORWARD_RTOL * pred
        rows.append(
            vd.check_estimate(
                claim=f"Forward pass, width {wide}, N = {n_max}, ε = {kind}: log ‖x_N‖²/‖x_0‖² ≈ N log(1+ε²)",
                source=cite("seed 004 §残差初现 claim 21 (small ε: stable forward pass); measured", tests="claim 21"),
                claimed=f"{pred:.3g}",
                samples=p.forward_samples,
                estimator="median",
                limits=vd.Limits(pred - tol, pred + tol),
                reason="the forward second moment grows by the same (1+ε²) per layer as the backward one; the median "
                "over the probe's inputs",
            )
        )
    return rows + [_comment_11_forward_row(sweep)]


def _orthogonal_premise_rows(p, width: int) -> list[vd.Verdict]:
    """Su's reply (comments 8, 10): for a given v, v·∂f/∂x is nearly orthogonal to v and has about its norm;
    each half judged on the mean over the probe's (x, v) samples (each sample's mean over the layers)."""
    source, bound = "seed 004 comments 8, 10 (2022-05-16)", ORTHO_COS_FACTOR * width**-0.5
    return [
        vd.check_estimate(
            claim=f"Su's reply: v·∂f/∂x ⟂ v (width {width})",
            source=cite(source, tests=("comment 8", "comment 10")),
            claimed=f"mean |cos| ≤ {ORTHO_COS_FACTOR:g}/√m = {bound:.3f}",
            samples=p.cos_samples,
            estimator="mean",
            limits=vd.Limits(0.0, bound),
            reason="near-orthogonal up to ~1/√width; each sample's |cos(v, v·∂f/∂x)| averaged over the layers",
        ),
        vd.check_estimate(
            claim=f"Su's reply: ‖v·∂f/∂x‖ ≈ ‖v‖ (width {width})",
            source=cite(source, tests="comment 8"),
            claimed=f"mean ‖v·∂f/∂x‖²/‖v‖² = 1 ± {NORM_RATIO_ATOL:g}",
            samples=p.ratio_samples,
            estimator="mean",
            limits=vd.Limits(1 - NORM_RATIO_ATOL, 1 + NORM_RATIO_ATOL),
            reason="He-initialized branch: E‖v·∂f/∂x‖² = ‖v‖²; each sample's ratio averaged over the layers",
        ),
    ]


def _orthogonality_rows(sweep: GrowthSweep) -> list[vd.Verdict]:
    """§足够的小 claim 27 and comment 9 (orthogonal ∂f/∂x and W), and §稳定传播 claim 19 on a plain stack."""
    wide = sweep.wide
    rows = [_branch_spectrum_row(wide, sweep.singular_values)]
    rows.append(_orthogonal_w_row(wide, sweep.orthogonal["random"]))
    rows.append(_plain_second_moment_row(sweep))
    return rows


def _branch_spectrum_row(wide: int, spectra: list[list[float]]) -> vd.Verdict:
    """§足够的小 claim 27, comment 10: ∂f/∂x at init is close to a multiple of an orthogonal matrix, read over
    several random branches (the fraction whose σ_min exceeds SINGULAR_SPREAD σ_max)."""
    spread = [min(sv) / max(sv) for sv in spectra]  # per random branch
    small = [sum(x < NEAR_ZERO_SINGULAR * max(sv) for x in sv) / len(sv) for sv in spectra]
    return vd.check_each_seed(
        claim="At init ∂f/∂x is close to (a multiple of) an orthogonal matrix",
        source=cite("seed 004 §足够的小 claim 27; seed 004 comment 10 (2022-05-16)", tests=("claim 27", "comment 10")),
        claimed=f"σ_min > {SINGULAR_SPREAD:g} σ_max in a random branch",
        computed=f"width {wide}, {len(spread)} random branches: σ_min/σ_max {vd.seeds_text(spread)}; "
        f"share of σ < {NEAR_ZERO_SINGULAR:.0%} of the largest {vd.seeds_text(small)}",
        shows=[r > SINGULAR_SPREAD for r in spread],
        reason="the ReLU zeroes about half the hidden units, so ∂f/∂x has rank ≈ width/2; what the argument "
        "uses, ‖v·∂f/∂x‖ ≈ ‖v‖ and ⟂ v for a given v, is judged in the rows above",
    )


def _orthogonal_w_row(width: int, random_cos: Finite) -> vd.Verdict:
    """Comment 9 (Dreamer312): an orthogonal W makes xW orthogonal to x. Decided by a counterexample, W = I
    (a derivation, :func:`identity_cosine`); the measured mean |cos| under a random orthogonal W is context."""
    expected, identity = math.sqrt(2 / (math.pi * width)), identity_cosine()  # E|cos(x, xQ)|, Q random orthogonal
    return vd.check_true(
        claim="Dreamer312: if W is orthogonal, xW is orthogonal to x",
        source=cite("seed 004 comment 9 (2022-05-16)", tests="comment 9"),
        claimed="cos(x, xW) = 0",
        computed=f"W = I (orthogonal): cos(x, xI) = {identity:g} for every x (SymPy); random orthogonal W "
        f"(width {width}), measured: mean |cos| = {random_cos:.3f} (√(2/(π·width)) = {expected:.3f})",
        ok=identity < RANDOM_COS_FACTOR * expected,
        reason=(
            "a counterexample decides it: an orthogonal W keeps norms, not angles; near-orthogonality comes "
            "from W being random, as Su answered"
        ),
    )


def identity_cosine() -> float:
    """cos(x, x·I) for a symbolic x ∈ R³ (SymPy): 1, whatever x ≠ 0, so W = I is an orthogonal W with xW ∥ x."""
    x = sp.Matrix(sp.symbols("x1:4", positive=True))
    return float(sp.simplify(x.dot(sp.eye(3) * x) / (x.norm() * (sp.eye(3) * x).norm())))


def _plain_second_moment_row(sweep: GrowthSweep) -> vd.Verdict:
    """§稳定传播 claim 19 on a plain stack: E‖vJ‖²/‖v‖² = 1, an expectation, judged by the mean over samples
    at the deepest N where such a mean can reach it (:func:`~deepnotes.show.verdicts.check_mean_at_deepest`)."""
    wide, deepest = sweep.wide, sweep.deepest
    deep = sweep.probes[(wide, "plain", deepest)]
    return vd.check_mean_at_deepest(
        f"A plain stack (forward-stable init) keeps the backward second moment fixed: E‖vJ‖²/‖v‖² = 1 at width {wide}",
        cite("seed 004 §稳定传播 claim 19; measured", tests="claim 19"),
        f"E[‖vJ‖²/‖v‖²] = 1 (within e^±{PLAIN_DRIFT_LOG:g})",
        {n: [math.exp(g) for g in sweep.probes[(wide, "plain", n)].log_growth] for n in sweep.depths},  # per sample
        (math.exp(-PLAIN_DRIFT_LOG), math.exp(PLAIN_DRIFT_LOG)),
        f"at N = {deepest} a typical sample has drifted to log {deep.typical:.3g} (~N/width, which it does not claim)",
    )


def growth_verdicts(sweep: GrowthSweep) -> vd.VerdictTable:
    """Experiment 2: the growth of ‖vJ‖² against (1+ε²)^N and (1+ε)^{2N}, and Su's premises."""
    return vd.VerdictTable(_backward_growth_rows(sweep) + _premise_rows(sweep) + _orthogonality_rows(sweep))


# what a training run tests, in the source's direction, by kind of stack (TRAINS_TESTS: the items a run
# decides; the rest of its source is context). A deep plain stack is "necessarily hard to train" (§稳定传播
# claim 20, and claim 4, which says it before the argument); the original ResNet, ε = 1 with a
# depth-independent init, "does not avoid increment explosion: very deep ones fail" (comment 11; claim 3 is
# the contrast it qualifies); residual branches scaled down with depth "stabilise the passes and scale the
# gradients against increment explosion" (§残差初现 claim 24), so that residual nets are trainable deep
# (§增量爆炸 claim 3)
TRAINS_SOURCE = {
    "plain": "seed 004 §稳定传播 claim 20; seed 004 (opening) claim 4; measured",
    "1": "seed 004 comment 11; seed 004 §增量爆炸 claim 3; measured",
    "scaled": "seed 004 §残差初现 claim 24; seed 004 §增量爆炸 claim 3; measured",
}
TRAINS_TESTS = {"plain": ("claim 20", "claim 4"), "1": "comment 11", "scaled": ("claim 24", "claim 3")}


def _trains_source(kind) -> Source:
    key = kind if kind in TRAINS_SOURCE else "scaled"
    return cite(TRAINS_SOURCE[key], tests=TRAINS_TESTS[key])


def _trains(kind) -> bool:
    """What the source says of a stack of this kind: it trains (True) or it does not (False)."""
    return kind not in ("plain", "1")


def trains_claim(prefix: str, kind) -> str:
    """The claim on one run in its source's direction."""
    if kind == "plain":
        return f"{prefix}: a deep plain stack is hard to train (does not train)"
    if kind == "1":
        return f"{prefix}: ε = 1 (no depth scaling) does not avoid increment explosion (does not train)"
    return f"{prefix}: {label(kind)} trains"


def token_cosine_verdicts(cosines: dict[tuple, list[tuple[float, float]]]) -> vd.VerdictTable:
    """Token cosines at init ((N, kind) → (measured, predicted) per random stack) against the arc-cosine
    iteration, a mean-field expectation: judged on the mean over the stacks of measured − predicted."""
    rows = []
    for (n, kind), pairs in cosines.items():
        gaps = [got - want for got, want in pairs]
        rows.append(
            vd.check_estimate(
                claim=f"N = {n}, {label(kind)}: token cosine at init follows the arc-cosine iteration",
                source=cite("the arc-cosine kernel (Cho & Saul 2009); measured", paper="Cho & Saul"),
                claimed=f"mean measured − predicted within ±{TOKEN_COS_ATOL:g}",
                computed=f"measured {vd.seeds_text([got for got, _ in pairs])}; predicted "
                f"{vd.seeds_text([want for _, want in pairs])}",
                samples=gaps,
                estimator="mean",
                limits=vd.Limits(-TOKEN_COS_ATOL, TOKEN_COS_ATOL),
                reason="mean over token pairs per random stack; 1 = every token maps to the same direction; the "
                "iteration is an expectation, so the mean over the stacks is what it predicts",
            )
        )
    return vd.VerdictTable(rows)


CONTRAST_KIND = "1/sqrt(N)"  # comment 11's ε = 1 is judged beside the depth-scaled stack of the same setting


def _trains_row(prefix: str, kind, n: int, seeds: dict, window: int, reason: str) -> vd.Verdict:
    """Does the run of ``kind`` at depth ``n`` learn, in its source's direction (``seeds``: kind → the
    setting's histories, one per seed)? The claims that deep stacks fail (a plain stack, ε = 1) are judged only at
    N ≥ DEEP (:func:`_deep_gate`), and ε = 1 as a contrast (ε = 1 does not train where ε = 1/√N does), so that a
    setting where nothing trains cannot make it hold."""
    claim, source = trains_claim(prefix, kind), _trains_source(kind)
    run_kinds = [kind]
    if not _trains(kind):  # a claim that deep stacks fail: one depth rule for the plain stack and ε = 1
        gate = _deep_gate(claim, "does not train", n, source)
        if gate is not None:
            return gate
    if kind == "1" and CONTRAST_KIND in seeds:
        run_kinds.append(CONTRAST_KIND)
        claim += f", where {label(CONTRAST_KIND)} does"
    return vd.check_outcome(
        claim=claim,
        source=source,
        expected={label(k): _trains(k) for k in run_kinds},
        measured={label(k): [h.fraction_learned(window) for h in seeds[k]] for k in run_kinds},
        threshold=LEARNED_FRACTION,
        reason=reason,
    )


def training_verdicts(runs: dict[tuple, list[History]], budget: Budget) -> vd.VerdictTable:
    """Does each MLP run ((N, optimizer, kind) → one History per seed) learn? (the seeds' median)"""
    window = sizes(budget).loss_window
    rows = []
    for (n, opt, kind), hs in runs.items():
        setting = {k: h for (m, o, k), h in runs.items() if (m, o) == (n, opt)}
        reason = f"median over {len(hs)} seeds of the {FRACTION_READ}"
        rows.append(_trains_row(f"N = {n}, {opt}", kind, n, setting, window, reason))
    return vd.VerdictTable(rows)


def transformer_verdicts(sweep: TransformerSweep, budget: Budget) -> vd.VerdictTable:
    """The Transformers without normalization: does each train, and does each keep positions apart at init?"""
    window = sizes(budget).loss_window
    rows = []
    for (n, k), hs in sweep.runs.items():
        setting = {kind: h for (m, kind), h in sweep.runs.items() if m == n}
        reason = f"median over {len(hs)} seeds; " + (
            "no skip paths, no normalization" if k == "plain" else "no normalization; branches start as ε·F"
        )
        rows.append(_trains_row(f"Transformer N = {n}", k, n, setting, window, reason))
    return vd.VerdictTable(rows + [_position_verdict(n, k, seeds) for (n, k), seeds in sweep.cosines.items()])


def _position_verdict(n: int, kind, seeds: list[tuple[float, float]]) -> vd.Verdict:
    """Dong et al. 2021 in their direction: stacked attention without skip paths (plain) drives every
    position to one direction (cosine → 1); skip paths keep the positions apart. Read on every seed's random
    stack (``seeds``: (cos at x_0, cos at x_N) per seed)."""
    why = "mean cosine between the hidden states of two positions of a sequence, before any training step"
    shown = "x_0 → x_N per seed: " + ", ".join(f"{c0:.3f} → {cn:.3f}" for c0, cn in seeds)
    plain = kind == "plain"
    return vd.check_each_seed(
        claim=f"Transformer N = {n}: without skip paths the positions collapse to one direction at init"
        if plain
        else f"Transformer N = {n}: {label(kind)} keeps positions apart at init",
        source=cite("Dong et al. 2021; measured", paper="Dong et al."),
        claimed=f"cos(x_N) {'≥' if plain else '<'} {POSITION_COS_MAX:g}",
        shows=[(cn >= POSITION_COS_MAX) == plain for _, cn in seeds],
        computed=shown,
        reason=why,
    )


def _half_way_text(hs: list[History], window: int) -> str:
    """The step at which each seed is half-way from the plateau to the floor ("—" for a seed that never is)."""
    steps = [h.steps_to(HALF_WAY, window=window) for h in hs]
    if all(t is None for t in steps):
        return ""
    return " (half-way at step " + ", ".join("—" if t is None else str(t) for t in steps) + ")"


def _outcome_text(hs: list[History], window: int) -> str:
    """What every seed of one run did: the fractions learned (the median first, "div." for a diverged seed) and
    the steps at which seeds diverged."""
    diverged = [str(h.diverged_at) for h in hs if h.diverged]
    learned = vd.seeds_text([h.fraction_learned(window) for h in hs])
    return f"learned {learned}" + (f", diverged at step {', '.join(diverged)}" if diverged else "")


def measured_summary(runs: dict[tuple, list[History]], budget: Budget) -> Statement:
    """The Markdown paragraph "Measured at the <budget> budget" over every seed: the per-layer gradient norm at
    step 0 of the deepest Adam runs (each seed's median over layers, the median over seeds), each run's fraction
    learned per seed and the step at which each seed is half-way to the floor."""
    rb = sizes(budget)
    window = rb.loss_window
    kinds = list(dict.fromkeys(kind for _, _, kind in runs))
    opts = list(dict.fromkeys(opt for _, opt, _ in runs))
    n_hi = rb.train_depths[-1]
    g_step0 = {k: statistics.median(float(np.median(h.grad_norms[0])) for h in runs[(n_hi, "adam", k)]) for k in kinds}
    lines = [
        Sentence(
            f"- **{label(k)}**: "
            + "; ".join(
                f"N = {n} {opt.upper()} {_outcome_text(runs[(n, opt, k)], window)}"
                + _half_way_text(runs[(n, opt, k)], window)
                for n in rb.train_depths
                for opt in opts
            )
            + (
                " (first loss " + ", ".join(f"{h.losses[0]:.3g}" for h in runs[(n_hi, "adam", k)]) + f" at N = {n_hi})"
                if k == "1"
                else ""
            )
        )
        for k in kinds
    ]
    seeds = min(len(hs) for hs in runs.values())
    head = Sentence(
        f"Per-layer gradient norm at step 0, N = {n_hi} (median over layers and seeds): "
        + ", ".join(f"{label(k)} {g:.2g}" for k, g in g_step0.items())
        + ".\n"
    )
    return Statement([head, *lines], lead=f"Measured at the {budget.name} budget, {seeds} seeds per run.", sep="\n")


def _rows_read(rows: list[vd.Verdict], kind) -> Sentence:
    """The training rows of ``kind`` (one per setting), per status: the settings (each linked to its row) and what that
    status says the runs did, "trains" / "does not train" in their source's direction."""
    mine = [v for v in rows if v.claim.split(": ", 1)[1].startswith(trains_claim("", kind).split(": ", 1)[1])]
    groups: dict[str, list[vd.Verdict]] = {}
    for v in mine:
        groups.setdefault(v.status, []).append(v)
    says = {
        True: {"holds": "trains", "wrong": "does not train"},
        False: {"holds": "does not train", "wrong": "trains"},
    }[_trains(kind)]
    return joined(
        [
            sentence(
                say(members[0], **says, undecided="is not judged"),
                " at ",
                joined([link(v, v.claim.split(": ", 1)[0]) for v in members]),
            )
            for members in groups.values()
        ],
        "; and",
        sep="; ",
    )


def run_takeaways(runs: dict[tuple, list[History]], sweep: TransformerSweep | None, budget: Budget) -> dict:
    """The take-aways' measured phrases, glued into the page's prose, read from the training rows
    (:func:`training_verdicts`, :func:`transformer_verdicts`; through :func:`deepnotes.show.say.say`): where the MLP
    with ε = 1/√N trains, and per Transformer wiring where it does (or that the budget skips the Transformers)."""
    out = {
        "mlp_sqrt_trained": sentence(
            "with them the MLP ", _rows_read(list(training_verdicts(runs, budget)), CONTRAST_KIND)
        )
    }
    if sweep is None:
        out["tf_outcomes"] = Sentence(f"the {budget.name} budget skips them")
        return out
    tf_rows = list(transformer_verdicts(sweep, budget))
    out["tf_outcomes"] = joined([sentence(f"{label(k)} ", _rows_read(tf_rows, k)) for k in sweep.kinds], ";", sep="; ")
    return out


REZERO_NOTEBOOK = "ReZero (Bachlechner et al. 2020), the authors' notebook ReZero-Deep_Fast_Transformer, plot_jacobians"


def spectrum_verdicts(spectra: dict, budget: Budget) -> vd.VerdictTable:
    """ReZero's signal-propagation claims on the measured input-output Jacobian spectra: g = 0 is an
    isometry; at the shallow depth all three stacks keep most λ_io near one; at the deep one the LayerNorm
    stacks spread theirs while ReZero (g = 0.1) stays much closer to one."""
    sub = sizes(budget)
    shallow, deep = min(sub.jacobian_depths), max(sub.jacobian_depths)
    f = NEAR_ONE_FACTOR
    near = {(k, n): spectra[(k, n)].near_one(f) for k in ("post", "pre", "rezero") for n in (shallow, deep)}
    spread = {(k, n): spectra[(k, n)].log_spread() for k in ("post", "pre", "rezero") for n in (shallow, deep)}
    return vd.VerdictTable(
        [
            _isometry_row(spectra, deep),
            _shallow_spectrum_row(near, spread, shallow),
            _deep_spectrum_row(spectra, near, spread, (shallow, deep), sub.jacobian_gate),
        ]
    )


def _near_text(near: dict[tuple[str, int], float], n: int) -> str:
    """Each stack's fraction of λ_io within the factor NEAR_ONE_FACTOR of one, at depth ``n``."""
    return ", ".join(f"{k} {near[(k, n)]:.2f}" for k in ("post", "pre", "rezero"))


def _spread_text(spread: dict[tuple[str, int], float], n: int) -> str:
    """Each stack's spread of ln λ_io at depth ``n``."""
    return ", ".join(f"{k} {spread[(k, n)]:.2f}" for k in ("post", "pre", "rezero"))


def rezero_gate_zero_jacobian() -> sp.Expr:
    """∂(x + g·F(x))/∂x at g = 0, for any F (SymPy): 1, so a ReZero stack with every gate at 0 has J = I."""
    x, g = sp.symbols("x g")
    return sp.diff(x + g * sp.Function("F")(x), x).subs(g, 0)


def _isometry_row(spectra: dict, deep: int) -> vd.Verdict:
    """ReZero §3, dynamical isometry: with every gate at 0 ReZero is the identity, every λ_io = 1. Decided by
    the derivation (whatever the weights); the measured spectrum is shown beside it."""
    worst = max(abs(v - 1) for v in spectra[("rezero g=0", deep)].singular)
    derived = rezero_gate_zero_jacobian()
    return vd.check_true(
        claim=f"ReZero with every gate at 0 is the identity: every λ_io = 1 (N = {deep})",
        source=cite("ReZero (Bachlechner et al. 2020) §3, dynamical isometry; measured", paper="ReZero"),
        claimed="λ_io = 1",
        computed=f"∂(x + g·F(x))/∂x at g = 0: {derived} (SymPy); measured max |λ_io − 1| = {worst:.1e}",
        ok=derived == 1,
        reason="x + 0·F(x) = x: J = I whatever the weights; the measurement "
        + ("agrees within" if worst < ISOMETRY_ATOL else "departs from it by more than")
        + f" {ISOMETRY_ATOL:g}",
    )


def _shallow_spectrum_row(
    near: dict[tuple[str, int], float], spread: dict[tuple[str, int], float], shallow: int
) -> vd.Verdict:
    """ReZero's notebook, at the shallow depth: all three stacks keep most λ_io near one."""
    f = NEAR_ONE_FACTOR
    return vd.check_true(
        claim=f"N = {shallow}: all three stacks keep most λ_io near one",
        source=cite(f"{REZERO_NOTEBOOK}; measured", paper="ReZero"),
        claimed=f"> {MOST:g} within ×{f:g} of 1 for each",
        computed=f"fraction within ×{f:g}: {_near_text(near, shallow)}",
        ok=all(near[(k, shallow)] > MOST for k in ("post", "pre", "rezero")),
        reason=PROXY
        + (
            "reproduced"
            if all(near[(k, shallow)] > MOST for k in ("post", "pre", "rezero"))
            else "not reproduced for the LayerNorm stacks: with this package's Xavier-normal blocks "
            "Post-LN's LayerNorms already shrink most directions at 12 blocks, and Pre-LN's "
            "un-normalized stream amplifies some"
        )
        + f"; ln λ spread {_spread_text(spread, shallow)}",
    )


def _deep_spectrum_row(
    spectra: dict,
    near: dict[tuple[str, int], float],
    spread: dict[tuple[str, int], float],
    depths: tuple[int, int],
    gate: Finite,
) -> vd.Verdict:
    """ReZero's notebook, at the deep depth: the LayerNorm stacks spread λ_io, ReZero stays much closer to one."""
    shallow, deep = depths
    f = NEAR_ONE_FACTOR
    layer_norm_stacks = ("post", "pre")
    closer = all(spread[("rezero", deep)] < SPREAD_RATIO * spread[(k, deep)] for k in layer_norm_stacks)
    ordered = all(
        spread[("rezero", deep)] < spread[(k, deep)] and near[("rezero", deep)] > near[(k, deep)]
        for k in layer_norm_stacks
    )
    zeros = spectra[("post", deep)].zeros()
    return vd.check_graded(
        claim=f"N = {deep}: Post-LN and Pre-LN spread λ_io far from one; ReZero (g = {gate:g}) "
        "keeps them much closer to one",
        source=cite(f"{REZERO_NOTEBOOK}; measured", paper="ReZero"),
        claimed=f"ReZero's ln λ spread < {SPREAD_RATIO:g} × each LayerNorm stack's",
        computed=f"ln λ spread {_spread_text(spread, deep)}; within ×{f:g}: {_near_text(near, deep)}; "
        f"Post-LN exact zeros {zeros:.0%}",
        holds=closer,
        approx=ordered,
        reason=PROXY
        + (
            "reproduced"
            if closer
            else "reproduced in trend only: ReZero is the narrowest "
            "and has the most λ_io near one, but not by the factor"
            if ordered
            else "not reproduced: ReZero's spectrum is not the narrowest"
        )
        + f"; ReZero's own spread grows from {spread[('rezero', shallow)]:.2f} at N = {shallow}, "
        "as x + εF does with ε fixed (the chapter's (1 + ε²)^N)",
    )


def _histogram_text(values) -> str:
    """One histogram of log10 λ_io as text: its width (IQR), centre and the exact zeros it leaves out."""
    q1, med, q3 = log10_quartiles(values)
    n_zero = zeros(values)
    return f"width {q3 - q1:.2f} (median {med:+.2f}" + (f"; {n_zero} of {len(values)} exact zeros)" if n_zero else ")")


def _width(values) -> float:
    """The width of one histogram of log10 λ_io: the interquartile range over the non-zero λ."""
    q1, _, q3 = log10_quartiles(values)
    return q3 - q1


def _seeds_text(series: dict[int, list[tuple[float, ...]]], name: str, keys) -> str:
    """Each key's histogram width per seed: "N = 4: 0.12, 0.10, 0.13"."""
    return "; ".join(f"{name} = {k}: " + ", ".join(f"{_width(v):.2f}" for v in series[k]) for k in keys)


def paper_spectrum_verdicts(paper: PaperSpectra) -> vd.VerdictTable:
    """ReZero's Jacobian claims on the statistic its figure shows, the histogram of log λ_io, summarized by
    its width (interquartile range of log10 λ over the non-zero λ), in the paper's setting at toy scale, each
    seed's histogram apart: the vanilla (Post-LN) Transformer at the paper's depths (does the mean width grow
    at every step in depth, its bootstrap over seeds), ReZero at the deepest during its first training steps
    (does each seed stay narrower than SPREAD_RATIO × the same seed's vanilla width at that depth, in most
    seeds). ReZero's start at isometry is a derivation (the row beside the notebook's spectra,
    :func:`_isometry_row`); the step-0 histogram shows it."""
    depths, deep = sorted(paper.vanilla), paper.rezero_depth
    widths = [[_width(paper.vanilla[n][k]) for n in depths] for k in range(len(paper.vanilla[depths[0]]))]

    def least_step(rows):  # seeds × depths → the smallest rise of the mean width between neighbouring depths
        mean = [statistics.fmean(col) for col in zip(*rows, strict=True)]
        return min(b - a for a, b in pairwise(mean))

    trained = sorted(k for k in paper.rezero if k)
    seeds = len(paper.rezero[trained[0]]) if trained else 0
    stays = [
        all(_width(paper.rezero[k][s]) < SPREAD_RATIO * _width(paper.vanilla[deep][s]) for k in trained)
        for s in range(seeds)
    ]
    rezero_claim = (
        f"ReZero ({deep} layers) stays near isometry over its first {max(paper.rezero)} training steps, where "
        "vanilla's histogram has spread"
    )
    measured = cite(f"{REZERO_PAPER}; measured", paper="ReZero")
    rows = [
        vd.check_statistic(
            claim="The vanilla (Post-LN) Transformer's log λ_io histogram widens with depth, away from isometry",
            source=measured,
            claimed=f"the width grows at every step over N = {', '.join(map(str, depths))}",
            seeds=widths,
            statistic=least_step,
            name="the smallest rise of the mean width",
            limits=vd.Limits(0.0, NO_BOUND),
            computed="width per seed, " + _seeds_text(paper.vanilla, "N", depths),
            reason="the histogram's width is the interquartile range of log10 λ_io over the non-zero λ "
            "(exact zeros, below 1e-8, are left out: a zero is further from isometry still); the claim is about "
            "the typical stack, so the mean over seeds",
        )
    ]
    if not trained:
        rows.append(vd.uncheckable(rezero_claim, measured, "stays narrow", "no training steps"))
        return vd.VerdictTable(rows)
    rows.append(
        vd.check_each_seed(
            claim=rezero_claim,
            source=measured,
            claimed=f"every width < {SPREAD_RATIO:g} × vanilla's at N = {deep} (the same seed)",
            shows=stays,
            computed="ReZero width per seed, "
            + _seeds_text(paper.rezero, "step", trained)
            + f"; vanilla N = {deep} per seed: "
            + ", ".join(f"{_width(v):.2f}" for v in paper.vanilla[deep]),
            reason=f"Adam {paper.lr:g} on the Markov language, the gates trained from 0 (x + g·F(x)); step 0 is "
            "J = I exactly (every gate 0)",
        )
    )
    return vd.VerdictTable(rows)


def transformer_reading(sweep: TransformerSweep, budget: Budget) -> Statement:
    """The Transformer runs in words, every number read from the sweep: per wiring and depth, the mean cosine
    between the positions of a sequence at x_0 and at x_N before training (the mean over the random stacks of the
    seeds), what each seed
    learned (the seeds' median first; "div." for a seed that diverged), and, at the deepest depth, the range of
    the per-block gradient norms at step 0 (seed 0)."""
    window = sizes(budget).loss_window
    deep = max(sweep.depths)
    lines = []
    for kind in sweep.kinds:
        parts = []
        for n in sweep.depths:
            c0, cn = (statistics.fmean(c) for c in zip(*sweep.cosines[(n, kind)], strict=True))
            parts.append(
                f"N = {n}: cosine {c0:.2f} → {cn:.3f} (mean of {len(sweep.cosines[(n, kind)])} stacks), "
                + _outcome_text(sweep.runs[(n, kind)], window)
            )
        g0 = sweep.runs[(deep, kind)][0].grad_norms[0]  # [N] per-block gradient norms at step 0
        if g0:
            parts.append(f"gradient per block at step 0, N = {deep}: {min(g0):.2g} to {max(g0):.2g}")
        lines.append(Sentence(f"- **{label(kind)}**: " + "; ".join(parts) + "."))
    return Statement(lines, sep="\n")


def budget_numbers(budget: Budget) -> dict[str, str]:
    """The sizes the page's prose quotes (glued into it): the Jacobian-growth probe's narrowest and widest
    width and its deepest stack at this budget."""
    sub = sizes(budget)
    return {"probe_widths": f"{min(sub.widths)} to {max(sub.widths)}", "probe_deepest": str(max(sub.depths))}


def derivations(budget: Budget) -> Derivations:
    """The page's SymPy derivations and the verdict tables that run no experiment, as its cells call them
    (priced in the chapter's estimate: :mod:`deepnotes.chapters.catalog`; the same at every budget)."""
    return Derivations(
        (
            (sr.plain_layer_moments, ()),
            (sr.plain_stack_backward_gain, (4,)),
            (sr.plain_stack_gradients, ()),
            (sr.residual_layer, ()),
            (sr.increment_with_eps, ()),
            (sr.high_dim_layer, ()),
            (sr.comment_estimate, ()),
            (sr.skip_vs_branch_scaling, ()),
            (derivation_verdicts, ()),
            (sr.branch_gradient_moment, ()),
        )
    )


def derivation_readings(table: list[vd.Verdict]) -> dict[str, Sentence]:
    """The derivation table in the prose (:func:`derivation_verdicts`): the article's own rows summed up
    (:func:`~deepnotes.show.say.tally`), Su's three answers to alann summed up, and the comment thread's e² with the
    two replies correcting it, each by its row's status."""
    row = {v.claim: v for v in table}
    article = [v for v in table if v.tested and all(c.part == "main" for c in v.tested.subjects)]
    reader = row["Reader: with ε = 1/√N the expansion factor tends to e²"]
    replies = [
        row["王珣: the limit is not e²"],
        row["于锡祥: e² would need the exponent 2√N; with exponent N Su is right"],
    ]
    alann = [v for v in table if v.claim.startswith("Su to alann")]
    return {
        "article_tally": tally(article, "The article's derivations"),
        "alann_answers": tally(alann, "Su's answers on αx + f versus x + εf"),
        "comment_e2": sentence(
            "The reader's e² ",
            say(reader, holds="is right", wrong="is wrong", undecided="is not judged here"),
            "; ",
            joined(
                [
                    sentence(
                        link(r, r.claim.split(":")[0] + "'s correction"),
                        " ",
                        say(r, holds="holds", wrong="is wrong", undecided="is not judged here"),
                    )
                    for r in replies
                ]
            ),
        ),
    }


def gradient_readings(table: list[vd.Verdict]) -> dict[str, Sentence]:
    """Experiment 1's rows in the prose (:func:`gradient_verdicts`): the m/n rule per layer, and the stacks against the
    mean-field prediction, per status, each stack linked to its row."""
    mn, *field = table
    return {
        "mn_rule": sentence(
            link(mn, "The m/n rule"),
            " ",
            say(
                mn,
                holds="holds layer by layer",
                wrong="does not hold layer by layer",
                undecided="cannot be judged layer by layer from this stack",
            ),
        ),
        "mean_field": grouped(
            field,
            lambda v: " at ".join(reversed(v.claim.split(":")[0].split(", ", 1))),  # "plain at width 16"
            between=": ",
            holds="the mean meets it",
            wrong="the mean misses it",
            undecided="no mean over so few initializations can reach it",
            word=";",
            sep="; ",
        ),
    }


def growth_readings(table: list[vd.Verdict], sweep: GrowthSweep) -> dict[str, Sentence]:
    """Experiment 2's rows in the prose (:func:`growth_verdicts` of ``sweep``): the growth per layer at the sweep's
    widest width (the rows of eq. (10), per ε), ∂f/∂x as a matrix, Su's reply for a given v (orthogonal to v, as
    long), and the reader's orthogonal-W guess, each by its row's status."""
    matrix = next(v for v in table if v.claim.startswith("At init ∂f/∂x is close to"))
    reply = [v for v in table if v.claim.startswith("Su's reply:")]
    guess = next(v for v in table if v.claim.startswith("Dreamer312:"))
    at = f"width {sweep.wide}, N = {sweep.deepest}"  # the rows of eq. (10) at the sweep's widest width
    wide = [v for v in table if v.claim.startswith(at) and "per-layer growth of ‖vJ‖²" in v.claim]
    return {
        "wide_growth": sentence(
            f"at {at}: ",
            grouped(
                wide,
                lambda v: "ε = " + v.claim.split("ε = ")[1].split(":")[0],
                between=": ",
                holds="of order 1+ε² per layer, not 1+ε",
                wrong="not of order 1+ε² per layer",
                undecided="not decided by these samples",
            ),
        ),
        "branch_matrix": sentence(
            "as a statement about the matrix that ",
            say(matrix, holds="holds", wrong="is wrong", undecided="is not judged here"),
            " for this branch",
        ),
        "reply_step": grouped(
            reply,
            lambda v: v.claim.split(": ", 1)[1],
            between=": ",
            holds="as he says",
            wrong="not as he says",
            undecided="not judged here",
        ),
        "orthogonal_guess": sentence(
            "The reader's guess that an orthogonal W makes xW orthogonal to x ",
            say(guess, holds="holds", wrong="is wrong (W = I)", undecided="is not judged here"),
        ),
    }
