# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""ermi_score / renyi_correlation / demographic_parity_linf against brute force."""

import numpy as np
import pandas as pd
import pytest

from sklearn_dpfair.metrics import (
    demographic_parity_linf,
    ermi_score,
    renyi_correlation,
)


def _brute_ermi(pred, s):
    # Definition: E[p(Yhat, S) / (p(Yhat) p(S))] - 1 as an average over rows.
    pred, s = np.asarray(pred), np.asarray(s)
    n = pred.size
    total = 0.0
    for a, b in zip(pred, s):
        p_joint = np.mean((pred == a) & (s == b))
        total += p_joint / (np.mean(pred == a) * np.mean(s == b))
    return total / n - 1.0


@pytest.fixture
def data(global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    n = 300
    s = rng.integers(0, 3, n)
    y = rng.integers(0, 2, n)
    pred = (rng.random(n) < 0.3 + 0.2 * s).astype(int)
    return y, pred, s


def test_hard_ermi_matches_definition(data):
    y, pred, s = data
    assert ermi_score(y, pred, sensitive_features=s) == pytest.approx(
        _brute_ermi(pred, s)
    )


def test_ermi_is_squared_renyi_for_binary_predictions(data):
    y, pred, s = data
    rho = renyi_correlation(y, pred, sensitive_features=s)
    assert ermi_score(y, pred, sensitive_features=s) == pytest.approx(rho**2)


def test_soft_ermi_uses_probabilities(data):
    y, pred, s = data
    proba = np.column_stack([1 - pred, pred]).astype(float)
    assert ermi_score(y, y_proba=proba, sensitive_features=s) == pytest.approx(
        ermi_score(y, pred, sensitive_features=s)
    )
    proba = np.full((y.size, 2), 0.5)  # constant soft predictions: independent
    assert ermi_score(y, y_proba=proba, sensitive_features=s) == pytest.approx(0.0)


@pytest.mark.parametrize("weighting", ["label_prior", "uniform"])
def test_equalized_odds_combines_per_label_values(data, weighting):
    y, pred, s = data
    per_label = [_brute_ermi(pred[y == c], s[y == c]) for c in (0, 1)]
    prior = np.bincount(y) / y.size
    expected = prior @ per_label if weighting == "label_prior" else np.mean(per_label)
    got = ermi_score(
        y, pred, sensitive_features=s, constraint="equalized_odds", weighting=weighting
    )
    assert got == pytest.approx(expected)
    eop = ermi_score(
        y,
        pred,
        sensitive_features=s,
        constraint="equal_opportunity",
        opportunity_class=0,
    )
    assert eop == pytest.approx(per_label[0])
    rho = renyi_correlation(y, pred, sensitive_features=s, constraint="equalized_odds")
    assert rho == pytest.approx(np.sqrt(max(per_label)))


@pytest.mark.parametrize("weighting", ["label_prior", "uniform"])
def test_equalized_odds_averages_over_the_labels_with_true_rows(data, weighting):
    # A declared label, or one only predicted, has no true rows and no
    # per-label value. The uniform mean counted it as 0: 0.1111 instead of
    # 0.1667 on a two-label example with labels=[0, 1, 2].
    y, pred, s = data
    kw = dict(sensitive_features=s, constraint="equalized_odds", weighting=weighting)
    seen = ermi_score(y, pred, **kw)
    assert ermi_score(y, pred, labels=[0, 1, 2], **kw) == pytest.approx(seen)
    assert ermi_score(y, pred, labels=[2, 1, 0], **kw) == pytest.approx(seen)
    predicted = pred.copy()
    predicted[:5] = 2  # predicted, never true
    per_label = [_brute_ermi(predicted[y == c], s[y == c]) for c in (0, 1)]
    prior = np.bincount(y) / y.size
    expected = prior @ per_label if weighting == "label_prior" else np.mean(per_label)
    assert ermi_score(y, predicted, **kw) == pytest.approx(expected)


def test_duplicate_declared_labels_are_refused(data):
    y, pred, s = data
    with pytest.raises(ValueError, match="labels contains duplicate values"):
        ermi_score(y, pred, sensitive_features=s, labels=[0, 0, 1])
    with pytest.raises(ValueError, match="labels contains duplicate values"):
        renyi_correlation(y, pred, sensitive_features=s, labels=[0, 1, 1])


def test_missing_groups_are_ignored(data):
    y, pred, s = data
    sf = pd.Series(s, dtype=object)
    sf[:50] = None
    got = ermi_score(y, pred, sensitive_features=sf)
    assert got == pytest.approx(_brute_ermi(pred[50:], s[50:]))


def test_intersectional_and_multiclass():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.integers(0, 2, 500), "b": rng.integers(0, 2, 500)})
    pred = rng.integers(0, 3, 500)
    joint = frame["a"] * 2 + frame["b"]
    assert ermi_score(None, pred, sensitive_features=frame) == pytest.approx(
        _brute_ermi(pred, joint)
    )
    assert (
        ermi_score(None, pred, sensitive_features=frame)
        >= renyi_correlation(None, pred, sensitive_features=frame) ** 2 - 1e-12
    )


def test_linf_matches_definition(data):
    _, pred, s = data
    expected = max(
        abs(np.mean(pred[s == r] == j) - np.mean(pred == j))
        for r in np.unique(s)
        for j in np.unique(pred)
    )
    assert demographic_parity_linf(None, pred, sensitive_features=s) == pytest.approx(
        expected
    )


def test_input_errors(data):
    y, pred, s = data
    with pytest.raises(ValueError, match="exactly one of"):
        ermi_score(y, sensitive_features=s)
    with pytest.raises(ValueError, match="y_true is needed"):
        ermi_score(None, pred, sensitive_features=s, constraint="equalized_odds")
    with pytest.raises(ValueError, match="sensitive_features has 2 rows"):
        ermi_score(y, pred, sensitive_features=[0, 1])
    with pytest.raises(ValueError, match="columns"):
        ermi_score(
            y, y_proba=np.ones((y.size, 3)) / 3, sensitive_features=s, labels=[0, 1]
        )


@pytest.mark.parametrize("score", [ermi_score, renyi_correlation])
@pytest.mark.parametrize("constraint", ["equalized_odds", "equal_opportunity"])
def test_proba_columns_are_named_by_labels_not_guessed(data, score, constraint):
    # Equal opportunity read on the positive rows only: y_true shows one
    # label, y_proba has two columns. Guessing the labels 0 .. 1 put every
    # row outside them and returned 0.0.
    y, pred, s = data
    y = np.where(y == 1, "yes", "no")
    proba = np.column_stack([1 - pred, pred]).astype(float)
    pos = y == "yes"
    kwargs = {"sensitive_features": s[pos], "constraint": constraint}
    with pytest.raises(ValueError, match=r"pass labels=\[\.\.\.\]"):
        score(y[pos], y_proba=proba[pos], **kwargs)
    declared = score(y[pos], y_proba=proba[pos], labels=["no", "yes"], **kwargs)
    hard = score(y[pos], np.array(["no", "yes"])[pred[pos]], **kwargs)
    assert declared == pytest.approx(hard) and declared > 0
    # A true label outside the declared ones is refused, not dropped.
    with pytest.raises(ValueError, match="y_true contains values that are not"):
        score(
            y,
            y_proba=proba,
            labels=["yes", "maybe"],
            sensitive_features=s,
            constraint=constraint,
            opportunity_class="yes",
        )


def test_unknown_opportunity_class_names_the_labels_parameter(data):
    y, pred, s = data
    with pytest.raises(ValueError, match=r"declare them with labels=\[") as info:
        ermi_score(
            y,
            pred,
            sensitive_features=s,
            constraint="equal_opportunity",
            opportunity_class=5,
        )
    assert "classes=" not in str(info.value)


@pytest.mark.parametrize("score", [ermi_score, renyi_correlation])
@pytest.mark.parametrize(
    "proba, problem",
    [
        # Rows of (2, -1) gave an ERMI of 11.6, where at most 1 is possible.
        ([[2.0, -1.0], [2.0, -1.0], [-1.0, 2.0], [0.5, 0.5]], "negative entries"),
        ([[10.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0]], "do not sum to 1"),
        ([[0.5, 0.5], [0.5, 0.5], [0.5, 0.5], [0.3, 0.6]], "do not sum to 1"),
        ([[np.nan, 1.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0]], "NaN"),
        ([[np.inf, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0]], "infinity"),
    ],
)
def test_proba_must_be_probabilities(score, proba, problem):
    groups = ["a", "a", "b", "b"]
    with pytest.raises(ValueError, match=f"y_proba.*{problem}"):
        score(None, y_proba=proba, sensitive_features=groups)


@pytest.mark.parametrize("score", [ermi_score, renyi_correlation])
def test_proba_rows_summing_to_one_in_float32_are_accepted(score):
    # float32 probabilities sum to 1 only within float32's precision.
    proba = np.array([[0.1, 0.2, 0.7], [1 / 3, 1 / 3, 1 / 3]] * 2, dtype=np.float32)
    value = score(None, y_proba=proba, sensitive_features=["a", "a", "b", "b"])
    assert value == pytest.approx(0.0, abs=1e-6)


def test_equal_opportunity_with_one_label_names_what_to_pass():
    # It said "with more than two classes", of a single label.
    kwargs = dict(sensitive_features=[0, 0, 1, 1], constraint="equal_opportunity")
    with pytest.raises(ValueError, match="fewer than two classes") as info:
        ermi_score([1, 1, 1, 1], [1, 1, 1, 1], **kwargs)
    assert "labels=[negative, positive]" in str(info.value)
    assert "opportunity_class=" in str(info.value)
    assert ermi_score([1, 1, 1, 1], [1, 1, 1, 1], labels=[0, 1], **kwargs) == 0.0


def test_an_undeclared_opportunity_class_lists_declared_labels():
    # Declared labels are the caller's, not read from y: the message lists
    # them instead of saying they are private.
    y = np.array([0, 1, 0, 1])
    groups = np.array([0, 0, 1, 1])
    with pytest.raises(ValueError, match=r"is not one of the classes \[0, 1\]"):
        ermi_score(
            y, y, sensitive_features=groups, labels=[0, 1],
            constraint="equal_opportunity", opportunity_class=5,
        )
    with pytest.raises(ValueError, match="read from y"):
        ermi_score(
            y, y, sensitive_features=groups,
            constraint="equal_opportunity", opportunity_class=5,
        )


@pytest.mark.parametrize("score", [ermi_score, renyi_correlation])
@pytest.mark.parametrize(
    "constraint, labels",
    [
        ("demographic_parity", None),
        ("equalized_odds", None),
        ("equalized_odds", [0, 1]),
        ("equal_opportunity", [0, 1]),
    ],
)
def test_empty_input_scores_zero_for_every_constraint(score, constraint, labels):
    # No row, no dependence on the group: every score is 0.0, as when every
    # row's group is missing (renyi_correlation under equalized odds took
    # the max of no label's value).
    empty = np.array([], dtype=int)
    value = score(
        empty, empty, sensitive_features=[], constraint=constraint, labels=labels
    )
    assert value == 0.0
