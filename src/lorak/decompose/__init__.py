"""Low-rank factors as pure functions on arrays: Nyström, incomplete Cholesky, eigen,
and the multiple-kernel :class:`FactorBank`; the estimators of :mod:`lorak.estimators`
validate, call these and store the results. The pre-images of a factor's rows
(``fit_preimage``, ``preimage``) live here too; users reach them from
:mod:`lorak.learn`.
"""

from ._bank import FactorBank, resolve_kernel_bank
from ._eigen import top_eigenpairs
from ._icd import ICDResult, incomplete_cholesky, pivot_transform_matrix
from ._nystrom import (
    NystromNormalization,
    default_rtol,
    device_nystrom_normalization,
    nystrom_normalization,
)
from ._preimage import PreImageMap as PreImageMap
from ._preimage import check_alpha as check_alpha
from ._preimage import fit_preimage as fit_preimage
from ._preimage import preimage as preimage
from ._preimage import preimage_rows as preimage_rows

__all__ = [
    "FactorBank",
    "ICDResult",
    "NystromNormalization",
    "default_rtol",
    "device_nystrom_normalization",
    "incomplete_cholesky",
    "nystrom_normalization",
    "pivot_transform_matrix",
    "resolve_kernel_bank",
    "top_eigenpairs",
]
