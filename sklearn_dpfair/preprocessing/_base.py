# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""What every private transformer shares: parameters, the fit's plan, output bounds.

A transformer's fit is validate, plan (from public quantities only), read
the data through the planned mechanisms, record. The steps every
transformer takes the same way live here: the validation of its float
columns and their public bounds, the plan and the fit's generator, the
edges of the transformers that cut each column (private quantiles or
uniform edges of the bounds), and the privacy record.
"""

from dataclasses import replace
from numbers import Real

import numpy as np
from sklearn.utils import get_tags
from sklearn.utils.validation import check_array

from .._base import PRIVACY_PARAMETER_CONSTRAINTS, PrivateEstimatorMixin
from ..privacy._random import check_noise_generator
from ..privacy._record import NON_PRIVATE_LIMIT
from ..privacy._weights import counted_weights
from ..utils._array_api import host_input
from ..utils._dask import refuse_dask_input
from ..utils._numeric import MAX_FLOAT64_ENTRIES, public_float
from ..utils._sklearn_compat import Interval, StrOptions
from ..utils._validation import (
    check_delta_for_n,
    check_public_weights,
    validate_data,
)
from ._bounds import check_bounds
from ._plan import plan_releases
from ._quantiles import FENCE_DRAWS, check_fence_levels, column_edges, private_fences

__all__ = ["PrivateTransformerMixin"]

#: What ``bounds="auto"`` releases at ``epsilon=inf``
#: (:func:`~._quantiles.private_fences` without privacy).
OBSERVED_RANGE = (
    "bounds from the observed range of each column (no training value "
    "clipped), then "
)


class PrivateTransformerMixin(PrivateEstimatorMixin):
    """Private fit bookkeeping of a transformer, and its declared output bound.

    Subclasses set ``output_bounds_`` (shape ``(n_features_out, 2)``) in
    ``fit``; ``output_norm_bound_`` is the l2 norm of the largest absolute
    bound of each output column, a public bound on the norm of every
    transformed row (without missing values), for a downstream estimator's
    clip or ``feature_norm_bound``.
    """

    _privacy_constraints = {
        name: PRIVACY_PARAMETER_CONSTRAINTS[name]
        for name in ("epsilon", "delta", "accountant", "random_state")
    }
    # Declared bounds, or "auto": private fences (``_fit_bounds``).
    _auto_bounds_constraints = {
        "bounds": ["array-like", StrOptions({"auto"})],
        "auto_share": [Interval(Real, 0, 1, closed="neither")],
        "auto_quantiles": [tuple],
        "auto_fence": [Interval(Real, 0, None, closed="left")],
    }

    def _validate_floats(self, X, *, reset):
        """``X`` as float64; NaN (missing) allowed where the tags allow it.

        The transformers compute on the host: array-API input (a torch
        tensor) under array API dispatch is read as a numpy copy, as it is
        without dispatch, and the output is numpy.
        """
        X, _ = self._validate_input_floats(X, reset=reset, keep_float32=False)
        return X

    def _validate_transform(self, X):
        """``transform``'s ``X`` as float64, and the dtype of its output.

        The output dtype is float32 for float32 input (scikit-learn's
        transformers keep it), float64 otherwise. The computation itself
        stays in float64, as the fit's does (:func:`as_input_float`).
        """
        return self._validate_input_floats(X, reset=False, keep_float32=True)

    def _validate_input_floats(self, X, *, reset, keep_float32):
        allow_nan = get_tags(self).input_tags.allow_nan
        X = validate_data(
            self,
            host_input(X),
            dtype=(np.float64, np.float32) if keep_float32 else np.float64,
            ensure_all_finite="allow-nan" if allow_nan else True,
            reset=reset,
        )
        return X.astype(np.float64, copy=False), X.dtype

    def _validate_bounded(self, X):
        """The fit's ``X`` and its public per-column ``lower, upper`` bounds.

        ``bounds="auto"`` (bounds released by the fit itself) gives None.
        """
        refuse_dask_input(type(self).__name__, X=X)
        # Sizes too large for a single column are refused before X is
        # converted, as the parameters' constraints are; the others once
        # its number of columns is known.
        self._check_sizes(1)
        X = self._validate_floats(X, reset=True)
        self._check_sizes(X.shape[1])
        return X, *self._check_public_bounds(X.shape[1])

    def _check_sizes(self, n_features):
        """Refuse size parameters whose arrays numpy cannot hold.

        Public parameters only: the fit (:meth:`_validate_bounded`) and its
        plan (:meth:`_planned_record`) both call it, first, with the same
        error (:func:`check_array_entries`, whose message does not depend
        on ``n_features``). Nothing to check by default.
        """

    def _check_public_bounds(self, n_features):
        """The declared ``bounds`` as per-column ``lower, upper``, checked.

        Public parameters only: the fit (:meth:`_validate_bounded`) and its
        plan (:meth:`_planned_record`) both call it, so that no plan is made
        for a fit that would refuse its bounds. ``bounds="auto"`` gives
        ``None, None`` once its ``auto_quantiles`` are valid.

        Raises
        ------
        ValueError
            As :func:`~._bounds.check_bounds` (and
            :func:`~._quantiles.check_fence_levels`) do.
        """
        if isinstance(self.bounds, str):
            check_fence_levels(self.auto_quantiles)
            return None, None
        return check_bounds(self.bounds, n_features)

    def _validate_inverse(self, X):
        """The input of ``inverse_transform`` as float64, and its output dtype.

        Its rows are outputs of ``transform``, an ndarray without the fit's
        feature names: validated as scikit-learn's inverse transforms
        validate theirs (``check_array`` and the number of columns, no
        feature-name check), so that a round trip after a DataFrame fit
        does not warn. NaN (missing) is allowed where the tags allow it.
        As :meth:`_validate_transform`, float32 input gives float32 output.
        """
        allow_nan = get_tags(self).input_tags.allow_nan
        X = check_array(
            host_input(X),
            dtype=(np.float64, np.float32),
            ensure_all_finite="allow-nan" if allow_nan else True,
        )
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} is "
                f"expecting {self.n_features_in_} features as input."
            )
        return X.astype(np.float64, copy=False), X.dtype

    def _n_fence_quantiles(self, n_features):
        """Quantile draws of ``bounds="auto"`` on ``n_features`` columns (or 0)."""
        return FENCE_DRAWS * n_features if isinstance(self.bounds, str) else 0

    def _fit_bounds(self, X, sample_weight=None):
        """The fit's ``X``, bounds, plan, generator and weights.

        Declared bounds are used as given; ``bounds="auto"`` releases them
        first, as :func:`~._quantiles.private_fences` of the
        ``auto_quantiles`` at the plan's per-quantile budget (the plan
        counts their draws: :meth:`_release_spec`), each row counted with
        its weight.

        Returns
        -------
        X, lower, upper, plan, rng, auto, weights
            ``auto``: whether the bounds were released by this fit;
            ``weights``: the rows' public weights as the fit counts them
            (:func:`~..privacy._weights.counted_weights`; None: each row
            once).
        """
        refuse_dask_input(type(self).__name__, X=X, sample_weight=sample_weight)
        X, lower, upper = self._validate_bounded(X)
        weights = check_public_weights(sample_weight, X)
        auto = lower is None
        levels = check_fence_levels(self.auto_quantiles) if auto else None
        plan, rng = self._plan_fit(X.shape[0], X.shape[1])
        weights = counted_weights(weights, private=plan.is_private)
        if auto:
            lower, upper = private_fences(
                X, levels, self.auto_fence, plan.quantile_rho, rng, weights=weights
            )
        return X, lower, upper, plan, rng, auto, weights

    def _release_spec(self, n_features):
        """What a fit on ``n_features`` columns releases (public inputs only).

        A dict of :func:`~._plan.plan_releases` arguments: ``gaussian`` (one
        joint Gaussian sum), ``n_quantiles``, ``quantile_share`` and, when
        the accountant's delta is not the user's, ``delta``; ``uses_delta``
        says whether a user's ``delta >= 1 / n_samples`` should warn.
        """
        raise NotImplementedError

    def _release_plan(self, n_features, spec=None):
        """The :class:`~._plan.ReleasePlan` of a fit on ``n_features`` columns."""
        spec = dict(self._release_spec(n_features) if spec is None else spec)
        spec.pop("uses_delta", None)
        delta = spec.pop("delta", self.delta)
        return plan_releases(self.epsilon, delta, self._accountant_kind(), **spec)

    def _plan_fit(self, n_samples, n_features):
        """The fit's :class:`~._plan.ReleasePlan` and generator.

        Made from public quantities only, before the data is read, by
        :meth:`_release_spec` (the plan :meth:`privacy_plan` reports). A
        user's ``delta >= 1 / n_samples`` warns when the fit releases a
        Gaussian sum (or when the spec's ``uses_delta``).
        """
        spec = self._release_spec(n_features)
        plan = self._release_plan(n_features, spec)
        uses_delta = spec.get("uses_delta", spec.get("gaussian", False))
        # The plan's epsilon, a float: the parameter itself may be an int
        # beyond numpy's ufuncs (10**30) or a float32 scalar.
        if uses_delta and plan.is_private:
            check_delta_for_n(public_float(self.delta, "delta"), n_samples)
        return plan, check_noise_generator(self.random_state)

    def _planned_record(self, n_samples, n_features):
        """The record's event of a fit (the plan of :meth:`_plan_fit`).

        The plan refuses the sizes and the bounds the fit would refuse
        (:meth:`_check_sizes`, :meth:`_check_public_bounds`), with the same
        errors.
        """
        self._check_sizes(n_features)
        if "bounds" in self._parameter_constraints:
            self._check_public_bounds(n_features)
        return self._release_plan(n_features).record(
            f"{type(self).__name__}: planned releases"
        )

    def _edges_spec(self, n_features, n_edges, *, quantile):
        """The release spec of :meth:`_fit_edges`: the interior quantiles."""
        return {"gaussian": False, "n_quantiles": (n_edges - 2) * n_features if quantile else 0}

    def _fit_edges(
        self,
        X,
        n_edges,
        *,
        quantile,
        sample_weight=None,
        weighted_method="inverted_cdf",
        exact_levels=None,
    ):
        """Validate, plan and release ``n_edges`` edges of each column.

        The fit of the transformers that cut each column at edges (bins,
        knots, reference quantiles): private quantiles of the clipped
        column at levels ``0, 1/(n_edges - 1), ..., 1`` (``quantile``; the
        ``n_edges - 2`` interior ones cost budget) or uniform edges of the
        public bounds (no private read). Sets ``bounds_``.

        ``sample_weight`` (validated before anything is read) weights the
        quantiles' counts as :meth:`_fit_bounds` does (capped at 1 under
        privacy); without privacy the quantiles are the weighted
        ``weighted_method``'s (:func:`~._quantiles.column_quantiles`), at
        the ``exact_levels(n_edges)`` of :func:`~._quantiles.column_edges`
        (a function, called once the sizes are checked). Uniform edges read
        no data, nor the weights.

        Returns
        -------
        edges : ndarray of shape (n_edges, n_features)
        plan : ReleasePlan
        """
        refuse_dask_input(type(self).__name__, X=X, sample_weight=sample_weight)
        X, lower, upper = self._validate_bounded(X)
        weights = check_public_weights(sample_weight, X)
        n_features = X.shape[1]
        plan, rng = self._plan_fit(X.shape[0], n_features)
        if quantile:
            weights = counted_weights(weights, private=plan.is_private)
        self.bounds_ = np.column_stack([lower, upper])
        edges = column_edges(
            X, lower, upper, n_edges, plan.quantile_rho, rng, quantile=quantile,
            weights=weights if quantile else None, weighted_method=weighted_method,
            exact_levels=None if exact_levels is None else exact_levels(n_edges),
        )
        return edges, plan

    def _record_fit(self, plan, what, *, non_private, additional_delta=0.0, **kwargs):
        """Account the fit as ``plan`` says and set the privacy attributes.

        Parameters
        ----------
        plan : ReleasePlan
            The fit's plan (:meth:`_plan_fit`).
        what : str
            The private mechanism, in words: what the fit runs at a finite
            epsilon.
        non_private : str
            What the fit runs at ``epsilon=inf`` (``plan.is_private`` False),
            in words: there no noise is drawn and the statistics are the
            exact ones, so the record names them rather than the private
            mechanism they stand in for (the record is of what ran).
        additional_delta : float, default=0.0
            Delta spent outside the plan's event (a partition selection's
            threshold), which the record states.
        **kwargs
            Passed to :meth:`~._plan.ReleasePlan.record`.
        """
        if not plan.is_private:
            what = f"{NON_PRIVATE_LIMIT}{non_private}"
        record = plan.record(f"{type(self).__name__}: {what}", **kwargs)
        if additional_delta:
            record = replace(record, additional_delta=additional_delta)
        self._set_privacy_record(record)

    def _set_output_bounds(self, lower, upper):
        self.output_bounds_ = np.column_stack([lower, upper]).astype(np.float64)
        largest = np.max(np.abs(self.output_bounds_), axis=1)
        self.output_norm_bound_ = _norm(largest)

    def _set_unit_output_bounds(self, n_outputs, n_features):
        """Outputs in ``[0, 1]`` that sum to at most 1 over each input column.

        One-hot columns and B-splines: the outputs of one input column have
        a squared l2 norm of at most 1, so a row's norm is at most
        ``sqrt(n_features)``.
        """
        self._set_output_bounds(np.zeros(n_outputs), np.ones(n_outputs))
        self.output_norm_bound_ = float(np.sqrt(n_features))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        # transform keeps float32 input in float32 (as_input_float), as
        # scikit-learn's StandardScaler declares for its own.
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags


def check_array_entries(n_entries, names, what):
    """Refuse size parameters that make an array numpy cannot hold.

    Parameters
    ----------
    n_entries : int
        Entries of the array, computed from the parameters as Python ints
        (which do not overflow).
    names : dict
        The parameters the size depends on, ``{name: value}``: the message
        names them.
    what : str
        The array, in words.

    Raises
    ------
    ValueError
        If ``n_entries`` exceeds
        :data:`~sklearn_dpfair.utils._numeric.MAX_FLOAT64_ENTRIES`.

    Examples
    --------
    >>> from sklearn_dpfair.preprocessing._base import check_array_entries
    >>> check_array_entries(10, {"n_bins": 9}, "the bin edges")
    >>> check_array_entries(10**30, {"n_bins": 10**30}, "edges")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: n_bins=1000000000000000000000000000000 is too large: ...
    """
    if n_entries > MAX_FLOAT64_ENTRIES:
        given = ", ".join(f"{name}={value}" for name, value in names.items())
        verb = "is" if len(names) == 1 else "are"
        raise ValueError(
            f"{given} {verb} too large: {what} would not fit in one numpy "
            f"array (at most {MAX_FLOAT64_ENTRIES} floats)."
        )


def as_input_float(out, dtype, bounds=None):
    """``out`` (float64) in the input's float ``dtype`` when that is float32.

    The transformers compute in float64 whatever their input, and return
    float32 for float32 input, as scikit-learn's do (other inputs give
    float64). Rounding to float32 may move a value past a declared bound
    by half a float32 spacing (a bound that float32 cannot hold), or
    overflow a finite one to infinity: with ``bounds``, the rounded values
    are clipped to the float32 values within the bounds (those rounded
    inward), so that ``output_bounds_`` still bounds every output. A
    column whose bounds hold no float32 value (bounds narrower than
    float32's spacing there) cannot be written in float32 within them:
    the output then stays float64.

    Parameters
    ----------
    out : ndarray of dtype float64
        The transformed values (within ``bounds`` column by column).
    dtype : numpy.dtype
        The input's dtype, as validated.
    bounds : array-like of shape (n_columns, 2), default=None
        The declared ``(lower, upper)`` of each output column.

    Returns
    -------
    out : ndarray
        float32 when ``dtype`` is, else ``out`` itself.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.preprocessing._base import as_input_float
    >>> out = as_input_float(np.array([[0.1]]), np.dtype(np.float32), [[0.0, 0.1]])
    >>> out.dtype, bool(out[0, 0] <= 0.1)
    (dtype('float32'), True)
    """
    if dtype != np.float32:
        return out
    with np.errstate(over="ignore"):
        if bounds is None:
            return out.astype(np.float32)
        bounds = np.asarray(bounds, dtype=np.float64)
        lower, upper = _inward_float32(bounds[:, 0], bounds[:, 1])
        if np.any(lower > upper):
            return out
        return np.clip(out.astype(np.float32), lower, upper)


def saturated_input_float(out, dtype):
    """:func:`as_input_float` with the finite floats as every column's bounds.

    For outputs without declared bounds (the inverse transforms): a float32
    result beyond float32's range (a quantile or bin centre of ``1e300``)
    saturates at float32's largest finite value rather than overflowing to
    infinity, as a float64 one does at float64's; NaN stays NaN.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.preprocessing._base import saturated_input_float
    >>> out = saturated_input_float(np.array([[-1e300, np.nan]]), np.dtype("f4"))
    >>> largest = np.finfo(np.float32).max
    >>> out.dtype, bool(out[0, 0] == -largest), bool(np.isnan(out[0, 1]))
    (dtype('float32'), True, True)
    """
    largest = np.finfo(np.float64).max
    bounds = np.tile([-largest, largest], (np.shape(out)[1], 1))
    return as_input_float(out, dtype, bounds)


def _inward_float32(lower, upper):
    """The float32 values nearest ``lower`` and ``upper`` within them."""
    low, high = lower.astype(np.float32), upper.astype(np.float32)
    low = np.where(low < lower, np.nextafter(low, np.float32(np.inf)), low)
    high = np.where(high > upper, np.nextafter(high, np.float32(-np.inf)), high)
    return low, high


def _norm(values):
    """The l2 norm of ``values``, finite whenever it is representable.

    Squares overflow for entries beyond 1e154 (bounds of ``(-1e200, 1e200)``
    gave an infinite bound, and NaN with an infinite entry); scaled by the
    largest entry they do not, and only a norm past the largest float is
    ``inf``.
    """
    scale = float(np.max(values, initial=0.0))
    if scale == 0.0 or not np.isfinite(scale):
        return scale
    with np.errstate(over="ignore"):
        return float(scale * np.sqrt(np.sum(np.square(values / scale))))
