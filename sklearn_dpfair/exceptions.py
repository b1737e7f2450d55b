# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Warnings and errors raised by :mod:`sklearn_dpfair`."""

__all__ = [
    "DivergedModelError",
    "PrivacyAccountingError",
    "PrivacyBudgetError",
    "PrivacyLeakWarning",
]


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


class DivergedModelError(ValueError):
    """A federated fit's model left the float range: the iterates diverged.

    Raised by the server and by the silos it broadcasts to, instead of
    training on a model of infinities or NaNs; never from a private value
    (the model is post-processing of the silos' noisy messages). Its own
    class, so that a caller may retry with a smaller step without reading
    the message.

    Examples
    --------
    >>> from sklearn_dpfair.exceptions import DivergedModelError
    >>> issubclass(DivergedModelError, ValueError)
    True
    """


class PrivacyAccountingError(RuntimeError):
    """A fit's releases differ from what its privacy record accounts.

    Raised before the fit returns, so that nothing is released: a fit that
    ran one noisy release more (or less) than its ``dp_event_`` describes
    would claim a guarantee it does not have. It is always a bug in
    :mod:`sklearn_dpfair`, never a problem of the data.

    Examples
    --------
    >>> from sklearn_dpfair.exceptions import PrivacyAccountingError
    >>> issubclass(PrivacyAccountingError, RuntimeError)
    True
    """
