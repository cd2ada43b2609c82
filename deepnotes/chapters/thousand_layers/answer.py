"""The chapter's answer, stated first: three sentences read from the page's verdict rows on the runs
(:func:`.claims.training`, through :func:`deepnotes.show.say.say` and :func:`~deepnotes.show.say.say_run`): who
trains at the headline depth and where Post-LN stops, the deepest stack, and what the depth × rate map says about
DeepNorm's rates; every "trains" is a run's median against :data:`.claims.TRAINED` inside a row, and every clause links
to its row. The first sentence stands above the small figure (:func:`.figures.answer`), the other two under it, so
that the first screen holds the question, the headline and the figure."""

from __future__ import annotations

from deepnotes.chapters.thousand_layers import claims
from deepnotes.chapters.thousand_layers import experiments as ex
from deepnotes.chapters.thousand_layers.budget import sizes
from deepnotes.core.config import Budget
from deepnotes.show.say import Sentence, Statement, say, say_run, sentence
from deepnotes.show.verdicts import Verdict


def _row(rows: list[Verdict], start: str) -> Verdict:
    """The row whose claim begins with ``start``."""
    found = [v for v in rows if v.claim.startswith(start)]
    if len(found) != 1:
        raise ValueError(f"the training table has {len(found)} rows starting {start!r}")
    return found[0]


def _trains(v: Verdict, run: str):
    return say_run(v, run, trains="trains", fails="does not train")


def _headline(rows: list[Verdict], runs: ex.Runs, budget: Budget) -> Sentence:
    """Post-LN and DeepNorm at N (the headline row), Post-LN at the frontier's shallow and failing depths, ReZero at
    N, and Pre-LN against Post-LN over the frontier."""
    sub = sizes(budget)
    n = sub.depth
    head = _row(rows, "Post-LN does not train at N")
    shallow = _row(rows, "Post-LN trains DeepNet's shallow stack")
    rezero = _row(rows, "ReZero")
    pre = _row(rows, "Pre-LN is easier")
    frontier = [
        sentence(_trains(shallow, run), f" at {run.split('= ')[-1]}", " and " if k == 0 else "")
        for k, run in enumerate(dict(shallow.outcome.expected) if shallow.outcome else {})
    ]
    return sentence(
        f"At one Adam rate ({sub.lr:g}), {runs.steps} steps, {n} blocks: Post-LN ",
        _trains(head, "post"),
        ", DeepNorm ",
        _trains(head, "deepnorm"),
        " and ReZero ",
        _trains(rezero, f"rezero N = {n}"),
        *([sentence("; Post-LN ", *frontier, " blocks")] if frontier else []),
        "; Pre-LN ",
        say(
            pre,
            holds="trains where Post-LN does not, never the reverse",
            wrong="is not easier to train than Post-LN on the frontier",
            undecided="cannot be compared with Post-LN on the frontier here",
        ),
        ".",
    )


def sentences(runs: ex.Runs, budget: Budget) -> list[Sentence]:
    """Three sentences: who trains at the headline depth (and where Post-LN stops), the deepest stack beside
    Post-LN, and what the map says about DeepNorm's rates; each read from its row of :func:`.claims.training`."""
    sub = sizes(budget)
    rows = list(claims.training(runs, budget))
    rate = ex.deepest_rate(budget)
    deep, post = (runs.median(lab, sub.deepest, sub.loss_window, rate) for lab in ex.DEEPEST)
    steps = runs.warmup(ex.DEEPEST[0], sub.deepest)
    warm = "a warmup over the whole run" if steps == runs.steps else f"a warmup of {steps} steps"
    second = sentence(
        "Every value is the median over seeds of the fraction learned. "
        f"Past DeepNet, at {sub.deepest} blocks, the rate the derivation carries down from {sub.depth} ({rate:.2g}) "
        f"and {warm} (medians of {len(runs.at(ex.DEEPEST[0], sub.deepest, rate))} seeds: DeepNorm {deep:.2f}, "
        f"Post-LN {post:.2f}), the annotation's claim of stable training at 1000 layers and deeper ",
        say(
            _row(rows, "The analysis lets 1000 layers"),
            holds="holds at both depths",
            wrong="fails at one depth at least",
            undecided="cannot be decided from these seeds",
        ),
        ".",
    )
    third = sentence(
        "On the depth × rate map, DeepNet's claim that its SGD-derived bound carries over to Adam (DeepNorm's highest "
        "workable rate does not shrink with depth) ",
        say(
            _row(rows, "DeepNorm's bound on the model update"),
            holds="holds in most seeds",
            wrong="fails in most seeds, as the chapter's derivation of a leftover √N predicts",
            undecided="cannot be decided from these seeds",
        ),
        ".",
    )
    return [_headline(rows, runs, budget), second, third]


def markdown(runs: ex.Runs, budget: Budget) -> Statement:
    """The headline shown above the answer's figure: the first of :func:`sentences`, after a bold lead."""
    return Statement(sentences(runs, budget)[:1], lead="The answer, from this page's runs.")


def details(runs: ex.Runs, budget: Budget) -> Statement:
    """The rest of :func:`sentences`, shown under the answer's figure: the deepest stack and the map."""
    return Statement(sentences(runs, budget)[1:])
