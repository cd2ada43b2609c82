"""glue_values: the numbers a page's prose quotes, glued for MyST-NB, or shown where it is missing."""

from __future__ import annotations

import sys

import IPython.display
import myst_nb
import pytest

from deepnotes.show.prose import glue_values


def test_each_value_is_glued_as_text_without_output(monkeypatch):
    glued = []
    monkeypatch.setattr(myst_nb, "glue", lambda key, value, display=True: glued.append((key, value, display)))
    glue_values({"learned": "0.67", "seeds": "3"})
    assert glued == [("learned", "0.67", False), ("seeds", "3", False)]


def test_without_myst_nb_the_values_are_shown_in_one_line(monkeypatch):
    shown = []
    monkeypatch.setitem(sys.modules, "myst_nb", None)  # import fails as in a Colab kernel without the book's tools
    monkeypatch.setattr(IPython.display, "display", shown.append)
    glue_values({"learned": "0.67"})
    assert len(shown) == 1 and "`learned` = 0.67" in shown[0].data


def test_a_key_the_markdown_role_cannot_name_is_refused():
    with pytest.raises(ValueError, match="identifiers.*'bad key'"):
        glue_values({"bad key": "1"})
