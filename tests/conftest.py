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


@pytest.fixture(scope="module")
def dask_client():
    """A dask.distributed Client on a LocalCluster of two worker processes.

    One per test module (the module's fits share its workers); skipped
    where dask.distributed is not installed.
    """
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
    )
    with distributed.Client(cluster) as client:
        yield client
    cluster.close()
