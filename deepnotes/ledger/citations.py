"""Which inventory items a verdict's ``source`` cites.

A source reads like "seed 000 annotated eqs. (53), (73)", "seed 003 annotated eqs. (31)-(33)",
"seed 004 §足够的小 eq. (10); measured", "seed 000 annotated §12.1 table", "seed 001 side note 4" or
"seed 003 §Warmup是怎样起作用的 claims 7, 8": clauses split by ";", each naming its seed ("seed 000")
and its part ("annotated", "side note", "comment"; else the main text), then numbered items:
equations, tables, figures, side notes, comments and the inventory's numbered prose claims ("claim 7"
in the main text, "claim §9.1.2" in the annotated section). A clause without a seed cites nothing of
the sources (a paper, a measurement).

Which of the cited items a verdict *tests* (its subjects) is not read from here: the chapter names them where
it builds the verdict (:mod:`deepnotes.show.cite`, issue 61; the order of the citations says nothing). The
ledger lists a verdict's status beside its subjects only, and names it beside the other cited items (context)
as a mention without a status."""

from __future__ import annotations

import re
from dataclasses import dataclass

# A verdict that cites none of the sources' items must cite one of the papers behind them (or the library
# API it tests, the contrast a source draws).
PAPERS = (
    "DeepNet",
    "Wang et al. 2022",
    "Xiong et al.",
    "Liu et al.",
    "Admin",
    "ReZero",
    "Bachlechner",
    "SkipInit",
    "Fixup",
    "RMSNorm",
    "SELU",
    "BERT paper",
    "Devlin et al.",
    "Dong et al.",
    "Cho & Saul",
    "torch.nn.init",
    "Vaswani et al.",  # issue 65: the papers of the depth rules in use today
    "Radford et al.",
    "Tensor Programs VI",
)

SEED = re.compile(r"\bseeds? (\d{3})\b")
NUM = r"(?:\(\d+\)|§?\d+(?:\.\d+)*)"
LIST = rf"({NUM}(?:\s*(?:[-–,]|and)\s*{NUM})*)"
EQ_LIST = r"(\(\d+\)(?:\s*(?:[-–,]|and)\s*\(\d+\))*)"  # equations are always parenthesized: "(49), §8.2" stops at (49)
REFS = {  # item kind → (pattern of a cited list, how one number is written in the item's ref)
    "eq.": (re.compile(rf"\beqs?\.\s*{EQ_LIST}"), "eq. ({})"),
    "table": (re.compile(rf"\btables?\s+{LIST}"), "table {}"),
    "table§": (re.compile(r"§(\d+(?:\.\d+)*) table"), "table §{}"),
    "figure": (re.compile(rf"\b(?:figures?|figs?\.)\s*{LIST}", re.I), "figure {}"),
    "side note": (re.compile(rf"\bside notes?\s+{LIST}"), "side note {}"),
    "comment": (re.compile(rf"\bcomments?\s+{LIST}"), "comment {}"),
    "claim": (re.compile(rf"\bclaims?\s+{LIST}"), "claim {}"),
}
PARTS = (("annotated", "annotated"), ("side note", "side note"), ("comment", "comment"))


@dataclass(frozen=True)
class Citation:
    """One item a verdict cites: source article, part and the item's ref."""

    seed: str
    part: str
    ref: str


def _numbers(listed: str) -> list[str]:
    """ "(a), (b)" → [a, b]; "(a)-(c)" → [a, b, c]; "§9.1, §9.2" → [§9.1, §9.2]; "3 and 4" → [3, 4]."""
    out: list[str] = []
    for piece in re.split(r"\s*(?:,|\band\b)\s*", listed.strip()):
        ends = re.fullmatch(r"\(?(\d+)\)?\s*[-–]\s*\(?(\d+)\)?", piece)
        if ends:
            out += [str(n) for n in range(int(ends[1]), int(ends[2]) + 1)]
        elif piece:
            out.append(piece.strip("()"))
    return out


def _part(clause: str) -> str:
    for word, part in PARTS:
        if word in clause:
            return part
    return "main"


def citations(source: str) -> list[Citation]:
    """The numbered items of the source articles that ``source`` cites, in order, without repeats."""
    out: list[Citation] = []
    for clause in source.split(";"):
        seeds = SEED.findall(clause)
        if not seeds:
            continue
        seed, part = seeds[-1], _part(clause)
        for pattern, ref in REFS.values():
            for listed in pattern.findall(clause):
                out += [Citation(seed, part, ref.format(n)) for n in _numbers(listed)]
    return list(dict.fromkeys(out))
