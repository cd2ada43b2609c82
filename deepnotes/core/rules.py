"""A residual rule as data (issue 65): where a block's LayerNorm sits, the skip path's weight α(N), the branch's
multiplier (a function of the depth N, or a learnable scalar and its initial value), the init gain β(N) of the
matrices the rule names, and a learning-rate scale in N. Post-LN, Pre-LN, DeepNorm and ReZero are rules, and so
are the depth rules in use today (GPT-2's scaled init, Depth-µP, SkipInit): :data:`PUBLISHED`.

A sublayer at initialization is ``x ← LN?(α·x + b·F(LN?(x)))`` with F = W_out·σ(W_in·h): ``in`` names a branch's
first matrices (the value projection, the FFN's first layer), ``out`` its output projections (attention's output,
the FFN's second layer); β multiplies those ``beta_on`` names. Formulas are SymPy expressions in ``N`` or strings
SymPy parses ("(2*N)**(1/4)"); a formula is checked when the rule is made (a function of N alone) and at the depths
a page uses (:meth:`Rule.check`: finite and positive). :func:`deepnotes.core.derive.first_update` derives the
order in N of a rule's first update. SymPy is imported when this module is (its published rules are made then);
importing ``deepnotes`` imports neither.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import torch

from deepnotes.core.config import ModelConfig
from deepnotes.core.engine import Stack, member_index
from deepnotes.core.validate import Depth, NonNegativeCount, choice

PLACEMENTS = ("post", "pre", "none")  # LayerNorm on the sum (Post-LN), on the branch's input (Pre-LN), none
MATRIX_ROLES = ("in", "out")  # a branch's first matrices (v, fc1) and its output projections (out, fc2)
RULE_OPTIMIZERS = ("sgd", "adam")  # the optimizers a rule's learning-rate scale may name


@dataclass(frozen=True)
class Learnable:
    """A branch multiplier that trains: a scalar per sublayer starting at ``init`` (ReZero, SkipInit: 0)."""

    init: object = 0  # a formula in N, as the rule's other fields


def depth_symbol():
    """The depth N as SymPy writes it (the same symbol as :data:`deepnotes.core.derive.N`: a positive integer)."""
    import sympy as sp

    return sp.Symbol("N", positive=True, integer=True)


def _formula(name: str, text: object):
    """``text`` as a SymPy expression in N, or a ValueError naming the field: not a formula, or a function of
    something other than N."""
    import sympy as sp

    N = depth_symbol()
    if isinstance(text, bool) or not isinstance(text, str | int | float | sp.Expr):
        raise ValueError(
            f"{name} must be a formula in N (a string such as '(2*N)**(1/4)', a number or a SymPy "
            f"expression), got {type(text).__name__} {text!r}"
        )
    try:
        expr = sp.sympify(text, locals={"N": N}) if isinstance(text, str) else sp.sympify(text)
    except (sp.SympifyError, SyntaxError, TypeError, AttributeError, ValueError):
        raise ValueError(
            f"{name}={text!r} is not a formula SymPy can read; write it as Python does, e.g. '(2*N)**(1/4)'"
        ) from None
    expr = expr.subs({s: N for s in expr.free_symbols if s.name == "N"})  # a user's own N (no assumptions) is ours
    others = sorted(str(s) for s in expr.free_symbols if s != N)
    if others:
        raise ValueError(
            f"{name}={text!r} must be a function of the depth N alone; it also depends on {', '.join(others)}"
        )
    return expr


def _value(expr, depth: int) -> float:
    """``expr`` at N = ``depth`` as a float: ±inf for an infinity, nan for what is not a real number (1/0, √−1)."""
    import sympy as sp

    value = sp.N(expr.subs(depth_symbol(), depth))
    if value in (sp.oo, -sp.oo):
        return float(value)
    return float(value) if value.is_extended_real and value.is_finite else math.nan


@dataclass(frozen=True)
class Rule:
    """One residual rule (see the module's docstring). ``lr_scale`` is one formula, or one per optimizer
    (Depth-µP scales SGD's rate and Adam's differently)."""

    name: str
    placement: str  # one of PLACEMENTS
    alpha: object = 1  # the skip path's weight α(N)
    branch: object = 1  # a fixed multiplier b(N) on the branch, or Learnable(init)
    beta: object = 1  # the init gain β(N) of the matrices of beta_on
    beta_on: tuple[str, ...] = MATRIX_ROLES
    lr_scale: object = 1  # the learning rate's multiplier s(N), or {optimizer: s(N)}
    source: str = ""  # the paper that states the rule
    formulas: dict = field(init=False, repr=False, compare=False)  # field → its SymPy expression

    def __post_init__(self):
        choice("placement", self.placement, PLACEMENTS)
        if isinstance(self.beta_on, str) or not isinstance(self.beta_on, Sequence):
            raise ValueError(f"beta_on must be a tuple of matrix roles from {MATRIX_ROLES}, got {self.beta_on!r}")
        for role in self.beta_on:
            choice("matrix role in beta_on", role, MATRIX_ROLES)
        object.__setattr__(self, "beta_on", tuple(self.beta_on))
        scales = self.lr_scale if isinstance(self.lr_scale, Mapping) else dict.fromkeys(RULE_OPTIMIZERS, self.lr_scale)
        for opt in scales:
            choice("optimizer of lr_scale", opt, RULE_OPTIMIZERS)
        scales = {opt: scales.get(opt, 1) for opt in RULE_OPTIMIZERS}  # an optimizer it does not name: unscaled
        learnable = isinstance(self.branch, Learnable)
        formulas = {
            "alpha": _formula("alpha", self.alpha),
            "branch": _formula("branch", self.branch.init if learnable else self.branch),
            "beta": _formula("beta", self.beta),
            **{f"lr_scale[{opt}]": _formula(f"lr_scale[{opt}]", s) for opt, s in scales.items()},
        }
        object.__setattr__(self, "formulas", formulas)

    @property
    def learnable(self) -> bool:
        """Whether the branch multiplier trains (its formula is then its initial value)."""
        return isinstance(self.branch, Learnable)

    def lr_formula(self, optimizer: str):
        """s(N) for ``optimizer`` (1 where the rule scales no rate for it)."""
        choice("optimizer", optimizer, RULE_OPTIMIZERS)
        return self.formulas.get(f"lr_scale[{optimizer}]", 1)

    def at(self, depth: Depth) -> dict[str, float]:
        """Every formula's value at ``depth`` blocks."""
        return {name: _value(expr, depth) for name, expr in self.formulas.items()}

    def check(self, depths: Sequence[int]) -> Rule:
        """The rule itself, if every formula is finite and positive at each of ``depths`` (the learnable branch's
        initial value may be 0); else a ValueError naming the field, the depth and the value."""
        for depth in depths:
            for name, value in self.at(depth).items():
                zero_ok = name == "branch" and self.learnable
                if not math.isfinite(value) or value < 0 or (value == 0 and not zero_ok):
                    wanted = "finite and not negative" if zero_ok else "finite and positive"
                    shown = "not a real number" if math.isnan(value) else repr(value)
                    raise ValueError(
                        f"rule {self.name!r}: {name} must be {wanted} at every depth; at N = {depth} it is {shown}"
                    )
        return self


def engine_config(rule: Rule, base: ModelConfig, depth: Depth) -> ModelConfig:
    """``rule`` at ``depth`` blocks as the engine builds it, the rest of ``base`` kept (widths, vocabulary, block):
    Post-LN (``deepnorm`` where α ≠ 1), Pre-LN or a plain residual; α; a gate where the branch has a multiplier
    (its value at ``depth``, or a learnable one's start); β as the Xavier gain of v, out, fc1 and fc2 where the rule
    scales both roles (1 otherwise: :func:`scale_named` scales one role after the draw). Whether a gate trains is
    the run's choice (frozen unless ``rule.learnable``). A ValueError where the engine has no such block: α ≠ 1
    without Post-LN's LayerNorm."""
    v = rule.check([depth]).at(depth)
    if rule.placement != "post" and v["alpha"] != 1.0:
        raise ValueError(
            f"rule {rule.name!r}: the engine's {rule.placement} blocks keep the skip weight at 1; alpha is "
            f"{v['alpha']:g} at N = {depth} (α ≠ 1 needs placement='post', DeepNorm's LN(α·x + F(x)))"
        )
    norm = {"post": "post" if v["alpha"] == 1.0 else "deepnorm", "pre": "pre", "none": "none"}[rule.placement]
    both = set(rule.beta_on) == set(MATRIX_ROLES)
    return replace(
        base,
        n_layers=depth,
        norm=norm,
        alpha=v["alpha"] if norm == "deepnorm" else None,
        beta=v["beta"] if both else 1.0,
        init_std=None,
        gate=v["branch"] if rule.learnable or v["branch"] != 1.0 else None,
    )


ROLE_SLICES = {"in": (("qkv_w", 2), ("fc1_w", None)), "out": (("out_w", None), ("fc2_w", None))}  # (slot, third)


@torch.no_grad()
def scale_named(rule: Rule, stack: Stack, k: NonNegativeCount) -> None:
    """Member k of ``stack`` (built from :func:`engine_config`) gets the rule's β on its one named role after the
    draw: the value columns of qkv and fc1 for ``in``, out and fc2 for ``out`` (a Xavier draw times β is the draw
    with gain β). Nothing to do where the rule scales both roles or neither (engine_config's gain did it)."""
    member_index(stack, k)
    if set(rule.beta_on) in (set(MATRIX_ROLES), set()):
        return
    beta = rule.at(stack.n_layers)["beta"]
    for role in rule.beta_on:
        for slot, third in ROLE_SLICES[role]:
            if slot not in stack.slots:
                continue  # an MLP block has no attention
            w = stack.member(slot, k)  # [N, r, c]
            if third is None:
                w.mul_(beta)
            else:
                d = w.shape[-1] // 3
                w[..., third * d : (third + 1) * d].mul_(beta)  # the value columns of q | k | v


PUBLISHED = {
    r.name: r
    for r in (
        Rule("Post-LN", "post", source="Vaswani et al. 2017"),
        Rule("Pre-LN", "pre", source="Xiong et al. 2020"),
        Rule("DeepNorm", "post", alpha="(2*N)**(1/4)", beta="(8*N)**(-1/4)", source="Wang et al. 2022 (DeepNet)"),
        Rule("ReZero", "none", branch=Learnable(0), source="Bachlechner et al. 2021"),
        Rule("SkipInit", "pre", branch=Learnable(0), source="De & Smith 2020 (SkipInit)"),
        Rule("GPT-2", "pre", beta="1/sqrt(2*N)", beta_on=("out",), source="Radford et al. 2019"),
        Rule(
            "Depth-µP",
            "pre",
            branch="1/sqrt(N)",
            # the abstract (ICLR 2024): "dividing the contribution of each residual block and the parameter update by
            # the square root of the depth"; SGD's update shrinks with the branch's 1/√N by itself, Adam's does not, so
            # Adam's rate carries it (as CompleteP's reference code does at α = 1/2); the paper's table not read here
            lr_scale={"sgd": 1, "adam": "1/sqrt(N)"},
            source="Yang, Yu, Zhu & Hayou 2023 (Tensor Programs VI)",
        ),
    )
}
"""The rules the chapter derives and trains, by name (each its paper's statement, as the engine can build it)."""
