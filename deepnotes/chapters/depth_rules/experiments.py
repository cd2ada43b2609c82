"""The chapter's runs: Post-LN and Pre-LN stacks of the chapter's depth trained with Adam,
``seeds`` seeds each
(:func:`train_runs`), one run per slider setting (:func:`slider_run`), and what they cost (:func:`work`)."""

from __future__ import annotations

from deepnotes.chapters.depth_rules.budget import sizes
from deepnotes.core.config import Budget, ModelConfig, TrainConfig, live_range
from deepnotes.core.data import MarkovLanguage
from deepnotes.core.ensembles import RunContext, RunPlan
from deepnotes.core.train import History
from deepnotes.core.validate import Depth, Seed, choice, given
from deepnotes.cost.model import TrainRuns, planned_ensembles

STYLES = ("post", "pre")  # the norm styles the chapter compares


def style_config(style: str, depth: Depth, budget: Budget) -> ModelConfig:
    """The budget's Transformer at ``depth`` blocks with its LayerNorm placed as ``style`` says."""
    return budget.model_config(depth, norm=choice("norm style", style, STYLES))


def adam_config(budget: Budget, seed: Seed = 0) -> TrainConfig:
    """Adam at the chapter's rate for the chapter's steps, on the budget's batches."""
    sub = sizes(budget)
    return budget.train_config("adam", sub.lr, sub.steps, seed=seed)


def plan(budget: Budget, depth: Depth | None = None, styles: tuple[str, ...] = STYLES) -> RunPlan:
    """Every style of ``styles`` at ``depth`` (default: the chapter's), seeds 0 … seeds − 1 each, style by style."""
    sub = sizes(budget)
    depth = given(depth, sub.depth)
    keys = [(style, seed) for style in styles for seed in range(sub.seeds)]
    return RunPlan(
        [style_config(style, depth, budget) for style, _ in keys],
        [adam_config(budget, seed) for _, seed in keys],
        MarkovLanguage(budget.vocab_size, seed=0),
    )


def train_runs(context: RunContext) -> dict[str, list[History]]:
    """style → its runs (one History per seed) at the chapter's depth, trained where ``context`` says."""
    hists = context.train(plan(context.budget))
    seeds = sizes(context.budget).seeds
    return {style: hists[k * seeds : (k + 1) * seeds] for k, style in enumerate(STYLES)}


def slider_run(depth: Depth, style: str, *, budget: Budget, progress: bool = False) -> History:
    """One run of ``style`` at ``depth`` (seed 0): the slider's panel."""
    live_range("depth", depth, sizes(budget).live_depth, budget)
    one = plan(budget, depth, (choice("norm style", style, STYLES),))
    single = RunPlan(one.model_cfgs[:1], one.train_cfgs[:1], one.tasks)
    context = RunContext.here(budget, progress=progress)  # the slider is an entry point: the widget calls it
    return context.train(single)[0]


def work(budget: Budget) -> list[TrainRuns]:
    """What the experiments above compute at ``budget``, as :mod:`deepnotes.cost.model` counts it:

    train_runs   the ensembles of :func:`plan`
    slider_run   per setting of the precomputed grid (slider_depths × STYLES): one run, its own call"""
    sub = sizes(budget)
    frames = [plan(budget, n, (style,)) for n in sub.slider_depths for style in STYLES]
    single = [RunPlan(p.model_cfgs[:1], p.train_cfgs[:1], p.tasks) for p in frames]
    return [*planned_ensembles(plan(budget)), *(w for p in single for w in planned_ensembles(p))]
