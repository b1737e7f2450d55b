# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The audited fits: seeded clones of the estimator, and the claim they state."""

import warnings

from sklearn.base import clone

__all__ = ["fit_clone", "require_claim"]


def fit_clone(estimator, X, y, fit_params, seed):
    """Fit a clone of ``estimator`` with ``random_state=seed`` where it has one.

    Warnings are silenced: the audits' probe fit has shown them once, and a
    thousand copies add nothing.
    """
    est = clone(estimator)
    if "random_state" in est.get_params(deep=False):
        est.set_params(random_state=int(seed))
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
