# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Run a federation: silos + server + round loop, and the privacy it yields.

:func:`fit_federated` is the one code path behind ``DPLogisticRegression(...)
.fit(X, y, silos=...)``, the ISRL-DP Local SGD baseline (a
:class:`FederationConfig` with ``local_steps > 1``) and the "each silo
alone" baseline (:func:`fit_each_silo_alone`, a federation of one).
"""

import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np

from .._solvers._schedules import auto_learning_rate, sgd_schedule
from ..privacy._accounting import epsilon_of, noisy_sgd_event, non_private_event
from ..privacy._random import check_noise_generator, noise_seed
from ..privacy._record import PrivacyRecord
from ._config import FederationConfig
from ._execution import make_execution
from ._server import Server
from ._silo import ISRL_MECHANISM, silo_noise_multiplier
from ._silos import (
    check_silo_size,
    per_silo_budget,
    resolve_server_weights,
    split_by_silo,
)

__all__ = [
    "FederatedFit",
    "fit_each_silo_alone",
    "fit_federated",
    "fit_silos",
    "silo_attributes",
]

_SECURE_AGGREGATION_MECHANISM = (
    "CONDITIONAL on secure aggregation (the server sees only the weighted sum "
    "of the silos' messages): Poisson-subsampled Gaussian on the aggregate"
)
_SECURE_AGGREGATION_CAVEAT = (
    "a server that sees more than the aggregate (this guarantee assumes secure "
    "aggregation or a shuffler is really deployed; otherwise only the per-silo "
    "ISRL-DP guarantee holds)"
)
_SILOS_PUBLIC_CAVEAT = "silo membership and silo sizes (treated as public metadata)"


@dataclass
class FederatedFit:
    """The outcome of :func:`fit_federated`.

    Parameters
    ----------
    coef : ndarray of shape (n_outputs, n_features)
        Tail-averaged coefficients.
    intercept : ndarray of shape (n_outputs,)
        Intercepts.
    rounds : int
        Rounds run by the server.
    silo_reports : dict
        Silo id to its :class:`SiloReport`.
    server_weights : dict
        Silo id to its normalized public weight.
    privacy_record : PrivacyRecord
        Record-level guarantee of the released model for a record of any
        silo (the worst silo's event at the largest silo delta).
    central_record : PrivacyRecord or None
        Central guarantee conditional on secure aggregation, when asked for.
    execution : str
        "local" or "dask".
    transcript : list of SiloMessage or None
        Everything the server received, when asked for.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.federated import FederationConfig, fit_federated
    >>> from sklearn_dpfair._loss import BinaryLogisticLoss
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 2))
    >>> y = (X[:, 0] > 0).astype(float)
    >>> silos = {"a": (X[:1000], y[:1000]), "b": (X[1000:], y[1000:])}
    >>> fit = fit_federated(silos, loss=BinaryLogisticLoss(),
    ...     config=FederationConfig(rounds=50, sampling_probability=0.2),
    ...     silo_epsilon=1.0, silo_delta=1e-5, random_state=0)
    >>> sorted(fit.silo_epsilon), fit.coef.shape
    (['a', 'b'], (1, 2))
    """

    coef: np.ndarray
    intercept: np.ndarray
    rounds: int
    silo_reports: dict
    server_weights: dict
    privacy_record: PrivacyRecord
    central_record: PrivacyRecord | None = None
    execution: str = "local"
    transcript: list | None = field(default=None, repr=False)

    @property
    def silo_epsilon(self):
        """Epsilon each silo spent, at its own delta (dict)."""
        return {s: r.privacy_record.epsilon for s, r in self.silo_reports.items()}

    @property
    def silo_delta(self):
        """Delta of each silo's guarantee (dict)."""
        return {s: r.privacy_record.delta for s, r in self.silo_reports.items()}

    @property
    def silo_noise_multiplier(self):
        """Noise multiplier of each silo (dict)."""
        return {s: r.noise_multiplier for s, r in self.silo_reports.items()}

    @property
    def silo_rounds(self):
        """Messages each silo sent (dict)."""
        return {s: r.rounds_used for s, r in self.silo_reports.items()}

    # The names of a central ``LinearFit``, so estimators treat both alike.
    @property
    def record(self):
        """Alias of ``privacy_record``."""
        return self.privacy_record

    @property
    def n_steps(self):
        """Alias of ``rounds``."""
        return self.rounds


def silo_attributes(fit):
    """Fitted ``silo_*`` attributes of an estimator; all None for a central fit.

    Parameters
    ----------
    fit : FederatedFit or LinearFit
        What the estimator's solver returned.

    Returns
    -------
    attributes : dict
        Attribute name to value.
    """
    names = (
        "silos_",
        "silo_epsilon_",
        "silo_delta_",
        "silo_noise_multiplier_",
        "silo_rounds_",
        "silo_privacy_records_",
        "server_weights_",
        "central_epsilon_",
        "central_privacy_record_",
    )
    if not isinstance(fit, FederatedFit):
        return dict.fromkeys(names)
    central = fit.central_record
    values = (
        list(fit.silo_reports),
        fit.silo_epsilon,
        fit.silo_delta,
        fit.silo_noise_multiplier,
        fit.silo_rounds,
        {s: r.privacy_record for s, r in fit.silo_reports.items()},
        fit.server_weights,
        None if central is None else central.epsilon,
        central,
    )
    return dict(zip(names, values))


def fit_federated(
    silo_data,
    *,
    loss,
    config,
    silo_epsilon,
    silo_delta,
    server_weights="uniform",
    noise_multiplier=None,
    execution="local",
    client=None,
    secure_aggregation=False,
    random_state=None,
    record_transcript=False,
    caveats=(),
):
    """Train a linear model across silos with inter-silo record-level DP.

    Each silo runs a :class:`SiloWorker` with its own budget, accountant and
    noise; the :class:`Server` averages their messages with public weights.
    Every silo takes part in every round, and no privacy amplification is
    credited for it (the server knows who answers).

    Parameters
    ----------
    silo_data : Mapping
        Silo id to ``(X_i, y_i)``, ``y_i`` encoded as ``loss`` expects. The
        order of the mapping fixes the server's summation order.
    loss : object
        Pointwise loss (``BinaryLogisticLoss``, ``SoftmaxLoss``, ...).
    config : FederationConfig
        The public schedule.
    silo_epsilon : float or Mapping
        Budget of every silo, or silo id to budget.
    silo_delta : float or Mapping
        Delta of every silo, or silo id to delta; each below ``1 / n_i``.
    server_weights : {"uniform", "size"} or Mapping, default="uniform"
        Public aggregation weights.
    noise_multiplier : float, default=None
        Force this noise multiplier in every silo (each still checks it
        against its budget).
    execution : {"local", "dask"}, default="local"
        Run the silos in this process or as actors on a Dask cluster.
    client : distributed.Client, default=None
        Dask client for ``execution="dask"``; None uses the current one.
    secure_aggregation : bool, default=False
        Also compute the central guarantee that holds *if* the server only
        sees the weighted sum of the messages (MB-SGD only).
    random_state : None, int, RandomState or Generator, default=None
        Seeds every silo's generator; None uses OS entropy (a release). A
        seed makes the run reproducible and marks every returned record as
        seeded, not a private release (see
        :func:`~sklearn_dpfair.privacy.check_noise_generator`).
    record_transcript : bool, default=False
        Keep every message the server received (for audits and tests).
    caveats : sequence of str, default=()
        Caveats to carry into the privacy records.

    Returns
    -------
    fit : FederatedFit
        Coefficients, per-silo reports and privacy records.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.federated import FederationConfig, fit_federated
    >>> from sklearn_dpfair._loss import BinaryLogisticLoss
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(4000, 2))
    >>> y = (X[:, 0] > 0).astype(float)
    >>> data = {k: (X[k::2], y[k::2]) for k in (0, 1)}
    >>> fit = fit_federated(data, loss=BinaryLogisticLoss(),
    ...     config=FederationConfig(rounds=100, sampling_probability=0.1),
    ...     silo_epsilon={0: 1.0, 1: 3.0}, silo_delta=1e-5, random_state=0)
    >>> fit.silo_noise_multiplier[0] > fit.silo_noise_multiplier[1]
    True
    >>> bool(fit.coef[0, 0] > 1.0)
    True
    """
    return _fit_federated(
        silo_data,
        loss=loss,
        config=config,
        silo_epsilon=silo_epsilon,
        silo_delta=silo_delta,
        server_weights=server_weights,
        noise_multiplier=noise_multiplier,
        execution=execution,
        client=client,
        secure_aggregation=secure_aggregation,
        rng=check_noise_generator(random_state),
        seeded=random_state is not None,
        record_transcript=record_transcript,
        caveats=caveats,
    )


def _fit_federated(
    silo_data,
    *,
    loss,
    config,
    silo_epsilon,
    silo_delta,
    server_weights="uniform",
    noise_multiplier=None,
    execution="local",
    client=None,
    secure_aggregation=False,
    rng,
    seeded,
    record_transcript=False,
    caveats=(),
):
    """:func:`fit_federated` on the fit's generator ``rng``.

    ``seeded`` says whether ``rng`` comes from a seed; then every record
    carries the fingerprint of ``rng``'s initial state.
    """
    seed = noise_seed(rng) if seeded else None
    if not isinstance(config, FederationConfig):
        raise TypeError(
            f"config must be a FederationConfig; got {type(config).__name__}."
        )
    if not silo_data:
        raise ValueError("silo_data is empty: a federation needs at least one silo.")
    if secure_aggregation and config.local_steps > 1:
        raise ValueError(
            "secure_aggregation accounting is derived for one noisy gradient per "
            "round (local_steps=1); Local SGD messages are not a Gaussian "
            "mechanism on the aggregate."
        )
    ids = list(silo_data)
    shapes = {sid: np.shape(silo_data[sid][0]) for sid in ids}
    n_features = {s[1] if len(s) == 2 else None for s in shapes.values()}
    if len(n_features) != 1 or None in n_features:
        raise ValueError(f"every silo needs a 2-d X with the same columns: {shapes}.")
    epsilons = per_silo_budget(
        silo_epsilon, ids, name="silo_epsilon", default=None, kind="epsilon"
    )
    deltas = per_silo_budget(
        silo_delta, ids, name="silo_delta", default=None, kind="delta"
    )
    sizes = {sid: int(shapes[sid][0]) for sid in ids}
    # Public checks on the driver, before any row is shipped to a worker.
    for sid in ids:
        check_silo_size(sid, sizes[sid], deltas[sid], config.sampling_probability)
    weights = resolve_server_weights(server_weights, sizes)

    silo_kwargs = {}
    for sid in ids:
        X_i, y_i = silo_data[sid]
        silo_kwargs[sid] = dict(
            X=X_i,
            y=y_i,
            loss=loss,
            epsilon=epsilons[sid],
            delta=deltas[sid],
            config=config,
            noise_multiplier=noise_multiplier,
            silo_id=sid,
            random_state=_child_generator(rng),
        )

    n_features = n_features.pop()
    if config.learning_rate == "auto":
        config = _resolve_auto_learning_rate(
            config,
            epsilons,
            deltas,
            sizes,
            weights,
            noise_multiplier,
            n_params=(n_features + 1) * loss.n_outputs,
        )
        for kw in silo_kwargs.values():
            kw["config"] = config
    server = Server(n_features, loss.n_outputs, config=config, weights=weights)
    transcript = [] if record_transcript else None
    runner = make_execution(execution, silo_kwargs, client)
    try:
        for r in range(config.rounds):
            messages = runner.messages(server.model, r)
            if transcript is not None:
                transcript.extend(messages)
            server.step(messages)
        reports = runner.reports()
    finally:
        runner.close()
    if seed is not None:
        # Every silo's generator derives from the seed: all records are seeded.
        reports = {
            sid: dataclasses.replace(
                rep, privacy_record=dataclasses.replace(rep.privacy_record, seed=seed)
            )
            for sid, rep in reports.items()
        }

    coef, intercept = server.coefficients()
    caveats = tuple(caveats)
    return FederatedFit(
        coef=coef,
        intercept=intercept,
        rounds=config.rounds,
        silo_reports=reports,
        server_weights=server.weights,
        privacy_record=_isrl_record(reports, config, caveats, seed),
        central_record=(
            _secure_aggregation_record(reports, server.weights, config, caveats, seed)
            if secure_aggregation
            else None
        ),
        execution=runner.name,
        transcript=transcript,
    )


def fit_each_silo_alone(
    silo_data,
    *,
    loss,
    config,
    silo_epsilon,
    silo_delta,
    noise_multiplier=None,
    random_state=None,
):
    """Baseline: every silo trains on its own records only, with its own budget.

    Each silo is a federation of one (same code path, same schedule), so its
    model is central DP-SGD on its own data with ``(epsilon_i, delta_i)``.

    Parameters
    ----------
    silo_data : Mapping
        Silo id to ``(X_i, y_i)``.
    loss : object
        Pointwise loss.
    config : FederationConfig
        The schedule each silo follows alone.
    silo_epsilon : float or Mapping
        Budget of every silo, or silo id to budget.
    silo_delta : float or Mapping
        Delta of every silo, or silo id to delta.
    noise_multiplier : float, default=None
        Force this noise multiplier (checked against each budget).
    random_state : None, int, RandomState or Generator, default=None
        Seeds every silo's generator; None uses OS entropy. Each silo's fit
        draws its own stream (derived from the seed when there is one).

    Returns
    -------
    fits : dict
        Silo id to the :class:`FederatedFit` of that silo alone.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.federated import FederationConfig, fit_each_silo_alone
    >>> from sklearn_dpfair._loss import BinaryLogisticLoss
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 2))
    >>> y = (X[:, 0] > 0).astype(float)
    >>> fits = fit_each_silo_alone({"a": (X[:1000], y[:1000]),
    ...     "b": (X[1000:], y[1000:])}, loss=BinaryLogisticLoss(),
    ...     config=FederationConfig(rounds=50, sampling_probability=0.2),
    ...     silo_epsilon=1.0, silo_delta=1e-5, random_state=0)
    >>> sorted(fits)
    ['a', 'b']
    """
    ids = list(silo_data)
    epsilons = per_silo_budget(
        silo_epsilon, ids, name="silo_epsilon", default=None, kind="epsilon"
    )
    deltas = per_silo_budget(
        silo_delta, ids, name="silo_delta", default=None, kind="delta"
    )
    rng = check_noise_generator(random_state)
    return {
        sid: _fit_federated(
            {sid: silo_data[sid]},
            loss=loss,
            config=config,
            silo_epsilon=epsilons[sid],
            silo_delta=deltas[sid],
            noise_multiplier=noise_multiplier,
            # A child stream per silo: one shared generator would be copied
            # by each fit and every silo would draw the same noise.
            rng=_child_generator(rng),
            seeded=random_state is not None,
        )
        for sid in ids
    }


def fit_silos(
    X,
    y,
    loss,
    *,
    silos,
    epsilon,
    delta,
    silo_epsilon,
    silo_delta,
    server_weights,
    execution,
    secure_aggregation,
    clip_norm,
    noise_multiplier,
    batch_size,
    epochs,
    learning_rate,
    alpha,
    fit_intercept,
    accountant,
    rng,
    seeded,
    caveats=(),
):
    """The federated fit of a linear estimator (``fit(X, y, silos=...)``).

    Maps the estimator's parameters onto a :class:`FederationConfig`: the
    sampling rate and the number of rounds come from ``sgd_schedule`` on the
    pooled size ``n`` (``q = batch_size / n`` in every silo,
    ``R = ceil(epochs / q)``: each silo makes ``epochs`` expected passes over
    its rows), and unset silo budgets default to ``epsilon`` / ``delta``.
    ``rng`` is the fit's generator and ``seeded`` whether it came from a seed
    (``random_state`` not None); the records say so.
    """
    ids, rows = split_by_silo(silos, X.shape[0])
    q, rounds = sgd_schedule(X.shape[0], batch_size, epochs)
    config = FederationConfig(
        rounds=rounds,
        sampling_probability=q,
        clip_norm=clip_norm,
        learning_rate=learning_rate,
        alpha=alpha,
        fit_intercept=fit_intercept,
        accountant=accountant,
    )
    return _fit_federated(
        {sid: (X[r], y[r]) for sid, r in zip(ids, rows)},
        loss=loss,
        config=config,
        silo_epsilon=per_silo_budget(
            silo_epsilon, ids, name="silo_epsilon", default=epsilon, kind="epsilon"
        ),
        silo_delta=per_silo_budget(
            silo_delta, ids, name="silo_delta", default=delta, kind="delta"
        ),
        server_weights=server_weights,
        noise_multiplier=noise_multiplier,
        execution=execution,
        secure_aggregation=secure_aggregation,
        rng=rng,
        seeded=seeded,
        caveats=(*caveats, _SILOS_PUBLIC_CAVEAT),
    )


def _child_generator(rng):
    """A generator seeded with 128 fresh bits of ``rng``: an independent
    stream, reproducible under a seed, unpredictable without one."""
    return np.random.default_rng(rng.integers(0, 2**32, size=4, dtype=np.uint64))


def _resolve_auto_learning_rate(
    config, epsilons, deltas, sizes, weights, noise_multiplier, *, n_params
):
    """Concrete step size for ``learning_rate="auto"`` from public quantities.

    The central rule looks at the noise std on the averaged gradient in
    units of the clip norm, ``sigma / (q n)``. The server's averaged message
    carries ``sqrt(sum_i (p_i sigma_i / (q n_i))^2)``; it is expressed as an
    equivalent noise multiplier on the pooled ``n`` and handed to the same
    rule, so federated and central fits pick their step the same way.
    """
    q = config.sampling_probability
    n = sum(sizes.values())
    aggregate = math.sqrt(
        math.fsum(
            (
                weights[s]
                * silo_noise_multiplier(
                    epsilons[s], deltas[s], config, noise_multiplier
                )
                / (q * sizes[s])
            )
            ** 2
            for s in sizes
        )
    )
    lr = auto_learning_rate(aggregate * q * n, q, n, n_params)
    return dataclasses.replace(config, learning_rate=lr)


def _isrl_record(reports, config, caveats, seed=None):
    """Record-level guarantee for a record of any silo.

    A record of silo ``i`` influences only silo ``i``'s messages, so the
    released model is ``(epsilon_i(delta), delta)``-DP for it at every
    ``delta``. At the largest silo delta, the worst silo's epsilon bounds
    every record; that silo's event is recorded so that ``epsilon`` can be
    recomputed from it.
    """
    delta = max(r.privacy_record.delta for r in reports.values())
    eps = {
        sid: epsilon_of(r.privacy_record.dp_event, delta, config.accountant)
        for sid, r in reports.items()
    }
    worst = max(eps, key=eps.get)
    rep = reports[worst]
    return PrivacyRecord.from_event(
        rep.privacy_record.dp_event,
        delta=delta,
        accountant=config.accountant,
        adjacency="add_remove",
        mechanism=ISRL_MECHANISM,
        noise_multiplier=rep.noise_multiplier,
        clip_norm=rep.privacy_record.clip_norm,
        sampling_probability=rep.privacy_record.sampling_probability,
        steps=rep.privacy_record.steps,
        caveats=caveats,
        seed=seed,
    )


def _secure_aggregation_record(reports, weights, config, caveats, seed=None):
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

    The weights ``p_j`` are those of every round, so every silo must have
    answered all ``R`` rounds with one noisy gradient each; anything else is
    refused.
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
    # (its clip may be inf, and inf * 0 is not 0 in floating point).
    noise = math.sqrt(
        math.fsum(
            (weights[s] * r.noise_multiplier * clip[s] / (q[s] * r.n_samples)) ** 2
            for s, r in reports.items()
            if r.noise_multiplier > 0
        )
    )
    best = None
    for sid, rep in reports.items():
        sensitivity = weights[sid] * clip[sid] / (q[sid] * rep.n_samples)
        z = noise / sensitivity if math.isfinite(sensitivity) else 0.0
        event = (
            noisy_sgd_event(z, q[sid], config.rounds) if z > 0 else non_private_event()
        )
        eps = epsilon_of(event, delta, config.accountant)
        if best is None or eps > best[0]:
            best = (eps, event, z, sid)
    _, event, z, sid = best
    return PrivacyRecord.from_event(
        event,
        delta=delta,
        accountant=config.accountant,
        adjacency="add_remove",
        mechanism=_SECURE_AGGREGATION_MECHANISM,
        noise_multiplier=z,
        clip_norm=clip[sid],
        sampling_probability=q[sid],
        steps=config.rounds,
        caveats=(*caveats, _SECURE_AGGREGATION_CAVEAT),
        seed=seed,
    )
