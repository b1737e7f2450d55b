# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Whether joblib would run parallel tasks in threads of this process."""

import pytest
from joblib import parallel_config

from sklearn_dpfair.utils._parallel import runs_in_threads


@pytest.mark.parametrize(
    "backend, n_jobs, expected",
    [
        (None, 2, False),  # loky: processes
        (None, -1, False),
        ("threading", 2, True),
        ("threading", 1, False),
        ("threading", None, False),
        ("sequential", 2, False),
    ],
)
def test_runs_in_threads(backend, n_jobs, expected):
    if backend is None:
        assert runs_in_threads(n_jobs) is expected
        return
    with parallel_config(backend=backend):
        assert runs_in_threads(n_jobs) is expected


def test_a_configured_n_jobs_counts():
    with parallel_config(backend="threading", n_jobs=2):
        assert runs_in_threads(None) is True
