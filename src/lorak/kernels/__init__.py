"""Kernel functions, bandwidth rules and chunked block evaluation.

This package is a building block of the estimators and of their math (no
estimator here).

>>> import numpy as np
>>> from lorak.kernels import Gaussian
>>> X = np.array([[0.0, 0.0], [1.0, 0.0]])
>>> k = Gaussian(bandwidth="mean_pairwise").resolve(X)   # b0 = 2 (mean|x|^2 - |mean x|^2)
>>> k.bandwidth
0.5
>>> np.round(k(X), 4)
array([[1.    , 0.1353],
       [0.1353, 1.    ]])
"""

from ._bandwidth import BANDWIDTH_RULES, bandwidth_scale, scale_gamma
from ._bank import KernelBank
from ._blocks import chunk_rows, iter_kernel_blocks, kernel_block, kernel_product
from ._columns import KernelColumns
from ._device import DEVICE_KERNELS, check_device_kernel, upper_triangular_product
from ._kernels import (
    KERNELS,
    CallableKernel,
    Gaussian,
    InverseDistance,
    Kernel,
    Laplacian,
    Linear,
    Polynomial,
    make_kernel,
    sq_norms,
)
from ._pairwise import PAIRWISE_KERNELS, AdditiveChi2, Chi2, Cosine, PairwiseKernel, Sigmoid

KERNELS.update(PAIRWISE_KERNELS)  # scikit-learn's other kernel names

__all__ = [
    "BANDWIDTH_RULES",
    "DEVICE_KERNELS",
    "KERNELS",
    "AdditiveChi2",
    "CallableKernel",
    "Chi2",
    "Cosine",
    "Gaussian",
    "InverseDistance",
    "Kernel",
    "KernelBank",
    "KernelColumns",
    "Laplacian",
    "Linear",
    "PairwiseKernel",
    "Polynomial",
    "Sigmoid",
    "bandwidth_scale",
    "check_device_kernel",
    "chunk_rows",
    "iter_kernel_blocks",
    "kernel_block",
    "kernel_product",
    "make_kernel",
    "scale_gamma",
    "sq_norms",
    "upper_triangular_product",
]
