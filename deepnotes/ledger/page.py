"""The claims ledger: every inventory item of the five sources beside the chapters' verdicts that test it.

A verdict cites an item when its ``source`` names the item (see :mod:`deepnotes.ledger.citations`); it
*tests* only its subjects, the items its chapter named (:mod:`deepnotes.show.cite`), and mentions the others as
context. An item is
*checked* when at least one recorded verdict has it as subject and judges it, *needs no check* when none
does and its inventory entry says why (a definition, an algebra step), and *not checked* otherwise. Only a
subject's status reaches the ledger: a verdict that names an item as context shows there as a mention,
without a status, so a claim of one source never writes a status onto another's item. A checked item has
one status (:attr:`Row.status`): where its verdicts test it in several settings that disagree, "depends on
the setting", with the settings on each side listed (:func:`mixed`)."""

from __future__ import annotations

import html
import re
from collections import Counter
from dataclasses import dataclass

from deepnotes.core.validate import Count, NonNegativeCount
from deepnotes.ledger import unchecked
from deepnotes.ledger.citations import Citation, citations
from deepnotes.ledger.inventory import SOURCES, inventory
from deepnotes.ledger.items import Item
from deepnotes.ledger.record import ChapterRecord, Record
from deepnotes.show.verdict_words import (
    APPROX,
    HOLDS,
    STATUS_COLOUR,
    UNCHECKABLE,
    code_html,
    source_labels,
    source_name,
)
from deepnotes.show.verdicts import outcome_of

# An item that some settings confirm and others refute (holds at N = 12, wrong at N = 24): its one status in
# the ledger, with the settings behind each side listed (Row.status). The rule is the same for every item.
MIXED = "depends on the setting"
COMPUTED_CHARS = 70  # a long computed value is cut in the ledger (the chapter shows it whole)


@dataclass(frozen=True)
class Row:
    """One inventory item, the recorded verdicts that test it (their subject) and those that cite it as
    context (``mentions``: no status of theirs is the item's)."""

    seed: str
    item: Item
    verdicts: tuple[Record, ...]
    mentions: tuple[Record, ...] = ()

    @property
    def statuses(self) -> tuple[str, ...]:
        """The distinct statuses the item's subject verdicts judge it with, in the order first given. A "not
        checkable here" decides nothing, so it cannot contradict a judgment: it counts only where no verdict
        judges the item (the ledger still lists it, with its reason, beside the ones that do)."""
        judged = tuple(dict.fromkeys(v.status for v in self.verdicts if v.status != UNCHECKABLE))
        return judged or tuple(dict.fromkeys(v.status for v in self.verdicts))

    @property
    def status(self) -> str:
        """The item's one status in the ledger, from its subject verdicts' judged statuses
        (:attr:`statuses`): the one they share; "holds approximately" where some hold and some hold
        approximately (the weaker); :data:`MIXED` where some hold and some are wrong, each in its own setting
        (a row's claim names its depth, optimizer, std…); "" where no verdict tests the item."""
        judged = self.statuses
        if len(judged) <= 1:
            return judged[0] if judged else ""
        return APPROX if set(judged) == {HOLDS, APPROX} else MIXED

    def settings(self, status: str) -> tuple[str, ...]:
        """The claims (as their verdicts name them, one per setting) that judge the item ``status``."""
        return tuple(dict.fromkeys(v.claim for v in self.verdicts if v.status == status))

    @property
    def clashes(self) -> tuple[str, ...]:
        """Claims that one setting judges two ways: two subject verdicts with the same claim text (so the
        same setting) and different judged statuses. A real conflict, unlike :data:`MIXED`."""
        seen: dict[str, set[str]] = {}
        for v in self.verdicts:
            if v.status != UNCHECKABLE:
                seen.setdefault(v.claim, set()).add(v.status)
        return tuple(claim for claim, got in seen.items() if len(got) > 1)

    @property
    def state(self) -> str:
        """ "checked" (a verdict tests it and judges it), "needs no check" or "not checked" (none does:
        a row tested only by "not checkable here" verdicts is not checked, their reasons say why; one
        only mentioned as context is not checked either)."""
        if any(v.status != UNCHECKABLE for v in self.verdicts):
            return "checked"
        return "needs no check" if self.item.if_unchecked else "not checked"


def subjects(v: Record) -> tuple[Citation, ...]:
    """The items verdict ``v`` tests, as its chapter named them (``Record.tested``; none where it tests a paper, or
    where a record names nothing, which :func:`build` lists as unsourced)."""
    return tuple(Citation(*s) for s in v.tested["subjects"]) if v.tested is not None else ()


@dataclass(frozen=True)
class Ledger:
    rows: dict[str, tuple[Row, ...]]  # by seed, in the article's order
    dangling: tuple[tuple[Record, Citation], ...]  # cited items the inventory lacks
    unsourced: tuple[Record, ...]  # verdicts naming no subject and no paper (show.cite)
    records: dict[str, ChapterRecord]  # what was read, by chapter


def build(records: dict[str, ChapterRecord], items: dict[str, tuple[Item, ...]] | None = None) -> Ledger:
    """Match every recorded verdict to the inventory items its source cites."""
    items = inventory() if items is None else items
    known = {(seed, it.part, it.ref) for seed, its in items.items() for it in its}
    testing: dict[tuple[str, str, str], list[Record]] = {}
    mentioning: dict[tuple[str, str, str], list[Record]] = {}
    dangling, unsourced = [], []
    for record in records.values():
        for v in record.verdicts:
            cited, tested = citations(v.source), subjects(v)
            if v.tested is None:
                unsourced.append(v)
            for c in cited:
                key = (c.seed, c.part, c.ref)
                if key not in known:
                    dangling.append((v, c))
                else:
                    (testing if c in tested else mentioning).setdefault(key, []).append(v)
    rows = {
        seed: tuple(
            Row(
                seed,
                it,
                tuple(testing.get((seed, it.part, it.ref), ())),
                tuple(mentioning.get((seed, it.part, it.ref), ())),
            )
            for it in its
        )
        for seed, its in items.items()
    }
    return Ledger(rows, tuple(dangling), tuple(unsourced), dict(records))


@dataclass(frozen=True)
class Coverage:
    seed: str
    total: Count
    checked: NonNegativeCount
    no_check_needed: NonNegativeCount
    not_checked: NonNegativeCount

    @property
    def text(self) -> str:
        return f"{self.checked} / {self.total}"


def coverage(ledger: Ledger) -> list[Coverage]:
    """Per source: items, checked, needing no check, not checked."""
    out = []
    for seed, rows in ledger.rows.items():
        n = Counter(r.state for r in rows)
        out.append(Coverage(seed, len(rows), n["checked"], n["needs no check"], n["not checked"]))
    return out


class CoverageTable(list):
    """:func:`coverage` as a table (HTML) or as text."""

    def __repr__(self) -> str:
        return "\n".join(
            f"{source_name(c.seed)}: checked {c.text}, needs no check {c.no_check_needed}, not checked {c.not_checked}"
            for c in self
        )

    def _repr_html_(self) -> str:
        body = "".join(
            f"<tr><td>{source_name(c.seed)}: {html.escape(SOURCES[c.seed].english)}</td><td>{c.total}</td>"
            f"<td><b>{c.checked}</b> ({c.checked / max(c.total, 1):.0%})</td><td>{c.no_check_needed}</td>"
            f"<td>{c.not_checked}</td></tr>"
            for c in self
        )
        t = [sum(getattr(c, f) for c in self) for f in ("total", "checked", "no_check_needed", "not_checked")]
        body += (
            f"<tr><td><b>all five</b></td><td>{t[0]}</td><td><b>{t[1]}</b> ({t[1] / max(t[0], 1):.0%})</td>"
            f"<td>{t[2]}</td><td>{t[3]}</td></tr>"
        )
        return (
            "<table class='ledger-coverage' style='font-size:0.9em'><thead><tr><th>source</th><th>items</th>"
            "<th>checked</th><th>needs no check</th><th>not checked</th></tr></thead>"
            f"<tbody>{body}</tbody></table>"
        )


def coverage_table(ledger: Ledger) -> CoverageTable:
    return CoverageTable(coverage(ledger))


def _verdict_link(v: Record) -> str:
    computed = v.computed if len(v.computed) <= COMPUTED_CHARS else v.computed[: COMPUTED_CHARS - 1] + "…"
    return (
        f"<a href='{v.chapter}.html#{v.anchor}' style='color:{STATUS_COLOUR.get(v.status, 'inherit')};"
        f"font-weight:bold'>{html.escape(v.status)}</a> <small>({html.escape(v.chapter.replace('_', ' '))}): "
        f"{code_html(computed)}</small>"
    )


def _untested_reason(r: Row) -> str:
    """Why an item without an inventory reason is not checked: nothing tests it, and whether verdicts
    testing other items cite it as context (listed below the reason)."""
    if r.mentions:
        return f"no verdict tests it; {len(r.mentions)} cite it as context, testing another item"
    return f"no chapter checks it yet ({r.item.chapter.replace('_', ' ')})"


def _mentions_html(mentions: tuple[Record, ...]) -> str:
    """The verdicts that cite an item as context: links, no status (they test another item), in the text's
    own colour (the theme's link blue fails the contrast test on the dark mode's light output panel)."""
    links = ", ".join(
        f"<a href='{v.chapter}.html#{v.anchor}' style='color:inherit;text-decoration:underline'>"
        f"{html.escape(source_labels(v.claim))}</a>"
        for v in mentions
    )
    return f"<small style='opacity:0.8'>cited as context by: {links}</small>"


def _item_status_html(r: Row) -> str:
    """The item's one status (:attr:`Row.status`) above its verdicts, where more than one verdict judges it."""
    if len(r.verdicts) < 2 or not r.status:
        return ""
    colour = STATUS_COLOUR.get(r.status, "inherit")
    return f"<span style='color:{colour}'>item: <b>{html.escape(r.status)}</b></span><br>"


# A reason that speaks of what a chapter measured names the verdict, {{part of its claim}}, instead of typing
# the result: the page shows that verdict's status from the build's records beside it (reason_html), and the
# book's tests fail where a reference finds no verdict.
REFERENCE = re.compile(r"\{\{(.+?)\}\}")


def references(text: str) -> list[str]:
    """The verdict claims a reason refers to: every {{…}} in it."""
    return REFERENCE.findall(text)


def referenced_verdicts(ref: str, verdicts) -> list[Record]:
    """The recorded verdicts whose claim contains ``ref``."""
    return [v for v in verdicts if ref in v.claim]


def reason_html(text: str, verdicts) -> str:
    """A reason as HTML: each {{ref}} becomes the quoted reference followed by the status of every recorded
    verdict it names (a link to the row, in the text's colour: the reason is shown dimmed, and a status colour
    dimmed fails the contrast test), or a note that this build recorded none."""
    out, last = [], 0
    for m in REFERENCE.finditer(text):
        out.append(html.escape(source_labels(text[last : m.start()])))
        found = referenced_verdicts(m[1], verdicts)
        said = ", ".join(
            f"<a href='{v.chapter}.html#{v.anchor}' style='color:inherit;text-decoration:underline'>"
            f"<b>{html.escape(v.status)}</b></a> in {html.escape(v.chapter.replace('_', ' '))}"
            for v in found
        )
        out.append(f"'{html.escape(m[1])}' ({said or 'not recorded in this build'})")
        last = m.end()
    out.append(html.escape(source_labels(text[last:])))
    return "".join(out)


class SourceTable(list):
    """One source's rows as a table (HTML) or as text; ``verdicts``: every recorded verdict, for the
    references in the rows' reasons."""

    verdicts: tuple[Record, ...] = ()

    def __repr__(self) -> str:
        return "\n".join(
            f"{r.item.part} {r.item.ref}: {r.state} ({len(r.verdicts)} verdicts, {len(r.mentions)} mentions)"
            for r in self
        )

    def _repr_html_(self) -> str:
        out = []
        for r in self:
            it = r.item
            where = html.escape(f"{it.part} · §{it.section}" if it.section else it.part)
            if r.verdicts:
                said = _item_status_html(r) + "<br>".join(_verdict_link(v) for v in r.verdicts)
            else:
                why = it.if_unchecked or it.not_checked or _untested_reason(r)
                kind = unchecked.category(r.seed, it.part, it.ref) if it.not_checked else ""
                state = f"{r.state} · {kind}" if kind else r.state
                said = f"<span style='opacity:0.8'>{html.escape(state)}: {reason_html(why, self.verdicts)}</span>"
            if r.mentions:
                said += "<br>" + _mentions_html(r.mentions)
            out.append(
                f"<tr><td style='white-space:nowrap'>{html.escape(it.ref)}<br><small>{where}</small></td>"
                f"<td data-label='claim'>{html.escape(source_labels(it.claim))}</td>"
                f"<td data-label='verdicts'>{said}</td></tr>"
            )
        return (
            "<table class='ledger' style='font-size:0.85em;width:100%'><thead><tr><th>item</th>"
            "<th style='width:45%'>claim</th><th>verdicts</th></tr></thead><tbody>" + "".join(out) + "</tbody></table>"
        )


def source_table(ledger: Ledger, seed: str) -> SourceTable:
    if seed not in ledger.rows:
        raise ValueError(f"seed must be one of {tuple(ledger.rows)}, got {seed!r}")
    table = SourceTable(ledger.rows[seed])
    table.verdicts = tuple(v for record in ledger.records.values() for v in record.verdicts)
    return table


def inventory_summary(items: dict[str, tuple[Item, ...]] | None = None) -> str:
    """How many items of each kind each source's inventory holds (no measurement: nbval checks it)."""
    items = inventory() if items is None else items
    lines = []
    for seed, its in items.items():
        kinds = Counter(it.kind for it in its)
        kinds_text = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items()))
        lines.append(f"{source_name(seed)}: {len(its)} items ({kinds_text})")
    return "\n".join(lines)


def records_summary(ledger: Ledger) -> str:
    """Which chapters' verdicts were read, at which budget and when."""
    if not ledger.records:
        return "No chapter has recorded its verdicts yet: build the book (every chapter runs before this page)."
    return "\n".join(
        f"{r.chapter}: {len(r.verdicts)} verdicts at the {r.budget} budget ({r.recorded_at})"
        for r in ledger.records.values()
    )


def disagreements(records: dict[str, ChapterRecord]) -> list[str]:
    """Where chapters that report one experiment (a training-outcome verdict's ``setting``) disagree: a
    run of that experiment measured differently, or one claim on it given two statuses. [] when none."""
    measured: dict[tuple[str, str], set[tuple[str, float]]] = {}
    status: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for record in records.values():
        for v in record.verdicts:
            outcome = outcome_of(v.outcome) if v.outcome else None
            if outcome is None or not outcome.setting:
                continue
            for run, value in outcome.measured:
                measured.setdefault((outcome.setting, run), set()).add((v.chapter, value))
            status.setdefault((outcome.setting, v.claim), set()).add((v.chapter, v.status))
    out = [
        f"{setting}: run '{run}' measured {sorted(got)}"
        for (setting, run), got in measured.items()
        if len({value for _, value in got}) > 1
    ]
    out += [
        f"{setting}: '{claim}' judged {sorted(got)}"
        for (setting, claim), got in status.items()
        if len({s for _, s in got}) > 1
    ]
    return out


def conflicts(ledger: Ledger) -> list[str]:
    """The items that one setting judges two ways (:attr:`Row.clashes`: verdicts with the same claim text and
    different statuses), with the verdicts behind each status: each setting should get one answer in the
    book. [] when none. Settings that disagree with each other are not a conflict: see :func:`mixed`."""
    out = []
    for seed, rows in ledger.rows.items():
        for r in rows:
            for claim in r.clashes:
                given = ", ".join(f"{v.status} ({v.chapter})" for v in r.verdicts if v.claim == claim)
                out.append(f"{source_name(seed)} {r.item.part} {r.item.ref} has 2 statuses for '{claim}' ({given})")
    return out


def mixed(ledger: Ledger) -> list[str]:
    """The items whose status is :data:`MIXED` (some settings confirm the claim, others refute it), with the
    settings on each side. [] when none."""
    out = []
    for seed, rows in ledger.rows.items():
        for r in rows:
            if r.status == MIXED:
                sides = "; ".join(
                    f"{status} in " + ", ".join(f"'{claim}'" for claim in r.settings(status)) for status in r.statuses
                )
                out.append(f"{source_name(seed)} {r.item.part} {r.item.ref}: {sides}")
    return out


def conflicts_text(ledger: Ledger) -> str:
    """:func:`conflicts` and :func:`mixed` as the ledger page prints them."""
    found, depends = conflicts(ledger), mixed(ledger)
    lines = (
        [f"{len(found)} settings get more than one status:"] + [f"- {line}" for line in found]
        if found
        else ["Every item a verdict tests gets one status, and every setting one answer."]
    )
    if depends:
        lines += [
            f"{len(depends)} of them {'depend' if len(depends) > 1 else 'depends'} on the setting: the claim holds "
            "in some of the settings tried and not in others (its status is '" + MIXED + "'):"
        ] + [f"- {line}" for line in depends]
    return "\n".join(lines)


def problems(ledger: Ledger) -> str:
    """The cited items the inventory lacks, the verdicts that name no subject and the chapters that disagree
    on one experiment (:func:`disagreements`), or a line saying there are none."""
    lines = [
        f"{v.chapter}: '{v.claim}' cites {source_name(c.seed)} {c.part} {c.ref}, which the inventory lacks"
        for v, c in ledger.dangling
    ]
    lines += [
        f"{v.chapter}: '{v.claim}' ({source_labels(v.source)}) names no subject and no paper (cite(text, tests=...))"
        for v in ledger.unsourced
    ]
    lines += disagreements(ledger.records)
    return (
        "\n".join(lines)
        if lines
        else (
            "Every verdict names the items it tests, which the inventory has, or a paper, and chapters "
            "that report one experiment agree on it."
        )
    )
