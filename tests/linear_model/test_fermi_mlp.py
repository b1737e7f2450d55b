# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""FERMIClassifier and DPFERMIClassifier with hidden layers (a dense network)."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_dpfair import DPFERMIClassifier, FERMIClassifier
from sklearn_dpfair.linear_model import _fermi


def _nonlinear(n, seed=0, d=4, shift=0.0):
    """A problem a linear model cannot solve (a ring), with a group shift."""
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    X = rng.normal(size=(n, d))
    X[:, 0] += shift * s
    r = X[:, 0] ** 2 + X[:, 1] ** 2
    y = (r + 0.3 * rng.normal(size=n) > 1.4).astype(int)
    return StandardScaler().fit_transform(X), y, s


def _fit_quiet(est, X, y, s):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(X, y, sensitive_features=s)


def _accuracy(est, X, y):
    return float(np.mean(est.predict(X) == y))


def test_parameters_and_fitted_attributes():
    X, y, s = _nonlinear(300)
    est = FERMIClassifier(hidden_layer_sizes=(6, 3), activation="tanh", random_state=0)
    assert est.get_params()["hidden_layer_sizes"] == (6, 3)
    assert est.get_params()["activation"] == "tanh"
    _fit_quiet(est, X, y, s)
    assert [W.shape for W in est.coefs_] == [(4, 6), (6, 3), (3, 1)]
    assert [b.shape for b in est.intercepts_] == [(6,), (3,), (1,)]
    assert est.n_layers_ == 4 and est.out_activation_ == "logistic"
    assert not hasattr(est, "coef_") and not hasattr(est, "intercept_")
    assert est.decision_function(X).shape == (300,)
    proba = est.predict_proba(X)
    assert proba.shape == (300, 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    # The decision function is the network's output (logit of classes_[1]).
    a = np.maximum(0, 0)  # noqa: F841 (relu unused: tanh here)
    h = X
    for W, b in zip(est.coefs_[:-1], est.intercepts_[:-1]):
        h = np.tanh(h @ W + b)
    z = (h @ est.coefs_[-1] + est.intercepts_[-1]).ravel()
    np.testing.assert_allclose(est.decision_function(X), z, rtol=1e-10, atol=1e-12)
    # A refit as the linear model drops the network's attributes.
    est.set_params(hidden_layer_sizes=())
    _fit_quiet(est, X, y, s)
    assert hasattr(est, "coef_") and not hasattr(est, "coefs_")


def test_multiclass_network():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 3))
    y = np.digitize(X[:, 0] ** 2 + X[:, 1], [0.5, 1.5])
    s = rng.integers(0, 2, 300)
    est = _fit_quiet(
        DPFERMIClassifier(
            hidden_layer_sizes=(5,),
            epsilon=np.inf,
            classes=[0, 1, 2],
            groups=[0, 1],
            constraint="equalized_odds",
            max_iter=3,
            random_state=0,
        ),
        X,
        y,
        s,
    )
    assert est.coefs_[-1].shape == (5, 3) and est.out_activation_ == "softmax"
    assert est.decision_function(X).shape == (300, 3)


@pytest.mark.parametrize("cls", [FERMIClassifier, DPFERMIClassifier])
def test_invalid_hidden_layer_sizes_and_activation(cls):
    X, y, s = _nonlinear(100)
    with pytest.raises(ValueError, match="hidden_layer_sizes"):
        cls(hidden_layer_sizes=(4, 0)).fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match="activation"):
        cls(hidden_layer_sizes=(4,), activation="softplus").fit(
            X, y, sensitive_features=s
        )


@pytest.mark.parametrize("cls", [FERMIClassifier, DPFERMIClassifier])
@pytest.mark.parametrize("hidden", [True, (True,), (4, False), np.array([True])])
def test_boolean_hidden_layer_sizes_are_refused(cls, hidden):
    # A bool is an int to Python: True would build one hidden unit.
    X, y, s = _nonlinear(100)
    est = cls(hidden_layer_sizes=hidden)
    with pytest.raises(ValueError, match="hidden_layer_sizes"):
        est.fit(X, y, sensitive_features=s)
    assert not hasattr(est, "n_features_in_")


def test_relu_network_stopping_short_names_the_activation():
    # L-BFGS stalls on ReLU's kinks: the warning says so and points to a
    # smooth activation, not to the floating-point precision.
    X, y, s = _nonlinear(200, seed=2, shift=1.0)
    est = FERMIClassifier(
        hidden_layer_sizes=(4,), fairness_weight=0.0, max_iter=5, alpha=1e-3,
        random_state=0,
    )
    with pytest.warns(ConvergenceWarning, match="activation='tanh' or 'logistic'"):
        est.fit(X, y, sensitive_features=s)
    assert est.stationarity_ > est.tol
    assert est.n_full_batch_iter_ < est.max_full_batch_iter


@pytest.mark.parametrize("cls", [FERMIClassifier, DPFERMIClassifier])
def test_sparse_input_refused_naming_hidden_layer_sizes(cls, monkeypatch):
    X, y, s = _nonlinear(100)

    def no_read(*args, **kwargs):
        raise AssertionError("the data were read before the refusal")

    monkeypatch.setattr(_fermi, "validate_data", no_read)
    with pytest.raises(TypeError, match="hidden_layer_sizes=.*needs a dense X"):
        cls(hidden_layer_sizes=(4,)).fit(sp.csr_matrix(X), y, sensitive_features=s)


def test_dask_input_refused_naming_hidden_layer_sizes(monkeypatch):
    dd = pytest.importorskip("dask.array")
    X, y, s = _nonlinear(100)
    called = []
    monkeypatch.setattr(
        _fermi, "distribute_training_data", lambda *a, **k: called.append(1)
    )
    with pytest.raises(ValueError, match="hidden_layer_sizes"):
        DPFERMIClassifier(hidden_layer_sizes=(4,)).fit(
            dd.from_array(X, chunks=50), y, sensitive_features=s
        )
    assert not called


def test_parity_with_mlpclassifier_without_fairness():
    # epsilon-free, fairness-free limit: the network minimizes the same
    # cross-entropy as scikit-learn's MLPClassifier (lbfgs). alpha: ours is
    # alpha / 2 ||W||^2 on the mean loss, scikit-learn's alpha / (2 n).
    # Different starts (and SGDA warm start) of a non-convex problem reach
    # different local minima: ours must not lose more than 0.01 test
    # accuracy (6 of 600 rows) to scikit-learn's; it may win by more.
    X, y, s = _nonlinear(1200, seed=2)
    Xtr, ytr, str_, Xte, yte = X[:600], y[:600], s[:600], X[600:], y[600:]
    ref = MLPClassifier(
        hidden_layer_sizes=(32,),
        solver="lbfgs",
        alpha=1e-2,
        max_iter=2000,
        random_state=0,
    ).fit(Xtr, ytr)
    acc_ref = _accuracy(ref, Xte, yte)
    assert acc_ref > 0.85  # a linear model stays near 0.6 on the ring
    fermi = _fit_quiet(
        FERMIClassifier(
            hidden_layer_sizes=(32,),
            fairness_weight=0,
            alpha=1e-2 / 600,
            random_state=0,
        ),
        Xtr,
        ytr,
        str_,
    )
    assert _accuracy(fermi, Xte, yte) >= acc_ref - 0.01 - 1e-12
    dp = _fit_quiet(
        DPFERMIClassifier(
            hidden_layer_sizes=(32,),
            fairness_weight=0,
            alpha=1e-2 / 600,
            epsilon=np.inf,
            classes=[0, 1],
            groups=[0, 1],
            random_state=0,
        ),
        Xtr,
        ytr,
        str_,
    )
    assert _accuracy(dp, Xte, yte) >= acc_ref - 0.01 - 1e-12
    linear = _fit_quiet(
        FERMIClassifier(fairness_weight=0, random_state=0), Xtr, ytr, str_
    )
    assert _accuracy(linear, Xte, yte) < acc_ref - 0.1


@pytest.mark.parametrize("estimator", [FERMIClassifier, DPFERMIClassifier])
def test_network_on_raw_columns_scores_as_on_standardized_ones(estimator):
    # A network has no per-column preconditioning and SGDA's steps are
    # constant: on columns offset by 500 and 1e5 and spread from 1e-3 to
    # 1e4 every unit saturated before (held-out accuracy 0.5, log-loss
    # log 2, no warning). Without privacy the fit maps the columns by their
    # exact moments and reports the first layer in raw units. The fits are
    # non-convex and stop at max_full_batch_iter, and the map divides only
    # spreads above 1 (the 1e-3 column keeps its units), so one data seed
    # can differ by up to 0.03 either way (measured on seeds 0-4: raw minus
    # standardized -0.029 to +0.015, 0.875-0.933 on either columns, with
    # the BLAS and compilers of one machine); the mean over three seeds is
    # within 0.01.
    private = {"epsilon": np.inf, "classes": [0, 1], "groups": [0, 1]}
    accuracy = {"raw": [], "standard": []}
    for seed in (0, 1, 2):
        X, y, s = _nonlinear(1200, seed=seed)
        raw = X * [100.0, 1e4, 1e-3, 1.0] + [500.0, 0.0, 1e5, 0.0]
        standard = StandardScaler().fit(raw[:600]).transform(raw)
        for name, columns in (("raw", raw), ("standard", standard)):
            fit = _fit_quiet(
                estimator(
                    hidden_layer_sizes=(32,), fairness_weight=0, alpha=1e-2 / 600,
                    random_state=0,
                    **(private if estimator is DPFERMIClassifier else {}),
                ),
                columns[:600],
                y[:600],
                s[:600],
            )
            accuracy[name].append(_accuracy(fit, columns[600:], y[600:]))
    # Before the map every raw fit scored 0.5.
    assert min(accuracy["raw"]) > 0.85, accuracy
    assert np.mean(accuracy["raw"]) >= np.mean(accuracy["standard"]) - 0.02, accuracy


def test_network_without_intercept_does_not_depend_on_column_units():
    # Without biases a shift cannot be absorbed: the columns are divided by
    # their root mean squares (where above 1), not centred, so stretching
    # a unit-scale column changes nothing but rounding (the first layer
    # absorbs the units; alpha is 0).
    X, y, s = _nonlinear(400, seed=5)
    units = np.array([1e3, 1.0, 1.0, 50.0])
    params = dict(
        hidden_layer_sizes=(4,), fit_intercept=False, max_iter=2,
        max_full_batch_iter=20, random_state=0,
    )
    a = _fit_quiet(FERMIClassifier(**params), X, y, s)
    b = _fit_quiet(FERMIClassifier(**params), X * units, y, s)
    np.testing.assert_allclose(
        a.decision_function(X), b.decision_function(X * units), rtol=1e-4, atol=1e-6
    )
    np.testing.assert_allclose(b.coefs_[0] * units[:, None], a.coefs_[0], rtol=1e-4)
    assert all(not np.any(b) for b in b.intercepts_)


def test_disparity_bound_met_by_network():
    X, y, s = _nonlinear(500, seed=3, shift=1.0)
    plain = _fit_quiet(
        FERMIClassifier(hidden_layer_sizes=(8,), fairness_weight=0, random_state=0),
        X,
        y,
        s,
    )
    pred = plain.predict(X)
    gap = abs(pred[s == 0].mean() - pred[s == 1].mean())
    bound = 0.03
    assert gap > 2 * bound
    est = _fit_quiet(
        FERMIClassifier(
            hidden_layer_sizes=(8,),
            disparity_bound=bound,
            max_full_batch_iter=200,
            random_state=0,
        ),
        X,
        y,
        s,
    )
    assert est.bound_met_ and est.training_disparity_ <= bound
    pred = est.predict(X)
    assert abs(pred[s == 0].mean() - pred[s == 1].mean()) <= bound + 1e-12
    assert est.fairness_weight_ > 0
    assert len(est.weight_path_) >= 2


@pytest.mark.parametrize(
    "estimator",
    [
        FERMIClassifier(max_full_batch_iter=50),
        DPFERMIClassifier(epsilon=np.inf, classes=[0, 1], groups=[0, 1]),
    ],
    ids=["FERMI", "DP-FERMI-inf"],
)
def test_float32_network_bound_is_judged_on_what_predict_returns(estimator):
    # A network solves on centred, standardized columns in float64; predict
    # runs the released float32 network on the raw columns, whose first
    # layer bias cancels an offset of 1e6 in float32. training_disparity_
    # and bound_met_ are those of predict's training predictions.
    rng = np.random.default_rng(1)
    n, bound = 600, 0.05
    s = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 3)) + 0.8 * s[:, None]
    y = (X @ [1.0, -0.5, 0.7] + 0.5 * s + rng.logistic(size=n) > 0).astype(int)
    X[:, 0] = X[:, 0] * 10 + 1e6
    X = X.astype(np.float32)
    est = clone(estimator).set_params(
        hidden_layer_sizes=(4,),
        activation="tanh",
        alpha=1e-3,
        disparity_bound=bound,
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(X, y, sensitive_features=s)
    assert all(W.dtype == np.float32 for W in est.coefs_)
    pred = est.predict(X)
    gap = abs(np.mean(pred[s == 0]) - np.mean(pred[s == 1]))
    assert est.training_disparity_ == pytest.approx(gap, abs=1e-12)
    assert est.bound_met_ is bool(gap <= bound)


def test_private_network_with_and_without_disparity_bound():
    X, y, s = _nonlinear(2000, seed=4, shift=1.0)
    common = dict(
        hidden_layer_sizes=(8,),
        epsilon=2.0,
        classes=[0, 1],
        groups=[0, 1],
        max_iter=3,
        random_state=0,
    )
    est = DPFERMIClassifier(**common).fit(X, y, sensitive_features=s)
    linear = DPFERMIClassifier(**{**common, "hidden_layer_sizes": ()}).fit(
        X, y, sensitive_features=s
    )
    # The model does not enter the accounting: the same event and epsilon.
    assert est.dp_event_ == linear.dp_event_
    assert est.epsilon_ == linear.epsilon_ <= 2.0
    assert est.privacy_plan(X.shape[0], X.shape[1]).dp_event == est.dp_event_
    assert np.all(np.isfinite(est.decision_function(X)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        bounded = DPFERMIClassifier(**common, disparity_bound=0.1).fit(
            X, y, sensitive_features=s
        )
    assert len(bounded.weight_path_) > 1
    assert bounded.dp_event_ == bounded.privacy_plan(*X.shape).dp_event


def test_routing_through_pipeline_with_hidden_layers():
    import sklearn

    X, y, s = _nonlinear(400, seed=5, shift=1.0)
    params = dict(
        hidden_layer_sizes=(6,),
        fairness_weight=16.0,
        random_state=0,
        max_full_batch_iter=100,
    )
    with sklearn.config_context(enable_metadata_routing=True):
        pipe = Pipeline(
            [
                ("scale", StandardScaler()),
                (
                    "clf",
                    FERMIClassifier(**params).set_fit_request(sensitive_features=True),
                ),
            ]
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            pipe.fit(X, y, sensitive_features=s)
            Xs = StandardScaler().fit_transform(X)
            direct = FERMIClassifier(**params).fit(Xs, y, sensitive_features=s)
            unfair = FERMIClassifier(**{**params, "fairness_weight": 0.0}).fit(
                Xs, y, sensitive_features=s
            )
    # The routed groups reached the penalty: the same fit as a direct one
    # (same data, seed and arithmetic), and not the fit without penalty.
    np.testing.assert_allclose(
        pipe[-1].coefs_[0], direct.coefs_[0], rtol=1e-10, atol=1e-12
    )
    assert not np.allclose(unfair.coefs_[0], direct.coefs_[0])


def test_seeded_fits_repeat_and_float32():
    X, y, s = _nonlinear(300, seed=6)
    params = dict(
        hidden_layer_sizes=(5,),
        epsilon=1.0,
        classes=[0, 1],
        groups=[0, 1],
        max_iter=2,
        random_state=3,
    )
    a = DPFERMIClassifier(**params).fit(X, y, sensitive_features=s)
    b = DPFERMIClassifier(**params).fit(X, y, sensitive_features=s)
    for Wa, Wb in zip(a.coefs_, b.coefs_):
        np.testing.assert_array_equal(Wa, Wb)
    c = DPFERMIClassifier(**params).fit(X.astype(np.float32), y, sensitive_features=s)
    assert all(W.dtype == np.float32 for W in c.coefs_)


def test_feature_scaling_reports_first_layer_in_user_units():
    # Public bounds: the network sees (x - mid) / half; the released first
    # layer absorbs the map, so raw X scores like the scaled X on the
    # internal network (identity activation: the whole model is affine).
    X, y, s = _nonlinear(600, seed=7)
    Xraw = 100.0 * X + 50.0
    bounds = np.column_stack([Xraw.min(0) - 1, Xraw.max(0) + 1])
    common = dict(
        hidden_layer_sizes=(4,),
        activation="identity",
        epsilon=4.0,
        classes=[0, 1],
        groups=[0, 1],
        max_iter=2,
        random_state=0,
    )
    raw = DPFERMIClassifier(
        **common, feature_scaling="auto", feature_bounds=bounds
    ).fit(Xraw, y, sensitive_features=s)
    mid, half = bounds.mean(axis=1), (bounds[:, 1] - bounds[:, 0]) / 2
    scaled = DPFERMIClassifier(**common).fit(
        (Xraw - mid) / half, y, sensitive_features=s
    )
    np.testing.assert_allclose(
        raw.decision_function(Xraw),
        scaled.decision_function((Xraw - mid) / half),
        rtol=1e-6,
        atol=1e-8,
    )


def test_torch_cpu_matches_numpy_for_network(monkeypatch):
    torch = pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    import array_api_compat.torch as xp_torch

    from sklearn_dpfair.utils._array_api import ArrayBackend, resolve_backend

    backend = ArrayBackend(xp_torch, torch.device("cpu"), np)
    n_threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        monkeypatch.setattr(
            _fermi,
            "resolve_backend",
            lambda X, device="cpu", **kw: (
                backend if device == "cuda" else resolve_backend(X, device, **kw)
            ),
        )
        X, y, s = _nonlinear(400, seed=8, shift=1.0)
        for cls, params in (
            (
                DPFERMIClassifier,
                dict(epsilon=2.0, classes=[0, 1], groups=[0, 1], max_iter=3),
            ),
            (FERMIClassifier, dict(full_batch_phase=None, max_iter=3, batch_size=64)),
        ):
            params = dict(params, hidden_layer_sizes=(6,), random_state=0)
            ref = cls(**params).fit(X, y, sensitive_features=s)
            got = cls(**params, device="cuda").fit(X, y, sensitive_features=s)
            # Same batches, noise and start (drawn on the host); a few tens
            # of steps of float64 arithmetic summed in another order: ~1e-13.
            for a, b in zip(
                [*ref.coefs_, *ref.intercepts_], [*got.coefs_, *got.intercepts_]
            ):
                assert isinstance(b, np.ndarray)
                np.testing.assert_allclose(b, a, rtol=0, atol=1e-10)
            np.testing.assert_allclose(got.dual_coef_, ref.dual_coef_, atol=1e-10)
            if cls is DPFERMIClassifier:
                assert got.dp_event_ == ref.dp_event_
    finally:
        torch.set_num_threads(n_threads)


def test_intercept_only_release_is_a_constant_network():
    X, y, s = _nonlinear(200, seed=9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        est = DPFERMIClassifier(
            hidden_layer_sizes=(5,),
            epsilon=0.05,
            classes=[0, 1],
            groups=[0, 1],
            random_state=0,
        ).fit(X, y, sensitive_features=s)
    assert est.intercept_only_
    assert [W.shape for W in est.coefs_] == [(4, 5), (5, 1)]
    assert not any(np.any(W) for W in est.coefs_)
    assert not hasattr(est, "coef_")
    assert np.unique(est.predict(X)).size == 1


def test_non_private_limit_record_names_the_network_phase():
    X, y, s = _nonlinear(200, seed=10)
    est = _fit_quiet(
        DPFERMIClassifier(
            hidden_layer_sizes=(3,), epsilon=np.inf, classes=[0, 1], groups=[0, 1],
            max_iter=2, random_state=0,
        ),
        X, y, s,
    )
    assert "network's weights and biases" in est.privacy_record_.mechanism
    assert "centred by their exact means" in est.privacy_record_.mechanism


def test_dp_fermi_network_at_infinite_epsilon_warns_when_it_stops_short():
    # Its full-batch phase is FERMIClassifier's, and so is the warning when
    # it stops short of the tolerance (it releases nothing).
    X, y, s = _nonlinear(600, seed=0, shift=1.0)
    est = DPFERMIClassifier(
        hidden_layer_sizes=(16,), epsilon=np.inf, classes=[0, 1], groups=[0, 1],
        random_state=0,
    )
    with pytest.warns(ConvergenceWarning, match="DPFERMIClassifier's full-batch"):
        est.fit(X, y, sensitive_features=s)


@pytest.mark.parametrize("cls", [FERMIClassifier, DPFERMIClassifier])
@pytest.mark.parametrize("hidden", [10**30, (2**30, 2**30)])
def test_widths_beyond_one_numpy_array_are_refused_naming_the_parameter(
    cls, hidden
):
    # numpy refused such a network only while initializing it, after the
    # rows were read, with "Maximum allowed dimension exceeded".
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int)
    s = rng.integers(0, 2, 40)
    clf = cls(hidden_layer_sizes=hidden, random_state=0)
    if cls is DPFERMIClassifier:
        clf.set_params(classes=[0, 1], groups=[0, 1])
        with pytest.raises(ValueError, match="hidden_layer_sizes=.* is too large"):
            clf.privacy_plan(40, 3)
    with pytest.raises(ValueError, match="hidden_layer_sizes=.* is too large"):
        clf.fit(X, y, sensitive_features=s)
