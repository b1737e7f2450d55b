# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The honest cost of tuning on UCI Adult: private search vs defaults vs naive CV.

Protocol: Adult train/test files, rows with missing values dropped, one-hot +
standardized (benchmarks/_adult.py); delta = 1e-5; total epsilon in
{0.5, 1, 3} for *everything* released by a method; seeds 0..S-1.

For each estimator three methods, each evaluated on the test file (accuracy
and fairlearn's demographic_parity_difference by sex of hard predictions):

* defaults: one fit at epsilon on the whole training file (the defaults
  were chosen once on Adult, which favours them);
* naive CV: the choice of a 3-fold cross-validated grid search whose fits are
  each epsilon-DP, refitted at epsilon on the whole training file. Its scores
  are noiseless on private rows: the true total cost is unknown (at least
  the composition of all its fits, which the table reports);
* private search: PrivateHyperparameterSearch at total epsilon (training,
  noisy scoring, selection and returned model all accounted).

DPLogisticRegression is searched over alpha x clip_norm, scored by accuracy;
DPFERMIClassifier over fairness_weight, scored by accuracy minus the
demographic-parity gap (sensitive_features routed).

Every fit is seeded, so the page reproduces: the defaults fit and the
private search with the loop's seed, each naive-CV fold fit and its refit
with its own seed drawn from it (the ledger refuses to compose fits that
share a seed: they draw the same noise). The seed fixes the noise of each
fit (seeded fits are not releases).

Usage: python benchmarks/bench_tuning.py [--quick] [--seeds 3]
"""

import argparse
import datetime
import os
import sys
import time
import warnings

import numpy as np
import sklearn
from fairlearn.metrics import demographic_parity_difference
from sklearn.base import clone
from sklearn.model_selection import KFold, ParameterGrid

sys.path.insert(0, os.path.dirname(__file__))
from _adult import adult_arrays, machine_description  # noqa: E402

from sklearn_dpfair import (  # noqa: E402
    DPFERMIClassifier,
    DPLogisticRegression,
    PrivateHyperparameterSearch,
)
from sklearn_dpfair.privacy import PrivacyLedger  # noqa: E402

EPSILONS = [0.5, 1.0, 3.0]
DELTA = 1e-5
GAP_PENALTY = 1.0
OUT = os.path.join(os.path.dirname(__file__), "..", "docs", "benchmarks")

SETUPS = {
    "DPLogisticRegression": dict(
        estimator=DPLogisticRegression(delta=DELTA, classes=[0, 1]),
        grid={"alpha": [0.0, 1e-3], "clip_norm": [0.5, 1.0, 2.0]},
        scoring="accuracy",
    ),
    "DPFERMIClassifier": dict(
        estimator=DPFERMIClassifier(
            delta=DELTA, classes=[0, 1], groups=["Female", "Male"]
        ),
        grid={"fairness_weight": [1.0, 4.0, 8.0, 16.0]},
        scoring="accuracy-dp-gap",
    ),
}


def _fit(estimator, X, y, sensitive):
    if isinstance(estimator, DPFERMIClassifier):
        return estimator.fit(X, y, sensitive_features=sensitive)
    return estimator.fit(X, y)


def _score(scoring, y, y_pred, sensitive):
    accuracy = float(np.mean(y == y_pred))
    if scoring == "accuracy":
        return accuracy
    gap = demographic_parity_difference(y, y_pred, sensitive_features=sensitive)
    return accuracy - GAP_PENALTY * gap


def _evaluate(model, X_test, y_test, s_test):
    y_pred = model.predict(X_test)
    return (
        float(np.mean(y_pred == y_test)),
        float(demographic_parity_difference(y_test, y_pred, sensitive_features=s_test)),
    )


def naive_cv(setup, epsilon, seed, X, y, s, ledger):
    """GridSearchCV's behaviour, written out so the FERMI score can use groups.

    Every fit is seeded, each with its own seed drawn from ``seed``: fits
    given one seed draw the same noise, and the ledger refuses to compose
    them (its total would be inf).
    """
    grid = ParameterGrid(setup["grid"])
    fit_seeds = iter(
        int(v) for v in np.random.SeedSequence(seed).generate_state(3 * len(grid) + 1)
    )
    best = None
    for params in grid:
        scores = []
        for train, test in KFold(3, shuffle=True, random_state=seed).split(X):
            est = clone(setup["estimator"]).set_params(
                epsilon=epsilon, accountant=ledger, random_state=next(fit_seeds),
                **params,
            )
            _fit(est, X[train], y[train], s[train])
            y_pred = est.predict(X[test])
            scores.append(_score(setup["scoring"], y[test], y_pred, s[test]))
        if best is None or np.mean(scores) > best[0]:
            best = (np.mean(scores), params)
    refit = clone(setup["estimator"]).set_params(
        epsilon=epsilon, accountant=ledger, random_state=next(fit_seeds), **best[1]
    )
    return _fit(refit, X, y, s), best[1]


def run(seeds, epsilons, names):
    X, y, X_test, y_test, s, s_test = adult_arrays()
    rows = []
    for name in names:
        setup = SETUPS[name]
        for epsilon in epsilons:
            for seed in seeds:
                start = time.perf_counter()
                default = _fit(
                    clone(setup["estimator"]).set_params(
                        epsilon=epsilon, random_state=seed
                    ),
                    X, y, s,
                )
                rows.append((name, epsilon, seed, "defaults", None, epsilon,
                             *_evaluate(default, X_test, y_test, s_test)))
                ledger = PrivacyLedger()
                model, params = naive_cv(setup, epsilon, seed, X, y, s, ledger)
                rows.append((name, epsilon, seed, "naive CV", params,
                             ledger.total_epsilon(),
                             *_evaluate(model, X_test, y_test, s_test)))
                estimator = clone(setup["estimator"])
                fit_params = {}
                if isinstance(estimator, DPFERMIClassifier):
                    estimator.set_fit_request(sensitive_features=True)
                    fit_params = {"sensitive_features": s}
                search = PrivateHyperparameterSearch(
                    estimator,
                    setup["grid"],
                    epsilon=epsilon,
                    delta=DELTA,
                    scoring=setup["scoring"],
                    gap_penalty=GAP_PENALTY,
                    random_state=seed,
                ).fit(X, y, **fit_params)
                rows.append((name, epsilon, seed, "private search",
                             search.best_params_, search.epsilon_,
                             *_evaluate(search, X_test, y_test, s_test)))
                print(f"{name} eps={epsilon} seed={seed}: "
                      f"{time.perf_counter() - start:.0f} s; "
                      f"search run_epsilon={search.run_epsilon_:.3f}", flush=True)
                print("   ", rows[-3][3:], "\n   ", rows[-2][3:], "\n   ",
                      rows[-1][3:], flush=True)
    return rows


def _mean_sd(values):
    values = np.asarray(values, dtype=float)
    return f"{values.mean():.4f} ± {values.std():.4f}"


def write_rst(rows, seeds, minutes, names):
    lines = [
        "Tuning under differential privacy on UCI Adult",
        "==============================================",
        "",
        f"Machine: {machine_description()} (shared with other jobs while "
        f"running); date {datetime.date.today()}; seeds {list(seeds)}; total "
        f"run time {minutes:.1f} min. Generated by ``benchmarks/bench_tuning.py``.",
        "",
        "Each method releases one model; *total epsilon* is what the method as "
        "a whole spends at delta = 1e-5 (record-level add/remove DP). "
        "*defaults* fits once at epsilon with the package defaults (chosen once "
        "on Adult, which favours them). *naive CV* is a 3-fold grid search whose "
        "fits are each epsilon-DP, refitted at epsilon: its scores and selection "
        "are noiseless on private rows, so its true cost is unknown; the column "
        "gives the composition of its training fits only, a lower bound. "
        "*private search* is "
        ":class:`~sklearn_dpfair.model_selection.PrivateHyperparameterSearch` at "
        "total epsilon (Papernot-Steinke selection, logarithmic number of runs "
        "with mean = twice the number of candidates, each row held out for validation "
        "with probability 0.2, returns the selected run's model trained on the other "
        "rows). Test accuracy and "
        "fairlearn's ``demographic_parity_difference`` by sex of hard "
        "predictions, mean ± sd over seeds. Every fit is seeded: the defaults "
        "fit and the private search with the run's seed, each naive-CV fold "
        "fit and its refit with its own seed drawn from it (fits sharing a "
        "seed draw the same noise, and the ledger refuses to compose them). "
        "The seed fixes the noise of each fit, so the tables reproduce "
        "(seeded fits are not releases).",
        "",
        "Reading the tables: the naive search is not a method at the same budget: "
        "its training fits alone compose to 4 to 5.5 times epsilon, and its "
        "noiseless selection comes on top. The private search is: it pays for "
        "the selection by training each run with roughly half of epsilon "
        "(twelve expected runs for six candidates, eight for four). On Adult the "
        "defaults were themselves chosen on Adult, so the search can at best "
        "match them; it is for data where no trusted defaults exist, and its "
        "accuracy cost against good defaults is what these tables measure.",
        "",
    ]
    for name in names:
        setup = SETUPS[name]
        lines += [
            f".. list-table:: {name}, grid {setup['grid']}, scoring "
            f"``{setup['scoring']}``"
            + (
                f" (gap penalty {GAP_PENALTY:g})"
                if setup["scoring"] != "accuracy"
                else ""
            ),
            "   :header-rows: 1",
            "",
            "   * - epsilon",
            "     - method",
            "     - total epsilon",
            "     - test accuracy",
            "     - test DP gap",
            "     - choices",
        ]
        for epsilon in sorted({r[1] for r in rows if r[0] == name}):
            for method in ("defaults", "naive CV", "private search"):
                sel = [r for r in rows if r[:2] == (name, epsilon) and r[3] == method]
                if not sel:
                    continue
                total = np.mean([r[5] for r in sel])
                total_text = (
                    f">= {total:.3g} (unaccounted selection)"
                    if method == "naive CV"
                    else f"{total:.3g}"
                )
                choices = sorted({str(r[4]) for r in sel if r[4] is not None})
                lines += [
                    f"   * - {epsilon:g}",
                    f"     - {method}",
                    f"     - {total_text}",
                    f"     - {_mean_sd([r[6] for r in sel])}",
                    f"     - {_mean_sd([r[7] for r in sel])}",
                    f"     - {'; '.join(choices) if choices else 'defaults'}",
                ]
        lines.append("")
    lines += _targets(rows)
    with open(os.path.join(OUT, "tuning.rst"), "w") as fh:
        fh.write("\n".join(lines))


def _targets(rows):
    def mean(name, epsilon, method, col):
        sel = [r[col] for r in rows if r[:2] == (name, epsilon) and r[3] == method]
        return float(np.mean(sel)) if sel else None

    lines = [
        ".. list-table:: Targets",
        "   :header-rows: 1",
        "",
        "   * - target",
        "     - measured",
        "     - verdict",
    ]
    acc_search = mean("DPLogisticRegression", 1.0, "private search", 6)
    acc_default = mean("DPLogisticRegression", 1.0, "defaults", 6)
    if acc_search is not None:
        met = acc_search >= acc_default - 0.005
        lines += [
            "   * - DPLogisticRegression, private search at total epsilon = 1 "
            "within 0.005 test accuracy of the defaults at epsilon = 1",
            f"     - {acc_search:.4f} vs {acc_default:.4f} "
            f"(difference {acc_search - acc_default:+.4f})",
            f"     - {'**met**' if met else '**missed**'}",
        ]
    gap_search = mean("DPFERMIClassifier", 1.0, "private search", 7)
    gap_default = mean("DPFERMIClassifier", 1.0, "defaults", 7)
    if gap_search is not None:
        met = gap_search <= 0.03 and gap_default > 0.03
        if met:
            verdict = "**met**"
        elif gap_default <= 0.03:
            verdict = (
                "**not applicable**: the default weight's gap is already <= 0.03"
                + ("; the search's is too" if gap_search <= 0.03 else
                   "; the search's is not (each run trains with about half the "
                   "budget, and DP-FERMI's gap grows as epsilon shrinks)")
            )
        else:
            verdict = "**missed**"
        lines += [
            "   * - DPFERMIClassifier at total epsilon = 1: the search finds a "
            "weight with test DP gap <= 0.03 where the default weight's is not",
            f"     - search {gap_search:.4f}, default weight {gap_default:.4f}",
            f"     - {verdict}",
        ]
    lines.append("")
    return lines


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--only", choices=sorted(SETUPS), default=None)
    args = parser.parse_args()
    seeds = range(1 if args.quick else args.seeds)
    epsilons = [1.0] if args.quick else EPSILONS
    names = [args.only] if args.only else list(SETUPS)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sklearn.set_config(enable_metadata_routing=True)
        rows = run(seeds, epsilons, names)
    write_rst(rows, seeds, (time.perf_counter() - start) / 60, names)


if __name__ == "__main__":
    main()
