# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
import math
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm
from sklearn.preprocessing import OneHotEncoder

from sklearn_dpfair.preprocessing import DPOneHotEncoder
from sklearn_dpfair.preprocessing._categories import (
    MISSING,
    NONE,
    canonical_order,
    column_keys,
)
from sklearn_dpfair.privacy import PrivacyLedger
from sklearn_dpfair.privacy._accounting import epsilon_of


def _frame(n=400, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "colour": rng.choice(["red", "green", "blue"], n, p=[0.5, 0.3, 0.2]),
            "size": rng.choice([1, 2, 3], n),
            "city": rng.choice(["Oslo", None, "Lima"], n),
        }
    )


# Records added to D: an unseen category in each column, a missing value,
# a value already common, a one-of-a-kind string.
NEW_RECORDS = {
    "unseen": ["violet", 99, "Quito"],
    "missing": [None, np.nan, None],
    "common": ["red", 1, "Oslo"],
    "one_of_a_kind": ["x" * 1000, -1, "\u00e9"],
}


def _counts_by_key(X):
    """Exact counts of each (column, category), in the encoder's order."""
    out = {}
    for j, name in enumerate(X.columns):
        keys = column_keys(X[name].to_numpy(dtype=object), none_apart=True)
        for k in canonical_order(set(keys)):
            out[(j, k)] = keys.count(k)
    return out


@pytest.mark.parametrize("record", list(NEW_RECORDS.values()), ids=list(NEW_RECORDS))
def test_one_record_moves_the_counts_by_its_sensitivity(privatized_sums, record):
    # Partition selection: a record holds one category per column, so the
    # counts of the categories present move by at most sqrt(d) in l2 norm,
    # and a category absent from D has count exactly 1 in D'.
    X = _frame()
    Z = pd.concat([X, pd.DataFrame([record], columns=X.columns)], ignore_index=True)
    fits = [DPOneHotEncoder(random_state=0).fit(data) for data in (X, Z)]
    sensitivity = fits[0].privacy_record_.clip_norm
    assert sensitivity == pytest.approx(math.sqrt(X.shape[1]))
    before, after = privatized_sums
    keys_before, keys_after = list(_counts_by_key(X)), list(_counts_by_key(Z))
    # The spied vectors are the counts in the canonical order.
    np.testing.assert_array_equal(before, list(_counts_by_key(X).values()))
    np.testing.assert_array_equal(after, list(_counts_by_key(Z).values()))
    diff = dict(zip(keys_after, after))
    for key, count in zip(keys_before, before):
        diff[key] -= count
    moved = np.array(list(diff.values()))
    assert np.linalg.norm(moved) <= sensitivity + 1e-12
    new = set(keys_after) - set(keys_before)
    assert all(diff[key] == 1 for key in new)


def test_the_threshold_keeps_a_single_record_category_with_probability_delta():
    enc = DPOneHotEncoder(epsilon=1.0, delta=1e-6).fit(_frame())
    d = 3
    record = enc.privacy_record_
    sigma = record.noise_multiplier * record.clip_norm
    # P(1 + N(0, sigma^2) > tau) for each of a record's d categories.
    p_keep = norm.sf((enc.threshold_ - 1.0) / sigma)
    assert d * p_keep == pytest.approx(enc.threshold_delta_, rel=1e-6)
    assert enc.threshold_delta_ == pytest.approx(0.5e-6)


@pytest.mark.parametrize("accountant", ["rdp", "pld"])
def test_epsilon_recomputed_from_the_event_meets_the_target(accountant):
    enc = DPOneHotEncoder(epsilon=0.7, delta=1e-5, accountant=accountant).fit(_frame())
    # The accountant is given the noise's delta; the threshold's is apart.
    recomputed = epsilon_of(enc.dp_event_, enc.delta_, accountant)
    assert recomputed == pytest.approx(enc.epsilon_, rel=1e-9)
    assert enc.privacy_record_.recompute_epsilon() == pytest.approx(enc.epsilon_)
    assert enc.epsilon_ <= 0.7 * (1 + 1e-9)
    assert enc.delta_ + enc.threshold_delta_ == pytest.approx(1e-5, rel=1e-12)
    assert enc.delta_ == pytest.approx(0.5e-5) and enc.adjacency_ == "add_remove"


def test_declared_categories_cost_nothing(privatized_sums):
    X = _frame()
    enc = DPOneHotEncoder(
        categories=[["blue", "red"], [1, 2, 3], ["Lima", "Oslo", None]]
    ).fit(X)
    assert enc.epsilon_ == 0.0 and enc.dp_event_.__class__.__name__ == "NoOpDpEvent"
    assert not privatized_sums
    out = enc.transform(
        pd.DataFrame({"colour": ["green"], "size": [2], "city": [None]})
    )
    # green is undeclared: the other column of "colour".
    np.testing.assert_array_equal(out, [[0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 0]])


def test_epsilon_inf_is_scikit_learn():
    X = _frame()
    X.loc[3, "colour"] = "rare"
    ours = DPOneHotEncoder(epsilon=np.inf, handle_unknown="ignore").fit(X)
    ref = OneHotEncoder(handle_unknown="ignore", sparse_output=False).fit(X)
    test = _frame(50, seed=1)
    test.loc[0, "colour"] = "unseen"
    np.testing.assert_array_equal(ours.transform(test), ref.transform(test))
    assert list(ours.get_feature_names_out()) == list(ref.get_feature_names_out())
    for a, b in zip(ours.categories_, ref.categories_):
        assert [str(v) for v in a] == [str(v) for v in b]
    assert math.isinf(ours.epsilon_)


def test_rare_and_unseen_categories_go_to_other():
    X = pd.DataFrame({"c": ["a"] * 300 + ["b"] * 200 + ["rare"]})
    enc = DPOneHotEncoder(random_state=0).fit(X)
    assert list(enc.categories_[0]) == ["a", "b"]
    out = enc.transform(pd.DataFrame({"c": ["rare", "never", "a"]}))
    np.testing.assert_array_equal(out, [[0, 0, 1], [0, 0, 1], [1, 0, 0]])
    ignore = DPOneHotEncoder(handle_unknown="ignore", random_state=0).fit(X)
    np.testing.assert_array_equal(
        ignore.transform(pd.DataFrame({"c": ["rare", "b"]})), [[0, 0], [0, 1]]
    )


def test_utility_rises_with_epsilon():
    # Categories of Zipf-like frequencies: more budget finds more of them.
    counts = np.array([2000, 800, 300, 120, 50, 20, 8, 3])
    X = pd.DataFrame({"c": np.repeat([f"c{i}" for i in range(len(counts))], counts)})
    found = [
        np.mean(
            [
                len(DPOneHotEncoder(epsilon=eps, random_state=s).fit(X).categories_[0])
                for s in range(10)
            ]
        )
        for eps in (0.05, 0.5, 5.0)
    ]
    assert found[0] < found[1] < found[2] <= len(counts)


def test_missing_values_are_a_category():
    X = pd.DataFrame({"c": pd.Series(["a"] * 300 + [np.nan] * 200, dtype=object)})
    enc = DPOneHotEncoder(random_state=0).fit(X)
    assert enc._keys[0] == ["a", MISSING]
    assert list(enc.get_feature_names_out()) == ["c_a", "c_nan", "c_infrequent_sklearn"]
    test = pd.DataFrame({"c": pd.Series([np.nan, pd.NA, None, "a"], dtype=object)})
    # pd.NA is NaN's category; None is a category of its own (here unseen).
    np.testing.assert_array_equal(
        enc.transform(test), [[0, 1, 0], [0, 1, 0], [0, 0, 1], [1, 0, 0]]
    )


@pytest.mark.parametrize(
    "column",
    [[1.5, None, 2.0], [1, None, 2], [1, np.nan, 2], [1.5, np.nan, 2.0]],
)
def test_numbers_beside_none_are_named_as_in_scikit_learn(column):
    # Written as floats beside None when one is not integral ('x0_2', not
    # 'x0_2.0', came out beside 'x0_1.5'), and as ints when all are, beside
    # None or NaN too (they came out as 'x0_1.0' beside NaN). The keys are
    # the released categories: an object column's integral floats, which
    # scikit-learn names 'x0_1.0', are written as ints, with or without a
    # missing value (the class docstring).
    X = np.array(column, dtype=object).reshape(-1, 1)
    ours = DPOneHotEncoder(epsilon=np.inf, handle_unknown="ignore").fit(X)
    theirs = OneHotEncoder().fit(X)
    assert list(ours.get_feature_names_out()) == list(theirs.get_feature_names_out())


@pytest.mark.parametrize("frame", [False, True], ids=["array", "object-frame"])
def test_none_and_nan_are_two_categories_as_in_scikit_learn(frame):
    rows = [["a"], ["b"], [None], [np.nan], ["a"], [None]]
    only_none = [["a"], ["b"], [None], ["a"]]
    for data in (rows, only_none):
        X = np.array(data, dtype=object)
        if frame:
            X = pd.DataFrame({"x0": pd.Series(X[:, 0], dtype=object)})
        ours = DPOneHotEncoder(epsilon=np.inf, handle_unknown="ignore").fit(X)
        ref = OneHotEncoder(handle_unknown="ignore", sparse_output=False).fit(X)
        assert [repr(v) for v in ours.categories_[0]] == [
            repr(v) for v in ref.categories_[0]
        ]
        assert list(ours.get_feature_names_out()) == list(ref.get_feature_names_out())
        np.testing.assert_array_equal(ours.transform(X), ref.transform(X))
        back = ours.inverse_transform(ref.transform(X))
        expected = ref.inverse_transform(ref.transform(X))
        assert [repr(v) for v in back.ravel()] == [repr(v) for v in expected.ravel()]
    # Under privacy they are two partitions, in the canonical order.
    enc = DPOneHotEncoder(random_state=0).fit(
        np.array([["a"]] * 300 + [[None]] * 200 + [[np.nan]] * 200, dtype=object)
    )
    assert enc._keys[0] == ["a", NONE, MISSING]
    assert list(enc.get_feature_names_out()) == [
        "x0_a",
        "x0_None",
        "x0_nan",
        "x0_infrequent_sklearn",
    ]
    # Declared, None and NaN are two categories too.
    declared = DPOneHotEncoder(categories=[["a", None, np.nan]]).fit(
        np.array(rows, dtype=object)
    )
    np.testing.assert_array_equal(
        declared.transform(np.array([[None], [np.nan]], dtype=object)),
        [[0, 1, 0, 0], [0, 0, 1, 0]],
    )


@pytest.mark.parametrize(
    "X, categories",
    [
        (np.array([[1], [2], [2]]), [["1", "2"]]),
        (np.array([[1], [2], [2]]), [[1.0, 2.0]]),
        (np.array([[True], [False], [True]]), [[0, 1]]),
        (np.array([[1.5], [2.0], [2.0]]), [["1.5", "2"]]),
        (pd.DataFrame({"a": [1, 2, 2]}), [["1", "2"]]),
        (pd.DataFrame({"a": pd.array([1, 2, None], dtype="Int64")}), [["1", "2"]]),
        # pandas' nullable booleans: read as float64, as scikit-learn does.
        (
            pd.DataFrame({"a": pd.array([True, False, None, True], dtype="boolean")}),
            [[False, True]],
        ),
        (pd.DataFrame({"a": pd.array([True, False, True], dtype="boolean")}), [[0, 1]]),
    ],
    ids=[
        "int-str", "int-float", "bool-int", "float-str", "frame-int", "Int64-str",
        "boolean-bool", "boolean-int",
    ],
)
def test_declared_categories_are_cast_to_a_numeric_column_as_in_scikit_learn(
    X, categories
):
    ours = DPOneHotEncoder(categories=categories, handle_unknown="ignore").fit(X)
    ref = OneHotEncoder(
        categories=categories, handle_unknown="ignore", sparse_output=False
    ).fit(X)
    np.testing.assert_array_equal(ours.transform(X), ref.transform(X))
    assert ours.categories_[0].dtype == ref.categories_[0].dtype
    np.testing.assert_array_equal(ours.categories_[0], ref.categories_[0])
    assert list(ours.get_feature_names_out()) == list(ref.get_feature_names_out())
    assert ours.epsilon_ == 0.0


@pytest.mark.parametrize(
    "X, categories",
    [
        (np.array([[1], [2]]), [[1.5, 2]]),  # scikit-learn truncates 1.5 to 1
        (np.array([[1], [2]], dtype=np.int8), [[1, 300]]),
        (np.array([[1], [2]], dtype=np.uint8), [[-1, 2]]),
        (np.array([[1], [2]]), [["1", "x"]]),
        (np.array([[1], [2]]), [["1.0", "2"]]),
        (np.array([[True], [False]]), [[0, 2]]),  # scikit-learn reads 2 as True
        (np.array([[True], [False]]), [["True", "False"]]),
        (np.array([[1.5], [2.0]]), [["1.5", "x"]]),
        (np.array([[1.5], [2.0]], dtype=np.float32), [[1.5, 1e300]]),
    ],
)
def test_declared_categories_that_a_numeric_column_cannot_hold_are_refused(
    X, categories
):
    with pytest.raises(ValueError, match="^categories: .* cannot be cast exactly"):
        DPOneHotEncoder(categories=categories).fit(X)


def test_a_ledger_is_accepted_when_nothing_is_thresholded():
    # At epsilon=inf the threshold spends no delta: a ledger can hold the fit.
    X = np.array([[1], [2], [1]])
    enc = DPOneHotEncoder(epsilon=np.inf, accountant=PrivacyLedger()).fit(X)
    assert enc.threshold_delta_ == 0.0 and math.isinf(enc.epsilon_)
    np.testing.assert_array_equal(enc.categories_[0], [1, 2])
    with pytest.raises(ValueError, match="cannot hold the threshold delta"):
        DPOneHotEncoder(epsilon=1.0, accountant=PrivacyLedger()).fit(X)


@pytest.mark.parametrize(
    "X",
    [
        [["a"], ["b"], [np.nan], ["a"]] * 5,  # a list: no dtype of its own
        pd.DataFrame({"x0": pd.array([1, 2, None, 1] * 5, dtype="Int64")}),
    ],
    ids=["list-with-nan", "nullable-Int64"],
)
def test_missing_values_and_names_as_in_scikit_learn(X):
    # NaN stays the missing category (never the string 'nan'), and the
    # names spell the categories as categories_ holds them.
    ours = DPOneHotEncoder(epsilon=np.inf, handle_unknown="ignore").fit(X)
    ref = OneHotEncoder(handle_unknown="ignore", sparse_output=False).fit(X)
    for a, b in zip(ours.categories_, ref.categories_):
        assert [str(v) for v in a] == [str(v) for v in b]
        assert pd.isna(a[-1]) and pd.isna(b[-1])
    assert list(ours.get_feature_names_out()) == list(ref.get_feature_names_out())
    np.testing.assert_array_equal(ours.transform(X), ref.transform(X))


def test_no_columns_is_refused_like_scikit_learn():
    with pytest.raises(ValueError, match="0 feature"):
        DPOneHotEncoder().fit(pd.DataFrame(index=range(5)))


def test_a_series_is_refused_like_scikit_learn():
    # What a ColumnTransformer's scalar key selects. fit raised a bare
    # IndexError, and transform said the rows had no features.
    column = pd.Series(["a", "b"] * 20, name="c")
    for categories in ("auto", [["a", "b"]]):
        encoder = DPOneHotEncoder(categories=categories, epsilon=1.0, delta=1e-6)
        with pytest.raises(ValueError, match="Expected a 2-dimensional container"):
            encoder.fit(column)
        assert not hasattr(encoder, "n_features_in_")
    encoder = DPOneHotEncoder(categories=[["a", "b"]]).fit(column.to_frame())
    with pytest.raises(ValueError, match="Expected a 2-dimensional container"):
        encoder.transform(column)


def test_max_categories_and_min_frequency_post_process_the_counts():
    X = pd.DataFrame({"c": ["a"] * 500 + ["b"] * 300 + ["c"] * 100})
    top = DPOneHotEncoder(max_categories=3, random_state=0).fit(X)
    assert list(top.categories_[0]) == ["a", "b"]
    frequent = DPOneHotEncoder(min_frequency=200, random_state=0).fit(X)
    assert list(frequent.categories_[0]) == ["a", "b"]


def test_a_column_mixing_numbers_and_strings_is_refused_before_fitting():
    # 1 and '1' would both be named 'x0_1'; scikit-learn refuses the column.
    X = pd.DataFrame({"a": pd.Series([1, "1", 2, "b"], dtype=object)})
    enc = DPOneHotEncoder(epsilon=math.inf)
    with pytest.raises(TypeError, match=r"X: a column mixes .*'int', 'str'"):
        enc.fit(X)
    assert not hasattr(enc, "threshold_") and not hasattr(enc, "categories_")
    with pytest.raises(ValueError, match="distinct names"):
        DPOneHotEncoder(categories=[[1, "1"]]).fit(X)
    # Declared categories of mixed types with distinct names are kept.
    enc = DPOneHotEncoder(categories=[[1, "b"]]).fit(X)
    assert list(enc.get_feature_names_out()) == ["a_1", "a_b", "a_infrequent_sklearn"]
    assert enc.transform(X)[:, :2].tolist() == [[1, 0], [0, 0], [0, 0], [0, 1]]


@pytest.mark.parametrize(
    "cell, kind", [([1], "list"), ({"a": 1}, "dict"), ((1, [2]), "tuple")]
)
def test_a_column_of_unhashable_values_is_refused_by_its_type(cell, kind):
    # A list in a cell reached a dictionary and raised Python's bare
    # "unhashable type" after the plan was made (fit) or mid-transform.
    X = pd.DataFrame({"a": pd.Series([cell, "b", cell, "b"], dtype=object)})
    enc = DPOneHotEncoder(epsilon=1.0, random_state=0)
    pattern = rf"^X: a column holds values of types \['{kind}'\]"
    with pytest.raises(TypeError, match=pattern):
        enc.fit(X)
    assert not hasattr(enc, "threshold_") and not hasattr(enc, "categories_")
    declared = DPOneHotEncoder(categories=[["b"]]).fit(X[["a"]].iloc[[1, 3]])
    with pytest.raises(TypeError, match=pattern):
        declared.transform(X)
    with pytest.raises(TypeError, match=r"^categories: a column holds"):
        DPOneHotEncoder(categories=[[cell, "b"]]).fit(X.iloc[[1, 3]])


def test_dataframe_output_and_bounds():
    X = _frame()
    enc = DPOneHotEncoder(random_state=0).set_output(transform="pandas").fit(X)
    out = enc.transform(X)
    assert list(out.columns) == list(enc.get_feature_names_out())
    assert enc.output_bounds_.shape == (out.shape[1], 2)
    assert np.all(out.to_numpy().sum(axis=1) == X.shape[1])
    assert enc.output_norm_bound_ == pytest.approx(math.sqrt(X.shape[1]))


def test_a_ledger_is_refused_for_discovery_only():
    X = _frame()
    with pytest.raises(ValueError, match="accountant"):
        DPOneHotEncoder(accountant=PrivacyLedger()).fit(X)
    declared = [["blue"], [1], ["Oslo"]]
    DPOneHotEncoder(categories=declared, accountant=PrivacyLedger()).fit(X)


def test_releases_match_the_event():
    releases = pytest.importorskip("sklearn_dpfair.privacy._releases")
    with releases.logged_releases() as log:
        enc = DPOneHotEncoder().fit(_frame())
    releases.check_releases(log, enc.dp_event_, what="test")
    assert sum(log.counts.values()) == 1


def _release(X, **params):
    """Categories (values, dtypes, signs) and names a seeded fit releases."""
    enc = DPOneHotEncoder(**params).fit(X)
    values = [
        (c.dtype.str, [repr(v) for v in c.tolist()], np.signbit(c).tolist())
        if c.dtype.kind == "f"
        else (c.dtype.str, [repr(v) for v in c.tolist()])
        for c in enc.categories_
    ]
    return values, list(enc.get_feature_names_out())


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize(
    "base, record",
    [
        (np.array([[0.0]] * 500 + [[1.0]] * 500), -0.0),
        (np.array([[1]] * 500 + [[2]] * 500, dtype=object), 1.0),
        (np.array([[1]] * 500 + [[2]] * 500, dtype=object), True),
        (np.array([[1]] * 500 + [[2]] * 500, dtype=object), np.int8(2)),
        (np.array([[1.5]] * 500 + [[2.0]] * 500, dtype=object), 2),
    ],
    ids=[
        "float-negative-zero",
        "object-int-float",
        "object-int-bool",
        "object-int-int8",
        "object-float-int",
    ],
)
def test_one_record_never_decides_how_a_category_is_written(base, record, seed):
    # Values that compare equal are one category; which of them a row
    # holds (one added record, first of all) must not change the released
    # values or names: the same noise gives the same release.
    neighbour = np.vstack([np.array([[record]], dtype=base.dtype), base])
    params = {"epsilon": 1.0, "random_state": seed}
    assert _release(neighbour, **params) == _release(base, **params)
    if not isinstance(record, bool):
        # Without privacy the record's category is already there.
        assert _release(neighbour, epsilon=np.inf) == _release(base, epsilon=np.inf)


_BOOLS = [True, False, True, False] * 10


@pytest.mark.parametrize(
    "fit_column, transform_column, categories",
    [
        (pd.array(_BOOLS[:-1] + [None], dtype="boolean"), np.array([True, False]),
         "auto"),
        (np.array(_BOOLS), pd.array([True, False, None], dtype="boolean"), "auto"),
        (pd.array(_BOOLS[:-1] + [None], dtype="boolean"), np.array([True, False]),
         [[False, True]]),
        (pd.Categorical(_BOOLS), pd.array([True, False, None], dtype="boolean"),
         "auto"),
        (pd.array(_BOOLS, dtype="boolean"), pd.Categorical([True, False]), "auto"),
    ],
    ids=["boolean-bool", "bool-boolean", "declared-bool", "categorical-boolean",
         "boolean-categorical"],
)
def test_a_boolean_column_matches_itself_across_boolean_dtypes(
    fit_column, transform_column, categories
):
    # One logical boolean column read as numpy bool, pandas' nullable
    # boolean (whose categories are 0.0 and 1.0, as scikit-learn's) or a
    # categorical of bools: every row was encoded as zeros, where
    # scikit-learn's OneHotEncoder matches True to 1.0 by value.
    train = pd.DataFrame({"smoker": fit_column})
    test = pd.DataFrame({"smoker": transform_column})
    ours = DPOneHotEncoder(
        categories=categories, epsilon=np.inf, handle_unknown="ignore"
    ).fit(train)
    ref = OneHotEncoder(
        categories=categories, handle_unknown="ignore", sparse_output=False
    ).fit(train)
    expected = ref.transform(test)
    assert expected[:2].sum() == 2  # True and False each found
    np.testing.assert_array_equal(ours.transform(test), expected)
    np.testing.assert_array_equal(ours.categories_[0], ref.categories_[0])


def test_an_object_column_keeps_true_apart_from_one_beside_a_boolean_one():
    # The truth-value match is of boolean dtypes, and only on a miss: an
    # object column holding True and 1 keeps two categories, and a boolean
    # column's True is the category True; an object True is not 1.
    mixed = pd.DataFrame({"a": pd.array([1, True, 2, 1, True], dtype=object)})
    enc = DPOneHotEncoder(epsilon=np.inf, handle_unknown="ignore").fit(mixed)
    assert list(enc.get_feature_names_out()) == ["a_1", "a_2", "a_True"]
    flags = pd.DataFrame({"a": pd.array([True, None], dtype="boolean")})
    np.testing.assert_array_equal(enc.transform(flags), [[0, 0, 1], [0, 0, 0]])
    ones = DPOneHotEncoder(epsilon=np.inf, handle_unknown="ignore").fit(
        np.array([[1], [2]], dtype=object)
    )
    np.testing.assert_array_equal(
        ones.transform(np.array([[True]], dtype=object)), [[0, 0]]
    )
    np.testing.assert_array_equal(ones.transform(np.array([[True]])), [[1, 0]])


def test_equal_values_are_one_category_and_bools_their_own():
    X = np.array([[-0.0], [0.0], [1.0], [1.0]])
    enc = DPOneHotEncoder(epsilon=np.inf).fit(X)
    assert enc.categories_[0].tolist() == [0.0, 1.0]
    assert not np.signbit(enc.categories_[0]).any()
    assert list(enc.get_feature_names_out()) == [
        "x0_0.0",
        "x0_1.0",
        "x0_infrequent_sklearn",
    ]
    np.testing.assert_array_equal(enc.transform([[-0.0], [0.0]]), [[1, 0, 0]] * 2)
    mixed = np.array([[1], [1.0], [True], [np.int64(1)], [2]], dtype=object)
    enc = DPOneHotEncoder(epsilon=np.inf).fit(mixed)
    assert list(enc.get_feature_names_out()) == [
        "x0_1",
        "x0_2",
        "x0_True",
        "x0_infrequent_sklearn",
    ]
    # True is not 1 (as a category), 1.0 is.
    np.testing.assert_array_equal(
        enc.transform(np.array([[True], [1.0], [False]], dtype=object)),
        [[0, 0, 1, 0], [1, 0, 0, 0], [0, 0, 0, 1]],
    )


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_float_categories_are_written_in_the_column_dtype_as_scikit_learn(dtype):
    X = np.array([[0.1], [0.2], [0.1], [np.nan]], dtype=dtype)
    ours = DPOneHotEncoder(epsilon=np.inf, handle_unknown="ignore").fit(X)
    ref = OneHotEncoder(handle_unknown="ignore", sparse_output=False).fit(X)
    assert list(ours.get_feature_names_out()) == list(ref.get_feature_names_out())
    for a, b in zip(ours.categories_, ref.categories_):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    for T in (X, X.astype(np.float64)):
        np.testing.assert_array_equal(ours.transform(T), ref.transform(T))
    # Declared numbers are cast to the column's dtype, as scikit-learn does.
    declared = DPOneHotEncoder(categories=[[0.1, 0.2]], handle_unknown="ignore").fit(X)
    ref = OneHotEncoder(
        categories=[[0.1, 0.2]], handle_unknown="ignore", sparse_output=False
    ).fit(X[:3])
    assert list(declared.get_feature_names_out()) == list(ref.get_feature_names_out())
    np.testing.assert_array_equal(declared.transform(X[:3]), ref.transform(X[:3]))


@pytest.mark.parametrize("parameter", [{"max_categories": 2}, {"min_frequency": 5}])
def test_limits_on_counts_are_refused_with_declared_categories(parameter):
    # Declared categories are not counted: nothing public ranks them, so a
    # limit would either read the data or drop declared ones arbitrarily.
    X = np.array([["a"]] * 5 + [["b"]] * 5 + [["c"]] * 5, dtype=object)
    name = next(iter(parameter))
    enc = DPOneHotEncoder(categories=[["a", "b", "c"]], **parameter)
    with pytest.raises(ValueError, match=name):
        enc.fit(X)
    assert not hasattr(enc, "categories_")


def test_inverse_transform_is_scikit_learn_at_epsilon_inf():
    X = _frame()
    ours = DPOneHotEncoder(epsilon=np.inf, handle_unknown="ignore").fit(X)
    ref = OneHotEncoder(handle_unknown="ignore", sparse_output=False).fit(X)
    test = _frame(50, seed=1)
    test.loc[0, "colour"] = "unseen"
    test.loc[1, "size"] = 99
    Y = ref.transform(test)
    back, expected = ours.inverse_transform(Y), ref.inverse_transform(Y)
    assert back.shape == expected.shape and back.dtype == expected.dtype
    for a, b in zip(back.ravel(), expected.ravel()):
        assert (a is None and b is None) or (pd.isna(a) and pd.isna(b)) or a == b
    assert back[0, 0] is None and back[1, 1] is None
    # The "other" column (rare or unseen) maps to None as well.
    other = DPOneHotEncoder(epsilon=np.inf).fit(X)
    rows = other.inverse_transform(other.transform(test))
    assert rows[0, 0] is None and rows[1, 1] is None
    np.testing.assert_array_equal(rows[2:, 0], test["colour"][2:])
    floats = DPOneHotEncoder(epsilon=np.inf).fit(np.array([[0.5], [1.5]]))
    np.testing.assert_array_equal(floats.inverse_transform([[0, 1, 0]]), [[1.5]])
    with pytest.raises(ValueError, match="Expected 3 columns"):
        floats.inverse_transform([[0, 1]])


def test_inverse_transform_takes_an_output_without_columns():
    # Six rows: the private selection keeps no category, transform gives
    # (6, 0), and inverse_transform refused its own output ("0 feature(s)").
    X = np.array([["a", "b", "c"] * 2], dtype=object).T
    enc = DPOneHotEncoder(handle_unknown="ignore", random_state=0).fit(X)
    assert [c.size for c in enc.categories_] == [0]
    Xt = enc.transform(X)
    assert Xt.shape == (6, 0)
    back = enc.inverse_transform(Xt)
    assert back.shape == (6, 1) and all(v is None for v in back.ravel())
    with pytest.raises(ValueError, match="Expected 0 columns"):
        enc.inverse_transform(np.zeros((6, 1)))


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize(
    "base, record",
    [
        ([[1]] * 600 + [[2]] * 400, [2.5]),
        ([[1]] * 600 + [[2]] * 400, [np.nan]),
        ([[1]] * 600 + [[2]] * 400, [None]),
        ([[True]] * 600 + [[False]] * 400, [2]),
        ([[0.5, 1.0]] * 600 + [[0.5, 2.0]] * 400, [None, 1.0]),
    ],
    ids=["int-float", "int-nan", "int-none", "bool-int", "two-columns-none"],
)
def test_a_list_has_no_dtype_for_one_record_to_change(base, record, seed):
    # numpy would infer a list's dtype from the private values: one record
    # (its own category not released) would rename every released one.
    params = {"epsilon": 1.0, "random_state": seed}
    assert _release(base + [record], **params) == _release(base, **params)


def test_a_bool_list_with_a_stray_number_still_encodes_its_bools():
    bools = [[True]] * 600 + [[False]] * 400
    enc = DPOneHotEncoder(epsilon=1.0, random_state=0).fit(bools + [[2]])
    assert list(enc.get_feature_names_out()) == [
        "x0_False",
        "x0_True",
        "x0_infrequent_sklearn",
    ]
    np.testing.assert_array_equal(
        enc.transform([[True], [False], [2]]), [[0, 1, 0], [1, 0, 0], [0, 0, 1]]
    )


@pytest.mark.parametrize(
    "values, categories",
    [
        ([1.0, 2.0, 1.0], [1.0, 2.0]),
        ([1.0, None, 1.0], [1.0, 2.0]),
        ([1, 2, 1], [1, 2]),
        ([1, None, 2], [1, 2]),
        (["a", None, "b"], ["a", "b"]),
    ],
    ids=["float", "float-missing", "int", "int-missing", "str-missing"],
)
def test_a_categorical_column_is_written_in_its_categories_dtype(values, categories):
    # Its categories' dtype is the column's schema, as scikit-learn reads it.
    X = pd.DataFrame({"a": pd.Categorical(values, categories=categories)})
    ours = DPOneHotEncoder(epsilon=np.inf, handle_unknown="ignore").fit(X)
    ref = OneHotEncoder(handle_unknown="ignore", sparse_output=False).fit(X)
    assert list(ours.get_feature_names_out()) == list(ref.get_feature_names_out())
    assert [str(v) for v in ours.categories_[0]] == [
        str(v) for v in ref.categories_[0]
    ]
    assert ours.categories_[0].dtype.kind == ref.categories_[0].dtype.kind
    np.testing.assert_array_equal(ours.transform(X), ref.transform(X))


@pytest.mark.parametrize(
    "column",
    [
        [2**53 + 1, 0.5, 2**53],
        [1e300, 0.5],
        [Decimal(9), Decimal(10), Decimal("9.5")],
        [2**53 + 1, 2**53],
    ],
    ids=["beyond-2**53", "huge-float", "decimal", "large-ints"],
)
def test_object_numbers_are_named_and_ordered_as_scikit_learn(column):
    X = np.array(column, dtype=object).reshape(-1, 1)
    ours = DPOneHotEncoder(epsilon=np.inf, handle_unknown="ignore").fit(X)
    ref = OneHotEncoder(handle_unknown="ignore", sparse_output=False).fit(X)
    assert list(ours.get_feature_names_out()) == list(ref.get_feature_names_out())
    np.testing.assert_array_equal(ours.transform(X), ref.transform(X))
    # Each category is itself: none merged with another, none rounded.
    back = ours.inverse_transform(ours.transform(X)).ravel().tolist()
    assert [str(v) for v in back] == [str(v) for v in X.ravel()]


def test_distinct_integers_of_a_nullable_column_are_never_one_name():
    # float64, the dtype of a nullable Int64 column, holds 2**53 and
    # 2**53 + 1 as one number: the two categories are written as they are.
    X = pd.DataFrame({"a": pd.array([2**53, 2**53 + 1, None], dtype="Int64")})
    enc = DPOneHotEncoder(epsilon=np.inf, handle_unknown="ignore").fit(X)
    names = list(enc.get_feature_names_out())
    assert names == ["a_9007199254740992", "a_9007199254740993", "a_nan"]
    np.testing.assert_array_equal(enc.transform(X), np.eye(3))


@pytest.mark.parametrize("max_categories", [2, 3, 4])
def test_max_categories_breaks_ties_as_scikit_learn(max_categories):
    X = pd.DataFrame({"c": ["a"] * 5 + ["b"] * 5 + ["c"] * 5 + ["d"] * 2})
    ours = DPOneHotEncoder(max_categories=max_categories, epsilon=np.inf).fit(X)
    ref = OneHotEncoder(
        max_categories=max_categories,
        handle_unknown="infrequent_if_exist",
        sparse_output=False,
    ).fit(X)
    assert list(ours.get_feature_names_out()) == list(ref.get_feature_names_out())
    np.testing.assert_array_equal(ours.transform(X), ref.transform(X))


@pytest.mark.parametrize("min_frequency", [None, 2, 4, 5])
def test_max_categories_above_the_categories_kept_drops_none(min_frequency):
    # A limit above the number of categories kept (up to twice it) keeps
    # them all, as scikit-learn does; the other column is always there
    # under handle_unknown="other", which scikit-learn adds only when some
    # category is infrequent.
    counts = {"a": 6, "b": 5, "c": 4, "d": 4, "e": 2, "f": 1}
    X = pd.DataFrame({"c": [k for k, n in counts.items() for _ in range(n)]})
    for max_categories in range(1, 11):
        params = {"max_categories": max_categories, "min_frequency": min_frequency}
        ours = DPOneHotEncoder(epsilon=np.inf, **params).fit(X)
        ref = OneHotEncoder(
            handle_unknown="infrequent_if_exist", sparse_output=False, **params
        ).fit(X)
        names = list(ref.get_feature_names_out())
        other = "c_infrequent_sklearn" in names
        frequent = names[:-1] if other else names
        assert list(ours.get_feature_names_out()) == [*frequent, "c_infrequent_sklearn"]
        expected = ref.transform(X)
        if not other:
            expected = np.column_stack([expected, np.zeros(len(X))])
        np.testing.assert_array_equal(ours.transform(X), expected)


def test_max_categories_above_the_private_categories_drops_none():
    # The limit is public and post-processes the released counts: at a
    # finite epsilon, a limit above the number released keeps every one
    # (the same noise draw, seeded, as without a limit).
    X = np.array([["a"] * 500 + ["b"] * 400 + ["c"] * 300], dtype=object).T
    for seed in range(3):
        free = DPOneHotEncoder(epsilon=1.0, random_state=seed).fit(X)
        assert list(free.categories_[0]) == ["a", "b", "c"]
        for max_categories in range(4, 9):
            top = DPOneHotEncoder(
                epsilon=1.0, max_categories=max_categories, random_state=seed
            ).fit(X)
            assert list(top.categories_[0]) == ["a", "b", "c"]
            assert top.epsilon_ == free.epsilon_


def test_the_plan_refuses_a_ledger_as_the_fit_does():
    enc = DPOneHotEncoder(epsilon=1.0, accountant=PrivacyLedger())
    with pytest.raises(ValueError, match="cannot hold the threshold delta"):
        enc.privacy_plan(500, 1)
    # Nothing thresholded (epsilon=inf, declared categories): a plan.
    assert DPOneHotEncoder(epsilon=np.inf, accountant=PrivacyLedger()).privacy_plan(
        500, 1
    )
    declared = DPOneHotEncoder(categories=[["a"]], accountant=PrivacyLedger())
    assert declared.privacy_plan(500, 1).epsilon == 0.0


def test_a_string_column_with_no_released_category_has_object_categories():
    # Three rows at a small epsilon: the threshold keeps no category.
    X = pd.DataFrame({"s": ["a", "b", "c"], "n": np.array([1, 2, 3], dtype=np.int32)})
    enc = DPOneHotEncoder(epsilon=0.1, random_state=0).fit(X)
    assert [len(c) for c in enc.categories_] == [0, 0]
    assert enc.categories_[0].dtype == object
    assert enc.categories_[1].dtype == np.int32
    # Declared back, the empty categories are still a string column's.
    declared = DPOneHotEncoder(categories=enc.categories_).fit(X)
    assert declared.categories_[0].dtype == object


def _one_secret_record(n=5000):
    # Two common categories and one held by a single record.
    X = np.random.default_rng(0).choice(["a", "b"], size=(n, 1)).astype(object)
    X[123, 0] = "secret"
    return X


@pytest.mark.parametrize("delta", [5e-324, 1e-320, 1.5 * np.finfo(np.float64).tiny])
def test_a_delta_too_small_for_the_threshold_is_refused_by_fit_and_plan(delta):
    # Half of 5e-324 underflowed to 0: the threshold was +inf, taken for
    # the non-private one, and the one-record category was released. The
    # threshold's share over the columns must be a normal float.
    X = _one_secret_record()
    enc = DPOneHotEncoder(delta=delta, random_state=0)
    with pytest.raises(ValueError, match=r"^delta=\S+ is too small"):
        enc.privacy_plan(len(X), 1)
    with pytest.raises(ValueError, match=r"^delta=\S+ is too small"):
        enc.fit(X)
    assert not [k for k in vars(enc) if k.endswith("_")]
    # Declared categories threshold nothing: the same delta is accepted.
    declared = DPOneHotEncoder(categories=[["a", "b"]], delta=delta).fit(X)
    assert declared.threshold_delta_ == 0.0


@pytest.mark.parametrize("delta", [np.float32(1e-45), np.float32(1e-5)])
def test_a_float32_delta_discovers_as_the_equal_float(delta):
    # A float32 delta halved in float32 (1e-45 to 0, an infinite threshold
    # that released the one-record category), and rounded the threshold.
    X = _one_secret_record()
    for seed in range(3):
        ours = DPOneHotEncoder(delta=delta, random_state=seed).fit(X)
        ref = DPOneHotEncoder(delta=float(delta), random_state=seed).fit(X)
        assert list(ours.categories_[0]) == ["a", "b"]
        assert math.isfinite(ours.threshold_)
        # Scalar arithmetic (ndtri), no BLAS: the same float.
        assert ours.threshold_ == ref.threshold_
        assert type(ours.threshold_delta_) is float
        assert ours.threshold_delta_ == ref.threshold_delta_ == float(delta) / 2
    plan = DPOneHotEncoder(delta=delta).privacy_plan(len(X), 1)
    assert plan.epsilon == pytest.approx(ours.epsilon_, rel=1e-12)


def _table(module, columns):
    if module == "polars":
        return pytest.importorskip("polars").DataFrame(columns)
    return pytest.importorskip("pyarrow").table(columns)


@pytest.mark.parametrize("module", ["polars", "pyarrow"])
def test_the_column_names_of_a_polars_or_arrow_table_are_checked(module):
    # Read as an array before its names were taken, a table fitted without
    # feature_names_in_, and the same table with its columns reordered was
    # encoded each column by the other's categories.
    values = np.random.RandomState(0).randint(0, 3, size=(60, 2))
    table = _table(module, {"a": values[:, 0], "b": values[:, 1]})
    swapped = _table(module, {"b": values[:, 1], "a": values[:, 0]})
    categories = [[0, 1, 2], [0, 1, 2]]
    reference = OneHotEncoder(categories=categories).fit(table)
    encoder = DPOneHotEncoder(categories=categories, random_state=0).fit(table)
    assert encoder.feature_names_in_.tolist() == ["a", "b"]
    assert encoder.get_feature_names_out()[0] == "a_0"
    assert [n for n in encoder.get_feature_names_out() if n.startswith("b_")]
    with pytest.raises(ValueError, match="feature names should match"):
        reference.transform(swapped)
    with pytest.raises(ValueError, match="feature names should match"):
        encoder.transform(swapped)
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        encoder.transform(values)


@pytest.mark.parametrize("later", [[1, 0], [1.0, 0.0]], ids=["int", "float"])
def test_a_column_boolean_at_fit_matches_numbers_by_value(later):
    # Fitted on True/False, 1 and 0 went to "infrequent_sklearn" (or to no
    # column): a pipeline's predictions moved silently once the column was
    # cast to int; scikit-learn matches by value.
    fitted = pd.DataFrame({"flag": [True, False] * 50})
    rows = pd.DataFrame({"flag": later})
    reference = OneHotEncoder(handle_unknown="ignore", sparse_output=False)
    expected = reference.fit(fitted).transform(rows)
    for handle_unknown in ("ignore", "other"):
        encoder = DPOneHotEncoder(epsilon=math.inf, handle_unknown=handle_unknown)
        got = encoder.fit(fitted).transform(rows)
        np.testing.assert_array_equal(got[:, :2], expected)
        assert got[:, 2:].sum() == 0


def test_an_object_column_with_true_and_one_keeps_them_apart_at_transform():
    # The fallback by value runs on a miss only.
    values = [True, 1, False, 0]
    fitted = pd.DataFrame({"x": pd.Series(values * 20, dtype=object)})
    encoder = DPOneHotEncoder(epsilon=math.inf, handle_unknown="ignore").fit(fitted)
    got = encoder.transform(pd.DataFrame({"x": pd.Series(values, dtype=object)}))
    assert (got.sum(axis=1) == 1).all() and len({tuple(r) for r in got}) == 4
