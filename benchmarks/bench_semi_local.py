# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Semi-local DP linear regression beside central semi-DP, pure local DP and public-only.

Two data sets:

* the thesis's Gaussian setting (Appendix A.4.1 / A.4.3), smaller so it
  runs in about two minutes on two shared cores: ``d = 20``,
  ``w* ~ N(0, I)``, ``x ~ N(0, I)``, ``y = <w*, x> + N(0, 0.5^2)`` (Bayes
  MSE 0.25), 4,000 training rows of which the first ``n_pub/n`` are public
  (the rows are i.i.d., so this is a uniformly random public set), 5,000
  test rows; ``n_pub/n`` in {0.03, 0.05, 0.1, 0.2} (A.4.3's grid) and
  ``epsilon`` in {1, 4, 16, 64};
* scikit-learn's ``load_diabetes`` (442 rows, 10 features): a random 30 %
  test split, a random ``n_pub/n`` in {0.05, 0.1, 0.2, 0.5} of the
  training rows public; ``X`` and ``y`` standardized with the public rows'
  means and standard deviations (public preprocessing), test MSE reported
  in the original units of ``y``.

Methods (every private one at its defaults, nothing tuned on test or
validation data):

* ``semi-local``: ``SemiLocalDPLinearRegression(epsilon, clip_norm=C)``,
  Semi-LDP-SGD (thesis Algorithm 13), its step and radius from the public
  rows;
* ``local (no public)``: the same estimator with every training row
  private (pure LDP-SGD, the thesis's LDP baseline, but without the public
  warm start); its radius ``D`` is given the oracle value ``||w_OLS||``
  (all training rows, non-private: generous to this baseline);
* ``semi-local, oracle D``: semi-local with the same kind of oracle,
  ``D = ||w_start - w_OLS||``, to separate the algorithm from the public
  rule that estimates ``D``;
* ``central semi-DP``: ``SemiDPLinearRegression(epsilon, delta=1e-5)``
  defaults (a trusted curator, Gaussian noise; (epsilon, 1e-5) against the
  local methods' (epsilon, 0));
* ``public-only``: least squares on the public rows (throw-away, the
  thesis's baseline);
* ``public start``: semi-local's own start, ridge on the public rows with
  the ridge chosen by GCV on them (``public_ridge="auto"``): the public-only
  model the private messages are measured against;
* ``OLS (all rows)``: the non-private reference.

``C = 2`` on the Gaussian data (about the median per-row gradient norm at
the optimum, ``0.5 sqrt(d)``) and ``C = 3`` on diabetes (standardized
units); public choices, not tuned.

Usage::

    python benchmarks/bench_semi_local.py           # about 2-3 minutes
    python benchmarks/bench_semi_local.py --quick   # smoke run (page untouched)
"""

import argparse
import datetime
import platform
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.linear_model import LinearRegression

from sklearn_dpfair import SemiDPLinearRegression, SemiLocalDPLinearRegression

OUT = Path(__file__).resolve().parents[1] / "docs" / "benchmarks" / "semi_local.rst"
METHODS = (
    "semi-local",
    "semi-local, oracle D",
    "local (no public)",
    "central semi-DP",
    "public-only",
    "public start",
    "OLS",
)


def _gaussian(seed, n=4000, n_test=5000, d=20):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(d)
    X = rng.standard_normal((n + n_test, d))
    y = X @ w + 0.5 * rng.standard_normal(n + n_test)
    return X[:n], y[:n], X[n:], y[n:]


def _diabetes(seed):
    X, y = load_diabetes(return_X_y=True)
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(y))
    n_test = int(0.3 * len(y))
    test, train = order[:n_test], order[n_test:]
    return X[train], y[train], X[test], y[test]


def _run(X, y, Xt, yt, ratio, epsilons, clip, seed, standardize):
    n = len(y)
    n_pub = max(int(round(ratio * n)), 1)
    mask = np.zeros(n, dtype=bool)
    mask[np.random.default_rng(1000 + seed).permutation(n)[:n_pub]] = True
    if standardize:
        # Public preprocessing: moments of the public rows only.
        mx, sx = X[mask].mean(0), X[mask].std(0) + 1e-12
        my, sy = y[mask].mean(), y[mask].std() + 1e-12
    else:
        mx, sx, my, sy = 0.0, 1.0, 0.0, 1.0
    Z, Zt, u = (X - mx) / sx, (Xt - mx) / sx, (y - my) / sy

    def mse(model):
        return float(np.mean((model.predict(Zt) * sy + my - yt) ** 2))

    ols = LinearRegression().fit(Z, u)
    w_ols = np.append(ols.coef_, ols.intercept_)
    oracle_radius = float(np.linalg.norm(w_ols))
    rows = []
    base = {"public-only": mse(LinearRegression().fit(Z[mask], u[mask])), "OLS": mse(ols)}
    for eps in epsilons:
        row = dict(base, ratio=ratio, epsilon=eps, seed=seed)
        semi = SemiLocalDPLinearRegression(
            epsilon=eps, clip_norm=clip, random_state=seed
        ).fit(Z, u, public_mask=mask)
        row["semi-local"] = mse(semi)
        row["public start"] = float(
            np.mean(
                ((Zt @ semi.coef_public_ + semi.intercept_public_) * sy + my - yt) ** 2
            )
        )
        # The same with the oracle distance from its start to w_OLS, as the
        # local baseline gets: separates the algorithm from the public D rule.
        start = np.append(semi.coef_public_, semi.intercept_public_)
        row["semi-local, oracle D"] = mse(
            SemiLocalDPLinearRegression(
                epsilon=eps,
                clip_norm=clip,
                radius=max(float(np.linalg.norm(start - w_ols)), 1e-6),
                random_state=seed,
            ).fit(Z, u, public_mask=mask)
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            row["local (no public)"] = mse(
                SemiLocalDPLinearRegression(
                    epsilon=eps, clip_norm=clip, radius=oracle_radius, random_state=seed
                ).fit(Z, u, public_mask=np.zeros(n, dtype=bool))
            )
            row["central semi-DP"] = mse(
                SemiDPLinearRegression(epsilon=eps, random_state=seed).fit(
                    Z, u, public_mask=mask
                )
            )
        rows.append(row)
    return rows


def _table(rows, title, ratios, epsilons):
    lines = [title, "^" * len(title), ""]
    header = ["n_pub/n", "epsilon", *METHODS, "gain vs public start", "gain vs local"]
    lines += [".. list-table::", "   :header-rows: 1", ""]
    lines.append("   * - " + "\n     - ".join(header))
    for ratio in ratios:
        for eps in epsilons:
            sel = [r for r in rows if r["ratio"] == ratio and r["epsilon"] == eps]
            means = {m: np.mean([r[m] for r in sel]) for m in METHODS}
            sds = {m: np.std([r[m] for r in sel]) / np.sqrt(len(sel)) for m in METHODS}
            cells = [f"{ratio:g}", f"{eps:g}"]
            cells += [f"{means[m]:.4g} ± {sds[m]:.2g}" for m in METHODS]
            # Relative reduction of the test MSE's excess over OLS.
            excess = {m: means[m] - means["OLS"] for m in METHODS}
            cells.append(f"{1 - excess['semi-local'] / excess['public start']:+.0%}")
            cells.append(f"{1 - excess['semi-local'] / excess['local (no public)']:+.0%}")
            lines.append("   * - " + "\n     - ".join(cells))
    return lines + [""]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    seeds = range(1) if args.quick else range(3)
    eps_grid = (1.0, 16.0) if args.quick else (1.0, 4.0, 16.0, 64.0)
    g_ratios = (0.03, 0.2) if args.quick else (0.03, 0.05, 0.1, 0.2)
    d_ratios = (0.1, 0.5) if args.quick else (0.05, 0.1, 0.2, 0.5)
    start = time.perf_counter()
    gauss, diab = [], []
    for seed in seeds:
        X, y, Xt, yt = _gaussian(seed)
        for ratio in g_ratios:
            gauss += _run(X, y, Xt, yt, ratio, eps_grid, 2.0, seed, False)
    for seed in range(5 if not args.quick else 1):
        X, y, Xt, yt = _diabetes(seed)
        for ratio in d_ratios:
            diab += _run(X, y, Xt, yt, ratio, eps_grid, 3.0, seed, True)
    seconds = time.perf_counter() - start
    lines = [
        ".. _bench_semi_local:",
        "",
        "==============================",
        "Semi-local DP with public rows",
        "==============================",
        "",
        "Written by ``python benchmarks/bench_semi_local.py``"
        + (" --quick" if args.quick else "")
        + f" on {datetime.date.today()}, {platform.machine()}, "
        f"{seconds:.0f} s. Test MSE (mean ± standard error over "
        f"{len(seeds)} seeds on the Gaussian data, 5 splits on diabetes); the "
        "gains are the relative reduction of the excess test MSE over OLS "
        "(all rows, non-private) of semi-local DP against its public start "
        "(what the private messages add) and against local DP without public "
        "rows (what the public rows add). What is compared and why: "
        "see the script's docstring and :ref:`semi_local_dp`.",
        "",
    ]
    lines += _table(gauss, "Thesis Gaussian setting (d = 20, n = 4000)", g_ratios, eps_grid)
    lines += _table(diab, "load_diabetes (n = 309 training rows)", d_ratios, eps_grid)
    lines += ["", ".. include:: semi_local_notes.inc", ""]
    if not args.quick:  # a smoke run leaves the page as measured
        OUT.write_text("\n".join(lines))
    for name, rows, ratios in (("gaussian", gauss, g_ratios), ("diabetes", diab, d_ratios)):
        print(name, "  ".join(f"{m[:10]:>10}" for m in METHODS))
        for ratio in ratios:
            for eps in eps_grid:
                sel = [r for r in rows if r["ratio"] == ratio and r["epsilon"] == eps]
                vals = "  ".join(f"{np.mean([r[m] for r in sel]):10.4g}" for m in METHODS)
                print(f"{ratio:5g} {eps:5g}", vals)


if __name__ == "__main__":
    main()
