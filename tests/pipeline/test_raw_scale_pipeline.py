# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""A whole private pipeline on a raw table, between neighbouring datasets.

The table holds what real ones do: a year-like column at 1e5 with a spread
of 1e-3, a price-like one at 500 with a spread of 1e4 and missing values, a
string column with missing values. ``D`` and ``D`` plus one record (an
ordinary raw row, a huge adversarial one with a one-of-a-kind category, an
all-missing one), a fixed seed in every world:

* every world fits (each step's release check and the pipeline's passed),
  with the same warnings;
* the first release (the imputer's clipped sums) moves by at most its
  sensitivity;
* the guarantee (``dp_event_``, ``epsilon_``, ``delta_``, the additional
  delta of the category discovery, each step's budget) is the same in
  ``D + z0`` and ``D + z1``, and the plan made from the public shape is the
  fitted event in every world;
* the model and its predictions on finite rows, huge ones included, are
  finite.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import make_pipeline

from sklearn_dpfair.linear_model import DPFERMIClassifier, DPLogisticRegression
from sklearn_dpfair.pipeline import make_private_pipeline
from sklearn_dpfair.preprocessing import (
    DPOneHotEncoder,
    DPSimpleImputer,
    DPStandardScaler,
)
from sklearn_dpfair.privacy._mechanism import observe_privatize

N = 120
COLUMNS = ["year", "price", "city"]
NUMERIC_BOUNDS = [(1e5 - 1e-2, 1e5 + 1e-2), (-5e4, 5e4)]
RECORDS = {
    "raw": {"year": 1e5 + 2e-3, "price": -1.95e4, "city": "Oslo"},
    "huge": {"year": 1e300, "price": -1e300, "city": "x" * 200},
    "missing": {"year": np.nan, "price": np.nan, "city": None},
}
FINALS = {
    "logistic": (lambda: DPLogisticRegression(classes=[0, 1], max_iter=3), False),
    "fermi": (
        lambda: DPFERMIClassifier(classes=[0, 1], groups=[0, 1], max_iter=2),
        True,
    ),
}


def _table(seed=0):
    rng = np.random.default_rng(seed)
    year = 1e5 + 1e-3 * rng.standard_normal(N)
    price = 500.0 + 1e4 * rng.standard_normal(N)
    price[rng.random(N) < 0.2] = np.nan
    city = rng.choice(np.array(["Oslo", "Lima", "Quito", None], dtype=object), N)
    X = pd.DataFrame({"year": year, "price": price, "city": city})
    y = (year > 1e5).astype(int)
    groups = np.arange(N) % 2
    return X, y, groups


def _pipeline(final):
    return make_private_pipeline(
        ColumnTransformer(
            [
                (
                    "num",
                    make_pipeline(
                        DPSimpleImputer(bounds=NUMERIC_BOUNDS),
                        DPStandardScaler(bounds=NUMERIC_BOUNDS),
                    ),
                    ["year", "price"],
                ),
                ("cat", DPOneHotEncoder(), ["city"]),
            ]
        ),
        FINALS[final][0](),
        epsilon=2.0,
        random_state=0,
    )


class _FirstSum:
    """The first sum a Gaussian mechanism privatizes, before its noise."""

    def __init__(self):
        self.first = None

    def before_noise(self, mechanism, clipped_sum):
        if self.first is None:
            self.first = (float(mechanism.clip_norm), np.array(clipped_sum, float))
        return clipped_sum

    def after_noise(self, mechanism, noisy_sum):
        pass


def _fit(final, X, y, groups):
    pipe = _pipeline(final)
    params = {"sensitive_features": groups} if FINALS[final][1] else {}
    spy = _FirstSum()
    with warnings.catch_warnings(record=True) as caught, observe_privatize(spy):
        warnings.simplefilter("always")
        pipe.fit(X, y, **params)
    seen = sorted({(w.category.__name__, str(w.message)) for w in caught})
    return pipe, spy.first, seen


def _worlds(record):
    X, y, groups = _table()
    z = pd.DataFrame([record], columns=COLUMNS)
    return {
        "D": (X, y, groups),
        "D+z0": (
            pd.concat([X, X.iloc[:1]], ignore_index=True),
            np.append(y, y[0]),
            np.append(groups, groups[0]),
        ),
        "D+z1": (
            pd.concat([X, z], ignore_index=True),
            np.append(y, 1),
            np.append(groups, 1),
        ),
    }


def _guarantee(pipe):
    budgets = {
        path: (b["share"], b["epsilon"], b["delta"], repr(b["plan"].dp_event))
        for path, b in pipe.step_budgets_.items()
    }
    return (
        repr(pipe.dp_event_),
        pipe.epsilon_,
        pipe.delta_,
        pipe.additional_delta_,
        pipe.adjacency_,
        budgets,
    )


PROBE = pd.DataFrame(
    {
        "year": [1e5, 1e5 - 1.0, np.finfo(float).max, np.nan, -1e300],
        "price": [500.0, 1e6, -np.finfo(float).max, np.nan, 1e300],
        "city": ["Oslo", "Lima", "unseen", None, "x" * 200],
    }
)


@pytest.mark.parametrize("final", list(FINALS))
@pytest.mark.parametrize("record", list(RECORDS))
def test_raw_table_pipeline_neighbours(final, record):
    worlds = _worlds(RECORDS[record])
    fits = {tag: _fit(final, *data) for tag, data in worlds.items()}
    for a, b in (("D", "D+z1"), ("D+z0", "D+z1")):
        assert fits[a][2] == fits[b][2], (a, b)
    # The first release: one step (D, D + z1) or two (remove z0, add z1).
    for a, b, steps in (("D", "D+z1", 1), ("D+z0", "D+z1", 2)):
        (bound, va), (_, vb) = fits[a][1], fits[b][1]
        assert va.shape == vb.shape
        assert np.linalg.norm(va - vb) <= steps * bound * (1 + 1e-9)
    assert _guarantee(fits["D+z0"][0]) == _guarantee(fits["D+z1"][0])
    for tag, (X, _, _) in worlds.items():
        pipe = fits[tag][0]
        assert pipe.epsilon_ <= 2.0
        plan = _pipeline(final).privacy_plan(*X.shape, feature_names=COLUMNS)
        assert plan.dp_event == pipe.dp_event_, tag
        final_step = pipe.pipeline_.steps[-1][1]
        assert np.all(np.isfinite(final_step.coef_))
        assert np.all(np.isfinite(final_step.intercept_))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # unseen categories at transform
            proba = pipe.predict_proba(PROBE)
        assert np.all(np.isfinite(proba))
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)


def test_the_record_is_in_the_first_release():
    # Not vacuous: the huge record moves the imputer's clipped sums.
    worlds = _worlds(RECORDS["huge"])
    firsts = [_fit("logistic", *worlds[tag])[1] for tag in ("D", "D+z1")]
    assert np.linalg.norm(firsts[0][1] - firsts[1][1]) > 0
