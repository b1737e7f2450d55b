# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""White-box gradient-canary audits and the privatize hook they use."""

import dataclasses
import warnings
from types import SimpleNamespace

import numpy as np
import pytest
from sklearn.base import BaseEstimator
from sklearn.linear_model import LogisticRegression

from sklearn_dpfair import DPLogisticRegression, DPMLPClassifier, HeavyTailDPRegressor
from sklearn_dpfair.audit import (
    audit_gradient_canary,
    audit_scores,
    canary_log_likelihood_ratio,
)
from sklearn_dpfair.audit._gradient_canary import _CanaryObserver
from sklearn_dpfair.privacy import GaussianMechanism
from sklearn_dpfair.privacy._accounting import gaussian_event, noisy_sgd_event
from sklearn_dpfair.privacy._mechanism import _OBSERVER, observe_privatize


def _traces(rng, n, q, n_steps, sigma, inside):
    """Normalised canary traces ``b_t + sigma z_t`` of ``n`` independent canaries."""
    b = (rng.random((n_steps, n)) < q) if inside else np.zeros((n_steps, n))
    return b + sigma * rng.normal(size=(n_steps, n))


# -- the statistic -----------------------------------------------------------------


def test_llr_is_the_gaussian_llr_without_subsampling():
    # q = 1: log N(x; 1, s^2) - log N(x; 0, s^2) = (2x - 1) / (2 s^2), summed.
    x = np.array([0.3, -1.2, 2.0])
    s = 1.7
    expected = np.sum((2 * x - 1) / (2 * s**2))
    assert canary_log_likelihood_ratio(x, s, 1.0) == pytest.approx(expected)
    # Per-step noise multipliers and several canaries at once.
    X = np.stack([x, -x], axis=1)
    sig = np.array([1.0, 2.0, 0.5])
    out = canary_log_likelihood_ratio(X, sig, 1.0)
    assert out == pytest.approx(
        [np.sum((2 * x - 1) / (2 * sig**2)), np.sum((-2 * x - 1) / (2 * sig**2))]
    )


def test_llr_is_the_mixture_llr_with_subsampling():
    x, s, q = np.array([0.4, 1.5]), 2.0, 0.1

    def pdf(v, m):
        return np.exp(-((v - m) ** 2) / (2 * s**2))

    expected = np.sum(np.log((q * pdf(x, 1.0) + (1 - q) * pdf(x, 0.0)) / pdf(x, 0.0)))
    assert canary_log_likelihood_ratio(x, s, q) == pytest.approx(expected)
    # Extreme observations stay finite (log-sum-exp).
    assert np.isfinite(canary_log_likelihood_ratio([1e6, -1e6], 0.5, 0.01))
    with pytest.raises(ValueError, match="sampling_probability"):
        canary_log_likelihood_ratio(x, s, 0.0)
    with pytest.raises(ValueError, match="noise multiplier"):
        canary_log_likelihood_ratio(x, 0.0, 0.5)


def test_llr_flags_halved_noise_and_not_the_declared_noise():
    # DP-SGD's view of one canary: T = 30 steps, q = 0.2, declared sigma = 2
    # (epsilon ~ 1.3 at 1e-5). 4,000 trials per world (2,000 evaluate).
    q, n_steps, sigma, n = 0.2, 30, 2.0, 4000
    claim = noisy_sgd_event(sigma, q, n_steps)
    for true_sigma, flagged in ((sigma, False), (sigma / 2, True)):
        rng = np.random.default_rng(0)
        s0 = canary_log_likelihood_ratio(
            _traces(rng, n, q, n_steps, true_sigma, False), sigma, q
        )
        s1 = canary_log_likelihood_ratio(
            _traces(rng, n, q, n_steps, true_sigma, True), sigma, q
        )
        result = audit_scores(s0, s1, delta=1e-5, dp_event=claim)
        assert result.conclusive
        assert result.violation is flagged, str(result)


# -- the hook ----------------------------------------------------------------------


class _PassThrough:
    calls = 0

    def before_noise(self, mechanism, clipped_sum):
        return clipped_sum

    def after_noise(self, mechanism, noisy_sum):
        self.calls += 1


def test_privatize_is_unchanged_without_an_observer():
    mech = GaussianMechanism(clip_norm=2.0, noise_multiplier=1.5)
    total = np.arange(6.0).reshape(3, 2)
    expected = total + np.random.default_rng(7).normal(0.0, 3.0, size=(3, 2))
    assert _OBSERVER.get() is None
    assert np.array_equal(mech.privatize(total, np.random.default_rng(7)), expected)
    # A pass-through observer sees the call and changes nothing.
    with observe_privatize(_PassThrough()) as seen:
        inside = mech.privatize(total, np.random.default_rng(7))
    assert seen.calls == 1 and np.array_equal(inside, expected)
    # Unset again afterwards, also when the block raises.
    with pytest.raises(RuntimeError), observe_privatize(_PassThrough()):
        raise RuntimeError
    assert _OBSERVER.get() is None
    assert np.array_equal(mech.privatize(total, np.random.default_rng(7)), expected)


def test_a_fit_is_unchanged_by_an_audit():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 2))
    y = (X[:, 0] > 0).astype(int)
    clf = DPLogisticRegression(epsilon=1.0, classes=[0, 1], max_iter=5, random_state=3)
    before = clf.fit(X, y).coef_.copy()
    audit_gradient_canary(clf, X, y, n_runs=2, n_canaries=2)
    assert np.array_equal(clf.fit(X, y).coef_, before)


def test_observer_inserts_in_canaries_with_probability_q():
    inside = np.arange(400) % 2 == 1
    observer = _CanaryObserver(402, inside, 0.3, np.random.default_rng(0))
    mech = GaussianMechanism(clip_norm=2.0, noise_multiplier=1e-9)
    with observe_privatize(observer):
        for _ in range(50):
            mech.privatize(np.zeros((402, 1)), np.random.default_rng(1))
            # The intercept block (1-D) is left untouched.
            mech.privatize(np.zeros(1), np.random.default_rng(1))
    traces = np.stack(observer.traces)  # (50 steps, 400 canaries), in units of C
    assert traces.shape == (50, 400) and observer.sigmas == [1e-9] * 50
    assert np.all(np.abs(traces[:, ~inside]) < 1e-6)
    assert traces[:, inside].mean() == pytest.approx(0.3, abs=0.03)
    # A record with a gradient in a canary column breaks the audit loudly.
    bad = np.zeros((402, 1))
    bad[-1, 0] = 1.0
    with observe_privatize(observer), pytest.raises(ValueError, match="nonzero"):
        mech.privatize(bad, np.random.default_rng(1))


def test_observer_reads_only_the_first_block_of_a_stacked_release():
    # A network's first layer is (n_features, width); a later layer as wide
    # as X has the same shape and is not where the canaries sit.
    inside = np.ones(2, dtype=bool)
    observer = _CanaryObserver(5, inside, 1.0, np.random.default_rng(0))
    mech = GaussianMechanism(clip_norm=1.0, noise_multiplier=1e-9)
    later = np.zeros((5, 1))
    later[-1, 0] = 3.0  # a hidden unit's gradient, not a canary column
    with observe_privatize(observer):
        first, second = mech.privatize_blocks(
            [np.zeros((5, 5)), later], np.random.default_rng(1)
        )
    assert len(observer.traces) == 1
    assert np.allclose(first[3:, 0], 1.0) and np.allclose(second, later)


def test_gradient_canary_audit_of_a_network_with_a_layer_as_wide_as_X(data):
    # 2 features + 50 canary columns = 52 = the hidden width.
    X, y = data
    clf = DPMLPClassifier(
        epsilon=1.0, classes=[0, 1], hidden_layer_sizes=(52,), max_iter=3
    )
    result = audit_gradient_canary(clf, X, y, n_runs=4, n_canaries=50)
    assert result.conclusive and not result.violation


# -- the audit of estimators -------------------------------------------------------


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    return X, (X[:, 0] > 0).astype(int)


def test_gradient_canary_audit_flags_halved_noise_in_dpsgd(monkeypatch, data):
    # 20 fits x 200 canaries: 2,000 trials per world.
    X, y = data
    clf = DPLogisticRegression(epsilon=1.0, classes=[0, 1], max_iter=20)
    honest = audit_gradient_canary(clf, X, y, n_runs=20, n_canaries=200)
    assert honest.conclusive and not honest.violation
    monkeypatch.setattr(
        GaussianMechanism,
        "noise_std",
        property(lambda self: 0.5 * self.noise_multiplier * self.clip_norm),
    )
    broken = audit_gradient_canary(clf, X, y, n_runs=20, n_canaries=200)
    assert broken.violation, str(broken)


def test_gradient_canary_audit_flags_halved_noise_in_dp_newton(monkeypatch, data):
    # The canary sits in the noisy gradient of every Newton step (full
    # batch: it enters with probability 1); the claim also covers the trace
    # and direction releases, which the canary does not see, so the gradient
    # holds 70% of the budget. At epsilon = 1 halving the noise is beyond
    # what 2,000 trials per world can certify; at epsilon = 4 it is not.
    X, y = data
    clf = DPLogisticRegression(
        solver="dp-newton", feature_norm_bound=2.0, epsilon=4.0, classes=[0, 1]
    )
    kw = dict(n_runs=20, n_canaries=200, sampling_probability=1.0)
    honest = audit_gradient_canary(clf, X, y, **kw)
    assert honest.conclusive and not honest.violation
    monkeypatch.setattr(
        GaussianMechanism,
        "noise_std",
        property(lambda self: 0.5 * self.noise_multiplier * self.clip_norm),
    )
    broken = audit_gradient_canary(clf, X, y, **kw)
    assert broken.violation, str(broken)


def test_gradient_canary_audit_explains_what_it_cannot_audit(data):
    X, y = data
    with pytest.raises(ValueError, match="no privacy claim"):
        audit_gradient_canary(LogisticRegression(), X, y, n_runs=4)
    with pytest.raises(ValueError, match="n_canaries"):
        audit_gradient_canary(DPLogisticRegression(), X, y, n_runs=4, n_canaries=3)
    with pytest.raises(ValueError, match="Too few trials"):
        audit_gradient_canary(DPLogisticRegression(), X, y, n_runs=2, n_canaries=1)
    # The one-pass heavy-tail solver is stated for replace-one neighbours.
    reg = HeavyTailDPRegressor(solver="sgd")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="'replace_one'"):
            audit_gradient_canary(reg, X, X[:, 0], n_runs=4)
    # A claim, but no noisy gradient step to put a canary in.
    with pytest.raises(ValueError, match="DP-SGD-type"):
        audit_gradient_canary(_NoNoisyStep(), X, y, n_runs=4)


def test_gradient_canary_audit_refuses_federated_fits(data):
    # Each silo privatizes its own messages: the observer would plant the
    # canary in every silo's release of a round (one record held by all
    # silos), which the per-silo claim does not cover.
    X, y = data
    silos = np.arange(len(y)) % 3
    clf = DPLogisticRegression(epsilon=1.0, classes=[0, 1], max_iter=2)
    with pytest.raises(ValueError, match="federated.*audit_estimator"):
        audit_gradient_canary(
            clf, X, y, fit_params={"silos": silos}, n_runs=4, n_canaries=2
        )
    # A fit that records silos without a silos= argument is refused too.
    with pytest.raises(ValueError, match="federated.*audit_estimator"):
        audit_gradient_canary(_FederatedRecord(), X, y, n_runs=4)


def test_gradient_canary_audit_says_when_the_canary_columns_trip_small_budget():
    # The heavy-tail "dp-sgd" solver fits a model only when epsilon *
    # n_samples >= max(100, 10 (n_features + 1)): 300 rows afford 4 features
    # but not the 54 that 50 canary columns make.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = X @ np.ones(4) + 0.1 * rng.normal(size=300)
    reg = HeavyTailDPRegressor(solver="dp-sgd")
    for kw in ({}, {"sampling_probability": 0.25}):
        with pytest.raises(
            ValueError, match=r"n_features 4 -> 54.*small-budget rule.*fewer canaries"
        ):
            audit_gradient_canary(reg, X, y, n_runs=4, n_canaries=50, **kw)


class _NoNoisyStep(BaseEstimator):
    def fit(self, X, y):
        self.dp_event_ = gaussian_event(1.0)
        self.delta_ = 1e-5
        self.adjacency_ = "add_remove"
        self.privacy_record_ = SimpleNamespace(sampling_probability=1.0)
        return self


class _FederatedRecord(_NoNoisyStep):
    def fit(self, X, y):
        super().fit(X, y)
        self.silos_ = [0, 1, 2]
        return self


# -- column maps, options and warnings ------------------------------------------------


def _raw_columns(n=2000):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 2)) * 100 + 500
    return X, (X[:, 0] > 500).astype(int)


def test_feature_scaling_auto_without_bounds_is_refused_before_any_fit(monkeypatch):
    # Its private location re-centres the zero canary columns, so the
    # records get a gradient in the canary's coordinate.
    from sklearn_dpfair.audit import _gradient_canary

    def no_fit(*args, **kwargs):
        raise AssertionError("fitted before the column map was checked")

    monkeypatch.setattr(_gradient_canary, "fit_clone", no_fit)
    X, y = _raw_columns()
    clf = DPLogisticRegression(classes=[0, 1], max_iter=1, feature_scaling="auto")
    match = r"must not be re-centred.*feature_scaling=None.*feature_bounds"
    with pytest.raises(ValueError, match=match):
        audit_gradient_canary(clf, X, y, n_runs=4, n_canaries=2)


@pytest.mark.parametrize("bounds", [(0, 1000), [(0, 1000), (0, 1000)]])
def test_feature_bounds_are_extended_to_the_canary_columns(bounds):
    X, y = _raw_columns()
    clf = DPLogisticRegression(
        epsilon=2.0,
        classes=[0, 1],
        max_iter=1,
        batch_size=200,
        feature_scaling="auto",
        feature_bounds=bounds,
    )
    result = audit_gradient_canary(clf, X, y, n_runs=4, n_canaries=20)
    assert not result.violation
    assert clf.feature_bounds is bounds  # the caller's estimator is unchanged


@pytest.mark.parametrize(
    "options",
    [
        {"confidence": 95},
        {"confidence": -0.5},
        {"selection_fraction": 50},
        {"deltas": [2.0]},
    ],
)
def test_gradient_canary_audit_refuses_bad_options_before_any_fit(
    monkeypatch, data, options
):
    from sklearn_dpfair.audit import _gradient_canary

    def no_fit(*args, **kwargs):
        raise AssertionError("fitted before the options were checked")

    monkeypatch.setattr(_gradient_canary, "fit_clone", no_fit)
    X, y = data
    name = next(iter(options))
    with pytest.raises(ValueError, match=name):
        audit_gradient_canary(
            DPLogisticRegression(classes=[0, 1]), X, y, n_runs=4, **options
        )


def test_gradient_canary_audit_refuses_an_unevaluable_claim_before_the_fits(
    monkeypatch, data
):
    import dp_accounting

    from sklearn_dpfair.audit import _gradient_canary

    real_fit = _gradient_canary._counted_fit

    def malformed_claim(*args, **kwargs):
        # A well-typed event the accountant refuses (a NaN noise multiplier).
        fitted, steps = real_fit(*args, **kwargs)
        fitted.dp_event_ = dp_accounting.GaussianDpEvent(np.nan)
        return fitted, steps

    def no_run(*args, **kwargs):
        raise AssertionError("a canary fit ran before the claim was evaluated")

    monkeypatch.setattr(_gradient_canary, "_counted_fit", malformed_claim)
    monkeypatch.setattr(_gradient_canary, "_canary_run", no_run)
    X, y = data
    clf = DPLogisticRegression(classes=[0, 1], batch_size="full", max_iter=1)
    with pytest.raises(ValueError, match="noise_multiplier"):
        audit_gradient_canary(clf, X, y, n_runs=4, n_canaries=2)


def test_gradient_canary_audit_with_a_delta_of_zero_audits_the_other_deltas(data):
    # A Gaussian claim is inf at delta = 0, which the test skips.
    X, y = data
    clf = DPLogisticRegression(classes=[0, 1], batch_size="full", max_iter=1)
    result = audit_gradient_canary(
        clf, X, y, n_runs=4, n_canaries=2, deltas=[0.0, 0.1]
    )
    assert result.audit_delta == 0.1 and np.isfinite(result.epsilon_claimed)


def test_gradient_canary_probe_fit_shows_the_estimators_warnings(data):
    from sklearn_dpfair.exceptions import PrivacyLeakWarning

    X, y = data
    clf = DPLogisticRegression(epsilon=2.0, batch_size="full", max_iter=1)
    with pytest.warns(PrivacyLeakWarning, match="classes"):
        audit_gradient_canary(clf, X, y, n_runs=4, n_canaries=2)


# -- the sampling rate, arguments and sparse X ---------------------------------------


def test_a_one_step_per_epoch_balls_and_bins_fit_is_audited_at_rate_one(
    monkeypatch, data
):
    # One batch per epoch: every record is in every step. The record states
    # no Poisson rate and the event is the self-composed Gaussian, which
    # amplifies nothing: the claim's own canary enters every step.
    from sklearn_dpfair.audit import _gradient_canary

    rates = []
    real_run = _gradient_canary._canary_run

    def spy(estimator, X, y, fit_params, inside, q, *args, **kwargs):
        rates.append(q)
        return real_run(estimator, X, y, fit_params, inside, q, *args, **kwargs)

    monkeypatch.setattr(_gradient_canary, "_canary_run", spy)
    X, y = data
    # A stated noise multiplier: no calibration, a fast test.
    clf = DPLogisticRegression(
        noise_multiplier=4.0,
        epsilon=2.0,
        classes=[0, 1],
        max_iter=2,
        batch_sampling="balls_and_bins",
    )
    result = audit_gradient_canary(clf, X, y, n_runs=4, n_canaries=2)
    assert rates == [1.0] * 4 and not result.violation


def test_the_sampling_rate_comes_from_the_record_or_an_unsampled_event():
    import dp_accounting

    from sklearn_dpfair.audit._gradient_canary import _sampling_rate

    def probe(q, event):
        return SimpleNamespace(
            privacy_record_=SimpleNamespace(sampling_probability=q), dp_event_=event
        )

    gauss = dp_accounting.GaussianDpEvent(2.0)
    newton = dp_accounting.ComposedDpEvent(
        [dp_accounting.SelfComposedDpEvent(gauss, 3), gauss]
    )
    assert _sampling_rate(probe(None, newton), "auto") == 1.0
    assert _sampling_rate(probe(0.25, newton), "auto") == 0.25
    assert _sampling_rate(probe(None, newton), 0.5) == 0.5
    sampled = dp_accounting.SelfComposedDpEvent(
        dp_accounting.SampledWithoutReplacementDpEvent(100, 10, gauss), 5
    )
    with pytest.raises(
        ValueError, match="not Poisson batches.*Pass sampling_probability=q"
    ):
        _sampling_rate(probe(None, sampled), "auto")


@pytest.mark.parametrize(
    "options, error",
    [
        ({"n_runs": float("inf")}, ValueError),
        ({"n_runs": float("nan")}, ValueError),
        ({"n_runs": "10"}, TypeError),
        ({"n_runs": 4.5}, ValueError),
        ({"n_canaries": float("nan")}, ValueError),
        ({"n_canaries": True}, TypeError),
        ({"sampling_probability": "x"}, TypeError),
        ({"sampling_probability": 2.0}, ValueError),
        ({"sampling_probability": float("nan")}, ValueError),
        ({"random_state": np.random.RandomState(0)}, TypeError),
        ({"random_state": 0.5}, TypeError),
        ({"random_state": -1}, ValueError),
    ],
)
def test_gradient_canary_audit_refuses_bad_arguments_before_any_fit(
    monkeypatch, data, options, error
):
    from sklearn_dpfair.audit import _gradient_canary

    def no_fit(*args, **kwargs):
        raise AssertionError("fitted before the arguments were checked")

    monkeypatch.setattr(_gradient_canary, "fit_clone", no_fit)
    X, y = data
    kw = {"n_runs": 4, "n_canaries": 2, **options}
    with pytest.raises(error, match=next(iter(options))):
        audit_gradient_canary(DPLogisticRegression(classes=[0, 1]), X, y, **kw)


def test_gradient_canary_audit_of_a_sparse_x(data):
    import scipy.sparse as sp

    from sklearn_dpfair.audit._gradient_canary import _with_zero_columns

    X, y = data
    Xs = sp.csr_matrix(X)
    augmented = _with_zero_columns(Xs, 3)
    assert sp.issparse(augmented) and augmented.shape == (200, 5)
    assert augmented[:, 2:].nnz == 0
    np.testing.assert_array_equal(augmented[:, :2].toarray(), X)
    clf = DPLogisticRegression(epsilon=1.0, classes=[0, 1], max_iter=2)
    result = audit_gradient_canary(clf, Xs, y, n_runs=4, n_canaries=2)
    assert not result.violation


@pytest.mark.parametrize("sparse", [False, True])
def test_a_float32_x_is_audited_as_float32(monkeypatch, data, sparse):
    # The audit is of the fit the caller runs: float32 features and their
    # canary columns stay float32 (a float64 fit is another computation).
    import scipy.sparse as sp

    from sklearn_dpfair.audit import _gradient_canary

    seen = []
    original = _gradient_canary.fit_clone

    def spy(estimator, X, *args, **kwargs):
        seen.append(X.dtype)
        return original(estimator, X, *args, **kwargs)

    monkeypatch.setattr(_gradient_canary, "fit_clone", spy)
    X, y = data
    X = X.astype(np.float32)
    if sparse:
        X = sp.csr_matrix(X)
    clf = DPLogisticRegression(epsilon=1.0, classes=[0, 1], max_iter=2)
    audit_gradient_canary(clf, X, y, n_runs=2, n_canaries=2)
    assert seen and set(seen) == {np.dtype(np.float32)}
    augmented = _gradient_canary._with_zero_columns(X, 3)
    assert augmented.dtype == np.float32 and augmented.shape == (200, 5)


class _ThresholdedDPLogisticRegression(DPLogisticRegression):
    """A record with a delta spent outside its event, as a category discovery's."""

    def _set_privacy_record(self, record):
        super()._set_privacy_record(dataclasses.replace(record, additional_delta=0.01))


def test_the_gradient_canary_claim_includes_the_records_additional_delta(data):
    X, y = data
    clf = _ThresholdedDPLogisticRegression(epsilon=1.0, classes=[0, 1], max_iter=2)
    result = audit_gradient_canary(clf, X, y, n_runs=2, n_canaries=2)
    fitted = clf.fit(X, y)
    assert result.additional_delta == 0.01
    assert result.claim_delta == pytest.approx(fitted.privacy_record_.total_delta)
    assert "partition-selection threshold" in str(result)


# -- pipelines and other meta-estimators ---------------------------------------------


def test_a_pipeline_of_one_model_is_audited_as_the_model():
    # The canary columns reach the final estimator unchanged through
    # passthrough steps, so its small_budget and feature_bounds are the
    # ones adjusted, as for the model alone.
    from sklearn_dpfair.pipeline import PrivatePipeline

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 10, size=(200, 2))
    y = (X[:, 0] > 5).astype(int)
    bounds = [(0, 10), (0, 10)]
    clf = DPLogisticRegression(
        classes=[0, 1],
        max_iter=2,
        batch_size="full",
        feature_scaling="auto",
        feature_bounds=bounds,
    )
    pipe = PrivatePipeline(
        [("pre", "passthrough"), ("clf", clf)], epsilon=1.0, delta=1e-5
    )
    # 50 canary columns: 52 features, past the model's small-budget rule
    # at 200 rows and epsilon = 1, unless small_budget="fit" is set on it;
    # per-column bounds for 2 columns, unless extended to the 50.
    result = audit_gradient_canary(pipe, X, y, n_runs=2, n_canaries=50)
    assert not result.violation
    # The caller's pipeline and its steps are unchanged.
    assert clf.small_budget == "auto" and clf.feature_bounds is bounds
    assert pipe.steps[1][1] is clf


def test_a_pipeline_that_transforms_the_canary_columns_is_refused_before_any_fit(
    monkeypatch, data
):
    from sklearn_dpfair import PrivateHyperparameterSearch
    from sklearn_dpfair.audit import _gradient_canary
    from sklearn_dpfair.pipeline import make_private_pipeline
    from sklearn_dpfair.preprocessing import DPStandardScaler

    def no_fit(*args, **kwargs):
        raise AssertionError("fitted before the estimator was checked")

    monkeypatch.setattr(_gradient_canary, "fit_clone", no_fit)
    X, y = data
    clf = DPLogisticRegression(classes=[0, 1], max_iter=1)
    # A private scaler re-centres the zero columns before the model sees them.
    pipe = make_private_pipeline(DPStandardScaler(bounds=(-5, 5)), clf)
    with pytest.raises(ValueError, match=r"PrivatePipeline.*'dpstandardscaler'"):
        audit_gradient_canary(pipe, X, y, n_runs=4, n_canaries=2)
    # A search fits many models, whose noisy steps its claim does not release.
    search = PrivateHyperparameterSearch(clf, {"clip_norm": [0.5, 1.0]})
    with pytest.raises(ValueError, match=r"PrivateHyperparameterSearch.*'estimator'"):
        audit_gradient_canary(search, X, y, n_runs=4, n_canaries=2)
    # Estimators held in a list of pairs, and steps given as a tuple.
    from sklearn.ensemble import VotingClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    voting = VotingClassifier([("a", clf), ("b", clf)])
    with pytest.raises(ValueError, match=r"VotingClassifier.*'estimators'"):
        audit_gradient_canary(voting, X, y, n_runs=4, n_canaries=2)
    steps = Pipeline((("sc", StandardScaler()), ("clf", clf)))
    with pytest.raises(ValueError, match=r"Pipeline with step 'sc'"):
        audit_gradient_canary(steps, X, y, n_runs=4, n_canaries=2)


def test_the_sampling_rate_of_a_poisson_sampled_event_without_a_recorded_rate():
    import dp_accounting

    from sklearn_dpfair.audit._gradient_canary import _sampling_rate

    def probe(event):
        return SimpleNamespace(
            privacy_record_=SimpleNamespace(sampling_probability=None), dp_event_=event
        )

    # A pipeline's record states no rate; its event is its model's, the
    # self-composed Poisson-sampled Gaussian of DP-SGD at rate 100 / 200.
    from sklearn_dpfair.pipeline import make_private_pipeline

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    clf = DPLogisticRegression(
        classes=[0, 1], max_iter=1, batch_size=100, noise_multiplier=8.0
    )
    fitted = make_private_pipeline(clf, epsilon=1.0).fit(X, (X[:, 0] > 0) * 1)
    assert fitted.privacy_record_.sampling_probability is None
    assert _sampling_rate(fitted, "auto") == pytest.approx(0.5)

    gauss = dp_accounting.GaussianDpEvent(2.0)
    poisson = dp_accounting.PoissonSampledDpEvent(0.3, gauss)
    steps = dp_accounting.SelfComposedDpEvent(poisson, 5)
    assert _sampling_rate(probe(steps), "auto") == 0.3
    # Sampled and unsampled releases mixed: no one rate describes them.
    mixed = dp_accounting.ComposedDpEvent([poisson, gauss])
    with pytest.raises(ValueError, match="Pass sampling_probability=q"):
        _sampling_rate(probe(mixed), "auto")


def test_a_pipeline_of_one_model_reads_the_models_sampling_rate():
    # A heavy-tail event composes its steps with the scales' releases: the
    # rate is the model's record's, not one read from the event's shape.
    from sklearn_dpfair.audit._gradient_canary import _sampling_rate
    from sklearn_dpfair.linear_model import HeavyTailDPRegressor
    from sklearn_dpfair.pipeline import make_private_pipeline

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 2))
    y = X[:, 0] + rng.normal(size=400)
    model = HeavyTailDPRegressor(feature_bounds=[(-4, 4)] * 2, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        alone = model.fit(X, y)
        pipe = make_private_pipeline(model, epsilon=1.0, random_state=0).fit(X, y)
    assert _sampling_rate(pipe, "auto") == _sampling_rate(alone, "auto") > 0
