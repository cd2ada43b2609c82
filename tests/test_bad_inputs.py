"""Bad input, as a hostile but realistic reader types it, at every public entry point.

Every case must end in a *clear* error: a ``ValueError`` or ``TypeError`` raised by our own code (the
innermost frame is in ``deepnotes/`` or ``tools/``, never in torch, ipywidgets or matplotlib) whose
message names the bad value (``shows``); a command-line tool exits with status 2 and a usage line
naming it. Anything else is *silent* (no error: a default substituted or a number returned),
*unclear* (another exception, a message that does not name the value, or one raised deep inside a
library) or a *hang* (no answer within ``HANG_SECONDS``).

    python tests/test_bad_inputs.py      # the sweep: tried / clear / silent / unclear / hangs, and each failure
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import traceback
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

ROOT = Path(__file__).resolve().parents[1]
# deepnotes' code, its tools, and the type check at the door of every annotated deepnotes function (beartype's
# wrapper, installed by ``deepnotes/__init__.py``; its messages name the parameter)
OURS = (str(ROOT / "deepnotes"), str(ROOT / "tools"), "<@beartype(deepnotes.")
HANG_SECONDS = 120
INF, NAN = math.inf, math.nan


@dataclass(frozen=True)
class Case:
    entry: str  # the public entry point, as a reader calls it
    call: Callable[[], object]  # the call with the bad input
    shows: tuple[str, ...]  # what the message must contain: the bad value (and, where useful, what is allowed)


@dataclass(frozen=True)
class Tool:
    entry: str
    argv: tuple[str, ...]  # arguments of ``python tools/<script>``
    shows: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()  # environment variables set for the run
    one_line: bool = False  # a failure after the arguments were read: exactly one line on stderr (issue 47)


# ---- the entry points, imported lazily so that collecting this file stays cheap ----------------------


def dn():
    import deepnotes

    return deepnotes


def smoke():
    return dn().get_budget("smoke")


def mlp_once(kind, depth, **settings):
    """why_residuals' one MLP run, as its slider trains it: mlp_runs of one mlp_setting."""
    training = chapter("why_residuals")
    return training.mlp_runs([training.mlp_setting(kind, depth, smoke(), **settings)], context())


def context():
    """The smoke budget's RunContext, as a page's setup cell builds it (what a chapter's trainers take)."""
    return dn().RunContext.here(smoke())


def mc(**kw):
    return dn().ModelConfig(**kw)


def tc(**kw):
    return dn().TrainConfig(**kw)


def chapter(stem: str, module: str = "experiments"):
    import importlib

    return importlib.import_module(f"deepnotes.chapters.{stem}.{module}")


def train_small(model_kw: dict, train_kw: dict, task_kw: dict | None = None, objective=None):
    d = dn()
    model = d.ModelConfig(n_layers=1, d_model=8, n_heads=1, d_ff=8, **model_kw)
    task = d.MarkovLanguage(**(task_kw or {"vocab_size": 16}))
    return d.train(model, d.TrainConfig(steps=2, batch_size=2, **train_kw), task, objective=objective)


def train_many_small(**kw):
    from deepnotes.core.ensembles import train_many

    d = dn()
    return train_many([d.ModelConfig(n_layers=1, d_model=8, n_heads=1, d_ff=8)], [d.TrainConfig(steps=2)], **kw)


def _train_ensemble_small(**kw):
    from deepnotes.core.engine import build_stack
    from deepnotes.core.train import train_ensemble

    d = dn()
    stack = build_stack(d.ModelConfig(n_layers=1, d_model=8, n_heads=1, d_ff=8))
    return train_ensemble(stack, d.MarkovLanguage(vocab_size=8), d.TrainConfig(steps=2, batch_size=2), **kw)


def _train_many_two_ensembles(**kw):
    """Two shapes: two ensembles, so that workers > 1 sends them to worker processes."""
    from deepnotes.core.ensembles import train_many

    d = dn()
    cfgs = [
        d.ModelConfig(n_layers=1, d_model=8, n_heads=1, d_ff=8),
        d.ModelConfig(n_layers=2, d_model=8, n_heads=1, d_ff=8),
    ]
    return train_many(cfgs, [d.TrainConfig(steps=2)] * 2, d.MarkovLanguage(), **kw)


def _train_many_one():
    return train_many_small(tasks=dn().MarkovLanguage())


def _engine_call(name: str, batch: int):
    """One of core.blocks' stream functions on a 2-layer Stack's pieces, x [K, M = 4, d], with ``batch``."""
    import torch

    from deepnotes.core import blocks
    from deepnotes.core.engine import build_stack

    stack = build_stack(mc(n_layers=2))
    names = list(stack.block_names)
    params = [getattr(stack, n).detach() for n in names]
    x = torch.zeros(stack.n_members, 4, stack.cfg.d_model)
    if name == "compiled_forward":
        return blocks.compiled_forward(stack.styles, names, params, x, batch, keep=False)
    return blocks.run_blocks(stack.styles, names, params, x, batch)


def _reference_call(name: str, k: int, **model_kw):
    from deepnotes.core import engine

    stack = engine.build_stack(mc(n_layers=2))
    model = dn().build_model(mc(n_layers=2, **model_kw))
    return (
        engine.reference_layout(stack, model, k=k)
        if name == "reference_layout"
        else engine.load_reference(stack, k, model)
    )


def _magnitude_autograd(block: int):
    import torch

    ex = chapter("magnitude_decomposition", "probes")
    model = ex.deepnorm_model(2, 1.0, 1.0, smoke())
    return ex.lambda_gradient_by_autograd(model, torch.zeros(2, 4, dtype=torch.long), block=block)


def _linear():
    import torch

    return torch.nn.Linear(2, 2)


def _check_scaling_of(claimed_factor, computed_factor):
    """check_scaling of claimed_factor·n against computed_factor·n (sympy's nan for math.nan)."""
    import sympy as sp

    n = sp.Symbol("n")

    def factor(x):
        return sp.nan if isinstance(x, float) and math.isnan(x) else x

    return vd().check_scaling("c", "s", factor(claimed_factor) * n, factor(computed_factor) * n, n)


def _record_verdicts(budget):
    from deepnotes.ledger.record import record_verdicts

    return record_verdicts("bert_init", budget, "/nonexistent")


def _logged(call):
    import deepnotes.cost.log  # noqa: F401  (adds the work log to the training loop's observers)

    return call()


def with_env(name: str, value: str, call: Callable[[], object]):
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        return call()
    finally:
        if old is None:
            os.environ.pop(name)
        else:
            os.environ[name] = old


def render(**kw):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.set_title(str(kw))
    return fig


def widgets():
    from deepnotes.show import widgets as ui

    return ui


def plots():
    import matplotlib

    matplotlib.use("Agg")
    from deepnotes.show import plots as p

    return p


def axes():
    return plots().new_figure(1)[1][0]


def vd():
    from deepnotes.show import verdicts

    return verdicts


def data():
    from deepnotes.core import data

    return data


def check_scaling_absent():
    import sympy as sp

    n, m = sp.symbols("N M", positive=True)
    return vd().check_scaling("c", "s", n**2, 3 * n**2, m)


def scaling():
    from deepnotes.core import scaling as s

    return s


def hist(**kw):
    return dn().History(floor=1.0, unigram=2.0, **kw)


def _measure():
    from deepnotes.core import measure

    return measure


def _bert_experiments():
    from deepnotes.chapters.bert_init import experiments

    return experiments


def _increment_answer():
    from deepnotes.chapters.increment_explosion import answer

    return answer


def _loss_change_sweep():
    from deepnotes.chapters.increment_explosion import experiments

    return experiments.loss_change_sweep(context())


def _magnitude_probes():
    from deepnotes.chapters.magnitude_decomposition import probes

    return probes


def _verdicts():
    from deepnotes.show import verdicts

    return verdicts


def _torch():
    import torch

    return torch


def _tiny_cfg():
    return dn().ModelConfig(n_layers=1, d_model=8, n_heads=2, d_ff=16, vocab_size=6, max_len=8)


def _bad_log():
    import tempfile

    from deepnotes.cost.model import read_train_log

    path = Path(tempfile.mkdtemp(prefix="deepnotes-bad-")) / "work.jsonl"
    path.write_text('{"chapter": "x"}\nnot json\n', encoding="utf-8")
    return read_train_log(path)


CASES: list[Case] = [
    # ModelConfig: every field
    Case("ModelConfig(n_layers=0)", lambda: mc(n_layers=0), ("n_layers", "0")),
    Case("ModelConfig(n_layers=-3)", lambda: mc(n_layers=-3), ("n_layers", "-3")),
    Case("ModelConfig(n_layers=2.5)", lambda: mc(n_layers=2.5), ("n_layers", "2.5")),
    Case("ModelConfig(n_layers=True)", lambda: mc(n_layers=True), ("n_layers", "True")),
    Case("ModelConfig(n_layers='12')", lambda: mc(n_layers="12"), ("n_layers", "'12'")),
    Case("ModelConfig(d_model=0)", lambda: mc(d_model=0), ("d_model", "0")),
    Case("ModelConfig(n_heads=3) with d_model=32", lambda: mc(n_heads=3), ("n_heads=3",)),
    Case("ModelConfig(d_ff=0)", lambda: mc(d_ff=0), ("d_ff", "0")),
    Case("ModelConfig(vocab_size=1)", lambda: mc(vocab_size=1), ("vocab_size", "1")),
    Case("ModelConfig(norm='layer')", lambda: mc(norm="layer"), ("'layer'", "post")),
    Case("ModelConfig(norm='Post')", lambda: mc(norm="Post"), ("'Post'", "post")),
    Case("ModelConfig(norm=None)", lambda: mc(norm=None), ("norm=None", "str")),
    Case("ModelConfig(block='cnn')", lambda: mc(block="cnn"), ("'cnn'", "transformer")),
    Case("ModelConfig(activation='tanh')", lambda: mc(activation="tanh"), ("'tanh'", "gelu")),
    Case("ModelConfig(alpha=2, norm='post')", lambda: mc(alpha=2.0, norm="post"), ("alpha", "'post'")),
    Case("ModelConfig(alpha=inf, deepnorm)", lambda: mc(alpha=INF, norm="deepnorm"), ("alpha", "inf")),
    Case("ModelConfig(alpha=nan, deepnorm)", lambda: mc(alpha=NAN, norm="deepnorm"), ("alpha", "nan")),
    Case("ModelConfig(alpha=-1, deepnorm)", lambda: mc(alpha=-1.0, norm="deepnorm"), ("alpha", "-1")),
    Case("ModelConfig(beta=inf)", lambda: mc(beta=INF), ("beta", "inf")),
    Case("ModelConfig(beta=0)", lambda: mc(beta=0.0), ("beta", "0")),
    Case("ModelConfig(init_std=-0.02)", lambda: mc(init_std=-0.02), ("init_std", "-0.02")),
    Case("ModelConfig(init_std=inf)", lambda: mc(init_std=INF), ("init_std", "inf")),
    Case("ModelConfig(init_std=0.02, beta=0.5)", lambda: mc(init_std=0.02, beta=0.5), ("init_std", "beta")),
    Case("ModelConfig(causal='no')", lambda: mc(causal="no"), ("causal", "'no'")),
    Case("ModelConfig(causal=0)", lambda: mc(causal=0), ("causal", "0")),
    Case("ModelConfig(head_transform='yes')", lambda: mc(head_transform="yes"), ("head_transform", "'yes'")),
    Case("ModelConfig(max_len=0)", lambda: mc(max_len=0), ("max_len", "0")),
    # TrainConfig: every field
    Case("TrainConfig(optimizer='rmsprop')", lambda: tc(optimizer="rmsprop"), ("'rmsprop'", "adam")),
    Case("TrainConfig(optimizer='Adam')", lambda: tc(optimizer="Adam"), ("'Adam'", "adam")),
    Case("TrainConfig(lr=0)", lambda: tc(lr=0), ("lr", "0")),
    Case("TrainConfig(lr=-1e-3)", lambda: tc(lr=-1e-3), ("lr", "-0.001")),
    Case("TrainConfig(lr=inf)", lambda: tc(lr=INF), ("lr", "inf")),
    Case("TrainConfig(lr=nan)", lambda: tc(lr=NAN), ("lr", "nan")),
    Case("TrainConfig(lr='1e-3')", lambda: tc(lr="1e-3"), ("lr", "'1e-3'")),
    Case("TrainConfig(steps=0)", lambda: tc(steps=0), ("steps", "0")),
    Case("TrainConfig(steps=10.0)", lambda: tc(steps=10.0), ("steps", "10.0")),
    Case("TrainConfig(warmup_steps=-1)", lambda: tc(warmup_steps=-1), ("warmup_steps", "-1")),
    Case(
        "TrainConfig(steps=100, warmup_steps=10**9)",
        lambda: tc(steps=100, warmup_steps=10**9),
        ("warmup_steps=1000000000", "steps=100"),
    ),
    Case(
        "cost.model.ensembles(2 model configs, 3 train configs)",
        lambda: __import__("deepnotes.cost.model", fromlist=["x"]).ensembles(
            [dn().ModelConfig()] * 2, [dn().TrainConfig()] * 3
        ),
        ("2 model_cfgs for 3 train_cfgs",),
    ),
    Case("TrainConfig(batch_size=0)", lambda: tc(batch_size=0), ("batch_size", "0")),
    Case("TrainConfig(seq_len=1)", lambda: tc(seq_len=1), ("seq_len", "1")),
    Case("TrainConfig(seq_len=0)", lambda: tc(seq_len=0), ("seq_len", "0")),
    Case("TrainConfig(seed=1.5)", lambda: tc(seed=1.5), ("seed", "1.5")),
    Case("TrainConfig(betas=(0.9, 1.0))", lambda: tc(betas=(0.9, 1.0)), ("betas", "1.0")),
    # issue 33: seeds are non-negative ints below 2**62 and nothing else (no truncation, no coercion)
    Case("TrainConfig(seed=-1)", lambda: tc(seed=-1), ("seed", "-1")),
    Case("TrainConfig(seed=2**63)", lambda: tc(seed=2**63), ("seed", str(2**63))),
    Case("TrainConfig(seed=True)", lambda: tc(seed=True), ("seed", "True")),
    Case("generator(2.7)", lambda: data().generator(2.7), ("seed", "2.7")),
    Case("generator('3')", lambda: data().generator("3"), ("seed", "'3'")),
    Case("generator(-5)", lambda: data().generator(-5), ("seed", "-5")),
    Case("seeded(True)", lambda: data().seeded(True).__enter__(), ("seed", "True")),
    Case("MarkovLanguage(seed=-1)", lambda: dn().MarkovLanguage(16, seed=-1), ("seed", "-1")),
    # issue 33: trainable / frozen name parameters exactly, never by substring
    Case(
        "train_many(frozen='embed_norm_w')",
        lambda: train_many_small(tasks=dn().MarkovLanguage(), frozen="embed_norm_w"),
        ("frozen", "'embed_norm_w'"),
    ),
    Case(
        "train_many(frozen=['embd'])",
        lambda: train_many_small(tasks=dn().MarkovLanguage(), frozen=["embd"]),
        ("frozen", "'embd'", "embed"),
    ),
    Case(
        "train_many(trainable=[])",
        lambda: train_many_small(tasks=dn().MarkovLanguage(), trainable=[]),
        ("trainable", "empty"),
    ),
    Case(
        "train_many(trainable='qkv_w')",
        lambda: train_many_small(tasks=dn().MarkovLanguage(), trainable="qkv_w"),
        ("trainable", "'qkv_w'"),
    ),
    Case(
        "train(trainable=['embed_w'])",
        lambda: dn().train(mc(n_layers=1, d_model=8, n_heads=1, d_ff=8), tc(steps=2), trainable=["embed_w"]),
        ("trainable", "embed_w"),
    ),
    Case("TrainConfig(betas=(0.9,))", lambda: tc(betas=(0.9,)), ("betas", "(0.9,)")),
    # the task and its batches
    Case("MarkovLanguage(vocab_size=1)", lambda: dn().MarkovLanguage(vocab_size=1), ("vocab_size", "1")),
    Case("MarkovLanguage(vocab_size=8.0)", lambda: dn().MarkovLanguage(vocab_size=8.0), ("vocab_size", "8.0")),
    Case("MarkovLanguage(temperature=0)", lambda: dn().MarkovLanguage(temperature=0), ("temperature", "0")),
    Case("MarkovLanguage(temperature=inf)", lambda: dn().MarkovLanguage(temperature=INF), ("temperature", "inf")),
    Case("MarkovLanguage(temperature=nan)", lambda: dn().MarkovLanguage(temperature=NAN), ("temperature", "nan")),
    Case("MarkovLanguage(seed='a')", lambda: dn().MarkovLanguage(seed="a"), ("seed", "'a'")),
    Case(
        "MarkovLanguage.sample(batch_size=0)",
        lambda: dn().MarkovLanguage().sample(0, 8, __import__("torch").Generator()),
        ("batch_size", "0"),
    ),
    Case(
        "MarkovLanguage.sample(seq_len=-1)",
        lambda: dn().MarkovLanguage().sample(2, -1, __import__("torch").Generator()),
        ("seq_len", "-1"),
    ),
    Case("Masked(prob=0)", lambda: dn().Masked(0), ("probability", "0")),
    Case("Masked(prob=1.5)", lambda: dn().Masked(1.5), ("prob=1.5", "from 0 to 1")),
    Case("Masked(prob='0.15')", lambda: dn().Masked("0.15"), ("prob='0.15'", "a number")),
    Case(
        "mask_positions(seq_len=2)",
        lambda: __import__("deepnotes.core.data", fromlist=["x"]).mask_positions(
            2, 2, 0.2, __import__("torch").Generator()
        ),
        ("seq_len", "2"),
    ),
    # the training loop
    Case("train(encoder, next-token loss)", lambda: train_small({"causal": False}, {}), ("causal",)),
    Case("train(decoder, Masked)", lambda: train_small({}, {}, objective=dn().Masked(0.15)), ("encoder", "causal")),
    Case(
        "train(encoder, Masked, seq_len=2)",
        lambda: train_small({"causal": False}, {"seq_len": 2}, objective=dn().Masked(0.15)),
        ("seq_len", "2"),
    ),
    Case(
        "train(encoder, Masked, seq_len > max_len)",
        lambda: train_small({"causal": False, "max_len": 8}, {"seq_len": 16}, objective=dn().Masked(0.15)),
        ("seq_len=16", "max_len=8"),
    ),
    Case(
        "train(task with vocab 8, model with 16)",
        lambda: train_small({}, {}, {"vocab_size": 8}),
        ("vocab_size=8", "16"),
    ),
    Case("train(task='markov')", lambda: dn().train(mc(n_layers=1), tc(steps=1), "markov"), ("MarkovLanguage", "str")),
    Case("train(cfg=dict)", lambda: dn().train(mc(n_layers=1), {"steps": 1}), ("TrainConfig", "dict")),
    Case(
        "train(a model, not its config)",
        lambda: dn().train(dn().build_model(mc(n_layers=1)), tc(steps=1)),
        ("ModelConfig", "TransformerLM"),
    ),
    Case(
        "train_many(task with vocab 8)",
        lambda: train_many_small(tasks=dn().MarkovLanguage(vocab_size=8)),
        ("vocab_size=8",),
    ),
    Case("train_many(2 tasks for 1 config)", lambda: train_many_small(tasks=[dn().MarkovLanguage()] * 2), ("2 tasks",)),
    Case("build_model('post')", lambda: dn().build_model("post"), ("ModelConfig", "str")),
    Case(
        "TransformerLM.loss(token 99 of 16)",
        lambda: dn().build_model(mc(n_layers=1)).loss(__import__("torch").tensor([[1, 99]])),
        ("99", "16"),
    ),
    # budgets
    Case("get_budget('fast')", lambda: dn().get_budget("fast"), ("'fast'", "smoke")),
    Case("get_budget('CPU')", lambda: dn().get_budget("CPU"), ("'CPU'", "cpu")),
    Case("DEEPNOTES_BUDGET=huge", lambda: with_env("DEEPNOTES_BUDGET", "huge", dn().get_budget), ("'huge'", "gpu")),
    Case(
        "a chapter run with budget=5",
        lambda: chapter("thousand_layers").live_run(4, "post", budget=5),
        ("budget=5", "a Budget"),
    ),
    Case(
        "a chapter run with budget='smoke' (a name where the page's resolved Budget goes)",
        lambda: chapter("increment_explosion").slider_run(2, "post", "adam", budget="smoke"),
        ("budget='smoke'", "get_budget"),
    ),
    # scaling formulas
    Case("deepnorm_coefficients(0)", lambda: scaling().deepnorm_coefficients(0), ("0",)),
    Case("su_coefficients(10, 'rmsprop')", lambda: scaling().su_coefficients(10, "rmsprop"), ("'rmsprop'", "adam")),
    Case("magnitude_solution(0, 'sgd')", lambda: scaling().magnitude_solution(0, "sgd"), ("n_layers", "0")),
    Case("branch_weight(alpha=0)", lambda: scaling().branch_weight(0.0, 1.0), ("alpha", "0")),
    Case("branch_weight(alpha=True)", lambda: scaling().branch_weight(True, 1.0), ("alpha", "True")),
    Case("branch_weight(5e-324, 1e150)", lambda: scaling().branch_weight(5e-324, 1e150), ("overflows", "1e+150")),
    Case("branch_weight(1.0, 1e308)", lambda: scaling().branch_weight(1.0, 1e308), ("lam=1e+308", "1e150")),
    Case("linear_warmup_factor(step=-1)", lambda: scaling().linear_warmup_factor(-1, 10), ("step", "-1")),
    Case(
        "linear_warmup_factor(warmup=False)",
        lambda: scaling().linear_warmup_factor(0, False),
        ("warmup_steps", "False"),
    ),
    Case("linear_warmup_factor(warmup=2.5)", lambda: scaling().linear_warmup_factor(0, 2.5), ("warmup_steps", "2.5")),
    Case("warmup_start_lr(lr=inf)", lambda: scaling().warmup_start_lr(INF, 12), ("lr", "inf")),
    Case("paper_sublayer_coefficients(0)", lambda: scaling().paper_sublayer_coefficients(0), ("n_sublayers", "0")),
    # chapter: increment explosion
    Case(
        "increment slider_run(depth=0)",
        lambda: chapter("increment_explosion").slider_run(0, "post", "adam", budget=smoke()),
        ("0",),
    ),
    Case(
        "increment slider_run(norm='layer')",
        lambda: chapter("increment_explosion").slider_run(2, "layer", "adam", budget=smoke()),
        ("'layer'", "post"),
    ),
    Case(
        "increment slider_run(optimizer='rmsprop')",
        lambda: chapter("increment_explosion").slider_run(2, "post", "rmsprop", budget=smoke()),
        ("'rmsprop'", "adam"),
    ),
    Case(
        "increment slider_run(lr=0)",
        lambda: chapter("increment_explosion").slider_run(2, "post", "adam", lr=0, budget=smoke()),
        ("lr", "0"),
    ),
    Case(
        "increment slider_run(lr=inf)",
        lambda: chapter("increment_explosion").slider_run(2, "post", "adam", lr=INF, budget=smoke()),
        ("lr", "inf"),
    ),
    Case(
        "increment slider_run(warmup=-1)",
        lambda: chapter("increment_explosion").slider_run(2, "post", "adam", warmup=-1, budget=smoke()),
        ("warmup", "-1"),
    ),
    Case(
        "increment run(steps=0)",
        lambda: chapter("increment_explosion").run("post", 2, context(), steps=0),
        ("steps", "0"),
    ),
    Case(
        "increment slider_figure(optimizer='sgdm')",
        lambda: chapter("increment_explosion", "figures").slider_figure(2, "post", "sgdm", budget=smoke()),
        ("'sgdm'", "adam"),
    ),
    Case(
        "increment variant_config('foo')",
        lambda: chapter("increment_explosion").variant_config("foo", 2, smoke()),
        ("'foo'",),
    ),
    Case(
        "increment predicted_slope('post', 'rmsprop')",
        lambda: chapter("increment_explosion").predicted_slope("post", "rmsprop"),
        ("'rmsprop'",),
    ),
    # chapter: Post-Norm vs Pre-Norm
    Case(
        "post/pre run(steps=0)", lambda: chapter("post_vs_pre_norm").run("post", 2, context(), steps=0), ("steps", "0")
    ),
    Case(
        "post/pre run(optimizer='rmsprop')",
        lambda: chapter("post_vs_pre_norm").run("post", 2, context(), optimizer="rmsprop"),
        ("'rmsprop'", "adam"),
    ),
    Case("post/pre run(context='cpu ')", lambda: chapter("post_vs_pre_norm").run("post", 2, "cpu "), ("'cpu '",)),
    Case("RunContext.here(budget='cpu ')", lambda: dn().RunContext.here("cpu "), ("'cpu '", "get_budget")),
    Case("RunContext.here(workers=0)", lambda: dn().RunContext.here(smoke(), workers=0), ("workers", "0")),
    Case("RunContext.here(device='tpu')", lambda: dn().RunContext.here(smoke(), device="tpu"), ("'tpu'", "cpu")),
    Case(
        "post/pre stream_probe(norm='bad')",
        lambda: chapter("post_vs_pre_norm").stream_probe("bad", 2, smoke()),
        ("'bad'", "post"),
    ),
    Case(
        "post/pre stream_probe(n_layers=0)",
        lambda: chapter("post_vs_pre_norm").stream_probe("post", 0, smoke()),
        ("n_layers", "0"),
    ),
    Case(
        "post/pre stream_probe(beta=-1)",
        lambda: chapter("post_vs_pre_norm").stream_probe("post", 2, smoke(), beta=-1.0),
        ("beta", "-1"),
    ),
    Case(
        "post/pre slider_experiment(warmup=-1)",
        lambda: chapter("post_vs_pre_norm").slider_experiment(2, "post", warmup=-1, budget=smoke()),
        ("warmup", "-1"),
    ),
    Case(
        "post/pre slider_experiment(lr=0)",
        lambda: chapter("post_vs_pre_norm").slider_experiment(2, "post", lr=0, budget=smoke()),
        ("lr", "0"),
    ),
    Case("post/pre init_probes(depth=0)", lambda: chapter("post_vs_pre_norm").init_probes(smoke(), depth=0), ("0",)),
    # chapter: BERT's 0.02
    Case("bert init_probe(std=-0.02)", lambda: chapter("bert_init").init_probe(-0.02, 2, budget=smoke()), ("-0.02",)),
    Case("bert init_probe(depth=0)", lambda: chapter("bert_init").init_probe(0.02, 0, budget=smoke()), ("0",)),
    Case("bert init_probe(width=0)", lambda: chapter("bert_init").init_probe(0.02, 2, width=0, budget=smoke()), ("0",)),
    Case("bert mlm_run(std=0)", lambda: chapter("bert_init").mlm_run(0.0, context=context()), ("0",)),
    Case(
        "bert mlm_run(head_transform='yes')",
        lambda: chapter("bert_init").mlm_run(0.02, head_transform="yes", context=context()),
        ("'yes'",),
    ),
    Case("bert mlm_run(depth=0)", lambda: chapter("bert_init").mlm_run(0.02, context=context(), depth=0), ("0",)),
    Case("bert q_of(std=-1)", lambda: chapter("bert_init").q_of(-1.0), ("-1",)),
    Case("bert equivalent_std(width=0)", lambda: chapter("bert_init").equivalent_std(0.02, 0), ("0",)),
    Case("bert init_figure(std=inf)", lambda: chapter("bert_init", "figures").init_figure(INF, 2, smoke()), ("inf",)),
    # chapter: magnitude decomposition
    Case(
        "magnitude run_choices(lr=0)",
        lambda: chapter("magnitude_decomposition").run_choices(2, {"": (1.0, 1.0)}, "adam", 0.0, context()),
        ("lr", "0"),
    ),
    Case(
        "magnitude run_choices(alpha=0)",
        lambda: chapter("magnitude_decomposition").run_choices(2, {"": (0.0, 1.0)}, "adam", 1e-3, context()),
        ("alpha", "0"),
    ),
    Case(
        "magnitude run_choices(steps=0)",
        lambda: chapter("magnitude_decomposition").run_choices(2, {"": (1.0, 1.0)}, "adam", 1e-3, context(), steps=0),
        ("steps", "0"),
    ),
    Case(
        "magnitude run_choices({})",
        lambda: chapter("magnitude_decomposition").run_choices(2, {}, "adam", 1e-3, context()),
        ("picks", "empty"),
    ),
    Case(
        "magnitude run_choices(optimizer='rmsprop')",
        lambda: chapter("magnitude_decomposition").run_choices(2, {"": (1.0, 1.0)}, "rmsprop", 1e-3, context()),
        ("'rmsprop'", "adam"),
    ),
    Case(
        "magnitude lambda_gradient_sweep(n_layers=0)",
        lambda: chapter("magnitude_decomposition", "probes").lambda_gradient_sweep(smoke(), n_layers=0),
        ("0",),
    ),
    Case(
        "magnitude identity_sweep(n_layers=0)",
        lambda: chapter("magnitude_decomposition", "probes").identity_sweep(smoke(), n_layers=0),
        ("0",),
    ),
    Case("magnitude choices(0, 'sgd')", lambda: chapter("magnitude_decomposition", "probes").choices(0, "sgd"), ("0",)),
    Case(
        "magnitude slider_figure(optimizer='rmsprop')",
        lambda: chapter("magnitude_decomposition", "figures").slider_figure(2, "rmsprop", budget=smoke()),
        ("'rmsprop'", "adam"),
    ),
    Case(
        "magnitude lambda_closed_form(norm='max')",
        lambda: chapter("magnitude_decomposition", "probes").lambda_closed_form(__import__("torch").eye(3), norm="max"),
        ("'max'", "fro"),
    ),
    Case(
        "magnitude xavier_orthogonality(d=0, budget=smoke())",
        lambda: chapter("magnitude_decomposition", "probes").xavier_orthogonality(d=0, budget=smoke()),
        ("0",),
    ),
    # chapter: training 1000 layers
    Case("thousand live_run(depth=0)", lambda: chapter("thousand_layers").live_run(0, "post", smoke()), ("0",)),
    Case(
        "thousand live_run(variant='layer')",
        lambda: chapter("thousand_layers").live_run(4, "layer", smoke()),
        ("'layer'", "post, warmup"),
    ),
    Case(
        "thousand variant_train_config(lr=-1)",
        lambda: chapter("thousand_layers").variant_train_config("post", 4, dn().get_budget("smoke"), lr=-1.0),
        ("lr", "-1"),
    ),
    Case("thousand variant('foo')", lambda: chapter("thousand_layers").variant("foo"), ("'foo'",)),
    # chapter: why residuals
    Case("why mlp_run(depth=0)", lambda: mlp_once("plain", 0), ("0",)),
    Case(
        "why mlp_run(kind='wide')",
        lambda: mlp_once("wide", 4),
        ("'wide'",),
    ),
    Case(
        "why mlp_run(steps=0)",
        lambda: mlp_once("plain", 4, steps=0),
        ("steps", "0"),
    ),
    Case(
        "why mlp_run(lr=0)",
        lambda: mlp_once("plain", 4, lr=0),
        ("lr", "0"),
    ),
    Case(
        "why mlp_run(optimizer='rmsprop')",
        lambda: mlp_once("plain", 4, optimizer="rmsprop"),
        ("'rmsprop'",),
    ),
    Case(
        "why mlp_run(width=0)",
        lambda: mlp_once("plain", 4, width=0),
        ("width", "0"),
    ),
    Case(
        "why jacobian_growth(width=0)",
        lambda: chapter("why_residuals", "probes").jacobian_growth("plain", 0, 4, batch=4),
        ("width", "0"),
    ),
    Case(
        "why jacobian_growth(depth=0)",
        lambda: chapter("why_residuals", "probes").jacobian_growth("plain", 4, 0, batch=4),
        ("depth", "0"),
    ),
    Case(
        "why eps_for_depth(depth=0)", lambda: chapter("why_residuals", "probes").eps_for_depth(0.5, 0), ("depth", "0")
    ),
    Case(
        "why slider_figure(width=0)",
        lambda: chapter("why_residuals", "figures").slider_figure(4, 0, 0.5, smoke()),
        ("width", "0"),
    ),
    # chapter: initialization
    Case(
        "init moment_curve(gain=-1)",
        lambda: chapter("initialization").moment_curve("tanh", -1.0, 4, smoke()),
        ("gain", "-1"),
    ),
    Case(
        "init moment_curve(act='swish')",
        lambda: chapter("initialization").moment_curve("swish", 1.0, 4, smoke()),
        ("'swish'",),
    ),
    Case(
        "init moment_curve(depth=0)",
        lambda: chapter("initialization").moment_curve("tanh", 1.0, 0, smoke()),
        ("depth", "0"),
    ),
    Case("init softmax_probe(d=0)", lambda: chapter("initialization").softmax_probe(0, True), ("d", "0")),
    # issue 47: values of the right type in the wrong domain, refused at the door by their annotated domain
    Case(
        "why predicted_log_growth(depth=-3)",
        lambda: chapter("why_residuals", "probes").predicted_log_growth("plain", -3),
        ("depth=-3", "from 1"),
    ),
    Case(
        "why predicted_total_gradient(batch=0)",
        lambda: chapter("why_residuals", "probes").predicted_total_gradient(0.5, 4, 4, batch=0),
        ("batch=0", "from 1"),
    ),
    Case(
        "why layer_gradients(batch=0)",
        lambda: chapter("why_residuals", "probes").layer_gradients("plain", 4, 4, batch=0),
        ("batch=0", "from 1"),
    ),
    Case(
        "why token_cosines(width=-1)",
        lambda: chapter("why_residuals").token_cosines("plain", 4, smoke(), width=-1),
        ("width=-1", "from 1"),
    ),
    Case(
        "bert identity_weight(layers=-3)",
        lambda: chapter("bert_init").identity_weight(0.02, 1.0, layers=-3),
        ("layers=-3", "from 0"),
    ),
    Case(
        "init predicted_second_moments(gain=-2.0)",
        lambda: chapter("initialization", "mlp").predicted_second_moments("relu", -2.0, 3),
        ("gain=-2.0", "above 0"),
    ),
    Case(
        "init weight_variance(fan_in=0)",
        lambda: chapter("initialization", "mlp").weight_variance("he", 0, 4),
        ("fan_in=0", "from 1"),
    ),
    Case(
        "init softmax_probe(n_keys=0)",
        lambda: chapter("initialization").softmax_probe(8, True, n_keys=0),
        ("n_keys=0", "from 1"),
    ),
    Case(
        "init attention_row(n_keys=-1)",
        lambda: chapter("initialization").attention_row(8, True, n_keys=-1),
        ("n_keys=-1", "from 1"),
    ),
    Case(
        "magnitude predicted_relative_update(lam=-2.0)",
        lambda: chapter("magnitude_decomposition", "probes").predicted_relative_update("adam", 1.0, -2.0),
        ("lam=-2.0", "above 0"),
    ),
    Case(
        "magnitude predicted_relative_update('sgd', alpha=0.0)",
        lambda: chapter("magnitude_decomposition", "probes").predicted_relative_update("sgd", 0.0, 1.0),
        ("alpha=0.0", "above 0"),
    ),
    Case(
        "cost Rates(flops_per_second=0)",
        lambda: __import__("deepnotes.cost.estimate", fromlist=["Rates"]).Rates("x", 0, 1e-6, "y"),
        ("flops_per_second=0", "above 0"),
    ),
    Case(
        "cost format_seconds(-5)",
        lambda: __import__("deepnotes.cost.estimate", fromlist=["format_seconds"]).format_seconds(-5),
        ("seconds=-5", "from 0"),
    ),
    # issue 47, second slice: memory before every allocation, named as the reader typed it
    Case(
        "init softmax_probe(d=10**9)",
        lambda: chapter("initialization").softmax_probe(10**9, True),
        ("d=1000000000", "GiB"),
    ),
    Case(
        "magnitude xavier_orthogonality(d=10**6)",
        lambda: chapter("magnitude_decomposition", "probes").xavier_orthogonality(10**6, budget=smoke()),
        ("d=1000000", "GiB"),
    ),
    Case(
        "why jacobian_growth(width=10**9)",
        lambda: chapter("why_residuals", "probes").jacobian_growth("plain", 10**9, 4, batch=4),
        ("width=1000000000", "GiB"),
    ),
    Case(
        "MarkovLanguage.sample(batch_size=2**40)",
        lambda: dn().MarkovLanguage().sample(2**40, 16, __import__("torch").Generator()),
        ("batch_size=1099511627776", "GiB"),
    ),
    Case(
        "cost MLPPasses(width=10**6).count()",  # the 10**5 needs 80 GB: refused on a machine with less
        lambda: __import__("deepnotes.cost.model", fromlist=["MLPPasses"]).MLPPasses(10**6, 2, 4).count(),
        ("width=1000000", "GiB"),
    ),
    Case(
        "init moment_curve(depth=10**9)",
        lambda: chapter("initialization").moment_curve("relu", 2.0, 10**9, smoke()),
        ("depth=1000000000", "1,000,000"),
    ),
    Case(
        "bert init_probe(depth=10**5): the training check names depth",
        lambda: chapter("bert_init").init_probe(0.02, 10**5, 2**16, budget=smoke()),
        ("depth", "width", "GiB"),
    ),
    # live panels run at most what their slider offers
    Case(
        "increment slider_run(depth=10**5)",
        lambda: chapter("increment_explosion").slider_run(10**5, "post", "adam", budget=smoke()),
        ("depth=100000", "live panel", "1 to 256"),
    ),
    Case(
        "why slider_figure(depth=10**9)",
        lambda: chapter("why_residuals", "figures").slider_figure(10**9, 64, 0.5, smoke()),
        ("depth=1000000000", "1,000,000"),
    ),
    Case(
        "why slider_figure(depth=5000)",
        lambda: chapter("why_residuals", "figures").slider_figure(5000, 64, 0.5, smoke()),
        ("depth=5000", "live panel", "1 to 1000"),
    ),
    Case(
        "why slider_figure(width=4096)",
        lambda: chapter("why_residuals", "figures").slider_figure(10, 4096, 0.5, smoke()),
        ("width=4096", "live panel", "1 to 512"),
    ),
    # issue 47, third slice: what the sweep found once it reached every callable (builders for runs, records, pieces)
    Case(
        "compiled_forward(batch that does not divide the rows)",  # was a SIGFPE: the kernel divided by M // batch = 0
        lambda: _engine_call("compiled_forward", 2**40),
        ("batch=1099511627776", "M = B·T"),
    ),
    Case("run_blocks(batch=3, rows 4)", lambda: _engine_call("run_blocks", 3), ("batch=3", "M = B·T")),
    Case(
        "reference_layout(k=2**40)",
        lambda: _reference_call("reference_layout", 2**40),
        ("k=1099511627776", "1 member"),
    ),
    Case(
        "load_reference(a model of other sizes)",
        lambda: _reference_call("load_reference", 0, d_model=64),
        ("shape", "member k=0", "sizes"),
    ),
    Case(
        "magnitude lambda_gradient_by_autograd(block=2**40)",
        lambda: _magnitude_autograd(2**40),
        ("block=1099511627776", "2 (0 to 1)"),
    ),
    Case(
        "thousand Runs.at(a depth it did not train)",
        lambda: chapter("thousand_layers").Runs({("post", 3, 0.5): []}, 10, 0.5, {}, {}).at("post", 2),
        ("depth=2", "'post'", "(3, 0.5)"),
    ),
    Case(
        "thousand deepest_learning(threshold=-2)",
        lambda: chapter("thousand_layers").deepest_learning({2: 0.5}, -2.0),
        ("threshold", "-2.0"),
    ),
    Case("Residual(norm='layer')", lambda: dn().Residual(_linear(), 2, "layer"), ("'layer'", "post")),
    Case("Residual(d_model=2**40)", lambda: dn().Residual(_linear(), 2**40, "post"), ("d_model=1099511627776", "GiB")),
    Case(
        "check_allocation(numbers=10**400)",  # was an OverflowError formatting the GiB
        lambda: __import__("deepnotes.core.config", fromlist=["x"]).check_allocation(10**400, {"width": 2}),
        ("width=2", "e+391 GiB"),
    ),
    Case(
        "check_allocation(numbers=-3)",
        lambda: __import__("deepnotes.core.config", fromlist=["x"]).check_allocation(-3, {"width": 2}),
        ("numbers", "-3"),
    ),
    Case(
        "progress(total='3')",
        lambda: __import__("deepnotes.core.train", fromlist=["x"]).progress([1], total="3"),
        ("total", "'3'"),
    ),
    Case(
        "float_slider(step wider than the range)",
        lambda: __import__("deepnotes.show.widgets", fromlist=["x"]).float_slider("x", (0.0, 0.5, 1.0), 2.0),
        ("step=2", "0 to 1"),
    ),
    Case(
        "check_slope(samples_by_depth=3)",
        lambda: vd().check_slope(
            claim="c", source="s", want=1.0, atol=0.1, depths=[2, 4], samples_by_depth=3, reason=""
        ),
        ("samples_by_depth", "3"),
    ),
    # figures and estimates that refuse nonsense
    Case("History().final_loss()", lambda: dn().History().final_loss(), ("no losses",)),
    Case(
        "History.fraction_learned() with floor = plateau",
        lambda: dn().History(losses=[2.0], floor=1.0, unigram=1.0).fraction_learned(),
        ("floor=1.0", "unigram=1.0"),
    ),
    Case("loss_curves(runs={})", lambda: plots().loss_curves(axes(), {}), ("runs is empty",)),
    Case(
        "loss_curves(an empty History)",
        lambda: plots().loss_curves(axes(), {"a": dn().History()}),
        ("runs['a']", "no losses"),
    ),
    Case(
        "loss_curves(NaN in a run not marked diverged)",
        lambda: plots().loss_curves(axes(), {"a": hist(losses=[2.0, math.nan, 1.0])}),
        ("runs['a']", "step 1", "not marked diverged"),
    ),
    Case(
        "update_curves(inf in a run not marked diverged)",
        lambda: plots().update_curves(axes(), {"a": hist(losses=[2.0, 1.0], update_rms=[0.1, math.inf])}),
        ("runs['a']", "not marked diverged"),
    ),
    Case(
        "loglog_sweep(depths=[0, 1, 2])",
        lambda: plots().loglog_sweep(axes(), [0, 1, 2], {"a": [1.0, 2.0, 3.0]}),
        ("depths", "[0, 1, 2]"),
    ),
    Case(
        "chapter_estimate(chapter='nope')",
        lambda: __import__("deepnotes.chapters.catalog", fromlist=["chapter_estimate"]).chapter_estimate("nope"),
        ("chapter", "'nope'"),
    ),
    Case("check_scaling(claimed=0)", lambda: _check_scaling_of(0, 1), ("claimed", "non-zero")),
    Case("check_scaling(computed=nan)", lambda: _check_scaling_of(1, math.nan), ("computed",)),
    Case(
        "record_verdicts(budget='no-such-budget')",
        lambda: _record_verdicts("no-such-budget"),
        ("budget", "'no-such-budget'", "smoke"),
    ),
    Case(
        "magnitude predicted_relative_update(alpha=10**400)",
        lambda: chapter("magnitude_decomposition", "probes").predicted_relative_update("adam", 10**400, 1.0),
        ("alpha",),
    ),
    Case(
        "check_true(ok=np.array([True, False]))",
        lambda: vd().check_true(
            claim="c", source="s", claimed="a", computed="b", ok=__import__("numpy").array([True, False]), reason="r"
        ),
        ("ok", "one truth value"),
    ),  # fmt: skip
    Case(
        "train_ensemble(trainable='qkv_w')",
        lambda: _train_ensemble_small(trainable="qkv_w"),
        ("trainable", "collection of parameter names"),
    ),
    Case(
        "train_ensemble(objective='masked')",
        lambda: _train_ensemble_small(objective="masked"),
        ("objective", "'masked'"),
    ),
    Case(
        "train_many(an unpicklable tracker factory, workers=2)",
        lambda: _train_many_two_ensembles(trackers=lambda: (), workers=2),
        ("trackers", "picklable"),
    ),
    Case(
        "train_many with DEEPNOTES_WORK_LOG a folder",
        lambda: _logged(lambda: with_env("DEEPNOTES_WORK_LOG", "/tmp", _train_many_one)),
        ("DEEPNOTES_WORK_LOG", "'/tmp'", "folder"),
    ),
    Case(
        "train_many with DEEPNOTES_WORK_LOG in a missing folder",
        lambda: _logged(lambda: with_env("DEEPNOTES_WORK_LOG", "/nonexistent/log.jsonl", _train_many_one)),
        ("DEEPNOTES_WORK_LOG", "does not exist"),
    ),
    Case(
        "init relative_updates(width=0)",
        lambda: chapter("initialization").relative_updates(True, 0, 2, 3, 0.1, 4),
        ("width", "0"),
    ),
    Case(
        "init relative_updates(lr=0)",
        lambda: chapter("initialization").relative_updates(True, 8, 2, 3, 0.0, 4),
        ("lr", "0"),
    ),
    Case(
        "init truncation_samples(std=0)",
        lambda: chapter("initialization").truncation_samples(smoke(), std=0.0),
        ("std", "0"),
    ),
    # sliders and live panels
    Case("slider_control(grid={})", lambda: widgets().slider_control(render, {}), ("{}",)),
    Case("slider_control(grid={'a': 'abc'})", lambda: widgets().slider_control(render, {"a": "abc"}), ("'abc'",)),
    Case("slider_control(grid={'a': 3})", lambda: widgets().slider_control(render, {"a": 3}), ("3",)),
    Case("slider_control(grid=[1, 2])", lambda: widgets().slider_control(render, [1, 2]), ("[1, 2]",)),
    Case("slider_control(grid={'a': []})", lambda: widgets().slider_control(render, {"a": []}), ("'a'",)),
    Case("int_slider(span=(5, 1, 3))", lambda: widgets().int_slider("x", (5, 1, 3)), ("(5, 1, 3)",)),
    Case("log_slider(span=(0, 1, 10))", lambda: widgets().log_slider("x", (0, 1, 10)), ("(0, 1, 10)",)),
    Case("float_slider(step=0)", lambda: widgets().float_slider("x", (0.0, 0.5, 1.0), 0.0), ("step", "0")),
    Case("dropdown(options=())", lambda: widgets().dropdown("x", ()), ("options", "()")),
    Case("dropdown(value not offered)", lambda: widgets().dropdown("x", ("a", "b"), "c"), ("'c'", "'a'")),
    Case("offered_values(Text)", lambda: widgets().offered_values(__import__("ipywidgets").Text()), ("Text",)),
    Case("LRU(size=0)", lambda: __import__("deepnotes.show.cache", fromlist=["x"]).LRU(0), ("0",)),
    # verdicts
    Case("check_number(computed=nan)", lambda: vd().check_number("c", "s", 1.0, NAN), ("nan",)),
    Case("check_number(claimed=inf)", lambda: vd().check_number("c", "s", INF, 1.0), ("inf",)),
    Case("check_number(rtol=nan)", lambda: vd().check_number("c", "s", 1.0, 1.0, rtol=NAN), ("rtol", "nan")),
    Case("check_number(rtol=-0.1)", lambda: vd().check_number("c", "s", 1.0, 1.0, rtol=-0.1), ("rtol", "-0.1")),
    Case(
        "check_number(rtol > approx_rtol)",
        lambda: vd().check_number("c", "s", 1.0, 1.1, rtol=0.5, approx_rtol=0.2),
        ("rtol", "0.5", "approx_rtol", "0.2"),
    ),
    Case("check_scaling(var not in the expressions)", lambda: check_scaling_absent(), ("var", "M", "N")),
    Case("check_number(claimed='1.0')", lambda: vd().check_number("c", "s", "1.0", 1.0), ("'1.0'",)),
    Case(
        "check_true(ok='yes')",
        lambda: vd().check_true(claim="c", source="s", claimed="", computed="", ok="yes", reason=""),
        ("'yes'",),
    ),
    Case(
        "check_graded(holds='no')",
        lambda: vd().check_graded(claim="c", source="s", claimed="", computed="", holds="no", approx=False, reason=""),
        ("'no'",),
    ),
    # plots
    Case("new_figure(panels=0)", lambda: plots().new_figure(0), ("panels", "0")),
    Case("new_figure(width=9)", lambda: plots().new_figure(2, width=9.0), ("width", "9.0", "6.0")),
    Case("loss_curves(runs={'a': 'x'})", lambda: plots().loss_curves(axes(), {"a": "x"}), ("History", "str")),
    Case(
        "loglog_sweep(3 depths, 2 values)",
        lambda: plots().loglog_sweep(axes(), [1, 2, 3], {"a": [1.0, 2.0]}),
        ("3", "2"),
    ),
    Case("History.steps_to(window=0)", lambda: hist(losses=[2.0, 1.0]).steps_to(0.5, window=0), ("window", "0")),
    Case(
        "History.fraction_learned(window=0)",
        lambda: hist(losses=[2.0, 1.0]).fraction_learned(window=0),
        ("window", "0"),
    ),
    # issue 64, fourth pass: each class closed where it starts
    Case(
        "every_for(steps=True, points=2) (a bool as a count)", lambda: _measure().every_for(True, 2), ("steps", "True")
    ),
    Case(
        "bert_init cached_probe(std=[0.02]) (unhashable, behind a cache)",
        lambda: _bert_experiments().cached_probe([0.02], 2, 8, smoke()),
        ("std", "[0.02]"),
    ),
    Case(
        "increment explosion slope(sweep, 'post', 'lamb') (an optimizer the sweep did not probe)",
        lambda: _increment_answer().slope(_loss_change_sweep(), "post", "lamb"),
        ("'lamb'", "sgd, adam"),
    ),
    Case(
        "TransformerLM(tokens past the vocabulary) (the forward pass, not only the loss)",
        lambda: dn().build_model(_tiny_cfg())(_torch().full((2, 4), 9)),
        ("[0, 6)", "9"),
    ),
    Case(
        "magnitude decomposition lambda_closed_form(zero matrix)",
        lambda: _magnitude_probes().lambda_closed_form(_torch().zeros(3, 4)),
        ("zero matrix", "(3, 4)"),
    ),
    Case(
        "Verdict(status='maybe')",
        lambda: _verdicts().Verdict("c", "s", "1", "1", "maybe", "r"),
        ("'maybe'", "holds approximately"),
    ),
    Case("read_train_log(a line that is not JSON)", lambda: _bad_log(), ("line 2", "not json")),
]


def _bad_files() -> Path:
    """A folder of files a tool may be handed by mistake: a verdict record that is not JSON, one without its
    fields, a notebook that is not JSON and one whose cell raises."""
    import json
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="deepnotes-bad-"))
    (folder / "corrupt").mkdir()
    (folder / "corrupt" / "bert_init.json").write_text("{not json", encoding="utf-8")
    (folder / "fieldless").mkdir()
    (folder / "fieldless" / "bert_init.json").write_text('{"chapter": "bert_init"}', encoding="utf-8")
    (folder / "not_json.ipynb").write_text("this is not a notebook", encoding="utf-8")
    raising = {
        "cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                   "source": "raise RuntimeError('a cell that raises')"}],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }  # fmt: skip
    (folder / "raises.ipynb").write_text(json.dumps(raising), encoding="utf-8")
    return folder


BAD = _bad_files()

TOOLS: list[Tool] = [
    # issue 47: failures after the arguments were read are one line naming the file, exit 2, no traceback
    Tool("tools/ledger_check.py --chapter ''", ("ledger_check.py", "--chapter", ""), ("''",)),
    Tool(
        "tools/ledger_check.py on a corrupt record",
        ("ledger_check.py", str(BAD / "corrupt")),
        ("bert_init.json", "not valid JSON"),
        one_line=True,
    ),
    Tool(
        "tools/ledger_check.py on a record without its fields",
        ("ledger_check.py", str(BAD / "fieldless")),
        ("bert_init.json", "not a verdict record"),
        one_line=True,
    ),
    Tool(
        "tools/store_checked_outputs.py on a notebook that is not JSON",
        ("store_checked_outputs.py", str(BAD / "not_json.ipynb")),
        ("not_json.ipynb",),
        one_line=True,
    ),
    Tool(
        "tools/store_checked_outputs.py on a notebook whose cell raises",
        ("store_checked_outputs.py", str(BAD / "raises.ipynb")),
        ("raises.ipynb", "RuntimeError", "a cell that raises"),
        one_line=True,
    ),
    Tool(
        "tools/run_chapter.py on a notebook that is not JSON",
        ("run_chapter.py", str(BAD / "not_json.ipynb"), str(BAD / "out.ipynb")),
        ("not_json.ipynb",),
        one_line=True,
    ),
    Tool("tools/run_chapter.py (no arguments)", ("run_chapter.py",), ("chapter",)),
    # issue 60: the CPU a run acts as
    Tool("tools/as_cpu.py pentium4", ("as_cpu.py", "pentium4"), ("'pentium4'", "avx2", "default")),
    # issue 48: the release build at a budget
    Tool("tools/build_book.py (no --out)", ("build_book.py",), ("--out",)),
    Tool(
        "tools/build_book.py --budget nope",
        ("build_book.py", "--budget", "nope", "--out", str(BAD / "book")),
        ("'nope'", "smoke", "cpu"),
        one_line=True,
    ),
    Tool(
        "tools/build_book.py --out a file",
        ("build_book.py", "--out", str(BAD / "not_json.ipynb")),
        ("not_json.ipynb", "is a file"),
        one_line=True,
    ),
    Tool(
        "tools/run_chapter.py book/missing.ipynb",
        ("run_chapter.py", "book/missing.ipynb", "/tmp/out.ipynb"),
        ("book/missing.ipynb",),
    ),
    # refused before the notebook runs (issue 33: each of these executed the whole chapter, then failed)
    Tool(
        "tools/run_chapter.py into a missing folder",
        ("run_chapter.py", "book/bert_init.ipynb", "/nonexistent/bert.ipynb"),
        ("/nonexistent", "does not exist"),
    ),
    Tool(
        "tools/run_chapter.py --check-plan on the intro",
        ("run_chapter.py", "book/intro.ipynb", "/tmp/intro.ipynb", "--check-plan"),
        ("'intro'", "no plan", "bert_init"),
    ),
    Tool(
        "tools/run_chapter.py over the chapter itself",
        ("run_chapter.py", "book/bert_init.ipynb", "book/bert_init.ipynb"),
        ("the chapter itself",),
    ),
    Tool(
        "tools/run_chapter.py with DEEPNOTES_BUDGET=big",
        ("run_chapter.py", "book/bert_init.ipynb", "/tmp/bert.ipynb"),
        ("'big'", "smoke"),
        env=(("DEEPNOTES_BUDGET", "big"),),
    ),
    Tool(
        "tools/run_chapter.py --scheduler host",
        ("run_chapter.py", "book/bert_init.ipynb", "/tmp/bert.ipynb", "--scheduler", "host"),
        ("--scheduler", "'host'", "tcp://host:8786"),
    ),
    Tool("tools/estimate_costs.py --items -3", ("estimate_costs.py", "--items", "-3"), ("--items", "'-3'")),
    Tool("tools/offline_widgets.py --force", ("offline_widgets.py", "--force"), ("--force",)),
    Tool("tools/store_checked_outputs.py (no arguments)", ("store_checked_outputs.py",), ("chapters",)),
    Tool("tools/store_checked_outputs.py README.md", ("store_checked_outputs.py", "README.md"), ("README.md",)),
    Tool("tools/ledger_check.py --chapter nope", ("ledger_check.py", "--chapter", "nope"), ("'nope'",)),
    Tool("tools/ledger_check.py --unchecked 999", ("ledger_check.py", "--unchecked", "999"), ("'999'",)),
]


# ---- classification -----------------------------------------------------------------------------------


def _innermost_file(err: BaseException) -> str:
    frames = traceback.extract_tb(err.__traceback__)
    return frames[-1].filename if frames else ""


class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang()


def classify(case: Case) -> tuple[str, str]:
    """('clear' | 'silent' | 'unclear' | 'hang', what happened)."""
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(HANG_SECONDS)
    try:
        result = case.call()
    except _Hang:
        return "hang", f"no answer in {HANG_SECONDS} s"
    except (ValueError, TypeError) as err:
        where, message = _innermost_file(err), str(err)
        if not where.startswith(OURS):
            return "unclear", f"{type(err).__name__} raised in {where}: {message}"
        missing = [s for s in case.shows if s not in message]
        if missing:
            return "unclear", f"message lacks {missing}: {message}"
        return "clear", message
    except Exception as err:  # noqa: BLE001
        return "unclear", f"{type(err).__name__} in {_innermost_file(err)}: {err}"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        import matplotlib.pyplot as plt

        plt.close("all")
    return "silent", f"returned {type(result).__name__}"


def classify_tool(tool: Tool) -> tuple[str, str]:
    script, *args = tool.argv
    try:
        proc = subprocess.run(
            [sys.executable, str(ROOT / "tools" / script), *args],
            env={**os.environ, **dict(tool.env)},
            capture_output=True,
            text=True,
            timeout=HANG_SECONDS,
            cwd=ROOT,
        )
    except subprocess.TimeoutExpired:
        return "hang", f"no answer in {HANG_SECONDS} s"
    if proc.returncode == 0:
        return "silent", "exit status 0"
    if proc.returncode != 2 or "Traceback" in proc.stderr:
        return "unclear", f"exit status {proc.returncode}: {proc.stderr[-300:]}"
    missing = [s for s in tool.shows if s not in proc.stderr]
    if missing:
        return "unclear", f"message lacks {missing}: {proc.stderr[-300:]}"
    lines = proc.stderr.strip().splitlines()
    ours = [line for line in lines if line.startswith(f"{script}: ")]  # (a kernel's own warnings may come first)
    if tool.one_line and (len(ours) != 1 or lines[-1] != ours[0]):
        return "unclear", f"not one closing line from {script}: {proc.stderr[-300:]}"
    return "clear", lines[-1]


@pytest.fixture(autouse=True)
def _smoke(monkeypatch):
    monkeypatch.setenv("DEEPNOTES_BUDGET", "smoke")


def test_the_table_tries_at_least_a_hundred_bad_inputs():
    assert len(CASES) + len(TOOLS) >= 100
    assert len({c.entry for c in CASES} | {t.entry for t in TOOLS}) == len(CASES) + len(TOOLS)


@pytest.mark.parametrize("case", CASES, ids=[c.entry for c in CASES])
def test_bad_input_gets_a_clear_error(case):
    outcome, detail = classify(case)
    assert outcome == "clear", detail


def test_a_log_axis_says_how_many_values_it_dropped():
    """Issue 47: a value ≤ 0 or not finite cannot sit on a log axis; the figure says how many it left out."""
    ax = axes()
    plots().moment_curves(ax, {"relu": ([1.0, 0.0, 0.5], [1.0, 0.7, -1.0])})
    assert "2 values ≤ 0 or not finite not drawn" in ax.get_xlabel()
    ax = axes()
    plots().loglog_sweep(ax, [1, 2, 4], {"a": [1.0, 2.0, math.nan], "b": [1.0, None, 3.0]})
    assert "1 value ≤ 0 or not finite not drawn" in ax.get_xlabel()  # None: not measured there, not dropped
    ax = axes()
    plots().loglog_sweep(ax, [1, 2, 4], {"a": [1.0, 2.0, 4.0]})
    assert "not drawn" not in ax.get_xlabel()


def test_a_figure_that_can_draw_nothing_says_so_and_keys_no_undrawn_line():
    """Issue 64: an empty panel says it draws nothing and why; a series with nothing to draw is named under the axis
    and gets no legend entry (a key entry for a line that is not there reads as a line hidden behind another)."""
    ax = axes()
    plots().moment_curves(ax, {})
    assert [t.get_text() for t in ax.texts] == ["nothing to draw:\nno series given"]
    ax = axes()
    plots().moment_curves(ax, {"relu": ([1.0, 0.5], [math.nan, math.nan]), "tanh": ([0.0, -1.0], [1.0, 0.5])})
    keyed = [t.get_text() for t in ax.get_legend().get_texts()]
    assert keyed == ["relu measured", "tanh derivation"], keyed
    assert "(not drawn, no positive finite value: relu derivation, tanh measured)" in ax.get_xlabel()
    ax = axes()
    plots().moment_curves(ax, {"relu": ([math.nan], [0.0])})
    assert ax.get_legend() is None and "nothing to draw" in ax.texts[0].get_text()
    ax = axes()
    assert plots().loglog_sweep(ax, [1, 2, 4], {"a": [1.0, 2.0, 4.0], "b": [1.0, math.nan, -1.0]}) == {"a": 1.0}
    assert "(not drawn, fewer than 2 values to draw: b)" in ax.get_xlabel() and not ax.texts
    ax = axes()
    assert plots().loglog_sweep(ax, [1, 2], {}) == {}
    assert "nothing to draw:\nno series given" == ax.texts[0].get_text() and ax.get_legend() is None
    ax = axes()
    plots().loglog_sweep(ax, [1, 2], {"a": [math.inf, 1.0]})
    assert "no series has two positive finite values" in ax.texts[0].get_text()


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="this machine has a CUDA GPU: 'cuda' is valid")
@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="a machine with a GPU has the device")
def test_a_cuda_device_without_a_gpu_is_refused_by_name():
    with pytest.raises(ValueError, match="device 'cuda' was asked for, but this machine has no CUDA GPU"):
        chapter("initialization").forward_second_moments("relu", 2.0, 2, 4, 4, device="cuda")
    with pytest.raises(ValueError, match="device 'cuda' was asked for, but this machine has no CUDA GPU"):
        dn().build_model(_tiny_cfg(), device="cuda")  # issue 64: not torch's AssertionError


@pytest.mark.parametrize("tool", TOOLS, ids=[t.entry for t in TOOLS])
def test_a_tool_given_bad_arguments_prints_its_usage(tool):
    outcome, detail = classify_tool(tool)
    assert outcome == "clear", detail


def sweep() -> Counter:
    os.environ["DEEPNOTES_BUDGET"] = "smoke"
    counts = Counter()
    for item in CASES + TOOLS:
        outcome, detail = classify(item) if isinstance(item, Case) else classify_tool(item)
        counts[outcome] += 1
        if outcome != "clear":
            print(f"{outcome:8s} {item.entry}\n         {detail[:300]}")
    tried = sum(counts.values())
    print(
        f"\ntried {tried} / clear {counts['clear']} / silent {counts['silent']} / unclear {counts['unclear']} "
        f"/ hangs {counts['hang']}"
    )
    return counts


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(0 if set(sweep()) <= {"clear"} else 1)
