"""Issue 65: a residual rule as data, and the order in N of its first update derived by SymPy."""

import math
from dataclasses import replace

import pytest
import sympy as sp
import torch

from deepnotes.core import derive
from deepnotes.core.config import ModelConfig
from deepnotes.core.engine import Stack
from deepnotes.core.rules import PLACEMENTS, PUBLISHED, Learnable, Rule, engine_config, scale_named

# (SGD, Adam) orders in N of the first step's loss change, as the magnitude analysis gives them: DeepNet's premise
# for Post-LN and DeepNorm (every sublayer's gradient of the same size), the final LayerNorm's division by the grown
# stream for Pre-LN, a learnable branch's own gradient where it starts at 0
EXPECTED = {
    "Post-LN": (1, 1),
    "Pre-LN": (0, sp.Rational(1, 2)),
    "DeepNorm": (0, sp.Rational(1, 2)),
    "ReZero": (1, 1),
    "SkipInit": (1, 1),
    "GPT-2": (1, 1),
    "Depth-µP": (0, 0),
}


@pytest.mark.parametrize("name", list(PUBLISHED))
def test_each_published_rule_s_first_update_has_its_order_in_n(name):
    for optimizer, want in zip(("sgd", "adam"), EXPECTED[name], strict=True):
        got = derive.first_update(PUBLISHED[name], optimizer)
        assert got["order"] == want, (name, optimizer, got["order"])
        assert got["bounded"] == (want <= 0)


def test_the_rule_path_agrees_with_the_book_s_deepnorm_and_pre_ln_lambda_derivations():
    """DeepNorm, Su's Adam constants and Pre-LN with λ recomputed (the increment chapter's variants) as rules give the
    exponents of ΔL ∝ 2N·(λ/α)^k (core.derive.loss_change_exponent), which that chapter measured."""
    n = derive.N
    rules = {
        "deepnorm": (PUBLISHED["DeepNorm"], (8 * n) ** sp.Rational(-1, 4) / (2 * n) ** sp.Rational(1, 4)),
        "deepnorm/adam": (Rule("Su, Adam", "post", alpha="sqrt(2*N)", beta="1/sqrt(2*N)"), 1 / (2 * n)),
        "pre/lambda": (Rule("Pre-LN, λ recomputed", "pre", beta="1/sqrt(2*N)"), 1 / sp.sqrt(2 * n)),
    }
    for name, (rule, ratio) in rules.items():
        for optimizer in ("sgd", "adam"):
            assert derive.first_update(rule, optimizer)["order"] == derive.loss_change_exponent(optimizer, ratio), name


def test_a_branch_multiplier_and_a_rate_scale_move_the_order_as_the_derivation_says():
    plain = Rule("pre, b = 1", "pre")
    scaled = Rule("pre, b = N^-1/2", "pre", branch="N**(-1/2)")
    slower = Rule("pre, b = N^-1/2, Adam η/N", "pre", branch="N**(-1/2)", lr_scale={"adam": "1/N"})
    assert derive.first_update(plain, "adam")["order"] == sp.Rational(1, 2)
    assert derive.first_update(scaled, "adam")["order"] == sp.Rational(1, 2)  # 2N·b·(1/√3): N^{1/2}
    assert derive.first_update(slower, "adam")["order"] == sp.Rational(-1, 2)
    assert derive.first_update(slower, "sgd")["order"] == 0  # the SGD rate is not scaled


def test_a_rule_s_formulas_have_their_values_at_a_depth():
    values = PUBLISHED["DeepNorm"].at(1000)
    assert values["alpha"] == pytest.approx(2000**0.25) and values["beta"] == pytest.approx(8000**-0.25)
    assert PUBLISHED["Depth-µP"].at(100) == pytest.approx(
        {"alpha": 1.0, "branch": 0.1, "beta": 1.0, "lr_scale[sgd]": 1.0, "lr_scale[adam]": 0.1}
    )
    assert PUBLISHED["ReZero"].learnable and PUBLISHED["ReZero"].at(6)["branch"] == 0.0
    assert {r.placement for r in PUBLISHED.values()} <= set(PLACEMENTS)
    assert PUBLISHED["GPT-2"].check([6, 18, 100, 1000]) is PUBLISHED["GPT-2"]


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda: Rule("r", "sideways"), ("'sideways'", "post", "pre", "none")),
        (lambda: Rule("r", "pre", alpha="N*d"), ("alpha", "N alone", "d")),
        (lambda: Rule("r", "pre", beta="1/(", lr_scale=1), ("beta", "SymPy")),
        (lambda: Rule("r", "pre", beta=[1]), ("beta", "formula", "list")),
        (lambda: Rule("r", "pre", beta=True), ("beta", "formula", "bool")),
        (lambda: Rule("r", "pre", beta_on=("q",)), ("'q'", "in", "out")),
        (lambda: Rule("r", "pre", beta_on="out"), ("beta_on", "tuple")),
        (lambda: Rule("r", "pre", lr_scale={"lamb": 1}), ("'lamb'", "sgd", "adam")),
        (lambda: Rule("r", "pre", branch=Learnable("x")), ("branch", "N alone", "x")),
        (lambda: Rule("r", "pre", beta="1/(N-3)").check([4, 3]), ("beta", "N = 3", "finite", "not a real")),
        (lambda: Rule("r", "pre", beta="1/(N-3)").check([2]), ("beta", "N = 2", "-1.0")),
        (lambda: Rule("r", "pre", beta="sqrt(N-5)").check([6, 4]), ("beta", "N = 4", "not a real")),
        (lambda: Rule("r", "post", alpha="2-N").check([1, 2, 6]), ("alpha", "N = 2", "positive")),
        (lambda: Rule("r", "pre", branch="0").check([6]), ("branch", "N = 6", "positive")),
        (lambda: Rule("r", "none", branch=Learnable("-1")).check([6]), ("branch", "not negative")),
    ],
)
def test_a_bad_rule_is_refused_in_words_that_name_the_field(make, words):
    with pytest.raises(ValueError) as err:
        make()
    message = str(err.value)
    assert "\n" not in message.strip() and all(w in message for w in words), message


def test_a_rule_needs_no_sympy_to_import_and_builds_what_the_reader_types():
    rule = Rule("mine", "pre", alpha=1, branch="(2*N)**(-1/2)", beta=sp.Symbol("N") ** sp.Rational(-1, 4))
    assert math.isclose(rule.at(8)["branch"], 0.25) and math.isclose(rule.at(16)["beta"], 0.5)
    assert derive.first_update(rule, "sgd")["order"] == -sp.Rational(1, 2)


BASE = ModelConfig(n_layers=2, d_model=8, n_heads=2, d_ff=16, vocab_size=7)


def test_each_published_rule_is_a_block_the_engine_builds():
    got = {name: engine_config(rule, BASE, 8) for name, rule in PUBLISHED.items()}
    assert [(c.norm, c.n_layers) for c in got.values()] == [
        ("post", 8),
        ("pre", 8),
        ("deepnorm", 8),
        ("none", 8),
        ("pre", 8),
        ("pre", 8),
        ("pre", 8),
    ]
    assert got["DeepNorm"].alpha == pytest.approx(16**0.25) and got["DeepNorm"].beta == pytest.approx(64**-0.25)
    assert got["ReZero"].gate == 0.0 and got["SkipInit"].gate == 0.0 and got["Depth-µP"].gate == pytest.approx(8**-0.5)
    assert got["Post-LN"].gate is None and got["GPT-2"].beta == 1.0  # GPT-2 scales one role: after the draw
    stack = Stack(list(got.values()), seeds=[0] * len(got))
    assert torch.isfinite(stack.next_token_losses(torch.zeros(len(got), 2, 5, dtype=torch.long))).all()


def test_a_rule_that_scales_one_role_scales_those_matrices_only():
    """GPT-2's β on the output projections: out and fc2 are the gain-β draw, the value columns and fc1 the gain-1
    draw, q and k untouched; a rule that scales both roles leaves the engine's own draw alone."""
    rule, depth = PUBLISHED["GPT-2"], 8
    beta = rule.at(depth)["beta"]
    cfg = engine_config(rule, BASE, depth)
    scaled, plain, full = (Stack([c], seeds=[3]) for c in (cfg, cfg, replace(cfg, beta=beta)))
    scale_named(rule, scaled, 0)
    for name in ("out_w", "fc2_w"):
        assert torch.allclose(scaled.member(name, 0), full.member(name, 0), rtol=1e-6)
    for name in ("fc1_w", "qkv_w"):
        assert torch.equal(scaled.member(name, 0), plain.member(name, 0))
    deepnorm = Stack([engine_config(PUBLISHED["DeepNorm"], BASE, depth)], seeds=[3])
    before = deepnorm.member("fc2_w", 0).clone()
    scale_named(PUBLISHED["DeepNorm"], deepnorm, 0)
    assert torch.equal(deepnorm.member("fc2_w", 0), before)


def test_a_rule_the_engine_cannot_build_is_refused_by_name():
    with pytest.raises(ValueError, match=r"'pre, alpha 2'.*skip weight at 1.*alpha is 2 at N = 4.*placement='post'"):
        engine_config(Rule("pre, alpha 2", "pre", alpha=2), BASE, 4)
