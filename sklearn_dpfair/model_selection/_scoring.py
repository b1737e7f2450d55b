# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Differentially private validation scores of a fitted candidate.

A score is computed from a vector of counts on the private validation rows,
released once through the Gaussian mechanism; everything after the noise is
post-processing. Under add/remove adjacency one validation row changes

* ``"accuracy"``: the count of correct predictions by at most 1 (L2
  sensitivity 1);
* ``"accuracy-dp-gap"``: the correct count, its group's size and its group's
  count of positive predictions, each by at most 1 (L2 sensitivity
  ``sqrt(3)``), whatever the row holds.

The score is ``noisy_correct / m`` (``m`` validation rows, public like every
``n`` in this package), minus ``gap_penalty`` times the demographic-parity
gap of the noisy per-group positive rates for ``"accuracy-dp-gap"``.
"""

import math

import numpy as np

from ..privacy._mechanism import GaussianMechanism

__all__ = ["SCORINGS", "noisy_score", "score_counts", "score_sensitivity"]

#: Scores the search can privatize.
SCORINGS = ("accuracy", "accuracy-dp-gap")


def score_sensitivity(scoring):
    """L2 sensitivity of the count vector behind ``scoring``."""
    return 1.0 if scoring == "accuracy" else math.sqrt(3.0)


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
):
    """One private score of a candidate's predictions on the validation rows.

    Parameters
    ----------
    y_true, y_pred : ndarray of shape (m,)
        Validation labels and the candidate's predictions.
    scoring : {"accuracy", "accuracy-dp-gap"}
        What to score.
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
    """
    counts = score_counts(
        y_true,
        y_pred,
        scoring=scoring,
        group_codes=group_codes,
        n_groups=n_groups,
        positive_label=positive_label,
    )
    mechanism = GaussianMechanism(
        clip_norm=score_sensitivity(scoring), noise_multiplier=noise_multiplier
    )
    counts = mechanism.privatize(counts, rng)
    accuracy = float(np.clip(counts[0] / len(y_true), 0.0, 1.0))
    if scoring == "accuracy":
        return accuracy
    sizes, positives = counts[1 : 1 + n_groups], counts[1 + n_groups :]
    rates = np.clip(positives / np.maximum(sizes, 1.0), 0.0, 1.0)
    gap = float(rates.max() - rates.min()) if n_groups > 1 else 0.0
    return accuracy - gap_penalty * gap


def score_counts(
    y_true, y_pred, *, scoring, group_codes=None, n_groups=0, positive_label=None
):
    """The count vector behind a score, before noise.

    ``[correct]`` for ``"accuracy"``; ``[correct, size_g..., positives_g...]``
    over the declared groups for ``"accuracy-dp-gap"`` (rows of no declared
    group, code ``-1``, count in ``correct`` only). Its L2 sensitivity under
    add/remove of one row is :func:`score_sensitivity`.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.model_selection._scoring import score_counts
    >>> score_counts(np.array([1, 0, 1]), np.array([1, 1, 1]),
    ...              scoring="accuracy-dp-gap", group_codes=np.array([0, 1, -1]),
    ...              n_groups=2, positive_label=1).tolist()
    [2.0, 1.0, 1.0, 1.0, 1.0]
    """
    correct = float(np.count_nonzero(np.asarray(y_true) == np.asarray(y_pred)))
    if scoring == "accuracy":
        return np.array([correct])
    codes = np.asarray(group_codes)
    positive = np.asarray(y_pred) == positive_label
    in_group = codes >= 0
    sizes = np.bincount(codes[in_group], minlength=n_groups).astype(float)
    positives = np.bincount(
        codes[in_group], weights=positive[in_group].astype(float), minlength=n_groups
    )
    return np.concatenate([[correct], sizes, positives])
