# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Golden values: DP-SGD coefficients of DPLogisticRegression for fixed seeds.

The values were recorded with the numpy-only solver (commit 0ce87f8), before the
solver core was rewritten against the array API. The rewrite keeps the numpy
path bit-for-bit identical on the reference machine (checked with SHA-256 of
``coef_`` and ``intercept_`` when the values were recorded); the test allows
``rtol=1e-9`` only because another CPU's BLAS kernels may sum in another order.
A change of the random stream (batch or noise order) or of the update moves
the coefficients by O(1), far outside that tolerance.

Every private configuration passes ``noise_multiplier`` explicitly, so the
values pin the solver, not the noise calibration.
"""

import numpy as np
import pytest

from sklearn_dpfair import DPLogisticRegression


def _data(n, d, n_outputs, seed, dtype):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.exponential(1.0, size=(1, d))
    logits = X @ rng.normal(size=(d, n_outputs))
    if n_outputs == 1:
        y = (rng.random(n) < 1 / (1 + np.exp(-logits[:, 0]))).astype(int)
    else:
        y = np.argmax(logits + rng.gumbel(size=logits.shape), axis=1)
    return X.astype(dtype), y


_BINARY, _THREE = [0, 1], [0, 1, 2]
# Private configurations pass noise_multiplier with epsilon=inf: no
# calibration. Every schedule parameter is explicit, so a change of defaults
# does not move the golden values.
_PRIVATE = {"epsilon": np.inf}

# name: (data (n, d, n_outputs, data seed, dtype), estimator params, random_state)
_CONFIGS = {
    "binary_default": (
        (600, 5, 1, 0, "float64"),
        dict(
            classes=_BINARY,
            noise_multiplier=1.1,
            max_iter=30,
            learning_rate=1.0,
            **_PRIVATE,
        ),
        0,
    ),
    "binary_seed7": (
        (600, 5, 1, 1, "float64"),
        dict(
            classes=_BINARY,
            noise_multiplier=2.0,
            max_iter=20,
            learning_rate=2.0,
            **_PRIVATE,
        ),
        7,
    ),
    "multiclass": (
        (900, 4, 3, 2, "float64"),
        dict(
            classes=_THREE,
            max_iter=10,
            batch_size=100,
            noise_multiplier=0.8,
            learning_rate=1.0,
            **_PRIVATE,
        ),
        0,
    ),
    "float32": (
        (600, 5, 1, 3, "float32"),
        dict(
            classes=_BINARY,
            clip_norm=0.5,
            noise_multiplier=1.1,
            max_iter=30,
            learning_rate=1.0,
            **_PRIVATE,
        ),
        0,
    ),
    "no_intercept_l2": (
        (500, 6, 1, 4, "float64"),
        dict(
            classes=_BINARY,
            fit_intercept=False,
            alpha=0.01,
            learning_rate=0.5,
            noise_multiplier=1.5,
            max_iter=30,
            **_PRIVATE,
        ),
        0,
    ),
    "multiclass_float32_nonprivate": (
        (500, 4, 3, 8, "float32"),
        {"classes": _THREE, "epsilon": np.inf, "max_iter": 5, "learning_rate": 1.0},
        0,
    ),
    "nonprivate_full_batch": (
        (400, 3, 3, 5, "float64"),
        {
            "classes": _THREE,
            "epsilon": np.inf,
            "batch_size": "full",
            "max_iter": 20,
            "learning_rate": 1.0,
        },
        0,
    ),
    "noise_multiplier": (
        (500, 3, 1, 6, "float64"),
        {
            "classes": _BINARY,
            "noise_multiplier": 5.0,
            "epsilon": 10.0,
            "max_iter": 5,
            "learning_rate": 1.0,
        },
        0,
    ),
}

# name: (coef_, intercept_) as recorded.
_GOLDEN = {
    "binary_default": (
        [
            [
                -1.8978661057133641,
                0.37586488326617457,
                0.3554838276390525,
                1.5087932969730002,
                0.3473626069512179,
            ]
        ],
        [0.154905840300888],
    ),
    "binary_seed7": (
        [
            [
                -0.12897575720104695,
                0.7252963899862547,
                -1.2127349762846613,
                0.47158521360736244,
                0.4827399971778074,
            ]
        ],
        [0.1826743136324125],
    ),
    "multiclass": (
        [
            [
                -0.577230130199518,
                -0.10615172135681591,
                -0.14276693404814522,
                -2.363690375737605,
            ],
            [
                -0.13243763098998293,
                0.12038945496912509,
                1.6418922988294018,
                0.7366322224396312,
            ],
            [
                0.47932667122430517,
                -0.2794001965696952,
                -1.3975940725688138,
                1.5008162844057757,
            ],
        ],
        [0.309087856033542, -0.28377754351899764, -0.043181152503977395],
    ),
    "float32": (
        [
            [
                0.42911475896835327,
                0.1618739515542984,
                -0.5984957218170166,
                -1.1539520025253296,
                1.318434238433838,
            ]
        ],
        [-0.2172543853521347],
    ),
    "no_intercept_l2": (
        [
            [
                -0.7254973571159777,
                -0.01906529455719634,
                0.27198728563754243,
                -0.033231851647185666,
                0.15737235473913636,
                -1.248989441364171,
            ]
        ],
        [0.0],
    ),
    "multiclass_float32_nonprivate": (
        [
            [
                -0.7333096265792847,
                0.3317631781101227,
                -0.04033344238996506,
                -0.03366349637508392,
            ],
            [
                0.1719367355108261,
                -1.25348961353302,
                0.008715352043509483,
                -0.01015313621610403,
            ],
            [
                0.5613727569580078,
                0.9217267036437988,
                0.031618088483810425,
                0.04381663724780083,
            ],
        ],
        [-0.02594272419810295, 0.121856689453125, -0.09591406583786011],
    ),
    "nonprivate_full_batch": (
        [
            [-0.19201164309800206, -0.8237439722811036, -0.000985511684896568],
            [0.23602146700255355, 0.3230088098638926, 0.003203620188007665],
            [-0.04400982390455155, 0.500735162417211, -0.0022181085031110948],
        ],
        [0.051632013035463144, 0.01300274804873921, -0.06463476108420281],
    ),
    "noise_multiplier": (
        [[-0.1347151759253209, 0.022340623768010836, -1.159759852743911]],
        [0.042935324155682894],
    ),
}


@pytest.mark.parametrize("name", sorted(_CONFIGS))
def test_dp_sgd_coefficients_match_golden_values(name):
    data, params, seed = _CONFIGS[name]
    X, y = _data(*data[:4], np.dtype(data[4]))
    clf = DPLogisticRegression(random_state=seed, **params).fit(X, y)
    coef, intercept = _GOLDEN[name]
    assert clf.coef_.dtype == X.dtype
    np.testing.assert_allclose(clf.coef_, coef, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(clf.intercept_, intercept, rtol=1e-9, atol=1e-12)
