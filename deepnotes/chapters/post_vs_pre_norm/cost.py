"""Cost plan of the chapter "Post-Norm vs Pre-Norm": the work its notebook does at a budget, for
:mod:`deepnotes.cost.model`. One line per experiment:

    init_probes        stream probe of every style at the last probe depth: one forward (the stream) and one
                       forward + backward (the gradients) on batch_size × seq_len tokens
    depth_sweep        the same at every other probe depth (the last one's probes are reused)
    training_runs      the shared warmup comparison (deepnotes.shared.warmup: Adam, four variants), then the
                       chapter's other runs as train_many groups them: one ensemble per graph (every style
                       shares one) with budget.warmup.seeds members per variant, and the fixed-step ReZero
                       (its own train_many call) in one of its own
    xiong_probe        Post-LN and Pre-LN at each of paper_depths and profile_depth: one forward + backward per seed
    liu_output_change  Post-LN and Pre-LN at each of paper_depths: two forwards (before and after δ) per seed
    slider_experiment  per setting of the precomputed grid (slider_depths × STYLES): a stream probe and a
                       one-member Adam run of slider_steps steps at slider_lr

Nothing here depends on results. The live panel runs nothing at build time.
"""

from __future__ import annotations

from deepnotes.chapters.post_vs_pre_norm import controls
from deepnotes.chapters.post_vs_pre_norm.budget import sizes
from deepnotes.chapters.post_vs_pre_norm.experiments import (
    PAPER_STYLES,
    PROBE_SEEDS,
    STYLES,
    own_runs,
    rates,
    style_config,
    training_plan,
)
from deepnotes.core.config import Budget, resolve_budget
from deepnotes.cost.model import Derivations, Render, StackPasses, TrainRuns, Work, ensembles, slider_frames
from deepnotes.shared import warmup

# the figures the page shows besides its sliders' frames (tests/test_book.py counts them in the smoke build)
FIGURES = 6


def _stream_probe(budget: Budget | str, norm: str, depth: int) -> list[StackPasses]:
    """:func:`~deepnotes.chapters.post_vs_pre_norm.experiments.stream_probe`: the stream without
    gradients, then the loss's forward and backward."""
    model = style_config(norm, depth, budget)
    return [
        StackPasses(model, 1, budget.batch_size, budget.seq_len, backward=False),
        StackPasses(model, 1, budget.batch_size, budget.seq_len),
    ]


def _training_runs(budget: Budget | str) -> list[TrainRuns]:
    """:func:`~deepnotes.chapters.post_vs_pre_norm.experiments.training_runs`: its own two train_many
    calls (trained gates, then the fixed-step ReZero), each grouped as train_many groups it, and the
    shared warmup comparison's."""
    sub, plan_ = budget.warmup, training_plan(budget)
    keys = own_runs(budget)
    out: list[TrainRuns] = []
    for fixed_gates in (False, True):
        part = [key for key in keys if ("gate_step" in plan_[key[1]]) == fixed_gates]
        out += ensembles(
            [style_config(plan_[name]["norm"], sub.depth, budget) for _, name, _ in part],
            [
                budget.train_config(opt, rates(budget)[opt], sub.steps, plan_[name].get("warmup", 0), seed)
                for opt, name, seed in part
            ],
        )
    return out + warmup.work(budget)


def derivations() -> Derivations:
    """The page's SymPy derivations and the verdict tables that run no experiment (as its cells call them)."""
    from deepnotes.chapters.post_vs_pre_norm import (
        claims,
        derive,
    )  # here: the derivations import SymPy, the plan need not

    return Derivations(
        (
            (derive.post_norm_unroll, (3,)),
            (derive.pre_norm_second_moment, ()),
            (derive.fixed_step_gate, ()),
            (derive.update_scale_invariance, ()),
            (derive.ffn_branch_second_moment, ()),
            (claims.derivation, ()),
        )
    )


def plan(budget: Budget | str) -> list[Work]:
    """The chapter's work at ``budget``: see the module's docstring."""
    budget = resolve_budget(budget)
    sub = sizes(budget)
    b, t = budget.batch_size, budget.seq_len
    last = sub.probe_depths[-1]
    xiong_depths = sorted(set(sub.paper_depths) | {sub.profile_depth})
    return [
        *(p for norm in STYLES for _ in range(PROBE_SEEDS) for p in _stream_probe(budget, norm, last)),  # init_probes
        *(
            p for norm in STYLES for n in sub.probe_depths if n != last for p in _stream_probe(budget, norm, n)
        ),  # depth_sweep
        *_training_runs(budget),  # training_runs
        *(
            StackPasses(style_config(norm, n, budget), 1, b, t, passes=sub.paper_seeds)
            for norm in PAPER_STYLES
            for n in xiong_depths
        ),  # xiong_probe
        *(
            StackPasses(style_config(norm, n, budget), 1, b, t, passes=2 * sub.paper_seeds, backward=False)
            for norm in PAPER_STYLES
            for n in sub.paper_depths
        ),  # liu_output_change
        *(
            w
            for n in sub.slider_depths
            for norm in STYLES  # slider_experiment
            for w in [
                *_stream_probe(budget, norm, n),
                TrainRuns(
                    style_config(norm, n, budget), 1, budget.train_config("adam", sub.slider_lr, sub.slider_steps)
                ),
            ]
        ),
        derivations(),
        Render(FIGURES + slider_frames(controls.sliders(budget).values())),  # the page's figures and slider frames
    ]
