"""A fit that ignores a federated option set away from its default says so."""

import warnings

import numpy as np
import pytest

from sklearn_dpfair.linear_model import DPLogisticRegression
from sklearn_dpfair.neural import DPMLPClassifier


def _data(n=120):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 3))
    return X, (X[:, 0] > 0).astype(int)


def _fit_warnings(estimator, **fit_params):
    X, y = _data()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        estimator.fit(X, y, **fit_params)
    return [str(w.message) for w in caught if "only;" in str(w.message)]


def _logistic(**params):
    return DPLogisticRegression(classes=[0, 1], max_iter=1, **params)


def _mlp(**params):
    return DPMLPClassifier(
        classes=[0, 1], hidden_layer_sizes=(2,), max_iter=1, **params
    )


@pytest.mark.parametrize(
    "make, param, value",
    [
        (_logistic, "silo_epsilon", 2.0),
        (_logistic, "silo_delta", {"a": 1e-6}),
        (_logistic, "server_weights", "size"),
        (_logistic, "secure_aggregation", True),
        (_logistic, "shuffle", True),
        (_mlp, "silo_epsilon", 2.0),
        (_mlp, "secure_aggregation", True),
        (_mlp, "silo_algorithm", "spider"),
        (_mlp, "spider_period", 8),
        (_mlp, "spider_smoothness", np.inf),
    ],
)
def test_central_fit_names_the_federated_option_it_ignores(make, param, value):
    estimator = make(**{param: value})
    (message,) = _fit_warnings(estimator)
    assert f"{param}={value!r} applies to federated fits" in message
    assert "this central fit ignores it" in message
    # The parameter is left as given, and the fit is the central one.
    assert estimator.get_params()[param] == value
    assert getattr(estimator, "silo_epsilon_", None) is None


def test_one_warning_names_every_ignored_option():
    (message,) = _fit_warnings(_logistic(silo_epsilon=2.0, shuffle=True))
    assert "silo_epsilon=2.0 and shuffle=True apply to federated fits" in message
    assert "silo_epsilon=None, shuffle=False" in message


@pytest.mark.parametrize("make", [_logistic, _mlp])
def test_defaults_and_values_equal_to_them_do_not_warn(make):
    assert _fit_warnings(make()) == []
    # Explicit values equal to the defaults are not set away from them.
    assert _fit_warnings(make(silo_epsilon=None, server_weights="uniform")) == []


def test_federated_fit_takes_the_options_silently():
    X, _ = _data()
    silos = np.repeat([0, 1], len(X) // 2)
    estimator = _logistic(silo_epsilon=2.0, server_weights="size")
    assert _fit_warnings(estimator, silos=silos) == []


def test_federated_minibatch_fit_names_the_spider_options_it_ignores():
    X, _ = _data()
    silos = np.repeat([0, 1], len(X) // 2)
    (message,) = _fit_warnings(_mlp(spider_period=8), silos=silos)
    assert "spider_period=8 applies to silo_algorithm='spider' only" in message
    assert "silo_algorithm='mb-sgd' ignores it" in message
    spider = _mlp(silo_algorithm="spider", spider_period=8)
    assert _fit_warnings(spider, silos=silos) == []


def test_the_warning_points_at_the_callers_line():
    X, y = _data()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _logistic(shuffle=True).fit(X, y)
    (warning,) = [w for w in caught if "only;" in str(w.message)]
    assert warning.filename == __file__
