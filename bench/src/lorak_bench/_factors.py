"""Factor builders shared by the experiments that compare landmark choices at rank m.

Each builder maps a task to an unfitted factor estimator: ``kernel_params(task)`` gives
the kernel as estimator parameters (the data set's resolved kernel, prepared once), and
``task.params["m"]`` the rank. The experiments wrap them in their own methods (a factor
alone, kernel PCA on it, an LS-SVM on it), so that every experiment builds the same
Nyström, incomplete Cholesky and exact factors the same way.
"""

from __future__ import annotations

from lorak.estimators import ExactEigen, IncompleteCholesky, Nystroem
from lorak.kernels import Gaussian

from ._preprocess import dense

__all__ = [
    "NYSTROM_LABELS",
    "eigen_builder",
    "factor_columns",
    "gaussian_bandwidth",
    "gaussian_context",
    "icd_builder",
    "nystroem_builder",
]

NYSTROM_LABELS = {
    "kmeans": "k-means Nyström",
    "rls": "RLS Nyström",
    "uniform": "uniform Nyström",
    "column_norm": "Drineas–Mahoney",
}


def gaussian_context(data) -> dict:
    """The data set's Gaussian exp(−‖x−y‖²/γ), γ = the mean squared distance of the rows
    to their mean, resolved once so that every method gets the same kernel: the
    ``kernel`` and its ``bandwidth`` (a part's ``prepare`` context). The rows are made
    dense float64 first, for every method alike."""
    data.X = dense(data.X)
    kernel = Gaussian(bandwidth="mean_to_centroid").resolve(data.X)
    return {"kernel": kernel, "bandwidth": float(kernel.bandwidth)}


def gaussian_bandwidth(task) -> dict:
    """The data set's resolved Gaussian (``context["bandwidth"]``) as estimator
    parameters (clone-safe floats)."""
    return {"kernel": "gaussian", "bandwidth": task.context["bandwidth"]}


def nystroem_builder(landmarks, kernel_params):
    """Nyström with these landmarks, m components, seeded by the task."""

    def build(task):
        return Nystroem(
            **kernel_params(task),
            n_components=task.params["m"],
            landmarks=landmarks,
            random_state=task.seed,
        )

    return build


def icd_builder(kernel_params):
    """Pivoted incomplete Cholesky of rank m (deterministic)."""

    def build(task):
        return IncompleteCholesky(**kernel_params(task), n_components=task.params["m"])

    return build


def eigen_builder(kernel_params):
    """The best rank-m factor, from the exact eigendecomposition (deterministic)."""

    def build(task):
        return ExactEigen(**kernel_params(task), n_components=task.params["m"])

    return build


def factor_columns(wrap, kernel_params, *, svd_label: str | None = None) -> dict:
    """The landmark columns the experiments compare, ``{name: Method}`` in the papers'
    order: the rank-m eigen factor (when ``svd_label`` is given; deterministic),
    Nyström with k-means, ridge-leverage-score, uniform and column-norm landmarks, and
    pivoted incomplete Cholesky (deterministic). ``wrap(name, build, label=,
    deterministic=)`` makes each a method around its factor builder (a factor alone,
    kernel PCA on it, an LS-SVM on it)."""
    cols = {}
    if svd_label is not None:
        cols["svd"] = wrap("svd", eigen_builder(kernel_params), label=svd_label, deterministic=True)
    for name, label in NYSTROM_LABELS.items():
        cols[name] = wrap(name, nystroem_builder(name, kernel_params), label=label)
    cols["icd"] = wrap("icd", icd_builder(kernel_params), label="ICD", deterministic=True)
    return cols
