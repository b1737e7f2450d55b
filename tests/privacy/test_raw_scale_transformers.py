# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Neighbouring raw-scale datasets for every DP transformer.

Real tables come in their units: a year-like column at 1e5 with a spread of
1e-3, a price-like one at 500 with a spread of 1e4, and missing values. For
every transformer of :mod:`sklearn_dpfair.preprocessing`, fitted on such
columns, ``D`` and ``D`` plus one record (an ordinary raw row, a huge
adversarial one, a missing one, one at the edge of the float range), with
a fixed seed in every world:

* **same ending**: every world fits (the fit's own check that its releases
  are those of ``dp_event_`` passed), or every world raises the same error;
  the warnings are the same;
* **within the sensitivity**: the releases computed from the data alone
  (the private quantiles' scores, drawn before any noisy output is read,
  and the first Gaussian sum) move by at most their mechanism's
  sensitivity (``ExponentialMechanism.sensitivity`` on each score,
  ``GaussianMechanism.clip_norm`` in l2), twice that between ``D + z0`` and
  ``D + z1`` (remove one, add the other);
* **same record** in ``D + z0`` and ``D + z1``, and the plan made from
  ``(n_samples, n_features)`` alone is the fitted ``dp_event_``;
* **finite release**: the released statistics are finite, and transforming
  finite rows, huge ones included, gives finite values within the declared
  ``output_bounds_`` (missing values stay missing where scikit-learn keeps
  them).
"""

import contextlib
import warnings
from unittest import mock

import numpy as np
import pytest

from sklearn_dpfair.preprocessing import (
    DPKBinsDiscretizer,
    DPOneHotEncoder,
    DPQuantileTransformer,
    DPSimpleImputer,
    DPSplineTransformer,
    DPStandardScaler,
)
from sklearn_dpfair.preprocessing._categories import canonical_order, key_of
from sklearn_dpfair.privacy._exponential import ExponentialMechanism
from sklearn_dpfair.privacy._mechanism import observe_privatize

MAX = np.finfo(np.float64).max
N = 80
SCALES = np.array([1e-3, 1e4, 1.0])
OFFSETS = np.array([1e5, 500.0, 0.0])
# Public ranges of the three raw columns (a year to 1e-2, a price, a score).
BOUNDS = [(1e5 - 1e-2, 1e5 + 1e-2), (-5e4, 5e4), (-5.0, 5.0)]

# Records added to D: an ordinary raw row, a huge one, one at the edge of
# the float range, a missing one, a mix.
RECORDS = {
    "raw": [1e5 + 2e-3, 500.0 - 2e4, 1.0],
    "huge": [1e300, -1e300, 1e300],
    "float-max": [MAX, -MAX, 1e308],
    "missing": [np.nan, np.nan, np.nan],
    "mixed": [np.nan, 1e300, -1e-300],
}


def _raw(seed=0, missing=True):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, 3)) * SCALES + OFFSETS
    if missing:
        X[rng.random(N) < 0.25, 2] = np.nan
    return X


def _codes(X):
    # Categorical codes in raw units: the year column's integer part (1e5 and
    # its neighbours, with a one-of-a-kind 1e300 for the huge record), the
    # price band by 1e4, the score's sign; NaN stays NaN (its own category).
    with np.errstate(invalid="ignore", over="ignore"):
        return np.column_stack(
            [
                np.round(X[:, 0] * 1e3) / 1e3,
                np.round(X[:, 1] / 1e4),
                np.sign(X[:, 2]),
            ]
        )


#: name -> (factory, accepts missing values, one-to-one, data transform)
TRANSFORMERS = {
    "scaler": (lambda: DPStandardScaler(bounds=BOUNDS), True, True, None),
    "scaler-auto": (lambda: DPStandardScaler(bounds="auto"), True, True, None),
    "imputer-mean": (lambda: DPSimpleImputer(bounds=BOUNDS), True, True, None),
    "imputer-median": (
        lambda: DPSimpleImputer(bounds=BOUNDS, strategy="median"),
        True,
        True,
        None,
    ),
    "quantile": (
        lambda: DPQuantileTransformer(bounds=BOUNDS, n_quantiles=5),
        True,
        True,
        None,
    ),
    "kbins": (lambda: DPKBinsDiscretizer(bounds=BOUNDS, n_bins=3), False, False, None),
    "spline": (
        lambda: DPSplineTransformer(bounds=BOUNDS, n_knots=4),
        False,
        False,
        None,
    ),
    "onehot-found": (lambda: DPOneHotEncoder(), True, False, _codes),
}


def _make(name):
    return TRANSFORMERS[name][0]().set_params(epsilon=1.0, random_state=0)


class _Spy:
    """What every release of a fit sees before its noise, in order."""

    def __init__(self):
        self.events = []

    def before_noise(self, mechanism, clipped_sum):
        self.events.append(
            ("gaussian", float(mechanism.clip_norm), np.array(clipped_sum, float))
        )
        return clipped_sum

    def after_noise(self, mechanism, noisy_sum):
        pass

    @contextlib.contextmanager
    def watching(self):
        original = ExponentialMechanism.select

        def select(mechanism, scores, rng):
            self.events.append(
                ("selection", float(mechanism.sensitivity), np.array(scores, float))
            )
            return original(mechanism, scores, rng)

        with (
            observe_privatize(self),
            mock.patch.object(ExponentialMechanism, "select", select),
        ):
            yield self

    def from_data(self):
        """The releases computed from the data alone.

        Every selection before the first Gaussian sum (the private quantiles
        of a column, scored on a public grid) and that first sum; what comes
        after reads a noisy output, which differs between worlds whatever
        the sensitivity.
        """
        out = []
        for event in self.events:
            out.append(event)
            if event[0] == "gaussian":
                break
        return out


def _fit(name, X):
    est = _make(name)
    spy = _Spy()
    with warnings.catch_warnings(record=True) as caught, spy.watching():
        warnings.simplefilter("always")
        try:
            est.fit(X)
        except Exception as exc:  # noqa: BLE001 - compared between worlds
            error, est = (type(exc).__name__, str(exc)), None
        else:
            error = None
    seen = sorted({(w.category.__name__, str(w.message)) for w in caught})
    return error, est, spy, seen


def _worlds(name, record):
    accepts_missing, transform = TRANSFORMERS[name][1], TRANSFORMERS[name][3]
    X = _raw(missing=accepts_missing)
    worlds = {
        "D": X,
        "D+z0": np.vstack([X, X[:1]]),
        "D+z1": np.vstack([X, np.asarray(record, float)[None, :]]),
    }
    if transform is not None:
        worlds = {tag: transform(W) for tag, W in worlds.items()}
    return worlds


def _count_keys(X):
    """(column, category) of each count partition selection releases, in order."""
    keys = []
    for j in range(X.shape[1]):
        column = [key_of(v) for v in X[:, j].astype(object)]
        keys += [(j, k) for k in canonical_order(set(column))]
    return keys


def _aligned(name, a, b, Xa, Xb):
    """Partition selection counts the categories present: a category only one
    world holds has count 0 in the other (the sensitivity covers it)."""
    if name != "onehot-found":
        return a, b
    (kind, bound, va), = a
    (_, _, vb), = b
    ka, kb = _count_keys(Xa), _count_keys(Xb)
    assert len(ka) == len(va) and len(kb) == len(vb)
    union = list(dict.fromkeys(ka + kb))
    da, db = dict(zip(ka, va)), dict(zip(kb, vb))
    return (
        [(kind, bound, np.array([da.get(k, 0.0) for k in union]))],
        [(kind, bound, np.array([db.get(k, 0.0) for k in union]))],
    )


def _moved(a, b):
    """How far each data-driven release moved, and its sensitivity."""
    assert [(e[0], e[1], e[2].shape) for e in a] == [
        (e[0], e[1], e[2].shape) for e in b
    ], "the worlds released differently shaped statistics"
    out = []
    for (kind, bound, va), (_, _, vb) in zip(a, b):
        diff = (va - vb).ravel()
        if kind == "selection":
            out.append((float(np.max(np.abs(diff), initial=0.0)), bound))
        else:
            out.append((float(np.linalg.norm(diff)), bound))
    return out


_RELEASED = (
    "mean_", "var_", "scale_", "statistics_", "quantiles_", "knots_", "bounds_",
    "output_bounds_", "output_norm_bound_",
)


def _released_numbers(est):
    found = {}
    for name in _RELEASED:
        value = getattr(est, name, None)
        if value is not None:
            found[name] = np.asarray(value, dtype=float).ravel()
    if hasattr(est, "bin_edges_"):
        found["bin_edges_"] = np.concatenate(list(est.bin_edges_))
    return found


def _probe(name):
    # Finite rows in raw units, the bounds' edges and huge values included;
    # a missing value where the transformer accepts one.
    rows = [
        OFFSETS,
        OFFSETS + SCALES,
        [1e5 - 1.0, -1e6, 40.0],
        [MAX, -MAX, 1e308],
        [-1e300, 1e300, -1e-300],
    ]
    if TRANSFORMERS[name][1]:
        rows.append([np.nan, 500.0, np.nan])
    X = np.array(rows, dtype=float)
    transform = TRANSFORMERS[name][3]
    return X if transform is None else transform(X)


# A transformer that refuses missing values (as scikit-learn's does) refuses
# a missing record at validation, before reading anything: not paired.
NEIGHBOUR_CASES = [
    pytest.param(name, record, id=f"{name}-{record}")
    for name in TRANSFORMERS
    for record in RECORDS
    if TRANSFORMERS[name][1] or not np.isnan(RECORDS[record]).any()
]


@pytest.mark.parametrize("name, record", NEIGHBOUR_CASES)
def test_raw_scale_neighbours(name, record):
    worlds = _worlds(name, RECORDS[record])
    fits = {tag: _fit(name, W) for tag, W in worlds.items()}
    # Same ending and warnings between neighbours.
    for a, b in (("D", "D+z1"), ("D+z0", "D+z1")):
        assert fits[a][0] == fits[b][0], (a, b, fits[a][0], fits[b][0])
        assert fits[a][3] == fits[b][3], (a, b)
    assert fits["D+z1"][0] is None, fits["D+z1"][0]
    # The data-driven releases move by at most their sensitivity.
    for a, b, steps in (("D", "D+z1", 1), ("D+z0", "D+z1", 2)):
        ra, rb = _aligned(
            name, fits[a][2].from_data(), fits[b][2].from_data(), worlds[a], worlds[b]
        )
        assert ra, f"{name}: no release seen"
        for k, (moved, bound) in enumerate(_moved(ra, rb)):
            assert moved <= steps * bound * (1 + 1e-9), (name, a, b, k, moved, bound)
    # Same record, and the plan from public counts is the fitted event.
    e0, e1 = fits["D+z0"][1], fits["D+z1"][1]
    assert repr(e0.dp_event_) == repr(e1.dp_event_)
    assert (e0.epsilon_, e0.delta_, e0.adjacency_) == (
        e1.epsilon_,
        e1.delta_,
        e1.adjacency_,
    )
    r0, r1 = e0.privacy_record_.to_dict(), e1.privacy_record_.to_dict()
    r0["caveats"], r1["caveats"] = sorted(r0["caveats"]), sorted(r1["caveats"])
    assert r0 == r1
    for tag in worlds:
        est = fits[tag][1]
        plan = _make(name).privacy_plan(*worlds[tag].shape)
        assert plan.dp_event == est.dp_event_, (name, tag)
        plan.check_fitted(est)
        for attr, values in _released_numbers(est).items():
            assert np.all(np.isfinite(values)), (name, tag, attr, values)


@pytest.mark.parametrize("name", list(TRANSFORMERS))
def test_raw_scale_output_is_finite_and_within_its_declared_bounds(name):
    est = _make(name).fit(_worlds(name, RECORDS["huge"])["D+z1"])
    X = _probe(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unknown categories at transform
        out = est.transform(X)
    out = out.toarray() if hasattr(out, "toarray") else np.asarray(out, float)
    missing = np.zeros(out.shape, dtype=bool)
    if TRANSFORMERS[name][2] and not isinstance(est, DPSimpleImputer):
        missing = np.isnan(X)  # kept missing, as scikit-learn does
    assert np.all(np.isfinite(out[~missing])), out
    assert np.all(np.isnan(out[missing]))
    lo, hi = np.asarray(est.output_bounds_, float).T
    # Bounds are released numbers; the transform computes the same
    # expression, so a relative rounding margin covers the difference.
    tol = 1e-9 * np.maximum(1.0, np.maximum(np.abs(lo), np.abs(hi)))
    inside = (out >= lo - tol) & (out <= hi + tol)
    assert np.all(inside | missing), (out, lo, hi)
    norms = np.linalg.norm(np.where(missing, 0.0, out), axis=1)
    assert np.all(norms <= est.output_norm_bound_ * (1 + 1e-9))


@pytest.mark.parametrize("name", list(TRANSFORMERS))
def test_the_checked_releases_read_the_record(name):
    # The sensitivity check is not vacuous: the huge record moves a release
    # it compares (by at most the sensitivity, checked above), for every
    # transformer whose fit reads the data.
    worlds = _worlds(name, RECORDS["huge"])
    fits = {tag: _fit(name, worlds[tag]) for tag in ("D", "D+z1")}
    moved = _moved(
        *_aligned(
            name,
            fits["D"][2].from_data(),
            fits["D+z1"][2].from_data(),
            worlds["D"],
            worlds["D+z1"],
        )
    )
    assert max(m for m, _ in moved) > 0, (name, moved)
