"""Bigger than memory: a factor learned from a sample, applied to a memory-mapped file.
====================================================================================

The rows live in a ``numpy.memmap`` on disk. The Nyström factor needs only its
landmarks, so it is fitted on a random sample of rows; the n × m feature matrix is
then written block by block into a second memmap — at no time is more than one block
of the input in memory (the plain chunked API: ``transform`` on row slices). An
LS-SVM is trained on the features. When Dask is installed (``pip install lorak[dask]``)
and this lorak supports it, the same transform runs lazily on a dask array and the
two results are compared; otherwise that part is skipped.

    python examples/bigger_than_memory.py [--quick]
"""

import argparse
import importlib.util
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from lorak import LSSVC, Nystroem
from lorak.datasets import make_twonorm


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    p.add_argument(
        "--quick",
        action="store_true",
        default=os.environ.get("LORAK_EXAMPLES_QUICK") == "1",
        help="small sizes (seconds); also LORAK_EXAMPLES_QUICK=1",
    )
    p.add_argument("--dir", default=None, help="folder for the memmap files (default: a temp dir)")
    return p.parse_args(argv)


def write_memmap(path, n, d, *, block, seed):
    """Generate twonorm rows block by block straight into a memmap (X) and labels (y)."""
    X = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(n, d))
    y = np.empty(n, dtype=np.int64)
    for i, s in enumerate(range(0, n, block)):
        e = min(s + block, n)
        Xb, yb = make_twonorm(e - s, d, random_state=seed + i)
        X[s:e], y[s:e] = Xb, yb
    X.flush()
    return np.load(path, mmap_mode="r"), y


def transform_in_blocks(factor, X, out, block):
    """``out[s:e] = factor.transform(X[s:e])``: one block of X in memory at a time."""
    for s in range(0, X.shape[0], block):
        e = min(s + block, X.shape[0])
        out[s:e] = factor.transform(np.asarray(X[s:e]))
    return out


def _dask_supported():
    return (
        importlib.util.find_spec("dask") is not None
        and importlib.util.find_spec("lorak.parallel") is not None
    )


def main(argv=None):
    args = parse_args(argv)
    n, d, m = (20_000, 20, 50) if args.quick else (1_000_000, 20, 200)
    block = 5_000 if args.quick else 50_000
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        tmp = Path(tmp)
        X, y = write_memmap(tmp / "X.npy", n, d, block=block, seed=0)
        print(f"X: {n} × {d} float32 memmap ({X.nbytes / 2**20:.0f} MiB on disk)")

        # 1. fit the factor on a random sample of rows (landmarks by k-means on it)
        rng = np.random.default_rng(0)
        sample = np.sort(rng.choice(n, size=min(n, 20 * m), replace=False))
        t0 = time.perf_counter()
        factor = Nystroem(
            kernel="gaussian", n_components=m, landmarks="kmeans", random_state=0
        ).fit(np.asarray(X[sample]))
        print(
            f"Nyström factor (m = {m}) fitted on {sample.size} sampled rows in "
            f"{time.perf_counter() - t0:.2f} s"
        )

        # 2. the n × m features, written block by block into a memmap
        G = np.lib.format.open_memmap(
            tmp / "G.npy", mode="w+", dtype=np.float32, shape=(n, factor.n_components_)
        )
        t0 = time.perf_counter()
        transform_in_blocks(factor, X, G, block)
        print(f"features written in {time.perf_counter() - t0:.2f} s ({G.nbytes / 2**20:.0f} MiB)")

        # 3. an LS-SVM on the features (a linear model on G: "passthrough" factor)
        half = n // 2
        clf = LSSVC("passthrough", C=1.0).fit(G[:half], y[:half])
        print(f"LS-SVM accuracy on the second half: {clf.score(G[half:], y[half:]):.4f}")

        # 4. the same transform, lazily with Dask, when available
        if not _dask_supported():
            print("Dask (or lorak's dask support) is not installed: lazy transform skipped")
            return {"n": n, "dask": None}
        import dask.array as da

        Xd = da.from_array(X, chunks=(block, d))
        Gd = factor.transform(Xd)
        same = bool(np.allclose(Gd[:block].compute(), G[:block], rtol=1e-4, atol=1e-5))
        print(
            f"dask: lazy {type(Gd).__name__} of shape {Gd.shape}, chunks "
            f"{Gd.chunks[0][:2]}…; first block equal to the memmap result: {same}"
        )
        del X, G  # release the memmaps before the folder is removed
        return {"n": n, "dask": same}


if __name__ == "__main__":
    main()
