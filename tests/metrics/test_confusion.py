# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Simultaneous intervals of the comparisons' quantities (``_confusion``).

* Bonferroni's percentile intervals are used exactly when their tails hold a
  replicate, and give what they gave when all pairs were formed at once;
* with fewer replicates, the max-statistic bootstrap's intervals hold
  together at the confidence level, where the extreme replicates did not;
* a quantity undefined in many replicates gets the whole range alone.
"""

import numpy as np
import pytest

from sklearn_dpfair.metrics._confusion import (
    bonferroni_replicates,
    compare_interval,
    percentile_interval,
    simultaneous_intervals,
)


@pytest.mark.parametrize(
    "n_quantities, confidence_level, expected",
    [(1, 0.95, 39), (3, 0.95, 119), (6, 0.975, 479), (190, 0.95, 7599)],
)
def test_bonferroni_replicates_puts_a_replicate_in_each_tail(
    n_quantities, confidence_level, expected
):
    n_boot = bonferroni_replicates(n_quantities, confidence_level)
    assert n_boot == expected
    # "weibull" reads the smallest of n replicates as the 1 / (n + 1)
    # quantile: the tail holds it at n_boot, not one replicate below.
    tail = (1 - confidence_level) / (2 * n_quantities)
    assert tail >= 1 / (n_boot + 1) - 1e-15
    assert tail < 1 / n_boot


def _all_pairs_at_once(replicates, how, confidence_level, value_range):
    """The bounds as computed with every pair's replicates in one array."""
    from sklearn_dpfair.metrics._confusion import (
        _largest_distance_bounds,
        _smallest_ratio_bounds,
    )

    groups = replicates[:, :-1]
    i, j = np.triu_indices(groups.shape[1], k=1)
    first, second = groups[:, i], groups[:, j]
    level = 1 - (1 - confidence_level) / len(i)
    if how.startswith("difference"):
        span = value_range[1] - value_range[0]
        lower, upper = percentile_interval(
            first - second, level, (-span, span), method="weibull"
        )
        return _largest_distance_bounds(lower, upper)
    with np.errstate(invalid="ignore"):
        share = first / (first + second)
    lower, upper = percentile_interval(share, level, (0.0, 1.0), method="weibull")
    return _smallest_ratio_bounds(lower, upper)


@pytest.mark.parametrize("how", ["difference_between_groups", "ratio_between_groups"])
def test_pairs_formed_one_group_at_a_time_give_the_bounds_of_all_pairs(how):
    # 7 groups: 21 pairs, which 1,000 replicates resolve at 95% (839 needed).
    rng = np.random.default_rng(0)
    replicates = rng.uniform(0.2, 0.6, size=(1000, 8))
    replicates[rng.random(replicates.shape) < 0.001] = np.nan
    expected = _all_pairs_at_once(replicates, how, 0.95, (0.0, 1.0))
    np.testing.assert_allclose(
        compare_interval(replicates, how, 0.95, (0.0, 1.0)), expected, rtol=1e-12
    )


def test_too_few_replicates_give_max_statistic_intervals_that_hold_together():
    # 190 quantities (the pairs of 20 groups) and 1,000 replicates: a
    # Bonferroni tail of 0.013% is below the smallest replicate, read as
    # the 0.1% quantile. Each interval was then [min, max] of its column,
    # and a fresh draw fell outside one of them 32% of the time.
    rng = np.random.default_rng(0)
    n_quantities = 190
    replicates = rng.normal(size=(1000, n_quantities))
    lower, upper = simultaneous_intervals(replicates, 0.95, (-np.inf, np.inf))
    fresh = rng.normal(size=(4000, n_quantities))
    held = np.all((lower <= fresh) & (fresh <= upper), axis=1).mean()
    assert 0.92 <= held <= 0.98, held
    # Independent columns: Sidak's two-sided point for 190 at 95% is 3.64.
    assert abs(np.median(upper) - 3.64) < 0.2
    assert abs(np.median(-lower) - 3.64) < 0.2


def test_a_quantity_undefined_in_many_replicates_gets_the_whole_range_alone():
    rng = np.random.default_rng(0)
    replicates = rng.normal(0.5, 0.01, size=(1000, 190))
    # 10% NaN: beyond the 2.5% its own 95% percentile interval allows.
    replicates[:100, 0] = np.nan
    # One NaN replicate costs one replicate of the statistic, no more.
    replicates[0, 1] = np.nan
    lower, upper = simultaneous_intervals(replicates, 0.95, (0.0, 1.0))
    assert (lower[0], upper[0]) == (0.0, 1.0)
    assert np.all(upper[1:] - lower[1:] < 0.1)
