# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""A private choice between the fitted model and the best constant.

Between the budgets where a noisy model is sure to lose to the
intercept-only model (:mod:`._intercept_only` releases that one instead)
and those where it is sure to win, whether it wins depends on the data.
There a fit spends a public share of its budget on asking: one Gaussian
release of the vector

    S_c = (training errors of the model) - (training errors of constant c),

one coordinate per class ``c``, after the model is fitted (the model is a
release, so the question is adaptive composition, accounted as one more
Gaussian in the fit's event). Under add/remove adjacency a record of class
``y`` moves ``S`` by ``-1`` in every coordinate ``c != y`` when the model is
right on it, and by ``+1`` in coordinate ``y`` when it is wrong: an L2
sensitivity of ``sqrt(max(K - 1, 1))``, whatever the record holds (each
record counts once, whatever its weight). The noisy ``S`` is then
post-processed: the constant of the largest coordinate is the best one, and
it is released instead of the model when that coordinate is positive; its
class frequencies come from the same vector (``n_c = S_c - M + n`` with
``M = (sum_c S_c + (K - 1) n) / K``, ``n`` public), floored at one record.
"""

import math
from dataclasses import dataclass

import numpy as np

from ..privacy import GaussianMechanism, noise_multiplier_for_gaussian
from ._intercept_only import (
    affords_model,
    label_counts,
    library_calibrates,
    log_frequencies,
)

__all__ = [
    "CHOICE_BUDGET_SHARE",
    "CHOICE_RECORDS",
    "ConstantChoice",
    "choice_mechanism",
    "choice_noise",
    "chooses_privately",
    "comparison_sensitivity",
    "constant_comparison",
    "choose_constant",
    "comparison_from_counts",
    "in_choice_range",
]

# The budgets in which the choice is made: from the intercept-only rule's
# threshold (below it the constant is released outright) up to
# n * epsilon < CHOICE_RECORDS * (n_classes - 1). DP-FERMI's defaults lost to
# the majority class in some held-out seed up to n * epsilon = 2,100 (German
# credit, n = 700, epsilon = 3; COMPAS up to 700; benchmarks/
# bench_fermi_small.py and its --ideas seeds 100-111) and in none above it.
# The bound is on n * epsilon alone, not per parameter, so that a fit's event
# does not depend on its number of columns in this range: a private pipeline
# whose encoder discovers its categories plans the final step before that
# number is known. The share is the one chosen on seeds 100-111: 0.1 of
# epsilon (as one Gaussian's multiplier over sqrt(0.1)) cost the Adult cells
# 0.002 in mean held-out error and took the COMPAS cells' worst seed from
# +0.077 above the majority class to 0.000; 0.25 cost more and gained nothing.
CHOICE_RECORDS = 2500.0
CHOICE_BUDGET_SHARE = 0.1


def chooses_privately(n_samples, n_features, n_classes, budget, records_per_parameter):
    """Whether a fit makes the private choice (a public rule).

    True when the budget affords the model (:func:`._intercept_only.affords_model`
    with the estimator's ``records_per_parameter``) and ``n_samples *
    epsilon < CHOICE_RECORDS * (n_classes - 1)``, for a budget the library
    calibrates.

    Examples
    --------
    >>> from sklearn_dpfair.privacy import PrivacyBudget
    >>> from sklearn_dpfair._solvers._constant_choice import chooses_privately
    >>> [chooses_privately(n, 12, 2, PrivacyBudget(0.3, 1e-5), 15.0)
    ...  for n in (300, 700, 9000)]
    [False, True, False]
    """
    return affords_model(
        n_samples, n_features, n_classes, budget, records_per_parameter
    ) and in_choice_range(n_samples, n_classes, budget)


def in_choice_range(n_samples, n_classes, budget):
    """Whether ``n_samples * epsilon < CHOICE_RECORDS * (n_classes - 1)`` (public).

    The range where a fitted model's advantage over the best constant
    depends on the data, for a budget the library calibrates; free of the
    number of columns (``small_budget="choose"`` makes the choice there
    whatever that number).

    Examples
    --------
    >>> from sklearn_dpfair.privacy import PrivacyBudget
    >>> from sklearn_dpfair._solvers._constant_choice import in_choice_range
    >>> [in_choice_range(n, 2, PrivacyBudget(0.3, 1e-5)) for n in (300, 9000)]
    [True, False]
    """
    if not library_calibrates(budget):
        return False
    return n_samples * budget.epsilon < CHOICE_RECORDS * max(int(n_classes) - 1, 1)


def choice_noise(budget, share=CHOICE_BUDGET_SHARE):
    """The comparison's noise multiplier: a whole-budget Gaussian's over ``sqrt(share)``.

    A Gaussian's zCDP cost is ``1 / (2 z^2)``, so this multiplier costs
    ``share`` of what a Gaussian calibrated alone to the whole
    ``(epsilon, delta)`` would; the fit's other noise is then calibrated so
    that the composition meets the budget (dp-accounting).

    Examples
    --------
    >>> from sklearn_dpfair.privacy import PrivacyBudget
    >>> from sklearn_dpfair._solvers._constant_choice import choice_noise
    >>> round(choice_noise(PrivacyBudget(1.0, 1e-5)), 2)
    11.8
    """
    # The PLD calibration of one Gaussian is exact; this only sets a public
    # noise level; the fit's event, this Gaussian included, is accounted by
    # the budget's accountant.
    one = noise_multiplier_for_gaussian(float(budget.epsilon), float(budget.delta))
    return one / math.sqrt(share)


def comparison_sensitivity(n_classes):
    """L2 sensitivity ``sqrt(max(K - 1, 1))`` of :func:`constant_comparison`."""
    return math.sqrt(max(int(n_classes) - 1, 1))


def choice_mechanism(noise_multiplier, n_classes):
    """The Gaussian mechanism of the comparison (sensitivity for ``n_classes``)."""
    return GaussianMechanism(
        clip_norm=comparison_sensitivity(n_classes),
        noise_multiplier=float(noise_multiplier),
    )


def constant_comparison(y, y_pred, n_classes):
    """``S_c``: the model's training errors minus constant ``c``'s, per class.

    Parameters
    ----------
    y, y_pred : ndarray of shape (n_samples,)
        True and predicted class indices ``0 .. n_classes - 1``.
    n_classes : int

    Returns
    -------
    comparison : ndarray of shape (n_classes,), float64

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers._constant_choice import constant_comparison
    >>> constant_comparison(np.array([0, 0, 0, 1]), np.array([1, 0, 0, 1]), 2)
    array([ 0., -2.])
    """
    y = np.asarray(y, dtype=np.intp)
    errors = np.count_nonzero(y != np.asarray(y_pred, dtype=np.intp))
    return comparison_from_counts(errors, label_counts(y, n_classes), y.shape[0])


def comparison_from_counts(errors, class_counts, n_samples):
    """:func:`constant_comparison` from the model's error count and the class counts.

    Constant ``c`` is wrong on every row of another class, ``n - n_c`` of
    them. Counts of disjoint parts of the rows add up to the whole's.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers._constant_choice import comparison_from_counts
    >>> comparison_from_counts(1, np.array([3, 1]), 4)
    array([ 0., -2.])
    """
    counts = np.asarray(class_counts, dtype=np.float64)
    return float(errors) - (float(n_samples) - counts)


@dataclass(frozen=True)
class ConstantChoice:
    """The post-processed outcome of the released comparison.

    ``constant`` is the index of the released constant, or None when the
    model is kept; ``counts`` are the class counts the noisy comparison
    implies (floored at 1), whose log-frequencies are the constant's
    intercepts; ``comparison`` is the released vector.
    """

    constant: int | None
    counts: np.ndarray
    comparison: np.ndarray

    @property
    def log_frequencies(self):
        """Intercepts of the constant model: log of the noisy class frequencies."""
        return log_frequencies(self.counts)


def choose_constant(noisy_comparison, n_samples):
    """Post-process the released comparison into a :class:`ConstantChoice`.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers._constant_choice import choose_constant
    >>> choose_constant(np.array([12.0, -300.0]), 700).constant
    0
    >>> choose_constant(np.array([-30.0, -400.0]), 700).constant is None
    True
    """
    s = np.asarray(noisy_comparison, dtype=np.float64)
    k = s.shape[0]
    # S_c = M - n + n_c and sum_c n_c = n (public): M and n_c follow.
    errors = (s.sum() + (k - 1) * n_samples) / k
    counts = np.maximum(s - errors + n_samples, 1.0)
    best = int(np.argmax(s))
    return ConstantChoice(
        constant=best if s[best] > 0 else None, counts=counts, comparison=s
    )
