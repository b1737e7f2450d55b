# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Hyperparameter search whose guarantee covers training, scoring and selection."""

import math
import secrets
from dataclasses import dataclass
import textwrap
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    MetaEstimatorMixin,
    clone,
    is_classifier,
)
from sklearn.model_selection import ParameterGrid
from sklearn.utils import indexable
from sklearn.utils.metadata_routing import (
    MetadataRouter,
    MethodMapping,
    process_routing,
)
from sklearn.utils.validation import check_is_fitted

from .._base import PrivateEstimatorMixin
from ..fairness import encode_sensitive_features
from ..privacy._accounting import composed_event, gaussian_event
from ..privacy._ledger import PrivacyLedger
from ..privacy._record import PrivacyRecord, check_budget
from ..privacy._selection import (
    RUN_DISTRIBUTIONS,
    calibrate_selection,
    sample_number_of_runs,
)
from ..privacy._zcdp import rho_for_epsilon_simple
from ..utils._sklearn_compat import (
    HasMethods,
    Interval,
    StrOptions,
    _fit_context,
    num_samples,
    routing_enabled,
    safe_indexing,
)
from ..utils._validation import warn_at_caller
from ._planning import SEARCH_OWNED_PARAMS, plan_candidate
from ._runs import best_of_runs
from ._scoring import SCORINGS, noisy_score

__all__ = ["PrivateHyperparameterSearch"]

# n_runs="auto": mean number of runs per candidate. On Adult (6 candidates,
# epsilon = 1) twice rather than once costs each run 8% of its budget
# (0.505 instead of 0.546) for a better chance of trying every candidate.
_AUTO_RUNS_PER_CANDIDATE = 2

_MECHANISM = (
    "private selection (Papernot & Steinke 2022): best of a random number of "
    "runs, each a candidate trained on the training split and scored with "
    "Gaussian noise on the validation split"
)


def _delegate_to_selected(method, summary, returns):
    """The search's ``method``: that of the selected model, once fitted."""

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
    return delegated


class PrivateHyperparameterSearch(
    ClassifierMixin, MetaEstimatorMixin, PrivateEstimatorMixin, BaseEstimator
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
    estimator : private classifier or PrivatePipeline
        The private classifier (or private pipeline ending in one) to tune:
        anything with a ``privacy_plan`` stated under add/remove adjacency
        and a declared ``classes``. Its ``epsilon``, ``delta``,
        ``accountant`` and ``random_state`` are set by the search; a
        pipeline's parameters are addressed as ``step__param``.
    param_grid : dict or list of dict
        Lists of values per parameter, as in ``GridSearchCV``; the candidates
        are its points. Parameters that change the privacy cost (``max_iter``,
        ``batch_size``) are allowed but make every run pay for all distinct
        costs (see Notes).
    epsilon : float, default=1.0
        Budget of the whole search.
    delta : float, default=1e-5
        Delta of the whole search.
    scoring : {"accuracy", "accuracy-dp-gap"}, default="accuracy"
        Private validation score: accuracy, or accuracy minus ``gap_penalty``
        times the demographic-parity gap between the declared groups (binary
        problems; needs ``sensitive_features``).
    gap_penalty : float, default=1.0
        Weight of the gap in ``"accuracy-dp-gap"``.
    validation_fraction : float, default=0.2
        Share of the rows held out (at random) for the private scores.
    n_runs : float or "auto", default="auto"
        Mean number of runs; "auto" is twice the number of candidates. More
        runs try more candidates (with the logarithmic distribution and six
        candidates, the best one is tried about 55% of the time at twice, 48%
        at once the number of candidates) but leave less budget to each run
        (the selection's cost grows like ``log(n_runs)``).
    runs_distribution : {"logarithmic", "geometric"} or float, default="logarithmic"
        Shape ``eta >= 0`` of the truncated negative binomial number of runs
        (0: logarithmic, 1: geometric). Smaller shapes cost less budget and
        try fewer candidates.
    score_budget_share : float, default=0.2
        The score's Gaussian gets this fraction of a run's training budget,
        in zero-concentrated DP terms.
    groups : array-like, default=None
        Declared group set for ``"accuracy-dp-gap"``; None uses the
        estimator's ``groups``.
    accountant : "rdp" or PrivacyLedger, default="rdp"
        A ledger records the whole search as one release.
    random_state : int or None, default=None
        None draws the split, the runs, the candidates and all noise from
        fresh OS entropy: use it for releases. A seed makes them reproducible
        (not a private release).

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
    classes_ : ndarray
        Class labels of the selected model.
    epsilon_, delta_, dp_event_, adjacency_, privacy_record_, privacy_caveats_
        The guarantee of the whole search (add/remove adjacency).
    noise_multiplier_ : float
        Same as ``score_noise_multiplier_``.
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
    the splits are disjoint). When the candidates' training events differ
    (different ``max_iter`` or ``batch_size``), a uniformly chosen candidate
    is a post-processing of running one candidate of each distinct cost, so
    the run's event composes every distinct training event. The search's
    event is ``RepeatAndSelectDpEvent(run, n_runs, eta)``, whose RDP is bounded
    by Theorem 2 of Papernot and Steinke; ``run_epsilon_`` is the largest
    per-run budget meeting ``epsilon``, found by bisection with the
    accountant. The guarantee requires that the number of runs and the
    scores of the runs not selected stay secret: none is stored, each
    distinct warning of the runs is emitted once, but the search's running
    time grows with the number of runs.

    Returning the selected run's model (trained on the training split) costs
    nothing more; refitting it on all rows would be another release.

    References
    ----------
    .. [1] N. Papernot and T. Steinke, "Hyperparameter Tuning with Renyi
       Differential Privacy", ICLR 2022.
    .. [2] J. Liu and K. Talwar, "Private Selection from Private Candidates",
       STOC 2019.

    Examples
    --------
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
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit", "predict"])],
        "param_grid": [dict, list],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "scoring": [StrOptions(set(SCORINGS))],
        "gap_penalty": [Interval(Real, 0, None, closed="left")],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "n_runs": [Interval(Real, 1, None, closed="left"), StrOptions({"auto"})],
        "runs_distribution": [
            StrOptions(set(RUN_DISTRIBUTIONS)),
            Interval(Real, 0, None, closed="left"),
        ],
        "score_budget_share": [Interval(Real, 0, None, closed="neither")],
        "groups": ["array-like", None],
        "accountant": [StrOptions({"rdp"}), PrivacyLedger],
        "random_state": [Interval(Integral, 0, None, closed="left"), None],
    }

    def __init__(
        self,
        estimator,
        param_grid,
        *,
        epsilon=1.0,
        delta=1e-5,
        scoring="accuracy",
        gap_penalty=1.0,
        validation_fraction=0.2,
        n_runs="auto",
        runs_distribution="logarithmic",
        score_budget_share=0.2,
        groups=None,
        accountant="rdp",
        random_state=None,
    ):
        self.estimator = estimator
        self.param_grid = param_grid
        self.epsilon = epsilon
        self.delta = delta
        self.scoring = scoring
        self.gap_penalty = gap_penalty
        self.validation_fraction = validation_fraction
        self.n_runs = n_runs
        self.runs_distribution = runs_distribution
        self.score_budget_share = score_budget_share
        self.groups = groups
        self.accountant = accountant
        self.random_state = random_state

    # -- metadata routing -----------------------------------------------------

    def get_metadata_routing(self):
        """Route fit metadata (``sensitive_features``, ...) to the estimator.

        Returns
        -------
        routing : MetadataRouter
            The routing of ``fit`` to the estimator's ``fit``.
        """
        return MetadataRouter(owner=self).add(
            estimator=self.estimator,
            method_mapping=MethodMapping().add(caller="fit", callee="fit"),
        )

    # -- fit ------------------------------------------------------------------

    def _candidates(self):
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

    def _routed_fit_params(self, fit_params):
        if routing_enabled():
            return dict(process_routing(self, "fit", **fit_params).estimator.fit)
        return dict(fit_params)

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
        X : array-like of shape (n_samples, n_features)
            Training data (private).
        y : array-like of shape (n_samples,)
            Labels.
        **fit_params : dict
            Metadata routed to the estimator's ``fit`` (for instance
            ``sensitive_features``, with metadata routing enabled and
            ``estimator.set_fit_request(sensitive_features=True)``).
            Sample-aligned values are split with the rows.

        Returns
        -------
        self : PrivateHyperparameterSearch
            The fitted search.
        """
        candidates = self._candidates()
        for ledger in (self.accountant, getattr(self.estimator, "accountant", None)):
            if isinstance(ledger, PrivacyLedger) and ledger.kind != "rdp":
                raise ValueError(
                    "The search's event is interpreted by the RDP accountant "
                    "only: use PrivacyLedger(kind='rdp')."
                )
        if not hasattr(self.estimator, "privacy_plan"):
            # Failing before reading anything.
            plan_candidate(self.estimator, 1, 1, {}, delta=float(self.delta))
        if not is_classifier(self.estimator):
            raise ValueError(
                f"The private scores ({', '.join(SCORINGS)}) are "
                f"classification scores; {type(self.estimator).__name__} is "
                "not a classifier."
            )
        classes = _declared_classes(self.estimator)
        if classes is None:
            raise ValueError(
                "Declare the public label set in the estimator (classes=[...]): "
                "a private search does not read it from the data."
            )
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y "
                "is None."
            )
        if sp.issparse(X):
            raise TypeError(
                "Sparse data was passed, but dense data is required: the private "
                "estimators fit dense arrays."
            )
        X, y = indexable(X, y)
        routed = self._routed_fit_params(fit_params)
        if routed.get("silos") is not None:
            raise ValueError("PrivateHyperparameterSearch does not run federated fits.")
        n_samples = num_samples(X)
        if num_samples(y) != n_samples:
            raise ValueError(
                f"X has {n_samples} rows but y has {num_samples(y)}."
            )
        n_val = int(round(self.validation_fraction * n_samples))
        n_train = n_samples - n_val
        if n_val < 1 or n_train < 1:
            raise ValueError(
                f"validation_fraction={self.validation_fraction} leaves an empty "
                f"training or validation split of n_samples={n_samples} rows."
            )

        sensitive = routed.get("sensitive_features")
        groups = self.groups if self.groups is not None else getattr(
            self.estimator, "groups", None
        )
        if sensitive is not None and groups is None:
            raise ValueError(
                "Declare the public group set (groups=[...] in the search or the "
                "estimator): a private search does not read it from the data."
            )
        n_groups = len(groups) if sensitive is not None else 1
        if self.scoring == "accuracy-dp-gap":
            if sensitive is None:
                raise ValueError(
                    "scoring='accuracy-dp-gap' needs sensitive_features: route it "
                    "to the estimator (set_fit_request(sensitive_features=True))."
                )
            if len(classes) != 2:
                raise ValueError("scoring='accuracy-dp-gap' needs a binary problem.")

        # Plan every candidate and the selection before reading the data
        # (public inputs only).
        selection = self._selection_plan(
            candidates, n_train, int(np.shape(X)[1]), n_groups, classes, groups,
            grouped=sensitive is not None,
        )
        estimators, plans = selection.estimators, selection.plans
        run_epsilon, event, z_score = (
            selection.run_epsilon, selection.event, selection.score_noise
        )
        delta = float(self.delta)

        rng, seed_source = self._generators()
        perm = rng.permutation(n_samples)
        val_idx, train_idx = np.sort(perm[:n_val]), np.sort(perm[n_val:])
        train_params = _split_params(routed, n_samples, train_idx)
        X_train, y_train = safe_indexing(X, train_idx), safe_indexing(y, train_idx)
        X_val = safe_indexing(X, val_idx)
        y_val = np.asarray(safe_indexing(y, val_idx))
        codes = None
        if self.scoring == "accuracy-dp-gap":
            codes = encode_sensitive_features(
                safe_indexing(sensitive, val_idx), n_samples=n_val, groups=groups
            ).codes

        n_runs = sample_number_of_runs(selection.mean_runs, selection.shape, rng)
        run_seeds = (
            [None] * n_runs
            if seed_source is None
            else [int(s.generate_state(1)[0]) for s in seed_source.spawn(n_runs)]
        )
        positive_label = np.asarray(classes)[-1]

        def score(y_pred):
            return noisy_score(
                y_val,
                y_pred,
                scoring=self.scoring,
                noise_multiplier=z_score,
                rng=rng,
                group_codes=codes,
                n_groups=0 if groups is None else len(groups),
                positive_label=positive_label,
                gap_penalty=self.gap_penalty,
            )

        score, c, est, run_warnings = best_of_runs(
            estimators,
            plans,
            n_runs=n_runs,
            run_epsilon=run_epsilon,
            delta=delta,
            run_seeds=run_seeds,
            rng=rng,
            train=(X_train, y_train, train_params),
            X_val=X_val,
            score=score,
        )
        for w in run_warnings:
            # At the user's line, however deep the search's own frames are.
            warn_at_caller(str(w.message), w.category)
        caveats = list(est.privacy_caveats_)
        if self.random_state is not None:
            caveats.append("random_state set: the search's randomness is reproducible")
        record = PrivacyRecord.from_event(
            event,
            delta=delta,
            accountant="rdp",
            adjacency="add_remove",
            mechanism=_MECHANISM,
            noise_multiplier=z_score,
            steps=None,
            caveats=tuple(caveats),
        )
        check_budget(record, float(self.epsilon), calibrated=True)
        self.best_estimator_ = est
        self.best_params_ = dict(candidates[c])
        self.best_score_ = score
        self.run_epsilon_ = run_epsilon
        self.score_noise_multiplier_ = z_score
        self.n_candidates_ = len(candidates)
        self.classes_ = est.classes_
        self.n_features_in_ = est.n_features_in_
        if hasattr(est, "feature_names_in_"):
            self.feature_names_in_ = est.feature_names_in_
        self._set_privacy_record(record)
        return self

    def _selection_plan(
        self, candidates, n_train, n_features, n_groups, classes, groups, *, grouped
    ):
        """The candidates' plans and the calibrated selection (public inputs only).

        Returns a :class:`_SelectionPlan`: the candidate estimators, their
        :class:`~._planning.CandidatePlan` s, the per-run budget, the
        selection's event and the scores' noise multiplier.
        """
        base = clone(self.estimator)
        if grouped and "groups" in base.get_params() and (
            base.get_params()["groups"] is None
        ):
            base.set_params(groups=groups)  # declared in the search
        delta = float(self.delta)
        counts = {"n_groups": n_groups, "n_classes": len(classes)}
        estimators, plans = [], []
        for params in candidates:
            est = clone(base).set_params(**params)
            estimators.append(est)
            plans.append(plan_candidate(est, n_train, n_features, counts, delta=delta))
        mean_runs = float(
            _AUTO_RUNS_PER_CANDIDATE * len(candidates)
            if self.n_runs == "auto"
            else self.n_runs
        )
        shape = float(
            RUN_DISTRIBUTIONS.get(self.runs_distribution, self.runs_distribution)
        )

        def score_noise(t):
            return _score_noise_multiplier(t, delta, self.score_budget_share)

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
        return _SelectionPlan(
            estimators, plans, run_epsilon, event, score_noise(run_epsilon),
            mean_runs, shape,
        )


    _plan_public_counts = ("n_groups",)

    def _planned_record(self, n_samples, n_features, n_groups=None):
        """The record of a search on ``n_samples`` rows (public inputs only).

        ``n_groups``: the declared groups routed to the fit (default: those
        declared when ``scoring="accuracy-dp-gap"``, else 1).
        """
        candidates = self._candidates()
        classes = _declared_classes(self.estimator)
        if classes is None:
            raise ValueError(
                "Declare the public label set in the estimator (classes=[...])."
            )
        groups = self.groups if self.groups is not None else getattr(
            self.estimator, "groups", None
        )
        if n_groups is None:
            grouped = self.scoring == "accuracy-dp-gap" and groups is not None
            n_groups = len(groups) if grouped else 1
        n_val = int(round(self.validation_fraction * n_samples))
        selection = self._selection_plan(
            candidates, n_samples - n_val, n_features, n_groups, classes, groups,
            grouped=n_groups > 1,
        )
        return PrivacyRecord.from_event(
            selection.event,
            delta=float(self.delta),
            accountant="rdp",
            adjacency="add_remove",
            mechanism=_MECHANISM,
            noise_multiplier=selection.score_noise,
        )

    def _accountant_kind(self):
        return "rdp"

    def _set_privacy_record(self, record):
        super()._set_privacy_record(record)
        inner = getattr(self.estimator, "accountant", None)
        if isinstance(inner, PrivacyLedger) and inner is not self.accountant:
            self._record_in_ledger(inner, record)

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


def _score_noise_multiplier(run_epsilon, delta, share):
    """Noise of the score: a Gaussian spending ``share`` of the run's zCDP budget.

    ``rho(t)`` is the zCDP parameter whose standard conversion gives
    ``(t, delta)``-DP, ``t = rho + 2 sqrt(rho log(1/delta))`` (Bun and Steinke
    2016, Prop. 1.3); the score's Gaussian is ``share * rho(t)``-zCDP, i.e. has
    noise multiplier ``1 / sqrt(2 share rho(t))``. This only parameterizes the
    noise: the search's epsilon is computed by the accountant from the event.
    """
    rho = rho_for_epsilon_simple(run_epsilon, delta)
    return 1.0 / math.sqrt(2.0 * share * rho)


def _declared_classes(estimator):
    """The public label set declared in ``estimator`` (or its final step)."""
    params = estimator.get_params()
    if "classes" in params:
        return params["classes"]
    # A pipeline: the final step's ``classes``.
    declared = [v for k, v in params.items() if k.endswith("__classes")]
    return declared[-1] if declared else None


def _split_params(params, n_samples, indices):
    """Index the sample-aligned values of ``params`` by ``indices``."""
    out = {}
    for key, value in params.items():
        if value is not None and hasattr(value, "__len__") and not isinstance(
            value, (str, dict)
        ) and num_samples(value) == n_samples:
            out[key] = safe_indexing(value, indices)
        else:
            out[key] = value
    return out
