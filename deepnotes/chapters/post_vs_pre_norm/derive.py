"""SymPy derivations of the chapter "Post-Norm vs Pre-Norm" (seeds 002 and 003). Every function
returns a dict with the expressions it derives and, under "symbols", the symbols they use."""
from __future__ import annotations

import sympy as sp

from deepnotes.core.derive import post_norm_unroll, pre_norm_second_moment  # noqa: F401  (shared with "Training 1000 layers")
from deepnotes.core.init import ffn_branch_variance
from deepnotes.core.symbols import d, ell, eta, v

s = sp.symbols("s", positive=True)                        # i.i.d. weight std of the FFN branch
c = sp.symbols("c", positive=True)                        # the factor that weakens a gradient
g = sp.symbols("g", real=True, nonzero=True)              # one gradient entry (either sign)
t, delta = sp.symbols("t delta", positive=True)           # a step, the fixed gate step
S = sp.symbols("S", positive=True)                        # second moment of the Post-LN stream

BERT_WIDTH = 768                                          # BERT-base's d (source constant)
BERT_PRINTED_STDS = (sp.Rational(2, 100), 1 / sp.sqrt(BERT_WIDTH))   # BERT's 0.02 and 1/√d


def post_ln_moment_step(width: int = 3) -> dict:
    """The annotated eq. (48), S_{l+1} = (S_l + v)/(1 + v), and its fixed point (solved); against what a
    LayerNorm does to any input u = x + F of ``width`` features: (u − μ)/σ with σ² = mean((u − μ)²),
    whose output second moment SymPy simplifies to 1 for symbolic u, whatever S was."""
    step = (S + v) / (1 + v)
    (fixed,) = sp.solve(sp.Eq(step, S), S)
    u = sp.symbols(f"u1:{width + 1}", real=True)
    mean = sum(u) / width
    var = sum((x - mean) ** 2 for x in u) / width
    ln_moment = sp.simplify(sum(((x - mean) / sp.sqrt(var)) ** 2 for x in u) / width)
    return {"S_next": step, "fixed_point": fixed, "ln_output": ln_moment,
            "symbols": {"S": S, "v": v}}


def update_scale_invariance() -> dict:
    """A gradient scaled by c > 0 (Post-Norm's weakened lower layers): SGD's step −ηcg scales with
    c; Adam's −η·E[cg]/√E[(cg)²] (one sample: −η·cg/|cg|) does not."""
    return {"sgd": -eta * c * g, "adam": sp.simplify(-eta * c * g / sp.sqrt((c * g) ** 2)),
            "symbols": {"eta": eta, "c": c, "g": g}}


def fixed_step_gate() -> dict:
    """Su's fixed-step gate α_t = tδ: the step t at which it reaches 1."""
    return {"steps_to_one": sp.solve(t * delta - 1, t)[0], "symbols": {"t": t, "delta": delta}}


def ffn_branch_second_moment() -> dict:
    """E[F²] of F(x) = relu(x W₁) W₂ (d → 4d → d, i.i.d. weights of std s, E[x²] = 1):
    pre-activations d·s², after ReLU half of it, output 4d·s² times that."""
    pre = d * s ** 2
    return {"E[F^2]": sp.simplify(4 * d * s ** 2 * pre * sp.Rational(1, 2)), "symbols": {"d": d, "s": s}}


def ffn_branch_at(width, std) -> float:
    """E[F²] of the ReLU FFN branch at width ``width`` and weight std ``std`` (a number)."""
    return float(ffn_branch_second_moment()["E[F^2]"].subs({d: width, s: std}))


def bert_ffn_branch_at(width, std) -> float:
    """E[F²] of BERT's FFN branch, GELU instead of ReLU (:func:`deepnotes.core.init.ffn_branch_variance`,
    q = d·s²), at width ``width`` and weight std ``std``."""
    return ffn_branch_variance(float(width * std ** 2), "gelu")
