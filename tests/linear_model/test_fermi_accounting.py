# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""DPFERMIClassifier releases exactly what its dp_event_ accounts, tiny schedules too.

The noisy releases are counted at the mechanism (every
``GaussianMechanism.privatize`` call of the fit), not read from the fit's
own bookkeeping, and the epsilon of what was counted is recomputed with
dp-accounting directly.
"""

import math
import warnings

import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.rdp import RdpAccountant

from sklearn_dpfair import DPFERMIClassifier
from sklearn_dpfair._solvers.fermi._weight_search import PRIVATE_BOUND_WEIGHTS
from sklearn_dpfair.privacy import GaussianMechanism

N, D, EPSILON, DELTA = 300, 4, 2.0, 1e-5
CONSTRAINTS = ["demographic_parity", "equalized_odds", "equal_opportunity"]
# (max_iter, batch_size): T = 1, 2, 3 with batch_size >= n (the schedules
# that ran 6 steps and accounted T), then T = 5, 6, 7 and two subsampled
# ones (q = 1/2: T = 2; q = 1/3: T = 6).
SCHEDULES = [
    (1, 1000),
    (2, "full"),
    (3, N),
    (5, 1000),
    (6, 1000),
    (7, 1000),
    (1, N // 2),
    (2, N // 3),
]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    groups = rng.integers(0, 2, N)
    X = rng.normal(size=(N, D)) + groups[:, None]
    y = (X[:, 0] + 0.5 * rng.normal(size=N) > 0.5).astype(int)
    return X, y, groups


@pytest.fixture
def releases(monkeypatch):
    """(mechanism, shape) of every noisy release of the test, in order.

    The spy of the ``privatized_sums`` fixture, keeping the mechanism.
    """
    seen = []
    original = GaussianMechanism.privatize

    def spy(mechanism, value, rng):
        seen.append((mechanism, tuple(np.shape(value))))
        return original(mechanism, value, rng)

    monkeypatch.setattr(GaussianMechanism, "privatize", spy)
    return seen


def _fit(data, **params):
    X, y, groups = data
    est = DPFERMIClassifier(
        classes=[0, 1],
        groups=[0, 1],
        epsilon=EPSILON,
        delta=DELTA,
        clip_norm=1.0,
        # The steps and the selection only (at these budgets "auto" would
        # also compare the model with the constants: one more release).
        small_budget="fit",
        random_state=0,
        **params,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. a bound not met in few steps
        return est.fit(X, y, sensitive_features=groups)


def _rdp_epsilon(event):
    return RdpAccountant().compose(event).get_epsilon(DELTA)


def _sgd_steps(est, releases):
    # Each step releases the primal block as two draws of its mechanism:
    # the (d, 2) coefficients, then the (2,) intercept.
    coef = [
        mech
        for mech, shape in releases
        if shape == (D, 2)
        and mech.clip_norm == est.clip_norm
        and mech.noise_multiplier == est.noise_multiplier_
    ]
    return len(coef)


@pytest.mark.parametrize("constraint", CONSTRAINTS)
@pytest.mark.parametrize("max_iter, batch_size", SCHEDULES)
def test_disparity_bound_releases_exactly_the_accounted_event(
    data, releases, constraint, max_iter, batch_size
):
    est = _fit(
        data,
        constraint=constraint,
        disparity_bound=0.05,
        max_iter=max_iter,
        batch_size=batch_size,
    )
    hist, sgda, selection = est.dp_event_.events
    q = est.sampling_probability_
    steps = _sgd_steps(est, releases)
    # What ran is what was accounted: T noisy steps ...
    assert steps == sgda.count == est.t_ == est.privacy_record_.steps
    assert steps == math.ceil(max_iter / q - 1e-9)
    # ... one histogram of the (block, group) cells and one release of the
    # k candidates' (label, group, prediction) tables (a Gaussian of
    # sensitivity sqrt(k): one Gaussian(z_sel) event).
    k = len(est.weight_path_)
    histograms = [
        m for m, shape in releases
        if len(shape) == 2 and shape[1] == 2
        and (m.clip_norm, m.noise_multiplier) == (1.0, hist.noise_multiplier)
    ]
    tables = [
        m for m, shape in releases
        if shape == (2, 2, 2)
        and m.noise_multiplier == selection.noise_multiplier
        and m.clip_norm == pytest.approx(math.sqrt(k))
    ]
    assert len(histograms) == 1
    assert len(tables) == k == min(len(PRIVATE_BOUND_WEIGHTS), steps)
    assert est.fairness_weight_ in [p["fairness_weight"] for p in est.weight_path_]
    # The epsilon of the releases counted, by dp-accounting itself, is
    # within the target (calibration is to 1e-3 relative, from below).
    ran = dp_event.ComposedDpEvent(
        [
            dp_event.GaussianDpEvent(hist.noise_multiplier),
            dp_event.SelfComposedDpEvent(sgda.event, steps),
            dp_event.GaussianDpEvent(selection.noise_multiplier),
        ]
    )
    assert _rdp_epsilon(ran) <= EPSILON * (1 + 1e-9)
    assert _rdp_epsilon(est.dp_event_) <= EPSILON * (1 + 1e-9)
    assert est.epsilon_ == pytest.approx(_rdp_epsilon(est.dp_event_), rel=1e-9)


@pytest.mark.parametrize("max_iter, batch_size", [(1, 1000), (2, 1000), (2, N // 3)])
def test_without_bound_the_steps_run_are_the_steps_accounted(
    data, releases, max_iter, batch_size
):
    est = _fit(data, fairness_weight=2.0, max_iter=max_iter, batch_size=batch_size)
    _, sgda = est.dp_event_.events
    assert _sgd_steps(est, releases) == sgda.count == est.t_


def test_the_plan_refuses_what_the_fit_refuses():
    # An overspending noise_multiplier, and counts other than the declared
    # ones (a plan at them is not the fit's plan).
    from sklearn_dpfair.exceptions import PrivacyBudgetError

    clf = DPFERMIClassifier(
        epsilon=1.0, noise_multiplier=2.0, classes=[0, 1], groups=[0, 1]
    )
    with pytest.raises(PrivacyBudgetError, match="noise_multiplier=2 spends"):
        clf.privacy_plan(1500, 3)
    clf = DPFERMIClassifier(classes=[0, 1], groups=[0, 1])
    with pytest.raises(ValueError, match="n_classes=3 disagrees"):
        clf.privacy_plan(3000, 3, n_classes=3)
    with pytest.raises(ValueError, match="n_groups=3 disagrees"):
        clf.privacy_plan(3000, 3, n_groups=3)
    assert clf.privacy_plan(3000, 3, n_groups=1).epsilon <= 1.0


@pytest.mark.parametrize(
    "groups, message",
    [
        ([0, 0, 1], "groups contains duplicate labels"),
        (np.array([0, 1, 1]), "groups contains duplicate labels"),
        ([], "groups must be a non-empty list"),
    ],
)
def test_the_plan_refuses_the_declared_groups_the_fit_refuses(groups, message):
    # One check of the (public) declared groups, before any row is read:
    # no plan is made for a fit that cannot run, and the fit's message
    # names groups, with or without sensitive_features.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    s = rng.integers(0, 2, 60)
    y = (X[:, 0] > 0).astype(int)
    clf = DPFERMIClassifier(classes=[0, 1], groups=groups, random_state=0)
    with pytest.raises(ValueError, match=message):
        clf.privacy_plan(60, 3)
    for sensitive in (s, None):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(ValueError, match=message):
                clf.fit(X, y, sensitive_features=sensitive)
        assert not hasattr(clf, "coef_")


@pytest.mark.parametrize(
    "params, message",
    [
        ({"clip_norm": 1e308}, "clip_norm is too large"),
        ({"dual_clip_norm": 1e308}, "dual_clip_norm is too large"),
        ({"dual_clip_norm": 1e-320}, "dual_clip_norm is too small"),
    ],
)
def test_the_plan_refuses_the_noise_scales_the_fit_refuses(params, message):
    # The fit's Gaussian mechanisms refuse a noise standard deviation that
    # overflows float64 or is subnormal; they are built from the plan's noise
    # and the declared clip norms (public), so the plan refuses them too,
    # with the fit's message, and the fit before its first release.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    s = rng.integers(0, 2, 200)
    y = (X[:, 0] > 0).astype(int)
    clf = DPFERMIClassifier(
        classes=[0, 1], groups=[0, 1], max_iter=2, random_state=0, **params
    )
    with pytest.raises(ValueError, match=message) as planned:
        clf.privacy_plan(200, 3, n_groups=2)
    with pytest.raises(ValueError, match=message) as fitted:
        clf.fit(X, y, sensitive_features=s)
    assert str(planned.value) == str(fitted.value)
    assert not hasattr(clf, "coef_")


def test_the_planned_mechanisms_leave_an_ordinary_plan_unchanged():
    clf = DPFERMIClassifier(
        classes=[0, 1], groups=[0, 1], clip_norm=2.0, dual_clip_norm=0.5
    )
    assert clf.privacy_plan(3000, 3, n_groups=2).epsilon <= 1.0
