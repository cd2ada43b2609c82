"""Text tables of the chapter "Magnitude decomposition and the DeepNorm scalings": the lines the
notebook prints, built from the measurements of :mod:`.experiments` and :mod:`.training`."""

from __future__ import annotations

from deepnotes.chapters.magnitude_decomposition.claims import FIRST_ORDER_LAMBDA
from deepnotes.chapters.magnitude_decomposition.experiments import CHECK_BLOCK, KINDS, LABELS, DecompositionRow
from deepnotes.chapters.magnitude_decomposition.training import ChoiceRun
from deepnotes.core import scaling
from deepnotes.core.validate import NonNegative
from deepnotes.show.say import Sentence, joined, link, say, sentence
from deepnotes.show.verdicts import Verdict

HALFWAY_WINDOW = 5  # losses averaged when reading the step at which a run is half-way to the floor
HALFWAY = 0.5  # "half-way": this fraction of the way from the plateau to the floor
PAPER_DEPTHS = (6, 100, 1000)  # depths at which the paper's and Su's constants are printed side by side
ENCDEC_DEPTHS = (12, 12)  # (encoder, decoder) depths of the encoder-decoder example


def decomposition_text(rows: list[DecompositionRow]) -> str:
    """λ by every route, one line per shape × gain (the spectral minimum is searched only for flat W)."""
    lines = [
        f"{'shape':>10} {'g':>5} | {'λ_F closed':>10} {'numeric':>8} | {'λ_spec closed':>13} {'numeric':>8} | "
        f"{'eq.(27)':>7} {'√(2g²(a+b+1)/(a+b))':>19}"
    ]
    for r in rows:
        spec_num = f"{r.spectral_numeric:8.4f}" if r.shape[0] <= r.shape[1] else "  (flat)"
        lines.append(
            f"{str(r.shape):>10} {r.gain:5.2f} | {r.closed:10.4f} {r.numeric:8.4f} | {r.spectral_closed:13.4f} "
            f"{spec_num} | {r.eq27:7.4f} {r.xavier_predicted:19.4f}"
        )
    return "\n".join(lines)


def autograd_check_text(worst: NonNegative, tolerance: NonNegative) -> str:
    """One line: is the largest relative gap of the autograd check below ``tolerance``?"""
    tol = f"{tolerance:.0e}".replace("e-0", "e-")
    return (
        f"autograd vs <dL/dW, U>, {len(KINDS)} matrices of block {CHECK_BLOCK + 1} (float64): largest relative "
        f"difference below {tol}: "
        f"{worst < tolerance}"
    )


def paper_constants_text() -> str:
    """DeepNet's encoder constants next to Su's SGD constants, and the encoder side of an encoder-decoder."""
    lines = []
    for n in PAPER_DEPTHS:
        a, b = scaling.deepnorm_coefficients(n)
        a_su, l_su = scaling.su_coefficients(n, "sgd")
        lines.append(
            f"N={n:4d}: paper alpha={a:.4f} beta={b:.4f} | Su SGD alpha={a_su:.4f} "
            f"lambda={l_su:.4f} | paper beta/alpha={b / a:.5f} = 1/sqrt(4N)={(4 * n) ** -0.5:.5f}"
        )
    enc, dec = ENCDEC_DEPTHS
    a_e, b_e = scaling.deepnorm_coefficients(enc, "encoder-decoder", n_decoder_layers=dec)
    lines.append(
        f"encoder side of an encoder-decoder, 0.81 (N^4 M)^(1/16) and 0.87 (N^4 M)^(-1/16): alpha*beta = "
        f"{a_e * b_e:.4f} (1/sqrt 2 = {2**-0.5:.4f})"
    )
    return "\n".join(lines)


def halfway_text(run: ChoiceRun) -> str:
    t = run.history.steps_to(HALFWAY, window=HALFWAY_WINDOW)
    return "never" if t is None else f"step {t}"


def area_text(run: ChoiceRun) -> str:
    a = run.history.mean_fraction_learned()
    return "diverged" if a is None else f"{a:.3f}"


def training_summary(comp: dict[tuple[str, float, int], dict[str, ChoiceRun]]) -> str:
    """One line per (depth, optimizer, lr): each choice's fraction learned, mean fraction learned,
    half-way step and final λ_T/λ_0."""
    return "\n".join(
        f"N={n:3d} {opt:4s} lr {lr:<6g} "
        + " | ".join(
            f"{LABELS[k]}: learned {r.history.fraction_learned():.2f}, mean {area_text(r)}, "
            f"half-way {halfway_text(r)}, λ_T/λ_0 {r.lam_ratio[-1]:.2f}"
            for k, r in runs.items()
        )
        for (opt, lr, n), runs in comp.items()
    )


def law_reading(table: list[Verdict]) -> Sentence:
    """Experiment 1's O(λ/α) law, read from its rows (:func:`.claims.probe_verdicts`'s ∂L/∂λ rows): per status, the
    matrices with it (each linked to its row) and what that status says, inside the first-order premise."""
    rows = [v for v in table if v.claim.startswith("∂L/∂λ_") and "O(λ/α)" in v.claim]
    if not rows:
        raise ValueError("the table has no ∂L/∂λ = O(λ/α) rows: pass claims.probe_verdicts(...)")
    groups: dict[str, list[Verdict]] = {}
    for v in rows:
        groups.setdefault(v.status, []).append(v)
    clauses = [
        sentence(
            "for ",
            joined([link(v, v.claim.split(" ")[0].replace("∂L/∂λ_", "λ_")) for v in members]),
            " the O(λ/α) law ",
            say(
                members[0],
                holds=f"holds in most seeds for λ ≤ {FIRST_ORDER_LAMBDA:g}",
                wrong=f"fails in most seeds for λ ≤ {FIRST_ORDER_LAMBDA:g}",
                undecided="cannot be decided from these seeds",
            ),
        )
        for members in groups.values()
    ]
    return joined(clauses, "; and")
