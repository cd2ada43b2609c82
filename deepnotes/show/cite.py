"""What a verdict tests, said by the chapter that makes it (issue 61): its *subjects*, one or more items of the source
articles' inventories, or the paper whose claim it tests; never guessed from the order of its citation text.

A verdict's row prints a citation text ("seed 000 annotated eqs. (26), (27)"); ``cite(text, tests=...)`` names which
of the items it cites the verdict tests ("eq. (27)": the closed form it refutes), and the rest of the cited items are
its context (the definition it leans on). Each subject is checked at once: it must be an item of the inventory
(``deepnotes/ledger/sources/<seed>.toml``) and one the row's text cites, so that what the reader sees and what the
ledger records agree. ``cite(text, paper="DeepNet")`` says the verdict tests a paper's claim; the source items the
text cites are then context, unless ``tests`` names those that report the same finding.

    check_number(claim, cite("seed 000 annotated eqs. (26), (27)", tests="eq. (27)"), ...)
    check_outcome(claim=..., source=cite("seed 003 annotated eqs. (44), (46)", tests=("eq. (44)", "eq. (46)")), ...)
"""

from __future__ import annotations

from dataclasses import dataclass

from deepnotes.ledger.citations import PAPERS, Citation, citations


@dataclass(frozen=True)
class Cite:
    """A verdict's citation text as its row prints it, and what the verdict tests: ``subjects`` (inventory items,
    each recorded with the verdict's status) and/or ``paper`` (a paper's claim; alone, no item gets the status)."""

    text: str
    subjects: tuple[Citation, ...] = ()
    paper: str = ""

    @property
    def context(self) -> tuple[Citation, ...]:
        """The items the text cites that the verdict does not test: named beside it in the ledger, without a status."""
        return tuple(c for c in citations(self.text) if c not in self.subjects)


def _known(item: Citation) -> bool:
    from deepnotes.ledger.inventory import SOURCES

    return item.seed in SOURCES and any((it.part, it.ref) == (item.part, item.ref) for it in SOURCES[item.seed].items)


def cite(text: str, tests: str | tuple[str, ...] = (), paper: str = "") -> Cite:
    """The citation ``text`` of a verdict that tests the items ``tests`` names (each one of the items the text cites,
    by its ref, "eq. (27)", "claim 42", "table §9.1"; or "seed part ref" where two cited items share a ref:
    "003 annotated eq. (44)"), and/or, with ``paper``, the claim of that paper (one of ``citations.PAPERS``, named in
    the text; with ``tests`` too: a paper's finding that those source items report, each getting the status).
    Refused at once, naming it: a subject the text does not cite or the inventory lacks, a paper not named, or
    neither."""
    tests = (tests,) if isinstance(tests, str) else tuple(tests)
    if not tests and not paper:
        raise ValueError(f"{text!r}: say what the verdict tests, tests= (items it cites) or paper= (one of {PAPERS})")
    if paper and (paper not in PAPERS or paper not in text):
        raise ValueError(f"{text!r}: paper={paper!r} must be one of {PAPERS} and named in the text")
    cited = citations(text)
    subjects = []
    for name in tests:
        found = [c for c in cited if name in (c.ref, f"{c.seed} {c.part} {c.ref}", f"{c.seed} {c.ref}")]
        if len(found) != 1:
            listed = [f"{c.seed} {c.part} {c.ref}" for c in cited]
            raise ValueError(f"{text!r}: tests={name!r} must name one of the items the text cites, {listed}")
        if not _known(found[0]):
            c = found[0]
            raise ValueError(f"{text!r}: {c.seed} {c.part} {c.ref} is not an item of source {c.seed}'s inventory")
        subjects.append(found[0])
    return Cite(text, tuple(dict.fromkeys(subjects)), paper)


Source = str | Cite  # what a check function takes as a verdict's source: its text, or a Cite (text and subjects)
