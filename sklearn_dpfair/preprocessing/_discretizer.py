# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Binning of continuous columns with private quantile edges or public uniform ones."""

from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import (
    _check_feature_names_in,
    check_array,
    check_is_fitted,
)

from ..privacy._record import weights_caveats
from ..utils._array_api import host_input
from ..utils._sklearn_compat import Interval, StrOptions, _fit_context
from ._base import (
    PrivateTransformerMixin,
    as_input_float,
    check_array_entries,
    saturated_input_float,
)
from ._bounds import centre_and_half_width

__all__ = ["DPKBinsDiscretizer"]


class DPKBinsDiscretizer(PrivateTransformerMixin, TransformerMixin, BaseEstimator):
    """Bin continuous columns at private quantiles (or public uniform edges).

    ``strategy="quantile"`` releases the ``n_bins - 1`` inner edges of each
    column as private quantiles (exponential mechanism on a public grid of
    the bounds, fine in linear and log scale, so a loose range such as
    income in ``[0, 1e7]`` still gives bins of about equal counts);
    ``strategy="uniform"`` cuts the public bounds into equal widths and
    reads no private value (``epsilon_ == 0``). Values are clipped to the
    bounds, so every value falls in a bin. A float32 ``X`` is transformed
    to float32 and other dtypes to float64, as by scikit-learn's
    ``KBinsDiscretizer(dtype=None)``.

    Read more in the :ref:`User Guide <preprocessing>`.

    Parameters
    ----------
    bounds : array-like of shape (2,) or (n_features, 2)
        Public ``(lower, upper)`` of every column, or of each.
    n_bins : int, default=5
        Number of bins of every column (>= 2); always kept, even when
        released edges coincide (a bin of zero width), since dropping one
        would depend on the data. A zero-width bin holds no value, except
        the last: with the top edges equal, it holds the values equal to
        the top edge (as the last bin is closed on the right). The
        ``(n_bins + 1) * n_features`` edges must fit in one numpy array (at
        most ``2**60 - 1`` floats on 64-bit platforms), or ``fit`` and
        ``privacy_plan`` refuse it.
    encode : {"onehot-dense", "ordinal"}, default="onehot-dense"
        One-hot columns (dense) or the bin index.
    strategy : {"quantile", "uniform"}, default="quantile"
    epsilon : float, default=1.0
        Target epsilon; ``np.inf`` computes the exact quantiles (linear
        interpolation, scikit-learn's ``quantile_method="linear"``, without
        weights; see ``fit`` for weighted rows).
    delta : float, default=1e-5
        Target delta in (0, 1).
    accountant : {"rdp"} or PrivacyLedger, default="rdp"
        The quantiles are zCDP releases, interpreted by the RDP accountant.
    random_state : None, int, RandomState or Generator, default=None
        None draws the noise from OS entropy (a release); anything else is a
        seed (not a release).

    Attributes
    ----------
    bin_edges_ : ndarray of dtype object, shape (n_features,)
        The ``n_bins + 1`` edges of each column, as scikit-learn holds them.
    n_bins_ : ndarray of shape (n_features,)
    bounds_ : ndarray of shape (n_features, 2)
        The public bounds of each column, as used.
    output_bounds_ : ndarray of shape (n_features_out, 2)
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
    sklearn.preprocessing.KBinsDiscretizer : The non-private discretizer.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.preprocessing import DPKBinsDiscretizer
    >>> income = np.random.default_rng(0).lognormal(10.8, 0.8, size=(20000, 1))
    >>> kb = DPKBinsDiscretizer(bounds=(0, 1e7), n_bins=4, encode="ordinal",
    ...                         random_state=0).fit(income)
    >>> counts = np.bincount(kb.transform(income)[:, 0].astype(int), minlength=4)
    >>> bool(np.all(np.abs(counts / 20000 - 0.25) < 0.02))
    True
    """

    _parameter_constraints = {
        "bounds": ["array-like"],
        "n_bins": [Interval(Integral, 2, None, closed="left")],
        "encode": [StrOptions({"onehot-dense", "ordinal"})],
        "strategy": [StrOptions({"quantile", "uniform"})],
        **PrivateTransformerMixin._privacy_constraints,
    }

    def __init__(
        self,
        bounds,
        *,
        n_bins=5,
        encode="onehot-dense",
        strategy="quantile",
        epsilon=1.0,
        delta=1e-5,
        accountant="rdp",
        random_state=None,
    ):
        self.bounds = bounds
        self.n_bins = n_bins
        self.encode = encode
        self.strategy = strategy
        self.epsilon = epsilon
        self.delta = delta
        self.accountant = accountant
        self.random_state = random_state

    def _release_spec(self, n_features):
        return self._edges_spec(n_features, self.n_bins + 1, quantile=self.strategy == "quantile")

    def _check_sizes(self, n_features):
        check_array_entries(
            (int(self.n_bins) + 1) * n_features,
            {"n_bins": self.n_bins},
            "the bin edges of the columns",
        )

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None):
        """Release the bin edges of each column.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Private rows.
        y : None
            Ignored.
        sample_weight : array-like of shape (n_samples,), default=None
            Public weight of each row in the quantiles' counts
            (``strategy="quantile"``; ``"uniform"`` only validates them).
            Under privacy each weight is capped at 1 (a record counts at
            most once, whatever its weight), so pass weights on the scale
            of 1. At ``epsilon=np.inf`` they count as given and the edges
            are scikit-learn's ``KBinsDiscretizer(strategy="quantile",
            quantile_method="averaged_inverted_cdf")`` weighted edges (its
            default), on data within the bounds; unweighted edges, and
            uniform weights, interpolate linearly (``"linear"``, which
            scikit-learn refuses with weights).

        Returns
        -------
        self : DPKBinsDiscretizer
            The fitted transformer.
        """
        quantile = self.strategy == "quantile"
        # Without privacy: scikit-learn's default weighted quantile, at its
        # percentiles (which decide the ties of integer weights).
        edges, plan = self._fit_edges(
            X, self.n_bins + 1, quantile=quantile, sample_weight=sample_weight,
            weighted_method="averaged_inverted_cdf",
            exact_levels=lambda n_edges: np.linspace(0, 100, n_edges) / 100,
        )
        n_features = edges.shape[1]
        self.bin_edges_ = np.empty(n_features, dtype=object)
        for j in range(n_features):
            self.bin_edges_[j] = edges[:, j]
        self.n_bins_ = np.full(n_features, self.n_bins, dtype=np.intp)
        if self.encode == "ordinal":
            self._set_output_bounds(np.zeros(n_features), self.n_bins_ - 1.0)
        else:
            self._set_unit_output_bounds(self.n_bins * n_features, n_features)
        what = (
            "private quantile edges (exponential mechanism on public grids)"
            if quantile
            else "uniform edges of the public bounds (no private read)"
        )
        # Without privacy the quantile edges are exact (column_edges).
        exact = (
            "exact quantile edges of the clipped columns (their observed "
            "minimum and maximum the end edges)"
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
        """Bin each column.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to transform.

        Returns
        -------
        X_out : ndarray
            Bin indices (``"ordinal"``) or their one-hot columns; float32
            for float32 ``X``, else float64, as scikit-learn's
            ``KBinsDiscretizer(dtype=None)``.
        """
        check_is_fitted(self)
        X, dtype = self._validate_transform(X)
        # As scikit-learn: a value equal to an inner edge goes to the bin on
        # its right; values beyond the end points to the first or last bin.
        codes = np.column_stack(
            [
                np.searchsorted(edges[1:-1], X[:, j], side="right")
                for j, edges in enumerate(self.bin_edges_)
            ]
        )
        if self.encode == "ordinal":
            return as_input_float(codes.astype(np.float64), dtype)
        out = np.zeros((X.shape[0], self.n_bins * X.shape[1]))
        rows = np.arange(X.shape[0])
        for j in range(X.shape[1]):
            out[rows, j * self.n_bins + codes[:, j]] = 1.0
        return as_input_float(out, dtype)

    def inverse_transform(self, X):
        """Map bins back to their centres, as scikit-learn does.

        Post-processing of the released ``bin_edges_``: no privacy cost.
        Each bin maps to the midpoint of its edges
        (:func:`~._bounds.centre_and_half_width`, which the widest bounds do
        not overflow).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, n_features_out)
            Bin indices (``"ordinal"``) or their one-hot columns.

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
            The centre of each row's bin: float32 for float32 bin indices
            (``"ordinal"``), else float64, as scikit-learn's (a centre
            beyond float32's range saturates at its largest value).
        """
        check_is_fitted(self)
        n_features = self.n_bins_.shape[0]
        X = check_array(host_input(X), dtype=(np.float64, np.float32))
        # As scikit-learn: float32 bin indices give float32 centres; one-hot
        # columns (decoded to float64 indices) say nothing of the values'
        # dtype and give float64 ones.
        dtype = X.dtype if self.encode == "ordinal" else np.dtype(np.float64)
        X = X.astype(np.float64, copy=False)
        if self.encode != "ordinal":
            X = self._decode_onehot(X, n_features)
        if X.shape[1] != n_features:
            raise ValueError(
                f"Incorrect number of features. Expecting {n_features}, received "
                f"{X.shape[1]}."
            )
        out = np.empty(X.shape)
        for j, edges in enumerate(self.bin_edges_):
            centres, _ = centre_and_half_width(edges[:-1], edges[1:])
            out[:, j] = centres[X[:, j].astype(np.int64)]
        # A centre beyond float32's range (bounds such as (-1e300, 1e300))
        # saturates at its largest value rather than rounding to +-inf, as
        # DPStandardScaler.inverse_transform does.
        return saturated_input_float(out, dtype)

    def _decode_onehot(self, X, n_features):
        """The bin index of each one-hot block (scikit-learn's encoder inverse)."""
        width = self.n_bins * n_features
        if X.shape[1] != width:
            raise ValueError(
                f"Shape of the passed X data is not correct. Expected {width} "
                f"columns, got {X.shape[1]}."
            )
        blocks = X.reshape(X.shape[0], n_features, self.n_bins)
        zero = np.any(blocks.sum(axis=2) == 0, axis=1)
        if zero.any():
            # As scikit-learn's one-hot encoder (no dropped or unknown bin):
            # a block of zeros names no bin.
            raise ValueError(
                f"Samples {np.flatnonzero(zero)} can not be inverted: a block of "
                "one-hot columns is all zeros."
            )
        return blocks.argmax(axis=2).astype(np.float64)

    def get_feature_names_out(self, input_features=None):
        """Output feature names.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Input feature names (``feature_names_in_`` or ``x0, x1, ...`` when None).

        Returns
        -------
        feature_names_out : ndarray of str
            The input names (``"ordinal"``) or ``{feature}_{bin}`` as
            scikit-learn's one-hot encoding names them.
        """
        check_is_fitted(self)
        names = _check_feature_names_in(self, input_features)
        if self.encode == "ordinal":
            return np.asarray(names, dtype=object)
        return np.asarray(
            [f"{name}_{float(b)}" for name in names for b in range(self.n_bins)],
            dtype=object,
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags
