"""The private choice between a model and the constants (_solvers/_constant_choice)."""

import itertools
import math

import numpy as np
import pytest

from sklearn_dpfair._solvers._constant_choice import (
    CHOICE_BUDGET_SHARE,
    choice_mechanism,
    choice_noise,
    choose_constant,
    chooses_privately,
    comparison_sensitivity,
    constant_comparison,
    in_choice_range,
)
from sklearn_dpfair.privacy import PrivacyBudget, noise_multiplier_for_gaussian


@pytest.mark.parametrize("k", [2, 3, 5])
def test_comparison_is_the_model_errors_minus_each_constants(k):
    rng = np.random.default_rng(k)
    y, y_pred = rng.integers(0, k, 200), rng.integers(0, k, 200)
    expected = [np.sum(y_pred != y) - np.sum(y != c) for c in range(k)]
    np.testing.assert_array_equal(constant_comparison(y, y_pred, k), expected)


@pytest.mark.parametrize("k", [2, 3, 4])
def test_one_record_moves_the_comparison_by_at_most_its_sensitivity(k):
    # Add/remove adjacency: every (label, prediction) a new record can bring,
    # on a few base data sets; the bound is attained.
    rng = np.random.default_rng(0)
    largest = 0.0
    for _ in range(5):
        y, y_pred = rng.integers(0, k, 50), rng.integers(0, k, 50)
        base = constant_comparison(y, y_pred, k)
        for label, pred in itertools.product(range(k), repeat=2):
            moved = constant_comparison(np.append(y, label), np.append(y_pred, pred), k)
            largest = max(largest, float(np.linalg.norm(moved - base)))
    assert largest <= comparison_sensitivity(k) + 1e-12
    assert largest == pytest.approx(comparison_sensitivity(k))
    assert choice_mechanism(3.0, k).sensitivity == comparison_sensitivity(k)


def test_exact_comparison_recovers_the_counts_and_the_best_constant():
    y = np.array([0] * 60 + [1] * 30 + [2] * 10)
    bad = (y + 1) % 3  # wrong on every row
    choice = choose_constant(constant_comparison(y, bad, 3), len(y))
    assert choice.constant == 0
    np.testing.assert_allclose(choice.counts, [60, 30, 10])
    np.testing.assert_allclose(np.exp(choice.log_frequencies), [0.6, 0.3, 0.1])
    # A model better than every constant is kept; a tie keeps the model.
    assert choose_constant(constant_comparison(y, y, 3), len(y)).constant is None
    tie = np.where(np.arange(100) < 40, (y + 1) % 3, y)
    assert np.sum(tie != y) == 40
    assert choose_constant(constant_comparison(y, tie, 3), len(y)).constant is None


def test_noisy_counts_are_floored_at_one_record():
    choice = choose_constant(np.array([50.0, -300.0]), 100)
    assert np.all(choice.counts >= 1.0)
    assert np.all(np.isfinite(choice.log_frequencies))


@pytest.mark.parametrize(
    "n, eps, k, expected",
    [
        (300, 0.3, 2, False),  # below 15 (d + 1): the intercept-only model
        (700, 0.3, 2, True),
        (8333, 0.3, 2, True),  # n * epsilon = 2499.9
        (8334, 0.3, 2, False),  # 2500 and above: the model alone
        (8334, 0.3, 3, True),  # 2500 (K - 1) for K classes
        (700, math.inf, 2, False),
    ],
)
def test_the_choice_is_made_between_the_two_thresholds(n, eps, k, expected):
    # d = 12: the intercept-only rule's threshold is 15 * 13 (K - 1).
    assert chooses_privately(n, 12, k, PrivacyBudget(eps, 1e-5), 15.0) is expected


def test_the_choice_does_not_depend_on_the_width_above_the_fallback():
    # A pipeline plans its final step before an encoder's categories fix the
    # width: every width that affords the model gets the same decision.
    budget = PrivacyBudget(1.0, 1e-5)
    assert {chooses_privately(2000, d, 2, budget, 15.0) for d in (1, 7, 50)} == {True}


@pytest.mark.parametrize(
    "n, eps, k, expected",
    [(300, 1.0, 2, True), (2499, 1.0, 2, True), (2500, 1.0, 2, False),
     (2500, 1.0, 3, True), (700, math.inf, 2, False)],
)
def test_the_choice_range_reads_no_width(n, eps, k, expected):
    assert in_choice_range(n, k, PrivacyBudget(eps, 1e-5)) is expected


def test_no_choice_for_a_user_given_noise_multiplier():
    budget = PrivacyBudget(math.inf, 1e-5, noise_multiplier=2.0)
    assert chooses_privately(700, 12, 2, budget, 15.0) is False


def test_the_choice_costs_its_share_of_a_whole_budget_gaussian():
    # zCDP 1 / (2 z^2): the comparison's multiplier costs CHOICE_BUDGET_SHARE
    # of the Gaussian that alone spends (epsilon, delta).
    budget = PrivacyBudget(0.5, 1e-5)
    whole = noise_multiplier_for_gaussian(0.5, 1e-5)
    assert (whole / choice_noise(budget)) ** 2 == pytest.approx(CHOICE_BUDGET_SHARE)
