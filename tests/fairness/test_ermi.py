# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""ERMI math against brute-force definitions and finite differences."""

import numpy as np
import pytest
from scipy.special import softmax

from sklearn_dpfair.fairness import DemographicParity, EqualizedOdds, EqualOpportunity
from sklearn_dpfair.fairness._ermi import (
    ERMIRegularizer,
    code_dtype,
    compact_codes,
    constrained_ermi,
    ermi_of_joint,
    joint_table,
    renyi_of_joint,
)


def _random_joint(rng, m, k):
    joint = rng.random((m, k)) ** 2
    return joint / joint.sum()


def _ermi_brute_force(joint):
    # Definition 64: E[p(Yhat, S) / (p(Yhat) p(S))] - 1, the expectation over
    # the joint law, written cell by cell with explicit loops.
    py, ps = joint.sum(1), joint.sum(0)
    total = 0.0
    for j in range(joint.shape[0]):
        for r in range(joint.shape[1]):
            if joint[j, r] > 0:
                total += joint[j, r] * joint[j, r] / (py[j] * ps[r])
    return total - 1.0


def _renyi_brute_force(joint, rng, n_trials=2000):
    # HGR: sup over f, g of corr(f(Yhat), g(S)); random search lower bound.
    py, ps = joint.sum(1), joint.sum(0)
    best = 0.0
    for _ in range(n_trials):
        f, g = rng.normal(size=joint.shape[0]), rng.normal(size=joint.shape[1])
        f, g = f - f @ py, g - g @ ps
        cov = f @ joint @ g
        best = max(best, abs(cov) / np.sqrt((f**2 @ py) * (g**2 @ ps)))
    return best


@pytest.mark.parametrize("shape", [(2, 2), (2, 5), (4, 3), (3, 6)])
def test_ermi_matches_definition(global_random_seed, shape):
    rng = np.random.default_rng(global_random_seed)
    joint = _random_joint(rng, *shape)
    assert ermi_of_joint(joint) == pytest.approx(_ermi_brute_force(joint), rel=1e-10)


@pytest.mark.parametrize("shape", [(2, 2), (2, 4), (5, 2)])
def test_ermi_is_squared_renyi_when_one_side_binary(global_random_seed, shape):
    rng = np.random.default_rng(global_random_seed)
    joint = _random_joint(rng, *shape)
    rho = renyi_of_joint(joint)
    assert ermi_of_joint(joint) == pytest.approx(rho**2, rel=1e-10)
    # The SVD value is the supremum of the correlations of random functions.
    assert _renyi_brute_force(joint, rng) <= rho + 1e-12
    assert _renyi_brute_force(joint, rng) >= rho - 0.05


def test_ermi_bounds_renyi_and_is_bounded(global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    joint = _random_joint(rng, 4, 5)
    rho = renyi_of_joint(joint)
    assert rho**2 <= ermi_of_joint(joint) + 1e-12
    assert ermi_of_joint(joint) <= min(joint.shape) - 1 + 1e-12
    independent = np.outer(joint.sum(1), joint.sum(0))
    assert ermi_of_joint(independent) == pytest.approx(0.0, abs=1e-12)


def test_empty_cells_are_skipped_exactly():
    joint = np.array([[0.5, 0.0], [0.0, 0.5], [0.0, 0.0]])  # class 2 never predicted
    assert ermi_of_joint(joint) == pytest.approx(1.0)
    assert renyi_of_joint(joint) == pytest.approx(1.0)


def test_joint_table_drops_missing_groups():
    proba = np.eye(2)[[0, 1, 1, 0]]
    codes = np.array([0, 1, -1, 0])
    np.testing.assert_allclose(joint_table(proba, codes, 2), [[2 / 3, 0], [0, 1 / 3]])


def _problem(rng, n, m, k, constraint):
    y = rng.integers(0, m, n)
    codes = rng.integers(0, k, n)
    codes[rng.random(n) < 0.1] = -1  # some missing groups
    blocks = constraint.block_index(y)
    n_blocks = constraint.n_blocks(m)
    keep = (blocks >= 0) & (codes >= 0)
    counts = np.zeros((n_blocks, k))
    np.add.at(counts, (blocks[keep], codes[keep]), 1.0)
    ps = counts / counts.sum(1, keepdims=True)
    freq = counts.sum(1) / np.count_nonzero(codes >= 0)
    reg = ERMIRegularizer(ps, constraint.block_weights(freq), m)
    # Scale n / n_observed as the solver does, so mean_i psi_i is the ERMI.
    scale = n / np.count_nonzero(codes >= 0)
    return y, codes, blocks, reg, reg.sample_constants(blocks, codes, scale)


CONSTRAINTS = [
    DemographicParity(),
    EqualizedOdds(),
    EqualizedOdds(weighting="uniform"),
    EqualOpportunity(class_index=1),
]


@pytest.mark.parametrize("constraint", CONSTRAINTS, ids=repr)
def test_dual_maximizer_attains_ermi(global_random_seed, constraint):
    # Psi(theta, W*(theta)) = ERMI (soft), and Psi(W) <= ERMI for every W.
    rng = np.random.default_rng(global_random_seed)
    n, m, k = 400, 3, 4
    _y, codes, blocks, reg, (blk, grp, wt, isq) = _problem(rng, n, m, k, constraint)
    proba = softmax(rng.normal(size=(n, m)) * 2, axis=1)
    target = constrained_ermi(
        proba, blocks, codes, k, constraint, n_blocks=reg.n_blocks
    )
    W_star = reg.dual_maximizer(proba, blk, grp, wt)
    psi = reg.value(proba, reg.coefficients(W_star, blk, grp, isq), wt)
    assert psi.mean() == pytest.approx(target, rel=1e-6, abs=1e-9)
    # W* lies in the box, so the projection does not move it.
    np.testing.assert_allclose(reg.project(W_star), W_star)
    for _ in range(5):
        W = W_star + 0.3 * rng.normal(size=W_star.shape)
        psi = reg.value(proba, reg.coefficients(W, blk, grp, isq), wt)
        assert psi.mean() <= target + 1e-9


@pytest.mark.parametrize("constraint", CONSTRAINTS, ids=repr)
def test_gradients_match_finite_differences(global_random_seed, constraint):
    rng = np.random.default_rng(global_random_seed)
    n, m, k = 30, 3, 3
    _y, _codes, _blocks, reg, (blk, grp, wt, isq) = _problem(rng, n, m, k, constraint)
    Z = rng.normal(size=(n, m))
    W = rng.random(reg.init_dual().shape)

    def psi_sum(Z, W):
        F = softmax(Z, axis=1)
        return reg.value(F, reg.coefficients(W, blk, grp, isq), wt)

    F = softmax(Z, axis=1)
    c = reg.coefficients(W, blk, grp, isq)
    G = reg.raw_gradient(F, c, wt)
    h = 1e-6
    for i, j in [(0, 0), (3, 2), (7, 1), (12, 0)]:
        dZ = np.zeros_like(Z)
        dZ[i, j] = h
        fd = (psi_sum(Z + dZ, W)[i] - psi_sum(Z - dZ, W)[i]) / (2 * h)
        assert G[i, j] == pytest.approx(fd, abs=1e-6)

    dual = reg.dual_gradient_from_cells(W, reg.cell_sums(F, blk, grp, wt))
    for idx in [(0, 0, 0), (0, 2, 1), (reg.n_blocks - 1, 1, 2)]:
        dW = np.zeros_like(W)
        dW[idx] = h
        fd = (psi_sum(Z, W + dW).sum() - psi_sum(Z, W - dW).sum()) / (2 * h)
        assert dual[idx] == pytest.approx(fd, abs=1e-6)


def test_dual_gradient_from_cells_matches_explicit_per_sample_gradients(
    global_random_seed,
):
    rng = np.random.default_rng(global_random_seed)
    n, m, k = 40, 3, 4
    constraint = EqualizedOdds()
    _y, _codes, _blocks, reg, (blk, grp, wt, isq) = _problem(rng, n, m, k, constraint)
    W = reg.project(rng.random(reg.init_dual().shape) * 3)
    F = softmax(rng.normal(size=(n, m)) * 3, axis=1)
    total = np.zeros_like(W)
    for i in range(
        n
    ):  # the definition: h_i = w_i (-2 W_b diag(F_i) + 2 e_s F_i^T / sqrt(Ps))
        h_i = -2 * W[blk[i]] * F[i][None, :]
        h_i[grp[i]] += 2 * F[i] * isq[i]
        total[blk[i]] += wt[i] * h_i
        # The statistic of one row is its weighted prediction in its cell.
        one = np.zeros(n)
        one[i] = wt[i]
        cells = reg.cell_sums(F, blk, grp, one)
        expected = np.zeros_like(W)
        expected[blk[i], grp[i]] = wt[i] * F[i]
        np.testing.assert_allclose(cells, expected, atol=1e-15)
        got = reg.dual_gradient_from_cells(W, cells)[blk[i]]
        np.testing.assert_allclose(got, wt[i] * h_i, atol=1e-12)
    np.testing.assert_allclose(
        reg.dual_gradient_from_cells(W, reg.cell_sums(F, blk, grp, wt)),
        total,
        rtol=1e-10,
        atol=1e-12,
    )
    norms = reg.cell_term_norms(F, wt)
    np.testing.assert_allclose(norms, wt * np.linalg.norm(F, axis=1), rtol=1e-12)


@pytest.mark.parametrize("constraint", CONSTRAINTS, ids=lambda c: repr(c))
def test_cell_sums_move_by_at_most_the_bound_whatever_the_record(constraint):
    # Adding one record to a batch moves the released statistic by its
    # weighted prediction in its own cell: at most the largest block weight
    # (attained by a one-hot prediction in the heaviest block), whatever the
    # dual W and the marginals are; a record whose logits overflowed
    # (F = 0) or whose group is left out moves nothing.
    rng = np.random.default_rng(0)
    n, m, k = 60, 3, 4
    _y, codes, blocks, reg, _ = _problem(rng, n, m, k, constraint)
    # Weight scale 1: a private fit's (its groups are never missing).
    blk, grp, wt, _isq = reg.sample_constants(blocks, codes, 1.0)
    bound = reg.cell_sum_bound()
    assert bound == pytest.approx(reg.block_weights.max(), rel=1e-15)
    F = softmax(rng.normal(size=(n, m)) * 5, axis=1)
    base = reg.cell_sums(F, blk, grp, wt)
    moved = []
    for proba in (np.eye(m)[0], np.full(m, 1.0 / m), np.zeros(m), np.eye(m)[-1]):
        for i in range(n):
            with_row = reg.cell_sums(
                np.vstack([F, proba]), np.append(blk, blk[i]),
                np.append(grp, grp[i]), np.append(wt, wt[i]),
            )
            moved.append(np.linalg.norm(with_row - base))
    assert max(moved) <= bound * (1 + 1e-12)
    assert max(moved) == pytest.approx(bound, rel=1e-12)


@pytest.mark.parametrize("constraint", CONSTRAINTS, ids=lambda c: repr(c))
@pytest.mark.parametrize("weighted", [False, True])
def test_cell_codes_give_the_per_row_constants(constraint, weighted):
    # One small code a row and per-cell tables give the rows of
    # sample_constants bit for bit (rows without a term included).
    rng = np.random.default_rng(3)
    y, codes, blocks, reg, _ = _problem(rng, 500, 3, 4, constraint)
    scale = 1.7 * rng.random(500) if weighted else 1.7
    cells = reg.row_cells(blocks, codes)
    assert cells.dtype == np.int8
    idx = rng.permutation(500)[:200]
    got = reg.batch_constants(cells[idx], scale[idx] if weighted else scale)
    expected = reg.sample_constants(blocks, codes, scale)
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e[idx])
        assert g.dtype == e.dtype


def test_cell_sums_added_by_blocks_equal_the_single_pass():
    rng = np.random.default_rng(4)
    constraint = EqualizedOdds()
    y, codes, blocks, reg, (blk, grp, wt, _) = _problem(rng, 1000, 3, 3, constraint)
    proba = rng.dirichlet(np.ones(3), 1000) * 1e3
    total = np.zeros((reg.n_blocks, reg.n_groups, 3))
    for start in range(0, 1000, 137):
        rows = slice(start, start + 137)
        total = reg.add_cell_sums(total, proba[rows], blk[rows], grp[rows], wt[rows])
    # Bit for bit: each cell's sum goes on in row order.
    np.testing.assert_array_equal(
        reg.maximizer_from_cells(total), reg.dual_maximizer(proba, blk, grp, wt)
    )


def test_compact_codes_are_the_inverse_of_unique():
    rng = np.random.default_rng(5)
    values = rng.choice(np.array([-4, 2, 9, 30]), 200_000)
    uniques, inverse = np.unique(values, return_inverse=True)
    codes = compact_codes(uniques, values)
    assert codes.dtype == np.int8
    np.testing.assert_array_equal(codes, inverse)
    # Declared labels keep their order.
    np.testing.assert_array_equal(
        compact_codes(np.array([30, -4, 9, 2]), values),
        np.array([1, 3, 2, 0])[inverse],
    )
    assert code_dtype(126) == np.int8 and code_dtype(127) == np.int16
