"""lorak — LOw-RAnk Kernels.

Low-rank kernel factors (Nyström with chosen landmarks, incomplete Cholesky, exact
eigen) as scikit-learn transformers whose ``transform(X)`` returns rows G with
G Gᵀ ≈ K, and the tools around them (kernels, landmark strategies, metrics,
datasets, benchmarks).
"""

from ._config import config_context, get_config, set_config
from .estimators import ExactEigen, IncompleteCholesky, Nystroem

__version__ = "0.1.0.dev0"

__all__ = [
    "ExactEigen",
    "IncompleteCholesky",
    "Nystroem",
    "__version__",
    "config_context",
    "get_config",
    "set_config",
]
