"""The one palette of the book (no matplotlib needed to read it)."""

from __future__ import annotations

import re

# The one palette: a variant keeps its colour in every figure of the book.
PALETTE = {
    # norm styles (and DeepNorm with Su's Adam constants)
    "post": "tab:red",
    "pre": "tab:blue",
    "deepnorm": "tab:green",
    "deepnorm/adam": "tab:olive",
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
MARKERS = {"lambda=1/alpha": "o", "alpha=1": "s", "lambda=1": "^", "paper": "x"}


def colour(label: str) -> str | None:
    """A stable colour per variant, matched by the label's first word ("post, warmup 200" → post);
    None (matplotlib's cycle) for anything else."""
    return PALETTE.get(re.split(r"[ ,]", label.strip())[0])
