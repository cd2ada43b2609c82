"""An equation that shows as LaTeX in the book and as SymPy text where nbval compares outputs."""

from __future__ import annotations

import sympy as sp


class Shown:
    """An equation ``lhs = rhs`` that shows as LaTeX in the book and as SymPy text in nbval's check."""

    def __init__(self, lhs_latex: str, rhs: sp.Basic, lhs_text: str | None = None):
        self.lhs_latex, self.rhs = lhs_latex, rhs
        self.lhs_text = lhs_text or lhs_latex

    def _repr_latex_(self) -> str:
        return f"$\\displaystyle {self.lhs_latex} = {sp.latex(self.rhs)}$"

    def __repr__(self) -> str:
        return f"{self.lhs_text} = {sp.sstr(self.rhs)}"
