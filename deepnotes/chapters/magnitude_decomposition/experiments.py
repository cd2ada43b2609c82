"""Training runs of the chapter "Magnitude decomposition and the DeepNorm scalings": DeepNorm stacks
trained with each (α, λ) choice of :func:`.probes.choices`, the magnitude λ of the β-scaled
matrices tracked along the way. Figures are in :mod:`.figures`, verdicts in :mod:`.claims`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from deepnotes.chapters.magnitude_decomposition.budget import sizes
from deepnotes.chapters.magnitude_decomposition.probes import choices, deepnorm_model, probes_work
from deepnotes.core import scaling
from deepnotes.core.config import Budget
from deepnotes.core.data import MarkovLanguage
from deepnotes.core.engine import Stack, load_reference
from deepnotes.core.ensembles import RunContext
from deepnotes.core.measure import Recorder
from deepnotes.core.train import History, train_ensemble
from deepnotes.core.train import progress as progress_bar
from deepnotes.core.validate import Count, Depth, Positive, Repeats, Seed, given
from deepnotes.cost.model import Builds, ReferencePasses, StackPasses, TrainRuns

# the runs of the training comparison: optimizer → the choices trained (all four for SGD, the
# optimizer's own solution and the paper's constants for Adam and LAMB)
PLAN = {
    "sgd": ("lambda=1/alpha", "alpha=1", "lambda=1", "paper"),
    "adam": ("lambda=1/alpha", "paper"),
    "lamb": ("alpha=1", "paper"),
}


@dataclass
class ChoiceRun:
    alpha: Positive
    lam: Positive
    history: History
    lam_steps: list[int] = field(default_factory=list)  # steps at which λ was measured
    lam_ratio: list[float] = field(default_factory=list)  # mean over v/o/fc1/fc2 of λ_F(W_t)/λ_F(W_0)
    seed_runs: list[ChoiceRun] = field(default_factory=list)  # every seed's run of this choice, this one first

    def per_seed(self) -> list[ChoiceRun]:
        """This choice's run at every seed trained (itself alone where one seed was): what verdicts read."""
        return self.seed_runs or [self]


def beta_lambdas(stack: Stack) -> torch.Tensor:
    """λ_F of every β-scaled matrix of every member, block by block (v, out, fc1, fc2): [K, N·4].

    λ_F(W)² = ‖WᵀW‖_F²/‖W‖_F² (:func:`.probes.lambda_closed_form`; the same for W and Wᵀ, so the
    engine's [in, out] layout needs no transpose), in float64."""
    lams = []
    for w in stack.beta_scaled():  # v, out, fc1, fc2: each [N, K, r, c]
        w = w.detach().double()
        gram = w.transpose(-1, -2) @ w  # [N, K, c, c]
        lams.append((gram.pow(2).sum((-2, -1)) / w.pow(2).sum((-2, -1))).sqrt())  # [N, K]
    return torch.stack(lams).permute(2, 1, 0).reshape(stack.n_members, -1)  # [4, N, K] → [K, N·4]


def run_choices(
    n_layers: Depth,
    picks: dict[str, tuple[float, float]],
    optimizer: str,
    lr: Positive,
    context: RunContext,
    steps: Repeats | None = None,
    seed: Seed = 0,
    track_every: Count | None = None,
    seeds: Repeats = 1,
) -> dict[str, ChoiceRun]:
    """Train a DeepNorm stack for every (skip weight α, init gain λ) of ``picks`` and every one of ``seeds``
    initializations (seed, seed + 1, …) on the Markov language, as the members of one ensemble on ``context``'s
    device (α and λ change no shape, so the choices share one pass per step); every ``track_every`` steps record
    how far each member's β-scaled matrices' magnitudes moved from their start (mean of λ_F(W_t)/λ_F(W_0)).
    Member (k, s) starts from the weights of ``deepnorm_model(n_layers, α_k, λ_k, seed=s)``; every member sees
    the same batches. Returns choice → its first seed's run, which holds every seed's (:meth:`ChoiceRun.per_seed`);
    one choice alone is ``run_choices(n, {"": (α, λ)}, …)[""]``."""
    if not picks:
        raise ValueError("picks is empty; give at least one label → (alpha, lam)")
    budget, device = context.budget, context.device
    steps = given(steps, sizes(budget).train_steps)
    every = given(track_every, sizes(budget).track_every)
    keys = [(label, s) for label in picks for s in range(seed, seed + seeds)]
    models = [deepnorm_model(n_layers, *picks[label], budget, seed=s, device=device) for label, s in keys]
    stack = Stack([m.cfg for m in models], seeds=[s for _, s in keys], device=device)
    for k, model in enumerate(models):
        load_reference(stack, k, model)
    lam0 = beta_lambdas(stack)  # [K, N·4]
    tracker = Recorder("lam_ratio", lambda st: (beta_lambdas(st) / lam0).mean(dim=1).tolist(), every)
    cfgs = [budget.train_config(optimizer, lr, steps, seed=s) for _, s in keys]
    hists = train_ensemble(
        stack, MarkovLanguage(budget.vocab_size, seed=seed), cfgs, progress=context.progress, trackers=[tracker]
    )
    out: dict[str, ChoiceRun] = {}
    for (label, _), hist in zip(keys, hists, strict=True):
        lam_steps, lam_ratios = hist.record("lam_ratio")
        run = ChoiceRun(*picks[label], hist, list(lam_steps), list(lam_ratios))
        out.setdefault(label, run).seed_runs.append(run)
    if seeds == 1:
        for run in out.values():
            run.seed_runs.clear()
    return out


def choice_comparison(context: RunContext, depths=None) -> dict[tuple[str, float, int], dict[str, ChoiceRun]]:
    """(optimizer, lr, depth) → {choice: run} for the choices of :data:`PLAN` at the budget's
    ``train_lrs`` and training depths, each trained at the budget's ``train_seeds`` (the run drawn is seed 0's;
    :meth:`ChoiceRun.per_seed` holds every seed's); one progress bar over the ensembles."""
    mb = sizes(context.budget)
    jobs = [(opt, lr, n) for n in given(depths, mb.train_depths) for opt, lrs in mb.train_lrs.items() for lr in lrs]
    out: dict[tuple[str, float, int], dict[str, ChoiceRun]] = {}
    for opt, lr, n in progress_bar(jobs, context.progress):
        picks = {label: choices(n, opt)[label] for label in PLAN[opt]}
        out[(opt, lr, n)] = run_choices(n, picks, opt, lr, context.quiet(), seeds=mb.train_seeds)
    return out


# ---- the chapter's work, for its estimate ------------------------------------------------------------


def choices_work(budget: Budget, n_layers: Depth, optimizer: str, lr: Positive, steps: Repeats, members: Count) -> list:
    """:func:`run_choices`' work: a reference model built per choice and seed, then one ensemble of them."""
    model = budget.model_config(n_layers, norm="deepnorm")  # α and λ change no count
    return [Builds(model, members), TrainRuns(model, members, budget.train_config(optimizer, lr, steps))]


def work(budget: Budget) -> list[Builds | ReferencePasses | StackPasses | TrainRuns]:
    """What the chapter computes at ``budget``, as :mod:`deepnotes.cost.model` counts it (the page adds its
    derivations and figures: :mod:`deepnotes.chapters.catalog`): the probes
    (:func:`~deepnotes.chapters.magnitude_decomposition.probes.probes_work`), then

        choice_comparison   :func:`run_choices` per training depth, optimizer and rate of train_lrs: a member per
                            choice of :data:`PLAN` and seed, train_steps steps
        slider "choices"    the precomputed grid (slider_depths × the optimizers): :func:`run_choices` of every
                            choice at the optimizer's first rate, slider_steps steps

    Left out: the λ_F tracker of the training runs (every track_every steps, a Gram matrix per β-scaled
    matrix). Nothing depends on results; the live panel runs nothing at build time."""
    mb = sizes(budget)
    return [
        *probes_work(budget),
        *(
            w
            for n in mb.train_depths
            for opt, lrs in mb.train_lrs.items()
            for lr in lrs
            for w in choices_work(budget, n, opt, lr, mb.train_steps, len(PLAN[opt]) * mb.train_seeds)
        ),
        *(
            w
            for n in mb.slider_depths
            for opt in scaling.OPTIMIZERS
            for w in choices_work(budget, n, opt, mb.train_lrs[opt][0], mb.slider_steps, len(choices(n, opt)))
        ),
    ]
