# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Groups below min_group_size leave the ERMI penalty (penalty_cells)."""

import warnings

import numpy as np
import pytest

from sklearn_dpfair import DPFERMIClassifier, FERMIClassifier
from sklearn_dpfair._solvers.fermi._fit import penalty_cells


def _data(sizes, seed=0, d=3):
    """Rows of groups 0, 1, ... of the given sizes, labels tied to the group."""
    rng = np.random.default_rng(seed)
    s = np.repeat(np.arange(len(sizes)), sizes)
    X = rng.normal(size=(s.size, d)) + 0.5 * s[:, None]
    y = (X[:, 0] + 0.5 * s + rng.normal(size=s.size) > 0.5).astype(int)
    return X, y, s


def _small_warnings(caught):
    return [str(w.message) for w in caught if "min_group_size" in str(w.message)]


def test_penalty_cells_leaves_out_small_cells_and_single_group_blocks():
    counts = np.array([[500.0, 4.0, 31.0], [40.0, 2.0, 9.0], [30.0, 30.0, 29.9]])
    assert penalty_cells(counts, 30).tolist() == [
        [True, False, True],
        [False, False, False],  # one kept group: its ERMI is 0 for any model
        [True, True, False],
    ]
    assert penalty_cells(counts, 0) is None
    # Noisy counts may be negative: left out like any small count.
    assert penalty_cells(np.array([[-3.0, 100.0, 80.0]]), 30).tolist() == [
        [False, True, True]
    ]


def test_left_out_rows_have_no_penalty_term():
    # Two tiny groups of 5 rows, or one of 10 (the same rows): both are left
    # out, so the penalty (of groups 0 and 1 only) and the fit are the same.
    # With every group in the penalty (min_group_size=0) they differ.
    X, y, s = _data([400, 300, 5, 5], seed=1)
    merged = np.where(s == 3, 2, s)
    params = dict(fairness_weight=8.0, random_state=0, max_iter=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = FERMIClassifier(**params).fit(X, y, sensitive_features=s)
        b = FERMIClassifier(**params).fit(X, y, sensitive_features=merged)
        a0 = FERMIClassifier(min_group_size=0, **params).fit(X, y, sensitive_features=s)
        b0 = FERMIClassifier(min_group_size=0, **params).fit(
            X, y, sensitive_features=merged
        )
    # Same sums over the same kept rows in the same order: only the number
    # of (empty) cells differs, so round-off is at most a few ulps.
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(a.intercept_, b.intercept_, rtol=1e-10, atol=1e-12)
    assert not np.allclose(a0.coef_, b0.coef_, rtol=1e-4)
    # The left-out groups' marginals are 0, the kept ones the law given a
    # kept group, and their dual entries are 0.
    assert a.group_marginals_[2:].tolist() == [0.0, 0.0]
    assert a.group_marginals_[:2] == pytest.approx([400 / 700, 300 / 700])
    assert np.all(a.dual_coef_[2:] == 0.0)


@pytest.mark.parametrize("bound", [None, 0.05])
def test_one_warning_names_the_small_group(bound):
    X, y, s = _data([400, 300, 5])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        FERMIClassifier(
            fairness_weight=4.0, disparity_bound=bound, random_state=0, max_iter=3
        ).fit(X, y, sensitive_features=s)
    small = _small_warnings(caught)
    assert len(small) == 1
    assert small[0].startswith("group(s) 2 have fewer than min_group_size=30")
    what = (
        "the fairness penalty (their"
        if bound is None
        else "the fairness penalty and the bounded training disparity"
    )
    assert what in small[0]


@pytest.mark.parametrize("bound", [None, 0.05])
def test_training_disparity_is_fairlearns_or_the_bounded_one(bound):
    # Without a bound, fairlearn's difference over every group (leaving the
    # small groups out could report 0 where there is a gap); under a bound,
    # the disparity that was bounded, without the small groups.
    from fairlearn.metrics import demographic_parity_difference

    X, y, s = _data([400, 300, 20], seed=3)
    params = dict(fairness_weight=8.0, disparity_bound=bound, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        est = FERMIClassifier(**params).fit(X, y, sensitive_features=s)
        every = FERMIClassifier(min_group_size=0, **params).fit(
            X, y, sensitive_features=s
        )
    kept = s < 2 if bound is not None else np.ones(len(s), dtype=bool)
    pred = est.predict(X)
    expected = demographic_parity_difference(
        y[kept], pred[kept], sensitive_features=s[kept]
    )
    assert est.training_disparity_ == pytest.approx(expected, abs=1e-12)
    # The small group changes the gap here.
    big = s < 2
    assert abs(
        demographic_parity_difference(y[big], pred[big], sensitive_features=s[big])
        - demographic_parity_difference(y, pred, sensitive_features=s)
    ) > 0.01
    assert every.training_disparity_ == pytest.approx(
        demographic_parity_difference(y, every.predict(X), sensitive_features=s),
        abs=1e-12,
    )


def test_private_fit_reads_the_released_counts_and_bounds_the_dual_by_kept_groups():
    # Declared public marginals (so the test is deterministic): group 2 is
    # 0.15% of 2,000 rows, below 30. It leaves the penalty; the dual box is
    # that of groups 0 and 1 alone (1/sqrt(0.0015) would have set it
    # before), and the dual's clip norm is the block weight, which no
    # marginal enters.
    X, y, s = _data([1000, 997, 3])
    est = DPFERMIClassifier(
        epsilon=1.0,
        classes=[0, 1],
        groups=[0, 1, 2],
        group_marginals=[0.5, 0.4985, 0.0015],
        random_state=0,
        max_iter=3,
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y, sensitive_features=s)
    small = _small_warnings(caught)
    assert len(small) == 1 and "declared group_marginals" in small[0]
    ps = est.group_marginals_
    assert ps[2] == 0.0 and ps[:2].sum() == pytest.approx(1.0)
    assert np.all(est.dual_coef_[2] == 0.0)
    kept = ps[:2]
    assert np.all(est.dual_coef_[:2] <= 1.0 / np.sqrt(kept)[:, None] + 1e-12)
    assert est.dual_clip_norm_ == 1.0


@pytest.mark.parametrize("estimator", ["FERMI", "DPFERMI"])
def test_fit_without_small_groups_is_unchanged(estimator):
    # No group below the size: the penalty is built exactly as with
    # min_group_size=0 (no cell left out), so the same operations run in the
    # same order and the coefficients are equal bit for bit.
    X, y, s = _data([400, 300, 250], seed=2)
    if estimator == "FERMI":
        make = lambda m: FERMIClassifier(  # noqa: E731
            fairness_weight=4.0, random_state=0, max_iter=3, min_group_size=m
        )
    else:
        make = lambda m: DPFERMIClassifier(  # noqa: E731
            epsilon=3.0, classes=[0, 1], groups=[0, 1, 2], random_state=0,
            max_iter=3, min_group_size=m,
        )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        a = make(30).fit(X, y, sensitive_features=s)
    assert _small_warnings(caught) == []
    b = make(0).fit(X, y, sensitive_features=s)
    assert np.array_equal(a.coef_, b.coef_)
    assert np.array_equal(a.intercept_, b.intercept_)


def test_a_left_out_group_is_not_also_reported_as_floored():
    # 2 rows of 3,502 (frequency below min_group_frequency=1e-3): left out of
    # the penalty, so the floor (which it no longer reaches) is not reported.
    X, y, s = _data([2000, 1500, 2])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        FERMIClassifier(random_state=0, max_iter=2).fit(X, y, sensitive_features=s)
    messages = [str(w.message) for w in caught]
    assert len(_small_warnings(caught)) == 1
    assert not [m for m in messages if "training frequency below" in m]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        FERMIClassifier(random_state=0, max_iter=2, min_group_size=0).fit(
            X, y, sensitive_features=s
        )
    assert [str(w.message) for w in caught if "training frequency below" in str(w.message)]


def test_left_out_dual_stays_zero_without_the_box():
    # dual_projection=None: no box holds a left-out cell's dual at 0, so the
    # step does (its noise would enter every row's colsum(W_b^2) otherwise).
    X, y, s = _data([1000, 997, 3])
    est = DPFERMIClassifier(
        epsilon=1.0, classes=[0, 1], groups=[0, 1, 2],
        group_marginals=[0.5, 0.4985, 0.0015], dual_projection=None,
        dual_clip_norm=1.0,
        random_state=0, max_iter=3,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y, sensitive_features=s)
    assert np.all(est.dual_coef_[2] == 0.0)
    assert np.any(est.dual_coef_[:2] != 0.0)


def test_the_warning_names_a_large_group_apart_from_the_small_ones():
    # 'big' (990 rows) is left out only as the one kept group of its
    # blocks: it is not called small.
    rng = np.random.default_rng(0)
    s = np.where(np.arange(1000) < 990, "big", "tiny")
    X = rng.normal(size=(1000, 3))
    y = (X[:, 0] > 0).astype(int)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        FERMIClassifier(random_state=0, max_iter=3).fit(X, y, sensitive_features=s)
    (small,) = _small_warnings(caught)
    assert small.startswith("group(s) tiny have fewer than min_group_size=30")
    assert "Group(s) big are left out of it too" in small


def test_the_warning_names_ten_small_groups_and_counts_the_rest():
    # A feature of thousands of values (zip codes): the message names ten
    # groups, as the min_group_frequency floor's does, not every one.
    rng = np.random.default_rng(3)
    n = 6000
    X = rng.normal(size=(n, 2))
    y = (X[:, 0] > 0).astype(int)
    s = rng.integers(0, 1500, n)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        FERMIClassifier(max_iter=1).fit(X, y, sensitive_features=s)
    (small,) = _small_warnings(caught)
    n_small = np.unique(s).size
    assert small.startswith(
        f"group(s) 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 (and {n_small - 10} more) have "
        "fewer than min_group_size=30"
    )
    assert len(small) < 400


def test_a_private_bound_is_met_when_only_one_block_compares_groups():
    # Equalized odds, positives rare in group 1: the label-1 block compares
    # nothing, and its lone cell no longer sets the bound's noise margin
    # (2 x 53 / 400 = 0.26 against the label-0 block's 0.014).
    from sklearn_dpfair import DPFERMIClassifier

    rng = np.random.default_rng(0)
    n = 8000
    X = rng.normal(size=(2 * n, 3))
    s = np.repeat([0, 1], n)
    y = np.zeros(2 * n, dtype=int)
    y[rng.choice(n, 400, replace=False)] = 1
    y[n + rng.choice(n, 5, replace=False)] = 1
    X[:, 0] += 2.0 * y
    clf = DPFERMIClassifier(
        constraint="equalized_odds", disparity_bound=0.05, epsilon=2.0,
        classes=[0, 1], groups=[0, 1], random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf.fit(X, y, sensitive_features=s)
    assert clf.bound_met_


def _weighted_fit(X, y, s, w=None, **params):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = FERMIClassifier(fairness_weight=8.0, random_state=0, **params).fit(
            X, y, sample_weight=w, sensitive_features=s
        )
    return est, _small_warnings(caught)


def test_min_group_size_counts_rows_not_weights():
    # min_group_size guards against rates measured on few rows, which a
    # weight does not make less noisy: it compares the rows of a cell.
    # Group 2 has 40 rows of weight 1/2 (20 in the mean-1 weights the
    # marginals use) and is kept; group 1 has 20 rows of weight 3 (60) and
    # is left out, whatever its weight.
    X, y, s = _data([500, 20, 40], seed=3)
    w = np.select([s == 1, s == 2], [3.0, 0.5], 1.0)
    est, small = _weighted_fit(X, y, s, w)
    assert len(small) == 1 and small[0].startswith("group(s) 1 have fewer")
    assert est.group_marginals_[1] == 0.0 and est.group_marginals_[2] > 0.0
    # The marginals among the kept groups are still weighted.
    kept = np.array([500 * 1.0, 0.0, 40 * 0.5])
    assert est.group_marginals_ == pytest.approx(kept / kept.sum())


def test_rows_of_weight_zero_are_absent_from_min_group_size():
    # A row of weight 0 is absent from the fit: 28 rows of group 2 keep a
    # positive weight, below min_group_size=30, as when the zero-weight
    # rows are removed (the mean-1 rescaling of the weights, 1.25 here,
    # made them 35 before).
    X, y, s = _data([400, 300, 40], seed=4)
    w = np.ones(s.size)
    w[np.flatnonzero(s == 2)[:12]] = 0.0
    w[np.flatnonzero(s == 0)[:173]] = 0.0
    keep = w > 0
    # Solved tightly: the two SGDA warm starts differ (other batches).
    weighted, small_w = _weighted_fit(X, y, s, w, tol=1e-9)
    removed, small_r = _weighted_fit(X[keep], y[keep], s[keep], tol=1e-9)
    assert small_w == small_r and len(small_w) == 1
    assert weighted.group_marginals_[2] == removed.group_marginals_[2] == 0.0
    np.testing.assert_allclose(weighted.coef_, removed.coef_, rtol=1e-6, atol=1e-7)


def test_uniform_weights_keep_the_groups_of_the_unweighted_fit():
    X, y, s = _data([500, 500, 16], seed=5)
    plain, small_p = _weighted_fit(X, y, s)
    doubled, small_d = _weighted_fit(X, y, s, np.full(s.size, 2.0))
    assert small_p == small_d and len(small_d) == 1
    np.testing.assert_array_equal(plain.coef_, doubled.coef_)


def _all_warnings(X, y, s, w=None, **params):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = FERMIClassifier(
            fairness_weight=8.0, min_group_size=0, tol=1e-7, alpha=1e-3,
            random_state=0, **params,
        ).fit(X, y, sample_weight=w, sensitive_features=s)
    return est, [str(c.message) for c in caught]


@pytest.mark.parametrize(
    "constraint, zero",
    [
        ("demographic_parity", "group"),  # every row of group 2
        ("equalized_odds", "group"),
        ("equalized_odds", "cell"),  # the label-1 rows of group 2 only
    ],
)
def test_a_cell_of_zero_weight_rows_is_absent_even_at_min_group_size_0(
    constraint, zero
):
    # Rows of weight 0 are absent: a (label, group) cell holding only such
    # rows leaves the penalty as it does once they are removed, rather than
    # being floored at min_group_frequency (with a warning) and taking that
    # mass from the other groups' marginals.
    X, y, s = _data([150, 150, 100], seed=7)
    w = np.ones(s.size)
    w[(s == 2) & ((y == 1) | (zero == "group"))] = 0.0
    keep = w > 0
    weighted, said_w = _all_warnings(X, y, s, w, constraint=constraint)
    removed, said_r = _all_warnings(
        X[keep], y[keep], s[keep], constraint=constraint
    )
    assert said_w == said_r == []
    ps = np.atleast_2d(weighted.group_marginals_)
    assert np.all(ps[:, 2] == 0.0) if zero == "group" else ps[1, 2] == 0.0
    if zero == "group":
        np.testing.assert_allclose(ps[:, :2], np.atleast_2d(removed.group_marginals_))
    else:
        np.testing.assert_allclose(ps, removed.group_marginals_)
    np.testing.assert_allclose(weighted.coef_, removed.coef_, rtol=1e-6, atol=1e-7)


def test_private_fit_keeps_the_cells_of_zero_weight_rows():
    # DPFERMIClassifier's group counts are its released histogram, which
    # counts records whatever their public weight: a group of weight 0 keeps
    # its noisy marginal, the same one as with unit weights.
    X, y, s = _data([150, 150, 100], seed=7)
    fits = []
    for w in (np.where(s == 2, 0.0, 1.0), np.ones(s.size)):
        est = DPFERMIClassifier(
            epsilon=1.0, classes=[0, 1], groups=[0, 1, 2], min_group_size=0,
            random_state=0, max_iter=2,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fits.append(est.fit(X, y, sample_weight=w, sensitive_features=s))
    assert fits[0].group_marginals_[2] > 0.1
    np.testing.assert_array_equal(
        fits[0].group_marginals_, fits[1].group_marginals_
    )


def test_penalty_cells_leaves_out_cells_without_rows():
    counts = np.array([[50.0, 0.0, 9.0], [0.0, 40.0, 3.0]])
    assert penalty_cells(counts, 0, present=counts > 0).tolist() == [
        [True, False, True],
        [False, True, True],
    ]
    # A block left with one present group compares nothing.
    counts = np.array([[50.0, 0.0, 0.0], [1.0, 40.0, 3.0]])
    assert penalty_cells(counts, 0, present=counts > 0).tolist() == [
        [False, False, False],
        [True, True, True],
    ]


@pytest.mark.parametrize(
    "constraint, empty",
    [
        ("demographic_parity", "declared"),  # a declared group without rows
        ("equalized_odds", "declared"),
        ("demographic_parity", "weight"),  # every row of group 2 of weight 0
        ("equalized_odds", "cell"),  # no label-1 row in group 2
    ],
)
def test_dp_fermi_at_epsilon_inf_leaves_out_empty_cells_as_fermi_does(
    constraint, empty
):
    # At epsilon=inf nothing is released: the counts are exact, so a cell
    # without a row (of positive weight) is absent from the penalty as in
    # FERMIClassifier, not floored at min_group_frequency, and the two
    # solve the same objective.
    X, y, s = _data([150, 150, 100], seed=7)
    w = None
    if empty == "weight":
        w = np.where(s == 2, 0.0, 1.0)
    elif empty == "cell":
        keep = ~((s == 2) & (y == 1))
        X, y, s = X[keep], y[keep], s[keep]
    groups = [0, 1, 2, 3] if empty == "declared" else [0, 1, 2]
    params = dict(
        constraint=constraint, fairness_weight=8.0, min_group_size=0,
        alpha=1e-3, random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fermi = FERMIClassifier(tol=1e-9, **params).fit(
            X, y, sample_weight=w, sensitive_features=s
        )
        dp = DPFERMIClassifier(
            epsilon=np.inf, classes=[0, 1], groups=groups, **params
        ).fit(X, y, sample_weight=w, sensitive_features=s)
    ps = np.atleast_2d(dp.group_marginals_)
    if empty == "declared":
        assert np.all(ps[:, 3] == 0.0)
        ps = ps[:, :3]
    np.testing.assert_allclose(ps, np.atleast_2d(fermi.group_marginals_))
    if empty == "cell":
        assert ps[1, 2] == 0.0
    np.testing.assert_allclose(dp.coef_, fermi.coef_, rtol=1e-6, atol=1e-6)


def test_the_min_group_size_warning_at_epsilon_inf_reads_exact_counts():
    # epsilon=inf adds no noise to the group counts (marginal noise 0): the
    # warning says they are the training counts, not released noisy ones.
    X, y, s = _data([200, 200, 5])
    messages = {}
    for epsilon in (np.inf, 1.0):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            DPFERMIClassifier(
                epsilon=epsilon, classes=[0, 1], groups=[0, 1, 2],
                random_state=0, max_iter=1,
            ).fit(X, y, sensitive_features=s)
        messages[epsilon] = _small_warnings(caught)
    (exact,) = messages[np.inf]
    assert exact.startswith("group(s) 2 have fewer than min_group_size=30")
    assert "(training counts)" in exact and "noisy" not in exact
    assert all("released noisy group counts" in m for m in messages[1.0])
