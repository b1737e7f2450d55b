# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Namespace and device resolution, host/device moves and xp primitives."""

import sys

import numpy as np
import pytest
import sklearn

from sklearn_dpfair.utils._array_api import (
    NUMPY_BACKEND,
    array_namespace,
    arrays_like,
    column_sums,
    device_of,
    expit,
    finite_linear_scores,
    from_host,
    host_input,
    input_float_dtypes,
    log_expit,
    log_softmax,
    narrow_matmul,
    resolve_backend,
    row_max,
    row_sums,
    rowwise_dot,
    saturate,
    softmax,
    to_numpy,
    upcast_matmul,
)


@pytest.fixture
def no_torch(monkeypatch):
    """Make ``import torch`` and ``import array_api_compat`` fail."""
    for name in ("torch", "array_api_compat", "array_api_compat.torch"):
        monkeypatch.setitem(sys.modules, name, None)


def _namespaces():
    """(name, asarray) of every namespace installed here, numpy first."""
    out = [("numpy", np.asarray)]
    try:
        import array_api_compat  # noqa: F401  (non-numpy input needs it)
        import torch

        out.append(("torch", torch.from_numpy))
    except ImportError:
        pass
    try:
        import array_api_compat  # noqa: F401, F811
        import array_api_strict

        out.append(("array_api_strict", array_api_strict.asarray))
    except ImportError:
        pass
    return out


NAMESPACES = _namespaces()


def test_numpy_is_its_own_namespace():
    X = np.ones((3, 2))
    assert array_namespace(X) is np
    assert array_namespace(X, None, 1.0) is np
    assert device_of(X) == "cpu"


def test_cpu_device_is_numpy_and_never_needs_torch(no_torch):
    backend = resolve_backend(np.ones((3, 2)), "cpu")
    assert backend is NUMPY_BACKEND
    assert backend.is_numpy and backend.name == "numpy"
    assert backend.input_float_dtypes == [np.float64, np.float32]


def test_numpy_backend_asarray_does_not_copy_what_already_fits():
    # A float64 array asked for as float64 is the same array (an astype copy
    # of n weights or labels per fit, against the docstring, before).
    backend = resolve_backend(np.ones((3, 2)), "cpu")
    a = np.arange(5.0)
    assert backend.asarray(a, dtype=np.float64) is a
    assert backend.asarray(a) is a
    converted = backend.asarray(a, dtype=np.float32)
    assert converted.dtype == np.float32 and converted is not a


def test_unknown_device_is_rejected():
    with pytest.raises(ValueError, match="device must be one of"):
        resolve_backend(np.ones((3, 2)), "gpu")


def test_cuda_without_torch_names_the_extra(no_torch):
    with pytest.raises(ImportError, match=r"pip install 'sklearn-dpfair\[torch\]'"):
        resolve_backend(np.ones((3, 2)), "cuda")


def test_auto_without_torch_falls_back_to_numpy(no_torch):
    assert resolve_backend(np.ones((3, 2)), "auto") is NUMPY_BACKEND


def test_auto_without_gpu_is_numpy():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is visible")
    assert resolve_backend(np.ones((3, 2)), "auto") is NUMPY_BACKEND


def test_cuda_without_gpu_raises():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is visible")
    with pytest.raises(ValueError, match="sees no CUDA device"):
        resolve_backend(np.ones((3, 2)), "cuda")


def test_numpy_only_solver():
    X = np.ones((3, 2))
    assert resolve_backend(X, "auto", array_api_solver=False) is NUMPY_BACKEND
    with pytest.raises(ValueError, match="runs on the CPU only"):
        resolve_backend(X, "cuda", array_api_solver=False)


def test_torch_input_without_dispatch_is_numpy():
    torch = pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    assert resolve_backend(torch.ones(3, 2), "cpu") is NUMPY_BACKEND
    assert input_float_dtypes(torch.ones(3, 2)) == [np.float64, np.float32]


def test_dispatch_follows_the_input(dispatch):
    torch = pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    X = torch.ones(3, 2)
    for device in ("cpu", "auto"):
        backend = resolve_backend(X, device)
        assert not backend.is_numpy
        assert backend.device == X.device
        assert backend.input_xp is backend.xp
        assert backend.input_float_dtypes == [torch.float64, torch.float32]
        assert backend.name == "torch on cpu"
    assert input_float_dtypes(X) == [torch.float64, torch.float32]
    # numpy input under dispatch: the usual rules.
    assert resolve_backend(X.numpy(), "cpu") is NUMPY_BACKEND


def test_dispatch_rejects_a_contradicting_device(dispatch):
    torch = pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    with pytest.raises(ValueError, match="device='cuda' but X is on cpu"):
        resolve_backend(torch.ones(3, 2), "cuda")


def test_dispatch_to_numpy_only_solver_raises(dispatch):
    torch = pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    with pytest.raises(ValueError, match="supports numpy input only"):
        resolve_backend(torch.ones(3, 2), "auto", array_api_solver=False)


class _MinimalArray:
    """An array of a namespace that is neither numpy nor torch."""

    def __init__(self, data):
        self._data = np.asarray(data)
        self.shape, self.ndim = self._data.shape, self._data.ndim

    def __array_namespace__(self, api_version=None):
        return _MINIMAL_NAMESPACE


_MINIMAL_NAMESPACE = type(sys)("minimal_array_api")


def test_dispatch_refuses_namespaces_other_than_torch(dispatch):
    # Such arrays passed resolve_backend, then failed mid-fit on the rows'
    # indexing (X[::step], X[rows]) the standard does not define.
    pytest.importorskip("array_api_compat")
    with pytest.raises(ValueError, match="minimal_array_api.*PyTorch only"):
        resolve_backend(_MinimalArray(np.ones((3, 2))), "auto")


def test_dispatch_refuses_array_api_strict_in_fit(dispatch):
    pytest.importorskip("array_api_compat")
    xps = pytest.importorskip("array_api_strict")
    from sklearn_dpfair import DPLogisticRegression

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match="array_api_strict.*PyTorch only"):
        resolve_backend(xps.asarray(X), "auto")
    with pytest.raises(ValueError, match="PyTorch only"):
        DPLogisticRegression(random_state=0, max_iter=2).fit(xps.asarray(X), y)


def test_backend_detaches_input_that_requires_grad(dispatch):
    # A graph kept through the fit would let a fitted array differentiate
    # back to the training rows of its batches.
    torch = pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    X = torch.ones(3, 2, dtype=torch.float64, requires_grad=True)
    backend = resolve_backend(X, "auto")
    moved = backend.asarray(X)
    assert not moved.requires_grad and moved.grad_fn is None
    assert moved.data_ptr() == X.data_ptr()  # no copy
    out = backend.to_output(X * 2.0)
    assert not out.requires_grad and out.grad_fn is None
    weights = backend.asarray(torch.ones(3, requires_grad=True), dtype=X.dtype)
    assert not weights.requires_grad and weights.dtype == torch.float64


def test_arrays_like_moves_the_model_to_the_input():
    torch = pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    coef = np.array([1.0, 2.0])
    # numpy input: numpy arrays as they are (numpy predictions unchanged).
    assert arrays_like(np.ones((2, 2)), coef)[0] is coef
    # torch input: in its namespace and dtype.
    (moved,) = arrays_like(torch.ones(2, 2, dtype=torch.float32), coef)
    assert torch.is_tensor(moved) and moved.dtype == torch.float32
    np.testing.assert_array_equal(moved.numpy(), coef)
    # A torch model and numpy input: host numpy copies.
    (back,) = arrays_like(np.ones((2, 2)), torch.from_numpy(coef))
    assert isinstance(back, np.ndarray)
    np.testing.assert_array_equal(back, coef)


def test_arrays_like_keeps_a_model_too_wide_for_the_input_dtype():
    # A float64 coefficient beyond float32's largest float (a column in
    # units of 1e-40) was cast to inf for float32 input, and every
    # prediction was nan; numpy input promotes instead.
    torch = pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    X = torch.ones(2, 2, dtype=torch.float32)
    coef, intercept = np.array([5e40, 2.0]), 0.5
    wide_coef, wide_intercept = arrays_like(X, coef, intercept)
    # Both stay float64: torch adds a 0-d tensor in the other's dtype.
    assert wide_coef.dtype == wide_intercept.dtype == torch.float64
    np.testing.assert_array_equal(wide_coef.numpy(), coef)
    # A model that fits is narrowed, as before (nan and inf are not in
    # the way: they are the same in every dtype).
    fits = np.array([3e38, -3e38, np.inf, np.nan])
    (narrowed,) = arrays_like(X, fits)
    assert narrowed.dtype == torch.float32
    (empty,) = arrays_like(X, np.zeros((0, 2)))
    assert empty.dtype == torch.float32


def test_finite_linear_scores_return_a_narrower_input_dtype_saturated():
    torch = pytest.importorskip("torch")
    import array_api_compat.torch as xp

    X = np.array([[1e-40, 1.0], [0.0, 2.0], [1.0, 0.0]], dtype=np.float32)
    W = np.array([5e40, 1.0])
    Xt, Wt = torch.from_numpy(X), torch.from_numpy(W)
    plain = xp.matmul(Xt, Wt) + 0.5  # promoted to float64
    got = finite_linear_scores(plain, Xt, Wt, 0.5)
    # In X's dtype; the last score (5e40) saturated, not inf.
    assert got.dtype == torch.float32
    big = np.finfo(np.float32).max
    expected = np.clip(X.astype(np.float64) @ W + 0.5, -big, big)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6)
    assert got[2] == big
    # numpy keeps numpy's promotion: float32 rows, float64 model, float64.
    assert finite_linear_scores(X @ W + 0.5, X, W, 0.5).dtype == np.float64


def test_host_input_converts_only_dispatched_array_api_input(dispatch):
    torch = pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    X = torch.ones(3, 2, requires_grad=True)
    host = host_input(X)
    assert isinstance(host, np.ndarray) and host.shape == (3, 2)
    assert host_input(None) is None
    listed = [[1.0, 2.0]]
    assert host_input(listed) is listed
    with sklearn.config_context(array_api_dispatch=False):
        assert host_input(X) is X


def test_semi_local_regression_reads_torch_under_dispatch(dispatch):
    # A host-only fit: torch input is read as numpy, as without dispatch
    # (validate_data asked torch for numpy's float64 and raised TypeError).
    torch = pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    from sklearn_dpfair import SemiLocalDPLinearRegression

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = 2.0 * X[:, 0] + rng.normal(size=300)
    mask = np.arange(300) < 100
    weights = rng.uniform(0.5, 1.5, size=300)
    kwargs = {"random_state": 0}
    with sklearn.config_context(array_api_dispatch=False):
        ref = SemiLocalDPLinearRegression(**kwargs).fit(
            X, y, public_mask=mask, sample_weight=weights
        )
    est = SemiLocalDPLinearRegression(**kwargs).fit(
        torch.from_numpy(X),
        torch.from_numpy(y),
        public_mask=torch.from_numpy(mask),
        sample_weight=torch.from_numpy(weights),
    )
    assert isinstance(est.coef_, np.ndarray)
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=0, atol=1e-12)
    pred = est.predict(torch.from_numpy(X))
    assert torch.is_tensor(pred)
    np.testing.assert_allclose(pred.numpy(), ref.predict(X), rtol=0, atol=1e-10)


@pytest.mark.parametrize("name, asarray", NAMESPACES)
def test_host_round_trip(name, asarray):
    like = asarray(np.zeros(2))
    host = np.array([3, 1, 2])
    moved = from_host(host, like)
    if name == "numpy":
        assert moved is host
    else:
        assert array_namespace(moved) is array_namespace(like)
        assert device_of(moved) == device_of(like)
    back = to_numpy(moved)
    assert isinstance(back, np.ndarray)
    np.testing.assert_array_equal(back, host)


@pytest.mark.parametrize("name, asarray", NAMESPACES)
def test_primitives_agree_with_numpy(name, asarray, global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    A = rng.normal(size=(50, 4)) * 30
    np.testing.assert_allclose(
        to_numpy(rowwise_dot(asarray(A), asarray(A))),
        np.sum(A * A, axis=1),
        rtol=1e-13,
    )
    np.testing.assert_allclose(
        to_numpy(expit(asarray(A))), 1 / (1 + np.exp(-A)), rtol=1e-13
    )
    P = to_numpy(softmax(asarray(A), axis=1))
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-13)
    E = np.exp(A - A.max(axis=1, keepdims=True))
    np.testing.assert_allclose(P, E / E.sum(axis=1, keepdims=True), rtol=1e-12)


@pytest.mark.parametrize("name, asarray", NAMESPACES)
@pytest.mark.parametrize("n_columns", [1, 2, 3, 4, 5, 17])
def test_narrow_reductions_and_products_agree_with_numpy(
    name, asarray, n_columns, global_random_seed
):
    # Both sides of each threshold (4 columns for the products, 16 for the
    # row maximum) against numpy's plain reductions and matmul.
    rng = np.random.default_rng(global_random_seed)
    A = rng.normal(size=(60, n_columns)) * 30
    X = rng.normal(size=(60, 7))
    np.testing.assert_array_equal(
        to_numpy(row_max(asarray(A))), A.max(axis=1, keepdims=True)
    )
    np.testing.assert_allclose(to_numpy(row_sums(asarray(A))), A.sum(1), rtol=1e-12)
    np.testing.assert_allclose(
        to_numpy(column_sums(asarray(A))), A.sum(0), rtol=1e-12, atol=1e-12
    )
    B = rng.normal(size=(7, n_columns))
    got = narrow_matmul(asarray(X), asarray(B))
    assert got.shape == (60, n_columns)
    np.testing.assert_allclose(to_numpy(got), X @ B, rtol=1e-12, atol=1e-12)
    got_t = narrow_matmul(asarray(X), asarray(A), transpose_a=True)
    np.testing.assert_allclose(to_numpy(got_t), X.T @ A, rtol=1e-12, atol=1e-12)


def test_narrow_matmul_promotes_mixed_precision_and_propagates_nan():
    X = np.ones((3, 2), dtype=np.float32)
    B = np.array([[1.0, np.nan], [2.0, 0.0]])
    out = narrow_matmul(X, B)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out[:, 0], 3.0)
    assert np.isnan(out[:, 1]).all()
    assert np.isnan(row_max(np.array([[1.0, np.nan]]))).all()


@pytest.mark.parametrize("n_columns", [1, 3, 6])
def test_float32_rows_meet_float64_parameters_in_cast_blocks(monkeypatch, n_columns):
    # A float32 X times float64 parameters: cast a block of rows at a time
    # (here 4 rows of 7 features), never as a whole, with the products of
    # the float64 copy of X, narrow or wide, plain or transposed.
    from sklearn_dpfair.utils import _array_api

    monkeypatch.setattr(_array_api, "_MIXED_CAST_BYTES", 4 * 7 * 8)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 7)).astype(np.float32)
    B, R = rng.normal(size=(7, n_columns)), rng.normal(size=(30, n_columns))
    wide = X.astype(np.float64)
    got, got_t = narrow_matmul(X, B), narrow_matmul(X, R, transpose_a=True)
    assert got.dtype == got_t.dtype == np.float64
    np.testing.assert_allclose(got, wide @ B, rtol=1e-13)
    np.testing.assert_allclose(got_t, wide.T @ R, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(
        upcast_matmul(X, R[:, 0], transpose_a=True), wide.T @ R[:, 0], rtol=1e-12
    )


@pytest.mark.parametrize("name, asarray", NAMESPACES)
def test_expit_saturates_without_nan(name, asarray):
    p = to_numpy(expit(asarray(np.array([-1e4, 0.0, 1e4]))))
    np.testing.assert_array_equal(p, [0.0, 0.5, 1.0])


def test_backend_asarray_translates_dtypes():
    torch = pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    import array_api_compat.torch as xp_torch

    from sklearn_dpfair.utils._array_api import ArrayBackend

    backend = ArrayBackend(xp_torch, torch.device("cpu"), np)
    y = backend.asarray(np.array([0, 1, 1]), dtype=np.dtype("float32"))
    assert y.dtype == torch.float32
    # Results go back to numpy: the input namespace was numpy.
    out = backend.to_output(y)
    assert isinstance(out, np.ndarray) and out.dtype == np.float32
    assert NUMPY_BACKEND.asarray(np.array([0, 1]), dtype=torch.float64).dtype == (
        np.float64
    )


# -- finite arithmetic whatever a record holds ----------------------------------


@pytest.mark.parametrize("name, asarray", NAMESPACES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_finite_linear_scores_repairs_only_overflowing_rows(name, asarray, dtype):
    big = np.finfo(dtype).max
    X = np.array(
        [[1.0, 2.0], [0.9 * big, 0.0], [-0.9 * big, 0.9 * big], [big, big]],
        dtype=dtype,
    )
    W = np.array([[2.0, -1.0], [1.5, 3.0]], dtype=dtype)
    b = np.array([0.5, -0.25], dtype=dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        plain = X @ W + b
    assert not np.isfinite(plain[1:]).all(axis=1).any()  # overflow, inf - inf
    got = to_numpy(
        finite_linear_scores(asarray(plain), asarray(X), asarray(W), asarray(b))
    )
    assert got.dtype == dtype and np.isfinite(got).all()
    np.testing.assert_array_equal(got[0], plain[0])  # ordinary rows: untouched
    # Saturated where the exact score is beyond the largest float ...
    np.testing.assert_array_equal(got[1], [big, -0.9 * big + b[1]])
    np.testing.assert_array_equal(got[3], [big, big])
    # ... and accurate where it is not, although the plain product was nan.
    np.testing.assert_allclose(got[2, 0], -0.45 * big, rtol=1e-6)
    assert got[2, 1] == big


def test_finite_linear_scores_one_output_and_tiny_coefficients():
    X = np.array([[1.7e308, -1.7e308, 1.0]])
    w = np.array([1e-300, 2e-300, 5.0])
    with np.errstate(over="ignore", invalid="ignore"):
        plain = X @ w
    got = finite_linear_scores(plain, X, w)
    assert got.shape == (1,)
    np.testing.assert_allclose(got, [1.7e308 * -1e-300 + 5.0], rtol=1e-12)


@pytest.mark.parametrize("name, asarray", NAMESPACES)
def test_softmax_and_logs_of_extreme_scores_are_finite(name, asarray):
    big = np.finfo(np.float64).max
    raw = np.array([[np.inf, 1.0], [-np.inf, -np.inf], [big, -big], [0.0, -800.0]])
    P = to_numpy(softmax(asarray(raw)))
    np.testing.assert_array_equal(P[:3], [[1.0, 0.0], [0.5, 0.5], [1.0, 0.0]])
    assert np.isfinite(P).all()
    L = to_numpy(log_softmax(asarray(raw[3:])))
    np.testing.assert_allclose(L, [[0.0, -800.0]], atol=1e-12)
    np.testing.assert_allclose(
        to_numpy(log_expit(asarray(np.array([-800.0, 0.0])))), [-800.0, np.log(0.5)]
    )
    np.testing.assert_array_equal(
        to_numpy(saturate(asarray(np.array([np.inf, -np.inf, 2.0])))), [big, -big, 2.0]
    )
    # Finite input comes back as is (numpy: the very same object).
    finite = asarray(np.array([[1.0, 2.0]]))
    assert saturate(finite) is finite


def test_finite_linear_scores_of_sparse_rows_densify_only_the_bad_rows(monkeypatch):
    import scipy.sparse as sp

    from sklearn_dpfair.utils._array_api import finite_linear_scores

    X = np.array([[1.0, 2.0, 0.0], [1.7e308, 0.0, 0.0], [0.0, 0.0, 0.0],
                  [-1.7e308, 1.7e308, 0.0]])
    W = np.array([[2.0, 1.0], [1.5, -1.0], [3.0, 0.5]])
    S = sp.csr_matrix(X)
    with np.errstate(over="ignore", invalid="ignore"):
        plain_dense = X @ W
        plain_sparse = np.asarray(S @ W)

    def refuse(self, *args, **kwargs):
        raise AssertionError("X was densified")

    monkeypatch.setattr(sp.csr_matrix, "toarray", refuse)
    expected = finite_linear_scores(plain_dense, X, W, 0.5)
    got = finite_linear_scores(plain_sparse, S, W, 0.5)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, expected, rtol=1e-12)
