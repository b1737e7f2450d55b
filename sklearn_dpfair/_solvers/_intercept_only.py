# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The intercept-only model a small budget can afford, planned before the data.

A noisy gradient method spends its budget on ``p = (n_features + 1)
(n_classes - 1)`` coordinates. When ``n epsilon`` is small against ``p``,
the noise in the released coefficients swamps the signal and the model
predicts worse on held-out data than the constant it could have released
for a fraction of the noise (measured in ``benchmarks/bench_fermi_small.py``:
DP-FERMI's defaults at ``epsilon = 1`` on 300 Adult rows, 97 columns, err
0.35 against the majority class's 0.25). Whether the budget can buy a
better model depends on the data's signal, which is private; what is
public is ``n``, ``p`` and ``epsilon``. So the choice is made from those
alone, *before* the data is read (:func:`affords_model`): a fit whose
``n_samples * epsilon`` is below ``records_per_parameter * p`` releases the
intercept-only model instead, the label histogram through one Gaussian
mechanism of sensitivity 1 under add/remove adjacency (one record moves
one count by one), calibrated to the whole ``(epsilon, delta)``
(:func:`intercept_only_setup`, :func:`fit_intercept_only`). That one
Gaussian release is calibrated and accounted with dp-accounting's PLD
accountant, exact for it (the analytic Gaussian mechanism), whatever the
fit's ``accountant``: RDP's finite orders overstate a single Gaussian's
epsilon and cannot certify budgets below about 0.01 at all (output
perturbation's single Gaussian is accounted the same way). Intercepts are
the log-frequencies of the noisy counts, floored at one record
(post-processing). The rule's threshold is each estimator's, measured on
held-out data; the estimators expose it as ``small_budget="auto"`` and let
users turn it off (``"fit"``).
"""

import math
from dataclasses import dataclass, replace

import numpy as np

from ..privacy import GaussianMechanism, PrivacyRecord
from ..privacy._accounting import SINGLE_GAUSSIAN_ACCOUNTANT
from ..privacy._weights import counted_weights

__all__ = [
    "InterceptOnlySetup",
    "affords_model",
    "constant_linear_model",
    "fit_intercept_only",
    "intercept_only_model",
    "intercept_only_setup",
    "label_counts",
    "library_calibrates",
    "log_frequencies",
    "n_parameters",
    "small_budget_message",
]

_DESCRIPTION = (
    "intercept-only model: Gaussian histogram of the {k} label counts "
    "(L2 sensitivity 1 under add/remove adjacency, noise multiplier {z:.6g}; "
    "one Gaussian release, calibrated and accounted with dp-accounting's PLD, "
    "exact for it, whatever the fit's accountant); intercepts are the "
    "log-frequencies of the noisy counts floored at 1"
)


_MESSAGE = (
    "{name}: small_budget='auto' released the intercept-only model (the noisy "
    "label frequencies; coef_ is 0 and {attribute} is True), because "
    "n_samples * epsilon is below "
    "{c:g} * (n_features + 1) * (n_classes - 1) = {c:g} * {p} = {need:.4g}: at "
    "this budget the noisy model predicts worse on held-out data than the "
    "constant (a public rule of n_samples, n_features, n_classes and epsilon "
    "only; the data were not read to decide). Raise epsilon, use fewer "
    "features, or pass small_budget='fit' to fit the model anyway."
)


def n_parameters(n_features, n_classes):
    """The ``(n_features + 1) (n_classes - 1)`` free parameters of a linear model.

    Examples
    --------
    >>> from sklearn_dpfair._solvers._intercept_only import n_parameters
    >>> n_parameters(97, 2), n_parameters(4, 3)
    (98, 10)
    """
    return (int(n_features) + 1) * max(int(n_classes) - 1, 1)


def affords_model(n_samples, n_features, n_classes, budget, records_per_parameter):
    """Whether ``budget`` can buy more than the intercept-only model (public rule).

    True when ``n_samples * epsilon >= records_per_parameter *``
    :func:`n_parameters`, or when the budget is not calibrated by the
    library (``epsilon = inf``, or a user-given noise multiplier: the user
    chose the mechanism).

    Parameters
    ----------
    n_samples, n_features, n_classes : int
        Public counts of the fit.
    budget : PrivacyBudget
        The fit's budget (its ``epsilon`` and whether it is calibrated).
    records_per_parameter : float
        The estimator's measured threshold.

    Returns
    -------
    affords : bool

    Examples
    --------
    >>> from sklearn_dpfair.privacy import PrivacyBudget
    >>> from sklearn_dpfair._solvers._intercept_only import affords_model
    >>> affords_model(300, 97, 2, PrivacyBudget(1.0, 1e-5), 20.0)
    False
    >>> affords_model(2000, 97, 2, PrivacyBudget(1.0, 1e-5), 20.0)
    True
    """
    if not library_calibrates(budget):
        return True
    need = records_per_parameter * n_parameters(n_features, n_classes)
    return n_samples * budget.epsilon >= need


def library_calibrates(budget):
    """Whether the library calibrates the fit's noise to a finite ``epsilon``.

    False for a non-private budget, ``epsilon = inf`` or a user-given noise
    multiplier (the user chose the mechanism): the small-budget rules then
    leave the fit alone.

    Examples
    --------
    >>> from sklearn_dpfair.privacy import PrivacyBudget
    >>> from sklearn_dpfair._solvers._intercept_only import library_calibrates
    >>> library_calibrates(PrivacyBudget(1.0, 1e-5))
    True
    >>> library_calibrates(PrivacyBudget(float("inf"), 1e-5))
    False
    """
    return (
        budget.is_private and budget.is_calibrated and not math.isinf(budget.epsilon)
    )


def small_budget_message(
    name, n_features, n_classes, records_per_parameter, attribute="intercept_only_",
):
    """The warning of a fit that fell back: the public rule, no private value.

    The rule's threshold, not this fit's ``n_samples * epsilon``: the folds
    of two sizes and the epsilons of a search, and their refit, are one
    cause and show one warning (a warning shows once per text).
    """
    p = n_parameters(n_features, n_classes)
    return _MESSAGE.format(
        name=name,
        attribute=attribute,
        c=float(records_per_parameter),
        p=p,
        need=records_per_parameter * p,
    )


@dataclass(frozen=True)
class InterceptOnlySetup:
    """The planned release of the intercept-only model (public inputs only).

    ``mechanism`` privatizes the label histogram (sensitivity 1);
    ``record`` is what the accountant was given (one Gaussian release).
    """

    n_classes: int
    mechanism: GaussianMechanism
    record: PrivacyRecord

    @property
    def event(self):
        """The ``dp_event_`` of the fit."""
        return self.record.dp_event


def intercept_only_setup(budget, n_classes, *, caveats=()):
    """Calibrate the label histogram to the whole ``budget``, before the data.

    The histogram is one Gaussian release, so it is calibrated and
    accounted with dp-accounting's PLD accountant (exact for it) whatever
    ``budget.accountant`` says; the record's ``accountant`` is ``"pld"`` and
    its mechanism text says why. A ledger, pipeline or search that composes
    the fit under RDP reads the same event with RDP (a valid, looser bound:
    RDP composes any Gaussian event).

    Parameters
    ----------
    budget : PrivacyBudget
        The fit's budget: calibrated by the library, finite epsilon, not a
        part of a split (:func:`library_calibrates`; the rule of
        :func:`affords_model` plans this release for such budgets only).
    n_classes : int
        Declared number of classes (the histogram's length).
    caveats : tuple of str, default=()
        Caveats of the fit besides the budget's own.

    Returns
    -------
    setup : InterceptOnlySetup

    Raises
    ------
    ValueError
        For a budget the library does not calibrate (a user noise
        multiplier, ``epsilon = inf``) or a part of a split budget (its
        zCDP share is not an ``(epsilon, delta)`` target).

    Examples
    --------
    >>> from sklearn_dpfair.privacy import PrivacyBudget
    >>> from sklearn_dpfair._solvers._intercept_only import intercept_only_setup
    >>> setup = intercept_only_setup(PrivacyBudget(1.0, 1e-5), 2)
    >>> round(setup.mechanism.noise_multiplier, 2), setup.record.epsilon <= 1.0
    (3.73, True)
    >>> setup.record.accountant
    'pld'
    >>> tiny = intercept_only_setup(PrivacyBudget(0.001, 1e-6), 2)
    >>> tiny.record.epsilon <= 0.001
    True
    """
    if not library_calibrates(budget) or budget.rho is not None:
        raise ValueError(
            "The intercept-only release is calibrated to a finite "
            "(epsilon, delta) by the library; got a budget with "
            f"epsilon={budget.epsilon!r}, noise_multiplier="
            f"{budget.noise_multiplier!r}, rho={budget.rho!r}. This is a bug: "
            "please report it."
        )
    budget = replace(budget, accountant=SINGLE_GAUSSIAN_ACCOUNTANT)
    mechanism = budget.gaussian(1.0)
    record = budget.account(
        mechanism,
        description=_DESCRIPTION.format(
            k=int(n_classes), z=mechanism.noise_multiplier
        ),
        adjacency="add_remove",
        caveats=tuple(caveats),
    )
    return InterceptOnlySetup(int(n_classes), mechanism, record)


def label_counts(y, n_classes, sample_weight=None):
    """The exact (weighted) count of each class index ``0 .. n_classes - 1`` in ``y``.

    With public weights each record counts ``min(w_i, 1)``
    (:func:`~sklearn_dpfair.privacy._weights.counted_weights`): a weight of
    0 removes a record, and none counts more than once, so the histogram's
    sensitivity is the unweighted one's. Counts of disjoint parts of the
    rows (a Dask fit's partitions) add up to the whole's.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers._intercept_only import label_counts
    >>> label_counts(np.array([0, 2, 2]), 3)
    array([1., 0., 2.])
    >>> label_counts(np.array([0, 2, 2]), 3, np.array([0.5, 0.0, 7.0]))
    array([0.5, 0. , 1. ])
    """
    weights = counted_weights(sample_weight, private=True)
    exact = np.bincount(
        np.asarray(y, dtype=np.intp), weights=weights, minlength=n_classes
    )
    return exact[:n_classes].astype(np.float64)


def fit_intercept_only(setup, counts, rng):
    """Release the label histogram and return the intercepts of its frequencies.

    Parameters
    ----------
    setup : InterceptOnlySetup
        From :func:`intercept_only_setup`.
    counts : ndarray of shape (n_classes,)
        The exact class counts (:func:`label_counts`; labels outside the
        declared set were refused by validation).
    rng : numpy.random.Generator
        Source of the noise.

    Returns
    -------
    intercept : ndarray of shape (n_classes,)
        Log-frequencies of the noisy counts, each floored at 1 (a public
        constant: post-processing keeps every value finite).
    counts : ndarray of shape (n_classes,)
        The released noisy counts.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.privacy import PrivacyBudget
    >>> from sklearn_dpfair._solvers._intercept_only import (
    ...     fit_intercept_only, intercept_only_setup, label_counts)
    >>> setup = intercept_only_setup(PrivacyBudget(1.0, 1e-5), 2)
    >>> y = np.array([0] * 700 + [1] * 300)
    >>> intercept, counts = fit_intercept_only(
    ...     setup, label_counts(y, 2), np.random.default_rng(0))
    >>> bool(intercept[0] > intercept[1])
    True
    """
    exact = np.asarray(counts, dtype=np.float64)
    noisy = np.asarray(setup.mechanism.privatize(exact, rng), dtype=np.float64)
    return log_frequencies(noisy), noisy


def log_frequencies(counts):
    """Log-frequencies of noisy class counts, each floored at one record.

    The floor is a public constant: post-processing that keeps every value
    finite whatever the noise drew.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers._intercept_only import log_frequencies
    >>> np.exp(log_frequencies(np.array([3.0, -2.0]))).round(2)
    array([0.75, 0.25])
    """
    floored = np.maximum(np.asarray(counts, dtype=np.float64), 1.0)
    return np.log(floored / floored.sum())


def constant_linear_model(log_frequency, n_features):
    """Zero coefficients and the intercepts of a constant linear model.

    Binary problems keep one row (the logit of the second class), as the
    package's linear classifiers do.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers._intercept_only import constant_linear_model
    >>> coef, intercept = constant_linear_model(np.log([0.75, 0.25]), 3)
    >>> coef.shape, intercept.round(3)
    ((1, 3), array([-1.099]))
    """
    log_frequency = np.asarray(log_frequency, dtype=np.float64)
    coef = np.zeros((log_frequency.shape[0], n_features))
    if log_frequency.shape[0] == 2:
        return coef[:1], log_frequency[1:] - log_frequency[:1]
    return coef, log_frequency


def intercept_only_model(setup, counts, rng, n_features):
    """The released linear model: zero coefficients and the noisy intercepts.

    Binary problems keep one row (the logit of the second class), as the
    package's linear classifiers do.

    Parameters
    ----------
    setup : InterceptOnlySetup
        From :func:`intercept_only_setup`.
    counts : ndarray of shape (n_classes,)
        The exact class counts (:func:`label_counts`).
    rng : numpy.random.Generator
        Source of the noise.
    n_features : int
        Number of columns of the model.

    Returns
    -------
    coef : ndarray of shape (1, n_features) or (n_classes, n_features)
    intercept : ndarray of shape (1,) or (n_classes,)

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.privacy import PrivacyBudget
    >>> from sklearn_dpfair._solvers._intercept_only import (
    ...     intercept_only_model, intercept_only_setup)
    >>> setup = intercept_only_setup(PrivacyBudget(1.0, 1e-5), 2)
    >>> coef, intercept = intercept_only_model(
    ...     setup, np.array([700.0, 300.0]), np.random.default_rng(0), 3)
    >>> coef.shape, bool(intercept[0] < 0)
    ((1, 3), True)
    """
    intercept, _ = fit_intercept_only(setup, counts, rng)
    return constant_linear_model(intercept, n_features)
