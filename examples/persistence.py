"""Save a fitted model and load it back — without pickle.
======================================================

``lorak.save`` writes arrays (.npz) and parameters (JSON) with a format version;
``lorak.load`` rebuilds only classes it trusts and never executes code from the file,
so a file from someone else cannot run anything on your machine (unlike pickle).
The reloaded model predicts exactly as the original.

    python examples/persistence.py [--quick]
"""

import argparse
import os
import tempfile
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits
from sklearn.preprocessing import MinMaxScaler

import lorak
from lorak import LSSVC, GeneralizedNystroem, Nystroem


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    p.add_argument(
        "--quick",
        action="store_true",
        default=os.environ.get("LORAK_EXAMPLES_QUICK") == "1",
        help="small sizes (seconds); also LORAK_EXAMPLES_QUICK=1",
    )
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if not (hasattr(lorak, "save") and hasattr(lorak, "load")):
        print("this lorak has no lorak.save / lorak.load yet: example skipped")
        return None
    X, y = load_digits(return_X_y=True)
    if args.quick:
        X, y = X[:400], y[:400]
    X = MinMaxScaler().fit_transform(X)
    y_semi = np.where(np.arange(len(y)) % 10 == 0, y, -1)  # every 10th row labeled

    models = {
        "LS-SVM on a Nyström factor": LSSVC(
            Nystroem(kernel="gaussian", n_components=50, random_state=0), C=10.0
        ).fit(X, y),
        "generalized Nyström factor": GeneralizedNystroem(random_state=0).fit(X, y_semi),
    }
    same = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, model) in enumerate(models.items()):
            path = Path(tmp) / f"model{i}.lorak"
            lorak.save(model, path)
            back = lorak.load(path)
            if hasattr(model, "predict"):
                a, b = model.predict(X), back.predict(X)
            else:
                a, b = model.transform(X), back.transform(X)
            same[name] = bool(np.array_equal(a, b))
            print(
                f"{name}: {path.stat().st_size / 1024:.0f} KiB, reloaded "
                f"{type(back).__name__}, outputs identical: {same[name]}"
            )

        # a damaged file is refused with a clear error, never half-loaded
        bad = Path(tmp) / "bad.lorak"
        bad.write_bytes((Path(tmp) / "model0.lorak").read_bytes()[:100])
        try:
            lorak.load(bad)
        except Exception as exc:  # the error type is lorak's PersistenceError (a ValueError)
            print(f"truncated file: {type(exc).__name__}: {exc}")
    return same


if __name__ == "__main__":
    main()
