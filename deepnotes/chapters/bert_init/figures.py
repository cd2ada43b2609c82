"""Figures of the chapter "Why is BERT's initial standard deviation 0.02?": each function takes
measurements (or runs the cached experiment) and returns a matplotlib Figure."""

from __future__ import annotations

from deepnotes.chapters.bert_init.budget import sizes
from deepnotes.chapters.bert_init.experiments import (
    BERT_STD,
    MLM_FLOOR,
    InitProbe,
    MLMRun,
    article_gradient_prediction,
    cached_probe,
    cached_run,
    derived_ratios,
    xavier_scale_std,
)
from deepnotes.core.config import Budget, live_range
from deepnotes.core.ensembles import RunContext
from deepnotes.core.measure import unrelated_cosine_floor
from deepnotes.core.validate import Depth, Positive
from deepnotes.show.palette import PALETTE
from deepnotes.show.readable import TEXT_PT, TITLE_PT

FIGURES = 6  # the figures the page shows besides its sliders' frames (tests/test_book.py counts them)

# roles in the one palette: FFN and attention as Post-LN's and Pre-LN's colours, measured in black,
# the derivation in green, the annotated section's prediction in orange, everything else grey
FFN, ATTENTION = PALETTE["post"], PALETTE["pre"]
MEASURED, DERIVED, ARTICLE, OTHER = PALETTE["plain"], PALETTE["deepnorm"], PALETTE["alpha=1"], PALETTE["none"]
GRID_POINTS = 41  # points of the derived curves across the std sweep


def init_figure(std: Positive, depth: Depth, budget: Budget, progress: bool = False):
    """Slider 1: branch ratios, the identity path's weight and the per-block gradients at init."""
    from deepnotes.show import plots

    live_range("depth", depth, sizes(budget).live_depth, budget)
    p = cached_probe(std, depth, sizes(budget).probe_width, budget)
    layers = range(1, depth + 1)
    fig, (ax_v, ax_w, ax_g, ax_key) = plots.new_figure(3, height=2.6, key=True)  # the fourth slot: v's key
    derived = [derived_ratios(std, r) for r in p.rho]
    ax_v.semilogy(layers, p.ffn_ratio, "o", color=FFN, ms=4, label="FFN, measured")
    ax_v.semilogy(layers, [f for _, f in derived], "-", color=FFN, lw=1, label="FFN, derived")
    ax_v.semilogy(layers, p.attn_ratio, "s", color=ATTENTION, ms=4, label="attention, measured")
    ax_v.semilogy(layers, [a for a, _ in derived], "-", color=ATTENTION, lw=1, label="attention, derived (ρ measured)")
    ax_v.set_xlabel("layer l")
    ax_v.set_ylabel("branch ratio v = E[F²]/E[x²]")
    plots.legend_panel(ax_key, ax_v, title="top left")
    ax_w.plot(range(depth + 1), p.cos_x0, "o", color=MEASURED, ms=4, label="measured cos(x_l, x_0)")
    ax_w.plot(range(depth + 1), p.derived_cos, "-", color=DERIVED, label=r"derived $\prod (1+v)^{-1/2}$")
    ax_w.set_ylim(-0.05, 1.05)
    ax_w.set_xlabel("layer l")
    ax_w.set_ylabel("weight of x_0 in x_l")
    ax_w.set_title(f"BERT-equivalent std {std:g}, N={depth}", fontsize=TITLE_PT)
    ax_w.legend(fontsize=TEXT_PT)
    g = p.grad_norms
    ax_g.semilogy(layers, [v / g[-1] for v in g], "o-", color=MEASURED, ms=4, label="measured")
    ax_g.semilogy(layers, article_gradient_prediction(p), "--", color=ARTICLE, label="annotated eq. (42), real v")
    ax_g.set_xlabel("block l")
    ax_g.set_ylabel(r"$\|\partial L/\partial\theta_l\| / \|\partial L/\partial\theta_N\|$")
    ax_g.legend(fontsize=TEXT_PT)
    return fig


def gain_figure(std: Positive, head_transform: bool, budget: Budget, progress: bool = False):
    """Slider 2: every LayerNorm's mean γ during MLM training, the last encoder LN and the head's LN
    highlighted, and the RMS of the (tied) output embedding rows."""
    from deepnotes.show import plots

    run = cached_run(std, head_transform, RunContext.here(budget, progress=progress))  # an entry point: the widget's
    fig, (ax_g, ax_l) = plots.new_figure(2, height=2.8)
    for name, values in run.gains.items():
        if name in (run.last_name, "head"):
            continue
        ax_g.plot(run.gain_steps, values, color=OTHER, lw=0.8)
    ax_g.plot(run.gain_steps, run.last_encoder_gain(), color=FFN, lw=2, label="last encoder LN")
    if "head" in run.gains:
        ax_g.plot(run.gain_steps, run.gains["head"], color=ATTENTION, lw=2, label="extra head LN")
    ax_g.plot([], [], color=OTHER, label="other LNs")
    ax_e = ax_g.twinx()
    ax_e.plot(
        run.gain_steps, [e / run.embed_rms[0] for e in run.embed_rms], ":", color=DERIVED, label="embedding RMS / init"
    )
    ax_e.set_ylabel("embedding RMS / its init", fontsize=TEXT_PT)
    ax_g.set_xlabel("step")
    ax_g.set_ylabel("mean γ")
    ax_g.set_title(f"std {std:g}, extra Dense+LN: {'yes' if head_transform else 'no'}", fontsize=TITLE_PT)
    run_label = f"std {std:g}"
    plots.loss_curves(
        ax_l,
        {run_label: run.history},
        title="MLM loss",
        floor_label=MLM_FLOOR,
        colours={run_label: MEASURED},
        legend=False,
    )
    plots.key_below(fig, [ax_g, ax_e, ax_l], title=None)
    return fig


def _identity_after(ax, probes: dict[float, InitProbe]) -> None:
    """The weight of x_0 at the top of the stack against the init std: measured cos(x_N, x_0) (black dots)
    and the derived Π (1+v)^{-1/2} with the measured ρ (green line)."""
    stds = sorted(probes)
    ax.semilogx(stds, [probes[s].cos_x0[-1] for s in stds], "o", color=MEASURED, label="measured")
    ax.semilogx(stds, [probes[s].derived_cos[-1] for s in stds], "-", color=DERIVED, label="derived")
    ax.set_xlabel("init std")
    ax.set_ylabel(f"weight of x_0 after {probes[stds[0]].depth} layers")


def sweep_figure(probes: dict[float, InitProbe]):
    """Across init stds at one depth: branch ratios of layer 1, the weight of x_0 at the top, and the
    gradient ratio first/last block, each measured against the derivation."""
    from deepnotes.show import plots

    stds = sorted(probes)
    depth = probes[stds[0]].depth
    fig, (ax_v, ax_w, ax_g, ax_key) = plots.new_figure(3, height=2.6, key=True)  # the fourth slot: v's key
    last = GRID_POINTS - 1
    grid = [stds[0] * (stds[-1] / stds[0]) ** (k / last) for k in range(GRID_POINTS)]
    rho = sum(probes[stds[0]].rho) / depth
    ax_v.loglog(stds, [probes[s].ffn_ratio[0] for s in stds], "o", color=FFN, label="FFN, measured")
    ax_v.loglog(grid, [derived_ratios(s, rho)[1] for s in grid], "-", color=FFN, lw=1, label="FFN, derived")
    ax_v.loglog(stds, [probes[s].attn_ratio[0] for s in stds], "s", color=ATTENTION, label="attention, measured")
    ax_v.loglog(
        grid,
        [derived_ratios(s, rho)[0] for s in grid],
        "-",
        color=ATTENTION,
        lw=1,
        label=f"attention, derived (ρ={rho:.2f})",
    )
    ax_v.set_xlabel("init std (BERT-base equivalent)")
    ax_v.set_ylabel("branch ratio v, layer 1")
    plots.legend_panel(ax_key, ax_v, title="top left")
    _identity_after(ax_w, probes)
    ax_w.legend(fontsize=TEXT_PT)
    ax_g.loglog(
        stds, [probes[s].grad_norms[0] / probes[s].grad_norms[-1] for s in stds], "o-", color=MEASURED, label="measured"
    )
    ax_g.loglog(
        stds,
        [article_gradient_prediction(probes[s])[0] for s in stds],
        "--",
        color=ARTICLE,
        label="annotated eq. (42), real v",
    )
    ax_g.set_xlabel("init std")
    ax_g.set_ylabel("‖g_1‖ / ‖g_N‖")
    ax_g.legend(fontsize=TEXT_PT)
    for ax in (ax_v, ax_w, ax_g):
        ax.axvline(BERT_STD, color=OTHER, lw=0.8, ls=":")
    return fig


def answer(probes: dict[float, InitProbe]):
    """The chapter's answer in one small figure: left, the weight of x_0 after the stack against the std
    (:func:`_identity_after`); right, layer by layer at BERT's std and at the swept std nearest Xavier's q = 1
    (:func:`.experiments.xavier_scale_std`), each named at its curve's end; both with the band where a cosine
    cannot be told from unrelated vectors' (:func:`deepnotes.core.measure.unrelated_cosine_floor`)."""
    from matplotlib.ticker import NullFormatter

    from deepnotes.show import plots

    if BERT_STD not in probes:
        raise ValueError(f"probes has no std {BERT_STD} (BERT's): got {sorted(probes)}")
    bert = probes[BERT_STD]
    noise = unrelated_cosine_floor(bert.width)
    fig, (ax_s, ax_l) = plots.new_figure(2, height=2.0)
    _identity_after(ax_s, probes)
    ax_s.set_ylabel(f"weight of x_0\nafter {bert.depth} layers")  # two lines: the panel is short
    ax_s.axvline(BERT_STD, color=OTHER, lw=0.8, ls=":")
    ticks = sorted({min(probes), BERT_STD, max(probes)})  # the sweep's ends and BERT's std, written plainly
    ax_s.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax_s.xaxis.set_minor_formatter(NullFormatter())
    shown = [s for s in (BERT_STD, xavier_scale_std(list(probes))) if s is not None]
    lows = [v for p in probes.values() for v in (*p.cos_x0, *p.derived_cos)]  # cos ≤ 1 above; below, the data's
    for s, marker in zip(shown, ("o", "s"), strict=False):
        p = probes[s]
        ax_l.plot(range(p.depth + 1), p.cos_x0, marker, color=MEASURED, ms=4)
        ax_l.plot(range(p.depth + 1), p.derived_cos, "-", color=DERIVED, lw=1)
        ax_l.annotate(
            f"std {s:g}",
            (p.depth, p.derived_cos[-1]),
            xytext=(4, 0),
            textcoords="offset points",
            va="center",
            fontsize=TEXT_PT,
        )
    ax_l.set_xlim(-0.3, bert.depth * 1.6)  # room for the names at the curves' ends
    ax_l.set_xlabel("layer l")
    ax_l.set_ylabel("weight of x_0 in x_l")
    for ax in (ax_s, ax_l):
        ax.axhspan(-noise, noise, color="0.88", lw=0, zorder=0, label=f"|cos| < {noise:.2f}: no relation")
        ax.set_ylim(min(-noise, *lows) - 0.05, 1.08)
    plots.key_below(fig, [ax_s], title=None, ncol=3)
    return fig


def training_figure(runs: dict[float, tuple[MLMRun, ...]], budget: Budget):
    """Experiment 2: the MLM loss of every std's runs (the seeds' median, their range shaded), with the floor
    and the context-free plateau."""
    from deepnotes.show import plots

    b = sizes(budget)
    fig, (ax,) = plots.new_figure(1, height=3.2)
    plots.loss_curves(
        ax,
        {f"std {s:g}": [r.history for r in rs] for s, rs in runs.items()},  # the seeds' median, min-max band
        title=f"MLM, N={b.train_depth}, d={b.train_width}, warmup {b.train_warmup}",
        floor_label=MLM_FLOOR,
        legend=False,
    )
    plots.key_below(fig, [ax], title=None)
    return fig


def model_code():
    """The code this chapter is about, read from the package when the cell runs (file and line numbers
    included, so the page shows what the experiments run): ``trunc_normal_``."""
    from deepnotes.core.models import trunc_normal_
    from deepnotes.show.source import source_of

    return source_of(trunc_normal_, "BERT's initializer: a normal cut at ±2σ")
