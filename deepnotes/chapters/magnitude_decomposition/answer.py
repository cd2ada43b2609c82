"""The chapter's answer, stated first: where DeepNet's α = (2N)^{1/4}, β = (8N)^{-1/4} come from and whether they
depend on the optimizer, in sentences written from the page's derivation and runs. The λ/α each optimizer needs
comes from :func:`.derive.solve_pick`; what the paper's constants make of each condition from
:func:`.derive.paper_constants_in_conditions` ("meet" / "not", "growing with N" read off SymPy's derivative in N);
"meet" and "train" are read from the page's rows (:func:`.claims.main_text_verdicts`,
:func:`.claims.article_story_verdicts`, through :func:`deepnotes.show.say.say`), each linked to its row; the SGD runs
are given as medians. The headline goes above the small figure (:func:`.figures.answer`), the SGD runs under it."""

from __future__ import annotations

import math

import sympy as sp

from deepnotes.chapters.magnitude_decomposition import derive
from deepnotes.chapters.magnitude_decomposition.budget import sizes
from deepnotes.chapters.magnitude_decomposition.claims import article_story_verdicts, main_text_verdicts
from deepnotes.chapters.magnitude_decomposition.experiments import ChoiceRun
from deepnotes.chapters.magnitude_decomposition.probes import LABELS
from deepnotes.core.config import Budget
from deepnotes.core.train import median_fraction_learned
from deepnotes.core.validate import choice
from deepnotes.show.say import Sentence, Statement, say, sentence
from deepnotes.show.verdicts import Verdict

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


def _setting(comp, optimizer: str) -> tuple[float, int]:
    """(the optimizer's first rate, the deepest depth) of the comparison ``comp``."""
    keys = [(lr, n) for opt, lr, n in comp if opt == optimizer]
    if not keys:
        raise ValueError(f"comp has no {optimizer} runs; pass training.choice_comparison's result")
    return min(lr for lr, _ in keys), max(n for _, n in keys)


def _row(rows: list[Verdict], claim: str) -> Verdict:
    found = [v for v in rows if v.claim == claim]
    if len(found) != 1:
        raise ValueError(f"{len(found)} rows claim {claim!r}")
    return found[0]


def _derivation_sentence(budget: Budget) -> Sentence:
    """Which λ/α SGD and Adam need, and where DeepNet's constants put each condition; that they meet SGD's in order is
    read from the main text's row on it (:func:`.claims.main_text_verdicts`)."""
    adam_lhs = derive.paper_constants_in_conditions()["adam"]
    sgd, adam = needed_ratio("sgd"), needed_ratio("adam")
    ratio = f"β/{WORD_JOINER}α\u00a0=\u00a0{sgd}"  # no line break inside "β/α = …"
    order = _row(main_text_verdicts(budget), "… equivalent in order to 1/√(2N)")
    return sentence(
        f"SymPy: SGD needs {ratio}, Adam {adam}; DeepNet's α, β ",
        say(
            order,
            holds="meet SGD's condition in order",
            wrong="do not meet SGD's condition in order",
            undecided="cannot be placed against SGD's condition",
        ),
        f"; Adam's is off by {as_text(adam_lhs)}.",
    )


def sentences(comp: dict[tuple[str, float, int], dict[str, ChoiceRun]], budget: Budget) -> list[Sentence]:
    """Three sentences: the derivation (what SGD and Adam need, where the paper's constants put each condition), the
    paper's constants under Adam at the deepest training depth (read from :func:`.claims.article_story_verdicts`'s row,
    Adam's own constants beside them), and the SGD runs of every pick at that depth (their medians)."""
    steps = sizes(budget).train_steps
    lr, n = _setting(comp, "adam")
    runs = comp[("adam", lr, n)]
    own = _median_learned(runs[OWN])
    adam_row = _row(
        article_story_verdicts(comp),
        f"N={n}, Adam lr {lr:g}: the paper's (SGD-derived) constants also train under Adam",
    )
    second = sentence(
        f"Under Adam at N = {n} they ",
        say(
            adam_row,
            holds="train in most seeds",
            wrong="do not train in most seeds",
            undecided="cannot be judged from these seeds",
        ),
        f" (median fraction learned {_value(_median_learned(runs['paper']))}; Adam's own constants {_value(own)}).",
    )
    lr_sgd, n_sgd = _setting(comp, "sgd")
    sgd = comp[("sgd", lr_sgd, n_sgd)]
    each = [f"{PAPER if k == 'paper' else LABELS[k]} {_value(_median_learned(r))}" for k, r in sgd.items()]
    readings = [condition_reading(opt)[1] for opt in ("sgd", "adam")]
    third = sentence(
        f"SymPy reads the conditions with DeepNet's α, β put in: {readings[0]}, {readings[1]}. Each fraction "
        f"learned is the median of {len(runs['paper'].per_seed())} seeds after {steps} steps (Adam at "
        f"lr {lr:g}); under SGD at N = {n_sgd} and lr {lr_sgd:g} the medians are "
        f"{', '.join(each[:-1])} and {each[-1]}. In the figure, lines are medians over seeds and bands their range "
        "(✕ marks a seed whose loss left the finite range); every depth and rate is under "
        "Experiment 4."
    )
    return [_derivation_sentence(budget), second, third]


def markdown(comp: dict[tuple[str, float, int], dict[str, ChoiceRun]], budget: Budget) -> Statement:
    """The headline shown above the answer's figure: the derivation and the Adam runs, after a bold lead."""
    return Statement(sentences(comp, budget)[:2], lead="The answer, from this page's derivation and runs.")


def details(comp: dict[tuple[str, float, int], dict[str, ChoiceRun]], budget: Budget) -> Statement:
    """The last of :func:`sentences`, shown under the answer's figure: the steps, rates and the SGD runs."""
    return Statement(sentences(comp, budget)[2:])
