"""One training path, followed from each chapter's run function to the optimizer step: the chain of
frames at the step enters every module once (a module left is never called back), and it is the same
path for every chapter: the chapter, then ensembles → workers → train → optim."""

from __future__ import annotations

import inspect
import sys

import pytest

import deepnotes as dn
from deepnotes.core.optim import EnsembleOptimizer

SMOKE = "smoke"


def _chapters(budget: dn.Budget | str = SMOKE):
    """Each chapter's run function with a tiny run at ``budget`` (the Budget a page's setup cell resolved; a name
    here only to see it refused)."""
    from deepnotes.chapters.bert_init import experiments as bert
    from deepnotes.chapters.increment_explosion import experiments as inc
    from deepnotes.chapters.magnitude_decomposition import experiments as mag
    from deepnotes.chapters.post_vs_pre_norm import experiments as pp
    from deepnotes.chapters.thousand_layers import experiments as tl
    from deepnotes.chapters.why_residuals import experiments as wr
    from deepnotes.chapters.why_residuals import spectrum
    from deepnotes.shared import warmup

    resolved = dn.get_budget(SMOKE)
    runs = tl.plan(resolved)[:2]
    here = lambda: dn.RunContext.here(budget, workers=1)  # noqa: E731  (the page's context; serial)
    return {
        "post_vs_pre_norm.run": lambda: pp.run("post", 2, here(), steps=1),
        "why_residuals.mlp_runs": lambda: wr.mlp_runs([wr.mlp_setting("1/N", 3, budget, steps=1)], here()),
        "why_residuals.transformer_runs": lambda: wr.transformer_runs(
            [wr.transformer_setting("plain", 2, budget, steps=1)], here()
        ),
        "why_residuals.paper_spectra": lambda: spectrum.paper_spectra(budget),
        "shared.warmup.runs": lambda: warmup.runs(here()),
        "increment_explosion.run": lambda: inc.run("post", 2, here(), steps=1),
        "magnitude_decomposition.run_choices": lambda: mag.run_choices(2, {"a": (1.0, 1.0)}, "adam", 1e-3, here(), 1),
        "bert_init.mlm_run": lambda: bert.mlm_run(0.02, context=here()),
        "thousand_layers.train_runs": lambda: tl.train_runs(here(), runs),
        "deepnotes.train": lambda: dn.train(resolved.model_config(2), resolved.train_config("adam", 1e-3, 1)),
    }


CHAPTERS = list(_chapters())


def _deepnotes_chain() -> list[str]:
    """The deepnotes modules on the call stack, outermost first, consecutive repeats merged."""
    names = [f.frame.f_globals.get("__name__", "") for f in reversed(inspect.stack())]
    chain: list[str] = []
    for name in names:
        if name.startswith("deepnotes") and (not chain or chain[-1] != name):
            chain.append(name)
    return chain


@pytest.mark.parametrize("entry", CHAPTERS)
def test_a_budget_reaches_the_optimizer_step_through_each_module_once(entry, monkeypatch):
    for module in list(sys.modules.values()):  # serial: the step is seen in this process
        if getattr(module, "__name__", "").startswith("deepnotes") and hasattr(module, "default_workers"):
            monkeypatch.setattr(module, "default_workers", lambda device=None: 1)
    chains, step = [], EnsembleOptimizer.step

    def recording_step(self, *args, **kwargs):
        chains.append(_deepnotes_chain() + ["deepnotes.core.optim"])
        return step(self, *args, **kwargs)

    monkeypatch.setattr(EnsembleOptimizer, "step", recording_step)
    _chapters(dn.get_budget(SMOKE))[entry]()
    assert chains, f"{entry} took no optimizer step"
    for chain in {tuple(c) for c in chains}:
        again = [m for k, m in enumerate(chain) if m in chain[:k]]
        assert not again, f"{entry}: {' → '.join(chain)} comes back to {again}"
        assert chain[-2:] == ("deepnotes.core.train", "deepnotes.core.optim"), chain  # the one loop steps
        runs_here = ("deepnotes.core.ensembles", "deepnotes.core.workers")  # train_many, then run_jobs' worker
        assert len(chain) <= 2 or chain[-3] in runs_here or not chain[-3].startswith("deepnotes.core")


@pytest.mark.parametrize("entry", CHAPTERS)
def test_a_budget_is_resolved_once_by_the_page_and_never_below(entry, monkeypatch):
    """Issue 64: the page's setup cell (or a tool's entry point) resolves the budget once; a chapter's run function
    takes that Budget and resolves nothing on its way to the step (config.get_budget, what resolve_budget calls,
    never runs). Given a budget's name instead, it is refused at the door in words that say what to pass."""
    from deepnotes.core import config
    from deepnotes.errors import BadArgument

    for module in list(sys.modules.values()):  # serial: every call is seen in this process
        if getattr(module, "__name__", "").startswith("deepnotes") and hasattr(module, "default_workers"):
            monkeypatch.setattr(module, "default_workers", lambda device=None: 1)
    by_name, given = _chapters(SMOKE)[entry], _chapters(dn.get_budget(SMOKE))[entry]
    calls, get_budget = [], config.get_budget

    def counted(name=None):
        calls.append(name)
        return get_budget(name)

    monkeypatch.setattr(config, "get_budget", counted)
    given()
    assert calls == [], f"{entry} resolved a budget it was given as a Budget: {calls}"
    if entry == "deepnotes.train":  # dn.train takes configs, not a budget
        return
    with pytest.raises(BadArgument, match=r"budget='smoke'.*get_budget\('smoke'\)"):
        by_name()
    assert calls == []


WALK_RETURNS = 10  # issue 64: following the budget from thousand_layers.train_runs (29 at c1850d2)


def test_the_budget_s_walk_from_train_runs_comes_back_to_a_module_at_most_ten_times(monkeypatch):
    """Issue 64: follow the page's RunContext and its Budget from ``thousand_layers.train_runs`` (two runs of its
    plan, serial): every call of a package function that receives either object, and the module it is called from.
    A call from another module returns to a module already left; at most WALK_RETURNS of them (the context is built
    by the page and handed down, not rebuilt or re-resolved on the way)."""
    from deepnotes.chapters.thousand_layers import experiments as tl

    for module in list(sys.modules.values()):  # serial: every call is seen in this process
        if getattr(module, "__name__", "").startswith("deepnotes") and hasattr(module, "default_workers"):
            monkeypatch.setattr(module, "default_workers", lambda device=None: 1)
    budget = dn.get_budget(SMOKE)
    context = dn.RunContext.here(budget, workers=1)
    runs = tl.plan(budget)[:2]
    walk: list[tuple[str, str]] = []

    def module_of(frame) -> str:
        while frame is not None and (frame.f_code.co_filename.startswith("<") or "deepnotes" not in _name(frame)):
            frame = frame.f_back  # beartype's wrappers and the test's own frames are not the package's
        return _name(frame) if frame is not None else ""

    def seen(frame, event, arg):
        if event == "call" and not frame.f_code.co_filename.startswith("<") and _name(frame).startswith("deepnotes"):
            if any(value is budget or value is context for value in frame.f_locals.values()):
                walk.append((module_of(frame.f_back), _name(frame)))

    sys.setprofile(seen)
    try:
        tl.train_runs(context, runs)
    finally:
        sys.setprofile(None)
    returns = [(caller, callee) for caller, callee in walk[1:] if caller != callee]
    assert walk and walk[0][1] == tl.__name__
    assert len(returns) <= WALK_RETURNS, returns


def _name(frame) -> str:
    return frame.f_globals.get("__name__", "")
