# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""DPLogisticRegression._privacy_plan_event: the event a fit will record, before it."""

import numpy as np
import pytest

from sklearn_dpfair import DPLogisticRegression


def _data(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    return X, (X[:, 0] + rng.normal(size=n) > 0).astype(int)


def test_dp_sgd_planned_event_is_the_fitted_event():
    X, y = _data(1000)
    clf = DPLogisticRegression(classes=[0, 1], max_iter=3, random_state=0)
    planned = clf._privacy_plan_event(*X.shape)
    assert clf.fit(X, y).dp_event_ == planned


@pytest.mark.parametrize("epsilon", [0.5, np.inf])
def test_output_perturbation_planned_event_is_the_fitted_event(epsilon):
    X, y = _data(500)
    clf = DPLogisticRegression(
        solver="output-perturbation", alpha=0.1, feature_norm_bound=3.0,
        classes=[0, 1], epsilon=epsilon, random_state=0,
    )
    planned = clf._privacy_plan_event(*X.shape)
    assert clf.fit(X, y).dp_event_ == planned


def test_frank_wolfe_has_no_plan_yet():
    with pytest.raises(NotImplementedError, match="dp-frank-wolfe"):
        DPLogisticRegression(solver="dp-frank-wolfe", l1_radius=1.0)._privacy_plan_event(
            100, 5
        )
