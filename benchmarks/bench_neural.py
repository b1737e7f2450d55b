# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""DPMLPClassifier against DPLogisticRegression on UCI Adult.

Protocol: Adult train/test files, rows with missing values dropped, the
package's public preprocessor (:func:`sklearn_dpfair.datasets.make_adult_preprocessor`:
codebook one-hot categories, numeric columns scaled by documented census
ranges; nothing learned from the rows, so the whole pipeline is covered by
the guarantee); delta = 1e-5; epsilon in {1, 3, inf}; seeds 0..S-1; default
hyperparameters of both estimators (one hidden layer of 64 relu units for
the network), only epsilon, delta and the public label set passed. Reports
test accuracy mean +- sd and CPU fit seconds. scikit-learn's
``MLPClassifier`` (adam, same architecture) is the non-private reference.

Opacus (the PyTorch DP-SGD reference) is not installed on the machine
this ran on, so the Opacus column of the docs page is pending.

``--sweep`` is the sweep that chose the "auto" step size of the network
(``sklearn_dpfair.neural._fit``): a validation split of the *training* file,
never the test file.

Usage: python benchmarks/bench_neural.py [--seeds 3] [--sweep] [--write]
"""

import argparse
import datetime
import os
import sys
import time
import warnings

import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier

sys.path.insert(0, os.path.dirname(__file__))
from _adult import machine_description  # noqa: E402

from sklearn_dpfair import DPLogisticRegression  # noqa: E402
from sklearn_dpfair.datasets import load_adult, make_adult_preprocessor  # noqa: E402
from sklearn_dpfair.neural import DPMLPClassifier  # noqa: E402
from sklearn_dpfair.neural._network import layer_sizes, n_parameters  # noqa: E402

EPSILONS = [1.0, 3.0, np.inf]
DELTA = 1e-5
OUT = os.path.join(os.path.dirname(__file__), "..", "docs", "benchmarks", "neural.rst")


def adult_public():
    """X_train, y_train, X_test, y_test through the public preprocessor."""
    train, test = load_adult(), load_adult(subset="test")
    pre = make_adult_preprocessor().fit(train.data)  # learns nothing
    return (
        pre.transform(train.data),
        train.target.to_numpy(),
        pre.transform(test.data),
        test.target.to_numpy(),
    )


def _timed_fit(est, X, y):
    start = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    return time.process_time() - start


def compare(seeds):
    X, y, Xt, yt = adult_public()
    classes = np.unique(y)  # the public label set {0, 1}
    rows = []
    models = {
        "DPMLPClassifier (64 relu)": lambda eps, s: DPMLPClassifier(
            epsilon=eps, delta=DELTA, classes=classes, random_state=s
        ),
        "DPLogisticRegression": lambda eps, s: DPLogisticRegression(
            epsilon=eps, delta=DELTA, classes=classes, random_state=s
        ),
    }
    for eps in EPSILONS:
        for name, make in models.items():
            accs, secs = [], []
            for s in range(seeds):
                est = make(eps, s)
                secs.append(_timed_fit(est, X, y))
                accs.append(est.score(Xt, yt))
            rows.append((name, eps, np.mean(accs), np.std(accs), np.mean(secs)))
            print(rows[-1], flush=True)
    accs, secs = [], []
    for s in range(seeds):
        est = MLPClassifier((64,), random_state=s, max_iter=30)
        secs.append(_timed_fit(est, X, y))
        accs.append(est.score(Xt, yt))
    rows.append(("sklearn MLPClassifier (64 relu, adam)", np.inf, np.mean(accs),
                 np.std(accs), np.mean(secs)))
    print(rows[-1], flush=True)
    return rows


def sweep(seeds):
    """Validation accuracy of constant step sizes, with the noise ratio r."""
    X, y, _, _ = adult_public()
    Xa, Xv, ya, yv = train_test_split(X, y, test_size=0.25, random_state=0)
    classes = np.unique(y)
    n_params = n_parameters(layer_sizes(X.shape[1], (64,), 1))
    for eps in [1.0, 3.0, np.inf]:
        for lr in [0.1, 0.3, 1.0, 2.0, 4.0]:
            accs, r = [], 0.0
            for s in range(seeds):
                est = DPMLPClassifier(
                    epsilon=eps, classes=classes, random_state=s, learning_rate=lr
                )
                _timed_fit(est, Xa, ya)
                accs.append(est.score(Xv, yv))
                q = est.privacy_record_.sampling_probability or 1.0
                r = est.noise_multiplier_ * np.sqrt(n_params) / (q * Xa.shape[0])
            print(f"eps={eps} lr={lr} r={r:.3f} lr*r={lr * r:.3f} "
                  f"val acc={np.mean(accs):.4f}", flush=True)


def write_page(rows, seeds):
    table = [
        "   * - Model",
        "     - epsilon",
        "     - test accuracy",
        "     - CPU s / fit",
    ]
    for name, eps, acc, sd, sec in rows:
        table += [
            f"   * - {name}",
            f"     - {'inf' if np.isinf(eps) else f'{eps:g}'}",
            f"     - {acc:.4f} +- {sd:.4f}",
            f"     - {sec:.2f}",
        ]
    table += [
        "   * - Opacus DP-SGD (same architecture, epsilon, epochs)",
        "     - 1, 3",
        "     - pending (Opacus not installed on the benchmark machine)",
        "     - pending",
    ]
    marker = ".. neural-results"
    with open(OUT) as fh:
        page = fh.read()
    head = page.split(marker)[0]
    stamp = datetime.date.today().isoformat()
    body = (
        f"{marker}\n\n"
        f"Measured {stamp} on {machine_description()}; {seeds} seeds, "
        "delta = 1e-5.\n\n"
        ".. list-table::\n   :header-rows: 1\n\n" + "\n".join(table) + "\n"
    )
    with open(OUT, "w") as fh:
        fh.write(head + body)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--sweep", action="store_true")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    if args.sweep:
        sweep(args.seeds)
        return
    rows = compare(args.seeds)
    if args.write:
        write_page(rows, args.seeds)


if __name__ == "__main__":
    main()
