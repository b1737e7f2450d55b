# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Hyperparameter search whose guarantee covers training, scoring and selection."""

import inspect
import math
import secrets
import textwrap
from dataclasses import dataclass
from functools import partial
from numbers import Integral, Real

import numpy as np
from sklearn.base import (
    BaseEstimator,
    MetaEstimatorMixin,
    clone,
    is_classifier,
    is_regressor,
)
from sklearn.model_selection import ParameterGrid
from sklearn.utils import get_tags, indexable
from sklearn.utils.metadata_routing import (
    UNUSED,
    WARN,
    MetadataRouter,
    MethodMapping,
    get_routing_for_object,
    process_routing,
)
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from .._base import (
    DELTA_CONSTRAINT,
    EPSILON_CONSTRAINT,
    SEED_CONSTRAINT,
    PrivateEstimatorMixin,
    charged_if_raised_after_releases,
)
from ..fairness import encode_sensitive_features
from ..fairness._sensitive import sensitive_columns_frame
from ..pipeline import PrivatePipeline
from ..pipeline._pipeline import _nested_parts, _routed_parts
from ..privacy._accounting import composed_event, gaussian_event
from ..privacy._ledger import PrivacyLedger
from ..privacy._plan import check_public_count, check_public_layout
from ..privacy._record import PrivacyRecord, check_budget
from ..privacy._selection import (
    RUN_DISTRIBUTIONS,
    calibrate_selection,
    check_number_of_runs,
    sample_number_of_runs,
)
from ..privacy._zcdp import rho_for_epsilon_simple
from ..utils._dask import refuse_dask_input
from ..utils._sklearn_compat import (
    HasMethods,
    Interval,
    StrOptions,
    _fit_context,
    num_samples,
    routing_enabled,
    safe_indexing,
)
from ..utils._validation import (
    _is_array_like,
    assert_all_finite,
    check_declared_groups,
    check_fit_keywords,
    check_public_targets,
    check_public_weights,
    check_sample_aligned,
    is_sparse_layout,
    one_per_row,
    warn_at_caller,
)
from ._planning import SEARCH_OWNED_PARAMS, check_nested_seeds, plan_candidate
from ._runs import best_of_runs, check_run_workers, draw_runs
from ._scoring import (
    CLASSIFICATION_SCORINGS,
    REGRESSION_SCORINGS,
    SCORINGS,
    noisy_score,
    score_mechanism,
)

__all__ = ["PrivateHyperparameterSearch"]

# n_runs="auto": mean number of runs per candidate. On Adult (6 candidates,
# epsilon = 1) twice rather than once costs each run 8% of its budget
# (0.505 instead of 0.546) for a better chance of trying every candidate.
_AUTO_RUNS_PER_CANDIDATE = 2

# Bounds of the scores' noise multiplier. Below: the estimators' own floor
# (the calibration of sklearn_dpfair.privacy._calibration never goes under
# sigma = 0.1): a per-run budget so large (in the hundreds at the default
# share) gets that noise, which is conservative, where the parameterization
# alone would go as low as 1e-141 at epsilon = 1e281, which dp-accounting's
# RDP cannot read. Above: dp-accounting squares sigma for the RDP of a
# Gaussian, which overflows from sqrt(float64 max) ~ 1.34e154 (a share or a
# budget so small that the score is noise only).
_MIN_SCORE_NOISE_MULTIPLIER = 0.1
_MAX_SCORE_NOISE_MULTIPLIER = 1e154

_MECHANISM = (
    "private selection (Papernot & Steinke 2022): best of a random number of "
    "runs, each a candidate trained on the training split and scored with "
    "Gaussian noise on the validation split"
)


def _selected_has(method):
    """Whether the search offers ``method``: the model it selected has it, or,
    before a fit, the estimator it tunes (as in scikit-learn's searches)."""

    def check(self):
        model = getattr(self, "best_estimator_", self.estimator)
        # Raises the model's own AttributeError, which available_if chains.
        getattr(model, method)
        return True

    return check


def _delegate_to_selected(method, summary, returns):
    """The search's ``method``: that of the selected model, once fitted.

    Available only where that model has it, so that ``hasattr(search,
    method)`` tells the truth (a regressor search has no ``predict_proba``).
    """

    def delegated(self, X):
        check_is_fitted(self, "best_estimator_")
        return getattr(self.best_estimator_, method)(X)

    delegated.__name__ = method
    delegated.__qualname__ = f"PrivateHyperparameterSearch.{method}"
    returns = textwrap.indent(returns, "    ")
    delegated.__doc__ = (
        f"{summary}\n\nParameters\n----------\nX : array-like of shape "
        "(n_samples, n_features)\n    Samples, in a layout the selected model "
        f"accepts.\n\nReturns\n-------\n{returns}\n"
    )
    return available_if(_selected_has(method))(delegated)


class PrivateHyperparameterSearch(
    MetaEstimatorMixin, PrivateEstimatorMixin, BaseEstimator
):
    """Hyperparameter search with one differential privacy guarantee for all of it.

    ``GridSearchCV`` scores every candidate without noise on private
    held-out rows and selects with those scores; no accountant covers that.
    This search instead runs the private selection of Papernot and Steinke
    (2022): the number of runs ``K`` is random (truncated negative binomial
    with mean ``n_runs``); each run picks a candidate of ``param_grid``
    uniformly at random, trains it with a per-run budget on a training split
    and scores it with Gaussian noise on a validation split; only the best
    run is released. ``epsilon_`` covers every candidate fit, the scoring,
    the selection and the returned model, and is recomputed by
    dp-accounting's RDP accountant from ``dp_event_``.

    Read more in the :ref:`User Guide <private_search>`.

    Parameters
    ----------
    estimator : private classifier, private regressor or PrivatePipeline
        The private estimator (or private pipeline ending in one) to tune:
        anything with a ``privacy_plan`` that can be made from public counts,
        stated under add/remove or replace-one adjacency (one for the whole
        grid: the search's guarantee is stated under it). A classifier
        declares its ``classes``; nothing is asked of a regressor but the
        search's ``score_bound``. Its ``epsilon``, ``delta``,
        ``accountant`` and ``random_state`` (those it has) are set by the
        search; a fixed ``noise_multiplier`` or ``rho`` is refused, so is
        a seeded nested part (``step__random_state``) in a search without
        ``random_state`` (it would not be reseeded), and so
        is a pipeline that discovers categories privately (its threshold's
        delta, outside its event, would be spent again in every run:
        declare the categories); a pipeline's parameters are addressed as
        ``step__param``.
    param_grid : dict or list of dict
        Lists of values per parameter, as in ``GridSearchCV``; the candidates
        are its points. Parameters that change the privacy cost (``max_iter``,
        ``batch_size``) are allowed but make every run pay for all distinct
        costs (see Notes). A point may set the declared ``classes`` or
        ``groups``, never read from the data: ``groups=None`` takes the
        search's groups (see ``groups``), and a classifier point that leaves
        no label set (``classes=None``) is refused before any row is read.
        The scores' label set (its largest label is the positive one) is
        the estimator's, or, where it leaves ``classes=None``, the one set
        every point declares.
    epsilon : float, default=1.0
        Budget of the whole search.
    delta : float, default=1e-5
        Delta of the whole search.
    scoring : {"accuracy", "accuracy-dp-gap", "neg_mean_absolute_error", \
            "neg_mean_squared_error"} or None, default=None
        Private validation score. Classifiers: accuracy (None), or accuracy
        minus ``gap_penalty`` times the demographic-parity gap between the
        declared groups (binary problems; needs ``sensitive_features``,
        which the search reads for the score and passes on only to an
        estimator that takes it, so any classifier can be scored so).
        Regressors: minus the mean of each validation row's error capped at
        ``score_bound``, ``min(|y - y_pred|, score_bound)`` (None) or
        ``min(|y - y_pred|, sqrt(score_bound))^2``.
    score_bound : float or None, default=None
        Regressors only, and required for them: the public largest error one
        validation row may count, in the score's units (those of ``y`` for
        the absolute error, of ``y`` squared for the squared error), for
        instance the width of the targets' known range. It is the L2
        sensitivity of the noisy error sum under either neighbouring
        relation (every row's term lies in ``[0, score_bound]`` whatever it
        holds, a huge target or a non-finite prediction included; a target
        that is not finite is refused, on every row, before the split is
        drawn); never read from the data. Smaller bounds mean less noise,
        but errors above them count only the bound.
    gap_penalty : float, default=1.0
        Weight of the gap in ``"accuracy-dp-gap"``.
    validation_fraction : float, default=0.2
        Probability with which each private row is held out for the private
        scores, independently of the others (public randomness, drawn before
        any row is read; rows marked by ``public_mask`` are all trained on).
        Independent draws keep the guarantee's neighbours within one part:
        an added or removed record changes the part it falls in only. The
        parts' sizes are public (``n_train_``, ``n_validation_``) and vary
        from fit to fit, the validation part around ``validation_fraction``
        of the private rows.
    n_runs : float or "auto", default="auto"
        Mean number of runs; "auto" is twice the number of candidates. More
        runs try more candidates (with the logarithmic distribution and six
        candidates, the best one is tried about 55% of the time at twice, 48%
        at once the number of candidates) but leave less budget to each run
        (the selection's cost grows like ``log(n_runs)``). A mean whose
        number of runs cannot be drawn from the accounted distribution in
        float64 (above about 5.7e5 with the logarithmic one) is refused
        before any row is read.
    runs_distribution : {"logarithmic", "geometric"} or float, default="logarithmic"
        Shape ``eta >= 0`` of the truncated negative binomial number of runs
        (0: logarithmic, 1: geometric). Smaller shapes cost less budget and
        try fewer candidates.
    score_budget_share : float in (0, 1], default=0.2
        The score's Gaussian gets this fraction of a run's training budget,
        in zero-concentrated DP terms (its noise multiplier is at least 0.1,
        the estimators' own floor, however large the budget).
    groups : array-like, default=None
        Declared group set for ``"accuracy-dp-gap"``; None uses the
        estimator's ``groups`` (a pipeline's: its final step's). Declared
        here, it is set on the candidates that leave theirs None.
    accountant : "rdp" or PrivacyLedger, default="rdp"
        A ledger records the whole search as one release.
    random_state : int or None, default=None
        None draws the split, the runs, the candidates and all noise from
        fresh OS entropy: use it for releases (a seed of a nested part of
        the estimator is then refused). A seed makes them reproducible
        (not a private release) and seeds every run, nested parts included.
    n_jobs : int or None, default=None
        Runs trained and scored in parallel (joblib; None is 1, -1 all
        processors). Every run's candidate, fit seed and score noise are
        drawn before the runs are dispatched, so a seeded search selects the
        same run with any ``n_jobs``. Costs no privacy; the running time
        still grows with the secret number of runs. Parallel runs need a
        process-based joblib backend (loky, the default): under the
        threading backend an ``n_jobs`` above 1 is refused (a
        ``ValueError``), since the runs record their warnings process-wide.

    Attributes
    ----------
    best_estimator_ : estimator
        The selected run's model (trained on the training split).
    best_params_ : dict
        Its grid point.
    best_score_ : float
        Its noisy validation score (part of the released run).
    run_epsilon_ : float
        Budget each candidate was trained with (at ``delta``); public.
    score_noise_multiplier_ : float
        Noise of the scores, in units of their sensitivity.
    n_candidates_ : int
        Number of grid points.
    n_train_, n_validation_ : int
        Sizes of the drawn training and validation parts (public: the
        draws' outcome). ``privacy_plan(..., n_train=n_train_)`` is the
        fitted record's plan.
    candidate_plans_ : dict of ndarray
        The candidates' planned training costs at ``run_epsilon_``, one entry
        per grid point, in the shape of ``GridSearchCV.cv_results_`` (see
        :meth:`candidate_plans`): public, no score in it.
    classes_ : ndarray
        Class labels of the selected model (classifiers only).
    epsilon_, delta_, dp_event_, adjacency_, privacy_record_, privacy_caveats_
        The guarantee of the whole search, under the candidates' adjacency.
    noise_multiplier_ : None
        No single multiplier describes the search's releases: the scores'
        is ``score_noise_multiplier_``, each run's training noise its
        candidate's (``best_estimator_.noise_multiplier_`` for the selected
        one).
    n_features_in_ : int
        Number of features of the selected model.

    See Also
    --------
    sklearn.model_selection.GridSearchCV : The non-private search.
    sklearn_dpfair.privacy.PrivacyLedger : Composes training fits only.

    Notes
    -----
    One run is: pick a candidate uniformly, train it with
    ``epsilon=run_epsilon_`` on the training split, release a Gaussian-noised
    count vector of its validation predictions. Its event is the sequential
    composition of the training event and the score's Gaussian (conservative:
    the splits are disjoint, and each row is held out by its own draw, so a
    record added or removed changes one split only). When the candidates'
    training events differ (different ``max_iter`` or ``batch_size``), a
    uniformly chosen candidate is a post-processing of running one candidate
    of each distinct cost, so the run's event composes every distinct
    training event. The search's
    event is ``RepeatAndSelectDpEvent(run, n_runs, eta)``, whose RDP is bounded
    by Theorem 2 of Papernot and Steinke; ``run_epsilon_`` is the largest
    per-run budget meeting ``epsilon``, found by bisection with the
    accountant. The guarantee requires that the number of runs and the
    scores of the runs not selected stay secret: none is stored, only the
    selected run's warnings are emitted (each distinct one once), the runs'
    ``verbose`` progress lines are off, but the search's running time grows
    with the number of runs. ``privacy_caveats_`` are likewise the selected
    run's (and the search's own): the other runs' would tell which
    candidates ran. A label or group set that a run would read from its
    training part (a caveat, and an event, that would depend on its data)
    is refused or filled in before any row is read (see ``param_grid``).

    Refit. There is no ``refit`` parameter: ``best_estimator_`` is the
    selected run's model, trained with ``run_epsilon_`` on the training
    split (every row ``public_mask`` marks public, and the private rows not
    drawn for validation). It is the released run, so it is inside
    ``dp_event_`` and costs nothing more. Refitting ``best_params_`` on all
    rows (``GridSearchCV``'s ``refit=True``) would be another release, not
    in ``dp_event_``: plan it with the estimator's ``privacy_plan`` and
    compose both in a :class:`~sklearn_dpfair.privacy.PrivacyLedger`.

    Replace-one candidates (output perturbation, the one-pass heavy-tail
    solvers, semi-DP regression's default, the locally private
    :class:`~sklearn_dpfair.linear_model.SemiLocalDPLinearRegression`) give a
    replace-one search: the theorem holds for any neighbouring relation, and
    the scores' sensitivities are those of replacing a row (``sqrt(5)`` for
    ``"accuracy-dp-gap"``). A local randomizer's message is accounted by its
    own Renyi divergence (dp-accounting reads randomized response under
    replace-one), and the search itself is central: its validation rows are
    scored by whoever runs it.

    Parallel runs (``n_jobs``) collect their warnings and the search emits
    the selected run's, each distinct one once, as sequential runs do. The
    runs record them with ``warnings.catch_warnings``, which is not
    thread-safe: ``n_jobs`` above 1 under joblib's threading backend is
    refused, and two searches should not run at once in threads of one
    process (two processes are fine).

    References
    ----------
    .. [1] N. Papernot and T. Steinke, "Hyperparameter Tuning with Renyi
       Differential Privacy", ICLR 2022.
    .. [2] J. Liu and K. Talwar, "Private Selection from Private Candidates",
       STOC 2019.

    Examples
    --------
    A classifier:

    >>> from sklearn.datasets import make_classification
    >>> from sklearn_dpfair import DPLogisticRegression
    >>> from sklearn_dpfair.model_selection import PrivateHyperparameterSearch
    >>> X, y = make_classification(n_samples=2000, random_state=0)
    >>> search = PrivateHyperparameterSearch(
    ...     DPLogisticRegression(classes=[0, 1], max_iter=5),
    ...     {"clip_norm": [0.5, 2.0]}, epsilon=2.0, random_state=0)
    >>> search = search.fit(X, y)
    >>> search.epsilon_ <= 2.0
    True
    >>> sorted(search.best_params_)
    ['clip_norm']

    A regressor, with public rows, scored by its error capped at a public
    bound:

    >>> import numpy as np
    >>> from sklearn_dpfair import SemiDPLinearRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((3000, 3))
    >>> y = X @ [1.0, -2.0, 0.5] + 0.5 * rng.standard_normal(3000)
    >>> search = PrivateHyperparameterSearch(
    ...     SemiDPLinearRegression(adjacency="add_remove", max_iter=5),
    ...     {"clip_norm": [0.5, 2.0]}, epsilon=2.0, score_bound=5.0,
    ...     random_state=0)
    >>> search.privacy_plan(3000, 3, n_public=300).epsilon <= 2.0
    True
    >>> search = search.fit(X, y, public_mask=np.arange(3000) < 300)
    >>> search.adjacency_, search.epsilon_ <= 2.0
    ('add_remove', True)
    >>> -5.0 <= search.best_score_ <= 0.0  # minus a noisy mean absolute error
    True
    """

    # The search reads sensitive_features for its fairness score, whether or
    # not the estimator takes it.
    __metadata_request__fit = {"sensitive_features": True}

    _parameter_constraints = {
        "estimator": [HasMethods(["fit", "predict"])],
        "param_grid": [dict, list],
        "epsilon": EPSILON_CONSTRAINT[:1],
        "delta": DELTA_CONSTRAINT,
        "scoring": [StrOptions(set(SCORINGS)), None],
        # Bools refused (True is no bound, share or number of runs).
        "score_bound": [Interval(Real, 0, None, closed="neither"), None],
        "gap_penalty": [Interval(Real, 0, None, closed="left")],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "n_runs": [
            Interval(Real, 1, None, closed="left"),
            StrOptions({"auto"}),
        ],
        "runs_distribution": [
            StrOptions(set(RUN_DISTRIBUTIONS)),
            Interval(Real, 0, None, closed="left"),
        ],
        "score_budget_share": [Interval(Real, 0, 1, closed="right")],
        "groups": ["array-like", None],
        "accountant": [StrOptions({"rdp"}), PrivacyLedger],
        "random_state": [SEED_CONSTRAINT, None],
        "n_jobs": [Integral, None],
    }

    def __init__(
        self,
        estimator,
        param_grid,
        *,
        epsilon=1.0,
        delta=1e-5,
        scoring=None,
        score_bound=None,
        gap_penalty=1.0,
        validation_fraction=0.2,
        n_runs="auto",
        runs_distribution="logarithmic",
        score_budget_share=0.2,
        groups=None,
        accountant="rdp",
        random_state=None,
        n_jobs=None,
    ):
        self.estimator = estimator
        self.param_grid = param_grid
        self.epsilon = epsilon
        self.delta = delta
        self.scoring = scoring
        self.score_bound = score_bound
        self.gap_penalty = gap_penalty
        self.validation_fraction = validation_fraction
        self.n_runs = n_runs
        self.runs_distribution = runs_distribution
        self.score_budget_share = score_budget_share
        self.groups = groups
        self.accountant = accountant
        self.random_state = random_state
        self.n_jobs = n_jobs

    # -- metadata routing -----------------------------------------------------

    def get_metadata_routing(self):
        """Route fit metadata (``sensitive_features``, ...) to the estimator.

        Returns
        -------
        routing : MetadataRouter
            The routing of ``fit`` to the estimator's ``fit``.
        """
        return (
            MetadataRouter(owner=self)
            .add_self_request(self)
            .add(
                estimator=self.estimator,
                method_mapping=MethodMapping().add(caller="fit", callee="fit"),
            )
        )

    # -- fit ------------------------------------------------------------------

    def _candidates(self):
        if isinstance(self.estimator, PrivateHyperparameterSearch):
            # Its plan would be made at the outer search's per-run budget,
            # but its own fit draws its training part's size at random and
            # spends its epsilon on a selection of its own: refused by name,
            # as a private pipeline refuses one as its last step.
            raise ValueError(
                "The estimator is a PrivateHyperparameterSearch, which a "
                "private search cannot tune: search once, over the union of "
                "the grids (a list of dicts), with one "
                "PrivateHyperparameterSearch."
            )
        grid = self.param_grid
        if isinstance(grid, dict) and not grid:
            raise ValueError("param_grid is empty: give at least one candidate.")
        try:
            candidates = list(ParameterGrid(grid))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"Invalid param_grid: {exc}") from exc
        if not candidates or candidates == [{}]:
            raise ValueError("param_grid is empty: give at least one candidate.")
        owned = sorted({k for c in candidates for k in c} & set(SEARCH_OWNED_PARAMS))
        if owned:
            raise ValueError(
                f"param_grid sets {owned}, which the search sets itself (the "
                "whole search spends epsilon; each run gets a calibrated share)."
            )
        return candidates

    def _canonical_fit_params(self, fit_params):
        """``fit_params`` with a pipeline's final-step keys as plain keywords.

        Without metadata routing a :class:`PrivatePipeline` gives its final
        step both ``sample_weight`` and ``clf__sample_weight`` (``clf`` its
        final step's name), and its other steps their ``step__param``. The
        search reads the plain keywords (its split keeps the ``public_mask``
        rows in training, its score reads ``sensitive_features``) and checks
        them on every row before the split: under the prefixed spelling they
        would reach the final step unread and be checked by its fit, on the
        training part only, so that whether a fit raises would depend on
        where one record fell. The keys are resolved by the pipeline's own
        routing, and the final step's are returned under their plain names
        (which the pipeline gives its final step alike), with the names they
        were passed under (for the messages).
        """
        if routing_enabled() or not isinstance(self.estimator, PrivatePipeline):
            return fit_params, {}
        names = [name for name, _ in self.estimator.steps]
        final = names[-1]
        plain = {}
        for key in fit_params:
            step, sep, param = key.partition("__")
            name = param if sep and step == final else key
            if not (sep and step in names[:-1]):
                if name in plain:
                    raise ValueError(
                        f"{plain[name]} and {key} both set the final step's "
                        f"{name} (the pipeline routes both to {final!r}): pass "
                        f"one, as {name}."
                    )
                plain[name] = key
        per_step = self.estimator._route(fit_params)
        canonical = dict(per_step[final])
        for name in names[:-1]:
            for param, value in per_step[name].items():
                canonical[f"{name}__{param}"] = value
        return canonical, {name: key for name, key in plain.items() if name != key}

    def _routed_fit_params(self, fit_params, received_as):
        """The estimator's fit parameters, the score's groups and the estimator's.

        The search reads ``sensitive_features`` itself (its fairness score),
        and passes it on to an estimator that takes it: the one that
        requests it (metadata routing), else one whose ``fit`` (its final
        step's, for a pipeline) names it. ``received_as``
        (:meth:`_metadata_key` of ``"sensitive_features"``) is the keyword
        the estimator receives them under. Returns the routed parameters,
        the sensitive features the score reads and those the estimator
        receives (None: none).
        """
        sensitive = fit_params.get("sensitive_features")
        if routing_enabled():
            routed = process_routing(self, "fit", **fit_params).estimator.fit
            received = None if received_as is None else fit_params.get(received_as)
            if sensitive is None:
                # Routed to the estimator under an alias only: they are the
                # groups its runs fit, so the search checks them (declared
                # group set, missing values) and scores with them, as it does
                # sensitive_features passed by name.
                sensitive = received
            return dict(routed), sensitive, received
        routed = dict(fit_params)
        if sensitive is not None and received_as is None:
            del routed["sensitive_features"]
        return routed, sensitive, routed.get("sensitive_features")

    def _metadata_key(self, name):
        """The keyword of a fit that reaches the estimator's fit as ``name``.

        Under metadata routing, the alias its fit (a private pipeline's
        final step's, which the pipeline reaches under its callers' names)
        requests ``name`` under (:func:`_requested_key`):
        ``set_fit_request(public_mask="pm")`` gives ``"pm"``, ``True`` gives
        ``"public_mask"``. Without routing, ``name`` (a pipeline's prefixed
        final-step keywords are read as the plain ones), and for
        ``sensitive_features`` only where that fit names it. None where the
        estimator is not given ``name``.
        """
        if not routing_enabled():
            takes = name != "sensitive_features" or _fit_takes(self.estimator, name)
            return name if takes else None
        return _requested_key(self.estimator, name)

    def _estimator_takes_sensitive(self):
        """Whether a fit passes ``sensitive_features`` on to the estimator."""
        return self._metadata_key("sensitive_features") is not None

    def _routed_weights(self, fit_params):
        """The sample weights a fit gives the estimator or its steps.

        Keyed by the keyword of ``fit_params`` each step receives its
        ``sample_weight`` under (:func:`_requested_key`, metadata routing
        on), else by ``sample_weight`` and ``step__sample_weight``.
        """
        if routing_enabled():
            keys = {_requested_key(leaf, "sample_weight") for leaf in _leaves(
                self.estimator
            )}
        else:
            keys = {k for k in fit_params if k.rpartition("__")[2] == "sample_weight"}
        return {
            key: fit_params[key]
            for key in sorted(keys - {None})
            if fit_params.get(key) is not None
        }

    def _group_set(self):
        """The declared group set: the search's, else the estimator's."""
        if self.groups is not None:
            return self.groups
        return _declared(self.estimator, "groups")

    def _candidate_groups(self, candidates, groups):
        """The distinct group sets the candidates fit with (None: undeclared).

        A grid point's own set, or ``groups`` (:meth:`_group_set`) where it
        leaves its own None, as :meth:`_selection_plan` fills them in.
        """
        return [
            groups if own is None else own
            for own in _candidate_sets(self.estimator, candidates, "groups")
        ]

    def _generators(self):
        """The search's generator and a seed source for the candidates."""
        if self.random_state is None:
            return np.random.default_rng(secrets.randbits(128)), None
        seeds = np.random.SeedSequence(int(self.random_state))
        own, children = seeds.spawn(2)
        return np.random.default_rng(own), children

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, **fit_params):
        """Run the private selection.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data (private). A sparse matrix where the estimator
            takes one; the candidates are planned with its layout (see
            ``privacy_plan``'s ``sparse``): a DataFrame whose columns are all
            pandas ``SparseDtype`` is planned as the sparse matrix the
            candidates' validation makes of it.
        y : array-like of shape (n_samples,)
            Labels (classifiers) or targets (regressors). A column vector
            is raveled with a ``DataConversionWarning``. A label outside the
            declared classes or a target that is not finite is refused, on
            every row, before any row is read for a release.
        **fit_params : dict
            Metadata routed to the estimator's ``fit`` (for instance
            ``sensitive_features`` or ``public_mask``, with metadata routing
            enabled and ``estimator.set_fit_request(...)``; without routing
            they are passed to the estimator's ``fit`` as they are).
            Array-like values, one per sample (a ValueError names one of
            another length), are split with the rows; rows marked by
            ``public_mask`` all go to the training split. A value routed
            under an alias (``set_fit_request(public_mask="pm")``, on a
            pipeline's step too) is read as the one passed by its name.
            ``sensitive_features`` may also be a dict of columns; a group
            outside the declared ones (or a missing one, where the
            estimator receives it) is refused on every row, and so is a
            ``sample_weight`` the candidates would refuse. Without routing,
            a private pipeline's final-step keywords may be prefixed
            (``clf__sample_weight``), and are read as the plain ones; its
            other steps' ``step__sample_weight`` are checked alike.

        Returns
        -------
        self : PrivateHyperparameterSearch
            The fitted search.
        """
        candidates = self._candidates()
        check_run_workers(self.n_jobs)
        for ledger in (self.accountant, getattr(self.estimator, "accountant", None)):
            if isinstance(ledger, PrivacyLedger) and ledger.kind != "rdp":
                raise ValueError(
                    "The search's event is interpreted by the RDP accountant "
                    "only: use PrivacyLedger(kind='rdp')."
                )
        if not hasattr(self.estimator, "privacy_plan"):
            # Failing before reading anything.
            plan_candidate(self.estimator, 1, 1, {}, delta=float(self.delta))
        task = self._task()
        classes = self._label_set(candidates) if task == "classification" else None
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y "
                "is None."
            )
        # The layout is public (the container's): the candidates are planned
        # with it; one that refuses sparse X says so before any row is read.
        # A DataFrame of sparse columns only is the sparse matrix every
        # candidate's validation makes of it, and is planned as one.
        sparse = is_sparse_layout(X)
        # The runs fit and score in this process: a Dask collection would be
        # gathered onto the driver.
        refuse_dask_input(type(self).__name__, X=X, y=y, **fit_params)
        # A DataFrame's columns (names and dtypes, no row) are public too: a
        # private pipeline's column selections are planned with them.
        schema = X.iloc[:0] if hasattr(X, "iloc") and hasattr(X, "columns") else None
        X, y = indexable(X, y)
        # One label or target per row: the private scores compare y with the
        # predictions elementwise, and a column vector would broadcast.
        y = _target_1d(y)
        fit_params, passed_as = self._canonical_fit_params(fit_params)
        received_as = self._metadata_key("sensitive_features")
        fit_params = _sensitive_as_frame(fit_params, received_as)
        routed, sensitive, received = self._routed_fit_params(
            fit_params, received_as
        )
        # The metadata the search reads itself are read under the keyword
        # that reaches the estimator's fit (an alias, under routing), not by
        # their names alone: a pipeline's routed parameters keep its
        # callers' aliases.
        if fit_params.get(self._metadata_key("silos")) is not None:
            raise ValueError("PrivateHyperparameterSearch does not run federated fits.")
        if len(np.shape(X)) != 2:
            # The plan reads the column count before any candidate validates
            # X: refused here with scikit-learn's words, the values not shown.
            raise ValueError(
                f"Expected 2D array, got {len(np.shape(X))}D array instead. "
                "Reshape your data either using array.reshape(-1, 1) if your "
                "data has a single feature or array.reshape(1, -1) if it "
                "contains a single sample."
            )
        for size, what in zip(np.shape(X), ("sample", "feature")):
            if size == 0:
                # Before the plan, which would name its own count instead.
                raise ValueError(
                    f"Found array with 0 {what}(s) (shape={tuple(np.shape(X))}) "
                    "while a minimum of 1 is required."
                )
        n_samples = num_samples(X)
        if num_samples(y) != n_samples:
            raise ValueError(
                f"X has {n_samples} rows but y has {num_samples(y)}."
            )
        # Before the split is drawn: a misaligned value would otherwise be
        # passed on unsplit, and fail on the training part's size or index
        # past its end. Lengths are public shapes.
        routed_as = dict(passed_as)
        if routing_enabled() and not getattr(self.estimator, "steps", None):
            # An estimator's routed parameters are keyed by its own names.
            aliases = {name: self._metadata_key(name) for name in routed}
            routed_as.update(
                {name: key for name, key in aliases.items() if key not in (None, name)}
            )
        check_sample_aligned(routed, n_samples, routed_as)
        check_sample_aligned(
            {"sensitive_features": sensitive}, n_samples, passed_as
        )
        public_as = self._metadata_key("public_mask")
        public = _public_rows(fit_params.get(public_as), n_samples, public_as)
        # Refuses a fraction that leaves a split empty at its expected size.
        self._split_sizes(n_samples, len(public))

        groups = self._group_set()
        scoring = self._scoring(task)
        if sensitive is not None and task == "classification":
            # The score's groups are the search's; each candidate that
            # receives sensitive_features fits with its own (a grid point's)
            # or, where it leaves them None, the search's.
            if received is None or scoring == "accuracy-dp-gap":
                _refuse_undeclared_groups([groups])
            if received is not None:
                _refuse_undeclared_groups(self._candidate_groups(candidates, groups))
        # The candidates see the groups only where the estimator receives
        # sensitive_features (the search may read it for its score alone).
        grouped = received is not None
        n_groups = len(groups) if grouped and groups is not None else 1
        if scoring == "accuracy-dp-gap":
            if sensitive is None:
                raise ValueError(
                    "scoring='accuracy-dp-gap' needs sensitive_features: route it "
                    "to the estimator (set_fit_request(sensitive_features=True))."
                )
            classes = self._gap_classes(candidates)

        # A fit parameter that a candidate's fit (or one of its steps') would
        # refuse fails only in the runs that draw that candidate, a draw
        # the selection keeps secret: every candidate is checked before the
        # split is drawn and any run starts.
        for params in candidates:
            _check_candidate_fit(self.estimator, params, routed)

        rng, seed_source = self._generators()
        # The split is public randomness, drawn before any row is read: each
        # private row is held out for validation independently, with
        # probability validation_fraction (public rows, few and most useful
        # to the semi-private estimators, are all trained on). Independent
        # draws make the parts' neighbouring datasets those of the whole: an
        # added or removed record is added to or removed from one part, the
        # others' rows unchanged. A split of fixed sizes would not: adding a
        # record to the validation part of a fixed size pushes one of its
        # rows into the training part (a replacement in each part, which
        # the add/remove events of the runs and scores do not account).
        val_idx, train_idx = draw_split(
            n_samples, public, float(self.validation_fraction), rng
        )
        n_val, n_train = len(val_idx), len(train_idx)
        if n_val < 1 or n_train < 1:
            # The draws and the public count decide it, not the rows.
            raise ValueError(
                f"The random split of validation_fraction={self.validation_fraction} "
                f"left an empty {'validation' if n_val < 1 else 'training'} part of "
                f"the {n_samples} rows; raise the number of rows or move "
                "validation_fraction away from 0 and 1."
            )

        # Plan every candidate and the selection before reading the data
        # (public inputs only: the drawn sizes are public).
        selection = self._selection_plan(
            candidates, n_train, int(np.shape(X)[1]),
            _counts(n_groups, classes, len(public)), groups,
            grouped=grouped, scoring=scoring, n_rows=n_samples,
            own_groups=True, sparse=sparse, schema=schema,
        )
        codes = self._check_values(
            X, y, task, scoring, sensitive, received,
            self._routed_weights(fit_params), groups, candidates, passed_as,
        )
        delta = float(self.delta)
        train_params = _split_params(routed, n_samples, train_idx)
        X_train, y_train = safe_indexing(X, train_idx), safe_indexing(y, train_idx)
        X_val = safe_indexing(X, val_idx)
        y_val = np.asarray(safe_indexing(y, val_idx))
        if codes is not None:
            codes = codes[val_idx]

        n_runs = sample_number_of_runs(selection.mean_runs, selection.shape, rng)
        runs = draw_runs(n_runs, len(candidates), rng, seed_source)
        score_fn = partial(
            noisy_score,
            y_val,
            scoring=scoring,
            noise_multiplier=selection.score_noise,
            group_codes=codes,
            n_groups=0 if groups is None else len(groups),
            # The positive label is classes_[-1], the largest declared one.
            positive_label=None if classes is None else np.unique(classes)[-1],
            gap_penalty=self.gap_penalty,
            adjacency=selection.adjacency,
            score_bound=self.score_bound,
        )

        # A run that raises after earlier runs released (a candidate whose
        # fit or predictions fail on its part of the rows) leaves the
        # search's ledger charged with the selection's planned event. The
        # runs may fit in joblib workers, whose releases this process does
        # not log: any error of the runs is taken to follow a release (the
        # candidates' input was checked on every row above).
        with charged_if_raised_after_releases(
            self, lambda: self._record(selection), assume_released=True
        ):
            score, c, est, run_warnings = best_of_runs(
                selection.estimators,
                selection.plans,
                runs,
                run_epsilon=selection.run_epsilon,
                delta=delta,
                train=(X_train, y_train, train_params),
                X_val=X_val,
                score=_ScoreWithRng(score_fn),
                n_jobs=self.n_jobs,
            )
        for category, message in run_warnings:
            # At the user's line, however deep the search's own frames are.
            warn_at_caller(message, category)
        caveats = list(est.privacy_caveats_)
        if self.random_state is not None:
            caveats.append("random_state set: the search's randomness is reproducible")
        record = self._record(selection, caveats=tuple(caveats))
        check_budget(record, float(self.epsilon), calibrated=True)
        # A refit replaces the previous fit whole: the attributes set only
        # for some fits (a classifier's classes, a DataFrame's columns) must
        # not outlive it. Cleared only now, once the fit has succeeded (and
        # PrivateEstimatorMixin gives a fit that raises its attributes back).
        for name in ("classes_", "feature_names_in_"):
            vars(self).pop(name, None)
        self.best_estimator_ = est
        self.best_params_ = dict(candidates[c])
        self.best_score_ = score
        self.run_epsilon_ = selection.run_epsilon
        self.score_noise_multiplier_ = selection.score_noise
        self.n_candidates_ = len(candidates)
        self.n_train_, self.n_validation_ = int(n_train), int(n_val)
        self.candidate_plans_ = _plan_table(candidates, selection, delta)
        if task == "classification":
            self.classes_ = est.classes_
        self.n_features_in_ = est.n_features_in_
        if hasattr(est, "feature_names_in_"):
            self.feature_names_in_ = est.feature_names_in_
        self._set_privacy_record(record)
        return self

    def _check_values(
        self, X, y, task, scoring, sensitive, received, weights, groups,
        candidates, passed_as,
    ):
        """Refuse, on every row, what a candidate or the score would refuse.

        The candidates validate the training part only and the score reads the
        validation part only: a label outside the declared classes, a target
        that is not finite, a value of X that is not finite (where the
        estimator refuses NaN), a group outside the declared ones, a negative
        weight or a zero weight (a training part of zero weights only) would
        make the fit raise or not as the random split falls, an
        exception that depends on where one private record went. Checked on
        all rows before any row is read for a release, against the label and
        group sets of every candidate (a grid may vary them: only the runs
        drawn would check theirs), the refusal is input validation (the same
        on every split and every draw of the runs). Returns the group codes
        of every row for ``"accuracy-dp-gap"`` (else None). ``received``:
        the sensitive features the estimator receives (None: none);
        ``weights``: :meth:`_routed_weights`; ``passed_as`` maps a key of
        ``weights`` to the name the user passed it under.
        """
        if isinstance(self.estimator, PrivatePipeline):
            # Each candidate pipeline's own check of the raw values (which
            # steps take a missing value, a string), on every row: made by
            # its fit on the training part only, it would refuse a value
            # there and fail in the predictions where the split put its row
            # in the validation part, after the runs before had fitted.
            for params in candidates or [{}]:
                _build_candidate(self.estimator, params)._refuse_raw_input(X)
        elif not getattr(self.estimator, "steps", None) and not (
            get_tags(self.estimator).input_tags.allow_nan
        ):
            # A NaN or an infinity was refused by a candidate's fit where the
            # split put it in the training part and by its predictions where
            # it put it in the validation part, after some runs had fitted.
            # (A pipeline's steps decide for themselves: an imputer first
            # takes NaN, and its tags do not say which columns it covers.)
            assert_all_finite(
                X, allow_nan=False, estimator_name=type(self.estimator).__name__,
                input_name="X",
            )
        # The candidates' own check of the declared label sets (a regressor's
        # targets: finite numbers).
        check_public_targets(
            y, task,
            _candidate_sets(self.estimator, candidates, "classes")
            if task == "classification" else (),
        )
        # The final estimator's weights, and a pipeline's steps'
        # (``step__sample_weight``, or the alias a step requests under
        # routing): each step checks its own on its training part.
        for key, value in weights.items():
            # The candidates' own check (sign, real numbers, not all zero).
            value = check_public_weights(value, X, name=passed_as.get(key, key))
            if not np.all(value > 0):
                # Not all zero on every row, a candidate's training part
                # still could be (every positive weight drawn into the
                # validation part): the fit would raise as the split falls,
                # with a probability that one record's weight moves by a
                # factor 1 / validation_fraction.
                raise ValueError(
                    f"{passed_as.get(key, key)} has zero entries, which a "
                    "private search refuses: whether a candidate's training "
                    "part holds a positive weight would depend on the random "
                    "split. Drop the rows of weight 0 (they contribute "
                    "nothing to a fit)."
                )
        if received is not None:
            # A missing group would fail in the training part only.
            check_declared_groups(
                received, num_samples(y),
                self._candidate_groups(candidates, groups),
                "the private candidates refuse",
            )
        if scoring != "accuracy-dp-gap":
            return None
        return encode_sensitive_features(
            sensitive, n_samples=num_samples(y), groups=groups
        ).codes

    def _task(self):
        """"classification" or "regression", from the estimator's tags."""
        if is_classifier(self.estimator):
            return "classification"
        if is_regressor(self.estimator):
            return "regression"
        raise ValueError(
            f"{type(self.estimator).__name__} is neither a classifier nor a "
            "regressor: the private scores compare predictions with y."
        )

    def _scoring(self, task):
        """The scoring of ``task``, checked against its public inputs."""
        scoring = self.scoring
        if scoring is None:
            scoring = "accuracy" if task == "classification" else (
                "neg_mean_absolute_error"
            )
        allowed = CLASSIFICATION_SCORINGS if task == "classification" else (
            REGRESSION_SCORINGS
        )
        if scoring not in allowed:
            raise ValueError(
                f"scoring={scoring!r} scores {'regressors' if task == 'classification' else 'classifiers'}; "
                f"{type(self.estimator).__name__} is a "
                f"{'classifier' if task == 'classification' else 'regressor'}: "
                f"use one of {', '.join(allowed)}."
            )
        if task == "classification" and self.score_bound is not None:
            # A classifier's score counts each validation row in [0, 1]:
            # its sensitivity is fixed, and a bound given for it would be
            # silently ignored.
            raise ValueError(
                "score_bound bounds a regressor's error; a classifier's score "
                "needs none (each validation row counts 0 or 1): drop "
                "score_bound."
            )
        if task == "regression" and self.score_bound is None:
            raise ValueError(
                "score_bound is required to score a regressor privately: the "
                "public largest error one validation row may count (in units "
                "of y for neg_mean_absolute_error, of y squared for "
                "neg_mean_squared_error), e.g. the width of the targets' "
                "known range. It is not read from the data."
            )
        return scoring

    def _label_set(self, candidates):
        """The public label set of the scores: its largest label is the positive one.

        The estimator's; where it leaves ``classes=None``, the one set that
        every ``param_grid`` point declares (points declaring different sets
        would each be scored against another positive label). Never read
        from the data: which labels the rows hold would be released, and
        whether a run fails would depend on one record's label.
        """
        declared = _declared_classes(self.estimator)
        if declared is not None:
            return declared
        sets = _candidate_sets(self.estimator, candidates, "classes")
        if any(labels is None for labels in sets):
            raise ValueError(
                "Declare the public label set (classes=[...] in the estimator "
                "or in every param_grid point): a private search does not "
                "read it from the data."
            )
        if len(sets) > 1:
            raise ValueError(
                "The param_grid points declare different label sets and the "
                "estimator none: declare classes=[...] in the estimator (its "
                "largest label is the scores' positive one)."
            )
        return sets[0]

    def _gap_classes(self, candidates):
        """The one binary label set that every candidate declares.

        ``"accuracy-dp-gap"`` counts the predictions of the positive label,
        the larger declared one: a grid whose candidates declare other label
        sets would score each against another label (or one it cannot
        predict), and the scores would not compare.
        """
        sets = _candidate_sets(self.estimator, candidates, "classes")
        if len(sets) != 1 or sets[0] is None or len(sets[0]) != 2:
            raise ValueError(
                "scoring='accuracy-dp-gap' needs a binary problem: every "
                "candidate must declare the same two classes (the gap counts "
                "predictions of the larger one)."
            )
        return sets[0]

    def _split_sizes(self, n_samples, n_public):
        """Expected sizes of the validation and training splits (public counts).

        Each of the ``n_samples - n_public`` private rows is held out with
        probability ``validation_fraction``; the public rows are trained on.
        """
        n_val = int(round(self.validation_fraction * (n_samples - n_public)))
        n_train = n_samples - n_val
        if n_val < 1 or n_train < 1:
            raise ValueError(
                f"validation_fraction={self.validation_fraction} leaves an empty "
                f"training or validation split of n_samples={n_samples} rows "
                f"({n_public} public, all trained on)."
            )
        return n_val, n_train

    def _selection_plan(
        self, candidates, n_train, n_features, counts, groups, *, grouped,
        scoring, n_rows, own_groups=False, sparse=False, schema=None,
    ):
        """The candidates' plans and the calibrated selection (public inputs only).

        ``own_groups``: plan each ``grouped`` candidate with the number of
        groups it declares (the search's ``groups`` where it leaves its own
        None), rather than ``counts["n_groups"]``. ``scoring`` and
        ``n_rows`` (a public bound on the validation rows): the score's
        mechanism, built here once, so that a ``score_bound`` it cannot
        scale is refused before any candidate is trained.

        Returns a :class:`_SelectionPlan`: the candidate estimators, their
        :class:`~._planning.CandidatePlan` s, the per-run budget, the
        selection's event and the scores' noise multiplier.
        """
        base = clone(self.estimator)
        classifier = is_classifier(base)
        delta = float(self.delta)
        estimators, plans = [], []
        for params in candidates:
            est = _build_candidate(base, params)
            key = _declared_key(est, "groups")
            if grouped and key is not None and est.get_params()[key] is None:
                # The search's groups fill a set the candidate leaves None, its
                # grid point's None included: a run would otherwise read the
                # group set from its private training part (and record
                # another event than the one planned here).
                est.set_params(**{key: groups})
            if classifier and _declared_classes(est) is None:
                # Likewise a label set read from the private training part:
                # which labels it holds would be released (classes_), and
                # whether the run fails would depend on one record's label.
                raise ValueError(
                    f"param_grid point {params} leaves the candidate without a "
                    "declared label set (classes=None): a private search does "
                    "not read it from the data. Declare classes=[...] in every "
                    "candidate."
                )
            if self.random_state is None:
                check_nested_seeds(est)
            estimators.append(est)
            est_counts = dict(counts)
            own = _declared(est, "groups") if grouped and own_groups else None
            if own is not None:
                # A candidate that declares its groups is fitted with them,
                # not with the search's (which only fill a set left None):
                # its plan counts the groups its fit encodes.
                est_counts["n_groups"] = len(own)
            declared = _declared_classes(est)
            if counts.get("n_classes") is not None and declared is not None:
                # Likewise a grid that sets classes: each its own label set.
                est_counts["n_classes"] = len(declared)
            plans.append(
                plan_candidate(
                    est, n_train, n_features, est_counts, delta=delta,
                    sparse=sparse, schema=schema,
                )
            )
        relations = sorted({plan.adjacency for plan in plans})
        if len(relations) > 1:
            raise ValueError(
                "The candidates are private under different neighbouring "
                f"relations ({', '.join(relations)}); one selection states one: "
                "keep the grid within one (for instance one solver)."
            )
        (adjacency,) = relations
        mean_runs = float(
            _AUTO_RUNS_PER_CANDIDATE * len(candidates)
            if self.n_runs == "auto"
            else self.n_runs
        )
        shape = float(
            RUN_DISTRIBUTIONS.get(self.runs_distribution, self.runs_distribution)
        )
        # The fit draws the number of runs with these parameters: one it
        # could not draw from the distribution accounted below is refused
        # now, before any row is read.
        check_number_of_runs(mean_runs, shape, names=("n_runs", "runs_distribution"))

        def score_noise(t):
            return _score_noise_multiplier(t, delta, self.score_budget_share)

        _check_score_share(float(self.epsilon), delta, self.score_budget_share)

        # Candidates with equal events at the target budget share their event
        # at every budget in practice (same schedule, same public inputs);
        # the composed run event is recomputed exactly below at the chosen
        # budget, from every candidate's own plan.
        signatures = {}
        for plan in plans:
            try:
                signature = repr(plan.event(float(self.epsilon), delta))
            except ValueError:
                # Unaffordable at the whole budget: kept apart, and the
                # calibration below says the budget is too small.
                signature = id(plan)
            signatures.setdefault(signature, plan)
        distinct = list(signatures.values())

        def run_event(t, plans=distinct):
            parts = []
            for plan in plans:
                event = plan.event(t, delta)
                if event not in parts:
                    parts.append(event)
            return composed_event([*parts, gaussian_event(score_noise(t))])

        def calibrate(run_event):
            return calibrate_selection(
                run_event,
                float(self.epsilon),
                delta,
                mean_runs,
                shape,
                hi=float(self.epsilon),
            )

        run_epsilon, event = calibrate(run_event)
        if run_event(run_epsilon, plans) != run_event(run_epsilon):
            # The grouping by signature missed a difference: calibrate on
            # every candidate's own event (exact, slower).
            run_epsilon, event = calibrate(lambda t: run_event(t, plans))
        # Each run builds this mechanism after its candidate has trained:
        # refused here, an extreme score_bound fails before any fit.
        score_mechanism(
            scoring, score_noise(run_epsilon), adjacency=adjacency,
            score_bound=self.score_bound, n_rows=n_rows,
        )
        return _SelectionPlan(
            estimators, plans, run_epsilon, event, score_noise(run_epsilon),
            mean_runs, shape, adjacency,
        )

    def _record(self, selection, caveats=()):
        """The search's :class:`~sklearn_dpfair.privacy.PrivacyRecord`."""
        return PrivacyRecord.from_event(
            selection.event,
            delta=float(self.delta),
            accountant="rdp",
            adjacency=selection.adjacency,
            mechanism=_MECHANISM,
            # The runs' training noise and the scores' differ: no single
            # multiplier (the scores' is score_noise_multiplier_).
            noise_multiplier=None,
            steps=None,
            caveats=tuple(caveats),
        )

    _plan_public_counts = ("n_groups", "n_public", "n_train")
    # The candidates are planned with X's layout, and private pipelines
    # with its columns (``feature_names``: names, or a frame's names and
    # dtypes, as ``PrivatePipeline.privacy_plan`` takes them).
    _plan_reads_layout = True
    _plan_reads_schema = True

    def _public_selection(
        self, n_samples, n_features, n_groups=None, n_public=0, n_train=None, *,
        sparse=False, schema=None,
    ):
        """The :class:`_SelectionPlan` of a fit on these public counts.

        ``n_train``: the training part's drawn size (``n_train_`` after a
        fit); None plans at its expected size.
        """
        candidates = self._candidates()
        task = self._task()
        classes = self._label_set(candidates) if task == "classification" else None
        scoring = self._scoring(task)
        if scoring == "accuracy-dp-gap":
            # Refused by the plan as by the fit, before a row is read.
            self._gap_classes(candidates)
        groups = self._group_set()
        # Given, the count is every candidate's; else as a fit given
        # sensitive_features: each candidate sees its declared groups where
        # it receives them.
        own_groups = n_groups is None
        if own_groups:
            sets = self._candidate_groups(candidates, groups)
            grouped = self._estimator_takes_sensitive() and any(
                own is not None for own in sets
            )
            if grouped:
                # The fit, given sensitive_features, refuses a candidate
                # left without a group set: so does its plan.
                _refuse_undeclared_groups(sets)
            n_groups = len(groups) if grouped and groups is not None else 1
        else:
            grouped = n_groups > 1
        _, expected = self._split_sizes(n_samples, n_public)
        if n_train is None:
            n_train = expected
        elif not n_public <= n_train < n_samples:
            raise ValueError(
                f"n_train={n_train} is not the size of a training part of "
                f"{n_samples} rows with {n_public} public (all trained on) and "
                "at least one held out."
            )
        return self._selection_plan(
            candidates, n_train, n_features, _counts(n_groups, classes, n_public),
            groups, grouped=grouped, scoring=scoring, n_rows=n_samples,
            own_groups=own_groups, sparse=sparse, schema=schema,
        )

    def _planned_record(
        self, n_samples, n_features, n_groups=None, n_public=0, n_train=None, *,
        sparse=False, schema=None,
    ):
        """The record of a search on ``n_samples`` rows (public inputs only).

        ``n_groups``: the declared groups routed to the fit, for every
        candidate (default: as a fit given ``sensitive_features``, each
        candidate's number of declared groups where the estimator receives
        it, i.e. requests it under metadata routing
        or its fit names it without, else 1); ``n_public``:
        the rows ``public_mask`` marks (all trained on); ``n_train``: the
        training part's size, which the fit draws (``n_train_``) before it
        reads a row: each private row is held out independently, so the
        size varies from fit to fit (None: its expected size, ``n_samples
        - round(validation_fraction * (n_samples - n_public))``; the
        selection is calibrated at that size, and the candidates' events
        (a sampling rate ``batch_size / n_train``) depend on it, so the
        per-run budget ``run_epsilon_`` and the search's epsilon move
        slightly with it, the latter within ``epsilon`` at every size);
        ``sparse``: whether X
        is a sparse matrix, or a DataFrame of sparse columns only (the
        candidates are planned with that layout);
        ``schema``: X's column names or empty frame (``feature_names``).
        """
        return self._record(
            self._public_selection(
                n_samples, n_features, n_groups, n_public, n_train,
                sparse=sparse, schema=schema,
            )
        )

    def candidate_plans(
        self, n_samples, n_features, *, sparse=False, feature_names=None,
        **public_counts,
    ):
        """The candidates' planned training costs, before any row is read.

        A table in the shape of ``GridSearchCV.cv_results_`` (a dict of
        arrays, one entry per grid point: ``pandas.DataFrame`` reads it)
        made from the parameters and public counts only, so it costs no
        privacy. After ``fit``, ``candidate_plans_`` is the same table for
        the data the search was fitted on.

        Parameters
        ----------
        n_samples, n_features : int
            Shape of the data the search will be fitted on.
        sparse : bool, default=False
            Whether that X is a scipy sparse matrix, or a DataFrame whose
            columns are all pandas ``SparseDtype`` (which the candidates'
            validation makes one), see ``privacy_plan``.
        feature_names : sequence of str, DataFrame or None, default=None
            That X's columns, where the estimator is a private pipeline
            selecting them by name or dtype (a frame with no row,
            ``X.iloc[:0]``, gives both; see
            :meth:`PrivatePipeline.privacy_plan
            <sklearn_dpfair.pipeline.PrivatePipeline.privacy_plan>`).
            ``privacy_plan`` takes it too.
        **public_counts : int
            ``n_groups`` (routed declared groups, for every candidate;
            default: each candidate's number of declared groups, the
            search's ``groups`` where it leaves its own None, where the
            estimator receives ``sensitive_features``, else 1), ``n_public`` (rows
            ``public_mask`` marks), ``n_train`` (the training part's size:
            ``n_train_`` of a fit, which draws it; default its expected
            size).

        Returns
        -------
        table : dict of ndarray
            ``params`` (dicts), one ``param_<name>`` column per searched
            parameter, ``epsilon`` (each candidate fit's own epsilon at
            ``delta`` when trained with the per-run budget), ``delta``,
            ``adjacency``, ``mechanism`` (the candidate's plan), and the
            search's ``run_epsilon`` and ``score_noise_multiplier``. The
            whole search's epsilon is ``privacy_plan(...).epsilon``.

        Examples
        --------
        >>> from sklearn_dpfair import DPLogisticRegression
        >>> from sklearn_dpfair.model_selection import PrivateHyperparameterSearch
        >>> search = PrivateHyperparameterSearch(
        ...     DPLogisticRegression(classes=[0, 1], batch_size="full"),
        ...     {"max_iter": [1, 3]}, epsilon=2.0)
        >>> table = search.candidate_plans(2000, 5)
        >>> table["param_max_iter"].tolist(), table["adjacency"].tolist()
        ([1, 3], ['add_remove', 'add_remove'])
        >>> bool((table["epsilon"] <= table["run_epsilon"] * (1 + 1e-9)).all())
        True
        """
        self._validate_params()
        sparse = check_public_layout(sparse)
        unknown = sorted(set(public_counts) - set(self._plan_public_counts))
        if unknown:
            raise TypeError(
                f"candidate_plans() got unexpected public count(s) {unknown}; "
                f"it accepts: {', '.join(self._plan_public_counts)}."
            )
        # Checked as privacy_plan checks them: int() read 399.9 rows as 399,
        # True as 1, and raised bare errors on NaN or inf.
        public_counts = {
            name: check_public_count(value, name, minimum=0)
            for name, value in public_counts.items()
        }
        selection = self._public_selection(
            check_public_count(n_samples, "n_samples"),
            check_public_count(n_features, "n_features"),
            sparse=bool(sparse), schema=feature_names, **public_counts,
        )
        return _plan_table(self._candidates(), selection, float(self.delta))

    def _accountant_kind(self):
        return "rdp"

    def _set_privacy_record(self, record):
        super()._set_privacy_record(record)
        inner = getattr(self.estimator, "accountant", None)
        if isinstance(inner, PrivacyLedger) and inner is not self.accountant:
            # The record as set (with the search's seed, which its runs'
            # noise derives from).
            recorded = self.privacy_record_
            self._record_in_ledger(inner, recorded, seed=recorded.seed)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # A classifier or regressor as the estimator it tunes is.
        inner = get_tags(self.estimator)
        tags.estimator_type = inner.estimator_type
        tags.classifier_tags = inner.classifier_tags
        tags.regressor_tags = inner.regressor_tags
        # Sparse X where the estimator it tunes takes it.
        tags.input_tags.sparse = inner.input_tags.sparse
        # The private scores compare predictions with y: fit refuses None.
        tags.target_tags.required = True
        return tags

    def score(self, X, y, sample_weight=None):
        """The selected model's ``score`` (accuracy, or R^2 for a regressor).

        Not private: computed without noise on the rows given (use public
        or test rows; each score of private rows is a release).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples.
        y : array-like of shape (n_samples,)
            True labels or targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights.

        Returns
        -------
        score : float
            ``best_estimator_.score(X, y)``.
        """
        check_is_fitted(self, "best_estimator_")
        kwargs = {} if sample_weight is None else {"sample_weight": sample_weight}
        return self.best_estimator_.score(X, y, **kwargs)

    # -- delegation -------------------------------------------------------------

    predict = _delegate_to_selected(
        "predict",
        "Predict with the selected model.",
        "y_pred : ndarray of shape (n_samples,)\n    Predicted labels.",
    )
    predict_proba = _delegate_to_selected(
        "predict_proba",
        "Class probabilities of the selected model.",
        "proba : ndarray of shape (n_samples, n_classes)\n    Probability of each class.",
    )
    predict_log_proba = _delegate_to_selected(
        "predict_log_proba",
        "Log of the class probabilities of the selected model.",
        "log_proba : ndarray of shape (n_samples, n_classes)\n"
        "    Log-probability of each class.",
    )
    decision_function = _delegate_to_selected(
        "decision_function",
        "Raw scores of the selected model.",
        "scores : ndarray\n    Decision function of ``best_estimator_``.",
    )


@dataclass(frozen=True)
class _SelectionPlan:
    """What a search fixes before it reads the data."""

    estimators: list
    plans: list
    run_epsilon: float
    event: object
    score_noise: float
    mean_runs: float
    shape: float
    adjacency: str


class _ScoreWithRng:
    """``score(y_pred, rng)``: the noisy score with a run's own generator.

    A class (not a closure) so that joblib's worker processes can receive it.
    """

    def __init__(self, score):
        self.score = score

    def __call__(self, y_pred, rng):
        return self.score(y_pred, rng=rng)


def _counts(n_groups, classes, n_public):
    """The public counts a candidate's plan may take."""
    return {
        "n_groups": n_groups,
        "n_classes": None if classes is None else len(classes),
        "n_public": n_public,
    }


def _public_rows(public_mask, n_samples, name="public_mask"):
    """Indices of the rows ``public_mask`` marks public (public input).

    ``name``: the keyword it was passed under, for the message.
    """
    if public_mask is None:
        return np.arange(0, dtype=np.intp)
    mask = np.asarray(public_mask)
    # The estimators' types of error (check_public_mask): a TypeError for
    # the dtype, a ValueError for the shape.
    if mask.dtype != bool:
        raise TypeError(
            f"{name} must be a boolean array (True for public rows); got dtype "
            f"{mask.dtype}. Convert it with np.asarray(mask, dtype=bool) if it "
            "holds 0/1 flags."
        )
    if mask.shape != (n_samples,):
        raise ValueError(
            f"{name} must be a boolean array of shape ({n_samples},), got "
            f"shape {mask.shape}."
        )
    return np.flatnonzero(mask)


def _plan_table(candidates, selection, delta):
    """The candidates' plans at the per-run budget, as a dict of arrays."""
    names = sorted({k for c in candidates for k in c})
    plans = [p.plan(selection.run_epsilon, delta) for p in selection.plans]
    table = {"params": _objects([dict(c) for c in candidates])}
    for name in names:
        table[f"param_{name}"] = _objects([c.get(name) for c in candidates])
    table["epsilon"] = np.array([p.epsilon for p in plans], dtype=float)
    table["delta"] = np.array([p.delta for p in plans], dtype=float)
    table["adjacency"] = np.array([p.adjacency for p in plans], dtype=object)
    table["mechanism"] = np.array([p.mechanism for p in plans], dtype=object)
    n = len(candidates)
    table["run_epsilon"] = np.full(n, selection.run_epsilon)
    table["score_noise_multiplier"] = np.full(n, selection.score_noise)
    return table


def _objects(values):
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _score_noise_multiplier(run_epsilon, delta, share):
    """Noise of the score: a Gaussian spending ``share`` of the run's zCDP budget.

    ``rho(t)`` is the zCDP parameter whose standard conversion gives
    ``(t, delta)``-DP, ``t = rho + 2 sqrt(rho log(1/delta))`` (Bun and Steinke
    2016, Prop. 1.3); the score's Gaussian is ``share * rho(t)``-zCDP, i.e. has
    noise multiplier ``1 / sqrt(2 share rho(t))``, floored at
    :data:`_MIN_SCORE_NOISE_MULTIPLIER`. This only parameterizes the
    noise: the search's epsilon is computed by the accountant from the event.

    Raises
    ------
    ValueError
        Naming ``score_budget_share``, where the noise would be too large
        for the accountant (above :data:`_MAX_SCORE_NOISE_MULTIPLIER`, or
        infinite where ``2 share rho`` underflows); a calibration counts
        such a ``run_epsilon`` as too small.
    """
    # float: a float32 share would make the product below float32, which
    # underflows to 0 from about 1e-45.
    share = float(share)
    rho = rho_for_epsilon_simple(run_epsilon, delta)
    scale = 2.0 * share * rho
    noise = 1.0 / math.sqrt(scale) if scale > 0 else math.inf
    if not noise <= _MAX_SCORE_NOISE_MULTIPLIER:
        raise ValueError(
            f"score_budget_share={share!r} leaves the private scores so little "
            f"of a per-run budget of epsilon={run_epsilon:g} that their noise "
            f"multiplier ({noise:g}) is above {_MAX_SCORE_NOISE_MULTIPLIER:g}, "
            "more than the accountant can read: raise score_budget_share."
        )
    return max(noise, _MIN_SCORE_NOISE_MULTIPLIER)


def _build_candidate(estimator, params):
    """The candidate of the grid point ``params``: ``estimator`` with it set.

    The point's values are cloned too, as scikit-learn's searches do: an
    estimator object of the grid (``{"clf": [model], "clf__alpha": [...]}``)
    would otherwise be shared by every candidate that sets it, each writing
    its nested values (and the search's groups) onto the user's object, the
    last candidate's winning for all.
    """
    return clone(estimator).set_params(**clone(params, safe=False))


def _check_candidate_fit(estimator, params, routed):
    """Refuse fit parameters ``routed`` that the candidate ``params`` refuses.

    Without metadata routing, the ``TypeError`` of a keyword its fit (or a
    pipeline step's) does not take (:func:`_check_fit_keywords`). Under
    routing, the search routes by the estimator's requests; a grid point
    that swaps in a step with other requests (or a step whose request is
    left unset) would make that candidate's own routing raise, in its runs
    only: its routing is run here, at every depth, and its error names the
    grid point.
    """
    candidate = _build_candidate(estimator, params)
    if not routing_enabled():
        _check_fit_keywords(candidate, routed)
        return
    if _nested_parts(candidate) is None:
        # A plain estimator's requests are the estimator's (clone keeps
        # them), which the search's own routing has checked.
        return
    try:
        _check_nested_routing(candidate, routed, type(candidate).__name__)
    except (TypeError, ValueError) as exc:
        error = TypeError if isinstance(exc, TypeError) else ValueError
        raise error(
            f"The candidate of param_grid point {params} refuses the fit "
            f"parameters {sorted(routed)} under metadata routing: {exc}"
        ) from exc


def _check_nested_routing(estimator, params, path):
    """Route ``params`` through the composite ``estimator``, as its fit does."""
    for name, part, part_params in _routed_parts(estimator, params, path):
        if part_params and _nested_parts(part) is not None:
            _check_nested_routing(part, part_params, f"{path}__{name}")


def _check_fit_keywords(estimator, params):
    """The ``TypeError`` of ``estimator.fit(X, y, **params)`` for a keyword it
    does not take (:func:`check_fit_keywords`); a private pipeline's routed to
    its steps (``step__param``, plain keywords to its final step) and checked
    by each step's fit, as the pipeline's own fit checks them."""
    steps = getattr(estimator, "steps", None)
    if not steps or not hasattr(estimator, "_route"):
        check_fit_keywords(estimator, params)
        return
    routed = estimator._route(params)
    for name, step in steps:
        if routed[name] and step is not None and not isinstance(step, str):
            _check_fit_keywords(step, routed[name])


def _check_score_share(epsilon, delta, share):
    """Refuse a ``share`` whose score noise no per-run budget can afford.

    The calibration counts a per-run budget whose score noise is unusable
    as too small, and would blame ``epsilon``: where the whole ``epsilon``
    gives a usable noise at a share of 1 but not at ``share``, the share is
    named instead (:func:`_score_noise_multiplier`'s error). Where even a
    share of 1 is unusable, the calibration's message (``epsilon`` too
    small) stands.
    """
    try:
        _score_noise_multiplier(epsilon, delta, share)
    except ValueError as exc:
        try:
            _score_noise_multiplier(epsilon, delta, 1.0)
        except ValueError:
            return
        raise exc


def _declared_key(estimator, name):
    """The parameter declaring ``name`` (``"classes"``, ``"groups"``): the
    estimator's own, or a pipeline's final step's (None: neither has one)."""
    params = estimator.get_params()
    if name in params:
        return name
    keys = [k for k in params if k.endswith(f"__{name}")]
    return keys[-1] if keys else None


def _declared(estimator, name):
    """The public set ``name`` declared in ``estimator`` (or its final step)."""
    key = _declared_key(estimator, name)
    return None if key is None else estimator.get_params()[key]


def _refuse_undeclared_groups(group_sets):
    """Refuse a group set left undeclared (None): never read from the data."""
    if any(groups is None for groups in group_sets):
        raise ValueError(
            "Declare the public group set (groups=[...] in the search, the "
            "estimator or every param_grid point): a private search does not "
            "read it from the data."
        )


def _candidate_sets(estimator, candidates, name):
    """The distinct public sets ``name`` declared across the candidates.

    Each candidate is ``estimator`` with its parameters set (a grid may set
    ``classes`` or ``groups``, or replace the final step); the base
    estimator's set when there are no candidates.
    """
    sets = []
    for params in candidates or [{}]:
        declared = _declared(_build_candidate(estimator, params), name)
        if not any(_same_set(declared, seen) for seen in sets):
            sets.append(declared)
    return sets


def _same_set(a, b):
    if a is None or b is None:
        return a is b
    return np.array_equal(np.asarray(a, dtype=object), np.asarray(b, dtype=object))


def _declared_classes(estimator):
    """The public label set declared in ``estimator`` (or its final step)."""
    return _declared(estimator, "classes")


def _fit_takes(estimator, name):
    """Whether ``estimator.fit`` (its final step's, for a pipeline) names ``name``."""
    steps = getattr(estimator, "steps", None)
    final = steps[-1][1] if steps else estimator
    return name in inspect.signature(final.fit).parameters


def _requested_key(estimator, name):
    """The routed keyword that reaches ``estimator``'s fit as ``name``.

    Metadata routing on: the alias that fit (a pipeline's final step's:
    the pipeline passes its callers' names on) requests ``name`` under,
    ``name`` itself for ``True``, None where it is not requested.
    """
    final = estimator
    while getattr(final, "steps", None):
        final = final.steps[-1][1]
    routing = get_routing_for_object(final)
    if isinstance(routing, MetadataRouter):
        # A router of its own: whether it consumes it by name.
        return name if routing.consumes("fit", [name]) else None
    alias = routing.fit.requests.get(name)
    if alias is True:
        return name
    if isinstance(alias, str) and alias not in (UNUSED, WARN):
        return alias
    return None


def _leaves(estimator):
    """The estimators a fit of ``estimator`` fits: a pipeline's steps', nested."""
    steps = getattr(estimator, "steps", None)
    if not steps:
        yield estimator
        return
    for _, step in steps:
        if step is not None and not isinstance(step, str):
            yield from _leaves(step)


def draw_split(n_samples, public, validation_fraction, rng):
    """Validation and training rows: each private row held out independently.

    Row ``i`` is held out when the ``i``-th uniform draw among the private
    rows is below ``validation_fraction``; the public rows are all trained
    on. With the same generator, the split of a dataset with a record
    appended is the split of the dataset, plus that record in one part:
    the parts' neighbours are the whole's.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.model_selection._search import draw_split
    >>> val, train = draw_split(6, np.array([0]), 0.5, np.random.default_rng(0))
    >>> sorted(np.concatenate([val, train]).tolist()), 0 in val
    ([0, 1, 2, 3, 4, 5], False)
    """
    private = np.setdiff1d(np.arange(n_samples), public, assume_unique=True)
    held_out = rng.random(len(private)) < validation_fraction
    train = np.sort(np.concatenate([private[~held_out], public]))
    return private[held_out], train


def _target_1d(y):
    """``y`` with one value per row (:func:`one_per_row`); 1-D ``y`` as it is.

    A 1-D ``y`` is returned unconverted (a Series stays one), as the
    candidates and the split read it.
    """
    if np.ndim(y) == 1:
        return y
    return one_per_row(y, "y", what="label or target")


def _sensitive_as_frame(fit_params, alias=None):
    """``fit_params`` with a dict of sensitive columns as a DataFrame.

    The estimators take a dict of columns; the search splits its rows, so it
    takes them as the frame the estimators make of it (each column read by
    position, as a Series is: never aligned on its index labels). ``alias``: the other
    keyword they may be routed to the estimator under (metadata routing).
    """
    out = dict(fit_params)
    for key in {"sensitive_features", alias} - {None}:
        sensitive = out.get(key)
        if not isinstance(sensitive, dict):
            continue
        try:
            out[key] = sensitive_columns_frame(sensitive)
            problem = None
        except (TypeError, ValueError) as exc:
            problem = str(exc)
        if problem is not None:
            # Raised outside the handler: the original, which may quote a
            # value, is not attached as __context__.
            raise ValueError(
                f"{key} as a dict must map column names to columns of one "
                f"value per sample: {problem}"
            )
    return out


def _rows(value, indices):
    """``value``'s rows at ``indices``, pandas' 1-d arrays included.

    scikit-learn's ``safe_indexing`` takes Series and DataFrames but not
    their ``.values`` when those are pandas extension arrays (a string
    column's ``ArrowStringArray``): read as numpy first.
    """
    if not hasattr(value, "iloc") and type(value).__module__.startswith("pandas"):
        value = np.asarray(value)
    return safe_indexing(value, indices)


def _split_params(params, n_samples, indices):
    """Index the sample-aligned values of ``params`` by ``indices``."""
    out = {}
    for key, value in params.items():
        if _is_array_like(value) and num_samples(value) == n_samples:
            out[key] = _rows(value, indices)
        else:
            out[key] = value
    return out
