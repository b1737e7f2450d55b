# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Column scales of a semi-private regression: free from public rows.

The clipped gradients of the semi-DP solvers are clipped in the units of
the columns: on raw columns (a year near 2000, an income in the tens of
thousands, a lab value of order 1e-3) the column of largest magnitude
saturates every clip and the others are learned from what is left. The fit
therefore maps every column to ``(x - location) / scale`` first and reports
the coefficients in the user's units (a linear model of the scaled columns
is a linear model of the raw ones).

Where the scales come from, in order (all fixed before the data is read,
from parameters and public counts):

* ``feature_bounds``, when declared: the midpoint and half-width (public, no
  budget), as every estimator of the package;
* the public rows, when there are at least :data:`MIN_PUBLIC_SCALE_ROWS` of
  them: their mean and standard deviation. Public rows are public by the
  estimator's contract (semi-DP protects the private rows only, Lowy's
  thesis Definition 14), so these statistics cost no privacy, exactly as
  the public warm start and preconditioner do;
* otherwise private robust statistics (a private median, then private
  quantiles of the centred column) from the package's one feature-scaling
  machinery (:mod:`~sklearn_dpfair._solvers._feature_scaling`), with a
  declared share of the budget, composed into the fit's ``dp_event_``.

The target gets the same treatment where the public rows cannot anchor it
(fewer than :data:`MIN_PUBLIC_SCALE_ROWS`): the fit then starts from zero
with a clipped gradient, and a target far from 0 (an age near 40, a price
near 3e5) is out of the clipped steps' reach: test RMSE 6x least squares'
on an age-like target at epsilon = 1 on 5,000 rows. Its location and scale
are the same private robust statistics, drawn with the columns' (one more
column of the same plan) or alone beside declared ``feature_bounds`` or
unscaled columns, and the model is mapped back to the target's units too
(``target_scaling=None`` leaves the target as given).

The private quantiles are exponential-mechanism draws whose utility
sensitivity is that of the fit's adjacency (1 under replace-one, where one
replaced record moves a rank count by at most 1; ``max(q, 1 - q)`` under
add/remove), so each draw is ``epsilon0``-DP under the relation the fit
states, and its event is the planned one.
"""

import dataclasses

import numpy as np
import scipy.sparse as sp

from ...preprocessing._bounds import check_bounds
from .._feature_scaling import (
    FeatureScaling,
    ScalingPlan,
    _listed_positions,
    check_feature_bounds,
    fit_feature_scaling,
    plan_feature_scaling,
    warn_ignored_bounds,
)
from .._non_private import column_moments

__all__ = [
    "MIN_PUBLIC_SCALE_ROWS",
    "PUBLIC_ROWS_MODE",
    "SemiDPScalingPlan",
    "check_bounds_in_dtype",
    "fit_semidp_scaling",
    "plan_semidp_scaling",
    "public_scaling",
    "scaled_rows",
    "target_in_user_units",
    "target_left_as_given",
]

#: Public rows needed to estimate the columns' scales from them. With 5
#: rows a standard deviation is within about 35% (``1 / sqrt(2 (n - 1))``)
#: of the population's, enough for scaling a clip, and the mean locates a
#: column exactly where the private median's public grid (about 5% of the
#: column's magnitude) cannot: on raw synthetic columns with a 1e5 offset,
#: 10 public rows gave a test MSE of 0.251 (least squares 0.249) with public
#: scales against 4.25 with private ones. Below 5 rows, the scales are private.
MIN_PUBLIC_SCALE_ROWS = 5

#: The :class:`~sklearn_dpfair._solvers._feature_scaling.ScalingPlan` mode of
#: scales taken from the public rows.
PUBLIC_ROWS_MODE = "public-rows"

_PUBLIC_ROWS_TEXT = (
    "columns scaled by the public rows' mean and standard deviation (public "
    "by the estimator's contract, no budget)"
)

# A column constant on the public rows keeps unit scale (the public rows
# say nothing about its spread). For float32 rows the floor is float32's
# smallest normal number instead (_public_rows_scaling).
_SCALE_FLOOR = 1e-300

_TARGET_TEXT = "the target scaled by private robust statistics"


@dataclasses.dataclass(frozen=True)
class SemiDPScalingPlan(ScalingPlan):
    """A :class:`ScalingPlan` that may scale the target too.

    With ``target``, the plan's private draws (``n_quantiles``, ``event``,
    ``share``) include the target's location and scale: as one more column
    of a ``"private"`` plan, or alone beside a ``"bounds"`` or ``"none"``
    map of the columns.
    """

    target: bool = False
    #: Whether the target is centred (the fit has an intercept).
    target_center: bool = True

    def column_plan(self):
        """This plan without the target: what scales the columns alone."""
        return dataclasses.replace(self, target=False)


def plan_semidp_scaling(
    params, n_features, n_public, *, sparse=False, n_samples=None, dtype=np.float64
):
    """The :class:`ScalingPlan` of a semi-private fit (public inputs only).

    Parameters
    ----------
    params : SemiDPParams
        ``feature_scaling``, ``feature_bounds``, ``target_scaling``, the
        budget, the adjacency and ``fit_intercept`` decide it.
    n_features, n_public : int
        Public counts of the fit.
    sparse : bool, default=False
        Whether ``X`` is sparse (a public layout): sparse columns are scaled
        by ``feature_bounds`` only, without centring.
    n_samples : int or None, default=None
        Public number of rows the private quantiles would read.
    dtype : numpy dtype, default=np.float64
        ``X``'s floating dtype (a public property of the container): the
        map of ``feature_bounds`` must be finite in it
        (:func:`check_bounds_in_dtype`). float64, the widest, when planning
        without the data.

    Returns
    -------
    plan : ScalingPlan
        Mode ``"none"``, ``"bounds"``, :data:`PUBLIC_ROWS_MODE` or
        ``"private"``.
    """
    warn_ignored_bounds(params.feature_scaling, params.feature_bounds)
    center = bool(params.fit_intercept) and not sparse
    if params.feature_scaling is not None:
        # Every fit refuses what a private one refuses, before any branch.
        check_feature_bounds(params.feature_bounds, n_features)
        check_bounds_in_dtype(params.feature_bounds, n_features, dtype, center=center)
    budget = params.budget
    # Public-only fits use the public rows alone, and the non-private limit
    # solves in standardized coordinates itself: nothing to scale.
    if params.solver == "public-only" or not budget.is_private:
        return ScalingPlan("none", n_features)
    few_public = n_public < MIN_PUBLIC_SCALE_ROWS
    with_target = _target_asked(params, n_public)
    scale_columns = params.feature_scaling is not None
    if scale_columns and params.feature_bounds is None and not sparse:
        if not few_public:
            return ScalingPlan(PUBLIC_ROWS_MODE, n_features, center=center)
        # The target is one more column of the columns' private plan.
        plan = plan_feature_scaling(
            "auto", None, n_features + int(with_target), budget,
            fit_intercept=params.fit_intercept, n_samples=n_samples,
            adjacency=params.adjacency,
        )
        if not with_target:
            return plan
        columns = dataclasses.replace(plan, n_features=n_features)
        return _with_target(columns, plan, params)
    # Sparse columns are scaled by declared bounds only (as every estimator
    # of the package): a scaled copy of the stored values would break the
    # sparse fit's memory bound (twice the storage).
    columns = (
        plan_feature_scaling(
            "auto", params.feature_bounds, n_features, budget, sparse=sparse,
            fit_intercept=params.fit_intercept,
        )
        if scale_columns and params.feature_bounds is not None
        else ScalingPlan("none", n_features)
    )
    if not with_target:
        return columns
    # Beside a public map (or none) of the columns, the target alone.
    target = plan_feature_scaling(
        "auto", None, 1, budget, fit_intercept=params.fit_intercept,
        n_samples=n_samples, adjacency=params.adjacency,
    )
    return _with_target(columns, target, params)


def check_bounds_in_dtype(feature_bounds, n_features, dtype=np.float64, *, center=True):
    """Refuse ``feature_bounds`` whose map is not finite in ``dtype``.

    The fit maps each column to ``(x - location) / scale`` in ``X``'s own
    dtype (:func:`scaled_rows`), with the location and scale of the bounds
    (midpoint and half-width; without centring, location 0 and the largest
    magnitude). A scale below the dtype's smallest normal number (a
    half-width of ``1e-46`` is 0 in float32, and its inverse ``inf``) or a
    location or scale beyond its largest float would turn a record at the
    location into ``0 / 0`` (NaN) and the others into ``inf``: the noisy
    sums would then depend on one record without bound. Refused instead,
    from the parameter and ``X``'s dtype alone (public), before any row is
    read. A scale in the normal range keeps every scaled value a number
    (at worst saturated, then clipped like any huge record).

    Parameters
    ----------
    feature_bounds : array-like of shape (n_features, 2) or None
        None passes.
    n_features : int
    dtype : numpy dtype, default=np.float64
        ``X``'s floating dtype.
    center : bool, default=True
        Whether the map centres the columns (dense ``X`` with an intercept).

    Raises
    ------
    ValueError
        Naming ``feature_bounds`` and the columns' positions.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers.semi_dp._scaling import check_bounds_in_dtype
    >>> check_bounds_in_dtype([(0.0, 1e-46)], 1, np.float64)
    >>> check_bounds_in_dtype([(0.0, 1e-46)], 1, np.float32)
    Traceback (most recent call last):
    ...
    ValueError: feature_bounds: the declared range of the column at position 0 ...
    """
    if feature_bounds is None:
        return
    lower, upper = check_bounds(feature_bounds, n_features, name="feature_bounds")
    plan = ScalingPlan(
        "bounds", n_features, np.asarray(lower), np.asarray(upper), center=center
    )
    scaling = fit_feature_scaling(None, plan, None)
    info = np.finfo(dtype)
    positions = np.flatnonzero(
        (scaling.scale < info.tiny)
        | (scaling.scale > info.max)
        | (np.abs(scaling.location) > info.max)
    )
    if positions.size == 0:
        return
    s = "s" if positions.size > 1 else ""
    name = np.dtype(dtype).name
    scale = "half-width" if center else "largest magnitude"
    raise ValueError(
        f"feature_bounds: the declared range of the column{s} at position{s} "
        f"{_listed_positions(positions)} cannot scale X of dtype {name}: the "
        f"fit divides by its {scale}, which must lie between {name}'s "
        f"smallest normal number ({info.tiny:g}) and largest float "
        f"({info.max:g}), and subtracts its midpoint, which must lie within "
        f"the latter. Declare a range of a representable width, or pass X "
        "as float64."
    )


def _target_asked(params, n_public):
    """Whether the plan draws the target's private scales (a public rule).

    With fewer public rows than :data:`MIN_PUBLIC_SCALE_ROWS` nothing
    anchors the target (the fit starts from a warm start of a few rows, or
    zero), so ``target_scaling="auto"`` scales it; a fixed noise multiplier
    leaves no share of the budget to draw its scales with, and the
    public-only and non-private fits scale nothing.
    """
    return (
        params.target_scaling is not None
        and n_public < MIN_PUBLIC_SCALE_ROWS
        and params.budget.is_private
        and params.budget.noise_multiplier is None
        and params.solver != "public-only"
    )


def target_left_as_given(params, n_public, plan):
    """Whether the target's scales were asked for and ``plan`` has none.

    The budget's share then gives draws whose quantiles cannot resolve a
    spread on this many rows (:func:`~.._feature_scaling.quantiles_resolvable`):
    a public rule of the counts and the budget, which the fit may say.
    """
    return _target_asked(params, n_public) and not getattr(plan, "target", False)


def _with_target(columns, draws, params):
    """``columns`` with the private draws of ``draws`` (which scale the target).

    ``draws`` of mode ``"none"`` (too few rows for its quantiles to resolve
    a spread, :func:`~.._feature_scaling.quantiles_resolvable`) leave the
    target as given and ``columns`` as planned.
    """
    if draws.mode != "private":
        return columns
    fields = {f.name: getattr(columns, f.name) for f in dataclasses.fields(ScalingPlan)}
    fields.update(
        quantile_rho=draws.quantile_rho,
        n_quantiles=draws.n_quantiles,
        event=draws.event,
        share=draws.share,
        # The draws' utility sensitivity is that of the fit's adjacency.
        adjacency=params.adjacency,
    )
    return SemiDPScalingPlan(**fields, target=True, target_center=draws.center)


def describe(plan):
    """The record's phrase of ``plan`` ("" when nothing is scaled)."""
    if plan.mode == PUBLIC_ROWS_MODE:
        return _PUBLIC_ROWS_TEXT
    if not getattr(plan, "target", False):
        return plan.describe()
    if plan.mode == "private":
        return plan.describe() + " (the target's location and scale among them)"
    # The columns' phrase: the declared bounds', or none.
    columns = plan.describe()
    target = (
        f"{_TARGET_TEXT}: {plan.n_quantiles} private quantiles (exponential "
        f"mechanism on a public grid), {plan.share:.0%} of the zCDP budget"
    )
    return f"{columns}; {target}" if columns else target


def fit_semidp_scaling(X, y, public_mask, plan, rng):
    """Release (or compute, from public rows) the location and scale of the
    columns, and of the target where the plan says so.

    Parameters
    ----------
    X : ndarray or scipy.sparse CSR matrix of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    public_mask : ndarray of bool of shape (n_samples,)
    plan : ScalingPlan
    rng : numpy.random.Generator
        Source of the private quantile draws (private plans only).

    Returns
    -------
    scaling : FeatureScaling or None
        Of the columns; None when the plan scales none.
    target : FeatureScaling or None
        Of the target (one column); None when the plan leaves it as given.
    """
    if getattr(plan, "target", False):
        return _fit_with_target(X, y, plan, rng)
    if plan.mode != PUBLIC_ROWS_MODE:
        return fit_feature_scaling(X, plan, rng), None
    return _public_rows_scaling(X, public_mask, plan), None


def _fit_with_target(X, y, plan, rng):
    # The columns' map (private draws, declared bounds, or none), then the
    # target's draws at the same per-draw budget: the plan's draws, in two
    # calls rather than one of d + 1 columns, so that no (n, d + 1) copy of
    # the rows is made.
    columns = fit_feature_scaling(X, plan, rng)
    target_plan = ScalingPlan(
        "private", 1, quantile_rho=plan.quantile_rho, center=plan.target_center,
        adjacency=plan.adjacency,
    )
    y = np.asarray(y, dtype=np.float64)[:, None]
    return columns, fit_feature_scaling(y, target_plan, rng)


def _public_rows_scaling(X, public_mask, plan):
    # Dense X only (sparse columns are scaled by declared bounds, or not):
    # the shared two-pass moments, read a block at a time, so that a
    # column of offset 1e5 and spread 1e-3 keeps its spread and a float32 X
    # is not copied whole. Without centring, the root mean square.
    Xp = X[public_mask]
    location, scale = column_moments(Xp, center=plan.center)
    # A column constant on the public rows (column_moments gives it the
    # scale 1: they say nothing about its spread), or of a subnormal spread:
    # in X's dtype, since scaled_rows divides there (a float32 column of
    # spread 5e-46 would divide by 0).
    floor = max(_SCALE_FLOOR, float(np.finfo(X.dtype).tiny))
    scale = np.where(scale > floor, scale, 1.0)
    if plan.center and Xp.shape[0]:
        # Centred at its value, not at the mean a few ulps off it, so that
        # its public rows are exactly 0 (the public start would otherwise
        # rescale a 1e-17 column to unit size).
        first = np.asarray(Xp[0], dtype=np.float64)
        same = np.all(Xp == Xp[0], axis=0)
        location = np.where(same, first, location)
    return FeatureScaling(location, scale)


def scaled_rows(X, scaling):
    """``(X - location) / scale`` in ``X``'s dtype, with one new array.

    The fit's one copy of the rows (:meth:`FeatureScaling.transform` would
    hold two temporaries, and promote float32 rows to float64). A sparse
    ``X`` is scaled without centring (its location is 0).

    Every scale must be a normal number of ``X``'s dtype and every location
    finite in it (:func:`check_bounds_in_dtype` for declared bounds, the
    floor of the public rows' scales): then no value is NaN.
    """
    big = np.finfo(X.dtype).max
    if sp.issparse(X):
        # Only the stored values are new; the index arrays are shared.
        # One new array of the stored values: the gathered inverse scales,
        # multiplied in place.
        data = (1.0 / scaling.scale).astype(X.dtype)[X.indices]
        with np.errstate(over="ignore"):
            data *= X.data
        np.clip(data, -big, big, out=data)
        return sp.csr_matrix(
            (data, X.indices, X.indptr), shape=X.shape, copy=False
        )
    # A huge private value divided by a small scale overflows: saturated to
    # the dtype's largest value, silently (a warning would depend on the
    # private rows), so every scaled record stays finite and goes through
    # the solver's clipping like any huge record.
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.subtract(X, scaling.location.astype(X.dtype), dtype=X.dtype)
        out /= scaling.scale.astype(X.dtype)
    np.clip(out, -big, big, out=out)
    return out


def target_in_user_units(coef, intercept, target):
    """A model of the scaled target, in the target's units.

    ``y = location + scale * y'``: every coefficient times the scale, the
    location added to the intercept (0 without centring).
    """
    scale, location = float(target.scale[0]), float(target.location[0])
    return np.asarray(coef, dtype=np.float64) * scale, intercept * scale + location


def public_scaling(X, public_mask, *, feature_scaling, feature_bounds, fit_intercept):
    """Column scales that cost nothing: declared bounds, else the public rows.

    For fits whose trust model has no curator to compute private quantiles
    (semi-local DP: every private person randomizes their own message).
    None when neither is available (fewer than
    :data:`MIN_PUBLIC_SCALE_ROWS` public rows and no bounds) or
    ``feature_scaling`` is None. Dense ``X`` only.
    """
    warn_ignored_bounds(feature_scaling, feature_bounds)
    if feature_scaling is None:
        return None
    d = X.shape[1]
    if feature_bounds is not None:
        lower, upper = check_bounds(feature_bounds, d, name="feature_bounds")
        plan = ScalingPlan(
            "bounds", d, np.asarray(lower), np.asarray(upper), center=fit_intercept
        )
        return fit_feature_scaling(X, plan, None)
    if int(np.count_nonzero(public_mask)) < MIN_PUBLIC_SCALE_ROWS:
        return None
    plan = ScalingPlan(PUBLIC_ROWS_MODE, d, center=bool(fit_intercept))
    return _public_rows_scaling(X, public_mask, plan)
