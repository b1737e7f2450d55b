# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The absolute and quantile losses smoothed over a public width, for the one-pass solvers.

The one-pass solvers "sgd", "acsa" and "prox" (Lowy's thesis, Algorithms
27, 8 and 29) take their step sizes and step counts from the smoothness
``beta`` of the risk. The pinball and absolute losses have none of their
own: the curvature of their population risk is the noise density at the
fitted quantile, which is unknown and is no public quantity. The thesis
runs such losses on a smoothed objective instead (Nesterov smoothing,
Lemma 105 in the proof of Theorem 34); here the smoothing is the
convolution of the loss with a uniform kernel of public half-width ``h``
(Fernandes, Guerre and Horta 2021, "Smoothing quantile regressions"; He,
Pan, Tan and Zhou 2023, "Smoothed quantile regression with large-scale
inference"): for a loss of slopes ``-a`` (negative residual) and ``b``
(positive residual),

* ``l_h(r) = E[l(r + h U)]`` with ``U`` uniform on [-1, 1] equals ``l(r)``
  wherever ``|r| >= h`` and is quadratic between, so it is never more than
  ``(a + b) h / 4`` above or below ``l``;
* its gradient ``-a + (a + b) clip((r + h) / (2 h), 0, 1)`` stays in
  ``[-a, b]`` (the same Lipschitz bound, hence the same clipping);
* its curvature is at most ``(a + b) / (2 h)``, so the population risk of
  ``l_h(y - x~^T w)`` is ``beta``-smooth with
  ``beta = (a + b) / (2 h) * lambda_max(E x~ x~^T)``: a public factor times
  the eigenvalue the squared loss's ``beta`` is (estimated privately by
  :mod:`._private_curvature`);
* the kernel is symmetric, so the smoothed minimizer is the quantile up to
  ``O(h^2)`` for a smooth noise density (and exactly the median for
  symmetric noise and the absolute loss).

Its strong convexity is that density again (no public bound): "auto"
takes the data term's as 0 and the L2 penalty's ``alpha`` only.
"""

import numpy as np

from ..._loss import AbsoluteLoss, PinballLoss
from ...utils._array_api import array_namespace

__all__ = ["SmoothedPiecewiseLinearLoss", "smoothed_loss"]


class SmoothedPiecewiseLinearLoss:
    """``E[l(r + h U)]``, ``U ~ Uniform[-1, 1]``, for ``l(r) = b r^+ + a r^-``.

    ``r = raw - y``; ``a`` and ``b`` are the slopes' magnitudes below and
    above 0.

    Parameters
    ----------
    lower_slope, upper_slope : float
        ``a`` and ``b`` (1 and 1 for the absolute error, ``tau`` and
        ``1 - tau`` for the pinball loss of level ``tau``).
    width : float
        Half-width ``h > 0`` of the kernel, in units of ``y``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers.heavy_tail._smoothed_loss import (
    ...     SmoothedPiecewiseLinearLoss)
    >>> loss = SmoothedPiecewiseLinearLoss(1.0, 1.0, width=2.0)  # |r| smoothed
    >>> loss.raw_gradient(np.zeros(3), np.array([[-5.0], [1.0], [5.0]]))
    array([[-1. ],
           [ 0.5],
           [ 1. ]])
    >>> loss.loss(np.zeros(2), np.array([[0.0], [5.0]]))  # h / 2 at 0; |r| beyond h
    array([1., 5.])
    >>> loss.raw_smoothness
    0.5
    """

    n_outputs = 1

    def __init__(self, lower_slope, upper_slope, *, width):
        self.lower_slope = float(lower_slope)
        self.upper_slope = float(upper_slope)
        self.width = float(width)
        if not self.width > 0:
            raise ValueError(f"width must be positive, got {width!r}.")
        # The gradient lies in [-a, b].
        self.raw_lipschitz = max(self.lower_slope, self.upper_slope)
        self.raw_smoothness = (self.lower_slope + self.upper_slope) / (
            2.0 * self.width
        )

    def loss(self, y, raw):
        """Per-sample values, shape ``(n_samples,)``."""
        a, b, h = self.lower_slope, self.upper_slope, self.width
        r = raw[:, 0] - y
        inside = -a * r + (a + b) * (r + h) ** 2 / (4.0 * h)
        return np.where(r >= h, b * r, np.where(r <= -h, -a * r, inside))

    def raw_gradient(self, y, raw):
        """Per-sample gradient in raw space, shape ``(n_samples, 1)``."""
        xp = array_namespace(raw)
        a, b, h = self.lower_slope, self.upper_slope, self.width
        share = xp.clip((raw - y[:, None] + h) / (2.0 * h), 0.0, 1.0)
        return (a + b) * share - a


def smoothed_loss(loss, width):
    """The smoothed absolute or pinball ``loss`` of half-width ``width``.

    Examples
    --------
    >>> from sklearn_dpfair._loss import PinballLoss
    >>> from sklearn_dpfair._solvers.heavy_tail._smoothed_loss import smoothed_loss
    >>> smoothed = smoothed_loss(PinballLoss(0.9), 0.5)
    >>> round(smoothed.lower_slope, 12), round(smoothed.upper_slope, 12)
    (0.9, 0.1)
    >>> smoothed.raw_smoothness
    1.0
    """
    if isinstance(loss, PinballLoss):
        return SmoothedPiecewiseLinearLoss(
            loss.quantile, 1.0 - loss.quantile, width=width
        )
    if isinstance(loss, AbsoluteLoss):
        return SmoothedPiecewiseLinearLoss(1.0, 1.0, width=width)
    raise TypeError(f"No smoothing for {type(loss).__name__}.")
