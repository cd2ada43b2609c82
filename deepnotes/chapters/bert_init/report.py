"""The chapter's printed tables: the annotated §9.1–§9.3 numbers (quoted in :mod:`.claims`) beside the
measurements, and the LayerNorm gains of the training runs, as text."""

from __future__ import annotations

from deepnotes.chapters.bert_init.budget import sizes
from deepnotes.chapters.bert_init.claims import (
    PRINTED_GRAD,
    PRINTED_LAYERS_GRAD,
    PRINTED_LAYERS_VAR,
    PRINTED_TRAINING,
    PRINTED_VAR,
)
from deepnotes.chapters.bert_init.experiments import InitProbe, MLMRun, TableProbe, q_of
from deepnotes.core.config import Budget


def annotated_tables_text(own: dict[float, TableProbe], cut: dict[float, InitProbe], budget: Budget) -> str:
    """§9.1 (Var[x_l] and the weight of x_0) and §9.2 (‖g_l‖/‖g_12‖): printed | measured in the tables'
    own setting (uncut N(0, σ²), x_0 ~ N(0, I)) | measured in BERT's (cut at ±2σ, Markov tokens)."""
    b = sizes(budget)
    lines = [
        f"{b.table_depth} layers, width {b.table_width}. Columns: printed | the tables' setting: W ~ N(0, σ²) uncut, "
        "x_0 ~ N(0, I) | BERT's: W cut at ±2σ, Markov-language tokens",
        "§9.1 Var[x_l] (and cos(x_l, x_0), the weight of x_0)",
    ]
    for s in PRINTED_VAR:
        lines.append(f"  σ = {s:g} (q = {q_of(s, truncated=False):.2f} uncut, {q_of(s):.2f} cut)")
        lines += [
            f"    layer {layer:2d}: {PRINTED_VAR[s][k]:.3f} "
            f"| {own[s].stream_var[layer]:.3f} ({own[s].cos_x0[layer]:.3f})"
            f" | {cut[s].stream_var[layer]:.3f} ({cut[s].cos_x0[layer]:.3f})"
            for k, layer in enumerate(PRINTED_LAYERS_VAR)
        ]
    lines.append("§9.2 gradient norm of block l / block 12; the table's layer 0 is block 1 here")
    for s in PRINTED_GRAD:
        lines.append(f"  σ = {s:g}")
        lines += [
            f"    layer {layer:2d}: {PRINTED_GRAD[s][k]:.2f} "
            f"| {_grad_ratio(own[s], layer):.2f} | {_grad_ratio(cut[s], layer):.2f}"
            for k, layer in enumerate(PRINTED_LAYERS_GRAD)
        ]
    return "\n".join(lines)


def _grad_ratio(probe, layer: int) -> float:
    """‖g_layer‖/‖g_L‖ of a probe (blocks numbered from 1)."""
    return probe.grad_norms[layer - 1] / probe.grad_norms[-1]


def _seed_label(k: int, runs: tuple) -> str:
    """ " seed k" where a setting trained several seeds, else ""."""
    return f" seed {k}" if len(runs) > 1 else ""


def training_table_text(runs: dict[float, tuple[MLMRun, ...]], budget: Budget) -> str:
    """§9.3 printed (steps to converge, final loss) beside each run's (each seed's) steps to 50 % / 80 % of
    the way from the plateau to the floor (0-based, :meth:`History.steps_to`), the loss on the held-out sample
    and fraction learned."""
    w = sizes(budget).loss_window
    lines = [
        "§9.3 (printed: steps to converge, final loss | measured here: steps to 50 % / 80 % of the way to "
        "the floor, held-out loss, learned)"
    ]
    for s, seeds in runs.items():
        p = PRINTED_TRAINING.get(s, ("—", float("nan")))
        for k, r in enumerate(seeds):
            h = r.history
            lines.append(
                f"  std {s:<7g}{_seed_label(k, seeds)} printed {p[0]:>13s} {p[1]:.2f} | "
                f"{str(h.steps_to(0.5, window=w)):>5s} {str(h.steps_to(0.8, window=w)):>5s} {h.end_loss(w):.3f} "
                f"{h.fraction_learned(w):.2f}"
            )
    return "\n".join(lines)


def gain_summary_text(gain_runs: dict[tuple[float, bool], tuple[MLMRun, ...]], budget: Budget) -> str:
    """Per run: the last encoder γ from start to end, the range of the other LNs' final γ, the head
    LN's final γ, the embedding's growth and the fraction learned."""
    w = sizes(budget).loss_window
    lines = []
    for (s, head), seeds in gain_runs.items():
        lines += [_gain_line(s, head, k, seeds, w) for k in range(len(seeds))]
    return "\n".join(lines)


def _gain_line(s: float, head: bool, k: int, seeds: tuple[MLMRun, ...], w: int) -> str:
    """One run's line of :func:`gain_summary_text`."""
    r = seeds[k]
    last, others = r.last_encoder_gain(), r.final_other_gains()
    return (
        f"std {s:<5g}{_seed_label(k, seeds)} extra layer {'yes' if head else 'no '}: last encoder γ "
        f"{last[0]:.3f} → {last[-1]:.3f}; "
        f"other encoder LNs end in [{min(others):.3f}, {max(others):.3f}]"
        + (f"; head LN γ → {r.gains['head'][-1]:.3f}" if head else "")
        + f"; embedding RMS ×{r.embed_rms[-1] / r.embed_rms[0]:.2f}; learned {r.history.fraction_learned(w):.2f}"
    )


def derivation_numbers(stds: dict, ffn: dict, logits: dict) -> dict[str, str]:
    """The derivation's numbers the chapter's prose quotes (glued into it, :func:`deepnotes.show.prose.glue_values`),
    from :func:`.derive.bert_stds`, :func:`.derive.ffn_branch_table` and :func:`.derive.bert_logit_scale`:
    BERT's realized std 0.02·√γ, the FFN branch's share v (in %) and the identity path's weight per layer and
    after twelve layers at BERT's init and at Xavier's, the softmax's distance q/2 from uniform, and how many
    times the annotated section's s² understates v (v/s² at BERT's init)."""
    bert, xavier = ffn["rows"]["BERT 0.02 (cut at 2σ)"], ffn["rows"]["Xavier 1/√768"]
    actual = float(stds["actual"])
    return {
        "bert_actual_std": f"{actual:.4f}",
        "bert_ffn_share_pct": f"{100 * bert['v_ffn']:.0f}",
        "bert_identity_per_layer": f"{bert['w_layer']:.2f}",
        "bert_identity_after_depth": f"{bert['w_depth']:.2f}",
        "xavier_identity_after_depth": f"{xavier['w_depth']:.2g}",
        "logit_kl_from_uniform": f"{logits['kl_from_uniform']:.2f}",
        "annotation_understates": f"{round(bert['v_ffn'] / actual**2, -1):.0f}",  # to tens: "about"
    }
