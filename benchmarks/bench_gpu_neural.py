# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Fit time of DPMLPClassifier and DPLogisticRegression: numpy, torch/CPU, torch/CUDA.

Synthetic standard-normal features (float32 and float64), labels from a
fixed two-layer network; ``epsilon=1``, ``delta=1e-5``, ``classes=[0, 1]``,
``random_state=0``, ``max_iter=2`` epochs, default batches (Poisson, 5% of
the rows for the network, the package's "auto" for the linear model);
``DPMLPClassifier(hidden_layer_sizes=(64,))``. Backends: numpy input with
``device="cpu"``; a CPU tensor under ``array_api_dispatch``; numpy input with
``device="cuda"``. Each fit is timed once after a warm-up fit on 2,000 rows
(CUDA kernels and the calibration cache), and the test accuracy of the same
fit is reported so that the backends can be compared (same seed: same
batches and noise).

Usage: python benchmarks/bench_gpu_neural.py [--n 100000 1000000] [--d 100]
       [--out results.json]
"""

import argparse
import json
import os
import time
import warnings

# scikit-learn's array API dispatch needs scipy's, set before either imports.
os.environ.setdefault("SCIPY_ARRAY_API", "1")

import numpy as np
import sklearn

from sklearn_dpfair import DPLogisticRegression
from sklearn_dpfair.neural import DPMLPClassifier


def _data(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)).astype(np.float32)
    W = rng.standard_normal((d, 16)) / np.sqrt(d)
    h = np.tanh(X @ W)
    y = (h @ rng.standard_normal(16) + 0.3 * rng.standard_normal(n) > 0).astype(int)
    return X, y


def _estimators(device):
    common = dict(epsilon=1.0, classes=[0, 1], random_state=0, max_iter=2, device=device)
    return {
        "DPMLPClassifier(64)": DPMLPClassifier(hidden_layer_sizes=(64,), **common),
        "DPLogisticRegression": DPLogisticRegression(**common),
    }


def _fit_time(make, X, y, X_test, y_test, backend):
    import torch

    def convert(A):
        return torch.asarray(A) if backend == "torch/CPU" else A

    dispatch = backend == "torch/CPU"
    with sklearn.config_context(array_api_dispatch=dispatch):
        make().fit(convert(X[:2000]), convert(y[:2000]))  # warm-up
        if backend == "torch/CUDA":
            torch.cuda.synchronize()
        start = time.perf_counter()
        est = make().fit(convert(X), convert(y))
        if backend == "torch/CUDA":
            torch.cuda.synchronize()
        seconds = time.perf_counter() - start
        pred = est.predict(convert(X_test))
    pred = pred.cpu().numpy() if hasattr(pred, "cpu") else np.asarray(pred)
    return seconds, float(np.mean(pred == y_test))


def main():
    import torch

    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--d", type=int, default=100)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    backends = ["numpy/CPU", "torch/CPU"]
    if torch.cuda.is_available():
        backends.append("torch/CUDA")
    rows = []
    for n in args.n:
        X, y = _data(n, args.d)
        X_test, y_test = _data(20_000, args.d, seed=1)
        for name in _estimators("cpu"):
            for backend in backends:
                device = "cuda" if backend == "torch/CUDA" else "cpu"
                seconds, acc = _fit_time(
                    lambda: _estimators(device)[name], X, y, X_test, y_test, backend
                )
                row = dict(model=name, backend=backend, n=n, d=args.d,
                           seconds=round(seconds, 3), accuracy=round(acc, 4))
                print(json.dumps(row), flush=True)
                rows.append(row)
    info = dict(
        torch=torch.__version__,
        gpu=torch.cuda.get_device_name() if torch.cuda.is_available() else None,
        threads=torch.get_num_threads(),
    )
    print(json.dumps(info))
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(dict(info=info, rows=rows), fh, indent=1)


if __name__ == "__main__":
    main()
