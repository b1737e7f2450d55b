# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Public, data-independent choices of batch size and number of steps.

Everything here is a function of ``n_samples`` and user parameters only.
``n_samples`` is treated as public, as in every DP-SGD implementation that
uses Poisson subsampling under add/remove adjacency (Opacus, TF Privacy).
"""

import contextlib
import math

import numpy as np

from ..privacy._calibration import UnreachableBudgetError

__all__ = [
    "MAX_STEPS",
    "auto_epochs",
    "auto_learning_rate",
    "check_penalty_step",
    "check_sgd_steps",
    "penalty_capped_learning_rate",
    "resolve_epochs",
    "sgd_schedule",
    "tail_start",
]

# Default expected batch size as a fraction of n, with a floor. Large batches
# are what DP-SGD wants: the noise on the mean gradient falls as 1/(q n) while
# the epsilon cost of an epoch grows only like sqrt(q). On UCI Adult
# (n ~ 30k) this gives batches of ~1500; see benchmarks/bench_dplogreg.py for
# the sweep that chose it.
AUTO_BATCH_FRACTION = 0.05
AUTO_BATCH_MIN = 256

#: The most steps a DP-SGD (or SGDA) fit takes. Each step is a Python-level
#: iteration (a batch gather, a noise draw and an update) of a few hundred
#: microseconds at the least (batch_size=1 on 5 columns: ~0.35 ms), so this
#: many steps already take minutes, and a count far above would not finish.
#: The defaults stay far below: at most 20 epochs of batches of 5% of n, 400
#: steps; 20 epochs of batches of 1,000 out of 10**6 rows take 20,000. The
#: same cap as the semi-supervised fits' (``semi_dp._fit.MAX_STEPS``).
MAX_STEPS = 10**6


# Epochs of DP-SGD when max_iter="auto": AUTO_EPOCHS_ROWS / n, between
# AUTO_EPOCHS_MIN and AUTO_EPOCHS_MAX. With the auto batch (5% of n) a
# pass is 20 steps of batch n / 20, so large n reaches its accuracy in few
# passes: on synthetic d = 100 data (benchmarks/bench_scale.py, "epochs"),
# 2 epochs lose nothing against 20 at n = 1e5 (eps 0.1, 1, 8: within
# 0.0011, mostly better) and n = 1e6 (eps = 1: 0.8398 vs 0.8397), while at
# n = 1e4 and eps = 8, 5 epochs lose 0.0012. Up to n = 50,000 the rule keeps
# the 20 epochs tuned on UCI Adult (n ~ 30,000); n = 1e5 takes 10, 2e5 takes
# 5, n >= 5e5 takes 2. Only n, which is public, is read.
AUTO_EPOCHS_ROWS = 1_000_000
AUTO_EPOCHS_MIN = 2
AUTO_EPOCHS_MAX = 20


def auto_epochs(n_samples):
    """DP-SGD epochs for ``max_iter="auto"``, from the public ``n`` only.

    Examples
    --------
    >>> from sklearn_dpfair._solvers._schedules import auto_epochs
    >>> [auto_epochs(n) for n in (30_000, 100_000, 200_000, 1_000_000)]
    [20, 10, 5, 2]
    """
    epochs = math.ceil(AUTO_EPOCHS_ROWS / n_samples - 1e-9)
    return int(min(AUTO_EPOCHS_MAX, max(AUTO_EPOCHS_MIN, epochs)))


def resolve_epochs(epochs, n_samples):
    """``epochs`` as given, or :func:`auto_epochs` of ``n_samples`` for "auto".

    Examples
    --------
    >>> from sklearn_dpfair._solvers._schedules import resolve_epochs
    >>> resolve_epochs(7, 10**6), resolve_epochs("auto", 10**6)
    (7, 2)
    """
    # Other solvers pass fractional epochs: kept as they are.
    return auto_epochs(n_samples) if isinstance(epochs, str) else epochs


def sgd_schedule(n_samples, batch_size, epochs):
    """Return ``(sampling_probability, n_steps)`` for a Poisson-sampled SGD run.

    Parameters
    ----------
    n_samples : int
        Number of training rows (treated as public).
    batch_size : int, "auto" or "full"
        Expected batch size ``q n``; "full" means ``q = 1`` (noisy GD).
    epochs : int or "auto"
        Expected number of passes over the data; ``n_steps = ceil(epochs / q)``.
        "auto" is :func:`auto_epochs` of ``n_samples``.

    Examples
    --------
    >>> from sklearn_dpfair._solvers._schedules import sgd_schedule
    >>> sgd_schedule(10_000, 500, 3)
    (0.05, 60)
    """
    if batch_size == "full":
        q = 1.0
    elif batch_size == "auto":
        b = max(AUTO_BATCH_MIN, AUTO_BATCH_FRACTION * n_samples)
        q = min(1.0, b / n_samples)
    else:
        q = min(1.0, batch_size / n_samples)
    epochs = resolve_epochs(epochs, n_samples)
    return q, max(1, math.ceil(epochs / q - 1e-9))


def check_sgd_steps(n_samples, batch_size, epochs, *, steps=None):
    """Refuse a DP-SGD (or SGDA) schedule of more than :data:`MAX_STEPS` steps.

    From public inputs only, before any row is read (and before a
    calibration composes the steps). The message names the estimators'
    parameters: ``max_iter`` (the epochs) and ``batch_size``.

    Parameters
    ----------
    n_samples : int or None
        Number of training rows (treated as public). None checks ``max_iter``
        alone, as a fit does before it reads the data.
    batch_size : int, "auto" or "full"
        Expected batch size, as :func:`sgd_schedule` takes it.
    epochs : int, float or "auto"
        Expected passes over the data (``max_iter``).
    steps : int or None, default=None
        The schedule's step count where it is not :func:`sgd_schedule`'s
        (balls-and-bins batches); None computes it with :func:`sgd_schedule`.

    Raises
    ------
    ValueError
        If the schedule takes more than :data:`MAX_STEPS` steps.

    Examples
    --------
    >>> from sklearn_dpfair._solvers._schedules import check_sgd_steps
    >>> check_sgd_steps(10**6, 1_000, 20)
    >>> check_sgd_steps(1_000, 10, 10**5)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: max_iter=100000 epochs of batches ... or a smaller max_iter.
    """
    cap = (
        f"a fit takes at most {MAX_STEPS} steps (each a Python-level step of "
        "the solver)"
    )
    if not isinstance(epochs, str) and epochs > MAX_STEPS:
        # Compared before the division by q: q <= 1 makes T >= epochs, and an
        # int number of epochs near float64's largest would overflow it.
        raise ValueError(
            f"max_iter={_count(epochs)} epochs take at least as many steps; "
            f"{cap}: pass a smaller max_iter."
        )
    if n_samples is None:
        return
    q, planned = sgd_schedule(n_samples, batch_size, epochs)
    if steps is None:
        steps = planned
    if steps > MAX_STEPS:
        # Both at most MAX_STEPS * n_samples here: printed in full.
        given = (
            f"max_iter={epochs!r} ({resolve_epochs(epochs, n_samples)} epochs)"
            if isinstance(epochs, str)
            else f"max_iter={epochs} epochs"
        )
        raise ValueError(
            f"{given} of batches of expected size "
            f"{q * n_samples:.4g} (batch_size={batch_size!r} of "
            f"n_samples={n_samples}) take {steps} steps; {cap}: "
            "pass a larger batch_size or a smaller max_iter."
        )


def _count(value):
    """A public count for a message: exact up to 20 digits, never 300 of them."""
    if isinstance(value, (int, np.integer)) and abs(int(value)) < 10**20:
        # One past the cap (1000001) must not read as the cap (1e+06).
        return str(int(value))
    try:
        return f"{value:.4g}"
    except OverflowError:
        # An int beyond float64: its size, not its (possibly thousands of)
        # digits, which Python refuses to print past 4300 of them.
        return f"about 2**{int(value).bit_length()}"


# Step size of DP-SGD when learning_rate="auto". What limits the step is the
# noise on the averaged gradient relative to the clip norm,
#     r = sigma * sqrt(n_params) / (q * n),
# a public quantity (noise multiplier, parameter count, expected batch size).
# The sweep in benchmarks/bench_dplogreg.py (UCI Adult, validation split of
# the training file) found the best constant step close to 0.2 / r across
# epsilon in [0.05, 8], capped at 8 when the noise is negligible:
# r = 0.025 -> 8, r = 0.09 -> 2, r = 0.2 -> 1, r = 0.4 -> 0.5.
AUTO_LEARNING_RATE_SCALE = 0.2
AUTO_LEARNING_RATE_MAX = 8.0
# Without clipping (epsilon = inf) the gradient is unbounded, so the step
# must respect the loss's smoothness instead; 1.0 is stable for standardized
# features and matches scikit-learn's LogisticRegression on >= 99% of Adult
# test predictions.
NON_PRIVATE_LEARNING_RATE = 1.0


def auto_learning_rate(noise_multiplier, sampling_probability, n_samples, n_params):
    """Constant DP-SGD step size from public quantities only.

    Parameters
    ----------
    noise_multiplier : float
        Calibrated noise multiplier; 0 means a non-private run.
    sampling_probability : float
        Poisson sampling rate ``q``.
    n_samples : int
        Number of rows (public).
    n_params : int
        Number of noisy coordinates (coefficients and intercepts).

    Returns
    -------
    learning_rate : float

    Examples
    --------
    >>> from sklearn_dpfair._solvers._schedules import auto_learning_rate
    >>> round(auto_learning_rate(4.0, 0.05, 30_000, 100), 2)
    7.5
    """
    if noise_multiplier == 0:
        return NON_PRIVATE_LEARNING_RATE
    # In float64 whatever the inputs' types: a float16 would overflow.
    noise_ratio = (
        float(noise_multiplier)
        * math.sqrt(n_params)
        / (float(sampling_probability) * n_samples)
    )
    return min(AUTO_LEARNING_RATE_MAX, AUTO_LEARNING_RATE_SCALE / noise_ratio)


def check_penalty_step(learning_rate, alpha):
    """Refuse a step size for which the L2 penalty's step diverges.

    The gradient step on ``alpha / 2 ||w||^2`` multiplies the coefficients
    by ``1 - learning_rate * alpha``; from ``learning_rate * alpha = 2`` on
    every step amplifies them and the iterates diverge whatever the data
    (gradient descent on an ``alpha``-smooth quadratic is stable only below
    ``2 / alpha``). Public parameters only: decided before any row is read.

    Examples
    --------
    >>> from sklearn_dpfair._solvers._schedules import check_penalty_step
    >>> check_penalty_step(1.0, 1.5)
    >>> check_penalty_step(8.0, 0.3)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: learning_rate * alpha must be below 2 ...
    """
    # In float64: a float16 alpha's product with a large step would overflow
    # (to inf, refused all the same, but with a RuntimeWarning).
    if alpha > 0 and float(learning_rate) * float(alpha) >= 2.0:
        raise ValueError(
            "learning_rate * alpha must be below 2 (got learning_rate="
            f"{learning_rate!r}, alpha={alpha!r}): each step multiplies the "
            "coefficients by 1 - learning_rate * alpha, so the iterates would "
            "diverge. Lower learning_rate or alpha."
        )


def penalty_capped_learning_rate(learning_rate, alpha):
    """An "auto" step size, capped at ``1 / alpha`` for the L2 penalty's step.

    Beyond ``2 / alpha`` the penalty's step diverges
    (:func:`check_penalty_step`); at ``1 / alpha`` it is the fastest
    contraction. A cap, so the step of a fit with ``learning_rate * alpha
    <= 1`` is unchanged.

    Examples
    --------
    >>> from sklearn_dpfair._solvers._schedules import penalty_capped_learning_rate
    >>> penalty_capped_learning_rate(8.0, 0.0), penalty_capped_learning_rate(8.0, 0.5)
    (8.0, 2.0)
    """
    if alpha > 0:
        # In float64: 1 / alpha overflows a float16 alpha below 2**-16.
        return min(learning_rate, 1.0 / float(alpha))
    return learning_rate


def tail_start(n_steps, tail_fraction):
    """First step of the averaged tail: the last ``ceil(tail_fraction T)`` iterates.

    At least one iterate is averaged. The average is post-processing of the
    released iterates: it costs no privacy. Works element-wise on an array of
    step counts (one per configuration of a vectorized solver).

    Examples
    --------
    >>> from sklearn_dpfair._solvers._schedules import tail_start
    >>> tail_start(10, 0.5), tail_start(7, 0.5), tail_start(3, 0.01)
    (5, 3, 2)
    """
    start = n_steps - np.maximum(1, np.ceil(tail_fraction * np.asarray(n_steps)))
    start = np.asarray(start).astype(int)
    return int(start) if start.ndim == 0 else start


@contextlib.contextmanager
def naming_the_schedule(epochs, n_steps):
    """Say which parameter sets the steps when no noise reaches the budget.

    The calibration's refusal asks for fewer steps; the steps are
    ``max_iter`` epochs of the batch schedule, so the message names it.
    (Counts beyond the step cap, such as ``max_iter=10**30``, are refused
    before the calibration by :func:`check_sgd_steps`.)
    """
    try:
        yield
    except UnreachableBudgetError as exc:
        count = f"{epochs:.4g}" if isinstance(epochs, (int, float)) else repr(epochs)
        raise UnreachableBudgetError(
            f"{exc} The schedule runs {n_steps:.4g} steps (max_iter={count} "
            "epochs): lower max_iter."
        ) from exc
