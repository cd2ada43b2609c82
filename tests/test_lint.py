"""The code base passes its linter and formatter (ruff, configured in pyproject.toml: lines ≤ 120,
import order, unused names), and no function in the package grows past 60 lines."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from book_paths import ROOT

MAX_FUNCTION_LINES = 60
RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")


@pytest.mark.parametrize("command", [["check", "."], ["format", "--check", "."]], ids=["lint", "format"])
def test_ruff_passes(command):
    if RUFF is None:
        if os.environ.get("CI"):
            pytest.fail("ruff is missing in CI: requirements.txt installs it", pytrace=False)
        pytest.skip("ruff is not installed (requirements.txt installs it)")
    proc = subprocess.run([RUFF, *command], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]


def test_no_function_of_the_package_exceeds_sixty_lines():
    long = [
        f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for path in sorted((ROOT / "deepnotes").rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert not long, long
