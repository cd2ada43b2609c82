"""One build of the book at the smoke budget, with the local widget manager, shared by the tests."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from book_paths import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import build_book  # noqa: E402
import offline_widgets  # noqa: E402


@dataclass
class BuiltBook:
    html: Path  # the _build/html folder
    local_widgets: bool  # built with the local @jupyter-widgets/html-manager
    log: str
    work_log: Path | None = None  # every training ensemble the chapters ran (deepnotes.cost.log)


@pytest.fixture(scope="session")
def built_book(tmp_path_factory) -> BuiltBook:
    reuse = os.environ.get("DEEPNOTES_REUSE_BUILD")  # a folder an earlier run built into (a developer's shortcut)
    if reuse:
        if os.environ.get("CI"):
            pytest.fail("DEEPNOTES_REUSE_BUILD is for local runs: CI tests a fresh build", pytrace=False)
        html = Path(reuse) / "_build" / "html"
        assert (html / "index.html").exists(), f"DEEPNOTES_REUSE_BUILD={reuse}: no built book there"
        log = Path(reuse) / "work.jsonl"
        return BuiltBook(
            html, (html / "_static" / offline_widgets.STATIC_NAME).exists(), "", log if log.exists() else None
        )
    out = tmp_path_factory.mktemp("book")
    html, local, proc = build_book.build(out, "smoke", strict=bool(os.environ.get("CI")))
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    return BuiltBook(html, local, proc.stdout, out / "work.jsonl")
