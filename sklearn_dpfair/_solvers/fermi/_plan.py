# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The release plan of a FERMI fit, from public quantities alone.

Every noisy release of a DP-FERMI fit (thesis Algorithm 10, with the
weight selection of :mod:`._weight_search`) is fixed here before any data
are read: the schedule ``q``, ``T``, the stages of a ``disparity_bound``
selection, the noise multipliers and the composed event. The fit builds
its record from :func:`fermi_plan` and checks what it ran against it; a
private hyperparameter search plans a candidate with :func:`plan_from_key`
on the same key, so a search's plan and a fit's event cannot disagree.
"""

from dataclasses import dataclass, replace

from ...exceptions import PrivacyAccountingError
from .._constant_choice import chooses_privately, in_choice_range
from .._intercept_only import affords_model, intercept_only_setup
from .._schedules import check_penalty_step, check_sgd_steps, sgd_schedule
from ._privacy import FERMINoise, fermi_event, noise_of
from ._weight_search import PRIVATE_BOUND_MAX, selection_schedule

__all__ = [
    "RECORDS_PER_PARAMETER",
    "FERMIPlan",
    "FERMIPlanKey",
    "fermi_plan",
    "fermi_plan_key",
    "plan_from_key",
]

# small_budget="auto": on Adult and German credit (n in {300, 700, 1000, 1500,
# 2000, 3000}, epsilon 0.3 to 3, benchmarks/bench_fermi_small.py) DP-FERMI's
# defaults beat the majority class on held-out data, in the mean of seeds,
# once n * epsilon >= 15 (n_features + 1) (n_classes - 1) (Adult at 15.3: 0.227
# to 0.231 against 0.248) and lose to it below 12 (Adult at 10.2: 0.255, German
# at 11.3: 0.329 against 0.301). 20 would cost strong-signal data more (a
# synthetic 100-column set at 19.8: 0.30 against the constant's 0.50).
RECORDS_PER_PARAMETER = 15.0


@dataclass(frozen=True)
class FERMIPlanKey:
    """Every public input of a FERMI fit's event except the budget.

    Two fits with equal keys and equal budgets make the same releases and
    record the same ``dp_event_``: :func:`plan_from_key` reads nothing else.
    ``private`` is False for the non-private fit (no releases).
    ``max_weight`` is the public largest candidate weight of a
    ``disparity_bound`` selection (it sets the number of candidates).
    ``intercept_only`` is the public rule's decision that the budget cannot
    buy more than the intercept-only model (``small_budget="auto"``,
    :func:`~sklearn_dpfair._solvers._intercept_only.affords_model`); the
    fit then releases the label histogram of ``n_classes`` counts only.
    ``constant_choice`` is the public rule's decision that the fit, once
    its model is trained, privately compares it with the constants and
    releases the better
    (:func:`~sklearn_dpfair._solvers._constant_choice.chooses_privately`;
    with ``small_budget="choose"``,
    :func:`~sklearn_dpfair._solvers._constant_choice.in_choice_range`):
    one more Gaussian in the event.
    ``prior_event`` is the (hashable) event of the private column scales
    released before the steps
    (:func:`~sklearn_dpfair._solvers._feature_scaling.plan_feature_scaling`),
    None when the columns are used as given or scaled by public bounds.
    """

    private: bool
    sampling_probability: float
    n_steps: int
    epochs: int
    active: bool
    bounded: bool
    dual_noise_ratio: float = 1.0
    marginal_noise_multiplier: float | None = None
    selection_noise_multiplier: float | None = None
    public_marginals: bool = False
    max_weight: float = PRIVATE_BOUND_MAX
    intercept_only: bool = False
    n_classes: int = 2
    prior_event: object = None
    constant_choice: bool = False


@dataclass(frozen=True)
class FERMIPlan:
    """What a FERMI fit will release, fixed before the data are read.

    ``selection`` is the :class:`._weight_search.SelectionSchedule` of a
    ``disparity_bound`` fit (None otherwise); its steps add up to
    ``n_steps``. ``fallback`` is the
    :class:`~sklearn_dpfair._solvers._intercept_only.InterceptOnlySetup` of
    a fit that releases the intercept-only model (no SGDA step then).
    ``event`` is the ``dp_event_`` of the fit. ``shape`` is the public
    ``(n_samples, n_features, n_groups, n_classes)`` the plan was made for
    (None for a plan made from a key alone, as a search plans a candidate):
    :meth:`check_data` refuses to run it on anything else.
    """

    key: FERMIPlanKey
    noise: FERMINoise
    selection: object = None
    fallback: object = None
    shape: tuple | None = None

    @property
    def n_classes(self):
        """The number of (declared) classes the plan was made for."""
        return None if self.shape is None else self.shape[3]

    def check_data(self, n_samples, n_features, n_groups):
        """Raise unless the data have the public shape the plan was made for.

        The classes are the plan's (:attr:`n_classes`): the fit encodes
        labels against them.

        Raises
        ------
        PrivacyAccountingError
            If they differ (a bug of the caller, never a property of the
            data's values): the fit's releases would not be the planned ones.
        """
        received = (n_samples, n_features, n_groups)
        planned = None if self.shape is None else tuple(self.shape[:3])
        if received != planned:
            raise PrivacyAccountingError(
                "The FERMI fit was planned for (n_samples, n_features, "
                f"n_groups) = {planned} but received {received}: "
                "its releases would not be the accounted ones. This is a bug: "
                "please report it."
            )

    @property
    def sampling_probability(self):
        """The Poisson rate ``q`` of every noisy step (None: no step)."""
        return None if self.fallback is not None else self.key.sampling_probability

    @property
    def n_steps(self):
        """The number ``T`` of noisy SGDA steps, all accounted."""
        return 0 if self.fallback is not None else self.key.n_steps

    @property
    def n_candidates(self):
        """Candidate models whose counts the selection releases (0: none)."""
        return 0 if self.selection is None else self.selection.n_candidates

    @property
    def event(self):
        """The composed ``dp_event_`` of the fit (:func:`._privacy.fermi_event`)."""
        if self.fallback is not None:
            return self.fallback.event
        return fermi_event(
            self.noise.effective,
            self.key.sampling_probability,
            self.key.n_steps,
            self.noise.marginal,
            self.noise.selection,
            self.key.prior_event,
            self.noise.choice,
        )


def fermi_plan_key(privacy, params, *, n_samples, n_groups, n_features, n_classes):
    """The :class:`FERMIPlanKey` of a fit (public inputs only).

    Parameters
    ----------
    privacy : FairPrivacy or None
        None is the non-private fit. Its budget is not read.
    params : FERMIParams
        Public hyperparameters (the schedule, ``fairness_weight``,
        ``disparity_bound`` and ``max_fairness_weight``; the constraint is
        not read).
    n_samples : int
        Number of training rows (public under add/remove adjacency, as in
        every fit of this package).
    n_groups : int
        Number of declared groups.
    n_features, n_classes : int
        Number of columns and of declared classes: with ``n_samples`` and
        epsilon, what ``small_budget="auto"`` decides from.

    Returns
    -------
    key : FERMIPlanKey
    """
    # Its descent-ascent loop runs the steps with or without noise.
    check_sgd_steps(n_samples, params.batch_size, params.epochs)
    q, n_steps = sgd_schedule(n_samples, params.batch_size, params.epochs)
    # The non-private fit solves its weight path with one group too (its
    # disparity is 0 at weight 0: a one-point path, the bound met), as it
    # does when min_group_size leaves every comparison out. DP-FERMI has no
    # selection to release then (its event is unchanged).
    bounded = params.disparity_bound is not None and (
        n_groups > 1 or privacy is None
    )
    active = (params.fairness_weight > 0 or bounded) and n_groups > 1
    common = dict(
        sampling_probability=q,
        n_steps=n_steps,
        epochs=int(params.epochs),
        active=active,
        bounded=bounded,
        max_weight=float(params.max_fairness_weight),
    )
    if privacy is None:
        return FERMIPlanKey(private=False, **common)
    declared = privacy.marginal_noise_multiplier, privacy.selection_noise_multiplier
    intercept_only = params.small_budget == "auto" and not affords_model(
        n_samples, n_features, n_classes, privacy.budget, RECORDS_PER_PARAMETER
    )
    if params.small_budget == "choose":
        constant_choice = in_choice_range(n_samples, n_classes, privacy.budget)
    else:
        constant_choice = params.small_budget == "auto" and chooses_privately(
            n_samples, n_features, n_classes, privacy.budget, RECORDS_PER_PARAMETER
        )
    return FERMIPlanKey(
        private=True,
        intercept_only=intercept_only,
        constant_choice=constant_choice,
        n_classes=int(n_classes),
        dual_noise_ratio=float(privacy.dual_noise_ratio),
        marginal_noise_multiplier=None if declared[0] is None else float(declared[0]),
        selection_noise_multiplier=None if declared[1] is None else float(declared[1]),
        public_marginals=privacy.public_marginals is not None,
        prior_event=privacy.prior_event,
        **common,
    )


def plan_from_key(key, budget):
    """The :class:`FERMIPlan` of ``key`` under ``budget`` (a ``PrivacyBudget``).

    Examples
    --------
    >>> from sklearn_dpfair.privacy import PrivacyBudget
    >>> from sklearn_dpfair._solvers.fermi._plan import FERMIPlanKey, plan_from_key
    >>> key = FERMIPlanKey(True, 1.0, 2, 2, active=True, bounded=True)
    >>> plan = plan_from_key(key, PrivacyBudget(2.0, 1e-5))
    >>> plan.selection.weights, plan.selection.n_steps
    ((0.0, 64.0), 2)
    >>> plan.event.events[1].count
    2
    """
    if key.private and key.intercept_only:
        return FERMIPlan(
            key=key,
            noise=FERMINoise(),
            fallback=intercept_only_setup(budget, key.n_classes),
        )
    if not key.private:
        noise = FERMINoise()
    else:
        noise = noise_of(
            budget,
            key.sampling_probability,
            key.n_steps,
            active=key.active,
            bounded=key.bounded,
            dual_noise_ratio=key.dual_noise_ratio,
            marginal_noise_multiplier=key.marginal_noise_multiplier,
            selection_noise_multiplier=key.selection_noise_multiplier,
            public_marginals=key.public_marginals,
            prior_event=key.prior_event,
            constant_choice=key.constant_choice,
        )
    selection = (
        selection_schedule(key.n_steps, key.epochs, key.max_weight)
        if key.bounded
        else None
    )
    if selection is not None and selection.n_steps != key.n_steps:
        # The schedule only divides the T accounted steps (selection_schedule).
        raise RuntimeError("the weight selection's stages do not add up to T")
    return FERMIPlan(key=key, noise=noise, selection=selection)


def fermi_plan(privacy, params, *, n_samples, n_groups, n_features, n_classes):
    """The :class:`FERMIPlan` of a fit: :func:`plan_from_key` of its key.

    Parameters are those of :func:`fermi_plan_key`; the budget is
    ``privacy.budget``. The plan keeps the public shape it was made for
    (:meth:`FERMIPlan.check_data`).
    """
    if privacy is not None:
        # The private runs have no full-batch phase to recover from a
        # diverging penalty step: refused before the data is read.
        check_penalty_step(params.learning_rate, params.alpha)
    key = fermi_plan_key(
        privacy,
        params,
        n_samples=n_samples,
        n_groups=n_groups,
        n_features=n_features,
        n_classes=n_classes,
    )
    plan = plan_from_key(key, None if privacy is None else privacy.budget)
    return replace(plan, shape=(n_samples, n_features, n_groups, n_classes))
