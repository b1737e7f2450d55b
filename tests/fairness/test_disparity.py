# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Disparity of hard predictions: vectorized tables and left-out cells."""

import numpy as np
import pytest

from sklearn_dpfair.fairness import make_constraint
from sklearn_dpfair.fairness._disparity import (
    disparities,
    disparity_from_counts,
    disparity_margin,
    hard_disparity,
    measured_cells,
    prediction_counts,
)

CONSTRAINTS = ["demographic_parity", "equalized_odds", "equal_opportunity"]


def _constraint(name):
    return make_constraint(
        name, class_index=1 if name == "equal_opportunity" else None
    )


@pytest.mark.parametrize("name", CONSTRAINTS)
def test_stacked_tables_give_each_table_its_disparity(name):
    rng = np.random.default_rng(0)
    tables = rng.integers(0, 40, size=(25, 3, 4, 3)).astype(float)
    tables[3, :, 2] = 0.0  # an empty group
    tables[4] = 0.0  # an empty table
    con = _constraint(name)
    stacked = disparities(tables, con)
    assert stacked.shape == (25,)
    one_by_one = [disparity_from_counts(t, con) for t in tables]
    np.testing.assert_array_equal(stacked, one_by_one)
    assert stacked[4] == 0.0


@pytest.mark.parametrize("name", CONSTRAINTS)
def test_a_left_out_group_is_as_if_absent(name):
    rng = np.random.default_rng(1)
    n = 600
    y, pred = rng.integers(0, 2, n), rng.integers(0, 2, n)
    codes = rng.integers(0, 3, n)
    con = _constraint(name)
    counts = prediction_counts(pred, y, codes, 2, 3)
    n_blocks = con.n_blocks(2)
    measured = np.ones((n_blocks, 3), dtype=bool)
    measured[:, 2] = False
    keep = codes < 2
    without = hard_disparity(pred[keep], y[keep], codes[keep], con, 2, 2)
    assert disparity_from_counts(counts, con, measured) == pytest.approx(without)


def test_measured_cells_and_the_margin_of_the_smallest_measured_cell():
    counts = np.zeros((2, 3, 2))
    counts[:, 0] = [[250, 250], [250, 250]]  # group 0: 1000 rows
    counts[:, 1] = [[100, 100], [100, 100]]  # group 1: 400 rows
    counts[:, 2] = [[1, 1], [1, 2]]  # group 2: 5 rows
    dp = make_constraint("demographic_parity")
    cells = counts.sum(axis=(0, 2))[None, :]
    measured = measured_cells(cells, 30)
    assert measured.tolist() == [[True, True, False]]
    assert disparity_margin(counts, dp, 10.0) == pytest.approx(2 * 10.0 / 5)
    assert disparity_margin(counts, dp, 10.0, measured) == pytest.approx(
        2 * 10.0 / 400
    )
    # Nothing measured: no rate to compare, so no noise to allow for.
    none = np.zeros_like(measured)
    assert disparity_from_counts(counts, dp, none) == 0.0
    assert disparity_margin(counts, dp, 10.0, none) == 0.0


def test_a_block_with_one_measured_group_does_not_widen_the_margin():
    # Equalized odds with positives rare in group 1: the label-1 block keeps
    # group 0 alone and compares nothing (disparity exactly 0); its 40 rows
    # made the margin 2 x 10 / 40 = 0.5, where the label-0 block's 0.02.
    counts = np.zeros((2, 2, 2))
    counts[0] = [[500, 500], [550, 450]]  # label 0: 1000 rows per group
    counts[1] = [[20, 20], [1, 1]]  # label 1: 40 and 2 rows
    eo = make_constraint("equalized_odds")
    measured = measured_cells(counts.sum(axis=2), 30)
    assert measured.tolist() == [[True, True], [True, False]]
    assert disparity_margin(counts, eo, 10.0, measured) == pytest.approx(0.02)
    assert disparity_margin(counts, eo, 10.0) == pytest.approx(2 * 10.0 / 2)


def test_min_group_size_zero_measures_every_cell_even_a_negative_noisy_count():
    # "0 keeps every group": a released noisy count below 0 (a group of 5
    # rows under noise of sd ~20) was left out of the bound and the penalty.
    counts = np.array([[500.0, -3.0, 0.0], [20.0, 4.0, -0.5]])
    assert measured_cells(counts, 0).all()
    assert measured_cells(counts, 5).tolist() == [
        [True, False, False], [True, False, False]
    ]
