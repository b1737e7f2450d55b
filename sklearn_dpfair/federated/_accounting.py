# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The privacy of a federation: each silo's set-up and the fit's records.

The driver resolves every silo's privacy set-up once, from public inputs
only (its size, budget and the shared schedule), before any row is shipped:
:func:`resolve_silo_privacy` checks the silo sizes, chooses each silo's
Gaussian mechanism (the user's noise multiplier or the one its own
accountant calibrates) and checks it against the silo's budget. Workers
receive the resolved :class:`SiloPrivacy` and never calibrate. After the
rounds, :func:`isrl_record` and :func:`secure_aggregation_record` describe
what the released model guarantees.
"""

import dataclasses
import math
from dataclasses import dataclass

from ..privacy import GaussianMechanism, PrivacyBudget, PrivacyRecord, epsilon_of
from ._silos import check_silo_size, per_silo_budget
from ._spider import spider_mechanism

__all__ = [
    "ISRL_MECHANISM",
    "SiloPrivacy",
    "isrl_record",
    "resolve_silo_privacy",
    "secure_aggregation_record",
    "silo_privacy",
]

ISRL_MECHANISM = (
    "ISRL-DP noisy minibatch SGD: each silo's messages are a Poisson-subsampled "
    "Gaussian mechanism in that silo's own records (untrusted server)"
)
_SPIDER_MECHANISM = (
    "ISRL-DP FedProx-SPIDER (Lowy's thesis, Alg. 4, prox = identity), phase "
    "length q = {period}: each silo's messages are Poisson-subsampled Gaussian "
    "mechanisms in that silo's own records (untrusted server): every q-th round "
    "the noisy mean of gradients clipped to C (noise multiplier z1), the other "
    "rounds the noisy mean of per-record gradient differences clipped to c_r = "
    "min({smoothness:g} ||w_r - w_(r-1)||, 2C) (public: broadcast models), noise "
    "std z2 c_r with z2 = sqrt(q) z1"
)
_SECURE_AGGREGATION_MECHANISM = (
    "CONDITIONAL on secure aggregation (the server sees only the weighted sum "
    "of the silos' messages): Poisson-subsampled Gaussian on the aggregate"
)
_SECURE_AGGREGATION_CAVEAT = (
    "a server that sees more than the aggregate (this guarantee assumes secure "
    "aggregation is really deployed; a shuffler is not enough, it shows every "
    "message; otherwise only the per-silo ISRL-DP guarantee holds)"
)


@dataclass(frozen=True)
class SiloPrivacy:
    """The privacy set-up of one silo, resolved from public inputs only.

    Parameters
    ----------
    n_samples : int
        Number of records of the silo it was resolved for (public).
    mechanism : GaussianMechanism
        Clip norm and noise multiplier of each of the silo's noisy sums
        (``clip_norm=inf`` and no noise for a non-private silo).
    record : PrivacyRecord
        The silo's ISRL-DP guarantee for its whole message budget, already
        checked against its budget.

    Examples
    --------
    >>> from sklearn_dpfair.federated import FederationConfig, silo_privacy
    >>> config = FederationConfig(rounds=10, sampling_probability=0.1)
    >>> privacy = silo_privacy(500, 1.0, 1e-5, config)
    >>> privacy.record.epsilon <= 1.0, privacy.record.steps
    (True, 10)
    """

    n_samples: int
    mechanism: GaussianMechanism
    record: PrivacyRecord

    @property
    def noise_multiplier(self):
        """The silo's noise standard deviation in units of the clip norm."""
        return self.mechanism.noise_multiplier

    def with_seed(self, seed):
        """This set-up with its record marked as drawn from ``seed``.

        Parameters
        ----------
        seed : str or None
            Fingerprint of the seed (see
            :func:`~sklearn_dpfair.privacy.noise_seed`); None leaves the
            record as it is.

        Returns
        -------
        privacy : SiloPrivacy
            The same mechanism, with the record's ``seed`` set.
        """
        if seed is None:
            return self
        return dataclasses.replace(
            self, record=dataclasses.replace(self.record, seed=seed)
        )


def silo_privacy(
    n_samples,
    epsilon,
    delta,
    config,
    *,
    noise_multiplier=None,
    silo_id=None,
    caveats=(),
):
    """Resolve the privacy set-up of one silo: size check, noise, record.

    The noise multiplier is the smallest one for which ``config.noisy_steps``
    Poisson-subsampled Gaussian releases are ``(epsilon, delta)``-DP for the
    silo's own accountant (dp-accounting), or ``noise_multiplier`` when
    given (then checked against the budget, blaming that parameter); with
    ``epsilon = inf`` and no ``noise_multiplier`` the silo neither clips nor
    adds noise. With ``config.spider`` the silo's event composes SPIDER's
    two kinds of rounds and the multiplier is its anchor rounds' ``z1``
    (:func:`~sklearn_dpfair.federated._spider.spider_mechanism`). A pure
    function of public inputs.

    Parameters
    ----------
    n_samples : int
        Number of records of the silo (public metadata).
    epsilon, delta : float
        The silo's budget; ``delta`` below ``1 / n_samples``.
    config : FederationConfig
        The public schedule (clip norm, sampling rate, noisy steps,
        accountant).
    noise_multiplier : float, default=None
        Use this noise multiplier instead of calibrating one.
    silo_id : object, default=None
        The silo, for error messages.
    caveats : tuple of str, default=()
        What the fit's guarantee does not cover, recorded in the silo's
        record too.

    Returns
    -------
    privacy : SiloPrivacy
        The silo's mechanism and its checked record.

    Raises
    ------
    ValueError
        If a private silo is too large for its delta (``delta * n_samples
        >= 1``), the silo is too small for the sampling rate,
        ``config.clip_norm`` is not finite for a private silo, or no noise
        multiplier reaches ``epsilon``.
    PrivacyBudgetError
        If the noise spends more than ``epsilon``.

    With a ``silo_id``, an error of the noise or of the budget starts with
    the silo, its ``silo_epsilon`` and its ``silo_delta``.

    Examples
    --------
    >>> from sklearn_dpfair.federated import FederationConfig, silo_privacy
    >>> config = FederationConfig(rounds=100, sampling_probability=0.05)
    >>> strict = silo_privacy(2000, 0.5, 1e-6, config)
    >>> loose = silo_privacy(2000, 4.0, 1e-6, config)
    >>> strict.noise_multiplier > loose.noise_multiplier
    True
    """
    # A silo with epsilon inf and no noise releases nothing private: no
    # delta of its is a promise to check against its size.
    private = not (math.isinf(float(epsilon)) and noise_multiplier is None)
    check_silo_size(
        silo_id, n_samples, delta, config.sampling_probability, private=private
    )
    # The fit's caveats hold for every silo's record too (a label set read
    # from the pooled rows includes the silo's own).
    budget = PrivacyBudget(
        float(epsilon),
        float(delta),
        config.accountant,
        noise_multiplier,
        caveats=tuple(caveats),
    )
    try:
        mechanism, record = _silo_mechanism(budget, config)
    except ValueError as exc:
        if silo_id is None:
            raise
        # The calibration and the budget check speak of "epsilon": in a
        # federation each silo has its own, which the user set (or left to
        # the fit's) per silo, so the error says which silo and budget.
        raise type(exc)(
            f"silo {silo_id!r} (silo_epsilon={float(epsilon):g}, "
            f"silo_delta={float(delta):g}): {exc}"
        ) from exc
    return SiloPrivacy(int(n_samples), mechanism, record)


def _silo_mechanism(budget, config):
    """A silo's Gaussian mechanism and its checked record under ``budget``."""
    q, steps = config.sampling_probability, config.noisy_steps
    if config.spider is not None:
        # Two kinds of rounds, one composed event (federated/_spider.py).
        mechanism, event = spider_mechanism(
            budget, config.clip_norm, q, steps, config.spider
        )
        _check_clip_norm(mechanism)
        description = _SPIDER_MECHANISM.format(**vars(config.spider))
        record = _account(budget, mechanism, description, q=q, steps=steps, event=event)
        return mechanism, record
    mechanism = budget.gaussian(config.clip_norm, sampling_probability=q, steps=steps)
    _check_clip_norm(mechanism)
    record = _account(budget, mechanism, ISRL_MECHANISM, q=q, steps=steps)
    return mechanism, record


def _check_clip_norm(mechanism):
    """Refuse noise calibrated to an unbounded sensitivity.

    A budget's noise is a multiple of the clip norm: with ``clip_norm=inf``
    the gradients are not clipped and no finite noise covers them (only a
    non-private silo, with no noise, may skip the clipping).
    """
    if mechanism.noise_multiplier > 0 and not math.isfinite(mechanism.clip_norm):
        raise ValueError(
            "clip_norm must be finite for a private silo (a finite silo_epsilon "
            "or a noise_multiplier): the Gaussian noise is scaled to the clip "
            f"norm; got clip_norm={mechanism.clip_norm!r}."
        )


def resolve_silo_privacy(
    sizes, silo_epsilon, silo_delta, config, noise_multiplier, *, caveats=()
):
    """The privacy set-up of every silo of a federation, once, on the driver.

    Parameters
    ----------
    sizes : dict
        Silo id to its number of records, in the federation's order.
    silo_epsilon, silo_delta : float or Mapping
        Budget of every silo, or silo id to budget.
    config : FederationConfig
        The public schedule.
    noise_multiplier : float or None
        Force this noise multiplier in every silo (None: calibrate).
    caveats : tuple of str, default=()
        What the fit's guarantee does not cover, recorded in every silo's
        record.

    Returns
    -------
    privacy : dict
        Silo id to its :class:`SiloPrivacy`, in the order of ``sizes``.
    """
    ids = list(sizes)
    epsilons = per_silo_budget(silo_epsilon, ids, name="silo_epsilon", kind="epsilon")
    deltas = per_silo_budget(silo_delta, ids, name="silo_delta", kind="delta")
    return {
        sid: silo_privacy(
            sizes[sid],
            epsilons[sid],
            deltas[sid],
            config,
            noise_multiplier=noise_multiplier,
            silo_id=sid,
            caveats=caveats,
        )
        for sid in ids
    }


def _account(budget, mechanism, description, *, q, steps, event=None, seed=None):
    """The record of ``steps`` Poisson-sampled (rate ``q``) releases.

    Every release of a federation is accounted under add/remove adjacency
    of one record of one silo.
    """
    record = budget.account(
        mechanism,
        description=description,
        adjacency="add_remove",
        sampling_probability=q,
        steps=steps,
        dp_event=event,
    )
    return record if seed is None else dataclasses.replace(record, seed=seed)


def _federation_budget(delta, config, caveats):
    """The budget of the released model: none of its own (``epsilon=inf``).

    Each silo's budget was checked when its set-up was resolved; the
    model's records only describe what those checked releases give.
    """
    return PrivacyBudget(math.inf, delta, config.accountant, caveats=tuple(caveats))


def isrl_record(reports, config, caveats, seed=None):
    """Record-level guarantee for a record of any silo.

    A record of silo ``i`` influences only silo ``i``'s messages, so the
    released model is ``(epsilon_i(delta), delta)``-DP for it at every
    ``delta``. At the largest silo delta, the worst silo's epsilon bounds
    every record; that silo's event is recorded so that ``epsilon`` can be
    recomputed from it.

    Parameters
    ----------
    reports : dict
        Silo id to its :class:`SiloReport`.
    config : FederationConfig
        The public schedule.
    caveats : tuple of str
        Caveats of the fit.
    seed : str or None, default=None
        Seed fingerprint of a seeded run.

    Returns
    -------
    record : PrivacyRecord
        The worst silo's event at the largest silo delta.
    """
    delta = max(r.privacy_record.delta for r in reports.values())
    eps = {
        sid: epsilon_of(r.privacy_record.dp_event, delta, config.accountant)
        for sid, r in reports.items()
    }
    worst = reports[max(eps, key=eps.get)]
    rec = worst.privacy_record
    mechanism = GaussianMechanism(rec.clip_norm, worst.noise_multiplier)
    q, steps, event = rec.sampling_probability, rec.steps, rec.dp_event
    budget = _federation_budget(delta, config, caveats)
    # The worst silo's own description: what its rounds released.
    return _account(
        budget, mechanism, rec.mechanism, q=q, steps=steps, event=event, seed=seed
    )


#: Largest multiplier a secure-aggregation record states for one silo: a
#: Poisson-subsampled Gaussian of multiplier 1e10 already has epsilon 0 for
#: both accountants at the rates and rounds of a fit, and dp-accounting's RDP
#: overflows near 1e154 (it squares the multiplier). Stating a smaller
#: multiplier than the real one is sound: more noise only adds privacy.
AGGREGATE_MAX_MULTIPLIER = 1e10


def _aggregate_multiplier(noise, sensitivity):
    """The aggregate's noise ``noise`` in units of one silo's ``sensitivity``.

    0 where the aggregate carries no noise or the silo does not clip (its
    records are unprotected), capped at :data:`AGGREGATE_MAX_MULTIPLIER`
    where the silo's weight makes its sensitivity negligible (0 after
    underflow) beside the noise.
    """
    if noise == 0 or not math.isfinite(sensitivity):
        return 0.0
    if sensitivity == 0:
        return AGGREGATE_MAX_MULTIPLIER
    return min(noise / sensitivity, AGGREGATE_MAX_MULTIPLIER)


def secure_aggregation_record(reports, weights, config, caveats, seed=None):
    """Central guarantee if the server sees only ``sum_i p_i m_i``.

    No per-silo quantity is assumed uniform: each silo's clip norm ``C_i``,
    noise multiplier ``sigma_i``, sampling rate ``q_i`` and size ``n_i`` are
    read from its own report. A record of silo ``i`` moves the aggregate by
    at most ``p_i C_i / (q_i n_i)`` (when it is sampled, with probability
    ``q_i``), and the aggregate's noise has standard deviation ``S = sqrt(
    sum_j (p_j sigma_j C_j / (q_j n_j))^2)``: a Poisson-subsampled Gaussian
    with rate ``q_i`` and multiplier ``z_i = S q_i n_i / (p_i C_i)`` in each
    of the ``R`` rounds. A silo that does not clip (``C_i = inf``, an
    ``epsilon = inf`` silo) gives ``z_i = 0``: its records are not protected
    by the other silos' noise, and the central epsilon is inf. The worst silo
    is recorded.

    A silo of a tiny weight (``p_i`` of ``1e-300`` beside ``1``) is covered
    by ``z_i`` far beyond ``AGGREGATE_MAX_MULTIPLIER`` (``inf`` where its
    sensitivity underflows to 0), which the accountants cannot read but
    where they already report epsilon 0: its ``z_i`` is recorded as that
    cap, a smaller multiplier than the real one and hence a valid (more
    conservative) description of its releases; such a silo is never the
    worst unless every silo is.

    The weights ``p_j`` are those of every round, so every silo must have
    answered all ``R`` rounds with one noisy gradient each; anything else is
    refused.

    Parameters
    ----------
    reports : dict
        Silo id to its :class:`SiloReport`.
    weights : dict
        Silo id to its normalized server weight ``p_i``.
    config : FederationConfig
        The public schedule.
    caveats : tuple of str
        Caveats of the fit (the secure-aggregation caveat is added).
    seed : str or None, default=None
        Seed fingerprint of a seeded run.

    Returns
    -------
    record : PrivacyRecord
        The worst silo's aggregate event, marked CONDITIONAL.
    """
    answered = {
        sid: (r.rounds_used, r.privacy_record.steps) for sid, r in reports.items()
    }
    if any(a != (config.rounds, config.rounds) for a in answered.values()):
        raise ValueError(
            "secure aggregation accounting needs every silo to answer each of "
            f"the {config.rounds} rounds with one noisy gradient; got (rounds "
            f"answered, noisy steps) per silo {answered}."
        )
    delta = max(r.privacy_record.delta for r in reports.values())
    clip = {s: r.privacy_record.clip_norm for s, r in reports.items()}
    q = {s: r.privacy_record.sampling_probability for s, r in reports.items()}
    # Noise std of each silo's term in the sum; a noiseless silo adds none
    # (its clip may be inf, and inf * 0 is not 0 in floating point). hypot
    # neither overflows nor underflows on the squares of very uneven terms.
    noise = math.hypot(
        *(
            weights[s] * r.noise_multiplier * clip[s] / (q[s] * r.n_samples)
            for s, r in reports.items()
            if r.noise_multiplier > 0
        )
    )
    best = None
    for sid, rep in reports.items():
        sensitivity = weights[sid] * clip[sid] / (q[sid] * rep.n_samples)
        z = _aggregate_multiplier(noise, sensitivity)
        # One aggregate release per round, Poisson-sampled at silo i's rate.
        mechanism = GaussianMechanism(clip[sid], z)
        event = mechanism.event(sampling_probability=q[sid], steps=config.rounds)
        eps = epsilon_of(event, delta, config.accountant)
        if best is None or eps > best[0]:
            best = (eps, event, mechanism, sid)
    _, event, mechanism, sid = best
    budget = _federation_budget(delta, config, (*caveats, _SECURE_AGGREGATION_CAVEAT))
    return _account(
        budget,
        mechanism,
        _SECURE_AGGREGATION_MECHANISM,
        q=q[sid],
        steps=config.rounds,
        event=event,
        seed=seed,
    )
