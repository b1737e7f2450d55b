# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""HeavyTailDPRegressor on sparse and float32 inputs: same fit, never densified."""

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_dpfair import HeavyTailDPRegressor
from sklearn_dpfair._solvers.heavy_tail._fit import zcdp_budget
from sklearn_dpfair._solvers.heavy_tail._private_curvature import private_curvature

SOLVERS = [
    {},
    {"epsilon": np.inf},
    {"solver": "sgd"},
    {"solver": "acsa"},
    {"solver": "prox", "penalty": "l1", "alpha": 0.01},
    {"solver": "localized", "loss": "absolute_error"},
]


def _parts(rho_scale, rho_matrix):
    """The curvature's two budget parts, of these zCDP rhos (inf: exact)."""
    return zcdp_budget(rho_scale, 1e-5), zcdp_budget(rho_matrix, 1e-5)


def _data(n=3000, d=6, density=0.4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_t(5, size=(n, d))
    X[rng.random(X.shape) > density] = 0.0
    y = X @ np.linspace(-1.0, 2.0, d) + 1.0 + rng.standard_t(3, size=n)
    return X, y


@pytest.mark.parametrize("params", SOLVERS, ids=lambda p: str(p.get("solver", p)))
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_equals_dense_for_the_same_seed(params, fmt):
    X, y = _data()
    if params.get("solver") == "localized":
        X, y = X[:300], y[:300]
    # The columns as given: a dense X would be centred by private scales.
    dense = HeavyTailDPRegressor(random_state=1, feature_bounds=None, **params)
    dense.fit(X, y)
    Xs = sp.csr_matrix(X) if fmt == "csr" else sp.csc_matrix(X)
    sparse = HeavyTailDPRegressor(random_state=1, feature_bounds=None, **params)
    sparse.fit(Xs, y)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-9, atol=1e-12)
    assert sparse.intercept_ == pytest.approx(dense.intercept_, rel=1e-9, abs=1e-12)
    assert sparse.epsilon_ == dense.epsilon_
    np.testing.assert_allclose(sparse.predict(Xs), dense.predict(X), rtol=1e-9)


@pytest.mark.parametrize("epsilon", [2.0, np.inf])
def test_sparse_weighted_dpsgd_equals_dense(epsilon):
    X, y = _data()
    w = np.random.default_rng(2).uniform(0.2, 3.0, size=y.size)
    params = {"epsilon": epsilon, "random_state": 0, "feature_bounds": None}
    dense = HeavyTailDPRegressor(**params).fit(X, y, w)
    sparse = HeavyTailDPRegressor(**params)
    sparse.fit(sp.csr_matrix(X), y, w)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("params", SOLVERS[:3], ids=["dp-sgd", "inf", "sgd"])
def test_sparse_fit_never_densifies_x(params, monkeypatch):
    X, y = _data()
    Xs = sp.csr_matrix(X)

    def guarded(method):
        def refuse(self, *args, **kwargs):
            # Only (d + 1) x (d + 1) second moments may become dense.
            assert self.shape[0] <= X.shape[1] + 1, "rows of X were densified"
            return method(self, *args, **kwargs)

        return refuse

    for cls in (sp.csr_matrix, sp.csc_matrix, sp.coo_matrix):
        monkeypatch.setattr(cls, "toarray", guarded(cls.toarray))
        monkeypatch.setattr(cls, "todense", guarded(cls.todense))
    HeavyTailDPRegressor(random_state=0, **params).fit(Xs, y)


def test_sparse_private_curvature_clips_a_huge_row_like_dense():
    X, _ = _data(n=2000, d=4)
    X[0] = [1e200, 0.0, -1e200, 0.0]
    dense = private_curvature(X, 1.0, *_parts(0.05, 0.2), np.random.default_rng(0))
    sparse = private_curvature(
        sp.csr_matrix(X), 1.0, *_parts(0.05, 0.2), np.random.default_rng(0)
    )
    assert np.isfinite(sparse.smoothness) and np.isfinite(sparse.strong_convexity)
    assert sparse.smoothness == pytest.approx(dense.smoothness, rel=1e-9)
    assert sparse.strong_convexity == pytest.approx(
        dense.strong_convexity, rel=1e-9, abs=1e-12
    )


@pytest.mark.parametrize("params", SOLVERS, ids=lambda p: str(p.get("solver", p)))
def test_float32_in_float32_out(params):
    X, y = _data()
    if params.get("solver") == "localized":
        X, y = X[:300], y[:300]
    ref = HeavyTailDPRegressor(random_state=1, **params).fit(X, y)
    reg = HeavyTailDPRegressor(random_state=1, **params).fit(X.astype(np.float32), y)
    assert reg.coef_.dtype == np.float32
    assert reg.predict(X.astype(np.float32)).dtype == np.float32
    np.testing.assert_allclose(reg.coef_, ref.coef_, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize(
    "params",
    [{"solver": "sgd"}, {"solver": "acsa"}, {"solver": "prox", "penalty": "l1"}],
    ids=["sgd", "acsa", "prox"],
)
def test_one_pass_solvers_use_non_uniform_weights(params):
    # Zero-weight rows do not count (old code: a ValueError for every
    # one-pass solver).
    X, y = _data(n=20000, d=3, density=1.0)
    y_bad = y.copy()
    y_bad[:10000] = -y_bad[:10000] + 20.0
    weights = np.r_[np.zeros(10000), np.ones(10000)]
    kw = dict(epsilon=8.0, random_state=0, **params)
    reg = HeavyTailDPRegressor(**kw).fit(X, y_bad, sample_weight=weights)
    np.testing.assert_allclose(reg.coef_, np.linspace(-1.0, 2.0, 3), atol=0.35)
    # Unweighted, the 10000 shifted targets push the fit to the solver's
    # default radius, which the fit says.
    with pytest.warns(UserWarning, match="default radius"):
        ignored = HeavyTailDPRegressor(**kw).fit(X, y_bad)
    assert np.linalg.norm(ignored.coef_ - reg.coef_) > 0.5
    sparse = HeavyTailDPRegressor(**kw).fit(sp.csr_matrix(X), y_bad, weights)
    np.testing.assert_allclose(sparse.coef_, reg.coef_, rtol=1e-9, atol=1e-12)


def test_localized_uses_weights():
    X, y = _data(n=256, d=2, density=1.0)
    w = np.r_[np.zeros(128), np.ones(128)]
    kw = dict(solver="localized", loss="absolute_error", random_state=0)
    a = HeavyTailDPRegressor(**kw).fit(X, y, sample_weight=w)
    b = HeavyTailDPRegressor(**kw).fit(X, y)
    assert not np.array_equal(a.coef_, b.coef_)


@pytest.mark.parametrize("epsilon", [1.0, np.inf])
def test_a_string_target_is_parsed_and_refused_when_not_a_finite_number(epsilon):
    # A target of numeric strings fits as its numbers; one that parses to
    # NaN or an infinity ("nan", "1e400") fitted a model of the other rows
    # (or coefficients 0 at epsilon=inf) without an error, and a
    # non-numeric one raised numpy's message showing the value: both are
    # refused naming y, showing no value.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    y = np.round(X @ np.array([1.0, 2.0]) + 1.0 + rng.normal(size=300), 6)
    params = {"epsilon": epsilon, "random_state": 0, "max_iter": 20}
    ref = HeavyTailDPRegressor(**params).fit(X, y)
    est = HeavyTailDPRegressor(**params).fit(X, y.astype(str))
    np.testing.assert_array_equal(est.coef_, ref.coef_)
    for value, message in [
        ("nan", "Input y contains NaN or infinity"),
        ("1e400", "Input y contains NaN or infinity"),
        # (validate_data refuses an object one first, in its own words.)
        ("Alice", "Input y"),
    ]:
        for bad in (y.astype(str).astype(object), y.astype(str)):
            bad = bad.copy()
            bad[3] = value
            with pytest.raises(ValueError, match=message) as info:
                HeavyTailDPRegressor(**params).fit(X, bad)
            assert value not in str(info.value)
