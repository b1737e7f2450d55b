# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The Gaussian mechanism's checks of the noise it can draw and account."""

import math

import numpy as np
import pytest

from sklearn_dpfair.privacy import GaussianMechanism, LaplaceMechanism, PrivacyBudget

# The least noise scale the mechanisms draw with (MIN_NOISE_SCALE).
SMALLEST_NORMAL = float(np.finfo(np.float64).smallest_normal)


@pytest.mark.parametrize(
    "clip_norm, noise_multiplier, name",
    [
        # 0.4 * 5e-324 rounds to 0: the sums were released exactly while
        # the event claimed epsilon ~13.
        (5e-324, 0.4, "clip_norm"),
        # A standard deviation of 1e-321: about 1,200 distinct draws.
        (1e-321, 1.0, "clip_norm"),
        # The estimators' least clip norm with a tiny multiplier.
        (1e-300, 1e-9, "clip_norm"),
        (1.0, 1e-310, "noise_multiplier"),
    ],
)
def test_a_noise_standard_deviation_below_the_smallest_normal_is_refused(
    clip_norm, noise_multiplier, name
):
    with pytest.raises(ValueError, match=rf"^{name} is too small: .*smallest normal"):
        GaussianMechanism(clip_norm, noise_multiplier)


def test_the_smallest_normal_standard_deviation_draws_continuous_noise():
    mech = GaussianMechanism(SMALLEST_NORMAL, 1.0)
    noise = mech.privatize(np.zeros(1000), np.random.default_rng(0))
    # Normal floats keep 52 bits: 1000 draws are all distinct, none is 0.
    assert np.unique(noise).size == 1000
    assert np.all(noise != 0)


@pytest.mark.parametrize(
    "clip_norm, noise_multiplier",
    # No noise, a release that depends on no record, no clipping: as before.
    [(5e-324, 0.0), (None, 0.0), (0.0, 1.0), (math.inf, 1.0), (math.inf, 0.0)],
)
def test_no_noise_zero_and_infinite_sensitivity_are_unchanged(
    clip_norm, noise_multiplier
):
    GaussianMechanism(clip_norm, noise_multiplier)


def test_an_infinite_noise_multiplier_is_named():
    # The accountant reads it as a no-op; no mechanism can draw it. The
    # message blamed clip_norm before.
    with pytest.raises(ValueError, match=r"^noise_multiplier is inf"):
        GaussianMechanism(1.0, math.inf)
    budget = PrivacyBudget(1.0, 1e-5, noise_multiplier=math.inf)
    with pytest.raises(ValueError, match=r"^noise_multiplier is inf"):
        budget.gaussian(1.0)


@pytest.mark.parametrize("steps", [0.99, 2.5, 3.0, -1, True, float("nan")])
def test_the_event_refuses_steps_that_are_not_a_count(steps):
    # 0.99 steps were accounted as none (epsilon 0), 2.9 as two.
    with pytest.raises(ValueError, match=r"^steps must be an integer >= 0"):
        GaussianMechanism(1.0, 1.0).event(steps=steps)


@pytest.mark.parametrize("rate", [1.5, float("nan"), 0.0, -0.1])
def test_the_event_refuses_a_sampling_probability_out_of_range(rate):
    # 1.5 and NaN were read as a full batch.
    with pytest.raises(ValueError, match=r"^sampling_probability must be .* \(0, 1\]"):
        GaussianMechanism(1.0, 1.0).event(sampling_probability=rate, steps=3)


def test_the_event_takes_numpy_counts_and_rates():
    mech = GaussianMechanism(1.0, 1.0)
    assert mech.event(
        sampling_probability=np.float64(0.1), steps=np.int64(3)
    ) == mech.event(sampling_probability=0.1, steps=3)


@pytest.mark.parametrize(
    "clip_norm, noise_multiplier, name",
    [(1e307, 100.0, "clip_norm"), (100.0, 1e307, "noise_multiplier")],
)
def test_an_overflowing_noise_scale_names_the_larger_factor(
    clip_norm, noise_multiplier, name
):
    with pytest.raises(ValueError, match=f"^{name} is too large"):
        GaussianMechanism(clip_norm=clip_norm, noise_multiplier=noise_multiplier)


# (clip_norm, noise_multiplier, the parameter named, error).
_NOT_NUMBERS = [
    # NaN noise drew NaN sums under an event dp-accounting reads as eps 0.
    (1.0, math.nan, "noise_multiplier", ValueError),
    (math.nan, 1.0, "clip_norm", ValueError),
    (math.nan, 0.0, "clip_norm", ValueError),
    (np.float32("nan"), 1.0, "clip_norm", ValueError),
    (1.0, -1.0, "noise_multiplier", ValueError),
    (-1.0, 1.0, "clip_norm", ValueError),
    # Ints beyond the largest float raised OverflowError in the product.
    (10**400, 1.0, "clip_norm", ValueError),
    (1.0, 10**400, "noise_multiplier", ValueError),
    (10**400, 0.0, "clip_norm", ValueError),
    (True, 1.0, "clip_norm", TypeError),
    (1.0, True, "noise_multiplier", TypeError),
    (None, 1.0, "clip_norm", TypeError),
]


@pytest.mark.parametrize(
    "clip_norm, noise_multiplier, name, error",
    _NOT_NUMBERS,
    ids=[f"{n}-{i}" for i, (_, _, n, _) in enumerate(_NOT_NUMBERS)],
)
def test_a_parameter_that_is_not_a_number_is_named(
    clip_norm, noise_multiplier, name, error
):
    with pytest.raises(error, match=rf"^{name}"):
        GaussianMechanism(clip_norm, noise_multiplier)


@pytest.mark.parametrize("make", [GaussianMechanism, LaplaceMechanism])
@pytest.mark.parametrize(
    "value",
    [np.False_, np.True_, np.str_("0.5"), np.bytes_(b"2"), np.complex128(1 + 5j)],
    ids=["np.False_", "np.True_", "np.str_", "np.bytes_", "complex"],
)
@pytest.mark.parametrize("position", [0, 1], ids=["sensitivity", "noise_multiplier"])
def test_a_numpy_scalar_that_is_not_a_real_number_is_refused(make, value, position):
    # Every numpy scalar was made a float before the type check: np.False_
    # was a noise multiplier of 0 (no noise), np.str_("0.5") a number.
    args = [1.0, 1.0]
    args[position] = value
    with pytest.raises(TypeError, match="must be a real number"):
        make(*args)


def test_ordinary_numbers_are_kept_as_given():
    assert GaussianMechanism(2, 3).noise_std == 6
    assert GaussianMechanism(10**300, 0.5).noise_std == 0.5e300
    assert GaussianMechanism(np.float16(0.5), np.float32(2.0)).noise_std == 1.0


@pytest.mark.parametrize("make", [GaussianMechanism, LaplaceMechanism])
def test_a_zero_dimensional_array_is_read_as_its_number(make):
    # As the mechanisms' arithmetic reads it (accepted before the checks of
    # the parameters' types were added).
    mechanism = make(np.array(0.3), np.array(2.0))
    twin = make(0.3, 2.0)
    noisy = mechanism.privatize(np.zeros(3), np.random.default_rng(0))
    np.testing.assert_array_equal(
        noisy, twin.privatize(np.zeros(3), np.random.default_rng(0))
    )
