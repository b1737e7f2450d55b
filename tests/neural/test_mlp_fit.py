"""The network's DP-SGD fit executes the set-up planned before the data."""

import math
import warnings

import numpy as np
import pytest

from sklearn_dpfair._loss import BinaryLogisticLoss
from sklearn_dpfair.exceptions import PrivacyAccountingError
from sklearn_dpfair.neural._fit import MLPParams, fit_dp_network, network_setup
from sklearn_dpfair.privacy import PrivacyBudget

PARAMS = MLPParams(
    hidden_layer_sizes=(4,),
    activation="relu",
    clip_norm=1.0,
    batch_size="auto",
    epochs=1,
    learning_rate="auto",
    alpha=0.0,
)


def test_the_network_fit_executes_its_plan_and_refuses_another_shape():
    # Data of another shape than planned would make releases never accounted.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(float)
    budget = PrivacyBudget(1.0, 1e-5)
    setup = network_setup(201, 3, 1, PARAMS, budget, weighted=False)
    with pytest.raises(PrivacyAccountingError, match="planned for data of shape"):
        fit_dp_network(X, y, BinaryLogisticLoss(), setup, PARAMS, rng=rng)
    setup = network_setup(200, 3, 1, PARAMS, budget, weighted=False)
    # The "auto" step size is the network's, and the plan keeps its inputs.
    assert (setup.n_samples, setup.n_features, setup.budget) == (200, 3, budget)
    fit = fit_dp_network(X, y, BinaryLogisticLoss(), setup, PARAMS, rng=rng)
    assert fit.record.dp_event == setup.record.dp_event
    assert fit.n_steps == setup.n_steps


def test_strong_penalty_with_the_auto_step_stays_finite():
    # The "auto" step (up to 4 at epsilon = 8) times alpha = 5 made the
    # weights' penalty step diverge (1e73 after 5 epochs); it is capped at
    # 1 / alpha.
    from sklearn_dpfair.neural import DPMLPClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 3))
    y = (X[:, 0] > 0).astype(int)
    clf = DPMLPClassifier(
        (4,), alpha=5.0, epsilon=8.0, max_iter=5, classes=[0, 1], random_state=0
    ).fit(X, y)
    assert all(np.all(np.abs(W) < 10.0) for W in clf.coefs_)
    assert np.all(np.isfinite(clf.predict_proba(X)))


def test_a_float32_network_clips_a_weight_beyond_float32_as_float64_does():
    # A public weight of 1e300 would be cast to inf in a float32 fit (an
    # overflow warning that depends on one record, and a term that counts
    # for nothing); saturated, the weighted term is clipped to clip_norm as
    # in the float64 fit, so both take the same steps.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(float)
    weights = np.ones(len(y))
    weights[::10] = 1e300
    budget = PrivacyBudget(math.inf, 1e-5, "rdp", 0.0)
    setup = network_setup(200, 3, 1, PARAMS, budget, weighted=True)
    fits = {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for dtype in (np.float64, np.float32):
            fits[dtype] = fit_dp_network(
                X.astype(dtype),
                y,
                BinaryLogisticLoss(),
                setup,
                PARAMS,
                rng=np.random.default_rng(3),
                sample_weight=weights,
            )
    for W32, W64 in zip(fits[np.float32].weights, fits[np.float64].weights):
        np.testing.assert_allclose(W32, W64, rtol=1e-4, atol=1e-5)
