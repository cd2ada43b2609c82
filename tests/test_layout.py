"""The layout rule, read from the sources: book/<stem>.ipynb ↔ deepnotes/chapters/<stem>/, notebooks
that only call their package, and verdicts whose status is never typed by hand."""

from __future__ import annotations

import ast
import json
import re

import pytest
from book_paths import APPENDIX, ROOT, TOC

NOTEBOOKS = sorted((ROOT / "book").glob("*.ipynb"))
CHAPTERS = ROOT / "deepnotes" / "chapters"
PACKAGES = sorted(p for p in CHAPTERS.iterdir() if p.is_dir() and not p.name.startswith("_"))
APPENDIX_PACKAGES = {"ledger": ROOT / "deepnotes" / "ledger"}  # book/ledger.ipynb ↔ deepnotes/ledger/
FRONT_MODULES = {"intro": ROOT / "deepnotes" / "intro.py"}  # book/intro.ipynb (the toc's root) ↔ deepnotes/intro.py
MAX_CELL_LINES = 25
STATUS_NAMES = {"HOLDS", "APPROX", "WRONG"}


def code_cells(path):
    """(index, source) of every code cell, with IPython magics (% and ! lines) commented out."""
    cells = json.loads(path.read_text())["cells"]
    for k, cell in enumerate(cells):
        if cell["cell_type"] == "code":
            src = "".join(cell["source"])
            yield (
                k,
                "\n".join("#" + line if line.lstrip().startswith(("%", "!")) else line for line in src.splitlines()),
            )


def python_sources():
    """(label, source) of every module of deepnotes/ and every notebook cell of book/."""
    for path in sorted((ROOT / "deepnotes").rglob("*.py")):
        yield str(path.relative_to(ROOT)), path.read_text()
    for path in NOTEBOOKS:
        for k, src in code_cells(path):
            yield f"{path.relative_to(ROOT)} cell {k}", src


def test_every_chapter_has_its_package_and_every_package_its_chapter():
    stems = {p.stem for p in NOTEBOOKS}
    assert stems - set(APPENDIX_PACKAGES) - set(FRONT_MODULES) == {p.name for p in PACKAGES}
    assert all(module.is_file() and f"book/{stem}" == TOC["root"] for stem, module in FRONT_MODULES.items())
    assert all(package.is_dir() and f"book/{stem}" in APPENDIX for stem, package in APPENDIX_PACKAGES.items())
    for package in PACKAGES:
        assert (package / "__init__.py").exists(), package


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_cells_only_call_their_package(path):
    """No def, class or lambda in a notebook, and no code cell over 25 non-blank lines."""
    problems = []
    for k, src in code_cells(path):
        lines = sum(1 for line in src.splitlines() if line.strip())
        if lines > MAX_CELL_LINES:
            problems.append(f"cell {k}: {lines} lines")
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                problems.append(f"cell {k}: {type(node).__name__} at line {node.lineno}")
    assert not problems, problems


def typed_statuses(src: str) -> list[str]:
    """Calls whose verdict status is typed, not computed: check_true with a literal or positional
    ``ok``, check_graded with a literal ``holds`` or ``approx``, and Verdict(...) given HOLDS/APPROX/WRONG or a string
    as its status."""
    found = []
    for node in ast.walk(ast.parse(src)):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
        if name == "check_true":
            ok = [k.value for k in node.keywords if k.arg == "ok"]
            if node.args:
                found.append(f"line {node.lineno}: check_true with positional arguments")
            elif ok and isinstance(ok[0], ast.Constant):
                found.append(f"line {node.lineno}: check_true(ok={ok[0].value!r})")
        elif name == "check_graded":
            for k in node.keywords:
                if k.arg in ("holds", "approx") and isinstance(k.value, ast.Constant):
                    found.append(f"line {node.lineno}: check_graded({k.arg}={k.value.value!r})")
        elif name == "Verdict":
            status = (
                node.args[4]
                if len(node.args) > 4
                else next((k.value for k in node.keywords if k.arg == "status"), None)
            )
            if isinstance(status, ast.Constant) or (
                isinstance(status, (ast.Name, ast.Attribute))
                and getattr(status, "id", getattr(status, "attr", "")) in STATUS_NAMES
            ):
                found.append(f"line {node.lineno}: Verdict with a typed status")
    return found


def test_no_verdict_status_is_typed_by_hand():
    problems = [f"{label}, {p}" for label, src in python_sources() for p in typed_statuses(src)]
    assert not problems, problems


def test_the_typed_status_scan_catches_what_it_should():
    bad = (
        "check_true(claim='c', source='s', claimed='a', computed='b', ok=False, reason='r')\n"
        "vd.check_true('c', 's', 'a', 'b', x > 1, 'r')\n"
        "Verdict('c', 's', 'a', 'b', HOLDS, 'r')\n"
        "Verdict('c', 's', 'a', 'b', status='wrong', reason='r')\n"
        "check_graded(claim='c', source='s', claimed='a', computed='b', holds=x > 1, approx=True, reason='r')\n"
    )
    good = (
        "check_true(claim='c', source='s', claimed='a', computed='b', ok=x > 1, reason='r')\n"
        "Verdict('c', 's', 'a', 'b', HOLDS if x else WRONG, 'r')\n"
    )
    assert len(typed_statuses(bad)) == 5
    assert typed_statuses(good) == []


# Issue 44's one door: a status that depends on training runs or sampled probes is decided by the
# seeds-aware checks (check_estimate, check_statistic, check_each_seed, check_outcome, check_slope, check_possible,
# check_mean_at_deepest),
# never by check_true / check_graded on a value read from runs. What counts as "read from runs": an
# attribute of a run (RUN_READS), a parameter holding runs or probes (RUN_PARAMS), or a local computed from
# either, inside the function that builds the verdict.
RUN_READS = {
    "fraction_learned",
    "mean_fraction_learned",
    "final_loss",
    "losses",
    "diverged",
    "diverged_at",
    "steps_to",
    "history",
    "lam_ratio",
    "gains",
    "embed_rms",
    "fractions",
    "highest_trained_rate",
    "median",
}
RUN_PARAMS = {"runs", "hists", "histories", "comp", "tmap", "run", "gain_runs", "rs", "sweeps", "sweep"}
# ... and the probes at initialization: one random stack, one batch, one draw (a sampled statistic too)
PROBE_PARAMS = {
    "updates",
    "probes",
    "probe",
    "profiles",
    "spectra",
    "paper",
    "cosines",
    "samples",
    "tables",
    "own",
    "cut",
    "ratios",
    "falloff",
}
PROBE_READS = {"grad_norms", "update_rms", "cos_x0", "attn_ratio", "softmax_kl", "logit_var", "rho", "stream_var"}
RUN_PARAMS |= PROBE_PARAMS
RUN_READS |= PROBE_READS
STATUS_ARGUMENTS = {"ok", "holds", "approx"}


def _reads_runs(node, tainted: set[str]) -> bool:
    return any(
        (isinstance(n, ast.Attribute) and n.attr in RUN_READS) or (isinstance(n, ast.Name) and n.id in tainted)
        for n in ast.walk(node)
    )


def _run_derived_names(fn) -> set[str]:
    """The parameters of ``fn`` that hold runs, and every local assigned (or looped) from them or from a
    run's attribute, to a fixed point."""
    tainted = {a.arg for a in fn.args.args + fn.args.kwonlyargs if a.arg in RUN_PARAMS}
    changed = True
    while changed:
        changed = False
        for n in ast.walk(fn):
            pairs = {
                ast.Assign: lambda n: (n.targets, n.value),
                ast.AnnAssign: lambda n: ([n.target], n.value),
                ast.AugAssign: lambda n: ([n.target], n.value),
                ast.For: lambda n: ([n.target], n.iter),
                ast.comprehension: lambda n: ([n.target], n.iter),
            }
            if type(n) not in pairs:
                continue
            targets, value = pairs[type(n)](n)
            if value is None or not _reads_runs(value, tainted):
                continue
            for name in (m.id for t in targets for m in ast.walk(t) if isinstance(m, ast.Name)):
                if name not in tainted:
                    tainted.add(name)
                    changed = True
    return tainted


NUMBER_CHECKS = {"check_number", "check_order"}  # a computed value against a claimed one: its 4th argument


def _computed_arguments(call: ast.Call) -> list[ast.expr]:
    """The computed value of a check_number / check_order call: its fourth positional argument or ``computed=``."""
    return call.args[3:4] + [k.value for k in call.keywords if k.arg == "computed"]


def run_derived_checks(src: str) -> list[tuple[str, int]]:
    """(function, line) of every check_true / check_graded whose status argument reads runs, and of every
    check_number / check_order whose computed value does (a run's number against a claimed one, one draw)."""
    found = []
    for fn in (n for n in ast.walk(ast.parse(src)) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
        tainted = _run_derived_names(fn)
        for call in (n for n in ast.walk(fn) if isinstance(n, ast.Call)):
            name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
            if name in ("check_true", "check_graded") and any(
                k.arg in STATUS_ARGUMENTS and _reads_runs(k.value, tainted) for k in call.keywords
            ):
                found.append((fn.name, call.lineno))
            elif name in NUMBER_CHECKS and any(_reads_runs(a, tainted) for a in _computed_arguments(call)):
                found.append((fn.name, call.lineno))
    return found


def test_every_status_read_from_runs_goes_through_the_seeds_door():
    found = {
        (str(path.relative_to(ROOT)), fn): line
        for path in sorted((ROOT / "deepnotes").rglob("*.py"))
        for fn, line in run_derived_checks(path.read_text())
    }
    new = sorted(f"{path}:{line} {fn}" for (path, fn), line in found.items())
    assert not new, (
        "check_true/check_graded/check_number on values read from runs or probes (use check_estimate, "
        "check_statistic, check_each_seed, check_near or check_outcome):\n" + "\n".join(new)
    )


def test_the_door_scan_catches_what_it_should():
    bad = (
        "def a(runs):\n    f = runs[0].history.fraction_learned()\n"
        "    return check_true(claim='c', source='s', claimed='a', computed='b', ok=f > 0.5, reason='r')\n"
        "def b(x):\n    return vd.check_graded(claim='c', source='s', claimed='a', computed='b', "
        "holds=x.diverged, approx=False, reason='r')\n"
        "def c(hists):\n    for h in hists:\n        last = h.losses[-1]\n"
        "    return check_true(claim='c', source='s', claimed='a', computed='b', ok=last < 1, reason='r')\n"
    )
    good = (
        "def a(runs):\n    f = [r.history.fraction_learned() for r in runs]\n"
        "    return check_estimate(claim='c', source='s', claimed='a', samples=f, estimator='mean', "
        "limits=Limits(0, 1), reason='r')\n"
        "def b(d):\n"
        "    return check_true(claim='c', source='s', claimed='a', computed='b', ok=d['x'] > 1, reason='r')\n"
    )
    assert [fn for fn, _ in run_derived_checks(bad)] == ["a", "b", "c"]
    probe = "def d(probes):\n    r = probes[0.02].grad_norms[0]\n    return vd.check_true(ok=r > 1, reason='r')\n"
    assert [fn for fn, _ in run_derived_checks(probe)] == ["d"]  # one random initialization is a sample too
    number = (
        "def e(runs):\n    return check_number('c', 's', 0.01, runs[True].first_step_mean)\n"
        "def f(ratios):\n    return vd.check_number('c', 's', 0.98, computed=statistics.median(ratios['own']))\n"
        "def g(x):\n    return check_number('c', 's', 0.98, x)\n"
    )
    assert [fn for fn, _ in run_derived_checks(number)] == ["e", "f"]  # a run's number against a claimed one
    assert run_derived_checks(good) == []


def budget_name_decisions(src: str) -> list[int]:
    """Lines where code compares a budget's name (``budget.name == "cpu"``, ``sub.name in (...)``): a rule
    that holds for some budgets only, by name, instead of by what the runs are (their length, their seeds)."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(src))
        if isinstance(node, ast.Compare)
        and any(isinstance(n, ast.Attribute) and n.attr == "name" for n in [node.left, *node.comparators])
        and any(
            isinstance(n, ast.Attribute) and "budget" in ast.unparse(n.value) for n in [node.left, *node.comparators]
        )
    ]


def test_no_verdict_rule_is_decided_by_a_budgets_name():
    """Issue 44, rules everywhere or nowhere: the long-training exemption, the seed rule and the two-setting
    rule read the runs (``verdicts.late_training_gate``, ``check_estimate``), never which budget built them."""
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in sorted((ROOT / "deepnotes" / "chapters").rglob("claims.py"))
        + sorted((ROOT / "deepnotes" / "shared").rglob("*.py"))
        for line in budget_name_decisions(path.read_text())
    ]
    assert not found, "a verdict rule decided by the budget's name:\n" + "\n".join(found)
    assert budget_name_decisions("def f(budget):\n    if budget.name in SHORT:\n        return 1\n") == [2]


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
def test_a_chapter_imports_no_other_chapter(package):
    others = {p.name for p in PACKAGES} - {package.name}
    problems = []
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                parts = node.module.split(".")
                if parts[:2] == ["deepnotes", "chapters"] and len(parts) > 2 and parts[2] in others:
                    problems.append(f"{path.name}: from {node.module}")
    assert not problems, problems


CORE = ROOT / "deepnotes" / "core"
MAX_CORE_MODULES = 15  # issue 64 split ensembles.py in three (plans; workers; Dask); issue 65: rules.py, a rule as data
CORE_MAY_NOT_IMPORT = ("deepnotes.show", "deepnotes.ledger", "deepnotes.cost", "deepnotes.chapters", "deepnotes.shared")


def module_name(path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_names(src: str, package: str = "") -> set[str]:
    """Every module a source imports, wherever it does (module level or in a function): ``import a.b``,
    ``from a import b`` (both a and a.b: b may be a module), relative imports resolved against
    ``package``, and ``importlib.import_module(...)`` / ``__import__(...)`` calls, whose argument counts
    up to its first non-literal part (f"deepnotes.chapters.{stem}.cost" imports deepnotes.chapters.)."""
    found = set()
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([node.module] if node.module else []))
            found |= {base} | {f"{base}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Call) and node.args:
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in ("import_module", "__import__"):
                arg = node.args[0]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    found.add(arg.value)
                elif isinstance(arg, ast.JoinedStr):
                    prefix = "".join(
                        v.value
                        for v in arg.values[
                            : next(
                                (k for k, v in enumerate(arg.values) if not isinstance(v, ast.Constant)),
                                len(arg.values),
                            )
                        ]
                    )
                    found.add(prefix or "<dynamic>")
                else:
                    found.add("<dynamic>")
    return found


def package_imports() -> dict[str, set[str]]:
    """deepnotes module → the deepnotes modules it imports (names that are not modules dropped)."""
    paths = sorted((ROOT / "deepnotes").rglob("*.py"))
    modules = {module_name(p): p for p in paths}
    out = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        out[name] = {m for m in imported_names(path.read_text(), package) if m in modules}
    return out


def test_core_imports_neither_show_ledger_cost_shared_nor_any_chapter():
    problems = []
    for path in sorted(CORE.rglob("*.py")):
        for name in imported_names(path.read_text(), "deepnotes.core"):
            if name == "<dynamic>" or name.startswith(CORE_MAY_NOT_IMPORT):
                problems.append(f"{path.name}: {name}")
    assert not problems, problems


def test_show_does_not_import_chapters():
    for path in (ROOT / "deepnotes" / "show").rglob("*.py"):
        names = imported_names(path.read_text(), "deepnotes.show")
        assert not [n for n in names if n.startswith("deepnotes.chapters") or n == "<dynamic>"], path


def test_cost_and_ledger_import_no_chapter():
    """Issue 45: the chapters depend on deepnotes.cost, never the reverse (cost/estimate.py loading each
    chapter's cost.py was a hidden package circle); deepnotes.chapters.catalog is where a plan meets the cost
    model. The ledger reads the one list of chapters only; the cost model not even that (issue 64: it is handed
    what it prices)."""
    imports = package_imports()  # module → the package's modules it imports
    problems = [
        f"{module}: {name}"
        for module, names in imports.items()
        if module.startswith(("deepnotes.cost", "deepnotes.ledger"))
        for name in names
        if name.startswith("deepnotes.chapters")
        and (name != "deepnotes.chapters" or module.startswith("deepnotes.cost"))
    ]
    assert not problems, problems


def test_the_import_scan_sees_importlib_and_relative_imports():
    src = (
        "import importlib\nfrom . import engine\nfrom ..show import plots\n"
        "importlib.import_module(f'deepnotes.chapters.{stem}.cost')\n__import__('deepnotes.ledger.page')\n"
        "def f():\n    from deepnotes.cost import log\n"
    )
    names = imported_names(src, "deepnotes.core")
    assert {
        "deepnotes.core.engine",
        "deepnotes.show.plots",
        "deepnotes.chapters.",
        "deepnotes.ledger.page",
        "deepnotes.cost.log",
    } <= names


def test_core_has_at_most_fifteen_modules_and_no_mirrored_pair():
    """At most MAX_CORE_MODULES modules (``__init__`` aside), and no public class or function defined in two of them
    (a mirrored pair: a tracker, probe or optimizer written once for the reference and once for the engine)."""
    modules = sorted(p for p in CORE.glob("*.py") if p.name != "__init__.py")
    assert len(modules) <= MAX_CORE_MODULES, [p.name for p in modules]
    defined: dict[str, list[str]] = {}
    for path in modules:
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
                defined.setdefault(node.name, []).append(path.name)
    twice = {name: where for name, where in defined.items() if len(where) > 1}
    assert not twice, twice


def test_a_new_chapter_touches_no_core_file():
    """No core module names a chapter: a chapter's sizes, plans and cost exceptions live in its package."""
    stems = [p.name for p in PACKAGES]
    problems = [
        f"{path.name}: {stem}"
        for path in sorted(CORE.rglob("*.py"))
        for stem in stems
        if re.search(rf"(chapters\.{stem}\b|[\"']{stem}[\"']|\.{stem}\b)", path.read_text())
    ]
    assert not problems, problems


def test_no_import_circles():
    """No deepnotes module reaches itself through its imports (function-level imports included)."""
    graph = package_imports()
    graph = {
        m: {n for n in deps if n != m and not m.startswith(n + ".")} for m, deps in graph.items()
    }  # a package's own __init__
    state: dict[str, int] = {}
    circles = []

    def visit(m, path):
        state[m] = 1
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 1:
                circles.append(path[path.index(n) :] + [n] if n in path else [m, n])
            elif n not in state:
                visit(n, path + [n])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert not circles, circles


def test_every_package_folder_is_a_regular_package():
    """pip builds the wheel (Colab's install) from setuptools' find: a folder without __init__.py is
    silently left out of it, and the chapters with it."""
    folders = {p.parent for p in (ROOT / "deepnotes").rglob("*.py")} | {
        p.parent.parent for p in (ROOT / "deepnotes").rglob("*.py")
    }
    folders = {f for f in folders if f.is_relative_to(ROOT / "deepnotes") and "__pycache__" not in f.parts}
    missing = sorted(str(f.relative_to(ROOT)) for f in folders if not (f / "__init__.py").exists())
    assert not missing, missing


RESOLVE_LINES = 30  # issue 64: resolve_budget at the package's entry points only (249 lines at c1850d2)
BUDGET_ENTRIES = {"deepnotes/core/config.py", "deepnotes/chapters/catalog.py"}  # get_budget/resolve_budget; the plans


def test_a_budget_is_resolved_at_the_entry_points_only():
    """Issue 64 (CONTRIBUTING.md rule 9): a page's setup cell resolves its budget once and passes the Budget down.
    ``resolve_budget`` is named on at most RESOLVE_LINES lines of the package, only in the entry-point modules;
    no function of a chapter or of ``shared`` takes a budget's name (``budget: Budget | str``), so none re-resolves
    one: a name given there is refused at the door (test_call_path)."""
    import ast

    lines, outside, by_name = 0, [], []
    for path in sorted((ROOT / "deepnotes").rglob("*.py")):
        rel = str(path.relative_to(ROOT))
        src = path.read_text()
        named = sum("resolve_budget" in line for line in src.splitlines())
        lines += named
        if named and rel not in BUDGET_ENTRIES:
            outside.append(rel)
        if not rel.startswith(("deepnotes/chapters/", "deepnotes/shared/")) or rel in BUDGET_ENTRIES:
            continue
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for arg in node.args.args + node.args.kwonlyargs + node.args.posonlyargs:
                    if arg.arg == "budget" and ast.unparse(arg.annotation or ast.Constant(None)) != "Budget":
                        by_name.append(f"{rel}:{node.lineno} {node.name}")
    assert lines <= RESOLVE_LINES, f"resolve_budget on {lines} lines"
    assert not outside, f"resolve_budget below the entry points: {outside}"
    assert not by_name, f"chapter functions whose budget is not annotated Budget: {by_name}"


def _chapter_functions():
    """(file, function node) of every function in a chapter's package or in ``shared``."""
    import ast

    for path in sorted([*(ROOT / "deepnotes/chapters").rglob("*.py"), *(ROOT / "deepnotes/shared").rglob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield str(path.relative_to(ROOT)), node


def _calls(node, name: str) -> bool:
    """Whether ``node``'s body calls ``name`` (a plain name or an attribute's last part)."""
    import ast

    return any(
        isinstance(c, ast.Call) and ast.unparse(c.func).split(".")[-1] == name for c in ast.walk(node) if c is not node
    )


def test_a_page_s_runs_train_where_its_one_run_context_says():
    """Issue 64: run settings are one object. A page's setup cell builds one ``RunContext`` (budget, device, worker
    processes, progress bars) and hands it to every function that trains; none takes the device, the progress flag
    or the workers beside it, none takes the budget beside it (it is ``context.budget``), none picks the workers
    (``default_workers``) or trains a plan but through the context (``context.train``). A slider's render function is
    the one other door (the widget calls it with the page's Budget and ``progress``): it builds its context there,
    and only such a function does."""
    bad = []
    for rel, node in _chapter_functions():
        if rel in BUDGET_ENTRIES:  # the catalog plans (a plan for so many workers); it trains nothing
            continue
        args = {a.arg: a for a in node.args.args + node.args.kwonlyargs + node.args.posonlyargs}
        where = f"{rel}:{node.lineno} {node.name}"
        if "context" in args and "RunContext" not in ast_text(args["context"].annotation):
            continue  # another meaning of the word (a verdict's context sentence)
        beside = sorted({"budget", "device", "progress", "workers"} & set(args))
        if "context" in args and beside:
            bad.append(f"{where} takes the context and {beside}")
        if "workers" in args or _calls(node, "default_workers") or _calls(node, "train_plan"):
            bad.append(f"{where} picks workers or trains a plan without the context")
        if _calls(node, "here") and "progress" not in args:
            bad.append(f"{where} builds a RunContext below the page (only a slider's render function may)")
    assert not bad, bad


def ast_text(annotation) -> str:
    import ast

    return ast.unparse(annotation) if annotation is not None else ""


RECHECKS = {"positive_int", "positive_float", "seed", "seed_value"}


def test_no_function_checks_its_annotated_parameter_again():
    """Issue 64: one validation system. The door checks every annotated parameter and dataclass field against its
    domain; no function calls a validate check on one of its own annotated parameters (``positive_int("depth",
    depth)`` under ``depth: Depth``) or on its own fields (``getattr(self, name)``, ``self.x``). The checks left
    are for a sequence's items and for computed values."""
    import ast

    found = []

    def own(arg, params) -> bool:
        if isinstance(arg, ast.Name):
            return arg.id in params
        if isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name):
            return arg.value.id == "self"
        return isinstance(arg, ast.Call) and ast.unparse(arg.func) == "getattr" and ast.unparse(arg.args[0]) == "self"

    def walk(node, params, rel):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = child.args
                annotated = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs if x.annotation is not None}
                walk(child, annotated, rel)
                continue
            if isinstance(child, ast.Call) and len(child.args) == 2:
                name = ast.unparse(child.func).rsplit(".", 1)[-1]
                if name in RECHECKS and own(child.args[1], params):
                    found.append(f"{rel}:{child.lineno} {ast.unparse(child)}")
            walk(child, params, rel)

    for path in sorted((ROOT / "deepnotes").rglob("*.py")):
        if path.name != "validate.py":
            walk(ast.parse(path.read_text()), set(), path.relative_to(ROOT))
    assert not found, found


README_LINES = 120  # issue 45: what it is, the two commands, how to read it; contributors' rules are elsewhere


def test_the_readme_is_for_readers_and_the_rules_are_in_contributing():
    readme = (ROOT / "README.md").read_text()
    contributing = (ROOT / "CONTRIBUTING.md").read_text()
    assert len(readme.splitlines()) <= README_LINES, f"README.md: {len(readme.splitlines())} lines"
    assert "## The two commands" in readme and "CONTRIBUTING.md" in readme
    rules = re.findall(r"^(\d+)\. ", contributing.split("## Writing a chapter")[1].split("\n## ")[0], re.M)
    assert rules == [str(k) for k in range(1, len(rules) + 1)], f"CONTRIBUTING.md's rules are numbered {rules}"


def test_results_open_with_where_every_benchmark_stands():
    """Issue 45: benchmarks/RESULTS.md opens with one summary table naming every benchmark script, then the
    dated sections."""
    text = (ROOT / "benchmarks" / "RESULTS.md").read_text()
    first = text.split("\n## ")[1]
    assert first.startswith("Where things stand (summary)")
    scripts = {p.name for p in (ROOT / "benchmarks").glob("bench_*.py")}
    assert {s for s in scripts if f"`{s}" not in first} == set(), "scripts missing from the summary table"


def test_the_chapters_are_listed_once_in_the_books_order():
    """deepnotes.chapters.CHAPTERS is the one list: _toc.yml's chapters in its order, every chapter folder, the
    catalog's keys and the ledger's chapters are it."""
    from book_paths import CHAPTERS as TOC_CHAPTERS

    from deepnotes.chapters import CHAPTERS, catalog
    from deepnotes.ledger import items

    assert list(CHAPTERS) == [entry.split("/")[-1] for entry in TOC_CHAPTERS]
    folders = sorted(p.name for p in (ROOT / "deepnotes" / "chapters").iterdir() if (p / "__init__.py").is_file())
    assert folders == sorted(CHAPTERS)
    assert tuple(catalog.CATALOG) == CHAPTERS
    assert items.CHAPTERS is CHAPTERS


def test_every_chapter_declares_itself_and_its_notebook_agrees():
    """Issue 64: each chapter package's ``chapter.py`` declares one Chapter: its stem is the package's, its title the
    notebook's first heading (test_book holds the built page to its figures and slider frames); its runs (the
    ``work`` the estimate prices) live in the package's ``experiments.py``, in every chapter; the catalog imports
    that one object per chapter and nothing else of a chapter."""
    import ast

    import nbformat

    from deepnotes.chapters import CHAPTERS, catalog
    from deepnotes.chapters.chapter import Chapter

    for stem in CHAPTERS:
        declared = catalog.CATALOG[stem]
        assert isinstance(declared, Chapter) and declared.stem == stem
        runs = f"deepnotes.chapters.{stem}.experiments"  # one name for a chapter's runs module
        assert declared.work.__module__ == runs and (ROOT / "deepnotes/chapters" / stem / "experiments.py").exists()
        cells = nbformat.read(ROOT / "book" / f"{stem}.ipynb", as_version=4).cells
        lines = (line for c in cells if c.cell_type == "markdown" for line in c.source.splitlines())
        assert next(line for line in lines if line.startswith("# ")) == f"# {declared.title}", stem
    tree = ast.parse((ROOT / "deepnotes" / "chapters" / "catalog.py").read_text())
    from_chapters = [
        node.module for node in tree.body if isinstance(node, ast.ImportFrom) and node.module.count(".") == 3
    ]
    assert from_chapters == [f"deepnotes.chapters.{stem}.chapter" for stem in sorted(CHAPTERS)], from_chapters


def test_no_chapter_or_budget_is_reached_by_a_name_in_a_string():
    """Issue 45: no import by string (importlib.import_module, __import__) and no attribute looked up by name
    (__getattr__) in the package: a chapter's sizes are its budget.py's sizes(budget), imported directly."""
    found = [
        f"{path.relative_to(ROOT)}:{k}"
        for path in sorted((ROOT / "deepnotes").rglob("*.py"))
        for k, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"import_module|__import__|__getattr__", line)
    ]
    assert not found, found


def test_no_module_imports_another_modules_private_name():
    """Issue 64: a module uses another's public names only (ensembles imported train's _notify and _train_stack)."""
    import ast

    found = [
        f"{path.relative_to(ROOT)}:{node.lineno} {alias.name} from {node.module}"
        for path in sorted((ROOT / "deepnotes").rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("deepnotes")
        for alias in node.names
        if alias.name.startswith("_") and not alias.name.startswith("__")
    ]
    assert not found, found
