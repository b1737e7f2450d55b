# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""``verbose=``: progress lines from released quantities only, off by default."""

import re

import numpy as np
import pytest

from sklearn_dpfair import HeavyTailDPRegressor
from sklearn_dpfair._solvers.heavy_tail._dpsgd import dpsgd_plan

_LINE = re.compile(
    r"^\[HeavyTailDPRegressor\] (epoch|query) (\d+): released-gradient norm "
    r"[0-9.e+-]+, [0-9.]+ s$"
)


def _data(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_t(3, size=(n, 4))
    return X, X.sum(axis=1) + rng.standard_t(2, size=n)


def _lines(capsys):
    out = capsys.readouterr().out.strip()
    return out.splitlines() if out else []


def test_silent_by_default(capsys):
    HeavyTailDPRegressor(random_state=0).fit(*_data())
    HeavyTailDPRegressor(solver="sgd", random_state=0).fit(*_data())
    assert capsys.readouterr().out == ""


def test_dpsgd_prints_one_line_per_expected_epoch(capsys):
    X, y = _data()
    HeavyTailDPRegressor(random_state=0, verbose=1).fit(X, y)
    lines = _lines(capsys)
    plan = dpsgd_plan(X.shape[0])
    epochs = round(plan.sampling_probability * plan.n_steps)
    assert len(lines) == epochs == 20
    assert [int(_LINE.match(line).group(2)) for line in lines] == list(
        range(1, epochs + 1)
    )


def test_one_pass_prints_one_line_per_query(capsys):
    X, y = _data()
    reg = HeavyTailDPRegressor(solver="acsa", random_state=0, verbose=1).fit(X, y)
    lines = _lines(capsys)
    assert len(lines) == reg.n_iter_
    assert all(_LINE.match(line).group(1) == "query" for line in lines)


def test_verbose_changes_nothing_released(capsys):
    X, y = _data()
    for solver in ("dp-sgd", "sgd"):
        quiet = HeavyTailDPRegressor(solver=solver, random_state=0).fit(X, y)
        loud = HeavyTailDPRegressor(solver=solver, random_state=0, verbose=2).fit(X, y)
        np.testing.assert_array_equal(quiet.coef_, loud.coef_)
        assert quiet.dp_event_ == loud.dp_event_


def test_non_private_limit_prints_no_steps(capsys):
    # No noisy steps run: the full-batch solver has nothing released to show.
    HeavyTailDPRegressor(epsilon=np.inf, verbose=1).fit(*_data())
    assert _lines(capsys) == []


@pytest.mark.parametrize("verbose", [-1, 1.5, "yes"])
def test_verbose_is_validated(verbose):
    with pytest.raises(ValueError, match="verbose"):
        HeavyTailDPRegressor(verbose=verbose).fit(*_data(n=300))
