"""The chapter's answer, stated first: whether deep plain stacks, whose initialization keeps the gradients in range,
train where residual stacks with ε = 1/√N do, in sentences written from the page's training runs (the MLPs of
:func:`.experiments.train_sweep`, the Transformers without LayerNorm of :func:`.experiments.transformer_sweep`). Every
"trains" / "does not train" is read from the run's row (:func:`.claims.training_verdicts`,
:func:`.claims.transformer_verdicts`, through :func:`deepnotes.show.say.say_run`) and links to it. The headline goes
above the small figure (:func:`.figures.answer`), the other depths, SGD and ε = 1 under it."""

from __future__ import annotations

import math

from deepnotes.chapters.why_residuals.budget import sizes
from deepnotes.chapters.why_residuals.claims import DEEP, training_verdicts, trains_claim, transformer_verdicts
from deepnotes.chapters.why_residuals.experiments import TransformerSweep
from deepnotes.chapters.why_residuals.probes import label
from deepnotes.core.config import Budget
from deepnotes.core.train import History, median_fraction_learned
from deepnotes.show.say import Said, Sentence, Statement, joined, say_run, sentence
from deepnotes.show.verdicts import Verdict

SCALED = "1/sqrt(N)"  # the residual stack the article recommends: ε = 1/√N
SCALED_TEXT = "ε\u00a0=\u00a01/√N"  # as the text writes it, no line break inside
UNSCALED = "1"  # the residual stack without depth scaling (the original ResNet's ε = 1)


def _value(hists: list[History], window: int) -> str:
    """The median fraction learned (two decimals; two significant digits from 100 up: "-1.7e+10"), or how many seeds
    diverged where the median did."""
    x = median_fraction_learned(hists, window)
    if math.isfinite(x):
        return f"{x:.2f}" if abs(x) < 100 else f"{x:.2g}"
    return f"{sum(h.diverged for h in hists)} of {len(hists)} seeds diverged"


def _row(rows: list[Verdict], prefix: str, kind) -> Verdict:
    """The training row of ``kind`` whose claim starts with ``prefix`` ("N = 20, adam", "Transformer N = 8")."""
    found = [v for v in rows if v.claim.startswith(trains_claim(prefix, kind))]  # ε = 1's adds its contrast
    if len(found) != 1:
        raise ValueError(f"{len(found)} rows for {prefix!r}, {kind!r}")
    return found[0]


def _run(v: Verdict, kind, hists: list[History], window: int) -> Said | str:
    """One run read from its row: "trains (0.93)" / "does not train (…)"; where the row judges nothing (ε = 1 below
    the very-deep gate), the median and what the row says, without an outcome word."""
    if v.outcome is not None:
        return say_run(v, label(kind), trains="trains", fails="does not train")
    return f"ends at fraction learned {_value(hists, window)} (a claim about deep stacks, judged at N ≥ {DEEP})"


def _pair(what: str, rows: list[Verdict], prefix: str, hists: dict, window: int) -> Sentence:
    """'<what> does not train (x), with ε = 1/√N it trains (y)' for one setting, each read from its row."""
    return sentence(
        f"{what} ",
        _run(_row(rows, prefix, "plain"), "plain", hists["plain"], window),
        f", with {SCALED_TEXT} it ",
        _run(_row(rows, prefix, SCALED), SCALED, hists[SCALED], window),
    )


def _setting(runs: dict[tuple, list[History]], n: int, optimizer: str) -> dict[str, list[History]]:
    """The MLP runs at depth ``n`` under ``optimizer``: kind → one History per seed."""
    return {kind: hs for (m, opt, kind), hs in runs.items() if (m, opt) == (n, optimizer)}


def sentences(runs: dict[tuple, list[History]], sweep: TransformerSweep | None, budget: Budget) -> list[Sentence]:
    """Two sentences, every outcome read from its row (:func:`.claims.training_verdicts`,
    :func:`.claims.transformer_verdicts`): the headline (the deepest MLPs under Adam, plain against ε = 1/√N, and the
    deepest Transformers without LayerNorm, or the deepest MLPs under SGD where the budget skips the Transformers),
    and the rest (the shallower MLPs, SGD, the unscaled ε = 1, the seeds, steps and rates)."""
    rb = sizes(budget)
    window, (n_lo, n_hi) = rb.loss_window, (min(rb.train_depths), max(rb.train_depths))
    rows = list(training_verdicts(runs, budget))
    deep = {opt: _setting(runs, n_hi, opt) for opt in ("adam", "sgd")}
    first = _pair(f"At N = {n_hi} layers a plain MLP stack under Adam", rows, f"N = {n_hi}, adam", deep["adam"], window)
    if sweep is None:
        second = _pair("under SGD the plain stack", rows, f"N = {n_hi}, sgd", deep["sgd"], window)
    else:
        n_tf = max(sweep.depths)
        tf = {kind: hs for (n, kind), hs in sweep.runs.items() if n == n_tf}
        tf_rows = list(transformer_verdicts(sweep, budget))
        second = _pair(
            f"a plain Transformer of {n_tf} blocks without LayerNorm", tf_rows, f"Transformer N = {n_tf}", tf, window
        )
    headline = sentence(first, "; ", second, ".")
    rest: list = []
    if n_lo < n_hi:
        shallow = _setting(runs, n_lo, "adam")
        rest.append(
            sentence(
                f"At N = {n_lo} the plain MLP stack under Adam ",
                _run(_row(rows, f"N = {n_lo}, adam", "plain"), "plain", shallow["plain"], window),
            )
        )
    if sweep is not None:
        rest.append(_pair(f"at N = {n_hi} under SGD the plain stack", rows, f"N = {n_hi}, sgd", deep["sgd"], window))
    unscaled = _row(rows, f"N = {n_hi}, adam", UNSCALED)
    rest.append(
        sentence(
            f"the unscaled residual stack, ε\u00a0=\u00a01, at N = {n_hi} under Adam ",
            _run(unscaled, UNSCALED, deep["adam"][UNSCALED], window),
        )
    )
    seeds = min(len(hs) for hs in runs.values())
    tail = f"; Transformers Adam at {sweep.lr:g}" if sweep is not None else ""
    details = sentence(
        joined(rest, ";"),
        f". Every value is the median fraction learned of {seeds} seeds after {rb.train_steps} "
        f"steps (Adam at lr {rb.lrs['adam']:g}, SGD at {rb.lrs['sgd']:g}{tail}); the figure draws seed 0, and "
        "Experiment 3 shows every run.",
    )
    return [_capitalized(headline), _capitalized(details)]


def _capitalized(s: Sentence) -> Sentence:
    return Sentence(s.text[:1].upper() + s.text[1:], s.spans)


def markdown(runs: dict[tuple, list[History]], sweep: TransformerSweep | None, budget: Budget) -> Statement:
    """The headline shown above the answer's figure, after a bold lead."""
    return Statement(sentences(runs, sweep, budget)[:1], lead="The answer, from this page's runs.")


def details(runs: dict[tuple, list[History]], sweep: TransformerSweep | None, budget: Budget) -> Statement:
    """The rest, shown under the answer's figure: the shallower MLPs, SGD, ε = 1, and the runs' settings."""
    return Statement(sentences(runs, sweep, budget)[1:])
