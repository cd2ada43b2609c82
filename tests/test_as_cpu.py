"""tools/as_cpu.py: the switches that make this machine run PyTorch's, MKL's, oneDNN's and deepnotes' code paths
for a smaller x86-64 CPU take effect (each library says so itself), a switch that does not take is an error, and
pytest runs under them (issue 60)."""

from __future__ import annotations

import subprocess
import sys

import as_cpu
import pytest

from deepnotes.core import kernels

ROOT = as_cpu.ROOT


@pytest.mark.parametrize("name", sorted(as_cpu.LEVELS))
def test_each_library_obeys_the_levels_switches(name):
    level = as_cpu.LEVELS[name]
    if not kernels.runs_here(level.target):
        pytest.skip(f"this CPU cannot run {level.target} code")
    said = as_cpu.check(name, level)
    assert said[0] == f"ATen: aten capability: {level.aten_says}"
    assert level.mkl_says in said[1] and level.onednn_says in said[2], said


def test_a_switch_that_does_not_take_is_an_error():
    """A level whose expected answer no library gives (as when a PyTorch release renames a switch) is refused,
    naming each library, rather than run on the wider code and called a pass."""
    level = as_cpu.LEVELS["avx2"]
    if not kernels.runs_here(level.target):
        pytest.skip(f"this CPU cannot run {level.target} code")
    wrong = level._replace(aten_says="AVX9", mkl_says="(Intel(R) AVX9)", onednn_says="isa:Intel AVX9")
    with pytest.raises(ValueError, match=r"did not obey them: ATen .*; MKL .*; oneDNN "):
        as_cpu.check("avx2", wrong)


def test_pytest_runs_under_the_switches():
    """A tiny selection through the tool: the kernel tests see the level (x86-64-v3 acts as the CPU: no native or
    x86-64-v4 build) and PyTorch reports AVX2."""
    level = as_cpu.LEVELS["avx2"]
    if not kernels.runs_here(level.target):
        pytest.skip(f"this CPU cannot run {level.target} code")
    selection = "tests/core/test_kernel_targets.py::test_the_targets_this_machine_cannot_run_are_named"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "as_cpu.py"), "avx2", "--", selection, "-s", "-q"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "ATen: aten capability: AVX2" in proc.stdout
    assert "targets run here: ['x86-64-v2', 'x86-64-v3']" in proc.stdout and "1 passed" in proc.stdout
