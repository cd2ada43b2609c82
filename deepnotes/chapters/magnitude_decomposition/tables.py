"""Text tables of the chapter "Magnitude decomposition and the DeepNorm scalings": the lines the
notebook prints, built from the measurements of :mod:`.probes` and :mod:`.experiments`."""

from __future__ import annotations

from deepnotes.chapters.magnitude_decomposition.claims import FIRST_ORDER_LAMBDA
from deepnotes.chapters.magnitude_decomposition.experiments import ChoiceRun
from deepnotes.chapters.magnitude_decomposition.probes import CHECK_BLOCK, KINDS, LABELS, DecompositionRow
from deepnotes.core import scaling
from deepnotes.core.validate import NonNegative
from deepnotes.show.say import Sentence, grouped, link, say, sentence
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
    return grouped(
        rows,
        lambda v: v.claim.split(" ")[0].replace("∂L/∂λ_", "λ_"),
        before="for ",
        between=" the O(λ/α) law ",
        holds=f"holds in most seeds for λ ≤ {FIRST_ORDER_LAMBDA:g}",
        wrong=f"fails in most seeds for λ ≤ {FIRST_ORDER_LAMBDA:g}",
        undecided="cannot be decided from these seeds",
    )


def steps_reading(table: list[Verdict]) -> Sentence:
    """Experiment 2's first-step rows (:func:`.claims.probe_verdicts`), per status: the optimizers (each linked to its
    row) whose relative first step scales as the article predicts, or does not."""
    rows = [v for v in table if "the first step's ‖ΔW‖/‖W‖" in v.claim or v.claim.startswith("LAMB: the relative")]
    if not rows:
        raise ValueError("the table has no first-step rows: pass claims.probe_verdicts(...)")
    return grouped(
        rows,
        lambda v: v.claim.split(":")[0],
        before="under ",
        between=" the first step's relative size ",
        holds="scales as the article predicts",
        wrong="does not scale as the article predicts",
        undecided="cannot be judged from these runs",
    )


def identity_reading(table: list[Verdict]) -> Sentence:
    """Experiment 3's two rows (:func:`.claims.probe_verdicts`): whether every DeepNorm choice starts near the identity
    (Post-LN is the contrast), and whether the change per block follows the branch weight λ²/α."""
    row = {v.claim: v for v in table}
    near = row.get("The stack starts near the identity (each branch weighs λ²/α, small)")
    per_block = row.get("… and the change per block is proportional to λ²/α")
    if near is None or per_block is None:
        raise ValueError("the table has no near-identity rows: pass claims.probe_verdicts(...)")
    return sentence(
        link(near, "Every DeepNorm choice"),
        " ",
        say(
            near,
            holds="starts close to the identity",
            wrong="does not start close to the identity",
            undecided="cannot be placed from these runs",
        ),
        " (Post-LN beside it for contrast); beyond block 1 the change per block ",
        say(
            per_block,
            holds="follows the branch weight λ²/α, as the post-hoc argument has it",
            wrong="does not follow the branch weight λ²/α that the post-hoc argument assumes",
            undecided="cannot be set against λ²/α from these runs",
        ),
    )
