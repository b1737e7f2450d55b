# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""DPMLPClassifier on the torch backend (CPU here; CUDA where visible).

For the same seed, numpy and torch start from the same network and draw the
same batches and noise (all from the fit's numpy generator on the host), so
they spend the identical epsilon and return parameters equal up to
floating-point round-off: ``atol=1e-10`` in float64, ``1e-4`` in float32
(measured here: at most 5e-16 and 2e-7).
"""

import copy

import numpy as np
import pytest
import sklearn
from namespace_prediction import check_prediction_follows_input

from sklearn_dpfair.neural import DPMLPClassifier

torch = pytest.importorskip("torch")
pytest.importorskip("array_api_compat")

_ATOL = {np.float64: 1e-10, np.float32: 1e-4}
_CUDA = torch.cuda.is_available()

# One torch thread per test (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("single_torch_thread")


def _data(n_classes, dtype, n=600, d=5):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d)) * rng.exponential(1.0, size=(1, d))
    y = np.argmax(np.tanh(X @ rng.normal(size=(d, n_classes))), axis=1)
    return X.astype(dtype), y


_CONFIGS = {
    "binary": (2, np.float64, {}),
    "multiclass-tanh": (3, np.float64, {"activation": "tanh", "hidden_layer_sizes": (6, 4)}),
    "binary-float32": (2, np.float32, {}),
    "weighted": (3, np.float64, {"alpha": 0.01}),
    "full-batch": (2, np.float64, {"batch_size": "full", "max_iter": 20}),
    "non-private": (2, np.float64, {"epsilon": np.inf}),
}


def _as_numpy(a):
    return a.cpu().numpy() if torch.is_tensor(a) else a


@pytest.mark.parametrize("config", _CONFIGS, ids=list(_CONFIGS))
def test_torch_cpu_matches_numpy(dispatch, config):
    n_classes, dtype, params = _CONFIGS[config]
    X, y = _data(n_classes, dtype)
    w = np.random.default_rng(1).uniform(0, 2, len(y)) if config == "weighted" else None
    kw = {"hidden_layer_sizes": (8,), "classes": np.arange(n_classes),
          "random_state": 0, "max_iter": 3, **params}
    with sklearn.config_context(array_api_dispatch=False):
        ref = DPMLPClassifier(**kw).fit(X, y, sample_weight=w)
    est = DPMLPClassifier(**kw).fit(torch.asarray(X), torch.asarray(y), sample_weight=w)
    assert torch.is_tensor(est.coefs_[0])
    assert est.epsilon_ == ref.epsilon_ and est.dp_event_ == ref.dp_event_
    for a, b in zip([*est.coefs_, *est.intercepts_], [*ref.coefs_, *ref.intercepts_]):
        assert _as_numpy(a).dtype == b.dtype
        np.testing.assert_allclose(_as_numpy(a), b, rtol=0, atol=_ATOL[dtype])
    proba = _as_numpy(est.predict_proba(torch.asarray(X)))
    np.testing.assert_allclose(proba, ref.predict_proba(X), rtol=0, atol=10 * _ATOL[dtype])
    np.testing.assert_array_equal(est.predict(torch.asarray(X)), ref.predict(X))


# (device, where X lives): on a GPU "auto" follows a CUDA tensor, whose
# silos still train on the host.
_SILO_DEVICES = [("cpu", "cpu"), ("auto", "cpu")]
if _CUDA:
    _SILO_DEVICES.append(("auto", "cuda"))


@pytest.mark.parametrize("device, x_device", _SILO_DEVICES)
def test_silo_fit_on_torch_gives_torch_attributes(dispatch, device, x_device):
    # The silos train on the host; the fitted arrays follow X's namespace.
    X, y = _data(2, np.float64)
    silos = np.arange(len(y)) % 3
    kw = {"hidden_layer_sizes": (4,), "classes": [0, 1], "random_state": 0,
          "max_iter": 2, "feature_scaling": "auto",
          "feature_bounds": [(-4.0, 4.0)] * X.shape[1]}
    with sklearn.config_context(array_api_dispatch=False):
        ref = DPMLPClassifier(**kw).fit(X, y, silos=silos)
    X_torch = torch.asarray(X, device=x_device)
    est = DPMLPClassifier(**kw, device=device).fit(
        X_torch, torch.asarray(y, device=x_device), silos=silos
    )
    assert all(torch.is_tensor(a) for a in [*est.coefs_, *est.intercepts_])
    for a, b in zip([*est.coefs_, *est.intercepts_], [*ref.coefs_, *ref.intercepts_]):
        np.testing.assert_allclose(_as_numpy(a), b, rtol=0, atol=1e-10)
    assert est.score(X_torch, torch.asarray(y, device=x_device)) == ref.score(X, y)


@pytest.mark.parametrize("params", [{}, {"feature_scaling": "auto"}])
def test_input_that_requires_grad_leaves_no_graph(dispatch, params):
    # A kept graph saved the raw rows of each Poisson batch in the fitted
    # weights' history, and a deepcopy of the model raised.
    X, y = _data(2, np.float64, n=300, d=3)
    X_grad = torch.from_numpy(X).requires_grad_()
    weights = torch.ones(len(y), dtype=torch.float64, requires_grad=True)
    kw = {"hidden_layer_sizes": (4,), "classes": [0, 1], "random_state": 0,
          "max_iter": 2, **params}
    est = DPMLPClassifier(**kw).fit(X_grad, torch.from_numpy(y), sample_weight=weights)
    arrays = [*est.coefs_, *est.intercepts_]
    arrays += [
        v for k, v in vars(est).items() if k.endswith("_") and torch.is_tensor(v)
    ]
    assert all(torch.is_tensor(a) for a in arrays)
    for a in arrays:
        assert not a.requires_grad and a.grad_fn is None
    copy.deepcopy(est)
    with sklearn.config_context(array_api_dispatch=False):
        ref = DPMLPClassifier(**kw).fit(X, y, sample_weight=np.ones(len(y)))
    np.testing.assert_allclose(est.coefs_[0].numpy(), ref.coefs_[0], atol=1e-10)


def test_model_predicts_in_the_namespace_of_its_input(dispatch):
    # A numpy-fitted network scores torch input in torch, and a torch-fitted
    # one numpy input in numpy (both raised "Multiple namespaces").
    X, y = _data(3, np.float64, n=300, d=3)
    kw = {"hidden_layer_sizes": (4,), "classes": [0, 1, 2], "random_state": 0,
          "max_iter": 2}
    with sklearn.config_context(array_api_dispatch=False):
        numpy_fit = DPMLPClassifier(**kw).fit(X, y)
    torch_fit = DPMLPClassifier(**kw).fit(torch.from_numpy(X), torch.from_numpy(y))
    check_prediction_follows_input(numpy_fit, torch_fit, X)


def test_cuda_without_a_gpu_is_refused():
    if _CUDA:
        pytest.skip("a GPU is visible")
    X, y = _data(2, np.float64)
    with pytest.raises(ValueError, match="CUDA"):
        DPMLPClassifier(device="cuda", classes=[0, 1]).fit(X, y)


@pytest.mark.skipif(not _CUDA, reason="no CUDA device")
@pytest.mark.parametrize("config", ["binary", "multiclass-tanh"])
def test_cuda_matches_numpy(config):
    n_classes, dtype, params = _CONFIGS[config]
    X, y = _data(n_classes, dtype)
    kw = {"hidden_layer_sizes": (8,), "classes": np.arange(n_classes),
          "random_state": 0, "max_iter": 3, **params}
    ref = DPMLPClassifier(**kw).fit(X, y)
    est = DPMLPClassifier(device="cuda", **kw).fit(X, y)
    # Fitted arrays come back as numpy: the model predicts anywhere.
    assert isinstance(est.coefs_[0], np.ndarray)
    for a, b in zip([*est.coefs_, *est.intercepts_], [*ref.coefs_, *ref.intercepts_]):
        np.testing.assert_allclose(a, b, rtol=0, atol=_ATOL[dtype])
