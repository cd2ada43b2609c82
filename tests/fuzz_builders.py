"""Values for the parameters the API sweep (``tests/test_fuzz_api.py``) cannot fill from a type or a name alone:
a chapter's measured runs, a record's lists, the engine's pieces, a render callable, a widget.

Each is a small instance that agrees with itself and with the sweep's other sensible values; a chapter's
results (its Runs, its dicts of Histories keyed by setting) are the chapter's own functions run once at the
``smoke`` budget, so a figure or a verdict reads the keys, labels and depths it would read in the book. A
result is built once per process and each call gets a deep copy of it (no call sees what another changed).

    BY_ANNOTATION  annotation as written (module paths dropped) -> value, for any parameter it annotates
    BY_NAME        parameter name -> value, for an unannotated parameter or a str that needs a known word
    BY_TARGET      module.name -> {parameter: value}: arguments that must agree with each other
"""

from __future__ import annotations

import copy
import functools
import math
import statistics
from dataclasses import dataclass


@dataclass(frozen=True)
class Fresh:
    """A value built anew for each call (an Axes drawn on by one call is not the next call's)."""

    build: object

    def __repr__(self) -> str:
        return "<fresh>"


@functools.cache
def _once(producer):
    return producer()


def made(producer) -> Fresh:
    """``producer()`` run once per process (a chapter's smoke runs), a deep copy of it for each call."""
    return Fresh(lambda: copy.deepcopy(_once(producer)))


def _smoke():
    """The smoke budget, resolved as a page's setup cell resolves it (chapter functions take a Budget, not its name)."""
    from deepnotes import get_budget

    return get_budget("smoke")


def _context(workers=None):
    """The smoke budget's RunContext on this machine, as a page's setup cell builds it (chapter functions that
    train take it)."""
    from deepnotes import RunContext

    return RunContext.here(_smoke(), workers=workers)


def _published_rule():
    from deepnotes.core.rules import PUBLISHED

    return PUBLISHED["DeepNorm"]


def _first_steps():
    from deepnotes.chapters.depth_rules import experiments as ex

    return ex.first_steps(_context())


def _rule_runs():
    """The depth-rules chapter's smoke runs (its frontier and map)."""
    from deepnotes.chapters.depth_rules import experiments as ex

    return ex.train_runs(_context(workers=1))


def _rule_run_list():
    from deepnotes.chapters.depth_rules import experiments as ex

    return [ex.RuleRun("DeepNorm", 2, 1e-3, 2, 0)]


def _trial():
    """A reader's rule tried at smoke (Depth-µP as typed), beside DeepNorm."""
    from deepnotes.chapters.depth_rules import reader

    rule = reader.typed_rule("pre", branch="1/sqrt(N)", lr_scale="1/sqrt(N)")
    return reader.try_rule(rule, (2, 4), _context(workers=1))


def _figure():
    from deepnotes.show import plots

    return plots.new_figure(1)


def _history():
    from deepnotes.core.train import History

    return History(losses=[2.0, 1.5, 1.2], floor=1.0, unigram=2.2)


# ---- a chapter's results at the smoke budget, built once -------------------------------------------------


def _thousand_runs():
    from deepnotes.chapters.thousand_layers import experiments as ex

    return ex.train_runs(_context(workers=1))


def _thousand_depth() -> int:
    from deepnotes.chapters.thousand_layers.budget import sizes

    return sizes(_smoke()).depth


def _thousand_map():
    from deepnotes.chapters.thousand_layers import experiments as ex

    return ex.trainability_map(_once(_thousand_runs), _smoke())


def _thousand_profiles():
    from deepnotes.chapters.thousand_layers import experiments as ex

    return ex.init_profiles(_smoke())


def _growth_sweep():
    from deepnotes.chapters.why_residuals import probes

    return probes.growth_sweep(_smoke())


def _growth_rows():
    from deepnotes.chapters.why_residuals import claims

    return list(claims.growth_verdicts(_growth_sweep()))


def _thousand_predicted():
    from deepnotes.chapters.thousand_layers import derive
    from deepnotes.chapters.thousand_layers.budget import sizes

    return derive.predicted_profiles(sizes(_smoke()).depth)


def _warmup_runs():
    from deepnotes.shared import warmup

    return warmup.runs(_context())


def _warmup_depth() -> int:
    return next(iter(_once(_warmup_runs)))


def _warmup_runs_at():
    return _once(_warmup_runs)[_warmup_depth()]


def _post_pre_runs():
    from deepnotes.chapters.post_vs_pre_norm import experiments as ex

    return ex.training_runs(_context())


def _post_pre_probes():
    from deepnotes.chapters.post_vs_pre_norm import experiments as ex

    return ex.init_probes(_smoke())


def _post_pre_show():
    from deepnotes.chapters.post_vs_pre_norm import experiments as ex

    return ex.update_map_runs(_smoke())


def _residual_runs():
    from deepnotes.chapters.why_residuals import experiments as training

    return training.train_sweep(_context())


def _residual_sweep():
    from deepnotes.chapters.why_residuals import experiments as training

    return training.transformer_sweep(_context())


def _bert_runs():
    from deepnotes.chapters.bert_init import experiments as ex

    return ex.training_runs(_context())


def _bert_gain_runs():
    from deepnotes.chapters.bert_init import experiments as ex

    return ex.gain_runs(_context())


def _increment_updates():
    from deepnotes.chapters.increment_explosion import experiments as ex

    return ex.early_updates(_context())


def _increment_comparisons():
    from deepnotes.chapters.increment_explosion import experiments as ex

    return ex.training_comparisons(_context())


def _moment_table():
    from deepnotes.chapters.initialization import experiments as ex

    return ex.moment_table(_smoke())


def _ntk_runs():
    from deepnotes.chapters.initialization import experiments as ex

    return ex.ntk_comparison(_smoke())


def _choice_comparison():
    from deepnotes.chapters.magnitude_decomposition import experiments as training

    return training.choice_comparison(_context())


def _bert(producer: str):
    from deepnotes.chapters.bert_init import experiments as ex

    return getattr(ex, producer)(_smoke())


def _jacobian_probe():
    from deepnotes.chapters.why_residuals import probes

    return probes.jacobian_growth("plain", 4, 2, batch=2)


def _spectra():
    from deepnotes.chapters.why_residuals import spectrum

    return spectrum.jacobian_spectra(_smoke())


def _decomposition_rows():
    from deepnotes.chapters.magnitude_decomposition import probes as ex

    return ex.decomposition_table(budget=_smoke())


def _loss_change_sweep():
    from deepnotes.chapters.increment_explosion import experiments as ex

    return ex.loss_change_sweep(_context())


def _loss_change_probes():
    return _once(_loss_change_sweep).probes


def _plain_moments():
    from deepnotes.chapters.why_residuals import probes

    return probes.plain_moments(4, 8, 2, batch=4)


def _magnitude_model():
    from deepnotes.chapters.magnitude_decomposition import probes as ex

    return ex.deepnorm_model(2, 1.0, 1.0, _smoke())


# ---- the engine's pieces, out of one small Stack -----------------------------------------------------------


def _stack():
    import deepnotes as dn
    from deepnotes.core.engine import build_stack

    return build_stack(dn.ModelConfig(n_layers=2))


def _engine_pieces() -> dict:
    """A 2-layer Stack's styles, block names, tensors and a stream x [K, M = B·T, d] (B = 2, T = 2): what
    :func:`deepnotes.core.blocks.run_blocks` is called with."""
    import torch

    stack = _stack()
    names = list(stack.block_names)
    x = torch.zeros(stack.n_members, 4, stack.cfg.d_model)
    return {
        "st": stack.styles,
        "names": names,
        "params": [getattr(stack, n).detach() for n in names],
        "x": x,
        "batch": 2,
        "p": stack.layers()[0],
    }


def _piece(name: str) -> Fresh:
    return Fresh(lambda: _engine_pieces()[name])


def _norm_input() -> dict:
    import torch

    gen = torch.Generator().manual_seed(0)
    return {"x": torch.randn(2, 4, generator=gen), "gamma": torch.ones(4), "g": torch.randn(2, 4, generator=gen)}


def _render(**_settings):
    """A render callable for the slider and the live panel: one small figure."""
    return _figure()[0]


def _probe(depth: int, batch: int):
    """A probe for :class:`deepnotes.cost.model.ProbeCalls`: ``depth`` blocks on ``batch`` inputs."""
    import torch

    x = torch.ones(batch, 4)
    for _ in range(depth):
        x = x * 0.5
    return x


def _record():
    from deepnotes.ledger.record import Record

    return Record("bert_init", "smoke", "a claim", "a source", "a value", "a result", "holds", "a reason", "verdict-0")


def _records() -> dict:
    from deepnotes.ledger.record import ChapterRecord

    return {"bert_init": ChapterRecord("bert_init", "smoke", "2026-11-28T00:00:00", (_record(),))}


def _ledger():
    from deepnotes.ledger import page

    return page.build(_records())


def _item():
    from deepnotes.ledger import inventory

    return inventory.inventory()[next(iter(inventory.SOURCES))][0]


def _first_chapter():
    from deepnotes.chapters.catalog import CATALOG

    return next(iter(CATALOG.values()))


def _limits():
    """A claimed range [0, 1] (a fraction's), as the seeds' doors take it."""
    from deepnotes.show.verdicts import Limits

    return Limits(0.0, 1.0)


def _verdicts() -> list:
    from deepnotes.show import verdicts as vd

    return [
        vd.check_true(claim="a claim", source="a source", claimed="1", computed="1", ok=1 < 2, reason="a reason"),
        vd.check_true(claim="a claim", source="a source", claimed="1", computed="2", ok=2 < 1, reason="a reason"),
    ]


def _slider():
    from deepnotes.show import widgets

    return widgets.int_slider("x", (1, 2, 3))


def _run_plan():
    import deepnotes as dn
    from deepnotes.core.ensembles import RunPlan

    return RunPlan([dn.ModelConfig(n_layers=2)], [dn.TrainConfig(steps=2)], dn.MarkovLanguage())


def _annotations() -> dict:
    import sympy
    import torch

    import deepnotes as dn

    return {
        "tuple[int, int]": (2, 8),  # (batch, sequence length), a matrix shape
        "tuple[int, int, int]": (2, 2, 4),  # (lowest, default, highest) of a slider, a tensor shape
        "tuple[float, float]": (0.9, 0.999),  # Adam's betas, a band
        "tuple[float, float, float]": (0.0, 0.5, 1.0),  # (lowest, start, highest) of a slider
        "list[list[float]]": [[0.5, 0.25], [0.5, 0.25]],  # per seed, per step or per block
        "list[bool]": [True, False],
        "list[str]": ["a line", "another line"],
        "dict[tuple[str, int, float], list[History]]": Fresh(lambda: {("postnorm", 2, 1e-3): [_history()]}),
        "dict[tuple[str, int, float], float]": {("postnorm", 2, 1e-3): 0.5},
        "dict[tuple[str, int, float], int]": {("postnorm", 2, 1e-3): 1},
        "dict[tuple, float]": {("plain", 8, 2): 0.5},
        "dict[int, list[tuple[float, ...]]]": {2: [(1.0, 0.5)]},
        "dict[tuple, list[tuple[float, float]]]": {(2, "plain"): [(0.5, 0.25)]},
        "bool | tuple[torch.Tensor, torch.Tensor] | None": None,
        "Symbol": sympy.Symbol("n", positive=True),
        "Basic": sympy.Symbol("n", positive=True),
        "list[Verdict]": Fresh(_verdicts),
        "Limits": Fresh(_limits),
        "tuple[Record, ...]": Fresh(lambda: (_record(),)),
        "dict[str, ChapterRecord]": Fresh(_records),
        "Ledger": Fresh(_ledger),
        "Item": Fresh(_item),
        "dict[str, tuple[Row, ...]]": Fresh(lambda: _ledger().rows),
        "tuple[tuple[Record, Citation], ...]": (),
        "tuple[module, ...]": (),
        "dict[float, list[InitProbe]]": made(functools.partial(_bert, "sweep_probe_seeds")),
        "dict[float, TableProbe]": made(functools.partial(_bert, "table_setting_probes")),
        "dict[float, InitProbe]": made(functools.partial(_bert, "table_probes")),
        "dict[tuple[str, str], list[list[StepProbe]]]": made(_loss_change_probes),
        "list[DecompositionRow]": made(_decomposition_rows),
        "JacobianProbe": made(_jacobian_probe),
        "dict[tuple, JacobianProbe]": {},
        "list[Rates]": Fresh(lambda: [__import__("deepnotes.cost.estimate", fromlist=["T4"]).T4]),
        "Sequence[tuple[float, bool]]": [(0.02, False)],  # (std, extra head layer) of an encoder
        "list[tuple[str, int, TrainConfig]]": [("post", 2, dn.TrainConfig(steps=2))],  # (variant, depth, config)
        "dict[int, float]": {2: 0.5, 4: 0.25},
        "dict[str, int]": {"width": 2},
        "dict[str, bool]": {"post": True, "pre": False},  # a run trains, per the source
        "dict[str, list[float]]": {"post": [0.5, 0.25, 0.4], "pre": [0.5, 0.25, 0.4]},  # per run, per seed
        "dict[tuple, list[float]]": {("plain", 8, 2): [0.5, 0.6, 0.55]},
        "dict[int, list[float]]": {2: [0.5, 0.6, 0.55], 4: [0.4, 0.45, 0.5]},
        "tuple[tuple[str, bool], ...]": (("a claim", True),),
        "tuple[tuple[str, float], ...]": (("a claim", 0.5),),
        "list[History]": Fresh(lambda: [_history()]),
        "Sequence[History]": Fresh(lambda: [_history()]),
        "Mapping[str, History]": Fresh(lambda: {"post": _history()}),
        "Mapping[str, History | Sequence[History]]": Fresh(lambda: {"post": _history()}),
        "Callable[[list], float]": statistics.median,
        "Callable[[Stack], list]": len,
        "Callable[..., object]": _render,
        "Mapping[str, Sequence]": {"x": (1, 2)},
        "Mapping[str, ValueWidget]": Fresh(lambda: {"x": _slider()}),
        "Iterable[~T]": (1, 2),
        "Collection": ("a", "b"),
        "MarkovLanguage": dn.MarkovLanguage(),
        "WarmupBudget": dn.get_budget("smoke").warmup,
        "RunContext": made(
            lambda: _context(workers=1)
        ),  # where a page's runs train (serial: the fuzzer's calls are tiny)
        "Sequence[ModelConfig]": (dn.ModelConfig(n_layers=2),),
        "Sequence[TrainConfig]": (dn.TrainConfig(steps=2),),
        "TrainConfig | Sequence[TrainConfig]": dn.TrainConfig(steps=2),
        "RunPlan": Fresh(_run_plan),
        "list[torch.Tensor]": Fresh(lambda: [torch.ones(2, 2)]),
        "Module": Fresh(lambda: torch.nn.Linear(2, 2)),
        "Styles": _piece("st"),
        "Runs": made(_thousand_runs),
        "RuleRuns": made(_rule_runs),
        "FirstSteps": made(_first_steps),
        "dict[str, list[list[float]]]": {"Pre-LN": [[1.0, 1.1, 1.2]]},  # per rule, per depth, per seed
        "dict[tuple[str, int, float, int], list[History]]": Fresh(lambda: {("Pre-LN", 2, 1e-3, 2): [_history()]}),
        "Mapping[str, Mapping[str, object]]": {"adam": {"order": 0, "bounded": True}},
        "RuleRuns | None": made(_rule_runs),
        "Trial": made(_trial),
        "Rule": Fresh(_published_rule),
        "Mapping[str, Rule]": Fresh(lambda: {"DeepNorm": _published_rule()}),
        "list[RuleRun] | None": Fresh(_rule_run_list),
        "list[RuleRun]": Fresh(_rule_run_list),
        "TrainabilityMap": made(_thousand_map),
        "dict[str, list[StreamProfile]]": made(_thousand_profiles),
        "dict[float, tuple[MLMRun, ...]]": made(_bert_runs),
        "dict[tuple[float, bool], tuple[MLMRun, ...]]": made(_bert_gain_runs),
        "dict[str, dict[tuple[str, int], list[History]]]": made(_increment_updates),
        "dict[tuple[str, int], list[History]]": made(lambda: next(iter(_once(_increment_updates).values()))),
        "dict[int, dict[str, list]]": made(_increment_comparisons),
        "dict[int, dict[str, list[History]]]": made(_increment_comparisons),
        "dict[tuple[str, str], MomentCurve]": made(_moment_table),
        "dict[bool, UpdateRun]": made(_ntk_runs),
        "dict[str, ChoiceRun]": made(lambda: next(iter(_once(_choice_comparison).values()))),
        "dict[str, list[StreamProbe]]": made(_post_pre_probes),
        "StreamProbe": made(lambda: next(iter(_once(_post_pre_probes).values()))[0]),
        "list[StreamProbe]": made(lambda: next(iter(_once(_post_pre_probes).values()))),
        "LossChangeSweep": made(_loss_change_sweep),
        "dict[str, dict]": made(_post_pre_runs),
        "list[tuple[str, str]]": made(_post_pre_show),
        "dict[tuple, list[History]]": made(_residual_runs),
        "TransformerSweep": made(_residual_sweep),
        "TransformerSweep | None": made(_residual_sweep),
        "dict[str, list[History]]": made(_warmup_runs_at),
    }


BY_ANNOTATION = _annotations()

BY_NAME = {
    "init": "he",
    "markdown": "The main text holds: {glue:text}`main_tally`.",
    "device": "cpu",
    "how": "measured",
    "path": "notes.py",
    "activation": "relu",
    "status": "holds",
    "what": "the claims",
    "pick": "alpha",
    "context": "at the deepest depth",
    "number": "1",
    "variants": ("post",),
    "kinds": ("plain",),
    "styles": ("postnorm",),
    "slider_norms": ("post",),
    "slider_optimizers": ("adam",),
    "settings": ("post", "pre"),
    "keys": [("post", 2, 0)],
    "depths": [2, 4, 8],
    "values": (0.1, 0.2, 0.3, 0.4, 0.5, 0.6),
    "seeds": [0, 1, 2],
    "lrs": {"adam": 1e-3, "sgd": 0.1},
    "forward": {"layer": 0.5},
    "forward_backward": {"layer": 0.5},
    "rms": {"fc1": [[0.5, 0.25]]},
    "changes": {"post": [[0.5, 0.25]]},
    "picks": {"a": (1.0, 0.5)},
    "stacks": {},
    "rule": "1/sqrt(N)",
    "comp": made(_choice_comparison),
    "model": made(_magnitude_model),
    "runs_at": made(_warmup_runs_at),
    "sizes": {"width": 2},
    "states": {},
    "axes": Fresh(lambda: list(_figure()[1])),
    "items": (1, 2),
    "allowed": ("a", "b"),
    "fn": len,
    "obj": Fresh(lambda: __import__("deepnotes.core.validate", fromlist=["positive_int"]).positive_int),
    "params": Fresh(lambda: [__import__("torch").nn.Parameter(__import__("torch").ones(2))]),
    "jobs": [(1,)],
    "value": 2,
    "seconds": {"cpu": 1.0},
    "args": (),
    "model_cfgs": (),
    "train_cfgs": (),
    "samples_by_depth": [[0.5, 0.6, 0.55], [0.9, 1.1, 1.0], [2.1, 1.9, 2.0]],  # per depth of "depths", per seed
    "runs": Fresh(lambda: {"plain": _history()}),
    "moments": made(_plain_moments),
    "verdicts": Fresh(lambda: (_record(),)),
    "ok": 1 < 2,
    "holds": 1 < 2,
    "approx": 2 < 1,
    "recorded_at": "2026-11-28T00:00:00",
    "anchor": "verdict-0",
    "english": "a title",
    "author": "an author",
    "date": "2026-11-28",
    "url": "https://example.org",
    "lhs_latex": "x",
    "spectra": made(_spectra),
    "orthogonal": {"mean_abs_cos": 0.5},
    "items_000": "claim 1",
    "items_001": "claim 1",
    "plan": [],
    "series": {"a layer": ([1.0, 0.5], [1.0, 0.5])},
    # a sentence rendered from verdicts (deepnotes.show.say)
    "verdict": Fresh(lambda: _verdict()),
    "v": Fresh(lambda: _verdict()),
    "wrong": "does not hold",
    "undecided": "cannot be decided here",
    "differences": "the paper's setting differs",
    "trains": "trains",
    "fails": "does not train",
    "sentences": Fresh(lambda: [__import__("deepnotes.show.say", fromlist=["Sentence"]).Sentence("a sentence")]),
    "parts": Fresh(lambda: ["a", "b"]),
    "prefix": "N = 4, adam",  # a training row's setting (why residuals)
}


def _verdict():
    from deepnotes.show import verdicts as vd

    return vd.check_number("a claim", "a source", 1.0, 1.0)


def _outcome_verdict():
    from deepnotes.show import verdicts as vd

    return vd.check_outcome(
        claim="c", source="s", expected={"post": True}, measured={"post": [0.9, 0.8, 0.7]}, threshold=0.5, reason="r"
    )


def _mlp_setting():
    from deepnotes.chapters.why_residuals import experiments as training

    return [training.mlp_setting("plain", 2, _smoke(), steps=2)]


def _transformer_setting():
    from deepnotes.chapters.why_residuals import experiments as training

    return [training.transformer_sweep_settings(_smoke())[0][1]]


def _setup_model():
    import deepnotes as dn

    return dn.build_model(dn.ModelConfig(n_layers=2))


def _thousand_rows() -> dict:
    from deepnotes.chapters.thousand_layers import budget

    return {"rows": budget.ROWS, "kind": budget.ThousandLayersBudget}


def _optimizer():
    from deepnotes.core.optim import EnsembleOptimizer

    return EnsembleOptimizer(_stack(), [__import__("deepnotes").TrainConfig()])


BY_TARGET: dict[str, dict[str, object]] = {
    "deepnotes.core.train.CapturedStep": {  # a step that does nothing, an optimizer, the CPU's mode
        "device_step": lambda tokens, mask, step: None,
        "opt": Fresh(_optimizer),
        "mode": "emulate",
    },
    "deepnotes.show.say.say_run": {"verdict": Fresh(_outcome_verdict), "run": "post"},  # a run of that verdict
    "deepnotes.show.say.say": {"holds": "holds"},  # a phrase (check_graded's holds is a comparison)
    "deepnotes.show.say.grouped": {"holds": "holds", "name": lambda v: "a setting"},  # a phrase; names a row
    "deepnotes.core.models.gaussian_second_moment": {"phi": __import__("math").tanh},  # an activation
    "deepnotes.core.validate.described": {"hint": int},  # an annotation
    "deepnotes.show.plots.nothing_drawn": {"why": "no series given"},  # a reason
    "deepnotes.show.verdict_words.decides_markdown": {"table": Fresh(_verdicts)},  # a page's verdict rows
    "deepnotes.chapters.chapter.Chapter": {  # a chapter's declaration: the first chapter's own pieces
        name: Fresh(lambda name=name: getattr(_first_chapter(), name))
        for name in ("stem", "title", "sizes", "rows", "gpu_minutes", "work", "derivations", "figures", "sliders")
        + ("answer",)
    },
    "deepnotes.show.verdict_words.summary_markdown": {"table": Fresh(_verdicts)},
    "deepnotes.show.plots.undrawn_note": {"labels": ["a", "b"], "why": "no positive finite value"},  # series, reason
    "deepnotes.chapters.why_residuals.claims.growth_readings": {  # the rows of that sweep
        "table": made(_growth_rows),
        "sweep": made(_growth_sweep),
    },
    "deepnotes.core.train.train_stack": {  # the loop: a one-member stack, two steps of its task
        "stack": Fresh(lambda: _stack()),
        "tasks": Fresh(lambda: __import__("deepnotes").MarkovLanguage(_stack().cfg.vocab_size, seed=0)),
        "cfgs": Fresh(lambda: [__import__("deepnotes").TrainConfig(steps=2, batch_size=2, seq_len=8)]),
        "objective": Fresh(lambda: __import__("deepnotes").NextToken()),
        "trackers": (),
        "trainable": None,
        "progress": False,
    },
    "deepnotes.core.train.BatchesAhead": {  # a draw of one member's batch of 2 tokens, on the CPU
        "draw": lambda: (__import__("torch").zeros((1, 1, 2), dtype=__import__("torch").long), None),
        "device": __import__("torch").device("cpu"),
    },
    "deepnotes.core.train.LossRecord": {  # one member's History and its rates
        "hists": Fresh(lambda: [__import__("deepnotes.core.train", fromlist=["History"]).History(unigram=1.0)]),
        "lr_values": lambda step: [0.1],
    },
    "deepnotes.core.engine.load_reference": {"model": Fresh(_setup_model)},  # the sweep's Stack's sizes
    "deepnotes.core.engine.reference_layout": {"model": Fresh(_setup_model)},
    "deepnotes.core.train.check_setup": {
        "model": Fresh(_setup_model),
        "task": Fresh(lambda: __import__("deepnotes").MarkovLanguage(_setup_model().cfg.vocab_size)),
    },
    "deepnotes.chapters.why_residuals.spectrum.model_spectrum": {"model": made(_magnitude_model)},
    "deepnotes.core.models.next_token_loss": {"model": made(_magnitude_model)},
    "deepnotes.core.config.chapter_sizes": {k: Fresh(lambda k=k: _thousand_rows()[k]) for k in ("rows", "kind")},
    "deepnotes.core.engine.check_slot_names": {"names": Fresh(lambda: list(_stack().block_names))},
    "deepnotes.cost.model.ProbeCalls": {"probe": _probe},
    "deepnotes.core.derive.first_update": {"rule": _published_rule()},  # "rule" elsewhere is a formula's text
    "deepnotes.core.rules.Rule": {"name": "a reader's rule", "placement": "pre"},
    "deepnotes.core.rules.engine_config": {"rule": _published_rule()},
    **{
        f"deepnotes.chapters.depth_rules.experiments.{f}": {"rule": _published_rule()}
        for f in ("rule_config", "rule_stack", "stepped")
    },
    "deepnotes.core.rules.scale_named": {"rule": _published_rule()},
    "deepnotes.show.plots.fractions_over_seeds": {"xs": (2, 4), "per_seed": ((0.5, 0.6, 0.7), (0.4, -math.inf, 0.2))},
    "deepnotes.chapters.why_residuals.experiments.mlp_plan": {"settings": Fresh(_mlp_setting)},
    "deepnotes.chapters.why_residuals.experiments.mlp_runs": {"settings": Fresh(_mlp_setting)},
    "deepnotes.chapters.why_residuals.experiments.transformer_plan": {"settings": Fresh(_transformer_setting)},
    "deepnotes.chapters.why_residuals.experiments.transformer_runs": {"settings": Fresh(_transformer_setting)},
    # the reader's argument name, which the refusal repeats: the one this sweep varies
    "deepnotes.core.config.live_range": {"name": "value"},
    "deepnotes.core.validate.positive_int": {"name": "value"},
    "deepnotes.core.validate.positive_float": {"name": "value"},
    "deepnotes.shared.warmup.verdicts": {"depth": Fresh(_warmup_depth)},
    "deepnotes.shared.warmup.gradient_verdicts": {"depth": Fresh(_warmup_depth)},
    "deepnotes.chapters.initialization.norms.layer_norm_input_grad": {
        k: Fresh(lambda k=k: _norm_input()[k]) for k in ("x", "gamma", "g")
    },
    "deepnotes.chapters.initialization.norms.rms_norm_input_grad": {
        k: Fresh(lambda k=k: _norm_input()[k]) for k in ("x", "gamma", "g")
    },
    "deepnotes.chapters.thousand_layers.claims.fractions_text": {"depth": Fresh(_thousand_depth)},  # one it trained at
    "deepnotes.chapters.thousand_layers.claims.at_initialization": {"predicted": made(_thousand_predicted)},
    "deepnotes.chapters.thousand_layers.claims.init_reading": {"predicted": made(_thousand_predicted)},
}
for _target in ("block_forward", "run_blocks", "compiled_forward", "compiled_usable"):
    BY_TARGET[f"deepnotes.core.blocks.{_target}"] = {k: _piece(k) for k in ("st", "names", "params", "x", "p")}
