"""Which inventory items a verdict's ``source`` cites.

A source reads like "seed 000 annotated eqs. (53), (73)", "seed 003 annotated eqs. (31)-(33)",
"§足够的小 eq. (10); measured" or "seed 000 annotated §12.1 table": clauses split by ";", each naming
a seed (else the previous clause's, else the chapter's own), the annotated section or the main text,
equations (lists and ranges) and tables."""
from __future__ import annotations

import re
from dataclasses import dataclass

SEED = re.compile(r"\bseeds? (\d{3})")
EQUATIONS = re.compile(r"\beqs?\.\s*(\(\d+\)(?:\s*(?:[-–,]|and)\s*\(\d+\))*)")
NUMBER = re.compile(r"\((\d+)\)")
RANGE = re.compile(r"\((\d+)\)\s*[-–]\s*\((\d+)\)")
TABLE = re.compile(r"§(\d+(?:\.\d+)*) table")


@dataclass(frozen=True)
class Citation:
    """One item a verdict cites: source article, part ("main" or "annotated") and the item's ref."""
    seed: str
    part: str
    ref: str


def _numbers(listed: str) -> list[int]:
    """(a), (b) → [a, b]; (a)-(c) → [a, b, c]."""
    out = []
    for piece in re.split(r"\s*(?:,|and)\s*", listed):
        span = RANGE.fullmatch(piece.strip())
        if span:
            out += list(range(int(span[1]), int(span[2]) + 1))
        else:
            out += [int(n) for n in NUMBER.findall(piece)]
    return out


def citations(source: str, default_seed: str | None = None) -> list[Citation]:
    """The numbered equations and tables that ``source`` cites, in order, without repeats."""
    out: list[Citation] = []
    seed = default_seed
    for clause in source.split(";"):
        named = SEED.findall(clause)
        seed = named[-1] if named else seed
        if seed is None:
            continue
        part = "annotated" if "annotated" in clause else "main"
        for listed in EQUATIONS.findall(clause):
            out += [Citation(seed, part, f"eq. ({n})") for n in _numbers(listed)]
        out += [Citation(seed, part, f"table §{t}") for t in TABLE.findall(clause)]
    return list(dict.fromkeys(out))
