"""The compiled kernels against PyTorch's own path, shape by shape: one training step's forward and
backward through an engine Stack (no optimizer), both paths taking turns in one process, for the
shapes the chapters train and a grid around them. This is the measurement behind the rule of
:func:`deepnotes.core.blocks.compiled_wins` (where the compiled path is chosen); run it for each target.

    python benchmarks/bench_kernel_shapes.py [--target NAME] [--repeats 5] [--shapes chapters|grid|all] [--smoke]

One line per shape: ``shape K=… M=… d=… f=… N=… act=… causal=… compiled_ms=C pytorch_ms=P ratio=P/C
rule=compiled|pytorch`` (ratio > 1: the compiled path is faster; ``rule``: the path the engine takes
there); the last line counts the shapes where the rule's choice was the slower path by more than 10 %:

    kernel shapes target=NAME: shapes=S rule_slower=L worst_rule_ratio=W
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import torch

from deepnotes.core import blocks, kernels
from deepnotes.core.config import ModelConfig
from deepnotes.core.engine import Stack

# (members K, batch B, tokens per sequence T, width d, d_ff, depth N, activation, causal): what the
# chapters' compiled calls looked like in a cpu build (a log of every BlocksFunction call, 2026-11-27)
CHAPTER_SHAPES = (
    (21, 4, 8, 32, 64, 1000, "relu", True),  # the 1000-layer chapter's headline ensemble (3 seeds × 7)
    (4, 32, 32, 64, 256, 6, "gelu", False),  # BERT's MLM runs
    (2, 32, 32, 64, 256, 6, "gelu", False),
    (1, 63, 8, 256, 1024, 2, "relu", True),  # initialization's probe
    (1, 7, 2, 16, 32, 48, "relu", True),
    (12, 16, 16, 32, 64, 12, "relu", True),  # warmup comparisons, post-vs-pre
    (6, 16, 16, 32, 64, 48, "relu", True),
)


def grid_shapes() -> list[tuple]:
    """Tokens per member from 8 to 1024, widths 16 to 128 (d_ff = 2d, the chapters' ratio), 1, 4 or 16
    members, 24 blocks (deep enough that a call's fixed costs do not decide), ReLU (causal) and GELU."""
    out = []
    for tokens in (8, 32, 128, 512, 1024):
        for d in (16, 32, 64, 128):
            for k in (1, 4, 16):
                for act in ("relu", "gelu"):
                    out.append((k, max(tokens // 16, 1), min(tokens, 16), d, 2 * d, 24, act, act == "relu"))
    return out


def step_ms(stack: Stack, x: torch.Tensor, compiled: bool) -> float:
    os.environ[blocks.ENV_SWITCH] = "all" if compiled else "0"
    t0 = time.perf_counter()
    stack.zero_grad(set_to_none=True)
    stack.run_blocks(x).square().mean().backward()
    return (time.perf_counter() - t0) * 1e3


def measure(shape: tuple, repeats: int) -> tuple[float, float]:
    k, b, t, d, f, n, act, causal = shape
    cfg = ModelConfig(
        n_layers=n, d_model=d, n_heads=2, d_ff=f, vocab_size=16, activation=act, causal=causal, max_len=max(t, 8)
    )
    stack = Stack([cfg] * k, seeds=list(range(k)))
    x = torch.randn(k, b, t, d, requires_grad=True)  # [K, B, T, d]
    for compiled in (True, False):
        step_ms(stack, x, compiled)  # warm-up
    times = {True: [], False: []}
    for _ in range(repeats):
        for compiled in (True, False):
            times[compiled].append(step_ms(stack, x, compiled))
    return statistics.median(times[True]), statistics.median(times[False])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", choices=tuple(kernels.TARGETS), help="the kernels' -march (default: native)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--shapes", choices=("chapters", "grid", "all"), default="all")
    ap.add_argument("--smoke", action="store_true", help="the tests' check that the script runs: two tiny shapes")
    args = ap.parse_args()
    if args.target:
        os.environ[kernels.TARGET_SWITCH] = args.target
    switch = os.environ.get(blocks.ENV_SWITCH)
    shapes = {"chapters": list(CHAPTER_SHAPES), "grid": grid_shapes(), "all": [*CHAPTER_SHAPES, *grid_shapes()]}
    chosen = shapes[args.shapes]
    if args.smoke:
        chosen, args.repeats = [(2, 2, 4, 16, 32, 2, "relu", True), (1, 2, 4, 16, 32, 2, "gelu", False)], 1
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, kernels {kernels.described()}")
    slower, worst = 0, float("inf")
    try:
        for shape in chosen:
            k, b, t, d, f, n, act, causal = shape
            compiled_ms, pytorch_ms = measure(shape, args.repeats)
            rule = "compiled" if blocks.compiled_wins(b * t, d, f, True) else "pytorch"
            ratio = pytorch_ms / compiled_ms
            rule_ratio = ratio if rule == "compiled" else 1 / ratio  # > 1: the rule took the faster path
            slower += rule_ratio < 1 / 1.1
            worst = min(worst, rule_ratio)
            print(
                f"shape K={k} M={b * t} d={d} f={f} N={n} act={act} causal={int(causal)} compiled_ms={compiled_ms:.2f} "
                f"pytorch_ms={pytorch_ms:.2f} ratio={ratio:.2f} rule={rule}",
                flush=True,
            )
    finally:
        if switch is None:
            os.environ.pop(blocks.ENV_SWITCH, None)
        else:
            os.environ[blocks.ENV_SWITCH] = switch
    print(
        f"kernel shapes target={kernels.target()}: shapes={len(chosen)} rule_slower={slower} "
        f"worst_rule_ratio={worst:.2f}"
    )


if __name__ == "__main__":
    from deepnotes import cli

    cli.run(main)
