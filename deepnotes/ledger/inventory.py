"""The five source articles and the inventory of each, read from data: ``sources/<seed>.toml`` holds one article's
title, author, date and address (``[source]``) and its claims in order (``[[item]]``, one per claim, the fields of
:class:`~deepnotes.ledger.items.Item`), so that a reviewer reads the ledger's inventory without reading Python.

A file with a key no Item has, a missing field or a ref given twice within a part is refused when it is read,
naming the file and the item (no key is dropped silently)."""

from __future__ import annotations

import dataclasses
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from deepnotes.ledger.items import Item

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser, as a package
    import tomli as tomllib

SOURCE_FILES = Path(__file__).with_name("sources")
SEEDS = ("000", "001", "002", "003", "004")
SOURCE_FIELDS = ("title", "english", "author", "date", "url")
ITEM_FIELDS = tuple(f.name for f in dataclasses.fields(Item))
REQUIRED_ITEM_FIELDS = tuple(f.name for f in dataclasses.fields(Item) if f.default is dataclasses.MISSING)


@dataclass(frozen=True)
class Source:
    seed: str
    title: str  # as the article prints it
    english: str  # the book's rendering of the title
    author: str
    date: str
    url: str  # "" where the article has no address of its own (a repost)
    items: tuple[Item, ...]  # its claims, in the article's order


def _fields(table: dict, allowed: tuple[str, ...], required: tuple[str, ...], where: str) -> dict:
    unknown = sorted(set(table) - set(allowed))
    missing = [f for f in required if f not in table]
    if unknown or missing:
        raise ValueError(f"{where}: unknown keys {unknown}, missing keys {missing}; the keys are {list(allowed)}")
    return table


def read_source(path: str | os.PathLike, seed: str) -> Source:
    """One article's ``[source]`` table and its ``[[item]]`` list, checked (see the module's docstring)."""
    with open(path, "rb") as handle:
        data = tomllib.load(handle)
    _fields(data, ("source", "item"), ("source", "item"), str(path))
    head = _fields(data["source"], SOURCE_FIELDS, SOURCE_FIELDS, f"{path} [source]")
    items, seen = [], set()
    for k, table in enumerate(data["item"], 1):
        where = f"{path} item {k} ({table.get('ref', 'no ref')!r})"
        try:
            item = Item(**_fields(table, ITEM_FIELDS, REQUIRED_ITEM_FIELDS, where))
        except ValueError as err:
            raise ValueError(f"{where}: {err}") from None
        if (item.part, item.ref) in seen:
            raise ValueError(f"{where}: {item.ref!r} is listed twice in part {item.part!r}")
        seen.add((item.part, item.ref))
        items.append(item)
    return Source(seed, *(head[f] for f in SOURCE_FIELDS), tuple(items))


SOURCES: dict[str, Source] = {seed: read_source(SOURCE_FILES / f"{seed}.toml", seed) for seed in SEEDS}


def items(seed: str) -> tuple[Item, ...]:
    """Every inventory item of source ``seed``, in the article's order."""
    if seed not in SOURCES:
        raise ValueError(f"seed must be one of {SEEDS}, got {seed!r}")
    return SOURCES[seed].items


def inventory() -> dict[str, tuple[Item, ...]]:
    """Every source's items, by seed."""
    return {seed: items(seed) for seed in SEEDS}
