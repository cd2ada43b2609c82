"""The BERT 0.02 chapter: SymPy results against the numeric formulas, the encoder, the probes."""
from __future__ import annotations

import math

import pytest
import sympy as sp
import torch

import deepnotes as dn
from deepnotes.chapters.bert_init import experiments as bert
from deepnotes.core import derive as sym
from deepnotes.chapters.bert_init import derive as sb
from deepnotes.core.init import gaussian_second_moment, truncated_normal_variance_factor


def test_bert_stds_match_the_truncated_normal_factor():
    stds = sb.bert_stds()
    assert float(stds["actual"]) == pytest.approx(0.02 * math.sqrt(truncated_normal_variance_factor(2.0)), rel=1e-9)
    assert float(stds["divisor"]) == pytest.approx(1.1368472, rel=1e-6)
    assert float(stds["xavier"]) == pytest.approx(1 / math.sqrt(768))
    assert float(stds["ratio"]) == pytest.approx(float(stds["actual"]) * math.sqrt(768))


def test_truncated_variance_derived_vs_printed_eq19():
    tv = sb.truncated_variance()
    assert float(tv["derived"].subs(sb.a, 2)) == pytest.approx(truncated_normal_variance_factor(2.0), rel=1e-9)
    assert sp.simplify(tv["printed_eq19"] + 2 * sb.a) == 0          # the printed formula is −2a


def test_glorot_relu_and_gelu_moments():
    assert sp.simplify(sb.glorot_uniform_variance() - 2 / (sb.n_in + sb.n_out)) == 0
    relu = sb.relu_moments()
    assert float(relu["second_moment"].subs(sym.q, 0.7)) == pytest.approx(gaussian_second_moment(lambda x: max(x, 0.0), 0.7), rel=1e-3)
    assert float(relu["variance"].subs(sym.q, 1)) == pytest.approx(0.5 - 1 / (2 * math.pi))
    for q in (0.01, 0.24, 1.0):
        assert float(sb.gelu_second_moment(q)) == pytest.approx(bert.gelu_second_moment(q), rel=1e-4)
    series = sb.gelu_second_moment_series(2)
    assert float(series.subs(sym.q, 0.01)) == pytest.approx(bert.gelu_second_moment(0.01), rel=1e-3)


def test_branch_ratios_lambdify_to_the_numeric_formulas():
    br = sb.branch_ratios()
    for std, rho in ((0.02, 0.06), (0.0361, 0.2), (0.01, 0.5)):
        q = bert.q_of(std)
        assert float(br["q"].subs({sym.d: 768, sb.s: std * math.sqrt(truncated_normal_variance_factor(2.0))})) == pytest.approx(q)
        m = bert.gelu_second_moment(q)
        v_att, v_ffn = bert.derived_ratios(std, rho)
        assert float(br["v_ffn"].subs(br["m_phi"], m).subs({sb.r_ff: 4, sym.q: q})) == pytest.approx(v_ffn)
        assert float(br["v_att"].subs({sb.rho: rho, sym.q: q})) == pytest.approx(v_att)
        w = br["identity_per_layer"].subs(br["m_phi"], m).subs({sb.r_ff: 4, sym.q: q, sb.rho: rho})
        assert float(w) ** 12 == pytest.approx(bert.identity_weight(std, rho, layers=12))
    assert sp.simplify(br["v_ffn_relu"].subs(sb.r_ff, 4) - 2 * sym.q ** 2) == 0   # the Post/Pre chapter's 2d²s⁴


def test_softmax_of_gaussian_logits_is_q_over_two_from_uniform():
    lg = sb.logit_softmax()
    assert sp.simplify(lg["kl_from_uniform"] - sym.q / 2) == 0
    q, V = 0.24, 20000
    z = torch.randn(64, V, generator=torch.Generator().manual_seed(0), dtype=torch.float64) * math.sqrt(q)
    logp = z.log_softmax(-1)
    kl = float((logp.exp() * logp).sum(-1).mean()) + math.log(V)
    assert kl == pytest.approx(q / 2, abs=0.01)


def test_equivalent_std_keeps_q_and_rejects_bad_input():
    assert 128 * bert.equivalent_std(0.02, 128) ** 2 == pytest.approx(768 * 0.02 ** 2)
    with pytest.raises(ValueError, match="std"):
        bert.equivalent_std(-0.02, 64)
    with pytest.raises(ValueError, match="width"):
        bert.equivalent_std(0.02, 0)
    with pytest.raises(ValueError, match="activation"):
        dn.ModelConfig(activation="swish")


def test_encoder_has_positions_embedding_norm_and_a_tied_head():
    cfg = bert.encoder_config(64, 2, 0.02, vocab=8, seq_len=12)
    model = dn.build_model(cfg, seed=0)
    assert model.head is None and model.positions.num_embeddings == 12
    tokens = torch.randint(0, 8, (2, 12), generator=torch.Generator().manual_seed(0))
    before = model(tokens)
    with torch.no_grad():
        model.embed.weight[3] += 1.0                                   # the tied output row of token 3
    after = model(tokens)
    assert not torch.allclose(before[..., 3], after[..., 3])
    # positions matter: the same token at two places gets different hidden states
    same = torch.full((1, 12), 5)
    h = model.hidden(same)
    assert not torch.allclose(h[0, 1], h[0, 7])


def test_init_probe_agrees_with_the_derivation_at_bert_scale():
    budget = dn.get_budget("smoke")
    p = bert.init_probe(0.02, 3, 64, budget)
    assert len(p.ffn_ratio) == len(p.attn_ratio) == len(p.rho) == 3 and len(p.cos_x0) == 4
    _, v_ffn = bert.derived_ratios(0.02, sum(p.rho) / 3)
    assert all(abs(v / v_ffn - 1) < 0.4 for v in p.ffn_ratio)
    assert all(abs(v - 1) < 0.01 for v in p.stream_var[1:])          # LayerNorm outputs
    assert abs(p.cos_x0[-1] - p.derived_cos[-1]) < 0.1
    assert all(g > 0 and math.isfinite(g) for g in p.grad_norms)
    big = bert.init_probe(0.1, 3, 64, budget)
    assert big.cos_x0[-1] < p.cos_x0[-1] and big.logit_var > p.logit_var


def test_mlm_run_records_every_layer_norm_gain():
    budget = dn.get_budget("smoke")
    for head in (True, False):
        run = bert.mlm_run(0.02, head, budget)
        assert len(run.history.losses) == budget.bert_init.train_steps
        names = set(run.gains)
        assert ("head" in names) == head and "embed" in names and f"l{budget.bert_init.train_depth}.ffn" in names
        assert all(len(v) == len(run.gain_steps) == len(run.embed_rms) for v in run.gains.values())
        assert run.gains["embed"][0] == pytest.approx(1.0)
