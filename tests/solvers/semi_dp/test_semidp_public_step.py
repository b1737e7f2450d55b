# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The public gradient's step: a given step that expands it is refused, "auto" is capped.

Unclipped public gradients are divided by ``C`` like the private ones (De
et al.'s normalization), so with a small clip norm and no preconditioner a
given step can multiply the distance to the public fit by more than 1 in
every step: the iterates then overflow. Whether they do is decided by the
public rows and the parameters alone.
"""

import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_dpfair._solvers.semi_dp._public_geometry import (
    newton_preconditioner,
    public_geometry,
    public_step_curvature,
)
from sklearn_dpfair.linear_model import SemiDPLinearRegression

# The configuration a seeded sweep found ending non-finite without a word.
SWEEP = dict(
    solver="semidp-sgd",
    preconditioner=None,
    learning_rate=1.0,
    clip_norm=0.01,
    alpha=0.5,
    batch_size=1,
    public_ridge=1.0,
    adjacency="add_remove",
    accountant="rdp",
    delta=1e-3,
    feature_scaling=None,
    random_state=919,
)


def _problem(n=300, n_public=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 1))
    y = 2.0 * X[:, 0] + rng.standard_normal(n)
    return X, y, np.arange(n) < n_public


def test_the_sweep_configuration_is_refused_naming_a_safe_step():
    X, y, mask = _problem()
    with pytest.raises(ValueError, match=r"learning_rate=1\.0 is too large") as info:
        SemiDPLinearRegression(**SWEEP).fit(X, y, public_mask=mask)
    # The bound it names is 2 over (1 - alpha) / C times the public
    # curvature of these public rows.
    curvature = 0.5 / 0.01 * public_step_curvature(X[mask], 1.0)
    assert f"below {2.0 / curvature:.4g}" in str(info.value)


@pytest.mark.parametrize("solver", ["semidp-sgd", "semidp-gd"])
def test_auto_step_is_capped_at_the_public_newton_step(solver):
    X, y, mask = _problem()
    est = SemiDPLinearRegression(
        **{**SWEEP, "learning_rate": "auto", "solver": solver, "max_iter": 5}
    ).fit(X, y, public_mask=mask)
    assert np.all(np.isfinite(est.coef_)) and np.isfinite(est.intercept_)
    assert np.all(np.isfinite(est.predict(X)))
    curvature = 0.5 / 0.01 * public_step_curvature(X[mask], 1.0)
    # 1 / curvature up to the round-off of a 2 x 2 eigenvalue.
    assert est.learning_rate_ * curvature == pytest.approx(1.0, rel=1e-9)


def test_the_refusal_does_not_depend_on_the_private_rows():
    X, y, mask = _problem()
    X2, y2 = X.copy(), y.copy()
    X2[~mask] *= 1e6  # wildly different private rows, same public rows
    y2[~mask] = -y2[~mask] * 1e3
    messages = []
    for Xi, yi in ((X, y), (X2, y2)):
        with pytest.raises(ValueError, match="too large") as info:
            SemiDPLinearRegression(**SWEEP).fit(Xi, yi, public_mask=mask)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_a_safe_given_step_and_clipped_public_gradients_are_not_refused():
    X, y, mask = _problem()
    curvature = 0.5 / 0.01 * public_step_curvature(X[mask], 1.0)
    for kwargs in (
        {"learning_rate": 1.9 / curvature, "max_iter": 2},
        {"public_clipping": "clip", "max_iter": 2},
    ):
        est = SemiDPLinearRegression(**{**SWEEP, **kwargs})
        est.fit(X, y, public_mask=mask)
        assert np.all(np.isfinite(est.coef_)) and np.isfinite(est.intercept_)


def test_a_given_step_beyond_twice_the_newton_step_is_refused_when_preconditioned():
    # The public preconditioner makes the public part at most a full model
    # Newton step: a given learning_rate of 3 with a small alpha expands it.
    X, y, mask = _problem(n_public=50)
    est = SemiDPLinearRegression(
        solver="semidp-gd", preconditioner="public", learning_rate=3.0,
        alpha=0.05, clip_norm=0.01, max_iter=5, random_state=0,
    )
    with pytest.raises(ValueError, match=r"learning_rate=3\.0 is too large"):
        est.fit(X, y, public_mask=mask)


def test_public_weights_enter_the_public_curvature():
    X, y, mask = _problem(n_public=20)
    curvature = 0.5 / 0.01 * public_step_curvature(X[mask], 1.0)
    safe = 1.5 / curvature
    weights = np.ones(len(y))
    est = SemiDPLinearRegression(**{**SWEEP, "learning_rate": safe, "max_iter": 2})
    est.fit(X, y, public_mask=mask, sample_weight=weights)
    weights[mask] = 2.0  # doubles the public curvature: 3 / curvature > 2
    with pytest.raises(ValueError, match="too large"):
        est.fit(X, y, public_mask=mask, sample_weight=weights)


@pytest.mark.parametrize("sparse", [False, True])
def test_public_step_curvature_is_the_top_eigenvalue_of_p_h(sparse):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 3)) * [1.0, 5.0, 0.2] + [0.0, 3.0, 0.0]
    y = X @ [1.0, -1.0, 2.0] + rng.standard_normal(40)
    w = rng.uniform(0.5, 2.0, 40)
    Xa = np.hstack([X, np.ones((40, 1))])
    H = Xa.T @ (w[:, None] * Xa) / 40
    Xi = sp.csr_matrix(X) if sparse else X
    assert public_step_curvature(Xi, 1.0, weights=w) == pytest.approx(
        np.linalg.eigvalsh(H)[-1], rel=1e-10
    )
    geometry = public_geometry(X, y, intercept_scaling=1.0, ridge=0.0, n_features=3)
    P = newton_preconditioner(geometry, [0.3], [2.0], 1.0)
    dense_P = P.apply(np.eye(4), np.zeros(4, dtype=int))
    expected = np.max(np.linalg.eigvals(dense_P @ H).real)
    assert public_step_curvature(
        Xi, 1.0, weights=w, preconditioner=P
    ) == pytest.approx(expected, rel=1e-8)


def test_tuned_auto_step_is_capped_when_public_weights_raise_the_curvature():
    # The tuned step is a full Newton step of the unweighted public model;
    # public weights of 10 make the public part ten times steeper, which
    # the uncapped step turned into divergence (coefficients ~ 3e4).
    rng = np.random.default_rng(0)
    n = 2000
    X = rng.standard_normal((n, 3))
    y = X @ [1.0, 2.0, 3.0] + rng.standard_normal(n)
    mask = np.arange(n) < 100
    weights = np.ones(n)
    weights[mask] = 10.0
    est = SemiDPLinearRegression(random_state=0, alpha=0.2, clip_norm=0.1)
    est.fit(X, y, public_mask=mask, sample_weight=weights)
    np.testing.assert_allclose(est.coef_, [1.0, 2.0, 3.0], atol=0.3)
    assert est.learning_rate_ < 1.0


@pytest.mark.parametrize("learning_rate", [2.0, 1e100, 1e308])
@pytest.mark.parametrize("solver", ["semidp-gd", "semidp-sgd"])
def test_a_given_step_of_two_newton_steps_or_more_is_refused_by_fit_and_plan(
    learning_rate, solver
):
    # With the public Newton preconditioner a step of 2 divided by zero in
    # the error model, and one of 1e100 made its curvature NaN: the
    # preconditioner was 0 and the fit returned the warm start, silently.
    # The parameter and the public counts decide, so the plan refuses too.
    X, y, mask = _problem(n_public=50)
    kwargs = dict(solver=solver, learning_rate=learning_rate, random_state=0)
    if solver == "semidp-sgd":
        kwargs["adjacency"] = "add_remove"
    match = "^" + re.escape(
        f"learning_rate={learning_rate!r} is too large for preconditioner="
    )
    with pytest.raises(ValueError, match=match):
        SemiDPLinearRegression(**kwargs).privacy_plan(300, 1, n_public=50)
    est = SemiDPLinearRegression(**kwargs)
    with pytest.raises(ValueError, match=match):
        est.fit(X, y, public_mask=mask)
    assert not hasattr(est, "coef_")


def test_steps_of_two_or_more_stay_allowed_where_the_fit_does_not_tune():
    # Plain steps (no preconditioner) and too few public rows to tune keep
    # the C-normalized unit, whose safe range the public rows decide.
    X, y, mask = _problem(n_public=50)
    for kwargs, public in (
        ({"preconditioner": None}, mask),
        ({}, np.arange(len(y)) < 2),
    ):
        est = SemiDPLinearRegression(
            learning_rate=3.0, alpha=0.9, max_iter=3, random_state=0, **kwargs
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # too few public rows
            est.fit(X, y, public_mask=public)
        assert est.learning_rate_ == 3.0 and np.all(np.isfinite(est.coef_))
