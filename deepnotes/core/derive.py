"""SymPy derivations that two or more chapters use (the increment ΔL, its depth exponents, the DeepNorm
conditions and the paper's constants, the second moment of a linear layer, the truncated normal, the
Post-Norm and Pre-Norm streams at initialization), and the symbols they share, each with its
assumptions (a chapter's own symbols live in its ``derive.py``). Each function returns expressions;
the tests check that ``sympy.lambdify`` of each result equals the matching plain formula in
:mod:`deepnotes.core.scaling`.
"""

from __future__ import annotations

import sympy as sp

from deepnotes.core.rules import Rule
from deepnotes.core.validate import Depth, NonNegativeCount

N, K, P = sp.symbols("N K P", positive=True, integer=True)  # depth, matrices per block, entries per matrix
eta, g = sp.symbols("eta g", positive=True)  # learning rate, gradient entry size
i = sp.symbols("i", positive=True, integer=True)
alpha, lam = sp.symbols("alpha lambda", positive=True)  # DeepNorm skip weight, init gain λ (= β)
p = sp.symbols("p", real=True)  # exponent of a depth-dependent scale
x, z = sp.symbols("x z", real=True)
mu = sp.symbols("mu", real=True)
sigma, q, d = sp.symbols("sigma q d", positive=True)
m, s_w, s_x = sp.symbols("m s_w s_x", positive=True)  # fan-in, E[w²], E[x²]
gauss = sp.exp(-(z**2) / 2) / sp.sqrt(2 * sp.pi)  # the standard normal density
v = sp.symbols("v", nonnegative=True)  # a branch's second moment relative to the stream
ell = sp.symbols("l", integer=True, nonnegative=True)  # a layer index


def loss_change(optimizer: str) -> dict[str, object]:
    """ΔL ≈ ⟨∇L, Δθ⟩ summed over the N·K·P entries of N blocks of K matrices with P entries of size g.

    SGD:  Δθ_i = −η g_i          → ΔL = −η Σ g²
    Adam: Δθ_i = −η sign(g_i)     → ΔL = −η Σ |g|   (Adam's first step, and roughly every step)
    Returns the per-entry term, the update and ΔL as a closed form.
    """
    if optimizer == "sgd":
        update = -eta * g
    elif optimizer == "adam":
        update = -eta * sp.sign(g)
    else:
        raise ValueError(f"unknown optimizer {optimizer!r}; allowed: sgd, adam")
    per_entry = g * update  # ⟨∇L, Δθ⟩ per entry
    total = sp.Sum(per_entry, (i, 1, N * K * P)).doit()
    return {"update": update, "per_entry": sp.simplify(per_entry), "delta_L": sp.simplify(total)}


def depth_exponent(expr: sp.Expr, var: sp.Symbol = N) -> sp.Expr:
    """The power of ``var`` in ``expr``: lim_{var→∞} log|expr| / log var."""
    return sp.limit(sp.log(sp.Abs(expr)) / sp.log(var), var, sp.oo)


def depth_cancelling_exponent(optimizer: str) -> sp.Expr:
    """Solve for p such that gradients g = g₀·N^p make ΔL independent of N."""
    g0 = sp.symbols("g0", positive=True)
    scaled = loss_change(optimizer)["delta_L"].subs(g, g0 * N**p)
    exponent = sp.expand_log(sp.log(sp.Abs(scaled)), force=True).coeff(sp.log(N))
    (solution,) = sp.solve(sp.Eq(exponent, 0), p)
    return solution


def warmup_lr(optimizer: str = "sgd") -> sp.Expr:
    """The learning rate η' at depth N whose ΔL equals that of η at depth 1: solve ΔL_N(η') = ΔL_1(η)."""
    eta_n = sp.symbols("eta_N", positive=True)
    dl = loss_change(optimizer)["delta_L"]
    (solution,) = sp.solve(sp.Eq(dl.subs(eta, eta_n), dl.subs(N, 1)), eta_n)
    return solution


def deepnorm_ratio(optimizer: str) -> dict[str, object]:
    """Per-matrix gradients O(λ/α) over 2N sublayers; ΔL independent of N requires

    SGD:  2N·(λ/α)² = 1,   Adam: 2N·(λ/α) = 1,   LAMB (Δθ ∝ ‖θ‖ ∝ λ): 2N·λ·(λ/α) = 1.
    Returns the condition and (α, λ) under λ = 1/α (SGD, Adam) or α = 1 (LAMB).
    """
    if optimizer == "sgd":
        condition = sp.Eq(2 * N * (lam / alpha) ** 2, 1)
        pick = sp.Eq(lam, 1 / alpha)
    elif optimizer == "adam":
        condition = sp.Eq(2 * N * (lam / alpha), 1)
        pick = sp.Eq(lam, 1 / alpha)
    elif optimizer == "lamb":
        condition = sp.Eq(2 * N * lam * (lam / alpha), 1)
        pick = sp.Eq(alpha, 1)
    else:
        raise ValueError(f"unknown optimizer {optimizer!r}; allowed: sgd, adam, lamb")
    (sol,) = [
        s for s in sp.solve([condition, pick], [alpha, lam], dict=True) if s[alpha].is_positive and s[lam].is_positive
    ]
    return {"condition": condition, "alpha": sp.simplify(sol[alpha]), "lambda": sp.simplify(sol[lam])}


def loss_change_exponent(optimizer: str, grad_scale: sp.Expr) -> sp.Expr:
    """Power of N in ΔL when every one of the 2N sublayers' gradients is of size ``grad_scale``
    (λ/α for DeepNorm): SGD ΔL ∝ 2N·s², Adam ΔL ∝ 2N·s."""
    power = {"sgd": 2, "adam": 1}.get(optimizer)
    if power is None:
        raise ValueError(f"unknown optimizer {optimizer!r}; allowed: sgd, adam")
    return depth_exponent(2 * N * grad_scale**power)


def truncated_normal_gamma(k: NonNegativeCount = 2) -> dict[str, object]:
    """γ = ∫_{−k}^{k} z² e^{−z²/2} dz / ∫_{−k}^{k} e^{−z²/2} dz, and the std to pass, σ/√γ."""
    gamma = sp.simplify(sp.integrate(z**2 * gauss, (z, -k, k)) / sp.integrate(gauss, (z, -k, k)))
    return {"gamma": gamma, "std_factor": 1 / sp.sqrt(gamma)}


def linear_second_moment() -> dict[str, object]:
    """E[y²] for y = Σ_i x_i w_i = Σ_{i,j} E[x_i x_j]·E[w_i w_j]. With i.i.d. zero-mean w,
    E[w_i w_j] = 0 for i ≠ j, so only the m diagonal terms E[x_i²]·E[w²] are left; nothing is
    assumed about the mean of x. Then E[w²] for E[y²] = E[x²] (LeCun) and, with ReLU keeping
    E[relu(z)²] = E[z²]/2 of a symmetric input, for He."""
    ey2 = sp.Sum(s_x * s_w, (i, 1, m)).doit()
    relu_factor = sp.integrate(z**2 * gauss, (z, 0, sp.oo)) / sp.integrate(z**2 * gauss, (z, -sp.oo, sp.oo))
    lecun = sp.solve(sp.Eq(ey2, s_x), s_w)[0]
    he = sp.solve(sp.Eq(ey2 * relu_factor, s_x), s_w)[0]
    return {"E[y^2]": ey2, "relu_factor": relu_factor, "lecun": lecun, "he": he}


# ---- shared by "Post-Norm vs Pre-Norm" / "Magnitude decomposition" and "Training 1000 layers" ----------


def post_norm_unroll(layers: Depth = 4) -> dict:
    """x_{t+1} = (x_t + F_t)/√(1+v) (Post-Norm at init with E[F²] = v·E[x²]) unrolled ``layers``
    times, and the weight w_l of x_0 solved from w_l = w_{l−1}/√(1+v), w_0 = 1."""
    x0 = sp.Symbol("x_0")
    fs = sp.symbols(f"F_0:{layers}")
    xl = x0
    for k in range(layers):
        xl = (xl + fs[k]) / sp.sqrt(1 + v)
    w = sp.Function("w")
    weight = sp.rsolve(w(ell) - w(ell - 1) / sp.sqrt(1 + v), w(ell), {w(0): 1})
    return {
        "x_l": sp.expand(xl),
        "x_l (v=1)": sp.expand(xl.subs(v, 1)),
        "weight_x0": sp.simplify(weight),
        "weights": [sp.simplify(sp.expand(xl).coeff(f)) for f in (x0, *fs)],
        "symbols": {"v": v, "l": ell, "x_0": x0, **{str(f): f for f in fs}},
    }


def pre_norm_second_moment() -> dict:
    """Pre-Norm: x_{t+1} = x_t + F_t(LN(x_t)) with E[F_t²] = v and E[x_0²] = 1; the second moment
    solves s_l = s_{l−1} + v, s_0 = 1. LN then divides x_l by its square root."""
    s_fn = sp.Function("s")
    moment = sp.rsolve(s_fn(ell) - s_fn(ell - 1) - v, s_fn(ell), {s_fn(0): 1})
    return {"second_moment": moment, "ln_divisor (v=1)": sp.sqrt(moment.subs(v, 1)), "symbols": {"v": v, "l": ell}}


def paper_constants() -> dict[str, object]:
    """DeepNet's constants from S residual sublayers: solve 2S(β/α)² = 1 (SGD's condition with a
    factor 2 to spare) with αβ = 1/√2; S = 2N gives (2N)^{1/4}, (8N)^{-1/4} and S = 3M the
    encoder-decoder's decoder (3M)^{1/4}, (12M)^{-1/4}."""
    s_sub, m_dec = sp.symbols("S M", positive=True)
    condition = sp.Eq(2 * s_sub * (lam / alpha) ** 2, 1)
    pick = sp.Eq(alpha * lam, 1 / sp.sqrt(2))
    (beta_of_alpha,) = sp.solve(pick, lam)  # solved one at a time: a joint solve stalls
    (al,) = sp.solve(condition.subs(lam, beta_of_alpha), alpha)
    be = sp.simplify(beta_of_alpha.subs(alpha, al))
    return {
        "condition": condition,
        "pick": pick,
        "alpha(S)": al,
        "beta(S)": be,
        "encoder": sp.Tuple(sp.simplify(al.subs(s_sub, 2 * N)), sp.simplify(be.subs(s_sub, 2 * N))),
        "encdec decoder": sp.Tuple(sp.simplify(al.subs(s_sub, 3 * m_dec)), sp.simplify(be.subs(s_sub, 3 * m_dec))),
        "beta/alpha encoder": sp.simplify((be / al).subs(s_sub, 2 * N)),
        "M": m_dec,
        "S": s_sub,
        "symbols": {"N": N, "M": m_dec, "S": s_sub, "alpha": alpha, "beta": lam},
    }


two_n = sp.Symbol("(2N)", positive=True)


def in_two_n(expr: sp.Expr) -> sp.Expr:
    """``expr`` written in powers of 2N (the number of sublayers), e.g. 2^{3/4}/(2N^{1/4}) → (2N)^{-1/4}."""
    return sp.powsimp(
        sp.powdenest(sp.expand_power_base(sp.sympify(expr).subs(N, two_n / 2), force=True), force=True), force=True
    )


def in_two_n_tuple(exprs) -> sp.Tuple:
    """:func:`in_two_n` of each expression, as one SymPy tuple (for display)."""
    return sp.Tuple(*(in_two_n(e) for e in exprs))


# ---- a residual rule's first update (issue 65): the magnitude analysis for any rule of deepnotes.core.rules ----


def _reach_sum(placement: str, a2: sp.Expr, c2: sp.Expr, k: int) -> sp.Expr:
    """Σ_{j=1}^{2N} R_j^k over the 2N sublayers, R_j the loss's sensitivity to sublayer j's branch output per unit
    of the branch's input, for a rule with skip weight α (a2 = α²) and branch scale c (c2 = c² = (b·β_in·β_out)²):

        pre:   the stream's second moment grows to S² = 1 + 2N·c² and the final LayerNorm divides by S:
               R_j = 1/S for every j
        post:  each sum is normalized: R_j = (α² + c²)^{-1/2} for every j (DeepNet's premise: a later sublayer
               passes a perturbation on through its skip path and its branch, (α² + c²) in second moment, and its
               LayerNorm divides by the same √(α² + c²))
        none:  nothing is normalized: each sublayer multiplies the stream and its Jacobian by √(α² + c²), so the
               branch's input is Π_{k<j} and the gradient reaching it Π_{k>j}: R_j = (α² + c²)^{(2N−1)/2}
    """
    if placement == "pre":
        return 2 * N * (1 + 2 * N * c2) ** sp.Rational(-k, 2)
    if placement == "none":
        return 2 * N * (a2 + c2) ** (k * (2 * N - 1) / sp.Integer(2))
    return 2 * N * (a2 + c2) ** sp.Rational(-k, 2)


def first_update(rule: Rule, optimizer: str) -> dict[str, object]:
    """The first step's loss change ΔL of ``rule`` (a :class:`deepnotes.core.rules.Rule`) at depth N, to first
    order, at learning rate η·s(N), with P entries per matrix (a width, constant in N):

        a branch F = W_out·σ(W_in·h) scaled by b:   ∂L/∂W_out ∝ b·β_in·R_j,  ∂L/∂W_in ∝ b·β_out·R_j
        a learnable b (one scalar per sublayer):     ∂L/∂b ∝ β_in·β_out·R_j
        SGD (Δθ = −η s g):   ΔL = −η s Σ g²,    Adam (Δθ = −η s sign g):   ΔL = −η s Σ |g|

    summed over the 2N sublayers (:func:`_reach_sum`). Returns ΔL/η, its order in N (the predicted log-log slope
    of the first-step loss change against depth) and whether the rule meets DeepNet's bounded-update condition
    (ΔL = O(1) in N: order ≤ 0)."""
    k = {"sgd": 2, "adam": 1}.get(optimizer)
    if k is None:
        raise ValueError(f"unknown optimizer {optimizer!r}; allowed: sgd, adam")
    f = rule.formulas
    beta_in = f["beta"] if "in" in rule.beta_on else sp.Integer(1)
    beta_out = f["beta"] if "out" in rule.beta_on else sp.Integer(1)
    b = f["branch"]
    c2 = (b * beta_in * beta_out) ** 2
    entries = sp.Symbol("P", positive=True)  # entries per matrix
    per_sublayer = entries * ((b * beta_in) ** k + (b * beta_out) ** k)
    if rule.learnable:
        per_sublayer += (beta_in * beta_out) ** k  # the gate's own gradient
    delta = rule.lr_formula(optimizer) * per_sublayer * _reach_sum(rule.placement, f["alpha"] ** 2, c2, k)
    order = depth_exponent(delta.subs(entries, 1))
    return {"delta_L/eta": sp.simplify(delta), "order": order, "bounded": bool(order <= 0), "P": entries}
