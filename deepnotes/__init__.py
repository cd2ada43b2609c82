"""deepnotes: the helper package of the book on training very deep Transformers.

``book/<stem>.ipynb`` ↔ ``deepnotes/chapters/<stem>/``; what two or more chapters share lives in
``deepnotes.core`` (models, training, budgets, formulas) and ``deepnotes.show`` (figures, sliders,
verdicts). Importing ``deepnotes`` loads the model code (torch) only; plotting, widgets and SymPy
are imported on demand.
"""

import os
import time

_IMPORT_START = time.perf_counter()

from beartype import BeartypeConf  # noqa: E402
from beartype.claw import beartype_this_package  # noqa: E402

# PyTorch's CPU allocator backs tensors of 2 MB and more with 2 MB pages (Linux's transparent huge pages, asked
# for with madvise) when this is set before torch is imported: a deep stack's step walks hundreds of MB of
# weights and Adam moments, and with 4 KB pages every layer misses the TLB again (measured: 8–10 % of a
# 1000-layer step, benchmarks/RESULTS.md, 2026-11-27). Set it to 0 to opt out; where torch was imported
# first, or the system has no such pages, nothing changes. Worker processes inherit it.
os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")

from deepnotes.errors import BadArgument  # noqa: E402  (imported before the claw: the one unchecked module)

# Every annotated parameter in the package is checked against its annotation when it is called: a value of
# the wrong kind (a string where a depth goes, a float where a count goes) or outside its declared domain
# (core.validate's Count, Depth, Positive, ...: a depth of 0, a negative std) is a BadArgument — a TypeError
# and a ValueError at once — naming the parameter, raised at the door rather than inside torch, SymPy or a
# loop. An int is accepted for a float; a list is checked by its first item (not a random one: the same call
# passes or fails on every run).
beartype_this_package(
    conf=BeartypeConf(
        is_pep484_tower=True, violation_param_type=BadArgument, is_color=False, claw_is_pep526=False, is_random=False
    )
)

# ruff: noqa: E402  (the checks above must be in place before any module of the package is imported)
from deepnotes.core.config import BUDGETS, NORM_STYLES, Budget, ModelConfig, TrainConfig, device, get_budget
from deepnotes.core.data import MarkovLanguage
from deepnotes.core.ensembles import RunContext
from deepnotes.core.models import Block, Residual, TransformerLM, build_model
from deepnotes.core.train import History, Masked, NextToken, train

__version__ = "0.1.0"
IMPORT_SECONDS = time.perf_counter() - _IMPORT_START  # what importing the package took (the estimate's setup)

__all__ = [
    "BUDGETS",
    "Budget",
    "device",
    "get_budget",
    "RunContext",
    "NORM_STYLES",
    "ModelConfig",
    "TrainConfig",
    "MarkovLanguage",
    "Block",
    "Residual",
    "TransformerLM",
    "build_model",
    "History",
    "Masked",
    "NextToken",
    "train",
]
