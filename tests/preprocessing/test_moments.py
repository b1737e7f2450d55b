# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
import itertools

import numpy as np
import pytest

from sklearn_dpfair.preprocessing._moments import (
    MOMENT_SHARES,
    NOISE_FLOOR_STDS,
    mean_and_variance,
    moment_noise_stds,
    noisy_moments,
)
from sklearn_dpfair.privacy import GaussianMechanism

NO_NOISE = GaussianMechanism(clip_norm=1.0, noise_multiplier=0.0)


@pytest.mark.parametrize("order", [1, 2])
def test_every_record_contributes_at_most_one_in_norm(order, privatized_sums):
    # All rows built from the extremes of [0, 10] and NaN, for 3 columns: the
    # stacked contribution of any single row has l2 norm <= 1.
    values = [0.0, 10.0, 5.0, np.nan, 1e300, -1e300]
    lower, upper = np.zeros(3), np.full(3, 10.0)
    for row in itertools.product(values, repeat=3):
        noisy_moments(np.array([row]), lower, upper, NO_NOISE, None, order=order)
    norms = [np.linalg.norm(v) for v in privatized_sums]
    assert max(norms) == pytest.approx(1.0) and max(norms) <= 1.0 + 1e-12
    assert sum(MOMENT_SHARES[order]) == pytest.approx(1.0)


def test_moments_without_noise_are_exact():
    X = np.array([[1.0, np.nan], [3.0, 4.0], [20.0, 6.0]])
    count, s1, s2 = noisy_moments(X, np.zeros(2), np.full(2, 10.0), NO_NOISE, None)
    np.testing.assert_allclose(count, [3, 2])
    # u = (clip(x) - 5) / 5: column 0 -> -0.8, -0.4, 1.
    np.testing.assert_allclose(s1, [-0.2, 0.0], atol=1e-12)
    np.testing.assert_allclose(s2, [0.64 + 0.16 + 1.0, 0.04 + 0.04], rtol=1e-12)


def test_the_variance_floor_is_the_noise_level_of_the_variance():
    stds = moment_noise_stds(GaussianMechanism(1.0, 30.0), 1)
    count = np.array([1000.0, 1000.0])
    # Column 0: variance 0.25, far above its noise; column 1: 0.0001, below.
    sum_u = np.array([0.0, 0.0])
    sum_u2 = np.array([250.0, 0.1])
    _, var = mean_and_variance(count, sum_u, sum_u2, private=True, noise_stds=stds)
    assert var[0] == pytest.approx(0.25)
    assert var[1] == pytest.approx(NOISE_FLOOR_STDS * stds[2] / 1000.0)
    # Without the noise levels only the absolute floor applies.
    _, plain = mean_and_variance(count, sum_u, sum_u2, private=True)
    assert plain[1] == pytest.approx(1e-4)


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("ulps", [1, 3, 7])
def test_bounds_a_few_ulps_apart_keep_every_record_within_one(
    order, ulps, privatized_sums
):
    # (clip(x) - centre) / half rounds: with bounds a few ulps apart it
    # left [-1, 1] (a record at the lower bound of (1e8, 1e8 + 3 ulps) gave
    # u = -2) and one record moved the stacked vector by 1.52.
    lower = np.array([1e8, -3.3, 1e-300])
    upper = lower.copy()
    for _ in range(ulps):
        upper = np.nextafter(upper, np.inf)
    values = [-1e9, 1e9, lower[0], upper[0], np.nan]
    for x in values:
        row = np.array([[x, -1e9 if x < 0 else 1e9, x]])
        noisy_moments(row, lower, upper, NO_NOISE, None, order=order)
    norms = [np.linalg.norm(v) for v in privatized_sums]
    assert len(norms) == len(values) and max(norms) <= 1.0 + 1e-12
    # A dataset and the same plus one record at a bound: within 1.
    X = np.full((100, 3), 5.0)
    for Z in (X, np.vstack([X, [[-1e9, -1e9, -1e9]]])):
        noisy_moments(Z, lower, upper, NO_NOISE, None, order=order)
    before, after = privatized_sums[-2:]
    assert np.linalg.norm(after - before) <= 1.0 + 1e-12
