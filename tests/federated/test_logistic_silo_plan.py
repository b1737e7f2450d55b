"""DPLogisticRegression.privacy_plan(n_silos=) is the federated fit's event."""

import numpy as np
import pytest

from sklearn_dpfair.linear_model import DPLogisticRegression
from sklearn_dpfair.neural import DPMLPClassifier


def _data(n=1200, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)
    return X, y


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"accountant": "pld"}, {"silo_epsilon": 2.0, "silo_delta": 1e-5}],
)
def test_plan_with_n_silos_is_the_fitted_federated_event(kwargs):
    X, y = _data()
    silos = np.arange(len(y)) % 4  # four silos of 300 rows
    est = DPLogisticRegression(
        epsilon=1.0, classes=[0, 1], max_iter=2, random_state=0, **kwargs
    )
    plan = est.privacy_plan(len(y), X.shape[1], n_silos=4)
    est.fit(X, y, silos=silos)
    assert plan.dp_event == est.dp_event_
    assert plan.epsilon == pytest.approx(est.epsilon_, rel=1e-12)
    assert plan.adjacency == est.adjacency_


def test_a_federated_plan_refuses_what_the_federated_fit_refuses():
    with pytest.raises(ValueError, match="dp-sgd"):
        DPLogisticRegression(
            solver="output-perturbation", feature_norm_bound=1.0, alpha=0.1
        ).privacy_plan(1000, 3, n_silos=2)
    with pytest.raises(ValueError, match="per-silo|one silo_epsilon"):
        DPLogisticRegression(silo_epsilon={0: 1.0, 1: 2.0}).privacy_plan(
            1000, 3, n_silos=2
        )


@pytest.mark.parametrize("n_silos", [0, -1, 1201])
def test_a_plan_needs_between_one_and_n_samples_silos(n_silos):
    with pytest.raises(ValueError, match="n_silos"):
        DPLogisticRegression(classes=[0, 1], epsilon=1.0).privacy_plan(
            1200, 4, n_silos=n_silos
        )


@pytest.mark.parametrize("make", [DPLogisticRegression, DPMLPClassifier])
def test_the_plan_names_the_column_map_the_fit_applies(make):
    X, y = _data()
    silos = np.arange(len(y)) % 4
    for params in (
        # No silo private: the columns are standardized exactly (public).
        {"epsilon": np.inf},
        # Declared bounds and no silo private: still the exact map.
        {"epsilon": np.inf, "feature_bounds": (-5, 5), "feature_scaling": "auto"},
        # Declared bounds: the public map every silo applies.
        {"epsilon": 1.0, "feature_bounds": (-5, 5), "feature_scaling": "auto"},
    ):
        est = make(classes=[0, 1], max_iter=2, random_state=0, **params)
        plan = est.privacy_plan(len(y), X.shape[1], n_silos=4)
        est.fit(X, y, silos=silos)
        assert plan.mechanism == est.privacy_record_.mechanism
        assert plan.dp_event == est.dp_event_
        if params["epsilon"] == np.inf:
            assert "exact means" in plan.mechanism
    assert "declared feature_bounds" in plan.mechanism


def test_a_sparse_federated_plan_is_refused_as_its_fit_is():
    import scipy.sparse as sp

    X, y = _data(n=300)
    est = DPLogisticRegression(epsilon=1.0, classes=[0, 1], max_iter=2)
    with pytest.raises(TypeError, match="does not accept sparse X"):
        est.fit(sp.csr_matrix(X), y, silos=np.arange(len(y)) % 3)
    with pytest.raises(TypeError, match="does not accept sparse X"):
        est.privacy_plan(*X.shape, sparse=True, n_silos=3)
    # The central sparse fit is still planned.
    assert est.privacy_plan(*X.shape, sparse=True).epsilon <= 1.0


def test_a_spider_plan_refuses_secure_aggregation_as_its_fit_does():
    # The fit refuses SPIDER with secure aggregation (its accounting covers
    # minibatch SGD): no plan is made for it either.
    est = DPMLPClassifier(
        epsilon=1.0,
        classes=[0, 1],
        max_iter=2,
        silo_algorithm="spider",
        spider_period=2,
        spider_smoothness=1.0,
        secure_aggregation=True,
    )
    with pytest.raises(ValueError, match="secure_aggregation"):
        est.privacy_plan(1200, 4, n_silos=3)
    X, y = _data()
    with pytest.raises(ValueError, match="secure_aggregation"):
        est.fit(X, y, silos=np.arange(len(y)) % 3)
