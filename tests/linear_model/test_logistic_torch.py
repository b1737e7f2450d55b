# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""DPLogisticRegression on the torch backend (CPU here; CUDA where visible).

What is promised, and tested here: for the same seed, numpy and torch draw the
same batches and the same noise (both come from the fit's numpy generator on
the host), spend the identical epsilon, and return coefficients equal up to
floating-point round-off: ``atol=1e-10`` in float64, ``1e-4`` in float32
(measured: ~5e-16 and ~5e-7 on Adult-sized problems).
"""

import copy
import pickle
import sys
import warnings

import numpy as np
import pytest
import sklearn
from namespace_prediction import check_prediction_follows_input
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression

from sklearn_dpfair import DPFERMIClassifier, DPLogisticRegression
from sklearn_dpfair.privacy import epsilon_of

torch = pytest.importorskip("torch")
pytest.importorskip("array_api_compat")

_ATOL = {np.float64: 1e-10, np.float32: 1e-4}
_CUDA = torch.cuda.is_available()

# One torch thread per test (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("single_torch_thread")


def _data(seed, n_classes, dtype, n=1500, d=6):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.exponential(1.0, size=(1, d))
    logits = X @ rng.normal(size=(d, n_classes))
    y = np.argmax(logits + rng.gumbel(size=logits.shape), axis=1)
    return X.astype(dtype), y


_CONFIGS = {
    "binary": (2, np.float64, {}),
    "multiclass": (3, np.float64, {}),
    "binary-float32": (2, np.float32, {}),
    "multiclass-float32": (3, np.float32, {"clip_norm": 0.5}),
    "no-intercept-l2": (2, np.float64, {"fit_intercept": False, "alpha": 0.01}),
    "full-batch": (3, np.float64, {"batch_size": "full", "max_iter": 30}),
    # The DP-SGD loop without noise or active clipping (a user noise
    # multiplier keeps it; epsilon = inf alone is the full-batch L-BFGS fit
    # on every backend, test_epsilon_inf_is_the_full_batch_fit_on_torch).
    "non-private": (
        2,
        np.float64,
        {"epsilon": np.inf, "noise_multiplier": 0.0, "clip_norm": 1e300},
    ),
}


def _assert_same_fit(ref, other, dtype):
    coef, intercept = other.coef_, other.intercept_
    if torch.is_tensor(coef):
        coef, intercept = coef.cpu().numpy(), intercept.cpu().numpy()
    assert coef.dtype == ref.coef_.dtype
    np.testing.assert_allclose(coef, ref.coef_, rtol=0, atol=_ATOL[dtype])
    np.testing.assert_allclose(intercept, ref.intercept_, rtol=0, atol=_ATOL[dtype])
    assert other.epsilon_ == ref.epsilon_
    assert other.noise_multiplier_ == ref.noise_multiplier_
    assert other.dp_event_ == ref.dp_event_
    assert other.t_ == ref.t_
    np.testing.assert_array_equal(other.classes_, ref.classes_)


@pytest.mark.parametrize("name", sorted(_CONFIGS))
def test_torch_cpu_matches_numpy(name, dispatch, global_random_seed):
    n_classes, dtype, params = _CONFIGS[name]
    X, y = _data(global_random_seed, n_classes, dtype)
    kwargs = {"classes": list(range(n_classes)), "random_state": global_random_seed}
    with sklearn.config_context(array_api_dispatch=False):
        ref = DPLogisticRegression(**kwargs, **params).fit(X, y)
    fitted = DPLogisticRegression(**kwargs, **params).fit(
        torch.from_numpy(X), torch.from_numpy(y)
    )
    # scikit-learn's rule under dispatch: fitted arrays in X's namespace.
    assert torch.is_tensor(fitted.coef_) and torch.is_tensor(fitted.intercept_)
    assert fitted.coef_.device == torch.device("cpu")
    assert isinstance(fitted.classes_, np.ndarray)
    _assert_same_fit(ref, fitted, dtype)


def test_silo_fit_on_torch_gives_torch_attributes(dispatch):
    # The silos train on the host; the fitted arrays follow X's namespace
    # (numpy ones made score() mix namespaces and raise).
    X, y = _data(0, 2, np.float64)
    silos = np.arange(len(y)) % 3
    with sklearn.config_context(array_api_dispatch=False):
        ref = DPLogisticRegression(classes=[0, 1], random_state=0).fit(
            X, y, silos=silos
        )
    clf = DPLogisticRegression(classes=[0, 1], random_state=0).fit(
        torch.from_numpy(X), torch.from_numpy(y), silos=silos
    )
    assert torch.is_tensor(clf.coef_) and torch.is_tensor(clf.intercept_)
    np.testing.assert_allclose(clf.coef_.numpy(), ref.coef_, atol=1e-10)
    assert clf.score(torch.from_numpy(X), torch.from_numpy(y)) == ref.score(X, y)


def test_epsilon_recomputed_from_event_on_torch(dispatch):
    X, y = _data(0, 2, np.float64)
    clf = DPLogisticRegression(epsilon=0.7, classes=[0, 1], random_state=0)
    clf.fit(torch.from_numpy(X), torch.from_numpy(y))
    assert clf.epsilon_ <= 0.7
    assert epsilon_of(clf.dp_event_, clf.delta_, "rdp") == clf.epsilon_


def test_torch_input_without_dispatch_gives_numpy():
    X, y = _data(1, 2, np.float64)
    ref = DPLogisticRegression(classes=[0, 1], random_state=1).fit(X, y)
    clf = DPLogisticRegression(classes=[0, 1], random_state=1)
    clf.fit(torch.from_numpy(X), torch.from_numpy(y))
    assert isinstance(clf.coef_, np.ndarray)
    np.testing.assert_array_equal(clf.coef_, ref.coef_)


def test_y_may_stay_numpy_under_dispatch(dispatch):
    X, y = _data(2, 3, np.float64)
    clf = DPLogisticRegression(classes=[0, 1, 2], random_state=2)
    clf.fit(torch.from_numpy(X), y)
    assert torch.is_tensor(clf.coef_)


@pytest.mark.skipif(_CUDA, reason="a CUDA device is visible")
def test_auto_without_gpu_is_the_numpy_fit():
    X, y = _data(3, 2, np.float64)
    ref = DPLogisticRegression(classes=[0, 1], random_state=3).fit(X, y)
    clf = DPLogisticRegression(classes=[0, 1], random_state=3, device="auto")
    clf.fit(X, y)
    np.testing.assert_array_equal(clf.coef_, ref.coef_)
    clone = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(clone.predict(X), ref.predict(X))


@pytest.mark.skipif(_CUDA, reason="a CUDA device is visible")
def test_cuda_without_gpu_raises():
    X, y = _data(0, 2, np.float64)
    with pytest.raises(ValueError, match="sees no CUDA device"):
        DPLogisticRegression(classes=[0, 1], device="cuda").fit(X, y)


def test_cuda_without_torch_names_the_extra(monkeypatch):
    for name in ("torch", "array_api_compat", "array_api_compat.torch"):
        monkeypatch.setitem(sys.modules, name, None)
    X, y = _data(0, 2, np.float64)
    with pytest.raises(ImportError, match=r"sklearn-dpfair\[torch\]"):
        DPLogisticRegression(classes=[0, 1], device="cuda").fit(X, y)
    # The default never needs torch.
    DPLogisticRegression(classes=[0, 1], random_state=0).fit(X, y)


def test_unknown_device_is_a_parameter_error():
    X, y = _data(0, 2, np.float64)
    with pytest.raises(ValueError, match="'device' parameter"):
        DPLogisticRegression(classes=[0, 1], device="gpu").fit(X, y)


def test_device_must_match_dispatched_input(dispatch):
    X, y = _data(0, 2, np.float64)
    with pytest.raises(ValueError, match="with array_api_dispatch the fit runs"):
        DPLogisticRegression(classes=[0, 1], device="cuda").fit(torch.from_numpy(X), y)


def test_output_perturbation_is_cpu_only(dispatch):
    X, y = _data(0, 2, np.float64)
    params = {
        "classes": [0, 1],
        "solver": "output-perturbation",
        "alpha": 0.1,
        "feature_norm_bound": 3.0,
        "random_state": 0,
    }
    with pytest.raises(ValueError, match="supports numpy input only"):
        DPLogisticRegression(**params).fit(torch.from_numpy(X), y)
    with pytest.raises(ValueError, match="runs on the CPU only"):
        DPLogisticRegression(**params, device="cuda").fit(X, y)
    clf = DPLogisticRegression(**params, device="auto").fit(X, y)
    assert isinstance(clf.coef_, np.ndarray)


def test_predict_with_tensors_under_dispatch(dispatch):
    X, y = _data(0, 2, np.float64)
    clf = DPLogisticRegression(classes=[0, 1], random_state=0)
    clf.fit(torch.from_numpy(X), y)
    proba = clf.predict_proba(torch.from_numpy(X))
    assert torch.is_tensor(proba)
    np.testing.assert_array_equal(
        clf.predict(torch.from_numpy(X)), np.argmax(proba.numpy(), axis=1)
    )


def test_epsilon_inf_is_the_full_batch_fit_on_torch(dispatch):
    # Raw columns (an offset of 500, scales 1 to 100): the documented
    # non-private fit is the full-batch L-BFGS solve; the DP-SGD loop's
    # fixed step (for unit-scale data) ran instead on torch and returned
    # coefficients off by orders of magnitude.
    rng = np.random.default_rng(0)
    n = 800
    X = rng.normal(size=(n, 3)) * [1.0, 10.0, 100.0] + [500.0, 0.0, 0.0]
    y = (X[:, 0] - 500 + 0.05 * X[:, 1] + rng.normal(size=n) > 0).astype(int)
    weights = rng.uniform(0.5, 1.5, size=n)
    kwargs = {"epsilon": np.inf, "classes": [0, 1], "random_state": 0}
    with sklearn.config_context(array_api_dispatch=False):
        ref = DPLogisticRegression(**kwargs).fit(X, y)
        ref_w = DPLogisticRegression(**kwargs).fit(X, y, sample_weight=weights)
        sk = LogisticRegression(penalty=None, tol=1e-10, max_iter=10_000).fit(X, y)
    for dtype, rtol in ((torch.float64, 1e-8), (torch.float32, 1e-4)):
        fitted = DPLogisticRegression(**kwargs).fit(
            torch.as_tensor(X, dtype=dtype), torch.as_tensor(y)
        )
        assert torch.is_tensor(fitted.coef_) and fitted.coef_.dtype == dtype
        assert fitted.intercept_.dtype == dtype
        np.testing.assert_allclose(fitted.coef_.numpy(), ref.coef_, rtol=rtol)
        np.testing.assert_allclose(
            fitted.intercept_.numpy(), ref.intercept_, rtol=rtol
        )
        np.testing.assert_allclose(fitted.coef_.numpy(), sk.coef_, rtol=1e-3)
        np.testing.assert_allclose(
            fitted.intercept_.numpy(), sk.intercept_, rtol=1e-3
        )
        assert fitted.dp_event_ == ref.dp_event_
        if dtype == torch.float64:
            # float32 rounding may take L-BFGS one iteration more or fewer.
            assert fitted.t_ == ref.t_
    weighted = DPLogisticRegression(**kwargs).fit(
        torch.from_numpy(X), torch.from_numpy(y), sample_weight=weights
    )
    np.testing.assert_allclose(weighted.coef_.numpy(), ref_w.coef_, rtol=1e-8)


def _assert_no_autograd_graph(estimator):
    tensors = [
        (name, value)
        for name, value in vars(estimator).items()
        if name.endswith("_") and torch.is_tensor(value)
    ]
    assert tensors  # the check below ran on the fitted arrays
    for name, value in tensors:
        assert not value.requires_grad, name
        assert value.grad_fn is None, name
    copy.deepcopy(estimator)  # a graph's non-leaf tensors cannot be copied


@pytest.mark.parametrize("params", [{}, {"feature_scaling": "auto"}])
def test_input_that_requires_grad_leaves_no_graph(dispatch, params):
    # A kept graph saved the raw rows of each Poisson batch, and
    # coef_.sum().backward() gave a gradient for every training row.
    X, y = _data(0, 2, np.float64, n=400, d=3)
    X_grad = torch.from_numpy(X).requires_grad_()
    weights = torch.ones(len(y), dtype=torch.float64, requires_grad=True)
    clf = DPLogisticRegression(classes=[0, 1], random_state=0, max_iter=2, **params)
    clf.fit(X_grad, torch.from_numpy(y), sample_weight=weights)
    _assert_no_autograd_graph(clf)
    with sklearn.config_context(array_api_dispatch=False):
        ref = DPLogisticRegression(
            classes=[0, 1], random_state=0, max_iter=2, **params
        )
        ref.fit(X, y, sample_weight=np.ones(len(y)))
    np.testing.assert_allclose(clf.coef_.numpy(), ref.coef_, rtol=0, atol=1e-10)
    assert X_grad.grad is None and X_grad.requires_grad


def test_fermi_input_that_requires_grad_leaves_no_graph(dispatch):
    X, y = _data(0, 2, np.float64, n=400, d=3)
    groups = np.arange(len(y)) % 2
    clf = DPFERMIClassifier(classes=[0, 1], groups=[0, 1], random_state=0, max_iter=2)
    clf.fit(torch.from_numpy(X).requires_grad_(), y, sensitive_features=groups)
    _assert_no_autograd_graph(clf)


def test_model_predicts_in_the_namespace_of_its_input(dispatch):
    # scikit-learn's rule: a numpy-fitted model scores torch input in torch,
    # and a torch-fitted model scores numpy input in numpy (both raised
    # "Multiple namespaces").
    X, y = _data(0, 3, np.float64, n=400, d=3)
    kwargs = {"classes": [0, 1, 2], "random_state": 0, "max_iter": 2}
    with sklearn.config_context(array_api_dispatch=False):
        numpy_fit = DPLogisticRegression(**kwargs).fit(X, y)
    torch_fit = DPLogisticRegression(**kwargs).fit(
        torch.from_numpy(X), torch.from_numpy(y)
    )
    check_prediction_follows_input(numpy_fit, torch_fit, X)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_huge_record_gives_a_finite_model_on_torch(dispatch, n_classes, dtype):
    # A record whose prediction overflows (and is inf - inf = nan in float
    # arithmetic) contributes a finite clipped term on torch as on numpy.
    X, y = make_classification(
        n_samples=300, n_features=2, n_informative=2, n_redundant=0,
        n_classes=n_classes, n_clusters_per_class=1, class_sep=3.0, random_state=0,
    )
    X = X.astype(dtype)
    big = float(np.finfo(dtype).max)
    X[0] = [-0.95 * big, 0.95 * big]
    kwargs = dict(classes=list(range(n_classes)), random_state=0, epsilon=8.0)
    kwargs.update(learning_rate=5.0)
    with sklearn.config_context(array_api_dispatch=False):
        ref = DPLogisticRegression(**kwargs).fit(X, y)
    fitted = DPLogisticRegression(**kwargs).fit(torch.from_numpy(X), y)
    coef = fitted.coef_.numpy()
    assert np.isfinite(coef).all() and np.abs(coef).max() > 1.0
    _assert_same_fit(ref, fitted, dtype)
    for predict in ("decision_function", "predict_proba", "predict_log_proba"):
        assert torch.isfinite(getattr(fitted, predict)(torch.from_numpy(X))).all()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_intercept_only_model_on_torch_equals_numpy(dispatch, n_classes, dtype):
    # The small-budget rule's label histogram is made on the host; casting
    # it to a torch dtype with numpy's astype raised a TypeError.
    X, y = _data(0, n_classes, dtype, n=300, d=4)
    kwargs = {"classes": list(range(n_classes)), "epsilon": 0.01, "random_state": 0}
    with pytest.warns(UserWarning), sklearn.config_context(array_api_dispatch=False):
        ref = DPLogisticRegression(**kwargs).fit(X, y)
    with pytest.warns(UserWarning):
        fitted = DPLogisticRegression(**kwargs).fit(torch.from_numpy(X), y)
    assert ref.intercept_only_ and fitted.intercept_only_
    assert torch.is_tensor(fitted.coef_) and torch.is_tensor(fitted.intercept_)
    # Host arithmetic on the same counts and noise: identical.
    np.testing.assert_array_equal(fitted.coef_.numpy(), ref.coef_)
    np.testing.assert_array_equal(fitted.intercept_.numpy(), ref.intercept_)
    assert fitted.coef_.numpy().dtype == ref.coef_.dtype == dtype
    assert fitted.epsilon_ == ref.epsilon_ and fitted.dp_event_ == ref.dp_event_


def test_weights_of_any_form_fit_torch_input(dispatch):
    # scikit-learn moves sample_weight to X's namespace under dispatch: a
    # list, tuple or Series raised AttributeError ('strides').
    import pandas as pd

    X, y = _data(0, 2, np.float64, n=300, d=3)
    w = np.linspace(0.5, 2.0, len(y))
    kwargs = {"classes": [0, 1], "random_state": 0, "max_iter": 2}
    ref = DPLogisticRegression(**kwargs).fit(torch.from_numpy(X), y, sample_weight=w)
    for given in (w.tolist(), tuple(w.tolist()), pd.Series(w)):
        fitted = DPLogisticRegression(**kwargs).fit(
            torch.from_numpy(X), y, sample_weight=given
        )
        np.testing.assert_allclose(
            fitted.coef_.numpy(), ref.coef_.numpy(), rtol=0, atol=1e-12
        )


def test_float32_input_to_a_model_beyond_float32_is_finite(dispatch):
    # A column in units of 1e-40 gives a float64 coefficient beyond
    # float32's largest float: narrowed to float32 input it was inf and
    # every torch prediction nan; numpy promotes. Torch now scores in
    # float64 and returns float32.
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(200, 2))
    y = (Z[:, 0] + 0.3 * rng.normal(size=200) > 0).astype(int)
    X = Z * [1e-40, 1.0]
    with sklearn.config_context(array_api_dispatch=False):
        clf = DPLogisticRegression(classes=[0, 1], epsilon=np.inf).fit(X, y)
    assert np.abs(clf.coef_).max() > np.finfo(np.float32).max
    X32 = X[:20].astype(np.float32)
    with sklearn.config_context(array_api_dispatch=False):
        expected = clf.decision_function(X32)
        expected_proba = clf.predict_proba(X32)
    scores = clf.decision_function(torch.from_numpy(X32))
    assert scores.dtype == torch.float32
    np.testing.assert_allclose(scores.numpy(), expected, rtol=1e-5, atol=1e-5)
    proba = clf.predict_proba(torch.from_numpy(X32)).numpy()
    np.testing.assert_allclose(proba, expected_proba, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(
        clf.predict(torch.from_numpy(X32)), expected_proba.argmax(axis=1)
    )


@pytest.mark.skipif(not _CUDA, reason="needs a CUDA device")
@pytest.mark.parametrize("name", sorted(_CONFIGS))
def test_cuda_matches_numpy(name):
    n_classes, dtype, params = _CONFIGS[name]
    X, y = _data(0, n_classes, dtype)
    kwargs = dict(classes=list(range(n_classes)), random_state=0, **params)
    ref = DPLogisticRegression(**kwargs).fit(X, y)
    clf = DPLogisticRegression(**kwargs, device="cuda").fit(X, y)
    # numpy in, numpy out: a GPU-trained model pickles and predicts anywhere.
    assert isinstance(clf.coef_, np.ndarray)
    _assert_same_fit(ref, clf, dtype)


@pytest.mark.skipif(not _CUDA, reason="needs a CUDA device")
def test_cuda_tensors_under_dispatch_stay_on_the_gpu(dispatch):
    X, y = _data(0, 2, np.float64)
    clf = DPLogisticRegression(classes=[0, 1], random_state=0, device="auto")
    clf.fit(torch.from_numpy(X).cuda(), torch.from_numpy(y).cuda())
    assert clf.coef_.device.type == "cuda"


@pytest.mark.parametrize(
    "solver, params",
    [
        ("dp-newton", {"feature_norm_bound": 5.0}),
        ("output-perturbation", {"alpha": 0.1, "feature_norm_bound": 5.0}),
        ("dp-frank-wolfe", {"l1_radius": 5.0, "feature_inf_bound": 5.0}),
    ],
)
def test_epsilon_inf_takes_tensors_with_every_solver(dispatch, solver, params):
    # The non-private limit of every solver is an exact scipy solve on host
    # copies: it takes tensors as DP-SGD's does (it refused them), and its
    # attributes come back in X's namespace and dtype.
    X, y = _data(0, 2, np.float64, n=300, d=3)
    kwargs = {"classes": [0, 1], "epsilon": np.inf, "solver": solver, **params}
    with sklearn.config_context(array_api_dispatch=False):
        ref = DPLogisticRegression(**kwargs).fit(X, y)
    for dtype in (torch.float64, torch.float32):
        clf = DPLogisticRegression(**kwargs).fit(
            torch.as_tensor(X, dtype=dtype), torch.from_numpy(y)
        )
        assert torch.is_tensor(clf.coef_) and clf.coef_.dtype == dtype
        assert torch.is_tensor(clf.intercept_) and clf.intercept_.dtype == dtype
        if dtype == torch.float64:
            np.testing.assert_allclose(clf.coef_.numpy(), ref.coef_, rtol=1e-10)
    # Its private fits stay numpy code.
    with pytest.raises(ValueError, match="supports numpy input only"):
        DPLogisticRegression(**{**kwargs, "epsilon": 1.0}).fit(
            torch.from_numpy(X), y
        )


def _grad_fits():
    from sklearn_dpfair import (
        FERMIClassifier,
        HeavyTailDPRegressor,
        SemiDPLinearRegression,
    )
    from sklearn_dpfair.neural import DPMLPClassifier

    groups = {"sensitive_features": np.arange(200) % 2}
    return {
        "logistic": (DPLogisticRegression(classes=[0, 1], max_iter=2), {}),
        "mlp": (DPMLPClassifier(classes=[0, 1], max_iter=2), {}),
        "fermi": (FERMIClassifier(max_iter=2), groups),
        "fermi-net": (FERMIClassifier(max_iter=2, hidden_layer_sizes=(3,)), groups),
        "dpfermi": (
            DPFERMIClassifier(classes=[0, 1], groups=[0, 1], max_iter=2),
            groups,
        ),
        "heavy-tail": (HeavyTailDPRegressor(), {}),
        "semi-dp": (
            SemiDPLinearRegression(),
            {"public_mask": np.arange(200) < 60},
        ),
    }


@pytest.mark.parametrize("name", sorted(_grad_fits()))
def test_tensors_that_require_grad_fit_and_predict_without_warnings(dispatch, name):
    # validate_data copied X and y with torch.asarray before the fit
    # detached them, and torch warned about its requires_grad default.
    est, fit_params = _grad_fits()[name]
    X, y = _data(0, 2, np.float64, n=200, d=3)
    X_grad = torch.from_numpy(X).requires_grad_()
    y_grad = torch.as_tensor(y, dtype=torch.float64).requires_grad_()
    is_classifier = hasattr(est, "predict_proba")
    with warnings.catch_warnings():
        # torch's warnings about tensors that require grad, not the fits'
        # own (a ConvergenceWarning of two epochs).
        warnings.filterwarnings("error", message=".*(requires_grad|detach)")
        est.set_params(random_state=0).fit(
            X_grad, torch.from_numpy(y) if is_classifier else y_grad, **fit_params
        )
        scores = est.predict_proba(X_grad) if is_classifier else est.predict(X_grad)
    assert not scores.requires_grad and scores.grad_fn is None
    assert X_grad.grad is None and y_grad.grad is None
