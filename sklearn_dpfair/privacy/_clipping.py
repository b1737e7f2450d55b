# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The clip factor of per-example terms, from their norms only.

``min(1, C / ||z||)`` for a vector of norms (:func:`clip_factors_from_norms`)
and the margin that keeps terms computed in lower precision inside ``C``
(:func:`clip_margin`). The privacy core never receives ``X``: the row
layer (:mod:`sklearn_dpfair._solvers._rows`) computes the norms of rows and
of rank-one per-example terms, overflow-safe and dense or sparse, and calls
these.

Exact in the working precision. When a clipped term is computed from
float32 values its bound is shrunk to ``C (1 - 2 eps)`` (``eps = 2^-23`` of
float32, :func:`clip_margin`), which absorbs the float32 roundings left,
less than ``2 eps`` relative together (a float32 row norm's final ``+ s^2``
and square root, ``0.75 eps``; a factor stored in float32 and the product
of a row rounded back to float32, ``0.5 eps`` each), so the float64 norm of
every clipped float32 term is at most ``C``. Float64 terms keep the plain
factors ``min(1, C / ||z||)`` bit for bit (their rounding is ``1e-16``
relative). A norm that is ``inf`` or ``nan`` gets the factor 0: a record
whose contribution could not be computed contributes nothing, a fixed
data-independent value. So does a norm so large that ``C / norm`` is below
the smallest normal number of the factors' dtype (float32 norms near
``3e38 C``): a subnormal factor keeps too few digits for the margin (up to
100% off), and a smaller factor is always within the bound.
"""

import numpy as np

from ..utils._array_api import array_namespace

__all__ = ["clip_factors_from_norms", "clip_margin"]


#: The clip bound of a term computed from lower-precision values is
#: ``C (1 - CLIP_MARGIN_EPS eps)``, ``eps`` the machine epsilon of the
#: narrowest dtype (see the module docstring).
CLIP_MARGIN_EPS = 2


def clip_margin(*like):
    """``1 - 2 eps`` of the narrowest dtype below float64 among ``like``, else 1.0.

    The factor on a clip bound that keeps terms computed from
    lower-precision values inside the bound after their last roundings
    (float32: ``1 - 2.4e-7``). 1.0 when every dtype is float64, so float64
    clipping is unchanged.

    Parameters
    ----------
    *like : arrays (any namespace, or sparse) or numpy dtypes
        What the clipped terms are computed from.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.privacy._clipping import clip_margin
    >>> clip_margin(np.float64), clip_margin(np.ones(2, np.float32)) < 1.0
    (1.0, True)
    """
    eps = 0.0
    for item in like:
        info = _finfo(item)
        if info.bits < 64:
            eps = max(eps, float(info.eps))
    return 1.0 - CLIP_MARGIN_EPS * eps


def _finfo(item):
    # finfo of a numpy dtype, or of an array's dtype in its own namespace.
    if isinstance(item, (np.dtype, type)):
        return np.finfo(item)
    if isinstance(item.dtype, np.dtype):
        return np.finfo(item.dtype)
    return array_namespace(item).finfo(item.dtype)


def _is_narrow(xp, dtype):
    # A floating dtype below float64 (float32, float16).
    return xp.finfo(dtype).bits < 64


def clip_factors_from_norms(norms, clip_norm, *, margin=None):
    """``min(1, C' / norm)`` for given per-example norms (finite ``C``).

    ``C' = margin C``: by default ``margin = clip_margin(norms)``, 1 for
    float64 norms (``C' = C``) and ``1 - 2 eps`` for lower-precision norms
    (:func:`clip_margin`), so that a term scaled by its factor from those
    values stays within ``C``; a caller whose norms are float64 but whose
    terms are made of lower-precision values passes that margin. Numpy
    lower-precision norms give factors in their own dtype, each computed in
    float64 and rounded once (no n-length float64 copy: with few stored
    entries per row it would outweigh a sparse X); the margin covers that
    rounding. Otherwise the factors are float64.

    Computed as ``C' / max(norm, C')``, which never divides by a tiny number
    (``C / tiny`` overflows for ``C > 1``): it is exactly 1.0 for rows inside
    the ball, 1.0 for a zero norm, and 0 for a norm that is ``inf`` or
    ``nan`` (a record whose contribution could not be computed contributes
    nothing, a fixed data-independent value) or whose factor would be
    subnormal in its dtype (too imprecise for the margin; 0 is within any
    bound).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.privacy._clipping import clip_factors_from_norms
    >>> clip_factors_from_norms(np.array([0.0, 0.5, 4.0, np.inf, np.nan]), 2.0)
    array([1. , 1. , 0.5, 0. , 0. ])
    """
    xp = array_namespace(norms)
    if margin is None:
        margin = clip_margin(norms)
    if margin != 1.0:
        clip_norm = clip_norm * margin
    if xp is np or isinstance(norms, np.ndarray):
        narrow = np.finfo(norms.dtype)
        if norms.dtype != np.float64 and not (
            float(narrow.smallest_normal) <= clip_norm <= float(narrow.max)
        ):
            # C' outside the norms' range would be rounded by the clip below
            # to inf or 0 (every factor 0, with warnings that depend on
            # whether some norm is 0): such rare bounds take the float64
            # path, and the factors are rounded once to the norms' dtype.
            wide = clip_factors_from_norms(
                norms.astype(np.float64), clip_norm, margin=1.0
            )
            factors = wide.astype(norms.dtype)
            factors[~(factors >= narrow.smallest_normal)] = 0.0
            return factors
        # In place: one n-length array (with few stored entries per row,
        # each temporary of n weighs as much as a sparse X); the division
        # in float64 whatever the norms' dtype (cast by buffers).
        factors = np.clip(norms, clip_norm, None)
        np.divide(clip_norm, factors, out=factors, dtype=np.float64)
        if factors.dtype != np.float64:
            # C' rounded to the norms' dtype by the clip may sit below C':
            # a row inside the ball keeps factor 1, not 1 + 2^-24.
            np.minimum(factors, 1.0, out=factors)
        factors[~(factors >= np.finfo(factors.dtype).smallest_normal)] = 0.0
        return factors
    if _is_narrow(xp, norms.dtype):
        norms = xp.astype(norms, xp.float64)
    factors = clip_norm / xp.clip(norms, clip_norm, None)
    usable = factors >= xp.finfo(factors.dtype).smallest_normal
    return xp.where(usable, factors, xp.zeros_like(factors))
