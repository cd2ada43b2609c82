"""What a verdict says: its four statuses and their colours, the words of its rows (a source named as the book
names it, per-seed values, formulas that break across lines) and the Markdown and HTML a page shows of a verdict
table. The doors that decide a status are :mod:`deepnotes.show.verdicts`; the statistics they judge by,
:mod:`deepnotes.show.statistics`."""

from __future__ import annotations

import html
import math
import re
import statistics
from collections.abc import Sequence

HOLDS, APPROX, WRONG = "holds", "holds approximately", "wrong"
UNCHECKABLE = "not checkable here"  # no derivation given and nothing offline to measure it against

# Status colours with WCAG AA contrast (>= 4.5:1) both on white and on the light grey panel that the
# book's dark mode (pydata-sphinx-theme) puts under every HTML output; tests/test_browser.py measures it.
STATUS_COLOUR = {HOLDS: "#116329", APPROX: "#7d4e00", WRONG: "#a40e26", UNCHECKABLE: "#424a53"}


# where a formula may break across lines: after an operator, a comma or an opening bracket (a SymPy string
# such as "h_att*lambda_o*sigma(S*lambda_k*lambda_q)/alpha" has no space to break at)
_FORMULA_BREAKS = re.compile(r"(?<=[*/+=,(])(?=\S)")


def code_html(text: str) -> str:
    """Text as inline code that wraps at spaces and after an operator, a comma or an opening bracket
    (``<wbr>``: a table sizes its column by the longest piece between them, not by the whole formula, so a
    SymPy string no longer pushes the table past its column), breaking a token only where it is longer than
    its column (``break-word``: ``anywhere`` let the table shrink a column to one character and cut every
    word, "multilin/gual"), and takes the text colour of whatever it sits on: the theme's code colour
    is meant for the page's own background, and in dark mode it is nearly invisible on the light output
    panel."""
    pieces = _FORMULA_BREAKS.split(text)
    return f"<code style='overflow-wrap:break-word;color:inherit'>{'<wbr>'.join(html.escape(p) for p in pieces)}</code>"


# A verdict's ``source`` names an article by its file number, "seed 000 §增量爆炸 eq. (1)" (what
# deepnotes.ledger.citations parses); the tables call it "source 000": the book keeps "seed" for random seeds.
SOURCE_WORD = "source"
_SEED_NAMED = re.compile(r"\b[Ss]eed(s?) (?=\d{3}\b)")


def source_name(number: str) -> str:
    """How the book's tables name a source article: ``"000"`` → "source 000"."""
    return f"{SOURCE_WORD} {number}"


def source_labels(text: str) -> str:
    """``text`` as the tables print it: every "seed 000" (a source article's number, three digits) reads
    "source 000", "seeds 002 and 003" reads "sources 002 and 003"; a random seed ("seed 0") is left alone."""
    return _SEED_NAMED.sub(lambda m: f"{SOURCE_WORD.capitalize() if m[0][0] == 'S' else SOURCE_WORD}{m[1]} ", text)


LARGE_VALUE = 1e3  # seeds_text writes values this large in two significant digits (−3.6e+10, not −35714856846.96)


def _seed_value(v: float) -> str:
    """One seed's value: two decimals, two significant digits where it is large, "div." where it diverged."""
    if not math.isfinite(v):
        return "div."
    return f"{v:.2f}" if abs(v) < LARGE_VALUE else f"{v:.2g}"


def seeds_text(values) -> str:
    """The seeds' median and every seed's value: "0.88 (0.10, 0.91, 0.88)"; a diverged seed is "div."."""
    each = ", ".join(_seed_value(v) for v in values)
    med = statistics.median(values)
    return f"{_seed_value(med)} ({each})" if math.isfinite(med) else f"diverged ({each})"


SUMMARY_ORDER = (WRONG, APPROX, HOLDS, UNCHECKABLE)


def summary_markdown(table: Sequence, what: str) -> str:
    """A chapter's take-away on ``what`` (e.g. "The annotated section"), written from its verdict
    table so the two cannot disagree: the claims grouped by status, wrong first, each with its count."""
    groups = {s: [source_labels(v.claim) for v in table if v.status == s] for s in SUMMARY_ORDER}
    parts = [f"**{s}** ({len(claims)}): " + "; ".join(claims) for s, claims in groups.items() if claims]
    return f"{what}, by its verdict table ({len(table)} rows):\n\n" + "\n".join(f"- {p}" for p in parts)


def decides_markdown(table: Sequence, what: str) -> str:
    """What ``what`` (e.g. "The training runs") can and cannot decide, from its verdict table: the claims
    it judges, by status, then those it leaves not checkable here, each with the last clause of its reason
    (the seeds it rests on, an interval across the claimed range, a run too short to order)."""
    judged = [v for v in table if v.status != UNCHECKABLE]
    open_ = [v for v in table if v.status == UNCHECKABLE]
    lines = [f"{what} decide {len(judged)} of {len(table)} rows here" + (":" if judged else ".")]
    lines += [
        f"- **{s}**: " + "; ".join(source_labels(v.claim) for v in judged if v.status == s)
        for s in SUMMARY_ORDER
        if any(v.status == s for v in judged)
    ]
    if open_:
        lines += ["", f"They cannot decide {len(open_)}:"]
        lines += [f"- {source_labels(v.claim)}: {v.reason.rsplit('; ', 1)[-1]}" for v in open_]
    return "\n".join(lines)


def table_html(table: Sequence) -> str:
    """The verdict rows of ``table`` as the book's HTML table: claim and source, claimed, computed, the status in
    its colour, and why (each cell labelled for the narrow layout)."""
    rows = "".join(
        f"<tr id='{v.anchor}'><td>{html.escape(source_labels(v.claim))}<br>"
        f"<small>{html.escape(source_labels(v.source))}</small></td>"
        f"<td data-label='claimed'>{code_html(v.claimed)}</td>"
        f"<td data-label='computed'>{code_html(v.computed)}</td>"
        f"<td data-label='verdict' style='color:{STATUS_COLOUR[v.status]};font-weight:bold'>{v.status}</td>"
        f"<td data-label='why'>{html.escape(source_labels(v.reason))}</td></tr>"
        for v in table
    )
    return (
        "<table class='verdicts' style='font-size:0.85em;width:100%'><thead><tr>"
        "<th style='width:34%'>claim</th><th>claimed</th><th>computed</th><th>verdict</th>"
        f"<th style='width:28%'>why</th></tr></thead><tbody>{rows}</tbody></table>"
    )
