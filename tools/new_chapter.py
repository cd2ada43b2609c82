"""Write a new chapter's skeleton: ``python tools/new_chapter.py STEM "Title"``.

It writes ``deepnotes/chapters/STEM/`` (budget rows, a runs module, claims, figures, a slider, the answer and the
chapter's declaration), ``book/STEM.ipynb`` (the title, the question, the setup cell, the answer cell, the
verdict table and the slider) and ``tests/chapters/test_STEM.py``, and lists the chapter in ``_toc.yml``,
:data:`deepnotes.chapters.CHAPTERS` and the catalog. The skeleton is a real, small experiment (Post-LN beside
Pre-LN at the chapter's depth, Adam, three seeds at ``smoke``) judged on a paper's claim through the seeds' door,
so that every page rule holds from the start: replace the experiment, the claim and the words with the chapter's
own (CONTRIBUTING.md, "Writing a chapter"). The tests the skeleton passes unchanged: its own, the layout rules, and
its notebook run at ``smoke`` (``tests/test_new_chapter.py`` generates one in a copy of the repository)."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STEM = re.compile(r"[a-z][a-z0-9_]*")


def camel(stem: str) -> str:
    return "".join(part.capitalize() for part in stem.split("_"))


def package_files(stem: str, title: str) -> dict[str, str]:
    """The chapter package's modules, by file name."""
    sizes = f"{camel(stem)}Sizes"
    return {
        "__init__.py": f'"""The chapter "{title}" (``book/{stem}.ipynb``)."""\n',
        "budget.py": f'''"""The sizes of the chapter "{stem}" at every budget: one :class:`{sizes}` per row of
:data:`deepnotes.core.config.BUDGETS`, read by :func:`sizes`."""

from __future__ import annotations

from dataclasses import dataclass

from deepnotes.core.config import GPU_MINUTES_PER_CHAPTER, Budget, chapter_sizes
from deepnotes.core.validate import Depth, Positive, Repeats


@dataclass(frozen=True)
class {sizes}:
    """Chapter "{title}"."""

    depth: Depth  # blocks of the stacks the chapter trains
    seeds: Repeats  # seeds per style (a training-outcome verdict rests on at least 3)
    steps: Repeats  # Adam steps per run
    slider_depths: tuple[int, ...]  # the slider's precomputed depths
    lr: Positive = 1e-3  # Adam
    live_depth: tuple[int, int, int] = (1, 4, 64)  # the live panel's depths (min, start, max)


SMOKE = {sizes}(depth=2, seeds=3, steps=3, slider_depths=(2, 4))
CPU = {sizes}(depth=12, seeds=3, steps=60, slider_depths=(2, 6, 12))
FULL = {sizes}(depth=24, seeds=5, steps=300, slider_depths=(2, 6, 12, 24))
GPU = FULL

ROWS = {{"smoke": SMOKE, "cpu": CPU, "gpu": GPU, "full": FULL}}
# the T4 minutes this chapter's gpu row may take by the estimate (tests/core/test_cost.py holds it to them)
GPU_MINUTES = GPU_MINUTES_PER_CHAPTER


def sizes(budget: Budget) -> {sizes}:
    """This chapter's sizes at ``budget`` (resolved once, by the page's setup cell or an entry point): its row
    of :data:`ROWS`, or the sizes the budget carries in its place (``Budget.with_sizes``)."""
    return chapter_sizes(budget, ROWS, {sizes})
''',
        "experiments.py": f'''"""The chapter's runs: Post-LN and Pre-LN stacks of the chapter's depth trained with Adam,
``seeds`` seeds each
(:func:`train_runs`), one run per slider setting (:func:`slider_run`), and what they cost (:func:`work`)."""

from __future__ import annotations

from deepnotes.chapters.{stem}.budget import sizes
from deepnotes.core.config import Budget, ModelConfig, TrainConfig, live_range
from deepnotes.core.data import MarkovLanguage
from deepnotes.core.ensembles import RunContext, RunPlan
from deepnotes.core.train import History
from deepnotes.core.validate import Depth, Seed, choice, given
from deepnotes.cost.model import TrainRuns, planned_ensembles

STYLES = ("post", "pre")  # the norm styles the chapter compares


def style_config(style: str, depth: Depth, budget: Budget) -> ModelConfig:
    """The budget's Transformer at ``depth`` blocks with its LayerNorm placed as ``style`` says."""
    return budget.model_config(depth, norm=choice("norm style", style, STYLES))


def adam_config(budget: Budget, seed: Seed = 0) -> TrainConfig:
    """Adam at the chapter's rate for the chapter's steps, on the budget's batches."""
    sub = sizes(budget)
    return budget.train_config("adam", sub.lr, sub.steps, seed=seed)


def plan(budget: Budget, depth: Depth | None = None, styles: tuple[str, ...] = STYLES) -> RunPlan:
    """Every style of ``styles`` at ``depth`` (default: the chapter's), seeds 0 … seeds − 1 each, style by style."""
    sub = sizes(budget)
    depth = given(depth, sub.depth)
    keys = [(style, seed) for style in styles for seed in range(sub.seeds)]
    return RunPlan(
        [style_config(style, depth, budget) for style, _ in keys],
        [adam_config(budget, seed) for _, seed in keys],
        MarkovLanguage(budget.vocab_size, seed=0),
    )


def train_runs(context: RunContext) -> dict[str, list[History]]:
    """style → its runs (one History per seed) at the chapter's depth, trained where ``context`` says."""
    hists = context.train(plan(context.budget))
    seeds = sizes(context.budget).seeds
    return {{style: hists[k * seeds : (k + 1) * seeds] for k, style in enumerate(STYLES)}}


def slider_run(depth: Depth, style: str, *, budget: Budget, progress: bool = False) -> History:
    """One run of ``style`` at ``depth`` (seed 0): the slider's panel."""
    live_range("depth", depth, sizes(budget).live_depth, budget)
    one = plan(budget, depth, (choice("norm style", style, STYLES),))
    single = RunPlan(one.model_cfgs[:1], one.train_cfgs[:1], one.tasks)
    context = RunContext.here(budget, progress=progress)  # the slider is an entry point: the widget calls it
    return context.train(single)[0]


def work(budget: Budget) -> list[TrainRuns]:
    """What the experiments above compute at ``budget``, as :mod:`deepnotes.cost.model` counts it:

        train_runs   the ensembles of :func:`plan`
        slider_run   per setting of the precomputed grid (slider_depths × STYLES): one run, its own call"""
    sub = sizes(budget)
    frames = [plan(budget, n, (style,)) for n in sub.slider_depths for style in STYLES]
    single = [RunPlan(p.model_cfgs[:1], p.train_cfgs[:1], p.tasks) for p in frames]
    return [*planned_ensembles(plan(budget)), *(w for p in single for w in planned_ensembles(p))]
''',
        "claims.py": f'''"""The chapter's verdicts: each claim judged from the runs through the seeds' door (replace
the skeleton's claim with the sources' own, cited from their inventories: :func:`deepnotes.show.cite.cite`)."""

from __future__ import annotations

from deepnotes.chapters.{stem} import derive
from deepnotes.core.config import Budget
from deepnotes.core.train import History
from deepnotes.cost.model import Derivations
from deepnotes.show import verdicts as vd
from deepnotes.show.cite import cite


def training(runs: dict[str, list[History]], budget: Budget) -> vd.VerdictTable:
    """Xiong et al. (2020): without warmup, Pre-LN trains better than Post-LN. Judged seed by seed: Pre-LN's
    fraction learned at least Post-LN's, in most seeds."""
    post, pre = runs["post"], runs["pre"]
    shown = [f"{{a.fraction_learned():.2f}} / {{b.fraction_learned():.2f}}" for a, b in zip(pre, post, strict=True)]
    return vd.VerdictTable(
        [
            vd.check_estimate(
                claim="Without warmup, Pre-LN trains at least as well as Post-LN",
                source=cite("Xiong et al. 2020", paper="Xiong et al."),
                claimed="Pre-LN's fraction learned ≥ Post-LN's, in most seeds",
                computed="Pre-LN / Post-LN fraction learned per seed: " + ", ".join(shown),
                samples=[b.fraction_learned() >= a.fraction_learned() for a, b in zip(post, pre, strict=True)],
                estimator="fraction",
                limits=vd.MOST,
                reason=f"Adam, no warmup, {{len(post)}} seeds per style at the chapter's depth ({{budget.name}} sizes)",
            )
        ]
    )


def derivations(budget: Budget) -> Derivations:
    """The page's SymPy derivations and the verdict tables that run no experiment, as its cells call them."""
    return Derivations(((derive.pre_ln_stream_moment, ()),))
''',
        "figures.py": f'''"""The chapter's figures: the answer (every style's loss, the median over seeds
and their range) and the
slider's panel."""

from __future__ import annotations

from deepnotes.chapters.{stem} import experiments as ex
from deepnotes.core.config import Budget
from deepnotes.core.train import History
from deepnotes.core.validate import Depth

FIGURES = 1  # the figures the page shows besides its sliders' frames (tests/test_book.py counts them)


def answer(runs: dict[str, list[History]]):
    """Every style's training loss (median over seeds, band over their range)."""
    from deepnotes.show import plots

    fig, (ax,) = plots.new_figure(1)
    plots.loss_curves(ax, runs, title="Adam, no warmup: Post-LN and Pre-LN")
    return fig


def model_code():
    """The code this chapter is about, read from the package when the cell runs (file and line numbers included):
    ``Residual.forward``, where the norm style places its LayerNorm."""
    from deepnotes.core.models import Residual
    from deepnotes.show.source import source_of

    return source_of(Residual.forward, "one residual sublayer in every norm style")


def slider_figure(depth: Depth, style: str, *, budget: Budget, progress: bool = False):
    """The slider's panel: :func:`.experiments.slider_run` at one setting, its loss."""
    from deepnotes.show import plots

    hist = ex.slider_run(depth, style, budget=budget, progress=progress)
    fig, (ax,) = plots.new_figure(1)
    plots.loss_curves(ax, {{style: hist}}, title=f"N = {{depth}}, {{style}}")
    return fig
''',
        "controls.py": f'''"""The chapter's slider: depth × norm style, precomputed for the static page, live in a
kernel."""

from __future__ import annotations

from deepnotes.chapters.{stem} import figures
from deepnotes.chapters.{stem}.budget import sizes
from deepnotes.chapters.{stem}.experiments import STYLES
from deepnotes.core.config import Budget
from deepnotes.show import widgets as ui


def sliders(budget: Budget) -> dict[str, ui.Slider]:
    """"runs": one short Adam run per setting."""
    sub = sizes(budget)

    def live():
        return {{"depth": ui.int_slider("depth", sub.live_depth), "style": ui.dropdown("style", STYLES)}}

    grid = {{"depth": sub.slider_depths, "style": STYLES}}
    return {{"runs": ui.Slider("A short run at one setting", figures.slider_figure, grid, live, {{"budget": budget}})}}
''',
        "answer.py": f'''"""The answer the page opens with, read from the verdict rows it rests on
(:mod:`deepnotes.show.say`)."""

from __future__ import annotations

from deepnotes.chapters.{stem} import claims
from deepnotes.core.config import Budget
from deepnotes.core.train import History
from deepnotes.show.say import Statement, say, sentence


def markdown(runs: dict[str, list[History]], budget: Budget) -> Statement:
    """One sentence: what the runs say of the claim, in the words of its row's status."""
    (row,) = claims.training(runs, budget)
    return Statement(
        [
            sentence(
                "Without warmup, Pre-LN ",
                say(
                    row,
                    holds="learns at least as much as Post-LN in most seeds",
                    wrong="learns less than Post-LN in most seeds",
                    undecided="cannot be ranked against Post-LN from these seeds",
                ),
                ".",
            )
        ],
        lead="The answer, from this page's runs.",
    )
''',
        "derive.py": '''"""The chapter's derivations, by SymPy (replace the skeleton's with the chapter's own)."""

from __future__ import annotations

import sympy as sp


def pre_ln_stream_moment() -> dict:
    """Pre-LN's stream at init: each block adds a branch of unit second moment, independent of the stream, so
    E[x_(l+1)²] = E[x_l²] + 1; solved from E[x_0²] = 1, E[x_l²] = 1 + l (the stream grows with depth, the identity
    path's share 1/(1 + l) falls)."""
    l = sp.symbols("l", integer=True, nonnegative=True)
    m = sp.Function("m")
    moment = sp.rsolve(m(l + 1) - m(l) - 1, m(l), {m(0): 1})
    return {"recursion": sp.Eq(m(l + 1), m(l) + 1), "moment": sp.simplify(moment), "share": sp.simplify(1 / moment)}
''',
        "chapter.py": f'''"""This chapter as the book sees it (:class:`~deepnotes.chapters.chapter.Chapter`)."""

from deepnotes.chapters.{stem} import answer, budget, claims, controls, figures
from deepnotes.chapters.{stem} import experiments as runs
from deepnotes.chapters.chapter import Chapter

TITLE = {title!r}  # the notebook's first heading
CHAPTER = Chapter.from_modules("{stem}", TITLE, budget, runs, claims, figures, controls, answer)
''',
    }


def notebook(stem: str, title: str) -> dict:
    """The chapter's notebook: the title and question, the install cell (the first chapter's, verbatim), the setup
    cell, the answer cell, the verdict table, the slider."""
    import nbformat

    first = nbformat.read(ROOT / "book" / "initialization.ipynb", as_version=4).cells
    install = next(c for c in first if c.cell_type == "code" and "remove-cell" in c.metadata.get("tags", []))
    setup = (
        "from IPython.display import Markdown, display\n\n"
        "import deepnotes as dn\n"
        "from deepnotes.chapters.catalog import chapter_estimate\n"
        "from deepnotes.ledger.record import record_verdicts\n"
        f"from deepnotes.chapters.{stem} import answer, claims, controls, derive, figures\n"
        f"from deepnotes.chapters.{stem} import experiments as ex\n"
        "from deepnotes.show.png import show_figures\n\n"
        "budget = dn.get_budget()\n"
        f'record_verdicts("{stem}", budget)   # this chapter\'s verdicts go to the claims ledger (appendix)\n'
        "context = dn.RunContext.here(budget, progress=True)   # where this page trains: device, worker processes\n"
        "print(context)\n"
        f"print(chapter_estimate(\"{stem}\", budget))   # counted work × this device's measured rates, and a T4's"
    )
    answer_cell = (
        "runs = ex.train_runs(context)   # Post-LN and Pre-LN, Adam, every seed\n"
        "display(answer.markdown(runs, budget))\n"
        "figures.answer(runs)\n"
        "show_figures()"
    )
    cells = [
        nbformat.v4.new_markdown_cell(
            f"# {title}\n\n**The question.** What does this chapter ask? Say it in at most three lines, then let the "
            "answer below come from the page's own runs."
        ),
        install,
        nbformat.v4.new_code_cell(setup, metadata={"tags": ["hide-cell"]}),
        nbformat.v4.new_code_cell(answer_cell, metadata={"tags": ["answer", "remove-input"]}),
        nbformat.v4.new_markdown_cell(
            "**What the chapter does.** Post-LN and Pre-LN stacks of the chapter's depth, trained with Adam and no "
            "warmup from several seeds; the verdict below reads every seed."
        ),
        nbformat.v4.new_code_cell("claims.training(runs, budget)"),
        nbformat.v4.new_markdown_cell(
            "**The code this chapter is about.** Where a residual sublayer puts its LayerNorm, from the package:"
        ),
        nbformat.v4.new_code_cell("figures.model_code()"),
        nbformat.v4.new_markdown_cell(
            "## The derivation\n\nEach Pre-LN block adds a branch of unit second moment to a stream it is independent "
            "of, $\\mathbb{E}[x_{l+1}^2] = \\mathbb{E}[x_l^2] + 1$; SymPy solves the recursion:"
        ),
        nbformat.v4.new_code_cell("derive.pre_ln_stream_moment()", metadata={"tags": ["nbval-check-output"]}),
        nbformat.v4.new_markdown_cell("**Try it.** One short run at a depth and a norm style of your choice."),
        nbformat.v4.new_code_cell('controls.sliders(budget)["runs"].build()'),
    ]
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata = nbformat.read(ROOT / "book" / "initialization.ipynb", as_version=4).metadata
    return nb


def chapter_test(stem: str) -> str:
    return f'''"""The chapter "{stem}" at smoke: its runs, its verdict and its answer, and the slider's panel."""

from __future__ import annotations

import matplotlib

import deepnotes as dn
import sympy as sp

from deepnotes.chapters.{stem} import answer, claims, controls, derive, experiments, figures
from deepnotes.show.verdict_words import HOLDS, UNCHECKABLE, WRONG

matplotlib.use("Agg")
SMOKE = dn.get_budget("smoke")


def test_the_runs_the_verdict_and_the_answer_agree():
    runs = experiments.train_runs(dn.RunContext.here(SMOKE))
    assert set(runs) == set(experiments.STYLES) and all(len(h) == 3 for h in runs.values())
    (row,) = claims.training(runs, SMOKE)
    assert row.status in (HOLDS, WRONG, UNCHECKABLE) and "bootstrap interval" in row.computed
    assert answer.markdown(runs, SMOKE).text
    matplotlib.pyplot.close(figures.answer(runs))


def test_the_derivation_solves_the_recursion():
    moment = derive.pre_ln_stream_moment()["moment"]
    assert sp.simplify(moment - (1 + sp.Symbol("l", integer=True, nonnegative=True))) == 0


def test_the_slider_panel_trains_one_run_and_refuses_a_depth_outside_its_range():
    slider = controls.sliders(SMOKE)["runs"]
    assert set(slider.grid) == {{"depth", "style"}}
    hist = experiments.slider_run(2, "pre", budget=SMOKE)
    assert len(hist.losses) == 3
    try:
        experiments.slider_run(10**5, "pre", budget=SMOKE)
    except ValueError as refused:
        assert "depth" in str(refused)
    else:
        raise AssertionError("a depth past the live range was accepted")
'''


def register(stem: str) -> None:
    """List the chapter in ``_toc.yml`` (before the appendix), ``deepnotes.chapters.CHAPTERS`` and the catalog."""
    toc = ROOT / "_toc.yml"
    text = toc.read_text()
    last = re.findall(r"^      - file: book/\w+$", text.split("  - caption: Appendix")[0], re.M)[-1]
    toc.write_text(text.replace(last, f"{last}\n      - file: book/{stem}", 1))
    listed = ROOT / "deepnotes" / "chapters" / "__init__.py"
    listed.write_text(_appended(listed.read_text(), "CHAPTERS = (", f'"{stem}"'))
    catalog = ROOT / "deepnotes" / "chapters" / "catalog.py"
    text = catalog.read_text()
    last = re.findall(r"^from deepnotes\.chapters\.\w+\.chapter import CHAPTER as \w+$", text, re.M)[-1]
    text = text.replace(last, f"{last}\nfrom deepnotes.chapters.{stem}.chapter import CHAPTER as {stem.upper()}", 1)
    catalog.write_text(_appended(text, "_DECLARED = (", stem.upper()))


def _appended(text: str, opening: str, item: str) -> str:
    """``text`` with ``item`` added as the last line of the tuple that ``opening`` starts (one item per line)."""
    start = text.index(opening)
    end = text.index("\n)", start)
    return f"{text[:end]}\n    {item},{text[end:]}"


def tidy(paths: list[Path]) -> None:
    """ruff's import order and format on the files written (the catalog's new import among the others)."""
    import subprocess

    files = [str(p) for p in paths if p.suffix == ".py"]
    for command in (["check", "--select", "I", "--fix", "--quiet"], ["format", "--quiet"]):
        subprocess.run([sys.executable, "-m", "ruff", *command, *files], cwd=ROOT, check=True)


def write(stem: str, title: str) -> list[Path]:
    """Every file of the skeleton, written; the chapter registered. Refuses a stem that is taken or malformed."""
    import nbformat

    if not STEM.fullmatch(stem):
        raise ValueError(
            f"STEM must be lower-case letters, digits and underscores, starting with a letter; got {stem!r}"
        )
    package = ROOT / "deepnotes" / "chapters" / stem
    if package.exists() or (ROOT / "book" / f"{stem}.ipynb").exists():
        raise ValueError(f"a chapter {stem!r} exists already ({package.relative_to(ROOT)})")
    if not title.strip() or "\n" in title:
        raise ValueError(f"the title must be one non-empty line; got {title!r}")
    package.mkdir(parents=True)
    written = []
    for name, text in package_files(stem, title).items():
        (package / name).write_text(text)
        written.append(package / name)
    nbformat.write(notebook(stem, title), ROOT / "book" / f"{stem}.ipynb")
    test = ROOT / "tests" / "chapters" / f"test_{stem}.py"
    test.write_text(chapter_test(stem))
    register(stem)
    written += [ROOT / "book" / f"{stem}.ipynb", test]
    tidy([*written, ROOT / "deepnotes" / "chapters" / "catalog.py"])
    keep_plans()
    store_outputs([ROOT / "book" / f"{stem}.ipynb", ROOT / "book" / "intro.ipynb"])
    return [*written, ROOT / "tests" / "data" / "plans_kept.json", ROOT / "book" / "intro.ipynb"]


def _run(script: Path, *args: str) -> None:
    """``python script args`` in the repository, this checkout's package first on the path."""
    import os
    import subprocess

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, str(script), *args], cwd=ROOT, env=env, check=True)


def store_outputs(notebooks: list[Path]) -> None:
    """The checked cells' outputs, stored at smoke (the new page's derivation; the intro's budget table, which
    counts the new chapter's runs): ``tools/store_checked_outputs.py``."""
    _run(ROOT / "tools" / "store_checked_outputs.py", *map(str, notebooks))


def keep_plans() -> None:
    """The chapter's plans at smoke and cpu, for 1 and 2 workers, added to ``tests/data/plans_kept.json`` (the file
    rewritten by ``tests/core/test_plans_kept.py``; every other chapter's rows come out as they were)."""
    _run(ROOT / "tests" / "core" / "test_plans_kept.py")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("stem", help="the chapter's file and package name: lower case, digits, underscores")
    parser.add_argument("title", help="the page's title, its first heading")
    args = parser.parse_args(argv)
    for path in write(args.stem, args.title):
        print(path.relative_to(ROOT))
    print(json.dumps({"next": "fill in the question, the experiment, the claims and the words (CONTRIBUTING.md)"}))
    return 0


if __name__ == "__main__":
    from deepnotes import cli

    cli.run(main)
