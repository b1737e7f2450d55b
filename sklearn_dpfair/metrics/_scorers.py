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
from numbers import Real

import numpy as np
import sklearn
from fairlearn import metrics as fl_metrics
from sklearn.metrics import accuracy_score, balanced_accuracy_score, make_scorer

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

    def __init__(self, fairness, base, fairness_penalty, tolerance, name, kwargs):
        self.fairness = fairness
        self.base = base
        self.fairness_penalty = fairness_penalty
        self.tolerance = tolerance
        self.kwargs = kwargs
        self.__name__ = name

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
            weight = {"sample_weight": sample_weight}
        gap = float(
            self.fairness(
                y_true,
                y_pred,
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
        If ``fairness_penalty`` or ``tolerance`` is not a real number.
    ValueError
        If a metric name is unknown, or ``fairness_penalty`` or
        ``tolerance`` is negative or not finite.

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
    """
    fairness, fair_name = _resolve(fairness_metric, FAIRNESS_METRICS, "fairness_metric")
    if base_metric is None:
        base, name = None, fair_name
    else:
        base, base_name = _resolve(base_metric, BASE_METRICS, "base_metric")
        name = f"{base_name}_penalized_by_{fair_name}"
    for param, value in (
        ("fairness_penalty", fairness_penalty),
        ("tolerance", tolerance),
    ):
        if not isinstance(value, Real):
            raise TypeError(
                f"{param} must be a real number; got {value!r} of type "
                f"{type(value).__name__}."
            )
    if not np.isfinite(fairness_penalty) or fairness_penalty < 0:
        raise ValueError(f"fairness_penalty must be >= 0; got {fairness_penalty!r}.")
    # A NaN tolerance would silently turn the penalty off (nothing exceeds it).
    if not np.isfinite(tolerance) or tolerance < 0:
        raise ValueError(f"tolerance must be a finite number >= 0; got {tolerance!r}.")
    score = _FairnessScore(
        fairness, base, float(fairness_penalty), float(tolerance), name, metric_kwargs
    )
    scorer = make_scorer(score, greater_is_better=base is not None)
    # The request is stored on the scorer, so it survives leaving the context:
    # the scorer works whenever routing is enabled later.
    with sklearn.config_context(enable_metadata_routing=True):
        scorer = scorer.set_score_request(sensitive_features=True)
    return scorer
