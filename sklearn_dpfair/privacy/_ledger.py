# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""A shared privacy ledger: the total cost of the training fits of a search.

``GridSearchCV`` and ``cross_validate`` fit *clones* of an estimator, and
``clone`` deep-copies every parameter that is not an estimator. A plain
accountant object would therefore be copied once per fit and the total would
be lost (diffprivlib's ``BudgetAccountant`` has exactly this problem). A
:class:`PrivacyLedger` instead *is its own clone and its own deep copy*: every
estimator cloned from one holding the ledger records into the same object.

With ``n_jobs > 1`` joblib pickles the estimator into worker processes. The
first time a ledger is pickled it opens a journal file (private to the user,
in the temporary directory); the copies in the workers append each fit's
event to it and the original reads it back, so the total also covers fits run
in other processes. The journal is deleted when the last ledger object of
the process that opened it (the original, or a copy unpickled there: a
model returned by an ``n_jobs > 1`` search) is garbage collected, so that
a copy outliving the original still reads the fits of other processes and
hands later workers a journal that exists. A copy keeps its own fits in
memory too, and pickling carries every fit recorded so far (the journal's
included), so a copy that outlives the journal (a model saved and loaded
in a later session) loses none. The journal is a local file: a copy
unpickled on another machine (a distributed joblib backend) cannot reach
it, and refuses to record rather than keep fits the original's total would
never see. A ledger with a journal checks a new release against the
journal's entries too, and a copy checks again under the journal's lock as
it appends, so that fits run side by side cannot leave a combination its
accountant cannot compose.

Composition assumes the recorded releases drew *independent* noise. Fits
given the same seed (the same int, or copies of one numpy random-state
instance, which is what ``clone`` makes of it) drew the same noise, so their
noise can cancel between them; every entry keeps the fingerprint of its
fit's seed and the ledger refuses to compose a shared one (the total is
inf).

A ledger composes the *training* releases only. ``GridSearchCV`` also scores
every fold model without noise on private held-out rows, selects with those
scores and exposes them in ``cv_results_``: those are further releases that no
ledger sees. :mod:`sklearn_dpfair.model_selection` accounts for them.
"""

import contextlib
import math
import os
import pickle
import socket
import struct
import tempfile
import threading
import time
import uuid
import weakref
from collections import Counter
from dataclasses import dataclass

from ..exceptions import PrivacyAccountingError
from ._accounting import (
    ADJACENCIES,
    check_accountant,
    check_composable,
    check_delta,
    check_dp_event,
    composed_event,
    epsilon_of,
    is_dp_event,
    non_private_event,
)
from ._random import seed_fingerprints

try:  # POSIX advisory locks; appends of one small record are atomic anyway.
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

__all__ = ["LedgerEntry", "PrivacyLedger"]

# Each journal record is a 4-byte big-endian length followed by the pickled
# entry, written with a single ``write`` on a file opened in append mode.
_HEADER = struct.Struct(">I")

_MIXED = (
    "The ledger holds releases stated under different neighbouring relations "
    "({relations}); their events cannot be composed into one guarantee as "
    "they are. Pass adjacency='replace_one' to state the total under "
    "replace-one, the add/remove releases converted by group privacy "
    "(add/remove (eps, delta) implies replace-one (2 eps, (1 + e^eps) "
    "delta)), or use one ledger per relation."
)
_NO_ADD_REMOVE = (
    "The ledger holds replace-one releases, which cannot be stated under "
    "add_remove: replace-one bounds datasets of the same size only and "
    "implies no add/remove guarantee. Pass adjacency='replace_one' (or None "
    "when every release shares one relation)."
)
# Slack of the group-privacy conversion's delta search: the converted
# releases are accounted at delta_A = budget / (1 + e^(eps + margin)), which
# is feasible as soon as eps(delta_A) <= eps + margin.
_CONVERSION_MARGIN = 0.1
_RELATION_TEXT = {"add_remove": "add/remove", "replace_one": "replace-one"}
_CONVERSION_TRIES = 60


@dataclass(frozen=True)
class LedgerEntry:
    """One recorded release (usually one fit).

    Parameters
    ----------
    dp_event : dp_accounting.DpEvent
        What the release did.
    delta : float
        The delta the release was stated at.
    epsilon : float or None
        The epsilon the release claimed at ``delta`` (informative only; the
        total is recomputed from the events).
    adjacency : str
        Neighbouring relation of the release's guarantee.
    source : str or None
        Who recorded it (the estimator's class name for fits).
    uid : str
        Unique id, so that entries seen twice (memory and journal) count once.
    timestamp : float
        ``time.time()`` at recording.
    seed : str or None, default=None
        Fingerprint of the seed of a seeded fit (see
        :attr:`PrivacyRecord.seed <sklearn_dpfair.privacy.PrivacyRecord>`);
        None for noise from OS entropy.

    Examples
    --------
    >>> from sklearn_dpfair.privacy import PrivacyLedger
    >>> from sklearn_dpfair.privacy._accounting import gaussian_event
    >>> ledger = PrivacyLedger()
    >>> entry = ledger.record(gaussian_event(2.0), delta=1e-5)
    >>> entry.adjacency
    'add_remove'
    """

    dp_event: object
    delta: float
    epsilon: float | None
    adjacency: str
    source: str | None
    uid: str
    timestamp: float
    # Last and defaulted, so that journal entries of older versions load.
    seed: str | None = None


class PrivacyLedger:
    r"""Accountant object that totals the privacy spent by many fits.

    Pass it as the ``accountant`` parameter of private estimators. Each
    successful fit records its ``dp_event_`` here; :meth:`total_epsilon`
    composes all recorded events with dp-accounting: every fit on the private
    data spends budget, not only the final one. For a ``GridSearchCV`` or
    ``cross_validate`` run this is the cost of the *training* fits only; the
    noiseless scores on private held-out rows, and the selection made with
    them, are further releases that the ledger does not see (use
    :class:`~sklearn_dpfair.model_selection.PrivateHyperparameterSearch`,
    which records its whole cost as one entry).

    The ledger survives :func:`sklearn.base.clone`: ``clone``,
    :func:`copy.copy` and :func:`copy.deepcopy` all return the *same* ledger
    (``__sklearn_clone__``, ``__copy__`` and ``__deepcopy__`` return
    ``self``), so the clones made by ``GridSearchCV`` and ``cross_validate``
    share it. Fits run in other processes (``n_jobs > 1``) are collected
    through a journal file (see the module docstring). Recording is
    thread-safe.

    Parameters
    ----------
    kind : {"rdp", "pld"}, default="rdp"
        dp-accounting accountant that estimators holding this ledger use for
        their own calibration and that :meth:`total_epsilon` composes with.

    Attributes
    ----------
    kind : str
        The accountant kind (read by the estimators).

    See Also
    --------
    sklearn_dpfair.privacy.PrivacyRecord : The guarantee of one fit.

    Notes
    -----
    Composition is only valid for releases that drew independent noise.
    Fits given the same seed (the same int ``random_state``, or copies of one
    ``RandomState`` / ``Generator`` instance, such as the clones made by
    ``GridSearchCV`` and ``cross_validate``) drew the *same* noise, which
    may cancel between their outputs: when two recorded fits share a seed,
    :meth:`total_epsilon` returns ``inf`` and :meth:`summary` says which
    fits. Seeded fits with distinct seeds are composed as independent
    releases, but a seeded fit is not a private release in the first place
    (whoever knows the seed knows the noise); the summary counts them. Fit
    with ``random_state=None`` whenever the total is meant as a guarantee.

    The total is a bound for releasing *every* fitted model (sequential
    composition over all fits, including the refit), and for nothing else
    those fits' data entered: a search's noiseless validation scores and its
    selection are not recorded events. When only the selected model is
    released and the number of candidates is randomized, the tighter
    analysis of Papernot and Steinke (dp-accounting's
    ``RepeatAndSelectDpEvent``) applies instead; this ledger does not assume
    it.

    Fits stated under different neighbouring relations (``add_remove`` and
    ``replace_one``, e.g. ``DPLogisticRegression`` and
    ``SemiDPLinearRegression``) are not composed as they are:
    :meth:`total_epsilon` refuses unless ``adjacency="replace_one"`` asks
    for the total under replace-one. Then the add/remove releases are
    composed together and converted by group privacy for two records (a
    replacement is a removal then an addition): add/remove
    :math:`(\varepsilon, \delta)` implies replace-one
    :math:`(2\varepsilon, (1 + e^{\varepsilon})\delta)`; the converted part
    and the composed replace-one releases add up by basic composition, each
    with half of the total delta. No conversion goes the other way:
    replace-one bounds only datasets of the same size.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.model_selection import cross_validate
    >>> from sklearn_dpfair import DPLogisticRegression
    >>> from sklearn_dpfair.privacy import PrivacyLedger
    >>> X, y = make_classification(n_samples=500, random_state=0)
    >>> ledger = PrivacyLedger()
    >>> clf = DPLogisticRegression(epsilon=1.0, classes=[0, 1], accountant=ledger)
    >>> _ = cross_validate(clf, X, y, cv=3)
    >>> len(ledger)
    3
    >>> 1.0 < ledger.total_epsilon() < 3.0
    True
    """

    def __init__(self, kind="rdp"):
        check_accountant(kind, "kind")
        self.kind = kind
        self._init_state(entries=[], journal=None, owner=True)

    def _init_state(self, entries, journal, owner, detached_from=None, pid=None):
        self._entries = list(entries)
        self._journal = journal
        # The process that opened the journal (where it is removed).
        self._journal_pid = pid
        # Whether this object opened its journal (or has none): a copy's
        # reset detaches it instead of emptying the journal it shares.
        self._owner = owner
        # The host of an original whose journal this copy cannot reach.
        self._detached_from = detached_from
        self._lock = threading.Lock()

    # -- clone / copy / pickle -------------------------------------------------

    def __sklearn_clone__(self):
        return self

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __getstate__(self):
        with self._lock:
            if self._journal is None:
                self._journal = self._open_journal()
        # Every fit recorded so far, those of other processes (in the
        # journal) included: a copy that outlives the journal keeps them.
        entries = self.entries
        return {
            "kind": self.kind,
            "entries": entries,
            "journal": self._journal,
            "host": socket.gethostname(),
            "pid": self._journal_pid,
        }

    def __setstate__(self, state):
        self.kind = state["kind"]
        journal = state["journal"]
        host = state.get("host")
        if journal is not None and os.path.exists(journal):
            # A copy while the journal exists (a joblib worker, or a round
            # trip in the same session): write where the original reads.
            pid = state.get("pid")
            self._init_state(state["entries"], journal, owner=False, pid=pid)
            if pid == os.getpid():
                # In the process that opened the journal, the copy keeps it
                # while it lives (a worker's copy does not: it would remove
                # the journal when the worker drops it).
                _hold_journal(self, journal)
        elif host is not None and host != socket.gethostname():
            # Another machine: the original may be alive there, and fits
            # recorded here would be missing from its total.
            self._init_state(state["entries"], None, owner=True, detached_from=host)
        else:
            # The original is gone (a model loaded in a later session): this
            # copy becomes an independent ledger with what was recorded.
            self._init_state(state["entries"], None, owner=True)

    def _open_journal(self):
        fd, path = tempfile.mkstemp(prefix="sklearn_dpfair_ledger_", suffix=".bin")
        os.close(fd)
        # Deleted when the last ledger of this process holding it is
        # collected (_hold_journal).
        self._journal_pid = os.getpid()
        _hold_journal(self, path)
        return path

    # -- recording ---------------------------------------------------------------

    def record(
        self,
        dp_event,
        *,
        delta,
        adjacency="add_remove",
        epsilon=None,
        source=None,
        seed=None,
    ):
        """Record one release.

        Estimators call this at the end of each successful fit; call it
        yourself for releases made outside the estimators.

        Parameters
        ----------
        dp_event : dp_accounting.DpEvent
            The event of the release.
        delta : float
            Delta the release was stated at, in [0, 1); 0 for a pure
            epsilon-DP release (Laplace), whose epsilons add up exactly.
        adjacency : {"add_remove", "replace_one"}, default="add_remove"
            Neighbouring relation of the release's guarantee.
        epsilon : float or None, default=None
            Epsilon claimed by the release (kept for the summary only).
        source : str or None, default=None
            Name of what released it.
        seed : str or None, default=None
            Fingerprint of the release's seed when its noise came from a seed
            (``PrivacyRecord.seed``); releases recorded with the same
            fingerprint share their noise and are not composed.

        Returns
        -------
        entry : LedgerEntry
            The recorded entry.

        Raises
        ------
        ValueError
            If ``adjacency`` or ``delta`` is invalid, or if this ledger's
            accountant cannot compose the release with those recorded under
            its adjacency (see :meth:`check_recordable`); nothing is recorded.
        PrivacyAccountingError
            If the journal cannot be reached or read.
        """
        # Before it is appended: an entry this ledger's accountant cannot
        # compose with the releases of its adjacency (composed together by
        # total_epsilon) would leave every later total unreadable.
        self.check_recordable(dp_event, adjacency=adjacency)
        check_delta(delta)
        if delta == 0:
            # Raises for an event with no pure epsilon (a Gaussian).
            epsilon_of(dp_event, 0.0, self.kind)
        entry = LedgerEntry(
            dp_event=dp_event,
            delta=float(delta),
            epsilon=None if epsilon is None else float(epsilon),
            adjacency=str(adjacency),
            source=source,
            uid=uuid.uuid4().hex,
            timestamp=time.time(),
            seed=None if seed is None else str(seed),
        )
        with self._lock:
            # Checked again where the entry is added: another thread (a
            # threading backend shares this object), or another process's
            # copy, may have recorded since check_recordable looked, and two
            # fits that each passed alone must not both be added.
            own = list(self._entries)

            def check(written):
                merged = _merged(own, written)
                _check_composable_with(merged, dp_event, adjacency, self.kind)

            if self._journal is None:
                check([])
            else:
                # A copy writes where the original reads (the journal) and
                # keeps its own fits: the journal goes with the original. An
                # original that has a journal (it was pickled for copies)
                # writes there too, so that its copies see its later fits.
                # The journal is read under the lock its append is made
                # under; entries are merged by uid.
                _append(self._journal, entry, check=check)
            self._entries.append(entry)
        return entry

    def _check_attached(self):
        if self._detached_from is not None:
            raise PrivacyAccountingError(
                "This PrivacyLedger was unpickled on another machine than the one "
                f"that holds it ({self._detached_from!r}), where its journal cannot "
                "be reached: a fit recorded here would be missing from the "
                "original's total. Run the fits on the machine of the ledger (a "
                "local joblib backend), or pass a new PrivacyLedger to start an "
                "independent one."
            )

    def check_recordable(self, dp_event, *, adjacency="add_remove"):
        """Raise unless :meth:`record` would accept ``dp_event`` (nothing is recorded).

        A release this ledger's accountant cannot compose with the releases
        of the same adjacency is refused, so that no entry makes every later
        total unreadable; estimators ask before they read any row (their
        ``privacy_plan`` and, where the plan is made in ``fit``, before the
        first release). A ledger with a journal (one pickled for worker
        processes, and its copies) reads the journal too, so that a fit
        refuses before it runs when a fit of another process already took
        what it would be composed with; this costs a read of the journal
        per fit, which only ledgers that were pickled pay.

        Parameters
        ----------
        dp_event : dp_accounting.DpEvent
            The event of the release to be recorded.
        adjacency : {"add_remove", "replace_one"}, default="add_remove"
            Neighbouring relation of the release's guarantee: it is
            composed with the recorded releases of that relation.

        Raises
        ------
        PrivacyAccountingError
            If this ledger was unpickled away from its journal, or its
            journal cannot be read.
        TypeError
            If ``dp_event`` is not a dp-accounting event.
        ValueError
            If ``adjacency`` is not one of the package's relations, if a
            parameter of ``dp_event`` is malformed (a NaN or negative noise
            multiplier, a negative count, a sampling probability outside
            [0, 1]), or naming the accountant and what it cannot read.

        Examples
        --------
        >>> from sklearn_dpfair.privacy import PrivacyLedger
        >>> from sklearn_dpfair.privacy._accounting import zcdp_event
        >>> PrivacyLedger(kind="rdp").check_recordable(zcdp_event(0.1))
        >>> PrivacyLedger(kind="pld").check_recordable(zcdp_event(0.1))
        Traceback (most recent call last):
        ...
        ValueError: The 'pld' accountant cannot read these releases together...
        """
        self._check_attached()
        if not is_dp_event(dp_event):
            raise TypeError(
                f"dp_event must be a dp_accounting DpEvent, got {type(dp_event)!r}."
            )
        if adjacency not in ADJACENCIES:
            # An unknown relation is composed with nothing and then cannot be
            # stated by any total.
            raise ValueError(
                f"adjacency must be one of {ADJACENCIES}, got {adjacency!r}."
            )
        # A malformed event (a NaN noise multiplier, a negative count) would
        # lower every later total instead of raising it.
        check_dp_event(dp_event)
        if self._journal is None:
            with self._lock:
                entries = list(self._entries)
        else:
            entries = self.entries
        _check_composable_with(entries, dp_event, adjacency, self.kind)

    @property
    def entries(self):
        """Every recorded entry, in recording order (list of LedgerEntry)."""
        with self._lock:
            written = [] if self._journal is None else _read(self._journal)
            return _merged(self._entries, written)

    def __len__(self):
        return len(self.entries)

    def reset(self):
        """Forget every recorded entry (for instance between experiments).

        A copy of a ledger (unpickled: a model returned by an ``n_jobs > 1``
        search, or loaded) is detached instead: it becomes an empty
        independent ledger, and the original, with its other copies, keeps
        every entry (emptying the journal they share would drop the fits of
        other processes from their totals and keep their own).

        Returns
        -------
        self : PrivacyLedger
            The emptied ledger.
        """
        with self._lock:
            self._entries = []
            if not self._owner:
                self._journal, self._owner = None, True
                return self
            if self._journal is not None and os.path.exists(self._journal):
                with _locked(self._journal, "r+b", exclusive=True) as f:
                    f.truncate(0)
        return self

    # -- totals ------------------------------------------------------------------

    def shared_seeds(self):
        """Seeds shared by several recorded releases, with their sources.

        Returns
        -------
        shared : dict
            Seed fingerprint to the list of the sources (``"unnamed"`` when
            not given) of the releases that drew the noise of that seed; only
            fingerprints recorded more than once. Empty when every release
            drew its own noise.

        Examples
        --------
        >>> from sklearn_dpfair.privacy import PrivacyLedger
        >>> from sklearn_dpfair.privacy._accounting import gaussian_event
        >>> ledger = PrivacyLedger()
        >>> _ = ledger.record(gaussian_event(2.0), delta=1e-5, seed="abc")
        >>> _ = ledger.record(gaussian_event(2.0), delta=1e-5, seed="abc")
        >>> ledger.shared_seeds()
        {'abc': ['unnamed', 'unnamed']}
        >>> ledger.total_epsilon()
        inf
        """
        return _shared_seeds(self.entries)

    def dp_event(self):
        """The composition of every recorded event, as one DpEvent.

        Returns
        -------
        event : dp_accounting.DpEvent
            A ``ComposedDpEvent`` (the single event when only one was
            recorded, an empty composition when none was), or a
            ``NonPrivateDpEvent`` when two releases shared a seed (see
            :meth:`shared_seeds`): their noise is not independent.

        Raises
        ------
        ValueError
            If the releases were stated under different neighbouring
            relations: no one event describes them (see
            :meth:`total_epsilon` for a converted total).
        """
        entries = self.entries
        _target_adjacency(entries, None)
        if _shared_seeds(entries):
            return non_private_event()
        return composed_event([e.dp_event for e in entries])

    def total_epsilon(self, delta=None, *, adjacency=None):
        r"""Total epsilon of every recorded release, composed by dp-accounting.

        Parameters
        ----------
        delta : float or None, default=None
            Delta of the total guarantee. None uses the largest delta among
            the recorded releases, so the total is stated at the same delta
            the user chose for each fit.
        adjacency : {"add_remove", "replace_one"} or None, default=None
            Neighbouring relation of the total. None requires every release
            to share one relation, and states the total under it.
            ``"replace_one"`` also composes releases stated under add/remove:
            they are composed together and converted by group privacy
            (add/remove :math:`(\varepsilon_A, \delta_A)` implies
            replace-one :math:`(2\varepsilon_A, (1 + e^{\varepsilon_A})
            \delta_A)`), then added to the composed replace-one releases,
            each part within half of ``delta`` (all of it when there are no
            replace-one releases). ``"add_remove"`` refuses replace-one
            releases: nothing converts them.

        Returns
        -------
        epsilon : float
            ``0.0`` for an empty ledger; ``inf`` if any fit was non-private
            or if two fits shared a seed (:meth:`shared_seeds`), since their
            noise is then the same and the releases do not compose as
            independent ones.

        Raises
        ------
        ValueError
            If the releases were stated under different relations and
            ``adjacency`` is None, or if ``adjacency="add_remove"`` and a
            release was stated under replace-one.

        Examples
        --------
        >>> from sklearn_dpfair.privacy import PrivacyLedger
        >>> from sklearn_dpfair.privacy._accounting import gaussian_event
        >>> ledger = PrivacyLedger()
        >>> _ = ledger.record(gaussian_event(4.0), delta=1e-5)
        >>> _ = ledger.record(gaussian_event(4.0), delta=1e-5, adjacency="replace_one")
        >>> ledger.total_epsilon()
        Traceback (most recent call last):
        ...
        ValueError: The ledger holds releases stated under different ...
        >>> round(ledger.total_epsilon(adjacency="replace_one"), 2)
        3.32
        """
        entries = self.entries
        target = _target_adjacency(entries, adjacency)
        # Checked before an empty ledger answers 0: a NaN delta is no
        # question (every comparison with it is False).
        if delta is not None:
            check_delta(delta)
        if not entries:
            return 0.0
        if delta is None:
            delta = max(e.delta for e in entries)
        if _shared_seeds(entries):
            return math.inf  # shared noise: not independent releases
        converted = [e.dp_event for e in entries if e.adjacency != target]
        if not converted:
            return epsilon_of(self.dp_event(), delta, self.kind)
        native = [e.dp_event for e in entries if e.adjacency == target]
        return _replace_one_total(native, converted, delta, self.kind)

    def total_epsilon_with(self, plan, delta=None, *, adjacency=None, seed=None):
        """The total epsilon if the fit ``plan`` describes were recorded too.

        Reads the plan only (``estimator.privacy_plan(n_samples,
        n_features)``), so a budget can be checked before a fit reads any
        row; nothing is recorded.

        Parameters
        ----------
        plan : PrivacyPlan
            The planned fit.
        delta : float or None, default=None
            As in :meth:`total_epsilon` (None: the largest delta among the
            recorded releases and the plan).
        adjacency : {"add_remove", "replace_one"} or None, default=None
            As in :meth:`total_epsilon`.
        seed : str or None, default=None
            Fingerprint of the planned fit's seed, as its record will hold
            it (``sklearn_dpfair.privacy._random.noise_seed(random_state)``
            of the estimator). A plan carries no seed: a planned fit that
            would draw the noise of a recorded one (the total is then
            ``inf``, see :meth:`shared_seeds`) is predicted only when its
            seed is given; None predicts a fit with ``random_state=None``.

        Returns
        -------
        epsilon : float
            The total epsilon of the recorded releases and the plan.

        Examples
        --------
        >>> from sklearn_dpfair import DPLogisticRegression
        >>> from sklearn_dpfair.privacy import PrivacyLedger
        >>> from sklearn_dpfair.privacy._random import noise_seed
        >>> ledger = PrivacyLedger()
        >>> plan = DPLogisticRegression(epsilon=1.0, max_iter=3).privacy_plan(5000, 4)
        >>> ledger.total_epsilon_with(plan) <= 1.0, len(ledger)
        (True, 0)
        >>> _ = ledger.record(plan.dp_event, delta=plan.delta, seed=noise_seed(0))
        >>> ledger.total_epsilon_with(plan, seed=noise_seed(0))
        inf
        """
        trial = PrivacyLedger(self.kind)
        for entry in self.entries:
            trial.record(
                entry.dp_event,
                delta=entry.delta,
                adjacency=entry.adjacency,
                source=entry.source,
                seed=entry.seed,
            )
        if plan.additional_delta > 0:
            # As a fit with this plan and a ledger is refused.
            raise ValueError(
                f"The plan of {plan.estimator} spends a delta of "
                f"{plan.additional_delta:.3g} outside its dp_event (a private "
                "category discovery's threshold), which a PrivacyLedger cannot "
                "hold: declare the categories, or compose it yourself (the "
                "ledger's total at delta, plus that delta)."
            )
        trial.record(
            plan.dp_event,
            delta=plan.delta,
            adjacency=plan.adjacency,
            source=plan.estimator,
            seed=seed,
        )
        return trial.total_epsilon(delta, adjacency=adjacency)

    def summary(self, delta=None, *, adjacency=None):
        """Human-readable total: number of releases and total epsilon.

        Parameters
        ----------
        delta : float or None, default=None
            As in :meth:`total_epsilon`.
        adjacency : {"add_remove", "replace_one"} or None, default=None
            As in :meth:`total_epsilon`; releases under different relations
            without ``adjacency`` give a total that says why it is missing.

        Returns
        -------
        summary : str
            One line per distinct source, then the total.
        """
        entries = self.entries
        if not entries:
            return "PrivacyLedger: no releases recorded."
        per_source = Counter(e.source or "unnamed" for e in entries)
        lines = [
            f"{count} release(s) by {source}" for source, count in per_source.items()
        ]
        if delta is None:
            delta = max(e.delta for e in entries)
        try:
            target = _target_adjacency(entries, adjacency)
        except ValueError as exc:
            lines.append(f"Total: not composable. {exc}")
            return "\n".join(lines)
        try:
            epsilon = self.total_epsilon(delta, adjacency=adjacency)
        except ValueError as exc:  # an accountant that cannot read them all
            lines.append(f"Total: not composable. {exc}")
            return "\n".join(lines)
        n_converted = sum(e.adjacency != target for e in entries)
        if n_converted:
            lines.append(
                f"{n_converted} add/remove release(s) converted to replace-one "
                "by group privacy: (eps, delta) -> (2 eps, (1 + e^eps) delta)."
            )
        naive = sum(e.epsilon for e in entries if e.epsilon is not None)
        shared = _shared_seeds(entries)
        if shared:
            groups = "; ".join(
                f"{len(sources)} fits by {', '.join(sorted(set(sources)))}"
                for sources in shared.values()
            )
            total = (
                f"inf (releases shared a seed and drew the same noise, which "
                f"may cancel between them: {groups}; fit with "
                "random_state=None)"
            )
        elif math.isinf(epsilon):
            total = "inf (a non-private fit was recorded)"
        else:
            total = f"{epsilon:.4g}"
        n_seeded = sum(e.seed is not None for e in entries)
        if n_seeded:
            lines.append(
                f"{n_seeded} seeded release(s): their noise is reproducible from "
                "random_state, so they are not private releases."
            )
        # Releases recorded without their epsilon have none to add: the sum
        # is said to be partial (or is not given), never presented whole.
        stated = sum(e.epsilon is not None for e in entries)
        if stated == len(entries):
            naive_text = f"; the sum of the per-fit epsilons is {naive:.4g}"
        elif stated:
            naive_text = (
                f"; the sum of the {stated} per-fit epsilons recorded (of "
                f"{len(entries)} releases) is {naive:.4g}"
            )
        else:
            naive_text = ""
        lines.append(
            f"Total: epsilon = {total} at delta = {delta:.3g} over {len(entries)} "
            f"release(s), composed with dp-accounting ({self.kind.upper()}), "
            f"under {_RELATION_TEXT[target]} adjacency{naive_text}."
        )
        return "\n".join(lines)

    def __repr__(self):
        try:
            entries = self.entries
        except PrivacyAccountingError:
            # Also the repr of every estimator holding the ledger: it says
            # what is wrong rather than raise.
            return f"PrivacyLedger(kind={self.kind!r}, journal unreadable)"
        n_fits = len(entries)
        if not n_fits:
            return f"PrivacyLedger(kind={self.kind!r}, fits=0)"
        try:
            total = f"{self.total_epsilon():.4g}"
        except ValueError:  # releases under different adjacencies
            total = "not composable"
        except Exception as exc:
            # Any other failure of the accountant: a repr (the ledger's, and
            # that of every estimator holding it) must not raise.
            total = f"unavailable ({type(exc).__name__})"
        delta = max(e.delta for e in entries)
        return (
            f"PrivacyLedger(kind={self.kind!r}, fits={n_fits}, "
            f"total_epsilon={total} at delta={delta:.3g})"
        )


def _target_adjacency(entries, adjacency):
    """The relation a total over ``entries`` is stated under, or raise."""
    relations = sorted({e.adjacency for e in entries})
    if adjacency is None:
        if len(relations) > 1:
            raise ValueError(_MIXED.format(relations=" and ".join(relations)))
        return relations[0] if relations else "add_remove"
    if adjacency not in ADJACENCIES:
        raise ValueError(
            f"adjacency must be one of {ADJACENCIES} or None, got {adjacency!r}."
        )
    if adjacency == "add_remove" and "replace_one" in relations:
        raise ValueError(_NO_ADD_REMOVE)
    unknown = set(relations) - set(ADJACENCIES)
    if unknown:
        raise ValueError(
            f"The ledger holds releases under {sorted(unknown)}, which cannot "
            f"be converted to {adjacency}."
        )
    return adjacency


def _replace_one_total(native, converted, delta, kind):
    """Replace-one epsilon at ``delta`` of replace-one and add/remove events.

    The add/remove events, composed, are (eps_A, delta_A)-DP under
    add/remove, hence (2 eps_A, (1 + e^eps_A) delta_A)-DP under replace-one
    (group privacy for the two records a replacement changes). Basic
    composition with the composed replace-one events, at the delta left,
    gives the total.
    """
    budget = delta / 2 if native else delta
    eps_a, used = _group_of_two(composed_event(converted), budget, kind)
    if math.isinf(eps_a) or not native:
        return 2 * eps_a
    return epsilon_of(composed_event(native), delta - used, kind) + 2 * eps_a


def _group_of_two(event, budget, kind):
    """``(eps_A, (1 + e^eps_A) delta_A)`` of ``event`` with the latter <= budget.

    Searches delta_A = budget / (1 + e^(eps + margin)) from the epsilon at
    budget / 2 (a lower bound: 1 + e^eps >= 2), raising the epsilon it
    starts from until the accountant's epsilon at delta_A is within the
    margin; every returned pair is checked, so the search only costs
    tightness, never soundness. ``inf`` when no pair is found.
    """
    eps = epsilon_of(event, budget / 2, kind)
    for _ in range(_CONVERSION_TRIES):
        if eps + _CONVERSION_MARGIN > 700:  # e^eps overflows: nothing useful
            return math.inf, budget
        delta_a = budget / (1 + math.exp(eps + _CONVERSION_MARGIN))
        eps_a = epsilon_of(event, delta_a, kind)
        used = (1 + math.exp(eps_a)) * delta_a
        if used <= budget:
            return eps_a, used
        eps = eps_a
    return math.inf, budget


def _merged(entries, written):
    """``entries`` and the journal's ``written`` ones, each once, in order."""
    seen = {e.uid: e for e in entries}
    for e in written:
        seen.setdefault(e.uid, e)
    return sorted(seen.values(), key=lambda e: (e.timestamp, e.uid))


def _check_composable_with(entries, dp_event, adjacency, kind):
    """Raise unless ``dp_event`` composes with the entries of ``adjacency``."""
    same = [e.dp_event for e in entries if e.adjacency == adjacency]
    check_composable([*same, dp_event], kind)


def _shared_seeds(entries):
    # By fingerprint: a pipeline records its steps' seeds as "path=fp; ...",
    # and a step seeded alike with a standalone fit drew the same noise.
    sources = {}
    for e in entries:
        if e.seed is not None:
            for fingerprint in seed_fingerprints(e.seed):
                sources.setdefault(fingerprint, []).append(e.source or "unnamed")
    return {seed: s for seed, s in sources.items() if len(s) > 1}


def _remove_file(path):
    with contextlib.suppress(OSError):
        os.remove(path)


# The ledger objects of this process that hold each journal (the original
# and the copies unpickled here). Reentrant: a collection inside
# _hold_journal may run _release_journal in the same thread.
_JOURNAL_HOLDERS = {}
_HOLDERS_LOCK = threading.RLock()


def _hold_journal(ledger, path):
    """Keep the journal at ``path`` while ``ledger`` or another holder lives."""
    with _HOLDERS_LOCK:
        _JOURNAL_HOLDERS.setdefault(path, weakref.WeakSet()).add(ledger)
    weakref.finalize(ledger, _release_journal, path)


def _release_journal(path):
    """Remove the journal at ``path`` unless a ledger of this process still holds it."""
    with _HOLDERS_LOCK:
        holders = _JOURNAL_HOLDERS.get(path)
        # Iterated, not counted: a holder just collected may still be
        # counted by the set, never yielded.
        if holders is not None and any(True for _ in holders):
            return
        _JOURNAL_HOLDERS.pop(path, None)
    _remove_file(path)


@contextlib.contextmanager
def _locked(path, mode, *, exclusive):
    with open(path, mode) as f:
        if fcntl is not None:
            fcntl.flock(f, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        try:
            yield f
        finally:
            if fcntl is not None:
                fcntl.flock(f, fcntl.LOCK_UN)


def _append(path, entry, check=None):
    """Append ``entry`` to the journal; False if the journal is gone.

    ``check(written)``, given the journal's entries under the exclusive lock,
    may raise to refuse the entry: nothing is written then.
    """
    if path is None or not os.path.exists(path):
        return False
    payload = pickle.dumps(entry, protocol=pickle.HIGHEST_PROTOCOL)
    # "a+b": read under the lock that the write is made under; every write
    # still goes to the end of the file.
    with _locked(path, "a+b", exclusive=True) as f:
        if check is not None:
            f.seek(0)
            check(_parse(f.read(), path))
        f.write(_HEADER.pack(len(payload)) + payload)
        f.flush()
    return True


def _read(path):
    """Entries in the journal (the file is written by this package only)."""
    try:
        with _locked(path, "rb", exclusive=False) as f:
            data = f.read()
    except FileNotFoundError:
        return []
    return _parse(data, path)


def _parse(data, path):
    """The entries of the journal's bytes ``data``, or raise if one is damaged.

    A record cut short (a worker killed, or a full disk, while it appended)
    or that does not unpickle hides a fit the total should count, and
    shifts every record after it: no total can be certified.
    """
    entries, pos = [], 0
    while pos < len(data):
        end = pos + _HEADER.size
        if end <= len(data):
            end += _HEADER.unpack_from(data, pos)[0]
        if end > len(data):
            raise _unreadable(path, pos, "is cut short")
        try:
            entry = pickle.loads(data[pos + _HEADER.size : end])
        # Damaged bytes can make unpickling raise almost anything.
        except Exception as exc:
            raise _unreadable(path, pos, "does not unpickle") from exc
        if not isinstance(entry, LedgerEntry):
            raise _unreadable(path, pos, "is not a ledger entry")
        entries.append(entry)
        pos = end
    return entries


def _unreadable(path, pos, what):
    return PrivacyAccountingError(
        f"The PrivacyLedger journal {path!r} is damaged: its record at byte "
        f"{pos} {what} (a copy in another process was stopped, or the disk "
        "was full, while it recorded a fit). The fits it recorded are not "
        "known, so the ledger's total cannot be certified; count every fit "
        "run with this ledger as spent."
    )
