"""The prepared device check (issue 62): one command, on a CUDA machine, in at most about 8 minutes of wall time.

    python tools/gpu_check.py OUT_DIR [--device cuda] [--depth 1000]

1. **Same numbers.** Ten steps of SGD, Adam and LAMB on a small four-member ensemble with one member forced to
   diverge and one warming up, trained on the CPU, on the device uncaptured and on the device captured as a CUDA
   graph (``deepnotes.core.train.CapturedStep``: steps 3–5 warm up, 6 is captured, 7–9 replay; LAMB is never
   captured), float32 all: the same diverged-at steps, the losses and the survivors' weights within float32
   rounding (relative errors printed) and the steps the captured step took.
2. **The engine's speed.** ``benchmarks/bench_engine.py --workload chapter`` with the step captured and not
   (member-step, launches per step) and ``benchmarks/bench_train_step.py`` (the training loop with its read-backs),
   on the device.
3. **The 1000-layer plan.** ``benchmarks/bench_thousand_layers_plan.py``: a 30-step slice of the plan at ``cpu``
   sizes and one at ``gpu`` sizes, on the device (seconds per step of each ensemble; the whole plan is that times
   its steps).
4. **A record.** ``OUT_DIR/gpu_check.json`` (every figure) and ``OUT_DIR/gpu_check.md`` (the table for
   ``benchmarks/RESULTS.md``).

Each piece runs under its own time limit and a piece that fails or runs out of time is recorded as such; the
others still run. Without CUDA it exits with status 2 and one line saying so. ``tests/test_gpu_check.py`` runs the
pieces on the CPU.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parents[1]
LIMITS_S = {
    "same_numbers": 90,
    "bench_engine": 120,
    "bench_engine_captured": 120,
    "bench_train_step": 60,
    "plan_cpu": 90,
    "plan_gpu": 90,
}
SUMMARY = re.compile(r"(\w+)=([^\s]+)")  # the key=value pairs of a benchmark's last line
NO_CUDA = "gpu_check: PyTorch finds no CUDA device here (torch.cuda.is_available() is False): nothing to check"


def same_numbers(device: str, optimizers: tuple[str, ...] = ("sgd", "adam", "lamb"), steps: int = 10) -> list[dict]:
    """Per optimizer: four members (Post-LN, Post-LN at a rate that diverges, Pre-LN with a 3-step warmup, DeepNorm)
    trained ``steps`` steps from the same seeds on the CPU, on ``device`` uncaptured (``DEEPNOTES_CAPTURE=0``) and on
    ``device`` as the loop runs there by default (captured on CUDA from step 3 + CAPTURE_WARMUP on; on a CPU, the
    captured loop's code without a graph): whether the diverged-at steps agree, the largest relative difference of a
    recorded loss and of a survivor's weight between the CPU and each device run, and how many steps the captured
    step took (0: none, as for LAMB)."""
    import torch

    from deepnotes.core import train as tr
    from deepnotes.core.config import ModelConfig, TrainConfig
    from deepnotes.core.data import MarkovLanguage
    from deepnotes.core.engine import Stack

    cpu_capture = "emulate" if torch.device(device).type == "cpu" else "1"
    rows = []
    for opt in optimizers:
        lrs = (0.1, 1e4, 0.05, 0.1) if opt == "sgd" else (1e-2, 1e3, 3e-3, 1e-2)
        cfgs = [
            ModelConfig(n_layers=4, d_model=16, n_heads=2, d_ff=32, vocab_size=8, max_len=8, norm=n)
            for n in ("post", "post", "pre", "deepnorm")
        ]
        tcfgs = [
            TrainConfig(optimizer=opt, lr=lr, steps=steps, warmup_steps=min(w, steps), batch_size=4, seq_len=8, seed=s)
            for lr, w, s in zip(lrs, (0, 0, 3, 0), (0, 1, 2, 3), strict=True)
        ]
        out = {}
        for name, where, capture in (
            ("cpu", "cpu", "0"),
            ("uncaptured", device, "0"),
            ("captured", device, cpu_capture),
        ):
            taken = []
            with mock.patch.dict(os.environ, {tr.CAPTURE_SWITCH: capture}), _counting_captured_steps(tr, taken):
                stack = Stack(cfgs, seeds=[c.seed for c in tcfgs], device=where)
                hists = tr.train_ensemble(stack, MarkovLanguage(8, seed=0), tcfgs)
            weights = {(n, k): stack.member(n, k).detach().cpu() for n in stack.slots for k in (0, 2, 3)}
            out[name] = hists, weights, len(taken)
        row = {"optimizer": opt, "device": str(torch.device(device)), "captured_steps": out["captured"][2]}
        for name in ("uncaptured", "captured"):
            row.update({f"{name}_{k}": v for k, v in _compared(out["cpu"], out[name]).items()})
        rows.append(row)
    return rows


def _compared(a, b) -> dict:
    """Two runs' (histories, survivors' weights): whether the diverged-at steps agree and the largest relative
    difference of a recorded loss and of a weight."""
    (ha, wa, _), (hb, wb, _) = a, b
    loss_err = max(
        (_rel(x, y) for p, q in zip(ha, hb, strict=True) for x, y in zip(p.losses, q.losses, strict=True)), default=0.0
    )
    weight_err = max(float((wa[key] - wb[key]).abs().max() / wa[key].abs().max().clamp_min(1e-30)) for key in wa)
    return {
        "diverged_at": [h.diverged_at for h in hb],
        "diverged_match": [h.diverged_at for h in ha] == [h.diverged_at for h in hb],
        "max_loss_rel": loss_err,
        "max_weight_rel": weight_err,
    }


@contextlib.contextmanager
def _counting_captured_steps(tr, taken: list):
    """Records in ``taken`` each step that deepnotes.core.train.CapturedStep runs (a warmup, the capture, a replay)."""
    run = tr.CapturedStep.run

    def counting(self, step, tokens, mask):
        taken.append(step)
        return run(self, step, tokens, mask)

    tr.CapturedStep.run = counting
    try:
        yield
    finally:
        tr.CapturedStep.run = run


def _rel(a: float, b: float) -> float:
    return 0.0 if a == b else abs(a - b) / max(abs(a), abs(b), 1e-30)


def summary(text: str, prefix: str) -> dict:
    """The key=value pairs of the last line of ``text`` that starts with ``prefix`` (a benchmark's summary line),
    numbers as floats; {} where there is none."""
    lines = [line for line in text.splitlines() if line.startswith(prefix)]
    if not lines:
        return {}
    pairs = dict(SUMMARY.findall(lines[-1]))
    return {k: _number(v) for k, v in pairs.items()}


def _number(v: str):
    try:
        return float(v)
    except ValueError:
        return v


def run_script(args: list[str], limit_s: float) -> dict:
    """One benchmark script under ``limit_s``: its status (ok, failed, timed out), wall seconds and output."""
    start = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=limit_s, check=False
        )
    except subprocess.TimeoutExpired as err:
        out = (err.stdout or b"").decode() if isinstance(err.stdout, bytes) else err.stdout or ""
        return {"status": "timed out", "seconds": limit_s, "output": out[-4000:]}
    status = "ok" if done.returncode == 0 else f"failed ({done.returncode})"
    return {"status": status, "seconds": time.perf_counter() - start, "output": (done.stdout + done.stderr)[-4000:]}


def pieces(device: str, depth: int) -> dict:
    """Every piece of the check, each under its limit (:data:`LIMITS_S`); what each measured."""
    results: dict = {}
    start = time.perf_counter()
    try:
        results["same_numbers"] = {"status": "ok", "rows": same_numbers(device)}
    except Exception as err:  # a failed piece is recorded; the others still run
        results["same_numbers"] = {"status": f"failed: {type(err).__name__}: {err}"[:500], "rows": []}
    results["same_numbers"]["seconds"] = time.perf_counter() - start
    engine = ["benchmarks/bench_engine.py", "--workload", "chapter", "--device", device, "--depth", str(depth)]
    scripts = {
        "bench_engine": (engine + ["--repeats", "3", "--warmup", "1", "--capture", "0"], "chapter N="),
        "bench_engine_captured": (engine + ["--repeats", "3", "--warmup", "4", "--capture", "1"], "chapter N="),
        "bench_train_step": (["benchmarks/bench_train_step.py", "--device", device, "--steps", "10"], "train_step"),
        "plan_cpu": (["benchmarks/bench_thousand_layers_plan.py", "30", "1", "cpu"], "thousand_layers plan"),
        "plan_gpu": (["benchmarks/bench_thousand_layers_plan.py", "30", "1", "gpu"], "thousand_layers plan"),
    }
    for name, (args, prefix) in scripts.items():
        results[name] = run_script(args, LIMITS_S[name])
        results[name]["summary"] = summary(results[name]["output"], prefix)
    return results


def table(results: dict, device_name: str) -> str:
    """The Markdown table of a check (for ``benchmarks/RESULTS.md``): one row per figure."""
    rows = [f"GPU check on {device_name}", "", "| piece | figure | value |", "| --- | --- | --- |"]
    same = results.get("same_numbers", {})
    for r in same.get("rows", []):
        for run in ("uncaptured", "captured"):
            rows.append(
                f"| same numbers, {r['optimizer']}, {run} | diverged-at equal to the CPU's; loss, weight rel. error"
                + ("; steps through the captured step" if run == "captured" else "")
                + f" | {r[f'{run}_diverged_match']}; {r[f'{run}_max_loss_rel']:.2g}, {r[f'{run}_max_weight_rel']:.2g}"
                + (f"; {r['captured_steps']}" if run == "captured" else "")
                + " |"
            )
    if not same.get("rows"):
        rows.append(f"| same numbers | status | {same.get('status', 'not run')} |")
    for name in ("bench_engine", "bench_engine_captured", "bench_train_step", "plan_cpu", "plan_gpu"):
        piece = results.get(name, {})
        got = piece.get("summary") or {}
        shown = ", ".join(f"{k}={_shown(v)}" for k, v in got.items()) or "—"
        rows.append(
            f"| {name} ({piece.get('status', 'not run')}, {piece.get('seconds', math.nan):.0f} s) | summary | {shown} |"
        )
    return "\n".join(rows) + "\n"


def _shown(v) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, help="folder for gpu_check.json and gpu_check.md")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--depth", type=int, default=1000, help="the chapter workload's depth (bench_engine)")
    args = ap.parse_args(argv)
    import torch

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print(NO_CUDA)
        return 2
    name = torch.cuda.get_device_name() if args.device.startswith("cuda") else "cpu"
    results = pieces(args.device, args.depth)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "gpu_check.json").write_text(json.dumps({"device": name, **results}, indent=1, default=str) + "\n")
    text = table(results, name)
    (args.out / "gpu_check.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    from deepnotes import cli

    cli.run(main)
