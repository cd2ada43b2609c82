"""Time one training step of a deep Post-LN stack four ways, in one process and one run:

* ``reference``: deepnotes' readable model, a ModuleList of :class:`deepnotes.core.models.Block`;
* ``engine``: the stacked-weight engine (:mod:`deepnotes.core.engine`) with one member (K = 1) and its
  own optimizer (:class:`deepnotes.core.optim.EnsembleOptimizer`);
* ``ensemble``: the engine with K members (``--ensemble``, default 8), time per member;
* ``torch``: a stack of ``nn.TransformerEncoderLayer`` with the same d_ff;

and the machine's fp32 matmul peak. Every variant: causal attention, ReLU FFN, no dropout, Adam (lr 1e-4),
forward + backward + optimizer step on the same input [B, T, d] with loss mean(x_N²); the variants
take turns, one step each, for ``--repeats`` rounds after ``--warmup`` steps each; medians.

    python benchmarks/bench_engine.py [--depth 1000] [--d-model 32] [--heads 2] [--d-ff 64]
                                      [--batch 16] [--seq 16] [--ensemble 8] [--compile] [--memory]
                                      [--target {native,x86-64-v2,x86-64-v3,x86-64-v4,armv8-a}] [--smoke]

``--target`` builds the compiled kernels for that ``-march`` (``$DEEPNOTES_TARGET``; default ``native``):
``x86-64-v3`` runs on this machine the kernels a reader's AVX2 laptop would build. ``--smoke`` runs
every variant at a tiny size, once (the test suite's check that the script still works).

``--workload chapter`` times the 1000-layer chapter's own headline ensemble instead: the members of
its comparison (``HEADLINE`` × its seeds at the ``cpu`` budget, N = 1000, batches of 4 × 8 tokens of
the Markov language, Adam, next-token loss, forward + backward + step) trained the way
:func:`deepnotes.core.ensembles.train_many` groups them, against the reference ``TransformerLM``
(one Post-LN member) on the same batch shape, and against the same ensembles on PyTorch's own path
(the compiled kernels off, ``DEEPNOTES_FUSED=0``), taking turns; compile time reported apart. Its last line:

    chapter N=…: members=K member_step_ms=P reference_ms=R speedup_vs_reference=X gflops=G
    peak_gflops=Q compile_s=C pytorch_path_ms=T target=NAME launches=L cpu_form_ops=O captured=0|1

``launches``: per training step of all the ensembles, the kernel launches PyTorch's profiler records on CUDA
(``cudaLaunchKernel`` and its kin), or on a CPU the ATen operators the PyTorch path dispatches in the form a GPU
runs (``DEEPNOTES_BLOCK_FORM=gpu``: what a GPU would launch, about one kernel each); ``cpu_form_ops``: the same
count in the CPU's form (on CUDA: the launches again). ``captured``: whether the step ran as a captured CUDA
graph (``--capture 1``, the default on CUDA: :class:`deepnotes.core.train.CapturedStep`).
``--device cuda`` insists on the GPU (an error without one); the default is CUDA where present.

``--compile`` adds the engine with ``torch.compile`` over its blocks (compile time reported).
``--memory`` measures the peak resident memory of the engine (K = 1) at several depths, each in a
fresh process, and the deepest stack that stays under 2 GB. The last line is the summary:

    engine N=…: reference_ms=R engine_ms=E ensemble8_ms_per_model=P torch_ms=T speedup_vs_torch=X
    ensemble_speedup_vs_reference=Y gflops=G peak_gflops=Q

(``gflops``: the model's forward + backward matmul and attention FLOPs, 3× the forward's, over the
K-member step's wall time.)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from unittest import mock

import torch
from torch import nn

from deepnotes.chapters.thousand_layers.budget import sizes as thousand_layers_sizes
from deepnotes.core import kernels
from deepnotes.core.blocks import ENV_SWITCH
from deepnotes.core.config import ModelConfig, TrainConfig
from deepnotes.core.config import device as default_device
from deepnotes.core.engine import build_stack
from deepnotes.core.models import Block
from deepnotes.core.train import EnsembleOptimizer


def synchronize() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def median_step(step, repeats: int, warmup: int) -> float:
    """Median wall seconds of ``step()`` over ``repeats`` calls after ``warmup`` calls."""
    for _ in range(warmup):
        step()
    synchronize()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        step()
        synchronize()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) if times else 0.0


def adam_step(params, loss_fn):
    opt = torch.optim.Adam(params, lr=1e-4)

    def step():
        loss = loss_fn()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return step


def matmul_peak(dev, smoke: bool = False) -> float:
    """Best fp32 GFLOP/s of a square matmul (512, 1024, 2048; 64 with ``smoke``) on ``dev``."""
    best = 0.0
    for n in (64,) if smoke else (512, 1024, 2048):
        a = torch.randn(n, n, device=dev)
        t = median_step(lambda: a @ a, repeats=5, warmup=2)
        best = max(best, 2 * n**3 / t / 1e9)
    return best


def forward_flops(cfg: ModelConfig, batch: int, seq: int) -> float:
    """Matmul + attention FLOPs of one forward pass of one model: per block 2·B·T·(4d² + 2·d·d_ff)
    for the projections and FFN, plus 4·B·T²·d for QKᵀ and AV."""
    d, f = cfg.d_model, cfg.d_ff
    return cfg.n_layers * (2 * batch * seq * (4 * d * d + 2 * d * f) + 4 * batch * seq * seq * d)


def peak_rss_mb(depth: int, args) -> float:
    """Peak resident MB of a fresh process running three engine training steps at ``depth``."""
    # VmHWM, the peak of this process's own memory map (ru_maxrss would carry the parent's peak over exec)
    code = (
        f"import sys, torch; sys.argv=['x','--only-engine','--depth','{depth}','--d-model',"
        f"'{args.d_model}','--heads','{args.heads}','--d-ff','{args.d_ff}','--batch','{args.batch}',"
        f"'--seq','{args.seq}']; import runpy; runpy.run_path('{__file__}', run_name='__main__'); "
        "print([int(l.split()[1]) / 1024 for l in open('/proc/self/status') if l.startswith('VmHWM')][0])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def compiled_blocks(stack, enabled: bool):
    """``--compile``: the stack's blocks through ``torch.compile`` (the engine has no compile switch of
    its own; this is for comparison)."""
    if enabled:
        stack.run_blocks = torch.compile(stack.run_blocks, dynamic=False)
    return stack


CUDA_LAUNCHES = ("cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx")


def chosen_device(name: str) -> torch.device:
    """``auto``: CUDA where present, else the CPU; ``cpu`` or ``cuda`` as named (``cuda`` without a GPU is refused)."""
    if name == "auto":
        return default_device()
    if name == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device cuda: PyTorch finds no CUDA device here; give --device cpu or auto")
    return torch.device(name)


def launches_per_step(step, dev: torch.device, form: str = "gpu") -> int:
    """One call of ``step``: the kernel launches the profiler records on CUDA, or on a CPU the ATen operators
    it dispatches on the PyTorch path in ``form`` (:func:`deepnotes.core.blocks.block_form`; ``gpu``: the
    operators a GPU would launch, :func:`deepnotes.cost.model.counted`)."""
    if dev.type != "cuda":
        from deepnotes.core.blocks import FORM_SWITCH
        from deepnotes.cost.model import counted

        with mock.patch.dict(os.environ, {FORM_SWITCH: form}):
            return int(counted(step).launches)
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        step()
        synchronize()
    return sum(e.count for e in prof.key_averages() if e.key in CUDA_LAUNCHES)


def chapter_workload(args) -> None:
    """``--workload chapter``: the 1000-layer chapter's headline ensemble(s) against the reference."""
    from deepnotes.chapters.thousand_layers.experiments import HEADLINE, variant_config, variant_train_config
    from deepnotes.core.config import get_budget
    from deepnotes.core.data import MarkovLanguage, generator
    from deepnotes.core.engine import Stack
    from deepnotes.core.ensembles import ensemble_groups
    from deepnotes.core.models import build_model, ids_checked_on_host
    from deepnotes.core.train import CapturedStep, NextToken, member_batches, member_losses

    budget = get_budget("smoke" if args.smoke else "cpu")
    sub = thousand_layers_sizes(budget)
    dev = chosen_device(args.device)
    capture = args.capture if args.capture is not None else int(dev.type == "cuda")
    n = args.depth
    runs = [(lab, s) for lab in HEADLINE for s in range(sub.seeds)]
    model_cfgs = [variant_config(lab, n, budget) for lab, _ in runs]
    train_cfgs = [variant_train_config(lab, n, budget, seed=s) for lab, s in runs]
    task = MarkovLanguage(budget.vocab_size, seed=0)
    objective = NextToken()
    groups = ensemble_groups(model_cfgs, train_cfgs)

    def ensemble_step(members: list[int]):
        """One training step of one of train_many's ensembles (its own batches, loss, backward, Adam)."""
        cfgs = [train_cfgs[i] for i in members]
        stack = compiled_blocks(
            Stack([model_cfgs[i] for i in members], seeds=[c.seed for c in cfgs], device=dev), args.compile
        )
        opt = EnsembleOptimizer(stack, cfgs)
        gens = [generator(c.seed + 1) for c in cfgs]
        count = iter(range(10**9))

        def device_step(tokens, mask, i):
            losses = member_losses(stack, objective, tokens, mask)  # [K]
            opt.zero_grad()
            opt.arm(i)  # as train_ensemble without gradient trackers: Adam in the backward
            losses.sum().backward()
            opt.step(i)

        # --capture 1: as train_ensemble's loop on a GPU (3 warmup steps, then one captured and replayed; the
        # warmups' rates are baked into the graph: a timing, not a training run); on a CPU without the graph
        captured = CapturedStep(device_step, opt, 0, "graph" if dev.type == "cuda" else "emulate") if capture else None

        def step():
            i = next(count)
            tokens, mask = member_batches(stack, [task] * len(members), cfgs, gens, objective)
            with ids_checked_on_host():  # the sampler's ids, in range (the training loop checks them on the host)
                if captured is not None:
                    captured.run(i, tokens, mask)
                else:
                    device_step(tokens, mask, i)

        return step

    t0 = time.perf_counter()
    engine_steps = [ensemble_step(m) for m in groups]
    for step in engine_steps:  # the first step compiles where compiling is on
        step()
    synchronize()
    first_s = time.perf_counter() - t0  # stacks built and each ensemble's first step

    def engine_all():
        for step in engine_steps:
            step()

    batch, seq = sub.train_batch
    ref_cfg = variant_config("post", n, budget)
    reference = build_model(ref_cfg, seed=0, device=dev)
    gen = generator(1)
    ref_opt = torch.optim.Adam(reference.parameters(), lr=sub.lr, betas=(0.9, 0.98))

    def reference_step():
        loss = reference.loss(task.sample(batch, seq, gen).to(dev))
        ref_opt.zero_grad(set_to_none=True)
        loss.backward()
        ref_opt.step()

    def pytorch_path_all():  # the same ensembles with the compiled kernels off (the switch is read per call)
        os.environ[ENV_SWITCH] = "0"
        try:
            engine_all()
        finally:
            os.environ[ENV_SWITCH] = switch

    switch = os.environ.get(ENV_SWITCH, "1")
    variants = {"engine": engine_all, "pytorch_path": pytorch_path_all, "reference": reference_step}
    times = {name: [] for name in variants}
    for step in variants.values():
        median_step(step, repeats=0, warmup=args.warmup)
    for _ in range(args.repeats):  # taking turns: a drift of the machine hits all alike
        for name, step in variants.items():
            times[name].append(median_step(step, repeats=1, warmup=0))
    k = len(runs)
    p = statistics.median(times["engine"]) / k
    t = statistics.median(times["pytorch_path"]) / k
    r = statistics.median(times["reference"])
    q = matmul_peak(dev, args.smoke)
    g = 3 * forward_flops(ref_cfg, batch, seq) / p / 1e9
    print(f"device {dev}, torch {torch.__version__}, threads {torch.get_num_threads()}, kernels {kernels.described()}")
    print(
        f"workload: the 1000-layer chapter's headline, {k} members ({', '.join(HEADLINE)}; {sub.seeds} seeds each) "
        f"at N = {n}, batch {batch} x {seq} tokens, Adam; {len(groups)} ensemble(s) of "
        f"{[len(m) for m in groups]} members; median of {args.repeats} interleaved steps after {args.warmup}"
    )
    print(f"engine, all ensembles          {p * k * 1e3:10.1f} ms/step ({p * 1e3:.1f} ms per member-step)")
    print(f"engine, PyTorch path           {t * k * 1e3:10.1f} ms/step ({t * 1e3:.1f} ms per member-step)")
    print(f"reference TransformerLM        {r * 1e3:10.1f} ms/step (one Post-LN model)")
    compile_s = max(first_s - p * k, 0.0) if args.compile else 0.0  # first step beyond a step: compiling
    print(f"build + first step, all        {first_s:10.1f} s (compiling: {compile_s:.1f} s)")
    launches = launches_per_step(engine_all, dev)
    cpu_form = launches_per_step(engine_all, dev, "cpu") if dev.type != "cuda" else launches
    print(
        f"chapter N={n}: members={k} member_step_ms={p * 1e3:.1f} reference_ms={r * 1e3:.0f} "
        f"speedup_vs_reference={r / p:.2f} gflops={g:.1f} peak_gflops={q:.1f} compile_s={compile_s:.1f} "
        f"pytorch_path_ms={t * 1e3:.1f} target={kernels.target()} launches={launches} "
        f"cpu_form_ops={cpu_form} captured={int(bool(capture) and dev.type == 'cuda')}"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--workload",
        choices=("engine", "chapter"),
        default="engine",
        help="engine: the Post-LN stack four ways (default); chapter: the 1000-layer chapter's headline",
    )
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--d-model", type=int, default=32)
    ap.add_argument("--heads", type=int, default=2)
    ap.add_argument("--d-ff", type=int, default=64)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq", type=int, default=16)
    ap.add_argument("--ensemble", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--memory", action="store_true")
    ap.add_argument("--only-engine", action="store_true", help=argparse.SUPPRESS)  # --memory's child
    ap.add_argument(
        "--target",
        choices=tuple(kernels.TARGETS),
        help="build the compiled kernels for this -march (default: $DEEPNOTES_TARGET, else native)",
    )
    ap.add_argument(
        "--device", choices=("auto", "cpu", "cuda"), default="auto", help="--workload chapter's device (default: auto)"
    )
    ap.add_argument(
        "--capture",
        type=int,
        choices=(0, 1),
        help="--workload chapter: run each ensemble's step as train_ensemble's captured step (a CUDA graph on a GPU, "
        "the same code without one on a CPU); default: 1 on CUDA, 0 elsewhere",
    )
    ap.add_argument("--smoke", action="store_true", help="a tiny run that checks the script works (the tests')")
    args = ap.parse_args()
    if args.target:
        os.environ[kernels.TARGET_SWITCH] = args.target
    if args.smoke:  # a few blocks, one step each, nothing else
        args.depth, args.repeats, args.warmup, args.memory, args.ensemble = 3, 1, 0, False, 2
        args.batch, args.seq = 2, 4
    if args.workload == "chapter":
        chapter_workload(args)
        return
    dev = default_device()
    cfg = ModelConfig(n_layers=args.depth, d_model=args.d_model, n_heads=args.heads, d_ff=args.d_ff, norm="post")
    x = torch.randn(args.batch, args.seq, args.d_model, device=dev)  # [B, T, d]

    def engine_step(k: int, compiled: bool = False):
        """The engine's own training step: its forward, and EnsembleOptimizer's Adam (fused)."""
        stack = compiled_blocks(build_stack(cfg, seeds=list(range(k)), device=dev), compiled)
        opt = EnsembleOptimizer(stack, [TrainConfig(lr=1e-4)] * k)
        xs = x.expand(k, -1, -1, -1)  # [K, B, T, d]
        count = iter(range(10**9))

        def step():
            loss = stack.run_blocks(xs).pow(2).mean(dim=(1, 2, 3)).sum()
            opt.zero_grad()
            loss.backward()
            opt.step(next(count))

        return step

    if args.only_engine:
        step = engine_step(1)
        for _ in range(3):
            step()
        return

    torch.manual_seed(0)
    reference = nn.ModuleList([Block(cfg) for _ in range(cfg.n_layers)]).to(dev)

    def reference_loss():
        h = x
        for block in reference:
            h = block(h)
        return h.pow(2).mean()

    layers = nn.ModuleList(
        [
            nn.TransformerEncoderLayer(
                cfg.d_model, cfg.n_heads, cfg.d_ff, dropout=0.0, activation="relu", batch_first=True, norm_first=False
            )
            for _ in range(cfg.n_layers)
        ]
    ).to(dev)
    mask = nn.Transformer.generate_square_subsequent_mask(args.seq, device=dev)

    def torch_loss():
        h = x
        for layer in layers:
            h = layer(h, src_mask=mask, is_causal=True)
        return h.pow(2).mean()

    steps = {
        "reference": adam_step(reference.parameters(), reference_loss),
        "engine": engine_step(1),
        "ensemble": engine_step(args.ensemble),
        "torch": adam_step(layers.parameters(), torch_loss),
    }
    # one step of each variant in turn, ``repeats`` rounds: a drift of the machine hits all alike
    times = {name: [] for name in steps}
    for name, step in steps.items():
        median_step(step, repeats=0, warmup=args.warmup)
    for _ in range(args.repeats):
        for name, step in steps.items():
            times[name].append(median_step(step, repeats=1, warmup=0))
    r, e, t = (statistics.median(times[n]) for n in ("reference", "engine", "torch"))
    p = statistics.median(times["ensemble"]) / args.ensemble
    q = matmul_peak(dev, args.smoke)
    g = 3 * forward_flops(cfg, args.batch, args.seq) / p / 1e9
    print(f"device {dev}, torch {torch.__version__}, threads {torch.get_num_threads()}")
    print(
        f"stack: {args.depth} Post-LN blocks, d={args.d_model}, heads={args.heads}, d_ff={args.d_ff}, "
        f"batch {args.batch} x {args.seq} tokens; Adam; median of {args.repeats} interleaved steps after {args.warmup}"
    )
    print(f"reference Block stack          {r * 1e3:10.1f} ms/step")
    print(f"engine, K = 1                  {e * 1e3:10.1f} ms/step")
    print(f"engine, K = {args.ensemble:<3d}                {p * 1e3:10.1f} ms/step per model")
    print(f"nn.TransformerEncoderLayer     {t * 1e3:10.1f} ms/step")
    print(f"fp32 matmul peak               {q:10.1f} GFLOP/s; K = {args.ensemble} run: {g:.1f} GFLOP/s ({g / q:.0%})")
    if args.compile:
        t0 = time.perf_counter()
        step = engine_step(1, compiled=True)
        step()
        synchronize()
        first = time.perf_counter() - t0
        c = median_step(step, args.repeats, args.warmup)
        print(
            f"engine, K = 1, torch.compile   {c * 1e3:10.1f} ms/step after a first step of {first:.1f} s "
            f"(compile included); pays off after {first / max(e - c, 1e-9):.0f} steps"
            if c < e
            else (
                f"engine, K = 1, torch.compile   {c * 1e3:10.1f} ms/step "
                f"(first step {first:.1f} s): slower, never pays off"
            )
        )
    if args.memory:
        limit_mb, depths = 2048, [1000, 2000, 3000, 4000]
        rss = {n: peak_rss_mb(n, args) for n in depths}
        per_block = (rss[depths[-1]] - rss[depths[0]]) / (depths[-1] - depths[0])
        fits = int(depths[0] + (limit_mb - rss[depths[0]]) / per_block)
        print(
            "peak memory (engine, K = 1): "
            + ", ".join(f"N={n}: {m:.0f} MB" for n, m in rss.items())
            + f"; {per_block:.2f} MB per block, so about N={fits} fits in {limit_mb} MB"
        )
    print(
        f"engine N={args.depth}: reference_ms={r * 1e3:.0f} engine_ms={e * 1e3:.0f} "
        f"ensemble{args.ensemble}_ms_per_model={p * 1e3:.0f} torch_ms={t * 1e3:.0f} speedup_vs_torch={t / e:.2f} "
        f"ensemble_speedup_vs_reference={r / p:.2f} gflops={g:.1f} peak_gflops={q:.1f}"
    )


if __name__ == "__main__":
    from deepnotes import cli

    cli.run(main)
