# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Where joblib would run parallel tasks: threads of this process or not."""

from joblib import effective_n_jobs
from joblib.parallel import get_active_backend

__all__ = ["runs_in_threads"]


def runs_in_threads(n_jobs):
    """Whether ``Parallel(n_jobs=n_jobs)`` would run tasks in several threads.

    :class:`warnings.catch_warnings` swaps the process-wide warning filters,
    so blocks entered by tasks in threads of one process interleave: a task
    can see another's filters, and one left installed outlives the tasks.
    Processes (joblib's default backend, loky) and ``n_jobs=1`` keep each
    task's block its own. Reads ``n_jobs`` and joblib's active configuration
    only.

    Parameters
    ----------
    n_jobs : int or None
        The ``n_jobs`` given to :class:`joblib.Parallel`.

    Returns
    -------
    bool

    Examples
    --------
    >>> from joblib import parallel_config
    >>> from sklearn_dpfair.utils._parallel import runs_in_threads
    >>> runs_in_threads(2)
    False
    >>> with parallel_config(backend="threading"):
    ...     runs_in_threads(2), runs_in_threads(1)
    (True, False)
    """
    backend, _ = get_active_backend()
    uses_threads = bool(getattr(backend, "uses_threads", False))
    return uses_threads and effective_n_jobs(n_jobs) > 1
