# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The driver of a federation: resolve its privacy once, then run the rounds.

:func:`fit_federated` is the one code path behind ``DPLogisticRegression(...)
.fit(X, y, silos=...)``, the ISRL-DP Local SGD baseline (a
:class:`FederationConfig` with ``local_steps > 1``) and the "each silo
alone" baseline (:func:`fit_each_silo_alone`, a federation of one). Every
public check and every silo's noise calibration happen here, on the driver,
before any row is shipped to a worker; the workers only apply the noise
they are given.
"""

import dataclasses
import math

import numpy as np

from .._solvers._schedules import auto_learning_rate, penalty_capped_learning_rate
from ..privacy import check_noise_generator
from ..privacy._random import noise_seed
from ._accounting import isrl_record, resolve_silo_privacy, secure_aggregation_record
from ._config import FederationConfig
from ._execution import make_execution
from ._result import FederatedFit
from ._server import Server
from ._shuffle import fit_shuffled
from ._silos import resolve_server_weights

__all__ = [
    "check_federation",
    "check_secure_aggregation",
    "fit_each_silo_alone",
    "fit_federated",
    "run_federation",
]


def check_shuffle_options(
    *, server_weights, noise_multiplier, execution, secure_aggregation, network,
    spider,
):
    """Refuse the options a shuffled federation (``shuffle=True``) cannot take.

    Public parameters only: a fit checks them in its plan, before any silo
    reads a row.

    Examples
    --------
    >>> from sklearn_dpfair.federated._driver import check_shuffle_options
    >>> check_shuffle_options(server_weights="size", noise_multiplier=None,
    ...     execution="local", secure_aggregation=False, network=None, spider=None)
    Traceback (most recent call last):
    ...
    ValueError: shuffle=True cannot be combined with ['server_weights']: ...
    """
    forced = {
        "server_weights": server_weights != "uniform",
        "noise_multiplier": noise_multiplier is not None,
        "execution": execution != "local",
        "secure_aggregation": bool(secure_aggregation),
        "network": network is not None,
        "spider": spider is not None,
    }
    bad = [name for name, on in forced.items() if on]
    if bad:
        raise ValueError(
            f"shuffle=True cannot be combined with {bad}: anonymous reports "
            "are averaged with equal weights, their noise is calibrated to "
            "the silos' budgets, the shuffler runs in this process, and "
            "its one-record reports are a linear model's."
        )


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
    shuffle=False,
    random_state=None,
    record_transcript=False,
    caveats=(),
    network=None,
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
        Force this noise multiplier in every silo (each is still checked
        against its silo's budget).
    execution : {"local", "dask"}, default="local"
        Run the silos in this process or as actors on a Dask cluster.
    client : distributed.Client, default=None
        Dask client for ``execution="dask"``; None uses the current one.
    secure_aggregation : bool, default=False
        Also compute the central guarantee that holds *if* the server only
        sees the weighted sum of the messages (MB-SGD only).
    shuffle : bool, default=False
        Run the shuffle-model protocol (:mod:`._shuffle`): each round every
        silo sends the Laplace-noised, L1-clipped gradient of one record
        drawn uniformly, a trusted shuffler permutes the reports and strips
        their senders, and the server averages them with equal weights. The
        silos' budgets stay ISRL-DP budgets (``privacy_record``); the
        guarantee amplified by shuffling, conditional on the shuffler, is
        ``shuffle_record``. Needs ``server_weights="uniform"``,
        ``execution="local"``, no ``noise_multiplier`` and no
        ``secure_aggregation``.
    random_state : None, int, RandomState or Generator, default=None
        Seeds every silo's generator; None uses OS entropy (a release). A
        seed makes the run reproducible and marks every returned record as
        seeded, not a private release (see
        :func:`~sklearn_dpfair.privacy.check_noise_generator`).
    record_transcript : bool, default=False
        Keep every message the server received (for audits and tests).
    caveats : sequence of str, default=()
        Caveats to carry into the privacy records.
    network : object, default=None
        Train a non-linear model instead (see :class:`SiloWorker`): its
        ``initial_parameters`` are the first broadcast, its
        ``auto_learning_rate(noise_multiplier, q, n)`` resolves
        ``learning_rate="auto"``, and the fit returns the tail-averaged
        ``parameters`` (``coef`` and ``intercept`` are then None). Not with
        ``shuffle``.

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
    if shuffle:
        check_shuffle_options(
            server_weights=server_weights,
            noise_multiplier=noise_multiplier,
            execution=execution,
            secure_aggregation=secure_aggregation,
            network=network,
            spider=config.spider,
        )
        return fit_shuffled(
            silo_data,
            loss=loss,
            config=config,
            silo_epsilon=silo_epsilon,
            silo_delta=silo_delta,
            random_state=random_state,
            record_transcript=record_transcript,
            caveats=caveats,
        )
    rng = check_noise_generator(random_state)
    sizes = check_federation(silo_data, config, secure_aggregation=secure_aggregation)
    weights = resolve_server_weights(server_weights, sizes)
    privacy = resolve_silo_privacy(
        sizes, silo_epsilon, silo_delta, config, noise_multiplier, caveats=caveats
    )
    return run_federation(
        silo_data,
        privacy,
        loss=loss,
        config=config,
        weights=weights,
        execution=execution,
        client=client,
        secure_aggregation=secure_aggregation,
        rng=rng,
        seed=noise_seed(rng) if random_state is not None else None,
        record_transcript=record_transcript,
        caveats=caveats,
        network=network,
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
    The parameters are those of :func:`fit_federated`.

    Parameters
    ----------
    silo_data : Mapping
        Silo id to ``(X_i, y_i)``.
    loss : object
        Pointwise loss.
    config : FederationConfig
        The schedule each silo follows alone.
    silo_epsilon, silo_delta : float or Mapping
        Budget of every silo, or silo id to budget.
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
    >>> from sklearn_dpfair._loss import BinaryLogisticLoss
    >>> from sklearn_dpfair.federated import FederationConfig, fit_each_silo_alone
    >>> X = np.random.default_rng(0).normal(size=(2000, 2))
    >>> data = {s: (X[i::2], (X[i::2, 0] > 0).astype(float))
    ...         for i, s in enumerate("ab")}
    >>> fits = fit_each_silo_alone(data, loss=BinaryLogisticLoss(),
    ...     config=FederationConfig(rounds=50, sampling_probability=0.2),
    ...     silo_epsilon={"a": 1.0, "b": 2.0}, silo_delta=1e-5, random_state=0)
    >>> sorted(fits)
    ['a', 'b']
    """
    # Every silo is checked alone (the silos need not share their columns).
    sizes = {}
    for sid in silo_data:
        sizes.update(check_federation({sid: silo_data[sid]}, config))
    privacy = resolve_silo_privacy(
        sizes, silo_epsilon, silo_delta, config, noise_multiplier
    )
    rng = check_noise_generator(random_state)
    fits = {}
    for sid in sizes:
        # A child stream per silo: one shared generator would be copied by
        # each fit and every silo would draw the same noise.
        child = _child_generator(rng)
        fits[sid] = run_federation(
            {sid: silo_data[sid]},
            {sid: privacy[sid]},
            loss=loss,
            config=config,
            weights={sid: 1.0},
            rng=child,
            seed=noise_seed(child) if random_state is not None else None,
        )
    return fits


def check_federation(silo_data, config, *, secure_aggregation=False):
    """Check the public shape of a federation and return the silo sizes.

    Parameters
    ----------
    silo_data : Mapping
        Silo id to ``(X_i, y_i)``.
    config : FederationConfig
        The public schedule.
    secure_aggregation : bool, default=False
        Whether the central guarantee under secure aggregation is asked for.

    Returns
    -------
    sizes : dict
        Silo id to its number of rows, in the order of ``silo_data``.
    """
    if not isinstance(config, FederationConfig):
        raise TypeError(
            f"config must be a FederationConfig; got {type(config).__name__}."
        )
    if not silo_data:
        raise ValueError("silo_data is empty: a federation needs at least one silo.")
    check_secure_aggregation(config, secure_aggregation)
    shapes = {sid: np.shape(silo_data[sid][0]) for sid in silo_data}
    n_features = {s[1] if len(s) == 2 else None for s in shapes.values()}
    if len(n_features) != 1 or None in n_features:
        raise ValueError(f"every silo needs a 2-d X with the same columns: {shapes}.")
    return {sid: int(shape[0]) for sid, shape in shapes.items()}


def check_secure_aggregation(config, secure_aggregation):
    """Refuse ``secure_aggregation`` for a schedule its accounting does not cover.

    Public (the schedule only): :func:`check_federation` asks before a fit
    and ``plan_silos`` before a plan, so no plan is made for a fit that
    would be refused.

    Parameters
    ----------
    config : FederationConfig
        The public schedule.
    secure_aggregation : bool
        Whether the central guarantee under secure aggregation is asked for.

    Raises
    ------
    ValueError
        With SPIDER rounds or local steps: the secure-aggregation record is
        derived for one noisy minibatch gradient per silo per round.
    """
    if secure_aggregation and config.spider is not None:
        raise ValueError(
            "secure_aggregation accounting is derived for minibatch SGD; SPIDER's "
            "difference rounds have their own sensitivity."
        )
    if secure_aggregation and config.local_steps > 1:
        raise ValueError(
            "secure_aggregation accounting is derived for one noisy gradient per "
            "round (local_steps=1); Local SGD messages are not a Gaussian "
            "mechanism on the aggregate."
        )


def run_federation(
    silo_data,
    privacy,
    *,
    loss,
    config,
    weights,
    rng,
    seed,
    execution="local",
    client=None,
    secure_aggregation=False,
    record_transcript=False,
    caveats=(),
    network=None,
):
    """Run the rounds of a checked federation whose privacy is resolved.

    Parameters
    ----------
    silo_data : Mapping
        Silo id to ``(X_i, y_i)``, as checked by :func:`check_federation`.
    privacy : dict
        Silo id to its :class:`SiloPrivacy` (:func:`resolve_silo_privacy`).
    loss : object
        Pointwise loss.
    config : FederationConfig
        The public schedule.
    weights : dict
        Silo id to its normalized public server weight.
    rng : numpy.random.Generator
        The fit's generator; every silo gets a child stream of it.
    seed : str or None
        Fingerprint of ``rng``'s seed; every record then carries it.
    execution, client, secure_aggregation, record_transcript, caveats, network
        As in :func:`fit_federated`.

    Returns
    -------
    fit : FederatedFit
        Coefficients, per-silo reports and privacy records.
    """
    # Every silo's generator derives from the seed: all records are seeded.
    privacy = {sid: p.with_seed(seed) for sid, p in privacy.items()}
    n_features = np.shape(next(iter(silo_data.values()))[0])[1]
    if config.learning_rate == "auto":
        config = _resolve_auto_learning_rate(
            config,
            privacy,
            weights,
            n_params=(n_features + 1) * loss.n_outputs,
            rule=None if network is None else network.auto_learning_rate,
        )
    silo_kwargs = {
        sid: dict(
            X=silo_data[sid][0],
            y=silo_data[sid][1],
            loss=loss,
            config=config,
            privacy=privacy[sid],
            silo_id=sid,
            random_state=_child_generator(rng),
            network=network,
        )
        for sid in privacy
    }
    server = Server(
        n_features,
        loss.n_outputs,
        config=config,
        weights=weights,
        initial_model=None if network is None else network.initial_parameters,
    )
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

    if network is None:
        coef, intercept = server.coefficients()
        parameters = None
    else:
        coef = intercept = None
        parameters = server.tail_average()
    caveats = tuple(caveats)
    return FederatedFit(
        coef=coef,
        intercept=intercept,
        parameters=parameters,
        rounds=config.rounds,
        silo_reports=reports,
        server_weights=server.weights,
        privacy_record=isrl_record(reports, config, caveats, seed),
        central_record=(
            secure_aggregation_record(reports, server.weights, config, caveats, seed)
            if secure_aggregation
            else None
        ),
        execution=runner.name,
        transcript=transcript,
    )


def _child_generator(rng):
    """A generator seeded with 128 fresh bits of ``rng``: an independent
    stream, reproducible under a seed, unpredictable without one."""
    return np.random.default_rng(rng.integers(0, 2**32, size=4, dtype=np.uint64))


def _resolve_auto_learning_rate(config, privacy, weights, *, n_params, rule=None):
    """Concrete step size for ``learning_rate="auto"`` from public quantities.

    The central rule looks at the noise std on the averaged gradient in
    units of the clip norm, ``sigma / (q n)``. The server's averaged message
    carries ``sqrt(sum_i (p_i sigma_i / (q n_i))^2)``; it is expressed as an
    equivalent noise multiplier on the pooled ``n`` and handed to the same
    rule (``auto_learning_rate`` with ``n_params``, or a network's
    ``rule(noise_multiplier, q, n)``), so federated and central fits pick
    their step the same way.
    The ``sigma_i`` are the silos' resolved noise multipliers.
    """
    q = config.sampling_probability
    n = sum(p.n_samples for p in privacy.values())
    aggregate = math.sqrt(
        math.fsum(
            (weights[s] * p.noise_multiplier / (q * p.n_samples)) ** 2
            for s, p in privacy.items()
        )
    )
    if rule is None:
        lr = auto_learning_rate(aggregate * q * n, q, n, n_params)
    else:
        lr = rule(aggregate * q * n, q, n)
    # Capped as the central rule is (the penalty's explicit step diverges
    # beyond 2 / alpha). A column_alpha penalty is the server's proximal step,
    # stable at any step size: its config has alpha = 0, hence no cap.
    lr = penalty_capped_learning_rate(lr, config.alpha)
    return dataclasses.replace(config, learning_rate=lr)
