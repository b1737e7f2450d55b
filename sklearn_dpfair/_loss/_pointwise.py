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
"""

import numpy as np
from scipy.special import expit, log_expit, logsumexp, softmax

__all__ = ["BinaryLogisticLoss", "SoftmaxLoss", "SquaredLoss"]


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
        """Per-sample gradient in raw space, shape ``(n_samples, 1)``."""
        return expit(raw) - y[:, None]

    def predict_proba(self, raw):
        """Class probabilities ``[1 - p, p]``, shape ``(n_samples, 2)``."""
        p = expit(raw[:, 0])
        return np.column_stack([1.0 - p, p])


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
        """Per-sample gradient in raw space, shape ``(n_samples, n_classes)``."""
        grad = softmax(raw, axis=1)
        grad[np.arange(raw.shape[0]), y.astype(np.intp, copy=False)] -= 1.0
        return grad

    def predict_proba(self, raw):
        """Class probabilities, shape ``(n_samples, n_classes)``."""
        return softmax(raw, axis=1)


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
