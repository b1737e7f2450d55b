# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
import math
import re

import dp_accounting
import numpy as np
import pytest
from dp_accounting import pld, rdp

from sklearn_dpfair.linear_model import DPLogisticRegression
from sklearn_dpfair.privacy import PrivacyBudget, calibrate_noise_multiplier
from sklearn_dpfair.privacy._accounting import (
    composed_event,
    epsilon_of,
    exponential_mechanism_event,
    gaussian_event,
    laplace_event,
    noisy_sgd_event,
    non_private_event,
)


def test_epsilon_of_matches_dp_accounting_directly():
    event = noisy_sgd_event(1.1, 0.01, 500)
    expected = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.1)),
        500,
    )
    assert event == expected
    acc = pld.PLDAccountant()
    acc.compose(expected)
    assert epsilon_of(event, 1e-5, "pld") == pytest.approx(acc.get_epsilon(1e-5))


def test_rdp_never_tighter_than_pld_for_subsampled_gaussian():
    # PLD is (up to its pessimistic discretisation) the tight answer; RDP an
    # upper bound (Mironov's RDP conversion loses a few percent of epsilon on
    # subsampled Gaussian compositions).
    event = noisy_sgd_event(1.0, 0.02, 1000)
    assert epsilon_of(event, 1e-5, "rdp") >= epsilon_of(event, 1e-5, "pld")


def test_full_batch_gaussian_matches_gdp_closed_form():
    # T Gaussian steps of multiplier sigma compose to one Gaussian with
    # mu = sqrt(T)/sigma (Dong, Roth, Su). Compare PLD with the analytic
    # Gaussian curve delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2).
    from scipy.stats import norm

    sigma, steps, delta = 30.0, 100, 1e-5
    eps = epsilon_of(noisy_sgd_event(sigma, 1.0, steps), delta, "pld")
    mu = math.sqrt(steps) / sigma
    delta_at_eps = norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(
        -eps / mu - mu / 2
    )
    assert delta_at_eps <= delta * 1.001
    assert delta_at_eps >= delta * 0.98


def test_replace_one_is_folded_into_sensitivity():
    # dp-accounting's accountants disagree on GaussianDpEvent under
    # REPLACE_ONE: PLD doubles the sensitivity, RDP does not. This is why our
    # events fold the replace-one factor 2 into the noise multiplier and are
    # always accounted under add/remove.
    event = dp_accounting.GaussianDpEvent(2.0)
    replace = dp_accounting.NeighboringRelation.REPLACE_ONE
    acc_pld = pld.PLDAccountant(neighboring_relation=replace)
    acc_pld.compose(event)
    acc_rdp = rdp.RdpAccountant(neighboring_relation=replace)
    acc_rdp.compose(event)
    eps_pld_replace = acc_pld.get_epsilon(1e-5)
    assert eps_pld_replace == pytest.approx(
        epsilon_of(gaussian_event(1.0), 1e-5, "pld"), rel=1e-6
    )
    assert acc_rdp.get_epsilon(1e-5) < 0.6 * eps_pld_replace


def test_special_events():
    assert epsilon_of(non_private_event(), 1e-5) == math.inf
    assert epsilon_of(noisy_sgd_event(0.0, 0.1, 10), 1e-5) == math.inf
    assert epsilon_of(noisy_sgd_event(1.0, 0.1, 0), 1e-5) == 0.0


def test_composition_adds_up():
    single = noisy_sgd_event(2.0, 1.0, 50)
    both = composed_event([single, single])
    twice = noisy_sgd_event(2.0, 1.0, 100)
    assert epsilon_of(both, 1e-5, "pld") == pytest.approx(
        epsilon_of(twice, 1e-5, "pld"), rel=1e-3
    )
    assert composed_event([single]) is single


def test_unknown_accountant_rejected():
    with pytest.raises(ValueError, match="accountant"):
        epsilon_of(gaussian_event(1.0), 1e-5, "moments")


@pytest.mark.parametrize("accountant", ["rdp", "pld"])
def test_epsilon_decreases_with_noise(accountant):
    eps = [
        epsilon_of(noisy_sgd_event(s, 0.05, 200), 1e-5, accountant)
        for s in (0.8, 1.0, 2.0, 4.0)
    ]
    assert np.all(np.diff(eps) < 0)


@pytest.mark.parametrize("delta", [math.nan, 1.0, 1.5, -1e-9, False, "1e-5", None])
@pytest.mark.parametrize("accountant", ["rdp", "pld"])
def test_epsilon_of_refuses_a_delta_outside_its_range(delta, accountant):
    # dp-accounting answers these with an epsilon (RDP: 0 for NaN and for
    # delta >= 1), which would certify any noise; False was read as 0 (pure
    # DP) and text raised a bare comparison error.
    with pytest.raises(ValueError, match=r"delta must be a number in \[0, 1\)"):
        epsilon_of(noisy_sgd_event(1.0, 0.1, 10), delta, accountant)
    # delta = 0 stays the pure guarantee of Laplace releases.
    assert epsilon_of(laplace_event(0.5), 0.0, accountant) == 2.0


@pytest.mark.parametrize("accountant", ["rdp", "pld"])
@pytest.mark.parametrize(
    "event",
    [gaussian_event(1e160), noisy_sgd_event(1e160, 0.1, 10)],
    ids=["gaussian", "sampled"],
)
def test_a_noise_multiplier_the_accountant_overflows_on_is_named(event, accountant):
    # dp-accounting squares (RDP) or divides by (PLD) the multiplier in
    # floats and raises OverflowError; the refusal names the parameter and
    # the multiplier the accountant was given.
    with pytest.raises(ValueError, match=r"^A noise multiplier \(noise_multiplier"):
        epsilon_of(event, 1e-5, accountant)
    with pytest.raises(ValueError, match=r"sigma=1e\+160"):
        epsilon_of(event, 1e-5, accountant)


@pytest.mark.parametrize(
    "event, field",
    [
        (dp_accounting.GaussianDpEvent(math.nan), "GaussianDpEvent.noise_multiplier"),
        (dp_accounting.GaussianDpEvent(-1.0), "GaussianDpEvent.noise_multiplier"),
        (
            dp_accounting.SelfComposedDpEvent(
                dp_accounting.GaussianDpEvent(math.nan), 10
            ),
            "GaussianDpEvent.noise_multiplier",
        ),
        (
            dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(1.0), -9),
            "SelfComposedDpEvent.count",
        ),
        (
            dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(1.0), 2.5),
            "SelfComposedDpEvent.count",
        ),
        (
            dp_accounting.PoissonSampledDpEvent(
                0.1, dp_accounting.GaussianDpEvent(math.nan)
            ),
            "GaussianDpEvent.noise_multiplier",
        ),
        (
            dp_accounting.PoissonSampledDpEvent(math.nan, gaussian_event(1.0)),
            "PoissonSampledDpEvent.sampling_probability",
        ),
        (dp_accounting.ZCDpEvent(math.nan), "ZCDpEvent.rho"),
        (dp_accounting.ZCDpEvent(-0.5), "ZCDpEvent.rho"),
        (dp_accounting.LaplaceDpEvent(-1.0), "LaplaceDpEvent.noise_multiplier"),
        (dp_accounting.LaplaceDpEvent(0.0), "LaplaceDpEvent.noise_multiplier"),
        (
            composed_event([laplace_event(1.0), dp_accounting.LaplaceDpEvent(-1.0)]),
            "LaplaceDpEvent.noise_multiplier",
        ),
        (
            dp_accounting.RandomizedResponseDpEvent(1.5, 2),
            "RandomizedResponseDpEvent.noise_parameter",
        ),
    ],
)
@pytest.mark.parametrize(
    "accountant, delta", [("rdp", 1e-5), ("pld", 1e-5), ("rdp", 0)]
)
def test_a_malformed_event_is_refused_not_certified(event, field, accountant, delta):
    # dp-accounting does not check its events: RDP reads GaussianDpEvent(nan)
    # as epsilon 0, a LaplaceDpEvent(-1) cancels a LaplaceDpEvent(1) in the
    # pure sum, a count of -9 subtracts releases.
    with pytest.raises(ValueError, match=re.escape(field)):
        epsilon_of(event, delta, accountant)


def test_noiseless_and_infinitely_noisy_gaussians_are_well_formed():
    # 0 is dp-accounting's non-private Gaussian; inf releases nothing.
    assert epsilon_of(dp_accounting.GaussianDpEvent(0.0), 1e-5) == math.inf
    assert epsilon_of(dp_accounting.GaussianDpEvent(math.inf), 1e-5) == 0.0
    assert epsilon_of(dp_accounting.ZCDpEvent(math.inf), 1e-5) == math.inf


def test_pld_refuses_full_batch_steps_whose_grid_would_not_fit_in_memory():
    # 100 full-batch steps of noise 0.1 are one Gaussian of 0.01 for
    # dp-accounting's PLD: its loss grid ran out of memory.
    with pytest.raises(ValueError, match=r"noise multiplier.*accountant='rdp'"):
        epsilon_of(noisy_sgd_event(0.1, 1.0, 100), 1e-5, "pld")
    # RDP reads it (an upper bound, in the thousands).
    assert epsilon_of(noisy_sgd_event(0.1, 1.0, 100), 1e-5, "rdp") > 1000


def test_a_subnormal_noise_multiplier_names_the_parameter():
    # The subsampled-Gaussian RDP divides by sigma^2, which underflows to 0.
    with pytest.raises(ValueError, match="noise multiplier.*too small"):
        epsilon_of(noisy_sgd_event(1e-300, 0.5, 10), 1e-5, "rdp")
    with pytest.raises(ValueError, match="noise multiplier.*too small"):
        epsilon_of(noisy_sgd_event(0.01, 0.01, 10), 1e-5, "pld")


@pytest.mark.parametrize("sigma", [1e-160, 1e-155, 1e-152, 5e-152, 1e-141])
def test_a_noise_multiplier_that_overflows_the_rdp_orders_is_refused(sigma):
    # dp-accounting's subsampled-Gaussian RDP divides order^2 by 2 sigma^2:
    # below about 5e-152 its orders overflowed to NaN and it answered
    # epsilon 0.0 for almost no noise (DPLogisticRegression with
    # noise_multiplier=1e-160 or 1e-152 fitted with epsilon_ 0.0). Refused
    # with a margin; just above it the huge epsilon is read.
    with pytest.raises(ValueError, match="noise multiplier.*too small"):
        epsilon_of(noisy_sgd_event(sigma, 0.1, 100), 1e-5, "rdp")
    assert epsilon_of(noisy_sgd_event(1e-139, 0.1, 100), 1e-5, "rdp") > 1e250


@pytest.mark.parametrize("accountant", ["rdp", "pld"])
def test_a_non_private_release_makes_a_pure_composition_infinite(accountant):
    # Every mechanism is (inf, 0)-DP: a pure composition that holds a
    # non-private release is inf at delta=0, not refused as non-Laplace.
    laplace = laplace_event(1.0)
    for event in [
        composed_event([laplace, non_private_event()]),
        dp_accounting.SelfComposedDpEvent(non_private_event(), 3),
        composed_event([laplace, composed_event([non_private_event(), laplace])]),
    ]:
        assert epsilon_of(event, 0.0, accountant) == math.inf
    # Zero self-compositions release nothing (not inf * 0 = NaN).
    nothing = dp_accounting.SelfComposedDpEvent(non_private_event(), 0)
    assert epsilon_of(nothing, 0.0, accountant) == 0.0
    # A Gaussian beside it still has no pure epsilon of its own, but the
    # composition is inf whatever delta it is stated at.
    with_gaussian = composed_event([gaussian_event(2.0), non_private_event()])
    assert epsilon_of(with_gaussian, 0.0, accountant) == math.inf
    with pytest.raises(ValueError, match="Laplace releases only"):
        epsilon_of(composed_event([gaussian_event(2.0), laplace]), 0.0, accountant)


@pytest.mark.parametrize("accountant", ["rdp", "pld"])
@pytest.mark.parametrize(
    "silent",
    [
        dp_accounting.GaussianDpEvent(math.inf),
        dp_accounting.LaplaceDpEvent(math.inf),
        noisy_sgd_event(math.inf, 0.1, 10),
        dp_accounting.SelfComposedDpEvent(dp_accounting.LaplaceDpEvent(math.inf), 4),
    ],
    ids=["gaussian", "laplace", "sampled-gaussian", "laplace-steps"],
)
def test_a_release_of_infinite_noise_is_a_no_op_for_both_accountants(
    silent, accountant
):
    # check_dp_event accepts a noise multiplier of inf (a release of nothing):
    # dp-accounting's PLD failed on it (NaN grid, empty grid), RDP read 0.
    assert epsilon_of(silent, 1e-5, accountant) == 0.0
    assert epsilon_of(silent, 0.0, accountant) == 0.0
    other = gaussian_event(2.0)
    alone = epsilon_of(other, 1e-5, accountant)
    assert epsilon_of(composed_event([silent, other]), 1e-5, accountant) == alone


@pytest.mark.parametrize(
    "make",
    [
        lambda steps: noisy_sgd_event(1.0, 0.1, steps),
        lambda steps: noisy_sgd_event(0.0, 1.0, steps),
        lambda steps: laplace_event(1.0, steps),
        lambda steps: exponential_mechanism_event(1.0, steps),
        lambda steps: calibrate_noise_multiplier(1.0, 1e-5, 1.0, steps),
        lambda steps: PrivacyBudget(1.0, 1e-5).gaussian(1.0, steps=steps),
    ],
)
@pytest.mark.parametrize("steps", [0.99, 2.9, -1, float("nan")])
def test_events_refuse_steps_that_are_not_a_count(make, steps):
    # int() read 0.99 steps as none (epsilon 0: calibration returned its
    # floor) and 2.9 as two: fewer releases accounted than ran.
    with pytest.raises(ValueError, match=r"^steps must be an integer >= 0"):
        make(steps)


@pytest.mark.parametrize(
    "make",
    [
        lambda q: noisy_sgd_event(1.0, q, 10),
        lambda q: calibrate_noise_multiplier(1.0, 1e-5, q, 10),
        lambda q: PrivacyBudget(1.0, 1e-5).gaussian(1.0, sampling_probability=q),
    ],
)
@pytest.mark.parametrize("q", [1.5, float("nan"), 0.0, -0.5])
def test_events_refuse_a_sampling_probability_out_of_range(make, q):
    # 1.5 and NaN failed "q < 1" and were accounted as a full batch.
    with pytest.raises(ValueError, match=r"^sampling_probability must be"):
        make(q)


def test_events_take_numpy_integer_steps():
    assert noisy_sgd_event(1.0, np.float64(0.5), np.int64(4)) == noisy_sgd_event(
        1.0, 0.5, 4
    )
    assert laplace_event(1.0, np.int32(3)) == laplace_event(1.0, 3)
    assert exponential_mechanism_event(1.0, np.int64(2)) == (
        exponential_mechanism_event(1.0, 2)
    )


def _laplace_parameters(event):
    if isinstance(event, dp_accounting.LaplaceDpEvent):
        return [event.noise_multiplier]
    if isinstance(event, dp_accounting.ComposedDpEvent):
        return [b for e in event.events for b in _laplace_parameters(e)]
    inner = getattr(event, "event", None)
    return [] if inner is None else _laplace_parameters(inner)


@pytest.fixture
def no_wide_laplace_pld(monkeypatch):
    """Fail where dp-accounting is asked for the PLD of a small-scale Laplace.

    Its loss grid grows as 1 / b: b = 1e-3 took minutes and gigabytes
    before failing with a MemoryError.
    """
    from sklearn_dpfair.privacy import _accounting

    compose = pld.PLDAccountant.compose

    def guarded(self, event, *args, **kwargs):
        assert min(_laplace_parameters(event), default=1.0) >= 0.01
        return compose(self, event, *args, **kwargs)

    monkeypatch.setattr(pld.PLDAccountant, "compose", guarded)
    _accounting._epsilon_of_cached.cache_clear()


@pytest.mark.parametrize("accountant", ["rdp", "pld"])
def test_laplace_releases_at_positive_delta_are_within_their_pure_epsilon(accountant):
    # (epsilon, 0)-DP implies (epsilon, delta)-DP; RDP's conversion of four
    # Laplace releases of epsilon 4 each said more than 16 at 1e-5.
    assert epsilon_of(laplace_event(0.25, steps=4), 1e-5, accountant) <= 16.0


def test_the_pld_of_a_small_scale_laplace_is_not_built(no_wide_laplace_pld):
    from sklearn_dpfair.privacy import PrivacyLedger

    # Alone: its pure epsilon, which bounds the PLD's.
    assert epsilon_of(laplace_event(1e-3), 1e-5, "pld") == pytest.approx(1000.0)
    # Beside a DP-SGD fit in a PLD ledger (a pure-DP fit of epsilon 300):
    # basic composition of the pure part and the PLD of the rest.
    sgd = noisy_sgd_event(1.0, 0.01, 100)
    ledger = PrivacyLedger("pld")
    ledger.record(laplace_event(1 / 300), delta=0.0)
    ledger.record(sgd, delta=1e-5)
    total = ledger.total_epsilon()
    assert total == pytest.approx(300.0 + epsilon_of(sgd, 1e-5, "pld"), rel=1e-9)
    # Nested where it cannot be split off: refused, naming what to do.
    nested = dp_accounting.SelfComposedDpEvent(
        composed_event([laplace_event(1e-3), gaussian_event(1.0)]), 2
    )
    with pytest.raises(ValueError, match="Laplace.*accountant='rdp'"):
        epsilon_of(nested, 1e-5, "pld")
    assert epsilon_of(nested, 1e-5, "rdp") > 2000.0


@pytest.mark.parametrize("accountant", ["rdp", "pld"])
def test_one_release_and_its_self_composition_of_one_share_a_cache_entry(accountant):
    # A calibration reads noisy_sgd_event(sigma, 1.0, 1) and the record of the
    # fit gaussian_event(sigma): the same mechanism, whose PLD (~1 s at the
    # calibration's floor) was built twice.
    from sklearn_dpfair.privacy import _accounting

    _accounting._epsilon_of_cached.cache_clear()
    once = epsilon_of(noisy_sgd_event(2.5, 1.0, 1), 1e-5, accountant)
    assert epsilon_of(gaussian_event(2.5), 1e-5, accountant) == once
    info = _accounting._epsilon_of_cached.cache_info()
    assert (info.misses, info.hits) == (1, 1)
    # The same answer to the bit as dp-accounting's for each spelling.
    fresh = _accounting._epsilon_of_cached.__wrapped__
    step = dp_accounting.GaussianDpEvent(2.5)
    single = dp_accounting.SelfComposedDpEvent(step, 1)
    assert fresh(single, 1e-5, accountant) == fresh(step, 1e-5, accountant) == once


def test_composed_gaussian_scale_is_that_of_the_one_gaussian_they_make():
    from sklearn_dpfair.privacy._accounting import composed_gaussian_scale

    # 1/z^2 adds up: (1/4 + 3/16 + 9/16)^(-1/2) = 1.
    event = composed_event(
        [gaussian_event(2.0), noisy_sgd_event(4.0, 1.0, 3), gaussian_event(4.0 / 3)]
    )
    assert composed_gaussian_scale(event) == pytest.approx(1.0, rel=1e-12)
    assert composed_gaussian_scale(gaussian_event(1e-200)) is None  # 1/z^2 = inf
    assert composed_gaussian_scale(gaussian_event(1e200)) is None  # 1/z^2 = 0
    for other in [
        noisy_sgd_event(1.0, 0.5, 2),
        composed_event([gaussian_event(1.0), laplace_event(1.0)]),
        non_private_event(),
        gaussian_event(0.0),
    ]:
        assert composed_gaussian_scale(other) is None


@pytest.mark.parametrize("delta", [1e-17, 1e-20, 1e-300])
def test_pld_below_its_float_floor_states_rdps_bound(delta):
    # dp-accounting's PLD keeps ~1e-16 of a Gaussian's mass at infinite loss
    # (float64 probabilities), so below that delta it answered inf for any
    # noise: output perturbation and the intercept-only release (PLD-
    # calibrated whatever `accountant`) added a multiplier of 22,000 at
    # 1e-20 for epsilon 1, and were refused at 1e-30. RDP's epsilon is also
    # a valid bound, and is stated there.
    event = gaussian_event(10.0)
    rdp_epsilon = epsilon_of(event, delta, accountant="rdp")
    assert math.isfinite(rdp_epsilon)
    assert epsilon_of(event, delta, accountant="pld") == rdp_epsilon
    # Above the floor PLD's own (tighter) answer is kept.
    assert epsilon_of(event, 1e-14, accountant="pld") < epsilon_of(event, 1e-14)


def test_a_single_gaussian_release_at_a_tiny_delta_is_calibrated_not_refused():
    X = np.random.default_rng(0).normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    for delta in (1e-20, 1e-300):
        clf = DPLogisticRegression(
            epsilon=1.0, delta=delta, classes=[0, 1], solver="output-perturbation",
            alpha=0.1, feature_norm_bound=3.0, random_state=0,
        ).fit(X, y)
        # The analytic Gaussian needs 8.8 at 1e-20; the refused search went
        # to 22,000.
        assert clf.noise_multiplier_ < 50
        assert 0.99 < clf.epsilon_ <= 1.0


def test_a_local_message_beside_a_gaussian_keeps_plds_reading_below_its_floor():
    # Under replace-one dp-accounting's PLD doubles a Gaussian's sensitivity
    # and its RDP does not: RDP's answer would not bound the mechanism PLD
    # reads (0.906 at 1e-20, where that mechanism needs at least 1.79), so
    # the fallback is for add/remove events only.
    event = composed_event(
        [dp_accounting.RandomizedResponseDpEvent(0.5, 2), gaussian_event(10.0)]
    )
    assert math.isfinite(epsilon_of(event, 1e-15, accountant="pld"))
    assert epsilon_of(event, 1e-20, accountant="pld") == math.inf


def test_an_rdp_record_is_recomputed_by_dp_accounting_over_the_public_orders():
    # Recomputed with dp-accounting's default orders, a fit recorded at
    # epsilon 0.1 (delta 1e-9) read 0.1006: the record is computed over
    # RDP_ORDERS, which the package makes public for that recomputation.
    import numpy as np
    from dp_accounting import rdp

    from sklearn_dpfair.linear_model import DPLogisticRegression
    from sklearn_dpfair.privacy import RDP_ORDERS

    rng = np.random.default_rng(0)
    X = rng.normal(size=(4000, 3))
    y = (X[:, 0] > 0).astype(int)
    model = DPLogisticRegression(
        epsilon=0.1, delta=1e-9, classes=[0, 1], max_iter=20, batch_size=1000
    ).fit(X, y)
    ours = rdp.RdpAccountant(orders=list(RDP_ORDERS))
    ours.compose(model.dp_event_)
    assert ours.get_epsilon(model.delta_) == pytest.approx(model.epsilon_, rel=1e-9)
    default = rdp.RdpAccountant()
    default.compose(model.dp_event_)
    assert default.get_epsilon(model.delta_) >= model.epsilon_ * (1 - 1e-9)
