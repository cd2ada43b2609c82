"""Numbers in the book's prose are computed (glued from a cell), references, or listed definitions
(``tools/prose_numbers.py``); the scan itself is tested on made-up markdown so that it can fail."""

from __future__ import annotations

import json
import sys

import pytest
from book_paths import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import prose_numbers as pn  # noqa: E402

NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_number_in_the_prose_is_glued_a_reference_or_a_definition(path):
    untraced = pn.untraced(path)
    assert not untraced, "numbers typed into the prose (glue them from the cell that computes them):\n" + "\n".join(
        f"cell {n.cell}: {n.text!r} … {n.context}" for n in untraced
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_listed_definition_is_stale(path):
    assert not pn.unused_definitions(path), "listed as definitions but no longer typed: remove them"


def test_every_chapter_with_definitions_exists():
    assert set(pn.DEFINITIONS) <= {p.stem for p in NOTEBOOKS}


def notebook_with(tmp_path, *markdown: str):
    path = tmp_path / "page.ipynb"
    cells = [{"cell_type": "markdown", "metadata": {}, "source": text} for text in markdown]
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


def test_a_typed_result_is_caught_and_a_glued_one_is_not(tmp_path):
    page = notebook_with(
        tmp_path,
        "The runs learned 0.67 of the gap in 3 seeds.",
        "The runs learned {glue:text}`learned` of the gap in {glue:text}`seeds` seeds.",
    )
    assert [(n.cell, n.text) for n in pn.untraced(page)] == [(0, "0.67"), (0, "3")]


def test_references_equations_and_code_are_not_prose(tmp_path):
    page = notebook_with(
        tmp_path,
        "Eq. (42) and eqs. (15), (18) of §9.2 and §1–3, Fig. 3(a,b), Lemma 1–2, Experiments 2 and 3,"
        " source 000, claims 23, 24, (2022), NeurIPS 2018, 2021-11-08, arXiv:2002.04745, $N = 1000$,"
        " $$x^2 = 4$$, `lr=0.3`, [a link](https://example.org/8747), {cite}`wang2022`.\n\n1. first item\n"
        "## Experiment 4: a heading",
    )
    assert pn.numerals_in(page) == []


def test_a_definition_is_accepted_only_in_its_own_chapter(tmp_path, monkeypatch):
    monkeypatch.setitem(pn.DEFINITIONS, "page", {"768": "BERT-base's width"})
    page = notebook_with(tmp_path, "Width 768, and 0.65 after twelve layers.")
    assert [n.text for n in pn.untraced(page)] == ["0.65"]
    other = tmp_path / "other.ipynb"
    other.write_text(page.read_text())
    assert [n.text for n in pn.untraced(other)] == ["768", "0.65"]


def test_the_tool_lists_what_is_not_traced_and_fails(tmp_path, capsys):
    page = notebook_with(tmp_path, "It took 41 s.")
    assert pn.main([str(page)]) == 1
    assert "'41'" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        pn.main([str(tmp_path / "missing.ipynb")])
