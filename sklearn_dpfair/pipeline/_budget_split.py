# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""One (epsilon, delta) split over a pipeline's private parts, before any row is read.

Each private part ``i`` is given a share ``w_i`` (summing to 1). Its
``delta`` is ``w_i delta`` and its ``epsilon`` is ``s w_i epsilon``, where
the common scale ``s`` is the largest (found by bisection, to a relative
0.5%) for which the sequential composition of every part's planned
``DpEvent``, interpreted by one accountant at the delta left once the
parts' additional deltas (a partition-selection threshold) are set apart,
gives at most ``epsilon``. Composing the events rather than adding the
parts' epsilons is what makes ``s`` exceed 1: Renyi composition of
Gaussian releases grows like the square root of their number (Mironov,
2017, Proposition 1), a sum of epsilons linearly.

Neighbouring relations. A part analysed under replace-one (output
perturbation, semi-private learning) and a part under add/remove cannot
share one event as they are. The add/remove parts are converted to
replace-one: a replacement is a removal and an addition, so a Gaussian sum
of add/remove sensitivity ``C`` has replace-one sensitivity at most ``2C``
(noise multiplier ``z`` becomes ``z / 2``) and a ``rho``-zCDP release is
``4 rho``-zCDP for groups of two (Bun and Steinke, 2016, Proposition 1.9).
A Poisson-subsampled add/remove part has no such conversion and is refused.
"""

import math
import numbers

import dp_accounting
import numpy as np

from ..exceptions import PrivacyBudgetError
from ..privacy._accounting import composed_event, epsilon_of

__all__ = [
    "DEFAULT_FINAL_SHARE",
    "calibrate_scale",
    "compose_plans",
    "releases_noise",
    "resolve_shares",
    "to_replace_one",
]

#: Default share of the final estimator when private preprocessing precedes
#: it; the preprocessing parts share the rest evenly.
DEFAULT_FINAL_SHARE = 0.85

_SCALE_RTOL = 5e-3
# Stop once the composition spends this close to the target.
_EPSILON_SLACK = 2e-3
_MAX_DOUBLINGS = 8
_MAX_HALVINGS = 30


def resolve_shares(units, budget_shares, free=()):
    """Normalized share of each budgeted unit, by path.

    Parameters
    ----------
    units : list of PrivateUnit
        The parts that spend budget.
    budget_shares : dict or None
        ``{path or step name: share}``; a step's share is split evenly
        among its parts. None: the final estimator gets
        :data:`DEFAULT_FINAL_SHARE` when preprocessing spends budget too, the
        preprocessing parts the rest, evenly.
    free : sequence of str, default=()
        Paths of the private parts that spend nothing at any budget
        (declared categories): a share that names only such parts is
        accepted and unused (the other shares are normalized without it).

    Returns
    -------
    shares : dict of str -> float
    """
    paths = [u.path for u in units]
    if not units:
        return {}
    if budget_shares is None:
        finals = [u.path for u in units if u.final]
        others = [p for p in paths if p not in finals]
        if finals and others:
            # In the units' order (the order of the composition).
            return {
                p: DEFAULT_FINAL_SHARE / len(finals)
                if p in finals
                else (1 - DEFAULT_FINAL_SHARE) / len(others)
                for p in paths
            }
        return {p: 1.0 / len(paths) for p in paths}
    raw = {}
    used = set()
    for key, value in budget_shares.items():
        if (
            # Any real number (numpy's included), but not a bool.
            not isinstance(value, numbers.Real)
            or isinstance(value, (bool, np.bool_))
            or not (value > 0 and math.isfinite(value))
        ):
            raise ValueError(
                f"budget_shares[{key!r}] must be a positive finite number; got {value!r}."
            )
        covered = [p for p in paths if p == key or p.startswith(f"{key}__")]
        if not covered and any(p == key or p.startswith(f"{key}__") for p in free):
            # A part that spends nothing whatever its budget (declared
            # categories): its share would not be spent.
            continue
        if not covered:
            raise ValueError(
                f"budget_shares names {key!r}, which is not a private step of the "
                f"pipeline; the private steps are {paths}."
            )
        for p in covered:
            if p in used:
                raise ValueError(f"budget_shares gives {p!r} a share twice.")
            used.add(p)
            raw[p] = float(value) / len(covered)
    missing = [p for p in paths if p not in raw]
    if missing:
        raise ValueError(
            f"budget_shares gives no share to the private step(s) {missing}; "
            "give every private step a share (they are normalized to sum to 1)."
        )
    total = sum(raw.values())
    if not math.isfinite(total):
        # Finite shares near the largest float sum to infinity, which would
        # make every share 0: their ratios are those of the shares divided
        # by the largest, whose sum is at most their number. Only then:
        # other shares keep this division, bit for bit.
        largest = max(raw.values())
        raw = {p: value / largest for p, value in raw.items()}
        total = sum(raw.values())
    return {p: raw[p] / total for p in paths}


def to_replace_one(event, path):
    """The replace-one event of an add/remove ``event`` (group privacy of two)."""
    if isinstance(event, (dp_accounting.NoOpDpEvent, dp_accounting.NonPrivateDpEvent)):
        return event
    if isinstance(event, dp_accounting.GaussianDpEvent):
        return dp_accounting.GaussianDpEvent(event.noise_multiplier / 2.0)
    if isinstance(event, dp_accounting.ZCDpEvent):
        return dp_accounting.ZCDpEvent(4.0 * event.rho)
    if isinstance(event, dp_accounting.SelfComposedDpEvent):
        return dp_accounting.SelfComposedDpEvent(
            to_replace_one(event.event, path), event.count
        )
    if isinstance(event, dp_accounting.ComposedDpEvent):
        return dp_accounting.ComposedDpEvent(
            tuple(to_replace_one(e, path) for e in event.events)
        )
    raise ValueError(
        f"Step {path!r} is accounted under add/remove adjacency by "
        f"{type(event).__name__}, which has no replace-one conversion, while "
        "another step of the pipeline is accounted under replace-one. Use an "
        "add/remove final estimator (e.g. solver='dp-sgd', or "
        "adjacency='add_remove')."
    )


def releases_noise(event):
    """Whether ``event`` holds a noisy release, which :func:`to_replace_one` rescales.

    No-ops and non-private events (``epsilon = inf``: the exact statistics,
    no noise) release no noise to convert, at any depth of a composition.

    Examples
    --------
    >>> import dp_accounting
    >>> from sklearn_dpfair.pipeline._budget_split import releases_noise
    >>> releases_noise(dp_accounting.ComposedDpEvent(
    ...     (dp_accounting.NonPrivateDpEvent(), dp_accounting.NoOpDpEvent())))
    False
    >>> releases_noise(dp_accounting.GaussianDpEvent(2.0))
    True
    """
    if isinstance(event, (dp_accounting.NoOpDpEvent, dp_accounting.NonPrivateDpEvent)):
        return False
    if isinstance(event, dp_accounting.SelfComposedDpEvent):
        return event.count > 0 and releases_noise(event.event)
    if isinstance(event, dp_accounting.ComposedDpEvent):
        return any(releases_noise(e) for e in event.events)
    return True


def replace_one_release(kind, level):
    """The logged release ``(kind, level)`` as :func:`to_replace_one` converts it."""
    if kind == "gaussian":
        return kind, level / 2.0
    if kind == "zcdp":
        return kind, 4.0 * level
    raise ValueError(
        f"No replace-one conversion of a {kind!r} release."
    )  # pragma: no cover


def target_adjacency(plans):
    """The relation of the composition: replace-one as soon as one part has it."""
    relations = {plan.adjacency for plan in plans}
    return "replace_one" if "replace_one" in relations else "add_remove"


def compose_plans(named_plans, delta, accountant):
    """The composed event of ``named_plans``, its adjacency, accounting delta and epsilon.

    Parameters
    ----------
    named_plans : list of (str, PrivacyPlan)
    delta : float
        Total delta of the pipeline.
    accountant : {"rdp", "pld"}

    Returns
    -------
    event : dp_accounting.DpEvent
    adjacency : str
    accounting_delta : float
        ``delta`` less the parts' additional deltas: what the accountant is given.
    additional_delta : float
    epsilon : float
    """
    plans = [plan for _, plan in named_plans]
    adjacency = target_adjacency(plans)
    events = []
    for path, plan in named_plans:
        event = plan.dp_event
        if plan.adjacency != adjacency:
            event = to_replace_one(event, path)
        if not isinstance(event, dp_accounting.NoOpDpEvent):
            events.append(event)
    event = composed_event(events) if events else dp_accounting.NoOpDpEvent()
    additional = sum(plan.additional_delta for plan in plans)
    accounting_delta = delta - additional
    if not accounting_delta > 0:  # pragma: no cover - shares keep it positive
        raise ValueError("The steps' additional deltas exhaust the pipeline's delta.")
    epsilon = epsilon_of(event, accounting_delta, accountant)
    return event, adjacency, accounting_delta, additional, epsilon


def _rdp_hint(accountant):
    """What to do when RDP cannot certify a small part's share."""
    if accountant != "rdp":
        return ""
    return (
        " The RDP accountant cannot certify epsilon much below 0.01 at small "
        "delta: accountant='pld' can."
    )


def calibrate_scale(plan_at, shares, epsilon, delta, accountant):
    """The largest scale ``s`` whose composed plans spend at most ``epsilon``.

    Parameters
    ----------
    plan_at : callable
        ``plan_at(path, epsilon_i, delta_i) -> PrivacyPlan``.
    shares : dict of str -> float
    epsilon, delta : float
        The pipeline's target.
    accountant : {"rdp", "pld"}

    Returns
    -------
    scale : float
    named_plans : list of (str, PrivacyPlan)
        The plans at ``scale``.
    composed : tuple
        What :func:`compose_plans` returns for them.
    """

    def at(scale):
        named = [
            (path, plan_at(path, scale * share * epsilon, share * delta))
            for path, share in shares.items()
        ]
        return named, compose_plans(named, delta, accountant)

    if math.isinf(epsilon) or not shares:
        named, composed = at(1.0)
        return 1.0, named, composed
    try:
        named, composed = at(1.0)
        failure = None
    except ValueError as exc:
        failure = exc
    if failure is not None:
        # A part that cannot be planned even at the whole budget fails for
        # another reason than its share (a configuration its plan refuses
        # at every finite epsilon, or a budget too small for any split):
        # no split helps, and its own error says why.
        for path in shares:
            plan_at(path, epsilon, delta)
        # A part's own share (5% of a small epsilon) can be below what its
        # accountant certifies alone: say what to do, not only the part's
        # error.
        raise ValueError(
            f"epsilon={epsilon:g} at delta={delta:g} cannot be split among the "
            f"private steps {list(shares)}: a step cannot be planned at its "
            f"share ({failure}).{_rdp_hint(accountant)}"
        ) from failure
    if len(shares) == 1 and composed[-1] <= epsilon:
        # One part calibrated by the same accountant at the whole budget.
        return 1.0, named, composed
    best = (1.0, named, composed) if composed[-1] <= epsilon else None
    f_hi = math.inf
    if best is None:
        lo, hi, f_hi = 0.5, 1.0, composed[-1]
        at_full = f_hi
        for _ in range(_MAX_HALVINGS):
            try:
                named, composed = at(lo)
            except ValueError as exc:
                # A step calibrated by another accountant (one Gaussian by
                # PLD) can meet its share while this accountant reads the
                # composition above epsilon; below its calibration range no
                # smaller share helps. Say so rather than the step's error.
                raise ValueError(
                    f"epsilon={epsilon:g} at delta={delta:g} cannot be met by "
                    f"the private steps {list(shares)}: at their full shares "
                    f"the {accountant.upper()} accountant reads their "
                    f"composition as {at_full:.4g}, and no smaller share can "
                    f"be planned ({exc}).{_rdp_hint(accountant)}"
                ) from exc
            if composed[-1] <= epsilon:
                best = (lo, named, composed)
                break
            lo, hi, f_hi = lo / 2, lo, composed[-1]
        if best is None:
            raise PrivacyBudgetError(
                f"No split of epsilon={epsilon:g} over the private steps "
                f"{list(shares)} fits the budget: a step spends more than its "
                "share whatever its epsilon (a fixed noise_multiplier?)."
            )
    else:
        lo, hi = 1.0, 2.0
        for _ in range(_MAX_DOUBLINGS):
            named, composed = at(hi)
            if composed[-1] > epsilon:
                f_hi = composed[-1]
                break
            best = (hi, named, composed)
            lo, hi = hi, 2 * hi
        else:
            return best
    f_lo = best[2][-1]
    while hi / lo > 1 + _SCALE_RTOL and f_lo < epsilon * (1 - _EPSILON_SLACK):
        # Interpolate epsilon in log(scale) (regula falsi), kept inside the
        # bracket so that the bracket shrinks by at least 10% each time.
        t = 0.5
        if math.isfinite(f_hi) and f_hi > f_lo:
            t = min(max((epsilon - f_lo) / (f_hi - f_lo), 0.1), 0.9)
        mid = lo * (hi / lo) ** t
        named, composed = at(mid)
        if composed[-1] <= epsilon:
            best = (mid, named, composed)
            lo, f_lo = mid, composed[-1]
        else:
            hi, f_hi = mid, composed[-1]
    return best
