"""Factor builders shared by the experiments that compare landmark choices at rank m.

Each builder maps a task to an unfitted factor estimator: ``kernel_params(task)`` gives
the kernel as estimator parameters (the data set's resolved kernel, prepared once), and
``task.params["m"]`` the rank. The experiments wrap them in their own methods (a factor
alone, kernel PCA on it, an LS-SVM on it), so that every experiment builds the same
Nyström, incomplete Cholesky and exact factors the same way.
"""

from __future__ import annotations

from ..estimators import ExactEigen, IncompleteCholesky, Nystroem

__all__ = ["eigen_builder", "gaussian_bandwidth", "icd_builder", "nystroem_builder"]


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
