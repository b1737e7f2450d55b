# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Benchmark of HeavyTailDPRegressor against DP-SGD on heavy-tailed regression.

Core grid: n in {1e4, 1e5}, d in {5, 20},
epsilon in {0.5, 1, 2, 4}, delta = 1e-5, several seeds, on four
data-generating processes whose population second moment is known, so the
squared-loss excess risk ``1/2 (w - w*)^T Sigma~ (w - w*)`` is exact.

Methods compared in one run (same data per seed):

* ``default``: ``HeavyTailDPRegressor(epsilon=eps, delta=1e-5)``, nothing hand-set;
* ``dpsgd_C=...``: plain DP-SGD (Poisson rate 256/n, 5 epochs, noise
  calibrated with dp-accounting's RDP accountant, average of the
  last-epoch iterates, projection radius 10) with a fixed clip and its own
  learning rate, the best of ``ORACLE_LRS`` per cell on the ground truth;
* ``best fixed clip``: the single clip of ``FIXED_CLIPS`` (each with its
  tuned learning rates) with the smallest geometric mean over the cells;
* ``dpsgd_oracle``: DP-SGD with (clip, lr) chosen per grid cell on the
  *ground truth* (median excess risk over the seeds): an optimistic,
  non-private reference;
* ``ols``, ``huber`` and ``quantile``: non-private scikit-learn
  ``LinearRegression``, ``HuberRegressor(epsilon=1.35)`` and
  ``QuantileRegressor(quantile=0.5, alpha=0)`` (fitted on the first
  ``QUANTILE_ROWS`` rows: its linear program is slow at n = 1e5), the floor.

Run ``python benchmarks/bench_heavytail.py`` for the recorded table (writes
``docs/benchmarks/heavytail.rst`` and ``docs/benchmarks/heavytail_*.png``),
``--quick`` for a smoke run, ``--seed-offset 100`` to evaluate on seeds the
recorded table does not use.
"""

import argparse
import datetime
import math
import os
import platform
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from itertools import product

import numpy as np

# Measure this checkout's package, not an installed one.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
# One BLAS thread per worker: the workers already use both cores.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from sklearn.linear_model import HuberRegressor, LinearRegression, QuantileRegressor

from sklearn_dpfair import HeavyTailDPRegressor
from sklearn_dpfair._solvers.heavy_tail._dpsgd import DPSGD_SCHEDULE
from sklearn_dpfair.privacy import calibrate_noise_multiplier

DELTA = 1e-5
RADIUS = 10.0
DGPS = ("G", "T-sym", "P-skew", "Contam")
# DP-SGD baseline (Abadi et al., 2016): Poisson batches of expected size 256.
SGD_BATCH, SGD_EPOCHS, SGD_LR = 256, 5, 0.05
FIXED_CLIPS = (0.1, 1.0, 10.0, 30.0)
QUANTILE_ROWS = 20000
ORACLE_CLIPS = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0)
ORACLE_LRS = (0.01, 0.03, 0.05, 0.1, 0.3, 1.0)
# Tail indices of the heavy-tailed DGPs: squared loss needs 2k < nu_x and
# k < nu_e (resp. alpha) for moment order k; all three allow k = 2.
NU_X, NU_E, PARETO_ALPHA, LOGNORMAL_SIGMA = 4.5, 3.0, 2.5, 0.8
CONTAM_RATE, CONTAM_SCALE = 0.005, 100.0


# --------------------------------------------------------------------------
# Data-generating processes
# --------------------------------------------------------------------------
def make_truth(d, rng):
    w = rng.normal(size=d)
    return 2.0 * w / np.linalg.norm(w), 1.0


def sample(dgp, n, d, w, b, rng):
    """Rows, targets and the population second moment of x (E x = 0)."""
    if dgp == "G":
        X = rng.normal(size=(n, d))
        noise = rng.normal(size=n)
        second = 1.0
    elif dgp == "T-sym":
        X = rng.standard_t(NU_X, size=(n, d)) / math.sqrt(NU_X / (NU_X - 2))
        noise = rng.standard_t(NU_E, size=n)
        second = 1.0
    elif dgp == "P-skew":
        s2 = LOGNORMAL_SIGMA**2
        mean, var = math.exp(s2 / 2), (math.exp(s2) - 1) * math.exp(s2)
        X = (rng.lognormal(0.0, LOGNORMAL_SIGMA, size=(n, d)) - mean) / math.sqrt(var)
        a = PARETO_ALPHA
        noise = (rng.pareto(a, size=n) + 1.0) - a / (a - 1.0)
        second = 1.0
    elif dgp == "Contam":
        X = rng.normal(size=(n, d))
        noise = rng.normal(size=n)
        bad = rng.random(n) < CONTAM_RATE
        X[bad] *= CONTAM_SCALE
        noise[bad] *= CONTAM_SCALE
        second = (1 - CONTAM_RATE) + CONTAM_RATE * CONTAM_SCALE**2
    else:
        raise ValueError(dgp)
    return X, X @ w + b + noise, second


def excess_risk(coef, intercept, w, b, second):
    """Exact ``1/2 (w - w*)^T E[x~ x~^T] (w - w*)`` with E x = 0, E xx^T = second I."""
    return 0.5 * (second * np.sum((coef - w) ** 2) + (intercept - b) ** 2)


# --------------------------------------------------------------------------
# DP-SGD baseline, vectorized over a grid of (clip, lr) configurations that
# share the Poisson batches (each configuration is a valid DP-SGD run).
# --------------------------------------------------------------------------
def dpsgd_grid(X, y, eps, clips, lrs, rng):
    n, d = X.shape
    q = SGD_BATCH / n
    steps = math.ceil(SGD_EPOCHS / q)
    sigma = calibrate_noise_multiplier(eps, DELTA, q, steps, "rdp")
    clips, lrs = np.asarray(clips, float), np.asarray(lrs, float)
    m = clips.size
    W = np.zeros((m, d + 1))
    avg = np.zeros_like(W)
    last = steps - math.ceil(steps / SGD_EPOCHS)
    for t in range(steps):
        size = rng.binomial(n, q)
        idx = rng.choice(n, size=size, replace=False)
        Xb = X[idx]
        res = Xb @ W[:, :d].T + W[:, d] - y[idx, None]  # (B, m)
        row_norms = np.sqrt(np.einsum("ij,ij->i", Xb, Xb) + 1.0)
        norms = np.abs(res) * row_norms[:, None]
        fac = np.minimum(1.0, clips / np.maximum(norms, 1e-300))
        wres = res * fac
        G = np.empty((m, d + 1))
        G[:, :d] = (Xb.T @ wres).T
        G[:, d] = wres.sum(axis=0)
        G += rng.normal(size=G.shape) * (sigma * clips)[:, None]
        W -= (lrs / (q * n))[:, None] * G
        norm_w = np.linalg.norm(W, axis=1)
        W *= np.minimum(1.0, RADIUS / np.maximum(norm_w, 1e-300))[:, None]
        if t >= last:
            avg += W
    avg /= steps - last
    return avg[:, :d], avg[:, d]


# --------------------------------------------------------------------------
# One (dgp, n, d, seed): every method at every epsilon.
# --------------------------------------------------------------------------
def run_job(job):
    dgp, n, d, seed, epsilons, quick = job
    warnings.simplefilter("ignore")
    rng = np.random.default_rng([seed, n, d, DGPS.index(dgp)])
    w, b = make_truth(d, rng)
    X, y, second = sample(dgp, n, d, w, b, rng)
    rows = []

    def add(method, eps, coef, intercept, seconds=None):
        rows.append(
            {
                "dgp": dgp,
                "n": n,
                "d": d,
                "seed": seed,
                "eps": eps,
                "method": method,
                "risk": excess_risk(coef, intercept, w, b, second),
                "finite": bool(np.all(np.isfinite(coef)) and np.isfinite(intercept)),
                "zero_risk": excess_risk(np.zeros(d), 0.0, w, b, second),
                "seconds": seconds,
            }
        )

    t0 = time.perf_counter()
    ols = LinearRegression().fit(X, y)
    t_ref = time.perf_counter() - t0
    add("ols", math.inf, ols.coef_, ols.intercept_, 1.0)
    if not quick:
        hub = HuberRegressor(epsilon=1.35, max_iter=500).fit(X, y)
        add("huber", math.inf, hub.coef_, hub.intercept_)
        qr = QuantileRegressor(quantile=0.5, alpha=0.0, solver="highs")
        qr.fit(X[:QUANTILE_ROWS], y[:QUANTILE_ROWS])
        add("quantile", math.inf, qr.coef_, qr.intercept_)
    grid = list(product(ORACLE_CLIPS, ORACLE_LRS))
    for eps in epsilons:
        t0 = time.perf_counter()
        est = HeavyTailDPRegressor(epsilon=eps, delta=DELTA, random_state=seed)
        est.fit(X, y)
        add(
            "default",
            eps,
            est.coef_,
            est.intercept_,
            (time.perf_counter() - t0) / t_ref,
        )
        coefs, intercepts = dpsgd_grid(
            X,
            y,
            eps,
            [c for c, _ in grid],
            [lr for _, lr in grid],
            np.random.default_rng([seed, n, d, 7]),
        )
        for (clip, lr), coef, intercept in zip(grid, coefs, intercepts):
            add(f"dpsgd_C={clip:g}_lr={lr:g}", eps, coef, intercept)
    return rows


def summarize(rows):
    """Median excess risk per (cell, method), oracle DP-SGD per cell."""
    import pandas as pd

    df = pd.DataFrame(rows)
    cells = ["dgp", "n", "d", "eps"]
    priv = df[df.eps != math.inf]
    med = priv.groupby(cells + ["method"]).risk.median().unstack("method")
    sgd_cols = [c for c in med.columns if c.startswith("dpsgd_")]
    table = pd.DataFrame(index=med.index)
    table["default"] = med["default"]
    for clip in FIXED_CLIPS:
        cols = [f"dpsgd_C={clip:g}_lr={lr:g}" for lr in ORACLE_LRS]
        table[f"dpsgd_C={clip:g}"] = med[cols].min(axis=1)
    table["dpsgd_oracle"] = med[sgd_cols].min(axis=1)
    table["oracle_config"] = med[sgd_cols].idxmin(axis=1).str.replace("dpsgd_", "")
    nonpriv = df[df.eps == math.inf].groupby(["dgp", "n", "d", "method"]).risk.median()
    nonpriv = nonpriv.unstack("method")
    table = table.reset_index()
    for col in nonpriv.columns:
        table[col] = [nonpriv.loc[(r.dgp, r.n, r.d), col] for r in table.itertuples()]
    table["ratio_to_oracle"] = table["default"] / table["dpsgd_oracle"]
    fail = priv[priv.method == "default"]
    failures = int((~fail.finite | (fail.risk > fail.zero_risk)).sum())
    times = priv[priv.method == "default"].seconds
    return table, failures, len(fail), times


def _met(ok):
    return "yes" if ok else "**no**"


def _geo(x):
    return float(np.exp(np.mean(np.log(np.asarray(x, float)))))


def write_rst(table, failures, n_fits, times, args, path, elapsed):
    methods = ["default", *[f"dpsgd_C={c:g}" for c in FIXED_CLIPS], "dpsgd_oracle"]
    geo = {m: _geo(table[m]) for m in methods}
    geo_ratio = {m: _geo(table["default"] / table[m]) for m in methods[1:]}
    worst = float(table["ratio_to_oracle"].max())
    lines = [
        "Heavy-tailed DP regression (HeavyTailDPRegressor)",
        "=================================================",
        "",
        f"Generated by ``benchmarks/bench_heavytail.py`` on {args.date} "
        f"({platform.machine()}, {os.cpu_count()} cores, {args.workers} worker "
        f"processes, {elapsed / 60:.1f} min). Seeds "
        f"{args.seed_offset}..{args.seed_offset + args.seeds - 1} per cell; "
        f"delta = {DELTA:g}. Entries are the **median exact excess population "
        "risk** ``1/2 (w - w*)^T E[x~ x~^T] (w - w*)`` over the seeds.",
        "",
        "DGPs (``||w*|| = 2``, intercept 1, features standardized, E x = 0): "
        f"G = Gaussian features and noise; T-sym = Student-t({NU_X:g}) features, "
        f"t({NU_E:g}) noise; P-skew = centred lognormal({LOGNORMAL_SIGMA:g}) "
        f"features, centred Pareto({PARETO_ALPHA:g}) noise; Contam = Gaussian "
        f"with {CONTAM_RATE:.1%} rows scaled by {CONTAM_SCALE:g} (features and "
        "noise; the intercept is kept so w* stays the minimizer). k = 2 is a "
        "valid moment order for all four.",
        "",
        "Methods: ``default`` = ``HeavyTailDPRegressor(epsilon, delta)`` with "
        "nothing hand-set: ``solver='auto'`` picks ``'dp-sgd'`` (Poisson "
        "batches of expected size max(256, n/50), 20 epochs, the target "
        "centred and scaled by its private median and MAD, clip = "
        "c0 max(1, f / 5000)^(1/2) x the private median row norm in those "
        "units with f = eps n / sqrt(d + 1), step size from the same private "
        "row norm, 10% of the zCDP budget on the private scales, then one "
        "private Newton step on the intercept: the clipped mean of the "
        "residuals (each clipped at c_b max(1, eps n / 5000)^(1/2) "
        "target-scale units, the steps' growth for one parameter, Gaussian "
        "noise) on "
        f"{DPSGD_SCHEDULE.intercept_fraction:.0%} of the zCDP budget, where "
        "its noise std is at most "
        f"{DPSGD_SCHEDULE.intercept_max_noise:g} target-scale units; the "
        "composition calibrated to (epsilon, delta) with the RDP accountant, "
        "add/remove adjacency, no projection); ``dpsgd_C=c`` = DP-SGD with "
        f"Poisson rate {SGD_BATCH}/n, {SGD_EPOCHS} epochs, clip c and its own "
        f"best learning rate of {ORACLE_LRS} per cell (tuned on the ground "
        "truth), RDP accountant (add/remove adjacency), average of the "
        "last-epoch iterates, "
        f"projection radius {RADIUS:g}; ``dpsgd_oracle`` = best DP-SGD over "
        f"clips {ORACLE_CLIPS} x learning rates {ORACLE_LRS}, chosen per cell "
        "on the ground truth (non-private tuning: an optimistic reference); "
        "``ols`` / ``huber`` / ``quantile`` = non-private scikit-learn "
        "LinearRegression / HuberRegressor(epsilon=1.35) / "
        f"QuantileRegressor(quantile=0.5, alpha=0) on the first {QUANTILE_ROWS} "
        "rows: the price of privacy is the gap to them.",
        "",
        "Summary",
        "-------",
        "",
        ".. list-table::",
        "   :header-rows: 1",
        "",
        "   * - quantity",
        "     - value",
        "     - target",
        "     - met?",
        f"   * - geometric mean of default / dpsgd_oracle over the {len(table)} cells",
        f"     - {geo_ratio['dpsgd_oracle']:.2f}",
        "     - <= 3",
        f"     - {_met(geo_ratio['dpsgd_oracle'] <= 3)}",
        "   * - worst cell, default / dpsgd_oracle",
        f"     - {worst:.2f}",
        "     - <= 10",
        f"     - {_met(worst <= 10)}",
    ]
    best = min(FIXED_CLIPS, key=lambda c: geo[f"dpsgd_C={c:g}"])
    for c in FIXED_CLIPS:
        value = geo_ratio[f"dpsgd_C={c:g}"]
        is_best = c == best
        lines += [
            f"   * - geometric mean of default / dpsgd_C={c:g} (tuned lr)"
            + (": the best single fixed clip" if is_best else ""),
            f"     - {value:.2f}",
            "     - < 0.8" if is_best else "     - ",
            f"     - {_met(value < 0.8)}" if is_best else "     - ",
        ]
    n_over_10 = int((table["ratio_to_oracle"] > 10).sum())
    lines += [
        "   * - failures of default (non-finite, or worse than w = 0)",
        f"     - {failures} / {n_fits}",
        "     - 0",
        f"     - {_met(failures == 0)}",
        "   * - median fit time of default / LinearRegression (same process)",
        f"     - {float(np.median(times)):.1f}",
        "     - ",
        "     - ",
        "",
        f"{n_over_10} of the {len(table)} cells are more than 10x worse than the "
        "oracle-tuned DP-SGD. The default pays for its own tuning (the "
        "private scales) and its intercept step out of the same (epsilon, "
        "delta); the oracle and the "
        "fixed clips' learning rates are tuned on the ground truth and pay "
        "nothing. The default's constants (clip factor "
        f"c0 = {DPSGD_SCHEDULE.clip_factor:g} and reference "
        f"{DPSGD_SCHEDULE.clip_snr_ref:g}, 20 epochs, batch n/50, step "
        f"{DPSGD_SCHEDULE.step_scale:g} / m2, intercept step c_b = "
        f"{DPSGD_SCHEDULE.intercept_clip_factor:g} on "
        f"{DPSGD_SCHEDULE.intercept_fraction:.0%} of the budget) were chosen on "
        "seeds 100..102, disjoint from the seeds recorded here (there the "
        "default measured 0.62x the best fixed clip and 0.95x the oracle, "
        "against 0.88x and 1.36x without the intercept step and with c0 = "
        "1.5; on the seeds recorded here that earlier default measured 0.80x "
        "and 1.26x, worst cell 8.2x); the one-pass "
        "solvers of the previous default (``solver='sgd'``/``'acsa'``) "
        "measured 5.47x the oracle in geometric mean on this grid. The "
        "multi-pass default makes 20 expected passes over the data, hence its "
        "fit time (the one-pass default measured 4.1x LinearRegression).",
        "",
        "Geometric means of the median excess risk over the cells: "
        + ", ".join(f"{m} {geo[m]:.3g}" for m in methods)
        + "; non-private references (with skewed noise HuberRegressor and "
        "QuantileRegressor estimate another centre than the mean, which counts "
        "as excess risk here; with contamination least squares is not robust): "
        + ", ".join(f"{m} {_geo(table[m]):.3g}" for m in ("ols", "huber", "quantile"))
        + ".",
        "",
        "Per cell",
        "--------",
        "",
        ".. list-table::",
        "   :header-rows: 1",
        "",
        "   * - DGP",
        "     - n",
        "     - d",
        "     - eps",
        *[f"     - {m}" for m in methods],
        "     - oracle (C, lr)",
        "     - default / oracle",
        "     - ols",
        "     - huber",
        "     - quantile",
    ]
    for r in table.itertuples():
        lines += [
            f"   * - {r.dgp}",
            f"     - {int(r.n)}",
            f"     - {int(r.d)}",
            f"     - {r.eps:g}",
            *[f"     - {table.loc[r.Index, m]:.3g}" for m in methods],
            f"     - {r.oracle_config.replace('C=', '').replace('_lr=', ', ')}",
            f"     - {r.ratio_to_oracle:.2f}",
            f"     - {table.loc[r.Index, 'ols']:.3g}",
            f"     - {table.loc[r.Index, 'huber']:.3g}",
            f"     - {table.loc[r.Index, 'quantile']:.3g}",
        ]
    lines += [
        "",
        ".. image:: heavytail_vs_n.png",
        "",
        ".. image:: heavytail_vs_eps.png",
        "",
    ]
    with open(path, "w") as f:
        f.write("\n".join(lines))


def plot(table, outdir):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    methods = [
        "default",
        *[f"dpsgd_C={c:g}" for c in FIXED_CLIPS],
        "dpsgd_oracle",
        "ols",
    ]
    styles = {"default": "o-", "dpsgd_oracle": "k--", "ols": "k:"}
    for axis, fixed, name in [
        ("n", ("eps", 1.0), "vs_n"),
        ("eps", ("n", 10**4), "vs_eps"),
    ]:
        fig, axes = plt.subplots(2, 4, figsize=(15, 7), sharex=True)
        for (i, d), (j, dgp) in product(
            enumerate(sorted(table.d.unique())), enumerate(DGPS)
        ):
            ax = axes[i, j]
            sub = table[
                (table.dgp == dgp) & (table.d == d) & (table[fixed[0]] == fixed[1])
            ]
            sub = sub.sort_values(axis)
            for m in methods:
                if m in sub:
                    ax.plot(sub[axis], sub[m], styles.get(m, ".-"), label=m)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_title(f"{dgp}, d={d}, {fixed[0]}={fixed[1]:g}")
            ax.set_xlabel(axis)
        axes[0, 0].set_ylabel("median excess risk")
        axes[1, 0].set_ylabel("median excess risk")
        axes[0, 0].legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, f"heavytail_{name}.png"), dpi=90)
        plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--seed-offset", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", default=None, help="rst path (default docs/...)")
    parser.add_argument("--csv", default=None, help="also save every fit's row here")
    parser.add_argument(
        "--from-csv",
        default=None,
        help="rewrite the rst from a saved --csv run (no fits); pass --elapsed",
    )
    parser.add_argument("--elapsed", type=float, default=0.0, help="with --from-csv")
    args = parser.parse_args()
    args.date = datetime.date.today().isoformat()
    if args.quick:
        ns, ds, epsilons, dgps, args.seeds = (10**4,), (5,), (1.0,), ("T-sym",), 2
    else:
        ns, ds, epsilons, dgps = (10**4, 10**5), (5, 20), (0.5, 1.0, 2.0, 4.0), DGPS
    jobs = [
        (dgp, n, d, args.seed_offset + s, epsilons, args.quick)
        for dgp, n, d, s in product(dgps, ns, ds, range(args.seeds))
    ]
    start = time.perf_counter()
    rows = []
    if args.from_csv:
        import pandas as pd

        rows = pd.read_csv(args.from_csv).to_dict("records")
        elapsed = args.elapsed
    else:
        with ProcessPoolExecutor(args.workers) as pool:
            for part in pool.map(run_job, jobs):
                rows.extend(part)
        elapsed = time.perf_counter() - start
    table, failures, n_fits, times = summarize(rows)
    if not args.quick and args.csv and not args.from_csv:
        import pandas as pd

        pd.DataFrame(rows).to_csv(args.csv, index=False)
    import pandas as pd

    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(table.drop(columns=["huber", "quantile"], errors="ignore").round(5))
    methods = [f"dpsgd_C={c:g}" for c in FIXED_CLIPS] + ["dpsgd_oracle"]
    for m in methods:
        print(f"geo-mean default/{m}: {_geo(table['default'] / table[m]):.3f}")
    print(
        f"worst default/oracle: {table.ratio_to_oracle.max():.2f}; "
        f"failures {failures}/{n_fits}; elapsed {elapsed:.0f}s"
    )
    root = os.path.join(os.path.dirname(__file__), os.pardir, "docs", "benchmarks")
    if not args.quick:
        os.makedirs(root, exist_ok=True)
        path = args.out or os.path.join(root, "heavytail.rst")
        write_rst(table, failures, n_fits, times, args, path, elapsed)
        plot(table, os.path.dirname(path))
        print("wrote", path)


if __name__ == "__main__":
    main()
