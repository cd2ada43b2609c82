"""SymPy derivations of the chapter "Post-Norm vs Pre-Norm" (seeds 002 and 003)."""
from __future__ import annotations

import sympy as sp

from deepnotes.core.symbols import d, eta

v = sp.symbols("v", nonnegative=True)                     # branch second moment relative to the stream
ell = sp.symbols("l", integer=True, nonnegative=True)     # a layer index


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
