"""The introduction's tables (``book/intro.ipynb``), computed from the package when the page runs: the
budget rows and what each is for (:mod:`deepnotes.core.config`), where ``gpu`` differs from ``full``,
each chapter's estimated cost (:mod:`deepnotes.cost.estimate`) and the source articles with the names
the verdict tables and the claims ledger give them (:mod:`deepnotes.ledger.inventory`). Each function
returns Markdown; the page shows it with ``IPython.display.Markdown``."""

from __future__ import annotations

import dataclasses
from numbers import Real

from deepnotes.chapters import CHAPTERS
from deepnotes.chapters.catalog import CATALOG, chapter_plan
from deepnotes.core.config import (
    BUDGET_ENV,
    BUDGET_USES,
    BUDGETS,
    GPU_MINUTES_PER_CHAPTER,
    default_budget_name,
    get_budget,
)
from deepnotes.core.validate import Finite
from deepnotes.cost import estimate as est
from deepnotes.cost.model import TrainRuns
from deepnotes.ledger.inventory import SOURCES
from deepnotes.show.verdict_words import source_name

COST_BUDGETS = ("cpu", "gpu")  # the budgets a reader runs: a laptop or Binder, and Colab's T4
NOT_A_BUDGET = "huge"  # a name the table lacks, to show what get_budget does with it


def _trained(budget: str) -> tuple[int, int, int]:
    """(training runs, deepest stack, longest run in steps) over every chapter's plan at ``budget``."""
    runs = [w for c in CHAPTERS for w in chapter_plan(c, budget) if isinstance(w, TrainRuns)]
    return sum(w.members for w in runs), max(w.model.n_layers for w in runs), max(w.train.steps for w in runs)


def _picked(name: str) -> str:
    """How a row is chosen: the default with or without CUDA, or by name only."""
    cases = ((False, "without CUDA"), (True, "with CUDA"))
    when = [label for cuda, label in cases if default_budget_name(cuda) == name]
    return f"**the default {' and '.join(when)}**" if when else "**by name only**"


def budget_rows() -> str:
    """Every budget row: what it is for, how it is picked, the shared Transformer's sizes (width d,
    heads, FFN width), its batches and vocabulary, and what the chapters' plans train at it (runs,
    the deepest stack, the longest run in steps)."""
    lines = [
        "| budget | for | model: d, heads, FFN | batch × tokens | vocabulary | the chapters train |",
        "| --- | --- | --- | --- | ---: | --- |",
    ]
    for name, use in BUDGET_USES.items():
        b = BUDGETS[name]
        runs, deepest, steps = _trained(name)
        lines.append(
            f"| `{name}` | {use}; {_picked(name)} | {b.d_model}, {b.n_heads}, {b.d_ff} | {b.batch_size} × {b.seq_len} "
            f"| {b.vocab_size} | {runs} runs, up to {deepest} blocks and {steps} steps |"
        )
    return "\n".join(lines)


def default_rule() -> str:
    """What an unset ``$DEEPNOTES_BUDGET`` means and what a name the table lacks does, from the package."""
    try:
        get_budget(NOT_A_BUDGET)
        refused = f"`{NOT_A_BUDGET}` is accepted"  # only if a row of that name is ever added
    except ValueError as err:
        refused = f"given to `get_budget` or set in `{BUDGET_ENV}`, `{NOT_A_BUDGET}` raises `ValueError: {err}`"
    return (
        f"`{BUDGET_ENV}` picks the row. Unset or empty, it is `{default_budget_name(True)}` where PyTorch "
        f"finds CUDA and `{default_budget_name(False)}` otherwise (`deepnotes.core.config.default_budget_name`); "
        f"a name the table lacks is refused: {refused}."
    )


def _flat(row, prefix: str = "") -> dict:
    """A budget row's fields, nested dataclasses spelled out (``warmup.steps``); not its name."""
    out = {}
    for f in dataclasses.fields(row):
        value = getattr(row, f.name)
        if f.name in ("name", "chapters"):
            continue
        if dataclasses.is_dataclass(value):
            out.update(_flat(value, f"{prefix}{f.name}."))
        else:
            out[prefix + f.name] = value
    return out


def _smaller(a, b) -> bool:
    """``a`` is less than ``b``: a smaller number, fewer of the same values, or smaller element by element."""
    if isinstance(a, Real) and isinstance(b, Real):
        return a < b
    if isinstance(a, tuple) and isinstance(b, tuple):
        fewer = set(a) < set(b)
        return fewer or (len(a) == len(b) and a != b and all(x <= y for x, y in zip(a, b, strict=True)))
    return False


def _shown(value) -> str:
    """A value as the table prints it: a tuple of depths as [20, 100]."""
    return f"[{', '.join(map(str, value))}]" if isinstance(value, tuple) else str(value)


def differences(row, reference) -> list[tuple[str, object, object]]:
    """(field, row's value, reference's value) for every field where two rows of one kind differ."""
    mine, theirs = _flat(row), _flat(reference)
    return [(k, v, theirs[k]) for k, v in mine.items() if v != theirs[k]]


def gpu_against_full() -> str:
    """Where the ``gpu`` row differs from ``full``, in the shared sizes and in each chapter's row, with
    the T4 minutes the chapter's ``gpu`` row may take by the estimate, and whether every such value is the
    smaller one (``gpu`` is ``full`` cut to fit a T4)."""
    rows = [("shared sizes", "—", differences(BUDGETS["gpu"], BUDGETS["full"]))]
    rows += [
        (
            f"`{c}`",
            CATALOG[c].gpu_minutes,
            differences(CATALOG[c].rows["gpu"], CATALOG[c].rows["full"]),
        )
        for c in CHAPTERS
    ]
    every = [d for _, _, diffs in rows for d in diffs]
    larger = [f"{where} {k}" for where, _, diffs in rows for k, g, f in diffs if not _smaller(g, f)]
    cut = sum(bool(diffs) for where, _, diffs in rows[1:])
    verdict = (
        "each is smaller in `gpu` than in `full` (a number, or fewer or smaller values in a list): `gpu` is "
        "`full` cut down"
        if every and not larger
        else f"not all of them are smaller: {', '.join(larger)}"
    )
    lines = [
        f"`gpu` has `full`'s sizes except in {len(every)} values, over the shared sizes and {cut} of "
        f"{len(CHAPTERS)} chapters; {verdict}. A chapter's `gpu` row must fit the T4 minutes shown "
        f"({GPU_MINUTES_PER_CHAPTER} unless its `budget.py` gives more) by the estimate below.",
        "",
        "| where | T4 minutes | `gpu` (`full`) |",
        "| --- | ---: | --- |",
    ]
    for where, minutes, diffs in rows:
        said = "; ".join(f"{k} {_shown(g)} ({_shown(f)})" for k, g, f in diffs) or "the same as `full`"
        lines.append(f"| {where} | {minutes} | {said} |")
    return "\n".join(lines)


def _rates_line(rates: est.Rates) -> str:
    """A device's two rates and where they come from (measured here, or assumed)."""
    flops = rates.flops_per_second
    speed = f"{flops / 1e12:.3g} TFLOP/s" if flops >= 1e12 else f"{flops / 1e9:.3g} GFLOP/s"
    return (
        f"{rates.device}: {speed} of matmuls and "
        f"{rates.seconds_per_launch * 1e6:.2g} µs per kernel launch ({rates.how})"
    )


def _duration(seconds: Finite) -> str:
    """:func:`~deepnotes.cost.estimate.format_seconds` with no line break between number and unit."""
    return est.format_seconds(seconds).replace(" ", "\u00a0")


def cost_table(budgets: tuple[str, ...] = COST_BUDGETS) -> str:
    """Each chapter's estimated cost at ``budgets``: its plan's counted work timed with this
    machine's rates (measured once, :func:`~deepnotes.cost.estimate.calibrate`) and the T4's assumed
    ones, as the chapter's budget cell prints it (without marking the chapter in the work log)."""
    here, t4 = est.calibrate(), est.T4
    rates = (here, t4)
    names = ("this machine", "T4")
    head = " | ".join(f"`{b}` on {n}" for b in budgets for n in names)
    lines = [f"| chapter | {head} |", "| --- |" + " ---: |" * (len(budgets) * len(rates))]
    totals = [0.0] * (len(budgets) * len(rates))
    for chapter in CHAPTERS:
        seconds = []
        for b in budgets:
            e = est.estimate(chapter, chapter_plan(chapter, b), b, list(rates))
            seconds += [e.seconds[r.device] for r in rates]
        totals = [t + s for t, s in zip(totals, seconds, strict=True)]
        lines.append(f"| `{chapter}` | " + " | ".join(_duration(s) for s in seconds) + " |")
    lines.append("| all chapters | " + " | ".join(f"**{_duration(s)}**" for s in totals) + " |")
    lines += ["", f"This machine: {_rates_line(here)}.", "", f"T4: {_rates_line(t4)}."]
    return "\n".join(lines)


def sources_table() -> str:
    """The five source articles as the verdict tables and the claims ledger name them ("source 000"):
    each article's title, its English rendering and address, author and date."""
    lines = ["| name in the tables | article | by |", "| --- | --- | --- |"]
    for number, s in SOURCES.items():
        address = f"<{s.url}>" if s.url else "no address in the copy the book works from"
        lines.append(f"| {source_name(number)} | {s.title} · *{s.english}* · {address} | {s.author}, {s.date} |")
    return "\n".join(lines)
