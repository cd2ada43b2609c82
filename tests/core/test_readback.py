"""Issue 62: the step that reads nothing back (:mod:`deepnotes.core.train`, section "the step's device side") trains
exactly as the loop it replaced.

The oracle is that loop as it was at d54a8be (each step's K losses read to the host, the diverged members dropped
from a list ``alive``, ``losses[alive].sum()`` backpropagated), kept here verbatim. Compared bit for bit: every
field of every History but the wall time, and the final weights of every member that did not diverge; on small
ensembles with every optimizer and a member forced to diverge, with trackers, and on every chapter's plan at
``smoke``."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import replace

import pytest
import torch

from deepnotes.chapters import CHAPTERS
from deepnotes.chapters.catalog import chapter_plan
from deepnotes.core import measure
from deepnotes.core import train as tr
from deepnotes.core.config import ModelConfig, TrainConfig
from deepnotes.core.data import MarkovLanguage, generator
from deepnotes.core.engine import Stack
from deepnotes.core.optim import EnsembleOptimizer, check_members
from deepnotes.cost.model import TrainRuns


def reference_train_stack(stack, tasks, cfgs, objective, trackers, trainable, progress) -> list:
    """deepnotes.core.train.train_stack at d54a8be (the oracle): a host read of the losses every step."""
    k = stack.n_members
    if isinstance(cfgs, TrainConfig):
        cfgs = [cfgs] if k == 1 else [dataclasses.replace(cfgs, seed=s) for s in stack.seeds]
    cfgs = check_members(stack, cfgs)
    tasks = tr.member_tasks(tasks, k)
    gens = [generator(c.seed + 1) for c in cfgs]
    opt = EnsembleOptimizer(stack, cfgs, trainable)
    hists = [tr.History(floor=objective.floor(t), unigram=t.unigram_entropy()) for t in tasks]
    hooks = {
        name: [getattr(t, name) for t in trackers if hasattr(t, name)]
        for name in ("start", "before_step", "after_backward", "after_step")
    }
    for hook in hooks["start"]:
        hook(stack, tasks, cfgs)
    alive = list(range(k))
    for step in range(cfgs[0].steps):
        for hook in hooks["before_step"]:
            hook(stack, step, hists, alive)
        tokens, mask = tr.member_batches(stack, tasks, cfgs, gens, objective)
        losses = tr.member_losses(stack, objective, tokens, mask)
        values = losses.tolist()
        alive = [i for i in alive if hists[i].observe(step, values[i])]
        if not alive:
            break
        opt.zero_grad()
        if not hooks["after_backward"]:
            opt.arm(step)
        losses[alive].sum().backward()
        for hook in hooks["after_backward"]:
            hook(stack, step, hists, alive)
        lrs = opt.lr_values(step)
        for i in alive:
            hists[i].losses.append(values[i])
            hists[i].lrs.append(lrs[i])
        opt.step(step)
        for hook in hooks["after_step"]:
            hook(stack, step, hists, alive)
    if alive and cfgs[0].held_out > 1:
        for i, (loss, se) in enumerate(tr.held_out_losses(stack, tasks, cfgs[0].held_out, cfgs[0].seq_len, objective)):
            if i in alive:
                hists[i].held_out_loss, hists[i].held_out_se = loss, se
                hists[i].held_out_sequences = cfgs[0].held_out
    for h in hists:
        h.ensemble_size = k
    return hists


def _record(h: tr.History) -> dict:
    """A History's fields but the wall time, NaN made comparable."""
    out = dataclasses.asdict(h)
    out.pop("seconds")
    return {k: ("nan" if isinstance(v, float) and math.isnan(v) else v) for k, v in out.items()}


def _survivors(stack: Stack, hists) -> dict:
    """Every parameter slice of the members that did not diverge."""
    return {
        (name, k): stack.member(name, k).detach().clone()
        for name in stack.slots
        for k, h in enumerate(hists)
        if not h.diverged
    }


def _same(a, b) -> None:
    (ha, wa), (hb, wb) = a, b
    assert [_record(h) for h in ha] == [_record(h) for h in hb]
    assert wa.keys() == wb.keys()
    for key in wa:
        assert torch.equal(wa[key], wb[key]), key


def _both(build, run, read_every: int = tr.READ_EVERY):
    """``run(stack, train_stack)`` with the oracle and with the new loop, each on a fresh ``build()``: (histories,
    survivors' weights) of each."""
    out = []
    for loop in (reference_train_stack, lambda *a: tr.train_stack(*a, read_every=read_every)):
        stack = build()
        hists = run(stack, loop)
        out.append((hists, _survivors(stack, hists)))
    return out


def _cfg(norm="post", n_layers=3):
    return ModelConfig(n_layers=n_layers, d_model=8, n_heads=2, d_ff=16, vocab_size=6, max_len=8, norm=norm)


@pytest.mark.parametrize("optimizer", ["sgd", "adam", "lamb"])
@pytest.mark.parametrize("read_every", [1, 3, 32])
def test_the_new_step_trains_as_the_old_one_with_a_member_forced_to_diverge(optimizer, read_every):
    """Four members, one of them at a learning rate that makes it diverge within the run, one with a warmup: the
    same Histories (losses, rates, the diverged-at step and loss) and the survivors' weights, bit for bit."""
    lrs = {"sgd": (0.1, 1e4, 0.05, 0.1), "adam": (1e-2, 1e3, 3e-3, 1e-2), "lamb": (1e-2, 1e3, 3e-3, 1e-2)}[optimizer]
    tcfgs = [
        TrainConfig(optimizer=optimizer, lr=lr, steps=12, warmup_steps=w, batch_size=3, seq_len=6, seed=s)
        for lr, w, s in zip(lrs, (0, 0, 4, 0), (0, 1, 2, 3), strict=True)
    ]
    cfgs = [_cfg(n) for n in ("post", "post", "pre", "deepnorm")]
    task = MarkovLanguage(6, seed=0)
    a, b = _both(
        lambda: Stack(cfgs, seeds=[c.seed for c in tcfgs]),
        lambda stack, loop: loop(stack, task, tcfgs, tr.NextToken(), (), None, False),
        read_every,
    )
    assert a[0][1].diverged and not any(a[0][k].diverged for k in (0, 2, 3))  # the run tests what it says
    _same(a, b)


def test_trackers_see_the_same_members_and_record_the_same_values():
    """With trackers (one that says when it reads the Histories, one that does not), a masked objective and a
    diverging member: the same Histories, tracker records included."""
    rates = ((1e-2, 0), (1e3, 1))  # (lr, seed): the second diverges
    tcfgs = [TrainConfig(optimizer="adam", lr=lr, steps=9, batch_size=3, seq_len=8, seed=s) for lr, s in rates]
    cfg = dataclasses.replace(_cfg(), causal=False)

    class Silent:  # no needs_host: every step reads the histories
        def after_step(self, stack, step, hists, alive):
            for k in alive:
                hists[k].update_rms.append(float(step))

    def trackers():
        return [measure.BlockGradNorms(every=2), measure.Recorder("g", lambda s: [1.0, 2.0], every=3), Silent()]

    a, b = _both(
        lambda: Stack([cfg, cfg], seeds=[0, 1]),
        lambda stack, loop: loop(stack, MarkovLanguage(6, seed=0), tcfgs, tr.Masked(0.3), trackers(), None, False),
        tr.READ_EVERY,
    )
    assert a[0][1].diverged and a[0][0].grad_norms and a[0][0].update_rms
    _same(a, b)


def test_a_nan_in_one_member_never_reaches_another():
    """Member 1 starts with NaN weights: it is recorded as diverged at step 0, and members 0 and 2 train exactly as
    in an ensemble where member 1 is healthy."""
    tcfgs = [TrainConfig(optimizer="adam", lr=1e-2, steps=6, batch_size=3, seq_len=6, seed=s) for s in (0, 1, 2)]
    task = MarkovLanguage(6, seed=0)
    runs = []
    for poison in (False, True):
        stack = Stack([_cfg()] * 3, seeds=[0, 1, 2])
        if poison:
            with torch.no_grad():
                for name in stack.slots:
                    stack.member(name, 1).fill_(math.nan)
        hists = tr.train_stack(stack, task, tcfgs, tr.NextToken(), (), None, False)
        runs.append((hists, {key: w for key, w in _survivors(stack, hists).items() if key[1] != 1}))
    (clean, w_clean), (poisoned, w_poisoned) = runs
    assert poisoned[1].diverged_at == 0 and not clean[1].diverged
    assert [_record(clean[k]) for k in (0, 2)] == [_record(poisoned[k]) for k in (0, 2)]
    assert all(torch.equal(w_clean[key], w_poisoned[key]) for key in w_clean)


def test_batches_drawn_ahead_are_the_batches_drawn_step_by_step():
    tasks, cfgs = [MarkovLanguage(6, seed=0)] * 3, [TrainConfig(batch_size=2, seq_len=5, seed=s) for s in (0, 0, 1)]
    gens = [[generator(c.seed + 1) for c in cfgs] for _ in range(2)]
    ahead = tr.BatchesAhead(lambda: tr.drawn_batches(tasks, cfgs, gens[0], tr.Masked(0.3)), 7, 3, torch.device("cpu"))
    for _ in range(7):
        (t1, m1), (t2, m2) = ahead.next(), tr.drawn_batches(tasks, cfgs, gens[1], tr.Masked(0.3))
        assert torch.equal(t1, t2) and torch.equal(m1, m2)
    with pytest.raises(RuntimeError, match="already taken"):
        ahead.next()


def test_the_record_refuses_a_full_buffer_and_a_disagreement():
    hists = [tr.History(unigram=1.0) for _ in range(2)]
    record = tr.LossRecord(hists, lambda step: [0.1, 0.1], tr.BLOWUP_FACTOR, 2)
    record.judge(0, torch.tensor([1.0, 2.0]))
    record.judge(1, torch.tensor([1.0, math.inf]))
    assert record.due()
    with pytest.raises(RuntimeError, match="read it back before step 2"):
        record.judge(2, torch.tensor([1.0, 1.0]))
    assert record.read_back() == [0] and hists[1].diverged_at == 1 and hists[0].losses == [1.0, 1.0]
    record.judge(2, torch.tensor([5.0, 1.0]))
    record.oks[0, 0] = False  # the device says member 0 diverged; the host sees 5 ≤ 10 × max(1, 1)
    with pytest.raises(RuntimeError, match="disagree"):
        record.read_back()


def _plans():
    """Every ensemble every chapter trains at smoke, as its plan lists it (the items tests/core/test_plans_kept.py
    keeps): (chapter, index, TrainRuns)."""
    return [
        (stem, k, item)
        for stem in CHAPTERS
        for k, item in enumerate(chapter_plan(stem, "smoke", 1))
        if isinstance(item, TrainRuns)
    ]


@pytest.mark.parametrize("capture", ["0", "emulate"])
@pytest.mark.parametrize("stem, index, item", _plans(), ids=lambda x: x if isinstance(x, (str, int)) else "")
def test_every_chapters_smoke_plan_trains_as_before(stem, index, item, capture, monkeypatch):
    """Each ensemble of every chapter's smoke plan (its model, member count, train config and objective; members
    seeded 0, 1, …), trained by the oracle and by the new step, uncaptured and as a GPU's captured loop runs it
    (without the graph): the same Histories and the same final weights of every member that did not diverge."""
    monkeypatch.setenv(tr.CAPTURE_SWITCH, capture)
    cfgs = [replace(item.train, seed=s) for s in range(item.members)]
    objective = tr.Masked(item.masked) if item.masked is not None else tr.NextToken()
    task = MarkovLanguage(item.model.vocab_size, seed=0)
    _same(
        *_both(
            lambda: Stack([item.model] * item.members, seeds=range(item.members)),
            lambda stack, loop: loop(stack, task, cfgs, objective, (), None, False),
            tr.READ_EVERY,  # the GPU's default, read every 32 steps (on the CPU the default reads every step)
        )
    )


def _count_captured(monkeypatch) -> list[int]:
    """The steps CapturedStep.run takes from here on (the run still happens)."""
    taken, run = [], tr.CapturedStep.run

    def counting(self, step, tokens, mask):
        taken.append(step)
        return run(self, step, tokens, mask)

    monkeypatch.setattr(tr.CapturedStep, "run", counting)
    return taken


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
@pytest.mark.parametrize("objective", ["next", "masked"])
@pytest.mark.parametrize("read_every", [1, 32])
def test_the_captured_loop_trains_as_the_old_one(optimizer, objective, read_every, monkeypatch):
    """The loop a GPU captures (DEEPNOTES_CAPTURE=emulate: its static inputs, judging on the device and host
    bookkeeping around each step, the graph left out) against the d54a8be oracle, with a member forced to diverge
    and one with a warmup: the same Histories and survivors' weights, bit for bit; the steps after the warmups
    went through the captured step."""
    monkeypatch.setenv(tr.CAPTURE_SWITCH, "emulate")
    taken = _count_captured(monkeypatch)
    lrs = {"sgd": (0.1, 1e4, 0.05, 0.1), "adam": (1e-2, 1e3, 3e-3, 1e-2)}[optimizer]
    tcfgs = [
        TrainConfig(optimizer=optimizer, lr=lr, steps=14, warmup_steps=w, batch_size=3, seq_len=6, seed=s)
        for lr, w, s in zip(lrs, (0, 0, 4, 0), (0, 1, 2, 3), strict=True)
    ]
    masked = objective == "masked"
    cfgs = [dataclasses.replace(_cfg(n), causal=not masked) for n in ("post", "post", "pre", "deepnorm")]
    a, b = _both(
        lambda: Stack(cfgs, seeds=[c.seed for c in tcfgs]),
        lambda stack, loop: loop(
            stack, MarkovLanguage(6, seed=0), tcfgs, tr.Masked(0.3) if masked else tr.NextToken(), (), None, False
        ),
        read_every,
    )
    assert a[0][1].diverged and not any(a[0][k].diverged for k in (0, 2, 3))
    assert taken == list(range(4, 14))  # after the longest warmup (4 steps): 3 warm, one captured, 6 replays
    _same(a, b)


def test_the_captured_step_stays_out_where_it_cannot_hold_the_step(monkeypatch):
    """Not captured: LAMB (bias corrections are numbers of the step), runs with trackers, DEEPNOTES_CAPTURE=0; on a
    CPU, DEEPNOTES_CAPTURE=1 says in one warning that the steps run uncaptured."""
    stack = Stack([_cfg()], seeds=[0])
    sgd, lamb = TrainConfig(optimizer="sgd"), TrainConfig(optimizer="lamb")
    opt, step = EnsembleOptimizer(stack, [sgd]), lambda tokens, mask, step: None

    def planned(cfg, trackers=()):
        return tr.CapturedStep.planned(stack, [cfg], trackers, step, opt)

    monkeypatch.setenv(tr.CAPTURE_SWITCH, "emulate")
    assert planned(sgd) is not None and planned(lamb) is None
    assert planned(sgd, [measure.BlockGradNorms()]) is None
    monkeypatch.setenv(tr.CAPTURE_SWITCH, "0")
    assert planned(sgd) is None
    monkeypatch.setenv(tr.CAPTURE_SWITCH, "1")
    with pytest.warns(UserWarning, match=r"DEEPNOTES_CAPTURE=1: a CUDA graph needs a CUDA device.*run uncaptured"):
        assert planned(sgd) is None
    monkeypatch.delenv(tr.CAPTURE_SWITCH)
    assert planned(sgd) is None  # the CPU's default: quietly uncaptured
    with pytest.raises(ValueError, match="mode must be 'graph' or 'emulate'"):
        tr.CapturedStep(step, opt, 1, "cuda")


def test_the_loop_checks_token_ids_on_the_host_before_they_reach_the_device():
    """Batches drawn ahead are checked on the CPU (a task whose ids pass the model's vocabulary is refused there,
    naming the ids), so that the device's forward, inside ids_checked_on_host, reads no id back."""
    from deepnotes.core.models import check_tokens, ids_checked_on_host

    ahead = tr.BatchesAhead(lambda: (torch.full((1, 2, 3), 9), None), 2, 2, torch.device("cpu"), vocab=6)
    with pytest.raises(ValueError, match=r"token ids must lie in \[0, 6\), got ids from 9 to 9"):
        ahead.next()
    with ids_checked_on_host():
        check_tokens(torch.full((2, 3), 9), 6)  # taken as checked
    with pytest.raises(ValueError, match="token ids"):
        check_tokens(torch.full((2, 3), 9), 6)  # and checked again outside
