"""The chapter's answer, stated first: sentences written from Experiment 1's probes at initialization and
Experiment 2's training runs; every "falls", "trains" and "holds" in them is read from the page's rows
(:func:`.claims.identity_path`, :func:`.claims.training`, through :func:`deepnotes.show.say.say`) and links to its
row. The first two sit above the small figure (:func:`.figures.answer`), the rest under it."""

from __future__ import annotations

import math
import statistics

from deepnotes.chapters.post_vs_pre_norm import claims
from deepnotes.chapters.post_vs_pre_norm import experiments as ex
from deepnotes.core.config import Budget
from deepnotes.core.train import median_fraction_learned
from deepnotes.shared import warmup as shared_warmup
from deepnotes.show.say import Sentence, Statement, joined, say, say_run, sentence
from deepnotes.show.verdicts import Verdict

OPTIMIZER_NAMES = {"adam": "Adam", "sgd": "SGD"}


def top_weight(probes: list[ex.StreamProbe]) -> tuple[float, float]:
    """(measured, derived) weight of the input x_0 at the top block, medians over the seeds' probes: the
    cosine of x_N with x_0 and the derivation's weight from the measured branch ratios."""
    return (
        statistics.median(p.cos_x0[-1] for p in probes),
        statistics.median(p.predicted_cos[-1] for p in probes),
    )


def gradient_ratio(probes: list[ex.StreamProbe]) -> float:
    """‖g_1‖/‖g_N‖, the gradient reaching the first block over the one reaching the last, median over seeds."""
    return statistics.median(p.grad_norms[0] / p.grad_norms[-1] for p in probes)


def _shown(median: float) -> str:
    return f"{median:.2f}" if math.isfinite(median) else "div."  # as the tables write a diverged median


def _needs_row(rows: list[Verdict], opt: str) -> Verdict:
    """The "Post-LN needs warmup" row of ``opt`` (the shared warmup comparison's for Adam, the chapter's own else)."""
    found = [
        v
        for v in rows
        if "Post-LN needs warmup" in v.claim
        and (v.claim.startswith(f"{opt}:") or (opt == "adam" and v.claim[0] == "P"))
    ]
    if len(found) != 1:
        raise ValueError(f"{len(found)} 'Post-LN needs warmup' rows for {opt}")
    return found[0]


def _row(rows: list[Verdict], claim: str) -> Verdict:
    found = [v for v in rows if v.claim == claim]
    if len(found) != 1:
        raise ValueError(f"{len(found)} rows claim {claim!r}")
    return found[0]


def _post_runs(rows: list[Verdict], runs: dict[str, dict], run: str | None) -> Sentence:
    """Post-LN without warmup (``run`` None) or with it, per optimizer, each read from its "needs warmup" row."""
    parts = []
    for opt in runs:
        v = _needs_row(rows, opt)
        name = run or next(r for r, _ in v.outcome.expected if r != shared_warmup.NO_WARMUP)
        parts.append(
            say_run(
                v,
                name,
                trains=f"trains under {OPTIMIZER_NAMES[opt]}",
                fails=f"does not train under {OPTIMIZER_NAMES[opt]}",
            )
        )
    return joined(parts, "and")


def sentences(probes: dict[str, list[ex.StreamProbe]], runs: dict[str, dict], budget: Budget) -> list[Sentence]:
    """Four sentences: the input's weight left at the top of Post-LN and Pre-LN at init; whether Post-LN trains without
    and with warmup, per optimizer; the gradient reaching the first block; and the other variants' fractions learned
    with the verdict on "Post-LN needs warmup". Every outcome is read from its row (:func:`.claims.training`,
    :func:`.claims.identity_path`) and links to it."""
    sub = budget.warmup
    depth = len(probes["post"][0].grad_norms)
    (post, post_derived), (pre, pre_derived) = top_weight(probes["post"]), top_weight(probes["pre"])
    first = sentence(
        f"At initialization, after {depth} blocks, Post-LN's weight on the input x₀ is {post:.2f} "
        f"(derived {post_derived:.2g}), {'less than' if post < pre else 'no less than'} Pre-LN's {pre:.2f} "
        f"({pre_derived:.2g})."
    )
    rows = list(claims.training(runs, budget))
    second = sentence(
        f"After {sub.steps} training steps at {sub.depth} blocks, Post-LN without warmup ",
        _post_runs(rows, runs, shared_warmup.NO_WARMUP),
        f"; with a {sub.warmup}-step warmup it ",
        _post_runs(rows, runs, None),
        ".",
    )
    init_rows = list(claims.identity_path(probes, budget))
    g_post, g_pre = gradient_ratio(probes["post"]), gradient_ratio(probes["pre"])
    third = sentence(
        "At initialization the gradient ",
        say(
            _row(init_rows, "Post-LN: the gradient reaching the blocks falls toward the input"),
            holds="falls toward the input in Post-LN in most seeds",
            wrong="does not fall toward the input in Post-LN in most seeds",
            undecided="cannot be judged toward the input in Post-LN from these seeds",
        ),
        f" (block 1 gets {g_post:.2g}× block {depth}'s) and ",
        say(
            _row(
                init_rows, "The direct residual path keeps Pre-LN's gradients from decaying severely toward the input"
            ),
            holds="is kept within reach in Pre-LN",
            wrong="is not kept within reach in Pre-LN",
            undecided="cannot be judged in Pre-LN from these seeds",
        ),
        f" ({g_pre:.2g}×; medians over seeds).",
    )
    med = {opt: {name: median_fraction_learned(hs) for name, hs in rs.items()} for opt, rs in runs.items()}
    fourth = sentence(*(_learned_text(opt, m, _needs_row(rows, opt), sub.seeds) for opt, m in med.items()))
    return [first, second, third, fourth]


def _learned_text(opt: str, medians: dict[str, float], needs: Verdict, seeds: int) -> Sentence:
    """One optimizer's fractions learned, every variant, and the row on "Post-LN needs warmup" there."""
    # ReZero's "trained gates" are its learnable gates: named so, the sentence keeps "trained" for outcomes
    each = "; ".join(f"{name.replace('trained gates', 'learnable gates')} {_shown(m)}" for name, m in medians.items())
    return sentence(
        f'Under {OPTIMIZER_NAMES[opt]} (median fraction learned of {seeds} seeds): {each}; so "Post-LN needs warmup" ',
        say(needs, holds="holds", wrong="does not hold", undecided="cannot be decided"),
        f" under {OPTIMIZER_NAMES[opt]}. ",
    )


def markdown(probes: dict[str, list[ex.StreamProbe]], runs: dict[str, dict], budget: Budget) -> Statement:
    """The headline shown above the answer's figure: the first two of :func:`sentences`, after a bold lead."""
    return Statement(sentences(probes, runs, budget)[:2], lead="The answer, from this page's runs.")


def details(probes: dict[str, list[ex.StreamProbe]], runs: dict[str, dict], budget: Budget) -> Statement:
    """The rest of :func:`sentences`, shown under the answer's figure: the gradients and every run's verdict."""
    return Statement(sentences(probes, runs, budget)[2:])
