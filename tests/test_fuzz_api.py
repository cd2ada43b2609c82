"""Every public function and class of deepnotes, each of its typed parameters given a value of the wrong kind
(a string or an object where a number goes, a float where an int goes, a number where a name goes, NaN and
±inf where a float goes, an unknown budget name), the other parameters their defaults or a sensible value.
The contract is :func:`test_fuzz.outcome`'s: a ``ValueError``/``TypeError`` from deepnotes whose message
names the parameter ("clear"); a result is "silent", any other exception "unclear", no answer a "hang".

The list is read from the package (``inspect``), so a new public function is swept without being listed.
A required parameter gets a sensible value by its type or name here, or from ``fuzz_builders`` (a chapter's
runs at the smoke budget, a record, the engine's pieces, a render callable); a callable none of these can fill
fails ``test_every_callable_with_a_typed_parameter_gets_its_arguments``. One that writes files or changes the
process is counted as not reached, with the reason.

    python tests/test_fuzz_api.py [hang_seconds] [--domain]  # tried / clear / valid / silent / unclear / hangs

Value-domain cases (issue 47): each ``int`` or ``float`` parameter is also given 0, a negative, a huge value and
10**400; a parameter that declares its domain (``core.validate``'s Count, Positive, Real, ...) must refuse one
outside it by name and may return a result for one inside; an undeclared one that returns a result is silent.
"""

from __future__ import annotations

import importlib
import inspect
import math
import pkgutil
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from fuzz_builders import BY_ANNOTATION, BY_NAME, BY_TARGET, Fresh  # noqa: E402
from test_fuzz import Silent, _finite, outcome  # noqa: E402

# callables whose required arguments must agree with each other in a way no single sensible value per parameter
# can (the sweep's Stack is a 2-layer Transformer): not swept, each with why
NEEDS_MATCHING_ARGUMENTS = {
    "deepnotes.chapters.why_residuals.experiments.start_mlp": "its stack must be an MLP stack of its depth, width, V",
    "deepnotes.core.blocks.compiled_backward": "its saved tensors must be a compiled forward's of its parameters",
}

NO_ARGUMENTS = "a required parameter with no sensible value here"

# writes a cache file (the kernels compiled by a compiler it is given, minutes; a table of kept results): not swept
WRITES_CACHE = ("deepnotes.core.kernels.build", "deepnotes.cost.kept.keep")

# writes a file, a process setting or an environment variable, or starts a build: not swept
SIDE_EFFECTS = ("record", "store", "write", "save", "log_", "install", "register", "set_", "flush", "calibrate")


class _Thing:
    """An object no parameter accepts."""

    def __repr__(self) -> str:
        return "<object>"


THING = _Thing()

# annotation (as written) -> values of the wrong kind for it
WRONG: dict[str, tuple] = {
    "int": ("3", 2.5, THING),
    "float": ("0.5", THING, math.nan, math.inf),
    "str": (3, THING),
    "bool": ("no", 2),
    "Budget": (3, "nope"),
    "ModelConfig": (3, "post"),
    "TrainConfig": (3,),
    "torch.Tensor": ([1, 2], "x"),
}
# Records of what a run measured: a NaN or ±inf in a measured field is a measurement (a diverged step's loss, a
# blown-up norm), which the figures mark and the verdicts read; a value of the wrong type is still refused, and
# so is NaN in a field that holds a setting (a record's learning rate, std or ε). None: every field measured.
MEASURED: dict[str, set[str] | None] = {
    "deepnotes.core.train.History": None,
    "deepnotes.core.measure.StepProbe": None,
    "deepnotes.core.measure.StreamProfile": {"loss"},
    "deepnotes.chapters.initialization.experiments.TorchTruncDefaults": None,  # read from torch's signature
    "deepnotes.chapters.initialization.experiments.SoftmaxProbe": {"max_weight", "entropy", "jacobian_norm"},
    "deepnotes.chapters.initialization.experiments.TruncSample": {"std", "max_over_std"},
    "deepnotes.chapters.magnitude_decomposition.probes.FirstStep": {"relative_update"},
    "deepnotes.chapters.magnitude_decomposition.probes.Orthogonality": {"mean_abs_cos", "mu_min", "mu_max"},
    "deepnotes.chapters.bert_init.experiments.InitProbe": {"logit_var", "softmax_kl", "loss"},
    "deepnotes.chapters.why_residuals.probes.JacobianProbe": {"forward_log_growth", "cos_vu", "norm_ratio"},
}
NON_FINITE = (math.nan, math.inf)
SEQUENCES = ("list[", "tuple[", "Sequence[")
WRONG_SEQUENCE = (3, THING)

# core.validate's value domains (issue 47), written by name: swept as their base type
DECLARED_INT = (
    "Integer",
    "Count",
    "Depth",
    "Repeats",
    "Symbolic",
    "Digits",
    "Workers",
    "NonNegativeCount",
    "Amount",
    "Seed",
)
DECLARED_FLOAT = ("Real", "Positive", "NonNegative", "Probability")
DOMAINS = {name: "int" for name in DECLARED_INT} | {name: "float" for name in DECLARED_FLOAT}
DOMAINS |= {f"{name} | None": f"{base} | None" for name, base in DOMAINS.items()}

# Values of the right type that a parameter's domain may not hold (issue 47): zero, negative, huge (a size no
# memory holds, a float near the top of the range) and 10**400 (an int no float or int64 holds). A parameter
# that declares its domain (core.validate's Count, Positive, Real, ...) is refused at the door outside it and may
# return a result inside it; a plain ``int``, ``float`` or ``Finite`` that returns a result for one is silent:
# its domain is not said anywhere a reader or this sweep can see.
DOMAIN_VALUES: dict[str, tuple] = {"int": (0, -3, 2**40, 10**400), "float": (0.0, -2.0, 1e308, 10**400)}

# annotation -> a sensible value for a parameter that is not the one under test
SENSIBLE = {
    "int": 2,
    "float": 0.5,
    "bool": False,
    "Budget": "smoke",
    "tuple[int, ...]": (2, 3),
    "list[int]": [2, 3],
    "tuple[float, ...]": (0.5, 0.25),
    "list[float]": [0.5, 0.25],
}


def _unaliased(annotation):
    """A declared domain (core.validate's named alias, issue 64) as the check it names, ``Annotated[base, Is[...]]``,
    alone or in a union (``Count | None``)."""
    import types
    import typing

    if hasattr(annotation, "__value__"):
        return annotation.__value__
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType) and any(hasattr(a, "__value__") for a in args):
        return typing.Union[tuple(_unaliased(a) for a in args)]
    return annotation


def _written(annotation) -> str:
    """An annotation as the source writes it: a string (postponed), or the object beartype resolved it to
    (``<class 'int'>`` -> ``int``; ``Annotated[float, Is[...]]`` -> ``float``; deepnotes' module paths dropped)."""
    if isinstance(annotation, str):
        return annotation
    if annotation is inspect.Parameter.empty:
        return ""
    annotation = _unaliased(annotation)
    if getattr(annotation, "__metadata__", None) is not None:  # Annotated[base, validators]
        annotation = annotation.__origin__
    text = inspect.formatannotation(annotation)
    return re.sub(r"\bdeepnotes(\.\w+)*\.(?=[A-Z])", "", text).replace("typing.", "")


def _base(annotation) -> str:
    """``int | None`` -> ``int``; ``Budget | str | None`` -> ``Budget``; other unions are left whole."""
    annotation = _written(annotation)
    if annotation == "Finite":  # deepnotes.core.validate's finite float, written by name
        return "float"
    annotation = DOMAINS.get(annotation, annotation)  # core.validate's value domains, by their base type
    optional_domain = re.fullmatch(r"Optional\[Annotated\[(\w+), .*\]\]", annotation)  # Count | None, resolved
    if optional_domain:
        return optional_domain.group(1)
    parts = [p.strip() for p in annotation.split("|") if p.strip() not in ("None", "")]
    if parts and parts[0] == "Budget":
        return "Budget"
    return parts[0] if len(parts) == 1 else annotation


def _resolved(annotation, namespace: dict):
    """A string annotation (postponed) evaluated where it was written, else as it is."""
    if isinstance(annotation, str):
        try:
            return eval(annotation, dict(namespace))  # noqa: S307  (the package's own annotations)
        except Exception:  # noqa: BLE001  (a name only a type checker knows)
            return annotation
    return annotation


def _declared_domain(annotation, namespace: dict):
    """The core.validate value domain the annotation declares (alone or ``| None``), or None."""
    from deepnotes.core import validate

    declared = getattr(validate, "DECLARED", ())  # none before issue 47
    annotation = _resolved(annotation, namespace)
    for candidate in (annotation, *getattr(annotation, "__args__", ())):
        if any(candidate is d for d in declared):
            return candidate
    return None


def _domain_values(annotation, namespace: dict) -> tuple:
    """Zero, negative, huge and 10**400 for an int or float parameter, declared or not."""
    domain = _declared_domain(annotation, namespace)
    base = domain.__value__.__origin__.__name__ if domain is not None else _base(annotation)  # the alias's base
    return DOMAIN_VALUES.get(base, ())


def _wrong_values(annotation: str) -> tuple:
    base = _base(annotation)
    if base in WRONG:
        return WRONG[base]
    if base.startswith(SEQUENCES):
        return WRONG_SEQUENCE
    return ()


def _plain(annotation) -> str:
    """An annotation as written, its module paths dropped (``collections.abc.Sequence[ModelConfig]`` ->
    ``Sequence[ModelConfig]``): how :data:`fuzz_builders.BY_ANNOTATION` names it."""
    return re.sub(r"\b(?:[a-z_][a-z0-9_]*\.)+(?=[A-Za-z_~])(?!Tensor\b)", "", _written(annotation))


def _sensible(param: inspect.Parameter, name_values: dict, target: str = "") -> object:
    """A value for a required parameter: one the callable needs (``BY_TARGET``), else by its kind, else by its
    name; raises LookupError where there is none."""
    if param.name in BY_TARGET.get(target, {}):
        return BY_TARGET[target][param.name]
    base = _base(param.annotation)
    if param.name == "k" or (param.name == "tokens" and base not in SENSIBLE):  # a token count goes by its type
        return name_values[param.name]
    if param.name == "seq_len":  # long enough for every objective (masking needs interior positions)
        return 8
    if _written(param.annotation) == "Budget":  # a piece of a chapter's plan: called with the Budget resolved
        import deepnotes as dn

        return dn.get_budget("smoke")
    if base in SENSIBLE:
        return SENSIBLE[base]
    if base in name_values:  # a config, by its type
        return name_values[base]
    if _plain(param.annotation) in BY_ANNOTATION:  # a record, a chapter's runs, a callable, by its type
        return BY_ANNOTATION[_plain(param.annotation)]
    if param.name in name_values:
        return name_values[param.name]
    if param.name in BY_NAME:
        return BY_NAME[param.name]
    raise LookupError(f"no sensible value for {param.name}: {param.annotation}")


def _name_values() -> dict:
    import torch

    import deepnotes as dn
    from deepnotes.core.engine import build_stack
    from deepnotes.core.train import History

    return {
        "Stack": build_stack(dn.ModelConfig(n_layers=2)),
        "History": History(losses=[2.0, 1.5, 1.2]),
        "torch.Tensor": torch.ones(2, 2),
        "sympy.core.expr.Expr": __import__("sympy").Symbol("n"),
        "torch._C.Generator": Fresh(lambda: torch.Generator().manual_seed(0)),
        "objective": dn.NextToken(),
        "tasks": [dn.MarkovLanguage()],  # one per member of a one-member stack
        "samples": (0.1, 0.2, 0.3, 0.4, 0.5, 0.6),  # draws of a statistic, one per seed
        "tokens": torch.zeros(2, 2, dtype=torch.long),  # ids of a batch of 2 sequences of 2 tokens
        "k": 0,  # the first member of a stack
        "budget": "smoke",
        "name": "x",
        "label": "post",
        "variant": "post",
        "claim": "a claim",
        "text": "a text",
        "description": "a control",
        "seed": "000",
        "act": "relu",
        "kind": "plain",
        "chapter": "bert_init",
        "stem": "bert_init",
        "optimizer": "adam",
        "norm": "post",
        "style": "post",
        "ModelConfig": dn.ModelConfig(n_layers=2),
        "TrainConfig": dn.TrainConfig(steps=2),
        # words a verdict, a table or a figure carries (issue 47: callables the sweep did not reach)
        "source": "a source",
        "claimed": "a claim",
        "computed": "a result",
        "reason": "a reason",
        "ref": "eq. (1)",
        "part": "main",
        "title": "a title",
        "section": "a section",
        "key": "a key",
        "estimator": "median",
        # a fresh matplotlib Axes or Figure for each call (figures are closed after every call)
        "ax": Fresh(lambda: _figure()[1][0]),
        "fig": Fresh(lambda: _figure()[0]),
    }


def _figure():
    from deepnotes.show import plots

    return plots.new_figure(1)


@dataclass(frozen=True)
class Call:
    target: str  # module.name
    param: str
    value: object
    kwargs: tuple  # the other parameters: (name, value) pairs
    domain: str = ""  # a value-domain case: "declared" (the annotation says the domain) or "undeclared"; "" otherwise

    @property
    def name(self) -> str:
        value = "10**400" if isinstance(self.value, int) and self.value > 2**64 else repr(self.value)
        return f"{self.target}({self.param}={value})"

    def arguments(self) -> dict:
        """The other parameters' values, a Fresh one built now (before the wait for an answer starts: a chapter's
        runs are trained once, on their first use)."""
        return {k: v.build() if isinstance(v, Fresh) else v for k, v in self.kwargs}

    def __call__(self, arguments: dict | None = None):
        module, _, attr = self.target.rpartition(".")
        fn = getattr(importlib.import_module(module), attr)
        return fn(**(self.arguments() if arguments is None else arguments), **{self.param: self.value})


def public_callables() -> list[tuple[str, object]]:
    """(module.name, callable) for every public function and class defined in a deepnotes module."""
    import deepnotes

    out = []
    for info in pkgutil.walk_packages(deepnotes.__path__, "deepnotes."):
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
                continue
            if inspect.isfunction(obj) or (inspect.isclass(obj) and not issubclass(obj, BaseException)):
                out.append((f"{module.__name__}.{name}", obj))
    return sorted(out, key=lambda t: t[0])


def calls() -> tuple[list[Call], Counter]:
    """Every (callable, typed parameter, wrong value) to try, and why the rest were not reached."""
    names = _name_values()
    todo, skipped = [], Counter()
    for target, obj in public_callables():
        if any(word in target.rpartition(".")[2] for word in SIDE_EFFECTS) or target in WRITES_CACHE:
            skipped["side effects"] += 1
            continue
        if target in NEEDS_MATCHING_ARGUMENTS:
            skipped["arguments that must match each other"] += 1
            continue
        try:
            params = [
                p
                for p in inspect.signature(obj).parameters.values()
                if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name != "self"
            ]
        except (TypeError, ValueError):
            skipped["no signature"] += 1
            continue
        if not any(_wrong_values(p.annotation) for p in params):
            skipped["no typed parameter"] += 1
            continue
        try:  # the parameters left out take their defaults
            sensible = {p.name: _sensible(p, names, target) for p in params if p.default is inspect.Parameter.empty}
        except LookupError:
            skipped[NO_ARGUMENTS] += 1
            continue
        measured = MEASURED.get(target, set())
        for p in params:
            is_measured = measured is None or p.name in measured
            others = tuple((k, v) for k, v in sensible.items() if k != p.name)
            for value in _wrong_values(p.annotation):
                if value in NON_FINITE and is_measured:
                    continue
                todo.append(Call(target, p.name, value, others))
            if is_measured:  # a measurement: any value it holds was measured
                continue
            namespace = vars(sys.modules[obj.__module__])
            domain = "declared" if _declared_domain(p.annotation, namespace) is not None else "undeclared"
            for value in _domain_values(p.annotation, namespace):
                todo.append(Call(target, p.name, value, others, domain))
    return todo, skipped


def classify(call: Call) -> tuple[str, str]:
    import matplotlib.pyplot as plt

    arguments = call.arguments()
    try:
        valid = lambda result: call.domain == "declared" and _finite(result)  # noqa: E731
        return outcome(lambda: call(arguments), (call.param,), valid=valid), ""
    except Silent as err:
        return "silent", str(err)[:200]
    except AssertionError as err:
        return ("hang" if str(err).startswith("hang") else "unclear"), str(err)[:300]
    finally:
        plt.close("all")


CALLS, SKIPPED = calls() if __name__ != "__main__" else ([], Counter())


@pytest.fixture(autouse=True)
def _smoke(monkeypatch, tmp_path):
    monkeypatch.setenv("DEEPNOTES_BUDGET", "smoke")
    monkeypatch.chdir(tmp_path)


def test_the_sweep_reaches_most_of_the_package():
    reached = len({c.target for c in CALLS})
    assert reached >= 540, (reached, SKIPPED)  # 558 on 2026-11-28: a drop means callables fell out of the sweep


def test_every_callable_with_a_typed_parameter_gets_its_arguments():
    """A new public callable whose required parameter nothing here can fill fails this test: give it a value in
    fuzz_builders (by annotation, by name, or for that callable), or say in NEEDS_MATCHING_ARGUMENTS why none fits."""
    assert NO_ARGUMENTS not in SKIPPED, SKIPPED


WRONG_KIND = [c for c in CALLS if not c.domain]
VALUE_DOMAIN = [c for c in CALLS if c.domain]


@pytest.mark.parametrize("call", WRONG_KIND, ids=[c.name for c in WRONG_KIND])
def test_a_value_of_the_wrong_kind_is_refused_by_name(call):
    result, detail = classify(call)
    assert result == "clear", detail


@pytest.mark.parametrize("call", VALUE_DOMAIN, ids=[f"{c.name}-{c.domain}" for c in VALUE_DOMAIN])
def test_a_value_outside_its_domain_is_refused_by_name_and_one_inside_is_accepted(call):
    result, detail = classify(call)
    assert result in ("clear", "valid"), detail


def sweep(only_domain: bool = False) -> dict[str, Counter]:
    import os
    import tempfile

    os.environ["DEEPNOTES_BUDGET"] = "smoke"
    os.chdir(tempfile.mkdtemp())
    todo, skipped = calls()
    if only_domain:
        todo = [c for c in todo if c.domain]
    counts: dict[str, Counter] = {"wrong kind": Counter(), "value domain": Counter()}
    for call in todo:
        try:
            result, detail = classify(call)
        except Exception as err:  # noqa: BLE001  (a builder of fuzz_builders failed: the package changed under it)
            result, detail = "not built", f"{type(err).__name__}: {err}"[:300]
        counts["value domain" if call.domain else "wrong kind"][result] += 1
        if result not in ("clear", "valid"):
            print(f"{result:8s} {call.name}\n         {detail}")
    print(f"\ncallables swept: {len({c.target for c in todo})}; not reached: {dict(skipped)}")
    for case, tally in counts.items():
        tried = sum(tally.values())
        print(
            f"{case}: tried {tried} / clear {tally['clear']} / valid {tally['valid']} / silent {tally['silent']} / "
            f"unclear {tally['unclear']} ({100 * tally['unclear'] / max(tried, 1):.1f} %) / hangs {tally['hang']}"
            + (f" / arguments not built {tally['not built']}" if tally["not built"] else "")
        )
    return counts


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    args = [a for a in sys.argv[1:] if a != "--domain"]
    if args:  # a shorter wait for an answer, for a first look: python tests/test_fuzz_api.py 5
        import test_fuzz

        test_fuzz.HANG_SECONDS = int(args[0])
    sweep(only_domain="--domain" in sys.argv)  # --domain: the value-domain cases only
