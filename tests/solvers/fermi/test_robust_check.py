# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The full-batch phase where a few extreme rows dominate a column's scale.

A sentinel (999999 for a missing age) or one record at 1e6 makes a column's
root mean square and standard deviation thousands of times its other rows'
spread; measured in those units the bulk's gradient looks like 0, and
L-BFGS used to stop at once, far above the minimum, reporting convergence.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import logsumexp
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

from sklearn_dpfair import FERMIClassifier
from sklearn_dpfair._solvers._feature_scaling import exact_feature_scaling
from sklearn_dpfair._solvers.fermi import _newton_polish
from sklearn_dpfair._solvers.fermi._fit import FERMIParams
from sklearn_dpfair._solvers.fermi._lbfgs import (
    DOMINATED,
    _robust_statistics,
    dominated_column_moments,
    refine_full_batch,
)
from sklearn_dpfair._solvers.fermi._model import (
    NetworkFairModel,
    precondition_network,
)
from sklearn_dpfair._solvers.fermi._problem import FairProblem
from sklearn_dpfair.fairness import make_constraint
from sklearn_dpfair.fairness._ermi import ERMIRegularizer

SENTINEL = 999999.0


def _ages(n=500, seed=0, m=2, n_sentinels=3):
    """Raw age and hours columns; a few rows of the last class have age 999999."""
    rng = np.random.default_rng(seed)
    groups = rng.integers(0, 2, n)
    age = rng.normal(40, 12, n) + 3 * groups
    hours = rng.normal(40, 10, n)
    X = np.column_stack([age, hours])
    slopes = np.array([[0.08, 0.05], [-0.04, 0.06]])[: m - 1]
    logits = np.column_stack([np.zeros(n), (X - 40) @ slopes.T])
    y = np.argmax(logits + rng.gumbel(size=(n, m)), axis=1)
    X[np.flatnonzero(y == m - 1)[:n_sentinels], 0] = SENTINEL
    return X, y, groups


def _mean_log_loss(coef, intercept, X, y):
    Z = np.asarray(X @ coef.T) + intercept
    if Z.shape[1] == 1:
        Z = np.column_stack([np.zeros(len(y)), Z[:, 0]])
    return float(np.mean(logsumexp(Z, axis=1) - Z[np.arange(len(y)), y]))


def _sklearn_log_loss(X, y):
    """The unpenalized minimum, by scikit-learn on robustly standardized columns."""
    center = np.median(X, axis=0)
    spread = np.subtract(*np.percentile(X, [75, 25], axis=0))
    fit = LogisticRegression(C=np.inf, tol=1e-12, max_iter=10000)
    fit.fit((X - center) / spread, y)
    coef = fit.coef_ / spread
    return _mean_log_loss(coef, fit.intercept_ - coef @ center, X, y)


def _problem(X, y, codes, m=2, final_max_iter=1000):
    constraint = make_constraint("demographic_parity")
    groups = np.bincount(codes, minlength=2) / codes.size
    return FairProblem(
        X=X,
        X_solver=X,
        y=y,
        codes=codes,
        blocks=constraint.block_index(y),
        n_classes=m,
        n_groups=2,
        regularizer=ERMIRegularizer(groups[None, :], np.ones(1), m),
        weight_scale=1.0,
        params=FERMIParams(
            constraint=constraint, tol=1e-4, final_max_iter=final_max_iter
        ),
    )


def _columns(n=2000, seed=0):
    """Sentinel, normal, rare one-hot, 0/1 and heavy-tailed columns."""
    rng = np.random.default_rng(seed)
    X = np.column_stack(
        [
            rng.normal(40, 12, n),
            rng.normal(size=n),
            rng.random(n) < 0.004,
            rng.random(n) < 0.3,
            rng.standard_t(3, size=n),
        ]
    )
    X[:5, 0] = SENTINEL
    return X


def test_a_few_extreme_rows_dominate_a_column_and_nothing_else_does():
    X = _columns()
    mean, sd = X.mean(axis=0), X.std(axis=0)
    location, scale = dominated_column_moments(X, mean, sd)
    bulk = X[5:, 0]
    assert location[0] == np.quantile(X[:, 0], 0.5, method="inverted_cdf")
    assert 0.8 * bulk.std() < scale[0] < 1.2 * bulk.std()
    # The other columns keep their moments bit for bit.
    assert np.array_equal(location[1:], mean[1:])
    assert np.array_equal(scale[1:], sd[1:])
    # Without the sentinels no column is dominated.
    clean = X[5:]
    moments = clean.mean(axis=0), clean.std(axis=0)
    assert dominated_column_moments(clean, *moments) is None


@pytest.mark.parametrize("center", [True, False])
def test_integer_weights_give_the_robust_statistics_of_repeated_rows(center):
    X = _columns(n=400)
    weights = np.random.default_rng(1).integers(0, 4, X.shape[0]).astype(float)
    repeated = np.repeat(X, weights.astype(int), axis=0)
    kept = weights > 0
    got = _robust_statistics(np.ascontiguousarray(X[kept].T), weights[kept], center)
    want = _robust_statistics(np.ascontiguousarray(repeated.T), None, center)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("center", [True, False])
def test_the_reach_test_skips_only_columns_that_cannot_be_dominated(
    center, weighted, sparse
):
    # Columns near the threshold of DOMINATED (a bulk, zero on a share of
    # the rows for some, and k rows at 10**e): the one-pass reach test must
    # keep every column the full robust statistics find dominated, sparse
    # columns (their rows not stored as one value 0) as dense ones.
    rng = np.random.default_rng(3)
    n, d = 1000, 150
    X = rng.normal(size=(n, d)) * rng.uniform(0.01, 10, d) + rng.normal(0, 5, d)
    for j in range(d):
        if j % 2:
            X[rng.random(n) > 10.0 ** rng.uniform(-2.5, -0.2), j] = 0.0
        k = rng.integers(1, 20)
        X[rng.choice(n, k, replace=False), j] = 10.0 ** rng.uniform(0, 6)
    X[:, -1] = rng.random(n) < 0.008
    w = rng.uniform(0.2, 3.0, n) if weighted else None
    avg = np.average(X, axis=0, weights=w) if center else np.zeros(d)
    scale = np.sqrt(np.average((X - avg) ** 2, axis=0, weights=w))
    got = dominated_column_moments(
        sp.csr_matrix(X) if sparse else X, avg, scale, w, center=center
    )
    median, robust = _robust_statistics(np.ascontiguousarray(X.T), w, center)
    dominated = (robust > 0) & (scale > DOMINATED * robust)
    assert 0 < dominated.sum() < d
    np.testing.assert_array_equal(got[0], np.where(dominated, median, avg))
    np.testing.assert_allclose(
        got[1], np.where(dominated, robust, scale), rtol=1e-12, atol=0
    )


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("m", [2, 3])
def test_sentinel_rows_do_not_stop_the_fit_above_the_minimum(m, sparse):
    X, y, groups = _ages(m=m)
    best = _sklearn_log_loss(X, y)
    Xf = sp.csr_matrix(X) if sparse else X
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        fit = FERMIClassifier(fairness_weight=0.0, random_state=0).fit(
            Xf, y, sensitive_features=groups
        )
    assert fit.stationarity_ <= 1e-4
    assert _mean_log_loss(fit.coef_, fit.intercept_, X, y) < best + 1e-5


def test_one_extreme_row_against_its_label_is_polished_to_the_minimum():
    # The row at (1e6, 1e6) of label 0 keeps its logit moderate at the
    # minimum: along (1, 1) it adds curvature ~1e10 times the bulk's, which
    # the exact Hessian's metric follows and a diagonal scaling cannot.
    rng = np.random.default_rng(2)
    n = 200
    groups = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 2)) + groups[:, None]
    y = (X[:, 0] + rng.normal(size=n) > 0.5).astype(int)
    X[0], y[0] = 1e6, 0
    fit = LogisticRegression(C=np.inf, tol=1e-12, max_iter=10000).fit(X, y)
    best = _mean_log_loss(fit.coef_, fit.intercept_, X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        ours = FERMIClassifier(fairness_weight=0.0, random_state=0).fit(
            X, y, sensitive_features=groups
        )
    assert _mean_log_loss(ours.coef_, ours.intercept_, X, y) < best + 1e-5


@pytest.mark.parametrize("m", [2, 3])
def test_a_fair_fit_reaches_the_minimum_of_the_robust_coordinates(m):
    X, y, groups = _ages(m=m)
    problem = _problem(X, y, groups, m=m)
    start = problem.start()
    # What the root-mean-square and standardized phases reach: "converged"
    # in their units, far above the minimum.
    fooled = problem.refine_standardized(4.0, problem.refine_scaled(4.0, *start, 1e-4))
    assert fooled.converged
    refined = problem.refine(4.0, *start)
    assert refined.converged and refined.stationarity <= 1e-4
    assert refined.objective < fooled.objective - 1e-2
    assert problem.objective(4.0, refined.coef, refined.w0) == pytest.approx(
        refined.objective, rel=1e-12
    )


def test_a_point_still_short_of_tol_is_reported_not_converged():
    X, y, groups = _ages()
    problem = _problem(X, y, groups)
    fooled = problem.refine_standardized(
        0.0, problem.refine_scaled(0.0, *problem.start(), 1e-4)
    )
    assert fooled.converged
    # One iteration of the robust phase cannot reach tol from there.
    problem.params = FERMIParams(
        constraint=problem.params.constraint, tol=1e-4, final_max_iter=1
    )
    checked = problem.refine_robust(0.0, fooled)
    assert not checked.converged
    assert checked.stationarity > 1e-2
    assert checked.at_limit


def test_without_a_dominated_column_the_point_is_returned_as_it_is():
    X, y, groups = _ages(n_sentinels=0)
    X = np.column_stack([X, np.arange(X.shape[0]) % 300 == 0])  # a rare category
    problem = _problem(X, y, groups)
    assert problem._dominated_moments is None
    refined = problem.refine_standardized(
        4.0, problem.refine_scaled(4.0, *problem.start(), 1e-4)
    )
    assert problem.refine_robust(4.0, refined) is refined


@pytest.mark.parametrize("fairness_weight", [0.0, 8.0])
def test_the_centred_coordinates_hessian_is_the_gradient_derivative(
    monkeypatch, fairness_weight
):
    # The polish in robust, centred coordinates: the Hessian it is given is
    # the derivative of the gradient it minimises (both carried through the
    # change of coordinates).
    X, y, groups = _ages(n=500)
    problem = _problem(X, y, groups)
    location, scale = problem._dominated_moments
    seen = {}

    def spy(fun, u0, value, grad, hessian, **kwargs):
        seen.update(fun=fun, u0=u0, grad=grad, hessian=hessian)
        raise StopIteration

    monkeypatch.setattr(_newton_polish, "preconditioned_polish", spy)
    coef = np.array([[-0.02, 0.02], [-0.01, 0.01]])
    with pytest.raises(StopIteration):
        refine_full_batch(
            X, y, coef=coef, w0=np.array([1.0, -1.0]), tol=1e-4, max_iter=100,
            second_order=True, scale=scale, center=location,
            fairness_weight=fairness_weight, **problem._objective_terms(),
        )
    fun, u0 = seen["fun"], seen["u0"]
    step = 1e-6
    eye = np.eye(u0.size)
    jacobian = np.column_stack(
        [(fun(u0 + step * e)[1] - fun(u0 - step * e)[1]) / (2 * step) for e in eye]
    )
    slopes = [(fun(u0 + step * e)[0] - fun(u0 - step * e)[0]) / (2 * step) for e in eye]
    np.testing.assert_allclose(seen["grad"], slopes, rtol=1e-5, atol=1e-9)
    np.testing.assert_allclose(seen["hessian"](u0), jacobian, rtol=1e-4, atol=1e-7)


def test_a_network_preconditions_a_dominated_column_by_its_robust_scale():
    X, y, groups = _ages()
    net = NetworkFairModel((2, 4, 2), "tanh", 1.0, (), ())
    Xp, scaling, _ = precondition_network(net, X, None)
    assert scaling.location[0] == np.quantile(X[:, 0], 0.5, method="inverted_cdf")
    bulk = Xp[X[:, 0] != SENTINEL, 0]
    # The ages vary on a unit scale (by the standard deviation: by 1e-3).
    assert 0.5 < bulk.std() < 2.0
    # Without the sentinels: the columns' moments, as before.
    clean = X[X[:, 0] != SENTINEL]
    _, plain, _ = precondition_network(net, clean, None)
    moments = exact_feature_scaling(clean)
    np.testing.assert_array_equal(plain.location, moments.location)
    np.testing.assert_array_equal(plain.scale, np.maximum(moments.scale, 1.0))


def _conditioned(kind, n=1500, seed=0):
    """Columns of several kinds: offsets near the one-pass moments' limit too."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6)) * [1.0, 1e-3, 30.0, 1.0, 1e3, 2.0]
    # Variances 1.2% of the mean square (columns 1, 3), 0.02% (a year).
    X += [0.0, 9e-3, 1990.0, 9.0, -2e3, 0.0]
    X[:, 5] = rng.random(n) < 0.004  # a rare category
    if kind == "heavy":
        X[:, 0] = rng.standard_t(2, size=n)
    elif kind == "sentinel":
        X[:4, 0] = SENTINEL
    return X


@pytest.mark.parametrize("kind", ["normal", "heavy", "sentinel"])
@pytest.mark.parametrize("form", ["dense", "float32", "weighted", "csr"])
def test_the_one_pass_checks_stand_for_the_two_pass_ones(kind, form):
    # Skipping column_moments' passes on well-conditioned columns changes
    # no decision: the one-pass gradient bound is at least the exact one,
    # and where the one-pass reach test finds no candidate, the exact
    # moments find no dominated column either.
    X = _conditioned(kind)
    y = (X[:, 3] > 9).astype(int)
    codes = np.arange(y.size) % 2
    if form == "float32":
        X = X.astype(np.float32)
    elif form == "csr":
        X = sp.csr_matrix(X)
    for columns in ([0, 3, 5], [0, 1, 3, 4], list(range(6))):
        part = X[:, columns]
        problem = _problem(part, y, codes)
        if form == "weighted":
            problem.sample_weight = np.random.default_rng(4).uniform(0.2, 3, y.size)
        exact = problem._hidden_gradient_bound
        quick = problem._one_pass_gradient_bound
        assert quick >= exact
        if 2 in columns:
            # An offset far above the spread: the one-pass moments step aside.
            assert problem._one_pass_moments is None and quick == np.inf
        else:
            assert quick < 1.01 * exact
        mean, scale = problem._column_moments
        full = dominated_column_moments(part, mean, scale, problem.sample_weight)
        assert (problem._dominated_moments is None) == (full is None)
        assert (full is None) == (kind != "sentinel" or 0 not in columns)


@pytest.mark.parametrize("center", [True, False])
def test_columns_of_two_values_are_not_sorted(monkeypatch, center):
    # A rare 0/1 column cannot be dominated; without centring its two values
    # are 0 and the other extreme (the shortcut compared with 0 twice, and
    # sorted every such column).
    from sklearn_dpfair._solvers.fermi import _lbfgs

    sorted_columns = []

    def counting(values, weights, centre):
        sorted_columns.append(values.shape[0])
        return original(values, weights, centre)

    original = _lbfgs._robust_statistics
    monkeypatch.setattr(_lbfgs, "_robust_statistics", counting)
    rng = np.random.default_rng(0)
    X = (rng.random((5000, 4)) < 0.002).astype(float)
    X[:, 1] *= -3.0
    mean = X.mean(axis=0) if center else np.zeros(4)
    scale = X.std(axis=0) if center else np.sqrt((X * X).mean(axis=0))
    assert _lbfgs.dominated_column_moments(X, mean, scale, center=center) is None
    assert sum(sorted_columns) == 0
