# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Silo ids, per-silo budgets and server weights: validation of public metadata.

Everything here is deployment metadata treated as public (as ``n`` is in
central DP-SGD): which silo a row belongs to, each silo's size ``n_i``, its
budget and its weight. The functions only check and normalize it; they
never read features or labels.
"""

import math
import sys
from collections.abc import Mapping

import numpy as np

from ..preprocessing._categories import MISSING, key_of

__all__ = [
    "check_silo_delta",
    "check_silo_size",
    "normalized_weights",
    "per_silo_budget",
    "resolve_server_weights",
    "split_by_silo",
]


def split_by_silo(silos, n_samples):
    """Validate ``silos`` and return ``(silo_ids, row_indices)``.

    Parameters
    ----------
    silos : array-like of shape (n_samples,)
        Silo id of every row.
    n_samples : int
        Number of rows of ``X``.

    Returns
    -------
    silo_ids : list
        The distinct silo ids, sorted, as Python scalars.
    row_indices : list of ndarray
        The rows of each silo, in the order of ``silo_ids``.
    """
    ids_given = silos
    silos = np.asarray(ids_given)
    if silos.dtype.kind in "US" and not isinstance(ids_given, np.ndarray):
        # numpy reads a list of numbers and strings as strings: silos 1 and
        # "1" would merge into one. Read as objects, such ids are refused
        # below, as they are in an object array.
        as_objects = np.asarray(ids_given, dtype=object)
        if as_objects.ndim == 1 and not all(
            isinstance(s, (str, bytes)) for s in as_objects
        ):
            silos = as_objects
    if silos.ndim != 1 or silos.shape[0] != n_samples:
        raise ValueError(
            "silos must be a 1-d array with one silo id per row of X: got shape "
            f"{silos.shape} for X with {n_samples} rows."
        )
    # Floats' and complex numbers' NaN, datetimes' and timedeltas' NaT: a
    # missing id read as a value would make its rows one silo.
    if silos.dtype.kind in "fcmM" and np.isnan(silos).any():
        missing = "NaT" if silos.dtype.kind in "mM" else "NaN"
        raise ValueError(f"silos contains {missing}; every row needs a silo id.")
    # None, NaN and pandas' NA (whose truth value raises) alike.
    if silos.dtype.kind == "O" and any(key_of(s) is MISSING for s in silos):
        raise ValueError("silos contains missing ids; every row needs a silo id.")
    try:
        ids, inverse = np.unique(silos, return_inverse=True)
    except TypeError as exc:
        raise TypeError(
            "silos: silo ids must be mutually comparable (all numbers or all "
            "strings)."
        ) from exc
    order = np.argsort(inverse, kind="stable")
    bounds = np.cumsum(np.bincount(inverse, minlength=ids.size))[:-1]
    return ids.tolist(), np.split(order, bounds)


def per_silo_budget(value, silo_ids, *, name, kind):
    """Map a scalar or a mapping to one budget value per silo.

    Parameters
    ----------
    value : float or Mapping
        A budget for every silo, or a mapping from silo id to budget. Keys
        for silos absent from the data are ignored (a silo may be missing
        from a cross-validation fold).
    silo_ids : list
        The silos of the fit.
    name : str
        Parameter name, for error messages.
    kind : {"epsilon", "delta"}
        Which range to enforce: ``(0, inf]`` or ``(0, 1)``.

    Returns
    -------
    budgets : dict
        Silo id to float, in the order of ``silo_ids``.
    """
    if isinstance(value, Mapping):
        missing = [s for s in silo_ids if s not in value]
        if missing:
            raise ValueError(
                f"{name} is a mapping without an entry for silos {missing[:10]}; "
                "give every silo a budget (or pass a scalar)."
            )
        budgets = {s: value[s] for s in silo_ids}
    else:
        budgets = {s: value for s in silo_ids}
    for silo, b in budgets.items():
        ok = isinstance(b, (int, float, np.number)) and not isinstance(b, bool)
        # An int beyond the largest float has no float budget (float(b)
        # raised OverflowError).
        ok = ok and not (isinstance(b, int) and abs(b) > sys.float_info.max)
        if ok and kind == "epsilon":
            ok = b > 0
        elif ok:
            ok = 0 < b < 1
        if not ok:
            rng = "a float > 0 (or inf)" if kind == "epsilon" else "a float in (0, 1)"
            raise ValueError(f"{name} of silo {silo!r} must be {rng}; got {b!r}.")
        budgets[silo] = float(b)
    return budgets


def resolve_server_weights(server_weights, silo_sizes):
    """Public aggregation weights ``p_i``, normalized to sum to one.

    Parameters
    ----------
    server_weights : {"uniform", "size"} or Mapping
        "uniform" is ``1/N`` (the thesis's default); "size" is
        ``n_i / n`` (silo sizes are public metadata); a mapping gives a
        positive weight to every silo.
    silo_sizes : dict
        Silo id to number of rows.

    Returns
    -------
    weights : dict
        Silo id to weight, in the order of ``silo_sizes``.
    """
    ids = list(silo_sizes)
    if isinstance(server_weights, Mapping):
        missing = [s for s in ids if s not in server_weights]
        if missing:
            raise ValueError(
                "server_weights is a mapping without an entry for silos "
                f"{missing[:10]}."
            )
        raw = {s: server_weights[s] for s in ids}
        bad = {
            s: w
            for s, w in raw.items()
            if isinstance(w, bool)
            or not isinstance(w, (int, float, np.number))
            or not 0 < w < math.inf
        }
        if bad:
            raise ValueError(f"server_weights must be positive and finite; got {bad}.")
    elif server_weights == "uniform":
        raw = dict.fromkeys(ids, 1.0)
    elif server_weights == "size":
        raw = {s: float(silo_sizes[s]) for s in ids}
    else:
        raise ValueError(
            "server_weights must be 'uniform', 'size' or a mapping; got "
            f"{server_weights!r}."
        )
    return normalized_weights(raw)


def normalized_weights(weights):
    """Positive finite weights divided by their sum.

    The weights are first divided by the power of two of the largest one, so
    that their sum cannot overflow (two weights of ``1e308`` sum past the
    largest float): each scaled weight is at most 2 and their sum at most
    ``2 N``. Dividing by a power of two is exact for normal floats, so
    weights whose sum does not overflow normalize to the same floats as
    without the scaling, but for normalized weights in the subnormal range
    (below ``2.2e-308``), which may round differently.

    Parameters
    ----------
    weights : Mapping
        Silo id to a positive finite weight; at least one silo.

    Returns
    -------
    weights : dict
        Silo id to weight, in the order of ``weights``, summing to one.

    Examples
    --------
    >>> from sklearn_dpfair.federated._silos import normalized_weights
    >>> normalized_weights({"a": 1e308, "b": 1e308})
    {'a': 0.5, 'b': 0.5}
    >>> normalized_weights({"a": 1, "b": 3})
    {'a': 0.25, 'b': 0.75}
    """
    values = {s: float(w) for s, w in weights.items()}
    # largest = m * 2**e with m in [0.5, 1): scaled, it lies in [1, 2).
    _, exponent = math.frexp(max(values.values()))
    scaled = {s: math.ldexp(w, 1 - exponent) for s, w in values.items()}
    total = math.fsum(scaled.values())
    return {s: w / total for s, w in scaled.items()}


def check_silo_delta(silo_id, n_rows, delta, *, private=True):
    """Refuse a silo's ``delta`` unless it is below ``1 / n_i``.

    A delta of ``1 / n_i`` or more lets a mechanism publish one of the
    silo's ``n_i`` records outright, so the silo's ISRL-DP guarantee would
    be void. (Central fits only warn; a silo is refused because its budget
    is a promise made to that silo's records.) The larger the silo, the
    smaller its delta must be. A silo that releases nothing private
    (``private=False``: epsilon ``inf`` and no noise) promises nothing, so
    its delta is not checked.

    Parameters
    ----------
    silo_id : object
        The silo, for the error message.
    n_rows : int
        Number of records of the silo (public metadata).
    delta : float
        The silo's delta (``silo_delta``, or the fit's ``delta``).
    private : bool, default=True
        Whether the silo's messages carry a privacy guarantee.

    Examples
    --------
    >>> from sklearn_dpfair.federated._silos import check_silo_delta
    >>> check_silo_delta("a", 100_000, 1e-6)
    >>> check_silo_delta("a", 100_000, 1e-5, private=False)
    >>> check_silo_delta("a", 100_000, 1e-5)
    Traceback (most recent call last):
    ...
    ValueError: silo 'a' has 100000 rows, too many for its silo_delta=1e-05: ...
    """
    if private and delta * n_rows >= 1.0:
        raise ValueError(
            f"silo {silo_id!r} has {n_rows} rows, too many for its "
            f"silo_delta={delta:g}: ISRL-DP needs each silo's delta well below "
            f"1/n_i = {1 / n_rows:.3g}, otherwise a silo may reveal a record "
            "outright. Lower silo_delta for this silo (or delta, which is "
            "every silo's when silo_delta is None)."
        )


# q = batch_size / n is rounded, and so is q * n_i: an expected batch of
# exactly one record (batch_size 2 over 98 rows, 49 in the silo) computes as
# 0.9999999999999999. Both roundings together are within a few ulps of 1.
_ONE_RECORD = 1.0 - 8 * sys.float_info.epsilon


def check_silo_size(silo_id, n_rows, delta, sampling_probability, *, private=True):
    """Refuse a silo whose size does not fit its delta or its sampling rate.

    Two conditions, both on public quantities:

    * ``delta_i < 1 / n_i`` for a private silo (:func:`check_silo_delta`).
    * ``q n_i >= 1`` for a private silo: a silo whose expected batch holds
      less than one record sends messages that are almost pure noise. The
      product is compared with a few ulps of slack, so that the rounding of
      ``q = batch_size / n`` does not refuse an expected batch of exactly
      one record. A silo that releases nothing sends noiseless (unbiased)
      messages at any rate, so that a non-private reference fit runs on the
      same silos.

    Parameters
    ----------
    silo_id : object
        The silo, for the error message.
    n_rows : int
        Number of records of the silo.
    delta : float
        The silo's delta.
    sampling_probability : float
        The Poisson sampling rate of the run.
    private : bool, default=True
        Whether the silo's messages carry a privacy guarantee (epsilon
        finite or a noise multiplier); a silo that releases nothing private
        has no delta to check, and no noise to drown its messages in.
    """
    check_silo_delta(silo_id, n_rows, delta, private=private)
    if private and sampling_probability * n_rows < _ONE_RECORD:
        if sampling_probability * sys.float_info.max < _ONE_RECORD:
            # A rate below 1 / float max asks for more rows than a float counts.
            hint = "; at this rate a silo needs more rows than a float can count"
        else:
            needed = _ONE_RECORD / sampling_probability
            needed = math.ceil(needed) if needed < 2**53 else f"{needed:.3g}"
            hint = f"; at this rate a silo needs at least {needed} rows"
        raise ValueError(
            f"silo {silo_id!r} has {n_rows} rows, too few for the sampling rate "
            f"q={sampling_probability:.3g}: its expected batch q * n_i is below "
            f"one record{hint}. Raise batch_size or merge the silo with another."
        )

