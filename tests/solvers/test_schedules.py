# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Public DP-SGD schedules: the number of epochs chosen from n."""

import warnings

import numpy as np
import pytest

from sklearn_dpfair import DPLogisticRegression
from sklearn_dpfair._solvers._schedules import (
    AUTO_EPOCHS_MAX,
    MAX_STEPS,
    auto_epochs,
    check_penalty_step,
    check_sgd_steps,
    penalty_capped_learning_rate,
    resolve_epochs,
    sgd_schedule,
)


@pytest.mark.parametrize(
    "n, epochs",
    [(300, 20), (30_162, 20), (50_000, 20), (50_001, 20), (100_000, 10),
     (200_000, 5), (500_000, 2), (10**7, 2)],
)
def test_auto_epochs_fall_with_n(n, epochs):
    assert auto_epochs(n) == epochs
    _, steps = sgd_schedule(n, "auto", "auto")
    assert steps == sgd_schedule(n, "auto", epochs)[1]


def test_auto_keeps_twenty_epochs_up_to_fifty_thousand_rows():
    # UCI Adult (30,162 rows) and every smaller fit are unchanged.
    assert all(auto_epochs(n) == AUTO_EPOCHS_MAX for n in (1, 1000, 30_162, 50_000))
    assert resolve_epochs(20, 10**6) == 20


def test_estimator_plans_and_reports_the_resolved_epochs():
    clf = DPLogisticRegression(classes=[0, 1], delta=1e-7, random_state=0)
    # 2 epochs of q = 0.05 at a million rows: 40 steps, planned without data.
    event = clf.privacy_plan(10**6, 100).dp_event
    assert event.count == 40
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200_000, 2))
    y = (X[:, 0] > 0).astype(int)
    clf.fit(X, y)
    assert clf.n_iter_ == 5 and clf.t_ == 100
    assert clf.dp_event_ == clf.privacy_plan(*X.shape).dp_event


def test_penalty_step_that_diverges_is_refused_before_the_data():
    # 1 - learning_rate * alpha <= -1 amplifies the coefficients every step.
    check_penalty_step(1.0, 1.99)
    check_penalty_step(50.0, 0.0)
    with pytest.raises(ValueError, match="learning_rate \\* alpha must be below 2"):
        check_penalty_step(1.0, 2.0)
    X = np.zeros((10, 2))
    y = np.array([0, 1] * 5)
    est = DPLogisticRegression(alpha=5.0, learning_rate=1.0, classes=[0, 1])
    with pytest.raises(ValueError, match="learning_rate=1.0, alpha=5.0"):
        est.privacy_plan(3000, 3)
    with pytest.raises(ValueError, match="learning_rate=1.0, alpha=5.0"):
        est.fit(X, y)


def test_auto_learning_rate_is_capped_for_the_penalty():
    assert penalty_capped_learning_rate(8.0, 0.0) == 8.0
    assert penalty_capped_learning_rate(0.5, 1.0) == 0.5
    assert penalty_capped_learning_rate(8.0, 0.3) == pytest.approx(1 / 0.3)


def test_a_float16_alpha_caps_the_auto_step_in_float64():
    # 1 / np.float16(6e-8) overflowed float16 (a RuntimeWarning, and an
    # infinite cap that happened to leave the step alone).
    alpha = np.float16(6e-8)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        assert penalty_capped_learning_rate(8.0, alpha) == 8.0
        assert penalty_capped_learning_rate(1e9, alpha) == 1.0 / float(alpha)
        check_penalty_step(1e5, np.float16(1e-5))
        with pytest.raises(ValueError, match="learning_rate \\* alpha"):
            check_penalty_step(1e5, np.float16(1.0))


@pytest.mark.parametrize(
    "n, batch_size, epochs", [(10**6, 1_000, 20), (10**6, "auto", "auto"),
                              (10**7, "auto", AUTO_EPOCHS_MAX), (300, "auto", "auto")],
)
def test_default_schedules_are_far_below_the_step_cap(n, batch_size, epochs):
    _, steps = sgd_schedule(n, batch_size, epochs)
    assert steps * 10 <= MAX_STEPS
    check_sgd_steps(n, batch_size, epochs)


@pytest.mark.parametrize(
    "batch_size, epochs, match",
    [("auto", 10**30, "max_iter=1e\\+30 epochs take at least"),
     ("auto", 10**308, "max_iter=1e\\+308 epochs take at least"),
     (1, MAX_STEPS // 1000 + 1, "batch_size=1 of n_samples=1000"),
     (10, 10**5, "take 10000000 steps")],
)
def test_a_schedule_beyond_the_step_cap_is_refused(batch_size, epochs, match):
    with pytest.raises(ValueError, match=match) as info:
        check_sgd_steps(1000, batch_size, epochs)
    assert "smaller max_iter" in str(info.value)
    # At the cap exactly, accepted.
    check_sgd_steps(1000, 1, MAX_STEPS // 1000)


@pytest.mark.parametrize(
    "epochs, match",
    [(MAX_STEPS + 1, "max_iter=1000001 epochs"),
     (10**19 + 1, "max_iter=10000000000000000001 epochs"),
     (10**400, "max_iter=about 2\\*\\*1329 "),
     (10**5000, "max_iter=about 2\\*\\*16610 ")],
    ids=["cap+1", "10**19+1", "10**400", "10**5000"],
)
def test_epochs_alone_are_checked_before_the_rows_are_known(epochs, match):
    # n_samples=None: what a fit checks before it reads the data. An int too
    # large for a float is named by its size (formatting it as a float
    # raised OverflowError, and Python refuses to print 4,300+ digits).
    with pytest.raises(ValueError, match=match):
        check_sgd_steps(None, "auto", epochs)
    check_sgd_steps(None, 1, MAX_STEPS)


def test_an_auto_schedule_beyond_the_step_cap_names_its_epochs():
    # max_iter="auto" at n = 60,000 is 17 epochs; with batch_size=1 that is
    # 1,020,000 steps: the message says what "auto" resolved to.
    with pytest.raises(ValueError, match=r"max_iter='auto' \(17 epochs\) of batches"):
        check_sgd_steps(60_000, 1, "auto")
