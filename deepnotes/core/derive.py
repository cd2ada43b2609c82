"""SymPy derivations that two or more chapters use (the increment ΔL, its depth exponents, the DeepNorm
conditions, the second moment of a linear layer, the truncated normal). Each function returns
expressions; the tests check that ``sympy.lambdify`` of each result equals the matching plain formula
in :mod:`deepnotes.core.scaling`. The symbols are :mod:`deepnotes.core.symbols`'."""
from __future__ import annotations

import sympy as sp

from deepnotes.core.symbols import *  # noqa: F401,F403  (the shared symbols, re-exported)
from deepnotes.core.symbols import K, N, P, alpha, eta, g, gauss, i, lam, m, p, s_w, s_x, z


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
