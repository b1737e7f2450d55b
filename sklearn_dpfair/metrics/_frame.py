# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Group metrics of a binary classifier from one private release of its confusion counts."""

import dataclasses
from numbers import Integral, Number, Real

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .._base import PRIVACY_PARAMETER_CONSTRAINTS, PrivateEstimatorMixin
from ..fairness._sensitive import (
    check_declared_groups,
    check_labels_per_column,
    encode_sensitive_features,
    is_missing_label,
    sensitive_features_shape,
)
from ..privacy import PrivacyBudget
from ..privacy._accounting import gaussian_event
from ..privacy._random import check_noise_generator
from ..privacy._record import NON_PRIVATE_LIMIT, PrivacyRecord, plain_language
from ..utils._dask import refuse_dask_input
from ..utils._numeric import MAX_FLOAT64_ENTRIES
from ..utils._sklearn_compat import Interval, StrOptions, _fit_context
from ..utils._validation import check_delta_for_n, one_per_row
from ._confusion import (
    CELLS,
    METRICS,
    MIN_DENOMINATOR_SDS,
    bootstrap_tables,
    compare,
    compare_interval,
    confusion_table,
    metric_values,
    percentile_interval,
)

__all__ = ["PrivateMetricFrame"]

#: The metrics of a frame built with ``metrics=None``.
DEFAULT_METRICS = (
    "accuracy",
    "selection_rate",
    "true_positive_rate",
    "false_positive_rate",
)

_DESCRIPTION = (
    "PrivateMetricFrame: per-group confusion counts (TP, FP, TN, FN), one "
    "Gaussian release of L2 sensitivity 1"
)
#: What a fit at ``epsilon=inf`` runs: the exact table, no noise drawn.
_NON_PRIVATE_DESCRIPTION = (
    f"PrivateMetricFrame: {NON_PRIVATE_LIMIT}exact per-group confusion counts "
    "(TP, FP, TN, FN)"
)
# Messages name the parameter and the problem, never a private value.
_UNDECLARED_LABELS = (
    "{name} contains labels that are not in the declared classes (the labels "
    "are not shown: they are private). Declare both labels in classes=(negative, "
    "positive), or drop the rows whose label is outside it."
)
_MISSING_GROUP = (
    "sensitive_features has missing values (None/NaN). Every row must belong "
    "to a declared group: declare a group for the missing values (for example "
    "'unknown') and fill them with it, or drop those rows."
)
_COMPARE_METHODS = ("between_groups", "to_overall")
#: The rates whose differences make each fairness gap.
_GAP_RATES = {
    "dp": ("selection_rate",),
    "eo": ("true_positive_rate", "false_positive_rate"),
}


class EvaluationPrivacyRecord(PrivacyRecord):
    """A :class:`~sklearn_dpfair.privacy.PrivacyRecord` of an evaluation.

    The release is noisy counts of predictions, not a model: a record is
    one evaluated person's group, true label and prediction, and the texts
    say so.
    """

    #: What the release is (plain_language's subject; the report's title).
    subject = "evaluation"

    def plain_language(self):
        """The guarantee in plain words, for the evaluated records."""
        return plain_language(
            self.epsilon,
            self.total_delta,
            self.adjacency,
            self.caveats,
            self.seeded,
            subject=self.subject,
        )


class PrivateMetricFrame(PrivateEstimatorMixin, BaseEstimator):
    """Differentially private group metrics of a binary classifier.

    fairlearn's :class:`~fairlearn.metrics.MetricFrame` for the metrics that
    are ratios of confusion counts (accuracy, selection rate, true and false
    positive rates, group sizes) and the fairness gaps built from them
    (demographic parity and equalized odds differences). ``fit`` releases
    the per-group counts ``(TP, FP, TN, FN)`` of the private evaluation rows
    with one Gaussian mechanism, under its own ``(epsilon, delta)``;
    ``overall``, ``by_group``, :meth:`difference`, :meth:`ratio`,
    :meth:`group_min`, :meth:`group_max` and the confidence intervals are
    post-processing of those counts and cost nothing more.

    Every record (its group, true label and prediction) adds one to exactly
    one of the ``4 * len(groups)`` counts, so the count vector has L2
    sensitivity 1 under add/remove adjacency (the guarantee stated here) and
    ``sqrt(2)`` under replace-one. The group set and the label pair are
    public and declared; nothing about them is read from the data. No rate
    divides by the number of rows: every rate is a ratio of noisy counts
    (the number is public, as for every estimator here, and read only to
    warn when ``delta`` is not below ``1 / n``).

    Noisy counts are clamped at 0 before they enter a ratio, so every rate
    is in ``[0, 1]``. A rate whose noisy denominator (before clamping) is not
    above ``MIN_DENOMINATOR_SDS = 2`` standard deviations of its noise is
    NaN (the group is too small to measure it at this epsilon);
    :attr:`notes_` says which and why. Differences and ratios skip NaN
    groups, as fairlearn's do.

    Confidence intervals include both the sampling error of the evaluation
    rows and the DP noise: a parametric bootstrap (Ferrando, Wang and
    Sheldon, 2022) redraws every count as Poisson around the clamped noisy
    count (plus half a count) and adds fresh Gaussian noise of the released
    scale, ``n_boot`` times, and takes percentile intervals. The overall
    replicate is the sum of the groups' (with one half count of its own,
    centred at the unclamped noisy total), so that neither the number of
    declared groups nor their clamped noise moves it. In the
    replicates a rate is computed whenever its denominator is positive, so
    the interval of a rate over a few noisy rows spreads over most of
    ``[0, 1]``; a replicate where a quantity is undefined counts as the far
    end of its range. In simulation the 95% intervals hold the population
    rate 91% to 100% of the time at ``epsilon=1`` for groups of 5 to 10,000
    rows (User Guide).

    A comparison (difference, ratio, minimum, maximum, fairness gap) leaves
    out of every replicate the groups its reported value leaves out. Its
    interval is not the percentile interval of the compared replicates (a
    maximum or ``max - min`` of replicates is biased and bounded at the
    value of equal groups, and would miss it): the values it compares, the
    signed differences of every pair of groups (or to overall), or their
    ratios, get simultaneous (Bonferroni-adjusted) percentile intervals,
    and the comparison's bounds are its extremes over them: conservative
    where Bonferroni's tails can be read. Those tails,
    ``(1 - confidence_level) / (2 k)`` for ``k`` compared quantities
    (``k = G (G - 1) / 2`` pairs of ``G`` groups), are read from the
    replicates only when ``n_boot + 1 >= 2 k / (1 - confidence_level)``;
    below that (beyond the pairs of 7 groups
    with 1,000 replicates at 95%) each percentile would stop at the
    extreme replicate, and the intervals of 20 equal groups missed 0 in
    23% of simulations.
    There, the simultaneous intervals are the max-statistic bootstrap's
    instead (Westfall and Young, 1993; Romano and Wolf, 2005): every
    quantity's interval is its replicates' mean plus or minus ``c`` of
    their standard deviations, ``c`` the ``confidence_level`` quantile of
    the largest such standardized deviation in a replicate, which any
    ``n_boot`` of a few hundred resolves (at 20 and 40 equal groups and
    1,000 replicates, the 95% difference missed 0 in 4% and 6% of
    simulations, with intervals no wider). The pairs are formed one group
    at a time: memory grows as ``n_boot * G``, not ``n_boot * G**2``.

    Read more in the :ref:`User Guide <private_metrics>`.

    Parameters
    ----------
    groups : array-like of shape (n_groups,)
        The declared, public group set: every value ``sensitive_features``
        may take (for several columns, tuples of one value per column).
        Groups without rows are kept (their rates are NaN). A value outside
        it raises ``ValueError``, as do groups that do not fit the columns of
        ``sensitive_features`` (tuples of another length, or of several).
        A missing label (None or NaN) or a label given twice is refused
        (``ValueError``) by :meth:`privacy_plan` and ``fit`` alike.
    classes : array-like of shape (2,), default=(0, 1)
        The declared label pair ``(negative, positive)`` of ``y_true`` and
        ``y_pred``; the second is the positive label (selection rate, TPR,
        FPR). A string beside a number is refused (``ValueError``), as
        scikit-learn refuses labels of mixed types.
    metrics : str or list of str, default=None
        Among ``"accuracy"``, ``"selection_rate"``, ``"true_positive_rate"``,
        ``"false_positive_rate"`` and ``"count"``. None: the first four. A
        single name makes ``overall`` a scalar and ``by_group`` a Series, as
        in fairlearn; a list makes them a Series and a DataFrame.
    epsilon : float, default=1.0
        Target epsilon of the release. ``np.inf`` adds no noise and gives
        fairlearn's exact values, with two exceptions. A rate whose
        denominator is 0 (the true positive rate of a group without positive
        rows, the false positive rate of one without negative rows) is NaN
        here and 0 in fairlearn, and the comparisons skip it, so a
        difference, ratio, minimum or gap can differ from fairlearn's. A
        declared group without rows has ``count`` 0 here and fairlearn,
        which knows only the groups in the data, does not have it, so the
        ``group_min``, ``difference`` and ``ratio`` of ``"count"`` differ.
    delta : float, default=1e-5
        Target delta in (0, 1).
    confidence_level : float, default=0.95
        Coverage of the intervals (``*_ci``).
    n_boot : int, default=1000
        Bootstrap replicates for the intervals. The comparisons' intervals
        are Bonferroni's, whose tails of ``(1 - confidence_level) / (2 k)``
        for ``k`` compared quantities need ``n_boot + 1 >= 2 k / (1 -
        confidence_level)`` (1,000 at 95%: up to 25, the pairs of 7
        groups), and the max-statistic bootstrap's below that (see above).
        The replicates must fit in one float64 numpy array (``n_boot``
        times 4 counts a group), else a ``ValueError`` naming ``n_boot``
        before any row is read; the intervals hold fewer values at a time
        than the replicates.
    accountant : {"rdp", "pld"} or PrivacyLedger, default="rdp"
        dp-accounting accountant that calibrates the noise; a
        :class:`~sklearn_dpfair.privacy.PrivacyLedger` records the release
        (and names the accountant). ``"pld"`` is exact for one Gaussian and
        adds about 8% less noise.
    random_state : None, int, RandomState or Generator, default=None
        None draws the noise from OS entropy (a release); anything else is a
        seed (reproducible, not a release).

    Attributes
    ----------
    counts_ : pandas.DataFrame of shape (n_groups, 4)
        The released noisy counts, columns ``TP, FP, TN, FN`` (not clamped;
        they may be negative or fractional).
    noise_std_ : float
        Standard deviation of the Gaussian noise on each count (0 at
        ``epsilon=inf``).
    groups_ : ndarray of shape (n_groups,)
        The declared groups.
    classes_ : ndarray of shape (2,)
        The declared ``(negative, positive)`` labels.
    metrics_ : list of str
        The metrics computed.
    notes_ : list of str
        Why each NaN value of ``by_group`` and ``overall`` is NaN.
    epsilon_, delta_, dp_event_, noise_multiplier_, adjacency_, privacy_record_
        The guarantee, as accounted by dp-accounting (add/remove adjacency).
        :meth:`privacy_plan` gives the same event before any data is read
        (its ``n_samples`` and ``n_features`` do not enter it; pass any
        positive ints).
    privacy_caveats_ : list of str
        What was read from the private data outside the guarantee.

    See Also
    --------
    fairlearn.metrics.MetricFrame : The non-private frame, for any metric.

    Notes
    -----
    What it costs: one Gaussian release of sensitivity 1 at ``(epsilon,
    delta)``; at ``epsilon=1, delta=1e-5`` every count carries noise of
    standard deviation about 4.0 (3.7 with ``accountant="pld"``), whatever
    the number of rows. A rate over a denominator of ``m`` rows is then off
    by about ``4 sqrt(2) / m`` from the DP noise alone: 0.001 for a group of
    5,000 rows, 0.06 for 100 rows, and nothing can be said about a group of
    5 rows (its rates are NaN and their intervals are ``[0, 1]``). The User
    Guide gives the interval widths.

    ``sample_weight`` is not accepted: a weighted count has the sensitivity
    of the largest weight.

    References
    ----------
    Ferrando, C., Wang, S. and Sheldon, D. (2022). Parametric bootstrap for
    differentially private confidence intervals. AISTATS.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.metrics import PrivateMetricFrame
    >>> rng = np.random.default_rng(0)
    >>> sex = rng.choice(["F", "M"], size=20000)
    >>> y_true = rng.integers(0, 2, size=20000)
    >>> y_pred = np.where(rng.random(20000) < 0.8, y_true, 1 - y_true)
    >>> frame = PrivateMetricFrame(
    ...     groups=["F", "M"], metrics=["selection_rate", "true_positive_rate"],
    ...     epsilon=1.0, random_state=0)
    >>> frame = frame.fit(y_true, y_pred, sensitive_features=sex)
    >>> frame.by_group["selection_rate"].round(2).tolist()
    [0.49, 0.5]
    >>> frame.by_group["true_positive_rate"].round(2).tolist()
    [0.8, 0.81]
    >>> frame.epsilon_ <= 1.0
    True
    >>> lower, upper = frame.by_group_ci
    >>> bool((upper - lower).max().max() < 0.03)
    True
    """

    _parameter_constraints = {
        "groups": ["array-like"],
        "classes": ["array-like"],
        "metrics": [StrOptions(set(METRICS)), list, tuple, None],
        "confidence_level": [Interval(Real, 0, 1, closed="neither")],
        "n_boot": [Interval(Integral, 1, None, closed="left")],
        **{
            name: PRIVACY_PARAMETER_CONSTRAINTS[name]
            for name in ("epsilon", "delta", "accountant", "random_state")
        },
    }

    def __init__(
        self,
        groups,
        *,
        classes=(0, 1),
        metrics=None,
        epsilon=1.0,
        delta=1e-5,
        confidence_level=0.95,
        n_boot=1000,
        accountant="rdp",
        random_state=None,
    ):
        self.groups = groups
        self.classes = classes
        self.metrics = metrics
        self.epsilon = epsilon
        self.delta = delta
        self.confidence_level = confidence_level
        self.n_boot = n_boot
        self.accountant = accountant
        self.random_state = random_state

    # -- the release ------------------------------------------------------------

    def _plan(self):
        """The mechanism and record of a fit, from the parameters alone.

        Neither the number of rows nor anything else about the data enters
        them: one Gaussian release of sensitivity 1, accounted as one
        ``GaussianDpEvent``. At ``epsilon=inf`` no noise is drawn and the
        record names the exact counts that are released (the record is of
        what ran), under a ``NonPrivateDpEvent``.
        """
        budget = PrivacyBudget(
            float(self.epsilon), float(self.delta), self._accountant_kind()
        )
        mechanism = budget.gaussian(1.0)
        private = mechanism.noise_multiplier > 0
        record = budget.account(
            mechanism,
            description=_DESCRIPTION if private else _NON_PRIVATE_DESCRIPTION,
            adjacency="add_remove",
            dp_event=gaussian_event(mechanism.noise_multiplier),
        )
        fields = {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}
        return mechanism, EvaluationPrivacyRecord(**fields)

    def _planned_record(self, n_samples, n_features):
        """The record a fit will set; ``n_samples`` and ``n_features`` unused.

        Runs the fit's checks of the parameters first
        (:meth:`_check_parameters`): a plan is never made for parameters
        the fit would refuse.
        """
        self._check_parameters()
        return self._plan()[1]

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, y_true, y_pred, *, sensitive_features):
        """Release the noisy per-group confusion counts of the predictions.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
            True labels, each one of ``classes``.
        y_pred : array-like of shape (n_samples,)
            Predicted labels, each one of ``classes``.
        sensitive_features : array-like of shape (n_samples,) or (n_samples, n_columns)
            Group of every row, each one of ``groups``.

        Returns
        -------
        self : PrivateMetricFrame
            The fitted frame.
        """
        # The counts are formed here, in memory: a Dask collection would be
        # gathered onto the driver.
        refuse_dask_input(
            type(self).__name__,
            y_true=y_true,
            y_pred=y_pred,
            sensitive_features=sensitive_features,
        )
        metrics, classes = self._check_parameters()
        y_true = one_per_row(y_true, "y_true")
        y_pred = one_per_row(y_pred, "y_pred")
        n_samples = y_true.shape[0]
        if y_pred.shape[0] != n_samples:
            raise ValueError(
                f"y_pred has {y_pred.shape[0]} rows but y_true has {n_samples}."
            )
        if n_samples == 0:
            raise ValueError("y_true is empty; pass at least one row.")
        # The layout of sensitive_features (rows, columns) is public: check it
        # against y_true and the declared groups before any label is read.
        n_rows, n_columns = sensitive_features_shape(sensitive_features)
        if n_rows is not None and n_rows != n_samples:
            raise ValueError(
                f"sensitive_features has {n_rows} rows but y_true has "
                f"{n_samples}; pass one value (or one row of values) per row of "
                "y_true."
            )
        groups = self._check_groups(n_columns)
        true_positive = _is_positive(y_true, classes, "y_true")
        pred_positive = _is_positive(y_pred, classes, "y_pred")
        encoding = encode_sensitive_features(
            sensitive_features, n_samples=n_samples, groups=groups
        )
        if encoding.n_missing:
            raise ValueError(_MISSING_GROUP)

        # The plan, from the parameters only, before any count is formed.
        mechanism, record = self._plan()
        private = mechanism.noise_multiplier > 0
        if private:
            check_delta_for_n(self.delta, n_samples)
        rng = check_noise_generator(self.random_state)

        exact = confusion_table(
            encoding.codes, true_positive, pred_positive, encoding.n_groups
        )
        noisy = mechanism.privatize(exact.ravel(), rng).reshape(exact.shape)

        self.groups_ = encoding.groups
        self.classes_ = classes
        self.metrics_ = list(metrics)
        # Fixed at fit, with metrics_: set_params(metrics=...) without a refit
        # must not change the shape of the values read from metrics_.
        self._single_metric = isinstance(self.metrics, str)
        self.noise_std_ = float(mechanism.noise_std) if private else 0.0
        self.counts_ = pd.DataFrame(
            noisy, index=self._group_index(sensitive_features), columns=list(CELLS)
        )
        # Post-processing of the release: the bootstrap reads only `noisy`.
        self._replicates = bootstrap_tables(noisy, self.noise_std_, self.n_boot, rng)
        self._set_privacy_record(record)
        self.notes_ = self._nan_notes()
        return self

    # -- validation -------------------------------------------------------------

    def _check_parameters(self):
        """Check the parameters alone, as both the fit and the plan do.

        One function for both, so that :meth:`privacy_plan` refuses, with
        the same error, every setting its fit refuses before reading a row:
        unknown or duplicate metrics, classes that are not two distinct
        labels of one kind, an invalid group set, and an ``n_boot`` too
        large for the declared groups. Only the fit can check the groups
        against the columns of ``sensitive_features``.

        Returns
        -------
        metrics : sequence of str
            The metrics to compute.
        classes : ndarray of shape (2,)
            The declared ``(negative, positive)`` labels.
        """
        metrics = self._check_metrics()
        classes = self._check_classes()
        self._check_n_boot(len(self._check_groups()))
        return metrics, classes

    def _check_metrics(self):
        if self.metrics is None:
            return DEFAULT_METRICS
        names = [self.metrics] if isinstance(self.metrics, str) else list(self.metrics)
        unknown = [m for m in names if not isinstance(m, str) or m not in METRICS]
        if unknown or not names:
            raise ValueError(
                f"metrics must be one of {METRICS} or a non-empty list of them "
                f"(the metrics that are ratios of confusion counts); got {unknown or names!r}."
            )
        if len(set(names)) != len(names):
            raise ValueError(f"metrics contains duplicates: {names!r}.")
        return names

    def _check_classes(self):
        # A string beside a number would be turned into a string by np.array
        # (0 into "0"), and the labels refused as undeclared. scikit-learn
        # refuses labels of mixed types ("Mix of label input types (string and
        # number)"), and so do this package's classifiers; the frame does
        # too, naming the parameter, before any label is read.
        try:
            declared = list(self.classes)
        except TypeError:  # not a sequence: refused below
            declared = []
        if any(isinstance(label, str) for label in declared) and any(
            isinstance(label, Number) for label in declared
        ):
            raise ValueError(
                "classes must be two labels of one kind, both strings or both "
                "numbers (as scikit-learn's labels); got a string and a number: "
                f"{self.classes!r}. Encode the labels of y_true and y_pred as "
                "one kind and declare those."
            )
        # NaN, pd.NA and NaT equal no label, not even themselves: declared,
        # such a class would match no row, and every fit would refuse its
        # labels as undeclared (pd.NA cannot even be compared). None compares
        # as a label, and may be declared.
        if any(label is not None and is_missing_label(label) for label in declared):
            raise ValueError(
                "classes must be two labels that are not missing: NaN, pd.NA "
                f"and NaT equal no label, so no row could match; got "
                f"{self.classes!r}."
            )
        # A copy: classes_ must not alias the parameter the user may mutate.
        classes = np.array(self.classes)
        if classes.ndim != 1 or classes.size != 2 or classes[0] == classes[1]:
            raise ValueError(
                "classes must be two distinct labels (negative, positive); got "
                f"{self.classes!r}."
            )
        return classes

    def _check_n_boot(self, n_groups):
        """Refuse an ``n_boot`` whose replicates no numpy array can hold.

        The bootstrap draws ``n_boot`` replicates of the declared groups'
        confusion tables and of their total in one float64 array
        (:func:`bootstrap_tables`), after
        the release: from the public ``n_boot`` and ``groups`` alone, a count
        beyond numpy's array sizes is refused here, by the plan and by the
        fit before any row is read, rather than by numpy after the release.
        The intervals make no array much larger: they form the pairs of
        groups' replicates one group at a time (:func:`compare_interval`),
        so this check bounds their memory too.
        """
        n_values = self.n_boot * (n_groups + 1) * len(CELLS)
        if n_values > MAX_FLOAT64_ENTRIES:
            raise ValueError(
                f"n_boot={self.n_boot} is too large: its replicates of the "
                "declared groups' confusion counts would not fit in one numpy "
                "array of float64. Pass a smaller n_boot (a few thousand give "
                "the intervals of any number of groups)."
            )

    def _check_groups(self, n_columns=None):
        groups = self.groups
        if isinstance(groups, np.ndarray):
            groups = groups.tolist()
        try:
            scalar = np.ndim(groups) == 0
        except ValueError:  # tuples of several lengths: refused below
            scalar = False
        if isinstance(groups, str) or scalar or len(groups) == 0:
            raise ValueError(
                "groups must be a non-empty list of the declared group labels; "
                f"got {groups!r}."
            )
        # No missing and no duplicate label: the check that the fit's
        # encode_sensitive_features runs, here before any row is read (and
        # by the plan, which reads none).
        groups = check_declared_groups(groups)
        # Groups and columns are public: a mismatch is refused here, with a
        # message about them, rather than as an undeclared group of the data.
        # One column holds labels (or tuples of one length, for a column of
        # tuples); several columns need tuples of one value per column.
        # Labels of two kinds fit no layout of columns: refused whatever the
        # columns, so that the plan refuses them as every fit would.
        lengths = {len(g) if isinstance(g, (tuple, list)) else None for g in groups}
        if len(lengths) != 1:
            raise ValueError(
                "groups must be labels of one kind: all plain labels (one "
                "column of sensitive_features), or all tuples of one length "
                f"(one value per column); got {self.groups!r}."
            )
        if n_columns is not None and n_columns > 1:
            check_labels_per_column(groups, n_columns, self.groups)
        return groups

    def _group_index(self, sensitive_features):
        """The index of ``counts_`` and ``by_group``: the declared groups.

        Its levels are named as fairlearn's ``MetricFrame`` names them: after
        a DataFrame's columns, a dict's keys or a Series' name (unless it is
        None), else ``sensitive_feature_{i}``. fairlearn refuses names that
        are not strings; here they are written as strings. The names are
        the columns' (public), never the rows'.
        """
        names = None
        if isinstance(sensitive_features, pd.DataFrame):
            names = [str(c) for c in sensitive_features.columns]
        elif isinstance(sensitive_features, dict):
            names = [str(key) for key in sensitive_features]
        elif (
            isinstance(sensitive_features, pd.Series)
            and sensitive_features.name is not None
        ):
            # A Series named 0 (or "") is named: only None leaves it unnamed.
            names = [str(sensitive_features.name)]
        if isinstance(self.groups_[0], tuple):
            # The levels are the values of a group's tuple: several columns,
            # or one column of tuples (whose one name cannot name them all).
            n_levels = len(self.groups_[0])
            if names is None or len(names) != n_levels:
                names = [f"sensitive_feature_{i}" for i in range(n_levels)]
            return pd.MultiIndex.from_tuples(list(self.groups_), names=names)
        return pd.Index(self.groups_, name=(names or ["sensitive_feature_0"])[0])

    # -- values -----------------------------------------------------------------

    def _values(self, tables, min_sds=MIN_DENOMINATOR_SDS, overall_row=False):
        """Metric name -> array (..., n_groups + 1) of groups then overall."""
        return {
            m: metric_values(
                tables, m, self.noise_std_, min_sds, overall_row=overall_row
            )
            for m in self.metrics_
        }

    def _single(self):
        return self._single_metric

    def _as_overall(self, row):
        if self._single():
            return float(row[0])
        return pd.Series(row, index=self.metrics_, dtype=float)

    def _as_by_group(self, columns):
        frame = pd.DataFrame(
            np.column_stack(columns), index=self.counts_.index, columns=self.metrics_
        )
        return frame[self.metrics_[0]] if self._single() else frame

    def _point(self):
        check_is_fitted(self)
        return self._values(self.counts_.to_numpy())

    def _intervals(self, interval):
        """Per metric, ``interval(metric, replicates)``: lists of bounds.

        ``replicates`` are the metric's bootstrap values, groups then overall.
        """
        check_is_fitted(self)
        lows, highs = [], []
        # Replicates compute every rate with a positive denominator (see
        # metric_values): tiny denominators widen the interval themselves.
        replicates = self._values(self._replicates, min_sds=0.0, overall_row=True)
        for metric, values in replicates.items():
            low, high = interval(metric, values)
            lows.append(low)
            highs.append(high)
        return lows, highs

    def _marginal(self, part):
        """Percentile intervals of ``values[part]`` (each value on its own)."""

        def interval(metric, values):
            return percentile_interval(
                values[part], self.confidence_level, _range(metric)
            )

        return self._intervals(interval)

    @property
    def overall(self):
        """Every metric on all rows (a scalar for a single metric).

        Returns
        -------
        overall : float or pandas.Series
            Per metric (a float for a single metric).
        """
        return self._as_overall([v[-1] for v in self._point().values()])

    @property
    def by_group(self):
        """Every metric per group (a Series for a single metric).

        Returns
        -------
        by_group : pandas.Series or pandas.DataFrame
            Groups as rows, metrics as columns.
        """
        return self._as_by_group([v[:-1] for v in self._point().values()])

    @property
    def overall_ci(self):
        """``(lower, upper)`` confidence bounds of :attr:`overall`.

        Returns
        -------
        lower, upper : float or pandas.Series
            The bounds at ``confidence_level``, per metric.
        """
        lows, highs = self._marginal((..., -1))
        return self._as_overall(lows), self._as_overall(highs)

    @property
    def by_group_ci(self):
        """``(lower, upper)`` confidence bounds of :attr:`by_group`.

        Returns
        -------
        lower, upper : pandas.Series or pandas.DataFrame
            The bounds at ``confidence_level``, per group and metric.
        """
        lows, highs = self._marginal((..., slice(None, -1)))
        return self._as_by_group(lows), self._as_by_group(highs)

    def _compared(self, how):
        values = self._point()
        return self._as_overall([compare(v, how) for v in values.values()])

    def _compared_ci(self, how):
        # The replicates compare the groups the reported value compares (a
        # mask read from the release: post-processing).
        skip = {metric: np.isnan(v) for metric, v in self._point().items()}

        def interval(metric, values):
            return compare_interval(
                values, how, self.confidence_level, _range(metric), skip[metric]
            )

        lows, highs = self._intervals(interval)
        return self._as_overall(lows), self._as_overall(highs)

    def group_min(self):
        """Smallest value of each metric over the groups (NaN groups skipped).

        Returns
        -------
        group_min : float or pandas.Series
            Per metric (a float for a single metric).
        """
        return self._compared("group_min")

    def group_max(self):
        """Largest value of each metric over the groups (NaN groups skipped).

        Returns
        -------
        group_max : float or pandas.Series
            Per metric (a float for a single metric).
        """
        return self._compared("group_max")

    def difference(self, method="between_groups"):
        """Largest difference of each metric between groups, or to overall.

        Parameters
        ----------
        method : {"between_groups", "to_overall"}, default="between_groups"
            ``group_max - group_min``, or the largest ``|group - overall|``.

        Returns
        -------
        difference : float or pandas.Series
            Per metric (a float for a single metric).
        """
        return self._compared(f"difference_{_check_method(method)}")

    def ratio(self, method="between_groups"):
        """Smallest ratio of each metric between groups, or to overall.

        Parameters
        ----------
        method : {"between_groups", "to_overall"}, default="between_groups"
            ``group_min / group_max``, or the smallest of
            ``min(group / overall, overall / group)``.

        Returns
        -------
        ratio : float or pandas.Series
            Per metric (a float for a single metric).
        """
        return self._compared(f"ratio_{_check_method(method)}")

    def group_min_ci(self):
        """``(lower, upper)`` confidence bounds of :meth:`group_min`.

        Returns
        -------
        lower, upper : float or pandas.Series
            The bounds at ``confidence_level``, per metric.
        """
        return self._compared_ci("group_min")

    def group_max_ci(self):
        """``(lower, upper)`` confidence bounds of :meth:`group_max`.

        Returns
        -------
        lower, upper : float or pandas.Series
            The bounds at ``confidence_level``, per metric.
        """
        return self._compared_ci("group_max")

    def difference_ci(self, method="between_groups"):
        """``(lower, upper)`` confidence bounds of :meth:`difference`.

        Parameters
        ----------
        method : {"between_groups", "to_overall"}, default="between_groups"
            As in :meth:`difference`.

        Returns
        -------
        lower, upper : float or pandas.Series
            The bounds at ``confidence_level``, per metric.
        """
        return self._compared_ci(f"difference_{_check_method(method)}")

    def ratio_ci(self, method="between_groups"):
        """``(lower, upper)`` confidence bounds of :meth:`ratio`.

        Parameters
        ----------
        method : {"between_groups", "to_overall"}, default="between_groups"
            As in :meth:`ratio`.

        Returns
        -------
        lower, upper : float or pandas.Series
            The bounds at ``confidence_level``, per metric.
        """
        return self._compared_ci(f"ratio_{_check_method(method)}")

    # -- fairness gaps ----------------------------------------------------------

    def _gap(self, tables, kind, method, min_sds=MIN_DENOMINATOR_SDS, skip=None):
        how = f"difference_{_check_method(method)}"
        skip = skip or {}
        gaps = [
            compare(
                metric_values(tables, r, self.noise_std_, min_sds), how, skip.get(r)
            )
            for r in _GAP_RATES[kind]
        ]
        # Equalized odds is the worse of the two gaps; NaN if either is.
        return np.maximum.reduce(gaps)

    def _gap_point(self, kind, method):
        check_is_fitted(self)
        return float(self._gap(self.counts_.to_numpy(), kind, method))

    def _gap_ci(self, kind, method):
        check_is_fitted(self)
        if np.isnan(self._gap_point(kind, method)):
            # A rate no group measures: the gap can be anything.
            return 0.0, 1.0
        how = f"difference_{_check_method(method)}"
        released = self.counts_.to_numpy()
        rates = _GAP_RATES[kind]
        # Equalized odds is the larger of two gaps: it lies between the
        # larger lower and the larger upper bound when both gaps' intervals
        # hold, which Bonferroni's split of the level over them ensures.
        level = 1.0 - (1.0 - self.confidence_level) / len(rates)
        bounds = [
            compare_interval(
                metric_values(
                    self._replicates, rate, self.noise_std_, 0.0, overall_row=True
                ),
                how,
                level,
                (0.0, 1.0),
                # As in _compared_ci: leave out the groups the gap leaves out.
                np.isnan(metric_values(released, rate, self.noise_std_)),
            )
            for rate in rates
        ]
        lows, highs = zip(*bounds)
        return float(max(lows)), float(max(highs))

    def demographic_parity_difference(self, method="between_groups"):
        """The selection-rate gap (fairlearn's ``demographic_parity_difference``).

        Parameters
        ----------
        method : {"between_groups", "to_overall"}, default="between_groups"
            As in :meth:`difference`.

        Returns
        -------
        difference : float
            ``group_max - group_min`` (or to overall) of the selection rate.
        """
        return self._gap_point("dp", method)

    def equalized_odds_difference(self, method="between_groups"):
        """The worse TPR or FPR gap (fairlearn's ``equalized_odds_difference``).

        Parameters
        ----------
        method : {"between_groups", "to_overall"}, default="between_groups"
            As in :meth:`difference`.

        Returns
        -------
        difference : float
            ``max`` of the true- and false-positive-rate differences
            (fairlearn's ``agg="worst_case"``); NaN if either is NaN.
        """
        return self._gap_point("eo", method)

    def demographic_parity_difference_ci(self, method="between_groups"):
        """``(lower, upper)`` confidence bounds of :meth:`demographic_parity_difference`.

        Parameters
        ----------
        method : {"between_groups", "to_overall"}, default="between_groups"
            As in :meth:`difference`.

        Returns
        -------
        lower, upper : float
            The bounds at ``confidence_level``.
        """
        return self._gap_ci("dp", method)

    def equalized_odds_difference_ci(self, method="between_groups"):
        """``(lower, upper)`` confidence bounds of :meth:`equalized_odds_difference`.

        Parameters
        ----------
        method : {"between_groups", "to_overall"}, default="between_groups"
            As in :meth:`difference`.

        Returns
        -------
        lower, upper : float
            The bounds at ``confidence_level``.
        """
        return self._gap_ci("eo", method)

    # -- explanations -----------------------------------------------------------

    def _nan_notes(self):
        """Why each NaN point value is NaN (from the released counts only)."""
        notes = []
        names = [*map(str, self.counts_.index), "overall"]
        for metric, values in self._point().items():
            for name, value in zip(names, values):
                if np.isnan(value):
                    notes.append(
                        f"{metric} of {name} is NaN: its noisy denominator is not "
                        f"above {MIN_DENOMINATOR_SDS:g} standard deviations of its "
                        f"noise (each count's noise std is {self.noise_std_:.3g}), "
                        "so the group is too small to measure it at this epsilon."
                        if self.noise_std_ > 0
                        else f"{metric} of {name} is NaN: its denominator is 0."
                    )
        return notes

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.requires_fit = True
        return tags


def _range(metric):
    """The values a metric can take, for its NaN replicates."""
    return (0.0, np.inf) if metric == "count" else (0.0, 1.0)


def _check_method(method):
    if method not in _COMPARE_METHODS:
        raise ValueError(f"method must be one of {_COMPARE_METHODS}; got {method!r}.")
    return method


def _is_positive(y, classes, name):
    """Whether each label is the positive class; refuse undeclared labels."""
    if y.dtype == object:
        # pd.NA (a nullable column's missing label) is no declared class,
        # and comparing it would raise "boolean value of NA is ambiguous";
        # None and NaN compare (and may be declared).
        missing = pd.isna(y)
        if missing.any() and any(v is pd.NA for v in y[missing]):
            raise ValueError(_UNDECLARED_LABELS.format(name=name))
    try:
        negative, positive = y == classes[0], y == classes[1]
    except (TypeError, ValueError):  # a label that is an array or a list
        raise ValueError(_UNDECLARED_LABELS.format(name=name)) from None
    if not np.all(negative | positive):
        raise ValueError(_UNDECLARED_LABELS.format(name=name))
    return np.asarray(positive, dtype=bool)
