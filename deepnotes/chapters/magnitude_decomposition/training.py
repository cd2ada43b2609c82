"""Training runs of the chapter "Magnitude decomposition and the DeepNorm scalings": DeepNorm stacks
trained with each (α, λ) choice of :func:`.experiments.choices`, the magnitude λ of the β-scaled
matrices tracked along the way. Figures are in :mod:`.figures`, verdicts in :mod:`.claims`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from deepnotes.core.budget import Budget, device as default_device, resolve_budget
from deepnotes.core.validate import given
from deepnotes.core.data import MarkovLanguage
from deepnotes.chapters.magnitude_decomposition.experiments import choices, deepnorm_model, lambda_closed_form
from deepnotes.core.ensemble import train_model
from deepnotes.core.train import History
from deepnotes.core.trackers import Recorder
from deepnotes.show.progress import progress as progress_bar

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


def _beta_lambdas(model) -> list[float]:
    return [lambda_closed_form(w) for b in model.blocks for w in b.beta_scaled_weights()]


def run_choice(n_layers: int, alpha: float, lam: float, optimizer: str, lr: float, budget: Budget | None = None,
               steps: int | None = None, seed: int = 0, track_every: int | None = None, device=None,
               progress: bool = False) -> ChoiceRun:
    """Train a DeepNorm stack with skip weight α and init gain λ on the Markov language; every
    ``track_every`` steps record how far the β-scaled matrices' magnitudes moved from their start."""
    budget = resolve_budget(budget)
    steps = given(steps, budget.magnitude_decomposition.train_steps)
    model = deepnorm_model(n_layers, alpha, lam, budget, seed=seed, device=device or default_device())
    lam0 = _beta_lambdas(model)
    every = given(track_every, budget.magnitude_decomposition.track_every)

    def lam_ratio(m):
        return sum(a / b for a, b in zip(_beta_lambdas(m), lam0)) / len(lam0)

    cfg = budget.train_config(optimizer, lr, steps, seed=seed)
    hist = train_model(model, MarkovLanguage(budget.vocab_size, seed=seed), cfg, progress=progress,
                       trackers=[Recorder("lam_ratio", lam_ratio, every)])
    lam_steps, lam_ratios = hist.record("lam_ratio")
    return ChoiceRun(alpha, lam, hist, list(lam_steps), list(lam_ratios))


def choice_comparison(budget: Budget | None = None, depths=None, device=None,
                        progress: bool = False) -> dict[tuple[str, float, int], dict[str, ChoiceRun]]:
    """(optimizer, lr, depth) → {choice: run} for the choices of :data:`PLAN` at the budget's
    ``train_lrs`` and training depths."""
    budget = resolve_budget(budget)
    mb = budget.magnitude_decomposition
    jobs = [(opt, lr, n, label) for n in given(depths, mb.train_depths) for opt, lrs in mb.train_lrs.items()
            for lr in lrs for label in PLAN[opt]]
    jobs = progress_bar(jobs, progress)
    out: dict[tuple[str, float, int], dict[str, ChoiceRun]] = {}
    for opt, lr, n, label in jobs:
        a, lam = choices(n, opt)[label]
        out.setdefault((opt, lr, n), {})[label] = run_choice(n, a, lam, opt, lr, budget, device=device)
    return out
