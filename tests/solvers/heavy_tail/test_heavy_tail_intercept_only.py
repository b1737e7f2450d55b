# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The intercept-only model of the "dp-sgd" solver below the minimum signal.

Its two releases (the target's range histogram and the quantile) move by
their sensitivities on neighbouring datasets, whatever the added record
holds, and the recorded event is the plan's.
"""

import warnings

import numpy as np
import pytest
from release_observer import capture_mechanism_inputs

from sklearn_dpfair import HeavyTailDPRegressor
from sklearn_dpfair._solvers.heavy_tail._dpsgd import affordable_level


def _fit(X, y, **params):
    # 20 rows at epsilon = 4: eps * n = 80, below the minimum of 100.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return HeavyTailDPRegressor(epsilon=4.0, random_state=0, **params).fit(X, y)


@pytest.mark.parametrize(
    "extra_x, extra_y, weight",
    [([1e300, -1e300], 1.7e308, 1e6), ([0.0, 0.0], 155.0, 1.0), ([1.0, 2.0], -1e9, 0.0)],
    ids=["huge", "inside", "far-below-weightless"],
)
def test_releases_move_by_their_sensitivity(extra_x, extra_y, weight, monkeypatch):
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(20, 2)), rng.uniform(150.0, 160.0, size=20)
    seen = capture_mechanism_inputs(monkeypatch)
    first = _fit(X, y)
    before = list(seen)
    seen.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        second = HeavyTailDPRegressor(epsilon=4.0, random_state=0).fit(
            np.vstack([X, extra_x]),
            np.append(y, extra_y),
            sample_weight=np.append(np.ones(20), weight),
        )
    for reg in (first, second):
        assert np.all(reg.coef_ == 0) and np.isfinite(reg.intercept_)
        assert set(reg.rho_spent_) == {"target_range", "target_location"}
    assert [k for k, _, _ in before] == [k for k, _, _ in seen] == [
        "gaussian", "exponential"
    ]
    for (kind, a, bound), (_, b, _) in zip(before, seen):
        assert a.shape == b.shape and np.all(np.isfinite(a)) and np.all(np.isfinite(b))
        if kind == "gaussian":
            assert bound == 1.0 and np.linalg.norm(a - b) <= 1.0
        else:
            assert bound == 0.5 and np.max(np.abs(a - b)) <= 0.5 + 1e-12
    assert first.dp_event_ == second.dp_event_
    assert first.epsilon_ == second.epsilon_ <= 4.0


def test_the_recorded_event_is_the_plan():
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(20, 2)), rng.uniform(150.0, 160.0, size=20)
    reg = _fit(X, y, loss="quantile", quantile=0.8)
    assert reg.dp_event_ == reg.privacy_plan(20, 2).dp_event
    # The whole budget: the two zCDP releases certify just under epsilon.
    assert 3.5 < reg.epsilon_ <= 4.0
    assert reg.intercept_ == reg.target_location_


def test_the_affordable_level_is_the_loss_level_with_enough_signal():
    assert affordable_level(0.9, np.inf, 10) == 0.9
    assert affordable_level(0.9, 0.01, 2000) == 0.9
    assert affordable_level(0.5, 1e-9, 10) == 0.5
    # Moved toward 1/2 monotonically as the signal falls, never past it.
    levels = [affordable_level(0.95, 0.01, n) for n in (2000, 600, 300, 100, 10)]
    assert levels == sorted(levels, reverse=True) and levels[-1] == 0.5
    assert 1.0 - affordable_level(0.05, 0.01, 300) == pytest.approx(
        affordable_level(0.95, 0.01, 300)
    )
