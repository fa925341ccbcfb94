"""Approximation errors, quantization error, kernel alignment, pairwise cluster accuracy.

Functions taking a kernel and data never form the n × n matrix: they stream row
chunks of K. Alignment has a factor form for K = G Gᵀ, ⟨G₁G₁ᵀ, G₂G₂ᵀ⟩_F = ‖G₁ᵀG₂‖²_F,
so it costs O(n m₁ m₂).
"""

from ..landmarks import quantization_error
from ._alignment import (
    alignment,
    centered_alignment,
    factor_alignment,
    ideal_kernel_factor,
)
from ._cluster import pairwise_cluster_accuracy
from ._errors import approximation_error, frobenius_error, trace_error

__all__ = [
    "alignment",
    "approximation_error",
    "centered_alignment",
    "factor_alignment",
    "frobenius_error",
    "ideal_kernel_factor",
    "pairwise_cluster_accuracy",
    "quantization_error",
    "trace_error",
]
