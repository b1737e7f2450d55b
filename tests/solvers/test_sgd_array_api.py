# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The DP-SGD core in every installed array namespace: one code path, same stream.

numpy is the reference; torch (CPU here, CUDA where visible) and
array-api-strict (which rejects anything outside the standard) must give the
same batches and noise for a seed, and coefficients equal up to round-off.
"""

import tracemalloc

import numpy as np
import pytest

from sklearn_dpfair._loss import BinaryLogisticLoss, SoftmaxLoss
from sklearn_dpfair._solvers import noisy_sgd, poisson_batch
from sklearn_dpfair.privacy import GaussianMechanism, check_noise_generator
from sklearn_dpfair._solvers._linear import augmented_row_norms, clipped_gradient_sum
from sklearn_dpfair.utils._array_api import array_namespace, to_numpy

# Coefficients after a few hundred noisy steps agree to this tolerance in
# float64 (measured: ~1e-15) and float32 (measured: ~1e-6).
_ATOL = {"float64": 1e-10, "float32": 1e-4}


def _namespaces():
    out = []
    try:
        import array_api_compat  # noqa: F401
        import torch

        out.append(pytest.param(torch.from_numpy, id="torch-cpu"))
        if torch.cuda.is_available():
            out.append(pytest.param(lambda a: torch.from_numpy(a).cuda(), id="cuda"))
    except ImportError:
        pass
    try:
        import array_api_compat  # noqa: F401, F811  (non-numpy input needs it)
        import array_api_strict

        out.append(pytest.param(array_api_strict.asarray, id="array_api_strict"))
    except ImportError:
        pass
    return out


NAMESPACES = _namespaces()
pytestmark = pytest.mark.skipif(not NAMESPACES, reason="no array-API namespace")


@pytest.fixture(autouse=True)
def _single_torch_thread():
    # Tiny matrices: torch's OpenMP threads only add barrier waits, which on
    # a loaded CI machine cost ~40 ms per matmul instead of ~4 us.
    try:
        import torch
    except ImportError:
        yield
        return
    n_threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n_threads)


def _problem(seed, n_outputs, dtype):
    rng = np.random.default_rng(seed)
    X = (rng.normal(size=(400, 5)) * rng.exponential(2.0, size=(1, 5))).astype(dtype)
    if n_outputs == 1:
        y, loss = (X[:, 0] > 0).astype(dtype), BinaryLogisticLoss()
    else:
        y, loss = (np.argmax(X[:, :3], axis=1)).astype(dtype), SoftmaxLoss(3)
    return X, y, loss


def _solve(X, y, loss, seed, sigma=1.2, q=0.1):
    return noisy_sgd(
        X,
        y,
        loss,
        mechanism=GaussianMechanism(clip_norm=1.0, noise_multiplier=sigma),
        sampling_probability=q,
        n_steps=100,
        learning_rate=0.5,
        alpha=1e-3,
        intercept_scaling=1.0,
        rng=check_noise_generator(seed),
    )


@pytest.mark.parametrize("asarray", NAMESPACES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("n_outputs", [1, 3])
@pytest.mark.parametrize("q", [0.1, 1.0])
def test_same_seed_same_coefficients(asarray, dtype, n_outputs, q, global_random_seed):
    X, y, loss = _problem(global_random_seed, n_outputs, dtype)
    ref = _solve(X, y, loss, global_random_seed, q=q)
    out = _solve(asarray(X), asarray(y), loss, global_random_seed, q=q)
    assert array_namespace(out.coef) is array_namespace(asarray(X))
    coef = to_numpy(out.coef)
    assert coef.dtype == ref.coef.dtype
    np.testing.assert_allclose(coef, ref.coef, rtol=0, atol=_ATOL[dtype])
    np.testing.assert_allclose(
        to_numpy(out.intercept), ref.intercept, rtol=0, atol=_ATOL[dtype]
    )


@pytest.mark.parametrize("asarray", NAMESPACES)
def test_unseeded_runs_differ(asarray):
    # OS entropy on every backend: two unseeded runs never share their noise.
    X, y, loss = _problem(0, 1, "float64")
    a = to_numpy(_solve(asarray(X), asarray(y), loss, None).coef)
    b = to_numpy(_solve(asarray(X), asarray(y), loss, None).coef)
    assert not np.allclose(a, b)


@pytest.mark.parametrize("asarray", NAMESPACES)
def test_batches_and_noise_are_the_host_stream(asarray):
    like = asarray(np.zeros((3, 2)))
    idx = poisson_batch(np.random.default_rng(5), 1000, 0.2, like=like)
    np.testing.assert_array_equal(
        to_numpy(idx), poisson_batch(np.random.default_rng(5), 1000, 0.2)
    )
    mech = GaussianMechanism(clip_norm=2.0, noise_multiplier=1.5)
    noisy = mech.privatize(like, np.random.default_rng(5))
    assert array_namespace(noisy) is array_namespace(like)
    np.testing.assert_array_equal(
        to_numpy(noisy), mech.privatize(np.zeros((3, 2)), np.random.default_rng(5))
    )


@pytest.mark.parametrize("asarray", NAMESPACES)
def test_neighbouring_clipped_sums_within_clip_norm(asarray, global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    X, R, C = rng.normal(size=(30, 5)), rng.normal(size=(30, 2)), 0.7
    for scale in (1e-3, 1.0, 1e6):
        X2 = np.vstack([X, rng.normal(size=(1, 5)) * scale])
        R2 = np.vstack([R, rng.normal(size=(1, 2)) * scale])
        a, b = (
            [
                to_numpy(block)
                for block in clipped_gradient_sum(
                    asarray(Xi),
                    asarray(Ri),
                    augmented_row_norms(asarray(Xi), 1.0),
                    C,
                    1.0,
                )
            ]
            for Xi, Ri in ((X, R), (X2, R2))
        )
        diff = np.sqrt(np.sum((a[0] - b[0]) ** 2) + np.sum((a[1] - b[1]) ** 2))
        assert diff <= C * (1 + 1e-12)


def test_numpy_memory_is_batch_sized():
    # Memory beyond the data: one batch of rows, the n row norms and the
    # parameters; never an n x d temporary (peak <= 2x the data overall).
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20_000, 50))
    y = (X[:, 0] > 0).astype(float)
    tracemalloc.start()
    try:
        _solve(X, y, BinaryLogisticLoss(), 0, q=0.05)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    batch = 0.05 * X.nbytes
    assert peak < 3 * batch + 4 * X.shape[0] * 8, (peak, X.nbytes)
    assert peak < X.nbytes


def test_sparse_X_with_targets_on_another_namespace_is_refused_by_name():
    import scipy.sparse as sp

    torch = pytest.importorskip("torch")
    X = sp.random(20, 4, density=0.5, format="csr", random_state=0)
    y = torch.zeros(20, dtype=torch.float64)
    with pytest.raises(TypeError, match="Sparse input X.*device"):
        noisy_sgd(
            X, y, BinaryLogisticLoss(),
            mechanism=GaussianMechanism(clip_norm=1.0, noise_multiplier=1.0),
            sampling_probability=0.5, n_steps=2, learning_rate=0.1, alpha=0.0,
            intercept_scaling=1.0, rng=np.random.default_rng(0),
        )
