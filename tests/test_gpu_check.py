"""tools/gpu_check.py's pieces on the CPU (issue 62): the check of the same numbers runs (the CPU against itself:
exact), a benchmark's summary line is parsed, the table shows every piece, a script past its limit is recorded as
timed out, and without CUDA the tool exits 2 with one line."""

from __future__ import annotations

import sys

import pytest
import torch
from book_paths import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import gpu_check  # noqa: E402


def test_the_same_numbers_piece_runs_and_reads_a_divergence():
    """On the CPU the three runs are the CPU's (the captured one without a graph): exactly equal; the captured step
    took the steps after the 3-step warmup, and LAMB's none."""
    adam, lamb = gpu_check.same_numbers("cpu", optimizers=("adam", "lamb"), steps=10)
    for run in ("uncaptured", "captured"):
        assert adam[f"{run}_diverged_match"] and adam[f"{run}_max_loss_rel"] == 0.0
        assert adam[f"{run}_max_weight_rel"] == 0.0
        assert adam[f"{run}_diverged_at"][1] is not None and adam[f"{run}_diverged_at"][0] is None  # member 1 is forced
    assert adam["captured_steps"] == 7 and lamb["captured_steps"] == 0


def test_a_summary_line_is_parsed_and_the_table_shows_every_piece():
    out = "warming up\nchapter N=3: members=21 member_step_ms=2.5 target=native launches=480 captured=0\n"
    got = gpu_check.summary(out, "chapter N=")
    assert got["member_step_ms"] == 2.5 and got["launches"] == 480.0 and got["target"] == "native"
    assert gpu_check.summary("nothing", "chapter N=") == {}
    results = {
        "same_numbers": {"status": "ok", "rows": [gpu_check.same_numbers("cpu", ("sgd",), 3)[0]]},
        "bench_engine": {"status": "ok", "seconds": 12.0, "summary": got},
        "plan_gpu": {"status": "timed out", "seconds": 120.0, "summary": {}},
    }
    text = gpu_check.table(results, "NVIDIA H200")
    assert text.startswith("GPU check on NVIDIA H200") and "| same numbers, sgd, captured |" in text
    assert (
        "member_step_ms=2.5" in text and "plan_gpu (timed out, 120 s)" in text and "bench_train_step (not run" in text
    )


def test_a_script_past_its_limit_is_recorded_and_the_tool_stops_without_cuda(monkeypatch, tmp_path, capsys):
    slow = gpu_check.run_script(["-c", "import time; print('started', flush=True); time.sleep(30)"], 1)
    assert slow["status"] == "timed out"
    assert gpu_check.run_script(["-c", "raise SystemExit(3)"], 30)["status"] == "failed (3)"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert gpu_check.main([str(tmp_path)]) == 2
    assert capsys.readouterr().out.strip() == gpu_check.NO_CUDA and not list(tmp_path.iterdir())


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device: tools/gpu_check.py runs it there")
def test_the_device_trains_the_same_numbers_as_the_cpu():
    for row in gpu_check.same_numbers("cuda"):
        for run in ("uncaptured", "captured"):
            assert row[f"{run}_diverged_match"] and row[f"{run}_max_loss_rel"] < 1e-4, row
        assert row["captured_steps"] == (0 if row["optimizer"] == "lamb" else 7), row
