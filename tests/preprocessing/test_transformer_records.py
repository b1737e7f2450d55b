# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The privacy record of every transformer is what its accountant computes."""

import math
import warnings

import numpy as np
import pytest
from dp_accounting import pld, rdp

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
    assert est.delta_ + outside == pytest.approx(1e-5, rel=1e-12)
    assert est.delta_ <= 1e-5
