# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Audits of mechanisms and estimators: honest claims pass, broken variants fail.

CI runs the light form (a few hundred fits per audit, well under two minutes
for the module); ``DPFAIR_FULL=1`` runs 1,000 fits per audit. The full table
is produced by ``benchmarks/bench_audit.py``.
"""

import os
import time
import warnings
from types import SimpleNamespace

import numpy as np
import pytest
from sklearn.base import BaseEstimator, clone

from sklearn_dpfair import DPLogisticRegression
from sklearn_dpfair._solvers import _rows
from sklearn_dpfair.audit import (
    AuditResult,
    audit_estimator,
    audit_mechanism,
    canary_statistic,
    make_canary,
    make_neighbours,
)
from sklearn_dpfair.audit._synthetic import UnsupportedFitArgument, synthetic_inputs
from sklearn_dpfair.privacy import GaussianMechanism
from sklearn_dpfair.privacy._accounting import gaussian_event
from sklearn_dpfair.utils import all_estimators
from sklearn_dpfair.utils._instance_generator import construct_instance

FULL = os.environ.get("DPFAIR_FULL") == "1"
# Light: 400 fits at epsilon = 4, where 200 evaluation runs already resolve a
# halved noise. Full: 1,000 fits at epsilon = 2 (see the benchmark's table).
N_RUNS, EPSILON = (1000, 2.0) if FULL else (400, 4.0)


# -- deliberately broken variants --------------------------------------------------


def _halve_noise(monkeypatch):
    """Noise of every Gaussian mechanism halved; the accounting unchanged."""
    monkeypatch.setattr(
        GaussianMechanism,
        "noise_std",
        property(lambda self: 0.5 * self.noise_multiplier * self.clip_norm),
    )


def _disable_clipping(monkeypatch):
    """Every per-example clip factor 1; the noise still scaled to the clip norm."""
    original = _rows.clip_factors

    def no_clipping(raw_gradient, row_norms, clip_norm):
        return original(raw_gradient, row_norms, np.inf)

    monkeypatch.setattr(_rows, "clip_factors", no_clipping)


# -- mechanism -------------------------------------------------------------------------


def _sum_release(noise_multiplier, clip=1.0):
    """Clipped sum plus Gaussian noise; the noise is scaled to clip norm 1."""
    mech = GaussianMechanism(clip_norm=1.0, noise_multiplier=noise_multiplier)

    def release(data, rng):
        clipped = np.clip(np.asarray(data, dtype=float), -clip, clip)
        return float(mech.privatize(np.array([clipped.sum()]), rng)[0])

    return release


@pytest.mark.parametrize("broken", [None, "halved noise", "no clipping"])
def test_gaussian_mechanism_audit(monkeypatch, broken):
    z = 1.0  # claimed: the Gaussian mechanism with this multiplier
    release = _sum_release(z, clip=np.inf if broken == "no clipping" else 1.0)
    if broken == "halved noise":
        _halve_noise(monkeypatch)

    d0, d1 = [0.0] * 10, [0.0] * 10 + [5.0]  # the canary is an outlier
    result = audit_mechanism(
        release, d0, d1, delta=1e-5, dp_event=gaussian_event(z), n_runs=N_RUNS
    )
    assert result.violation == (broken is not None), str(result)


# -- DP-SGD with a near-worst-case canary -------------------------------------------


@pytest.fixture(scope="module")
def isolated_canary():
    """Other records never touch feature 0; the canary lies far out along it.

    With one full-batch step, the canary's clipped gradient moves coef[0] by
    exactly the clip norm, against noise of sigma times the clip norm: the
    final model is the Gaussian mechanism itself, so the audit is near-tight.
    """
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    X[:, 0] = 0.0
    y = (X[:, 1] > 0).astype(int)
    return make_neighbours(X, y, canary=(np.array([1e3, 0.0, 0.0]), 1))


def _one_step_dpsgd():
    return DPLogisticRegression(
        epsilon=EPSILON, classes=[0, 1], batch_size="full", max_iter=1
    )


@pytest.mark.slow
@pytest.mark.parametrize("broken", [None, "halved noise", "no clipping"])
def test_dpsgd_audit_has_power(monkeypatch, isolated_canary, broken):
    if broken == "halved noise":
        _halve_noise(monkeypatch)
    elif broken == "no clipping":
        _disable_clipping(monkeypatch)
    result = audit_estimator(_one_step_dpsgd(), isolated_canary, n_runs=N_RUNS)
    assert result.violation == (broken is not None), str(result)
    if broken is None:
        assert result.nominal_epsilon_lower_bound < result.claim_epsilon


def test_audit_estimator_is_reproducible(isolated_canary):
    a = audit_estimator(_one_step_dpsgd(), isolated_canary, n_runs=40, random_state=3)
    b = audit_estimator(_one_step_dpsgd(), isolated_canary, n_runs=40, random_state=3)
    assert a == b


def test_audit_estimator_refuses_the_wrong_relation(isolated_canary):
    X, y = isolated_canary.without.X, isolated_canary.without.y
    nb = make_neighbours(
        X, y, canary=(np.array([1e3, 0, 0]), 1), adjacency="replace_one"
    )
    with pytest.raises(ValueError, match="add_remove"):
        audit_estimator(_one_step_dpsgd(), nb, n_runs=8)


def test_an_attribute_pair_is_not_audited_against_add_remove():
    # An attribute change replaces one record: an add/remove guarantee
    # covers it only at twice its epsilon, so comparing at epsilon could
    # flag a correct estimator.
    from sklearn_dpfair import DPFERMIClassifier

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 2)), np.arange(60) % 2
    groups = np.arange(60) % 2
    nb = make_neighbours(
        X,
        y,
        canary=(np.array([3.0, 0.0]), 1),
        fit_params={"sensitive_features": groups},
        canary_fit_params={"sensitive_features": 0},
        adjacency="attribute",
        attribute="sensitive_features",
        alternative_value=1,
    )
    fermi = DPFERMIClassifier(classes=[0, 1], groups=[0, 1], max_iter=1)
    with pytest.raises(ValueError, match="twice its epsilon"):
        audit_estimator(fermi, nb, n_runs=8)


def test_audit_estimator_refuses_worlds_that_differ_in_public_rows():
    # A public record replaced by a private canary changes which rows are
    # public: not semi-DP neighbours (Lowy et al. 2023), which differ in
    # one private record, so the claim says nothing about the pair.
    from sklearn_dpfair import SemiDPLinearRegression
    from sklearn_dpfair.audit import Dataset, Neighbours

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = X @ np.array([1.0, -1.0])
    public = np.arange(60) % 4 == 0
    canary_X, canary_y = np.array([3.0, 0.0]), 10.0
    world0 = Dataset(
        np.vstack([X, X[0]]), np.r_[y, y[0]], {"public_mask": np.r_[public, True]}
    )
    world1 = Dataset(
        np.vstack([X, canary_X]),
        np.r_[y, canary_y],
        {"public_mask": np.r_[public, False]},
    )
    nb = Neighbours(world0, world1, canary_X[None], canary_y, "replace_one")
    with pytest.raises(ValueError, match="differ in n_public_"):
        audit_estimator(SemiDPLinearRegression(epsilon=1.0), nb, n_runs=8)


def test_audit_estimator_needs_a_privacy_claim(isolated_canary):
    from sklearn.linear_model import LogisticRegression

    with pytest.raises(ValueError, match="no privacy claim"):
        audit_estimator(LogisticRegression(), isolated_canary, n_runs=8)
    with pytest.raises(ValueError, match="n_runs"):
        audit_estimator(_one_step_dpsgd(), isolated_canary, n_runs=2)
    with pytest.raises(TypeError, match="statistic"):
        audit_estimator(_one_step_dpsgd(), isolated_canary, n_runs=8, statistic="loss")


def test_canary_statistic_points_at_the_canary_label():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    y = (X[:, 0] > 0).astype(int)
    clf = DPLogisticRegression(epsilon=np.inf, classes=[0, 1]).fit(X, y)
    x = np.array([[3.0, 0.0]])
    assert canary_statistic(clf, x, 1) > 0 > canary_statistic(clf, x, 0)
    y3 = np.digitize(X[:, 0], [-0.5, 0.5])
    clf3 = DPLogisticRegression(epsilon=np.inf, classes=[0, 1, 2]).fit(X, y3)
    assert canary_statistic(clf3, x, 2) > 0 > canary_statistic(clf3, x, 0)


def test_canary_statistic_of_a_label_the_model_lacks_is_the_least():
    # The label set read from a world without the canary lacks its label:
    # classes.index raised a bare ValueError after both probe fits.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    y = (X[:, 0] > 0).astype(int)
    clf = DPLogisticRegression(epsilon=np.inf, classes=[0, 1]).fit(X, y)
    x = np.array([[3.0, 0.0]])
    lacking = canary_statistic(clf, x, 2)
    assert np.isfinite(lacking)
    assert lacking < min(canary_statistic(clf, x, k) for k in (0, 1))


def test_a_label_set_read_from_the_data_is_flagged_by_a_new_label_canary():
    # classes=None reads the label set from the rows: a canary of a label
    # no other row has is in world 1's classes_ only. The audit raised
    # "2 is not in list" instead of showing that leak.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3))
    y = (X[:, 0] > 0).astype(int)
    nb = make_neighbours(X, y, canary=(np.array([50.0, 0.0, 0.0]), 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the probe's own leak warning
        result = audit_estimator(
            DPLogisticRegression(max_iter=1), nb, n_runs=200, random_state=0
        )
    assert result.violation, str(result)


def test_canary_statistic_reads_log_probabilities_past_the_float_floor():
    # log(max(proba, 1e-300)) was -690.78 for every network at a far canary,
    # in both worlds: the statistic could not tell any run apart.
    from sklearn_dpfair import DPMLPClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    far = np.array([[1e4, 0.0, 0.0]])
    stats = {
        canary_statistic(
            DPMLPClassifier(
                (16,), epsilon=8.0, classes=[0, 1], max_iter=2, random_state=seed
            ).fit(X, y),
            far,
            0,
        )
        for seed in range(3)
    }
    assert len(stats) == 3
    assert all(np.isfinite(s) and s < -700 for s in stats)


# -- every private estimator: its own claim is not refuted ------------------------

# Budget of the generic audits: each estimator gets the runs that fit in this
# many seconds (at least _MIN_RUNS), so new estimators keep CI light.
_SECONDS_PER_ESTIMATOR = 4.0 if not FULL else 120.0
_MIN_RUNS, _MAX_RUNS = 20, 200 if not FULL else 1000


def _adjacency_kwargs(adjacency, canary_fit_params):
    if adjacency in ("add_remove", "replace_one"):
        return {"adjacency": adjacency}
    if "sensitive_features" in canary_fit_params and (
        "attribute" in adjacency or "sensitive" in adjacency
    ):
        return {
            "adjacency": "attribute",
            "attribute": "sensitive_features",
            "alternative_value": 1 - canary_fit_params["sensitive_features"],
        }
    pytest.skip(f"no neighbour construction for adjacency_={adjacency!r}")


@pytest.mark.slow
@pytest.mark.parametrize(
    "name, cls", all_estimators(), ids=[n for n, _ in all_estimators()]
)
def test_every_private_estimator_passes_its_own_audit(name, cls):
    est = construct_instance(cls)
    try:
        X, y, fit_params, canary_params = synthetic_inputs(est, n_samples=60)
    except UnsupportedFitArgument as exc:
        pytest.skip(f"cannot synthesize fit argument {exc}")
    if "random_state" in est.get_params():
        est.set_params(random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        probe = clone(est).fit(X, y, **fit_params)
        seconds = time.perf_counter() - start
    if not hasattr(probe, "dp_event_"):
        pytest.skip(f"{name} makes no privacy claim (no dp_event_)")
    if not np.isfinite(probe.epsilon_):
        pytest.skip(f"{name} is non-private at its defaults")
    canary = make_canary(X, y)
    nb = make_neighbours(
        X,
        y,
        canary=canary,
        fit_params=fit_params,
        canary_fit_params=canary_params,
        **_adjacency_kwargs(probe.adjacency_, canary_params),
    )
    n_runs = int(
        np.clip(_SECONDS_PER_ESTIMATOR / max(seconds, 1e-3), _MIN_RUNS, _MAX_RUNS)
    )
    result = audit_estimator(est, nb, n_runs=n_runs)
    assert not result.violation, f"{name}: {result}"


# -- what an audit can see -----------------------------------------------------------


def test_an_audit_too_small_to_refute_the_claim_says_inconclusive():
    # A noise-free mechanism is not private at all, but 100 runs (25
    # evaluation runs per world) certify at most epsilon ~ 1.84 at 1e-5:
    # claiming epsilon = 5 cannot be refuted, and "no violation" would lie.
    def release(data, rng):
        return float(np.sum(data))

    result = audit_mechanism(
        release, [0.0] * 9, [0.0] * 9 + [1.0], delta=1e-5, epsilon=5.0, n_runs=100
    )
    assert result.false_positives == result.false_negatives == 0
    assert result.epsilon_lower_bound == pytest.approx(result.epsilon_ceiling)
    assert result.epsilon_ceiling < 5.0
    assert not result.conclusive and not result.violation
    assert result.verdict == "inconclusive"
    assert "inconclusive" in str(result) and "no violation" not in str(result)
    assert result.to_dict()["conclusive"] is False


def test_a_conclusive_audit_still_reports_no_violation_or_violation():
    z = 4.0  # epsilon ~ 1.2 at 1e-5
    mech = GaussianMechanism(clip_norm=1.0, noise_multiplier=z)

    def release(data, rng):
        return float(mech.privatize(np.array([np.sum(data)]), rng)[0])

    honest = audit_mechanism(
        release, [0.0] * 9, [0.0] * 9 + [1.0], delta=1e-5, epsilon=2.0, n_runs=400
    )
    assert honest.conclusive and honest.epsilon_ceiling > 2.0
    assert not honest.violation and "(no violation)" in str(honest)
    # The same runs against a false claim: refuted, and still conclusive.
    noise_free = audit_mechanism(
        lambda data, rng: float(np.sum(data)),
        [0.0] * 9,
        [0.0] * 9 + [1.0],
        delta=1e-5,
        epsilon=1.0,
        n_runs=400,
    )
    assert noise_free.conclusive and noise_free.violation
    assert "VIOLATION" in str(noise_free)


# -- options checked before the fits, warnings of the probe fits ------------------


_BAD_OPTIONS = [
    {"confidence": 95},
    {"confidence": -0.5},
    {"selection_fraction": 50},
    {"selection_fraction": 0.1},  # no selection run among 2 per world
    {"deltas": [2.0]},
    {"deltas": "all"},
]


@pytest.mark.parametrize("options", _BAD_OPTIONS)
def test_audit_estimator_refuses_bad_options_before_any_fit(
    monkeypatch, isolated_canary, options
):
    from sklearn_dpfair.audit import _audit

    def no_fit(*args, **kwargs):
        raise AssertionError("fitted before the options were checked")

    monkeypatch.setattr(_audit, "fit_clone", no_fit)
    name = next(iter(options))
    with pytest.raises(ValueError, match=name):
        audit_estimator(_one_step_dpsgd(), isolated_canary, n_runs=4, **options)


def test_the_auto_statistic_of_an_estimator_without_predict_is_refused_before_any_fit(
    monkeypatch,
):
    # canary_statistic reads a prediction at the canary; a private
    # transformer has none, which only the first repeated run would show.
    from sklearn_dpfair.audit import _audit
    from sklearn_dpfair.preprocessing import DPStandardScaler

    def no_fit(*args, **kwargs):
        raise AssertionError("fitted before the statistic was checked")

    monkeypatch.setattr(_audit, "fit_clone", no_fit)
    X = np.random.default_rng(0).normal(size=(20, 2))
    nb = make_neighbours(X, None, canary=(np.array([5.0, 5.0]), None))
    with pytest.raises(ValueError, match="statistic='auto'.*DPStandardScaler"):
        audit_estimator(DPStandardScaler(bounds=(-5, 5)), nb, n_runs=4)


@pytest.mark.parametrize("options", _BAD_OPTIONS)
def test_audit_mechanism_refuses_bad_options_before_any_run(options):
    def no_run(data, rng):
        raise AssertionError("ran before the options were checked")

    name = next(iter(options))
    with pytest.raises(ValueError, match=name):
        audit_mechanism(
            no_run, [0.0], [1.0], delta=1e-5, epsilon=1.0, n_runs=4, **options
        )


def test_audit_estimator_refuses_an_unevaluable_claim_before_the_repeated_fits(
    monkeypatch, isolated_canary
):
    import dp_accounting

    from sklearn_dpfair.audit import _audit

    real_fit = _audit._fit_once

    def malformed_claim(*args, **kwargs):
        # A well-typed event the accountant refuses (a NaN noise multiplier).
        fitted = real_fit(*args, **kwargs)
        fitted.dp_event_ = dp_accounting.GaussianDpEvent(np.nan)
        return fitted

    def no_run(*args, **kwargs):
        raise AssertionError("a repeated fit ran before the claim was evaluated")

    monkeypatch.setattr(_audit, "_fit_once", malformed_claim)
    monkeypatch.setattr(_audit, "_estimator_run", no_run)
    with pytest.raises(ValueError, match="noise_multiplier"):
        audit_estimator(_one_step_dpsgd(), isolated_canary, n_runs=8)


def test_audit_estimator_with_a_delta_of_zero_audits_the_other_deltas(
    isolated_canary,
):
    # A Gaussian claim is inf at delta = 0, which the test skips.
    result = audit_estimator(
        _one_step_dpsgd(), isolated_canary, n_runs=8, deltas=[0.0, 0.1]
    )
    assert result.audit_delta == 0.1 and np.isfinite(result.epsilon_claimed)


def test_probe_fits_show_the_estimators_warnings(isolated_canary):
    # Without classes the label set is read from the private y: the claim
    # does not cover it, which the auditor must see.
    from sklearn_dpfair.exceptions import PrivacyLeakWarning

    clf = DPLogisticRegression(epsilon=2.0, batch_size="full", max_iter=1)
    with pytest.warns(PrivacyLeakWarning, match="classes"):
        audit_estimator(clf, isolated_canary, n_runs=8)


def _federated_pair(adjacency, silos0, silos1):
    from sklearn_dpfair.audit import Dataset, Neighbours

    rng = np.random.default_rng(0)
    X = rng.normal(size=(len(silos0), 2))
    X /= np.maximum(1, np.linalg.norm(X, axis=1))[:, None]
    y = (X[:, 0] > 0).astype(int)
    return Neighbours(
        Dataset(X, y, {"silos": np.asarray(silos0)}),
        Dataset(X, y, {"silos": np.asarray(silos1)}),
        X[-1:],
        y[-1],
        adjacency,
    )


def test_audit_estimator_refuses_a_record_moved_between_silos():
    # Same silo labels in both worlds, but the last record moved from silo
    # 0 to silo 1: not neighbours under a per-silo guarantee.
    silos = np.arange(30) % 3
    moved = silos.copy()
    moved[-1] = 1 if silos[-1] != 1 else 0
    clf = DPLogisticRegression(
        classes=[0, 1], feature_bounds=(-1, 1), max_iter=2, shuffle=True
    )
    nb = _federated_pair("replace_one", silos, moved)
    with pytest.raises(ValueError, match="silos hold other numbers of records"):
        audit_estimator(clf, nb, n_runs=4)


@pytest.mark.parametrize("adjacency", ["add_remove", "replace_one"])
def test_neighbours_in_one_silo_pass_the_silo_check(adjacency):
    from sklearn_dpfair.audit._audit import _check_silo_counts

    rng = np.random.default_rng(0)
    X, y, silos = rng.normal(size=(12, 2)), np.arange(12) % 2, np.arange(12) % 3
    nb = make_neighbours(
        X,
        y,
        canary=(np.array([3.0, 0.0]), 1),
        adjacency=adjacency,
        fit_params={"silos": silos},
        canary_fit_params={"silos": 2},
    )
    _check_silo_counts(nb)  # silent
    # A canary added in a silo while another loses a record is refused.
    moved = _federated_pair("add_remove", silos, np.r_[silos[:-1], 1, 1])
    with pytest.raises(ValueError, match="silos hold other numbers"):
        _check_silo_counts(moved)


# -- argument checks, the report's text and sparse X ----------------------------------

_BAD_ARGUMENTS = [
    ({"n_runs": float("inf")}, ValueError),
    ({"n_runs": float("nan")}, ValueError),
    ({"n_runs": "x"}, TypeError),
    ({"n_runs": 40.5}, ValueError),
    ({"random_state": np.random.RandomState(0)}, TypeError),
    ({"random_state": np.random.default_rng(0)}, TypeError),
    ({"random_state": -3}, ValueError),
]


@pytest.mark.parametrize("options, error", _BAD_ARGUMENTS)
def test_audit_estimator_refuses_bad_arguments_naming_them_before_any_fit(
    monkeypatch, isolated_canary, options, error
):
    from sklearn_dpfair.audit import _audit

    def no_fit(*args, **kwargs):
        raise AssertionError("fitted before the arguments were checked")

    monkeypatch.setattr(_audit, "fit_clone", no_fit)
    kw = {"n_runs": 4, **options}
    with pytest.raises(error, match=next(iter(options))):
        audit_estimator(_one_step_dpsgd(), isolated_canary, **kw)


@pytest.mark.parametrize("options, error", _BAD_ARGUMENTS)
def test_audit_mechanism_refuses_bad_arguments_naming_them(options, error):
    def no_run(data, rng):
        raise AssertionError("ran before the arguments were checked")

    kw = {"n_runs": 4, **options}
    with pytest.raises(error, match=next(iter(options))):
        audit_mechanism(no_run, [0.0], [1.0], delta=1e-5, epsilon=1.0, **kw)


@pytest.mark.parametrize("which", ["mechanism", "statistic"])
def test_audit_mechanism_refuses_what_is_not_callable_naming_it(which):
    # 'int' object is not callable, from inside the first run.
    def no_run(data, rng):
        raise AssertionError("ran before the arguments were checked")

    kw = {"mechanism": no_run, "statistic": None, which: 3}
    with pytest.raises(TypeError, match=f"^{which} must be"):
        audit_mechanism(
            kw["mechanism"], [0.0], [1.0], delta=1e-5, epsilon=1.0, n_runs=4,
            statistic=kw["statistic"],
        )


def test_integral_counts_and_seeds_are_accepted():
    kw = dict(delta=1e-5, epsilon=1.0)
    release = _sum_release(1.0)
    a = audit_mechanism(
        release, [0.0], [1.0], **kw, n_runs=40.0, random_state=np.int64(3)
    )
    b = audit_mechanism(release, [0.0], [1.0], **kw, n_runs=40, random_state=3)
    assert a == b


@pytest.mark.parametrize(
    "confidence, text",
    [(0.95, "95%"), (0.955, "95.5%"), (0.999, "99.9%"), (0.9999999, "99.99999%")],
)
def test_the_report_never_rounds_the_confidence_up(confidence, text):
    fields = (0.1, 1.0, 1e-5, 1.0, 1e-5, confidence, 0.0, "greater")
    r = AuditResult(*fields, 100, 100, 40, 45, 0.5, 0.55, False, 0.1)
    assert f"with {text} confidence;" in str(r)


def test_audit_estimator_on_sparse_neighbours():
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    X[:, 0] = 0.0
    y = (X[:, 1] > 0).astype(int)
    Xs = sp.csr_matrix(X)
    nb = make_neighbours(Xs, y, canary=make_canary(Xs, y))
    result = audit_estimator(_one_step_dpsgd(), nb, n_runs=8)
    assert not result.violation


class _ThresholdRelease(BaseEstimator):
    """Releases the canary's category with probability 0.3, never without it.

    A partition-selection threshold: (0, 0.3)-DP, outside a near-silent
    ``dp_event_`` stated at ``delta_ = 1e-5``, with the 0.3 in its record's
    ``additional_delta`` (the whole release is (epsilon_, 0.3 + 1e-5)-DP).
    """

    def __init__(self, random_state=None):
        self.random_state = random_state

    def fit(self, X, y=None):
        rng = np.random.default_rng(self.random_state)
        present = bool(np.any(np.asarray(X) == 99.0))
        self.released_ = float(present and rng.random() < 0.3)
        self.dp_event_ = gaussian_event(10.0)
        self.delta_ = 1e-5
        self.adjacency_ = "add_remove"
        self.privacy_record_ = SimpleNamespace(additional_delta=0.3)
        return self


def test_audit_estimator_audits_the_delta_spent_outside_the_event():
    # Against dp_event_ at delta_ alone the threshold's release is a
    # violation; the whole claim, at privacy_record_'s total delta, holds.
    nb = make_neighbours(np.zeros((5, 1)), None, canary=(np.array([99.0]), None))
    result = audit_estimator(
        _ThresholdRelease(), nb, n_runs=800, statistic=lambda e, cx, cy: e.released_
    )
    assert not result.violation, str(result)
    assert result.conclusive
    assert result.claim_delta == pytest.approx(0.3 + 1e-5)
    assert result.additional_delta == 0.3
    assert "partition-selection threshold" in str(result)


def test_an_encoders_audit_reports_its_total_delta():
    from sklearn_dpfair.preprocessing import DPOneHotEncoder

    g = np.array(list("abcab") * 40).reshape(-1, 1)
    nb = make_neighbours(g, None, canary=(np.array(["a"]), None))
    encoder = DPOneHotEncoder(epsilon=1.0, delta=1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = clone(encoder).fit(g)
        result = audit_estimator(
            encoder,
            nb,
            n_runs=8,
            statistic=lambda est, cx, cy: float(len(est.categories_[0])),
        )
    assert fitted.threshold_delta_ > 0
    assert result.additional_delta == fitted.threshold_delta_
    assert result.claim_delta == pytest.approx(fitted.privacy_record_.total_delta)
    assert result.claim_delta == pytest.approx(1e-5)
