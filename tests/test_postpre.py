import math

import pytest
import sympy as sp
import torch

import deepnotes as dn
from deepnotes.chapters.post_vs_pre_norm import derive as pp_derive
from deepnotes.core.trackers import GateSchedule
from deepnotes.chapters.post_vs_pre_norm import experiments as pp
from deepnotes.core import derive as sym


def test_post_norm_weights_and_pre_norm_moment_match_the_recursions():
    post = pp_derive.post_norm_unroll(4)
    f = sp.lambdify((pp_derive.v, pp_derive.ell), post["weight_x0"])
    assert f(1.0, 4) == pytest.approx(0.25)
    assert [float(w.subs(pp_derive.v, 1)) for w in post["weights"]] == pytest.approx([0.25, 0.25, 2 ** -1.5, 0.5, 2 ** -0.5])
    ratios = [0.3, 0.7, 0.2, 0.5]
    assert pp.predicted_identity_weight("post", ratios)[-1] == pytest.approx(1 / math.sqrt(1.3 * 1.7 * 1.2 * 1.5))
    assert pp.predicted_identity_weight("pre", ratios)[-1] == pytest.approx(1 / math.sqrt(1 + sum(ratios)))
    assert pp.predicted_identity_weight("rezero", ratios) == [1.0, 1.0, 1.0]
    assert float(pp_derive.pre_norm_second_moment().subs({pp_derive.ell: 5, pp_derive.v: 0.5})) == 3.5


def test_ffn_branch_second_moment_is_measured():
    d, s = 64, 0.05
    torch.manual_seed(0)
    x = torch.randn(4096, d)
    w1, w2 = s * torch.randn(d, 4 * d), s * torch.randn(4 * d, d)
    measured = float((torch.relu(x @ w1) @ w2).pow(2).mean())
    assert measured == pytest.approx(float(pp_derive.ffn_branch_second_moment().subs({sym.d: d, sp.Symbol("s", positive=True): s})), rel=0.1)


def test_stream_probe_identity_path():
    budget = dn.get_budget("smoke")
    rz = pp.stream_probe("rezero", 4, budget)
    assert min(rz.cos_x0) > 0.999999
    post = pp.stream_probe("post", 4, budget)
    assert post.cos_x0[-1] < 0.9 and len(post.branch_ratio) == 8 and len(post.grad_norms) == 4
    assert max(abs(a - b) for a, b in zip(post.cos_x0, post.predicted_cos)) < 0.2
    pre = pp.stream_probe("pre", 8, budget)
    assert pre.rms[-1] > pre.rms[0]


def test_fixed_step_gates_rise_linearly_and_are_not_trained():
    budget = dn.get_budget("smoke")
    model = dn.build_model(pp.model_config("rezero", 2, budget))
    schedule = GateSchedule(0.25)
    for step, want in ((0, 0.25), (2, 0.75), (9, 1.0)):
        schedule.before_step(model, step, None)
        assert all(r.gate.item() == want for b in model.blocks for r in b.sublayers)
    hist = pp.run("rezero", 2, budget, gate_step=0.5, steps=3)
    assert len(hist.losses) == 3 and hist.block_updates
    with pytest.raises(ValueError, match="rezero"):
        pp.run("post", 2, budget, gate_step=0.5, steps=1)
    with pytest.raises(ValueError, match="gate step size"):
        GateSchedule(0)


def test_block_updates_under_adam_are_uniform_and_under_sgd_follow_gradients():
    budget = dn.get_budget("smoke")
    adam = pp.run("post", 6, budget, "adam", 1e-3, steps=1)
    sgd = pp.run("post", 6, budget, "sgd", 0.1, steps=1)
    a, s = adam.block_updates[0], sgd.block_updates[0]
    assert max(a) / min(a) < 3
    g = sgd.grad_norms[0]
    per_unit = [u / gi for u, gi in zip(s, g)]          # = η/‖θ_l‖ exactly for SGD; ‖θ_l‖ is alike per block
    assert max(per_unit) / min(per_unit) < 1.5
