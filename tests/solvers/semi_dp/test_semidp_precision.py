# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The semi-DP private sum of one float32 record is within the clip, exactly.

The sum is captured where the solver noises it (``_privatize_columns``), on
datasets of one private row: it is then that row's clipped term, made of the
float32 values the solver sums. Its float64 norm must be at most ``C``.
"""

import numpy as np
import pytest

from sklearn_dpfair._solvers.semi_dp import _solver
from sklearn_dpfair._solvers.semi_dp._solver import SemiDPData, semidp_gradient_descent
from sklearn_dpfair.privacy import GaussianMechanism


def extreme_rows(rng, n, d, dtype=np.float32):
    """Finite rows that are huge, tiny (subnormal), mixed or ordinary.

    As in ``tests/solvers/test_rows_precision.py``.
    """
    info = np.finfo(dtype)
    top = np.log10(float(info.max)) - 0.5 - np.log10(d)
    bottom = np.log10(float(info.smallest_subnormal)) + 1.0
    kind = rng.integers(0, 4, n)
    low = np.select([kind == 0, kind == 1, kind == 2], [top - 3, bottom, bottom], -1)
    high = np.select([kind == 0, kind == 1, kind == 2], [top, bottom + 8, top], 1)
    exponents = rng.uniform(low[:, None], high[:, None], (n, d))
    X = rng.choice([-1.0, 1.0], (n, d)) * 10.0**exponents
    X[rng.random((n, d)) < 0.2] = 0.0
    return X.astype(dtype)


def extreme_targets(rng, n, dtype=np.float32):
    info = np.finfo(dtype)
    top = np.log10(float(info.max)) - 0.5
    exponents = rng.uniform(np.log10(float(info.smallest_subnormal)) + 1, top, n)
    return (rng.choice([-1.0, 1.0], n) * 10.0**exponents).astype(dtype)


def _norm(v):
    # Scaled, so that neither a huge nor a tiny vector loses its norm.
    m = np.max(np.abs(v))
    return 0.0 if m == 0 else m * np.linalg.norm(v / m)


@pytest.mark.parametrize("s", [0.0, 1.0])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("sampling_probability", [1.0, 0.999999])
def test_one_float32_record_moves_the_private_sum_by_at_most_the_clip(
    s, weighted, sampling_probability, monkeypatch
):
    rng = np.random.default_rng(5)
    n, d, clip = 300, 4, 1.0
    X = extreme_rows(rng, n, d)
    y = extreme_targets(rng, n)
    weights = rng.uniform(0.1, 10.0, n) if weighted else None
    sums = []
    original = _solver._privatize_columns

    def spy(total, mechanisms, rngs, cols):
        sums.append(np.array(total, dtype=np.float64))
        return original(total, mechanisms, rngs, cols)

    monkeypatch.setattr(_solver, "_privatize_columns", spy)
    p = d + (1 if s else 0)
    for i in range(n):
        data = SemiDPData(
            X_private=X[i : i + 1],
            y_private=y[i : i + 1],
            X_public=X[:0],
            y_public=y[:0],
            intercept_scaling=s,
            private_weights=None if weights is None else weights[i : i + 1],
        )
        semidp_gradient_descent(
            data,
            rng.standard_normal((p, 1)).astype(np.float32),
            mechanisms=[GaussianMechanism(clip_norm=clip, noise_multiplier=0.0)],
            alpha=np.array([1.0]),
            learning_rate=np.array([0.0]),
            n_steps=np.array([1]),
            clip_norm=clip,
            public_clipping=False,
            sampling_probability=sampling_probability,
            preconditioner=None,
            rngs=[np.random.default_rng(i)],
            tail_fraction=1.0,
        )
    assert len(sums) == n
    assert max(_norm(total[:, 0]) for total in sums) <= clip
