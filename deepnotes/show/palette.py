"""The one palette and line-style rule of the book (no matplotlib needed to read it).

A variant's label names its style first and its qualifiers after a comma ("post, warmup",
"deepnorm, α only"). The style picks the colour (:data:`PALETTE`), a qualifier the dash
(:data:`DASHES`): every figure draws "post, warmup" red dashed and "deepnorm, β only" green dash-dotted.
Seeds of one variant are a band around its median, never separate legend entries."""

from __future__ import annotations

import re

# The one palette: a variant keeps its colour in every figure of the book.
PALETTE = {
    # norm styles (and DeepNorm with Su's Adam constants)
    "post": "tab:red",
    "pre": "tab:blue",
    "deepnorm": "tab:green",
    "deepnorm/adam": "tab:olive",
    "pre/λ": "tab:cyan",  # Pre-LN with λ recomputed (α = 1)
    "none": "tab:gray",
    "rezero": "tab:purple",
    "plain": "black",
    # the (α, λ) choices of the magnitude analysis
    "lambda=1/alpha": "tab:blue",
    "alpha=1": "tab:orange",
    "lambda=1": "tab:green",
    "paper": "tab:brown",
    # the branch weights ε of x + εf(x)
    "1": "tab:orange",
    "1/sqrt(N)": "tab:green",
    "1/N": "tab:red",
}
# qualifiers of a variant → the dash of its line (no qualifier: solid)
DASHES = {"warmup": "--", "α only": ":", "β only": "-."}
MARKERS = {"lambda=1/alpha": "o", "alpha=1": "s", "lambda=1": "^", "paper": "x"}


def colour(label: str) -> str | None:
    """A stable colour per variant, matched by the label's first word ("post, warmup 200" → post);
    None (matplotlib's cycle) for anything else."""
    return PALETTE.get(re.split(r"[ ,]", label.strip())[0])


def dash(label: str) -> str:
    """The line style of a variant: the dash of its first qualifier in :data:`DASHES`, solid without one."""
    qualifiers = [q.strip() for q in label.split(",")[1:]]
    return next((DASHES[q] for q in qualifiers if q in DASHES), "-")


def line_style(label: str) -> dict:
    """``color`` and ``linestyle`` keyword arguments of a variant's line: :func:`colour` and :func:`dash`."""
    return {"color": colour(label), "linestyle": dash(label)}
