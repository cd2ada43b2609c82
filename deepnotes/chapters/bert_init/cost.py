"""Cost plan of the chapter "Why is BERT's initial standard deviation 0.02?": the work its notebook does
at a budget, for :mod:`deepnotes.cost.model`. One line per experiment:

    sweep_probes           an init_probe per std of ``stds`` at probe_depth, width probe_width, on probe_tokens
    init_figure            the drawn probe (BERT_STD at probe_depth): one of the sweep's where the budget sweeps it
    table_probes           an init_probe per TABLE_STDS at table_depth × table_width (the sweep's where they coincide)
    sweep_probe_seeds      an init_probe per std of ``stds`` for each of probe_seeds seeds but 0 (the sweep's)
    table_seed_probes      per TABLE_STDS and each of table_seeds seeds: a table_setting_probe (the blocks alone, their
                           matrices drawn once, one forward + backward), and an init_probe for every seed but 0
                           (seed 0's is table_probes', cached); table_setting_probes, table_gradient_ratios and
                           table_identity_falloff read them
    chapter_runs           training_runs, gain_runs, the gain figures and the gains slider all read these: the MLM
                           runs of run_settings at train_width × train_depth on train_batch, Adam with warmup,
                           train_many's ensembles (one graph per head, cut to balance the worker processes)
    slider "init"          an init_probe per setting of the precomputed grid (stds × probe_depths), the sweep's
                           settings shared

An init_probe is a :func:`~deepnotes.core.models.build_model` encoder built (its modules and its random
numbers, :func:`~deepnotes.cost.model.init_draws`) and one MLM loss
forward + backward through its modules (hooks record the stream and the logits on the way), counted as
the reference model's next-token pass of the same shape, at BERT_STD whatever its std (the cost is the
same). The page's figures
and slider frames are drawn (Render). Probes are counted
once per distinct setting: ``cached_probe`` keeps 16, so at the cpu and gpu budgets the slider's grid
evicts and recomputes a few sweep probes (3 of ~30), left out. Nothing here depends on results; the
SymPy derivations are priced as :class:`Derivations` (:func:`derivations`) and the live panels run
nothing at build time.
"""

from __future__ import annotations

from deepnotes.chapters.bert_init import controls
from deepnotes.chapters.bert_init.budget import sizes
from deepnotes.chapters.bert_init.experiments import (
    BERT_STD,
    MASK_PROB,
    TABLE_STDS,
    encoder_config,
    mlm_train_config,
    probe_depth,
    run_settings,
)
from deepnotes.core.config import Budget, ModelConfig, resolve_budget
from deepnotes.core.validate import Finite
from deepnotes.cost.model import (
    Builds,
    Derivations,
    Draws,
    ReferencePasses,
    Render,
    StackPasses,
    TrainRuns,
    Work,
    block_matrices,
    ensembles,
    slider_frames,
)

# the figures the page shows besides its sliders' frames (tests/test_book.py counts them in the smoke build)
FIGURES = 5


def _probe_model(budget: Budget | str, depth: int, width: int) -> ModelConfig:
    """The probed encoder, at BERT_STD whatever the probe's std: its passes cost the same at every std,
    and :mod:`deepnotes.cost.model` counts once per config (a config per std would count each again)."""
    b = sizes(budget)
    return encoder_config(width, depth, BERT_STD, b.vocab, b.probe_tokens[1])


def _init_probe(budget: Budget | str, std: Finite, depth: int, width: int) -> list[Work]:
    """:func:`~deepnotes.chapters.bert_init.experiments.init_probe` at ``std``: the model's initialization
    (its modules and random numbers), then one forward and backward of the MLM loss."""
    n_seq, seq_len = sizes(budget).probe_tokens
    model = _probe_model(budget, depth, width)
    return [Builds(model), ReferencePasses(model, n_seq, seq_len)]


def _table_setting_probe(budget: Budget | str, std: Finite) -> list[Work]:
    """:func:`~deepnotes.chapters.bert_init.experiments.table_setting_probe` at ``std``: every block matrix
    drawn once, then one forward + backward of the blocks."""
    b = sizes(budget)
    n_seq, seq_len = b.probe_tokens
    model = _probe_model(budget, b.table_depth, b.table_width)
    return [Draws(model.n_layers * sum(block_matrices(model))), StackPasses(model, 1, n_seq, seq_len)]


def _chapter_runs(budget: Budget | str) -> list[TrainRuns]:
    """:func:`~deepnotes.chapters.bert_init.experiments.chapter_runs`: :func:`mlm_runs` over run_settings ×
    the budget's train_seeds, grouped as train_many groups them over this machine's workers (the head's
    presence splits the graphs; the larger group is cut to balance the workers)."""
    b = sizes(budget)
    n_seq, seq_len = b.train_batch
    keys = [(std, head, seed) for std, head in run_settings(budget) for seed in range(b.train_seeds)]
    trains = [mlm_train_config(budget, seed) for _, _, seed in keys]
    models = [encoder_config(b.train_width, b.train_depth, std, b.vocab, seq_len, head) for std, head, _ in keys]
    return ensembles(models, trains, masked=MASK_PROB)  # as mlm_runs' train_many groups them


def derivations() -> Derivations:
    """The page's SymPy derivations and the verdict tables that run no experiment (as its cells call them)."""
    from deepnotes.chapters.bert_init import derive  # here: the derivations import SymPy, the plan need not

    return Derivations(
        (
            (derive.bert_stds, ()),
            (derive.branch_ratios, ()),
            (derive.ffn_branch_table, ()),
            (derive.logit_softmax, ()),
        )
    )


def plan(budget: Budget | str) -> list[Work]:
    """The chapter's work at ``budget``: see the module's docstring."""
    budget = resolve_budget(budget)
    b = sizes(budget)
    depth = probe_depth(budget)
    probes = dict.fromkeys(
        [  # (std, depth, width) of every init_probe, computed once each
            *((s, depth, b.probe_width) for s in b.stds),  # sweep_probes
            (BERT_STD, depth, b.probe_width),  # init_figure
            *((s, b.table_depth, b.table_width) for s in TABLE_STDS),  # table_probes
            *((s, n, b.probe_width) for s in b.stds for n in b.probe_depths),  # slider "init" (grid)
        ]
    )
    return [
        *(p for setting in probes for p in _init_probe(budget, *setting)),  # the init_probes above
        *(
            p
            for s in b.stds
            for _ in range(1, b.probe_seeds)  # sweep_probe_seeds (seed 0: sweep_probes)
            for p in _init_probe(budget, s, depth, b.probe_width)
        ),
        *(
            p
            for s in TABLE_STDS
            for seed in range(b.table_seeds)  # table_seed_probes (seed 0 of "own": table_setting_probes)
            for p in [
                *_table_setting_probe(budget, s),
                *(_init_probe(budget, s, b.table_depth, b.table_width) if seed else ()),
            ]
        ),  # seed 0 of "cut": table_probes
        *_chapter_runs(budget),  # training_runs, gain_runs, gain figures, slider "gains"
        derivations(),
        Render(FIGURES + slider_frames(controls.sliders(budget).values())),  # the page's figures and slider frames
    ]
