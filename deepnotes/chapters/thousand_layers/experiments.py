"""Experiments of the chapter "Training 1000 layers": the stream and the gradients of 1000-block
stacks at initialization, and Adam runs of every norm style at every depth of the trainability
frontier and every cell of the depth × learning-rate map, all on the stacked-weight engine
(:mod:`deepnotes.core.engine`) as ensembles, spread over the CPU's cores
(:mod:`deepnotes.core.ensembles`). They measure and return numbers; figures come from
:mod:`deepnotes.chapters.thousand_layers.figures`.

The variants:

    post                  x_{l+1} = LN(x_l + F(x_l)),       Xavier weights
    pre                   x_{l+1} = x_l + F(LN(x_l)),        Xavier weights, a final LN
    deepnorm              x_{l+1} = LN(α·x_l + F(x_l)),      α = (2N)^{1/4}, β = (8N)^{-1/4} on v/out/FFN
    deepnorm, α only      α = (2N)^{1/4}, β = 1               (DeepNet's two constants taken apart)
    deepnorm, β only      α = 1, β = (8N)^{-1/4}
    rezero                x_{l+1} = x_l + g·F(x_l),          g a trained scalar starting at 0
    …, warmup             the same with a linear warmup η_t = η·min(1, (t+1)/T), T = min(N, steps)
                          (the chapter's rule T ≥ N, capped at the run's length)
"""

from __future__ import annotations

import functools
import statistics
from dataclasses import dataclass

import torch

from deepnotes.chapters.thousand_layers.budget import ThousandLayersBudget, sizes
from deepnotes.core import measure, scaling
from deepnotes.core.config import Budget, ModelConfig, TrainConfig, live_range
from deepnotes.core.config import device as default_device
from deepnotes.core.data import MarkovLanguage, probe_batch
from deepnotes.core.engine import Stack, graph_config
from deepnotes.core.ensembles import RunContext, RunPlan
from deepnotes.core.measure import StreamProfile, stream_profiles
from deepnotes.core.train import History
from deepnotes.core.validate import (
    Count,
    Depth,
    Finite,
    Positive,
    Probability,
    Repeats,
    Seed,
    choice,
    given,
    positive_float,
    positive_int,
)
from deepnotes.cost.model import StackPasses, TrainRuns, planned_ensembles

PROFILE_STYLES = ("post", "pre", "deepnorm", "rezero")  # the styles profiled at initialization
CONSTANTS = ("paper", "alpha only", "beta only")  # which of DeepNet's constants a DeepNorm variant keeps


@dataclass(frozen=True)
class Variant:
    """A norm style, which DeepNorm constants it keeps, and whether it warms up."""

    label: str
    norm: str  # post | pre | deepnorm | rezero
    warmup: bool = False
    constants: str = "paper"  # deepnorm only: one of CONSTANTS


VARIANTS = {
    v.label: v
    for v in (
        Variant("post", "post"),
        Variant("post, warmup", "post", warmup=True),
        Variant("pre", "pre"),
        Variant("pre, warmup", "pre", warmup=True),
        Variant("deepnorm", "deepnorm"),
        Variant("deepnorm, warmup", "deepnorm", warmup=True),
        Variant("deepnorm, α only", "deepnorm", constants="alpha only"),
        Variant("deepnorm, β only", "deepnorm", constants="beta only"),
        Variant("rezero", "rezero"),
        Variant("rezero, warmup", "rezero", warmup=True),
    )
}
MAP_STYLES = ("post", "pre", "deepnorm", "rezero")  # the rows of the trainability map, at every depth
WARMED = "post, warmup"  # warmup's test: Post-LN with the rule's warmup
APART = ("deepnorm, α only", "deepnorm, β only")  # DeepNet's constants taken apart (headline depth)
FRONTIER = (*MAP_STYLES, WARMED)  # the frontier's curves (the chapter's rate)
HEADLINE = (*FRONTIER, *APART)  # the runs at the headline depth
DEEPEST = ("deepnorm, warmup", "post, warmup")  # past DeepNet: DeepNorm, beside Post-LN


def variant(label: str) -> Variant:
    return VARIANTS[choice("variant", label, VARIANTS)]


def variant_config(label: str, depth: Depth, budget: Budget) -> ModelConfig:
    """The budget's Transformer at ``depth`` blocks in the variant's style; DeepNorm's constants
    from :func:`deepnotes.core.scaling.deepnorm_coefficients` (the encoder/decoder-only form)."""
    var = variant(label)
    if var.norm != "deepnorm":
        return budget.model_config(depth, norm=var.norm)
    alpha, beta = scaling.deepnorm_coefficients(depth)
    kept = {
        "paper": dict(alpha=alpha, beta=beta),
        "alpha only": dict(alpha=alpha, beta=1.0),
        "beta only": dict(alpha=1.0, beta=beta),
    }[var.constants]
    return budget.model_config(depth, norm="deepnorm", **kept)


def warmup_steps(depth: Depth, steps: Repeats) -> int:
    """The chapter's warmup rule at ``depth`` blocks: a linear warmup of T ≥ N steps, so that its first
    step, η/T, is at most η/N (:func:`~deepnotes.chapters.thousand_layers.derive.warmup_length`);
    T = N, capped at the run's ``steps`` (then the whole run warms up and its first step is η/steps)."""
    return min(depth, steps)


def variant_train_config(
    label: str,
    depth: Depth,
    budget: Budget,
    seed: Seed = 0,
    lr: Positive | None = None,
    steps: Repeats | None = None,
) -> TrainConfig:
    """Adam at ``lr`` (default: the chapter's rate) on the chapter's batches; the "+ warmup" variants
    warm up for :func:`warmup_steps` (depth, steps)."""
    return _train_config(label, depth, sizes(budget), seed, lr, steps)


def _train_config(
    label: str, depth: int, sub: ThousandLayersBudget, seed: int, lr: float | None, steps: int | None = None
) -> TrainConfig:
    """:func:`variant_train_config` at the chapter's sizes ``sub`` (looked up once for a whole plan)."""
    steps, lr = given(steps, sub.train_steps), given(lr, sub.lr)
    batch, seq = sub.train_batch
    warm = warmup_steps(depth, steps) if variant(label).warmup else 0
    return TrainConfig(
        optimizer="adam", lr=lr, steps=steps, warmup_steps=warm, batch_size=batch, seq_len=seq, seed=seed
    )


def map_rates(lr: Positive, count: Repeats = 5, decades: Positive = 2.0) -> tuple[float, ...]:
    """``count`` Adam rates evenly spaced in log over ``decades`` decades and centred on ``lr``:
    lr · 10^(decades · (i/(count − 1) − 1/2)), i = 0 … count − 1 (``lr`` itself is the middle one
    when ``count`` is odd, so the map's middle column is the chapter's rate)."""
    if count < 2:
        raise ValueError(f"count must be at least 2 (a map needs two rates), got {count}")
    return tuple(lr * 10 ** (decades * (i / (count - 1) - 0.5)) for i in range(count))


def budget_map_rates(budget: Budget) -> tuple[float, ...]:
    """The map's columns at ``budget``: :func:`map_rates` around the chapter's rate."""
    sub = sizes(budget)
    return map_rates(sub.lr, sub.map_rate_count, sub.map_decades)


def deepest_rate(budget: Budget) -> float:
    """The Adam rate of the deepest stack: the chapter's rate η at the headline depth N₀, carried to the
    deepest depth N so that DeepNorm's first-step loss change stays where it is at N₀. Under Adam
    that change grows like N^p (p = 1/2: the exponent :func:`.derive.loss_change_growth` derives),
    so η_N = η·(N₀/N)^p."""
    sub = sizes(budget)
    return sub.lr * (sub.depth / sub.deepest) ** _deepnorm_adam_exponent()


@functools.cache
def _deepnorm_adam_exponent() -> float:
    """p of DeepNorm's Adam first-step loss change ∝ N^p, derived once (SymPy: only when a plan is made)."""
    from deepnotes.chapters.thousand_layers import derive

    return float(derive.loss_change_growth(derive.DEEPNET_DEPTH, derive.REFERENCE_DEPTH)["deepnorm_adam_exponent"])


# ---- at initialization ----------------------------------------------------------------------------


PROFILE_SEEDS = 3  # initializations (and probe batches) of the profiles at init: the door's fewest


def _profile_stacks(budget: Budget, depth: int, styles) -> list[list[tuple[str, int]]]:
    """The stacks :func:`init_profiles` builds: for each graph of ``styles`` at ``depth`` (first-seen order),
    its members (style, seed), every style of the graph × every seed s < PROFILE_SEEDS."""
    groups: dict[ModelConfig, list[str]] = {}
    for style in styles:
        groups.setdefault(graph_config(variant_config(style, depth, budget)), []).append(style)
    return [[(style, seed) for style in names for seed in range(PROFILE_SEEDS)] for names in groups.values()]


def init_profiles(budget: Budget, depth: Depth | None = None, styles=PROFILE_STYLES) -> dict[str, list[StreamProfile]]:
    """:func:`~deepnotes.core.measure.stream_profiles` of each style at ``depth`` (default the headline
    depth), one per seed s < PROFILE_SEEDS (initialization s, probe batch s of the language); the styles and
    seeds of one graph are the members of one stack (:func:`_profile_stacks`). style → one profile per seed."""
    depth = given(depth, sizes(budget).depth)
    dev = default_device()
    batch, seq = sizes(budget).train_batch
    language = MarkovLanguage(budget.vocab_size, seed=0)
    tokens = [probe_batch(language, batch, seq, seed=s, device=dev) for s in range(PROFILE_SEEDS)]  # [B, T+1] each
    out: dict[tuple[str, int], StreamProfile] = {}
    for members in _profile_stacks(budget, depth, styles):
        stack = Stack(
            [variant_config(s, depth, budget) for s, _ in members], seeds=[seed for _, seed in members], device=dev
        )
        profiles = stream_profiles(stack, torch.stack([tokens[seed] for _, seed in members]))  # tokens [K, B, T+1]
        out.update(zip(members, profiles, strict=True))
    return {s: [out[(s, seed)] for seed in range(PROFILE_SEEDS)] for s in styles}


# ---- training -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    """One training run: a variant at a depth and an Adam rate, initialization and data stream ``seed``."""

    label: str
    depth: Depth
    lr: Positive
    seed: Seed

    @property
    def cell(self) -> tuple[str, int, float]:
        """What the seeds of one point share: (label, depth, lr)."""
        return self.label, self.depth, self.lr


def plan(budget: Budget) -> list[Run]:
    """Every run of the chapter, each with the budget's ``seeds`` unless named otherwise:

    - the frontier: MAP_STYLES at the chapter's rate at every frontier depth and the headline depth;
    - warmup's test: Post-LN with the rule's warmup (T = N) at those depths that the run can warm up
      for in full (N ≤ steps);
    - DeepNet's constants apart (α only, β only) at the headline depth, ``apart_seeds`` seeds;
    - the map: MAP_STYLES at every map depth and every other rate of :func:`budget_map_rates`
      (``map_seeds`` seeds: no training-outcome verdict reads one cell's runs);
    - past DeepNet: DeepNorm with the warmup rule at the deepest depth and :func:`deepest_rate`
      (``deepest_seeds`` seeds), beside Post-LN with the same warmup and rate (``contrast_seeds`` seeds)."""
    sub = sizes(budget)
    seeds = range(sub.seeds)
    depths = (*sub.frontier_depths, sub.depth)
    runs = [Run(lab, n, sub.lr, s) for n in depths for lab in MAP_STYLES for s in seeds]
    runs += [Run(WARMED, n, sub.lr, s) for n in depths if n <= sub.train_steps for s in seeds]
    runs += [Run(lab, sub.depth, sub.lr, s) for lab in APART for s in range(sub.apart_seeds)]
    runs += [
        Run(style, n, r, s)
        for n in sub.map_depths
        for style in MAP_STYLES
        for r in budget_map_rates(budget)
        if r != sub.lr
        for s in range(sub.map_seeds)
    ]
    rate = deepest_rate(budget)
    runs += [Run(DEEPEST[0], sub.deepest, rate, s) for s in range(sub.deepest_seeds)]
    runs += [Run(DEEPEST[1], sub.deepest, rate, s) for s in range(sub.contrast_seeds)]
    return list(dict.fromkeys(runs))


def _trackers(update_steps: int) -> list:
    """The engine trackers of every run (module level: worker processes unpickle it)."""
    return [measure.UpdateSize(first=update_steps)]


@dataclass
class Runs:
    """Every training run of the chapter: (label, depth, lr) → one History per seed."""

    histories: dict[tuple[str, int, float], list[History]]
    steps: Repeats
    lr: Positive  # the chapter's rate (the default of every lookup)
    seconds: dict[tuple[str, int, float], float]  # wall seconds of the ensemble each point trained in
    members: dict[tuple[str, int, float], int]  # how many members that ensemble had

    def key(self, label: str, depth: int, lr: Finite | None = None) -> tuple[str, int, float]:
        """(label, depth, lr) of one point, ``lr`` defaulting to the chapter's rate."""
        return label, depth, self.lr if lr is None else lr

    def at(self, label: str, depth: int, lr: Finite | None = None) -> list[History]:
        """The seeds' Histories of one point; a ValueError naming the point and the depths that label trained at
        where it was not trained."""
        key = self.key(label, depth, lr)
        if key not in self.histories:
            trained = sorted({(n, r) for lab, n, r in self.histories if lab == label})
            raise ValueError(
                f"no run of {label!r} at depth={depth}, lr={key[2]:g}: it trained at (depth, lr) {trained or 'none'}"
            )
        return self.histories[key]

    def has(self, label: str, depth: int, lr: Finite | None = None) -> bool:
        return self.key(label, depth, lr) in self.histories

    def fractions(self, label: str, depth: int, window: int, lr: Finite | None = None) -> list[float]:
        """Per seed: the fraction learned, (plateau − final loss)/(plateau − floor); −inf if it diverged."""
        return fraction_learned(self.at(label, depth, lr), window)

    def median(self, label: str, depth: int, window: int, lr: Finite | None = None) -> float:
        """The seeds' median fraction learned (−inf where most seeds diverged)."""
        return statistics.median(self.fractions(label, depth, window, lr))

    def warmup(self, label: str, depth: int) -> int:
        """The warmup steps of ``label`` at ``depth`` (0 for a variant without warmup)."""
        return warmup_steps(depth, self.steps) if variant(label).warmup else 0

    def seconds_per_step(self, label: str, depth: int, lr: Finite | None = None) -> float:
        """Wall seconds per step of the ensemble the point trained in (all its members together)."""
        return self.seconds[self.key(label, depth, lr)] / self.steps

    def seconds_per_member_step(self, label: str, depth: int, lr: Finite | None = None) -> float:
        """:meth:`seconds_per_step` over the ensemble's members."""
        return self.seconds_per_step(label, depth, lr) / self.members[self.key(label, depth, lr)]


def training_plan(budget: Budget, runs: list[Run] | None = None) -> RunPlan:
    """The runs of ``runs`` (default :func:`plan`) as one train_many call: each variant's model at its depth,
    Adam at its rate and seed (:func:`variant_train_config`), on the Markov language (seed 0), every ensemble
    tracking its first ``update_steps`` updates. Runs that share a graph and a depth train as one ensemble
    whatever their rate and warmup."""
    runs, sub = plan(budget) if runs is None else list(runs), sizes(budget)
    return RunPlan(
        [variant_config(r.label, r.depth, budget) for r in runs],
        [_train_config(r.label, r.depth, sub, r.seed, r.lr) for r in runs],
        MarkovLanguage(budget.vocab_size, seed=0),
        trackers=functools.partial(_trackers, sub.update_steps),
    )


def train_runs(context: RunContext, runs: list[Run] | None = None) -> Runs:
    """Train every :class:`Run` of ``runs`` (default :func:`plan`) as :func:`training_plan` lays them out, where
    ``context`` says (its device and worker processes); seed s means initialization s and data stream s."""
    budget = context.budget
    sub = sizes(budget)
    runs = plan(budget) if runs is None else list(runs)
    hists = context.train(training_plan(budget, runs))
    histories: dict[tuple[str, int, float], list[History]] = {}
    seconds, members = {}, {}
    for run, hist in zip(runs, hists, strict=True):
        histories.setdefault(run.cell, []).append(hist)
        seconds[run.cell], members[run.cell] = hist.seconds, hist.ensemble_size
    return Runs(histories, sub.train_steps, sub.lr, seconds, members)


@dataclass
class TrainabilityMap:
    """Adam runs of each style at each (depth, learning rate): (style, depth, rate) → one History per seed."""

    styles: tuple[str, ...]
    depths: tuple[int, ...]
    rates: tuple[float, ...]
    histories: dict[tuple[str, int, float], list[History]]
    steps: Repeats

    def fractions(self, style: str, depth: int, rate: Finite, window: int) -> list[float]:
        """Per seed: the fraction learned of one cell (−inf for a diverged seed)."""
        return fraction_learned(self.histories[(style, depth, rate)], window)

    def fraction(self, style: str, depth: int, rate: Finite, window: int) -> float:
        """Median fraction learned over the seeds of one cell (−inf where most seeds diverged)."""
        return statistics.median(self.fractions(style, depth, rate, window))

    def diverged(self, style: str, depth: int, rate: Finite) -> list[int | None]:
        """Per seed: the step its loss diverged at, or None."""
        return [h.diverged_at for h in self.histories[(style, depth, rate)]]

    def highest_trained_rate(self, style: str, depth: int, window: int, threshold: Probability) -> float | None:
        """The highest rate whose cell's median reaches ``threshold`` (None: no rate does)."""
        ok = [r for r in self.rates if self.fraction(style, depth, r, window) >= threshold]
        return max(ok) if ok else None


def trainability_map(runs: Runs, budget: Budget) -> TrainabilityMap:
    """The map's cells out of the chapter's runs: MAP_STYLES × the map depths × :func:`budget_map_rates`
    (the middle column is the frontier's runs at the chapter's rate)."""
    return _map_of(runs, MAP_STYLES, tuple(sizes(budget).map_depths), budget_map_rates(budget))


def _map_of(runs: Runs, styles: tuple[str, ...], depths: tuple[int, ...], rates: tuple[float, ...]) -> TrainabilityMap:
    """The cells styles × depths × rates of ``runs`` as a :class:`TrainabilityMap`."""
    return TrainabilityMap(
        styles, depths, rates, {(s, n, r): runs.at(s, n, r) for s in styles for n in depths for r in rates}, runs.steps
    )


def train_map(
    context: RunContext,
    depths: tuple[int, ...],
    rates: tuple[float, ...],
    seeds: Repeats = 1,
    styles: tuple[str, ...] = MAP_STYLES,
) -> TrainabilityMap:
    """Train every style at every depth and Adam rate (no warmup, the chapter's steps and batches,
    seeds 0 … seeds − 1) on their own (the chapter trains its map in :func:`train_runs`' one call).
    Runs of one style and depth differ only in their rate, so they share one graph: a row of the
    map is one ensemble (halved where that balances the worker processes)."""
    for style in styles:
        choice("map style", style, MAP_STYLES)
    depths = tuple(positive_int("depth", n) for n in depths)
    rates = tuple(positive_float("rate", r) for r in rates)
    if not depths or not rates:
        raise ValueError(f"a map needs at least one depth and one rate, got depths {depths} and rates {rates}")
    cells = [Run(style, n, r, seed) for n in depths for style in styles for r in rates for seed in range(seeds)]
    return _map_of(train_runs(context, cells), tuple(styles), depths, rates)


# ---- reading the runs -----------------------------------------------------------------------------


def fraction_learned(hists: list[History], window: Count) -> list[float]:
    """Per seed: (plateau − final loss)/(plateau − floor); −inf for a diverged run."""
    return [h.fraction_learned(window) for h in hists]


def frontier(runs: Runs, window: Count, depths: tuple[int, ...]) -> dict[str, dict[int, float]]:
    """label → depth → median fraction learned over seeds at the chapter's rate, for every frontier
    variant at those of ``depths`` it was trained at."""
    return {lab: {n: runs.median(lab, n, window) for n in depths if runs.has(lab, n)} for lab in FRONTIER}


def deepest_learning(curve: dict[int, float], threshold: Probability) -> int | None:
    """The deepest depth at which the fraction learned reaches ``threshold`` (None: none does)."""
    ok = [n for n, f in curve.items() if f >= threshold]
    return max(ok) if ok else None


# ---- the slider -----------------------------------------------------------------------------------


def live_run(depth: Depth, label: str, budget: Budget, progress: bool = False) -> Runs:
    """One seed of one variant at a depth of the live panel's range, with the chapter's rate and steps."""
    live_range("depth", depth, sizes(budget).live_depth, budget)
    context = RunContext.here(budget, progress=progress, workers=1)  # the slider is an entry point: the widget's
    return train_runs(context, [Run(variant(label).label, depth, sizes(budget).lr, 0)])


# ---- the chapter's work, for its estimate ------------------------------------------------------------


def work(budget: Budget) -> list[StackPasses | TrainRuns]:
    """What the experiments above compute at ``budget``, as :mod:`deepnotes.cost.model` counts it (the page
    adds its derivations and figures: :mod:`deepnotes.chapters.catalog`):

        init_profiles     the stacks of :func:`_profile_stacks` at the headline depth: stream_profiles' forward
                          + backward, block by block on PyTorch's path (it keeps the stream and its gradients)
        train_runs        the ensembles of :func:`training_plan` (every run of :func:`plan`)
        slider "frontier" the precomputed grid (slider_depths × MAP_STYLES) reads train_runs' histories; a
                          setting they lack is a :func:`live_run` (one run, its own train_many call)

    Nothing here depends on results."""
    sub = sizes(budget)
    batch, seq = sub.train_batch
    runs = plan(budget)
    trained = {r.cell for r in runs}
    live = [Run(lab, n, sub.lr, 0) for n in sub.slider_depths for lab in MAP_STYLES if (lab, n, sub.lr) not in trained]
    return [
        *(
            StackPasses(variant_config(members[0][0], sub.depth, budget), len(members), batch, seq, compiled=False)
            for members in _profile_stacks(budget, sub.depth, PROFILE_STYLES)
        ),
        *planned_ensembles(training_plan(budget, runs)),
        *(w for run in live for w in planned_ensembles(training_plan(budget, [run]))),
    ]
