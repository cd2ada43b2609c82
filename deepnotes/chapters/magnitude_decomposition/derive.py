"""SymPy derivations of the chapter "Magnitude decomposition and the DeepNorm scalings".

Builds on :mod:`deepnotes.core.derive` (its symbols N, α, λ and :func:`~deepnotes.core.derive.deepnorm_ratio`,
which holds each optimizer's condition); the tests check every result here against the plain
formulas in :mod:`deepnotes.core.scaling` with ``sympy.lambdify``. Every function returns a dict whose
``"symbols"`` entry names the symbols it uses, so neither the notebook nor the claims rebuild one.
"""

from __future__ import annotations

import sympy as sp

from deepnotes.core.derive import (  # noqa: F401  (shared with "Training 1000 layers")
    N,
    alpha,
    deepnorm_ratio,
    gauss,
    in_two_n,
    in_two_n_tuple,
    lam,
    paper_constants,
    two_n,
    z,
)
from deepnotes.core.scaling import OPTIMIZERS
from deepnotes.core.validate import Symbolic

# ---- the magnitude decomposition W = λU ---------------------------------------------------------

t = sp.symbols("t", positive=True)  # t = 1/κ²
tr1, tr2 = sp.symbols("T_1 T_2", positive=True)  # tr(WWᵀ), tr((WWᵀ)²)
d_rows, a, b = sp.symbols("d a b", positive=True)  # size of WWᵀ; W is a × b
s_w, gain, c = sp.symbols("s g c", positive=True)  # entry std, Xavier gain, a rescaling


def magnitude_lambda() -> dict[str, object]:
    """λ = argmin_κ ‖WWᵀ/κ² − I‖_F. With A = WWᵀ (d × d, symmetric) and t = 1/κ²,

        ‖tA − I‖_F² = t²·tr(A²) − 2t·tr(A) + d,

    a parabola in t: SymPy solves d/dt = 0 and checks the second derivative. Returns the objective,
    κ² = 1/t*, λ = κ, the annotated eq. (27)'s λ = √(tr A / d), and their ratio."""
    objective = t**2 * tr2 - 2 * t * tr1 + d_rows
    (t_star,) = sp.solve(sp.diff(objective, t), t)
    lam_f = sp.sqrt(sp.simplify(1 / t_star))
    annotated = sp.sqrt(tr1 / d_rows)
    return {
        "objective": objective,
        "t_star": t_star,
        "second_derivative": sp.diff(objective, t, 2),
        "kappa_sq": sp.simplify(1 / t_star),
        "lambda": lam_f,
        "annotated_eq27": annotated,
        "ratio_to_eq27": sp.simplify(lam_f / annotated),
        "symbols": {"t": t, "T_1": tr1, "T_2": tr2, "d": d_rows},
    }


def magnitude_lambda_homogeneity() -> dict:
    """λ(cW)/λ(W): W → cW scales tr(A) by c² and tr(A²) by c⁴; SymPy simplifies the ratio (= c)."""
    lam_f = magnitude_lambda()["lambda"]
    ratio = sp.simplify(lam_f.subs({tr1: c**2 * tr1, tr2: c**4 * tr2}, simultaneous=True) / lam_f)
    return {"ratio": ratio, "symbols": {"c": c, "T_1": tr1, "T_2": tr2}}


def xavier_lambda() -> dict[str, object]:
    """Expected traces for an a × b matrix of i.i.d. N(0, s²) entries, from the Gaussian moments
    E[w²] = s², E[w⁴] = 3s⁴ (integrated by SymPy):

        E tr(A)  = Σ_{i,k} E[W_ik²] = ab·s²
        E tr(A²) = Σ_i E(Σ_k W_ik²)² + Σ_{i≠j} Σ_k E[W_ik²]E[W_jk²]
                 = a·(b·E[w⁴] + b(b−1)·s⁴) + a(a−1)·b·s⁴

    then λ² ≈ E tr(A²)/E tr(A) with Xavier's s² = 2g²/(a+b), and its limit for large a, b."""
    m2 = sp.integrate(z**2 * gauss, (z, -sp.oo, sp.oo)) * s_w**2
    m4 = sp.integrate(z**4 * gauss, (z, -sp.oo, sp.oo)) * s_w**4
    e_tr1 = a * b * m2
    e_tr2 = sp.factor(a * (b * m4 + b * (b - 1) * m2**2) + a * (a - 1) * b * m2**2)
    lam_sq = sp.simplify((e_tr2 / e_tr1).subs(s_w**2, 2 * gain**2 / (a + b)))
    return {
        "E_w4": m4,
        "E_trA": e_tr1,
        "E_trA2": e_tr2,
        "lambda_sq_xavier": sp.factor(lam_sq),
        "lambda_over_gain_wide": sp.sqrt(sp.limit(lam_sq.subs(b, a) / gain**2, a, sp.oo)),
        "symbols": {"z": z, "s": s_w, "a": a, "b": b, "g": gain},
    }


def lambda_gradient_identity(rows: Symbolic = 2, cols: Symbolic = 3) -> dict[str, object]:
    """∂L(λU)/∂λ = ⟨∂L/∂W |_{W=λU}, U⟩ for a concrete loss, L(W) = log Σ_j exp((xW)_j) + ‖W‖⁴ (a
    softmax-like term and a quartic), on symbolic rows × cols matrices. Returns both sides and
    their simplified difference."""
    x = sp.Matrix(1, rows, sp.symbols(f"x1:{rows + 1}", real=True))
    w = sp.Matrix(rows, cols, sp.symbols(f"w1:{rows * cols + 1}", real=True))
    u = sp.Matrix(rows, cols, sp.symbols(f"u1:{rows * cols + 1}", real=True))
    scale = sp.symbols("lambda_w", positive=True)

    def loss(mat):
        logits = x * mat  # [1, cols]
        return sp.log(sum(sp.exp(v) for v in logits)) + sum(v**2 for v in mat) ** 2

    lhs = sp.diff(loss(scale * u), scale)
    grad_w = sp.Matrix(rows, cols, lambda i, j: sp.diff(loss(w), w[i, j]))
    rhs = sum(gw * uu for gw, uu in zip(grad_w.subs(dict(zip(w, scale * u, strict=True))), u, strict=True))
    return {
        "lhs": lhs,
        "rhs": rhs,
        "difference": sp.simplify(lhs - rhs),
        "symbols": {"lambda_w": scale, **{str(v): v for v in (*x, *w, *u)}},
    }


# ---- the DeepNorm sublayers: ∂L/∂λ = O(λ/α) -----------------------------------------------------

lam1, lam2, lam_q, lam_k, lam_v, lam_o = sp.symbols(
    "lambda_1 lambda_2 lambda_q lambda_k lambda_v lambda_o", positive=True
)
h_ffn, h_att, score, x_l = sp.symbols("h_ffn h_att S x_l", real=True)
pre = sp.symbols("p", real=True)  # one pre-activation entry of x_l U_1


def relu_homogeneity() -> dict:
    """φ(λp) − λφ(p) for φ = ReLU = max(0, ·) and λ > 0, on each sign of the pre-activation p
    (p = ±p₊ with p₊ > 0): SymPy simplifies both cases to 0."""
    p_pos = sp.Symbol("p", positive=True)
    gap = sp.Max(0, lam1 * pre) - lam1 * sp.Max(0, pre)
    return {
        "gap": gap,
        "p>0": sp.simplify(gap.subs(pre, p_pos)),
        "p<0": sp.simplify(gap.subs(pre, -p_pos)),
        "symbols": {"lambda_1": lam1, "p": pre, "p_+": p_pos},
    }


def sublayer_lambda_gradients() -> dict[str, object]:
    """z_{l+1} = x_l + λ₁λ₂·φ(x_l U₁)U₂/α (FFN; h_ffn = φ(x_l U₁)U₂ after pulling λ₁ out of the
    ReLU) and z_{l+1} = x_l + λ_vλ_o·σ(λ_qλ_k S)·h_att/α (single-head attention; σ the softmax,
    S = x_l U_q U_kᵀ x_lᵀ, h_att = x_l U_v U_o). ∂z/∂λ of each; with ∂L/∂x_{l+1}·∂x_{l+1}/∂z_{l+1}
    = O(1), these are the orders of ∂L/∂λ. Also the power of λ and of α once every λ is equal."""
    sigma = sp.Function("sigma")
    z_ffn = x_l + lam1 * lam2 * h_ffn / alpha
    z_att = x_l + lam_v * lam_o * sigma(lam_q * lam_k * score) * h_att / alpha
    grads = {
        "dz/dlambda_1": sp.diff(z_ffn, lam1),
        "dz/dlambda_2": sp.diff(z_ffn, lam2),
        "dz/dlambda_v": sp.diff(z_att, lam_v),
        "dz/dlambda_o": sp.diff(z_att, lam_o),
        "dz/dlambda_q": sp.diff(z_att, lam_q),
    }
    same = {lam1: lam, lam2: lam, lam_v: lam, lam_o: lam}
    common = sp.simplify(grads["dz/dlambda_1"].subs(same) / h_ffn)
    return {
        **grads,
        "common (all lambda equal)": common,
        "power of lambda": sp.degree(common, lam),
        "power of alpha": sp.degree(sp.denom(common), alpha) * -1,
        "symbols": {
            "x_l": x_l,
            "alpha": alpha,
            "lambda": lam,
            "h_ffn": h_ffn,
            "h_att": h_att,
            "S": score,
            **{str(s): s for s in (lam1, lam2, lam_q, lam_k, lam_v, lam_o)},
        },
        "sigma": sigma,
    }


# ---- solving for α and λ --------------------------------------------------------------------------

PICK_EQUATIONS = {"lambda=1/alpha": sp.Eq(lam, 1 / alpha), "alpha=1": sp.Eq(alpha, 1), "lambda=1": sp.Eq(lam, 1)}


def solve_pick(optimizer: str, pick: str) -> dict[str, object]:
    """Solve the optimizer's condition (from :func:`deepnotes.core.derive.deepnorm_ratio`) together with
    one pick (λ = 1/α, α = 1 or λ = 1) for positive (α, λ)."""
    if pick not in PICK_EQUATIONS:
        raise ValueError(f"unknown pick {pick!r}; allowed: {', '.join(PICK_EQUATIONS)}")
    condition = deepnorm_ratio(optimizer)["condition"]  # raises ValueError on a bad optimizer
    sols = sp.solve([condition, PICK_EQUATIONS[pick]], [alpha, lam], dict=True)
    (sol,) = [s for s in sols if s[alpha].is_positive and s[lam].is_positive]
    al, la = sp.simplify(sol[alpha]), sp.simplify(sol[lam])
    return {
        "condition": condition,
        "alpha": al,
        "lambda": la,
        "branch_weight": sp.simplify(la**2 / al),
        "symbols": {"N": N, "alpha": alpha, "lambda": lam},
    }


def paper_constants_in_conditions() -> dict[str, object]:
    """Each optimizer's depth condition (:func:`deepnotes.core.derive.deepnorm_ratio`, whose left side = 1 keeps
    ΔL independent of N) with DeepNet's encoder constants of :func:`paper_constants` put in for (α, λ): optimizer →
    the simplified left side as a function of N (constant in N where the constants meet that optimizer's
    condition up to a factor; growing with N where they do not)."""
    al, be = paper_constants()["encoder"]
    out: dict[str, object] = {
        opt: sp.simplify(deepnorm_ratio(opt)["condition"].lhs.subs({alpha: al, lam: be})) for opt in OPTIMIZERS
    }
    out["symbols"] = {"N": N}
    return out


# ---- the annotated section's side claims ----------------------------------------------------------


def softmax_scaling(values=(1, 2, 3)) -> dict:
    """σ(x) and σ(2x) at ``values``: softmax ignores a shift x + c but not a scaling; ``gap`` is
    max |σ(2x) − σ(x)| (a float)."""
    x = sp.Matrix(list(values))
    soft = [sp.exp(v) / sum(sp.exp(u) for u in x) for v in x]
    soft2 = [sp.exp(2 * v) / sum(sp.exp(2 * u) for u in x) for v in x]
    return {
        "x": x,
        "softmax": soft,
        "softmax_2x": soft2,
        "gap": max(abs(float(p - q)) for p, q in zip(soft, soft2, strict=True)),
        "symbols": {},
    }


def pre_ln_jacobian() -> dict:
    """∂/∂x of a Pre-LN sublayer x + λ₁λ₂·h(x) with λ₁ = λ₂ = λ, h′ written as a symbol: 1 + λ²h′."""
    x_sym, h_prime = sp.Symbol("x", real=True), sp.Symbol("h'", real=True)
    h_fun = sp.Function("h")
    jac = sp.diff(x_sym + lam1 * lam2 * h_fun(x_sym), x_sym).subs({lam1: lam, lam2: lam})
    jac = jac.subs(sp.Derivative(h_fun(x_sym), x_sym), h_prime)
    return {"jacobian": jac, "symbols": {"x": x_sym, "h'": h_prime, "lambda": lam, "h": h_fun}}


def pre_ln_product_limit() -> dict:
    """lim_{N→∞} (1 + λ²)^{2N} with Pre-LN's λ² = 1/(2N) (SGD, α = 1): the product of the 2N
    sublayer Jacobians' scales stays bounded."""
    lam_sq = solve_pick("sgd", "alpha=1")["lambda"] ** 2
    return {"lambda_sq": lam_sq, "limit": sp.limit((1 + lam_sq) ** (2 * N), N, sp.oo), "symbols": {"N": N}}


def pre_ln_printed_limit() -> dict:
    """lim_{N→∞} (1 + λ)^N, the annotated eq. (65)'s factor taken as printed, with Pre-LN's
    λ = 1/√(2N) (SGD, α = 1)."""
    lam_pre = solve_pick("sgd", "alpha=1")["lambda"]
    return {"lambda": lam_pre, "limit": sp.limit((1 + lam_pre) ** N, N, sp.oo), "symbols": {"N": N}}


def near_identity_limit() -> dict:
    """lim_{ε→0} ∂/∂x (x + εF(x)) = 1."""
    x_sym, eps, f_fun = sp.Symbol("x", real=True), sp.Symbol("epsilon", positive=True), sp.Function("F")
    return {
        "limit": sp.limit(sp.diff(x_sym + eps * f_fun(x_sym), x_sym), eps, 0),
        "symbols": {"x": x_sym, "epsilon": eps, "F": f_fun},
    }
