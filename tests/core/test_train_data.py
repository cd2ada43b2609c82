import math

import pytest
import torch

import deepnotes as dn
from deepnotes.core.engine import build_stack
from deepnotes.core.measure import BlockGradNorms, UpdateSize, loglog_slope, step_probes
from deepnotes.core.optim import EnsembleOptimizer


def test_entropy_rate_matches_a_long_sample():
    lang = dn.MarkovLanguage(8, seed=1)
    pi = lang.stationary
    torch.testing.assert_close(pi @ lang.transition, pi)
    tokens = lang.sample(64, 400, torch.Generator().manual_seed(0))
    p = lang.transition[tokens[:, :-1], tokens[:, 1:]]
    empirical = float(-p.log().mean())
    assert empirical == pytest.approx(lang.entropy_rate(), abs=0.03)
    assert lang.entropy_rate() < lang.unigram_entropy() <= math.log(8) + 1e-9


def test_same_seed_same_data():
    lang = dn.MarkovLanguage(8, seed=1)
    a = lang.sample(4, 10, torch.Generator().manual_seed(5))
    b = lang.sample(4, 10, torch.Generator().manual_seed(5))
    assert torch.equal(a, b)
    with pytest.raises(ValueError, match="vocab_size"):
        dn.MarkovLanguage(1)


def small_cfg(**kw):
    base = dict(n_layers=2, d_model=16, n_heads=2, d_ff=32, vocab_size=8, norm="pre")
    base.update(kw)
    return dn.ModelConfig(**base)


def train_lm(model_cfg, train_cfg, **kw):
    task = dn.MarkovLanguage(model_cfg.vocab_size, seed=train_cfg.seed)
    return dn.train(model_cfg, train_cfg, task, **kw)


def test_tiny_run_lowers_loss_toward_the_floor():
    hist = train_lm(small_cfg(), dn.TrainConfig(lr=3e-3, steps=150, batch_size=16, seq_len=16))
    assert not hist.diverged
    start, end = sum(hist.losses[:5]) / 5, hist.final_loss(20)
    assert end < start - 0.3
    assert end < hist.unigram  # it used the context: below the context-free plateau
    assert end > hist.floor - 0.05  # and not below what is possible


def test_same_seed_reproduces_losses():
    tc = dn.TrainConfig(steps=8, seed=4)
    a = train_lm(small_cfg(), tc, trackers=[UpdateSize()])
    b = train_lm(small_cfg(), tc, trackers=[UpdateSize()])
    assert a.losses == b.losses and a.update_rms == b.update_rms and len(a.update_rms) == 8
    c = train_lm(small_cfg(), dn.TrainConfig(steps=8, seed=5))
    assert a.losses != c.losses


def test_diverging_run_is_recorded_not_raised():
    hist = train_lm(small_cfg(norm="none"), dn.TrainConfig(optimizer="sgd", lr=1e6, steps=30))
    assert hist.diverged and 0 < hist.diverged_at < 30
    assert len(hist.losses) == hist.diverged_at
    assert hist.final_loss() == math.inf


def test_warmup_schedule_is_linear():
    hist = train_lm(small_cfg(), dn.TrainConfig(lr=1e-2, steps=6, warmup_steps=4))
    assert hist.lrs == pytest.approx([2.5e-3, 5e-3, 7.5e-3, 1e-2, 1e-2, 1e-2])


def test_grad_norms_are_per_block():
    hist = train_lm(small_cfg(n_layers=3), dn.TrainConfig(steps=4), trackers=[BlockGradNorms(every=2)])
    assert hist.grad_steps == [0, 2]
    assert all(len(g) == 3 and min(g) > 0 for g in hist.grad_norms)


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_one_step_loss_change_matches_first_order_at_small_lr(optimizer):
    stack = build_stack(small_cfg(n_layers=3), seeds=[0, 1])
    tokens = dn.MarkovLanguage(8).sample(4, 8, torch.Generator().manual_seed(0)).expand(2, 4, 8)  # [K, B, T]
    lr = {"sgd": 1e-3, "adam": 1e-5}[optimizer]
    before = [p.detach().clone() for p in stack.parameters()]
    for probe in step_probes(stack, tokens, optimizer, lr):
        assert probe.delta_loss < 0
        assert probe.delta_loss == pytest.approx(probe.first_order, rel=0.05)
        if optimizer == "sgd":
            assert probe.first_order == pytest.approx(-lr * probe.grad_sq, rel=1e-4)
        else:  # Adam's first step is lr·sign(g)
            assert probe.first_order == pytest.approx(-lr * probe.grad_l1, rel=1e-3)
    assert all(torch.equal(a, b) for a, b in zip(before, stack.parameters(), strict=True))  # restored


def test_loglog_slope_recovers_a_power_law():
    xs = [2, 4, 8, 16]
    assert loglog_slope(xs, [3 * x**1.5 for x in xs]) == pytest.approx(1.5)


def test_lamb_moves_every_tensor_by_lr_times_its_norm():
    """LAMB's step is η‖θ‖ for every reference tensor of every member (q, k and v apart, each block apart)."""
    stack = build_stack(small_cfg(n_layers=2), seeds=[0, 1], dtype=torch.float64)
    stack.next_token_losses(
        dn.MarkovLanguage(8).sample(4, 8, torch.Generator().manual_seed(0)).expand(2, 4, 8)
    ).sum().backward()
    before = {n: getattr(stack, n).detach().clone() for n in ("qkv_w", "fc1_w", "out_w")}
    EnsembleOptimizer(stack, [dn.TrainConfig(optimizer="lamb", lr=0.01)] * 2).step(0)
    for name, old in before.items():
        parts = stack.slots[name].parts
        new, old = (
            t.view(*t.shape[:-1], parts, -1) for t in (getattr(stack, name).detach(), old)
        )  # [N, K, r, parts, c]
        ratio = (new - old).norm(dim=(2, 4)) / old.norm(dim=(2, 4))  # [N, K, parts]
        assert torch.allclose(ratio, torch.full_like(ratio, 0.01), rtol=1e-6), name
    with pytest.raises(ValueError, match="lr"):
        dn.TrainConfig(optimizer="lamb", lr=-1)


def test_masked_entropy_is_the_bayes_floor_and_masks_are_isolated():
    from deepnotes.core.data import mask_positions

    lang = dn.MarkovLanguage(8, seed=3)
    assert lang.masked_entropy() < lang.entropy_rate()  # two neighbours tell more than one
    mask = mask_positions(64, 50, 0.15, torch.Generator().manual_seed(0))
    assert not mask[:, 0].any() and not mask[:, -1].any()
    assert not (mask[:, 1:] & mask[:, :-1]).any()
    assert 0.08 < float(mask.float().mean()) < 0.15
    # the Bayes predictor p(x | a, b) reaches the floor on samples
    tokens = lang.sample(256, 50, torch.Generator().manual_seed(1))
    mask = mask_positions(256, 50, 0.15, torch.Generator().manual_seed(2))
    b_idx, t_idx = mask.nonzero(as_tuple=True)
    a, x, b = tokens[b_idx, t_idx - 1], tokens[b_idx, t_idx], tokens[b_idx, t_idx + 1]
    p = lang.transition
    post = p[a, :] * p[:, b].T  # [n, V] ∝ p(x | a, b)
    post = post / post.sum(-1, keepdim=True)
    nll = float(-post[torch.arange(len(x)), x].log().mean())
    assert nll == pytest.approx(lang.masked_entropy(), abs=0.05)
    with pytest.raises(ValueError, match="prob"):
        mask_positions(2, 10, 1.5, torch.Generator())


def test_mlm_encoder_with_head_transform_learns_toward_the_masked_floor():
    # BERT's 0.02 at width 768 is 0.02·√(768/32) at width 32 (same d·s²); positions tell neighbours apart
    cfg = dn.ModelConfig(
        n_layers=2,
        d_model=32,
        n_heads=2,
        d_ff=64,
        vocab_size=8,
        norm="post",
        causal=False,
        init_std=0.02 * (768 / 32) ** 0.5,
        head_transform=True,
        max_len=16,
    )
    model = dn.build_model(cfg, seed=0)
    assert model.embed.num_embeddings == 9 and isinstance(model.head_transform[2], torch.nn.LayerNorm)
    hist = dn.train(
        cfg,
        dn.TrainConfig(lr=3e-3, steps=200, warmup_steps=20, batch_size=32, seq_len=16),
        dn.MarkovLanguage(8, seed=0),
        objective=dn.Masked(0.15),
    )
    assert hist.floor == pytest.approx(dn.MarkovLanguage(8, seed=0).masked_entropy())
    assert hist.floor < hist.final_loss(30) < hist.unigram - 0.3  # it uses both neighbours, not yet at the floor
    with pytest.raises(ValueError, match="encoder"):
        dn.build_model(small_cfg(), seed=0).mlm_loss(
            torch.zeros(1, 4, dtype=torch.long), torch.zeros(1, 4, dtype=torch.bool)
        )


def test_progress_bar_is_closed_and_removed_when_the_loop_ends_early(monkeypatch):
    import tqdm.auto
    import tqdm.notebook

    from deepnotes.core.train import progress

    made = []

    class NotebookBar(tqdm.notebook.tqdm):  # the bar a Jupyter kernel gets from tqdm.auto
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(tqdm.auto, "tqdm", NotebookBar)
    items = progress(range(10))
    for i in items:
        if i == 3:  # a diverged run leaves its loop here
            break
    items.close()  # what leaving train() does to the generator
    (bar,) = made
    assert bar.n == 3 and bar.disable is True  # closed where it stopped
    assert bar.container.layout.display == "none"  # and it takes no room on the page
    assert list(progress(range(4), enabled=False)) == [0, 1, 2, 3]
    assert list(progress(iter(range(3)), total=3)) == [0, 1, 2]
    assert made[-1].total == 3  # an iterator without a length still shows 0/3, not "0it"


def test_run_jobs_keeps_the_order_and_refuses_bad_worker_counts():
    from deepnotes.core.workers import default_workers, run_jobs

    assert run_jobs(pow, [(2, 3), (3, 2), (5, 1)], workers=2, costs=[1, 3, 2]) == [8, 9, 5]
    assert run_jobs(pow, [(2, 3)], workers=1) == [8]
    with pytest.raises(ValueError, match="workers=0"):
        run_jobs(pow, [(2, 3)], workers=0)
    with pytest.raises(ValueError, match="2 costs for 1 jobs"):
        run_jobs(pow, [(2, 3)], workers=2, costs=[1, 2])
    assert default_workers("cuda") == 1 and 1 <= default_workers("cpu") <= 2


def test_a_run_that_blows_up_is_diverged_at_that_step_and_stops():
    from deepnotes.core.train import BLOWUP_FACTOR, History

    h = History(floor=1.0, unigram=2.0)
    assert h.observe(0, 3.0)
    h.losses.append(3.0)
    assert h.blowup_threshold() == BLOWUP_FACTOR * 3.0
    assert h.observe(1, 29.0)  # high, but below 10 × 3
    assert not h.observe(2, 4900.0)  # Post-LN at Adam lr 10 climbed to 4,900
    assert (
        h.diverged_at == 2
        and h.diverged_loss == 4900.0
        and h.divergence_note() == "diverged at step 2 (loss 4.9e+03 > 30)"
    )
    nan = History(floor=1.0, unigram=2.0)
    assert (
        not nan.observe(0, float("nan"))
        and nan.diverged_at == 0
        and nan.divergence_note() == "diverged at step 0 (loss nan)"
    )


def test_training_records_a_blow_up_as_divergence():
    import deepnotes as dn

    hist = dn.train(
        dn.ModelConfig(n_layers=2, d_model=16, n_heads=2, d_ff=32, norm="post"),
        dn.TrainConfig(optimizer="sgd", lr=1e4, steps=30),
        dn.MarkovLanguage(16),
    )
    assert hist.diverged and hist.diverged_at < 30
    assert not math.isfinite(hist.diverged_loss) or hist.diverged_loss > hist.blowup_threshold()
    assert all(x <= hist.blowup_threshold() for x in hist.losses)


def test_a_cold_chain_has_a_finite_entropy_rate():
    task = dn.MarkovLanguage(16, temperature=1e-3)  # rows with exact zeros: 0·log 0 = 0
    assert math.isfinite(task.entropy_rate()) and 0 <= task.entropy_rate() < 0.05
    assert math.isfinite(task.unigram_entropy())


def test_a_masked_batch_always_hides_at_least_one_token():
    from deepnotes.core.data import generator, mask_positions

    gen = generator(0)
    masks = [mask_positions(1, 3, 0.01, gen) for _ in range(200)]  # almost never draws a position itself
    assert all(int(m.sum()) >= 1 for m in masks)
    assert all(not m[:, 0].any() and not m[:, -1].any() for m in masks)  # interior only


def test_masked_training_with_rare_masks_does_not_diverge():
    import deepnotes as dn

    hist = dn.train(
        dn.ModelConfig(n_layers=1, d_model=8, n_heads=1, d_ff=8, causal=False),
        dn.TrainConfig(steps=20, batch_size=1, seq_len=8),
        dn.MarkovLanguage(16),
        objective=dn.Masked(0.01),
    )
    assert not hist.diverged and len(hist.losses) == 20


UNGUARDED_SCRIPT = """
import math
from deepnotes.core.workers import run_jobs
print("results", run_jobs(math.factorial, [(3,), (4,), (5,)], workers=2))
"""


def test_a_script_without_the_main_guard_is_told_the_fix_and_still_gets_its_results(tmp_path):
    """Python starts a worker by importing the main script; an unguarded script would train again in
    every worker. deepnotes stops the workers there, warns once and runs the jobs in the script itself
    (issue 33: it was a BrokenProcessPool and Python's bootstrapping message)."""
    import subprocess
    import sys
    from pathlib import Path

    script = tmp_path / "unguarded.py"
    script.write_text(UNGUARDED_SCRIPT)
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**__import__("os").environ, "PYTHONPATH": str(root)},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "results [6, 24, 120]" in proc.stdout
    assert proc.stderr.count("RuntimeWarning: worker processes could not start") == 1
    assert 'if __name__ == "__main__":' in proc.stderr
    assert "BrokenProcessPool" not in proc.stderr


DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("bad", [16, -1])
def test_a_token_id_outside_the_vocabulary_is_refused_not_read_from_another_member(bad, device):
    """The engine's members share one embedding table, one block of rows each: id V would read member
    k + 1's row 0 and −1 member k − 1's last row (issue 33: silently; on CUDA, a device-side assert that
    ends the process's use of the GPU)."""
    stack = build_stack(dn.ModelConfig(n_layers=1, vocab_size=16), seeds=[0, 1], device=device)
    tokens = torch.zeros(2, 3, 5, dtype=torch.long, device=device)
    tokens[0, 1, 2] = bad
    with pytest.raises(ValueError, match=rf"token ids must lie in \[0, 16\), got ids from {min(bad, 0)} to"):
        stack.next_token_losses(tokens)
    with pytest.raises(ValueError, match=r"tokens must be \[members=2, batch, seq_len\]"):
        stack(torch.zeros(3, 5, dtype=torch.long, device=device))


# ---- fraction learned on a fixed held-out sample (issue 44) ----------------------------------------------
HELD_OUT_MODEL = dn.ModelConfig(vocab_size=16, d_model=32, n_heads=2, n_layers=4, d_ff=64, norm="pre")


@pytest.fixture(scope="module")
def trained_with_held_out():
    return dn.train(HELD_OUT_MODEL, dn.TrainConfig(steps=200, batch_size=4, seq_len=8, lr=3e-3, seed=0))


def test_the_held_out_loss_is_precise_enough_to_read_a_fraction(trained_with_held_out):
    """Its standard error is below 0.02 of the plateau–floor gap (the issue's bar), and the fraction is read
    from it rather than from the last training batches."""
    h = trained_with_held_out
    assert h.held_out_sequences == dn.TrainConfig().held_out and 0 < h.fraction_se() < 0.02
    assert h.fraction_learned() == pytest.approx((h.unigram - h.held_out_loss) / (h.unigram - h.floor))
    assert h.fraction_learned() != pytest.approx((h.unigram - h.final_loss()) / (h.unigram - h.floor), abs=1e-6)


def test_the_held_out_loss_estimates_the_models_sampled_loss_without_bias(trained_with_held_out):
    """The expectation over the next token is the sampled cross-entropy's mean: on a large independent
    sample of the same language the sampled loss agrees within a few standard errors."""
    from deepnotes.core.engine import Stack
    from deepnotes.core.train import train_ensemble

    task = dn.MarkovLanguage(16, seed=0)
    stack = Stack([HELD_OUT_MODEL], seeds=[0])
    (h,) = train_ensemble(stack, task, [dn.TrainConfig(steps=200, batch_size=4, seq_len=8, lr=3e-3, seed=0)])
    assert h.held_out_loss == trained_with_held_out.held_out_loss  # the same run, the same fixed sample
    tokens = task.sample(8192, 8, torch.Generator().manual_seed(12345)).unsqueeze(0)  # [1, B, T]
    with torch.no_grad():
        sampled = stack.next_token_losses(tokens).item()
    assert abs(sampled - h.held_out_loss) < 4 * h.held_out_se + 0.01


def test_masked_runs_read_their_held_out_loss_against_the_hidden_tokens_posterior():
    enc = dn.ModelConfig(vocab_size=16, d_model=32, n_heads=2, n_layers=2, d_ff=64, norm="post", causal=False)
    h = dn.train(enc, dn.TrainConfig(steps=30, batch_size=8, seq_len=16, lr=1e-3), objective=dn.Masked(0.15))
    assert h.floor < h.held_out_loss and math.isfinite(h.held_out_se) and 0 < h.fraction_se() < 0.05


def test_without_a_held_out_sample_the_fraction_reads_the_last_batches():
    h = dn.train(HELD_OUT_MODEL, dn.TrainConfig(steps=3, batch_size=2, seq_len=8, held_out=0))
    assert h.held_out_loss is None and h.fraction_se() is None
    assert h.fraction_learned(2) == pytest.approx((h.unigram - h.final_loss(2)) / (h.unigram - h.floor))
    with pytest.raises(ValueError, match="held_out=1"):
        dn.TrainConfig(held_out=1)


def test_a_diverged_run_reads_minus_infinity_whatever_its_held_out_sample():
    h = dn.History(losses=[1.0], floor=0.5, unigram=2.0, held_out_loss=1.0, held_out_se=0.01, diverged_at=1)
    assert h.fraction_learned() == -math.inf and h.fraction_se() is None


def test_median_fraction_learned_reads_every_seed_and_a_diverged_majority_is_minus_infinity():
    """The one median over seeds the chapters' answers read (post_vs_pre_norm, magnitude_decomposition,
    why_residuals): the middle seed, a diverged seed counted as −inf, an empty ensemble refused."""
    import math

    from deepnotes.core.train import History, median_fraction_learned

    def run(fraction=None):
        if fraction is None:
            return History(losses=[3.0] * 3, diverged_at=3, floor=1.0, unigram=3.0)
        return History(losses=[3.0 - 2 * fraction] * 10, floor=1.0, unigram=3.0)

    assert median_fraction_learned([run(0.9), run(0.1), run(0.5)]) == pytest.approx(0.5)
    assert median_fraction_learned([run(0.9), run(None), run(0.5)]) == pytest.approx(0.5)
    assert median_fraction_learned([run(0.9), run(None), run(None)]) == -math.inf
    assert median_fraction_learned([run(0.2), run(0.6)]) == pytest.approx(0.4)
    with pytest.raises(ValueError, match="hists is empty"):
        median_fraction_learned([])


def test_a_diverged_history_is_a_valid_history():
    """Issue 64: History.observe writes an infinite or NaN loss into diverged_loss; the class accepts what it writes
    (dataclasses.replace on a diverged run works), and still refuses a bool there."""
    import dataclasses
    import math

    import deepnotes as dn

    for loss in (math.inf, -math.inf, math.nan, 1e300):
        h = dn.History(unigram=1.0, losses=[2.0])  # 1e300 is a blow-up past 10 × max(2, 1)
        assert not h.observe(1, loss)
        assert h.diverged_loss == loss or math.isnan(loss) and math.isnan(h.diverged_loss)
        assert dataclasses.replace(h, seconds=1.0).diverged_at == 1
    with pytest.raises(ValueError, match="diverged_loss"):
        dn.History(diverged_loss=True)
