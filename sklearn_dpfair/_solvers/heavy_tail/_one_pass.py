# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The one-pass noisy clipped gradient loop of Lowy's thesis (chapter 4) and its rules.

Every heavy-tail optimizer of the thesis is the same loop: at step ``t`` it
picks a query point, asks MeanOracle1 (Algorithm 5,
:func:`~._mean_oracle.clipped_gradient_mean`) for the noisy clipped mean
gradient of the step's rows there, and updates its iterates with a public,
data-independent rule (post-processing of the noisy answer). Only the rule
differs:

* :class:`StichAveraging`, Algorithm 27 (strongly convex, smooth risk,
  Thm 176): projected step, Stich (2019) weighted average;
* :class:`AcceleratedStep`, Algorithm 8 (smooth convex risk, Thm 173):
  AC-SA of Ghadimi and Lan, query at the extrapolated point
  ``w_md = (1 - a_t) w_ag + a_t w`` with ``a_t = 2 / (t + 1)``;
* :class:`ProximalStep`, Algorithm 29 (proximal-PL composite risk, Thm 63):
  constant step, then the prox of the public l1 / elastic-net penalty and
  the ball (the penalty is never clipped); the last iterate, or for the
  smoothed piecewise-linear losses the average of the last half;
* :class:`LocalizedStep`, Algorithm 6, one phase of Algorithm 7: a step
  regularized towards the previous phase's output inside two balls.

:func:`one_pass_loop` runs one rule over a sequence of row batches. The
one-pass solvers give it disjoint batches (parallel composition: the run is
as private as one query); a phase of Algorithm 7 gives it the same block
``T_i`` times (sequential composition inside the phase).
"""

import contextlib

import numpy as np

from ._mean_oracle import clipped_gradient_mean
from ._projections import project_ball, project_two_balls, prox_elastic_net

__all__ = [
    "AcceleratedStep",
    "LocalizedStep",
    "ProximalStep",
    "StichAveraging",
    "one_pass_loop",
    "ridge_gradient",
]


def ridge_gradient(w, alpha, n_penalized):
    """Gradient of ``alpha/2 ||w[:n_penalized]||^2`` (data independent, never clipped).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers.heavy_tail._one_pass import ridge_gradient
    >>> ridge_gradient(np.array([1.0, 2.0, 3.0]), 0.5, 2)
    array([0.5, 1. , 0. ])
    """
    grad = np.zeros_like(w)
    grad[:n_penalized] = alpha * w[:n_penalized]
    return grad


class StichAveraging:
    """Algorithm 27: ``w <- Pi_W(w - eta_t (G_t + alpha w))``, weighted average.

    Parameters
    ----------
    step_sizes, weights : ndarray of shape (T + 1,)
        Stich's schedule (see ``stich_schedule``).
    alpha : float
        Ridge penalty on the coefficients (not the intercept).
    radius : float
        Radius of the constraint ball ``W``.
    """

    def __init__(self, step_sizes, weights, alpha, radius):
        self.step_sizes, self.weights = step_sizes, weights
        self.alpha, self.radius = alpha, radius

    def start(self, w):
        self.w, self.average = w, np.zeros_like(w)

    def query(self, t):
        return self.w

    def update(self, t, grad):
        grad += ridge_gradient(self.w, self.alpha, self.w.size - 1)
        self.w = project_ball(self.w - self.step_sizes[t - 1] * grad, self.radius)
        self.average += self.weights[t - 1] * self.w

    def result(self):
        return self.average / np.sum(self.weights)


class AcceleratedStep:
    """Algorithm 8 (AC-SA): step ``t / (2 eta)`` from the extrapolated point.

    Parameters
    ----------
    eta : float
        Step-size constant (see ``acsa_step_size``).
    alpha : float
        Ridge penalty on the coefficients (not the intercept).
    radius : float
        Radius of the constraint ball ``W``.
    """

    def __init__(self, eta, alpha, radius):
        self.eta, self.alpha, self.radius = eta, alpha, radius

    def start(self, w):
        self.w, self.w_ag = w, w.copy()

    def query(self, t):
        a = 2.0 / (t + 1)
        self.w_md = (1.0 - a) * self.w_ag + a * self.w
        return self.w_md

    def update(self, t, grad):
        a = 2.0 / (t + 1)
        grad += ridge_gradient(self.w_md, self.alpha, self.w.size - 1)
        self.w = project_ball(self.w - (t / (2.0 * self.eta)) * grad, self.radius)
        self.w_ag = a * self.w + (1.0 - a) * self.w_ag

    def result(self):
        return self.w_ag


class ProximalStep:
    """Algorithm 29: constant step, then the prox of the penalty and the ball.

    Algorithm 29 outputs the last iterate ``w_T``, whose error Proposition
    177 bounds by ``(1 - mu / (2 beta))^T Delta + 4 (B^2 + Sigma^2) / mu``.
    With ``average_from`` the output is instead the uniform average of the
    iterates ``w_t``, ``t >= average_from`` (the alpha-suffix average of
    Rakhlin, Shamir and Sridharan 2012, "Making gradient descent optimal
    for strongly convex stochastic optimization"): post-processing of the
    released iterates, so no privacy cost. It is for the smoothed
    piecewise-linear losses, whose ``mu`` is unknown and floored at
    ``beta ln n / n``: Proposition 177's noise term is then of order ``n``
    and bounds nothing, and a constant step's last iterate keeps the whole
    variance of one (small) batch's noisy gradient, so more steps on
    smaller batches (a larger ``epsilon``) made it worse. The average of
    points of the ball lies in the ball; with an l1 penalty it is sparse
    only in the coordinates every averaged iterate zeroes.

    Parameters
    ----------
    step_size : float
        Constant step ``1 / (2 beta)``.
    l1, l2 : float
        Penalty ``l1 ||coef||_1 + l2/2 ||coef||^2`` (not on the intercept).
    radius : float
        Radius of the constraint ball ``W``.
    average_from : int or None, default=None
        First step ``t`` (1-based) whose iterate enters the output's
        average; None outputs the last iterate (Algorithm 29 as stated).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers.heavy_tail._one_pass import ProximalStep
    >>> rule = ProximalStep(0.5, 0.0, 0.0, 10.0, average_from=2)
    >>> rule.start(np.zeros(2))
    >>> for t, grad in enumerate([[-2.0, 0.0], [0.0, -2.0], [2.0, 0.0]], start=1):
    ...     rule.update(t, np.array(grad))
    >>> rule.w, rule.result()
    (array([0., 1.]), array([0.5, 1. ]))
    """

    def __init__(self, step_size, l1, l2, radius, average_from=None):
        self.step_size, self.l1, self.l2, self.radius = step_size, l1, l2, radius
        self.average_from = average_from

    def start(self, w):
        self.w = w
        self.total, self.count = np.zeros_like(w), 0

    def query(self, t):
        return self.w

    def update(self, t, grad):
        step = self.step_size
        # prox of (l1 + l2 + indicator of the ball): the ball's radial
        # projection after the separable prox is exact, because rescaling
        # keeps the sign pattern of the soft-thresholded point (Yu, 2013).
        n_penalized = self.w.size - 1
        w = prox_elastic_net(self.w - step * grad, step, self.l1, self.l2, n_penalized)
        self.w = project_ball(w, self.radius)
        if self.average_from is not None and t >= self.average_from:
            self.total += self.w
            self.count += 1

    def result(self):
        if not self.count:
            return self.w
        return self.total / self.count


class LocalizedStep:
    """Algorithm 6 (one phase of Algorithm 7): regularized step in two balls.

    Parameters
    ----------
    phase : LocalizedPhase
        Step size, regularization weight and local radius of the phase.
    center : ndarray
        The previous phase's output ``w_{i-1}``.
    radius : float
        Radius of the constraint ball ``W``.
    """

    def __init__(self, phase, center, radius):
        self.phase, self.center, self.radius = phase, center, radius

    def start(self, w):
        self.w = w

    def query(self, t):
        return self.w

    def update(self, t, grad):
        phase = self.phase
        # The regularizer is data independent: added after the noise.
        grad += phase.regularization * (self.w - self.center)
        self.w = project_two_balls(
            self.w - phase.step_size * grad,
            self.radius,
            self.center,
            phase.local_radius,
        )

    def result(self):
        return self.w


def one_pass_loop(
    X,
    y,
    loss,
    *,
    batches,
    rule,
    clip_norm,
    mechanism,
    intercept_scaling,
    rng,
    start=None,
    sample_weight=None,
    parts=None,
    progress=None,
):
    """Run ``rule`` on MeanOracle1's answers, one query per batch; return its result.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    loss : object
        Pointwise loss with ``raw_gradient``.
    batches : iterable of index arrays or None
        The rows of each query, in order (None: every row).
    rule : StichAveraging, AcceleratedStep, ProximalStep or LocalizedStep
        The update rule (post-processing of the noisy answers).
    clip_norm : float
        Per-sample clip threshold ``C``.
    mechanism : GaussianMechanism
        Noise of each query (sensitivity ``2 C`` under replace-one).
    intercept_scaling : float
        1 with an intercept, 0 without.
    rng : numpy.random.Generator
        Source of the noise.
    start : ndarray of shape (n_features + 1,), default=None
        First iterate (a copy is used); None: the public ``w_0 = 0``.
    sample_weight : ndarray of shape (n_samples,) or None, default=None
        Public weights, applied to each gradient before it is clipped.
    parts : object or None, default=None
        From :func:`~sklearn_dpfair.privacy._releases.parallel_parts` when
        the batches are disjoint: each query is logged as its own part.
        None: the queries compose sequentially.
    progress : Progress or None, default=None
        Called after every query with the norm of its released noisy mean
        (:mod:`~sklearn_dpfair._solvers._progress`).

    Returns
    -------
    w : ndarray of shape (n_features + 1,)
        Coefficients then the intercept parameter.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._loss import SquaredLoss
    >>> from sklearn_dpfair._solvers.heavy_tail._one_pass import (
    ...     ProximalStep, one_pass_loop)
    >>> from sklearn_dpfair.privacy import GaussianMechanism
    >>> X, y = np.ones((4, 1)), np.full(4, 2.0)
    >>> one_pass_loop(X, y, SquaredLoss(), batches=[[0, 1], [2, 3]],
    ...               rule=ProximalStep(0.25, 0.0, 0.0, 10.0), clip_norm=np.inf,
    ...               mechanism=GaussianMechanism(np.inf, 0.0),
    ...               intercept_scaling=1.0, rng=None)
    array([0.75, 0.75])
    """
    w = np.zeros(X.shape[1] + 1) if start is None else start.copy()
    rule.start(w)
    for t, idx in enumerate(batches, start=1):
        with contextlib.nullcontext() if parts is None else parts.part(t):
            grad = clipped_gradient_mean(
                X,
                y,
                rule.query(t),
                loss,
                clip_norm=clip_norm,
                mechanism=mechanism,
                intercept_scaling=intercept_scaling,
                rng=rng,
                sample_weight=sample_weight,
                rows=idx,
            )
        rule.update(t, grad)
        if progress is not None:
            # The norm of the released noisy mean: post-processing.
            progress(t, float(np.linalg.norm(grad)))
    return rule.result()
