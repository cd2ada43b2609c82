"""Every script in benchmarks/ runs, at a tiny size (its ``--smoke`` flag), and prints its summary line:
an API change that breaks a benchmark fails here, not months later on a reader's machine. The figures
themselves are not checked (performance is measured by running the scripts, benchmarks/RESULTS.md)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from book_paths import ROOT

BENCHMARKS = ROOT / "benchmarks"
# script → (its arguments besides --smoke, a pattern its output must contain)
SUMMARIES = {
    "bench_door_checks.py": ([], r"shape=deep N=200 d=32 device=\S+ ms_per_step=[\d.]+"),
    "bench_engine.py": ([], r"engine N=3: reference_ms=\d+ engine_ms=\d+ .* peak_gflops=[\d.]+"),
    "bench_engine.py --workload chapter": (
        ["--workload", "chapter", "--target", "native", "--capture", "1"],
        r"chapter N=3: members=\d+ member_step_ms=[\d.]+ .* pytorch_path_ms=[\d.]+ target=native launches=[1-9]\d* "
        r"cpu_form_ops=[1-9]\d* captured=0",
    ),
    "bench_kernel_shapes.py": ([], r"kernel shapes target=native: shapes=2 rule_slower=\d+ worst_rule_ratio=[\d.]+"),
    "bench_live_slider.py": ([], r"increment explosion, depth    3, post      adam: live run +[\d.]+ s"),
    "bench_norms.py": ([], r"ratio RMSNorm/LayerNorm: forward [\d.]+, forward\+backward [\d.]+"),
    "bench_thousand_layers_plan.py": ([], r"thousand_layers plan \(smoke, cpu\) at 2 steps: \d+ runs"),
    "bench_thousand_layers_plan.py --dask 2 --glibc-malloc": (
        ["--dask", "2", "--glibc-malloc"],
        r"trained on a local Dask cluster of 2 one-thread worker processes, without MALLOC_TRIM_THRESHOLD_\n(.*\n)*"
        r"thousand_layers plan \(smoke, cpu\)",
    ),
    "bench_trainability_map.py": ([], r"\d+ runs of 2 steps in [\d.]+ s"),
    "bench_train_step.py": ([], r"train_step N=3: members=\d+ steps=2 member_step_ms=[\d.]+ read_every=1 device=cpu"),
    "bench_workers.py": ([], r"workers N=2: two_threads_s=[\d.]+ one_thread_s=[\d.]+ side_by_side_s="),
}


def test_every_benchmark_script_is_covered():
    assert {p.name for p in BENCHMARKS.glob("bench_*.py")} == {k.split()[0] for k in SUMMARIES}


@pytest.mark.parametrize("name", SUMMARIES)
def test_benchmark_runs_at_a_tiny_size(name):
    args, pattern = SUMMARIES[name]
    env = dict(os.environ, DEEPNOTES_BUDGET="smoke", CUDA_VISIBLE_DEVICES="", MPLBACKEND="Agg")
    proc = subprocess.run(
        [sys.executable, str(BENCHMARKS / name.split()[0]), *args, "--smoke"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert re.search(pattern, proc.stdout), proc.stdout[-3000:]
