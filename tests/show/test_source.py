"""The package's code on the page: deepnotes.show.source reads it from the package as it is."""

import inspect

import pytest

from deepnotes.core.models import Residual
from deepnotes.show.source import source_of


def test_source_of_gives_the_file_lines_and_the_dedented_code():
    view = source_of(Residual.forward, "the sublayer")
    lines, first = inspect.getsourcelines(Residual.forward)
    assert view.path == "deepnotes/core/models.py" and view.first == first and view.last == first + len(lines) - 1
    assert view.lines[0].startswith("def forward") and "LN(x + F(x))" in "\n".join(view.lines)
    assert f"lines {view.first}–{view.last}" in view.caption and repr(view).splitlines()[1].startswith(str(first))
    html = view._repr_html_()
    assert 'class="highlight"' in html and f'<span class="linenos">{first}</span>' in html


@pytest.mark.parametrize("bad", [42, "Residual", print])
def test_source_of_refuses_what_is_not_deepnotes_code(bad):
    with pytest.raises((TypeError, ValueError), match="deepnotes|function"):
        source_of(bad)
