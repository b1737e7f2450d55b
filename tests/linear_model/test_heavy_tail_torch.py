# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""HeavyTailDPRegressor on the torch backend (CPU here; CUDA where visible).

The "dp-sgd" steps run through the same array-API loop as
``DPLogisticRegression``; the private scales and the intercept step run on
the host. For one seed, numpy and torch draw the same batches and noise
(from the fit's numpy generator), spend the identical epsilon and return
coefficients equal up to floating-point round-off: ``atol=1e-10`` (measured
~3e-17 on these problems). The one-pass solvers are numpy code: a GPU
request names them in a ValueError.
"""

import numpy as np
import pytest
import sklearn

from sklearn_dpfair import HeavyTailDPRegressor

torch = pytest.importorskip("torch")
pytest.importorskip("array_api_compat")

_CUDA = torch.cuda.is_available()

# numpy functions applied to a torch tensor convert it to the host and warn
# (a CUDA tensor cannot be converted at all): every step must stay in the
# tensor's namespace.
pytestmark = [
    pytest.mark.filterwarnings("error:__array_wrap__:DeprecationWarning"),
    pytest.mark.usefixtures("single_torch_thread"),
]


def _data(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    # Raw-scale columns (the private per-column scales are planned).
    X = rng.standard_t(3, size=(n, 4)) * [1.0, 10.0, 100.0, 0.1] + [0, 0, 500, 0]
    y = X @ np.array([1.0, -0.1, 0.01, 5.0]) + rng.standard_t(2, size=n)
    return X, y, rng.uniform(0.5, 2.0, n)


_CONFIGS = {
    "default": {},
    "huber": {"loss": "huber"},
    "absolute": {"loss": "absolute_error"},
    "quantile": {"loss": "quantile", "quantile": 0.3},
    "columns-as-given": {"feature_bounds": None},
    "no-intercept-l2": {"fit_intercept": False, "penalty": "l2", "alpha": 0.01},
    "non-private": {"epsilon": np.inf},
}


@pytest.mark.parametrize("params", _CONFIGS.values(), ids=_CONFIGS)
def test_torch_cpu_matches_numpy(dispatch, params):
    X, y, w = _data()
    with sklearn.config_context(array_api_dispatch=False):
        ref = HeavyTailDPRegressor(random_state=0, **params).fit(X, y, sample_weight=w)
    reg = HeavyTailDPRegressor(random_state=0, device="auto", **params).fit(
        torch.asarray(X), torch.asarray(y), sample_weight=torch.asarray(w)
    )
    assert isinstance(reg.coef_, np.ndarray) and reg.coef_.dtype == ref.coef_.dtype
    np.testing.assert_allclose(reg.coef_, ref.coef_, rtol=0, atol=1e-10)
    assert reg.intercept_ == pytest.approx(ref.intercept_, rel=0, abs=1e-10)
    # The same plan and the same releases: identical accounting.
    assert reg.epsilon_ == ref.epsilon_
    assert reg.dp_event_ == ref.dp_event_
    assert reg.noise_multiplier_ == ref.noise_multiplier_


def test_steps_run_on_the_backend(dispatch, monkeypatch):
    # The DP-SGD loop receives torch tensors under dispatch (numpy without).
    from sklearn_dpfair._solvers.heavy_tail import _dpsgd

    seen = []
    original = _dpsgd.noisy_sgd

    def spy(X, y, loss, **kwargs):
        seen.append((type(X), type(y), type(kwargs["sample_weight"])))
        return original(X, y, loss, **kwargs)

    monkeypatch.setattr(_dpsgd, "noisy_sgd", spy)
    X, y, w = _data()
    HeavyTailDPRegressor(random_state=0, device="auto").fit(
        torch.asarray(X), torch.asarray(y), sample_weight=torch.asarray(w)
    )
    with sklearn.config_context(array_api_dispatch=False):
        HeavyTailDPRegressor(random_state=0).fit(X, y, sample_weight=w)
    assert seen == [(torch.Tensor,) * 3, (np.ndarray,) * 3]


def test_torch_cpu_matches_numpy_float32(dispatch):
    X, y, _ = _data()
    X32 = X.astype(np.float32)
    with sklearn.config_context(array_api_dispatch=False):
        ref = HeavyTailDPRegressor(random_state=1).fit(X32, y)
    reg = HeavyTailDPRegressor(random_state=1, device="auto").fit(
        torch.asarray(X32), torch.asarray(y)
    )
    assert reg.coef_.dtype == np.float32
    np.testing.assert_allclose(reg.coef_, ref.coef_, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("solver", ["sgd", "acsa", "localized"])
def test_one_pass_solvers_refuse_a_gpu_by_name(solver):
    X, y, _ = _data(n=300)
    with pytest.raises(ValueError, match=f"solver={solver!r} runs on the CPU only"):
        HeavyTailDPRegressor(solver=solver, device="cuda").fit(X, y)
    # "auto" takes the CPU for them.
    HeavyTailDPRegressor(solver=solver, device="auto", random_state=0, max_iter=5).fit(
        X, y
    )


def test_l1_penalty_refuses_a_gpu_by_its_solver():
    X, y, _ = _data(n=300)
    with pytest.raises(ValueError, match="solver='prox' runs on the CPU only"):
        HeavyTailDPRegressor(penalty="l1", alpha=0.1, device="cuda").fit(X, y)


def test_one_pass_solver_refuses_dispatched_torch_input(dispatch):
    X, y, _ = _data(n=300)
    with pytest.raises(ValueError, match="solver='sgd' runs on the CPU only"):
        HeavyTailDPRegressor(solver="sgd", device="auto").fit(
            torch.asarray(X), torch.asarray(y)
        )


def test_sparse_input_refuses_cuda():
    import scipy.sparse as sp

    X, y, _ = _data(n=300)
    with pytest.raises(TypeError, match="Sparse input X runs on the CPU only"):
        HeavyTailDPRegressor(device="cuda").fit(sp.csr_matrix(X), y)


@pytest.mark.skipif(_CUDA, reason="checks the refusal without a visible GPU")
def test_cuda_without_a_gpu_is_refused():
    X, y, _ = _data(n=300)
    with pytest.raises(ValueError, match="sees no CUDA device"):
        HeavyTailDPRegressor(device="cuda").fit(X, y)


@pytest.mark.skipif(not _CUDA, reason="needs a CUDA device")
@pytest.mark.parametrize("params", _CONFIGS.values(), ids=_CONFIGS)
def test_cuda_matches_numpy(params):
    X, y, w = _data()
    ref = HeavyTailDPRegressor(random_state=0, **params).fit(X, y, sample_weight=w)
    reg = HeavyTailDPRegressor(random_state=0, device="cuda", **params).fit(
        X, y, sample_weight=w
    )
    # GPU matmuls reduce in another order: round-off only.
    np.testing.assert_allclose(reg.coef_, ref.coef_, rtol=0, atol=1e-8)
    assert reg.intercept_ == pytest.approx(ref.intercept_, rel=0, abs=1e-8)
    assert reg.epsilon_ == ref.epsilon_


def test_predict_takes_torch_input_under_dispatch(dispatch):
    # A regressor's predictions are computed in X's namespace and on its
    # device; the (numpy) model moves there.
    X, y, _ = _data(n=500)
    est = HeavyTailDPRegressor(epsilon=1.0, random_state=0).fit(X, y)
    Xt = torch.asarray(X)
    pred = est.predict(Xt)
    assert isinstance(pred, torch.Tensor) and pred.device == Xt.device
    with sklearn.config_context(array_api_dispatch=False):
        expected = est.predict(X)
    np.testing.assert_allclose(pred.numpy(), expected, rtol=1e-12, atol=1e-12)


def test_weights_that_require_grad_are_detached(dispatch):
    # scikit-learn's check read the tensor as numpy, which torch refuses
    # for a tensor that requires grad (the user guide promises a detach).
    X, y, w = _data(n=300)
    kwargs = {"random_state": 0}
    ref = HeavyTailDPRegressor(**kwargs).fit(
        torch.from_numpy(X), torch.from_numpy(y), sample_weight=w
    )
    w_grad = torch.from_numpy(w).requires_grad_()
    est = HeavyTailDPRegressor(**kwargs).fit(
        torch.from_numpy(X), torch.from_numpy(y), sample_weight=w_grad
    )
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-12, atol=1e-12)
    assert est.intercept_ == pytest.approx(ref.intercept_, rel=1e-12, abs=1e-12)
    assert w_grad.grad is None


def test_float32_input_to_a_model_beyond_float32_is_finite(dispatch):
    # A coefficient beyond float32's largest float (a column in units of
    # 1e-40) became inf for float32 torch input: every prediction nan.
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(200, 2))
    y = 2 * Z[:, 0] + Z[:, 1] + 0.1 * rng.normal(size=200)
    X = Z * [1e-40, 1.0]
    with sklearn.config_context(array_api_dispatch=False):
        est = HeavyTailDPRegressor(epsilon=np.inf, random_state=0).fit(X, y)
        X32 = X[:20].astype(np.float32)
        expected = est.predict(X32)
    assert np.abs(est.coef_).max() > np.finfo(np.float32).max
    pred = est.predict(torch.from_numpy(X32))
    assert pred.dtype == torch.float32
    np.testing.assert_allclose(pred.numpy(), expected, rtol=1e-5, atol=1e-5)
