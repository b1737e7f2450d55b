"""Shuffle-model federated learning: the amplification bound and the protocol."""

import math
import warnings

import dp_accounting
import numpy as np
import pytest
from scipy import stats

from sklearn_dpfair import DPLogisticRegression
from sklearn_dpfair._loss import BinaryLogisticLoss
from sklearn_dpfair.exceptions import PrivacyBudgetError
from sklearn_dpfair.federated import FederationConfig, fit_federated
from sklearn_dpfair.federated._amplification import (
    closed_form_shuffle_epsilon,
    compose_epsilon_delta,
    shuffle_delta,
    shuffle_epsilon,
)
from sklearn_dpfair.federated._shuffle import (
    ShuffledSilo,
    calibrate_local_epsilon,
    isrl_shuffle_epsilon,
    l1_clipped_outer,
    recompute_isrl_epsilon,
    shuffle_isrl_record,
    shuffle_record,
)


def _brute_force_delta(n, eps0, eps):
    """Hockey-stick divergence of the FMT 2021 pair by full enumeration."""
    a, e = math.exp(eps0) / (math.exp(eps0) + 1), math.exp(eps)
    d_pq = d_qp = 0.0
    for c in range(n):
        w = stats.binom.pmf(c, n - 1, math.exp(-eps0))
        b = stats.binom.pmf(np.arange(c + 1), c, 0.5)
        b_here, b_shift = np.r_[b, 0.0], np.r_[0.0, b]
        p = a * b_here + (1 - a) * b_shift
        q = (1 - a) * b_here + a * b_shift
        d_pq += w * np.maximum(p - e * q, 0).sum()
        d_qp += w * np.maximum(q - e * p, 0).sum()
    return max(d_pq, d_qp)


@pytest.mark.parametrize(
    "n, eps0, eps", [(50, 1.0, 0.3), (10, 2.0, 1.0), (200, 3.0, 0.5), (7, 0.5, 0.05)]
)
def test_shuffle_delta_equals_enumeration(n, eps0, eps):
    # The CDF-cutoff sum is the divergence itself, not an approximation.
    assert shuffle_delta(n, eps0, eps) == pytest.approx(
        _brute_force_delta(n, eps0, eps), rel=1e-9, abs=1e-15
    )


def test_shuffle_epsilon_within_the_authors_bracket():
    # apple/ml-shuffling-amplification README: n = 1e5 reports, eps0 = 4,
    # delta = 1e-6 gives eps between 0.1675385583317841 (lower) and
    # 0.172790550755978 (upper) with their stepped computation; the exact
    # sum lies between, and below the closed form (0.5378 in their code).
    eps = shuffle_epsilon(10**5, 4.0, 1e-6)
    assert 0.1675385583317841 <= eps <= 0.172790550755978
    assert (
        eps < closed_form_shuffle_epsilon(10**5, 4.0, 1e-6) < 0.5378040242374512 + 1e-3
    )


def test_shuffle_epsilon_is_a_valid_epsilon():
    eps = shuffle_epsilon(1000, 2.0, 1e-6)
    assert shuffle_delta(1000, 2.0, eps) <= 1e-6
    assert shuffle_delta(1000, 2.0, 0.99 * eps) > 1e-6


def test_more_silos_smaller_epsilon():
    eps = [shuffle_epsilon(n, 1.0, 1e-6) for n in (100, 1000, 10000)]
    assert eps[0] > eps[1] > eps[2]
    recs = [
        shuffle_record(2.0, n_silos=n, n_min=100, rounds=20, delta=1e-5).epsilon
        for n in (100, 1000, 10000)
    ]
    assert recs[0] > recs[1] > recs[2]


def test_few_silos_no_amplification():
    # With ten silos the bound gives (almost) nothing: we do not claim more.
    assert shuffle_epsilon(10, 1.0, 1e-6) == pytest.approx(1.0, rel=1e-5)


def test_shuffle_record_recomputed_from_its_fields():
    rec = shuffle_record(2.0, n_silos=2000, n_min=300, rounds=40, delta=1e-5)
    assert rec.recompute_epsilon() == pytest.approx(rec.epsilon, rel=1e-9)
    assert rec.round_delta * rec.rounds < rec.delta
    assert "trusted shuffler" in rec.trust_model


def test_isrl_record_recomputed_and_grows_with_rounds():
    # dp-accounting's PLDAccountant composes a self-composed
    # RandomizedResponseDpEvent once; the record must count every round.
    one = isrl_shuffle_epsilon(3.0, 200, 1, 1e-6)
    many = isrl_shuffle_epsilon(3.0, 200, 400, 1e-6)
    assert many > 5 * one
    rec = shuffle_isrl_record(3.0, 200, 400, 1e-6, clip_norm=1.0)
    assert recompute_isrl_epsilon(rec) == pytest.approx(rec.epsilon, rel=1e-9)
    assert rec.adjacency == "replace_one"
    # Every round written out, so that dp-accounting's own PLD accountant
    # (which reads a self-composed randomized response as one round) gives
    # the record's epsilon too.
    assert isinstance(rec.dp_event, dp_accounting.ComposedDpEvent)
    assert len(rec.dp_event.events) == 400
    accountant = dp_accounting.pld.PLDAccountant(
        dp_accounting.NeighboringRelation.REPLACE_ONE
    )
    accountant.compose(rec.dp_event)
    assert accountant.get_epsilon(1e-6) == pytest.approx(rec.epsilon, rel=1e-3)


def test_compose_matches_pld_of_pure_dp():
    # (eps, 0) composition through the (eps, delta) route equals dp-accounting's
    # randomized response composition.
    from dp_accounting.pld import privacy_loss_distribution as pld

    ref = (
        pld.from_randomized_response(
            2 / (1 + math.exp(0.2)), 2, value_discretization_interval=1e-4
        )
        .self_compose(50)
        .get_epsilon_for_delta(1e-6)
    )
    assert compose_epsilon_delta(0.2, 0.0, 50, 1e-6) == pytest.approx(ref, rel=1e-3)


def _silo(X, y, eps0=1.0, rounds=3, seed=0):
    config = FederationConfig(
        rounds=rounds, sampling_probability=1.0, learning_rate=1.0, clip_norm=1.0
    )
    rec = shuffle_isrl_record(eps0, len(X), rounds, 1e-6 / len(X), clip_norm=1.0)
    return ShuffledSilo(
        X,
        y,
        loss=BinaryLogisticLoss(),
        config=config,
        eps0=eps0,
        record=rec,
        random_state=seed,
    )


@pytest.mark.parametrize("other", [[[1e300, -1e300]], [[0.0, 0.0]], [[-3.0, 7.0]]])
def test_neighbouring_records_move_a_report_by_at_most_2C(other):
    # Same seed: same noise; the reports differ only by the clipped gradients.
    w = np.array([[0.3], [-0.2], [0.1]])
    a = _silo(np.array([[2.0, 5.0]]), np.array([1.0])).message(w, 0).gradient
    b = _silo(np.array(other), np.array([0.0])).message(w, 0).gradient
    assert np.isfinite(b).all()
    assert np.abs(a - b).sum() <= 2.0 + 1e-9


def test_the_record_states_the_laplace_noise_that_runs():
    # Scale 2C / eps0 on every coordinate, one uniformly drawn record per
    # round: no Poisson rate.
    silo = _silo(np.ones((4, 2)), np.array([0.0, 1.0, 0.0, 1.0]), eps0=3.0)
    rec = silo.report().privacy_record
    mechanism = silo._mechanism
    assert rec.noise_multiplier * rec.clip_norm == pytest.approx(2.0 / 3.0)
    assert mechanism.noise_multiplier * mechanism.sensitivity == pytest.approx(
        2.0 / 3.0
    )
    assert rec.sampling_probability is None
    assert "Poisson" not in rec.technical_text()


def test_silo_refuses_more_reports_than_accounted():
    silo = _silo(np.ones((4, 2)), np.array([0.0, 1.0, 0.0, 1.0]), rounds=2)
    w = np.zeros((3, 1))
    silo.message(w, 0)
    silo.message(w, 1)
    with pytest.raises(PrivacyBudgetError):
        silo.message(w, 2)


def _data(n_silos=6, per=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_silos * per, 3))
    y = (X[:, 0] > 0).astype(float)
    return {s: (X[s::n_silos], y[s::n_silos]) for s in range(n_silos)}


def test_eps_inf_parity_with_plain_gradient_descent():
    # One record per silo and no noise: each round is exact full-batch GD on
    # the pooled records, whatever the shuffler's order.
    rng = np.random.default_rng(1)
    X = rng.normal(size=(5, 2))
    y = np.array([0.0, 1.0, 1.0, 0.0, 1.0])
    data = {s: (X[s : s + 1], y[s : s + 1]) for s in range(5)}
    config = FederationConfig(
        rounds=4, sampling_probability=1.0, learning_rate=0.5, tail_fraction=1.0
    )
    fit = fit_federated(
        data,
        loss=BinaryLogisticLoss(),
        config=config,
        silo_epsilon=math.inf,
        silo_delta=0.5,
        shuffle=True,
        random_state=0,
    )
    w, b, iterates = np.zeros(2), 0.0, []
    for _ in range(4):
        r = 1 / (1 + np.exp(-(X @ w + b))) - y
        w, b = w - 0.5 * (X.T @ r) / 5, b - 0.5 * r.mean()
        iterates.append(np.r_[w, b])
    ref = np.mean(iterates, axis=0)
    np.testing.assert_allclose(fit.coef[0], ref[:2], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fit.intercept, ref[2:], rtol=1e-10, atol=1e-12)
    assert math.isinf(fit.shuffle_record.epsilon)


def test_server_sees_only_anonymous_slots():
    data = _data()
    config = FederationConfig(rounds=3, sampling_probability=1.0, learning_rate=1.0)
    fit = fit_federated(
        data,
        loss=BinaryLogisticLoss(),
        config=config,
        silo_epsilon=2.0,
        silo_delta=1e-5,
        shuffle=True,
        random_state=0,
        record_transcript=True,
    )
    assert len(fit.transcript) == 3 * 6
    for r in range(3):
        slots = [m.silo_id for m in fit.transcript if m.round_index == r]
        assert slots == list(range(6))
    # Both guarantees, each labelled with its trust model.
    assert "no trusted" in fit.privacy_record.mechanism
    assert "CONDITIONAL" in fit.shuffle_record.trust_model
    assert fit.privacy_record.epsilon <= 2.0
    # epsilon recomputed from what each fitted record holds.
    assert recompute_isrl_epsilon(fit.privacy_record) == pytest.approx(
        fit.privacy_record.epsilon, rel=1e-9
    )
    assert fit.shuffle_record.recompute_epsilon() == pytest.approx(
        fit.shuffle_record.epsilon, rel=1e-9
    )


@pytest.mark.parametrize(
    "kwargs",
    [
        {"server_weights": "size"},
        {"noise_multiplier": 1.0},
        {"execution": "dask"},
        {"secure_aggregation": True},
    ],
)
def test_shuffle_refuses_what_it_cannot_account(kwargs):
    config = FederationConfig(rounds=2, sampling_probability=1.0, learning_rate=1.0)
    name = next(iter(kwargs))
    with pytest.raises(ValueError, match=name):
        fit_federated(
            _data(),
            loss=BinaryLogisticLoss(),
            config=config,
            silo_epsilon=1.0,
            silo_delta=1e-5,
            shuffle=True,
            **kwargs,
        )


def test_shuffle_refuses_local_steps():
    config = FederationConfig(
        rounds=2, sampling_probability=1.0, learning_rate=1.0, local_steps=2
    )
    with pytest.raises(ValueError, match="local_steps"):
        fit_federated(
            _data(),
            loss=BinaryLogisticLoss(),
            config=config,
            silo_epsilon=1.0,
            silo_delta=1e-5,
            shuffle=True,
        )


def test_estimator_routes_shuffle_and_reports_both_guarantees():
    import sklearn
    from sklearn.model_selection import cross_validate

    rng = np.random.default_rng(0)
    X = rng.normal(size=(1200, 3))
    y = (X[:, 0] > 0).astype(int)
    silos = np.arange(1200) % 6
    clf = DPLogisticRegression(
        classes=[0, 1], epsilon=2.0, shuffle=True, max_iter=1, random_state=0
    )
    clf.fit(X, y, silos=silos)
    assert clf.epsilon_ <= 2.0
    assert clf.shuffle_epsilon_ == clf.shuffle_privacy_record_.epsilon
    with sklearn.config_context(enable_metadata_routing=True):
        clf.set_fit_request(silos=True)
        res = cross_validate(clf, X, y, cv=2, params={"silos": silos})
    assert res["test_score"].shape == (2,)


def test_seeded_records_say_so_and_utility_rises_with_epsilon():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(2000, 2))
    y = (X[:, 0] > 0).astype(float)
    data = {s: (X[s::10], y[s::10]) for s in range(10)}
    config = FederationConfig(rounds=300, sampling_probability=1.0)
    acc = {}
    for eps in (0.02, math.inf):
        fit = fit_federated(
            data,
            loss=BinaryLogisticLoss(),
            config=config,
            silo_epsilon=eps,
            silo_delta=1e-5,
            shuffle=True,
            random_state=0,
        )
        acc[eps] = np.mean(((X @ fit.coef.T)[:, 0] + fit.intercept[0] > 0) == y)
        assert fit.privacy_record.seed is not None
        assert fit.shuffle_record.seed == fit.privacy_record.seed
        assert all(r.privacy_record.seed for r in fit.silo_reports.values())
    assert acc[math.inf] > 0.95
    assert acc[math.inf] > acc[0.02] + 0.05


def test_silo_checks_its_laplace_releases_against_the_plan():
    from sklearn_dpfair.exceptions import PrivacyAccountingError
    from sklearn_dpfair.privacy import LaplaceMechanism

    silo = _silo(np.ones((4, 2)), np.array([0.0, 1.0, 0.0, 1.0]), rounds=3)
    w = np.zeros((3, 1))
    silo.message(w, 0)
    # A plan of one release at another noise level: the next report is refused.
    silo._planned = LaplaceMechanism(2.0, 0.5).event(steps=1)
    with pytest.raises(PrivacyAccountingError):
        silo.message(w, 1)


def _no_release(monkeypatch):
    """Make any Laplace release fail the test (checks come before releases)."""
    from sklearn_dpfair.privacy import LaplaceMechanism

    def privatize(self, vector, rng):
        raise AssertionError("a report was released")

    monkeypatch.setattr(LaplaceMechanism, "privatize", privatize)


def _fit_shuffled(data, config, silo_epsilon, **kwargs):
    return fit_federated(
        data,
        loss=BinaryLogisticLoss(),
        config=config,
        silo_epsilon=silo_epsilon,
        silo_delta=1e-5,
        shuffle=True,
        random_state=0,
        **kwargs,
    )


def test_an_unclipped_report_is_refused_under_a_finite_budget(monkeypatch):
    # Laplace noise has no scale for an unclipped gradient: a finite budget
    # with clip_norm=inf is refused before any report, not accounted with a
    # stand-in sensitivity.
    config = FederationConfig(
        rounds=2, sampling_probability=1.0, learning_rate=1.0, clip_norm=math.inf
    )
    _no_release(monkeypatch)
    with pytest.raises(ValueError, match="clip_norm must be finite"):
        _fit_shuffled(_data(), config, 1.0)
    with pytest.raises(ValueError, match="clip_norm must be finite"):
        _fit_shuffled(_data(), config, {s: 1.0 if s else math.inf for s in range(6)})
    monkeypatch.undo()
    # Non-private silos neither clip nor add noise: nothing to scale.
    fit = _fit_shuffled(_data(), config, math.inf)
    assert math.isinf(fit.privacy_record.epsilon)
    assert np.isfinite(fit.coef).all()


def test_a_laplace_scale_that_overflows_is_refused(monkeypatch):
    # 2C / eps0 overflows float64 for a finite C: every report would be inf.
    config = FederationConfig(
        rounds=2, sampling_probability=1.0, learning_rate=1.0, clip_norm=1e308
    )
    _no_release(monkeypatch)
    with pytest.raises(ValueError, match="clip_norm is too large"):
        _fit_shuffled(_data(), config, 1.0)


def test_auto_learning_rate_is_capped_for_the_penalty():
    # The user set no step: "auto" must not exceed 1 / alpha, as in the
    # ISRL-DP fit (the penalty's step diverges beyond 2 / alpha).
    for eps in (math.inf, 8.0):
        config = FederationConfig(rounds=2, sampling_probability=1.0, alpha=10.0)
        fit = _fit_shuffled(_data(), config, eps)
        assert np.isfinite(fit.coef).all()


def test_a_budget_below_the_accountants_floor_is_a_budget_error():
    # Tiny eps0 make p = 2 / (1 + e^eps) round to 1 (no randomized-response
    # event exists); the bisection must end in the budget error instead.
    with pytest.raises(PrivacyBudgetError, match="no local epsilon"):
        calibrate_local_epsilon({"a": 100}, {"a": 1e-3}, {"a": 1e-6}, 50)
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(2000, 3))
    clf = DPLogisticRegression(classes=[0, 1], epsilon=0.002, delta=1e-6, shuffle=True)
    with pytest.raises(PrivacyBudgetError, match="no local epsilon"):
        clf.fit(X, (X[:, 0] > 0).astype(int), silos=np.arange(2000) % 10)


def test_an_empty_silo_is_refused(monkeypatch):
    data = _data()
    data[0] = (np.zeros((0, 3)), np.zeros(0))
    config = FederationConfig(rounds=2, sampling_probability=1.0, learning_rate=1.0)
    _no_release(monkeypatch)
    with pytest.raises(ValueError, match="silo 0 has 0 rows"):
        _fit_shuffled(data, config, 1.0)


@pytest.mark.parametrize("bad", [np.nan, np.inf, 1e308])
def test_a_non_finite_or_huge_label_gives_finite_reports_and_no_warning(bad):
    # The labels are private: whatever a record holds, its report is finite
    # and nothing (no NaN report, no overflow warning) depends on it.
    X = np.random.default_rng(0).normal(size=(40, 2))
    y = (X[:, 0] > 0).astype(float)
    y_bad = y.copy()
    y_bad[0::2] = bad
    data = {0: (X[:20], y_bad[:20]), 1: (X[20:], y[20:])}
    config = FederationConfig(rounds=10, sampling_probability=1.0, learning_rate=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit = fit_federated(
            data,
            loss=BinaryLogisticLoss(),
            config=config,
            silo_epsilon=5.0,
            silo_delta=1e-3,
            shuffle=True,
            random_state=1,
            record_transcript=True,
        )
    assert all(np.isfinite(m.gradient).all() for m in fit.transcript)
    assert np.isfinite(fit.coef).all()


@pytest.mark.parametrize(
    "r", [[1e308], [1.7e308, -1.7e308, 1e308], [np.nan], [np.inf, 1.0], [0.0]]
)
def test_every_clipped_term_is_finite_and_within_the_l1_bound(r):
    row = np.array([1e300, -3.0, 0.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = l1_clipped_outer(row, np.array(r), 2.0)
    assert g.shape == (4, len(r)) and np.isfinite(g).all()
    assert np.abs(g).sum() <= 2.0 * (1 + 1e-12)
    if not np.isfinite(r).all():
        assert not g.any()  # a non-finite raw gradient contributes zero


def test_a_shuffled_silo_tells_a_wrong_shape_from_a_non_finite_model():
    silo = _silo(np.array([[2.0, 5.0]]), np.array([1.0]))
    with pytest.raises(ValueError, match=r"shape \(3, 1\); got shape \(2, 1\)\.$"):
        silo.message(np.zeros((2, 1)), 0)
    with pytest.raises(ValueError, match="model is not finite.*learning_rate"):
        silo.message(np.full((3, 1), np.nan), 0)


def test_a_ledger_of_another_kind_than_pld_is_refused_before_any_report(monkeypatch):
    # eps0 is calibrated, and the record accounted, with PLD; an RDP ledger
    # totalled the same fit at epsilon=2 to ~2.0007, past the budget.
    from sklearn_dpfair.federated._shuffle import ShuffledSilo
    from sklearn_dpfair.privacy import PrivacyLedger

    sent = []
    message = ShuffledSilo.message

    def counted(self, *args, **kwargs):
        sent.append(1)
        return message(self, *args, **kwargs)

    monkeypatch.setattr(ShuffledSilo, "message", counted)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 3))
    y = (X[:, 0] > 0).astype(int)
    silos = np.repeat(["a", "b", "c"], 200)
    rdp = PrivacyLedger(kind="rdp")
    est = DPLogisticRegression(
        classes=[0, 1], epsilon=2.0, shuffle=True, max_iter=1, accountant=rdp
    )
    with pytest.raises(ValueError, match="accountant.*kind 'rdp'"):
        est.fit(X, y, silos=silos)
    assert sent == [] and len(rdp) == 0
    assert not hasattr(est, "privacy_record_")
    pld = PrivacyLedger(kind="pld")
    est.set_params(accountant=pld).fit(X, y, silos=silos)
    assert sent and len(pld) == 1
    assert pld.total_epsilon(est.delta_) <= 2.0
