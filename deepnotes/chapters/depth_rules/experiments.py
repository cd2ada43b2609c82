"""The chapter's measurements: the first step's loss change of every published rule against depth, from its
initialization, under SGD and Adam, ``probe_seeds`` seeds each (:func:`first_steps`); Adam runs of every rule at
the frontier's depths and over the depth × rate map (:func:`train_runs`; the slider reads them, :func:`live_run`
trains one more); and what they cost (:func:`work`)."""

from __future__ import annotations

import functools
import statistics
from collections.abc import Mapping
from dataclasses import dataclass

import torch

from deepnotes.chapters.depth_rules.budget import sizes
from deepnotes.core.config import Budget, ModelConfig, TrainConfig, live_range
from deepnotes.core.data import MarkovLanguage, probe_batch
from deepnotes.core.engine import GATES, Stack, build_stack
from deepnotes.core.ensembles import RunContext, RunPlan
from deepnotes.core.measure import loglog_slope, step_probes
from deepnotes.core.rules import PUBLISHED, Rule, engine_config, scale_named
from deepnotes.core.train import History
from deepnotes.core.train import progress as progress_bar
from deepnotes.core.validate import Count, Depth, Positive, Probability, Repeats, Seed, choice
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
    growth: dict[str, list[list[float]]]  # growth[rule][i]: E[x_N²]/E[x_0²] of the stream at init, per seed

    @property
    def rules(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(r for r, _ in self.samples))

    def mean(self, rule: str, optimizer: str) -> list[float]:
        """Per depth, the mean over seeds."""
        return [statistics.fmean(v) for v in self.samples[(rule, optimizer)]]

    def slope(self, rule: str, optimizer: str) -> float:
        """The log-log slope of the mean against N over every depth."""
        return loglog_slope(self.depths, self.mean(rule, optimizer))


def first_steps(
    context: RunContext, rules: Mapping[str, Rule] = PUBLISHED, depths: tuple[int, ...] | None = None
) -> FirstSteps:
    """One step of SGD and one of Adam from each rule's initialization at each of ``depths`` (default the budget's
    probe_depths), on each seed's probe batch of the Markov language: the first-order loss change −⟨∇L, Δθ⟩ (the
    derivation's quantity), times the rule's rate scale s(N); and the stream's growth at initialization
    (:func:`stream_growth`). One stack per (rule, depth), its members the seeds."""
    budget = context.budget
    sub = sizes(budget)
    language = MarkovLanguage(budget.vocab_size, seed=0)
    depths = tuple(sub.probe_depths) if depths is None else depths
    samples: dict[tuple[str, str], list[list[float]]] = {(r, o): [] for r in rules for o in OPTIMIZERS}
    growth: dict[str, list[list[float]]] = {r: [] for r in rules}
    for name, depth in progress_bar([(r, n) for r in rules for n in depths], context.progress):
        rule = rules[name]
        stack = rule_stack(rule, depth, budget, sub.probe_seeds, context.device)
        tokens = torch.stack(
            [
                probe_batch(language, budget.batch_size, budget.seq_len, seed=s, device=context.device)
                for s in range(sub.probe_seeds)
            ]
        )  # [K, B, T]
        scale = rule.at(depth)
        growth[name].append(stream_growth(stack, tokens))
        for opt in OPTIMIZERS:
            lr = sub.probe_lrs[opt]
            probes = step_probes(stack, tokens, opt, lr, names=stepped(rule, stack))
            samples[(name, opt)].append([-p.first_order / lr * scale[f"lr_scale[{opt}]"] for p in probes])
    return FirstSteps(depths, dict(sub.probe_lrs), samples, growth)


@torch.no_grad()
def stream_growth(stack: Stack, tokens: torch.Tensor) -> list[float]:
    """Per member k on its batch ``tokens[k]`` ([K, B, T]): E[x_N²]/E[x_0²], how much the residual stream's
    second moment grew through the N blocks at initialization (the accumulation GPT-2's scaled init accounts for).
    For Post-LN x_N is a LayerNorm's output: its growth says nothing of the path and stays near 1/E[x_0²]."""
    _, stream = stack.next_token_losses_and_stream(tokens)  # N+1 × [K, B, T−1, d]
    first, last = (x.pow(2).flatten(1).mean(1) for x in (stream[0], stream[-1]))  # [K]
    return (last / first).tolist()


# ---- training: the frontier and the depth × rate map ------------------------------------------------------


@dataclass(frozen=True)
class RuleRun:
    """One Adam run: a published rule at a depth, a base rate (the rule's s(N) multiplies it), a length, a seed
    (initialization and data stream)."""

    rule: str
    depth: Depth
    lr: Positive
    steps: Repeats
    seed: Seed

    @property
    def cell(self) -> tuple[str, int, float, int]:
        """What the seeds of one point share: (rule, depth, lr, steps)."""
        return self.rule, self.depth, self.lr, self.steps


def plan(budget: Budget, rules: tuple[str, ...] = tuple(PUBLISHED)) -> list[RuleRun]:
    """Every run of the chapter, ``seeds`` seeds each: the frontier (each rule at every frontier depth, the
    chapter's rate, train_steps) and the map (each rule at every map depth and map rate, map_steps)."""
    sub = sizes(budget)
    seeds = range(sub.seeds)
    runs = [RuleRun(r, n, sub.lr, sub.train_steps, s) for r in rules for n in sub.frontier_depths for s in seeds]
    runs += [
        RuleRun(r, n, lr, sub.map_steps, s)
        for r in rules
        for n in sub.map_depths
        for lr in sub.map_rates
        for s in seeds
    ]
    return list(dict.fromkeys(runs))


def _fixed_gate(rule: Rule, depth: int, budget: Budget) -> bool:
    """Whether ``rule`` has a branch multiplier that does not train (a frozen gate: Depth-µP's 1/√N)."""
    return not rule.learnable and rule_config(rule, depth, budget).gate is not None


def training_plans(
    budget: Budget, runs: list[RuleRun], rules: Mapping[str, Rule] = PUBLISHED
) -> list[tuple[list[int], RunPlan]]:
    """``runs`` as RunPlans, with the indices of the runs each trains: one plan for the rules whose gate is fixed
    (frozen), one for the rest (a learnable gate trains; a rule without one has none). Adam at the base rate times
    s(N), the frontier's batches, no warmup, on the Markov language (seed 0); the rule's β on a named role after
    the draw."""
    sub = sizes(budget)
    batch, seq = sub.train_batch
    for r in runs:
        choice("rule of a run", r.rule, tuple(rules))
    out = []
    for fixed in (False, True):
        index = [i for i, r in enumerate(runs) if _fixed_gate(rules[r.rule], r.depth, budget) == fixed]
        if not index:
            continue
        chosen = [runs[i] for i in index]
        by_run = [rules[r.rule] for r in chosen]
        train = [
            TrainConfig(
                optimizer="adam",
                lr=r.lr * rule.at(r.depth)["lr_scale[adam]"],
                steps=r.steps,
                batch_size=batch,
                seq_len=seq,
                seed=r.seed,
            )
            for r, rule in zip(chosen, by_run, strict=True)
        ]
        out.append(
            (
                index,
                RunPlan(
                    [rule_config(rule, r.depth, budget) for r, rule in zip(chosen, by_run, strict=True)],
                    train,
                    MarkovLanguage(budget.vocab_size, seed=0),
                    inits=[functools.partial(scale_named, rule) for rule in by_run],
                    frozen=GATES if fixed else (),
                ),
            )
        )
    return out


@dataclass
class RuleRuns:
    """Every training run of the chapter: (rule, depth, lr, steps) → one History per seed."""

    histories: dict[tuple[str, int, float, int], list[History]]
    window: Count  # training losses a final loss averages (where a run measured no held-out loss)

    def at(self, rule: str, depth: int, lr: float, steps: int) -> list[History]:
        """The seeds' Histories of one point; a ValueError naming the point and what that rule trained."""
        key = (rule, depth, lr, steps)
        if key not in self.histories:
            trained = sorted((n, r, t) for lab, n, r, t in self.histories if lab == rule)
            raise ValueError(f"no run of {rule!r} at {key[1:]}: it trained at (depth, lr, steps) {trained or 'none'}")
        return self.histories[key]

    def has(self, rule: str, depth: int, lr: float, steps: int) -> bool:
        return (rule, depth, lr, steps) in self.histories

    @property
    def rules(self) -> tuple[str, ...]:
        """The rules trained, in the order of their runs."""
        return tuple(dict.fromkeys(r for r, *_ in self.histories))

    def fractions(self, rule: str, depth: int, lr: float, steps: int) -> list[float]:
        """Per seed: the fraction learned, (plateau − final loss)/(plateau − floor); −inf where it diverged."""
        return [h.fraction_learned(self.window) for h in self.at(rule, depth, lr, steps)]

    def best_rates(
        self, rule: str, depth: int, rates: tuple[float, ...], steps: int, trained: Probability
    ) -> list[int | None]:
        """Per seed: the index in ``rates`` of the rate that learned most at ``depth``; None where that is the first
        or the last rate of the grid (the best may lie outside it) or where no rate got to ``trained`` (the best of
        runs that did not train is noise)."""
        by_rate = [self.fractions(rule, depth, lr, steps) for lr in rates]  # [rates][seeds]
        out: list[int | None] = []
        for seed_values in zip(*by_rate, strict=True):
            best = max(range(len(rates)), key=lambda i: seed_values[i])
            inside = 0 < best < len(rates) - 1 and seed_values[best] >= trained
            out.append(best if inside else None)
        return out


def train_runs(
    context: RunContext, runs: list[RuleRun] | None = None, rules: Mapping[str, Rule] = PUBLISHED
) -> RuleRuns:
    """Train every :class:`RuleRun` of ``runs`` (default :func:`plan`; each names a rule of ``rules``) where
    ``context`` says, as :func:`training_plans` lays them out."""
    budget = context.budget
    runs = plan(budget) if runs is None else list(runs)
    hists: list[History | None] = [None] * len(runs)
    for index, run_plan in training_plans(budget, runs, rules):
        for i, h in zip(index, context.train(run_plan), strict=True):
            hists[i] = h
    histories: dict[tuple[str, int, float, int], list[History]] = {}
    for run, hist in zip(runs, hists, strict=True):
        histories.setdefault(run.cell, []).append(hist)
    return RuleRuns(histories, sizes(budget).loss_window)


def live_run(depth: Depth, rule: str, *, budget: Budget, progress: bool = False) -> RuleRuns:
    """One seed of the published ``rule`` at a depth of the live panel's range, the frontier's rate and steps."""
    sub = sizes(budget)
    live_range("depth", depth, sub.live_depth, budget)
    context = RunContext.here(budget, progress=progress, workers=1)  # the slider is an entry point: the widget calls it
    return train_runs(context, [RuleRun(rule_named(rule).name, depth, sub.lr, sub.train_steps, 0)])


def first_steps_work(
    budget: Budget, rules: Mapping[str, Rule] = PUBLISHED, depths: tuple[int, ...] | None = None
) -> list[StackPasses]:
    """:func:`first_steps`' work: per (rule, depth) stack of probe_seeds members, the stream's forward block by block
    (:func:`stream_growth`), and per optimizer a forward + backward and a forward without gradients (float64,
    counted as float32 passes: the same FLOPs and launches)."""
    sub = sizes(budget)
    b, t = budget.batch_size, budget.seq_len
    out = []
    for rule in rules.values():
        for n in sub.probe_depths if depths is None else depths:
            model = rule_config(rule, n, budget)
            out += [
                StackPasses(model, sub.probe_seeds, b, t, backward=False, compiled=False),
                StackPasses(model, sub.probe_seeds, b, t, passes=len(OPTIMIZERS)),
                StackPasses(model, sub.probe_seeds, b, t, passes=len(OPTIMIZERS), backward=False),
            ]
    return out


def work(budget: Budget) -> list[StackPasses | TrainRuns]:
    """What the experiments above compute at ``budget``, as :mod:`deepnotes.cost.model` counts it:

    first_steps   :func:`first_steps_work`
    train_runs    the ensembles of :func:`training_plans` (every run of :func:`plan`); the slider's grid reads them"""
    plans = training_plans(budget, plan(budget))
    return [*first_steps_work(budget), *(w for _, p in plans for w in planned_ensembles(p))]
