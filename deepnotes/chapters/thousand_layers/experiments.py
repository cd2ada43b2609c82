"""Experiments of the chapter "Training 1000 layers": the stream and the gradients of 1000-block
stacks at initialization, and Adam runs of every norm style at every depth of the trainability
frontier, all on the stacked-weight engine (:mod:`deepnotes.core.engine`) as ensembles, spread over
the CPU's cores (:mod:`deepnotes.core.workers`). They measure and return numbers; figures come from
:mod:`deepnotes.chapters.thousand_layers.figures`.

The variants (one Adam learning rate and one step count for all):

    post                  x_{l+1} = LN(x_l + F(x_l)),       Xavier weights
    pre                   x_{l+1} = x_l + F(LN(x_l)),        Xavier weights, a final LN
    deepnorm              x_{l+1} = LN(α·x_l + F(x_l)),      α = (2N)^{1/4}, β = (8N)^{-1/4} on v/out/FFN
    deepnorm, α only      α = (2N)^{1/4}, β = 1               (DeepNet's two constants taken apart)
    deepnorm, β only      α = 1, β = (8N)^{-1/4}
    rezero                x_{l+1} = x_l + g·F(x_l),          g a trained scalar starting at 0
    …, warmup             the same with a linear warmup η_t = η·min(1, (t+1)/T)
"""
from __future__ import annotations

import functools
import statistics
from dataclasses import dataclass, replace

from deepnotes.core import ensemble_trackers as et
from deepnotes.core import scaling
from deepnotes.core.budget import Budget, device as default_device, resolve_budget
from deepnotes.core.config import ModelConfig, TrainConfig
from deepnotes.core.data import MarkovLanguage, probe_batch
from deepnotes.core.engine import Stack, graph_config
from deepnotes.core.ensemble import train_many
from deepnotes.core.ensemble_probes import StreamProfile, stream_profiles
from deepnotes.core.train import History
from deepnotes.core.validate import boolean, choice, positive_float, positive_int
from deepnotes.core.workers import default_workers

PROFILE_STYLES = ("post", "pre", "deepnorm", "rezero")       # the styles profiled at initialization
CONSTANTS = ("paper", "alpha only", "beta only")             # which of DeepNet's constants a DeepNorm variant keeps


@dataclass(frozen=True)
class Variant:
    """A norm style, which DeepNorm constants it keeps, and whether it warms up."""
    label: str
    norm: str                     # post | pre | deepnorm | rezero
    warmup: bool = False
    constants: str = "paper"      # deepnorm only: one of CONSTANTS


VARIANTS = {v.label: v for v in (
    Variant("post", "post"), Variant("post, warmup", "post", warmup=True),
    Variant("pre", "pre"), Variant("pre, warmup", "pre", warmup=True),
    Variant("deepnorm", "deepnorm"), Variant("deepnorm, warmup", "deepnorm", warmup=True),
    Variant("deepnorm, α only", "deepnorm", constants="alpha only"),
    Variant("deepnorm, β only", "deepnorm", constants="beta only"),
    Variant("rezero", "rezero"), Variant("rezero, warmup", "rezero", warmup=True))}
HEADLINE = ("post", "post, warmup", "pre", "deepnorm", "deepnorm, α only", "deepnorm, β only", "rezero")
FRONTIER = ("post", "post, warmup", "pre", "pre, warmup", "deepnorm", "deepnorm, warmup", "rezero", "rezero, warmup")
NORMS = ("post", "pre", "deepnorm", "rezero")                 # the slider's styles (each with and without warmup)
MAP_STYLES = ("post", "pre", "deepnorm", "rezero")            # the rows of the trainability map


def variant(label: str) -> Variant:
    return VARIANTS[choice("variant", label, VARIANTS)]


def variant_config(label: str, depth: int, budget: Budget) -> ModelConfig:
    """The budget's Transformer at ``depth`` blocks in the variant's style; DeepNorm's constants
    from :func:`deepnotes.core.scaling.deepnorm_coefficients` (the encoder/decoder-only form)."""
    var = variant(label)
    positive_int("depth", depth)
    if var.norm != "deepnorm":
        return budget.model_config(depth, norm=var.norm)
    alpha, beta = scaling.deepnorm_coefficients(depth)
    kept = {"paper": dict(alpha=alpha, beta=beta), "alpha only": dict(alpha=alpha, beta=1.0),
            "beta only": dict(alpha=1.0, beta=beta)}[var.constants]
    return budget.model_config(depth, norm="deepnorm", **kept)


def variant_train_config(label: str, budget: Budget, seed: int = 0, steps: int | None = None) -> TrainConfig:
    """Adam at the chapter's one learning rate, on the chapter's batches; the budget's warmup for the
    "+ warmup" variants."""
    sub = budget.thousand_layers
    steps = sub.train_steps if steps is None else positive_int("steps", steps)
    batch, seq = sub.train_batch
    return TrainConfig(optimizer="adam", lr=sub.lr, steps=steps, warmup_steps=min(sub.warmup, steps) if variant(label).warmup
                       else 0, batch_size=batch, seq_len=seq, seed=seed)


def warmup_steps(depth: int, steps: int) -> int:
    """The chapter's warmup rule at ``depth`` blocks: a linear warmup of T ≥ N steps, so that its first
    step, η/T, is at most η/N (:func:`~deepnotes.chapters.thousand_layers.derive.warmup_length`);
    T = N, capped at the run's ``steps`` (then the whole run warms up and its first step is η/steps)."""
    return min(positive_int("depth", depth), positive_int("steps", steps))


def map_rates(lr: float, count: int = 5, decades: float = 2.0) -> tuple[float, ...]:
    """``count`` Adam rates evenly spaced in log over ``decades`` decades and centred on ``lr``:
    lr · 10^(decades · (i/(count − 1) − 1/2)), i = 0 … count − 1 (``lr`` itself is the middle one
    when ``count`` is odd, so the map's middle column is the chapter's rate)."""
    lr, decades = positive_float("lr", lr), positive_float("decades", decades)
    if positive_int("count", count) < 2:
        raise ValueError(f"count must be at least 2 (a map needs two rates), got {count}")
    return tuple(lr * 10 ** (decades * (i / (count - 1) - 0.5)) for i in range(count))


# ---- at initialization ----------------------------------------------------------------------------

def init_profiles(budget: Budget, depth: int | None = None, styles=PROFILE_STYLES) -> dict[str, StreamProfile]:
    """:func:`~deepnotes.core.ensemble_probes.stream_profiles` of each style at ``depth`` (default
    the headline depth) on one batch of the language (seed 0); every style is a member of one stack."""
    depth = budget.thousand_layers.depth if depth is None else positive_int("depth", depth)
    dev = default_device()
    batch, seq = budget.thousand_layers.train_batch
    tokens = probe_batch(MarkovLanguage(budget.vocab_size, seed=0), batch, seq, seed=0, device=dev)   # [B, T+1]
    cfgs = {s: variant_config(s, depth, budget) for s in styles}
    groups: dict[ModelConfig, list[str]] = {}
    for style, cfg in cfgs.items():
        groups.setdefault(graph_config(cfg), []).append(style)
    out: dict[str, StreamProfile] = {}
    for members in groups.values():
        stack = Stack([cfgs[s] for s in members], seeds=[0] * len(members), device=dev)
        profiles = stream_profiles(stack, tokens.expand(len(members), *tokens.shape))      # tokens [K, B, T+1]
        out.update(zip(members, profiles))
    return {s: out[s] for s in styles}


# ---- training -------------------------------------------------------------------------------------

def _trackers(update_steps: int) -> list:
    """The engine trackers of every run (module level: worker processes unpickle it)."""
    return [et.UpdateSize(first=update_steps)]


@dataclass
class Runs:
    """Every training run of the chapter: (variant label, depth) → one History per seed."""
    histories: dict[tuple[str, int], list[History]]
    steps: int
    lr: float
    warmup: int
    seconds: dict[tuple[str, int], float]     # wall seconds of the ensemble each run trained in
    members: dict[tuple[str, int], int]       # how many members that ensemble had

    def seconds_per_step(self, label: str, depth: int) -> float:
        """Wall seconds per step of the ensemble the run trained in (all its members together)."""
        return self.seconds[(label, depth)] / self.steps

    def seconds_per_member_step(self, label: str, depth: int) -> float:
        """:meth:`seconds_per_step` over the ensemble's members."""
        return self.seconds_per_step(label, depth) / self.members[(label, depth)]


def plan(budget: Budget) -> list[tuple[str, int, int]]:
    """(label, depth, seed) of every run: the headline variants at the headline depth with the
    budget's seeds, the frontier variants at every depth (reusing the headline runs), and DeepNorm
    at the deepest depth."""
    sub = budget.thousand_layers
    runs = [(lab, sub.depth, s) for lab in HEADLINE for s in range(sub.seeds)]
    for n in (*sub.frontier_depths, sub.depth):
        runs += [(lab, n, s) for lab in FRONTIER for s in range(sub.frontier_seeds) if (lab, n, s) not in runs]
    runs.append(("deepnorm", sub.deepest, 0))
    return list(dict.fromkeys(runs))


def train_runs(budget: Budget, runs: list[tuple[str, int, int]] | None = None, progress: bool = False,
               workers: int | None = None) -> Runs:
    """Train every (label, depth, seed) of ``runs`` (default :func:`plan`) on the Markov language
    (seed 0); seed s means initialization s and data stream s. Runs sharing a graph and a depth train
    as one ensemble; ensembles are spread over ``workers`` processes (default: one per core, at most
    two; one on CUDA)."""
    sub = budget.thousand_layers
    runs = plan(budget) if runs is None else list(runs)
    dev = default_device()
    workers = default_workers(dev) if workers is None else workers
    hists = train_many([variant_config(lab, n, budget) for lab, n, _ in runs],
                       [variant_train_config(lab, budget, seed) for lab, _, seed in runs],
                       MarkovLanguage(budget.vocab_size, seed=0), trackers=functools.partial(_trackers, sub.update_steps),
                       device=dev, workers=workers, progress=progress)
    histories: dict[tuple[str, int], list[History]] = {}
    seconds, members = {}, {}
    for (lab, n, _), hist in zip(runs, hists):
        histories.setdefault((lab, n), []).append(hist)
        seconds[(lab, n)], members[(lab, n)] = hist.seconds, hist.ensemble_size
    return Runs(histories, sub.train_steps, sub.lr, sub.warmup, seconds, members)


@dataclass
class TrainabilityMap:
    """Adam runs of each style at each (depth, learning rate): (style, depth, rate) → one History per seed."""
    styles: tuple[str, ...]
    depths: tuple[int, ...]
    rates: tuple[float, ...]
    histories: dict[tuple[str, int, float], list[History]]
    steps: int

    def fraction(self, style: str, depth: int, rate: float, window: int) -> float:
        """Median fraction learned over the seeds of one cell (−inf where most seeds diverged)."""
        return statistics.median(fraction_learned(self.histories[(style, depth, rate)], window))

    def diverged(self, style: str, depth: int, rate: float) -> list[int | None]:
        """Per seed: the step its loss diverged at, or None."""
        return [h.diverged_at for h in self.histories[(style, depth, rate)]]


def train_map(budget: Budget, depths: tuple[int, ...], rates: tuple[float, ...], seeds: int = 1,
              styles: tuple[str, ...] = MAP_STYLES, progress: bool = False, workers: int | None = None
              ) -> TrainabilityMap:
    """Train every style at every depth and Adam rate (no warmup, the chapter's steps and batches,
    seeds 0 … seeds − 1). Runs of one style and depth differ only in their rate, so they share one
    graph: a row of the map is one ensemble (halved where that balances the worker processes)."""
    for style in styles:
        choice("map style", style, MAP_STYLES)
    depths = tuple(positive_int("depth", n) for n in depths)
    rates = tuple(positive_float("rate", r) for r in rates)
    if not depths or not rates:
        raise ValueError(f"a map needs at least one depth and one rate, got depths {depths} and rates {rates}")
    cells = [(style, n, r, seed) for n in depths for style in styles for r in rates
             for seed in range(positive_int("seeds", seeds))]
    dev = default_device()
    hists = train_many([variant_config(style, n, budget) for style, n, _, _ in cells],
                       [replace(variant_train_config(style, budget, seed), lr=r) for style, _, r, seed in cells],
                       MarkovLanguage(budget.vocab_size, seed=0), device=dev,
                       workers=default_workers(dev) if workers is None else workers, progress=progress)
    out: dict[tuple[str, int, float], list[History]] = {}
    for (style, n, r, _), h in zip(cells, hists):
        out.setdefault((style, n, r), []).append(h)
    return TrainabilityMap(tuple(styles), depths, rates, out, budget.thousand_layers.train_steps)


# ---- reading the runs -----------------------------------------------------------------------------

def fraction_learned(hists: list[History], window: int) -> list[float]:
    """Per seed: (plateau − final loss)/(plateau − floor); −inf for a diverged run."""
    return [h.fraction_learned(window) for h in hists]


def frontier(runs: Runs, window: int, depths: tuple[int, ...]) -> dict[str, dict[int, float]]:
    """label → depth → median fraction learned over seeds, for every frontier variant at ``depths``."""
    return {lab: {n: statistics.median(fraction_learned(runs.histories[(lab, n)], window)) for n in depths}
            for lab in FRONTIER}


def deepest_learning(curve: dict[int, float], threshold: float) -> int | None:
    """The deepest depth at which the fraction learned reaches ``threshold`` (None: none does)."""
    ok = [n for n, f in curve.items() if f >= threshold]
    return max(ok) if ok else None


# ---- the slider -----------------------------------------------------------------------------------

def live_run(depth: int, norm: str, warmup: bool, budget: Budget | None = None, progress: bool = False) -> Runs:
    """One seed of one style at any depth (the live panel), with the chapter's rate and steps."""
    budget = resolve_budget(budget)
    return train_runs(budget, [(label_of(norm, warmup), positive_int("depth", depth), 0)], progress=progress,
                      workers=1)


def label_of(norm: str, warmup: bool) -> str:
    """The variant label of a slider setting: "post" or "post, warmup"."""
    choice("norm style", norm, NORMS)
    return f"{norm}, warmup" if boolean("warmup", warmup) else norm

