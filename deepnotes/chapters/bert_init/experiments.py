"""Experiments of the chapter "Why is BERT's initial standard deviation 0.02?" (seed 003).

A BERT-shaped Post-LN encoder (GELU FFN of width 4d, heads of width 64, token + position embeddings
with a LayerNorm, MLM head tied to the embedding) with every matrix drawn from N(0, s²) cut at ±2σ.
Stds are quoted at BERT-base's width 768; a model of width d uses s·√(768/d), which keeps

    q = d·s_eff²,   s_eff = s·√γ(2) ≈ 0.8796·s     (the std actually realized after the cut)

and with it every variance at initialization (see :mod:`deepnotes.chapters.bert_init.derive`):

    v_ffn = 4q·E[gelu(h)²], h ~ N(0, q)      v_att = ρ·q²      per-layer identity ((1+v_att)(1+v_ffn))^{-1/2}
    Var[logit] = q                           softmax entropy ≈ log V − q/2
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn

from deepnotes.chapters.bert_init.budget import sizes
from deepnotes.core import measure
from deepnotes.core.config import Budget, ModelConfig, TrainConfig
from deepnotes.core.config import device as default_device
from deepnotes.core.data import MarkovLanguage, mask_positions, probe_generator
from deepnotes.core.engine import Stack
from deepnotes.core.ensembles import RunContext, RunPlan
from deepnotes.core.measure import every_for, per_block_grad_norms
from deepnotes.core.models import (
    TransformerLM,
    build_model,
    ffn_branch_variance,
    gaussian_second_moment,
    gelu,
    truncated_normal_variance_factor,
)
from deepnotes.core.scaling import predicted_identity_weight
from deepnotes.core.train import History, Masked
from deepnotes.core.validate import (
    Count,
    Depth,
    Finite,
    NonNegative,
    NonNegativeCount,
    Positive,
    Probability,
    Seed,
    given,
)
from deepnotes.cost.model import (
    Builds,
    Draws,
    ReferencePasses,
    StackPasses,
    TrainRuns,
    block_matrices,
    planned_ensembles,
)
from deepnotes.show.cache import BUDGET_RESULTS_KEPT, LIVE_RESULTS_KEPT

BERT_WIDTH = 768
BERT_DEPTH = 12  # BERT-base's layers (the annotated tables' depth)
BERT_STD = 0.02
TABLE_STDS = (0.02, 0.0361, 0.05)  # the stds of the annotated §9.1 table: BERT's, Xavier's 1/√768, 0.05
MASK_PROB = 0.15
MLM_FLOOR = "floor H(X_t | neighbours)"


def equivalent_std(std: Positive, width: Count) -> float:
    """The std at width ``width`` that gives the same d·s² as ``std`` at width 768."""
    if not std > 0:
        raise ValueError(f"std must be > 0, got {std!r}")
    if not isinstance(width, int) or width < 1:
        raise ValueError(f"width must be a positive integer, got {width!r}")
    return std * math.sqrt(BERT_WIDTH / width)


def q_of(std: Positive, truncated: bool = True) -> float:
    """q = 768·s_eff² with s_eff = s·√γ(2), the std left after cutting N(0, s²) at ±2s
    (``truncated=False``: s_eff = s, e.g. Xavier-normal's 1/√768)."""
    return BERT_WIDTH * std**2 * (truncated_normal_variance_factor(2.0) if truncated else 1.0)


def gelu_second_moment(q: NonNegative) -> float:
    """E[gelu(h)²] for h ~ N(0, q) (numerical quadrature)."""
    return gaussian_second_moment(gelu, q)


def derived_ratios(
    std: Positive, rho: Probability, ffn_ratio: Count = 4, truncated: bool = True
) -> tuple[float, float]:
    """(v_att, v_ffn) = (ρ·q², r·q·E[gelu(h)²]) at BERT-equivalent std ``std``."""
    q = q_of(std, truncated)
    return rho * q**2, ffn_branch_variance(q, "gelu", ffn_ratio)


def identity_weight(std: Positive, rho: Probability, layers: NonNegativeCount = 1, truncated: bool = True) -> float:
    """The weight of x_0 after ``layers`` Post-LN layers: ((1+v_att)(1+v_ffn))^{-layers/2}."""
    v_att, v_ffn = derived_ratios(std, rho, truncated=truncated)
    return ((1 + v_att) * (1 + v_ffn)) ** (-layers / 2)


def xavier_std() -> float:
    """Xavier's std for BERT-base's square 768 × 768 matrices, drawn uncut: 1/√768 (q = 1)."""
    return 1 / math.sqrt(BERT_WIDTH)


def xavier_scale_std(stds: Sequence[float]) -> float | None:
    """Of the swept stds (cut at ±2σ, BERT-base equivalent) other than BERT's, the one whose q is nearest Xavier's
    q = 1 on a log scale (0.0361, q ≈ 0.77, where the budget sweeps it); None where BERT's is the only one."""
    others = [s for s in stds if s != BERT_STD]
    return min(others, key=lambda s: abs(math.log(q_of(s)))) if others else None


def encoder_config(
    width: Count, depth: Depth, std: Positive, vocab: Count, seq_len: Count, head_transform: bool = True
) -> ModelConfig:
    """BERT's shape at width ``width``: Post-LN, GELU FFN 4·width, heads of 64 (at least one)."""
    return ModelConfig(
        n_layers=depth,
        d_model=width,
        n_heads=max(1, width // 64),
        d_ff=4 * width,
        vocab_size=vocab,
        norm="post",
        causal=False,
        init_std=equivalent_std(std, width),
        head_transform=head_transform,
        activation="gelu",
        max_len=seq_len,
    )


@dataclass
class InitProbe:
    """One batch through a freshly initialized encoder (lists: per layer; index 0 = x_0)."""

    std: Positive  # BERT-equivalent init std
    width: Count
    depth: Depth
    stream_var: list[float]  # Var[x_l] over features, averaged over tokens (l = 0..L)
    cos_x0: list[float]  # mean cos(x_l, x_0): the identity path's weight, measured
    attn_ratio: list[float]  # v_att per layer: E[A(x)²]/E[x²]
    ffn_ratio: list[float]  # v_ffn per layer
    rho: list[float]  # per layer: ‖mean_t x_t‖²/mean_t ‖x_t‖² at the attention's input
    predicted_cos: list[float]  # Π (1+v)^{-1/2} from the measured ratios
    derived_cos: list[float]  # the same from the derived ratios (measured ρ)
    grad_norms: list[float]  # ‖∂L_MLM/∂θ_l‖ per block l = 1..L
    logit_var: float  # Var of the MLM logits at masked positions
    softmax_kl: float  # mean KL(softmax ‖ uniform) = log V − H at masked positions
    loss: float  # the MLM loss at init


def _probe_batch(budget: Budget, seed: int, device) -> tuple[torch.Tensor, torch.Tensor]:
    """The probe's tokens and MLM mask ([B, T] each): the batch, then the mask, from one stream."""
    n_seq, seq_len = sizes(budget).probe_tokens
    gen = probe_generator(seed)
    tokens = MarkovLanguage(sizes(budget).vocab, seed=0).sample(n_seq, seq_len, gen).to(device)  # [B, T]
    mask = mask_positions(n_seq, seq_len, MASK_PROB, gen).to(device)  # [B, T]
    if not mask.any():  # a tiny batch may draw no mask at all
        mask[:, seq_len // 2] = True
    return tokens, mask


def init_probe(
    std: Positive,
    depth: Depth,
    width: Count | None = None,
    *,
    budget: Budget,
    seed: Seed = 0,
    device=None,
) -> InitProbe:
    """Measure the stream, the branch ratios, the gradients and the logits of an encoder at init."""
    width = given(width, sizes(budget).probe_width)
    device = device or default_device()
    cfg = encoder_config(width, depth, std, sizes(budget).vocab, sizes(budget).probe_tokens[1])
    model = build_model(cfg, seed=seed, device=device)
    tokens, mask = _probe_batch(budget, seed, device)  # [B, T] each
    ratios, rho = {"attn": [], "ffn": []}, []

    def record(kind):
        def hook(module, inputs, output):
            x = inputs[0].detach()  # [B, T, d]
            ratios[kind].append(float(output.detach().pow(2).mean() / x.pow(2).mean()))
            if kind == "attn":  # ρ ≤ 1 (Jensen); float32 passed it by an ulp where the tokens became one (cpu)
                rho.append(min(1.0, float(x.mean(dim=1).pow(2).sum(-1).mean() / x.pow(2).sum(-1).mean())))

        return hook

    stream = []  # x_0 … x_N [B, T, d], recorded by the one forward pass below

    def keep(module, inputs, output):
        stream.append(output.detach())

    hooks = [b.attn.register_forward_hook(record("attn")) for b in model.blocks]
    hooks += [b.ffn.register_forward_hook(record("ffn")) for b in model.blocks]
    hooks += [m.register_forward_hook(keep) for m in (model.embed_norm, *model.blocks)]
    model.zero_grad(set_to_none=True)
    all_logits = model(tokens.masked_fill(mask, model.mask_id))  # [B, T, V]: mlm_loss's forward, once
    for hk in hooks:
        hk.remove()
    loss = F.cross_entropy(all_logits[mask], tokens[mask])  # = model.mlm_loss(tokens, mask)
    loss.backward()
    logits = all_logits.detach()[mask].double()  # [n, V]
    interleaved = [v for pair in zip(ratios["attn"], ratios["ffn"], strict=True) for v in pair]
    derived = [v for r in rho for v in derived_ratios(std, r)]
    logp = logits.log_softmax(-1)
    return InitProbe(
        std=std,
        width=width,
        depth=depth,
        stream_var=[float(x.var(dim=-1, unbiased=False).mean()) for x in stream],
        cos_x0=[float(F.cosine_similarity(x, stream[0], dim=-1).mean()) for x in stream],
        attn_ratio=ratios["attn"],
        ffn_ratio=ratios["ffn"],
        rho=rho,
        predicted_cos=predicted_identity_weight("post", interleaved),
        derived_cos=predicted_identity_weight("post", derived),
        grad_norms=per_block_grad_norms(model),
        logit_var=float(logits.var()),
        softmax_kl=float((logp.exp() * logp).sum(-1).mean() + math.log(logits.shape[-1])),
        loss=float(loss.detach()),
    )


@dataclass
class TableProbe:
    """The annotated §9.1/§9.2 tables' own setting (seed 003 §9.1: x_0 ~ N(0, I), W ~ N(0, σ²)): BERT's
    Post-LN blocks with every matrix drawn from N(0, s²) *uncut*, fed Gaussian vectors directly (no
    embedding). Lists per layer l = 0..L; gradients per block l = 1..L."""

    std: Positive  # BERT-equivalent std σ (s = σ·√(768/width))
    width: Count
    depth: Depth
    stream_var: list[float]  # Var[x_l] over features, averaged over tokens
    cos_x0: list[float]  # mean cos(x_l, x_0)
    grad_norms: list[float]  # ‖∂L/∂θ_l‖ per block, L = mean (x_L·u)², u a fixed random readout


def table_setting_probe(
    std: Positive, depth: Depth, width: Count, budget: Budget, seed: Seed = 0, device=None
) -> TableProbe:
    """One batch of x_0 ~ N(0, I) through ``depth`` Post-LN blocks of BERT's shape at ``width``, every
    block matrix from N(0, s²) without the ±2σ cut. The tables name no loss: the gradients are of
    L = mean over tokens of (x_L·u)², u ~ N(0, I/d) fixed, and only their ratios are read."""
    device = device or default_device()
    n_seq, seq_len = sizes(budget).probe_tokens
    with torch.device("meta"):  # no initialization drawn only to be overwritten (at width 768, most of the time)
        model = TransformerLM(encoder_config(width, depth, std, sizes(budget).vocab, seq_len))
    model = model.to_empty(device=device)  # the blocks are filled below; embedding and head are not used
    gen = torch.Generator().manual_seed(seed)
    sigma = equivalent_std(std, width)
    with torch.no_grad():
        for param in model.blocks.parameters():
            if param.dim() >= 2:  # every matrix
                param.copy_(sigma * torch.randn(param.shape, generator=gen))
        for module in model.blocks.modules():  # biases 0, γ 1
            if isinstance(module, nn.LayerNorm):
                module.reset_parameters()
            elif isinstance(module, nn.Linear):
                nn.init.zeros_(module.bias)
    stream = [torch.randn(n_seq, seq_len, width, generator=gen).to(device)]  # x_0 [B, T, d]
    readout = (torch.randn(width, generator=gen) / math.sqrt(width)).to(device)  # u [d]
    for block in model.blocks:
        stream.append(block(stream[-1]))  # x_l [B, T, d]
    model.zero_grad(set_to_none=True)
    (stream[-1] @ readout).pow(2).mean().backward()
    x0 = stream[0]
    return TableProbe(
        std=std,
        width=width,
        depth=depth,
        stream_var=[float(x.detach().var(dim=-1, unbiased=False).mean()) for x in stream],
        cos_x0=[float(F.cosine_similarity(x.detach(), x0, dim=-1).mean()) for x in stream],
        grad_norms=per_block_grad_norms(model),
    )


def layer_norm_gains(model) -> dict[str, float]:
    """Mean γ of every LayerNorm: 'embed', 'l{k}.attn' / 'l{k}.ffn' (k = 1..L) and, with the extra
    head layer, 'head'."""
    gains = {"embed": float(model.embed_norm.weight.detach().mean())}
    for k, block in enumerate(model.blocks, start=1):
        for name, res in zip(("attn", "ffn"), block.sublayers, strict=True):
            gains[f"l{k}.{name}"] = float(res.norm.weight.detach().mean())
    if model.cfg.head_transform:
        gains["head"] = float(model.head_transform[2].weight.detach().mean())
    return gains


@dataclass
class MLMRun:
    """An MLM training run and the LayerNorm gains and embedding size along it."""

    std: Positive
    head_transform: bool
    history: History
    depth: Depth
    gain_steps: list[int] = field(default_factory=list)
    gains: dict[str, list[float]] = field(default_factory=dict)  # LN name → mean γ at gain_steps
    embed_rms: list[float] = field(default_factory=list)  # RMS of the output rows of E

    @property
    def last_name(self) -> str:
        """The name of the last encoder LayerNorm (the one after block N's FFN)."""
        return f"l{self.depth}.ffn"

    def last_encoder_gain(self) -> list[float]:
        return self.gains[self.last_name]

    def other_gains(self) -> list[list[float]]:
        """The mean γ at gain_steps of every LayerNorm except the last encoder one and the head's."""
        return [v for k, v in self.gains.items() if k not in (self.last_name, "head")]

    def final_other_gains(self) -> list[float]:
        """The final mean γ of every LayerNorm except the last encoder one and the head's."""
        return [v[-1] for v in self.other_gains()]


def embedding_rms(model) -> float:
    """RMS of the output rows of the tied embedding E (the [MASK] row left out)."""
    return float(model.embed.weight[: model.cfg.vocab_size].detach().pow(2).mean().sqrt())


def stack_layer_norm_gains(stack: Stack) -> list[dict[str, float]]:
    """:func:`layer_norm_gains` of every member of an encoder stack, in the same order of names."""
    embed = stack.embed_norm_w.mean(dim=(1, 2)).tolist()  # [K]
    attn = stack.attn_norm_w.mean(dim=(2, 3)).tolist()  # [N][K]
    ffn = stack.ffn_norm_w.mean(dim=(2, 3)).tolist()  # [N][K]
    head = stack.dense_norm_w.mean(dim=(1, 2)).tolist() if stack.cfg.head_transform else None
    out = []
    for k in range(stack.n_members):
        gains = {"embed": embed[k]}
        for layer in range(stack.n_layers):
            gains[f"l{layer + 1}.attn"], gains[f"l{layer + 1}.ffn"] = attn[layer][k], ffn[layer][k]
        if head is not None:
            gains["head"] = head[k]
        out.append(gains)
    return out


def stack_embedding_rms(stack: Stack) -> list[float]:
    """:func:`embedding_rms` of every member: RMS of E's output rows ([MASK] left out)."""
    return stack.embed[:, : stack.cfg.vocab_size].pow(2).mean(dim=(1, 2)).sqrt().tolist()


def mlm_trackers(every: Count) -> list:
    """What an MLM ensemble records every ``every`` steps: block gradient norms, LayerNorm gains, the
    embedding's RMS (a function of its own, so that worker processes can receive it)."""
    return [
        measure.BlockGradNorms(every),
        measure.Recorder("gains", stack_layer_norm_gains, every),
        measure.Recorder("embed_rms", stack_embedding_rms, every),
    ]


def mlm_train_config(budget: Budget, seed: Seed, lr: Positive | None = None) -> TrainConfig:
    """The MLM runs' training: Adam at the budget's rate (or ``lr``) with its linear warmup, on its batch."""
    b = sizes(budget)
    n_seq, seq_len = b.train_batch
    return TrainConfig(
        optimizer="adam",
        lr=b.lr if lr is None else lr,
        steps=b.train_steps,
        warmup_steps=b.train_warmup,
        batch_size=n_seq,
        seq_len=seq_len,
        seed=seed,
    )


def mlm_plan(
    settings: Sequence[tuple[float, bool]],
    budget: Budget,
    seeds: Sequence[int] = (0,),
    lr: Positive | None = None,
    depth: Depth | None = None,
) -> tuple[list[tuple[float, bool, int]], RunPlan]:
    """The (std, head, seed) keys of :func:`mlm_runs` and its train_many call: the budget's encoder at every
    (std, extra head layer) setting × seed, on masked tokens of the Markov language of its seed, Adam with
    linear warmup, every ensemble recording its LayerNorms' mean γ and the embedding's RMS. Settings with the
    same head share a graph and train together."""
    b = sizes(budget)
    depth = given(depth, b.train_depth)
    seq_len = b.train_batch[1]
    keys = [(s, head, seed) for s, head in settings for seed in seeds]
    return keys, RunPlan(
        [encoder_config(b.train_width, depth, s, b.vocab, seq_len, head) for s, head, _ in keys],
        [mlm_train_config(budget, seed, lr) for _, _, seed in keys],
        [MarkovLanguage(b.vocab, seed=seed) for _, _, seed in keys],
        objective=Masked(MASK_PROB),
        trackers=functools.partial(mlm_trackers, every_for(b.train_steps, b.gain_points)),
    )


def mlm_runs(
    settings: Sequence[tuple[float, bool]],
    context: RunContext,
    seeds: Sequence[int] = (0,),
    lr: Positive | None = None,
    depth: Depth | None = None,
) -> dict[tuple[float, bool, int], MLMRun]:
    """Train :func:`mlm_plan`'s runs where ``context`` says: the budget's encoder on masked tokens with Adam and
    linear warmup, for every (std, extra head layer) setting × seed. Returns (std, head, seed) → run."""
    depth = given(depth, sizes(context.budget).train_depth)
    keys, plan = mlm_plan(settings, context.budget, seeds, lr, depth)
    hists = context.train(plan)
    return {key: _mlm_result(key[0], key[1], depth, hist) for key, hist in zip(keys, hists, strict=True)}


def _mlm_result(std: Finite, head_transform: bool, depth: int, hist: History) -> MLMRun:
    steps, gains = hist.record("gains")
    result = MLMRun(std, head_transform, hist, depth, list(steps), embed_rms=list(hist.record("embed_rms")[1]))
    for snapshot in gains:
        for name, value in snapshot.items():
            result.gains.setdefault(name, []).append(value)
    return result


def mlm_run(
    std: Positive,
    head_transform: bool = True,
    *,
    context: RunContext,
    seed: Seed = 0,
    lr: Positive | None = None,
    depth: Depth | None = None,
) -> MLMRun:
    """One run of :func:`mlm_runs`."""
    return mlm_runs([(std, head_transform)], context, (seed,), lr, depth)[(std, head_transform, seed)]


def cached_probe(std: Positive, depth: Depth, width: Count, budget: Budget) -> InitProbe:
    """:func:`init_probe`, computed once per setting (the experiment and the slider share them)."""
    return _cached_probe(std, depth, width, budget)


@functools.lru_cache(maxsize=LIVE_RESULTS_KEPT)
def _cached_probe(std: Positive, depth: Depth, width: Count, budget: Budget) -> InitProbe:
    """The cache behind :func:`cached_probe`: the door checks the arguments there, before hashing."""
    return init_probe(std, depth, width, budget=budget)


def run_settings(budget: Budget) -> list[tuple[float, bool]]:
    """Every (std, extra head layer) the chapter trains: the §9.3 stds with the head, the gain stds
    with and without it."""
    b = sizes(budget)
    return list(dict.fromkeys([(s, True) for s in b.train_stds] + [(s, h) for s in b.gain_stds for h in (True, False)]))


def chapter_runs(context: RunContext) -> dict[tuple[float, bool], tuple[MLMRun, ...]]:
    """:func:`mlm_runs` over :func:`run_settings` and the budget's ``train_seeds`` (seeds 0, 1, …), trained
    once per budget and device (without progress bars: the slider's frames reuse them): (std, extra head
    layer) → one run per seed."""
    return _chapter_runs(context.quiet())


@functools.lru_cache(maxsize=BUDGET_RESULTS_KEPT)
def _chapter_runs(context: RunContext) -> dict[tuple[float, bool], tuple[MLMRun, ...]]:
    """The cache behind :func:`chapter_runs`: the door checks the arguments there, before hashing."""
    settings = run_settings(context.budget)
    seeds = tuple(range(sizes(context.budget).train_seeds))
    trained = mlm_runs(settings, context, seeds)
    return {key: tuple(trained[(*key, seed)] for seed in seeds) for key in settings}


def cached_run(std: Positive, head_transform: bool, context: RunContext) -> MLMRun:
    """:func:`mlm_run` at the budget's defaults (seed 0), computed once per setting (the chapter's settings
    come from :func:`chapter_runs`): what the figures and sliders draw."""
    return _cached_run(std, head_transform, context.quiet())


@functools.lru_cache(maxsize=LIVE_RESULTS_KEPT)
def _cached_run(std: Positive, head_transform: bool, context: RunContext) -> MLMRun:
    """The cache behind :func:`cached_run`: the door checks the arguments there, before hashing."""
    if (std, head_transform) in run_settings(context.budget):
        return chapter_runs(context)[(std, head_transform)][0]
    return mlm_run(std, head_transform, context=context)


def article_gradient_prediction(probe: InitProbe) -> list[float]:
    """The annotated eq. (42) with the measured branch ratios: ‖g_l‖/‖g_L‖ = Π_{k>l} ((1+v_att)(1+v_ffn))^{-1/2}."""
    w = probe.predicted_cos  # Π_{k≤l} per layer, l = 0..L
    return [w[-1] / w_l for w_l in w[1:]]


def probe_depth(budget: Budget) -> int:
    """The depth of the init sweep: BERT-base's 12 where the budget probes it, else its deepest."""
    depths = sizes(budget).probe_depths
    return BERT_DEPTH if BERT_DEPTH in depths else depths[-1]


def sweep_probes(budget: Budget) -> dict[float, InitProbe]:
    """Experiment 1: one :class:`InitProbe` per std of the budget at :func:`probe_depth`."""
    b = sizes(budget)
    return {s: cached_probe(s, probe_depth(budget), b.probe_width, budget) for s in b.stds}


def table_probes(budget: Budget) -> dict[float, InitProbe]:
    """The annotated §9.1/§9.2 tables' stds 0.02, 0.0361, 0.05 in the book's BERT setting (weights cut
    at ±2σ, Markov-language tokens through the embedding) at the budget's table width and depth (12)."""
    b = sizes(budget)
    return {s: cached_probe(s, b.table_depth, b.table_width, budget) for s in TABLE_STDS}


def sweep_probe_seeds(budget: Budget) -> dict[float, list[InitProbe]]:
    """Experiment 1's verdicts: per std of the budget, one :class:`InitProbe` at :func:`probe_depth` for each
    of ``probe_seeds`` seeds (seed s: initialization s and probe batch s; seed 0 is :func:`sweep_probes`')."""
    b = sizes(budget)
    depth = probe_depth(budget)
    return {
        s: [
            sweep_probes(budget)[s],
            *(init_probe(s, depth, b.probe_width, budget=budget, seed=seed) for seed in range(1, b.probe_seeds)),
        ]
        for s in b.stds
    }


def table_seed_probes(budget: Budget) -> dict[str, dict[float, list]]:
    """The annotated tables' stds over ``table_seeds`` seeds (seed s: initialization s and probe batch s) at the
    budget's table width and depth, in the tables' own setting ("own": :func:`table_setting_probe`) and in BERT's
    ("cut": :func:`init_probe`; seed 0 is :func:`table_probes`'): setting → std → one probe per seed."""
    return _table_seed_probes(budget)


@functools.lru_cache(maxsize=BUDGET_RESULTS_KEPT)
def _table_seed_probes(budget: Budget) -> dict[str, dict[float, list]]:
    """The cache behind :func:`table_seed_probes`: the door checks the arguments there, before hashing."""
    b = sizes(budget)
    probes = {
        "own": lambda s, seed: table_setting_probe(s, b.table_depth, b.table_width, budget, seed),
        "cut": lambda s, seed: (
            cached_probe(s, b.table_depth, b.table_width, budget)
            if seed == 0  # table_probes'
            else init_probe(s, b.table_depth, b.table_width, budget=budget, seed=seed)
        ),
    }
    return {
        name: {s: [probe(s, seed) for seed in range(b.table_seeds)] for s in TABLE_STDS}
        for name, probe in probes.items()
    }


def table_setting_probes(budget: Budget) -> dict[float, TableProbe]:
    """The same stds in the tables' own setting (:func:`table_setting_probe`: uncut, Gaussian x_0), seed 0."""
    return {s: seeds[0] for s, seeds in table_seed_probes(budget)["own"].items()}


def table_gradient_ratios(budget: Budget) -> dict[str, dict[float, list[float]]]:
    """The §9.2 ratio ‖g_1‖/‖g_L‖ (first block over last) at each of TABLE_STDS over ``table_seeds``
    seeds (:func:`table_seed_probes`), in the tables' own setting ("own") and in BERT's ("cut"): setting →
    std → one ratio per seed. One batch is one draw; the verdicts read the median."""
    return {
        name: {s: [p.grad_norms[0] / p.grad_norms[-1] for p in seeds] for s, seeds in by_std.items()}
        for name, by_std in table_seed_probes(budget).items()
    }


def table_identity_falloff(budget: Budget) -> dict[str, list[float]]:
    """The identity path's weight at the top over its weight after the first block, cos(x_L, x_0)/cos(x_1, x_0),
    at BERT's std 0.02 over ``table_seeds`` seeds, in both settings (:func:`table_seed_probes`): setting → one
    value per seed. The annotated eqs. (42), (54) say the first block's gradient falls by this factor."""
    return {
        name: [p.cos_x0[-1] / p.cos_x0[1] for p in by_std[BERT_STD]]
        for name, by_std in table_seed_probes(budget).items()
    }


def training_runs(context: RunContext) -> dict[float, tuple[MLMRun, ...]]:
    """Experiment 2: MLM runs (with the extra Dense+LN head) per std of the annotated §9.3 table, one per seed."""
    return {s: chapter_runs(context)[(s, True)] for s in sizes(context.budget).train_stds}


def gain_runs(context: RunContext) -> dict[tuple[float, bool], tuple[MLMRun, ...]]:
    """Experiment 3: (std, extra head layer) → MLM runs, one per seed, for every gain std, with and without
    the head."""
    runs = chapter_runs(context)
    return {(s, head): runs[(s, head)] for s in sizes(context.budget).gain_stds for head in (True, False)}


def gain_show_std(budget: Budget) -> float:
    """The std whose gain runs are drawn: BERT's 0.02 where the budget trains it, else its first."""
    stds = sizes(budget).gain_stds
    return BERT_STD if BERT_STD in stds else stds[0]


# ---- the chapter's work, for its estimate ------------------------------------------------------------


def _probe_model(budget: Budget, depth: int, width: int) -> ModelConfig:
    """The probed encoder, at BERT_STD whatever the probe's std: its passes cost the same at every std, and
    :mod:`deepnotes.cost.model` counts once per config (a config per std would count each again)."""
    b = sizes(budget)
    return encoder_config(width, depth, BERT_STD, b.vocab, b.probe_tokens[1])


def init_probe_work(budget: Budget, depth: Depth, width: Count) -> list[Builds | ReferencePasses]:
    """:func:`init_probe`'s work at any std: the encoder's initialization (its modules and random numbers,
    :func:`~deepnotes.cost.model.init_draws`), then one MLM loss forward + backward through its modules (hooks
    record the stream and the logits on the way), counted as the reference model's next-token pass."""
    n_seq, seq_len = sizes(budget).probe_tokens
    model = _probe_model(budget, depth, width)
    return [Builds(model), ReferencePasses(model, n_seq, seq_len)]


def table_setting_probe_work(budget: Budget) -> list[Draws | StackPasses]:
    """:func:`table_setting_probe`'s work: every block matrix drawn once, then one forward + backward of the
    blocks."""
    b = sizes(budget)
    model = _probe_model(budget, b.table_depth, b.table_width)
    return [Draws(model.n_layers * sum(block_matrices(model))), StackPasses(model, 1, *b.probe_tokens)]


def work(budget: Budget) -> list[Builds | ReferencePasses | Draws | StackPasses | TrainRuns]:
    """What the experiments above compute at ``budget``, as :mod:`deepnotes.cost.model` counts it (the page
    adds its derivations and figures: :mod:`deepnotes.chapters.catalog`):

        sweep_probes           an init_probe per std of ``stds`` at probe_depth, width probe_width
        init_figure            the drawn probe (BERT_STD at probe_depth): one of the sweep's where it sweeps it
        table_probes           an init_probe per TABLE_STDS at table_depth × table_width
        slider "init"          an init_probe per setting of the precomputed grid (stds × probe_depths)
        sweep_probe_seeds      an init_probe per std of ``stds`` for each of probe_seeds seeds but 0 (the sweep's)
        table_seed_probes      per TABLE_STDS and each of table_seeds seeds: a table_setting_probe, and an
                               init_probe for every seed but 0 (seed 0's is table_probes', cached)
        chapter_runs           :func:`mlm_plan` of run_settings × train_seeds: training_runs, gain_runs, the gain
                               figures and the gains slider all read these

    Probes are counted once per distinct setting (the first four lines share them): ``cached_probe`` keeps
    16, so at the cpu and gpu budgets the slider's grid evicts and recomputes a few sweep probes (3 of ~30),
    left out. Nothing here depends on results; the live panels run nothing at build time."""
    b = sizes(budget)
    depth = probe_depth(budget)
    probes = dict.fromkeys(  # (std, depth, width) of every init_probe, each computed once
        [
            *((s, depth, b.probe_width) for s in b.stds),
            (BERT_STD, depth, b.probe_width),
            *((s, b.table_depth, b.table_width) for s in TABLE_STDS),
            *((s, n, b.probe_width) for s in b.stds for n in b.probe_depths),
        ]
    )
    return [
        *(w for _, n, width in probes for w in init_probe_work(budget, n, width)),
        *(w for _ in b.stds for _ in range(1, b.probe_seeds) for w in init_probe_work(budget, depth, b.probe_width)),
        *(
            w
            for _ in TABLE_STDS
            for seed in range(b.table_seeds)
            for w in [
                *table_setting_probe_work(budget),
                *(init_probe_work(budget, b.table_depth, b.table_width) if seed else ()),
            ]
        ),
        *planned_ensembles(mlm_plan(run_settings(budget), budget, tuple(range(b.train_seeds)))[1]),
    ]
