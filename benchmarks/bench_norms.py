"""LayerNorm vs RMSNorm (PyTorch's modules, no affine), forward and forward+backward, same input.

    python benchmarks/bench_norms.py [--tokens 8192] [--d 512] [--smoke]

Prints the median time of each and the ratio RMSNorm / LayerNorm.
"""

from __future__ import annotations

import argparse

import torch
from torch.utils import benchmark as tb


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=8192)
    ap.add_argument("--d", type=int, default=512)
    ap.add_argument("--smoke", action="store_true", help="the tests' check that the script runs: tiny, short")
    args = ap.parse_args()
    run_time = 1.0
    if args.smoke:
        args.tokens, args.d, run_time = 16, 8, 0.01
    x = torch.randn(args.tokens, args.d, requires_grad=True)  # [tokens, d]
    mods = {
        "LayerNorm": torch.nn.LayerNorm(args.d, elementwise_affine=False),
        "RMSNorm": torch.nn.RMSNorm(args.d, elementwise_affine=False, eps=1e-5),
    }
    times = {}
    for name, mod in mods.items():
        fwd = tb.Timer("m(x)", globals={"m": mod, "x": x}).blocked_autorange(min_run_time=run_time).median
        both = tb.Timer("m(x).sum().backward()", globals={"m": mod, "x": x}).blocked_autorange(min_run_time=run_time)
        both = both.median
        times[name] = (fwd, both)
        print(f"{name:9s} forward {fwd * 1e3:7.3f} ms   forward+backward {both * 1e3:7.3f} ms")
    print(
        f"ratio RMSNorm/LayerNorm: forward {times['RMSNorm'][0] / times['LayerNorm'][0]:.3f}, "
        f"forward+backward {times['RMSNorm'][1] / times['LayerNorm'][1]:.3f}  "
        f"({args.tokens} tokens × d={args.d}, threads {torch.get_num_threads()}, torch {torch.__version__})"
    )


if __name__ == "__main__":
    from deepnotes import cli

    cli.run(main)
