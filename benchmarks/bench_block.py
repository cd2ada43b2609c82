"""Time one training step of a deepnotes Post-LN Transformer stack against a stack of
``torch.nn.TransformerEncoderLayer`` of the same size, on the same data, in one run.

    python benchmarks/bench_block.py [--depth 24] [--d-model 64] [--heads 4] [--batch 16] [--seq 64]

Prints the median seconds per step of each and the ratio deepnotes / torch (below 1: ours faster).
Both stacks: Post-LN, ReLU FFN, no dropout, causal attention, Adam, forward + backward + step.
"""
from __future__ import annotations

import argparse
import statistics
import time

import torch
from torch import nn

import deepnotes as dn


def torch_stack(cfg: dn.ModelConfig) -> nn.Module:
    layers = [nn.TransformerEncoderLayer(cfg.d_model, cfg.n_heads, cfg.d_ff, dropout=0.0,
                                         activation="relu", batch_first=True, norm_first=False)
              for _ in range(cfg.n_layers)]
    return nn.ModuleList(layers)


def time_steps(step, repeats: int, warmup: int = 3) -> float:
    for _ in range(warmup):
        step()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        step()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--depth", type=int, default=24)
    ap.add_argument("--d-model", type=int, default=64)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=20)
    args = ap.parse_args()
    dev = dn.device()
    cfg = dn.ModelConfig(n_layers=args.depth, d_model=args.d_model, n_heads=args.heads,
                         d_ff=4 * args.d_model, norm="post")
    torch.manual_seed(0)
    ours = nn.ModuleList([dn.Block(cfg) for _ in range(cfg.n_layers)]).to(dev)
    theirs = torch_stack(cfg).to(dev)
    x = torch.randn(args.batch, args.seq, args.d_model, device=dev)     # [B, T, d]
    mask = nn.Transformer.generate_square_subsequent_mask(args.seq, device=dev)

    def make_step(stack, forward):
        opt = torch.optim.Adam(stack.parameters(), lr=1e-4)

        def step():
            h = x
            for layer in stack:
                h = forward(layer, h)
            loss = h.pow(2).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        return step

    step_ours = make_step(ours, lambda layer, h: layer(h))
    step_theirs = make_step(theirs, lambda layer, h: layer(h, src_mask=mask, is_causal=True))
    # interleave the two so that drift of the machine affects both alike
    t_ours, t_theirs = [], []
    for _ in range(3):
        t_ours.append(time_steps(step_ours, args.repeats))
        t_theirs.append(time_steps(step_theirs, args.repeats))
    a, b = statistics.median(t_ours), statistics.median(t_theirs)
    n_params = sum(p.numel() for p in ours.parameters())
    n_params_t = sum(p.numel() for p in theirs.parameters())
    print(f"device {dev}, torch {torch.__version__}, threads {torch.get_num_threads()}")
    print(f"stack: {args.depth} Post-LN blocks, d={args.d_model}, heads={args.heads}, d_ff={4 * args.d_model}, "
          f"batch {args.batch} x {args.seq} tokens; params deepnotes {n_params}, torch {n_params_t}")
    print(f"deepnotes Block:               {a * 1e3:8.2f} ms/step")
    print(f"nn.TransformerEncoderLayer:    {b * 1e3:8.2f} ms/step")
    print(f"ratio deepnotes / torch:       {a / b:8.3f}")


if __name__ == "__main__":
    main()
