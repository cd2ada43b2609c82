"""The package's own code on the page: a function's or class's source, read from the installed
package when the cell runs (so the page cannot drift from the code), with its file and line numbers.

In the HTML book and in Jupyter it is highlighted by Pygments with the file's line numbers; as plain
text it is the numbered source.
"""

from __future__ import annotations

import html
import inspect
from pathlib import Path

import deepnotes
from deepnotes.core.validate import NonNegativeCount

PACKAGE_ROOT = Path(deepnotes.__file__).resolve().parent.parent  # the folder holding deepnotes/


class SourceView:
    """Lines ``first``..``first + len(lines) − 1`` of ``path`` (relative to the repository root)."""

    def __init__(self, path: str, first: NonNegativeCount, lines: list[str], title: str):
        self.path, self.first, self.lines, self.title = path, first, lines, title

    @property
    def last(self) -> int:
        return self.first + len(self.lines) - 1

    @property
    def caption(self) -> str:
        return f"{self.title}: {self.path}, lines {self.first}–{self.last}"

    def __repr__(self) -> str:
        width = len(str(self.last))
        return "\n".join([self.caption, *(f"{self.first + k:>{width}}  {line}" for k, line in enumerate(self.lines))])

    def _repr_html_(self) -> str:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import PythonLexer

        code = highlight(
            "\n".join(self.lines) + "\n",
            PythonLexer(),
            HtmlFormatter(linenos="inline", linenostart=self.first, cssclass="highlight"),
        )
        return (
            f'<figure class="deepnotes-source-figure"><figcaption><code>{html.escape(self.path)}</code>, '
            f"lines {self.first}–{self.last}: {html.escape(self.title)}</figcaption>{code}</figure>"
        )


def source_of(obj, title: str | None = None) -> SourceView:
    """The source of ``obj`` (a function, method or class of the package) as it is in the package now."""
    if not (inspect.isfunction(obj) or inspect.ismethod(obj) or inspect.isclass(obj)):
        raise TypeError(f"source_of shows a function, method or class of deepnotes, got {type(obj).__name__}")
    obj = inspect.unwrap(obj)  # a decorated function (torch.no_grad) shows its own code, not the wrapper's
    path = Path(inspect.getsourcefile(obj)).resolve()
    if not path.is_relative_to(PACKAGE_ROOT / "deepnotes"):
        raise ValueError(f"{obj.__qualname__} is not deepnotes code (it lives in {path})")
    lines, first = inspect.getsourcelines(obj)
    lines = [line.rstrip("\n") for line in lines]
    indent = min(len(line) - len(line.lstrip()) for line in lines if line.strip())
    return SourceView(
        path.relative_to(PACKAGE_ROOT).as_posix(),
        first,
        [line[indent:] for line in lines],
        title or f"{obj.__module__}.{obj.__qualname__}",
    )
