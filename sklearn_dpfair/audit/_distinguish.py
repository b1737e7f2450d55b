# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""From statistics of many runs to a lower confidence bound on epsilon.

The runs of each world are split in two. On the *selection* runs the audit
chooses the test: a threshold on the statistic, its direction, and the delta
of the privacy profile at which to compare. On the *evaluation* runs, which
played no part in that choice, it counts the test's errors and turns them into
Clopper-Pearson bounds. Choosing and evaluating on the same runs would make
the bound optimistic (a maximum over thresholds is not a binomial count).
"""

import math
import numbers

import numpy as np

from ..privacy._accounting import check_delta, is_dp_event
from ._bounds import (
    check_confidence,
    clopper_pearson,
    epsilon_ceiling,
    epsilon_from_error_bounds,
    per_bound_confidence,
)
from ._claims import check_deltas, claimed_profile
from ._result import AuditResult

__all__ = ["audit_scores", "check_audit_options", "claimed_epsilons"]


def _error_counts(s0, s1, thresholds, direction):
    """False positives (world 0) and false negatives (world 1) of each test."""
    s0, s1 = np.sort(s0), np.sort(s1)
    if direction == "greater":  # guess "in" when s > t
        fp = s0.size - np.searchsorted(s0, thresholds, side="right")
        fn = np.searchsorted(s1, thresholds, side="right")
    else:  # guess "in" when s < t
        fp = np.searchsorted(s0, thresholds, side="left")
        fn = s1.size - np.searchsorted(s1, thresholds, side="left")
    return fp, fn


def _bounds(fp, fn, n0, n1, confidence):
    # Two one-sided bounds that hold together (union bound).
    per_bound = per_bound_confidence(confidence)
    _, fpr_upper = clopper_pearson(fp, n0, confidence=per_bound, side="upper")
    _, fnr_upper = clopper_pearson(fn, n1, confidence=per_bound, side="upper")
    return fpr_upper, fnr_upper


def _candidate_thresholds(s0, s1):
    values = np.unique(np.concatenate([s0, s1]))
    mids = (values[:-1] + values[1:]) / 2.0 if values.size > 1 else values
    # Outside the range too, so a test that always guesses one way exists.
    return np.concatenate([[values[0] - 1.0], mids, [values[-1] + 1.0]])


def audit_scores(
    scores_without,
    scores_with,
    *,
    delta,
    dp_event=None,
    epsilon=None,
    deltas="auto",
    confidence=0.95,
    selection_fraction=0.5,
    additional_delta=0.0,
):
    """Lower confidence bound on epsilon from a distinguishing statistic.

    ``scores_without[i]`` is a statistic of the output of run ``i`` on the
    dataset without the canary, ``scores_with[i]`` on its neighbour with it.
    The runs must be independent. The claim is either a ``dp_event`` (its
    whole privacy profile is audited) or an ``epsilon`` at ``delta``.

    Parameters
    ----------
    scores_without, scores_with : array-like of shape (n_runs,)
        Statistics of independent runs in the two worlds.
    delta : float
        Delta of the nominal claim, in [0, 1): of the whole release,
        ``additional_delta`` included.
    dp_event : dp_accounting.DpEvent or list of DpEvent, default=None
        Claimed event (one per world if they differ; the larger claim
        counts). Give either ``dp_event`` or ``epsilon``, not both.
    epsilon : float, default=None
        Claimed epsilon at ``delta`` (>= 0; ``inf`` claims nothing), when no
        event is given.
    deltas : "auto" or sequence of float, default="auto"
        Deltas at which the test may compare (see
        :data:`~sklearn_dpfair.audit._claims.DEFAULT_AUDIT_DELTAS`); "auto"
        uses ``delta`` plus larger deltas of the profile when an event is
        given. Pass ``[delta]`` to bound epsilon at ``delta`` only.
    confidence : float, default=0.95
        Confidence of the lower bound.
    selection_fraction : float, default=0.5
        Fraction of each world's runs used to choose the test.
    additional_delta : float, default=0.0
        Part of ``delta`` spent outside ``dp_event`` and added by the union
        bound (the threshold of a private partition selection, as in
        ``DPOneHotEncoder``; a fitted estimator's
        ``privacy_record_.additional_delta``), in [0, ``delta``]. The event's
        claim at an audit delta ``d`` is then its epsilon at
        ``d - additional_delta``, and nothing below ``additional_delta``. An
        ``epsilon`` claim is stated at ``delta`` already: it is unchanged.

    Returns
    -------
    result : AuditResult
        The bound, the claim at the same delta, the test and its errors, and
        the audit's ceiling (``conclusive`` is False when no outcome of these
        runs could have exceeded the claim).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.audit import audit_scores
    >>> rng = np.random.default_rng(0)
    >>> # Gaussian mechanism with noise 0.25 x sensitivity: far from 1-DP.
    >>> out, inn = rng.normal(0, 0.25, 400), rng.normal(1, 0.25, 400)
    >>> result = audit_scores(out, inn, epsilon=1.0, delta=1e-5)
    >>> result.violation
    True
    """
    s0 = np.asarray(scores_without, dtype=float).ravel()
    s1 = np.asarray(scores_with, dtype=float).ravel()
    confidence, selection_fraction, deltas = check_audit_options(
        confidence, selection_fraction, deltas, s0.size, s1.size
    )
    if not (np.all(np.isfinite(s0)) and np.all(np.isfinite(s1))):
        raise ValueError("The audit statistic must be finite in every run.")
    n_sel0 = int(math.floor(selection_fraction * s0.size))
    n_sel1 = int(math.floor(selection_fraction * s1.size))
    profile, claim_epsilon = claimed_epsilons(
        delta, dp_event, epsilon, deltas, additional_delta=additional_delta
    )
    delta = float(delta)  # checked by claimed_epsilons

    # -- selection ---------------------------------------------------------------
    sel0, sel1 = s0[:n_sel0], s1[:n_sel1]
    ev0, ev1 = s0[n_sel0:], s1[n_sel1:]
    audit = _select(sel0, sel1, profile, confidence)
    if audit is None:
        # Nothing is claimed at the audit deltas (epsilon = inf there):
        # nothing can be violated.
        audit = (float(np.median(s0)), "greater", _unclaimed_delta(profile, delta))
    threshold, direction, audit_delta = audit
    nominal = _select(sel0, sel1, {delta: claim_epsilon}, confidence, ignore_inf=False)

    # -- evaluation --------------------------------------------------------------
    lower, fp, fn, fpr_u, fnr_u = _evaluate(ev0, ev1, audit, confidence)
    nominal_lower = _evaluate(ev0, ev1, nominal, confidence)[0]
    claimed = profile[audit_delta]
    return AuditResult(
        epsilon_lower_bound=lower,
        epsilon_claimed=float(claimed),
        audit_delta=float(audit_delta),
        claim_epsilon=float(claim_epsilon),
        claim_delta=float(delta),
        confidence=float(confidence),
        threshold=float(threshold),
        direction=direction,
        n_selection=int(n_sel0),
        n_evaluation=int(ev0.size),
        n_selection_with=int(n_sel1),
        n_evaluation_with=int(ev1.size),
        false_positives=fp,
        false_negatives=fn,
        fpr_upper=fpr_u,
        fnr_upper=fnr_u,
        violation=bool(lower > claimed),
        nominal_epsilon_lower_bound=nominal_lower,
        epsilon_ceiling=epsilon_ceiling(
            ev0.size, ev1.size, audit_delta, confidence=confidence
        ),
        additional_delta=float(additional_delta),
    )


def check_audit_options(confidence, selection_fraction, deltas, n_without, n_with):
    """Validate the options of an audit from public quantities alone.

    The audits call it before their first run, so that a bad option is
    refused at once rather than after every fit has run.

    Parameters
    ----------
    confidence : float
        Confidence of the lower bound, in (0, 1).
    selection_fraction : float
        Fraction of each world's runs that choose the test, in (0, 1).
    deltas : "auto" or sequence of float
        Deltas of the claimed profile the test may compare at.
    n_without, n_with : int
        Runs (trials) in each world.

    Returns
    -------
    confidence : float
    selection_fraction : float
    deltas : "auto" or list of float
    """
    confidence = check_confidence(confidence)
    valid = isinstance(selection_fraction, numbers.Real) and not isinstance(
        selection_fraction, bool
    )
    if not valid or not 0 < selection_fraction < 1:
        raise ValueError(
            "selection_fraction must be a number in (0, 1), got "
            f"{selection_fraction!r}."
        )
    selection_fraction = float(selection_fraction)
    n_sel0 = int(math.floor(selection_fraction * n_without))
    n_sel1 = int(math.floor(selection_fraction * n_with))
    if min(n_sel0, n_sel1, n_without - n_sel0, n_with - n_sel1) < 1:
        raise ValueError(
            "Too few runs: each world needs at least one selection and one "
            f"evaluation run; got {n_without} and {n_with} runs "
            f"(selection_fraction={selection_fraction!r})."
        )
    return confidence, selection_fraction, check_deltas(deltas)


def _unclaimed_delta(profile, nominal_delta):
    """The delta an audit of an infinite claim reports at.

    The nominal delta when the caller's ``deltas`` include it, else the
    smallest of them: the result's delta must be one of the profile's, whose
    claim (infinite) it states.
    """
    return nominal_delta if nominal_delta in profile else min(profile)


def check_claim(delta, dp_event=None, epsilon=None):
    """Validate the claim an audit compares with.

    Parameters
    ----------
    delta : float
        Delta of the nominal claim, in [0, 1).
    dp_event : DpEvent or list of DpEvent, default=None
        Claimed event(s).
    epsilon : float, default=None
        Claimed epsilon at ``delta`` (``inf``: nothing is claimed).

    Returns
    -------
    delta : float
        The delta, as a float.
    claims : list
        The events, or ``[epsilon]``.
    """
    delta = check_delta(delta)
    if dp_event is None and epsilon is None:
        raise ValueError("Give the claim: dp_event or epsilon.")
    if dp_event is not None and epsilon is not None:
        # Two claims could disagree; auditing one and ignoring the other
        # would report a verdict on a claim the caller did not mean.
        raise ValueError(
            "Give one claim: dp_event (its whole privacy profile) or epsilon "
            "(at delta), not both."
        )
    if dp_event is not None:
        claims = list(dp_event) if isinstance(dp_event, (list, tuple)) else [dp_event]
        if not all(is_dp_event(c) for c in claims):
            raise TypeError("dp_event must be a dp_accounting DpEvent (or a list).")
        return delta, claims
    return delta, [_check_claim_number(epsilon, "epsilon")]


def claimed_epsilons(
    delta, dp_event=None, epsilon=None, deltas="auto", *, additional_delta=0.0
):
    """The claimed profile at the audit deltas, and the claim's epsilon at ``delta``.

    It needs the claim only, not the runs: the audits call it before their
    repeated runs (after the probe fits that give an estimator's event), so
    a claim the accountant cannot evaluate is refused at once.

    Parameters
    ----------
    delta : float
        Delta of the nominal claim, in [0, 1).
    dp_event : DpEvent or list of DpEvent, default=None
        Claimed event(s).
    epsilon : float, default=None
        Claimed epsilon at ``delta``.
    deltas : "auto" or sequence of float, default="auto"
        Deltas at which the test may compare.
    additional_delta : float, default=0.0
        Part of ``delta`` spent outside the event(s), in [0, ``delta``] (see
        :func:`audit_scores`).

    Returns
    -------
    profile : dict
        ``{audit delta: claimed epsilon}``.
    claim_epsilon : float
        The claimed epsilon at ``delta``.

    Examples
    --------
    >>> from sklearn_dpfair.audit._distinguish import claimed_epsilons
    >>> claimed_epsilons(1e-5, epsilon=1.0, deltas=[1e-6, 1e-3])
    ({1e-06: inf, 0.001: 1.0}, 1.0)
    """
    delta, claims = check_claim(delta, dp_event, epsilon)
    additional_delta = _check_claim_number(
        additional_delta, "additional_delta", "in [0, delta]"
    )
    if additional_delta > delta:
        raise ValueError(
            f"additional_delta must be in [0, delta] (it is part of delta={delta!r}), "
            f"got {additional_delta!r}."
        )
    profile = claimed_profile(claims, delta, deltas, additional_delta)
    claim_epsilon = max(
        claimed_profile(claims, delta, [delta], additional_delta).values()
    )
    return profile, claim_epsilon


def _check_claim_number(value, name, valid=">= 0"):
    """``value`` as a float >= 0 (not NaN), or a ValueError naming ``name``.

    A negative epsilon would be "violated" by every mechanism and a NaN one
    by none (every comparison with NaN is False): both give a verdict on no
    claim at all.
    """
    # Text ("1.0") and booleans are no claim, though float() reads them.
    valid_type = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if not valid_type or math.isnan(value) or value < 0:
        raise ValueError(f"{name} must be a number {valid}, got {value!r}.")
    return float(value)


def _select(sel0, sel1, profile, confidence, ignore_inf=True):
    """Threshold, direction and delta with the largest bound-minus-claim."""
    thresholds = _candidate_thresholds(sel0, sel1)
    best_margin, best = -math.inf, None
    for direction in ("greater", "less"):
        fp, fn = _error_counts(sel0, sel1, thresholds, direction)
        fpr_u, fnr_u = _bounds(fp, fn, sel0.size, sel1.size, confidence)
        for d, claimed in profile.items():
            if math.isinf(claimed) and ignore_inf:
                continue
            bound = epsilon_from_error_bounds(fpr_u, fnr_u, d)
            margins = bound - (0.0 if math.isinf(claimed) else claimed)
            i = int(np.argmax(margins))
            if margins[i] > best_margin:
                best_margin, best = margins[i], (thresholds[i], direction, d)
    return best


def _evaluate(ev0, ev1, test, confidence):
    """Lower bound on epsilon of one fixed test on the evaluation runs."""
    threshold, direction, d = test
    fp, fn = _error_counts(ev0, ev1, np.array([threshold]), direction)
    fpr_u, fnr_u = _bounds(fp, fn, ev0.size, ev1.size, confidence)
    lower = float(epsilon_from_error_bounds(fpr_u, fnr_u, d)[0])
    return lower, int(fp[0]), int(fn[0]), float(fpr_u[0]), float(fnr_u[0])
