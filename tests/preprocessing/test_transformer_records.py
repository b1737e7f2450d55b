# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The privacy record of every transformer is what its accountant computes."""

import math
import warnings

import dp_accounting
import numpy as np
import pytest
from dp_accounting import pld, rdp
from sklearn.base import clone

from sklearn_dpfair.preprocessing import (
    DPKBinsDiscretizer,
    DPOneHotEncoder,
    DPQuantileTransformer,
    DPSimpleImputer,
    DPSplineTransformer,
    DPStandardScaler,
)
from sklearn_dpfair.privacy._accounting import _PLD_VALUE_DISCRETIZATION, _RDP_ORDERS

BOUNDS = (0.0, 100.0)

#: Every configuration that changes what a transformer releases: strategies,
#: public or private bounds, Gaussian sums, quantiles or both, discovery or
#: declared categories, each accountant that can interpret it.
CONFIGURATIONS = [
    *(
        DPStandardScaler(BOUNDS, with_mean=m, with_std=s, accountant=a)
        for m, s in [(True, True), (True, False), (False, True), (False, False)]
        for a in ("rdp", "pld")
    ),
    DPStandardScaler("auto"),
    DPStandardScaler("auto", with_mean=False, with_std=False),
    DPSimpleImputer(BOUNDS, strategy="mean"),
    DPSimpleImputer(BOUNDS, strategy="mean", accountant="pld"),
    DPSimpleImputer(BOUNDS, strategy="median"),
    DPQuantileTransformer(BOUNDS),
    DPQuantileTransformer(BOUNDS, n_quantiles=3, output_distribution="normal"),
    DPKBinsDiscretizer(BOUNDS, strategy="quantile"),
    DPKBinsDiscretizer(BOUNDS, strategy="uniform", accountant="pld"),
    DPSplineTransformer(BOUNDS, knots="quantile"),
    DPSplineTransformer(BOUNDS, knots="uniform", accountant="pld"),
    DPOneHotEncoder(),
    DPOneHotEncoder(accountant="pld"),
    DPOneHotEncoder(min_frequency=20, max_categories=2, handle_unknown="ignore"),
    DPOneHotEncoder(categories=[["a", "b"], [1, 2, 3]]),
]


def _data(transformer):
    rng = np.random.default_rng(0)
    if isinstance(transformer, DPOneHotEncoder):
        return np.array(
            [rng.choice(["a", "b", "c"], 300), rng.choice([1, 2, 3], 300)],
            dtype=object,
        ).T
    return rng.normal(50.0, 15.0, size=(300, 2))


def _direct_epsilon(event, delta, accountant):
    """The epsilon of ``event`` computed with dp-accounting directly."""
    if accountant == "rdp":
        acc = rdp.RdpAccountant(orders=_RDP_ORDERS)
    else:
        acc = pld.PLDAccountant(value_discretization_interval=_PLD_VALUE_DISCRETIZATION)
    acc.compose(event)
    return acc.get_epsilon(delta)


@pytest.mark.parametrize("epsilon", [0.7, math.inf])
@pytest.mark.parametrize("transformer", CONFIGURATIONS, ids=repr)
def test_every_field_is_what_the_accountant_computes(transformer, epsilon):
    """``epsilon_`` is dp-accounting's epsilon of ``dp_event_`` at ``delta_``.

    ``recompute_epsilon()`` (and dp-accounting called directly) reproduces
    ``epsilon_`` from the recorded event and delta, for every transformer and
    configuration; a delta spent outside the event (the encoder's threshold)
    is stated apart and, with ``delta_``, makes up the requested delta.
    """
    est = transformer.set_params(epsilon=epsilon, delta=1e-5, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(_data(est))
    record = est.privacy_record_
    assert record.dp_event is est.dp_event_
    assert (record.epsilon, record.delta) == (est.epsilon_, est.delta_)
    assert record.recompute_epsilon() == pytest.approx(est.epsilon_, rel=1e-12)
    if math.isfinite(est.epsilon_) and est.epsilon_ > 0:
        direct = _direct_epsilon(est.dp_event_, est.delta_, record.accountant)
        assert direct == pytest.approx(est.epsilon_, rel=1e-9)
    assert est.epsilon_ <= epsilon * (1 + 1e-9)
    outside = getattr(est, "threshold_delta_", 0.0)
    if isinstance(est.dp_event_, dp_accounting.NoOpDpEvent):
        # Nothing read from the rows is released: (0, 0)-DP, not the target.
        assert (est.epsilon_, est.delta_, outside) == (0.0, 0.0, 0.0)
        return
    assert est.delta_ + outside == pytest.approx(1e-5, rel=1e-12)
    assert est.delta_ <= 1e-5


def _gaussian_multipliers(event):
    """The noise multipliers of the Gaussian events inside ``event``."""
    if isinstance(event, dp_accounting.GaussianDpEvent):
        return [event.noise_multiplier]
    inner = getattr(event, "events", None) or [getattr(event, "event", None)]
    return [m for e in inner if e is not None for m in _gaussian_multipliers(e)]


@pytest.mark.parametrize("transformer", CONFIGURATIONS, ids=repr)
def test_noise_multiplier_is_the_gaussian_releases_or_none(transformer):
    # A fit releasing private quantiles only recorded noise_multiplier_ = 0,
    # which reads as "no noise": the exponential mechanism has none.
    est = transformer.set_params(epsilon=0.7, delta=1e-5, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(_data(est))
    multipliers = _gaussian_multipliers(est.dp_event_)
    if isinstance(est.dp_event_, dp_accounting.NoOpDpEvent):
        assert est.noise_multiplier_ == 0.0
    elif multipliers:
        assert est.noise_multiplier_ == pytest.approx(multipliers[0], rel=1e-12)
        assert est.noise_multiplier_ > 0
    else:
        assert est.noise_multiplier_ is None
    assert est.privacy_record_.noise_multiplier == est.noise_multiplier_


#: Words that name a noise-adding mechanism in a record's ``mechanism``.
NOISE_WORDS = ("Gaussian", "exponential mechanism", "noisy", "Laplace")


@pytest.mark.parametrize("transformer", CONFIGURATIONS, ids=repr)
def test_mechanism_text_is_what_the_fit_ran(transformer):
    """At ``epsilon=inf`` the record names the exact statistics, not the noise.

    No noise is drawn there (the moments, quantiles and category counts are
    exact), so a record naming a Gaussian release or the exponential
    mechanism would not be true to what ran; at a finite epsilon the same
    configuration's record names the mechanism it ran.
    """
    fitted = {}
    for epsilon in (0.7, math.inf):
        est = clone(transformer).set_params(epsilon=epsilon, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fitted[epsilon] = est.fit(_data(est)).privacy_record_.mechanism
    exact, private = fitted[math.inf], fitted[0.7]
    assert not [word for word in NOISE_WORDS if word in exact], exact
    assert exact.startswith(f"{type(transformer).__name__}: non-private limit")
    assert "non-private" not in private
    # What reads the data privately names its mechanism; what reads nothing
    # (uniform edges, declared categories) says so under both budgets.
    if "no private read" in private:
        assert exact.endswith(private.split(": ", 1)[1])
    else:
        # "bounds from private quantiles": the fences' exponential
        # mechanism (a scaler with no moments to read draws only those).
        named = ("Gaussian", "exponential mechanism", "private quantiles")
        assert any(word in private for word in named), private
        assert "exact" in exact or "no moments" in exact


@pytest.mark.parametrize(
    "params, released",
    [
        ({}, "sums of squares"),
        ({"with_std": False}, "clipped counts and sums of all columns"),
        ({"with_std": False, "with_mean": False}, "no moments"),
    ],
)
def test_scaler_record_names_the_moments_it_reads(params, released):
    # Without scaling no sums of squares are released; with neither centring
    # nor scaling nothing is (the event is a no-op), which "one Gaussian
    # release" said otherwise.
    X = np.random.default_rng(0).normal(size=(50, 2))
    scaler = DPStandardScaler(epsilon=1.0, bounds=[(-5, 5)] * 2, **params).fit(X)
    mechanism = scaler.privacy_record_.mechanism
    assert released in mechanism
    assert ("Gaussian" in mechanism) == bool(params.get("with_mean", True))


def test_imputer_mean_at_epsilon_inf_is_exact_whatever_the_bounds():
    # The record says "exact means": in half-width units a column of
    # 37.3 +- 0.01 in bounds (0, 2e12) was filled 1e-4 off.
    from sklearn.impute import SimpleImputer

    X = np.random.default_rng(0).normal(37.3, 0.01, size=(1000, 1))
    X[::7] = np.nan
    imputer = DPSimpleImputer([(0.0, 2e12)], epsilon=math.inf).fit(X)
    expected = SimpleImputer().fit(X).statistics_
    np.testing.assert_allclose(imputer.statistics_, expected, rtol=1e-13)
