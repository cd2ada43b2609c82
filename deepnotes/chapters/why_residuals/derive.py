"""SymPy derivations of the chapter "Why residuals?" (Su Jianlin, kexue.fm/archives/8994).

Each function returns expressions; the chapter displays them with :class:`deepnotes.show.equations.Shown`
and the tests compare them with the plain formulas in :mod:`.probes`. The forward second moment
of a linear layer (E[y²] = m·E[w²]·E[x²], LeCun 1/m, He 2/m) is :func:`deepnotes.core.derive.linear_second_moment`;
it is reused here, not derived again.
"""

from __future__ import annotations

import math

import sympy as sp

from deepnotes.core.derive import N, depth_exponent, linear_second_moment, s_w, s_x
from deepnotes.core.validate import Depth, Symbolic

eps = sp.symbols("epsilon", positive=True)  # the residual branch's weight ε
n_in, n_out = sp.symbols("n m", positive=True)  # the article's x ∈ R^n, W ∈ R^{n×m}
s_d = sp.symbols("s_delta", positive=True)  # E[(∂L/∂y)²], per entry
gain = sp.symbols("g", positive=True)  # per-layer gain of a plain stack
out_gain = sp.symbols("c", positive=True)  # a final output gain of a plain stack
l_ = sp.symbols("l", positive=True, integer=True)  # a layer index 1..N


def plain_layer_moments() -> dict[str, object]:
    """y = xW, x ∈ R^n, W ∈ R^{n×m} with i.i.d. zero-mean entries of second moment E[w²].

    Forward  E[y²] = n·E[w²]·E[x²]           (linear_second_moment with fan-in n)
    Backward ∂L/∂x = (∂L/∂y) Wᵀ, so E[(∂L/∂x)²] = m·E[w²]·E[(∂L/∂y)²]   (the same sum, over m)
    Solved: forward-stable E[w²] = 1/n, backward-stable 1/m; with the forward choice the backward
    second moment is multiplied by m/n; Xavier's 2/(n+m) makes the mean of the two gains 1.
    """
    lin = linear_second_moment()
    fwd = lin["E[y^2]"].subs(sp.Symbol("m", positive=True), n_in)  # n·E[w²]·E[x²]
    bwd = lin["E[y^2]"].subs({sp.Symbol("m", positive=True): n_out, s_x: s_d})  # m·E[w²]·E[δ²]
    forward_var = sp.solve(sp.Eq(fwd, s_x), s_w)[0]
    backward_var = sp.solve(sp.Eq(bwd, s_d), s_w)[0]
    xavier = sp.solve(sp.Eq((fwd / s_x + bwd / s_d) / 2, 1), s_w)[0]
    return {
        "forward": fwd,
        "backward": bwd,
        "forward_var": forward_var,
        "backward_var": backward_var,
        "backward_gain": sp.simplify(bwd.subs(s_w, forward_var) / s_d),
        "xavier": sp.factor(xavier),
        "he_forward_var": lin["he"].subs(sp.Symbol("m", positive=True), n_in),
        "symbols": {"n": n_in, "m": n_out, "E[w^2]": s_w, "E[x^2]": s_x, "E[delta^2]": s_d},
    }


def plain_stack_backward_gain(layers: Depth = 4) -> dict[str, object]:
    """A plain stack of ``layers`` forward-stable layers with widths d_0 → d_1 → … → d_L: each
    multiplies the backward second moment by d_l/d_{l−1}, and the product telescopes to d_L/d_0,
    whatever the depth."""
    dims = sp.symbols(f"d0:{layers + 1}", positive=True)
    per_layer = [dims[k + 1] / dims[k] for k in range(layers)]
    return {
        "dims": dims,
        "per_layer": per_layer,
        "total": sp.simplify(sp.Mul(*per_layer)),
        "symbols": {str(d): d for d in dims},
    }


def plain_stack_gradients() -> dict[str, object]:
    """A linear stack of N layers, each multiplying the second moment by g (E[w²] = g/n), then an
    output gain c; E[x_0²] = 1 and E[(∂L/∂out)²] = 1. Layer l sees E[x_{l−1}²] = g^{l−1} and gets
    E[δ_l²] = c²·g^{N−l}; its weight gradient has second moment E[x_{l−1}²]·E[δ_l²].

    Every layer forward-stable (E[x_l²] = 1 for all l) forces g = 1; a stable output alone only
    forces c²g^N = 1, and then the gradient is 1/g in every layer: a depth-dependent gradient
    1/N would need g = N, i.e. hidden second moments N^l.
    """
    x_moment = gain ** (l_ - 1)
    delta_moment = out_gain**2 * gain ** (N - l_)
    grad = sp.simplify(x_moment * delta_moment)
    c_stable = sp.solve(sp.Eq(out_gain**2 * gain**N, 1), out_gain)[0]
    grad_output_stable = sp.simplify(grad.subs(out_gain, c_stable))
    g_for_inverse_n = sp.solve(sp.Eq(grad_output_stable, 1 / N), gain)[0]
    return {
        "grad": grad,
        "grad_every_layer_stable": grad.subs({gain: 1, out_gain: 1}),
        "c_output_stable": c_stable,
        "grad_output_stable": grad_output_stable,
        "g_for_1/N": g_for_inverse_n,
        "hidden_moment": gain**l_,
        "symbols": {"g": gain, "c": out_gain, "l": l_, "N": N},
    }


def residual_layer() -> dict[str, object]:
    """y = x + ε f(x; θ) in one dimension, f an unspecified function: ∂y/∂x = 1 + ε ∂f/∂x and
    ∂L/∂θ = ε·(∂L/∂y)·∂f/∂θ (differentiated by SymPy)."""
    x, theta = sp.symbols("x theta", real=True)
    f = sp.Function("f")(x, theta)
    loss = sp.Function("L")
    y = x + eps * f
    dl_dtheta = sp.diff(loss(y), theta)
    return {
        "y": y,
        "dy/dx": sp.diff(y, x),
        "dy/dtheta": sp.diff(y, theta),
        "dL/dtheta": dl_dtheta,
        "param_grad_scale": sp.simplify(sp.diff(y, theta) / sp.diff(f, theta)),
        "f": f,
        "symbols": {"x": x, "theta": theta, "epsilon": eps},
    }


def increment_with_eps() -> dict[str, object]:
    """SGD's ΔL ∝ N·(gradient)² with each parameter's gradient scaled by ε: the power of N in
    N·ε² for ε = N^{-p}, and the p that cancels it."""
    p = sp.symbols("p", real=True)
    delta = N * (N**-p) ** 2
    exponent = sp.expand_log(sp.log(delta), force=True).coeff(sp.log(N))
    (p_star,) = sp.solve(sp.Eq(exponent, 0), p)
    return {
        "delta_L": delta,
        "exponent": sp.simplify(exponent),
        "p": p_star,
        "exponent_at_half": depth_exponent(delta.subs(p, sp.Rational(1, 2))),
        "symbols": {"p": p, "N": N},
    }


def one_d_eps_exponent() -> dict[str, object]:
    """One dimension: log (1+ε)^N ≈ Nε for small ε, bounded iff N·N^{−p} is: the p ≥ 1 at which
    the power of N vanishes."""
    p = sp.symbols("p", positive=True)
    (p_star,) = sp.solve(sp.Eq(depth_exponent(N * N**-p), 0), p)
    return {"p": p_star, "symbols": {"p": p, "N": N}}


EPS_CHOICES = {"1": sp.Integer(1), "1/sqrt(N)": 1 / sp.sqrt(N), "1/N": 1 / N}


def growth_limits() -> dict[str, dict]:
    """N → ∞ limits of the one-dimensional factor (1+ε)^N and the high-dimensional (1+ε²)^N
    for ε = 1, 1/√N, 1/N (SymPy's ``limit``): one entry per name of :data:`EPS_CHOICES`, and
    "symbols"."""
    out: dict[str, dict] = {"symbols": {"N": N}}
    for name, e in EPS_CHOICES.items():
        one_d, high_d = (1 + e) ** N, (1 + e**2) ** N
        out[name] = {
            "one_d": one_d,
            "high_d": high_d,
            "one_d_limit": sp.limit(one_d, N, sp.oo),
            "high_d_limit": sp.limit(high_d, N, sp.oo),
        }
    return out


RATIO_EXAMPLE_DEPTHS = (10, 100, 1000)  # where the ratio (1 + 1/√N)^N / e^√N is evaluated numerically


def comment_estimate() -> dict[str, object]:
    """The comment thread: (1 + 1/√N)^N = [(1 + 1/√N)^{√N}]^{√N} ≈ e^{√N}. SymPy expands the log,
    N·log(1 + 1/√N) = √N − 1/2 + 1/(3√N) − …, so the ratio to e^{√N} tends to e^{−1/2}; the
    reader's e² is the limit of (1 + 1/√N)^{2√N}, not of (1 + 1/√N)^N. "ratio_at": the ratio in
    floating point at :data:`RATIO_EXAMPLE_DEPTHS`."""
    t = sp.symbols("t", positive=True)  # t = 1/√N
    log_factor = sp.series(t**-2 * sp.log(1 + t), t, 0, 3).removeO().subs(t, 1 / sp.sqrt(N))
    return {
        "log_factor": sp.expand(log_factor),
        "symbols": {"N": N},
        "limit": sp.limit((1 + 1 / sp.sqrt(N)) ** N, N, sp.oo),
        "ratio_limit": sp.limit((1 + 1 / sp.sqrt(N)) ** N / sp.exp(sp.sqrt(N)), N, sp.oo),
        "e_squared_case": sp.limit((1 + 1 / sp.sqrt(N)) ** (2 * sp.sqrt(N)), N, sp.oo),
        "inner_limit": sp.limit((1 + 1 / sp.sqrt(N)) ** sp.sqrt(N), N, sp.oo),
        "ratio_at": {n: math.exp(n * math.log1p(n**-0.5) - math.sqrt(n)) for n in RATIO_EXAMPLE_DEPTHS},
    }


def high_dim_layer() -> dict[str, object]:
    """‖v + ε u‖² with u = v·∂f/∂x: = ‖v‖² + 2ε v·u + ε²‖u‖². At initialization E[v·u] = 0 (u is v
    times a zero-mean random matrix) and, Su's reply, ‖u‖ ≈ ‖v‖: the per-layer factor 1 + ε²;
    log (1 + ε²)^N = Nε² − Nε⁴/2 + …, bounded when Nε² is: ε² = O(1/N), the same condition as
    the increment's N·ε² (:func:`increment_with_eps`)."""
    vv, vu, uu = sp.symbols("vv vu uu", real=True)
    sq = vv + 2 * eps * vu + eps**2 * uu
    factor = sp.simplify(sq.subs({vu: 0, uu: vv}) / vv)
    log_growth = sp.series(N * sp.log(1 + eps**2), eps, 0, 5).removeO()  # N ε² − N ε⁴/2
    return {
        "norm_sq": sq,
        "factor": factor,
        "log_growth": log_growth,
        "limit_at_half": sp.limit((1 + 1 / N) ** N, N, sp.oo),
        "symbols": {"vv": vv, "vu": vu, "uu": uu, "epsilon": eps, "N": N},
    }


def skip_vs_branch_scaling() -> dict[str, object]:
    """The comment alann/Su: αx + f(x) versus x + εf(x) with αε = 1 (α > 1 > ε).

    With a norm after it: LN(αx + f) = LN(α(x + εf)) = LN(x + εf) (LN is scale-invariant).
    Without: per layer the second moment of αx + f is (α² + 1)·E[x²] when E[f²] = E[x²] and f ⟂ x,
    against (1 + ε²)·E[x²]. Trained scalars under Adam both move by ≈η per step: the relative move
    η/ε of ε exceeds α's η/α by the factor α/ε = α².
    """
    a, eta = sp.symbols("alpha eta", positive=True)
    e_of_a = 1 / a
    x, f = sp.symbols("x f", real=True)
    return {
        "alpha_form_minus_scaled": sp.simplify(a * x + f - a * (x + e_of_a * f)),  # αx + f − α(x + εf)
        "alpha_form_growth": (a**2 + 1) ** N,
        "eps_form_growth": (1 + e_of_a**2) ** N,
        "relative_speed": sp.simplify((eta / e_of_a) / (eta / a)),
        "symbols": {"alpha": a, "eta": eta, "x": x, "f": f, "N": N},
    }


def layernorm_scale_invariance(dim: Symbolic = 3) -> dict:
    """LN(c·z) − LN(z) for z ∈ R^dim and c > 0 (LN without its ε and affine part), simplified
    ("difference"): 0, so LN(αx + f) = LN(α(x + εf)) = LN(x + εf)."""
    zs = sp.symbols(f"z1:{dim + 1}", real=True)
    c = sp.symbols("c", positive=True)

    def ln(vec):
        mean = sum(vec) / dim
        sd = sp.sqrt(sum((t - mean) ** 2 for t in vec) / dim)
        return sp.Matrix([(t - mean) / sd for t in vec])

    return {"difference": sp.simplify(ln([c * t for t in zs]) - ln(zs)), "symbols": {"c": c, **{str(z): z for z in zs}}}


def branch_gradient_moment() -> dict[str, object]:
    """E‖∂L/∂θ_f‖² of one branch f(x) = relu(x W1) W2 (W1: w → h, E[w²] = 2/w; W2: h → w,
    E[w²] = 1/h) with unit-moment input x and unit-moment gradient δ = r at its output, for
    L = (1/B) Σ_b f(x_b)·r_b (B independent samples: the cross terms vanish, 1/B is left).

    W2: w·h entries of E[h²]·E[δ²]/B with E[h²] = (w·2/w)/2 = 1.
    W1: w·h entries of E[x²]·E[(δ W2ᵀ)² ⊙ relu']/B with E[(δW2ᵀ)²] = w/h, halved by relu'.
    """
    w, h, b = sp.symbols("w h B", positive=True)
    e_h = w * (2 / w) * sp.Rational(1, 2)
    w2 = w * h * e_h * 1 / b
    w1 = w * h * 1 * (w * (1 / h) * 1) * sp.Rational(1, 2) / b
    return {
        "W2": sp.simplify(w2),
        "W1": sp.simplify(w1),
        "total": sp.factor(w1 + w2),
        "symbols": {"w": w, "h": h, "B": b},
    }
