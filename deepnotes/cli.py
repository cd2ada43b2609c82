"""How the scripts in ``tools/`` and ``benchmarks/`` fail: an expected failure (a file that is missing, a folder
where a file goes, bad JSON, a notebook whose cell raises, an argument deepnotes refuses) is one line on stderr,
``<script>: <file>: <problem>``, and exit status 2 — the status argparse gives a bad argument — with no traceback.
Anything else is a bug and keeps its traceback."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

EXIT_FAILED = 2


class ToolFailure(Exception):
    """An expected failure, already said in one line (naming the file where there is one)."""


def _expected(err: BaseException) -> bool:
    """OSError (missing file, a folder for a file), ValueError (bad JSON, a record of the wrong shape, a value
    deepnotes refuses), nbformat's validation errors and nbclient's CellExecutionError (a notebook whose cell
    raised), matched by name so that nothing heavy is imported here. A KeyError or a TypeError is a bug: it keeps
    its traceback."""
    names = {cls.__name__ for cls in type(err).__mro__}
    return isinstance(err, (OSError, ValueError, ToolFailure)) or bool(
        names & {"CellExecutionError", "DeadKernelError", "ValidationError", "NotJSONError", "CellTimeoutError"}
    )


def one_line(err: BaseException) -> str:
    """The failure in one line: a raising cell's ``ename: evalue``, else the exception's first line."""
    if hasattr(err, "ename") and hasattr(err, "evalue"):
        text = f"a cell raised {err.ename}: {err.evalue}"
    elif isinstance(err, json.JSONDecodeError):
        text = f"not valid JSON ({err.msg} at line {err.lineno}, column {err.colno})"
    elif isinstance(err, OSError) and err.strerror:
        text = f"{err.strerror}" + (f": {err.filename}" if err.filename else "")
    else:
        text = str(err) or type(err).__name__
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0] if lines else type(err).__name__


@contextlib.contextmanager
def about(path: str | os.PathLike) -> Iterator[None]:
    """Inside: an expected failure becomes a :class:`ToolFailure` that names ``path`` first."""
    try:
        yield
    except ToolFailure:
        raise
    except Exception as err:
        if not _expected(err):
            raise
        raise ToolFailure(f"{path}: {one_line(err)}") from err


def run(main: Callable[[], object]) -> None:
    """Call a script's ``main``; exit with its return value, or with one line and status 2 on an expected failure."""
    try:
        code = main()
    except Exception as err:
        if not _expected(err):
            raise
        print(f"{Path(sys.argv[0]).name}: {one_line(err)}", file=sys.stderr)
        raise SystemExit(EXIT_FAILED) from None
    raise SystemExit(code if isinstance(code, int) else 0)
