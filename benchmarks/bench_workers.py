"""Threads against processes for deep narrow stacks on a CPU: seconds per Adam step of a DeepNorm
stack (engine, one member) run three ways, in one run:

* one process, the default intra-op threads (2 on a 2-core machine);
* one process, one thread;
* two one-thread worker processes side by side (:func:`deepnotes.core.workers.run_jobs`), each
  timing its own steps: what two ensembles of a chapter get.

    python benchmarks/bench_workers.py [--depth 1000] [--members 1] [--batch 4] [--seq 8] [--steps 6] [--smoke]

The last line is the summary: ``workers N=…: two_threads_s=A one_thread_s=B side_by_side_s=C,D
throughput_gain=G`` (G: two ensembles' work per second side by side over one process with the
default threads, i.e. 2·A/max(C, D)).
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from deepnotes.core.config import TrainConfig, get_budget
from deepnotes.core.engine import Stack
from deepnotes.core.train import EnsembleOptimizer
from deepnotes.core.workers import run_jobs


def step_seconds(depth: int, members: int, batch: int, seq: int, steps: int) -> float:
    """Median seconds per forward + backward + Adam step after two warm-up steps."""
    cfg = get_budget("cpu").model_config(depth, norm="deepnorm")
    stack = Stack([cfg] * members, seeds=list(range(members)))
    opt = EnsembleOptimizer(
        stack,
        [
            TrainConfig(optimizer="adam", lr=5e-4, steps=steps, batch_size=batch, seq_len=seq, seed=k)
            for k in range(members)
        ],
    )
    tokens = torch.randint(0, cfg.vocab_size, (members, batch, seq + 1))
    times = []
    for s in range(steps + 2):
        t0 = time.perf_counter()
        opt.zero_grad()
        stack.next_token_losses(tokens).sum().backward()
        opt.step(s)
        times.append(time.perf_counter() - t0)
    return statistics.median(times[2:])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--members", type=int, default=1)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=8)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--smoke", action="store_true", help="the tests' check that the script runs: N=2, one step")
    a = ap.parse_args()
    if a.smoke:
        a.depth, a.steps = 2, 1
    job = (a.depth, a.members, a.batch, a.seq, a.steps)
    threads = torch.get_num_threads()
    two = step_seconds(*job)
    torch.set_num_threads(1)
    one = step_seconds(*job)
    torch.set_num_threads(threads)
    side = run_jobs(step_seconds, [job, job], workers=2)
    print(
        f"one process, {threads} threads: {two:.3f} s/step; one thread: {one:.3f} s/step; "
        f"two 1-thread processes side by side: {side[0]:.3f}, {side[1]:.3f} s/step"
    )
    print(
        f"workers N={a.depth}: two_threads_s={two:.3f} one_thread_s={one:.3f} "
        f"side_by_side_s={side[0]:.3f},{side[1]:.3f} throughput_gain={2 * two / max(side):.2f}"
    )


if __name__ == "__main__":
    from deepnotes import cli

    cli.run(main)
