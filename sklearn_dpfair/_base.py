# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Shared parameter constraints, privacy bookkeeping and linear prediction.

Predictions of a fitted linear model are finite for any finite input: a row
whose scores overflow (a feature of 1e300, say) is recomputed by a scaled
product and saturated at the largest float
(:func:`~sklearn_dpfair.utils._array_api.finite_linear_scores`), and
probabilities and log-probabilities are computed from those scores without
``inf - inf`` or ``log(0)``. Other rows are computed exactly as before.
"""

import contextlib
import contextvars
import dataclasses
import functools
import inspect
import math
import types
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from .privacy._ledger import PrivacyLedger
from .privacy._plan import PrivacyPlan, check_public_count, check_public_layout
from .privacy._random import noise_seed
from .privacy._releases import check_releases, logged_releases
from .utils._array_api import (
    array_namespace,
    arrays_like,
    detached_input,
    finite_linear_scores,
    input_float_dtypes,
    to_numpy,
)
from .utils._redact import redacted_error, redacting_errors
from .utils._sklearn_compat import Interval, Options, StrOptions
from .utils._validation import validate_data

__all__ = [
    "PRIVACY_PARAMETER_CONSTRAINTS",
    "CLIP_NORM_CONSTRAINT",
    "DELTA_CONSTRAINT",
    "DELTA_OR_ZERO_CONSTRAINT",
    "EPSILON_CONSTRAINT",
    "RANDOM_STATE_CONSTRAINT",
    "SEED_CONSTRAINT",
    "LinearClassifierMixin",
    "LinearRegressorMixin",
    "PrivateEstimatorMixin",
    "ScoreClassifierMixin",
]

#: Least clip norm the private estimators take: below the smallest normal
#: float a clipped term's subnormal entries round by up to half their step
#: each, which can take the term past the clip (a clip norm of 5e-324 gave
#: terms of norm 2 C). Far below any clip norm in use.
MIN_CLIP_NORM = 1e-300
#: The constraint of a ``clip_norm`` parameter.
CLIP_NORM_CONSTRAINT = Interval(Real, MIN_CLIP_NORM, None, closed="left")


class _SeedInterval(Interval):
    """An :class:`Interval` of int seeds of any size.

    Bools are refused, as by every :class:`Interval` of the package: the
    ``"random_state"`` constraint of scikit-learn takes ``True`` as the seed
    1, while :func:`~sklearn_dpfair.privacy.check_noise_generator` refuses
    it (a bool is a flag, not a seed).
    """

    # A seed is read as an int (numpy's generators take any size), never
    # as a float.
    ints_are_floats = False


#: The constraint of a ``random_state`` parameter: None (OS entropy: a
#: release), an int seed, or a RandomState or Generator instance read as a
#: seed (see check_noise_generator). scikit-learn's ``"random_state"`` with
#: bools refused (the same seed range, ``[0, 2**32 - 1]``).
RANDOM_STATE_CONSTRAINT = [
    _SeedInterval(Integral, 0, 2**32 - 1, closed="both"),
    np.random.RandomState,
    np.random.Generator,
    None,
]
#: An int seed >= 0 of any size, bools refused (a meta-estimator's
#: ``random_state``, from which it seeds its parts).
SEED_CONSTRAINT = _SeedInterval(Integral, 0, None, closed="left")

#: The constraint of an ``epsilon`` parameter: a budget in ``(0, inf]``.
EPSILON_CONSTRAINT = [
    Interval(Real, 0, None, closed="neither"),
    Options(Real, {math.inf}),
]
#: The constraint of a ``delta`` parameter: a probability in ``(0, 1)``.
DELTA_CONSTRAINT = [Interval(Real, 0, 1, closed="neither")]
#: The constraint of a ``delta`` parameter that may be 0 (pure epsilon-DP).
DELTA_OR_ZERO_CONSTRAINT = [Interval(Real, 0, 1, closed="left")]

#: Ledger entries of the checked fit running in this context (a list of
#: ``(ledger, kwargs)``), or None outside one: a fit's entries are recorded
#: only once its releases have passed the run-time check
#: (:func:`_releases_checked`), so that a refused fit leaves no entry.
_PENDING_LEDGER_ENTRIES = contextvars.ContextVar(
    "sklearn_dpfair_pending_ledger_entries", default=None
)

#: Constraints of the privacy parameters every private estimator shares.
PRIVACY_PARAMETER_CONSTRAINTS = {
    "epsilon": EPSILON_CONSTRAINT,
    "delta": DELTA_CONSTRAINT,
    # A PrivacyLedger names its kind and records every fit (cost of tuning).
    "accountant": [StrOptions({"rdp", "pld"}), PrivacyLedger],
    "random_state": RANDOM_STATE_CONSTRAINT,
}


# The least value of each public count that a fit can see: two classes,
# one group (a fit without sensitive features) and one silo. An estimator
# refuses what its own fits refuse beyond that (e.g. more silos than rows).
_LEAST_PUBLIC_COUNT = {"n_classes": 2, "n_groups": 1, "n_silos": 1}


class PrivateEstimatorMixin:
    """Fitted privacy attributes and their human-readable summary.

    A private estimator calls :meth:`_set_privacy_record` once, at the end of
    a successful fit, which sets ``epsilon_``, ``delta_``, ``dp_event_``,
    ``noise_multiplier_``, ``adjacency_``, ``privacy_caveats_`` and
    ``privacy_record_``. A fit given a ``random_state`` other than None is
    seeded: its record carries the seed's fingerprint
    (:func:`~sklearn_dpfair.privacy._random.noise_seed`) and says that it is
    not a private release, and a ledger refuses to compose it with a fit
    that drew the same noise.

    Every ``fit`` a subclass defines is checked (:func:`_releases_checked`):
    the releases its mechanisms made must be exactly those its ``dp_event_``
    accounts, or it raises and the estimator is left as it was before.
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # Also a fit inherited from a base that is not private itself
        # (DPFERMIClassifier's, from the FERMI base).
        fit = getattr(cls, "fit", None)
        if fit is not None and not getattr(fit, "releases_checked", False):
            cls.fit = _releases_checked(fit)
        for name in _REDACTED_METHODS:
            _redact_method(cls, name)

    #: Public counts besides ``n_samples`` and ``n_features`` that
    #: :meth:`privacy_plan` accepts (e.g. ``("n_groups",)``).
    _plan_public_counts = ()

    #: Whether the event depends on X's layout (dense or sparse): then
    #: :meth:`_planned_record` takes ``sparse=``.
    _plan_reads_layout = False

    #: Whether the event may depend on X's column names and dtypes (a
    #: search over private pipelines that select DataFrame columns): then
    #: :meth:`privacy_plan` takes ``feature_names=`` and
    #: :meth:`_planned_record` ``schema=``.
    _plan_reads_schema = False

    def privacy_plan(self, n_samples, n_features, *, sparse=False, **public_counts):
        """The privacy event a fit on ``n_samples`` rows will record.

        Made from the parameters and the public counts only, before any
        data is read, by the functions ``fit`` builds its record with: for
        a fit with the same parameters on ``n_samples`` rows and
        ``n_features`` columns, ``plan.dp_event`` equals ``dp_event_`` and
        ``plan.epsilon`` equals ``epsilon_``. Private searches, pipelines
        and ledgers read it to compose fits before running them.

        Parameters
        ----------
        n_samples : int
            Number of training rows (public under add/remove adjacency, as
            in every fit of this package).
        n_features : int
            Number of columns.
        sparse : bool, default=False
            Whether the fit's ``X`` will be a scipy sparse matrix, or a
            DataFrame whose columns are all pandas ``SparseDtype`` (which
            validation makes one). The layout is a property of the
            container, not of the records, so the plan may depend on it:
            estimators that skip their private column scaling on sparse
            ``X`` (``HeavyTailDPRegressor``, ``SemiDPLinearRegression``)
            spend nothing on it there; the others' events do not depend on
            it. An estimator that refuses
            sparse ``X`` refuses ``sparse=True``.
        **public_counts : int
            The other public counts the estimator's event depends on, where
            it has some (see the estimator's ``privacy_plan`` notes). A
            private search also takes ``feature_names``, X's columns, for
            private pipelines that select them (see its
            ``candidate_plans``).

        Returns
        -------
        plan : PrivacyPlan
            Its ``dp_event``, ``epsilon``, ``delta``, ``accountant``,
            ``adjacency`` and a description of the releases.

        Raises
        ------
        ValueError
            If a parameter is invalid, or the event depends on a quantity
            that is read from the data (then no plan can be made before the
            data is read; the message names the public parameter to set).
        TypeError
            For a public count this estimator does not take, or
            ``sparse=True`` where the fit refuses sparse ``X``.

        Examples
        --------
        >>> from sklearn_dpfair.linear_model import HeavyTailDPRegressor
        >>> reg = HeavyTailDPRegressor(epsilon=1.0)
        >>> dense = reg.privacy_plan(600, 3)
        >>> csr = reg.privacy_plan(600, 3, sparse=True)  # no private scales
        >>> dense.dp_event == csr.dp_event
        False
        """
        self._validate_params()
        n_samples = check_public_count(n_samples, "n_samples")
        n_features = check_public_count(n_features, "n_features")
        sparse = check_public_layout(sparse)
        if sparse and not self.__sklearn_tags__().input_tags.sparse:
            raise TypeError(
                f"{type(self).__name__} does not accept sparse X: its fit "
                "refuses it, so no sparse fit can be planned."
            )
        layout = {"sparse": bool(sparse)} if self._plan_reads_layout else {}
        if self._plan_reads_schema:
            layout["schema"] = public_counts.pop("feature_names", None)
        unknown = sorted(set(public_counts) - set(self._plan_public_counts))
        if unknown:
            accepted = ", ".join(self._plan_public_counts) or "none"
            raise TypeError(
                f"{type(self).__name__}.privacy_plan() got unexpected public "
                f"count(s) {', '.join(unknown)}; it accepts: {accepted}."
            )
        public_counts = {
            name: check_public_count(
                value, name, minimum=_LEAST_PUBLIC_COUNT.get(name, 0)
            )
            for name, value in public_counts.items()
        }
        record = self._planned_record(n_samples, n_features, **layout, **public_counts)
        if record is not None:
            self._check_ledger_accepts(record.dp_event, record.adjacency)
        return PrivacyPlan.from_record(
            record,
            estimator=type(self).__name__,
            additional_delta=self._planned_additional_delta(n_features),
            public=(
                ("n_samples", n_samples),
                ("n_features", n_features),
                *((("sparse", True),) if sparse else ()),
                *sorted(public_counts.items()),
            ),
        )

    def _check_ledger_accepts(self, dp_event, adjacency="add_remove"):
        """Raise when the ``accountant`` ledger could not record ``dp_event``.

        Its fit would otherwise run to the end and be refused only when it
        records (a PLD ledger cannot read the zCDP draws of private column
        scales): the plan refuses, and a fit that makes its plan before
        reading the data asks here first, before its first release.
        """
        ledger = getattr(self, "accountant", None)
        if isinstance(ledger, PrivacyLedger):
            ledger.check_recordable(dp_event, adjacency=adjacency)

    def _planned_record(self, n_samples, n_features, **public_counts):
        """The record a fit on ``n_samples`` rows will set (public inputs only)."""
        raise NotImplementedError(
            f"{type(self).__name__} does not implement _planned_record."
        )

    def _planned_additional_delta(self, n_features):
        """Delta a fit spends outside its event (union bound); 0 for most."""
        return 0.0

    def _accountant_kind(self):
        """Name of the dp-accounting accountant ("rdp" or "pld") to use.

        Solvers take this string; the ``accountant`` parameter may later also
        accept a ledger object, which then names its kind.
        """
        return getattr(self.accountant, "kind", self.accountant)

    def _set_privacy_record(self, record):
        # fit reads random_state without advancing it, so this is the seed
        # the fit's generator started from.
        seed = noise_seed(getattr(self, "random_state", None))
        if seed != record.seed:
            record = dataclasses.replace(record, seed=seed)
        self.privacy_record_ = record
        self.epsilon_ = record.epsilon
        self.delta_ = record.delta
        self.dp_event_ = record.dp_event
        self.noise_multiplier_ = record.noise_multiplier
        self.adjacency_ = record.adjacency
        self.privacy_caveats_ = list(record.caveats)
        ledger = getattr(self, "accountant", None)
        if isinstance(ledger, PrivacyLedger):
            self._record_in_ledger(ledger, record, seed=record.seed)

    def _record_in_ledger(self, ledger, record, *, seed=None):
        """Record the release ``record`` describes in ``ledger``, named after this class.

        Inside a checked ``fit`` (:func:`_releases_checked`) the entry is
        held until the fit has returned and its releases have been checked
        against its record: a fit that raises, or whose releases are not
        those it accounts, records nothing. Elsewhere it is recorded now.
        """
        entry = self._ledger_entry(record, seed=seed)
        pending = _PENDING_LEDGER_ENTRIES.get()
        if pending is None:
            _commit_ledger_entries([(ledger, entry)])
        else:
            pending.append((ledger, entry))

    def _charge_before_raising(self, plan):
        """Record ``plan`` in the ``accountant`` ledger now, for a fit about to raise.

        See :func:`charged_if_raised_after_releases`, the one caller.

        Parameters
        ----------
        plan : PrivacyPlan, PrivacyRecord or callable
            The fit's planned event (public inputs only), or a function
            of no argument that returns it (made only when charged).

        Returns
        -------
        charged : bool
            Whether the estimator's ``accountant`` is a ledger (charged).
        """
        ledger = getattr(self, "accountant", None)
        if not isinstance(ledger, PrivacyLedger):
            return False
        if callable(plan):
            plan = plan()
        entry = self._ledger_entry(
            plan,
            seed=noise_seed(getattr(self, "random_state", None)),
            note="raised after releasing: its planned event",
        )
        _commit_ledger_entries([(ledger, entry)])
        return True

    def _ledger_entry(self, record, *, seed, note=None):
        """The keywords of :meth:`PrivacyLedger.record` for ``record``.

        ``record`` is a PrivacyRecord or a PrivacyPlan; the entry's source
        is this class's name, followed by ``note`` in parentheses if given.
        """
        source = type(self).__name__
        return dict(
            dp_event=record.dp_event,
            delta=record.delta,
            adjacency=record.adjacency,
            epsilon=record.epsilon,
            source=source if note is None else f"{source} ({note})",
            seed=seed,
        )

    def privacy_summary(self):
        """Human-readable statement of the privacy guarantee of this fit.

        Returns
        -------
        summary : str
            The guarantee in plain words (what is protected, against whom,
            what is public, what is not covered), then the technical record:
            epsilon, delta, adjacency, mechanism, noise and caveats.
        """
        check_is_fitted(self, "privacy_record_")
        return str(self.privacy_record_)


#: Methods of a private estimator that validate rows besides ``fit`` (whose
#: wrapper redacts its own errors, :func:`restored_on_failure`): the rows
#: they read can be private too (a private test set, the training rows).
_REDACTED_METHODS = (
    "predict",
    "predict_proba",
    "predict_log_proba",
    "decision_function",
    "transform",
    "inverse_transform",
    "fit_transform",
    "score",
)


def _redact_method(cls, name):
    """Make ``cls.name`` raise redacted copies of third-party validation errors.

    scikit-learn's and numpy's messages print the offending values ("could
    not convert string to float: 'Alice'", a 1-D ``X`` whole, the labels of
    a mixed ``y``): a method of ``cls`` that validates rows raises a copy
    without them (:func:`~sklearn_dpfair.utils._redact.redacting_errors`).
    A plain function is wrapped on ``cls``; a method made available by
    ``available_if`` has the function its descriptor calls wrapped. Each
    definition is wrapped once.
    """
    method = inspect.getattr_static(cls, name, None)
    if method is None or getattr(method, "redacts_errors", False):
        return
    if isinstance(method, types.FunctionType):
        wrapped = redacting_errors(method)
        wrapped.redacts_errors = True
        setattr(cls, name, wrapped)
    elif isinstance(getattr(method, "fn", None), types.FunctionType):
        # scikit-learn's available_if descriptor calls ``fn``.
        method.fn = redacting_errors(method.fn)
        method.redacts_errors = True


def restored_on_failure(fit):
    """Wrap ``fit``: a fit that raises leaves the estimator as it was.

    The attributes are restored to those it had before ``fit`` (a refit
    that fails keeps the previous model whole, not its new
    ``n_features_in_`` beside its old coefficients). A ValueError or
    TypeError whose message would print private values (third-party
    validation: :mod:`~sklearn_dpfair.utils._redact`) leaves ``fit`` with
    those values redacted. Private fits get it through
    :func:`_releases_checked`; a non-private estimator's ``fit`` is
    decorated with it directly. ``fit`` runs with numpy's underflows
    ignored, whatever ``np.seterr`` says.
    """

    @functools.wraps(fit)
    def restoring_fit(self, *args, **kwargs):
        before = dict(vars(self))
        try:
            # An underflow to 0 (or a subnormal) is the right result in every
            # clip, norm and step: under np.seterr(under="raise") it raised a
            # FloatingPointError for a record near 1e154 or 1e-320 and not
            # for its neighbour, an error that depended on one private value.
            with np.errstate(under="ignore"):
                return fit(self, *args, **kwargs)
        except Exception as exc:
            vars(self).clear()
            vars(self).update(before)
            if not isinstance(exc, (ValueError, TypeError)):
                raise
            # A third-party validation message may print the rows
            # (redacted_error); the original, chained, would print them too.
            redacted = redacted_error(exc)
            if redacted is None:
                if exc.__suppress_context__:
                    # Raised "from None" inside a handler: the exception it
                    # replaced (whose message may quote a private value) is
                    # hidden from tracebacks but still attached; drop it.
                    exc.__context__ = None
                raise
        # Raised outside the handler: there ``from None`` would only hide the
        # original from printed tracebacks, still attached as __context__.
        raise redacted

    return restoring_fit


@contextlib.contextmanager
def charged_if_raised_after_releases(estimator, plan, *, assume_released=False):
    """Charge ``plan`` to ``estimator``'s ledger if the block raises after releasing.

    A checked fit that raises records nothing (its ledger entries wait for
    the check, :func:`_releases_checked`): right for a fit refused before
    its first release. A fit that raises after some of its mechanisms
    released (a federated fit whose server refuses a diverged step once the
    silos sent the messages of the earlier rounds; a pipeline's step that
    fails after an earlier step's release; a search whose run fails after
    earlier runs) has released them, and when and why it failed can be a
    function of them. Its plan bounds what ran (a prefix of the planned
    releases composes to no more), so the ``accountant`` ledger records it
    before the error propagates, and a retry is composed with it. The error
    is annotated with a note saying so. (A Dask fit whose worker is lost for
    good is not charged: the noisy steps never left the driver and its
    workers, and the loss depends on neither the rows nor the noise.)

    A release is anything logged inside the block
    (:func:`~sklearn_dpfair.privacy._releases.log_release`), or a federated
    fit, whose silos keep their own logs
    (:func:`~sklearn_dpfair.privacy._releases.mark_unchecked`).

    Parameters
    ----------
    estimator : PrivateEstimatorMixin
        The estimator whose ``fit`` runs the block.
    plan : PrivacyPlan, PrivacyRecord or callable
        Its planned event, made from public inputs before the block, or a
        function of no argument that makes it (only when it is charged:
        its epsilon can take an accountant's time).
    assume_released : bool, default=False
        Charge on any error, whatever the log holds: for a block whose
        releases may be made in other processes (joblib workers), which
        this process's log does not see.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.exceptions import DivergedModelError
    >>> from sklearn_dpfair.linear_model import DPLogisticRegression
    >>> from sklearn_dpfair.privacy import PrivacyLedger
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 2))
    >>> y = (X[:, 0] > 0).astype(int)
    >>> ledger = PrivacyLedger()
    >>> clf = DPLogisticRegression(
    ...     classes=[0, 1], learning_rate=1e308, noise_multiplier=100.0,
    ...     accountant=ledger, random_state=0,
    ... )
    >>> try:
    ...     clf.fit(X, y, silos=np.repeat([0, 1], 200))
    ... except DivergedModelError:
    ...     pass
    >>> len(ledger.entries), hasattr(clf, "coef_")
    (1, False)
    """
    with logged_releases() as log:
        try:
            yield
        except Exception as exc:
            released = assume_released or bool(+log.counts) or log.unchecked is not None
            if released and estimator._charge_before_raising(plan):
                exc.add_note(
                    f"{type(estimator).__name__} raised after some of its "
                    "releases: its planned event is recorded in its accountant "
                    "ledger."
                )
            raise


def _releases_checked(fit):
    """Wrap ``fit``: what runs is what is accounted, checked before it returns.

    The releases of the fit's mechanisms are logged
    (:func:`~sklearn_dpfair.privacy._releases.logged_releases`) and compared
    with the ``dp_event`` of the record the fit set; on a mismatch
    :class:`~sklearn_dpfair.exceptions.PrivacyAccountingError` is raised and,
    as for any fit that raises (:func:`restored_on_failure`), the
    estimator's attributes are those it had before ``fit``: no half-fitted
    model, nothing released. The fit's entries in a
    :class:`~sklearn_dpfair.privacy.PrivacyLedger` (its ``accountant``)
    are recorded only after the check passes: a refused fit, or one that
    raises, leaves the ledger as it was, unless it raises after releasing
    (:func:`charged_if_raised_after_releases`).
    """

    @functools.wraps(fit)
    def checked_fit(self, *args, **kwargs):
        previous = getattr(self, "privacy_record_", None)
        # The fit's ledger entries wait for the check (_record_in_ledger):
        # a ledger must not count a fit that is then refused. A nested fit
        # (a pipeline's step, a search's candidate) holds and records its
        # own entries when its own check passes.
        pending = []
        token = _PENDING_LEDGER_ENTRIES.set(pending)
        try:
            with logged_releases() as log:
                result = fit(self, *args, **kwargs)
        finally:
            _PENDING_LEDGER_ENTRIES.reset(token)
        record = getattr(self, "privacy_record_", None)
        if record is not None and record is not previous:
            check_releases(log, record.dp_event, what=f"{type(self).__name__}.fit")
        _commit_ledger_entries(pending)
        return result

    checked_fit = restored_on_failure(checked_fit)
    checked_fit.releases_checked = True
    return checked_fit


def _commit_ledger_entries(entries):
    """Record ``(ledger, kwargs)`` entries, each ledger asked first.

    Every ledger is asked whether it accepts its entry
    (:meth:`~sklearn_dpfair.privacy.PrivacyLedger.check_recordable`)
    before any is written (where there are several), so that a refusal (a
    ledger that cannot compose the event) leaves all of them as they were,
    not some written.
    """
    if len(entries) > 1:
        for ledger, entry in entries:
            ledger.check_recordable(entry["dp_event"], adjacency=entry["adjacency"])
    for ledger, entry in entries:
        ledger.record(**entry)


class LinearRegressorMixin(RegressorMixin):
    """Prediction for linear regressors with ``coef_`` of shape (n_features,)."""

    def predict(self, X):
        """Predict with the linear model ``X @ coef_ + intercept_``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted targets; finite for finite ``X`` (a prediction beyond
            the largest float is saturated to it).
        """
        check_is_fitted(self)
        # Predictions are computed in X's namespace and on its device (a
        # torch tensor under array_api_dispatch); the model moves there.
        X = validate_data(
            self,
            detached_input(X),
            reset=False,
            dtype=input_float_dtypes(X),
            accept_sparse="csr",
        )
        if sp.issparse(X):
            return _sparse_linear_scores(X, self.coef_[None, :], self.intercept_)
        coef, intercept = arrays_like(X, self.coef_, self.intercept_)
        return _dense_linear_scores(array_namespace(X), X, coef, intercept)


def _dense_linear_scores(xp, X, coef, intercept):
    """``X @ coef + intercept`` in namespace ``xp``; rows that overflow saturated."""
    with np.errstate(over="ignore", invalid="ignore"):
        scores = xp.matmul(X, coef) + intercept
    return finite_linear_scores(scores, X, coef, intercept)


def _sparse_linear_scores(X, coef, intercept):
    """``X @ coef.T + intercept`` for CSR ``X``; rows that overflow densified alone."""
    # Sparse input lives on the host: score it with host copies of the model.
    # A Python float intercept stays one: numpy promotes it weakly, so a
    # float32 model scores float32 rows in float32, as on dense rows (an
    # array of it would be float64 and promote every score).
    coef = to_numpy(coef)
    if not isinstance(intercept, float):
        intercept = to_numpy(intercept)
    with np.errstate(over="ignore", invalid="ignore"):
        scores = np.asarray(X @ coef.T) + intercept
    bad = ~np.isfinite(scores).all(axis=1)
    if bad.any():
        scores[bad] = finite_linear_scores(
            scores[bad], X[bad].toarray(), coef.T, intercept
        )
    return scores.ravel() if scores.shape[1] == 1 else scores


class ScoreClassifierMixin(ClassifierMixin):
    """Labels and probabilities from raw scores and a loss.

    A subclass defines ``_raw(X)`` (the scores, shape (n_samples, 1) for a
    binary problem or (n_samples, n_classes)) and ``_loss_for_prediction()``
    (the loss whose link maps scores to probabilities): linear models and
    networks alike.
    """

    def predict(self, X):
        """Predicted class labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples to score.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The most probable class of each sample.
        """
        check_is_fitted(self)
        proba = self.predict_proba(X)
        # Labels stay numpy (they may be strings), whatever the backend.
        return self.classes_[to_numpy(array_namespace(proba).argmax(proba, axis=1))]

    def predict_proba(self, X):
        """Class probabilities, columns ordered as ``classes_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples to score.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Probability of each class.
        """
        check_is_fitted(self)
        return self._loss_for_prediction().predict_proba(self._raw(X))

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples to score.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Log-probability of each class; finite for finite ``X``.
        """
        check_is_fitted(self)
        loss = self._loss_for_prediction()
        raw = self._raw(X)
        proba = loss.predict_proba(raw)
        xp = array_namespace(proba)
        with np.errstate(divide="ignore"):
            log_proba = xp.log(proba)
        finite = xp.isfinite(log_proba)
        if bool(xp.all(finite)):
            return log_proba
        # A probability that underflowed to 0: its log-softmax instead of
        # log(0) = -inf (other entries keep their value, bit for bit).
        return xp.where(finite, log_proba, loss.predict_log_proba(raw))


class LinearClassifierMixin(ScoreClassifierMixin):
    """Prediction for linear classifiers with ``coef_`` of shape (K or 1, d).

    Binary problems keep one row of coefficients (the logit of
    ``classes_[1]``), as in scikit-learn's ``LogisticRegression``.
    """

    def decision_function(self, X):
        """Raw scores: logits of ``classes_[1]`` (binary) or of each class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples to score.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            Raw linear scores; finite for finite ``X`` (a score beyond the
            largest float is saturated to it).
        """
        check_is_fitted(self)
        # Scores are computed in X's namespace and on its device (a torch
        # tensor under array_api_dispatch), wherever the model was fitted:
        # the model moves there.
        # Sparse X is accepted here (a model is numpy once fitted); fit
        # decides which solvers take it.
        X = validate_data(
            self,
            detached_input(X),
            reset=False,
            dtype=input_float_dtypes(X),
            accept_sparse="csr",
        )
        if sp.issparse(X):
            return _sparse_linear_scores(X, self.coef_, self.intercept_)
        xp = array_namespace(X)
        coef, intercept = arrays_like(X, self.coef_, self.intercept_)
        scores = _dense_linear_scores(xp, X, coef.T, intercept)
        return xp.reshape(scores, (-1,)) if scores.shape[1] == 1 else scores

    def _raw(self, X):
        scores = self.decision_function(X)
        return scores[:, None] if scores.ndim == 1 else scores

