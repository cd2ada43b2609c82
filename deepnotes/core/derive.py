"""SymPy derivations. Each function returns expressions; the chapters display them and the tests
check that ``sympy.lambdify`` of each result equals the matching plain formula in ``scaling``.
"""
from __future__ import annotations

import sympy as sp

# symbols shared by the derivations (all positive: depths, counts, sizes, rates)
N, K, P = sp.symbols("N K P", positive=True, integer=True)   # depth, matrices per block, entries per matrix
eta, g = sp.symbols("eta g", positive=True)                   # learning rate, gradient entry size
i = sp.symbols("i", positive=True, integer=True)
alpha, lam = sp.symbols("alpha lambda", positive=True)        # DeepNorm skip weight, init gain λ (= β)
p = sp.symbols("p", real=True)                                # exponent of a depth-dependent scale


def loss_change(optimizer: str) -> dict[str, sp.Expr]:
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
    per_entry = g * update                                    # ⟨∇L, Δθ⟩ per entry
    total = sp.Sum(per_entry, (i, 1, N * K * P)).doit()
    return {"update": update, "per_entry": sp.simplify(per_entry), "delta_L": sp.simplify(total)}


def depth_exponent(expr: sp.Expr, var: sp.Symbol = N) -> sp.Expr:
    """The power of ``var`` in ``expr``: lim_{var→∞} log|expr| / log var."""
    return sp.limit(sp.log(sp.Abs(expr)) / sp.log(var), var, sp.oo)


def depth_cancelling_exponent(optimizer: str) -> sp.Expr:
    """Solve for p such that gradients g = g₀·N^p make ΔL independent of N."""
    g0 = sp.symbols("g0", positive=True)
    scaled = loss_change(optimizer)["delta_L"].subs(g, g0 * N ** p)
    exponent = sp.expand_log(sp.log(sp.Abs(scaled)), force=True).coeff(sp.log(N))
    (solution,) = sp.solve(sp.Eq(exponent, 0), p)
    return solution


def warmup_lr(optimizer: str = "sgd") -> sp.Expr:
    """The learning rate η' at depth N whose ΔL equals that of η at depth 1: solve ΔL_N(η') = ΔL_1(η)."""
    eta_n = sp.symbols("eta_N", positive=True)
    dl = loss_change(optimizer)["delta_L"]
    (solution,) = sp.solve(sp.Eq(dl.subs(eta, eta_n), dl.subs(N, 1)), eta_n)
    return solution


def deepnorm_ratio(optimizer: str) -> dict[str, sp.Expr]:
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
    (sol,) = [s for s in sp.solve([condition, pick], [alpha, lam], dict=True)
              if s[alpha].is_positive and s[lam].is_positive]
    return {"condition": condition, "alpha": sp.simplify(sol[alpha]), "lambda": sp.simplify(sol[lam])}


def loss_change_exponent(optimizer: str, grad_scale: sp.Expr) -> sp.Expr:
    """Power of N in ΔL when every one of the 2N sublayers' gradients is of size ``grad_scale``
    (λ/α for DeepNorm): SGD ΔL ∝ 2N·s², Adam ΔL ∝ 2N·s."""
    power = {"sgd": 2, "adam": 1}.get(optimizer)
    if power is None:
        raise ValueError(f"unknown optimizer {optimizer!r}; allowed: sgd, adam")
    return depth_exponent(2 * N * grad_scale ** power)


# ---- initialization, parametrization, normalization (seed 002) ----------------------------------

x, z = sp.symbols("x z", real=True)
mu = sp.symbols("mu", real=True)
sigma, q, d = sp.symbols("sigma q d", positive=True)
m, s_w, s_x = sp.symbols("m s_w s_x", positive=True)    # fan-in, E[w²], E[x²]
gauss = sp.exp(-z ** 2 / 2) / sp.sqrt(2 * sp.pi)           # the standard normal density


def uniform_with_moments() -> dict[str, sp.Expr]:
    """U[a, b]: mean (a+b)/2 and variance (b−a)²/12 by integration; solved for a, b given μ, σ."""
    a, b = sp.symbols("a b", real=True)
    mean = sp.integrate(x / (b - a), (x, a, b))
    var = sp.simplify(sp.integrate((x - mean) ** 2 / (b - a), (x, a, b)))
    sols = sp.solve([sp.Eq(mean, mu), sp.Eq(var, sigma ** 2)], [a, b], dict=True)
    (sol,) = [s for s in sols if (s[b] - s[a]).subs({mu: 0, sigma: 1}) > 0]
    return {"mean": sp.simplify(mean), "variance": sp.factor(var), "a": sol[a], "b": sol[b]}


def truncated_normal_gamma(k: int = 2) -> dict[str, sp.Expr]:
    """γ = ∫_{−k}^{k} z² e^{−z²/2} dz / ∫_{−k}^{k} e^{−z²/2} dz, and the std to pass, σ/√γ."""
    gamma = sp.simplify(sp.integrate(z ** 2 * gauss, (z, -k, k)) / sp.integrate(gauss, (z, -k, k)))
    return {"gamma": gamma, "std_factor": 1 / sp.sqrt(gamma)}


def linear_second_moment() -> dict[str, sp.Expr]:
    """E[y²] for y = Σ_i x_i w_i = Σ_{i,j} E[x_i x_j]·E[w_i w_j]. With i.i.d. zero-mean w,
    E[w_i w_j] = 0 for i ≠ j, so only the m diagonal terms E[x_i²]·E[w²] are left; nothing is
    assumed about the mean of x. Then E[w²] for E[y²] = E[x²] (LeCun) and, with ReLU keeping
    E[relu(z)²] = E[z²]/2 of a symmetric input, for He."""
    ey2 = sp.Sum(s_x * s_w, (i, 1, m)).doit()
    relu_factor = sp.integrate(z ** 2 * gauss, (z, 0, sp.oo)) / sp.integrate(z ** 2 * gauss, (z, -sp.oo, sp.oo))
    lecun = sp.solve(sp.Eq(ey2, s_x), s_w)[0]
    he = sp.solve(sp.Eq(ey2 * relu_factor, s_x), s_w)[0]
    return {"E[y^2]": ey2, "relu_factor": relu_factor, "lecun": lecun, "he": he}


def sigmoid_second_moment(digits: int = 15) -> sp.Float:
    """E[sigmoid(z)²], z ~ N(0,1), by numerical integration (SymPy → mpmath)."""
    return sp.Integral(gauss / (1 + sp.exp(-z)) ** 2, (z, -sp.oo, sp.oo)).evalf(digits)


def selu_constants(digits: int = 20) -> dict[str, sp.Expr]:
    """SELU λ, α from E[selu(z)] = 0 and E[selu(z)²] = 1 for z ~ N(0,1), selu(z) = λz (z>0),
    λα(eᶻ − 1) (z ≤ 0). The Gaussian integrals are done in closed form, then solved."""
    lam_, al = sp.symbols("lambda_s alpha_s", positive=True)
    pos1 = sp.integrate(z * gauss, (z, 0, sp.oo))
    neg1 = sp.integrate((sp.exp(z) - 1) * gauss, (z, -sp.oo, 0))
    pos2 = sp.integrate(z ** 2 * gauss, (z, 0, sp.oo))
    neg2 = sp.integrate((sp.exp(z) - 1) ** 2 * gauss, (z, -sp.oo, 0))
    alpha_closed = sp.simplify(sp.solve(sp.Eq(pos1 + al * neg1, 0), al)[0])
    lam_closed = sp.simplify(sp.solve(sp.Eq(lam_ ** 2 * (pos2 + alpha_closed ** 2 * neg2), 1), lam_)[0])
    return {"alpha": alpha_closed, "lambda": lam_closed,
            "alpha_value": alpha_closed.evalf(digits), "lambda_value": lam_closed.evalf(digits)}


def dot_product_second_moment() -> sp.Expr:
    """E[(q·k)²] = Σ_{i,j} E[q_i q_j]·E[k_i k_j] for independent q, k with i.i.d. zero-mean,
    unit-variance entries: the cross terms vanish, the d diagonal terms are 1 each."""
    return sp.Sum(sp.Integer(1), (i, 1, d)).doit()


def layernorm_jacobian(dim: int = 4) -> dict[str, sp.Matrix]:
    """∂x̂_i/∂x_j of x̂ = (x − μ)/σ (σ² = mean of (x−μ)², no ε) by SymPy for ``dim`` entries,
    and seed 000's annotated eq. (14): (δ_ij − 1/d)/σ − x̂_i (x_j − μ)/(d σ²)."""
    xs = sp.symbols(f"x1:{dim + 1}", real=True)
    mean = sum(xs) / dim
    sd = sp.sqrt(sum((xi - mean) ** 2 for xi in xs) / dim)
    xhat = [(xi - mean) / sd for xi in xs]
    jac = sp.Matrix(dim, dim, lambda i, j: sp.diff(xhat[i], xs[j]))
    claimed = sp.Matrix(dim, dim, lambda i, j: (sp.KroneckerDelta(i, j) - sp.Rational(1, dim)) / sd
                        - xhat[i] * (xs[j] - mean) / (dim * sd ** 2))
    return {"symbols": xs, "jacobian": jac, "claimed": claimed}


# ---- Post-Norm vs Pre-Norm (seeds 002, 003) -----------------------------------------------------

v = sp.symbols("v", nonnegative=True)                     # branch second moment relative to its input
ell = sp.symbols("l", integer=True, nonnegative=True)


def post_norm_unroll(layers: int = 4) -> dict[str, sp.Expr]:
    """x_{t+1} = (x_t + F_t)/√(1+v) (Post-Norm at init with E[F²] = v·E[x²]) unrolled ``layers``
    times, and the weight w_l of x_0 solved from w_l = w_{l−1}/√(1+v), w_0 = 1."""
    x0 = sp.Symbol("x_0")
    fs = sp.symbols(f"F_0:{layers}")
    xl = x0
    for t in range(layers):
        xl = (xl + fs[t]) / sp.sqrt(1 + v)
    w = sp.Function("w")
    weight = sp.rsolve(w(ell) - w(ell - 1) / sp.sqrt(1 + v), w(ell), {w(0): 1})
    return {"x_l": sp.expand(xl), "x_l (v=1)": sp.expand(xl.subs(v, 1)), "weight_x0": sp.simplify(weight),
            "weights": [sp.simplify(sp.expand(xl).coeff(s)) for s in (x0, *fs)]}


def pre_norm_second_moment() -> sp.Expr:
    """Pre-Norm: x_{t+1} = x_t + F_t(LN(x_t)) with E[F_t²] = v and E[x_0²] = 1; the second moment
    solves s_l = s_{l−1} + v, s_0 = 1."""
    s = sp.Function("s")
    return sp.rsolve(s(ell) - s(ell - 1) - v, s(ell), {s(0): 1})


def update_scale_invariance() -> dict[str, sp.Expr]:
    """A gradient scaled by c > 0 (Post-Norm's weakened lower layers): SGD's step −ηcg scales with
    c; Adam's −η·E[cg]/√E[(cg)²] (one sample: −η·cg/|cg|) does not."""
    c = sp.symbols("c", positive=True)
    gr = sp.symbols("g", real=True, nonzero=True)
    return {"sgd": -eta * c * gr, "adam": sp.simplify(-eta * c * gr / sp.sqrt((c * gr) ** 2))}


def ffn_branch_second_moment() -> sp.Expr:
    """E[F²] of F(x) = relu(x W₁) W₂ (d → 4d → d, i.i.d. weights of std s, E[x²] = 1):
    pre-activations d·s², after ReLU half of it, output 4d·s² times that."""
    s_ = sp.symbols("s", positive=True)
    pre = d * s_ ** 2
    return sp.simplify(4 * d * s_ ** 2 * pre * sp.Rational(1, 2))
