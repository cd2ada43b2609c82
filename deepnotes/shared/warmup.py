"""The warmup comparison: at one depth, Adam at the peak rate ``budget.warmup.lr``, Post-LN without
warmup and with a linear warmup of ``budget.warmup.warmup`` steps, beside Pre-LN and DeepNorm without
one; each run from ``budget.warmup.seeds`` seeds (seed s: initialization s, data stream s of one
Markov language). "Increment explosion" (Experiment 3) and "Post-Norm vs Pre-Norm" (Experiment 2)
both call :func:`runs` and show :func:`verdicts`.

A run *trains* when the median over its seeds of the fraction learned,
(plateau − final loss)/(plateau − floor) on the held-out sample, reaches :data:`TRAINED`."""

from __future__ import annotations

import functools
import statistics

from deepnotes.core import measure
from deepnotes.core.config import Budget, ModelConfig, TrainConfig
from deepnotes.core.data import MarkovLanguage
from deepnotes.core.ensembles import RunContext, RunPlan
from deepnotes.core.measure import every_for
from deepnotes.core.train import FRACTION_READ, History
from deepnotes.core.validate import Count, Depth, positive_int
from deepnotes.cost.model import TrainRuns, planned_ensembles
from deepnotes.show import verdicts as vd
from deepnotes.show.cite import cite

TRAINED = 0.5  # median fraction learned a run must reach to count as trained
NO_WARMUP = "post, no warmup"
SOURCES = {  # where the sources say so, per row of :func:`verdicts`, and what each row decides
    "fails": cite(  # a deep stack at the full rate from step 0 stalls; claim 25's plateau-then-NaN is context
        "seed 000 §增量爆炸 claim 7; seed 004 §增量爆炸 claim 7; seed 001 §1）增量爆炸 claim 10; "
        "seed 003 §Warmup是怎样起作用的 claims 20, 25",
        tests=("000 claim 7", "004 claim 7", "001 claim 10", "003 claim 20"),
    ),
    "needs warmup": cite(  # the contrast; claim 26's mechanism and Adam's claims 15, 18 (one half of it) are context
        "seed 002 §残差连接 claim 18; seed 000 §增量爆炸 claim 8.1; seed 004 §治标之法 claim 8; "
        "seed 003 §Warmup是怎样起作用的 claims 20, 26; seed 003 §我们真的担心梯度消失吗 claims 15, 18",
        tests=("002 claim 18", "000 claim 8.1", "004 claim 8", "003 claim 20"),
    ),
    "pre": cite(
        "seed 002 §残差连接 claim 19; seed 003 §Warmup是怎样起作用的 claim 27", tests=("002 claim 19", "003 claim 27")
    ),
    "deepnorm": cite("DeepNet; seed 000 §初步结论 claim 21", paper="DeepNet"),
}


def warmed(budget: Budget) -> str:
    """The label of the Post-LN run with warmup: "post, warmup 200"."""
    return f"post, warmup {budget.warmup.warmup}"


def variants(budget: Budget) -> dict[str, tuple[str, int]]:
    """label → (norm style, warmup steps), in the order the pages show them."""
    return {
        NO_WARMUP: ("post", 0),
        warmed(budget): ("post", budget.warmup.warmup),
        "pre": ("pre", 0),
        "deepnorm": ("deepnorm", 0),
    }


def settings(
    budget: Budget, depths: tuple[int, ...] | None = None
) -> list[tuple[tuple[int, str, int], ModelConfig, TrainConfig]]:
    """((depth, label, seed), model, training) of every run at ``depths`` (default: the entry's depth)."""
    sub = budget.warmup
    depths = (sub.depth,) if depths is None else tuple(positive_int("depth", n) for n in depths)
    return [
        (
            (n, label, seed),
            budget.model_config(n, norm=norm),
            budget.train_config("adam", sub.lr, sub.steps, warmup, seed),
        )
        for n in depths
        for label, (norm, warmup) in variants(budget).items()
        for seed in range(sub.seeds)
    ]


def trackers(every: Count) -> list:
    """Fresh trackers of every run: per-block gradient norms and updates every ``every`` steps
    (module-level, so that worker processes can receive it through :func:`functools.partial`)."""
    return [measure.BlockGradNorms(every), measure.BlockUpdates(every)]


def training_plan(budget: Budget, depths: tuple[int, ...] | None = None) -> RunPlan:
    """:func:`settings`' runs as one train_many call on one Markov language (seed 0), every ensemble tracking its
    blocks' gradients and updates at ``track_points`` steps (the runs of one depth share a graph and train as
    one ensemble)."""
    todo = settings(budget, depths)
    return RunPlan(
        [m for _, m, _ in todo],
        [t for _, _, t in todo],
        MarkovLanguage(budget.vocab_size, seed=0),
        trackers=functools.partial(trackers, every_for(budget.warmup.steps, budget.warmup.track_points)),
    )


def runs(context: RunContext, depths: tuple[int, ...] | None = None) -> dict[int, dict[str, list[History]]]:
    """depth → label → one History per seed, for :func:`variants` at ``depths`` (default: the entry's depth),
    trained as :func:`training_plan` lays them out, where ``context`` says."""
    budget = context.budget
    hists = context.train(training_plan(budget, depths))
    out: dict[int, dict[str, list[History]]] = {}
    for ((n, label, _), _, _), h in zip(settings(budget, depths), hists, strict=True):
        out.setdefault(n, {}).setdefault(label, []).append(h)
    return out


def work(budget: Budget, depths: tuple[int, ...] | None = None) -> list[TrainRuns]:
    """:func:`runs`' training work, for a chapter's plan: the ensembles of :func:`training_plan`."""
    return planned_ensembles(training_plan(budget, depths))


def setting(budget: Budget, depth: Depth) -> str:
    """The experiment's name in a verdict's record: the same on both pages when they ran the same runs."""
    sub = budget.warmup
    return (
        f"warmup comparison, {budget.name} budget: N = {depth}, Adam {sub.lr:g}, {sub.steps} steps, "
        f"warmup {sub.warmup}, seeds 0..{sub.seeds - 1}"
    )


def verdicts(runs_at: dict[str, list[History]], budget: Budget, depth: Depth) -> vd.VerdictTable:
    """The sources' claims on these runs, each in its source's direction: Post-LN without warmup does
    not train; with warmup it does where it did not without (the contrast that makes "needs warmup"
    informative); Pre-LN and DeepNorm train without."""
    learned = {label: [h.fraction_learned() for h in hs] for label, hs in runs_at.items()}
    warm = warmed(budget)
    reason = (
        f"median over {budget.warmup.seeds} seeds of the {FRACTION_READ}; Adam {budget.warmup.lr:g}, "
        f"{budget.warmup.steps} steps"
    )
    rows = [
        ("Post-LN without warmup does not train", SOURCES["fails"], {NO_WARMUP: False}),
        (
            f"Post-LN needs warmup: it trains with a {budget.warmup.warmup}-step warmup, not without",
            SOURCES["needs warmup"],
            {warm: True, NO_WARMUP: False},
        ),
        ("Pre-LN trains without warmup", SOURCES["pre"], {"pre": True}),
        ("DeepNorm trains without warmup", SOURCES["deepnorm"], {"deepnorm": True}),
    ]
    return vd.VerdictTable(
        [
            vd.check_outcome(
                claim=f"{claim} at N = {depth}",
                source=source,
                expected=expected,
                measured={run: learned[run] for run in expected},
                threshold=TRAINED,
                reason=reason,
                setting=setting(budget, depth),
            )
            for claim, source, expected in rows
        ]
    )


CONSTANT_FACTOR = 2.0  # "≈ constant": max/min of a quantity along the warmup within this factor


def gradient_norm(h: History) -> list[float]:
    """‖∂L/∂θ‖ over the blocks, √(Σ_l ‖∂L/∂θ_l‖²), at each of ``h.grad_steps``."""
    return [sum(g * g for g in per_block) ** 0.5 for per_block in h.grad_norms]


def _early_over_late(h: History) -> float:
    """One run's ‖∇L‖ at step 0 over its median in the run's second half."""
    curve = gradient_norm(h)
    return curve[0] / statistics.median(curve[len(curve) // 2 :])


def _warmup_spread(h: History, w: int) -> tuple[float, list[float]]:
    """max/min of η(t)·‖∇L‖ over one run's tracked steps inside its warmup of ``w`` steps, and the products."""
    product = [h.lrs[t] * g for t, g in zip(h.grad_steps, gradient_norm(h), strict=True) if 0 < t < w]
    return (max(product) / min(product) if product else float("nan")), product


def gradient_verdicts(runs_at: dict[str, list[History]], budget: Budget, depth: Depth) -> vd.VerdictTable:
    """What the annotated §10.2 says of gradients along a run, on these runs' recorded block gradients, seed
    by seed (check_estimate): larger early than late (claim §10.2.2, every run and seed), and warmup keeping
    η(t)·‖∇L‖ about constant (eq. (61)) on the runs with warmup, over the tracked steps inside its warmup."""
    early_late = {label: [_early_over_late(h) for h in hs] for label, hs in runs_at.items()}
    warm, w = runs_at[warmed(budget)], budget.warmup.warmup
    steps = warm[0].grad_steps
    most = {"estimator": "fraction", "limits": vd.MOST}
    rows = [
        vd.check_estimate(
            claim=f"Gradients are larger early in training than later (N = {depth})",
            source=cite("seed 000 annotated §10.2 claim §10.2.2", tests="claim §10.2.2"),
            claimed="‖∇L‖ at step 0 > its median over the run's second half, in most runs and seeds",
            computed="step-0 ÷ late ‖∇L‖ per seed: "
            + "; ".join(f"{k} " + ", ".join(f"{r:.2f}" for r in rs) for k, rs in early_late.items()),
            samples=[r > 1 for rs in early_late.values() for r in rs],
            reason=f"block gradients recorded every {steps[1] - steps[0] if len(steps) > 1 else 0} steps; every run "
            "and seed here",
            **most,
        )
    ]
    spreads = [_warmup_spread(h, w) for h in warm]
    if all(product for _, product in spreads):
        rise = warm[0].lrs[max(t for t in steps if t < w)] / warm[0].lrs[min(t for t in steps if t > 0)]
        rows.append(
            vd.check_estimate(
                claim=f"Warmup amounts to η(t)·‖∇L‖ ≈ constant (N = {depth})",
                source=cite("seed 000 annotated §10.2 eq. (61)", tests="eq. (61)"),
                claimed=f"max/min of η(t)·‖∇L‖ over the warmup ≤ {CONSTANT_FACTOR:g}, in most seeds",
                computed=f"{warmed(budget)}: max/min of η(t)·‖∇L‖ over {len(spreads[0][1])} tracked steps inside "
                f"the warmup per seed "
                + ", ".join(f"{sp:.2f}" for sp, _ in spreads)
                + f" (η(t) alone rises ×{rise:.1f})",
                samples=[sp <= CONSTANT_FACTOR for sp, _ in spreads],
                reason="the linear warmup raises η(t) in proportion to t; the product stays constant only if the "
                "gradient falls as 1/t",
                **most,
            )
        )
    return vd.VerdictTable(rows)
