# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""DPLogisticRegression on a Dask array of up to 1e7 rows, generated lazily.

Protocol: the synthetic model of ``bench_scale.py`` (features i.i.d.
N(0, 1), labels drawn from a logistic model with ``||w|| = 3``, ``w`` the
same seeded draw), ``d = 100``, stored as float32. The training rows are
never materialised on the driver or on disk: block ``b`` of ``--chunk`` rows
is drawn on the worker that keeps it, by a generator seeded with
``SeedSequence(seed, spawn_key=(b,))`` (``dask.delayed`` per block, then
``dask.array.from_delayed``), so the same ``(n, chunk, seed)`` is the same
data in every run and in the references below. The test set is a separate
seeded in-memory draw of 100,000 rows from the same model.

Measured, in one driver process, in this order (after the worker has
imported the package, ``worker_import_s``):

1. ``gen_s``: one pass that draws every block on the cluster and keeps
   nothing (the cost of the data generation alone, which the fit repeats:
   the collection is lazy);
2. ``fit_s``: ``DPLogisticRegression(epsilon=1, delta, classes=[0, 1],
   random_state=0).fit(X, y)`` on the Dask array (``calibrate_s``: the
   noise calibration, timed apart by ``privacy_plan`` before the fit, which
   then reuses it) with everything else at
   its defaults (``max_iter="auto"``: ``epochs``; ``q = 0.05``: ``steps``):
   generation, validation and persisting of the partitions on the worker,
   the steps, each one task per partition (``steps * partitions`` tasks);
   ``persist_s`` is the part of the fit spent drawing, validating and
   persisting the partitions (timed by wrapping the estimator's call of
   ``distribute_training_data``), ``steps_s = fit_s - persist_s`` the rest
   and ``s_per_step`` its share per step; the CPU seconds of the worker
   process and of the driver in each part (``*_cpu_s``: less sensitive
   than wall time to other jobs on the machine);
3. peak resident memory (``ru_maxrss``) of the driver after the fit and of
   the worker process (the partitions live there), and the worker's
   resident memory before the fit;
4. test accuracy of the private fit, and the Bayes classifier's;
5. with ``--sgd``: ``SGDClassifier(loss="log_loss", random_state=0)`` fitted
   by ``partial_fit`` on the same blocks, drawn one at a time in the driver
   (after the cluster is closed), for as many passes as the private fit's
   epochs: the seconds in ``partial_fit`` alone and the seconds drawing;
6. with ``--lbfgs``: scikit-learn's ``LogisticRegression`` (lbfgs,
   ``max_iter=1000``) on all the blocks drawn into one in-memory float32
   array (``4 n d`` bytes in the driver); the driver's peak RSS after it;
7. with ``--lbfgs --memory-dp``: the same ``DPLogisticRegression`` (same
   seed) fitted on that in-memory array: what the Dask path costs over the
   in-memory one.

With ``--persist-first`` the blocks are drawn into the workers' memory
(``client.persist([X, y])``, ``persist_first_s``) before the fit, which then
reads them where they are. Without it the fit computes the lazy collection
itself, and (measured) draws every block twice: the estimator computes
``X``'s and ``y``'s blocks through two separately optimised graphs, so
their shared upstream task runs once for each.

With ``--no-malloc-trim`` the workers start without the
``MALLOC_TRIM_THRESHOLD_=65536`` that distributed's nanny sets by default
(``distributed.nanny.pre-spawn-environ``): with it, glibc serves every
large temporary of a step by a fresh ``mmap`` (measured: one partition's
step of 12,500 sampled rows takes 11 ms of CPU instead of 4 ms in a plain
process).

Results are appended as one JSON line to ``--out``.

Usage::

    nice -n 10 env OMP_NUM_THREADS=1 python benchmarks/bench_dask_1e7.py \\
        --n 10000000 --sgd --lbfgs --memory-dp
    nice -n 10 env OMP_NUM_THREADS=1 python benchmarks/bench_dask_1e7.py \
        --n 10000000 --persist-first
"""

import argparse
import json
import math
import os
import resource
import sys
import time
import warnings

import numpy as np

D = 100
N_TEST = 100_000


def _maxrss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _rss_mib():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def true_coef(d=D, seed=0):
    """``w`` of ``bench_scale.synthetic``: the first draw of its generator, norm 3."""
    w = np.random.default_rng(seed).normal(size=d)
    return w * (3.0 / np.linalg.norm(w))


def draw(rng, rows, w):
    """``rows`` rows of the model: float32 N(0, 1) features, logistic labels."""
    X = rng.standard_normal((rows, w.size), dtype=np.float32)
    logits = X @ w.astype(np.float32)
    y = (rng.random(rows) < 1.0 / (1.0 + np.exp(-logits))).astype(np.int64)
    return X, y


def block(index, rows, w, seed):
    """Training block ``index``: the same rows whoever draws it."""
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(index,)))
    return draw(rng, rows, w)


def block_sizes(n, chunk):
    return [min(chunk, n - start) for start in range(0, n, chunk)]


def lazy_data(n, chunk, w, seed):
    """Dask arrays ``X`` (float32) and ``y`` of ``n`` rows, drawn per block."""
    import dask
    import dask.array as da

    make = dask.delayed(block, pure=True, nout=2)
    Xs, ys = [], []
    for index, rows in enumerate(block_sizes(n, chunk)):
        Xb, yb = make(index, rows, w, seed)
        Xs.append(da.from_delayed(Xb, shape=(rows, w.size), dtype=np.float32))
        ys.append(da.from_delayed(yb, shape=(rows,), dtype=np.int64))
    return da.concatenate(Xs, axis=0), da.concatenate(ys, axis=0)


def _block_rows(index, rows, w, seed):
    X, y = block(index, rows, w, seed)
    return X.shape[0] + int(y[:1].sum() * 0)


def _import_package():
    import sklearn_dpfair._solvers._distributed  # noqa: F401


def _malloc_trim_threshold():
    return os.environ.get("MALLOC_TRIM_THRESHOLD_")


def _cpu_s():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _worker_cpu_s():
    """CPU seconds of the worker processes so far (summed)."""
    import distributed

    return sum(distributed.get_client().run(_cpu_s).values())


def _worker_rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, _rss_mib()


def _timed_persist():
    """Time the estimator's persisting of the partitions (benchmark only).

    Wraps the function the estimator calls to draw, validate and persist the
    partitions, so that ``persist_s`` (generation included: the collection
    is lazy) and the steps' seconds can be told apart within one fit.
    """
    from sklearn_dpfair.linear_model import _logistic

    inner = _logistic.distribute_training_data
    if hasattr(inner, "seconds"):
        inner = inner.__wrapped__

    def timed(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            timed.seconds = time.perf_counter() - t0
            timed.worker_cpu_s = _worker_cpu_s()
            timed.driver_cpu_s = _cpu_s()

    timed.__wrapped__, timed.seconds = inner, math.nan
    _logistic.distribute_training_data = timed
    return timed


def test_data(w, seed):
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(2**31,)))
    X, y = draw(rng, N_TEST, w)
    bayes = float(np.mean((X @ w.astype(np.float32) > 0) == y))
    return X, y, bayes


def run(args):
    import distributed
    from sklearn.linear_model import LogisticRegression, SGDClassifier

    from sklearn_dpfair import DPLogisticRegression
    from sklearn_dpfair._solvers._schedules import sgd_schedule

    n, chunk, seed = args.n, args.chunk, args.seed
    w = true_coef()
    X_test, y_test, bayes = test_data(w, seed)
    sizes = block_sizes(n, chunk)
    max_iter = "auto" if args.max_iter is None else args.max_iter
    q, steps = sgd_schedule(n, "auto", max_iter)
    epochs = steps * q
    result = {
        "n": n,
        "d": D,
        "dtype": "float32",
        "chunk": chunk,
        "partitions": len(sizes),
        "workers": args.workers,
        "threads_per_worker": args.threads,
        "epsilon": args.epsilon,
        "delta": args.delta,
        "max_iter": max_iter,
        "q": q,
        "steps": steps,
        "tasks": steps * len(sizes),
        "bayes_accuracy": bayes,
        "driver_rss_start_mib": _rss_mib(),
        "load_average_start": os.getloadavg(),
    }

    if args.no_malloc_trim:
        import dask

        # distributed's nanny starts workers with MALLOC_TRIM_THRESHOLD_=65536,
        # which also fixes glibc's mmap threshold: every temporary of a step
        # (the batch gather, about 5 MB per partition) is then a fresh mmap,
        # page-faulted and unmapped.
        environ = dict(dask.config.get("distributed.nanny.pre-spawn-environ"))
        environ.pop("MALLOC_TRIM_THRESHOLD_", None)
        dask.config.set({"distributed.nanny.pre-spawn-environ": environ})
    cluster = distributed.LocalCluster(
        n_workers=args.workers,
        processes=True,
        threads_per_worker=args.threads,
        dashboard_address=None,
        memory_limit=0,
    )
    client = distributed.Client(cluster)
    try:
        # The worker's first import of the package (a fixed cost of a new
        # cluster), kept out of persist_s.
        t0 = time.perf_counter()
        client.run(_import_package)
        result["worker_import_s"] = time.perf_counter() - t0
        thresholds = client.run(_malloc_trim_threshold)
        result["worker_malloc_trim_threshold"] = next(iter(thresholds.values()))
        worker_cpu0 = _worker_cpu_s()
        t0 = time.perf_counter()
        counts = client.gather(
            client.map(
                _block_rows, range(len(sizes)), sizes, w=w, seed=seed, pure=False
            )
        )
        result["gen_s"] = time.perf_counter() - t0
        result["gen_worker_cpu_s"] = _worker_cpu_s() - worker_cpu0
        assert sum(counts) == n
        result["worker_rss_before_fit_mib"] = sum(
            r[1] for r in client.run(_worker_rss).values()
        )

        X, y = lazy_data(n, chunk, w, seed)
        if args.persist_first:
            # Drawn once into the workers' memory, X and y together; the fit
            # then validates and keeps the blocks already there.
            t0 = time.perf_counter()
            X, y = client.persist([X, y])
            distributed.wait([X, y])
            result["persist_first_s"] = time.perf_counter() - t0
        result["persist_first"] = args.persist_first
        persist = _timed_persist()
        model = DPLogisticRegression(
            epsilon=args.epsilon,
            delta=args.delta,
            classes=[0, 1],
            max_iter=max_iter,
            random_state=0,
        )
        # The noise calibration, memoized per process: timed apart, so that
        # fit_s is the work on the data (calibrate_s + fit_s is a cold fit).
        t0 = time.perf_counter()
        model.privacy_plan(n, D)
        result["calibrate_s"] = time.perf_counter() - t0
        cpu0, worker_cpu0 = _cpu_s(), _worker_cpu_s()
        t0 = time.perf_counter()
        model.fit(X, y)
        result["fit_s"] = time.perf_counter() - t0
        cpu1, worker_cpu1 = _cpu_s(), _worker_cpu_s()
        # CPU seconds: less sensitive than wall time to the other jobs on
        # the machine's cores.
        result["persist_worker_cpu_s"] = persist.worker_cpu_s - worker_cpu0
        result["persist_driver_cpu_s"] = persist.driver_cpu_s - cpu0
        result["steps_worker_cpu_s"] = worker_cpu1 - persist.worker_cpu_s
        result["steps_driver_cpu_s"] = cpu1 - persist.driver_cpu_s
        assert model.t_ == steps, (model.t_, steps)
        result["epochs"] = model.n_iter_
        result["fit_minus_gen_s"] = result["fit_s"] - result["gen_s"]
        result["persist_s"] = persist.seconds
        result["steps_s"] = result["fit_s"] - persist.seconds
        result["s_per_step"] = result["steps_s"] / steps
        result["dp_accuracy"] = float(model.score(X_test, y_test))
        result["epsilon_"] = float(model.epsilon_)
        result["driver_peak_rss_after_fit_mib"] = _maxrss_mib()
        peaks = client.run(_worker_rss)
        result["worker_peak_rss_mib"] = sum(r[0] for r in peaks.values())
    finally:
        client.close()
        cluster.close()
    print(json.dumps(result), flush=True)

    if args.sgd:
        sgd = SGDClassifier(loss="log_loss", random_state=0)
        t_fit = t_gen = c_fit = 0.0
        for _ in range(max(1, math.ceil(epochs - 1e-9))):
            for index, rows in enumerate(sizes):
                t0 = time.perf_counter()
                Xb, yb = block(index, rows, w, seed)
                t_gen += time.perf_counter() - t0
                t0, c0 = time.perf_counter(), time.process_time()
                sgd.partial_fit(Xb, yb, classes=[0, 1])
                t_fit += time.perf_counter() - t0
                c_fit += time.process_time() - c0
        result["sgd_passes"] = max(1, math.ceil(epochs - 1e-9))
        result["sgd_partial_fit_s"] = t_fit
        result["sgd_partial_fit_cpu_s"] = c_fit
        result["sgd_draw_s"] = t_gen
        result["sgd_accuracy"] = float(sgd.score(X_test, y_test))
        result["driver_peak_rss_after_sgd_mib"] = _maxrss_mib()
        print(json.dumps(result), flush=True)

    if args.lbfgs:
        t0 = time.perf_counter()
        X_mem = np.empty((n, D), dtype=np.float32)
        y_mem = np.empty(n, dtype=np.int64)
        start = 0
        for index, rows in enumerate(sizes):
            X_mem[start : start + rows], y_mem[start : start + rows] = block(
                index, rows, w, seed
            )
            start += rows
        result["lbfgs_draw_s"] = time.perf_counter() - t0
        lbfgs = LogisticRegression(max_iter=1000)
        t0, c0 = time.perf_counter(), time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lbfgs.fit(X_mem, y_mem)
        result["lbfgs_s"] = time.perf_counter() - t0
        result["lbfgs_cpu_s"] = time.process_time() - c0
        result["lbfgs_n_iter"] = int(lbfgs.n_iter_[0])
        result["lbfgs_accuracy"] = float(lbfgs.score(X_test, y_test))
        result["driver_peak_rss_after_lbfgs_mib"] = _maxrss_mib()
        if args.memory_dp:
            # The same estimator and seed on the same rows in memory (the
            # calibration is memoized from the Dask fit's).
            memory = DPLogisticRegression(
                epsilon=args.epsilon,
                delta=args.delta,
                classes=[0, 1],
                max_iter=max_iter,
                random_state=0,
            )
            t0, c0 = time.perf_counter(), time.process_time()
            memory.fit(X_mem, y_mem)
            result["memory_dp_s"] = time.perf_counter() - t0
            result["memory_dp_cpu_s"] = time.process_time() - c0
            result["memory_dp_accuracy"] = float(memory.score(X_test, y_test))
            result["driver_peak_rss_after_memory_dp_mib"] = _maxrss_mib()
        del X_mem, y_mem
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=lambda s: int(float(s)), default=10_000_000)
    parser.add_argument("--chunk", type=lambda s: int(float(s)), default=250_000)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--epsilon", type=float, default=1.0)
    # Below 1/n at n = 1e7; the same at every n so only n changes.
    parser.add_argument("--delta", type=float, default=1e-8)
    parser.add_argument(
        "--max-iter",
        type=int,
        default=None,
        help="DP-SGD epochs (default: the estimator's 'auto')",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--persist-first",
        action="store_true",
        help="persist X and y on the workers before the fit",
    )
    parser.add_argument(
        "--no-malloc-trim",
        action="store_true",
        help="start the workers without distributed's MALLOC_TRIM_THRESHOLD_=65536",
    )
    parser.add_argument("--sgd", action="store_true")
    parser.add_argument("--lbfgs", action="store_true")
    parser.add_argument(
        "--memory-dp",
        action="store_true",
        help="with --lbfgs: also the private fit in memory",
    )
    parser.add_argument(
        "--out",
        default=os.path.join(
            os.path.dirname(os.path.abspath(__file__)), "dask_results_1e7.jsonl"
        ),
    )
    args = parser.parse_args()
    result = run(args)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _adult import machine_description

    result["machine"] = machine_description()
    result["load_average"] = os.getloadavg()
    line = json.dumps(result)
    print(line, flush=True)
    with open(args.out, "a") as fh:
        fh.write(line + "\n")


if __name__ == "__main__":
    main()
