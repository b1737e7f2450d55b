"""The intercept-only release a small budget affords (_solvers/_intercept_only)."""

import math

import numpy as np
import pytest
from dp_accounting import GaussianDpEvent, pld

from sklearn_dpfair._solvers._intercept_only import (
    affords_model,
    fit_intercept_only,
    intercept_only_setup,
    label_counts,
    n_parameters,
    small_budget_message,
)
from sklearn_dpfair.privacy import GaussianMechanism, PrivacyBudget, epsilon_of


@pytest.mark.parametrize(
    "n, d, k, eps, expected",
    [
        (1960, 97, 2, 1.0, True),  # exactly 20 * 98
        (1959, 97, 2, 1.0, False),
        (300, 97, 2, 10.0, True),
        (3000, 97, 3, 1.0, False),  # 20 * 98 * 2 = 3920
        (10**6, 10**6, 2, 1.0, False),
    ],
)
def test_rule_is_n_epsilon_against_parameters(n, d, k, eps, expected):
    assert affords_model(n, d, k, PrivacyBudget(eps, 1e-5), 20.0) is expected


def test_rule_leaves_uncalibrated_budgets_alone():
    # epsilon = inf, or a user-given noise multiplier: the user chose the mechanism.
    assert affords_model(10, 1000, 2, PrivacyBudget(math.inf, 1e-5), 20.0)
    assert affords_model(
        10, 1000, 2, PrivacyBudget(1.0, 1e-5, noise_multiplier=3.0), 20.0
    )


def test_n_parameters():
    assert n_parameters(0, 2) == 1
    assert n_parameters(9, 4) == 30


def _pld_epsilon(event, delta):
    """Epsilon of ``event`` by dp-accounting's PLD directly (not the package)."""
    accountant = pld.PLDAccountant(value_discretization_interval=1e-4)
    return accountant.compose(event).get_epsilon(delta)


@pytest.mark.parametrize("accountant", ["rdp", "pld"])
@pytest.mark.parametrize("eps", [0.1, 1.0, 4.0])
def test_setup_is_one_gaussian_calibrated_to_the_budget(eps, accountant):
    setup = intercept_only_setup(PrivacyBudget(eps, 1e-5, accountant=accountant), 3)
    z = setup.mechanism.noise_multiplier
    assert setup.mechanism.sensitivity == 1.0
    assert setup.record.adjacency == "add_remove"
    # One Gaussian: calibrated and recorded with PLD (exact for it) whatever
    # the budget's accountant, and the record says so.
    assert setup.record.accountant == "pld"
    assert "accounted with dp-accounting's PLD" in setup.record.mechanism
    assert "(PLD)" in setup.record.technical_text()
    pld_budget = PrivacyBudget(eps, 1e-5, accountant="pld")
    assert z == intercept_only_setup(pld_budget, 3).mechanism.noise_multiplier
    # Accountant cross-check: the event is one Gaussian of that multiplier,
    # and its epsilon is within the budget but not far below it (calibrated).
    spent_one = _pld_epsilon(GaussianDpEvent(z), 1e-5)
    assert spent_one == pytest.approx(setup.record.epsilon, rel=1e-9)
    spent = _pld_epsilon(setup.event, 1e-5)
    assert spent <= eps * (1 + 1e-9)
    assert spent >= 0.95 * eps
    # RDP reads the same event as a valid but looser bound (what a ledger or
    # pipeline composing under RDP sees).
    assert epsilon_of(setup.event, 1e-5, "rdp") >= spent


@pytest.mark.parametrize("eps", [0.005, 0.001])
def test_setup_reaches_budgets_rdp_cannot_certify(eps):
    # RDP's orders cannot certify epsilon below about 0.01 for any noise
    # (the default accountant refused these budgets); PLD calibrates them.
    with pytest.raises(ValueError, match="cannot certify epsilon below"):
        PrivacyBudget(eps, 1e-6).gaussian(1.0)
    setup = intercept_only_setup(PrivacyBudget(eps, 1e-6), 2)
    assert setup.record.accountant == "pld"
    assert setup.event == GaussianMechanism(1.0, setup.mechanism.noise_multiplier).event()
    spent = _pld_epsilon(setup.event, 1e-6)
    assert 0.95 * eps <= spent <= eps * (1 + 1e-9)
    assert setup.record.epsilon == pytest.approx(spent, rel=1e-9)


@pytest.mark.parametrize("eps", [0.005, 0.001])
def test_noisy_counts_have_the_calibrated_spread(eps):
    # Seeded check: 4000 released counts (2000 releases of 2 classes); their
    # errors over z * sensitivity are N(0, 1) draws, so the sample sd is 1
    # within 1.1% (its standard error, 1/sqrt(2 * 4000)): a 5% tolerance is
    # above 4 standard errors, and the mean within 4/sqrt(4000).
    setup = intercept_only_setup(PrivacyBudget(eps, 1e-6), 2)
    z = setup.mechanism.noise_multiplier
    exact = np.array([400.0, 200.0])
    rng = np.random.default_rng(12)
    errors = np.array(
        [fit_intercept_only(setup, exact, rng)[1] - exact for _ in range(2000)]
    ).ravel() / z
    assert abs(errors.std() - 1.0) < 0.05
    assert abs(errors.mean()) < 4 / np.sqrt(errors.size)


def test_setup_refuses_budgets_the_library_does_not_calibrate():
    # The rule plans the release for library-calibrated budgets only.
    for budget in (
        PrivacyBudget(math.inf, 1e-5),
        PrivacyBudget(1.0, 1e-5, noise_multiplier=3.0),
        PrivacyBudget(1.0, 1e-5).split({"a": 0.5})["a"],
    ):
        with pytest.raises(ValueError, match="This is a bug"):
            intercept_only_setup(budget, 2)


def test_neighbours_move_one_count_by_one():
    # Same noise draws: the released counts of add/remove neighbours differ by
    # one unit vector (L2 sensitivity 1), whatever label the record holds.
    setup = intercept_only_setup(PrivacyBudget(1.0, 1e-5), 3)
    y = np.array([0, 0, 1, 2, 2, 2])
    _, base = fit_intercept_only(setup, label_counts(y, 3), np.random.default_rng(5))
    for label in range(3):
        _, more = fit_intercept_only(
            setup, label_counts(np.append(y, label), 3), np.random.default_rng(5)
        )
        diff = more - base
        np.testing.assert_allclose(diff, np.eye(3)[label], atol=1e-9)


def test_intercepts_finite_and_ordered():
    setup = intercept_only_setup(PrivacyBudget(1.0, 1e-5), 2)
    # Empty class: its noisy count may be negative; the floor keeps it finite.
    intercept, _ = fit_intercept_only(
        setup, label_counts(np.zeros(50, int), 2), np.random.default_rng(0)
    )
    assert np.all(np.isfinite(intercept))
    assert intercept[0] > intercept[1]
    y = np.array([1] * 800 + [0] * 200)
    intercept, _ = fit_intercept_only(setup, label_counts(y, 2), np.random.default_rng(1))
    np.testing.assert_allclose(np.exp(intercept).sum(), 1.0)
    assert abs(np.exp(intercept[1]) - 0.8) < 0.05


def test_message_names_the_public_rule_only():
    msg = small_budget_message("Est", 97, 2, 20.0)
    # The threshold, not the fit's n * epsilon: one text across a search.
    assert "n_samples * epsilon is below" in msg and "300" not in msg
    assert "20 * 98 = 1960" in msg
    assert "small_budget='fit'" in msg
    assert "intercept_only_" in msg
