"""Run the numerics tests as a smaller x86-64 CPU runs them (issue 60): PyTorch's own kernels, its BLAS (MKL) and
oneDNN limited to that CPU's instructions, and deepnotes' compiled kernels built for its x86-64 level.

A test that passes on the AVX-512 machines CI and development use can fail on a reader's AVX2 laptop: PyTorch's
float32 GELU is oneDNN's, compiled at run time for the CPU at hand, and differs between AVX-512 and AVX2 builds;
MKL picks its kernels the same way. Each of the three libraries has a documented switch that caps the
instructions it uses, so one machine can run the code paths of the smaller ones:

    python tools/as_cpu.py avx2               # an AVX2 + FMA laptop (x86-64-v3): most laptops, Binder, cloud notebooks
    python tools/as_cpu.py default            # an older CPU with SSE4.2 only (x86-64-v2)
    python tools/as_cpu.py avx2 --check       # say what each library runs under the switches, and stop
    python tools/as_cpu.py avx2 -- -k gelu    # arguments after -- go to pytest (in place of the selection)

Before the tests it checks, in a fresh process, that every switch took: PyTorch's reported capability, the ISA
oneDNN's verbose mode names and the instructions MKL's verbose mode names; a switch that did not take is an error,
not a pass on the wider code. ``DEEPNOTES_TARGET`` set to the level also caps the targets the per-target kernel
tests build (``tests/core/test_kernel_targets.py``). CI runs both levels after the whole suite (``.ci/run``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from deepnotes import cli  # noqa: E402


class Level(NamedTuple):
    """One CPU level: the switches' values, and what each library names when it obeys them."""

    target: str  # deepnotes' kernels: DEEPNOTES_TARGET (an x86-64 psABI level)
    aten: str  # PyTorch's ATen kernels: ATEN_CPU_CAPABILITY
    mkl: str  # MKL_ENABLE_INSTRUCTIONS
    onednn: str  # ONEDNN_MAX_CPU_ISA
    aten_says: str  # torch.backends.cpu.get_cpu_capability()
    mkl_says: str  # in MKL_VERBOSE's first line
    onednn_says: str  # in ONEDNN_VERBOSE's "isa:" line


LEVELS = {
    "avx2": Level("x86-64-v3", "avx2", "AVX2", "AVX2", "AVX2", "(Intel(R) AVX2)", "isa:Intel AVX2"),
    "default": Level("x86-64-v2", "default", "SSE4_2", "SSE41", "DEFAULT", "(Intel(R) SSE4.2)", "isa:Intel SSE4.1"),
}
# the modules that compare against PyTorch's CPU operators: the kernels (every target), the compiled blocks and
# Adam, the engine against the reference, the training loop and data, the reference models and norms, and the
# fuzzer's numeric entry points
NUMERICS = (
    "tests/core/test_kernel_targets.py",
    "tests/core/test_fused.py",
    "tests/core/test_engine.py",
    "tests/core/test_train_data.py",
    "tests/core/test_models.py",
    "tests/core/test_init_norms.py",
    "tests/test_fuzz.py",
)
# what the probe runs: a float32 GELU (oneDNN's), a float32 product (MKL's sgemm) and the capability (ATen's)
PROBE = (
    "import torch; torch.nn.functional.gelu(torch.randn(4096)); a = torch.randn(256, 256); a @ a; "
    "print('aten capability:', torch.backends.cpu.get_cpu_capability())"
)


def environment(level: Level) -> dict[str, str]:
    """This process's environment with the four switches set to ``level``."""
    return {
        **os.environ,
        "DEEPNOTES_TARGET": level.target,
        "ATEN_CPU_CAPABILITY": level.aten,
        "MKL_ENABLE_INSTRUCTIONS": level.mkl,
        "ONEDNN_MAX_CPU_ISA": level.onednn,
    }


def check(name: str, level: Level) -> list[str]:
    """Run :data:`PROBE` under the switches with the libraries' verbose modes on; return one line per library
    saying what it ran. Raises ``ValueError`` naming each switch that did not take (a CPU without the level's
    instructions, a PyTorch built without MKL or oneDNN, a switch renamed by a later version)."""
    from deepnotes.core import kernels

    if not kernels.runs_here(level.target):
        raise ValueError(f"this CPU cannot run {level.target} code, so it cannot act as the {name!r} level")
    env = {**environment(level), "MKL_VERBOSE": "1", "ONEDNN_VERBOSE": "1"}
    proc = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise ValueError(f"the probe failed under the {name!r} switches: {proc.stderr.strip()[-300:]}")
    lines = proc.stdout.splitlines()
    said = {
        "ATen": next((s for s in lines if s.startswith("aten capability:")), ""),
        "MKL": next((s for s in lines if s.startswith("MKL_VERBOSE oneMKL")), ""),
        "oneDNN": next((s for s in lines if ",isa:" in s), ""),
    }
    wanted = {"ATen": f"aten capability: {level.aten_says}", "MKL": level.mkl_says, "oneDNN": level.onednn_says}
    missed = [
        f"{lib} ({said[lib] or 'said nothing'}; wanted {wanted[lib]!r})" for lib in said if wanted[lib] not in said[lib]
    ]
    if missed:
        raise ValueError(f"under the {name!r} switches these libraries did not obey them: " + "; ".join(missed))
    return [f"{lib}: {said[lib]}" for lib in said] + [f"deepnotes kernels: DEEPNOTES_TARGET={level.target}"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("level", choices=sorted(LEVELS), help="the CPU to act as")
    parser.add_argument("--check", action="store_true", help="only check that the switches take, and say so")
    parser.add_argument("pytest_args", nargs="*", help="after --: pytest's arguments (default: the numerics tests)")
    args = parser.parse_args()
    level = LEVELS[args.level]
    for line in check(args.level, level):
        print(line, flush=True)
    if args.check:
        return 0
    command = [sys.executable, "-m", "pytest", *(args.pytest_args or NUMERICS)]
    print(f"as {args.level}: {' '.join(command[1:])}", flush=True)
    return subprocess.run(command, env=environment(level), cwd=ROOT).returncode


if __name__ == "__main__":
    cli.run(main)
