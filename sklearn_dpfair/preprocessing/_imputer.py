# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Imputation of missing values by a private mean or median."""

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ..utils._sklearn_compat import StrOptions, _fit_context
from ._base import PrivateTransformerMixin
from ._bounds import centre_and_half_width
from ._moments import mean_and_variance, noisy_moments
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
    def _release_spec(self, n_features):
        # The mean: one Gaussian sum; the median: one quantile a column.
        mean = self.strategy == "mean"
        return {"gaussian": mean, "n_quantiles": 0 if mean else n_features}

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
        X, lower, upper = self._validate_bounded(X)
        mean = self.strategy == "mean"
        plan, rng = self._plan_fit(X.shape[0], X.shape[1])
        centre, half = centre_and_half_width(lower, upper)
        if mean:
            moments = noisy_moments(X, lower, upper, plan.gaussian, rng, order=1)
            mean_u, _ = mean_and_variance(*moments, private=plan.is_private)
            # A column with no observed value has a mean of 0 without
            # privacy: its midpoint.
            stats = centre + half * mean_u
            what = "clipped counts and sums of all columns, one Gaussian release"
        else:
            stats = bounded_quantiles(X, lower, upper, [0.5], plan.quantile_rho, rng)[0]
            stats = np.where(np.isnan(stats), centre, stats)
            what = "one private median per column (exponential mechanism)"
        self.statistics_ = stats
        self.bounds_ = np.column_stack([lower, upper])
        self._set_output_bounds(lower, upper)
        self._record_fit(plan, what)
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
        X = self._validate_floats(X, reset=False)
        clipped = np.clip(X, self.bounds_[:, 0], self.bounds_[:, 1])
        return np.where(np.isnan(clipped), self.statistics_, clipped)
