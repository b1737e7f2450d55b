"""DPLogisticRegression(solver="dp-frank-wolfe"): privacy record, sparsity, input."""

import math
import warnings

import dp_accounting
import numpy as np
import pytest
import scipy.sparse as sp
import sklearn
from sklearn.linear_model import LogisticRegression
from sklearn.utils.fixes import parse_version

from sklearn_dpfair import DPLogisticRegression
from sklearn_dpfair._solvers._frank_wolfe import INTERCEPT_BOUND
from sklearn_dpfair.exceptions import PrivacyLeakWarning
from sklearn_dpfair.privacy import PrivacyLedger
from sklearn_dpfair.privacy._accounting import epsilon_of
from sklearn_dpfair.privacy._zcdp import rho_for_epsilon

# scikit-learn 1.8 spells a pure l1 penalty l1_ratio=1 (penalty= deprecated);
# 1.6 and 1.7 need penalty="l1" (l1_ratio alone is ignored there).
_L1_PENALTY = (
    {"l1_ratio": 1.0}
    if parse_version(sklearn.__version__).release >= (1, 8)
    else {"penalty": "l1"}
)


_PUBLIC_N = (
    "fw_steps=None: the step count is computed from n, which is public "
    "(as DP-SGD's sampling rate); the selections themselves do not use n"
)


def _data(n=600, d=40, n_classes=2, seed=0, sparse=False):
    rng = np.random.default_rng(seed)
    if sparse:
        X = sp.random(n, d, density=0.05, random_state=seed, format="csr")
        X.data[:] = 1.0
    else:
        X = rng.uniform(-1, 1, size=(n, d))
    W = np.zeros((d, n_classes))
    W[:4] = rng.normal(scale=3.0, size=(4, n_classes))
    raw = np.asarray(X @ W)
    p = np.exp(raw - raw.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    y = np.array([rng.choice(n_classes, p=pi) for pi in p])
    return X, y


def _fw(**kwargs):
    params = dict(
        solver="dp-frank-wolfe",
        l1_radius=5.0,
        feature_inf_bound=1.0,
        classes=[0, 1],
        random_state=0,
    )
    params.update(kwargs)
    return DPLogisticRegression(**params)


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 3.0])
def test_epsilon_is_recomputed_from_the_event(epsilon):
    X, y = _data()
    clf = _fw(epsilon=epsilon, delta=1e-6).fit(X, y)
    assert clf.epsilon_ == epsilon_of(clf.dp_event_, 1e-6, "rdp")
    assert clf.epsilon_ == clf.privacy_record_.recompute_epsilon()
    assert 0.99 * epsilon <= clf.epsilon_ <= epsilon
    # One zCDP event per selection (coefficient vertex, then intercept
    # vertex), composed; rho adds up to the budget's.
    assert isinstance(clf.dp_event_, dp_accounting.ComposedDpEvent)
    events = clf.dp_event_.events
    assert len(events) == 2 * clf.t_
    assert all(isinstance(e, dp_accounting.ZCDpEvent) for e in events)
    coef_rho = np.array([e.rho for e in events[: clf.t_]])
    intercept_rho = np.array([e.rho for e in events[clf.t_ :]])
    rho = coef_rho.sum() + intercept_rho.sum()
    assert rho == pytest.approx(rho_for_epsilon(epsilon, 1e-6))
    np.testing.assert_allclose(intercept_rho, coef_rho / 9)
    # Shares grow like (t + 1)^2.
    np.testing.assert_allclose(coef_rho / coef_rho[0], np.arange(1, clf.t_ + 1) ** 2)
    assert clf.adjacency_ == "add_remove"
    assert clf.privacy_record_.accountant == "rdp"
    eps0 = math.sqrt(8 * coef_rho[-1])
    assert clf.noise_multiplier_ == pytest.approx(2 / eps0)
    assert clf.privacy_record_.clip_norm == pytest.approx(5.0 * 1.0 / X.shape[0])
    # The default step count read n; a given one reads nothing.
    assert clf.privacy_caveats_ == [_PUBLIC_N]
    clf = _fw(epsilon=epsilon, delta=1e-6, fw_steps=5).fit(X, y)
    assert clf.privacy_caveats_ == []
    assert 0.99 * epsilon <= clf.epsilon_ <= epsilon


def test_without_intercept_one_event_per_selection():
    X, y = _data()
    clf = _fw(epsilon=1.0, fit_intercept=False, fw_steps=9).fit(X, y)
    events = clf.dp_event_.events
    assert len(events) == 9
    assert sum(e.rho for e in events) == pytest.approx(rho_for_epsilon(1.0, 1e-5))
    assert np.all(clf.intercept_ == 0)


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("fw_steps", [1, 7, 40])
def test_at_most_t_nonzeros(n_classes, fw_steps):
    X, y = _data(n_classes=n_classes)
    clf = _fw(fw_steps=fw_steps, classes=list(range(n_classes))).fit(X, y)
    assert clf.t_ == fw_steps
    assert clf.coef_.shape == (1 if n_classes == 2 else n_classes, X.shape[1])
    assert clf.n_nonzero_ == np.count_nonzero(clf.coef_) <= fw_steps
    assert np.abs(clf.coef_).sum() <= 5.0 + 1e-9
    assert np.abs(clf.intercept_).sum() <= INTERCEPT_BOUND + 1e-9


def test_auto_steps_come_from_public_quantities():
    X, y = _data(n=1000)
    a = _fw(epsilon=1.0).fit(X, y)
    # Other data of the same shape: the same step count.
    b = _fw(epsilon=1.0).fit(*_data(n=1000, seed=5))
    assert a.t_ == b.t_
    assert _fw(epsilon=3.0).fit(X, y).t_ > a.t_
    assert a.n_iter_ == a.t_  # each step is one pass over the data


def test_non_private_limit_matches_l1_logistic_regression():
    """epsilon = inf at the l1 radius of sklearn's l1 solution: the same model.

    Without an intercept the l1-penalized minimizer w* also minimizes the loss
    over {||w||_1 <= ||w*||_1} (Lagrange duality), which is what the
    non-private Frank-Wolfe solves.
    """
    X, y = _data(n=800, d=20, seed=2)
    ref = LogisticRegression(
        **_L1_PENALTY, C=0.05, solver="liblinear", fit_intercept=False, tol=1e-10,
        max_iter=10000,
    ).fit(X, y)
    w_star = ref.coef_.ravel()
    radius = float(np.abs(w_star).sum())
    assert 0 < np.count_nonzero(w_star) < X.shape[1]  # the constraint binds
    clf = _fw(
        epsilon=math.inf, fit_intercept=False, l1_radius=radius, fw_steps=4000
    ).fit(X, y)

    def mean_loss(w):
        z = X @ w
        return np.mean(np.logaddexp(0, z) - y * z)

    assert mean_loss(clf.coef_.ravel()) - mean_loss(w_star) < 2e-4
    np.testing.assert_allclose(clf.coef_.ravel(), w_star, atol=0.05)
    assert math.isinf(clf.epsilon_)


def test_sparse_input_gives_the_dense_fit_and_predicts():
    X, y = _data(sparse=True, n=500, d=300)
    sparse_fit = _fw(epsilon=1.0, fw_steps=50).fit(X, y)
    dense_fit = _fw(epsilon=1.0, fw_steps=50).fit(X.toarray(), y)
    np.testing.assert_allclose(sparse_fit.coef_, dense_fit.coef_, atol=1e-12)
    np.testing.assert_allclose(
        sparse_fit.predict_proba(X), dense_fit.predict_proba(X.toarray())
    )
    np.testing.assert_array_equal(sparse_fit.predict(X.tocsc()), dense_fit.predict(X))


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("epsilon", [1.0, np.inf])
def test_float32_input_gives_a_float32_model(sparse, epsilon):
    # As scikit-learn and every other solver: the model in X's dtype.
    X, y = _data(sparse=sparse, n=500, d=30)
    est = _fw(epsilon=epsilon, fw_steps=20).fit(X.astype(np.float32), y)
    assert est.coef_.dtype == est.intercept_.dtype == np.float32
    assert est.predict_proba(X.astype(np.float32)).dtype == np.float32


def test_sparse_input_is_never_densified(monkeypatch):
    """A 2000 x 200000 CSR fit (3.2 GB dense) never converts X to an array."""
    n, d = 2000, 200_000
    rng = np.random.default_rng(0)
    X = sp.csr_matrix(
        (np.ones(20 * n), (np.repeat(np.arange(n), 20), rng.integers(d, size=20 * n))),
        shape=(n, d),
    )
    y = np.arange(n) % 2

    def refuse(self, *args, **kwargs):
        raise AssertionError("X was densified")

    for cls in type(X).__mro__:
        for name in ("toarray", "todense", "__array__"):
            if name in vars(cls):
                monkeypatch.setattr(cls, name, refuse)
    with pytest.raises(AssertionError, match="densified"):
        X.toarray()  # the trap works
    clf = _fw(epsilon=1.0, fw_steps=3).fit(X, y)
    assert clf.predict(X).shape == (n,)
    assert clf.n_nonzero_ <= 3


def test_missing_feature_bound_is_inferred_with_a_warning():
    X, y = _data()
    X[0, 0] = 7.0
    with pytest.warns(PrivacyLeakWarning, match="feature_inf_bound") as record:
        clf = _fw(feature_inf_bound=None).fit(X, y)
    assert record[0].filename == __file__  # points at the caller
    assert "per-coordinate feature bound inferred from the private data" in (
        clf.privacy_caveats_
    )
    assert clf.privacy_record_.clip_norm == pytest.approx(5.0 * 7.0 / X.shape[0])


def test_inferred_bound_of_a_csr_storing_duplicates_is_the_dense_one():
    """A CSR storing every value as two halves is the same matrix: the bound
    is read from the summed entries, so the fit is the dense one's."""
    X, y = _data(n=400, d=6)
    n, d = X.shape
    halves = sp.csr_matrix(
        (
            np.repeat(X.ravel() / 2, 2),
            np.repeat(np.tile(np.arange(d), n), 2),
            np.arange(0, 2 * n * d + 1, 2 * d),
        ),
        shape=(n, d),
    )
    assert not halves.has_canonical_format
    fits = []
    for A in (X, halves):
        with pytest.warns(PrivacyLeakWarning, match="feature_inf_bound"):
            fits.append(_fw(feature_inf_bound=None, epsilon=1.0).fit(A, y))
    dense, sparse = fits
    bound = np.max(np.abs(X))
    assert dense.privacy_record_.clip_norm == pytest.approx(5.0 * bound / n)
    assert sparse.privacy_record_.clip_norm == pytest.approx(5.0 * bound / n)
    assert sparse.t_ == dense.t_  # the step count is set by the bound
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-9, atol=1e-12)


def test_declared_bounds_raise_no_warning():
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _fw().fit(X, y)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"l1_radius": None}, "needs l1_radius"),
        ({"l1_radius": 0.0}, "l1_radius"),
        ({"l1_radius": -1.0}, "l1_radius"),
        ({"feature_inf_bound": 0.0}, "feature_inf_bound"),
        ({"feature_inf_bound": -2.0}, "feature_inf_bound"),
        ({"fw_steps": 0}, "fw_steps"),
        ({"l1_radius": 1e200, "feature_inf_bound": 1e200}, "overflow"),
        ({"device": "cuda"}, "CPU|torch"),
    ],
)
def test_bad_input(kwargs, match):
    X, y = _data(n=100)
    with pytest.raises((ValueError, ImportError), match=match):
        _fw(**kwargs).fit(X, y)


def test_extreme_records_give_a_finite_model():
    X, y = _data(n=200)
    X[0, :3] = [1e308, -1e308, 1e-310]
    clf = _fw(epsilon=1.0).fit(X, y)
    assert np.all(np.isfinite(clf.coef_)) and np.all(np.isfinite(clf.intercept_))
    assert np.all(np.isfinite(clf.predict_log_proba(X)))


def test_fit_does_not_mutate_parameters_and_is_seeded():
    X, y = _data()
    clf = _fw(epsilon=1.0)
    params = clf.get_params()
    a = clf.fit(X, y).coef_.copy()
    assert clf.get_params() == params
    np.testing.assert_array_equal(a, _fw(epsilon=1.0).fit(X, y).coef_)
    assert clf.privacy_record_.seeded


def test_ledger_composes_fits_with_rdp_and_refuses_pld():
    X, y = _data()
    ledger = PrivacyLedger(kind="rdp")
    for seed in (None, None):
        _fw(epsilon=0.5, random_state=seed, accountant=ledger).fit(X, y)
    assert 0.5 < ledger.total_epsilon(1e-5) < 1.0  # zCDP composes sub-linearly
    with pytest.raises(ValueError, match="kind='rdp'"):
        _fw(accountant=PrivacyLedger(kind="pld")).fit(X, y)


def test_scikit_learn_checks_pass_for_the_frank_wolfe_solver():
    """The estimator checks, run on the non-default solver (sparse tag on)."""
    from sklearn.utils.estimator_checks import check_estimator

    clf = DPLogisticRegression(
        solver="dp-frank-wolfe", l1_radius=5.0, fw_steps=20, random_state=0
    )
    assert clf.__sklearn_tags__().input_tags.sparse
    assert DPLogisticRegression(
        solver="output-perturbation"
    ).__sklearn_tags__().input_tags.sparse
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        results = check_estimator(clf, on_fail=None, on_skip=None)
    failed = {r["check_name"] for r in results if r["status"] == "failed"}
    # A private fit clips each record's weighted gradient once, so a record
    # of weight k is one record, not k duplicates (tests/test_common.py).
    assert failed <= {
        "check_sample_weight_equivalence_on_dense_data",
        "check_sample_weight_equivalence_on_sparse_data",
    }


def test_sparse_scores_of_huge_rows_are_finite_and_match_dense():
    X, y = _data(sparse=True, n=300, d=50)
    clf = _fw(epsilon=np.inf, fw_steps=30, classes=[0, 1]).fit(X, y)
    X_big = X.copy().tolil()
    X_big[0, :] = 0.0
    for j in np.flatnonzero(clf.coef_.ravel())[:2]:
        X_big[0, j] = 1e308
    X_big = X_big.tocsr()
    sparse_scores = clf.decision_function(X_big)
    dense_scores = clf.decision_function(X_big.toarray())
    assert np.all(np.isfinite(sparse_scores))
    # The huge row has two nonzero terms: a sum of two is the same in any
    # order, so it must match bit for bit (no overflow handled differently).
    assert sparse_scores[0] == dense_scores[0]
    # Other rows: the sparse product adds the stored entries in index order,
    # BLAS adds all d columns in an order of its own (SIMD lanes, blocks,
    # threads). Each side is within (d - 1) u sum_j |x_j w_j| of the exact
    # score (u = eps / 2), so they differ by at most d eps sum_j |x_j w_j|.
    Xr = X_big.toarray()[1:]
    bound = Xr.shape[1] * np.finfo(np.float64).eps * (np.abs(Xr) @ np.abs(clf.coef_.T))
    diff = np.abs(sparse_scores[1:] - dense_scores[1:])
    assert np.all(diff <= bound.ravel())


def test_sparse_truth_is_found_at_the_radius_it_needs():
    """Sparse 0/1 features, balanced labels, a radius above the truth's norm.

    With the intercept a vertex of the coefficients' ball (the old fit), an
    intercept step moves every logit by the radius and the fit spends its
    steps zigzagging on it: 0.043 above the Bayes log-loss after 200 steps
    at radius 30 (truth's l1 norm 12). With its own ball: 0.000.
    """
    rng = np.random.default_rng(0)
    n, d = 3000, 300
    X = sp.random(n, d, density=0.02, random_state=1, format="lil")
    X[:, :4] = (rng.random((n, 4)) < 0.3).astype(float)
    X = X.tocsr()
    X.data[:] = 1.0
    truth = np.zeros(d)
    truth[:4] = [3.0, -3.0, 3.0, -3.0]
    y = (rng.random(n) < 1 / (1 + np.exp(-(X @ truth)))).astype(int)
    clf = _fw(epsilon=math.inf, l1_radius=30.0, fw_steps=200).fit(X, y)
    assert set(range(4)) <= set(np.flatnonzero(clf.coef_.ravel()))
    z = X @ truth
    bayes = np.mean(np.logaddexp(0, z) - y * z)
    p = clf.predict_proba(X)[:, 1]
    fitted = -np.mean(y * np.log(p) + (1 - y) * np.log1p(-p))
    assert fitted < bayes + 0.01
