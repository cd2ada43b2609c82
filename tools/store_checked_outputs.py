"""Execute chapters at the smoke budget and store only the outputs nbval checks.

    python tools/store_checked_outputs.py book/increment_explosion.ipynb [...]

Cells tagged ``nbval-check-output`` (derivations, verdicts, constants) keep their outputs, which
nbval then compares on every test run; every other cell is stored without outputs (the book build
executes it). Widget state is dropped from the stored notebook.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import nbformat
from nbclient import NotebookClient

TAG = "nbval-check-output"  # nbval compares these cells' outputs (a cell tag, not a comment a reader must read)


def is_checked(cell) -> bool:
    return TAG in cell.get("metadata", {}).get("tags", [])


def store(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    os.environ["DEEPNOTES_BUDGET"] = "smoke"
    NotebookClient(
        nb, timeout=1800, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    ).execute()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        cell.metadata.pop("execution", None)  # timestamps: noise in every diff
        if is_checked(cell):
            for out in cell.outputs:
                out.get("metadata", {}).clear() if isinstance(out.get("metadata"), dict) else None
        else:
            cell.outputs = []
            cell.execution_count = None
    nb.metadata.pop("widgets", None)
    nbformat.write(nb, path)
    print(f"{path}: stored {sum(is_checked(c) for c in nb.cells if c.cell_type == 'code')} checked cells")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chapters", type=Path, nargs="+", help="chapter notebooks, e.g. book/bert_init.ipynb")
    args = parser.parse_args(argv)
    for path in args.chapters:
        if not path.is_file() or path.suffix != ".ipynb":
            parser.error(f"{path} is not a notebook file; give one or more of book/*.ipynb")
    from deepnotes.cli import about

    for path in args.chapters:
        with about(path):  # not a notebook, a cell that raises: one line naming the file (exit 2)
            store(path)


if __name__ == "__main__":
    from deepnotes import cli

    cli.run(main)
