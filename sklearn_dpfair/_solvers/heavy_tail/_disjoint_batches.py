# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Disjoint fixed-size batches for the one-pass heavy-tail solvers.

The privacy of Algorithms 7, 8, 27 and 29 rests on parallel composition:
every row enters at most one noisy query, so replacing one row changes one
query only. Batches are consecutive slices of one data-independent random
permutation, of a fixed public size; the remainder is dropped (the thesis
"throws out samples", which costs only constants).
"""

import numpy as np

__all__ = ["disjoint_batches", "disjoint_blocks"]


def disjoint_batches(rng, n_samples, n_batches, batch_size):
    """Index array of shape ``(n_batches, batch_size)`` with no repeated row.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of the permutation (data independent).
    n_samples : int
        Number of rows (public under replace-one adjacency).
    n_batches, batch_size : int
        Public sizes with ``n_batches * batch_size <= n_samples``.

    Returns
    -------
    batches : ndarray of shape (n_batches, batch_size)

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers.heavy_tail._disjoint_batches import disjoint_batches
    >>> b = disjoint_batches(np.random.default_rng(0), 10, 3, 3)
    >>> b.shape, np.unique(b).size
    ((3, 3), 9)
    """
    if n_batches * batch_size > n_samples or batch_size < 1:
        raise ValueError(
            f"{n_batches} disjoint batches of {batch_size} rows need more than "
            f"the {n_samples} rows available."
        )
    order = rng.permutation(n_samples)[: n_batches * batch_size]
    # Held for the whole run: in the smallest index dtype (the same draws).
    return order.astype(_index_dtype(n_samples)).reshape(n_batches, batch_size)


def _index_dtype(n_samples):
    return np.int32 if n_samples < np.iinfo(np.int32).max else np.int64


def disjoint_blocks(rng, n_samples, sizes):
    """Disjoint index blocks of the given public sizes, from one permutation.

    Parameters
    ----------
    rng : numpy.random.Generator
        Source of the permutation (data independent).
    n_samples : int
        Number of rows.
    sizes : sequence of int
        Block sizes, with ``sum(sizes) <= n_samples``.

    Returns
    -------
    blocks : list of ndarray

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers.heavy_tail._disjoint_batches import disjoint_blocks
    >>> [b.size for b in disjoint_blocks(np.random.default_rng(0), 8, [4, 2, 1])]
    [4, 2, 1]
    """
    sizes = [int(size) for size in sizes]
    if sum(sizes) > n_samples or min(sizes) < 1:
        raise ValueError(
            f"Disjoint blocks of sizes {sizes} need more than the {n_samples} "
            "rows available."
        )
    order = rng.permutation(n_samples)
    ends = np.cumsum(sizes)
    return [order[end - size : end] for size, end in zip(sizes, ends)]
