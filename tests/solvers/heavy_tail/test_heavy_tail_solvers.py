# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The one-pass heavy-tail solvers: disjoint batches, projections, convergence."""

import math
import warnings

import numpy as np
import pytest

from sklearn_dpfair._loss import PinballLoss, SquaredLoss
from sklearn_dpfair._solvers.heavy_tail._one_pass import (
    AcceleratedStep,
    ProximalStep,
    StichAveraging,
    one_pass_loop,
)
from sklearn_dpfair._solvers.heavy_tail._disjoint_batches import disjoint_batches, disjoint_blocks
from sklearn_dpfair._solvers.heavy_tail._schedules import stich_schedule
from sklearn_dpfair._solvers.heavy_tail._fit import zcdp_budget
from sklearn_dpfair._solvers.heavy_tail._localized import (
    LocalizedPhase,
    localized_event,
    localized_phase_events,
    localized_phase_steps,
    localized_plan,
    localized_subgradient,
)
from sklearn_dpfair._solvers.heavy_tail._projections import (
    project_ball,
    project_two_balls,
    prox_elastic_net,
)
from sklearn_dpfair.privacy import GaussianMechanism


class RowRecorder(np.ndarray):
    """An array that records every integer-array row index it is read with."""

    def __new__(cls, array):
        obj = np.asarray(array).view(cls)
        obj.reads = []
        return obj

    def __array_finalize__(self, obj):
        self.reads = getattr(obj, "reads", None)

    def __getitem__(self, key):
        if isinstance(key, np.ndarray) and key.dtype.kind in "iu":
            self.reads.append(np.array(key))
        return np.asarray(super().__getitem__(key))


def _problem(rng, n=3000, d=4):
    X = rng.standard_t(5, size=(n, d))
    w = np.array([1.0, -2.0, 0.5, 0.0])[:d]
    y = X @ w + 1.0 + rng.standard_t(3, size=n)
    return X, y, np.append(w, 1.0)


def _run(solver, X, y, batches, rng, clip=3.0, noise=0.5):
    common = {
        "batches": batches,
        "clip_norm": clip,
        "mechanism": GaussianMechanism(2 * clip, noise),
        "intercept_scaling": 1.0,
        "rng": rng,
    }
    if solver == "sgd":
        eta, zeta = stich_schedule(len(batches) - 1, 1.0, 1.0)
        rule = StichAveraging(eta, zeta, 0.0, 10.0)
    elif solver == "acsa":
        rule = AcceleratedStep(2.0, 0.0, 10.0)
    else:
        rule = ProximalStep(0.5, 0.0, 0.0, 10.0)
    return one_pass_loop(X, y, SquaredLoss(), rule=rule, **common)


@pytest.mark.parametrize("solver", ["sgd", "acsa", "prox"])
def test_every_row_is_used_at_most_once(solver, global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    X, y, _ = _problem(rng)
    batches = disjoint_batches(rng, X.shape[0], 9, 300)
    Xr, yr = RowRecorder(X), RowRecorder(y)
    _run(solver, Xr, yr, batches, rng)
    used = np.concatenate(Xr.reads)
    assert len(Xr.reads) == 9
    assert np.unique(used).size == used.size == 2700
    np.testing.assert_array_equal(np.concatenate(yr.reads), used)


def test_localized_phases_are_disjoint():
    rng = np.random.default_rng(0)
    X, y, _ = _problem(rng, n=300)
    plan = localized_plan(
        256, 5, 1.0, 2.0, diameter=20.0, scale=3.0, clips=[3.0] * 8, max_steps=5
    )
    blocks = disjoint_blocks(rng, 300, [p.n_rows for p in plan])
    Xr = RowRecorder(X)
    localized_subgradient(
        Xr,
        y,
        PinballLoss(0.5),
        phases=plan,
        blocks=blocks,
        budget=zcdp_budget(0.5, 1e-5),
        radius=10.0,
        intercept_scaling=1.0,
        rng=rng,
    )
    # Each phase reads its block once (and reuses it for its T_i steps).
    used = np.concatenate(Xr.reads)
    assert len(Xr.reads) == len(plan) == 8
    assert np.unique(used).size == used.size == 255


@pytest.mark.parametrize("n, max_steps", [(4, None), (300, None), (1000, 25)])
def test_localized_event_follows_from_public_counts(n, max_steps):
    # Algorithm 7's phases: the event of a run (its costliest phase) is the
    # same whatever the (private) clips and gradient scale its plan used,
    # and localized_event makes it from n, max_steps and the budget alone.
    budget = zcdp_budget(0.3, 1e-5)
    levels = math.floor(math.log2(n))
    n_used = 2**levels
    expected = localized_event(n, max_steps, budget)
    for scale, clip in [(1e-3, 1e-4), (1.0, 1.0), (1e6, 1e7)]:
        clips = [clip * (1 + i) for i in range(levels)]
        plan = localized_plan(
            n_used, 3, 0.8, 2.0, diameter=20.0, scale=scale, clips=clips,
            max_steps=max_steps,
        )
        steps = localized_phase_steps(n, max_steps)
        assert [(p.n_rows, p.n_steps) for p in plan] == steps
        assert localized_phase_events(plan, budget)[0] == expected
    # T_i = min(ceil(n_i ln n_used), max_steps) steps of noise multiplier
    # sqrt(T_i / (2 rho)): every phase is rho-zCDP.
    assert steps[0] == (
        n_used // 2,
        min(math.ceil(n_used // 2 * math.log(n_used)), max_steps or math.inf),
    )
    assert expected.count / (2 * expected.event.noise_multiplier**2) == (
        pytest.approx(0.3, rel=1e-12)
    )


def test_disjoint_batches_validate_sizes():
    b = disjoint_batches(np.random.default_rng(0), 100, 4, 25)
    assert np.unique(b).size == 100
    with pytest.raises(ValueError, match="rows"):
        disjoint_batches(np.random.default_rng(0), 100, 4, 26)
    with pytest.raises(ValueError, match="rows"):
        disjoint_blocks(np.random.default_rng(0), 10, [8, 4])


@pytest.mark.parametrize("solver", ["sgd", "acsa", "prox"])
def test_solvers_recover_least_squares_without_noise(solver):
    rng = np.random.default_rng(1)
    X, y, w_true = _problem(rng, n=20000)
    n_batches = 60 if solver != "acsa" else 40
    batches = disjoint_batches(rng, 20000, n_batches, 20000 // n_batches)
    w = _run(solver, X, y, batches, rng, clip=math.inf, noise=0.0)
    ols = np.linalg.lstsq(np.column_stack([X, np.ones(20000)]), y, rcond=None)[0]
    # Alg. 27 averages its iterates; Alg. 8 and 29 return a (last) iterate
    # that keeps the minibatch noise of its final steps.
    tol = 0.1 if solver == "sgd" else 0.3
    assert np.linalg.norm(w - ols) < tol
    assert np.linalg.norm(w - w_true) < tol + 0.05


def test_prox_l1_zeroes_irrelevant_coefficients():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(20000, 6))
    y = X[:, 0] * 2.0 + rng.normal(size=20000)
    batches = disjoint_batches(rng, 20000, 30, 666)
    w = one_pass_loop(
        X,
        y,
        SquaredLoss(),
        batches=batches,
        rule=ProximalStep(0.5, 0.1, 0.0, 10.0),
        clip_norm=math.inf,
        mechanism=GaussianMechanism(math.inf, 0.0),
        intercept_scaling=1.0,
        rng=rng,
    )
    assert np.all(w[1:6] == 0.0)
    assert w[0] == pytest.approx(1.9, abs=0.05)


def test_project_two_balls_is_the_exact_projection(global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    for _ in range(10):
        d = rng.integers(2, 5)
        center = rng.normal(size=d)
        center *= rng.uniform(0, 1.5) / np.linalg.norm(center)
        local = rng.uniform(0.2, 2.0)
        z = 3 * rng.normal(size=d)
        p = project_two_balls(z, 1.5, center, local)
        assert np.linalg.norm(p) <= 1.5 + 1e-9
        assert np.linalg.norm(p - center) <= local + 1e-9
        # Dykstra's alternating projections converge to the same point.
        x, a, b = z.copy(), np.zeros(d), np.zeros(d)
        for _ in range(2000):
            y_ = project_ball(x + a, 1.5)
            a = x + a - y_
            x = project_ball(y_ + b, local, center)
            b = y_ + b - x
        np.testing.assert_allclose(p, x, atol=1e-5)


def test_project_two_balls_of_equal_concentric_radii_is_finite():
    # Equal radii around the origin: the projection onto one ball rounds to
    # just outside the other, and the plane construction divided 0 by 0
    # (a NaN iterate and a RuntimeWarning; a localized fit hit it).
    w = np.array([0.85604718, 1.59144994, -1.70409694, 9.21781022, 3.34461034])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = project_two_balls(w, 10.0, np.zeros(5), 10.0)
    np.testing.assert_allclose(p, w * 10.0 / np.linalg.norm(w), rtol=1e-15)


def test_prox_elastic_net_leaves_the_intercept():
    out = prox_elastic_net(np.array([2.0, -0.5, 3.0]), 0.5, 1.0, 1.0, 2)
    np.testing.assert_allclose(out, [1.5 / 1.5, 0.0, 3.0])


def test_localized_memory_does_not_grow_with_its_steps():
    # A phase runs T_i steps (about 4.5 per row in the first phase): a list of
    # them weighed 8 bytes a step, twice a sparse X of one entry per row.
    import tracemalloc

    X, y, _ = _problem(np.random.default_rng(0), n=4)
    phase = LocalizedPhase(4, 4_000, 0.01, 1.0, 10.0, 3.0)
    kwargs = dict(phases=[phase], blocks=[np.arange(4)],
                  budget=zcdp_budget(1.0, 1e-5), radius=10.0,
                  intercept_scaling=1.0)
    localized_subgradient(X, y, SquaredLoss(), rng=np.random.default_rng(0), **kwargs)
    tracemalloc.start()
    try:
        localized_subgradient(X, y, SquaredLoss(), rng=np.random.default_rng(0), **kwargs)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16_000, peak  # the list: 32 kB


def test_prox_suffix_average_is_the_mean_of_the_last_iterates():
    # Post-processing only: the iterates are those of Algorithm 29, the
    # output their average from step average_from on.
    grads = [
        np.array(g) for g in ([-2.0, 0.0], [0.0, -2.0], [2.0, 0.0], [0.0, 2.0])
    ]
    last, averaged = ProximalStep(0.5, 0.0, 0.0, 10.0), ProximalStep(
        0.5, 0.0, 0.0, 10.0, average_from=3
    )
    iterates = []
    for rule in (last, averaged):
        rule.start(np.zeros(2))
        for t, grad in enumerate(grads, start=1):
            rule.update(t, grad.copy())
            if rule is averaged:
                iterates.append(rule.w.copy())
    np.testing.assert_array_equal(last.result(), iterates[-1])
    np.testing.assert_allclose(averaged.result(), np.mean(iterates[2:], axis=0))


@pytest.mark.parametrize(
    "loss, averaged",
    [("absolute_error", True), ("quantile", True), ("squared_error", False)],
)
def test_prox_averages_only_the_piecewise_linear_losses(loss, averaged):
    from sklearn_dpfair._solvers.heavy_tail._fit import ONE_PASS_SOLVERS

    class Problem:
        beta = 2.0
        config = type(
            "Config", (), {"loss_name": loss, "penalty": None, "radius": 10.0}
        )

    rule = ONE_PASS_SOLVERS["prox"].rule(Problem, 40, 1.0, 0.1)
    assert rule.step_size == 0.25
    assert rule.average_from == (21 if averaged else None)


def test_prox_absolute_error_does_not_worsen_as_epsilon_grows():
    # The last iterate of a constant step keeps one batch's noisy gradient:
    # with mu floored, a larger epsilon ran more steps on batches down to 16
    # rows and the error rose (n = 5000: 0.90 at epsilon 0.3, 0.95 at 3);
    # the suffix average falls with epsilon (0.86, 0.82).
    from sklearn_dpfair import HeavyTailDPRegressor

    rng = np.random.default_rng(999)
    X_test = rng.standard_t(5, size=(20000, 3))
    w = np.array([1.0, -1.0, 0.5])
    y_test = X_test @ w + 1.0
    errors = {}
    for epsilon in (0.3, 3.0):
        errs = []
        for seed in range(5):
            r = np.random.default_rng(seed)
            X = r.standard_t(5, size=(5000, 3))
            y = X @ w + 1.0 + r.standard_t(2, size=5000)
            reg = HeavyTailDPRegressor(
                epsilon=epsilon,
                solver="prox",
                loss="absolute_error",
                random_state=seed,
            ).fit(X, y)
            errs.append(np.sqrt(np.mean((reg.predict(X_test) - y_test) ** 2)))
        errors[epsilon] = np.median(errs)
    assert errors[3.0] < errors[0.3]
