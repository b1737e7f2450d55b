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
in {1e4, 1e5}: C vs F vs DataFrame vs float32 vs CSR (1% density in
float64 and float32, 10% in float64; a cell says "refused" if ``fit``
raises a TypeError), each CSR fit's peak over the bytes of its CSR matrix,
and the dtype of ``coef_`` after the float32 fit (is float32 kept?).

(d) Every other solver, and three-class FERMI, at n = 1e5 on the same
synthetic inputs: the CSR fit at 1% density (float64 and float32), without
and with public ``sample_weight`` (uniform in [0.5, 2]), its peak over the
CSR storage, and its time against the dense C-ordered float64 fit (one
untraced fit each).

Times are ratios to a reference fit in the same process: in (a), the DP-SGD
fit on the C-ordered float64 matrix of the same n; in (c), the same
estimator on the C-ordered float64 matrix of the same n. Each time is the
median CPU time of the process (BLAS and OpenMP single-threaded unless the
environment says otherwise; the machine is shared, and the wall time
depends on the other jobs much more) over untraced fits (3 at
n <= 1e5, 1 above), after a first fit traced
by :mod:`tracemalloc` (numpy and scipy report their buffers to it) gives the
peak memory and warms what a fit memoizes (the noise calibration). The
input, allocated before, is not counted in the peak; any copy the fit makes
of it is. Every estimator first fits once on 1,000 rows (dense and CSR),
untraced, so that no peak holds the imports and caches of a first use.

Writes ``docs/benchmarks/inputs.rst`` (``--quick``: a smoke run on small
inputs, whose page goes to the temporary directory).

Usage: nice -n 10 python benchmarks/bench_inputs.py [--quick] [--max-rows 1000000]
"""

import os

# One thread per BLAS/OpenMP pool, set before numpy loads them: on a machine
# shared with other jobs, idle pool threads spin and their CPU time would
# count as the fit's. The page states it.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import datetime  # noqa: E402
import gc  # noqa: E402
import math  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from sklearn.linear_model import LogisticRegression, SGDClassifier  # noqa: E402

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
NOTES = "inputs_notes.inc"
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
    """Peak bytes of a traced fit, then CPU and wall seconds of untraced fits.

    Returns the median CPU seconds (all threads of the process), the peak
    and the median wall seconds of ``repeats`` untraced fits. On a shared
    machine the wall time depends on the other jobs; the CPU time much less.

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
    cpu, wall = [], []
    for _ in range(repeats):
        gc.collect()
        start_cpu, start = time.process_time(), time.perf_counter()
        fit()
        cpu.append(time.process_time() - start_cpu)
        wall.append(time.perf_counter() - start)
    return statistics.median(cpu), peak, statistics.median(wall)


def warm_up(make_estimator, X, y, fit_params):
    """An untraced small fit, so that no traced peak counts first-use costs.

    The first fit of an estimator in a process imports modules and fills
    caches; without this its traced peak would hold them.
    """
    for data in (X, sp.csr_matrix(X)):
        try:
            make_estimator().fit(data, y, **fit_params)
        except TypeError:
            pass


def attempt(make_estimator, X, y, fit_params, repeats):
    """(CPU seconds, peak bytes, wall seconds) or why the fit did not run."""
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
    return 3 if n <= 100_000 else 1


def logistic_cases(sizes, wide):
    """Cases of (a) and (b) as (n, d, layout, density), in run order.

    The largest n's dense layouts other than the reference come last, after
    (b) and (c): an interrupted run still has every other row.
    """
    first, last = [], []
    for n in sizes:
        for layout in DENSE_LAYOUTS:
            late = n == max(sizes) and n > 100_000 and layout != "C float64"
            (last if late else first).append((n, N_FEATURES, layout, None))
        first += [(n, N_FEATURES, name, rho) for name, rho in SPARSE_DENSITIES.items()]
    if wide:
        n, d_wide, density = wide
        first.append((n, d_wide, f"CSR {100 * density:g}% (wide)", density))
    return first, last


def _case_order(case):
    """Table order of a case: by d, n, then layout as listed."""
    n, d, layout, _ = case
    kinds = DENSE_LAYOUTS + list(SPARSE_DENSITIES)
    return d, n, kinds.index(layout) if layout in kinds else len(kinds)


def run_logistic_case(n, d, layout, density, dense_cache):
    """One row of (a) or (b): a cell per estimator."""
    if density is None:
        if dense_cache.get("n") != n:
            dense_cache.clear()
            dense_cache.update(n=n, data=dense_data(n, d))
        X_dense, y = dense_cache["data"]
        X = dense_layout(X_dense, layout)
    else:
        X, y = sparse_data(n, d, density)
    row = {"n": n, "d": d, "layout": layout, "storage": csr_storage(X)}
    for name in logistic_estimators():
        row[name] = attempt(
            lambda name=name: logistic_estimators()[name], X, y, {}, repeats_for(n)
        )
        print(n, d, layout, name, row[name], flush=True)
    return row


def csr_storage(X):
    """Bytes of a CSR matrix's arrays (``data``, ``indices``, ``indptr``); None if dense."""
    if not sp.issparse(X):
        return None
    return X.data.nbytes + X.indices.nbytes + X.indptr.nbytes


# The CSR cells of (c): the same Gaussian entries, thinned to a density, in a dtype.
OTHER_SPARSE = {
    "CSR 1%": (0.01, np.float64),
    "CSR 1% float32": (0.01, np.float32),
    "CSR 10%": (0.10, np.float64),
}


def bench_other(cls, n, d):
    """One row of (c): a cell per layout (C float64 is the reference)."""
    X, y, params, _ = synthetic_inputs(cls(), n_samples=n, n_features=d)

    def make():
        est = cls()
        if "random_state" in est.get_params():
            est.set_params(random_state=0)
        return est

    row = {"estimator": cls.__name__, "n": n}
    warm_up(make, *synthetic_inputs(cls(), n_samples=1_000, n_features=d)[:3])
    for layout in DENSE_LAYOUTS:
        row[layout] = attempt(make, dense_layout(X, layout), y, params, repeats_for(n))
        print(cls.__name__, n, layout, row[layout], flush=True)
    for label, (density, dtype) in OTHER_SPARSE.items():
        # A share of the same Gaussian entries kept: a CSR matrix of the same shape.
        keep = np.random.default_rng(1).random(X.shape) < density
        X_csr = sp.csr_matrix(np.where(keep, X, 0.0)).astype(dtype)
        del keep
        row[label] = attempt(make, X_csr, y, params, repeats_for(n))
        row[f"{label} storage"] = csr_storage(X_csr)
        print(cls.__name__, n, label, row[label], flush=True)
    row["float32 coef"] = fitted_dtype(make, dense_layout(X, "C float32"), y, params)
    return row


# (d): label -> (estimator class, parameters, number of classes or None).
SOLVER_CASES = {
    "DPLogisticRegression, dp-sgd (default)": (
        DPLogisticRegression, {"epsilon": 1.0, "classes": [0, 1]}, None),
    "DPLogisticRegression, output-perturbation": (
        DPLogisticRegression, {"solver": "output-perturbation", "alpha": 1e-3,
                               "feature_norm_bound": 3.0, "epsilon": 1.0,
                               "classes": [0, 1]}, None),
    "DPLogisticRegression, dp-frank-wolfe": (
        DPLogisticRegression, {"solver": "dp-frank-wolfe", "l1_radius": 5.0,
                               "feature_inf_bound": 3.0, "epsilon": 1.0,
                               "classes": [0, 1]}, None),
    "FERMIClassifier, 3 classes": (FERMIClassifier, {}, 3),
    "DPFERMIClassifier, 3 classes": (DPFERMIClassifier, {"classes": [0, 1, 2]}, 3),
    "SemiDPLinearRegression, semidp-gd (default)": (SemiDPLinearRegression, {}, None),
    "SemiDPLinearRegression, semidp-sgd": (
        SemiDPLinearRegression, {"solver": "semidp-sgd", "adjacency": "add_remove"},
        None),
    "SemiDPLinearRegression, dp-gd": (SemiDPLinearRegression, {"solver": "dp-gd"}, None),
    "SemiDPLinearRegression, pda-md": (SemiDPLinearRegression, {"solver": "pda-md"}, None),
    "HeavyTailDPRegressor, dp-sgd (default)": (HeavyTailDPRegressor, {}, None),
    "HeavyTailDPRegressor, sgd": (HeavyTailDPRegressor, {"solver": "sgd"}, None),
    "HeavyTailDPRegressor, acsa": (HeavyTailDPRegressor, {"solver": "acsa"}, None),
    "HeavyTailDPRegressor, prox": (HeavyTailDPRegressor, {"solver": "prox"}, None),
}
SOLVER_TITLE = "Other solvers and weighted fits on CSR"
SOLVER_CELLS = {
    "CSR 1%": (np.float64, False),
    "CSR 1% float32": (np.float32, False),
    "CSR 1% weighted": (np.float64, True),
    "CSR 1% float32 weighted": (np.float32, True),
}


def bench_solver(label, n, d):
    """One row of (d): the dense reference, then the CSR cells."""
    cls, params, n_classes = SOLVER_CASES[label]

    def make():
        return cls(**params, random_state=0)

    def inputs(n_rows):
        X, y, fit_params, _ = synthetic_inputs(cls(), n_samples=n_rows, n_features=d)
        if n_classes:
            # A third class from a second feature: labels 0, 1, 2.
            y = np.asarray(y) + (X[:, 1] > 0.5)
        return X, y, fit_params

    warm_up(make, *inputs(1_000))
    X, y, fit_params = inputs(n)
    row = {"label": label, "n": n, "dense": attempt(make, X, y, fit_params, 1)}
    weights = np.random.default_rng(0).uniform(0.5, 2.0, n)
    keep = np.random.default_rng(1).random(X.shape) < 0.01
    X_csr = sp.csr_matrix(np.where(keep, X, 0.0))
    del keep
    for cell, (dtype, weighted) in SOLVER_CELLS.items():
        data = X_csr.astype(dtype)
        extra = {"sample_weight": weights} if weighted else {}
        row[cell] = attempt(make, data, y, {**fit_params, **extra}, 1)
        row[f"{cell} storage"] = csr_storage(data)
        print(label, n, cell, row[cell], flush=True)
    return row


def fitted_dtype(make_estimator, X, y, fit_params):
    """dtype of ``coef_`` after a fit on ``X`` (is float32 kept?)."""
    coef = getattr(make_estimator().fit(X, y, **fit_params), "coef_", None)
    return "-" if coef is None else str(np.asarray(coef).dtype)


def _ratio(cell, ref):
    if isinstance(cell, str):
        return cell
    return f"{cell[0] / ref:.2f}"


def _mb(cell):
    if isinstance(cell, str):
        return "-"
    return f"{cell[1] / 2**20:.0f}"


def _storage_ratio(cell, storage):
    if isinstance(cell, str) or storage is None:
        return "-"
    return f"{cell[1] / storage:.2f}"


def _table(header, rows):
    lines = [".. list-table::", "   :header-rows: 1", ""]
    for i, row in enumerate([header, *rows]):
        for j, cell in enumerate(row):
            lines.append(f"   {'* -' if j == 0 else '  -'} {cell}")
    return lines + [""]


def _solver_section(solvers):
    """Lines of table (d): every other solver on CSR, with and without weights."""
    lines = [
        SOLVER_TITLE,
        "-" * len(SOLVER_TITLE),
        "",
        "Every other solver, and FERMI with three classes (a third label "
        "from a second feature), on the synthetic inputs above at n = "
        f"{solvers[0]['n']:,}: the CSR matrix at 1% density in float64 and "
        "float32, without and with public ``sample_weight`` (uniform in "
        "[0.5, 2]; the weights, allocated before the fit, are not counted). "
        "*Peak / storage* as above; time: CPU seconds of the unweighted "
        "float64 CSR fit and its ratio to the dense C-ordered float64 fit "
        "of the same rows (one untraced fit each).",
        "",
    ]
    header = ["solver", "dense CPU (s)", "CSR 1% CPU (s)", "CSR 1% time (x dense)"]
    header += [f"{cell} peak / storage" for cell in SOLVER_CELLS]
    body = []
    for row in solvers:
        dense, csr = row["dense"], row["CSR 1%"]
        cpu = [c[0] if not isinstance(c, str) else math.nan for c in (dense, csr)]
        body.append(
            [row["label"], f"{cpu[0]:.3f}", f"{cpu[1]:.3f}", f"{cpu[1] / cpu[0]:.2f}"]
            + [_storage_ratio(row[cell], row[f"{cell} storage"])
               for cell in SOLVER_CELLS]
        )
    return lines + _table(header, body)


def replace_solver_section(path, solvers):
    """Re-measure table (d) only: the page's other tables stay as they were."""
    with open(path) as f:
        text = f.read()
    start = text.index(SOLVER_TITLE + "\n")
    end = text.find(f".. include:: {NOTES}", start)
    end = len(text) if end < 0 else end
    section = "\n".join(_solver_section(solvers)) + "\n\n"
    with open(path, "w") as f:
        f.write(text[:start] + section + text[end:])


def write_rst(path, logistic, others, command, wall, skipped, solvers=()):
    names = list(logistic_estimators())
    refs = {}
    for row in logistic:
        if row["layout"] == "C float64":
            refs[row["n"]] = row["DP-SGD"]
        elif "wide" in row["layout"]:
            refs[("wide", row["n"])] = row["DP-SGD"]
    head = (
        "Input layouts: time and memory of a fit\n"
        "=======================================\n\n"
        f"Measured {datetime.date.today()} on {machine_description()} (shared "
        f"with other jobs, run under ``nice``). Command: ``{command}``; total "
        f"wall time {wall / 60:.1f} min. Produced by ``benchmarks/bench_inputs.py``.\n\n"
        f"BLAS and OpenMP run single-threaded (``OMP_NUM_THREADS="
        f"{os.environ['OMP_NUM_THREADS']}``, same for OpenBLAS and MKL). "
        "Times are ratios of CPU time (of the process, all threads) to that of "
        "a reference fit in the same process (its CPU and wall seconds are "
        "listed): on a shared machine the wall time depends on the other jobs "
        "much more. Each is the median of untraced fits (3 at n <= 1e5, 1 "
        "above), run after a first fit that gives the peak memory and warms "
        "what fits memoize (the noise calibration). *Peak* is the peak of "
        "``tracemalloc`` (which sees numpy's and scipy's buffers) during that "
        "first fit: the input, allocated before, is not counted, any copy the "
        "fit makes of it is. Every estimator first fits once on 1,000 rows "
        "(dense and CSR), untraced, so that no peak holds the imports and "
        "caches of a first use. \"refused\" "
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
    for key, cell in refs.items():
        if isinstance(key, tuple):
            label = f"n = {key[1]:,}, wide CSR"
        else:
            label = f"n = {key:,}, d = {N_FEATURES}, C float64"
        if isinstance(cell, str):
            ref_rows.append([label, cell, cell])
        else:
            ref_rows.append([label, f"{cell[0]:.3f}", f"{cell[2]:.3f}"])
    lines += _table(
        ["reference fit (DP-SGD)", "CPU seconds", "wall seconds"], ref_rows
    )
    header = ["n", "d", "layout"]
    header += [f"{name} time (x ref)" for name in names]
    header += [f"{name} peak (MB)" for name in names]
    header += ["DP-SGD peak / CSR storage"]
    body = []
    for row in logistic:
        ref = refs[("wide", row["n"])] if "wide" in row["layout"] else refs[row["n"]]
        ref = ref[0] if not isinstance(ref, str) else math.nan
        body.append(
            [f"{row['n']:,}", f"{row['d']:,}", row["layout"]]
            + [_ratio(row[name], ref) for name in names]
            + [_mb(row[name]) for name in names]
            + [_storage_ratio(row["DP-SGD"], row.get("storage"))]
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
        "listed: CPU, wall). CSR: the same matrix with 99% (1%) or 90% (10%) "
        "of its entries set to 0, in float64 or float32; *peak / storage*: the "
        "CSR fit's peak over the bytes of the CSR matrix (``data``, "
        "``indices``, ``indptr``); at 1% density (about one stored entry per "
        "row) any n-length float64 array weighs half of it. \"``coef_`` dtype "
        "(float32 fit)\": the dtype of ``coef_`` after a fit on the float32 "
        "matrix.",
        "",
    ]
    layouts = DENSE_LAYOUTS + list(OTHER_SPARSE)
    header = ["estimator", "n", "reference CPU (s)", "reference wall (s)"]
    header += [f"{layout} time (x ref)" for layout in layouts]
    header += [f"{layout} peak (MB)" for layout in layouts]
    header += [f"{label} peak / storage" for label in OTHER_SPARSE]
    header += ["``coef_`` dtype (float32 fit)"]
    body = []
    for row in others:
        ref = row["C float64"]
        ref_s, ref_wall = (
            (ref[0], ref[2]) if not isinstance(ref, str) else (math.nan, math.nan)
        )
        body.append(
            [row["estimator"], f"{row['n']:,}", f"{ref_s:.3f}", f"{ref_wall:.3f}"]
            + [_ratio(row[layout], ref_s) for layout in layouts]
            + [_mb(row[layout]) for layout in layouts]
            + [_storage_ratio(row[label], row[f"{label} storage"]) for label in OTHER_SPARSE]
            + [row["float32 coef"]]
        )
    lines += _table(header, body)
    if solvers:
        lines += _solver_section(solvers)
    if os.path.exists(os.path.join(os.path.dirname(path), NOTES)):
        # Hand-written reading of the tables; a re-run keeps it.
        lines += ["", f".. include:: {NOTES}", ""]
    with open(path, "w") as f:
        f.write("\n".join(lines))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run on small inputs")
    parser.add_argument("--max-rows", type=int, default=1_000_000,
                        help="largest n of the DP-SGD table (1e4, 1e5, 1e6)")
    parser.add_argument("--solvers-only", action="store_true",
                        help="re-measure table (d) only and replace it in the page")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    start = time.perf_counter()
    if args.solvers_only:
        solvers = [bench_solver(label, 100_000, N_FEATURES) for label in SOLVER_CASES]
        replace_solver_section(os.path.join(OUT, "inputs.rst"), solvers)
        return
    if args.quick:
        sizes, wide, other_sizes = [2_000], (1_000, 10_000, 0.001), [1_000]
    else:
        sizes = [n for n in (10_000, 100_000, 1_000_000) if n <= args.max_rows]
        wide, other_sizes = (10_000, 100_000, 0.001), [10_000, 100_000]
    command = "nice -n 10 python benchmarks/bench_inputs.py" + (
        f" --max-rows {args.max_rows}" if args.max_rows != 1_000_000 else ""
    )
    # A smoke run checks the page too, in the temporary directory.
    out = tempfile.gettempdir() if args.quick else OUT
    path = os.path.join(out, "inputs.rst")
    first, last = logistic_cases(sizes, wide)
    X_small, y_small = dense_data(1_000, N_FEATURES)
    for name in logistic_estimators():
        warm_up(lambda name=name: logistic_estimators()[name], X_small, y_small, {})
    logistic, others, solvers, dense_cache = [], [], [], {}
    solver_n = 2_000 if args.quick else 100_000

    def save(pending):
        # Written after every row: a run stopped early keeps what it measured.
        note = "" if 1_000_000 in sizes or args.quick else (
            "n = 1e6 was not run (``--max-rows``)."
        )
        if pending:
            note += " Not measured (the run was stopped first): " + ", ".join(
                f"n = {n:,} {layout}" for n, _, layout, _ in pending
            ) + "."
        order = [case[:3] for case in sorted(first + last, key=_case_order)]
        rows = sorted(logistic, key=lambda r: order.index((r["n"], r["d"], r["layout"])))
        write_rst(path, rows, others, command, time.perf_counter() - start,
                  note.strip(), solvers)

    for i, case in enumerate(first):
        logistic.append(run_logistic_case(*case, dense_cache))
        save(first[i + 1:] + last)
    dense_cache.clear()
    for cls in OTHER_ESTIMATORS:
        for n in other_sizes:
            others.append(bench_other(cls, n, N_FEATURES))
            save(last)
    for label in SOLVER_CASES:
        solvers.append(bench_solver(label, solver_n, N_FEATURES))
        save(last)
    for i, case in enumerate(last):
        logistic.append(run_logistic_case(*case, dense_cache))
        save(last[i + 1:])
    print(f"wrote {path} ({time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    main()
