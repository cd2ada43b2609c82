"""Every numeral in the book's prose is computed, a definition, or a reference.

    python tools/prose_numbers.py            # lists the numerals no rule accounts for (exit 1 if any)
    python tools/prose_numbers.py --all      # every numeral of the prose, with the rule that accounts for it

A number that comes from a run, a count of seeds, a time or a derivation reaches a markdown cell through
MyST-NB's ``glue`` (``{glue:text}`key``` in the text, :func:`deepnotes.show.prose.glue_values` in a code
cell), so the page cannot say what its cells did not compute. What is left in the prose after removing
equations, code, links, glue roles and references (§ numbers, equation numbers, figures, lemmas, dates,
arXiv ids, source and claim numbers, list numbering) must be a *definition*: a size the chapter fixes, a
constant the sources state (and the page recomputes next to it), or a mathematical fact. Those are listed
below per chapter, each with the reason it is typed; a numeral typed anywhere else fails
``tests/test_prose_numbers.py``, and so does a definition that no longer appears.
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Removed before numerals are looked for: what is not prose, then what a numeral only names.
NOT_PROSE = [
    re.compile(r"\$\$.*?\$\$", re.S),  # display math
    re.compile(r"(?<!\\)\$.+?(?<!\\)\$", re.S),  # inline math
    re.compile(r"```.*?```", re.S),  # code blocks and directives
    re.compile(r"\{glue(?::\w+)?\}`[^`]*`"),  # glued values: computed by a cell
    re.compile(r"\{\w+\}`[^`]*`"),  # other roles ({cite}, {doc}, {ref})
    re.compile(r"`[^`]*`"),  # inline code
    re.compile(r"https?://\S+"),
    re.compile(r"\]\([^)]*\)"),  # link targets
    re.compile(r"<[^>]+>"),  # HTML tags and autolinks
]
REFERENCES = [
    re.compile(r"§\s*\d+(?:\.\d+)*(?:\s*[–-]\s*§?\s*\d+(?:\.\d+)*)?"),  # §9.2, §1–3, §5–§12
    re.compile(r"\beqs?\.\s*\(?\d+\)?"),  # eq. (27), eq. 39
    re.compile(r"\(\d+\)"),  # equation numbers in lists: (15) and (18); Su's cases (1), (2), (3)
    re.compile(  # figures, lemmas, experiments, issues, sources, claims, named solutions and blocks
        r"\b(?:Figs?\.|Figures?|Tables?|Lemmas?|Theorems?|Corollary|Experiments?|issue|[Cc]laims?|[Ss]ources?|"
        r"solution|Block)\s+\d+(?:\([a-z,]+\))?(?:\s*(?:[–-]|,|and)\s*\d+(?:\([a-z,]+\))?)*"
    ),
    re.compile(r"\bGPT-\d\b"),  # a model's name: GPT-2, GPT-3
    re.compile(r"\b\d{4}-\d{2}-\d{2}\b"),  # dates
    re.compile(r"\b(?:19|20)\d\d(?=[),;*])"),  # years of citations: (2022), NeurIPS 2018, Saul, 2009;, **Xiong 2020**
    re.compile(r"\*,\s*(?:19|20)\d\d\b"),  # the year after an italic title: *Going deeper …*, 2021.
    re.compile(r"arXiv:?\s*\d{4}\.\d{4,5}"),
    re.compile(r"^\s*\d+\.\s", re.M),  # numbered lists
    re.compile(r"^#+ .*$", re.M),  # headings name, they do not report
]
NUMERAL = re.compile(r"(?<![\w.])[-−]?\d+(?:,\d{3})*(?:\.\d+)?(?:e[-−]?\d+)?")

# Numerals the prose may type: chapter → numeral → why it is a definition and not a result.
DEFINITIONS: dict[str, dict[str, str]] = {
    "bert_init": {
        "0.02": "BERT's initial std, the chapter's subject",
        "768": "BERT-base's width (and the table width the cpu and gpu budgets use)",
        "3072": "BERT-base's FFN width, 4 × 768",
        "4": "BERT's FFN ratio",
        "1": "a LayerNorm's output has second moment 1 (its definition)",
        "64": "BERT's attention head width",
        "15": "BERT's masking rate, in %",
        "12": "the layers of the annotated §9.1 table's model",
        "1.000": "quoted from the annotated §9.1 table (measured next to it)",
        "0.948": "quoted from the annotated §9.1 table (measured next to it)",
        "0.0361": "the annotated §9.3 table's std, Xavier's 1/√768 (computed in the first table)",
        "0.9994": "quoted from the annotated eqs. (27)–(28) (recomputed in the verdict table)",
        "0.9998": "quoted from the annotated eqs. (27), (29) (recomputed in the verdict table)",
        "3226": "quoted from the annotated eq. (58) (recomputed in the verdict table)",
        "30,522": "BERT's vocabulary",
    },
    "increment_explosion": {
        "1000": "the depth in source 000's title and in its eq. (72)",
        "1,000": "the depth in DeepNet's title",
        "1.045": "quoted from source 000's annotated eq. (72) (recomputed in the verdict table)",
        "2": "the size of the 2 × 2 counterexamples the code builds; Fig. 5's two heads (64-128-2)",
        "1": "the derived slope 1; an eigenvalue below 1",
        "0": "the derived slope 0 for DeepNorm's constants",
        "6": "DeepNet Fig. 5's shallowest model (6L-6L), quoted",
        "100": "DeepNet Fig. 5's deepest model (100L-100L), quoted",
        "64": "DeepNet Fig. 5's model width (64-128-2), quoted",
        "128": "DeepNet Fig. 5's FFN width (64-128-2), quoted",
    },
    "initialization": {
        "1000": "the depth in the title of the article whose annotations are checked",
        "0.02": "a typical std (BERT's), the example of PyTorch's absolute truncation bounds",
        "0": "mean 0 and the sigmoid's limits 0 and 1: definitions of the quantities",
        "1": "second moment 1 (the fixed point asked for), the sigmoid's bound, the article's quoted 1 %",
        "2": "the bound 1/2 on the sigmoid's second moment (a bound, derived in the cell above it)",
        "4": "the size of the vector SymPy differentiates LayerNorm for",
    },
    "magnitude_decomposition": {
        "1000": "the depth in source 000's title",
        "1,000": "the depth in DeepNet's title",
        "1": "1-homogeneous, gain 1, slope 1, order 1, Cauchy–Schwarz's bound 1, block 1: definitions and bounds",
        "2": "the exact factor 2 in 2S(β/α)² = 1 (SymPy, the cell above it)",
        "200": "the depth of the paper's own experiment, quoted",
        "2.1": "quoted from source 000's annotated eq. (72) (recomputed in the previous chapter)",
    },
    "post_vs_pre_norm": {
        "0.02": "BERT's std, in the title of the article the annotations belong to",
        "0": "a gate that starts at 0; seed 0 (the first seed's name)",
        "1": "the weight 1 of Pre-Norm's branches, a gate's end value 1, order 1",
        "3226": "quoted from source 003's annotated eq. (58) (recomputed in the verdict table)",
        "6": "the depths of Xiong et al.'s models (6 to 14 layers), quoted",
        "14": "the depths of Xiong et al.'s models (6 to 14 layers), quoted",
    },
    "thousand_layers": {
        "1000": "the chapter's headline depth (DeepNet's), at the cpu and gpu budgets; T_min = N evaluated there",
        "1,000": "the depth in DeepNet's title",
        "2000": "the sublayers of 1000 blocks (two per block)",
        "3": "the frontier's shallowest stack, in every budget but smoke",
        "0": "the scoring's definition (0 on the plateau); ReZero's gates start at 0",
        "1": "the scoring's definition (1 at the floor); second moment exactly 1; order 1",
        "6": "DeepNet's 6L-6L model, quoted",
        "18": "DeepNet's 18L-18L model (its Fig. 3(c)), quoted",
        "100": "DeepNet's 100L-100L model, quoted",
        "3000": "the cpu budget's deepest stack before issue 43, and the depth of the benchmarks' runs (history)",
    },
    "why_residuals": {
        "1": "width 1 (Su's one-dimensional model), ε = 1, cosine 1, the axis' linear range −1 to 1",
        "−1": "the axis' linear range −1 to 1",
        "0": "step 0, the start of training",
        "2": "the book's summary statistic: the share within a factor 2 of one",
        "12": "the depths of ReZero's notebook (12 and 128 layers) and of its paper's figure (4, 12, 64), quoted",
        "128": "the depth of ReZero's notebook, quoted",
        "0.1": "ReZero's gates in its notebook, quoted",
        "4": "the depths of ReZero's paper figure (4, 12, 64), quoted",
        "64": "the depths of ReZero's paper figure (4, 12, 64), quoted",
    },
    "intro": {
        "0.02": "BERT's std, in a chapter's title",
        "1": "ε = 1/√N, a chapter's subject",
        "1000": "the headline depth, in a chapter's and a source's title",
        "1,000": "the depth in DeepNet's title",
        "3": "the frontier's shallowest stack (a definition of the 1000-layer chapter's sizes)",
        "8": "the major version of ipywidgets Colab needs its widget manager for",
    },
    "ledger": {"1000": "the depth in source 001's title"},
}


@dataclass(frozen=True)
class Numeral:
    chapter: str  # the notebook's stem
    cell: int  # index of the markdown cell
    text: str  # the numeral as typed
    context: str  # the words around it


def prose_of(markdown: str) -> str:
    """The cell's text with everything that is not prose or only names something blanked out."""
    for pattern in NOT_PROSE + REFERENCES:
        markdown = pattern.sub(" ", markdown)
    return markdown


def numerals_in(notebook: Path) -> list[Numeral]:
    """Every numeral in the prose of a notebook's markdown cells."""
    found = []
    for index, cell in enumerate(json.loads(notebook.read_text())["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        text = prose_of("".join(cell["source"]))
        for match in NUMERAL.finditer(text):
            context = " ".join(text[max(0, match.start() - 50) : match.end() + 30].split())
            found.append(Numeral(notebook.stem, index, match.group().rstrip(","), context))
    return found


def untraced(notebook: Path) -> list[Numeral]:
    """The numerals of a notebook that are neither glued, references nor the chapter's definitions."""
    allowed = DEFINITIONS.get(notebook.stem, {})
    return [n for n in numerals_in(notebook) if n.text not in allowed]


def unused_definitions(notebook: Path) -> list[str]:
    """Definitions listed for a chapter that its prose no longer types (the list must not go stale)."""
    typed = {n.text for n in numerals_in(notebook)}
    return sorted(set(DEFINITIONS.get(notebook.stem, {})) - typed)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every notebook in book/")
    parser.add_argument("--all", action="store_true", help="list every numeral, not only the untraced ones")
    args = parser.parse_args(argv)
    notebooks = args.notebooks or sorted((ROOT / "book").glob("*.ipynb"))
    missing = [str(p) for p in notebooks if not p.is_file()]
    if missing:
        parser.error(f"no such notebook: {', '.join(missing)}")
    bad = 0
    for notebook in notebooks:
        allowed = DEFINITIONS.get(notebook.stem, {})
        for n in numerals_in(notebook) if args.all else untraced(notebook):
            why = allowed.get(n.text, "NOT TRACED: glue it or list it as a definition")
            bad += n.text not in allowed
            print(f"{n.chapter} cell {n.cell}: {n.text!r} … {n.context} … [{why}]")
        for text in unused_definitions(notebook):
            bad += 1
            print(f"{notebook.stem}: definition {text!r} is listed but no longer typed")
    print(f"{bad} numeral(s) not traced")
    return 1 if bad else 0


if __name__ == "__main__":
    from deepnotes import cli

    cli.run(main)
