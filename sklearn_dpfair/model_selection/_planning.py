# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The privacy event of a candidate fit, known before any data are read.

A private selection must be calibrated before it runs, so it needs the
``dp_event_`` that a candidate *will* record when trained with a budget
``t``. Every private estimator (and private pipeline) states it itself:
``privacy_plan(n_samples, n_features, sparse=..., **public_counts)`` is
built from its parameters, the public counts and X's layout by the same
functions its fit builds its record with. The search reads nothing else about a candidate, so any
private estimator can be searched, and still checks after each fit that the
fitted ``dp_event_`` equals the planned one: a drift is an error, never a
silent overspend.
"""

import inspect
import math

from sklearn.base import clone

from ..privacy._accounting import check_composable

__all__ = ["CandidatePlan", "check_nested_seeds", "plan_candidate", "with_budget"]

#: Parameters the search sets itself on every candidate (those it has).
SEARCH_OWNED_PARAMS = ("epsilon", "delta", "accountant", "random_state")

#: Parameters that would fix a candidate's noise or budget whatever epsilon
#: the search gives it.
_FIXED_BUDGET_PARAMS = ("noise_multiplier", "rho")

# A finite budget at which every plannable candidate can be planned.
_FINITE_PROBE = 10.0

# The selection is accounted with the RDP accountant (the only one that
# interprets RepeatAndSelectDpEvent), so every candidate calibrates with it.
_ACCOUNTANT = "rdp"


class CandidatePlan:
    """How one candidate's training event depends on its budget ``t``.

    Parameters
    ----------
    estimator : estimator
        The candidate (the search's estimator with one grid point set).
    n_train, n_features : int
        The shape of the training split (public).
    counts : dict
        The other public counts its plan takes (``n_groups``, ...).
    sparse : bool, default=False
        Whether X is a sparse matrix (a public layout).
    schema : DataFrame or None, default=None
        X's columns (names and dtypes, no row) where X is a DataFrame and
        the candidate is a private pipeline, whose column selections they
        resolve.
    """

    def __init__(
        self, estimator, n_train, n_features, counts, sparse=False, schema=None
    ):
        self.estimator = estimator
        self.n_train = n_train
        self.n_features = n_features
        self.counts = dict(counts)
        self.sparse = bool(sparse)
        self.schema = schema
        self._events = {}

    def plan(self, t, delta):
        """The candidate's :class:`~sklearn_dpfair.privacy.PrivacyPlan` at budget ``t``."""
        est = with_budget(self.estimator, t, delta)
        layout = {"sparse": True} if self.sparse else {}
        if self.schema is not None:
            layout["feature_names"] = self.schema
        return est.privacy_plan(self.n_train, self.n_features, **layout, **self.counts)

    def event(self, t, delta):
        """The ``dp_event_`` of this candidate trained with ``epsilon=t``."""
        key = (float(t), float(delta))
        if key not in self._events:
            self._events[key] = self.plan(t, delta).dp_event
        return self._events[key]


def with_budget(estimator, t, delta, **params):
    """A clone of ``estimator`` trained with budget ``(t, delta)`` by the RDP accountant.

    Only the parameters it has are set: a pure-DP estimator has no
    ``delta``, a zCDP one no ``accountant``. ``params`` (``random_state``)
    likewise.

    Examples
    --------
    >>> from sklearn_dpfair.linear_model import SemiLocalDPLinearRegression
    >>> from sklearn_dpfair.model_selection._planning import with_budget
    >>> with_budget(SemiLocalDPLinearRegression(), 0.5, 1e-5).epsilon
    0.5
    """
    own = estimator.get_params(deep=False)
    values = {
        "epsilon": float(t),
        "delta": float(delta),
        "accountant": _ACCOUNTANT,
        **params,
    }
    return clone(estimator).set_params(**{k: v for k, v in values.items() if k in own})


def check_nested_seeds(estimator):
    """Refuse a nested ``random_state`` that a search without a seed keeps.

    The search sets only the candidate's own ``random_state`` (None for
    fresh OS entropy in each run); a seed of a nested part (a private
    pipeline's step, ``step__random_state``) would stay, so every run of
    the candidate on the training split would draw the same noise. The
    selection's accounting (Papernot and Steinke 2022) composes the runs as
    independent, and the record would call the search a release. A seeded
    search seeds every run itself (a private pipeline's ``random_state``
    seeds all its private steps), so it leaves no such seed in force.

    Raises
    ------
    ValueError
        Naming the first nested ``random_state`` that is not None.

    Examples
    --------
    >>> from sklearn_dpfair import DPLogisticRegression
    >>> from sklearn_dpfair.model_selection._planning import check_nested_seeds
    >>> check_nested_seeds(DPLogisticRegression(random_state=0))  # its own: set
    """
    seeded = sorted(
        key
        for key, value in estimator.get_params().items()
        if key.endswith("__random_state") and value is not None
    )
    if seeded:
        raise ValueError(
            f"{seeded[0]} is set, which the search does not reseed: every run "
            "of a candidate would draw the same noise, and the search would "
            f"record a private release it is not. Leave {seeded[0]}=None in "
            "the estimator and the grid, or seed the search (random_state=...: "
            "reproducible, not a private release), which seeds every run."
        )


def accepted_counts(estimator):
    """The public counts ``estimator.privacy_plan`` takes.

    A private pipeline passes its final step's counts on, but only those
    its fit reads from the metadata: ``n_public`` from ``public_mask``, and
    ``n_groups``, which is 1 where no ``sensitive_features`` reach the
    final step, whatever groups it declares (the search counts the groups
    the same way). Its declared classes need no count.
    """
    steps = getattr(estimator, "steps", None)
    if steps:
        final = getattr(steps[-1][1], "_plan_public_counts", ())
        return tuple(c for c in final if c in ("n_public", "n_groups"))
    return tuple(getattr(estimator, "_plan_public_counts", ()))


def plan_candidate(
    estimator, n_train, n_features, counts, *, delta, sparse=False, schema=None
):
    """The :class:`CandidatePlan` of ``estimator`` trained on ``n_train`` rows.

    Checks, before any row is read, that the candidate can be planned: a
    private estimator (it has ``privacy_plan``), whose budget the search
    can set (no fixed ``noise_multiplier`` or ``rho``), whose guarantee
    is stated under add/remove or replace-one adjacency (the search's is
    the candidates' own), whose plan can be made from counts, and whose
    event the selection's RDP accountant can read (not the random
    allocation of ``batch_sampling="balls_and_bins"``, read by its PLD
    only).

    Parameters
    ----------
    estimator : estimator
        A candidate.
    n_train, n_features : int
        Shape of the training split.
    counts : dict
        Public counts available to the plan (``n_groups``, ``n_public``,
        ``n_classes``); those the estimator does not take are not passed
        (:func:`accepted_counts`).
    delta : float
        The search's delta (a plan is made at it, to check the candidate).
    sparse : bool, default=False
        Whether X is a sparse matrix: the candidate is planned with that
        layout (its event may depend on it).
    schema : DataFrame or None, default=None
        X's columns (names and dtypes, no row) where X is a DataFrame: a
        private pipeline is planned with them (its ColumnTransformer's
        selections by name or dtype); other candidates ignore them.

    Raises
    ------
    TypeError
        For a non-private estimator, or sparse X for one that refuses it.
    ValueError
        For a private one the search cannot plan (the message says why).
    """
    name = type(estimator).__name__
    if not hasattr(estimator, "privacy_plan"):
        raise TypeError(
            f"{name} is not a differentially private estimator: a private "
            "search can only select among private candidates (estimators "
            "and pipelines with a privacy_plan)."
        )
    params = estimator.get_params()
    for fixed in _FIXED_BUDGET_PARAMS:
        set_ = sorted(
            k
            for k, v in params.items()
            if (k == fixed or k.endswith(f"__{fixed}")) and v is not None
        )
        if set_:
            raise ValueError(
                "The search sets each candidate's budget itself: leave "
                f"{set_[0]}=None in the estimator and the grid."
            )
    allocated = sorted(
        k
        for k, v in params.items()
        if (k == "batch_sampling" or k.endswith("__batch_sampling"))
        and isinstance(v, str)
        and v == "balls_and_bins"
    )
    if allocated:
        # Refused before its plan, whose calibration of the allocation's
        # noise alone costs seconds: the event would fail the RDP check below.
        raise ValueError(
            f"{name} cannot be searched with {allocated[0]}='balls_and_bins': "
            "the private search is accounted with RDP, which cannot read "
            "batch_sampling='balls_and_bins' (random allocation, PLD only); "
            "use batch_sampling='poisson'."
        )
    if "epsilon" not in estimator.get_params(deep=False):
        raise TypeError(f"{name} has no epsilon parameter for the search to set.")
    accepted = accepted_counts(estimator)
    counts = {k: v for k, v in counts.items() if k in accepted and v is not None}
    # A private pipeline's plan takes the frame's columns; an estimator's not.
    takes_schema = "feature_names" in inspect.signature(
        estimator.privacy_plan
    ).parameters
    plan = CandidatePlan(
        estimator, n_train, n_features, counts, sparse,
        schema=schema if takes_schema else None,
    )
    try:
        # The adjacency and the public inputs a plan needs do not depend on
        # the budget; epsilon = inf cannot overspend. A private fit may
        # still need a private value to plan (a finite budget shows it);
        # a large one cannot be too small for the candidate's own
        # calibration, which the selection's calibration reports instead.
        probe = plan.plan(math.inf, delta)
        finite = plan.plan(_FINITE_PROBE, delta)
    except NotImplementedError as exc:
        raise ValueError(
            f"{name} cannot state its privacy plan yet, so the search cannot "
            "calibrate it."
        ) from exc
    except ValueError as exc:
        raise ValueError(
            f"The search cannot plan {name} before reading the data: {exc}"
        ) from exc
    try:
        # The selection (Papernot and Steinke 2022) is read by RDP, through
        # dp-accounting's RepeatAndSelectDpEvent around the runs' event: an
        # event RDP cannot read would fail only after the candidates ran.
        check_composable([finite.dp_event], _ACCOUNTANT)
    except ValueError as exc:
        raise ValueError(
            "The private search is accounted with RDP, which cannot read the "
            f"privacy event of {name}: {exc}"
        ) from exc
    if finite.additional_delta > 0:
        # A delta spent outside the event (the threshold of a private
        # partition selection, a union bound) is spent again in every run
        # of the selection, whose number is random and unbounded; the
        # selection's accounting (Papernot and Steinke 2022, through
        # dp-accounting's RepeatAndSelectDpEvent) takes the runs' events
        # only, so such a candidate would be under-accounted.
        raise ValueError(
            f"{name} spends delta outside its privacy event (the threshold of "
            "a private category discovery, DPOneHotEncoder(categories='auto')), "
            "in every run of the search, which the private selection does not "
            "account: declare the categories (categories=[[...], ...]), or "
            "discover them once outside the search (a DPOneHotEncoder fitted on "
            "its own budget, then its categories_ declared)."
        )
    if probe.adjacency not in ("add_remove", "replace_one"):  # pragma: no cover
        raise ValueError(
            f"{name} is private under {probe.adjacency} adjacency, which the "
            "private selection does not account."
        )
    plan.adjacency = probe.adjacency
    return plan
