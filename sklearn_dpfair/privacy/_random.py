# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Random generators for private noise and sampling."""

import numbers
import secrets

import numpy as np

__all__ = ["check_noise_generator"]


def check_noise_generator(random_state):
    """Turn ``random_state`` into the :class:`numpy.random.Generator` of a fit.

    * ``None``: a fresh generator seeded with 128 bits from the operating
      system's entropy source (:mod:`secrets`), so the noise of a release
      cannot be predicted from anything a user or attacker can see. numpy's
      global state is never used for privacy noise.
    * ``int``: a reproducible generator, for tests and experiments. A known
      seed makes the noise known, so a seeded fit is not a private release.
    * :class:`numpy.random.Generator`: used as is.
    * :class:`numpy.random.RandomState`: a generator seeded from it, so that
      scikit-learn's ``set_random_state`` conventions stay reproducible.

    Floating-point Gaussian samplers have known side channels (Mironov 2012);
    the noise here is not a discrete Gaussian. See the user guide.

    Parameters
    ----------
    random_state : None, int, numpy.random.Generator or numpy.random.RandomState
        The estimator's ``random_state`` parameter.

    Returns
    -------
    generator : numpy.random.Generator
        Generator for the batches and the noise of one fit.

    Examples
    --------
    >>> from sklearn_dpfair.privacy import check_noise_generator
    >>> a = check_noise_generator(0).normal(size=2)
    >>> b = check_noise_generator(0).normal(size=2)
    >>> bool((a == b).all())
    True
    """
    if random_state is None:
        return np.random.default_rng(secrets.randbits(128))
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(0, 2**31 - 1, size=4))
    if isinstance(random_state, numbers.Integral) and not isinstance(
        random_state, bool
    ):
        return np.random.default_rng(int(random_state))
    raise ValueError(
        "random_state must be None, an int, a numpy Generator or RandomState; "
        f"got {random_state!r}."
    )
