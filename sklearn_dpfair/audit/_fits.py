# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The audited fits: seeded clones of the estimator, and the claim they state."""

import warnings

from sklearn.base import clone

__all__ = ["fit_clone", "require_claim"]


def fit_clone(estimator, X, y, fit_params, seed, *, show_warnings=False):
    """Fit a clone of ``estimator`` with ``random_state=seed`` where it has one.

    Parameters
    ----------
    estimator : estimator
        The unfitted estimator (left unchanged).
    X, y : array-like
        Training data.
    fit_params : dict
        Further arguments of ``fit``.
    seed : int
        The clone's ``random_state``.
    show_warnings : bool, default=False
        Whether the fit's warnings reach the caller. The audits' probe fits
        show them (a ``PrivacyLeakWarning`` says the audited claim does not
        cover part of the fit); the many repeated runs silence them, since a
        thousand copies of the same warning add nothing.

    Returns
    -------
    fitted : estimator
        The fitted clone.
    """
    est = clone(estimator)
    if "random_state" in est.get_params(deep=False):
        est.set_params(random_state=int(seed))
    if show_warnings:
        return est.fit(X, y, **fit_params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y, **fit_params)


def require_claim(fitted, attributes=("dp_event_",)):
    """Raise ValueError unless the fitted estimator sets every claim attribute."""
    for attr in attributes:
        if not hasattr(fitted, attr):
            raise ValueError(
                f"{type(fitted).__name__} sets no {attr}: it makes no privacy "
                "claim to audit."
            )
