# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""scikit-learn's common checks over every public estimator, found automatically."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils.estimator_checks import (
    check_sample_weight_equivalence_on_dense_data,
    check_sample_weight_equivalence_on_sparse_data,
    parametrize_with_checks,
)

from sklearn_dpfair import (
    DPFERMIClassifier,
    DPLogisticRegression,
    DPMLPClassifier,
    FERMIClassifier,
    HeavyTailDPRegressor,
    SemiDPLinearRegression,
    SemiLocalDPLinearRegression,
)
from sklearn_dpfair.model_selection import PrivateHyperparameterSearch
from sklearn_dpfair.pipeline import PrivatePipeline
from sklearn_dpfair.preprocessing import (
    DPKBinsDiscretizer,
    DPSimpleImputer,
    DPSplineTransformer,
    DPStandardScaler,
)
from sklearn_dpfair.utils import all_estimators, expected_failed_checks
from sklearn_dpfair.utils._instance_generator import construct_instance
from sklearn_dpfair.utils.estimator_checks import QUANTILE_CUTS

# Every exemption comes from the public mapping users pass to
# check_estimator (sklearn_dpfair.utils.estimator_checks, which gives each
# reason): the sample-weight equivalence checks of the private estimators,
# whose weighted records are clipped once (one record, not k duplicates).
# They apply to the private default instances only. HeavyTailDPRegressor's
# entries pass vacuously at its defaults (the checks' 15 rows are below its
# public minimum epsilon * n_samples for a model and too few for the
# intercept-only model's histogram to show the target, so both fits release
# coef_ = 0, intercept_ = 0); what weights do in its private fit (clipped after weighting)
# is tested in tests/linear_model/test_heavy_tail.py. The non-private limit
# of each estimator runs every check without exemption: _NON_PRIVATE_LIMITS.

# The non-private limit of each private estimator, where a weight of k is
# mathematically k duplicated rows: no noise, full batches (no Poisson
# sampling, whose batches would differ between n and n + k - 1 rows), and no
# active clipping (DPLogisticRegression does not clip at epsilon = inf;
# DPFERMIClassifier does, so its clip norm is set above any gradient of the
# checks' data). These run every common check with no exemption.
_NON_PRIVATE_LIMITS = [
    DPLogisticRegression(epsilon=np.inf, batch_size="full"),
    DPFERMIClassifier(epsilon=np.inf, batch_size="full", clip_norm=1e6),
    SemiDPLinearRegression(epsilon=np.inf),
    SemiLocalDPLinearRegression(epsilon=np.inf),
    HeavyTailDPRegressor(epsilon=np.inf),
    # The same minibatch loop without noise or clipping; full batches.
    DPMLPClassifier(epsilon=np.inf, batch_size="full"),
]


# The transformers beyond their example instances (public bounds wider than
# the checks' data, see sklearn_dpfair.utils._instance_generator).
_WITH_PUBLIC_BOUNDS = [
    DPStandardScaler(bounds="auto"),
    # Their non-private limits, where a weight of k is k duplicated rows.
    DPStandardScaler(bounds=(-1e3, 1e3), epsilon=np.inf),
    DPStandardScaler(bounds="auto", epsilon=np.inf),
    DPSimpleImputer(bounds=(-1e3, 1e3), strategy="median"),
    # Uniform cuts read no data: a weight of k is k rows, privately too.
    DPKBinsDiscretizer(bounds=(-1e3, 1e3), strategy="uniform"),
    DPSplineTransformer(bounds=(-1e3, 1e3), knots="uniform"),
    # The non-private limits of quantile cuts (exempted: see the reason).
    DPKBinsDiscretizer(bounds=(-1e3, 1e3), epsilon=np.inf),
    DPSplineTransformer(bounds=(-1e3, 1e3), epsilon=np.inf),
]


# Pipelines beyond the example instance (a private scaler and classifier):
# the classifier's non-private limit, a regressor and a transformer.
_PIPELINES = [
    PrivatePipeline(
        [
            ("scale", DPStandardScaler(bounds=(-1e3, 1e3))),
            ("model", DPLogisticRegression(epsilon=np.inf, batch_size="full")),
        ],
        epsilon=np.inf,
    ),
    PrivatePipeline(
        [
            ("scale", DPStandardScaler(bounds=(-1e3, 1e3))),
            ("model", SemiDPLinearRegression()),
        ]
    ),
    PrivatePipeline([("scale", DPStandardScaler(bounds=(-1e3, 1e3)))]),
]

# The seeded search, which passes the three checks the mapping lists for the
# unseeded one (whose split of 10 or 20 rows may leave no validation row).
_SEARCHES = [
    construct_instance(PrivateHyperparameterSearch).set_params(random_state=0)
]

# The FERMI estimators with hidden layers (a dense network): small and fast
# (a few full-batch iterations, two SGDA epochs); the checks' tiny data sets
# stop the non-convex full-batch phase early, with its ConvergenceWarning.
# A little L2 keeps the separable checks' logits within float32's exp range
# (a float32 probability that underflows to 0 has log -inf, its log-softmax
# not). The private one fits its network whatever the budget buys
# (small_budget="fit"), so the checks exercise it.
_NETWORKS = [
    FERMIClassifier(hidden_layer_sizes=(4,), alpha=1e-2, max_full_batch_iter=30),
    DPFERMIClassifier(hidden_layer_sizes=(4,), max_iter=2, small_budget="fit"),
]


def _is_private(estimator):
    return getattr(estimator, "epsilon", np.inf) != np.inf


def _expected_failed_checks(estimator):
    # Quantile cuts are exempted at epsilon=inf too (see the reason).
    if not _is_private(estimator) and type(estimator).__name__ not in QUANTILE_CUTS:
        return {}
    return expected_failed_checks(estimator)


# A private metric frame evaluates predictions (fit(y_true, y_pred)): it is
# not an estimator the checks can fit (tests/metrics check its contract).
_NOT_FITTED_ON_X = {"PrivateMetricFrame"}


def _instances():
    # Every estimator is checked at its defaults (with example public
    # arguments where it needs some; most checks seed it with
    # set_random_state), then the non-private limits and other configurations.
    # The search is over a regressor, whose private score needs only the
    # public score_bound; a classifier search needs its label set declared,
    # which no one declaration gives for the checks' several label sets
    # (tests/model_selection checks it on its own labels).
    return [
        construct_instance(cls)
        for name, cls in all_estimators()
        if name not in _NOT_FITTED_ON_X
    ] + [
        clone(est)
        for est in [
            *_NON_PRIVATE_LIMITS,
            *_WITH_PUBLIC_BOUNDS,
            *_PIPELINES,
            *_SEARCHES,
            *_NETWORKS,
        ]
    ]


# pytest >= 9 warns on generator parametrization: materialize it (as
# fairlearn's test/_sklearn_compat.py does).
_mark = parametrize_with_checks(
    _instances(), expected_failed_checks=_expected_failed_checks
)
_argnames, _argvalues = _mark.mark.args


# The checks' small data sets meet documented warnings: undeclared label and
# group sets, delta >= 1/n, no sensitive_features (one group), no public_mask
# (every row private), epsilon * n below a solver's public minimum.
@pytest.mark.filterwarnings("ignore::sklearn_dpfair.exceptions.PrivacyLeakWarning")
@pytest.mark.filterwarnings("ignore:delta=.*is not smaller than 1/n_samples")
@pytest.mark.filterwarnings("ignore:sensitive_features is None:UserWarning")
@pytest.mark.filterwarnings("ignore:public_mask was not given:UserWarning")
@pytest.mark.filterwarnings("ignore:Epsilon \\* n_samples = .* is below the minimum")
@pytest.mark.parametrize(_argnames, list(_argvalues), **_mark.mark.kwargs)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_all_estimators_discovered():
    names = dict(all_estimators())
    assert "DPLogisticRegression" in names


def test_every_private_exemption_has_a_non_private_limit():
    # An exempted estimator is still checked, without exemption, where the
    # checks must pass: its non-private limit, uniform cuts, a seeded search.
    unexempted = {
        type(est).__name__
        for est in [*_NON_PRIVATE_LIMITS, *_WITH_PUBLIC_BOUNDS, *_PIPELINES, *_SEARCHES]
        if not _expected_failed_checks(est)
    }
    exempted = {
        name
        for name, cls in all_estimators()
        if expected_failed_checks(construct_instance(cls))
    }
    assert exempted <= unexempted
    assert not any(_is_private(est) for est in _NON_PRIVATE_LIMITS)


@pytest.mark.parametrize(
    "estimator",
    [
        # The other solvers' non-private limits: the sample-weight checks
        # only (the full set runs on their private configurations in
        # tests/linear_model). Feature clipping at a bound no row reaches.
        DPLogisticRegression(
            solver="dp-frank-wolfe", l1_radius=5.0, fw_steps=20, epsilon=np.inf
        ),
        DPLogisticRegression(
            solver="output-perturbation",
            alpha=1.0,
            feature_norm_bound=1e6,
            epsilon=np.inf,
        ),
    ],
    ids=["dp-frank-wolfe", "output-perturbation"],
)
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.filterwarnings("ignore::sklearn_dpfair.exceptions.PrivacyLeakWarning")
def test_other_solvers_weight_like_duplicated_rows_without_privacy(estimator, sparse):
    check = (
        check_sample_weight_equivalence_on_sparse_data
        if sparse
        else check_sample_weight_equivalence_on_dense_data
    )
    check(type(estimator).__name__, clone(estimator))
