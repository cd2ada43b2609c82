"""What the checks at the door cost a training step: time ``deepnotes.train``'s loop (tokens drawn, forward,
backward, Adam step, loss recorded) at a few shapes, from the small ones where Python's per-call work is most
of a step to a deep one where the blocks are. Run it with two trees of the package on ``PYTHONPATH`` (with
and without the checks) on the same machine, one after the other, and compare the medians.

    PYTHONPATH=<tree> python benchmarks/bench_door_checks.py [--steps 30] [--repeats 3] [--smoke]

Each line: ``shape=<name> device=<dev> ms_per_step=<median over repeats> (runs: …)``; the last line says
whether the tree has the checks (``deepnotes.core.config.check_fits`` exists).
"""

from __future__ import annotations

import argparse
import statistics

import deepnotes as dn
from deepnotes.core import config

SHAPES = {
    "tiny N=2 d=16": dict(n_layers=2, d_model=16, n_heads=2, d_ff=32, vocab_size=8),
    "book N=6 d=32": dict(n_layers=6, d_model=32, n_heads=2, d_ff=64, vocab_size=16),
    "deep N=200 d=32": dict(n_layers=200, d_model=32, n_heads=2, d_ff=64, vocab_size=16),
}


def ms_per_step(shape: dict, steps: int, device) -> float:
    """Wall time of one training run of ``steps`` steps over ``steps`` (History.seconds: the loop only)."""
    hist = dn.train(dn.ModelConfig(**shape), dn.TrainConfig(steps=steps, batch_size=4, seq_len=8), device=device)
    return 1000 * hist.seconds / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="the tests' check that the script runs: 2 steps, once")
    args = parser.parse_args()
    if args.smoke:
        args.steps, args.repeats = 2, 1
    if args.steps < 1 or args.repeats < 1:
        parser.error(f"--steps and --repeats must be >= 1, got {args.steps} and {args.repeats}")
    device = dn.device()
    for name, shape in SHAPES.items():
        ms_per_step(shape, 3, device)  # warm up: kernels built, caches filled
        runs = [ms_per_step(shape, args.steps, device) for _ in range(args.repeats)]
        listed = ", ".join(f"{r:.2f}" for r in runs)
        print(f"shape={name} device={device} ms_per_step={statistics.median(runs):.2f} (runs: {listed})", flush=True)
    print(f"checks at the door: {hasattr(config, 'check_fits')} (package at {dn.__file__})")


if __name__ == "__main__":
    from deepnotes import cli

    cli.run(main)
