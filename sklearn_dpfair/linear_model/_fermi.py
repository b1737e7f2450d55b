# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""FERMI: fair (ERMI-regularized) logistic regression, with and without DP."""

import math
from dataclasses import replace
from numbers import Integral, Real

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from .._base import (
    CLIP_NORM_CONSTRAINT,
    PRIVACY_PARAMETER_CONSTRAINTS,
    LinearClassifierMixin,
    PrivateEstimatorMixin,
    restored_on_failure,
)
from .._loss import BinaryLogisticLoss, SoftmaxLoss
from .._solvers._distributed import (
    distribute_training_data,
    is_dask_collection,
    partition_columns_off_unit_scale,
    refuse_dask_beside_in_memory_x,
    refuse_dask_input,
    set_dask_input_features,
)
from .._solvers._feature_scaling import (
    plan_feature_scaling,
    public_feature_scaling,
    public_scaling_plan,
    warn_unscaled_columns,
)
from .._solvers._intercept_only import small_budget_message
from .._solvers._non_private import non_private_record
from .._solvers._progress import progress_printer
from .._solvers.fermi._dask import fit_fermi_dask
from .._solvers.fermi._fit import FairPrivacy, FERMIParams, fit_fermi
from .._solvers.fermi._plan import (
    RECORDS_PER_PARAMETER,
    fermi_plan,
    fermi_plan_key,
)
from .._solvers.fermi._privacy import FERMIMechanisms
from ..exceptions import PrivacyLeakWarning
from ..fairness import encode_sensitive_features, make_constraint
from ..fairness._constraints import advantaged_class_index
from ..fairness._ermi import code_dtype, compact_codes
from ..fairness._marginals import check_public_marginals
from ..fairness._sensitive import check_declared_groups
from ..neural._network import ACTIVATIONS, check_hidden_layer_sizes, network_scores
from ..privacy import PrivacyBudget, PrivacyRecord, check_noise_generator
from ..privacy._record import check_budget
from ..privacy._zcdp import ZCDP_ACCOUNTANT
from ..utils._array_api import (
    DEVICE_OPTIONS,
    array_namespace,
    detached_input,
    input_float_dtypes,
    resolve_backend,
    to_numpy,
)
from ..utils._sklearn_compat import Interval, StrOptions, _fit_context
from ..utils._validation import (
    check_declared_classes,
    check_delta_for_n,
    check_public_weights,
    check_sparse_sums_finite,
    planned_class_count,
    resolve_classification_targets,
    validate_data,
    warn_at_caller,
)

__all__ = ["DPFERMIClassifier", "FERMIClassifier"]

# Messages are constants so that tests match them exactly.
_NO_SENSITIVE = (
    "sensitive_features is None: all samples form one group, so there is no "
    "fairness term and {name} fits plain (L2-regularized) logistic regression."
)
_ONE_GROUP = (
    "sensitive_features holds a single group: there is no fairness "
    "term and {name} fits plain (L2-regularized) logistic regression."
)
_GROUPS_INFERRED = (
    "groups was not given, so the group set was read from the private "
    "sensitive_features and is not covered by the differential privacy "
    "guarantee. Pass groups=[...] to declare it."
)
_MISSING_UNDER_DP = (
    "sensitive_features has missing values (None/NaN). DPFERMIClassifier "
    "has no private treatment of missing sensitive values: drop or impute "
    "those rows (FERMIClassifier handles them by reweighting)."
)
_DASK_OPTIONS = (
    "DPFERMIClassifier fits a Dask collection by noisy SGDA on its workers; "
    "{what} reads the whole training set at once and is not available on "
    "Dask input."
)
_CURVES_RECORDED = (
    "record_training_loss=True computes loss_curve_ and fairness_curve_ on the "
    "private training data; they are not covered by the differential privacy "
    "guarantee."
)

# Parameters both estimators pass to the solver under their own name.
# How the record of DP-FERMI's non-private limit names what ran.
_FERMI_LIMIT_SOLVER = (
    "the noiseless SGDA steps as a warm start (or 0, where its objective is "
    "lower), then L-BFGS-B on the full-batch objective with the dual at its "
    "closed-form maximiser, in standardized columns"
)
# ... under disparity_bound (FERMIClassifier's weight path).
_FERMI_LIMIT_PATH_SOLVER = (
    "FERMIClassifier's weight path: full-batch L-BFGS-B solves of the "
    "objective (the dual at its closed-form maximiser) from 0 at weights "
    "doubling up to max_fairness_weight, then bisected, the smallest meeting "
    "the bound on the exact training disparity"
)
# ... and with hidden layers (both phases on columns mapped by exact moments).
_FERMI_LIMIT_NETWORK_SOLVER = (
    "the noiseless SGDA steps as a warm start (or the initialization, where "
    "its objective is lower), then L-BFGS-B on the full-batch objective over "
    "the network's weights and biases with the dual at its closed-form "
    "maximiser, both on the columns centred by their exact means and "
    "divided by their standard deviations where those exceed 1 (nothing is "
    "released; the L2 term and the released first layer in the user's units)"
)

_SOLVER_PARAMS = (
    "fairness_weight",
    "disparity_bound",
    "max_fairness_weight",
    "min_group_size",
    "clip_norm",
    "dual_clip_norm",
    "batch_size",
    "learning_rate",
    "dual_learning_rate",
    "alpha",
    "fit_intercept",
    "dual_projection",
    "min_group_frequency",
    "return_iterate",
    "activation",
)


#: The most SGDA epochs (``max_iter``) a FERMI fit takes. Each epoch is at
#: least one Python-level SGDA step (about a millisecond on a 20-row fit),
#: and its end is kept in a set of step indices: 10**7 epochs already run
#: for hours, and a count beyond numpy's array sizes (10**30) would fail
#: in the solver with a message that names no parameter.
MAX_EPOCHS = 10**7


def _declared(multiplier):
    """A noise multiplier parameter: None for "auto", else its float."""
    return None if multiplier == "auto" else float(multiplier)


_FERMI_CONSTRAINTS = {
    "constraint": [
        StrOptions({"demographic_parity", "equalized_odds", "equal_opportunity"})
    ],
    "fairness_weight": [Interval(Real, 0, None, closed="left")],
    "disparity_bound": [Interval(Real, 0, 1, closed="left"), None],
    "max_fairness_weight": [Interval(Real, 0, None, closed="left")],
    "min_group_size": [Interval(Integral, 0, None, closed="left")],
    "opportunity_class": "no_validation",
    "eo_weighting": [StrOptions({"label_prior", "uniform"})],
    "alpha": [Interval(Real, 0, None, closed="left")],
    "fit_intercept": ["boolean"],
    "batch_size": [Interval(Integral, 1, None, closed="left"), StrOptions({"full"})],
    "max_iter": [Interval(Integral, 1, MAX_EPOCHS, closed="both")],
    "learning_rate": [Interval(Real, 0, None, closed="neither")],
    "dual_learning_rate": [
        Interval(Real, 0, None, closed="neither"),
        StrOptions({"auto"}),
    ],
    "dual_projection": [StrOptions({"box"}), None],
    "min_group_frequency": [Interval(Real, 0, 1, closed="neither")],
    "clip_norm": [CLIP_NORM_CONSTRAINT, None],
    "dual_clip_norm": [Interval(Real, 0, None, closed="neither"), None],
    "return_iterate": [StrOptions({"last", "average"})],
    "random_state": PRIVACY_PARAMETER_CONSTRAINTS["random_state"],
    "device": [StrOptions(set(DEVICE_OPTIONS))],
    "verbose": ["verbose"],
    "hidden_layer_sizes": ["array-like", Interval(Integral, 1, None, closed="left")],
    "activation": [StrOptions(set(ACTIVATIONS))],
}

_NETWORK_SPARSE = (
    "{name} with hidden_layer_sizes={hidden!r} needs a dense X: the network "
    "is not fitted on sparse input (its first layer would densify it). Pass "
    "X.toarray(), or hidden_layer_sizes=() for the linear model, which takes "
    "sparse X."
)
_NETWORK_DASK = (
    "DPFERMIClassifier fits a Dask collection with the linear model only; "
    "hidden_layer_sizes={hidden!r} is not available on Dask input. Pass "
    "hidden_layer_sizes=(), or an in-memory X."
)


class _BaseFERMI(LinearClassifierMixin, BaseEstimator):
    """Shared fit of the two FERMI estimators; subclasses supply the privacy hooks."""

    _estimator_name = "FERMIClassifier"

    # Restored on failure: FERMIClassifier is not private, so this is not
    # given by PrivateEstimatorMixin (which DPFERMIClassifier adds).
    @restored_on_failure
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None, *, sensitive_features=None):
        """Fit the ERMI-regularized model by stochastic gradient descent-ascent.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data (sensitive features need not be among the
            columns), dense or sparse (CSR/CSC: never densified; the
            full-batch phase and predictions use sparse products too).
            float32 stays float32 in the solver and in ``coef_``.
            ``DPFERMIClassifier`` also takes a Dask array or DataFrame (with
            a running ``dask.distributed`` client; ``y``, ``sample_weight``
            and ``sensitive_features`` may then be Dask collections too):
            the rows stay on the workers (:ref:`User Guide <dask_central>`).
            ``FERMIClassifier`` refuses Dask input with a ``TypeError``.
        y : array-like of shape (n_samples,)
            Target labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Public non-negative weights, used as given under DP (rescaled to
            mean 1 without privacy). Each record's whole term (loss and
            fairness penalty) is multiplied by its weight *before* it is
            clipped, so under DP one record moves a noisy sum by at most the
            clip norm whatever its weight. Weights of 1 give exactly the
            unweighted fit. Without privacy the
            group marginals are weighted (``min_group_size`` counts the rows
            of positive weight); DP-FERMI's private histogram counts
            records unweighted. Not combined with ``disparity_bound``.
        sensitive_features : array-like of shape (n_samples,) or \
                (n_samples, n_columns), default=None
            Group membership (fairlearn style): a list, array, Series or
            DataFrame; several columns define intersectional groups. ``None``
            means a single group (no fairness term, with a warning). Routable
            with ``set_fit_request(sensitive_features=True)``.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        self._check_params()
        hidden = self._hidden_layer_sizes()
        if any(
            is_dask_collection(a) for a in (X, y, sample_weight, sensitive_features)
        ):
            return self._fit_dask(X, y, sample_weight, sensitive_features)
        if hidden and sp.issparse(X):
            # Refused from the layout alone, before any value is read.
            raise TypeError(
                _NETWORK_SPARSE.format(
                    name=type(self).__name__, hidden=self.hidden_layer_sizes
                )
            )
        # Sparse X runs on the host (resolve_backend refuses "cuda" for it).
        backend = resolve_backend(X, self.device)
        # CSC becomes CSR once (at most 2x the sparse storage), and an
        # F-ordered array (as DataFrames give) one C-ordered copy: the solver
        # gathers batch rows.
        # Detached before validation (see detached_input): no autograd graph
        # of the training rows, and no torch warning from validate_data's copy.
        X, y = detached_input(X), detached_input(y)
        X, y = validate_data(
            self,
            X,
            y,
            dtype=backend.input_float_dtypes,
            accept_sparse="csr",
            order="C",
        )
        y = to_numpy(y)
        check_sparse_sums_finite(X)
        weights = check_public_weights(sample_weight, X)
        # Labels and groups are encoded on the host; only X is large.
        classes, y_encoded, caveats = self._resolve_classes(y)
        n_samples = X.shape[0]
        codes, group_labels, caveats = self._encode_groups(
            sensitive_features, n_samples, caveats
        )
        # One small code a row: labels and groups are held for the whole fit.
        codes = codes.astype(code_dtype(len(group_labels)), copy=False)
        constraint = make_constraint(
            self.constraint,
            class_index=self._opportunity_index(classes),
            weighting=self.eo_weighting,
        )
        privacy, record_curves, caveats = self._privacy(
            n_samples, caveats, n_features=X.shape[1], sparse=sp.issparse(X)
        )
        params = self._fermi_params(constraint, record_curves)
        plan = self._fermi_plan(
            privacy, params, n_samples, X.shape[1], len(group_labels), classes.size
        )
        if privacy is not None:
            # A ledger that cannot record the planned event refuses now,
            # before the first release, rather than after the whole fit.
            self._check_ledger_accepts(plan.event)
        if privacy is not None and plan.fallback is None:
            # A network trained without noise is preconditioned as FERMI's is.
            preconditioned = (
                bool(params.hidden_layer_sizes)
                and privacy.budget.noise_multiplier == 0
            )
            warn_unscaled_columns(
                X,
                self,
                privacy.budget.is_private and not preconditioned,
                scaling=privacy.scaling,
            )
        result = fit_fermi(
            X,
            y_encoded,
            codes,
            self._group_names(group_labels),
            plan,
            params,
            rng=check_noise_generator(self.random_state),
            privacy=privacy,
            backend=backend,
            sample_weight=weights,
            progress=progress_printer(self.verbose, type(self).__name__, "epoch"),
        )

        return self._set_fitted(
            backend.input_xp, X.dtype, classes, group_labels, result, record_curves
        )

    def _fermi_params(self, constraint, record_curves):
        return FERMIParams(
            constraint=constraint,
            epochs=self._epochs(),
            record_curves=record_curves,
            hidden_layer_sizes=self._hidden_layer_sizes(),
            **{name: getattr(self, name) for name in _SOLVER_PARAMS},
            **self._solver_options(),
        )

    @staticmethod
    def _fermi_plan(privacy, params, n_samples, n_features, n_groups, n_classes):
        """The releases of a fit, from public inputs only (before any row is read).

        The one place a fit and :meth:`privacy_plan` get their plan from
        (:func:`~sklearn_dpfair._solvers.fermi._plan.fermi_plan`); the
        solver runs it and refuses data of another shape.
        """
        plan = fermi_plan(
            privacy,
            params,
            n_samples=n_samples,
            n_groups=n_groups,
            n_features=n_features,
            n_classes=n_classes,
        )
        if plan.fallback is None:
            # The mechanisms the fit will build from the plan's noise and the
            # declared clip norms, built here from those public values: a
            # noise scale that over- or underflows float64 is refused by
            # privacy_plan and fit alike, before any release.
            FERMIMechanisms.planned(
                plan.noise, params.clip_norm, params.dual_clip_norm, plan.n_candidates
            )
        return plan

    def _fit_dask(self, X, y, sample_weight, sensitive_features):
        refuse_dask_input(
            type(self).__name__,
            X=X,
            y=y,
            sample_weight=sample_weight,
            sensitive_features=sensitive_features,
        )

    def _set_fitted(self, xp, dtype, classes, group_labels, result, record_curves):
        self.classes_ = classes
        # One model's attributes: a refit drops the other model's.
        for name in ("coef_", "intercept_", "coefs_", "intercepts_", "n_layers_",
                     "out_activation_"):
            self.__dict__.pop(name, None)
        if result.coefs is not None:
            self.coefs_ = [xp.astype(W, dtype, copy=False) for W in result.coefs]
            self.intercepts_ = [
                xp.astype(b, dtype, copy=False) for b in result.intercepts
            ]
            self.n_layers_ = len(self.coefs_) + 1
            self.out_activation_ = "logistic" if classes.size == 2 else "softmax"
        else:
            self.coef_ = xp.astype(result.coef, dtype, copy=False)
            self.intercept_ = xp.astype(result.intercept, dtype, copy=False)
        self.dual_coef_ = result.dual
        self.groups_ = group_labels
        self.group_marginals_ = result.group_marginals
        # Epochs of the SGDA steps that ran (none on an exact weight path,
        # whose t_ may count L-BFGS iterations, or an intercept-only fallback).
        ran_sgda = result.n_steps and not result.exact_path
        self.n_iter_ = self._epochs() if ran_sgda else 0
        self.t_ = result.n_steps
        self.loss_curve_ = result.loss_curve if record_curves else None
        self.fairness_curve_ = result.fairness_curve if record_curves else None
        self.fairness_weight_ = result.fairness_weight
        self.learning_rate_, self.dual_learning_rate_ = result.step_sizes
        self.weight_path_ = result.path if self.disparity_bound is not None else None
        self.bound_met_ = result.bound_met
        self._set_result_privacy(result)
        self._set_result_diagnostics(result)
        return self

    def _hidden_layer_sizes(self):
        """``hidden_layer_sizes`` as a tuple of positive ints (``()``: linear)."""
        return check_hidden_layer_sizes(self.hidden_layer_sizes)

    def decision_function(self, X):
        """Raw scores: logits of ``classes_[1]`` (binary) or of each class.

        The linear model's ``X coef_.T + intercept_``, or with hidden layers
        the output of the network ``coefs_``, ``intercepts_`` (dense ``X``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples to score (sparse only for the linear model).

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            Finite for finite ``X`` (saturated at the largest float).
        """
        check_is_fitted(self)
        if not hasattr(self, "coefs_"):
            return super().decision_function(X)
        if sp.issparse(X):
            raise TypeError(
                _NETWORK_SPARSE.format(
                    name=type(self).__name__, hidden=self.hidden_layer_sizes
                )
            )
        X = detached_input(X)
        X = validate_data(self, X, reset=False, dtype=input_float_dtypes(X))
        xp = array_namespace(X)
        scores = network_scores(X, self.coefs_, self.intercepts_, self.activation)
        return xp.reshape(scores, (-1,)) if scores.shape[1] == 1 else scores

    # -- hooks (non-private defaults) -------------------------------------
    def _check_params(self):
        pass

    def _epochs(self):
        """Number of SGDA epochs (the resolved ``max_iter``)."""
        return int(self.max_iter)

    def _resolve_classes(self, y):
        # Codes by chunks (compact_codes): np.unique's inverse would form
        # several n-long intp arrays.
        check_classification_targets(y)
        classes = np.unique(y)
        if classes.size < 2:
            raise ValueError(
                f"y contains only one class ({classes[0]!r}); a classifier needs "
                "at least two."
            )
        return classes, compact_codes(classes, y), []

    def _encode_groups(self, sensitive_features, n_samples, caveats):
        name = type(self).__name__
        if sensitive_features is None:
            warn_at_caller(_NO_SENSITIVE.format(name=name), UserWarning)
            labels = np.array([None], dtype=object)
            return np.zeros(n_samples, dtype=np.intp), labels, caveats
        encoding = encode_sensitive_features(
            sensitive_features, n_samples=n_samples, groups=self._declared_groups()
        )
        if encoding.n_groups == 0:
            raise ValueError("Every value of sensitive_features is missing (None/NaN).")
        if encoding.n_groups == 1:
            warn_at_caller(
                _ONE_GROUP.format(name=name),
                UserWarning,
            )
        return encoding.codes, encoding.groups, caveats

    def _declared_groups(self):
        return None

    def _group_names(self, group_labels):
        """How the fit's messages name the groups: by their labels."""
        return group_labels

    # Whether the fit's classes are read from private labels (withheld from
    # messages): DPFERMIClassifier's are, FERMIClassifier's are not.
    _classes_private = False

    def _opportunity_index(self, classes):
        if self.constraint != "equal_opportunity":
            return None
        return advantaged_class_index(
            classes, self.opportunity_class, private=self._classes_private
        )

    def _privacy(self, n_samples, caveats, n_features=None, sparse=False):
        return None, True, caveats

    def _set_result_privacy(self, result):
        pass

    def _solver_options(self):
        """Solver parameters only one estimator declares."""
        return {}

    def _set_result_diagnostics(self, result):
        pass

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Both estimators take sparse X (CSR/CSC) without densifying it;
        # the network needs a dense X.
        try:
            tags.input_tags.sparse = self._hidden_layer_sizes() == ()
        except (TypeError, ValueError):
            # An invalid value: fit names it.
            pass
        return tags

    def _loss_for_prediction(self):
        if self.classes_.size == 2:
            return BinaryLogisticLoss()
        return SoftmaxLoss(self.classes_.size)


class FERMIClassifier(_BaseFERMI):
    """Fair logistic regression: cross-entropy plus ERMI, by stochastic descent-ascent.

    Minimizes ``mean_i l_i(theta) + fairness_weight * ERMI(Yhat; S)`` where
    ERMI, the exponential Rényi mutual information, is the chi-square
    divergence between the joint law of (prediction, group) and the product
    of its marginals: 0 exactly when the prediction is independent of the
    group. ERMI is a maximum over a dual matrix ``W`` of an *average of
    per-sample terms*, so minibatches give unbiased gradients of the min-max
    problem and the model trains by stochastic gradient descent-ascent
    (FERMI, thesis Algorithm 9) with any batch size.

    Read more in the :ref:`User Guide <fermi>`.

    Parameters
    ----------
    constraint : {"demographic_parity", "equalized_odds", "equal_opportunity"}, \
            default="demographic_parity"
        Fairness notion: ``ERMI(Yhat; S)``, ``ERMI(Yhat; S | Y)`` or
        ``ERMI(Yhat; S | Y = opportunity_class)``.
    fairness_weight : float, default=4.0
        Weight lambda >= 0 of ERMI. The scale is that of full ERMI (not of the papers'
        one-cell surrogate): on UCI Adult, values of 4 to 16 bring the
        demographic-parity gap from about 0.18 to about 0.01. 0 gives plain
        logistic regression. The weight penalizes the *soft* ERMI: at
        converged solutions that falls monotonically with the weight, but the
        disparity of the hard predictions falls only up to a point (on Adult
        about 8) and then rises slowly again, as probabilities are pushed
        towards the decision boundary. To ask for a disparity, use
        ``disparity_bound``.
    disparity_bound : float in [0, 1), default=None
        If set, ``fit`` chooses the weight itself (``fairness_weight`` is then
        ignored) and returns the most accurate model it finds whose
        *training* disparity of hard predictions for ``constraint`` (the
        largest between-group difference of a prediction rate; for binary
        targets fairlearn's ``demographic_parity_difference``,
        ``equalized_odds_difference``, or the true-positive-rate difference)
        is at most the bound. The search solves a path of weights (the
        doublings to ``40 * tol``, 0 and the bisections to ``10 * tol``,
        the chosen one then polished to ``tol``, unless its polished model
        is over the bound or more than 0.002 less accurate on the training
        data than the path's, which is then kept, with a
        ``ConvergenceWarning``; 0, then
        doubling from 1/2 to ``max_fairness_weight``
        until the bound is met, then 4 bisections), warm-starting each from
        the previous one, and stops doubling early once a feasible model is
        in hand and three doublings from 32 on improved neither the
        disparity nor the error; for binary targets with
        ``fit_intercept=True`` each model's decision threshold (one for all
        groups: prediction never reads the group; released through the
        intercept) is also chosen on the training data, so a binary bound is
        then always met (at worst by a near-constant predictor); with
        ``fit_intercept=False`` only threshold 0 is available and a bound
        may be missed. The chosen weight is ``fairness_weight_``,
        the path ``weight_path_``; ``bound_met_`` says whether the bound
        was met, and a warning names the bound, the least training
        disparity reached and what to try when it was not. Groups with
        fewer than ``min_group_size`` rows in a compared cell are left out
        of the bounded disparity. With a single group (or
        ``sensitive_features=None``) there is nothing to compare: the path
        is the one weight 0 (``fairness_weight_`` 0, no threshold chosen:
        the model is plain logistic regression), ``bound_met_`` is True
        and ``training_disparity_`` 0, as when ``min_group_size`` leaves
        every comparison out. fairlearn's ``difference_bound``, on training
        data.
    max_fairness_weight : float, default=1024.0
        Largest weight the ``disparity_bound`` search tries (unused
        without it).
    min_group_size : int, default=30
        A group with fewer training rows than this in a cell the constraint
        compares (the group for demographic parity; the group within a true
        label for equalized odds and equal opportunity) is left out of the
        fairness penalty in that cell (and, under ``disparity_bound``, of
        the bounded disparity), with one warning naming it: a handful of
        rows gives marginals and rates too noisy to use, and they drive the
        model towards a constant. Its rows still enter the loss; the penalty
        is then the ERMI of the prediction and the group given a kept group
        (a block with a single kept group has none). With ``sample_weight``
        the size is the number of rows of positive weight, not their total
        weight: weights make a rate measured on few rows no less noisy, so
        uniform weights keep the groups the unweighted fit keeps (and a
        weight of 2 is not a duplicated row here). 0 keeps every group.
    opportunity_class : label, default=None
        Advantaged class for ``constraint="equal_opportunity"``; None uses
        ``classes_[1]`` for binary targets (error otherwise).
    eo_weighting : {"label_prior", "uniform"}, default="label_prior"
        How ``constraint="equalized_odds"`` combines the per-label terms:
        ``sum_y P(Y=y) ERMI(Yhat;S|Y=y)`` or their unweighted mean.
    alpha : float, default=0.0
        L2 penalty: ``alpha/2`` times the squared norm of the per-class
        softmax parameters, ``alpha/2 sum_k ||w_k||^2`` (never on the
        intercepts). For multiclass targets ``coef_`` holds the ``w_k``, so
        it is ``alpha/2 ||coef_||^2``, scikit-learn's
        ``LogisticRegression(C=1/(n_samples * alpha))``. For binary targets
        ``coef_ = w_1 - w_0`` and the penalized minimizer has
        ``w_0 = -w_1``, so it is ``alpha/4 ||coef_||^2``, scikit-learn's
        ``C = 2/(n_samples * alpha)``. A little helps against saturated
        probabilities, which stall the fairness term.
    fit_intercept : bool, default=True
        Whether to fit intercepts.
    batch_size : int or "full", default=512
        Expected minibatch size: every row joins a step's batch independently
        with probability ``batch_size / n_samples`` (Poisson sampling, as in
        :class:`DPFERMIClassifier`). "full" runs deterministic full-batch
        gradient descent-ascent.
    max_iter : int or "auto", default="auto"
        Number of SGDA epochs, at most 10**7;
        ``ceil(max_iter * n_samples / batch_size)`` steps. "auto" is 1 with
        the full-batch phase (the SGDA epochs only warm-start it: on UCI
        Adult one epoch gives the same model, within its tolerance, as 20,
        at about half the fit time) and 20 without it. Under
        ``disparity_bound`` no SGDA epoch runs (the path starts from 0, a
        network from its initialization, and warm-starts itself).
    learning_rate : float, default=1.0
        Constant step size of the model (descent) step of SGDA (gradients
        are means over the batch). With large weights or feature norms SGDA
        does not converge at any fixed step that is not uselessly small;
        the full-batch phase then takes over (``full_batch_phase``).
    dual_learning_rate : float or "auto", default=0.1
        Step size of the dual (ascent) step on ``W``. Not multiplied by
        ``fairness_weight`` (same fixed point, and stable for values up to
        0.5 whatever ``fairness_weight`` is). "auto" is ``1 / (2 w_max)``,
        the inverse smoothness of the dual objective (``w_max`` the largest
        block weight; the step is 0.5 for demographic parity).
    dual_update : {"sgda", "exact"}, default="sgda"
        "exact" sets ``W`` to its closed-form maximiser at every step
        (gradient descent on ERMI itself); only with ``batch_size="full"``.
    dual_projection : "box" or None, default="box"
        Project ``W`` onto ``0 <= W[r, j] <= 1/sqrt(P(S=r))``, a box that
        always contains the maximiser.
    min_group_frequency : float, default=1e-3
        Floor on the group marginals (``1/sqrt(P(S=r))`` enters the
        gradients); a warning names the groups below it.
    clip_norm : float, default=None
        Optional per-sample clipping of the model gradient (None: off). Set
        it, with ``full_batch_phase=None``, to reproduce
        :class:`DPFERMIClassifier` without noise.
    dual_clip_norm : float, default=None
        Optional per-sample clipping of the dual's statistic, each record's
        weighted predicted probabilities ``w_i F_i`` in its (block, group)
        cell (None: off).
    return_iterate : {"last", "average"}, default="average"
        Return the last iterate or the average of the last half of the
        iterates (smoother with constant step sizes).
    full_batch_phase : "lbfgs" or None, default="lbfgs"
        After the SGDA epochs, minimize the full-batch objective with the
        dual at its closed-form maximiser (the soft-ERMI-regularized loss;
        its gradient is the SGDA primal gradient at that dual) by L-BFGS,
        warm-started at the SGDA result (or at 0 where the SGDA result's
        objective is higher: on raw columns constant steps overshoot to
        saturated logits), in coordinates scaled by each column's root mean
        square; for the linear model it continues in centred, standardized
        coordinates where a column's offset hid its coefficient from those
        (a gradient there above 10 ``tol``: a year near 2000, a price near
        1e5), and in coordinates centred and scaled by robust statistics
        (median, interquartile range) where a few rows dominate a column's
        spread (five ages of 999999 among 5000: a tolerance in units of
        that spread ignored the ages' coefficient). Constant SGDA steps
        oscillate at large weights or large feature norms; this phase
        converges at any weight on such scales, and a
        ``ConvergenceWarning`` says where it stops short (rows near the
        largest float, whose gradients overflow). None returns the SGDA
        iterate (clipping, if set, applies to SGDA only).
    tol : float, default=1e-4
        Stationarity of the full-batch phase: it stops when every gradient
        coordinate (in the coordinates of its last run: scaled,
        standardized or robust) is at most ``tol``.
    max_full_batch_iter : int, default=1000
        Iteration limit of each L-BFGS run of the full-batch phase. A
        :class:`~sklearn.exceptions.ConvergenceWarning` is raised when the
        returned model's stationarity exceeds ``tol``; it recommends this
        limit only when the run that produced the model stopped at it, and
        otherwise says that ``tol`` is below the precision L-BFGS can reach
        in floating point on the problem (it stops once the objective no
        longer decreases), where more iterations would not help, or, for a
        network with ``activation="relu"``, that L-BFGS stalls on the
        kinks of ReLU (a smooth activation avoids them).
    random_state : None, int, numpy.random.RandomState or numpy.random.Generator, \
default=None
        None (the default) draws the minibatches from fresh OS entropy. An
        int, or a ``RandomState`` or ``Generator`` instance (read, never
        advanced, as the seed its current state gives) makes the fit
        reproducible.
    device : {"cpu", "cuda", "auto"}, default="cpu"
        Where the descent-ascent runs. "cpu" is numpy. "cuda" runs the same
        solver in PyTorch on the current GPU; it needs the optional extra
        (``pip install 'sklearn-dpfair[torch]'``; without it an
        ``ImportError`` names the extra). "auto" is "cuda" when PyTorch sees a
        GPU, else "cpu". Labels, groups and group marginals are handled on the
        host; fitted arrays are numpy either way, so a model trained on a GPU
        pickles and predicts anywhere. With
        ``sklearn.set_config(array_api_dispatch=True)`` and an array-API ``X``
        (e.g. a torch tensor), the fit runs where ``X`` lives and ``coef_``,
        ``intercept_`` and ``dual_coef_`` are arrays of X's namespace on X's
        device; ``device`` must then be "auto" or X's device type. Batches and
        noise are drawn on the host from the same generator on every backend,
        so a seed gives the same coefficients up to floating-point round-off
        (a network's exact full-batch phase, on a non-convex objective, may
        reach another minimizer of nearly equal loss from iterates that
        differ by round-off; a small ``alpha`` makes it better determined).
        Sparse ``X`` runs on the CPU ("auto" picks it, "cuda" is refused).
    verbose : int, default=0
        With ``verbose > 0`` the fit prints about one line per SGDA epoch to
        stdout: the epoch, the norm of the released model update divided by
        the learning rate (under DP-FERMI, post-processing of the noisy
        primal sums: no private value is printed) and the elapsed time. A
        ``disparity_bound`` fit (exact L-BFGS along the weight path) prints
        nothing.
    hidden_layer_sizes : array-like of int, default=()
        Widths of the hidden layers, scikit-learn's ``MLPClassifier``
        convention. ``()`` is the linear model (``coef_``, ``intercept_``);
        otherwise a dense network whose softmax output has one logit per
        class, trained on the same objective: the ERMI term, its dual and
        the SGDA and full-batch phases are unchanged (the latter runs over
        the flattened network parameters); the model only changes the
        logits and their gradients, backpropagated through the layers. Its
        start is
        scikit-learn's Glorot-uniform initialization, drawn from the fit's
        seed. The fitted network is ``coefs_``, ``intercepts_``; its
        parameters must fit in one float64 numpy array (about 1.15e18 of
        them), else a ``ValueError`` before any row is read. Needs a
        dense ``X``. Both phases run on the columns centred by their exact
        (weighted) means and divided by their standard deviations where
        those exceed 1 (nothing is released; without ``fit_intercept``
        not centred, and the root mean squares instead), a
        preconditioning: the first layer is reported in the user's units,
        and the full-batch objective is that of the given columns (``alpha``
        penalizes the first layer's weights in the user's units; the SGDA
        warm start penalizes them in the mapped columns). A column of small
        spread at a large offset (a price near 1e5 varying by 1e-3) keeps
        its small spread: standardize such columns. ``alpha`` penalizes
        every layer's weights;
        pass a positive one (its default 0 is the
        linear model's): at 0 the full-batch phase fits the training rows,
        and on Adult the network's test error was 0.015-0.033 above the
        linear model's, against 0.003-0.006 below it with ``alpha`` between
        1e-3 and 1e-2 chosen on a validation split for the columns at hand
        (:ref:`fermi_network`); ``fit_intercept=False`` fits no bias in any
        layer. On a non-convex objective the full-batch phase may stop at
        ``max_full_batch_iter`` with a ``ConvergenceWarning``.
    activation : {"identity", "logistic", "tanh", "relu"}, default="relu"
        Activation of the hidden layers (unused without them). ReLU makes
        the objective non-differentiable where a unit's input crosses 0:
        the full-batch phase (L-BFGS) often stalls there above ``tol``,
        where "tanh" and "logistic" reach it.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Coefficients; one row (logit of ``classes_[1]``) for binary targets.
        Linear model only.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Intercepts. Linear model only.
    coefs_ : list of ndarray
        With ``hidden_layer_sizes``: ``coefs_[l]`` of shape
        ``(n_l, n_{l+1})``, the weights of layer ``l + 1``; the last layer
        has one output (the logit of ``classes_[1]``) for binary targets.
    intercepts_ : list of ndarray
        With ``hidden_layer_sizes``: the biases, ``intercepts_[l]`` of shape
        ``(n_{l+1},)``.
    n_layers_ : int
        With ``hidden_layer_sizes``: number of layers, input and output
        included.
    out_activation_ : {"logistic", "softmax"}
        With ``hidden_layer_sizes``: the output activation.
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    dual_coef_ : ndarray of shape (n_groups, n_classes) or \
            (n_classes, n_groups, n_classes)
        Final dual matrix ``W`` (one per true label for equalized odds).
    groups_ : ndarray of shape (n_groups,)
        Group labels (tuples for several sensitive columns).
    group_marginals_ : ndarray of shape (n_groups,) or (n_classes, n_groups)
        ``P(S = r)`` (or ``P(S = r | Y = y)`` for equalized odds) used by the
        penalty, after the floor; among the groups kept by
        ``min_group_size`` (0 for a group left out).
    n_iter_ : int
        Number of SGDA epochs (0 when no SGDA step ran: the exact weight
        path of ``disparity_bound``).
    t_ : int
        Number of SGDA steps.
    loss_curve_ : list of float
        Mean training cross-entropy over each epoch's batches.
    fairness_curve_ : list of float
        Training ERMI (soft predictions) at the end of each epoch; empty
        without a fairness term.
    fairness_weight_ : float
        The weight used: ``fairness_weight``, or the one chosen under
        ``disparity_bound``.
    learning_rate_ : float
        Primal step size used.
    dual_learning_rate_ : float
        Dual step size used.
    weight_path_ : list of dict or None
        Under ``disparity_bound``: every weight tried, with its training
        error and disparity (after its threshold), the threshold, its
        disparity at threshold 0, stationarity (of its minimizer, before the
        threshold), the stationarity target it
        was solved to (``"tol"``: 40 or 10 times ``tol`` along the path,
        ``tol`` for the polished weight), whether its stationarity is at
        most ``tol`` (``"converged"``) and iterations.
    bound_met_ : bool or None
        Under ``disparity_bound``, whether the returned model's training
        disparity is at most the bound (None without it).
    stationarity_ : float or None
        The solver's convergence: largest gradient coordinate of the
        full-batch objective at ``fairness_weight_`` (in the solver's scaled
        coordinates) at the model it minimized (None without the full-batch
        phase); saturated at the largest float when a record makes the
        objective overflow (the phase is then skipped). Under
        ``disparity_bound`` with a nonzero decision threshold (binary
        targets, ``weight_path_``'s ``"threshold"`` of the chosen weight)
        it is measured before that threshold is added to the intercept: the
        returned model is the minimizer shifted by the threshold, which is
        not itself a minimizer of the objective at ``fairness_weight_``
        (its gradient in the intercept is not small).
    n_full_batch_iter_ : int
        L-BFGS iterations of the full-batch phase (under
        ``disparity_bound`` summed over the whole weight path; each point
        of ``weight_path_`` has its own, and a ``ConvergenceWarning``
        reports the returned weight's).
    training_disparity_ : float
        Disparity of the hard training predictions for ``constraint``,
        weighted by ``sample_weight`` when given (a row of weight ``k``
        counts ``k`` times, one of weight 0 not at all: fairlearn's metrics
        with ``sample_weight``): fairlearn's difference over every group,
        with one exception. A rate whose denominator is 0 (for equalized
        odds or equal opportunity, the true positive rate of a group
        without positive rows, the false positive rate of one without
        negative rows) is skipped here and 0 in fairlearn, so the
        disparity can be smaller than fairlearn's: a rate of 0 would be
        made up, the group has no row to measure it on. Under
        ``disparity_bound`` it is the disparity that was bounded: groups
        with fewer than ``min_group_size`` rows in a compared cell are left
        out (with ``min_group_size=0``, fairlearn's again, with the same
        exception).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when X has string column names.

    See Also
    --------
    DPFERMIClassifier : The same model with differential privacy.
    sklearn_dpfair.metrics.ermi_score : ERMI of predictions.

    Notes
    -----
    Missing sensitive values (None/NaN) are allowed: those rows enter the
    loss but not the fairness term, whose weight is scaled by
    ``n / n_observed`` (valid when values are missing completely at random).
    ERMI controls the *randomized* classifier that draws ``Yhat`` from
    ``predict_proba``; ``predict`` takes the argmax, whose fairness gap can be
    somewhat larger, so evaluate it directly (e.g. with fairlearn's
    ``MetricFrame``). Prediction never uses sensitive features.

    References
    ----------
    .. [1] A. Lowy, S. Baharlouei, R. Pavan, M. Razaviyayn, A. Beirami, "A
       Stochastic Optimization Framework for Fair Risk Minimization", TMLR
       2022.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair import FERMIClassifier
    >>> from sklearn_dpfair.metrics import ermi_score
    >>> rng = np.random.default_rng(0)
    >>> s = rng.integers(0, 2, 2000)
    >>> X = rng.normal(size=(2000, 3)) + s[:, None]
    >>> y = (X[:, 0] + 0.5 * rng.normal(size=2000) > 0.5).astype(int)
    >>> plain = FERMIClassifier(fairness_weight=0, random_state=0)
    >>> fair = FERMIClassifier(fairness_weight=8, random_state=0)
    >>> plain = plain.fit(X, y, sensitive_features=s)
    >>> fair = fair.fit(X, y, sensitive_features=s)
    >>> bool(ermi_score(y, fair.predict(X), sensitive_features=s)
    ...      < ermi_score(y, plain.predict(X), sensitive_features=s))
    True
    """

    _parameter_constraints = {
        **_FERMI_CONSTRAINTS,
        "max_iter": [
            Interval(Integral, 1, MAX_EPOCHS, closed="both"),
            StrOptions({"auto"}),
        ],
        "dual_update": [StrOptions({"sgda", "exact"})],
        "full_batch_phase": [StrOptions({"lbfgs"}), None],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_full_batch_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        *,
        constraint="demographic_parity",
        fairness_weight=4.0,
        disparity_bound=None,
        max_fairness_weight=1024.0,
        min_group_size=30,
        opportunity_class=None,
        eo_weighting="label_prior",
        alpha=0.0,
        fit_intercept=True,
        batch_size=512,
        max_iter="auto",
        learning_rate=1.0,
        dual_learning_rate=0.1,
        dual_update="sgda",
        dual_projection="box",
        min_group_frequency=1e-3,
        clip_norm=None,
        dual_clip_norm=None,
        return_iterate="average",
        full_batch_phase="lbfgs",
        tol=1e-4,
        max_full_batch_iter=1000,
        random_state=None,
        device="cpu",
        verbose=0,
        hidden_layer_sizes=(),
        activation="relu",
    ):
        self.constraint = constraint
        self.fairness_weight = fairness_weight
        self.disparity_bound = disparity_bound
        self.max_fairness_weight = max_fairness_weight
        self.min_group_size = min_group_size
        self.opportunity_class = opportunity_class
        self.eo_weighting = eo_weighting
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.batch_size = batch_size
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.dual_learning_rate = dual_learning_rate
        self.dual_update = dual_update
        self.dual_projection = dual_projection
        self.min_group_frequency = min_group_frequency
        self.clip_norm = clip_norm
        self.dual_clip_norm = dual_clip_norm
        self.return_iterate = return_iterate
        self.full_batch_phase = full_batch_phase
        self.tol = tol
        self.max_full_batch_iter = max_full_batch_iter
        self.random_state = random_state
        self.device = device
        self.verbose = verbose
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation

    def _check_params(self):
        if self.dual_update == "exact" and self.batch_size != "full":
            raise ValueError(
                "dual_update='exact' needs batch_size='full': on a minibatch the "
                "closed-form maximiser is a biased plug-in estimate."
            )
        if self.disparity_bound is not None and self.full_batch_phase is None:
            raise ValueError(
                "disparity_bound needs full_batch_phase='lbfgs': the weight is "
                "chosen among models solved to stationarity."
            )

    def _epochs(self):
        if self.max_iter != "auto":
            return int(self.max_iter)
        return 1 if self.full_batch_phase == "lbfgs" else 20

    def _solver_options(self):
        return {
            "dual_update": self.dual_update,
            "final_phase": self.full_batch_phase,
            "tol": self.tol,
            "final_max_iter": self.max_full_batch_iter,
        }

    def _set_result_diagnostics(self, result):
        self.stationarity_ = result.stationarity
        self.n_full_batch_iter_ = result.n_final_iter
        self.training_disparity_ = result.disparity


class DPFERMIClassifier(PrivateEstimatorMixin, _BaseFERMI):
    """FERMI with record-level (epsilon, delta)-differential privacy (DP-FERMI).

    The descent-ascent of :class:`FERMIClassifier` made private: each step
    samples a Poisson batch, clips every example's model gradient to
    ``clip_norm``, adds its predicted probabilities to its (label, group)
    cell (the dual gradient's statistic, each term within
    ``dual_clip_norm``), and adds Gaussian noise to both sums, which are
    released together and accounted as one Gaussian mechanism; the dual
    step is computed from the noisy cell sums. The group marginals that
    scale the penalty are privatized by a Gaussian histogram (or declared
    public). Noise is calibrated numerically with dp-accounting for the
    whole composition.

    The guarantee covers whole records (features, label and sensitive
    attributes) under add/remove adjacency, stronger than the papers'
    protection of the sensitive attribute only.

    Read more in the :ref:`User Guide <fermi>`.

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy budget. ``np.inf`` (without ``noise_multiplier``) is the
        non-private limit: the noiseless SGDA steps, then a full-batch
        L-BFGS-B solve of the same objective (the dual at its closed-form
        maximiser) in standardized columns, so that raw columns of any scale
        reach its minimizer (a ``ConvergenceWarning`` if it stops short).
        Under ``disparity_bound`` it is :class:`FERMIClassifier`'s exact
        weight path (on ``max_fairness_weight``), not the private
        selection. ``epsilon=np.inf, noise_multiplier=0`` runs the private
        loop without noise: without ``sample_weight`` it equals
        :class:`FERMIClassifier` with the same clip norms and
        ``full_batch_phase=None`` (with weights it uses them as a private
        fit does, as given and with unweighted group counts, where
        :class:`FERMIClassifier` rescales them to mean 1 and weights its
        group frequencies).
    delta : float, default=1e-5
        Privacy parameter delta in (0, 1); keep it well below ``1/n_samples``.
    constraint : {"demographic_parity", "equalized_odds", "equal_opportunity"}, \
            default="demographic_parity"
        Fairness notion (see :class:`FERMIClassifier`).
    fairness_weight : float, default=8.0
        Weight lambda >= 0 of ERMI (full-ERMI scale; see
        :class:`FERMIClassifier`). Tune it together with ``clip_norm``: a
        small clip norm absorbs the fairness gradient. Tuning on private
        data spends privacy too.
    disparity_bound : float in [0, 1), default=None
        If set, the weight is chosen privately (``fairness_weight`` is then
        ignored): the ``T`` noisy steps run one stage per candidate weight
        (0, then doubling from 2 to ``max_fairness_weight``: 0, 2, ..., 64
        by default), each continuing from the previous one; the smallest
        weight whose noisy training disparity (see
        :class:`FERMIClassifier`) plus a margin (two count-noise standard
        deviations of the smallest compared cell's rate) is at
        most the bound is chosen and returned as it was measured, with
        ``bound_met_`` True. If none is, the one of least noisy disparity is
        returned, ``bound_met_`` is False and a warning gives the bound, that
        noisy disparity and what to try (it prints released values only).
        ``bound_met_`` is a statistical statement, and a loose one: the
        margin is about 1.2 to 1.4 standard deviations of the noisy
        disparity, so an exact disparity at the bound can be reported met
        (in 8 to 11% of simulated fits under demographic parity; see the
        User Guide).
        With fewer steps than candidates (e.g. ``max_iter <= 6`` at
        ``batch_size >= n``) each stage still needs one, so ``T``
        candidates spread over the weights are kept (0 and the maximum
        among them): the fit never runs a step beyond the ``T``
        accounted. The noisy statistics come from one Gaussian release of
        the (label, group, prediction) counts of the candidates, composed
        into ``dp_event_`` and calibrated inside the same ``epsilon``. The
        chosen weight is ``fairness_weight_``, the released statistics
        ``weight_path_``. With a single group (or
        ``sensitive_features=None``) there is nothing to compare: no
        selection runs or is released (``weight_path_`` is empty, the
        event has no selection), no fairness term is fitted, and
        ``bound_met_`` is True, ``training_disparity_`` and
        ``fairness_weight_`` 0 (exact whatever the model).
    max_fairness_weight : float, default=64.0
        Public largest candidate weight under ``disparity_bound``: the
        candidates are 0 and the doublings from 2 up to it (7 by default).
        More candidates raise the selection's sensitivity ``sqrt(k)`` and
        divide the steps among more stages.
    min_group_size : int, default=30
        A group whose cell count (as the fit knows it under privacy: the
        *released noisy* histogram count, or the declared
        ``group_marginals`` times ``n_samples``; never an exact private
        count) is below this in a cell the constraint compares is left out
        of the fairness penalty in that cell (and, under
        ``disparity_bound``, of the selection's disparity and margin), with
        one warning naming it (post-processing of the release; by its
        label when ``groups`` is declared, else by its position in
        ``groups_``). Its rows still enter the loss. A tiny group's noisy
        marginal sets the dual box and clip norm (``1 / sqrt(P_s)``), whose
        noise then pushes every row towards one class. 0 keeps every group.
    opportunity_class : label, default=None
        Advantaged class for equal opportunity (None: ``classes_[1]``).
    eo_weighting : {"label_prior", "uniform"}, default="label_prior"
        Combination of the per-label terms of equalized odds: weighted by
        the label frequencies, or their unweighted mean over ``classes_``
        (a declared class without rows adds a term 0: which classes have
        rows is private).
    alpha : float, default=0.0
        L2 penalty on the coefficients (data independent, hence free):
        ``alpha/2`` times the squared norm of the per-class softmax
        parameters, as in :class:`FERMIClassifier`; that is
        ``alpha/2 ||coef_||^2`` for multiclass targets but
        ``alpha/4 ||coef_||^2`` for binary ones (``coef_ = w_1 - w_0``, the
        minimizer having ``w_0 = -w_1``): scikit-learn's
        ``C = 2/(n_samples * alpha)`` there, not ``1/(n_samples * alpha)``.
    fit_intercept : bool, default=True
        Whether to fit intercepts.
    batch_size : int or "full", default=1024
        Expected Poisson batch size; the sampling rate is
        ``q = batch_size / n_samples`` and noisy sums are divided by ``q n``.
    max_iter : int, default=30
        Epochs, at most 10**7; ``T = ceil(max_iter / q)`` noisy steps,
        fixed in advance.
    learning_rate : float, default=0.5
        Step size of the model step (a public constant: a smoothness-based
        step would read the private row norms). Needs ``learning_rate *
        alpha < 2``, else the penalty's step diverges (a ``ValueError``
        before the data are read).
    dual_learning_rate : float or "auto", default=0.1
        Step size of the dual ascent step (not multiplied by lambda). "auto"
        is ``1 / (2 w_max)`` (see :class:`FERMIClassifier`), computed from
        the released or declared marginals only.
    dual_projection : "box" or None, default="box"
        Project ``W`` onto ``0 <= W[r, j] <= 1/sqrt(P(S=r))``, a box that
        always contains the maximiser. The dual's releases do not depend on
        it: their sensitivity is ``dual_clip_norm``'s whatever ``W`` is.
    min_group_frequency : float, default=0.01
        Public floor ``rho_min`` on the (privatized) group marginals.
    clip_norm : float, default=5.0
        Per-example clip norm of the model gradient (loss plus fairness
        term), the sensitivity of the primal sum.
    dual_clip_norm : float, default=None
        Per-example clip norm of the dual's release. Each step releases the
        noisy per-(block, group) sums of the weighted predicted
        probabilities ``w_i F_i``, from which the dual gradient is computed
        (post-processing): one record adds ``w_i F_i``, of norm at most its
        block weight ``w_i``, to its own cell. None uses the largest block
        weight, so no term is clipped while every ``sample_weight`` is at
        most 1 (a record of weight above 1 is clipped to it, so the dual's
        statistic then weighs it less than the primal's penalty does); the
        sensitivity is then ``2 sqrt(
        sum_r 1 / P(S=r))`` times smaller than that of the per-example dual
        gradients of thesis Algorithm 10 at the same noise multiplier, and
        each group's row of the dual gets its own ``1 / sqrt(P(S=r))`` of
        the noise. At the non-private limit (``epsilon=np.inf`` without
        ``noise_multiplier``), which releases nothing, None clips nothing,
        as :class:`FERMIClassifier` does.
    noise_multiplier : float, default=None
        Model-step noise multiplier ``sigma_theta``; None calibrates it from
        ``(epsilon, delta)``. A given value that overspends the budget raises
        :class:`~sklearn_dpfair.exceptions.PrivacyBudgetError`.
    dual_noise_ratio : float, default=1.0
        ``sigma_w / sigma_theta``.
    marginal_noise_multiplier : float or "auto", default="auto"
        Noise multiplier of the Gaussian histogram of the (label, group) cells
        that gives the private group marginals; composed into the budget.
        "auto" uses 20, or more when epsilon is small: at least the noise of
        a Gaussian that alone spends a quarter of ``epsilon``, so small budgets
        leave most of epsilon to the model steps.
    selection_noise_multiplier : float or "auto", default="auto"
        Noise multiplier (in units of the L2 sensitivity ``sqrt(k)``, ``k``
        the number of candidates, 7 by default) of the
        count release that selects the weight under ``disparity_bound``;
        "auto" applies the rule of ``marginal_noise_multiplier``. Unused
        without ``disparity_bound``.
    group_marginals : "private" or array-like, default="private"
        "private" estimates the marginals from the data with the Gaussian
        histogram. An array declares them public (no budget spent): ``P(S=r)``
        of shape ``(n_groups,)`` for demographic parity, the joint
        ``P(Y=y, S=r)`` of shape ``(n_classes, n_groups)`` otherwise, in the
        order of ``groups`` and of ``classes_`` (the sorted ``classes``).
        Values that are negative, not finite or all zero, or of a shape other
        than the declared ``groups`` and ``classes`` give, are refused by
        :meth:`privacy_plan` as by :meth:`fit`, before any data is read.
    small_budget : {"auto", "choose", "fit"}, default="auto"
        What a budget too small to buy a useful model does. "auto": when
        ``n_samples * epsilon < 15 * (n_features + 1) * (n_classes - 1)``
        (a public rule, decided before the data are read; below it DP-FERMI's
        defaults predicted worse on held-out data than the majority class on
        Adult, German credit and COMPAS), the fit releases the
        intercept-only model instead: the label counts through one Gaussian
        mechanism calibrated to the whole ``(epsilon, delta)`` (sensitivity 1
        under add/remove adjacency; calibrated and recorded with the PLD
        accountant, exact for one Gaussian, whatever ``accountant``),
        ``coef_`` 0, the intercepts the log-frequencies of the noisy counts,
        ``intercept_only_`` True and a
        ``UserWarning`` naming the rule. It predicts one class for every row,
        so a ``disparity_bound`` is then met exactly. ``privacy_plan`` plans
        the same release. From there up to ``n_samples * epsilon < 2500 *
        (n_classes - 1)`` (a bound free of ``n_features``, so that a private
        pipeline can plan the fit before an encoder's categories are known),
        where whether the model beats the constant depends on the data (it
        lost in some seed up to ``n_samples * epsilon = 2100`` on the
        benchmark's datasets), the fit trains the model and then
        chooses privately: one more Gaussian release (a tenth of the
        budget's zCDP, composed into ``dp_event_`` and calibrated inside the
        same ``epsilon``) of the model's training errors minus each
        constant's (sensitivity ``sqrt(max(n_classes - 1, 1))``); when the
        noisy comparison finds a constant better, that constant (intercepts
        from the same release) is returned instead, with
        ``intercept_only_`` True (``constant_comparison_`` holds the
        release). No warning says which: a warning is the same for every
        neighbouring dataset in this package, and the outcome is not; the
        attributes say it. On COMPAS (20 seeds, n = 700, epsilon = 0.3)
        this cut the share of fits that lose to the majority class on
        held-out data from 35% to 20%, at a cost of at most 0.003 in mean
        error elsewhere on the benchmark's real data
        (``benchmarks/bench_fermi_small.py``). "choose" never releases
        the constant outright: it fits the model and makes the private
        choice wherever ``n_samples * epsilon < 2500 * (n_classes - 1)``,
        whatever ``n_features``; a private pipeline runs its final step so
        when the step's plan was made before the number of columns an
        encoder discovers was known and "auto" would, at that number,
        release the intercept-only model. "fit" always fits
        the model and makes no choice. Neither rule applies with
        ``epsilon=np.inf`` or a given ``noise_multiplier``. A Dask fit
        makes the same releases: its workers count their rows' classes (and
        the released model's errors) and the driver adds the counts.
    groups : array-like, default=None
        Declared public group set (labels; tuples for several columns). None
        reads it from the data, with a
        :class:`~sklearn_dpfair.exceptions.PrivacyLeakWarning`; its
        ``privacy_plan`` is then made for ``n_groups=`` groups, 1 (a fit
        without ``sensitive_features``) when not given: pass the number of
        groups the fit will see, as the noise depends on it.
    classes : array-like, default=None
        Declared public label set; None reads it from ``y`` with a
        :class:`~sklearn_dpfair.exceptions.PrivacyLeakWarning`. ``classes_``
        holds it sorted whatever the declared order, as in scikit-learn.
    accountant : {"rdp", "pld"}, default="rdp"
        dp-accounting accountant used for calibration and ``epsilon_``.
    record_training_loss : bool, default=False
        Record ``loss_curve_`` and ``fairness_curve_`` (computed on the
        private data, outside the guarantee; warns).
    return_iterate : {"last", "average"}, default="average"
        Last iterate or the average of the last half (post-processing, free).
    random_state : None, int, numpy.random.RandomState or numpy.random.Generator, \
default=None
        None (the default) draws the noise and the batches from fresh OS
        entropy: the only setting for a private release. Anything else is a
        seed, for tests and experiments: an int, or a ``RandomState`` or
        ``Generator`` instance, read (never advanced) as the seed its current
        state gives. Whoever knows a seed knows the noise, and fits given the
        same seed (clones in ``GridSearchCV`` or ``cross_validate`` included)
        draw the same noise: the privacy record of a seeded fit says that it
        is not a private release, and a ``PrivacyLedger`` refuses to compose
        fits that share a seed (its total is inf).
    device : {"cpu", "cuda", "auto"}, default="cpu"
        Where the descent-ascent runs, as in :class:`FERMIClassifier`: numpy
        on the CPU, or PyTorch on the current GPU (the ``torch`` extra).
        Batches and every noise draw come from the host generator on every
        backend, so a seed gives the same coefficients up to round-off. A
        network without privacy (``epsilon=inf``) ends with an exact
        L-BFGS phase on a non-convex objective (with no unique minimizer at
        ``alpha=0``): there the backends' round-off can lead it to another
        minimizer of nearly equal loss. Sparse ``X`` runs on the CPU.
    verbose : int, default=0
        With ``verbose > 0`` the fit prints about one line per SGDA epoch to
        stdout: the epoch, the norm of the released model update divided by
        the learning rate (under DP-FERMI, post-processing of the noisy
        primal sums: no private value is printed) and the elapsed time. A
        ``disparity_bound`` fit prints the epochs of each stage.
    feature_scaling : {"auto"} or None, default=None
        ``"auto"`` maps every column to unit scale
        before the SGDA steps and reports ``coef_`` in the user's units: by
        ``feature_bounds`` when given (public, no budget), else by private
        robust statistics (a median, then quantiles of the centred column,
        on a public log-scale grid) that spend 10% of the zCDP budget,
        composed into the same ``dp_event_`` (the steps' noise is
        calibrated to the rest; accounted with RDP whatever ``accountant``
        says). Use it on raw columns (ages, incomes, years): with the fixed
        clip norm and step sizes of noisy SGDA a column of large magnitude
        otherwise saturates every clipped gradient. Where the rows are too
        few for the budget to resolve a quantile (a public rule of ``n``,
        ``epsilon`` and the number of columns), no statistics are drawn and
        the columns are used as given, with the warning below on raw
        columns: declare ``feature_bounds`` there. Sparse ``X`` needs
        ``feature_bounds``. The non-private limit (``epsilon=np.inf``)
        ignores it (its full-batch phase solves in standardized columns).
        A Dask collection ``X`` takes ``feature_bounds`` only (a
        ``ValueError`` without them: private scales would need a
        distributed private quantile): every partition maps its rows by
        their public map, at any finite ``epsilon``, and ``dp_event_`` is
        that of the unscaled fit; the non-private limit on Dask
        standardizes the columns by their exact moments instead, bounds or
        not (nothing is released). None: the columns are used as given; a
        private fit then warns when more than a quarter of a column's values
        lie beyond +-5 (an input check, outside the guarantee; no value
        shown).
    feature_bounds : array-like of shape (n_features, 2), default=None
        Public ``(lower, upper)`` range of every column, for
        ``feature_scaling="auto"``: the column is mapped by its midpoint and
        half-width (values outside are not clipped; the gradient clip
        bounds their influence).
    hidden_layer_sizes : array-like of int, default=()
        Widths of the hidden layers, scikit-learn's ``MLPClassifier``
        convention. ``()`` is the linear model (``coef_``, ``intercept_``);
        otherwise a dense network whose softmax output has one logit per
        class, trained on the same objective: the ERMI term, its dual and
        every release and its accounting are unchanged; the model only
        changes the logits and their gradients, backpropagated through the
        layers. Its start is
        scikit-learn's Glorot-uniform initialization, drawn from the fit's
        seed. The fitted network is ``coefs_``, ``intercepts_``; its
        parameters must fit in one float64 numpy array (about 1.15e18 of
        them), else a ``ValueError`` before any row is read. Each
        example's gradient over all the layers jointly is clipped to
        ``clip_norm`` (its norm from the ghost-norm identity, without
        forming per-example gradients), so the noise, ``dp_event_`` and the
        record are those of the linear model. ``alpha`` penalizes every
        layer's weights; ``fit_intercept=False`` fits no bias. With
        ``feature_scaling`` the first layer is reported in the user's units;
        so it is in the non-private limit (``epsilon=np.inf``), which solves
        ``FERMIClassifier``'s objective on columns mapped by their exact
        moments, as ``FERMIClassifier`` does. Needs a dense ``X`` (a Dask
        collection is refused).
    activation : {"identity", "logistic", "tanh", "relu"}, default="relu"
        Activation of the hidden layers (unused without them).

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Coefficients. Linear model only.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Intercepts. Linear model only.
    coefs_ : list of ndarray
        With ``hidden_layer_sizes``: ``coefs_[l]`` of shape
        ``(n_l, n_{l+1})``, the weights of layer ``l + 1`` (the first in the
        user's units under ``feature_scaling``); one output for binary
        targets.
    intercepts_ : list of ndarray
        With ``hidden_layer_sizes``: the biases, ``intercepts_[l]`` of shape
        ``(n_{l+1},)``.
    n_layers_ : int
        With ``hidden_layer_sizes``: number of layers, input and output
        included.
    out_activation_ : {"logistic", "softmax"}
        With ``hidden_layer_sizes``: the output activation.
    classes_ : ndarray of shape (n_classes,)
        The label set (declared, or inferred with a warning).
    dual_coef_ : ndarray
        Final dual matrix (see :class:`FERMIClassifier`).
    groups_ : ndarray of shape (n_groups,)
        The group set (declared, or inferred with a warning).
    group_marginals_ : ndarray or None
        The privatized (or declared) marginals used, among the groups kept
        by ``min_group_size`` (0 for a group left out); None when no
        fairness term was fitted (then nothing is released about the
        groups).
    n_iter_ : int
        Number of SGDA epochs (0 when no SGDA step ran: the intercept-only
        fallback, or the exact weight path at ``epsilon=np.inf`` with
        ``disparity_bound``).
    t_ : int
        Number of noisy steps; at ``epsilon=np.inf`` with
        ``disparity_bound``, the exact weight path's solver iterations (the
        record's ``steps``).
    loss_curve_ : list of float or None
        Only with ``record_training_loss=True``.
    fairness_curve_ : list of float or None
        Only with ``record_training_loss=True``.
    epsilon_ : float
        Epsilon spent, computed by dp-accounting from ``dp_event_``.
    delta_ : float
        Delta of the guarantee.
    noise_multiplier_ : float
        ``sigma_theta``: model-step noise std in units of ``clip_norm`` (the
        meaning of the ``noise_multiplier`` parameter). The accountant's
        multiplier is ``effective_noise_multiplier_``.
    dual_noise_multiplier_ : float
        ``sigma_w``: dual-step noise std in units of the dual clip norm.
    effective_noise_multiplier_ : float
        ``(sigma_theta^-2 + sigma_w^-2)^(-1/2)``, the noise multiplier of the
        joint Gaussian in ``dp_event_``; it is
        ``privacy_record_.noise_multiplier`` (the label histogram's when
        ``small_budget`` released the intercept-only model without training,
        where ``noise_multiplier_`` and ``dual_noise_multiplier_`` are 0).
    marginal_noise_multiplier_ : float
        Noise multiplier of the Gaussian histogram of the group marginals in
        ``dp_event_`` (sensitivity 1); 0 when none was released.
    selection_noise_multiplier_ : float
        Noise multiplier of the selection's count release in ``dp_event_``
        (0 without ``disparity_bound``).
    fairness_weight_ : float
        The weight used: ``fairness_weight`` or the privately chosen one;
        0.0 when a constant is released instead of a trained model
        (``intercept_only_``, by ``small_budget``'s rule or its private
        choice): the released constant has no fairness term.
    learning_rate_ : float
        Primal step size used.
    dual_learning_rate_ : float
        Dual step size used (``dual_learning_rate`` or its "auto" value).
    weight_path_ : list of dict or None
        Under ``disparity_bound``: each candidate weight with its noisy
        training error and disparity (post-processing of the release).
    bound_met_ : bool or None
        Under ``disparity_bound``, whether the chosen candidate's noisy
        training disparity plus its noise margin is at most the bound
        (post-processing of the release; None without it).
    training_disparity_ : float or None
        Under ``disparity_bound``, the chosen candidate's noisy training
        disparity; None otherwise (it would read the private data). 0 for
        the intercept-only model (exact: it predicts one class) and, under
        ``disparity_bound``, with a single group (exact: nothing to
        compare).
    intercept_only_ : bool
        Whether ``small_budget`` released a constant model: the
        intercept-only model of the public rule (then ``dp_event_`` is that
        of the label histogram alone, ``t_`` is 0 and the SGDA attributes
        are 0 or None), or the constant the private comparison chose (then
        the steps ran and are accounted; ``constant_comparison_`` holds the
        release).
    constant_comparison_ : ndarray of shape (n_classes,) or None
        The released noisy comparison of the trained model with the
        constants (its training errors minus constant ``c``'s, in the order
        of ``classes_``) when ``small_budget`` ("auto" or "choose") made the
        private choice; None otherwise.
    choice_noise_multiplier_ : float
        Noise multiplier of that comparison (its last part of ``dp_event_``;
        0 when no choice is made).
    dual_clip_norm_ : float
        Dual clip norm used; ``inf`` (nothing clipped) when
        ``dual_clip_norm`` is None at the non-private limit
        (``epsilon=np.inf`` without ``noise_multiplier``), and whenever no
        dual statistic is released (no fairness term, or the intercept-only
        fallback).
    sampling_probability_ : float or None
        Poisson sampling rate ``q`` (the record's ``sampling_probability``);
        None for the intercept-only model of ``small_budget``, which samples
        nothing.
        ``sampling_rate_`` is its deprecated alias (``FutureWarning``;
        removed in the next release).
    dp_event_ : dp_accounting.DpEvent
        The composed mechanism; ``epsilon_`` can be recomputed from it.
    accountant_ : str
        Accountant that computed ``epsilon_``.
    adjacency_ : str
        ``"add_remove"`` (one whole record).
    privacy_record_ : PrivacyRecord
        What the accountant was given: ``noise_multiplier`` is
        ``effective_noise_multiplier_``, ``clip_norm`` the sensitivity of the
        jointly released (primal, rescaled dual) pair,
        ``clip_norm * sqrt(1 + dual_noise_ratio^-2)`` with a fairness term
        (``clip_norm`` without), ``sampling_probability`` and ``steps`` the
        schedule; the mechanism text gives both blocks' clip norms and noise
        multipliers, the histogram's and the selection's. ``dp_event_`` is
        rebuilt from them (with ``marginal_noise_multiplier_``,
        ``selection_noise_multiplier_`` and ``choice_noise_multiplier_``,
        and, with private feature scales, their quantiles' event first) by
        ``fermi_event`` in ``sklearn_dpfair._solvers.fermi._privacy``;
        ``privacy_plan()`` returns the same event from public inputs.
    privacy_caveats_ : list of str
        What was read from the private data outside the guarantee.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when X has string column names.

    See Also
    --------
    FERMIClassifier : The non-private model.
    DPLogisticRegression : Private logistic regression without fairness.

    Notes
    -----
    Per step: ``g_i = [x_i, 1] G_i^T`` with the logit-space gradient
    ``G_i = (F_i - e_{y_i}) + lambda w_i F_i * (c_i - <c_i, F_i>)``, clipped
    through the factorized norm ``||[x_i, 1]|| ||G_i||``; the cell terms
    ``w_i F_i`` (norm at most the block weight ``w_i``) are clipped to
    ``dual_clip_norm`` and summed per (block, group) cell, from which the
    dual gradient ``sum_i h_i`` is computed after the noise; both sums get
    Gaussian noise (``sigma_theta C``, ``sigma_w C_w``) and are divided by the
    expected batch size. Scaling each block by its noise shows the pair is a
    single Gaussian mechanism with noise multiplier
    ``effective_noise_multiplier_``; with the histogram it forms
    ``dp_event_``. Missing sensitive values are rejected. Features should be
    scaled with public bounds (or a DP scaler): scaling with the private mean
    and standard deviation is outside the guarantee.

    Adversarial records. Every per-example term of both noisy sums is finite
    and within its clip norm whatever the record holds: norms are computed
    without overflow, and a record whose logits overflow (features near the
    float64 limit) contributes exactly 0 to the primal and dual sums of the
    steps it joins. Input validation (shapes, NaN/inf, labels outside
    ``classes``, groups outside ``groups``, missing sensitive values) raises
    before anything is computed and is outside the guarantee; after it, no
    exception or warning depends on the private data (a group or a class
    that is empty, or a single record, changes nothing but the numbers),
    except the ``disparity_bound`` warning (a bound not met) and the
    ``min_group_size`` one (a group below it): they are post-processing of
    released values (the selection's noisy counts, the noisy histogram or
    the declared marginals), covered by the guarantee, and print released
    values only.

    Dask collections (``X``, ``y``, ``sample_weight``,
    ``sensitive_features``) are fitted on their workers: per-partition cell
    counts and clipped primal and dual sums, each noised once on the driver,
    with the same ``dp_event_`` and record as in memory
    (:ref:`User Guide <dask_central>`; ``disparity_bound`` and
    ``record_training_loss`` are not available there).

    References
    ----------
    .. [1] A. Lowy, D. Gupta, M. Razaviyayn, "Stochastic Differentially
       Private and Fair Learning", ICLR 2023.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair import DPFERMIClassifier
    >>> rng = np.random.default_rng(0)
    >>> s = rng.integers(0, 2, 5000)
    >>> X = rng.normal(size=(5000, 3)) + s[:, None]
    >>> y = (X[:, 0] + 0.5 * rng.normal(size=5000) > 0.5).astype(int)
    >>> clf = DPFERMIClassifier(epsilon=1.0, classes=[0, 1], groups=[0, 1],
    ...                         batch_size=500, random_state=0)
    >>> clf = clf.fit(X, y, sensitive_features=s)
    >>> clf.epsilon_ <= 1.0
    True
    >>> clf.score(X, y) > 0.7
    True
    """

    _parameter_constraints = {
        **PRIVACY_PARAMETER_CONSTRAINTS,
        **_FERMI_CONSTRAINTS,
        "clip_norm": [CLIP_NORM_CONSTRAINT],
        "noise_multiplier": [Interval(Real, 0, None, closed="left"), None],
        "dual_noise_ratio": [Interval(Real, 0, None, closed="neither")],
        "marginal_noise_multiplier": [
            Interval(Real, 0, None, closed="neither"),
            StrOptions({"auto"}),
        ],
        "selection_noise_multiplier": [
            Interval(Real, 0, None, closed="neither"),
            StrOptions({"auto"}),
        ],
        "group_marginals": [StrOptions({"private"}), "array-like"],
        "small_budget": [StrOptions({"auto", "choose", "fit"})],
        "groups": ["array-like", None],
        "classes": ["array-like", None],
        "record_training_loss": ["boolean"],
        "feature_scaling": [StrOptions({"auto"}), None],
        "feature_bounds": ["array-like", None],
    }

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=1e-5,
        constraint="demographic_parity",
        fairness_weight=8.0,
        disparity_bound=None,
        max_fairness_weight=64.0,
        min_group_size=30,
        opportunity_class=None,
        eo_weighting="label_prior",
        alpha=0.0,
        fit_intercept=True,
        batch_size=1024,
        max_iter=30,
        learning_rate=0.5,
        dual_learning_rate=0.1,
        dual_projection="box",
        min_group_frequency=0.01,
        clip_norm=5.0,
        dual_clip_norm=None,
        noise_multiplier=None,
        dual_noise_ratio=1.0,
        marginal_noise_multiplier="auto",
        selection_noise_multiplier="auto",
        group_marginals="private",
        small_budget="auto",
        groups=None,
        classes=None,
        accountant="rdp",
        record_training_loss=False,
        return_iterate="average",
        random_state=None,
        device="cpu",
        verbose=0,
        feature_scaling=None,
        feature_bounds=None,
        hidden_layer_sizes=(),
        activation="relu",
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.constraint = constraint
        self.fairness_weight = fairness_weight
        self.disparity_bound = disparity_bound
        self.max_fairness_weight = max_fairness_weight
        self.min_group_size = min_group_size
        self.opportunity_class = opportunity_class
        self.eo_weighting = eo_weighting
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.batch_size = batch_size
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.dual_learning_rate = dual_learning_rate
        self.dual_projection = dual_projection
        self.min_group_frequency = min_group_frequency
        self.clip_norm = clip_norm
        self.dual_clip_norm = dual_clip_norm
        self.noise_multiplier = noise_multiplier
        self.dual_noise_ratio = dual_noise_ratio
        self.marginal_noise_multiplier = marginal_noise_multiplier
        self.selection_noise_multiplier = selection_noise_multiplier
        self.group_marginals = group_marginals
        self.small_budget = small_budget
        self.groups = groups
        self.classes = classes
        self.accountant = accountant
        self.record_training_loss = record_training_loss
        self.return_iterate = return_iterate
        self.random_state = random_state
        self.device = device
        self.verbose = verbose
        self.feature_scaling = feature_scaling
        self.feature_bounds = feature_bounds
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation

    def _resolve_classes(self, y):
        # The label set and its checks from the distinct labels; the codes
        # by chunks (compact_codes).
        # Declared classes are matched against y's distinct labels unsorted
        # (pd.unique): a label of another type, which cannot be sorted among
        # them, is then reported as undeclared.
        distinct = np.unique(y) if self.classes is None else pd.unique(y)
        classes, _, caveats = resolve_classification_targets(self.classes, distinct)
        return classes, compact_codes(classes, y), caveats

    def _declared_groups(self):
        return self.groups

    def _group_names(self, group_labels):
        """How the fit's messages name the groups.

        By their labels when declared (public); a group set read from the
        private sensitive_features is named by position in ``groups_``, as
        no message prints a value read from the private data.
        """
        if self.groups is not None:
            return group_labels
        return np.array(
            [f"groups_[{i}]" for i in range(len(group_labels))], dtype=object
        )

    def _check_params(self):
        # The declared groups and classes are public: what the fit refuses
        # from them and the parameters alone is refused before any row is
        # read, by the checks its plan makes too (with or without
        # sensitive_features, as the plan does not know which).
        n_groups = n_classes = None
        if self.groups is not None:
            n_groups = len(check_declared_groups(self.groups))
        if self.classes is not None:
            classes = check_declared_classes(self.classes)
            n_classes = classes.size
            # The fit's classes_ are these: its advantaged class is decided.
            self._opportunity_index(classes)
        self._check_group_marginals(n_classes, n_groups)

    def _check_group_marginals(self, n_classes, n_groups):
        """Refuse declared ``group_marginals`` the fit refuses, at the known counts."""
        if not isinstance(self.group_marginals, str):
            check_public_marginals(
                self.group_marginals,
                self.constraint,
                n_classes=n_classes,
                n_groups=n_groups,
            )

    def _encode_groups(self, sensitive_features, n_samples, caveats):
        codes, labels, caveats = super()._encode_groups(
            sensitive_features, n_samples, caveats
        )
        n_missing = int(np.count_nonzero(codes < 0))
        if n_missing:
            raise ValueError(_MISSING_UNDER_DP)
        # Once the groups are read: a fit refused for the sensitive
        # features' length or missing values read no group set.
        if sensitive_features is not None and self.groups is None:
            warn_at_caller(_GROUPS_INFERRED, PrivacyLeakWarning)
            caveats = [*caveats, "group set inferred from the private data"]
        return codes, labels, caveats

    def _privacy(self, n_samples, caveats, n_features=None, sparse=False):
        check_delta_for_n(self.delta, n_samples)
        if self.record_training_loss:
            warn_at_caller(_CURVES_RECORDED, PrivacyLeakWarning)
            caveats = [*caveats, "training loss and ERMI curves recorded"]
        privacy = self._fair_privacy(caveats, n_features, sparse, n_samples)
        return privacy, self.record_training_loss, caveats

    def _privacy_plan_key(self, n_samples, n_groups, n_features, n_classes):
        """The public key of the releases a fit on ``n_samples`` rows makes.

        From the parameters only, through the same mapping as :meth:`fit`
        (:meth:`_fair_privacy`, :meth:`_fermi_params`): the private search
        plans a candidate with it, so its plan is the fit's event.
        """
        return fermi_plan_key(
            self._fair_privacy((), n_features, n_samples=n_samples),
            self._fermi_params(None, False),
            n_samples=n_samples,
            n_groups=n_groups,
            n_features=n_features,
            n_classes=n_classes,
        )

    @property
    def _classes_private(self):
        # Declared classes are public (a message may list them); only those
        # read from y are withheld.
        return self.classes is None

    _plan_public_counts = ("n_groups", "n_classes")
    # Private column scales need dense rows: the plan reads the layout.
    _plan_reads_layout = True

    def _planned_record(
        self, n_samples, n_features, n_groups=None, n_classes=None, *, sparse=False
    ):
        """The record's event of a fit on ``n_samples`` rows (public inputs only).

        ``n_groups`` is the number of groups the fit sees: that of the
        declared ``groups`` by default, 1 for a fit without
        ``sensitive_features``; ``n_classes`` that of the declared
        ``classes`` (2 when none are declared); ``sparse`` the layout of
        ``X`` (private column scales need dense rows: a sparse plan is
        refused as its fit would be). The event is that of
        :meth:`fit`'s plan
        (:meth:`_fermi_plan`, as :meth:`fit` makes it), the intercept-only
        release included.
        """
        # Declared groups its fit refuses have no plan; declared counts are
        # the fit's: a plan at other counts is not its plan (1 group: a fit
        # without sensitive_features).
        self._check_params()
        if self.groups is not None and n_groups not in (None, 1, len(self.groups)):
            raise ValueError(
                f"n_groups={n_groups} disagrees with the {len(self.groups)} "
                "declared groups."
            )
        stated_classes = n_classes if self.classes is None else None
        n_classes = planned_class_count(self.classes, n_classes)
        if n_groups is None:
            n_groups = 1 if self.groups is None else len(self.groups)
        self._check_planned_counts(n_groups, n_classes, stated_classes)
        privacy = self._fair_privacy((), n_features, sparse, n_samples=n_samples)
        plan = self._fermi_plan(
            privacy,
            self._fermi_params(None, False),
            n_samples,
            n_features,
            n_groups,
            n_classes,
        )
        if plan.fallback is not None:
            return plan.fallback.record
        record = PrivacyRecord.from_event(
            plan.event,
            delta=privacy.budget.delta,
            accountant=privacy.budget.accountant,
            adjacency="add_remove",
            mechanism=(
                "DP-FERMI (thesis Algorithm 10): noisy SGDA, "
                f"{plan.n_steps} steps at Poisson rate "
                f"{plan.sampling_probability:.4g}"
                + (
                    f", {plan.n_candidates} candidate weights selected privately"
                    if plan.n_candidates
                    else ""
                )
                + (
                    "; " + privacy.scaling.describe()
                    if privacy.scaling is not None and privacy.scaling.describe()
                    else ""
                )
            ),
            noise_multiplier=plan.noise.effective,
            sampling_probability=plan.sampling_probability,
            steps=plan.n_steps,
        )
        # As the fit refuses it: a given noise_multiplier may overspend (the
        # message names the multiplier given, not the joint one recorded).
        given = privacy.budget.noise_multiplier
        check_budget(
            record if given is None else replace(record, noise_multiplier=given),
            float(self.epsilon),
            calibrated=privacy.budget.is_calibrated,
        )
        return record

    def _check_planned_counts(self, n_groups, n_classes, stated_classes):
        """Refuse a plan at counts its fit would refuse (public inputs only).

        Beyond the declared sets (:meth:`_check_params`): the counts the plan
        is made for are those of the fit's data, so a fit on such data
        refuses what is decided by them. ``stated_classes`` is the
        ``n_classes`` passed without declared ``classes`` (None: not stated,
        the default of 2 decides nothing). One group has no fairness term,
        so the fit reads no marginals.
        """
        if (
            stated_classes is not None
            and stated_classes > 2
            and self.constraint == "equal_opportunity"
            and self.opportunity_class is None
        ):
            # Only the number of classes decides this refusal (the labels
            # stand in for the private ones the fit reads).
            advantaged_class_index(np.arange(stated_classes), None)
        known_classes = (
            n_classes
            if self.classes is not None
            or (stated_classes is not None and stated_classes >= 2)
            else None
        )
        self._check_group_marginals(known_classes, n_groups if n_groups > 1 else None)

    def _fair_privacy(self, caveats, n_features, sparse=False, n_samples=None):
        """The :class:`FairPrivacy` of the parameters (public inputs only).

        ``n_features``, ``n_samples`` and whether ``X`` is ``sparse`` (public
        layout) fix the column scaling plan
        (:func:`~sklearn_dpfair._solvers._feature_scaling.plan_feature_scaling`).
        """
        public = None if isinstance(self.group_marginals, str) else self.group_marginals
        budget = PrivacyBudget(
            epsilon=float(self.epsilon),
            delta=float(self.delta),
            accountant=self._accountant_kind(),
            noise_multiplier=self.noise_multiplier,
            caveats=tuple(caveats),
        )
        scaling = plan_feature_scaling(
            self.feature_scaling,
            self.feature_bounds,
            n_features,
            budget,
            sparse=sparse,
            fit_intercept=self.fit_intercept,
            n_samples=n_samples,
        )
        if scaling.event is not None:
            # The quantiles' zCDP event is read by the RDP accountant (as
            # DP-SGD's private scales are); the steps' noise is calibrated
            # to what they leave (calibrate_fermi_noise's prior event).
            budget = replace(budget, accountant=ZCDP_ACCOUNTANT)
        return FairPrivacy(
            budget=budget,
            dual_noise_ratio=float(self.dual_noise_ratio),
            marginal_noise_multiplier=_declared(self.marginal_noise_multiplier),
            selection_noise_multiplier=_declared(self.selection_noise_multiplier),
            public_marginals=public,
            scaling=scaling,
        )

    def _non_private_limit(self):
        return math.isinf(self.epsilon) and self.noise_multiplier is None

    def _solver_options(self):
        if not self._non_private_limit():
            return {"small_budget": self.small_budget}
        # The non-private limit ends with a full-batch L-BFGS phase on the
        # same objective, in standardized columns (it converges on any
        # columns; the solver module's tolerance and iteration cap).
        return {"final_phase": "lbfgs", "small_budget": self.small_budget}

    def _set_result_privacy(self, result):
        record = result.record
        if self._non_private_limit() and result.converged is not None:
            # The full-batch phase ran (in memory; a Dask fit has none).
            if self.disparity_bound is not None:
                # No SGDA step ran: the path's L-BFGS iterations, full batch.
                record = non_private_record(
                    record, result.n_final_iter, _FERMI_LIMIT_PATH_SOLVER
                )
            else:
                record = non_private_record(
                    record,
                    record.steps,
                    (
                        _FERMI_LIMIT_NETWORK_SOLVER
                        if self._hidden_layer_sizes()
                        else _FERMI_LIMIT_SOLVER
                    ),
                    sampling=record.sampling_probability,
                )
        self._set_privacy_record(record)
        # The record holds the joint (effective) multiplier; the attribute
        # keeps the meaning of the noise_multiplier parameter.
        self.noise_multiplier_ = result.noise.primal
        self.marginal_noise_multiplier_ = result.noise.marginal
        self.selection_noise_multiplier_ = result.noise.selection
        # Under disparity_bound: the selected candidate's noisy training
        # disparity (post-processing of the released counts).
        self.training_disparity_ = result.disparity
        self.dual_noise_multiplier_ = result.noise.dual
        # The joint multiplier in dp_event_: the record's (the label
        # histogram's on an intercept-only release, where no step ran).
        self.effective_noise_multiplier_ = record.noise_multiplier
        self.dual_clip_norm_ = result.dual_clip_norm
        self.sampling_probability_ = result.record.sampling_probability
        self.accountant_ = result.record.accountant
        self.intercept_only_ = result.intercept_only
        self.constant_comparison_ = result.constant_comparison
        self.choice_noise_multiplier_ = result.noise.choice
        # A choice's outcome is in the attributes only: every warning is the
        # same for neighbouring datasets, and the outcome is not.
        if result.intercept_only and not result.chose_constant:
            # Public inputs only: the rule decided before the data were read.
            warn_at_caller(
                small_budget_message(
                    "DPFERMIClassifier",
                    self.n_features_in_,
                    self.classes_.size,
                    RECORDS_PER_PARAMETER,
                ),
                UserWarning,
            )

    @property
    def sampling_rate_(self):
        """Deprecated alias of ``sampling_probability_``."""
        if not hasattr(self, "sampling_probability_"):
            raise AttributeError("sampling_rate_")
        warn_at_caller(
            "sampling_rate_ is deprecated and will be removed in the next "
            "release; use sampling_probability_ (the privacy record's and "
            "PrivacyBudget's name for the Poisson sampling rate).",
            FutureWarning,
        )
        return self.sampling_probability_

    def _fit_dask(self, X, y, sample_weight, sensitive_features):
        """DP-FERMI on Dask collections; the rows stay on the workers."""
        if not is_dask_collection(X):
            # The fit runs on the workers only where X's rows are: beside
            # an in-memory X the other inputs would be gathered here.
            refuse_dask_beside_in_memory_x(
                type(self).__name__,
                y=y,
                sample_weight=sample_weight,
                sensitive_features=sensitive_features,
            )
        if self._hidden_layer_sizes():
            raise ValueError(_NETWORK_DASK.format(hidden=self.hidden_layer_sizes))
        for what, refused in (
            ("disparity_bound", self.disparity_bound is not None),
            ("record_training_loss=True", self.record_training_loss),
            ("device='cuda'", self.device == "cuda"),
        ):
            if refused:
                raise ValueError(_DASK_OPTIONS.format(what=what))
        set_dask_input_features(self, X)
        # Public bounds only (a ValueError naming them otherwise): every
        # partition maps its rows by the same map, at any epsilon (the Dask
        # fit has no full-batch phase that would solve on raw columns).
        scaling_plan = public_scaling_plan(
            self.feature_scaling,
            self.feature_bounds,
            self.n_features_in_,
            where="a Dask collection X",
            fit_intercept=self.fit_intercept,
        )
        caveats = []
        if sensitive_features is None:
            warn_at_caller(_NO_SENSITIVE.format(name="DPFERMIClassifier"), UserWarning)
        elif self.groups is None:
            warn_at_caller(_GROUPS_INFERRED, PrivacyLeakWarning)
            caveats.append("group set inferred from the private data")
        data = distribute_training_data(
            X,
            y,
            sample_weight,
            classes=self.classes,
            delta=self.delta,
            fit_intercept=self.fit_intercept,
            private=not (math.isinf(self.epsilon) and self.noise_multiplier is None),
            sensitive_features=sensitive_features,
            # Without sensitive features every row is in one group, as in
            # memory, whatever groups are declared.
            groups=None if sensitive_features is None else self.groups,
            scaling=public_feature_scaling(scaling_plan),
            estimator_name=type(self).__name__,
        )
        try:
            classes = data.classes
            groups = data.groups
            if groups is None:
                groups = np.array([None], dtype=object)
            elif groups.size == 1:
                warn_at_caller(
                    _ONE_GROUP.format(name="DPFERMIClassifier"),
                    UserWarning,
                )
            constraint = make_constraint(
                self.constraint,
                class_index=self._opportunity_index(classes),
                weighting=self.eo_weighting,
            )
            privacy, _, _ = self._privacy(
                data.n_samples, [*data.caveats, *caveats], data.n_features
            )
            # The record names the public map the partitions applied.
            privacy = replace(privacy, scaling=scaling_plan)
            params = self._fermi_params(constraint, False)
            plan = self._fermi_plan(
                privacy,
                params,
                data.n_samples,
                data.n_features,
                len(groups),
                classes.size,
            )
            # As in memory: a ledger that cannot record the planned event
            # refuses before the first partition round.
            self._check_ledger_accepts(plan.event)
            if plan.fallback is None:
                warn_unscaled_columns(
                    data, self, data.private, off_scale=partition_columns_off_unit_scale
                )
            result = fit_fermi_dask(
                data,
                plan,
                params,
                privacy,
                group_labels=self._group_names(groups),
                rng=check_noise_generator(self.random_state),
                progress=progress_printer(self.verbose, type(self).__name__, "epoch"),
            )
        finally:
            data.release()
        return self._set_fitted(np, data.dtype, classes, groups, result, False)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # The default budget cannot always reach the accuracy thresholds of
        # scikit-learn's common checks on their tiny datasets.
        tags.classifier_tags.poor_score = True
        return tags
