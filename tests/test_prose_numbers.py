"""Numbers in the book's prose are computed (glued from a cell), references, or listed definitions
(``tools/prose_numbers.py``); the scan itself is tested on made-up markdown so that it can fail."""

from __future__ import annotations

import json
import re
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


# Issue 44: a page that describes one budget's results in words ("At the cpu budget (the runs this text was written
# from) …, SGD diverges at its first step") says what a later build may not show; the numeral scan cannot see words.
# A reading of results is computed from the runs (a cell's Markdown) or written as a guide to the rows ("where …").
TYPED_READING = re.compile(
    r"(?i)this text was written from|the runs (this|the) text|"
    r"\bat the `?(cpu|gpu|smoke|full)`? budget\b[^.]*\b(holds?|trains?|diverges?|diverged|learn(s|ed)|fails?)\b"
)


def typed_readings(path) -> list[tuple[int, str]]:
    """(cell, phrase) of every markdown sentence that reports one budget's results in words."""
    nb = json.loads(path.read_text())
    return [
        (i, m[0])
        for i, cell in enumerate(nb["cells"])
        if cell["cell_type"] == "markdown"
        for m in TYPED_READING.finditer("".join(cell["source"]))
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_page_reports_one_budgets_results_in_typed_words(path):
    found = typed_readings(path)
    assert not found, "results of one budget typed in words (compute the reading from the runs):\n" + "\n".join(
        f"cell {i}: {text!r}" for i, text in found
    )


def test_the_typed_reading_scan_can_fail(tmp_path):
    page = notebook_with(
        tmp_path,
        "At the cpu budget (the runs this text was written from) the picture is this.",
        "At the `gpu` budget the plain stack diverges at step 3.",
        "The `cpu` budget trains 300 steps; where a seed diverges, the row says so.",
    )
    assert [i for i, _ in typed_readings(page)] == [0, 1]
