"""Verdicts of the chapter "Training 1000 layers" on what the seeds and the DeepNet paper claim about
very deep training: each function returns a :class:`~deepnotes.show.verdicts.VerdictTable`; every
threshold is named here, and every status is computed from the runs or the derivations."""
from __future__ import annotations

import math
import statistics

import sympy as sp

from deepnotes.chapters.thousand_layers import derive
from deepnotes.chapters.thousand_layers import experiments as ex
from deepnotes.core import scaling
from deepnotes.core.budget import Budget
from deepnotes.core.ensemble_probes import StreamProfile
from deepnotes.core.derive import deepnorm_ratio
from deepnotes.core.symbols import N, alpha, lam
from deepnotes.show import verdicts as vd

# thresholds
LEARNED = 0.5                 # a run "trains" past this fraction from the plateau to the floor (as in the other chapters)
LEFT_PLATEAU = 0.1            # a run has left the context-free plateau past this fraction (twice the largest
                              # |fraction| of the runs that learn nothing at the cpu budget, 0.05)
BASELINE_DEPTH = 10           # the shallow stack DeepNorm's 1000 blocks are compared with: DeepNet's shallow
                              # models are 6L-6L and 18L-18L (its Table 1); the frontier depth nearest this one is used
IDENTITY_GONE = 0.1           # |cos(x_N, x_0)| below this: the identity path is lost
IDENTITY_KEPT = 0.9           # cos(x_N, x_0) above this: the identity path is kept
VANISHED = 1e-3               # ‖g_1‖/‖g_N‖ below this: the lowest block's gradient has vanished
HEALTHY_BAND = (0.1, 10.0)    # seed 000 annotated eq. (70): 0.1 ≤ G(l)/G(N) ≤ 10 is "healthy"
ARITHMETIC_RTOL = 1e-9        # a derivation against the plain formula

DEEPNET = "DeepNet (arXiv 2203.00555)"
THOUSAND_LAYERS = "seed 000 (opening) claim 4; seed 001 §前言 claim 5"          # "DeepNet trains 1000 layers"
WARMUP_SOURCE = "seed 000 §增量爆炸 claim 8; seed 001 §1）增量爆炸 claim 11"     # warmup from at most η/N
POST_ENDS_BETTER = "seed 000 §前馈梯度 claim 12; seed 001 §3）FFN 层梯度 claim 15"   # Pre trains easier, Post ends better
PRE_VS_POST = POST_ENDS_BETTER + "; seed 002 §残差连接 claim 19"                   # … and Pre is easier to optimize


def _median_fraction(runs: ex.Runs, label: str, depth: int, window: int) -> float:
    return statistics.median(ex.fraction_learned(runs.histories[(label, depth)], window))


def _fractions_text(runs: ex.Runs, label: str, depth: int, window: int) -> str:
    fr = ex.fraction_learned(runs.histories[(label, depth)], window)
    return ", ".join("diverged" if not math.isfinite(f) else f"{f:.2f}" for f in fr)


def predictions(depth: int) -> vd.VerdictTable:
    """The derived constants against DeepNet's published formulas (the plain functions of
    :mod:`deepnotes.core.scaling`), and the warmup rule's consequence at ``depth``."""
    c = derive.deepnorm_constants(depth)
    enc = [float(x) for x in c["at"]["encoder"]]
    dec = [float(x) for x in c["at"]["encdec decoder"]]
    paper_enc = scaling.deepnorm_coefficients(depth)
    paper_dec = scaling.deepnorm_decoder_coefficients_encdec(depth)
    wl = derive.warmup_length()
    return vd.VerdictTable([
        vd.check_number(f"Encoder / decoder-only at N = {depth}: α = (2N)^(1/4)", f"{DEEPNET} Fig. 2; seed 000 §初步结论 eq. (14); seed 001 §5）初步结论 eq. (14)",
                        paper_enc[0], enc[0], rtol=ARITHMETIC_RTOL),
        vd.check_number("… and β = (8N)^(-1/4)", f"{DEEPNET} Fig. 2", paper_enc[1], enc[1], rtol=ARITHMETIC_RTOL),
        vd.check_number(f"Decoder of an encoder-decoder at M = {depth}: α = (3M)^(1/4)", f"{DEEPNET} Fig. 2",
                        paper_dec[0], dec[0], rtol=ARITHMETIC_RTOL),
        vd.check_number("… and β = (12M)^(-1/4)", f"{DEEPNET} Fig. 2", paper_dec[1], dec[1], rtol=ARITHMETIC_RTOL),
        vd.check_expr("Warmup: start at a learning rate of order η/N", WARMUP_SOURCE,
                      derive.eta / N, wl["start_lr"],
                      f"SymPy: ΔL_N(η') = ΔL_1(η) gives η' = η/N; a linear warmup of T steps starts at η/T, so "
                      f"T ≥ {sp.sstr(wl['min_warmup'])} = {depth} steps at N = {depth}"),
    ])


def at_initialization(profiles: dict[str, StreamProfile], predicted: dict[str, list[float]]) -> vd.VerdictTable:
    """The identity path and the gradient per block of each style at the headline depth."""
    depth = len(profiles["post"].grad_norms)
    cos = {s: p.cos_x0[-1] for s, p in profiles.items()}
    ratio = {s: p.grad_norms[0] / p.grad_norms[-1] for s, p in profiles.items()}
    lo, hi = HEALTHY_BAND
    healthy = {s: lo <= min(p.grad_norms) / p.grad_norms[-1] and max(p.grad_norms) / p.grad_norms[-1] <= hi
               for s, p in profiles.items()}
    return vd.VerdictTable([
        vd.check_true(claim=f"Post-LN loses the identity path: x_0's weight (1+v)^(-l/2) is gone at N = {depth}",
                      source="seed 002 §残差连接 eq. (14); seed 003 §LN真的能缓解梯度消失 eq. (4), claim 7; "
                             "seed 000 annotated §11.3 claim §11.3.1",
                      claimed=f"2^(-{depth}) = {predicted['post'][-1]:.3g} (v = 1)",
                      computed=f"cos(x_N, x_0): post {cos['post']:.3f}, deepnorm {cos['deepnorm']:.3f} "
                               f"(derived {predicted['deepnorm'][-1]:.3f})",
                      ok=abs(cos["post"]) < IDENTITY_GONE and cos["deepnorm"] > IDENTITY_KEPT,
                      reason=f"holds if |cos| < {IDENTITY_GONE} for Post-LN while DeepNorm keeps > {IDENTITY_KEPT}"),
        vd.check_true(claim="Post-LN's lowest blocks get vanishing gradients at depth", source="seed 003 §LN真的能缓解梯度消失 claim 7; seed 003 §梯度消失说的是什么意思 claim 1; "
                             "seed 000 annotated §9.2 claim §9.2.1",
                      claimed="‖g_1‖/‖g_N‖ → 0 with depth",
                      computed=", ".join(f"{s} {r:.3g}" for s, r in ratio.items()),
                      ok=ratio["post"] < VANISHED and ratio["deepnorm"] > VANISHED,
                      reason=f"holds if Post-LN's ratio < {VANISHED:g} and DeepNorm's is not"),
        vd.check_true(claim=f"'Healthy' training has 0.1 ≤ G(l)/G(N) ≤ 10 for every l; DeepNorm meets it at N = {depth}",
                      source="seed 000 annotated eqs. (70), (72), §12.3 claim §12.3.2", claimed="DeepNorm inside the band",
                      computed=", ".join(f"{s}: {'inside' if ok else 'outside'}" for s, ok in healthy.items()),
                      ok=healthy["deepnorm"],
                      reason="measured with parameter-gradient norms per block (the annotation's G is ∂L/∂x_l)"),
    ])


def training(runs: ex.Runs, budget: Budget) -> vd.VerdictTable:
    """The claims about training at the headline depth, on the frontier and past it."""
    sub = budget.thousand_layers
    n, w = sub.depth, sub.loss_window
    f = {lab: _median_fraction(runs, lab, n, w) for lab in ex.HEADLINE}
    text = {lab: _fractions_text(runs, lab, n, w) for lab in ex.HEADLINE}
    curves = ex.frontier(runs, w, (*sub.frontier_depths, n))
    reach = {lab: ex.deepest_learning(c, LEARNED) for lab, c in curves.items()}
    shallow = min(sub.frontier_depths, key=lambda d: abs(d - BASELINE_DEPTH))
    condition = deepnorm_ratio("sgd")["condition"].lhs                      # 2N(λ/α)², = 1 in Su's analysis
    pressure = {lab: float(condition.subs({N: n, alpha: cfg.skip_alpha, lam: cfg.branch_beta}))
                for lab in ("deepnorm", "deepnorm, α only", "deepnorm, β only")
                for cfg in [ex.variant_config(lab, n, budget)]}
    eligible = [d for d in sub.frontier_depths if d <= sub.warmup]
    mean_frontier = {lab: sum(max(x, -1.0) for x in curves[lab].values()) / len(curves[lab]) for lab in ("pre", "post")}
    deepest = runs.histories[("deepnorm", sub.deepest)][0]
    deepest_f = deepest.fraction_learned(w)
    rows = [
        vd.check_graded(claim=f"Post-LN does not train at N = {n} (without help), where DeepNorm does",
                        source=f"{DEEPNET} §5, Table 1 (Post-LN unstable from 50L-50L on WMT-17, DeepNet "
                               f"to 100L-100L); §3, Fig. 3(c) (18L-18L Post-LN does not converge); §6, Table 2 "
                               f"(1,000 layers); {THOUSAND_LAYERS}",
                        claimed="post fails, deepnorm trains", computed=f"fraction learned: post {text['post']}; "
                        f"deepnorm {text['deepnorm']}",
                        holds=f["post"] < LEARNED <= f["deepnorm"],
                        approx=f["post"] < LEFT_PLATEAU <= f["deepnorm"],
                        reason=f"medians over seeds: trained ≥ {LEARNED}; approximately: only DeepNorm left the plateau "
                               f"(≥ {LEFT_PLATEAU}); same Adam rate {runs.lr:g} and {runs.steps} steps"),
        vd.check_graded(claim=f"DeepNorm trains {n} blocks with the learning rate that trains {shallow}",
                        source=f"{DEEPNET} title, abstract; {THOUSAND_LAYERS}", claimed=f"trains at N = {n}",
                        computed=f"fraction learned {text['deepnorm']} at N = {n}, "
                                 f"{curves['deepnorm'][shallow]:.2f} at N = {shallow}",
                        holds=f["deepnorm"] >= LEARNED and curves["deepnorm"][shallow] >= LEARNED,
                        approx=f["deepnorm"] >= LEFT_PLATEAU and curves["deepnorm"][shallow] >= LEARNED,
                        reason=f"one Adam rate ({runs.lr:g}) at both depths; trained ≥ {LEARNED}, approximately: "
                               f"left the plateau (≥ {LEFT_PLATEAU}) at N = {n}"),
        vd.check_graded(claim="Both constants are needed: branch gradients O(β/α) with 2N(β/α)² ≤ 1",
                        source="seed 000 §初步结论 claim 17; seed 001 §5）初步结论 claims 20, 21 (λ/α = 1/√(2N))",
                        claimed="α only and β only fail, both together train",
                        computed="2N(β/α)²: " + ", ".join(f"{lab.replace('deepnorm', 'DN')} {p:.3g} → learned "
                                                            f"{f[lab]:.2f}" for lab, p in pressure.items()),
                        holds=f["deepnorm"] >= LEARNED and max(f["deepnorm, α only"], f["deepnorm, β only"]) < LEARNED,
                        approx=f["deepnorm"] >= LEFT_PLATEAU > max(f["deepnorm, α only"], f["deepnorm, β only"]),
                        reason="Su's condition (SGD's) is 2N(λ/α)² = 1; the computed column gives each variant's value; "
                               f"approximately: only both together left the plateau (≥ {LEFT_PLATEAU})"),
        vd.check_true(claim="Pre-LN is easier to train than Post-LN", source=PRE_VS_POST,
                      claimed="pre trains where post does not",
                      computed=f"mean fraction learned over N = {', '.join(map(str, sorted(curves['pre'])))}: "
                               f"pre {mean_frontier['pre']:.2f}, post {mean_frontier['post']:.2f}; at N = {n}: "
                               f"pre {text['pre']}, post {text['post']}",
                      ok=mean_frontier["pre"] > mean_frontier["post"],
                      reason="mean over the frontier's depths (a diverged run counts −1), no warmup for either"),
        vd.uncheckable("…but Post-LN ends better than Pre-LN", POST_ENDS_BETTER, "post's final quality is better",
                       f"needs runs trained to convergence; these stop after {runs.steps} steps, far from it"),
        vd.check_true(claim="ReZero (every gate starting at 0) trains deep stacks without warmup",
                      source="seed 002 §残差连接 eq. (17), claim 22; ReZero (arXiv 2003.04887)", claimed=f"trains at N = {n}",
                      computed=f"fraction learned {text['rezero']}", ok=f["rezero"] >= LEARNED,
                      reason=f"median over seeds against {LEARNED}"),
    ]
    warm = curves["post, warmup"]
    claim_warm = "A warmup whose first step is at most η/N lets Post-LN train at depth N"
    if not eligible:
        rows.append(vd.uncheckable(claim_warm, WARMUP_SOURCE, f"post + warmup {sub.warmup} trains for N ≤ {sub.warmup}",
                                   f"no frontier depth is ≤ the warmup ({sub.warmup} steps) at the {budget.name} budget"))
    elif max(warm.values()) < LEARNED and max(curves["post"].values()) < LEARNED:
        rows.append(vd.uncheckable(
            claim_warm, WARMUP_SOURCE, f"post + warmup {sub.warmup} trains for N ≤ {sub.warmup}",
            f"Post-LN trains at no depth here, with or without warmup (best {max(warm.values()):.2f}, "
            f"{max(curves['post'].values()):.2f}), not even at N = {min(sub.frontier_depths)}: its failure is the step count's, so "
            "warmup's reach cannot be seen"))
    else:
        rows.append(vd.check_true(
            claim=claim_warm, source=WARMUP_SOURCE, claimed=f"post + warmup {sub.warmup} trains for N ≤ {sub.warmup}",
            computed=", ".join(f"N = {d}: {warm[d]:.2f}" for d in sorted(warm))
            + f"; deepest trained: warmup {reach['post, warmup']}, none {reach['post']}",
            ok=all(warm[d] >= LEARNED for d in eligible) and warm[n] < LEARNED,
            reason=f"trains at the depths N ≤ T = {sub.warmup} (η/T ≤ η/N) and not at N = {n} (first step "
                   f"{n / sub.warmup:.3g}× η/N)"))
    stable = not deepest.diverged and deepest.final_loss(w) < deepest.losses[0]   # ends below where it started
    rows += [
        vd.check_graded(claim="The analysis lets 1000 layers and deeper train stably",
                        source="seed 000 annotated §13 claim §13.7", claimed=f"DeepNorm trains stably at N = {sub.deepest}",
                        computed="diverged" if deepest.diverged else
                        f"fraction learned {deepest_f:.2f} in {runs.steps} steps; loss {deepest.losses[0]:.3f} → "
                        f"{deepest.final_loss(w):.3f} (highest {max(deepest.losses):.3f})",
                        holds=stable and deepest_f >= LEARNED, approx=stable,
                        reason=f"one seed at the budget's deepest stack, same rate and steps as everywhere; stable: no "
                               f"divergence and a final loss below the first; approximately: stable but not trained "
                               f"(≥ {LEARNED})"),
        vd.uncheckable("A 200-layer deep and narrow model (3.2 B parameters) beats a 48-layer wide one (12 B)",
                       "seed 000 §事后分析 claim 28, figure 1; seed 001 §7）事后分析 claim 34, figure 2", "200L beats 48L on multilingual translation",
                       "needs multilingual translation at billions of parameters; nothing offline measures it"),
    ]
    return vd.VerdictTable(rows)


def summary_rows(runs: ex.Runs, depth: int, window: int) -> list[tuple[str, str, str, str]]:
    """Per headline variant: fractions learned per seed, the step it got half-way (median), and
    seconds per member-step of its ensemble."""
    rows = []
    for lab in ex.HEADLINE:
        hists = runs.histories[(lab, depth)]
        halves = [h.steps_to(0.5, window) for h in hists]
        rows.append((lab, _fractions_text(runs, lab, depth, window),
                     ", ".join("never" if s is None else str(s) for s in halves),
                     f"{runs.seconds_per_member_step(lab, depth):.2f}"))
    return rows


def summary_markdown(runs: ex.Runs, depth: int, window: int) -> str:
    """:func:`summary_rows` as a Markdown table."""
    head = ("| variant | fraction learned (per seed) | step half-way (per seed) | s per member-step |\n"
            "| --- | --- | --- | --- |\n")
    return head + "\n".join(f"| {a} | {b} | {c} | {d} |" for a, b, c, d in summary_rows(runs, depth, window))
