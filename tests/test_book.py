"""The book: its configuration, its stored notebooks, and a real build at the smoke budget."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from book_paths import APPENDIX, CHAPTERS, CONFIG, ROOT, TOC

NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))


def test_config_has_what_the_book_needs():
    assert CONFIG["execute"]["execute_notebooks"] in ("force", "cache")
    assert CONFIG["execute"]["timeout"] > 0
    assert CONFIG["sphinx"]["config"]["nb_execution_raise_on_error"] is True
    assert CONFIG["repository"]["url"].startswith("https://")
    assert CONFIG["launch_buttons"]["colab_url"] and CONFIG["launch_buttons"]["binderhub_url"]


def test_offline_config_finds_the_local_extensions_from_anywhere(tmp_path):
    """jupyter-book resolves ``local_extensions`` folders against the config file's folder, so the copy
    written elsewhere for the offline build must name them by absolute path (CI failed on this once)."""
    import offline_widgets
    import yaml

    written = yaml.safe_load(
        offline_widgets.write_offline_config(tmp_path, tmp_path / "sub" / "_config.yml").read_text()
    )
    local = written["sphinx"]["local_extensions"]
    assert local.keys() == CONFIG["sphinx"]["local_extensions"].keys()
    for name, folder in local.items():
        assert Path(folder).is_absolute() and (Path(folder) / f"{name}.py").is_file()


def test_every_notebook_is_in_the_toc_and_every_toc_entry_exists():
    listed = [TOC["root"]] + CHAPTERS + APPENDIX
    assert sorted(f"book/{p.stem}" for p in NOTEBOOKS) == sorted(c for c in listed if (ROOT / f"{c}.ipynb").exists())
    for entry in listed:
        assert (ROOT / f"{entry}.ipynb").exists() or (ROOT / f"{entry}.md").exists(), entry


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_first_cell_installs_deepnotes_from_the_configured_repository(path):
    cells = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
    first = "".join(cells[0]["source"])
    assert 'find_spec("deepnotes") is None' in first and "pip" in first
    # pinned to the release tag of the package's version, at the configured repository
    pins = re.findall(r'DEEPNOTES = "git\+(https://[^"@]+)@([^"]+)"', first)
    version = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M).group(1)
    assert pins == [(CONFIG["repository"]["url"], f"v{version}")]
    assert 'raise SystemExit(f"Could not install deepnotes from {DEEPNOTES}' in first  # one line, naming the URL
    assert "remove-cell" in cells[0]["metadata"].get("tags", [])  # not shown in the HTML


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_only_checked_cells_store_outputs(path):
    nb = json.loads(path.read_text())
    checked = 0
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        assert "NBVAL_CHECK_OUTPUT" not in "".join(cell["source"]), "check markers are cell tags, not comments"
        if "nbval-check-output" in cell.get("metadata", {}).get("tags", []):
            assert cell["outputs"], "a checked cell must keep its output for nbval to compare"
            checked += 1
        else:
            assert not cell["outputs"], "strip outputs of unchecked cells; the build executes them"
    assert checked >= 1
    assert "widgets" not in nb.get("metadata", {})


def test_book_builds_with_every_chapter_and_its_figures(built_book):
    html_dir = built_book.html
    assert (html_dir / "index.html").exists()
    for chapter in CHAPTERS:
        page = html_dir / f"{chapter}.html"
        assert page.exists(), chapter
        html = page.read_text()
        nb = json.loads((ROOT / f"{chapter}.ipynb").read_text())
        plotting = sum("show_figures()" in "".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
        images = re.findall(r'<img[^>]+src="([^"]+)"', html)
        local = [src for src in images if not src.startswith(("http", "data:")) and "_static" not in src]
        assert len(local) >= plotting, f"{chapter}: {len(local)} images for {plotting} plotting cells"
        for src in local:
            assert (page.parent / src).resolve().exists(), src
        assert "application/vnd.jupyter.widget-state+json" in html, "slider state missing"
        assert "Traceback" not in html
        assert "| --- |" not in html, f"{chapter}: a Markdown output's table was printed as text, not rendered"
        if built_book.local_widgets:
            assert "html-manager/embed.js" in html and "cdn.jsdelivr.net/npm/@jupyter-widgets" not in html
    pages = {p: p.read_text() for p in html_dir.rglob("*.html") if "_static" not in p.relative_to(html_dir).parts}
    heavy = [str(p.relative_to(html_dir)) for p, text in pages.items() if "fontawesome.js" in text]
    assert heavy == [] and not (html_dir / "_static" / "scripts" / "fontawesome.js").exists(), heavy
    if built_book.local_widgets:
        assert all("mathjax/tex-chtml.js" not in text for text in pages.values()), "MathJax's combined menu build"
        assert (html_dir / "_static" / "mathjax" / "startup.js").exists()
        assert (html_dir / "_static" / "html-manager" / "embed.js").exists()
        assert "html-manager/embed.js" not in (html_dir / "book" / "intro.html").read_text(), (
            "the widget manager must load only on pages with widgets"
        )


def test_lean_pages_removes_the_dropped_scripts_only(tmp_path):
    """_ext/lean_pages.py removes the theme's fontawesome.js tag (with or without its digest) from every page and its
    file, and leaves every other script."""
    import sys

    sys.path.insert(0, str(ROOT / "_ext"))
    from lean_pages import drop_scripts

    (tmp_path / "_static" / "scripts").mkdir(parents=True)
    (tmp_path / "_static" / "scripts" / "fontawesome.js").write_text("icons")
    (tmp_path / "book").mkdir()
    kept = '<script defer src="../_static/scripts/bootstrap.js?digest=1"></script>'
    page = tmp_path / "book" / "a.html"
    page.write_text(f'<head>{kept}\n<script defer src="../_static/scripts/fontawesome.js?digest=1"></script>\n</head>')
    (tmp_path / "b.html").write_text('<script src="_static/scripts/fontawesome.js"></script><p>x</p>')
    (tmp_path / "c.html").write_text("<p>no scripts</p>")
    assert drop_scripts(tmp_path) == 2
    assert page.read_text() == f"<head>{kept}\n</head>" and (tmp_path / "b.html").read_text() == "<p>x</p>"
    assert not (tmp_path / "_static" / "scripts" / "fontawesome.js").exists()


def served_notebook(built_book, doc) -> dict:
    """The executed notebook behind the page's ".ipynb" download link."""
    page = built_book.html / f"{doc}.html"
    links = set(re.findall(r'href="([^"]*_sources/[^"]+\.ipynb)"', page.read_text()))
    assert len(links) == 1, f"{doc}: download links {links}"
    return json.loads((page.parent / links.pop()).resolve().read_text())


@pytest.mark.parametrize("doc", CHAPTERS + APPENDIX)
def test_the_download_button_serves_the_executed_notebook(built_book, doc):
    """The page's ".ipynb" link leads to the notebook the build ran: every code cell executed, its figures
    and tables inside, the sliders' widget state saved (the stored notebook has none of these)."""
    served = served_notebook(built_book, doc)
    stored = json.loads((ROOT / f"{doc}.ipynb").read_text())
    code = [c for c in served["cells"] if c["cell_type"] == "code"]
    assert len(code) == sum(c["cell_type"] == "code" for c in stored["cells"]), "not the same notebook"
    assert all(c["execution_count"] for c in code), f"{doc}: a code cell was not executed"
    outputs = sum(len(c["outputs"]) for c in code)
    assert outputs > sum(len(c["outputs"]) for c in stored["cells"] if c["cell_type"] == "code")
    if doc in CHAPTERS:
        figures = sum("image/png" in o.get("data", {}) for c in code for o in c["outputs"])
        assert figures >= 1, f"{doc}: the download has no figure"
        assert served["metadata"]["widgets"]["application/vnd.jupyter.widget-state+json"]["state"], (
            f"{doc}: the download lacks the sliders' widget state"
        )


def figure_pngs(notebook: dict) -> list[bytes]:
    """Every PNG a notebook shows: its image outputs and the images in its sliders' widget state."""
    import base64

    code = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    pngs = [
        base64.b64decode(o["data"]["image/png"]) for c in code for o in c["outputs"] if "image/png" in o.get("data", {})
    ]
    state = notebook["metadata"].get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
    for model in state.get("state", {}).values():
        pngs += [base64.b64decode(b["data"]) for b in model.get("buffers", []) if b["data"].startswith("iVBOR")]
    return pngs


@pytest.mark.parametrize("doc", CHAPTERS)
def test_the_plan_counts_the_figures_the_page_draws(built_book, doc):
    """The estimate prices every figure a chapter draws (cost.model.Render): its figures module's FIGURES are the
    image outputs of the executed page, and its sliders' frames (slider_frames of the chapter's sliders)
    are the images in the page's widget state."""
    import importlib

    from deepnotes.cost.model import slider_frames

    stem = doc.split("/")[-1]
    served = served_notebook(built_book, doc)
    code = [c for c in served["cells"] if c["cell_type"] == "code"]
    shown = sum("image/png" in o.get("data", {}) for c in code for o in c["outputs"])
    assert shown == importlib.import_module(f"deepnotes.chapters.{stem}.figures").FIGURES
    frames = len(figure_pngs(served)) - shown
    from deepnotes import get_budget

    sliders = importlib.import_module(f"deepnotes.chapters.{stem}.controls").sliders(get_budget("smoke"))
    assert frames == slider_frames(sliders.values())


@pytest.mark.parametrize("doc", CHAPTERS)
def test_run_chapter_reads_the_estimate_the_page_printed(built_book, doc):
    """``tools/run_chapter.py --check-plan`` sets the page's own printed estimate (its budget cell's, for
    this machine) beside the measured time: it finds it in every executed chapter."""
    import nbformat
    from run_chapter import printed_estimate

    printed = printed_estimate(nbformat.from_dict(served_notebook(built_book, doc)))
    assert printed is not None, f"{doc}: no estimate found in the executed page"
    device, seconds = printed
    assert device.startswith(("this CPU", "NVIDIA")) and seconds >= 1, printed


@pytest.mark.parametrize("doc", CHAPTERS)
def test_every_figure_follows_the_books_figure_rules(built_book, doc):
    """Every figure the chapter drew, static or behind a slider, left through the book's PNG writer, its
    legends tell their lines apart (no two entries alike, no marker on a dash), and its smallest text,
    scaled to the column it is shown in, stays ≥ 9 px on a laptop and ≥ 7 px on a phone (the browser test
    measures the displayed size; this is the same rule without a browser)."""
    from PIL import Image

    from deepnotes.show import readable
    from deepnotes.show.png import MIN_TEXT_KEY, PROBLEMS_KEY, png_text

    pngs = figure_pngs(served_notebook(built_book, doc))
    assert pngs, f"{doc}: no figure"
    problems = []
    for k, data in enumerate(pngs):
        text, width = png_text(data), Image.open(io.BytesIO(data)).width
        if MIN_TEXT_KEY not in text:
            problems.append(f"figure {k}: not written by deepnotes.show.png.figure_png")
            continue
        if text[PROBLEMS_KEY]:
            problems.append(f"figure {k}: {text[PROBLEMS_KEY]}")
        for window, floor in readable.MIN_TEXT_PX.items():
            shown = float(text[MIN_TEXT_KEY]) * min(1.0, readable.COLUMN_PX[window] / width)
            if shown < floor:
                problems.append(f"figure {k}: smallest text {shown:.1f} px in a {window} px window (< {floor:g})")
    assert not problems, f"{doc}:\n" + "\n".join(problems)


@pytest.mark.parametrize("doc", CHAPTERS)
def test_each_chapter_trains_exactly_the_ensembles_its_cost_plan_counts(built_book, doc):
    """The estimate a chapter prints before it runs counts the chapter's plan (deepnotes.chapters.catalog);
    the build logged every ensemble the chapter really trained (DEEPNOTES_WORK_LOG): the two must agree."""
    from deepnotes.chapters.catalog import chapter_plan
    from deepnotes.cost import model as cost_model

    if built_book.work_log is None:
        pytest.skip("this build kept no work log")
    stem = doc.split("/")[-1]
    ran = cost_model.read_train_log(built_book.work_log)
    assert stem in ran, f"{stem}: its budget cell did not mark the chapter in the work log"
    assert cost_model.plan_differences(chapter_plan(stem, "smoke"), ran[stem]) == []


def test_every_answer_and_glued_sentence_reads_its_verdicts(built_book):
    """Issue 61: every chapter's answer (and every value glued into its prose) was rendered from its verdict rows: no
    outcome word outside a verdict's clause, no clause over a row of another status or not on the page, no single
    seed's value where the row gives the median (tools/check_sentences.py; tests/show/test_say.py shows that it
    fails on each kind of problem and on c1850d2's typed answers)."""
    import check_sentences

    assert check_sentences.record_problems(ROOT / "book" / "_verdicts") == []
    page = (built_book.html / "book" / "initialization.html").read_text()
    assert 'title="this page&#x27;s verdict row:' in page or "title=\"this page's verdict row:" in page


def test_the_claims_ledger_matches_every_verdict_the_chapters_showed(built_book):
    """The build ran every chapter, each recorded its verdicts, and the ledger page read them last."""
    from deepnotes.chapters import CHAPTERS as STEMS
    from deepnotes.ledger import page
    from deepnotes.ledger.record import read_records
    from deepnotes.show.verdict_words import source_name

    records = read_records(ROOT / "book" / "_verdicts")
    assert sorted(f"book/{c}" for c in STEMS) == sorted(CHAPTERS), "the ledger knows every chapter of the toc"
    assert sorted(records) == sorted(STEMS) and {r.budget for r in records.values()} == {"smoke"}
    ledger = page.build(records)
    assert not ledger.dangling and not ledger.unsourced, page.problems(ledger)
    html = (built_book.html / "book" / "ledger.html").read_text()
    for cov in page.coverage(ledger):
        assert f"{source_name(cov.seed)}:" in html
    assert "Every verdict names the items it tests" in html
    pages = {c: (built_book.html / "book" / f"{c}.html").read_text() for c in STEMS}
    for rows in ledger.rows.values():
        for row in rows:
            assert row.state != "not checked" or row.item.not_checked or row.verdicts or row.mentions, (
                f"{row.seed} {row.item.ref}: say why it is not checked (or cite it from a verdict that says why)"
            )
            assert not (row.verdicts and row.item.not_checked), (
                f"{row.seed} {row.item.part} {row.item.ref}: a verdict cites it; its 'not checked' reason is stale"
            )
            for v in row.verdicts:
                assert f"{v.chapter}.html#{v.anchor}" in html and f"id='{v.anchor}'" in pages[v.chapter], v.claim


def test_every_ledger_item_gets_one_status_and_every_setting_one_answer(built_book):
    """One item, one status (issue 44): no setting (a claim's text) is judged two ways by the verdicts that
    name its item as subject, and every item whose settings disagree is shown on the ledger page as such."""
    from deepnotes.ledger import page
    from deepnotes.ledger.record import read_records

    ledger = page.build(read_records(ROOT / "book" / "_verdicts"))
    assert page.conflicts(ledger) == []
    html = (built_book.html / "book" / "ledger.html").read_text()
    for line in page.mixed(ledger):
        assert line.split(":")[0] in html, line


def test_every_verdict_a_ledger_reason_names_is_recorded(built_book):
    """Issue 44: each {{reference}} in an inventory reason finds a verdict in the build's records, and the
    ledger page shows its status (none reads "not recorded in this build")."""
    from deepnotes.ledger import page
    from deepnotes.ledger.inventory import inventory
    from deepnotes.ledger.record import read_records

    verdicts = [v for rec in read_records(ROOT / "book" / "_verdicts").values() for v in rec.verdicts]
    refs = {
        ref
        for its in inventory().values()
        for it in its
        for reason in (it.not_checked, it.if_unchecked)
        for ref in page.references(reason or "")
    }
    assert refs and not [ref for ref in refs if not page.referenced_verdicts(ref, verdicts)]
    assert "not recorded in this build" not in (built_book.html / "book" / "ledger.html").read_text()


def test_every_training_outcome_verdict_follows_its_claims_direction(built_book):
    """Issue 30: a verdict on which runs train carries the source's direction (verdicts.Outcome); its
    recorded status is what that direction and the recorded measurements give, in every chapter."""
    from deepnotes.ledger.record import read_records
    from deepnotes.show import verdicts as vd

    records = read_records(ROOT / "book" / "_verdicts")
    with_outcome = [(c, r) for c, rec in records.items() for r in rec.verdicts if r.outcome]
    assert {"thousand_layers", "why_residuals"} <= {c for c, _ in with_outcome}
    for chapter, r in with_outcome:
        expected = vd.HOLDS if vd.outcome_of(r.outcome).holds() else vd.WRONG
        assert r.status == expected, f"{chapter}: {r.claim}: {r.status}, its direction gives {expected}"
        assert vd.outcome_of(r.outcome).seeds >= vd.MIN_SEEDS, f"{chapter}: {r.claim}: too few seeds"


def test_chapters_that_report_one_experiment_give_one_answer(built_book):
    """Issue 30: increment explosion (one seed, 0.10, wrong) and Post-Norm vs Pre-Norm (three seeds,
    0.88, holds) once disagreed on the same N = 12 warmup run. Verdicts that name a shared experiment
    (Outcome.setting) must measure the same values and reach the same status on every page."""
    from deepnotes.ledger.page import disagreements
    from deepnotes.ledger.record import read_records
    from deepnotes.show import verdicts as vd

    records = read_records(ROOT / "book" / "_verdicts")
    shared = {c for c, rec in records.items() for r in rec.verdicts if r.outcome and vd.outcome_of(r.outcome).setting}
    assert {"increment_explosion", "post_vs_pre_norm"} <= shared
    assert disagreements(records) == []


@pytest.mark.parametrize("doc", [c for c in CHAPTERS if (ROOT / "deepnotes" / "chapters" / c.split("/")[-1]).is_dir()])
def test_every_chapter_shows_the_code_it_is_about_as_the_package_has_it(built_book, doc):
    """Each chapter page shows its model code (figures.model_code()) with the file and line numbers the
    package has now: the built page and the source agree line for line."""
    import importlib

    view = importlib.import_module(f"deepnotes.chapters.{doc.split('/')[-1]}.figures").model_code()
    html = (built_book.html / f"{doc}.html").read_text()
    caption = re.search(
        r'<figure class="deepnotes-source-figure"><figcaption><code>([^<]+)</code>, lines (\d+)–(\d+)', html
    )
    assert caption, f"{doc}: no model code on the page"
    assert (caption.group(1), int(caption.group(2)), int(caption.group(3))) == (view.path, view.first, view.last)
    source = (ROOT / view.path).read_text().splitlines()[view.first - 1 : view.last]
    assert [line.strip() for line in source] == [line.strip() for line in view.lines]


def test_binder_pins_the_tested_python_and_torch():
    """Binder builds with runtime.txt's Python and binder/requirements.txt's torch: the versions CI tests
    (the CPU build of .ci/run's torch, from PyTorch's CPU index)."""
    ci = (ROOT / ".ci" / "run").read_text()
    tested = re.search(r"torch==([\d.]+)", ci).group(1)
    binder = (ROOT / "binder" / "requirements.txt").read_text()
    assert f"\ntorch=={tested}+cpu\n" in binder and "download.pytorch.org/whl/cpu" in binder
    assert (ROOT / "binder" / "runtime.txt").read_text().strip() == "python-3.11"


@pytest.mark.parametrize("doc", CHAPTERS)
def test_each_chapter_opens_with_its_answer(doc):
    """CONTRIBUTING rule 3 (issue 48): the title and a question of at most three lines, then the install cell, the
    collapsed setup cell and the cell tagged ``answer`` that shows answer.markdown above figures.answer; the
    browser test measures that its figure ends on a laptop's first screen."""
    nb = json.loads((ROOT / f"{doc}.ipynb").read_text())
    first, *_ = nb["cells"]
    title, question = "".join(first["source"]).split("\n\n", 1)
    assert title.startswith("# ") and question.startswith("**The question.**") and question.count("\n") <= 2, question
    code = [c for c in nb["cells"] if c["cell_type"] == "code"][:3]
    assert [c["metadata"].get("tags") for c in code] == [["remove-cell"], ["hide-cell"], ["answer", "remove-input"]]
    answer = "".join(code[2]["source"])
    spots = [re.search(pattern, answer) for pattern in (r"\w+\.markdown\(", r"\w+\.answer\(", r"show_figures\(\)")]
    assert all(spots) and spots[0].start() < spots[1].start() < spots[2].start(), answer
