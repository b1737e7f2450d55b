# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The audited fits: seeded clones of the estimator, and the claim they state."""

import warnings

from joblib import Parallel, delayed
from sklearn.base import clone

from ..utils._parallel import runs_in_threads

__all__ = ["fit_clone", "repeat_quietly", "require_claim"]


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


def repeat_quietly(run, arguments, n_jobs):
    """``[run(*args, show_warnings=...) for args in arguments]``, warnings silenced.

    The audits' repeated fits silence their warnings (:func:`fit_clone`).
    In processes, or one after another, each run silences its own, inside
    its own :class:`warnings.catch_warnings` block. That block swaps the
    process-wide filters, so in threads the runs' blocks would interleave
    and could leave the "ignore" filter installed after the audit: there
    one block in the calling thread silences every run (and, while they
    run, every other thread of the process), and the runs enter none.

    Parameters
    ----------
    run : callable
        Takes the arguments of one run and a keyword ``show_warnings``,
        passed on to :func:`fit_clone`.
    arguments : iterable of tuple
        One tuple of positional arguments per run.
    n_jobs : int or None
        Parallel runs (joblib).

    Returns
    -------
    results : list
        What each run returned, in order.
    """
    in_threads = runs_in_threads(n_jobs)
    tasks = (delayed(run)(*args, show_warnings=in_threads) for args in arguments)
    if not in_threads:
        return Parallel(n_jobs=n_jobs)(tasks)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Parallel(n_jobs=n_jobs)(tasks)


def require_claim(fitted, attributes=("dp_event_",)):
    """Raise ValueError unless the fitted estimator sets every claim attribute."""
    for attr in attributes:
        if not hasattr(fitted, attr):
            raise ValueError(
                f"{type(fitted).__name__} sets no {attr}: it makes no privacy "
                "claim to audit."
            )
