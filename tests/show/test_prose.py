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


def test_the_held_out_note_reads_the_largest_standard_error_of_the_runs():
    from dataclasses import dataclass

    from deepnotes.core.train import History
    from deepnotes.show.prose import held_out_note

    @dataclass
    class Run:
        history: History

    def run(se, diverged=None):
        return History(
            floor=1.0, unigram=2.0, held_out_loss=1.5, held_out_se=se, held_out_sequences=256, diverged_at=diverged
        )

    runs = {"a": [run(0.004), run(0.011)], ("b", 3): (Run(run(0.002)), Run(run(0.5, diverged=4)))}
    note = held_out_note(runs)
    assert "256 sequences" in note and "at most 0.011 of the plateau–floor gap over the 3 runs" in note
    exploded = History(floor=1.0, unigram=2.0, held_out_loss=1e9, held_out_se=3e8, held_out_sequences=256)
    note = held_out_note({**runs, "c": [exploded]})
    assert "at most 0.011" in note and "(1 more ended over a gap above the plateau" in note
    assert "last training batches (these runs have no held-out sample)" in held_out_note({"a": [History()]})
