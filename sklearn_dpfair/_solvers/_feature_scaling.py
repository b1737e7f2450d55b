# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Per-column location and scale of raw features, public or private.

Private solvers with a clip norm and a step size chosen from public
constants (DP-SGD) assume columns of unit scale: on raw columns (a year
near 2000, an income in the tens of thousands) the largest column
saturates every clipped gradient and the model learns nothing. This module
maps each column to ``(x - location) / scale`` before the solver runs, and
maps the coefficients back to the user's units afterwards, so the model is
linear in the raw columns. The location and scale are either

* public: the midpoint and half-width of declared ``feature_bounds``
  (no budget spent); or
* private: robust statistics from private quantiles, computed with a
  declared share of the fit's budget inside the same ``dp_event_``. A
  column is located by its private median on a public log-scale grid
  (:data:`~sklearn_dpfair.preprocessing._bounds.AUTO_GRID`, relative
  resolution ~5%) and the private median of the centred column on the same
  grid (so an offset of 500 or 1e5 does not cost resolution), then its
  spread is read from the private quartiles around that location on a
  coarser grid: the scale is the interquartile range over 1.349 (the
  normal's), and at least the location's resolution (and 1) where a
  quartile lands within that resolution of the location (a quarter of the
  rows hold the median's value, as in a binary, one-hot or mostly-zero
  column, or the spread is that narrow, as years 2019 to 2022 are). The
  grid spans +-1e8: values beyond are clipped to it, and a column whose
  released median lies at its edge is scaled by its magnitude, with a
  warning. Every draw picks a bin between grid points, not a grid point,
  so that a value held by most rows is located (the median of a one-hot
  column). Quantiles of
  the exponential mechanism (Smith 2011) are robust: one outlier, or a
  loose public range, cannot move them far.

The quantile machinery (:func:`~sklearn_dpfair.preprocessing._quantiles.column_quantiles`,
its grid and its zCDP accounting) is the one the private transformers use.
"""

import math
from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp

from ..preprocessing._bounds import AUTO_GRID, centre_and_half_width, check_bounds
from ..preprocessing._quantiles import column_quantiles
from ..privacy._accounting import (
    composed_event,
    exponential_mechanism_event,
    exponential_mechanism_rho,
)
from ..privacy._quantile import SIGNED_EDGES, em_epsilon
from ..utils._array_api import to_numpy
from ..utils._validation import warn_at_caller
from ._non_private import column_moments

__all__ = [
    "BOUNDS_DESCRIPTION",
    "EXACT_SCALING_DESCRIPTION",
    "SCALING_SHARE",
    "UNIT_SCALE_LIMIT",
    "UNSCALED_COLUMNS_WARNING",
    "FeatureScaling",
    "ScalingPlan",
    "check_feature_bounds",
    "columns_off_unit_scale",
    "count_beyond_unit_scale",
    "exact_feature_scaling",
    "first_layer_in_user_units",
    "fit_feature_scaling",
    "in_user_units",
    "narrowed_if_finite",
    "off_unit_scale",
    "penalty_in_scaled_units",
    "plan_feature_scaling",
    "proximal_l2_factors",
    "public_feature_scaling",
    "public_scaling_plan",
    "quantiles_resolvable",
    "reach_capped_weights",
    "require_public_bounds",
    "scale_check_step",
    "scaled_columns",
    "warn_sparse_offsets",
    "warn_unscaled_columns",
]

#: The record's phrase for columns mapped by public bounds.
BOUNDS_DESCRIPTION = "columns scaled by the declared feature_bounds (public, no budget)"

#: The record's phrase for columns standardized by a fit that releases nothing.
EXACT_SCALING_DESCRIPTION = (
    "columns standardized by their exact means and standard deviations "
    "(non-private: nothing is released)"
)

#: Default share of the fit's zCDP budget spent on private scales.
SCALING_SHARE = 0.1

# Draws a column: its median, the median of the centred column, and the
# quartiles around the second.
_QUANTILES_PER_COLUMN = 4
# The normal's interquartile range, in standard deviations.
_IQR_SD = 1.3489795003921634
# The spread is drawn on a coarser grid, 5 points a decade (26% bins; the
# noisy histograms' signed edges, and 0) where the location's is 50 (5%):
# between a value held by many rows and its neighbours (40 hours a week,
# and 35 and 45) every bin is as good as the next when a quantile's level
# is near that value's share, and 10 times fewer such bins leave the bin of
# the right answer its chance.
_SPREAD_GRID = np.union1d(SIGNED_EDGES[1:-1], [0.0])


@dataclass(frozen=True)
class ScalingPlan:
    """How a fit scales its columns, fixed before the data is read.

    ``mode`` is ``"none"``, ``"bounds"`` (public) or ``"private"``; for the
    latter ``quantile_rho`` is the zCDP budget of each of the
    ``n_quantiles`` draws and ``event`` their composed event (None
    otherwise).
    """

    mode: str
    n_features: int
    lower: np.ndarray | None = None
    upper: np.ndarray | None = None
    quantile_rho: float = math.inf
    n_quantiles: int = 0
    event: object = None
    share: float = 0.0
    center: bool = True
    #: The neighbouring relation the quantile draws are accounted under.
    adjacency: str = "add_remove"
    #: ``"auto"`` asked for private scales that the public number of rows
    #: and budget cannot resolve (:func:`quantiles_resolvable`): mode
    #: ``"none"``, nothing spent, the columns used as given.
    unaffordable: bool = False

    def describe(self):
        """One phrase for the privacy record."""
        if self.mode == "bounds":
            return BOUNDS_DESCRIPTION
        if self.mode == "private":
            return (
                f"columns scaled by private robust statistics: {self.n_quantiles} "
                "private quantiles (exponential mechanism on a public grid), "
                f"{self.share:.0%} of the zCDP budget"
            )
        return ""


@dataclass(frozen=True)
class FeatureScaling:
    """The released per-column ``location`` and ``scale`` of a fit."""

    location: np.ndarray
    scale: np.ndarray

    def transform(self, X):
        """``(X - location) / scale`` (a sparse ``X`` has location 0).

        Finite whatever ``X`` holds: a value the map would carry past the
        largest float of ``X``'s dtype (a record far outside public bounds)
        is rounded to that largest float, so the solver's clip then bounds
        its term as it bounds any other.
        """
        if sp.issparse(X):
            with np.errstate(over="ignore"):
                out = X.astype(np.float64) @ sp.diags(1.0 / self.scale)
                out.data = _finite(out.data, X.dtype)
            return out.astype(X.dtype)
        X = to_numpy(X)
        with np.errstate(over="ignore"):
            return _finite((X - self.location) / self.scale, X.dtype)

    def coefficients_in_user_units(self, coef, intercept):
        """Map a model of the scaled columns to the raw ones.

        ``w . (x - m) / s + b = (w / s) . x + (b - (w / s) . m)``.

        Parameters
        ----------
        coef : ndarray of shape (n_outputs, n_features)
        intercept : ndarray of shape (n_outputs,)

        Returns
        -------
        coef, intercept : ndarrays
            In the dtype of ``coef``, or both in float64 where a mapped value
            lies beyond that dtype's largest float (a column declared in units
            of ``1e-39``: ``w / s`` is ``1e39``, past float32), so that no
            parameter is stored as ``inf``; predicting numpy input then
            promotes it to float64, as scikit-learn's models do (under
            array-API dispatch the model is cast to the input's dtype, and
            such a model's predictions on float32 torch input are not
            finite). A value beyond
            float64's range is saturated at its largest float.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn_dpfair._solvers._feature_scaling import FeatureScaling
        >>> scaling = FeatureScaling(np.zeros(1), np.array([1e-39]))
        >>> coef, intercept = scaling.coefficients_in_user_units(
        ...     np.ones((1, 1), dtype=np.float32), np.zeros(1, dtype=np.float32))
        >>> coef.dtype, bool(coef[0, 0] > np.finfo(np.float32).max)
        (dtype('float64'), True)
        """
        dtype = np.asarray(coef).dtype
        # Overflow past float64 is saturated by _finite, silently: a warning
        # would depend on the released model.
        with np.errstate(over="ignore", invalid="ignore"):
            raw = _finite(np.asarray(coef, dtype=np.float64) / self.scale, np.float64)
            shift = _finite(raw @ self.location, np.float64)
            intercept = _finite(np.asarray(intercept, np.float64) - shift, np.float64)
        if not (_fits_in(raw, dtype) and _fits_in(intercept, dtype)):
            # Narrowed, the model would be inf and every prediction NaN.
            dtype = np.float64
        return raw.astype(dtype), intercept.astype(dtype)


def narrowed_if_finite(values, dtype):
    """``values`` cast to ``dtype``, or kept in float64 where that would overflow.

    A released parameter beyond ``dtype``'s largest float would be stored as
    ``inf`` (with a warning that depends on the model) and turn every
    prediction into NaN; predicting numpy input promotes it to the
    parameter's float64 instead.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers._feature_scaling import narrowed_if_finite
    >>> narrowed_if_finite(np.array([1.0]), np.float32).dtype
    dtype('float32')
    >>> narrowed_if_finite(np.array([1e39]), np.float32).dtype
    dtype('float64')
    """
    values = np.asarray(values)
    return values.astype(dtype) if _fits_in(values, dtype) else values


def _fits_in(values, dtype):
    """Whether every (finite) value is within ``dtype``'s largest float."""
    largest = float(np.finfo(dtype).max)
    return values.size == 0 or float(np.max(np.abs(values))) <= largest


def _finite(values, dtype):
    """``values`` in ``dtype``, +-inf rounded to its largest finite float."""
    limit = np.finfo(dtype).max
    return np.clip(values, -limit, limit).astype(dtype, copy=False)


def _bounds_plan(feature_bounds, n_features, center, sparse=False):
    lower, upper = check_bounds(feature_bounds, n_features, name="feature_bounds")
    if sparse:
        warn_sparse_offsets(lower, upper)
    return ScalingPlan(
        "bounds", n_features, np.asarray(lower), np.asarray(upper), center=center
    )


def _listed_positions(positions, name=lambda j: str(int(j))):
    """The first five columns of ``positions`` for a warning ("0, 3, ...")."""
    listed = ", ".join(name(j) for j in positions[:5])
    return listed + (", ..." if positions.size > 5 else "")


def check_feature_bounds(feature_bounds, n_features=None):
    """Validate ``feature_bounds`` (None passes), whatever the fit's privacy.

    Invalid bounds (``lower >= upper``, a bound that is not finite, a wrong
    shape, strings) are refused by every fit alike, not only by a private
    one that maps by them. ``n_features`` None checks all but the number
    of pairs (one pair for all columns, or one a row of a 2-D array).
    Reads parameters only.
    """
    if feature_bounds is None:
        return
    if n_features is None:
        try:
            shape = np.shape(feature_bounds)
        except ValueError:
            # Ragged pairs: check_bounds names the problem.
            shape = ()
        n_features = 1
        if len(shape) == 2:
            if shape[1] != 2:
                # The number of columns is unknown here: the message cannot
                # state the (n_features, 2) shape of X's columns, and a
                # (lower, upper) pair of arrays is the usual mistake.
                raise ValueError(
                    f"feature_bounds must have shape (2,) or (n_features, 2), "
                    f"got {shape}: one (lower, upper) pair per row (for two "
                    "arrays, np.column_stack((lower, upper)))."
                )
            n_features = shape[0]
    check_bounds(feature_bounds, n_features, name="feature_bounds")


def warn_sparse_offsets(lower, upper):
    """Warn where a sparse column's public range lies away from 0.

    Sparse ``X`` is divided by its columns' largest declared magnitudes,
    never centred (centring would densify it), so a column whose declared
    range's midpoint lies farther from 0 than its half-width (values 490 to
    510) keeps its offset and is squashed near a constant. Reads the public
    bounds only.
    """
    centre, half = centre_and_half_width(np.asarray(lower), np.asarray(upper))
    positions = np.flatnonzero(np.abs(centre) > half)
    if positions.size == 0:
        return
    listed = _listed_positions(positions)
    s = "s" if positions.size > 1 else ""
    warn_at_caller(
        f"feature_bounds: the declared range{s} of the sparse column{s} at "
        f"position{s} {listed} lie{'' if s else 's'} away from 0, and sparse X "
        "is divided by the bounds' largest magnitudes but never centred "
        "(centring would densify it): such a column keeps its offset and the "
        "model can lose it. Centre the column yourself (subtract a public value such "
        "as the range's midpoint) and pass X dense, or declare the range of "
        "the centred column."
    )


def plan_feature_scaling(
    mode,
    feature_bounds,
    n_features,
    budget,
    share=SCALING_SHARE,
    *,
    sparse=False,
    fit_intercept=True,
    n_samples=None,
    adjacency="add_remove",
):
    """The :class:`ScalingPlan` of a fit (public inputs only).

    Parameters
    ----------
    mode : {"auto", None}
        "auto": public ``feature_bounds`` when given, else private scales
        under privacy, else none (the non-private limit solves in
        standardized coordinates itself). None: no scaling.
    feature_bounds : array-like of shape (n_features, 2) or None
        Public per-column ``(lower, upper)``.
    n_features : int
    budget : PrivacyBudget
        The fit's budget; ``share`` of its zCDP rho goes to the quantiles.
    share : float, default=SCALING_SHARE
    sparse : bool, default=False
        Whether ``X`` is sparse (a public layout): sparse columns are
        scaled by public bounds only (private quantiles would densify them),
        and ``"auto"`` without ``feature_bounds`` is refused, at every
        budget (``epsilon = inf`` included).
    fit_intercept : bool, default=True
        Without an intercept the columns are scaled but not centred (a
        centred model would need one).
    n_samples : int or None, default=None
        Public number of rows the quantiles read. When given, private
        scales are planned only where the draws can resolve a quantile
        (:func:`quantiles_resolvable`); otherwise the columns are used as
        given and nothing is spent (None: no such check).
    adjacency : {"add_remove", "replace_one"}, default="add_remove"
        The fit's neighbouring relation, which sets the quantile draws'
        utility sensitivity (a replaced record moves a rank by up to 1, an
        added one by ``max(q, 1 - q)``).

    Returns
    -------
    plan : ScalingPlan
    """
    warn_ignored_bounds(mode, feature_bounds)
    if mode is not None:
        # Before any branch on privacy: the non-private limit refuses what a
        # private fit refuses (ignored bounds are checked but not counted).
        check_feature_bounds(feature_bounds, n_features)
        if sparse and feature_bounds is None:
            # Private quantiles are drawn from dense columns only; planning
            # nothing would ignore the request silently. Decided from the
            # layout and the parameters alone, so before the branch on the
            # budget: the non-private limit, and a fit whose small budget
            # releases the intercept only, refuse what a private fit
            # refuses (otherwise n and epsilon would decide it).
            raise ValueError(
                "feature_scaling='auto' on sparse X needs public feature_bounds "
                "(private quantiles are computed for dense X only); pass "
                "feature_bounds, or feature_scaling=None."
            )
    # The non-private limit solves in standardized coordinates itself.
    if mode is None or not budget.is_private:
        return ScalingPlan("none", n_features)
    center = fit_intercept and not sparse
    if feature_bounds is not None:
        return _bounds_plan(feature_bounds, n_features, center, sparse)
    if budget.noise_multiplier is not None:
        raise ValueError(
            "A fixed noise_multiplier cannot be combined with private feature "
            "scales: pass feature_bounds, or feature_scaling=None."
        )
    n_quantiles = _QUANTILES_PER_COLUMN * n_features
    rho = budget.split({"scales": share})["scales"].rho
    # The exponential mechanism is parameterized by epsilon0; its rho is
    # recomputed from it so that the event is exactly what the draws log.
    epsilon0 = em_epsilon(rho / n_quantiles)
    if n_samples is not None and not quantiles_resolvable(n_samples, epsilon0):
        return ScalingPlan("none", n_features, unaffordable=True)
    return ScalingPlan(
        "private",
        n_features,
        quantile_rho=exponential_mechanism_rho(epsilon0),
        n_quantiles=n_quantiles,
        event=composed_event([exponential_mechanism_event(epsilon0, steps=n_quantiles)]),
        share=share,
        center=center,
        adjacency=adjacency,
    )


def public_scaling_plan(
    mode,
    feature_bounds,
    n_features,
    *,
    where,
    fit_intercept=True,
    sparse=False,
    private=True,
):
    """The :class:`ScalingPlan` of a fit that takes public bounds only.

    Federated silos, Dask partitions and the full-batch solvers
    (dp-newton, output perturbation, Frank-Wolfe) scale their columns by
    the declared ``feature_bounds`` only: the map is public (midpoint and
    half-width), reads no data and spends no budget, so every silo, every
    partition and every pass applies the same map and the fit's event is
    that of the unscaled fit. Private scales would need a distributed
    private quantile (or one inside the full-batch solver's accounting),
    which is not built: ``"auto"`` without bounds is refused.

    Parameters
    ----------
    mode : {"auto", None}
    feature_bounds : array-like of shape (n_features, 2) or None
    n_features : int
    where : str
        The fit path, for the refusal's message (e.g. ``"silos="``).
    fit_intercept : bool, default=True
        Without an intercept the columns are scaled but not centred.
    sparse : bool, default=False
        Whether ``X`` is sparse (scaled, never centred: it stays sparse).
    private : bool, default=True
        False for a non-private limit that solves exactly on any columns'
        scales: nothing is mapped there, as :func:`plan_feature_scaling`
        maps nothing (the refusal still applies: it reads parameters only).

    Returns
    -------
    plan : ScalingPlan
        Of mode ``"none"`` or ``"bounds"``.

    Raises
    ------
    ValueError
        If ``mode="auto"`` and ``feature_bounds`` is None.

    Examples
    --------
    >>> from sklearn_dpfair._solvers._feature_scaling import public_scaling_plan
    >>> plan = public_scaling_plan("auto", [(0, 1000), (-1, 1)], 2, where="silos=")
    >>> plan.mode, plan.event
    ('bounds', None)
    """
    require_public_bounds(mode, feature_bounds, where)
    warn_ignored_bounds(mode, feature_bounds)
    if mode is not None:
        check_feature_bounds(feature_bounds, n_features)
    if mode is None or not private:
        return ScalingPlan("none", n_features)
    return _bounds_plan(
        feature_bounds, n_features, fit_intercept and not sparse, sparse
    )


def warn_ignored_bounds(mode, feature_bounds):
    """Warn that ``feature_bounds`` without ``feature_scaling="auto"`` maps nothing.

    Reads parameters only: the warning says nothing about the data. Also
    validates ``feature_bounds`` (:func:`check_feature_bounds`, all but the
    number of pairs), so that every fit, private or not, refuses invalid
    bounds.
    """
    check_feature_bounds(feature_bounds)
    if mode is None and feature_bounds is not None:
        warn_at_caller(
            "feature_bounds is ignored with feature_scaling=None: the declared "
            "ranges map the columns only with feature_scaling='auto'. Pass "
            "feature_scaling='auto' to use them (the map is public and spends "
            "no budget), or drop feature_bounds."
        )


def require_public_bounds(mode, feature_bounds, where):
    """Refuse ``feature_scaling="auto"`` without ``feature_bounds`` on ``where``.

    Reads parameters only (see :func:`public_scaling_plan`); ``where`` None
    (a central in-memory DP-SGD fit, which can draw private scales) accepts
    anything.
    """
    if where is not None and mode is not None and feature_bounds is None:
        raise ValueError(
            f"feature_scaling='auto' with {where} needs public feature_bounds: "
            "private column scales are drawn by central in-memory "
            "solver='dp-sgd' fits only. Pass feature_bounds=[(lower, upper), "
            "...] (one public range a column; the map spends no budget), or "
            "feature_scaling=None."
        )


# A column more than a quarter of whose values lie beyond this (its upper
# quartile of |x| above it) is far from the unit scale that DP-SGD's and
# noisy SGDA's public clip norm and step size assume. On logistic data with
# five N(0, 1) columns (n = 5,000, epsilon = 1, 3 seeds, training accuracy
# 0.814), the defaults of DPLogisticRegression and DPFERMIClassifier lost
# 0.003 to 0.006 to one column offset by 3 (upper quartile of |x| 3.7),
# 0.028 to 0.057 to an offset of 5 (5.7) and 0.10 to 0.31 to an offset of
# 50; a column multiplied by 5 (5.8) lost nothing, by 10 0.005, by 20 0.02
# to 0.04. Standardized columns have 1.15; 0/1 indicators at most 1. A
# count, not a mean: one record, however large, moves it by one.
UNIT_SCALE_LIMIT = 5.0

# The check reads at most this many rows, evenly spaced (in every partition
# of a Dask collection alike): an input check costs a small fraction of a
# pass whatever n.
_SCALE_CHECK_ROWS = 10_000

#: The start of :func:`warn_unscaled_columns`' text, for
#: :func:`~sklearn_dpfair.utils._validation.suppressed_warnings`.
UNSCALED_COLUMNS_WARNING = r"\w+: in .+ of X more than a quarter of the values"

_UNSCALED_COLUMNS = (
    "{name}: in {which} of X more than a quarter of the values lie beyond "
    "+-{threshold:g}, and feature_scaling={setting} trains on the columns as "
    "given{why}. The private solver's public clip norm and step size assume "
    "columns of unit scale: on raw columns (ages, incomes, years) the model "
    "can stay near the constant. Pass {remedy}, or scale the columns inside "
    "make_private_pipeline (DPStandardScaler). This check reads the training "
    "rows before the fit: like every input check, it is outside the "
    "guarantee, and it shows no value."
)
# Without scaling; with "auto" where private scales are unaffordable.
_UNSCALED_CASES = {
    False: dict(
        setting="None",
        why="",
        remedy=(
            "feature_scaling='auto' (private column statistics from 10% of the "
            "budget, composed into the same dp_event_; with feature_bounds="
            "[(lower, upper), ...], a public map at no cost)"
        ),
    ),
    True: dict(
        setting="'auto'",
        why=(
            ": at this number of rows and epsilon its private column "
            "statistics would be noise (a public rule of n, epsilon and the "
            "number of columns), so none were drawn"
        ),
        remedy="feature_bounds=[(lower, upper), ...] (a public map at no cost)",
    ),
}


def count_beyond_unit_scale(X, threshold=UNIT_SCALE_LIMIT):
    """Per column, the number of rows whose ``|x|`` exceeds ``threshold``.

    Counts of disjoint row blocks (a Dask collection's partitions) add up to
    the whole's.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers._feature_scaling import count_beyond_unit_scale
    >>> count_beyond_unit_scale(np.array([[0.5, 2000.0], [-7.0, 1990.0]])).tolist()
    [1, 2]
    """
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        beyond = np.abs(X.data) > threshold
        return np.bincount(X.indices[beyond], minlength=X.shape[1])
    # A boolean sum: count_nonzero along an axis is ten times slower.
    return (np.abs(np.asarray(to_numpy(X))) > threshold).sum(axis=0)


def scale_check_step(n_samples):
    """Row stride of the scale check: at most 10,000 rows of ``n_samples`` read."""
    return max(1, -(-int(n_samples) // _SCALE_CHECK_ROWS))


def off_unit_scale(counts, n_rows):
    """Positions of the columns more than a quarter of whose ``n_rows`` rows
    lie beyond the limit (``counts`` from :func:`count_beyond_unit_scale`)."""
    return np.flatnonzero(4 * np.asarray(counts) > n_rows)


def columns_off_unit_scale(X, threshold=UNIT_SCALE_LIMIT):
    """Columns more than a quarter of whose values lie beyond ``threshold``.

    Read on at most 10,000 evenly spaced rows (an input check, not a
    release: see :func:`warn_unscaled_columns`).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers._feature_scaling import columns_off_unit_scale
    >>> X = np.column_stack([np.linspace(-1, 1, 50), np.linspace(1990, 2010, 50)])
    >>> columns_off_unit_scale(X).tolist()
    [1]
    """
    rows = X[:: scale_check_step(X.shape[0])]
    return off_unit_scale(count_beyond_unit_scale(rows, threshold), rows.shape[0])


def warn_unscaled_columns(
    X, estimator, private, *, scaling=None, off_scale=columns_off_unit_scale
):
    """Warn when a private fit would train on columns far from unit scale.

    Only for a ``private`` fit (its budget's ``is_private``; a federation
    passes whether any silo is private, a Dask fit its data's ``private``)
    whose columns are not scaled: ``scaling``, the fit's
    :class:`ScalingPlan`, of mode ``"none"`` (``feature_scaling=None``, or
    ``"auto"`` where private scales are unaffordable, which the message
    says); without a plan (fits that scale by public bounds only, where
    ``"auto"`` always maps), ``feature_scaling=None``. The caller calls it
    where the fit trains a model on ``X`` as given. ``off_scale(X)`` gives
    the columns (:func:`columns_off_unit_scale`; a distributed fit passes
    its own count over the partitions). Names them (by
    ``feature_names_in_`` when the estimator has them, else by position; at
    most five) and the remedies. It reads the training rows before any
    release, as the other input checks do, and so is outside the guarantee,
    as the privacy record says of every input check; it shows no value. A
    :class:`~sklearn_dpfair.pipeline.PrivatePipeline` drops it
    (:data:`UNSCALED_COLUMNS_WARNING`) where its final step reads the rows
    after an earlier step's release.
    """
    if scaling is None:
        scaled = estimator.feature_scaling is not None
    else:
        scaled = scaling.mode != "none"
    if scaled or not private:
        return
    positions = off_scale(X)
    if positions.size == 0:
        return
    names = getattr(estimator, "feature_names_in_", None)
    if names is not None:
        listed = _listed_positions(positions, lambda j: repr(str(names[j])))
    else:
        listed = "at position" + ("s " if positions.size > 1 else " ")
        listed += _listed_positions(positions)
    n_features = estimator.n_features_in_
    which = (
        f"the column {listed}"
        if positions.size == 1
        else f"{positions.size} of the {n_features} columns ({listed})"
    )
    unaffordable = scaling is not None and scaling.unaffordable
    warn_at_caller(
        _UNSCALED_COLUMNS.format(
            name=type(estimator).__name__,
            which=which,
            threshold=UNIT_SCALE_LIMIT,
            **_UNSCALED_CASES[unaffordable],
        )
    )


def exact_feature_scaling(X, sample_weight=None, *, center=True, robust=False):
    """The columns' exact weighted moments as a :class:`FeatureScaling`.

    For fits that release nothing (``epsilon=inf`` without a noise
    multiplier): their step sizes, like the private fits', assume columns on
    a unit scale, and reading the moments costs no budget. Weighted as the
    fit weighs its rows, so that integer weights and repeated rows give the
    same columns. ``center=False`` (no intercept to absorb a shift, or a
    sparse ``X``, which centring would densify) divides by the root mean
    squares and keeps location 0. A constant column keeps the scale 1.
    ``robust``: a column whose standard deviation a few extreme rows
    dominate (:func:`~sklearn_dpfair._solvers.fermi._lbfgs.dominated_column_moments`:
    one record of 1e308 makes it 1e306) takes its median (0 without
    ``center``) and robust scale instead, so that its other rows are not
    all about 0.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers._feature_scaling import exact_feature_scaling
    >>> scaling = exact_feature_scaling(np.array([[1990.0, 1.0], [2010.0, 1.0]]))
    >>> scaling.location.tolist(), scaling.scale.tolist()
    ([2000.0, 1.0], [10.0, 1.0])
    """
    center = center and not sp.issparse(X)
    # On the host: the moments are d numbers, and an array-API X (a torch
    # tensor) is read as the other host-side releases read it.
    X = X if sp.issparse(X) else to_numpy(X)
    moments = column_moments(X, sample_weight, center=center)
    if robust:
        # Imported here: the FERMI solvers import this module.
        from .fermi._lbfgs import dominated_column_moments

        moments = (
            dominated_column_moments(X, *moments, sample_weight, center=center)
            or moments
        )
    return FeatureScaling(*moments)


def reach_capped_weights(X, weights=None):
    """Row weights that keep every row within an exact standardization's reach.

    For the non-private limit of a network fit by gradient steps, on columns
    ``X`` mapped by :func:`exact_feature_scaling` with ``robust=True``. A
    column standardized by its exact weighted moments (weights of mean 1 over
    ``n`` rows) has ``sum_i w_i z_ij^2 = n``, so no row reaches beyond
    ``|z_ij| = sqrt(n / w_i)``. A column scaled robustly has no such bound:
    one record of ``1e4`` in a column of unit normals lies ``1e4`` robust
    units out, where a ReLU does not saturate, so that record's gradient is
    ``1e4`` times any other's and a step the bulk needs makes the fit
    diverge (an MLP's non-private fit scored 0.43 on two classes, or refused
    its step size). Such a row's weight is multiplied by ``sqrt(n / w_i) /
    max_j |z_ij|``: its loss and gradient are then those of a row at the
    bound, as under the exact standard deviation, while the bulk keeps the
    column's robust scale. Where no column is scaled robustly the factor is
    1 for every row, and ``weights`` come back unchanged.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)
        The mapped columns.
    weights : ndarray of shape (n_samples,) or None, default=None
        The fit's weights, of mean 1 (the non-private limit's
        :func:`~sklearn_dpfair.privacy.fit_weights`); None: all 1.

    Returns
    -------
    weights : ndarray of shape (n_samples,) or None
        ``weights`` itself where no row is beyond its reach.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers._feature_scaling import reach_capped_weights
    >>> X = np.zeros((100, 1))
    >>> X[:50, 0], X[50:, 0] = -1.0, 1.0
    >>> reach_capped_weights(X) is None
    True
    >>> X[0, 0] = 1e4  # sqrt(100) / 1e4
    >>> float(reach_capped_weights(X)[0])
    0.001
    """
    n_samples = X.shape[0]
    if sp.issparse(X):
        reach = abs(X).max(axis=1).toarray().ravel().astype(np.float64)
    else:
        reach = np.max(np.abs(to_numpy(X)), axis=1, initial=0.0).astype(np.float64)
    base = np.ones(n_samples) if weights is None else np.asarray(weights, float)
    # A zero weight has no reach to cap; n / 0 is left as inf.
    with np.errstate(divide="ignore"):
        limit = np.sqrt(n_samples / base)
    beyond = reach > limit
    if not beyond.any():
        return weights
    capped = base.copy()
    capped[beyond] *= limit[beyond] / reach[beyond]
    return capped


def public_feature_scaling(plan):
    """The :class:`FeatureScaling` of a public ``plan`` (None: no map); no data read."""
    if plan is None or plan.mode == "none":
        return None
    if plan.mode != "bounds":
        raise ValueError(f"A {plan.mode!r} scaling plan reads the data.")
    return fit_feature_scaling(None, plan, None)


def scaled_columns(X, plan):
    """``X`` mapped by a public ``plan``, and the map (None: ``X`` as given).

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix
    plan : ScalingPlan or None
        Of mode ``"none"`` or ``"bounds"``: the map reads no data.

    Returns
    -------
    X : ndarray or scipy.sparse matrix
        In ``X``'s dtype and layout, finite (:meth:`FeatureScaling.transform`).
    scaling : FeatureScaling or None
    """
    scaling = public_feature_scaling(plan)
    return (X, None) if scaling is None else (scaling.transform(X), scaling)


def in_user_units(fit, scaling):
    """A linear fit of the scaled columns, with ``coef``/``intercept`` in raw units.

    ``fit`` is any dataclass with ``coef`` ``(n_outputs, n_features)`` and
    ``intercept`` fields (a ``LinearFit``, a ``FederatedFit``); post-processing
    of the released model. None coefficients (a network's federated fit)
    and ``scaling=None`` return ``fit`` unchanged.
    """
    if scaling is None or fit.coef is None:
        return fit
    coef, intercept = scaling.coefficients_in_user_units(
        to_numpy(fit.coef), to_numpy(fit.intercept)
    )
    return replace(fit, coef=coef, intercept=intercept)


def first_layer_in_user_units(weights, biases, scaling):
    """A network's layers with the first in raw units (``scaling`` may be None).

    ``weights[0]`` has shape ``(n_features, n_units)``: each unit is a linear
    function of the scaled columns, mapped back as a linear model is.
    """
    if scaling is None:
        return list(weights), list(biases)
    coef, intercept = scaling.coefficients_in_user_units(
        np.asarray(weights[0]).T, np.asarray(biases[0])
    )
    return [coef.T.copy(), *weights[1:]], [intercept, *biases[1:]]


# A private quantile must land within this fraction of the rows of its level
# for the quartiles (half of the rows apart) to tell a spread: measured,
# private scales still rescue raw columns at 4,000 rows and 6 columns
# (bound 0.22 n), and gave fits at 1e14 times the constant's error at 442
# rows and 10 columns (bound 2 n).
_RANK_TOLERANCE = 0.25
# Failure probability of that rank bound per draw.
_RANK_FAILURE = 0.1


def quantiles_resolvable(n_samples, epsilon0):
    """Whether exponential-mechanism quantiles on ``n_samples`` rows resolve a spread.

    The exponential mechanism over the ``G`` candidates of the public grid,
    with a utility of sensitivity at most 1, returns a candidate whose rank
    is within ``(2 / epsilon0) ln(G / beta)`` of the target's with
    probability ``1 - beta`` (McSherry and Talwar 2007, Theorem 6). When
    that is more than a quarter of the rows, the quartiles are noise: a scale
    drawn from them can be a tiny fraction of the column's spread, and
    dividing by it multiplies the coefficient's noise (raw diabetes, 442
    rows: fits at 1e14 times the constant predictor's error). A public
    rule of ``n_samples`` and the per-draw ``epsilon0``.

    Examples
    --------
    >>> from sklearn_dpfair._solvers._feature_scaling import quantiles_resolvable
    >>> quantiles_resolvable(30000, 0.007), quantiles_resolvable(442, 0.017)
    (True, False)
    """
    error = 2.0 / epsilon0 * math.log(AUTO_GRID.size / _RANK_FAILURE)
    return error <= _RANK_TOLERANCE * n_samples


# The private scales' grid spans +-1e8 (AUTO_GRID): a value beyond is
# clipped to its edge before the draws, so a column whose released median
# lies in the outermost bin (a Unix timestamp near 1.7e9, an amount in
# cents) is located at the edge and scaled by 1e8, not by its spread.
_GRID_EDGE = AUTO_GRID[-2]

_BEYOND_GRID = (
    "feature_scaling='auto': the private median of the column{s} at "
    "position{s} {listed} lies at the edge of the public range [-1e8, 1e8] "
    "of private column scales. Values beyond it are clipped to it before "
    "the private quantiles are drawn, so such a column is located at the "
    "edge and scaled by about 1e8, not by its spread, and the model can "
    "lose it. Pass feature_bounds=[(lower, upper), ...] (a public map at no "
    "cost), or rescale the column (seconds to days, cents to thousands). "
    "This warning reads the released location only."
)


def _warn_beyond_grid(location):
    """Warn where a released ``location`` lies in the grid's outermost bin.

    Post-processing of the private medians: it reads no other value.
    Returns the boolean mask of those columns.
    """
    at_edge = np.abs(location) >= _GRID_EDGE
    positions = np.flatnonzero(at_edge)
    if positions.size == 0:
        return at_edge
    listed = _listed_positions(positions)
    warn_at_caller(
        _BEYOND_GRID.format(s="s" if positions.size > 1 else "", listed=listed)
    )
    return at_edge


def fit_feature_scaling(X, plan, rng):
    """Release the location and scale of every column as ``plan`` says.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)
        Private rows (read only through the planned quantiles).
    plan : ScalingPlan
    rng : numpy.random.Generator

    Returns
    -------
    scaling : FeatureScaling or None
        None when the plan scales nothing.
    """
    d = plan.n_features
    if plan.mode == "none":
        return None
    if plan.mode == "bounds":
        if plan.center:
            # Halves, not the sum and the width: those overflow for finite
            # bounds such as (-1e308, 1e308) (an infinite scale, a NaN model).
            location, half = centre_and_half_width(plan.lower, plan.upper)
        else:
            location = np.zeros(d)
            half = np.maximum(np.abs(plan.lower), np.abs(plan.upper))
        return FeatureScaling(location, np.where(half > 0, half, 1.0))
    grids = [AUTO_GRID] * d
    dense = np.asarray(to_numpy(X), dtype=np.float64)
    # The clip to the grid's range keeps every value's rank finite; the
    # draws read ranks only.
    dense = np.clip(dense, AUTO_GRID[0], AUTO_GRID[-1])
    # Bins, not grid points: a column that holds one value in most rows (a
    # one-hot or mostly-zero column) would otherwise give every point on one
    # side of that value the same utility, and a median or quartile drawn
    # uniformly up to 1e8 away (private_quantile's candidates).
    draw = dict(adjacency=plan.adjacency, candidates="bins")
    rho = plan.quantile_rho
    # Located twice: the median on the grid (5%: a year near 2000 to within
    # 47), then the median of the centred column, whose grid is as fine
    # near its residual offset (to within 1.1), so that the spread of a
    # column at a large offset is read around its median.
    centre = column_quantiles(dense, [0.5], grids, rho, rng, **draw)[0]
    offset = column_quantiles(dense - centre, [0.5], grids, rho, rng, **draw)[0]
    centre = centre + offset
    q25, q75 = column_quantiles(
        dense - centre, (0.25, 0.75), [_SPREAD_GRID] * d, rho, rng, **draw
    )
    scale = (q75 - q25) / _IQR_SD
    # Around the median, a column's quartiles lie on both sides of 0, in
    # bins of their own. A value held by the median lies within half a bin
    # of the second median's grid (2.4% of its offset) of 0, and a quartile
    # drawn in its coarse bin within 1.3 times that: a quartile within 3% of
    # the offset (or the grid's smallest magnitude) is a quarter of the rows
    # or more at the median's value (a binary, one-hot or mostly-zero
    # column; the other quartile may then lie next to that value's share),
    # or a spread no wider than the location's resolution (a year near 2000
    # is located to within about 1). Either way the quartiles tell no spread
    # below that resolution, which then bounds the scale below, and so does
    # 1, which leaves 0/1 and standardized columns as they are (and a
    # column mostly at one value with the rest spread, whose spread the
    # quartiles do not see). Not the location's magnitude: the spread of
    # years 2019 to 2022 (1.1) would be taken for 2020, the column
    # flattened to a constant. Except at the grid's edge, where the clipped
    # values are one value whatever their spread: the magnitude (1e8)
    # there, which keeps the raw values' scaled products finite.
    near = np.maximum(0.03 * np.abs(offset), _SPREAD_GRID[_SPREAD_GRID > 0][0])
    one_value = (np.abs(q25) <= near) | (np.abs(q75) <= near) | (scale <= 0)
    at_edge = _warn_beyond_grid(centre)
    resolution = np.where(at_edge, np.abs(centre), np.maximum(near, 1.0))
    scale = np.where(one_value, np.maximum(scale, resolution), scale)
    location = centre + 0.5 * (q25 + q75) if plan.center else np.zeros(d)
    if not plan.center:
        # Scaled only: the spread around 0, not around the centre.
        scale = np.maximum(scale, np.abs(centre))
    return FeatureScaling(location, scale)


def penalty_in_scaled_units(alpha, scaling):
    """Per-column L2 strengths on mapped columns of the user-unit ``(alpha/2) ||w||^2``.

    A model fitted on the columns ``(x - location) / scale`` has the
    coefficients ``v_j = w_j scale_j`` of the model ``w`` in the user's
    units, so the penalty ``(alpha/2) sum_j w_j^2`` is ``sum_j (alpha_j / 2)
    v_j^2`` with ``alpha_j = alpha / scale_j^2`` (``inf`` where that
    overflows: such a column's coefficient is held at 0 by the proximal
    step, :func:`proximal_l2_factors`). The location moves the intercept
    only, which is not penalized. Public given ``scaling``; data
    independent.

    Parameters
    ----------
    alpha : float
    scaling : FeatureScaling

    Returns
    -------
    column_alpha : ndarray of shape (n_features,)

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers._feature_scaling import (
    ...     FeatureScaling, penalty_in_scaled_units)
    >>> scaling = FeatureScaling(np.array([500.0, 0.0]), np.array([100.0, 0.01]))
    >>> penalty_in_scaled_units(0.01, scaling).tolist()
    [1e-06, 100.0]
    """
    scale = np.asarray(scaling.scale, dtype=np.float64)
    with np.errstate(over="ignore"):
        return float(alpha) / (scale * scale)


def proximal_l2_factors(learning_rate, column_alpha):
    """Factors ``1 / (1 + eta alpha_j)`` of the exact proximal step of an L2 penalty.

    After a gradient step of size ``eta`` on the loss, ``w_j <- w_j / (1 +
    eta alpha_j)`` is the proximal map of ``sum_j (alpha_j / 2) w_j^2``
    (proximal gradient descent, Parikh and Boyd, *Proximal Algorithms*,
    2014, Sec. 4.2): its fixed point is the penalized minimizer whatever
    ``eta alpha_j``, where an explicit step diverges beyond
    ``eta alpha_j = 2`` (and ``alpha_j`` of :func:`penalty_in_scaled_units`
    can be huge). An infinite ``alpha_j`` gives 0: that coefficient is held
    at 0. Data independent.

    Parameters
    ----------
    learning_rate : float
    column_alpha : array-like of shape (n_features,)

    Returns
    -------
    factors : ndarray of shape (n_features, 1)
        float64, to multiply the ``(n_features, n_outputs)`` coefficients.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers._feature_scaling import proximal_l2_factors
    >>> proximal_l2_factors(0.5, np.array([2.0, np.inf])).ravel().tolist()
    [0.5, 0.0]
    """
    column_alpha = np.asarray(column_alpha, dtype=np.float64)
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + float(learning_rate) * column_alpha)[:, None]
