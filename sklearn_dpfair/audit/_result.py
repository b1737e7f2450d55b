# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""What an audit reports."""

import math
from dataclasses import asdict, dataclass
from decimal import Decimal

from ._bounds import epsilon_ceiling

__all__ = ["AuditResult"]


def _percent(fraction):
    """``fraction`` as a percentage, its digits as given, never rounded.

    A rounded percentage overstates a confidence (0.999 would read "100%",
    0.955 "96%"); shifting the decimal point of the shortest repr of the
    float (what the caller typed) changes no digit.
    """
    shifted = Decimal(repr(float(fraction))).scaleb(2).normalize()
    return f"{shifted:f}%" if shifted.is_finite() else repr(fraction)


@dataclass(frozen=True)
class AuditResult:
    """Outcome of an empirical privacy audit.

    The audit guesses, from one output, whether the canary was in the
    training data. The error rates of that guess on held-out runs give a
    lower confidence bound on epsilon at ``audit_delta``; a bound above the
    claimed epsilon at the same delta is a *violation*: with probability at
    least ``confidence`` the mechanism is not as private as it says.

    Parameters
    ----------
    epsilon_lower_bound : float
        Lower confidence bound on epsilon at ``audit_delta``.
    epsilon_claimed : float
        Epsilon claimed at ``audit_delta`` (from the claimed DpEvent's privacy
        profile, or the stated epsilon when only ``(epsilon, delta)`` is known).
    audit_delta : float
        Delta at which the test was evaluated (chosen on the selection runs).
    claim_epsilon, claim_delta : float
        The nominal claim, of the whole release: ``claim_delta`` is the
        estimator's ``delta_`` plus ``additional_delta`` (its
        ``privacy_record_.total_delta``) and ``claim_epsilon`` the epsilon
        of its ``dp_event_`` at ``delta_`` by the PLD accountant, the
        tightest bound dp-accounting certifies (at most the estimator's
        ``epsilon_``, lower when that was computed with RDP).
    confidence : float
        Confidence level of the lower bound.
    threshold : float
        Decision threshold on the statistic.
    direction : {"greater", "less"}
        "greater": a statistic above ``threshold`` guesses "canary in".
    n_selection, n_evaluation : int
        Runs of world 0 (without the canary) used to choose the test and to
        evaluate it.
    false_positives, false_negatives : int
        Errors of the test on the evaluation runs: false positives among the
        ``n_evaluation`` runs of world 0, false negatives among the
        ``n_evaluation_with`` runs of world 1.
    fpr_upper, fnr_upper : float
        Clopper-Pearson upper bounds on the two error rates (simultaneous at
        ``confidence``: each at ``1 - (1 - confidence) / 2``).
    violation : bool
        ``epsilon_lower_bound > epsilon_claimed``.
    nominal_epsilon_lower_bound : float
        A second lower bound, at ``claim_delta``, from the test chosen for
        that delta (valid on its own at ``confidence``, not jointly with the
        first; the verdict uses the first only). Directly comparable with
        ``claim_epsilon``, but usually far below it: at small delta the
        guarantee is about events too rare to observe in a thousand runs.
    epsilon_ceiling : float, optional
        The largest lower bound these runs could certify at ``audit_delta``
        and ``confidence``: the bound of a test with zero errors on
        ``n_evaluation`` and ``n_evaluation_with`` runs. Derived when not
        given.
    conclusive : bool, optional
        ``epsilon_ceiling > epsilon_claimed``: whether a violation was
        reachable at all. A result that is not conclusive reads
        "inconclusive", never "no violation". Derived when not given.
    n_selection_with, n_evaluation_with : int, optional
        Runs of world 1 (with the canary) used to choose the test and to
        evaluate it; the worlds may differ in size. Default: the same as
        world 0.
    additional_delta : float, default=0.0
        Part of ``claim_delta`` spent outside the claimed event by a
        partition-selection threshold (a private category discovery, added
        by the union bound): the claim at every delta ``d`` is the event's
        epsilon at ``d - additional_delta``.

    Examples
    --------
    >>> from sklearn_dpfair.audit import AuditResult
    >>> r = AuditResult(0.1, 1.0, 1e-5, 1.0, 1e-5, 0.95, 0.0, "greater",
    ...                 100, 100, 40, 45, 0.5, 0.55, False, 0.1)
    >>> r.violation, r.conclusive
    (False, True)
    >>> print(r)  # doctest: +ELLIPSIS
    Privacy audit (no violation): epsilon >= 0.1 at delta = 1e-05 ...
    """

    epsilon_lower_bound: float
    epsilon_claimed: float
    audit_delta: float
    claim_epsilon: float
    claim_delta: float
    confidence: float
    threshold: float
    direction: str
    n_selection: int
    n_evaluation: int
    false_positives: int
    false_negatives: int
    fpr_upper: float
    fnr_upper: float
    violation: bool
    nominal_epsilon_lower_bound: float = 0.0
    epsilon_ceiling: float = None
    conclusive: bool = None
    n_selection_with: int = None
    n_evaluation_with: int = None
    additional_delta: float = 0.0

    def __post_init__(self):
        # Derived from the other fields when not given (frozen: set directly).
        if self.n_selection_with is None:
            object.__setattr__(self, "n_selection_with", self.n_selection)
        if self.n_evaluation_with is None:
            object.__setattr__(self, "n_evaluation_with", self.n_evaluation)
        if self.epsilon_ceiling is None:
            ceiling = epsilon_ceiling(
                self.n_evaluation,
                self.n_evaluation_with,
                self.audit_delta,
                confidence=self.confidence,
            )
            object.__setattr__(self, "epsilon_ceiling", ceiling)
        if self.conclusive is None:
            conclusive = bool(self.epsilon_ceiling > self.epsilon_claimed)
            object.__setattr__(self, "conclusive", conclusive)

    @property
    def verdict(self):
        """"VIOLATION", "no violation" or "inconclusive" (no violation reachable)."""
        if self.violation:
            return "VIOLATION"
        return "no violation" if self.conclusive else "inconclusive"

    @property
    def margin(self):
        """``epsilon_lower_bound - epsilon_claimed`` (positive: a violation)."""
        return self.epsilon_lower_bound - self.epsilon_claimed

    def to_dict(self):
        """The result as a plain dict.

        Returns
        -------
        result : dict
            One entry per field.
        """
        return asdict(self)

    def __str__(self):
        verdict = self.verdict
        claimed = (
            "inf" if math.isinf(self.epsilon_claimed) else f"{self.epsilon_claimed:.3g}"
        )
        return (
            f"Privacy audit ({verdict}): epsilon >= {self.epsilon_lower_bound:.3g} "
            f"at delta = {self.audit_delta:.3g} with {_percent(self.confidence)} "
            "confidence; "
            f"claimed epsilon there: {claimed} (nominal claim "
            f"({self.claim_epsilon:.3g}, {self.claim_delta:.3g})"
            + (
                f", whose delta includes {self.additional_delta:.3g} spent by "
                "the partition-selection threshold outside the accounted event "
                "(the claim at delta d is the event's epsilon at d - "
                f"{self.additional_delta:.3g})"
                if self.additional_delta
                else ""
            )
            + f"; epsilon >= {self.nominal_epsilon_lower_bound:.3g} there). "
            "Test: statistic "
            f"{'>' if self.direction == 'greater' else '<'} {self.threshold:.4g}; "
            f"{self.false_positives} false positives in {self.n_evaluation} "
            f"held-out runs without the canary and {self.false_negatives} false "
            f"negatives in {self.n_evaluation_with} with it ({self.n_selection} + "
            f"{self.n_selection_with} runs chose the test). "
            f"The most these runs could certify there: epsilon >= "
            f"{self.epsilon_ceiling:.3g}"
            + (
                "."
                if self.conclusive
                else " (not above the claim: this audit could not have found a "
                "violation; run more)."
            )
        )
