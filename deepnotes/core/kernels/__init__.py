"""The compiled CPU kernels: the C++ files in this folder, built for a target instruction set, cached
and loaded.

``blocks.cpp`` (the engine's N blocks, forward and backward) and ``adam.cpp`` (Adam with a rate per
member) are compiled on first use with the system's C++ compiler (``$CXX``, else ``c++``, ``g++`` or
``clang++``; a few seconds) into ``$DEEPNOTES_CACHE`` (default ``~/.cache/deepnotes``), one library per
target, keyed by the sources, the flags, the compiler and, for ``native``, the CPU's feature flags.

The target is the ``-march`` the library is built for, ``$DEEPNOTES_TARGET`` (:data:`TARGETS`;
default ``native``, the CPU at hand). The C++ reads the compiler's own macros for that target and sizes
its vectors and matrix-product tiles from them (``kernels/target.h``: 64-byte vectors on AVX-512,
32-byte on AVX and AVX2, 16-byte on SSE and ARM NEON; at most as many accumulators as leave registers
for the loads), so a build for ``x86-64-v3`` runs the code a reader's AVX2 laptop runs. The tests and
benchmarks set the switch to build and check every target this CPU can run (:func:`runs_here`).

Without a compiler, or where compiling fails, :func:`library` warns once and returns None; the engine
then runs the PyTorch path, which computes the same function.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
import warnings
from pathlib import Path

from deepnotes.core.validate import choice

KERNELS = Path(__file__).parent
SOURCES = (KERNELS / "blocks.cpp", KERNELS / "adam.cpp")
HEADERS = tuple(sorted(KERNELS.glob("*.h")))
ABI = 4  # deepnotes_blocks_abi() of the sources the callers speak to
TARGET_SWITCH = "DEEPNOTES_TARGET"
# the x86-64 levels as the psABI defines them, by the /proc/cpuinfo flags each adds to the one below
X86_64_V2 = ("ssse3", "sse4_1", "sse4_2", "popcnt", "cx16")
X86_64_V3 = (*X86_64_V2, "avx", "avx2", "fma", "bmi1", "bmi2", "f16c", "movbe", "abm")
X86_64_V4 = (*X86_64_V3, "avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl")
# target name → what the CPU must have to run a build for it; "native" is the CPU at hand
TARGETS = {
    "native": (),
    "x86-64-v2": X86_64_V2,
    "x86-64-v3": X86_64_V3,
    "x86-64-v4": X86_64_V4,
    "armv8-a": (),  # 64-bit ARM with NEON (every aarch64 CPU; Apple silicon natively)
}
X86_TARGETS = ("x86-64-v2", "x86-64-v3", "x86-64-v4")
FLAGS = (
    "-O3",
    "-fno-math-errno",
    "-fno-trapping-math",
    "-fno-signed-zeros",
    "-fassociative-math",
    "-std=c++17",
    "-shared",
    "-fPIC",
    "-pthread",
)


def target() -> str:
    """The target the kernels are built for: ``$DEEPNOTES_TARGET``, else ``native``."""
    return choice(TARGET_SWITCH, os.environ.get(TARGET_SWITCH) or "native", TARGETS)


def flags(name: str) -> tuple[str, ...]:
    """The compiler's flags for target ``name``: :data:`FLAGS` and ``-march=<name>``."""
    return (*FLAGS, f"-march={choice('target', name, TARGETS)}")


def _cpu_flags() -> set[str]:
    try:
        line = next(
            (s for s in Path("/proc/cpuinfo").read_text().splitlines() if s.startswith(("flags", "Features"))), ""
        )
    except OSError:
        return set()
    return set(line.partition(":")[2].split())


def runs_here(name: str) -> bool:
    """Whether this CPU can run code built for target ``name``: ``native`` always; an x86-64 level on an
    x86-64 CPU with every feature of the level; ``armv8-a`` on a 64-bit ARM CPU."""
    choice("target", name, TARGETS)
    machine = platform.machine().lower()
    if name == "native":
        return True
    if name == "armv8-a":
        return machine in ("aarch64", "arm64")
    return machine in ("x86_64", "amd64") and set(TARGETS[name]) <= _cpu_flags()


def cache_dir() -> Path:
    """Where compiled kernels are kept: ``$DEEPNOTES_CACHE``, else ``$XDG_CACHE_HOME/deepnotes``."""
    if os.environ.get("DEEPNOTES_CACHE"):
        return Path(os.environ["DEEPNOTES_CACHE"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "deepnotes"


def compiler() -> str | None:
    """The C++ compiler: ``$CXX``, else the first of ``c++``, ``g++``, ``clang++`` on the PATH."""
    return os.environ.get("CXX") or next((c for c in ("c++", "g++", "clang++") if shutil.which(c)), None)


def build(cxx: str, name: str, sources=SOURCES, stem: str = "kernels") -> Path:
    """The library of ``sources`` compiled by ``cxx`` for target ``name``, compiling it first unless the
    cache has it (a ``native`` build is keyed by the CPU's feature flags too)."""
    version = subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=60).stdout
    text = b"".join(Path(p).read_bytes() for p in (*sources, *HEADERS))
    machine = platform.machine() + (" ".join(sorted(_cpu_flags())) if name == "native" else "")
    key = hashlib.sha256(text + " ".join(flags(name)).encode() + version.encode() + machine.encode()).hexdigest()
    out = cache_dir() / f"{stem}-{name}-{key[:16]}.so"
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(suffix=".so", dir=out.parent)  # worker processes may build at once
        os.close(fd)
        try:
            subprocess.run(
                [cxx, *flags(name), *map(str, sources), "-o", tmp],
                check=True,
                capture_output=True,
                text=True,
                timeout=600,
            )
            os.replace(tmp, out)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)
    return out


def library() -> ctypes.CDLL | None:
    """The compiled kernels for :func:`target`, or None (no compiler, or compiling failed: one warning)."""
    return _library(target(), compiler())


@functools.lru_cache(maxsize=None)
def _library(name: str, cxx: str | None) -> ctypes.CDLL | None:
    if cxx is None:
        warnings.warn(
            "no C++ compiler found (set CXX): the engine runs its blocks as PyTorch operations, "
            "which is slower on the CPU but computes the same",
            RuntimeWarning,
            stacklevel=3,
        )
        return None
    try:
        if not runs_here(name):
            raise OSError(f"this CPU cannot run code built for {name}")
        lib = ctypes.CDLL(str(build(cxx, name)))
        if lib.deepnotes_blocks_abi() != ABI:
            raise OSError(f"ABI {lib.deepnotes_blocks_abi()} != {ABI}")
    except (OSError, subprocess.SubprocessError) as err:
        detail = getattr(err, "stderr", "") or err
        warnings.warn(
            f"compiling deepnotes/core/kernels/*.cpp for {name} with {cxx} failed ({str(detail)[:500]}): "
            "the engine runs its blocks as PyTorch operations instead",
            RuntimeWarning,
            stacklevel=3,
        )
        return None
    return lib


def described() -> str:
    """What the kernels in use were built for, in words: ``native (AVX-512: 64-byte vectors, tiles of
    4 × 4)``, from the library itself."""
    lib = library()
    if lib is None:
        return "none (PyTorch path)"
    info = (ctypes.c_int64 * 4)()
    lib.deepnotes_kernels_shape(info)
    vector, registers, rows, vectors = info
    return f"{target()} ({vector}-byte vectors, {registers} registers, tiles of {rows} rows x {vectors} vectors)"
