# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""What a heavy-tail fit returns, whichever solver ran."""

from dataclasses import dataclass

import numpy as np

from ...privacy import PrivacyRecord

__all__ = ["HeavyTailFit"]


@dataclass
class HeavyTailFit:
    """The released model, the public choices that produced it and its record.

    ``clip_norm`` is in the units of ``y`` times ``x``; ``smoothness`` and
    ``strong_convexity`` are None for "dp-sgd", ``learning_rate`` None for
    the one-pass solvers; ``fallback`` says why the intercept-only or the
    public zero model was released instead of a fit, or why the steps ran
    at step size 0 (None otherwise).
    """

    coef: np.ndarray
    intercept: float
    solver: str
    n_iter: int
    batch_size: float
    clip_norm: float
    noise_std: float
    smoothness: float | None
    strong_convexity: float | None
    rho_spent: dict
    record: PrivacyRecord
    optimizer_epsilon: float
    target_location: float = 0.0
    target_scale: float = 1.0
    fallback: str | None = None
    learning_rate: float | None = None
    feature_location: np.ndarray | None = None
    feature_scale: np.ndarray | None = None

    @classmethod
    def without_steps(
        cls, coef, intercept, *, solver, record, fallback, rho_spent,
        optimizer_epsilon=0.0, learning_rate=None,
    ):
        """A model released without any optimizer step (``fallback`` says why).

        No clip, noise, batch or curvature was used: they are 0 or None;
        ``optimizer_epsilon`` is what the optimizer's queries were accounted
        at, whether they ran or not.
        """
        return cls(
            coef=coef,
            intercept=intercept,
            solver=solver,
            n_iter=0,
            batch_size=0.0,
            clip_norm=0.0,
            noise_std=0.0,
            smoothness=None,
            strong_convexity=None,
            rho_spent=rho_spent,
            record=record,
            optimizer_epsilon=optimizer_epsilon,
            target_location=intercept,
            fallback=fallback,
            learning_rate=learning_rate,
        )
