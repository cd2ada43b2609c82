"""SymPy derivations of the chapter "Why is BERT's initial standard deviation 0.02?" (seed 003).

Every variance at initialization of a Post-LN encoder whose matrices are i.i.d. with std s turns out
to depend on s and the width d only through

    q = d·s²      (the variance of one pre-activation x·w when E[x²] = 1, i.e. after a LayerNorm)

so a narrow model with s·√(768/d) starts exactly like BERT-base does with s.
"""

from __future__ import annotations

import mpmath
import sympy as sp

from deepnotes.core.derive import d, gauss, q, truncated_normal_gamma, z
from deepnotes.core.validate import Count, Depth, Digits, NonNegative, Symbolic

__all__ = [
    "bert_stds",
    "truncated_variance",
    "glorot_uniform_variance",
    "relu_moments",
    "gelu_second_moment_series",
    "gelu_second_moment",
    "branch_ratios",
    "ffn_branch_table",
    "logit_softmax",
    "bert_logit_scale",
]

s, n_in, n_out = sp.symbols("s n_in n_out", positive=True)  # weight std, fan-in, fan-out
r_ff = sp.symbols("r", positive=True)  # d_ff / d (BERT: 4)
rho = sp.symbols("rho", positive=True)  # ‖mean of x over attended tokens‖² / ‖x‖²
V = sp.symbols("V", positive=True)  # vocabulary size
a = sp.symbols("a", positive=True)  # truncation point in units of σ
h = sp.symbols("h", real=True)

BERT_WIDTH, BERT_DEPTH, BERT_VOCAB, BERT_STD = 768, 12, 30522, sp.Rational(2, 100)
BERT_FFN_RATIO = 4  # BERT's 3072 = 4 × 768


def bert_stds() -> dict:
    """The actual std of N(0, 0.02²) cut at ±2σ (0.02·√γ), Xavier's 1/√768 for a 768×768 matrix, and
    their ratio."""
    gamma = truncated_normal_gamma(2)["gamma"]
    actual = BERT_STD * sp.sqrt(gamma)
    xavier = 1 / sp.sqrt(BERT_WIDTH)
    return {
        "actual": actual,
        "divisor": 1 / sp.sqrt(gamma),
        "xavier": xavier,
        "ratio": sp.simplify(actual / xavier),
        "gamma": gamma,
        "symbols": {"z": z},
    }


def truncated_variance() -> dict:
    """Var of N(0, 1) cut at ±a: ∫_{−a}^{a} z²φ / ∫_{−a}^{a} φ, solved; and the annotated eq. (19),
    [φ(a) − φ(−a) − 2a(Φ(a) − Φ(−a))]/(Φ(a) − Φ(−a)), as printed."""
    phi = lambda t: gauss.subs(z, t)  # noqa: E731
    Phi = lambda t: (1 + sp.erf(t / sp.sqrt(2))) / 2  # noqa: E731
    derived = sp.simplify(sp.integrate(z**2 * gauss, (z, -a, a)) / sp.integrate(gauss, (z, -a, a)))
    printed = sp.simplify((phi(a) - phi(-a) - 2 * a * (Phi(a) - Phi(-a))) / (Phi(a) - Phi(-a)))
    return {"derived": derived, "printed_eq19": printed, "symbols": {"a": a, "z": z}}


def glorot_uniform_variance() -> dict:
    """Var of U(−b, b) with Glorot's b = √(6/(n_in + n_out)): b²/3."""
    b = sp.sqrt(6 / (n_in + n_out))
    return {
        "variance": sp.simplify(sp.integrate(z**2 / (2 * b), (z, -b, b))),
        "bound": b,
        "symbols": {"n_in": n_in, "n_out": n_out, "z": z},
    }


def relu_moments() -> dict:
    """For h ~ N(0, q): E[relu(h)²] (the second moment He's rule uses) and Var[relu(h)]."""
    sq = sp.sqrt(q)
    second = sp.integrate((sq * z) ** 2 * gauss, (z, 0, sp.oo))
    mean = sp.integrate(sq * z * gauss, (z, 0, sp.oo))
    return {
        "second_moment": sp.simplify(second),
        "variance": sp.simplify(second - mean**2),
        "symbols": {"q": q, "z": z},
    }


def gelu_second_moment_series(order: Symbolic = 4) -> dict:
    """E[gelu(h)²], gelu(h) = h·Φ(h), h ~ N(0, q), as a series in q: expand Φ around 0, then take the
    Gaussian moments E[h^{2k}] = (2k−1)!!·q^k term by term."""
    Phi = (1 + sp.erf(h / sp.sqrt(2))) / 2
    poly = sp.expand(sp.series((h * Phi) ** 2, h, 0, 2 * order + 1).removeO())
    density = sp.exp(-(h**2) / (2 * q)) / sp.sqrt(2 * sp.pi * q)
    series = sp.expand(sum(sp.integrate(term * density, (h, -sp.oo, sp.oo)) for term in poly.as_ordered_terms()))
    return {"series": series, "symbols": {"q": q, "h": h}}


def gelu_second_moment(q_value: NonNegative, digits: Digits = 12) -> dict:
    """E[gelu(h)²] for h ~ N(0, q_value), by numerical quadrature (no series cut-off): "integral"
    (unevaluated, in z ~ N(0, 1)) and "value" (a Float of ``digits`` digits). The integrand is SymPy's,
    evaluated by mpmath's tanh-sinh quadrature on (−∞, 0] and [0, ∞) with 10 guard digits: the digits
    ``Integral.evalf`` gives (it calls the same quadrature), without its symbolic preprocessing, which
    took 1.3–1.9 s an integral."""
    sq = sp.sqrt(sp.nsimplify(q_value))
    x = sq * z
    integrand = (x * (1 + sp.erf(x / sp.sqrt(2))) / 2) ** 2 * gauss
    integral = sp.Integral(integrand, (z, -sp.oo, sp.oo))
    with mpmath.workdps(digits + 10):
        value = mpmath.quad(sp.lambdify(z, integrand, "mpmath"), [-mpmath.inf, 0, mpmath.inf])
    return {"integral": integral, "value": sp.Float(value, digits), "symbols": {"z": z}}


def branch_ratios() -> dict:
    """Branch-to-stream second-moment ratios of one Post-LN layer at init (x after a LN: E[x²] = 1).

    FFN  F = φ(xW₁)W₂, d → r·d → d: each hidden pre-activation ~ N(0, q), the output sums r·d of
         them with weights of variance s²: v_ffn = r·d·s²·E[φ²] = r·q·E[φ²]; ReLU: E[φ²] = q/2.
    Attention with near-uniform weights (the scores q_i·k_j/√d_h have std q) outputs the mean of
         x_j W_v over the attended tokens, times W_o: v_att = ρ·(d s²)² = ρ q², ρ = ‖x̄‖²/‖x‖².
    The identity path's weight: each LN divides by √(1+v), so per layer ((1+v_att)(1+v_ffn))^{−1/2}.
    """
    m_phi = sp.Function("m_phi")(q)  # E[φ(h)²], h ~ N(0, q)
    v_ffn = r_ff * q * m_phi
    v_ffn_relu = sp.simplify(v_ffn.subs(m_phi, relu_moments()["second_moment"]))
    v_att = rho * q**2
    per_layer = 1 / sp.sqrt((1 + v_att) * (1 + v_ffn))
    return {
        "q": d * s**2,
        "v_ffn": v_ffn,
        "v_ffn_relu": v_ffn_relu,
        "v_att": v_att,
        "m_phi": m_phi,
        "identity_per_layer": per_layer,
        "symbols": {"d": d, "s": s, "q": q, "r": r_ff, "rho": rho},
    }


def ffn_branch_table(
    stds: dict[str, float] | None = None,
    width: Count = BERT_WIDTH,
    ffn_ratio: Count = BERT_FFN_RATIO,
    depth: Depth = BERT_DEPTH,
) -> dict:
    """:func:`branch_ratios` evaluated at BERT-base's width for named stds (default: BERT's 0.02 cut at
    2σ, Xavier's 1/√768 and 0.02 uncut), attention's share left out (ρ = 0): per std, q, E[gelu²]
    (quadrature), v_FFN, the identity weight per layer and after ``depth`` layers; "text" prints them."""
    if stds is None:
        bs = bert_stds()
        stds = {
            "BERT 0.02 (cut at 2σ)": float(bs["actual"]),
            "Xavier 1/√768": float(bs["xavier"]),
            "0.02 uncut": float(BERT_STD),
        }
    br = branch_ratios()
    rows, lines = {}, [f"{'init':22s} {'q':>7s} {'E[gelu²]':>9s} {'v_FFN':>7s} {'w/layer':>8s} {'w after 12':>10s}"]
    for name, s_val in stds.items():
        q_val = float(br["q"].subs({d: width, s: s_val}))
        m_val = float(gelu_second_moment(q_val)["value"])
        v_val = float(br["v_ffn"].subs(br["m_phi"], m_val).subs({r_ff: ffn_ratio, q: q_val}))
        w_val = float(br["identity_per_layer"].subs(br["m_phi"], m_val).subs({r_ff: ffn_ratio, q: q_val, rho: 0}))
        rows[name] = {
            "std": s_val,
            "q": q_val,
            "m_gelu": m_val,
            "v_ffn": v_val,
            "w_layer": w_val,
            "w_depth": w_val**depth,
        }
        lines.append(f"{name:22s} {q_val:7.4f} {m_val:9.5f} {v_val:7.4f} {w_val:8.4f} {w_val**depth:10.4f}")
    return {
        "rows": rows,
        "v_ffn": {name: r["v_ffn"] for name, r in rows.items()},
        "text": "\n".join(lines),
        "symbols": br["symbols"],
    }


def logit_softmax() -> dict:
    """MLM logits z = e·h with ‖h‖² = d (LN output) and embedding entries of std s: Var[z] = d s² = q.
    For V Gaussian logits the softmax's normalizer is V·E[e^z] and its entropy, for large V,
    H = log V + log E[e^z] − E[z e^z]/E[e^z]; the initial cross-entropy is log V + log E[e^z] − E[z]."""
    zq = sp.sqrt(q) * z
    e_exp = sp.simplify(sp.integrate(sp.exp(zq) * gauss, (z, -sp.oo, sp.oo)))
    e_zexp = sp.simplify(sp.integrate(zq * sp.exp(zq) * gauss, (z, -sp.oo, sp.oo)))
    entropy = sp.simplify(sp.log(V) + sp.log(e_exp) - e_zexp / e_exp)
    return {
        "var_logit": d * s**2,
        "E[e^z]": e_exp,
        "E[z e^z]": e_zexp,
        "entropy": sp.expand(sp.expand_log(entropy)),
        "kl_from_uniform": sp.simplify(sp.log(V) - entropy),
        "initial_loss": sp.expand(sp.log(V) + sp.log(e_exp)),
        "symbols": {"d": d, "s": s, "q": q, "V": V, "z": z},
    }


def bert_logit_scale() -> dict:
    """The logit statistics of :func:`logit_softmax` at BERT-base (d = 768, s = 0.02 cut at 2σ, V = 30522):
    q, the logits' std, KL from uniform q/2 and log V; "text" prints them."""
    q_bert = float(branch_ratios()["q"].subs({d: BERT_WIDTH, s: bert_stds()["actual"]}))
    log_v = float(sp.log(BERT_VOCAB))
    kl = float(logit_softmax()["kl_from_uniform"].subs(q, q_bert))  # the derived q/2, evaluated
    text = (
        f"BERT: q = {q_bert:.4f}, std of a logit = {q_bert**0.5:.4f}, KL from uniform = {kl:.4f} nats "
        f"(log V = {log_v:.3f} for V = {BERT_VOCAB})"
    )
    return {
        "q": q_bert,
        "logit_std": q_bert**0.5,
        "kl_from_uniform": kl,
        "log_V": log_v,
        "text": text,
        "symbols": {"d": d, "s": s, "q": q, "V": V},
    }


def layernorm_output_variance(dim: Symbolic = 4) -> dict:
    """The variance over the features of a LayerNorm output with γ = 1, β = 0: for x ∈ R^dim with mean μ and
    variance σ², y = (x − μ)/√(σ² + ε) has mean 0 and variance σ²/(σ² + ε), whatever the layer or the init
    std; at the model's ε and an input of variance ≥ 1 it is within ε of 1 (a variance a Post-LN layer's
    output cannot lose). SymPy reduces Var[y]·(σ² + ε)/σ² over the symbolic x to 1, so Var[y] = σ²/(σ² + ε)."""
    from deepnotes.core.blocks import LN_EPS

    xs = sp.symbols(f"x1:{dim + 1}", real=True)
    eps, s2 = sp.Symbol("epsilon", positive=True), sp.Symbol("sigma2", positive=True)
    mu = sum(xs) / dim
    var_x = sum((x - mu) ** 2 for x in xs) / dim
    ys = [(x - mu) / sp.sqrt(var_x + eps) for x in xs]
    mean_y = sp.simplify(sum(ys) / dim)
    var_y = sum((y - mean_y) ** 2 for y in ys) / dim
    factor = sp.simplify(var_y * (var_x + eps) / var_x)  # 1 for every x
    return {
        "mean": mean_y,
        "variance": factor * s2 / (s2 + eps),
        "eps": eps,
        "sigma2": s2,
        "at_unit_input": float(factor / (1 + LN_EPS)),
    }
