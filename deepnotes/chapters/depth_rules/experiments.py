"""The chapter's measurements: the first step's loss change of every published rule against depth, from its
initialization, under SGD and Adam, ``probe_seeds`` seeds each (:func:`first_steps`); a short Adam run of one rule
at one depth (:func:`rule_run`, the slider); and what they cost (:func:`work`)."""

from __future__ import annotations

import functools
import statistics
from dataclasses import dataclass

import torch

from deepnotes.chapters.depth_rules.budget import sizes
from deepnotes.core.config import Budget, ModelConfig, live_range
from deepnotes.core.data import MarkovLanguage, probe_batch
from deepnotes.core.engine import GATES, Stack, build_stack
from deepnotes.core.ensembles import RunContext, RunPlan
from deepnotes.core.measure import loglog_slope, step_probes
from deepnotes.core.rules import PUBLISHED, Rule, engine_config, scale_named
from deepnotes.core.train import History
from deepnotes.core.train import progress as progress_bar
from deepnotes.core.validate import Depth, Repeats, choice, given
from deepnotes.cost.model import StackPasses, TrainRuns, planned_ensembles

OPTIMIZERS = ("sgd", "adam")  # the optimizers a rule's first step is derived and measured under


def rule_named(name: str) -> Rule:
    """The published rule called ``name`` (a clear error naming the rules there are)."""
    return PUBLISHED[choice("rule", name, tuple(PUBLISHED))]


def rule_config(rule: Rule, depth: Depth, budget: Budget) -> ModelConfig:
    """The budget's Transformer at ``depth`` blocks built as ``rule`` says (:func:`.rules.engine_config`)."""
    return engine_config(rule, budget.model_config(depth), depth)


def rule_stack(rule: Rule, depth: Depth, budget: Budget, seeds: Repeats, device=None) -> Stack:
    """``seeds`` members of ``rule`` at ``depth`` (seed s: initialization s), float64 (the first step's tiny loss
    change is measured exactly), the rule's β on a named role applied after the draw."""
    stack = build_stack(
        [rule_config(rule, depth, budget)] * seeds, list(range(seeds)), device=device, dtype=torch.float64
    )
    for k in range(seeds):
        scale_named(rule, stack, k)
    return stack


def stepped(rule: Rule, stack: Stack) -> list[str]:
    """What a rule's first step moves: the blocks' weight matrices, and its gates where they train."""
    return list(stack.matrix_names) + ([g for g in GATES if g in stack.slots] if rule.learnable else [])


@dataclass
class FirstSteps:
    """samples[(rule, optimizer)][i]: −⟨∇L, Δθ⟩ per unit of the base rate, one value per seed at depths[i] (the
    rule's own rate is the base rate times its scale s(N), so this is the loss change its first step makes)."""

    depths: tuple[int, ...]
    lrs: dict[str, float]
    samples: dict[tuple[str, str], list[list[float]]]

    @property
    def rules(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(r for r, _ in self.samples))

    def mean(self, rule: str, optimizer: str) -> list[float]:
        """Per depth, the mean over seeds."""
        return [statistics.fmean(v) for v in self.samples[(rule, optimizer)]]

    def slope(self, rule: str, optimizer: str) -> float:
        """The log-log slope of the mean against N over every depth."""
        return loglog_slope(self.depths, self.mean(rule, optimizer))


def first_steps(context: RunContext, rules: tuple[str, ...] = tuple(PUBLISHED)) -> FirstSteps:
    """One step of SGD and one of Adam from each rule's initialization at each of ``probe_depths``, on each seed's
    probe batch of the Markov language: the first-order loss change −⟨∇L, Δθ⟩ (the derivation's quantity), times
    the rule's rate scale s(N). One stack per (rule, depth), its members the seeds."""
    budget = context.budget
    sub = sizes(budget)
    language = MarkovLanguage(budget.vocab_size, seed=0)
    samples: dict[tuple[str, str], list[list[float]]] = {(r, o): [] for r in rules for o in OPTIMIZERS}
    for name, depth in progress_bar([(r, n) for r in rules for n in sub.probe_depths], context.progress):
        rule = rule_named(name)
        stack = rule_stack(rule, depth, budget, sub.probe_seeds, context.device)
        tokens = torch.stack(
            [
                probe_batch(language, budget.batch_size, budget.seq_len, seed=s, device=context.device)
                for s in range(sub.probe_seeds)
            ]
        )  # [K, B, T]
        scale = rule.at(depth)
        for opt in OPTIMIZERS:
            lr = sub.probe_lrs[opt]
            probes = step_probes(stack, tokens, opt, lr, names=stepped(rule, stack))
            samples[(name, opt)].append([-p.first_order / lr * scale[f"lr_scale[{opt}]"] for p in probes])
    return FirstSteps(tuple(sub.probe_depths), dict(sub.probe_lrs), samples)


def rule_plan(rule: Rule, depth: Depth, budget: Budget, seeds: Repeats = 1, steps: Repeats | None = None) -> RunPlan:
    """``seeds`` Adam runs of ``rule`` at ``depth`` on the Markov language: the rate is the chapter's times the
    rule's s(N); a fixed branch multiplier is a gate that does not train, a learnable one trains."""
    sub = sizes(budget)
    scale = rule.at(depth)["lr_scale[adam]"]
    cfg = rule_config(rule, depth, budget)
    fixed_gate = cfg.gate is not None and not rule.learnable
    return RunPlan(
        [cfg] * seeds,
        [budget.train_config("adam", sub.lr * scale, given(steps, sub.steps), seed=s) for s in range(seeds)],
        MarkovLanguage(budget.vocab_size, seed=0),
        inits=[functools.partial(scale_named, rule)] * seeds,
        frozen=GATES if fixed_gate else (),
    )


def rule_run(depth: Depth, rule: str, *, budget: Budget, progress: bool = False) -> History:
    """One short Adam run of the published ``rule`` at ``depth`` (seed 0): the slider's panel."""
    live_range("depth", depth, sizes(budget).live_depth, budget)
    context = RunContext.here(budget, progress=progress)  # the slider is an entry point: the widget calls it
    return context.train(rule_plan(rule_named(rule), depth, budget))[0]


def first_steps_work(budget: Budget) -> list[StackPasses]:
    """:func:`first_steps`' work: per (rule, depth) stack of probe_seeds members, per optimizer a forward + backward
    and a forward without gradients (float64, counted as float32 passes: the same FLOPs and launches)."""
    sub = sizes(budget)
    b, t = budget.batch_size, budget.seq_len
    out = []
    for name in PUBLISHED:
        for n in sub.probe_depths:
            model = rule_config(PUBLISHED[name], n, budget)
            out += [
                StackPasses(model, sub.probe_seeds, b, t, passes=len(OPTIMIZERS)),
                StackPasses(model, sub.probe_seeds, b, t, passes=len(OPTIMIZERS), backward=False),
            ]
    return out


def work(budget: Budget) -> list[StackPasses | TrainRuns]:
    """What the experiments above compute at ``budget``, as :mod:`deepnotes.cost.model` counts it:

    first_steps   :func:`first_steps_work`
    rule_run      per setting of the slider's grid (slider_depths × the published rules): one run"""
    sub = sizes(budget)
    frames = [rule_plan(PUBLISHED[r], n, budget) for n in sub.slider_depths for r in PUBLISHED]
    return [*first_steps_work(budget), *(w for p in frames for w in planned_ensembles(p))]
