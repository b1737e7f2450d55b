# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""A fit on a sparse matrix allocates at most twice the matrix's storage.

With about one stored entry per row (1% density, 100 columns), a CSR matrix
holds ~16 bytes a row, so any n-length float64 array a fit keeps or forms
weighs half the matrix: these tests pin that every estimator's default fit
(five other solvers', weighted fits and three-class FERMI too) works on the
sparse rows and blocks of rows, never on n-length temporaries beyond a few. tracemalloc's peak (numpy and scipy
report their buffers to it) is deterministic for a seeded fit, so this is
a unit test, not a benchmark: no time is measured.
"""

import tracemalloc
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_dpfair import (
    DPFERMIClassifier,
    DPLogisticRegression,
    FERMIClassifier,
    HeavyTailDPRegressor,
    SemiDPLinearRegression,
)
from sklearn_dpfair.audit._synthetic import synthetic_inputs

ESTIMATORS = [
    lambda: DPLogisticRegression(epsilon=1.0, classes=[0, 1], random_state=0),
    # Other solvers: a full-batch certified solve on clipped rows, the
    # public-geometry mirror descent, private Frank-Wolfe and the one-pass
    # and localized heavy-tail solvers.
    lambda: DPLogisticRegression(
        solver="output-perturbation", alpha=1e-3, feature_norm_bound=3.0,
        epsilon=1.0, classes=[0, 1], random_state=0,
    ),
    lambda: SemiDPLinearRegression(solver="pda-md", random_state=0),
    # Private Frank-Wolfe: the features (standard normal) are clipped to 3
    # as they are read, never copied.
    lambda: DPLogisticRegression(
        solver="dp-frank-wolfe", l1_radius=5.0, feature_inf_bound=3.0,
        epsilon=1.0, classes=[0, 1], random_state=0,
    ),
    lambda: FERMIClassifier(random_state=0),
    lambda: DPFERMIClassifier(random_state=0),
    lambda: SemiDPLinearRegression(random_state=0),
    lambda: HeavyTailDPRegressor(random_state=0),
    lambda: HeavyTailDPRegressor(solver="sgd", random_state=0),
    # The localized solver's phases, each step capped (what a fit holds does
    # not grow with the steps; its default ~4.5 steps a row take minutes).
    lambda: HeavyTailDPRegressor(solver="localized", max_iter=5, random_state=0),
]


def sparse_inputs(estimator, n_samples, density, dtype, seed=0, n_classes=None):
    """A CSR ``X`` at ``density`` with the estimator's ``y`` and fit arguments.

    ``n_classes`` (a classifier's) makes ``y`` the labels ``0 .. n_classes - 1``
    in turn.
    """
    _, y, fit_params, _ = synthetic_inputs(
        estimator, n_samples=n_samples, n_features=100, random_state=seed
    )
    if n_classes is not None:
        y = np.arange(n_samples) % n_classes
    rng = np.random.default_rng(seed)
    X = sp.random(n_samples, 100, density=density, format="csr", random_state=rng,
                  data_rvs=rng.standard_normal, dtype=dtype)
    return X, y, fit_params


def fit_peak(make_estimator, X, y, fit_params, n_classes=None):
    """tracemalloc's peak during one fit (the inputs, allocated before, excluded)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # A first, untraced fit: what fits memoize (noise calibrations)
        # and first imports are not part of a fit's working memory.
        X_s, y_s, params_s = sparse_inputs(make_estimator(), 1_000, 0.05, X.dtype,
                                           n_classes=n_classes)
        make_estimator().fit(X_s, y_s, **params_s)
        estimator = make_estimator()
        tracemalloc.start()
        try:
            estimator.fit(X, y, **fit_params)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()


def storage(X):
    return X.data.nbytes + X.indices.nbytes + X.indptr.nbytes


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("make_estimator", ESTIMATORS, ids=["DPLogisticRegression", "output-perturbation", "pda-md",
                              "dp-frank-wolfe",
                              "FERMIClassifier", "DPFERMIClassifier",
                              "SemiDPLinearRegression", "HeavyTailDPRegressor",
                              "heavy-tail-sgd", "heavy-tail-localized"])
def test_sparse_fit_peaks_below_twice_the_storage(make_estimator, dtype):
    X, y, fit_params = sparse_inputs(make_estimator(), 50_000, 0.01, dtype)
    ratio = fit_peak(make_estimator, X, y, fit_params) / storage(X)
    assert ratio <= 2.0, f"peak {ratio:.2f}x the CSR storage"


WEIGHTED_ESTIMATORS = {
    "DPLogisticRegression": lambda: DPLogisticRegression(
        epsilon=1.0, classes=[0, 1], random_state=0
    ),
    "output-perturbation": lambda: DPLogisticRegression(
        solver="output-perturbation", alpha=1e-3, feature_norm_bound=3.0,
        epsilon=1.0, classes=[0, 1], random_state=0,
    ),
    "FERMIClassifier": lambda: FERMIClassifier(random_state=0),
    "DPFERMIClassifier": lambda: DPFERMIClassifier(random_state=0),
    "HeavyTailDPRegressor": lambda: HeavyTailDPRegressor(random_state=0),
    "heavy-tail-sgd": lambda: HeavyTailDPRegressor(solver="sgd", random_state=0),
}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", list(WEIGHTED_ESTIMATORS))
def test_weighted_sparse_fit_peaks_below_twice_the_storage(name, dtype):
    # The weights are n-length (half the matrix's storage at one entry per
    # row): a fit keeps their normalized copy, never capped or gathered
    # copies of them, nor a gathered batch of rows.
    make_estimator = WEIGHTED_ESTIMATORS[name]
    X, y, fit_params = sparse_inputs(make_estimator(), 50_000, 0.01, dtype)
    weights = np.random.default_rng(0).uniform(0.5, 2.0, X.shape[0])
    ratio = fit_peak(make_estimator, X, y, {**fit_params, "sample_weight": weights})
    ratio /= storage(X)
    assert ratio <= 2.0, f"peak {ratio:.2f}x the CSR storage"


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sparse_multiclass_fermi_fit_peaks_below_twice_the_storage(dtype):
    # Three classes: the full-batch phase's n x 3 float64 logits (24 bytes a
    # row) alone would outweigh the matrix (~16 bytes a row in float64).
    def make_estimator():
        return FERMIClassifier(random_state=0)

    X, y, fit_params = sparse_inputs(make_estimator(), 50_000, 0.01, dtype, n_classes=3)
    ratio = fit_peak(make_estimator, X, y, fit_params, n_classes=3) / storage(X)
    assert ratio <= 2.0, f"peak {ratio:.2f}x the CSR storage"
