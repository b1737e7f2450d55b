# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Public sample weights: a record is (x, y, w); weighted, then clipped.

Private fits use the weights as given and divide by public quantities only
(:func:`sklearn_dpfair.privacy.fit_weights`), so adding, removing or
changing one weighted record moves every pre-noise sum by at most its clip;
the non-private limit keeps scikit-learn's weighted average (uniform weights
are the unweighted fit, a weight of 2 is a duplicated row).
"""

import numpy as np
import pytest

from sklearn_dpfair import (
    DPFERMIClassifier,
    DPLogisticRegression,
    FERMIClassifier,
    SemiDPLinearRegression,
)
from sklearn_dpfair._loss import BinaryLogisticLoss
from sklearn_dpfair._solvers._sgd import noisy_sgd
from sklearn_dpfair.privacy._mechanism import GaussianMechanism
from sklearn_dpfair.privacy._record import WEIGHTS_CAVEAT

pytestmark = pytest.mark.filterwarnings("ignore:delta=.*is not smaller")


def _data(n=200, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)
    return X, y


def _one_noiseless_step(X, y, weights, clip_norm):
    """Coefficients after one full-batch, noiseless, clipped step: -sum / n."""
    result = noisy_sgd(
        X,
        y.astype(float),
        BinaryLogisticLoss(),
        mechanism=GaussianMechanism(clip_norm=clip_norm, noise_multiplier=0.0),
        sampling_probability=1.0,
        n_steps=1,
        learning_rate=1.0,
        alpha=0.0,
        intercept_scaling=1.0,
        rng=np.random.default_rng(0),
        tail_fraction=1.0,
        sample_weight=weights,
    )
    # The step is -sum / n; the clipped sum itself, coefficients and intercept.
    return -X.shape[0] * np.concatenate([result.coef.ravel(), result.intercept])


@pytest.mark.parametrize(
    "epsilon, value", [(1.0, 1.0), (np.inf, 1.0), (np.inf, 3.0), (np.inf, 0.25)]
)
def test_uniform_weights_are_the_unweighted_fit_bit_for_bit(epsilon, value):
    # Private: weights of 1 are the unweighted fit. Non-private: any uniform
    # weights are (the weighted average is rescaled to mean 1).
    X, y = _data()
    params = dict(classes=[0, 1], random_state=0, epsilon=epsilon)
    plain = DPLogisticRegression(**params).fit(X, y)
    coef, intercept = plain.coef_.copy(), plain.intercept_.copy()
    weighted = DPLogisticRegression(**params).fit(
        X, y, sample_weight=np.full(X.shape[0], value)
    )
    np.testing.assert_array_equal(weighted.coef_, coef)
    np.testing.assert_array_equal(weighted.intercept_, intercept)
    # The record says weights were passed, whatever they hold: it may not
    # depend on the weights the records bring.
    extra = set(weighted.privacy_record_.caveats) - set(plain.privacy_record_.caveats)
    assert len(extra) == (1 if epsilon < np.inf else len(extra))
    assert all("sample_weight is public" in c for c in extra)


def test_non_uniform_weights_change_the_fit_and_are_recorded():
    X, y = _data()
    w = np.ones(X.shape[0])
    w[: X.shape[0] // 2] = 5.0
    plain = DPLogisticRegression(classes=[0, 1], random_state=0).fit(X, y)
    weighted = DPLogisticRegression(classes=[0, 1], random_state=0).fit(
        X, y, sample_weight=w
    )
    assert not np.array_equal(weighted.coef_, plain.coef_)
    assert weighted.epsilon_ == plain.epsilon_
    assert any("sample_weight is public" in c for c in weighted.privacy_record_.caveats)


@pytest.mark.parametrize("heavy", [1e6, 1e12])
def test_a_heavy_record_moves_the_clipped_sum_by_at_most_the_clip(heavy):
    # Neighbouring datasets: the record z is present with a huge weight, or
    # absent (weight 0 drops its gradient, as test below checks). The clipped
    # sums differ by z's clipped term only, whose norm is at most the clip.
    X, y = _data(n=50)
    clip = 0.7
    X = np.vstack([X, 1e3 * np.ones((1, X.shape[1]))])
    y = np.append(y, 0)
    w_in = np.ones(X.shape[0])
    w_in[-1] = heavy
    w_out = w_in.copy()
    w_out[-1] = 0.0
    diff = _one_noiseless_step(X, y, w_in, clip) - _one_noiseless_step(
        X, y, w_out, clip
    )
    assert np.linalg.norm(diff) <= clip * (1 + 1e-9)
    # Clipping really binds: unclipped, the weight would show.
    assert np.linalg.norm(diff) > 0.5 * clip


def _first_full_batch_sum(X, y, w, privatized_sums, clip=1.0):
    """The pre-noise clipped sum of a private DP-SGD fit's first step."""
    privatized_sums.clear()
    DPLogisticRegression(
        classes=[0, 1], batch_size="full", max_iter=1, clip_norm=clip,
        random_state=0,
    ).fit(X, y, sample_weight=w)
    # The coefficient block, then the intercept block: one stacked release.
    return np.concatenate([privatized_sums[0].ravel(), privatized_sums[1].ravel()])


@pytest.mark.parametrize("heavy", [1.0, 5.0, 20.0, 100.0, 1e6])
def test_adding_a_weighted_record_moves_the_dp_sgd_sum_by_at_most_the_clip(
    heavy, privatized_sums
):
    # Add/remove adjacency, where the record brings its own weight: no
    # normalizer may be read from the weights (the old mean-1 rescaling
    # moved this sum by 0.50 / 1.0 / 8.3 / 44 / 499 clip norms).
    X, y = _data(n=50)
    w = np.ones(X.shape[0])
    without = _first_full_batch_sum(X, y, w, privatized_sums)
    X_add = np.vstack([X, np.full((1, X.shape[1]), 3.0)])
    y_add = np.append(y, 0)
    with_it = _first_full_batch_sum(X_add, y_add, np.append(w, heavy), privatized_sums)
    assert np.linalg.norm(with_it - without) <= 1.0 * (1 + 1e-9)


def test_removing_or_reweighting_a_record_moves_the_dp_sgd_sum_by_at_most_the_clip(
    privatized_sums,
):
    X, y = _data(n=60)
    w = np.linspace(0.5, 2.0, X.shape[0])
    w[7] = 50.0
    base = _first_full_batch_sum(X, y, w, privatized_sums)
    keep = np.arange(X.shape[0]) != 7
    removed = _first_full_batch_sum(X[keep], y[keep], w[keep], privatized_sums)
    reweighted_w = w.copy()
    reweighted_w[7] = 0.01
    reweighted = _first_full_batch_sum(X, y, reweighted_w, privatized_sums)
    assert np.linalg.norm(base - removed) <= 1.0 * (1 + 1e-9)
    # Replacing a record (here only its weight) is a remove and an add.
    assert np.linalg.norm(base - reweighted) <= 2.0 * (1 + 1e-9)


def test_zero_weight_drops_the_records_gradient():
    X, y = _data(n=50)
    w = np.ones(X.shape[0])
    w[3] = 0.0
    other = X.copy()
    other[3] = 1e8  # whatever the record holds
    y_other = y.copy()
    y_other[3] = 1 - y[3]
    np.testing.assert_array_equal(
        _one_noiseless_step(X, y, w, 1.0), _one_noiseless_step(other, y_other, w, 1.0)
    )


def test_non_private_weight_two_is_a_duplicated_row():
    X, y = _data(n=60)
    params = dict(
        classes=[0, 1],
        epsilon=np.inf,
        batch_size="full",
        learning_rate=0.5,
        max_iter=40,
        random_state=0,
    )
    w = np.ones(X.shape[0])
    w[:5] = 2.0
    weighted = DPLogisticRegression(**params).fit(X, y, sample_weight=w)
    X_rep, y_rep = np.vstack([X, X[:5]]), np.append(y, y[:5])
    repeated = DPLogisticRegression(**params).fit(X_rep, y_rep)
    # The same objective, minimized by L-BFGS-B to its gradient tolerance
    # (1e-10 of the normalized objective) along paths that differ by the
    # rounding of their sums: the minimizers agree to about 1e-8.
    np.testing.assert_allclose(weighted.coef_, repeated.coef_, rtol=1e-7)
    np.testing.assert_allclose(weighted.intercept_, repeated.intercept_, rtol=1e-7)


def _op(**params):
    return DPLogisticRegression(
        solver="output-perturbation",
        alpha=0.5,
        feature_norm_bound=3.0,
        classes=[0, 1],
        random_state=0,
        **params,
    )


@pytest.mark.parametrize("heavy", [0.5, 3.0, 1e6])
def test_output_perturbation_sensitivity_never_reads_the_weights(heavy):
    # The record carries its weight: a sensitivity read from max(w) would
    # differ between neighbours (the old rule gave 0.028 against 28). Each
    # weight is capped at 1 instead, so the sensitivity is the unweighted one.
    X, y = _data()
    plain = _op().fit(X, y)
    w = np.ones(X.shape[0])
    w[-1] = heavy
    weighted = _op().fit(X, y, sample_weight=w)
    assert weighted.privacy_record_.clip_norm == plain.privacy_record_.clip_norm
    assert weighted.privacy_record_.dp_event == plain.privacy_record_.dp_event
    assert "capped at 1" in weighted.privacy_record_.mechanism
    assert WEIGHTS_CAVEAT in weighted.privacy_record_.caveats


def test_output_perturbation_heavy_record_moves_the_minimizer_within_sensitivity(
    monkeypatch,
):
    # Replace-one, the record's weight travelling with it: (5, 0) at weight
    # 50 against (-5, 1) at weight 1. The private fit's certified minimizers,
    # read before their noise, are within the sensitivity.
    import sklearn_dpfair._solvers._private_fit as private_fit

    minimizers = []
    original = private_fit.output_perturbation

    def spy(W, **kwargs):
        minimizers.append(np.array(W, copy=True))
        return original(W, **kwargs)

    monkeypatch.setattr(private_fit, "output_perturbation", spy)
    X, y = _data(n=80)
    fits = []
    for x_last, y_last, w_last in ((5.0, 0, 50.0), (-5.0, 1, 1.0)):
        Xn, yn = X.copy(), y.copy()
        Xn[-1], yn[-1] = x_last, y_last
        w = np.ones(X.shape[0])
        w[-1] = w_last
        fits.append(_op().fit(Xn, yn, sample_weight=w))
    sensitivity = fits[0].privacy_record_.clip_norm
    assert fits[1].privacy_record_.clip_norm == sensitivity
    assert np.linalg.norm(minimizers[0] - minimizers[1]) <= sensitivity


@pytest.mark.parametrize("last", [1.0, 1e6])
def test_silos_refuse_weights_whatever_they_hold(last):
    # The refusal may not depend on one record's weight (all 1 or not).
    X, y = _data()
    w = np.ones(X.shape[0])
    w[-1] = last
    with pytest.raises(ValueError, match="silos"):
        DPLogisticRegression(classes=[0, 1]).fit(
            X, y, sample_weight=w, silos=np.arange(200) % 2
        )


def _fw(**params):
    return DPLogisticRegression(
        solver="dp-frank-wolfe",
        l1_radius=3.0,
        feature_inf_bound=4.0,
        fw_steps=30,
        classes=[0, 1],
        random_state=0,
        **params,
    )


def test_frank_wolfe_uniform_weights_are_the_unweighted_fit_bit_for_bit():
    X, y = _data()
    plain = _fw().fit(X, y)
    weighted = _fw().fit(X, y, sample_weight=np.ones(X.shape[0]))
    np.testing.assert_array_equal(weighted.coef_, plain.coef_)
    plain_limit = _fw(epsilon=np.inf).fit(X, y)
    uniform_limit = _fw(epsilon=np.inf).fit(
        X, y, sample_weight=np.full(X.shape[0], 7.0)
    )
    np.testing.assert_array_equal(uniform_limit.coef_, plain_limit.coef_)
    w = np.ones(X.shape[0])
    w[:50] = 4.0
    assert not np.array_equal(_fw().fit(X, y, sample_weight=w).coef_, plain.coef_)


def test_frank_wolfe_weight_two_is_a_duplicated_row_without_privacy():
    X, y = _data(n=60)
    w = np.ones(X.shape[0])
    w[:5] = 2.0
    weighted = _fw(epsilon=np.inf).fit(X, y, sample_weight=w)
    rows = np.r_[np.arange(X.shape[0]), np.arange(5)]
    repeated = _fw(epsilon=np.inf).fit(X[rows], y[rows])
    np.testing.assert_allclose(weighted.coef_, repeated.coef_, atol=1e-12)


@pytest.mark.parametrize("heavy", [1e6, 1e12])
def test_frank_wolfe_heavy_record_moves_scores_by_at_most_the_sensitivity(heavy):
    from sklearn_dpfair._solvers._frank_wolfe import (
        clip_coordinates,
        score_sensitivity,
        scores_from_predictions,
    )

    X, y = _data(n=40)
    X = clip_coordinates(X, 1.0)
    coef = np.zeros((X.shape[1], 1))
    sums = []
    weights = np.ones(X.shape[0])
    weights[-1] = heavy
    for rows in (X.shape[0] - 1, X.shape[0]):  # add/remove the heavy record
        w = weights[:rows]
        u, u_b = scores_from_predictions(
            X[:rows], y[:rows].astype(float), BinaryLogisticLoss(),
            np.zeros((rows, 1)), coef, l1_radius=2.0, intercept_bound=2.0,
            weights=w,
        )
        # The selection sees u / n with sensitivity r B / n: compare sums.
        sums.append((u * rows, u_b * rows))
    bound = score_sensitivity(2.0, 1.0, X.shape[0]) * X.shape[0]
    diff = np.max(np.abs(sums[0][0] - sums[1][0]))
    assert 0.5 * bound < diff <= bound * (1 + 1e-12)
    assert np.max(np.abs(sums[0][1] - sums[1][1])) <= bound * (1 + 1e-12)


@pytest.mark.filterwarnings("ignore:sensitive_features is None")
@pytest.mark.filterwarnings("ignore::FutureWarning")
@pytest.mark.parametrize(
    "est",
    [
        DPLogisticRegression(classes=[0, 1], random_state=0),
        FERMIClassifier(random_state=0, max_iter=5),
        DPFERMIClassifier(classes=[0, 1], random_state=0, max_iter=5),
    ],
    ids=["DPLogisticRegression", "FERMIClassifier", "DPFERMIClassifier"],
)
def test_fairlearn_reductions_run_around_the_estimators(est):
    # The reductions pass sample_weight but not sensitive_features to the
    # inner fit: the FERMI estimators then fit without a fairness term.
    fairlearn = pytest.importorskip("fairlearn")
    from fairlearn.postprocessing import ThresholdOptimizer
    from fairlearn.reductions import DemographicParity, ExponentiatedGradient

    assert fairlearn
    X, y = _data(n=120)
    group = (X[:, 1] > 0).astype(int)
    eg = ExponentiatedGradient(est, DemographicParity(), max_iter=5)
    eg.fit(X, y, sensitive_features=group)
    assert eg.predict(X).shape == y.shape
    to = ThresholdOptimizer(estimator=est, predict_method="predict_proba")
    to.fit(X, y, sensitive_features=group)
    assert to.predict(X, sensitive_features=group, random_state=0).shape == y.shape


def _fair_data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    group = (rng.random(n) < 0.4).astype(int)
    y = (X[:, 0] + group + 0.5 * rng.normal(size=n) > 0.5).astype(int)
    return X, y, group


@pytest.mark.parametrize(
    "cls, value", [(FERMIClassifier, 2.5), (DPFERMIClassifier, 1.0)]
)
def test_fermi_uniform_weights_are_the_unweighted_fit_bit_for_bit(cls, value):
    X, y, group = _fair_data()
    # Declared label and group sets: DPFERMIClassifier would warn otherwise.
    kw = {} if cls is FERMIClassifier else {"classes": [0, 1], "groups": [0, 1]}
    plain = cls(random_state=0, **kw).fit(X, y, sensitive_features=group)
    weighted = cls(random_state=0, **kw).fit(
        X, y, sample_weight=np.full(X.shape[0], value), sensitive_features=group
    )
    np.testing.assert_array_equal(weighted.coef_, plain.coef_)
    np.testing.assert_array_equal(weighted.intercept_, plain.intercept_)
    np.testing.assert_array_equal(weighted.dual_coef_, plain.dual_coef_)


def test_fermi_weight_two_is_a_duplicated_row_without_privacy():
    X, y, group = _fair_data()
    w = np.ones(X.shape[0])
    w[:20] = 2.0
    params = dict(random_state=0, alpha=0.1, tol=1e-10, fairness_weight=1.0)
    weighted = FERMIClassifier(**params).fit(
        X, y, sample_weight=w, sensitive_features=group
    )
    rows = np.r_[np.arange(X.shape[0]), np.arange(20)]
    repeated = FERMIClassifier(**params).fit(
        X[rows], y[rows], sensitive_features=group[rows]
    )
    np.testing.assert_allclose(weighted.group_marginals_, repeated.group_marginals_)
    np.testing.assert_allclose(weighted.coef_, repeated.coef_, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("removed", [False, True])
def test_dp_fermi_heavy_record_moves_each_noisy_sum_by_at_most_its_clip(
    removed, privatized_sums
):
    # Neighbouring data sets: the last record at weight 1e6, or absent
    # (dropped, or at weight 0). A private fit uses the weights as given, so
    # the two fits differ in that record only; a spy on the mechanism
    # captures the clipped sums before the noise.
    X, y, group = _fair_data(n=100)
    X[-1] = 1e3
    primal_clip, dual_clip = 0.5, 0.3
    sums = []
    for heavy in (1e6, 0.0):
        w = np.ones(X.shape[0])
        w[-1] = heavy
        rows = slice(None) if heavy or not removed else slice(0, -1)
        X, y, group, w = X[rows], y[rows], group[rows], w[rows]
        privatized_sums.clear()
        DPFERMIClassifier(
            clip_norm=primal_clip,
            dual_clip_norm=dual_clip,
            batch_size="full",
            max_iter=1,
            group_marginals=[0.6, 0.4],
            classes=[0, 1],
            groups=[0, 1],
            # The steps' sums only (at this budget "auto" would also compare
            # the model with the constants: one more release).
            small_budget="fit",
            random_state=0,
        ).fit(X, y, sample_weight=w, sensitive_features=group)
        # One step: the primal coefficient and intercept blocks, then the dual.
        assert len(privatized_sums) == 3
        sums.append(list(privatized_sums))
    primal = [np.concatenate([c[0].ravel(), c[1].ravel()]) for c in sums]
    dual = [c[2].ravel() for c in sums]
    assert np.linalg.norm(primal[0] - primal[1]) <= primal_clip * (1 + 1e-9)
    assert np.linalg.norm(dual[0] - dual[1]) <= dual_clip * (1 + 1e-9)
    # Clipping binds: the heavy record moves the primal sum by about the clip.
    assert np.linalg.norm(primal[0] - primal[1]) > 0.5 * primal_clip


def _regression_data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = X @ np.array([1.0, 2.0, 3.0]) + 1.0 + rng.normal(size=n)
    public = np.zeros(n, dtype=bool)
    public[:100] = True
    return X, y, public


@pytest.mark.parametrize("solver", ["semidp-gd", "semidp-sgd", "dp-gd"])
@pytest.mark.parametrize("epsilon, value", [(1.0, 1.0), (np.inf, 4.0)])
def test_semidp_uniform_weights_are_the_unweighted_fit_bit_for_bit(
    solver, epsilon, value
):
    X, y, public = _regression_data()
    params = dict(
        solver=solver, random_state=0, adjacency="add_remove", epsilon=epsilon
    )
    plain = SemiDPLinearRegression(**params).fit(X, y, public_mask=public)
    weighted = SemiDPLinearRegression(**params).fit(
        X, y, sample_weight=np.full(X.shape[0], value), public_mask=public
    )
    np.testing.assert_array_equal(weighted.coef_, plain.coef_)
    np.testing.assert_array_equal(weighted.intercept_, plain.intercept_)
    extra = set(weighted.privacy_caveats_) - set(plain.privacy_caveats_)
    assert all("sample_weight is public" in c for c in extra)


def test_semidp_weights_change_the_fit_and_public_only_refuses_them():
    X, y, public = _regression_data()
    w = np.ones(X.shape[0])
    w[:150] = 3.0
    plain = SemiDPLinearRegression(random_state=0).fit(X, y, public_mask=public)
    weighted = SemiDPLinearRegression(random_state=0).fit(
        X, y, sample_weight=w, public_mask=public
    )
    assert not np.array_equal(weighted.coef_, plain.coef_)
    assert any("sample_weight is public" in c for c in weighted.privacy_caveats_)
    with pytest.raises(ValueError, match="public-only"):
        SemiDPLinearRegression(solver="public-only").fit(
            X, y, sample_weight=w, public_mask=public
        )


@pytest.mark.parametrize("heavy", [1e6, 1e12])
def test_semidp_heavy_row_moves_the_private_sum_by_at_most_the_clip(
    heavy, privatized_sums
):
    # Neighbouring data sets: the last row at a huge weight, or at weight 0;
    # a private fit uses the weights as given, so the two fits differ in that
    # row only. A spy on the mechanism captures the clipped private sum of
    # the first step before its noise.
    X, y, _ = _regression_data(n=50)
    X[-1], y[-1] = 1e3, -1e3
    clip = 0.8
    sums = []
    for weight in (heavy, 0.0):
        w = np.ones(X.shape[0])
        w[-1] = weight
        privatized_sums.clear()
        SemiDPLinearRegression(
            solver="semidp-gd", clip_norm=clip, max_iter=1, random_state=0
        ).fit(X, y, sample_weight=w, public_mask=np.zeros(X.shape[0], dtype=bool))
        sums.append(privatized_sums[0])
    diff = np.linalg.norm(sums[0] - sums[1])
    assert 0.5 * clip < diff <= clip * (1 + 1e-9)


@pytest.mark.parametrize(
    "weights", [[1e308, 1e308, 1.0, 1.0], [1e-320, 2e-320, 0.0, 1e-320]]
)
def test_extreme_weights_are_rescaled_to_finite_weights(weights):
    from sklearn_dpfair.privacy import fit_weights

    w = np.array(weights * 50)
    scaled = fit_weights(w, w.size, private=False)
    assert scaled is not None and np.all(np.isfinite(scaled))
    assert scaled.mean() == pytest.approx(1.0)
    X, y = _data()
    for epsilon in (1.0, np.inf):
        fit = DPLogisticRegression(
            classes=[0, 1], random_state=0, epsilon=epsilon
        ).fit(X, y, sample_weight=w)
        assert np.all(np.isfinite(fit.coef_))


@pytest.mark.parametrize(
    "make",
    [
        lambda: DPLogisticRegression(classes=[0, 1], random_state=0),
        lambda: DPLogisticRegression(
            classes=[0, 1], solver="output-perturbation", alpha=0.5,
            feature_norm_bound=3.0, random_state=0,
        ),
        lambda: DPLogisticRegression(
            classes=[0, 1], solver="dp-frank-wolfe", l1_radius=3.0,
            feature_inf_bound=4.0, fw_steps=10, random_state=0,
        ),
        lambda: DPFERMIClassifier(classes=[0, 1], groups=[0, 1], random_state=0),
    ],
    ids=["dp-sgd", "output-perturbation", "dp-frank-wolfe", "dp-fermi"],
)
def test_the_record_does_not_depend_on_the_weights_a_record_brings(make):
    # Neighbours: every weight 1, or one record's weight changed. Caveats,
    # description and event must be the same (the old records mentioned the
    # weights only when some weight differed from 1: a certain distinguisher).
    X, y, group = _fair_data()
    records = []
    for last in (1.0, 3.0):
        w = np.ones(X.shape[0])
        w[-1] = last
        est = make()
        kw = {"sensitive_features": group} if isinstance(est, DPFERMIClassifier) else {}
        records.append(est.fit(X, y, sample_weight=w, **kw).privacy_record_)
    assert records[0] == records[1]


def test_semidp_record_and_refusals_do_not_depend_on_the_weights():
    X, y, public = _regression_data()
    records = []
    for last in (1.0, 3.0):
        w = np.ones(X.shape[0])
        w[-1] = last
        with pytest.raises(ValueError, match="public-only"):
            SemiDPLinearRegression(solver="public-only").fit(
                X, y, sample_weight=w, public_mask=public
            )
        fit = SemiDPLinearRegression(random_state=0).fit(
            X, y, sample_weight=w, public_mask=public
        )
        records.append(fit.privacy_record_)
    assert records[0] == records[1]
