"""The sizes of the chapter "bert_init" at every budget: one :class:`BertBudget` per row of
:data:`deepnotes.core.config.BUDGETS`, read by :func:`sizes`."""

from __future__ import annotations

from dataclasses import dataclass, replace

from deepnotes.core.config import GPU_MINUTES_PER_CHAPTER, Budget, chapter_sizes
from deepnotes.core.validate import Count, Depth, NonNegativeCount, Positive, Repeats


@dataclass(frozen=True)
class BertBudget:
    """Chapter "Why is BERT's initial standard deviation 0.02?". Stds are quoted at BERT's width 768
    and mapped to width d as s·√(768/d) (same d·s², hence the same variances at init)."""

    stds: tuple[float, ...]  # init stds swept at initialization (BERT-base equivalent)
    probe_width: Count  # width of the encoder swept at init (768 = BERT-base)
    table_width: Count  # width of the 12-layer encoder set beside the annotated tables
    probe_depths: tuple[int, ...]  # its depths (the last is the experiment's; 12 = BERT-base)
    probe_tokens: tuple[int, int]  # (sequences, tokens per sequence) of the probe batch
    train_stds: tuple[float, ...]  # stds of the MLM training runs (the annotated §9.3 table's)
    gain_stds: tuple[float, ...]  # stds also trained without the extra Dense+LN head (γ story)
    train_width: Count  # the trained encoder: width, depth, steps, warmup, batch
    train_depth: Depth
    train_steps: Repeats
    train_warmup: NonNegativeCount
    train_batch: tuple[int, int]  # (sequences, tokens per sequence)
    vocab: Count  # tokens of the synthetic language
    lr: Positive = 1e-3  # Adam
    gain_points: Repeats = 50  # LayerNorm gains recorded this many times per run
    table_depth: Depth = 12  # the annotated tables' depth (BERT-base)
    loss_window: Count = 20  # steps-to, final training loss, γ: means over this many steps (fraction learned: held out)
    # live panels: every span is (min, start, max)
    live_std: tuple[float, float, float] = (1e-3, 0.02, 10**-0.5)  # BERT-equivalent init std (log slider)
    live_depth: tuple[int, int, int] = (1, 12, 48)
    table_seeds: Repeats = 5  # seeds (init and probe batch) of the §9.2 gradient ratios (median)
    probe_seeds: Repeats = 3  # seeds (init and probe batch) of Experiment 1's verdicts: the door's fewest (MIN_SEEDS)
    # seeds of every MLM run: the training and γ verdicts judge over them and need MIN_SEEDS (3); the cpu
    # row trains one (three would take a 2-core laptop past the page's limit), so there they say so
    train_seeds: Repeats = 1


SMOKE = BertBudget(
    stds=(0.01, 0.02, 0.05),
    probe_width=64,
    table_width=64,
    probe_depths=(2, 3),
    probe_tokens=(4, 16),
    train_stds=(0.02, 0.05),
    gain_stds=(0.02,),
    train_width=32,
    train_depth=2,
    train_steps=6,
    train_warmup=2,
    train_batch=(4, 16),
    vocab=8,
    table_seeds=3,
)
CPU = BertBudget(
    stds=(0.005, 0.01, 0.02, 0.0361, 0.05, 0.1),
    probe_width=128,
    table_width=768,
    probe_depths=(3, 6, 12, 24),
    probe_tokens=(4, 64),
    train_stds=(0.01, 0.02, 0.0361, 0.05),
    gain_stds=(0.01, 0.02),
    train_width=64,
    train_depth=6,
    train_steps=500,
    train_warmup=50,
    train_batch=(24, 32),  # 32 sequences took a 2-core AVX2 laptop past the 150 s limit (issue 43)
    vocab=16,
    table_seeds=3,
)
FULL = BertBudget(
    stds=(0.005, 0.01, 0.02, 0.0361, 0.05, 0.1),
    probe_width=768,
    table_width=768,
    probe_depths=(3, 6, 12, 24, 48),
    probe_tokens=(8, 128),
    train_stds=(0.01, 0.02, 0.0361, 0.05),
    gain_stds=(0.01, 0.02, 0.05),
    train_width=256,
    train_depth=12,
    train_steps=3000,
    train_warmup=300,
    train_batch=(64, 64),
    vocab=64,
    train_seeds=3,
)
# three seeds of every MLM run (issue 44) within a T4's ten minutes by the estimate: half the batch, 600 steps
GPU = replace(FULL, train_steps=600, train_warmup=75, train_batch=(32, 64))

ROWS = {"smoke": SMOKE, "cpu": CPU, "gpu": GPU, "full": FULL}
# the T4 minutes this chapter's gpu row may take by the estimate (tests/core/test_cost.py holds it to them)
GPU_MINUTES = GPU_MINUTES_PER_CHAPTER


def sizes(budget: Budget) -> BertBudget:
    """This chapter's sizes at ``budget`` (resolved once, by the page's setup cell or an entry point): its row
    of :data:`ROWS`, or the sizes the budget carries in its place (``Budget.with_sizes``)."""
    return chapter_sizes(budget, ROWS, BertBudget)
