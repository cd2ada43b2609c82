"""The chapter's derivations, by SymPy (replace the skeleton's with the chapter's own)."""

from __future__ import annotations

import sympy as sp


def pre_ln_stream_moment() -> dict:
    """Pre-LN's stream at init: each block adds a branch of unit second moment, independent of the stream, so
    E[x_(l+1)²] = E[x_l²] + 1; solved from E[x_0²] = 1, E[x_l²] = 1 + l (the stream grows with depth, the identity
    path's share 1/(1 + l) falls)."""
    l = sp.symbols("l", integer=True, nonnegative=True)
    m = sp.Function("m")
    moment = sp.rsolve(m(l + 1) - m(l) - 1, m(l), {m(0): 1})
    return {"recursion": sp.Eq(m(l + 1), m(l) + 1), "moment": sp.simplify(moment), "share": sp.simplify(1 / moment)}
