"""Training runs of the chapter "Why residuals?": deep plain and residual MLPs (and Transformers
without normalization) on the synthetic Markov language. No drawing (see ``figures.py``).

The MLP language model reads one token and predicts the next: embedding (N(0, 1) entries, so
E[x_0²] = 1) → the :class:`.probes.ResidualMLP` stack → a linear head. The task is a first-order
Markov chain, so this model can reach the entropy-rate floor; a model that learns nothing sits on
the context-free plateau. Every run trains on the engine (:func:`deepnotes.core.ensembles.train_many`),
member k starting from the weights this module's reference model draws from its seed: the MLP as
the engine's one-sublayer block with its biases held at 0 and the branch weight ε as a gate that is
not trained (:func:`mlp_config`, :func:`start_mlp`), the Transformers as :func:`build_transformer`
builds them (:func:`start_transformer`). Runs of one depth and optimizer train as one ensemble.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from deepnotes.chapters.why_residuals.budget import sizes
from deepnotes.chapters.why_residuals.probes import (
    STACK_KINDS,
    ResidualMLP,
    eps_for_depth,
    growth_probe_calls,
    predicted_cosine,
    probes_work,
)
from deepnotes.chapters.why_residuals.spectrum import spectra_work
from deepnotes.core.config import Budget, ModelConfig, TrainConfig, check_allocation
from deepnotes.core.config import device as default_device
from deepnotes.core.data import MarkovLanguage, generator, seeded
from deepnotes.core.engine import Stack, load_reference, member_index
from deepnotes.core.ensembles import RunContext, RunPlan
from deepnotes.core.measure import BlockGradNorms, every_for
from deepnotes.core.models import TransformerLM, build_model, next_token_loss
from deepnotes.core.train import History
from deepnotes.core.validate import (
    Count,
    Depth,
    Finite,
    NonNegativeCount,
    Positive,
    Repeats,
    Seed,
    choice,
    given,
)
from deepnotes.cost.model import MLPPasses, ProbeCalls, StackPasses, TrainRuns, planned_ensembles

OPTIMIZERS = ("adam", "sgd")  # the MLP runs: every kind and depth under both


class MLPLanguageModel(nn.Module):
    """tokens [B, T] → embedding [B, T, d] → N layers (plain or x + εf(x)) → logits [B, T, V]."""

    def __init__(self, vocab_size: Count, width: Count, depth: Depth, kind: str | float):
        super().__init__()
        if kind not in STACK_KINDS and isinstance(kind, str):
            raise ValueError(f"unknown kind {kind!r}; allowed: {', '.join(STACK_KINDS)}")
        residual = kind != "plain"
        check_allocation(2 * (vocab_size + 1) * width, {"vocab_size": vocab_size, "width": width})  # embed, head
        self.embed = nn.Embedding(vocab_size, width)
        self.stack = ResidualMLP(width, depth, eps_for_depth(kind, depth) if residual else 1.0, residual)
        self.head = nn.Linear(width, vocab_size)
        with torch.no_grad():
            nn.init.normal_(self.embed.weight, std=1.0)
            nn.init.normal_(self.head.weight, std=1.0 / math.sqrt(width))
            nn.init.zeros_(self.head.bias)

    @property
    def blocks(self) -> nn.ModuleList:
        return self.stack.blocks

    def hidden(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.stack(self.embed(tokens))  # [B, T, d]

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.head(self.hidden(tokens))  # [B, T, V]

    def loss(self, tokens: torch.Tensor) -> torch.Tensor:
        """Next-token cross-entropy (nats) over positions 1..T−1."""
        return next_token_loss(self, tokens)


def _config(budget: Budget, optimizer: str, lr: Finite | None, steps: int, seed: int) -> TrainConfig:
    lrs = sizes(budget).lrs
    return budget.train_config(optimizer, given(lr, lrs[choice("optimizer", optimizer, lrs)]), steps, seed=seed)


def build_lm(
    kind, depth: Depth, budget: Budget, width: Count | None = None, seed: Seed = 0, device=None
) -> MLPLanguageModel:
    """The budget's MLP language model of ``kind`` at ``depth``, initialized from ``seed``."""
    with seeded(seed):
        model = MLPLanguageModel(budget.vocab_size, given(width, sizes(budget).train_width), depth, kind)
    return model.to(device or default_device())


MLP_WEIGHTS = ("fc1_w", "fc2_w")  # W1ᵀ and W2ᵀ of every block: what the MLP has and trains
MLP_FROZEN = ("fc1_b", "fc2_b", "ffn_gate")  # the engine block's biases (held at 0) and gate (held at ε)


def mlp_config(kind, depth: Depth, budget: Budget, width: Count | None = None) -> ModelConfig:
    """:class:`MLPLanguageModel` as an engine config: one FFN sublayer per block (ReLU, hidden = width),
    no LayerNorm; ``plain`` is the style x ← f(x), an ε rule the style x ← x + g·f(x) whose gate g
    :func:`start_mlp` sets to ε and nothing trains."""
    width = given(width, sizes(budget).train_width)
    return ModelConfig(
        n_layers=depth,
        d_model=width,
        n_heads=1,
        d_ff=width,
        vocab_size=budget.vocab_size,
        norm="plain" if kind == "plain" else "rezero",
        block="mlp",
        activation="relu",
    )


@torch.no_grad()
def start_mlp(
    kind, depth: Depth, width: Count, vocab_size: Count, seed: Seed, stack: Stack, k: NonNegativeCount
) -> None:
    """Member k of ``stack`` becomes :class:`MLPLanguageModel` (``kind``, ``depth``) as drawn from
    ``seed``: its embedding, W1ᵀ, W2ᵀ and head copied in, the block biases 0, the gate ε (residual kinds)."""
    member_index(stack, k)
    built = {"depth": stack.n_layers, "width": stack.cfg.d_model, "vocab_size": stack.cfg.vocab_size}
    asked = {"depth": depth, "width": width, "vocab_size": vocab_size}
    if built != asked or stack.cfg.block != "mlp":
        raise ValueError(f"start_mlp: the stack is a {stack.cfg.block} stack of {built}, not an MLP stack of {asked}")
    with seeded(seed):
        model = MLPLanguageModel(vocab_size, width, depth, kind)
    stack.member("embed", k).copy_(model.embed.weight)  # [V, d]
    stack.member("fc1_w", k).copy_(torch.stack([b.w1.weight.T for b in model.blocks]))  # [N, d, hidden]
    stack.member("fc2_w", k).copy_(torch.stack([b.w2.weight.T for b in model.blocks]))  # [N, hidden, d]
    stack.member("head_w", k).copy_(model.head.weight.T)  # [d, V]
    stack.member("head_b", k).copy_(model.head.bias.view(1, -1))  # [1, V]
    for name in ("fc1_b", "fc2_b"):
        stack.member(name, k).zero_()
    if kind != "plain":
        stack.member("ffn_gate", k).fill_(model.stack.eps)


def _mlp_trackers(every: int) -> list:
    """The MLP runs' tracker: per-block gradient norms of W1 and W2 (module-level: worker processes)."""
    return [BlockGradNorms(every, names=MLP_WEIGHTS)]


def mlp_plan(settings: list[tuple], budget: Budget) -> RunPlan:
    """The MLP language model for every (kind, depth, width, TrainConfig) of ``settings`` (seed: the config's) as
    one train_many call, as few ensembles as the settings allow: each run starts from :func:`start_mlp`'s weights
    on the Markov language of its seed, the block biases frozen, W1 and W2's gradients tracked per block."""
    if not settings:
        raise ValueError("settings is empty: give at least one (kind, depth, width, TrainConfig)")
    return RunPlan(
        [mlp_config(kind, n, budget, w) for kind, n, w, _ in settings],
        [cfg for *_, cfg in settings],
        [MarkovLanguage(budget.vocab_size, seed=cfg.seed) for *_, cfg in settings],
        inits=[functools.partial(start_mlp, kind, n, w, budget.vocab_size, cfg.seed) for kind, n, w, cfg in settings],
        frozen=MLP_FROZEN,
        trackers=functools.partial(_mlp_trackers, every_for(settings[0][3].steps, sizes(budget).track_points)),
    )


def mlp_runs(settings: list[tuple], context: RunContext) -> list[History]:
    """Train :func:`mlp_plan` of ``settings`` (each one :func:`mlp_setting`; none: no run) where ``context`` says."""
    if not settings:
        return []
    return context.train(mlp_plan(settings, context.budget))


def mlp_setting(
    kind,
    depth: Depth,
    budget: Budget,
    optimizer: str = "adam",
    lr: Positive | None = None,
    steps: Repeats | None = None,
    width: Count | None = None,
    seed: Seed = 0,
) -> tuple:
    """One run of :func:`mlp_runs`, (kind, depth, width, TrainConfig), with the budget's defaults (the
    chapter's rate for ``optimizer``, ``train_steps``, ``train_width``): what the slider trains and
    the chapter's plan counts (:func:`work`)."""
    rb = sizes(budget)
    return kind, depth, given(width, rb.train_width), _config(budget, optimizer, lr, given(steps, rb.train_steps), seed)


def train_sweep_settings(budget: Budget) -> list[tuple[tuple, tuple]]:
    """:func:`train_sweep`'s runs: ((N, optimizer, kind), :func:`mlp_setting`) for every kind at the budget's
    ``train_depths`` under both optimizers and ``train_seeds`` seeds (:func:`work` counts the same list)."""
    rb = sizes(budget)
    return [
        ((n, opt, kind), mlp_setting(kind, n, budget, opt, seed=s))
        for n in rb.train_depths
        for opt in OPTIMIZERS
        for kind in STACK_KINDS
        for s in range(rb.train_seeds)
    ]


def transformer_sweep_settings(budget: Budget) -> list[tuple[tuple, tuple]]:
    """:func:`transformer_sweep`'s runs: ((N, kind), (kind, N, TrainConfig)), Adam at ``transformer_lr``,
    ``train_seeds`` seeds each (:func:`work` counts the same list)."""
    rb = sizes(budget)
    return [
        ((n, kind), transformer_setting(kind, n, budget, "adam", rb.transformer_lr, seed=s))
        for n in rb.transformer_depths
        for kind in STACK_KINDS
        for s in range(rb.train_seeds)
    ]


@torch.no_grad()
def token_cosines(
    kind, depth: Depth, budget: Budget, width: Count | None = None, seed: Seed = 0, device=None
) -> tuple[float, float]:
    """At initialization, the mean cosine between the final hidden states of the V different tokens
    (what the head must tell apart), measured and predicted from each pair's embedding cosine by
    :func:`.probes.predicted_cosine`. Returns (measured, predicted)."""
    model = build_lm(kind, depth, budget, width, seed, device)
    tokens = torch.arange(model.head.out_features, device=next(model.parameters()).device)  # all V tokens
    x0, xn = model.embed(tokens), model.hidden(tokens)  # [V, d] each

    def cosines(x):
        x = F.normalize(x.double(), dim=-1)
        c = x @ x.T  # [V, V]
        return c[~torch.eye(len(x), dtype=torch.bool, device=c.device)]

    pred = [predicted_cosine(kind, depth, float(c)) for c in cosines(x0)]
    return float(cosines(xn).mean()), sum(pred) / len(pred)


@torch.no_grad()
def forward_stable_init(model: TransformerLM) -> TransformerLM:
    """Re-initialize every block of ``model`` so that each sublayer keeps the second moment of its
    input on its own, as the plain MLP does: fc1 He, E[w²] = 2/d (ReLU halves E[h²]); fc2, v and out
    LeCun, E[w²] = 1/fan_in; q and k keep their Xavier init (1/d, square). So E[F(x)²] = E[x²] for
    the FFN, and for attention along the value path (exactly, if a query attends to one key)."""
    for block in model.blocks:
        nn.init.normal_(block.ffn.fc1.weight, std=math.sqrt(2.0 / block.ffn.fc1.in_features))
        for linear in (block.ffn.fc2, block.attn.v_proj, block.attn.out_proj):
            nn.init.normal_(linear.weight, std=math.sqrt(1.0 / linear.in_features))
    return model


def transformer_config(kind: str | float, depth: Depth, budget: Budget) -> ModelConfig:
    """:func:`build_transformer`'s config: style ``plain``, or ``none`` with the branch gain β = √ε."""
    if kind == "plain":
        return budget.model_config(depth, norm="plain")
    return budget.model_config(depth, norm="none", beta=math.sqrt(eps_for_depth(kind, depth)))


def build_transformer(kind: str | float, depth: Depth, budget: Budget, seed: Seed = 0, device=None) -> TransformerLM:
    """The budget's Transformer without normalization at ``depth``: ``kind`` = "plain" (x ← F(x),
    :func:`forward_stable_init`) or an ε rule (x ← x + F(x) with the branch weights, v and out, fc1
    and fc2, initialized with gain β = √ε, so every branch starts as ε·F: ReLU and attention's value
    path are linear in each)."""
    model = build_model(transformer_config(kind, depth, budget), seed=seed, device=device or default_device())
    if kind == "plain":
        with seeded(seed):
            forward_stable_init(model)
    return model


@torch.no_grad()
def start_transformer(kind: str | float, cfg: ModelConfig, seed: Seed, stack: Stack, k: NonNegativeCount) -> None:
    """Member k of ``stack`` becomes :func:`build_transformer`'s model of ``kind`` (config ``cfg``) from ``seed``."""
    member_index(stack, k)
    model = build_model(cfg, seed=seed, device="cpu")
    if kind == "plain":
        with seeded(seed):
            forward_stable_init(model)
    load_reference(stack, k, model)


def _transformer_trackers(every: int) -> list:
    """The Transformer runs' tracker: per-block gradient norms (module-level: worker processes)."""
    return [BlockGradNorms(every)]


def transformer_plan(settings: list[tuple], budget: Budget) -> RunPlan:
    """:func:`build_transformer`'s model for every (kind, depth, TrainConfig) of ``settings`` as one train_many
    call, on the Markov language of each run's seed (the config's), as few ensembles as the settings allow, each
    run starting from :func:`start_transformer`'s weights, gradients tracked per block."""
    if not settings:
        raise ValueError("settings is empty: give at least one (kind, depth, TrainConfig)")
    cfgs = [transformer_config(kind, n, budget) for kind, n, _ in settings]
    return RunPlan(
        cfgs,
        [cfg for *_, cfg in settings],
        [MarkovLanguage(budget.vocab_size, seed=cfg.seed) for *_, cfg in settings],
        inits=[
            functools.partial(start_transformer, kind, mc, cfg.seed)
            for (kind, _, cfg), mc in zip(settings, cfgs, strict=True)
        ],
        trackers=functools.partial(_transformer_trackers, every_for(settings[0][2].steps, sizes(budget).track_points)),
    )


def transformer_runs(settings: list[tuple], context: RunContext) -> list[History]:
    """Train :func:`transformer_plan` of ``settings`` (each one :func:`transformer_setting`) where ``context``
    says."""
    return context.train(transformer_plan(settings, context.budget))


def transformer_setting(
    kind: str | float,
    depth: Depth,
    budget: Budget,
    optimizer: str = "adam",
    lr: Positive | None = None,
    steps: Repeats | None = None,
    seed: Seed = 0,
) -> tuple:
    """One run of :func:`transformer_runs`, (kind, depth, TrainConfig): :func:`build_transformer`'s model of
    ``kind`` at ``depth`` on the Markov language, with the budget's defaults (the chapter's rate for
    ``optimizer``, ``train_steps``)."""
    return kind, depth, _config(budget, optimizer, lr, given(steps, sizes(budget).train_steps), seed)


@torch.no_grad()
def position_cosine(
    kind: str | float, depth: Depth, budget: Budget, seed: Seed = 0, device=None
) -> tuple[float, float]:
    """At initialization, the mean cosine between the hidden states of different positions of the
    same sequence, at the input x_0 and at the output x_N: (cos_0, cos_N). Pure attention stacks
    drive it to 1 (the rank collapse of Dong et al., 2021), leaving the head nothing to tell apart."""
    model = build_transformer(kind, depth, budget, seed, device)
    dev = next(model.parameters()).device
    gen = generator(seed)
    tokens = (
        MarkovLanguage(budget.vocab_size, seed=seed).sample(budget.batch_size, budget.seq_len, gen).to(dev)
    )  # [B, T]
    _, stream = model.hidden(tokens, return_stream=True)

    def mean_cos(x):  # x: [B, T, d]
        x = F.normalize(x.double(), dim=-1)
        c = x @ x.transpose(1, 2)  # [B, T, T]
        off = ~torch.eye(x.size(1), dtype=torch.bool, device=c.device)
        return float(c[:, off].mean())

    return mean_cos(stream[0]), mean_cos(stream[-1])


def outcome(hist: History) -> str:
    """One phrase: diverged at step k, or the fraction of the way from the plateau to the floor."""
    if hist.diverged:
        return f"diverged at step {hist.diverged_at}"
    return f"learned {hist.fraction_learned():.3g}"


def train_sweep(context: RunContext) -> dict[tuple, list[History]]:
    """The MLP language models of every kind at the budget's ``train_depths`` under both optimizers,
    from ``train_seeds`` seeds each (initialization and data stream): (N, optimizer, kind) → one
    History per seed."""
    runs = train_sweep_settings(context.budget)
    hists = mlp_runs([setting for _, setting in runs], context)
    out: dict[tuple, list[History]] = {}
    for (key, _), h in zip(runs, hists, strict=True):
        out.setdefault(key, []).append(h)
    return out


def first_seed(runs: dict[tuple, list[History]]) -> dict[tuple, History]:
    """Seed 0 of each run (what the figures draw; the verdicts read every seed)."""
    return {key: hists[0] for key, hists in runs.items()}


TOKEN_COSINE_SEEDS = 3  # random stacks per (N, kind) whose token (and position) cosines are read (the door's fewest)


def token_cosine_sweep(budget: Budget) -> dict[tuple, list[tuple[float, float]]]:
    """:func:`token_cosines` at every (N, kind) of the training runs, one random stack per seed:
    (N, kind) → [(measured, predicted) per seed]."""
    return {
        (n, kind): [token_cosines(kind, n, budget, seed=s) for s in range(TOKEN_COSINE_SEEDS)]
        for n in sizes(budget).train_depths
        for kind in STACK_KINDS
    }


@dataclass
class TransformerSweep:
    """The Transformer variant: Adam runs and the position cosines at init, per (N, kind)."""

    depths: tuple[int, ...]
    kinds: tuple[str, ...]
    lr: Positive
    runs: dict[tuple, list[History]]  # (N, kind) → one History per seed
    cosines: dict[tuple, list[tuple[float, float]]]  # (N, kind) → (cos at x_0, cos at x_N), one random stack per seed


def transformer_sweep(context: RunContext) -> TransformerSweep | None:
    """Every kind at the budget's ``transformer_depths``, ``train_seeds`` seeds each, and the position cosines of
    TOKEN_COSINE_SEEDS random stacks per setting (None when the budget skips the variant)."""
    budget = context.budget
    rb = sizes(budget)
    if not rb.transformer_depths:
        return None
    settings = transformer_sweep_settings(budget)
    hists = transformer_runs([setting for _, setting in settings], context)
    runs: dict[tuple, list[History]] = {}
    for (key, _), h in zip(settings, hists, strict=True):
        runs.setdefault(key, []).append(h)
    cosines = {
        (n, kind): [position_cosine(kind, n, budget, seed) for seed in range(TOKEN_COSINE_SEEDS)]
        for n in rb.transformer_depths
        for kind in STACK_KINDS
    }
    return TransformerSweep(rb.transformer_depths, STACK_KINDS, rb.transformer_lr, runs, cosines)


# ---- the chapter's work, for its estimate ------------------------------------------------------------


def work(budget: Budget) -> list[MLPPasses | ProbeCalls | StackPasses | TrainRuns]:
    """What the chapter computes at ``budget``, as :mod:`deepnotes.cost.model` counts it (the page adds its
    derivations and figures: :mod:`deepnotes.chapters.catalog`): the probes
    (:func:`~deepnotes.chapters.why_residuals.probes.probes_work`), then

        train_sweep        :func:`mlp_plan` of :func:`train_sweep_settings`
        transformer_sweep  :func:`transformer_plan` of :func:`transformer_sweep_settings` (none where the budget
                           has no transformer_depths)
        spectra            :func:`~deepnotes.chapters.why_residuals.spectrum.spectra_work`
        slider "growth"    the precomputed grid (slider_depths × slider_widths × slider_exponents): a
                           jacobian_growth probe and a one-run mlp_runs of slider_steps steps per setting, and one
                           plain mlp_runs per depth and width (cached across exponents)

    The training ensembles are exact (checked against the build's log); the rest are estimates. Left out as
    small: plain_moments (one float64 pass of a train_width stack of grad_depths[0] blocks), the branch singular
    values and orthogonal cosines, token_cosine_sweep and position_cosine (one forward each at init, beside
    hundreds of training steps). Nothing depends on results; the live panel runs nothing at build time."""
    rb = sizes(budget)
    transformers = [setting for _, setting in transformer_sweep_settings(budget)]
    slider = [
        w
        for n in rb.slider_depths
        for width in rb.slider_widths
        for w in [
            *growth_probe_calls(rb.slider_exponents, width, n, rb.probe_batch),
            *(  # one one-run mlp_runs per setting, as the slider calls it
                run
                for kind in ("plain", *rb.slider_exponents)
                for run in planned_ensembles(
                    mlp_plan([mlp_setting(kind, n, budget, steps=rb.slider_steps, width=width)], budget)
                )
            ),
        ]
    ]
    return [
        *probes_work(budget),
        *planned_ensembles(mlp_plan([setting for _, setting in train_sweep_settings(budget)], budget)),
        *(planned_ensembles(transformer_plan(transformers, budget)) if transformers else ()),
        *spectra_work(budget),
        *slider,
    ]
