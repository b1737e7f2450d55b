# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""B-spline features on private quantile knots (or public uniform ones)."""

from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.preprocessing import SplineTransformer
from sklearn.utils.validation import _check_feature_names_in, check_is_fitted

from ..privacy._record import weights_caveats
from ..utils._sklearn_compat import Interval, StrOptions, _fit_context
from ._base import PrivateTransformerMixin, as_input_float, check_array_entries
from ._bounds import centre_and_half_width, tiny_exponent

__all__ = ["DPSplineTransformer"]

# Knots must increase strictly: released quantiles that coincide are moved
# apart by this fraction of the width (post-processing).
_KNOT_GAP = 1e-9


class DPSplineTransformer(PrivateTransformerMixin, TransformerMixin, BaseEstimator):
    """B-spline features of each column on private quantile knots.

    ``knots="quantile"`` releases the ``n_knots - 2`` inner knots of each
    column as private quantiles (exponential mechanism on a public grid of
    the bounds); ``knots="uniform"`` spaces them evenly over the public
    bounds and reads no private value (``epsilon_ == 0``). The features are
    those of scikit-learn's ``SplineTransformer`` with these explicit knots
    (a data-independent transform), on values clipped to the bounds, so
    every output lies in ``[0, 1]`` (B-splines are non-negative and sum to
    1): ``output_bounds_``.
    A float32 ``X`` is transformed to float32, as in scikit-learn, though
    computed in float64 (the released statistics are float64 whatever
    ``X``'s dtype); other dtypes give float64, float16 included (which
    scikit-learn keeps).

    Read more in the :ref:`User Guide <preprocessing>`.

    Parameters
    ----------
    bounds : array-like of shape (2,) or (n_features, 2)
        Public ``(lower, upper)`` of every column, or of each: the first and
        last knots. Refused before the data are read when too wide (the
        knots scikit-learn adds beyond them overflow) or too narrow to hold
        ``n_knots`` distinct knots 16 float spacings apart.
    n_knots : int, default=5
        Number of knots, end points included (>= 3).
    degree : int, default=3
        Degree of the polynomial pieces. With ``n_knots``, it must leave
        the arrays of the splines within what one numpy array holds (at
        most ``2**60 - 1`` floats on 64-bit platforms): the
        ``n_knots + 2 * degree`` knots of each column and the
        ``(n_knots + degree - 1)**2`` coefficients of scikit-learn's
        ``SplineTransformer``; ``fit`` and ``privacy_plan`` refuse more.
    knots : {"quantile", "uniform"}, default="quantile"
    include_bias : bool, default=True
        Keep all ``n_knots + degree - 1`` splines of each column (else drop
        the last, as scikit-learn does).
    epsilon : float, default=1.0
        Target epsilon; ``np.inf`` computes the exact quantiles (those of
        scikit-learn's ``knots="quantile"``), except where they coincide
        (ties in the data, e.g. integer values): knots must increase
        strictly, so coinciding ones are moved apart (by a billionth of the
        width, or a few float spacings), where scikit-learn keeps repeated
        knots, and the features near them differ from scikit-learn's.
    delta : float, default=1e-5
        Target delta in (0, 1).
    accountant : {"rdp"} or PrivacyLedger, default="rdp"
        The quantiles are zCDP releases, interpreted by the RDP accountant.
    random_state : None, int, RandomState or Generator, default=None
        None draws the noise from OS entropy (a release); anything else is a
        seed (not a release).

    Attributes
    ----------
    knots_ : ndarray of shape (n_knots, n_features)
        The knots used.
    spline_ : sklearn.preprocessing.SplineTransformer
        The non-private transformer built on ``knots_`` (fitted on them, not
        on the data). Knots below ``2**-900`` in magnitude (bounds such as
        ``(0, 1e-300)``) are a subnormal apart, which B-splines cannot
        divide by: ``spline_`` is then built on ``knots_`` times a power of
        two that brings them to order 1 (exact), and ``transform`` scales
        its input likewise.
    n_features_out_ : int
    bounds_ : ndarray of shape (n_features, 2)
        The public bounds of each column, as used.
    output_bounds_ : ndarray of shape (`n_features_out_`, 2)
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
    sklearn.preprocessing.SplineTransformer : The non-private transformer.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.preprocessing import DPSplineTransformer
    >>> X = np.random.default_rng(0).normal(50, 10, size=(5000, 1))
    >>> spl = DPSplineTransformer(bounds=(0, 100), random_state=0).fit(X)
    >>> spl.transform(X).shape
    (5000, 7)
    >>> bool(np.allclose(spl.transform(X).sum(axis=1), 1.0))
    True
    """

    _parameter_constraints = {
        "bounds": ["array-like"],
        "n_knots": [Interval(Integral, 3, None, closed="left")],
        "degree": [Interval(Integral, 0, None, closed="left")],
        "knots": [StrOptions({"quantile", "uniform"})],
        "include_bias": ["boolean"],
        **PrivateTransformerMixin._privacy_constraints,
    }

    def __init__(
        self,
        bounds,
        *,
        n_knots=5,
        degree=3,
        knots="quantile",
        include_bias=True,
        epsilon=1.0,
        delta=1e-5,
        accountant="rdp",
        random_state=None,
    ):
        self.bounds = bounds
        self.n_knots = n_knots
        self.degree = degree
        self.knots = knots
        self.include_bias = include_bias
        self.epsilon = epsilon
        self.delta = delta
        self.accountant = accountant
        self.random_state = random_state

    def _release_spec(self, n_features):
        return self._edges_spec(n_features, self.n_knots, quantile=self.knots == "quantile")

    def _check_sizes(self, n_features):
        # scikit-learn's SplineTransformer extends each column's knots by
        # `degree` on each side and evaluates its n_splines B-splines
        # through an identity matrix of their coefficients.
        n_knots, degree = int(self.n_knots), int(self.degree)
        check_array_entries(
            max((n_knots + 2 * degree) * n_features, (n_knots + degree - 1) ** 2),
            {"n_knots": self.n_knots, "degree": self.degree},
            "the knots and B-spline coefficients of the columns",
        )

    def _check_public_bounds(self, n_features):
        # The fit and its plan both refuse bounds the splines cannot use.
        lower, upper = super()._check_public_bounds(n_features)
        _check_spline_bounds(lower, upper, self.degree, self.n_knots)
        return lower, upper

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None):
        """Release the knots of each column.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Private rows.
        y : None
            Ignored.
        sample_weight : array-like of shape (n_samples,), default=None
            Public weight of each row in the quantiles' counts
            (``knots="quantile"``; ``"uniform"`` only validates them).
            Under privacy each weight is capped at 1 (a record counts at
            most once, whatever its weight), so pass weights on the scale
            of 1. At ``epsilon=np.inf`` they count as given and the knots
            are scikit-learn's ``SplineTransformer(knots="quantile")``
            weighted knots (the weighted inverted CDF), on data within the
            bounds; unweighted knots, and uniform weights, interpolate
            linearly, as scikit-learn's unweighted ones.

        Returns
        -------
        self : DPSplineTransformer
            The fitted transformer.
        """
        quantile = self.knots == "quantile"
        # Without privacy: scikit-learn's percentiles (which decide the ties
        # of integer weights).
        knots, plan = self._fit_edges(
            X, self.n_knots, quantile=quantile, sample_weight=sample_weight,
            exact_levels=lambda n_edges: 100 * np.linspace(0, 1, n_edges) / 100,
        )
        if quantile:
            knots = _strictly_increasing(knots, self.bounds_[:, 1] - self.bounds_[:, 0])
        self.knots_ = knots
        # Tiny knots in exactly rescaled units (public: from the knots).
        self._knot_exponent = tiny_exponent(knots)
        # Built and fitted on the knots only: a data-independent transform.
        self.spline_ = SplineTransformer(
            knots=np.ldexp(knots, self._knot_exponent),
            degree=self.degree,
            include_bias=self.include_bias,
            extrapolation="constant",
        ).fit(np.ldexp(knots, self._knot_exponent))
        self.n_features_out_ = self.spline_.n_features_out_
        # The splines of a column are non-negative and sum to 1.
        self._set_unit_output_bounds(self.n_features_out_, knots.shape[1])
        what = (
            "private quantile knots (exponential mechanism on public grids)"
            if quantile
            else "uniform knots of the public bounds (no private read)"
        )
        # Without privacy the quantile knots are exact (column_edges).
        exact = (
            "exact quantile knots of the clipped columns (their observed "
            "minimum and maximum the end knots)"
            if quantile
            else what
        )
        self._record_fit(
            plan,
            what,
            non_private=exact,
            caveats=weights_caveats(sample_weight if quantile else None),
        )
        return self

    def transform(self, X):
        """B-spline features of the clipped columns.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to transform.

        Returns
        -------
        X_out : ndarray of shape (n_samples, `n_features_out_`)
            Within ``[0, 1]``; float32 for float32 ``X``, else float64
            (computed in float64).
        """
        check_is_fitted(self)
        X, dtype = self._validate_transform(X)
        # Clipped to the first and last knots: the features of a value
        # beyond the bounds are those of the bound.
        X = np.clip(X, self.knots_[0], self.knots_[-1])
        out = self.spline_.transform(np.ldexp(X, self._knot_exponent))
        return as_input_float(out, dtype, self.output_bounds_)

    def get_feature_names_out(self, input_features=None):
        """Output feature names, ``{feature}_sp_{k}`` as scikit-learn names them.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Input feature names (``feature_names_in_`` or ``x0, x1, ...`` when None).

        Returns
        -------
        feature_names_out : ndarray of str
            One name per output column.
        """
        check_is_fitted(self)
        names = _check_feature_names_in(self, input_features)
        return self.spline_.get_feature_names_out(names)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags


def _check_spline_bounds(lower, upper, degree, n_knots):
    """Refuse public bounds too wide or too narrow for the splines' knots.

    Parameters
    ----------
    lower, upper : ndarray of shape (n_features,)
        Checked public bounds (:func:`~._bounds.check_bounds`).
    degree : int
        Degree of the splines.
    n_knots : int
        Number of knots, end points included.

    Raises
    ------
    ValueError
        If the knots scikit-learn adds beyond the bounds overflow, or if
        ``n_knots`` distinct knots do not fit between them.
    """
    # scikit-learn's B-splines add `degree` knots beyond each end, each
    # an end spacing (at most the width) further out: they must stay
    # finite, or every feature is NaN. A public check of the bounds.
    _, half = centre_and_half_width(lower, upper)
    with np.errstate(over="ignore"):
        reach = max(degree, 1) * half
        ends = 2.0 * np.concatenate([lower / 2.0 - reach, upper / 2.0 + reach])
    if not np.isfinite(ends).all():
        raise ValueError(
            f"bounds are too wide for splines of degree {degree}: the "
            "knots added beyond them (degree widths away) overflow the "
            "largest float; narrow the bounds."
        )
    # The knots must increase strictly: n_knots floats spaced by at least
    # a few float spacings of the bounds' magnitude (what
    # _strictly_increasing moves coinciding knots apart by) must fit
    # between them, or the released knots would coincide. With 16
    # spacings a gap, moved-apart knots fill at most a fifth of the
    # width beyond it, and stay apart after rescaling into the bounds.
    spacing = np.spacing(np.maximum(np.abs(lower), np.abs(upper)))
    if np.any(half < 8.0 * (n_knots - 1) * spacing):
        raise ValueError(
            f"bounds are too narrow for {n_knots} knots: the floats "
            "between them cannot hold that many distinct knots, a few "
            "float spacings apart (16 spacings of their magnitude each); "
            "widen the bounds or lower n_knots."
        )


def _strictly_increasing(knots, width):
    """Move coinciding knots apart, keeping the end knots in place.

    Post-processing of released knots (and of the public ``width`` of the
    bounds): no privacy cost. Knots that coincide are moved apart by a
    billionth of the knots' own span (the bounds' width in a private fit,
    whose end knots are the bounds), or by a few float spacings of their
    magnitude, whichever is larger, then rescaled into ``[first, last]``.
    A column whose span is too short for that (a constant column without
    privacy, or one a few float spacings wide) is given evenly spaced knots
    from its first, a billionth of ``width`` (or a few float spacings)
    apart: its last knot moves.

    Parameters
    ----------
    knots : ndarray of shape (n_knots, n_features)
        Released knots, sorted in each column.
    width : ndarray of shape (n_features,)
        Width of each column's public bounds.

    Returns
    -------
    knots : ndarray of shape (n_knots, n_features)
        Strictly increasing in each column.
    """
    n_knots = knots.shape[0]
    first, last = knots[0].copy(), knots[-1].copy()
    # The gap is relative to the knots' own span, not to the declared
    # bounds: without privacy the end knots are the observed minimum and
    # maximum, and a gap of the bounds' width would respace every knot of a
    # column that fills a small part of wide bounds.
    span = last - first
    # At least a few float spacings of the knots' magnitude: a column near
    # 1.7e9 would otherwise add less than one spacing and leave them equal.
    floor = 4.0 * np.spacing(np.max(np.abs(knots), axis=0))
    gap = np.maximum(span * _KNOT_GAP, floor)
    # A span under 16 float spacings per gap (the least _check_spline_bounds
    # allows the bounds, so a private fit, whose span is the bounds' width,
    # never lands here) is too short: after rescaling, knots a few spacings
    # apart could round onto each other. Such a column is treated as a
    # constant one, with a width of its own.
    short = span < 4.0 * (n_knots - 1) * floor
    knots = np.where(short, first, knots)
    gap = np.where(short, np.maximum(width * _KNOT_GAP, floor), gap)
    last = np.where(short, first + gap * n_knots, last)
    for k in range(1, n_knots):
        knots[k] = np.maximum(knots[k], knots[k - 1] + gap)
    # Knots pushed past the last one: rescale into [first, last].
    knots = first + (knots - first) * ((last - first) / (knots[-1] - first))
    knots[-1] = last
    return knots
