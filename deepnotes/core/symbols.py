"""The SymPy symbols the derivations of several chapters share, each with its assumptions. A chapter's
own symbols live in its ``derive.py``; every derivation returns the symbols it uses."""
from __future__ import annotations

import sympy as sp

N, K, P = sp.symbols("N K P", positive=True, integer=True)   # depth, matrices per block, entries per matrix
eta, g = sp.symbols("eta g", positive=True)                   # learning rate, gradient entry size
i = sp.symbols("i", positive=True, integer=True)
alpha, lam = sp.symbols("alpha lambda", positive=True)        # DeepNorm skip weight, init gain λ (= β)
p = sp.symbols("p", real=True)                                # exponent of a depth-dependent scale
x, z = sp.symbols("x z", real=True)
mu = sp.symbols("mu", real=True)
sigma, q, d = sp.symbols("sigma q d", positive=True)
m, s_w, s_x = sp.symbols("m s_w s_x", positive=True)    # fan-in, E[w²], E[x²]
gauss = sp.exp(-z ** 2 / 2) / sp.sqrt(2 * sp.pi)           # the standard normal density
v = sp.symbols("v", nonnegative=True)                     # a branch's second moment relative to the stream
ell = sp.symbols("l", integer=True, nonnegative=True)     # a layer index
