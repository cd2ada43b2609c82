"""The derivation's results as :class:`~deepnotes.show.equations.Shown` equations (LaTeX in the book,
SymPy text where nbval compares outputs), from the dicts of :mod:`.derive`."""

from __future__ import annotations

import sympy as sp

from deepnotes.show.equations import Shown

DEEPNORM_PICKS = {"sgd": r"\lambda = 1/\alpha", "adam": r"\lambda = 1/\alpha", "lamb": r"\alpha = 1"}


def loss_change(d: dict) -> list[Shown]:
    """ΔL for SGD and Adam, and the power of N in each."""
    dl = {opt: d["loss_change"][opt]["delta_L"] for opt in ("sgd", "adam")}
    return [
        Shown(r"\Delta\mathcal{L}_{\mathrm{SGD}}", dl["sgd"], "dL_SGD"),
        Shown(r"\Delta\mathcal{L}_{\mathrm{Adam}}", dl["adam"], "dL_Adam"),
        Shown(r"\text{power of } N \text{ in } \Delta\mathcal{L}_{\mathrm{SGD}}", d["exponent"]["sgd"], "exponent_SGD"),
        Shown(
            r"\text{power of } N \text{ in } \Delta\mathcal{L}_{\mathrm{Adam}}", d["exponent"]["adam"], "exponent_Adam"
        ),
    ]


def cures(d: dict) -> list[Shown]:
    """The depth-cancelling gradient exponents p and the warmup learning rates η_N."""
    return [
        Shown(r"p_{\mathrm{SGD}}", d["cancelling_exponent"]["sgd"], "p_SGD"),
        Shown(r"p_{\mathrm{Adam}}", d["cancelling_exponent"]["adam"], "p_Adam"),
        Shown(r"\eta_N\ (\mathrm{SGD})", d["warmup_lr"]["sgd"], "eta_N_SGD"),
        Shown(r"\eta_N\ (\mathrm{Adam})", d["warmup_lr"]["adam"], "eta_N_Adam"),
    ]


def deepnorm(d: dict) -> list[Shown]:
    """Per optimizer: the DeepNorm condition, the extra choice that fixes (α, λ), and the solution."""
    return [
        Shown(
            rf"\text{{{opt.upper()}: }} {sp.latex(r['condition'])},\ {DEEPNORM_PICKS[opt]} "
            r"\;\Rightarrow\; (\alpha, \lambda)",
            sp.Tuple(r["alpha"], r["lambda"]),
            f"{opt}: (alpha, lambda)",
        )
        for opt, r in d["deepnorm"].items()
    ]


def deepnet_encoder_line(e: dict) -> str:
    """One line: DeepNet's encoder (α, β) at ``e["n_layers"]`` and β/α against its closed form 1/√(4N)."""
    return (
        f"DeepNet paper, encoder, N={e['n_layers']}: alpha = (2N)^(1/4) = {e['alpha']:.4f}, "
        f"beta = (8N)^(-1/4) = {e['beta']:.4f}, beta/alpha = {e['beta'] / e['alpha']:.5f} = "
        f"1/sqrt(4N) = {e['ratio_value']:.5f}"
    )
