# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""One-hot encoding with declared categories or privately discovered ones."""

import dataclasses
import math
from numbers import Integral, Number, Real

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import (
    _check_feature_names_in,
    check_array,
    check_is_fitted,
    validate_data,
)

from ..privacy._ledger import PrivacyLedger
from ..utils._array_api import host_input
from ..utils._dask import refuse_dask_input
from ..utils._numeric import public_float
from ..utils._sklearn_compat import Interval, StrOptions, _fit_context
from ._base import PrivateTransformerMixin
from ._categories import (
    MISSING,
    NONE,
    BoolKey,
    canonical_order,
    check_one_kind,
    column_keys,
    key_of,
    public_value,
)
from ._partition import gaussian_threshold, select_partitions, threshold_probability

__all__ = ["DPOneHotEncoder"]

#: Name of the column that collects rare and unseen categories, as
#: scikit-learn names its infrequent category.
OTHER = "infrequent_sklearn"

# Share of delta spent on the threshold (the rest on the Gaussian counts), as
# Google's GaussianPartitionSelection splits it.
_THRESHOLD_DELTA_SHARE = 0.5


class DPOneHotEncoder(PrivateTransformerMixin, TransformerMixin, BaseEstimator):
    """One-hot encode categorical columns; unknown categories found privately.

    Declared categories (``categories=[[...], ...]``) are public: fitting
    reads no private value and costs nothing (``epsilon_ == delta_ == 0``, a
    ``NoOpDpEvent``). With ``categories="auto"`` the categories are found by
    differentially private partition selection (Gaussian thresholding, as
    PipelineDP and Google's ``GaussianPartitionSelection``): the counts of
    the categories present, all columns in one Gaussian release of
    sensitivity ``sqrt(n_features)``, keep those whose noisy count exceeds
    ``1 + sigma Phi^-1(1 - threshold_delta / n_features)``; half of
    ``delta`` goes to the noise (``delta_``, what the accountant is given),
    half to the threshold (``threshold_delta_``, spent outside
    ``dp_event_``): the selection is
    ``(epsilon_, delta_ + threshold_delta_)``-DP. Rare categories,
    and any category unseen at ``transform``, go to one
    ``"infrequent_sklearn"`` column per feature (``handle_unknown="other"``)
    or to all zeros (``"ignore"``).

    Missing values are categories: ``None`` and NaN are two, as in
    scikit-learn (NaN, ``pandas.NA`` and ``NaT`` are one; a pandas string
    column holds a missing string as NaN). Values
    that compare equal are one category (``1``, ``1.0`` and ``np.int8(1)``;
    ``0.0`` and ``-0.0``), written from the column's dtype (a float column's
    ``1.0``, a float32 column's ``0.1`` in float32), never from the row that
    came first; a bool is a category of its own (``True`` and ``1`` are
    two). A column of a boolean dtype (numpy bool, pandas' nullable or
    arrow boolean, a categorical of bools) is matched at ``transform`` by
    truth value, whichever of these dtypes it had at ``fit``: its ``True``
    is the category ``True``, or else ``1`` (a nullable boolean column's
    categories are ``0.0`` and ``1.0``, as scikit-learn writes them), as
    scikit-learn matches by value; so does a column boolean at ``fit`` and
    numeric at ``transform`` (its ``1`` is ``True`` where ``1`` is no
    category); an object column keeps ``True`` and ``1`` apart. Every
    output is 0 or 1 (``output_bounds_``), with at most one 1 per input
    column (``output_norm_bound_``).

    The dtype of an array's or a DataFrame's columns is public schema: the
    released categories are written in it (``1.0`` in a float column,
    ``1`` in an int one). Declare it (``astype``, ``read_csv(dtype=...)``)
    rather than let it be inferred from the rows: ``pandas.read_csv``
    reads an int column with one empty cell as float64, and one record
    would then rename every category of the column. A list has no dtype:
    it is read as objects (numpy is not asked to infer one from the
    values), and its numbers are written from the released categories
    alone (``[[1.0], [2.0]]`` gives ``x0_1``, where scikit-learn infers
    float64 and names ``x0_1.0``).

    Read more in the :ref:`User Guide <preprocessing>`.

    Parameters
    ----------
    categories : "auto" or list of array-like, default="auto"
        ``"auto"``: find the categories of every column privately. A list:
        the public categories of each column (NaN declares the missing
        category, None the None category; both declare the missing value of
        a numeric column). Those of a numeric or bool column are cast to its
        dtype, as scikit-learn casts them (``"1"`` declares the int ``1``);
        a cast that would change a category (``1.5`` in an int column,
        ``2`` in a bool column, a string that is not a number) raises a
        ValueError.
    handle_unknown : {"other", "ignore"}, default="other"
        Where rare and unseen categories go: an ``"infrequent_sklearn"``
        column per feature, or nowhere (all zeros).
    min_frequency : int, default=None
        Also drop discovered categories whose noisy count is below it
        (post-processing of the released counts). Refused with declared
        ``categories``: nothing is counted for them.
    max_categories : int, default=None
        Keep at most this many output columns per feature, the ``"other"``
        column included, the largest noisy counts first (post-processing;
        of equal counts the last in canonical order, as scikit-learn keeps
        them).
        Refused with declared ``categories``: without released counts there
        is nothing public to rank them by; declare fewer instead.
    epsilon : float, default=1.0
        Target epsilon of the discovery; ``np.inf`` keeps every category
        present.
    delta : float, default=1e-5
        Target delta of the discovery (noise and threshold together). The
        threshold's half, over the discovered columns, must be at least the
        smallest normal float (about 2.2e-308): ``fit`` and
        ``privacy_plan`` refuse a smaller one, whose threshold could not be
        computed.
    accountant : {"rdp", "pld"} or PrivacyLedger, default="rdp"
        dp-accounting accountant of the noisy counts. A ledger is refused
        for private discovery, by ``fit`` and ``privacy_plan`` alike: it
        composes dp-accounting events, which cannot hold the threshold's
        delta (accepted at ``epsilon=np.inf``, where nothing is
        thresholded).
    random_state : None, int, RandomState or Generator, default=None
        None draws the noise from OS entropy (a release); anything else is a
        seed (not a release).

    Attributes
    ----------
    categories_ : list of ndarray
        The categories of each feature (declared or released), in canonical
        order (numbers, then bools, then strings, then None, then the
        missing value as NaN), in the dtype of a numeric column (of a
        categorical column, its categories' dtype; declared categories are
        cast to it, as scikit-learn casts them). Without such a dtype
        (object columns, lists), numbers are written as ints when all are
        integral, else as floats, or as themselves when a float would
        round one (``2**53 + 1``). Datetime
        categories are pandas ``Timestamp`` objects (scikit-learn holds a
        ``datetime64`` array): the same categories, named
        ``a_2020-01-01 00:00:00`` rather than ``a_2020-01-01T00:00:00.000000``.
    threshold_ : float
        The noisy-count threshold of the discovery (``-inf`` without
        privacy, NaN when every column was declared).
    threshold_delta_ : float
        The delta spent on the threshold, in addition to ``delta_``
        (``delta_ + threshold_delta_ == delta``); 0 when nothing is
        thresholded (declared categories, or ``epsilon=inf``).
    output_bounds_ : ndarray of shape (n_features_out, 2)
    output_norm_bound_ : float
    epsilon_, delta_, dp_event_, adjacency_, privacy_record_
        The guarantee of the noisy counts (add/remove adjacency), as the
        accountant computes it: ``epsilon_`` is its epsilon of ``dp_event_``
        at ``delta_`` (``privacy_record_.recompute_epsilon()``). The
        selection as a whole is ``(epsilon_, delta_ + threshold_delta_)``-DP.
    noise_multiplier_ : float
        Noise standard deviation of the counts, in units of their
        sensitivity; 0 when nothing was released (declared categories) or at
        ``epsilon=inf``.
    privacy_caveats_ : list of str
        What was read from the private data outside the guarantee.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (`n_features_in_`,)

    See Also
    --------
    sklearn.preprocessing.OneHotEncoder : The non-private encoder.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.preprocessing import DPOneHotEncoder
    >>> X = np.array([["a"] * 500 + ["b"] * 300 + ["rare"]], dtype=object).T
    >>> enc = DPOneHotEncoder(random_state=0).fit(X)
    >>> enc.categories_
    [array(['a', 'b'], dtype=object)]
    >>> enc.transform([["a"], ["rare"], ["new"]])
    array([[1., 0., 0.],
           [0., 0., 1.],
           [0., 0., 1.]])
    >>> list(enc.get_feature_names_out())
    ['x0_a', 'x0_b', 'x0_infrequent_sklearn']
    >>> DPOneHotEncoder(categories=[["a", "b"]]).fit(X).epsilon_
    0.0
    """

    _parameter_constraints = {
        "categories": [StrOptions({"auto"}), list],
        "handle_unknown": [StrOptions({"other", "ignore"})],
        "min_frequency": [Interval(Integral, 1, None, closed="left"), None],
        "max_categories": [Interval(Integral, 1, None, closed="left"), None],
        **PrivateTransformerMixin._privacy_constraints,
    }

    def __init__(
        self,
        *,
        categories="auto",
        handle_unknown="other",
        min_frequency=None,
        max_categories=None,
        epsilon=1.0,
        delta=1e-5,
        accountant="rdp",
        random_state=None,
    ):
        self.categories = categories
        self.handle_unknown = handle_unknown
        self.min_frequency = min_frequency
        self.max_categories = max_categories
        self.epsilon = epsilon
        self.delta = delta
        self.accountant = accountant
        self.random_state = random_state

    def _threshold_delta(self, n_discovered):
        """The delta the threshold of discovering ``n_discovered`` columns spends.

        0 when nothing is thresholded. Computed from ``float(delta)``: a
        float32 delta would halve in float32 and round the threshold.

        Raises
        ------
        ValueError
            If its share of each column is too small for the threshold
            (:func:`~._partition.threshold_probability`): the fit and its
            plan both ask, before any row is counted.
        """
        # Without privacy nothing is thresholded and no delta is set apart.
        epsilon = public_float(self.epsilon, "epsilon")
        if not n_discovered or not math.isfinite(epsilon):
            return 0.0
        delta = public_float(self.delta, "delta")
        threshold_delta = delta * _THRESHOLD_DELTA_SHARE
        # A share that underflows (delta=5e-324) would give an infinite
        # threshold, and no delta set apart for it.
        threshold_probability(threshold_delta, n_discovered, delta=delta)
        return threshold_delta

    def _n_discovered(self, n_features):
        """How many columns' categories are undeclared (found privately)."""
        return sum(cats is None for cats in self._declared(n_features))

    def _planned_additional_delta(self, n_features):
        # The threshold's delta (threshold_delta_), outside the event.
        return self._threshold_delta(self._n_discovered(n_features))

    def _check_ledger_holds(self, threshold_delta):
        """Refuse a PrivacyLedger accountant when the threshold spends delta.

        The fit and its plan (:meth:`privacy_plan`) both ask, so that no
        plan is made for a fit that would be refused.
        """
        if threshold_delta > 0 and isinstance(self.accountant, PrivacyLedger):
            # Without privacy (epsilon=inf) nothing is thresholded: no delta
            # outside the ledger's events.
            raise ValueError(
                "accountant: a PrivacyLedger cannot hold the threshold delta of "
                "category discovery; pass 'rdp' or 'pld', or declare categories."
            )

    def _planned_record(self, n_samples, n_features):
        # The plan refuses what the fit refuses.
        self._check_ledger_holds(self._planned_additional_delta(n_features))
        return super()._planned_record(n_samples, n_features)

    def _release_spec(self, n_features):
        # Undeclared columns are discovered through one Gaussian histogram;
        # the accountant is given the noise's share of delta only.
        n_discovered = self._n_discovered(n_features)
        return {
            "gaussian": bool(n_discovered),
            "delta": public_float(self.delta, "delta")
            - self._threshold_delta(n_discovered),
        }

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Declare or discover the categories of each column.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Private rows; strings, numbers, None or NaN. The dtype of an
            array or of a DataFrame's columns is public schema (declare it;
            a list is read as objects).
        y : None
            Ignored.

        Returns
        -------
        self : DPOneHotEncoder
            The fitted transformer.
        """
        refuse_dask_input(type(self).__name__, X=X)
        columns, input_dtypes = self._columns(X, reset=True)
        dtypes = [_numeric_dtype(dtype) for dtype in input_dtypes]
        n_features = len(columns)
        declared = self._declared(n_features)
        discover = [j for j in range(n_features) if declared[j] is None]
        threshold_delta = self._threshold_delta(len(discover))
        self._check_ledger_holds(threshold_delta)
        # Validation, before anything is planned or set: the keys of each
        # discovered column, strings and numbers not mixed (their names
        # would collide: 1 and '1' are both 'x0_1'), as scikit-learn requires.
        discovered_keys = [column_keys(columns[j], none_apart=True) for j in discover]
        for keys_j in discovered_keys:
            check_one_kind(keys_j)
        # The plan, from public quantities: which columns are discovered.
        plan, rng = self._plan_fit(len(columns[0]), n_features)
        keys = [None] * n_features
        public = [None] * n_features
        for j in range(n_features):
            if declared[j] is not None:
                keys[j], public[j] = _declared_keys(declared[j], dtypes[j], column=j)
        self.threshold_ = math.nan
        mechanism = None
        if discover:
            # One record holds one category per column: l2 sensitivity sqrt(d).
            mechanism = dataclasses.replace(
                plan.gaussian, clip_norm=math.sqrt(len(discover))
            )
            # The threshold, from public quantities, before anything is
            # counted: -inf (keep what is present) only without privacy.
            threshold = -math.inf
            if mechanism.noise_multiplier > 0:
                threshold = gaussian_threshold(
                    mechanism.noise_std, threshold_delta, len(discover)
                )
            keys_found = self._discover(discovered_keys, mechanism, threshold, rng)
            self.threshold_ = threshold
            for j, found in zip(discover, keys_found):
                keys[j] = found
                # Written from the released keys and the public dtype only.
                public[j] = public_value(found, dtypes[j])
        self._keys = keys
        self._index = [{k: i for i, k in enumerate(ks)} for ks in keys]
        self.categories_ = public
        self.threshold_delta_ = threshold_delta
        n_out = sum(len(ks) + (self.handle_unknown == "other") for ks in keys)
        self._set_unit_output_bounds(n_out, n_features)
        what = exact = "declared categories only (no private read)"
        if discover:
            what = (
                f"Gaussian-thresholding partition selection of {len(discover)} "
                "column(s)"
            )
            # Without privacy the counts are exact and the threshold is
            # -inf (_discover): every observed category is kept, unless
            # min_frequency or max_categories filter the exact counts.
            limits = " and ".join(
                name
                for name in ("min_frequency", "max_categories")
                if getattr(self, name) is not None
            )
            kept = (
                f"the observed categories kept as {limits} select on those counts"
                if limits
                else "every observed category kept"
            )
            exact = (
                f"exact category counts of {len(discover)} column(s), {kept} "
                "(no threshold)"
            )
        if threshold_delta:
            # The threshold is outside the event: (epsilon, noise delta +
            # threshold delta)-DP by the union bound (see ._partition).
            what += (
                f"; the threshold spends a further delta of {threshold_delta:.3g}"
                f" (the selection is (epsilon, delta + {threshold_delta:.3g})-DP)"
            )
        self._record_fit(
            plan,
            what,
            non_private=exact,
            additional_delta=threshold_delta,
            mechanism=mechanism,
        )
        return self

    def _discover(self, key_columns, mechanism, threshold, rng):
        found = []
        offsets = [0]
        all_counts = []
        for keys in key_columns:
            counts = {}
            for k in keys:
                counts[k] = counts.get(k, 0) + 1
            order = canonical_order(counts)
            found.append(order)
            all_counts.extend(counts[k] for k in order)
            offsets.append(offsets[-1] + len(order))
        kept, noisy = select_partitions(
            np.asarray(all_counts, dtype=np.float64), mechanism, rng, threshold
        )
        if self.min_frequency is not None:
            kept &= noisy >= self.min_frequency
        out = []
        for j, order in enumerate(found):
            lo, hi = offsets[j], offsets[j + 1]
            keep = np.flatnonzero(kept[lo:hi])
            limit = self.max_categories
            if limit is not None:
                limit = max(limit - (self.handle_unknown == "other"), 0)
                # The largest released counts, ties broken as scikit-learn's
                # _identify_infrequent breaks them: a stable ascending sort
                # keeps the last of its equal counts (the latest in the
                # canonical order, scikit-learn's sorted order).
                ranked = keep[np.argsort(noisy[lo:hi][keep], kind="stable")]
                # A limit above the number kept keeps them all (a negative
                # start would count from the end and drop the largest).
                start = max(len(ranked) - limit, 0)
                keep = np.sort(ranked[start:]) if limit else keep[:0]
            out.append([order[i] for i in keep])
        return out

    def _declared(self, n_features):
        """Each column's declared values (validated), or None where discovered."""
        if self.categories == "auto":
            return [None] * n_features
        for name in ("max_categories", "min_frequency"):
            if getattr(self, name) is not None:
                # Both act on released counts, and declared categories are
                # not counted: any choice among them would read the data
                # outside a mechanism, and a public one (declared order)
                # would silently drop what the user declared.
                raise ValueError(
                    f"{name} applies to discovered categories (it post-processes "
                    "their noisy counts) and is refused with declared "
                    "categories, which are not counted; declare only the "
                    f"categories to keep, or leave {name}=None."
                )
        if len(self.categories) != n_features:
            raise ValueError(
                f"categories has {len(self.categories)} entries for {n_features} "
                "features."
            )
        declared = []
        for j, cats in enumerate(self.categories):
            values = np.asarray(cats, dtype=object)
            if values.ndim == 0:
                # A str or a number: ["a", "b"] meant as one column's
                # categories would declare one category in each column.
                raise ValueError(
                    f"categories must hold one array-like of categories per "
                    f"column, e.g. [['a', 'b']]; got {cats!r} for column {j}."
                )
            values = list(values.ravel())
            keys = column_keys(values, none_apart=True, name="categories")
            _check_declared(keys, _declared_value(values, keys))
            declared.append(values)
        return declared

    def _columns(self, X, *, reset):
        # Columns as object arrays, their values untouched (strings, numbers,
        # None, NaN), as scikit-learn's encoders read them, and each column's
        # dtype (public schema): fit writes the released categories in its
        # numeric dtype (_numeric_dtype), transform reads a boolean one by
        # truth value (_boolean_dtype). Torch input under array API dispatch
        # is read as numpy, as the other transformers read it.
        X = named = host_input(X)
        if hasattr(X, "iloc") and X.ndim != 2:
            # A Series (what a ColumnTransformer's scalar key selects):
            # scikit-learn's refusal, which names the container, not a value.
            raise ValueError(
                f"Expected a 2-dimensional container but got {type(X)} instead. "
                "Pass a DataFrame containing a single row (i.e. single sample) "
                "or a single column (i.e. single feature) instead."
            )
        if not hasattr(X, "iloc"):
            # Only an input that carries a dtype (an array, a data frame)
            # declares one. numpy would infer a list's dtype from the values
            # themselves, private: one record's 2.5, NaN or None (or a 2
            # among bools) would turn an int column into a float or object
            # one and rename every released category (x0_1 or x0_1.0), a
            # release outside the mechanism. A list is read as objects, its
            # categories written from the released keys alone.
            declares = hasattr(X, "dtype") or hasattr(X, "dtypes")
            X = check_array(
                X, dtype=None if declares else object, ensure_all_finite=False
            )
        # Names and width from the input as given, which passed the check
        # above: a polars or pyarrow table has lost its column names once
        # read as an array, and a reordered table would then encode each
        # column by another's categories (scikit-learn's encoders refuse it).
        validate_data(self, named, reset=reset, skip_check_array=True)
        if hasattr(X, "iloc"):
            if X.shape[0] == 0 or X.shape[1] == 0:
                # scikit-learn's message for no rows or no columns.
                check_array(np.empty(X.shape))
            columns = [_column_values(X.iloc[:, j]) for j in range(X.shape[1])]
            dtypes = list(X.dtypes)
        else:
            columns = [X[:, j] for j in range(X.shape[1])]
            dtypes = [X.dtype] * X.shape[1]
        return columns, dtypes

    def transform(self, X):
        """One-hot encode ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to transform.

        Returns
        -------
        X_out : ndarray of shape (n_samples, n_features_out)
            Zeros and ones.
        """
        check_is_fitted(self)
        columns, dtypes = self._columns(X, reset=False)
        n = len(columns[0])
        other = self.handle_unknown == "other"
        blocks = []
        for index, column, dtype in zip(self._index, columns, dtypes):
            unknown = len(index) if other else -1
            width = len(index) + other
            block = np.zeros((n, width))
            keys = column_keys(column, none_apart=True)
            if _boolean_dtype(dtype):
                # One logical boolean column, whatever its dtype at fit and
                # here (numpy bool, nullable boolean, categorical of bools):
                # its True matches the category True, or else 1 (a nullable
                # boolean column's categories are 0.0 and 1.0, as
                # scikit-learn writes them), as scikit-learn matches by
                # value. Only on a miss, so a fitted object column holding
                # both True and 1 keeps them apart. Read from the public
                # dtype and the released categories: nothing is released.
                codes = [_truth_code(index, k, unknown) for k in keys]
            else:
                codes = [_value_code(index, k, unknown) for k in keys]
            codes = np.array(codes, dtype=np.intp)
            rows = np.flatnonzero(codes >= 0)
            block[rows, codes[rows]] = 1.0
            blocks.append(block)
        return np.hstack(blocks) if blocks else np.zeros((n, 0))

    def inverse_transform(self, X):
        """Convert one-hot rows back to categories, as scikit-learn does.

        Post-processing of the released ``categories_``: no privacy cost.
        Each block maps to the category of its largest entry; a block with
        no category set (all zeros, or only the ``"infrequent_sklearn"``
        column, which stands for any rare or unseen category) maps to
        ``None``, as scikit-learn maps an unknown category under
        ``handle_unknown="ignore"``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_out)
            One-hot rows.

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
            Categories, of object dtype when a ``None`` is among them.
        """
        check_is_fitted(self)
        # No column where no category was released (transform's own output
        # then has none): the width is checked against categories_ below.
        X = check_array(host_input(X), accept_sparse="csr", ensure_min_features=0)
        other = self.handle_unknown == "other"
        widths = [len(c) + other for c in self.categories_]
        if X.shape[1] != sum(widths):
            raise ValueError(
                "Shape of the passed X data is not correct. Expected "
                f"{sum(widths)} columns, got {X.shape[1]}."
            )
        dtype = np.result_type(*[c.dtype for c in self.categories_])
        out = np.empty((X.shape[0], len(widths)), dtype=dtype)
        unknown = {}
        start = 0
        for j, categories in enumerate(self.categories_):
            sub = X[:, start : start + len(categories)]
            start += widths[j]
            if not len(categories):
                unknown[j] = np.ones(X.shape[0], dtype=bool)
                continue
            out[:, j] = categories[np.asarray(sub.argmax(axis=1)).ravel()]
            none = np.asarray(sub.sum(axis=1) == 0).ravel()
            if none.any():
                unknown[j] = none
        if unknown:
            out = out.astype(object)
            for j, rows in unknown.items():
                out[rows, j] = None
        return out

    def get_feature_names_out(self, input_features=None):
        """Output feature names: ``{feature}_{category}``, then the other column.

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
        input_features = _check_feature_names_in(self, input_features)
        names = []
        for feature, values in zip(input_features, self.categories_):
            # As categories_ shows them, as scikit-learn names them (1.0,
            # not 1, in a float column or beside a missing value).
            names += [f"{feature}_{value!s}" for value in values]
            if self.handle_unknown == "other":
                names.append(f"{feature}_{OTHER}")
        return np.asarray(names, dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        tags.input_tags.two_d_array = True
        # Its output is float64 whatever the input's dtype, as that of
        # scikit-learn's OneHotEncoder at its default dtype.
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags


def _column_values(series):
    """A DataFrame column's values as the encoder reads them.

    pandas' nullable and arrow boolean columns are read as float64 (missing
    as NaN), as scikit-learn reads them and as :func:`_numeric_dtype` writes
    their categories: read as Python bools, their values would never equal
    the declared categories cast to that dtype. Other columns are read as
    objects (an Int64 column's ``2**53 + 1`` stays distinct from
    ``2**53``).
    """
    numpy_dtype = getattr(series.dtype, "numpy_dtype", None)
    if not isinstance(series.dtype, np.dtype) and (
        isinstance(numpy_dtype, np.dtype) and numpy_dtype.kind == "b"
    ):
        return series.to_numpy(dtype=np.float64, na_value=np.nan)
    return series.to_numpy(dtype=object)


def _boolean_dtype(dtype):
    """Whether a column's dtype is boolean (numpy, nullable, arrow or categorical).

    Public schema, as :func:`_numeric_dtype` reads it: a numpy bool column,
    pandas' nullable and arrow boolean columns, and a categorical column
    whose categories are bools. An object column of bools is not (its
    values, not its dtype, say so).
    """
    if isinstance(dtype, np.dtype):
        return dtype.kind == "b"
    categories = getattr(dtype, "categories", None)
    if categories is not None and hasattr(categories, "dtype"):
        return _boolean_dtype(categories.dtype)
    numpy_dtype = getattr(dtype, "numpy_dtype", None)
    return isinstance(numpy_dtype, np.dtype) and numpy_dtype.kind == "b"


def _truth_code(index, key, unknown):
    """The fitted code of a boolean column's value: by truth value.

    A boolean column's values are read as :class:`~._categories.BoolKey`
    (a nullable boolean column is read as the floats 0.0 and 1.0, keys
    ``0`` and ``1``) and matched to the category ``True`` (or ``False``),
    else to ``1`` (or ``0``); a missing value as any other key.
    """
    if isinstance(key, int) and key in (0, 1):
        key = BoolKey(key)
    code = index.get(key)
    if code is None and isinstance(key, BoolKey):
        code = index.get(int(key.value))
    return unknown if code is None else code


def _value_code(index, key, unknown):
    """The fitted code of a value of a column that is not boolean here.

    The value's own category first; on a miss, a number 0 or 1 matches the
    category ``False`` or ``True`` (a column that was boolean at ``fit``,
    now read as integers or floats), as scikit-learn matches by value.
    Only on a miss, so a fitted object column holding both ``True`` and
    ``1`` keeps them apart.
    """
    code = index.get(key)
    # A bool's key is a BoolKey, which is no Number.
    if code is None and isinstance(key, Number) and key in (0, 1):
        code = index.get(BoolKey(key))
    return unknown if code is None else code


def _numeric_dtype(dtype):
    """The dtype a column's categories are written in, or None (an object column).

    A numpy numeric or bool column keeps its dtype; pandas' nullable
    numeric and boolean columns are read as float64 (missing as NaN), as
    scikit-learn reads them; a categorical column as its categories' dtype
    (a float one's ``1.0`` is named ``1.0``, as scikit-learn reads the
    column as its categories' values). The dtype is the input's schema,
    public.
    """
    if isinstance(dtype, np.dtype):
        return dtype if dtype.kind in "fiub" else None
    categories = getattr(dtype, "categories", None)
    if categories is not None and hasattr(categories, "dtype"):
        # A pandas CategoricalDtype: its categories hold the values' dtype,
        # public schema as any column's dtype is (declared, not inferred).
        return _numeric_dtype(categories.dtype)
    numpy_dtype = getattr(dtype, "numpy_dtype", None)
    if isinstance(numpy_dtype, np.dtype) and numpy_dtype.kind in "fiub":
        return np.dtype(np.float64)
    return None


def _declared_value(values, keys):
    """Declared values as ``categories_`` shows them (their own types)."""
    return public_value(
        [
            key
            if key is MISSING or key is NONE
            else (v.item() if isinstance(v, np.generic) else v)
            for v, key in zip(values, keys)
        ]
    )


def _check_declared(keys, public):
    """Refuse declared categories that repeat a value or a name."""
    if len(set(keys)) != len(keys):
        raise ValueError("categories must not repeat a value in a column.")
    names = [str(v) for v in public]
    if len(set(names)) != len(names):
        raise ValueError(
            "categories must have distinct names in a column (e.g. not "
            "both 1 and '1'): the output columns are named by them."
        )


def _declared_keys(values, dtype, *, column):
    """Keys and public values of a column's declared categories.

    The declared categories of a numeric or bool column are cast to its
    dtype (public schema), as scikit-learn casts them: ``"1"`` declares
    the int ``1`` of an int column, ``0`` and ``1`` the bools of a bool
    column, and a float32 column's ``0.1`` is ``float32(0.1)`` (found, and
    named ``0.1``); ``None`` and NaN declare its missing value. A cast that
    would change an integer or bool category (``1.5`` or ``300`` in an
    int8 column, ``2`` in a bool column, a string that is not a number)
    raises a ValueError, where scikit-learn truncates or wraps it into a
    category that was not declared. Other columns keep the categories as
    declared, ``None`` apart from NaN.
    """
    keys = column_keys(values, none_apart=True, name="categories")
    if dtype is None:
        return keys, _declared_value(values, keys)
    keys = [_cast_declared(k, dtype, column) for k in keys]
    public = public_value(keys, dtype)
    _check_declared(keys, public)
    return keys, public


def _cast_declared(key, dtype, column):
    """The key of a declared category cast to a numeric or bool dtype."""
    if key is MISSING or key is NONE:
        return MISSING
    value = key.value if isinstance(key, BoolKey) else key
    cast = None
    try:
        with np.errstate(over="ignore"):
            if dtype.kind == "f":
                number = float(value)
                cast = dtype.type(number)
                # Rounding to the dtype is its spelling of the category; a
                # finite one that overflows it is not.
                exact = bool(np.isfinite(cast)) or not math.isfinite(number)
            elif isinstance(value, str):
                number = int(value) if dtype.kind in "iu" else None
                exact = number is not None and _fits(number, dtype)
                cast = dtype.type(number) if exact else None
            elif dtype.kind in "iu":
                number = int(value)
                exact = number == value and _fits(number, dtype)
                cast = dtype.type(number) if exact else None
            else:  # bool
                exact = isinstance(value, (Real, bool)) and value in (0, 1)
                cast = np.bool_(value == 1)
    except (TypeError, ValueError, OverflowError, ArithmeticError):
        exact = False
    if not exact:
        raise ValueError(
            f"categories: the category {value!r} declared for column {column} "
            f"cannot be cast exactly to the column's dtype {dtype}; declare "
            "the column's values as they are (e.g. 1, not '1.5' or 1.5, in an "
            "integer column; True and False in a bool column)."
        )
    return key_of(cast)


def _fits(number, dtype):
    info = np.iinfo(dtype)
    return info.min <= number <= info.max
