"""Sphinx extension: the book's own stylesheet, ``_ext/static/deepnotes.css``, and the script that labels the
cells of the text's tables for it (``deepnotes-tables.js``), on every page.

It comes through an extension, not a ``_static`` folder at the root, because jupyter-book adds every
``.js`` file of every ``html_static_path`` folder to every page: with the offline build's folder
(widget manager, MathJax) that would load them on pages that need neither."""

from __future__ import annotations

from pathlib import Path

STATIC = Path(__file__).resolve().parent / "static"
STYLESHEET = "deepnotes.css"
TABLE_SCRIPT = "deepnotes-tables.js"  # labels the cells of the text's tables for deepnotes.css's phone cards


def _add_static_folder(app, config) -> None:
    config.html_static_path.append(str(STATIC))


def setup(app):
    app.connect("config-inited", _add_static_folder)
    app.add_css_file(STYLESHEET)
    app.add_js_file(TABLE_SCRIPT, defer="defer")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
