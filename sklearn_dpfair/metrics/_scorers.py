# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Fairness-aware scorers for ``GridSearchCV`` / ``cross_validate``.

A scorer needs the sensitive features of the *validation* fold, which only
scikit-learn's metadata routing can deliver. The scorers made here already
request ``sensitive_features`` (so users need not call
``set_score_request``); routing itself must be enabled with
``sklearn.set_config(enable_metadata_routing=True)``.
"""

import inspect
import math
from numbers import Number, Real

import numpy as np
import sklearn
from fairlearn import metrics as fl_metrics
from sklearn.metrics import accuracy_score, balanced_accuracy_score, make_scorer

from ..utils._redact import redacting_errors
from ..utils._validation import check_public_weights
from ._ermi import ermi_score
from ._gaps import demographic_parity_linf

__all__ = ["make_fairness_scorer"]

#: Fairness metrics by name: all take ``(y_true, y_pred, *, sensitive_features)``
#: and are "lower is fairer"; all but "ermi" also take ``sample_weight``.
FAIRNESS_METRICS = {
    "demographic_parity_difference": fl_metrics.demographic_parity_difference,
    "equalized_odds_difference": fl_metrics.equalized_odds_difference,
    "equal_opportunity_difference": fl_metrics.equal_opportunity_difference,
    "demographic_parity_linf": demographic_parity_linf,
    "ermi": ermi_score,
}

#: fairlearn's metrics compare the rates of one positive label, which they take
#: to be 1 (``y_pred == 1`` for the selection rate; labels from {0, 1} or
#: {-1, 1} for the true and false positive rates). On other labels the
#: selection rate of every group is 0, so every model looks perfectly fair.
_POSITIVE_LABEL_METRICS = (
    fl_metrics.demographic_parity_difference,
    fl_metrics.equalized_odds_difference,
    fl_metrics.equal_opportunity_difference,
)
#: Ours compare every predicted class: no label is the positive one.
_EVERY_CLASS_METRICS = (demographic_parity_linf, ermi_score)
#: The label sets on which fairlearn finds the positive label 1 by itself
#: (its own test, so that these labels reach it unchanged).
_ONE_IS_POSITIVE = (frozenset({0, 1}), frozenset({-1, 1}))

#: Performance metrics by name (higher is better).
BASE_METRICS = {
    "accuracy": accuracy_score,
    "balanced_accuracy": balanced_accuracy_score,
}

_NO_SENSITIVE = (
    "This fairness scorer needs the sensitive features of the evaluated rows. "
    "Enable metadata routing (sklearn.set_config(enable_metadata_routing=True)) "
    "and pass sensitive_features=... to fit/cross_validate. Calling the scorer "
    "with sensitive_features=... also needs metadata routing enabled (inside "
    "sklearn.config_context(enable_metadata_routing=True)): scikit-learn "
    "refuses a scorer's keyword arguments without it."
)


class _FairnessScore:
    """Picklable score function ``base - penalty * max(0, gap - tolerance)``.

    A NaN gap counts as an infinite one.
    """

    def __init__(
        self,
        fairness,
        base,
        fairness_penalty,
        tolerance,
        name,
        kwargs,
        pos_label=None,
        binary=False,
    ):
        self.fairness = fairness
        self.base = base
        self.fairness_penalty = fairness_penalty
        self.tolerance = tolerance
        self.kwargs = kwargs
        self.__name__ = name
        # The positive label, and whether the fairness metric counts one:
        # its labels are then checked, and mapped to (y == pos_label).
        self.pos_label = pos_label
        self.binary = binary

    @redacting_errors
    def __call__(self, y_true, y_pred, *, sensitive_features=None, sample_weight=None):
        if sensitive_features is None:
            raise ValueError(_NO_SENSITIVE)
        weight = {}
        if sample_weight is not None:
            # One weighting for both terms: a gap of the weighted population
            # next to the accuracy of the unweighted one would mix two scores.
            for role, metric in (
                ("fairness_metric", self.fairness),
                ("base_metric", self.base),
            ):
                if metric is not None and not _takes_sample_weight(metric):
                    raise TypeError(
                        f"The {role} of this scorer ({_name(metric)}) takes no "
                        "sample_weight; do not pass or route sample_weight to "
                        f"the scorer, or use a {role} that takes it."
                    )
            # Checked once for both metrics: fairlearn's take a negative or
            # NaN weight as given (a gap of 2.33, or a NaN group dropped
            # from the gap, which then reads 0).
            weight = {"sample_weight": check_public_weights(sample_weight, y_pred)}
        fair_true, fair_pred = y_true, y_pred
        if getattr(self, "binary", False):  # absent from older pickles
            fair_true, fair_pred = _positive_indicators(
                y_true, y_pred, getattr(self, "pos_label", None), _name(self.fairness)
            )
        gap = float(
            self.fairness(
                fair_true,
                fair_pred,
                sensitive_features=sensitive_features,
                **weight,
                **self.kwargs,
            )
        )
        if np.isnan(gap):
            # An unmeasurable gap (a metric's NaN, say a group without one of
            # the labels a rate conditions on) is the worst case: a model is
            # never preferred because its gap is unknown. max(0, nan) would
            # be 0, no penalty at all.
            gap = np.inf
        if self.base is None:
            return gap
        excess = max(0.0, gap - self.tolerance)
        # A zero penalty ignores the gap, even an infinite one (0 * inf is NaN).
        penalty = self.fairness_penalty * excess if self.fairness_penalty else 0.0
        return float(self.base(y_true, y_pred, **weight)) - penalty


def _distinct_labels(y):
    """The set of the distinct labels of ``y``, as Python scalars."""
    values = np.asarray(y)
    try:
        return set(np.unique(values).tolist())
    except TypeError:  # labels numpy cannot sort (a string among numbers)
        return set(values.ravel().tolist())


def _kind(labels):
    """What the labels are, in words that show none of them."""
    if all(isinstance(label, str) for label in labels):
        return "strings"
    if all(isinstance(label, Number) for label in labels):
        return "numbers other than 0 and 1 (or -1 and 1)"
    return "of mixed or non-numeric types"


def _positive_indicators(y_true, y_pred, pos_label, metric):
    """``(y_true, y_pred)`` as fairlearn's binary metrics need them.

    Labels from {0, 1}, {-1, 1} or booleans, without ``pos_label``, are
    returned unchanged (fairlearn takes 1 as positive); with ``pos_label``
    the labels become the indicators ``y == pos_label`` (0/1). The messages
    never show a label: the evaluated rows may be private.
    """
    labels = _distinct_labels(y_true) | _distinct_labels(y_pred)
    if len(labels) > 2:
        raise ValueError(
            f"The fairness metric {metric} compares the rates of one positive "
            "label and needs binary labels, but y_true and y_pred hold more "
            "than two distinct labels (not shown: they may be private). Use "
            "fairness_metric='demographic_parity_linf' or 'ermi', which compare "
            "every class, or binarize the labels."
        )
    if pos_label is None:
        if any(allowed.issuperset(labels) for allowed in _ONE_IS_POSITIVE):
            return y_true, y_pred
        raise ValueError(
            f"The fairness metric {metric} counts the positive label, which is 1 "
            "unless pos_label is given: the labels must then be from {0, 1}, "
            f"{{-1, 1}} or booleans, but these are {_kind(labels)} (not shown: "
            "they may be private), so the gap would not be measured (labels "
            "without a 1 select no one). Pass "
            "make_fairness_scorer(..., pos_label=<the positive label>)."
        )
    if len(labels) == 2 and pos_label not in labels:
        raise ValueError(
            f"pos_label={pos_label!r} is not one of the two labels of y_true "
            "and y_pred (not shown: they may be private); pass the positive "
            "one of them."
        )
    # Compared as Python objects, as the label set above was (1 == 1.0 ==
    # True), whatever numpy would make of a string beside numbers.
    return tuple(
        (np.asarray(y, dtype=object) == pos_label).astype(np.int64)
        for y in (y_true, y_pred)
    )


def _name(metric):
    return getattr(metric, "__name__", type(metric).__name__)


def _takes_sample_weight(metric):
    """Whether ``metric`` accepts a ``sample_weight`` keyword."""
    try:
        parameters = inspect.signature(metric).parameters.values()
    except (TypeError, ValueError):  # no signature to read: the call decides
        return True
    return any(
        p.name == "sample_weight" or p.kind is inspect.Parameter.VAR_KEYWORD
        for p in parameters
    )


def _resolve(metric, table, what):
    if callable(metric):
        return metric, getattr(metric, "__name__", what)
    if metric not in table:
        raise ValueError(f"Unknown {what} {metric!r}; use one of {sorted(table)}.")
    return table[metric], metric


def make_fairness_scorer(
    fairness_metric="demographic_parity_difference",
    *,
    base_metric=None,
    fairness_penalty=1.0,
    tolerance=0.0,
    pos_label=None,
    **metric_kwargs,
):
    """Scorer of fairness, or of accuracy penalized by unfairness, routed with groups.

    * ``base_metric=None``: the score is ``-fairness_metric`` (a gap, lower
      is fairer, so scikit-learn maximizes its negative).
    * ``base_metric="accuracy"`` (or another): the score is
      ``base - fairness_penalty * max(0, gap - tolerance)``: accuracy, with a
      penalty for every point of gap above ``tolerance``. This picks "the most
      accurate model that is fair enough" in ``GridSearchCV``.

    A NaN gap (the metric cannot measure it on the evaluated rows) counts as
    the worst, an infinite gap: the score is ``-inf`` (the base score alone
    if ``fairness_penalty=0``), so a search ranks the model last and warns of
    non-finite scores rather than prefer it for a gap nobody measured.

    The scorer requests ``sensitive_features``: with metadata routing enabled,
    ``GridSearchCV(...).fit(X, y, sensitive_features=A)`` slices ``A`` per fold
    and hands the validation part to the scorer (and the training part to
    every estimator that requested it with ``set_fit_request``).

    A ``sample_weight`` given to the scorer (routed to it after
    ``scorer.set_score_request(sensitive_features=True,
    sample_weight=True)``, or passed directly) weighs both the gap and the
    base score: it is passed to the fairness metric and to the base metric.
    (A scorer's ``set_score_request`` replaces all its requests: name
    ``sensitive_features`` again.) fairlearn's metrics,
    "demographic_parity_linf", "accuracy" and "balanced_accuracy" take it;
    "ermi" does not, and a weighted call of a scorer built on it (or on a
    callable without ``sample_weight``) raises ``TypeError``.

    fairlearn's three metrics compare the rates of one positive label: they
    need binary labels, and take 1 as positive. Labels from {0, 1}, {-1, 1}
    or booleans are passed to them as they are; for other labels (``"no"``
    and ``"yes"``, 0 and 2) name the positive one with ``pos_label``, and
    the scorer passes them the indicators ``y == pos_label``. Without it,
    such labels raise ``ValueError`` when the scorer is called (fairlearn
    would count no selection at all, and score every model perfectly fair),
    as do more than two labels. "demographic_parity_linf" and "ermi"
    compare every predicted class and take no ``pos_label``. The base metric
    always scores the labels as they are.

    Parameters
    ----------
    fairness_metric : str or callable, default="demographic_parity_difference"
        "demographic_parity_difference", "equalized_odds_difference",
        "equal_opportunity_difference" (fairlearn's), "demographic_parity_linf"
        or "ermi" (ours), or a callable
        ``(y_true, y_pred, *, sensitive_features, **metric_kwargs)`` (and
        ``sample_weight=`` for weighted scores).
    base_metric : {"accuracy", "balanced_accuracy"}, callable or None, \
            default=None
        Performance score ``(y_true, y_pred)`` (and ``sample_weight=`` for
        weighted scores) to penalize; None scores fairness alone.
    fairness_penalty : float, default=1.0
        Points of score lost per point of gap above ``tolerance``; finite,
        ``>= 0``.
    tolerance : float, default=0.0
        Gap tolerated without penalty; finite, ``>= 0``.
    pos_label : str, int, float or bool, default=None
        The positive label of ``y`` for "demographic_parity_difference",
        "equalized_odds_difference" and "equal_opportunity_difference"
        (scikit-learn's convention, as in ``f1_score``). None: 1, for labels
        from {0, 1}, {-1, 1} or booleans. Refused with
        "demographic_parity_linf" and "ermi" (for equal opportunity, "ermi"
        takes ``opportunity_class=``); passed on to a callable
        ``fairness_metric`` as a keyword, as ``metric_kwargs`` are.
    **metric_kwargs : dict
        Passed to the fairness metric (e.g. ``constraint=`` for "ermi").

    Returns
    -------
    scorer : callable
        A scikit-learn scorer ``scorer(estimator, X, y, sensitive_features=...)``
        (and ``sample_weight=...``).

    Raises
    ------
    TypeError
        If ``fairness_penalty`` or ``tolerance`` is not a real number, or
        ``pos_label`` is not a string, number or bool.
    ValueError
        If a metric name is unknown, ``fairness_penalty`` or ``tolerance``
        is negative or not finite, or ``pos_label`` is given with a metric
        that takes none. The scorer raises it when called, without showing
        the labels, if a metric with a positive label gets more than two
        labels, labels outside {0, 1}, {-1, 1} and booleans without
        ``pos_label``, or two labels of which ``pos_label`` is neither.

    Examples
    --------
    >>> import numpy as np
    >>> import sklearn
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.model_selection import cross_validate
    >>> from sklearn_dpfair.metrics import make_fairness_scorer
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2)); A = rng.integers(0, 2, 200)
    >>> y = (X[:, 0] > 0).astype(int)
    >>> fair_acc = make_fairness_scorer(base_metric="accuracy", tolerance=0.05)
    >>> with sklearn.config_context(enable_metadata_routing=True):
    ...     cv = cross_validate(LogisticRegression(), X, y, cv=3,
    ...                         scoring={"fair_acc": fair_acc},
    ...                         params={"sensitive_features": A})
    >>> cv["test_fair_acc"].shape
    (3,)

    Labels other than 0 and 1 need their positive label named:

    >>> y_text = np.where(y == 1, "yes", "no")
    >>> clf = LogisticRegression().fit(X, y_text)
    >>> with sklearn.config_context(enable_metadata_routing=True):
    ...     gap = -make_fairness_scorer(pos_label="yes")(
    ...         clf, X, y_text, sensitive_features=A)
    >>> from fairlearn.metrics import demographic_parity_difference
    >>> bool(gap == demographic_parity_difference(
    ...     y_text == "yes", clf.predict(X) == "yes", sensitive_features=A))
    True
    >>> with sklearn.config_context(enable_metadata_routing=True):
    ...     make_fairness_scorer()(clf, X, y_text, sensitive_features=A)
    Traceback (most recent call last):
    ...
    ValueError: The fairness metric demographic_parity_difference counts ...
    """
    fairness, fair_name = _resolve(fairness_metric, FAIRNESS_METRICS, "fairness_metric")
    if base_metric is None:
        base, name = None, fair_name
    else:
        base, base_name = _resolve(base_metric, BASE_METRICS, "base_metric")
        name = f"{base_name}_penalized_by_{fair_name}"
    as_float = {}
    for param, value in (
        ("fairness_penalty", fairness_penalty),
        ("tolerance", tolerance),
    ):
        if not isinstance(value, Real):
            raise TypeError(
                f"{param} must be a real number; got {value!r} of type "
                f"{type(value).__name__}."
            )
        # Checked as the float the scorer computes with: np.isfinite takes
        # no int beyond int64 (10**30), and comparing a float16 with the
        # largest float casts that to float16 (an overflow warning).
        try:
            as_float[param] = float(value)
        except OverflowError:
            # An int or Fraction beyond the largest float.
            raise ValueError(
                f"{param} must be a finite number; got a value beyond the "
                "largest float."
            ) from None
    fairness_penalty, tolerance = as_float["fairness_penalty"], as_float["tolerance"]
    if not math.isfinite(fairness_penalty) or fairness_penalty < 0:
        raise ValueError(f"fairness_penalty must be >= 0; got {fairness_penalty!r}.")
    # A NaN tolerance would silently turn the penalty off (nothing exceeds it).
    if not math.isfinite(tolerance) or tolerance < 0:
        raise ValueError(f"tolerance must be a finite number >= 0; got {tolerance!r}.")
    binary = any(fairness is metric for metric in _POSITIVE_LABEL_METRICS)
    if pos_label is not None:
        if not isinstance(pos_label, (str, Number, np.generic)):
            raise TypeError(
                "pos_label must be a label (a string, number or bool); got "
                f"{pos_label!r} of type {type(pos_label).__name__}."
            )
        if any(fairness is metric for metric in _EVERY_CLASS_METRICS):
            hint = (
                " (for equal opportunity, name the advantaged class with "
                "opportunity_class=)"
                if fairness is ermi_score
                else ""
            )
            raise ValueError(
                f"pos_label applies to the fairness metrics that compare the "
                f"rates of one positive label; {fair_name!r} compares every "
                f"predicted class and takes none{hint}. Drop pos_label."
            )
        if not binary:
            # A callable of the user's: it reads pos_label itself, as it
            # read it from metric_kwargs before pos_label had a name here.
            metric_kwargs = {**metric_kwargs, "pos_label": pos_label}
    score = _FairnessScore(
        fairness,
        base,
        float(fairness_penalty),
        float(tolerance),
        name,
        metric_kwargs,
        pos_label=pos_label if binary else None,
        binary=binary,
    )
    scorer = make_scorer(score, greater_is_better=base is not None)
    # The request is stored on the scorer, so it survives leaving the context:
    # the scorer works whenever routing is enabled later.
    with sklearn.config_context(enable_metadata_routing=True):
        scorer = scorer.set_score_request(sensitive_features=True)
    return scorer
