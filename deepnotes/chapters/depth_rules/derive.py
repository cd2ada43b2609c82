"""The chapter's derivations, by SymPy: the first step's loss change of every published rule, as a function of the
depth N, and its order in N under SGD and Adam (:func:`deepnotes.core.derive.first_update`, the magnitude analysis
for any rule of :mod:`deepnotes.core.rules`)."""

from __future__ import annotations

from deepnotes.core.derive import first_update
from deepnotes.core.rules import PUBLISHED

OPTIMIZERS = ("sgd", "adam")


def rule_orders() -> dict[str, dict[str, object]]:
    """rule → optimizer → {"delta_L/eta": ΔL/η in N (P: entries per matrix), "order": its order in N, "bounded":
    whether it meets DeepNet's bounded-update condition (order ≤ 0)}, for every published rule."""
    return {name: {opt: first_update(rule, opt) for opt in OPTIMIZERS} for name, rule in PUBLISHED.items()}


def bounded_rules(optimizer: str) -> list[str]:
    """The published rules whose first update the derivation bounds in depth under ``optimizer``."""
    return [name for name, by_opt in rule_orders().items() if by_opt[optimizer]["bounded"]]


def order_table() -> dict[str, object]:
    """rule → (order in N under SGD, order under Adam) of its first step's loss change, as SymPy derives them."""
    import sympy as sp

    return {name: sp.Tuple(by["sgd"]["order"], by["adam"]["order"]) for name, by in rule_orders().items()}


def first_step_formulas(optimizer: str) -> dict[str, object]:
    """rule → its first step's loss change per unit rate under ``optimizer``, ΔL/η as a function of N (P: the entries
    of one matrix, a width)."""
    return {name: by[optimizer]["delta_L/eta"] for name, by in rule_orders().items()}
