"""Execute one chapter at a budget, keep every output in a copy, and print its wall time and its slowest cells.

    DEEPNOTES_BUDGET=cpu python tools/run_chapter.py book/bert_init.ipynb /tmp/bert_cpu.ipynb

With ``--scheduler tcp://host:8786`` the chapter's ensembles train on that Dask cluster (``DEEPNOTES_SCHEDULER``
is set for its kernel; the numbers are the local run's). With ``--check-plan`` it also logs every training
ensemble the chapter runs (``DEEPNOTES_WORK_LOG``), compares them with the chapter's plan
(:func:`deepnotes.chapters.catalog.chapter_plan`) and prints the estimate the page itself printed for this machine (its
budget cell's, calibrated in the chapter's own process) beside the measured time, and their ratio.
"""

from __future__ import annotations

import argparse
import os
import re
import tempfile
import time
from datetime import datetime
from pathlib import Path


def run(src: Path, dst: Path) -> float:
    import nbformat  # here, so that bad arguments are refused before anything heavy is imported
    from nbclient import NotebookClient

    nb = nbformat.read(src, as_version=4)
    start = time.perf_counter()
    NotebookClient(nb, timeout=3600, kernel_name="python3", resources={"metadata": {"path": str(src.parent)}}).execute()
    seconds = time.perf_counter() - start
    nbformat.write(nb, dst)
    for took, i, first in slowest_cells(nb):
        print(f"  cell {i:3d}: {took:6.1f} s  {first}")
    return seconds


def slowest_cells(nb, count: int = 8) -> list[tuple[float, int, str]]:
    """The ``count`` slowest code cells: (seconds, index, first line), from nbclient's timing metadata."""
    out = []
    for i, cell in enumerate(nb.cells):
        timing = cell.get("metadata", {}).get("execution", {})
        start, end = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
        if cell.cell_type == "code" and start and end:
            took = (datetime.fromisoformat(end.rstrip("Z")) - datetime.fromisoformat(start.rstrip("Z"))).total_seconds()
            out.append((took, i, cell.source.splitlines()[0][:70] if cell.source else ""))
    return sorted(out, reverse=True)[:count]


ESTIMATE_LINE = re.compile(
    r"Estimated cost of this chapter at the \S+ budget: .*?kernel launches; ([^:;]+): (< 1 s|[\d.]+ (?:s|min|h))[;.]"
)
UNITS = {"s": 1, "min": 60, "h": 3600}


def printed_estimate(nb) -> tuple[str, float] | None:
    """(device, seconds) of the first device in the estimate the executed page printed (its budget cell's
    :class:`~deepnotes.cost.estimate.Estimate`), None if it printed none. "< 1 s" reads as 1 s."""
    for cell in nb.cells:
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            found = ESTIMATE_LINE.search(str(output.get("text", "")))
            if found:
                device, shown = found.groups()
                number, unit = shown.removeprefix("< ").split()
                return device, float(number) * UNITS[unit]
    return None


def check_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Everything that would make the run fail after executing the notebook is refused first (exit 2):
    a chapter that is not a notebook, an output that is not a new notebook path in an existing folder,
    an unknown ``DEEPNOTES_BUDGET``, a ``--scheduler`` that is not an address, ``--check-plan`` on a notebook
    without a plan."""
    from deepnotes.chapters import CHAPTERS
    from deepnotes.core.config import BUDGET_ENV, BUDGETS

    if not args.chapter.is_file() or args.chapter.suffix != ".ipynb":
        parser.error(f"{args.chapter} is not a notebook file; give one of book/*.ipynb")
    if args.out.suffix != ".ipynb":
        parser.error(f"out {args.out} must end in .ipynb")
    if not args.out.parent.is_dir():
        parser.error(f"out {args.out}: the folder {args.out.parent} does not exist")
    if args.out.resolve() == args.chapter.resolve():
        parser.error(f"out {args.out} is the chapter itself; write the executed copy elsewhere")
    budget = os.environ.get(BUDGET_ENV)
    if budget is not None and budget not in BUDGETS:
        parser.error(f"{BUDGET_ENV}={budget!r} is not a budget; allowed: {', '.join(BUDGETS)}")
    if args.scheduler is not None and not re.fullmatch(r"[a-z][a-z0-9+]*://\S+", args.scheduler):
        parser.error(f"--scheduler {args.scheduler!r} is not a scheduler's address, such as tcp://host:8786")
    if args.check_plan and args.chapter.stem not in CHAPTERS:
        parser.error(f"--check-plan: {args.chapter.stem!r} has no plan; chapters with one: {', '.join(CHAPTERS)}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chapter", type=Path, help="a chapter notebook, e.g. book/bert_init.ipynb")
    parser.add_argument("out", type=Path, help="where the executed copy is written")
    parser.add_argument(
        "--check-plan",
        action="store_true",
        help="compare the ensembles the chapter trains with its plan; print the estimate",
    )
    parser.add_argument(
        "--scheduler", metavar="ADDRESS", help="train on the Dask cluster at this address (e.g. tcp://host:8786)"
    )
    args = parser.parse_args(argv)
    check_arguments(parser, args)
    from deepnotes.cli import about

    if args.scheduler is not None:
        from deepnotes.core.cluster import SCHEDULER_VARIABLE

        os.environ[SCHEDULER_VARIABLE] = args.scheduler  # the kernel inherits it; every train_many submits there
    if not args.check_plan:
        with about(args.chapter):  # not a notebook, a cell that raises: one line naming the file (exit 2)
            seconds = run(args.chapter, args.out)
        print(f"{args.chapter}: executed in {seconds:.1f} s -> {args.out}")
        return
    import nbformat

    from deepnotes.chapters.catalog import chapter_plan
    from deepnotes.cost import log as work_log
    from deepnotes.cost import model as cost_model

    log = Path(tempfile.mkdtemp()) / "work.jsonl"
    os.environ[work_log.WORK_LOG_ENV] = str(log)
    stem = args.chapter.stem
    work_log.log_chapter(stem)  # the chapter's budget cell marks it again; a chapter without one is still found
    with about(args.chapter):
        seconds = run(args.chapter, args.out)
    ran = cost_model.read_train_log(log).get(stem, [])
    plan = chapter_plan(stem, None)
    differences = cost_model.plan_differences(plan, ran)
    print(f"{args.chapter}: executed in {seconds:.1f} s -> {args.out}")
    print(f"  {len(ran)} training ensembles run; plan: {len(plan)} items")
    printed = printed_estimate(nbformat.read(args.out, as_version=4))
    if printed is None:
        print("  the page printed no estimate")
    else:
        device, est = printed
        print(f"  the page's estimate for {device}: {est:.0f} s; measured {seconds:.1f} s; ratio {seconds / est:.2f}")
    for line in differences:
        print("  " + line)
    if differences:
        raise SystemExit(f"{stem}: the plan differs from what the chapter ran ({len(differences)} differences)")


if __name__ == "__main__":
    from deepnotes import cli

    cli.run(main)
