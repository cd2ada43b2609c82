"""Training runs and figures of the chapter "Why residuals?": deep plain and residual MLPs (and, at
the gpu budget, Transformers) on the synthetic Markov language, and the slider's figure.

The MLP language model reads one token and predicts the next: embedding (N(0, 1) entries, so
E[x_0²] = 1) → the :class:`residuals.ResidualMLP` stack → a linear head. The task is a first-order
Markov chain, so this model can reach the entropy-rate floor; a model that learns nothing sits on
the context-free plateau. Runs reuse :func:`deepnotes.train.train` and its :class:`History`.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from deepnotes.core.budget import Budget, device as default_device, get_budget
from deepnotes.core.config import TrainConfig
from deepnotes.core.data import MarkovLanguage
from deepnotes.core.models import TransformerLM, build_model
from deepnotes.chapters.why_residuals.experiments import (EPS_RULES, KINDS, ResidualMLP, branch_weight, jacobian_growth, predicted_cosine,
                        predicted_log_growth)
from deepnotes.core.train import History, train
from deepnotes.core.trackers import BlockGradNorms, every_for
from deepnotes.show.palette import PALETTE



def label(kind) -> str:
    """"plain", or "ε = <rule>" for a residual stack."""
    return "plain" if kind == "plain" else f"ε = {kind}" if isinstance(kind, str) else f"ε = N^-{kind:g}"


class MLPLanguageModel(nn.Module):
    """tokens [B, T] → embedding [B, T, d] → N layers (plain or x + εf(x)) → logits [B, T, V]."""

    def __init__(self, vocab_size: int, width: int, depth: int, kind: str):
        super().__init__()
        if kind not in KINDS and isinstance(kind, str):
            raise ValueError(f"unknown kind {kind!r}; allowed: {', '.join(KINDS)}")
        residual = kind != "plain"
        self.embed = nn.Embedding(vocab_size, width)
        self.stack = ResidualMLP(width, depth, branch_weight(kind, depth) if residual else 1.0, residual)
        self.head = nn.Linear(width, vocab_size)
        with torch.no_grad():
            nn.init.normal_(self.embed.weight, std=1.0)
            nn.init.normal_(self.head.weight, std=1.0 / math.sqrt(width))
            nn.init.zeros_(self.head.bias)

    @property
    def blocks(self) -> nn.ModuleList:
        return self.stack.blocks

    def hidden(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.stack(self.embed(tokens))                      # [B, T, d]

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.head(self.hidden(tokens))                      # [B, T, V]

    def loss(self, tokens: torch.Tensor) -> torch.Tensor:
        """Next-token cross-entropy (nats) over positions 1..T−1."""
        logits = self(tokens[:, :-1])
        return F.cross_entropy(logits.reshape(-1, logits.size(-1)), tokens[:, 1:].reshape(-1))


def _config(budget: Budget, optimizer: str, lr: float | None, steps: int, seed: int) -> TrainConfig:
    return TrainConfig(optimizer=optimizer, lr=lr or budget.why_residuals.lrs[optimizer], steps=steps, batch_size=budget.batch_size,
                       seq_len=budget.seq_len, seed=seed)


def build_lm(kind, depth: int, budget: Budget, width: int | None = None, seed: int = 0, device=None) -> MLPLanguageModel:
    """The budget's MLP language model of ``kind`` at ``depth``, initialized from ``seed``."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = MLPLanguageModel(budget.vocab_size, width or budget.why_residuals.train_width, depth, kind)
    return model.to(device or default_device())


def mlp_run(kind: str, depth: int, budget: Budget | None = None, optimizer: str = "adam", lr: float | None = None,
            steps: int | None = None, width: int | None = None, seed: int = 0, device=None,
            progress: bool = False) -> History:
    """Train the MLP language model of ``kind`` ("plain" or an ε rule) at ``depth``."""
    budget = budget or get_budget()
    cfg = _config(budget, optimizer, lr, steps or budget.why_residuals.train_steps, seed)
    model = build_lm(kind, depth, budget, width, seed, device)
    return train(model, MarkovLanguage(budget.vocab_size, seed=seed), cfg, progress=progress,
                 trackers=[BlockGradNorms(every_for(cfg.steps, budget.why_residuals.track_points))])


@torch.no_grad()
def token_cosines(kind, depth: int, budget: Budget | None = None, width: int | None = None, seed: int = 0,
                  device=None) -> tuple[float, float]:
    """At initialization, the mean cosine between the final hidden states of the V different tokens
    (what the head must tell apart), measured and predicted from each pair's embedding cosine by
    :func:`residuals.predicted_cosine`. Returns (measured, predicted)."""
    model = build_lm(kind, depth, budget or get_budget(), width, seed, device)
    tokens = torch.arange(model.head.out_features, device=next(model.parameters()).device)   # all V tokens
    x0, xn = model.embed(tokens), model.hidden(tokens)                   # [V, d] each

    def cosines(x):
        x = F.normalize(x.double(), dim=-1)
        c = x @ x.T                                                      # [V, V]
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


def build_transformer(kind: str, depth: int, budget: Budget | None = None, seed: int = 0, device=None) -> TransformerLM:
    """The budget's Transformer without normalization at ``depth``: ``kind`` = "plain" (x ← F(x),
    :func:`forward_stable_init`) or an ε rule (x ← x + F(x) with the branch weights, v and out, fc1
    and fc2, initialized with gain β = √ε, so every branch starts as ε·F: ReLU and attention's value
    path are linear in each)."""
    budget = budget or get_budget()
    if kind == "plain":
        cfg = budget.model_config(depth, norm="plain")
    else:
        cfg = budget.model_config(depth, norm="none", beta=math.sqrt(branch_weight(kind, depth)))
    model = build_model(cfg, seed=seed, device=device or default_device())
    if kind == "plain":
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            forward_stable_init(model)
    return model


def transformer_run(kind: str, depth: int, budget: Budget | None = None, optimizer: str = "adam",
                    lr: float | None = None, steps: int | None = None, seed: int = 0, device=None,
                    progress: bool = False) -> History:
    """Train :func:`build_transformer`'s model of ``kind`` at ``depth`` on the Markov language."""
    budget = budget or get_budget()
    model = build_transformer(kind, depth, budget, seed, device)
    cfg = _config(budget, optimizer, lr, steps or budget.why_residuals.train_steps, seed)
    return train(model, MarkovLanguage(budget.vocab_size, seed=seed), cfg, progress=progress,
                 trackers=[BlockGradNorms(every_for(cfg.steps, budget.why_residuals.track_points))])


@torch.no_grad()
def position_cosine(kind: str, depth: int, budget: Budget | None = None, seed: int = 0, device=None) -> tuple[float, float]:
    """At initialization, the mean cosine between the hidden states of different positions of the
    same sequence, at the input x_0 and at the output x_N: (cos_0, cos_N). Pure attention stacks
    drive it to 1 (the rank collapse of Dong et al., 2021), leaving the head nothing to tell apart."""
    budget = budget or get_budget()
    model = build_transformer(kind, depth, budget, seed, device)
    dev = next(model.parameters()).device
    gen = torch.Generator().manual_seed(seed)
    tokens = MarkovLanguage(budget.vocab_size, seed=seed).sample(budget.batch_size, budget.seq_len, gen).to(dev)  # [B, T]
    _, stream = model.hidden(tokens, return_stream=True)

    def mean_cos(x):                                                   # x: [B, T, d]
        x = F.normalize(x.double(), dim=-1)
        c = x @ x.transpose(1, 2)                                      # [B, T, T]
        off = ~torch.eye(x.size(1), dtype=torch.bool, device=c.device)
        return float(c[:, off].mean())
    return mean_cos(stream[0]), mean_cos(stream[-1])


def outcome(hist: History) -> str:
    """One phrase: diverged at step k, or the fraction of the way from the plateau to the floor."""
    if hist.diverged:
        return f"diverged at step {hist.diverged_at}"
    return f"learned {hist.fraction_learned():.3g}"


def loss_panel(ax, runs: dict, title: str = "", top_factor: float = 1.6) -> None:
    """Loss curves of ``runs`` (kind → History) clipped at ``top_factor`` × the context-free
    plateau, so that a run starting at a loss of 10^14 does not flatten the others: a clipped run
    runs along the top edge and gives its largest (and, unless diverged, its last) loss in its
    label; a diverged one ends in an ✕ (at the top edge if clipped)."""
    floor = unigram = None
    for kind, hist in runs.items():
        floor, unigram = hist.floor, hist.unigram
        top = top_factor * unigram
        text = label(kind)
        if hist.losses and max(hist.losses) > top:           # drawn at the top edge where clipped
            finite = [v for v in hist.losses if math.isfinite(v)]
            last = f", last {finite[-1]:.3g}" if finite and not hist.diverged else ""
            text += f" (clipped; max {max(hist.losses):.3g}{last})"
        if hist.diverged:
            text += f", diverged at step {hist.diverged_at}"
        ys = [min(v, top) for v in hist.losses]
        line, = ax.plot(range(len(ys)), ys, lw=1, color=PALETTE.get(kind), label=text)
        if hist.diverged:
            ax.plot([hist.diverged_at], [ys[-1] if ys else top], "x", ms=9, mew=2, color=line.get_color(), clip_on=False)
    if floor is not None:
        ax.axhline(floor, color="k", ls="--", lw=1, label=f"floor (entropy rate) {floor:.3f}")
        ax.axhline(unigram, color="k", ls=":", lw=1, label=f"context-free plateau {unigram:.3f}")
        ax.set_ylim(0.9 * floor, top_factor * unigram * 1.03)
    ax.set_xlabel("step")
    ax.set_ylabel("loss (nats/token)")
    if title:
        ax.set_title(title, fontsize=9)
    ax.legend(fontsize=6)


def gradient_panel(ax, runs: dict, title: str = "", xlabel: str = "layer l") -> None:
    """‖∂L/∂θ_l‖ per layer (or block) at step 0 of each of ``runs`` (kind → History), log scale.
    Non-finite norms (a run whose first loss already overflowed) are left out and counted in the
    label."""
    for kind, hist in runs.items():
        if not hist.grad_norms:
            continue
        g0 = hist.grad_norms[0]                                          # [N]
        pts = [(l, g) for l, g in enumerate(g0, start=1) if math.isfinite(g) and g > 0]
        text = label(kind) + (f" ({len(g0) - len(pts)} of {len(g0)} non-finite)" if len(pts) < len(g0) else "")
        ax.semilogy([l for l, _ in pts], [g for _, g in pts], color=PALETTE.get(kind), label=text)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(r"$\|\partial L/\partial\theta_l\|$ at step 0")
    if title:
        ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)


def log10_axis(ax) -> None:
    """A vertical axis of log10 values that spans ε = 1's 2^N: linear within ±1, logarithmic beyond,
    ticks labelled with the log10 values themselves (100 means a factor 10^100)."""
    from matplotlib.ticker import FuncFormatter
    ax.set_yscale("symlog", linthresh=1)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))


def growth_curves(ax, probe, title: str = "") -> None:
    """Measured log10 ‖vJ‖²/‖v‖² through the top k layers (median over v) against the two predictions."""
    k = range(probe.depth + 1)
    per_layer = {name: value / probe.depth for name, value in predicted_log_growth(probe.kind, probe.depth).items()}
    ln10 = math.log(10)
    ax.plot(k, [c / ln10 for c in probe.curve], lw=1.5, label="measured (median over v)")
    ax.plot(k, [i * per_layer["high_d"] / ln10 for i in k], "k--", lw=1, label=r"$(1+\varepsilon^2)^k$")
    if probe.kind != "plain":
        ax.plot(k, [i * per_layer["one_d"] / ln10 for i in k], "k:", lw=1, label=r"$(1+\varepsilon)^{2k}$ (1-D)")
    ax.set_xlabel("layers k pulled back through")
    ax.set_ylabel(r"$\log_{10}\|vJ\|^2/\|v\|^2$")
    log10_axis(ax)
    if title:
        ax.set_title(title, fontsize=8)
    ax.legend(fontsize=7)


def growth_figure(probes: dict, widths, depths):
    """Experiment 2: per width, the median log10 ‖vJ‖²/‖v‖² of each stack kind against depth N
    (markers), the high-dimensional (1+ε²)^N (solid) and the one-dimensional (1+ε)^{2N} (dashed).
    probes: (width, kind, N) → :class:`deepnotes.residuals.JacobianProbe`."""
    from deepnotes.show import plots
    ln10 = math.log(10)
    kinds = sorted({kind for _, kind, _ in probes}, key=(("plain",) + EPS_NAMES).index)
    fig, axes = plots.new_figure(len(widths), width=3.7, height=3.2)
    for ax, width in zip(axes, widths):
        for kind in kinds:
            ys = [probes[(width, kind, n)].typical / ln10 for n in depths]
            ys = [y if math.isfinite(y) else -1e3 for y in ys]                # a stopped gradient: drawn at the bottom
            line, = ax.plot(depths, ys, "o", ms=4, color=PALETTE[kind], label=label(kind))
            pred = [predicted_log_growth(kind, n) for n in depths]
            ax.plot(depths, [p["high_d"] / ln10 for p in pred], "-", lw=1, color=line.get_color())
            if kind != "plain":
                ax.plot(depths, [p["one_d"] / ln10 for p in pred], "--", lw=1, color=line.get_color())
        ax.set_xscale("log")
        log10_axis(ax)
        ax.set_ylim(-1e3, 2e3)
        ax.set_xlabel("depth N")
        ax.set_title(f"width {width}", fontsize=9)
    axes[0].set_ylabel(r"$\log_{10}\|vJ\|^2/\|v\|^2$ (median)")
    axes[-1].plot([], [], "k-", lw=1, label=r"$(1+\varepsilon^2)^N$ (high-D)")
    axes[-1].plot([], [], "k--", lw=1, label=r"$(1+\varepsilon)^{2N}$ (1-D)")
    fig.legend(*axes[-1].get_legend_handles_labels(), loc="lower center", ncol=6, fontsize=8)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig


_PLAIN_RUNS: dict[tuple, History] = {}


def slider_figure(depth: int, width: int, exponent: float, budget: Budget | None = None, progress: bool = False):
    """The slider: Jacobian growth of a residual stack with ε = N^{−p}, and a short Adam run of the
    MLP language model, plain against residual with that ε."""
    from deepnotes.show import plots
    budget = budget or get_budget()
    probe = jacobian_growth(exponent, width, depth, batch=budget.why_residuals.probe_batch)
    key = (budget.name, depth, width)
    if key not in _PLAIN_RUNS:                  # the plain run does not depend on the exponent
        _PLAIN_RUNS[key] = mlp_run("plain", depth, budget, steps=budget.why_residuals.slider_steps, width=width, progress=progress)
    runs = {"plain": _PLAIN_RUNS[key],
            exponent: mlp_run(exponent, depth, budget, steps=budget.why_residuals.slider_steps, width=width, progress=progress)}
    fig, (ax_j, ax_l) = plots.new_figure(2, width=3.8, height=2.8)
    growth_curves(ax_j, probe, f"N={depth}, width {width}, ε = N^-{exponent:g} = {probe.eps:.3g}")
    loss_panel(ax_l, runs, title=f"Adam lr {budget.why_residuals.lrs['adam']:g}, {budget.why_residuals.slider_steps} steps")
    fig.tight_layout()
    return fig


EPS_NAMES = tuple(EPS_RULES)
