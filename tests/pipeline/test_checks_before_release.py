# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""What a part of a PrivatePipeline would refuse is refused before any release.

A part validates its own input when its fit runs: in a later block of a
``ColumnTransformer``, a later step, a nested pipeline or the final step,
that refusal would come after the earlier parts' noisy releases, and
whether the fit fails would depend on one record once budget is spent.
Each refusal here is checked to come with no release observed.
"""

import traceback
import warnings

import numpy as np
import pandas as pd
import pytest
import sklearn
from release_observer import Releases
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, OrdinalEncoder

from sklearn_dpfair.exceptions import PrivacyLeakWarning
from sklearn_dpfair.linear_model import DPLogisticRegression, SemiDPLinearRegression
from sklearn_dpfair.pipeline import PrivatePipeline, make_private_pipeline
from sklearn_dpfair.preprocessing import (
    DPOneHotEncoder,
    DPSimpleImputer,
    DPStandardScaler,
)
from sklearn_dpfair.privacy._mechanism import observe_privatize

N = 200


def _model(**params):
    return DPLogisticRegression(classes=[0, 1], max_iter=2, **params)


def _scaler():
    return DPStandardScaler(bounds=(-3, 3))


def _imputer():
    return DPSimpleImputer(bounds=(-3, 3))


def _refused_before_any_release(fit, error=ValueError, match=None):
    """``fit()`` raises ``error``, and no noisy sum was released before."""
    releases = Releases()
    with observe_privatize(releases), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(error, match=match) as info:
            fit()
    assert releases.seen == []
    return str(info.value)


def _impute_first_column():
    return ColumnTransformer([("imp", _imputer(), [0])], remainder="passthrough")


def _numbers(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, 3))
    return X, (X[:, 0] > 0).astype(int)


def _with(X, column, value):
    X = X.astype(object) if isinstance(value, str) else X.copy()
    X[7, column] = value
    return X


# -- X: a later block's or step's refusal ------------------------------------


def _frame():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        {
            "c": rng.choice(["x", "y"], N),
            "a": rng.normal(size=N),
            "b": rng.normal(size=N),
        }
    )
    return X, (X["a"] > 0).astype(int).to_numpy()


def _blocks():
    # The encoder's block releases first (a private category discovery).
    columns = ColumnTransformer(
        [
            ("cat", DPOneHotEncoder(), ["c"]),
            ("num", _scaler(), ["a"]),
            ("num2", _imputer(), ["b"]),
        ]
    )
    return PrivatePipeline([("ct", columns), ("clf", _model())], random_state=0)


@pytest.mark.parametrize(
    "column, value, match",
    [
        ("a", np.inf, r"infinity .* column 'a', which may reach 'ct__num'"),
        ("b", -np.inf, r"infinity .* column 'b', which may reach 'ct__num2'"),
        ("a", "oops", r"could not convert a value of column 'a' to float"),
        # The scaler keeps NaN, which reaches the final step unimputed.
        ("a", np.nan, r"NaN in column 'a', which may reach 'clf'"),
    ],
)
def test_a_value_a_later_block_refuses_is_refused_before_any_release(
    column, value, match
):
    X, y = _frame()
    X[column] = X[column].astype(object)
    X.loc[7, column] = value
    message = _refused_before_any_release(lambda: _blocks().fit(X, y), match=match)
    assert "oops" not in message


_MIXED_C = (
    r"column 'c' mixes values of different kinds .* 'ct__cat' \(DPOneHotEncoder\)"
)


@pytest.mark.parametrize("value", [5, 2.5, True, b"x"])
def test_a_mixed_column_a_later_encoder_discovers_is_refused_before_any_release(
    value,
):
    # The scaler's block releases first; the encoder, discovering the
    # categories of "c", refused a column mixing strings with another type
    # only then, so one record's type decided whether the fit failed.
    X, y = _frame()
    X = X[["a", "b", "c"]]
    X["c"] = X["c"].astype(object)
    X.loc[7, "c"] = value
    columns = ColumnTransformer(
        [("num", _scaler(), ["a"]), ("cat", DPOneHotEncoder(), ["c"])],
        remainder="drop",
    )
    pipe = PrivatePipeline([("ct", columns), ("clf", _model())], random_state=0)
    message = _refused_before_any_release(
        lambda: pipe.fit(X, y),
        error=TypeError,
        match=_MIXED_C,
    )
    assert str(value) not in message
    # Declared categories read it as an unknown category: no refusal.
    columns.set_params(
        cat=DPOneHotEncoder(categories=[["x", "y"]], handle_unknown="ignore")
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        PrivatePipeline([("ct", columns), ("clf", _model())], random_state=0).fit(X, y)


def test_dates_of_two_types_a_later_encoder_discovers_are_refused_before_release():
    # Timestamps with one datetime.date: pandas reads the column as "date",
    # which the check took for one kind and left to the encoder, whose
    # refusal came after the scaler's release.
    import datetime

    X, y = _frame()
    X = X[["a", "c"]].copy()
    X["c"] = pd.Series(
        [pd.Timestamp("2020-01-01") + pd.Timedelta(days=i % 3) for i in range(N)],
        dtype=object,
    )
    X.loc[7, "c"] = datetime.date(2020, 1, 2)
    columns = ColumnTransformer(
        [("num", _scaler(), ["a"]), ("cat", DPOneHotEncoder(), ["c"])],
        remainder="drop",
    )
    pipe = PrivatePipeline([("ct", columns), ("clf", _model())], random_state=0)
    _refused_before_any_release(
        lambda: pipe.fit(X, y), error=TypeError, match=_MIXED_C
    )


def test_a_cell_no_declared_category_can_be_is_refused_before_any_release():
    # A list in a column a DPOneHotEncoder with declared categories reads:
    # it cannot look the list up, and refused it after the scaler's release.
    X, y = _frame()
    X = X[["a", "c"]].copy()
    X["c"] = X["c"].astype(object)
    X.at[7, "c"] = ["x"]
    encoder = DPOneHotEncoder(categories=[["x", "y"]], handle_unknown="ignore")
    columns = ColumnTransformer(
        [("num", _scaler(), ["a"]), ("cat", encoder, ["c"])], remainder="drop"
    )
    pipe = PrivatePipeline([("ct", columns), ("clf", _model())], random_state=0)
    _refused_before_any_release(
        lambda: pipe.fit(X, y),
        error=TypeError,
        match=r"column 'c' holds a value that cannot be a category .* 'ct__cat'",
    )


@pytest.mark.parametrize(
    "encoder, column, value",
    [
        (OneHotEncoder(categories=[["x", "y"], [0.0, 1.0]]), "c", "zz"),
        (OrdinalEncoder(categories=[["x", "y"], [0.0, 1.0]]), "c", "zz"),
        # The second position's categories: a number, and a missing value
        # that is not declared.
        (OrdinalEncoder(categories=[["x", "y"], [0.0, 1.0]]), "d", 2.0),
        (OneHotEncoder(categories=[["x", "y"], [0.0, 1.0]]), "d", np.nan),
    ],
)
def test_a_value_outside_declared_categories_is_refused_before_any_release(
    encoder, column, value
):
    # The scaler's block releases first; scikit-learn's encoder, with
    # declared categories and handle_unknown="error", refused an undeclared
    # value only then.
    X, y = _frame()
    X["d"] = (X["b"] > 0).astype(float)
    X[column] = X[column].astype(object) if column == "c" else X[column]
    X.loc[7, column] = value
    columns = ColumnTransformer(
        [("num", _scaler(), ["a"]), ("cat", encoder, ["c", "d"])],
        remainder="drop",
    )
    pipe = PrivatePipeline([("ct", columns), ("clf", _model())], random_state=0)
    kind = type(encoder).__name__
    message = _refused_before_any_release(
        lambda: pipe.fit(X, y),
        match=rf"column '{column}' holds a value .* 'ct__cat' \({kind}\)",
    )
    assert str(value) not in message
    # Declared values, and an encoder that takes unknown values, still fit.
    X.loc[7, column] = X.loc[8, column]
    fix = {"handle_unknown": "ignore"} if kind == "OneHotEncoder" else {
        "handle_unknown": "use_encoded_value", "unknown_value": -1
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(X, y)
        X.loc[7, column] = value
        columns.set_params(cat=encoder.set_params(**fix))
        PrivatePipeline([("ct", columns), ("clf", _model())], random_state=0).fit(X, y)


@pytest.mark.parametrize("value", ["nan", "NaN", " nan "])
def test_a_missing_value_written_as_a_string_is_refused_before_any_release(value):
    # A column of numbers written as strings: the scaler parses "nan" to NaN
    # and hands it on, and the final step refused it after the scaler's
    # release (pd.isna does not read the string as missing).
    X, y = _frame()
    X["a"] = X["a"].astype(str).astype(object)
    X.loc[7, "a"] = value
    columns = ColumnTransformer([("num", _scaler(), ["a"])], remainder="drop")
    pipe = PrivatePipeline([("ct", columns), ("clf", _model())], random_state=0)
    _refused_before_any_release(
        lambda: pipe.fit(X, y), match=r"NaN in column 'a', which may reach 'clf'"
    )
    X.loc[7, "a"] = "0.5"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(X, y)


@pytest.mark.parametrize("code", ["nan", "inf"])
def test_a_code_an_encoder_reads_as_a_category_is_not_parsed(code):
    # An OrdinalEncoder reads the string "nan" (or "inf") as one of its
    # categories and writes its code: nothing missing reaches the final step.
    X, y = _frame()
    X["code"] = np.array(["1", "2", code], dtype=object)[np.arange(N) % 3]
    encoder = OrdinalEncoder(categories=[np.array(["1", "2", code], dtype=object)])
    columns = ColumnTransformer(
        [("num", _scaler(), ["a"]), ("cat", encoder, ["code"])], remainder="drop"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        PrivatePipeline([("ct", columns), ("clf", _model())], random_state=0).fit(X, y)


@pytest.mark.parametrize("other", [1, True])
def test_a_categorical_column_mixing_kinds_is_refused_before_any_release(other):
    # pandas reads a categorical column's type as "categorical", so its
    # categories mixing strings with numbers were not checked up front, and
    # the encoder refused a row holding the number after the scaler's release.
    X, y = _frame()
    X["c"] = X["c"].astype(object)
    X.loc[7, "c"] = other
    X["c"] = X["c"].astype("category")
    columns = ColumnTransformer(
        [("num", _scaler(), ["a"]), ("cat", DPOneHotEncoder(), ["c"])],
        remainder="drop",
    )
    pipe = PrivatePipeline([("ct", columns), ("clf", _model())], random_state=0)
    _refused_before_any_release(
        lambda: pipe.fit(X, y),
        error=TypeError,
        match=_MIXED_C,
    )
    # An unused mixed category is not a value of the column: it fits.
    X.loc[7, "c"] = "x"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(X, y)


def test_a_refusal_keeps_no_private_value_in_its_context():
    # Raised "from None" inside the handler, the refusal hid the conversion's
    # error (quoting the value) from tracebacks but kept it as __context__.
    secret = "SECRET_VALUE_42"
    X, y = _frame()
    X["b"] = X["b"].astype(object)
    X.loc[3, "b"] = secret
    columns = ColumnTransformer(
        [("cat", DPOneHotEncoder(), ["c"]), ("num", _scaler(), ["b"])]
    )
    pipe = PrivatePipeline([("ct", columns), ("clf", _model())], random_state=0)
    with pytest.raises(ValueError, match="not shown") as info:
        pipe.fit(X, y)
    targets = np.full(N, "1.0", dtype=object)
    targets[3] = secret
    regressor = PrivatePipeline(
        [("num", _scaler()), ("reg", SemiDPLinearRegression())], random_state=0
    )
    with pytest.raises(ValueError, match="must hold numbers") as target_info:
        regressor.fit(X[["a"]], targets)
    for error in (info.value, target_info.value):
        chain = [error.__context__, error.__cause__]
        assert all(link is None for link in chain)
        assert secret not in "".join(traceback.format_exception(error))


def test_an_encoder_refusing_its_own_categories_says_so_before_any_release():
    # Unsorted numeric categories are refused whatever the data: the
    # message is the encoder's, about its parameter, not "a value outside
    # the declared categories".
    X, y = _frame()
    X["d"] = np.arange(N) % 2
    encoder = OrdinalEncoder(categories=[[1, 0]])
    columns = ColumnTransformer(
        [("num", _scaler(), ["a"]), ("cat", encoder, ["d"])], remainder="drop"
    )
    pipe = PrivatePipeline([("ct", columns), ("clf", _model())], random_state=0)
    _refused_before_any_release(
        lambda: pipe.fit(X, y),
        match=r"'ct__cat' \(OrdinalEncoder\) refuses its declared categories: "
        "Unsorted categories",
    )


def test_declared_categories_after_a_join_are_left_to_the_encoder():
    # An earlier ColumnTransformer joins its blocks into one float64 array,
    # in which the encoder compares its declared categories: 2**53 + 1 reads
    # as 2**53 there (declared), not as the int64 of the input. Checked on
    # the input's dtype, the pipeline was refused.
    X, y = _frame()
    X["d"] = np.where(np.arange(N) % 2 == 0, 2**53 + 1, 2**53 + 2).astype(np.int64)
    first = ColumnTransformer([("num", _scaler(), ["a"])], remainder="passthrough")
    encoder = OrdinalEncoder(categories=[[2**53, 2**53 + 2]])
    second = ColumnTransformer([("cat", encoder, [2])], remainder="drop")
    pipe = PrivatePipeline(
        [("s1", first), ("s2", second), ("clf", _model())], random_state=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(X[["a", "b", "d"]], y)


def test_values_the_parts_take_still_fit():
    # NaN into the imputer, a huge finite value into the scaler.
    X, y = _frame()
    X.loc[3, "b"] = np.nan
    X.loc[4, "a"] = 1e308
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe = _blocks().fit(X, y)
    assert pipe.epsilon_ <= 1.0


@pytest.mark.parametrize(
    "steps, column, refused",
    [
        # A NaN kept by the scaler is imputed in its column by the block.
        ([("sc", _scaler()), ("imp", _imputer())], 0, False),
        (
            [
                ("sc", _scaler()),
                ("ct", _impute_first_column()),
            ],
            0,
            False,
        ),
        (
            [
                ("sc", _scaler()),
                ("ct", _impute_first_column()),
            ],
            1,
            True,
        ),
        # A part of a union hands the column on unimputed.
        ([("fu", FeatureUnion([("a", _scaler()), ("b", _imputer())]))], 0, True),
        # Nothing is released before the final step, which refuses it itself.
        ([("f", FunctionTransformer(np.nan_to_num))], 0, False),
        # A func's output is new values (here the NaN filled), left to the
        # next part: a func that fills missing values is not refused.
        ([("f", FunctionTransformer(np.nan_to_num)), ("sc", _scaler())], 0, False),
        # An ordinal encoder writes a missing value as its number ...
        (
            [
                ("sc", _scaler()),
                ("o", OrdinalEncoder(
                    categories=[[-1.0, 1.0]] * 3, handle_unknown="use_encoded_value",
                    unknown_value=-1, encoded_missing_value=-2,
                )),
            ],
            0,
            False,
        ),
        # ... or hands it on by default.
        (
            [
                ("sc", _scaler()),
                ("o", OrdinalEncoder(
                    categories=[[-1.0, 1.0]] * 3, handle_unknown="use_encoded_value",
                    unknown_value=-1,
                )),
            ],
            0,
            True,
        ),
    ],
    ids=[
        "imputed", "imputed-block", "passed-on", "union", "func-first", "func",
        "ordinal-encoded-missing", "ordinal-default",
    ],
)
def test_a_missing_value_is_followed_through_the_steps(steps, column, refused):
    X, y = _numbers()
    X = _with(X, column, np.nan)
    pipe = PrivatePipeline([*steps, ("clf", _model())], random_state=0)
    if refused:
        _refused_before_any_release(
            lambda: pipe.fit(X, y), match=f"NaN in column {column}, which may"
        )
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pipe.fit(X, y)


@pytest.mark.parametrize("value", ["oops", np.inf])
def test_a_passthrough_block_hands_the_raw_value_to_the_final_step(value):
    X, y = _numbers()
    X = _with(X, 2, value)
    columns = ColumnTransformer(
        [("sc", _scaler(), [0]), ("raw", "passthrough", [1, 2])]
    )
    pipe = PrivatePipeline([("ct", columns), ("clf", _model())], random_state=0)
    _refused_before_any_release(lambda: pipe.fit(X, y), match="column 2")
    # A dropped column reaches no part.
    dropped = ColumnTransformer([("sc", _scaler(), [0]), ("raw", "passthrough", [1])])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        PrivatePipeline([("ct", dropped), ("clf", _model())], random_state=0).fit(X, y)


# -- y without declared classes ----------------------------------------------


@pytest.mark.parametrize(
    "y, match",
    [
        (np.zeros(N, dtype=int), "only one class"),
        (np.array([1, 2.5] * (N // 2), dtype=object), "Unknown label type"),
        (np.array([1, "b"] * (N // 2), dtype=object), "Unknown label type"),
        (
            pd.Series(["a", "b"] * (N // 2)).where(np.arange(N) != 5, np.nan),
            "contains NaN",
        ),
    ],
    ids=["one-class", "int-float", "int-str", "str-nan"],
)
def test_undeclared_labels_are_checked_before_any_release(y, match):
    X, _ = _numbers()
    pipe = PrivatePipeline(
        [("sc", _scaler()), ("clf", DPLogisticRegression(max_iter=2))], random_state=0
    )
    _refused_before_any_release(lambda: pipe.fit(X, y), match=match)
    # The estimator's own error.
    with pytest.raises(ValueError, match=match), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        DPLogisticRegression(max_iter=2).fit(X, y)


def test_undeclared_labels_warn_once():
    X, y = _numbers()
    pipe = PrivatePipeline(
        [("sc", _scaler()), ("clf", DPLogisticRegression(max_iter=2))], random_state=0
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pipe.fit(X, y)
    leaks = [w for w in caught if issubclass(w.category, PrivacyLeakWarning)]
    assert len(leaks) == 1


# -- delta against n -----------------------------------------------------------


def test_a_large_delta_is_warned_about_once_with_the_pipelines_value():
    X, y = _numbers()
    pipe = PrivatePipeline(
        [("imp", _imputer()), ("sc", _scaler()), ("clf", _model())],
        delta=0.009,
        random_state=0,
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pipe.fit(X, y)
    deltas = [str(w.message) for w in caught if "1/n_samples" in str(w.message)]
    assert len(deltas) == 1 and deltas[0].startswith("delta=0.009 ")


@pytest.mark.parametrize("off_scale_rows", [25, 26])
def test_the_final_steps_scale_warning_is_not_given_after_a_release(off_scale_rows):
    # Neighbouring data sets (one row moved from 0 to 8): the final step's
    # warning that more than a quarter of a column lies beyond +-5 read the
    # imputer's output, after its release, and fired for 26 rows, not 25.
    y = np.repeat([0, 1], 50)
    X = np.zeros((100, 1))
    X[:off_scale_rows, 0] = 8.0
    pipe = make_private_pipeline(
        DPSimpleImputer(bounds=(-10, 10)),
        DPLogisticRegression(classes=[0, 1], max_iter=2),
        random_state=0,
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pipe.fit(X, y)
    assert not [w for w in caught if "quarter of the values" in str(w.message)]
    # Before any release (a stateless step first) the check is the
    # estimator's own, as without the pipeline.
    pipe = make_private_pipeline(
        FunctionTransformer(), DPLogisticRegression(classes=[0, 1], max_iter=2)
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pipe.fit(X, y)
    scale = [w for w in caught if "quarter of the values" in str(w.message)]
    assert len(scale) == (off_scale_rows > 25)


# -- the bound of output perturbation ----------------------------------------


@pytest.mark.parametrize(
    "columns",
    [
        ColumnTransformer([("num", _scaler(), [0])], remainder="passthrough"),
        ColumnTransformer(
            [("num", _scaler(), [0]), ("raw", "passthrough", slice(1, 3))]
        ),
    ],
    ids=["remainder", "slice"],
)
def test_raw_columns_before_output_perturbation_are_refused_by_the_plan(columns):
    X, y = _numbers()
    final = DPLogisticRegression(
        classes=[0, 1], solver="output-perturbation", alpha=1.0
    )
    pipe = PrivatePipeline([("ct", columns), ("clf", final)], random_state=0)
    with pytest.raises(ValueError, match="declares no output bound"):
        pipe.privacy_plan(N, 3)
    _refused_before_any_release(lambda: pipe.fit(X, y), match="declares no output")
    # No column left to the remainder, or none in the slice: the bound is
    # the scaler's.
    pipe.privacy_plan(N, 1)


# -- the parameters of nested parts ------------------------------------------


def _nested():
    return PrivatePipeline(
        [
            ("imp", _imputer()),
            ("pre", Pipeline([("sc", _scaler())])),
            ("clf", _model()),
        ],
        random_state=0,
    )


@pytest.mark.parametrize(
    "params, error, match",
    [
        (
            {"pre__sc__sample_weight": -np.ones(N)},
            ValueError,
            "pre__sc__sample_weight: Negative values",
        ),
        (
            {"pre__sc__sample_weight": np.ones(N - 1)},
            ValueError,
            r"pre__sc__sample_weight: sample_weight.shape",
        ),
        ({"pre__sc__sample_wieght": np.ones(N)}, TypeError, "sample_wieght"),
        ({"pre__xx__sample_weight": np.ones(N)}, ValueError, "no step 'xx'"),
    ],
    ids=["negative", "short", "keyword", "step"],
)
def test_a_nested_parts_parameters_are_checked_before_any_release(
    params, error, match
):
    X, y = _numbers()
    _refused_before_any_release(
        lambda: _nested().fit(X, y, **params), error=error, match=match
    )


def test_a_nested_parts_weights_are_checked_under_metadata_routing():
    X, y = _numbers()
    with sklearn.config_context(enable_metadata_routing=True):
        scaler = _scaler().set_fit_request(sample_weight="w")
        columns = ColumnTransformer([("sc", scaler, [0, 1])], remainder="passthrough")
        pipe = PrivatePipeline(
            [
                ("imp", _imputer()),
                ("ct", columns),
                ("clf", _model().set_fit_request(sample_weight=False)),
            ],
            random_state=0,
        )
        _refused_before_any_release(
            lambda: pipe.fit(X, y, w=-np.ones(N)), match="Negative values"
        )


# -- budget shares -------------------------------------------------------------


def test_a_share_of_a_part_that_spends_nothing_is_accepted_and_unused():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"c": rng.choice(["x", "y"], N)})
    y = (X["c"] == "x").astype(int).to_numpy()
    pipe = PrivatePipeline(
        [("enc", DPOneHotEncoder(categories=[["x", "y"]])), ("clf", _model())],
        budget_shares={"enc": 0.2, "clf": 0.8},
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(X, y)
    assert pipe.step_budgets_["enc"]["share"] == 0.0
    assert pipe.step_budgets_["clf"]["share"] == 1.0


def test_a_part_no_budget_can_plan_gives_its_own_error():
    # Every row public: semi-private gradient descent has nothing private
    # to run on at any epsilon; no split of the budget is at fault.
    X, _ = _numbers()
    y = X @ [1.0, 2.0, 3.0]
    pipe = PrivatePipeline(
        [("sc", _scaler()), ("reg", SemiDPLinearRegression(feature_scaling=None))],
        random_state=0,
    )
    with pytest.raises(ValueError, match="marks every row public") as info:
        pipe.fit(X, y, public_mask=np.ones(N, dtype=bool))
    assert "cannot be split" not in str(info.value)


@pytest.mark.parametrize("scaled", [False, True])
def test_a_step_that_raises_after_releases_charges_the_pipelines_ledger(scaled):
    # A federated final step whose rounds diverge raises after the silos'
    # messages (and the scaler's release before them): the pipeline's ledger
    # held nothing. It now holds the pipeline's planned event, the bound of
    # what ran, as a pipeline that fits records.
    from sklearn_dpfair.exceptions import DivergedModelError
    from sklearn_dpfair.privacy import PrivacyLedger

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 2))
    y = (X[:, 0] > 0).astype(int)
    silos = np.repeat([0, 1], 200)

    def pipeline(learning_rate, accountant):
        final = DPLogisticRegression(
            classes=[0, 1], learning_rate=learning_rate, noise_multiplier=100.0
        )
        steps = (DPStandardScaler(bounds=(-5, 5)), final) if scaled else (final,)
        return make_private_pipeline(
            *steps, epsilon=5.0, delta=1e-5, accountant=accountant, random_state=0
        )

    ledger = PrivacyLedger()
    with pytest.raises(DivergedModelError) as raised:
        pipeline(1e308, ledger).fit(X, y, silos=silos)
    assert any("planned event is recorded" in n for n in raised.value.__notes__)
    (entry,) = ledger.entries
    assert entry.source.startswith("PrivatePipeline (raised after releasing")
    fitted = pipeline(1e-3, "rdp").fit(X, y, silos=silos)
    assert entry.dp_event == fitted.dp_event_
    assert entry.epsilon == pytest.approx(fitted.epsilon_)
    assert entry.delta == fitted.delta_ and entry.adjacency == fitted.adjacency_


@pytest.mark.parametrize("final", ["logistic", "mlp"])
@pytest.mark.parametrize(
    "silos, fit_params, pipe_params, message",
    [
        # A silo of one row: too few for the sampling rate.
        (np.r_[[9], np.arange(1, 400) % 4], {}, {}, "too few for the sampling"),
        (np.arange(400) % 4, {"sample_weight": np.ones(400)}, {}, "sample_weight"),
        # Unequal silos: the pipeline's plan checked n / n_silos = 133 rows
        # against the delta; the silo of 300 is too large for it.
        (np.repeat([0, 1, 2], [300, 90, 10]), {}, {"delta": 0.006}, "too many"),
    ],
    ids=["one-row-silo", "weights", "unequal-delta"],
)
def test_a_federated_final_step_refuses_its_silos_before_any_release(
    final, silos, fit_params, pipe_params, message
):
    # The final step's own refusals came after the scaler's release, and
    # the ledger was charged for a fit that failed.
    from sklearn_dpfair.neural import DPMLPClassifier
    from sklearn_dpfair.privacy import PrivacyLedger

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = (X[:, 0] > 0).astype(int)
    model = (DPLogisticRegression if final == "logistic" else DPMLPClassifier)(
        classes=[0, 1], max_iter=2
    )
    ledger = PrivacyLedger()
    pipe = make_private_pipeline(
        DPStandardScaler(bounds=(-5, 5)), model, accountant=ledger,
        random_state=0, **pipe_params,
    )
    observer = Releases()
    with observe_privatize(observer), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match=message):
            pipe.fit(X, y, silos=silos, **fit_params)
    assert observer.seen == [] and ledger.entries == []


def test_a_pipeline_refused_before_its_first_release_charges_nothing():
    from sklearn_dpfair.privacy import PrivacyLedger

    X = np.random.default_rng(0).normal(size=(200, 2))
    X[3, 1] = np.inf
    y = (X[:, 0] > 0).astype(int)
    ledger = PrivacyLedger()
    pipe = make_private_pipeline(
        DPStandardScaler(bounds=(-5, 5)),
        DPLogisticRegression(classes=[0, 1]),
        epsilon=1.0,
        accountant=ledger,
    )
    with pytest.raises(ValueError):
        pipe.fit(X, y)
    assert ledger.entries == []


def test_the_declared_categories_check_swaps_no_warning_filter(filter_swaps):
    # The check fits a one-column probe of the encoder on the column. It
    # ran inside warnings.catch_warnings with an "ignore" filter, which
    # swaps the process-wide filters: two pipelines checking at once in two
    # threads could leave "ignore" installed, and every later warning of
    # the process was lost. scikit-learn's encoders warn nothing there.
    X, y = _frame()
    X["c"] = X["c"].astype(object)
    encoder = OneHotEncoder(categories=[["x", "y"]])
    columns = ColumnTransformer(
        [("num", _scaler(), ["a"]), ("cat", encoder, ["c"])], remainder="drop"
    )
    pipe = PrivatePipeline([("ct", columns), ("clf", _model())], random_state=0)
    pipe.fit(X, y)
    X.loc[7, "c"] = "z"
    with pytest.raises(ValueError, match="outside the declared categories"):
        pipe.fit(X, y)
    assert filter_swaps == []
