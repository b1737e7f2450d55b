# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""ISRL-DP FedProx-SPIDER's rounds: which release a round makes, and its noise.

Lowy's thesis, Sec. 3.3.2, Alg. 4 (with ``f1 = 0``: the prox is the
identity), for a non-smooth model. Round ``r`` is an *anchor* round when
``r = 0 (mod q)``: each silo releases the noisy mean of its records'
gradients at ``w_r``, clipped to ``C`` (noise multiplier ``z1``), and the
server restarts its estimate, ``h_r = H_r``. In the other rounds each silo
releases the noisy mean of its records' *differences*
``clip_C(grad f(w_r, x)) - clip_C(grad f(w_{r-1}, x))`` and the server
accumulates, ``h_r = h_{r-1} + H_r`` (the path-integrated estimator, Alg. 4
line 12); every round it steps ``w_{r+1} = w_r - eta h_r``.

The thesis bounds a difference's sensitivity by ``beta ||w_r - w_{r-1}||``
for a ``beta``-smooth loss (its noise ``sigma_2^2 min(||w_r - w_{r-1}||^2,
...)``, Alg. 4 line 10). A network with ReLU units is not smooth, so each
record's difference is *clipped* to ``c_r = min(beta ||w_r - w_{r-1}||,
2C)``: ``beta`` is a public parameter (the smoothness the thesis assumes),
``2C`` is what the difference of two ``C``-clipped gradients can always be,
and ``w_r``, ``w_{r-1}`` are broadcast models, so ``c_r`` is public. The
noise std is ``z2 c_r``: every difference round is a Poisson-subsampled
Gaussian mechanism of multiplier ``z2`` whatever ``c_r`` is, and a silo's
``R`` rounds compose ``ceil(R / q)`` releases of multiplier ``z1`` and the
rest of multiplier ``z2`` (dp-accounting). The ratio ``z2 / z1 = sqrt(q)``
is the thesis's own experimental choice (Appendix B.2.4: ``sigma_1^2 =
16 L^2 ln(1/delta) R / (q eps^2 n^2)`` and ``sigma_2-hat^2 = 64 L^2 R
ln(1/delta) / (eps^2 n^2)`` with sensitivities ``L`` and ``2L``), which
gives the anchors and the differences about equal shares of the budget;
``z1`` is then calibrated to the silo's budget.
"""

import functools
import math
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np

from ..privacy import GaussianMechanism
from ..privacy._accounting import composed_event, noisy_sgd_event, non_private_event
from ..privacy._calibration import calibrate_noise
from ..privacy._mechanism import MIN_NOISE_SCALE

__all__ = ["SpiderRounds", "SpiderSchedule", "spider_mechanism"]


@dataclass(frozen=True)
class SpiderSchedule:
    """The public schedule of ISRL-DP FedProx-SPIDER (Lowy's thesis, Alg. 4).

    Parameters
    ----------
    period : int
        Phase length ``q``: rounds ``0, q, 2q, ...`` are anchor rounds (full
        clipped gradients), the others difference rounds. ``period=1`` is
        noisy ISRL-DP minibatch SGD.
    smoothness : float
        Public ``beta`` > 0 (``inf`` allowed): each record's gradient
        difference is clipped to ``min(beta ||w_r - w_{r-1}||, 2C)``.

    Examples
    --------
    >>> from sklearn_dpfair.federated._spider import SpiderSchedule
    >>> schedule = SpiderSchedule(period=4, smoothness=2.0)
    >>> schedule.counts(10)  # anchor rounds 0, 4, 8; seven difference rounds
    (3, 7)
    >>> schedule.noise_ratio
    2.0
    """

    period: int
    smoothness: float

    def __post_init__(self):
        if (
            isinstance(self.period, bool)
            or not isinstance(self.period, Integral)
            or self.period < 1
        ):
            raise ValueError(f"period must be a positive int; got {self.period!r}.")
        if (
            isinstance(self.smoothness, bool)
            or not isinstance(self.smoothness, Real)
            or not self.smoothness > 0
        ):
            raise ValueError(
                f"smoothness must be a positive float; got {self.smoothness!r}."
            )

    @property
    def noise_ratio(self):
        """``z2 / z1 = sqrt(q)`` (the thesis's experiments, Appendix B.2.4)."""
        return math.sqrt(self.period)

    def is_anchor(self, round_index):
        """Whether round ``round_index`` releases full clipped gradients."""
        return round_index % self.period == 0

    def counts(self, rounds):
        """``(anchor rounds, difference rounds)`` among rounds ``0..R-1``."""
        anchors = -(-int(rounds) // self.period)
        return anchors, int(rounds) - anchors

    def difference_multiplier(self, anchor_multiplier):
        """``z2`` of the difference rounds for the anchors' ``z1``."""
        return anchor_multiplier * self.noise_ratio

    def event(self, anchor_multiplier, sampling_probability, rounds):
        """The ``DpEvent`` of one silo's ``rounds`` messages.

        ``ceil(R / q)`` Poisson-subsampled Gaussian releases of multiplier
        ``z1`` composed with ``R - ceil(R / q)`` of multiplier ``z2``; with
        ``q = 1`` exactly minibatch SGD's event.

        Examples
        --------
        >>> from sklearn_dpfair.federated._spider import SpiderSchedule
        >>> event = SpiderSchedule(4, 1.0).event(2.0, 0.1, 8)
        >>> [(e.count, e.event.event.noise_multiplier) for e in event.events]
        [(2, 2.0), (6, 4.0)]
        """
        if anchor_multiplier == 0:
            return non_private_event()
        anchors, differences = self.counts(rounds)
        parts = [noisy_sgd_event(anchor_multiplier, sampling_probability, anchors)]
        if differences:
            z2 = self.difference_multiplier(anchor_multiplier)
            parts.append(noisy_sgd_event(z2, sampling_probability, differences))
        return composed_event(parts)

    def difference_clip(self, model, previous, clip_norm):
        """``c_r = min(beta ||w_r - w_{r-1}||, 2C)``: public (broadcast models).

        ``inf`` for a silo that does not clip (``C = inf``: the non-private
        limit runs the exact SPIDER differences); 0 when the model did not
        move (every difference is then 0).
        """
        if math.isinf(clip_norm):
            return math.inf
        with np.errstate(over="ignore"):
            moved = float(np.linalg.norm(np.asarray(model) - np.asarray(previous)))
        if moved == 0.0:
            return 0.0
        if math.isinf(self.smoothness):
            return 2.0 * clip_norm
        return min(self.smoothness * moved, 2.0 * clip_norm)

    def difference_mechanism(self, anchor, model, previous):
        """The Gaussian mechanism of a difference round: clip ``c_r``, ``z2``.

        A ``c_r`` whose noise ``z2 c_r`` would lie below the smallest normal
        float64 (:data:`~sklearn_dpfair.privacy._mechanism.MIN_NOISE_SCALE`:
        a tiny public ``smoothness``, or a model that barely moved) is
        taken as 0: every difference is clipped to 0, the sum is 0 whatever
        the records hold and needs no noise. The round still makes (and
        logs) its one release of multiplier ``z2``, so the silo releases
        what its event accounts, and ``c_r`` is public (broadcast models),
        so the choice reveals nothing.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn_dpfair.federated._spider import SpiderSchedule
        >>> from sklearn_dpfair.privacy import GaussianMechanism
        >>> schedule = SpiderSchedule(period=4, smoothness=1e-310)
        >>> mechanism = schedule.difference_mechanism(
        ...     GaussianMechanism(1.0, 1.5), np.ones(2), np.zeros(2))
        >>> mechanism.clip_norm, mechanism.noise_multiplier
        (0.0, 3.0)
        """
        clip = self.difference_clip(model, previous, anchor.clip_norm)
        multiplier = self.difference_multiplier(anchor.noise_multiplier)
        tiny = 0 < clip < math.inf and multiplier * clip < MIN_NOISE_SCALE
        if multiplier > 0 and tiny:
            # No Gaussian noise of that scale can be drawn (its draws are
            # quantized to subnormals, or 0): release the constant 0 instead.
            clip = 0.0
        return GaussianMechanism(clip, multiplier)


def spider_mechanism(budget, clip_norm, sampling_probability, rounds, schedule):
    """The anchor rounds' Gaussian mechanism and the silo's composed event.

    ``z1`` is the user's noise multiplier, or the smallest one whose
    :meth:`SpiderSchedule.event` the budget's accountant certifies
    (dp-accounting, :func:`~sklearn_dpfair.privacy.calibrate_noise`); no
    noise and no clipping for a non-private budget. Public inputs only.

    Returns
    -------
    mechanism : GaussianMechanism
        Clip ``C`` and multiplier ``z1`` of the anchor rounds.
    event : dp_accounting.DpEvent
        What the silo's ``rounds`` messages release.
    """
    if not budget.is_private:
        mechanism = GaussianMechanism(clip_norm=math.inf, noise_multiplier=0.0)
    elif budget.noise_multiplier is not None:
        mechanism = GaussianMechanism(clip_norm, float(budget.noise_multiplier))
    else:
        z1 = _calibrated_anchor_multiplier(
            budget.epsilon,
            budget.delta,
            float(sampling_probability),
            int(rounds),
            schedule,
            budget.accountant,
        )
        mechanism = GaussianMechanism(clip_norm, z1)
    event = schedule.event(mechanism.noise_multiplier, sampling_probability, rounds)
    return mechanism, event


@functools.lru_cache(maxsize=256)
def _calibrated_anchor_multiplier(
    epsilon, delta, sampling_probability, rounds, schedule, accountant
):
    # Memoized: a pure function of public inputs (every silo of a fit with
    # one budget, and the plan, ask the same question).
    return calibrate_noise(
        lambda z: schedule.event(z, sampling_probability, rounds),
        epsilon,
        delta,
        accountant,
    )


class SpiderRounds:
    """One silo's side of SPIDER: which release each round makes.

    Keeps the previous broadcast model (public) and hands the network the
    anchor mechanism or the round's difference mechanism. Everything it
    holds is public; the releases are the network's.

    Parameters
    ----------
    schedule : SpiderSchedule
        The public schedule.
    anchor : GaussianMechanism
        The silo's resolved anchor mechanism (clip ``C``, multiplier ``z1``).
    """

    def __init__(self, schedule, anchor):
        self._schedule = schedule
        self._anchor = anchor
        self._previous = None
        self._last_round = None

    def release(self, network, X, y, model, round_index, **kwargs):
        """The silo's release of round ``round_index`` at ``model``.

        ``kwargs`` (``denominator``, ``alpha``, ``rng``) go to the network's
        ``noisy_gradient`` (anchor rounds) or ``noisy_difference`` (the
        others, against the model of the previous round).
        """
        if self._schedule.is_anchor(round_index):
            release = network.noisy_gradient(
                X, y, model, mechanism=self._anchor, **kwargs
            )
        else:
            if self._last_round != round_index - 1:
                raise ValueError(
                    f"SPIDER round {round_index} is a difference round: the "
                    "silo must have answered the round before it."
                )
            release = network.noisy_difference(
                X,
                y,
                model,
                self._previous,
                clip_norm=self._anchor.clip_norm,
                mechanism=self._schedule.difference_mechanism(
                    self._anchor, model, self._previous
                ),
                **kwargs,
            )
        self._previous = np.array(model, dtype=np.float64)
        self._last_round = round_index
        return release
