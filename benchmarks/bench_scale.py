# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""DPLogisticRegression at scale: fit time against lbfgs and SGDClassifier.

Protocol (``scale``): synthetic binary data, features i.i.d. N(0, 1)
(dense) or N(0, 1) on 10% of the entries (CSR), labels drawn from a
logistic model with ``||w|| = 3``; a held-out test set of 20,000 rows;
``n`` in {1e4, 1e5, 1e6}, ``d`` in {20, 100}; epsilon = 1, delta = 1e-6 (below
``1/n``). In one process and in this order: scikit-learn's
``LogisticRegression`` (lbfgs), ``SGDClassifier(loss="log_loss")``,
``DPLogisticRegression`` with DP-SGD at 20 epochs (the default before
``max_iter="auto"``: the accuracy reference), at its defaults
(``max_iter="auto"``), and
``solver="dp-newton"`` with ``feature_norm_bound = 1.5 sqrt(d q)``
(``q`` the density: the norm of a typical row, a public choice made from
how the features are scaled, never from the data) at its defaults (10
steps, curvature bound) and with ``curvature="hessian"``. Each private fit
is seeded (0..S-1). Reports fit seconds, the ratio to lbfgs, test accuracy
and, for the private fits, the accuracy difference to the DP-SGD default.

Protocol (``epochs``): the same data, DP-SGD with ``max_iter`` in
{2, 5, 10, 20} at epsilon in {0.1, 1, 8}: the accuracy each number of
epochs loses against 20.

Protocol (``sampling``): the same dense data, d = 100, DP-SGD at 2 epochs
(20 steps each) with Poisson batches (the default, RDP accountant) and with
``batch_sampling="balls_and_bins"`` (random-allocation PLD, pld-accounting):
the noise each calibrates at each epsilon, the epsilon both accountings
give for the Poisson fit's noise, seconds per epoch (calibration excluded:
it is memoized and timed apart) and test accuracy.

Protocol (``wide``): the same data at ``d = 1000`` (CSR by default, 10%
density), one seed: fit seconds of lbfgs, ``SGDClassifier``, DP-SGD at its
defaults and dp-newton (curvature bound), each fitted again under
``tracemalloc`` for its peak of traced memory beyond the data (numpy and
scipy buffers are traced; the timed fit runs without it), and test
accuracy.

Usage::

    python benchmarks/bench_scale.py scale --n 1e4 1e5 --d 20 100 --seeds 3
    python benchmarks/bench_scale.py epochs --n 1e4 1e5 --seeds 3
    python benchmarks/bench_scale.py sampling --n 2e5 1e6 --epsilons 0.1 1 8
    python benchmarks/bench_scale.py wide --n 1e4 1e5 --d 1000 --formats csr

Machine load changes the ratios less than the seconds (both sides of a
ratio run in the same process, one after the other).
"""

import argparse
import math
import os
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression, SGDClassifier

sys.path.insert(0, os.path.dirname(__file__))
from _adult import machine_description

from sklearn_dpfair import DPLogisticRegression

N_TEST = 20_000
DENSITY = 0.1


def synthetic(n, d, *, sparse, seed=0):
    """Train and test arrays of the protocol (CSR when ``sparse``)."""
    rng = np.random.default_rng(seed)
    w = rng.normal(size=d)
    w *= 3.0 / np.linalg.norm(w)
    total = n + N_TEST
    if sparse:
        X = sp.random(
            total, d, density=DENSITY, format="csr", random_state=seed,
            data_rvs=rng.standard_normal,
        )
        logits = X @ w / math.sqrt(DENSITY)
    else:
        X = rng.standard_normal((total, d))
        logits = X @ w
    y = (rng.random(total) < 1.0 / (1.0 + np.exp(-logits))).astype(int)
    return X[:n], y[:n], X[n:], y[n:]


def _timed(estimator, X, y):
    start = time.perf_counter()
    estimator.fit(X, y)
    return time.perf_counter() - start, estimator


def scale(args):
    print(f"# bench_scale scale, {machine_description()}", flush=True)
    print(
        "| n | d | X | lbfgs s | SGDClassifier / lbfgs | DP-SGD 20 epochs / lbfgs | "
        "DP-SGD auto / lbfgs | dp-newton / lbfgs | dp-newton (Hessian) / lbfgs | "
        "lbfgs acc | DP-SGD 20 epochs acc | DP-SGD auto acc (diff) | "
        "dp-newton acc (diff) | dp-newton Hessian acc (diff) |"
    )
    print("|" + "---|" * 15)
    for n in args.n:
        n = int(n)
        for d in args.d:
            for sparse in args.formats:
                if sparse and n >= 1e6 and not args.big_sparse:
                    continue
                X, y, Xt, yt = synthetic(n, d, sparse=sparse)
                t_lbfgs, lbfgs = _timed(LogisticRegression(max_iter=1000), X, y)
                t_sgdc, _ = _timed(SGDClassifier(loss="log_loss", random_state=0), X, y)
                bound = 1.5 * math.sqrt(d * (DENSITY if sparse else 1.0))
                rows = {"sgd20": [], "sgd": [], "newton": [], "hessian": []}
                for seed in range(args.seeds):
                    common = {
                        "epsilon": 1.0, "delta": 1e-6, "classes": [0, 1],
                        "random_state": seed,
                    }
                    fits = {
                        # The default before max_iter="auto": the reference.
                        "sgd20": DPLogisticRegression(max_iter=20, **common),
                        "sgd": DPLogisticRegression(**common),
                        "newton": DPLogisticRegression(
                            solver="dp-newton", feature_norm_bound=bound, **common
                        ),
                        "hessian": DPLogisticRegression(
                            solver="dp-newton", feature_norm_bound=bound,
                            curvature="hessian", **common
                        ),
                    }
                    for key, est in fits.items():
                        seconds, est = _timed(est, X, y)
                        rows[key].append((seconds, est.score(Xt, yt)))
                mean = {k: np.mean(v, axis=0) for k, v in rows.items()}
                base = mean["sgd20"][1]
                print(
                    f"| {n:.0e} | {d} | {'CSR' if sparse else 'dense'} | "
                    f"{t_lbfgs:.2f} | {t_sgdc / t_lbfgs:.2f} | "
                    f"{mean['sgd20'][0] / t_lbfgs:.2f} | "
                    f"{mean['sgd'][0] / t_lbfgs:.2f} | "
                    f"{mean['newton'][0] / t_lbfgs:.2f} | "
                    f"{mean['hessian'][0] / t_lbfgs:.2f} | "
                    f"{lbfgs.score(Xt, yt):.4f} | {base:.4f} | "
                    f"{mean['sgd'][1]:.4f} ({mean['sgd'][1] - base:+.4f}) | "
                    f"{mean['newton'][1]:.4f} ({mean['newton'][1] - base:+.4f}) | "
                    f"{mean['hessian'][1]:.4f} ({mean['hessian'][1] - base:+.4f}) |",
                    flush=True,
                )


def epochs(args):
    print(f"# bench_scale epochs, {machine_description()}", flush=True)
    print("| n | epsilon | " + " | ".join(f"{e} epochs" for e in args.epochs)
          + " | lbfgs s | fit s at each / lbfgs |")
    print("|" + "---|" * (len(args.epochs) + 4))
    for n in args.n:
        n = int(n)
        X, y, Xt, yt = synthetic(n, 100, sparse=False)
        t_lbfgs, _ = _timed(LogisticRegression(max_iter=1000), X, y)
        for eps in args.epsilons:
            cells, times = [], []
            for n_epochs in args.epochs:
                accs = []
                for seed in range(args.seeds):
                    seconds, est = _timed(
                        DPLogisticRegression(
                            epsilon=eps, delta=1e-6, classes=[0, 1],
                            max_iter=n_epochs, random_state=seed,
                        ),
                        X,
                        y,
                    )
                    accs.append(est.score(Xt, yt))
                cells.append(f"{np.mean(accs):.4f}")
                times.append(f"{seconds / t_lbfgs:.2f}")
            print(
                f"| {n:.0e} | {eps} | " + " | ".join(cells)
                + f" | {t_lbfgs:.2f} | " + " / ".join(times) + " |",
                flush=True,
            )


def sampling(args):
    from sklearn_dpfair.privacy import calibrate_noise_multiplier
    from sklearn_dpfair.privacy._accounting import epsilon_of, noisy_sgd_event
    from sklearn_dpfair.privacy._random_allocation import (
        calibrate_allocation_noise,
        random_allocation_event,
    )

    print(f"# bench_scale sampling, {machine_description()}", flush=True)
    print("| n | epsilon | sigma Poisson RDP / PLD | sigma balls-and-bins "
          "| eps of the Poisson-RDP sigma: Poisson PLD / allocation "
          "| calibration s | s/epoch Poisson | s/epoch b&b "
          "| accuracy Poisson | accuracy b&b |")
    print("|" + "---|" * 10)
    t, n_epochs, delta = 20, 2, 1e-6
    for n in args.n:
        n = int(n)
        X, y, Xt, yt = synthetic(n, 100, sparse=False)
        for eps in args.epsilons:
            s_rdp = calibrate_noise_multiplier(eps, delta, 1 / t, t * n_epochs, "rdp")
            s_pld = calibrate_noise_multiplier(eps, delta, 1 / t, t * n_epochs, "pld")
            start = time.perf_counter()
            s_bb = calibrate_allocation_noise(eps, delta, t, n_epochs)
            calibration = time.perf_counter() - start
            e_pld = epsilon_of(noisy_sgd_event(s_rdp, 1 / t, t * n_epochs), delta, "pld")
            e_alloc = epsilon_of(random_allocation_event(s_rdp, t, n_epochs), delta, "pld")
            cells = []
            for sampling in ("poisson", "balls_and_bins"):
                seconds, est = _timed(
                    DPLogisticRegression(
                        epsilon=eps, delta=delta, classes=[0, 1], max_iter=n_epochs,
                        batch_sampling=sampling, random_state=0,
                    ),
                    X,
                    y,
                )
                cells.append((seconds / n_epochs, est.score(Xt, yt)))
            print(
                f"| {n:.0e} | {eps} | {s_rdp:.3f} / {s_pld:.3f} | {s_bb:.3f} "
                f"| {e_pld:.3f} / {e_alloc:.3f} | {calibration:.1f} "
                f"| {cells[0][0]:.2f} | {cells[1][0]:.2f} "
                f"| {cells[0][1]:.4f} | {cells[1][1]:.4f} |",
                flush=True,
            )


def _peak_mb(estimator, X, y):
    import tracemalloc

    tracemalloc.start()
    try:
        estimator.fit(X, y)
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def _data_mb(X):
    if sp.issparse(X):
        return (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) / 2**20
    return X.nbytes / 2**20


def wide(args):
    print(f"# bench_scale wide, {machine_description()}", flush=True)
    print("| n | d | X | data MB | lbfgs s | SGDClassifier / lbfgs "
          "| DP-SGD auto / lbfgs | dp-newton / lbfgs "
          "| peak MB: lbfgs / SGDClassifier / DP-SGD / dp-newton "
          "| acc: lbfgs / SGDClassifier / DP-SGD / dp-newton |")
    print("|" + "---|" * 10)
    for n in args.n:
        n = int(n)
        for d in args.d:
            for sparse in args.formats:
                X, y, Xt, yt = synthetic(n, d, sparse=sparse)
                bound = 1.5 * math.sqrt(d * (DENSITY if sparse else 1.0))
                common = {"epsilon": 1.0, "delta": 1e-6, "classes": [0, 1],
                          "random_state": 0}
                makers = [
                    lambda: LogisticRegression(max_iter=1000),
                    lambda: SGDClassifier(loss="log_loss", random_state=0),
                    lambda: DPLogisticRegression(**common),
                    lambda: DPLogisticRegression(
                        solver="dp-newton", feature_norm_bound=bound, **common
                    ),
                ]
                times, peaks, accs = [], [], []
                for make in makers:
                    seconds, est = _timed(make(), X, y)
                    times.append(seconds)
                    accs.append(est.score(Xt, yt))
                    peaks.append(_peak_mb(make(), X, y))
                print(
                    f"| {n:.0e} | {d} | {'CSR' if sparse else 'dense'} "
                    f"| {_data_mb(X):.0f} | {times[0]:.2f} "
                    + "".join(f"| {t / times[0]:.2f} " for t in times[1:])
                    + "| " + " / ".join(f"{p:.0f}" for p in peaks)
                    + " | " + " / ".join(f"{a:.4f}" for a in accs) + " |",
                    flush=True,
                )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["scale", "epochs", "sampling", "wide"])
    parser.add_argument("--n", type=float, nargs="+", default=[1e4, 1e5])
    parser.add_argument("--d", type=int, nargs="+", default=[20, 100])
    parser.add_argument(
        "--formats", nargs="+", default=["dense", "csr"], choices=["dense", "csr"]
    )
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--epochs", type=int, nargs="+", default=[2, 5, 10, 20])
    parser.add_argument(
        "--epsilons", type=float, nargs="+", default=[0.1, 1.0, 8.0]
    )
    parser.add_argument(
        "--big-sparse", action="store_true", help="also run CSR at n >= 1e6"
    )
    args = parser.parse_args()
    args.formats = [f == "csr" for f in args.formats]
    warnings.simplefilter("ignore", UserWarning)
    {"scale": scale, "epochs": epochs, "sampling": sampling, "wide": wide}[args.mode](args)


if __name__ == "__main__":
    main()
