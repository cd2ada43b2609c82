"""The work log: every ensemble the training loop trains, appended to ``$DEEPNOTES_WORK_LOG`` (a JSON
line each) when it is set (the loop tells its observers, :data:`deepnotes.core.train.ENSEMBLE_OBSERVERS`,
and importing this module adds :func:`log_train_runs` to them), with a line marking each chapter's start; and
the comparison of a chapter's plan (:mod:`deepnotes.cost.model`) with what it ran. The book build
sets the variable and ``tests/test_book.py`` fails on any difference; ``tools/run_chapter.py
--check-plan`` does the same for one chapter at any budget."""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import asdict

from deepnotes.core.config import ModelConfig, TrainConfig
from deepnotes.core.train import ENSEMBLE_OBSERVERS
from deepnotes.core.validate import Count, Probability

WORK_LOG_ENV = "DEEPNOTES_WORK_LOG"  # a file: every train_ensemble call appends its TrainRuns (tests compare plans)


@contextlib.contextmanager
def unlogged():
    """The cost model's own tiny runs stay out of the work log (they are not the chapter's work)."""
    saved = os.environ.pop(WORK_LOG_ENV, None)
    try:
        yield
    finally:
        if saved is not None:
            os.environ[WORK_LOG_ENV] = saved


def work_log_path() -> str | None:
    """``$DEEPNOTES_WORK_LOG``, checked: None when unset, else a file path whose folder exists (a folder, or a
    path in a folder that does not exist, is a ValueError naming the variable, not an OSError mid-training)."""
    path = os.environ.get(WORK_LOG_ENV)
    if not path:
        return None
    if os.path.isdir(path):
        raise ValueError(f"{WORK_LOG_ENV}={path!r} is a folder; set it to a file (the work log is appended to it)")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ValueError(f"{WORK_LOG_ENV}={path!r}: its folder {folder!r} does not exist")
    return path


def _log(record: dict) -> None:
    path = work_log_path()
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def log_chapter(chapter: str) -> None:
    """Mark the start of a chapter in ``$DEEPNOTES_WORK_LOG``: the ensembles logged next are its own."""
    _log({"chapter": chapter})


def log_train_runs(
    model: ModelConfig, members: Count, train: TrainConfig, masked: Probability | None, spread: bool = False
) -> None:
    """Append one ensemble's :class:`TrainRuns` to ``$DEEPNOTES_WORK_LOG`` (a JSON line) when it is set,
    with whether it trained in a worker process beside others (``spread``) or in the chapter's own."""
    _log({"model": asdict(model), "members": members, "train": asdict(train), "masked": masked, "spread": spread})


if log_train_runs not in ENSEMBLE_OBSERVERS:
    ENSEMBLE_OBSERVERS.append(log_train_runs)
