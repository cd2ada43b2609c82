"""The work log: every ensemble :func:`~deepnotes.core.ensemble.train_ensemble` trains, appended to
``$DEEPNOTES_WORK_LOG`` (a JSON line each) when it is set, with a line marking each chapter's start; and
the comparison of a chapter's cost plan (:mod:`deepnotes.core.cost`) with what it ran. The book build
sets the variable and ``tests/test_book.py`` fails on any difference; ``tools/run_chapter.py
--check-plan`` does the same for one chapter at any budget."""
from __future__ import annotations

import contextlib
import json
import os
from collections import Counter
from dataclasses import asdict
from pathlib import Path

from deepnotes.core.config import ModelConfig, TrainConfig

WORK_LOG_ENV = "DEEPNOTES_WORK_LOG"   # a file: every train_ensemble call appends its TrainRuns (tests compare plans)


@contextlib.contextmanager
def unlogged():
    """The cost model's own tiny runs stay out of the work log (they are not the chapter's work)."""
    saved = os.environ.pop(WORK_LOG_ENV, None)
    try:
        yield
    finally:
        if saved is not None:
            os.environ[WORK_LOG_ENV] = saved


def _log(record: dict) -> None:
    path = os.environ.get(WORK_LOG_ENV)
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def log_chapter(chapter: str) -> None:
    """Mark the start of a chapter in ``$DEEPNOTES_WORK_LOG``: the ensembles logged next are its own."""
    _log({"chapter": chapter})


def log_train_runs(model: ModelConfig, members: int, train: TrainConfig, masked: float | None) -> None:
    """Append one ensemble's :class:`TrainRuns` to ``$DEEPNOTES_WORK_LOG`` (a JSON line) when it is set."""
    _log({"model": asdict(model), "members": members, "train": asdict(train), "masked": masked})


def read_train_log(path) -> dict[str, list]:
    """The :class:`~deepnotes.core.cost.TrainRuns` each chapter ran, in order (chapter → list)."""
    from deepnotes.core.cost import TrainRuns
    out: dict[str, list[TrainRuns]] = {}
    chapter = "(before any chapter)"
    if not Path(path).exists():              # nothing trained, nothing marked
        return out
    for line in Path(path).read_text().splitlines():
        rec = json.loads(line)
        if "chapter" in rec:
            chapter = rec["chapter"]
            out.setdefault(chapter, [])      # marked twice (tool and budget cell): one list
            continue
        train = rec["train"]
        train["betas"] = tuple(train["betas"])
        out.setdefault(chapter, []).append(
            TrainRuns(ModelConfig(**rec["model"]), rec["members"], TrainConfig(**train), rec["masked"]))
    return out


def _run_key(work) -> tuple:
    """What decides an ensemble's cost: its graph, members, loop (not α, β, init std, lr, warmup, seed)."""
    from deepnotes.core.engine import graph_config
    t = work.train
    return (graph_config(work.model), work.members, t.optimizer, t.steps, t.batch_size, t.seq_len, work.masked)


def plan_differences(plan: list, ran: list) -> list[str]:
    """The training ensembles a plan lists but the chapter did not run, and those it ran but the plan
    lacks (compared as multisets of :func:`_run_key`); empty when the plan is exact."""
    from deepnotes.core.cost import TrainRuns
    planned = Counter(_run_key(w) for w in plan if isinstance(w, TrainRuns))
    done = Counter(_run_key(w) for w in ran)
    out = [f"planned, not run ({n}×): {k}" for k, n in (planned - done).items()]
    return out + [f"run, not planned ({n}×): {k}" for k, n in (done - planned).items()]
