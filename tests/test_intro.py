"""The introduction (book/intro.ipynb ↔ deepnotes/intro.py): its budget table is the package's budget rows,
its cost table covers every chapter at the budgets a reader runs, and no source is called a seed."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest
from book_paths import CHAPTERS, ROOT, TOC

from deepnotes import intro
from deepnotes.chapters import catalog
from deepnotes.core import config
from deepnotes.cost import estimate as est
from deepnotes.ledger.inventory import SOURCES
from deepnotes.show import verdict_words as words
from deepnotes.show import verdicts as vd

NOTEBOOK = ROOT / f"{TOC['root']}.ipynb"
SOURCE_AS_SEED = re.compile(r"\bseeds? \d{3}\b", re.I)  # "seed 000": a source article named like a random seed


def table(markdown: str) -> list[list[str]]:
    """The body rows of the (first) Markdown table in ``markdown``, as lists of stripped cells."""
    rows = [line for line in markdown.splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows[2:]]


def fields(row) -> dict:
    """A budget row's values by field name, the shared warmup comparison's as "warmup.<field>"."""
    out = {}
    for f in dataclasses.fields(row):
        value = getattr(row, f.name)
        if f.name in ("name", "chapters"):
            continue
        if isinstance(value, config.WarmupBudget):
            out.update({f"warmup.{w.name}": getattr(value, w.name) for w in dataclasses.fields(value)})
        else:
            out[f.name] = value
    return out


def stored_markdown(cell_source: str) -> list[str]:
    """The stored Markdown outputs of the intro's code cell whose source contains ``cell_source``."""
    cells = [c for c in json.loads(NOTEBOOK.read_text())["cells"] if c["cell_type"] == "code"]
    cell = next(c for c in cells if cell_source in "".join(c["source"]))
    assert "nbval-check-output" in cell["metadata"].get("tags", []), "the table's cell must be checked by nbval"
    return ["".join(o["data"]["text/markdown"]) for o in cell["outputs"]]


def test_the_intro_is_the_toc_root_and_a_notebook_that_hides_its_code():
    assert TOC["root"] == "book/intro" and NOTEBOOK.is_file() and not (ROOT / "book" / "intro.md").exists()
    cells = [c for c in json.loads(NOTEBOOK.read_text())["cells"] if c["cell_type"] == "code"]
    assert all({"remove-input", "remove-cell"} & set(c["metadata"].get("tags", [])) for c in cells)


def test_every_budget_row_has_a_use_and_one_line_in_the_table():
    assert list(config.BUDGET_USES) == ["smoke", "cpu", "gpu", "full"]
    assert set(config.BUDGET_USES) == set(config.BUDGETS)
    rows = {r[0].strip("`"): r for r in table(intro.budget_rows())}
    assert sorted(rows) == sorted(config.BUDGETS)
    for name, b in config.BUDGETS.items():
        use, model, step, vocabulary = rows[name][1:5]
        assert use.startswith(config.BUDGET_USES[name])
        assert (model, step, vocabulary) == (
            f"{b.d_model}, {b.n_heads}, {b.d_ff}",
            f"{b.batch_size} × {b.seq_len}",
            str(b.vocab_size),
        )
        defaults = [cuda for cuda in (False, True) if config.default_budget_name(cuda) == name]
        assert ("the default" in use) == bool(defaults), (name, use)


def test_the_default_budget_is_gpu_with_cuda_and_cpu_without(monkeypatch):
    assert (config.default_budget_name(True), config.default_budget_name(False)) == ("gpu", "cpu")
    with pytest.raises(TypeError, match="cuda='yes'\\): cuda must be True or False"):  # refused at the door by its type
        config.default_budget_name("yes")
    monkeypatch.delenv(config.BUDGET_ENV, raising=False)
    for cuda in (False, True):
        monkeypatch.setattr(config.torch.cuda, "is_available", lambda cuda=cuda: cuda)
        assert config.get_budget().name == config.default_budget_name(cuda)
    rule = intro.default_rule()
    assert "`gpu` where PyTorch finds CUDA and `cpu` otherwise" in rule and "ValueError: unknown budget" in rule


def test_gpu_against_full_lists_exactly_the_fields_that_differ():
    rows = {r[0].strip("`"): r for r in table(intro.gpu_against_full().split("\n\n", 1)[1])}
    assert list(rows) == ["shared sizes", *[c.split("/")[-1] for c in CHAPTERS]]
    for stem, (_, minutes, said) in rows.items():
        if stem == "shared sizes":
            gpu, full = (fields(config.BUDGETS[b]) for b in ("gpu", "full"))
        else:
            gpu, full = (fields(catalog.CATALOG[stem].rows[b]) for b in ("gpu", "full"))
            assert int(minutes) == catalog.CATALOG[stem].gpu_minutes
        differ = sorted(k for k in gpu if gpu[k] != full[k])
        listed = sorted(part.split(" ")[0] for part in said.split("; ")) if differ else []
        assert listed == differ, stem
        assert differ or said == "the same as `full`"


def test_the_stored_intro_shows_the_package_tables_as_they_are_now():
    """The page's budget and source tables are the functions' outputs (nbval re-runs the cells; this
    fails without a kernel when a budget row changed and the intro's checked outputs were not re-stored:
    ``python tools/store_checked_outputs.py book/intro.ipynb``)."""
    assert stored_markdown("intro.budget_rows()") == [
        intro.default_rule(),
        intro.budget_rows(),
        intro.gpu_against_full(),
    ]
    assert stored_markdown("intro.sources_table()") == [intro.sources_table()]


def test_the_cost_table_has_every_chapter_at_cpu_and_gpu_and_says_the_t4_is_assumed(monkeypatch, tmp_path):
    here = est.Rates("this test", 1e9, 1e-6, "measured nowhere")
    monkeypatch.setattr(est, "calibrate", lambda: here)
    monkeypatch.setattr(intro, "chapter_plan", lambda chapter, budget: [])  # nothing counted: fast
    log = tmp_path / "work.jsonl"
    monkeypatch.setenv("DEEPNOTES_WORK_LOG", str(log))
    text = intro.cost_table()
    rows = table(text)
    assert [r[0].strip("`") for r in rows] == [c.split("/")[-1] for c in CHAPTERS] + ["all chapters"]
    assert all(len(r) == 1 + 2 * len(intro.COST_BUDGETS) for r in rows)
    assert est.T4.how in text and "assumed" in est.T4.how and here.how in text
    assert not log.exists(), "the intro's estimates must not mark chapters in the work log"


def test_source_labels_rename_source_articles_not_random_seeds():
    assert vd.source_labels("seed 000 §增量爆炸 eq. (1); seed 001 side note 4") == (
        "source 000 §增量爆炸 eq. (1); source 001 side note 4"
    )
    assert vd.source_labels("seeds 002 and 003; Seed 004") == "sources 002 and 003; Source 004"
    for random_seed in ("seed 0 of each run", "seeds 0..2", "3 seeds"):
        assert vd.source_labels(random_seed) == random_seed
    table_ = vd.VerdictTable([vd.check_number("a claim (as seed 004)", "seed 000 §x eq. (1)", 1.0, 1.0)])
    for shown in (repr(table_), table_._repr_html_()):
        assert "source 000 §x eq. (1)" in shown and "as source 004" in shown and not SOURCE_AS_SEED.search(shown)


def test_the_intro_calls_no_source_a_seed_and_names_them_as_the_tables_do():
    nb = json.loads(NOTEBOOK.read_text())
    text = "\n".join("".join(c["source"]) for c in nb["cells"]) + json.dumps([c.get("outputs") for c in nb["cells"]])
    assert not SOURCE_AS_SEED.search(text), SOURCE_AS_SEED.search(text)
    sources = {r[0]: r for r in table(intro.sources_table())}
    assert list(sources) == [words.source_name(n) for n in SOURCES]
    assert sources[words.source_name("001")][2].startswith("bookstall")
    assert all(sources[words.source_name(n)][2].startswith("Su Jianlin") for n in SOURCES if n != "001")
    prose = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    assert "five articles by Su Jianlin" not in prose and "arXiv:2203.00555" in prose and "Wang et al." in prose


def test_the_built_intro_shows_the_budget_rows_and_the_cost_of_every_chapter(built_book):
    html = (built_book.html / f"{TOC['root']}.html").read_text()
    assert "| --- |" not in html, "a Markdown table was printed as text, not rendered"
    assert "Traceback" not in html and not SOURCE_AS_SEED.search(html)
    for name, b in config.BUDGETS.items():
        assert f">{name}</span></code>" in html
        assert f"{b.d_model}, {b.n_heads}, {b.d_ff}" in html and f"{b.batch_size} × {b.seq_len}" in html
    for chapter in CHAPTERS:
        assert chapter.split("/")[-1] in html
    assert est.T4.how.split(";")[-1].strip() in html  # "not measured"
