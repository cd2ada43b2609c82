"""deepnotes: the helper package of the book on training very deep Transformers.

Importing it loads the model code (torch) only; plotting (``deepnotes.plots``), widgets
(``deepnotes.widgets``) and SymPy derivations (``deepnotes.symbolic``) are imported on demand.
"""
from .budget import BUDGETS, Budget, device, get_budget
from .config import NORM_STYLES, ModelConfig, TrainConfig
from .data import MarkovLanguage
from .models import Block, MLPStack, Residual, TransformerLM, build_model
from .train import History, train, train_lm

__version__ = "0.1.0"

__all__ = [
    "BUDGETS", "Budget", "device", "get_budget", "NORM_STYLES", "ModelConfig", "TrainConfig",
    "MarkovLanguage", "Block", "MLPStack", "Residual", "TransformerLM", "build_model",
    "History", "train", "train_lm",
]
