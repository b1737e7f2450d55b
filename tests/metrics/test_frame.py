# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""PrivateMetricFrame: its release, its accounting, its values and intervals.

* privacy: the count vector moves by exactly one cell between add/remove
  neighbours (L2 distance 1) and by at most two (distance sqrt(2)) under
  replace-one, whatever the record holds; an undeclared group or label is
  refused without being shown; the record is the same on neighbours; the
  fit makes exactly the release its event accounts; epsilon recomputed from
  ``dp_event_`` (and by dp-accounting's PLD accountant directly) is within
  the budget; the plan hook gives the fitted event;
* correctness: ``epsilon=inf`` equals fairlearn's ``MetricFrame`` and
  fairness functions exactly (rates of integer counts are one division),
  except for rates with a zero denominator (NaN here, 0 in fairlearn);
  error falls as epsilon rises; denominators near zero give NaN with a note,
  never an exception, and a truly empty one is reported at the normal tail
  rate;
* intervals: their coverage of the population rate, by simulation (a light
  form by default, the full grid with ``DPFAIR_FULL=1``); the intervals of
  the comparisons contain their reported values.
"""

import math
import os
import warnings

import dp_accounting
import numpy as np
import pandas as pd
import pytest
from dp_accounting import pld
from fairlearn.metrics import (
    MetricFrame,
    demographic_parity_difference,
    equalized_odds_difference,
    false_positive_rate,
    selection_rate,
    true_positive_rate,
)
from sklearn.base import clone
from sklearn.exceptions import DataConversionWarning
from sklearn.metrics import accuracy_score

from sklearn_dpfair.metrics import PrivateMetricFrame
from sklearn_dpfair.metrics._confusion import MIN_DENOMINATOR_SDS, metric_values
from sklearn_dpfair.privacy import PrivacyLedger, epsilon_of
from sklearn_dpfair.privacy._mechanism import observe_privatize
from sklearn_dpfair.privacy._releases import logged_releases

FULL = os.environ.get("DPFAIR_FULL") == "1"
GROUPS = ["a", "b", "c"]
FAIRLEARN_METRICS = {
    "accuracy": accuracy_score,
    "selection_rate": selection_rate,
    "true_positive_rate": true_positive_rate,
    "false_positive_rate": false_positive_rate,
}


def _data(n, rng, groups=GROUPS, p=None):
    s = rng.choice(groups, size=n, p=p)
    y_true = rng.integers(0, 2, size=n)
    y_pred = np.where(rng.random(n) < 0.75, y_true, 1 - y_true)
    return y_true, y_pred, s


class _Spy:
    """Keeps the vector every privatize call sees before its noise."""

    def __init__(self):
        self.sums = []

    def before_noise(self, mechanism, clipped_sum):
        self.sums.append((mechanism, np.array(clipped_sum, copy=True)))
        return clipped_sum

    def after_noise(self, mechanism, noisy_sum):
        pass


def _released_vector(frame, y_true, y_pred, s):
    with observe_privatize(_Spy()) as spy:
        frame.fit(y_true, y_pred, sensitive_features=s)
    assert len(spy.sums) == 1
    mechanism, vector = spy.sums[0]
    assert mechanism.clip_norm == 1.0
    return vector


# -- privacy -------------------------------------------------------------------


@pytest.mark.parametrize("adjacency", ["add", "remove", "replace"])
def test_count_vector_sensitivity_on_neighbours(adjacency, global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    frame = PrivateMetricFrame(GROUPS, epsilon=1.0, random_state=0)
    for _ in range(20):
        n = int(rng.integers(1, 40))
        # Skewed groups, so that some are empty or have one row.
        y_true, y_pred, s = _data(n, rng, p=[0.9, 0.09, 0.01])
        record = (int(rng.integers(2)), int(rng.integers(2)), rng.choice(GROUPS))
        if adjacency == "add":
            other = (
                np.append(y_true, record[0]),
                np.append(y_pred, record[1]),
                np.append(s, record[2]),
            )
        elif adjacency == "remove":
            i = int(rng.integers(n))
            if n == 1:
                continue
            other = tuple(np.delete(a, i) for a in (y_true, y_pred, s))
        else:
            i = int(rng.integers(n))
            other = tuple(a.copy() for a in (y_true, y_pred, s))
            for array, value in zip(other, record):
                array[i] = value
        first = _released_vector(frame, y_true, y_pred, s)
        record_first = frame.privacy_record_
        second = _released_vector(frame, *other)
        squared = int(np.sum((first - second) ** 2))  # integer counts: exact
        if adjacency == "replace":
            assert squared in (0, 2)  # L2 distance <= sqrt(2)
        else:
            assert squared == 1  # one cell, by one: L2 sensitivity 1
        assert np.abs(first - second).max() <= 1
        # The record is fixed before the data is read: the same on both.
        assert frame.privacy_record_ == record_first


def test_undeclared_group_of_one_record_is_refused_without_showing_it():
    rng = np.random.default_rng(0)
    y_true, y_pred, s = _data(50, rng)
    s = s.astype(object)
    s[7] = "only-one-of-a-kind"
    frame = PrivateMetricFrame(GROUPS, random_state=0)
    with pytest.raises(ValueError, match="sensitive_features") as info:
        frame.fit(y_true, y_pred, sensitive_features=s)
    assert "only-one-of-a-kind" not in str(info.value)
    assert not hasattr(frame, "counts_")


@pytest.mark.parametrize("name", ["y_true", "y_pred"])
def test_undeclared_label_is_refused_without_showing_it(name):
    rng = np.random.default_rng(0)
    y_true, y_pred, s = _data(50, rng)
    data = {"y_true": y_true, "y_pred": y_pred}
    data[name] = data[name].copy()
    data[name][3] = 97
    with pytest.raises(ValueError, match=name) as info:
        PrivateMetricFrame(GROUPS).fit(
            data["y_true"], data["y_pred"], sensitive_features=s
        )
    assert "97" not in str(info.value)


@pytest.mark.parametrize("name", ["y_true", "y_pred"])
def test_missing_label_of_a_string_column_is_refused_as_undeclared(name):
    # A pd.NA in a nullable "string" column is no declared class, as a NaN
    # or an Int64 NA is; comparing it with the classes raised "boolean value
    # of NA is ambiguous".
    rng = np.random.default_rng(0)
    _, _, s = _data(50, rng)
    labels = {n: rng.choice(["no", "yes"], size=50) for n in ("y_true", "y_pred")}
    labels[name] = pd.Series(labels[name], dtype="string")
    labels[name][7] = pd.NA
    frame = PrivateMetricFrame(GROUPS, classes=("no", "yes"), random_state=0)
    with pytest.raises(ValueError, match=f"{name} contains labels that are not"):
        frame.fit(labels["y_true"], labels["y_pred"], sensitive_features=s)
    assert not hasattr(frame, "counts_")


def test_none_may_be_a_declared_class():
    # None compares as a label (unlike pd.NA): declared, it is counted.
    y_true = np.array([None, "b", None, "b"] * 10, dtype=object)
    y_pred = np.array(["b", "b", None, None] * 10, dtype=object)
    frame = PrivateMetricFrame([0, 1], classes=(None, "b"), epsilon=np.inf)
    frame.fit(y_true, y_pred, sensitive_features=np.arange(40) % 2)
    assert frame.counts_.to_numpy().sum() == 40


def test_string_labels_with_declared_classes():
    y_true = np.array(["no", "yes", "yes", "no"])
    y_pred = np.array(["no", "yes", "no", "no"])
    frame = PrivateMetricFrame(
        ["x"], classes=["no", "yes"], epsilon=np.inf, metrics="true_positive_rate"
    ).fit(y_true, y_pred, sensitive_features=["x"] * 4)
    assert frame.overall == 0.5


def test_fitted_classes_do_not_alias_the_parameter():
    classes = np.array(["no", "yes"])
    frame = PrivateMetricFrame(["x"], classes=classes, epsilon=np.inf).fit(
        np.array(["no", "yes"]), np.array(["no", "no"]), sensitive_features=["x"] * 2
    )
    classes[:] = ["yes", "no"]
    assert frame.classes_.tolist() == ["no", "yes"]


@pytest.mark.parametrize("accountant", ["rdp", "pld"])
@pytest.mark.parametrize("epsilon", [0.3, 1.0, 4.0])
def test_epsilon_recomputed_from_dp_event(accountant, epsilon):
    rng = np.random.default_rng(0)
    y_true, y_pred, s = _data(500, rng)
    frame = PrivateMetricFrame(
        GROUPS, epsilon=epsilon, delta=1e-6, accountant=accountant
    ).fit(y_true, y_pred, sensitive_features=s)
    assert frame.dp_event_ == dp_accounting.GaussianDpEvent(frame.noise_multiplier_)
    assert frame.privacy_record_.clip_norm == 1.0
    assert frame.noise_std_ == frame.noise_multiplier_
    recomputed = epsilon_of(frame.dp_event_, frame.delta_, accountant)
    assert recomputed == frame.epsilon_ <= epsilon * (1 + 1e-9)
    # dp-accounting's PLD accountant, built independently, is the tightest
    # valid bound: the claim is never below it.
    reference = pld.PLDAccountant()
    reference.compose(dp_accounting.GaussianDpEvent(frame.noise_multiplier_))
    assert frame.epsilon_ >= reference.get_epsilon(1e-6) * (1 - 1e-3)
    assert frame.adjacency_ == "add_remove"


@pytest.mark.parametrize("accountant", ["rdp", "pld"])
def test_plan_is_the_fitted_event(accountant):
    rng = np.random.default_rng(0)
    y_true, y_pred, s = _data(300, rng)
    for epsilon in (0.5, 2.0, np.inf):
        frame = PrivateMetricFrame(GROUPS, epsilon=epsilon, accountant=accountant)
        plan = frame.privacy_plan(300, 1)
        frame.fit(y_true, y_pred, sensitive_features=s)
        assert plan.dp_event == frame.dp_event_
        assert plan.epsilon == frame.epsilon_
        assert plan.adjacency == frame.adjacency_ == "add_remove"
        # The number of rows does not enter the event.
        assert frame.privacy_plan(7, 1).dp_event == plan.dp_event


def test_fit_makes_exactly_the_accounted_release():
    rng = np.random.default_rng(0)
    y_true, y_pred, s = _data(300, rng)
    frame = PrivateMetricFrame(GROUPS, epsilon=1.0)
    with logged_releases() as log:
        frame.fit(y_true, y_pred, sensitive_features=s)
    assert dict(log.counts) == {("gaussian", frame.noise_multiplier_): 1}
    # Reading every value and interval afterwards releases nothing more.
    with logged_releases() as log:
        frame.by_group, frame.overall, frame.by_group_ci, frame.difference_ci()
        frame.equalized_odds_difference_ci()
    assert not log.counts


def test_ledger_records_the_release():
    rng = np.random.default_rng(0)
    y_true, y_pred, s = _data(300, rng)
    ledger = PrivacyLedger()
    frame = PrivateMetricFrame(GROUPS, epsilon=1.0, accountant=ledger)
    frame.fit(y_true, y_pred, sensitive_features=s)
    frame.fit(y_true, y_pred, sensitive_features=s)
    assert len(ledger) == 2
    assert {e.source for e in ledger.entries} == {"PrivateMetricFrame"}
    assert ledger.entries[0].dp_event == frame.dp_event_
    assert frame.epsilon_ < ledger.total_epsilon() < 2 * frame.epsilon_
    assert clone(frame).accountant is ledger


def test_unseeded_fits_draw_fresh_noise_and_seeded_fits_repeat():
    rng = np.random.default_rng(0)
    y_true, y_pred, s = _data(300, rng)
    fit = lambda seed: PrivateMetricFrame(GROUPS, random_state=seed).fit(
        y_true, y_pred, sensitive_features=s
    )
    assert not fit(None).counts_.equals(fit(None).counts_)
    assert fit(3).counts_.equals(fit(3).counts_)
    assert fit(None).privacy_record_.seed is None
    assert fit(3).privacy_record_.seed is not None


# -- values ----------------------------------------------------------------------


def _fairlearn_frame(y_true, y_pred, s, metrics=FAIRLEARN_METRICS):
    return MetricFrame(
        metrics=metrics, y_true=y_true, y_pred=y_pred, sensitive_features=s
    )


def test_parity_with_fairlearn_at_epsilon_inf(global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    y_true, y_pred, s = _data(997, rng)
    s = pd.Series(s, name="group")
    ours = PrivateMetricFrame(["c", "a", "b"], epsilon=np.inf).fit(
        y_true, y_pred, sensitive_features=s
    )
    theirs = _fairlearn_frame(y_true, y_pred, s)
    # Every value is a ratio of integer counts, one division in both: equal
    # to the last bit (no reduction of floats in between).
    by_group = ours.by_group.loc[theirs.by_group.index]
    assert by_group.index.name == "group"
    np.testing.assert_array_equal(by_group.to_numpy(), theirs.by_group.to_numpy())
    np.testing.assert_array_equal(ours.overall.to_numpy(), theirs.overall.to_numpy())
    for name in ("group_min", "group_max"):
        np.testing.assert_array_equal(
            getattr(ours, name)().to_numpy(), getattr(theirs, name)().to_numpy()
        )
    for method in ("between_groups", "to_overall"):
        np.testing.assert_array_equal(
            ours.difference(method).to_numpy(), theirs.difference(method).to_numpy()
        )
        np.testing.assert_array_equal(
            ours.ratio(method).to_numpy(), theirs.ratio(method).to_numpy()
        )
        assert ours.demographic_parity_difference(method) == (
            demographic_parity_difference(
                y_true, y_pred, sensitive_features=s, method=method
            )
        )
        assert ours.equalized_odds_difference(method) == equalized_odds_difference(
            y_true, y_pred, sensitive_features=s, method=method
        )
    assert ours.epsilon_ == math.inf and ours.noise_std_ == 0.0
    np.testing.assert_array_equal(
        ours.counts_.sum(axis=1).loc[theirs.by_group.index].to_numpy(),
        s.value_counts().loc[theirs.by_group.index].to_numpy(),
    )


def test_record_names_the_exact_counts_at_epsilon_inf_only():
    y_true, y_pred, s = _data(200, np.random.default_rng(0))
    frame = PrivateMetricFrame(GROUPS, epsilon=np.inf)
    frame.fit(y_true, y_pred, sensitive_features=s)
    # No noise is drawn at epsilon=inf: the record names the exact counts
    # that ran, not the Gaussian release they stand in for.
    exact = (
        "PrivateMetricFrame: non-private limit (epsilon=inf, no noise): exact "
        "per-group confusion counts (TP, FP, TN, FN)"
    )
    assert isinstance(frame.dp_event_, dp_accounting.NonPrivateDpEvent)
    assert frame.privacy_record_.mechanism == exact
    assert frame.privacy_plan(200, 1).mechanism == exact
    assert "Gaussian" not in frame.privacy_summary()
    frame.set_params(epsilon=1.0).fit(y_true, y_pred, sensitive_features=s)
    assert frame.privacy_record_.mechanism == (
        "PrivateMetricFrame: per-group confusion counts (TP, FP, TN, FN), one "
        "Gaussian release of L2 sensitivity 1"
    )


def test_parity_single_metric_and_intersectional_groups():
    rng = np.random.default_rng(1)
    y_true, y_pred, sex = _data(600, rng, groups=["F", "M"])
    race = rng.choice(["u", "v"], size=600)
    sf = pd.DataFrame({"sex": sex, "race": race})
    groups = [(a, b) for a in ("F", "M") for b in ("u", "v")]
    ours = PrivateMetricFrame(groups, metrics="selection_rate", epsilon=np.inf).fit(
        y_true, y_pred, sensitive_features=sf
    )
    theirs = _fairlearn_frame(y_true, y_pred, sf, metrics=selection_rate)
    assert isinstance(ours.overall, float) and ours.overall == theirs.overall
    assert list(ours.by_group.index.names) == ["sex", "race"]
    np.testing.assert_array_equal(
        ours.by_group.loc[theirs.by_group.index].to_numpy(),
        theirs.by_group.to_numpy(),
    )
    assert ours.difference() == theirs.difference()


def test_ratio_to_overall_equals_fairlearn_to_the_last_bit():
    # fairlearn's ratio to overall is 1 / (group / overall) above 1, which
    # differs from overall / group in the last bit for about half the draws.
    for seed in range(20):
        rng = np.random.default_rng(seed)
        y_true, y_pred, s = _data(200, rng)
        y_pred = rng.integers(0, 2, size=200)
        ours = PrivateMetricFrame(GROUPS, epsilon=np.inf).fit(
            y_true, y_pred, sensitive_features=s
        )
        theirs = _fairlearn_frame(y_true, y_pred, s)
        for method in ("between_groups", "to_overall"):
            np.testing.assert_array_equal(
                ours.ratio(method).to_numpy(), theirs.ratio(method).to_numpy()
            )


def test_zero_denominator_is_nan_where_fairlearn_gives_zero():
    # The one exception to the parity at epsilon=inf: group "c" has no
    # positive row, so its true positive rate has no row to be measured on.
    # fairlearn reports 0 and its TPR difference is 1 - 0; here it is NaN
    # and skipped, and the difference is 1 - 0.5.
    s = np.array(["a"] * 4 + ["b"] * 4 + ["c"] * 2)
    y_true = np.array([1, 1, 0, 0, 1, 1, 0, 0, 0, 0])
    y_pred = np.array([1, 0, 0, 0, 1, 1, 0, 1, 0, 1])
    ours = PrivateMetricFrame(["a", "b", "c"], epsilon=np.inf).fit(
        y_true, y_pred, sensitive_features=s
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn's zero-division warning
        theirs = _fairlearn_frame(y_true, y_pred, s)
        theirs_eod = equalized_odds_difference(y_true, y_pred, sensitive_features=s)
    assert theirs.by_group.loc["c", "true_positive_rate"] == 0.0
    assert np.isnan(ours.by_group.loc["c", "true_positive_rate"])
    assert any("true_positive_rate of c" in note for note in ours.notes_)
    assert theirs.difference()["true_positive_rate"] == theirs_eod == 1.0
    assert ours.difference()["true_positive_rate"] == 0.5
    assert ours.equalized_odds_difference() == 0.5
    # The other rates have no zero denominator: equal to fairlearn's.
    others = ["accuracy", "selection_rate", "false_positive_rate"]
    np.testing.assert_array_equal(
        ours.by_group[others].to_numpy(), theirs.by_group[others].to_numpy()
    )


def test_error_falls_as_epsilon_rises():
    rng = np.random.default_rng(0)
    y_true, y_pred, s = _data(3000, rng)
    truth = PrivateMetricFrame(GROUPS, epsilon=np.inf).fit(
        y_true, y_pred, sensitive_features=s
    )
    errors = []
    for epsilon in (0.1, 1.0, 10.0):
        runs = [
            PrivateMetricFrame(GROUPS, epsilon=epsilon, n_boot=1, random_state=seed)
            .fit(y_true, y_pred, sensitive_features=s)
            .by_group
            for seed in range(30)
        ]
        # An unmeasurable (NaN) rate counts as the largest error, 1.
        errors.append(
            np.mean([np.abs(r - truth.by_group).fillna(1.0).to_numpy() for r in runs])
        )
    # The noise scales about as 1/epsilon: factors of 10 leave a wide margin.
    assert errors[0] > 2 * errors[1] > 4 * errors[2]


def test_empty_and_tiny_groups_give_nan_with_a_note_not_an_error():
    rng = np.random.default_rng(0)
    y_true, y_pred, s = _data(3000, rng, groups=["a", "b"])
    s = s.astype(object)
    s[:5] = "tiny"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        exact = PrivateMetricFrame(["a", "b", "tiny", "empty"], epsilon=np.inf).fit(
            y_true, y_pred, sensitive_features=s
        )
        noisy = PrivateMetricFrame(
            ["a", "b", "tiny", "empty"], epsilon=1.0, random_state=0
        ).fit(y_true, y_pred, sensitive_features=s)
        lower, upper = noisy.by_group_ci
    assert exact.by_group.loc["empty"].isna().all()
    assert not exact.by_group.loc["tiny"].isna().any()  # exact: 5 rows suffice
    assert noisy.by_group.loc["empty"].isna().all()
    assert not noisy.by_group.loc[["a", "b"]].isna().any().any()
    # Unmeasurable: the interval spans nearly the whole range of a rate; 5
    # rows are no better (noise of std 4 on each count).
    assert ((upper - lower).loc[["tiny", "empty"]] > 0.9).all().all()
    assert any("empty" in note and "too small" in note for note in noisy.notes_)
    assert any("empty" in note and "is 0" in note for note in exact.notes_)
    # NaN groups are skipped by the comparisons, as in fairlearn.
    assert not np.isnan(noisy.difference()).any()


def test_rates_stay_in_range_for_any_noisy_table():
    rng = np.random.default_rng(0)
    tables = rng.normal(0, 5, size=(2000, 3, 4)) + rng.integers(0, 6, size=(1, 3, 4))
    for metric in ("accuracy", "selection_rate", "true_positive_rate"):
        values = metric_values(tables, metric, 5.0)
        finite = values[~np.isnan(values)]
        assert finite.size and finite.min() >= 0 and finite.max() <= 1


def test_empty_group_gets_a_rate_at_the_normal_tail_rate():
    # 1,000 releases of a table of 250 groups without rows, at the noise of
    # epsilon = 1 (std 4). A denominator of k noisy cells is N(0, k std^2),
    # so the rule reports a rate for P(Z > 2) = 2.28% of the groups. A sum
    # of clamped cells, biased upwards, let 3.7% (k = 4) and 2.45% (k = 2)
    # through. 250,000 groups: a standard error of 0.0003.
    std = 4.0
    tables = np.random.default_rng(0).normal(0.0, std, size=(1000, 250, 4))
    tail = 0.5 * math.erfc(MIN_DENOMINATOR_SDS / math.sqrt(2))
    for metric in ("accuracy", "selection_rate", "true_positive_rate"):
        reported = ~np.isnan(metric_values(tables, metric, std)[..., :-1])
        assert abs(reported.mean() - tail) < 0.0012, (metric, reported.mean())


def test_counts_are_released_unclamped():
    y_true, y_pred = np.zeros(4, dtype=int), np.zeros(4, dtype=int)
    frame = PrivateMetricFrame(["x"], epsilon=0.1, random_state=0).fit(
        y_true, y_pred, sensitive_features=["x"] * 4
    )
    # Three of the four cells are 0 before the noise; the released values
    # are not clamped (clamping is post-processing, inside the rates).
    assert (frame.counts_.to_numpy() < 0).any()
    assert list(frame.counts_.columns) == ["TP", "FP", "TN", "FN"]


# -- parameters ------------------------------------------------------------------


@pytest.mark.parametrize(
    "params, fit_args, name",
    [
        ({"metrics": ["accuracy", "auc"]}, {}, "metrics"),
        ({"metrics": []}, {}, "metrics"),
        ({"metrics": [accuracy_score]}, {}, "metrics"),
        ({"classes": [0, 1, 2]}, {}, "classes"),
        ({"classes": [1, 1]}, {}, "classes"),
        ({"groups": []}, {}, "groups"),
        ({"groups": "a"}, {}, "groups"),
        ({"groups": ["a", "a", "b", "c"]}, {}, "groups"),
        ({"confidence_level": 1.5}, {}, "confidence_level"),
        ({"n_boot": 0}, {}, "n_boot"),
        ({"epsilon": -1.0}, {}, "epsilon"),
        ({"delta": 1.0}, {}, "delta"),
        ({}, {"y_pred": [0, 1]}, "y_pred"),
        ({}, {"sensitive_features": [None] + ["a"] * 9}, "sensitive_features"),
        ({}, {"sensitive_features": ["a"] * 3}, "sensitive_features"),
    ],
)
def test_bad_input_errors_name_the_parameter(params, fit_args, name):
    rng = np.random.default_rng(0)
    y_true, y_pred, s = _data(10, rng)
    args = {"y_true": y_true, "y_pred": y_pred, "sensitive_features": s, **fit_args}
    frame = PrivateMetricFrame(**{"groups": GROUPS, **params})
    with pytest.raises(ValueError, match=name):
        frame.fit(
            args["y_true"],
            args["y_pred"],
            sensitive_features=args["sensitive_features"],
        )


def test_bad_method_and_unfitted_access():
    frame = PrivateMetricFrame(GROUPS)
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        _ = frame.by_group
    rng = np.random.default_rng(0)
    frame.fit(*_data(30, rng)[:2], sensitive_features=_data(30, rng)[2])
    with pytest.raises(ValueError, match="method"):
        frame.difference(method="pairwise")
    with pytest.raises(ValueError, match="method"):
        frame.ratio_ci(method="pairwise")


def test_fit_does_not_change_parameters():
    rng = np.random.default_rng(0)
    y_true, y_pred, s = _data(100, rng)
    frame = PrivateMetricFrame(GROUPS, metrics="accuracy")
    before = frame.get_params()
    frame.fit(y_true, y_pred, sensitive_features=s)
    assert frame.get_params() == before
    assert "PrivateMetricFrame" in frame.privacy_summary()


def test_set_params_without_refit_keeps_the_fitted_metrics():
    rng = np.random.default_rng(0)
    y_true, y_pred, s = _data(100, rng)
    frame = PrivateMetricFrame(GROUPS, metrics=["accuracy", "count"])
    frame.set_params(epsilon=np.inf).fit(y_true, y_pred, sensitive_features=s)
    overall, by_group = frame.overall, frame.by_group
    # The values come from metrics_: a new metrics parameter cannot reshape
    # them (a single name read the first fitted metric, the accuracy, as
    # the count).
    frame.set_params(metrics="count")
    pd.testing.assert_series_equal(frame.overall, overall)
    pd.testing.assert_frame_equal(frame.by_group, by_group)

    single = PrivateMetricFrame(GROUPS, metrics="count", epsilon=np.inf)
    single.fit(y_true, y_pred, sensitive_features=s)
    single.set_params(metrics=["accuracy", "count"])
    assert single.overall == 100.0
    assert isinstance(single.by_group, pd.Series)


def _two_columns(n, rng):
    return pd.DataFrame(
        {"sex": rng.choice(["F", "M"], size=n), "race": rng.choice(["u", "v"], size=n)}
    )


@pytest.mark.parametrize(
    "groups, columns",
    [
        ([("F", "u"), ("M",)], 2),  # tuples of several lengths
        ([("F", "u", "x"), ("M", "v", "x")], 2),  # tuples of 3 for 2 columns
        (["F", "M"], 2),  # labels for 2 columns
        ([("F", "u"), "M"], 1),  # tuples and labels for one column
        ([("F",), ("M",)], "frame"),  # 1-tuples for a one-column DataFrame
        ([("F",), ("M",)], "array"),  # 1-tuples for a 2-D array of one column
    ],
)
def test_groups_that_do_not_fit_the_columns_are_refused_before_any_count(
    groups, columns
):
    # Both are public: the error names groups, not an undeclared group of
    # the data (or numpy's ragged-array error), and comes before the noise.
    rng = np.random.default_rng(0)
    y_true, y_pred, _ = _data(40, rng)
    sf = _two_columns(40, rng)
    sf = {
        2: sf,
        1: sf["sex"],
        "frame": sf[["sex"]],
        "array": sf[["sex"]].to_numpy(),
    }[columns]
    frame = PrivateMetricFrame(groups, random_state=0)
    with observe_privatize(_Spy()) as spy:
        with pytest.raises(ValueError, match="^groups must be"):
            frame.fit(y_true, y_pred, sensitive_features=sf)
    assert spy.sums == []
    assert not hasattr(frame, "counts_")


@pytest.mark.parametrize(
    "groups",
    [[("F", "u"), "M"], [("F", "u"), ("M", "v", "x")]],
    ids=["mixed", "ragged"],
)
def test_groups_of_two_kinds_are_refused_by_the_plan_as_by_every_fit(groups):
    # Tuples beside labels, or tuples of two lengths, fit no layout of the
    # columns: every fit refuses them, so the plan (which sees no columns)
    # must too, rather than approve a budget no fit can spend.
    frame = PrivateMetricFrame(groups, random_state=0)
    with pytest.raises(ValueError, match="^groups must be labels of one kind"):
        frame.privacy_plan(40, 1)
    rng = np.random.default_rng(0)
    y_true, y_pred, _ = _data(40, rng)
    sf = _two_columns(40, rng)
    for columns in (sf, sf["sex"]):
        with pytest.raises(ValueError, match="^groups must be"):
            frame.fit(y_true, y_pred, sensitive_features=columns)
    assert not hasattr(frame, "counts_")


@pytest.mark.parametrize(
    "classes",
    [(np.nan, 1.0), (np.nan, np.nan), (pd.NA, 1), (0, float("nan")), (pd.NaT, 1)],
    ids=["nan-1", "nan-nan", "NA", "0-nan", "NaT"],
)
def test_missing_declared_classes_are_refused_before_any_label_is_read(classes):
    # NaN equals nothing, itself included: declared, it matched no row, the
    # plan approved and every fit refused the labels as undeclared (pd.NA
    # raised a bare TypeError). Refused as a parameter, by plan and fit.
    frame = PrivateMetricFrame(GROUPS, classes=classes, random_state=0)
    refused = "^classes must be two labels that are not"
    with pytest.raises(ValueError, match=refused):
        frame.privacy_plan(50, 1)
    rng = np.random.default_rng(0)
    y_true, y_pred, s = _data(50, rng)
    with observe_privatize(_Spy()) as spy:
        with pytest.raises(ValueError, match=refused):
            frame.fit(y_true.astype(float), y_pred, sensitive_features=s)
    assert spy.sums == []
    assert not hasattr(frame, "counts_")


@pytest.mark.parametrize("name", ["y_true", "y_pred"])
def test_a_label_that_is_an_array_is_refused_as_undeclared(name):
    # numpy compared the array with the classes and raised its own
    # "truth value of an array is ambiguous".
    rng = np.random.default_rng(0)
    y_true, y_pred, s = _data(50, rng)
    data = {"y_true": y_true.astype(object), "y_pred": y_pred.astype(object)}
    data[name][4] = np.array([0, 1])
    frame = PrivateMetricFrame(GROUPS, random_state=0)
    with pytest.raises(ValueError, match=f"^{name} contains labels that are not"):
        frame.fit(data["y_true"], data["y_pred"], sensitive_features=s)
    assert not hasattr(frame, "counts_")


def test_an_unhashable_group_value_is_refused_without_showing_it():
    # pandas' factorize raised a bare "unhashable type: 'list'".
    rng = np.random.default_rng(0)
    y_true, y_pred, s = _data(50, rng)
    s = s.astype(object)
    s[9] = ["secret-list"]
    frame = PrivateMetricFrame(GROUPS, random_state=0)
    refused = "^sensitive_features contains a value"
    with pytest.raises(ValueError, match=refused) as info:
        frame.fit(y_true, y_pred, sensitive_features=s)
    assert "secret-list" not in str(info.value)
    assert not hasattr(frame, "counts_")


def test_a_string_in_a_dict_of_columns_is_one_value_not_its_length():
    # The row count printed the length of the private string (here 14).
    rng = np.random.default_rng(0)
    y_true, y_pred, _ = _data(50, rng)
    frame = PrivateMetricFrame(GROUPS, random_state=0)
    with pytest.raises(ValueError, match="must be 1-D") as info:
        frame.fit(y_true, y_pred, sensitive_features={"s": "a-secret-value"})
    assert "14" not in str(info.value)
    assert not hasattr(frame, "counts_")


def test_groups_given_as_arrays_are_the_tuples_of_their_values():
    # A bare "unhashable type: 'numpy.ndarray'" was raised, by plan and fit.
    rng = np.random.default_rng(0)
    y_true, y_pred, _ = _data(60, rng)
    sf = _two_columns(60, rng)
    tuples = [("F", "u"), ("F", "v"), ("M", "u"), ("M", "v")]
    arrays = [np.array(g, dtype=object) for g in tuples]
    assert PrivateMetricFrame(arrays).privacy_plan(60, 1).epsilon == pytest.approx(
        PrivateMetricFrame(tuples).privacy_plan(60, 1).epsilon
    )
    frame = PrivateMetricFrame(arrays, epsilon=np.inf)
    frame.fit(y_true, y_pred, sensitive_features=sf)
    by_tuples = PrivateMetricFrame(tuples, epsilon=np.inf)
    by_tuples.fit(y_true, y_pred, sensitive_features=sf)
    assert list(frame.groups_) == tuples
    np.testing.assert_array_equal(frame.counts_, by_tuples.counts_)


def test_one_column_of_tuples_with_tuple_groups():
    # A Series of tuples is one column whose labels are tuples: its index has
    # a level per value of the tuple (the Series' one name cannot name them).
    rng = np.random.default_rng(0)
    y_true, y_pred, _ = _data(60, rng)
    sf = _two_columns(60, rng)
    column = pd.Series(list(sf.itertuples(index=False, name=None)), name="group")
    groups = [("F", "u"), ("F", "v"), ("M", "u"), ("M", "v")]
    frame = PrivateMetricFrame(groups, epsilon=np.inf)
    frame.fit(y_true, y_pred, sensitive_features=column)
    by_columns = PrivateMetricFrame(groups, epsilon=np.inf)
    by_columns.fit(y_true, y_pred, sensitive_features=sf)
    assert frame.by_group.index.nlevels == 2
    np.testing.assert_array_equal(frame.counts_, by_columns.counts_)


def test_short_sensitive_features_is_compared_with_y_true():
    # The frame takes no X: the message names y_true.
    rng = np.random.default_rng(0)
    y_true, y_pred, s = _data(6, rng)
    with pytest.raises(ValueError) as info:
        PrivateMetricFrame(GROUPS).fit(y_true, y_pred, sensitive_features=s[:5])
    message = str(info.value)
    assert message.startswith("sensitive_features has 5 rows but y_true has 6")
    assert " X " not in message


def test_column_vector_labels_warn_once_each_at_the_callers_line():
    rng = np.random.default_rng(0)
    y_true, y_pred, s = _data(30, rng)
    frame = PrivateMetricFrame(GROUPS, epsilon=np.inf)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame.fit(y_true[:, None], y_pred[:, None], sensitive_features=s)
    caught = [w for w in caught if issubclass(w.category, DataConversionWarning)]
    assert [w.filename for w in caught] == [__file__, __file__]
    assert "column-vector y_true" in str(caught[0].message)
    assert "column-vector y_pred" in str(caught[1].message)
    np.testing.assert_array_equal(
        frame.counts_,
        PrivateMetricFrame(GROUPS, epsilon=np.inf)
        .fit(y_true, y_pred, sensitive_features=s)
        .counts_,
    )


# -- intervals -------------------------------------------------------------------

# Cell probabilities (TP, FP, TN, FN) of one group's population.
_CELL_P = np.array([0.25, 0.1, 0.5, 0.15])
_TRUTH = {
    "accuracy": 0.75,
    "selection_rate": 0.35,
    "true_positive_rate": 0.25 / 0.4,
    "false_positive_rate": 0.1 / 0.6,
}


def _coverage(n, epsilon, n_sims, seed):
    """Share of simulated evaluations whose interval holds each population rate."""
    rng = np.random.default_rng(seed)
    cells = rng.multinomial(n, _CELL_P, size=n_sims)
    hits = {m: 0 for m in _TRUTH}
    widths = {m: [] for m in _TRUTH}
    for sim in range(n_sims):
        # Rows in the drawn cells: (y_true, y_pred) per cell TP, FP, TN, FN.
        y_true = np.repeat([1, 0, 0, 1], cells[sim])
        y_pred = np.repeat([1, 1, 0, 0], cells[sim])
        frame = PrivateMetricFrame(
            ["g"], epsilon=epsilon, n_boot=400, random_state=seed * 10_000 + sim
        ).fit(y_true, y_pred, sensitive_features=np.full(n, "g"))
        lower, upper = frame.overall_ci
        for m, truth in _TRUTH.items():
            hits[m] += lower[m] <= truth <= upper[m]
            widths[m].append(upper[m] - lower[m])
    return {m: hits[m] / n_sims for m in _TRUTH}, widths


def test_interval_coverage_light():
    # 120 simulations: a 95% interval covering 95% gives >= 0.88 with
    # probability above 0.998 (binomial tail), for each metric.
    coverage, widths = _coverage(1000, 1.0, 120, seed=0)
    assert min(coverage.values()) >= 0.88, coverage
    assert max(np.median(w) for w in widths.values()) < 0.15


@pytest.mark.slow
@pytest.mark.skipif(not FULL, reason="the coverage grid runs with DPFAIR_FULL=1")
@pytest.mark.parametrize("n", [20, 100, 1000, 10000])
@pytest.mark.parametrize("epsilon", [0.5, 1.0, np.inf])
def test_interval_coverage_full(n, epsilon):
    coverage, _ = _coverage(n, epsilon, 400, seed=1)
    # 400 simulations: standard error 0.011 at 0.95; 0.91 is 3.6 of them.
    assert min(coverage.values()) >= 0.91, coverage


def test_group_of_five_shows_nothing_at_epsilon_one():
    coverage, widths = _coverage(5, 1.0, 40, seed=2)
    # Intervals span (nearly) the whole range of every rate, and still hold
    # the population rate.
    assert min(np.median(w) for w in widths.values()) >= 0.9
    assert min(coverage.values()) >= 0.9


def test_overall_interval_ignores_how_many_groups_are_declared():
    # The overall replicates summed the groups' replicates, each with half a
    # count per cell (and, with noise, its clamped noise): 40 declared groups
    # of which one held the 100 rows made the overall 95% interval of the
    # accuracy [0.69, 0.81] around an exact 0.95 without any noise, and that
    # of the count [155, 208] around 100; at epsilon=1 it missed the exact
    # value in 20 fits of 20.
    groups = [f"g{i}" for i in range(40)]
    y_true = np.repeat([1, 0], 50)
    y_pred = y_true.copy()
    y_pred[:5] = 0
    s = np.full(100, "g0")
    frame = PrivateMetricFrame(
        groups, metrics=["accuracy", "count"], epsilon=np.inf, random_state=0
    ).fit(y_true, y_pred, sensitive_features=s)
    lower, upper = frame.overall_ci
    assert lower["accuracy"] <= 0.95 <= upper["accuracy"]
    assert lower["count"] <= 100 <= upper["count"]
    # The one group holding every row: the same interval up to the draws.
    group_lower, group_upper = frame.by_group_ci
    assert abs(group_lower.loc["g0", "accuracy"] - lower["accuracy"]) < 0.02
    assert abs(group_upper.loc["g0", "accuracy"] - upper["accuracy"]) < 0.02

    y_true, y_pred = np.tile(y_true, 20), np.tile(y_pred, 20)
    hits = 0
    for seed in range(20):
        frame = PrivateMetricFrame(
            groups, metrics="accuracy", epsilon=1.0, n_boot=400, random_state=seed
        ).fit(y_true, y_pred, sensitive_features=np.full(2000, "g0"))
        lower, upper = frame.overall_ci
        hits += lower <= 0.95 <= upper
    # A 95% interval covering 95% gives >= 16 of 20 with probability 0.997.
    assert hits >= 16, hits


@pytest.mark.parametrize("method", ["between_groups", "to_overall"])
def test_comparison_intervals_skip_the_groups_their_values_skip(method):
    # A declared group without rows: its rates are NaN and the comparisons
    # skip it. Its replicates, computed whenever their denominator is
    # positive, give it a rate of pure noise in most of them; unless they
    # skip it too, the interval describes another quantity (the parity
    # difference's missed its own value, 0.007 outside [0.009, 0.511]).
    rng = np.random.default_rng(0)
    y_true, y_pred, s = _data(20000, rng, groups=["a", "b"])
    frame = PrivateMetricFrame(
        ["a", "b", "empty"], epsilon=1.0, n_boot=500, random_state=0
    ).fit(y_true, y_pred, sensitive_features=s)
    assert frame.by_group.loc["empty"].isna().all()
    pairs = [
        (frame.difference(method), frame.difference_ci(method)),
        (frame.ratio(method), frame.ratio_ci(method)),
        (frame.group_min(), frame.group_min_ci()),
        (frame.group_max(), frame.group_max_ci()),
        (
            frame.demographic_parity_difference(method),
            frame.demographic_parity_difference_ci(method),
        ),
        (
            frame.equalized_odds_difference(method),
            frame.equalized_odds_difference_ci(method),
        ),
    ]
    for value, (lower, upper) in pairs:
        assert np.all(lower <= value) and np.all(value <= upper)
        # About 10,000 rows in each measured group: every comparison is
        # known to a few hundredths.
        assert np.all(upper - lower < 0.25)


def _population_comparisons(rates):
    """Every comparison of equally likely groups with these selection rates.

    Predictions are drawn independently of the labels, so each group's true
    and false positive rates are its selection rate, and the equalized-odds
    gap is the demographic-parity gap.
    """
    rates = np.asarray(rates)
    overall = rates.mean()
    between = rates.max() - rates.min()
    to_overall = np.abs(rates - overall).max()
    return {
        "difference between_groups": between,
        "difference to_overall": to_overall,
        "ratio between_groups": rates.min() / rates.max(),
        "ratio to_overall": np.minimum(rates / overall, overall / rates).min(),
        "group_max": rates.max(),
        "group_min": rates.min(),
        "dp between_groups": between,
        "dp to_overall": to_overall,
        "eo between_groups": between,
        "eo to_overall": to_overall,
    }


def _comparison_intervals(frame):
    intervals = {"group_max": frame.group_max_ci(), "group_min": frame.group_min_ci()}
    for method in ("between_groups", "to_overall"):
        intervals[f"difference {method}"] = frame.difference_ci(method)
        intervals[f"ratio {method}"] = frame.ratio_ci(method)
        intervals[f"dp {method}"] = frame.demographic_parity_difference_ci(method)
        intervals[f"eo {method}"] = frame.equalized_odds_difference_ci(method)
    return intervals


@pytest.mark.parametrize(
    "rates", [(0.4, 0.4, 0.4), (0.3, 0.4, 0.5)], ids=["equal", "unequal"]
)
def test_comparison_interval_coverage(rates):
    # Percentile intervals of max - min, min / max, max or min over the
    # replicates are biased and bounded at the no-gap value: the difference
    # interval of equal groups held 0 in none of the trials and the group
    # maximum's in half of them. Simultaneous intervals of the signed
    # differences (or ratios, or values) hold the population comparison.
    # 80 trials: a 95% interval covering 95% gives >= 0.85 with probability
    # above 0.999 (binomial tail); the bounds are conservative besides.
    rng = np.random.default_rng(0)
    truth = _population_comparisons(rates)
    hits = dict.fromkeys(truth, 0)
    n, n_trials = 600, 80
    for trial in range(n_trials):
        s = rng.choice(GROUPS, size=n)
        y_true = rng.integers(0, 2, size=n)
        p = np.asarray(rates)[np.searchsorted(GROUPS, s)]
        y_pred = (rng.random(n) < p).astype(int)
        frame = PrivateMetricFrame(
            GROUPS, metrics="selection_rate", n_boot=200, random_state=trial
        ).fit(y_true, y_pred, sensitive_features=s)
        for name, (lower, upper) in _comparison_intervals(frame).items():
            hits[name] += lower <= truth[name] <= upper
    coverage = {name: count / n_trials for name, count in hits.items()}
    assert min(coverage.values()) >= 0.85, coverage


def _equal_groups_misses(n_groups, n_evaluations, seed, names, n_boot):
    """Share of evaluations of equal groups whose interval misses the truth.

    ``n_groups`` groups of 200 rows with the same selection rate, 0.4, at
    epsilon = 1: more pairs (190 for 20 groups) than Bonferroni's tails can
    be read from with ``n_boot`` replicates (7,599 needed for 20 groups).
    """
    groups = list(range(n_groups))
    truth = _population_comparisons([0.4] * n_groups)
    s = np.repeat(groups, 200)
    rng = np.random.default_rng(seed)
    misses = dict.fromkeys(names, 0)
    for evaluation in range(n_evaluations):
        y_true = rng.integers(0, 2, size=s.size)
        y_pred = (rng.random(s.size) < 0.4).astype(int)
        frame = PrivateMetricFrame(
            groups,
            metrics="selection_rate",
            n_boot=n_boot,
            random_state=seed * 10_000 + evaluation,
        ).fit(y_true, y_pred, sensitive_features=s)
        intervals = (
            _comparison_intervals(frame)
            if len(names) > 1
            else {"difference between_groups": frame.difference_ci()}
        )
        for name in names:
            lower, upper = intervals[name]
            misses[name] += not lower <= truth[name] <= upper
    return {name: count / n_evaluations for name, count in misses.items()}


@pytest.mark.parametrize("n_groups", [20, 40])
def test_difference_interval_of_many_equal_groups_holds_zero(n_groups):
    # With 1,000 replicates each of the 190 (20 groups) or 780 (40 groups)
    # pairs' Bonferroni percentiles stopped at the extreme replicate: the
    # 95% interval missed 0 in 23% and 57% of evaluations. The max-statistic
    # bootstrap takes over below the replicates Bonferroni needs; it missed
    # 4.3% and 5.6% of 1,000 evaluations, 5.4% of them with 500 replicates
    # (20 groups). 200 evaluations with 500 replicates (the light form): a
    # miss rate of 5.6% exceeds 0.10 with probability 0.004 (binomial tail).
    misses = _equal_groups_misses(
        n_groups, 200, seed=0, names=["difference between_groups"], n_boot=500
    )
    assert misses["difference between_groups"] <= 0.10, misses


@pytest.mark.slow
@pytest.mark.skipif(not FULL, reason="the many-groups grid runs with DPFAIR_FULL=1")
@pytest.mark.parametrize("n_groups", [20, 40])
def test_comparison_intervals_of_many_equal_groups_full(n_groups):
    names = list(_population_comparisons([0.4]))
    misses = _equal_groups_misses(n_groups, 1000, seed=1, names=names, n_boot=1000)
    # 1,000 evaluations: standard error 0.007 at 0.05; 0.075 is 3.6 of them.
    assert max(misses.values()) <= 0.075, misses


def test_intervals_of_many_groups_never_hold_every_pair_at_once():
    # 300 groups: 44,850 pairs. With 1,000 replicates, every pair's
    # differences (and shares, and their NaN masks and percentiles) in one
    # array peaked at 0.96 GB here; a group at a time, at 32 MB (most of it
    # the replicates' rates).
    import tracemalloc

    groups = list(range(300))
    rng = np.random.default_rng(0)
    s = np.repeat(groups, 20)
    y = rng.integers(0, 2, size=s.size)
    frame = PrivateMetricFrame(
        groups, metrics="selection_rate", n_boot=1000, random_state=0
    ).fit(y, y, sensitive_features=s)
    tracemalloc.start()
    try:
        difference = frame.difference_ci()
        ratio = frame.ratio_ci()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 100 * 2**20, peak / 2**20
    assert difference[0] <= frame.difference() <= difference[1]
    assert ratio[0] <= frame.ratio() <= ratio[1]


def test_comparison_intervals_of_few_groups_are_unchanged():
    # Three groups: every comparison's quantities (3 pairs, 3 values, 3 gaps
    # to overall; at 97.5% for the equalized odds difference) are resolved
    # by the 1,000 default replicates, and keep Bonferroni's intervals: the
    # values of the frame before the max-statistic fallback (6 decimals),
    # drawn again since the overall row draws its own half counts.
    groups = ["g0", "g1", "g2"]
    y_true, y_pred, s = _data(4000, np.random.default_rng(0), groups=groups)
    frame = PrivateMetricFrame(groups, epsilon=1.0, random_state=0).fit(
        y_true, y_pred, sensitive_features=s
    )
    expected = {
        "group_min": (
            [0.705264, 0.450828, 0.688554, 0.18093],
            [0.763039, 0.518933, 0.769618, 0.259792],
        ),
        "group_max": (
            [0.738372, 0.464071, 0.710887, 0.221474],
            [0.795616, 0.528442, 0.795847, 0.303053],
        ),
        "difference between_groups": (
            [0.0] * 4,
            [0.073001, 0.060504, 0.082312, 0.099045],
        ),
        "ratio between_groups": ([0.907798, 0.884208, 0.894362, 0.664196], [1.0] * 4),
        "dp between_groups": ([0.0], [0.060504]),
        "eo between_groups": ([0.0], [0.106628]),
        "difference to_overall": ([0.0] * 4, [0.040983, 0.03401, 0.046941, 0.059936]),
        "ratio to_overall": ([0.947152, 0.931755, 0.936364, 0.753445], [1.0] * 4),
        "dp to_overall": ([0.0], [0.03401]),
        "eo to_overall": ([0.0], [0.062197]),
    }
    for name, (lower, upper) in _comparison_intervals(frame).items():
        np.testing.assert_allclose(
            np.atleast_1d(lower), expected[name][0], atol=2e-6, err_msg=name
        )
        np.testing.assert_allclose(
            np.atleast_1d(upper), expected[name][1], atol=2e-6, err_msg=name
        )


def test_interval_of_a_small_exact_group_does_not_collapse():
    # Five rows, all predicted right: without the half count per cell the
    # bootstrap would never draw an error and the accuracy interval would be
    # [1, 1], claiming certainty from five rows.
    y = np.array([0, 0, 1, 0, 1])
    frame = PrivateMetricFrame(
        ["g"], metrics="accuracy", epsilon=np.inf, random_state=0
    ).fit(y, y, sensitive_features=["g"] * 5)
    lower, upper = frame.overall_ci
    assert frame.overall == 1.0 and upper == 1.0
    assert lower < 0.8


@pytest.mark.parametrize("epsilon", [1.0, math.inf])
def test_the_plain_language_describes_an_evaluation_not_a_model(epsilon):
    # The release is noisy counts of predictions: a record is a group, a
    # true label and a prediction, and no model is released.
    y_true, y_pred, s = _data(300, np.random.default_rng(0))
    frame = PrivateMetricFrame(GROUPS, epsilon=epsilon, random_state=0)
    text = frame.fit(y_true, y_pred, sensitive_features=s).privacy_record_
    text = text.plain_language()
    assert "evaluation record" in text and "released metrics" in text
    assert "training" not in text and "model" not in text.replace(
        "the model's prediction", ""
    )
    plan = frame.privacy_plan(300, 1)
    assert plan.dp_event == frame.dp_event_
    from sklearn_dpfair import privacy_report

    assert (
        privacy_report(frame)
        .to_text()
        .startswith("Evaluation report: PrivateMetricFrame")
    )


def test_classes_of_a_string_and_a_number_are_refused_naming_classes():
    # np.array((0, "yes")) is ["0", "yes"]: the labels 0 were refused as
    # undeclared. scikit-learn refuses labels of mixed types; so does the
    # frame, before any label is read.
    y = np.array([0, "yes", 0, "yes"], dtype=object)
    frame = PrivateMetricFrame(["a", "b"], classes=(0, "yes"), epsilon=np.inf)
    with pytest.raises(ValueError, match=r"^classes must be two labels of one kind"):
        frame.fit(y, y[::-1], sensitive_features=["a", "a", "b", "b"])
    assert not hasattr(frame, "counts_")


def test_n_boot_beyond_one_numpy_array_is_refused_by_plan_and_fit():
    # numpy refused 10**30 replicates ("Maximum allowed dimension exceeded")
    # only after the release, naming no parameter.
    class Unread:
        def __len__(self):
            return 10

        def __array__(self, dtype=None, copy=None):
            raise AssertionError("the rows were read before n_boot was checked")

    # 2**58 replicates of 2 groups' 4 counts: 2**61 float64 values.
    for n_boot in (10**30, 2**58):
        frame = PrivateMetricFrame([0, 1], n_boot=n_boot, random_state=0)
        with pytest.raises(ValueError, match="n_boot=.* is too large"):
            frame.privacy_plan(10, 1)
        with pytest.raises(ValueError, match="n_boot=.* is too large"):
            frame.fit(Unread(), Unread(), sensitive_features=Unread())
        assert not hasattr(frame, "counts_")


class _UnreadRows:
    """Ten rows that fail the test if anything reads them."""

    def __len__(self):
        return 10

    def __array__(self, dtype=None, copy=None):
        raise AssertionError("the rows were read before the parameters were checked")


@pytest.mark.parametrize(
    "params",
    [
        {"classes": (1, 1)},
        {"classes": ("no", 1)},
        {"metrics": ["bogus"]},
        {"metrics": ["accuracy", "accuracy"]},
        {"groups": ["a", "a"]},
        {"groups": ["a", None]},
        {"groups": [("a", 0), ("a", 0)]},
    ],
)
def test_plan_refuses_every_setting_its_fit_refuses_with_the_same_error(params):
    # The plan composes a fit before it runs: a plan made for parameters
    # the fit refuses would account a release that never happens.
    frame = PrivateMetricFrame(**{"groups": ["a", "b"], **params}, random_state=0)
    with pytest.raises(ValueError) as planned:
        frame.privacy_plan(10, 1)
    with pytest.raises(ValueError) as fitted:
        frame.fit(_UnreadRows(), _UnreadRows(), sensitive_features=_UnreadRows())
    assert str(planned.value) == str(fitted.value)
    assert not hasattr(frame, "counts_")


@pytest.mark.parametrize(
    "make_sf, n_columns, names",
    [
        (lambda a, b: {"race": a, "sex": b}, 2, ["race", "sex"]),
        (lambda a, b: {"race": a}, 1, ["race"]),
        (lambda a, b: pd.DataFrame({"race": a, "sex": b}), 2, ["race", "sex"]),
        (lambda a, b: pd.Series(a, name="race"), 1, ["race"]),
        (lambda a, b: pd.Series(a), 1, ["sensitive_feature_0"]),
        (
            lambda a, b: np.column_stack([a, b]),
            2,
            ["sensitive_feature_0", "sensitive_feature_1"],
        ),
    ],
    ids=["dict", "dict-one-key", "frame", "series", "unnamed-series", "array"],
)
def test_group_levels_are_named_as_fairlearn_names_them(make_sf, n_columns, names):
    y_true = np.array([0, 1, 1, 0, 1, 0])
    y_pred = np.array([1, 1, 0, 0, 1, 0])
    race = np.array(["u", "u", "v", "v", "w", "w"])
    sex = np.array(list("FFMMFM"))
    sf = make_sf(race, sex)
    theirs = MetricFrame(
        metrics=selection_rate, y_true=y_true, y_pred=y_pred, sensitive_features=sf
    )
    groups = [(r, s) for r in "uvw" for s in "FM"] if n_columns == 2 else list("uvw")
    ours = PrivateMetricFrame(groups, metrics="selection_rate", epsilon=np.inf)
    ours.fit(y_true, y_pred, sensitive_features=sf)
    assert list(theirs.by_group.index.names) == names
    assert list(ours.by_group.index.names) == names
    assert list(ours.counts_.index.names) == names


def test_a_series_named_zero_is_named():
    # Only a name of None leaves a Series unnamed; fairlearn refuses names
    # that are not strings, the frame writes them as strings (as it does a
    # DataFrame's columns).
    column = pd.Series(["a", "b", "a", "b"], name=0)
    frame = PrivateMetricFrame(["a", "b"], epsilon=np.inf)
    frame.fit([0, 1, 1, 0], [0, 1, 0, 1], sensitive_features=column)
    assert frame.by_group.index.names == ["0"]
