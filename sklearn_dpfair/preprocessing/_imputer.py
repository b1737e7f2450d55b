# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Imputation of missing values by a private mean or median."""


import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ..utils._sklearn_compat import StrOptions, _fit_context
from ._base import OBSERVED_RANGE, PrivateTransformerMixin, as_input_float
from ._bounds import centre_and_half_width
from ._moments import exact_moments, mean_and_variance, noisy_moments
from ._quantiles import bounded_quantiles

__all__ = ["DPSimpleImputer"]


class DPSimpleImputer(
    PrivateTransformerMixin, OneToOneFeatureMixin, TransformerMixin, BaseEstimator
):
    """Replace missing values (NaN) by a differentially private mean or median.

    ``strategy="mean"``: the counts of observed values and their sums,
    clipped to public bounds, of all columns in one Gaussian release.
    ``strategy="median"``: one private quantile per column (exponential
    mechanism on a public grid of the bounds, fine in linear and log scale).
    ``bounds="auto"`` first spends a declared share of the budget on private
    quartiles of every column's observed values, over a public grid of
    ``[-1e8, 1e8]``, and takes fences ``auto_fence`` interquartile ranges
    beyond them as the bounds (as :class:`DPStandardScaler` does; a column
    whose interquartile range is under about 5% of its magnitude, a year
    near 2000, needs declared bounds).
    ``transform`` clips observed values to the bounds and fills the missing
    ones, so ``output_bounds_`` is the bounds.
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
        column (the observed range at ``epsilon=inf``, where nothing is
        clipped).
    strategy : {"mean", "median"}, default="mean"
    epsilon : float, default=1.0
        Target epsilon; ``np.inf`` computes the exact statistic.
    delta : float, default=1e-5
        Target delta in (0, 1).
    auto_share : float, default=0.2
        Share of the zCDP budget spent on the bounds when ``bounds="auto"``
        and ``strategy="mean"`` (with ``"median"`` every draw gets the same
        budget: the two fences and the median of each column).
    auto_quantiles : tuple of float, default=(0.25, 0.75)
        Levels ``(a, b)`` of the private quantiles when ``bounds="auto"``.
    auto_fence : float, default=2.0
        The bounds are ``a - auto_fence (b - a)`` and ``b + auto_fence (b -
        a)`` in the units of the quantiles.
    accountant : {"rdp", "pld"} or PrivacyLedger, default="rdp"
        ``strategy="median"`` and ``bounds="auto"`` need "rdp".
    random_state : None, int, RandomState or Generator, default=None
        None draws the noise from OS entropy (a release); anything else is a
        seed (not a release).

    Attributes
    ----------
    statistics_ : ndarray of shape (n_features,)
        The fill value of each column (the midpoint of its bounds when the
        column had no observed value at ``epsilon=inf``), float64 whatever
        ``X``'s dtype (scikit-learn's median of a float32 ``X`` is float32).
    bounds_ : ndarray of shape (n_features, 2)
    output_bounds_ : ndarray of shape (n_features, 2)
    output_norm_bound_ : float
    epsilon_, delta_, dp_event_, adjacency_, privacy_record_
        The guarantee (add/remove adjacency).
    noise_multiplier_ : float or None
        Noise standard deviation of the Gaussian release, in units of its
        sensitivity; None when only private quantiles were released (their
        exponential mechanism has no noise multiplier); 0 when nothing was
        released or at ``epsilon=inf``.
    privacy_caveats_ : list of str
        What was read from the private data outside the guarantee.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (`n_features_in_`,)

    See Also
    --------
    sklearn.impute.SimpleImputer : The non-private imputer.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.preprocessing import DPSimpleImputer
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(20, 60, size=(4000, 1))
    >>> X[::10] = np.nan
    >>> imp = DPSimpleImputer(bounds=(0, 100), random_state=0).fit(X)
    >>> bool(abs(imp.statistics_[0] - 40.0) < 1.0)
    True
    >>> bool(np.isnan(imp.transform(X)).any())
    False
    >>> auto = DPSimpleImputer(bounds="auto", random_state=0).fit(X)
    >>> bool(abs(auto.statistics_[0] - 40.0) < 1.0)
    True
    """

    _parameter_constraints = {
        **PrivateTransformerMixin._auto_bounds_constraints,
        "strategy": [StrOptions({"mean", "median"})],
        **PrivateTransformerMixin._privacy_constraints,
    }

    def __init__(
        self,
        bounds,
        *,
        strategy="mean",
        epsilon=1.0,
        delta=1e-5,
        auto_share=0.2,
        auto_quantiles=(0.25, 0.75),
        auto_fence=2.0,
        accountant="rdp",
        random_state=None,
    ):
        self.bounds = bounds
        self.strategy = strategy
        self.auto_share = auto_share
        self.auto_quantiles = auto_quantiles
        self.auto_fence = auto_fence
        self.epsilon = epsilon
        self.delta = delta
        self.accountant = accountant
        self.random_state = random_state

    def _release_spec(self, n_features):
        # The mean: one Gaussian sum; the median: one quantile a column;
        # private bounds ("auto"): the fences' quantiles too.
        mean = self.strategy == "mean"
        return {
            "gaussian": mean,
            "n_quantiles": self._n_fence_quantiles(n_features)
            + (0 if mean else n_features),
            "quantile_share": self.auto_share,
            "uses_delta": mean,
        }

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Release the fill value of each column.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Private rows; NaN is missing.
        y : None
            Ignored.

        Returns
        -------
        self : DPSimpleImputer
            The fitted transformer.
        """
        X, lower, upper, plan, rng, auto, _ = self._fit_bounds(X)
        mean = self.strategy == "mean"
        centre, half = centre_and_half_width(lower, upper)
        if mean:
            moments = noisy_moments(X, lower, upper, plan.gaussian, rng, order=1)
            mean_u, _ = mean_and_variance(*moments, private=plan.is_private)
            # A column with no observed value has a mean of 0 without
            # privacy: its midpoint.
            stats = centre + half * mean_u
            if not plan.is_private:
                # The exact two-pass mean, as the scaler's: in half-width
                # units a 37.3 +- 0.01 column in bounds (0, 2e12) was filled
                # 1e-4 off (0.01 sd).
                exact_mean, _, _, seen = exact_moments(X, lower, upper)
                stats = np.where(seen, exact_mean, stats)
            what = "clipped counts and sums of all columns, one Gaussian release"
            exact = "exact means of the clipped columns"
        else:
            stats = bounded_quantiles(X, lower, upper, [0.5], plan.quantile_rho, rng)[0]
            stats = np.where(np.isnan(stats), centre, stats)
            what = "one private median per column (exponential mechanism)"
            exact = "exact medians of the clipped columns"
        # centre + half * mean_u rounds, and landed ulps beyond the bounds
        # (7 of 300 random bounds at epsilon=0.5): output_bounds_ must bound
        # every filled value. Clipping the released value is post-processing.
        self.statistics_ = np.clip(stats, lower, upper)
        self.bounds_ = np.column_stack([lower, upper])
        self._set_output_bounds(lower, upper)
        if auto:
            what = f"bounds from private quantiles, then {what}"
            exact = f"{OBSERVED_RANGE}{exact}"
        self._record_fit(plan, what, non_private=exact)
        return self

    def transform(self, X):
        """Clip to ``bounds_`` and fill missing values with ``statistics_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to transform.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_features)
            Clipped to ``bounds_``, missing values filled; float32 for
            float32 ``X`` (the fill values rounded to float32 within
            ``bounds_``; float64 where a column's ``bounds_`` hold no
            float32 value), else float64.
        """
        check_is_fitted(self)
        X, dtype = self._validate_transform(X)
        clipped = np.clip(X, self.bounds_[:, 0], self.bounds_[:, 1])
        filled = np.where(np.isnan(clipped), self.statistics_, clipped)
        return as_input_float(filled, dtype, self.output_bounds_)
