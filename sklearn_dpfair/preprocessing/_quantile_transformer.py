# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Map columns to a uniform or normal distribution through private quantiles."""

from numbers import Integral

import numpy as np
from scipy import stats
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ..utils._sklearn_compat import Interval, StrOptions, _fit_context
from ._base import (
    PrivateTransformerMixin,
    as_input_float,
    check_array_entries,
    saturated_input_float,
)
from ._bounds import tiny_exponent

__all__ = ["DPQuantileTransformer"]

# As scikit-learn: the normal output is clipped just beyond the quantiles
# 1e-7 and 1 - 1e-7 (by float64's spacing at 1), so that the bounds of the
# data do not map to infinity, and the inverse, which sends an output whose
# uniform value is within 1e-7 of 0 or 1 to the end quantile, gives the
# bounds back exactly (clipped at 1 - 1e-7 itself, the normal CDF rounds to
# just inside that band).
_BOUNDS_THRESHOLD = 1e-7
_NORMAL_CLIP = (
    float(stats.norm.ppf(_BOUNDS_THRESHOLD - np.spacing(1))),
    float(stats.norm.ppf(1 - (_BOUNDS_THRESHOLD - np.spacing(1)))),
)


class DPQuantileTransformer(
    PrivateTransformerMixin, OneToOneFeatureMixin, TransformerMixin, BaseEstimator
):
    """Quantile transform from private quantiles of each column.

    The ``n_quantiles - 2`` interior quantiles of each column are released
    by the exponential mechanism on a public grid of its bounds (uniform
    *and* geometric, so a loose range such as income in ``[0, 1e7]`` still
    resolves a median of 5e4 to a few percent); the end points are the
    public bounds. ``transform`` clips to the bounds and interpolates, as
    scikit-learn's ``QuantileTransformer`` does, so the output lies in
    ``[0, 1]`` (uniform) or within about 5.2 standard deviations (normal):
    ``output_bounds_``.
    A float32 ``X`` is transformed to float32, as in scikit-learn, though
    computed in float64 (the released statistics are float64 whatever
    ``X``'s dtype); other dtypes give float64, float16 included (which
    scikit-learn keeps).

    At ``epsilon=inf`` the quantiles are the exact ones of scikit-learn
    (including the observed minimum and maximum as end points), so the two
    agree on data within the bounds with at least ``n_quantiles`` rows and
    fewer than ``subsample``. With fewer rows than ``n_quantiles``,
    scikit-learn lowers its number of quantiles to the number of rows; this
    transformer keeps ``n_quantiles`` (a public parameter its plan is made
    from), and the two interpolate between the same order statistics
    differently.

    Read more in the :ref:`User Guide <preprocessing>`.

    Parameters
    ----------
    bounds : array-like of shape (2,) or (n_features, 2)
        Public ``(lower, upper)`` of every column, or of each.
    n_quantiles : int, default=10
        Number of reference quantiles, end points included (>= 3). Each
        interior one costs budget: fewer, better ones often transform better.
        The ``n_quantiles * n_features`` quantiles must fit in one numpy
        array (at most ``2**60 - 1`` floats on 64-bit platforms), or
        ``fit`` and ``privacy_plan`` refuse it.
    output_distribution : {"uniform", "normal"}, default="uniform"
    epsilon : float, default=1.0
        Target epsilon; ``np.inf`` computes the exact quantiles.
    delta : float, default=1e-5
        Target delta in (0, 1).
    accountant : {"rdp"} or PrivacyLedger, default="rdp"
        The quantiles are zCDP releases, interpreted by the RDP accountant.
    random_state : None, int, RandomState or Generator, default=None
        None draws the noise from OS entropy (a release); anything else is a
        seed (not a release).

    Attributes
    ----------
    quantiles_ : ndarray of shape (n_quantiles, n_features)
        Released quantiles, sorted in each column.
    references_ : ndarray of shape (n_quantiles,)
        Their levels.
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
    sklearn.preprocessing.QuantileTransformer : The non-private transform.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.preprocessing import DPQuantileTransformer
    >>> income = np.random.default_rng(0).lognormal(10.8, 0.8, size=(20000, 1))
    >>> qt = DPQuantileTransformer(bounds=(0, 1e7), random_state=0).fit(income)
    >>> median = qt.quantiles_[np.argmin(np.abs(qt.references_ - 0.5)), 0]
    >>> bool(abs(np.log(median / np.median(income))) < 0.15)
    True
    """

    _parameter_constraints = {
        "bounds": ["array-like"],
        "n_quantiles": [Interval(Integral, 3, None, closed="left")],
        "output_distribution": [StrOptions({"uniform", "normal"})],
        **PrivateTransformerMixin._privacy_constraints,
    }

    def __init__(
        self,
        bounds,
        *,
        n_quantiles=10,
        output_distribution="uniform",
        epsilon=1.0,
        delta=1e-5,
        accountant="rdp",
        random_state=None,
    ):
        self.bounds = bounds
        self.n_quantiles = n_quantiles
        self.output_distribution = output_distribution
        self.epsilon = epsilon
        self.delta = delta
        self.accountant = accountant
        self.random_state = random_state

    def _release_spec(self, n_features):
        return self._edges_spec(n_features, self.n_quantiles, quantile=True)

    def _check_sizes(self, n_features):
        check_array_entries(
            int(self.n_quantiles) * n_features,
            {"n_quantiles": self.n_quantiles},
            "the quantiles of the columns",
        )

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Release the quantiles of each column.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Private rows; NaN is missing.
        y : None
            Ignored.

        Returns
        -------
        self : DPQuantileTransformer
            The fitted transformer.
        """
        self.quantiles_, plan = self._fit_edges(X, self.n_quantiles, quantile=True)
        self.references_ = np.linspace(0.0, 1.0, self.n_quantiles)
        low, high = (0.0, 1.0)
        if self.output_distribution == "normal":
            low, high = _NORMAL_CLIP
        n_features = self.quantiles_.shape[1]
        self._set_output_bounds(np.full(n_features, low), np.full(n_features, high))
        self._record_fit(
            plan,
            "private quantiles of each column (exponential mechanism on public grids)",
            # Without privacy the quantiles are exact (column_edges).
            non_private=(
                "exact quantiles of each clipped column (its observed minimum "
                "and maximum the end ones)"
            ),
        )
        return self

    def transform(self, X):
        """Map each column through its quantiles.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to transform.

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_features)
            Within ``output_bounds_`` (NaN kept); float32 for float32
            ``X``, else float64 (computed in float64).
        """
        check_is_fitted(self)
        X, dtype = self._validate_transform(X)
        out = np.empty_like(X)
        for j in range(X.shape[1]):
            out[:, j] = self._transform_column(X[:, j], self.quantiles_[:, j])
        return as_input_float(out, dtype, self.output_bounds_)

    def inverse_transform(self, X):
        """Map each column back through its quantiles, as scikit-learn does.

        Post-processing of the released ``quantiles_``: no privacy cost.
        Values beyond the output's range map to the first or last quantile.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Transformed rows.

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
            Within ``[quantiles_[0], quantiles_[-1]]`` column by column (NaN
            kept); float32 for float32 ``X`` (within them up to its
            rounding, and finite: a quantile beyond float32's range
            saturates at its largest value), else float64.
        """
        check_is_fitted(self)
        X, dtype = self._validate_inverse(X)
        out = np.empty_like(X)
        for j in range(X.shape[1]):
            out[:, j] = self._inverse_column(X[:, j], self.quantiles_[:, j])
        # Quantiles beyond float32's range (bounds such as (-1e300, 1e300))
        # would round to +-inf in float32: saturate at its largest finite
        # value instead, as DPStandardScaler.inverse_transform does. Not the
        # end quantiles themselves as bounds: a column whose quantiles hold
        # no float32 value would then stay float64.
        return saturated_input_float(out, dtype)

    def _inverse_column(self, y, quantiles):
        # As scikit-learn: back to the uniform scale, interpolate the
        # references onto the quantiles, and send the ends (within the
        # normal output's threshold) to the end quantiles.
        with np.errstate(invalid="ignore"):
            if self.output_distribution == "normal":
                y = stats.norm.cdf(y)
                low = y - _BOUNDS_THRESHOLD < 0.0
                high = y + _BOUNDS_THRESHOLD > 1.0
            else:
                low, high = y == 0.0, y == 1.0
        missing = np.isnan(y)
        # Quantiles such as the bounds (-1e308, 1e308) overflow the
        # interpolation's slopes (their differences over the references'):
        # huge ones are interpolated in exactly rescaled units, clipped there
        # (a rounding past the last quantile would overflow back), then
        # clipped again into the end quantiles, which rescaling keeps.
        k = _huge_exponent(quantiles, len(self.references_))
        qs = np.ldexp(quantiles, k)
        x = np.interp(np.where(missing, 0.0, y), self.references_, qs)
        if k:
            x = np.ldexp(np.clip(x, qs[0], qs[-1]), -k)
            x = np.clip(x, quantiles[0], quantiles[-1])
        x = np.where(high, quantiles[-1], x)
        x = np.where(low, quantiles[0], x)
        return np.where(missing, np.nan, x)

    def _transform_column(self, x, quantiles):
        # As scikit-learn: the mean of a forward and a backward
        # interpolation, so that repeated quantiles (a point mass) map to
        # the middle of their references; values beyond the end points map
        # to 0 and 1.
        refs = self.references_
        missing = np.isnan(x)
        v = np.where(missing, quantiles[0], x)
        # Quantiles a subnormal apart (bounds such as (0, 1e-300)) overflow
        # the interpolation's slopes, and huge ones (bounds such as
        # (-1e308, 1e308)) their differences: both are interpolated in
        # exactly rescaled units (values beyond the end points, set below,
        # clipped first so that none overflows).
        k = tiny_exponent(quantiles) or _huge_exponent(quantiles, len(refs))
        vs, qs = v, quantiles
        if k:
            vs = np.ldexp(np.clip(v, quantiles[0], quantiles[-1]), k)
            qs = np.ldexp(quantiles, k)
        y = 0.5 * (np.interp(vs, qs, refs) - np.interp(-vs, -qs[::-1], -refs[::-1]))
        y = np.where(v <= quantiles[0], 0.0, np.where(v >= quantiles[-1], 1.0, y))
        if self.output_distribution == "normal":
            y = np.clip(stats.norm.ppf(y), *_NORMAL_CLIP)
        return np.where(missing, np.nan, y)


def _huge_exponent(quantiles, n_references):
    """A power-of-two exponent that brings huge quantiles to order 1, or 0.

    Linear interpolation between quantiles computes their differences, and
    their slopes over references ``1 / (n_references - 1)`` apart: both
    overflow for quantiles near the largest float (bounds such as
    ``(-1e308, 1e308)``). Quantiles that large are scaled by ``2**k``, with
    their largest magnitude in ``[0.5, 1)``, where neither can overflow
    (scaling by a power of two is exact, short of underflow, which can only
    round values negligible beside the largest). Public: from the released
    quantiles.

    Parameters
    ----------
    quantiles : ndarray of shape (n_references,)
        The released quantiles of a column, sorted.
    n_references : int
        Number of references (and quantiles).

    Returns
    -------
    k : int
        Zero where no difference or slope can overflow.
    """
    largest = float(np.max(np.abs(quantiles)))
    if largest <= np.finfo(np.float64).max / (2.0 * (n_references - 1)):
        return 0
    return -int(np.frexp(largest)[1])
