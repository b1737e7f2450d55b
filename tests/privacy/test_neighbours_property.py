# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Neighbouring datasets, built to be adversarial, for every private estimator.

A differential privacy guarantee is a statement about two datasets that
differ in one record, whatever that record holds. For every private
estimator and solver this module builds such pairs out of the values where
floating-point code breaks (finite magnitudes next to overflow, values whose
square overflows or underflows, subnormals), degenerate data (constant
columns, all rows equal, duplicated rows, one class or one group in the
private data while the label and group sets are declared, a record that is
the only member of its group, huge regression targets), and checks what the
guarantee needs:

* **same ending**: both worlds fit, or both raise the same exception (type
  and message), and both emit the same warnings (numpy's overflow
  ``RuntimeWarning`` included: it is as visible as any other); an outcome
  that depends on the record is a distinguisher of probability 1
  (epsilon = inf);
* **finite release**: every released number (coefficients, intercepts,
  every numeric fitted attribute) is finite; a NaN model in one world only
  has disjoint support from the other world's model. On a fixed finite
  probe set that includes huge rows, probabilities are finite and labels
  valid; scores and regression predictions are never NaN and are finite
  wherever their exact value is within the float range (beyond it, +-inf is
  the correctly rounded value);
* **first release within its sensitivity**: a spy records what every
  release sees before its noise (the sum a ``GaussianMechanism`` privatizes,
  the scores an ``ExponentialMechanism`` selects from). Both worlds share
  the seed, so their first releases are computed from the same state, and
  the guarantee needs their pre-noise values to differ by at most the
  mechanism's own sensitivity (its ``clip_norm``: the L2 distance of the
  sums; its ``sensitivity``: the largest change of a score), twice that for
  ``D + z0`` and ``D + z1`` under add/remove (two steps apart). A first
  release drawn from a Poisson batch is compared between worlds of the same
  ``n`` only (the batch rate reads ``n``, so ``D`` and ``D + z1`` draw
  different batches);
* **same privacy record**: ``epsilon_``, ``delta_``, ``dp_event_``,
  ``noise_multiplier_``, ``adjacency_`` and every field of
  ``privacy_record_`` (caveats in any order) are identical in both worlds,
  as the guarantee is for a mechanism fixed before the private data are
  read. The exceptions are the quantities that are themselves private
  estimates, released with their own budget (the clip of
  ``HeavyTailDPRegressor(clip_norm="auto")``) or computed from one
  (the dual clip of ``DPFERMIClassifier``, from its privatized group
  marginals): they may differ, and are checked for finiteness.

Every estimator declares everything public (``classes``, ``groups``, the
public rows of the semi-DP fit, the silos), so no ``PrivacyLeakWarning`` may
fire, and uses a fixed ``random_state`` so that both worlds draw the same
batches and noise (which makes the comparison exact, not statistical).

Neighbours match the estimator's adjacency: with ``replace_one`` the worlds
are ``D + z0`` and ``D + z1``; with ``add_remove`` they are ``D`` and
``D + z1``, and the record is also compared between ``D + z0`` and
``D + z1`` (``n`` is public, so the record may depend on ``n`` but on
nothing else). :class:`FERMIClassifier` is not private: only its release is
checked for finiteness.

A record is everything a row brings, its weight included, so the weighted
scenarios pass ``sample_weight`` and the differing record brings its own
weight (``1e6`` added, ``50`` removed, ``1`` changed to ``1e6``): nothing the
analysis treats as fixed may be read from the weights of the data being
fitted (a normalizer such as ``mean(w)`` moved a DP-SGD sum by 499 clip
norms when a record of weight ``1e6`` was added).

Each fit uses small ``n`` and few steps. CI runs a fixed list of named
scenarios for every configuration plus a few random combinations per
configuration; ``DPFAIR_FULL=1`` runs many more random combinations.
"""

import contextlib
import functools
import os
import warnings
from dataclasses import dataclass
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from sklearn.base import BaseEstimator, RegressorMixin, is_classifier

from sklearn_dpfair import (
    DPFERMIClassifier,
    DPLogisticRegression,
    DPMLPClassifier,
    HeavyTailDPRegressor,
    SemiDPLinearRegression,
    SemiLocalDPLinearRegression,
)
from sklearn_dpfair._solvers import _sampling
from sklearn_dpfair.exceptions import PrivacyLeakWarning
from sklearn_dpfair.linear_model import FERMIClassifier
from sklearn_dpfair.privacy import GaussianMechanism, PrivacyRecord
from sklearn_dpfair.privacy._accounting import gaussian_event
from sklearn_dpfair.privacy._exponential import ExponentialMechanism
from sklearn_dpfair.privacy._mechanism import observe_privatize

FULL = os.environ.get("DPFAIR_FULL") == "1"
# Random combinations per configuration, on top of the named scenarios. CI
# does not shrink a failing example (shrinking refits many times; the
# unshrunk scenario is printed and readable); the full form does.
N_EXAMPLES = 60 if FULL else 5
PHASES = tuple(Phase) if FULL else (Phase.explicit, Phase.generate)

MAX = np.finfo(np.float64).max  # 1.7976931348623157e308
# Values of one coordinate of an adversarial record. 1.4e154 is just above
# sqrt(MAX): its square overflows; 1e-300 squares to 0 (underflow); 5e-324
# is the smallest subnormal.
EXTREMES = (MAX, -MAX, 1e308, -1.7e308, 1e200, -1e200, 1.4e154, 1e-300, 5e-324)
ORDINARY = (0.0, 1.0, -2.5)
# Regression targets of an adversarial record.
HUGE_TARGETS = (MAX, -MAX, 1e308, -1e200, 1.4e154)

# Finite rows every fitted model predicts on (d = 3; sliced): see
# _prediction_findings for what must be finite.
PROBE = np.array(
    [
        [0.0, 0.0, 0.0],
        [1.0, -1.0, 0.5],
        [MAX, MAX, MAX],
        [-MAX, 1e308, -1.7e308],
        [1e200, -1e200, 1.4e154],
        [1e-300, 5e-324, -1e-300],
    ]
)


# -- the configurations under test ------------------------------------------


@dataclass(frozen=True)
class Config:
    """One estimator configuration and how to build its neighbouring pairs.

    ``task`` is "binary", "multiclass" or "regression"; ``per_record`` names
    the per-record fit argument (``public_mask``, ``sensitive_features`` or
    ``silos``); ``private_estimates`` names the privacy quantities that are
    themselves private estimates, released with their own budget (or
    post-processing of one), so allowed to differ between the worlds:
    ``"clip_norm"`` (the record's clip) or a fitted attribute name.
    """

    name: str
    make: object
    task: str
    adjacency: str | None  # None: not private
    per_record: str | None = None
    private_estimates: tuple = ()
    # How many privatize calls make up the first release: DP-SGD privatizes
    # the coefficient and the intercept blocks of one clipped sum (one clip
    # for both) in two calls (see first_release).
    first_release: int = 1


def _lr(**kw):
    return lambda: DPLogisticRegression(random_state=0, **kw)


# A large budget and several epochs: little noise and large weights, where
# scores of huge records overflow (records are compared at any budget).
_SGD = dict(epsilon=8.0, max_iter=5, batch_size=16)
_OP = dict(solver="output-perturbation", alpha=0.1, feature_norm_bound=1.0)
_NEWTON = dict(
    solver="dp-newton", epsilon=8.0, feature_norm_bound=1.0, newton_steps=3
)
_FERMI = dict(epsilon=8.0, max_iter=5, batch_size=16, random_state=0)
_FW = dict(
    solver="dp-frank-wolfe", epsilon=8.0, l1_radius=5.0, feature_inf_bound=1.0,
    fw_steps=10,
)

CONFIGS = [
    Config(
        "lr-dpsgd-binary",
        _lr(classes=[0, 1], **_SGD),
        "binary",
        "add_remove",
        first_release=2,
    ),
    Config(
        "lr-dpsgd-3class",
        _lr(classes=[0, 1, 2], **_SGD),
        "multiclass",
        "add_remove",
        first_release=2,
    ),
    Config("lr-outpert-binary", _lr(classes=[0, 1], **_OP), "binary", "replace_one"),
    Config(
        "lr-outpert-3class", _lr(classes=[0, 1, 2], **_OP), "multiclass", "replace_one"
    ),
    Config("lr-fw-binary", _lr(classes=[0, 1], **_FW), "binary", "add_remove"),
    # The first release is the noisy gradient, in the coefficient and
    # intercept blocks of one mechanism (sensitivity 1 / n, normalized rows).
    Config(
        "lr-newton-binary",
        _lr(classes=[0, 1], **_NEWTON),
        "binary",
        "add_remove",
        first_release=2,
    ),
    Config(
        "lr-fw-3class", _lr(classes=[0, 1, 2], **_FW), "multiclass", "add_remove"
    ),
    Config(
        "lr-silos-binary",
        _lr(classes=[0, 1], **_SGD),
        "binary",
        "add_remove",
        per_record="silos",
        first_release=2,
    ),
    Config(
        "lr-silos-3class",
        _lr(classes=[0, 1, 2], **_SGD),
        "multiclass",
        "add_remove",
        per_record="silos",
        first_release=2,
    ),
    Config(
        "lr-silos-secure-aggregation",
        _lr(classes=[0, 1], secure_aggregation=True, **_SGD),
        "binary",
        "add_remove",
        per_record="silos",
        first_release=2,
    ),
    # A network's first release is one stacked sum: the weight blocks of
    # every layer, then the bias blocks (one clip for all of them).
    Config(
        "mlp-binary",
        lambda: DPMLPClassifier((4,), classes=[0, 1], random_state=0, **_SGD),
        "binary",
        "add_remove",
        first_release=4,
    ),
    # ISRL-DP FedProx-SPIDER: the first release is an anchor round's stacked
    # sum; the difference rounds that follow run on the same worlds (every
    # property but the first release's sensitivity holds for them too).
    Config(
        "mlp-silos-spider",
        lambda: DPMLPClassifier(
            (4,), classes=[0, 1], random_state=0, silo_algorithm="spider",
            spider_period=2, **_SGD,
        ),
        "binary",
        "add_remove",
        per_record="silos",
        first_release=4,
    ),
    Config(
        "mlp-3class",
        lambda: DPMLPClassifier(
            (4, 3), "tanh", classes=[0, 1, 2], random_state=0, **_SGD
        ),
        "multiclass",
        "add_remove",
        first_release=6,
    ),
    # Columns unscaled, so that the first release is the first clipped sum;
    # "semidp-gd-private-scales" covers the default scaling without public
    # rows (private quantiles first, then the sums).
    Config(
        "semidp-gd",
        lambda: SemiDPLinearRegression(random_state=0, feature_scaling=None),
        "regression",
        "replace_one",
        per_record="public_mask",
    ),
    Config(
        "semidp-gd-private-scales",
        lambda: SemiDPLinearRegression(random_state=0),
        "regression",
        "replace_one",
    ),
    *[
        Config(
            f"semidp-{solver.replace('_', '-')}",
            (
                lambda s=solver: SemiDPLinearRegression(
                    solver=s, random_state=0, feature_scaling=None
                )
            ),
            "regression",
            "replace_one",
            per_record="public_mask",
        )
        for solver in ("dp-gd", "pda-md")
    ],
    # Local messages are not Gaussian sums: the first-release check has
    # nothing to compare (tests/solvers/semi_dp/test_local.py checks each
    # message's input and norm); ending, finiteness and record are checked.
    Config(
        "semi-local",
        lambda: SemiLocalDPLinearRegression(epsilon=4.0, random_state=0),
        "regression",
        "replace_one",
        per_record="public_mask",
    ),
    Config(
        "semidp-sgd",
        lambda: SemiDPLinearRegression(
            solver="semidp-sgd", adjacency="add_remove", batch_size=16,
            random_state=0, feature_scaling=None,
        ),
        "regression",
        "add_remove",
        per_record="public_mask",
    ),
    # The dual clip is computed from the privatized group marginals
    # (post-processing), unless declared.
    Config(
        "dpfermi-dp",
        lambda: DPFERMIClassifier(classes=[0, 1], groups=[0, 1], **_FERMI),
        "binary",
        "add_remove",
        per_record="sensitive_features",
        private_estimates=("dual_clip_norm_",),
    ),
    Config(
        "dpfermi-dp-public-marginals",
        lambda: DPFERMIClassifier(
            classes=[0, 1],
            groups=[0, 1],
            group_marginals=[0.5, 0.5],
            dual_clip_norm=2.0,
            **_FERMI,
        ),
        "binary",
        "add_remove",
        per_record="sensitive_features",
        # Nothing to estimate first: the first release is DP-SGDA's first
        # step, the coefficient and intercept blocks of the primal gradient
        # and the dual gradient, released jointly.
        first_release=3,
    ),
    # The network's primal block (every layer's weights, then every bias)
    # is clipped jointly to clip_norm by its ghost norms: the first release
    # is the first step's weights, biases and dual blocks (public marginals).
    Config(
        "dpfermi-mlp",
        lambda: DPFERMIClassifier(
            classes=[0, 1],
            groups=[0, 1],
            group_marginals=[0.5, 0.5],
            dual_clip_norm=2.0,
            hidden_layer_sizes=(4,),
            **{**_FERMI, "clip_norm": 0.05},
        ),
        "binary",
        "add_remove",
        per_record="sensitive_features",
        first_release=3,
    ),
    Config(
        "dpfermi-eo-3class",
        lambda: DPFERMIClassifier(
            classes=[0, 1, 2],
            groups=[0, 1],
            constraint="equalized_odds",
            **_FERMI,
        ),
        "multiclass",
        "add_remove",
        per_record="sensitive_features",
        private_estimates=("dual_clip_norm_",),
    ),
    *[
        Config(
            f"heavytail-{solver}",
            # epsilon * n must reach the "dp-sgd" minimum (100) at n = 40,
            # or the fit releases the public zero model without reading data;
            # at this budget the one-pass solvers' step counts also follow
            # their private curvature estimates.
            (
                lambda solver=solver: HeavyTailDPRegressor(
                    solver=solver, epsilon=4.0, random_state=0
                )
            ),
            "regression",
            "add_remove" if solver == "dp-sgd" else "replace_one",
            private_estimates=("clip_norm",),
        )
        for solver in ("dp-sgd", "sgd", "acsa", "prox", "localized")
    ],
    Config(
        "heavytail-dp-sgd-declared-clip",
        lambda: HeavyTailDPRegressor(
            solver="dp-sgd", clip_norm=5.0, epsilon=4.0, random_state=0
        ),
        "regression",
        "add_remove",
    ),
    Config(
        "heavytail-sgd-declared",
        lambda: HeavyTailDPRegressor(
            solver="sgd",
            clip_norm=5.0,
            smoothness=2.0,
            strong_convexity=0.5,
            random_state=0,
        ),
        "regression",
        "replace_one",
    ),
    Config(
        "fermi-nonprivate",
        lambda: FERMIClassifier(max_iter=5, batch_size=16, random_state=0),
        "binary",
        None,
        per_record="sensitive_features",
    ),
]
CONFIG_IDS = [c.name for c in CONFIGS]
CONFIG_BY_NAME = {c.name: c for c in CONFIGS}


# -- the data -----------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    """What the shared rows ``D`` and the two differing records look like.

    ``base`` shapes ``D``; ``labels`` its targets; ``groups`` its sensitive
    attribute. ``z0``/``z1`` are the records of the two worlds, one value
    name per coordinate ("row0" copies the first row of ``D``); ``y0``/``y1``
    their targets (a label index, or a value for regression); ``g0``/``g1``
    their group. ``weights`` is "none" (no ``sample_weight``), "ones" or
    "spread" (``D``'s weights spread over ``[0.5, 2]``); ``w0``/``w1`` are
    the weights the two records bring with them.
    """

    base: str = "normal"
    labels: str = "balanced"
    groups: str = "balanced"
    z0: tuple = ("row0",)
    z1: tuple = (MAX, 0.0)
    y0: object = 0
    y1: object = 1
    g0: int = 0
    g1: int = 1
    n: int = 60
    d: int = 2
    seed: int = 0
    weights: str = "none"
    w0: float = 1.0
    w1: float = 1.0
    units: str = "standard"


# Raw-scale columns ("units": "raw"): column j of D is
# RAW_SCALES[j] * N(0, 1) + RAW_OFFSETS[j] (a year-like offset of 1e5 with
# a spread of 1e-3, a price-like 500 with a spread of 1e4, a plain column),
# before any base modification, as real tables come.
RAW_SCALES = (1e-3, 1e4, 1.0)
RAW_OFFSETS = (1e5, 500.0, 0.0)


def _row(values, d, first_row):
    if values == ("row0",):
        return first_row.copy()
    return np.array([values[j % len(values)] for j in range(d)], dtype=float)


def _base(config, sc):
    rng = np.random.default_rng(sc.seed)
    n, d = sc.n, sc.d
    X = rng.standard_normal((n, d))
    if sc.units == "raw":
        cols = np.arange(d) % len(RAW_SCALES)
        X = X * np.take(RAW_SCALES, cols) + np.take(RAW_OFFSETS, cols)
    if sc.base == "constant_column":
        X[:, 0] = 3.0
    elif sc.base == "all_equal":
        X[:] = X[0]
    elif sc.base == "duplicated":
        X = np.repeat(X[: n // 4], 4, axis=0)[:n]
    elif sc.base == "tiny":
        X *= 1e-300
    elif sc.base == "huge_rows":  # a few (private) rows of D hold huge values
        X[-3:, 0] = MAX
        X[-3:, -1] = -1e308
    n_classes = {"binary": 2, "multiclass": 3}.get(config.task)
    if n_classes is None:
        with np.errstate(all="ignore"):
            y = X[:, 0] - 0.5 * X[:, -1] + 0.3 * rng.standard_normal(n)
        if sc.labels == "constant":
            y[:] = 2.5
        elif sc.labels == "huge":
            y[-3:] = [1e308, -MAX, 1e200]
        y = np.nan_to_num(y, nan=0.0, posinf=MAX, neginf=-MAX)
    elif sc.labels == "single_class":
        y = np.zeros(n, dtype=int)
    else:
        # Balanced and informative (classes by the rank of the first
        # feature), so that the weight on it grows: a huge value overflows a
        # score only once that weight exceeds 1.
        noisy = X[:, 0] + 1e-3 * rng.standard_normal(n)
        y = np.argsort(np.argsort(noisy)) * n_classes // n
    if sc.groups == "balanced":
        g = (np.arange(n) // 2) % 2
    else:  # "single_group" (and "alone": D has none of the other group)
        g = np.zeros(n, dtype=int)
    return X, y, g


def _per_record(config, n, g, *, canary_group=None):
    """The per-record fit argument for ``n`` rows (the canary, if any, last)."""
    if config.per_record == "sensitive_features":
        return g if canary_group is None else np.append(g, canary_group)
    if config.per_record == "public_mask":
        # The first quarter of D is public; the differing record is private.
        mask = np.arange(n) < max(1, n // 4)
        return mask if canary_group is None else np.append(mask, False)
    if config.per_record == "silos":
        silos = np.where(np.arange(n) % 2 == 0, "a", "b")
        # The differing record always joins silo "a": silo membership is
        # public, so both worlds must put it in the same silo.
        return silos if canary_group is None else np.append(silos, "a")
    return None


def _target(config, value):
    if config.task == "regression":
        return float(value)
    n_classes = 2 if config.task == "binary" else 3
    return int(value) % n_classes


def _weights(sc, n):
    """The weights of ``D`` (None: the fit gets no ``sample_weight``)."""
    if sc.weights == "none":
        return None
    if sc.weights == "ones":
        return np.ones(n)
    return np.linspace(0.5, 2.0, n)  # "spread"


def build_worlds(config, sc):
    """The datasets ``D``, ``D + z0`` and ``D + z1`` as ``(X, y, fit_params)``.

    A record brings its weight with it: ``D + z`` appends ``z``'s weight to
    ``D``'s.
    """
    X, y, g = _base(config, sc)
    w = _weights(sc, len(X))
    worlds = {"D": (X, y, _params(config, _per_record(config, len(X), g), w))}
    differing = (
        ("D+z0", sc.z0, sc.y0, sc.g0, sc.w0),
        ("D+z1", sc.z1, sc.y1, sc.g1, sc.w1),
    )
    for tag, z, zy, zg, zw in differing:
        Xw = np.vstack([X, _row(z, sc.d, X[0])])
        yw = np.append(y, _target(config, zy)).astype(y.dtype)
        per = _per_record(config, len(X), g, canary_group=zg)
        ww = None if w is None else np.append(w, zw)
        worlds[tag] = (Xw, yw, _params(config, per, ww))
    return worlds


def _params(config, per, weights=None):
    params = {} if per is None else {config.per_record: per}
    if weights is not None:
        params["sample_weight"] = weights
    return params


# -- running a fit and reading what it releases ----------------------------------


@dataclass
class Outcome:
    error: tuple | None  # (type name, message)
    warnings: list
    estimator: object = None
    releases: list = ()  # what the fit released, before the noise: _Releases


class _Releases:
    """A white-box spy: what every release of a fit sees, before its noise.

    Events in the order the fit makes them: ``("gaussian", clip_norm, sum,
    id(mechanism))`` for each :meth:`GaussianMechanism.privatize` call
    (through the audit hook :func:`observe_privatize`, which passes the sum
    on unchanged), ``("selection", sensitivity, scores)`` for each
    :meth:`ExponentialMechanism.select` draw and ``("sample",)`` for each
    Poisson batch drawn. Values are float64 copies.
    """

    def __init__(self):
        self.events = []

    def before_noise(self, mechanism, clipped_sum):
        value = np.array(clipped_sum, dtype=float)
        self.events.append(("gaussian", mechanism.clip_norm, value, id(mechanism)))
        return clipped_sum

    def after_noise(self, mechanism, noisy_sum):
        pass

    @contextlib.contextmanager
    def watching(self):
        original_select = ExponentialMechanism.select
        original_sample = _sampling._bernoulli_successes

        def select(mechanism, scores, rng):
            scores_copy = np.array(scores, dtype=float)
            self.events.append(("selection", mechanism.sensitivity, scores_copy))
            return original_select(mechanism, scores, rng)

        def sample(*args, **kwargs):
            self.events.append(("sample",))
            return original_sample(*args, **kwargs)

        with (
            observe_privatize(self),
            mock.patch.object(ExponentialMechanism, "select", select),
            mock.patch.object(_sampling, "_bernoulli_successes", sample),
        ):
            yield self


# A warning that reads only the released model (HeavyTailDPRegressor's
# radius check) is post-processing: it tells nothing the release does not,
# so it may differ between worlds as the coefficients do.
_POST_PROCESSING = "this check reads only the released coefficients"


def _fit(config, data):
    X, y, params = data
    est = config.make()
    releases = _Releases()
    with warnings.catch_warnings(record=True) as caught, releases.watching():
        warnings.simplefilter("always")
        try:
            est.fit(X, y, **params)
        except Exception as exc:  # noqa: BLE001 - compared between worlds
            error = (type(exc).__name__, str(exc))
            est = None
        else:
            error = None
    seen = sorted(
        {
            (w.category.__name__, str(w.message))
            for w in caught
            if _POST_PROCESSING not in str(w.message)
        }
    )
    return Outcome(error, seen, est, releases.events)


def _numbers(value):
    """The floats in a fitted attribute (None if it holds no number)."""
    if isinstance(value, bool | np.bool_):
        return None
    if isinstance(value, int | float | np.integer | np.floating):
        return np.array([float(value)])
    if isinstance(value, np.ndarray) and value.dtype.kind in "fiu":
        return value.astype(float).ravel()
    layers = isinstance(value, list) and all(isinstance(v, np.ndarray) for v in value)
    if isinstance(value, dict) or (layers and value):
        # A dict of per-silo numbers, or a network's list of layer arrays.
        values = value.values() if isinstance(value, dict) else value
        parts = [_numbers(v) for v in values]
        parts = [p for p in parts if p is not None]
        return np.concatenate(parts) if parts else None
    return None


def _attribute_findings(est):
    """Released numbers (numeric fitted attributes) that are not finite."""
    found = []
    for name, value in vars(est).items():
        if not name.endswith("_") or name.startswith("_"):
            continue
        numbers = _numbers(value)
        if numbers is not None and not np.all(np.isfinite(numbers)):
            found.append(f"released {name} is not finite: {value!r}")
    return found


def _score_may_overflow(est, probe):
    """Rows of ``probe`` whose exact linear score may exceed the float range.

    ``|x . w + b| <= max|x| * ||w||_1 + |b|``: where that bound is at most
    the largest float the score must be finite; beyond it, the correctly
    rounded score may be +-inf (never NaN).
    """
    if not hasattr(est, "coef_"):
        # A network saturates every layer: its scores are always finite.
        return np.zeros(len(probe), dtype=bool)
    coef = np.atleast_2d(np.asarray(est.coef_, dtype=float))
    intercept = np.abs(np.asarray(est.intercept_, dtype=float)).max()
    with np.errstate(all="ignore"):
        bound = np.abs(probe).max(axis=1) * np.abs(coef).sum(axis=1).max() + intercept
    return ~(bound <= MAX)


def _bad_scores(scores, may_overflow):
    scores = np.asarray(scores, dtype=float).reshape(len(may_overflow), -1)
    nan = np.isnan(scores).any(axis=1)
    overflow = ~np.isfinite(scores).all(axis=1) & ~may_overflow
    return bool(np.any(nan | overflow))


def _prediction_findings(est, probe):
    """Predictions on finite rows that are NaN, or not finite where they could be.

    Probabilities are always finite (and sum to 1) and labels are in
    ``classes_``; scores and regression predictions are never NaN, and are
    finite wherever their exact value is within the float range.
    """
    probe = probe[:, : est.n_features_in_]
    may_overflow = _score_may_overflow(est, probe)
    found = []
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")  # warnings at predict time are not our topic
        if is_classifier(est):
            proba = est.predict_proba(probe)
            if not np.all(np.isfinite(proba)):
                found.append(f"predict_proba on finite rows: {proba.tolist()}")
            elif not np.allclose(proba.sum(axis=1), 1.0):
                found.append(f"predict_proba rows do not sum to 1: {proba.tolist()}")
            scores = (
                est.decision_function(probe)
                if hasattr(est, "decision_function")
                else est.predict_log_proba(probe)
            )
            if _bad_scores(scores, may_overflow):
                found.append(f"decision_function on finite rows: {scores.tolist()}")
            if not set(est.predict(probe)) <= set(est.classes_):
                found.append("predict returned a label outside classes_")
        else:
            pred = est.predict(probe)
            if _bad_scores(pred, may_overflow):
                found.append(f"predict on finite rows: {pred.tolist()}")
    return found


# Fitted attributes that describe the mechanism: identical in both worlds.
_PRIVACY_ATTRIBUTES = (
    "epsilon_",
    "delta_",
    "noise_multiplier_",
    "adjacency_",
    "privacy_caveats_",
    "dual_noise_multiplier_",
    "effective_noise_multiplier_",
    "dual_clip_norm_",
    "sampling_probability_",
    "accountant_",
    "rho_",
    "rho_spent_",
    "t_",
    "silo_epsilon_",
    "silo_delta_",
    "silo_noise_multiplier_",
    "silo_rounds_",
    "server_weights_",
    "central_epsilon_",
)


def _record_dict(record):
    d = record.to_dict()
    d["caveats"] = sorted(d["caveats"])
    return d


def privacy_description(config, est):
    """Everything the accountant was given, as comparable plain values."""
    out = {"dp_event_": repr(est.dp_event_)}
    out["privacy_record_"] = _record_dict(est.privacy_record_)
    for name in _PRIVACY_ATTRIBUTES:
        if hasattr(est, name):
            value = getattr(est, name)
            out[name] = sorted(value) if name == "privacy_caveats_" else value
    central = getattr(est, "central_privacy_record_", None)
    if central is not None:
        out["central_privacy_record_"] = _record_dict(central)
    silo_records = getattr(est, "silo_privacy_records_", None)
    if silo_records:
        out["silo_privacy_records_"] = {
            k: _record_dict(v) for k, v in silo_records.items()
        }
    for name in config.private_estimates:
        # A private estimate, released with its own budget: may differ (it
        # is checked for finiteness with the other released numbers).
        (out if name.endswith("_") else out["privacy_record_"]).pop(name)
    return out


def _diff(a, b):
    keys = sorted(set(a) | set(b))
    return {k: (a.get(k), b.get(k)) for k in keys if a.get(k) != b.get(k)}


#: The checks, from the most to the least fundamental.
CHECKS = ("ending", "finite", "record", "sums", "warnings", "predictions")


@dataclass(frozen=True)
class FirstRelease:
    """A fit's first release before its noise, and the sensitivity it claims.

    ``kind`` is "gaussian" or "selection". A Gaussian release has one part
    per mechanism: ``values[k]`` is the sum its mechanism privatizes,
    ``bounds[k]`` that mechanism's ``clip_norm``, and the distance is L2. A
    selection has one part: the scores, bounded by the utility sensitivity,
    and the distance is the largest change of one score. ``sampled`` says
    whether a Poisson batch was drawn before it.
    """

    kind: str
    bounds: tuple
    values: tuple
    sampled: bool

    def distances(self, other):
        out = []
        for mine, theirs in zip(self.values, other.values):
            diff = (mine - theirs).ravel()
            if self.kind == "selection":
                out.append(float(np.max(np.abs(diff), initial=0.0)))
            else:
                out.append(float(np.linalg.norm(diff)))
        return out

    def shapes(self):
        return tuple(v.shape for v in self.values)

    def in_units(self):
        """Each part divided by its sensitivity (whose bound is then 1)."""
        values = tuple(v / b for v, b in zip(self.values, self.bounds))
        return FirstRelease(self.kind, (1.0,) * len(values), values, self.sampled)


def first_release(config, events):
    """The first release among a fit's ``_Releases`` events (None if none).

    Both worlds share the seed, so their first releases are computed from the
    same state: everything after one depends on its noisy output, which
    differs between the worlds whatever the sensitivity. ``first_release``
    Gaussian calls in a row make one release: the blocks one mechanism
    privatizes stack into one sum of sensitivity its clip (DP-SGD's
    coefficient and intercept blocks); blocks of different mechanisms
    released jointly (DP-FERMI's primal and dual gradients) are each bounded
    by their own clip.
    """
    for i, event in enumerate(events):
        if event[0] == "sample":
            continue
        sampled = any(e[0] == "sample" for e in events[:i])
        if event[0] == "selection":
            return FirstRelease("selection", (event[1],), (event[2],), sampled)
        blocks = events[i : i + config.first_release]
        if len(blocks) < config.first_release or any(
            e[0] != "gaussian" for e in blocks
        ):
            raise AssertionError(
                f"{config.name}: expected {config.first_release} Gaussian "
                f"blocks, got {[e[:2] for e in blocks]}"
            )
        parts = {}  # by mechanism (its id), in order
        for _, clip, value, mechanism in blocks:
            parts.setdefault(mechanism, (clip, []))[1].append(value.ravel())
        bounds = tuple(clip for clip, _ in parts.values())
        values = tuple(np.concatenate(v) for _, v in parts.values())
        return FirstRelease("gaussian", bounds, values, sampled)
    return None


def _sum_findings(config, outcomes, a, b, steps):
    """The first releases of worlds ``a`` and ``b``, ``steps`` neighbours apart.

    Each part's pre-noise value may differ by ``steps`` times its
    sensitivity (and a relative 1e-9 for the rounding of a sum of n terms).
    """
    ra = first_release(config, outcomes[a].releases)
    rb = first_release(config, outcomes[b].releases)
    if ra is None or rb is None:
        return []
    if (
        a == "D"
        and ra.bounds != rb.bounds
        and all(bound > 0 for bound in ra.bounds + rb.bounds)
    ):
        # n differs between D and D + z1, and a release that averages over
        # the public n (Frank-Wolfe's scores, sensitivity c / n) scales its
        # value and its sensitivity alike: compared in units of their own
        # sensitivity, the worlds are one record (at most 1) apart.
        ra, rb = ra.in_units(), rb.in_units()
    if (ra.kind, ra.bounds, ra.shapes()) != (rb.kind, rb.bounds, rb.shapes()):
        return [
            f"{a} first released a {ra.kind} {ra.shapes()} of sensitivity "
            f"{ra.bounds}, {b} a {rb.kind} {rb.shapes()} of sensitivity {rb.bounds}"
        ]
    if ra.sampled and a == "D":
        # The batch rate q = batch_size / n reads the (public) n, which
        # differs between D and D + z1: their Poisson batches differ in rows
        # other than the record, so their sums are not comparable. The pair
        # D + z0 ~ D + z1 (same n, same batches) is checked instead.
        return []
    return [
        f"{a} vs {b}: the first release ({ra.kind}, part {k}) moved by "
        f"{distance:.6g}, over {steps} x its sensitivity {bound:.6g}"
        for k, (distance, bound) in enumerate(zip(ra.distances(rb), ra.bounds))
        if not distance <= steps * bound * (1 + 1e-9)
    ]


def neighbour_findings(config, sc, probe=PROBE):
    """Fit the neighbouring worlds of ``sc``; what each check found wrong.

    Returns the outcomes of the fits and a dict from check name (see
    ``CHECKS``) to a list of messages (empty when the check passed).
    """
    worlds = build_worlds(config, sc)
    names = ["D+z0", "D+z1"] + (["D"] if config.adjacency == "add_remove" else [])
    outcomes = {tag: _fit(config, worlds[tag]) for tag in names}
    fitted = {tag: out.estimator for tag, out in outcomes.items() if out.estimator}
    found = {check: [] for check in CHECKS}
    private = config.adjacency is not None

    # Neighbours under the estimator's adjacency, and D+z0 ~ D+z1 (same n).
    pairs = [("D+z0", "D+z1")] + ([("D", "D+z1")] if "D" in outcomes else [])
    for a, b in pairs if private else ():
        oa, ob = outcomes[a], outcomes[b]
        if oa.error != ob.error:
            found["ending"].append(
                f"{a} ended with {oa.error or 'a fit'}, {b} with {ob.error or 'a fit'}"
            )
        if oa.warnings != ob.warnings:
            found["warnings"].append(
                f"{a} warned {oa.warnings}, {b} warned {ob.warnings}"
            )
    for tag, out in outcomes.items() if private else ():
        # Everything is declared, so nothing may be inferred from the data
        # (the fixed seed may be warned about: it is the same in both worlds).
        leaks = [
            w
            for w in out.warnings
            if w[0] == PrivacyLeakWarning.__name__
            and "seed" not in w[1]
            and "random_state" not in w[1]
        ]
        if leaks:
            found["warnings"].append(f"{tag}: everything is declared, yet {leaks}")

    for tag, est in fitted.items():
        found["finite"] += [f"{tag}: {m}" for m in _attribute_findings(est)]
        found["predictions"] += [
            f"{tag}: {m}" for m in _prediction_findings(est, probe)
        ]

    if private and "D+z0" in fitted and "D+z1" in fitted:
        e0, e1 = fitted["D+z0"], fitted["D+z1"]
        if not e0.adjacency_ == e1.adjacency_ == config.adjacency:
            found["record"].append(f"adjacency_ {e0.adjacency_}, {e1.adjacency_}")
        r0, r1 = privacy_description(config, e0), privacy_description(config, e1)
        if r0 != r1:
            found["record"].append(f"D+z0 vs D+z1: {_diff(r0, r1)}")

    # Pre-noise sums: D ~ D + z1 is one step; D + z0 ~ D + z1 is one step
    # under replace-one, and two under add/remove (remove z0, add z1; even
    # at weight 0 a record still counts where a release ignores weights).
    for a, b in pairs if private else ():
        steps = 2 if a == "D+z0" and config.adjacency == "add_remove" else 1
        if outcomes[a].error is None and outcomes[b].error is None:
            found["sums"] += _sum_findings(config, outcomes, a, b, steps)
    return outcomes, found


# The neighbour checks proper; "predictions" (of the models fitted on the
# adversarial data, on PROBE) is asserted by its own tests so that a model
# that predicts NaN on a huge row does not hide the other checks.
NEIGHBOUR_CHECKS = CHECKS[:-1]


@functools.lru_cache(maxsize=512)
def _cached_findings(config_name, sc):
    # The scenario tests and the prediction tests share the fits.
    return neighbour_findings(CONFIG_BY_NAME[config_name], sc)


def check_neighbours(config, sc, checks=NEIGHBOUR_CHECKS):
    """Assert that ``checks`` pass on the neighbouring worlds of ``sc``."""
    outcomes, found = _cached_findings(config.name, sc)
    failed = [f"  [{check}] {m}" for check in checks for m in found[check]]
    assert not failed, f"{config.name} on {sc}:\n" + "\n".join(failed)
    return outcomes


# -- named scenarios (always run) ------------------------------------------------

#: Raw-scale neighbours: the record is an ordinary row in the same units.
RAW_SCENARIO = Scenario(
    units="raw", z0=("row0",), z1=(1e5 + 2e-3, 500.0 - 2e4), y0=0, y1=1
)

SCENARIOS = {
    # one huge finite row (a NaN model in one world only is epsilon = inf)
    "huge-record": Scenario(z1=(MAX, 0.0)),
    "huge-negative-record": Scenario(z1=(-1.7e308, 1e308), y1=0),
    "square-overflows": Scenario(z1=(1.4e154, -1.4e154)),
    "huge-vs-huge": Scenario(z0=(1e200,), z1=(-MAX, MAX)),
    "tiny-record": Scenario(z1=(1e-300, 5e-324)),
    "tiny-data": Scenario(base="tiny", z1=(1e200, 1.0)),
    "huge-rows-in-D": Scenario(base="huge_rows", z1=(1.0, -1.0)),
    "constant-column": Scenario(base="constant_column", z1=(3.0, MAX)),
    # replace-one neighbours of all-equal data: constant X in one world only
    "all-rows-equal": Scenario(base="all_equal", z0=("row0",), z1=(1.0, 2.0)),
    "duplicated-rows": Scenario(base="duplicated", z1=(MAX, -MAX)),
    # one class in the private data, the other declared; the record adds it
    "single-class": Scenario(labels="single_class", y0=0, y1=1, z1=(0.5, 0.5)),
    # one group in the private data, the other declared; the record is the
    # only member of its group in one world
    "single-group": Scenario(groups="single_group", g0=0, g1=0, z1=(MAX, 1.0)),
    "alone-in-group": Scenario(groups="alone", g0=0, g1=1, z1=(1.0, 1.0)),
    "alone-in-group-huge": Scenario(groups="alone", g0=0, g1=1, z1=(MAX, -MAX)),
    # raw-scale columns (offsets 1e5 and 500, spreads 1e-3 and 1e4): an
    # ordinary record in the same units, and a huge adversarial one
    "raw-scale": RAW_SCENARIO,
    "raw-scale-huge-record": Scenario(units="raw", z1=(MAX, -1e308), y1=0),
}
# Regressors: huge targets, on ordinary and on huge features.
REGRESSION_SCENARIOS = {
    "huge-target": Scenario(z1=(1.0, -1.0), y0=0.0, y1=MAX),
    "huge-negative-target": Scenario(z1=(0.0, 0.0), y0=1.0, y1=-1e308),
    "huge-target-and-row": Scenario(z1=(MAX, MAX), y1=MAX),
    "huge-targets-in-D": Scenario(labels="huge", z1=(1.0, 1.0), y1=1.0),
    "constant-target": Scenario(labels="constant", z1=(1.0, 1.0), y0=2.5, y1=1e200),
}


# Weighted neighbours, for every configuration: D is weighted (weights in
# [0.5, 2]) and the record brings its own weight. n = 31: with the
# configurations' seed, the record (the last row) is in the first Poisson
# batch of DP-SGD, DP-SGDA and semi-DP SGD, so that their first sums see it
# (test_weighted_record_is_in_the_first_release checks that it stays so).
_W = dict(weights="spread", n=31)
WEIGHTED_SCENARIOS = {
    # add a record of weight 1e6 (D ~ D + z1); D + z0 ~ D + z1 replaces its
    # twin of weight 0 by it
    "add-weight-1e6": Scenario(
        z0=(3.0, -1.0), z1=(3.0, -1.0), y0=0, y1=0, w0=0.0, w1=1e6, **_W
    ),
    # remove a heavy record (D + z1 ~ D); D + z0 ~ D + z1 replaces it by an
    # ordinary one
    "remove-weight-50": Scenario(
        z0=(-1.0, 0.5), z1=(2.0, 1.0), y0=1, y1=1, w0=1.0, w1=50.0, **_W
    ),
    # change one record's weight from 1 to 1e6 (D + z0 ~ D + z1): a neighbour
    # under replace-one, two steps under add/remove
    "reweight-1-to-1e6": Scenario(
        z0=(2.0, -1.0), z1=(2.0, -1.0), y0=1, y1=1, w0=1.0, w1=1e6, **_W
    ),
    # a huge record at a huge weight: its weighted term overflows unless the
    # clip factor is computed with care
    "huge-record-weight-1e300": Scenario(z1=(MAX, -1.0), y1=1, w1=1e300, **_W),
    # D's weights are all 1: the weights are uniform in D + z0, not in D + z1
    # (a record or refusal that read "all 1" told them apart)
    "unit-weights-add-1e6": Scenario(
        z0=(2.0, -1.0), z1=(2.0, -1.0), y0=1, y1=1, w0=1.0, w1=1e6,
        weights="ones", n=31,
    ),
}


# SemiDPLinearRegression's public error model (thesis Section 4.4's excess
# risk, which picks alpha, the step size and the number of steps from the
# public rows) overflows on raw-scale columns: its prediction is inf for
# every candidate, so the first candidate is taken; on 2,000 such rows the
# default fit's training MSE is ~2e4 against least squares' ~1.1. The
# released predicted_excess_risk_ is the non-finite number the check sees
# (the same in both worlds: public rows only, so no leak).
_SEMIDP_RAW = (
    "SemiDPLinearRegression's public error model overflows on raw-scale "
    "columns: predicted_excess_risk_ is inf and the hyperparameter choice "
    "falls back to the first candidate"
)
#: (configuration, scenario) pairs that fail a neighbour check today: bugs in
#: the package, kept visible (strict: the mark fails once they are fixed).
KNOWN_FAILURES = {
    (config, scenario): _SEMIDP_RAW
    for config in ("semidp-gd", "semidp-sgd")
    for scenario in ("raw-scale", "raw-scale-huge-record")
}


def _scenarios(known=None):
    for config in CONFIGS:
        named = dict(SCENARIOS)
        if config.task == "regression":
            named.update(REGRESSION_SCENARIOS)
        named.update(WEIGHTED_SCENARIOS)
        for name, sc in named.items():
            if sc.groups != "balanced" and config.per_record != "sensitive_features":
                continue  # the group scenarios need a sensitive attribute
            if sc.labels == "single_class" and config.task == "regression":
                continue
            reason = (known or {}).get((config.name, name))
            marks = (
                () if reason is None else pytest.mark.xfail(strict=True, reason=reason)
            )
            yield pytest.param(config, sc, id=f"{config.name}-{name}", marks=marks)


SCENARIO_PARAMS = list(_scenarios())
NEIGHBOUR_PARAMS = list(_scenarios(KNOWN_FAILURES))
ORDINARY_SCENARIO = Scenario(z1=(0.5, -0.5), z0=(-0.5, 0.5))


@pytest.mark.parametrize("config, scenario", NEIGHBOUR_PARAMS)
def test_neighbouring_scenario(config, scenario):
    check_neighbours(config, scenario)


@pytest.mark.parametrize("config, scenario", SCENARIO_PARAMS)
def test_predictions_after_adversarial_fit(config, scenario):
    # A model fitted on adversarial data predicts finitely on finite rows,
    # huge ones included (probabilities, scores, regression predictions).
    check_neighbours(config, scenario, checks=("predictions",))


@pytest.mark.parametrize("config", CONFIGS, ids=CONFIG_IDS)
def test_ordinary_neighbours_fit(config):
    # The harness can pass: on ordinary data both worlds fit, the records
    # agree and the release is finite (so a failure above is about the data).
    outcomes = check_neighbours(config, ORDINARY_SCENARIO)
    for tag, out in outcomes.items():
        assert out.error is None, f"{config.name} [{tag}]: {out.error}"


@pytest.mark.parametrize(
    "config",
    # semi-local sends per-record local messages, no Gaussian sum.
    [
        c
        for c in CONFIGS
        if c.adjacency is not None
        and c.per_record != "silos"
        and c.name != "semi-local"
    ],
    ids=lambda c: c.name,
)
def test_weighted_record_is_in_the_first_release(config):
    # The sums check is not vacuous: a record of weight 1e6 and its twin of
    # weight 0 give different first releases (the record is in the first
    # Poisson batch), except where the first release does not read it.
    # Silos refuse non-uniform weights (all worlds end with that error).
    sc = WEIGHTED_SCENARIOS["add-weight-1e6"]
    outcomes = check_neighbours(config, sc)
    r0, r1 = (
        first_release(config, outcomes[tag].releases) for tag in ("D+z0", "D+z1")
    )
    # One-pass SGD's first step reads the first rows only; private column
    # scales (the first releases) read the record's values, not its weight.
    unread = config.name in ("heavytail-sgd-declared", "semidp-gd-private-scales")
    assert (max(r0.distances(r1)) == 0) == unread, (config.name, r0.distances(r1))


def _plan_counts(config, params):
    """The public counts a plan takes from the per-record fit argument."""
    if config.per_record == "public_mask":
        return {"n_public": int(np.count_nonzero(params["public_mask"]))}
    if config.per_record == "silos":
        # A federated fit is planned as one (its event may differ from a
        # central fit's: SPIDER's two kinds of rounds).
        return {"n_silos": len(set(params["silos"]))}
    return {}  # classes and groups are declared


@pytest.mark.parametrize(
    "config",
    [c for c in CONFIGS if c.adjacency is not None],
    ids=lambda c: c.name,
)
def test_raw_scale_fit_is_the_planned_event(config):
    # On raw-scale columns (offsets 1e5 and 500, spreads 1e-3 and 1e4) every
    # world fits, so the run-time release check passed (a fit whose releases
    # differ from its dp_event_ raises), and the plan made from the
    # parameters and public counts alone is the event each world recorded.
    # (Finiteness and the first release's sensitivity: the "raw-scale"
    # scenario above.)
    outcomes, _ = _cached_findings(config.name, RAW_SCENARIO)
    worlds = build_worlds(config, RAW_SCENARIO)
    for tag, out in outcomes.items():
        assert out.error is None, f"{config.name} [{tag}]: {out.error}"
        X, _, params = worlds[tag]
        est = config.make()
        plan = est.privacy_plan(*X.shape, **_plan_counts(config, params))
        assert plan.dp_event == out.estimator.dp_event_, (config.name, tag)
        assert plan.adjacency == out.estimator.adjacency_
        plan.check_fitted(out.estimator)


@pytest.mark.parametrize("config", CONFIGS, ids=CONFIG_IDS)
def test_predictions_finite_on_huge_rows(config):
    # A model fitted on ordinary data predicts finitely on any finite row.
    check_neighbours(config, ORDINARY_SCENARIO, checks=("predictions",))


class _Leaky(RegressorMixin, BaseEstimator):
    """A fake private regressor with one deliberate leak, to test the checks."""

    def __init__(self, leak=None):
        self.leak = leak

    def fit(self, X, y):
        X = np.asarray(X, dtype=float)
        huge = bool(np.any(np.abs(X) > 1e100))
        if self.leak == "ending" and np.ptp(X, axis=0).max() == 0:
            raise ValueError("X is constant, which only the private data tell.")
        if self.leak == "warnings" and huge:
            warnings.warn("a huge record is present", UserWarning, stacklevel=2)
        with np.errstate(over="ignore"):
            total = 10.0 * X.sum(axis=0)
        # A sum of terms clipped to norm 1, released by the Gaussian mechanism
        # (replace-one sensitivity 2); the leak scales every term by a factor
        # read from the data, as a weight normalizer did.
        rows = np.clip(X, -1e6, 1e6)
        terms = rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1.0)
        if self.leak == "sums":
            terms *= 1.0 + float(huge)
        GaussianMechanism(2.0, 1.0).privatize(
            terms.sum(axis=0), np.random.default_rng(0)
        )
        self.coef_ = total if self.leak == "finite" else np.clip(total, -1, 1)
        self.intercept_ = 0.0
        sigma = 2.0 if self.leak == "record" and huge else 1.0
        self.privacy_record_ = PrivacyRecord.from_event(
            gaussian_event(sigma),
            delta=1e-5,
            accountant="rdp",
            adjacency="replace_one",
            mechanism="Gaussian",
            noise_multiplier=sigma,
        )
        self.epsilon_ = self.privacy_record_.epsilon
        self.delta_ = self.privacy_record_.delta
        self.dp_event_ = self.privacy_record_.dp_event
        self.noise_multiplier_ = sigma
        self.adjacency_ = "replace_one"
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X):
        X = np.asarray(X, dtype=float)
        if self.leak == "predictions":  # NaN on huge rows
            return np.where(np.abs(X).max(axis=1) > 1e100, np.nan, 0.0)
        return X @ np.clip(self.coef_, -1e-300, 1e-300)


@pytest.mark.parametrize("leak", [None, *CHECKS])
def test_each_check_can_fail(leak):
    # The harness sees each kind of leak on the scenario built to provoke it,
    # and nothing when there is none.
    config = Config("leaky", lambda: _Leaky(leak), "regression", "replace_one")
    sc = SCENARIOS["all-rows-equal" if leak == "ending" else "huge-record"]
    _, found = neighbour_findings(config, sc)
    assert {check for check in CHECKS if found[check]} == ({leak} - {None}), found


def test_record_comparison_sees_a_difference():
    # A different epsilon must show up in the compared description.
    config = CONFIGS[0]
    data = build_worlds(config, Scenario())["D+z0"]
    a = _fit(config, data).estimator
    b = DPLogisticRegression(classes=[0, 1], random_state=0, **{**_SGD, "epsilon": 2})
    b.fit(*data[:2])
    assert privacy_description(config, a) != privacy_description(config, b)


# -- random combinations (hypothesis) ---------------------------------------------

_VALUES = st.sampled_from(EXTREMES + ORDINARY)
BASES = ("normal", "constant_column", "all_equal", "duplicated", "tiny", "huge_rows")
LABELS = ("balanced", "single_class")
REGRESSION_LABELS = ("normal", "constant", "huge")
GROUPS = ("balanced", "single_group", "alone")
# Weights a record may bring (0 adds nothing to a weighted sum; 5e-324 is
# the smallest subnormal).
WEIGHTS = (0.0, 5e-324, 0.5, 1.0, 50.0, 1e6, 1e300)


@st.composite
def scenarios(draw, config):
    regression = config.task == "regression"
    fair = config.per_record == "sensitive_features"
    d = draw(st.sampled_from([1, 2, 3]))

    def record():
        if draw(st.integers(0, 4)) == 0:
            return ("row0",)
        return tuple(draw(_VALUES) for _ in range(d))

    def target():
        if regression:
            return draw(st.sampled_from(HUGE_TARGETS + ORDINARY))
        return draw(st.integers(0, 2))

    base = draw(st.sampled_from(BASES))
    labels = draw(st.sampled_from(REGRESSION_LABELS if regression else LABELS))
    groups = draw(st.sampled_from(GROUPS)) if fair else "balanced"
    weights = draw(st.sampled_from(("none", "spread", "ones")))
    units = draw(st.sampled_from(("standard", "raw")))
    w0, w1 = (1.0, 1.0) if weights == "none" else tuple(
        draw(st.sampled_from(WEIGHTS)) for _ in range(2)
    )
    return Scenario(
        base=base,
        labels=labels,
        groups=groups,
        z0=record(),
        z1=record(),
        y0=target(),
        y1=target(),
        g0=draw(st.integers(0, 1)) if fair else 0,
        g1=draw(st.integers(0, 1)) if fair else 1,
        n=draw(st.sampled_from([40, 64, 100])),
        d=d,
        seed=draw(st.integers(0, 2**16)),
        weights=weights,
        w0=w0,
        w1=w1,
        units=units,
    )


@pytest.mark.slow
@pytest.mark.parametrize("config", CONFIGS, ids=CONFIG_IDS)
def test_neighbouring_random(config):
    @settings(
        max_examples=N_EXAMPLES,
        deadline=None,
        derandomize=True,  # reproducible CI; DPFAIR_FULL=1 explores more
        phases=PHASES,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(sc=scenarios(config))
    def run(sc):
        check_neighbours(config, sc)  # predictions: see the scenario tests

    run()
