# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The federated fit of a linear estimator: ``fit(X, y, silos=...)``.

Maps the estimator's DP-SGD parameters onto a :class:`FederationConfig`,
hands the federation to the driver (:func:`fit_federated`'s code path) and
turns its :class:`FederatedFit` into the estimator's ``silo_*`` attributes.
"""

from .._solvers._schedules import sgd_schedule
from ._config import FederationConfig
from ._driver import fit_federated
from ._result import FederatedFit
from ._silos import split_by_silo

__all__ = ["fit_silos", "silo_attributes"]

_SILOS_PUBLIC_CAVEAT = "silo membership and silo sizes (treated as public metadata)"


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
    return fit_federated(
        {sid: (X[r], y[r]) for sid, r in zip(ids, rows)},
        loss=loss,
        config=config,
        silo_epsilon=epsilon if silo_epsilon is None else silo_epsilon,
        silo_delta=delta if silo_delta is None else silo_delta,
        server_weights=server_weights,
        noise_multiplier=noise_multiplier,
        execution=execution,
        secure_aggregation=secure_aggregation,
        # A seeded fit's generator is its seed (read, never advanced); an
        # unseeded one is fresh OS entropy, as fit_federated draws for None.
        random_state=rng if seeded else None,
        caveats=(*caveats, _SILOS_PUBLIC_CAVEAT),
    )


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
