"""The layout rule, read from the sources: book/<stem>.ipynb ↔ deepnotes/chapters/<stem>/, notebooks
that only call their package, and verdicts whose status is never typed by hand."""
from __future__ import annotations

import ast
import json

import pytest

from book_paths import APPENDIX, ROOT

NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))
CHAPTERS = ROOT / "deepnotes" / "chapters"
PACKAGES = sorted(p for p in CHAPTERS.iterdir() if p.is_dir() and not p.name.startswith("_"))
APPENDIX_PACKAGES = {"ledger": ROOT / "deepnotes" / "ledger"}   # book/ledger.ipynb ↔ deepnotes/ledger/
MAX_CELL_LINES = 25
STATUS_NAMES = {"HOLDS", "APPROX", "WRONG"}


def code_cells(path):
    """(index, source) of every code cell, with IPython magics (% and ! lines) commented out."""
    cells = json.loads(path.read_text())["cells"]
    for k, cell in enumerate(cells):
        if cell["cell_type"] == "code":
            src = "".join(cell["source"])
            yield k, "\n".join("#" + line if line.lstrip().startswith(("%", "!")) else line
                               for line in src.splitlines())


def python_sources():
    """(label, source) of every module of deepnotes/ and every notebook cell of book/."""
    for path in sorted((ROOT / "deepnotes").rglob("*.py")):
        yield str(path.relative_to(ROOT)), path.read_text()
    for path in NOTEBOOKS:
        for k, src in code_cells(path):
            yield f"{path.relative_to(ROOT)} cell {k}", src


def test_every_chapter_has_its_package_and_every_package_its_chapter():
    stems = {p.stem for p in NOTEBOOKS}
    assert stems - set(APPENDIX_PACKAGES) == {p.name for p in PACKAGES}
    assert all(package.is_dir() and f"book/{stem}" in APPENDIX for stem, package in APPENDIX_PACKAGES.items())
    for package in PACKAGES:
        assert (package / "__init__.py").exists(), package


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_cells_only_call_their_package(path):
    """No def, class or lambda in a notebook, and no code cell over 25 non-blank lines."""
    problems = []
    for k, src in code_cells(path):
        lines = sum(1 for line in src.splitlines() if line.strip())
        if lines > MAX_CELL_LINES:
            problems.append(f"cell {k}: {lines} lines")
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                problems.append(f"cell {k}: {type(node).__name__} at line {node.lineno}")
    assert not problems, problems


def typed_statuses(src: str) -> list[str]:
    """Calls whose verdict status is typed, not computed: check_true with a literal or positional
    ``ok``, check_graded with a literal ``holds`` or ``approx``, and Verdict(...) given HOLDS/APPROX/WRONG or a string as its status."""
    found = []
    for node in ast.walk(ast.parse(src)):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
        if name == "check_true":
            ok = [k.value for k in node.keywords if k.arg == "ok"]
            if node.args:
                found.append(f"line {node.lineno}: check_true with positional arguments")
            elif ok and isinstance(ok[0], ast.Constant):
                found.append(f"line {node.lineno}: check_true(ok={ok[0].value!r})")
        elif name == "check_graded":
            for k in node.keywords:
                if k.arg in ("holds", "approx") and isinstance(k.value, ast.Constant):
                    found.append(f"line {node.lineno}: check_graded({k.arg}={k.value.value!r})")
        elif name == "Verdict":
            status = node.args[4] if len(node.args) > 4 else next((k.value for k in node.keywords if k.arg == "status"), None)
            if isinstance(status, ast.Constant) or (isinstance(status, (ast.Name, ast.Attribute))
                                                    and getattr(status, "id", getattr(status, "attr", "")) in STATUS_NAMES):
                found.append(f"line {node.lineno}: Verdict with a typed status")
    return found


def test_no_verdict_status_is_typed_by_hand():
    problems = [f"{label}, {p}" for label, src in python_sources() for p in typed_statuses(src)]
    assert not problems, problems


def test_the_typed_status_scan_catches_what_it_should():
    bad = ("check_true(claim='c', source='s', claimed='a', computed='b', ok=False, reason='r')\n"
           "vd.check_true('c', 's', 'a', 'b', x > 1, 'r')\n"
           "Verdict('c', 's', 'a', 'b', HOLDS, 'r')\n"
           "Verdict('c', 's', 'a', 'b', status='wrong', reason='r')\n"
           "check_graded(claim='c', source='s', claimed='a', computed='b', holds=x > 1, approx=True, reason='r')\n")
    good = ("check_true(claim='c', source='s', claimed='a', computed='b', ok=x > 1, reason='r')\n"
            "Verdict('c', 's', 'a', 'b', HOLDS if x else WRONG, 'r')\n")
    assert len(typed_statuses(bad)) == 5
    assert typed_statuses(good) == []


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_a_chapter_imports_no_other_chapter(package):
    others = {p.name for p in PACKAGES} - {package.name}
    problems = []
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                parts = node.module.split(".")
                if parts[:2] == ["deepnotes", "chapters"] and len(parts) > 2 and parts[2] in others:
                    problems.append(f"{path.name}: from {node.module}")
    assert not problems, problems


def test_core_and_show_do_not_import_chapters():
    for sub in ("core", "show"):
        for path in (ROOT / "deepnotes" / sub).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and node.module:
                    assert not node.module.startswith("deepnotes.chapters"), f"{path}: {node.module}"


def test_every_package_folder_is_a_regular_package():
    """pip builds the wheel (Colab's install) from setuptools' find: a folder without __init__.py is
    silently left out of it, and the chapters with it."""
    folders = {p.parent for p in (ROOT / "deepnotes").rglob("*.py")} | {p.parent.parent for p in (ROOT / "deepnotes").rglob("*.py")}
    folders = {f for f in folders if f.is_relative_to(ROOT / "deepnotes") and "__pycache__" not in f.parts}
    missing = sorted(str(f.relative_to(ROOT)) for f in folders if not (f / "__init__.py").exists())
    assert not missing, missing
