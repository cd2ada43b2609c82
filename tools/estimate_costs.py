"""Print every chapter's estimated cost at every budget: counted work, and seconds on this machine
(calibrated here) and on Colab's T4 (assumed rates, deepnotes.cost.estimate.T4).

    python tools/estimate_costs.py                  # all budgets
    python tools/estimate_costs.py --budget gpu     # one
"""

from __future__ import annotations

import argparse

from deepnotes.chapters import CHAPTERS
from deepnotes.chapters.catalog import chapter_plan
from deepnotes.core.config import BUDGETS, get_budget
from deepnotes.cost import estimate
from deepnotes.cost import model as cost


def _short(work) -> str:
    if isinstance(work, cost.TrainRuns):
        m, t = work.model, work.train
        return (
            f"train {m.norm} N={m.n_layers} d={m.d_model} ×{work.members}, {t.optimizer} {t.steps} steps "
            f"of {t.batch_size}×{t.seq_len}"
        )
    if isinstance(work, cost.StackPasses):
        return (
            f"{work.passes} passes {work.model.norm} N={work.model.n_layers} d={work.model.d_model} "
            f"×{work.members} on {work.batch}×{work.seq_len}"
        )
    if isinstance(work, cost.ProbeCalls):
        return f"{work.calls} × {work.probe.__name__.lstrip('_')}{work.args} depth {work.depth} on {work.batch}"
    return f"{work.passes} MLP passes {work.depth}×{work.width} on {work.batch} ×{work.members}"


def _count(text: str) -> int:
    """An argument that must be an integer >= 0 (argparse prints the message with the usage line)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {text!r}")
    return value


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--budget", choices=sorted(BUDGETS), action="append", help="a budget to estimate (repeatable; default: all)"
    )
    parser.add_argument(
        "--items", type=_count, default=0, metavar="K", help="also list each chapter's K costliest plan items on the T4"
    )
    args = parser.parse_args(argv)
    here = estimate.calibrate()
    print(
        f"this machine: {here.device}: {here.flops_per_second / 1e9:.3g} GFLOP/s, "
        f"{here.seconds_per_launch * 1e6:.3g} µs per launch ({here.how})"
    )
    print(
        f"{estimate.T4.device}: {estimate.T4.flops_per_second / 1e9:.3g} GFLOP/s, "
        f"{estimate.T4.seconds_per_launch * 1e6:.3g} µs per launch ({estimate.T4.how})"
    )
    print("| budget | chapter | TFLOP | M launches | this machine | T4 |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for name in args.budget or list(BUDGETS):
        budget = get_budget(name)
        totals = [0.0, 0.0]
        for chapter in CHAPTERS:
            est = estimate.estimate(chapter, chapter_plan(chapter, budget), name, [here, estimate.T4])
            s_here, s_t4 = est.seconds[here.device], est.seconds[estimate.T4.device]
            totals[0] += s_here
            totals[1] += s_t4
            print(
                f"| {name} | {chapter} | {est.count.flops / 1e12:.3g} | {est.count.launches / 1e6:.3g} | "
                f"{estimate.format_seconds(s_here)} | {estimate.format_seconds(s_t4)} |"
            )
            if args.items:
                plan = chapter_plan(chapter, budget)
                for work in sorted(plan, key=lambda w: -estimate.T4.seconds(w.count()))[: args.items]:
                    print(
                        f"|   | {estimate.format_seconds(estimate.T4.seconds(work.count()))} "
                        f"on the T4: {_short(work)} | | | | |"
                    )
        print(f"| {name} | **all** | | | {estimate.format_seconds(totals[0])} | {estimate.format_seconds(totals[1])} |")


if __name__ == "__main__":
    from deepnotes import cli

    cli.run(main)
