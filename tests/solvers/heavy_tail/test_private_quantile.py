# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Post-processing of noisy histograms and the DP-SGD solver's private target scales."""

import numpy as np
import pytest

from sklearn_dpfair._solvers.heavy_tail._private_quantile import (
    histogram_quantiles,
)
from sklearn_dpfair.privacy._quantile import (
    SIGNED_EDGES,
    noisy_histogram,
)


@pytest.mark.parametrize("center, spread", [(150.0, 75.0), (0.0, 1.0), (-3e4, 1e3)])
def test_private_target_scales_on_a_few_hundred_rows(center, spread):
    # The scales of the "dp-sgd" solver at n = 300, epsilon = 1 (half the
    # budget on them): rough, but within the data's own range, whatever its
    # units. The old private median roamed a 16-decade grid.
    from sklearn_dpfair._solvers.heavy_tail._dpsgd import _private_target_scales

    y = np.random.default_rng(1).normal(center, spread, size=300)
    rhos = {"target_range": 0.0025, "target_location": 0.0075, "target_scale": 0.0025}
    for seed in range(20):
        location, scale = _private_target_scales(
            y, 1.0, rhos, None, np.random.default_rng(seed)
        )
        assert abs(location - np.median(y)) < 0.75 * spread
        assert 0.3 < scale / spread < 3


def test_histogram_quantiles_without_signal_is_none():
    counts, threshold = noisy_histogram(
        np.ones(3), 1e-4, np.random.default_rng(0), SIGNED_EDGES
    )
    assert histogram_quantiles(np.zeros_like(counts), threshold, (0.5,)) is None


@pytest.mark.parametrize("with_location", [True, False])
def test_a_noise_bin_far_out_does_not_stretch_the_target_range(
    monkeypatch, with_location
):
    # One of the range histogram's ~58 empty bins passes its threshold in
    # about 0.2% of fits. Read as the span of every bin above the threshold,
    # a spike in [1e11, 1e12) put the location grid's bins 4e8 wide and the
    # scale grid above 1e6: a target of sd 2.4 got location 8.6e11 and a
    # test R^2 of -7e25 (200 rows, epsilon = 0.5). The fullest bin's run
    # ignores it. A large budget makes the draws near-exact.
    from sklearn_dpfair._solvers.heavy_tail import _dpsgd
    from sklearn_dpfair._solvers.heavy_tail._private_quantile import (
        WIDE_DECADE_EDGES,
    )

    real = _dpsgd.noisy_histogram
    spike = int(np.searchsorted(WIDE_DECADE_EDGES, 1e11, side="right")) - 1

    def with_a_spike(values, rho, rng, edges, **kwargs):
        counts, threshold = real(values, rho, rng, edges, **kwargs)
        counts = counts.copy()
        counts[spike] = threshold
        return counts, threshold

    monkeypatch.setattr(_dpsgd, "noisy_histogram", with_a_spike)
    y = np.random.default_rng(0).normal(150.0, 2.4, size=300)
    rhos = {"target_range": 1e3, "target_location": 1e3, "target_scale": 1e3}
    location, scale = _dpsgd._private_target_scales(
        y, 1.0 if with_location else 0.0, rhos, None, np.random.default_rng(0)
    )
    if with_location:
        assert abs(location - np.median(y)) < 1.0
        assert 0.5 < scale / 2.4 < 2.0
    else:
        # Unshifted, the scale is the MAD from 0 (about 150).
        assert location == 0.0 and 50.0 < scale < 500.0


@pytest.mark.parametrize("zero_share", [0.4, 0.7])
def test_a_zero_inflated_target_is_located_with_its_non_zero_values(zero_share):
    # Exact zeros fill the bin around 0, whose neighbouring decades are
    # empty: read as the fullest bin's run alone, the range was 2e-8 wide
    # and the fit released the zero model (location 1e-8, scale 2e-8 on a
    # target of median 36). It spans the non-zero values' bulk too.
    from sklearn_dpfair._solvers.heavy_tail._dpsgd import _private_target_scales

    rng = np.random.default_rng(0)
    spread = np.exp(np.log(100.0) + rng.normal(size=5000))
    y = np.where(rng.random(5000) < zero_share, 0.0, spread)
    rhos = {"target_range": 1e3, "target_location": 1e3, "target_scale": 1e3}
    location, scale = _private_target_scales(
        y, 1.0, rhos, None, np.random.default_rng(0)
    )
    median = np.median(y)
    mad = np.median(np.abs(y - median)) / 0.6745
    # Within a bin of the location grid (its range reaches 1e4 here).
    assert abs(location - median) < 5.0
    if mad > 0:
        assert 0.5 < scale / mad < 2.0
    else:
        # Most rows at 0: no spread to read, a scale of the grid's, not 1e-8.
        assert scale > 1e-3


def test_histogram_target_range_spans_zeros_and_a_spread_bulk():
    from sklearn_dpfair._solvers.heavy_tail._private_quantile import (
        WIDE_DECADE_EDGES,
        histogram_target_range,
    )

    counts = np.zeros(len(WIDE_DECADE_EDGES) - 1)
    zero = int(np.searchsorted(WIDE_DECADE_EDGES, 0.0, side="right")) - 1
    counts[zero] = 80.0
    # Non-zero values over three decades, none 5 sigma high (threshold 40 is
    # 4 sigma): their run sums to more than 5.
    counts[zero + 10 : zero + 13] = 45.0
    assert histogram_target_range(counts, 40.0) == (-1e-8, 1e4)
    # Two neighbouring bins at 3 sigma far out (each below the threshold,
    # together above 5 sigma) are noise.
    counts[zero + 10 : zero + 13] = 0.0
    counts[[zero + 25, zero + 26]] = 30.0
    assert histogram_target_range(counts, 40.0) == (-1e-8, 1e-8)
