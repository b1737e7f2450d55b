# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The privacy set-up of a DP-FERMI fit, fixed before any data are read.

DP-FERMI (thesis Algorithm 10, here under record-level
add/remove adjacency) releases, in this order:

0. under ``feature_scaling="auto"`` without public bounds, the private
   quantiles of every column (the zCDP event of
   :func:`~sklearn_dpfair._solvers._feature_scaling.plan_feature_scaling`,
   the *prior* event);
1. a Gaussian histogram of the (block, group) cells (sensitivity 1, noise
   multiplier ``z_hist``), unless the marginals are declared public;
2. ``T`` steps of Poisson-subsampled noisy SGDA: the clipped primal sum
   (clip ``C``, noise ``sigma_theta C``) and the dual block of the same
   batch: the per-(block, group) sums of the weighted predictions
   ``w_i F_i``, from which the dual gradient is computed (each term clipped
   to ``C_w``, by default the largest block weight, which it never exceeds;
   noise ``sigma_w C_w``). Rescaling the dual sum
   to the primal noise scale makes the pair one Gaussian mechanism of
   sensitivity ``C sqrt(1 + (sigma_theta / sigma_w)^2)`` and noise
   multiplier ``sigma_eff = (sigma_theta^-2 + sigma_w^-2)^(-1/2)``;
3. under ``disparity_bound``, the Gaussian release of the candidates'
   (label, group, prediction) counts (noise multiplier ``z_sel``).

:func:`resolve_noise` turns the :class:`FairPrivacy` inputs into the
:class:`FERMINoise` multipliers (``sigma_eff`` calibrated on the composed
event by :func:`~sklearn_dpfair.privacy.calibrate_noise`);
:class:`FERMIMechanisms` holds the privacy mechanisms that draw every noise
of the fit; :func:`fermi_event` is the composed event the accountant gets.
"""

import functools
import math
from dataclasses import dataclass

import numpy as np

from ...privacy import (
    GaussianMechanism,
    PrivacyBudget,
    calibrate_noise,
    epsilon_of,
    noise_multiplier_for_gaussian,
)
from ...privacy._accounting import (
    composed_event,
    gaussian_event,
    noisy_sgd_event,
    non_private_event,
)
from .._constant_choice import choice_noise

__all__ = [
    "DEFAULT_MARGINAL_NOISE",
    "MARGINAL_BUDGET_SHARE",
    "FERMIMechanisms",
    "FERMINoise",
    "FairPrivacy",
    "calibrate_fermi_noise",
    "fermi_event",
    "histogram_mechanism",
    "histogram_noise",
    "noise_of",
    "resolve_noise",
]

# The automatic histogram noise: 20 (the value tuned on Adult at epsilon = 1,
# where it spends ~0.25 of the budget), raised at small budgets to the noise
# of a Gaussian that alone spends MARGINAL_BUDGET_SHARE of epsilon, so the
# model steps always keep most of the budget.
DEFAULT_MARGINAL_NOISE = 20.0
MARGINAL_BUDGET_SHARE = 0.25


@dataclass(frozen=True)
class FairPrivacy:
    """Public privacy inputs of a DP-FERMI fit (see ``DPFERMIClassifier``).

    ``budget`` carries epsilon, delta, the accountant, the user's
    ``noise_multiplier`` (``sigma_theta``, or None to calibrate) and the
    caveats; the rest are the FERMI-specific noise ratios and the declared
    marginals. ``None`` multipliers are automatic (:func:`histogram_noise`).
    """

    budget: PrivacyBudget
    dual_noise_ratio: float = 1.0
    marginal_noise_multiplier: float | None = None
    selection_noise_multiplier: float | None = None
    public_marginals: np.ndarray | None = None
    #: The :class:`~sklearn_dpfair._solvers._feature_scaling.ScalingPlan` of
    #: the columns (None, or mode ``"none"``: the columns are used as given;
    #: the fit's column check reads why from the plan).
    scaling: object = None

    @property
    def prior_event(self):
        """The event of the releases before the steps (private scales), or None."""
        return None if self.scaling is None else self.scaling.event


@dataclass(frozen=True)
class FERMINoise:
    """Noise multipliers of one fit (all 0 for a non-private fit).

    ``primal`` is ``sigma_theta``, ``dual`` ``sigma_w``, ``effective``
    ``sigma_eff`` (the accountant's), ``marginal`` the histogram's,
    ``selection`` the selection counts', ``choice`` the comparison of the
    model with the constants (:mod:`.._constant_choice`; 0: none); ``joint``
    is ``sigma_theta / sigma_eff``, the factor by which the primal clip norm
    grows into the sensitivity of the jointly released pair.
    """

    primal: float = 0.0
    dual: float = 0.0
    effective: float = 0.0
    marginal: float = 0.0
    selection: float = 0.0
    joint: float = 1.0
    choice: float = 0.0


@dataclass(frozen=True)
class FERMIMechanisms:
    """The privacy mechanisms that draw every noise of one fit."""

    primal: GaussianMechanism
    dual: GaussianMechanism
    histogram: GaussianMechanism  # sensitivity 1: one record moves one cell
    selection: GaussianMechanism  # sensitivity sqrt(k): one cell of k tables
    joint: GaussianMechanism  # the (primal, rescaled dual) pair, accounted

    @classmethod
    def build(cls, noise, clip_norm, dual_clip_norm, n_candidates):
        """Mechanisms of ``noise`` with the blocks' clip norms."""
        primal = GaussianMechanism(clip_norm, noise.primal)
        try:
            dual = GaussianMechanism(dual_clip_norm, noise.dual)
        except ValueError as exc:
            # GaussianMechanism names its sensitivity clip_norm; the dual
            # block's is the estimator's dual_clip_norm.
            if "overflows" not in str(exc):
                # A noise scale below the smallest normal float, or an
                # infinite multiplier: the mechanism's own reason, renamed.
                message = str(exc)
                if message.startswith("clip_norm"):
                    message = "dual_clip_norm" + message[len("clip_norm") :]
                raise ValueError(message) from exc
            raise ValueError(
                "dual_clip_norm is too large: the dual block's noise standard "
                f"deviation, its noise multiplier times its sensitivity "
                f"({noise.dual:g} * {dual_clip_norm:g}), overflows float64. Use "
                "a dual clip norm of the size of the per-example dual terms."
            ) from exc
        return cls(
            primal=primal,
            dual=dual,
            histogram=histogram_mechanism(noise),
            selection=GaussianMechanism(math.sqrt(n_candidates), noise.selection),
            joint=GaussianMechanism(clip_norm * noise.joint, noise.effective),
        )

    @classmethod
    def planned(cls, noise, clip_norm, dual_clip_norm, n_candidates):
        """The mechanisms of a planned fit, from its public parameters only.

        What the fit builds (:meth:`build`) from the plan's ``noise`` and the
        declared clip norms (None: no clip, ``inf``), so that a noise
        scale that over- or underflows float64 is refused by the plan as by
        the fit, with the same message, before anything is released. An
        undeclared ``dual_clip_norm`` of a private fit is derived from the
        released marginals (the largest block weight): it stands at ``inf``
        here, which no check refuses, and the fit checks the derived one.

        Parameters
        ----------
        noise : FERMINoise
            The plan's noise multipliers.
        clip_norm, dual_clip_norm : float or None
            The declared clip norms of the two blocks.
        n_candidates : int
            The plan's candidate weights (0 without ``disparity_bound``).

        Returns
        -------
        mechanisms : FERMIMechanisms

        Raises
        ------
        ValueError
            Naming ``clip_norm``, ``dual_clip_norm`` or ``noise_multiplier``
            (see :class:`~sklearn_dpfair.privacy.GaussianMechanism`).
        """
        return cls.build(
            noise,
            math.inf if clip_norm is None else float(clip_norm),
            math.inf if dual_clip_norm is None else float(dual_clip_norm),
            max(int(n_candidates), 1),
        )


def histogram_mechanism(noise):
    """The Gaussian histogram of the (block, group) cell counts.

    One record moves one cell by one: sensitivity 1 under add/remove.
    """
    return GaussianMechanism(1.0, noise.marginal)


def histogram_noise(budget, declared=None):
    """Noise multiplier of a one-shot Gaussian release (histogram, selection).

    ``declared`` (the user's value) wins; otherwise
    ``DEFAULT_MARGINAL_NOISE``, raised at small budgets to the noise of a
    Gaussian that alone spends ``MARGINAL_BUDGET_SHARE`` of epsilon.

    Parameters
    ----------
    budget : PrivacyBudget
        The fit's budget (public).
    declared : float or None, default=None
        The user's multiplier; None is automatic.

    Returns
    -------
    noise_multiplier : float

    Examples
    --------
    >>> from sklearn_dpfair.privacy import PrivacyBudget
    >>> from sklearn_dpfair._solvers.fermi._privacy import histogram_noise
    >>> histogram_noise(PrivacyBudget(1.0, 1e-5))
    20.0
    >>> round(histogram_noise(PrivacyBudget(0.1, 1e-5)), 1)
    121.1
    """
    if declared is not None:
        return declared
    if math.isinf(budget.epsilon):
        return DEFAULT_MARGINAL_NOISE
    share = noise_multiplier_for_gaussian(
        MARGINAL_BUDGET_SHARE * budget.epsilon, budget.delta, budget.accountant
    )
    return max(DEFAULT_MARGINAL_NOISE, share)


@functools.lru_cache(maxsize=1024)
def calibrate_fermi_noise(
    target_epsilon,
    delta,
    sampling_probability,
    steps,
    marginal_noise,
    accountant,
    selection_noise=0.0,
    prior_event=None,
    choice_noise=0.0,
):
    """Smallest joint noise multiplier ``sigma_eff`` meeting the budget.

    The event is :func:`fermi_event`, ``prior_event`` (the private column
    scales' releases, or None) composed first, so the steps get what the
    scales leave; memoized (public inputs only: the events are hashable).

    Raises
    ------
    ValueError
        If the histogram (and the selection) alone spend the budget.
    """
    if (
        marginal_noise > 0
        or selection_noise > 0
        or choice_noise > 0
        or prior_event is not None
    ):
        fixed = [
            gaussian_event(z)
            for z in (marginal_noise, selection_noise, choice_noise)
            if z > 0
        ]
        if prior_event is not None:
            fixed.insert(0, prior_event)
        spent = epsilon_of(composed_event(fixed), delta, accountant)
        if spent >= target_epsilon:
            what = (
                "The private feature scales and the private releases before "
                "the steps"
                if prior_event is not None
                else f"The private group marginals alone (marginal_noise_multiplier="
                f"{marginal_noise:g})"
                if not selection_noise
                else f"The private group marginals (marginal_noise_multiplier="
                f"{marginal_noise:g}) and the selection of fairness_weight "
                f"(selection_noise_multiplier={selection_noise:g}) alone"
            )
            raise ValueError(
                f"{what} spend epsilon={spent:.3g} >= epsilon={target_epsilon:g}. "
                "Raise marginal_noise_multiplier (selection_noise_multiplier) or "
                "epsilon, or declare public group_marginals."
            )

    def make_event(sigma):
        return fermi_event(
            sigma,
            sampling_probability,
            steps,
            marginal_noise,
            selection_noise,
            prior_event,
            choice_noise,
        )

    return calibrate_noise(make_event, target_epsilon, delta, accountant)


def fermi_event(
    sigma_eff,
    sampling_probability,
    steps,
    marginal_noise,
    selection_noise=0.0,
    prior_event=None,
    choice_noise=0.0,
):
    """dp-accounting event of one DP-FERMI fit.

    ``Composed[prior, Gaussian(marginal_noise), SelfComposed(PoissonSampled(q,
    Gaussian(sigma_eff)), T), Gaussian(selection_noise),
    Gaussian(choice_noise)]``, the prior (the private column scales'
    quantiles) omitted when ``prior_event`` is None, the marginals when
    ``marginal_noise`` is 0 (public or no marginals), the selection when
    ``selection_noise`` is 0 (no ``disparity_bound``) and the last part when
    ``choice_noise`` is 0 (no private choice between the model and the
    constants).

    Examples
    --------
    >>> from sklearn_dpfair._solvers.fermi._privacy import fermi_event
    >>> fermi_event(2.0, 1.0, 3, 0.0)
    SelfComposedDpEvent(event=GaussianDpEvent(noise_multiplier=2.0), count=3)
    """
    if sigma_eff == 0:
        return non_private_event()
    sgda = noisy_sgd_event(sigma_eff, sampling_probability, steps)
    parts = [] if prior_event is None else [prior_event]
    if marginal_noise > 0:
        parts.append(gaussian_event(marginal_noise))
    parts.append(sgda)
    if selection_noise > 0:
        parts.append(gaussian_event(selection_noise))
    if choice_noise > 0:
        parts.append(gaussian_event(choice_noise))
    return composed_event(parts) if len(parts) > 1 else sgda


def resolve_noise(privacy, sampling_probability, steps, *, active, bounded):
    """The :class:`FERMINoise` of a fit, from public inputs only.

    Parameters
    ----------
    privacy : FairPrivacy or None
        None is the non-private fit (no noise).
    sampling_probability, steps : float, int
        The public schedule ``q``, ``T``.
    active : bool
        Whether the fit has a fairness term (a dual block and marginals).
    bounded : bool
        Whether ``disparity_bound`` selects the weight.

    Returns
    -------
    noise : FERMINoise
    """
    if privacy is None:
        return FERMINoise()
    return noise_of(
        privacy.budget,
        sampling_probability,
        steps,
        active=active,
        bounded=bounded,
        dual_noise_ratio=privacy.dual_noise_ratio,
        marginal_noise_multiplier=privacy.marginal_noise_multiplier,
        selection_noise_multiplier=privacy.selection_noise_multiplier,
        public_marginals=privacy.public_marginals is not None,
        prior_event=privacy.prior_event,
    )


# dual_noise_ratio values whose noise levels and their squares stay finite
# for any noise multiplier the calibration returns (at most 1e5).
_RATIO_RANGE = (1e-100, 1e100)


def noise_of(
    budget,
    sampling_probability,
    steps,
    *,
    active,
    bounded,
    dual_noise_ratio,
    marginal_noise_multiplier,
    selection_noise_multiplier,
    public_marginals,
    prior_event=None,
    constant_choice=False,
):
    """:func:`resolve_noise` of a private fit, from its public inputs one by one.

    Everything the noise (hence the event) depends on is an argument:
    ``budget`` and the scalars of :class:`._plan.FERMIPlanKey`, so a plan
    made from the key alone is the fit's.
    """
    r = dual_noise_ratio
    if active and not _RATIO_RANGE[0] <= r <= _RATIO_RANGE[1]:
        # r**-2, and the release check's squared noise levels r * sigma,
        # overflow float64 beyond it (OverflowError before the fit, or
        # after every step of it).
        raise ValueError(
            f"dual_noise_ratio={r!r} is outside [{_RATIO_RANGE[0]:g}, "
            f"{_RATIO_RANGE[1]:g}]: its noise levels overflow float64."
        )
    joint = math.sqrt(1.0 + r**-2) if active else 1.0
    # The histogram is noised whenever the fit is private: a finite budget,
    # or a user-given noise multiplier (whose epsilon_ is then reported).
    private_marginals = active and not public_marginals and budget.is_private
    z_marg = (
        histogram_noise(budget, marginal_noise_multiplier)
        if private_marginals
        else 0.0
    )
    z_sel = (
        histogram_noise(budget, selection_noise_multiplier)
        if bounded and budget.is_private
        else 0.0
    )
    # The plan's rule makes the choice for calibrated finite budgets only.
    z_choice = choice_noise(budget) if constant_choice else 0.0
    if budget.noise_multiplier is not None:
        sigma_theta = float(budget.noise_multiplier)
        sigma_eff = sigma_theta / joint
        if active and math.isfinite(sigma_theta) and not math.isfinite(r * sigma_theta):
            # The dual block's multiplier is their product: name both, not
            # the infinite multiplier the mechanism would be handed.
            raise ValueError(
                f"noise_multiplier={sigma_theta:g} times dual_noise_ratio="
                f"{r:g}, the dual block's noise multiplier, overflows float64. "
                "Lower one of them."
            )
    elif not budget.is_private:
        sigma_theta = sigma_eff = 0.0
    else:
        sigma_eff = calibrate_fermi_noise(
            float(budget.epsilon),
            float(budget.delta),
            sampling_probability,
            steps,
            z_marg,
            budget.accountant,
            z_sel,
            prior_event,
            z_choice,
        )
        sigma_theta = sigma_eff * joint
    if sigma_eff == 0:
        z_marg = z_sel = z_choice = 0.0
    return FERMINoise(
        primal=sigma_theta,
        dual=r * sigma_theta if active else 0.0,
        effective=sigma_eff,
        marginal=z_marg,
        selection=z_sel,
        joint=joint,
        choice=z_choice,
    )
