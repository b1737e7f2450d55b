# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The runs of a private selection: train a random candidate, score it, keep the best.

Nothing here decides a budget: the per-run budget, the number of runs and
the score's noise come in calibrated (see :mod:`sklearn_dpfair.privacy._selection`).
What leaves :func:`best_of_runs` is the best run only, as the analysis of
Papernot and Steinke requires: no other run's model or score, and not the
number of runs.
"""

import warnings

from sklearn.base import clone

__all__ = ["best_of_runs"]


def best_of_runs(
    candidates,
    plans,
    *,
    n_runs,
    run_epsilon,
    delta,
    run_seeds,
    rng,
    train,
    X_val,
    score,
):
    """Run ``n_runs`` random candidates and return the best run.

    Parameters
    ----------
    candidates : list of estimator
        Unfitted candidates (the grid points).
    plans : list of CandidatePlan
        Each candidate's planned training event.
    n_runs : int
        Number of runs (secret).
    run_epsilon, delta : float
        Budget of each candidate fit.
    run_seeds : list
        ``random_state`` of each run's fit (None: OS entropy).
    rng : numpy.random.Generator
        Picks the candidates (and is passed to ``score``).
    train : tuple
        ``(X_train, y_train, fit_params)`` of every candidate fit.
    X_val : array-like
        Validation rows the candidates predict.
    score : callable
        ``score(y_pred) -> float``, the private (noisy) validation score.

    Returns
    -------
    score : float
        The best run's noisy score.
    index : int
        Its candidate.
    estimator : estimator
        Its fitted model.

    Raises
    ------
    RuntimeError
        If a fitted ``dp_event_`` differs from the plan (then nothing leaves).
    """
    X_train, y_train, fit_params = train
    best = None
    # The runs' warnings are collected and each distinct one re-emitted once
    # by the caller: one warning per run would publish the number of runs.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for seed in run_seeds[:n_runs]:
            c = int(rng.integers(len(candidates)))
            est = clone(candidates[c]).set_params(
                epsilon=run_epsilon, delta=delta, accountant="rdp", random_state=seed
            )
            est.fit(X_train, y_train, **fit_params)
            planned = plans[c].event(run_epsilon, delta)
            if est.dp_event_ != planned:
                raise RuntimeError(
                    f"{type(est).__name__} recorded {est.dp_event_!r}, not the "
                    f"planned {planned!r}; nothing is released. This is a bug, "
                    "please report it."
                )
            value = score(est.predict(X_val))
            if best is None or value > best[0]:
                best = (value, c, est)
    return (*best, _distinct(caught))


def _distinct(caught):
    """The recorded warnings, each (category, message) once, in order."""
    seen, out = set(), []
    for w in caught:
        key = (w.category, str(w.message))
        if key not in seen:
            seen.add(key)
            out.append(w)
    return out
