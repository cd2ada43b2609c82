"""The predictions of the chapter "Training 1000 layers", derived with SymPy before any run from the
derivations the earlier chapters use (:mod:`deepnotes.core.derive`; none is retyped here). Every
function returns a dict with its expressions, their values at the depths asked for, and, under
"symbols", the symbols they use."""

from __future__ import annotations

import sympy as sp

from deepnotes.core import derive as core
from deepnotes.core.derive import N, alpha, ell, eta, lam, v
from deepnotes.core.validate import Depth, NonNegativeCount

T = sp.symbols("T", positive=True)  # warmup length in steps

DEEPNET_DEPTH = 1000  # the depth the predictions are stated at (DeepNet's headline)
REFERENCE_DEPTH = 12  # the depth they are compared with (BERT-base, the original Transformer's 6+6)


def deepnorm_constants(depth: Depth) -> dict:
    """DeepNet's (α, β) from S residual sublayers (:func:`deepnotes.core.derive.paper_constants`):
    the encoder and the decoder-only stack have S = 2N, the decoder of an encoder-decoder S = 3M;
    their values at N = M = ``depth``, and β/α, the factor on every branch gradient."""
    pc = core.paper_constants()
    m = pc["symbols"]["M"]
    enc, dec = pc["encoder"], pc["encdec decoder"]
    at = {
        "encoder": tuple(sp.nsimplify(e.subs(N, depth)) for e in enc),
        "encdec decoder": tuple(sp.nsimplify(e.subs(m, depth)) for e in dec),
    }
    return {
        "encoder": enc,
        "encdec decoder": dec,
        "at": at,
        "condition": pc["condition"],
        "pick": pc["pick"],
        "beta/alpha": pc["beta/alpha encoder"],
        "symbols": pc["symbols"],
    }


def identity_weights() -> dict:
    """The weight of x_0 in x_l after l sublayers at initialization, each branch of second moment v
    relative to its input:

        Post-LN   w_l = (1 + v)^{-l/2}                     (:func:`deepnotes.core.derive.post_norm_unroll`)
        DeepNorm  w_l = w_{l-1}·α/√(α² + v)                (solved here; α = 1 is Post-LN)
        Pre-LN    E[x_l²] = 1 + l·v                        (:func:`deepnotes.core.derive.pre_norm_second_moment`)
    """
    w = sp.Function("w")
    deepnorm = sp.simplify(sp.rsolve(w(ell) - w(ell - 1) * alpha / sp.sqrt(alpha**2 + v), w(ell), {w(0): 1}))
    return {
        "post": core.post_norm_unroll(1)["weight_x0"],
        "deepnorm": deepnorm,
        "pre_second_moment": core.pre_norm_second_moment()["second_moment"],
        "symbols": {"l": ell, "v": v, "alpha": alpha},
    }


def identity_at(depth: Depth) -> dict:
    """:func:`identity_weights` after the 2N sublayers of ``depth`` blocks: Post-LN at v = 1 (Xavier
    branches keep their input's scale), DeepNorm at DeepNet's α with v = β⁴ (a branch's two matrices
    each scaled by β), Pre-LN's stream RMS at v = 1."""
    iw = identity_weights()
    a, b = deepnorm_constants(depth)["at"]["encoder"]
    sub = 2 * depth
    return {
        "post": iw["post"].subs({v: 1, ell: sub}),
        "deepnorm": iw["deepnorm"].subs({alpha: a, v: b**4, ell: sub}),
        "pre_rms": sp.sqrt(iw["pre_second_moment"].subs({v: 1, ell: sub})),
        "sublayers": sub,
    }


def loss_change_growth(depth: Depth, reference: NonNegativeCount) -> dict:
    """Adam's first-step loss change ΔL = −η·N·K·P·g (:func:`deepnotes.core.derive.loss_change`) at
    ``depth`` over ``reference`` blocks; and with DeepNet's constants, whose per-matrix gradients are
    O(β/α), the exponent of N in ΔL under Adam (:func:`deepnotes.core.derive.loss_change_exponent`)."""
    dl = core.loss_change("adam")["delta_L"]
    ratio = sp.simplify(dl.subs(N, depth) / dl.subs(N, reference))
    beta_over_alpha = deepnorm_constants(depth)["beta/alpha"]
    adam_exp = core.loss_change_exponent("adam", beta_over_alpha)
    sgd_exp = core.loss_change_exponent("sgd", beta_over_alpha)
    return {
        "delta_L": dl,
        "exponent": core.depth_exponent(dl),
        "ratio": ratio,
        "deepnorm_adam_exponent": adam_exp,
        "deepnorm_sgd_exponent": sgd_exp,
        "deepnorm_adam_ratio": sp.nsimplify(sp.Rational(depth, reference) ** adam_exp),
        "symbols": {"N": N, "eta": eta, "lambda": lam},
    }


def warmup_length() -> dict:
    """The learning rate that keeps ΔL at depth N as small as at depth 1
    (:func:`deepnotes.core.derive.warmup_lr`: η/N), and the linear warmup that starts there: its
    first step runs at η/T, so η/T ≤ η/N needs T ≥ N (solved)."""
    start = core.warmup_lr("adam")
    (bound,) = sp.solve(sp.Eq(eta / T, start), T)
    return {"start_lr": start, "min_warmup": bound, "symbols": {"N": N, "T": T, "eta": eta}}


def predicted_profiles(depth: Depth) -> dict[str, list[float]]:
    """Per block l = 0..N, the weight of x_0 in x_l (cos(x_l, x_0) when the branches are orthogonal
    to x_0) from :func:`identity_weights` (2 sublayers per block): Post-LN at v = 1, DeepNorm at
    DeepNet's α with v = β⁴, Pre-LN 1/√(1 + 2l) (x_0 kept whole in a stream of second moment 1 + 2l,
    v = 1), ReZero 1 (every gate starts at 0); and Pre-LN's stream RMS √(1 + 2l)."""
    iw = identity_weights()
    a, b = deepnorm_constants(depth)["at"]["encoder"]
    post = sp.lambdify(ell, iw["post"].subs(v, 1))
    deep = sp.lambdify(ell, iw["deepnorm"].subs({alpha: a, v: b**4}))
    pre_moment = sp.lambdify(ell, iw["pre_second_moment"].subs(v, 1))
    blocks = range(depth + 1)
    return {
        "post": [float(post(2 * l)) for l in blocks],
        "deepnorm": [float(deep(2 * l)) for l in blocks],
        "pre": [float(pre_moment(2 * l)) ** -0.5 for l in blocks],
        "rezero": [1.0 for _ in blocks],
        "pre_rms": [float(pre_moment(2 * l)) ** 0.5 for l in blocks],
    }
