# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Warnings and errors raised by :mod:`sklearn_dpfair`."""

__all__ = ["PrivacyLeakWarning", "PrivacyBudgetError"]


class PrivacyLeakWarning(UserWarning):
    """A privacy-relevant quantity was derived from the private data.

    Raised when an estimator had to infer something that the differential
    privacy guarantee assumes to be public (for example the label set, when
    ``classes`` is not given). The fitted model then carries a caveat in its
    ``privacy_caveats_`` attribute and the stated guarantee does not cover
    the inferred quantity.

    Examples
    --------
    >>> import warnings
    >>> from sklearn_dpfair.exceptions import PrivacyLeakWarning
    >>> issubclass(PrivacyLeakWarning, UserWarning)
    True
    """


class PrivacyBudgetError(ValueError):
    """The requested computation would spend more privacy budget than allowed.

    Examples
    --------
    >>> from sklearn_dpfair.exceptions import PrivacyBudgetError
    >>> issubclass(PrivacyBudgetError, ValueError)
    True
    """
