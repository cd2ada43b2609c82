"""SymPy derivations of the chapter "Initialization, parametrization and normalization" (seed 002).

Every function returns a dict with the results and, under ``"symbols"``, the symbols it used
(name → Symbol), so that the notebook and the verdicts never rebuild a symbol."""

from __future__ import annotations

import sympy as sp

from deepnotes.core.derive import (
    d,
    eta,
    gauss,
    i,
    linear_second_moment,
    m,
    mu,
    s_w,
    s_x,
    sigma,
    truncated_normal_gamma,
    x,
    z,
)
from deepnotes.core.validate import Digits, NonNegativeCount, Symbolic

TRUNCATION_K = 2  # TensorFlow's truncated normal cuts at ±2σ
LAYERNORM_POINT = (sp.Rational(3, 10), sp.Rational(-7, 5), sp.Integer(2), sp.Rational(1, 7))  # a rational test point
THREE_SIGMA = 3  # "scores fall within ±3√d"


def uniform_with_moments() -> dict:
    """U[a, b]: mean (a+b)/2 and variance (b−a)²/12 by integration; solved for a, b given μ, σ."""
    a, b = sp.symbols("a b", real=True)
    mean = sp.integrate(x / (b - a), (x, a, b))
    var = sp.simplify(sp.integrate((x - mean) ** 2 / (b - a), (x, a, b)))
    sols = sp.solve([sp.Eq(mean, mu), sp.Eq(var, sigma**2)], [a, b], dict=True)
    (sol,) = [s for s in sols if (s[b] - s[a]).subs({mu: 0, sigma: 1}) > 0]
    return {
        "mean": sp.simplify(mean),
        "variance": sp.factor(var),
        "a": sol[a],
        "b": sol[b],
        "symbols": {"a": a, "b": b, "x": x, "mu": mu, "sigma": sigma},
    }


def sampling(k: NonNegativeCount = TRUNCATION_K) -> dict:
    """The uniform's interval for a given mean and variance, and the truncated normal's variance
    factor γ = ∫_{−k}^{k} z² φ(z) dz / ∫_{−k}^{k} φ(z) dz with the std to pass, σ/√γ."""
    uni = uniform_with_moments()
    tn = truncated_normal_gamma(k)
    return {
        "uniform": uni,
        "interval": sp.Tuple(uni["a"], uni["b"]),
        "gamma": tn["gamma"],
        "std_factor": tn["std_factor"],
        "k": k,
        "symbols": {**uni["symbols"], "z": z},
    }


def sigmoid_second_moment(digits: Digits = 15) -> dict:
    """E[sigmoid(z)²], z ~ N(0,1), by numerical integration (SymPy → mpmath)."""
    integral = sp.Integral(gauss / (1 + sp.exp(-z)) ** 2, (z, -sp.oo, sp.oo))
    return {"integral": integral, "value": integral.evalf(digits), "symbols": {"z": z}}


def second_moments() -> dict:
    """E[y²] = m·E[w²]·E[x²] of a linear layer, the ReLU factor 1/2, LeCun's and He's E[w²]
    (:func:`deepnotes.core.derive.linear_second_moment`), and E[sigmoid(z)²]."""
    lin = linear_second_moment()
    return {
        **lin,
        "E[sigmoid(z)^2]": sigmoid_second_moment()["value"],
        "symbols": {"m": m, "s_w": s_w, "s_x": s_x, "i": i, "z": z},
    }


def selu_constants(digits: Digits = 20) -> dict:
    """SELU λ, α from E[selu(z)] = 0 and E[selu(z)²] = 1 for z ~ N(0,1), selu(z) = λz (z>0),
    λα(eᶻ − 1) (z ≤ 0). The Gaussian integrals are done in closed form, then solved."""
    lam_, al = sp.symbols("lambda_s alpha_s", positive=True)
    pos1 = sp.integrate(z * gauss, (z, 0, sp.oo))
    neg1 = sp.integrate((sp.exp(z) - 1) * gauss, (z, -sp.oo, 0))
    pos2 = sp.integrate(z**2 * gauss, (z, 0, sp.oo))
    neg2 = sp.integrate((sp.exp(z) - 1) ** 2 * gauss, (z, -sp.oo, 0))
    alpha_closed = sp.simplify(sp.solve(sp.Eq(pos1 + al * neg1, 0), al)[0])
    lam_closed = sp.simplify(sp.solve(sp.Eq(lam_**2 * (pos2 + alpha_closed**2 * neg2), 1), lam_)[0])
    return {
        "alpha": alpha_closed,
        "lambda": lam_closed,
        "alpha_value": alpha_closed.evalf(digits),
        "lambda_value": lam_closed.evalf(digits),
        "symbols": {"lambda_s": lam_, "alpha_s": al, "z": z},
    }


def dot_product_second_moment() -> dict:
    """E[(q·k)²] = Σ_{i,j} E[q_i q_j]·E[k_i k_j] for independent q, k with i.i.d. zero-mean,
    unit-variance entries: the cross terms vanish, the d diagonal terms are 1 each."""
    return {"E[(q.k)^2]": sp.Sum(sp.Integer(1), (i, 1, d)).doit(), "symbols": {"i": i, "d": d}}


def ntk_and_attention() -> dict:
    """The NTK parametrization's second moment (E[w²] = 1, output divided by √m), E[(q·k)²] with and
    without 1/√d, T5's init (E[q_i²] = E[k_i²] = 1/√d), the Gaussian mass within ±3√d, and the
    relative size of one Adam step (±η per entry) under He init and under NTK."""
    qk = dot_product_second_moment()["E[(q.k)^2]"]
    he = linear_second_moment()["he"]
    return {
        "ntk_moment": sp.Sum(s_x * 1 / m, (i, 1, m)).doit(),
        "qk": qk,
        "qk_scaled": sp.simplify(qk / d),
        "t5": sp.Sum((1 / sp.sqrt(d)) ** 2, (i, 1, d)).doit(),
        "within_3sd": sp.erf(THREE_SIGMA / sp.sqrt(2)),
        "update_he": eta / sp.sqrt(he),
        "update_ntk": eta / 1,
        "symbols": {"s_x": s_x, "m": m, "i": i, "d": d, "eta": eta},
    }


def layernorm_jacobian(dim: Symbolic = len(LAYERNORM_POINT)) -> dict:
    """∂x̂_i/∂x_j of x̂ = (x − μ)/σ (σ² = mean of (x−μ)², no ε) by SymPy for ``dim`` entries,
    and seed 000's annotated eq. (14): (δ_ij − 1/d)/σ − x̂_i (x_j − μ)/(d σ²)."""
    xs = sp.symbols(f"x1:{dim + 1}", real=True)
    mean = sum(xs) / dim
    sd = sp.sqrt(sum((xi - mean) ** 2 for xi in xs) / dim)
    xhat = [(xi - mean) / sd for xi in xs]
    jac = sp.Matrix(dim, dim, lambda r, c: sp.diff(xhat[r], xs[c]))
    claimed = sp.Matrix(
        dim,
        dim,
        lambda r, c: (sp.KroneckerDelta(r, c) - sp.Rational(1, dim)) / sd - xhat[r] * (xs[c] - mean) / (dim * sd**2),
    )
    return {"jacobian": jac, "claimed": claimed, "symbols": {str(s): s for s in xs}}


def layernorm_jacobian_check(point=LAYERNORM_POINT) -> dict:
    """The SymPy Jacobian minus eq. (14), evaluated exactly at a rational ``point``."""
    jac = layernorm_jacobian(len(point))
    at = dict(zip(jac["symbols"].values(), point, strict=True))
    gap = sp.nsimplify((jac["jacobian"] - jac["claimed"]).subs(at).applyfunc(sp.simplify))
    return {**jac, "gap": gap, "zero": gap == sp.zeros(len(point), len(point)), "point": point}


def prose_numbers(sampling_result: dict) -> dict[str, str]:
    """The derived numbers the take-aways quote (glued into them): the share 1 − γ of the variance a normal
    cut at ±kσ loses, in %, from :func:`sampling`."""
    return {"truncation_loss_pct": f"{100 * (1 - float(sampling_result['gamma'])):.0f}"}
