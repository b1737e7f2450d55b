# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""fit_silos: the estimator's federated fit from DP-SGD parameter objects."""

import dataclasses
import inspect

import numpy as np
import pytest

from sklearn_dpfair._loss import BinaryLogisticLoss
from sklearn_dpfair._solvers._private_fit import DPSGDParams
from sklearn_dpfair.federated import FederationConfig, fit_federated
from sklearn_dpfair.federated._fit import SiloOptions, fit_silos
from sklearn_dpfair.privacy import PrivacyBudget, check_noise_generator

PARAMS = DPSGDParams(
    clip_norm=0.5,
    batch_size=100,
    epochs=2,
    learning_rate=0.5,
    alpha=0.01,
    fit_intercept=False,
)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1000, 3))
    y = (X[:, 0] > 0).astype(float)
    silos = np.repeat(["a", "b"], [400, 600])
    return X, y, silos


def test_driver_kwargs_are_fit_federated_keywords():
    budget = PrivacyBudget(2.0, 1e-6, noise_multiplier=3.0)
    kwargs = SiloOptions().driver_kwargs(budget)
    assert set(kwargs) <= set(inspect.signature(fit_federated).parameters)
    # Unset silo budgets are the fit's; the fit's noise is every silo's.
    assert kwargs["silo_epsilon"] == 2.0 and kwargs["silo_delta"] == 1e-6
    assert kwargs["noise_multiplier"] == 3.0
    options = SiloOptions(
        silo_epsilon={"a": 1.0}, silo_delta=1e-7, execution="dask"
    ).driver_kwargs(budget)
    assert options["silo_epsilon"] == {"a": 1.0} and options["silo_delta"] == 1e-7
    assert options["execution"] == "dask"
    with pytest.raises(dataclasses.FrozenInstanceError):
        SiloOptions().execution = "dask"


@pytest.mark.parametrize("noise_multiplier", [None, 2.0])
def test_fit_silos_is_fit_federated_with_the_dp_sgd_schedule(data, noise_multiplier):
    # Pooled n = 1000, batch_size 100, 2 epochs: q = 0.1 and R = 20 rounds;
    # the budget's accountant and noise are every silo's, its epsilon the
    # default silo budget, and its caveats are kept.
    X, y, silos = data
    budget = PrivacyBudget(1.5, 1e-5, "pld", noise_multiplier, ("public c",))
    options = SiloOptions(silo_delta=1e-6, server_weights="size")
    fit = fit_silos(
        X, y, BinaryLogisticLoss(), PARAMS, budget, options,
        silos=silos, rng=check_noise_generator(3), seeded=True,
    )
    config = FederationConfig(
        rounds=20, sampling_probability=0.1, clip_norm=0.5, learning_rate=0.5,
        alpha=0.01, fit_intercept=False, accountant="pld",
    )
    expected = fit_federated(
        {"a": (X[:400], y[:400]), "b": (X[400:], y[400:])},
        loss=BinaryLogisticLoss(), config=config, silo_epsilon=1.5,
        silo_delta=1e-6, server_weights="size", noise_multiplier=noise_multiplier,
        random_state=check_noise_generator(3),
        caveats=("public c", "silo membership and silo sizes (treated as public "
                 "metadata)"),
    )
    np.testing.assert_array_equal(fit.coef, expected.coef)
    assert fit.privacy_record == expected.privacy_record
    assert fit.silo_reports == expected.silo_reports
    assert fit.silo_rounds == {"a": 20, "b": 20}
    assert fit.silo_delta == {"a": 1e-6, "b": 1e-6}
    if noise_multiplier is not None:
        assert fit.silo_noise_multiplier == {"a": 2.0, "b": 2.0}


def test_unseeded_fit_silos_draws_fresh_noise(data):
    # An unseeded fit's generator is OS entropy: its records are releases
    # (no seed) and two fits differ.
    X, y, silos = data
    budget = PrivacyBudget(1.0, 1e-5)
    fits = [
        fit_silos(
            X, y, BinaryLogisticLoss(), PARAMS, budget, SiloOptions(),
            silos=silos, rng=check_noise_generator(None), seeded=False,
        )
        for _ in range(2)
    ]
    assert fits[0].privacy_record.seed is None
    assert not np.array_equal(fits[0].coef, fits[1].coef)
