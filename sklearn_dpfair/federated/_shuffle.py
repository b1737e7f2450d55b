# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Shuffle-model federated learning: anonymous silo messages, amplified privacy.

Lowy's thesis (§3.2.4, Theorem 38 and its proof, Theorem 135) puts a
trusted shuffler between the silos and the server: each round the shuffler
receives one report per silo, permutes them uniformly and forwards them
without their senders. The privacy that the anonymity buys is accounted
with the numerical amplification-by-shuffling bound of Feldman, McMillan
and Talwar (2021; :mod:`._amplification`), which is a statement about
*identical* pure local randomizers, one report per user. The protocol is
therefore the thesis's shuffled Noisy MB-SGD with ``K = 1`` record per
silo per round (Theorem 135's ``samp_{1,n}``):

* every silo draws ONE of its records uniformly, clips its per-example
  gradient to L1 norm ``C`` and adds i.i.d. Laplace noise of scale
  ``2 C / eps0`` to every coordinate: the same ``eps0``-DP randomizer of a
  single record in every silo (replace-one; the Laplace mechanism is pure,
  which the numerical bound needs; the thesis's Gaussian noise is only
  approximately DP and is not covered by it), so the report is an
  ``eps0``-LDP randomizer of the silo's whole data set (a uniform mixture
  of ``eps0``-DP randomizers of one record);
* the reports are shuffled; the server averages them with equal weights (it
  cannot weigh what it cannot attribute) and steps.

Two guarantees are recorded, for a record of any silo (replace-one):

* **ISRL-DP (no trusted party)**: silo ``i``'s transcript composes ``R``
  releases, each ``log(1 + (e^eps0 - 1) / n_i)``-DP (one record of ``n_i``
  sampled); composed with dp-accounting's PLD accountant.
* **Shuffle DP (trusted shuffler)**: the shuffled population is the ``N``
  silo reports of a round (not the records: a silo is one "user" of the
  theorem, so ``N`` silos give the amplification of ``N`` users). A round
  is ``(eps_s, delta_s)``-DP in a silo's whole input by the FMT bound with
  ``n = N``; the changed record is the one sampled with probability
  ``1 / n_i``, which gives ``(log(1 + (e^eps_s - 1) / n_i), delta_s / n_i)``
  per round (FMT 2021, Lemma 2.3, with both divergences bounded by the
  shuffle bound); ``R`` rounds are composed as ``(eps, delta)``-DP
  mechanisms with dp-accounting's privacy loss distribution of the
  worst-case ``(eps, delta)`` pair (optimal composition).

Both hold at once, so with a shuffler the released model is private at the
smaller of the two epsilons.
"""

import dataclasses
import functools
import math
from dataclasses import dataclass, field

import dp_accounting
import numpy as np
from dp_accounting.pld import privacy_loss_distribution as pld_lib

from .._solvers._linear import LinearModel
from .._solvers._schedules import auto_learning_rate, penalty_capped_learning_rate
from ..exceptions import PrivacyBudgetError
from ..privacy import LaplaceMechanism, PrivacyRecord, check_noise_generator
from ..privacy._accounting import _unrolled
from ..privacy._releases import ReleaseLog, check_releases, logged_releases
from ._amplification import (
    _PLD_DISCRETIZATION,
    compose_epsilon_delta,
    sample_one_epsilon,
    shuffle_epsilon,
)
from ._config import DivergedModelError
from ._silo import SiloMessage, SiloReport
from ._silos import check_silo_delta, per_silo_budget

__all__ = [
    "SHUFFLE_ISRL_MECHANISM",
    "ShuffleRecord",
    "ShuffledSilo",
    "calibrate_local_epsilon",
    "isrl_shuffle_epsilon",
    "local_epsilon_for_shuffle_budget",
    "plan_shuffled",
    "report_mechanism",
    "shuffle_isrl_record",
    "shuffle_record",
    "shuffled_fit_record",
]

SHUFFLE_ISRL_MECHANISM = (
    "ISRL-DP shuffle-ready randomizer (no trusted party): each round a silo "
    "sends the L1-clipped gradient of ONE uniformly drawn record plus Laplace "
    "noise (eps0-DP per record); the event is the worst-case pure-DP pair "
    "(binary randomized response) of each round, after sampling one of n_i"
)
_TRUST_ISRL = "untrusted server, no trusted shuffler (ISRL-DP)"
_TRUST_SHUFFLE = (
    "CONDITIONAL on a trusted shuffler: the server sees each round's silo "
    "reports only as an anonymous, uniformly permuted multiset"
)
# Fractions of the target delta spent on the per-round shuffle deltas; the
# bound is computed for each (public) split and the smallest epsilon kept.
_DELTA_SPLITS = (0.1, 0.25, 0.5, 0.75)


def _pld_replace_one(event, delta):
    """Epsilon of a self-composed randomized-response event (replace-one PLD).

    Built from the PLD objects directly: the ``PLDAccountant`` of the
    installed dp-accounting composes a ``RandomizedResponseDpEvent`` once
    whatever the count of the ``SelfComposedDpEvent`` around it.
    """
    if isinstance(event, dp_accounting.ComposedDpEvent):
        # A record's form (_recorded_rr_event): the same release each round.
        rr, count = event.events[0], len(event.events)
        if any(e != rr for e in event.events):
            raise ValueError("The rounds of a silo's event differ.")
    else:
        rr, count = event.event, event.count
    one = pld_lib.from_randomized_response(
        noise_parameter=rr.noise_parameter,
        num_buckets=rr.num_buckets,
        value_discretization_interval=_PLD_DISCRETIZATION,
    )
    return float(one.self_compose(int(count)).get_epsilon_for_delta(delta))


def _rr_noise_parameter(eps_round):
    """``p = 2 / (1 + e^eps)`` of the randomized response that is ``eps``-DP."""
    return 2.0 / (1.0 + math.exp(eps_round))


def _rr_event(eps_round, rounds):
    """Worst-case event of ``rounds`` pure ``eps_round``-DP releases.

    Binary randomized response with ``p = 2 / (1 + e^eps)`` is exactly
    ``eps``-DP and dominates every ``eps``-DP mechanism (Kairouz, Oh and
    Viswanath, 2015), so its PLD composition bounds the silo's transcript.
    """
    p = _rr_noise_parameter(eps_round)
    return dp_accounting.SelfComposedDpEvent(
        dp_accounting.RandomizedResponseDpEvent(p, 2), int(rounds)
    )


def _recorded_rr_event(eps_round, rounds):
    """The event a record holds: :func:`_rr_event` with its rounds written out.

    dp-accounting 0.6's ``PLDAccountant`` composes a
    ``RandomizedResponseDpEvent`` once whatever the count of the
    ``SelfComposedDpEvent`` around it (12 rounds read as one: epsilon 0.085
    for 1.0), so a record an auditor recomputes with it lists every round.
    """
    return _unrolled(_rr_event(eps_round, rounds))


def isrl_shuffle_epsilon(eps0, n_records, rounds, delta):
    """ISRL-DP epsilon of a silo of ``n_records`` sending ``rounds`` reports.

    Parameters
    ----------
    eps0 : float
        Pure DP parameter of the randomizer of one record.
    n_records : int
        The silo's size (public); one record is drawn per round.
    rounds : int
    delta : float

    Returns
    -------
    eps : float

    Examples
    --------
    >>> from sklearn_dpfair.federated._shuffle import isrl_shuffle_epsilon
    >>> isrl_shuffle_epsilon(2.0, 5000, 400, 1e-6) < isrl_shuffle_epsilon(2.0, 500, 400, 1e-6)
    True
    """
    if math.isinf(eps0):
        return math.inf
    return _pld_replace_one(
        _rr_event(sample_one_epsilon(eps0, n_records), rounds), delta
    )


def calibrate_local_epsilon(sizes, epsilons, deltas, rounds, *, tol=1e-4):
    """The largest common ``eps0`` that keeps every silo within its budget.

    Every silo must use the same randomizer (otherwise shuffling does not
    hide who sent what), so the most constrained silo fixes ``eps0``. A
    pure function of public inputs (sizes, budgets, rounds).

    Parameters
    ----------
    sizes, epsilons, deltas : dict
        Silo id to size, ISRL-DP epsilon and delta.
    rounds : int
    tol : float, default=1e-4
        Relative width of the bisection bracket (the lower end is kept).

    Returns
    -------
    eps0 : float
        ``inf`` when every budget is ``inf``.

    Examples
    --------
    >>> from sklearn_dpfair.federated._shuffle import (
    ...     calibrate_local_epsilon, isrl_shuffle_epsilon)
    >>> eps0 = calibrate_local_epsilon({"a": 800, "b": 2000}, {"a": 1.0, "b": 1.0},
    ...                                {"a": 1e-5, "b": 1e-5}, 100)
    >>> isrl_shuffle_epsilon(eps0, 800, 100, 1e-5) <= 1.0
    True
    """
    # Silos with the same (size, budget) constrain eps0 alike: check once.
    finite = frozenset(
        (int(sizes[s]), float(epsilons[s]), float(deltas[s]))
        for s in sizes
        if math.isfinite(epsilons[s])
    )
    if not finite:
        return math.inf
    return _calibrated_local_epsilon(finite, int(rounds), float(tol))


# A fit plans its eps0 before its first round (the ledger check) and again
# when it runs: public inputs, so the bisection is cached.
@functools.lru_cache(maxsize=64)
def _calibrated_local_epsilon(finite, rounds, tol):
    """:func:`calibrate_local_epsilon` on the set of ``(n, eps, delta)``."""

    def representable(eps0):
        # Below about 1e-16 per round, p = 2 / (1 + e^eps) rounds to 1 and no
        # randomized-response event exists. The PLD's discretization has long
        # made the composed epsilon flat in eps0 there (a floor of the order
        # of the rounds times its interval), so such an eps0 fits no budget
        # that a larger one misses: it counts as not fitting.
        return all(
            _rr_noise_parameter(sample_one_epsilon(eps0, n)) < 1.0
            for n, _, _ in finite
        )

    def fits(eps0):
        return representable(eps0) and all(
            isrl_shuffle_epsilon(eps0, n, rounds, delta) <= eps
            for n, eps, delta in finite
        )

    lo, hi = 0.0, 1.0
    while fits(hi):
        lo, hi = hi, 2.0 * hi
        if hi > 64.0:
            return lo
    while hi - lo > tol * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
        if lo == 0.0 and not representable(hi):
            break  # nothing below hi fits either
    if lo == 0.0:
        raise PrivacyBudgetError(
            "no local epsilon meets the silos' budgets for "
            f"{rounds} rounds; raise silo_epsilon or lower the rounds."
        )
    return lo


def shuffle_isrl_record(eps0, n_records, rounds, delta, *, clip_norm, caveats=()):
    """The ISRL-DP :class:`PrivacyRecord` of one silo of the shuffled protocol.

    Parameters
    ----------
    eps0 : float
    n_records : int
    rounds : int
    delta : float
    clip_norm : float
        L1 clip threshold ``C`` of the per-example gradient.
    caveats : tuple of str, default=()

    Returns
    -------
    record : PrivacyRecord
        Replace-one, PLD accountant; ``epsilon`` recomputable with
        :func:`recompute_isrl_epsilon`. Its ``clip_norm`` is the L1
        sensitivity ``2 C`` of a report and ``noise_multiplier`` the
        Laplace scale in units of it.
    """
    if math.isinf(eps0):
        event = dp_accounting.NonPrivateDpEvent()
    else:
        event = _recorded_rr_event(sample_one_epsilon(eps0, n_records), rounds)
    return PrivacyRecord(
        epsilon=isrl_shuffle_epsilon(eps0, n_records, rounds, delta),
        delta=float(delta),
        adjacency="replace_one",
        accountant="pld",
        dp_event=event,
        mechanism=f"{SHUFFLE_ISRL_MECHANISM} [{_TRUST_ISRL}]",
        # Laplace noise of scale 2C / eps0: multiplier 1 / eps0 of the L1
        # sensitivity 2C of a replaced record's clipped gradient. The record
        # is drawn uniformly, one per round (the mechanism says so): no
        # Poisson rate.
        noise_multiplier=0.0 if math.isinf(eps0) else 1.0 / eps0,
        clip_norm=2.0 * float(clip_norm),
        sampling_probability=None,
        steps=int(rounds),
        caveats=tuple(caveats),
    )


def recompute_isrl_epsilon(record):
    """Epsilon of a :func:`shuffle_isrl_record` from its event (replace-one PLD)."""
    if isinstance(record.dp_event, dp_accounting.NonPrivateDpEvent):
        return math.inf
    return _pld_replace_one(record.dp_event, record.delta)


@dataclass(frozen=True)
class ShuffleRecord:
    """Central guarantee of a shuffled federation, conditional on the shuffler.

    Everything needed to recompute ``epsilon`` (:meth:`recompute_epsilon`):
    the pure local ``eps0`` of each report, the number ``n_silos`` of reports
    shuffled together each round, the smallest silo ``n_min`` (the record
    sampling factor), the per-round guarantee and the composition.

    Parameters
    ----------
    epsilon, delta : float
        The composed guarantee, for a record of any silo (replace-one).
    eps0 : float
        Pure DP parameter of every silo report (in the silo's whole data).
    n_silos : int
        Reports shuffled together per round (the FMT bound's ``n``).
    n_min : int
        Size of the smallest silo.
    rounds : int
    shuffle_delta : float
        Delta of one round's FMT bound (in a silo's whole input).
    shuffle_epsilon : float
        FMT numerical epsilon of one round at ``shuffle_delta``.
    round_epsilon, round_delta : float
        One round, for one record (after sampling one of ``n_min``).
    trust_model : str
    population : str
    composition : str
    adjacency : str
    caveats : tuple of str
    seed : str or None
        Fingerprint of the seed of a seeded fit (not a private release).

    Examples
    --------
    >>> from sklearn_dpfair.federated._shuffle import shuffle_record
    >>> rec = shuffle_record(2.0, n_silos=1000, n_min=500, rounds=50, delta=1e-6)
    >>> abs(rec.recompute_epsilon() - rec.epsilon) < 1e-9
    True
    """

    epsilon: float
    delta: float
    eps0: float
    n_silos: int
    n_min: int
    rounds: int
    shuffle_delta: float
    shuffle_epsilon: float
    round_epsilon: float
    round_delta: float
    trust_model: str = _TRUST_SHUFFLE
    population: str = (
        "the N silo reports of each round (one report per silo, one record "
        "sampled per report); records are not shuffled individually"
    )
    composition: str = (
        "dp-accounting PLD of the worst-case (round_epsilon, round_delta) pair, "
        "self-composed `rounds` times (optimal approximate-DP composition)"
    )
    adjacency: str = "replace_one"
    caveats: tuple = field(default_factory=tuple)
    seed: str | None = None

    def recompute_epsilon(self):
        """Recompute ``epsilon`` from ``eps0``, the counts and the deltas.

        Returns
        -------
        epsilon : float
        """
        eps_s = shuffle_epsilon(self.n_silos, self.eps0, self.shuffle_delta)
        eps_r = sample_one_epsilon(eps_s, self.n_min)
        return compose_epsilon_delta(
            eps_r, self.shuffle_delta / self.n_min, self.rounds, self.delta
        )


def shuffle_record(eps0, *, n_silos, n_min, rounds, delta, caveats=()):
    """The central guarantee of ``rounds`` shuffled rounds of ``n_silos`` reports.

    The per-round shuffle delta is a public fraction of ``delta / rounds``
    (each of a few fixed splits is tried and the smallest epsilon kept:
    every split is a valid guarantee for the same run).

    Parameters
    ----------
    eps0 : float
        Pure DP parameter of each report.
    n_silos : int
    n_min : int
        Smallest silo size.
    rounds : int
    delta : float
        Target delta of the composition.
    caveats : tuple of str, default=()

    Returns
    -------
    record : ShuffleRecord
    """
    best = None
    for split in _DELTA_SPLITS:
        round_delta = split * delta / rounds
        delta_s = min(round_delta * n_min, 0.5)
        if math.isinf(eps0):
            eps_s = math.inf
        else:
            eps_s = shuffle_epsilon(n_silos, eps0, delta_s)
        eps_r = sample_one_epsilon(eps_s, n_min)
        eps = compose_epsilon_delta(eps_r, delta_s / n_min, rounds, delta)
        if best is None or eps < best.epsilon:
            best = ShuffleRecord(
                epsilon=eps,
                delta=float(delta),
                eps0=float(eps0),
                n_silos=int(n_silos),
                n_min=int(n_min),
                rounds=int(rounds),
                shuffle_delta=delta_s,
                shuffle_epsilon=eps_s,
                round_epsilon=eps_r,
                round_delta=delta_s / n_min,
                caveats=tuple(caveats),
            )
    return best


def report_mechanism(clip_norm, eps0):
    """The Laplace mechanism of every report: scale ``2 C / eps0`` per coordinate.

    Replacing the one sampled record moves its L1-clipped gradient by at
    most ``2 C`` in L1, so Laplace noise of scale ``2 C / eps0`` is
    ``eps0``-DP (Dwork and Roth 2014, Theorem 3.6): noise multiplier
    ``1 / eps0`` of the sensitivity ``2 C``. A pure function of public
    inputs, checked before any report is sent.

    Parameters
    ----------
    clip_norm : float
        L1 clip threshold ``C`` of the per-example gradient.
    eps0 : float
        Pure DP parameter of a report (``inf``: no clipping, no noise).

    Returns
    -------
    mechanism : LaplaceMechanism

    Raises
    ------
    ValueError
        If ``eps0`` is finite and ``clip_norm`` is not, or the noise scale
        overflows float64.

    Examples
    --------
    >>> from sklearn_dpfair.federated._shuffle import report_mechanism
    >>> report_mechanism(1.0, 0.5).noise_scale
    4.0
    """
    if math.isinf(eps0):
        # Nothing is clipped or noised; the records say epsilon = inf.
        return LaplaceMechanism(sensitivity=math.inf, noise_multiplier=0.0)
    if not math.isfinite(clip_norm):
        # An unclipped gradient has no sensitivity to scale the noise to.
        raise ValueError(
            "clip_norm must be finite with a finite silo_epsilon: each "
            "report's Laplace noise is scaled to its L1 sensitivity 2 * "
            f"clip_norm; got clip_norm={clip_norm!r}."
        )
    # A finite clip norm can still overflow float64 in 2C or 2C / eps0:
    # LaplaceMechanism refuses it (every report would be inf or NaN).
    return LaplaceMechanism(
        sensitivity=2.0 * float(clip_norm), noise_multiplier=1.0 / eps0
    )


def l1_clipped_outer(row, r, clip_norm):
    """The per-example gradient ``row r^T`` clipped to L1 norm ``clip_norm``.

    Finite and within the bound whatever the record holds: a non-finite raw
    gradient ``r`` (a NaN or infinite label) contributes exactly zero, as
    ``clipped_rows`` makes it on the Gaussian path; otherwise the norm
    ``||row r^T||_1 = ||row||_1 ||r||_1`` is computed on ``row / m`` and
    ``r / m_r`` (``m``, ``m_r`` their largest magnitudes, every entry then
    in ``[-1, 1]``), so a huge finite record overflows nothing and raises
    no warning. The clip factor ``min(1, C / ||row r^T||_1)`` is applied as
    ``min(m m_r, C / s)`` with ``s`` the L1 norm of the scaled outer product.
    With ``clip_norm = inf`` (a non-private silo) the gradient is exact.

    Parameters
    ----------
    row : ndarray of shape (n_features + 1,)
        The record's augmented features (finite).
    r : ndarray of shape (n_outputs,)
        The loss's raw gradient at the record.
    clip_norm : float
        L1 clip threshold ``C`` (``inf``: no clipping).

    Returns
    -------
    gradient : ndarray of shape (n_features + 1, n_outputs)

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.federated._shuffle import l1_clipped_outer
    >>> row = np.array([3.0, 1.0])
    >>> float(np.abs(l1_clipped_outer(row, np.array([1e308]), 1.0)).sum())
    1.0
    >>> l1_clipped_outer(row, np.array([np.nan]), 1.0).ravel().tolist()
    [0.0, 0.0]
    """
    shape = (row.size, r.size)
    if not np.isfinite(r).all():
        return np.zeros(shape)
    if not math.isfinite(clip_norm):
        # No clipping (nothing private is released): the exact gradient,
        # which a huge record may overflow as the Gaussian path's unclipped
        # sum does.
        with np.errstate(over="ignore", invalid="ignore"):
            return np.outer(row, r)
    m, m_r = float(np.max(np.abs(row))), float(np.max(np.abs(r)))
    if m == 0.0 or m_r == 0.0:
        return np.zeros(shape)
    u, v = row / m, r / m_r
    s = float(np.sum(np.abs(u)) * np.sum(np.abs(v)))  # in [1, row.size * r.size]
    # Python floats: m * m_r may round to inf, silently; min() then picks C / s.
    return np.outer(u, v) * min(m * m_r, clip_norm / s)


class ShuffledSilo:
    """A silo of the shuffled protocol: one record, L1 clip, Laplace noise.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    loss : object
        Pointwise loss with ``n_outputs`` and ``raw_gradient``.
    config : FederationConfig
        The public schedule (``clip_norm`` is the L1 clip ``C``; ``rounds``).
    eps0 : float
        Pure DP parameter of the randomizer of one record (``inf``: no
        clipping, no noise).
    record : PrivacyRecord
        The silo's ISRL-DP record (:func:`shuffle_isrl_record`).
    silo_id : object, default=None
    random_state : Generator or None, default=None

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._loss import BinaryLogisticLoss
    >>> from sklearn_dpfair.federated import FederationConfig
    >>> from sklearn_dpfair.federated._shuffle import ShuffledSilo, shuffle_isrl_record
    >>> config = FederationConfig(rounds=5, sampling_probability=1.0, learning_rate=1.0)
    >>> rng = np.random.default_rng(0)
    >>> silo = ShuffledSilo(rng.normal(size=(50, 2)), rng.integers(0, 2, 50),
    ...     loss=BinaryLogisticLoss(), config=config, eps0=1.0,
    ...     record=shuffle_isrl_record(1.0, 50, 5, 1e-5, clip_norm=1.0),
    ...     random_state=0)
    >>> silo.message(np.zeros((3, 1)), 0).gradient.shape
    (3, 1)
    """

    def __init__(
        self, X, y, *, loss, config, eps0, record, silo_id=None, random_state=None
    ):
        X, y = np.asarray(X), np.asarray(y)
        if X.ndim != 2 or y.ndim != 1 or X.shape[0] != y.shape[0] or X.shape[0] < 1:
            raise ValueError(
                f"silo {silo_id!r}: X must be 2-d and y 1-d with as many (>= 1) "
                f"rows; got shapes {X.shape} and {y.shape}."
            )
        if X.dtype.kind not in "fiu" or not np.isfinite(X).all():
            raise ValueError(f"silo {silo_id!r}: X must be finite numbers.")
        planned = (
            dp_accounting.NonPrivateDpEvent()
            if math.isinf(eps0)
            else _recorded_rr_event(sample_one_epsilon(eps0, X.shape[0]), config.rounds)
        )
        if (record.steps, record.dp_event) != (config.rounds, planned):
            raise ValueError(
                f"silo {silo_id!r}: its record was made for another size or schedule."
            )
        self.silo_id = silo_id
        self._X, self._y = X.astype(np.float64, copy=False), y
        self._loss, self._config, self._record = loss, config, record
        self._eps0 = float(eps0)
        # Laplace of scale 2C / eps0 (report_mechanism); refused before any
        # report when C is not finite or the scale overflows.
        self._mechanism = report_mechanism(config.clip_norm, self._eps0)
        self._clip = math.inf if math.isinf(eps0) else float(config.clip_norm)
        # The plan the record accounts: one Laplace release per report.
        self._planned = self._mechanism.event(steps=config.rounds)
        self._releases = ReleaseLog()
        self._model = LinearModel(loss.n_outputs, config.intercept_scaling)
        self._rng = check_noise_generator(random_state)
        self._rounds_used = 0
        self._last_round = -1

    def message(self, model, round_index):
        """One report: the noisy clipped gradient of one uniformly drawn record.

        Parameters
        ----------
        model : array-like of shape (n_features + 1, n_outputs)
        round_index : int

        Returns
        -------
        message : SiloMessage
        """
        if self._rounds_used >= self._config.rounds:
            raise PrivacyBudgetError(
                f"silo {self.silo_id!r} has sent all {self._config.rounds} "
                "reports its budget covers and refuses to answer more."
            )
        if round_index <= self._last_round:
            raise ValueError(
                f"silo {self.silo_id!r}: round {round_index} is not after the "
                f"last round answered ({self._last_round})."
            )
        d, k = self._X.shape[1], self._loss.n_outputs
        w = np.array(model, dtype=np.float64)
        if w.shape != (d + 1, k):
            raise ValueError(
                f"silo {self.silo_id!r}: the model must be an array of shape "
                f"{(d + 1, k)}; got shape {w.shape}."
            )
        if not np.isfinite(w).all():
            # The broadcast model is public: saying it diverged reveals nothing.
            raise DivergedModelError(
                f"silo {self.silo_id!r}: the broadcast model is not finite (the "
                "server's step diverged); lower learning_rate."
            )
        model_ = self._model
        coef, w0 = model_.split(w)
        i = int(self._rng.integers(self._X.shape[0]))
        x = self._X[i : i + 1]
        r = np.asarray(
            self._loss.raw_gradient(
                self._y[i : i + 1], model_.raw_predictions(x, coef, w0)
            ),
            dtype=np.float64,
        )[0]
        row = np.append(x[0], model_.intercept_scaling)
        g = l1_clipped_outer(row, r, self._clip)
        with logged_releases(self._releases, propagate=False):
            g = self._mechanism.privatize(g, self._rng)
        # What runs is what is accounted: never more Laplace releases, or
        # another noise level, than the plan of one per report.
        check_releases(
            self._releases,
            self._planned,
            what=f"silo {self.silo_id!r}",
            at_most=True,
        )
        if not model_.has_intercept:
            g[-1] = 0.0  # post-processing: the intercept row carries no data
        g[:-1] += model_.penalty_gradient(coef, self._config.alpha)
        self._rounds_used += 1
        self._last_round = round_index
        return SiloMessage(self.silo_id, int(round_index), g)

    def report(self):
        """Public metadata of this silo.

        Returns
        -------
        report : SiloReport
        """
        return SiloReport(
            silo_id=self.silo_id,
            n_samples=int(self._X.shape[0]),
            noise_multiplier=self._record.noise_multiplier,
            rounds_used=self._rounds_used,
            privacy_record=self._record,
        )


def shuffle_round(messages, round_index, rng):
    """The trusted shuffler: permute one round's reports and strip senders.

    Parameters
    ----------
    messages : list of SiloMessage
    round_index : int
    rng : numpy.random.Generator
        The shuffler's own randomness.

    Returns
    -------
    anonymous : list of SiloMessage
        The reports in a uniformly random order, each labelled only by its
        slot ``0..N-1`` in that order.
    """
    order = rng.permutation(len(messages))
    return [
        SiloMessage(slot, int(round_index), messages[j].gradient)
        for slot, j in enumerate(order)
    ]


def shuffle_learning_rate(eps0, n_silos, n_total, n_params):
    """``learning_rate="auto"`` for the shuffled protocol, from public inputs.

    The averaged report carries Laplace noise of std ``sqrt(2) 2C / eps0 /
    sqrt(N)`` per coordinate; it is handed to the central DP-SGD rule as the
    noise of a batch of ``N`` records out of ``n_total`` (rate ``N / n``).
    """
    q = min(1.0, n_silos / n_total)
    if math.isinf(eps0):
        return auto_learning_rate(0.0, q, n_total, n_params)
    aggregate = math.sqrt(2.0) * 2.0 / eps0 / math.sqrt(n_silos)
    return auto_learning_rate(aggregate * q * n_total, q, n_total, n_params)


def plan_shuffled(sizes, silo_epsilon, silo_delta, config):
    """The public set-up of a shuffled federation, before any report.

    Checks every silo's delta against its size, calibrates the common
    local ``eps0`` (:func:`calibrate_local_epsilon`) and checks the clip
    norm against it (:func:`report_mechanism`). A pure function of public
    inputs.

    Parameters
    ----------
    sizes : dict
        Silo id to its number of records (public metadata).
    silo_epsilon, silo_delta : float or Mapping
        Budget of every silo, or silo id to budget (extra keys ignored).
    config : FederationConfig
        The public schedule.

    Returns
    -------
    eps0 : float
        Pure DP parameter of every report (``inf``: no noise).
    deltas : dict
        Silo id to its delta, in the order of ``sizes``.
    """
    ids = list(sizes)
    epsilons = per_silo_budget(silo_epsilon, ids, name="silo_epsilon", kind="epsilon")
    deltas = per_silo_budget(silo_delta, ids, name="silo_delta", kind="delta")
    # Every silo runs the same randomizer: all are noised (and their records
    # hold at their deltas) unless every budget is inf, when none releases
    # anything private.
    noised = any(math.isfinite(e) for e in epsilons.values())
    for sid in ids:
        if sizes[sid] < 1:
            raise ValueError(
                f"silo {sid!r} has {sizes[sid]} rows, too few for shuffle=True: "
                "each round it reports the gradient of one of its records. "
                "Merge the silo with another."
            )
        check_silo_delta(sid, sizes[sid], deltas[sid], private=noised)
    eps0 = calibrate_local_epsilon(sizes, epsilons, deltas, config.rounds)
    # Public checks of the clip norm against eps0, before any report.
    report_mechanism(config.clip_norm, eps0)
    return eps0, deltas


def shuffled_fit_record(eps0, sizes, deltas, config, caveats=()):
    """The ISRL-DP record of a shuffled fit: the worst silo at the largest delta.

    Public inputs only (those :func:`plan_shuffled` resolves), so a fit's
    record is known before its first round.

    Parameters
    ----------
    eps0 : float
    sizes, deltas : dict
        Silo id to size and to delta.
    config : FederationConfig
    caveats : tuple of str, default=()

    Returns
    -------
    record : PrivacyRecord
        :func:`shuffle_isrl_record` of the silo with the largest epsilon.
    """
    delta = max(deltas.values())
    worst = max(
        sizes,
        key=lambda s: isrl_shuffle_epsilon(eps0, sizes[s], config.rounds, delta),
    )
    return shuffle_isrl_record(
        eps0,
        sizes[worst],
        config.rounds,
        delta,
        clip_norm=config.clip_norm,
        caveats=tuple(caveats),
    )


def fit_shuffled(
    silo_data,
    *,
    loss,
    config,
    silo_epsilon,
    silo_delta,
    random_state=None,
    record_transcript=False,
    caveats=(),
):
    """Run the shuffled protocol (``fit_federated(..., shuffle=True)``).

    Parameters are those of :func:`fit_federated`; ``config.local_steps``
    must be 1 and ``config.sampling_probability`` is not used (one record
    per silo per round).

    Returns
    -------
    fit : FederatedFit
        ``privacy_record`` is the worst silo's ISRL-DP record (no trusted
        party) and ``shuffle_record`` the guarantee conditional on the
        shuffler.
    """
    from ..privacy._random import noise_seed
    from ._driver import _child_generator, check_federation
    from ._result import FederatedFit
    from ._server import Server

    if config.local_steps != 1:
        raise ValueError(
            "shuffle=True sends one report per silo per round (local_steps=1): "
            "the amplification bound covers one pure-LDP report per silo."
        )
    rng = check_noise_generator(random_state)
    seed = noise_seed(rng) if random_state is not None else None
    sizes = check_federation(silo_data, config)
    ids = list(sizes)
    eps0, deltas = plan_shuffled(sizes, silo_epsilon, silo_delta, config)
    caveats = tuple(caveats)
    records = {
        sid: dataclasses.replace(
            shuffle_isrl_record(
                eps0,
                sizes[sid],
                config.rounds,
                deltas[sid],
                clip_norm=config.clip_norm,
                caveats=caveats,
            ),
            seed=seed,
        )
        for sid in ids
    }
    n_features = np.shape(silo_data[ids[0]][0])[1]
    if config.learning_rate == "auto":
        lr = shuffle_learning_rate(
            eps0, len(ids), sum(sizes.values()), (n_features + 1) * loss.n_outputs
        )
        # Capped as the central rule is (the penalty's explicit step diverges
        # beyond 2 / alpha; a proximal column_alpha comes with alpha = 0).
        lr = penalty_capped_learning_rate(lr, config.alpha)
        config = dataclasses.replace(config, learning_rate=lr)
    silos = {
        sid: ShuffledSilo(
            silo_data[sid][0],
            silo_data[sid][1],
            loss=loss,
            config=config,
            eps0=eps0,
            record=records[sid],
            silo_id=sid,
            random_state=_child_generator(rng),
        )
        for sid in ids
    }
    shuffler = _child_generator(rng)
    # The server only ever sees slots 0..N-1 of anonymous reports, with
    # equal weights.
    server = Server(
        n_features,
        loss.n_outputs,
        config=config,
        weights=dict.fromkeys(range(len(ids)), 1.0),
    )
    transcript = [] if record_transcript else None
    for r in range(config.rounds):
        model = server.model
        reports = [silos[sid].message(model, r) for sid in ids]
        anonymous = shuffle_round(reports, r, shuffler)
        if transcript is not None:
            transcript.extend(anonymous)
        server.step(anonymous)
    coef, intercept = server.coefficients()

    delta = max(deltas.values())
    record = shuffled_fit_record(eps0, sizes, deltas, config, caveats)
    central = shuffle_record(
        eps0,
        n_silos=len(ids),
        n_min=min(sizes.values()),
        rounds=config.rounds,
        delta=delta,
        caveats=caveats,
    )
    record = dataclasses.replace(record, seed=seed)
    central = dataclasses.replace(central, seed=seed)
    return FederatedFit(
        coef=coef,
        intercept=intercept,
        rounds=config.rounds,
        silo_reports={sid: s.report() for sid, s in silos.items()},
        server_weights={sid: 1.0 / len(ids) for sid in ids},
        privacy_record=record,
        execution="local",
        transcript=transcript,
        shuffle_record=central,
    )


def local_epsilon_for_shuffle_budget(
    epsilon, delta, *, n_silos, n_min, rounds, tol=1e-3
):
    """The largest ``eps0`` whose shuffle guarantee is within ``(epsilon, delta)``.

    For planning a run whose budget is stated under the shuffle trust model
    (public inputs only); pass the ISRL-DP epsilons it implies
    (:func:`isrl_shuffle_epsilon`) as the silos' budgets.

    Parameters
    ----------
    epsilon, delta : float
        Target of :func:`shuffle_record`.
    n_silos, n_min, rounds : int
    tol : float, default=1e-3
        Relative width of the bisection bracket (the lower end is kept).

    Returns
    -------
    eps0 : float

    Examples
    --------
    >>> from sklearn_dpfair.federated._shuffle import (
    ...     local_epsilon_for_shuffle_budget, shuffle_record)
    >>> eps0 = local_epsilon_for_shuffle_budget(1.0, 1e-5, n_silos=300, n_min=100,
    ...                                         rounds=50)
    >>> shuffle_record(eps0, n_silos=300, n_min=100, rounds=50, delta=1e-5).epsilon <= 1.0
    True
    """

    def fits(eps0):
        rec = shuffle_record(
            eps0, n_silos=n_silos, n_min=n_min, rounds=rounds, delta=delta
        )
        return rec.epsilon <= epsilon

    lo, hi = 0.0, 1.0
    while fits(hi):
        lo, hi = hi, 2.0 * hi
        if hi > 64.0:
            return lo
    while hi - lo > tol * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo
