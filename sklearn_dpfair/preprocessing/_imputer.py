# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Imputation of missing values by a private mean or median."""

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from ..utils._sklearn_compat import StrOptions, _fit_context
from ._base import PrivateTransformerMixin
from ._bounds import bounded_grid, check_bounds
from ._moments import noisy_moments
from ._plan import plan_releases
from ._quantiles import column_quantiles

__all__ = ["DPSimpleImputer"]


class DPSimpleImputer(
    PrivateTransformerMixin, OneToOneFeatureMixin, TransformerMixin, BaseEstimator
):
    """Replace missing values (NaN) by a differentially private mean or median.

    ``strategy="mean"``: the counts of observed values and their sums,
    clipped to public bounds, of all columns in one Gaussian release.
    ``strategy="median"``: one private quantile per column (exponential
    mechanism on a public grid of the bounds, fine in linear and log scale).
    ``transform`` clips observed values to the bounds and fills the missing
    ones, so ``output_bounds_`` is the bounds.

    Read more in the :ref:`User Guide <preprocessing>`.

    Parameters
    ----------
    bounds : array-like of shape (2,) or (n_features, 2)
        Public ``(lower, upper)`` of every column, or of each.
    strategy : {"mean", "median"}, default="mean"
    epsilon : float, default=1.0
        Target epsilon; ``np.inf`` computes the exact statistic.
    delta : float, default=1e-5
        Target delta in (0, 1).
    accountant : {"rdp", "pld"} or PrivacyLedger, default="rdp"
        ``strategy="median"`` needs "rdp".
    random_state : None, int, RandomState or Generator, default=None
        None draws the noise from OS entropy (a release); anything else is a
        seed (not a release).

    Attributes
    ----------
    statistics_ : ndarray of shape (n_features,)
        The fill value of each column (the midpoint of its bounds when the
        column had no observed value at ``epsilon=inf``).
    bounds_ : ndarray of shape (n_features, 2)
    output_bounds_ : ndarray of shape (n_features, 2)
    output_norm_bound_ : float
    epsilon_, delta_, dp_event_, adjacency_, privacy_record_
        The guarantee (add/remove adjacency).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

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
    """

    _parameter_constraints = {
        "bounds": ["array-like"],
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
        accountant="rdp",
        random_state=None,
    ):
        self.bounds = bounds
        self.strategy = strategy
        self.epsilon = epsilon
        self.delta = delta
        self.accountant = accountant
        self.random_state = random_state

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
        X = validate_data(self, X, dtype=np.float64, ensure_all_finite="allow-nan")
        n_features = X.shape[1]
        lower, upper = check_bounds(self.bounds, n_features)
        mean = self.strategy == "mean"
        plan = plan_releases(
            self.epsilon,
            self.delta,
            self._accountant_kind(),
            gaussian=mean,
            n_quantiles=0 if mean else n_features,
        )
        rng = self._start_fit(X.shape[0], uses_delta=mean)
        centre, half = (lower + upper) / 2.0, (upper - lower) / 2.0
        if mean:
            count, sum_u = noisy_moments(X, lower, upper, plan.gaussian, rng, order=1)
            # A count below 1 is noise (post-processing); the mean of values
            # in the bounds lies in them.
            stats = centre + half * np.clip(sum_u / np.maximum(count, 1.0), -1.0, 1.0)
            if not plan.is_private:
                stats = np.where(count > 0, stats, centre)
            what = "clipped counts and sums of all columns, one Gaussian release"
        else:
            grids = [bounded_grid(lo, hi) for lo, hi in zip(lower, upper)]
            clipped = np.clip(X, lower, upper)
            stats = column_quantiles(clipped, [0.5], grids, plan.quantile_rho, rng)[0]
            stats = np.where(np.isnan(stats), centre, stats)
            what = "one private median per column (exponential mechanism)"
        self.statistics_ = stats
        self.bounds_ = np.column_stack([lower, upper])
        self._set_output_bounds(lower, upper)
        self._set_privacy_record(plan.record(f"DPSimpleImputer: {what}"))
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
            Clipped to ``bounds_``, missing values filled.
        """
        check_is_fitted(self)
        X = validate_data(
            self, X, dtype=np.float64, ensure_all_finite="allow-nan", reset=False
        )
        clipped = np.clip(X, self.bounds_[:, 0], self.bounds_[:, 1])
        return np.where(np.isnan(clipped), self.statistics_, clipped)
