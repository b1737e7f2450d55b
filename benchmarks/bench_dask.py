# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark of central DP-SGD on Dask collections (data on the workers).

Protocol: a synthetic logistic problem, ``n`` rows by ``d = 100`` float32
features, generated *on the workers* (``dask.array`` random blocks of
``--chunk`` rows, labels from a fixed linear model plus logistic noise), on
a ``LocalCluster`` of 1 or 2 worker processes with one thread each. The
estimator's defaults (epsilon 1, Poisson rate ``q = 0.05``, clip 1,
automatic step size), ``delta = 1e-7``. Measured per configuration:

* ``persist_s``: validating, encoding and persisting the partitions (with
  the generation of the synthetic blocks, once per fit);
* ``epoch_s``: wall time of one epoch (``1/q = 20`` steps) of the driver
  loop, and ``step_s`` per step;
* ``latency_ms``: the per-step round trip with no work (a task per
  partition that returns at once, with the coefficients as argument);
* ``driver_peak_mib``: peak of the driver's Python allocations during the
  fit (tracemalloc: numpy buffers included), and the driver's RSS growth;
* with ``--compare``: test accuracy of the Dask fit and of the in-memory fit
  (same data gathered on the driver), 2 epochs each, on 100,000 fresh rows;
* with ``--fermi``: one epoch of ``DPFERMIClassifier`` on the same
  collection (sensitive attribute ``x_1 > 0``, declared groups, batch
  ``0.05 n``): ``fermi_fit_s``, the whole fit (persisting the partitions
  again, the histogram, the calibration and the 20 steps), the step count
  and the driver peak.

Every configuration runs in its own process (a fresh cluster and a clean
driver peak). Results are appended as JSON lines to ``--out``.

Usage: python benchmarks/bench_dask.py --n 1000000 --workers 2 [--compare] [--fermi]
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import tracemalloc

import numpy as np

D = 100
EPSILON, DELTA = 1.0, 1e-7


def _rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _make(n, chunk, seed=0):
    import dask.array as da

    rng = da.random.default_rng(seed)
    X = rng.standard_normal((n, D), chunks=(chunk, D), dtype=np.float32)
    w = np.linspace(-1, 1, D, dtype=np.float32) / np.sqrt(D) * 3
    noise = rng.logistic(size=n, chunks=chunk).astype(np.float32)
    y = ((X @ w + noise) > 0).astype(np.int64)
    return X, y, w


def _noop(part, index, *, coef, w0, step, config):
    return index


def _fermi(X, y, n, epochs):
    """One DP-FERMI fit on the Dask collection: epoch and step time, driver peak."""
    from sklearn_dpfair import DPFERMIClassifier

    s = (X[:, 1] > 0).astype(np.int64)
    clf = DPFERMIClassifier(
        epsilon=EPSILON, delta=DELTA, classes=[0, 1], groups=[0, 1],
        batch_size=int(0.05 * n), max_iter=epochs,
    )
    tracemalloc.start()
    t0 = time.perf_counter()
    clf.fit(X, y, sensitive_features=s)
    elapsed = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "fermi_fit_s": elapsed,
        "fermi_steps": clf.t_,
        "fermi_driver_peak_mib": peak / 2**20,
        "fermi_epsilon": clf.epsilon_,
    }


def run(n, workers, chunk, epochs, compare, fermi=False):
    import distributed

    from sklearn_dpfair import DPLogisticRegression
    from sklearn_dpfair._loss import BinaryLogisticLoss
    from sklearn_dpfair._solvers import _distributed
    from sklearn_dpfair._solvers._private_fit import DPSGDParams, dp_sgd_setup
    from sklearn_dpfair._solvers._schedules import sgd_schedule
    from sklearn_dpfair.privacy import PrivacyBudget, check_noise_generator

    cluster = distributed.LocalCluster(
        n_workers=workers,
        processes=True,
        threads_per_worker=1,
        dashboard_address=None,
        # No spilling: the partitions must stay in memory for the fit.
        memory_limit=0,
    )
    client = distributed.Client(cluster)
    result = {"n": n, "d": D, "workers": workers, "chunk": chunk}
    X, y, w = _make(n, chunk)
    baseline_rss = _rss_mib()
    tracemalloc.start()

    t0 = time.perf_counter()
    data = _distributed.distribute_training_data(
        X, y, None, classes=[0, 1], delta=DELTA, fit_intercept=True
    )
    result["persist_s"] = time.perf_counter() - t0
    result["partitions"] = len(data.partitions)

    # Round trip of one step with no work in the partitions.
    coef, w0 = np.zeros((D, 1), np.float32), np.zeros(1, np.float32)
    times = []
    for _ in range(30):
        t = time.perf_counter()
        client.gather(
            client.map(_noop, data.partitions, range(len(data.partitions)),
                       coef=coef, w0=w0, step=0, config=None, pure=False)
        )
        times.append(time.perf_counter() - t)
    result["latency_ms"] = 1e3 * float(np.median(times))

    # Calibrate first (cached by the privacy core) so that the epoch time is
    # the driver loop's alone.
    q, steps = sgd_schedule(data.n_samples, "auto", epochs)
    t0 = time.perf_counter()
    PrivacyBudget(EPSILON, DELTA).gaussian(1.0, sampling_probability=q, steps=steps)
    result["calibrate_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    fit = _distributed.fit_dp_sgd_dask(
        data,
        BinaryLogisticLoss(),
        dp_sgd_setup(
            data.n_samples,
            data.n_features,
            1,
            DPSGDParams(clip_norm=1.0, batch_size="auto", epochs=epochs,
                        learning_rate="auto", alpha=0.0),
            PrivacyBudget(EPSILON, DELTA),
            weighted=data.weighted,
        ),
        rng=check_noise_generator(None),
    )
    elapsed = time.perf_counter() - t0
    result["steps"] = fit.n_steps
    result["epoch_s"] = elapsed / epochs
    result["step_s"] = elapsed / fit.n_steps
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    result["driver_peak_mib"] = peak / 2**20
    result["driver_rss_growth_mib"] = _rss_mib() - baseline_rss
    result["epsilon"] = fit.record.epsilon
    data.release()
    if fermi:
        result.update(_fermi(X, y, n, epochs))

    if compare:
        rng = np.random.default_rng(1)
        X_test = rng.standard_normal((100_000, D), dtype=np.float32)
        y_test = (X_test @ w + rng.logistic(size=100_000) > 0).astype(int)
        kw = dict(epsilon=EPSILON, delta=DELTA, classes=[0, 1], max_iter=2)
        t = time.perf_counter()
        dask_model = DPLogisticRegression(**kw).fit(X, y)
        result["dask_fit_s"] = time.perf_counter() - t
        result["dask_accuracy"] = dask_model.score(X_test, y_test)
        X_mem, y_mem = client.compute([X, y], sync=True)
        t = time.perf_counter()
        mem_model = DPLogisticRegression(**kw).fit(X_mem, y_mem)
        result["memory_fit_s"] = time.perf_counter() - t
        result["memory_accuracy"] = mem_model.score(X_test, y_test)
        result["bayes_accuracy"] = float(
            np.mean((X_test @ w > 0) == y_test)
        )
    client.close()
    cluster.close()
    return result


def render(results, machine, date):
    """The docs page of the results (JSON lines of :func:`run`)."""
    rows = sorted(results, key=lambda r: (r["n"], r["workers"]))
    header = ["n", "workers", "partitions", "persist (s)", "epoch (s)",
              "step (ms)", "round trip L (ms)", "c (us/row)", "driver peak (MiB)"]
    table = [".. list-table::", "   :header-rows: 1", ""]
    table += ["   * - " + header[0]] + [f"     - {h}" for h in header[1:]]
    for r in rows:
        # Per batch row and worker: (step - L) / (q n / W), q = 0.05.
        per_row = (r["step_s"] - r["latency_ms"] / 1e3) / (0.05 * r["n"] / r["workers"])
        cells = [f"{r['n']:,}", r["workers"], r["partitions"], f"{r['persist_s']:.1f}",
                 f"{r['epoch_s']:.1f}", f"{1e3 * r['step_s']:.0f}",
                 f"{r['latency_ms']:.0f}", f"{1e6 * per_row:.2f}",
                 f"{r['driver_peak_mib']:.1f}"]
        table += [f"   * - {cells[0]}"] + [f"     - {c}" for c in cells[1:]]
    acc = [".. list-table::", "   :header-rows: 1", "",
           "   * - workers", "     - Dask fit", "     - in-memory fit",
           "     - Bayes classifier"]
    for r in rows:
        if "dask_accuracy" in r:
            acc += [f"   * - {r['workers']}", f"     - {r['dask_accuracy']:.4f}",
                    f"     - {r['memory_accuracy']:.4f}",
                    f"     - {r['bayes_accuracy']:.4f}"]
    fermi = [".. list-table::", "   :header-rows: 1", "",
             "   * - n", "     - workers", "     - DP-FERMI fit (s)",
             "     - steps", "     - driver peak (MiB)"]
    for r in rows:
        if "fermi_fit_s" in r:
            fermi += [f"   * - {r['n']:,}", f"     - {r['workers']}",
                      f"     - {r['fermi_fit_s']:.1f}",
                      f"     - {r['fermi_steps']}",
                      f"     - {r['fermi_driver_peak_mib']:.1f}"]
    fermi_text = (
        ["", "DP-FERMI (``DPFERMIClassifier``, sensitive attribute x_1 > 0, "
         "batch 0.05 n, one epoch; the whole fit, persisting included):", "",
         *fermi]
        if len(fermi) > 8 else []
    )
    return "\n".join(
        [".. _bench_dask:", "", "Central DP-SGD on Dask collections",
         "==================================", "",
         f"Measured {date} on {machine}, by ``benchmarks/bench_dask.py`` "
         "(protocol in its docstring): synthetic logistic data, d = 100 float32, "
         "generated on the workers; epsilon 1, delta 1e-7, q = 0.05 (20 steps "
         "per epoch), clip 1; LocalCluster of 1 or 2 worker processes, one "
         "thread each.", "", *table, "", "Test accuracy (100,000 fresh rows; 2 "
         "epochs, the same budget):", "", *acc, *fermi_text, ""]
    )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, nargs="+", default=[1_000_000])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--chunk", type=int, default=250_000)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--compare", action="store_true")
    parser.add_argument("--fermi", action="store_true")
    parser.add_argument("--out", default="dask_results.jsonl")
    parser.add_argument("--single", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--render", metavar="RST", help="write the docs table of --out")
    args = parser.parse_args()
    if args.render:
        import datetime

        sys.path.insert(0, os.path.dirname(__file__))
        from _adult import machine_description

        with open(args.out) as fh:
            results = [json.loads(line) for line in fh if line.strip()]
        with open(args.render, "w") as fh:
            fh.write(render(results, machine_description(), datetime.date.today()))
        return
    if args.single:
        result = run(
            args.n[0], args.workers[0], args.chunk, args.epochs, args.compare,
            args.fermi,
        )
        print(json.dumps(result))
        return
    for n in args.n:
        for workers in args.workers:
            cmd = [sys.executable, __file__, "--single", "--n", str(n), "--workers",
                   str(workers), "--chunk", str(args.chunk), "--epochs",
                   str(args.epochs)] + (["--compare"] if args.compare else [])
            cmd += ["--fermi"] if args.fermi else []
            proc = subprocess.run(cmd, capture_output=True, text=True, env=os.environ)
            if proc.returncode:
                sys.stderr.write(proc.stderr[-3000:])
                continue
            line = proc.stdout.strip().splitlines()[-1]
            print(line, flush=True)
            with open(args.out, "a") as fh:
                fh.write(line + "\n")


if __name__ == "__main__":
    main()
