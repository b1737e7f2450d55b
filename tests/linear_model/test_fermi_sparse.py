# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Sparse and float32 X for the FERMI estimators: same fits, never densified."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_dpfair import DPFERMIClassifier, FERMIClassifier


def _data(n=600, d=20, density=0.15, seed=0):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    X = rng.normal(size=(n, d)) * (rng.uniform(size=(n, d)) < density)
    X[:, 0] += s
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0.5).astype(int)
    return X, y, s


ESTIMATORS = {
    "fermi": lambda: FERMIClassifier(max_iter=2, random_state=0),
    "fermi-exact": lambda: FERMIClassifier(
        max_iter=2, batch_size="full", dual_update="exact", random_state=0
    ),
    "fermi-eo": lambda: FERMIClassifier(
        max_iter=2, constraint="equalized_odds", random_state=0
    ),
    "fermi-sgda": lambda: FERMIClassifier(
        max_iter=2, full_batch_phase=None, clip_norm=1.0, random_state=0
    ),
    "fermi-bound": lambda: FERMIClassifier(
        max_iter=2, disparity_bound=0.05, random_state=0
    ),
    "dp-fermi": lambda: DPFERMIClassifier(
        max_iter=2, groups=[0, 1], classes=[0, 1], random_state=0
    ),
    "dp-fermi-bound": lambda: DPFERMIClassifier(
        max_iter=2, groups=[0, 1], classes=[0, 1], disparity_bound=0.1,
        random_state=0,
    ),
}


def _fit(name, X, y, s, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ESTIMATORS[name]().fit(X, y, sensitive_features=s, **kw)


@pytest.fixture
def no_densify(monkeypatch):
    """Make densifying a scipy sparse matrix an error."""

    def refuse(self, *args, **kwargs):
        raise AssertionError("a sparse matrix was densified")

    for cls in (sp.csr_matrix, sp.csc_matrix, sp.coo_matrix):
        monkeypatch.setattr(cls, "toarray", refuse)
        monkeypatch.setattr(cls, "todense", refuse)


@pytest.mark.parametrize("name", list(ESTIMATORS))
@pytest.mark.parametrize("fmt", [sp.csr_matrix, sp.csc_matrix])
def test_sparse_fit_equals_dense_fit(name, fmt, request):
    X, y, s = _data()
    dense = _fit(name, X, y, s)
    request.getfixturevalue("no_densify")
    sparse = _fit(name, fmt(X), y, s)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=0, atol=1e-12)
    np.testing.assert_allclose(sparse.intercept_, dense.intercept_, rtol=0, atol=1e-12)
    np.testing.assert_allclose(
        sparse.predict_proba(fmt(X)), dense.predict_proba(X), rtol=0, atol=1e-12
    )
    np.testing.assert_array_equal(sparse.predict(fmt(X)), dense.predict(X))
    if hasattr(dense, "epsilon_"):
        assert sparse.epsilon_ == dense.epsilon_
        assert sparse.dp_event_ == dense.dp_event_


@pytest.mark.parametrize("name", ["fermi", "dp-fermi"])
def test_sparse_weighted_fit_equals_dense(name):
    X, y, s = _data()
    w = np.random.default_rng(3).uniform(0.5, 2.0, X.shape[0])
    dense = _fit(name, X, y, s, sample_weight=w)
    sparse = _fit(name, sp.csr_matrix(X), y, s, sample_weight=w)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", ["fermi", "fermi-sgda", "dp-fermi"])
@pytest.mark.parametrize("to_sparse", [False, True])
def test_float32_stays_float32(name, to_sparse):
    X, y, s = _data()
    X32 = X.astype(np.float32)
    est = _fit(name, sp.csr_matrix(X32) if to_sparse else X32, y, s)
    assert est.coef_.dtype == np.float32 and est.intercept_.dtype == np.float32
    ref = _fit(name, X, y, s)
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-3, atol=1e-4)


def test_sparse_on_cuda_is_refused():
    X, y, s = _data(n=50)
    with pytest.raises(TypeError, match="Sparse input X runs on the CPU"):
        FERMIClassifier(device="cuda").fit(sp.csr_matrix(X), y, sensitive_features=s)


def test_sparse_neighbours_move_each_noisy_sum_by_at_most_its_clip(privatized_sums):
    # Add/remove one (huge) record of a sparse X: the first full-batch step's
    # clipped primal sum (coefficient and intercept blocks together) moves by
    # at most clip_norm, the dual sum by at most dual_clip_norm. A spy on the
    # mechanism reads the sums before the noise.
    X, y, s = _data(n=120)
    X[-1, :5] = 1e6
    clip, dual_clip = 0.5, 0.3
    sums = []
    for rows in (slice(None), slice(0, -1)):
        privatized_sums.clear()
        DPFERMIClassifier(
            batch_size="full", max_iter=1, clip_norm=clip, dual_clip_norm=dual_clip,
            groups=[0, 1], classes=[0, 1], group_marginals=[0.5, 0.5],
            epsilon=np.inf, noise_multiplier=0.0, random_state=0,
        ).fit(sp.csr_matrix(X[rows]), y[rows], sensitive_features=s[rows])
        sums.append(privatized_sums[:3])
    (c1, b1, d1), (c2, b2, d2) = sums
    primal = np.sqrt(np.sum((c1 - c2) ** 2) + np.sum((b1 - b2) ** 2))
    assert 0 < primal <= clip * (1 + 1e-12)
    assert 0 < np.linalg.norm(d1 - d2) <= dual_clip * (1 + 1e-12)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_offset_column_fit_reaches_the_dense_minimum(fmt):
    # A column of large offset and small spread: the sparse fit is centred
    # implicitly and reaches the dense fit's minimizer (it used to stop in
    # root-mean-square coordinates, objective 0.41 instead of 0.235), with
    # its stationarity measured in standardized coordinates.
    from sklearn.exceptions import ConvergenceWarning

    rng = np.random.default_rng(8)
    n = 1000
    s = rng.integers(0, 3, n)
    X = rng.normal(size=(n, 4)) + 0.7 * s[:, None]
    y = (X[:, 0] + X[:, 1] + 0.7 * rng.normal(size=n) > 0.5).astype(int)
    X[:, 1] = X[:, 1] * 1e-3 + 1e5
    for weight in (0.0, 8.0):
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            dense = FERMIClassifier(fairness_weight=weight, random_state=0).fit(
                X, y, sensitive_features=s
            )
            sparse = FERMIClassifier(fairness_weight=weight, random_state=0).fit(
                sp.csr_matrix(X).asformat(fmt), y, sensitive_features=s
            )
        assert sparse.stationarity_ <= sparse.tol
        np.testing.assert_allclose(
            sparse.predict_proba(sp.csr_matrix(X)),
            dense.predict_proba(X),
            rtol=0,
            atol=5e-3,
        )
        np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=5e-3)
