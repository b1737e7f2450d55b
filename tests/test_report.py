# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Tests of the privacy and fairness report of fitted models."""

import math
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from fairlearn.metrics import (
    demographic_parity_difference,
    equalized_odds_difference,
)
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.datasets import make_classification, make_regression
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import accuracy_score, mean_squared_error
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_dpfair import DPLogisticRegression, ModelReport, privacy_report
from sklearn_dpfair.privacy import PrivacyLedger


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=800, n_features=5, random_state=0)
    rng = np.random.default_rng(0)
    sex = np.where(rng.random(800) < 0.4, "female", "male")
    race = np.where(rng.random(800) < 0.3, "b", "w")
    return X, y, pd.DataFrame({"sex": sex, "race": race})


@pytest.fixture(scope="module")
def fitted(data):
    X, y, _ = data
    return DPLogisticRegression(epsilon=0.7, classes=[0, 1], random_state=0).fit(X, y)


def test_privacy_read_from_the_record(fitted):
    report = privacy_report(fitted)
    record = fitted.privacy_record_
    assert isinstance(report, ModelReport)
    assert report.estimator_name == "DPLogisticRegression"
    assert report.privacy["private"] is True
    assert report.privacy["epsilon"] == fitted.epsilon_ <= 0.7
    assert report.privacy["delta"] == fitted.delta_
    assert report.privacy["adjacency"] == fitted.adjacency_ == "add_remove"
    assert report.privacy["noise_multiplier"] == fitted.noise_multiplier_ > 0
    assert report.privacy["mechanism"] == record.mechanism
    assert report.privacy["sampling_rate"] == record.sampling_probability
    assert report.privacy["steps"] == record.steps == fitted.t_
    assert report.privacy["clip_norm"] == fitted.clip_norm
    assert report.privacy["summary"] == str(record)
    assert report.overall is None and report.metric_frame is None
    assert report.group_frame() is None
    assert str(record) in report.to_text()


def test_recomputed_epsilon_matches(fitted):
    report = privacy_report(fitted, recompute_epsilon=True)
    assert report.privacy["epsilon_recomputed"] == pytest.approx(fitted.epsilon_)
    assert "recomputed" in report.to_text()
    assert "epsilon recomputed from dp_event_" in report.privacy_frame().index


def test_privacy_frame_lists_the_guarantee(fitted):
    frame = privacy_report(fitted).privacy_frame()
    assert list(frame.columns) == ["value"]
    assert frame.loc["epsilon", "value"] == fitted.epsilon_
    assert frame.loc["adjacency", "value"] == "add_remove"
    assert frame.loc["steps", "value"] == fitted.t_


def test_seeded_fit_is_reported_as_not_a_release(fitted):
    report = privacy_report(fitted)  # fitted with random_state=0
    assert report.privacy["seeded"] is True
    assert "not a private release" in report.to_text()
    assert "seeded fit" in report.privacy_frame().index
    assert report.to_frame()["seeded"].item() is True
    assert "not a private release" in report._repr_html_()


def test_unseeded_fit_is_reported_as_a_release(data):
    X, y, _ = data
    clf = DPLogisticRegression(epsilon=0.7, classes=[0, 1], max_iter=2).fit(X, y)
    report = privacy_report(clf)
    assert report.privacy["seeded"] is False
    assert "not a private release" not in report.to_text()
    assert "seeded fit" not in report.privacy_frame().index
    assert report.to_frame()["seeded"].item() is False


def test_caveats_are_reported(data):
    X, y, _ = data
    with pytest.warns(Warning, match="classes"):
        clf = DPLogisticRegression(random_state=0).fit(X, y)
    report = privacy_report(clf)
    assert report.privacy["caveats"] == clf.privacy_caveats_ != []
    assert "caveat 1" in report.privacy_frame().index
    assert "Caveat:" in report.to_text()


def test_non_private_estimator(data):
    X, y, sensitive = data
    report = privacy_report(
        LogisticRegression().fit(X, y), X, y, sensitive_features=sensitive["sex"]
    )
    assert report.privacy["private"] is False
    assert math.isinf(report.privacy["epsilon"])
    assert "No differential privacy" in report.to_text()
    assert report.to_frame()["private"].item() is False
    # Group metrics are still computed.
    assert report.group_frame().loc["overall", "accuracy"] > 0.8


def test_infinite_epsilon_is_reported_non_private(data):
    X, y, _ = data
    clf = DPLogisticRegression(epsilon=np.inf, classes=[0, 1], random_state=0)
    report = privacy_report(clf.fit(X, y))
    assert report.privacy["private"] is False
    assert "non-private" in report.to_text()


def test_group_metrics_match_direct_computation(fitted, data):
    X, y, sensitive = data
    report = privacy_report(fitted, X, y, sensitive_features=sensitive["sex"])
    groups = report.group_frame()
    y_pred = fitted.predict(X)
    for group in ["female", "male"]:
        mask = sensitive["sex"].to_numpy() == group
        assert groups.loc[group, "accuracy"] == pytest.approx(
            accuracy_score(y[mask], y_pred[mask])
        )
        assert groups.loc[group, "selection_rate"] == pytest.approx(y_pred[mask].mean())
        assert groups.loc[group, "count"] == mask.sum()
    assert groups.loc["overall", "accuracy"] == pytest.approx(accuracy_score(y, y_pred))
    assert groups.loc["difference", "accuracy"] == pytest.approx(
        abs(groups.loc["female", "accuracy"] - groups.loc["male", "accuracy"])
    )
    row = report.to_frame().iloc[0]
    assert row["demographic_parity_difference"] == pytest.approx(
        demographic_parity_difference(y, y_pred, sensitive_features=sensitive["sex"])
    )
    assert row["equalized_odds_difference"] == pytest.approx(
        equalized_odds_difference(y, y_pred, sensitive_features=sensitive["sex"])
    )
    assert row["accuracy"] == pytest.approx(accuracy_score(y, y_pred))
    assert report.overall["accuracy"] == pytest.approx(accuracy_score(y, y_pred))


def test_intersectional_groups(fitted, data):
    X, y, sensitive = data
    report = privacy_report(fitted, X, y, sensitive_features=sensitive)
    index = report.group_frame().index.tolist()
    assert index[:-2] == ["female & b", "female & w", "male & b", "male & w"]
    assert index[-2:] == ["overall", "difference"]
    assert report.group_frame()["count"].iloc[:4].sum() == len(y)


def test_a_dict_of_columns_counts_rows_not_keys(fitted, data):
    # The report compared len(dict), its number of keys, with the rows of X:
    # every dict was refused as "has 2 rows".
    X, y, sensitive = data
    columns = {name: sensitive[name].to_numpy() for name in sensitive}
    report = privacy_report(fitted, X, y, sensitive_features=columns)
    assert report.group_frame()["count"].iloc[:4].sum() == len(y)
    with pytest.raises(ValueError, match="has 799 rows but X has 800"):
        privacy_report(
            fitted, X, y, sensitive_features={k: v[:-1] for k, v in columns.items()}
        )


@pytest.mark.parametrize("sensitive_features", [3, "sex", np.float64(1.0)])
def test_a_scalar_sensitive_features_is_refused_naming_it(
    fitted, data, sensitive_features
):
    # A scalar raised a bare "object of type 'int' has no len()".
    X, y, _ = data
    with pytest.raises(ValueError, match="^sensitive_features must be 1-D or 2-D"):
        privacy_report(fitted, X, y, sensitive_features=sensitive_features)


def test_without_labels_only_prediction_metrics(fitted, data):
    X, _, sensitive = data
    report = privacy_report(fitted, X, sensitive_features=sensitive["sex"])
    assert list(report.group_frame().columns) == ["selection_rate", "count"]
    assert "equalized_odds_difference" not in report.to_frame()


def test_without_sensitive_features_overall_only(fitted, data):
    X, y, _ = data
    report = privacy_report(fitted, X, y)
    assert report.group_frame() is None
    assert report.overall["accuracy"] == pytest.approx(fitted.score(X, y))
    assert "Metrics by group" not in report.to_text()
    assert "<h5>Metrics</h5>" in report._repr_html_()


def test_regressor_default_and_custom_metrics():
    X, y = make_regression(n_samples=300, n_features=4, noise=1.0, random_state=0)
    groups = np.arange(300) % 3
    model = Ridge().fit(X, y)
    report = privacy_report(model, X, y, sensitive_features=groups)
    assert list(report.group_frame().columns) == [
        "mean_squared_error",
        "mean_absolute_error",
        "mean_prediction",
        "count",
    ]
    assert report.overall["mean_squared_error"] == pytest.approx(
        mean_squared_error(y, model.predict(X))
    )
    custom = privacy_report(
        model, X, y, sensitive_features=groups, metrics={"max_error": _max_error}
    )
    assert list(custom.group_frame().columns) == ["max_error"]
    assert custom.to_frame()["max_error_difference"].item() >= 0


def _max_error(y_true, y_pred):
    return float(np.max(np.abs(y_true - y_pred)))


def test_multiclass_classifier_default_metrics():
    X, y = make_classification(
        n_samples=600, n_classes=3, n_informative=4, random_state=0
    )
    clf = DPLogisticRegression(classes=[0, 1, 2], random_state=0).fit(X, y)
    report = privacy_report(clf, X, y, sensitive_features=X[:, 0] > 0)
    assert list(report.group_frame().columns) == ["accuracy", "count"]


def test_pipeline_and_search_are_unwrapped(data):
    X, y, sensitive = data
    # A fixed noise multiplier skips the calibration of each fold's fit.
    model = DPLogisticRegression(
        epsilon=10.0, noise_multiplier=4.0, classes=[0, 1], random_state=0
    )
    search = GridSearchCV(
        make_pipeline(StandardScaler(), model),
        {"dplogisticregression__alpha": [0.0, 0.01]},
        cv=3,
    ).fit(X, y)
    report = privacy_report(search, X, y, sensitive_features=sensitive["sex"])
    best = search.best_estimator_[-1]
    assert report.estimator_name == "DPLogisticRegression"
    assert report.privacy["epsilon"] == best.epsilon_
    assert any("GridSearchCV among 2 candidates x 3 folds" in n for n in report.notes)
    # A ledger would compose the 7 training fits, but the noiseless held-out
    # scores and the selection are releases that no ledger accounts for.
    assert any("7 training fits" in n for n in report.notes)
    assert any("no ledger accounts for" in n for n in report.notes)
    # The notes are printed after the privacy statement, not above it.
    assert not any("below" in n for n in report.notes)
    text = report.to_text()
    assert text.index("covers one fit only") > text.index("In plain words")
    assert not any("composes all" in n for n in report.notes)
    assert any("standardscaler" in n for n in report.notes)
    # Metrics use the whole search (its preprocessing included).
    assert report.overall["accuracy"] == pytest.approx(search.score(X, y))


def test_plain_pipeline_with_a_private_step_says_its_budget_adds(data):
    # Each step spent its own epsilon on the same rows: the report's record
    # is the final model's, and the note must not suggest it covers them.
    from sklearn_dpfair.preprocessing import DPStandardScaler

    X, y, _ = data
    pipe = make_pipeline(
        DPStandardScaler(bounds=(-10.0, 10.0), random_state=0),
        DPLogisticRegression(classes=[0, 1], max_iter=2, random_state=0),
    ).fit(X, y)
    report = privacy_report(pipe)
    (note,) = [n for n in report.notes if "pipeline steps" in n]
    assert "['dpstandardscaler'] spent their own budgets" in note
    assert "make_private_pipeline" in note
    plain = make_pipeline(
        StandardScaler(), DPLogisticRegression(classes=[0, 1], max_iter=2)
    ).fit(X, y)
    (note,) = [n for n in privacy_report(plain).notes if "pipeline steps" in n]
    assert "spent their own budgets" not in note


@pytest.mark.parametrize("nesting", ["pipeline", "column_transformer", "union"])
def test_a_private_step_nested_in_a_step_says_its_budget_adds(data, nesting):
    # Only a top-level step's record was seen: a DP scaler inside a nested
    # Pipeline or a ColumnTransformer got the note for public statistics,
    # and the report read epsilon 1 for a pipeline that spent 2.
    from sklearn.compose import make_column_transformer
    from sklearn.pipeline import make_union

    from sklearn_dpfair.preprocessing import DPStandardScaler

    X, y, _ = data
    scaler = DPStandardScaler(bounds=(-10.0, 10.0), random_state=0)
    wrap = {
        "pipeline": lambda: make_pipeline(scaler),
        "column_transformer": lambda: make_column_transformer(
            (scaler, [0, 1]), remainder="passthrough"
        ),
        "union": lambda: make_union(scaler, StandardScaler()),
    }[nesting]
    pipe = make_pipeline(
        wrap(), DPLogisticRegression(classes=[0, 1], max_iter=2, random_state=0)
    ).fit(X, y)
    (note,) = [n for n in privacy_report(pipe).notes if "pipeline steps" in n]
    assert "spent their own budgets" in note


def test_a_record_without_one_noise_multiplier_reports_none():
    # A private pipeline composes several mechanisms: its record holds None
    # ("no single multiplier"), never 0 ("no noise").
    from sklearn_dpfair.pipeline import make_private_pipeline
    from sklearn_dpfair.preprocessing import DPStandardScaler

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(300, 2)), np.arange(300) % 2
    pipe = make_private_pipeline(
        DPStandardScaler(bounds=(-5.0, 5.0)),
        DPLogisticRegression(classes=[0, 1], max_iter=2),
        random_state=0,
    ).fit(X, y)
    assert pipe.noise_multiplier_ is None
    assert pipe.privacy_record_.noise_multiplier is None
    assert "Noise multiplier" not in pipe.privacy_record_.technical_text()
    report = privacy_report(pipe)
    assert report.privacy["noise_multiplier"] is None
    assert "noise multiplier" not in report.privacy_frame().index
    assert report.to_frame()["noise_multiplier"].isna().all()


def test_search_of_non_private_model_has_no_privacy_notes(data):
    X, y, _ = data
    search = GridSearchCV(LogisticRegression(), {"C": [0.1, 1.0]}, cv=2).fit(X, y)
    assert privacy_report(search).notes == []


class _LedgerRegressor(RegressorMixin, BaseEstimator):
    """A private estimator that sets fitted attributes but no record."""

    def fit(self, X, y):
        self.coef_ = np.zeros(np.shape(X)[1])
        self.epsilon_ = 0.25
        self.delta_ = 1e-6
        self.adjacency_ = "replace_one"
        self.noise_multiplier_ = 3.0
        self.rho_spent_ = {"clip": 0.001, "optimizer": 0.01}
        return self

    def predict(self, X):
        return np.asarray(X) @ self.coef_


def test_estimator_without_record_reports_its_attributes():
    X, y = make_regression(n_samples=50, n_features=3, random_state=0)
    report = privacy_report(_LedgerRegressor().fit(X, y), X, y)
    assert report.privacy["private"] is True
    assert report.privacy["epsilon"] == 0.25
    assert report.privacy["adjacency"] == "replace_one"
    assert report.privacy["noise_multiplier"] == 3.0
    assert report.privacy["extra"] == {
        "zCDP budget spent per component": {"clip": 0.001, "optimizer": 0.01}
    }
    assert "zCDP budget spent per component" in report.to_text()
    assert "zCDP budget spent per component" in report.privacy_frame().index


def test_html_representation(fitted, data):
    X, y, sensitive = data
    text = privacy_report(
        fitted, X, y, sensitive_features=sensitive["sex"]
    )._repr_html_()
    assert text.startswith("<div>") and text.endswith("</div>")
    assert "Model report: DPLogisticRegression" in text
    assert text.count("<table") == 2
    assert "female" in text and "difference" in text


def test_html_escapes_names():
    X, y = make_regression(n_samples=30, n_features=2, random_state=0)
    report = privacy_report(Ridge().fit(X, y), X, y, sensitive_features=["<b>"] * 30)
    assert "<b>" not in report._repr_html_()


def test_reports_concatenate_into_a_comparison(data):
    X, y, sensitive = data
    reports = [
        privacy_report(
            DPLogisticRegression(epsilon=eps, classes=[0, 1], random_state=0).fit(X, y),
            X,
            y,
            sensitive_features=sensitive["sex"],
        )
        for eps in (0.5, 2.0)
    ]
    table = pd.concat([r.to_frame() for r in reports])
    assert table.shape[0] == 2
    assert table["epsilon"].tolist() == pytest.approx([0.5, 2.0], rel=1e-3)
    assert table["noise_multiplier"].iloc[0] > table["noise_multiplier"].iloc[1]


def test_report_leaves_the_estimator_unchanged(fitted, data):
    X, y, sensitive = data
    before = pickle.dumps(fitted)
    params = fitted.get_params()
    privacy_report(fitted, X, y, sensitive_features=sensitive, recompute_epsilon=True)
    assert fitted.get_params() == params
    assert pickle.dumps(fitted) == before


def test_report_pickles(fitted, data):
    X, y, sensitive = data
    report = privacy_report(fitted, X, y, sensitive_features=sensitive["sex"])
    clone = pickle.loads(pickle.dumps(report))
    pd.testing.assert_frame_equal(clone.group_frame(), report.group_frame())
    assert repr(clone).startswith("<ModelReport of DPLogisticRegression: epsilon=0.7")


def test_not_fitted_raises():
    with pytest.raises(NotFittedError):
        privacy_report(DPLogisticRegression())


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"sensitive_features": ["a"] * 5}, ValueError, "sensitive_features has 5"),
        ({"metrics": {"bad": 1}}, TypeError, "metrics must be a dict"),
        ({"metrics": [accuracy_score]}, TypeError, "metrics must be a dict"),
    ],
)
def test_bad_arguments(fitted, data, kwargs, error, match):
    X, y, _ = data
    with pytest.raises(error, match=match):
        privacy_report(fitted, X, y, **kwargs)


def test_labels_or_groups_without_data_raise(fitted, data):
    _, y, sensitive = data
    with pytest.raises(ValueError, match="need the evaluation data X"):
        privacy_report(fitted, y=y)
    with pytest.raises(ValueError, match="need the evaluation data X"):
        privacy_report(fitted, sensitive_features=sensitive)


def test_custom_metrics_need_labels(fitted, data):
    X, _, _ = data
    with pytest.raises(ValueError, match="metrics need the true labels"):
        privacy_report(fitted, X, metrics={"acc": accuracy_score})


def test_mismatched_labels_raise(fitted, data):
    X, y, _ = data
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        privacy_report(fitted, X, y[:-1])


def test_search_report_states_what_a_shared_ledger_spent(data):
    X, y, sensitive = data
    ledger = PrivacyLedger()
    model = DPLogisticRegression(
        epsilon=10.0, noise_multiplier=4.0, classes=[0, 1], accountant=ledger
    )
    search = GridSearchCV(
        make_pipeline(StandardScaler(), model),
        {"dplogisticregression__alpha": [0.0, 0.01]},
        cv=3,
    ).fit(X, y)
    report = privacy_report(search, X, y, sensitive_features=sensitive["sex"])
    (note,) = [n for n in report.notes if "shared PrivacyLedger holds" in n]
    assert "7 training fits" in note
    assert f"{ledger.total_epsilon():.4g}" in note
    assert "training releases only" in note


def test_report_leads_with_plain_words(fitted, data):
    X, y, sensitive = data
    report = privacy_report(fitted, X, y, sensitive_features=sensitive["sex"])
    plain = fitted.privacy_record_.plain_language()
    assert report.privacy["plain"] == plain
    text = report.to_text()
    # The plain statement comes first in the privacy section, then the
    # technical record, then the metrics.
    privacy_section = text.split("Privacy\n-------\n", 1)[1]
    assert privacy_section.startswith(plain + "\n\nTechnical record:\n")
    assert text.index("Technical record:") < text.index("Metrics")
    assert report.privacy_frame().index[0] == "in plain words"
    assert "In plain words:" in report._repr_html_()


def test_plain_words_without_a_record_and_without_privacy(data):
    X, y, _ = data
    Xr, yr = make_regression(n_samples=50, n_features=3, random_state=0)
    attributes_only = privacy_report(_LedgerRegressor().fit(Xr, yr))
    assert attributes_only.privacy["plain"].startswith("In plain words:")
    assert "replaced by any other record" in attributes_only.privacy["plain"]
    # Its adjacency is replace-one: the summary says how to compare it.
    assert "(2 eps, (1 + e^eps) delta)" in attributes_only.to_text()
    non_private = privacy_report(LogisticRegression().fit(X, y))
    assert "nothing protects the training records" in non_private.privacy["plain"]
    assert non_private.to_text().count("In plain words:") == 1


def test_exact_metrics_of_a_private_model_are_flagged_as_outside_the_guarantee(data):
    X, y = data[:2] if isinstance(data, tuple) else data
    from sklearn_dpfair import DPLogisticRegression

    clf = DPLogisticRegression(epsilon=1.0, classes=[0, 1], random_state=0).fit(X, y)
    assert not any("PrivateMetricFrame" in n for n in privacy_report(clf).notes)
    report = privacy_report(clf, X, y, sensitive_features=X[:, 0] > 0)
    assert any("PrivateMetricFrame" in n for n in report.notes)


def test_a_transformer_report_with_X_says_there_is_nothing_to_measure():
    from sklearn_dpfair.preprocessing import DPStandardScaler

    X = np.random.default_rng(0).normal(size=(200, 2))
    scaler = DPStandardScaler(bounds=(-5.0, 5.0), random_state=0).fit(X)
    assert privacy_report(scaler).privacy["private"]
    with pytest.raises(TypeError, match="X: DPStandardScaler has no predict"):
        privacy_report(scaler, X)


def test_a_search_report_names_no_single_noise_multiplier():
    from sklearn_dpfair.model_selection import PrivateHyperparameterSearch

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(400, 3)), np.arange(400) % 2
    search = PrivateHyperparameterSearch(
        DPLogisticRegression(classes=[0, 1], max_iter=2),
        {"clip_norm": [0.5, 1.0]}, random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, y)
    assert search.noise_multiplier_ is None
    assert privacy_report(search).privacy["noise_multiplier"] is None
    assert search.score_noise_multiplier_ > 0


@pytest.mark.parametrize(
    "names, clashing",
    [
        (["epsilon"], "epsilon"),
        (["seeded"], "seeded"),
        (["demographic_parity_difference"], "demographic_parity_difference"),
        (["acc", "acc_difference"], "acc_difference"),
    ],
)
def test_a_metric_named_like_a_column_of_the_frame_is_refused(
    fitted, data, names, clashing
):
    # Its value would overwrite the column: a metric "epsilon" would replace
    # the guarantee in to_frame.
    X, y, _ = data
    metrics = {name: accuracy_score for name in names}
    with pytest.raises(ValueError, match=rf"metrics has names \['{clashing}'\]"):
        privacy_report(fitted, X, y, metrics=metrics)


def test_a_halving_search_counts_each_candidate_once(data):
    from sklearn.experimental import enable_halving_search_cv  # noqa: F401
    from sklearn.model_selection import HalvingGridSearchCV

    X, y, _ = data
    ledger = PrivacyLedger()
    model = DPLogisticRegression(
        epsilon=10.0, noise_multiplier=4.0, max_iter=2, classes=[0, 1],
        accountant=ledger,
    )
    search = HalvingGridSearchCV(
        model, {"alpha": [0.0, 1e-4, 1e-3, 1e-2]}, cv=2, factor=2,
        min_resources=100, random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, y)
    n_evaluations = len(search.cv_results_["params"])
    assert n_evaluations > 4  # the survivors were evaluated again
    note = privacy_report(search).notes[0]
    assert "among 4 candidates" in note
    assert f"{n_evaluations} candidate evaluations" in note
    # The ledger holds every fit of every round, and the refit.
    assert len(ledger) == n_evaluations * 2 + 1
    assert f"the {len(ledger)} training fits" in note
