"""deepnotes: the helper package of the book on training very deep Transformers.

``book/<stem>.ipynb`` ↔ ``deepnotes/chapters/<stem>/``; what two or more chapters share lives in
``deepnotes.core`` (models, training, budgets, formulas) and ``deepnotes.show`` (figures, sliders,
verdicts). Importing ``deepnotes`` loads the model code (torch) only; plotting, widgets and SymPy
are imported on demand.
"""

import deepnotes.chapters  # noqa: E402,F401  (registers every chapter's sizes: budget.<stem>)
from deepnotes.core.config import BUDGETS, NORM_STYLES, Budget, ModelConfig, TrainConfig, device, get_budget
from deepnotes.core.data import MarkovLanguage
from deepnotes.core.models import Block, Residual, TransformerLM, build_model
from deepnotes.core.train import History, Masked, NextToken, train

__version__ = "0.1.0"

__all__ = [
    "BUDGETS",
    "Budget",
    "device",
    "get_budget",
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
