"""The book: its configuration, its stored notebooks, and a real build at the smoke budget."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())
TOC = yaml.safe_load((ROOT / "_toc.yml").read_text())
CHAPTERS = [entry["file"] for entry in TOC["chapters"]]
NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))


def test_config_has_what_the_book_needs():
    assert CONFIG["execute"]["execute_notebooks"] in ("force", "cache")
    assert CONFIG["execute"]["timeout"] > 0
    assert CONFIG["sphinx"]["config"]["nb_execution_raise_on_error"] is True
    assert CONFIG["repository"]["url"].startswith("https://")
    assert CONFIG["launch_buttons"]["colab_url"] and CONFIG["launch_buttons"]["binderhub_url"]


def test_every_notebook_is_in_the_toc_and_every_toc_entry_exists():
    assert sorted(f"book/{p.stem}" for p in NOTEBOOKS) == sorted(c for c in CHAPTERS if (ROOT / f"{c}.ipynb").exists())
    for entry in [TOC["root"]] + CHAPTERS:
        assert (ROOT / f"{entry}.ipynb").exists() or (ROOT / f"{entry}.md").exists(), entry


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_first_cell_installs_deepnotes_from_the_configured_repository(path):
    cells = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
    first = "".join(cells[0]["source"])
    assert "import deepnotes" in first and "except ImportError" in first
    urls = re.findall(r"git\+(https://\S+?)[\"'\s]", first)
    assert urls == [CONFIG["repository"]["url"]]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_only_checked_cells_store_outputs(path):
    nb = json.loads(path.read_text())
    checked = 0
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        if "NBVAL_CHECK_OUTPUT" in "".join(cell["source"]):
            assert cell["outputs"], "a checked cell must keep its output for nbval to compare"
            checked += 1
        else:
            assert not cell["outputs"], "strip outputs of unchecked cells; the build executes them"
    assert checked >= 1
    assert "widgets" not in nb.get("metadata", {})


@pytest.fixture(scope="session")
def built_book(tmp_path_factory):
    out = tmp_path_factory.mktemp("book")
    env = dict(os.environ, DEEPNOTES_BUDGET="smoke")
    env.pop("MPLBACKEND", None)  # the kernels must use the inline backend to emit figures
    jb = Path(sys.executable).with_name("jupyter-book")
    proc = subprocess.run([str(jb), "build", str(ROOT), "--path-output", str(out), "-W", "-n", "--keep-going"],
                          capture_output=True, text=True, env=env, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    return out / "_build" / "html"


def test_book_builds_with_every_chapter_and_its_figures(built_book):
    assert (built_book / "index.html").exists()
    for chapter in CHAPTERS:
        page = built_book / f"{chapter}.html"
        assert page.exists(), chapter
        html = page.read_text()
        nb = json.loads((ROOT / f"{chapter}.ipynb").read_text())
        plotting = sum("plt.show()" in "".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
        images = re.findall(r'<img[^>]+src="([^"]+)"', html)
        local = [src for src in images if not src.startswith(("http", "data:")) and "_static" not in src]
        assert len(local) >= plotting, f"{chapter}: {len(local)} images for {plotting} plotting cells"
        for src in local:
            assert (page.parent / src).resolve().exists(), src
        assert "application/vnd.jupyter.widget-state+json" in html, "slider state missing"
        assert "Traceback" not in html
