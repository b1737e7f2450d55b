# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The L2 penalty of a federation none of whose silos is private.

Such a federation runs on mapped columns (the exact standardization, or
declared ``feature_bounds``) and must minimize the documented objective in
the user's units: the server-weighted mean of the silos' mean log-losses
plus ``alpha/2 ||w||^2`` of the returned coefficients. On the mapped
columns that penalty is ``alpha / scale_j^2`` on coefficient ``j``, taken
by the server's proximal step. The data have an offset column and a column
in units of 0.01: penalizing the mapped coefficients instead gave the
latter a coefficient ~500 times too large (objective 24.6 against 0.613).

Full batches (``batch_size="full"``) without noise or clipping make the
rounds deterministic proximal gradient descent, which converges linearly:
the tolerances below are a few orders of magnitude above the gaps measured
at these numbers of rounds (objective 3e-12 after 100 rounds, coefficients
within 1e-5).
"""

import warnings

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from sklearn_dpfair import DPLogisticRegression, DPMLPClassifier
from sklearn_dpfair.federated import _fit

ALPHA = 1e-2


def _raw_columns(n=600):
    rng = np.random.default_rng(0)
    Z = np.clip(rng.standard_normal((n, 2)), -3.0, 3.0)
    y = (rng.random(n) < 1 / (1 + np.exp(-(Z @ [1.0, -0.8])))).astype(int)
    return Z * [100.0, 0.01] + [500.0, 0.0], y


def _objective(clf, X, y, alpha, w=None):
    """The documented objective: mean (weighted) log-loss + alpha/2 ||w||^2."""
    z = X @ clf.coef_.ravel() + clf.intercept_[0]
    losses = np.logaddexp(0.0, z) - y * z
    return np.average(losses, weights=w) + 0.5 * alpha * np.sum(clf.coef_**2)


def _silo_fit(X, y, silos, **kw):
    params = dict(epsilon=np.inf, classes=[0, 1], batch_size="full", random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return DPLogisticRegression(**{**params, **kw}).fit(X, y, silos=silos)


@pytest.mark.parametrize(
    "server_weights, alpha",
    [("uniform", ALPHA), ({"small": 3.0, "large": 1.0}, ALPHA), ("uniform", 5.0)],
)
def test_non_private_silos_penalize_the_coefficients_in_user_units(
    server_weights, alpha
):
    # sample_weight is refused beside silos; the federation's own weighting
    # is its server weights: silo i's records weigh p_i / n_i, so the
    # objective is a weighted mean (unequal silos, uniform or given p_i).
    X, y = _raw_columns()
    silos = np.repeat(["small", "large"], [200, 400])
    p = {"small": 1.0, "large": 1.0}
    if server_weights != "uniform":
        p = server_weights
    w = np.array([p[s] for s in silos]) / np.where(silos == "small", 200, 400)
    n = X.shape[0]
    # scikit-learn's C sums the weighted losses: weights of mean 1.
    reference = LogisticRegression(
        C=1 / (alpha * n), solver="newton-cholesky", tol=1e-12, max_iter=100
    ).fit(X, y, sample_weight=w * n / w.sum())
    memory = DPLogisticRegression(epsilon=np.inf, alpha=alpha, classes=[0, 1])
    memory.fit(X, y, sample_weight=w)
    clf = _silo_fit(
        X, y, silos, alpha=alpha, max_iter=100, server_weights=server_weights
    )
    best = _objective(reference, X, y, alpha, w)
    assert _objective(memory, X, y, alpha, w) <= best + 1e-9
    assert _objective(clf, X, y, alpha, w) <= best + 1e-8
    np.testing.assert_allclose(clf.coef_, memory.coef_, rtol=1e-4, atol=1e-9)
    np.testing.assert_allclose(clf.intercept_, memory.intercept_, rtol=1e-4)


def test_non_private_silos_on_declared_bounds_penalize_user_units():
    # The same with the columns mapped by declared bounds (half-widths 300
    # and 0.03): the penalty on the mapped model gave the small-unit column
    # a coefficient 56 times too large. learning_rate=4 (stable: the mapped
    # columns are within [-1, 1]) brings 300 full rounds within 1e-6 of the
    # minimizer.
    X, y = _raw_columns()
    silos = np.arange(X.shape[0]) % 2
    memory = DPLogisticRegression(epsilon=np.inf, alpha=ALPHA, classes=[0, 1])
    memory.fit(X, y)
    clf = _silo_fit(
        X, y, silos, alpha=ALPHA, max_iter=300, learning_rate=4.0,
        feature_scaling="auto", feature_bounds=[(200.0, 800.0), (-0.03, 0.03)],
    )
    assert _objective(clf, X, y, ALPHA) <= _objective(memory, X, y, ALPHA) + 1e-8
    np.testing.assert_allclose(clf.coef_, memory.coef_, rtol=1e-4)
    np.testing.assert_allclose(clf.intercept_, memory.intercept_, rtol=1e-4)


def test_non_private_silos_penalize_user_units_with_three_classes():
    # The softmax model: every class's coefficients of column j get alpha /
    # scale_j^2 on the mapped columns. 300 full rounds: within 1e-6
    # relative of the in-memory minimizer (the column in units of 0.01 was
    # off by a factor ~500).
    X, y = _raw_columns()
    rng = np.random.default_rng(1)
    z = (X - [500.0, 0.0]) / [100.0, 0.01] @ [1.0, -0.8]
    y3 = np.digitize(z + 0.5 * rng.standard_normal(z.size), [-0.5, 0.5])
    silos = np.arange(X.shape[0]) % 2
    memory = DPLogisticRegression(epsilon=np.inf, alpha=ALPHA, classes=[0, 1, 2])
    memory.fit(X, y3)
    clf = _silo_fit(X, y3, silos, alpha=ALPHA, max_iter=300, classes=[0, 1, 2])
    np.testing.assert_allclose(clf.coef_, memory.coef_, rtol=1e-4, atol=1e-8)
    np.testing.assert_allclose(clf.intercept_, memory.intercept_, atol=1e-4)


def _configs(monkeypatch):
    """The FederationConfig of every federation fit_silos runs."""
    seen, run = [], _fit.fit_federated

    def spy(*args, config, **kwargs):
        seen.append(config)
        return run(*args, config=config, **kwargs)

    monkeypatch.setattr(_fit, "fit_federated", spy)
    return seen


def test_only_a_non_private_linear_federation_moves_its_penalty(monkeypatch):
    # A private fit keeps the planned steps (the penalty alpha on the mapped
    # coefficients, sent by the silos), as does a network (its central fit
    # penalizes its scaled first layer too); only the non-private linear
    # federation puts alpha / scale_j^2 in the server's proximal step, with
    # the exact scales it standardizes by, declared bounds or not.
    X, y = _raw_columns(200)
    silos = np.arange(200) % 2
    bounds = dict(feature_scaling="auto", feature_bounds=[(200, 800), (-0.03, 0.03)])
    seen = _configs(monkeypatch)
    _silo_fit(X, y, silos, alpha=ALPHA, max_iter=2, **bounds)
    _silo_fit(X, y, silos, alpha=ALPHA, max_iter=2, epsilon=1.0, **bounds)
    _silo_fit(X, y, silos, alpha=ALPHA, max_iter=2, noise_multiplier=0.0, **bounds)
    _silo_fit(X, y, silos, alpha=0.0, max_iter=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        DPMLPClassifier(
            (3,), epsilon=np.inf, alpha=ALPHA, classes=[0, 1], max_iter=2,
            random_state=0,
        ).fit(X, y, silos=silos)
    public, *planned = seen
    assert public.alpha == 0.0
    np.testing.assert_allclose(public.column_alpha, ALPHA / X.std(axis=0) ** 2)
    assert [(c.alpha, c.column_alpha) for c in planned] == [
        (ALPHA, None), (ALPHA, None), (0.0, None), (ALPHA, None)
    ]
