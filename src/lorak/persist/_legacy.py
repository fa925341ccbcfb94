"""Legacy class names: where classes saved under an old module path live now.

:data:`MOVED_CLASSES` maps old ``"module:QualName"`` to current (:func:`current_name`).
"""

from __future__ import annotations

#: Classes that moved since files were first written: ``{"old:Qual": "new:Qual"}``.
#: ``load`` reads a class name through this table before the allowlist lookup, so a
#: file saved under an old module path still loads (the class itself must still be in
#: the allowlist under its new path). Files are always written under the current path.
MOVED_CLASSES: dict[str, str] = {
    f"{old}:{cls}": f"{new}:{cls}"
    for old, moves in {
        # 0.1.0.dev0: the seven flat estimator modules became lorak.estimators/<stem>
        # and lorak.models/<stem>, each named after the math it calls
        "lorak.estimators": {
            "Nystroem": "lorak.estimators._nystrom",
            "ExactEigen": "lorak.estimators._nystrom",
            "IncompleteCholesky": "lorak.estimators._icd",
        },
        "lorak.semi_supervised": {
            "GeneralizedNystroem": "lorak.estimators._gen_nystrom",
            "SemiSupervisedFactorClassifier": "lorak.models._semi_supervised",
        },
        "lorak.csi": {"CSI": "lorak.estimators._csi"},
        "lorak.landmarks": {"Landmarks": "lorak.landmarks._base"},
        "lorak.npkl": {"SimpleNPKL": "lorak.estimators._simple_npkl"},
        "lorak.mkl": {"LowRankMKLClassifier": "lorak.estimators._lp_mkl"},
        "lorak.multiple_kernel": {
            "MultipleKernelGeneralizedNystroem": "lorak.estimators._mk_gen_nystrom"
        },
        "lorak.kernel_combination": {
            name: "lorak.estimators._kernel_combination"
            for name in (
                "UniformKernelSum",
                "ABMKL",
                "CABMKL",
                "GLMKLClassifier",
                "AlignmentMKLClassifier",
            )
        },
        # issue 49: the shared machinery moved to lorak._core, the pre-images to
        # lorak.decompose (no estimator stores these classes; a file holding one of
        # them still loads)
        "lorak._rows": {"Rows": "lorak._core.rows"},
        "lorak._validation": {"SemiSupervisedTargets": "lorak._core.targets"},
        "lorak.estimators._base": {"TransformerBase": "lorak._core.estimator"},
        "lorak.learn._preimage": {"PreImageMap": "lorak.decompose._preimage"},
    }.items()
    for cls, new in moves.items()
}


def current_name(name: str) -> str:
    """The current ``"module:QualName"`` of a class saved as ``name`` (itself when the
    class never moved)."""
    return MOVED_CLASSES.get(name, name)
