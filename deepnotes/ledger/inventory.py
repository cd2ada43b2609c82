"""The five source articles and the inventory of each (one module per source, or per half of a long one)."""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

from deepnotes.ledger import (
    inventory_000_a,
    inventory_000_b,
    inventory_001,
    inventory_002,
    inventory_003_a,
    inventory_003_b,
    inventory_004,
)
from deepnotes.ledger.items import Item


@dataclass(frozen=True)
class Source:
    seed: str
    title: str  # as the article prints it
    english: str  # the book's rendering of the title
    author: str
    date: str
    url: str
    modules: tuple[ModuleType, ...]  # the inventory modules (each with its ITEMS), in the article's order


SOURCES = {
    s.seed: s
    for s in (
        Source(
            "000",
            "训练1000层的Transformer究竟有什么困难？",
            "What makes training a 1000-layer Transformer hard?",
            "Su Jianlin",
            "2022-03-09",
            "https://kexue.fm/archives/8978",
            (inventory_000_a, inventory_000_b),
        ),
        Source(
            "001",
            "DeepNet：成功训练 1000 层的 Transformer",
            "DeepNet: training a 1000-layer Transformer (a repost with notes)",
            "bookstall",
            "2022",
            "",
            (inventory_001,),
        ),
        Source(
            "002",
            "浅谈Transformer的初始化、参数化与标准化",
            "On initialization, parametrization and normalization of Transformers",
            "Su Jianlin",
            "2021-08-17",
            "https://kexue.fm/archives/8620",
            (inventory_002,),
        ),
        Source(
            "003",
            "模型优化漫谈：BERT的初始标准差为什么是0.02？",
            "Why is BERT's initial standard deviation 0.02?",
            "Su Jianlin",
            "2021-11-08",
            "https://kexue.fm/archives/8747",
            (inventory_003_a, inventory_003_b),
        ),
        Source(
            "004",
            "为什么需要残差？一个来自DeepNet的视角",
            "Why residuals? A view from DeepNet",
            "Su Jianlin",
            "2022-03-19",
            "https://kexue.fm/archives/8994",
            (inventory_004,),
        ),
    )
}


def items(seed: str) -> tuple[Item, ...]:
    """Every inventory item of source ``seed``, in the article's order."""
    if seed not in SOURCES:
        raise ValueError(f"seed must be one of {tuple(SOURCES)}, got {seed!r}")
    return tuple(item for module in SOURCES[seed].modules for item in module.ITEMS)


def inventory() -> dict[str, tuple[Item, ...]]:
    """Every source's items, by seed."""
    return {seed: items(seed) for seed in SOURCES}
