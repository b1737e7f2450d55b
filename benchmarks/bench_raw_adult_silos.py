"""Federated DPLogisticRegression on raw Adult, with and without public feature_bounds.

Raw Adult (one-hot categoricals, raw ages, hours and capital amounts) split
into three silos by row position (public metadata); epsilon = 1 in every
silo, three seeds. ``feature_bounds`` are the census's documented ranges
(:data:`bench_raw_adult.NUMERIC_RANGES`): every silo maps its rows by their
midpoint and half-width, no budget spent.

Run: ``python benchmarks/bench_raw_adult_silos.py`` (about a minute).
"""

import time
import warnings

import numpy as np
from sklearn.linear_model import LogisticRegression

from bench_raw_adult import raw_arrays
from sklearn_dpfair import DPLogisticRegression

SEEDS = (0, 1, 2)


def main():
    warnings.simplefilter("ignore")
    X, y, X_test, y_test, bounds = raw_arrays()
    silos = np.arange(X.shape[0]) % 3
    reference = LogisticRegression(max_iter=5000).fit(X, y).score(X_test, y_test)
    print(f"n = {X.shape[0]}, d = {X.shape[1]}, 3 silos; non-private reference "
          f"{reference:.4f}")
    scaled = dict(feature_scaling="auto", feature_bounds=bounds)
    for label, extra, fit_kw in (
        ("silos, raw, no scaling", {}, dict(silos=silos)),
        ("silos, raw + census feature_bounds", scaled, dict(silos=silos)),
        ("central (no silos), raw + census feature_bounds", scaled, {}),
    ):
        t = time.perf_counter()
        scores = [
            DPLogisticRegression(epsilon=1.0, classes=[0, 1], random_state=s, **extra)
            .fit(X, y, **fit_kw)
            .score(X_test, y_test)
            for s in SEEDS
        ]
        print(f"{label}: {np.round(scores, 4).tolist()} mean {np.mean(scores):.4f} "
              f"({time.perf_counter() - t:.0f} s)")


if __name__ == "__main__":
    main()
