"""Verdicts of the chapter "Post-Norm vs Pre-Norm" on the claims of seeds 002 and 003: each
function returns a :class:`~deepnotes.show.verdicts.VerdictTable`; every threshold is named here."""
from __future__ import annotations

import math
import statistics

import numpy as np
import sympy as sp

from deepnotes.chapters.post_vs_pre_norm import derive
from deepnotes.chapters.post_vs_pre_norm import experiments as ex
from deepnotes.core.budget import Budget
from deepnotes.core.init import truncated_normal_variance_factor
from deepnotes.show import verdicts as vd

# thresholds
ARITHMETIC_RTOL = 1e-3            # the source's own arithmetic, to its printed digits
ORDER_OF_MAGNITUDE_RTOL = 0.5     # "approximately" for the annotated σ² and effective depths
WARMUP_RATIO_RTOL = 0.05          # "approximately" for eq. (46)'s 1/r ≈ 1.002
FIRST_ORDER_GAP = 0.05            # ∏(I + J_t) vs I + Σ J_t, relative: "equal" below this
PREDICTION_FLOOR = 0.05           # the identity weight is compared where the prediction exceeds this
IDENTITY_GAP = 0.1                # |cos(x_l, x_0) − predicted weight| allowed there
PRE_RMS_GROWTH = 2                # Pre-LN: RMS at the top ≥ this × the RMS of x_0
REZERO_IDENTITY_COS = 0.999999    # ReZero at init: every cos(x_l, x_0) above this
LEARNED = 0.5                     # a run "trains" past this fraction from the plateau to the floor
ADAM_FIRST_STEP_BAND = (0.5, 2)   # Adam's first step: block-1 / block-N relative update inside this

# the random product of the chain-rule check (seed 003 eq. (39))
JACOBIAN_DIM = 4
JACOBIAN_LAYERS = 12
JACOBIAN_SCALE = 0.1
JACOBIAN_SEED = 0

# source constants (seed 003, annotated §4–§6)
BERT_STDS = (0.0361, 0.0176)      # the weight stds the annotated derivations plug in
BERT_STD = 0.02                   # BERT's initializer std, before the cut at ±2σ
BERT_LAYERS_HALF = 6              # L/2 for BERT-base's L = 12
EQ34_SIGMA2, EQ34_CLAIM = 0.0013, 1.0078
EQ35_SIGMA2, EQ35_CLAIM = 0.00031, 1.0019
EQ57_DEPTH, EQ58_DEPTH = 769, 3226
EQ46_RATIO = 1.002


def first_order_gap(dim: int = JACOBIAN_DIM, layers: int = JACOBIAN_LAYERS, scale: float = JACOBIAN_SCALE,
                    seed: int = JACOBIAN_SEED) -> float:
    """max|∏(I + J_t) − (I + Σ J_t)| / max|∏(I + J_t)| for ``layers`` random J_t of entry std
    ``scale``: how far the chain rule's product is from its first-order sum."""
    prod, total = np.eye(dim), np.eye(dim)
    rng = np.random.default_rng(seed)
    for _ in range(layers):
        jac = scale * rng.standard_normal((dim, dim))
        prod, total = prod @ (np.eye(dim) + jac), total + jac
    return float(np.abs(prod - total).max() / np.abs(prod).max())


def derivation() -> vd.VerdictTable:
    """The derivations of seeds 002/003 against SymPy, and the annotated arithmetic of seed 003."""
    post, pre = derive.post_norm_unroll(3), derive.pre_norm_second_moment()
    upd, step = derive.update_scale_invariance(), derive.post_ln_moment_step()
    v, ell, g = post["symbols"]["v"], post["symbols"]["l"], upd["symbols"]["g"]
    eta = upd["symbols"]["eta"]
    # BERT's GELU FFN at the stds the printed 0.0361 and 0.0176 round: 1/√768 and 0.02 cut at ±2σ
    exact = dict(zip(BERT_STDS, (derive.BERT_WIDTH ** -0.5, BERT_STD * math.sqrt(truncated_normal_variance_factor(2.0)))))
    v_bert = {std: derive.bert_ffn_branch_at(derive.BERT_WIDTH, exact[std]) for std in BERT_STDS}
    hi, lo = BERT_STDS
    gap = first_order_gap()
    return vd.VerdictTable([
        vd.check_expr("Post-Norm at init: x_l = x_0/2^{l/2} + Σ F_k/2^{(l−k)/2} (v = 1)", "seed 002 §残差连接; seed 003 §LN真的能缓解梯度消失",
                      2 ** (-ell / 2), post["weight_x0"].subs(v, 1)),
        vd.check_expr("With branch variance σ²: weight (1+σ²)^{−L/2}", "seed 003 annotated eqs. (31)-(33)",
                      (1 + v) ** (-ell / 2), post["weight_x0"]),
        vd.check_expr("Pre-Norm: Var[x_L] = Var[x_0] + Lσ²", "seed 003 annotated eq. (38); seed 002 §残差连接",
                      1 + ell * v, pre["second_moment"]),
        vd.check_expr("Adam's update is O(η) whatever the gradient's scale; SGD's scales with it", "seed 003 §我们真的担心梯度消失吗",
                      -eta * sp.sign(g), upd["adam"].rewrite(sp.sign)),
        vd.check_expr("Post-LN forward: S_{l+1} = (S_l + σ²)/(1 + σ²) keeps S = 1", "seed 003 annotated eq. (48)",
                      step["fixed_point"], step["ln_output"],
                      "SymPy: S = 1 is the recursion's only fixed point, and LN of any input has second moment 1"),
        vd.check_number("(1 + 0.0013)^6 ≈ 1.0078", "seed 003 annotated eq. (34)", EQ34_CLAIM,
                        (1 + EQ34_SIGMA2) ** BERT_LAYERS_HALF, rtol=ARITHMETIC_RTOL),
        vd.check_number("(1 + 0.00031)^6 ≈ 1.0019", "seed 003 annotated eq. (35)", EQ35_CLAIM,
                        (1 + EQ35_SIGMA2) ** BERT_LAYERS_HALF, rtol=ARITHMETIC_RTOL),
        vd.check_number("…but σ² there is the branch's variance, not the weight's: FFN at s = 0.0361, d = 768",
                        "seed 003 annotated eqs. (34), (57)", hi ** 2, v_bert[hi], approx_rtol=ORDER_OF_MAGNITUDE_RTOL,
                        reason=f"BERT's GELU FFN: E[F²] = 4q·E[gelu(h)²] = {v_bert[hi]:.2f} (q = ds² ≈ 1), not s² = {hi ** 2:.4f}"),
        vd.check_number("…and at s = 0.0176", "seed 003 annotated eqs. (35), (58)", lo ** 2, v_bert[lo],
                        approx_rtol=ORDER_OF_MAGNITUDE_RTOL,
                        reason=f"BERT's GELU FFN: E[F²] = {v_bert[lo]:.3f}, not s² = {lo ** 2:.5f}"),
        vd.check_number("Effective depth 1/σ² ≈ 769 layers (σ = 0.0361)", "seed 003 annotated eq. (57)", EQ57_DEPTH,
                        1 / math.log(1 + v_bert[hi]), approx_rtol=ORDER_OF_MAGNITUDE_RTOL,
                        reason=f"with the FFN branch's E[F²]: 1/log(1+{v_bert[hi]:.2f}) = {1 / math.log(1 + v_bert[hi]):.2f} sublayers"),
        vd.check_number("Effective depth ≈ 3226 layers (σ = 0.0176)", "seed 003 annotated eq. (58)", EQ58_DEPTH,
                        1 / math.log(1 + v_bert[lo]), approx_rtol=ORDER_OF_MAGNITUDE_RTOL,
                        reason=f"with E[F²]: 1/log(1+{v_bert[lo]:.3f}) = {1 / math.log(1 + v_bert[lo]):.1f} sublayers"),
        vd.check_number("Arithmetic of eq. (57): 1/0.0013 ≈ 769", "seed 003 annotated eq. (57)", EQ57_DEPTH,
                        1 / EQ34_SIGMA2, rtol=ARITHMETIC_RTOL),
        vd.check_true(claim="∂L/∂x_0 = ∂L/∂x_L·(I + Σ_t ∂F_t/∂x_t) for Pre-LN", source="seed 003 annotated eq. (39)",
                      claimed="I + Σ J_t",
                      computed=f"∏(I + J_t) differs by {gap:.2f} (relative, {JACOBIAN_LAYERS} layers, ‖J‖≈{JACOBIAN_SCALE:g})",
                      ok=gap < FIRST_ORDER_GAP,
                      reason="the chain rule gives the product ∏(I + J_t); the sum is its first-order part only"),
        vd.check_number("BERT: 1/r = (1+σ²)^{L/2} ≈ 1.002, so warmup barely matters (σ = 0.0176, L = 12)",
                        "seed 003 annotated eqs. (44)-(46)", EQ46_RATIO, (1 + v_bert[lo]) ** BERT_LAYERS_HALF,
                        approx_rtol=WARMUP_RATIO_RTOL,
                        reason=f"with the FFN branch's E[F²] = {v_bert[lo]:.3f}: (1 + E[F²])^6 = {(1 + v_bert[lo]) ** BERT_LAYERS_HALF:.2f}; "
                               "(45) also sets a step count equal to a gradient ratio"),
    ])


def identity_path(probes: dict[str, ex.StreamProbe], budget: Budget) -> vd.VerdictTable:
    """Experiment 1 against the derivation: the identity weight per style, Post-LN's gradients,
    Pre-LN's growing stream, ReZero's identity start."""
    rows = []
    for norm in ("post", "deepnorm", "pre"):
        p = probes[norm]
        gap = max(abs(a - b) for a, b in zip(p.cos_x0, p.predicted_cos) if b > PREDICTION_FLOOR)
        rest = [abs(a) for a, b in zip(p.cos_x0, p.predicted_cos) if b <= PREDICTION_FLOOR]
        beyond = f"; beyond, |cos| ≤ {max(rest):.2f} (finite-width noise, d = {budget.d_model})" if rest else ""
        rows.append(vd.check_true(
            claim=f"{norm}: the identity path's weight follows the derivation", source="seed 002/003; measured",
            claimed="cos(x_l, x_0) = predicted weight",
            computed=f"gap ≤ {gap:.3f} where the prediction exceeds {PREDICTION_FLOOR:g}" + beyond,
            ok=gap < IDENTITY_GAP, reason="prediction from the measured branch ratios v_k"))
    post_p, pre_p, rz = probes["post"], probes["pre"], probes["rezero"]
    depth = len(pre_p.grad_norms)
    rows += [
        vd.check_true(claim="Post-LN: the gradient reaching the blocks falls toward the input",
                      source="seed 003 §LN真的能缓解梯度消失", claimed="falls",
                      computed=f"‖g_1‖/‖g_N‖ = {post_p.grad_norms[0] / post_p.grad_norms[-1]:.3g}",
                      ok=post_p.grad_norms[0] < post_p.grad_norms[-1], reason="first block vs last block"),
        vd.check_true(claim="Pre-LN: the stream's RMS grows with depth (a middle layer needs its own norm)",
                      source="seed 003 §那我们为什么还要加LN", claimed="grows like √(1 + l v)",
                      computed=f"RMS {pre_p.rms[0]:.2f} → {pre_p.rms[depth // 2]:.2f} (middle) → {pre_p.rms[-1]:.2f}",
                      ok=pre_p.rms[-1] > PRE_RMS_GROWTH * pre_p.rms[0], reason="Post-LN's stays at 1 after every block"),
        vd.check_true(claim="ReZero starts as the identity", source="seed 002 §残差连接", claimed="x_l = x_0",
                      computed=f"min cos(x_l, x_0) = {min(rz.cos_x0):.6f}", ok=min(rz.cos_x0) > REZERO_IDENTITY_COS,
                      reason="gates are 0 at init"),
    ]
    return vd.VerdictTable(rows)


def seed_outcome(hists) -> str:
    """What the seeds of one variant did: the median fraction learned and every seed's value (or
    where it diverged)."""
    each = [f"diverged at {h.diverged_at}" if h.diverged else f"{h.fraction_learned():.2f}" for h in hists]
    median = statistics.median(h.fraction_learned() for h in hists)
    return f"learned {median:.2f} (median of {len(hists)} seeds: {', '.join(each)})"


def training(runs: dict[str, dict], budget: Budget) -> vd.VerdictTable:
    """Experiment 2: which variants train (the median over seeds), and whether Post-LN without
    warmup diverges."""
    n_train = budget.post_vs_pre_norm.train_depth
    rows = []
    for opt, rs in runs.items():
        for name, hists in rs.items():
            rows.append(vd.check_true(claim=f"{opt}: {name} trains at N = {n_train}", source="measured",
                                      claimed=f"learned > {LEARNED:g}", computed=seed_outcome(hists),
                                      ok=statistics.median(h.fraction_learned() for h in hists) > LEARNED,
                                      reason="fraction of the way from the plateau to the floor, last 10 steps, "
                                             "median over seeds"))
    post_nw = runs["adam"]["post, no warmup"]
    diverged = [h for h in post_nw if h.diverged]
    kept = [h for h in post_nw if not h.diverged]
    mid = [x for h in kept for x in h.losses[len(h.losses) // 2:]]
    computed = (f"{len(diverged)} of {len(post_nw)} seeds diverged (steps "
                f"{', '.join(str(h.diverged_at) for h in diverged) or '-'})"
                + (f"; second-half mean of the {len(kept)} that did not {sum(mid) / len(mid):.3f} "
                   f"(plateau {post_nw[0].unigram:.3f}) in {len(kept[0].losses)} steps" if kept else ""))
    rows.append(vd.check_true(claim="Post-LN without warmup: the loss settles near a constant, then diverges",
                              source="seed 003 §Warmup是怎样起作用的", claimed="plateau, then NaN", computed=computed,
                              ok=2 * len(diverged) > len(post_nw), reason="what most seeds did"))
    return vd.VerdictTable(rows)


def updates(runs: dict[str, dict], show: list[tuple[str, str]]) -> vd.VerdictTable:
    """Which blocks learn first: Adam's first step vs SGD's, and the mean bottom/top update ratio
    without and with warmup. ``show``: (Adam no warmup, Adam warmup, SGD no warmup)."""
    ratio = {k: statistics.median(ex.bottom_top_update_ratio(h) for h in runs[k[0]][k[1]]) for k in show}
    first = {k: statistics.median(ex.bottom_top_update_ratio(h, 1) for h in runs[k[0]][k[1]]) for k in show}
    adam, warm, sgd = show
    lo, hi = ADAM_FIRST_STEP_BAND
    return vd.VerdictTable([
        vd.check_graded(claim="Adam's first step moves every block by O(η), whatever its gradient",
                        source="seed 003 §我们真的担心梯度消失吗", claimed="block 1 ≈ block N, where SGD's are not",
                        computed=f"first step, ‖Δθ_1‖/‖θ_1‖ ÷ ‖Δθ_N‖/‖θ_N‖ (median over seeds): Adam {first[adam]:.2f}, "
                                 f"SGD {first[sgd]:.2f}",
                        holds=lo < first[adam] < hi and not lo < first[sgd] < hi,
                        approx=lo < first[adam] < hi,
                        reason=f"inside ({lo:g}, {hi:g}) counts as ≈; SGD's ratio is the gradients' own. Holds when SGD's "
                               "falls outside, so the gradients do differ; approximately when both are inside, because "
                               "then the gradients at this depth are too even for the contrast to show"),
        vd.check_true(claim="Warmup keeps the lower blocks learning along with the top ones",
                      source="seed 003 §Warmup是怎样起作用的", claimed="bottom/top update ratio higher with warmup",
                      computed=f"mean over the run (median over seeds): no warmup {ratio[adam]:.3f}, warmup {ratio[warm]:.3f}, "
                               f"SGD {ratio[sgd]:.3f}",
                      ok=ratio[warm] > ratio[adam], reason="mean of (block 1 update ÷ block N update) over the tracked steps"),
    ])
