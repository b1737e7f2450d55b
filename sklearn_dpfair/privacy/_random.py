# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Random generators for private noise and sampling, and the seed of a fit.

The rule (see the privacy model page of the user guide):

* ``random_state=None`` draws the noise and the batches from a generator
  seeded with fresh operating-system entropy. Only such a fit is a private
  release: nobody, not even the caller, can reproduce its noise.
* Anything else is a *seed*: an int, or a :class:`numpy.random.RandomState`
  or :class:`numpy.random.Generator` instance. The fit reproduces the noise
  the seed determines, so whoever holds the seed (or a copy of the instance)
  knows the noise, and two fits given the same seed draw the *same* noise.
  :func:`sklearn.base.clone` deep-copies instances, so every clone of a
  ``GridSearchCV`` or ``cross_validate`` holds an instance in the same
  state: with a shared seed their noise would cancel between fold models.

  An instance is read, never advanced (fit does not mutate its
  parameters): it acts exactly like the seed given by its current state.
  :func:`noise_seed` fingerprints the initial state of the fit's generator,
  so fits that drew the same noise carry the same fingerprint, whatever
  form the seed took. The privacy record of a seeded fit says that it is
  not a private release, and :class:`~sklearn_dpfair.privacy.PrivacyLedger`
  refuses to compose fits that share a fingerprint (their total is inf).
"""

import copy
import hashlib
import numbers
import secrets

import numpy as np

__all__ = ["check_noise_generator", "noise_seed", "seed_fingerprints", "step_seeds"]

_ACCEPTED = (
    "None (fresh OS entropy: a private release), an int seed, or a numpy "
    "RandomState or Generator instance (read as a seed)"
)


def check_noise_generator(random_state):
    """Turn ``random_state`` into the :class:`numpy.random.Generator` of a fit.

    * ``None``: a fresh generator seeded with 128 bits from the operating
      system's entropy source (:mod:`secrets`), so the noise of a release
      cannot be predicted from anything a user or attacker can see. numpy's
      global state is never used for privacy noise.
    * ``int`` (non-negative): ``numpy.random.default_rng(random_state)``, a
      reproducible generator for tests and experiments.
    * :class:`numpy.random.Generator`: a copy of it; the instance itself is
      never advanced, so it acts as the seed given by its current state.
    * :class:`numpy.random.RandomState`: a generator seeded from a copy of
      it; the instance itself is never advanced either.

    Every form but ``None`` is a seed: the noise is known to whoever knows
    the seed, and fits given the same seed (including clones made by
    :func:`sklearn.base.clone`, which deep-copies instances) draw the same
    noise. Such fits are not private releases; see :func:`noise_seed`.

    Floating-point Gaussian and Laplace samplers have known side channels
    (Mironov 2012); the noise here is not a discrete Gaussian or Laplace. See
    the user guide.

    Parameters
    ----------
    random_state : None, int, numpy.random.RandomState or numpy.random.Generator
        The estimator's ``random_state`` parameter.

    Returns
    -------
    generator : numpy.random.Generator
        Generator for the batches and the noise of one fit, owned by the fit.

    Raises
    ------
    ValueError
        If ``random_state`` is none of the above (a negative int, a bool, a
        float, ...).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.privacy import check_noise_generator
    >>> a = check_noise_generator(0).normal(size=2)
    >>> b = check_noise_generator(0).normal(size=2)
    >>> bool((a == b).all())
    True

    An instance is read as a seed and left untouched:

    >>> gen = np.random.default_rng(1)
    >>> c = check_noise_generator(gen).normal(size=2)
    >>> d = check_noise_generator(gen).normal(size=2)
    >>> bool((c == d).all())
    True
    """
    if random_state is None:
        return np.random.default_rng(secrets.randbits(128))
    if isinstance(random_state, np.random.Generator):
        return copy.deepcopy(random_state)
    if isinstance(random_state, np.random.RandomState):
        seed = copy.deepcopy(random_state).randint(0, 2**31 - 1, size=4)
        return np.random.default_rng(seed)
    if (
        isinstance(random_state, numbers.Integral)
        and not isinstance(random_state, bool)
        and random_state >= 0
    ):
        return np.random.default_rng(int(random_state))
    raise ValueError(f"random_state must be {_ACCEPTED}; got {random_state!r}.")


def noise_seed(random_state):
    """Fingerprint of the noise a seeded fit draws; None for OS entropy.

    Two fits get the same fingerprint exactly when their generators start in
    the same state, i.e. draw the same batches and noise: the same int,
    copies of one instance (such as the clones made by
    :func:`sklearn.base.clone`), or an int and a ``default_rng`` of it. The
    fingerprint is an unkeyed hash: a small int seed is recovered from it by
    trying every int, so a seeded record is no private release (which it
    never is: whoever knows the seed knows the noise).

    Parameters
    ----------
    random_state : None, int, numpy.random.RandomState or numpy.random.Generator
        The estimator's ``random_state`` parameter (see
        :func:`check_noise_generator`).

    Returns
    -------
    seed : str or None
        A hex digest for a seeded fit, None for ``random_state=None``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.base import clone
    >>> from sklearn_dpfair import DPLogisticRegression
    >>> from sklearn_dpfair.privacy._random import noise_seed
    >>> noise_seed(None) is None
    True
    >>> noise_seed(0) == noise_seed(np.random.default_rng(0))
    True
    >>> clf = DPLogisticRegression(random_state=np.random.RandomState())
    >>> noise_seed(clone(clf).random_state) == noise_seed(clf.random_state)
    True
    """
    if random_state is None:
        return None
    state = check_noise_generator(random_state).bit_generator.state
    digest = hashlib.sha256()
    _feed(digest, state)
    return digest.hexdigest()[:32]


def step_seeds(seeds):
    """One seed text for the seeded parts of a composed fit, or None.

    ``seeds`` maps each part (a pipeline step's path) to its fingerprint
    (:func:`noise_seed`); :func:`seed_fingerprints` reads them back.

    Examples
    --------
    >>> from sklearn_dpfair.privacy._random import seed_fingerprints, step_seeds
    >>> text = step_seeds({"scaler": "ab12", "model": "cd34"})
    >>> text, seed_fingerprints(text), step_seeds({})
    ('scaler=ab12; model=cd34', ['ab12', 'cd34'], None)
    """
    return "; ".join(f"{part}={seed}" for part, seed in seeds.items()) or None


def seed_fingerprints(seed):
    """The fingerprints in a record's seed: one, or those of :func:`step_seeds`."""
    return [part.rpartition("=")[2] for part in str(seed).split("; ")]


def _feed(digest, obj):
    """Hash a bit generator's state (nested dicts of ints, strs and arrays)."""
    if isinstance(obj, dict):
        digest.update(b"{")
        for key in sorted(obj, key=str):
            digest.update(repr(key).encode())
            _feed(digest, obj[key])
        digest.update(b"}")
    elif isinstance(obj, np.ndarray):
        digest.update(f"{obj.dtype.str}{obj.shape}".encode())
        digest.update(np.ascontiguousarray(obj).tobytes())
    else:
        digest.update(repr(obj).encode())
