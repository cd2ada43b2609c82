"""Execute one chapter at a budget, keep every output in a copy, and print its wall time and its slowest cells.

    DEEPNOTES_BUDGET=cpu python tools/run_chapter.py book/bert_init.ipynb /tmp/bert_cpu.ipynb
"""
from __future__ import annotations

import argparse
import time
from datetime import datetime
from pathlib import Path

import nbformat
from nbclient import NotebookClient


def run(src: Path, dst: Path) -> float:
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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chapter", type=Path, help="a chapter notebook, e.g. book/bert_init.ipynb")
    parser.add_argument("out", type=Path, help="where the executed copy is written")
    args = parser.parse_args(argv)
    if not args.chapter.is_file() or args.chapter.suffix != ".ipynb":
        parser.error(f"{args.chapter} is not a notebook file; give one of book/*.ipynb")
    print(f"{args.chapter}: executed in {run(args.chapter, args.out):.1f} s -> {args.out}")


if __name__ == "__main__":
    main()
