# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The model of a FERMI fit: the linear model, or a dense network.

FERMI and DP-FERMI (thesis Algorithms 9 and 10) are model-agnostic: the
ERMI regularizer, its dual block ``W``, the dual clipping and the group
marginals read the model only through its logits ``Z_B`` on a batch and
its probabilities ``F = softmax(Z_B)``. What changes with the model is the
primal block: the logits of a batch, and the parameter gradient obtained
from the per-example logit gradients ``G = dL_i / dZ_i`` (loss plus the
ERMI term at fixed ``W``), clipped per example to ``clip_norm``.

Both models keep their parameters as a pair ``(coef, w0)`` of arrays, the
state the SGDA loop (:mod:`._sgda`) updates, noises and tail-averages:

- :class:`LinearFairModel`: ``coef`` ``(d, m)`` and the intercept
  parameter ``w0`` ``(m,)`` of the logits ``X coef + s w0``, the model of
  the linear estimators;
- :class:`NetworkFairModel`: ``coef`` the flattened weights of every layer
  and ``w0`` the flattened biases (the output layer's ``m`` biases last),
  of the dense network of :mod:`sklearn_dpfair.neural._network`. Its
  per-example gradient norms, all layers jointly, come from the ghost-norm
  identity (:func:`~sklearn_dpfair.neural._network.per_example_norms`): the
  per-example gradients are never materialized, and one record moves the
  clipped primal sum by at most ``clip_norm``, as for the linear model, so
  the mechanisms and the event of the fit are unchanged.

The network's full-batch phase (:meth:`NetworkFairModel.refine`) minimises
the exact-dual objective of :mod:`._lbfgs` over the flattened parameters:
the exact dual is a function of the probabilities, so its gradient with
respect to the logits backpropagates through the layers (Danskin's
theorem, as for the linear model).
"""

from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize

from ...neural._fit import _init_rng
from ...neural._network import (
    backward,
    clipped_network_sums,
    forward,
    init_parameters,
    layer_sizes,
)
from ...privacy._clipping import clip_margin
from ...utils._array_api import array_namespace, device_of, narrow_matmul, to_numpy
from .._feature_scaling import FeatureScaling, exact_feature_scaling
from .._linear import LinearModel
from .._row_blocks import row_block

__all__ = [
    "LinearFairModel",
    "NetworkFairModel",
    "fair_model",
    "initial_network",
    "logits",
]

_LARGEST = float(np.finfo(np.float64).max)


def logits(Xb, coef, w0, s):
    """``X_B Theta + s w_0`` for a dense (any namespace) or CSR batch.

    Not saturated: a row that overflows is zeroed by
    :func:`~._sgda.softmax_terms`.
    """
    if sp.issparse(Xb):
        return np.asarray(Xb @ coef) + s * w0
    return narrow_matmul(Xb, coef) + s * w0


@dataclass(frozen=True)
class LinearFairModel(LinearModel):
    """The linear model ``X coef + s w0`` as the SGDA loop sees it.

    :class:`~sklearn_dpfair._solvers._linear.LinearModel` (its row norms,
    clipped sums and private step) plus the two calls the loop makes on
    any model: :meth:`forward` and :meth:`primal_sum`.
    """

    is_network = False

    def forward(self, Xb, coef, w0):
        """Logits of the batch and what :meth:`primal_sum` needs (nothing)."""
        return logits(Xb, coef, w0, self.intercept_scaling), None

    def primal_sum(self, Xb, grad, row_norms, cache, clip_norm):
        """Clipped sum of ``x~_i G_i^T`` (factor from ``||G_i|| ||x~_i||``)."""
        return self.clipped_gradient_sum(Xb, grad, row_norms, clip_norm)


@dataclass(frozen=True, eq=False)
class NetworkFairModel:
    """A dense network (:mod:`sklearn_dpfair.neural._network`) in the FERMI solver.

    Parameters
    ----------
    sizes : tuple of int
        Layer widths ``(d, h_1, ..., m)``; ``m`` is the number of classes
        (softmax logits, also for two classes).
    activation : str
        Activation of the hidden layers.
    intercept_scaling : float
        1 fits every layer's bias; 0 keeps them at 0 (no bias anywhere).
    init_weights, init_biases : tuple of ndarray
        The start (host numpy), drawn from the fit's generator
        (:func:`initial_network`), never from the data.
    input_scale : ndarray of shape (d,) or None
        Where the solver runs on columns divided by ``input_scale`` (the
        non-private fit's preconditioning, :func:`precondition_network`): the
        full-batch objective's L2 term weighs the first layer's row ``j``
        by ``1 / input_scale[j]**2``, so that it penalizes the weights in
        the user's units, as on the given columns. None: the columns the
        solver sees are the model's.
    """

    sizes: tuple
    activation: str
    intercept_scaling: float
    init_weights: tuple
    init_biases: tuple
    input_scale: np.ndarray | None = None

    is_network = True

    @property
    def n_outputs(self):
        return int(self.sizes[-1])

    @property
    def _linear(self):
        # The private step (noise on both blocks, division by q n, L2 on the
        # weights only, no bias update without intercept) is the linear
        # layer's, applied to the flattened weights and biases.
        return LinearModel(self.n_outputs, float(self.intercept_scaling))

    @property
    def n_weights(self):
        return sum(a * b for a, b in zip(self.sizes[:-1], self.sizes[1:]))

    # -- layout -----------------------------------------------------------
    def unflatten(self, coef, w0):
        """Lists of weights and biases (views) of the flat ``(coef, w0)``."""
        xp = array_namespace(coef)
        weights, biases = [], []
        i = j = 0
        for fan_in, fan_out in zip(self.sizes[:-1], self.sizes[1:]):
            weights.append(
                xp.reshape(coef[i : i + fan_in * fan_out], (fan_in, fan_out))
            )
            biases.append(w0[j : j + fan_out])
            i += fan_in * fan_out
            j += fan_out
        return weights, biases

    @staticmethod
    def flatten(weights, biases):
        """The flat ``(coef, w0)`` of lists of weights and biases."""
        xp = array_namespace(weights[0])
        return (
            xp.concat([xp.reshape(W, (-1,)) for W in weights]),
            xp.concat([xp.reshape(b, (-1,)) for b in biases]),
        )

    def zeros(self, X):
        """The start ``(coef, w0)`` in the dtype, namespace and device of ``X``.

        The initialization (not zeros: a network at 0 has zero gradients in
        its hidden layers); biases 0 without intercept.
        """
        xp = array_namespace(X)
        device = device_of(X)
        coef, w0 = self.host_start()
        return (
            xp.asarray(coef.astype(_np_dtype(X.dtype)), device=device),
            xp.asarray(w0.astype(_np_dtype(X.dtype)), device=device),
        )

    def host_start(self):
        """The start ``(coef, w0)``, host float64."""
        coef = np.concatenate([np.ravel(W) for W in self.init_weights]).astype(float)
        w0 = np.concatenate([np.ravel(b) for b in self.init_biases]).astype(float)
        if not self.intercept_scaling:
            w0 = np.zeros_like(w0)
        return coef, w0

    # -- the SGDA loop's calls ---------------------------------------------
    def stored_row_norms(self, X):
        return None

    def row_norms(self, X):
        return None

    def row_norms_of(self, X_rows, rows, stored):
        return None

    def forward(self, Xb, coef, w0):
        """Logits of the batch (finite: saturated) and the backward pass's inputs."""
        weights, biases = self.unflatten(coef, w0)
        inputs, pre_activations, raw = forward(Xb, weights, biases, self.activation)
        return raw, (inputs, pre_activations, weights)

    def primal_sum(self, Xb, grad, row_norms, cache, clip_norm):
        """Sum of the examples' full gradients, each clipped to ``clip_norm``.

        ``grad`` holds the per-example logit gradients (loss and ERMI term
        at fixed ``W``, times the public weights); backpropagation gives each
        layer's errors, the ghost-norm identity every example's gradient
        norm over all layers jointly, and the clipped sum is one product
        per layer (:func:`~sklearn_dpfair.neural._network.clipped_network_sums`,
        DPMLPClassifier's clipped sum). Returns the flat ``(weights block,
        biases block)``. A finite record whose factor cannot be formed (a
        public weight near the largest float, an input near it, a factor
        ``C / norm`` below the smallest normal float) is clipped to ``C``
        like any other, not dropped: a weight can raise a record's term only
        up to the clip norm; a record whose logit gradient is not finite
        contributes 0.
        """
        inputs, pre_activations, weights = cache
        g_weights, g_biases = clipped_network_sums(
            inputs,
            pre_activations,
            weights,
            grad,
            self.activation,
            clip_norm,
            margin=clip_margin(Xb, grad),
        )
        return self.flatten(g_weights, g_biases)

    def private_step(self, coef, w0, g_coef, g_w0, **kwargs):
        """Noise, divide, step (the linear layer's, on the flat blocks)."""
        return self._linear.private_step(coef, w0, g_coef, g_w0, **kwargs)

    # -- host side: predictions, dual, full-batch phase ---------------------
    def host_logits(self, X, coef, w0, rows):
        """Float64 logits of the rows ``rows`` (a slice) of the host ``X``."""
        Xb = np.asarray(row_block(X, rows), dtype=np.float64)
        weights, biases = self.unflatten(
            np.asarray(coef, dtype=np.float64), np.asarray(w0, dtype=np.float64)
        )
        with np.errstate(over="ignore", invalid="ignore"):
            return forward(Xb, weights, biases, self.activation)[2]

    @np.errstate(over="ignore", invalid="ignore", divide="ignore")
    def objective(self, theta, problem, fairness_weight):
        """Value and gradient of the exact-dual objective at flat ``theta``.

        ``mean_i l_i + lambda max_W Psi + alpha / 2 ||weights||^2``: the
        softmax and ERMI terms of :mod:`._lbfgs` on the network's logits,
        whose logit gradient is backpropagated; the first layer's weights
        in the user's units (``input_scale``).
        """
        # The full-batch terms of the linear phase (imported here: that
        # module imports the SGDA loop, which imports this one).
        from ._lbfgs import (
            _full_batch_terms,
            _in_place,
            _penalty,
            keeps_terms,
            term_rows,
        )

        X = np.asarray(problem.X_host, dtype=np.float64)
        n = X.shape[0]
        nw = self.n_weights
        weights, biases = self.unflatten(theta[:nw], theta[nw:])
        inputs, pre_activations, raw = forward(X, weights, biases, self.activation)
        raw = np.array(raw, dtype=np.float64)
        rows = term_rows(X, self.n_outputs)
        value = _full_batch_terms(
            *_in_place(raw),
            n=n,
            y=problem.y,
            penalty=_penalty(
                problem.regularizer, problem.cells, problem.weight_scale, rows
            ),
            fairness_weight=fairness_weight,
            rows=rows,
            sample_weight=problem.sample_weight,
            keep=keeps_terms(X, self.n_outputs),
        )
        # raw now holds the logit gradient (divided by n).
        deltas = backward(inputs, pre_activations, weights, raw, self.activation)
        alpha = float(problem.params.alpha)
        penalized = [alpha * W for W in weights]
        if self.input_scale is not None:
            # w_user = w / scale on every row of the first layer.
            penalized[0] = penalized[0] / (self.input_scale**2)[:, None]
        g_weights = [a.T @ d + P for a, d, P in zip(inputs, deltas, penalized)]
        g_biases = [d.sum(axis=0) for d in deltas]
        value += 0.5 * float(sum(np.sum(W * P) for W, P in zip(weights, penalized)))
        g_coef, g_w0 = self.flatten(g_weights, g_biases)
        if not self.intercept_scaling:
            g_w0 = np.zeros_like(g_w0)
        return value, np.concatenate([g_coef, g_w0])

    def refine(self, problem, lam, coef, w0, tol=None):
        """The full-batch phase: L-BFGS on :meth:`objective` from ``(coef, w0)``.

        Stops at ``max |grad| <= tol`` or after the parameters'
        ``final_max_iter`` iterations; where the objective is not finite at
        the start, or L-BFGS ends higher than it started, the start is
        returned, not converged (as
        :func:`~._lbfgs.refine_full_batch`).
        """
        from ._lbfgs import FullBatchResult, _last_point_cached, lbfgs_memory

        tol = problem.params.tol if tol is None else tol
        nw = self.n_weights
        theta0 = np.concatenate(
            [np.asarray(coef, dtype=np.float64), np.asarray(w0, dtype=np.float64)]
        )
        fun = _last_point_cached(lambda t: self.objective(t, problem, lam))
        start_value, start_grad = fun(theta0)
        if not (np.isfinite(start_value) and np.all(np.isfinite(start_grad))):
            return FullBatchResult(
                coef=theta0[:nw],
                w0=theta0[nw:],
                stationarity=_LARGEST,
                converged=False,
                n_iter=0,
                objective=min(
                    float(np.nan_to_num(start_value, nan=_LARGEST)), _LARGEST
                ),
            )
        res = minimize(
            fun,
            theta0,
            jac=True,
            method="L-BFGS-B",
            options={
                "maxiter": int(problem.params.final_max_iter),
                "gtol": float(tol),
                "ftol": 64 * np.finfo(float).eps,
                "maxls": 50,
                "maxcor": lbfgs_memory(problem.X_host, theta0.size),
            },
        )
        theta = res.x
        value, grad = fun(theta)
        finite = (
            np.isfinite(value)
            and np.all(np.isfinite(grad))
            and np.all(np.isfinite(theta))
        )
        if not finite or value > start_value:
            theta, value, grad = theta0, start_value, start_grad
        stationarity = min(float(np.max(np.abs(grad))) if grad.size else 0.0, _LARGEST)
        return FullBatchResult(
            coef=theta[:nw],
            w0=theta[nw:],
            stationarity=stationarity,
            converged=bool(stationarity <= tol),
            n_iter=int(res.nit),
            objective=float(value),
            at_limit=int(res.nit) >= int(problem.params.final_max_iter),
        )

    def release(self, coef, w0, n_classes, scales=None):
        """``coefs_`` and ``intercepts_`` (host lists) of a solved network.

        scikit-learn's ``MLPClassifier`` layout: for two classes the output
        layer is the single logit of class 1 (``W_L[:, 1] - W_L[:, 0]``, the
        logistic output); the biases times ``s``. With ``scales`` (the
        private column scaling) the first layer is mapped back to the
        user's units, post-processing: ``w . (x - m) / s + b`` is affine in
        the raw ``x``.
        """
        weights, biases = self.unflatten(
            np.asarray(to_numpy(coef), dtype=np.float64),
            np.asarray(to_numpy(w0), dtype=np.float64),
        )
        s = float(self.intercept_scaling)
        weights = [np.array(W) for W in weights]
        biases = [s * np.array(b) for b in biases]
        if n_classes == 2:
            weights[-1] = weights[-1][:, 1:2] - weights[-1][:, 0:1]
            biases[-1] = biases[-1][1:2] - biases[-1][0:1]
        if scales is not None:
            first, bias = scales.coefficients_in_user_units(weights[0].T, biases[0])
            weights[0], biases[0] = np.ascontiguousarray(first.T), bias
        return weights, biases


def _np_dtype(dtype):
    return np.float32 if "float32" in str(dtype) else np.float64


def initial_network(params, n_features, n_classes, rng):
    """The :class:`NetworkFairModel` of ``params`` (None without hidden layers).

    Its start is drawn from an independent child of the fit's generator
    (:func:`~sklearn_dpfair.neural._fit._init_rng`: the batches and the
    noise draws of ``rng`` are those of the linear fit of the same seed),
    from the layer widths only, on the host: the same start on every
    backend.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers.fermi._fit import FERMIParams
    >>> from sklearn_dpfair._solvers.fermi._model import initial_network
    >>> params = FERMIParams(constraint=None, hidden_layer_sizes=(4,))
    >>> net = initial_network(params, 3, 2, np.random.default_rng(0))
    >>> net.sizes, net.n_weights
    ((3, 4, 2), 20)
    >>> coef, w0 = net.host_start()
    >>> [W.shape for W in net.unflatten(coef, w0)[0]]
    [(3, 4), (4, 2)]
    >>> initial_network(FERMIParams(constraint=None), 3, 2, None) is None
    True
    """
    hidden = tuple(params.hidden_layer_sizes)
    if not hidden:
        return None
    sizes = layer_sizes(n_features, hidden, n_classes)
    weights, biases = init_parameters(sizes, params.activation, _init_rng(rng))
    return NetworkFairModel(
        sizes=tuple(sizes),
        activation=params.activation,
        intercept_scaling=params.intercept_scaling,
        init_weights=tuple(weights),
        init_biases=tuple(biases),
    )


def precondition_network(network, X, sample_weight, center=True):
    """The columns a non-private network fit solves on, their map, and ``network``.

    A network has no per-column preconditioning of its own, and SGDA's
    step size and clip norm assume columns of at most unit scale: on raw
    columns (a year, an income) its first layer saturates and every
    gradient vanishes. Without privacy the exact column moments cost
    nothing, so column ``j`` is centred by its (weighted) mean (the first
    layer's biases absorb the shift; not without intercept,
    ``center=False``, where the root mean square stands for the standard
    deviation) and divided by ``max(sd_j, 1)``: a column of large spread is
    brought to unit spread, and one already within unit scale (a one-hot
    or range-scaled column) keeps its spread. The objective is unchanged
    (its L2 term stays in the user's units, ``input_scale``); dividing a
    small-spread column by its spread would blow it up instead (a rare
    category's values to 100), where the user's L2 term weighs ``alpha /
    sd_j**2``: a bounded Adult network fit on one-hot columns (32 units,
    ``alpha=5e-3``, ``disparity_bound=0.012``) took 157 CPU seconds that
    way, against 8.3 so (10.1 on the columns as given). A column whose
    standard deviation a few extreme rows dominate
    (:func:`~._lbfgs.dominated_column_moments`: five sentinels 1e9 in an
    age column make it 3e7 times the ages' spread) is centred by its median
    and divided by its robust scale instead: by the standard deviation its
    bulk would vary by 1e-7 of a unit, the first layer's gradient there
    would look like 0 and L-BFGS would stop at once, far from the minimum,
    reporting convergence. The extreme rows then lie far out, where a
    smooth activation saturates.

    Returns
    -------
    X : ndarray
        The mapped columns, in ``X``'s dtype.
    scaling : FeatureScaling
        Their map (the released first layer is mapped back by it).
    network : NetworkFairModel
        With ``input_scale`` the divisors.
    """
    moments = exact_feature_scaling(X, sample_weight, center=center, robust=True)
    scaling = FeatureScaling(moments.location, np.maximum(moments.scale, 1.0))
    return scaling.transform(X), scaling, replace(network, input_scale=scaling.scale)


def fair_model(network, n_outputs, intercept_scaling):
    """The model the SGDA loop runs: ``network``, or the linear model."""
    if network is not None:
        return network
    return LinearFairModel(n_outputs, float(intercept_scaling))
