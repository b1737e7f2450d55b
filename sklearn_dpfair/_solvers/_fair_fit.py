# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Calibrate, estimate the group marginals, solve, describe: the FERMI fits.

:func:`fit_fermi` serves both estimators. Without ``privacy`` it is FERMI
(thesis Algorithm 9); with it, DP-FERMI under record-level add/remove
adjacency (spec ``fermi.md`` §4.6):

0. calibrate the noise *before* reading the data: one joint Gaussian for the
   primal and dual blocks of every step (noise multiplier
   ``sigma_eff = (sigma_theta^-2 + sigma_w^-2)^(-1/2)``), composed with the
   Gaussian histogram of the (block, group) cells;
1. release the noisy cell counts (add/remove sensitivity 1) and turn them
   into floored group marginals and block weights (post-processing);
2. run the noisy SGDA of :mod:`._sgda`, in the namespace and on the device
   of ``backend`` (labels, groups and the histogram stay on the host).

The :class:`~sklearn_dpfair.privacy.PrivacyRecord` describes exactly the
event given to the accountant. Its ``noise_multiplier`` is ``sigma_eff``
and its ``clip_norm`` the sensitivity of the jointly released pair once
the dual sum is rescaled to the primal noise scale,
``C sqrt(1 + (sigma_theta / sigma_w)^2)`` (noise std ``sigma_theta C``),
with ``sampling_probability`` ``q`` and ``steps`` ``T``; the mechanism text
names both blocks' clip norms and noise multipliers and the histogram's
noise multiplier (sensitivity 1). The event is then
``fermi_event(noise_multiplier, sampling_probability, steps, z_hist)``.

No exception or warning after input validation depends on the private
data: the budget checks read public inputs only, the floored-marginal
warning is issued by the non-private fit alone, and the solver gives a data
row whose logits overflow the fixed contribution 0 (no numpy warning).
"""

import functools
import math
import warnings
from dataclasses import dataclass, field, replace

import numpy as np

from .._loss import SoftmaxLoss
from ..fairness._ermi import ERMIRegularizer
from ..privacy._accounting import (
    composed_event,
    epsilon_of,
    gaussian_event,
    noisy_sgd_event,
    non_private_event,
)
from ..privacy._calibration import _calibrate, noise_multiplier_for_gaussian
from ..privacy._mechanism import GaussianMechanism
from ..privacy._record import PrivacyRecord, check_budget
from ..utils._array_api import NUMPY_BACKEND, array_namespace, from_host
from ._schedules import sgd_schedule
from ._sgda import noisy_sgda

__all__ = ["FERMIFit", "FairPrivacy", "fit_fermi"]

_MECHANISM = (
    "DP-FERMI: noisy SGDA, {steps} steps at Poisson rate {q:.6g}; each step "
    "releases the per-example-clipped primal sum (clip {clip:.6g}, noise "
    "multiplier {sigma_theta:.6g})"
)
_DUAL = (
    " and dual sum (clip {dual_clip}, noise multiplier {sigma_w:.6g}), "
    "accounted as one Gaussian of noise multiplier "
    "(sigma_theta^-2 + sigma_w^-2)^(-1/2) = {sigma_eff:.6g} and sensitivity "
    "clip * sqrt(1 + (sigma_theta / sigma_w)^2) = {sensitivity:.6g}"
)
# The dual clip norm in the mechanism text when it is not a parameter: its
# value is post-processing of the released histogram, so it is named, not
# printed (the record stays a function of public inputs; the value is
# dual_clip_norm_).
_DUAL_CLIP_FROM_MARGINALS = "set by the box and the released marginals"

_MARGINALS = (
    " + Gaussian histogram of the group marginals (sensitivity 1, noise "
    "multiplier {z:.6g})"
)
_FLOORED = (
    "group(s) {labels} have a training frequency below min_group_frequency="
    "{floor:g}{where}; their marginals are floored at it (1/sqrt(P_s) would "
    "otherwise blow up the fairness gradients)."
)


@dataclass(frozen=True)
class FairPrivacy:
    """Public privacy inputs of a DP-FERMI fit (see ``DPFERMIClassifier``)."""

    epsilon: float
    delta: float
    noise_multiplier: float | None
    dual_noise_ratio: float
    marginal_noise_multiplier: float | None  # None: automatic (see below)
    public_marginals: np.ndarray | None
    accountant: str
    caveats: tuple = ()


@dataclass
class FERMIFit:
    """Result of :func:`fit_fermi`, coefficients in scikit-learn's layout.

    ``coef``, ``intercept`` and ``dual`` are in the backend's output
    namespace (numpy unless array API dispatch kept the input's).
    """

    coef: object
    intercept: object
    dual: object
    group_marginals: np.ndarray | None
    n_steps: int
    loss_curve: list
    fairness_curve: list
    record: PrivacyRecord | None = None
    noise: dict = field(default_factory=dict)


# The automatic histogram noise: 20 (the value tuned on Adult at epsilon = 1,
# where it spends ~0.25 of the budget), raised at small budgets to the noise
# of a Gaussian that alone spends MARGINAL_BUDGET_SHARE of epsilon, so the
# model steps always keep most of the budget.
DEFAULT_MARGINAL_NOISE = 20.0
MARGINAL_BUDGET_SHARE = 0.25


def _marginal_noise(privacy):
    if privacy.marginal_noise_multiplier is not None:
        return privacy.marginal_noise_multiplier
    if math.isinf(privacy.epsilon):
        return DEFAULT_MARGINAL_NOISE
    share = noise_multiplier_for_gaussian(
        MARGINAL_BUDGET_SHARE * privacy.epsilon, privacy.delta, privacy.accountant
    )
    return max(DEFAULT_MARGINAL_NOISE, share)


@functools.lru_cache(maxsize=1024)
def calibrate_fermi_noise(
    target_epsilon, delta, sampling_probability, steps, marginal_noise, accountant
):
    """Smallest joint noise multiplier ``sigma_eff`` meeting the budget.

    The event is ``Composed[Gaussian(marginal_noise),
    SelfComposed(PoissonSampled(q, Gaussian(sigma_eff)), T)]`` (the first
    part omitted when ``marginal_noise`` is 0: public or no marginals).
    Memoized: it depends on public inputs only.
    """

    if marginal_noise > 0:
        spent = epsilon_of(gaussian_event(marginal_noise), delta, accountant)
        if spent >= target_epsilon:
            raise ValueError(
                f"The private group marginals alone (marginal_noise_multiplier="
                f"{marginal_noise:g}) spend epsilon={spent:.3g} >= epsilon="
                f"{target_epsilon:g}. Raise marginal_noise_multiplier or epsilon, or "
                "declare public group_marginals."
            )

    def make_event(sigma):
        return fermi_event(sigma, sampling_probability, steps, marginal_noise)

    return _calibrate(make_event, target_epsilon, delta, accountant)


def fermi_event(sigma_eff, sampling_probability, steps, marginal_noise):
    """dp-accounting event of one DP-FERMI fit."""
    if sigma_eff == 0:
        return non_private_event()
    sgda = noisy_sgd_event(sigma_eff, sampling_probability, steps)
    if marginal_noise > 0:
        return composed_event([gaussian_event(marginal_noise), sgda])
    return sgda


def cell_counts(blocks, codes, n_blocks, n_groups):
    """Rows per (block, group) cell; rows without a block or a group are skipped."""
    keep = (blocks >= 0) & (codes >= 0)
    cells = blocks[keep] * n_groups + codes[keep]
    return np.bincount(cells, minlength=n_blocks * n_groups).reshape(n_blocks, n_groups)


def marginals_from_counts(counts, n_total, floor):
    """Group marginals per block (floored, renormalized) and block frequencies.

    ``counts`` may be noisy (negative values are clipped to 0 first); both
    outputs are then post-processing of the released histogram.
    """
    counts = np.maximum(np.asarray(counts, dtype=np.float64), 0.0)
    totals = counts.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        ps = np.where(totals[:, None] > 0, counts / totals[:, None], 0.0)
    ps = np.maximum(ps, floor)
    ps /= ps.sum(axis=1, keepdims=True)
    return ps, totals / max(float(n_total), 1.0)


def marginals_from_public(public, n_classes, n_groups, constraint):
    """Cell frequencies ``(n_blocks, n_groups)`` from user-declared public values.

    Demographic parity takes ``P(S = r)`` (shape ``(n_groups,)``); the
    label-conditional constraints take the joint ``P(Y = y, S = r)`` (shape
    ``(n_classes, n_groups)``). Rows are normalized to sum to 1 overall.
    """
    public = np.asarray(public, dtype=np.float64)
    dp = constraint.name == "demographic_parity"
    shape = (n_groups,) if dp else (n_classes, n_groups)
    if (
        public.shape != shape
        or not np.all(np.isfinite(public))
        or np.any(public < 0)
        or public.sum() <= 0
    ):
        raise ValueError(
            "group_marginals must be non-negative, finite, not all zero and of "
            f"shape {shape} for constraint={constraint.name!r}: "
            + ("P(S=r)" if dp else "the joint P(Y=y, S=r)")
            + f"; got shape {public.shape}."
        )
    joint = public / public.sum()
    if dp:
        return joint[None, :]
    if constraint.name == "equal_opportunity":
        return joint[[constraint.class_index]]
    return joint


def _warn_floored(counts, floor, group_labels, constraint):
    with np.errstate(invalid="ignore", divide="ignore"):
        freq = counts / counts.sum(axis=1, keepdims=True)
    low = np.nan_to_num(freq, nan=0.0) < floor
    if np.any(low):
        names = list(group_labels.tolist())
        labels = sorted({repr(names[r]) for r in np.nonzero(low)[1]})
        where = "" if constraint.name == "demographic_parity" else " within a label"
        warnings.warn(
            _FLOORED.format(labels=", ".join(labels[:10]), floor=floor, where=where),
            UserWarning,
            stacklevel=4,
        )


def _binary_layout(coef, intercept):
    """2-class softmax to one logit (of class 1): ``w = w_1 - w_0``."""
    xp = array_namespace(coef)
    return (
        xp.reshape(coef[:, 1] - coef[:, 0], (1, -1)),
        xp.reshape(intercept[1:2] - intercept[0:1], (1,)),
    )


def fit_fermi(
    X,
    y,
    *,
    n_classes,
    codes,
    group_labels,
    constraint,
    fairness_weight,
    clip_norm,
    dual_clip_norm,
    batch_size,
    epochs,
    learning_rate,
    dual_learning_rate,
    alpha,
    fit_intercept,
    dual_update,
    dual_projection,
    min_group_frequency,
    return_iterate,
    record_curves,
    rng,
    privacy=None,
    backend=NUMPY_BACKEND,
):
    """Fit an ERMI-regularized softmax model by (noisy) SGDA.

    ``y`` (class indices) and ``codes`` (group codes, ``-1`` missing; only
    allowed without ``privacy``) are host numpy arrays; ``X`` is validated
    input, moved to ``backend`` (an
    :class:`~sklearn_dpfair.utils._array_api.ArrayBackend`) for the solver.
    Returns a :class:`FERMIFit` whose ``coef`` is ``(1, d)`` for two classes
    (logit of class 1) and ``(m, d)`` otherwise.
    """
    n_samples = X.shape[0]
    n_groups = len(group_labels)
    q, n_steps = sgd_schedule(n_samples, batch_size, epochs)
    blocks = constraint.block_index(y)
    n_blocks = constraint.n_blocks(n_classes)
    active = fairness_weight > 0 and n_groups > 1
    noise, record = {}, None

    # 0. Calibrate before any data-dependent step.
    if privacy is not None:
        r = privacy.dual_noise_ratio
        # sigma_theta / sigma_eff; also the factor by which the primal clip
        # norm grows into the sensitivity of the jointly released pair.
        joint = math.sqrt(1.0 + r**-2) if active else 1.0
        # The histogram is noised whenever the fit is private: a finite budget,
        # or a user-given noise multiplier (whose epsilon_ is then reported).
        noisy = not math.isinf(privacy.epsilon) or privacy.noise_multiplier is not None
        private_marginals = active and privacy.public_marginals is None and noisy
        z_marg = _marginal_noise(privacy) if private_marginals else 0.0
        if privacy.noise_multiplier is not None:
            sigma_theta = float(privacy.noise_multiplier)
            sigma_eff = sigma_theta / joint
        elif math.isinf(privacy.epsilon):
            sigma_theta = sigma_eff = 0.0
        else:
            sigma_eff = calibrate_fermi_noise(
                float(privacy.epsilon),
                float(privacy.delta),
                q,
                n_steps,
                z_marg,
                privacy.accountant,
            )
            sigma_theta = sigma_eff * joint
        sigma_w = r * sigma_theta if active else 0.0
        event = fermi_event(sigma_eff, q, n_steps, z_marg if sigma_eff > 0 else 0.0)
        noise = {
            "primal": sigma_theta,
            "dual": sigma_w,
            "effective": sigma_eff,
            "marginal": z_marg if sigma_eff > 0 else 0.0,
        }
    else:
        sigma_theta = sigma_w = 0.0
    floor = min_group_frequency

    # 1. Group marginals (private histogram, public values, or exact counts).
    regularizer, ps, weight_scale = None, None, 1.0
    if n_groups >= 1 and (active or privacy is None):
        if privacy is not None and privacy.public_marginals is not None:
            table = marginals_from_public(
                privacy.public_marginals, n_classes, n_groups, constraint
            )
            ps, block_freq = marginals_from_counts(table, 1.0, floor)
        else:
            counts = cell_counts(blocks, codes, n_blocks, n_groups).astype(np.float64)
            n_observed = int(np.count_nonzero(codes >= 0))
            if privacy is None:
                _warn_floored(counts, floor, group_labels, constraint)
            elif noise.get("marginal", 0.0) > 0:
                counts = counts + rng.normal(0.0, noise["marginal"], size=counts.shape)
            ps, block_freq = marginals_from_counts(counts, n_observed, floor)
            weight_scale = n_samples / max(n_observed, 1)
        if active:
            regularizer = ERMIRegularizer(
                ps, constraint.block_weights(block_freq), n_classes
            )

    # Clip norms: the dual one defaults to the bound implied by the box
    # (computed from the released marginals: post-processing), i.e. no clipping.
    primal_clip = math.inf if clip_norm is None else float(clip_norm)
    if dual_clip_norm is not None:
        dual_clip = float(dual_clip_norm)
    elif privacy is not None and regularizer is not None:
        dual_clip = regularizer.dual_gradient_bound()
    else:
        dual_clip = math.inf

    if privacy is not None:
        sensitivity = primal_clip * joint
        mechanism = _MECHANISM.format(
            steps=n_steps, q=q, clip=primal_clip, sigma_theta=sigma_theta
        )
        if active:
            mechanism += _DUAL.format(
                dual_clip=(
                    f"{dual_clip:.6g}"
                    if dual_clip_norm is not None
                    else _DUAL_CLIP_FROM_MARGINALS
                ),
                sigma_w=sigma_w,
                sigma_eff=sigma_eff,
                sensitivity=sensitivity,
            )
        if noise["marginal"] > 0:
            mechanism += _MARGINALS.format(z=noise["marginal"])
        # Every field is what the accountant was given: the joint Gaussian's
        # multiplier and sensitivity (noise std sigma_theta * clip), q, T.
        record = PrivacyRecord.from_event(
            event,
            delta=privacy.delta,
            accountant=privacy.accountant,
            adjacency="add_remove",
            mechanism=mechanism,
            noise_multiplier=sigma_eff,
            clip_norm=sensitivity,
            sampling_probability=q,
            steps=n_steps,
            caveats=tuple(privacy.caveats),
        )
        if privacy.noise_multiplier is None:
            check_budget(record, privacy.epsilon, calibrated=True)
        else:
            # The message names the multiplier the user passed (sigma_theta).
            check_budget(
                replace(record, noise_multiplier=sigma_theta),
                privacy.epsilon,
                calibrated=False,
            )
        noise["dual_clip_norm"] = dual_clip

    # 2. Solve (on the backend; batches and noise still come from rng).
    X_solver = backend.asarray(X)
    result = noisy_sgda(
        X_solver,
        from_host(np.asarray(y), X_solver),
        SoftmaxLoss(n_classes),
        regularizer,
        blocks=blocks,
        codes=codes,
        weight_scale=weight_scale,
        fairness_weight=fairness_weight,
        primal_mechanism=GaussianMechanism(primal_clip, sigma_theta),
        dual_mechanism=GaussianMechanism(dual_clip, sigma_w),
        sampling_probability=q,
        n_steps=n_steps,
        epochs=epochs,
        learning_rate=learning_rate,
        dual_learning_rate=dual_learning_rate,
        alpha=alpha,
        intercept_scaling=1.0 if fit_intercept else 0.0,
        dual_update=dual_update,
        project_dual=dual_projection == "box",
        return_iterate=return_iterate,
        rng=rng,
        record_curves=record_curves,
        constraint=constraint,
    )
    coef, intercept = result.coef.T, result.intercept
    if n_classes == 2:
        coef, intercept = _binary_layout(result.coef, intercept)
    coef, intercept = backend.to_output(coef), backend.to_output(intercept)
    dual = (
        backend.to_output(result.dual)
        if regularizer is not None
        else backend.to_output(
            backend.xp.zeros(
                (n_blocks, n_groups, n_classes),
                dtype=backend.xp.float64,
                device=backend.device,
            )
        )
    )
    if constraint.name != "equalized_odds":
        dual = dual[0]
        ps = None if ps is None else ps[0]
    return FERMIFit(
        coef=coef,
        intercept=intercept,
        dual=dual,
        group_marginals=ps,
        n_steps=n_steps,
        loss_curve=result.loss_curve,
        fairness_curve=result.fairness_curve,
        record=record,
        noise=noise,
    )
