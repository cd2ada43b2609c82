"""Sphinx extension: a browser console without errors on every page of the book.

- sphinx-thebe's configuration script (``const THEBE_JS_URL = …``) reaches each page twice, and the
  second copy throws "Identifier 'THEBE_JS_URL' has already been declared": every page keeps one copy of
  each script (same file or body and attributes).
- The widget manager typesets widget output with MathJax 2's ``MathJax.Hub.Queue``, which MathJax 3 does
  not have: ``static/mathjax2-hub.js`` gives MathJax 3 that one call (see its header).
- The theme logs "Got invalid theme mode" when no default mode is configured: ``html_context``'s
  ``default_mode`` is set to ``auto`` (light or dark as the reader's system is).
- A browser asks every site for ``/favicon.ico``; the book names its own icon, so none is missing.
"""

from __future__ import annotations

from pathlib import Path

STATIC = Path(__file__).resolve().parent / "static"
MATHJAX2_HUB = "mathjax2-hub.js"
FAVICON = "favicon.svg"


def _script_key(js) -> tuple:
    """What makes two scripts the same: file (or inline body) and attributes, whatever their priority (an
    inline script's filename is None or "": the same script added twice by two routes)."""
    return (str(getattr(js, "filename", js) or ""), tuple(sorted(getattr(js, "attributes", {}).items())))


def _one_copy_of_each_script(app, pagename, templatename, context, doctree) -> None:
    seen, kept = set(), []
    for js in context.get("script_files", []):
        key = _script_key(js)
        if key not in seen:
            seen.add(key)
            kept.append(js)
    context["script_files"] = kept


def _theme_defaults(app, config) -> None:
    config.html_context.setdefault("default_mode", "auto")
    if not config.html_favicon:
        config.html_favicon = str(STATIC / FAVICON)


def setup(app):
    app.connect("config-inited", _theme_defaults)
    app.connect("html-page-context", _one_copy_of_each_script, priority=900)  # after every extension added its own
    app.add_js_file(MATHJAX2_HUB, priority=200)  # before MathJax and the widget manager
    return {"parallel_read_safe": True, "parallel_write_safe": True}
