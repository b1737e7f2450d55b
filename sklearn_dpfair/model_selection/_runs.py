# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The runs of a private selection: train a random candidate, score it, keep the best.

Nothing here decides a budget: the per-run budget, the number of runs and
the score's noise come in calibrated (see :mod:`sklearn_dpfair.privacy._selection`).
What leaves :func:`best_of_runs` is the best run only, as the analysis of
Papernot and Steinke requires: no other run's model or score, and not the
number of runs.

Every random choice of a run (its candidate, the seed of its fit, the
generator of its score's noise) is drawn by :func:`draw_runs` before any run
starts, so the runs are independent tasks: run one after another or in
parallel (``n_jobs``), a seeded search selects the same run.
"""

import secrets
import warnings
from dataclasses import dataclass

import numpy as np
from joblib import Parallel, delayed
from joblib.parallel import get_active_backend

from ..utils._parallel import runs_in_threads
from ._planning import with_budget

__all__ = ["Run", "best_of_runs", "check_run_workers", "draw_runs"]


@dataclass(frozen=True)
class Run:
    """The random choices of one run, fixed before it starts."""

    candidate: int
    fit_seed: object  # int, or None for OS entropy
    noise_seed: object  # SeedSequence or int entropy of the score's noise


def draw_runs(n_runs, n_candidates, rng, seed_source):
    """The ``n_runs`` runs' candidates and seeds, drawn before any run.

    Parameters
    ----------
    n_runs, n_candidates : int
    rng : numpy.random.Generator
        Picks the candidates (uniformly).
    seed_source : numpy.random.SeedSequence or None
        Seeds each run's fit and score noise; None: OS entropy (a release).

    Returns
    -------
    runs : list of Run
    """
    picks = rng.integers(n_candidates, size=n_runs)
    if seed_source is None:
        return [Run(int(c), None, secrets.randbits(128)) for c in picks]
    runs = []
    for c, child in zip(picks, seed_source.spawn(n_runs)):
        fit_seq, noise_seq = child.spawn(2)
        runs.append(Run(int(c), int(fit_seq.generate_state(1)[0]), noise_seq))
    return runs


def check_run_workers(n_jobs):
    """Refuse an ``n_jobs`` that would run the runs in threads of this process.

    Each run records its warnings with :class:`warnings.catch_warnings`,
    which swaps the process-wide filters and handler: runs in threads of
    one process could record each other's warnings, or show them to the
    caller, and which warnings occurred tells which candidates ran (their
    number is secret). Processes (joblib's default backend, loky) or
    ``n_jobs=1`` keep each run's warnings its own. Public: reads the
    parameter and the active joblib configuration only.

    Parameters
    ----------
    n_jobs : int or None
        The search's ``n_jobs``.

    Raises
    ------
    ValueError
        If joblib's active backend runs tasks in threads and ``n_jobs``
        asks for more than one.
    """
    if runs_in_threads(n_jobs):
        backend, _ = get_active_backend()
        raise ValueError(
            f"n_jobs={n_jobs!r} would run the search's runs in threads "
            f"(joblib's active backend is {type(backend).__name__}): each "
            "run records its own warnings with warnings.catch_warnings, which "
            "is process-wide, so in threads one run's warnings could reach "
            "another run or the caller and tell which candidates ran. Use a "
            "process-based joblib backend (loky, the default) or n_jobs=1."
        )


def best_of_runs(
    candidates,
    plans,
    runs,
    *,
    run_epsilon,
    delta,
    train,
    X_val,
    score,
    n_jobs=None,
):
    """Run ``runs`` and return the best one.

    Parameters
    ----------
    candidates : list of estimator
        Unfitted candidates (the grid points).
    plans : list of CandidatePlan
        Each candidate's planned training event.
    runs : list of Run
        The runs (their number is secret).
    run_epsilon, delta : float
        Budget of each candidate fit.
    train : tuple
        ``(X_train, y_train, fit_params)`` of every candidate fit.
    X_val : array-like
        Validation rows the candidates predict.
    score : callable
        ``score(y_pred, rng) -> float``, the private (noisy) validation score.
    n_jobs : int or None, default=None
        Runs in parallel (joblib); the result does not depend on it.

    Returns
    -------
    score : float
        The best run's noisy score.
    index : int
        Its candidate.
    estimator : estimator
        Its fitted model.
    warnings : list of warnings.WarningMessage-like
        The selected run's distinct warnings, ``(category, message)`` each
        once. Those of the other runs are not returned: which warnings
        occurred at all would tell which candidates ran, hence something of
        their secret number.

    Raises
    ------
    RuntimeError
        If a fitted ``dp_event_`` differs from the plan (then nothing leaves).
    """
    outcomes = Parallel(n_jobs=n_jobs)(
        delayed(_one_run)(
            candidates[run.candidate],
            plans[run.candidate],
            run,
            run_epsilon=run_epsilon,
            delta=delta,
            train=train,
            X_val=X_val,
            score=score,
        )
        for run in runs
    )
    best = None
    for run, (value, est, run_warnings) in zip(runs, outcomes):
        # Ties go to the earliest run, as in a sequential loop.
        if best is None or value > best[0]:
            best = (value, run.candidate, est, _distinct(run_warnings))
    return best


def silenced(estimator):
    """``estimator`` with every ``verbose`` parameter (nested too) off.

    A run's progress lines would publish the number of runs and the noisy
    iterates of the runs not selected, which the search's guarantee keeps
    secret (Papernot and Steinke, 2022, Theorem 2, releases the selected
    run only).

    Examples
    --------
    >>> from sklearn_dpfair import DPLogisticRegression
    >>> from sklearn_dpfair.model_selection._runs import silenced
    >>> silenced(DPLogisticRegression(verbose=2)).verbose
    0
    """
    loud = {
        key: (False if isinstance(value, bool) else 0)
        for key, value in estimator.get_params(deep=True).items()
        if (key == "verbose" or key.endswith("__verbose")) and value
    }
    return estimator.set_params(**loud) if loud else estimator


def _one_run(candidate, plan, run, *, run_epsilon, delta, train, X_val, score):
    """Train, check and score one run; its warnings are returned, not shown.

    Shown, every run's warnings would publish the number of runs: the
    caller re-emits the selected run's only, each distinct one once. Its
    progress lines are off (see :func:`silenced`).
    """
    X_train, y_train, fit_params = train
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = with_budget(candidate, run_epsilon, delta, random_state=run.fit_seed)
        est = silenced(est)
        est.fit(X_train, y_train, **fit_params)
        planned = plan.event(run_epsilon, delta)
        if est.dp_event_ != planned:
            raise RuntimeError(
                f"{type(est).__name__} recorded {est.dp_event_!r}, not the "
                f"planned {planned!r}; nothing is released. This is a bug, "
                "please report it."
            )
        value = score(est.predict(X_val), np.random.default_rng(run.noise_seed))
    return value, est, [(w.category, str(w.message)) for w in caught]


def _distinct(caught):
    """The recorded ``(category, message)`` pairs, each once, in order."""
    seen, out = set(), []
    for key in caught:
        if key not in seen:
            seen.add(key)
            out.append(key)
    return out
