"""Sphinx extension: no page loads a script it does not use (issue 48: page weight).

The theme (pydata-sphinx-theme 0.17) puts ``scripts/fontawesome.js`` on every page: 1.49 MB of Font Awesome's
JavaScript, which swaps each icon ``<i class="fa-…">`` for an inline SVG. The theme's stylesheet already draws the
same icons from the webfonts it ships (``vendor/fontawesome/webfonts``, 118–156 kB each, loaded only where an icon
of that font shows), so the script repeats them. Once the build has written the pages, its tag is removed from
every page and its file from ``_static``; the browser test checks that every icon still shows
(``tests/test_browser.py``).
"""

from __future__ import annotations

import re
from pathlib import Path

DROPPED = ("scripts/fontawesome.js",)  # paths under _static/


def script_tag(name: str) -> re.Pattern:
    """A ``<script … src="…_static/<name>[?…]" …></script>`` tag (with the whitespace after it)."""
    return re.compile(r'<script[^>]*\ssrc="[^"]*_static/' + re.escape(name) + r'(\?[^"]*)?"[^>]*>\s*</script>\s*')


def drop_scripts(outdir: Path, names: tuple[str, ...] = DROPPED) -> int:
    """Remove the tags of ``names`` from every HTML page under ``outdir`` and their files from ``_static``; returns
    the number of pages changed."""
    tags = [script_tag(name) for name in names]
    changed = 0
    for page in outdir.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        lean = text
        for tag in tags:
            lean = tag.sub("", lean)
        if lean != text:
            page.write_text(lean, encoding="utf-8")
            changed += 1
    for name in names:
        (outdir / "_static" / name).unlink(missing_ok=True)
    return changed


def _after_build(app, exception) -> None:
    if exception is None and app.builder.format == "html":
        drop_scripts(Path(app.outdir))


def setup(app):
    app.connect("build-finished", _after_build)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
