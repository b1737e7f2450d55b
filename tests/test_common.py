# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""scikit-learn's common checks over every public estimator, found automatically."""

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_dpfair.utils import all_estimators

# Every exemption, in one place, with its reason. Keyed by estimator class
# name, then check name. HeavyTailDPRegressor has none: its sample-weight
# checks fit 15 rows at epsilon = 1, below its public minimum
# epsilon * n_samples, so both fits release the same public zero model;
# what weights do in a private fit (clipped after weighting) and without
# privacy (a weight of 2 is a duplicated row) is tested in
# tests/linear_model/test_heavy_tail.py.
_WEIGHT_IS_NOT_A_DUPLICATE = (
    "A private fit clips each record's weighted gradient once, so a record "
    "of weight k is one record, not k duplicates: its influence is bounded "
    "by the clip norm, and the noise, the Poisson batches and the "
    "accounting are those of n records. Equivalence to repeated rows would "
    "break the per-record guarantee. Uniform weights == unweighted (bit for "
    "bit), zero weight == no gradient, and the clipped-after-weighting "
    "sensitivity are tested in tests/linear_model/test_sample_weight.py."
)
_NO_UNIQUE_MINIMIZER = (
    "The check fits 15 rows in 30 features at the default alpha = 0: the data "
    "are separable, the loss has no minimizer, and the weighted and the "
    "repeated fits stop at different points of the same flat valley. With "
    "alpha > 0 a weight of 2 is a duplicated row up to the solver's "
    "tolerance, tested in tests/linear_model/test_sample_weight.py."
)
EXPECTED_FAILED_CHECKS = {
    "DPLogisticRegression": {
        "check_sample_weight_equivalence_on_dense_data": _WEIGHT_IS_NOT_A_DUPLICATE,
        # The default solver takes sparse X: the same check on CSR input.
        "check_sample_weight_equivalence_on_sparse_data": _WEIGHT_IS_NOT_A_DUPLICATE,
    },
    "DPFERMIClassifier": {
        "check_sample_weight_equivalence_on_dense_data": _WEIGHT_IS_NOT_A_DUPLICATE,
        # Sparse X is accepted: the same check on CSR input.
        "check_sample_weight_equivalence_on_sparse_data": _WEIGHT_IS_NOT_A_DUPLICATE,
    },
    "SemiDPLinearRegression": {
        "check_sample_weight_equivalence_on_dense_data": _WEIGHT_IS_NOT_A_DUPLICATE,
        # Every solver takes sparse X: the same check on CSR input.
        "check_sample_weight_equivalence_on_sparse_data": _WEIGHT_IS_NOT_A_DUPLICATE,
    },
    "FERMIClassifier": {
        "check_sample_weight_equivalence_on_dense_data": _NO_UNIQUE_MINIMIZER,
        "check_sample_weight_equivalence_on_sparse_data": _NO_UNIQUE_MINIMIZER,
    },
}


def _expected_failed_checks(estimator):
    return EXPECTED_FAILED_CHECKS.get(type(estimator).__name__, {})


def _instances():
    # Every estimator is checked at its defaults, with a fixed seed set by
    # the checks themselves (set_random_state).
    return [cls() for _, cls in all_estimators()]


# pytest >= 9 warns on generator parametrization: materialize it (as
# fairlearn's test/_sklearn_compat.py does).
_mark = parametrize_with_checks(
    _instances(), expected_failed_checks=_expected_failed_checks
)
_argnames, _argvalues = _mark.mark.args


@pytest.mark.filterwarnings("ignore::sklearn_dpfair.exceptions.PrivacyLeakWarning")
@pytest.mark.filterwarnings("ignore:delta=.*is not smaller than 1/n_samples")
@pytest.mark.parametrize(_argnames, list(_argvalues), **_mark.mark.kwargs)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_all_estimators_discovered():
    names = dict(all_estimators())
    assert "DPLogisticRegression" in names
