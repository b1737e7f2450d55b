# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""SemiDPLinearRegression: privacy bookkeeping, leak tests, utility, bad input."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn
from sklearn.linear_model import LinearRegression, Ridge
from sklearn.model_selection import KFold, cross_validate

from sklearn_dpfair import SemiDPLinearRegression
from sklearn_dpfair._solvers.semi_dp import _fit as _semidp_fit
from sklearn_dpfair.linear_model import semidp_hyperparameters
from sklearn_dpfair.privacy._accounting import epsilon_of, noisy_sgd_event
from sklearn_dpfair.privacy._mechanism import observe_privatize


def _problem(seed=0, n=3000, d=5, n_pub=300):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    w = np.linspace(-2.0, 2.0, d)
    y = X @ w + 1.5 + 0.5 * rng.standard_normal(n)
    mask = np.zeros(n, dtype=bool)
    mask[rng.permutation(n)[:n_pub]] = True
    return X, y, mask, w


def _test_mse(reg, seed=99, d=5):
    X, y, _, _ = _problem(seed=seed, n=4000, d=d)
    return np.mean((reg.predict(X) - y) ** 2)


@pytest.mark.parametrize("accountant", ["pld", "rdp"])
@pytest.mark.parametrize("solver", ["semidp-gd", "dp-gd", "pda-md"])
def test_epsilon_recomputed_from_event(solver, accountant):
    X, y, mask, _ = _problem()
    reg = SemiDPLinearRegression(
        solver=solver, epsilon=0.5, accountant=accountant, random_state=0
    ).fit(X, y, public_mask=mask)
    assert reg.epsilon_ <= 0.5 * (1 + 1e-9)
    assert epsilon_of(reg.dp_event_, reg.delta_, accountant) == pytest.approx(reg.epsilon_)
    assert reg.privacy_record_.recompute_epsilon() == pytest.approx(reg.epsilon_)
    assert reg.adjacency_ == "replace_one"


def test_replace_one_doubles_the_noise(monkeypatch):
    # The factor 2 of replace-one is folded into the sensitivity: the same
    # event (noise multiplier z per unit sensitivity), twice the noise std.
    captured = {}
    real = _semidp_fit.semidp_gradient_descent

    def spy(*args, **kwargs):
        captured[len(captured)] = kwargs["mechanisms"][0]
        return real(*args, **kwargs)

    monkeypatch.setattr(_semidp_fit, "semidp_gradient_descent", spy)
    X, y, mask, _ = _problem()
    fits = [
        SemiDPLinearRegression(
            epsilon=1.0, adjacency=adj, max_iter=10, learning_rate=0.5, alpha=0.9,
            random_state=0,
        ).fit(X, y, public_mask=mask)
        for adj in ("add_remove", "replace_one")
    ]
    add, rep = captured[0], captured[1]
    assert fits[0].noise_multiplier_ == fits[1].noise_multiplier_
    assert rep.noise_std == pytest.approx(2 * add.noise_std)
    # The multiplier is calibrated: 10 composed Gaussians spend epsilon = 1.
    spent = epsilon_of(noisy_sgd_event(add.noise_multiplier, 1.0, 10), 1e-5, "pld")
    assert spent == pytest.approx(1.0, rel=1e-3)
    assert fits[1].privacy_record_.clip_norm == 2.0
    assert fits[0].epsilon_ == pytest.approx(fits[1].epsilon_)


def test_scaling_private_rows_changes_no_public_choice():
    # Multiplying the private rows' features by 1000 (and scrambling their
    # targets) leaves every privacy-relevant choice unchanged: clip norm,
    # alpha_, noise scale, iteration count, step size, warm start.
    X, y, mask, _ = _problem()
    X2, y2 = X.copy(), y.copy()
    X2[~mask] *= 1000.0
    y2[~mask] = np.random.default_rng(1).standard_normal((~mask).sum()) * 1e4
    fits = [
        SemiDPLinearRegression(epsilon=1.0, random_state=0).fit(Xi, yi, public_mask=mask)
        for Xi, yi in ((X, y), (X2, y2))
    ]
    a, b = fits
    for attr in (
        "alpha_", "learning_rate_", "n_iter_", "noise_multiplier_", "epsilon_",
        "predicted_excess_risk_",
    ):
        assert getattr(a, attr) == getattr(b, attr), attr
    assert a.privacy_record_.clip_norm == b.privacy_record_.clip_norm
    np.testing.assert_array_equal(a.coef_public_, b.coef_public_)
    assert not np.allclose(a.coef_, b.coef_)


def test_private_rows_reach_the_fit_only_through_the_iteration(monkeypatch):
    # Everything before the noisy iteration (public statistics, the "auto"
    # choice, calibration) is computed from the public block alone.
    seen = []
    real = _semidp_fit.public_geometry

    def spy(X_pub, y_pub, **kwargs):
        seen.append(X_pub.copy())
        return real(X_pub, y_pub, **kwargs)

    monkeypatch.setattr(_semidp_fit, "public_geometry", spy)
    X, y, mask, _ = _problem()
    # Unscaled columns: the public statistics then read the public rows as given.
    SemiDPLinearRegression(random_state=0, feature_scaling=None).fit(X, y, public_mask=mask)
    np.testing.assert_array_equal(seen[0], X[mask])


def test_dp_gd_equals_semidp_gd_with_alpha_n_private_over_n():
    X, y, mask, _ = _problem()
    common = {"epsilon": 1.0, "max_iter": 8, "learning_rate": 3.0, "random_state": 7}
    dp = SemiDPLinearRegression(solver="dp-gd", **common).fit(X, y, public_mask=mask)
    semi = SemiDPLinearRegression(
        solver="semidp-gd",
        alpha=(~mask).sum() / mask.size,
        public_clipping="clip",
        preconditioner=None,
        **common,
    ).fit(X, y, public_mask=mask)
    np.testing.assert_array_equal(dp.coef_, semi.coef_)
    assert dp.intercept_ == semi.intercept_
    assert dp.alpha_ == pytest.approx(0.9)


def test_epsilon_inf_matches_ols_on_all_rows():
    X, y, mask, _ = _problem()
    reg = SemiDPLinearRegression(
        epsilon=np.inf, alpha=(~mask).sum() / mask.size, max_iter=40, learning_rate=1.0
    ).fit(X, y, public_mask=mask)
    ref = LinearRegression().fit(X, y)
    np.testing.assert_allclose(reg.coef_, ref.coef_, atol=1e-6)
    assert reg.intercept_ == pytest.approx(ref.intercept_, abs=1e-6)
    assert reg.epsilon_ == np.inf


@pytest.mark.parametrize("n_pub", [0, 2, 30])
def test_epsilon_inf_fits_a_target_far_from_zero(n_pub):
    # y near 1e9, no or few public rows: the non-private solve started at an
    # intercept of 0 and stopped once the intercept had found the target
    # (MSE 112x least squares', no warning).
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 3))
    y = X @ [1.0, 2.0, 3.0] + 1e9 + rng.standard_normal(300)
    mask = np.arange(300) < n_pub
    with warnings.catch_warnings():
        # Nothing is tuned on the public rows, so their count warns of nothing.
        warnings.simplefilter("error")
        reg = SemiDPLinearRegression(epsilon=np.inf).fit(X, y, public_mask=mask)
    ref = LinearRegression().fit(X, y)
    np.testing.assert_allclose(reg.coef_, ref.coef_, rtol=1e-6)
    assert reg.intercept_ == pytest.approx(ref.intercept_, rel=1e-12)


def _standardized_least_squares(X, y):
    # Least squares in centred columns scaled by their spread: well
    # conditioned whatever the columns' units.
    mean, sd = X.mean(axis=0), X.std(axis=0)
    beta = np.linalg.lstsq((X - mean) / sd, y - y.mean(), rcond=None)[0]
    coef = beta / sd
    return coef, y.mean() - mean @ coef


@pytest.mark.parametrize("n_public", [1, 3, 10, 50])
def test_epsilon_inf_reads_only_the_public_warm_start(n_public):
    # The non-private limit only starts its solver at the public ridge fit:
    # the public geometry's overflow refusal (a column in units of 1e160,
    # which fits without public rows) and its warning about too few public
    # rows for the 'auto' choices (none is made) do not apply.
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((50, 2))
    y = Z @ [1.0, 2.0] + 0.1 * rng.standard_normal(50)
    X = Z * [1e160, 1.0]
    mask = np.arange(50) < n_public
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reg = SemiDPLinearRegression(epsilon=np.inf).fit(X, y, public_mask=mask)
    coef, intercept = _standardized_least_squares(Z, y)
    np.testing.assert_allclose(reg.coef_ * [1e160, 1.0], coef, rtol=1e-5)
    assert reg.intercept_ == pytest.approx(intercept, abs=1e-5)
    assert np.all(np.isfinite(reg.coef_public_))


@pytest.mark.parametrize("n_public", [2, 4])
@pytest.mark.parametrize("case", ["value", "weights"])
def test_too_few_public_rows_whose_moments_overflow_are_refused(case, n_public):
    # Fewer than 5 public rows (no public warm start): the cap of an "auto"
    # step at the public rows' curvature read eigvalsh of an inf Gram
    # matrix, NaN (the step left uncapped, coefficients -inf, predictions
    # NaN) or a bare LinAlgError (public weights of 1e300 on raw columns).
    # The public geometry's overflow refusal applies here too.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 3))
    y = X @ [1.0, 2.0, 3.0] + rng.standard_normal(200)
    weights = None
    if case == "value":
        X[0, 0] = 1e160
    else:
        X = X * [1.0, 100.0, 1e-3] + [500.0, 1e5, 0.0]
        weights = np.full(200, 1e300)
    mask = np.arange(200) < n_public
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(ValueError, match="second moments overflow float64"):
            SemiDPLinearRegression(epsilon=1.0, random_state=0).fit(
                X, y, sample_weight=weights, public_mask=mask
            )


@pytest.mark.parametrize("n_features", [2, 3, 5])
def test_epsilon_inf_starts_at_zero_where_the_public_moments_overflow(n_features):
    # Every column in units of 1e200 with an intercept: the public Gram
    # matrix is not finite and its eigendecomposition fails; the fit starts
    # at zero instead of raising, and still reaches least squares.
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((50, n_features))
    y = Z @ np.arange(1.0, n_features + 1) + 0.1 * rng.standard_normal(50)
    reg = SemiDPLinearRegression(epsilon=np.inf).fit(
        Z * 1e200, y, public_mask=np.arange(50) < 10
    )
    coef, intercept = _standardized_least_squares(Z, y)
    np.testing.assert_allclose(reg.coef_ * 1e200, coef, rtol=1e-5)
    assert reg.intercept_ == pytest.approx(intercept, abs=1e-5)


@pytest.mark.parametrize("n_public", [1, 3, 5])
def test_epsilon_inf_with_few_public_rows_does_not_warn(n_public):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((100, 4))
    y = X @ [1.0, 2.0, 3.0, 4.0] + rng.standard_normal(100)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reg = SemiDPLinearRegression(epsilon=np.inf).fit(
            X, y, public_mask=np.arange(100) < n_public
        )
    ref = LinearRegression().fit(X, y)
    np.testing.assert_allclose(reg.coef_, ref.coef_, atol=1e-5)
    assert reg.intercept_ == pytest.approx(ref.intercept_, abs=1e-5)


@pytest.mark.parametrize("public_ridge", [0.0, 0.1])
def test_public_only_on_sparse_rows_with_an_offset_column_is_the_dense_fit(
    public_ridge,
):
    # A stored column of offset 500 and spread 1e-6: the one-pass centred
    # Gram matrix X^T X / n - m m^T cancelled to noise on CSR rows (a
    # coefficient error of 100% and 10x the public MSE of the dense fit).
    rng = np.random.default_rng(7)
    n = 400
    Z = rng.standard_normal((n, 4))
    X = Z * [1e-6, 1e6, 1.0, 3.0] + [500.0, 0.0, 500.0, -1e3]
    X[::3, 1] = 0.0
    y = 150.0 + Z @ [1.0, -2.0, 0.5, 0.3] + 0.3 * rng.standard_normal(n)
    mask = np.arange(n) < 200
    est = SemiDPLinearRegression(solver="public-only", public_ridge=public_ridge)
    dense = est.fit(X, y, public_mask=mask)
    dense_coef, dense_intercept = dense.coef_, dense.intercept_
    sparse = est.fit(sp.csr_matrix(X), y, public_mask=mask)
    np.testing.assert_allclose(sparse.coef_, dense_coef, rtol=1e-8)
    assert sparse.intercept_ == pytest.approx(dense_intercept, rel=1e-8)


def test_mask_none_at_epsilon_inf_does_not_warn():
    # The warning says the fit runs DP gradient descent from zero; at
    # epsilon=inf it is least squares on every row, whatever the mask.
    X, y, _, _ = _problem(n=500)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        reg = SemiDPLinearRegression(epsilon=np.inf).fit(X, y)
    ref = LinearRegression().fit(X, y)
    np.testing.assert_allclose(reg.coef_, ref.coef_, atol=1e-6)


@pytest.mark.parametrize("public_ridge", [0.0, 1e-6])
def test_public_only_keeps_a_column_of_small_spread_and_large_offset(public_ridge):
    # A column of offset 500 and spread 1e-3 is collinear with the constant
    # to 1e-12 in the uncentred Gram matrix of [x, 1]: its direction fell
    # below the pseudo-inverse's cutoff (ridge 0) or under the ridge
    # (default), a public-rows MSE of 0.88 where least squares has 0.005.
    rng = np.random.default_rng(0)
    n = 400
    mask = np.arange(n) < 60
    Z = rng.standard_normal((n, 2))
    X = np.column_stack([500.0 + 1e-3 * Z[:, 0], Z[:, 1]])
    y = Z @ [1.0, 2.0] + 3.0 + 0.1 * rng.standard_normal(n)
    reg = SemiDPLinearRegression(solver="public-only", public_ridge=public_ridge)
    reg.fit(X, y, public_mask=mask)
    Xp, yp = X[mask], y[mask]
    A = np.column_stack([Xp - Xp.mean(0), np.ones(mask.sum())])
    exact = np.linalg.lstsq(A, yp, rcond=None)[0]
    np.testing.assert_allclose(reg.coef_, exact[:2], rtol=1e-5)
    mse = np.mean((reg.predict(Xp) - yp) ** 2)
    assert mse == pytest.approx(np.mean((A @ exact - yp) ** 2), rel=1e-6)


def test_public_only_is_public_ridge_and_free():
    X, y, mask, _ = _problem()
    reg = SemiDPLinearRegression(solver="public-only", public_ridge=0.0).fit(
        X, y, public_mask=mask
    )
    ref = Ridge(alpha=0.0).fit(X[mask], y[mask])
    np.testing.assert_allclose(reg.coef_, ref.coef_, atol=1e-8)
    assert reg.epsilon_ == 0.0 and reg.n_iter_ == 0


def test_utility_rises_with_epsilon():
    X, y, mask, _ = _problem(n=6000, n_pub=150)
    mse = {
        eps: np.mean(
            [
                _test_mse(
                    SemiDPLinearRegression(
                        epsilon=eps, accountant="rdp", random_state=s
                    ).fit(X, y, public_mask=mask)
                )
                for s in range(2)
            ]
        )
        for eps in (0.02, 0.3, 5.0)
    }
    assert mse[0.02] > mse[0.3] > mse[5.0]


def test_semidp_beats_throw_away_with_few_public_rows():
    X, y, mask, w = _problem(n=6000, n_pub=40, d=10)
    semi = SemiDPLinearRegression(epsilon=1.0, random_state=0).fit(X, y, public_mask=mask)
    pub = SemiDPLinearRegression(solver="public-only").fit(X, y, public_mask=mask)
    # Excess risk under isotropic features is the squared coefficient error.
    assert np.sum((semi.coef_ - w) ** 2) < 0.2 * np.sum((pub.coef_ - w) ** 2)
    # The public model's prediction of the test MSE is in the right range.
    assert semi.predicted_excess_risk_ < 0.1


def test_semidp_sgd_is_poisson_sampled():
    X, y, mask, _ = _problem()
    reg = SemiDPLinearRegression(
        solver="semidp-sgd", adjacency="add_remove", batch_size=300, max_iter=2,
        accountant="rdp", random_state=0,
    ).fit(X, y, public_mask=mask)
    assert "PoissonSampled" in repr(reg.dp_event_)
    # q = 300 / 2700, so 2 epochs are ceil(2 / q) = 18 steps: n_iter_ counts
    # epochs (max_iter's unit) and t_ steps, as in DPLogisticRegression.
    assert reg.n_iter_ == 2 and reg.t_ == 18 and reg.epsilon_ <= 1.0 + 1e-9
    assert reg.privacy_record_.steps == reg.t_
    assert _test_mse(reg) < 1.0


def test_no_intercept_and_pandas_mask():
    pd = pytest.importorskip("pandas")
    X, y, mask, _ = _problem()
    reg = SemiDPLinearRegression(fit_intercept=False, random_state=0).fit(
        X, y - 1.5, public_mask=pd.Series(mask)
    )
    assert reg.intercept_ == 0.0 and reg.coef_.shape == (5,)


def test_mask_none_warns_and_treats_all_rows_as_private():
    X, y, _, _ = _problem()
    with pytest.warns(UserWarning, match="public_mask was not given"):
        reg = SemiDPLinearRegression(random_state=0).fit(X, y)
    assert reg.n_public_ == 0 and reg.n_private_ == X.shape[0] and reg.alpha_ == 1.0


def test_the_unscaled_target_warning_has_one_text_across_a_search():
    # It states the rule, not the fit's numbers: the folds and candidates
    # of a search (other n_samples, epsilon, public counts) warn once.
    texts = set()
    for n, epsilon, n_public in ((200, 1.0, 0), (300, 2.0, 3)):
        X = np.random.default_rng(0).normal(size=(n, 3))
        mask = np.arange(n) < n_public
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            SemiDPLinearRegression(epsilon=epsilon, random_state=0).fit(
                X, X @ [1.0, 2.0, 3.0], public_mask=mask
            )
        texts |= {str(w.message) for w in caught if "target_scaling" in str(w.message)}
    assert len(texts) == 1


def test_metadata_routing_slices_the_mask():
    X, y, mask, _ = _problem()
    with sklearn.config_context(enable_metadata_routing=True):
        reg = SemiDPLinearRegression(random_state=0).set_fit_request(public_mask=True)
        out = cross_validate(
            reg, X, y, cv=KFold(3), params={"public_mask": mask},
            return_estimator=True,
        )
    for est, (train, _) in zip(out["estimator"], KFold(3).split(X)):
        assert est.n_public_ == mask[train].sum()


@pytest.mark.parametrize(
    "params, mask, error, match",
    [
        ({}, np.ones(10, dtype=bool), ValueError, "one entry per sample"),
        ({}, np.ones(3000), TypeError, "boolean"),
        ({}, np.ones(3000, dtype=bool), ValueError, "needs private rows"),
        ({"solver": "public-only"}, np.zeros(3000, dtype=bool), ValueError, "needs public"),
        ({"solver": "dp-gd", "alpha": 0.5}, None, ValueError, "alpha"),
        ({"solver": "pda-md", "alpha": 0.5}, None, ValueError, "alpha"),
        ({"solver": "semidp-sgd"}, None, ValueError, "add/remove"),
        ({"epsilon": 0.0}, None, ValueError, "epsilon"),
        ({"epsilon": -1.0}, None, ValueError, "epsilon"),
        ({"delta": 1.0}, None, ValueError, "delta"),
    ],
)
def test_bad_input(params, mask, error, match):
    X, y, default_mask, _ = _problem()
    mask = default_mask if mask is None else mask
    with pytest.raises(error, match=match):
        SemiDPLinearRegression(**params).fit(X, y, public_mask=mask)


def test_nan_input_is_rejected():
    X, y, mask, _ = _problem()
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        SemiDPLinearRegression().fit(X, y, public_mask=mask)


def test_helper_matches_the_estimator_choice():
    X, y, mask, _ = _problem()
    params = semidp_hyperparameters(
        X[mask], y[mask], n_private=int((~mask).sum()), epsilon=1.0
    )
    reg = SemiDPLinearRegression(epsilon=1.0, random_state=0).fit(X, y, public_mask=mask)
    assert params["alpha"] == reg.alpha_
    assert params["learning_rate"] == reg.learning_rate_
    assert params["max_iter"] == reg.n_iter_
    fixed = SemiDPLinearRegression(
        epsilon=1.0, random_state=0,
        **{k: v for k, v in params.items() if k != "predicted_test_mse"},
    ).fit(X, y, public_mask=mask)
    np.testing.assert_array_equal(fixed.coef_, reg.coef_)


@pytest.mark.parametrize("bounds", [False, True])
def test_helper_matches_the_estimator_choice_on_raw_columns(bounds):
    # Raw units (an offset of 500, spreads from 1e-3 to 1e3): the fit ranks
    # its candidates on scaled public rows, and so must the helper, or the
    # parameters it returns are not the fit's.
    X, y, mask, _ = _problem()
    X = X * np.array([1e3, 1e-3, 1.0][: X.shape[1]] + [1.0] * (X.shape[1] - 3))
    X[:, 0] += 500.0
    kwargs = {}
    if bounds:
        lo, hi = X.min(axis=0) - 1.0, X.max(axis=0) + 1.0
        kwargs["feature_bounds"] = np.column_stack([lo, hi])
    params = semidp_hyperparameters(
        X[mask], y[mask], n_private=int((~mask).sum()), epsilon=1.0, **kwargs
    )
    reg = SemiDPLinearRegression(epsilon=1.0, random_state=0, **kwargs).fit(
        X, y, public_mask=mask
    )
    assert (params["alpha"], params["learning_rate"], params["max_iter"]) == (
        reg.alpha_, reg.learning_rate_, reg.n_iter_
    )
    unscaled = semidp_hyperparameters(
        X[mask], y[mask], n_private=int((~mask).sum()), epsilon=1.0,
        feature_scaling=None,
    )
    assert unscaled["predicted_test_mse"] != params["predicted_test_mse"]


# -- neighbouring datasets built by hand ---------------------------------------

SOLVERS = ["semidp-gd", "semidp-sgd", "dp-gd", "pda-md"]


def _fit_outcome(est, X, y, mask):
    """Fit and return (estimator or error, set of warnings)."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            outcome = est.fit(X, y, public_mask=mask)
        except (ValueError, TypeError) as exc:
            outcome = (type(exc), str(exc))
    return outcome, sorted({(w.category.__name__, str(w.message)) for w in caught})


def _private_neighbours():
    X, y, mask, _ = _problem(n=600, n_pub=150)
    i = np.flatnonzero(~mask)[3]  # a private row
    for name, row, target in [
        ("max_feature", [1.7e308, 0, 0, 0, 0], None),
        ("opposite_max", [-1.7e308, 1.7e308, 0, 0, 0], None),
        ("all_1e200", [1e200] * 5, None),
        ("huge_target", None, 1.7e308),
        ("huge_feature_and_target", [1.7e308, 0, 0, 0, 0], -1.7e308),
    ]:
        X2, y2 = X.copy(), y.copy()
        if row is not None:
            X2[i] = row
        if target is not None:
            y2[i] = target
        yield name, (X, y, mask), (X2, y2, mask)
    priv = ~mask
    Xc, yc = X.copy(), y.copy()
    Xc[priv, 1] = 3.0  # a constant private column ...
    yc[priv] = 2.0  # ... and constant private targets
    Xc2, yc2 = Xc.copy(), yc.copy()
    Xc2[i, 1], yc2[i] = -1.0, 5.0
    yield "constant_private_rows", (Xc, yc, mask), (Xc2, yc2, mask)
    Xd, yd = X.copy(), y.copy()
    Xd[priv], yd[priv] = X[i], y[i]  # every private row the same record
    Xd2, yd2 = Xd.copy(), yd.copy()
    Xd2[np.flatnonzero(priv)[0]] = X[0]
    yield "duplicated_private_rows", (Xd, yd, mask), (Xd2, yd2, mask)


PRIVATE_NEIGHBOURS = {name: (a, b) for name, a, b in _private_neighbours()}


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("name", list(PRIVATE_NEIGHBOURS))
def test_private_neighbours_end_the_same_way(name, solver):
    # Replace-one neighbours in the private block. A private row near the
    # float64 limit used to make coef_ NaN (0 * inf in its clipped term) and
    # to raise numpy warnings in one world only; now both worlds fit, with
    # finite coefficients, the same warnings and the same privacy record.
    a, b = PRIVATE_NEIGHBOURS[name]
    params = dict(solver=solver, adjacency="add_remove", random_state=0)
    if solver == "semidp-sgd":
        params.update(batch_size=64, max_iter=2)
    (est_a, warn_a), (est_b, warn_b) = (
        _fit_outcome(SemiDPLinearRegression(**params), *data) for data in (a, b)
    )
    assert warn_a == warn_b
    for est in (est_a, est_b):
        assert np.all(np.isfinite(est.coef_)) and np.isfinite(est.intercept_)
        assert np.all(np.isfinite(est.predict(a[0][a[2]])))
    assert est_a.privacy_record_ == est_b.privacy_record_
    for attr in ("alpha_", "learning_rate_", "n_iter_"):
        assert getattr(est_a, attr) == getattr(est_b, attr)


# -- the record describes the event it carries --------------------------------


@pytest.mark.parametrize(
    "params",
    [
        {"solver": "semidp-gd"},
        {"solver": "semidp-gd", "adjacency": "add_remove", "accountant": "pld"},
        {"solver": "semidp-sgd", "adjacency": "add_remove", "batch_size": 100},
        {"solver": "semidp-sgd", "adjacency": "add_remove", "batch_size": 10_000},
        {"solver": "dp-gd"},
        {"solver": "pda-md", "max_iter": 5},
        {"solver": "public-only"},
        {"solver": "semidp-gd", "epsilon": np.inf},
    ],
    ids=["gd", "gd_pld", "sgd", "sgd_full_batch", "dp-gd", "pda-md",
         "public-only", "non_private"],
)
def test_privacy_record_fields_rebuild_the_event(params):
    from sklearn_dpfair.privacy._accounting import no_op_event

    X, y, mask, _ = _problem(n=1200, n_pub=200)
    est = SemiDPLinearRegression(random_state=0, **params).fit(X, y, public_mask=mask)
    rec = est.privacy_record_
    q = 1.0 if rec.sampling_probability is None else rec.sampling_probability
    if rec.steps == 0:
        rebuilt = no_op_event()
        assert rec.clip_norm is None and rec.noise_multiplier == 0
    elif q >= 1.0 and np.isfinite(est.epsilon):
        # Full batch: the T Gaussian steps of multiplier z are accounted as
        # the one Gaussian of multiplier z / sqrt(T) they compose to (GDP).
        single = rec.dp_event.noise_multiplier
        assert single == pytest.approx(rec.noise_multiplier / np.sqrt(rec.steps))
        composed = noisy_sgd_event(rec.noise_multiplier, q, rec.steps)
        # The same guarantee; PLD discretizes the composition (a bound).
        assert epsilon_of(composed, rec.delta, rec.accountant) == pytest.approx(
            rec.epsilon, rel=2e-3
        )
        assert "accounted as the one Gaussian" in rec.mechanism
        rebuilt = rec.dp_event
    else:
        rebuilt = noisy_sgd_event(rec.noise_multiplier, q, rec.steps)
    assert rebuilt == rec.dp_event
    assert epsilon_of(rebuilt, rec.delta, rec.accountant) == rec.epsilon
    assert rec.steps == est.t_
    if params["solver"] != "semidp-sgd":  # full batch: one step a pass
        assert est.t_ == est.n_iter_
    factor = 2.0 if est.adjacency == "replace_one" else 1.0
    if np.isinf(est.epsilon):
        # No clipping without privacy: the record does not claim a bound.
        assert rec.clip_norm == np.inf
    elif rec.steps:
        assert rec.clip_norm == factor * est.clip_norm
    if rec.sampling_probability is None and params["solver"] == "semidp-sgd":
        # The whole private block in every step: the text says so.
        assert "full-batch" in rec.mechanism and "Poisson" not in rec.mechanism
    elif rec.sampling_probability is not None:
        assert "Poisson" in rec.mechanism


@pytest.mark.parametrize("solver", SOLVERS)
def test_unclipped_sums_of_huge_rows_leave_the_model_finite(solver):
    # With epsilon = inf nothing is clipped: each row's term may be inf
    # (1e200 * 1e200) and their sum inf - inf; the step must not write NaN.
    X, y, mask, _ = _problem(n=600, n_pub=150)
    X[np.flatnonzero(~mask)[:20]] = 1e200
    params = {"batch_size": 64, "max_iter": 2} if solver == "semidp-sgd" else {}
    est, warns = _fit_outcome(
        SemiDPLinearRegression(solver=solver, epsilon=np.inf, adjacency="add_remove",
                               random_state=0, **params),
        X, y, mask,
    )
    assert np.all(np.isfinite(est.coef_)) and np.isfinite(est.intercept_)
    assert not [w for w in warns if w[0] == "RuntimeWarning"]


@pytest.mark.parametrize(
    "old, new",
    [("semidp_gd", "semidp-gd"), ("semidp_sgd", "semidp-sgd"), ("dp_gd", "dp-gd"),
     ("public_only", "public-only"), ("pda_md", "pda-md")],
)
def test_underscore_solver_names_are_deprecated_aliases(old, new):
    X, y, mask, _ = _problem(n=1200, n_pub=200)
    common = {"random_state": 0, "adjacency": "add_remove"}
    with pytest.warns(FutureWarning, match=f"use solver='{new}'") as record:
        reg = SemiDPLinearRegression(solver=old, **common).fit(X, y, public_mask=mask)
    # Attributed to the line that called fit, not to the package.
    assert record[0].filename == __file__
    ref = SemiDPLinearRegression(solver=new, **common).fit(X, y, public_mask=mask)
    assert reg.solver_ == ref.solver_ == new
    assert reg.solver == old  # fit does not mutate the parameter
    np.testing.assert_array_equal(reg.coef_, ref.coef_)
    assert reg.privacy_record_ == ref.privacy_record_


SPARSE_CASES = [
    {"solver": "semidp-gd"},
    {"solver": "semidp-gd", "preconditioner": None, "public_clipping": "clip"},
    {"solver": "semidp-sgd", "adjacency": "add_remove", "batch_size": 100},
    {"solver": "dp-gd"},
    {"solver": "pda-md"},
    {"solver": "public-only"},
]


def _sparse_problem(n=1500, d=40, n_pub=200, density=0.1, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * (rng.random((n, d)) < density)
    y = X @ rng.standard_normal(d) + 0.5 + 0.3 * rng.standard_normal(n)
    return X, y, np.arange(n) < n_pub


@pytest.mark.parametrize("params", SPARSE_CASES, ids=lambda p: "-".join(map(str, p.values())))
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_input_equals_dense_for_the_same_seed(params, fmt):
    X, y, mask = _sparse_problem()
    dense = SemiDPLinearRegression(random_state=3, feature_scaling=None, **params).fit(X, y, public_mask=mask)
    Xs = sp.csr_matrix(X) if fmt == "csr" else sp.csc_matrix(X)
    sparse = SemiDPLinearRegression(random_state=3, feature_scaling=None, **params).fit(Xs, y, public_mask=mask)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-10, atol=1e-12)
    assert sparse.intercept_ == pytest.approx(dense.intercept_, rel=1e-10, abs=1e-12)
    assert sparse.privacy_record_ == dense.privacy_record_
    # The sparse public Gram matrix sums in another order than the dense
    # one: predictions near 0 (cancelling terms) agree to the coefficients'
    # absolute tolerance.
    np.testing.assert_allclose(
        sparse.predict(Xs), dense.predict(X), rtol=1e-10, atol=1e-12
    )


def test_sparse_rows_are_never_densified(monkeypatch):
    # The solver gets the whole sparse matrix (private rows addressed by the
    # mask); only the public block reaches the public statistics, sparse
    # too (its Gram matrix is a sparse product).
    from sklearn_dpfair._solvers.semi_dp import _fit as semidp_fit

    seen = {}
    real_solver, real_geometry = (
        semidp_fit.semidp_gradient_descent, semidp_fit.public_geometry
    )

    def solver_spy(data, *args, **kwargs):
        seen["private"] = data.X_private
        return real_solver(data, *args, **kwargs)

    def geometry_spy(X_pub, y_pub, **kwargs):
        seen["public"] = X_pub
        return real_geometry(X_pub, y_pub, **kwargs)

    monkeypatch.setattr(semidp_fit, "semidp_gradient_descent", solver_spy)
    monkeypatch.setattr(semidp_fit, "public_geometry", geometry_spy)
    X, y, mask = _sparse_problem()
    Xs = sp.csr_matrix(X)
    SemiDPLinearRegression(random_state=0).fit(Xs, y, public_mask=mask)
    assert sp.issparse(seen["private"]) and seen["private"].nnz == Xs.nnz
    assert sp.issparse(seen["public"])
    assert seen["public"].shape == (int(mask.sum()), X.shape[1])
    assert seen["public"].nnz == Xs[mask].nnz


@pytest.mark.parametrize("params", SPARSE_CASES, ids=lambda p: "-".join(map(str, p.values())))
@pytest.mark.parametrize("sparse", [False, True])
def test_float32_stays_float32(params, sparse):
    X, y, mask = _sparse_problem()
    X32 = X.astype(np.float32)
    ref = SemiDPLinearRegression(random_state=3, feature_scaling=None, **params).fit(X, y, public_mask=mask)
    reg = SemiDPLinearRegression(random_state=3, feature_scaling=None, **params).fit(
        sp.csr_matrix(X32) if sparse else X32, y, public_mask=mask
    )
    assert reg.coef_.dtype == np.float32
    assert reg.predict(X32).dtype == np.float32
    np.testing.assert_allclose(reg.coef_, ref.coef_, rtol=1e-4, atol=1e-4)


def test_float32_solve_makes_no_float64_copy_of_x(monkeypatch):
    # The noisy iteration (where X is read) allocates far less than a
    # float64 copy of X (2 X.nbytes); the public tuning's fixed cost, which
    # does not grow with n, is not measured.
    import tracemalloc

    from sklearn_dpfair._solvers.semi_dp import _fit as semidp_fit

    peaks = []
    real = semidp_fit.semidp_gradient_descent

    def spy(*args, **kwargs):
        tracemalloc.start()
        try:
            return real(*args, **kwargs)
        finally:
            peaks.append(tracemalloc.get_traced_memory()[1])
            tracemalloc.stop()

    monkeypatch.setattr(semidp_fit, "semidp_gradient_descent", spy)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40_000, 50)).astype(np.float32)
    y = X @ np.ones(50, dtype=np.float32)
    mask = np.arange(40_000) < 1000
    SemiDPLinearRegression(random_state=0, max_iter=3).fit(X, y, public_mask=mask)
    assert peaks[0] < 0.5 * X.nbytes


# Counts: treated as public by default, declared with n_private.


def _small_pair(seed=0, n_pub=40, n_priv=20, d=3):
    """40 public and 20 private rows, and the add/remove neighbour (one more
    private row, far from the others)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_pub + n_priv, d))
    y = X @ np.ones(d) + 0.5 * rng.standard_normal(n_pub + n_priv)
    mask = np.arange(n_pub + n_priv) < n_pub
    X_add = np.vstack([X, 50.0 * np.ones((1, d))])
    y_add = np.append(y, -500.0)
    return (X, y, mask), (X_add, y_add, np.append(mask, False))


def _spied_fit(monkeypatch, params, X, y, mask):
    """Fit, recording the pre-noise private sums and the solver's divisor."""
    from sklearn_dpfair._solvers.semi_dp import _solver

    sums, divisors = [], []
    original_privatize = _solver._privatize_columns
    original_solve = _semidp_fit.semidp_gradient_descent

    def privatize(total, mechanisms, rngs, cols):
        sums.append(np.array(total))
        return original_privatize(total, mechanisms, rngs, cols)

    def solve(data, W0, **kwargs):
        count = kwargs.get("private_count")
        q = kwargs["sampling_probability"]
        divisors.append(q * (data.n_private if count is None else count))
        return original_solve(data, W0, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(_solver, "_privatize_columns", privatize)
        patch.setattr(_semidp_fit, "semidp_gradient_descent", solve)
        reg = SemiDPLinearRegression(random_state=0, **params).fit(
            X, y, public_mask=mask
        )
    return reg, sums, divisors


@pytest.mark.parametrize(
    "params",
    [
        {"solver": "semidp-gd"},
        {"solver": "semidp-gd", "preconditioner": None},
        {"solver": "semidp-sgd", "batch_size": 10, "max_iter": 1},
        {"solver": "dp-gd"},
    ],
    ids=["semidp-gd", "plain", "semidp-sgd", "dp-gd"],
)
def test_declared_n_private_makes_every_count_public(params, monkeypatch):
    # Add/remove neighbours: the pre-noise sums differ by at most the
    # recorded sensitivity, and every count the fit divides by or tunes from
    # is the declared one, so everything but the sums is equal.
    params = {**params, "adjacency": "add_remove", "n_private": 25, "clip_norm": 1.0}
    (X, y, mask), (X_add, y_add, mask_add) = _small_pair()
    fits = [_spied_fit(monkeypatch, params, *data) for data in
            ((X, y, mask), (X_add, y_add, mask_add))]
    (reg, sums, divisors), (reg_add, sums_add, divisors_add) = fits
    q = reg.privacy_record_.sampling_probability or 1.0
    assert divisors == divisors_add == [pytest.approx(q * 25)]
    if params["solver"] == "semidp-sgd":
        assert q == pytest.approx(10 / 25)
    record, record_add = reg.privacy_record_, reg_add.privacy_record_
    assert record == record_add
    assert record.declared_counts == (("n_private", 25),)
    assert "no count is read from the data" in str(record)
    assert "treated as public" not in str(record)
    for name in ("alpha_", "learning_rate_", "t_", "n_iter_", "n_private_"):
        assert getattr(reg, name) == getattr(reg_add, name), name
    assert reg.n_private_ == 25
    if params["solver"] != "semidp-sgd":
        # Full batch: the same steps on both; each sum moves by <= C.
        # The first step is at the same (public) warm start on both; after
        # it the parameters differ (post-processing of the first release).
        assert len(sums) == len(sums_add) == reg.t_
        gap = np.linalg.norm(sums[0] - sums_add[0])
        assert 0.5 * record.clip_norm < gap <= record.clip_norm * (1 + 1e-12)


def test_default_treats_the_private_count_as_public(monkeypatch):
    (X, y, mask), (X_add, y_add, mask_add) = _small_pair()
    params = {"adjacency": "add_remove"}
    reg, _, divisors = _spied_fit(monkeypatch, params, X, y, mask)
    reg_add, _, divisors_add = _spied_fit(monkeypatch, params, X_add, y_add, mask_add)
    # The divisor is read from the data: it moves with the added row.
    assert (divisors, divisors_add) == ([20.0], [21.0])
    assert (reg.n_private_, reg_add.n_private_) == (20, 21)
    assert reg.privacy_record_.declared_counts == ()
    assert "(n treated as public)" in str(reg.privacy_record_)


def test_declared_n_private_scales_the_step_not_the_data():
    # Every division is by the declared count: with the sum's noise forced
    # to zero-free identity, one plain step from 0 without public rows is
    # -lr * (noisy sum) / (C n_private), whatever the number of rows.
    X, y, _, _ = _problem(n=200, n_pub=0)
    ones = np.ones(200, dtype=bool)
    est = dict(solver="semidp-gd", preconditioner=None, max_iter=1,
               learning_rate=1.0, epsilon=1.0, public_ridge=0.0, random_state=0)
    small = SemiDPLinearRegression(n_private=100, **est).fit(X, y, public_mask=~ones)
    large = SemiDPLinearRegression(n_private=400, **est).fit(X, y, public_mask=~ones)
    # The same seed, clip and calibrated noise (one full-batch release, whose
    # noise does not depend on the count), so the step is the same noisy sum
    # divided by the declared count: 4x smaller with a 4x larger count.
    np.testing.assert_allclose(small.coef_, 4.0 * large.coef_, rtol=1e-10)


@pytest.mark.parametrize("n_public", [2, 4])
def test_fewer_public_rows_than_parameters_give_only_the_intercept_start(n_public):
    # 3 features and an intercept: 2 or 4 public rows cannot estimate the
    # public geometry. Started, preconditioned and tuned on them, the fit
    # diverged (R^2 -40); now it starts from zero coefficients (their mean
    # target as the intercept) and takes the plain steps of a fit without
    # public rows, says so, and its record is the one planned from counts.
    rng = np.random.default_rng(0)
    n = 1500
    X = rng.normal(size=(n, 3))
    y = X @ [1.0, 2.0, 3.0] + rng.normal(size=n)
    none = np.zeros(n, dtype=bool)
    few = np.arange(n) < n_public
    est = SemiDPLinearRegression(random_state=0)
    with pytest.warns(UserWarning, match=f"Only {n_public} public rows for 4"):
        est.fit(X, y, public_mask=few)
    plain = SemiDPLinearRegression(random_state=0).fit(X, y, public_mask=none)
    assert est.score(X, y) > 0.9
    assert est.score(X, y) > plain.score(X, y) - 0.02
    np.testing.assert_array_equal(est.coef_public_, np.zeros(3))
    # On raw columns (a target far from 0, out of the clipped steps' reach
    # without public scales) the start at their mean target keeps the fit
    # near the constant predictor; from zero it was 70x worse.
    X_raw = X * [10.0, 1000.0, 1.0] + [50.0, 5e4, 2000.0]
    y_raw = X_raw @ [1.0, 0.01, 3.0] + rng.normal(size=n)
    with pytest.warns(UserWarning, match="public rows for 4"):
        raw = SemiDPLinearRegression(random_state=0).fit(
            X_raw, y_raw, public_mask=few
        )
    assert raw.score(X_raw, y_raw) > -1.0
    plan = SemiDPLinearRegression().privacy_plan(n, 3, n_public=n_public)
    assert est.dp_event_ == plan.dp_event


@pytest.mark.parametrize("n_public", [2, 3, 4])
def test_pda_md_on_too_few_public_rows_takes_plain_steps(n_public):
    # Its mirror map from 2 to 4 rows for 4 parameters was a rank-deficient
    # public Hessian's: the coordinates those rows see barely moved in 20
    # steps (R^2 0.47 to 0.86 against 0.98 for the other solvers).
    rng = np.random.default_rng(0)
    n = 5000
    X = rng.normal(size=(n, 3))
    y = X @ [1.0, 2.0, 3.0] + 0.5 * rng.normal(size=n)
    few = np.arange(n) < n_public
    with pytest.warns(UserWarning, match="public rows for 4"):
        pda = SemiDPLinearRegression(solver="pda-md", random_state=0).fit(
            X, y, public_mask=few
        )
    assert pda.score(X, y) > 0.95


def _diabetes_raw():
    from sklearn.datasets import load_diabetes

    return load_diabetes(return_X_y=True, scaled=False)


@pytest.mark.parametrize("solver", ["semidp-gd", "dp-gd", "pda-md"])
def test_a_public_target_near_the_float_limit_takes_the_default_step(solver):
    # The public residual variance overflows to inf: the model's clipped
    # curvature is 0, and the plain step (dp-gd, pda-md) divided by it.
    X, y, mask, _ = _problem(n=600, n_pub=150)
    y = y.copy()
    y[np.flatnonzero(mask)[3]] = 1e300
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reg = SemiDPLinearRegression(solver=solver, random_state=0).fit(
            X, y, public_mask=mask
        )
    assert np.all(np.isfinite(reg.coef_)) and np.isfinite(reg.intercept_)
    if solver != "semidp-gd":
        assert reg.learning_rate_ == _semidp_fit.DEFAULT_PLAIN_LEARNING_RATE


def test_float32_x_keeps_the_target_in_float64():
    # A cast of y to float32 turned a finite private target beyond its range
    # into inf with numpy's warning, after validation: one record decided
    # it. A public one made coef_ NaN.
    X, y = _diabetes_raw()
    X = X.astype(np.float32)
    mask = np.arange(len(y)) < 40
    for row in (200, 5):  # private, then public
        y_big = y.copy()
        y_big[row] = 1e39
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            reg = SemiDPLinearRegression(epsilon=1.0, random_state=0).fit(
                X, y_big, public_mask=mask
            )
        assert reg.coef_.dtype == np.float32
        assert np.all(np.isfinite(reg.coef_)) and np.isfinite(reg.intercept_)
    # A public fit float32 cannot hold is refused, from public rows only.
    y_big[5] = 1e41
    with pytest.raises(ValueError, match="pass X as float64"):
        SemiDPLinearRegression(epsilon=1.0, random_state=0).fit(
            X, y_big, public_mask=mask
        )


def test_epsilon_inf_on_public_rows_only_is_least_squares():
    # The documented non-private limit needs no private row.
    X, y, _, _ = _problem(n=500)
    every = np.ones(len(y), dtype=bool)
    reg = SemiDPLinearRegression(epsilon=np.inf).fit(X, y, public_mask=every)
    ref = LinearRegression().fit(X, y)
    np.testing.assert_allclose(reg.coef_, ref.coef_, atol=1e-5)
    assert reg.intercept_ == pytest.approx(ref.intercept_, abs=1e-5)
    plan = SemiDPLinearRegression(epsilon=np.inf).privacy_plan(500, 5, n_public=500)
    assert plan.epsilon == np.inf
    with pytest.raises(ValueError, match="needs private rows"):
        SemiDPLinearRegression(epsilon=1.0).fit(X, y, public_mask=every)


def test_sparse_public_rows_that_overflow_name_feature_bounds():
    # Dense columns are scaled by the public rows first; sparse ones only by
    # declared bounds, which the refusal names.
    X, y, mask, _ = _problem(n=600, n_pub=150)
    X = X.copy()
    X[np.flatnonzero(mask)[0]] = 1e300
    SemiDPLinearRegression(random_state=0).fit(X, y, public_mask=mask)
    with pytest.raises(ValueError, match="feature_bounds"):
        SemiDPLinearRegression(random_state=0).fit(
            sp.csr_matrix(X), y, public_mask=mask
        )


@pytest.mark.parametrize("epsilon", [1.0, np.inf])
def test_a_string_target_is_parsed_and_refused_when_not_a_finite_number(epsilon):
    # A target of numeric strings fits as its numbers; one that parses to
    # NaN or an infinity ("nan", "1e400") fitted coefficients 0 without an
    # error, and a non-numeric one raised numpy's message showing the
    # value: both are refused naming y, showing no value.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    y = np.round(X @ np.array([1.0, 2.0]) + rng.normal(size=200), 6)
    mask = np.arange(200) < 40
    params = {"epsilon": epsilon, "random_state": 0}
    ref = SemiDPLinearRegression(**params).fit(X, y, public_mask=mask)
    est = SemiDPLinearRegression(**params).fit(X, y.astype(str), public_mask=mask)
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-12)
    for value, message in [
        ("nan", "Input y contains NaN or infinity"),
        ("1e400", "Input y contains NaN or infinity"),
        # (validate_data refuses an object one first, in its own words.)
        ("Alice", "Input y"),
    ]:
        for bad in (y.astype(str).astype(object), y.astype(str)):
            bad = bad.copy()
            bad[3] = value
            with pytest.raises(ValueError, match=message) as info:
                SemiDPLinearRegression(**params).fit(X, bad, public_mask=mask)
            assert value not in str(info.value)


@pytest.mark.parametrize("n_rows", [30, 120])
def test_the_delta_warning_reads_the_declared_count(n_rows):
    # With n_private declared (add/remove), the private rows in the data
    # are no public count: the delta >= 1/n warning compares delta with the
    # declared count plus the public rows (210 or 60), whatever the data
    # hold, so neighbours warn alike.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n_rows, 2))
    y = X.sum(axis=1) + rng.standard_normal(n_rows)
    mask = np.arange(n_rows) < 10
    params = dict(epsilon=1.0, adjacency="add_remove", max_iter=2, random_state=0)
    for n_private, delta, warns in [(200, 1e-2, True), (50, 1e-2, False)]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            SemiDPLinearRegression(n_private=n_private, delta=delta, **params).fit(
                X, y, public_mask=mask
            )
        warned = any("not smaller than 1/n_samples" in str(w.message) for w in caught)
        assert warned == warns, (n_rows, n_private)


@pytest.mark.parametrize(
    "params",
    [
        {"solver": "semidp-gd"},
        # Poisson batches of rate 1: every private row in every batch.
        {"solver": "semidp-sgd", "batch_size": 1, "adjacency": "add_remove"},
    ],
    ids=["semidp-gd", "semidp-sgd"],
)
def test_a_private_row_of_huge_weight_contributes_a_full_clipped_term(params):
    # A weight near the largest float times a residual above 1 overflowed to
    # inf, and a term that is not finite counts 0: the row vanished from
    # the sums. Saturated, it is clipped to C like any other huge row.
    class Sums:
        def __init__(self):
            self.norms = []

        def before_noise(self, mechanism, clipped_sum):
            self.norms.append(float(np.linalg.norm(clipped_sum)))
            return clipped_sum

        def after_noise(self, mechanism, noisy_sum):
            pass

    rng = np.random.default_rng(1)
    n = 40
    X = rng.standard_normal((n, 3))
    y = X @ np.array([1.0, 2.0, 3.0]) + rng.standard_normal(n)
    mask = np.ones(n, dtype=bool)
    mask[-1] = False  # one private row, far from the public fit
    y[-1] = 50.0
    for weight in (1e300, 1e308):
        sample_weight = np.ones(n)
        sample_weight[-1] = weight
        with observe_privatize(Sums()) as sums:
            SemiDPLinearRegression(
                epsilon=1.0, max_iter=3, clip_norm=1.0, random_state=0, **params
            ).fit(X, y, sample_weight=sample_weight, public_mask=mask)
        assert sums.norms and sums.norms == pytest.approx([1.0] * len(sums.norms))


@pytest.mark.parametrize(
    "name",
    ["epsilon", "alpha", "clip_norm", "learning_rate", "public_ridge", "n_private"],
)
def test_an_int_beyond_float64_is_refused_naming_the_parameter(name):
    # 10**400 passes the Real and Integral constraints but has no float:
    # an OverflowError came out of the plan and the fit. (alpha is refused
    # by its [0, 1] constraint first, and epsilon by the budget constraint
    # every private estimator shares.)
    X, y, mask, _ = _problem(n=200, d=3, n_pub=40)
    est = SemiDPLinearRegression(**{name: 10**400})
    # Every numeric parameter's interval refuses it now, naming it.
    match = rf"^{name} is beyond the largest float|The '{name}' parameter"
    with pytest.raises(ValueError, match=match):
        est.fit(X, y, public_mask=mask)
    if name != "alpha":
        with pytest.raises(ValueError, match=match):
            est.privacy_plan(200, 3, n_public=40)
    assert not hasattr(est, "coef_")


@pytest.mark.parametrize(
    "name, value",
    [("delta", np.float32(0.5)), ("delta", np.float32(1e-5)),
     ("epsilon", np.float32(0.7)), ("epsilon", 10**30)],
)
def test_numpy_and_int_budgets_plan_as_the_equal_float(name, value):
    planned = [
        SemiDPLinearRegression(accountant="rdp", **{name: v}).privacy_plan(
            200, 3, n_public=40
        )
        for v in (value, float(value))
    ]
    assert planned[0].epsilon == planned[1].epsilon
    assert planned[0].dp_event == planned[1].dp_event


@pytest.mark.parametrize("epsilon", [1.0, np.inf])
def test_float32_x_gives_a_float32_public_warm_start(epsilon):
    # coef_public_ is documented as in the units of coef_: float32 X gave a
    # float32 coef_ beside a float64 coef_public_.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3)).astype(np.float32)
    y = X @ np.array([1.0, 2.0, 3.0], dtype=np.float32)
    mask = np.arange(300) < 50
    est = SemiDPLinearRegression(epsilon=epsilon, random_state=0)
    est.fit(X, y, public_mask=mask)
    assert est.coef_.dtype == est.coef_public_.dtype == np.float32
