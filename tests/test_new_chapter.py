"""Issue 64: ``tools/new_chapter.py STEM "Title"`` writes a chapter that passes its tests unchanged. In a copy of the
repository: the skeleton is written and listed, the layout rules and the lint pass with it, its own test passes, its
plans are kept and its derivation priced, the intro's stored tables count it, and its notebook runs at smoke; a
malformed or taken stem is refused in one line."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from book_paths import ROOT

STEM, TITLE = "demo_chapter", "A demo chapter"


def _copy(dest: Path) -> Path:
    """The repository's files (tracked, and untracked ones git does not ignore), copied to ``dest``."""
    listed = (
        subprocess.run(
            ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True, check=True
        )
        .stdout.decode()
        .split("\0")
    )
    archive = dest.parent / "repo.tar"
    with tarfile.open(archive, "w") as tar:
        for name in filter(None, listed):
            if (ROOT / name).is_file():
                tar.add(ROOT / name, arcname=name)
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")
    return dest


def _run(copy: Path, *args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(copy), "DEEPNOTES_BUDGET": "smoke"}
    return subprocess.run(
        [sys.executable, *args], cwd=copy, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.fixture(scope="module")
def copy(tmp_path_factory) -> Path:
    repo = _copy(tmp_path_factory.mktemp("repo") / "deepnotes")
    made = _run(repo, "tools/new_chapter.py", STEM, TITLE)
    assert made.returncode == 0, made.stderr
    return repo


@pytest.mark.slow
def test_the_skeleton_is_listed_everywhere_a_chapter_is(copy):
    assert f"- file: book/{STEM}" in (copy / "_toc.yml").read_text()
    assert f'"{STEM}",' in (copy / "deepnotes" / "chapters" / "__init__.py").read_text()
    assert (
        f"from deepnotes.chapters.{STEM}.chapter import CHAPTER" in (copy / "deepnotes/chapters/catalog.py").read_text()
    )
    for name in ("budget", "experiments", "claims", "figures", "controls", "answer", "chapter"):
        assert (copy / "deepnotes" / "chapters" / STEM / f"{name}.py").is_file(), name


@pytest.mark.slow
def test_the_skeleton_passes_the_layout_rules_the_lint_its_own_test_and_the_book_s_tables(copy):
    tests = (
        "tests/test_layout.py",
        "tests/test_lint.py",
        f"tests/chapters/test_{STEM}.py",
        "tests/core/test_plans_kept.py",  # its plans kept beside the others, theirs unchanged
        f"tests/core/test_cost.py::test_every_chapter_prices_the_derivations_its_page_shows[{STEM}]",
        "tests/test_intro.py::test_the_stored_intro_shows_the_package_tables_as_they_are_now",  # re-stored with it
    )
    run = _run(copy, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests)
    assert run.returncode == 0, run.stdout[-3000:]


@pytest.mark.slow
def test_the_skeleton_s_notebook_runs_at_smoke(copy, tmp_path):
    run = _run(copy, "tools/run_chapter.py", f"book/{STEM}.ipynb", str(tmp_path / "out.ipynb"))
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
    assert (tmp_path / "out.ipynb").is_file()


@pytest.mark.slow
@pytest.mark.parametrize(("stem", "said"), [("Bad-Stem", "STEM must be"), ("initialization", "exists already")])
def test_a_malformed_or_taken_stem_is_refused_in_one_line(copy, stem, said):
    run = _run(copy, "tools/new_chapter.py", stem, "Title")
    assert run.returncode == 2 and said in run.stderr and "Traceback" not in run.stderr, run.stderr


def test_a_chapter_is_appended_after_the_last_one_listed():
    """The tool adds an item after whatever the tuple ends with (a second new chapter after the first)."""
    import new_chapter

    text = 'CHAPTERS = (\n    "initialization",\n    "demo",\n)\nOTHER = (\n    "x",\n)\n'
    assert new_chapter._appended(text, "CHAPTERS = (", '"second"') == (
        'CHAPTERS = (\n    "initialization",\n    "demo",\n    "second",\n)\nOTHER = (\n    "x",\n)\n'
    )
