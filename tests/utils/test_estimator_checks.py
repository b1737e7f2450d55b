# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The published mapping of expected failures makes check_estimator pass."""

import pytest
from sklearn.utils.estimator_checks import check_estimator

from sklearn_dpfair import DPLogisticRegression, FERMIClassifier
from sklearn_dpfair.utils import all_estimators
from sklearn_dpfair.utils._instance_generator import construct_instance
from sklearn_dpfair.utils.estimator_checks import expected_failed_checks

# What docs/install.rst states, estimator by estimator, at the defaults:
# the checks that fail (by design), and those listed that pass (vacuously).
_FAIL_AT_DEFAULTS = {
    "DPFERMIClassifier": {
        "check_sample_weight_equivalence_on_dense_data",
        "check_sample_weight_equivalence_on_sparse_data",
    },
    "DPLogisticRegression": {
        "check_sample_weight_equivalence_on_dense_data",
        "check_sample_weight_equivalence_on_sparse_data",
    },
    # Dense X only: the sparse check is skipped.
    "DPMLPClassifier": {"check_sample_weight_equivalence_on_dense_data"},
    "SemiDPLinearRegression": {
        "check_sample_weight_equivalence_on_dense_data",
        "check_sample_weight_equivalence_on_sparse_data",
    },
    # Dense input only: the sparse check does not run.
    "SemiLocalDPLinearRegression": {"check_sample_weight_equivalence_on_dense_data"},
    "FERMIClassifier": set(),
    "HeavyTailDPRegressor": set(),
    # Each weight capped at 1 in the released counts and sums, or in the
    # quantiles' counts (dense X only).
    "DPStandardScaler": {"check_sample_weight_equivalence_on_dense_data"},
    "DPKBinsDiscretizer": {"check_sample_weight_equivalence_on_dense_data"},
    "DPSplineTransformer": {"check_sample_weight_equivalence_on_dense_data"},
    # Their fit takes no sample_weight.
    "DPOneHotEncoder": set(),
    "DPQuantileTransformer": set(),
    "DPSimpleImputer": set(),
    # None always; what the mapping lists for them fails at some draws.
    "PrivatePipeline": set(),
    "PrivateHyperparameterSearch": set(),
}

# Not an estimator the checks can fit: it evaluates predictions.
_NOT_FITTED_ON_X = {"PrivateMetricFrame"}


def test_every_public_estimator_is_described():
    described = set(_FAIL_AT_DEFAULTS) | _NOT_FITTED_ON_X
    assert described == {name for name, _ in all_estimators()}


@pytest.mark.filterwarnings("ignore::sklearn_dpfair.exceptions.PrivacyLeakWarning")
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize(
    "name, cls",
    [(n, c) for n, c in all_estimators() if n not in _NOT_FITTED_ON_X],
    ids=lambda v: str(v),
)
def test_check_estimator_passes_with_the_mapping(name, cls):
    # Exactly the call the documentation gives users (about 2 s each).
    est = construct_instance(cls)
    mapping = expected_failed_checks(est)
    results = check_estimator(est, expected_failed_checks=mapping, on_skip=None)
    status = {r["check_name"]: r["status"] for r in results}
    assert "failed" not in status.values()
    # The mapping is precise: it names checks that exist, each with a reason,
    # and what fails at the defaults is exactly what the docs say.
    assert set(mapping) <= set(status)
    assert all(isinstance(v, str) and len(v) > 40 for v in mapping.values())
    # A check whose outcome depends on the noise draw may xfail or pass.
    drawn = {c for c, reason in mapping.items() if reason.startswith("Depends on")}
    xfailed = {c for c, s in status.items() if s == "xfail"}
    assert xfailed - drawn == _FAIL_AT_DEFAULTS[name] - drawn
    # HeavyTailDPRegressor's entries pass vacuously at the defaults (too few
    # rows for its minimum epsilon * n_samples), as their reason says.
    # The meta-estimators' entries fail at some noise or split draws only.
    for check in set(mapping) - _FAIL_AT_DEFAULTS[name]:
        if mapping[check].startswith("Depends on"):
            assert status[check] in ("passed", "xfail")
        else:
            assert status[check] == "passed" and "vacuously" in mapping[check]


@pytest.mark.filterwarnings("ignore::sklearn_dpfair.exceptions.PrivacyLeakWarning")
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_without_the_mapping_check_estimator_raises():
    # The failure the mapping is for (so the test above cannot pass vacuously).
    with pytest.raises(AssertionError):
        check_estimator(DPLogisticRegression(), on_skip=None)


def test_fermi_classifier_is_listed_only_when_it_clips():
    assert expected_failed_checks(FERMIClassifier()) == {}
    clipped = expected_failed_checks(FERMIClassifier(clip_norm=1.0))
    assert set(clipped) == {
        "check_sample_weight_equivalence_on_dense_data",
        "check_sample_weight_equivalence_on_sparse_data",
    }
    assert expected_failed_checks(object()) == {}
