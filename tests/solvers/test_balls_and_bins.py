# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Balls-and-bins batches: each row in exactly one batch per epoch, uniformly."""

import numpy as np
import pytest

from sklearn_dpfair._solvers._balls_and_bins import balls_and_bins_schedule
from sklearn_dpfair._solvers._sampling import BallsAndBinsBatches, balls_and_bins_epoch


def test_every_row_in_exactly_one_batch():
    order, bounds = balls_and_bins_epoch(np.random.default_rng(0), 10_000, 7)
    assert np.array_equal(np.sort(order), np.arange(10_000))
    assert bounds[0] == 0 and bounds[-1] == 10_000 and np.all(np.diff(bounds) >= 0)
    # Increasing row order inside each batch (gathers read forward).
    for j in range(7):
        batch = order[bounds[j] : bounds[j + 1]]
        assert np.all(np.diff(batch) > 0)


def test_placements_are_uniform_and_independent():
    # Row 0's batch over 7,000 epochs: uniform on 7 batches (chi-square with
    # 6 dof, 99.9% quantile 22.5); batch sizes: multinomial, mean n / t.
    rng = np.random.default_rng(1)
    n, t, epochs = 50, 7, 7000
    where = np.empty(epochs, dtype=int)
    sizes = np.empty((epochs, t))
    for e in range(epochs):
        order, bounds = balls_and_bins_epoch(rng, n, t)
        where[e] = np.searchsorted(bounds, np.flatnonzero(order == 0)[0], side="right") - 1
        sizes[e] = np.diff(bounds)
    counts = np.bincount(where, minlength=t)
    chi2 = np.sum((counts - epochs / t) ** 2 / (epochs / t))
    assert chi2 < 22.5
    assert sizes.mean() == pytest.approx(n / t, rel=0.01)
    # Sizes vary (not a fixed-size shuffle): binomial(n, 1/t) variance.
    assert sizes[:, 0].var() == pytest.approx(n * (1 / t) * (1 - 1 / t), rel=0.1)


def test_batches_redraw_every_epoch():
    batches = BallsAndBinsBatches(1000, 4)
    rng = np.random.default_rng(0)
    first = [batches(rng, t).copy() for t in range(4)]
    second = [batches(rng, t).copy() for t in range(4, 8)]
    for epoch in (first, second):
        assert np.array_equal(np.sort(np.concatenate(epoch)), np.arange(1000))
    assert not all(np.array_equal(a, b) for a, b in zip(first, second))


def test_schedule_is_public_and_whole_epochs():
    assert balls_and_bins_schedule(1_000_000, "auto", "auto") == (20, 2)
    assert balls_and_bins_schedule(30_000, "auto", "auto") == (20, 20)
    assert balls_and_bins_schedule(1000, 100, 3) == (10, 3)
    assert balls_and_bins_schedule(1000, "full", 3) == (1, 3)


def test_the_record_names_the_accountant_that_computed_epsilon():
    # dp-accounting has no random-allocation event: pld-accounting's PLD
    # computed the epsilon, and the technical text says so.
    pytest.importorskip("PLD_accounting")
    from sklearn_dpfair import DPLogisticRegression

    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 3))
    y = (X[:, 0] > 0).astype(int)
    clf = DPLogisticRegression(
        classes=[0, 1], batch_sampling="balls_and_bins", max_iter=2, random_state=0
    ).fit(X, y)
    text = clf.privacy_record_.technical_text()
    assert "Accounted with pld-accounting" in text
    assert "dp-accounting (PLD)" not in text
