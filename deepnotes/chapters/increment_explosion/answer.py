"""The chapter's answer, stated first: sentences written from Experiment 1's one-step probe
(:func:`.experiments.loss_change_sweep`) and read from its slope rows (:func:`.claims.loss_change_verdicts`, through
:func:`deepnotes.show.say.say`): every "grows like N^1" / "stays flat" is a row's status on the derivation's law
(the slope of the mean over seeds over two depth ranges, its bootstrap over seeds), linked to that row; the fitted
slope over all depths (the one the figure's key shows) stands beside it. The cures are the variants whose constants
the derivation makes depth-free for an optimizer (:func:`.experiments.predicted_slope` of 0). The first two
sentences sit above the small figure (:func:`.figures.answer`), the rest under it."""

from __future__ import annotations

from deepnotes.chapters.increment_explosion import experiments as ex
from deepnotes.chapters.increment_explosion.claims import loss_change_verdicts
from deepnotes.core.measure import loglog_slope
from deepnotes.show.say import Said, Sentence, Statement, joined, link, say, sentence
from deepnotes.show.verdicts import Verdict

OPTIMIZER_NAMES = {"sgd": "SGD", "adam": "Adam"}
CONSTANTS = {"deepnorm": "DeepNet's", "deepnorm/adam": "Su's", "pre/λ": "Pre-LN's recomputed λ"}  # the cures


def slope(sweep: ex.LossChangeSweep, variant: str, optimizer: str) -> float:
    """The log-log slope of −⟨∇L, Δθ⟩/η (mean over seeds) against N over the sweep's depths."""
    return loglog_slope(sweep.depths, sweep.first_order_per_lr(variant, optimizer))


def growth(sweep: ex.LossChangeSweep, variant: str, optimizer: str) -> float:
    """How many times larger −⟨∇L, Δθ⟩/η is at the deepest depth than at the shallowest."""
    values = sweep.first_order_per_lr(variant, optimizer)
    return values[-1] / values[0]


def cures(sweep: ex.LossChangeSweep) -> list[tuple[str, str]]:
    """The (variant, optimizer) pairs whose constants the derivation makes depth-free (predicted slope 0)."""
    return [(v, o) for v, o in sweep.probes if ex.predicted_slope(v, o) == 0]


def _law(rows: dict[tuple[str, str], Verdict], variant: str, opt: str) -> Said:
    """The slope row of (variant, optimizer) read: "grows like N^1, as derived" / "stays flat" (the derivation's slope
    0) or its negation, or "is undecided" where the row cannot decide."""
    want = ex.predicted_slope(variant, opt)
    shape = "flat" if want == 0 else f"N^{want:g}"
    return say(
        rows[(variant, opt)],
        holds="stays flat" if want == 0 else f"grows like {shape}, as derived",
        approx="stays nearly flat" if want == 0 else f"grows about like {shape}",
        wrong="is not flat" if want == 0 else f"does not scale like {shape}",
        undecided="is undecided against N^0" if want == 0 else f"is undecided against {shape}",
    )


def _slope_rows(sweep: ex.LossChangeSweep) -> dict[tuple[str, str], Verdict]:
    """(variant, optimizer) → its slope row of :func:`.claims.loss_change_verdicts` (the variants with a law)."""
    return {
        (variant, opt): v
        for v in loss_change_verdicts(sweep)
        for variant, opt in sweep.probes
        if v.claim.startswith(f"{variant}, {opt}: −ΔL ∝")
    }


def _post_sentence(sweep: ex.LossChangeSweep, rows: dict) -> Sentence:
    """Post-LN's law under each optimizer, read from its rows, the fitted slope beside each."""
    post = [
        sentence(
            f"under {OPTIMIZER_NAMES[o]} it ",
            _law(rows, "post", o),
            f" ({'slope ' if k == 0 else ''}{slope(sweep, 'post', o):.2f})",
        )
        for k, o in enumerate(o for o in sweep.optimizers if ("post", o) in sweep.probes)
    ]
    if not post:
        return Sentence("")
    lo, hi = sweep.depths[0], sweep.depths[-1]
    return sentence(
        f"From N = {lo} to {hi} blocks, Post-LN's one-step loss change −⟨∇L, Δθ⟩/η: ",
        joined(post, "; and", sep="; "),
        ".",
    )


def _cures_sentence(sweep: ex.LossChangeSweep, rows: dict) -> Sentence:
    """The depth-free constants under the optimizer they were derived for: a clause per status, each setting linked."""
    by_status: dict[str, list[tuple[str, str]]] = {}
    for v, o in cures(sweep):
        by_status.setdefault(rows[(v, o)].status, []).append((v, o))
    cured = [
        sentence(
            _law(rows, *pairs[0]),
            " ",
            joined(
                [
                    sentence(
                        link(rows[(v, o)], f"under {OPTIMIZER_NAMES[o]} with {CONSTANTS.get(v, v)}"),
                        f" ({slope(sweep, v, o):.2f})",
                    )
                    for v, o in pairs
                ]
            ),
        )
        for pairs in by_status.values()
    ]
    return (
        sentence("With the depth-free constants it ", joined(cured, "; it", sep="; it "), ".")
        if cured
        else Sentence("")
    )


def _pre_sentence(sweep: ex.LossChangeSweep) -> Sentence:
    """Standard Pre-LN's growth, which no source's law covers (the rows judge Pre-LN with λ recomputed)."""
    pre = [
        f"×{growth(sweep, 'pre', o):.3g} under {OPTIMIZER_NAMES[o]} (slope {slope(sweep, 'pre', o):.2f})"
        for o in sweep.optimizers
        if ("pre", o) in sweep.probes
    ]
    if not pre:
        return Sentence("")
    lo, hi = sweep.depths[0], sweep.depths[-1]
    return sentence(
        f"Standard Pre-LN (λ = 1), for which no source states a law, changes from N = {lo} to {hi} by "
        f"{' and '.join(pre)}; the derivation's slope 1 assumes O(1) gradients per matrix (the third panel of "
        "Experiment 1 shows each block's gradient at the deepest depth)."
    )


def sentences(sweep: ex.LossChangeSweep) -> list[Sentence]:
    """Four sentences ("" where the sweep lacks the variant), each law read from its slope row
    (:func:`.claims.loss_change_verdicts`, linked): Post-LN's one-step loss change against depth under each optimizer;
    what the depth-free constants do for the optimizer they were derived for; standard Pre-LN's growth; every
    variant's factor from the shallowest depth to the deepest and its slope beside the derivation's."""
    rows = _slope_rows(sweep)
    seeds = min(len(reps) for per_depth in sweep.probes.values() for reps in per_depth)
    each = "; ".join(
        f"{v}, {OPTIMIZER_NAMES[o]}: ×{growth(sweep, v, o):.3g}, slope {slope(sweep, v, o):.2f} "
        f"({ex.predicted_slope(v, o):g})"
        for v, o in sweep.probes
    )
    fourth = sentence(
        f"From N = {sweep.depths[0]} to {sweep.depths[-1]} the mean over {seeds} seeds changes by these factors "
        f"(fitted log-log slope, the derivation's in brackets): {each}."
    )
    return [_post_sentence(sweep, rows), _cures_sentence(sweep, rows), _pre_sentence(sweep), fourth]


def markdown(sweep: ex.LossChangeSweep) -> Statement:
    """The headline shown above the answer's figure: the first two of :func:`sentences`, after a bold lead."""
    return Statement(sentences(sweep)[:2], lead="The answer, from this page's runs.")


def details(sweep: ex.LossChangeSweep) -> Statement:
    """The rest of :func:`sentences`, shown under the answer's figure: Pre-LN and every variant's growth."""
    return Statement(sentences(sweep)[2:])
