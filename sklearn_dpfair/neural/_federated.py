# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""A dense network trained across silos with inter-silo record-level DP.

Noisy ISRL-DP minibatch SGD on a non-convex model (Lowy's thesis, Sec. 3.3:
its ISRL-DP FedProx-SPIDER with phase length 1 is this algorithm, the
thesis's "ISRL-DP MB-SGD" baseline on MNIST with a 64-unit perceptron).
Every round each silo draws a Poisson batch of its own records, clips every
record's *full* network gradient to ``C`` (the central fit's ghost norms,
:func:`~sklearn_dpfair.neural._sgd.clipped_network_gradient`), adds its own
Gaussian noise to the stacked sum and sends the sum divided by its expected
batch size ``q n_i``; the untrusted server averages the messages and steps.
The federation (schedule, silo privacy, server, records, Dask execution) is
the linear models' (:mod:`sklearn_dpfair.federated`); only the silo step and
the model's layout differ, and they live here. With a SPIDER schedule
(``silo_algorithm="spider"``: the thesis's Alg. 4 with ``q > 1``,
:mod:`sklearn_dpfair.federated._spider`) the rounds between two such
anchor rounds release :meth:`NetworkSiloModel.noisy_difference` instead.
"""

from dataclasses import dataclass, replace

import numpy as np

from .._solvers._feature_scaling import first_layer_in_user_units, narrowed_if_finite
from ..federated._config import DivergedModelError
from ..federated._fit import any_silo_is_private, fit_silos
from ..federated._silos import split_by_silo
from ._fit import (
    NON_PRIVATE_HALVINGS,
    NON_PRIVATE_LEARNING_RATE,
    NetworkFit,
    _init_rng,
    auto_network_learning_rate,
    network_objective,
)
from ._network import init_parameters, layer_sizes, n_parameters
from ._sgd import clipped_network_gradient
from ._spider import clipped_difference_sum

__all__ = ["NetworkSiloModel", "fit_network_silos"]


@dataclass(frozen=True)
class NetworkSiloModel:
    """The network's part of a federation: layout, start, silo step.

    The model the server broadcasts is the flat vector of every layer's
    weights (row-major), then every layer's biases.

    Parameters
    ----------
    sizes : tuple of int
        Layer widths, input and output included.
    activation : str
        Activation of the hidden layers.
    loss : object
        Output loss (binary logistic or softmax).
    initial_parameters : ndarray of shape (n_params,)
        The first broadcast: the public random initialization.
    non_private_step : float, default=NON_PRIVATE_LEARNING_RATE
        The "auto" step of a federation without noise (every silo
        non-private), which :func:`fit_network_silos` halves while the
        rounds diverge.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._loss import BinaryLogisticLoss
    >>> from sklearn_dpfair.neural._federated import NetworkSiloModel
    >>> net = NetworkSiloModel.initialized(
    ...     [3, 4, 1], "relu", BinaryLogisticLoss(), np.random.default_rng(0))
    >>> net.parameter_shape
    (21,)
    >>> W, b = net.unflatten(net.initial_parameters)
    >>> [w.shape for w in W], [v.shape for v in b]
    ([(3, 4), (4, 1)], [(4,), (1,)])
    """

    sizes: tuple
    activation: str
    loss: object
    initial_parameters: np.ndarray
    non_private_step: float = NON_PRIVATE_LEARNING_RATE

    @classmethod
    def initialized(cls, sizes, activation, loss, rng):
        """The network with the central fit's Glorot start drawn from ``rng``."""
        weights, biases = init_parameters(sizes, activation, rng, np.float64)
        return cls(tuple(sizes), activation, loss, _flatten(weights, biases))

    @property
    def parameter_shape(self):
        """``(n_params,)``: the shape of the broadcast model."""
        return (n_parameters(self.sizes),)

    def unflatten(self, w):
        """Split the flat vector ``w`` into the layers' weights and biases."""
        weights, biases, start = [], [], 0
        pairs = list(zip(self.sizes[:-1], self.sizes[1:]))
        for fan_in, fan_out in pairs:
            weights.append(w[start : start + fan_in * fan_out].reshape(fan_in, fan_out))
            start += fan_in * fan_out
        for _, fan_out in pairs:
            biases.append(w[start : start + fan_out])
            start += fan_out
        return weights, biases

    def auto_learning_rate(self, noise_multiplier, sampling_probability, n_samples):
        """The central network's "auto" step size (public quantities only).

        Without noise (no silo private), :attr:`non_private_step`.
        """
        if noise_multiplier == 0:
            return self.non_private_step
        return auto_network_learning_rate(
            noise_multiplier,
            sampling_probability,
            n_samples,
            n_parameters(self.sizes),
        )

    def noisy_gradient(self, X, y, w, *, mechanism, denominator, alpha, rng):
        """One silo release: the noisy clipped mean gradient of the batch.

        The batch's per-example gradients of all the weights and biases
        jointly are clipped to ``mechanism.clip_norm`` (ghost norms, no
        per-example gradient formed), the stacked sum gets one Gaussian
        release (weights' blocks first, as in central DP-SGD), is divided by
        the public ``denominator`` (``q n_i``) and gets the data-independent
        L2 term ``alpha W`` on the weights.

        Parameters
        ----------
        X : ndarray of shape (batch, n_features)
            The silo's Poisson batch.
        y : ndarray of shape (batch,)
            Its encoded targets.
        w : ndarray of shape (n_params,)
            The broadcast model.
        mechanism : GaussianMechanism
            The silo's clip norm and noise.
        denominator : float
            Expected batch size ``q n_i`` (public).
        alpha : float
            L2 penalty on the weights.
        rng : numpy.random.Generator
            The silo's generator.

        Returns
        -------
        gradient : ndarray of shape (n_params,)
        """
        weights, biases = self.unflatten(w)
        g_weights, g_biases = clipped_network_gradient(
            np.asarray(X, dtype=np.float64),
            np.asarray(y, dtype=np.float64),
            self.loss,
            weights,
            biases,
            activation=self.activation,
            clip_norm=mechanism.clip_norm,
        )
        noisy = mechanism.privatize_blocks([*g_weights, *g_biases], rng)
        n_layers = len(weights)
        return _flatten(
            [g / denominator + alpha * W for g, W in zip(noisy[:n_layers], weights)],
            [g / denominator for g in noisy[n_layers:]],
        )

    def noisy_difference(
        self, X, y, w, w_previous, *, clip_norm, mechanism, denominator, alpha, rng
    ):
        """One SPIDER difference release: the noisy mean gradient change.

        Every row's ``clip_C(g(w)) - clip_C(g(w_previous))`` is clipped to
        ``mechanism.clip_norm`` (the round's public ``c_r``,
        :func:`~sklearn_dpfair.neural._spider.clipped_difference_sum`), the
        sum gets one Gaussian release of std ``z2 c_r``, is divided by the
        public ``denominator`` and gets the data-independent change of the
        L2 term, ``alpha (W - W_previous)`` (Lowy's thesis, Alg. 4, line 11).

        Parameters
        ----------
        X : ndarray of shape (batch, n_features)
            The silo's Poisson batch.
        y : ndarray of shape (batch,)
            Its encoded targets.
        w, w_previous : ndarray of shape (n_params,)
            This round's and the previous round's broadcast models.
        clip_norm : float
            ``C``, every gradient's clip.
        mechanism : GaussianMechanism
            The round's difference clip ``c_r`` and noise multiplier ``z2``.
        denominator : float
            Expected batch size ``q n_i`` (public).
        alpha : float
            L2 penalty on the weights.
        rng : numpy.random.Generator
            The silo's generator.

        Returns
        -------
        difference : ndarray of shape (n_params,)
        """
        now, before = self.unflatten(w), self.unflatten(w_previous)
        total = clipped_difference_sum(
            np.asarray(X, dtype=np.float64),
            np.asarray(y, dtype=np.float64),
            self.loss,
            now,
            before,
            activation=self.activation,
            clip_norm=clip_norm,
            difference_clip=mechanism.clip_norm,
        )
        out = mechanism.privatize(total, rng) / denominator
        n_weights = sum(W.size for W in now[0])
        out[:n_weights] += alpha * (w[:n_weights] - w_previous[:n_weights])
        return out


def fit_network_silos(
    X, y, loss, params, budget, options, *, silos, rng, seeded, scaling=None
):
    """Federated ISRL-DP fit of a dense network (``fit(X, y, silos=...)``).

    The linear models' federated fit
    (:func:`~sklearn_dpfair.federated._fit.fit_silos`: schedule, per-silo
    budgets and accountants, server weights, execution, records) with the
    network's silo step (:class:`NetworkSiloModel`), started from the
    initialization a central fit with the same seed would use.

    The silos train in float64; the weights are returned in ``X``'s
    precision, as a central fit returns them (post-processing). ``scaling``
    (a public ``FeatureScaling`` of declared ``feature_bounds``, or None)
    maps every silo's rows alike (without it, a federation of non-private
    silos standardizes the columns exactly); the first layer is returned
    in the user's units.

    Returns
    -------
    fit : FederatedFit
        With ``parameters`` (flat) and the silos' reports and records.
    network : NetworkFit
        The weights and biases, in ``X``'s precision.
    """
    dtype = X.dtype
    X = np.asarray(X, dtype=np.float64)
    sizes = layer_sizes(X.shape[1], params.hidden_layer_sizes, loss.n_outputs)
    network = NetworkSiloModel.initialized(
        sizes, params.activation, loss, _init_rng(rng)
    )

    def run(network):
        return fit_silos(
            X,
            y,
            loss,
            params,
            budget,
            options,
            silos=silos,
            rng=rng,
            seeded=seeded,
            network=network,
            scaling=scaling,
        )

    ids, rows = split_by_silo(silos, X.shape[0])
    if any_silo_is_private(budget, options, ids):
        # The planned rounds, as accounted: no branch on the data.
        fit = run(network)
    else:
        fit = _checked_non_private_rounds(
            run, network, X, y, dict(zip(ids, rows)), params
        )
    weights, biases = first_layer_in_user_units(
        *network.unflatten(fit.parameters), fit.scaling
    )
    return fit, NetworkFit(
        # Kept in float64 where the input's float32 would store inf.
        [narrowed_if_finite(W, dtype) for W in weights],
        [narrowed_if_finite(b, dtype) for b in biases],
        fit.rounds,
        fit.record,
    )


def _checked_non_private_rounds(run, network, X, y, silo_rows, params):
    """A federation without noise, rerun at half the step while it diverges.

    The central non-private limit's rule
    (:data:`~sklearn_dpfair.neural._fit.NON_PRIVATE_HALVINGS`): the rounds
    diverge when the server refuses a model that left the float range, or
    when the returned average's penalized training loss (the silos' mean
    losses in the server's weights) is not finite or exceeds that of the
    initialization. ``learning_rate="auto"`` then reruns the rounds (same
    initialization, same batches under a seed) at half the step; a given
    one is refused. No silo is private, so reading the rows costs nothing.

    Parameters
    ----------
    run : callable
        ``run(network)`` returns the federation's FederatedFit.
    network : NetworkSiloModel
        The model, with the first attempt's ``non_private_step``.
    X, y : ndarray
        The pooled rows (the user's columns) and encoded targets.
    silo_rows : dict
        Silo id to the indices of its rows.
    params : MLPParams
        ``learning_rate``, ``activation`` and ``alpha`` are read.

    Returns
    -------
    fit : FederatedFit

    Raises
    ------
    ValueError
        Naming ``learning_rate``, if a given step diverges, or "auto" still
        does after ``NON_PRIVATE_HALVINGS`` halvings.
    """
    given = params.learning_rate != "auto"
    for _ in range(NON_PRIVATE_HALVINGS + 1):
        try:
            fit = run(network)
        except DivergedModelError:
            # The server and the silos refuse a model that left the float
            # range; any other error is not a divergence.
            if given:
                raise
        else:
            end = _federated_objective(fit, network, X, y, silo_rows, params)
            start = _federated_objective(
                fit, network, X, y, silo_rows, params, network.initial_parameters
            )
            if end <= start:
                return fit
            if given:
                raise ValueError(
                    f"learning_rate={params.learning_rate!r} diverges in the "
                    "non-private federated fit (every silo epsilon=inf, no "
                    "clipping): the training loss rose above that of the "
                    "initialization. Pass a smaller learning_rate, or "
                    "learning_rate='auto', which halves the step until it does not."
                )
        network = replace(network, non_private_step=network.non_private_step / 2)
    raise ValueError(
        "learning_rate='auto' diverges in the non-private federated fit (every "
        f"silo epsilon=inf, no clipping) from {NON_PRIVATE_LEARNING_RATE!r} down "
        f"to {2 * network.non_private_step!r}, {NON_PRIVATE_HALVINGS} halvings: "
        "the training loss rose above that of the initialization. Pass a "
        "smaller learning_rate, or check the features and the architecture."
    )


def _federated_objective(fit, network, X, y, silo_rows, params, parameters=None):
    """Server-weighted mean of the silos' losses, plus the L2 penalty.

    At ``parameters`` (the fit's own by default), on the columns as its
    silos mapped them (``fit.scaling``).
    """
    w = fit.parameters if parameters is None else parameters
    weights, biases = network.unflatten(w)
    if fit.scaling is not None:
        X = fit.scaling.transform(X)
    with np.errstate(over="ignore", invalid="ignore"):
        total = sum(
            share
            * network_objective(
                X[silo_rows[sid]],
                y[silo_rows[sid]],
                network.loss,
                weights,
                biases,
                activation=params.activation,
                alpha=0.0,
            )
            for sid, share in fit.server_weights.items()
        )
        penalty = sum(float(np.sum(np.square(W))) for W in weights)
        return total + 0.5 * params.alpha * penalty


def _flatten(weights, biases):
    return np.concatenate([np.ravel(a) for a in (*weights, *biases)])
