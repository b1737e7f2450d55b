# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""What runs is what is accounted: the release log and its check in every fit."""

import warnings

import numpy as np
import pytest

from sklearn_dpfair import (
    DPFERMIClassifier,
    DPLogisticRegression,
    HeavyTailDPRegressor,
    SemiDPLinearRegression,
)
from sklearn_dpfair.exceptions import PrivacyAccountingError
from sklearn_dpfair.privacy import GaussianMechanism
from sklearn_dpfair.privacy._accounting import (
    composed_event,
    exponential_mechanism_event,
    zcdp_event,
)
from sklearn_dpfair.privacy._exponential import ExponentialMechanism
from sklearn_dpfair.privacy._releases import (
    check_releases,
    expected_releases,
    logged_releases,
    parallel_parts,
)

RNG = np.random.default_rng(0)


def _release(mechanism, times=1):
    for _ in range(times):
        mechanism.privatize(np.zeros(3), RNG)


def test_each_gaussian_release_is_logged_once_blocks_included():
    mechanism = GaussianMechanism(1.0, 2.0)
    with logged_releases() as log:
        _release(mechanism, 2)
        # A stacked sum privatized block by block is one release.
        mechanism.privatize_blocks([np.zeros(2), np.zeros(1)], RNG)
        mechanism.privatize_symmetric(np.eye(2), RNG)
    assert dict(log.counts) == {("gaussian", 2.0): 4}


def test_privatize_blocks_draws_the_noise_of_separate_calls():
    # Same generator state: the same noise, block by block, in order.
    mechanism = GaussianMechanism(1.0, 1.5)
    blocks = [np.arange(3.0), np.array([7.0])]
    together = mechanism.privatize_blocks(blocks, np.random.default_rng(3))
    rng = np.random.default_rng(3)
    apart = [mechanism.privatize(b, rng) for b in blocks]
    for a, b in zip(together, apart):
        np.testing.assert_array_equal(a, b)


def test_noiseless_releases_and_argmax_selections_are_not_logged():
    with logged_releases() as log:
        _release(GaussianMechanism(np.inf, 0.0))
        ExponentialMechanism(1.0, np.inf).select(np.arange(3.0), RNG)
    assert not log.counts


def test_a_selection_is_logged_as_its_zcdp_part():
    mechanism = ExponentialMechanism(1.0, 2.0)
    with logged_releases() as log:
        mechanism.select(np.arange(4.0), RNG)
        mechanism.select(np.arange(4.0), RNG)
    check_releases(log, exponential_mechanism_event(2.0, steps=2), what="t")
    with pytest.raises(PrivacyAccountingError):
        check_releases(log, exponential_mechanism_event(2.0, steps=1), what="t")


def test_one_release_more_or_less_than_accounted_raises():
    mechanism = GaussianMechanism(1.0, 2.0)
    with logged_releases() as log:
        _release(mechanism, 3)
    event = mechanism.event(sampling_probability=0.1, steps=3)
    check_releases(log, event, what="fit")
    for steps in (2, 4):
        with pytest.raises(PrivacyAccountingError, match="3 x gaussian"):
            check_releases(
                log, mechanism.event(sampling_probability=0.1, steps=steps), what="fit"
            )
    # Another noise level is another release.
    with pytest.raises(PrivacyAccountingError):
        check_releases(log, GaussianMechanism(1.0, 2.5).event(steps=3), what="fit")
    # Fewer releases than accounted pass only when asked (a silo).
    check_releases(log, mechanism.event(steps=4), what="silo", at_most=True)
    with pytest.raises(PrivacyAccountingError):
        check_releases(log, mechanism.event(steps=2), what="silo", at_most=True)


def test_a_gaussian_release_may_be_accounted_as_its_zcdp_part():
    # Bun and Steinke: a Gaussian of noise multiplier z is 1/(2 z^2)-zCDP.
    mechanism = GaussianMechanism(1.0, 4.0)
    with logged_releases() as log:
        _release(mechanism)
    check_releases(log, zcdp_event(0.5 / 4.0**2), what="fit")
    with pytest.raises(PrivacyAccountingError):
        check_releases(log, zcdp_event(0.5 / 4.0**2 * 1.001), what="fit")


def test_a_selection_is_never_accounted_as_a_gaussian_of_its_rho():
    # A rho-zCDP selection need not be dominated by the Gaussian whose
    # privacy-loss distribution a GaussianDpEvent is converted with.
    epsilon0 = 1.0
    rho = epsilon0**2 / 8.0
    gaussian = GaussianMechanism(1.0, (0.5 / rho) ** 0.5)
    with logged_releases() as log:
        ExponentialMechanism(1.0, epsilon0).select(np.arange(4.0), RNG)
    check_releases(log, exponential_mechanism_event(epsilon0), what="fit")
    with pytest.raises(PrivacyAccountingError, match="zcdp"):
        check_releases(log, gaussian.event(), what="fit")
    # A Gaussian and a selection of the same rho fill a Gaussian and a zCDP
    # part, whichever order the plan lists them in, but not two Gaussians.
    with logged_releases() as both:
        _release(gaussian)
        ExponentialMechanism(1.0, epsilon0).select(np.arange(4.0), RNG)
    check_releases(
        both,
        composed_event([zcdp_event(rho), gaussian.event()]),
        what="fit",
    )
    with pytest.raises(PrivacyAccountingError):
        check_releases(both, gaussian.event(steps=2), what="fit")
    # Fewer releases than accounted, when asked, still never a selection for
    # a Gaussian.
    check_releases(
        both, composed_event([zcdp_event(rho), gaussian.event(steps=2)]),
        what="silo", at_most=True,
    )
    with pytest.raises(PrivacyAccountingError):
        check_releases(both, gaussian.event(steps=3), what="silo", at_most=True)


def test_nested_logs_pass_their_releases_on():
    with logged_releases() as outer:
        _release(GaussianMechanism(1.0, 1.0))
        with logged_releases() as inner:
            _release(GaussianMechanism(1.0, 3.0))
        with logged_releases(propagate=False):
            _release(GaussianMechanism(1.0, 5.0))
    assert dict(inner.counts) == {("gaussian", 3.0): 1}
    assert dict(outer.counts) == {("gaussian", 1.0): 1, ("gaussian", 3.0): 1}


def test_parallel_parts_pass_on_the_worst_part():
    # Disjoint rows: the enclosing log sees the part a record fares worst in.
    light, heavy = GaussianMechanism(1.0, 8.0), GaussianMechanism(1.0, 2.0)
    with logged_releases() as log:
        with parallel_parts() as parts:
            with parts.part("a"):
                _release(light, 3)
            with parts.part("b"):
                _release(heavy)
            with parts.part("a"):
                _release(light)
    assert dict(log.counts) == {("gaussian", 2.0): 1}
    check_releases(log, composed_event([heavy.event()]), what="fit")


def test_events_that_fix_no_count():
    assert expected_releases(GaussianMechanism(1.0, 0.0).event(steps=5)) is None
    with logged_releases() as log:
        _release(GaussianMechanism(1.0, 2.0), 9)
    check_releases(log, GaussianMechanism(1.0, 0.0).event(steps=5), what="fit")


# ------------------------------------------------ the check in every fit


def _classification(n=300):
    X = RNG.normal(size=(n, 3))
    y = (X[:, 0] > 0).astype(int)
    return X, y


@pytest.fixture
def one_step_too_many(monkeypatch):
    """Make DP-SGD's loop run one noisy step more than its schedule accounts."""
    import sklearn_dpfair._solvers._private_fit as private_fit

    original = private_fit.noisy_sgd

    def longer(*args, n_steps, **kwargs):
        return original(*args, n_steps=n_steps + 1, **kwargs)

    monkeypatch.setattr(private_fit, "noisy_sgd", longer)


def test_a_fit_that_runs_an_unaccounted_step_raises_and_stays_unfitted(
    one_step_too_many,
):
    X, y = _classification()
    est = DPLogisticRegression(classes=[0, 1], max_iter=2)
    with pytest.raises(PrivacyAccountingError, match="nothing is released"):
        est.fit(X, y)
    assert not hasattr(est, "coef_")
    assert not hasattr(est, "privacy_record_")


def test_a_refit_that_fails_the_check_keeps_the_previous_model(monkeypatch):
    X, y = _classification()
    est = DPLogisticRegression(classes=[0, 1], max_iter=2, random_state=0).fit(X, y)
    coef = est.coef_.copy()
    import sklearn_dpfair._solvers._private_fit as private_fit

    original = private_fit.noisy_sgd
    monkeypatch.setattr(
        private_fit,
        "noisy_sgd",
        lambda *a, n_steps, **k: original(*a, n_steps=n_steps + 1, **k),
    )
    with pytest.raises(PrivacyAccountingError):
        est.fit(X[::-1], y[::-1])
    np.testing.assert_array_equal(est.coef_, coef)


def _regression(n=2000):
    X = RNG.normal(size=(n, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + RNG.standard_t(3, size=n)
    return X, y


_FITS = {
    "dp-sgd": lambda: DPLogisticRegression(classes=[0, 1]).fit(*_classification()),
    "dp-sgd-full": lambda: DPLogisticRegression(
        classes=[0, 1], batch_size="full", max_iter=3
    ).fit(*_classification()),
    "output-perturbation": lambda: DPLogisticRegression(
        classes=[0, 1], solver="output-perturbation", alpha=0.1,
        feature_norm_bound=3.0,
    ).fit(*_classification()),
    "dp-frank-wolfe": lambda: DPLogisticRegression(
        classes=[0, 1], solver="dp-frank-wolfe", l1_radius=2.0,
        feature_inf_bound=3.0,
    ).fit(*_classification()),
    "silos": lambda: DPLogisticRegression(classes=[0, 1]).fit(
        *_classification(), silos=np.arange(300) % 3
    ),
    "dp-fermi": lambda: DPFERMIClassifier(classes=[0, 1], groups=[0, 1]).fit(
        *_classification(), sensitive_features=np.arange(300) % 2
    ),
    "semi-dp": lambda: SemiDPLinearRegression().fit(
        *_regression(), public_mask=np.arange(2000) < 300
    ),
    "semi-dp-sgd": lambda: SemiDPLinearRegression(
        solver="semidp-sgd", adjacency="add_remove"
    ).fit(*_regression(), public_mask=np.arange(2000) < 300),
    "heavy-tail": lambda: HeavyTailDPRegressor().fit(*_regression()),
    "heavy-tail-sgd": lambda: HeavyTailDPRegressor(solver="sgd").fit(*_regression()),
    "heavy-tail-localized": lambda: HeavyTailDPRegressor(solver="localized").fit(
        *_regression()
    ),
}


@pytest.mark.parametrize("name", list(_FITS))
def test_every_private_fit_runs_exactly_what_it_accounts(name, monkeypatch):
    # The check runs inside fit; here it is also made to prove it looked: a
    # spy counts the checks that compared a non-empty log.
    import sklearn_dpfair._base as base

    checked = []
    original = base.check_releases

    def spy(log, event, **kwargs):
        checked.append(sum(log.counts.values()))
        return original(log, event, **kwargs)

    monkeypatch.setattr(base, "check_releases", spy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = _FITS[name]()
    assert np.isfinite(est.epsilon_)
    assert checked, "the fit was not checked"
    if name != "silos":  # each silo checks its own releases
        assert checked[-1] > 0


def test_parallel_parts_rank_laplace_releases_by_their_epsilon():
    # A Laplace release of scale b loses epsilon = 1 / b: the noisier part
    # (b = 10) is the *least* private loss, not the worst.
    from sklearn_dpfair.privacy import LaplaceMechanism

    strong, weak = LaplaceMechanism(1.0, 1.0), LaplaceMechanism(1.0, 10.0)
    with logged_releases() as log:
        with parallel_parts() as parts:
            with parts.part("A"):
                _release(strong)
            with parts.part("B"):
                _release(weak)
    assert dict(log.counts) == {("laplace", 1.0): 1}
    check_releases(log, strong.event(), what="fit")
    with pytest.raises(PrivacyAccountingError):
        check_releases(log, weak.event(), what="fit")


def test_parallel_parts_of_different_kinds_are_not_ranked():
    # A rho and an epsilon are in different units: no part is the worst.
    from sklearn_dpfair.privacy import LaplaceMechanism

    with logged_releases():
        with pytest.raises(PrivacyAccountingError, match="different kinds"):
            with parallel_parts() as parts:
                with parts.part("A"):
                    _release(LaplaceMechanism(1.0, 1.0))
                with parts.part("B"):
                    _release(GaussianMechanism(1.0, 1.0))
