"""Time the training loop itself (:func:`deepnotes.core.train.train_ensemble`: batches, losses, divergence, backward,
optimizer, the read-backs) on the 1000-layer chapter's headline ensemble, the members of its comparison at the
``cpu`` budget, each trained as train_many groups them.

    python benchmarks/bench_train_step.py [--depth 200] [--steps 20] [--repeats 3] [--device cpu|cuda] [--smoke]

Prints, per repeat, the wall time of ``--steps`` steps of all the ensembles, and last one line:

    train_step N=…: members=K steps=S member_step_ms=P read_every=R device=D

(``member_step_ms``: the median repeat's time per step, divided by the members.) To compare two versions of the
loop, run this file with each version first on ``PYTHONPATH``, taking turns, alone on the machine (issue 62:
before/after in ``benchmarks/RESULTS.md``). ``--smoke``: the tests' check that the script runs (smoke, 2 steps).
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import replace


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--depth", type=int, default=200)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--device", default=None, help="cpu or cuda (default: CUDA where present)")
    ap.add_argument("--read-every", type=int, default=None, help="steps between read-backs (default: the loop's)")
    ap.add_argument("--smoke", action="store_true", help="smoke sizes, 2 steps, one repeat")
    args = ap.parse_args(argv)

    import torch

    from deepnotes.chapters.thousand_layers.budget import sizes
    from deepnotes.chapters.thousand_layers.experiments import HEADLINE, variant_config, variant_train_config
    from deepnotes.core.config import get_budget
    from deepnotes.core.data import MarkovLanguage
    from deepnotes.core.engine import Stack
    from deepnotes.core.ensembles import ensemble_groups
    from deepnotes.core.train import train_ensemble

    budget = get_budget("smoke" if args.smoke else "cpu")
    steps, repeats = (2, 1) if args.smoke else (args.steps, args.repeats)
    n = 3 if args.smoke else args.depth
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    try:  # the loop's read-back interval on this device (issue 62), or as asked
        from deepnotes.core.train import READ_EVERY, READ_EVERY_CPU

        read_every = args.read_every or (READ_EVERY if device.type == "cuda" else READ_EVERY_CPU)
        options = {"read_every": read_every}
    except ImportError:  # the loop before issue 62 read the losses every step
        read_every, options = 1, {}
    runs = [(lab, s) for lab in HEADLINE for s in range(sizes(budget).seeds)]
    model_cfgs = [variant_config(lab, n, budget) for lab, _ in runs]
    train_cfgs = []
    for lab, s in runs:  # the chapter's configs, cut to the timed steps (a warmup longer than that cut with them)
        cfg = variant_train_config(lab, n, budget, seed=s)
        train_cfgs.append(replace(cfg, steps=steps, warmup_steps=min(cfg.warmup_steps, steps), held_out=0))
    task = MarkovLanguage(budget.vocab_size, seed=0)
    groups = ensemble_groups(model_cfgs, train_cfgs)
    times = []
    for _ in range(repeats):
        stacks = [
            Stack([model_cfgs[i] for i in m], seeds=[train_cfgs[i].seed for i in m], device=device) for m in groups
        ]
        start = time.perf_counter()
        for stack, members in zip(stacks, groups, strict=True):
            train_ensemble(stack, task, [train_cfgs[i] for i in members], **options)
        if device.type == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
        print(f"{steps} steps of {len(groups)} ensemble(s): {times[-1]:.2f} s")
    per = statistics.median(times) / steps / len(runs)
    print(
        f"train_step N={n}: members={len(runs)} steps={steps} member_step_ms={per * 1e3:.2f} "
        f"read_every={read_every} device={device.type}"
    )


if __name__ == "__main__":
    from deepnotes import cli

    cli.run(main)
