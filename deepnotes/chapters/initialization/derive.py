"""SymPy derivations of the chapter "Initialization, parametrization and normalization" (seed 002)."""
from __future__ import annotations

import sympy as sp

from deepnotes.core.symbols import d, gauss, i, mu, sigma, x, z


def uniform_with_moments() -> dict[str, sp.Expr]:
    """U[a, b]: mean (a+b)/2 and variance (b−a)²/12 by integration; solved for a, b given μ, σ."""
    a, b = sp.symbols("a b", real=True)
    mean = sp.integrate(x / (b - a), (x, a, b))
    var = sp.simplify(sp.integrate((x - mean) ** 2 / (b - a), (x, a, b)))
    sols = sp.solve([sp.Eq(mean, mu), sp.Eq(var, sigma ** 2)], [a, b], dict=True)
    (sol,) = [s for s in sols if (s[b] - s[a]).subs({mu: 0, sigma: 1}) > 0]
    return {"mean": sp.simplify(mean), "variance": sp.factor(var), "a": sol[a], "b": sol[b]}


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
