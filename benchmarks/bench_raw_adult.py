# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""DPLogisticRegression on Adult's raw numeric columns with public census ranges.

Two representations of the same rows, each fitted by the default DP-SGD at
epsilon = 1 (5 seeds):

* "standardized": the benchmarks' protocol (one-hot, then StandardScaler on
  every column, statistics of the training rows: outside the guarantee);
* "raw + census ranges": the numeric columns in their units (age, years of
  education, capital gain and loss in dollars, hours a week; fnlwgt is left
  out as the other public preprocessings do), one-hot columns from the
  codebook's categories (public), and ``feature_scaling="auto"`` with the
  census's documented ranges as ``feature_bounds``: nothing is read from the
  data before the fit, so the whole preprocessing is inside the guarantee;
* "private pipeline": the same raw columns through
  ``make_private_pipeline`` (codebook one-hot, free; ``DPStandardScaler``
  with the census ranges as clipping bounds, a noisy mean and variance of
  each numeric column) and the same estimator, under one total epsilon.

Run: ``python benchmarks/bench_raw_adult.py``.
"""

import time
import warnings

import numpy as np
from sklearn.compose import make_column_transformer
from sklearn.preprocessing import OneHotEncoder

from _adult import adult_arrays, machine_description
from sklearn_dpfair import DPLogisticRegression
from sklearn_dpfair.datasets import load_adult
from sklearn_dpfair.datasets._adult_preprocessing import codebook_categories
from sklearn_dpfair.pipeline import make_private_pipeline
from sklearn_dpfair.preprocessing import DPStandardScaler

# Documented census ranges: ages 17-90, 16 education levels, hours top-coded
# at 99, capital amounts top-coded at 99,999.
NUMERIC_RANGES = {
    "age": (17, 90),
    "education-num": (1, 16),
    "capital-gain": (0, 99_999),
    "capital-loss": (0, 99_999),
    "hours-per-week": (1, 99),
}
SEEDS = range(5)


def raw_arrays():
    train, test = load_adult(), load_adult(subset="test")
    schema = codebook_categories()
    cats = train.categorical_features
    pre = make_column_transformer(
        (
            OneHotEncoder(
                categories=[schema[c] for c in cats],
                handle_unknown="ignore",
                sparse_output=False,
            ),
            cats,
        ),
        ("passthrough", list(NUMERIC_RANGES)),
    )
    # Data-independent: fitted on the codebook, not the rows.
    X = pre.fit_transform(train.data)
    n_onehot = X.shape[1] - len(NUMERIC_RANGES)
    bounds = [(0.0, 1.0)] * n_onehot + list(NUMERIC_RANGES.values())
    return (
        X.astype(float),
        train.target.to_numpy(),
        pre.transform(test.data).astype(float),
        test.target.to_numpy(),
        bounds,
    )


def accuracies(make, X, y, X_test, y_test):
    out = []
    for seed in SEEDS:
        out.append(make(seed).fit(X, y).score(X_test, y_test))
    return np.array(out)


def main():
    warnings.simplefilter("ignore")
    print(machine_description())
    Xs, ys, Xs_t, ys_t, *_ = adult_arrays()
    Xr, yr, Xr_t, yr_t, bounds = raw_arrays()
    rows = []
    for eps in (1.0, 0.1):
        t = time.perf_counter()
        std = accuracies(
            lambda s: DPLogisticRegression(epsilon=eps, classes=[0, 1], random_state=s),
            Xs, ys, Xs_t, ys_t,
        )
        raw_plain = accuracies(
            lambda s: DPLogisticRegression(epsilon=eps, classes=[0, 1], random_state=s),
            Xr, yr, Xr_t, yr_t,
        )
        raw = accuracies(
            lambda s: DPLogisticRegression(
                epsilon=eps, classes=[0, 1], random_state=s,
                feature_scaling="auto", feature_bounds=bounds,
            ),
            Xr, yr, Xr_t, yr_t,
        )
        n_onehot = Xr.shape[1] - len(NUMERIC_RANGES)
        numeric = list(range(n_onehot, Xr.shape[1]))
        piped = accuracies(
            lambda s: make_private_pipeline(
                make_column_transformer(
                    ("passthrough", list(range(n_onehot))),
                    (
                        DPStandardScaler(bounds=list(NUMERIC_RANGES.values())),
                        numeric,
                    ),
                ),
                DPLogisticRegression(classes=[0, 1]),
                epsilon=eps,
                random_state=s,
            ),
            Xr, yr, Xr_t, yr_t,
        )
        rows.append((eps, std, raw_plain, raw, piped, time.perf_counter() - t))
    print(
        "| epsilon | standardized (outside the guarantee) | raw, no scaling | "
        "raw + census ranges (inside) | private pipeline (inside) |"
    )
    print("|---|---|---|---|---|")
    for eps, std, plain, raw, piped, _ in rows:
        print(
            f"| {eps:g} | {std.mean():.4f} ± {std.std():.4f} | {plain.mean():.4f} | "
            f"{raw.mean():.4f} ({raw.mean() - std.mean():+.4f}) | "
            f"{piped.mean():.4f} ± {piped.std():.4f} ({piped.mean() - std.mean():+.4f}) |"
        )


if __name__ == "__main__":
    main()
