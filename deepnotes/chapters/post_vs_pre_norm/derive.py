"""SymPy derivations of the chapter "Post-Norm vs Pre-Norm" (seeds 002 and 003). Every function
returns a dict with the expressions it derives and, under "symbols", the symbols they use."""

from __future__ import annotations

import sympy as sp

from deepnotes.core.derive import d, ell, eta, post_norm_unroll, pre_norm_second_moment, sigma, v, x  # noqa: F401  (shared with "Training 1000 layers")
from deepnotes.core.models import ffn_branch_variance
from deepnotes.core.validate import Count, Depth, Positive, Symbolic

s = sp.symbols("s", positive=True)  # i.i.d. weight std of the FFN branch
c = sp.symbols("c", positive=True)  # the factor that weakens a gradient
g = sp.symbols("g", real=True, nonzero=True)  # one gradient entry (either sign)
t, delta = sp.symbols("t delta", positive=True)  # a step, the fixed gate step
S = sp.symbols("S", positive=True)  # second moment of the Post-LN stream

BERT_WIDTH = 768  # BERT-base's d (source constant)
BERT_PRINTED_STDS = (sp.Rational(2, 100), 1 / sp.sqrt(BERT_WIDTH))  # BERT's 0.02 and 1/√d


def post_ln_moment_step(width: Symbolic = 3) -> dict:
    """The annotated eq. (48), S_{l+1} = (S_l + v)/(1 + v), and its fixed point (solved); against what a
    LayerNorm does to any input u = x + F of ``width`` features: (u − μ)/σ with σ² = mean((u − μ)²),
    whose output second moment SymPy simplifies to 1 for symbolic u, whatever S was."""
    step = (S + v) / (1 + v)
    (fixed,) = sp.solve(sp.Eq(step, S), S)
    u = sp.symbols(f"u1:{width + 1}", real=True)
    mean = sum(u) / width
    var = sum((x - mean) ** 2 for x in u) / width
    ln_moment = sp.simplify(sum(((x - mean) / sp.sqrt(var)) ** 2 for x in u) / width)
    return {"S_next": step, "fixed_point": fixed, "ln_output": ln_moment, "symbols": {"S": S, "v": v}}


def update_scale_invariance() -> dict:
    """A gradient scaled by c > 0 (Post-Norm's weakened lower layers): SGD's step −ηcg scales with
    c; Adam's −η·E[cg]/√E[(cg)²] (one sample: −η·cg/|cg|) does not."""
    return {
        "sgd": -eta * c * g,
        "adam": sp.simplify(-eta * c * g / sp.sqrt((c * g) ** 2)),
        "symbols": {"eta": eta, "c": c, "g": g},
    }


def fixed_step_gate() -> dict:
    """Su's fixed-step gate α_t = tδ: the step t at which it reaches 1."""
    return {"steps_to_one": sp.solve(t * delta - 1, t)[0], "symbols": {"t": t, "delta": delta}}


def ffn_branch_second_moment() -> dict:
    """E[F²] of F(x) = relu(x W₁) W₂ (d → 4d → d, i.i.d. weights of std s, E[x²] = 1):
    pre-activations d·s², after ReLU half of it, output 4d·s² times that."""
    pre = d * s**2
    return {"E[F^2]": sp.simplify(4 * d * s**2 * pre * sp.Rational(1, 2)), "symbols": {"d": d, "s": s}}


def ffn_branch_at(width, std) -> float:
    """E[F²] of the ReLU FFN branch at width ``width`` and weight std ``std`` (a number)."""
    return float(ffn_branch_second_moment()["E[F^2]"].subs({d: width, s: std}))


def bert_ffn_branch_at(width, std) -> float:
    """E[F²] of BERT's FFN branch, GELU instead of ReLU (:func:`deepnotes.core.models.ffn_branch_variance`,
    q = d·s²), at width ``width`` and weight std ``std``."""
    return ffn_branch_variance(float(width * std**2), "gelu")


# Reproducing the papers: Xiong et al. 2020 (arXiv:2002.04745) and Liu et al. 2020 (arXiv:2004.08249)

d_ff = sp.symbols("d_ff", positive=True)  # FFN hidden width
k, n = sp.symbols("k n", positive=True, integer=True)  # terms in the stream, sublayers in the stack


def relu_second_moment() -> dict:
    """Xiong et al. 2020, Lemma 1: E[ReLU(X)²] = ∫₀^∞ x² φ_σ(x) dx = σ²/2 for X ~ N(0, σ²), integrated
    by SymPy; over d i.i.d. coordinates E‖ReLU(X)‖² = σ²d/2."""
    density = sp.exp(-(x**2) / (2 * sigma**2)) / (sp.sqrt(2 * sp.pi) * sigma)
    return {"E[relu(X)^2]": sp.integrate(x**2 * density, (x, 0, sp.oo)), "symbols": {"x": x, "sigma": sigma}}


def xiong_lemma2() -> dict:
    """Xiong et al. 2020, Lemma 2, for an FFN d → d_ff → d with Xavier-normal weights (variance
    2/(d + d_ff) each; the paper's analysis has d_ff = d) fed a LayerNorm output (‖u‖² = d):
    pre-activations of variance σ² = d·2/(d + d_ff), Lemma 1 for the d_ff ReLUs, then the second
    matrix: E‖FFN(u)‖² = f·d with f = 2·d·d_ff/(d + d_ff)². Post-LN's FFN sum x^{post,5} = u + FFN(u)
    has E‖x^{post,5}‖² = (1 + f)·d. Pre-LN adds per layer the FFN's f·d plus an attention term
    between 0 and d (uniform attention over LN'd tokens: 0 for orthogonal tokens, d for equal ones),
    so (1 + f·l)·d ≤ E‖x_l‖² ≤ (1 + (1 + f)·l)·d from E‖x_0‖² = d. At d_ff = d: 3d/2, (1 + l/2)d and
    (1 + 3l/2)d, the paper's statement."""
    var = 2 / (d + d_ff)  # Xavier-normal, d × d_ff
    relu = relu_second_moment()
    per_unit = relu["E[relu(X)^2]"].subs(relu["symbols"]["sigma"], sp.sqrt(d * var))  # E[ReLU(h_j)²]
    ffn = sp.simplify(d * (d_ff * per_unit) * var)  # E‖FFN(u)‖²: d outputs of variance E‖r‖²·var
    f = sp.simplify(ffn / d)
    out = {
        "ffn_ratio": f,
        "post_ffn_sum": sp.simplify(d * (1 + f)),
        "pre_lower": sp.expand(d * (1 + f * ell)),
        "pre_upper": sp.expand(d * (1 + (1 + f) * ell)),
    }
    out["paper"] = {key: sp.simplify(val.subs(d_ff, d)) for key, val in out.items()}
    out["symbols"] = {"d": d, "d_ff": d_ff, "l": ell}
    return out


def lemma2_at(width: Count, ffn_width: Count, layers: Depth) -> dict[str, list[float]]:
    """:func:`xiong_lemma2` divided by d, as numbers, at l = 0..``layers``: the paper's (d_ff = d) and
    this model's (d_ff = ``ffn_width``) Post-LN FFN sum and Pre-LN bounds."""
    lem = xiong_lemma2()
    at = {d: width, d_ff: ffn_width}
    out = {}
    for tag, exprs in (("paper", lem["paper"]), ("ours", lem)):
        for key in ("post_ffn_sum", "pre_lower", "pre_upper"):
            out[f"{tag} {key}"] = [float(exprs[key].subs(at).subs(ell, l)) / width for l in range(layers + 1)]
    return out


def liu_output_change() -> dict:
    """Liu et al. 2020, Theorem 2: Var[F(x, W) − F(x, W*)] ≈ Σ_{i=1}^{n} β²_{i,i}·C over the n
    sublayers, β²_{i,i} the share of branch i in the variance of the normalized x̂_i. Post-LN: branch
    and skip path meet at variances v and 1, β² = v/(1 + v) at every sublayer, so the sum is
    n·v/(1 + v) = O(n) (Corollary 2). Pre-LN: after i sublayers the stream holds k = i + 1 terms of
    equal variance (x_0 and i branches), β² = 1/k, so the sum is Σ_{k=2}^{n+1} 1/k = H_{n+1} − 1 =
    O(log n) (Corollary 1)."""
    return {
        "post": sp.summation(v / (1 + v), (k, 1, n)),
        "pre": sp.summation(1 / k, (k, 2, n + 1)),
        "symbols": {"n": n, "k": k, "v": v},
    }


def liu_shapes(depths, branch_ratio: Positive = 1.0) -> dict[str, list[float]]:
    """:func:`liu_output_change` at n = 2N sublayers for each depth N in ``depths`` (``branch_ratio``:
    Post-LN's v): the predicted growth, up to the constant C."""
    liu = liu_output_change()
    return {
        style: [float(liu[style].subs({n: 2 * depth, v: branch_ratio})) for depth in depths]
        for style in ("post", "pre")
    }


def two_sublayer_jacobian(n: Count = 3) -> dict:
    """The chain rule through two residual sublayers without LayerNorm, y = x + Attn(x), z = y + FFN(y):
    ∂z/∂x = (I + ∂FFN/∂y)(I + ∂Attn/∂x), expanded with ``n`` × ``n`` non-commuting Jacobians A = ∂Attn/∂x,
    F = ∂FFN/∂y; and the annotated eq. (7) of seed 000 as printed, I + F(I + A)."""
    A, F = sp.MatrixSymbol("A", n, n), sp.MatrixSymbol("F", n, n)
    eye = sp.Identity(n)
    derived = sp.expand((eye + F) * (eye + A))
    printed = sp.expand(eye + F * (eye + A))
    return {
        "derived": derived,
        "printed": printed,
        "missing": sp.simplify(derived - printed),
        "symbols": {"A": A, "F": F},
    }
