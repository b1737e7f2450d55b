"""SemiDPLinearRegression on PyTorch through the array API: same noise, same batches."""

import contextlib
import io

import numpy as np
import pytest

from sklearn_dpfair import SemiDPLinearRegression, SemiLocalDPLinearRegression
from sklearn_dpfair.linear_model import _semi_dp

torch = pytest.importorskip("torch")
pytest.importorskip("array_api_compat")


@pytest.fixture
def torch_cpu_backend(monkeypatch):
    """Make ``device="cuda"`` resolve to torch on the CPU, numpy outputs: the
    code path of a GPU fit, runnable without a GPU."""
    import array_api_compat.torch as xp_torch

    from sklearn_dpfair.utils._array_api import ArrayBackend, resolve_backend

    backend = ArrayBackend(xp_torch, torch.device("cpu"), np)

    def fake(X, device="cpu", **kwargs):
        return backend if device == "cuda" else resolve_backend(X, device, **kwargs)

    monkeypatch.setattr(_semi_dp, "resolve_backend", fake)
    return backend


def _problem(n=3000, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * [1.0, 10.0, 0.1, 1.0, 100.0] + 50.0
    y = X @ rng.standard_normal(d) + rng.standard_normal(n)
    mask = np.arange(n) < 300
    return X, y, mask


CASES = [
    {},
    {"solver": "semidp-sgd", "adjacency": "add_remove", "max_iter": 2},
    {"solver": "dp-gd", "max_iter": 5},
    {"solver": "pda-md", "max_iter": 5},
]


@pytest.mark.parametrize("params", CASES, ids=lambda p: p.get("solver", "default"))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_torch_cpu_fit_equals_numpy_fit_for_the_same_seed(
    params, dtype, torch_cpu_backend, monkeypatch
):
    # The same noise and the same Poisson batches are drawn on the host, so
    # the fits differ by the round-off of the row sums only: float64 sums
    # of a few thousand terms agree to ~1e-12 relative, float32 rows to
    # ~1e-6 (one float32 unit per product, accumulated in float64); the
    # noisy steps do not amplify it beyond 1e-8 and 1e-3 here.
    X, y, mask = _problem()
    X, y = X.astype(dtype), y.astype(dtype)
    ref = SemiDPLinearRegression(random_state=0, **params).fit(X, y, public_mask=mask)
    seen = []
    real = _semi_dp.fit_semidp

    def spy(*args, backend, **kwargs):
        seen.append(backend)
        return real(*args, backend=backend, **kwargs)

    monkeypatch.setattr(_semi_dp, "fit_semidp", spy)
    est = SemiDPLinearRegression(random_state=0, device="cuda", **params)
    est.fit(X, y, public_mask=mask)
    assert seen == [torch_cpu_backend]
    assert isinstance(est.coef_, np.ndarray)
    rtol = 1e-8 if dtype == np.float64 else 1e-3
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=rtol, atol=rtol)
    assert est.intercept_ == pytest.approx(ref.intercept_, rel=rtol, abs=rtol)
    assert est.dp_event_ == ref.dp_event_


def test_cuda_device_without_a_gpu_raises():
    if torch.cuda.is_available():
        pytest.skip("a GPU is visible")
    X, y, mask = _problem(200)
    with pytest.raises(ValueError, match="CUDA"):
        SemiDPLinearRegression(device="cuda").fit(X, y, public_mask=mask)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_fit_equals_numpy_fit_for_the_same_seed():
    X, y, mask = _problem()
    ref = SemiDPLinearRegression(random_state=0).fit(X, y, public_mask=mask)
    est = SemiDPLinearRegression(random_state=0, device="cuda").fit(
        X, y, public_mask=mask
    )
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-8, atol=1e-8)


def test_sparse_x_with_cuda_is_refused():
    sp = pytest.importorskip("scipy.sparse")
    X, y, mask = _problem(200)
    with pytest.raises(TypeError, match="Sparse"):
        SemiDPLinearRegression(device="cuda").fit(
            sp.csr_matrix(X), y, public_mask=mask
        )


@pytest.mark.parametrize(
    "est, unit",
    [
        (SemiDPLinearRegression(max_iter=4, random_state=0), "epoch"),
        (SemiLocalDPLinearRegression(random_state=0), "row"),
    ],
)
def test_verbose_prints_released_norms_only_and_is_off_by_default(est, unit):
    X, y, mask = _problem(400)
    quiet = io.StringIO()
    with contextlib.redirect_stdout(quiet):
        est.fit(X, y, public_mask=mask)
    assert quiet.getvalue() == ""
    loud = io.StringIO()
    with contextlib.redirect_stdout(loud):
        est.set_params(verbose=1).fit(X, y, public_mask=mask)
    lines = loud.getvalue().splitlines()
    assert lines and all(
        line.startswith(f"[{type(est).__name__}] {unit} ")
        and "released-gradient norm" in line
        for line in lines
    )
    if unit == "epoch":
        assert len(lines) == 4
    else:
        assert 9 <= len(lines) <= 11


@pytest.mark.usefixtures("single_torch_thread")
def test_weights_that_require_grad_are_detached(dispatch):
    # scikit-learn's check read the tensor as numpy, which torch refuses
    # for a tensor that requires grad (the user guide promises a detach).
    X, y, mask = _problem(n=600)
    w = np.linspace(0.5, 2.0, len(y))
    Xt, yt = torch.from_numpy(X), torch.from_numpy(y)
    ref = SemiDPLinearRegression(random_state=0).fit(
        Xt, yt, public_mask=mask, sample_weight=w
    )
    w_grad = torch.from_numpy(w).requires_grad_()
    est = SemiDPLinearRegression(random_state=0).fit(
        Xt, yt, public_mask=mask, sample_weight=w_grad
    )
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-12, atol=1e-12)
    assert est.intercept_ == pytest.approx(ref.intercept_, rel=1e-12, abs=1e-12)
    assert w_grad.grad is None


@pytest.mark.usefixtures("single_torch_thread")
@pytest.mark.parametrize("cls", [SemiDPLinearRegression, SemiLocalDPLinearRegression])
def test_public_mask_tensor_is_read_as_a_host_copy(dispatch, monkeypatch, cls):
    # numpy's implicit conversion of the mask failed for a CUDA tensor;
    # without a GPU, a tensor that refuses it stands in for one.
    X, y, mask = _problem(n=600)
    ref = cls(random_state=0).fit(
        torch.from_numpy(X), torch.from_numpy(y), public_mask=mask
    )

    def no_implicit_copy(self, *args, **kwargs):
        raise TypeError("implicit numpy conversion of a device tensor")

    monkeypatch.setattr(torch.Tensor, "__array__", no_implicit_copy)
    est = cls(random_state=0).fit(
        torch.from_numpy(X), torch.from_numpy(y), public_mask=torch.from_numpy(mask)
    )
    np.testing.assert_allclose(
        np.asarray(est.coef_.tolist()), np.asarray(ref.coef_.tolist()), rtol=1e-12
    )
