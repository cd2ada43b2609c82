"""Experiments of the chapter "Increment explosion": they measure and return data (dataclasses, or
dicts of :class:`~deepnotes.core.train.History`); :mod:`.figures` draws them, :mod:`.claims` judges them.

Variants are named by a label: ``post``, ``pre``, ``deepnorm`` (DeepNet's encoder constants
α = (2N)^{1/4}, β = (8N)^{-1/4}) and ``deepnorm/adam`` (Su's Adam constants α = (2N)^{1/2},
λ = (2N)^{-1/2}), plus ``none`` and ``rezero``. Sizes and rates come from ``sizes(budget)``.
"""

from __future__ import annotations

import functools
import statistics
from dataclasses import dataclass, replace

import torch

from deepnotes.chapters.increment_explosion.budget import sizes
from deepnotes.core import measure, scaling
from deepnotes.core.config import Budget, ModelConfig, TrainConfig, live_range
from deepnotes.core.data import MarkovLanguage, probe_batch
from deepnotes.core.engine import MATRICES, build_stack, graph_config
from deepnotes.core.ensembles import RunContext, RunPlan
from deepnotes.core.measure import StepProbe, every_for, loglog_slope, step_probes
from deepnotes.core.train import History
from deepnotes.core.train import progress as progress_bar
from deepnotes.core.validate import Depth, NonNegativeCount, Positive, Repeats, Seed, choice, given
from deepnotes.cost.model import StackPasses, TrainRuns, planned_ensembles
from deepnotes.shared import warmup as shared_warmup
from deepnotes.show.cache import BUDGET_RESULTS_KEPT

# what model_config accepts; "pre/λ" is Pre-LN with α = 1 and λ recomputed from SGD's condition (source 000 claim 27)
VARIANTS = ("post", "pre", "deepnorm", "deepnorm/adam", "none", "rezero", "pre/λ")
PROBED_VARIANTS = ("post", "pre", "pre/λ", "deepnorm", "deepnorm/adam")  # the one-step probe's variants
EARLY_UPDATE_VARIANTS = ("post", "deepnorm", "deepnorm/adam")  # DeepNet's Fig. 5 comparison
PARAM_SETS = ("all", "matrices")  # what the optimizer updates: everything, or the block matrices only
PROBE_OPTIMIZERS = ("sgd", "adam")  # the one-step probe's optimizers
SLOPE_DEPTHS = (10, 10_000)  # the two depths the DeepNorm power law is read off between


def variant_config(
    variant: str, n_layers: Depth, budget: Budget, shape: tuple[int, int, int] | None = None
) -> ModelConfig:
    """The budget's tiny Transformer at depth ``n_layers`` in the given variant (``shape``: another
    (d_model, d_ff, heads), e.g. DeepNet Fig. 5's 64-128-2)."""
    choice("variant", variant, VARIANTS)
    size = {} if shape is None else dict(zip(("d_model", "d_ff", "n_heads"), shape, strict=True))
    if variant == "deepnorm/adam":
        alpha, lam = scaling.su_coefficients(n_layers, "adam")
        return replace(budget.model_config(n_layers, norm="deepnorm", alpha=alpha, beta=lam), **size)
    if variant == "pre/λ":  # Pre-LN has no α: λ from the same condition with α = 1 (SGD's, 2N λ² = 1)
        return replace(budget.model_config(n_layers, norm="pre", beta=scaling.pre_ln_lambda(n_layers, "sgd")), **size)
    return replace(budget.model_config(n_layers, norm=variant), **size)


SCALED_VARIANTS = ("deepnorm", "deepnorm/adam", "pre/λ")  # the variants whose λ/α depends on N


def _gain_ratio(variant: str, n: int) -> float:
    """λ/α of a depth-scaled variant at depth ``n`` (from :mod:`deepnotes.core.scaling`)."""
    if variant == "pre/λ":
        return scaling.pre_ln_lambda(n, "sgd")
    alpha, lam = scaling.deepnorm_coefficients(n) if variant == "deepnorm" else scaling.su_coefficients(n, "adam")
    return lam / alpha


def predicted_slope(variant: str, optimizer: str) -> float:
    """The derivation's power of N in ΔL: 1 for Post-LN and Pre-LN (O(1) gradients per matrix);
    for DeepNorm and Pre-LN with λ recomputed, ΔL ∝ 2N·(λ/α)^k (k = 2 SGD, 1 Adam) with the variant's λ/α taken
    from :mod:`scaling`, read off as the log-log slope between N = 10 and 10⁴ (exact for a power law;
    ``tests`` check it against SymPy's exponent)."""
    choice("variant", variant, VARIANTS)
    k = {"sgd": 2, "adam": 1}[choice("optimizer", optimizer, ("sgd", "adam"))]
    if variant not in SCALED_VARIANTS:
        return 1.0
    values = [2 * n * _gain_ratio(variant, n) ** k for n in SLOPE_DEPTHS]
    return round(loglog_slope(SLOPE_DEPTHS, values), 9)


def task_for(budget: Budget, seed: Seed = 0) -> MarkovLanguage:
    return MarkovLanguage(budget.vocab_size, seed=seed)


@dataclass
class LossChangeSweep:
    """probes[(variant, optimizer)][i] = the StepProbes (one per repeat) at depths[i]."""

    depths: tuple[int, ...]
    lrs: dict[str, float]
    probes: dict[tuple[str, str], list[list[StepProbe]]]

    @property
    def variants(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(v for v, _ in self.probes))

    @property
    def optimizers(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(o for _, o in self.probes))

    def probed(self, variant: str, optimizer: str) -> list[list[StepProbe]]:
        """The StepProbes of (``variant``, ``optimizer``) per depth; a pair the sweep did not probe is refused,
        naming what it did (an optimizer the package knows, LAMB, is not one this chapter probes)."""
        choice("variant", variant, self.variants)
        choice("optimizer this sweep probed", optimizer, self.optimizers)
        if (variant, optimizer) not in self.probes:
            raise ValueError(f"this sweep did not probe {variant!r} with {optimizer!r}; it probed {list(self.probes)}")
        return self.probes[(variant, optimizer)]

    def mean(self, variant: str, optimizer: str, field: str) -> list[float]:
        """The mean over repeats of ``field`` (e.g. ``"delta_loss"``, ``"grad_sq"``) per depth."""
        return [statistics.fmean(getattr(p, field) for p in reps) for reps in self.probed(variant, optimizer)]

    def first_order_per_lr(self, variant: str, optimizer: str) -> list[float]:
        """−⟨∇L, Δθ⟩/η per depth: ‖∇L‖² for SGD, ‖∇L‖₁ for Adam."""
        return [-d / self.lrs[optimizer] for d in self.mean(variant, optimizer, "first_order")]

    def deepest_block_grad_norms(self, variant: str, optimizer: str = "sgd") -> tuple[float, ...]:
        """Per-block gradient norms at the deepest probed depth (first repeat)."""
        return self.probed(variant, optimizer)[-1][0].block_grad_norms


def graph_groups(variants, n_layers: Depth, budget: Budget) -> list[tuple[str, ...]]:
    """The variants grouped by the graph their stacks share (Post-LN and both DeepNorms: one group)."""
    groups: dict = {}
    for v in variants:
        groups.setdefault(graph_config(variant_config(v, n_layers, budget)), []).append(v)
    return [tuple(g) for g in groups.values()]


def loss_change_sweep(
    context: RunContext,
    variants=PROBED_VARIANTS,
    optimizers=PROBE_OPTIMIZERS,
    lrs: dict[str, float] | None = None,
    depths: tuple[int, ...] | None = None,
) -> LossChangeSweep:
    """ΔL after one optimizer step at initialization, for each variant × optimizer × depth × repeat.

    Only the blocks' N·K weight matrices step (the derivation's parameters); embedding, head,
    biases and norms stay put. The probe runs in float64 so that the tiny ΔL of a small learning
    rate is measured exactly. Variants that share a graph and the repeats (seeds) are members of
    one engine stack per depth (on ``context``'s device).
    """
    budget, device = context.budget, context.device
    sub = sizes(budget)
    depths = tuple(given(depths, sub.probe_depths))
    lrs = dict(sub.probe_lrs, **(lrs or {}))
    task = task_for(budget)
    repeats = range(sub.probe_repeats)
    out: dict[tuple[str, str], list[list[StepProbe]]] = {
        (v, o): [[] for _ in depths] for v in variants for o in optimizers
    }
    groups = [(n, group) for n in depths for group in graph_groups(variants, n, budget)]
    for n, group in progress_bar(groups, context.progress):  # one stack per (depth, graph): variants × seeds
        members = [(v, r) for v in group for r in repeats]
        stack = build_stack(
            [variant_config(v, n, budget) for v, _ in members],
            [r for _, r in members],
            device=device,
            dtype=torch.float64,
        )
        tokens = torch.stack(
            [probe_batch(task, budget.batch_size, budget.seq_len, seed=r, device=device) for _, r in members]
        )  # [K, B, T]
        for o in optimizers:
            for (v, _), probe in zip(members, step_probes(stack, tokens, o, lrs[o]), strict=True):
                out[(v, o)][depths.index(n)].append(probe)
    return LossChangeSweep(depths, lrs, out)


def _trackers(every: int, track_update: bool) -> list:
    """The runs' fresh trackers: block gradients every ``every`` steps (and the early-update size).
    Module-level, so that worker processes can receive it (through :func:`functools.partial`)."""
    return [measure.BlockGradNorms(every)] + ([measure.UpdateSize()] if track_update else [])


def runs_plan(
    settings: list[tuple[str, int, TrainConfig]],
    budget: Budget,
    track_update: bool = True,
    params: str = "all",
    shape: tuple[int, int, int] | None = None,
) -> RunPlan:
    """Each (variant, depth, train config) on the Markov language as one train_many call (those sharing a
    graph and a loop train as one ensemble; every norm style is per-member data, so every style at one depth
    trains together). ``params="matrices"`` updates only the blocks' weight matrices (the parameters the
    magnitude analysis scales), leaving embeddings, head, biases and LayerNorm gains at their initial values.
    ``shape``: another (d_model, d_ff, heads)."""
    choice("params", params, PARAM_SETS)
    every = every_for(max(cfg.steps for _, _, cfg in settings), sizes(budget).track_points)
    return RunPlan(
        [variant_config(v, n, budget, shape) for v, n, _ in settings],
        [cfg for _, _, cfg in settings],
        task_for(budget),
        trackers=functools.partial(_trackers, every, track_update),
        trainable=None if params == "all" else MATRICES,
    )


def runs(
    settings: list[tuple[str, int, TrainConfig]],
    context: RunContext,
    track_update: bool = True,
    params: str = "all",
    shape: tuple[int, int, int] | None = None,
) -> list[History]:
    """Train :func:`runs_plan` of the settings where ``context`` says, one History each."""
    return context.train(runs_plan(settings, context.budget, track_update, params, shape))


def run(
    variant: str,
    n_layers: Depth,
    context: RunContext,
    optimizer: str = "adam",
    lr: Positive | None = None,
    steps: Repeats | None = None,
    warmup: NonNegativeCount = 0,
    seed: Seed = 0,
    track_update: bool = True,
    params: str = "all",
) -> History:
    """Train the budget's model in ``variant`` at depth ``n_layers`` on the Markov language
    (``lr`` defaults to the slider's rate for ``optimizer``, ``steps`` to the warmup comparison's
    length; ``params`` as in :func:`runs`)."""
    budget = context.budget
    lr = lr if lr is not None else sizes(budget).slider_lrs[optimizer]
    cfg = budget.train_config(optimizer, lr, given(steps, budget.warmup.steps), warmup, seed)
    return runs([(variant, n_layers, cfg)], context, track_update, params)[0]


def early_update_keys(budget: Budget, variants=EARLY_UPDATE_VARIANTS) -> list[tuple[str, int, int]]:
    """(variant, depth, seed) of every early-update run: each variant at each of ``update_depths``, ``update_seeds``
    seeds."""
    sub = sizes(budget)
    return [(v, n, s) for v in variants for n in sub.update_depths for s in range(sub.update_seeds)]


def early_update_settings(
    budget: Budget, keys: list[tuple[str, int, int]], optimizer: str = "adam", lr: Positive | None = None
) -> list[tuple[str, int, TrainConfig]]:
    """:func:`runs`' settings of those runs: ``update_steps`` steps at ``lr`` (default ``update_lr``), no held-out
    sample (these runs read the model update, not the final loss)."""
    sub = sizes(budget)
    cfg = budget.train_config(optimizer, lr if lr is not None else sub.update_lr, sub.update_steps)
    cfg = replace(cfg, held_out=0)
    return [(v, n, replace(cfg, seed=s)) for v, n, s in keys]


def early_update_sweep(
    context: RunContext,
    variants=EARLY_UPDATE_VARIANTS,
    optimizer: str = "adam",
    lr: Positive | None = None,
    params: str = "all",
    shape: tuple[int, int, int] | None = None,
) -> dict[tuple[str, int], list[History]]:
    """DeepNet's early-update setting at toy scale: the first ``update_steps`` steps of each variant
    at each of ``update_depths`` (at ``update_lr``) from ``update_seeds`` seeds, tracking
    ‖F(x,θ_t) − F(x,θ_0)‖; ``params`` and ``shape`` as in :func:`runs`. The variants and seeds at one depth
    train as one ensemble. (variant, N) → one History per seed."""
    keys = early_update_keys(context.budget, variants)
    hists = runs(early_update_settings(context.budget, keys, optimizer, lr), context, params=params, shape=shape)
    out: dict[tuple[str, int], list[History]] = {}
    for (v, n, _), h in zip(keys, hists, strict=True):
        out.setdefault((v, n), []).append(h)
    return out


def paper_size_updates(context: RunContext) -> dict[tuple[str, int], list[History]]:
    """:func:`early_update_sweep` with every parameter trained, at DeepNet Fig. 5's model size
    (``paper_shape``: 64-128-2) instead of the budget's."""
    return early_update_sweep(context, shape=sizes(context.budget).paper_shape)


def early_updates(context: RunContext) -> dict[str, dict[tuple[str, int], list[History]]]:
    """:func:`early_update_sweep` once per parameter set of :data:`PARAM_SETS`."""
    return {which: early_update_sweep(context, params=which) for which in PARAM_SETS}


def first_step_samples(updates: dict[tuple[str, int], list[History]], depths) -> dict[str, list[list[float]]]:
    """variant → per depth, the model update after the first step of every seed."""
    variants = [v for v in VARIANTS if any(key[0] == v for key in updates)]
    return {v: [[h.update_rms[0] for h in updates[(v, n)]] for n in depths] for v in variants}


def first_step_updates(updates: dict[tuple[str, int], list[History]], depths) -> dict[str, list[float]]:
    """variant → per depth, the median over seeds of the model update after the first step."""
    return {
        v: [statistics.median(s) for s in per_depth] for v, per_depth in first_step_samples(updates, depths).items()
    }


def training_comparisons(context: RunContext) -> dict[int, dict[str, list[History]]]:
    """depth → label → one History per seed: the shared warmup comparison
    (:func:`deepnotes.shared.warmup.runs`, the runs Post-Norm vs Pre-Norm also shows) at each of the
    budget's ``train_depths``, the first being the comparison's own depth; one training call."""
    return shared_warmup.runs(context, sizes(context.budget).train_depths)


@dataclass
class SliderRun:
    """One setting of the slider and its short run."""

    depth: Depth
    norm: str
    optimizer: str
    lr: Positive
    warmup: NonNegativeCount
    history: History


def slider_run(
    depth: Depth,
    norm: str,
    optimizer: str,
    lr: Positive | None = None,
    warmup: NonNegativeCount = 0,
    *,
    budget: Budget,
    progress: bool = False,
) -> SliderRun:
    """The slider's experiment: a short run (``slider_steps``) at one setting; ``lr`` defaults to
    the budget's ``slider_lrs[optimizer]``. A setting of the precomputed grid comes from
    :func:`slider_grid` (the whole grid trained in ensembles, once)."""
    sub = sizes(budget)
    live_range("depth", depth, sub.live_depth, budget)
    choice("optimizer", optimizer, sub.slider_lrs)
    lr = lr if lr is not None else sub.slider_lrs[optimizer]
    context = RunContext.here(budget, progress=progress)  # the slider is an entry point: the widget calls it
    grid = slider_grid(context)
    if warmup == 0 and lr == sub.slider_lrs[optimizer] and (depth, norm, optimizer) in grid:
        return SliderRun(depth, norm, optimizer, lr, warmup, grid[(depth, norm, optimizer)])
    hist = run(norm, depth, context, optimizer, lr, steps=sub.slider_steps, warmup=warmup)
    return SliderRun(depth, norm, optimizer, lr, warmup, hist)


def slider_grid_settings(budget: Budget) -> tuple[list[tuple[int, str, str]], list[tuple[str, int, TrainConfig]]]:
    """The (depth, norm, optimizer) keys of the slider's grid and :func:`runs`' settings for them: ``slider_steps``
    steps at the budget's slider rate of each optimizer."""
    sub = sizes(budget)
    keys = [(n, v, o) for n in sub.slider_depths for v in sub.slider_norms for o in sub.slider_optimizers]
    return keys, [(v, n, budget.train_config(o, sub.slider_lrs[o], sub.slider_steps)) for n, v, o in keys]


def slider_grid(context: RunContext) -> dict[tuple[int, str, str], History]:
    """(depth, norm, optimizer) → the short run of every setting of the slider's grid, at the budget's
    slider rates, the norms that share a graph at each depth and optimizer trained as one ensemble."""
    return _slider_grid(context.quiet())


@functools.lru_cache(maxsize=BUDGET_RESULTS_KEPT)
def _slider_grid(context: RunContext) -> dict[tuple[int, str, str], History]:
    """The cache behind :func:`slider_grid`: the door checks the arguments there, before hashing."""
    keys, settings = slider_grid_settings(context.budget)
    return dict(zip(keys, runs(settings, context), strict=True))


# ---- the chapter's work, for its estimate ------------------------------------------------------------


def loss_change_work(budget: Budget) -> list[StackPasses]:
    """:func:`loss_change_sweep`'s work at its defaults: per (depth, graph group) stack of the variants ×
    ``probe_repeats``, per optimizer a forward + backward and a forward without gradients (run in float64,
    counted as float32 passes: the same FLOPs and launches)."""
    sub = sizes(budget)
    b, t, passes = budget.batch_size, budget.seq_len, len(PROBE_OPTIMIZERS)
    out = []
    for n in sub.probe_depths:
        for group in graph_groups(PROBED_VARIANTS, n, budget):
            model, members = variant_config(group[0], n, budget), len(group) * sub.probe_repeats
            out += [
                StackPasses(model, members, b, t, passes=passes),
                StackPasses(model, members, b, t, passes=passes, backward=False),
            ]
    return out


def work(budget: Budget) -> list[StackPasses | TrainRuns]:
    """What the experiments above compute at ``budget``, as :mod:`deepnotes.cost.model` counts it (the page
    adds its derivations and figures: :mod:`deepnotes.chapters.catalog`):

        loss_change_sweep     :func:`loss_change_work`
        early_updates         per parameter set, the ensembles of the early-update runs (:func:`runs_plan`)
        paper_size_updates    the same with every parameter trained, at paper_shape (DeepNet Fig. 5's 64-128-2)
        training_comparisons  the shared warmup comparison (deepnotes.shared.warmup) at every train depth
        slider_grid           the slider's grid (:func:`slider_grid_settings`) in one :func:`runs` call

    Nothing here depends on results; the live panel runs nothing at build time (every slider setting drawn at
    build time comes from slider_grid)."""
    early = early_update_settings(budget, early_update_keys(budget))
    return [
        *loss_change_work(budget),
        *(w for which in PARAM_SETS for w in planned_ensembles(runs_plan(early, budget, params=which))),
        *planned_ensembles(runs_plan(early, budget, shape=sizes(budget).paper_shape)),
        *shared_warmup.work(budget, sizes(budget).train_depths),
        *planned_ensembles(runs_plan(slider_grid_settings(budget)[1], budget)),
    ]
