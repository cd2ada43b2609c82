"""One entry of a source's inventory."""

from __future__ import annotations

from dataclasses import dataclass

from deepnotes.chapters import CHAPTERS

PARTS = ("main", "annotated", "side note", "comment")
KINDS = ("equation", "table", "figure", "numeric", "scaling", "qualitative", "definition")


@dataclass(frozen=True)
class Item:
    """A claim of a source article, in the book's words.

    ``ref`` names it uniquely within its source and part: "eq. (12)" (main-text equations are
    numbered 1, 2, … in order of appearance, as the article's page numbers them; the annotated
    section's carry their own \\tag{n}), "table §9.1" (annotated, by its heading), "table 1" (main),
    "figure 1", "side note 3" (seed 001's block quotes, in order), "comment 2" (readers' comments, in
    order), or "claim 7" for an unnumbered claim in the prose (numbered in order within its part)."""

    ref: str
    part: str  # one of PARTS
    section: str  # the section heading as the source prints it ("增量爆炸", "9.1")
    kind: str  # one of KINDS
    claim: str  # the claim in English, one line, in the book's words (never a translated paragraph)
    chapter: str  # the chapter it belongs to (one of CHAPTERS)
    if_unchecked: str = ""  # why it needs no verdict (a definition, an algebra step); "" = a claim to check
    not_checked: str = ""  # for a claim to check that no chapter checks: why not (shown in the ledger)

    def __post_init__(self):
        if self.part not in PARTS:
            raise ValueError(f"part must be one of {PARTS}, got {self.part!r}")
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        if self.chapter not in CHAPTERS:
            raise ValueError(f"chapter must be one of {CHAPTERS}, got {self.chapter!r}")
