# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Row blocks of a sparse design matrix, so that per-row temporaries stay small.

A sparse (CSR) matrix may hold about one stored entry per row (~16 bytes
per row in float64); one float64 temporary per row (residuals, clip
factors, predictions) then weighs half the matrix, and a pass that held
several at once would need many times its storage. Full passes over a
sparse ``X`` (a full-batch gradient, the public statistics, a private
mean) therefore read it in blocks of rows that share its stored entries
(:func:`row_block`; :func:`block_rows`: a block's temporaries weigh at most
about a quarter of the storage of ``X``, and a block holds at least
:data:`MIN_BLOCK_ROWS` rows), so that their per-row quantities live one
block at a time. A dense ``X`` is one block (its per-row temporaries are a
``1 / n_features`` fraction of it), so dense results are unchanged bit for
bit. The row norms a run keeps, or recomputes from each block, are the
linear-model layer's (:func:`~sklearn_dpfair._solvers._linear.stored_row_norms`).
"""

import numpy as np
import scipy.sparse as sp

from ..utils._array_api import array_namespace, rows_per_cast, upcast_matmul

__all__ = [
    "MIN_BLOCKS",
    "MIN_BLOCK_ROWS",
    "STORAGE_PER_BLOCK_ROW",
    "batch_block",
    "batch_blocks",
    "block_rows",
    "float64_product",
    "row_block",
    "row_blocks",
    "storage_bytes",
    "take_rows",
]

#: Fewest rows per block of a sparse ``X`` (each block costs a dozen numpy
#: and scipy calls per pass).
MIN_BLOCK_ROWS = 1024

#: Bytes of sparse storage per row of a block: a block's per-row
#: temporaries (at most about eight float64 per row at once) then weigh at
#: most a quarter of the storage of ``X``.
STORAGE_PER_BLOCK_ROW = 256

#: Fewest blocks of a sparse ``X`` of more than :data:`MIN_BLOCK_ROWS`
#: rows: the squares of a block's stored entries (its row norms) then weigh
#: at most about a tenth of the storage of ``X``.
MIN_BLOCKS = 8

def block_rows(X):
    """Rows per block of a sparse ``X``: proportional to its storage.

    A large ``X`` is read in a few large blocks (their number does not grow
    with ``n``): at most an eighth of its rows, at least
    :data:`MIN_BLOCK_ROWS`.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from sklearn_dpfair._solvers._row_blocks import block_rows
    >>> block_rows(sp.csr_matrix((10, 2)))
    1024
    """
    return _rows_per_block(storage_bytes(X), X.shape[0])


def storage_bytes(X):
    """Bytes of a dense ``X``, or of a sparse one's stored entries and indices.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from sklearn_dpfair._solvers._row_blocks import storage_bytes
    >>> storage_bytes(sp.csr_matrix(np.eye(2)))  # 2 float64, 2 + 3 int32
    36
    """
    if sp.issparse(X):
        return sum(
            getattr(X, name).nbytes
            for name in ("data", "indices", "indptr", "row", "col")
            if hasattr(X, name)
        )
    return X.nbytes


def _rows_per_block(storage, n_rows):
    by_storage = storage // STORAGE_PER_BLOCK_ROW
    return max(MIN_BLOCK_ROWS, min(by_storage, -(-n_rows // MIN_BLOCKS)))


def row_blocks(X, rows_per_block=None):
    """Row slices covering ``X``: one for a dense ``X``, blocks for a sparse one.

    ``rows_per_block`` (None: :func:`block_rows` of ``X``) lets a block of
    rows of a larger matrix (the public rows of the fit's ``X``) be read in
    blocks sized for that matrix.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from sklearn_dpfair._solvers._row_blocks import row_blocks
    >>> row_blocks(np.zeros((2500, 2)))
    [slice(0, 2500, None)]
    >>> row_blocks(sp.csr_matrix((2500, 2)))
    [slice(0, 1024, None), slice(1024, 2048, None), slice(2048, 3072, None)]
    """
    n = X.shape[0]
    if not sp.issparse(X):
        return [slice(0, n)]
    rows = block_rows(X) if rows_per_block is None else rows_per_block
    if n <= rows:
        return [slice(0, n)]
    return [slice(start, start + rows) for start in range(0, n, rows)]


def row_block(X, rows):
    """The rows ``rows`` (a slice of :func:`row_blocks`) of ``X``, not copied.

    A dense slice is a view. A CSR block shares the ``data`` and ``indices``
    of ``X`` (only its ``indptr``, one integer per row, is new), where
    ``X[rows]`` would copy them in every step. Whether its entries are in
    canonical form (sorted, no duplicates: what the row norms rely on) is
    that of ``X``, and is declared so, never assumed.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from sklearn_dpfair._solvers._row_blocks import row_block
    >>> X = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 2.0], [3.0, 0.0]]))
    >>> block = row_block(X, slice(1, 3))
    >>> block.toarray()
    array([[0., 2.],
           [3., 0.]])
    >>> np.shares_memory(block.data, X.data)
    True
    """
    if not sp.issparse(X):
        return X[rows]
    start, stop, _ = rows.indices(X.shape[0])
    if (start, stop) == (0, X.shape[0]):
        return X
    if X.format != "csr":
        return X[rows]
    indptr = X.indptr[start : stop + 1]
    first, last = int(indptr[0]), int(indptr[-1])
    # The (data, indices, indptr) constructor would copy views of a much
    # larger array ("pruning"); an empty matrix of the block's shape is
    # given the shared arrays instead.
    block = sp.csr_matrix((stop - start, X.shape[1]), dtype=X.dtype)
    block.data = X.data[first:last]
    block.indices = X.indices[first:last]
    block.indptr = indptr - indptr.dtype.type(first)
    block.has_sorted_indices = X.has_sorted_indices
    block.has_canonical_format = X.has_canonical_format
    return block


def take_rows(X, idx):
    """Rows ``idx`` of a dense array (any namespace) or a CSR matrix.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers._row_blocks import take_rows
    >>> take_rows(np.arange(6.0).reshape(3, 2), np.array([2, 0]))
    array([[4., 5.],
           [0., 1.]])
    """
    if sp.issparse(X):
        rows = X[idx]
        # Whole rows of a canonical matrix (sorted, no duplicates) are
        # canonical: said once here rather than checked again by every
        # consumer of the batch (an O(nnz) scan each).
        if getattr(X, "has_canonical_format", False):
            rows.has_canonical_format = True
        return rows
    xp = array_namespace(X)
    return xp.take(X, idx, axis=0)


def batch_blocks(X, rows=None):
    """Blocks of the batch ``rows`` of ``X``, each read with :func:`batch_block`.

    ``rows`` is an index array (a batch) or None (every row: the slices of
    :func:`row_blocks`). A sparse ``X``'s batch is cut into index arrays
    sized as :func:`row_blocks` would cut the gathered batch (its storage
    taken pro rata from that of ``X``), so a large batch is gathered one
    block at a time, never whole; a dense ``X``'s batch is one block, so
    dense results do not change.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from sklearn_dpfair._solvers._row_blocks import batch_blocks
    >>> [b.tolist() for b in batch_blocks(np.zeros((4, 2)), np.array([3, 1]))]
    [[3, 1]]
    >>> [len(b) for b in batch_blocks(sp.csr_matrix((5000, 2)), np.arange(2500))]
    [1024, 1024, 452]
    """
    if rows is None:
        return row_blocks(X)
    rows = np.asarray(rows)
    n_rows = rows.shape[0]
    if not sp.issparse(X):
        return [rows]
    size = _rows_per_block(storage_bytes(X) * n_rows // max(X.shape[0], 1), n_rows)
    return [rows[start : start + size] for start in range(0, max(n_rows, 1), size)]


def batch_block(X, part):
    """The rows ``part`` of ``X``: a shared :func:`row_block` for a slice,
    gathered rows for an index array (see :func:`batch_blocks`).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers._row_blocks import batch_block
    >>> batch_block(np.arange(6.0).reshape(3, 2), slice(1, 2))
    array([[2., 3.]])
    """
    if isinstance(part, slice):
        return row_block(X, part)
    return take_rows(X, part) if sp.issparse(X) else X[part]


def float64_product(X, B, *, transpose_a=False):
    """``X @ B`` (or ``X.T @ B``) in float64, without a float64 copy of ``X``.

    A float64 ``X`` (dense or sparse) is multiplied as is. A lower-precision
    one (float32 rows meeting the float64 parameters, which numpy and scipy
    would promote whole) is cast a block of rows at a time: a dense ``X``
    by :func:`~sklearn_dpfair.utils._array_api.upcast_matmul`, a sparse one
    by blocks that share its stored entries (:func:`row_block`), each cast
    alone. Each row's product is that of its float64 copy; a transposed
    product adds its blocks' partial sums in row order.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from sklearn_dpfair._solvers._row_blocks import float64_product
    >>> X = sp.csr_matrix(np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32))
    >>> float64_product(X, np.array([1.0, 0.5]))
    array([2., 5.])
    >>> float64_product(X, np.array([1.0, -1.0]), transpose_a=True)
    array([-2., -2.])
    """
    if X.dtype == np.float64:
        return X.T @ B if transpose_a else X @ B
    B = np.asarray(B, dtype=np.float64)
    if not sp.issparse(X):
        return upcast_matmul(X, B, transpose_a=transpose_a)
    n = X.shape[0]
    step = rows_per_cast(X.shape[1])
    if transpose_a:
        out = np.zeros((X.shape[1],) + B.shape[1:])
        for start in range(0, n, step):
            part = slice(start, start + step)
            out += np.asarray(row_block(X, part).astype(np.float64).T @ B[part])
        return out
    out = np.empty((n,) + B.shape[1:])
    for start in range(0, n, step):
        part = slice(start, start + step)
        out[part] = np.asarray(row_block(X, part).astype(np.float64) @ B)
    return out
