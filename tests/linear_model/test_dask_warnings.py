# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""A Dask fit shows each warning once, as an in-memory fit does.

An in-process cluster (worker threads in the driver's process) resets
Python's registry of shown warnings while a fit runs; the fit's own
once-per-cause memory must not depend on it.
"""

import warnings

import numpy as np
import pytest

from sklearn_dpfair import DPFERMIClassifier, DPLogisticRegression

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")


@pytest.fixture(scope="module")
def threads_client():
    cluster = distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=":0"
    )
    with distributed.Client(cluster) as client:
        yield client
    cluster.close()


def _data(n=200):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] > 0).astype(int)
    s = np.where(np.arange(n) % 3 == 0, "F", "M")
    return X, y, s


@pytest.mark.parametrize(
    "estimator, cause",
    [
        (
            DPLogisticRegression(classes=[0, 1], feature_bounds=(-4, 4), max_iter=2),
            "feature_bounds is ignored",
        ),
        (
            DPFERMIClassifier(classes=[0, 1], groups=["F", "M"], delta=0.5, max_iter=2),
            "is not smaller than 1/n_samples",
        ),
    ],
    ids=["feature_bounds", "delta"],
)
def test_a_dask_fit_shows_each_cause_once(threads_client, estimator, cause):
    # Both fits check the parameter twice (the partitions' map or the
    # distributed data, then the solver's plan): the warning was shown
    # twice at the caller's line under the default filter.
    X, y, s = _data()
    chunked = [da.from_array(a, chunks=(100,) + a.shape[1:]) for a in (X, y, s)]
    kwargs = (
        {"sensitive_features": chunked[2]}
        if isinstance(estimator, DPFERMIClassifier)
        else {}
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        estimator.fit(chunked[0], chunked[1], **kwargs)
    shown = [w for w in caught if cause in str(w.message)]
    assert len(shown) == 1 and shown[0].filename == __file__
