# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Standardization with a private mean and variance of clipped columns."""

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ..privacy._record import weights_caveats
from ..utils._sklearn_compat import _fit_context
from ._base import (
    OBSERVED_RANGE,
    PrivateTransformerMixin,
    as_input_float,
    saturated_input_float,
)
from ._bounds import centre_and_half_width
from ._moments import (
    exact_moments,
    mean_and_variance,
    moment_noise_stds,
    noisy_moments,
)

__all__ = ["DPStandardScaler"]

_LARGEST = np.finfo(np.float64).max


class DPStandardScaler(
    PrivateTransformerMixin, OneToOneFeatureMixin, TransformerMixin, BaseEstimator
):
    """Standardize columns with a differentially private mean and variance.

    Each column is clipped to public bounds; the counts, clipped sums and
    sums of squares of all columns are released together by one Gaussian
    mechanism (sensitivity 1 after a public rescaling, whatever one record
    holds), and ``transform`` returns ``(clip(x) - mean_) / scale_``.
    ``bounds="auto"`` first spends a declared share of the budget on private
    quartiles of every column, over a public grid of ``[-1e8, 1e8]``, and
    clips at fences ``auto_fence`` interquartile ranges beyond them (Tukey's
    fences: robust, one outlier cannot widen them). Quartiles rather than
    extreme quantiles because the exponential mechanism needs about
    ``q n epsilon0 >> log(#candidates)`` to place the ``q``-quantile in the
    data rather than anywhere on the grid. The grid is 5% apart in
    magnitude: a column whose interquartile range is under about 5% of its
    magnitude (a year near 2000) needs declared bounds (or the estimator's
    ``feature_scaling="auto"``, which reads its spread around a private
    median).

    The output bound is declared: ``output_bounds_[j]`` is
    ``((lo_j - mean_j) / scale_j, (hi_j - mean_j) / scale_j)``, computed from
    released quantities only, and ``output_norm_bound_`` bounds the l2 norm
    of any transformed row; a downstream private estimator may take either
    as its public feature bound. Both, and every output, are finite for
    any finite bounds: bounds more than the largest float apart are
    standardized in halves (the quotient is the same), and a quotient
    beyond the largest float (only possible without privacy, where the
    scale is not floored) saturates at it.

    Missing values (NaN) are ignored in ``fit`` and kept in ``transform``,
    as in scikit-learn's ``StandardScaler``.
    A float32 ``X`` is transformed to float32, as in scikit-learn, though
    computed in float64 (the released statistics are float64 whatever
    ``X``'s dtype); other dtypes give float64, float16 included (which
    scikit-learn keeps).

    Read more in the :ref:`User Guide <preprocessing>`.

    Parameters
    ----------
    bounds : array-like of shape (2,) or (n_features, 2), or "auto"
        Public ``(lower, upper)`` of every column, or of each. ``"auto"``:
        fences around the private quantiles ``auto_quantiles`` of each
        column, at a share ``auto_share`` of the budget (the exact minimum
        and maximum of the rows of positive weight at ``epsilon=inf``: no
        training value is clipped, but ``transform`` clips new values to
        that range, where scikit-learn's ``StandardScaler`` does not).
    epsilon : float, default=1.0
        Target epsilon; ``np.inf`` computes the exact statistics of the
        clipped columns.
    delta : float, default=1e-5
        Target delta in (0, 1).
    with_mean : bool, default=True
        Subtract the mean.
    with_std : bool, default=True
        Divide by the standard deviation.
    auto_share : float, default=0.2
        Share of the zCDP budget spent on the bounds when ``bounds="auto"``.
    auto_quantiles : tuple of float, default=(0.25, 0.75)
        Levels ``(a, b)`` of the private quantiles when ``bounds="auto"``.
    auto_fence : float, default=2.0
        The bounds are ``q_a - f (q_b - q_a)`` and ``q_b + f (q_b - q_a)``
        (``f = 2``: about 3.4 standard deviations of a normal column).
    accountant : {"rdp", "pld"} or PrivacyLedger, default="rdp"
        dp-accounting accountant; ``bounds="auto"`` needs "rdp".
    random_state : None, int, RandomState or Generator, default=None
        None draws the noise from OS entropy (a release); anything else is a
        seed (a reproducible fit, not a release).

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,)
        Released mean of the clipped columns (0 without ``with_mean``).
    var_ : ndarray of shape (n_features,) or None
        Released variance. Under privacy it is floored at ``(width /
        1000)^2`` and at twice the standard deviation of its own noise (a
        variance the noise could have produced from nothing is replaced by
        the noise level: a larger scale, never a near-zero one); at
        ``epsilon=inf`` it is the exact variance, as in scikit-learn (a
        constant column then has scale 1). It reads ``inf`` for a spread
        beyond about ``1e154``, whose square overflows; ``scale_`` is then
        still finite. None without ``with_std``.
    scale_ : ndarray of shape (n_features,)
        ``sqrt(var_)`` (1 without ``with_std``).
    bounds_ : ndarray of shape (n_features, 2)
        The bounds used (public, or released by the private quantiles).
    output_bounds_ : ndarray of shape (n_features, 2)
        Bounds of each transformed column.
    output_norm_bound_ : float
        Bound on the l2 norm of a transformed row.
    epsilon_, delta_, dp_event_, adjacency_, privacy_record_
        The guarantee, as accounted by dp-accounting (add/remove adjacency).
    noise_multiplier_ : float or None
        Noise standard deviation of the Gaussian release, in units of its
        sensitivity; None when only private quantiles were released (their
        exponential mechanism has no noise multiplier); 0 when nothing was
        released or at ``epsilon=inf``.
    privacy_caveats_ : list of str
        What was read from the private data outside the guarantee.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Defined when ``X`` has string column names.

    See Also
    --------
    sklearn.preprocessing.StandardScaler : The non-private scaler.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.preprocessing import DPStandardScaler
    >>> X = np.random.default_rng(0).normal(50.0, 10.0, size=(5000, 2))
    >>> scaler = DPStandardScaler(bounds=(0.0, 100.0), epsilon=1.0,
    ...                           random_state=0).fit(X)
    >>> bool(np.all(np.abs(scaler.mean_ - 50.0) < 1.0))
    True
    >>> bool(np.all(np.abs(scaler.scale_ - 10.0) < 1.0))
    True
    >>> scaler.epsilon_ <= 1.0
    True
    """

    _parameter_constraints = {
        **PrivateTransformerMixin._auto_bounds_constraints,
        "with_mean": ["boolean"],
        "with_std": ["boolean"],
        **PrivateTransformerMixin._privacy_constraints,
    }

    def __init__(
        self,
        bounds,
        *,
        epsilon=1.0,
        delta=1e-5,
        with_mean=True,
        with_std=True,
        auto_share=0.2,
        auto_quantiles=(0.25, 0.75),
        auto_fence=2.0,
        accountant="rdp",
        random_state=None,
    ):
        self.bounds = bounds
        self.epsilon = epsilon
        self.delta = delta
        self.with_mean = with_mean
        self.with_std = with_std
        self.auto_share = auto_share
        self.auto_quantiles = auto_quantiles
        self.auto_fence = auto_fence
        self.accountant = accountant
        self.random_state = random_state

    def _release_spec(self, n_features):
        # Private bounds ("auto"): the fences' quantiles. A delta >= 1/n
        # warns only with the Gaussian sum of the moments (the default of
        # _plan_fit), as for the imputer, the discretizer and the encoder:
        # the quantiles' exponential mechanism is pure epsilon-DP, and a fit
        # without centring or scaling on declared bounds releases nothing.
        return {
            "gaussian": bool(self.with_mean or self.with_std),
            "n_quantiles": self._n_fence_quantiles(n_features),
            "quantile_share": self.auto_share,
        }

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None):
        """Release the mean and variance of the clipped columns of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Private rows; NaN is missing.
        y : None
            Ignored.
        sample_weight : array-like of shape (n_samples,), default=None
            Public weight of each row (a weighted mean and variance, as in
            scikit-learn's ``StandardScaler``). Under privacy each weight is
            capped at 1 in the released counts and sums (a record counts at
            most once, whatever its weight), so pass weights on the scale
            of 1; the mean is the released weighted sum over the released
            weighted count. Without privacy the weights count as given.

        Returns
        -------
        self : DPStandardScaler
            The fitted transformer.
        """
        X, lower, upper, plan, rng, auto, weights = self._fit_bounds(X, sample_weight)
        # exact_moments reads the weights as given (it rescales them column
        # by column itself): which rows count is decided by the weights the
        # caller passed, not by a rescaling that can underflow them to 0.
        given_weights = weights
        if weights is not None and not plan.is_private:
            # Without privacy the weights count as given, and sums of weights
            # near the largest float overflow (1e308 each: mean_ 0 or NaN).
            # Statistics are ratios of weighted sums, so scale the weights by
            # a power of two (exactly) to a largest weight in [0.5, 1), as the
            # weighted quantiles do. Private weights are already capped at 1.
            weights = np.ldexp(weights, -np.frexp(np.max(weights))[1])
        n_features = X.shape[1]
        needs_moments = self.with_mean or self.with_std
        self.bounds_ = np.column_stack([lower, upper])
        centre, half = centre_and_half_width(lower, upper)
        mean_u, var_u = np.zeros(n_features), np.ones(n_features)
        if needs_moments:
            order = 2 if self.with_std else 1
            moments = noisy_moments(
                X, lower, upper, plan.gaussian, rng, order=order, weights=weights
            )
            mean_u, var_u = mean_and_variance(
                *moments,
                private=plan.is_private,
                noise_stds=moment_noise_stds(plan.gaussian, n_features, order=order),
            )
        mean = centre + half * mean_u
        # Half-widths beyond 1e154 square to inf: var_ then reads inf, but
        # the scale is computed in half-width units, unsquared. (Without
        # privacy var_u may underflow to 0, inf * 0 is NaN: that var_ is
        # replaced by the exact one below.)
        with np.errstate(over="ignore", invalid="ignore"):
            var = np.square(half) * var_u
        scale = half * np.sqrt(var_u)
        if needs_moments and not plan.is_private:
            # Without privacy the statistics are the exact two-pass ones:
            # the half-width units of the release round the mean to about
            # half * eps * sqrt(n), more than a narrow column's whole spread
            # when the bounds are wide. A column with no observed value
            # keeps the released ones.
            exact_mean, exact_var, exact_scale, seen = exact_moments(
                X, lower, upper, given_weights
            )
            mean = np.where(seen, exact_mean, mean)
            var = np.where(seen, exact_var, var)
            scale = np.where(seen, exact_scale, scale)
        self.mean_ = mean if self.with_mean else np.zeros(n_features)
        self.var_, self.scale_ = None, np.ones(n_features)
        if self.with_std:
            self.var_ = var
            # A zero variance (exact statistics of a constant column) scales
            # by 1, as scikit-learn does.
            self.scale_ = np.where(scale > 0, scale, 1.0)
        # The output bounds are the bounds standardized as transform
        # standardizes (monotone, so they bound every output), finite for
        # bounds more than the largest float apart too (_standardize).
        self._set_output_bounds(
            _standardize(lower, self.mean_, self.scale_, self.bounds_),
            _standardize(upper, self.mean_, self.scale_, self.bounds_),
        )
        what = "bounds from private quantiles, then " if auto else ""
        # The moments the fit reads (noisy_moments' order): none without
        # centring or scaling. Without privacy nothing is noised: they are
        # the exact two-pass ones (exact_moments).
        released = exact = "no moments (no centring or scaling)" + (
            "" if auto else ", no private read"
        )
        if self.with_std:
            released = (
                "clipped counts, sums and sums of squares of all columns, "
                "one Gaussian release"
            )
            exact = "exact two-pass means and variances of the clipped columns"
        elif self.with_mean:
            released = "clipped counts and sums of all columns, one Gaussian release"
            exact = "exact means of the clipped columns"
        self._record_fit(
            plan,
            f"{what}{released}",
            non_private=f"{OBSERVED_RANGE if auto else ''}{exact}",
            caveats=weights_caveats(sample_weight),
        )
        return self

    def transform(self, X):
        """Clip to ``bounds_`` and standardize.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to transform.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_features)
            Within ``output_bounds_`` column by column (NaN kept), hence
            finite; float32 for float32 ``X``, else float64 (computed in
            float64; float64 too where a column's ``output_bounds_`` hold no
            float32 value).
        """
        check_is_fitted(self)
        X, dtype = self._validate_transform(X)
        clipped = np.clip(X, self.bounds_[:, 0], self.bounds_[:, 1])
        return as_input_float(
            _standardize(clipped, self.mean_, self.scale_, self.bounds_),
            dtype,
            self.output_bounds_,
        )

    def inverse_transform(self, X):
        """Undo the standardization (not the clipping).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to transform.

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
            ``X * scale_ + mean_``, computed in float64 (in halves where
            ``bounds_`` are more than the largest float apart, which gives
            the same value); a value beyond the largest float of the output
            dtype saturates at it. float32 for float32 ``X``, else float64.
        """
        check_is_fitted(self)
        X, dtype = self._validate_inverse(X)
        wide = _wide(self.bounds_)
        # Overflow is either avoided by the halves or saturated below.
        with np.errstate(over="ignore", invalid="ignore"):
            out = X * self.scale_ + self.mean_
            if wide.any():
                halves = (X * (self.scale_ / 2) + self.mean_ / 2) * 2
                out = np.where(wide, halves, out)
        return saturated_input_float(np.clip(out, -_LARGEST, _LARGEST), dtype)


def _wide(bounds):
    """Whether each column's public ``bounds`` are more than the largest float apart."""
    with np.errstate(over="ignore"):
        return ~np.isfinite(bounds[:, 1] - bounds[:, 0])


def _standardize(values, mean, scale, bounds):
    """``(values - mean) / scale``, finite for values within finite ``bounds``.

    ``values - mean`` overflows when the public ``bounds`` are more than the
    largest float apart (a value near one bound, a mean near the other):
    those columns are computed in halves, ``(values / 2 - mean / 2) /
    (scale / 2)``, which cannot overflow (``|values - mean| <= upper -
    lower < 2 * largest``) and, halving being exact, is the same quotient.
    Other columns keep the plain form (the choice reads public bounds
    only). A quotient beyond the largest float (a scale under 1, only
    without privacy) saturates at it. Both forms are monotone in
    ``values``, so the standardized bounds bound the standardized values.
    """
    wide = _wide(bounds)
    with np.errstate(over="ignore"):
        out = (values - mean) / scale
        if wide.any():
            out = np.where(wide, (values / 2 - mean / 2) / (scale / 2), out)
    return np.clip(out, -_LARGEST, _LARGEST)
