# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""PrivateMetricFrame on UCI Adult's test split, and what small groups can show.

1. A fixed predictor (``DPLogisticRegression(epsilon=1)`` fitted once on the
   training file, seeded) is evaluated on the official test file with sex
   as the group. The exact per-sex metrics are the truth; ``RUNS`` private
   frames at each epsilon (fresh noise each, seeds 0..RUNS-1) are compared
   with it. Target: at epsilon = 1 each sex's selection rate within +-0.01
   of the truth in at least 90% of 200 runs.
2. Interval widths and coverage for one group of ``n`` rows (5, 100,
   10,000) drawn from the cell probabilities of Adult's test predictions:
   the median width of the 95% interval of each rate at epsilon = 1 and
   without noise (the sampling error alone), and the share of intervals
   that hold the population rate.

Writes ``docs/benchmarks/metric_frame.rst``.

Usage: python benchmarks/bench_metric_frame.py [--quick]
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))

from _adult import adult_arrays, machine_description

from sklearn_dpfair import DPLogisticRegression
from sklearn_dpfair.metrics import PrivateMetricFrame

OUT = os.path.join(os.path.dirname(__file__), "..", "docs", "benchmarks")
EPSILONS = (0.1, 0.5, 1.0, 2.0)
DELTA = 1e-5
RATES = ("accuracy", "selection_rate", "true_positive_rate", "false_positive_rate")
SIZES = (5, 100, 10_000)


def _frame(epsilon, seed, n_boot=1000):
    return PrivateMetricFrame(
        ["Female", "Male"],
        metrics=list(RATES),
        epsilon=epsilon,
        delta=DELTA,
        n_boot=n_boot,
        random_state=seed,
    )


def adult_runs(runs):
    X_train, y_train, X_test, y_test, _, sex_test = adult_arrays()
    model = DPLogisticRegression(epsilon=1.0, classes=[0, 1], random_state=0)
    y_pred = model.fit(X_train, y_train).predict(X_test)
    exact = _frame(np.inf, 0).fit(y_test, y_pred, sensitive_features=sex_test)
    truth = exact.by_group
    sizes = {g: int(np.sum(sex_test == g)) for g in ("Female", "Male")}
    truth_gaps = (
        exact.demographic_parity_difference(),
        exact.equalized_odds_difference(),
    )
    rows, fit_seconds = [], []
    for epsilon in EPSILONS:
        errors, gap_errors, covered, widths = [], [], [], []
        for seed in range(runs):
            start = time.perf_counter()
            frame = _frame(epsilon, seed).fit(
                y_test, y_pred, sensitive_features=sex_test
            )
            fit_seconds.append(time.perf_counter() - start)
            errors.append(np.abs(frame.by_group - truth).to_numpy())
            gap_errors.append(
                [
                    abs(frame.demographic_parity_difference() - truth_gaps[0]),
                    abs(frame.equalized_odds_difference() - truth_gaps[1]),
                ]
            )
            lower, upper = frame.by_group_ci
            covered.append(((lower <= truth) & (truth <= upper)).to_numpy())
            widths.append((upper - lower).to_numpy())
        errors = np.array(errors)  # runs x groups x metrics
        rows.append(
            {
                "epsilon": epsilon,
                "noise_std": frame.noise_std_,
                "epsilon_spent": frame.epsilon_,
                "within": (errors <= 0.01).mean(axis=0),
                "both_within": (errors[:, :, 1] <= 0.01).all(axis=1).mean(),
                "max_error": errors.max(axis=0),
                "gap_error": np.array(gap_errors).mean(axis=0),
                "covered": np.array(covered).mean(axis=0),
                "width": np.median(np.array(widths), axis=0),
            }
        )
    return truth, truth_gaps, sizes, rows, float(np.median(fit_seconds))


def small_groups(n_sims, cell_p):
    """Median interval width and coverage of each rate, one group of n rows."""
    truth = {
        "accuracy": cell_p[0] + cell_p[2],
        "selection_rate": cell_p[0] + cell_p[1],
        "true_positive_rate": cell_p[0] / (cell_p[0] + cell_p[3]),
        "false_positive_rate": cell_p[1] / (cell_p[1] + cell_p[2]),
    }
    rng = np.random.default_rng(0)
    out = []
    for epsilon in (1.0, np.inf):
        for n in SIZES:
            widths, hits, nan = [], [], []
            for sim in range(n_sims):
                cells = rng.multinomial(n, cell_p)
                y_true = np.repeat([1, 0, 0, 1], cells)
                y_pred = np.repeat([1, 1, 0, 0], cells)
                frame = PrivateMetricFrame(
                    ["g"],
                    metrics=list(RATES),
                    epsilon=epsilon,
                    delta=DELTA,
                    random_state=sim,
                ).fit(y_true, y_pred, sensitive_features=np.full(n, "g"))
                lower, upper = frame.overall_ci
                widths.append([upper[m] - lower[m] for m in RATES])
                hits.append([lower[m] <= truth[m] <= upper[m] for m in RATES])
                nan.append(frame.overall.isna().to_numpy())
            out.append(
                {
                    "epsilon": epsilon,
                    "n": n,
                    "width": np.median(widths, axis=0),
                    "covered": np.mean(hits, axis=0),
                    "nan": np.mean(nan, axis=0),
                }
            )
    return truth, out


def _fmt(x, digits=3):
    return f"{x:.{digits}f}"


def write_rst(adult, small, runs, n_sims, minutes):
    truth, truth_gaps, sizes, rows, fit_seconds = adult
    small_truth, small_rows = small
    at_one = next(r for r in rows if r["epsilon"] == 1.0)
    by = {(r["epsilon"], r["n"]): r for r in small_rows}
    five = by[(1.0, 5)]
    hundred, hundred_exact = by[(1.0, 100)], by[(np.inf, 100)]
    big, big_exact = by[(1.0, 10_000)], by[(np.inf, 10_000)]
    met = bool((at_one["within"][:, 1] >= 0.9).all())
    lines = [
        "PrivateMetricFrame on UCI Adult",
        "===============================",
        "",
        f"Machine: {machine_description()} (shared with other jobs while "
        f"running); date {time.strftime('%Y-%m-%d')}; total run time "
        f"{minutes:.1f} min. Generated by ``benchmarks/bench_metric_frame.py``.",
        "",
        "Predictor: ``DPLogisticRegression(epsilon=1, classes=[0, 1], "
        "random_state=0)`` fitted once on Adult's training file (the benchmarks' "
        "one-hot and standardized columns, whose preprocessing statistics come "
        "from the training file and are outside any guarantee; they do not "
        "matter here, where the predictions are fixed). Evaluation rows: the "
        f"official test file, {sizes['Female']} women and {sizes['Male']} men. "
        f":class:`~sklearn_dpfair.metrics.PrivateMetricFrame` at each epsilon, "
        f"delta = {DELTA:g}, declared groups ``['Female', 'Male']``, {runs} runs "
        "(seeds 0 to "
        f"{runs - 1}), each one Gaussian release of the 8 confusion counts "
        f"(add/remove adjacency). One fit with its 1,000 bootstrap replicates "
        f"takes {fit_seconds * 1000:.0f} ms (median).",
        "",
        "Target: at epsilon = 1 each sex's selection rate within +-0.01 of the "
        "truth in at least 90% of 200 runs: "
        + (
            f"**met** (women {at_one['within'][0, 1]:.1%}, men "
            f"{at_one['within'][1, 1]:.1%} of {runs} runs; both at once "
            f"{at_one['both_within']:.1%}; largest error "
            f"{at_one['max_error'][:, 1].max():.4f})."
            if met
            else f"**missed** (women {at_one['within'][0, 1]:.1%}, men "
            f"{at_one['within'][1, 1]:.1%})."
        ),
        "",
        "Exact values (the truth): "
        + "; ".join(
            f"{g}: " + ", ".join(f"{m} {truth.loc[g, m]:.4f}" for m in RATES)
            for g in truth.index
        )
        + f"; demographic parity difference {truth_gaps[0]:.4f}, equalized odds "
        f"difference {truth_gaps[1]:.4f}.",
        "",
        ".. list-table:: Share of runs within +-0.01 of the truth, women / men",
        "   :header-rows: 1",
        "",
        "   * - epsilon",
        "     - noise std per count",
        *[f"     - {m}" for m in RATES],
        "     - mean abs. error of DP / EO difference",
    ]
    for r in rows:
        lines += [
            f"   * - {r['epsilon']:g}",
            f"     - {r['noise_std']:.2f}",
            *[
                f"     - {r['within'][0, j]:.0%} / {r['within'][1, j]:.0%}"
                for j in range(len(RATES))
            ],
            f"     - {r['gap_error'][0]:.4f} / {r['gap_error'][1]:.4f}",
        ]
    lines += [
        "",
        ".. list-table:: 95% intervals on Adult: median width, and share of "
        "runs whose interval holds the test file's exact value, women / men",
        "   :header-rows: 1",
        "",
        "   * - epsilon",
        *[f"     - {m}" for m in RATES],
    ]
    for r in rows:
        lines += [
            f"   * - {r['epsilon']:g}",
            *[
                f"     - {r['width'][0, j]:.3f} / {r['width'][1, j]:.3f} "
                f"({r['covered'][0, j]:.0%} / {r['covered'][1, j]:.0%})"
                for j in range(len(RATES))
            ],
        ]
    lines += [
        "",
        "The intervals are for the rate of the population the test rows were "
        "drawn from (sampling error and DP noise), so they are wider than the "
        "DP noise alone and hold the test file's own value more often than 95%.",
        "",
        "What a group of n rows can show",
        "-------------------------------",
        "",
        f"One group of n rows drawn from the cell probabilities of the Adult "
        f"test predictions (accuracy {small_truth['accuracy']:.3f}, selection "
        f"rate {small_truth['selection_rate']:.3f}, TPR "
        f"{small_truth['true_positive_rate']:.3f}, FPR "
        f"{small_truth['false_positive_rate']:.3f}); {n_sims} simulated "
        "evaluations per row, 1,000 bootstrap replicates each. Width: median "
        "width of the 95% interval; coverage: share of intervals holding the "
        "population rate; NaN: share of evaluations where the rate is "
        "reported as NaN (its noisy denominator within 2 noise standard "
        "deviations of 0).",
        "",
        ".. list-table:: Median 95% interval width (coverage; NaN share)",
        "   :header-rows: 1",
        "",
        "   * - epsilon",
        "     - n",
        *[f"     - {m}" for m in RATES],
    ]
    for r in small_rows:
        lines += [
            f"   * - {r['epsilon']:g}",
            f"     - {r['n']}",
            *[
                f"     - {r['width'][j]:.3f} ({r['covered'][j]:.0%}; {r['nan'][j]:.0%})"
                for j in range(len(RATES))
            ],
        ]
    lines += [
        "",
        "At epsilon = 1 every count carries noise of standard deviation "
        f"{at_one['noise_std']:.1f}. A group of 5 rows can show nothing: its "
        f"rates are reported as NaN in {five['nan'].min():.0%} to "
        f"{five['nan'].max():.0%} of evaluations and the median width of its "
        f"intervals is at least {five['width'].min():.2f} for every rate (the "
        "whole range is 1). At 100 rows the intervals are wider than the "
        "sampling error alone by a factor of "
        f"{(hundred['width'] / hundred_exact['width']).min():.1f} to "
        f"{(hundred['width'] / hundred_exact['width']).max():.1f}; at 10,000 "
        "rows by a factor of "
        f"{(big['width'] / big_exact['width']).min():.2f} to "
        f"{(big['width'] / big_exact['width']).max():.2f}.",
        "",
    ]
    with open(os.path.join(OUT, "metric_frame.rst"), "w") as fh:
        fh.write("\n".join(lines))
    with open(os.path.join(OUT, "metric_frame_widths.inc"), "w") as fh:
        fh.write("\n".join(_widths_table(small_rows, n_sims)))


def _widths_table(small_rows, n_sims):
    """The User Guide's table: interval width and coverage by group size."""
    lines = [
        f".. list-table:: Median width of the 95% interval (coverage of the "
        f"population rate over {n_sims} simulated evaluations)",
        "   :header-rows: 1",
        "",
        "   * - n rows",
        *[f"     - {m} at epsilon = 1" for m in ("selection rate", "TPR")],
        *[f"     - {m} without noise" for m in ("selection rate", "TPR")],
    ]
    by = {(r["epsilon"], r["n"]): r for r in small_rows}
    for n in SIZES:
        cells = []
        for epsilon in (1.0, np.inf):
            r = by[(epsilon, n)]
            for j in (RATES.index("selection_rate"), RATES.index("true_positive_rate")):
                cells.append(f"{r['width'][j]:.3f} ({r['covered'][j]:.0%})")
        lines += [f"   * - {n:,}", *[f"     - {c}" for c in cells]]
    return [*lines, ""]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    runs, n_sims = (20, 20) if args.quick else (200, 200)
    start = time.perf_counter()
    adult = adult_runs(runs)
    _, _, _, rows, _ = adult
    for r in rows:
        print(
            f"eps={r['epsilon']:g} noise_std={r['noise_std']:.2f} "
            f"selection rate within 0.01: {r['within'][:, 1]} "
            f"(both {r['both_within']:.3f}), width {r['width'][:, 1]}"
        )
    # Cell probabilities of the Adult test predictions (all rows).
    X_train, y_train, X_test, y_test, _, _ = adult_arrays()
    y_pred = (
        DPLogisticRegression(epsilon=1.0, classes=[0, 1], random_state=0)
        .fit(X_train, y_train)
        .predict(X_test)
    )
    cells = np.array(
        [
            np.sum((y_test == 1) & (y_pred == 1)),
            np.sum((y_test == 0) & (y_pred == 1)),
            np.sum((y_test == 0) & (y_pred == 0)),
            np.sum((y_test == 1) & (y_pred == 0)),
        ],
        dtype=float,
    )
    small = small_groups(n_sims, cells / cells.sum())
    for r in small[1]:
        print(
            f"eps={r['epsilon']:g} n={r['n']} width={r['width']} cover={r['covered']}"
        )
    write_rst(adult, small, runs, n_sims, (time.perf_counter() - start) / 60)


if __name__ == "__main__":
    main()
