"""The chapters in Colab's kernel: its widget, kernel and progress-bar packages, at Colab's pinned versions.

Colab's runtime pins its own Jupyter stack (``google-colab`` requires ipykernel==5.5.6 and
ipython==7.34.0, its notebook 6.5.x needs jupyter-client < 8; see googlecolab/colabtools#2837) and ships
ipywidgets 7.7.1. This test builds a virtual environment with exactly those packages, which see the rest
(torch, deepnotes, matplotlib, SymPy) from the test's own environment *behind* them, starts a kernel in
it, and runs in that kernel, for every chapter: the first two code cells (the install cell and the
imports with the budget), then one slider built and its live panel run at its start setting, and a
progress bar, all at the smoke budget. Nothing here can tell how Colab's browser side draws the widgets;
it proves the Python side (no ``Stack`` in ipywidgets 7, ipykernel 5's comms, tqdm's widget bar) works.
"""

from __future__ import annotations

import json
import os
import subprocess
import sysconfig
import venv

import nbformat
import pytest
from book_paths import CHAPTERS, ROOT
from nbclient import NotebookClient

COLAB_PINS = (
    "ipywidgets==7.7.1",
    "widgetsnbextension==3.6.1",
    "jupyterlab-widgets==1.1.1",
    "ipykernel==5.5.6",
    "ipython==7.34.0",
    "jupyter-client==6.1.12",
    "tornado==6.3.3",
    "traitlets==5.7.1",
    "tqdm==4.66.6",
)
KERNEL = "deepnotes-colab-pins"

CHECK = """import ipywidgets, tqdm
assert ipywidgets.__version__ == "7.7.1" and not hasattr(ipywidgets, "Stack"), ipywidgets.__version__
from deepnotes.core.train import progress
slider = next(s for s in controls.sliders(budget).values() if s.live is not None)
control = slider.build()
panel = control.children[-1]
panel.run()
assert panel.image.value and panel.message.value == "", panel.message.value
first = control.children[-2].value
control.children[-3].children[-1].index = len(control.children[-3].children[-1].options) - 1
assert control.children[-2].value != first or len(control.children[-3].children[-1].options) == 1
assert sum(progress(range(3))) == 3
control"""


@pytest.fixture(scope="module")
def colab_kernel(tmp_path_factory):
    """A kernel spec whose Python has Colab's pins first on its path, then this environment's packages."""
    env_dir = tmp_path_factory.mktemp("colab-env")
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    pip = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *COLAB_PINS],
        capture_output=True,
        text=True,
        timeout=900,
    )
    if pip.returncode:
        if os.environ.get("CI"):
            pytest.fail(f"could not install Colab's pinned packages: {pip.stderr[-2000:]}")
        pytest.skip(f"no package registry here for Colab's pins: {pip.stderr.strip()[-300:]}")
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # .pth lines go *after* the venv's own site-packages: Colab's pins win, everything else comes from here
    (env_dir / "lib" / site.split("/lib/", 1)[1] / "zz_deepnotes_test_env.pth").write_text(
        f"{ROOT}\n{sysconfig.get_paths()['purelib']}\n"
    )
    spec_dir = tmp_path_factory.mktemp("jupyter") / "kernels" / KERNEL
    spec_dir.mkdir(parents=True)
    (spec_dir / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "Python (Colab pins)",
                "language": "python",
            }
        )
    )
    return spec_dir.parent.parent


def first_cells(chapter: str) -> nbformat.NotebookNode:
    nb = nbformat.read(ROOT / f"{chapter}.ipynb", as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"][:2]
    for cell in code:
        cell.outputs, cell.execution_count = [], None
    return nbformat.v4.new_notebook(cells=code + [nbformat.v4.new_code_cell(CHECK)])


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_a_chapter_starts_and_its_live_slider_runs_in_colab_s_kernel(colab_kernel, chapter, monkeypatch):
    monkeypatch.setenv("JUPYTER_PATH", str(colab_kernel))
    monkeypatch.setenv("DEEPNOTES_BUDGET", "smoke")
    monkeypatch.delenv("MPLBACKEND", raising=False)
    nb = first_cells(chapter)
    NotebookClient(nb, timeout=900, kernel_name=KERNEL, resources={"metadata": {"path": str(ROOT / "book")}}).execute()
    outputs = [o for c in nb.cells for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs), (
        "the slider did not display as a widget"
    )
