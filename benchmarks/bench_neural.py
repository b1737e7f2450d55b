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

``--spider``: on the same digits silos, the federated network trained by
ISRL-DP minibatch SGD (the default) against ISRL-DP FedProx-SPIDER
(``silo_algorithm="spider"``, Lowy's thesis, Alg. 4), whose phase length
and smoothness are chosen per epsilon and seed on a validation split of
the training part (never the test part); the grid includes ``q = 1``,
which is minibatch SGD.

``--sweep`` is the sweep that chose the "auto" step size of the network
(``sklearn_dpfair.neural._fit``): a validation split of the *training* file,
never the test file.

``--frontier``: the fairness frontier on Adult (split and metrics of
``bench_fermi.py``, whose loaders and helpers it imports) with two
preprocessings, the package's public preprocessor and ``standard_all``
(``StandardScaler`` on every column): ``FERMIClassifier`` linear and with
``hidden_layer_sizes=(64,)`` over ``disparity_bound`` (DP and EO),
fairlearn's ``ExponentiatedGradient`` around ``HistGradientBoostingClassifier``,
``ThresholdOptimizer`` (which uses the group at predict time), unconstrained
references, and ``DPFERMIClassifier`` linear and with a network at
epsilon 1 and 3. Rows are merged into ``benchmarks/neural_frontier.json``
(``--methods``, ``--reps``, ``--constraints``, ``--bounds`` run a part;
``--report`` writes ``docs/benchmarks/neural_frontier.rst`` and its plot
from the JSON; ``--quick`` is a smoke run into a temporary file).

Usage: python benchmarks/bench_neural.py [--seeds 3] [--sweep | --opacus |
--federated | --spider | --frontier [--quick] [--report]] [--write]
"""

import argparse
import datetime
import os
import sys
import tempfile
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


# -- federated SPIDER against federated minibatch SGD on digits ----------------

# (phase length q, smoothness beta); q = 1 is minibatch SGD whatever beta.
SPIDER_GRID = [(1, 1.0)] + [(q, b) for q in (4, 8) for b in (0.1, 0.3, 1.0)]


def _digits_silos():
    X, digit = load_digits(return_X_y=True)
    # Public pixel range; even vs odd; silo k holds digits 2k and 2k + 1.
    return X / 16.0, digit % 2, digit // 2, digit


def spider(seeds, epsilons=(1.0, 3.0, 8.0)):
    """ISRL-DP MB-SGD vs FedProx-SPIDER (q, beta chosen on validation)."""
    X, y, silo_of, digit = _digits_silos()
    rows = []
    for eps in epsilons:
        cells = {"mb": [], "spider": [], "default": [], "chosen": []}
        for s in range(seeds):
            Xa, Xb, ya, yb, sa, _, da, _ = train_test_split(
                X, y, silo_of, digit, test_size=0.3, random_state=s, stratify=digit
            )
            # Validation: a quarter of the training part, same silos.
            Xt, Xv, yt, yv, st, _ = train_test_split(
                Xa, ya, sa, test_size=0.25, random_state=s, stratify=da
            )
            kw = {"epsilon": eps, "delta": DELTA, "classes": [0, 1], "random_state": s}

            def make(q, beta, kw=kw):
                return DPMLPClassifier(
                    **kw,
                    silo_algorithm="spider",
                    spider_period=q,
                    spider_smoothness=beta,
                )

            val = {
                qb: make(*qb).fit(Xt, yt, silos=st).score(Xv, yv) for qb in SPIDER_GRID
            }
            best = max(val, key=val.get)
            start = time.process_time()
            mb = DPMLPClassifier(**kw).fit(Xa, ya, silos=sa)
            mb_sec = time.process_time() - start
            start = time.process_time()
            sp = make(*best).fit(Xa, ya, silos=sa)
            sp_sec = time.process_time() - start
            default = DPMLPClassifier(**kw, silo_algorithm="spider")
            default.fit(Xa, ya, silos=sa)
            cells["mb"].append((mb.score(Xb, yb), mb_sec, mb.epsilon_))
            cells["spider"].append((sp.score(Xb, yb), sp_sec, sp.epsilon_))
            cells["default"].append((default.score(Xb, yb), 0.0, default.epsilon_))
            cells["chosen"].append(best)
        rows.append((eps, cells))
        print(
            eps,
            *(np.mean([c[0] for c in cells[k]]) for k in ("mb", "spider", "default")),
            cells["chosen"],
            flush=True,
        )
    return rows


SPIDER_TEXT = """\
Same digits silos, split and defaults as above (64 relu units, 30 epochs,
148 rounds). MB-SGD is ``DPMLPClassifier(epsilon=eps).fit(X, y,
silos=...)``; SPIDER is the same with ``silo_algorithm="spider"`` (ISRL-DP
FedProx-SPIDER, Lowy's thesis, Alg. 4: every ``q``-th round the noisy
clipped gradient, the rounds between the noisy mean of each record's
gradient change clipped to ``min(beta ||w_r - w_(r-1)||, 2C)``; each silo's
event composes both kinds of rounds and is calibrated to ``(eps, 1e-5)``
by dp-accounting). For each epsilon and seed, ``(q, beta)`` is chosen
among ``q = 1`` (minibatch SGD) and ``q in {4, 8}`` x ``beta in {0.1, 0.3,
1}`` by accuracy on a validation quarter of the training part (stratified
by digit; the test part is never read), then refitted on the whole training
part. "SPIDER, defaults" is ``q = 4, beta = 0.3`` without the search. All
fits on one thread.

"""


def write_spider(rows, seeds):
    def cell(values):
        acc = [v[0] for v in values]
        return f"{np.mean(acc):.4f} +- {np.std(acc):.4f}"

    lines = []
    for eps, cells in rows:
        lines.append(
            (
                _eps(eps),
                cell(cells["mb"]),
                cell(cells["spider"]),
                cell(cells["default"]),
                ", ".join(f"({q}, {b:g})" for q, b in cells["chosen"]),
                (
                    f"{np.mean([v[1] for v in cells['mb']]):.2f} / "
                    f"{np.mean([v[1] for v in cells['spider']]):.2f}"
                ),
            )
        )
    _replace_section(
        ".. spider-results",
        f"{seeds} seeds (split and fit), delta = 1e-5.\n\n"
        + SPIDER_TEXT
        + _table(
            (
                "epsilon (each silo)",
                "ISRL-DP MB-SGD",
                "ISRL-DP FedProx-SPIDER, (q, beta) chosen on validation",
                "SPIDER, defaults (4, 0.3)",
                "chosen (q, beta) per seed",
                "CPU s / fit, MB-SGD / SPIDER",
            ),
            lines,
        ),
    )


# -- frontier: MLP FERMI against linear FERMI and fairlearn on Adult ----------

FRONTIER_BOUNDS = [0.05, 0.02, 0.012, 0.008]
FRONTIER_DP_EPSILONS = [1.0, 3.0]
FRONTIER_DP_BOUND = 0.012
HIDDEN = (64,)
# ExponentiatedGradient with a boosted base model refits the booster at every
# iteration: 10 iterations (fairlearn's default is 50) keep one fit near a
# minute on the shared 2-core machine.
EG_MAX_ITER = 10
HGB_PARAMS = {"max_iter": 100, "random_state": 0}
FRONTIER_REPS = {
    "public": (
        "the package's public preprocessor (``datasets.make_adult_preprocessor``: "
        "codebook one-hot categories, numeric columns scaled by documented census "
        "ranges, ``fnlwgt`` dropped; learns nothing from the rows)"
    ),
    "standard_all": (
        "``standard_all`` of ``bench_fermi.py``: numeric columns standardized and "
        "categories one-hot encoded (fitted on the training file), then "
        "scikit-learn's ``StandardScaler`` on every column, one-hot included "
        "(statistics of the training rows)"
    ),
}
FRONTIER_OUT = os.path.join(os.path.dirname(__file__), "neural_frontier.json")
FRONTIER_PAGE = os.path.join(
    os.path.dirname(__file__), "..", "docs", "benchmarks", "neural_frontier.rst"
)
FRONTIER_METHODS = ("ref", "linear", "to", "dp", "eg", "mlp", "dpmlp")


def frontier_data(rep):
    """Adult in representation ``rep``: the split of ``bench_fermi.py``."""
    from bench_fermi import load_representation

    if rep == "standard_all":
        return load_representation("standard_all")
    train, test = load_adult(), load_adult(subset="test")
    pre = make_adult_preprocessor().fit(train.data)  # learns nothing
    return (
        pre.transform(train.data),
        train.target.to_numpy(),
        train.sensitive["sex"].astype(str).to_numpy(),
        pre.transform(test.data),
        test.target.to_numpy(),
        test.sensitive["sex"].astype(str).to_numpy(),
    )


def _fit_eval(make, seeds, data, predict=None, **fit_kw):
    """Fit ``make(seed)`` per seed; mean and sd of the test metrics and times.

    Returns the aggregate and the last fitted estimator (for its attributes).
    """
    from bench_fermi import aggregate, evaluate, timed_fit

    X_tr, y_tr, _, X_te, y_te, s_te = data
    res, extra = [], []
    for seed in seeds:
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            est, sec, cpu = timed_fit(make(seed), X_tr, y_tr, **fit_kw)
        pred = predict(est, X_te, s_te) if predict else est.predict(X_te)
        res.append({**evaluate(pred, y_te, s_te), "time": sec, "cpu": cpu})
        info = {}
        if hasattr(est, "fairness_weight_"):
            info["weight"] = float(est.fairness_weight_)
            info["train_disparity"] = getattr(est, "training_disparity_", None)
            met = getattr(est, "bound_met_", None)
            info["bound_met"] = None if met is None else bool(met)
            info["warned"] = any("is not met" in str(w.message) for w in said)
        if hasattr(est, "epsilon_"):
            info["epsilon"] = float(est.epsilon_)
        extra.append(info)
    row = aggregate(res)
    row["seeds"] = list(seeds)
    for key in ("weight", "train_disparity", "epsilon"):
        vals = [e[key] for e in extra if e.get(key) is not None]
        if vals:
            row[key] = float(np.mean(vals))
    if any("bound_met" in e for e in extra):
        row["bound_met"] = [e.get("bound_met") for e in extra]
        row["warned"] = [e.get("warned") for e in extra]
    return row


def _alpha_tag(alpha):
    return f" alpha={alpha:g}" if alpha else ""


def select_alpha(
    alphas, bound=FRONTIER_DP_BOUND, rep="public", widths=None, linear_bounds=None
):
    """Choose the network's L2 weight (and width) on a validation split of the
    TRAINING file (never the test file); see :func:`_alpha_choices`.

    Linear FERMI at the same bound is fitted on the same split as the
    validation reference (and, with ``linear_bounds``, at each of those
    bounds too: the target reads linear FERMI's least error over bounds);
    every score also records the fit's training error
    on the 75% it was fitted on, its chosen weight, training gap, L-BFGS
    iterations and how many ``ConvergenceWarning`` it raised (what the
    question of a default ``alpha`` for networks needs).
    """
    from bench_fermi import evaluate, timed_fit
    from sklearn.exceptions import ConvergenceWarning

    from sklearn_dpfair import FERMIClassifier

    X, y, s = frontier_data(rep)[:3]  # the test rows are not used
    Xa, Xv, ya, yv, sa, sv = train_test_split(
        X, y, s, test_size=0.25, random_state=0, stratify=y
    )

    def score(est, **tag):
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            est, sec, cpu = timed_fit(est, Xa, ya, sensitive_features=sa)
        row = {
            **tag,
            **evaluate(est.predict(Xv), yv, sv),
            "train_error": float(np.mean(est.predict(Xa) != ya)),
            "weight": float(est.fairness_weight_),
            "train_disparity": est.training_disparity_,
            "n_full_batch_iter": int(est.n_full_batch_iter_),
            "convergence_warnings": sum(
                issubclass(w.category, ConvergenceWarning) for w in said
            ),
            "cpu": cpu,
        }
        print(f"[{rep}] validation {row}", flush=True)
        return row

    linear = score(FERMIClassifier(disparity_bound=bound, random_state=0))
    linears = [
        linear
        if b == bound
        else score(FERMIClassifier(disparity_bound=b, random_state=0), bound=b)
        for b in linear_bounds or []
    ]
    for row, b in zip(linears, linear_bounds or []):
        row.setdefault("bound", b)
    scores = []
    for width in widths or [HIDDEN[0]]:
        for alpha in alphas:
            scores.append(
                score(
                    FERMIClassifier(
                        disparity_bound=bound,
                        hidden_layer_sizes=(width,),
                        alpha=alpha,
                        random_state=0,
                    ),
                    alpha=alpha,
                    width=width,
                )
            )
    return {
        "rep": rep,
        "bound": bound,
        "linear": linear,
        **({"linear_bounds": linears} if linears else {}),
        "scores": scores,
        **_alpha_choices(scores, bound),
    }


def _alpha_choices(scores, bound):
    """The least validation error (``chosen``: every fit's *training* gap is
    already bounded, and a validation gap of ~7,500 rows has a standard error
    about 0.01, too noisy to filter on), and the same among the alphas whose
    validation gap is at most the bound (``chosen_gap_filtered``, the rule
    first written, reported beside it)."""
    ok = [r for r in scores if r["dp"] <= bound] or scores
    best = min(scores, key=lambda r: r["error"])
    return {
        "chosen": best["alpha"],
        "chosen_width": best.get("width", HIDDEN[0]),
        "chosen_gap_filtered": min(ok, key=lambda r: r["error"])["alpha"],
    }


def _frontier_rows(
    rep,
    methods,
    constraints,
    bounds,
    seeds,
    dp_seeds,
    mlp_alpha=0.0,
    mlp_width=HIDDEN[0],
):
    """Yield the rows of one representation, one at a time."""
    from fairlearn.postprocessing import ThresholdOptimizer
    from fairlearn.reductions import (
        DemographicParity,
        EqualizedOdds,
        ExponentiatedGradient,
    )
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression

    from bench_fermi import DPFERMI_PARAMS, FAIRLEARN_SEED

    from sklearn_dpfair import DPFERMIClassifier, FERMIClassifier

    data = frontier_data(rep)
    s_tr = data[2]
    fair = {"sensitive_features": s_tr}
    names = {"dp": "demographic_parity", "eo": "equalized_odds"}
    moments = {"dp": DemographicParity, "eo": EqualizedOdds}

    def row(method, bound, agg, **info):
        return {"method": method, "bound": bound, **info, **agg}

    if "ref" in methods:
        yield row(
            "LogisticRegression (unconstrained)",
            None,
            _fit_eval(lambda s: LogisticRegression(max_iter=3000), seeds[:1], data),
        )
        yield row(
            "HistGradientBoosting (unconstrained)",
            None,
            _fit_eval(
                lambda s: HistGradientBoostingClassifier(**HGB_PARAMS), seeds[:1], data
            ),
        )
        yield row(
            "MLPClassifier (64,) (unconstrained)",
            None,
            _fit_eval(
                lambda s: MLPClassifier(HIDDEN, max_iter=30, random_state=s),
                seeds,
                data,
            ),
        )
    for con in constraints:
        name = names[con]
        if "to" in methods:
            for base, label in (
                (lambda: HistGradientBoostingClassifier(**HGB_PARAMS), "HGB"),
                (lambda: LogisticRegression(max_iter=3000), "LR"),
            ):
                yield row(
                    f"ThresholdOptimizer({label}) [{con}] GROUP AT PREDICT TIME",
                    None,
                    _fit_eval(
                        lambda s, base=base, name=name: ThresholdOptimizer(
                            estimator=base(),
                            constraints=name,
                            predict_method="predict_proba",
                        ),
                        seeds[:1],
                        data,
                        predict=lambda est, X, s: est.predict(
                            X, sensitive_features=s, random_state=FAIRLEARN_SEED
                        ),
                        **fair,
                    ),
                )
        for bound in bounds:
            if "linear" in methods:
                yield row(
                    f"FERMI linear [{con}]",
                    bound,
                    _fit_eval(
                        lambda s, name=name, bound=bound: FERMIClassifier(
                            constraint=name, disparity_bound=bound, random_state=s
                        ),
                        seeds,
                        data,
                        **fair,
                    ),
                )
            if "mlp" in methods:
                yield row(
                    f"FERMI MLP ({mlp_width},){_alpha_tag(mlp_alpha)} [{con}]",
                    bound,
                    _fit_eval(
                        lambda s, name=name, bound=bound: FERMIClassifier(
                            constraint=name,
                            disparity_bound=bound,
                            hidden_layer_sizes=(mlp_width,),
                            alpha=mlp_alpha,
                            random_state=s,
                        ),
                        seeds,
                        data,
                        **fair,
                    ),
                )
            if "eg" in methods:
                yield row(
                    f"ExponentiatedGradient(HGB) [{con}]",
                    bound,
                    _fit_eval(
                        lambda s, con=con, bound=bound: ExponentiatedGradient(
                            HistGradientBoostingClassifier(**HGB_PARAMS),
                            moments[con](difference_bound=bound),
                            max_iter=EG_MAX_ITER,
                        ),
                        seeds[:1],
                        data,
                        predict=lambda est, X, s: est.predict(
                            X, random_state=FAIRLEARN_SEED
                        ),
                        **fair,
                    ),
                )
    # DP-FERMI rows: demographic parity, the package's defaults (those of
    # bench_fermi's DP-FERMI rows), declared classes and groups.
    public = {k: DPFERMI_PARAMS[k] for k in ("delta", "classes", "groups")}
    for kind, hidden in (("dp", ()), ("dpmlp", HIDDEN)):
        if kind not in methods or "dp" not in constraints:
            continue
        label = "linear" if not hidden else "MLP (64,)"
        extra = {} if not hidden else {"hidden_layer_sizes": hidden}
        for eps in FRONTIER_DP_EPSILONS:
            for bound in (None, FRONTIER_DP_BOUND):
                yield row(
                    f"DP-FERMI {label} [dp] eps={eps:g}",
                    bound,
                    _fit_eval(
                        lambda s, eps=eps, bound=bound, extra=extra: DPFERMIClassifier(
                            epsilon=eps,
                            disparity_bound=bound,
                            random_state=s,
                            **public,
                            **extra,
                        ),
                        dp_seeds,
                        data,
                        **fair,
                    ),
                    epsilon_target=eps,
                )


def _merge_row(out, rep, new):
    """Add ``new`` to ``out`` (JSON), replacing the row of the same method and
    bound; under a lock and re-read, so that runs of other methods may go on
    at the same time."""
    import fcntl
    import json

    lock_path = os.path.join(tempfile.gettempdir(), os.path.basename(out) + ".lock")
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        results = {}
        if os.path.exists(out):
            with open(out) as fh:
                results = json.load(fh)
        rows = results.setdefault(rep, [])
        rows[:] = [
            r
            for r in rows
            if (r["method"], r["bound"]) != (new["method"], new["bound"])
        ] + [new]
        with open(out, "w") as fh:
            json.dump(results, fh, indent=1)


def frontier(
    reps,
    methods,
    constraints,
    bounds,
    seeds,
    dp_seeds,
    out,
    mlp_alpha=0.0,
    mlp_width=HIDDEN[0],
):
    """Run the frontier rows; merge each into ``out`` (JSON) as it comes."""
    for rep in reps:
        for new in _frontier_rows(
            rep, methods, constraints, bounds, seeds, dp_seeds, mlp_alpha, mlp_width
        ):
            new["measured"] = datetime.datetime.now(datetime.UTC).isoformat(
                timespec="minutes"
            )
            _merge_row(out, rep, new)
            print(
                f"[{rep}] {new['method']} bound={new['bound']}: error "
                f"{new['error']:.4f} DP {new['dp']:.4f} EO {new['eo']:.4f} "
                f"wall {new['time']:.1f} s CPU {new['cpu']:.1f} s",
                flush=True,
            )


FRONTIER_TARGET = {"gap": 0.012, "margin": 0.003}

FRONTIER_INTRO = """\
Written by ``python benchmarks/bench_neural.py --frontier`` (rows merged
into ``benchmarks/neural_frontier.json``; ``--methods``, ``--reps`` and
``--constraints`` run a part, ``--report`` rewrites this page and its plot
from the JSON, ``--quick`` is a smoke run of about a minute written to a
temporary file, without the ExponentiatedGradient and network FERMI rows). Every row uses ``OMP_NUM_THREADS=1``; wall and CPU seconds
of one fit are measured in the same process (the 2-core machine is shared
with other jobs: the CPU time is the one their load does not move).

Split and metrics are those of :doc:`fermi` (``bench_fermi.py``): the
official Adult train (30,162 rows) and test (15,060 rows) files with
missing rows dropped, sensitive attribute ``sex`` (not a feature), test
error and fairlearn's ``demographic_parity_difference`` /
``equalized_odds_difference`` of the hard test predictions (bench_fermi's
``evaluate``). The target: **MLP FERMI beats
linear FERMI's test error by at least 0.003 at test DP gap <= 0.012**.

Two preprocessings (the same rows, the same split):

* ``public``: {public}. Nothing is learned from the rows, so for the
  private rows the whole pipeline is inside the privacy guarantee.
* ``standard_all``: {standard_all}. The means and standard deviations are
  statistics of the private training rows computed without noise: the
  DP-FERMI numbers on this preprocessing are **outside** the guarantee (the
  scaling is not accounted). For the non-private methods the question is
  moot.

Methods. ``FERMI linear`` is ``FERMIClassifier(constraint=c,
disparity_bound=b)`` (the package's defaults otherwise, as in
``bench_fermi.py``'s frontier); ``FERMI MLP (64,)`` the same with
``hidden_layer_sizes=(64,)``; both choose the fairness weight and one
decision threshold on the *training* set so that the training gap is at
most ``b``. ``ExponentiatedGradient(HGB)`` is fairlearn's reduction with
``HistGradientBoostingClassifier({hgb})`` as base model and
``DemographicParity`` / ``EqualizedOdds(difference_bound=b)``, default
``eps``, ``max_iter={eg_iter}`` (fairlearn's default is 50; every
iteration refits the booster) and its randomized ``predict``
(``random_state=0``). ``ThresholdOptimizer`` post-processes a
HistGradientBoosting (or a logistic) model and **uses the group at predict
time** (a different, stronger kind of model: it cannot serve where the
group may not be read when predicting). Unconstrained references:
``LogisticRegression``, ``HistGradientBoostingClassifier({hgb})`` and
scikit-learn's ``MLPClassifier((64,), max_iter=30)`` (adam, as in the
first page of :doc:`neural`). ``DP-FERMI`` rows are
``DPFERMIClassifier(epsilon=e, delta=1e-5)`` with declared classes and
groups and the package's defaults otherwise (the settings of
``bench_fermi.py``'s DP-FERMI rows), demographic parity, either at the
default ``fairness_weight=8`` (bound "-") or with
``disparity_bound={dp_bound}`` (the weight chosen privately inside the same
epsilon); the MLP version adds ``hidden_layer_sizes=(64,)``; {dp_seeds}
seeds (``random_state`` 0..), mean +- sd (seeded fits are experiments, not
releases). The frontier rows use one seed (``random_state=0``) unless a
spread is shown; the train gap is the fit's own ``training_disparity_`` (for DP-FERMI its noisy
released value), ``bound met`` its ``bound_met_``.
"""


def _cell(r, key):
    sd = r.get(key + "_std", 0.0)
    if len(r.get("seeds", [0])) > 1:
        return f"{r[key]:.4f} +- {sd:.4f}"
    return f"{r[key]:.4f}"


def _best_under(rows, method, gap_key, gap):
    ok = [r for r in rows if r["method"] == method and r[gap_key] <= gap]
    return min(ok, key=lambda r: r["error"]) if ok else None


def frontier_verdict(rows, mlp="FERMI MLP (64,) [dp]"):
    """``(text, met)`` of the target on one representation's rows."""
    gap = FRONTIER_TARGET["gap"]
    lin = _best_under(rows, "FERMI linear [dp]", "dp", gap)
    net = _best_under(rows, mlp, "dp", gap)
    if lin is None:
        return "no linear FERMI row at test DP gap <= 0.012", None
    text = (
        f"linear FERMI: error {lin['error']:.4f} at test DP gap {lin['dp']:.4f} "
        f"(bound {lin['bound']:g})"
    )
    name = mlp.replace(" [dp]", "")
    if net is None:
        have = any(r["method"] == mlp for r in rows)
        return text + (
            f"; {name}: no row at test DP gap <= 0.012"
            if have
            else f"; {name}: pending"
        ), (False if have else None)
    diff = lin["error"] - net["error"]
    text += (
        f"; {name}: error {net['error']:.4f} at test DP gap {net['dp']:.4f} "
        f"(bound {net['bound']:g}); linear minus network {diff:+.4f}"
    )
    return text, diff >= FRONTIER_TARGET["margin"]


def _order(r):
    kinds = [
        "(unconstrained)",
        "ThresholdOptimizer",
        "FERMI linear",
        "FERMI MLP",
        "ExponentiatedGradient",
        "DP-FERMI linear",
        "DP-FERMI MLP",
    ]
    con = 1 if "[eo]" in r["method"] else 0
    kind = next((i for i, k in enumerate(kinds) if k in r["method"]), len(kinds))
    return (
        kind >= 1 and kind <= 4 and con,
        kind,
        r["method"],
        -(r["bound"] if r["bound"] is not None else 1.0),
    )


def write_frontier(out):
    import json

    with open(out) as fh:
        results = json.load(fh)
    selection = results.pop("_alpha_selection", [])
    from bench_fermi import REPRESENTATIONS

    assert "StandardScaler on every column" in REPRESENTATIONS["standard_all"]
    stamp = max(r["measured"] for rows in results.values() for r in rows)[:10]
    dp_seeds = max(
        (
            len(r["seeds"])
            for rows in results.values()
            for r in rows
            if r["method"].startswith("DP-FERMI")
        ),
        default=0,
    )
    lines = [
        "Fairness frontier with a network: FERMI (MLP) on UCI Adult",
        "==========================================================",
        "",
        f"Measured up to {stamp} on {machine_description()}.",
        "",
        FRONTIER_INTRO.format(
            public=FRONTIER_REPS["public"],
            standard_all=FRONTIER_REPS["standard_all"],
            hgb=", ".join(f"{k}={v}" for k, v in HGB_PARAMS.items()),
            eg_iter=EG_MAX_ITER,
            dp_bound=FRONTIER_DP_BOUND,
            dp_seeds=dp_seeds,
        ),
    ]
    verdicts = []
    for rep, rows in results.items():
        # Width 64 first (the first selection's rows), other widths after.
        nets = sorted(
            {
                r["method"]
                for r in rows
                if r["method"].startswith("FERMI MLP") and r["method"].endswith("[dp]")
            },
            key=lambda m: (not m.startswith("FERMI MLP (64,)"), m),
        ) or ["FERMI MLP (64,) [dp]"]
        verdicts += [(rep, *frontier_verdict(rows, net)) for net in nets]
    lines += [
        (
            ".. list-table:: Target: MLP FERMI's test error at least 0.003 below "
            "linear FERMI's at test DP gap <= 0.012 (least error over the bounds)"
        ),
        "   :header-rows: 1",
        "",
        "   * - preprocessing",
        "     - measured",
        "     - verdict",
    ]
    for rep, text, met in verdicts:
        word = "pending" if met is None else "**met**" if met else "**missed**"
        lines += [f"   * - ``{rep}``", f"     - {text}", f"     - {word}"]
    lines += [""]
    for sel in selection:
        sel.update(_alpha_choices(sel["scores"], sel["bound"]))
        lines += [_selection_text(sel, results.get(sel["rep"], [])), ""]
    lines += [FRONTIER_READING, ""]
    if any(met is None for _, _, met in verdicts) or not any(
        r["method"].startswith("DP-FERMI MLP")
        for rows in results.values()
        for r in rows
    ):
        lines += [FRONTIER_PENDING, ""]
    lines += [
        ".. image:: neural_frontier.png",
        "   :alt: test error against test DP and EO gaps on Adult",
        "",
    ]
    for rep, rows in results.items():
        lines += [
            f".. list-table:: ``{rep}``",
            "   :header-rows: 1",
            "",
            "   * - method",
            "     - bound",
            "     - test error",
            "     - test DP gap",
            "     - test EO gap",
            "     - train gap",
            "     - bound met",
            "     - weight",
            "     - fit (s)",
            "     - CPU (s)",
        ]
        for r in sorted(rows, key=_order):
            met = r.get("bound_met")
            met = "" if met is None else ", ".join(str(m) for m in met)
            if len(met) > 20:
                met = f"{sum(m is True for m in r['bound_met'])}/{len(r['bound_met'])}"
            lines += [
                f"   * - {r['method']}",
                f"     - {'-' if r['bound'] is None else format(r['bound'], 'g')}",
                f"     - {_cell(r, 'error')}",
                f"     - {_cell(r, 'dp')}",
                f"     - {_cell(r, 'eo')}",
                f"     - {_fmt_opt(r.get('train_disparity'))}",
                f"     - {met}",
                f"     - {_fmt_opt(r.get('weight'), '.3g')}",
                f"     - {r['time']:.2f}",
                f"     - {r['cpu']:.2f}",
            ]
        lines.append("")
    with open(FRONTIER_PAGE, "w") as fh:
        fh.write("\n".join(lines))
    plot_frontier(results)


def _selection_text(sel, rows=()):
    """The paragraph of one validation choice of the network's settings
    (``rows``: the representation's test rows, read by a selection made after
    a test result, whose paragraph gives its own test verdict)."""

    def setting(r):
        width = f"width {r['width']}, " if r.get("width", HIDDEN[0]) != HIDDEN[0] else ""
        return f"{width}alpha {r['alpha']:g}"

    def numbers(r):
        text = f"error {r['error']:.4f}, DP gap {r['dp']:.4f}"
        if "train_error" in r:
            text += (
                f" (training error {r['train_error']:.4f}, weight {r['weight']:.3g},"
                f" ConvergenceWarnings {r['convergence_warnings']})"
            )
        return text

    scores = "; ".join(f"{setting(r)}: {numbers(r)}" for r in sel["scores"])
    head = (
        f"The network's settings of the ``alpha=`` rows on ``{sel['rep']}`` were "
        f"chosen on a validation split of the *training* file (75/25, stratified, "
        f"``disparity_bound={sel['bound']:g}``, seed 0; the test file is not "
        f"read): "
    )
    if sel.get("after_test"):
        return _second_selection_text(sel, rows, numbers)
    if sel.get("extra"):
        return (
            f"Further fits on the same validation split of ``{sel['rep']}``, made "
            "after its choice for the question of a default ``alpha`` for "
            f"networks (not used for any row): linear FERMI {numbers(sel['linear'])};"
            f" network {scores}."
        )
    if sel["rep"] == "public":
        return (
            head + f"{scores}. Chosen: {sel['chosen']:g}, the least validation "
            "error. The rule first written also asked for a validation DP gap <= "
            f"the bound and would have chosen {sel['chosen_gap_filtered']:g}; it "
            "was dropped after these validation numbers were seen (never a test "
            "number), because every fit already bounds its *training* gap and a "
            "validation gap on 7,541 rows is noise at the third decimal (its "
            "standard error is about 0.01)."
        )
    lin = sel["linear"]
    return (
        head + f"linear FERMI {numbers(lin)}; network (width 64 unless said) "
        f"{scores}. The rule, written before these numbers were seen: the least "
        "validation error (the rule of ``public``; the choice among the settings "
        "whose validation gap is at most the bound, reported beside it: "
        f"alpha {sel['chosen_gap_filtered']:g}); widths 32 and 128 only if the "
        "chosen network's validation error were not 0.003 below linear FERMI's. "
        f"Chosen: width {sel['chosen_width']}, alpha {sel['chosen']:g}."
    )


def _second_selection_text(sel, rows, numbers):
    """The paragraph of a selection made after the first one's test miss."""
    linear = "; ".join(
        f"bound {r['bound']:g}: {numbers(r)}" for r in sel["linear_bounds"]
    )
    best = min(sel["linear_bounds"], key=lambda r: r["error"])
    grid = sorted({r["width"] for r in sel["scores"]})
    alphas = sorted({r["alpha"] for r in sel["scores"]})
    text = (
        f"A second selection on ``{sel['rep']}``, made **after** the test miss of "
        "the first was known (so the test file has now been read twice for this "
        "target): the same validation split and bound "
        f"(``disparity_bound={sel['bound']:g}``), the grid of widths "
        f"{', '.join(map(str, grid))} x alpha {', '.join(f'{a:g}' for a in alphas)}"
        " (the first choice refitted among them), and its rule fixed before any of "
        "its numbers was seen: the least validation error. Linear FERMI on the "
        f"same split, the reference (its least error over bounds, "
        f"{best['error']:.4f} at bound {best['bound']:g}): {linear}. Network: "
        + "; ".join(
            f"width {r['width']}, alpha {r['alpha']:g}: {numbers(r)}"
            for r in sel["scores"]
        )
        + f". Chosen: width {sel['chosen_width']}, alpha {sel['chosen']:g}"
    )
    chosen = min(sel["scores"], key=lambda r: r["error"])
    runner = min(
        (r for r in sel["scores"] if r is not chosen), key=lambda r: r["error"]
    )
    n_val = 7541  # the validation quarter of the 30,162 training rows
    text += (
        f" ({best['error'] - chosen['error']:.4f} below linear FERMI's least "
        f"validation error; {round((runner['error'] - chosen['error']) * n_val)} "
        f"validation rows ahead of the next, width {runner['width']}, alpha "
        f"{runner['alpha']:g}: differences well inside the validation error's "
        f"standard error, about "
        f"{np.sqrt(chosen['error'] * (1 - chosen['error']) / n_val):.3f})"
    )
    # The first selection's choice on standard_all: width 64, alpha 0.01.
    if sel["chosen_width"] == HIDDEN[0] and sel["chosen"] == 0.01:
        return text + ", the first choice again: no test run was made."
    mlp = f"FERMI MLP ({sel['chosen_width']},){_alpha_tag(sel['chosen'])} [dp]"
    verdict, met = frontier_verdict(rows, mlp)
    word = "pending" if met is None else "met" if met else "missed"
    return text + f". Its test rows (below): {verdict}; the target is {word}."


def _fmt_opt(v, spec=".4f"):
    return "" if v is None else format(v, spec)


# (method without its constraint tag, label, matplotlib format, colour)
FRONTIER_STYLES = [
    ("FERMI linear", "FERMI linear", "o-", "C0"),
    ("FERMI MLP (64,)", "FERMI MLP (64,)", "s-", "C1"),
    ("ExponentiatedGradient(HGB)", "ExponentiatedGradient(HGB)", "^--", "C2"),
    (
        "ThresholdOptimizer(HGB) GROUP AT PREDICT TIME",
        "ThresholdOptimizer(HGB): GROUP AT PREDICT TIME",
        "D",
        "C3",
    ),
    (
        "ThresholdOptimizer(LR) GROUP AT PREDICT TIME",
        "ThresholdOptimizer(LR): GROUP AT PREDICT TIME",
        "d",
        "C4",
    ),
    (
        "LogisticRegression (unconstrained)",
        "LogisticRegression (unconstrained)",
        "o",
        "0.5",
    ),
    (
        "HistGradientBoosting (unconstrained)",
        "HistGradientBoosting (unconstrained)",
        "^",
        "0.5",
    ),
    (
        "MLPClassifier (64,) (unconstrained)",
        "MLPClassifier (64,) (unconstrained)",
        "s",
        "0.5",
    ),
    ("DP-FERMI linear", "DP-FERMI linear, bound 0.012 (eps annotated)", "X", "C5"),
    (
        "DP-FERMI MLP (64,)",
        "DP-FERMI MLP (64,), bound 0.012 (eps annotated)",
        "P",
        "C6",
    ),
]


def plot_frontier(results):
    """Error against the test gap, one panel per preprocessing x constraint."""
    import matplotlib
    import matplotlib.ticker

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    reps = list(results)
    fig, axes = plt.subplots(
        len(reps), 2, figsize=(10, 3.8 * len(reps) + 1.2), squeeze=False
    )
    handles = {}
    variants = sorted(
        {
            r["method"].split(" [")[0]
            for rows in results.values()
            for r in rows
            if r["method"].startswith("FERMI MLP (") and " alpha=" in r["method"]
        },
        # Width 64 first: its variants keep their colours when others come.
        key=lambda m: (not m.startswith("FERMI MLP (64,)"), m),
    )
    styles = (
        FRONTIER_STYLES[:2]
        + [
            (v, v, "s--", colour)
            for v, colour in zip(variants, ("C9", "C8", "navy", "C7"))
        ]
        + FRONTIER_STYLES[2:]
    )
    for i, rep in enumerate(reps):
        for j, con in enumerate(("dp", "eo")):
            ax = axes[i, j]
            for key, label, fmt, colour in styles:
                pts = []
                for r in results[rep]:
                    name = r["method"].replace(f" [{con}]", "")
                    if key.startswith("DP-FERMI"):
                        # Private rows: demographic parity only, bounded fits.
                        ok = (
                            con == "dp"
                            and r["method"].startswith(key + " [dp] eps=")
                            and r["bound"] is not None
                        )
                    else:
                        ok = name == key and (
                            f"[{con}]" in r["method"] or "unconstrained" in key
                        )
                    if ok:
                        pts.append(r)
                if not pts:
                    continue
                pts.sort(key=lambda r: -(r["bound"] or 0.0))
                h = ax.errorbar(
                    [r[con] for r in pts],
                    [r["error"] for r in pts],
                    xerr=[r.get(con + "_std", 0.0) for r in pts],
                    yerr=[r.get("error_std", 0.0) for r in pts],
                    fmt=fmt,
                    color=colour,
                    ms=7 if fmt in "XP" else 5,
                    capsize=2,
                    lw=1,
                )
                handles.setdefault(label, h)
                if key.startswith("DP-FERMI"):
                    for r in pts:
                        ax.annotate(
                            "eps=" + r["method"].split("eps=")[1],
                            (r[con], r["error"]),
                            fontsize=6,
                            xytext=(3, 3),
                            textcoords="offset points",
                        )
            if con == "dp":
                ax.axvline(FRONTIER_TARGET["gap"], color="grey", lw=0.8, ls=":")
            ax.set_xscale("symlog", linthresh=0.02, linscale=1.5)
            ax.set_xlim(0.0, 0.3)
            ticks = [0.0, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2]
            ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
            ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
            ax.set_xlabel(f"test {con.upper()} gap (linear below 0.02, log above)")
            ax.set_ylabel("test error")
            ax.set_title(f"{rep}: {con.upper()} constraint", fontsize=9)
    fig.legend(
        list(handles.values()), list(handles), loc="lower center", ncol=2, fontsize=7
    )
    fig.tight_layout(rect=(0, 0.9 / (3.8 * len(reps) + 1.2), 1, 1))
    fig.savefig(
        os.path.join(os.path.dirname(FRONTIER_PAGE), "neural_frontier.png"), dpi=100
    )
    plt.close(fig)


FRONTIER_READING = """\
Reading (the numbers of the tables below, one seed unless a +- is shown).

* **Re-measured network rows.** Every ``FERMIClassifier`` network row was
  measured again on 2026-11-30, after the non-private network fit began to
  centre its columns by their exact means and divide those wider than unit
  scale by their standard deviations (its objective unchanged: the L2 term
  stays in the user's units; a network on raw columns predicted at chance
  before). On ``public`` that map is a centring only (every column's
  spread is at most 1): it moved the ``alpha=1e-3`` rows under DP by at
  most 0.0009 in test error, under EO by +0.0021 (bound 0.05) and -0.057
  (bound 0.012, below), and the ``alpha=0`` rows by -0.003 to +0.005: a
  non-convex fit whose full-batch phase starts elsewhere ends elsewhere. On
  ``standard_all`` the map is the identity to 6e-13; its
  rows were measured under the intermediate version that divided every
  column by its standard deviation, the same map to that precision, and
  moved by at most 0.0021. The validation selections above were made
  before, and were not re-run. CPU seconds of these rows were measured with
  another benchmark or the test suite on the same 2 cores: the
  ``standard_all`` fits, the same to four decimals, took 1.3-1.9 times the
  CPU seconds of their earlier runs.
* **The target is met on the public preprocessor with a regularized
  network, and missed narrowly on** ``standard_all``. On ``public``, the
  network with ``alpha=1e-3`` (chosen on the validation split above)
  reaches test error 0.1756 +- 0.0006 at test DP gap 0.0088 +- 0.0016 (3
  seeds, ``disparity_bound=0.012``) against linear FERMI's 0.1805 at 0.0076
  (the same for the 3 seeds: its bounded fit draws no batch): 0.0048
  better, over the 0.003 target; at bound 0.008 it is 0.1764 at gap 0.0045
  against 0.1817 at 0.0051. On ``standard_all`` public's alpha gives 0.1774
  at gap 0.0049 (bound 0.012), 0.004 *worse* than linear FERMI's 0.1730 at
  0.0067 (bound 0.008). With the alpha chosen on ``standard_all``'s own
  validation split (above: ``alpha=1e-2``, 0.0040 below linear FERMI's
  validation error there) the network reaches 0.1703 +- 0.0001 at test DP
  gap 0.0102 +- 0.0010 (3 seeds, bound 0.012): 0.0028 below linear FERMI's
  least error under the gap (0.1730, bound 0.008), short of the 0.003
  target. Against linear FERMI at the same bound 0.012 (0.1734 at 0.0112)
  the difference is 0.0032, but the target reads the least error over the
  bounds, so it is missed. At bound 0.008 the network gives 0.1722 at gap
  0.0056, at 0.02 0.1690 at 0.0190. A second selection on the same
  validation split, over widths 32, 64 and 128 and alphas 0.005, 0.01 and
  0.02 (made after this test miss was known; its paragraph above), chose
  width 32 and ``alpha=5e-3``: 0.1710 +- 0.0011 at test DP gap 0.0094 (bound
  0.012), 0.0020 below linear FERMI, further from the target. Columns standardized one-hot included
  (rare categories take values up to about 170) need a ten times larger L2
  weight than the public columns, in [-1, 1] and 0/1.
* **At its defaults** (``alpha=0``, the L-BFGS phase run to its tolerance)
  the network overfits: its *training* gap meets the bound (0.0113 at bound
  0.012) but its test error is 0.195-0.205 and its test DP gap 0.014-0.058,
  worse than the linear model on both counts and both preprocessings. The
  parameter's default is the linear model's; with hidden layers a positive
  ``alpha`` is needed. On the validation splits above (one seed, bound
  0.012), ``alpha=0`` gives error 0.2152 on ``public`` and 0.2098 on
  ``standard_all`` at training errors 0.131 and 0.120 (it fits the training
  rows and the bound, not the population); ``alpha=3e-3`` gives 0.1748 and
  0.1733 (training errors 0.170 and 0.153), the least validation error on
  ``public`` and 0.0026 above the least on ``standard_all`` (``1e-2``);
  ``1e-3`` gives 0.1770 and 0.1794, ``1e-4`` (scikit-learn's
  ``MLPClassifier`` default) 0.1953 and 0.2042.
* **Time.** A bounded network fit costs 54-121 CPU seconds with
  ``alpha=1e-3`` or ``1e-2`` under DP (93-225 under EO, 218-322 at
  ``alpha=0``; measured under load, above) against under 2 for linear FERMI:
  the bound's weight path runs the full-batch phase once per weight tried.
* **ExponentiatedGradient with a boosted base model** is far more accurate
  (0.141-0.155 for DP) but with 10 iterations its randomized classifier does
  not reach the bound on the test set: at bounds 0.012 and 0.008 its test DP
  gap is 0.019-0.021 on ``public`` and 0.013-0.020 on ``standard_all``
  (fairlearn's ``eps=0.01`` tolerance is of the order of the bound). Each fit
  costs 70-95 CPU seconds (10 boosted fits). For EO it reaches 0.135-0.138
  at test EO gap 0.028-0.032 (bound 0.012), where linear FERMI gives
  0.172 / 0.166 at 0.023 / 0.017.
* **ThresholdOptimizer** around the boosted model has the least error at a
  small gap (DP: 0.153 at 0.001-0.002; EO: 0.143-0.144 at 0.015-0.017) but
  it **reads the group at predict time**, which FERMI, DP-FERMI and
  ExponentiatedGradient do not: it is a different kind of model, shown for
  reference.
* **EO with the network** (``alpha=1e-3``, bounds 0.05 and 0.012 only):
  at bound 0.05 it beats linear FERMI on ``public`` (0.1550 at test EO gap
  0.051 against 0.1628 at 0.052) but not on ``standard_all`` (0.1588 at
  0.061 against 0.1541 at 0.055). At bound 0.012 on ``public`` it now gives
  0.1664 at test EO gap 0.018 (weight 512, training gap 0.010) against
  linear FERMI's 0.1719 at 0.023 (0.1735 at 0.011 at bound 0.008); before
  the column map its search returned a poor network there (0.2238 at
  0.015, weight 2). On ``standard_all`` it still does (0.2048 at 0.032,
  weight 0.5, training gap 0.006), far worse than linear FERMI (0.1655 at
  0.017): the chosen weight is small, so the training bound is met mostly
  by the shared decision threshold (towards a near-constant prediction),
  and it does not carry to the test set. The network's bounded path under
  equalized odds is not reliable at tight bounds.
* **DP-FERMI with a network** at epsilon 1 and 3 is no better than the
  linear DP-FERMI under the bound: with ``disparity_bound=0.012`` (weight
  chosen privately) it gives 0.1853 / 0.1821 on ``public`` against the
  linear model's 0.1830 / 0.1806 (test DP gaps 0.010 / 0.004 against 0.006
  / 0.007, their seed sd 0.001-0.009). At the default ``fairness_weight=8``
  the network is more accurate (0.1766 / 0.1735) but the weight constrains
  it much less (test DP gap 0.048 / 0.032 against the linear model's 0.010):
  a weight tuned for the linear model is not one for the network. The
  ``standard_all`` DP-FERMI numbers use noiseless statistics of the private
  rows (outside the guarantee).
* Not measured, for time: the default network at bound 0.05 and on
  ``standard_all`` at bounds other than 0.012, the default network under
  EO, the regularized network under EO at bounds 0.02 and 0.008, and
  ExponentiatedGradient under EO at 0.02 and 0.008, the network with
  ``alpha=1e-2`` under EO and on ``public``; other widths than 64 on
  ``public`` and under EO; more
  seeds than one for the frontier rows except the DP rows of the chosen
  networks at bound 0.012.\
"""

FRONTIER_PENDING = """\
**Pending**: rows of ``FERMIClassifier(hidden_layer_sizes=(64,))`` and
``DPFERMIClassifier(hidden_layer_sizes=(64,))`` are coded in the benchmark
(``--methods mlp dpmlp``) but were not measured when this page was written:
the parameter was being added at the time."""


TITLES = {
    ".. opacus-results": "Against Opacus\n--------------\n\n",
    ".. federated-results": (
        "Federated (ISRL-DP) on digits\n-----------------------------\n\n"
    ),
    ".. spider-results": (
        "Federated SPIDER against minibatch SGD on digits\n"
        "------------------------------------------------\n\n"
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
        for other in (
            ".. neural-results",
            ".. opacus-results",
            ".. federated-results",
            ".. spider-results",
        )
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
    parser.add_argument("--spider", action="store_true")
    parser.add_argument("--write", action="store_true")
    parser.add_argument(
        "--frontier",
        action="store_true",
        help="the fairness frontier on Adult (rows merged into --out)",
    )
    parser.add_argument("--quick", action="store_true", help="frontier smoke run")
    parser.add_argument(
        "--reps", nargs="+", default=list(FRONTIER_REPS), choices=list(FRONTIER_REPS)
    )
    parser.add_argument(
        "--methods", nargs="+", default=list(FRONTIER_METHODS), choices=FRONTIER_METHODS
    )
    parser.add_argument(
        "--constraints", nargs="+", default=["dp", "eo"], choices=["dp", "eo"]
    )
    parser.add_argument(
        "--bounds",
        nargs="+",
        type=float,
        default=FRONTIER_BOUNDS,
        help="frontier: disparity bounds (default %(default)s)",
    )
    parser.add_argument(
        "--mlp-alpha",
        type=float,
        default=0.0,
        help="frontier: alpha of the network FERMI rows (default 0, its default)",
    )
    parser.add_argument(
        "--mlp-width",
        type=int,
        default=HIDDEN[0],
        help="frontier: hidden width of the network FERMI rows (default "
        "%(default)s; it is in the rows' method label)",
    )
    parser.add_argument(
        "--select-alpha",
        nargs="+",
        type=float,
        default=None,
        help="frontier: choose the network's alpha among these on a validation "
        "split of the training file (stored in the JSON)",
    )
    parser.add_argument(
        "--select-rep",
        default="public",
        choices=list(FRONTIER_REPS),
        help="frontier: the preprocessing of --select-alpha",
    )
    parser.add_argument(
        "--select-widths",
        nargs="+",
        type=int,
        default=None,
        help="frontier: hidden widths of --select-alpha (default: 64 only)",
    )
    parser.add_argument(
        "--select-linear-bounds",
        nargs="+",
        type=float,
        default=None,
        help="frontier: also fit linear FERMI at these bounds on the validation "
        "split of --select-alpha (its reference: the least error over bounds)",
    )
    parser.add_argument(
        "--select-after-test",
        action="store_true",
        help="frontier: --select-alpha is a second selection, made after a test "
        "result of the first was known (stored beside the first, so marked)",
    )
    parser.add_argument(
        "--grid-seeds",
        type=int,
        default=1,
        help="frontier: seeds of the frontier rows (default 1; the DP-FERMI rows "
        "use --seeds)",
    )
    parser.add_argument("--out", default=None)
    parser.add_argument(
        "--report",
        action="store_true",
        help="frontier: only rewrite the page and plot from the JSON",
    )
    args = parser.parse_args()
    if args.frontier:
        out = args.out or FRONTIER_OUT
        if args.quick:
            out = args.out or os.path.join(
                tempfile.gettempdir(), "neural_frontier_quick.json"
            )
        if args.select_alpha:
            rep = args.select_rep
            chosen = select_alpha(
                args.select_alpha,
                rep=rep,
                widths=args.select_widths,
                linear_bounds=args.select_linear_bounds,
            )
            # One stored selection per preprocessing ("select" is public's);
            # a selection made after a test result was known is kept beside it.
            method = "select" if rep == "public" else f"select {rep}"
            if args.select_after_test:
                method += " after test"
                chosen["after_test"] = True
            _merge_row(
                out, "_alpha_selection", {"method": method, "bound": None, **chosen}
            )
            print(chosen, flush=True)
            return
        if not args.report:
            quick = args.quick
            frontier(
                ["public"] if quick else args.reps,
                [m for m in args.methods if m not in ("eg", "mlp")]
                if quick
                else args.methods,
                ["dp"] if quick else args.constraints,
                [FRONTIER_DP_BOUND] if quick else args.bounds,
                [0] if quick else list(range(args.grid_seeds)),
                [0] if quick else list(range(args.seeds)),
                out,
                args.mlp_alpha,
                args.mlp_width,
            )
        if args.write or args.report:
            write_frontier(out)
        return
    if args.sweep:
        sweep(args.seeds)
        return
    if args.opacus:
        rows = opacus(args.seeds)
        if args.write:
            write_opacus(rows, args.seeds)
        return
    if args.spider:
        rows = spider(args.seeds)
        if args.write:
            write_spider(rows, args.seeds)
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
