# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Differentially private validation scores of a fitted candidate.

A score is computed from a vector of sums over the private validation rows,
released once through the Gaussian mechanism; everything after the noise is
post-processing. Each sum's per-record term is bounded by a public quantity
whatever the record holds, which gives the L2 sensitivity of the vector
under the search's neighbouring relation:

* ``"accuracy"``: the count of correct predictions; one row changes it by
  at most 1 (sensitivity 1, add/remove or replace-one).
* ``"accuracy-dp-gap"``: the correct count, the size of each declared group
  and its count of positive predictions. Adding or removing a row changes
  three of them by at most 1 each (sensitivity ``sqrt(3)``); replacing a
  row changes the correct count by 1 and two groups' sizes and positive
  counts by 1 each (sensitivity ``sqrt(5)``).
* ``"neg_mean_absolute_error"``, ``"neg_mean_squared_error"``
  (regression): the sum over the validation rows of each row's error
  ``min(|y - y_pred|, b)`` or ``min(|y - y_pred|, sqrt(b))^2``, with ``b``
  the public ``score_bound``. Every term lies in ``[0, b]`` whatever the
  row holds (a huge or non-finite residual counts ``b``), so one row changes
  the sum by at most ``b`` under add/remove and under replace-one
  (sensitivity ``b``). The search refuses a target that is not finite on
  every row before its split (the candidates refuse it where they train),
  so there a non-finite residual comes from a prediction.

The score is ``noisy_sum / m`` (``m`` validation rows, public like every
``n`` in this package): the noisy accuracy minus ``gap_penalty`` times the
demographic-parity gap of the noisy per-group positive rates for
``"accuracy-dp-gap"``, and minus the noisy mean error, clipped to
``[0, b]``, for the regression scores (higher is better, as in
scikit-learn's ``neg_*`` scorers).
"""

import math

import numpy as np

from ..privacy._mechanism import GaussianMechanism

__all__ = [
    "CLASSIFICATION_SCORINGS",
    "REGRESSION_SCORINGS",
    "SCORINGS",
    "noisy_score",
    "score_counts",
    "score_mechanism",
    "score_sensitivity",
]

#: Scores of classifiers' predictions.
CLASSIFICATION_SCORINGS = ("accuracy", "accuracy-dp-gap")
#: Scores of regressors' predictions (need a public ``score_bound``).
REGRESSION_SCORINGS = ("neg_mean_absolute_error", "neg_mean_squared_error")
#: Scores the search can privatize.
SCORINGS = CLASSIFICATION_SCORINGS + REGRESSION_SCORINGS


def score_sensitivity(scoring, adjacency="add_remove", score_bound=None):
    """L2 sensitivity of the vector of sums behind ``scoring``.

    Parameters
    ----------
    scoring : str
        One of :data:`SCORINGS`.
    adjacency : {"add_remove", "replace_one"}, default="add_remove"
        Neighbouring relation of the search.
    score_bound : float, default=None
        The public bound ``b`` on a row's error (regression scorings).

    Returns
    -------
    sensitivity : float

    Examples
    --------
    >>> from sklearn_dpfair.model_selection._scoring import score_sensitivity
    >>> round(score_sensitivity("accuracy-dp-gap", "replace_one") ** 2, 12)
    5.0
    >>> score_sensitivity("neg_mean_absolute_error", score_bound=10.0)
    10.0
    """
    if scoring in REGRESSION_SCORINGS:
        if score_bound is None:
            raise ValueError(
                f"scoring={scoring!r} needs the public score_bound (the largest "
                "error one validation row may count)."
            )
        return float(score_bound)
    if scoring == "accuracy":
        return 1.0
    return math.sqrt(5.0 if adjacency == "replace_one" else 3.0)


def score_mechanism(
    scoring, noise_multiplier, *, adjacency="add_remove", score_bound=None,
    n_rows=None,
):
    """The Gaussian mechanism that releases ``scoring``'s vector of sums.

    Built by :func:`noisy_score` in every run, and by the search once before
    it reads a row: a ``score_bound`` that cannot scale the noise is refused
    there, before any candidate is trained, not after one was.

    Parameters
    ----------
    scoring : str
        One of :data:`SCORINGS`.
    noise_multiplier : float
        Noise standard deviation in units of :func:`score_sensitivity`.
    adjacency : {"add_remove", "replace_one"}, default="add_remove"
        Neighbouring relation the noise is calibrated under.
    score_bound : float, default=None
        The public bound ``b`` on a row's error (regression scorings).
    n_rows : int, default=None
        A public bound on the number of validation rows (the search's
        ``n_samples``): the error sum, up to ``n_rows * b``, must be a
        finite float64.

    Returns
    -------
    mechanism : GaussianMechanism

    Raises
    ------
    ValueError
        Naming ``score_bound`` where the noise of a regression score, or its
        error sum, would not be a finite normal float64.

    Examples
    --------
    >>> from sklearn_dpfair.model_selection._scoring import score_mechanism
    >>> score_mechanism("neg_mean_absolute_error", 2.0, score_bound=5.0).noise_std
    10.0
    >>> score_mechanism("neg_mean_absolute_error", 2.0, score_bound=1e308)
    Traceback (most recent call last):
    ...
    ValueError: score_bound=1e+308 is too large: ...
    """
    sensitivity = score_sensitivity(scoring, adjacency, score_bound)
    regression = scoring in REGRESSION_SCORINGS
    # One more term than the rows: a margin for the sum's rounding.
    if regression and n_rows is not None and not math.isfinite(
        (n_rows + 1.0) * sensitivity
    ):
        # An error sum that overflows is inf in one dataset and finite in a
        # neighbour with one capped row less: its noisy release would tell
        # them apart with certainty, whatever the noise.
        raise ValueError(
            f"score_bound={sensitivity:g} is too large: the validation rows' "
            f"error sum, up to {n_rows} times score_bound, overflows float64. "
            "Give a bound of the size of the errors (the width of the "
            "targets' known range)."
        )
    try:
        return GaussianMechanism(
            clip_norm=sensitivity, noise_multiplier=noise_multiplier
        )
    except ValueError as exc:
        if not regression or not math.isfinite(noise_multiplier):
            raise
        # The noise scale (multiplier times score_bound) overflows float64 or
        # falls below its smallest normal number, where the draws are
        # quantized: name the public parameter that sets it.
        large = not math.isfinite(noise_multiplier * sensitivity)
        raise ValueError(
            f"score_bound={sensitivity:g} is too "
            f"{'large' if large else 'small'}: the private score's noise "
            f"standard deviation, {noise_multiplier:g} times score_bound, "
            + (
                "overflows float64. "
                if large
                else "is below the smallest normal float64, where its draws "
                "are rounded to a grid. "
            )
            + "Give a bound of the size of the errors (in units of y, or of "
            "y squared for neg_mean_squared_error)."
        ) from exc


def noisy_score(
    y_true,
    y_pred,
    *,
    scoring,
    noise_multiplier,
    rng,
    group_codes=None,
    n_groups=0,
    positive_label=None,
    gap_penalty=1.0,
    adjacency="add_remove",
    score_bound=None,
):
    """One private score of a candidate's predictions on the validation rows.

    Parameters
    ----------
    y_true, y_pred : ndarray of shape (m,)
        Validation labels (or targets) and the candidate's predictions.
    scoring : str
        One of :data:`SCORINGS`.
    noise_multiplier : float
        Noise standard deviation in units of :func:`score_sensitivity`.
    rng : numpy.random.Generator
        Source of the noise.
    group_codes : ndarray of shape (m,), default=None
        Code of each row's declared group (``-1``: none of them); needed for
        ``"accuracy-dp-gap"``.
    n_groups : int, default=0
        Number of declared groups.
    positive_label : object, default=None
        The label whose rate the demographic-parity gap compares.
    gap_penalty : float, default=1.0
        Weight of the gap in the score.
    adjacency : {"add_remove", "replace_one"}, default="add_remove"
        Neighbouring relation the noise is calibrated under.
    score_bound : float, default=None
        Public bound on one row's error (regression scorings).

    Returns
    -------
    score : float
        Higher is better.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.model_selection._scoring import noisy_score
    >>> y = np.array([0, 1, 1, 0])
    >>> noisy_score(y, y, scoring="accuracy", noise_multiplier=0.0,
    ...             rng=np.random.default_rng(0))
    1.0
    >>> noisy_score(np.array([0.0, 1.0]), np.array([0.5, 1e300]),
    ...             scoring="neg_mean_absolute_error", score_bound=2.0,
    ...             noise_multiplier=0.0, rng=np.random.default_rng(0))
    -1.25
    """
    counts = score_counts(
        y_true,
        y_pred,
        scoring=scoring,
        group_codes=group_codes,
        n_groups=n_groups,
        positive_label=positive_label,
        score_bound=score_bound,
    )
    mechanism = score_mechanism(
        scoring, noise_multiplier, adjacency=adjacency, score_bound=score_bound
    )
    counts = mechanism.privatize(counts, rng)
    m = len(y_true)
    if scoring in REGRESSION_SCORINGS:
        return -float(np.clip(counts[0] / m, 0.0, float(score_bound)))
    accuracy = float(np.clip(counts[0] / m, 0.0, 1.0))
    if scoring == "accuracy":
        return accuracy
    sizes, positives = counts[1 : 1 + n_groups], counts[1 + n_groups :]
    rates = np.clip(positives / np.maximum(sizes, 1.0), 0.0, 1.0)
    gap = float(rates.max() - rates.min()) if n_groups > 1 else 0.0
    return accuracy - gap_penalty * gap


def bounded_errors(y_true, y_pred, *, scoring, score_bound):
    """Each row's error, in ``[0, score_bound]`` whatever the row holds.

    ``min(|r|, b)`` or ``min(|r|, sqrt(b))^2`` of the residual ``r``: the
    residual is capped before it is squared, so nothing overflows, and a
    residual that is not a number (an infinite target against an infinite
    prediction) counts ``b``. No warning is raised on any value.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.model_selection._scoring import bounded_errors
    >>> bounded_errors(np.array([0.0, 1e308, np.inf]),
    ...                np.array([1.0, -1e308, np.inf]),
    ...                scoring="neg_mean_squared_error", score_bound=4.0).tolist()
    [1.0, 4.0, 4.0]
    """
    y_true, y_pred = _paired(y_true, y_pred)
    bound = float(score_bound)
    cap = bound if scoring == "neg_mean_absolute_error" else math.sqrt(bound)
    with np.errstate(over="ignore", invalid="ignore"):
        residual = np.abs(
            y_true.astype(np.float64, copy=False)
            - y_pred.astype(np.float64, copy=False)
        )
    capped = np.where(np.isnan(residual), cap, np.minimum(residual, cap))
    errors = capped if scoring == "neg_mean_absolute_error" else capped * capped
    # sqrt(b)^2 may round a hair above b: keep every term within its bound.
    return np.minimum(errors, bound)


def score_counts(
    y_true,
    y_pred,
    *,
    scoring,
    group_codes=None,
    n_groups=0,
    positive_label=None,
    score_bound=None,
):
    """The vector of sums behind a score, before noise.

    ``[correct]`` for ``"accuracy"``; ``[correct, size_g..., positives_g...]``
    over the declared groups for ``"accuracy-dp-gap"`` (rows of no declared
    group, code ``-1``, count in ``correct`` only); ``[sum of bounded
    errors]`` (:func:`bounded_errors`) for the regression scorings. Its L2
    sensitivity is :func:`score_sensitivity`.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.model_selection._scoring import score_counts
    >>> score_counts(np.array([1, 0, 1]), np.array([1, 1, 1]),
    ...              scoring="accuracy-dp-gap", group_codes=np.array([0, 1, -1]),
    ...              n_groups=2, positive_label=1).tolist()
    [2.0, 1.0, 1.0, 1.0, 1.0]
    """
    if scoring in REGRESSION_SCORINGS:
        errors = bounded_errors(
            y_true, y_pred, scoring=scoring, score_bound=score_bound
        )
        return np.array([float(np.sum(errors))])
    y_true, y_pred = _paired(y_true, y_pred)
    correct = float(np.count_nonzero(y_true == y_pred))
    if scoring == "accuracy":
        return np.array([correct])
    codes = np.asarray(group_codes)
    if codes.shape != y_true.shape:
        raise ValueError(
            f"group_codes must have the shape {y_true.shape} of y_true; got "
            f"{codes.shape}."
        )
    positive = y_pred == positive_label
    in_group = codes >= 0
    sizes = np.bincount(codes[in_group], minlength=n_groups).astype(float)
    positives = np.bincount(
        codes[in_group], weights=positive[in_group].astype(float), minlength=n_groups
    )
    return np.concatenate([[correct], sizes, positives])


def _paired(y_true, y_pred):
    """``y_true`` and ``y_pred`` as 1-D arrays of one length, else ValueError.

    Each row must add one term to each sum: arrays of other shapes would
    broadcast (a column ``y_true`` against 1-D predictions compares every
    pair of rows), and one record would move a sum by up to ``m`` terms
    instead of one, past the sensitivity the noise is calibrated to.
    """
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    if y_true.ndim != 1 or y_true.shape != y_pred.shape:
        raise ValueError(
            "y_true and y_pred must be 1-D arrays of the same length (one term "
            f"per row); got shapes {y_true.shape} and {y_pred.shape}."
        )
    return y_true, y_pred
