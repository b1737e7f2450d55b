# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
import math

import numpy as np
import pytest
from scipy.stats import norm

from sklearn_dpfair.preprocessing._partition import (
    gaussian_threshold,
    select_partitions,
    threshold_probability,
)
from sklearn_dpfair.privacy import GaussianMechanism


@pytest.mark.parametrize(
    "sigma, delta, d", [(1.0, 1e-5, 1), (3.0, 1e-8, 4), (10.0, 0.5e-6, 2)]
)
def test_threshold_keeps_a_one_record_category_with_probability_delta_over_d(
    sigma, delta, d
):
    tau = gaussian_threshold(sigma, delta, d)
    assert norm.sf((tau - 1.0) / sigma) == pytest.approx(delta / d, rel=1e-9)


def test_a_one_record_category_is_rarely_kept():
    # Monte Carlo of the threshold's delta: 1e5 draws at delta / d = 1e-2.
    mechanism = GaussianMechanism(clip_norm=1.0, noise_multiplier=2.0)
    tau = gaussian_threshold(2.0, 1e-2, 1)
    kept, _ = select_partitions(
        np.ones(100_000), mechanism, np.random.default_rng(0), tau
    )
    # Binomial(1e5, 1e-2): mean 1000, sd 31.
    assert abs(kept.sum() - 1000) < 5 * 31


def test_without_privacy_every_present_partition_is_kept():
    mechanism = GaussianMechanism(clip_norm=1.0, noise_multiplier=0.0)
    kept, noisy = select_partitions(np.array([1.0, 5.0]), mechanism, None, -math.inf)
    assert kept.all() and list(noisy) == [1.0, 5.0]


def test_an_infinite_threshold_keeps_nothing():
    # Only -inf is the threshold without privacy; +inf (an underflowed
    # probability) keeps no partition, not every present one.
    mechanism = GaussianMechanism(clip_norm=1.0, noise_multiplier=1.0)
    kept, _ = select_partitions(
        np.array([1.0, 50.0]), mechanism, np.random.default_rng(0), math.inf
    )
    assert not kept.any()


@pytest.mark.parametrize(
    "threshold_delta, d", [(0.0, 1), (5e-324, 1), (1e-308, 2), (math.nan, 1)]
)
def test_a_threshold_probability_below_the_smallest_normal_is_refused(
    threshold_delta, d
):
    # threshold_delta / d underflowing to 0 gave Phi^-1(0) = -inf, an
    # infinite threshold; a subnormal one rounds by up to half its size.
    with pytest.raises(ValueError, match=r"^delta is too small"):
        gaussian_threshold(2.0, threshold_delta, d)
    with pytest.raises(ValueError, match=r"^delta=1e-300 is too small"):
        threshold_probability(threshold_delta, d, delta=1e-300)


def test_the_smallest_normal_threshold_probability_gives_a_finite_threshold():
    tiny = np.finfo(np.float64).tiny
    assert threshold_probability(tiny, 1) == tiny
    tau = gaussian_threshold(2.0, tiny, 1)
    assert math.isfinite(tau) and tau > 70.0


def test_an_infinite_threshold_is_refused():
    # A finite probability with a noise so large that tau overflows.
    with pytest.raises(ValueError, match=r"^delta: the threshold .* not finite"):
        gaussian_threshold(1e308, 1e-10, 1)
