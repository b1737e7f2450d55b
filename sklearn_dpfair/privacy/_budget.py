# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The privacy set-up of one fit: budget -> mechanism -> event -> record.

Every private fit goes through the same three steps, in this order:

1. :meth:`PrivacyBudget.gaussian` chooses the Gaussian mechanism of its
   noisy sums (the user's ``noise_multiplier``, or the smallest one that the
   accountant certifies for the budget, or no noise at ``epsilon=inf``);
2. the solver runs, drawing every noise through mechanisms of this package;
3. :meth:`PrivacyBudget.account` turns the events the mechanisms emitted
   into the fit's :class:`~sklearn_dpfair.privacy.PrivacyRecord` and checks
   the budget, blaming the user's ``noise_multiplier`` or the library.
"""

import math
from dataclasses import dataclass, replace

from ..utils._numeric import public_float
from ._accounting import (
    _check_sampling_probability,
    _check_steps,
    check_accountant,
    check_delta,
    check_noise_multiplier,
    check_rho,
    epsilon_of,
    zcdp_event,
)
from ._calibration import calibrate_noise_multiplier
from ._laplace import LaplaceMechanism
from ._mechanism import GaussianMechanism
from ._record import PrivacyRecord, check_budget
from ._zcdp import gaussian_noise_std, rho_for_epsilon

__all__ = ["PrivacyBudget"]


@dataclass(frozen=True)
class PrivacyBudget:
    """The public privacy inputs of one fit.

    Parameters
    ----------
    epsilon : float
        Target epsilon > 0 (``inf``: no privacy unless ``noise_multiplier``
        is given).
    delta : float
        Target delta in [0, 1); 0 for pure epsilon-DP (:meth:`laplace`).
    accountant : {"rdp", "pld"}, default="rdp"
        dp-accounting accountant for calibration and the record.
    noise_multiplier : float or None, default=None
        Noise the user fixed; None lets :meth:`gaussian` calibrate it.
    caveats : tuple of str, default=()
        Public-data caveats every record of this fit carries.
    rho : float or None, default=None
        Set on the parts :meth:`split` hands out: the zCDP budget of this
        part, to which its mechanisms are calibrated exactly (the parts
        compose by adding their rho). Not a user parameter: zCDP is the
        accountant's unit for splitting one budget.

    Examples
    --------
    >>> from sklearn_dpfair.privacy import PrivacyBudget
    >>> budget = PrivacyBudget(epsilon=1.0, delta=1e-5)
    >>> mechanism = budget.gaussian(1.0, sampling_probability=0.01, steps=1000)
    >>> round(mechanism.noise_multiplier, 2)
    1.51
    >>> record = budget.account(
    ...     mechanism, sampling_probability=0.01, steps=1000,
    ...     description="DP-SGD", adjacency="add_remove")
    >>> record.epsilon <= 1.0
    True
    >>> PrivacyBudget(epsilon=1.0, delta=float("nan"))
    Traceback (most recent call last):
    ...
    ValueError: delta must be a number in [0, 1), got nan.
    """

    epsilon: float
    delta: float
    accountant: str = "rdp"
    noise_multiplier: float | None = None
    caveats: tuple = ()
    rho: float | None = None

    def __post_init__(self):
        # Python floats from here on: a numpy float32 epsilon or delta kept
        # every product in float32 (a delta share of 1e-45 * 0.5 rounded to
        # 0), numpy scalars warned where they overflowed, and an int such as
        # 10**30 broke numpy's isfinite.
        for name in ("epsilon", "delta", "noise_multiplier", "rho"):
            value = getattr(self, name)
            if value is not None and type(value) is not float:
                object.__setattr__(self, name, public_float(value, name))
        # Written so that NaN fails: a NaN budget calibrates the least noise
        # and its record claims epsilon 0. The one budget of epsilon 0 is a
        # part of a split, whose guarantee is its rho: no share (rho = 0), or
        # a rho so small that dp-accounting's conversion gives epsilon 0.
        if not (self.epsilon > 0 or (self.epsilon == 0 and self.rho is not None)):
            raise ValueError(
                f"epsilon must be > 0 (inf for no privacy), got {self.epsilon!r}."
            )
        check_delta(self.delta)
        # Checked here, not where a Gaussian is calibrated: a pure (Laplace)
        # budget never reaches the accountant, and its record would carry
        # the unknown name.
        check_accountant(self.accountant)
        # A NaN multiplier is read by the RDP accountant as epsilon 0.
        if self.noise_multiplier is not None:
            check_noise_multiplier(self.noise_multiplier)
        if self.rho is not None:
            check_rho(self.rho)

    @property
    def is_private(self):
        """False only for ``epsilon=inf`` without a user noise multiplier."""
        return not (math.isinf(self.epsilon) and self.noise_multiplier is None)

    @property
    def is_calibrated(self):
        """Whether the library, not the user, chooses the noise."""
        return self.noise_multiplier is None

    def split(self, shares):
        """Hand the parts of one fit sub-budgets that compose to this one.

        The budget is converted once to the largest zCDP ``rho`` that
        dp-accounting certifies as ``(epsilon, delta)``-DP
        (:func:`~sklearn_dpfair.privacy._zcdp.rho_for_epsilon`); part ``k``
        gets ``shares[k] * rho``. zCDP composes additively (Bun and Steinke
        2016, Lemma 2.3), so whatever the parts release with mechanisms
        calibrated to their ``rho`` (:meth:`gaussian`, or an exponential
        mechanism of that rho), the composed event is within this budget;
        the fit's record composes the parts' events and the accountant
        checks it.

        Parameters
        ----------
        shares : dict of str to float
            Each part's share, in [0, 1], summing to at most 1.

        Returns
        -------
        parts : dict of str to PrivacyBudget
            One per share, each with its ``rho`` and the ``epsilon`` that
            rho certifies alone at ``delta``; the budget's accountant is
            replaced by RDP (the one that reads zCDP). ``rho = inf`` parts
            for a non-private budget.

        Raises
        ------
        ValueError
            For a negative share, shares summing to more than 1, or a
            budget with a user noise multiplier.

        Examples
        --------
        >>> from sklearn_dpfair.privacy import PrivacyBudget
        >>> parts = PrivacyBudget(1.0, 1e-5).split({"scales": 0.1, "steps": 0.9})
        >>> round(parts["scales"].rho / parts["steps"].rho, 6)
        0.111111
        >>> parts["steps"].epsilon < 1.0
        True
        """
        values = {name: float(share) for name, share in shares.items()}
        if any(not 0.0 <= v <= 1.0 for v in values.values()):
            raise ValueError(f"shares must lie in [0, 1]; got {shares!r}.")
        if math.fsum(values.values()) > 1.0 + 1e-12:
            raise ValueError(f"shares must sum to at most 1; got {shares!r}.")
        if self.noise_multiplier is not None:
            raise ValueError(
                "A budget with a fixed noise_multiplier cannot be split: its "
                "noise is the user's."
            )
        if self.rho is not None:
            rho = self.rho
        elif not self.is_private:
            rho = math.inf
        else:
            rho = rho_for_epsilon(self.epsilon, self.delta)
        parts = {}
        for name, share in values.items():
            part_rho = share * rho if share > 0 else 0.0
            if math.isinf(part_rho):
                part_epsilon = math.inf
            elif part_rho == 0:
                part_epsilon = 0.0
            else:
                part_epsilon = epsilon_of(zcdp_event(part_rho), self.delta, "rdp")
            parts[name] = replace(
                self, epsilon=part_epsilon, accountant="rdp", rho=part_rho
            )
        return parts

    def gaussian(self, clip_norm, *, sampling_probability=1.0, steps=1):
        """The Gaussian mechanism of ``steps`` noisy sums of clip ``clip_norm``.

        Parameters
        ----------
        clip_norm : float
            Sensitivity of each sum.
        sampling_probability, steps
            The releases to calibrate for, as in
            :meth:`GaussianMechanism.event`.

        Returns
        -------
        mechanism : GaussianMechanism
            ``noise_multiplier=0`` and ``clip_norm=inf`` (no clipping) when
            the fit is not private.
        """
        # Checked on every path (a split part divides its rho by steps, and a
        # fixed or absent noise would otherwise accept 0.5 steps).
        _check_steps(steps)
        _check_sampling_probability(sampling_probability)
        if not self.is_private or (self.rho is not None and math.isinf(self.rho)):
            return GaussianMechanism(clip_norm=math.inf, noise_multiplier=0.0)
        if self.rho is not None:
            if steps < 1:
                raise ValueError(
                    f"steps must be an integer >= 1 for a part of a split budget, "
                    f"got {steps!r}."
                )
            # A part of a split: exactly rho-zCDP over its steps, which zCDP
            # does not amplify by subsampling.
            if sampling_probability < 1.0:
                raise ValueError(
                    "A part of a split budget calibrates full-batch Gaussian "
                    "releases only (zCDP has no subsampling amplification)."
                )
            sigma = gaussian_noise_std(1.0, self.rho / steps)
            return GaussianMechanism(clip_norm=clip_norm, noise_multiplier=sigma)
        if self.noise_multiplier is not None:
            sigma = float(self.noise_multiplier)
        else:
            sigma = calibrate_noise_multiplier(
                self.epsilon, self.delta, sampling_probability, steps, self.accountant
            )
        return GaussianMechanism(clip_norm=clip_norm, noise_multiplier=sigma)

    def laplace(self, sensitivity, *, steps=1):
        """The Laplace mechanism of ``steps`` releases of l1 ``sensitivity``.

        Pure differential privacy: each release gets ``epsilon / steps``
        (the epsilons of Laplace releases add up, exactly at ``delta = 0``),
        so the fit is ``(epsilon, 0)``-DP whatever ``delta`` says.

        Parameters
        ----------
        sensitivity : float
            The l1 sensitivity of each release.
        steps : int, default=1
            Number of releases.

        Returns
        -------
        mechanism : LaplaceMechanism
            No noise when the budget is not private.

        Raises
        ------
        ValueError
            For a part of a split budget (:meth:`split`), whose guarantee is
            its zCDP ``rho``, not a pure epsilon; for ``steps`` that is not
            an integer >= 0, or is 0 under a private budget.

        Examples
        --------
        >>> from sklearn_dpfair.privacy import PrivacyBudget
        >>> PrivacyBudget(2.0, 0.0).laplace(1.0, steps=4).noise_multiplier
        2.0
        """
        # Checked on every path, as gaussian() does: 0.01 steps gave 1/100 of
        # the noise each release needs, and 0 steps no noise at all.
        _check_steps(steps)
        if self.rho is not None:
            # A part's epsilon is what its rho certifies at delta; spent as a
            # pure epsilon it is ~ epsilon^2 / 2 of zCDP, far beyond the rho
            # the parts' composition counts on.
            raise ValueError(
                "A part of a split budget (rho-zCDP) cannot calibrate a Laplace "
                "mechanism: its epsilon is an (epsilon, delta) conversion of "
                "its rho, not a pure epsilon. Use gaussian(), or an unsplit "
                "budget with delta=0."
            )
        if not self.is_private:
            return LaplaceMechanism(sensitivity=sensitivity, noise_multiplier=0.0)
        if self.noise_multiplier is not None:
            return LaplaceMechanism(sensitivity, float(self.noise_multiplier))
        if steps < 1:
            # epsilon / 0 releases is no scale: a mechanism of no noise under
            # a private budget would release its sum exactly.
            raise ValueError(
                "steps must be >= 1 for a private budget: a mechanism "
                "calibrated for 0 releases would add no noise."
            )
        return LaplaceMechanism(sensitivity, steps / self.epsilon)

    def account(
        self,
        mechanism,
        *,
        description,
        adjacency,
        sampling_probability=None,
        steps=None,
        dp_event=None,
        caveats=(),
        accountant=None,
        declared_counts=(),
    ):
        """The record of a fit whose releases all went through ``mechanism``.

        Parameters
        ----------
        mechanism : GaussianMechanism, LaplaceMechanism or ExponentialMechanism
            The fit's main mechanism (e.g. from :meth:`gaussian` or
            :meth:`laplace`): it gives
            the record's noise multiplier, sensitivity and, unless
            ``dp_event`` is given, the event.
        description : str
            Human-readable name of the whole mechanism.
        adjacency : {"add_remove", "replace_one"}
            The neighbouring relation the sensitivity was bounded for.
        sampling_probability : float or None, default=None
            Poisson rate of each sum (None: full batch).
        steps : int or None, default=None
            Number of sums released (None: one).
        dp_event : dp_accounting.DpEvent or None, default=None
            The fit's composed event when it released more than the
            mechanism's sums (e.g. a private histogram first); None uses
            ``mechanism.event(...)``.
        caveats : tuple of str, default=()
            Caveats of this fit besides the budget's own.
        accountant : {"rdp", "pld"} or None, default=None
            Overrides the budget's accountant for this event (e.g. PLD, exact
            for a single Gaussian).
        declared_counts : tuple of (str, int) pairs, default=()
            Counts the fit took as declared public values, none read from
            the data (:attr:`PrivacyRecord.declared_counts`).

        Returns
        -------
        record : PrivacyRecord
            What the accountant was given, with the epsilon it computed.

        Raises
        ------
        PrivacyBudgetError
            If the event spends more than ``epsilon``.
        """
        if dp_event is None:
            dp_event = mechanism.event(
                sampling_probability=(
                    1.0 if sampling_probability is None else sampling_probability
                ),
                steps=1 if steps is None else steps,
            )
        record = PrivacyRecord.from_event(
            dp_event,
            delta=self.delta,
            accountant=self.accountant if accountant is None else accountant,
            adjacency=adjacency,
            mechanism=description,
            noise_multiplier=mechanism.noise_multiplier,
            clip_norm=mechanism.clip_norm,
            sampling_probability=sampling_probability,
            steps=steps,
            caveats=(*self.caveats, *caveats),
            declared_counts=tuple(declared_counts),
        )
        # An overshoot names the multiplier the user passed, which a fit may
        # turn into the accounted one (DP-FERMI's joint multiplier).
        checked = (
            record
            if self.is_calibrated
            else replace(record, noise_multiplier=float(self.noise_multiplier))
        )
        check_budget(checked, self.epsilon, calibrated=self.is_calibrated)
        return record
