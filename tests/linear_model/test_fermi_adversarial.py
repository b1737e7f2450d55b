# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""FERMI and DP-FERMI on neighbouring datasets built by hand.

One record near the float64 limit, a group that empties, the only member of
a group, a single class, constant columns, duplicated rows: both worlds must
end the same way (here: both fit, finite, with the same warnings and the
same privacy record), and the record must describe the event it carries.
"""

import math
import warnings

import numpy as np
import pytest

from sklearn_dpfair import DPFERMIClassifier, FERMIClassifier
from sklearn_dpfair._solvers.fermi._fit import fermi_event
from sklearn_dpfair.privacy._accounting import epsilon_of

DECLARED = {"classes": [0, 1], "groups": [0, 1]}
HUGE_ROWS = {
    "max_first": [1.7e308, 0.0, 0.0],
    "opposite_max": [-1.7e308, 1.7e308, 0.0],
    "all_1e200": [1e200, 1e200, 1e200],
}
SETTINGS = {
    "poisson": {"batch_size": 50, "max_iter": 5},
    "full_batch": {"batch_size": "full", "max_iter": 20},
    "equalized_odds": {"batch_size": 50, "max_iter": 5, "constraint": "equalized_odds"},
    "equal_opportunity": {
        "batch_size": 50, "max_iter": 5, "constraint": "equal_opportunity"
    },
}


def _data(seed=0, n=300):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 3)) + 0.8 * s[:, None]
    y = (X[:, 0] + 0.3 * rng.normal(size=n) > 0.4).astype(int)
    return X, y, s


def _fit(est, X, y, s):
    """Fit and return (outcome, warnings): outcome is the estimator or the error."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            outcome = est.fit(X, y, sensitive_features=s)
        except (ValueError, TypeError) as exc:
            outcome = (type(exc), str(exc))
    # The min_group_size warning names the groups whose *released* noisy
    # count is small: post-processing of the histogram, covered by the
    # guarantee and documented; it may differ between worlds.
    return outcome, sorted(
        {
            (w.category.__name__, str(w.message))
            for w in caught
            if "fewer than min_group_size" not in str(w.message)
        }
    )


def _assert_released_finite(est):
    for name in ("coef_", "intercept_", "dual_coef_", "group_marginals_"):
        value = getattr(est, name)
        if value is not None:
            assert np.all(np.isfinite(value)), name


def _assert_same_ending(a, b):
    (out_a, warn_a), (out_b, warn_b) = a, b
    assert warn_a == warn_b
    if isinstance(out_a, tuple) or isinstance(out_b, tuple):
        assert out_a == out_b
        return
    _assert_released_finite(out_a)
    _assert_released_finite(out_b)
    if hasattr(out_a, "privacy_record_"):
        assert out_a.privacy_record_ == out_b.privacy_record_


@pytest.mark.parametrize("setting", list(SETTINGS))
@pytest.mark.parametrize("row", list(HUGE_ROWS))
def test_one_huge_record_leaves_dpfermi_finite_with_the_same_record(row, setting):
    # Replace-one neighbours: row 0 replaced by a record near the float64
    # limit. Its logits overflow once the model moves; it must then add
    # nothing (not NaN) to the primal and dual sums: a NaN model in one world
    # and a finite one in the other is epsilon = inf.
    X, y, s = _data()
    X_huge = X.copy()
    X_huge[0] = HUGE_ROWS[row]
    est = DPFERMIClassifier(random_state=0, **DECLARED, **SETTINGS[setting])
    _assert_same_ending(_fit(est, X, y, s), _fit(est.__class__(**est.get_params()),
                                                 X_huge, y, s))


@pytest.mark.parametrize("row", list(HUGE_ROWS))
@pytest.mark.parametrize("clip_norm", [None, 1.0])
def test_one_huge_record_leaves_fermi_finite(row, clip_norm):
    # The same failure outside DP: a NaN model (and dual) from one record.
    X, y, s = _data()
    X[0] = HUGE_ROWS[row]
    out, _ = _fit(
        FERMIClassifier(random_state=0, batch_size=50, max_iter=5,
                        clip_norm=clip_norm),
        X, y, s,
    )
    _assert_released_finite(out)
    assert np.all(np.isfinite(out.predict_proba(X[1:])))


def _neighbours():
    X, y, s = _data(1, n=200)
    huge = X.copy()
    huge[5] = HUGE_ROWS["opposite_max"]
    only = s.copy()
    only[:] = 0
    only[7] = 1
    yield "group_becomes_empty", (X, y, s), (X, y, np.zeros_like(s))
    keep = np.arange(200) != 7
    yield "only_member_removed", (X, y, only), (X[keep], y[keep], only[keep])
    ones = np.ones_like(y)
    single = ones.copy()
    single[3] = 0
    yield "single_class", (X, ones, s), (X, single, s)
    const = np.ones_like(X)
    const_one = const.copy()
    const_one[0] = [2.0, -1.0, 0.5]
    yield "constant_columns", (const, y, s), (const_one, y, s)
    dup = np.repeat(X[:1], 200, axis=0)
    dup_one = dup.copy()
    dup_one[9] = X[9]
    yield "duplicated_rows", (dup, y, s), (dup_one, y, s)
    yield "huge_record", (X, y, s), (huge, y, s)


NEIGHBOURS = dict((name, (a, b)) for name, a, b in _neighbours())


@pytest.mark.parametrize("constraint", ["demographic_parity", "equalized_odds",
                                        "equal_opportunity"])
@pytest.mark.parametrize("name", list(NEIGHBOURS))
def test_neighbouring_datasets_end_the_same_way(name, constraint):
    # Declared classes and groups: nothing after validation may raise or
    # warn in one world only, and the privacy record (n is public under
    # add/remove, so the record of the removal pair differs only if n does)
    # must match for same-size neighbours.
    a, b = NEIGHBOURS[name]
    params = dict(random_state=0, batch_size=50, max_iter=3, constraint=constraint,
                  **DECLARED)
    fit_a = _fit(DPFERMIClassifier(**params), *a)
    fit_b = _fit(DPFERMIClassifier(**params), *b)
    if a[0].shape[0] != b[0].shape[0]:
        # The removal pair: n is public, so only the schedule may differ.
        (out_a, warn_a), (out_b, warn_b) = fit_a, fit_b
        assert warn_a == warn_b
        _assert_released_finite(out_a)
        _assert_released_finite(out_b)
        return
    _assert_same_ending(fit_a, fit_b)


# -- the record describes the event it carries --------------------------------


def _rebuilt(est):
    rec = est.privacy_record_
    return fermi_event(
        rec.noise_multiplier,
        rec.sampling_probability,
        rec.steps,
        est.marginal_noise_multiplier_,
        choice_noise=est.choice_noise_multiplier_,
    )


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"dual_noise_ratio": 0.5, "dual_clip_norm": 2.5},
        {"noise_multiplier": 3.0, "epsilon": 100.0},
        {"group_marginals": [0.5, 0.5]},
        {"fairness_weight": 0.0},
        {"batch_size": "full", "max_iter": 4},
        {"epsilon": math.inf},
    ],
    ids=["default", "ratio", "given_sigma", "public_marginals", "no_fairness",
         "full_batch", "non_private"],
)
def test_privacy_record_fields_rebuild_the_event(params):
    X, y, s = _data(n=400)
    params = {"batch_size": 100, "max_iter": 3, "random_state": 0, **DECLARED,
              **params}
    est = DPFERMIClassifier(**params).fit(X, y, sensitive_features=s)
    rec = est.privacy_record_
    # The recorded noise multiplier, rate and steps ARE the accounted event.
    assert _rebuilt(est) == rec.dp_event
    assert epsilon_of(_rebuilt(est), rec.delta, rec.accountant) == rec.epsilon
    assert rec.noise_multiplier == est.effective_noise_multiplier_
    assert rec.sampling_probability == est.sampling_probability_
    assert rec.steps == est.t_
    # noise_multiplier x clip_norm is the model-step noise std sigma_theta C:
    # clip_norm is the sensitivity of the jointly released pair.
    assert rec.noise_multiplier * rec.clip_norm == pytest.approx(
        est.noise_multiplier_ * est.clip_norm, rel=1e-12
    )
    active = est.group_marginals_ is not None  # a fairness term was fitted
    ratio = est.get_params()["dual_noise_ratio"]
    expected_sensitivity = est.clip_norm * (math.sqrt(1 + ratio**-2) if active else 1)
    assert rec.clip_norm == pytest.approx(expected_sensitivity, rel=1e-12)
    # The text names every multiplier the accountant composed.
    assert f"noise multiplier {est.noise_multiplier_:.6g}" in rec.mechanism
    if active:
        assert f"{est.effective_noise_multiplier_:.6g}" in rec.mechanism
        if est.dual_clip_norm is not None or math.isinf(est.epsilon):
            # Declared, or no clip at the non-private limit: public, printed.
            assert f"clip {est.dual_clip_norm_:.6g}," in rec.mechanism
        else:
            # Post-processing of the released histogram: named, not printed,
            # so that the record of neighbouring datasets is the same.
            assert "clip the largest block weight, from the released marginals" in rec.mechanism
    if est.marginal_noise_multiplier_ > 0:
        assert f"noise multiplier {est.marginal_noise_multiplier_:.6g})" in (
            rec.mechanism
        )
    else:
        assert "histogram" not in rec.mechanism


@pytest.mark.parametrize("n_huge", [10, 300])
@pytest.mark.parametrize("batch_size", [50, "full"])
def test_many_huge_rows_do_not_overflow_the_unclipped_fermi_step(n_huge, batch_size):
    # Without clipping each term is finite but their sum over several rows
    # near the float64 limit is not: the step must not write inf/NaN.
    X, y, s = _data()
    X[:n_huge] = [1.7e308, 1.7e308, 0.0]
    out, _ = _fit(
        FERMIClassifier(random_state=0, batch_size=batch_size, max_iter=5), X, y, s
    )
    _assert_released_finite(out)
