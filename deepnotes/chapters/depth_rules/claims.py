"""The chapter's verdicts: for every published rule and optimizer, the derived order in N of its first step's loss
change against the slope measured on its stacks (:func:`first_step_verdicts`, the seeds' slope door); for every rule,
its paper's statement about the depths it trains at against the frontier (:func:`frontier_verdicts`), and whether
the best learning rate transfers across depth, Depth-µP's claim, against the map (:func:`transfer_verdicts`)."""

from __future__ import annotations

import math
import statistics

from deepnotes.chapters.depth_rules import derive
from deepnotes.chapters.depth_rules import experiments as ex
from deepnotes.chapters.depth_rules.budget import sizes
from deepnotes.core.config import Budget
from deepnotes.core.rules import PUBLISHED
from deepnotes.core.validate import Depth, Integer, Positive, Real
from deepnotes.cost.model import Derivations
from deepnotes.show import verdicts as vd
from deepnotes.show.cite import cite

TRAINED = 0.5  # a run trains: half-way from the plateau to the floor (the 1000-layer chapter's threshold)
GRID_STEPS = 1  # the best rate "transfers" when the deepest's lies within this many grid steps of the shallowest's
SLOPE_ATOL = 0.2  # a fitted slope matches the derived order within ±0.2 (the increment chapter's; set before any run)
PAPERS = {  # the paper of each rule, as citations.PAPERS names it
    "Post-LN": "Vaswani et al.",
    "Pre-LN": "Xiong et al.",
    "DeepNorm": "DeepNet",
    "ReZero": "Bachlechner",
    "SkipInit": "SkipInit",
    "GPT-2": "Radford et al.",
    "Depth-µP": "Tensor Programs VI",
}


def first_step_verdicts(steps: ex.FirstSteps) -> vd.VerdictTable:
    """Per rule and optimizer: −ΔL of one step from initialization ∝ N^order, the order derived by SymPy for that
    rule, judged on the measured slope over two depth ranges (check_slope)."""
    orders = derive.rule_orders()
    rows = []
    for name in steps.rules:
        rule = PUBLISHED[name]
        for opt in ex.OPTIMIZERS:
            order = orders[name][opt]["order"]
            rows.append(
                vd.check_slope(
                    claim=f"{name}, {opt}: the first step's loss change grows like N^{order} (derived for this rule)",
                    source=cite(
                        f"{rule.source}, the rule; its first step derived here; measured, "
                        f"N = {steps.depths[0]}..{steps.depths[-1]}",
                        paper=PAPERS[name],
                    ),
                    want=float(order),
                    atol=SLOPE_ATOL,
                    depths=steps.depths,
                    samples_by_depth=steps.samples[(name, opt)],
                    reason=f"−⟨∇L, Δθ⟩ of one {opt} step at the rule's own rate, {len(steps.samples[(name, opt)][0])} "
                    "seeds per depth",
                )
            )
    return vd.VerdictTable(rows)


def derivations(budget: Budget) -> Derivations:
    """The page's SymPy derivations, as its cells call them."""
    return Derivations(((derive.rule_orders, ()),))


# What each rule's paper says about the depths it trains at (blocks N; None: every depth of the frontier), in its
# own direction: DeepNet finds Post-LN training 6L-6L and not 18L-18L; the others claim depth.
FRONTIER_CLAIMS = {  # rule → (what its paper says, {N: trains?} or None for every depth, where, the paper)
    "Post-LN": ("trains at N = 6 and not at N = 18", {6: True, 18: False}, "DeepNet §3, Fig. 3(c)", "DeepNet"),
    "Pre-LN": ("trains without warmup at its paper's depth (6 blocks)", {6: True}, "Xiong et al. 2020", "Xiong et al."),
    "DeepNorm": ("trains up to 1000 blocks", None, "DeepNet, abstract", "DeepNet"),
    "ReZero": (
        "trains Transformers past 100 layers without warmup or LayerNorm",
        {6: True, 18: True, 100: True},
        "Bachlechner et al. 2021, §1",
        "Bachlechner",
    ),
    "SkipInit": (
        "trains 1000-layer residual networks (ResNets without normalization; here Pre-LN blocks)",
        None,
        "De & Smith 2020 (SkipInit)",
        "SkipInit",
    ),
    "GPT-2": (
        "trains at its models' depths (12 to 48 blocks)",
        {18: True},
        "Radford et al. 2019",
        "Radford et al.",
    ),
    "Depth-µP": (
        "trains at every depth (its infinite-depth limit)",
        None,
        "Yang et al. 2023 (Tensor Programs VI)",
        "Tensor Programs VI",
    ),
}


def frontier_verdicts(runs: ex.RuleRuns, budget: Budget) -> vd.VerdictTable:
    """Per rule: its paper's statement of where it trains (FRONTIER_CLAIMS) against the fraction learned at the
    frontier's depths (the chapter's rate and steps, median over seeds, TRAINED); a depth the frontier lacks is
    not judged, and a claim with none of its depths here is not checkable."""
    sub = sizes(budget)
    rows = []
    for name in runs.rules:
        said, where, ref, paper = FRONTIER_CLAIMS[name]
        wanted = dict.fromkeys(sub.frontier_depths, True) if where is None else where
        expected = {f"N = {n}": t for n, t in wanted.items() if n in sub.frontier_depths}
        measured = {f"N = {n}": runs.fractions(name, n, sub.lr, sub.train_steps) for n in sub.frontier_depths}
        claim, source = (
            f"{name} {said}",
            cite(f"{ref}; measured, N = {', '.join(map(str, sub.frontier_depths))}", paper=paper),
        )
        if not expected:
            rows.append(vd.uncheckable(claim, source, said, "none of its depths is on this budget's frontier"))
            continue
        rows.append(
            vd.check_outcome(
                claim=claim,
                source=source,
                expected=expected,
                measured=measured,
                threshold=TRAINED,
                computed="fraction learned, median: "
                + "; ".join(
                    f"N = {n} {_median_text(v)}" for n, v in zip(sub.frontier_depths, measured.values(), strict=True)
                ),
                reason=f"Adam {sub.lr:g} × s(N), {sub.train_steps} steps, batches {sub.train_batch}, no warmup; "
                f"trained: ≥ {TRAINED} of the way from the plateau to the floor",
            )
        )
    return vd.VerdictTable(rows)


def _median_text(values: list[float]) -> str:
    """The seeds' median fraction learned, as check_outcome judges it (−inf: diverged), and how many diverged."""
    diverged = sum(not math.isfinite(v) for v in values)
    return f"{statistics.median(values):.2f}" + (f" ({diverged} of {len(values)} diverged)" if diverged else "")


def predicted_shift(rule: str, shallow: Depth, deep: Depth, step_decades: Positive) -> float:
    """Grid steps by which the best Adam rate moves from N = shallow to N = deep if it keeps the first step's loss
    change where it is (negative: down): the change grows like N^order (derived), so the best rate like N^−order."""
    order = float(derive.rule_orders()[ex.rule_named(rule).name]["adam"]["order"])
    return -order * math.log10(deep / shallow) / step_decades + 0.0  # + 0.0: no "-0.0" for a rule of order 0


def as_derived(shift: Integer, derived: Real) -> bool:
    """Whether a seed's best rate moved (``shift`` grid steps, deepest minus shallowest) as derived (``derived``
    steps, :func:`predicted_shift`): kept within GRID_STEPS where the derived move is that small, else moved further
    than GRID_STEPS and the same way."""
    if abs(derived) <= GRID_STEPS:
        return abs(shift) <= GRID_STEPS
    return abs(shift) > GRID_STEPS and shift * derived > 0


def transfer_verdicts(runs: ex.RuleRuns, budget: Budget) -> vd.VerdictTable:
    """Per rule: "the best learning rate transfers across depth" (Depth-µP's claim) on the map, per seed: the rate
    that learned most at the deepest map depth within GRID_STEPS grid steps of the shallowest's. A seed whose best
    sits at an end of the grid at either depth, or that trained (TRAINED) at no rate there, is not read. The claim's
    direction per rule is the derivation's: where the first step's order under Adam moves the best rate by more
    than GRID_STEPS, the rule is expected not to transfer (Pre-LN, DeepNorm: the contrast)."""
    sub = sizes(budget)
    shallow, deep = sub.map_depths[0], sub.map_depths[-1]
    step = math.log10(sub.map_rates[1] / sub.map_rates[0])
    rows = []
    for name in runs.rules:
        low = runs.best_rates(name, shallow, sub.map_rates, sub.map_steps, TRAINED)
        high = runs.best_rates(name, deep, sub.map_rates, sub.map_steps, TRAINED)
        shifts = [b - a for a, b in zip(low, high, strict=True) if a is not None and b is not None]
        moved = predicted_shift(name, shallow, deep, step)
        transfers = abs(moved) <= GRID_STEPS
        shown = [as_derived(d, moved) for d in shifts]
        way = "down" if moved < 0 else "up"
        claimed = (
            "the best rate transfers" if transfers else f"the best rate moves {way} by more than {GRID_STEPS} step"
        )
        claim = f"{name}: {claimed} from N = {shallow} to N = {deep}"
        source = cite(
            f"{PUBLISHED['Depth-µP'].source}, the claim; {name}'s order derived here; measured",
            paper="Tensor Programs VI",
        )
        claimed = f"{claimed} (derived: {moved:+.1f} grid steps)"
        grid = (
            f"{len(sub.map_rates)} Adam base rates {sub.map_rates[0]:.2g}–{sub.map_rates[-1]:.2g}, {step:.2g} decades "
            f"apart, × s(N); {sub.map_steps} steps; the rate that learned most"
        )
        if not shifts:
            rows.append(
                vd.uncheckable(
                    claim, source, claimed, f"no seed's best rate read (at an end of the grid, or none trained); {grid}"
                )
            )
            continue
        rows.append(
            vd.check_each_seed(
                claim=claim,
                source=source,
                claimed=claimed,
                shows=shown,
                computed=f"best-rate shift per seed, in grid steps: {shifts}; "
                f"{len(low) - len(shifts)} of {len(low)} seeds not read (best at an end of the grid, or none trained)",
                reason=grid,
            )
        )
    return vd.VerdictTable(rows)


# What a rule says of the residual stream at initialization, as the slope of log E[x_N²]/E[x_0²] in log N: GPT-2's
# scaled init "accounts for the accumulation on the residual path with model depth" (each of 2N output projections
# scaled by 1/√(2N): the 2N branches add O(1) in all), Depth-µP divides every block's contribution by √N (the same);
# Pre-LN, the contrast, adds O(1) per branch, 2N of them (slope 1 once they outweigh x_0).
GROWTH_CLAIMS = {
    "GPT-2": (
        0.0,
        "keeps the residual stream's second moment at initialization from growing with depth",
        "Radford et al. 2019, §2.3: the scaled init 'accounts for the accumulation on the residual path'",
    ),
    "Depth-µP": (
        0.0,
        "keeps the residual stream's second moment at initialization from growing with depth",
        "Yang et al. 2023 (Tensor Programs VI): each block's contribution divided by √N",
    ),
    "Pre-LN": (
        1.0,
        "lets the residual stream's second moment grow like N (the contrast)",
        "Xiong et al. 2020, the Pre-LN block; 2N branches each adding O(1)",
    ),
}
GROWTH_PAPERS = {"GPT-2": "Radford et al.", "Depth-µP": "Tensor Programs VI", "Pre-LN": "Xiong et al."}


def growth_verdicts(steps: ex.FirstSteps) -> vd.VerdictTable:
    """GPT-2's and Depth-µP's statement about the stream at initialization, with Pre-LN beside them: the slope of
    E[x_N²]/E[x_0²] against N over two depth ranges (check_slope, SLOPE_ATOL), the seeds of the first-step probe."""
    rows = []
    for name, (want, said, ref) in GROWTH_CLAIMS.items():
        if name not in steps.growth:
            continue
        rows.append(
            vd.check_slope(
                claim=f"{name} {said}",
                source=cite(f"{ref}; measured, N = {steps.depths[0]}..{steps.depths[-1]}", paper=GROWTH_PAPERS[name]),
                want=want,
                atol=SLOPE_ATOL,
                depths=steps.depths,
                samples_by_depth=steps.growth[name],
                reason=f"E[x_N²]/E[x_0²] of each seed's probe batch at initialization, {len(steps.growth[name][0])} "
                "seeds per depth",
            )
        )
    return vd.VerdictTable(rows)
