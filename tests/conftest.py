# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
import os

import pytest


def _seeds():
    # As scikit-learn's global_random_seed: one seed by default, all of
    # 0..99 with DPFAIR_FULL=1 (or a given list in DPFAIR_SEEDS="0,1,2").
    if os.environ.get("DPFAIR_SEEDS"):
        return [int(s) for s in os.environ["DPFAIR_SEEDS"].split(",")]
    if os.environ.get("DPFAIR_FULL"):
        return list(range(100))
    return [42]


@pytest.fixture(params=_seeds())
def global_random_seed(request):
    return request.param
