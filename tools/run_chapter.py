"""Execute one chapter at a budget, keep every output in a copy, and print its wall time.

    DEEPNOTES_BUDGET=cpu python tools/run_chapter.py book/bert_init.ipynb /tmp/bert_cpu.ipynb
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient


def run(src: Path, dst: Path) -> float:
    nb = nbformat.read(src, as_version=4)
    start = time.perf_counter()
    NotebookClient(nb, timeout=3600, kernel_name="python3", resources={"metadata": {"path": str(src.parent)}}).execute()
    seconds = time.perf_counter() - start
    nbformat.write(nb, dst)
    return seconds


if __name__ == "__main__":
    src, dst = Path(sys.argv[1]), Path(sys.argv[2])
    print(f"{src}: executed in {run(src, dst):.1f} s -> {dst}")
