"""Full-batch private Frank-Wolfe: score sensitivity, sparsity, convergence."""

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_dpfair._loss import BinaryLogisticLoss, SoftmaxLoss
from sklearn_dpfair._solvers._frank_wolfe import (
    INFERRED_BOUND_CAVEAT,
    MAX_AUTO_STEPS,
    selection_budget_shares,
    auto_frank_wolfe_steps,
    clip_coordinates,
    private_frank_wolfe,
    readable_coordinates,
    resolve_feature_inf_bound,
    score_sensitivity,
    scores_from_predictions,
    vertex_scores,
)
from sklearn_dpfair.exceptions import PrivacyLeakWarning
from sklearn_dpfair.privacy._exponential import ExponentialMechanism


def _random_ball_point(rng, n_coords, n_outputs, radius):
    """A point of the l1 ball: a vertex, a sparse or a dense interior point."""
    kind = rng.integers(3)
    W = np.zeros((n_coords, n_outputs))
    if kind == 0:
        W.flat[rng.integers(W.size)] = radius * rng.choice([-1.0, 1.0])
        return W
    W = rng.standard_cauchy(size=W.shape)  # heavy tails: some large weights
    if kind == 1:
        W[rng.random(W.shape) < 0.8] = 0.0
    norm = np.abs(W).sum()
    return W * (radius * rng.uniform(0.1, 1.0) / norm) if norm else W


def _random_record(rng, d, n_outputs, scale):
    kind = rng.integers(4)
    if kind == 0:  # huge entries, removed by the clipping
        x = rng.choice([-1e308, 1e308, 0.0], size=d)
    elif kind == 1:  # tiny entries
        x = rng.normal(scale=1e-300, size=d)
    else:
        x = rng.normal(scale=scale, size=d)
    y = rng.integers(max(n_outputs, 2))
    return x, y


def _summed_scores(X, y, loss, W, b, radius, intercept_bound):
    """Vertex scores times n: the sums the selection effectively sees.

    The mechanism selects from ``u / n`` with sensitivity ``r B / n``, which
    is the same distribution as selecting from the sums ``u`` with
    sensitivity ``r B``: ``n`` cancels, so neighbours of different sizes
    are compared on the sums.
    """
    u, u_b = vertex_scores(
        X, y, loss, W, b, l1_radius=radius, intercept_bound=intercept_bound
    )
    n = X.shape[0]
    return u * n, (None if u_b is None else u_b * n)


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_score_sensitivity_on_random_add_remove_pairs(n_classes, fit_intercept):
    """Max change of any vertex score over neighbours never exceeds the bound."""
    rng = np.random.default_rng(10 * n_classes + fit_intercept)
    loss = BinaryLogisticLoss() if n_classes == 2 else SoftmaxLoss(n_classes)
    K = loss.n_outputs
    worst = worst_b = 0.0
    for _ in range(150):
        n, d = int(rng.integers(2, 30)), int(rng.integers(1, 8))
        bound = float(rng.choice([0.01, 0.5, 1.0, 3.0, 100.0]))
        radius = float(rng.choice([0.1, 1.0, 10.0, 1e4]))
        r_b = float(rng.choice([0.5, 5.0])) if fit_intercept else None
        X = rng.normal(scale=bound * rng.uniform(0.2, 3.0), size=(n, d))
        y = rng.integers(n_classes, size=n).astype(float)
        x_new, y_new = _random_record(rng, d, K, bound)
        X_big, y_big = np.vstack([X, x_new]), np.append(y, y_new)
        W = _random_ball_point(rng, d, K, radius)
        b = _random_ball_point(rng, K, 1, r_b).ravel() if fit_intercept else None
        u, u_b = _summed_scores(clip_coordinates(X, bound), y, loss, W, b, radius, r_b)
        v, v_b = _summed_scores(
            clip_coordinates(X_big, bound), y_big, loss, W, b, radius, r_b
        )
        assert np.all(np.isfinite(u)) and np.all(np.isfinite(v))
        assert u.shape == (2 * d * K,)
        # score_sensitivity is the bound on u / n: times n, the bound on u.
        bound_used = score_sensitivity(radius, bound, n) * n
        change = np.max(np.abs(u - v))
        assert change <= bound_used * (1 + 1e-9)
        worst = max(worst, change / bound_used)
        if fit_intercept:
            assert u_b.shape == (2 * K,)
            bound_b = score_sensitivity(r_b, 1.0, n) * n
            change_b = np.max(np.abs(u_b - v_b))
            assert change_b <= bound_b * (1 + 1e-9)
            worst_b = max(worst_b, change_b / bound_b)
    # Random pairs come close; the next test attains the bound.
    assert worst > 0.5
    assert worst_b > 0.5 or not fit_intercept


def test_score_sensitivity_is_attained_and_replace_one_would_double_it():
    """Adding a record moves a score by (almost exactly) r B: no slack.

    Replacing a record (the old relation) moves it by up to 2 r B, twice the
    bound used: the add/remove relation is what halves the noise.
    """
    n, bound, radius = 10, 2.0, 50.0
    loss = BinaryLogisticLoss()
    X = np.zeros((n, 2))
    y = np.zeros(n)
    W = np.array([[0.0], [radius]])
    X_add = np.vstack([X, [bound, bound]])  # margin +100: residual ~ +1
    y_add = np.append(y, 0.0)
    u, _ = _summed_scores(X, y, loss, W, None, radius, None)
    v, _ = _summed_scores(X_add, y_add, loss, W, None, radius, None)
    assert np.max(np.abs(u - v)) == pytest.approx(radius * bound, rel=1e-12)
    assert score_sensitivity(radius, bound, n) * n == radius * bound
    X_rep, y_rep = X_add.copy(), y_add.copy()
    X_rep[-1], y_rep[-1] = [bound, -bound], 1.0  # margin -100: residual ~ -1
    w = _summed_scores(X_rep, y_rep, loss, W, None, radius, None)[0]
    assert np.max(np.abs(w - v)) == pytest.approx(2 * radius * bound, rel=1e-12)


def test_intercept_score_sensitivity_is_attained():
    loss = BinaryLogisticLoss()
    X, y = np.zeros((5, 1)), np.zeros(5)
    b = np.array([-40.0])  # residual of an added y = 1 record: ~ -1
    W = np.zeros((1, 1))
    u_b = _summed_scores(X, y, loss, W, b, 1.0, 40.0)[1]
    v_b = _summed_scores(
        np.vstack([X, [0.0]]), np.append(y, 1.0), loss, W, b, 1.0, 40.0
    )[1]
    assert np.max(np.abs(u_b - v_b)) == pytest.approx(40.0, rel=1e-12)


def _problem(seed=0, n=300, d=30, n_classes=2, density=None):
    rng = np.random.default_rng(seed)
    if density is None:
        X = rng.uniform(-1, 1, size=(n, d))
    else:
        X = sp.random(n, d, density=density, random_state=seed, format="csr")
        X.data = rng.choice([-1.0, 1.0], size=X.data.size)
    W = np.zeros((d, n_classes))
    W[:3] = rng.normal(scale=3.0, size=(3, n_classes))
    raw = np.asarray(X @ W)
    if n_classes == 2:
        y = (rng.random(n) < 1 / (1 + np.exp(-(raw[:, 0] - raw[:, 1])))).astype(float)
        loss = BinaryLogisticLoss()
    else:
        p = np.exp(raw - raw.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        y = np.array([rng.choice(n_classes, p=pi) for pi in p], dtype=float)
        loss = SoftmaxLoss(n_classes)
    return X, y, loss


def _fw(X, y, loss, *, epsilon, steps, radius=5.0, r_b=2.0, seed=0):
    n = X.shape[0]
    mech_b = None
    if r_b is not None:
        mech_b = [ExponentialMechanism(score_sensitivity(r_b, 1.0, n), epsilon)] * steps
    mech = ExponentialMechanism(score_sensitivity(radius, 1.0, n), epsilon)
    return private_frank_wolfe(
        clip_coordinates(X, 1.0),
        y,
        loss,
        l1_radius=radius,
        mechanisms=[mech] * steps,
        rng=np.random.default_rng(seed),
        intercept_bound=r_b,
        intercept_mechanisms=mech_b,
    )


def _objective_and_gap(X, y, loss, res, radius, r_b):
    """Mean loss and the Frank-Wolfe duality gap over the product of balls.

    ``<g, W> + r ||g||_inf + <g_b, b> + r_b ||g_b||_inf`` bounds F - F*.
    """
    W, b = res.coef, res.intercept
    raw = np.asarray(X @ W) + b
    u, u_b = vertex_scores(X, y, loss, W, b, l1_radius=radius, intercept_bound=r_b)
    g = -u[: u.size // 2] / radius
    g_b = -u_b[: u_b.size // 2] / r_b
    gap = g @ W.ravel() + radius * np.abs(g).max() + g_b @ b + r_b * np.abs(g_b).max()
    return float(loss.loss(y, raw).mean()), float(gap)



@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("epsilon", [0.5, math.inf])
def test_at_most_t_nonzeros(n_classes, epsilon):
    X, y, loss = _problem(n_classes=n_classes)
    for steps in [1, 4, 17]:
        res = _fw(X, y, loss, epsilon=epsilon, steps=steps)
        assert np.count_nonzero(res.coef) <= steps
        assert np.abs(res.coef).sum() <= 5.0 * (1 + 1e-12)
        assert np.abs(res.intercept).sum() <= 2.0 * (1 + 1e-12)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_non_private_limit_converges(n_classes):
    """epsilon = inf: the duality gap certifies F(w_T) - F* -> 0 (rate 1/T)."""
    X, y, loss = _problem(n_classes=n_classes)
    gaps = []
    for steps in [50, 2000]:
        res = _fw(X, y, loss, epsilon=math.inf, steps=steps)
        Xc = clip_coordinates(X, 1.0)
        gaps.append(_objective_and_gap(Xc, y, loss, res, 5.0, 2.0)[1])
    assert gaps[1] < 0.2 * gaps[0]
    assert gaps[1] < 0.02


def test_sparse_and_dense_input_give_the_same_fit():
    X, y, loss = _problem(density=0.05, n=400, d=200)
    for epsilon in [1.0, math.inf]:
        dense = _fw(X.toarray(), y, loss, epsilon=epsilon, steps=60, seed=4)
        sparse = _fw(X, y, loss, epsilon=epsilon, steps=60, seed=4)
        np.testing.assert_allclose(sparse.coef, dense.coef, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(sparse.intercept, dense.intercept, rtol=1e-10)


def test_incremental_predictions_match_the_iterate():
    """The in-place update of X w tracks the product recomputed from w."""
    X, y, loss = _problem(density=0.05, n=200, d=50)
    res = _fw(X, y, loss, epsilon=math.inf, steps=300)
    W = res.coef
    Xc = clip_coordinates(X, 1.0)
    W_recomputed = _fw(X, y, loss, epsilon=math.inf, steps=301).coef
    # One more step from the same path uses scores computed from the tracked
    # predictions; recomputing them from (W, b) gives the same selection.
    u_tracked, _ = vertex_scores(
        Xc, y, loss, W, res.intercept, l1_radius=5.0, intercept_bound=2.0
    )
    step = 2.0 / 302
    diff = (W_recomputed - (1 - step) * W).ravel()
    chosen = np.flatnonzero(np.abs(diff) > 1e-12)
    assert chosen.size == 1
    sign = np.sign(diff[chosen[0]])
    expected = chosen[0] if sign > 0 else chosen[0] + W.size
    assert expected == np.argmax(u_tracked)


def test_private_selection_is_reproducible_with_a_seed_and_noisy():
    X, y, loss = _problem()
    a = _fw(X, y, loss, epsilon=0.2, steps=20, seed=1).coef
    b = _fw(X, y, loss, epsilon=0.2, steps=20, seed=1).coef
    c = _fw(X, y, loss, epsilon=0.2, steps=20, seed=2).coef
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_extreme_records_give_finite_coefficients():
    X, y, loss = _problem(n=50, d=5)
    X[0] = [1e308, -1e308, 1e-310, 0.0, -0.0]
    W = _fw(X, y, loss, epsilon=1.0, steps=30, radius=1e5).coef
    assert np.all(np.isfinite(W))


def _csr_with_duplicates(shape, rows, cols, values, dtype=np.float64):
    """A CSR matrix storing its entries as given: duplicates kept, not canonical."""
    order = np.argsort(rows, kind="stable")
    rows, cols = np.asarray(rows)[order], np.asarray(cols)[order]
    indptr = np.searchsorted(rows, np.arange(shape[0] + 1)).astype(np.int32)
    X = sp.csr_matrix(
        (np.asarray(values, dtype=dtype)[order], cols.astype(np.int32), indptr),
        shape=shape,
    )
    assert not X.has_canonical_format
    return X


def test_clip_coordinates_sparse_keeps_structure_and_merges_duplicates():
    # Row 0 stores column 1 twice: one value, 3 + 3 = 6, clipped once to 4.
    X = _csr_with_duplicates((2, 2), [0, 0, 1], [1, 1, 0], [3.0, 3.0, -0.5])
    C = clip_coordinates(X, 4.0)
    assert sp.issparse(C) and C.format == "csr" and C.has_canonical_format
    np.testing.assert_array_equal(C.toarray(), [[0.0, 4.0], [-0.5, 0.0]])
    C = clip_coordinates(X.tocsc(), 4.0)
    assert C.format == "csc"
    np.testing.assert_array_equal(C.toarray(), [[0.0, 4.0], [-0.5, 0.0]])


def test_clip_coordinates_copies_only_what_it_must():
    X = sp.random(50, 8, density=0.3, format="csr", random_state=0)
    X.data = X.data * 4.0 - 2.0  # entries in [-2, 2]
    within = clip_coordinates(X, 2.0)  # nothing to clip: X itself, shared
    for name in ["data", "indices", "indptr"]:
        assert np.shares_memory(getattr(within, name), getattr(X, name))
    clipped = clip_coordinates(X, 1.0)  # only the data are copied
    assert not np.shares_memory(clipped.data, X.data)
    assert np.shares_memory(clipped.indices, X.indices)
    np.testing.assert_array_equal(clipped.toarray(), np.clip(X.toarray(), -1.0, 1.0))
    # The CSR that the solver reads keeps its data and clips them as read.
    read, limit = readable_coordinates(X, 1.0)
    assert limit == 1.0 and np.shares_memory(read.data, X.data)
    assert readable_coordinates(X, 2.0)[1] is None


def test_clip_coordinates_recomputes_a_stale_canonical_flag():
    """A flag claiming canonical form is not trusted: duplicates are summed."""
    X = _csr_with_duplicates((1, 2), [0, 0], [0, 0], [0.75, 0.75])
    X.has_canonical_format = True  # stale: column 0 is stored twice
    np.testing.assert_array_equal(clip_coordinates(X, 1.0).toarray(), [[1.0, 0.0]])
    read, limit = readable_coordinates(X, 1.0)
    assert read.nnz == 1 and limit == 1.0


@pytest.mark.parametrize("layout", ["csr", "stale", "csc", "coo"])
def test_inferred_bound_sums_entries_stored_twice(layout):
    """The bound read from X is that of the matrix, whose value at a position
    stored twice is the sum: the sum the solver clips."""
    X = _csr_with_duplicates((2, 2), [0, 0, 1], [1, 1, 0], [1.5, 1.5, -0.5])
    if layout == "stale":
        X.has_canonical_format = True  # a cached flag is not trusted
    elif layout == "csc":
        X = sp.csc_matrix(
            (X.data, X.indices, X.indptr), shape=X.shape[::-1]
        )  # the transpose, stored with the same duplicates
        assert not X.has_canonical_format
    elif layout == "coo":
        X = sp.coo_matrix(([1.5, 1.5, -0.5], ([0, 0, 1], [1, 1, 0])), shape=(2, 2))
    before = X.data.copy()
    with pytest.warns(PrivacyLeakWarning, match="feature_inf_bound"):
        bound, caveats = resolve_feature_inf_bound(None, X)
    assert bound == 3.0 == np.max(np.abs(X.toarray()))
    assert caveats == [INFERRED_BOUND_CAVEAT]
    np.testing.assert_array_equal(X.data, before)  # summed in a copy


def test_float32_clip_never_exceeds_the_bound():
    """float32(0.1) > 0.1: a float32 X is clipped to the float32 below it."""
    X = sp.csr_matrix(np.array([[1.0, -1.0]], dtype=np.float32))
    C = clip_coordinates(X, 0.1)
    assert C.dtype == np.float32
    assert np.all(np.abs(C.data.astype(np.float64)) <= 0.1)
    assert np.all(np.abs(C.data) == np.nextafter(np.float32(0.1), np.float32(0)))


def test_clipped_csr_with_duplicates_is_summed_before_the_column_updates():
    """Without feature_bound, a CSR storing entries twice is still one value
    each (summed), so the column update moves each row once."""
    rng = np.random.default_rng(0)
    n, d = 300, 4
    # Every column of every row stored twice, as two halves.
    values = rng.uniform(-0.5, 0.5, size=(n, d))
    rows, cols = np.repeat(np.arange(n), 2 * d), np.tile(np.repeat(np.arange(d), 2), n)
    X = _csr_with_duplicates((n, d), rows, cols, np.repeat(values.ravel(), 2))
    y = (rng.random(n) < 1 / (1 + np.exp(-2 * values @ [3.0, -2.0, 1.0, 0.0]))) * 1.0
    mech = ExponentialMechanism(score_sensitivity(5.0, 1.0, n), math.inf)
    fits = [
        private_frank_wolfe(
            features, y, BinaryLogisticLoss(), l1_radius=5.0, mechanisms=[mech] * 40,
            rng=np.random.default_rng(0),
        ).coef
        for features in [X, X.toarray()]
    ]
    np.testing.assert_allclose(fits[0], fits[1], rtol=1e-12)


def _read_scores(X, y, loss, W, b, radius, r_b, bound):
    """Summed vertex scores as the solver computes them from an unclipped X.

    ``X`` is read as :func:`private_frank_wolfe` reads it (a CSR by blocks
    of rows, its entries clipped as read); the predictions are those of
    the clipped matrix, which the solver tracks.
    """
    read, limit = readable_coordinates(X, bound)
    Z = np.asarray(clip_coordinates(X, bound) @ W) + (0.0 if b is None else b)
    u, u_b = scores_from_predictions(
        read, y, loss, Z, W, l1_radius=radius, intercept_bound=r_b, limit=limit
    )
    n = X.shape[0]
    return u * n, (None if u_b is None else u_b * n)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_score_sensitivity_on_csr_neighbours_with_duplicates(n_classes):
    """A crafted record (duplicated and huge entries, a non-canonical CSR)
    moves each score by at most r B / n; the CSR is read in several blocks
    and gives the dense matrix's scores."""
    rng = np.random.default_rng(n_classes)
    loss = BinaryLogisticLoss() if n_classes == 2 else SoftmaxLoss(n_classes)
    K = loss.n_outputs
    n, d, worst = 2500, 6, 0.0
    for trial in range(12):
        bound = float(rng.choice([0.5, 1.0, 3.0]))
        radius, r_b = float(rng.choice([1.0, 10.0, 1e4])), 5.0
        nnz = 2 * n
        rows, cols = rng.integers(n, size=nnz), rng.integers(d, size=nnz)
        values = rng.normal(scale=bound, size=nnz)  # some out of the bound
        # The new record (the last row): its columns stored twice, halves of
        # an out-of-bound sum (or 1e308 twice: an infinite sum), to be
        # clipped once. Entries clipped one by one would sum past B.
        half = rng.choice([0.75 * bound, -0.75 * bound, 1e308, -1e308], size=d)
        new_cols = np.repeat(np.arange(d), 2)
        big = _csr_with_duplicates(
            (n + 1, d),
            np.concatenate([rows, np.full(2 * d, n)]),
            np.concatenate([cols, new_cols]),
            np.concatenate([values, np.repeat(half, 2)]),
        )
        small = big[:n]
        y = rng.integers(n_classes, size=n + 1).astype(float)
        W = _random_ball_point(rng, d, K, radius)
        b = _random_ball_point(rng, K, 1, r_b).ravel()
        with np.errstate(over="ignore"):  # 1e308 + 1e308 = inf, clipped to B
            u, u_b = _read_scores(small, y[:n], loss, W, b, radius, r_b, bound)
            v, v_b = _read_scores(big, y, loss, W, b, radius, r_b, bound)
            dense = clip_coordinates(big.toarray(), bound)
        assert np.all(np.isfinite(v)) and np.all(np.isfinite(v_b))
        np.testing.assert_allclose(
            v, _summed_scores(dense, y, loss, W, b, radius, r_b)[0],
            rtol=1e-9, atol=1e-9 * radius * bound,
        )
        bound_used = score_sensitivity(radius, bound, n) * n
        change = np.max(np.abs(u - v))
        assert change <= bound_used * (1 + 1e-9)
        assert np.max(np.abs(u_b - v_b)) <= r_b * (1 + 1e-9)
        worst = max(worst, change / bound_used)
    assert worst > 0.5


def test_csr_csc_and_dense_inputs_give_the_same_fit():
    """Out-of-bound entries and duplicates, clipped by the solver itself."""
    rng = np.random.default_rng(3)
    n, d = 3000, 40
    rows, cols = rng.integers(n, size=2 * n), rng.integers(d, size=2 * n)
    X = _csr_with_duplicates((n, d), rows, cols, rng.normal(scale=2.0, size=2 * n))
    y = (rng.random(n) < 0.5).astype(float)
    loss = BinaryLogisticLoss()
    for epsilon in [1.0, math.inf]:
        fits = []
        for features in [X, X.tocsc(), X.toarray(), X.astype(np.float32)]:
            mech = ExponentialMechanism(score_sensitivity(5.0, 1.5, n), epsilon)
            mech_b = ExponentialMechanism(score_sensitivity(2.0, 1.0, n), epsilon)
            fits.append(private_frank_wolfe(
                features, y, loss, l1_radius=5.0, mechanisms=[mech] * 40,
                rng=np.random.default_rng(0), intercept_bound=2.0,
                intercept_mechanisms=[mech_b] * 40, feature_bound=1.5,
            ))
        for fit in fits[1:]:
            np.testing.assert_allclose(fit.coef, fits[0].coef, rtol=1e-6, atol=1e-9)
            np.testing.assert_allclose(fit.intercept, fits[0].intercept, rtol=1e-6)
        # The same as clipping first, the old path.
        old = private_frank_wolfe(
            clip_coordinates(X, 1.5), y, loss, l1_radius=5.0, mechanisms=[mech] * 40,
            rng=np.random.default_rng(0), intercept_bound=2.0,
            intercept_mechanisms=[mech_b] * 40,
        )
        np.testing.assert_allclose(old.coef, fits[0].coef, rtol=1e-10, atol=1e-12)


def test_auto_steps_formula():
    kwargs = dict(l1_radius=1.0, feature_bound=1.0, n_vertices=20000)
    t1 = auto_frank_wolfe_steps(n_samples=20000, rho=0.03, **kwargs)
    t4 = auto_frank_wolfe_steps(n_samples=80000, rho=0.03, **kwargs)
    # T grows as (n sqrt(rho))^(2/3), a public function of public inputs.
    assert t4 == pytest.approx(t1 * 4 ** (2 / 3), rel=0.05)
    assert auto_frank_wolfe_steps(n_samples=20000, rho=0.48, **kwargs) == t4
    assert auto_frank_wolfe_steps(n_samples=10, rho=math.inf, **kwargs) == (
        MAX_AUTO_STEPS
    )
    assert auto_frank_wolfe_steps(n_samples=1, rho=1e-9, **kwargs) == 1


def test_separate_intercept_ball_avoids_the_intercept_zigzag():
    """Sparse 0/1 features, balanced labels, a radius the truth needs.

    In a joint ball the intercept vertex moves every logit by r and its
    gradient dominates (the old fit alternated between +-r on it); with its
    own small ball the coefficients find the truth's support.
    """
    rng = np.random.default_rng(0)
    n, d = 2000, 200
    X = sp.random(n, d, density=0.02, random_state=0, format="csr")
    X.data[:] = 1.0
    X = X.tolil()
    X[:, :4] = (rng.random((n, 4)) < 0.3).astype(float)
    X = X.tocsr()
    truth = np.zeros(d)
    truth[:4] = [1.5, -1.5, 1.5, -1.5]
    y = (rng.random(n) < 1 / (1 + np.exp(-(X @ truth)))).astype(float)
    res = _fw(X, y, BinaryLogisticLoss(), epsilon=math.inf, steps=200, radius=30.0)
    support = set(np.flatnonzero(res.coef[:, 0]))
    assert {0, 1, 2, 3} <= support
    assert abs(res.intercept[0]) <= 2.0


def test_budget_shares_follow_the_final_weights_of_the_vertices():
    """epsilon0_t is proportional to lambda_t = 2 (t + 1) / (T (T + 1))."""
    for steps in [1, 2, 7, 300]:
        shares = selection_budget_shares(steps)
        assert shares.sum() == pytest.approx(1.0, rel=1e-12)
        lam = 2 * (np.arange(steps) + 1) / (steps * (steps + 1))
        np.testing.assert_allclose(np.sqrt(shares) / np.sqrt(shares[-1]), lam / lam[-1])


def _tiny_problem():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1e-300, 1e-300, size=(400, 3))
    return X, rng.integers(0, 2, 400)


def _tiny_fw(**params):
    from sklearn_dpfair import DPLogisticRegression

    return DPLogisticRegression(
        solver="dp-frank-wolfe",
        epsilon=1.0,
        delta=1e-5,
        l1_radius=1e-10,
        classes=[0, 1],
        fit_intercept=False,
        max_iter=1,
        **params,
    )


def test_a_score_sensitivity_the_selections_cannot_use_is_refused_at_plan_time():
    # l1_radius * feature_inf_bound / n = 2.5e-313 is subnormal: the logits
    # epsilon0 u / (2 Delta) were inf or NaN and every fit selected the
    # same vertex, whatever its seed, while epsilon_ said 1.
    X, y = _tiny_problem()
    clf = _tiny_fw(feature_inf_bound=1e-300)
    match = r"l1_radius \* feature_inf_bound is too small"
    with pytest.raises(ValueError, match=match):
        clf.privacy_plan(*X.shape)
    with pytest.raises(ValueError, match=match):
        clf.fit(X, y)
    assert not hasattr(clf, "coef_")
    # A bound that keeps the sensitivity normal is planned as before.
    assert _tiny_fw(feature_inf_bound=1e-290).privacy_plan(*X.shape).epsilon <= 1.0


def test_an_inferred_bound_too_small_for_the_selections_is_raised_not_refused():
    # Read from X, the bound is one record's value: the fit must not refuse
    # on it, so it is raised to the least bound the selections can use and
    # the selections are calibrated (and the features clipped) to that.
    X, y = _tiny_problem()
    with pytest.warns(PrivacyLeakWarning):
        clf = _tiny_fw(random_state=0).fit(X, y)
    record = clf.privacy_record_
    assert record.clip_norm >= np.finfo(np.float64).smallest_normal
    assert any("was raised" in caveat for caveat in record.caveats)
    assert np.abs(clf.coef_).sum() <= 1e-10 * (1 + 1e-9)


def test_auto_steps_are_computed_in_float64_and_capped_before_rounding():
    # A float32 radius of 1e38 times the bound overflowed float32, and
    # math.ceil(inf) raised OverflowError; a float64 product beyond range
    # is the cap as well.
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for radius, bound, rho in [(np.float32(1e38), np.float32(3.0), np.float32(1.0)),
                                   (1e300, 1e10, 1.0)]:
            steps = auto_frank_wolfe_steps(
                l1_radius=radius, feature_bound=bound, n_samples=200,
                n_vertices=4, rho=rho,
            )
            assert steps == MAX_AUTO_STEPS and type(steps) is int

