"""Training runs of the chapter "Magnitude decomposition and the DeepNorm scalings": DeepNorm stacks
trained with each (α, λ) choice of :func:`deepnotes.magnitude.choices`, the magnitude λ of the
β-scaled matrices tracked along the way, the slider's figure, and the verdicts on what was measured.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from deepnotes.core.budget import Budget, device as default_device, get_budget
from deepnotes.core.config import TrainConfig
from deepnotes.core.data import MarkovLanguage
from deepnotes.chapters.magnitude_decomposition.experiments import BETA_KINDS, LABELS, block_weights, choices, deepnorm_model, lambda_closed_form
from deepnotes.show.progress import progress as progress_bar
from deepnotes.core.train import History, train
from deepnotes.core.trackers import BlockGradNorms, Recorder
from deepnotes.core.probes import loglog_slope
from deepnotes.show.palette import PALETTE

HALFWAY_WINDOW = 5    # losses averaged when reading the step at which a run is half-way to the floor

LRS = {"sgd": (0.1, 0.5), "adam": (1e-3,), "lamb": (1e-2,)}      # learning rates compared, per optimizer
# the runs of the training comparison: optimizer → the choices trained (all four for SGD, the
# optimizer's own solution and the paper's constants for Adam and LAMB)
PLAN = {"sgd": ("lambda=1/alpha", "alpha=1", "lambda=1", "paper"), "adam": ("lambda=1/alpha", "paper"),
        "lamb": ("alpha=1", "paper")}


@dataclass
class ChoiceRun:
    alpha: float
    lam: float
    history: History
    lam_steps: list[int] = field(default_factory=list)     # steps at which λ was measured
    lam_ratio: list[float] = field(default_factory=list)   # mean over v/o/fc1/fc2 of λ_F(W_t)/λ_F(W_0)


def choice_loss_curves(ax, runs: dict[str, ChoiceRun], title: str = "", legend_size: float = 7) -> None:
    """:func:`deepnotes.plots.loss_curves` for the runs of one setting (choice → run), each labelled
    with its (α, λ) and drawn in the choice's colour of :data:`~deepnotes.show.palette.PALETTE`."""
    from deepnotes.show import plots
    names = {k: f"{LABELS[k]} (α={r.alpha:.2g}, λ={r.lam:.2g})" for k, r in runs.items()}
    plots.loss_curves(ax, {names[k]: r.history for k, r in runs.items()}, title=title,
                      colours={names[k]: PALETTE[k] for k in runs})
    ax.legend(fontsize=legend_size)


def _beta_lambdas(model) -> list[float]:
    return [lambda_closed_form(w) for b in model.blocks for k, w in block_weights(b).items() if k in BETA_KINDS]


def run_choice(n_layers: int, alpha: float, lam: float, optimizer: str, lr: float, budget: Budget | None = None,
               steps: int | None = None, seed: int = 0, track_every: int | None = None, device=None,
               progress: bool = False) -> ChoiceRun:
    """Train a DeepNorm stack with skip weight α and init gain λ on the Markov language; every
    ``track_every`` steps record how far the β-scaled matrices' magnitudes moved from their start."""
    budget = budget or get_budget()
    steps = steps or budget.magnitude_decomposition.train_steps
    model = deepnorm_model(n_layers, alpha, lam, budget, seed=seed, device=device or default_device())
    lam0 = _beta_lambdas(model)
    every = track_every or budget.magnitude_decomposition.track_every

    def lam_ratio(m):
        return sum(a / b for a, b in zip(_beta_lambdas(m), lam0)) / len(lam0)

    cfg = TrainConfig(optimizer=optimizer, lr=lr, steps=steps, batch_size=budget.batch_size, seq_len=budget.seq_len,
                      seed=seed)
    hist = train(model, MarkovLanguage(budget.vocab_size, seed=seed), cfg, progress=progress,
                 trackers=[BlockGradNorms(steps), Recorder("lam_ratio", lam_ratio, every)])
    lam_steps, lam_ratios = hist.record("lam_ratio")
    return ChoiceRun(alpha, lam, hist, list(lam_steps), list(lam_ratios))


def training_comparison(budget: Budget | None = None, depths=None, device=None,
                        progress: bool = False) -> dict[tuple[str, float, int], dict[str, ChoiceRun]]:
    """(optimizer, lr, depth) → {choice: run} for the choices of :data:`PLAN` at the learning rates of
    :data:`LRS` and the budget's training depths."""
    budget = budget or get_budget()
    jobs = [(opt, lr, n, label) for n in (depths or budget.magnitude_decomposition.train_depths) for opt, lrs in LRS.items()
            for lr in lrs for label in PLAN[opt]]
    jobs = progress_bar(jobs, progress)
    out: dict[tuple[str, float, int], dict[str, ChoiceRun]] = {}
    for opt, lr, n, label in jobs:
        a, lam = choices(n, opt)[label]
        out.setdefault((opt, lr, n), {})[label] = run_choice(n, a, lam, opt, lr, budget, device=device)
    return out


def slider_figure(depth: int, optimizer: str, lr: float | None = None, budget: Budget | None = None,
                  progress: bool = False):
    """The slider's panel at one depth and optimizer: the derived (α, λ, λ²/α) of each choice, and a
    short training run of each."""
    from deepnotes.show import plots
    budget = budget or get_budget()
    lr = lr if lr is not None else LRS[optimizer][0]
    picks = choices(depth, optimizer)
    runs = {label: run_choice(depth, a, lam, optimizer, lr, budget, steps=budget.magnitude_decomposition.slider_steps, progress=progress)
            for label, (a, lam) in picks.items()}
    fig, (ax_c, ax_l) = plots.new_figure(2, width=3.8, height=2.8)
    xs = range(len(picks))
    for k, (name, getter) in enumerate((("α", lambda a, lam: a), ("λ", lambda a, lam: lam),
                                        ("λ²/α", lambda a, lam: lam ** 2 / a))):
        ax_c.bar([x + 0.27 * (k - 1) for x in xs], [getter(*v) for v in picks.values()], width=0.27, label=name)
    ax_c.set_yscale("log")
    ax_c.set_xticks(list(xs), [LABELS[p] for p in picks], fontsize=7)
    ax_c.set_title(f"derived constants, N={depth}, {optimizer}", fontsize=8)
    ax_c.legend(fontsize=7)
    choice_loss_curves(ax_l, runs, title=f"{optimizer} lr {lr:g}, {budget.magnitude_decomposition.slider_steps} steps")
    fig.tight_layout()
    return fig


# ---- verdicts on the measurements (statuses computed from the numbers) ------------------------------

def halfway_text(run: ChoiceRun) -> str:
    t = run.history.steps_to(0.5, window=HALFWAY_WINDOW)
    return "never" if t is None else f"step {t}"


def area_text(run: ChoiceRun) -> str:
    a = run.history.mean_fraction_learned()
    return "diverged" if a is None else f"{a:.3f}"


SLOW_MARGIN = 0.05    # "learns slowly": mean fraction learned at least this much below λ = 1/α's


def article_story_verdicts(comp, early: int = 20):
    """Su's story for SGD: α = 1, λ = (2N)^{-1/2} leaves its small initial scale within a few steps
    (read: λ at least doubles by step ``early``); α = (2N)^{1/2}, λ = 1 learns slowly (read: its
    mean fraction learned is below λ = 1/α's, by at least :data:`SLOW_MARGIN` for "holds"); λ = 1/α
    sits between. And the paper's claim that its SGD-derived constants also train under Adam."""
    from deepnotes.show.verdicts import APPROX, HOLDS, WRONG, Verdict, VerdictTable, check_true
    rows = []
    for (opt, lr, n), runs in comp.items():
        if opt == "adam":
            frac = runs["paper"].history.fraction_learned()
            rows.append(check_true(claim=f"N={n}, Adam lr {lr:g}: the paper's (SGD-derived) constants also train under Adam", source="seed 000 §多种优化 (the paper's own report)", claimed="trains (learned > 0.5)", computed=f"learned {frac:.2f}; Su's Adam constants {runs['lambda=1/alpha'].history.fraction_learned():.2f}", ok=frac > 0.5, reason="fraction of the way from the context-free plateau to the floor"))
        if opt != "sgd":
            continue
        sym, a1, l1 = runs["lambda=1/alpha"], runs["alpha=1"], runs["lambda=1"]
        k = min(range(len(a1.lam_steps)), key=lambda i: abs(a1.lam_steps[i] - early))
        drift = {LABELS[lab]: runs[lab].lam_ratio[k] for lab in ("alpha=1", "lambda=1/alpha", "lambda=1")}
        rows.append(check_true(claim=f"N={n}, SGD lr {lr:g}: with α=1, λ=(2N)^-1/2 the magnitude λ leaves its initial scale within a few steps", source="seed 000 §初步结论 (another solution 1)", claimed=f"λ_t/λ_0 ≥ 2 by step {a1.lam_steps[k]}", computed=", ".join(f"{lab} {v:.3g}" for lab, v in drift.items()) +
            f"; at the last step α=1 {a1.lam_ratio[-1]:.3g}", ok=drift["α=1"] >= 2, reason="mean over the v/o/fc1/fc2 matrices of all blocks" +
            ("; α=1 does drift most" if drift["α=1"] > max(drift["λ=1/α"], drift["λ=1"]) else "")))
        area = {lab: runs[lab].history.mean_fraction_learned() for lab in ("lambda=1", "lambda=1/alpha", "alpha=1")}
        gap = None if None in (area["lambda=1"], area["lambda=1/alpha"]) else area["lambda=1/alpha"] - area["lambda=1"]
        status = (WRONG if gap is None             # a diverged run is a failure, not slow learning
                  else HOLDS if gap >= SLOW_MARGIN else APPROX if gap > 0 else WRONG)
        rows.append(Verdict(
            f"N={n}, SGD lr {lr:g}: α=(2N)^1/2, λ=1 learns (very) slowly, more slowly than λ=1/α",
            "seed 000 §初步结论 (another solution 2)", "lower mean fraction learned",
            "mean fraction learned: " + ", ".join(f"{LABELS[lab]} {area_text(runs[lab])}" for lab in area) +
            f"; half-way: λ=1 {halfway_text(l1)}, λ=1/α {halfway_text(sym)}",
            status, f"mean over the run of (plateau − loss)/(plateau − floor); holds if λ=1 is ≥ {SLOW_MARGIN} below "
                    f"λ=1/α, holds approximately if below by less (slower, not 'very slow')"))
    return VerdictTable(rows)


def probe_verdicts(sweep, first_steps, identity: dict[str, tuple[float, float, list[float]]]):
    """Measured verdicts on the magnitude analysis at initialization:
    ∂L/∂λ ∝ λ/α (v, o, fc1, fc2), q/k gradients small, the first step's relative size per optimizer,
    and the near-identity start (mean ‖x_{l+1} − x_l‖/‖x_l‖ against λ²/α)."""
    from deepnotes.chapters.magnitude_decomposition.experiments import BETA_KINDS, mean_change, predicted_relative_update
    from deepnotes.show.verdicts import VerdictTable, check_true
    rows = []
    for kind in BETA_KINDS:
        slope = loglog_slope(*sweep.series(kind))
        per_alpha = [loglog_slope(sweep.alphas, [row[j] for row in sweep.rms[kind]]) for j in range(len(sweep.lambdas))]
        rows.append(check_true(claim=f"∂L/∂λ_{kind} = O(λ/α): slope 1 against λ/α, −1 against α at fixed λ", source=f"seed 000 §前馈梯度/§自注意力; measured N={sweep.n_layers}", claimed="slopes 1 and −1", computed=f"{slope:.2f}; {min(per_alpha):.2f}..{max(per_alpha):.2f}", ok=abs(slope - 1) < 0.15 and all(abs(s + 1) < 0.15 for s in per_alpha), reason=f"RMS over blocks, grid α {sweep.alphas}, λ {sweep.lambdas}"))
    rows.append(softmax_gain_verdict(sweep))
    for opt in ("sgd", "adam", "lamb"):
        keys = [k for k in first_steps if k[0] == opt]
        pred = [predicted_relative_update(opt, *first_steps[k][:2]) for k in keys]
        meas = [first_steps[k][2] for k in keys]
        if opt == "lamb":
            spread = max(meas) / min(meas)
            rows.append(check_true(claim="LAMB: the relative update is η whatever α and λ", source="seed 000 §多种优化", claimed="‖ΔW‖/‖W‖ = η", computed=f"{min(meas):.4g}..{max(meas):.4g} (spread ×{spread:.3f})", ok=spread < 1.05, reason="every choice and depth"))
            continue
        slope = loglog_slope(pred, meas)
        what = "1/α" if opt == "sgd" else "1/λ"
        rows.append(check_true(claim=f"{opt.upper()}: the first step's ‖ΔW‖/‖W‖ scales like {what}", source="seed 000 §初步结论, §多种优化", claimed="slope 1", computed=f"slope {slope:.2f}", ok=abs(slope - 1) < 0.15, reason=f"all choices × depths; range {min(meas):.3g}..{max(meas):.3g}"))
    xs = [lam ** 2 / a for a, lam, _ in identity.values()]
    ys = [mean_change(ch) for _, _, ch in identity.values()]
    deep = {k: y for k, y in zip(identity, ys) if k != "post-LN"}
    rows.append(check_true(claim="The stack starts near the identity (each branch weighs λ²/α, small)", source="seed 000 §事后分析", claimed="‖x_{l+1} − x_l‖/‖x_l‖ small", computed=", ".join(f"{k} {y:.3g}" for k, y in zip(identity, ys)), ok=max(deep.values()) < 0.3, reason="mean over blocks 2..N at init; post-LN (α = λ = 1) for contrast"))
    slope = loglog_slope(xs, ys)
    rows.append(check_true(claim="… and the change per block is proportional to λ²/α", source="seed 000 §事后分析; annotated eq. (55)", claimed="slope 1 against λ²/α", computed=f"slope {slope:.2f}; change/(λ²/α) "
                           f"{min(y / x for x, y in zip(xs, ys)):.2f}..{max(y / x for x, y in zip(xs, ys)):.2f}", ok=abs(slope - 1) < 0.15, reason="over the six settings (block 1 left out: it also normalizes the embedding)"))
    return VerdictTable(rows)


def softmax_gain_verdict(sweep):
    """Su drops λ_q, λ_k "because of the softmax". Measured ratio ∂L/∂λ_q ÷ ∂L/∂λ_v over the grid:
    holds if below 1/2 everywhere, holds approximately if below 1/2 wherever λ < 1, wrong otherwise."""
    from deepnotes.show.verdicts import APPROX, HOLDS, WRONG, Verdict
    ratios = [(lam, max(sweep.rms[k][i][j] / sweep.rms["v"][i][j] for k in ("q", "k")))
              for i in range(len(sweep.alphas)) for j, lam in enumerate(sweep.lambdas)]
    worst = max(r for _, r in ratios)
    worst_small = max((r for lam, r in ratios if lam < 1), default=0.0)
    status = HOLDS if worst < 0.5 else APPROX if worst_small < 0.5 else WRONG
    per_lam = [max(r for lam, r in ratios if lam == lam0) for lam0 in sweep.lambdas]
    return Verdict("∂L/∂λ_q, ∂L/∂λ_k are small next to ∂L/∂λ_v, ∂L/∂λ_o (softmax)", "seed 000 §自注意力",
                   "small", "max q,k/v per λ " + ", ".join(f"{lam:g}: {r:.2f}" for lam, r in zip(sweep.lambdas, per_lam)),
                   status, f"the ratio grows like λ (slope {loglog_slope(sweep.lambdas, per_lam):.2f}): q, k carry one "
                           "more power of λ (SymPy's ∂z/∂λ_q has λ_vλ_o); small for λ ≪ 1, not at λ = 1")
