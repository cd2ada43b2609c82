"""SymPy derivations of the chapter "Increment explosion", gathered from the shared increment
derivations of :mod:`deepnotes.core.derive` (ΔL ≈ ⟨∇L, Δθ⟩ over N blocks of K matrices): every
function returns a dict that includes the symbols it uses (``"symbols"``)."""

from __future__ import annotations

import sympy as sp

from deepnotes.core import derive as core
from deepnotes.core import scaling
from deepnotes.core.derive import K, N, P, alpha, eta, g, lam
from deepnotes.core.validate import Depth

OPTIMIZERS = ("sgd", "adam")  # the optimizers whose ΔL is summed in closed form
DEEPNORM_OPTIMIZERS = ("sgd", "adam", "lamb")
EXAMPLE_DEPTH = 100  # the depth of the sources' worked examples (eq. (12), §10.3)
SYMBOLS = {"N": N, "K": K, "P": P, "eta": eta, "g": g, "alpha": alpha, "lambda": lam}


def increment() -> dict:
    """Everything the derivation section shows, per optimizer:

    ``loss_change``: ΔL (with the update and the per-entry term); ``exponent``: its power of N;
    ``cancelling_exponent``: the p of gradients g₀·N^p that make ΔL independent of N;
    ``warmup_lr``: the learning rate η_N at depth N with the ΔL of η at one block;
    ``deepnorm``: the DeepNorm condition on λ/α over 2N sublayers and its (α, λ) (SGD, Adam, LAMB).
    """
    loss_change = {opt: core.loss_change(opt) for opt in OPTIMIZERS}
    return {
        "loss_change": loss_change,
        "exponent": {opt: core.depth_exponent(loss_change[opt]["delta_L"]) for opt in OPTIMIZERS},
        "cancelling_exponent": {opt: core.depth_cancelling_exponent(opt) for opt in OPTIMIZERS},
        "warmup_lr": {opt: core.warmup_lr(opt) for opt in OPTIMIZERS},
        "deepnorm": {opt: core.deepnorm_ratio(opt) for opt in DEEPNORM_OPTIMIZERS},
        "symbols": SYMBOLS,
    }


def depth_ratio(expr: sp.Expr, deep: Depth, shallow: Depth) -> dict:
    """expr(N = deep) / expr(N = shallow), e.g. how much larger ΔL is at 100 blocks than at 10."""
    return {"ratio": sp.simplify(expr.subs(N, deep) / expr.subs(N, shallow)), "symbols": {"N": N}}


def deepnet_encoder(n_layers: Depth = EXAMPLE_DEPTH) -> dict:
    """DeepNet's encoder constants α = (2N)^{1/4}, β = (8N)^{-1/4}: SymPy simplifies β/α to
    1/√(4N); the numbers at ``n_layers`` come from :func:`deepnotes.core.scaling.deepnorm_coefficients`."""
    ratio = sp.simplify((8 * N) ** sp.Rational(-1, 4) / (2 * N) ** sp.Rational(1, 4))
    a, b = scaling.deepnorm_coefficients(n_layers)
    return {
        "n_layers": n_layers,
        "ratio": ratio,
        "alpha": a,
        "beta": b,
        "ratio_value": float(ratio.subs(N, n_layers)),
        "symbols": {"N": N},
    }


def jacobian_counterexamples() -> dict:
    """Two 2×2 examples against the annotated §1.2–§1.3 bounds on products of layer Jacobians.

    ``lower_bound``: J = [[0, β], [0, 0]] has spectral norm β, yet J·J = 0, so ‖J₂J₁‖ ≥ β² (eq. (4)) fails;
    ``residual``: the eigenvalues of I + A for A = diag(−1/2, 1/2), a branch Jacobian with a negative
    eigenvalue, so "the residual's I keeps every eigenvalue ≥ 1" (§1.3, §13) fails."""
    beta = sp.Symbol("beta", positive=True)
    jac = sp.Matrix([[0, beta], [0, 0]])  # [2, 2]
    branch = sp.diag(-sp.Rational(1, 2), sp.Rational(1, 2))  # [2, 2]
    return {
        "lower_bound": {
            "J": jac,
            "norm_J": sp.sqrt(max((jac.T * jac).eigenvals())),
            "norm_product": (jac * jac).norm(2),
            "claimed": beta**2,
        },
        "residual": {"A": branch, "eigenvalues": sorted((sp.eye(2) + branch).eigenvals())},
        "symbols": {"beta": beta},
    }
