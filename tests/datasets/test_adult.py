# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
import traceback

import numpy as np
import pytest

from sklearn_dpfair.datasets import load_adult, make_adult_preprocessor


def test_train_and_test_files_are_bundled():
    train, test = load_adult(), load_adult(subset="test")
    # UCI counts after dropping rows with "?": 30,162 and 15,060.
    assert train.data.shape == (30162, 12)
    assert test.data.shape == (15060, 12)
    assert set(np.unique(train.target)) == {0, 1}
    assert set(train.sensitive["sex"].cat.categories) == {"Female", "Male"}
    assert "sex" not in train.data.columns and "race" not in train.data.columns
    # The test file's labels carry a trailing dot in the raw data.
    assert test.target.mean() == pytest.approx(0.2457, abs=1e-3)


def test_options():
    X, y = load_adult(return_X_y=True, as_frame=False)
    assert isinstance(X, np.ndarray) and X.shape[0] == y.shape[0]
    raw = load_adult(dropna=False, drop_sensitive=False)
    assert raw.data.shape == (32561, 14)
    assert raw.data.isna().any().any()
    both = load_adult(subset="all")
    assert both.data.shape[0] == 30162 + 15060
    with pytest.raises(ValueError, match="subset"):
        load_adult(subset="validation")


@pytest.mark.parametrize(
    "categorical_features, error, match",
    [
        ("workclass", TypeError, r"\['workclass'\]"),
        (["foo"], ValueError, "categorical_features has columns \\['foo'\\]"),
        (["age"], ValueError, "not categorical"),
    ],
)
def test_bad_categorical_features_name_the_parameter(
    categorical_features, error, match
):
    with pytest.raises(error, match=match):
        make_adult_preprocessor(categorical_features=categorical_features)


@pytest.mark.parametrize("flag", ["as_frame", "return_X_y", "dropna", "drop_sensitive"])
def test_flags_that_are_not_bools_name_the_parameter(flag):
    # A string such as "no" is truthy: it would silently read as True.
    with pytest.raises(ValueError, match=f"{flag} must be True or False"):
        load_adult(**{flag: "no"})


def test_a_cell_that_is_not_a_number_is_not_printed():
    # The rows are private: the parsing error must not quote the cell, nor
    # keep the quoting error as its cause or context.
    X = load_adult().data.head(50).copy()
    X["age"] = X["age"].astype(object)
    X.loc[X.index[3], "age"] = "SECRET-John-Doe-1961"
    with pytest.raises(ValueError, match="could not convert") as info:
        make_adult_preprocessor().fit_transform(X)
    shown = "".join(traceback.format_exception(info.value))
    assert "SECRET" not in shown


def test_feature_names_out_name_every_column():
    adult = load_adult()
    preprocess = make_adult_preprocessor().fit(adult.data.head(50))
    names = preprocess.get_feature_names_out()
    assert len(names) == preprocess.transform(adult.data.head(5)).shape[1] == 97
    assert list(names[:5]) == [
        f"functiontransformer__{col}"
        for col in ["age", "education-num", "hours-per-week", "capital-gain",
                    "capital-loss"]
    ]
    assert "onehotencoder__workclass_Private" in names


def test_the_frame_is_none_without_as_frame():
    # As scikit-learn's loaders: as_frame=False returns arrays only.
    adult = load_adult(as_frame=False)
    assert adult.frame is None
    assert isinstance(adult.data, np.ndarray)
    assert load_adult().frame.shape[0] == adult.data.shape[0]
