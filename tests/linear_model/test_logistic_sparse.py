"""Sparse X with the default solver (DP-SGD): same fit as dense, never densified."""

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_dpfair.linear_model import DPLogisticRegression


def _data(n=400, d=30, n_classes=2, density=0.2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < density)
    y = (X[:, :n_classes] @ np.arange(1, n_classes + 1) > 0).astype(int)
    if n_classes > 2:
        y = np.argmax(X[:, :n_classes], axis=1)
    return X, y


def _clf(**kwargs):
    return DPLogisticRegression(random_state=0, classes=kwargs.pop("classes"), **kwargs)


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_sparse_fit_equals_dense_fit(n_classes, fmt, fit_intercept, weighted):
    X, y = _data(n_classes=n_classes)
    w = np.random.default_rng(1).uniform(0.1, 3.0, size=y.size) if weighted else None
    kw = dict(classes=np.arange(n_classes), fit_intercept=fit_intercept)
    dense = _clf(**kw).fit(X, y, sample_weight=w)
    sparse = _clf(**kw).fit(sp.csr_matrix(X).asformat(fmt), y, sample_weight=w)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(
        sparse.intercept_, dense.intercept_, rtol=1e-10, atol=1e-14
    )
    assert sparse.epsilon_ == dense.epsilon_
    Xs = sp.csr_matrix(X).asformat(fmt)
    np.testing.assert_allclose(
        sparse.predict_proba(Xs), dense.predict_proba(X), rtol=1e-10
    )
    np.testing.assert_array_equal(sparse.predict(Xs), dense.predict(X))


@pytest.mark.parametrize("n_classes", [2, 3])
def test_huge_record_gives_the_dense_fit(n_classes):
    X, y = _data(n_classes=n_classes)
    X[0, :3] = [1e308, -1e308, 0.0]
    X[5, 4] = 1.5e200
    kw = dict(classes=np.arange(n_classes))
    dense = _clf(**kw).fit(X, y)
    sparse = _clf(**kw).fit(sp.csr_matrix(X), y)
    assert np.all(np.isfinite(sparse.coef_))
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(
        sparse.intercept_, dense.intercept_, rtol=1e-10, atol=1e-14
    )
    assert np.all(np.isfinite(sparse.predict_proba(sp.csr_matrix(X))))


def _wide_sparse(n=2000, d=200_000, per_row=20, seed=0):
    rng = np.random.default_rng(seed)
    rows = np.repeat(np.arange(n), per_row)
    cols = rng.integers(d, size=per_row * n)
    X = sp.csr_matrix((rng.normal(size=per_row * n), (rows, cols)), shape=(n, d))
    return X, np.arange(n) % 2


def test_sparse_input_is_never_densified(monkeypatch):
    """A 2000 x 200000 CSR fit (3.2 GB dense) never converts X to an array."""
    X, y = _wide_sparse()

    def refuse(self, *args, **kwargs):
        raise AssertionError("X was densified")

    for cls in type(X).__mro__:
        for name in ("toarray", "todense", "__array__"):
            if name in vars(cls):
                monkeypatch.setattr(cls, name, refuse)
    with pytest.raises(AssertionError, match="densified"):
        X.toarray()  # the trap works
    clf = DPLogisticRegression(random_state=0, classes=[0, 1], max_iter=2)
    clf.fit(X, y)
    assert clf.predict(X).shape == (y.size,)
    clf.fit(X.tocsc(), y)


def test_wide_sparse_fit_peak_memory_is_far_below_dense_size():
    X, y = _wide_sparse()
    dense_bytes = X.shape[0] * X.shape[1] * 8  # 3.2 GB
    sparse_bytes = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    clf = DPLogisticRegression(random_state=0, classes=[0, 1], max_iter=2)
    tracemalloc.start()
    try:
        clf.fit(X, y)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # Coefficients (d x 1) and their running sums are the O(d K) part.
    assert peak < 2 * sparse_bytes + 20 * X.shape[1] * 8
    assert peak < dense_bytes / 100


def test_sparse_input_on_cuda_is_refused_by_name():
    X, y = _data()
    with pytest.raises(TypeError, match="Sparse input X runs on the CPU"):
        DPLogisticRegression(device="cuda").fit(sp.csr_matrix(X), y)


def test_sparse_input_refuses_silos():
    X, y = _data()
    with pytest.raises(TypeError, match="silos"):
        DPLogisticRegression(classes=[0, 1]).fit(
            sp.csr_matrix(X), y, silos=[0] * y.size
        )


def test_duplicate_entries_of_a_csr_matrix_give_the_dense_fit():
    """A non-canonical CSR (one position stored twice) is the matrix of the sums."""
    X, y = _data()
    S = sp.csr_matrix(X)
    # Store every entry as two halves: same matrix, twice the stored entries.
    counts = np.diff(S.indptr)
    D = sp.csr_matrix(
        (np.repeat(S.data / 2, 2), np.repeat(S.indices, 2),
         np.concatenate([[0], np.cumsum(2 * counts)])),
        shape=S.shape,
    )
    assert not D.has_canonical_format
    kw = dict(classes=[0, 1])
    np.testing.assert_allclose(
        _clf(**kw).fit(D, y).coef_, _clf(**kw).fit(X, y).coef_, rtol=1e-10, atol=1e-14
    )


def test_float32_sparse_input_stays_float32_and_matches_dense():
    X, y = _data()
    X = X.astype(np.float32)
    dense = _clf(classes=[0, 1]).fit(X, y)
    sparse = _clf(classes=[0, 1]).fit(sp.csr_matrix(X), y)
    assert sparse.coef_.dtype == np.float32
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-4, atol=1e-6)
