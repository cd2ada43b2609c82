"""Sphinx extension: the book's own stylesheet, ``_ext/static/deepnotes.css``, on every page.

It comes through an extension, not a ``_static`` folder at the root, because jupyter-book adds every
``.js`` file of every ``html_static_path`` folder to every page: with the offline build's folder
(widget manager, MathJax) that would load them on pages that need neither."""

from __future__ import annotations

from pathlib import Path

STATIC = Path(__file__).resolve().parent / "static"
STYLESHEET = "deepnotes.css"


def _add_static_folder(app, config) -> None:
    config.html_static_path.append(str(STATIC))


def setup(app):
    app.connect("config-inited", _add_static_folder)
    app.add_css_file(STYLESHEET)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
