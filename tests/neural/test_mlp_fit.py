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


def _wine():
    from sklearn.datasets import load_wine

    return load_wine(return_X_y=True)


def test_the_non_private_limit_halves_an_auto_step_that_diverges():
    # Step 1.0 on standardized wine with two identity layers of 32 units
    # diverged silently (weights of 1e234, training accuracy 0); without
    # noise the data may be read, so the diverging run is restarted from the
    # same start and batches at half the step.
    from sklearn_dpfair.neural import DPMLPClassifier

    X, y = _wine()
    kw = dict(activation="identity", epsilon=math.inf, classes=[0, 1, 2])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        clf = DPMLPClassifier((32, 32), random_state=0, **kw).fit(X, y)
    assert clf.score(X, y) > 0.95
    assert all(np.abs(W).max() < 100 for W in clf.coefs_)
    # The accepted run is the plain run at the halved step.
    half = DPMLPClassifier((32, 32), random_state=0, learning_rate=0.5, **kw)
    half.fit(X, y)
    for a, b in zip(clf.coefs_, half.coefs_):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_a_diverging_non_private_fit_of_minibatches_returns_finite_probabilities():
    # Poisson batches (q < 1) and the epoch checkpoints: NaN probabilities
    # and overflow warnings from the library's lines before.
    from sklearn.datasets import make_classification

    from sklearn_dpfair.neural import DPMLPClassifier

    X, y = make_classification(1000, 5, n_informative=3, n_classes=3, random_state=0)
    clf = DPMLPClassifier(
        (8, 4), activation="identity", epsilon=math.inf, classes=[0, 1, 2],
        random_state=0, max_iter=5,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        clf.fit(X, y)
        proba = clf.predict_proba(X)
    assert np.all(np.isfinite(proba))
    assert clf.score(X, y) > 0.6


def test_a_given_step_that_diverges_without_noise_is_refused():
    # The user's step is not changed behind their back; the error names it
    # and nothing is fitted.
    from sklearn_dpfair.neural import DPMLPClassifier

    X, y = _wine()
    clf = DPMLPClassifier(
        (32, 32), activation="identity", epsilon=math.inf, classes=[0, 1, 2],
        random_state=0, learning_rate=1.0,
    )
    with pytest.raises(ValueError, match=r"learning_rate=1\.0 diverges"):
        clf.fit(X, y)
    assert not hasattr(clf, "coefs_")


def test_a_private_fit_never_reads_its_training_loss(monkeypatch):
    # The divergence check reads the data: a private fit must run its
    # planned steps with no branch on them (what runs is what is accounted).
    import sklearn_dpfair.neural._fit as fit_module
    from sklearn_dpfair.neural import DPMLPClassifier
    from sklearn_dpfair.neural._sgd import noisy_network_sgd
    from sklearn_dpfair.privacy import GaussianMechanism

    def refuse(*args, **kwargs):
        raise AssertionError("a private fit evaluated its training loss")

    monkeypatch.setattr(fit_module, "network_objective", refuse)
    X, y = _wine()
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    for kw in ({"epsilon": 1.0}, {"epsilon": math.inf, "noise_multiplier": 0.0}):
        DPMLPClassifier(
            (32, 32), activation="identity", classes=[0, 1, 2], random_state=0,
            max_iter=2, **kw,
        ).fit(X, y)
    # And the loop refuses a monitor with a mechanism that noises or clips.
    W, b = [np.zeros((2, 1))], [np.zeros(1)]
    for mechanism in (GaussianMechanism(1.0, 1.0), GaussianMechanism(1.0, 0.0)):
        with pytest.raises(ValueError, match="monitor"):
            noisy_network_sgd(
                np.ones((4, 2)), np.ones(4), BinaryLogisticLoss(), W, b,
                activation="relu", mechanism=mechanism, sampling_probability=1.0,
                n_steps=1, learning_rate=1.0, alpha=0.0,
                rng=np.random.default_rng(0), monitor=lambda *a: None,
            )


@pytest.mark.parametrize(
    "kw", [{"epsilon": math.inf}, {"noise_multiplier": 1e30}, {"epsilon": 1.0}]
)
def test_a_step_count_beyond_the_bound_is_refused_before_the_data(kw):
    # max_iter=10**30 ran (or calibrated) for ever. Refused from the
    # parameters alone: the rows (here NaN) are never read.
    from sklearn_dpfair._solvers._schedules import MAX_STEPS
    from sklearn_dpfair.neural import DPMLPClassifier

    clf = DPMLPClassifier((4,), classes=[0, 1], max_iter=10**30, **kw)
    X = np.full((20, 2), np.nan)
    y = np.arange(20) % 2
    match = r"max_iter=1e\+30 epochs take at least as many steps"
    with pytest.raises(ValueError, match=match):
        clf.fit(X, y)
    with pytest.raises(ValueError, match="max_iter"):
        clf.fit(X, y, silos=np.arange(20) % 2)
    for plan_kw in ({}, {"n_silos": 2}):
        with pytest.raises(ValueError, match="max_iter"):
            clf.privacy_plan(20, 2, **plan_kw)
    assert not hasattr(clf, "coefs_")
    # The product of epochs and batches per epoch is bounded too, and names
    # both parameters; MAX_STEPS itself is allowed.
    X = np.random.default_rng(0).normal(size=(20, 2))
    clf.set_params(max_iter=MAX_STEPS, batch_size=1)
    for plan_kw in ({}, {"n_silos": 2}):
        match = r"max_iter=1000000 epochs .*\(batch_size=1 of"
        with pytest.raises(ValueError, match=match):
            clf.privacy_plan(20, 2, **plan_kw)
    match = "pass a larger batch_size or a smaller max_iter"
    with pytest.raises(ValueError, match=match):
        clf.fit(X, y, silos=np.arange(20) % 2)
    with pytest.raises(ValueError, match=match):
        clf.fit(X, y)
