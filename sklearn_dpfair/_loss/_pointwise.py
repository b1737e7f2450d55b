# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Pointwise losses in raw-prediction space.

Each loss maps ``(y, raw)`` with ``raw`` of shape ``(n_samples, n_outputs)``
to per-sample values and raw-space gradients. The lift through ``X`` (and
hence the per-sample gradient ``r_i x~_i^T``) lives in the solvers, so a loss
never sees features. Two constants describe each loss for privacy and step
sizes: ``raw_lipschitz`` bounds ``||r_i||_2`` (so the Lipschitz constant of
one example is ``raw_lipschitz * ||x~_i||``) and ``raw_smoothness`` bounds
the raw-space Hessian (smoothness ``raw_smoothness * ||x~_i||^2``).

The classification losses accept any raw score that is not ``nan``:
``+-inf`` gives the limit of the sigmoid or softmax (a finite gradient and
finite probabilities), and :meth:`predict_log_proba` is finite, saturating
at the most negative float instead of ``log(0) = -inf``. A ``nan`` score
(which a solver never produces from finite data, see
:func:`~sklearn_dpfair.utils._array_api.finite_linear_scores`) gives a
``nan`` gradient, which the clipping then replaces by 0.
"""

import numpy as np
from scipy.special import log_expit, logsumexp

from ..utils._array_api import array_namespace, device_of
from ..utils._array_api import expit as xp_expit
from ..utils._array_api import log_expit as xp_log_expit
from ..utils._array_api import log_softmax as xp_log_softmax
from ..utils._array_api import softmax as xp_softmax

__all__ = [
    "AbsoluteLoss",
    "BinaryLogisticLoss",
    "HuberLoss",
    "PinballLoss",
    "SoftmaxLoss",
    "SquaredLoss",
]


class BinaryLogisticLoss:
    """Half of the binomial deviance: ``log(1 + exp(raw)) - y * raw``, y in {0, 1}.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._loss import BinaryLogisticLoss
    >>> loss = BinaryLogisticLoss()
    >>> loss.raw_gradient(np.array([1.0]), np.array([[0.0]]))
    array([[-0.5]])
    """

    n_outputs = 1
    # |sigmoid(raw) - y| <= 1.
    raw_lipschitz = 1.0
    # sigmoid'(raw) <= 1/4.
    raw_smoothness = 0.25

    def loss(self, y, raw):
        """Per-sample loss values, shape ``(n_samples,)``."""
        raw = raw[:, 0]
        return -(y * log_expit(raw) + (1.0 - y) * log_expit(-raw))

    def raw_gradient(self, y, raw):
        """Per-sample gradient in raw space, shape ``(n_samples, 1)``.

        Computed in the namespace of ``raw`` (numpy or an array-API array).
        """
        return xp_expit(raw) - y[:, None]

    def predict_proba(self, raw):
        """Class probabilities ``[1 - p, p]``, shape ``(n_samples, 2)``."""
        p = xp_expit(raw[:, 0])
        return array_namespace(p).stack([1.0 - p, p], axis=1)

    def predict_log_proba(self, raw):
        """Log-probabilities ``[log(1 - p), log p]``, finite unless ``raw`` is nan.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn_dpfair._loss import BinaryLogisticLoss
        >>> loss = BinaryLogisticLoss()
        >>> loss.predict_proba(np.array([[-800.0]]))  # log(0) would be -inf
        array([[1., 0.]])
        >>> loss.predict_log_proba(np.array([[-800.0]]))
        array([[  -0., -800.]])
        """
        r = raw[:, 0]
        xp = array_namespace(r)
        log_proba = xp.stack([xp_log_expit(-r), xp_log_expit(r)], axis=1)
        return _floor_at_lowest(log_proba)


class SoftmaxLoss:
    """Multinomial cross-entropy ``logsumexp(raw) - raw[y]``, y in {0, ..., K-1}.

    Parameters
    ----------
    n_classes : int
        Number of classes ``K``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._loss import SoftmaxLoss
    >>> SoftmaxLoss(3).raw_gradient(np.array([2]), np.zeros((1, 3))).round(3)
    array([[ 0.333,  0.333, -0.667]])
    """

    # ||softmax(raw) - e_y||^2 <= 2 (1 - p_y)^2 <= 2.
    raw_lipschitz = np.sqrt(2.0)
    # The eigenvalues of diag(p) - p p^T are at most 1/2.
    raw_smoothness = 0.5

    def __init__(self, n_classes):
        self.n_outputs = int(n_classes)

    def loss(self, y, raw):
        """Per-sample loss values, shape ``(n_samples,)``."""
        y = y.astype(np.intp, copy=False)
        return logsumexp(raw, axis=1) - raw[np.arange(raw.shape[0]), y]

    def raw_gradient(self, y, raw):
        """Per-sample gradient in raw space, shape ``(n_samples, n_classes)``.

        Computed in the namespace of ``raw`` (numpy or an array-API array).
        """
        xp = array_namespace(raw, y)
        # softmax - onehot(y), without the integer-array assignment the array
        # API lacks; x - 0.0 is exact, so numpy results are unchanged.
        labels = xp.arange(raw.shape[1], dtype=y.dtype, device=device_of(raw))
        return xp_softmax(raw, axis=1) - xp.astype(y[:, None] == labels, raw.dtype)

    def predict_proba(self, raw):
        """Class probabilities, shape ``(n_samples, n_classes)``."""
        return xp_softmax(raw, axis=1)

    def predict_log_proba(self, raw):
        """Log class probabilities (log-softmax), finite for any non-nan ``raw``.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn_dpfair._loss import SoftmaxLoss
        >>> SoftmaxLoss(2).predict_log_proba(np.array([[0.0, -1000.0]]))
        array([[    0., -1000.]])
        """
        return _floor_at_lowest(xp_log_softmax(raw, axis=1))


def _floor_at_lowest(log_proba):
    # A log-probability below the most negative float (two scores further
    # apart than the largest float) is reported as that float, not -inf.
    xp = array_namespace(log_proba)
    lowest = -float(xp.finfo(log_proba.dtype).max)
    if not bool(xp.any(log_proba < lowest)):
        return log_proba
    return xp.clip(log_proba, lowest, None)


class SquaredLoss:
    """Half squared error ``(raw - y)^2 / 2`` for regression (one output).

    Its raw gradient ``raw - y`` is unbounded, so private solvers must clip
    per-example gradients (``raw_lipschitz`` is ``inf``).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._loss import SquaredLoss
    >>> SquaredLoss().raw_gradient(np.array([1.0]), np.array([[3.0]]))
    array([[2.]])
    """

    n_outputs = 1
    raw_lipschitz = np.inf
    raw_smoothness = 1.0

    def loss(self, y, raw):
        """Per-sample loss values, shape ``(n_samples,)``."""
        return 0.5 * (raw[:, 0] - y) ** 2

    def raw_gradient(self, y, raw):
        """Per-sample gradient in raw space, shape ``(n_samples, 1)``."""
        return raw - y[:, None]


class HuberLoss:
    """Huber loss with threshold ``t``: quadratic for small residuals, linear beyond.

    ``0.5 res^2`` if ``|res| <= t`` and ``t (|res| - t/2)`` otherwise, with
    ``res = raw - y``. Its raw gradient ``clip(res, -t, t)`` is bounded by
    ``t`` whatever ``y`` is, so heavy-tailed targets cost nothing in the
    gradient-norm moments (only the rows' norms matter).

    Parameters
    ----------
    threshold : float
        Residual ``t > 0`` where the loss turns linear, in units of ``y``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._loss import HuberLoss
    >>> HuberLoss(1.0).raw_gradient(np.array([0.0, 0.0]), np.array([[0.5], [3.0]]))
    array([[0.5],
           [1. ]])
    """

    n_outputs = 1
    raw_smoothness = 1.0

    def __init__(self, threshold):
        self.threshold = float(threshold)
        # |clip(res, -t, t)| <= t.
        self.raw_lipschitz = self.threshold

    def loss(self, y, raw):
        """Per-sample loss values, shape ``(n_samples,)``."""
        abs_res = np.abs(raw[:, 0] - y)
        t = self.threshold
        return np.where(abs_res <= t, 0.5 * abs_res**2, t * (abs_res - 0.5 * t))

    def raw_gradient(self, y, raw):
        """Per-sample gradient in raw space, shape ``(n_samples, 1)``."""
        # In raw's namespace: the DP-SGD steps may run on torch.
        xp = array_namespace(raw)
        return xp.clip(raw - y[:, None], -self.threshold, self.threshold)


class AbsoluteLoss:
    """Absolute error ``|raw - y|`` (least absolute deviations).

    Nonsmooth at zero residual (``raw_smoothness`` is ``inf``); the
    subgradient returned there is 0.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._loss import AbsoluteLoss
    >>> AbsoluteLoss().raw_gradient(np.array([1.0, 1.0]), np.array([[3.0], [-1.0]]))
    array([[ 1.],
           [-1.]])
    """

    n_outputs = 1
    # |sign(res)| <= 1.
    raw_lipschitz = 1.0
    raw_smoothness = np.inf

    def loss(self, y, raw):
        """Per-sample loss values, shape ``(n_samples,)``."""
        return np.abs(raw[:, 0] - y)

    def raw_gradient(self, y, raw):
        """Per-sample (sub)gradient in raw space, shape ``(n_samples, 1)``."""
        return array_namespace(raw).sign(raw - y[:, None])


class PinballLoss:
    """Pinball (quantile) loss of level ``tau``, minimized by the tau-quantile.

    With ``res = raw - y``: ``(1 - tau) res`` if ``res > 0`` and ``-tau res``
    otherwise. ``tau = 0.5`` is half the absolute error. Nonsmooth at zero
    residual, where the subgradient ``-tau`` is returned.

    Parameters
    ----------
    quantile : float
        Level ``tau`` in (0, 1).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._loss import PinballLoss
    >>> PinballLoss(0.9).raw_gradient(np.array([0.0, 0.0]), np.array([[1.0], [-1.0]]))
    array([[ 0.1],
           [-0.9]])
    """

    n_outputs = 1
    raw_smoothness = np.inf

    def __init__(self, quantile):
        self.quantile = float(quantile)
        if not 0.0 < self.quantile < 1.0:
            raise ValueError(f"quantile must lie in (0, 1), got {quantile!r}.")
        # |1{res > 0} - tau| <= max(tau, 1 - tau).
        self.raw_lipschitz = max(self.quantile, 1.0 - self.quantile)

    def loss(self, y, raw):
        """Per-sample loss values, shape ``(n_samples,)``."""
        res = raw[:, 0] - y
        return np.where(res > 0, (1.0 - self.quantile) * res, -self.quantile * res)

    def raw_gradient(self, y, raw):
        """Per-sample (sub)gradient in raw space, shape ``(n_samples, 1)``."""
        xp = array_namespace(raw)
        return xp.astype(raw - y[:, None] > 0, raw.dtype) - self.quantile
