"""Sphinx extension: the page's ".ipynb" download serves the notebook *as executed by the build*.

sphinx-book-theme's download button links to ``_sources/<doc>.ipynb``, which Sphinx copies from the
repository: the stored notebook, without outputs (only the nbval-checked cells keep theirs). MyST-NB
writes the executed notebook, every output and the widget state included, to
``<build>/jupyter_execute/<doc>.ipynb``. When the HTML is written, copy that one over the source copy,
so a reader who downloads a chapter gets every figure, table and kernel-free slider the page shows."""

from __future__ import annotations

import shutil
from pathlib import Path

from sphinx.util import logging

LOGGER = logging.getLogger(__name__)


def executed_notebooks(outdir: Path, executed: Path) -> list[tuple[Path, Path]]:
    """Pairs (executed notebook, the ``_sources`` copy it replaces) for every notebook the build ran."""
    sources = outdir / "_sources"
    pairs = []
    for source in sorted(sources.rglob("*.ipynb")):
        run = executed / source.relative_to(sources)
        if run.is_file():
            pairs.append((run, source))
    return pairs


def _offer_executed(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    executed = Path(app.env.mystnb_config.output_folder)
    pairs = executed_notebooks(Path(app.outdir), executed)
    for run, source in pairs:
        shutil.copyfile(run, source)
    LOGGER.info(f"executed notebooks offered for download: {len(pairs)}")


def setup(app):
    app.connect("build-finished", _offer_executed)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
