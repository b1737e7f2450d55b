# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Array namespaces and devices: where a solver computes, and what it returns.

The solvers are written once, against the `array API standard
<https://data-apis.org/array-api/>`_, and run in the namespace of the arrays
they are given: numpy on the CPU by default, PyTorch (through
``array-api-compat``) on a GPU or the CPU when asked. This module decides
which, moves arrays between host and device, and holds the few primitives a
solver needs that the standard lacks or that numpy must keep computing
exactly as it always did.

Rules (also stated in the estimators' docstrings):

* ``device="cpu"`` (default): numpy. PyTorch is never imported.
* ``device="cuda"``: PyTorch on the current CUDA device. Without PyTorch this
  raises an :class:`ImportError` naming the ``sklearn-dpfair[torch]`` extra.
* ``device="auto"``: CUDA when PyTorch is installed and sees a GPU, else numpy.
* With ``sklearn.set_config(array_api_dispatch=True)`` and a torch tensor as
  ``X``, the solver runs in torch on X's device, and the fitted arrays stay
  there (scikit-learn's rule). ``device`` must then be ``"auto"`` or name X's
  device type. Arrays of other array-API namespaces are refused (the solvers
  index rows as numpy and torch do, beyond the standard). Input that requires
  grad is detached: no fitted array carries an autograd graph.
* Otherwise fitted arrays are numpy, so a model trained on a GPU pickles and
  predicts anywhere.

Randomness never comes from a device generator: Poisson masks and Gaussian
noise are drawn on the host from the fit's :class:`numpy.random.Generator`
(OS entropy when unseeded, see
:func:`~sklearn_dpfair.privacy.check_noise_generator`) and copied to the
device. The same seed therefore gives the same batches and the same noise on
every backend, and the coefficients agree up to floating-point round-off.
"""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import scipy.sparse
import scipy.special
import sklearn

__all__ = [
    "NUMPY_BACKEND",
    "ArrayBackend",
    "array_namespace",
    "arrays_like",
    "column_sums",
    "detached_input",
    "device_of",
    "expit",
    "finite_linear_scores",
    "from_host",
    "host_input",
    "input_float_dtypes",
    "is_numpy_namespace",
    "log_expit",
    "log_softmax",
    "narrow_matmul",
    "resolve_backend",
    "row_max",
    "row_sums",
    "rows_per_cast",
    "rowwise_dot",
    "saturate",
    "softmax",
    "to_numpy",
    "upcast_matmul",
]

DEVICE_OPTIONS = frozenset({"cpu", "cuda", "auto"})

_TORCH_EXTRA = (
    "PyTorch and array-api-compat are optional dependencies of sklearn-dpfair; "
    "install them with: pip install 'sklearn-dpfair[torch]'"
)

# numpy >= 2.0 implements the array API standard in its main namespace (with
# ``astype``, ``device=``), so the numpy path needs neither array-api-compat nor
# a wrapper, and runs the very numpy calls the solver always made.
_NUMPY_IS_ARRAY_API = int(np.__version__.split(".")[0]) >= 2


def _import_array_api_compat(what):
    try:
        import array_api_compat
    except ImportError as exc:
        raise ImportError(f"{what} needs array-api-compat. {_TORCH_EXTRA}") from exc
    return array_api_compat


def _import_torch(what):
    try:
        import torch
    except ImportError as exc:
        raise ImportError(f"{what} needs PyTorch. {_TORCH_EXTRA}") from exc
    _import_array_api_compat(what)
    return torch


def is_numpy_namespace(xp):
    """Whether ``xp`` is numpy (the module or array-api-compat's numpy wrapper).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.utils._array_api import is_numpy_namespace
    >>> is_numpy_namespace(np)
    True
    """
    return xp is np or getattr(xp, "__name__", "") in {
        "array_api_compat.numpy",
        "sklearn.externals.array_api_compat.numpy",
    }


def _is_array_api_array(a):
    # numpy arrays, lists and data frames are "host" input; anything else that
    # speaks DLPack or the standard (torch, cupy, array-api-strict, ...) is an
    # array-API array.
    return not isinstance(a, np.ndarray) and (
        hasattr(a, "__array_namespace__") or hasattr(a, "__dlpack__")
    )


def array_namespace(*arrays):
    """Namespace of the given arrays: numpy for numpy arrays, else array-api-compat's.

    Parameters
    ----------
    *arrays : arrays or None
        Arrays of one namespace; ``None`` and Python scalars are ignored.

    Returns
    -------
    xp : module
        ``numpy`` itself for numpy input (numpy >= 2 implements the standard),
        otherwise the namespace ``array_api_compat.array_namespace`` returns.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.utils._array_api import array_namespace
    >>> array_namespace(np.ones(2)) is np
    True
    """
    if _NUMPY_IS_ARRAY_API and all(type(a) is np.ndarray for a in arrays):
        # The solvers' inner loops call this a few dozen times per step.
        return np
    arrays = [a for a in arrays if a is not None and not isinstance(a, (int, float))]
    if all(isinstance(a, (np.ndarray, np.generic)) for a in arrays):
        if _NUMPY_IS_ARRAY_API:
            return np
        return _import_array_api_compat("numpy < 2").array_namespace(*arrays)
    return _import_array_api_compat("Non-numpy input").array_namespace(*arrays)


def device_of(a):
    """Device of array ``a`` (``"cpu"`` for numpy arrays).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.utils._array_api import device_of
    >>> device_of(np.ones(2))
    'cpu'
    """
    if isinstance(a, (np.ndarray, np.generic)):
        return "cpu"
    return _import_array_api_compat("Non-numpy input").device(a)


def _device_type(device):
    # "cpu" / "cuda" for torch devices; for others, "cpu" when their name says
    # so (numpy's "cpu", array-api-strict's "CPU_DEVICE"), else the name.
    if hasattr(device, "type"):
        return str(device.type).lower()
    name = str(device).lower()
    return "cpu" if "cpu" in name else name


def from_host(host_array, like):
    """Copy a host numpy array to the namespace and device of ``like``.

    For numpy ``like`` the array is returned unchanged (no copy), so numpy
    solvers compute exactly what they computed before the array API.
    Noise and Poisson masks go through here: they are drawn on the host from
    the fit's numpy generator, whatever the backend.

    Parameters
    ----------
    host_array : ndarray
        Array on the host; its dtype is kept.
    like : array
        Any array of the target namespace and device.

    Returns
    -------
    array : array
        ``host_array`` in ``like``'s namespace, on ``like``'s device.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.utils._array_api import from_host
    >>> host = np.arange(3)
    >>> from_host(host, np.zeros(2)) is host
    True
    """
    if isinstance(like, np.ndarray):
        return host_array
    xp = array_namespace(like)
    return xp.asarray(host_array, device=device_of(like))


def to_numpy(a):
    """Host numpy copy of an array of any namespace and device.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.utils._array_api import to_numpy
    >>> to_numpy(np.ones(2))
    array([1., 1.])
    """
    if a is None or isinstance(a, (np.ndarray, np.generic)):
        return a
    if not _is_array_api_array(a):
        return np.asarray(a)
    aac = _import_array_api_compat("Non-numpy input")
    if aac.is_torch_array(a):
        return a.detach().cpu().numpy()
    if aac.is_cupy_array(a):
        return a.get()
    # Other namespaces (array-api-strict, ...): DLPack from their CPU device.
    if _device_type(aac.device(a)).startswith("cuda"):
        a = aac.to_device(a, "cpu")
    return np.from_dlpack(a)


def _detached(a):
    # A torch tensor that requires grad carries an autograd graph; a fit's
    # arithmetic on it would record every step, and the graph of a fitted
    # attribute would hold (and differentiate back to) the training rows
    # of each batch, which the DP release must not expose. Other arrays,
    # and tensors without a graph, are returned as they are.
    if getattr(a, "requires_grad", False) and hasattr(a, "detach"):
        return a.detach()
    return a


def detached_input(a):
    """``a`` without its autograd graph, for ``validate_data`` in fit and predict.

    A torch tensor that requires grad is detached (sharing its storage)
    before validation: ``validate_data`` copies array-API input with
    ``xp.asarray``, on which torch warns about its ``requires_grad``
    default, and whatever the estimator computes from it must not record
    an autograd graph of the training rows. Anything else, including
    tensors without a graph, is returned unchanged.

    Parameters
    ----------
    a : array-like or None
        Input as passed to ``fit``, ``predict`` or ``decision_function``.

    Returns
    -------
    a : array-like or None
        ``a.detach()`` for an array-API tensor that requires grad, else ``a``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.utils._array_api import detached_input
    >>> X = np.ones((2, 2))
    >>> detached_input(X) is X
    True
    """
    return _detached(a) if _is_array_api_array(a) else a


def host_input(a):
    """Host numpy copy of an array-API array under dispatch, for host-only code.

    Estimators and transformers that compute on the host (scipy, numpy
    only) take array-API input under scikit-learn's array API dispatch as
    they take it without: as numpy. ``validate_data`` would otherwise ask
    the input's namespace for a numpy dtype, which torch refuses. Anything
    else (numpy, lists, data frames, sparse matrices, or any input while
    dispatch is off) is returned unchanged, for ``validate_data`` to check.

    Parameters
    ----------
    a : array-like or None
        Input as passed to ``fit``, ``transform`` or ``predict``.

    Returns
    -------
    a : array-like or None
        A numpy array for dispatched array-API input, else ``a`` itself.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.utils._array_api import host_input
    >>> X = np.ones((2, 2))
    >>> host_input(X) is X
    True
    """
    if sklearn.get_config()["array_api_dispatch"] and _is_array_api_array(a):
        return to_numpy(a)
    return a


def arrays_like(X, *arrays):
    """Fitted ``arrays`` in the namespace and on the device of ``X``, for predict.

    A model predicts where its input lives, whichever namespace it was
    fitted in (scikit-learn's rule under array API dispatch): numpy ``X``
    gets host numpy copies of the arrays (numpy arrays are returned as
    they are, so numpy predictions are unchanged); other ``X`` gets them
    in its namespace, on its device and in its dtype (torch does not
    promote mixed precisions in a product). If narrowing to ``X``'s dtype
    would overflow one of them (a float64 coefficient beyond float32's
    largest float, for a column in units of 1e-40, met by float32 ``X``),
    every array keeps its own dtype instead: stored as ``inf``, the model
    would turn every prediction into NaN, whereas numpy ``X`` promotes.
    The product then runs in the wider dtype, and
    :func:`finite_linear_scores` returns the scores in ``X``'s dtype,
    saturated.

    Parameters
    ----------
    X : array
        Validated input of ``predict`` (dense).
    *arrays : arrays
        Fitted arrays of any namespace and device.

    Returns
    -------
    arrays : list of arrays
        ``arrays``, moved.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.utils._array_api import arrays_like
    >>> coef = np.ones(2)
    >>> arrays_like(np.zeros((3, 2)), coef)[0] is coef
    True
    """
    xp = array_namespace(X)
    if is_numpy_namespace(xp):
        # Python scalars stay scalars: numpy promotes them weakly (a float
        # intercept keeps float32 scores float32), not as float64 arrays.
        return [a if isinstance(a, (int, float)) else to_numpy(a) for a in arrays]
    device = device_of(X)
    arrays = [
        a if _is_array_api_array(a) and array_namespace(a) is xp else to_numpy(a)
        for a in arrays
    ]
    largest = float(xp.finfo(X.dtype).max)
    # All or none narrowed: a wide coefficient beside a narrowed intercept
    # would add in the narrow dtype (torch does not promote a 0-d tensor).
    dtype = X.dtype if all(_fits_below(a, largest) for a in arrays) else None
    return [xp.asarray(_detached(a), dtype=dtype, device=device) for a in arrays]


def _fits_below(a, largest):
    # Whether every finite value of ``a`` is at most ``largest`` in
    # magnitude (non-float arrays always fit: their casts are exact enough).
    # The released model is public: reading its values costs no privacy.
    xp = array_namespace(a)
    if not xp.isdtype(a.dtype, "real floating"):
        return True
    if float(xp.finfo(a.dtype).max) <= largest or 0 in a.shape:
        return True
    magnitude = xp.where(xp.isfinite(a), xp.abs(a), xp.zeros_like(a))
    return float(xp.max(magnitude)) <= largest


def _dtype_name(dtype):
    # "float32" for numpy's, torch's ("torch.float32") and array-api-strict's
    # dtypes alike.
    if isinstance(dtype, (np.dtype, type)):
        return np.dtype(dtype).name
    return str(dtype).rsplit(".", 1)[-1]


def input_float_dtypes(X):
    """``[float64, float32]`` of the namespace ``validate_data`` will keep ``X`` in.

    numpy's, unless scikit-learn's array API dispatch is on and ``X`` is an
    array-API array: then ``validate_data`` keeps ``X``'s namespace and needs
    its dtypes (for ``predict`` on a model fitted under dispatch).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.utils._array_api import input_float_dtypes
    >>> input_float_dtypes(np.ones(2)) == [np.float64, np.float32]
    True
    """
    xp = np
    if sklearn.get_config()["array_api_dispatch"] and _is_array_api_array(X):
        xp = array_namespace(X)
    return [xp.float64, xp.float32]


def rowwise_dot(A, B):
    """Row-wise inner products ``sum_j A[i, j] * B[i, j]``, without an ``A * B`` temporary.

    numpy keeps the ``einsum`` the solvers always used, so numpy results stay
    bit-for-bit what they were; other namespaces use the standard's
    ``vecdot``. (numpy's own ``vecdot`` sums in another order.)

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.utils._array_api import rowwise_dot
    >>> rowwise_dot(np.array([[3.0, 4.0]]), np.array([[3.0, 4.0]]))
    array([25.])
    """
    xp = array_namespace(A, B)
    if is_numpy_namespace(xp):
        return np.einsum("ij,ij->i", A, B)
    return xp.vecdot(A, B, axis=-1)


# OpenBLAS multiplies a tall matrix by a matrix of 2-4 columns about half as
# fast as by those columns one at a time (matrix-vector products); the
# solvers' products are of this shape (a batch times one column per class).
_NARROW_COLUMNS = 4

# Bytes of the float64 copy of a block of lower-precision rows cast up at
# once (rows_per_cast); a whole large X is never copied.
_MIXED_CAST_BYTES = 1 << 21


def narrow_matmul(A, B, *, transpose_a=False):
    """``A @ B`` (or ``A.T @ B``) for a ``B`` of a few columns.

    Equal to ``xp.matmul`` up to rounding: numpy computes one matrix-vector
    product per column of ``B`` when it has at most four (twice faster with
    OpenBLAS for the solvers' (batch x features) by (features x classes)
    products); other namespaces, and wider ``B``, use ``xp.matmul``. A
    numpy ``A`` of lower precision than ``B`` (float32 rows, float64
    parameters) goes through :func:`upcast_matmul`.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.utils._array_api import narrow_matmul
    >>> narrow_matmul(np.eye(2), np.array([[1.0], [2.0]]))
    array([[1.],
           [2.]])
    """
    xp = array_namespace(A, B)
    if is_numpy_namespace(xp) and A.dtype != np.result_type(A, B):
        return upcast_matmul(A, B, transpose_a=transpose_a)
    if transpose_a:
        A = A.T
    if not is_numpy_namespace(xp) or not 0 < B.shape[1] <= _NARROW_COLUMNS:
        return xp.matmul(A, B)
    dtype = np.result_type(A, B)
    columns = [np.matmul(A, B[:, j]) for j in range(B.shape[1])]
    return np.stack(columns, axis=1).astype(dtype, copy=False)


def rows_per_cast(n_features, dtype=np.float64):
    """Rows of ``n_features`` whose copy in ``dtype`` takes ``_MIXED_CAST_BYTES``.

    The block of a lower-precision ``X`` cast up at once by
    :func:`upcast_matmul` (and, for a sparse ``X``, by the solvers'
    ``float64_product``): 2 MB, never a whole large ``X``.

    Examples
    --------
    >>> from sklearn_dpfair.utils._array_api import rows_per_cast
    >>> rows_per_cast(100)
    2621
    """
    row_bytes = max(1, int(n_features)) * np.dtype(dtype).itemsize
    return max(1, _MIXED_CAST_BYTES // row_bytes)


def upcast_matmul(X, B, *, transpose_a=False):
    """``X @ B`` (or ``X.T @ B``) in the wider precision of the two, for numpy.

    A lower-precision ``X`` (float32 rows) meeting wider ``B`` (float64
    parameters) is cast up a block of rows at a time (:func:`rows_per_cast`;
    a large ``X`` is never copied whole) and
    multiplied there with BLAS: numpy multiplies mixed precisions without
    it, 3-7x slower, or promotes the whole ``X``. A transposed product adds
    its blocks' partial sums in the wide precision. Each row's product
    equals that of the float64 copy of ``X``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.utils._array_api import upcast_matmul
    >>> X = np.ones((3, 2), dtype=np.float32)
    >>> upcast_matmul(X, np.array([[0.5], [0.25]]), transpose_a=False).ravel()
    array([0.75, 0.75, 0.75])
    >>> upcast_matmul(X, np.ones((3, 1)), transpose_a=True).dtype
    dtype('float64')
    """
    dtype = np.result_type(X, B)
    B = B.astype(dtype, copy=False)
    squeeze = B.ndim == 1
    if squeeze:
        B = B[:, None]
    step = rows_per_cast(X.shape[1], dtype)
    if transpose_a:
        X = X.T  # the blocks are rows of the data, columns of X here
    n_rows = X.shape[1] if transpose_a else X.shape[0]
    if transpose_a:
        out = np.zeros((X.shape[0], B.shape[1]), dtype=dtype)
        for start in range(0, n_rows, step):
            part = slice(start, start + step)
            out += X[:, part].astype(dtype) @ B[part]
    else:
        out = np.empty((X.shape[0], B.shape[1]), dtype=dtype)
        for start in range(0, n_rows, step):
            part = slice(start, start + step)
            out[part] = X[part].astype(dtype) @ B
    return out[:, 0] if squeeze else out


# Up to this many columns, a row maximum is a chain of elementwise maxima:
# numpy's reductions along a short trailing axis pay a per-row overhead that
# makes ``max(axis=1)`` of a (1024, 2) batch ~20x slower than one ``maximum``.
_FEW_COLUMNS = 16


def row_max(A):
    """Row maxima of a 2-D array, as a column of shape ``(n, 1)``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.utils._array_api import row_max
    >>> row_max(np.array([[1.0, 3.0], [2.0, -1.0]]))
    array([[3.],
           [2.]])
    """
    xp = array_namespace(A)
    if A.shape[1] > _FEW_COLUMNS or A.shape[1] == 0:
        return xp.max(A, axis=1, keepdims=True)
    out = A[:, 0]
    for j in range(1, A.shape[1]):
        out = xp.maximum(out, A[:, j])
    return out[:, None]


def row_sums(A):
    """Row sums of a 2-D array, shape ``(n,)``, as one matrix-vector product.

    A BLAS product with a vector of ones: for the narrow batches of the
    solvers (a few classes) it is an order of magnitude faster than numpy's
    ``sum(axis=1)``; it sums in another order (not bit-for-bit the same).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.utils._array_api import row_sums
    >>> row_sums(np.array([[1.0, 3.0], [2.0, -1.0]]))
    array([4., 1.])
    """
    xp = array_namespace(A)
    return xp.matmul(A, xp.ones(A.shape[1], dtype=A.dtype, device=device_of(A)))


def column_sums(A):
    """Column sums of a 2-D array, shape ``(m,)``, as one vector-matrix product.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.utils._array_api import column_sums
    >>> column_sums(np.array([[1.0, 3.0], [2.0, -1.0]]))
    array([3., 2.])
    """
    xp = array_namespace(A)
    return xp.matmul(xp.ones(A.shape[0], dtype=A.dtype, device=device_of(A)), A)


def _any(xp, mask):
    # numpy's methods are a few microseconds faster than its functions,
    # which matters for checks run at every solver step.
    return bool(mask.any()) if is_numpy_namespace(xp) else bool(xp.any(mask))


def _all(xp, mask):
    return bool(mask.all()) if is_numpy_namespace(xp) else bool(xp.all(mask))


def saturate(x):
    """``x`` with ``+inf``/``-inf`` replaced by the largest finite values of its dtype.

    Finite entries (and ``nan``) are returned unchanged, bit for bit; the copy
    is only made when ``x`` holds an infinity. The sigmoid and the softmax of
    a saturated score are the limits of those at ``+-inf`` (``[1, 0]`` for
    ``softmax([inf, 1])``) instead of the ``nan`` of ``inf - inf``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.utils._array_api import saturate
    >>> saturate(np.array([1.0, np.inf, -np.inf]))
    array([ 1.00000000e+000,  1.79769313e+308, -1.79769313e+308])
    """
    xp = array_namespace(x)
    if not _any(xp, xp.isinf(x)):
        return x
    big = float(xp.finfo(x.dtype).max)
    return xp.clip(x, -big, big)


def finite_linear_scores(scores, X, W, intercept=0.0):
    """Repair the rows of ``scores = X @ W + intercept`` that are not finite.

    For finite ``X``, ``W`` and ``intercept`` the plain product can still
    overflow (a row ``[1.7e308, 0]`` times a coefficient above 1 is ``inf``)
    or produce ``inf - inf = nan`` (``[-1.7e308, 1.7e308]`` times
    ``[1, 1]``). Only those rows are recomputed, as
    ``((x_i / m_i) @ (W / M)) * m_i * M + intercept`` with ``m_i = max|x_i|``
    and ``M = max|W|`` (the scaled product is at most ``n_features`` in
    magnitude, so nothing overflows before the two rescalings, applied
    smaller first), saturated to the largest finite value of the dtype.
    Every other row is returned bit for bit, so ordinary data costs one
    finiteness check.

    An array-API (non-numpy) ``X`` of a narrower dtype than ``scores`` (a
    model that :func:`arrays_like` kept in its wider dtype, which the
    product promoted to) gets its scores back in ``X``'s dtype, saturated
    to its largest finite value: a prediction follows the input's dtype. A
    numpy ``X`` keeps numpy's promotion (float32 rows scored by a float64
    model give float64 scores), as before.

    Parameters
    ----------
    scores : array of shape (n_samples, n_outputs) or (n_samples,)
        The plain ``X @ W + intercept`` as the caller computed it.
    X : array of shape (n_samples, n_features)
    W : array of shape (n_features, n_outputs) or (n_features,)
    intercept : float or array of shape (n_outputs,), default=0.0

    Returns
    -------
    scores : array, same shape as ``scores``
        Finite wherever ``X``'s row is finite (``W``, ``intercept`` finite).
        Of ``scores``' dtype, or ``X``'s for a narrower non-numpy ``X``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.utils._array_api import finite_linear_scores
    >>> X = np.array([[1.0, 2.0], [1.7e308, 0.0], [-1.7e308, 1.7e308]])
    >>> W = np.array([[2.0], [1.5]])
    >>> with np.errstate(over="ignore", invalid="ignore"):
    ...     plain = X @ W
    >>> np.isfinite(plain).ravel()
    array([ True, False, False])
    >>> finite_linear_scores(plain, X, W).ravel()
    array([ 5.00000000e+000,  1.79769313e+308, -8.50000000e+307])
    """
    xp = array_namespace(scores)
    narrow = _narrower_input_dtype(xp, scores, X)
    finite = xp.isfinite(scores)
    if _all(xp, finite):
        return scores if narrow is None else _saturated_cast(xp, scores, narrow)
    bad = finite if scores.ndim == 1 else xp.all(finite, axis=1)
    bad = xp.logical_not(bad)
    dtype = scores.dtype
    big = float(xp.finfo(dtype).max)
    if scipy.sparse.issparse(X):
        # Sparse (CSR) rows: only the few offending rows are made dense.
        rows = _dense_rows(X, bad, dtype)
    else:
        rows = xp.astype(X[bad], dtype)
    W = xp.astype(W, dtype)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        m = xp.max(xp.abs(rows), axis=1)
        m = xp.where(m > 0, m, xp.ones_like(m))
        M = xp.max(xp.abs(W))
        M = xp.where(M > 0, M, xp.ones_like(M))
        v = xp.matmul(rows / m[:, None], W / M)
        # Smaller factor first: the intermediate is then at most the final
        # value in magnitude, so it overflows only if the score itself does.
        lo, hi = xp.minimum(m, M), xp.maximum(m, M)
        if v.ndim == 2:
            lo, hi = lo[:, None], hi[:, None]
        v = xp.clip((v * lo) * hi, -big, big)
        v = xp.clip(v + intercept, -big, big)
    out = xp.asarray(scores, copy=True)
    out[bad] = xp.astype(v, dtype)
    return out if narrow is None else _saturated_cast(xp, out, narrow)


def _narrower_input_dtype(xp, scores, X):
    # X's dtype when X is a non-numpy array narrower than the scores, else
    # None (numpy keeps its promotion; sparse X is numpy).
    if is_numpy_namespace(xp) or scipy.sparse.issparse(X):
        return None
    dtype = getattr(X, "dtype", None)
    if dtype is None or dtype == scores.dtype:
        return None
    if not xp.isdtype(dtype, "real floating"):
        return None
    if float(xp.finfo(dtype).max) >= float(xp.finfo(scores.dtype).max):
        return None
    return dtype


def _saturated_cast(xp, x, dtype):
    # Cast to a narrower float dtype, clipping first so that values beyond
    # its largest float saturate instead of becoming inf (nan stays nan).
    big = float(xp.finfo(dtype).max)
    return xp.astype(xp.clip(x, -big, big), dtype)


def _dense_rows(X, mask, dtype):
    # The rows of a sparse matrix selected by ``mask`` as a dense numpy
    # array, written from the stored entries (no densifying of ``X``).
    rows = scipy.sparse.csr_matrix(X)[np.flatnonzero(mask)]
    out = np.zeros(rows.shape, dtype=dtype)
    row_ids = np.repeat(np.arange(rows.shape[0]), np.diff(rows.indptr))
    np.add.at(out, (row_ids, rows.indices), rows.data)
    return out


def expit(x):
    """Logistic sigmoid ``1 / (1 + exp(-x))`` in the namespace of ``x``.

    numpy uses :func:`scipy.special.expit` (the function the losses always
    called); other namespaces a form built on ``exp(-|x|)``, which never
    overflows and saturates to exactly 0 and 1 (also at ``+-inf``).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.utils._array_api import expit
    >>> expit(np.array([0.0, np.inf]))
    array([0.5, 1. ])
    """
    xp = array_namespace(x)
    if is_numpy_namespace(xp):
        return scipy.special.expit(x)
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def log_expit(x):
    """``log(expit(x))`` without the ``log(0)`` of a saturated sigmoid.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.utils._array_api import log_expit
    >>> log_expit(np.array([-1000.0]))
    array([-1000.])
    """
    xp = array_namespace(x)
    if is_numpy_namespace(xp):
        return scipy.special.log_expit(x)
    return -xp.logaddexp(xp.zeros_like(x), -x)


def softmax(x, axis=1):
    """Softmax along ``axis`` in the namespace of ``x`` (max-shifted, so it never overflows).

    Infinite scores are first saturated (:func:`saturate`), so a row holding
    ``+inf`` gets the limit (all mass on its maxima) instead of ``nan``; a
    finite row's result is unchanged.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.utils._array_api import softmax
    >>> softmax(np.zeros((1, 2)))
    array([[0.5, 0.5]])
    >>> softmax(np.array([[np.inf, 1.0]]))
    array([[1., 0.]])
    """
    xp = array_namespace(x)
    x = saturate(x)
    # x - max(x) may overflow to -inf (exp gives the right 0): no warning.
    with np.errstate(over="ignore"):
        if is_numpy_namespace(xp):
            return scipy.special.softmax(x, axis=axis)
        e = xp.exp(x - xp.max(x, axis=axis, keepdims=True))
    return e / xp.sum(e, axis=axis, keepdims=True)


def log_softmax(x, axis=1):
    """``log(softmax(x))`` along ``axis``, without the ``log(0)`` of an underflow.

    Infinite scores are saturated first, as in :func:`softmax`. For finite
    scores the result is finite unless two scores differ by more than the
    largest float (then ``-inf``; callers that need a finite value clip it).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.utils._array_api import log_softmax
    >>> log_softmax(np.array([[0.0, -1000.0]])).round(4)
    array([[    0., -1000.]])
    """
    xp = array_namespace(x)
    x = saturate(x)
    with np.errstate(over="ignore"):
        if is_numpy_namespace(xp):
            return scipy.special.log_softmax(x, axis=axis)
        shifted = x - xp.max(x, axis=axis, keepdims=True)
    return shifted - xp.log(xp.sum(xp.exp(shifted), axis=axis, keepdims=True))


@dataclass(frozen=True)
class ArrayBackend:
    """Where a fit computes, and in which namespace its results are returned.

    Build it with :func:`resolve_backend`. ``xp`` and ``device`` are the
    solver's namespace and device; ``input_xp`` is the namespace of the
    validated input ``X`` and of the fitted arrays (numpy unless scikit-learn's
    array API dispatch is on and ``X`` is an array-API array).

    Parameters
    ----------
    xp : module
        Namespace the solver computes in.
    device : object
        Device the solver computes on (``"cpu"`` for numpy).
    input_xp : module
        Namespace of the input after validation and of the fitted arrays.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.utils._array_api import resolve_backend
    >>> backend = resolve_backend(np.ones((2, 2)), "cpu")
    >>> backend.is_numpy, backend.name
    (True, 'numpy')
    """

    xp: object
    device: object
    input_xp: object

    @property
    def is_numpy(self):
        """Whether the solver runs in numpy."""
        return is_numpy_namespace(self.xp)

    @property
    def name(self):
        """Short description for messages, e.g. ``"numpy"`` or ``"torch on cuda:0"``."""
        if self.is_numpy:
            return "numpy"
        return f"{self.xp.__name__.rsplit('.', 1)[-1]} on {self.device}"

    @property
    def input_float_dtypes(self):
        """Float dtypes to accept in ``validate_data``, in the input's namespace."""
        return [self.input_xp.float64, self.input_xp.float32]

    def asarray(self, a, dtype=None):
        """``a`` (numpy or already on the backend) in the solver's namespace and device.

        Parameters
        ----------
        a : array
            Validated array, numpy or of the solver's namespace.
        dtype : dtype, default=None
            Floating dtype of any namespace (e.g. ``X.dtype``), translated to
            the solver's namespace; None keeps ``a``'s.

        Returns
        -------
        array : array
            No copy when ``a`` already lives there with that dtype. A torch
            tensor that requires grad comes back detached from its graph
            (sharing its storage).
        """
        if dtype is not None:
            dtype = getattr(self.xp, _dtype_name(dtype))
        if self.is_numpy:
            a = to_numpy(a)
            return a if dtype is None else a.astype(dtype, copy=False)
        # Input that requires grad enters without its autograd graph.
        return self.xp.asarray(_detached(a), dtype=dtype, device=self.device)

    def to_output(self, a):
        """A solver array converted to the namespace of the fitted attributes.

        Parameters
        ----------
        a : array
            Result of the solver.

        Returns
        -------
        array : array
            numpy, unless dispatch kept the input's namespace (then ``a`` is
            returned on the solver's device, which is the input's). Never
            attached to an autograd graph.
        """
        if is_numpy_namespace(self.input_xp):
            return to_numpy(a)
        return _detached(a)


#: numpy on the CPU, numpy results: the default of every solver.
NUMPY_BACKEND = ArrayBackend(np, "cpu", np)


def resolve_backend(X, device="cpu", *, array_api_solver=True):
    """Decide the namespace and device of a fit from ``X`` and ``device``.

    Call it before ``validate_data`` (whose ``dtype`` must be given in the
    input's namespace, :attr:`ArrayBackend.input_float_dtypes`).

    Parameters
    ----------
    X : array-like
        The training data as passed to ``fit``.
    device : {"cpu", "cuda", "auto"}, default="cpu"
        The estimator's ``device`` parameter.
    array_api_solver : bool, default=True
        Whether the selected solver is written against the array API. A
        numpy-only solver (e.g. one built on :mod:`scipy.optimize`) runs on
        the CPU for ``device="auto"`` and raises for ``"cuda"`` or dispatched
        non-numpy input.

    A scipy.sparse ``X`` runs on the host: ``"auto"`` picks the CPU for it,
    and ``"cuda"`` raises a ``TypeError``.

    Returns
    -------
    backend : ArrayBackend
        The namespace and device of the solver and of the fitted arrays.

    Raises
    ------
    ImportError
        ``device="cuda"`` (or dispatched non-numpy input) without the
        ``sklearn-dpfair[torch]`` extra.
    ValueError
        Unknown ``device``, no CUDA device visible, ``device`` contradicting
        the device of dispatched input, dispatched input of a namespace other
        than PyTorch, or a numpy-only solver asked to run elsewhere.
    TypeError
        A sparse ``X`` with ``device="cuda"``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.utils._array_api import resolve_backend
    >>> resolve_backend(np.ones((3, 2)), "auto", array_api_solver=False).name
    'numpy'
    """
    if device not in DEVICE_OPTIONS:
        raise ValueError(
            f"device must be one of {sorted(DEVICE_OPTIONS)}; got {device!r}."
        )
    if sp.issparse(X):
        if device == "cuda":
            raise TypeError(
                "Sparse input X runs on the CPU only; use device='cpu' or "
                "pass a dense array."
            )
        device = "cpu"
    if sklearn.get_config()["array_api_dispatch"] and _is_array_api_array(X):
        xp = array_namespace(X)
        if not is_numpy_namespace(xp):
            return _dispatched_backend(X, xp, device, array_api_solver)
    if device == "cpu" or (device == "auto" and not array_api_solver):
        return NUMPY_BACKEND
    if not array_api_solver:
        raise ValueError(
            f"device={device!r}: this solver runs on the CPU only (it is not "
            "written against the array API); use device='cpu' or a solver that "
            "supports GPUs."
        )
    if device == "auto":
        try:
            torch = _import_torch("device='auto'")
        except ImportError:
            return NUMPY_BACKEND
        if not torch.cuda.is_available():
            return NUMPY_BACKEND
    else:
        torch = _import_torch("device='cuda'")
        if not torch.cuda.is_available():
            raise ValueError(
                "device='cuda' but PyTorch sees no CUDA device "
                "(torch.cuda.is_available() is False). Use device='cpu' or "
                "'auto', or install a CUDA build of PyTorch."
            )
    import array_api_compat.torch as xp_torch

    return ArrayBackend(xp_torch, torch.device("cuda", torch.cuda.current_device()), np)


def _dispatched_backend(X, xp, device, array_api_solver):
    if not _import_array_api_compat("Non-numpy input").is_torch_namespace(xp):
        # The estimators index rows and columns as numpy and torch do
        # (``X[::step]``, ``X[rows]``); the standard leaves such indexing
        # undefined, and stricter namespaces (array-api-strict) fail mid-fit.
        raise ValueError(
            f"array_api_dispatch is on and X lives in {xp.__name__}, but the "
            "estimators run under dispatch in PyTorch only. Pass torch tensors, "
            "or numpy arrays (for instance with np.asarray(X))."
        )
    if not array_api_solver:
        raise ValueError(
            f"array_api_dispatch is on and X lives in {xp.__name__}, but this "
            "solver supports numpy input only. Pass numpy arrays, or choose a "
            "solver written against the array API."
        )
    x_device = device_of(X)
    if device != "auto" and not _device_type(x_device).startswith(device):
        raise ValueError(
            f"device={device!r} but X is on {x_device}: with array_api_dispatch "
            "the fit runs where X lives. Pass device='auto' to follow X, or move "
            "X first."
        )
    return ArrayBackend(xp, x_device, xp)
