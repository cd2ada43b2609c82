"""Small JSON tables kept on disk beside the compiled kernels (:func:`deepnotes.core.kernels.cache_dir`):
what one page measured or counted, read back by the next (the calibration, each shape's counts)."""

from __future__ import annotations

import json
import os
from pathlib import Path


def read_table(path: Path) -> dict:
    """The table at ``path``, or {} where there is none or it cannot be read (a broken file is ignored)."""
    try:
        table = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return table if isinstance(table, dict) else {}


def keep(path: Path, key: str, value) -> None:
    """Store ``value`` under ``key`` in the table at ``path``, atomically (pages built side by side may
    store at once); best effort: a read-only cache only costs the next page the work again."""
    table = read_table(path)
    table[key] = value
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(table))
        os.replace(tmp, path)
    except OSError:
        pass
