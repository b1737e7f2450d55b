# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""FairProblem's full-batch start and its standardized continuation (raw columns)."""

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_dpfair._solvers.fermi._fit import FERMIParams
from sklearn_dpfair._solvers.fermi._problem import (
    FairProblem,
)
from sklearn_dpfair.fairness import make_constraint
from sklearn_dpfair.fairness._ermi import ERMIRegularizer

# A year-like and a price-like column: offsets far above their spreads.
SCALES = np.array([30.0, 1e-3, 1.0])
SHIFTS = np.array([1990.0, 1e5, 0.0])


def _data(n=2000, m=2, seed=0):
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, SCALES.size))
    logits = Z @ rng.normal(size=(SCALES.size, m)) * 2
    y = np.argmax(logits + rng.gumbel(size=(n, m)), axis=1)
    codes = (Z[:, 2] > 0).astype(int)
    return Z, y, codes


def _problem(X, y, codes, m=2, weights=None):
    constraint = make_constraint("demographic_parity")
    blocks = constraint.block_index(y)
    # The group marginals of the fit: weighted as the penalty's terms are.
    w = np.ones(codes.size) if weights is None else weights
    groups = np.bincount(codes, weights=w, minlength=2) / w.sum()
    return FairProblem(
        X=X,
        X_solver=X,
        y=y,
        codes=codes,
        blocks=blocks,
        n_classes=m,
        n_groups=2,
        regularizer=ERMIRegularizer(groups[None, :], np.ones(1), m),
        weight_scale=1.0,
        params=FERMIParams(constraint=constraint, tol=1e-4, final_max_iter=1000),
        sample_weight=weights,
    )


@pytest.mark.parametrize("m", [2, 3])
@pytest.mark.parametrize("weighted", [False, True])
def test_the_linear_start_objective_is_log_m(m, weighted):
    # At 0 every class has probability 1/m in every row: mean loss log m
    # (weights of mean 1), no dependence on the group, no penalty.
    Z, y, codes = _data(m=m)
    w = np.random.default_rng(1).uniform(0.1, 3.0, y.size) if weighted else None
    w = None if w is None else w / w.mean()
    problem = _problem(Z * SCALES + SHIFTS, y, codes, m=m, weights=w)
    assert problem._start_objective(4.0) == pytest.approx(math.log(m), rel=1e-12)
    assert problem.objective(4.0, *problem.start()) == pytest.approx(math.log(m))


def test_a_worse_warm_start_is_dropped_and_a_better_one_kept():
    Z, y, codes = _data()
    problem = _problem(Z * SCALES + SHIFTS, y, codes)
    solved = problem.refine(4.0, *problem.start())
    coef, w0 = solved.coef, solved.w0
    kept = problem.better_start(4.0, coef, w0)
    assert kept[0] is coef and kept[1] is w0
    # Saturated logits, as constant SGDA steps reach on raw columns.
    saturated = -1e3 * coef
    assert problem.better_start(4.0, saturated, w0)[0] is not saturated
    assert not np.any(problem.better_start(4.0, saturated, w0)[0])


def test_the_standardized_continuation_reaches_the_minimum_on_raw_columns():
    Z, y, codes = _data()
    raw = _problem(Z * SCALES + SHIFTS, y, codes)
    standard = _problem((Z - Z.mean(axis=0)) / Z.std(axis=0), y, codes)
    best = standard.refine(4.0, *standard.start()).objective
    # The root-mean-square preconditioning meets tol in its coordinates
    # well above the minimum: the 1e-3 column sits at 1e5.
    rms = raw.refine_scaled(4.0, *raw.start(), raw.params.tol)
    assert rms.converged
    assert rms.objective > best * 1.01
    assert raw.standardized_stationarity(4.0, rms.coef, rms.w0) > 10 * raw.params.tol
    continued = raw.refine_standardized(4.0, rms)
    assert continued.converged
    assert continued.stationarity <= raw.params.tol
    assert continued.objective == pytest.approx(best, rel=1e-4)


def test_a_point_stationary_in_standardized_coordinates_is_returned_as_it_is():
    Z, y, codes = _data()
    standard = _problem((Z - Z.mean(axis=0)) / Z.std(axis=0), y, codes)
    solved = standard.refine_scaled(4.0, *standard.start(), standard.params.tol)
    assert standard.refine_standardized(4.0, solved) is solved


@pytest.mark.parametrize("shift", [0.0, 3.0, 1e3])
@pytest.mark.parametrize("m", [2, 3])
def test_the_standardized_gradient_is_within_its_bound(shift, m):
    # The bound that lets well-conditioned columns skip the check: at any
    # point, max |standardized gradient| <= bound * max |refine's gradient|.
    Z, y, codes = _data(m=m)
    X = Z * [1.0, 0.1, 10.0] + shift
    problem = _problem(X, y, codes, m=m)
    rng = np.random.default_rng(2)
    for iters in (1, 3, 10):
        start = (rng.normal(size=(X.shape[1], m)) * 0.01, rng.normal(size=m))
        problem.params = FERMIParams(
            constraint=problem.params.constraint, tol=1e-4, final_max_iter=iters
        )
        point = problem.refine_scaled(4.0, *start, problem.params.tol)
        standardized = problem.standardized_stationarity(4.0, point.coef, point.w0)
        assert standardized <= problem._hidden_gradient_bound * point.stationarity * (
            1 + 1e-9
        )


def test_the_gradient_bound_of_a_row_near_the_largest_float_does_not_overflow():
    # A finite row of 1e300 squares past the largest float; the root mean
    # square it enters is finite, and so is the bound, without a warning.
    Z, y, codes = _data(n=200)
    Z[3] = 1e300
    problem = _problem(Z, y, codes)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        bound = problem._hidden_gradient_bound
    assert 1.0 <= bound < np.inf


@pytest.mark.parametrize("m", [2, 3])
@pytest.mark.parametrize("weighted", [False, True])
def test_the_sparse_continuation_reaches_the_dense_minimum_on_raw_columns(
    m, weighted
):
    # A sparse X is centred implicitly (never densified): the continuation
    # reaches the minimizer the dense one does, where the root-mean-square
    # scaling alone stops far above it (the 1e-3 column sits at 1e5).
    Z, y, codes = _data(m=m)
    w = np.random.default_rng(1).uniform(0.1, 3.0, y.size) if weighted else None
    w = None if w is None else w / w.mean()
    X = Z * SCALES + SHIFTS
    X[::3, 2] = 0.0  # some entries not stored
    dense = _problem(X, y, codes, m=m, weights=w)
    sparse = _problem(sp.csr_matrix(X), y, codes, m=m, weights=w)
    best = dense.refine(4.0, *dense.start()).objective
    rms = sparse.refine_scaled(4.0, *sparse.start(), sparse.params.tol)
    assert rms.objective > best * 1.01
    continued = sparse.refine(4.0, *sparse.start())
    assert continued.converged
    assert continued.stationarity <= sparse.params.tol
    assert sparse.standardized_stationarity(
        4.0, continued.coef, continued.w0
    ) == pytest.approx(continued.stationarity, rel=1e-6)
    assert continued.objective == pytest.approx(best, rel=1e-6)
