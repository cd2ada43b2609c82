"""The cost model: counts extrapolated from tiny runs equal the counts of the real run; the work log
and the plan comparison; calibrated rates; bad input."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
import torch

from deepnotes.chapters import CHAPTERS
from deepnotes.chapters.catalog import CATALOG, chapter_plan
from deepnotes.core import blocks, kernels
from deepnotes.core.config import get_budget
from deepnotes.core.data import MarkovLanguage
from deepnotes.core.engine import Stack
from deepnotes.core.ensembles import train_many
from deepnotes.core.train import HELD_OUT_CHUNK, Masked, train_ensemble
from deepnotes.cost import estimate
from deepnotes.cost import log as work_log
from deepnotes.cost import model as cost

BUDGET = get_budget("smoke")
LAUNCH_TOLERANCE = 0.03  # a few operators per run (per-batch bookkeeping) are outside the linear model


def _close(predicted: cost.Count, real: cost.Count) -> None:
    assert predicted.flops == real.flops, (predicted, real)  # matmul FLOPs: exact
    assert abs(predicted.launches - real.launches) <= LAUNCH_TOLERANCE * real.launches, (predicted, real)


@pytest.mark.parametrize(
    "norm, optimizer, masked",
    [("post", "adam", None), ("pre", "sgd", None), ("rezero", "lamb", None), ("deepnorm", "adam", 0.25)],
)
def test_train_counts_extrapolate_to_the_real_run(norm, optimizer, masked):
    """Counted at depth, steps, members ∈ {1, 2} and batch 1; compared with counting the run itself."""
    model = BUDGET.model_config(5, norm=norm, causal=masked is None)
    train = BUDGET.train_config(optimizer, 1e-3, 4)
    work = cost.TrainRuns(model, 3, train, masked)
    stack = Stack([model] * 3, seeds=[0, 1, 2], device="cpu")
    cfgs = [replace(train, seed=s) for s in range(3)]
    objective = Masked(masked) if masked is not None else None
    real = cost.counted(
        lambda: train_ensemble(stack, MarkovLanguage(model.vocab_size, seed=0), cfgs, objective=objective)
    )
    _close(work.count(), real)


def test_pass_counts_extrapolate_to_the_real_passes():
    model = BUDGET.model_config(7)
    stack = Stack([model] * 2, seeds=[0, 1], device="cpu")
    tokens = torch.zeros(2, 4, 8, dtype=torch.long)  # [K, B, T]

    def run():
        for _ in range(3):
            stack.next_token_losses(tokens).sum().backward()

    _close(cost.StackPasses(model, 2, 4, 8, passes=3).count(), cost.counted(run))


@pytest.mark.parametrize("backward", [True, False])
def test_reference_passes_extrapolate_to_the_real_modules(backward):
    """A reference model's passes (build_model's modules, block by block) counted at depth 1 and 2: at
    depth 7 on 4 sequences, three passes, the launches and FLOPs of the modules themselves."""
    from deepnotes.core.models import build_model

    model = BUDGET.model_config(7, norm="deepnorm")
    reference = build_model(model, device="cpu")
    tokens = torch.zeros(4, 8, dtype=torch.long)  # [B, T]

    def run():
        for _ in range(3):
            if backward:
                reference.loss(tokens).backward()
            else:
                with torch.no_grad():
                    reference.hidden(tokens)

    work = cost.ReferencePasses(model, 4, 8, passes=3, backward=backward)
    count = work.count()
    assert count.module_launches == count.launches and count.steps == 0  # all through modules, no engine step
    _close(count, cost.counted(run))


def test_builds_count_every_block_and_every_draw():
    model = BUDGET.model_config(5)
    count = cost.Builds(model, 3).count()
    assert count.built_blocks == 15 and count.draws == 3 * cost.init_draws(model) > 0
    assert count.flops == count.launches == 0


@pytest.mark.parametrize("kind", ["plain", "1/sqrt(N)", 0.5])
def test_probe_counts_extrapolate_to_the_real_probe(kind):
    """why residuals' jacobian_growth reads results back after every block: counted at depth 1 and 2 on
    one input, its launches and FLOPs at depth 9 on 6 inputs are those of the call itself."""
    from deepnotes.chapters.why_residuals.probes import _growth_probe

    work = cost.ProbeCalls(_growth_probe, (kind, 8), depth=9, batch=6, calls=2)
    real = cost.counted(lambda: [_growth_probe(kind, 8, 9, 6) for _ in range(2)])
    assert work.count() == real


def test_mlp_counts_are_two_flops_per_multiply_add():
    work = cost.MLPPasses(width=32, depth=10, batch=64, passes=2)
    assert work.count().flops == 2 * 2 * 10 * 64 * 32 * 32
    # backward: every weight gradient, and every input gradient but the first layer's (x needs none)
    backward = cost.MLPPasses(width=32, depth=10, batch=64, passes=2, backward=True).count().flops
    assert backward == (3 * 10 - 1) * 2 * 2 * 64 * 32 * 32


def test_counts_grow_linearly_with_depth_and_steps():
    train = BUDGET.train_config("adam", 1e-3, 10)
    short, long = (cost.TrainRuns(BUDGET.model_config(n), 1, train).count() for n in (10, 1000))
    assert long.flops > 50 * short.flops and long.launches > 50 * short.launches


def test_the_work_log_round_trips_and_the_plan_check_finds_both_kinds_of_difference(tmp_path, monkeypatch):
    log = tmp_path / "work.jsonl"
    monkeypatch.setenv(work_log.WORK_LOG_ENV, str(log))
    work_log.log_chapter("post_vs_pre_norm")
    models = [
        BUDGET.model_config(2, norm="post"),
        BUDGET.model_config(2, norm="deepnorm", alpha=2.0),
        BUDGET.model_config(3, norm="pre"),
    ]
    trains = [BUDGET.train_config("adam", 1e-3, 2, seed=s) for s in range(3)]
    train_many(models, trains, MarkovLanguage(BUDGET.vocab_size, seed=0))
    ran = cost.read_train_log(log)["post_vs_pre_norm"]
    assert sorted(r.members for r in ran) == [1, 2], "post and deepnorm share a graph: one ensemble of two"
    exact = [cost.TrainRuns(models[0], 2, trains[0]), cost.TrainRuns(models[2], 1, trains[2])]
    assert cost.plan_differences(exact, ran) == []
    missing, extra = exact[:1], exact + [cost.TrainRuns(models[2], 1, replace(trains[2], steps=5))]
    assert [d.split(" (")[0] for d in cost.plan_differences(missing, ran)] == ["run, not planned"]
    assert [d.split(" (")[0] for d in cost.plan_differences(extra, ran)] == ["planned, not run"]


def test_calibration_gives_positive_finite_rates_and_an_estimate_uses_them():
    rates = estimate.calibrate("cpu")
    assert 0 < rates.flops_per_second < math.inf and 0 < rates.seconds_per_launch < 1
    assert 0 < rates.worker_flops_per_second < math.inf and rates.workers >= 1
    assert 0 < rates.seconds_per_figure < 10 and 0 < rates.setup_seconds and rates.seconds_per_step >= 0
    assert (rates.seconds_per_pool > 0) == (rates.workers > 1) and rates.seconds_per_pool < 60
    assert 0 < rates.seconds_per_built_block < 1 and 0 < rates.seconds_per_module_launch < 1e-3
    assert 0 < rates.seconds_per_derivation_unit < 10
    if kernels.library() is not None:  # the compiled kernels' own rates, where they are built
        assert 0 < rates.kernel_flops_per_second < math.inf and 0 < rates.seconds_per_kernel_block < 1e-2
    work = [cost.TrainRuns(BUDGET.model_config(4), 2, BUDGET.train_config("adam", 1e-3, 3))]  # in this process
    est = estimate.estimate("thousand_layers", work, "smoke", [rates, estimate.T4])
    assert est.seconds[rates.device] == pytest.approx(rates.seconds(cost.total(work)) + rates.setup_seconds)
    assert "smoke budget" in repr(est) and estimate.T4.device in repr(est)


def test_a_noisy_reference_pass_still_prices_its_operators():
    """Where the FLOPs at the measured rate explain the whole timed pass (a rate measured high by noise, here
    one taken as slow as 1 FLOP/s), the per-operator time falls back to the pass's time per operator: a
    positive rate, not a 0 that Rates refuses (a calibration that crashed on a noisy machine)."""
    build, per_operator = estimate._reference_seconds(torch.device("cpu"), 1.0)
    assert 0 < build and 0 < per_operator < math.inf


def test_calibration_is_kept_for_this_boot_and_measured_again_on_request(tmp_path, monkeypatch):
    """calibrate() keeps its measurement beside the compiled kernels under a key naming the device, the
    kernels, torch, threads, workers and this boot; another key, a broken file or
    DEEPNOTES_RECALIBRATE=1 measure again."""
    monkeypatch.setenv("DEEPNOTES_CACHE", str(tmp_path))
    monkeypatch.delenv(estimate.RECALIBRATE_ENV, raising=False)
    key = estimate._calibration_key(torch.device("cpu"))
    assert estimate._stored_rates(key) is None
    estimate._store_rates(key, estimate.T4)
    assert estimate._stored_rates(key) == estimate.T4
    assert estimate._stored_rates(key.replace('"threads"', '"thread"')) is None
    monkeypatch.setenv(estimate.RECALIBRATE_ENV, "1")
    assert estimate._stored_rates(key) is None
    monkeypatch.delenv(estimate.RECALIBRATE_ENV)
    (tmp_path / estimate.CALIBRATION_FILE).write_text("{not json")
    assert estimate._stored_rates(key) is None


def test_a_pages_setup_is_what_its_process_has_lived():
    """chapter_estimate's setup is the page's process age (the kernel's start, its imports, the cells
    before): measured from /proc where the system says, and growing with the wall clock."""
    import time

    before = estimate.process_seconds()
    if before is None:
        pytest.skip("this system does not say when a process started")
    time.sleep(0.3)
    after = estimate.process_seconds()
    assert 0 < before and 0.25 <= after - before < 5


def test_counts_are_kept_on_disk_for_this_code_and_read_back_equal(tmp_path, monkeypatch):
    """A shape's counts are stored beside the kernels under a hash of the package's code; read back, they
    are the counts themselves (a broken file is counted again)."""
    monkeypatch.setenv("DEEPNOTES_CACHE", str(tmp_path))
    cost._counts_file.cache_clear()
    try:
        model = BUDGET.model_config(3)
        fresh = cost._pass_counts.__wrapped__(model, 5, True)  # counted, and stored
        (stored,) = tmp_path.glob("counts-*.json")
        assert cost._pass_counts.__wrapped__(model, 5, True) == fresh  # read back
        stored.write_text("{broken")
        assert cost._pass_counts.__wrapped__(model, 5, True) == fresh  # counted again
    finally:
        cost._counts_file.cache_clear()


def test_a_plan_spreads_its_worker_ensembles_and_runs_the_rest_after_them():
    """The ensembles trained in workers go longest first onto the worker free first (run_jobs' order);
    the rest (probes, in-process ensembles, figures) add up in the chapter's process, after the setup."""
    rates = estimate.Rates("test", 1e9, 1e-6, "", workers=2, seconds_per_figure=0.5, setup_seconds=5.0)
    train = BUDGET.train_config("adam", 1e-3, 3)
    spread = [cost.TrainRuns(BUDGET.model_config(n), 1, train, spread=True) for n in (8, 4, 4, 2)]
    here = [cost.TrainRuns(BUDGET.model_config(2), 1, train), cost.Render(4)]
    t8, t4, _, t2 = (rates.work_seconds(w) for w in spread)
    loads = [t8 + t2, t4 + t4] if t8 <= 2 * t4 else [t8, t4 + t4 + t2]
    expected = max(loads) + rates.work_seconds(here[0]) + 4 * 0.5 + 5.0
    assert rates.plan_seconds(spread + here) == pytest.approx(expected)
    assert cost.Render(4).count() == cost.Count(0.0, 0.0, figures=4.0)
    pooled = replace(rates, seconds_per_pool=2.0)  # each train_many call starts its own workers
    assert pooled.plan_seconds(spread + here) == pytest.approx(expected + 2.0)
    second_call = [replace(w, call=1) for w in spread[:2]] + [replace(w, call=2) for w in spread[2:]]
    assert pooled.plan_seconds(second_call) == pytest.approx(max(t8, t4) + 2.0 + max(t4, t2) + 2.0 + 5.0)


def test_the_blocks_the_kernels_run_are_priced_at_the_kernels_rates():
    """A stack the compiled path takes (compiled_wins) counts its blocks apart: on a machine with the kernels
    their FLOPs and operators are priced at the kernels' rates; a GPU (no kernel rate) prices them all alike."""
    work = cost.TrainRuns(BUDGET.model_config(6), 3, BUDGET.train_config("adam", 1e-3, 4))
    count = work.count()
    held_out_passes = math.ceil(work.train.held_out / HELD_OUT_CHUNK)  # the final loss's forward passes
    assert count.kernel_blocks == 3 * 6 * (4 + held_out_passes) and 0 < count.kernel_flops <= count.flops
    assert 0 < count.kernel_launches < count.launches and count.steps == 4
    plain = estimate.Rates("no kernels", 1e9, 1e-6, "")
    with_kernels = replace(plain, kernel_flops_per_second=2e9, seconds_per_kernel_block=1e-5)
    assert with_kernels.seconds(count) == pytest.approx(
        (count.flops - count.kernel_flops) / 1e9
        + (count.launches - count.kernel_launches) * 1e-6
        + count.kernel_flops / 2e9
        + count.kernel_blocks * 1e-5
    )
    assert plain.seconds(count) == pytest.approx(count.flops / 1e9 + count.launches * 1e-6)
    wide = cost.TrainRuns(replace(BUDGET.model_config(2), d_model=512, d_ff=2048, n_heads=4), 1, work.train)
    assert not blocks.compiled_wins(work.train.batch_size * work.train.seq_len, 512, 2048, True)
    assert wide.count().kernel_blocks == 0  # past the kernels' limit: all of it PyTorch's path


def test_operators_through_modules_and_derivations_are_priced_at_their_own_rates():
    """A reference model's operators are priced per module launch (more Python each than the engine's);
    a page's derivations per unit of the reference derivation; rates without them fall back to the
    launch price and to nothing (the T4's: device work only)."""
    passes = cost.ReferencePasses(BUDGET.model_config(3, norm="pre"), 4, 8, passes=2).count()
    derivations = cost.Derivations(((cost.reference_derivation, ()), (cost.reference_derivation, ()))).count()
    assert 0.5 < derivations.derivation_units < 20  # two reference derivations, timed: about 2 units
    count = passes + derivations
    plain = estimate.Rates("plain", 1e9, 1e-6, "")
    priced = replace(plain, seconds_per_module_launch=5e-6, seconds_per_derivation_unit=0.1)
    assert priced.seconds(count) == pytest.approx(
        count.flops / 1e9 + count.module_launches * 5e-6 + count.derivation_units * 0.1
    )
    assert plain.seconds(count) == pytest.approx(count.flops / 1e9 + count.launches * 1e-6)
    again = cost.Derivations(((cost.reference_derivation, ()), (cost.reference_derivation, ()))).count()
    assert again.derivation_units == derivations.derivation_units  # kept per version of the code, not re-timed


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_chapter_prices_the_derivations_its_page_shows(chapter):
    """Each plan names the SymPy derivations its page calls, and they run (a renamed one fails here)."""
    found = [work for work in chapter_plan(chapter, BUDGET) if isinstance(work, cost.Derivations)]
    assert len(found) == 1 and found[0].calls and found[0].count().derivation_units > 0


@pytest.mark.parametrize(
    "make, bad",
    [
        (lambda: cost.TrainRuns(BUDGET.model_config(2), 0, BUDGET.train_config("adam", 1e-3, 2)).count(), "0"),
        (lambda: cost.StackPasses(BUDGET.model_config(2), 1, -1, 8).count(), "-1"),
        (lambda: cost.MLPPasses(width=0, depth=2, batch=2).count(), "0"),
        (lambda: cost.ProbeCalls(print, (), depth=-3, batch=2).count(), "-3"),
        (lambda: cost.Builds(BUDGET.model_config(2), 0).count(), "0"),
        (lambda: cost.ReferencePasses(BUDGET.model_config(2), 4, -8).count(), "-8"),
        (lambda: cost.total(["a run"]), "str"),
        (lambda: estimate.calibrate("tpu"), "tpu"),
        (lambda: chapter_plan("no_such_chapter", "smoke"), "no_such_chapter"),
    ],
)
def test_bad_input_names_the_bad_value(make, bad):
    with pytest.raises((ValueError, TypeError), match=bad):
        make()


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_cuda_default_budget_fits_a_t4_in_ten_minutes_by_the_estimate(chapter):
    """Issue 18: the budget a CUDA machine picks (gpu) finishes each chapter within
    GPU_MINUTES_PER_CHAPTER on a T4 by the counted estimate; the full sizes are opt-in ('full')."""
    gpu = cost.total(chapter_plan(chapter, "gpu", workers=1))  # a GPU trains in one process
    minutes = CATALOG[chapter].gpu_minutes
    assert estimate.T4.seconds(gpu) <= minutes * 60, estimate.format_seconds(estimate.T4.seconds(gpu))
    full, cpu = (cost.total(chapter_plan(chapter, b)) for b in ("full", "cpu"))
    assert full.flops >= gpu.flops >= cpu.flops > cost.total(chapter_plan(chapter, "smoke")).flops
