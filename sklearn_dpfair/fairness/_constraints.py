# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Fairness notions as small objects: which rows are compared, with what weight.

An ERMI-type penalty compares the law of the prediction across groups inside
one or more *blocks* of rows:

* demographic parity: one block, all rows;
* equalized odds: one block per true label ``y`` (independence given Y);
* equal opportunity: one block, the rows whose label is the advantaged class.

Each block ``b`` has its own dual matrix and group marginals
``P(S = r | block b)``. Its per-sample penalty terms are weighted so that the
average over *all* rows equals the target quantity (thesis Chapter 5):
``w_b = 1`` for demographic parity and label-prior equalized odds,
``1 / (l p_Y(y))`` for uniform equalized odds, ``1 / p_Y(a)`` for equal
opportunity. The solvers and metrics consume only the three methods below.
"""

import numpy as np

__all__ = [
    "DemographicParity",
    "EqualOpportunity",
    "EqualizedOdds",
    "advantaged_class_index",
    "make_constraint",
]

# Floor on a block frequency before it is inverted into a weight: a label that
# (after privatization) looks absent must not produce an infinite weight. The
# value only matters for degenerate data.
_MIN_BLOCK_FREQUENCY = 1e-6


class DemographicParity:
    """Independence of the prediction and the group (one block of all rows).

    Every row is in block 0, with penalty weight 1. The other constraints
    subclass it and change the three hooks ``_n_blocks``, ``_blocks`` and
    ``_weights`` behind the public methods.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.fairness import DemographicParity
    >>> c = DemographicParity()
    >>> c.n_blocks(2), c.block_index(np.array([0, 1, 1])).tolist()
    (1, [0, 0, 0])
    """

    name = "demographic_parity"

    def n_blocks(self, n_classes):
        """Number of blocks (dual matrices).

        Parameters
        ----------
        n_classes : int
            Number of classes of the target.

        Returns
        -------
        n_blocks : int
            1, or one per class for equalized odds.
        """
        return self._n_blocks(int(n_classes))

    def block_index(self, y_encoded):
        """Block of every row (``-1``: the row carries no penalty).

        Parameters
        ----------
        y_encoded : ndarray of shape (n_samples,)
            Class indices ``0 .. n_classes - 1``.

        Returns
        -------
        blocks : ndarray of shape (n_samples,)
            Integer block indices.
        """
        return self._blocks(np.asarray(y_encoded)).astype(np.intp, copy=False)

    def block_weights(self, block_frequencies):
        """Weight of the penalty terms of each block.

        Parameters
        ----------
        block_frequencies : ndarray of shape (n_blocks,)
            Fraction of the rows in each block (label frequencies for the
            label-conditional constraints).

        Returns
        -------
        weights : ndarray of shape (n_blocks,)
            Chosen so that the mean of the per-row penalty terms over *all*
            rows is the constraint's ERMI.
        """
        return self._weights(np.asarray(block_frequencies, dtype=np.float64))

    def _n_blocks(self, n_classes):
        return 1

    def _blocks(self, y):
        return np.zeros(y.shape[0], dtype=np.intp)

    def _weights(self, freq):
        return np.ones(1)

    def __repr__(self):
        return f"{type(self).__name__}()"


class EqualizedOdds(DemographicParity):
    """Independence of the prediction and the group given the true label.

    One block per class (a row's block is its label), weights 1 (label
    prior) or ``1 / (l p_Y(y))`` (uniform).

    Parameters
    ----------
    weighting : {"label_prior", "uniform"}, default="label_prior"
        How the per-label terms combine: ``sum_y p_Y(y) ERMI(Yhat; S | Y=y)``
        (the expectation form) or the unweighted mean over labels (as in the
        official DP-FERMI code, up to a factor ``1/l``).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.fairness import EqualizedOdds
    >>> c = EqualizedOdds(weighting="uniform")
    >>> c.block_index(np.array([0, 1, 1])).tolist()
    [0, 1, 1]
    >>> c.block_weights(np.array([0.75, 0.25])).round(3).tolist()
    [0.667, 2.0]
    """

    name = "equalized_odds"

    def __init__(self, weighting="label_prior"):
        self.weighting = _checked_weighting(weighting)

    def _n_blocks(self, n_classes):
        return n_classes

    def _blocks(self, y):
        return y

    def _weights(self, freq):
        if self.weighting == "label_prior":
            return np.ones_like(freq)
        return 1.0 / (freq.size * np.maximum(freq, _MIN_BLOCK_FREQUENCY))

    def __repr__(self):
        return f"{type(self).__name__}(weighting={self.weighting!r})"


class EqualOpportunity(DemographicParity):
    """Independence of the prediction and the group within one (advantaged) class.

    One block, the rows of the advantaged class ``a`` (the others carry no
    penalty), weight ``1 / p_Y(a)`` so that the mean over all rows is the
    conditional ERMI.

    Parameters
    ----------
    class_index : int, default=1
        Index (in ``classes_``) of the advantaged class ``a``. Hardt et al.
        condition on the positive class; the thesis' loan example on the
        negative one, hence a parameter.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.fairness import EqualOpportunity
    >>> c = EqualOpportunity(class_index=1)
    >>> c.block_index(np.array([0, 1, 1])).tolist()
    [-1, 0, 0]
    >>> c.block_weights(np.array([0.25])).tolist()
    [4.0]
    """

    name = "equal_opportunity"

    def __init__(self, class_index=1):
        self.class_index = int(class_index)

    def _blocks(self, y):
        return np.where(y == self.class_index, 0, -1)

    def _weights(self, freq):
        return 1.0 / np.maximum(freq, _MIN_BLOCK_FREQUENCY)

    def __repr__(self):
        return f"{type(self).__name__}(class_index={self.class_index})"


def advantaged_class_index(
    classes, opportunity_class, *, parameter="classes", private=True
):
    """Index in ``classes`` of the advantaged class of equal opportunity.

    Parameters
    ----------
    classes : ndarray of shape (n_classes,)
        The label set, in the order of the class indices.
    opportunity_class : label or None
        The advantaged class; None is the second of exactly two classes.
    parameter : str, default="classes"
        Name of the caller's parameter that declares the classes, for the
        error message of a private caller.
    private : bool, default=True
        Whether ``classes`` were read from private labels: the error
        message then withholds them and names ``parameter``; otherwise it
        lists them (a non-private caller has no such parameter to name).

    Returns
    -------
    class_index : int

    Raises
    ------
    ValueError
        If ``opportunity_class`` is None with fewer or more than two
        classes, or not one of ``classes``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.fairness._constraints import advantaged_class_index
    >>> advantaged_class_index(np.array(["no", "yes"]), None)
    1
    >>> advantaged_class_index(np.array(["a", "b", "c"]), "a")
    0
    """
    classes = np.asarray(classes)
    if opportunity_class is None:
        if classes.size < 2:
            # The default is the second of two labels: with one label seen
            # there is no second, and "more than two classes" would mislead.
            raise ValueError(
                "constraint='equal_opportunity' takes the second of two classes "
                "as the advantaged class, but fewer than two classes were "
                f"found; declare both with {parameter}=[negative, positive], "
                "or name the advantaged class with opportunity_class=."
            )
        if classes.size > 2:
            raise ValueError(
                "constraint='equal_opportunity' with more than two classes "
                "needs opportunity_class (the advantaged class)."
            )
        return 1
    if np.ndim(opportunity_class) != 0:
        # `classes == [1]` broadcasts: a one-element list would match the
        # label 1, and a longer one raise numpy's shape error.
        raise ValueError(
            "opportunity_class must be a single label (the advantaged class); "
            f"got a {type(opportunity_class).__name__}."
        )
    hits = np.flatnonzero(classes == opportunity_class)
    if hits.size != 1:
        if not private:
            raise ValueError(
                f"opportunity_class={opportunity_class!r} is not one of the "
                f"classes {classes.tolist()!r}."
            )
        raise ValueError(
            f"opportunity_class={opportunity_class!r} is not one of the "
            "classes (the classes are not shown: read from y, they are "
            f"private; declare them with {parameter}=[...])."
        )
    return int(hits[0])


def _checked_weighting(weighting):
    """``weighting`` if it is one of the two combinations, else ValueError."""
    if not isinstance(weighting, str) or weighting not in ("label_prior", "uniform"):
        raise ValueError(
            f"weighting must be 'label_prior' or 'uniform'; got {weighting!r}."
        )
    return weighting


def make_constraint(name, *, class_index=None, weighting="label_prior"):
    """Constraint object from its name.

    Parameters
    ----------
    name : {"demographic_parity", "equalized_odds", "equal_opportunity"}
        The fairness notion.
    class_index : int, default=None
        Index of the advantaged class (equal opportunity only; required).
    weighting : {"label_prior", "uniform"}, default="label_prior"
        Combination of the per-label terms (used by equalized odds only;
        checked for every notion).

    Returns
    -------
    constraint : DemographicParity, EqualizedOdds or EqualOpportunity
        The constraint object.

    Examples
    --------
    >>> from sklearn_dpfair.fairness import make_constraint
    >>> make_constraint("equalized_odds")
    EqualizedOdds(weighting='label_prior')
    """
    # Checked whatever the notion: a weighting that one notion ignores is
    # still a typo the caller should hear about.
    _checked_weighting(weighting)
    if name == "demographic_parity":
        return DemographicParity()
    if name == "equalized_odds":
        return EqualizedOdds(weighting=weighting)
    if name == "equal_opportunity":
        if class_index is None:
            raise ValueError(
                "equal_opportunity needs the index of the advantaged class."
            )
        return EqualOpportunity(class_index=class_index)
    raise ValueError(
        "constraint must be 'demographic_parity', 'equalized_odds' or "
        f"'equal_opportunity'; got {name!r}."
    )
