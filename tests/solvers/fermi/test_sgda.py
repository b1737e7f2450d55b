# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The SGDA solver against independent per-sample references."""

import warnings

import numpy as np
import pytest
from scipy.special import softmax
from sklearn.linear_model import LogisticRegression

from sklearn_dpfair._loss import SoftmaxLoss
from sklearn_dpfair._solvers._sampling import poisson_batch
from sklearn_dpfair._solvers.fermi._sgda import noisy_sgda, softmax_terms
from sklearn_dpfair.fairness import DemographicParity, EqualizedOdds
from sklearn_dpfair.fairness._ermi import ERMIRegularizer
from sklearn_dpfair.privacy import GaussianMechanism

NO_NOISE = GaussianMechanism(clip_norm=np.inf, noise_multiplier=0.0)


def _data(rng, n=60, d=3, m=2, k=3):
    X = rng.normal(size=(n, d))
    y = rng.integers(0, m, n)
    codes = rng.integers(0, k, n)
    return X, y, codes


def _regularizer(constraint, y, codes, m, k):
    blocks = constraint.block_index(y)
    nb = constraint.n_blocks(m)
    counts = np.zeros((nb, k))
    np.add.at(counts, (blocks, codes), 1.0)
    freq = counts.sum(1) / y.size
    return ERMIRegularizer(
        counts / counts.sum(1, keepdims=True), constraint.block_weights(freq), m
    ), blocks


def _run(
    X,
    y,
    codes,
    reg,
    blocks,
    *,
    lam,
    n_steps=1,
    q=1.0,
    clip=np.inf,
    dual_clip=np.inf,
    sigma=0.0,
    lr=0.1,
    dual_lr=0.2,
    alpha=0.0,
    seed=0,
    dual_update="sgda",
    record=False,
    constraint=None,
    return_iterate="last",
):
    return noisy_sgda(
        X,
        y,
        SoftmaxLoss(reg.n_classes if reg else 2),
        reg,
        blocks=blocks,
        codes=codes,
        weight_scale=1.0,
        fairness_weight=lam,
        primal_mechanism=GaussianMechanism(clip, sigma),
        dual_mechanism=GaussianMechanism(dual_clip, sigma),
        sampling_probability=q,
        n_steps=n_steps,
        epochs=max(1, int(n_steps * q)),
        learning_rate=lr,
        dual_learning_rate=dual_lr,
        alpha=alpha,
        intercept_scaling=1.0,
        dual_update=dual_update,
        project_dual=False,
        return_iterate=return_iterate,
        rng=np.random.default_rng(seed),
        record_curves=record,
        constraint=constraint,
    )


def _reference_step(
    X, y, codes, Ps, theta, b, W, *, lam, clip, dual_clip, lr, dual_lr, denominator, idx
):
    """One FERMI/DP-FERMI step written per sample, as the research code does."""
    m = theta.shape[1]
    g_theta, g_b, cells = np.zeros_like(theta), np.zeros_like(b), np.zeros_like(W)
    for i in idx:
        z = X[i] @ theta + b
        F = softmax(z)
        c = 2 * W[codes[i]] / np.sqrt(Ps[codes[i]]) - (W**2).sum(0)
        dz = F - np.eye(m)[y[i]] + lam * F * (c - c @ F)
        gt, gb = np.outer(X[i], dz), dz
        norm = np.sqrt((gt**2).sum() + (gb**2).sum())
        factor = min(1.0, clip / norm) if norm > 0 else 1.0
        g_theta += factor * gt
        g_b += factor * gb
        # The dual's statistic: the clipped prediction in the row's cell.
        fn = np.linalg.norm(F)
        cells[codes[i]] += (min(1.0, dual_clip / fn) if fn > 0 else 1.0) * F
    # The summed dual gradients h_i = -2 W diag(F_i) + 2 e_s F_i^T / sqrt(Ps).
    g_W = -2 * W * cells.sum(0)[None, :] + 2 * cells / np.sqrt(Ps)[:, None]
    theta = theta - lr * g_theta / denominator
    b = b - lr * g_b / denominator
    W = W + dual_lr * g_W / denominator
    return theta, b, W


@pytest.mark.parametrize("clip, dual_clip", [(np.inf, np.inf), (0.3, 0.5)])
def test_steps_match_per_sample_reference(global_random_seed, clip, dual_clip):
    rng = np.random.default_rng(global_random_seed)
    X, y, codes = _data(rng, m=3)
    reg, blocks = _regularizer(DemographicParity(), y, codes, 3, 3)
    q, n_steps, lam = 0.4, 4, 2.0
    got = _run(
        X,
        y,
        codes,
        reg,
        blocks,
        lam=lam,
        n_steps=n_steps,
        q=q,
        clip=clip,
        dual_clip=dual_clip,
        seed=global_random_seed,
    )
    # Replay the same Poisson batches, dividing by the expected size q n.
    sampler = np.random.default_rng(global_random_seed)
    theta, b, W = np.zeros((3, 3)), np.zeros(3), np.zeros((3, 3))
    for _ in range(n_steps):
        idx = poisson_batch(sampler, X.shape[0], q)
        theta, b, W = _reference_step(
            X,
            y,
            codes,
            reg.group_marginals[0],
            theta,
            b,
            W,
            lam=lam,
            clip=clip,
            dual_clip=dual_clip,
            lr=0.1,
            dual_lr=0.2,
            denominator=q * X.shape[0],
            idx=idx,
        )
    np.testing.assert_allclose(got.coef, theta, atol=1e-12)
    np.testing.assert_allclose(got.intercept, b, atol=1e-12)
    np.testing.assert_allclose(got.dual[0], W, atol=1e-12)


def test_softmax_terms_match_loss_object(global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    raw, y = rng.normal(size=(20, 4)) * 30, rng.integers(0, 4, 20)
    proba, grad, loss = softmax_terms(raw, y)
    ref = SoftmaxLoss(4)
    np.testing.assert_allclose(grad, ref.raw_gradient(y, raw), atol=1e-12)
    np.testing.assert_allclose(loss, ref.loss(y, raw), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(proba, softmax(raw, axis=1), atol=1e-15)


def test_no_fairness_term_is_logistic_regression():
    # Full-batch gradient descent with L2 converges to scikit-learn's solution.
    # With the penalty alpha/2 ||W||^2 on both softmax columns, the optimum
    # is antisymmetric and the logit difference w carries alpha/4 ||w||^2,
    # i.e. LogisticRegression with C = 2 / (alpha n).
    rng = np.random.default_rng(0)
    X, y, codes = _data(rng, n=200)
    alpha = 0.05
    res = _run(
        X,
        y,
        codes,
        None,
        np.zeros(200, int),
        lam=0.0,
        n_steps=3000,
        lr=1.0,
        alpha=alpha,
    )
    ref = LogisticRegression(C=2 / (alpha * 200), tol=1e-12).fit(X, y)
    np.testing.assert_allclose(res.coef[:, 1] - res.coef[:, 0], ref.coef_[0], atol=1e-6)
    np.testing.assert_allclose(
        res.intercept[1] - res.intercept[0], ref.intercept_[0], atol=1e-6
    )


def test_exact_dual_update_is_the_maximizer():
    rng = np.random.default_rng(0)
    X, y, codes = _data(rng, n=100)
    reg, blocks = _regularizer(EqualizedOdds(), y, codes, 2, 3)
    res = _run(X, y, codes, reg, blocks, lam=4.0, n_steps=20, dual_update="exact")
    # The returned W is W*(theta_{T-1}); at T = 1 it is W*(0) exactly.
    res1 = _run(X, y, codes, reg, blocks, lam=4.0, n_steps=1, dual_update="exact")
    blk, grp, wt, isq = reg.sample_constants(blocks, codes)
    F0 = np.full((100, 2), 0.5)
    np.testing.assert_allclose(res1.dual, reg.dual_maximizer(F0, blk, grp, wt))
    assert res.dual.shape == (2, 3, 2)


def test_sgda_and_exact_reach_the_same_fixed_point():
    rng = np.random.default_rng(1)
    X, y, codes = _data(rng, n=300, k=2)
    y = (X[:, 0] + codes + 0.3 * rng.normal(size=300) > 0.5).astype(int)
    reg, blocks = _regularizer(DemographicParity(), y, codes, 2, 2)
    a = _run(X, y, codes, reg, blocks, lam=3.0, n_steps=4000, lr=0.5, dual_lr=0.5)
    b = _run(
        X, y, codes, reg, blocks, lam=3.0, n_steps=4000, lr=0.5, dual_update="exact"
    )
    np.testing.assert_allclose(
        a.coef[:, 1] - a.coef[:, 0], b.coef[:, 1] - b.coef[:, 0], atol=1e-3
    )


def test_noise_has_the_calibrated_scale():
    # With lr = 1 from zero, the update is -(clipped sum + noise) / (q n); on
    # an all-zero design the clipped coefficient sum is 0, so the coefficient
    # is pure noise of std sigma * C / (q n).
    n, sigma, clip = 50, 2.0, 0.5
    X, y, codes = np.zeros((n, 200)), np.zeros(n, int), np.zeros(n, int)
    res = _run(X, y, codes, None, codes, lam=0.0, q=0.5, clip=clip, sigma=sigma, lr=1.0)
    std = res.coef.std()
    assert std == pytest.approx(sigma * clip / (0.5 * n), rel=0.1)


def test_clipped_sums_have_bounded_sensitivity(global_random_seed):
    # Adding one record moves the clipped primal sum by <= C and the clipped
    # cell sums (the dual's statistic) by <= C_w, whatever the record (the
    # add/remove sensitivity).
    rng = np.random.default_rng(global_random_seed)
    X, y, codes = _data(rng, n=30, d=4, m=3)
    reg, _blocks = _regularizer(DemographicParity(), y, codes, 3, 3)
    reg.project(rng.random(reg.init_dual().shape) * 5)
    clip, dual_clip = 0.7, 0.9
    x_new = rng.normal(size=(1, 4)) * 100
    X2 = np.vstack([X, x_new])
    y2, c2 = np.append(y, 2), np.append(codes, 0)
    sums = []
    for XX, yy, cc in [(X, y, codes), (X2, y2, c2)]:
        res = noisy_sgda(
            XX,
            yy,
            SoftmaxLoss(3),
            reg,
            blocks=np.zeros(yy.size, int),
            codes=cc,
            weight_scale=1.0,
            fairness_weight=50.0,
            primal_mechanism=GaussianMechanism(clip, 0.0),
            dual_mechanism=GaussianMechanism(dual_clip, 0.0),
            sampling_probability=1.0,
            n_steps=1,
            epochs=1,
            learning_rate=1.0,
            dual_learning_rate=1.0,
            alpha=0.0,
            intercept_scaling=1.0,
            dual_update="sgda",
            project_dual=False,
            return_iterate="last",
            rng=np.random.default_rng(0),
            record_curves=False,
        )
        # From theta = 0, W = 0: the primal step is minus the mean sum and
        # the dual step 2 (mean cell sums) / sqrt(Ps).
        cells = res.dual[0] * yy.size * np.sqrt(reg.group_marginals[0])[:, None] / 2
        sums.append((np.vstack([res.coef, res.intercept]) * yy.size, cells))
    assert np.linalg.norm(sums[1][0] - sums[0][0]) <= clip + 1e-9
    assert np.linalg.norm(sums[1][1] - sums[0][1]) <= dual_clip + 1e-9


def test_curves_are_recorded_per_epoch():
    rng = np.random.default_rng(0)
    X, y, codes = _data(rng, n=200, k=2)
    reg, blocks = _regularizer(DemographicParity(), y, codes, 2, 2)
    res = _run(
        X,
        y,
        codes,
        reg,
        blocks,
        lam=1.0,
        n_steps=30,
        q=0.2,
        record=True,
        constraint=DemographicParity(),
        return_iterate="average",
    )
    assert len(res.loss_curve) == 6 == len(res.fairness_curve)
    assert res.loss_curve[-1] < res.loss_curve[0] <= np.log(2) + 0.2
    assert all(v >= 0 for v in res.fairness_curve)


# -- a record near the float64 limit -----------------------------------------


def test_softmax_terms_give_overflowed_rows_the_contribution_zero():
    # Logits that overflowed (inf, or inf - inf = nan inside x_i Theta) used
    # to give nan probabilities and gradients; they now contribute exactly 0.
    raw = np.array([[0.5, -0.5], [np.inf, -np.inf], [np.nan, 1.0], [1e308, -1e308]])
    y = np.array([0, 1, 0, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no data-dependent numpy warning
        proba, grad, loss = softmax_terms(raw, y)
    for values in (proba, grad, loss):
        assert np.all(np.isfinite(values))
    np.testing.assert_array_equal(proba[1:3], 0.0)
    np.testing.assert_array_equal(grad[1:3], 0.0)
    np.testing.assert_array_equal(loss[1:3], 0.0)
    # Finite rows keep their exact values (the huge one included).
    np.testing.assert_allclose(proba[0], softmax(raw[0]), rtol=1e-15)
    np.testing.assert_array_equal(proba[3], [1.0, 0.0])
    np.testing.assert_array_equal(grad[3], [1.0, -1.0])
    assert np.isfinite(loss[3]) and loss[3] > 1e299


class _Recording(GaussianMechanism):
    """A Gaussian mechanism that keeps a copy of every sum it privatizes."""

    def __init__(self, clip_norm, noise_multiplier):
        super().__init__(clip_norm, noise_multiplier)
        object.__setattr__(self, "sums", [])

    def privatize(self, clipped_sum, rng):
        self.sums.append(np.array(clipped_sum, copy=True))
        return super().privatize(clipped_sum, rng)


@pytest.mark.parametrize(
    "row", [[1.7e308, 0.0], [-1.7e308, 1.7e308], [1e200, 1e200]], ids=str
)
@pytest.mark.parametrize("q", [1.0, 0.5])
def test_a_huge_record_has_finite_terms_within_both_clip_norms(row, q):
    # One record alone: each noisy sum of every step is exactly its term, so
    # the terms must be finite and within the clip norms whatever the record
    # holds, while (large) noise drives the logits past the float64 range.
    X = np.array([row])
    y, codes = np.array([1]), np.array([0])
    constraint = DemographicParity()
    reg = ERMIRegularizer(np.array([[0.5, 0.5]]), np.ones(1), 2)
    clip, dual_clip = 2.0, 3.0
    primal, dual = _Recording(clip, 50.0), _Recording(dual_clip, 50.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = noisy_sgda(
            X, y, SoftmaxLoss(2), reg,
            blocks=constraint.block_index(y), codes=codes, weight_scale=1.0,
            fairness_weight=4.0, primal_mechanism=primal, dual_mechanism=dual,
            sampling_probability=q, n_steps=12, epochs=2, learning_rate=1.0,
            dual_learning_rate=0.1, alpha=0.0, intercept_scaling=1.0,
            dual_update="sgda", project_dual=True, return_iterate="average",
            rng=np.random.default_rng(0), record_curves=True,
            constraint=constraint,
        )
    # Primal: the coefficient block and the intercept block of each step.
    blocks = [np.concatenate([a.ravel(), b.ravel()])
              for a, b in zip(primal.sums[::2], primal.sums[1::2])]
    assert len(blocks) == 12 and len(dual.sums) == 12
    for term in blocks:
        assert np.all(np.isfinite(term))
        assert np.linalg.norm(term) <= clip * (1 + 1e-12)
    for term in dual.sums:
        assert np.all(np.isfinite(term))
        assert np.linalg.norm(term) <= dual_clip * (1 + 1e-12)
    for values in (result.coef, result.intercept, result.dual):
        assert np.all(np.isfinite(values))
    assert all(np.isfinite(v) for v in result.loss_curve + result.fairness_curve)


def test_float32_dual_terms_are_within_the_dual_clip():
    # The norms are float64 (the weights are), the terms are made of float32
    # probabilities: the float32 margin keeps each clipped term inside.
    from sklearn_dpfair._solvers.fermi._sgda import fair_terms

    rng = np.random.default_rng(0)
    reg = ERMIRegularizer(np.array([[0.5, 0.5]]), np.ones(1), 3)
    constants = reg.batch_constants(np.array([0], dtype=np.int8), np.array([1.0]))
    worst = 0.0
    for _ in range(500):
        F = softmax(rng.normal(size=(1, 3)) * 5, axis=1).astype(np.float32)
        _, cells = fair_terms(
            reg, np.zeros((1, 2, 3), np.float32), F, np.zeros_like(F), constants,
            fairness_weight=1.0, dual_clip_norm=0.3,
        )
        worst = max(worst, np.linalg.norm(cells.astype(np.float64)))
    assert 0.29 < worst <= 0.3


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_dual_term_whose_clip_factor_is_subnormal_is_clipped_not_dropped(dtype):
    # A weight near the largest float: C / (w ||F||) is below the smallest
    # normal float, which the core sets to 0, and the record's dual term
    # was dropped (norm 0) where its weight can raise it only up to C.
    from sklearn_dpfair._solvers.fermi._sgda import fair_terms

    reg = ERMIRegularizer(np.array([[0.5, 0.5]]), np.ones(1), 3)
    dual_clip = 0.3
    for weight in (1.7e308, 1e308):
        constants = reg.batch_constants(
            np.array([0, 0], dtype=np.int8), np.array([weight, 0.0])
        )
        F = np.array([[0.98, 0.01, 0.01], [0.2, 0.3, 0.5]], dtype=dtype)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            _, cells = fair_terms(
                reg, np.zeros((1, 2, 3), dtype), F, np.zeros_like(F), constants,
                fairness_weight=1.0, dual_clip_norm=dual_clip,
            )
        # The zero-weight record adds nothing: the cells are the term.
        norm = np.linalg.norm(cells.astype(np.float64))
        assert dual_clip * (1 - 1e-6) <= norm <= dual_clip * (1 + 1e-15)


def test_float32_primal_terms_of_a_weight_beyond_float32_are_clipped_not_dropped():
    # A weight above float32's largest float was cast to inf: the record's
    # primal term, no longer finite, was dropped (norm 0) in a float32 fit
    # and clipped to C in a float64 one. Saturated at the largest float32,
    # it is clipped to C in both (float32: C (1 - 2 eps)).
    constraint = DemographicParity()
    reg = ERMIRegularizer(np.array([[0.5, 0.5]]), np.ones(1), 2)
    y, codes = np.array([1]), np.array([0])
    clip = 2.0
    norms = {}
    for dtype in (np.float64, np.float32):
        primal = _Recording(clip, 0.0)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            noisy_sgda(
                np.array([[3.0, 4.0]], dtype=dtype), y, SoftmaxLoss(2), reg,
                blocks=constraint.block_index(y), codes=codes, weight_scale=1.0,
                fairness_weight=4.0, primal_mechanism=primal,
                dual_mechanism=_Recording(3.0, 0.0), sampling_probability=1.0,
                n_steps=2, epochs=1, learning_rate=1.0, dual_learning_rate=0.1,
                alpha=0.0, intercept_scaling=1.0, dual_update="sgda",
                project_dual=True, return_iterate="last",
                rng=np.random.default_rng(0), record_curves=False,
                constraint=constraint, sample_weight=np.array([1e308]),
            )
        norms[dtype] = [
            np.linalg.norm(np.concatenate([np.ravel(a), np.ravel(b)]).astype(float))
            for a, b in zip(primal.sums[::2], primal.sums[1::2])
        ]
    for dtype, values in norms.items():
        assert len(values) == 2
        for norm in values:
            assert clip * (1 - 1e-6) <= norm <= clip * (1 + 1e-15), dtype
