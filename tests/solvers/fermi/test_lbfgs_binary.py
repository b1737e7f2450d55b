"""The binary full-batch objective's softmax terms (_lbfgs.binary_softmax_terms)."""

import numpy as np
import pytest

from sklearn_dpfair._solvers.fermi._lbfgs import (
    binary_softmax_terms,
    exact_dual_objective,
    refine_full_batch,
)
from sklearn_dpfair._solvers.fermi._sgda import softmax_probabilities, softmax_terms
from sklearn_dpfair.fairness._ermi import ERMIRegularizer

_EDGES = [0.0, -0.0, 1e-300, -1e-300, 5e-324, 36.0, -36.0, 745.0, -745.0, 800.0,
          -800.0, 1e308, -1e308, np.inf, -np.inf, np.nan]


def test_terms_are_those_of_the_two_logits_bit_for_bit():
    # The logits [-z/2, z/2] of the generic softmax: the larger is shifted
    # to 0 and the other to -|z| exactly, so every term (and the zeros of a
    # row whose z is not finite) is the same float.
    rng = np.random.default_rng(0)
    z = np.concatenate([rng.normal(0.0, 8.0, 5000), _EDGES])
    y = rng.integers(0, 2, z.size).astype(np.int8)
    expected = softmax_terms(np.outer(z, [-0.5, 0.5]), y)
    for got, want in zip(binary_softmax_terms(z, y), expected):
        np.testing.assert_array_equal(got, want)
    proba, grad, loss = binary_softmax_terms(z, None)
    np.testing.assert_array_equal(
        proba, softmax_probabilities(np.outer(z, [-0.5, 0.5]))
    )
    assert grad is None and loss is None


@pytest.mark.parametrize("weighted", [False, True])
def test_binary_refine_matches_the_two_logit_objective(weighted):
    # The single-logit objective of refine_full_batch and the two-logit one
    # of exact_dual_objective describe the same f: at the returned model
    # their values agree (up to the order of the sums).
    rng = np.random.default_rng(1)
    n, d = 2000, 4
    X = rng.standard_normal((n, d))
    y = (X[:, 0] + rng.standard_normal(n) > 0).astype(np.int8)
    codes = rng.integers(0, 2, n)
    reg = ERMIRegularizer(np.full((1, 2), 0.5), np.ones(1), 2)
    kw = {
        "regularizer": reg,
        "cells": reg.row_cells(np.zeros(n, dtype=int), codes),
        "fairness_weight": 8.0,
        "alpha": 0.0,
        "intercept_scaling": 1.0,
        "sample_weight": rng.random(n) * 2 if weighted else None,
    }
    fit = refine_full_batch(
        X, y, coef=np.zeros((d, 2)), w0=np.zeros(2), tol=1e-6, max_iter=500, **kw
    )
    assert fit.converged
    value, _ = exact_dual_objective(
        np.concatenate([fit.coef.ravel(), fit.w0]), X, y, **kw
    )
    assert fit.objective == pytest.approx(value, rel=1e-12)
