# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""White-box audit of DP-SGD-type solvers with gradient canaries.

Nasr et al. (2023), "Tight auditing of differentially private machine
learning": instead of a canary *record*, whose influence on the final model
is diluted by the other records and the many noisy steps, the auditor
inserts a crafted per-example *gradient* and observes every noisy step. The
canary here is a *Dirac* gradient: norm equal to the clip norm ``C``, in a
coordinate where no real record has any gradient. The auditor appends
all-zero feature columns to ``X`` (a zero feature gives every record a zero
gradient in its coefficient, whatever the loss and the clipping), and
:func:`~sklearn_dpfair.privacy._mechanism.observe_privatize` lets it

1. add ``C e_j`` to the clipped gradient sum of a step with the Poisson
   probability ``q`` of that step, for a canary ``j`` that is "in" (a record
   with that gradient, sampled like every record under add/remove
   adjacency), and nothing for a canary that is "out";
2. read back the noisy sum's coordinate ``j`` after the noise: what the
   released iterates reveal, since the learning rate and the L2 term are
   public (``w_{t+1} - w_t`` gives the noisy gradient).

Normalised by ``C``, canary ``j``'s observation at step ``t`` is
``x_t = b_t + sigma z_t`` with ``z_t ~ N(0, 1)`` and ``b_t ~ Bernoulli(q)``
("in") or ``b_t = 0`` ("out"), where ``sigma`` is the noise multiplier the
mechanism declares. The audit statistic is the log-likelihood ratio of the
whole trace under these two hypotheses (the Neyman-Pearson test if the
mechanism is as declared):

    Lambda = sum_t log(1 - q + q exp((2 x_t - 1) / (2 sigma^2))).

The errors of a threshold on ``Lambda`` over independent trials give the
Clopper-Pearson lower bound on epsilon of :func:`audit_scores`, compared
with the estimator's own ``dp_event_``. That event accounts the whole
transcript of noisy sums (adaptive composition covers every intermediate
iterate, not only the final model), so it is a valid claim for what the
white-box auditor sees.

Several canaries per fit: their coordinates receive independent noise (the
Gaussian mechanism's noise is isotropic, and the zero columns never touch the
other coordinates' updates), so one fit with ``k`` canaries, half "in" and
half "out", gives ``k`` independent trials. That independence is a property
of the mechanism as declared; ``n_canaries=1`` (alternating "in" and "out"
across fits) audits without relying on it.

What this audit checks: the noise actually added per step and the number of
noisy steps, against the recorded event. What it cannot check: the clipping
(the canary is crafted at norm ``C``), the sampling (the auditor inserts the
canary at the recorded rate ``q`` itself, so a solver that samples records
more often than it records goes unnoticed) and any private preprocessing
outside the noisy sums (private medians, histograms), whose share of the
claim only makes the claim larger.
"""

import math
import numbers

import dp_accounting
import numpy as np
import scipy.sparse as sp
from sklearn.base import clone

from ..pipeline._steps import is_passthrough
from ..preprocessing._bounds import check_bounds
from ..privacy._mechanism import block_position, observe_privatize
from ..utils._array_api import from_host, to_numpy
from ._audit import record_additional_delta, seed_sequence
from ._bounds import check_count
from ._distinguish import audit_scores, check_audit_options, claimed_epsilons
from ._fits import fit_clone, repeat_quietly, require_claim

__all__ = [
    "audit_gradient_canary",
    "canary_allocation_log_likelihood_ratio",
    "canary_log_likelihood_ratio",
]


def _step_log_ratios(x, noise_multiplier):
    """Per-step log-likelihood ratio of N(1, sigma^2) against N(0, sigma^2).

    ``(2 x - 1) / (2 sigma^2)`` for each observation ``x`` (in clip-norm
    units), with one declared ``sigma`` per step (or one for all).
    """
    sigma = np.asarray(noise_multiplier, dtype=float)
    if np.any(~np.isfinite(sigma)) or np.any(sigma <= 0):
        raise ValueError("The noise multiplier must be positive and finite.")
    if x.ndim == 2 and sigma.ndim == 1:
        sigma = sigma[:, None]
    return (2.0 * x - 1.0) / (2.0 * sigma**2)


def canary_log_likelihood_ratio(observations, noise_multiplier, sampling_probability):
    """Log-likelihood ratio "canary in" vs "out" of one canary's trace.

    Parameters
    ----------
    observations : array-like of shape (n_steps,) or (n_steps, n_canaries)
        Noisy sums at the canary's coordinate, divided by the clip norm.
    noise_multiplier : float or array-like of shape (n_steps,)
        Declared noise multiplier of each step.
    sampling_probability : float
        Poisson rate ``q`` in (0, 1] at which an "in" canary enters a step.

    Returns
    -------
    llr : float or ndarray of shape (n_canaries,)
        ``sum_t log(1 - q + q exp((2 x_t - 1) / (2 sigma_t^2)))``: the log of
        the likelihood of the trace when the canary's gradient ``1`` enters
        each step with probability ``q``, over that when it never does, both
        with Gaussian noise of standard deviation ``sigma_t``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.audit import canary_log_likelihood_ratio
    >>> # q = 1: a sum of Gaussian log-likelihood ratios.
    >>> float(canary_log_likelihood_ratio([1.0, 0.0], 1.0, 1.0))
    0.0
    >>> float(canary_log_likelihood_ratio([1.0, 1.0], 1.0, 0.5)) > 0
    True
    """
    x = np.asarray(observations, dtype=float)
    q = float(sampling_probability)
    if not 0 < q <= 1:
        raise ValueError(f"sampling_probability must be in (0, 1], got {q!r}.")
    a = _step_log_ratios(x, noise_multiplier)
    log_out = math.log1p(-q) if q < 1 else -math.inf
    return np.logaddexp(log_out, math.log(q) + a).sum(axis=0)


def canary_allocation_log_likelihood_ratio(observations, noise_multiplier, steps_per_epoch):
    """Log-likelihood ratio "in" vs "out" of a canary under random allocation.

    Balls-and-bins batches put an "in" canary in exactly one of the
    ``steps_per_epoch`` steps of every epoch, uniformly and independently
    across epochs (the sampling that
    :class:`~sklearn_dpfair.privacy._random_allocation.RandomAllocationDpEvent`
    accounts); the Neyman-Pearson statistic of a trace is then, per epoch,
    the log of the average over its steps of the Gaussian likelihood ratio,
    summed over the epochs.

    Parameters
    ----------
    observations : array-like of shape (n_steps,) or (n_steps, n_canaries)
        Noisy sums at the canary's coordinate, divided by the clip norm;
        ``n_steps`` a multiple of ``steps_per_epoch``.
    noise_multiplier : float or array-like of shape (n_steps,)
        Declared noise multiplier of each step.
    steps_per_epoch : int
        Steps per epoch ``t``.

    Returns
    -------
    llr : float or ndarray of shape (n_canaries,)
        The log-likelihood ratio of each canary's trace; large values say
        "in".

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.audit import canary_allocation_log_likelihood_ratio
    >>> # One step per epoch: the canary is in every step.
    >>> float(canary_allocation_log_likelihood_ratio([1.0, 0.0], 1.0, 1))
    0.0
    """
    x = np.asarray(observations, dtype=float)
    t = int(steps_per_epoch)
    if t < 1 or x.shape[0] % t:
        raise ValueError(
            f"{x.shape[0]} steps are not whole epochs of {steps_per_epoch!r} steps."
        )
    a = _step_log_ratios(x, noise_multiplier)
    a = np.broadcast_to(a, x.shape).reshape((x.shape[0] // t, t) + x.shape[1:])
    return (np.logaddexp.reduce(a, axis=1) - math.log(t)).sum(axis=0)


def _is_coefficient_block(a, n_features):
    """Whether a privatized sum is the coefficient block the canaries sit in.

    The first block of a stacked release (a linear model's coefficients, a
    network's first layer), or a lone release: a later block of the same
    shape (a hidden layer as wide as X) is not it.
    """
    return (
        len(a.shape) == 2 and a.shape[0] == n_features and block_position() in (None, 0)
    )


class _StepCounter:
    """Counts a fit's noisy sums over its coefficients, changing nothing."""

    def __init__(self, n_features):
        self.n_features = n_features
        self.steps = 0

    def before_noise(self, mechanism, clipped_sum):
        return clipped_sum

    def after_noise(self, mechanism, noisy_sum):
        self.steps += _is_coefficient_block(noisy_sum, self.n_features)


def _counted_fit(estimator, X, y, fit_params, seed, show_warnings=False):
    """A fit and the number of noisy coefficient sums it released."""
    counter = _StepCounter(X.shape[1])
    with observe_privatize(counter):
        fitted = fit_clone(
            estimator, X, y, fit_params, seed, show_warnings=show_warnings
        )
    return fitted, counter.steps


def _explain_no_noisy_step(estimator, X, y, fit_params, seed, n_canaries):
    """Why the probe fit released no noisy step: the canary columns, or the solver.

    Estimators whose public small-budget rule compares ``n_samples *
    epsilon`` with ``n_features`` (the heavy-tail "dp-sgd" solver) release
    an intercept-only or zero model once the canary columns are appended,
    although the same fit without them takes noisy steps. The fit without
    the canary columns tells the two apart.
    """
    name = type(estimator).__name__
    X = _float_features(X)
    _, steps = _counted_fit(estimator, X, y, fit_params, seed)
    if steps:
        d = X.shape[1]
        raise ValueError(
            f"With the {n_canaries} canary columns appended (n_features {d} -> "
            f"{d + n_canaries}), {name} released no noisy gradient step: its "
            "public small-budget rule, which compares n_samples * epsilon with "
            "n_features, chose an intercept-only (or zero) model, while without "
            f"them it takes {steps} noisy steps. Use fewer canaries "
            "(n_canaries), more rows or a larger epsilon."
        )
    raise ValueError(
        f"{name} released no noisy gradient sum over its coefficients: the "
        "gradient-canary audit applies to DP-SGD-type solvers (noisy clipped "
        "gradient steps of a linear model)."
    )


def _refuse_federated(fit_params, probe=None):
    """Refuse federated fits, which this observer cannot audit.

    Under ISRL-DP every silo privatizes its own messages, so one round
    makes one noisy sum per silo. The observer cannot tell the silos' sums
    apart and would plant the canary in each of them: a record held by
    every silo at once, which no silo's record-level claim covers, and a
    correct estimator would be reported as violating it. The black-box
    audit puts a canary record in one silo and compares with the claim.
    """
    if fit_params.get("silos") is not None or (
        probe is not None and getattr(probe, "silos_", None) is not None
    ):
        raise ValueError(
            "audit_gradient_canary does not audit federated fits (fit_params "
            "with silos=, or a fit that records silos_): the observer would "
            "plant the canary in every silo's noisy release of a round, a record "
            "held by all silos, which the per-silo claim does not cover. Audit a "
            "federated fit with audit_estimator and make_neighbours (a canary "
            "record in one silo: canary_fit_params={'silos': ...}), or audit the "
            "central fit without silos."
        )


class _CanaryObserver:
    """Inserts the canaries into, and reads them from, the primal noisy sums.

    The sums it acts on are the ``(n_features, n_outputs)`` coefficient
    blocks of a linear model's clipped gradient sum; the canaries sit in the
    last ``n_canaries`` rows (the zero columns), output 0. Other noisy sums
    (intercept block, dual block, histograms) pass untouched.
    """

    def __init__(self, n_features, inside, sampling_probability, rng, steps_per_epoch=None):
        self.first = n_features - inside.size
        self.n_features = n_features
        self.inside = inside
        self.q = sampling_probability
        self.rng = rng
        self.traces, self.sigmas = [], []
        # Random allocation: each canary's step in the current epoch.
        self.steps_per_epoch = steps_per_epoch
        self._slot = None

    def _is_target(self, a):
        return _is_coefficient_block(a, self.n_features)

    def before_noise(self, mechanism, clipped_sum):
        if not self._is_target(clipped_sum):
            return clipped_sum
        if not (
            math.isfinite(mechanism.clip_norm)
            and mechanism.clip_norm > 0
            and math.isfinite(mechanism.noise_multiplier)
            and mechanism.noise_multiplier > 0
        ):
            raise ValueError(
                "The gradient-canary audit needs a finite clip norm and positive "
                f"noise; this step has clip_norm={mechanism.clip_norm!r} and "
                f"noise_multiplier={mechanism.noise_multiplier!r}."
            )
        data_part = to_numpy(clipped_sum[self.first :, 0])
        if np.any(data_part != 0):
            raise ValueError(
                "The records have a nonzero gradient in the canary columns: the "
                "estimator does not treat an all-zero feature as carrying no "
                "gradient, so the Dirac canary is not isolated."
            )
        if self.steps_per_epoch is None:
            coins = self.inside & (self.rng.random(self.inside.size) < self.q)
        else:
            step = len(self.traces) % self.steps_per_epoch
            if step == 0:
                self._slot = self.rng.integers(self.steps_per_epoch, size=self.inside.size)
            coins = self.inside & (self._slot == step)
        canary = np.zeros(tuple(clipped_sum.shape))
        canary[self.first :, 0] = coins * mechanism.clip_norm
        return clipped_sum + from_host(canary, clipped_sum)

    def after_noise(self, mechanism, noisy_sum):
        if not self._is_target(noisy_sum):
            return
        x = np.asarray(to_numpy(noisy_sum[self.first :, 0]), dtype=float)
        self.traces.append(x / mechanism.clip_norm)
        self.sigmas.append(float(mechanism.noise_multiplier))


def _is_estimator(value):
    return (
        hasattr(value, "fit")
        and hasattr(value, "get_params")
        and not isinstance(value, type)
    )


def _holds_estimator(value):
    """Whether a parameter is an estimator or a list of them (or of pairs).

    A ``VotingClassifier``'s ``estimators`` is a list of ``(name,
    estimator)`` pairs.
    """
    if _is_estimator(value):
        return True
    if isinstance(value, (list, tuple)):
        return any(
            _is_estimator(item)
            or (isinstance(item, tuple) and any(map(_is_estimator, item)))
            for item in value
        )
    return False


def _canary_target(estimator):
    """The estimator whose noisy steps the canaries enter, and its parameter prefix.

    The canary columns are appended to the raw ``X``, so they reach an
    estimator as all-zero columns only when nothing transforms them first:
    ``estimator`` itself (prefix ``""``), or the final step of a pipeline
    whose earlier steps are all ``"passthrough"`` (prefix ``"name__"``, as
    in ``set_params``), e.g. ``make_private_pipeline(clf)`` that composes
    one model into a shared budget. Anything else is refused before any
    fit: a preprocessing step may move the columns off zero (a private
    location re-centres them) or change the width the canaries are found
    at, and a meta-estimator that fits other estimators (a hyperparameter
    search) makes noisy steps in fits its claim does not release.
    """
    params = estimator.get_params(deep=False)
    steps = params.get("steps")
    if isinstance(steps, (list, tuple)) and steps:
        for name, step in steps[:-1]:
            if not is_passthrough(step):
                raise ValueError(
                    f"audit_gradient_canary cannot audit {type(estimator).__name__} "
                    f"with step {name!r} ({type(step).__name__}) before its final "
                    "estimator: the canary columns are appended to the raw X and "
                    "that step may move them off zero or change the number of "
                    "columns, so the canaries would not be isolated in the final "
                    "estimator's gradient. Audit the final estimator alone, or a "
                    "pipeline whose earlier steps are 'passthrough'."
                )
        name, final = steps[-1]
        if is_passthrough(final) or not hasattr(final, "get_params"):
            raise ValueError(
                f"audit_gradient_canary cannot audit {type(estimator).__name__} "
                f"whose final step {name!r} is no estimator: nothing takes noisy "
                "gradient steps."
            )
        target, prefix = _canary_target(final)
        return target, f"{name}__{prefix}"
    nested = sorted(key for key, value in params.items() if _holds_estimator(value))
    if nested:
        raise ValueError(
            f"audit_gradient_canary cannot audit {type(estimator).__name__}, "
            f"which fits the estimator(s) in {nested}: the observer would see "
            "the noisy steps of every fit it makes, not those of one model, and "
            "the audit adjusts one model's parameters. Audit the inner estimator "
            "itself, or a PrivatePipeline whose steps before the final estimator "
            "are 'passthrough'."
        )
    return estimator, ""


#: Declared range of a canary column: centre 0 and half-width 1, so the
#: public map ``(x - centre) / half-width`` keeps an all-zero column at zero
#: (a column of zeros gives every record a zero gradient, what isolates the
#: Dirac canary), and divides nothing by zero.
_CANARY_COLUMN_BOUNDS = (-1.0, 1.0)


def _canary_ready(estimator, n_features, n_canaries):
    """``estimator`` with its column map extended to the canary columns.

    Public ``feature_bounds`` (one pair, or one per column of ``X``) get the
    range :data:`_CANARY_COLUMN_BOUNDS` for each canary column. That map is
    public and spends no budget (``dp_event_`` is the one of the unscaled
    fit) and the canary is inserted in the scaled gradient sum, so the
    audit is unchanged. ``feature_scaling="auto"`` without bounds is
    refused before any fit: its private location (a noisy median) re-centres
    every column, the zero canary columns included, so the records get a
    nonzero gradient there and the canary is no longer isolated. In a
    pipeline, the final estimator's parameters are the ones adjusted
    (:func:`_canary_target`).
    """
    target, prefix = _canary_target(estimator)
    params = target.get_params(deep=False)
    bounds = params.get("feature_bounds")
    if bounds is not None and not isinstance(bounds, str):
        lower, upper = check_bounds(bounds, n_features, name="feature_bounds")
        lo, hi = _CANARY_COLUMN_BOUNDS
        extended = np.column_stack(
            [
                np.concatenate([lower, np.full(n_canaries, lo)]),
                np.concatenate([upper, np.full(n_canaries, hi)]),
            ]
        )
        return clone(estimator).set_params(**{prefix + "feature_bounds": extended})
    if params.get("feature_scaling") == "auto":
        raise ValueError(
            f"audit_gradient_canary cannot audit {type(target).__name__} with "
            "feature_scaling='auto' and no feature_bounds: the white-box canary "
            "sits in appended all-zero columns, which must not be re-centred, and "
            "the private location of feature_scaling='auto' moves them off zero "
            "(the records then have a gradient in the canary's coordinate). Pass "
            "feature_scaling=None, or declare public feature_bounds for the "
            "columns of X (the canary columns are given the range (-1, 1))."
        )
    return estimator


def _float_features(X):
    """``X`` as a 2-D float array, or a CSR matrix/array when it is sparse.

    A float ``X`` keeps its dtype: the audit is of the fit the caller runs,
    and a float32 fit is another computation than a float64 one (as the
    black-box audit, which stores the canary in ``X``'s dtype). Other
    dtypes (integers, booleans, objects) become float64.
    """
    if sp.issparse(X):
        X = X.tocsr()
        if X.dtype.kind != "f":
            X = X.astype(np.float64)
    else:
        values = np.asarray(X)
        X = values if values.dtype.kind == "f" else np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, got shape {X.shape}.")
    return X


def _with_zero_columns(X, n_canaries):
    """``X`` with ``n_canaries`` all-zero columns appended, in ``X``'s float dtype."""
    X = _float_features(X)
    if sp.issparse(X):
        # Sparse stays sparse: the zero columns store nothing.
        zeros = type(X)((X.shape[0], n_canaries), dtype=X.dtype)
        return sp.hstack([X, zeros], format="csr", dtype=X.dtype)
    return np.hstack([X, np.zeros((X.shape[0], n_canaries), dtype=X.dtype)])


#: Events that amplify nothing by sampling: every release is accounted as
#: if each record took part in it.
_UNSAMPLED_EVENTS = (
    dp_accounting.GaussianDpEvent,
    dp_accounting.LaplaceDpEvent,
    dp_accounting.NoOpDpEvent,
)


def _is_unsampled(event):
    """Whether ``event`` composes only releases that every record enters.

    Such a claim (full-batch DP-SGD, DP-Newton, balls-and-bins batches of
    one step per epoch: a self-composed Gaussian) takes no amplification by
    sampling, so it must hold for a record in every step, and rate ``q = 1``
    is the canary the claim describes; it follows from the public event,
    not from the data.
    """
    if isinstance(event, dp_accounting.SelfComposedDpEvent):
        return _is_unsampled(event.event)
    if isinstance(event, dp_accounting.ComposedDpEvent):
        return all(_is_unsampled(e) for e in event.events)
    return isinstance(event, _UNSAMPLED_EVENTS)


def _poisson_rate(event):
    """The rate ``q`` of an event whose every release is Poisson-sampled at ``q``.

    DP-SGD with Poisson batches is accounted as the self-composition of one
    ``PoissonSampledDpEvent(q, Gaussian)`` (Abadi et al., 2016; Mironov et
    al., 2019): each record enters each noisy step with probability ``q``,
    the canary the claim describes. Any other event gives None: which of
    its releases is sampled, and at which rate, is not one number.
    """
    while isinstance(event, dp_accounting.SelfComposedDpEvent):
        event = event.event
    if isinstance(event, dp_accounting.PoissonSampledDpEvent) and _is_unsampled(
        event.event
    ):
        return float(event.sampling_probability)
    return None


def _check_sampling_probability(sampling_probability):
    """``"auto"``, or a rate in (0, 1] as a float: checked before any fit."""
    if isinstance(sampling_probability, str) and sampling_probability == "auto":
        return sampling_probability
    if isinstance(sampling_probability, bool) or not isinstance(
        sampling_probability, numbers.Real
    ):
        raise TypeError(
            "sampling_probability must be 'auto' or a float in (0, 1], got "
            f"{sampling_probability!r}."
        )
    q = float(sampling_probability)
    if not 0 < q <= 1:
        raise ValueError(
            f"sampling_probability must be 'auto' or in (0, 1], got {q!r}."
        )
    return q


def _sampling_rate(probe, sampling_probability):
    """The rate ``q`` at which an "in" canary enters a step.

    The caller's, else the record's Poisson rate, else the rate of a claim
    whose every release is Poisson-sampled at one rate
    (:func:`_poisson_rate`), else 1 when the claim amplifies nothing by
    sampling (:func:`_is_unsampled`).
    """
    if sampling_probability != "auto":
        return sampling_probability
    q = getattr(probe.privacy_record_, "sampling_probability", None)
    fitted = getattr(probe, "pipeline_", None)
    if q is None and fitted is not None:
        # A pipeline of passthroughs and one model (_canary_target): its
        # claim is the model's, whose record states the rate (a heavy-tail
        # or DP-FERMI event composes its steps with other releases).
        final = fitted.steps[-1][1]
        record = getattr(final, "privacy_record_", None)
        q = getattr(record, "sampling_probability", None)
    if q is None:
        # A record without a rate (a pipeline's) whose claim is DP-SGD's
        # Poisson-subsampled Gaussian: the claim assumes rate q per step.
        q = _poisson_rate(probe.dp_event_)
    if q is not None:
        return float(q)
    if _is_unsampled(probe.dp_event_):
        return 1.0
    raise ValueError(
        f"{type(probe).__name__}'s privacy record states no sampling_probability "
        "and its dp_event_ is not a composition of unsampled releases: its "
        "batches are not Poisson batches of a recorded rate, so the audit does "
        "not know with which probability a record enters a step. Pass "
        "sampling_probability=q, the probability that the claim assumes for one "
        "record to be in one step."
    )


def _canary_run(
    estimator,
    X,
    y,
    fit_params,
    inside,
    q,
    fit_seed,
    canary_seed,
    steps_per_epoch=None,
    *,
    show_warnings=False,
):
    """One fit with the canaries; their statistics, and world of each."""
    observer = _CanaryObserver(
        X.shape[1], inside, q, np.random.default_rng(canary_seed), steps_per_epoch
    )
    with observe_privatize(observer):
        fit_clone(estimator, X, y, fit_params, fit_seed, show_warnings=show_warnings)
    if not observer.traces:
        raise ValueError(
            f"{type(estimator).__name__} released no noisy gradient sum over "
            "its coefficients: the gradient-canary audit applies to DP-SGD-type "
            "solvers (noisy clipped gradient steps of a linear model)."
        )
    if steps_per_epoch is not None:
        return canary_allocation_log_likelihood_ratio(
            np.stack(observer.traces), np.array(observer.sigmas), steps_per_epoch
        )
    return canary_log_likelihood_ratio(
        np.stack(observer.traces), np.array(observer.sigmas), q
    )


def audit_gradient_canary(
    estimator,
    X,
    y,
    *,
    fit_params=None,
    n_runs=1000,
    n_canaries=1,
    sampling_probability="auto",
    deltas="auto",
    confidence=0.95,
    selection_fraction=0.5,
    random_state=0,
    n_jobs=None,
):
    """White-box privacy audit of a DP-SGD-type estimator with gradient canaries.

    Appends ``n_canaries`` all-zero feature columns to ``X``, fits clones of
    ``estimator`` ``n_runs`` times, and in each fit inserts a Dirac gradient
    canary (norm = the clip norm, in one zero column) into the clipped
    gradient sum of every step with the step's Poisson probability, for the
    canaries that are "in"; it observes each canary's noisy coordinate at
    every step (Nasr et al., 2023). The log-likelihood ratio of each trace
    (:func:`canary_log_likelihood_ratio`, with the declared noise) is the
    distinguishing statistic, and :func:`audit_scores` bounds epsilon from
    below against the estimator's ``dp_event_`` at its ``delta_``, with the
    delta its ``privacy_record_`` spends outside that event (a
    partition-selection threshold) added, as :func:`audit_estimator` does.

    Canaries are "in" and "out" alternately (half of each fit's canaries, or
    every other fit when ``n_canaries=1``), so the two worlds have
    ``n_runs * n_canaries / 2`` trials each. With ``n_canaries > 1`` the
    trials of one fit are independent because the mechanism's noise is
    independent across coordinates (isotropic Gaussian noise, as declared);
    ``n_canaries=1`` audits without that assumption.

    The audit checks the noise and the number of noisy steps against the
    recorded claim; it does not exercise the clipping (see
    :func:`audit_estimator` with a large canary record for that) nor the
    sampling (the canary enters at the recorded rate).

    Parameters
    ----------
    estimator : estimator
        Unfitted private estimator whose solver takes noisy clipped gradient
        steps through :class:`~sklearn_dpfair.privacy.GaussianMechanism`
        (DP-SGD, the primal block of DP-SGDA, the heavy-tail "dp-sgd"
        solver); it must set ``dp_event_``, ``delta_``, ``privacy_record_``
        and have ``adjacency_ == "add_remove"``. ``random_state`` is set per
        fit when it is a parameter. The canary columns must stay at zero
        after the estimator's column map: public ``feature_bounds`` are
        extended with the range ``(-1, 1)`` for each of them (a public map,
        no budget, zero stays zero), while ``feature_scaling="auto"``
        without ``feature_bounds`` (a private location that re-centres
        every column) is refused. A pipeline (such as
        :class:`~sklearn_dpfair.pipeline.PrivatePipeline`) is audited when
        its steps before the final estimator are ``"passthrough"`` (the
        canary columns reach that estimator unchanged), with the final
        estimator's ``small_budget`` and ``feature_bounds`` adjusted as
        above and the pipeline's record and ``dp_event_`` as the claim.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Training features (the canary columns are appended to them, in
        ``X``'s float dtype: a float32 ``X`` is fitted as float32, other
        dtypes as float64; a sparse ``X`` is passed to the fits as CSR).
    y : array-like of shape (n_samples,)
        Training targets.
    fit_params : dict, default=None
        Further arguments of ``fit`` (e.g. ``sensitive_features``), but not
        ``silos``: a federated fit is refused (see Raises).
    n_runs : int, default=1000
        Number of fits.
    n_canaries : int, default=1
        Canaries per fit: 1, or an even number (half "in", half "out").
    sampling_probability : "auto" or float, default="auto"
        Poisson rate in (0, 1] at which an "in" canary enters a step; "auto"
        reads ``privacy_record_.sampling_probability`` of a probe fit, and
        where the record states none (a pipeline's), the rate ``q`` of a
        ``dp_event_`` that self-composes one Poisson-sampled Gaussian
        release, or 1 when the probe's ``dp_event_`` amplifies nothing by
        sampling (a composition of plain Gaussian releases: full batches,
        DP-Newton, balls-and-bins batches of one step per epoch). A
        balls-and-bins fit of several steps per epoch is audited as its
        event states (the canary in one step of each epoch), whatever is
        given here.
    deltas : "auto" or sequence of float, default="auto"
        Deltas of the claimed profile the test may compare at (see
        :func:`audit_scores`).
    confidence : float, default=0.95
        Confidence of the lower bound.
    selection_fraction : float, default=0.5
        Fraction of the trials that choose the test (the first fits).
    random_state : int or None, default=0
        Seeds the fits and the canaries' sampling (through
        :class:`numpy.random.SeedSequence`); None draws fresh OS entropy. A
        ``RandomState`` or ``Generator`` is refused (``TypeError``).
    n_jobs : int, default=None
        Parallel fits (joblib). Their warnings are silenced; under a
        thread-based joblib backend, in every thread of the process while
        they run.

    Returns
    -------
    result : AuditResult
        The lower bound, the claim at the same delta, the verdict and the
        audit's ceiling (its power).

    Raises
    ------
    ValueError
        For a federated fit (``silos`` in ``fit_params``, or a probe fit that
        records ``silos_``): every silo privatizes its own messages and the
        observer would plant the canary in each silo's release, a record no
        per-silo claim covers; audit it with :func:`audit_estimator`. Also
        when the probe fit takes no noisy gradient step, saying whether the
        canary columns pushed ``n_features`` past the estimator's public
        small-budget rule (an intercept-only or zero model; use fewer
        canaries or more rows) or the solver takes none at all.
        Before any fit, for ``feature_scaling="auto"`` without
        ``feature_bounds``: pass ``feature_scaling=None`` or public
        ``feature_bounds`` for the columns of ``X``; for a pipeline with a
        step other than ``"passthrough"`` before its final estimator (it may
        move the canary columns off zero or change their number), and for
        any other estimator that fits nested estimators (a hyperparameter
        search, whose runs' noisy steps the observer would all see). Also
        before any fit, for an ``n_runs``, ``n_canaries``,
        ``sampling_probability``, ``random_state``, ``confidence``,
        ``selection_fraction`` or ``deltas`` out of range; after the probe
        fit and before the others, for a claim the accountant cannot
        evaluate at ``deltas``, or for ``sampling_probability="auto"`` when
        neither the record nor the event states a Poisson rate and the event
        amplifies by a sampling that is not Poisson.
    TypeError
        Before any fit, for an ``n_runs``, ``n_canaries``,
        ``sampling_probability`` or ``random_state`` of the wrong type.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair import DPLogisticRegression
    >>> from sklearn_dpfair.audit import audit_gradient_canary
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2)); y = (X[:, 0] > 0).astype(int)
    >>> clf = DPLogisticRegression(epsilon=1.0, classes=[0, 1], max_iter=20)
    >>> result = audit_gradient_canary(clf, X, y, n_runs=10, n_canaries=100)
    >>> result.violation, result.conclusive
    (False, True)
    """
    n_runs = check_count(n_runs, "n_runs", 1)
    n_canaries = check_count(n_canaries, "n_canaries", 1)
    sampling_probability = _check_sampling_probability(sampling_probability)
    if n_canaries > 1 and n_canaries % 2:
        raise ValueError(
            f"n_canaries must be 1 or even (half in, half out), got {n_canaries}."
        )
    if n_runs * n_canaries < 4:
        raise ValueError(
            "Too few trials: n_runs * n_canaries must be at least 4, got "
            f"n_runs={n_runs!r}, n_canaries={n_canaries!r}."
        )
    # Before any fit: "in" trials are the odd (run, canary) positions.
    n_with = n_runs * n_canaries // 2
    check_audit_options(
        confidence, selection_fraction, deltas, n_runs * n_canaries - n_with, n_with
    )
    fit_params = {} if fit_params is None else dict(fit_params)
    _refuse_federated(fit_params)
    # The model the canaries reach, checked before any fit (the estimator,
    # or the final step of a pipeline of passthrough steps).
    target, prefix = _canary_target(estimator)
    X_aug = _with_zero_columns(X, n_canaries)
    if target.get_params(deep=False).get("small_budget") == "auto":
        # The canary columns raise n_features, which can trip the public
        # small-budget rule (an intercept-only release, no noisy steps): the
        # audit is of the noisy steps, so the model is always fitted.
        estimator = clone(estimator).set_params(**{prefix + "small_budget": "fit"})
    # The estimator as fitted on X alone (to explain a fit without noisy
    # steps), and as fitted on X with the canary columns.
    base = estimator
    estimator = _canary_ready(base, X_aug.shape[1] - n_canaries, n_canaries)
    ss = seed_sequence(random_state)
    fit_ss, canary_ss = ss.spawn(2)
    fit_seeds = fit_ss.generate_state(n_runs + 1, dtype=np.uint32).tolist()
    canary_seeds = canary_ss.generate_state(n_runs, dtype=np.uint32).tolist()

    # Probe fit (no canary): the claim, the relation, the sampling rate, and
    # whether the fit takes noisy steps at all.
    # It shows the estimator's warnings; the repeated fits do not.
    probe, probe_steps = _counted_fit(
        estimator, X_aug, y, fit_params, fit_seeds[-1], show_warnings=True
    )
    require_claim(probe, ("dp_event_", "delta_", "privacy_record_"))
    _refuse_federated(fit_params, probe)
    if getattr(probe, "adjacency_", None) != "add_remove":
        raise ValueError(
            "The gradient canary models adding or removing one record; "
            f"{type(estimator).__name__}'s guarantee is stated for "
            f"{getattr(probe, 'adjacency_', None)!r}."
        )
    if not probe_steps:
        _explain_no_noisy_step(base, X, y, fit_params, fit_seeds[-1], n_canaries)
    # The claimed profile before the repeated fits: a claim the accountant
    # refuses at one of the deltas is refused now, not after them. It is
    # the whole release's, with the delta a partition-selection threshold
    # spends outside dp_event_ (a pipeline's private category discovery).
    additional = record_additional_delta(probe)
    claim = dict(
        delta=probe.delta_ + additional,
        dp_event=probe.dp_event_,
        additional_delta=additional,
    )
    claimed_epsilons(**claim, deltas=deltas)
    # Balls-and-bins fits: the canary is allocated to one step per epoch,
    # as their event states (no Poisson rate).
    steps_per_epoch = getattr(probe.dp_event_, "steps_per_epoch", None)
    if steps_per_epoch is not None:
        q = 1.0 / steps_per_epoch
    else:
        q = _sampling_rate(probe, sampling_probability)
    if not 0 < q <= 1:
        raise ValueError(
            f"The privacy record's sampling_probability must be in (0, 1], got {q!r}."
        )

    # World of canary j in fit r: "in" when (r * k + j) is odd, so that each
    # fit holds half of each (k even), or fits alternate (k = 1).
    def inside(r):
        return (r * n_canaries + np.arange(n_canaries)) % 2 == 1

    arguments = (
        (
            estimator,
            X_aug,
            y,
            fit_params,
            inside(r),
            q,
            fit_seeds[r],
            canary_seeds[r],
            steps_per_epoch,
        )
        for r in range(n_runs)
    )
    stats = repeat_quietly(_canary_run, arguments, n_jobs)
    s0 = np.concatenate([s[~inside(r)] for r, s in enumerate(stats)])
    s1 = np.concatenate([s[inside(r)] for r, s in enumerate(stats)])
    return audit_scores(
        s0,
        s1,
        **claim,
        deltas=deltas,
        confidence=confidence,
        selection_fraction=selection_fraction,
    )
