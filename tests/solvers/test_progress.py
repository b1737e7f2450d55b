# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
import io

import pytest

from sklearn_dpfair._solvers._progress import Progress


def _labels(progress, n_steps):
    stream = io.StringIO()
    progress.stream = stream
    for step in range(1, n_steps + 1):
        progress(step, 1.0)
    return [line.split(":")[0].split()[-1] for line in stream.getvalue().splitlines()]


@pytest.mark.parametrize(
    "n_steps, n_lines", [(21, 20), (24, 20), (20, 20), (7, 3), (1000, 10), (5, 1)]
)
def test_one_line_per_epoch_whatever_the_steps_per_epoch(n_steps, n_lines):
    base = Progress("M", "epoch", clock=lambda: 0.0)
    labels = _labels(base.per(n_steps, n_lines), n_steps)
    assert labels == [str(k) for k in range(1, n_lines + 1)]


def test_lines_labelled_by_the_steps_visited():
    progress = Progress("M", "row", clock=lambda: 0.0).per(2000, 10)
    progress.label_steps = True
    assert _labels(progress, 2000) == [str(200 * k) for k in range(1, 11)]
    assert [s for s in range(1, 2001) if progress.reports(s)][:2] == [200, 400]
