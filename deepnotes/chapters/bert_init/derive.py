"""SymPy derivations of the chapter "Why is BERT's initial standard deviation 0.02?" (seed 003).

Every variance at initialization of a Post-LN encoder whose matrices are i.i.d. with std s turns out
to depend on s and the width d only through

    q = d·s²      (the variance of one pre-activation x·w when E[x²] = 1, i.e. after a LayerNorm)

so a narrow model with s·√(768/d) starts exactly like BERT-base does with s.
"""
from __future__ import annotations

import sympy as sp

from deepnotes.core.derive import d, gauss, q, truncated_normal_gamma, z

s, n_in, n_out = sp.symbols("s n_in n_out", positive=True)    # weight std, fan-in, fan-out
r_ff = sp.symbols("r", positive=True)                          # d_ff / d (BERT: 4)
rho = sp.symbols("rho", positive=True)                         # ‖mean of x over attended tokens‖² / ‖x‖²
V = sp.symbols("V", positive=True)                             # vocabulary size
a = sp.symbols("a", positive=True)                             # truncation point in units of σ
h = sp.symbols("h", real=True)

BERT_WIDTH, BERT_DEPTH, BERT_VOCAB, BERT_STD = 768, 12, 30522, sp.Rational(2, 100)


def bert_stds() -> dict[str, sp.Expr]:
    """The actual std of N(0, 0.02²) cut at ±2σ (0.02·√γ), Xavier's 1/√768 for a 768×768 matrix, and
    their ratio."""
    gamma = truncated_normal_gamma(2)["gamma"]
    actual = BERT_STD * sp.sqrt(gamma)
    xavier = 1 / sp.sqrt(BERT_WIDTH)
    return {"actual": actual, "divisor": 1 / sp.sqrt(gamma), "xavier": xavier, "ratio": sp.simplify(actual / xavier)}


def truncated_variance() -> dict[str, sp.Expr]:
    """Var of N(0, 1) cut at ±a: ∫_{−a}^{a} z²φ / ∫_{−a}^{a} φ, solved; and the annotated eq. (19),
    [φ(a) − φ(−a) − 2a(Φ(a) − Φ(−a))]/(Φ(a) − Φ(−a)), as printed."""
    phi = lambda t: gauss.subs(z, t)                                     # noqa: E731
    Phi = lambda t: (1 + sp.erf(t / sp.sqrt(2))) / 2                     # noqa: E731
    derived = sp.simplify(sp.integrate(z ** 2 * gauss, (z, -a, a)) / sp.integrate(gauss, (z, -a, a)))
    printed = sp.simplify((phi(a) - phi(-a) - 2 * a * (Phi(a) - Phi(-a))) / (Phi(a) - Phi(-a)))
    return {"derived": derived, "printed_eq19": printed}


def glorot_uniform_variance() -> sp.Expr:
    """Var of U(−b, b) with Glorot's b = √(6/(n_in + n_out)): b²/3."""
    b = sp.sqrt(6 / (n_in + n_out))
    return sp.simplify(sp.integrate(z ** 2 / (2 * b), (z, -b, b)))


def relu_moments() -> dict[str, sp.Expr]:
    """For h ~ N(0, q): E[relu(h)²] (the second moment He's rule uses) and Var[relu(h)]."""
    sq = sp.sqrt(q)
    second = sp.integrate((sq * z) ** 2 * gauss, (z, 0, sp.oo))
    mean = sp.integrate(sq * z * gauss, (z, 0, sp.oo))
    return {"second_moment": sp.simplify(second), "variance": sp.simplify(second - mean ** 2)}


def gelu_second_moment_series(order: int = 4) -> sp.Expr:
    """E[gelu(h)²], gelu(h) = h·Φ(h), h ~ N(0, q), as a series in q: expand Φ around 0, then take the
    Gaussian moments E[h^{2k}] = (2k−1)!!·q^k term by term."""
    Phi = (1 + sp.erf(h / sp.sqrt(2))) / 2
    poly = sp.expand(sp.series((h * Phi) ** 2, h, 0, 2 * order + 1).removeO())
    density = sp.exp(-h ** 2 / (2 * q)) / sp.sqrt(2 * sp.pi * q)
    return sp.expand(sum(sp.integrate(term * density, (h, -sp.oo, sp.oo)) for term in poly.as_ordered_terms()))


def gelu_second_moment(q_value: float, digits: int = 12) -> sp.Float:
    """E[gelu(h)²] for h ~ N(0, q_value), by SymPy's numerical quadrature (no series cut-off)."""
    sq = sp.sqrt(sp.nsimplify(q_value))
    x = sq * z
    integrand = (x * (1 + sp.erf(x / sp.sqrt(2))) / 2) ** 2 * gauss
    return sp.Integral(integrand, (z, -sp.oo, sp.oo)).evalf(digits)


def branch_ratios() -> dict[str, sp.Expr]:
    """Branch-to-stream second-moment ratios of one Post-LN layer at init (x after a LN: E[x²] = 1).

    FFN  F = φ(xW₁)W₂, d → r·d → d: each hidden pre-activation ~ N(0, q), the output sums r·d of
         them with weights of variance s²: v_ffn = r·d·s²·E[φ²] = r·q·E[φ²]; ReLU: E[φ²] = q/2.
    Attention with near-uniform weights (the scores q_i·k_j/√d_h have std q) outputs the mean of
         x_j W_v over the attended tokens, times W_o: v_att = ρ·(d s²)² = ρ q², ρ = ‖x̄‖²/‖x‖².
    The identity path's weight: each LN divides by √(1+v), so per layer ((1+v_att)(1+v_ffn))^{−1/2}.
    """
    m_phi = sp.Function("m_phi")(q)                                       # E[φ(h)²], h ~ N(0, q)
    v_ffn = r_ff * q * m_phi
    v_ffn_relu = sp.simplify(v_ffn.subs(m_phi, relu_moments()["second_moment"]))
    v_att = rho * q ** 2
    per_layer = 1 / sp.sqrt((1 + v_att) * (1 + v_ffn))
    return {"q": d * s ** 2, "v_ffn": v_ffn, "v_ffn_relu": v_ffn_relu, "v_att": v_att, "m_phi": m_phi,
            "identity_per_layer": per_layer}


def logit_softmax() -> dict[str, sp.Expr]:
    """MLM logits z = e·h with ‖h‖² = d (LN output) and embedding entries of std s: Var[z] = d s² = q.
    For V Gaussian logits the softmax's normalizer is V·E[e^z] and its entropy, for large V,
    H = log V + log E[e^z] − E[z e^z]/E[e^z]; the initial cross-entropy is log V + log E[e^z] − E[z]."""
    zq = sp.sqrt(q) * z
    e_exp = sp.simplify(sp.integrate(sp.exp(zq) * gauss, (z, -sp.oo, sp.oo)))
    e_zexp = sp.simplify(sp.integrate(zq * sp.exp(zq) * gauss, (z, -sp.oo, sp.oo)))
    entropy = sp.simplify(sp.log(V) + sp.log(e_exp) - e_zexp / e_exp)
    return {"var_logit": d * s ** 2, "E[e^z]": e_exp, "E[z e^z]": e_zexp, "entropy": sp.expand(sp.expand_log(entropy)),
            "kl_from_uniform": sp.simplify(sp.log(V) - entropy), "initial_loss": sp.expand(sp.log(V) + sp.log(e_exp))}
