"""The metrics refuse label columns they cannot read, naming them."""

import numpy as np
import pytest

from sklearn_dpfair.metrics import (
    demographic_parity_linf,
    ermi_score,
    renyi_correlation,
)

GROUPS = ["a", "a", "b", "b"]

_METRICS = {
    "demographic_parity_linf": lambda y_true, y_pred: demographic_parity_linf(
        y_true, y_pred, sensitive_features=GROUPS
    ),
    "ermi_score": lambda y_true, y_pred: ermi_score(
        y_true, y_pred, sensitive_features=GROUPS
    ),
    "ermi_score_eo": lambda y_true, y_pred: ermi_score(
        y_true, y_pred, sensitive_features=GROUPS, constraint="equalized_odds"
    ),
    "renyi_correlation_eo": lambda y_true, y_pred: renyi_correlation(
        y_true, y_pred, sensitive_features=GROUPS, constraint="equalized_odds"
    ),
}


@pytest.mark.parametrize("metric", _METRICS)
def test_complex_predictions_are_refused_without_showing_them(metric):
    # scikit-learn's message printed the whole array ("[0.+0.123j 1.+0.j ...").
    with pytest.raises(ValueError, match="^y_pred: Complex data") as info:
        _METRICS[metric]([0, 1, 0, 1], np.array([0.123j, 1, 0, 1]))
    assert "0.123" not in str(info.value)


@pytest.mark.parametrize("metric", _METRICS)
@pytest.mark.parametrize(
    "y_pred",
    [[1, np.nan, 0, 1], np.array([1, None, 0, 1], dtype=object)],
    ids=["nan", "none"],
)
def test_a_missing_prediction_is_refused_naming_y_pred(metric, y_pred):
    # demographic_parity_linf counted NaN as a predicted class (0.25); None
    # raised numpy's bare "'<' not supported between ...".
    with pytest.raises(ValueError, match="^y_pred holds a missing label"):
        _METRICS[metric]([0, 1, 0, 1], y_pred)


@pytest.mark.parametrize("metric", _METRICS)
def test_predictions_of_several_types_are_refused_naming_y_pred(metric):
    y_pred = np.array(["x", 1, 0, 1], dtype=object)
    with pytest.raises(TypeError, match="^y_pred holds labels of several types"):
        _METRICS[metric]([0, 1, 0, 1], y_pred)


@pytest.mark.parametrize("metric", ["ermi_score_eo", "renyi_correlation_eo"])
def test_true_labels_are_checked_where_the_constraint_reads_them(metric):
    y_true = np.array(["x", 1, 0, 1], dtype=object)
    with pytest.raises(TypeError, match="^y_true holds labels of several types"):
        _METRICS[metric](y_true, [0, 1, 0, 1])
    with pytest.raises(TypeError, match="y_true and y_pred hold labels of different"):
        _METRICS[metric](["n", "y", "n", "y"], [0, 1, 1, 0])


def test_demographic_parity_reads_no_true_label():
    # String true labels made strings of the integer predictions, which then
    # matched no label: "y_pred contains values that are not in labels".
    strings = ermi_score(["n", "y", "n", "y"], [0, 1, 1, 0], sensitive_features=GROUPS)
    assert strings == ermi_score(None, [0, 1, 1, 0], sensitive_features=GROUPS)
    assert renyi_correlation(
        [None, "y", 3, "y"], [1, 1, 0, 0], sensitive_features=GROUPS
    ) == pytest.approx(1.0)
