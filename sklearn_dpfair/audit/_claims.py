# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The epsilon a mechanism claims at every delta (its privacy profile).

An estimator states (epsilon_, delta_), but its ``dp_event_`` implies a whole
curve of (epsilon, delta) pairs. Auditing at delta = 1e-5 alone has no power
with a thousand runs (the guarantee there is about tail events one never
observes); auditing the curve at larger deltas does, and a violation anywhere
on the curve means the event does not describe the mechanism.
"""

import math

import dp_accounting

from ..privacy._accounting import (
    check_dp_event,
    epsilon_of,
    holds,
    is_dp_event,
)

__all__ = ["DEFAULT_AUDIT_DELTAS", "check_deltas", "claimed_profile"]

#: Deltas, besides the claim's own, at which an audit may test the profile.
#: Above 0.5 every mechanism with TV distance < 0.5 claims epsilon = 0.
DEFAULT_AUDIT_DELTAS = (1e-3, 1e-2, 0.05, 0.1, 0.2, 0.3, 0.5)


def _epsilon_at(event, delta):
    if delta == 0 and not holds(event, dp_accounting.RandomizedResponseDpEvent):
        # A malformed claim is refused, not read as inf.
        check_dp_event(event)
        try:
            # The accountant's own reading at delta = 0 (a release of
            # infinite noise is a no-op, a non-private one inf).
            return epsilon_of(event, 0.0)
        except ValueError:
            # A release with no pure epsilon (Gaussian, zCDP, sampled) is
            # (epsilon, 0)-DP for no finite epsilon: its profile is inf at
            # delta = 0, a claim no test can violate (the selection skips
            # it), not an error found after every run.
            return math.inf
    # PLD is the tightest valid upper bound dp-accounting offers (pessimistic
    # discretisation); events it cannot interpret (zCDP) fall back to RDP.
    try:
        return epsilon_of(event, delta, "pld")
    except ValueError:
        return epsilon_of(event, delta, "rdp")


def check_deltas(deltas):
    """Validate the audit ``deltas``: "auto" or a non-empty sequence in [0, 1).

    It reads parameters only, so the audits call it before their first run:
    a typo is refused at once, not after a thousand fits.

    Parameters
    ----------
    deltas : "auto" or sequence of float
        The caller's ``deltas``.

    Returns
    -------
    deltas : "auto" or list of float
        "auto", or the distinct deltas in increasing order.

    Examples
    --------
    >>> from sklearn_dpfair.audit._claims import check_deltas
    >>> check_deltas([0.1, 1e-5, 0.1])
    [1e-05, 0.1]
    """
    if isinstance(deltas, str):
        if deltas != "auto":
            raise ValueError(f"deltas must be 'auto' or a sequence, got {deltas!r}.")
        return deltas
    try:
        values = sorted({float(d) for d in deltas})
    except (TypeError, ValueError):
        raise ValueError(
            f"deltas must be 'auto' or a sequence of numbers in [0, 1), got {deltas!r}."
        ) from None
    # delta = 0: a pure claim (a local randomizer's), whose epsilon at 0
    # the PLD accountant gives.
    if not values or any(not 0 <= d < 1 for d in values):
        raise ValueError(
            f"deltas must be 'auto' or a non-empty sequence of numbers in [0, 1), "
            f"got {deltas!r}."
        )
    return values


def claimed_profile(claims, nominal_delta, deltas="auto", additional_delta=0.0):
    """Claimed epsilon at each audit delta.

    Parameters
    ----------
    claims : list of DpEvent or float
        What the mechanism claims in each world; a float is an epsilon valid
        at ``nominal_delta`` only. The largest claim counts.
    nominal_delta : float
        Delta of the nominal claim (of the whole release, ``additional_delta``
        included).
    deltas : "auto" or sequence of float
        "auto": ``nominal_delta`` and :data:`DEFAULT_AUDIT_DELTAS` when every
        claim is an event; only ``nominal_delta`` otherwise. At delta = 0 an
        event with no pure epsilon (Gaussian, zCDP, sampled) claims ``inf``.
    additional_delta : float, default=0.0
        Delta the release spends outside the events, added by the union bound
        (the threshold of a private partition selection): an event's claim
        at delta ``d`` is its epsilon at ``d - additional_delta``, and
        nothing (``inf``) below ``additional_delta``. A float claim is stated
        at ``nominal_delta`` already and is unchanged.

    Returns
    -------
    profile : dict
        ``{delta: claimed epsilon}``.

    Examples
    --------
    >>> from sklearn_dpfair.audit._claims import claimed_profile
    >>> from sklearn_dpfair.privacy._accounting import gaussian_event
    >>> profile = claimed_profile([gaussian_event(1.0)], 0.2, [0.05, 0.2],
    ...                           additional_delta=0.1)
    >>> profile[0.05], profile[0.2] == claimed_profile([gaussian_event(1.0)],
    ...                                                0.1, [0.1])[0.1]
    (inf, True)
    """
    events = all(is_dp_event(c) for c in claims)
    deltas = check_deltas(deltas)
    if deltas == "auto":
        deltas = [nominal_delta]
        if events:
            deltas += [d for d in DEFAULT_AUDIT_DELTAS if d > nominal_delta]
    profile = {}
    for d in deltas:
        values = []
        for c in claims:
            if is_dp_event(c):
                # A release that leaves its event with probability at most
                # additional_delta (a partition-selection threshold releasing
                # a category of one record; Desfontaines et al., PoPETs 2022)
                # is (eps_event(d'), d' + additional_delta)-DP for every
                # d' >= 0 (union bound): at d the event's epsilon at
                # d - additional_delta, and no claim below additional_delta.
                if d < additional_delta:
                    values.append(math.inf)
                else:
                    values.append(_epsilon_at(c, max(d - additional_delta, 0.0)))
            elif d >= nominal_delta:
                # (eps, delta)-DP implies (eps, delta')-DP for delta' >= delta.
                values.append(float(c))
            else:
                values.append(math.inf)
        profile[d] = max(values)
    return profile
