import pytest
import torch

import deepnotes as dn
from deepnotes.chapters.increment_explosion.budget import sizes as increment_explosion_sizes
from deepnotes.core import scaling as scaling
from deepnotes.errors import BadArgument


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        (dict(n_layers=0), "n_layers"),
        (dict(n_layers=-3), "n_layers"),
        (dict(norm="postnorm"), "allowed: post, pre, deepnorm, none, rezero"),
        (dict(block="cnn"), "allowed: transformer, mlp"),
        (dict(beta=-0.1), "beta"),
        (dict(norm="post", alpha=2.0), "alpha"),
        (dict(norm="deepnorm", alpha=0.0), "alpha"),
        (dict(d_model=30, n_heads=4), "divisible"),
    ],
)
def test_invalid_model_config_raises_naming_the_value(kwargs, fragment):
    with pytest.raises(ValueError, match=fragment):
        dn.ModelConfig(**kwargs)


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        (dict(optimizer="rmsprop"), "allowed: sgd, adam, lamb"),
        (dict(lr=-1e-3), "lr"),
        (dict(lr=0), "lr"),
        (dict(steps=0), "steps"),
        (dict(warmup_steps=-1), "warmup_steps"),
    ],
)
def test_invalid_train_config_raises(kwargs, fragment):
    with pytest.raises(ValueError, match=fragment):
        dn.TrainConfig(**kwargs)


def test_deepnorm_defaults_to_paper_constants_and_others_to_one():
    cfg = dn.ModelConfig(n_layers=50, norm="deepnorm")
    assert cfg.skip_alpha == pytest.approx(100**0.25)
    assert cfg.branch_beta == pytest.approx(400**-0.25)
    post = dn.ModelConfig(n_layers=50, norm="post")
    assert (post.skip_alpha, post.branch_beta) == (1.0, 1.0)


def test_budget_names(monkeypatch):
    assert dn.get_budget("cpu").name == "cpu"
    with pytest.raises(ValueError, match="'huge'.*allowed: cpu, full, gpu, smoke"):
        dn.get_budget("huge")
    monkeypatch.setenv("DEEPNOTES_BUDGET", "tiny")
    with pytest.raises(ValueError, match="tiny"):
        dn.get_budget()
    monkeypatch.delenv("DEEPNOTES_BUDGET")
    assert dn.get_budget().name == ("gpu" if torch.cuda.is_available() else "cpu")


def test_cpu_budget_spans_two_orders_of_magnitude_of_depth():
    depths = increment_explosion_sizes(dn.get_budget("cpu")).probe_depths
    assert max(depths) / min(depths) >= 100


def test_scaling_rejects_bad_depth_and_optimizer():
    with pytest.raises(ValueError, match="n_layers=0"):
        scaling.deepnorm_coefficients(0)
    with pytest.raises(ValueError, match="allowed: sgd, adam, lamb"):
        scaling.su_coefficients(10, "adagrad")
    with pytest.raises(ValueError, match="allowed: encoder, decoder, encoder-decoder"):
        scaling.deepnorm_coefficients(6, "seq2seq")


def test_import_is_light():
    import subprocess
    import sys

    code = "import sys, deepnotes; print('matplotlib' in sys.modules, 'ipywidgets' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_every_budget_row_is_named_by_its_key():
    assert all(b.name == name for name, b in dn.BUDGETS.items())
    full, gpu = dn.BUDGETS["full"], dn.BUDGETS["gpu"]
    assert (gpu.d_model, gpu.batch_size, gpu.seq_len) == (full.d_model, full.batch_size, full.seq_len), (
        "gpu is full with fewer steps in some chapters, not a smaller model"
    )


def test_a_chapters_sizes_are_its_row_unless_the_budget_carries_its_own():
    """Issue 45: a chapter's sizes come from its budget.py's sizes(budget) (no registry, no budget.<stem>); a
    budget made by with_sizes carries a chapter's shorter row and every other chapter keeps its own."""
    import dataclasses

    from deepnotes.chapters.increment_explosion import budget as increment
    from deepnotes.chapters.thousand_layers import budget as thousand
    from deepnotes.core.config import chapter_sizes

    smoke = dn.get_budget("smoke")
    assert increment.sizes(smoke) is increment.ROWS["smoke"]
    with pytest.raises(BadArgument, match="get_budget"):  # a name: the page resolves its budget once
        increment.sizes("smoke")
    shorter = dataclasses.replace(thousand.sizes(smoke), train_steps=1)
    cut = smoke.with_sizes(shorter)
    assert thousand.sizes(cut) is shorter and increment.sizes(cut) is increment.ROWS["smoke"]
    again = cut.with_sizes(dataclasses.replace(shorter, train_steps=2))
    assert thousand.sizes(again).train_steps == 2 and len(again.overrides) == 1  # one override per chapter
    assert not hasattr(smoke, "thousand_layers")  # no budget.<stem>
    with pytest.raises(ValueError, match="no-such-budget"):
        thousand.sizes("no-such-budget")
    with pytest.raises(ValueError, match="every one of"):
        chapter_sizes(smoke, {"smoke": shorter}, type(shorter))
