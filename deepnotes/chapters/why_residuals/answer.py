"""The chapter's answer, stated first: whether deep plain stacks, whose initialization keeps the gradients in range,
train where residual stacks with ε = 1/√N do, in sentences written from the page's training runs (the MLPs of
:func:`.training.train_sweep`, the Transformers without LayerNorm of :func:`.training.transformer_sweep`). Every
"trains" / "does not train" compares the median over the seeds of the fraction learned with
:data:`.claims.LEARNED_FRACTION`, the rule of the chapter's training verdicts. The headline goes above the small
figure (:func:`.figures.answer`), the other depths, SGD and ε = 1 under it."""

from __future__ import annotations

import math

from deepnotes.chapters.why_residuals.budget import sizes
from deepnotes.chapters.why_residuals.claims import LEARNED_FRACTION
from deepnotes.chapters.why_residuals.training import TransformerSweep
from deepnotes.core.config import Budget, resolve_budget
from deepnotes.core.train import History, median_fraction_learned

SCALED = "1/sqrt(N)"  # the residual stack the article recommends: ε = 1/√N
SCALED_TEXT = "ε\u00a0=\u00a01/√N"  # as the text writes it, no line break inside
UNSCALED = "1"  # the residual stack without depth scaling (the original ResNet's ε = 1)


def _trains(x: float) -> bool:
    return x >= LEARNED_FRACTION


def _verb(x: float) -> str:
    return "trains" if _trains(x) else "does not train"


def _value(hists: list[History], window: int) -> str:
    """The median fraction learned (two decimals; two significant digits from 100 up: "-1.7e+10"), or how many seeds
    diverged where the median did."""
    x = median_fraction_learned(hists, window)
    if math.isfinite(x):
        return f"{x:.2f}" if abs(x) < 100 else f"{x:.2g}"
    return f"{sum(h.diverged for h in hists)} of {len(hists)} seeds diverged"


def _contrast(plain: float, scaled: float) -> str:
    """The word between "plain …" and "ε = 1/√N …": "while" where they differ, "and" where they agree."""
    return "while" if _trains(plain) != _trains(scaled) else "and"


def _pair(what: str, hists: dict, window: int, named: bool = True) -> str:
    """'<what> does not train (fraction learned x), while with ε = 1/√N it trains (y)' for one setting (``hists``:
    kind → its seeds' histories); ``named`` False leaves out the words "fraction learned"."""
    plain, scaled = (median_fraction_learned(hists[k], window) for k in ("plain", SCALED))
    return (
        f"{what} {_verb(plain)} ({'fraction learned ' if named else ''}{_value(hists['plain'], window)}), "
        f"{_contrast(plain, scaled)} with {SCALED_TEXT} it {_verb(scaled)} ({_value(hists[SCALED], window)})"
    )


def _setting(runs: dict[tuple, list[History]], n: int, optimizer: str) -> dict[str, list[History]]:
    """The MLP runs at depth ``n`` under ``optimizer``: kind → one History per seed."""
    return {kind: hs for (m, opt, kind), hs in runs.items() if (m, opt) == (n, optimizer)}


def sentences(runs: dict[tuple, list[History]], sweep: TransformerSweep | None, budget: Budget | str) -> list[str]:
    """Two sentences: the headline (the deepest MLPs under Adam, plain against ε = 1/√N, and the deepest
    Transformers without LayerNorm, or the deepest MLPs under SGD where the budget skips the Transformers), and the
    rest (the shallower MLPs, SGD, the unscaled ε = 1, the seeds, steps and rates)."""
    budget = resolve_budget(budget)
    rb = sizes(budget)
    window, (n_lo, n_hi) = rb.loss_window, (min(rb.train_depths), max(rb.train_depths))
    deep = {opt: _setting(runs, n_hi, opt) for opt in ("adam", "sgd")}
    first = _pair(f"At N = {n_hi} layers a plain MLP stack under Adam", deep["adam"], window)
    if sweep is None:
        second = _pair("under SGD the plain stack", deep["sgd"], window, named=False)
    else:
        n_tf = max(sweep.depths)
        tf = {kind: hs for (n, kind), hs in sweep.runs.items() if n == n_tf}
        second = _pair(f"a plain Transformer of {n_tf} blocks without LayerNorm", tf, window, named=False)
    headline = f"{first}; {second}."
    rest = []
    if n_lo < n_hi:
        shallow = _setting(runs, n_lo, "adam")["plain"]
        rest.append(
            f"At N = {n_lo} the plain MLP stack {_verb(median_fraction_learned(shallow, window))} under Adam "
            f"({_value(shallow, window)})"
        )
    if sweep is not None:
        rest.append(_pair(f"at N = {n_hi} under SGD the plain stack", deep["sgd"], window, named=False))
    unscaled = deep["adam"][UNSCALED]
    verb = _verb(median_fraction_learned(unscaled, window))
    rest.append(
        f"the unscaled residual stack, ε\u00a0=\u00a01, {verb} at N = {n_hi} under Adam ({_value(unscaled, window)})"
    )
    seeds = min(len(hs) for hs in runs.values())
    tail = f"; Transformers Adam at {sweep.lr:g}" if sweep is not None else ""
    details = (
        "; ".join(rest) + f". Every value is the median fraction learned of {seeds} seeds after {rb.train_steps} "
        f"steps (Adam at lr {rb.lrs['adam']:g}, SGD at {rb.lrs['sgd']:g}{tail}); the figure draws seed 0, and "
        "Experiment 3 shows every run."
    )
    return [headline[0].upper() + headline[1:], details[0].upper() + details[1:]]


def markdown(runs: dict[tuple, list[History]], sweep: TransformerSweep | None, budget: Budget | str) -> str:
    """The headline shown above the answer's figure, after a bold lead."""
    budget = resolve_budget(budget)
    return f"**The answer, from this page's runs.** {sentences(runs, sweep, budget)[0]}"


def details(runs: dict[tuple, list[History]], sweep: TransformerSweep | None, budget: Budget | str) -> str:
    """The rest, shown under the answer's figure: the shallower MLPs, SGD, ε = 1, and the runs' settings."""
    budget = resolve_budget(budget)
    return sentences(runs, sweep, budget)[1]
