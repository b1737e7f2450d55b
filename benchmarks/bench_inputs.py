# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Input layouts: time and peak memory of a fit on the same data in each layout.

(a) ``DPLogisticRegression(solver="dp-sgd")`` against scikit-learn's
``LogisticRegression`` (lbfgs) and ``SGDClassifier(loss="log_loss")`` on the
same inputs, at n in {1e4, 1e5, 1e6} rows and d = 100 features, for the
layouts

* C-ordered float64 (the reference layout), F-ordered float64, a pandas
  ``DataFrame``, C-ordered float32 (the same Gaussian features);
* CSR matrices at 1% and 10% density (Gaussian nonzeros, other data of the
  same shape, labels from a logistic model).

(b) A wide sparse case: n = 1e4, d = 1e5, 0.1% density (CSR; its dense copy
would take 8 GB, so its reference is DP-SGD on the CSR matrix itself).

(c) The other estimators (``FERMIClassifier``, ``DPFERMIClassifier``,
``SemiDPLinearRegression``, ``HeavyTailDPRegressor``) at their defaults, on
the synthetic inputs of :mod:`sklearn_dpfair.audit._synthetic` (d = 100) at n
in {1e4, 1e5}: C vs F vs DataFrame vs float32, and a CSR column (10%
density) that says "refused" when ``fit`` raises a TypeError, so that the
table can be re-run as sparse support lands.

Times are ratios to a reference fit in the same process: in (a), the DP-SGD
fit on the C-ordered float64 matrix of the same n; in (c), the same
estimator on the C-ordered float64 matrix of the same n. Each time is the
median of untraced fits (3 at n <= 1e4, 1 above), after a first fit traced
by :mod:`tracemalloc` (numpy and scipy report their buffers to it) gives the
peak memory and warms what a fit memoizes (the noise calibration). The
input, allocated before, is not counted in the peak; any copy the fit makes
of it is.

Writes ``docs/benchmarks/inputs.rst`` (``--quick``: a smoke run on small
inputs, whose page goes to the temporary directory).

Usage: nice -n 10 python benchmarks/bench_inputs.py [--quick] [--max-rows 1000000]
"""

import argparse
import datetime
import gc
import os
import statistics
import sys
import tempfile
import time
import tracemalloc
import warnings

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression, SGDClassifier

sys.path.insert(0, os.path.dirname(__file__))
from _adult import machine_description  # noqa: E402

from sklearn_dpfair import (  # noqa: E402
    DPFERMIClassifier,
    DPLogisticRegression,
    FERMIClassifier,
    HeavyTailDPRegressor,
    SemiDPLinearRegression,
)
from sklearn_dpfair.audit._synthetic import synthetic_inputs  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "..", "docs", "benchmarks")
N_FEATURES = 100
DENSE_LAYOUTS = ["C float64", "F float64", "DataFrame", "C float32"]
SPARSE_DENSITIES = {"CSR 1%": 0.01, "CSR 10%": 0.10}
OTHER_ESTIMATORS = [
    FERMIClassifier,
    DPFERMIClassifier,
    SemiDPLinearRegression,
    HeavyTailDPRegressor,
]


def logistic_estimators():
    """The three estimators of (a), fresh, by column name."""
    return {
        "DP-SGD": DPLogisticRegression(
            solver="dp-sgd", epsilon=1.0, classes=[0, 1], random_state=0
        ),
        "LogisticRegression": LogisticRegression(),
        "SGDClassifier": SGDClassifier(loss="log_loss", random_state=0),
    }


def dense_layout(X, layout):
    """``X`` (C-ordered float64) in ``layout``; a new array except for the reference."""
    if layout == "C float64":
        return X
    if layout == "F float64":
        return np.asfortranarray(X)
    if layout == "DataFrame":
        return pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    if layout == "C float32":
        return X.astype(np.float32)
    raise ValueError(layout)


def dense_data(n, d, seed=0):
    """Gaussian C-ordered float64 features, labels from a logistic model."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    w = rng.standard_normal(d) / np.sqrt(d)
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-2.0 * (X @ w)))).astype(np.int64)
    return X, y


def sparse_data(n, d, density, seed=0):
    """CSR float64 with Gaussian nonzeros at ``density``, logistic labels."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, format="csr", random_state=rng,
                  data_rvs=rng.standard_normal)
    w = rng.standard_normal(d) / np.sqrt(max(density * d, 1.0))
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-2.0 * (X @ w)))).astype(np.int64)
    return X, y


def measured(fit, repeats):
    """Peak bytes of one traced fit, then the median seconds of ``repeats`` untraced fits.

    The traced fit comes first: it also warms what a fit memoizes (the
    noise calibration of a private fit), so the timed fits are warm.
    """
    gc.collect()
    tracemalloc.start()
    try:
        fit()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    seconds = []
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        fit()
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds), peak


def attempt(make_estimator, X, y, fit_params, repeats):
    """(seconds, peak bytes) or the reason the fit did not run."""
    def fit():
        make_estimator().fit(X, y, **fit_params)

    try:
        return measured(fit, repeats)
    except TypeError as exc:
        print("refused:", exc, flush=True)
        return "refused"
    except MemoryError:
        return "out of memory"


def repeats_for(n):
    return 3 if n <= 10_000 else 1


def bench_logistic(sizes, d, wide):
    """(a) and (b): rows of dicts (n, layout, then per estimator a cell)."""
    rows, refs = [], {}
    for n in sizes:
        cases = [(layout, None) for layout in DENSE_LAYOUTS]
        cases += [(name, rho) for name, rho in SPARSE_DENSITIES.items()]
        X_dense, y_dense = dense_data(n, d)
        for layout, density in cases:
            if density is None:
                X, y = dense_layout(X_dense, layout), y_dense
            else:
                if layout == list(SPARSE_DENSITIES)[0]:
                    del X_dense  # the dense layouts are done: free them
                X, y = sparse_data(n, d, density)
            row = {"n": n, "d": d, "layout": layout}
            for name in logistic_estimators():
                row[name] = attempt(
                    lambda name=name: logistic_estimators()[name], X, y, {},
                    repeats_for(n),
                )
                print(n, layout, name, row[name], flush=True)
            if layout == "C float64":
                refs[n] = row["DP-SGD"][0]
            rows.append(row)
            del X
            gc.collect()
    if wide:
        n, d_wide, density = wide
        X, y = sparse_data(n, d_wide, density)
        row = {"n": n, "d": d_wide, "layout": f"CSR {100 * density:g}% (wide)"}
        for name in logistic_estimators():
            row[name] = attempt(
                lambda name=name: logistic_estimators()[name], X, y, {},
                repeats_for(n),
            )
            print(n, d_wide, name, row[name], flush=True)
        refs[("wide", n)] = row["DP-SGD"][0]
        rows.append(row)
    return rows, refs


def bench_others(sizes, d):
    """(c): per estimator and n, a cell per layout (C float64 is the reference)."""
    rows = []
    for cls in OTHER_ESTIMATORS:
        for n in sizes:
            est = cls()
            X, y, params, _ = synthetic_inputs(est, n_samples=n, n_features=d)

            def make(cls=cls):
                est = cls()
                if "random_state" in est.get_params():
                    est.set_params(random_state=0)
                return est

            row = {"estimator": cls.__name__, "n": n}
            for layout in DENSE_LAYOUTS:
                row[layout] = attempt(
                    make, dense_layout(X, layout), y, params, repeats_for(n)
                )
                print(cls.__name__, n, layout, row[layout], flush=True)
            # 10% of the same Gaussian entries kept: a CSR matrix of the shape.
            keep = np.random.default_rng(1).random(X.shape) < 0.1
            row["CSR 10%"] = attempt(
                make, sp.csr_matrix(np.where(keep, X, 0.0)), y, params,
                repeats_for(n),
            )
            print(cls.__name__, n, "CSR 10%", row["CSR 10%"], flush=True)
            rows.append(row)
    return rows


def _ratio(cell, ref):
    if isinstance(cell, str):
        return cell
    return f"{cell[0] / ref:.2f}"


def _mb(cell):
    if isinstance(cell, str):
        return "-"
    return f"{cell[1] / 2**20:.0f}"


def _table(header, rows):
    lines = [".. list-table::", "   :header-rows: 1", ""]
    for i, row in enumerate([header, *rows]):
        for j, cell in enumerate(row):
            lines.append(f"   {'* -' if j == 0 else '  -'} {cell}")
    return lines + [""]


def write_rst(path, logistic, refs, others, command, wall, skipped):
    names = list(logistic_estimators())
    head = (
        "Input layouts: time and memory of a fit\n"
        "=======================================\n\n"
        f"Measured {datetime.date.today()} on {machine_description()} (shared "
        f"with other jobs, run under ``nice``). Command: ``{command}``; total "
        f"wall time {wall / 60:.1f} min. Produced by ``benchmarks/bench_inputs.py``.\n\n"
        "Times are ratios to a reference fit in the same process (its seconds "
        "are listed); each is the median of untraced fits (3 at n <= 1e4, 1 "
        "above), run after a first fit that gives the peak memory and warms "
        "what fits memoize (the noise calibration). *Peak* is the peak of "
        "``tracemalloc`` (which sees numpy's and scipy's buffers) during that "
        "first fit: the input, allocated before, is not counted, any copy the "
        "fit makes of it is. \"refused\" "
        "is a fit that raised TypeError (the layout is not accepted).\n"
    )
    lines = [head]
    lines += [
        "DP-SGD against scikit-learn",
        "---------------------------",
        "",
        "``DPLogisticRegression(solver='dp-sgd', epsilon=1, classes=[0, 1])`` "
        "at its defaults, ``LogisticRegression()`` (lbfgs) and "
        "``SGDClassifier(loss='log_loss')``. Dense rows: the same Gaussian "
        "features (labels from a logistic model) in each layout; CSR rows: "
        "Gaussian nonzeros at the given density, same shape. Reference: the "
        "DP-SGD fit on the C-ordered float64 matrix of the same n (the wide "
        "case: DP-SGD on its CSR matrix, whose dense copy would take 8 GB).",
        "",
    ]
    ref_rows = []
    for key, seconds in refs.items():
        label = f"n = {key[1]:,}, wide CSR" if isinstance(key, tuple) else f"n = {key:,}, d = {N_FEATURES}, C float64"
        ref_rows.append([label, f"{seconds:.3f}"])
    lines += _table(["reference fit (DP-SGD)", "seconds"], ref_rows)
    header = ["n", "d", "layout"]
    header += [f"{name} time (x ref)" for name in names]
    header += [f"{name} peak (MB)" for name in names]
    body = []
    for row in logistic:
        ref = refs[("wide", row["n"])] if "wide" in row["layout"] else refs[row["n"]]
        body.append(
            [f"{row['n']:,}", f"{row['d']:,}", row["layout"]]
            + [_ratio(row[name], ref) for name in names]
            + [_mb(row[name]) for name in names]
        )
    lines += _table(header, body)
    if skipped:
        lines += [skipped, ""]
    lines += [
        "Other estimators",
        "----------------",
        "",
        "Each estimator at its defaults (``random_state=0``) on the synthetic "
        "inputs of ``sklearn_dpfair.audit._synthetic`` (Gaussian features, d = "
        f"{N_FEATURES}, the fit arguments it needs). Time: ratio to the same "
        "estimator on the C-ordered float64 matrix of the same n (seconds "
        "listed). CSR: the same matrix with 90% of its entries set to 0.",
        "",
    ]
    layouts = DENSE_LAYOUTS + ["CSR 10%"]
    header = ["estimator", "n", "reference (s)"]
    header += [f"{layout} time (x ref)" for layout in layouts]
    header += [f"{layout} peak (MB)" for layout in layouts]
    body = []
    for row in others:
        ref = row["C float64"]
        ref_s = ref[0] if not isinstance(ref, str) else float("nan")
        body.append(
            [row["estimator"], f"{row['n']:,}", f"{ref_s:.3f}"]
            + [_ratio(row[layout], ref_s) for layout in layouts]
            + [_mb(row[layout]) for layout in layouts]
        )
    lines += _table(header, body)
    with open(path, "w") as f:
        f.write("\n".join(lines))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run on small inputs")
    parser.add_argument("--max-rows", type=int, default=1_000_000,
                        help="largest n of the DP-SGD table (1e4, 1e5, 1e6)")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    start = time.perf_counter()
    if args.quick:
        sizes, wide, other_sizes = [2_000], (1_000, 10_000, 0.001), [1_000]
    else:
        sizes = [n for n in (10_000, 100_000, 1_000_000) if n <= args.max_rows]
        wide, other_sizes = (10_000, 100_000, 0.001), [10_000, 100_000]
    logistic, refs = bench_logistic(sizes, N_FEATURES, wide)
    others = bench_others(other_sizes, N_FEATURES)
    wall = time.perf_counter() - start
    command = "nice -n 10 python benchmarks/bench_inputs.py" + (
        f" --max-rows {args.max_rows}" if args.max_rows != 1_000_000 else ""
    )
    skipped = "" if 1_000_000 in sizes else (
        "n = 1e6 was not run (``--max-rows``)."
    )
    # A smoke run checks the page too, in the temporary directory.
    out = tempfile.gettempdir() if args.quick else OUT
    path = os.path.join(out, "inputs.rst")
    write_rst(path, logistic, refs, others, command, wall, skipped)
    print(f"wrote {path} ({wall:.1f} s)")


if __name__ == "__main__":
    main()
