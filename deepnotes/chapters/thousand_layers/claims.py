"""Verdicts of the chapter "Training 1000 layers" on what the seeds and the DeepNet paper claim about
very deep training: each function returns a :class:`~deepnotes.show.verdicts.VerdictTable`; every
threshold is named here, and every status is computed from the runs or the derivations."""

from __future__ import annotations

import functools
import math
import statistics

import sympy as sp

from deepnotes.chapters.thousand_layers import derive
from deepnotes.chapters.thousand_layers import experiments as ex
from deepnotes.chapters.thousand_layers.budget import sizes
from deepnotes.core import scaling
from deepnotes.core.config import Budget, get_budget
from deepnotes.core.derive import N, alpha, deepnorm_ratio, lam
from deepnotes.core.measure import NOISE_SIGMAS, StreamProfile, unrelated_cosine_floor
from deepnotes.core.validate import Count, Depth, Finite, Positive
from deepnotes.cost.model import Derivations
from deepnotes.show import verdicts as vd
from deepnotes.show.cite import cite
from deepnotes.show.say import Sentence, Statement, link, say, sentence

# Thresholds, fixed from the task before any run. A run's "fraction learned" is
# (plateau − final loss)/(plateau − floor): 0 on the Markov language's context-free plateau (the loss of
# predicting every token from the unigram frequencies alone), 1 at its floor (the entropy rate, the
# best any model can do). Nothing below depends on what this build's runs gave.
TRAINED = 0.5  # a run "trains": it got at least half-way from the plateau to the floor, i.e.
# it learned more of the language's context than it left unlearned
# "diverged": a non-finite loss, or one above BLOWUP_FACTOR (10) × max(first loss, plateau): History.observe.
# "stable": trained (≥ TRAINED) with no seed diverged.
SHALLOW_DEPTH = 6  # DeepNet's base models, 6L-6L: Post-LN trains them (§5, Table 1)
FAILING_DEPTH = 18  # DeepNet's 18L-18L Post-LN does not converge (§3, Fig. 3(c))
IDENTITY_GONE = 0.1  # |cos(x_N, x_0)| below this (or below the noise of unrelated vectors): the identity path is lost
IDENTITY_KEPT = 0.9  # cos(x_N, x_0) above this: the identity path is kept
VANISHED = 1e-3  # ‖g_1‖/‖g_N‖ below this: the lowest block's gradient has vanished
HEALTHY_BAND = (0.1, 10.0)  # seed 000 annotated eq. (70): 0.1 ≤ G(l)/G(N) ≤ 10 is "healthy"
PRINTED_GROWTH = 1.045  # seed 000 annotated eq. (72): G(1)/G(1000) = 1.045^1000, printed as ≈ 2.1
ARITHMETIC_RTOL = 1e-9  # a derivation against the plain formula
DEEPNET = "DeepNet (arXiv 2203.00555)"
THOUSAND_LAYERS = "seed 000 (opening) claim 4; seed 001 §前言 claim 5"  # "DeepNet trains 1000 layers"
WARMUP_SOURCE = "seed 000 §增量爆炸 claim 8; seed 001 §1）增量爆炸 claim 11"  # warmup from at most η/N
WARMUP_WORKS = "seed 000 §增量爆炸 claim 8.1; seed 000 §增量爆炸 claim 8; seed 001 §1）增量爆炸 claim 11"  # ... trains
POST_ENDS_BETTER = "seed 000 §前馈梯度 claim 12.1; seed 001 §3）FFN 层梯度 claim 15"  # … but Post ends better
PRE_VS_POST = (  # Pre trains more easily than Post
    "seed 000 §前馈梯度 claim 12; seed 001 §3）FFN 层梯度 claim 15; seed 002 §残差连接 claim 19"
)
PRE_VS_POST_TESTS = ("claim 12", "claim 15", "claim 19")  # each states it (claim 15 with 12.1's "Post ends better")

GPT3_175B = (96, 12288, 50257)  # GPT-3 175B's layers, d_model, vocabulary (Brown et al. 2020, Table 2.1)


def predictions(depth: Depth) -> vd.VerdictTable:
    """The derived constants against DeepNet's published formulas (the plain functions of
    :mod:`deepnotes.core.scaling`), and the warmup rule's consequence at ``depth``."""
    c = derive.deepnorm_constants(depth)
    enc = [float(x) for x in c["at"]["encoder"]]
    dec = [float(x) for x in c["at"]["encdec decoder"]]
    paper_enc = scaling.deepnorm_coefficients(depth)
    paper_dec = scaling.deepnorm_decoder_coefficients_encdec(depth)
    wl = derive.warmup_length()
    layers, width, vocab = GPT3_175B
    gpt3 = 12 * layers * width**2 + vocab * width  # 4d² attention + 8d² FFN per block, and the embedding
    return vd.VerdictTable(
        [
            vd.check_true(
                claim="GPT-3 has over a hundred billion parameters yet only 96 layers",
                source=cite(
                    "seed 000 claim 1; seed 001 §前言 claim 1; Brown et al. 2020 (GPT-3), Table 2.1",
                    tests=("000 claim 1", "001 claim 1"),
                ),
                claimed="> 1e11 parameters at 96 layers",
                computed=f"12·L·d² + V·d at L = {layers}, d = {width}, V = {vocab}: {gpt3:.3g}",
                ok=gpt3 > 1e11,
                reason="the parameter count recomputed from GPT-3 175B's published depth and width (its Table 2.1; "
                "biases and LayerNorms add < 0.1 %)",
            ),
            vd.check_number(
                f"Encoder / decoder-only at N = {depth}: α = (2N)^(1/4)",
                cite(f"{DEEPNET} Fig. 2; seed 000 §初步结论 eq. (14); seed 001 §5）初步结论 eq. (14)", paper="DeepNet"),
                paper_enc[0],
                enc[0],
                rtol=ARITHMETIC_RTOL,
            ),
            *(
                vd.check_number(claim, cite(f"{DEEPNET} Fig. 2", paper="DeepNet"), said, got, rtol=ARITHMETIC_RTOL)
                for claim, said, got in (
                    ("… and β = (8N)^(-1/4)", paper_enc[1], enc[1]),
                    (f"Decoder of an encoder-decoder at M = {depth}: α = (3M)^(1/4)", paper_dec[0], dec[0]),
                    ("… and β = (12M)^(-1/4)", paper_dec[1], dec[1]),
                )
            ),
            vd.check_expr(
                "Warmup: start at a learning rate of order η/N",
                cite(WARMUP_SOURCE, tests=("claim 8", "claim 11")),
                derive.eta / N,
                wl["start_lr"],
                f"SymPy: ΔL_N(η') = ΔL_1(η) gives η' = η/N; a linear warmup of T steps starts at η/T, so "
                f"T ≥ {sp.sstr(wl['min_warmup'])} = {depth} steps at N = {depth}",
            ),
        ]
    )


def at_initialization(
    profiles: dict[str, list[StreamProfile]], predicted: dict[str, list[float]], width: Count
) -> vd.VerdictTable:
    """The identity path and the gradient per block of each style at the headline depth, each row judged on
    every seed's profile (initialization and probe batch s) through the door: the fraction of seeds that show
    it, in most seeds (``width``: the stream's, which sets the cosine's noise floor)."""
    seeds = len(profiles["post"])
    depth = len(profiles["post"][0].grad_norms)
    gone = max(IDENTITY_GONE, unrelated_cosine_floor(width))
    cos = {s: [p.cos_x0[-1] for p in ps] for s, ps in profiles.items()}
    ratio = {s: [p.grad_norms[0] / p.grad_norms[-1] for p in ps] for s, ps in profiles.items()}
    lo, hi = HEALTHY_BAND
    band = {s: [_stream_band(p) for p in ps] for s, ps in profiles.items()}
    each = range(seeds)
    return vd.VerdictTable(
        [
            vd.check_each_seed(
                claim=f"Post-LN loses the identity path: x_0's weight (1+v)^(-l/2) is gone at N = {depth}",
                source=cite(
                    "seed 002 §残差连接 eq. (14); seed 003 §LN真的能缓解梯度消失 eq. (4), claim 7; "
                    "seed 000 annotated §11.3 claim §11.3.1",
                    tests=("eq. (14)", "eq. (4)", "claim 7"),
                ),
                claimed=f"2^(-{depth}) = {predicted['post'][-1]:.3g} (v = 1)",
                computed=f"cos(x_N, x_0): post {vd.seeds_text(cos['post'])}, deepnorm {vd.seeds_text(cos['deepnorm'])} "
                f"(derived {predicted['deepnorm'][-1]:.3f})",
                shows=[abs(cos["post"][k]) < gone and cos["deepnorm"][k] > IDENTITY_KEPT for k in each],
                reason=f"a seed shows it if Post-LN's |cos| < {gone:.2g} (the larger of {IDENTITY_GONE:g} and the "
                f"noise floor {NOISE_SIGMAS}/√d of unrelated width-{width} vectors: below it x_0's weight cannot be "
                f"told from none) while DeepNorm keeps > {IDENTITY_KEPT}",
            ),
            vd.check_each_seed(
                claim="Post-LN's lowest blocks get vanishing gradients at depth",
                source=cite(
                    "seed 003 §LN真的能缓解梯度消失 claim 7; seed 003 §梯度消失说的是什么意思 claim 1; "
                    "seed 000 annotated §9.2 claim §9.2.1",
                    tests="claim 7",
                ),
                claimed="‖g_1‖/‖g_N‖ → 0 with depth",
                computed=", ".join(f"{s} {vd.seeds_text(r)}" for s, r in ratio.items()),
                shows=[ratio["post"][k] < VANISHED < ratio["deepnorm"][k] for k in each],
                reason=f"a seed shows it if Post-LN's ratio < {VANISHED:g} and DeepNorm's is not",
            ),
            vd.check_each_seed(
                claim=f"A {depth}-block DeepNorm stack's G(l)/G(N) lies in the 'healthy' band {lo:g}–{hi:g} at init",
                source=cite(
                    "seed 000 annotated §12.3 claim §12.3.2; seed 000 annotated eqs. (70), (72)", tests="claim §12.3.2"
                ),
                claimed=f"DeepNorm: {lo:g} ≤ G(l)/G(N) ≤ {hi:g} for every l",
                computed="; ".join(
                    f"{s} " + ", ".join(f"{low:.3g}–{high:.3g}" for low, high in bands) for s, bands in band.items()
                ),
                shows=[lo <= low and high <= hi for low, high in band["deepnorm"]],
                reason="G(l) = ‖∂L/∂x_l‖, the gradient reaching block l's output, the annotation's quantity, per "
                f"seed. The claim rests on eq. (72)'s 1.045^1000 ≈ 2.1, which is {PRINTED_GROWTH**1000:.2g} (the "
                "increment chapter): the measured ratio is what decides it",
            ),
        ]
    )


def _stream_band(p: StreamProfile) -> tuple[float, float]:
    """(min, max) over l ≥ 1 of G(l)/G(N), G(l) = ‖∂L/∂x_l‖."""
    return min(p.stream_grads[1:]) / p.stream_grads[-1], max(p.stream_grads[1:]) / p.stream_grads[-1]


def init_reading(
    profiles: dict[str, list[StreamProfile]], predicted: dict[str, list[float]], width: Count
) -> Statement:
    """The profiles at initialization in words, every number read from them (each the median over seeds, the
    seeds' spread where it matters), each style's name linked to the row of :func:`at_initialization` that judges
    it: where Post-LN's cosine to x_0 is first below the noise floor and how it compares with the derived weight in
    the first blocks, its first-over-last gradient ratio; DeepNorm's largest distance from the derived weight and
    its G(l)/G(N) band; Pre-LN's stream RMS at the top against √(1 + 2N) and its gradient ratio; ReZero's largest
    distance from the identity. Measurements only: the rows' statuses say what they decide."""
    identity, vanishing, healthy = at_initialization(profiles, predicted, width)
    gone = max(IDENTITY_GONE, unrelated_cosine_floor(width))
    med = statistics.median

    def first_below(p: StreamProfile) -> int | None:
        return next((l for l, c in enumerate(p.cos_x0) if l and abs(c) < gone), None)

    reached = [first_below(p) for p in profiles["post"]]
    where = (
        f"is first below the noise floor ({gone:.2g}) at block " + ", ".join(str(l) for l in reached) + " (per seed)"
        if all(l is not None for l in reached)
        else "is not below the noise floor in every seed"
    )
    early = range(1, min(4, len(predicted["post"])))
    post_early = [med(p.cos_x0[l] for p in profiles["post"]) for l in early]
    ratio = {s: med(p.grad_norms[0] / p.grad_norms[-1] for p in ps) for s, ps in profiles.items()}
    deep_gap = med(
        max(abs(c - w) for c, w in zip(p.cos_x0, predicted["deepnorm"], strict=True)) for p in profiles["deepnorm"]
    )
    bands = [_stream_band(p) for p in profiles["deepnorm"] if p.stream_grads]
    band = f"{med(lo for lo, _ in bands):.3g}–{med(hi for _, hi in bands):.3g}" if bands else "not measured"
    pre_top = med(p.rms[-1] / p.rms[0] for p in profiles["pre"])
    rezero_gap = max(abs(c - 1) for p in profiles["rezero"] for c in p.cos_x0)
    return Statement(
        [
            Sentence(f"Read from the profiles above, the median over {len(profiles['post'])} seeds."),
            sentence(
                link(identity, "Post-LN's cosine to $x_0$"),
                f" {where}; in blocks {early[0]}–{early[-1]} it reads "
                + ", ".join(f"{c:.3f}" for c in post_early)
                + " against the derived weight "
                + ", ".join(f"{predicted['post'][l]:.3f}" for l in early)
                + " (the derivation takes the branches orthogonal to $x_0$, of second moment exactly 1). ",
                link(vanishing, "Its first block's gradient"),
                f" is {ratio['post']:.2g} times its last one's.",
            ),
            sentence(
                f"DeepNorm's cosine is within {deep_gap:.3f} of the derived weight at every block, and ",
                link(healthy, "the gradient reaching each block's output"),
                f", $G(l) = \\lVert\\partial L/\\partial x_l\\rVert$ (the quantity of source 000's annotated eq. "
                f"(70), not the parameter gradients the figure plots), spans {band} of $G(N)$.",
            ),
            Sentence(
                f"Pre-LN's stream RMS at the top is {pre_top:.3g} times its input's, against $\\sqrt{{1+2N}}$ = "
                f"{predicted['pre_rms'][-1]:.3g}; its first block's gradient is {ratio['pre']:.3g} times its last "
                "one's (each deep branch's output is divided by an ever larger stream). ReZero's cosine to $x_0$ is "
                f"1 within {rezero_gap:.1e} at every block: the identity at initialization."
            ),
        ]
    )


def _nearest(depths, target: int) -> int:
    return min(depths, key=lambda d: abs(d - target))


def fractions_text(runs: ex.Runs, window: Count, label: str, depth: Depth, lr: Positive | None = None) -> str:
    """One point's fractions learned as text: the seeds' median, then every seed ("0.61 (0.50, 0.73, 0.61)")."""
    return vd.seeds_text(runs.fractions(label, depth, window, lr))


# the headline rows' sources: DeepNet's tables (Post-LN fails where DeepNet trains: the paper's claim), its 1,000-layer
# result (seed 000's claim 4 states it), its update bound (Su's SGD condition, claim 17, is judged in magnitude
# decomposition)
POST_FAILS = cite(
    f"{DEEPNET} §5, Table 1 (Post-LN unstable from 50L-50L on WMT-17, DeepNet to 100L-100L); "
    f"§6, Table 2 (1,000 layers); {THOUSAND_LAYERS}",
    paper="DeepNet",
)
DEEPNORM_TRAINS = cite(
    f"{DEEPNET} title, abstract, §6 Fig. 8 (BLEU rising with depth to 1,000 layers); {THOUSAND_LAYERS}",
    tests=("claim 4", "claim 5"),
)
UPDATE_BOUND = cite(
    f"{DEEPNET} §4 (the update bound on α and β); seed 000 §初步结论 claim 17; "
    "seed 001 §5）初步结论 claims 20, 21 (λ/α = 1/√(2N))",
    paper="DeepNet",
)


def _headline_rows(runs: ex.Runs, budget: Budget) -> list[vd.Verdict]:
    """DeepNet's headline at N: Post-LN fails where DeepNorm trains, shallow Post-LN, both constants needed."""
    sub = sizes(budget)
    n, w = sub.depth, sub.loss_window
    per_seed = functools.partial(runs.fractions, window=w)  # fractions learned; check_outcome takes the median
    shallow, failing = _nearest(sub.frontier_depths, SHALLOW_DEPTH), _nearest(sub.frontier_depths, FAILING_DEPTH)
    condition = deepnorm_ratio("sgd")["condition"].lhs  # 2N(λ/α)², = 1 in Su's analysis
    pressure = {
        lab: float(condition.subs({N: n, alpha: cfg.skip_alpha, lam: cfg.branch_beta}))
        for lab in ("deepnorm", *ex.APART)
        for cfg in [ex.variant_config(lab, n, budget)]
    }
    same = f"Adam {runs.lr:g}, {runs.steps} steps, no warmup"
    return [
        vd.check_outcome(
            claim=f"Post-LN does not train at N = {n} (without help), where DeepNorm does",
            source=POST_FAILS,
            expected={"post": False, "deepnorm": True},
            measured={"post": per_seed("post", n), "deepnorm": per_seed("deepnorm", n)},
            threshold=TRAINED,
            computed=f"fraction learned, median (range): post {fractions_text(runs, w, 'post', n)}; deepnorm "
            f"{fractions_text(runs, w, 'deepnorm', n)}",
            reason=f"trained: ≥ {TRAINED} of the way from the plateau to the floor; {same} for both",
        ),
        _shallow_post_verdict(runs, w, shallow, failing),
        vd.check_outcome(
            claim=f"DeepNorm trains {n} blocks with the learning rate that trains {shallow}",
            source=DEEPNORM_TRAINS,
            expected={f"deepnorm N = {shallow}": True, f"deepnorm N = {n}": True},
            measured={
                f"deepnorm N = {shallow}": per_seed("deepnorm", shallow),
                f"deepnorm N = {n}": per_seed("deepnorm", n),
            },
            threshold=TRAINED,
            computed=f"deepnorm at N = {shallow}: {fractions_text(runs, w, 'deepnorm', shallow)}; at N = {n}: "
            f"{fractions_text(runs, w, 'deepnorm', n)}",
            reason=f"{same} at both depths",
        ),
        vd.check_outcome(
            claim="DeepNet's bound 2N(β/α)² ≤ 1 separates the runs that train from those that do not "
            "(one constant removed breaks it)",
            source=UPDATE_BOUND,
            expected={"deepnorm": True, **{lab: False for lab in ex.APART}},
            measured={lab: per_seed(lab, n) for lab in ("deepnorm", *ex.APART)},
            threshold=TRAINED,
            computed="2N(β/α)² → fraction learned: "
            + "; ".join(
                f"{lab.replace('deepnorm', 'DN')} {p:.3g} → {fractions_text(runs, w, lab, n)}"
                for lab, p in pressure.items()
            ),
            reason=f"at N = {n}, {same}; Su's condition (for SGD) is 2N(λ/α)² = 1",
        ),
    ]


def _pre_easier_row(trained: dict[str, set[int]], same: str) -> vd.Verdict:
    """Claim 12: Pre-LN trains at depths where Post-LN does not, never the reverse (``trained``: the depths
    where each style trained). Neither trained anywhere: no contrast, not checkable here."""
    pre_only, post_only = trained["pre"] - trained["post"], trained["post"] - trained["pre"]
    computed = (
        f"trained (median ≥ {TRAINED}) at N = — pre: {', '.join(map(str, sorted(trained['pre']))) or 'none'}; "
        f"post: {', '.join(map(str, sorted(trained['post']))) or 'none'}"
    )
    claimed = "pre trains at depths where post does not, never the reverse"
    if not (trained["pre"] or trained["post"]):  # a comparison of two failures says nothing about which is easier
        return vd.uncheckable(
            "Pre-LN is easier to train than Post-LN",
            cite(PRE_VS_POST, tests=PRE_VS_POST_TESTS),
            claimed,
            f"neither style trained at any of the frontier's depths ({computed}; {same}): no contrast to judge",
        )
    return vd.check_true(
        claim="Pre-LN is easier to train than Post-LN",
        source=cite(PRE_VS_POST, tests=PRE_VS_POST_TESTS),
        claimed=claimed,
        computed=computed,
        ok=bool(pre_only) and not post_only,
        reason=f"over the frontier's depths, {same}",
    )


def _beyond_headline_rows(runs: ex.Runs, budget: Budget) -> list[vd.Verdict]:
    """Pre-LN vs Post-LN on the frontier, ReZero, warmup, the trainability map, past DeepNet, 200 layers."""
    sub = sizes(budget)
    n, w = sub.depth, sub.loss_window
    per_seed = functools.partial(runs.fractions, window=w)  # fractions learned; check_outcome takes the median
    depths = (*sub.frontier_depths, n)
    curves = ex.frontier(runs, w, depths)
    trained = {lab: {d for d, f in c.items() if f >= TRAINED} for lab, c in curves.items()}
    same = f"Adam {runs.lr:g}, {runs.steps} steps, no warmup"
    rows = []
    rows.append(_pre_easier_row(trained, same))
    rows.append(
        vd.uncheckable(
            "…but Post-LN ends better than Pre-LN",
            cite(POST_ENDS_BETTER, tests=("claim 12.1", "claim 15")),
            "post's final quality is better",
            f"needs runs trained to convergence; these stop after {runs.steps} steps",
        )
    )
    rows.append(
        vd.check_outcome(
            claim="ReZero (every gate starting at 0) trains deep stacks without warmup",
            source=cite(
                "seed 002 §残差连接 claim 22; seed 002 §残差连接 eq. (17); "
                "ReZero (arXiv 2003.04887) §4, Fig. 3 (Transformers to 128 layers)",
                tests="claim 22",
            ),
            expected={f"rezero N = {n}": True},
            measured={f"rezero N = {n}": per_seed("rezero", n)},
            threshold=TRAINED,
            computed=f"rezero at N = {n}: {fractions_text(runs, w, 'rezero', n)}",
            reason=same,
        )
    )
    rows.append(_warmup_verdict(runs, w, depths))
    rows.append(_rates_verdict(ex.trainability_map(runs, budget), w))
    rows.append(_deepest_verdict(runs, budget))
    rows.append(
        vd.uncheckable(
            "A 200-layer deep and narrow model (3.2 B parameters) beats a 48-layer wide one (12 B)",
            cite(
                "seed 000 §事后分析 claim 28, figure 1; seed 001 §7）事后分析 claim 34, figure 2",
                tests=("claim 28", "figure 1", "claim 34"),
            ),
            "200L beats 48L on multilingual translation",
            "needs multilingual translation at billions of parameters; nothing offline measures it",
        )
    )
    return rows


def training(runs: ex.Runs, budget: Budget) -> vd.VerdictTable:
    """The claims about training at the headline depth, on the frontier, on the map and past DeepNet;
    each tested in the direction its source makes it, on the seeds' median (the range beside it)."""
    return vd.VerdictTable(_headline_rows(runs, budget) + _beyond_headline_rows(runs, budget))


def _shallow_post_verdict(runs: ex.Runs, w: int, shallow: int, failing: int) -> vd.Verdict:
    """DeepNet's Post-LN: its 6L-6L trains, its 18L-18L does not (the frontier depths nearest those)."""
    claim = f"Post-LN trains DeepNet's shallow stack but not its {FAILING_DEPTH}-layer one"
    source = cite(
        f"{DEEPNET} §5, Table 1 (6L-6L Post-LN trains); §3, Fig. 3(c) (18L-18L Post-LN does not converge); "
        "seed 003 §我们真的担心梯度消失吗 claim 19 (deeper Post-Norm is harder to train)",
        tests="claim 19",
    )
    claimed = f"trains at N = {SHALLOW_DEPTH}, not at N = {FAILING_DEPTH}"
    if failing <= shallow:
        return vd.uncheckable(claim, source, claimed, f"the frontier has no depth near {FAILING_DEPTH} above {shallow}")
    return vd.check_outcome(
        claim=claim,
        source=source,
        expected={f"post N = {shallow}": True, f"post N = {failing}": False},
        measured={
            f"post N = {shallow}": runs.fractions("post", shallow, w),
            f"post N = {failing}": runs.fractions("post", failing, w),
        },
        threshold=TRAINED,
        computed=(
            f"post at N = {shallow}: {fractions_text(runs, w, 'post', shallow)}; "
            f"at N = {failing}: {fractions_text(runs, w, 'post', failing)}"
        ),
        reason=f"the frontier depths nearest DeepNet's ({shallow}, {failing}); one side of its encoder-decoder is a "
        f"stack of N blocks here; Adam {runs.lr:g}, {runs.steps} steps, no warmup",
    )


def _warmup_verdict(runs: ex.Runs, w: int, depths: tuple[int, ...]) -> vd.Verdict:
    """Warmup's reach, by its own rule (T = N warmup steps at N blocks), where Post-LN without it fails."""
    claim = "A warmup whose first step is at most η/N lets Post-LN train at depth N"
    tested = [d for d in depths if runs.has(ex.WARMED, d) and runs.median("post", d, w) < TRAINED]
    if not tested:
        return vd.uncheckable(
            claim,
            cite(WARMUP_WORKS, tests="claim 8.1"),
            "post + warmup (T = N) trains where post fails",
            "no depth here where Post-LN without warmup fails and a warmup of N steps fits in the run",
        )
    return vd.check_outcome(  # the depths are those where Post-LN without warmup fails: the contrast is shown
        claim=claim,
        source=cite(
            f"{WARMUP_WORKS}; {DEEPNET} §3, Fig. 4(a) (warmup steadies 18L-18L Post-LN's updates)", tests="claim 8.1"
        ),
        expected={f"post + warmup N = {d}": True for d in tested},
        measured={f"post + warmup N = {d}": runs.fractions(ex.WARMED, d, w) for d in tested},
        threshold=TRAINED,
        computed="; ".join(
            f"N = {d}: {fractions_text(runs, w, ex.WARMED, d)} (no warmup {fractions_text(runs, w, 'post', d)})"
            for d in tested
        ),
        reason=f"every depth where Post-LN fails without warmup and a warmup of T = N ≤ {runs.steps} steps fits; "
        f"first step η/T = η/N; Adam {runs.lr:g}",
    )


def _highest_trained_by_seed(tmap: ex.TrainabilityMap, depth: int, w: int) -> list[float | None]:
    """Per seed k (those every cell has): the highest rate at which DeepNorm's seed k trained at ``depth``."""
    n_seeds = min(len(tmap.histories[("deepnorm", d, r)]) for d in tmap.depths for r in tmap.rates)
    per_rate = {r: tmap.fractions("deepnorm", depth, r, w) for r in tmap.rates}
    return [max((r for r in tmap.rates if per_rate[r][k] >= TRAINED), default=None) for k in range(n_seeds)]


def _rates_verdict(tmap: ex.TrainabilityMap, w: int) -> vd.Verdict:
    """DeepNet's bound was derived for SGD and said to carry over to Adam: then the highest rate that
    trains DeepNorm would not fall with depth (the chapter's derivation says it falls like N^-1/2). Seed by
    seed (check_estimate over the seeds every cell of the map has; a seed that trains at no rate on the
    shallow side decides nothing)."""
    top, bottom = max(tmap.depths), min(tmap.depths)
    claim = (
        "DeepNorm's bound on the model update, derived for SGD, works for Adam: the rates that train it do "
        "not shrink with depth"
    )
    source = cite(
        f'{DEEPNET} §4.3 ("our analysis is based on SGD update, and we empirically verify it works well for Adam")',
        paper="DeepNet",
    )
    claimed = f"highest trained rate at N = {top} ≥ at N = {bottom}"
    if top == bottom:
        return vd.uncheckable(claim, source, claimed, f"the map has one depth ({top}) at this budget")
    low, high = _highest_trained_by_seed(tmap, bottom, w), _highest_trained_by_seed(tmap, top, w)

    def text(r):
        return "none" if r is None else f"{r:.2g}"

    pairs = [(lo, hi) for lo, hi in zip(low, high, strict=True) if lo is not None]
    computed = (
        "DeepNorm's highest trained Adam rate per seed, N = "
        + f"{bottom} → {top}: "
        + ", ".join(f"{text(lo)} → {text(hi)}" for lo, hi in zip(low, high, strict=True))
    )
    reason = f"the map's {len(tmap.rates)} rates, {tmap.steps} steps, no warmup; trained: learned ≥ {TRAINED}"
    if not pairs:
        return vd.uncheckable(claim, source, claimed, f"{computed}; {reason}; no seed trains at N = {bottom}")
    return vd.check_each_seed(
        claim=claim,
        source=source,
        claimed=claimed,
        computed=computed,
        shows=[hi is not None and hi >= lo for lo, hi in pairs],
        reason=reason,
    )


def _stably_trained(runs: ex.Runs, label: str, n: int, w: int, rate: Finite | None = None) -> list[bool]:
    """Per seed: trained (learned ≥ TRAINED) and never diverged."""
    hists = runs.at(label, n, rate)
    fractions = runs.fractions(label, n, w, rate)
    return [f >= TRAINED and not h.diverged for f, h in zip(fractions, hists, strict=True)]


def _deepest_verdict(runs: ex.Runs, budget: Budget) -> vd.Verdict:
    """Annotated §13.7, "1000 layers and deeper train stably", a law over depth: judged at the headline depth (no
    warmup, the chapter's rate) and past DeepNet (with warmup, the carried rate) apart, each as the fraction of DeepNorm
    seeds trained and never diverged (check_each_seed), then by :func:`~deepnotes.show.verdicts.judge_settings`
    (refuted by either depth where most seeds fail; never pooled); Post-LN with the same settings beside it."""
    sub = sizes(budget)
    w, n, rate = sub.loss_window, sub.deepest, ex.deepest_rate(budget)
    deep, post = ex.DEEPEST
    claim, source = (
        "The analysis lets 1000 layers and deeper train stably",
        cite("seed 000 annotated §13 claim §13.7", tests="claim §13.7"),
    )
    claimed = f"DeepNorm trained and stable at N = {sub.depth} and at N = {n}"
    counts = f"a seed counts if it learned ≥ {TRAINED} and never diverged; {runs.steps} steps"
    at_depth = vd.check_each_seed(
        claim=claim,
        source=source,
        claimed=claimed,
        computed=f"deepnorm at N = {sub.depth}: {fractions_text(runs, w, 'deepnorm', sub.depth)}",
        shows=_stably_trained(runs, "deepnorm", sub.depth, w),
        reason=f"{counts}; at N = {sub.depth} Adam {runs.lr:g} without warmup",
    )
    deepest = vd.check_each_seed(
        claim=claim,
        source=source,
        claimed=claimed,
        computed=f"{deep} at N = {n}: {fractions_text(runs, w, deep, n, rate)}, "
        f"{runs.seconds_per_member_step(deep, n, rate):.2f} s per member-step; {post}: "
        f"{fractions_text(runs, w, post, n, rate)}",
        shows=_stably_trained(runs, deep, n, w, rate),
        reason=f"{counts}; at N = {n} Adam {rate:.2g} (the chapter's rate carried by the derived N^(-1/2)) with a "
        f"warmup of {runs.warmup(deep, n)} steps, Post-LN with the same settings beside it",
    )
    return vd.judge_settings([at_depth, deepest], (f"N = {sub.depth}", f"N = {n}"), vd.LAW)


def summary_rows(runs: ex.Runs, depth: Depth, window: Count) -> list[tuple[str, str, str, str]]:
    """Per headline variant trained at ``depth``: fractions learned per seed, the step it got half-way
    (per seed), and seconds per member-step of its ensemble."""
    rows = []
    for lab in (lab for lab in ex.HEADLINE if runs.has(lab, depth)):
        hists = runs.at(lab, depth)
        halves = [h.steps_to(TRAINED, window) for h in hists]
        fr = ", ".join("diverged" if not math.isfinite(f) else f"{f:.2f}" for f in runs.fractions(lab, depth, window))
        rows.append(
            (
                lab,
                fr,
                ", ".join("never" if s is None else str(s) for s in halves),
                f"{runs.seconds_per_member_step(lab, depth):.2f}",
            )
        )
    return rows


def summary_markdown(runs: ex.Runs, depth: Depth, window: Count) -> str:
    """:func:`summary_rows` as a Markdown table."""
    head = (
        "| variant | fraction learned (per seed) | step half-way (per seed) | s per member-step |\n"
        "| --- | --- | --- | --- |\n"
    )
    return head + "\n".join(f"| {a} | {b} | {c} | {d} |" for a, b, c, d in summary_rows(runs, depth, window))


def frontier_markdown(runs: ex.Runs, window: Count, depths: tuple[int, ...]) -> Statement:
    """What the frontier's runs show, read from them: for each curve, the depths where the seeds' median fraction
    learned reaches TRAINED and those where it does not (measurements, the threshold named); then warmup's row
    (:func:`_warmup_verdict`, the one this page's table shows) read by its status, each depth it tested with the
    medians with and without warmup."""

    def text(ns):
        return ", ".join(str(n) for n in ns) or "none"

    lines = [Sentence(f"Read from the runs: the seeds' median fraction learned per depth against {TRAINED:g}.\n")]
    for label in ex.FRONTIER:
        ran = [n for n in depths if runs.has(label, n)]
        high = [n for n in ran if runs.median(label, n, window) >= TRAINED]
        low = [n for n in ran if n not in high]
        lines.append(Sentence(f"- **{label}**: ≥ {TRAINED:g} at N = {text(high)}; below at N = {text(low)}"))
    row = _warmup_verdict(runs, window, depths)
    tested = [int(run.rsplit("= ", 1)[1]) for run in dict(row.outcome.measured)] if row.outcome else []
    medians = "; ".join(
        f"N = {d}: {runs.median(ex.WARMED, d, window):.2f} against Post-LN alone's {runs.median('post', d, window):.2f}"
        for d in tested
    )
    lines.append(
        sentence(
            "\n",
            link(row, "Warmup (T = N)"),
            " ",
            say(
                row,
                holds="moves Post-LN's frontier",
                wrong="does not move Post-LN's frontier",
                undecided="is not judged here: no depth where Post-LN alone is below the threshold also ran with it",
            ),
            f" (median fraction learned with warmup, {medians})" if medians else "",
            ".",
        )
    )
    return Statement(lines, sep="\n")


def budget_numbers(budget: Budget) -> dict[str, str]:
    """The sizes and the threshold the page's prose quotes (glued into it): the map's depths at this budget
    and the `gpu` budget's deepest, the live panel's largest depth, and the fraction learned that counts as
    trained (:data:`TRAINED`, fixed before any run)."""
    sub, gpu = sizes(budget), sizes(get_budget("gpu"))
    *head, last = sub.map_depths
    return {
        "map_depths": f"{', '.join(map(str, head))} and {last}" if head else str(last),
        "gpu_map_deepest": str(max(gpu.map_depths)),
        "live_max_depth": f"{sub.live_depth[2]:,}",
        "trained_threshold": f"{TRAINED:g}",
    }


def derivations(budget: Budget) -> Derivations:
    """The page's SymPy derivations and the verdict tables that run no experiment, as its cells call them
    (priced in the chapter's estimate: :mod:`deepnotes.chapters.catalog`; the same at every budget)."""
    return Derivations(
        (
            (derive.deepnorm_constants, (derive.DEEPNET_DEPTH,)),
            (derive.identity_weights, ()),
            (derive.identity_at, (derive.DEEPNET_DEPTH,)),
            (derive.loss_change_growth, (derive.DEEPNET_DEPTH, derive.REFERENCE_DEPTH)),
            (derive.warmup_length, ()),
            (predictions, (derive.DEEPNET_DEPTH,)),
        )
    )
