# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Neighbouring datasets that differ in one canary record.

The audit fits the mechanism on both datasets many times. Which pair is built
must match the neighbouring relation the guarantee is stated for:

* ``"add_remove"``: ``D0 = D`` and ``D1 = D + canary``;
* ``"replace_one"``: ``D0 = D + replacement`` and ``D1 = D + canary``;
* ``"attribute"``: ``D0`` and ``D1`` both hold ``D + canary`` and differ
  only in the canary's value of one per-record fit argument (for instance
  its sensitive attribute), for attribute-level guarantees.
"""

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Dataset", "Neighbours", "make_canary", "make_neighbours"]

#: Neighbouring relations :func:`make_neighbours` can build.
ADJACENCIES = ("add_remove", "replace_one", "attribute")


@dataclass(frozen=True)
class Dataset:
    """Training data of one world: ``X``, ``y`` and per-fit keyword arguments.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Features.
    y : array-like of shape (n_samples,) or None
        Targets.
    fit_params : dict
        Keyword arguments of ``fit`` (per-record ones have one entry per row).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.audit import Dataset
    >>> Dataset(np.zeros((2, 1)), np.array([0, 1])).fit_params
    {}
    """

    X: object
    y: object
    fit_params: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Neighbours:
    """Two neighbouring datasets and the canary that tells them apart.

    Parameters
    ----------
    without : Dataset
        World 0 (canary absent, replaced, or with its original attribute).
    with_canary : Dataset
        World 1 (canary present, or with its changed attribute).
    canary_X : ndarray of shape (1, n_features)
        The canary's features (what an auditor queries the model at).
    canary_y : object
        The canary's target.
    adjacency : {"add_remove", "replace_one", "attribute"}
        The neighbouring relation of the pair.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.audit import make_neighbours
    >>> nb = make_neighbours(np.zeros((3, 2)), np.array([0, 1, 0]),
    ...                      canary=(np.ones(2), 1))
    >>> nb.with_canary.X.shape
    (4, 2)
    """

    without: Dataset
    with_canary: Dataset
    canary_X: np.ndarray
    canary_y: object
    adjacency: str


def _n_rows(a):
    return a.shape[0] if hasattr(a, "shape") else len(a)


def _append_rows(a, rows):
    """Append ``rows`` (same kind as ``a``) to ``a``: numpy or pandas."""
    if hasattr(a, "iloc"):
        import pandas as pd

        return pd.concat([a, rows], ignore_index=True)
    return np.concatenate([np.asarray(a), np.asarray(rows)], axis=0)


def _as_rows_like(a, values):
    """``values`` (one record) shaped like one row of ``a``."""
    if hasattr(a, "iloc"):
        import pandas as pd

        if a.ndim == 2:
            return pd.DataFrame(np.asarray(values).reshape(1, -1), columns=a.columns)
        return pd.Series([values], name=a.name)
    a = np.asarray(a)
    return np.asarray(values, dtype=a.dtype if a.dtype != object else None).reshape(
        (1,) + a.shape[1:]
    )


def _is_per_record(value, n):
    return (
        not isinstance(value, (str, bytes, dict))
        and hasattr(value, "__len__")
        and _n_rows(value) == n
    )


def _world(X, y, fit_params, canary_X, canary_y, canary_fit_params):
    n = _n_rows(X)
    X1 = _append_rows(X, _as_rows_like(X, canary_X))
    y1 = None if y is None else _append_rows(y, _as_rows_like(y, canary_y))
    params = {}
    for name, value in fit_params.items():
        if _is_per_record(value, n):
            if name not in canary_fit_params:
                raise ValueError(
                    f"fit parameter {name!r} has one entry per record: give the "
                    f"canary's value in canary_fit_params[{name!r}]."
                )
            params[name] = _append_rows(
                value, _as_rows_like(value, canary_fit_params[name])
            )
        else:
            params[name] = value
    return Dataset(X1, y1, params)


def make_neighbours(
    X,
    y,
    *,
    canary,
    adjacency="add_remove",
    fit_params=None,
    canary_fit_params=None,
    replacement=None,
    attribute=None,
    alternative_value=None,
):
    """Build two neighbouring datasets that differ in one canary record.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The other records (numpy or pandas).
    y : array-like of shape (n_samples,) or None
        Their targets.
    canary : tuple (canary_X, canary_y)
        The canary's features (one row) and target, e.g. from
        :func:`make_canary`.
    adjacency : {"add_remove", "replace_one", "attribute"}, default="add_remove"
        Neighbouring relation of the guarantee under audit.
    fit_params : dict, default=None
        Keyword arguments of ``fit``. Entries with one value per record (such
        as ``sensitive_features`` or ``public_mask``) get the canary's value
        appended; others are passed unchanged.
    canary_fit_params : dict, default=None
        The canary's value of each per-record fit parameter. Make the canary
        a protected record (for example ``public_mask=False``).
    replacement : tuple (X_row, y_value, fit_params_row), default=None
        For ``"replace_one"``: the record the canary replaces. Default: a copy
        of the first record.
    attribute : str, default=None
        For ``"attribute"``: the per-record fit parameter whose canary value
        differs between the worlds.
    alternative_value : object, default=None
        For ``"attribute"``: the canary's value of ``attribute`` in world 1.

    Returns
    -------
    neighbours : Neighbours
        ``without`` and ``with_canary`` datasets and the canary.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.audit import make_neighbours
    >>> X, y = np.zeros((4, 2)), np.array([0, 1, 0, 1])
    >>> nb = make_neighbours(X, y, canary=(np.array([5.0, 0.0]), 1),
    ...                      adjacency="replace_one")
    >>> nb.without.X.shape, nb.with_canary.X.shape
    ((5, 2), (5, 2))
    """
    if adjacency not in ADJACENCIES:
        raise ValueError(f"adjacency must be one of {ADJACENCIES}, got {adjacency!r}.")
    fit_params = dict(fit_params or {})
    canary_fit_params = dict(canary_fit_params or {})
    canary_X, canary_y = canary
    canary_X = np.asarray(canary_X, dtype=float).reshape(1, -1)
    if canary_X.shape[1] != np.shape(X)[1]:
        raise ValueError(
            f"The canary has {canary_X.shape[1]} features, X has {np.shape(X)[1]}."
        )
    with_canary = _world(X, y, fit_params, canary_X, canary_y, canary_fit_params)
    if adjacency == "add_remove":
        without = Dataset(X, y, fit_params)
    elif adjacency == "replace_one":
        if replacement is None:
            first = {
                k: (v.iloc[0] if hasattr(v, "iloc") else np.asarray(v)[0])
                for k, v in fit_params.items()
                if _is_per_record(v, _n_rows(X))
            }
            row = X.iloc[0].to_numpy() if hasattr(X, "iloc") else np.asarray(X)[0]
            y0 = None if y is None else (y.iloc[0] if hasattr(y, "iloc") else y[0])
            replacement = (row, y0, first)
        r_X, r_y, r_params = replacement
        without = _world(X, y, fit_params, r_X, r_y, dict(r_params or {}))
    else:
        if attribute is None or attribute not in canary_fit_params:
            raise ValueError(
                "adjacency='attribute' needs attribute=<fit parameter name> with "
                "the canary's value in canary_fit_params and alternative_value."
            )
        changed = {**canary_fit_params, attribute: alternative_value}
        without = with_canary
        with_canary = _world(X, y, fit_params, canary_X, canary_y, changed)
    return Neighbours(without, with_canary, canary_X, canary_y, adjacency)


def make_canary(X, y=None, *, scale=10.0, classifier=None):
    """A strong default canary: an outlier along the least-used feature.

    The canary's features are zero except for the feature with the smallest
    mean absolute value, set to ``scale`` times the largest absolute value in
    ``X`` (at least ``scale``). Its gradient then points where no other
    record pushes, so its influence on the model is easy to see; its norm
    exceeds typical clip norms, so clipping must limit it. For classifiers its
    label is the least frequent one, for regressors ``scale`` times the largest
    absolute target. This is a heuristic, not the optimal canary of every
    mechanism; an audit is only as strong as its canary and statistic.

    Auditing is an offline test on data the auditor holds, so reading ``X``
    here is not a privacy leak of any release.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The other records.
    y : array-like of shape (n_samples,), default=None
        Their targets.
    scale : float, default=10.0
        How far out the canary lies, relative to the data's range.
    classifier : bool, default=None
        Whether ``y`` holds labels; None guesses from its dtype (integers,
        booleans and strings are labels).

    Returns
    -------
    canary_X : ndarray of shape (n_features,)
        The canary's features.
    canary_y : object
        Its target.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.audit import make_canary
    >>> X = np.array([[1.0, 0.0], [2.0, 0.1], [1.0, 0.0]])
    >>> make_canary(X, np.array([0, 0, 1]))
    (array([ 0., 20.]), np.int64(1))
    """
    X = np.asarray(X, dtype=float)
    feature = int(np.argmin(np.mean(np.abs(X), axis=0)))
    canary_X = np.zeros(X.shape[1])
    canary_X[feature] = scale * max(1.0, float(np.max(np.abs(X))))
    if y is None:
        return canary_X, None
    y = np.asarray(y)
    if classifier is None:
        classifier = y.dtype.kind in "biuOUS"
    if classifier:
        labels, counts = np.unique(y, return_counts=True)
        return canary_X, labels[int(np.argmin(counts))]
    return canary_X, scale * max(1.0, float(np.max(np.abs(y))))
