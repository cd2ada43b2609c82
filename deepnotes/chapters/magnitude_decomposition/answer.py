"""The chapter's answer, stated first: where DeepNet's α = (2N)^{1/4}, β = (8N)^{-1/4} come from and whether they
depend on the optimizer, in sentences written from the page's derivation and runs. The λ/α each optimizer needs
comes from :func:`.derive.solve_pick`; what the paper's constants make of each condition from
:func:`.derive.paper_constants_in_conditions` ("meet" / "not", "growing with N" read off SymPy's derivative in N);
every "train" / "do not train" compares the median fraction learned of the training runs
(:func:`.training.choice_comparison`) with :data:`.claims.TRAINS`. The headline goes above the small figure
(:func:`.figures.answer`), the SGD runs under it."""

from __future__ import annotations

import math

import sympy as sp

from deepnotes.chapters.magnitude_decomposition import derive
from deepnotes.chapters.magnitude_decomposition.budget import sizes
from deepnotes.chapters.magnitude_decomposition.claims import TRAINS
from deepnotes.chapters.magnitude_decomposition.experiments import LABELS
from deepnotes.chapters.magnitude_decomposition.training import ChoiceRun
from deepnotes.core.config import Budget, resolve_budget
from deepnotes.core.train import median_fraction_learned
from deepnotes.core.validate import choice
from deepnotes.show.plots import SEEDS_KEY

NAMES = {"sgd": "SGD", "adam": "Adam", "lamb": "LAMB"}
PAPER = "the paper's constants"
WORD_JOINER = "\u2060"  # after the slash of 1/√(2N): the line does not break between "1/" and "√(2N)"
OWN = "lambda=1/alpha"  # the pick whose (α, λ) are Su's constants for SGD and Adam (the chapter's training PLAN)


def _power(expr) -> str:
    """A symbol, a number or a square root in plain text: 2, (2N), √N, √(2N)."""
    base = sp.sstr(expr.base if expr.is_Pow else expr)
    base = base if len(base) == 1 or expr.is_Number else f"({base})"
    if expr.is_Pow and expr.exp == sp.Rational(1, 2):
        return f"√{base}"
    return f"{base}^{sp.sstr(expr.exp)}" if expr.is_Pow else base


def as_text(expr: sp.Basic, in_two_n: bool = False) -> str:
    """``expr`` in plain text (the headline has no TeX: it reads the same before and without MathJax), a reciprocal
    as 1/…; with ``in_two_n`` written in powers of 2N first (:func:`.derive.in_two_n`): 1/√(2N), 1/(2N), √N."""
    if in_two_n:
        expr = derive.in_two_n(expr).subs(derive.two_n, sp.Symbol("2N", positive=True))
    if expr.is_Pow and expr.exp.is_negative:
        return f"1/{WORD_JOINER}{_power(sp.simplify(1 / expr))}"
    return _power(expr)


def needed_ratio(optimizer: str) -> str:
    """The λ/α that ``optimizer``'s depth condition fixes (SymPy's :func:`.derive.solve_pick`), as text; the
    headline writes it β/α, β being the gain Su calls λ (the question names β)."""
    s = derive.solve_pick(choice("optimizer", optimizer, NAMES), OWN)
    return as_text(sp.simplify(s["lambda"] / s["alpha"]), in_two_n=True)


def condition_reading(optimizer: str) -> tuple[bool, str]:
    """Whether DeepNet's constants meet ``optimizer``'s depth condition, and how: its left side with the paper's
    (α, β) put in (:func:`.derive.paper_constants_in_conditions`) is met when it does not depend on N and is at
    most 1 (the spare factor named), missed when it grows or falls with N or exceeds 1."""
    lhs = derive.paper_constants_in_conditions()[choice("optimizer", optimizer, NAMES)]
    slope = sp.simplify(sp.diff(lhs, derive.N))
    name = f"{NAMES[optimizer]}'s"
    if slope.is_zero:
        if lhs == 1:
            return True, f"{name} exactly at every N"
        if lhs < 1:
            return True, f"{name} at every N with a factor {as_text(1 / lhs)} to spare"
        return False, f"{name} (off by {as_text(lhs)} at every N)"
    trend = "growing" if slope.is_positive else "falling" if slope.is_negative else "changing"
    return False, f"{name} (off by {as_text(lhs)}, {trend} with N)"


def _median_learned(run: ChoiceRun) -> float:
    """The median over the seeds of ``run`` (:meth:`.ChoiceRun.per_seed`) of the fraction learned (−inf: diverged)."""
    return median_fraction_learned([r.history for r in run.per_seed()])


def _value(x: float) -> str:
    return f"{x:.2f}" if math.isfinite(x) else "diverged"


def _trains(x: float) -> bool:
    return x > TRAINS


def _verb(x: float, plural: bool) -> str:
    """The verb for a median fraction learned ``x``: train(s) above :data:`.claims.TRAINS`, else do(es) not train."""
    if _trains(x):
        return "train" if plural else "trains"
    return "do not train" if plural else "does not train"


def _setting(comp, optimizer: str) -> tuple[float, int]:
    """(the optimizer's first rate, the deepest depth) of the comparison ``comp``."""
    keys = [(lr, n) for opt, lr, n in comp if opt == optimizer]
    if not keys:
        raise ValueError(f"comp has no {optimizer} runs; pass training.choice_comparison's result")
    return min(lr for lr, _ in keys), max(n for _, n in keys)


def _derivation_sentence() -> str:
    """Which λ/α SGD and Adam need, and which of the two conditions DeepNet's constants meet."""
    readings = {opt: condition_reading(opt) for opt in ("sgd", "adam")}
    first, other = sorted(readings, key=lambda opt: not readings[opt][0])  # a met condition first
    one = readings[first][1].replace("'s", "'s condition", 1)
    two = readings[other][1]
    if readings[first][0] and not readings[other][0]:
        verdict = f"meet {one}, not {two}"
    elif readings[first][0]:
        verdict = f"meet {one} and {two}"
    else:
        verdict = f"meet neither {one} nor {two}"
    sgd, adam = needed_ratio("sgd"), needed_ratio("adam")
    ratio = f"β/{WORD_JOINER}α\u00a0=\u00a0{sgd}"  # no line break inside "β/α = …"
    return f"SymPy: SGD needs {ratio}, Adam {adam}; DeepNet's α, β {verdict}."


def sentences(comp: dict[tuple[str, float, int], dict[str, ChoiceRun]], budget: Budget | str) -> list[str]:
    """Three sentences: the derivation (what SGD and Adam need, which the paper's constants meet), the Adam runs
    at the deepest training depth (the paper's constants beside Adam's own, train or not), and the SGD runs of
    every pick at that depth."""
    budget = resolve_budget(budget)
    steps = sizes(budget).train_steps
    lr, n = _setting(comp, "adam")
    runs = comp[("adam", lr, n)]
    paper, own = _median_learned(runs["paper"]), _median_learned(runs[OWN])
    adam_met = condition_reading("adam")[0]
    lead = "Yet under" if adam_met != _trains(paper) else "Under"
    if _trains(paper) == _trains(own):
        tail = f"{'as do' if _trains(own) else 'nor do'} Adam's own constants ({_value(own)})"
    else:
        tail = f"while Adam's own constants {'do' if _trains(own) else 'do not'} ({_value(own)})"
    second = f"{lead} Adam at N = {n} they {_verb(paper, True)} (fraction learned {_value(paper)}), {tail}."
    lr_sgd, n_sgd = _setting(comp, "sgd")
    sgd = comp[("sgd", lr_sgd, n_sgd)]
    each = [
        f"{PAPER if k == 'paper' else LABELS[k]} {_verb(m, k == 'paper')} ({_value(m)})"
        for k, m in ((k, _median_learned(r)) for k, r in sgd.items())
    ]
    third = (
        f"Each fraction learned is the median of {len(runs['paper'].per_seed())} seeds after {steps} steps (Adam at "
        f"lr {lr:g}); under SGD at N = {n_sgd} and lr {lr_sgd:g}, "
        f"{', '.join(each[:-1])} and {each[-1]}. In the figure, {SEEDS_KEY}; every depth and rate is under "
        "Experiment 4."
    )
    return [_derivation_sentence(), second, third]


def markdown(comp: dict[tuple[str, float, int], dict[str, ChoiceRun]], budget: Budget | str) -> str:
    """The headline shown above the answer's figure: the derivation and the Adam runs, after a bold lead."""
    budget = resolve_budget(budget)
    first, second, _ = sentences(comp, budget)
    return f"**The answer, from this page's derivation and runs.** {first} {second}"


def details(comp: dict[tuple[str, float, int], dict[str, ChoiceRun]], budget: Budget | str) -> str:
    """The last of :func:`sentences`, shown under the answer's figure: the steps, rates and the SGD runs."""
    budget = resolve_budget(budget)
    return sentences(comp, budget)[2]
