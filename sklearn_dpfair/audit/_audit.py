# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Run a mechanism or an estimator many times on neighbouring datasets."""

import numbers
from collections import Counter

import numpy as np
from sklearn.base import is_classifier

from ._bounds import check_count
from ._distinguish import audit_scores, check_audit_options, claimed_epsilons
from ._fits import fit_clone, repeat_quietly, require_claim

__all__ = ["audit_estimator", "audit_mechanism", "canary_statistic"]


def canary_statistic(estimator, canary_X, canary_y):
    """How strongly a fitted model points at the canary's target.

    * Classifiers with ``decision_function``: the score of the canary's label
      (binary: the signed logit; multiclass: its score minus the largest
      other score). Raw scores do not saturate the way probabilities do.
    * Other classifiers: the log-probability of the canary's label
      (``predict_log_proba`` where the model has it), or whether it is
      predicted. A model whose classes lack the canary's label scores the
      least finite value.
    * Regressors: minus the absolute error on the canary.

    Parameters
    ----------
    estimator : fitted estimator
        The model of one run.
    canary_X : ndarray of shape (1, n_features) or DataFrame of one row
        The canary's features as the model is queried at: ``neighbours.canary_X``
        from :func:`make_neighbours`, the canary's row as world 1 stores it (a
        one-row DataFrame with ``X``'s columns and dtypes when ``X`` is a
        DataFrame, else an array in ``X``'s dtype, e.g. float32).
    canary_y : object
        The canary's target.

    Returns
    -------
    statistic : float
        Larger when the model has learned the canary.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn_dpfair.audit import canary_statistic
    >>> clf = LogisticRegression().fit([[0.0], [1.0]], [0, 1])
    >>> canary_statistic(clf, np.array([[1.0]]), 1) > 0
    True
    """
    if is_classifier(estimator):
        classes = list(estimator.classes_)
        if canary_y not in classes:
            # A model that cannot output the canary's label (its label set
            # read from a world without the canary) has learned the least
            # of it: the other world tells itself apart by its label set,
            # the leak the audit is there to show.
            return _LEAST_STATISTIC
        k = classes.index(canary_y)
        if hasattr(estimator, "decision_function"):
            scores = np.asarray(estimator.decision_function(canary_X), dtype=float)
            if scores.ndim == 1:
                return float(scores[0] if k == 1 else -scores[0])
            others = np.delete(scores[0], k)
            return float(scores[0, k] - others.max())
        if hasattr(estimator, "predict_log_proba"):
            # Read from the scores, not as log(proba): a probability that
            # rounds to 0 flattens every run at the floor, whatever the
            # logits (a network's at a canary far out).
            log_proba = float(estimator.predict_log_proba(canary_X)[0, k])
            return max(log_proba, _LEAST_STATISTIC)
        if hasattr(estimator, "predict_proba"):
            proba = estimator.predict_proba(canary_X)[0, k]
            return float(np.log(max(proba, 1e-300)))
        return float(estimator.predict(canary_X)[0] == canary_y)
    pred = np.asarray(estimator.predict(canary_X), dtype=float).ravel()[0]
    return -abs(pred - float(canary_y))


# The least finite statistic (the audit's scores must be finite).
_LEAST_STATISTIC = -float(np.finfo(np.float64).max)


def seed_sequence(random_state):
    """The :class:`numpy.random.SeedSequence` of ``random_state``, checked.

    Every run gets its own seed spawned from it, so a value that is no seed
    (a ``RandomState``, a float) is refused here, before any fit, naming the
    parameter; None draws fresh entropy from the OS.
    """
    if random_state is not None and (
        isinstance(random_state, bool) or not isinstance(random_state, numbers.Integral)
    ):
        raise TypeError(
            "random_state must be a non-negative int (or None for fresh OS "
            f"entropy), got {type(random_state).__name__}: every fit gets its own "
            "seed spawned from it. To seed from a generator, pass e.g. "
            "int(rng.integers(2**32))."
        )
    if random_state is not None and random_state < 0:
        raise ValueError(
            f"random_state must be a non-negative int or None, got {random_state!r}."
        )
    return np.random.SeedSequence(None if random_state is None else int(random_state))


def _seeds(random_state, n_runs):
    ss = seed_sequence(random_state)
    world0, world1 = ss.spawn(2)
    return (
        world0.generate_state(n_runs, dtype=np.uint32).tolist(),
        world1.generate_state(n_runs, dtype=np.uint32).tolist(),
    )


def record_additional_delta(fitted):
    """Delta a fit spends outside its ``dp_event_``, from its privacy record.

    A private category discovery's threshold (``DPOneHotEncoder``'s
    ``threshold_delta_``, a pipeline's ``additional_delta_``) is added to
    the event's delta by the union bound: the fit is
    ``(epsilon_, delta_ + additional_delta)``-DP. 0 for most fits.
    """
    record = getattr(fitted, "privacy_record_", None)
    value = getattr(record, "additional_delta", None)
    if value is None:
        value = getattr(fitted, "additional_delta_", 0.0)
    return float(value or 0.0)


def _fit_once(estimator, data, seed, show_warnings=False):
    return fit_clone(
        estimator, data.X, data.y, data.fit_params, seed, show_warnings=show_warnings
    )


def _estimator_run(
    estimator, data, seed, statistic, canary_X, canary_y, *, show_warnings=False
):
    fitted = _fit_once(estimator, data, seed, show_warnings=show_warnings)
    return float(statistic(fitted, canary_X, canary_y))


def _check_runs(n_runs):
    return check_count(n_runs, "n_runs", 4)


def audit_estimator(
    estimator,
    neighbours,
    *,
    n_runs=1000,
    statistic="auto",
    deltas="auto",
    confidence=0.95,
    selection_fraction=0.5,
    random_state=0,
    n_jobs=None,
):
    """Empirical privacy audit of a private estimator.

    Fits clones of ``estimator`` ``n_runs / 2`` times on each of the two
    neighbouring datasets (seeded independently), evaluates ``statistic`` on
    each fitted model, and bounds epsilon from below with
    :func:`audit_scores`. The claim audited is the estimator's own
    ``dp_event_`` (its whole privacy profile) at its ``delta_``, and with it
    the delta its ``privacy_record_`` spends outside that event (the
    threshold of a private category discovery, as in ``DPOneHotEncoder``
    and pipelines holding one): the whole release is audited, at
    ``privacy_record_.total_delta``.

    An audit can only *refute* a claim: a lower bound below the claim means
    this canary and statistic found no violation, not that the estimator is
    private. Its power is shown by auditing a deliberately broken variant
    (see the examples and ``benchmarks/bench_audit.py``).

    The options (``confidence``, ``selection_fraction``, ``deltas``) are
    checked before the first fit, the claimed profile at ``deltas`` after
    the probe fits and before the repeated ones. The two probe fits, one per
    world, show the estimator's warnings (a ``PrivacyLeakWarning`` says part
    of the fit is outside the audited claim); the repeated runs are silent.

    Parameters
    ----------
    estimator : estimator
        Unfitted private estimator (it must set ``dp_event_`` and
        ``delta_``). ``random_state`` is set per run when it is a parameter.
    neighbours : Neighbours
        The two datasets, from :func:`make_neighbours`. Their relation must be
        the estimator's ``adjacency_`` (checked on a probe fit); an
        ``"attribute"`` pair, a replacement of one record's attribute, is
        audited against a replace-one or attribute-level guarantee only.
        The two probe fits must agree on ``n_public_`` and ``silos_`` where
        they set them (the canary is a private record, and a replaced one
        shares its public status).
    n_runs : int, default=1000
        Total number of fits, split evenly between the two worlds.
    statistic : "auto" or callable, default="auto"
        ``statistic(fitted_estimator, canary_X, canary_y) -> float``; "auto"
        is :func:`canary_statistic`, for estimators with ``predict``
        (classifiers and regressors): for another estimator (a private
        transformer) it is refused before any fit, and a callable is needed.
    deltas : "auto" or sequence of float, default="auto"
        Deltas of the profile the test may compare at (see
        :func:`audit_scores`).
    confidence : float, default=0.95
        Confidence of the lower bound.
    selection_fraction : float, default=0.5
        Fraction of the runs that choose the test; the rest evaluate it.
    random_state : int or None, default=0
        Seeds the runs (each run gets its own seed, spawned by
        :class:`numpy.random.SeedSequence`); None draws fresh OS entropy. A
        ``RandomState`` or ``Generator`` is refused (``TypeError``).
    n_jobs : int, default=None
        Parallel fits (joblib). Their warnings are silenced; under a
        thread-based joblib backend, in every thread of the process while
        they run.

    Returns
    -------
    result : AuditResult
        The lower bound, the claim at the same delta and the verdict.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair import DPLogisticRegression
    >>> from sklearn_dpfair.audit import audit_estimator, make_neighbours
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(50, 3)); X[:, 0] = 0.0
    >>> y = (X[:, 1] > 0).astype(int)
    >>> nb = make_neighbours(X, y, canary=(np.array([1e3, 0.0, 0.0]), 1))
    >>> clf = DPLogisticRegression(epsilon=2.0, classes=[0, 1], batch_size="full",
    ...                            max_iter=1, accountant="pld")
    >>> result = audit_estimator(clf, nb, n_runs=200)
    >>> result.violation
    False
    """
    n_runs = _check_runs(n_runs)
    # Before any fit: options that are wrong are refused at once.
    check_audit_options(
        confidence, selection_fraction, deltas, n_runs // 2, n_runs // 2
    )
    if isinstance(statistic, str) and statistic == "auto":
        # canary_statistic queries the model's prediction at the canary: a
        # transformer has none, which only the first run would reveal.
        if not hasattr(estimator, "predict"):
            raise ValueError(
                "statistic='auto' scores a classifier's or a regressor's "
                f"prediction at the canary, and {type(estimator).__name__} has no "
                "predict: pass statistic=callable(fitted, canary_X, canary_y) -> "
                "float that reads what the estimator releases (e.g. a "
                "transformer's output at the canary)."
            )
        statistic = canary_statistic
    elif not callable(statistic):
        raise TypeError("statistic must be 'auto' or a callable.")
    _check_silo_counts(neighbours)
    seeds0, seeds1 = _seeds(random_state, n_runs // 2)

    # Probe fits: the claims in both worlds (n differs by one under
    # add/remove, so the events may differ slightly; the larger counts).
    # They show the estimator's warnings, the repeated runs do not.
    probes = [
        _fit_once(estimator, neighbours.without, seeds0[0], show_warnings=True),
        _fit_once(estimator, neighbours.with_canary, seeds1[0], show_warnings=True),
    ]
    for probe in probes:
        require_claim(probe)
    adjacency = getattr(probes[0], "adjacency_", None)
    if adjacency is not None and not _pair_is_covered(neighbours.adjacency, adjacency):
        raise ValueError(
            f"The neighbours differ by {neighbours.adjacency!r} but the estimator's "
            f"guarantee is stated for {adjacency!r}; build the matching pair with "
            "make_neighbours(adjacency=...)."
            + (
                " An attribute change replaces one record, which an add/remove "
                "guarantee covers only at twice its epsilon."
                if neighbours.adjacency == "attribute"
                else ""
            )
        )

    _check_public_status(probes)
    # The claimed profile before the repeated fits: a claim the accountant
    # refuses at one of the deltas is refused now, not after them. The whole
    # release is audited: its delta includes what a partition-selection
    # threshold spends outside dp_event_ (the larger world's, which claims
    # more at every delta).
    additional = max(record_additional_delta(p) for p in probes)
    claim = dict(
        delta=max(p.delta_ for p in probes) + additional,
        dp_event=[p.dp_event_ for p in probes],
        additional_delta=additional,
    )
    claimed_epsilons(**claim, deltas=deltas)

    def scores(data, seeds):
        arguments = (
            (estimator, data, s, statistic, neighbours.canary_X, neighbours.canary_y)
            for s in seeds
        )
        return repeat_quietly(_estimator_run, arguments, n_jobs)

    s0 = scores(neighbours.without, seeds0)
    s1 = scores(neighbours.with_canary, seeds1)
    return audit_scores(
        s0,
        s1,
        **claim,
        deltas=deltas,
        confidence=confidence,
        selection_fraction=selection_fraction,
    )


def audit_mechanism(
    mechanism,
    data_without,
    data_with,
    *,
    delta,
    dp_event=None,
    epsilon=None,
    n_runs=1000,
    statistic=None,
    deltas="auto",
    confidence=0.95,
    selection_fraction=0.5,
    random_state=0,
    additional_delta=0.0,
):
    """Empirical privacy audit of a mechanism ``mechanism(data, rng)``.

    Parameters
    ----------
    mechanism : callable
        ``mechanism(data, rng) -> output``; ``rng`` is a
        :class:`numpy.random.Generator` seeded per run.
    data_without, data_with : object
        Two neighbouring inputs (passed to ``mechanism`` as they are).
    delta : float
        Delta of the claim, in [0, 1), ``additional_delta`` included.
    dp_event : dp_accounting.DpEvent, default=None
        Claimed event (its whole privacy profile is audited). Give either
        ``dp_event`` or ``epsilon``, not both.
    epsilon : float, default=None
        Claimed epsilon at ``delta`` (>= 0; ``inf`` claims nothing), when no
        event is given.
    n_runs : int, default=1000
        Total number of runs, split evenly between the two inputs.
    statistic : callable, default=None
        ``statistic(output) -> float``; None takes ``float(output)``.
    deltas : "auto" or sequence of float, default="auto"
        Deltas of the profile the test may compare at.
    confidence : float, default=0.95
        Confidence of the lower bound.
    selection_fraction : float, default=0.5
        Fraction of the runs that choose the test.
    random_state : int or None, default=0
        Seeds the runs (as in :func:`audit_estimator`).
    additional_delta : float, default=0.0
        Part of ``delta`` that ``mechanism`` spends outside ``dp_event`` (a
        partition-selection threshold), in [0, ``delta``]: the event's claim
        at an audit delta ``d`` is its epsilon at ``d - additional_delta``
        (see :func:`audit_scores`).

    Returns
    -------
    result : AuditResult
        The lower bound, the claim at the same delta and the verdict.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.audit import audit_mechanism
    >>> from sklearn_dpfair.privacy import GaussianMechanism
    >>> from sklearn_dpfair.privacy._accounting import gaussian_event
    >>> mech = GaussianMechanism(clip_norm=1.0, noise_multiplier=1.0)
    >>> def release(data, rng):
    ...     return float(mech.privatize(np.sum(data), rng))
    >>> result = audit_mechanism(release, [0.0] * 9, [0.0] * 9 + [1.0],
    ...                          delta=1e-5, dp_event=gaussian_event(1.0),
    ...                          n_runs=400)
    >>> result.violation
    False
    """
    n_runs = _check_runs(n_runs)
    # Before the runs: a claim or an option that cannot be audited is
    # refused at once.
    check_audit_options(
        confidence, selection_fraction, deltas, n_runs // 2, n_runs // 2
    )
    # The claimed profile too: an event the accountant cannot evaluate at
    # one of the deltas is refused before the runs, not after them.
    claimed_epsilons(
        delta, dp_event, epsilon, deltas, additional_delta=additional_delta
    )
    if not callable(mechanism):
        raise TypeError(
            "mechanism must be a callable mechanism(data, rng), got "
            f"{type(mechanism).__name__}."
        )
    if statistic is None:
        statistic = float
    elif not callable(statistic):
        raise TypeError("statistic must be None or a callable.")
    seeds0, seeds1 = _seeds(random_state, n_runs // 2)
    s0 = [statistic(mechanism(data_without, np.random.default_rng(s))) for s in seeds0]
    s1 = [statistic(mechanism(data_with, np.random.default_rng(s))) for s in seeds1]
    return audit_scores(
        s0,
        s1,
        delta=delta,
        dp_event=dp_event,
        epsilon=epsilon,
        deltas=deltas,
        confidence=confidence,
        selection_fraction=selection_fraction,
        additional_delta=additional_delta,
    )


def _check_public_status(probes):
    """Refuse worlds that differ in which records are public or in the silos.

    Semi-DP guarantees (Lowy et al. 2023) protect the private records given
    the public ones, and a federated guarantee is stated given the silos:
    two worlds with a different number of public rows (a public record
    replaced by a private one, or a public canary) or different silos are
    not neighbours under either, and an audit of them could report a
    violation the claim never excluded.
    """
    for attr in ("n_public_", "silos_"):
        values = [getattr(p, attr, None) for p in probes]
        if not np.array_equal(*(np.asarray(v, dtype=object) for v in values)):
            raise ValueError(
                f"The two worlds' fits differ in {attr} ({values[0]!r} without "
                f"the canary, {values[1]!r} with it): the canary and the record "
                "it replaces must share their public status (public_mask, silos), "
                "and the canary must be a private record. Build the pair with "
                "make_neighbours, giving the canary public_mask=False and an "
                "existing silo."
            )


def _silo_counts(data):
    """Records per silo of one world (None without a ``silos`` fit argument)."""
    silos = data.fit_params.get("silos")
    if silos is None:
        return None
    labels = silos.tolist() if hasattr(silos, "tolist") else list(silos)
    return Counter(labels)


def _check_silo_counts(neighbours):
    """Refuse worlds whose silos hold other numbers of records than neighbours do.

    A federated guarantee is stated given the silos: neighbours differ in
    one record of one silo. Under add/remove one silo holds one more record
    with the canary; under replace-one or an attribute change every silo
    holds as many records in both worlds. Equal *sets* of silo labels (what
    the probe fits record in ``silos_``) miss a record moved from one silo
    to another, which no per-silo claim covers.
    """
    counts = [_silo_counts(neighbours.without), _silo_counts(neighbours.with_canary)]
    if counts[0] is None and counts[1] is None:
        return
    if None in counts:
        raise ValueError(
            "Only one of the two worlds has a silos fit argument: build the pair "
            "with make_neighbours, giving silos in fit_params."
        )
    added = counts[1] - counts[0]
    removed = counts[0] - counts[1]
    if neighbours.adjacency == "add_remove":
        fits = not removed and sum(added.values()) == 1
        expected = "one silo holds one more record with the canary, the others as many"
    else:
        fits = not added and not removed
        expected = "every silo holds as many records in both worlds"
    if not fits:
        raise ValueError(
            f"The two worlds' silos hold other numbers of records than "
            f"{neighbours.adjacency!r} neighbours do ({expected}): a record moved "
            "between silos is not a neighbour under a per-silo guarantee. Build "
            "the pair with make_neighbours, giving the canary an existing silo."
        )


def _pair_is_covered(pair, adjacency):
    """Whether a guarantee stated for ``adjacency`` covers the ``pair`` at its epsilon.

    An attribute change replaces one record: a replace-one guarantee covers
    it, as does an attribute-level one; an add/remove guarantee covers it
    only at twice its epsilon (group privacy), which is not the claim.
    """
    if pair == "attribute":
        return adjacency == "replace_one" or any(
            word in adjacency for word in ("attribute", "sensitive")
        )
    return adjacency == pair
