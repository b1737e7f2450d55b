# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The federated fit of a linear estimator: ``fit(X, y, silos=...)``.

Maps the estimator's DP-SGD parameters (the ``DPSGDParams`` and
:class:`~sklearn_dpfair.privacy.PrivacyBudget` its central fit takes) and
its :class:`SiloOptions` onto a :class:`FederationConfig`, hands the
federation to the driver (:func:`fit_federated`'s code path) and turns its
:class:`FederatedFit` into the estimator's ``silo_*`` attributes.
"""

import inspect
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

from .._solvers._feature_scaling import (
    BOUNDS_DESCRIPTION,
    EXACT_SCALING_DESCRIPTION,
    exact_feature_scaling,
    in_user_units,
    narrowed_if_finite,
    penalty_in_scaled_units,
    warn_unscaled_columns,
)
from .._solvers._schedules import check_sgd_steps, sgd_schedule
from ..privacy import PrivacyLedger, PrivacyRecord
from ..privacy._releases import mark_unchecked
from ..utils._validation import warn_at_caller
from ._accounting import (
    isrl_record,
    resolve_silo_privacy,
    secure_aggregation_record,
    silo_privacy,
)
from ._config import FederationConfig
from ._driver import check_secure_aggregation, check_shuffle_options, fit_federated
from ._execution import dask_client
from ._result import FederatedFit
from ._shuffle import plan_shuffled, shuffled_fit_record
from ._silo import SiloReport
from ._silos import resolve_server_weights, split_by_silo
from ._spider import SpiderSchedule

__all__ = [
    "SiloFitPlan",
    "SiloOptions",
    "any_silo_is_private",
    "check_silo_plan",
    "federation_config",
    "fit_silos",
    "plan_fit_silos",
    "plan_silos",
    "silo_attributes",
    "warn_unused_params",
    "warn_unused_silo_options",
]

_SILOS_PUBLIC_CAVEAT = "silo membership and silo sizes (treated as public metadata)"


@dataclass(frozen=True)
class SiloOptions:
    """Public options of a federated fit besides its DP-SGD hyperparameters.

    Each is the :func:`fit_federated` parameter of the same name.

    Parameters
    ----------
    silo_epsilon, silo_delta : float, Mapping or None, default=None
        Budget of every silo, or silo id to budget; None uses the fit's
        ``epsilon`` (``delta``).
    server_weights : {"uniform", "size"} or Mapping, default="uniform"
        Public aggregation weights.
    execution : {"local", "dask"}, default="local"
        Run the silos in this process or as actors on a Dask cluster.
    secure_aggregation : bool, default=False
        Also compute the central guarantee conditional on secure
        aggregation.
    shuffle : bool, default=False
        Run the shuffle-model protocol (trusted shuffler).
    spider : SpiderSchedule or None, default=None
        Run ISRL-DP FedProx-SPIDER instead of minibatch SGD (a network's
        federation): part of the schedule, :func:`federation_config`'s.

    Examples
    --------
    >>> from sklearn_dpfair.federated._fit import SiloOptions
    >>> from sklearn_dpfair.privacy import PrivacyBudget
    >>> options = SiloOptions(silo_epsilon={"a": 1.0, "b": 2.0})
    >>> kwargs = options.driver_kwargs(PrivacyBudget(epsilon=3.0, delta=1e-5))
    >>> kwargs["silo_epsilon"], kwargs["silo_delta"], kwargs["noise_multiplier"]
    ({'a': 1.0, 'b': 2.0}, 1e-05, None)
    """

    silo_epsilon: float | Mapping | None = None
    silo_delta: float | Mapping | None = None
    server_weights: str | Mapping = "uniform"
    execution: str = "local"
    secure_aggregation: bool = False
    shuffle: bool = False
    spider: SpiderSchedule | None = None

    def driver_kwargs(self, budget):
        """The keyword arguments of :func:`fit_federated` for ``budget``.

        These options, with the unset silo budgets ``budget``'s epsilon and
        delta, and ``budget``'s noise multiplier (None: calibrate) forced in
        every silo.
        """
        silo_epsilon, silo_delta = self.silo_epsilon, self.silo_delta
        options = {k: v for k, v in vars(self).items() if k != "spider"}
        return {
            **options,
            "silo_epsilon": budget.epsilon if silo_epsilon is None else silo_epsilon,
            "silo_delta": budget.delta if silo_delta is None else silo_delta,
            "noise_multiplier": budget.noise_multiplier,
        }


def warn_unused_params(estimator, names, *, used_by, ignored_by):
    """Warn that parameters set away from their defaults do not act in this fit.

    Reads parameters only (public): the warning says nothing about the data.
    One warning names every such parameter with its value, as scikit-learn's
    ``LogisticRegression`` warns for an ``l1_ratio`` without the elastic net.

    Parameters
    ----------
    estimator : BaseEstimator
        The estimator being fitted.
    names : iterable of str
        Its parameters that do not act in this fit.
    used_by : str
        The fits that use them, e.g. ``"federated fits (fit(..., silos=...))"``.
    ignored_by : str
        The fit that ignores them, e.g. ``"this central fit"``.

    Examples
    --------
    >>> import warnings
    >>> from sklearn_dpfair.federated._fit import warn_unused_params
    >>> from sklearn_dpfair.linear_model import DPLogisticRegression
    >>> clf = DPLogisticRegression(silo_epsilon=2.0)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_unused_params(
    ...         clf, ["silo_epsilon", "shuffle"], used_by="federated fits",
    ...         ignored_by="this central fit")
    >>> print(caught[0].message)  # doctest: +NORMALIZE_WHITESPACE
    DPLogisticRegression: silo_epsilon=2.0 applies to federated fits only;
    this central fit ignores it. Leave it at its default (silo_epsilon=None)
    to silence this warning.
    """
    defaults = inspect.signature(type(estimator).__init__).parameters
    params = estimator.get_params(deep=False)
    unused = [
        name
        for name in names
        if not _same_value(params[name], defaults[name].default)
    ]
    if not unused:
        return
    given = " and ".join(f"{name}={params[name]!r}" for name in unused)
    plural = len(unused) > 1
    kept = ", ".join(f"{name}={defaults[name].default!r}" for name in unused)
    warn_at_caller(
        f"{type(estimator).__name__}: {given} appl{'y' if plural else 'ies'} to "
        f"{used_by} only; {ignored_by} ignores {'them' if plural else 'it'}. "
        f"Leave {'them' if plural else 'it'} at {'their' if plural else 'its'} "
        f"default{'s' if plural else ''} ({kept}) to silence this warning."
    )


def warn_unused_silo_options(estimator, names):
    """Warn that a central fit ignores the federated options set among ``names``.

    See :func:`warn_unused_params`; called by fits without ``silos``.
    """
    warn_unused_params(
        estimator,
        names,
        used_by="federated fits (fit(..., silos=...))",
        ignored_by="this central fit",
    )


def _same_value(value, default):
    # A parameter equal to its default (a float equal to an int default, a
    # numpy scalar) is not set; one of another kind (a dict, an array) is.
    try:
        return bool(value is default or value == default)
    except (TypeError, ValueError):
        return False


def federation_config(n_samples, params, budget, spider=None):
    """The public schedule of a federated fit on ``n_samples`` pooled rows.

    The sampling rate and the number of rounds come from ``sgd_schedule`` on
    the pooled size ``n`` (``q = batch_size / n`` in every silo,
    ``R = ceil(epochs / q)``: each silo makes ``epochs`` expected passes over
    its rows); clip norm, step size and penalty are ``params``'; the
    accountant is ``budget``'s. A network's parameters hold their own biases
    (``params`` without ``fit_intercept``). ``spider`` (a
    :class:`~sklearn_dpfair.federated._spider.SpiderSchedule` or None) runs
    SPIDER's rounds on the same schedule. A schedule of more rounds than
    a central fit may take steps is refused, as the central fit refuses it
    (:func:`~sklearn_dpfair._solvers._schedules.check_sgd_steps`), by the
    plans and the fit before any row is read.
    """
    check_sgd_steps(n_samples, params.batch_size, params.epochs)
    q, rounds = sgd_schedule(n_samples, params.batch_size, params.epochs)
    return FederationConfig(
        rounds=rounds,
        sampling_probability=q,
        clip_norm=params.clip_norm,
        learning_rate=params.learning_rate,
        alpha=params.alpha,
        fit_intercept=getattr(params, "fit_intercept", True),
        accountant=budget.accountant,
        spider=spider,
    )


def fit_silos(
    X, y, loss, params, budget, options, *, silos, rng, seeded, network=None, scaling=None
):
    """The federated fit of an estimator (``fit(X, y, silos=...)``).

    ``params`` (``DPSGDParams``, or a network's ``MLPParams``) and ``budget``
    (:class:`~sklearn_dpfair.privacy.PrivacyBudget`) are those that the
    central DP-SGD fit takes; ``options`` (:class:`SiloOptions`) holds the
    federation's own. The schedule is :func:`federation_config`'s; the
    budget's accountant is every silo's, its ``noise_multiplier`` (if any)
    is forced in every silo, and its ``epsilon`` / ``delta`` are the default
    silo budgets. ``silos`` is the silo id of every row (public metadata).
    ``rng`` is the fit's generator and ``seeded`` whether it came from a
    seed (``random_state`` not None); the records say so. ``network`` (see
    :func:`fit_federated`) trains a non-linear model.

    ``scaling`` (a public
    :class:`~sklearn_dpfair._solvers._feature_scaling.FeatureScaling` of
    declared ``feature_bounds``, or None) maps every silo's rows by the
    same map before the rounds (no data read, no budget spent) when some
    silo is private. When no silo is private (every silo's epsilon
    ``inf``, no noise multiplier: nothing is released), the columns are
    standardized by their exact moments instead, with or without
    ``scaling``, as the central fit's non-private limit ignores the
    bounds: the silos' clip norm and step size assume unit-scale columns,
    and bounds-mapped ones spread ``1 / width`` the scale the default
    epochs converge on. A linear model is returned in the user's
    units (a network's ``parameters`` stay in the scaled ones: its caller
    maps the first layer by the returned fit's ``scaling``).

    A linear model fitted on mapped columns with no silo private
    minimizes the documented objective in the user's units: the silos'
    (server-weighted) mean losses plus ``(alpha/2) ||w||^2`` of the
    returned coefficients ``w``. On the mapped columns that penalty is
    ``alpha / scale_j^2`` on coefficient ``j``
    (:func:`~sklearn_dpfair._solvers._feature_scaling.penalty_in_scaled_units`),
    taken by the server's exact proximal step
    (:class:`~sklearn_dpfair.federated.FederationConfig`'s
    ``column_alpha``) instead of the silos' penalty gradient: it is stable
    for any scale, so ``learning_rate="auto"`` is not capped at ``1 /
    alpha``. The result
    is the tail average of the noiseless rounds (within their convergence
    of the minimizer; at the full batch, ``batch_size="full"``, proximal
    gradient descent). A private federation penalizes the coefficients of
    the mapped columns, as its plan and the central private fit do, and a
    network's penalty is on its scaled first layer whether private or not,
    as its central fit's is.
    """
    # ISRL-DP is a guarantee per silo: each silo checks its own releases
    # against its own record (Silo.message), and none reaches this fit's log.
    mark_unchecked("federated: each silo checks its own releases")
    ids, rows = split_by_silo(silos, X.shape[0])
    description = _scaling_description(scaling, budget, options, ids)
    if description == EXACT_SCALING_DESCRIPTION:
        # Nothing is released, so the exact moments cost no budget; the
        # declared bounds only need to contain the data, and a column
        # mapped by them spreads over ~1/width of the unit scale the
        # silos' step size assumes (at +-5 sd, a fifth: the default
        # epochs then stop far from the minimizer).
        center = getattr(params, "fit_intercept", True)
        scaling = exact_feature_scaling(X, center=center)
    if scaling is not None:
        X = scaling.transform(X)
    config = federation_config(X.shape[0], params, budget, options.spider)
    if (
        network is None
        and scaling is not None
        and config.alpha > 0
        and not any_silo_is_private(budget, options, ids)
    ):
        # The documented (alpha/2) ||w||^2 is on the coefficients in the
        # user's units, w_j = v_j / scale_j: on the fitted v it is (alpha /
        # scale_j^2) / 2 v_j^2 (a column in units of 0.01 at alpha = 0.01:
        # 100). Penalizing v itself gave such a column a coefficient ~500
        # times too large. Nothing is released, so the exact scales may set
        # it; a private fit keeps its planned steps.
        column_alpha = penalty_in_scaled_units(config.alpha, scaling)
        config = replace(config, alpha=0.0, column_alpha=column_alpha)
    extra = {} if network is None else {"network": network}
    fit = fit_federated(
        {sid: (X[r], y[r]) for sid, r in zip(ids, rows)},
        loss=loss,
        config=config,
        # A seeded fit's generator is its seed (read, never advanced); an
        # unseeded one is fresh OS entropy, as fit_federated draws for None.
        random_state=rng if seeded else None,
        caveats=(*budget.caveats, _SILOS_PUBLIC_CAVEAT),
        **options.driver_kwargs(budget),
        **extra,
    )
    if scaling is not None:
        # The map every silo applied (no budget, same event).
        fit = replace(
            fit,
            privacy_record=_described(fit.privacy_record, description),
            scaling=scaling,
        )
    if fit.coef is None:
        return fit
    # The server averages in float64; the linear model is returned in X's
    # precision, as a central fit returns it (rounding a release is
    # post-processing), unless a parameter lies beyond that precision's
    # largest float (a column in units of 1e-300 mapped back to the user's
    # units): cast, it would be inf and every prediction NaN. Coefficients
    # and intercept keep one dtype, as the central fit's map back does.
    fit = in_user_units(fit, scaling)
    parameters = np.concatenate([np.ravel(fit.coef), np.ravel(fit.intercept)])
    dtype = narrowed_if_finite(parameters, X.dtype).dtype
    return replace(
        fit,
        coef=fit.coef.astype(dtype, copy=False),
        intercept=fit.intercept.astype(dtype, copy=False),
    )


def any_silo_is_private(budget, options, silo_ids=None):
    """Whether some silo's budget has a finite ``epsilon`` or a noise multiplier.

    Public (the estimator's parameters and the silo ids, public metadata):
    a federation none of whose silos is private releases nothing and
    standardizes the columns by their exact moments (:func:`fit_silos`).

    Parameters
    ----------
    budget : PrivacyBudget
        The fit's budget (default silo budgets, forced noise multiplier).
    options : SiloOptions
        The federation's options.
    silo_ids : list or None, default=None
        The silos of the data. A ``silo_epsilon`` mapping may hold entries
        for silos absent from it (a cross-validation fold's); they run no
        rounds, so only the present silos decide. None reads every entry.

    Returns
    -------
    private : bool

    Examples
    --------
    >>> import math
    >>> from sklearn_dpfair.federated._fit import SiloOptions, any_silo_is_private
    >>> from sklearn_dpfair.privacy import PrivacyBudget
    >>> options = SiloOptions(silo_epsilon={"a": math.inf, "absent": 1.0})
    >>> budget = PrivacyBudget(epsilon=1.0, delta=1e-5)
    >>> any_silo_is_private(budget, options, ["a"])
    False
    >>> any_silo_is_private(budget, options)
    True
    """
    silos = options.driver_kwargs(budget)
    if silos["noise_multiplier"] is not None:
        return True
    epsilon = silos["silo_epsilon"]
    if not isinstance(epsilon, Mapping):
        values = [epsilon]
    elif silo_ids is None:
        values = epsilon.values()
    else:
        # A present silo without an entry is refused by the fit itself.
        values = [epsilon[sid] for sid in silo_ids if sid in epsilon]
    return not all(math.isinf(float(value)) for value in values)


def _scaling_description(scaling, budget, options, silo_ids=None):
    """How :func:`fit_silos` maps the columns, as its record says; None if not.

    Public: when no silo of ``silo_ids`` is private
    (:func:`any_silo_is_private`), the exact standardization, declared
    bounds or not; otherwise the declared bounds (``scaling`` not None),
    or no map.
    """
    if not any_silo_is_private(budget, options, silo_ids):
        return EXACT_SCALING_DESCRIPTION
    if scaling is not None:
        return BOUNDS_DESCRIPTION
    return None


@dataclass(frozen=True)
class SiloFitPlan:
    """What a federated fit is known to do before its first round.

    Parameters
    ----------
    record : PrivacyRecord
        The record :func:`fit_silos` will set: its ``dp_event``,
        ``adjacency``, ``epsilon`` and ``delta`` (the fitted one also
        carries the seed and names the column map in its mechanism).
    private : bool
        Whether some silo of the data is private
        (:func:`any_silo_is_private`).
    central_record : PrivacyRecord or None, default=None
        With ``secure_aggregation``, the central record
        (:func:`~sklearn_dpfair.federated._accounting.secure_aggregation_record`)
        the fit will set, but for its seed; None otherwise.
    """

    record: PrivacyRecord
    private: bool
    central_record: PrivacyRecord | None = None


def check_silo_plan(estimator, X, params, budget, options, *, silos):
    """Plan a federated fit and ask ``estimator``'s ledger before any message.

    The plan (:func:`plan_fit_silos`) is made from public inputs (silo
    sizes, budgets, schedule); a ledger that cannot record its event
    refuses now, before any silo sends a message, and columns far from unit
    scale warn (:func:`~sklearn_dpfair._solvers._feature_scaling.warn_unscaled_columns`)
    where some silo is private.

    Returns
    -------
    plan : SiloFitPlan

    Raises
    ------
    ValueError
        With ``shuffle``, for an ``accountant`` ledger not of kind "pld":
        the shuffled protocol's local epsilon is calibrated, and its record
        accounted, with the PLD accountant
        (:func:`~sklearn_dpfair.federated._shuffle.calibrate_local_epsilon`),
        so another kind's total of the same event exceeds the fit's epsilon.
    """
    ledger = getattr(estimator, "accountant", None)
    if options.shuffle and isinstance(ledger, PrivacyLedger) and ledger.kind != "pld":
        # The RDP bound of the rounds' randomized-response events is looser
        # than the PLD one eps0 is calibrated against: an RDP ledger of a
        # fit at epsilon=2 would total ~2.0007, past the budget.
        raise ValueError(
            "shuffle=True is accounted with the PLD accountant (its local "
            "epsilon is calibrated with it); record it in a "
            f"PrivacyLedger(kind='pld'), not an accountant of kind {ledger.kind!r}."
        )
    plan = plan_fit_silos(X.shape[0], params, budget, options, silos=silos)
    estimator._check_ledger_accepts(plan.record.dp_event, plan.record.adjacency)
    warn_unscaled_columns(X, estimator, plan.private)
    return plan


def plan_fit_silos(n_samples, params, budget, options, *, silos):
    """The plan of ``fit_silos`` on these silos, from public inputs only.

    A fit makes its plan before any silo sends a message, as a central fit
    does: its caller asks its ledger whether the plan's event can be
    recorded, so that a ledger that cannot record it refuses before the
    first release rather than after the last round. The silo ids and
    sizes are public metadata; every silo's set-up is resolved by the
    fit's own functions (:func:`~sklearn_dpfair.federated._accounting.
    resolve_silo_privacy`, or :func:`~sklearn_dpfair.federated._shuffle.
    plan_shuffled` with ``shuffle``), which raise the fit's errors for a
    silo size or budget that does not fit.

    Parameters
    ----------
    n_samples : int
        Number of rows of ``X``.
    params, budget, options
        As in :func:`fit_silos`.
    silos : array-like of shape (n_samples,)
        Silo id of every row.

    Returns
    -------
    plan : SiloFitPlan
    """
    ids, rows = split_by_silo(silos, n_samples)
    sizes = {sid: int(r.size) for sid, r in zip(ids, rows)}
    config = federation_config(n_samples, params, budget, options.spider)
    kwargs = options.driver_kwargs(budget)
    caveats = (*budget.caveats, _SILOS_PUBLIC_CAVEAT)
    central = None
    # What the driver refuses of the options alone is refused here too:
    # after the plan the fit is charged to its ledger if it raises.
    if options.shuffle:
        check_shuffle_options(
            server_weights=kwargs["server_weights"],
            noise_multiplier=kwargs["noise_multiplier"],
            execution=kwargs["execution"],
            secure_aggregation=kwargs["secure_aggregation"],
            # Only a linear model's options take shuffle.
            network=None,
            spider=config.spider,
        )
        eps0, deltas = plan_shuffled(
            sizes, kwargs["silo_epsilon"], kwargs["silo_delta"], config
        )
        record = shuffled_fit_record(eps0, sizes, deltas, config, caveats)
    else:
        check_secure_aggregation(config, options.secure_aggregation)
        privacy = resolve_silo_privacy(
            sizes,
            kwargs["silo_epsilon"],
            kwargs["silo_delta"],
            config,
            kwargs["noise_multiplier"],
            caveats=caveats,
        )
        record = _planned_isrl_record(privacy, config, caveats)
        if options.secure_aggregation:
            # The fit's central record, from the same public inputs: a
            # server_weights it cannot account is refused before round 0.
            weights = resolve_server_weights(options.server_weights, sizes)
            central = secure_aggregation_record(
                _planned_reports(privacy, config), weights, config, caveats
            )
    if kwargs["execution"] == "dask":
        dask_client()
    return SiloFitPlan(record, any_silo_is_private(budget, options, ids), central)


def _planned_reports(privacy, config):
    """The reports of the silos of ``privacy`` once they answered every round.

    ``privacy`` maps a silo to its resolved :class:`SiloPrivacy`.
    """
    return {
        sid: SiloReport(sid, p.n_samples, p.noise_multiplier, config.rounds, p.record)
        for sid, p in privacy.items()
    }


def _planned_isrl_record(privacy, config, caveats):
    """The fit's record once every silo of ``privacy`` answered every round.

    ``privacy`` maps a silo to its resolved :class:`SiloPrivacy`; the
    record is :func:`~sklearn_dpfair.federated._accounting.isrl_record` of
    the reports the untouched silos will send.
    """
    return isrl_record(_planned_reports(privacy, config), config, caveats)


def _described(record, description):
    """``record`` with the column map appended to its mechanism (no budget)."""
    if description is None:
        return record
    return replace(record, mechanism=f"{record.mechanism}; {description}")


def plan_silos(n_samples, params, budget, options, *, n_silos, scaling=None):
    """The record :func:`fit_silos` sets on ``n_samples`` rows in ``n_silos`` silos.

    From public inputs only, by the fit's own functions: the schedule of
    :func:`federation_config`, one silo's set-up by
    :func:`~sklearn_dpfair.federated.silo_privacy` and the fit's record by
    :func:`~sklearn_dpfair.federated._accounting.isrl_record`. With one
    budget for every silo, every silo's event is the same (its noise
    depends on the shared rate, the rounds and the budget, not on its size),
    so the fitted record is this one whatever the silo sizes; the silo-size
    check here assumes silos of equal size (the fit checks each real one).
    ``scaling`` is the public map of declared bounds the fit would apply
    (:func:`fit_silos`'s), or None; the record's mechanism names the column
    map as the fit's does (:func:`_scaling_description`: the exact
    standardization when no silo is private, bounds or not).

    Raises
    ------
    TypeError
        If ``n_silos`` is not an int.
    ValueError
        If ``n_silos`` is not in ``[1, n_samples]``, the silo budgets
        are per-silo mappings (which silos the data holds decides the worst
        one), ``shuffle`` is on (its own record) or ``secure_aggregation``
        is asked for a schedule its accounting does not cover (SPIDER).
    """
    if isinstance(n_silos, bool) or not isinstance(n_silos, numbers.Integral):
        raise TypeError(f"n_silos must be an int; got {type(n_silos).__name__}.")
    if not 1 <= n_silos <= n_samples:
        raise ValueError(
            f"n_silos must be in [1, n_samples={n_samples}]: every silo "
            f"holds at least one record; got {n_silos!r}."
        )
    if isinstance(options.silo_epsilon, Mapping) or isinstance(
        options.silo_delta, Mapping
    ):
        raise ValueError(
            "A federated plan needs one silo_epsilon and one silo_delta for every "
            "silo: with per-silo mappings the worst silo depends on which silos "
            "the data holds."
        )
    if options.shuffle:
        raise ValueError("A federated plan of shuffle=True is not available.")
    config = federation_config(n_samples, params, budget, options.spider)
    # The fit refuses these options before any round: so does its plan.
    check_secure_aggregation(config, options.secure_aggregation)
    kwargs = options.driver_kwargs(budget)
    privacy = silo_privacy(
        n_samples // n_silos,
        kwargs["silo_epsilon"],
        kwargs["silo_delta"],
        config,
        noise_multiplier=kwargs["noise_multiplier"],
    )
    caveats = (*budget.caveats, _SILOS_PUBLIC_CAVEAT)
    record = _planned_isrl_record({None: privacy}, config, caveats)
    return _described(record, _scaling_description(scaling, budget, options))


def silo_attributes(fit):
    """Fitted ``silo_*`` attributes of an estimator; all None for a central fit.

    Parameters
    ----------
    fit : FederatedFit or LinearFit
        What the estimator's solver returned.

    Returns
    -------
    attributes : dict
        Attribute name to value.
    """
    names = (
        "silos_",
        "silo_epsilon_",
        "silo_delta_",
        "silo_noise_multiplier_",
        "silo_rounds_",
        "silo_privacy_records_",
        "server_weights_",
        "central_epsilon_",
        "central_privacy_record_",
        "shuffle_epsilon_",
        "shuffle_privacy_record_",
    )
    if not isinstance(fit, FederatedFit):
        return dict.fromkeys(names)
    central = fit.central_record
    values = (
        list(fit.silo_reports),
        fit.silo_epsilon,
        fit.silo_delta,
        fit.silo_noise_multiplier,
        fit.silo_rounds,
        {s: r.privacy_record for s, r in fit.silo_reports.items()},
        fit.server_weights,
        None if central is None else central.epsilon,
        central,
        None if fit.shuffle_record is None else fit.shuffle_record.epsilon,
        fit.shuffle_record,
    )
    return dict(zip(names, values))
