# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""What a sample weight means in a private fit: one rule for every solver.

A record is everything a row brings, its weight included: a neighbouring
dataset adds, removes or replaces ``(x_i, y_i, g_i, w_i)`` whole. So no
quantity the privacy analysis treats as fixed may be computed from the
weights of the data being fitted: not a normalizer such as ``mean(w)`` (one
added record of weight ``1e6`` would rescale every other record's term and
move a noisy sum by hundreds of clip norms), not ``max(w)``.

The rule, applied by :func:`fit_weights` and nowhere else:

* **Private fits use the weights as given.** Each weighted per-record term
  is clipped *after* weighting (the clip factor is computed from the norm of
  ``w_i g_i``), so a record's contribution is bounded by the clip norm
  whatever its weight, and every noisy sum is divided by public quantities
  only (the public count ``n`` or the expected batch size ``q n``). A weight
  above 1 can raise a record's term only up to the clip norm; a weight of 0
  zeroes its term in the weighted sums, and in the weighted counts too:
  the noisy label counts, the transformers' private counts and their
  quantile selections count each record ``min(w_i, 1)`` times
  (:func:`counted_weights`), so 0 times. It is still a record: a
  neighbouring dataset adds or removes it, weight and all, and the
  releases that count rows rather than weights (FERMI's private group
  histogram, ``n``) count it once. Uniform weights of 1 are the unweighted
  fit bit for bit; uniform weights ``c != 1`` scale every term by ``c`` (as
  they scale the loss against the penalty in scikit-learn's linear models).
* **Where the analysis bounds a term without clipping it** (the Lipschitz
  constant of output perturbation's weighted loss, a record's share of a
  count), each weight is capped at 1 (:func:`capped_weights`): a record
  never counts for more than an unweighted one.
* **The non-private limit** (``epsilon=inf``) reads nothing private, so it
  keeps scikit-learn's weighted average: weights rescaled to mean 1, under
  which a weight of ``k`` is ``k`` duplicated rows (scikit-learn's
  sample-weight equivalence checks).

The weights themselves are public inputs: a record's weight may not be
computed from private data (for example fairlearn's reweighting from private
labels and groups), or the guarantee does not cover it.
"""

import numpy as np

from ..utils._numeric import public_float

__all__ = ["capped_weights", "counted_weights", "fit_weights"]


def fit_weights(sample_weight, n_samples, *, private):
    """The weights a fit multiplies its per-record terms by.

    Parameters
    ----------
    sample_weight : array-like of shape (n_samples,) or None
        Validated public weights (finite, non-negative, not all zero).
    n_samples : int
        Number of rows of the fit.
    private : bool
        Whether the fit is private. A private fit uses the weights as given
        (nothing is read from them); the non-private limit rescales them to
        mean 1.

    Returns
    -------
    weights : ndarray of shape (n_samples,) or None
        The weights in float64; None when they are all exactly 1 (private)
        or uniform (non-private): the unweighted fit.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.privacy._weights import fit_weights
    >>> fit_weights(np.array([2.0, 2.0, 8.0]), 3, private=True)
    array([2., 2., 8.])
    >>> fit_weights(np.array([2.0, 2.0, 8.0]), 3, private=False)
    array([0.5, 0.5, 2. ])
    >>> fit_weights(np.ones(3), 3, private=True) is None
    True
    >>> fit_weights(np.array([1e308, 1e308, 0.0]), 3, private=False)
    array([1.5, 1.5, 0. ])
    """
    if sample_weight is None:
        return None
    weights = np.asarray(sample_weight, dtype=np.float64)
    if private:
        if np.all(weights == 1.0):
            return None
        return weights
    # Divided by the largest weight first, so that the sum neither overflows
    # (weights near 1e308) nor the ratio does (subnormal weights): the
    # rescaled weights are finite, in [0, n].
    weights = weights / np.max(weights)
    weights *= n_samples / weights.sum()
    if np.all(weights == weights[0]):
        return None
    return weights


def capped_weights(weights, cap=1.0):
    """``min(w_i, cap)``: a record's weight bounded by a public constant.

    For the analyses that bound a weighted term without clipping it (a
    weighted loss's Lipschitz constant, a record's share of a count): with
    the cap at 1, a weighted record is bounded as an unweighted one.

    Parameters
    ----------
    weights : ndarray of shape (n_samples,) or None
        Non-negative weights (:func:`fit_weights`).
    cap : float, default=1.0
        Public upper bound of each weight, a number in ``[0, inf]``.

    Returns
    -------
    capped : ndarray of shape (n_samples,) or None
        A new array (None stays None).

    Raises
    ------
    TypeError
        If ``cap`` is not a real number (a bool, a string).
    ValueError
        If ``cap`` is NaN, negative or an int beyond the largest float.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.privacy._weights import capped_weights
    >>> capped_weights(np.array([0.5, 1.0, 1e6]))
    array([0.5, 1. , 1. ])
    """
    # A NaN cap made every weight NaN (np.minimum propagates it), and a
    # negative one negative weights: neither bounds a record's share.
    # public_float refuses bools and names an int beyond the largest float,
    # which np.minimum would raise OverflowError on.
    value = public_float(cap, "cap")
    if not value >= 0:
        raise ValueError(f"cap must be a number in [0, inf], got {cap!r}.")
    if weights is None:
        return None
    return np.minimum(weights, value)


def counted_weights(sample_weight, *, private):
    """How much each row counts in a transformer's private counts and sums.

    A private release of counts and (clipped, bounded) sums bounds each
    record's share without clipping it, so each weight is capped at 1
    (:func:`capped_weights`): a record counts at most once, whatever its
    weight, and the release's sensitivity is that of the unweighted one.
    Statistics are then ratios of two weighted releases (a weighted mean is
    a weighted sum over a weighted count), never divided by a total weight
    read from the data. Without privacy the weights count as given, as in
    scikit-learn's weighted statistics; there uniform weights are the
    unweighted fit (the ratios do not depend on their scale).

    Parameters
    ----------
    sample_weight : ndarray of shape (n_samples,) or None
        Validated public weights (finite, non-negative, not all zero).
    private : bool
        Whether the counts are released under privacy.

    Returns
    -------
    weights : ndarray of shape (n_samples,) or None
        None when every row counts once (all weights 1 under privacy,
        uniform weights without it).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.privacy._weights import counted_weights
    >>> counted_weights(np.array([0.5, 3.0, 0.0]), private=True)
    array([0.5, 1. , 0. ])
    >>> counted_weights(np.array([0.5, 3.0, 0.0]), private=False)
    array([0.5, 3. , 0. ])
    >>> counted_weights(np.array([2.0, 2.0]), private=False) is None
    True
    """
    if sample_weight is None:
        return None
    weights = np.asarray(sample_weight, dtype=np.float64)
    if private:
        weights = capped_weights(weights)
        return None if np.all(weights == 1.0) else weights
    return None if np.all(weights == weights[0]) else weights
