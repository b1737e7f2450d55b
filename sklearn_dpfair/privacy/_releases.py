# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""What runs is what is accounted: a fit's releases, checked against its event.

A fit is planned before it reads the data (its mechanisms, their noise and
how many times each is used) and accounted from that plan: the ``DpEvent``
its record holds. A bug that runs one release more than planned (a loop
bound read from the data, a search that gives every candidate a step) would
release more than the record says, silently. So every release a mechanism of
this package makes is logged in the context of the fit that made it
(:func:`logged_releases`), and before a fit returns, the log is compared with
the releases its ``dp_event`` describes (:func:`check_releases`): the same
number of releases of each kind and noise level. A mismatch raises
:class:`~sklearn_dpfair.exceptions.PrivacyAccountingError` and the fit
releases nothing.

What a release is, by kind:

* ``("gaussian", z)``: one Gaussian release of noise multiplier ``z``
  (``GaussianDpEvent(z)``, Poisson-subsampled or not): one noisy sum, or one
  stacked sum privatized block by block
  (:meth:`~sklearn_dpfair.privacy.GaussianMechanism.privatize_blocks`);
* ``("zcdp", rho)``: one release accounted by its zCDP guarantee
  (``ZCDpEvent(rho)``; an exponential-mechanism selection is
  ``epsilon0^2 / 8``-zCDP);
* ``("epsilon", eps)``: one pure ``eps``-DP local randomizer's message
  (``RandomizedResponseDpEvent`` over 2 buckets, the pair that dominates
  every ``eps``-DP mechanism: :func:`pure_epsilon_of`). Pure and zCDP
  losses are not converted into each other: they are matched by kind.

A ``NonPrivateDpEvent`` (``epsilon = inf``) claims nothing, so it is matched
by any releases; a ``NoOpDpEvent`` by none; private selection's
``RepeatAndSelectDpEvent`` runs a random number of fits, each checked by its
own ``fit``. The Poisson sampling rate and the sensitivity of each release
are not in the log: they are fixed by the mechanism objects and the schedule
the plan built, which the same fit uses (the neighbouring-dataset tests
check the sums against the sensitivities).

Releases are compared by their privacy loss per record: a Gaussian release
of noise multiplier ``z`` is the ``1 / (2 z^2)``-zCDP release its
``GaussianDpEvent`` or ``ZCDpEvent`` accounts (Bun and Steinke, 2016,
Proposition 1.6), so a fit may account a Gaussian sum as a zCDP part. The
converse does not hold: a ``("zcdp", rho)`` release (an exponential-mechanism
selection) matches only an accounted ``ZCDpEvent``, never a
``GaussianDpEvent`` of the same ``rho``, whose privacy-loss distribution the
accountant uses and which such a release need not be dominated by.
Releases on disjoint rows compose in parallel (one record is in one part):
:func:`parallel_parts` logs each part on its own and hands the enclosing log
only its worst part, as the accounting does. A federated fit's ISRL-DP
record is per silo: each silo checks its own releases against its own record
(:class:`~sklearn_dpfair.federated.SiloWorker`), and the estimator's fit, which
sees no silo's releases, says so with :func:`mark_unchecked`.
"""

import collections
import contextlib
import contextvars
import math

import dp_accounting
from dp_accounting.dp_event import RepeatAndSelectDpEvent

from ..exceptions import PrivacyAccountingError
from ._random_allocation import RandomAllocationDpEvent

__all__ = [
    "ReleaseLog",
    "check_releases",
    "expected_releases",
    "forgo_release",
    "joint_release",
    "log_release",
    "logged_releases",
    "mark_unchecked",
    "parallel_parts",
    "pure_epsilon_of",
]

_LOG = contextvars.ContextVar("sklearn_dpfair_release_log", default=None)


class ReleaseLog:
    """The releases made in one fit's context: ``(kind, level) -> count``."""

    def __init__(self):
        self.counts = collections.Counter()
        self.unchecked = None  # why the check does not apply, if it does not

    def add(self, kind, level, count=1):
        self.counts[(kind, float(level))] += count


def log_release(kind, level):
    """Note one release in the current fit's log (no-op outside a fit).

    Parameters
    ----------
    kind : {"gaussian", "zcdp", "laplace", "epsilon"}
        What the release is accounted as.
    level : float
        Its noise multiplier (``"gaussian"``, ``"laplace"``), zCDP ``rho``
        (``"zcdp"``) or pure epsilon (``"epsilon"``: a local randomizer's
        message).
    """
    log = _LOG.get()
    if log is not None:
        log.add(kind, level)


def forgo_release(kind, level):
    """Note a planned release that the fit decided not to make.

    A fit may skip a release after an earlier one (a quantile whose grid a
    noisy histogram could not place): a decision that depends on the data
    through released values only, so the plan, and with it the record, must
    still account the release (the record is the same on neighbouring
    datasets). The log then counts it as made, and the fit is checked
    exactly.

    Parameters
    ----------
    kind, level
        As in :func:`log_release`; ``inf`` (no privacy) notes nothing.
    """
    if not math.isinf(level):
        log_release(kind, level)


def mark_unchecked(reason):
    """Say that the current fit's releases cannot be checked against its event.

    For the solver families whose events the log cannot yet match (see the
    module docstring); the reason is kept on the log.

    Parameters
    ----------
    reason : str
    """
    log = _LOG.get()
    if log is not None:
        log.unchecked = reason


def _loss(kind, level):
    """Privacy loss of one release, in its kind's unit (:func:`_unit`).

    Increasing in the privacy lost, whatever the kind: the zCDP ``rho`` of
    a Gaussian (``1 / (2 z^2)``) or zCDP release, the pure epsilon of a
    Laplace release (``1 / b`` for noise scale ``b`` in units of the
    sensitivity: the noisier, the smaller) or of a local randomizer's
    message. ``inf`` for a noiseless release.
    """
    if kind == "gaussian":
        return math.inf if level == 0 else 0.5 / level**2
    if kind == "laplace":
        return math.inf if level == 0 else 1.0 / level
    return level


def _unit(kind):
    """The unit in which :func:`_loss` measures a release of ``kind``.

    Gaussian and zCDP releases are both measured by their rho; a Laplace
    release's epsilon (add/remove, central) and a local randomizer's
    (replace-one, per message) are pure epsilons of different relations and
    are not converted into rho or into each other.
    """
    return "rho" if kind in ("gaussian", "zcdp") else f"{kind} epsilon"


def _canonical(counts):
    # Keyed by kind and rho to 12 significant digits: a fit's zCDP parts and
    # the noise multipliers its mechanisms use are computed along different
    # float paths from the same budget. Pure-epsilon releases keep their
    # own key (no conversion to zCDP is exact).
    out = collections.Counter()
    for (kind, level), n in counts.items():
        # Laplace releases and local randomizers' messages are keyed by
        # their pure epsilon, Gaussian and zCDP ones by their rho.
        out[(kind, float(f"{_loss(kind, level):.12g}"))] += n
    return out


def _matches(ran, accounted, *, at_most):
    """Whether the canonical releases ``ran`` are those ``accounted``.

    A Gaussian release of zCDP loss ``rho`` may stand for an accounted
    ``ZCDpEvent(rho)`` (the Gaussian mechanism is exactly that zCDP; Bun and
    Steinke, 2016, Proposition 1.6), but not the other way round: an
    accounted ``GaussianDpEvent`` is converted through the Gaussian's own
    privacy-loss distribution, which no other ``rho``-zCDP mechanism (an
    exponential-mechanism selection) need be dominated by.
    """

    def within(n_ran, n_accounted):
        return n_ran == n_accounted or (at_most and n_ran < n_accounted)

    # A Gaussian's count is taken with the zCDP releases of its rho.
    keys = {
        ("zcdp", level) if kind == "gaussian" else (kind, level)
        for kind, level in set(ran) | set(accounted)
    }
    for key in keys:
        if key[0] != "zcdp":
            if not within(ran[key], accounted[key]):
                return False
            continue
        # The rho-zCDP slots, which Gaussians of that rho may also fill.
        gaussian = ("gaussian", key[1])
        if ran[key] > accounted[key] or not within(
            ran[key] + ran[gaussian], accounted[key] + accounted[gaussian]
        ):
            return False
    return True


def pure_epsilon_of(event):
    """Pure epsilon of a ``RandomizedResponseDpEvent``: ``log(1 + k (1 - p) / p)``.

    Randomized response over ``k`` buckets with noise parameter ``p`` keeps
    the input with probability ``1 - p + p / k`` and outputs any other
    bucket with probability ``p / k``: the ratio of the two is its
    epsilon under replace-one. With ``k = 2`` it is the pair that dominates
    every ``epsilon``-DP mechanism (Kairouz, Oh and Viswanath, 2015,
    Theorem 2.2), so a local randomizer that is ``epsilon``-DP is accounted
    as this event and logged as ``("epsilon", pure_epsilon_of(event))``.

    Examples
    --------
    >>> import math
    >>> import dp_accounting
    >>> from sklearn_dpfair.privacy._releases import pure_epsilon_of
    >>> event = dp_accounting.RandomizedResponseDpEvent(2 / (1 + math.e), 2)
    >>> round(pure_epsilon_of(event), 12)
    1.0
    """
    p, k = float(event.noise_parameter), int(event.num_buckets)
    return math.log1p(k * (1.0 - p) / p)


class _Parts:
    """The parts of :func:`parallel_parts`, each with its own log, by key."""

    def __init__(self):
        self.logs = {}

    @contextlib.contextmanager
    def part(self, key):
        """Log the releases of the ``with`` block into part ``key``."""
        log = self.logs.setdefault(key, ReleaseLog())
        with logged_releases(log, propagate=False):
            yield log

    def worst(self, accounted=None):
        """The part a record fares worst in: ``accounted``'s, or the largest.

        Parts whose losses tie up to rounding (localization's phases are all
        ``rho``-zCDP by construction) are equally the worst; the fit names
        the one its event describes, which no part may exceed.
        """
        units = {_unit(kind) for log in self.logs.values() for kind, _ in log.counts}
        if len(units) > 1:
            # A rho and an epsilon (or two epsilons of different relations)
            # cannot be ranked: summing them would pick a part at random.
            raise PrivacyAccountingError(
                "The parts of a parallel composition released losses of "
                f"different kinds ({', '.join(sorted(units))}), which cannot "
                "be ranked to find the worst part; nothing is released. This "
                "is a bug in sklearn_dpfair: please report it."
            )
        totals = {
            key: math.fsum(_loss(*k) * n for k, n in log.counts.items())
            for key, log in self.logs.items()
        }
        if not totals:
            return ReleaseLog()
        if accounted is None:
            return self.logs[max(totals, key=totals.get)]
        worst = totals.get(accounted, 0.0)
        if any(loss > worst * (1 + 1e-9) for loss in totals.values()):
            raise PrivacyAccountingError(
                f"Part {accounted!r} of a parallel composition is accounted, "
                "but another part lost more; nothing is released. This is a "
                "bug in sklearn_dpfair: please report it."
            )
        return self.logs.get(accounted, ReleaseLog())


@contextlib.contextmanager
def joint_release(accounted=None):
    """Gaussian noise on the blocks of one jointly accounted sum: one release.

    Mechanisms with their own clips and noise multipliers ``z_k`` privatize
    the blocks of one sum (DP-FERMI's primal gradients and rescaled dual cell sums);
    the pair is the Gaussian mechanism of noise multiplier
    ``(sum_k z_k^-2)^(-1/2)`` on the stacked sum of sensitivity 1 in units
    of each block's clip, as the fit accounts it. The ``with`` block's
    releases reach the enclosing log as that one release. The same holds for
    Gaussian releases made one after another, each possibly chosen from the
    previous ones (full-batch noisy gradient descent): they compose to the
    Gaussian of multiplier ``(sum_t z_t^-2)^(-1/2)`` exactly (Gaussian DP
    composition, Dong, Roth and Su 2022, Corollary 3.3).

    Parameters
    ----------
    accounted : float or None, default=None
        The joint noise multiplier the fit accounts for this release, when
        it is fixed in advance: the blocks released must then lose no more
        than it (a step that skips a block releases less), and the release
        is logged at that level. None: the level the blocks compose to.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.privacy import GaussianMechanism
    >>> from sklearn_dpfair.privacy._releases import joint_release, logged_releases
    >>> rng = np.random.default_rng(0)
    >>> with logged_releases() as log:
    ...     with joint_release():
    ...         _ = GaussianMechanism(1.0, 3.0).privatize(np.zeros(2), rng)
    ...         _ = GaussianMechanism(5.0, 4.0).privatize(np.zeros(1), rng)
    >>> dict(log.counts)
    {('gaussian', 2.4): 1}
    """
    with logged_releases(propagate=False) as parts:
        yield
    precision = sum(n / level**2 for (kind, level), n in parts.counts.items())
    if any(kind != "gaussian" for kind, _ in parts.counts):
        raise PrivacyAccountingError(
            "A joint release composes Gaussian blocks only; this is a bug in "
            "sklearn_dpfair."
        )
    if accounted is not None and accounted > 0:
        if precision > accounted**-2 * (1 + 1e-9):
            raise PrivacyAccountingError(
                "A joint release lost more than its accounted noise multiplier "
                f"{accounted:.6g}; nothing is released. This is a bug in "
                "sklearn_dpfair: please report it."
            )
        log_release("gaussian", accounted)
    elif precision > 0:
        log_release("gaussian", float(f"{precision ** -0.5:.15g}"))


@contextlib.contextmanager
def parallel_parts(accounted=None):
    """Releases on disjoint sets of rows: parallel composition.

    Each part (``parts.part(key)``, a ``with`` block; the same key may be
    entered many times) is logged on its own. A record takes part in one
    part only, so when the block ends the enclosing log receives the worst
    part's releases, as the fit's event accounts (McSherry, 2009, Theorem 4).

    Parameters
    ----------
    accounted : hashable or None, default=None
        The key of the part the fit's event describes, when parts may tie;
        it must lose at least as much as every other part. None: the part
        with the largest loss.

    Yields
    ------
    parts : object
        With a ``part(key)`` context manager.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.privacy import GaussianMechanism
    >>> from sklearn_dpfair.privacy._releases import logged_releases, parallel_parts
    >>> mechanism, rng = GaussianMechanism(1.0, 2.0), np.random.default_rng(0)
    >>> with logged_releases() as log:
    ...     with parallel_parts() as parts:
    ...         for batch in range(3):
    ...             with parts.part(batch):
    ...                 _ = mechanism.privatize(np.zeros(2), rng)
    >>> dict(log.counts)
    {('gaussian', 2.0): 1}
    """
    parts = _Parts()
    yield parts
    parent = _LOG.get()
    if parent is not None:
        parent.counts.update(parts.worst(accounted).counts)


@contextlib.contextmanager
def logged_releases(log=None, *, propagate=True):
    """Log the releases made inside the ``with`` block.

    Nested blocks (a fit inside a search's fit) log their own releases and
    pass them on to the enclosing log when they end, so that the outer fit
    is checked against everything it ran.

    Parameters
    ----------
    log : ReleaseLog or None, default=None
        The log to add to (a silo keeps one across its rounds); None starts
        a new one.
    propagate : bool, default=True
        Whether the enclosing log receives these releases when the block
        ends (False for releases accounted elsewhere: a silo's own record,
        a part of :func:`parallel_parts`).

    Yields
    ------
    log : ReleaseLog

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.privacy import GaussianMechanism
    >>> from sklearn_dpfair.privacy._releases import logged_releases
    >>> with logged_releases() as log:
    ...     _ = GaussianMechanism(1.0, 2.0).privatize(np.zeros(3), np.random.default_rng(0))
    >>> dict(log.counts)
    {('gaussian', 2.0): 1}
    """
    parent = _LOG.get()
    log = ReleaseLog() if log is None else log
    token = _LOG.set(log)
    try:
        yield log
    finally:
        _LOG.reset(token)
        if parent is not None and propagate:
            parent.counts.update(log.counts)
            if log.unchecked is not None:
                parent.unchecked = log.unchecked


def expected_releases(event):
    """The releases ``event`` describes, or None when it claims nothing.

    Parameters
    ----------
    event : dp_accounting.DpEvent

    Returns
    -------
    counts : collections.Counter or None
        ``(kind, level) -> count``; None for an event that fixes no count:
        one containing a ``NonPrivateDpEvent`` (it claims nothing) or a
        ``RepeatAndSelectDpEvent`` (a random number of runs).

    Raises
    ------
    PrivacyAccountingError
        For an event kind this check does not know.

    Examples
    --------
    >>> from sklearn_dpfair.privacy import GaussianMechanism
    >>> from sklearn_dpfair.privacy._releases import expected_releases
    >>> dict(expected_releases(
    ...     GaussianMechanism(1.0, 2.0).event(sampling_probability=0.1, steps=3)))
    {('gaussian', 2.0): 3}
    """
    if isinstance(event, dp_accounting.NonPrivateDpEvent):
        return None
    if isinstance(event, RepeatAndSelectDpEvent):
        # Private selection repeats its runs a random number of times
        # (Papernot and Steinke, 2022): no count to match. Each run is a
        # fit of its own, checked against its own event when it returns.
        return None
    if isinstance(event, dp_accounting.NoOpDpEvent):
        return collections.Counter()
    if isinstance(event, dp_accounting.GaussianDpEvent):
        return collections.Counter({("gaussian", float(event.noise_multiplier)): 1})
    if isinstance(event, dp_accounting.ZCDpEvent):
        return collections.Counter({("zcdp", float(event.rho)): 1})
    if isinstance(event, dp_accounting.LaplaceDpEvent):
        return collections.Counter({("laplace", float(event.noise_multiplier)): 1})
    if isinstance(event, dp_accounting.RandomizedResponseDpEvent):
        return collections.Counter({("epsilon", pure_epsilon_of(event)): 1})
    if isinstance(event, RandomAllocationDpEvent):
        return collections.Counter(
            {("gaussian", float(event.noise_multiplier)): event.n_releases}
        )
    if isinstance(event, dp_accounting.PoissonSampledDpEvent):
        return expected_releases(event.event)
    if isinstance(event, dp_accounting.SelfComposedDpEvent):
        inner = expected_releases(event.event)
        if inner is None:
            return None
        return collections.Counter({k: v * event.count for k, v in inner.items()})
    if isinstance(event, dp_accounting.ComposedDpEvent):
        total = collections.Counter()
        for part in event.events:
            inner = expected_releases(part)
            if inner is None:
                return None
            total.update(inner)
        return total
    raise PrivacyAccountingError(
        f"No release check knows the event {type(event).__name__}; this is a "
        "bug in sklearn_dpfair."
    )


def check_releases(log, event, *, what, at_most=False):
    """Raise unless the releases in ``log`` are exactly those of ``event``.

    Parameters
    ----------
    log : ReleaseLog
        What the fit ran (:func:`logged_releases`).
    event : dp_accounting.DpEvent
        What the fit's record accounts.
    what : str
        The fit, for the message.
    at_most : bool, default=False
        Accept fewer releases than accounted (a silo that answered fewer
        rounds than its record covers); never more.

    Raises
    ------
    PrivacyAccountingError
        When a release of some kind and noise level ran more or fewer times
        than accounted.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.privacy import GaussianMechanism
    >>> from sklearn_dpfair.privacy._releases import check_releases, logged_releases
    >>> mechanism = GaussianMechanism(1.0, 2.0)
    >>> with logged_releases() as log:
    ...     for _ in range(2):
    ...         _ = mechanism.privatize(np.zeros(3), np.random.default_rng(0))
    >>> check_releases(log, mechanism.event(steps=2), what="example")
    >>> check_releases(log, mechanism.event(steps=1), what="example")
    Traceback (most recent call last):
    ...
    sklearn_dpfair.exceptions.PrivacyAccountingError: example ran releases ...
    """
    if log.unchecked is not None:
        return
    expected = expected_releases(event)
    if expected is None:
        return
    ran, accounted = _canonical(+log.counts), _canonical(+expected)
    if not _matches(ran, accounted, at_most=at_most):
        # Counts and noise levels are public (they are the plan's), so the
        # message may show them.
        raise PrivacyAccountingError(
            f"{what} ran releases {_describe(log.counts)} but its record "
            f"accounts {_describe(expected)}; nothing is released. This is a bug in "
            "sklearn_dpfair: please report it."
        )


def _describe(counts):
    counts = +counts
    if not counts:
        return "none"
    return ", ".join(
        f"{n} x {kind}({level:.6g})" for (kind, level), n in sorted(counts.items())
    )
