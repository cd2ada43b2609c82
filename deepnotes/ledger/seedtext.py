"""The numbered items of a source article's text: what an inventory must at least list.

Read from the seed files (``../shared/seeds/<seed>_*.txt`` beside the checkout), when they are there:
- main-text equations: every ``\\begin{equation}`` before the appended annotated section, numbered
  1, 2, … in order of appearance (as the article's page numbers them);
- annotated equations: every ``\\tag{n}`` of the appended "公式推导与注释" section, by its tag;
- tables: every Markdown table, named by the numbered heading above it in the annotated section
  ("table §9.1") and in order of appearance in the main text ("table 1");
- figures: every image uploaded with the article (theme and payment images left out), in order;
- side notes (seed 001's block quotes: the reposter's notes): every run of ``>`` lines, in order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from deepnotes.core.validate import NonNegativeCount

SEEDS = ("000", "001", "002", "003", "004")
SIDE_NOTES = ("001",)  # the repost, whose block quotes are the reposter's notes (elsewhere: the author's own asides)
SEED_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "seeds"
ANNOTATED_HEADING = "公式推导与注释"
ARTICLE_END = ("### 你也许还对下面的内容感兴趣", "_**转载到请包括本文地址")  # kexue.fm page furniture
EQUATION = re.compile(r"\\\\?begin\{equation\}")
TAG = re.compile(r"\\tag\{(\d+)\}")
NUMBERED_HEADING = re.compile(r"^#{3,4}\s+(\d+(?:\.\d+)?)")
FIGURE = re.compile(r"!\[[^\]]*\]\(([^)]*(?:/usr/uploads/|/images/posts/)[^)]*)\)")


@dataclass(frozen=True)
class Numbered:
    """One numbered item of a source's text."""

    ref: str  # "eq. (3)", "table §9.1", "table 1", "figure 1", "side note 4"
    part: str  # "main", "annotated" or "side note"
    kind: str  # "equation", "table", "figure" or "side note"
    line: NonNegativeCount  # 1-based line of the seed file where it starts


def seed_path(seed: str, folder: Path = SEED_DIR) -> Path:
    """The seed file of ``seed`` ("000" … "004") in ``folder``."""
    if seed not in SEEDS:
        raise ValueError(f"seed must be one of {SEEDS}, got {seed!r}")
    found = sorted(folder.glob(f"{seed}_*.txt"))
    if not found:
        raise FileNotFoundError(f"no seed file {seed}_*.txt in {folder}")
    return found[0]


def numbered_items(text: str, side_notes: bool = False) -> list[Numbered]:
    """The equations, tables, figures and (with ``side_notes``: a repost's added block quotes) side
    notes of an article's text, in order."""
    out: list[Numbered] = []
    part, heading, main_eq, main_table, figure, note = "main", "", 0, 0, 0, 0
    in_table = in_note = furniture = False
    for i, line in enumerate(text.splitlines(), start=1):
        if line.startswith(ARTICLE_END):
            furniture = True  # the page's footer: skipped up to an appended annotated section
        if line.startswith("#") and ANNOTATED_HEADING in line:
            part, furniture = "annotated", False
        if furniture:
            continue
        numbered = NUMBERED_HEADING.match(line)
        if numbered:
            heading = numbered[1]
        if part == "main":
            for _ in EQUATION.finditer(line):
                main_eq += 1
                out.append(Numbered(f"eq. ({main_eq})", "main", "equation", i))
        else:
            out += [Numbered(f"eq. ({n})", "annotated", "equation", i) for n in TAG.findall(line)]
        for _ in FIGURE.finditer(line):
            figure += 1
            out.append(Numbered(f"figure {figure}", part, "figure", i))
        table_row = line.lstrip().startswith("|") and line.rstrip().endswith("|")
        if table_row and not in_table:
            if part == "main":
                main_table += 1
                out.append(Numbered(f"table {main_table}", "main", "table", i))
            else:
                out.append(Numbered(f"table §{heading}", "annotated", "table", i))
        in_table = table_row
        quote = line.startswith(">")
        if side_notes and quote and not in_note and part == "main" and not line.lstrip("> ").startswith("《"):
            note += 1
            out.append(Numbered(f"side note {note}", "side note", "side note", i))
        in_note = quote
    return out


def seed_items(seed: str, folder: Path = SEED_DIR) -> list[Numbered]:
    """:func:`numbered_items` of the seed file of ``seed``."""
    return numbered_items(seed_path(seed, folder).read_text(encoding="utf-8"), side_notes=seed in SIDE_NOTES)
