# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
import re

import numpy as np
import pandas as pd
import pytest

from sklearn_dpfair.fairness import encode_sensitive_features
from sklearn_dpfair.fairness._sensitive import check_declared_groups


@pytest.mark.parametrize(
    "values",
    [
        ["b", "a", "b"],
        np.array(["b", "a", "b"]),
        pd.Series(["b", "a", "b"], index=[10, 11, 12]),
        pd.DataFrame({"s": ["b", "a", "b"]}),
        np.array([["b"], ["a"], ["b"]]),
    ],
)
def test_one_column_inputs_agree(values):
    enc = encode_sensitive_features(values, n_samples=3)
    assert enc.codes.tolist() == [1, 0, 1]
    assert enc.groups.tolist() == ["a", "b"]
    assert not enc.declared


def test_several_columns_are_intersectional():
    frame = pd.DataFrame({"sex": ["F", "M", "F", "M"], "race": [1, 1, 2, 1]})
    enc = encode_sensitive_features(frame)
    assert enc.groups.tolist() == [("F", 1), ("F", 2), ("M", 1)]
    assert enc.codes.tolist() == [0, 2, 1, 2]
    # The same as a 2-D array.
    enc2 = encode_sensitive_features(frame.to_numpy())
    assert enc2.codes.tolist() == enc.codes.tolist()


def test_missing_values_get_minus_one_in_any_column():
    frame = pd.DataFrame({"a": ["x", None, "y", "x"], "b": [1.0, 2.0, np.nan, 1.0]})
    enc = encode_sensitive_features(frame)
    assert enc.codes.tolist() == [0, -1, -1, 0]
    assert enc.n_missing == 2
    enc = encode_sensitive_features(np.array([1.0, np.nan, 2.0]))
    assert enc.codes.tolist() == [0, -1, 1]
    enc = encode_sensitive_features(pd.Series(["u", pd.NA, "v"], dtype="string"))
    assert enc.codes.tolist() == [0, -1, 1]


def test_wrong_length_names_the_parameter():
    with pytest.raises(ValueError, match="sensitive_features has 2 rows but X has 3"):
        encode_sensitive_features([0, 1], n_samples=3)
    # The argument whose rows are counted, for callers that take no X (both
    # encoding paths: integer columns and the general one).
    for values in ([0, 1], ["a", "b"]):
        with pytest.raises(ValueError, match="2 rows but y_true has 3"):
            encode_sensitive_features(np.array(values), n_samples=3, rows_of="y_true")


def test_metrics_name_their_predictions_in_a_length_error():
    from sklearn_dpfair.metrics import demographic_parity_linf, ermi_score

    with pytest.raises(ValueError, match="2 rows but y_pred has 3"):
        demographic_parity_linf(None, [0, 1, 1], sensitive_features=[0, 1])
    with pytest.raises(ValueError, match="2 rows but y_pred has 3"):
        ermi_score(None, [0, 1, 1], sensitive_features=[0, 1])


def test_bad_dimensions():
    with pytest.raises(ValueError, match="1-D or 2-D"):
        encode_sensitive_features(np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="scalar"):
        encode_sensitive_features(3)


def test_declared_groups_fix_order_and_keep_absent_groups():
    enc = encode_sensitive_features(["m", "f", "m"], groups=["m", "x", "f"])
    assert enc.declared
    assert enc.groups.tolist() == ["m", "x", "f"]
    assert enc.codes.tolist() == [0, 2, 0]
    with pytest.raises(ValueError, match="not in the declared groups"):
        encode_sensitive_features(["m", "z"], groups=["m", "f"])
    with pytest.raises(ValueError, match="duplicate"):
        encode_sensitive_features(["m"], groups=["m", "m"])


def test_declared_intersectional_groups():
    frame = pd.DataFrame({"a": [0, 1], "b": ["u", "v"]})
    enc = encode_sensitive_features(frame, groups=[(1, "v"), (0, "u"), (0, "v")])
    assert enc.codes.tolist() == [1, 0]
    assert enc.n_groups == 3


def test_numpy_scalars_match_python_labels():
    enc = encode_sensitive_features(np.array([1, 2, 1]), groups=[2, 1])
    assert enc.codes.tolist() == [1, 0, 1]


def test_mixed_label_types_do_not_crash():
    enc = encode_sensitive_features(["a", 1, "a"])
    assert enc.n_groups == 2
    assert enc.codes[0] == enc.codes[2] != enc.codes[1]
    # The labels keep their types (numpy would make "1" of 1).
    assert enc.groups.tolist() == ["a", 1]
    assert enc.groups[enc.codes[1]] == 1


def test_equal_values_of_different_types_are_one_group():
    # 1, 1.0 and np.int64(1) are one key, as in a dict.
    enc = encode_sensitive_features(pd.Series([1, np.int64(1), 2, 1.0], dtype=object))
    assert enc.n_groups == 2
    assert enc.codes.tolist() == [0, 0, 1, 0]


@pytest.mark.parametrize(
    "values",
    [
        np.array([3, -1, 3, 7, 0]),
        np.array([3, 1, 3, 2, 0], dtype=np.uint16),
        np.array([True, False, True]),
        np.array([], dtype=np.int32),
    ],
)
def test_integer_array_encodes_as_the_general_path(values):
    # A 1-D integer array takes np.unique, not one Python object a row:
    # the same codes and groups (dtype included) as the same values in a
    # Series, and the same length check.
    fast = encode_sensitive_features(values, n_samples=values.size)
    general = encode_sensitive_features(pd.Series(values), n_samples=values.size)
    np.testing.assert_array_equal(fast.codes, general.codes)
    np.testing.assert_array_equal(fast.groups, general.groups)
    assert fast.groups.dtype == general.groups.dtype
    assert not fast.declared
    with pytest.raises(ValueError, match="sensitive_features has"):
        encode_sensitive_features(values, n_samples=values.size + 1)


@pytest.mark.parametrize(
    "groups",
    [
        [7, -1, 3, 0, 1, 5],
        np.array([3, 0, -1, 7, 1]),
        [True, 3, 7, 0, -1],
        [3, 0, 7],
        [1, 3, 1],
        ["a", 1],
    ],
)
def test_integer_array_with_declared_groups_encodes_as_the_general_path(groups):
    values = np.array([3, -1, 3, 7, 0, 1])
    general_values = pd.Series(values)
    try:
        general = encode_sensitive_features(general_values, groups=groups)
    except ValueError as exc:
        # The same refusal (an undeclared group, or duplicate labels).
        with pytest.raises(ValueError, match=re.escape(str(exc))):
            encode_sensitive_features(values, groups=groups)
        return
    fast = encode_sensitive_features(values, groups=groups)
    np.testing.assert_array_equal(fast.codes, general.codes)
    np.testing.assert_array_equal(fast.groups, general.groups)
    assert fast.groups.dtype == general.groups.dtype
    assert fast.declared


@pytest.mark.parametrize(
    "groups, message",
    [
        ([], "groups must be a non-empty list"),
        (np.array([], dtype=object), "groups must be a non-empty list"),
        ("ab", "groups must be a non-empty list"),
        (3, "groups must be a non-empty list"),
        ([0, 0, 1], "groups contains duplicate labels"),
        ([1, 1.0], "groups contains duplicate labels"),
        ([(0, "a"), [0, "a"]], "groups contains duplicate labels"),
        # A missing value is coded -1, never as a declared label: a missing
        # label would declare a group that can hold no row.
        ([np.nan, 0, 1], "groups contains a missing label"),
        ([None, 0, 1], "groups contains a missing label"),
        (np.array([1.0, np.nan]), "groups contains a missing label"),
        ([pd.NA, "a"], "groups contains a missing label"),
        ([(0, "a"), (0, None)], "groups contains a missing label"),
        ([(0, "a"), (np.nan, "b")], "groups contains a missing label"),
    ],
)
def test_declared_groups_are_refused_from_the_parameter_alone(groups, message):
    # The check a privacy plan makes before any data is read is the one
    # the encoding makes: an empty declared set is named as such, not as
    # an undeclared group of the data.
    with pytest.raises(ValueError, match=message):
        check_declared_groups(groups)
    # Two columns for the tuple labels, one otherwise.
    several = isinstance(groups, list) and bool(groups) and isinstance(groups[0], tuple)
    values = [(0, "a")] if several else [0, 1]
    with pytest.raises(ValueError, match=message):
        encode_sensitive_features(values, groups=groups)
    assert check_declared_groups([(0, "a"), (0, "b")]) == [(0, "a"), (0, "b")]


def test_a_dict_of_series_is_read_by_position_as_a_frame_is():
    # pandas aligns a dict of Series by index labels: rows of a shuffled
    # split were paired with other rows' values, building groups no record
    # holds. A Series and a DataFrame are read by position; so is a dict.
    sex = pd.Series(["F", "M", "F", "M"], index=[3, 1, 2, 0])
    race = pd.Series(["x", "x", "y", "y"], index=[0, 1, 2, 3])
    by_dict = encode_sensitive_features({"sex": sex, "race": race})
    by_frame = encode_sensitive_features(
        pd.DataFrame({"sex": sex.to_numpy(), "race": race.to_numpy()})
    )
    assert by_dict.groups.tolist() == by_frame.groups.tolist()
    np.testing.assert_array_equal(by_dict.codes, by_frame.codes)
    # A categorical Series is encoded as on its own.
    cat = pd.Series(pd.Categorical(["b", "a"], categories=["b", "a"]), index=[5, 4])
    alone = encode_sensitive_features(cat)
    in_dict = encode_sensitive_features({"c": cat})
    assert in_dict.groups.tolist() == alone.groups.tolist()
    np.testing.assert_array_equal(in_dict.codes, alone.codes)


def test_a_dict_column_of_tuple_labels_is_one_column():
    # Each value of a dict is one column: tuples in a list are its labels.
    enc = encode_sensitive_features(
        {"region": [("EU", "FR"), ("US", "CA"), ("EU", "FR")], "sex": list("FMM")}
    )
    assert enc.groups.tolist() == [(("EU", "FR"), "F"), (("EU", "FR"), "M"),
                                   (("US", "CA"), "M")]
    assert enc.codes.tolist() == [0, 2, 1]


@pytest.mark.parametrize(
    "columns, match",
    [
        ({"a": [1, 2, 3], "b": pd.Series([1, 2])}, "lengths \\[2, 3\\]"),
        ({"a": np.array([[1, 2], [3, 4]])}, "must be 1-D"),
        ({"a": [[1, 2], [3, 4]]}, "must be 1-D"),
        ({"a": [np.array([1, 2]), np.array([3, 4])]}, "must be 1-D"),
        ({"a": pd.DataFrame({"x": [1, 2]})}, "is a DataFrame"),
    ],
)
def test_a_dict_of_unusable_columns_is_refused_naming_sensitive_features(
    columns, match
):
    with pytest.raises(ValueError, match=match):
        encode_sensitive_features(columns)


def test_a_declared_label_that_is_no_label_is_refused_naming_groups():
    # A dict was hashed as a key: "unhashable type: 'dict'".
    with pytest.raises(TypeError, match="^groups must hold labels"):
        check_declared_groups([{"a": 1}, {"b": 2}])


def test_a_declared_label_given_as_an_array_is_the_list_of_its_values():
    declared = check_declared_groups([np.array(["a", 0], dtype=object), ["b", 1]])
    assert declared == [["a", 0], ["b", 1]]


@pytest.mark.parametrize("declare", [False, True])
def test_integer_labels_beyond_int64_are_kept_exactly(declare):
    # numpy made them float64: 2**63 + 1 became 9.223372036854775808e18.
    big = 2**63 + 1
    values = np.array([1, big, 1], dtype=np.uint64)
    enc = encode_sensitive_features(values, groups=[1, big] if declare else None)
    assert [int(g) for g in enc.groups] == [1, big]
    np.testing.assert_array_equal(enc.codes, [0, 1, 0])
    # Labels that numpy stores exactly keep their natural dtype.
    assert encode_sensitive_features([3, 1, 3]).groups.dtype.kind == "i"


def test_list_labels_for_one_column_are_tuples_not_an_unhashable_error():
    # A bare "unhashable type: 'list'" was raised by every fit of a plan
    # made for such groups; as tuples they match a column of tuples.
    with pytest.raises(ValueError, match="not in the declared groups"):
        encode_sensitive_features(np.array(["a", "b"]), groups=[["a"], ["b"]])
    column = pd.Series([("a", 0), ("b", 1)])
    enc = encode_sensitive_features(column, groups=[["a", 0], ["b", 1]])
    np.testing.assert_array_equal(enc.codes, [0, 1])


@pytest.mark.parametrize(
    "layout",
    [
        lambda v: pd.DataFrame({"s": v}),
        lambda v: np.asarray(v, dtype=object)[:, None],
        lambda v: {"s": v},
    ],
    ids=["frame", "array", "dict"],
)
@pytest.mark.parametrize("groups", [[("a",), ("b",)], [["a"], ["b"]]])
def test_tuple_labels_for_one_column_of_a_table_are_refused_naming_groups(
    layout, groups
):
    # Refused as an undeclared group of every row before.
    with pytest.raises(ValueError, match="^groups must be plain labels"):
        encode_sensitive_features(layout(["a", "b", "a"]), groups=groups)
    # Plain labels work for every layout.
    enc = encode_sensitive_features(layout(["a", "b", "a"]), groups=["a", "b"])
    np.testing.assert_array_equal(enc.codes, [0, 1, 0])


@pytest.mark.parametrize(
    "groups",
    [
        ["Fw", "Mb", "Fb", "Mw"],  # each string was read as its characters
        [1, 2],  # "'int' object is not iterable"
        ["F", "M"],  # refused as an undeclared group of every row
        [("F", "w"), ("M", "b", "x")],
    ],
)
def test_labels_for_several_columns_are_tuples_of_one_value_each(groups):
    sf = pd.DataFrame({"sex": ["F", "M", "F"], "race": ["w", "b", "b"]})
    with pytest.raises(ValueError, match="^groups must be tuples of 2 values"):
        encode_sensitive_features(sf, groups=groups)
    enc = encode_sensitive_features(sf, groups=[("F", "w"), ["M", "b"], ("F", "b")])
    np.testing.assert_array_equal(enc.codes, [0, 1, 2])


@pytest.mark.parametrize("groups", [{"b", "a"}, frozenset("ab"), {"a": 0, "b": 1}])
def test_unordered_groups_are_refused(groups):
    # A set's order is the hash order, which varies between processes for
    # strings: groups_ and the fitted model varied with PYTHONHASHSEED.
    with pytest.raises(ValueError, match="^groups must be an ordered sequence"):
        check_declared_groups(groups)
    with pytest.raises(ValueError, match="^groups must be an ordered sequence"):
        encode_sensitive_features(["a", "b"], groups=groups)
