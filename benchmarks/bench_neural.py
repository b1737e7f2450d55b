# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""DPMLPClassifier against DPLogisticRegression and Opacus on UCI Adult,
and federated (ISRL-DP) on scikit-learn's digits.

Protocol: Adult train/test files, rows with missing values dropped, the
package's public preprocessor (:func:`sklearn_dpfair.datasets.make_adult_preprocessor`:
codebook one-hot categories, numeric columns scaled by documented census
ranges; nothing learned from the rows, so the whole pipeline is covered by
the guarantee); delta = 1e-5; epsilon in {1, 3, inf}; seeds 0..S-1; default
hyperparameters of both estimators (one hidden layer of 64 relu units for
the network), only epsilon, delta and the public label set passed. Reports
test accuracy mean +- sd and CPU fit seconds. scikit-learn's
``MLPClassifier`` (adam, same architecture) is the non-private reference.

``--opacus`` (needs ``pip install opacus==1.6.0``, a benchmark-only
dependency): the same architecture trained by Opacus 1.6 on the same split,
same epsilon (Opacus's RDP accountant calibrates its own noise multiplier;
its epsilon is also recomputed with dp-accounting), same expected batch
size and epochs (hence steps), Poisson sampling, the same constant step
size (the network's "auto" rule), clip 1. Accuracy and CPU time (process
time, one thread for both: ``OMP_NUM_THREADS=1`` and
``torch.set_num_threads(1)``) in the same process.

``--federated``: the federated network (``fit(X, y, silos=...)``, ISRL-DP)
on ``load_digits`` split as Lowy's thesis splits MNIST (Sec. 3.3.3): the
task is even vs odd, and each of 5 silos holds one (even, odd) digit pair;
against the central ``DPMLPClassifier`` at the same epsilon (a trusted
curator) and scikit-learn's ``MLPClassifier``.

``--sweep`` is the sweep that chose the "auto" step size of the network
(``sklearn_dpfair.neural._fit``): a validation split of the *training* file,
never the test file.

Usage: python benchmarks/bench_neural.py [--seeds 3] [--sweep | --opacus |
--federated] [--write]
"""

import argparse
import datetime
import os
import sys
import time
import warnings

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier

sys.path.insert(0, os.path.dirname(__file__))
from _adult import machine_description  # noqa: E402

from sklearn_dpfair import DPLogisticRegression  # noqa: E402
from sklearn_dpfair.datasets import load_adult, make_adult_preprocessor  # noqa: E402
from sklearn_dpfair.neural import DPMLPClassifier  # noqa: E402
from sklearn_dpfair.neural._fit import auto_network_learning_rate  # noqa: E402
from sklearn_dpfair.neural._network import layer_sizes, n_parameters  # noqa: E402
from sklearn_dpfair.privacy import GaussianMechanism  # noqa: E402
from sklearn_dpfair.privacy._accounting import epsilon_of  # noqa: E402

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
    rows.append(
        (
            "sklearn MLPClassifier (64 relu, adam)",
            np.inf,
            np.mean(accs),
            np.std(accs),
            np.mean(secs),
        )
    )
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
            print(
                f"eps={eps} lr={lr} r={r:.3f} lr*r={lr * r:.3f} "
                f"val acc={np.mean(accs):.4f}",
                flush=True,
            )


def opacus(seeds, epsilons=(1.0,)):
    """DPMLPClassifier against Opacus, same architecture, epsilon and schedule."""
    import torch

    from _opacus_mlp import fit_opacus_mlp

    torch.set_num_threads(1)
    X, y, Xt, yt = adult_public()
    n = X.shape[0]
    classes = np.unique(y)
    rows = []
    for eps in epsilons:
        ours, theirs = [], []
        for s in range(seeds):
            est = DPMLPClassifier(
                epsilon=eps, delta=DELTA, classes=classes, random_state=s
            )
            sec = _timed_fit(est, X, y)
            ours.append((est.score(Xt, yt), sec))
            q, steps = est.privacy_record_.sampling_probability, est.t_
            lr = auto_network_learning_rate(
                est.noise_multiplier_,
                q,
                n,
                n_parameters(layer_sizes(X.shape[1], (64,), 1)),
            )
            # Opacus's rate is 1 / len(loader): n / 20 rows per batch is q = 0.05.
            batch = -(-n // round(1 / q))
            start = time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                predict, z, rate, op_steps, op_eps = fit_opacus_mlp(
                    X,
                    y,
                    epsilon=eps,
                    delta=DELTA,
                    hidden=64,
                    epochs=est.max_iter,
                    batch_size=batch,
                    learning_rate=lr,
                    seed=s,
                )
            sec_op = time.process_time() - start
            event = GaussianMechanism(1.0, z).event(
                sampling_probability=rate, steps=op_steps
            )
            theirs.append(
                (
                    float(np.mean(predict(Xt) == yt)),
                    sec_op,
                    z,
                    rate,
                    op_steps,
                    op_eps,
                    epsilon_of(event, DELTA, "rdp"),
                )
            )
            print(
                eps,
                s,
                ours[-1],
                est.noise_multiplier_,
                q,
                steps,
                theirs[-1],
                flush=True,
            )
        rows.append((eps, ours, theirs))
    return rows


def federated(seeds, epsilons=(1.0, 3.0, 8.0, np.inf)):
    """ISRL-DP network on digits in 5 heterogeneous silos, against central."""
    X, digit = load_digits(return_X_y=True)
    X = X / 16.0  # public pixel range [0, 16]
    y = digit % 2  # even vs odd
    silo_of = digit // 2  # silo k holds digits 2k (even) and 2k + 1 (odd)
    rows = []
    for eps in epsilons:
        fed, cen = [], []
        for s in range(seeds):
            Xa, Xb, ya, yb, sa, _ = train_test_split(
                X, y, silo_of, test_size=0.3, random_state=s, stratify=digit
            )
            kw = dict(epsilon=eps, delta=DELTA, classes=[0, 1], random_state=s)
            est = DPMLPClassifier(**kw)
            start = time.process_time()
            est.fit(Xa, ya, silos=sa)
            fed.append((est.score(Xb, yb), time.process_time() - start, est.epsilon_))
            est = DPMLPClassifier(**kw)
            cen.append((est.fit(Xa, ya).score(Xb, yb), 0.0, est.epsilon_))
        rows.append((eps, fed, cen))
        print(
            eps, np.mean([f[0] for f in fed]), np.mean([c[0] for c in cen]), flush=True
        )
    ref = []
    for s in range(seeds):
        Xa, Xb, ya, yb = train_test_split(
            X, y, test_size=0.3, random_state=s, stratify=digit
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref.append(MLPClassifier((64,), random_state=s).fit(Xa, ya).score(Xb, yb))
    return rows, ref


TITLES = {
    ".. opacus-results": "Against Opacus\n--------------\n\n",
    ".. federated-results": (
        "Federated (ISRL-DP) on digits\n-----------------------------\n\n"
    ),
}

OPACUS_TEXT = """\
Same split (Adult, public preprocessor), same architecture (64 relu units,
logistic output), same epsilon = 1 and delta, same expected batch (5% of
the rows, Poisson sampling: Opacus's rate is ``1 / len(loader)``, set to
0.05 exactly), same 30 epochs (600 steps), clip 1, and the same constant
SGD step (the network's "auto" rule, 1.86 here). Opacus calibrates its own
noise multiplier with its RDP accountant; its epsilon recomputed by
dp-accounting's RDP accountant for the same multiplier, rate and steps is
given beside its own. CPU time is process time in the same process, one
thread each. Differences that remain: Opacus starts from PyTorch's default
initialization and returns the last iterate, ``DPMLPClassifier`` starts
from Glorot's and returns the average of the last half of the iterates;
Opacus reads its batches through a ``DataLoader`` over a ``TensorDataset``
(its documented usage), which is part of its time.

"""

FEDERATED_TEXT = """\
``load_digits`` (1,797 images of 8x8 pixels, scaled by the public pixel
range 16) as an offline stand-in for the thesis's MNIST (Lowy, Sec. 3.3.3):
the task is even vs odd and each of 5 silos holds one (even, odd) digit
pair, so the silos are heterogeneous; 70/30 split stratified by digit. The
federated fit is ``DPMLPClassifier(epsilon=eps).fit(X, y, silos=...)``
(every silo ``(eps, 1e-5)``-ISRL-DP in its own records against an
untrusted server: Noisy ISRL-DP minibatch SGD, the phase-length-1 case of
the thesis's FedProx-SPIDER); the central fit is the same estimator
without ``silos`` (a trusted curator holding all rows); defaults otherwise
(64 relu units, 30 epochs, q = 256 / 1,257 on the pooled rows: 148
rounds). At
epsilon = inf the central fit standardizes the columns exactly, the
federated one trains on them as given (silos share no statistics).

"""


def _replace_section(marker, body):
    """Replace the page's text from ``marker`` to the next results marker."""
    with open(OUT) as fh:
        page = fh.read()
    if marker not in page:
        page = page.rstrip("\n") + f"\n\n{marker}\n"
    head, rest = page.split(marker, 1)
    cuts = [
        rest.index(other)
        for other in (".. neural-results", ".. opacus-results", ".. federated-results")
        if other != marker and other in rest
    ]
    tail = rest[min(cuts) :] if cuts else ""
    stamp = datetime.date.today().isoformat()
    title = TITLES.get(marker, "")
    text = f"{marker}\n\n{title}Measured {stamp} on {machine_description()}. " + body
    with open(OUT, "w") as fh:
        fh.write(head + text.rstrip("\n") + "\n\n" * bool(tail) + tail)


def _table(header, lines):
    out = [".. list-table::", "   :header-rows: 1", ""]
    for row in [header, *lines]:
        out.append(f"   * - {row[0]}")
        out += [f"     - {c}" for c in row[1:]]
    return "\n".join(out) + "\n"


def _eps(eps):
    return "inf" if np.isinf(eps) else f"{eps:g}"


def write_page(rows, seeds):
    lines = [
        (name, _eps(eps), f"{acc:.4f} +- {sd:.4f}", f"{sec:.2f}")
        for name, eps, acc, sd, sec in rows
    ]
    _replace_section(
        ".. neural-results",
        f"{seeds} seeds, delta = 1e-5.\n\n"
        + _table(("Model", "epsilon", "test accuracy", "CPU s / fit"), lines),
    )


def write_opacus(rows, seeds):
    lines = []
    for eps, ours, theirs in rows:
        acc, sec = np.mean([o[0] for o in ours]), np.mean([o[1] for o in ours])
        acc_op = np.mean([t[0] for t in theirs])
        sec_op = np.mean([t[1] for t in theirs])
        t = theirs[0]
        lines.append(
            (
                _eps(eps),
                f"{acc:.4f} +- {np.std([o[0] for o in ours]):.4f}",
                f"{acc_op:.4f} +- {np.std([t[0] for t in theirs]):.4f}",
                f"{sec:.2f}",
                f"{sec_op:.2f}",
                f"{sec / sec_op:.3f}",
                f"{t[2]:.3f}, q = {t[3]:.3f}, {t[4]} steps",
                f"{t[5]:.3f} / {t[6]:.3f}",
            )
        )
    _replace_section(
        ".. opacus-results",
        f"{seeds} seeds, delta = 1e-5, one thread.\n\n"
        + OPACUS_TEXT
        + _table(
            (
                "epsilon",
                "DPMLPClassifier accuracy",
                "Opacus accuracy",
                "DPMLPClassifier CPU s",
                "Opacus CPU s",
                "CPU time ratio (ours / Opacus)",
                "Opacus noise multiplier, rate, steps",
                "Opacus epsilon: its RDP accountant / dp-accounting RDP",
            ),
            lines,
        ),
    )


def write_federated(rows, ref, seeds):
    lines = []
    for eps, fed, cen in rows:
        lines.append(
            (
                _eps(eps),
                f"{np.mean([f[0] for f in fed]):.4f} +- {np.std([f[0] for f in fed]):.4f}",
                f"{np.mean([c[0] for c in cen]):.4f} +- {np.std([c[0] for c in cen]):.4f}",
                f"{np.mean([f[1] for f in fed]):.2f}",
            )
        )
    lines.append(
        (
            "inf: MLPClassifier (adam, pooled rows)",
            "n/a",
            f"{np.mean(ref):.4f} +- {np.std(ref):.4f}",
            "n/a",
        )
    )
    _replace_section(
        ".. federated-results",
        f"{seeds} seeds (split and fit), delta = 1e-5.\n\n"
        + FEDERATED_TEXT
        + _table(
            (
                "epsilon (each silo)",
                "federated (ISRL-DP, 5 silos)",
                "central DPMLPClassifier (trusted curator)",
                "federated CPU s / fit",
            ),
            lines,
        ),
    )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--sweep", action="store_true")
    parser.add_argument("--opacus", action="store_true")
    parser.add_argument("--federated", action="store_true")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    if args.sweep:
        sweep(args.seeds)
        return
    if args.opacus:
        rows = opacus(args.seeds)
        if args.write:
            write_opacus(rows, args.seeds)
        return
    if args.federated:
        rows, ref = federated(args.seeds)
        if args.write:
            write_federated(rows, ref, args.seeds)
        return
    rows = compare(args.seeds)
    if args.write:
        write_page(rows, args.seeds)


if __name__ == "__main__":
    main()
