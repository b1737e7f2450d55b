# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The Gaussian mechanism on a clipped sum.

White-box audits (:func:`sklearn_dpfair.audit.audit_gradient_canary`) need to
see inside it: a crafted per-example gradient (a *gradient canary*, Nasr et
al., 2023) is added to the clipped sum before the noise, and the noisy sum
is read back after it. :func:`observe_privatize` installs such an observer
for the current context; without one, :meth:`GaussianMechanism.privatize`
pays a single context-variable lookup and behaves exactly as before.
"""

import contextlib
import contextvars
import math
import typing
from dataclasses import dataclass

import numpy as np

from ._accounting import noisy_sgd_event
from ._releases import log_release
from ..utils._array_api import from_host
from ..utils._numeric import public_float

__all__ = ["GaussianMechanism", "Mechanism", "observe_privatize"]

#: Least noise scale (Gaussian standard deviation, Laplace scale) a mechanism
#: draws with: the smallest normal float64. Below it every draw is a
#: subnormal number, a multiple of 5e-324, so the noise takes fewer distinct
#: values the smaller the scale (about 1,200 at a scale of 1e-321), and it
#: rounds to 0 below 5e-324 (0.4 * 5e-324), releasing the sum exactly: not
#: the continuous distribution the release's event accounts for. At and
#: above it the draws keep float64's full relative precision.
MIN_NOISE_SCALE = float(np.finfo(np.float64).smallest_normal)


def store_python_floats(mechanism, names):
    """Store the numpy numbers among a frozen mechanism's ``names`` as floats.

    Numbers only: a numpy bool, string or complex is left as given, for
    :func:`check_mechanism_numbers` to refuse (``float()`` read
    ``np.False_`` as a noise multiplier of 0, no noise at all).
    """
    for name in names:
        value = getattr(mechanism, name)
        if isinstance(value, (np.floating, np.integer)):
            object.__setattr__(mechanism, name, float(value))


def check_mechanism_numbers(sensitivity, noise_multiplier, *, name):
    """Raise unless a mechanism's sensitivity and noise multiplier are numbers.

    Each must be a real number (not a bool) in ``[0, inf]``; the sensitivity
    may also be None for a mechanism without noise (``noise_multiplier ==
    0``), which scales nothing. The scale checks
    (:func:`check_noise_scale`, the mechanisms' overflow checks) come
    after: they compare with ``>`` and ``<``, which NaN fails silently (a
    NaN multiplier drew NaN noise under an event dp-accounting reads as
    epsilon 0), and they multiply, which an int beyond the largest float
    makes raise ``OverflowError`` without naming the parameter.

    Parameters
    ----------
    sensitivity : float or None
        The sensitivity, called ``name`` in the messages.
    noise_multiplier : float
        The noise in units of the sensitivity.
    name : str
        The sensitivity's parameter name ("clip_norm", "sensitivity").

    Raises
    ------
    TypeError
        Naming the parameter that is not a real number (a bool, a string,
        None with noise).
    ValueError
        Naming the parameter that is NaN, negative or an int beyond the
        largest float.

    Examples
    --------
    >>> from sklearn_dpfair.privacy._mechanism import check_mechanism_numbers
    >>> check_mechanism_numbers(1.0, float("nan"), name="clip_norm")
    Traceback (most recent call last):
    ...
    ValueError: noise_multiplier must be a number in [0, inf], got nan.
    """
    _check_number(noise_multiplier, "noise_multiplier")
    if sensitivity is None and noise_multiplier == 0:
        return
    _check_number(sensitivity, name)


def _check_number(value, name):
    # public_float names the parameter for a bool, a non-number and an int
    # beyond the largest float; NaN fails the comparison. A 0-d array is
    # read as the number it holds, as the mechanisms' arithmetic reads it.
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    if not public_float(value, name) >= 0:
        raise ValueError(f"{name} must be a number in [0, inf], got {value!r}.")


def check_noise_scale(noise_multiplier, sensitivity, *, noise, hint=""):
    """Raise where a mechanism cannot draw the noise its event accounts for.

    Checks an infinite noise multiplier and a noise scale
    (``noise_multiplier * sensitivity``) below :data:`MIN_NOISE_SCALE`;
    the mechanisms check the scale's overflow themselves. No noise
    (``noise_multiplier == 0``), a sensitivity of 0 (a release that does
    not depend on any record) and an infinite sensitivity are left to the
    mechanism.

    Parameters
    ----------
    noise_multiplier : float
        The noise in units of the sensitivity.
    sensitivity : float
        The sensitivity (the estimators' ``clip_norm``).
    noise : str
        What the scale is called in the messages ("noise standard
        deviation", "Laplace noise scale").
    hint : str, default=""
        Appended to the message for an infinite noise multiplier.

    Raises
    ------
    ValueError
        Naming ``noise_multiplier`` (infinite, or the smaller factor of a
        scale below the least) or ``clip_norm``.

    Examples
    --------
    >>> from sklearn_dpfair.privacy._mechanism import check_noise_scale
    >>> check_noise_scale(0.4, 5e-324, noise="noise standard deviation")
    Traceback (most recent call last):
    ...
    ValueError: clip_norm is too small: the noise standard deviation, ...
    """
    if not noise_multiplier > 0:
        return
    if math.isinf(noise_multiplier):
        # The accountant reads infinite noise as a release of nothing (a
        # no-op), but no noise of infinite scale can be drawn: every noisy
        # release would be inf or NaN.
        raise ValueError(
            "noise_multiplier is inf: a mechanism cannot draw noise of "
            f"infinite scale (every noisy release would be inf or NaN). "
            f"Use a finite noise multiplier.{hint}"
        )
    if not 0 < sensitivity < math.inf:
        return
    if noise_multiplier * sensitivity < MIN_NOISE_SCALE:
        # Name the factor that is further below 1: the sensitivity for a
        # usual noise multiplier, the multiplier for a usual clip norm.
        name = "clip_norm" if sensitivity <= noise_multiplier else "noise_multiplier"
        raise ValueError(
            f"{name} is too small: the {noise}, the noise multiplier times the "
            f"sensitivity ({noise_multiplier:g} * {sensitivity:g}), is below "
            f"the smallest normal float64 ({MIN_NOISE_SCALE:g}), where the "
            "noise draws are rounded to a grid of subnormal numbers (or to 0, "
            "releasing the data exactly) and are not the noise the release is "
            "accounted for. Use a clip norm of the size of the per-example "
            "terms, and a noise multiplier whose product with it is at least "
            f"{MIN_NOISE_SCALE:g}."
        )


@typing.runtime_checkable
class Mechanism(typing.Protocol):
    """What every mechanism of the privacy core states about itself.

    ``sensitivity`` (in the norm named by ``norm``: ``"l2"`` for the
    Gaussian, ``"l1"`` for the Laplace, ``"linf"`` over the candidates'
    scores for the exponential mechanism), ``noise_multiplier`` (the noise
    in units of the sensitivity) and ``event(sampling_probability=...,
    steps=...)``, the ``DpEvent`` of its releases (a mechanism that is never
    subsampled refuses a rate below 1). Its release method logs every
    release for the run-time check (:mod:`._releases`): ``privatize`` for
    the additive mechanisms, ``select`` for the exponential one. A new
    mechanism is one class with these members, its event in
    :mod:`._accounting`, and its release kind in :mod:`._releases`.
    """

    norm: str

    @property
    def sensitivity(self): ...

    @property
    def noise_multiplier(self): ...

    def event(self, *, sampling_probability=1.0, steps=1): ...


# The audit observer of the current context (None outside audits). A context
# variable, not a module global, so that an audit in one thread never sees
# the fits of another.
_OBSERVER = contextvars.ContextVar("sklearn_dpfair_privatize_observer", default=None)
# The position of the block being privatized while privatize_blocks
# privatizes the blocks of one release (which it logs once); None otherwise.
_BLOCK_POSITION = contextvars.ContextVar("sklearn_dpfair_block_position", default=None)


def block_position():
    """Position of the block being privatized in its stacked release.

    None outside :meth:`GaussianMechanism.privatize_blocks`. An audit
    observer reads it to tell a release's first block (a linear model's
    coefficients, a network's first layer) from later blocks of the same
    shape.
    """
    return _BLOCK_POSITION.get()


@contextlib.contextmanager
def observe_privatize(observer):
    """Let ``observer`` see every :meth:`GaussianMechanism.privatize` call.

    For audits only: inside the ``with`` block each call becomes
    ``noisy = noise(observer.before_noise(mechanism, clipped_sum))`` followed
    by ``observer.after_noise(mechanism, noisy)``.

    Parameters
    ----------
    observer : object
        Has ``before_noise(mechanism, clipped_sum) -> clipped_sum`` and
        ``after_noise(mechanism, noisy_sum) -> None``.

    Yields
    ------
    observer : object
        The same observer.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.privacy._mechanism import (
    ...     GaussianMechanism, observe_privatize)
    >>> class Count:
    ...     calls = 0
    ...     def before_noise(self, mechanism, clipped_sum):
    ...         return clipped_sum
    ...     def after_noise(self, mechanism, noisy_sum):
    ...         self.calls += 1
    >>> mech = GaussianMechanism(clip_norm=1.0, noise_multiplier=1.0)
    >>> with observe_privatize(Count()) as seen:
    ...     _ = mech.privatize(np.zeros(2), np.random.default_rng(0))
    >>> seen.calls
    1
    """
    token = _OBSERVER.set(observer)
    try:
        yield observer
    finally:
        _OBSERVER.reset(token)


@dataclass(frozen=True)
class GaussianMechanism:
    """Add ``N(0, (noise_multiplier * clip_norm)^2 I)`` to a sum of clipped terms.

    With ``noise_multiplier == 0`` the mechanism is the identity (no privacy),
    which is how ``epsilon=inf`` runs the same code path as private fits.

    The noise is always drawn on the host, in float64, from the fit's numpy
    generator and then copied to the namespace and device of the sum (numpy,
    or torch on a GPU): one random stream for every backend, seeded from OS
    entropy when the fit is unseeded, never from a device generator.

    Parameters
    ----------
    clip_norm : float or None
        Sensitivity of the sum (per-example clip threshold), a number in
        ``[0, inf]`` (``inf``: no clipping); None only without noise. With
        noise, ``inf`` is taken as a plan's placeholder for a clip norm set
        later (its draws would be infinite, revealing nothing).
    noise_multiplier : float
        Noise standard deviation in units of ``clip_norm``, finite and
        non-negative.

    Raises
    ------
    TypeError
        If ``clip_norm`` or ``noise_multiplier`` is not a real number (a
        bool; ``clip_norm=None`` is taken without noise only).
    ValueError
        If either is NaN, negative or an int beyond the largest float. With
        noise (``noise_multiplier > 0``): for an infinite
        ``noise_multiplier``, or a finite positive ``clip_norm`` whose noise
        standard deviation overflows float64 or is below the smallest
        normal float64 (:data:`MIN_NOISE_SCALE`, where the draws are
        quantized).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.privacy import GaussianMechanism
    >>> mech = GaussianMechanism(clip_norm=1.0, noise_multiplier=0.0)
    >>> mech.privatize(np.ones(3), np.random.default_rng(0))
    array([1., 1., 1.])
    """

    clip_norm: float
    noise_multiplier: float
    #: The norm the sensitivity is measured in.
    norm = "l2"

    def __post_init__(self):
        # Python floats: a numpy float32 clip norm (a user's parameter) kept
        # the noise's scale, and the sums it noises, in float32.
        store_python_floats(self, ("clip_norm", "noise_multiplier"))
        check_mechanism_numbers(
            self.clip_norm, self.noise_multiplier, name="clip_norm"
        )
        check_noise_scale(
            self.noise_multiplier, self.clip_norm, noise="noise standard deviation"
        )
        # A finite clip norm times the multiplier can still overflow float64:
        # every noisy sum would then be inf or NaN, a model of NaNs.
        if (
            self.noise_multiplier > 0
            and math.isfinite(self.clip_norm)
            and not math.isfinite(self.noise_std)
        ):
            # Name the factor that is further above 1: the clip norm for a
            # usual noise multiplier, the multiplier for a usual clip norm.
            name = (
                "clip_norm"
                if self.clip_norm >= self.noise_multiplier
                else "noise_multiplier"
            )
            raise ValueError(
                f"{name} is too large: the noise standard deviation, the "
                f"noise multiplier times the sensitivity ({self.noise_multiplier:g}"
                f" * {self.clip_norm:g}), overflows float64. Use a clip norm of "
                "the size of the per-example terms, and a noise multiplier "
                "whose product with it is finite."
            )

    @property
    def sensitivity(self):
        """The l2 sensitivity of the released sum (``clip_norm``)."""
        return self.clip_norm

    @property
    def noise_std(self):
        """Standard deviation of each noise coordinate."""
        return self.noise_multiplier * self.clip_norm

    def privatize(self, clipped_sum, rng):
        """Return ``clipped_sum`` plus Gaussian noise drawn from ``rng``.

        Parameters
        ----------
        clipped_sum : array
            Sum of per-example terms, each of norm at most ``clip_norm``;
            numpy or any array-API array (e.g. a torch tensor on a GPU).
        rng : numpy.random.Generator
            Source of the noise.

        Returns
        -------
        noisy_sum : array
            Same shape, namespace and device as ``clipped_sum``; float64
            (float32 sums are promoted by the float64 noise).
        """
        if _BLOCK_POSITION.get() is None:
            self._log()
        observer = _OBSERVER.get()
        if observer is not None:
            # White-box audit only (observe_privatize): never set in a fit.
            noisy = self._add_noise(observer.before_noise(self, clipped_sum), rng)
            observer.after_noise(self, noisy)
            return noisy
        return self._add_noise(clipped_sum, rng)

    def privatize_blocks(self, blocks, rng):
        """Privatize the blocks of one stacked sum: one release.

        The blocks (for example a linear model's coefficient and intercept
        gradients) together form the sum whose sensitivity is ``clip_norm``;
        each gets its own noise, drawn in order (the draws of one Gaussian
        vector of the stacked shape), and the release is logged once.

        Parameters
        ----------
        blocks : sequence of arrays
            The blocks of the stacked sum, each privatized by
            :meth:`privatize` in this order.
        rng : numpy.random.Generator
            Source of the noise.

        Returns
        -------
        noisy_blocks : list of arrays
            The blocks plus their noise, in order.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn_dpfair.privacy import GaussianMechanism
        >>> a, b = GaussianMechanism(1.0, 0.0).privatize_blocks(
        ...     [np.ones(2), np.zeros(1)], np.random.default_rng(0))
        >>> a, b
        (array([1., 1.]), array([0.]))
        """
        self._log()
        noisy = []
        for position, block in enumerate(blocks):
            token = _BLOCK_POSITION.set(position)
            try:
                noisy.append(self.privatize(block, rng))
            finally:
                _BLOCK_POSITION.reset(token)
        return noisy

    def _log(self):
        # A mechanism without noise releases nothing private: its event is
        # non-private, which claims nothing.
        if self.noise_multiplier > 0:
            log_release("gaussian", self.noise_multiplier)

    def event(self, *, sampling_probability=1.0, steps=1):
        """The ``DpEvent`` of ``steps`` releases of this mechanism.

        Each release sums the terms of a Poisson sample of rate
        ``sampling_probability`` (1: every record). A mechanism without noise
        is non-private (epsilon = inf); zero steps read nothing (epsilon = 0).

        Parameters
        ----------
        sampling_probability : float, default=1.0
            Poisson inclusion probability of each record in each release,
            in (0, 1].
        steps : int, default=1
            Number of releases composed, an integer >= 0.

        Returns
        -------
        event : dp_accounting.DpEvent
            Self-composed (Poisson-subsampled) Gaussian events, or the
            non-private / no-op event.

        Raises
        ------
        ValueError
            If ``steps`` or ``sampling_probability`` is out of range
            (:func:`~sklearn_dpfair.privacy._accounting.noisy_sgd_event`).

        Examples
        --------
        >>> from sklearn_dpfair.privacy import GaussianMechanism
        >>> GaussianMechanism(1.0, 2.0).event(steps=3)
        SelfComposedDpEvent(event=GaussianDpEvent(noise_multiplier=2.0), count=3)
        """
        return noisy_sgd_event(self.noise_multiplier, sampling_probability, steps)

    def privatize_symmetric(self, matrix, rng):
        """Return a symmetric ``matrix`` plus symmetric Gaussian noise.

        One noise draw per entry of the upper triangle, mirrored below it
        (the symmetric Gaussian mechanism): ``clip_norm`` bounds the
        Frobenius-norm change of the matrix between neighbours. Host numpy
        only.

        Parameters
        ----------
        matrix : ndarray of shape (d, d)
            Symmetric sum of per-example terms.
        rng : numpy.random.Generator
            Source of the noise.

        Returns
        -------
        noisy : ndarray of shape (d, d)
            Symmetric.

        Examples
        --------
        >>> import numpy as np
        >>> from sklearn_dpfair.privacy import GaussianMechanism
        >>> noisy = GaussianMechanism(1.0, 1.0).privatize_symmetric(
        ...     np.eye(3), np.random.default_rng(0))
        >>> bool(np.allclose(noisy, noisy.T))
        True
        """
        self._log()
        if self.noise_multiplier == 0:
            return matrix
        d = matrix.shape[0]
        noise = np.triu(rng.normal(0.0, self.noise_std, size=(d, d)))
        return matrix + noise + np.triu(noise, 1).T

    def _add_noise(self, clipped_sum, rng):
        if self.noise_multiplier == 0:
            return clipped_sum
        noise = rng.normal(0.0, self.noise_std, size=tuple(clipped_sum.shape))
        return clipped_sum + from_host(noise, clipped_sum)
