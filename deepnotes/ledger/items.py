"""One entry of a source's inventory."""
from __future__ import annotations

from dataclasses import dataclass

PARTS = ("main", "annotated", "side note", "comment")
KINDS = ("equation", "table", "figure", "numeric", "scaling", "qualitative")


@dataclass(frozen=True)
class Item:
    """A claim of a source article, in the book's words.

    ``ref`` names it uniquely within its source: "eq. (12)" (the n-th numbered equation of its
    ``part``: main-text equations are numbered in order of appearance, as the article's page numbers
    them; the annotated section's carry their own \\tag{n}), "table §9.1", "figure 1", or
    "claim: <a short id>" for an unnumbered claim in the prose."""
    ref: str
    part: str             # one of PARTS
    section: str          # the section heading as the source prints it
    kind: str             # one of KINDS
    claim: str            # the claim in English, one line, in the book's words (never a translated paragraph)

    def __post_init__(self):
        if self.part not in PARTS:
            raise ValueError(f"part must be one of {PARTS}, got {self.part!r}")
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
