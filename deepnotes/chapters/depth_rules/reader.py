"""The reader's own rule (issue 65): a rule typed as formulas in N (:func:`typed_rule`), checked field by field at
the depths typed (:func:`trial_depths`), priced before it runs (:func:`trial_estimate`), then derived and trained
beside DeepNorm (:func:`try_rule`): the order in N of its first update under SGD and Adam, its first step's loss
change and its stream's growth against N, and the frontier's runs at those depths."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from deepnotes.chapters.depth_rules import experiments as ex
from deepnotes.chapters.depth_rules.budget import sizes
from deepnotes.core.config import Budget, TrainConfig, check_allocation, live_range, stack_bytes
from deepnotes.core.ensembles import RunContext
from deepnotes.core.rules import MATRIX_ROLES, PUBLISHED, Learnable, Rule
from deepnotes.core.validate import Positive, Repeats
from deepnotes.cost.model import planned_ensembles

CONTRAST = "DeepNorm"  # the published rule a reader's rule trains beside
NAME = "your rule"


def typed_rule(
    placement: str = "pre",
    alpha: object = "1",
    branch: object = "1",
    beta: object = "1",
    beta_on: tuple[str, ...] = MATRIX_ROLES,
    lr_scale: object = "1",
    learnable: bool = False,
) -> Rule:
    """The reader's rule from the form's fields: formulas in N (strings SymPy reads, numbers); ``learnable``: the
    branch multiplier trains from ``branch``'s value. A ValueError names the field: an unknown placement or matrix
    role, a formula SymPy cannot read or that depends on something other than N."""
    start = Learnable(branch) if learnable else branch
    return Rule(NAME, placement, alpha, start, beta, tuple(beta_on), lr_scale, source="typed by the reader")


def trial_depths(rule: Rule, depths: tuple[int, ...], budget: Budget) -> tuple[int, ...]:
    """``depths`` sorted, if they are at least two different depths, each in the live panel's range, the deepest
    stack fits in memory, and ``rule``'s every formula is finite and positive at each (:meth:`Rule.check`); else a
    ValueError naming the field."""
    depths = tuple(sorted(set(depths)))
    if len(depths) < 2:
        raise ValueError(f"depths must hold at least two different depths (a slope needs two), got {depths}")
    sub = sizes(budget)
    for n in depths:
        live_range("depths", n, sub.live_depth, budget)
    deepest = ex.rule_config(PUBLISHED[CONTRAST], depths[-1], budget)
    batch, seq = sub.train_batch
    train = TrainConfig(steps=sub.train_steps, batch_size=batch, seq_len=seq)
    check_allocation(stack_bytes(deepest, 2 * sub.seeds, train), {"depths": depths[-1]}, bytes_each=1)
    rule.check(depths)
    return depths


def _trial(rule: Rule, depths: tuple[int, ...], budget: Budget) -> tuple[dict[str, Rule], list[ex.RuleRun]]:
    """The rules a trial compares (the reader's and CONTRAST) and its runs: each at every depth, the frontier's
    rate, steps and seeds."""
    sub = sizes(budget)
    rules = {rule.name: rule, CONTRAST: PUBLISHED[CONTRAST]}
    runs = [ex.RuleRun(r, n, sub.lr, sub.train_steps, s) for r in rules for n in depths for s in range(sub.seeds)]
    return rules, runs


def trial_work(rule: Rule, depths: tuple[int, ...], budget: Budget) -> list:
    """What :func:`try_rule` computes, as :mod:`deepnotes.cost.model` counts it."""
    rules, runs = _trial(rule, depths, budget)
    plans = ex.training_plans(budget, runs, rules)
    return [*ex.first_steps_work(budget, rules, depths), *(w for _, p in plans for w in planned_ensembles(p))]


def trial_estimate(rule: Rule, depths: tuple[int, ...], budget: Budget):
    """:func:`trial_work` timed with this device's calibrated rates (printed before the trial runs)."""
    from deepnotes.cost.estimate import calibrate, estimate

    return estimate(f"depth_rules: {rule.name}", trial_work(rule, depths, budget), budget.name, [calibrate()])


@dataclass
class Trial:
    """A reader's rule tried: its derived orders, its first steps and runs beside CONTRAST's."""

    rule: Rule
    orders: Mapping[str, Mapping[str, object]]  # optimizer → first_update's result
    steps: ex.FirstSteps
    runs: ex.RuleRuns
    depths: tuple[int, ...]
    lr: Positive  # the runs' Adam base rate (times the rule's s(N))
    train_steps: Repeats  # their steps


def try_rule(rule: Rule, depths: tuple[int, ...], context: RunContext) -> Trial:
    """Derive ``rule``'s first update (:func:`deepnotes.core.derive.first_update`) and measure it beside DeepNorm
    at ``depths`` (:func:`trial_depths` checks them first): the first steps and the stream's growth, and the
    frontier's runs."""
    from deepnotes.core.derive import first_update

    depths = trial_depths(rule, depths, context.budget)
    orders = {opt: first_update(rule, opt) for opt in ex.OPTIMIZERS}
    rules, runs = _trial(rule, depths, context.budget)
    steps = ex.first_steps(context, rules, depths)
    sub = sizes(context.budget)
    return Trial(rule, orders, steps, ex.train_runs(context, runs, rules), depths, sub.lr, sub.train_steps)


def typed_depths(text: str) -> tuple[int, ...]:
    """The form's depths field, "6, 18, 100", as integers; a ValueError naming the field for anything else."""
    parts = [p for p in text.replace(",", " ").split() if p]
    if not parts or not all(p.isdecimal() and p.isascii() for p in parts):
        raise ValueError(f"depths must be whole numbers separated by commas, such as '6, 18, 100'; got {text!r}")
    return tuple(int(p) for p in parts)


def trial_markdown(trial: Trial) -> str:
    """What SymPy derived for the reader's rule: its first update's order in N under each optimizer, and whether it
    meets DeepNet's bounded-update condition (order ≤ 0)."""
    said = [
        f"under {opt.upper() if opt == 'sgd' else opt.capitalize()} the first step's loss change grows like "
        f"$N^{{{trial.orders[opt]['order']}}}$ ({'bounded' if trial.orders[opt]['bounded'] else 'not bounded'} "
        "in depth)"
        for opt in ex.OPTIMIZERS
    ]
    return f"**{trial.rule.name}**, derived by SymPy: " + "; ".join(said) + "."
