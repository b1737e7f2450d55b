# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Neighbouring datasets differ in exactly the canary, under each relation."""

import numpy as np
import pandas as pd
import pytest

from sklearn_dpfair.audit import make_canary, make_neighbours


@pytest.fixture
def base():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(6, 3))
    y = np.array([0, 1, 0, 1, 1, 1])
    s = np.array(["a", "b", "a", "b", "a", "b"])
    return X, y, s


def test_add_remove_adds_exactly_the_canary(base):
    X, y, s = base
    nb = make_neighbours(
        X,
        y,
        canary=(np.array([9.0, 0, 0]), 0),
        fit_params={"sensitive_features": s, "n_epochs": 3},
        canary_fit_params={"sensitive_features": "b"},
    )
    assert nb.adjacency == "add_remove"
    assert nb.without.X is X and nb.without.y is y
    np.testing.assert_array_equal(nb.with_canary.X[:-1], X)
    np.testing.assert_array_equal(nb.with_canary.X[-1], [9.0, 0, 0])
    assert nb.with_canary.y[-1] == 0
    assert list(nb.with_canary.fit_params["sensitive_features"]) == [*s, "b"]
    # Not per record: passed through unchanged.
    assert nb.with_canary.fit_params["n_epochs"] == 3


def test_replace_one_differs_in_one_row(base):
    X, y, s = base
    nb = make_neighbours(
        X,
        y,
        canary=(np.array([9.0, 0, 0]), 0),
        adjacency="replace_one",
        fit_params={"sensitive_features": s},
        canary_fit_params={"sensitive_features": "b"},
    )
    X0, X1 = nb.without.X, nb.with_canary.X
    assert X0.shape == X1.shape == (7, 3)
    assert np.flatnonzero(np.any(X0 != X1, axis=1)).tolist() == [6]
    # Default replacement: a copy of the first record, attributes included.
    np.testing.assert_array_equal(X0[6], X[0])
    assert nb.without.y[6] == y[0]
    assert nb.without.fit_params["sensitive_features"][6] == s[0]


def test_attribute_neighbours_differ_only_in_the_attribute(base):
    X, y, s = base
    nb = make_neighbours(
        X,
        y,
        canary=(np.array([9.0, 0, 0]), 0),
        adjacency="attribute",
        fit_params={"sensitive_features": s},
        canary_fit_params={"sensitive_features": "a"},
        attribute="sensitive_features",
        alternative_value="b",
    )
    np.testing.assert_array_equal(nb.without.X, nb.with_canary.X)
    np.testing.assert_array_equal(nb.without.y, nb.with_canary.y)
    s0 = nb.without.fit_params["sensitive_features"]
    s1 = nb.with_canary.fit_params["sensitive_features"]
    assert np.flatnonzero(s0 != s1).tolist() == [6]
    assert (s0[6], s1[6]) == ("a", "b")


def test_pandas_inputs_keep_their_type():
    X = pd.DataFrame({"u": [0.0, 1.0], "v": [1.0, 0.0]})
    y = pd.Series([0, 1], name="label")
    nb = make_neighbours(X, y, canary=([5.0, 5.0], 1))
    assert isinstance(nb.with_canary.X, pd.DataFrame)
    assert list(nb.with_canary.X.columns) == ["u", "v"]
    assert nb.with_canary.X.iloc[-1].tolist() == [5.0, 5.0]
    assert nb.with_canary.y.tolist() == [0, 1, 1]


def test_bad_neighbour_requests_are_explained(base):
    X, y, s = base
    with pytest.raises(ValueError, match="adjacency must be one of"):
        make_neighbours(X, y, canary=(np.zeros(3), 0), adjacency="swap")
    with pytest.raises(ValueError, match="canary has 2 features"):
        make_neighbours(X, y, canary=(np.zeros(2), 0))
    with pytest.raises(ValueError, match="canary_fit_params"):
        make_neighbours(
            X, y, canary=(np.zeros(3), 0), fit_params={"sensitive_features": s}
        )
    with pytest.raises(ValueError, match="attribute="):
        make_neighbours(X, y, canary=(np.zeros(3), 0), adjacency="attribute")


@pytest.mark.parametrize("canary", [np.zeros(3), (np.zeros(3),), 3])
def test_a_canary_that_is_no_pair_is_refused_naming_it(base, canary):
    # "too many values to unpack" (or "cannot unpack non-iterable").
    X, y, _ = base
    with pytest.raises(TypeError, match=r"^canary must be a tuple"):
        make_neighbours(X, y, canary=canary)


def test_y_of_another_length_than_x_is_refused(base):
    # Both worlds were built (y one longer than it was given), and the
    # mismatch surfaced only in the first probe fit.
    X, y, _ = base
    with pytest.raises(ValueError, match="y has 5 rows but X has 6"):
        make_neighbours(X, y[:5], canary=(np.zeros(3), 0))
    assert make_neighbours(X, list(y), canary=[np.zeros(3), 0]).canary_y == 0


def test_make_canary_is_an_outlier_on_the_least_used_feature():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3))
    X[:, 2] *= 0.01
    y = np.r_[np.zeros(90, int), np.ones(10, int)]
    cx, cy = make_canary(X, y)
    assert np.flatnonzero(cx).tolist() == [2]
    assert cx[2] >= 10 * np.abs(X).max()
    assert cy == 1  # the rarer label
    cx, cy = make_canary(X, rng.normal(size=100))
    assert cy >= 10  # regression: an outlying target


# -- the replaced record shares the canary's public status -------------------------


def test_replace_one_default_replaces_a_record_with_the_canary_public_status():
    # Row 0 is public, the canary private: copying row 0 would change which
    # rows are public, and semi-DP neighbours (Lowy et al. 2023) differ in
    # one private record only.
    X = np.arange(12.0).reshape(6, 2)
    y = np.arange(6.0)
    public = np.array([True, True, False, True, False, False])
    silos = np.array([0, 1, 1, 0, 1, 0])
    nb = make_neighbours(
        X,
        y,
        canary=(np.array([9.0, 9.0]), 50.0),
        adjacency="replace_one",
        fit_params={"public_mask": public, "silos": silos},
        canary_fit_params={"public_mask": False, "silos": 0},
    )
    for name in ("public_mask", "silos"):
        np.testing.assert_array_equal(
            nb.without.fit_params[name], nb.with_canary.fit_params[name]
        )
    # The first private record in silo 0 is row 5.
    np.testing.assert_array_equal(nb.without.X[-1], X[5])
    assert nb.without.y[-1] == y[5]
    # An index or a record with another status is refused, naming it.
    kw = {
        "canary": (np.array([9.0, 9.0]), 50.0),
        "adjacency": "replace_one",
        "fit_params": {"public_mask": public, "silos": silos},
        "canary_fit_params": {"public_mask": False, "silos": 0},
    }
    with pytest.raises(ValueError, match=r"replacement \(record 0\).*public_mask"):
        make_neighbours(X, y, replacement=0, **kw)
    with pytest.raises(ValueError, match="replacement has silos=1"):
        make_neighbours(
            X, y, replacement=(X[2], y[2], {"public_mask": False, "silos": 1}), **kw
        )
    nb = make_neighbours(X, y, replacement=5, **kw)
    np.testing.assert_array_equal(nb.without.X[-1], X[5])
    with pytest.raises(ValueError, match="No record has the canary's public_mask"):
        make_neighbours(
            X,
            y,
            canary=(np.zeros(2), 0.0),
            adjacency="replace_one",
            fit_params={"public_mask": np.ones(6, bool)},
            canary_fit_params={"public_mask": False},
        )


@pytest.mark.parametrize("adjacency", ["add_remove", "replace_one"])
@pytest.mark.parametrize("public", [True, np.True_, [True], np.array([True])])
def test_a_public_canary_is_refused(adjacency, public):
    # A semi-DP guarantee protects the private records given the public
    # ones. Under replace_one the replaced record took the canary's public
    # status, both fits had the same n_public_, and the audit of a correct
    # SemiDPLinearRegression reported "epsilon >= 2.46" against a claim of
    # 0.0151 at delta 0.1.
    X, y = np.arange(12.0).reshape(6, 2), np.arange(6.0)
    kw = dict(
        canary=(np.array([9.0, 9.0]), 50.0),
        adjacency=adjacency,
        fit_params={"public_mask": np.arange(6) < 3},
    )
    with pytest.raises(ValueError, match=r"canary_fit_params\['public_mask'\] is True"):
        make_neighbours(X, y, canary_fit_params={"public_mask": public}, **kw)
    nb = make_neighbours(X, y, canary_fit_params={"public_mask": False}, **kw)
    assert not nb.with_canary.fit_params["public_mask"][-1]


# -- values are stored as given --------------------------------------------------


def test_appended_values_are_never_truncated_to_the_column_dtype():
    X = np.zeros((4, 2))
    y = np.array(["no", "yes", "no", "yes"])  # <U3
    groups = np.array(["a", "b", "a", "b"])  # <U1
    weights = np.array([1, 1, 2, 1])  # integers
    nb = make_neighbours(
        X,
        y,
        canary=(np.ones(2), "maybe"),
        fit_params={"sensitive_features": groups, "sample_weight": weights},
        canary_fit_params={"sensitive_features": "other", "sample_weight": 0.5},
    )
    assert nb.with_canary.y[-1] == "maybe"
    assert nb.with_canary.fit_params["sensitive_features"][-1] == "other"
    assert nb.with_canary.fit_params["sample_weight"][-1] == 0.5
    # A fractional target on integer targets; both worlds share the dtype,
    # so that they differ in the one record only.
    nb = make_neighbours(
        X, np.array([3, 5, 7, 9]), canary=(np.ones(2), 2.75), adjacency="replace_one"
    )
    assert nb.with_canary.y[-1] == 2.75
    assert nb.without.y.dtype == nb.with_canary.y.dtype == np.float64
    np.testing.assert_array_equal(nb.without.y, [3, 5, 7, 9, 3])
    # A value of another kind is refused rather than turning the other
    # records' labels into strings.
    with pytest.raises(ValueError, match="given for y does not fit its dtype"):
        make_neighbours(X, np.array([0, 1, 0, 1]), canary=(np.ones(2), "x"))
    # Values that fit keep the column's dtype.
    nb = make_neighbours(X, np.array([0, 1, 0, 1]), canary=(np.ones(2), 1.0))
    assert nb.with_canary.y.dtype == np.array([0]).dtype


# -- the attribute relation changes something -------------------------------------


def test_attribute_pairs_and_canary_parameters_must_change_the_data(base):
    X, y, s = base
    canary = (np.zeros(3), 0)
    # The attribute is not a fit parameter: both worlds would be the same.
    with pytest.raises(ValueError, match="attribute=.*per-record"):
        make_neighbours(
            X,
            y,
            canary=canary,
            adjacency="attribute",
            attribute="sensitive_features",
            alternative_value="b",
        )
    with pytest.raises(ValueError, match="alternative_value='a'"):
        make_neighbours(
            X,
            y,
            canary=canary,
            adjacency="attribute",
            fit_params={"sensitive_features": s},
            canary_fit_params={"sensitive_features": "a"},
            attribute="sensitive_features",
            alternative_value="a",
        )
    # A canary value for no fit parameter (a misspelling) is not dropped.
    with pytest.raises(ValueError, match=r"canary_fit_params\['sample_weights'\]"):
        make_neighbours(
            X, y, canary=canary, canary_fit_params={"sample_weights": 100.0}
        )
    # Nor one for a fit parameter that is not per record.
    with pytest.raises(ValueError, match="does not have one entry per record"):
        make_neighbours(
            X,
            y,
            canary=canary,
            fit_params={"n_epochs": 3},
            canary_fit_params={"n_epochs": 4},
        )


def test_pandas_frames_keep_each_columns_dtype():
    X = pd.DataFrame(
        {
            "job": ["a", "b", "a", "b"],
            "kind": pd.Categorical(["u", "v", "u", "v"]),
            "age": [30, 40, 50, 60],
            "income": [1.0, 2.0, 3.0, 4.0],
        }
    )
    y = pd.Series([0, 1, 0, 1])
    nb = make_neighbours(X, y, canary=(np.array(["c", "u", 99, 5.5], dtype=object), 1))
    world = nb.with_canary.X
    assert world.iloc[-1].tolist() == ["c", "u", 99, 5.5]
    assert world.dtypes.to_dict() == X.dtypes.to_dict()
    assert nb.without.X is X
    # What an auditor queries at: the canary's row with X's columns.
    assert isinstance(nb.canary_X, pd.DataFrame) and nb.canary_X.shape == (1, 4)
    assert nb.canary_X.dtypes.to_dict() == X.dtypes.to_dict()
    # A fractional age: the column is promoted in both worlds alike.
    nb = make_neighbours(
        X, y, canary=(["c", "u", 99.5, 5.5], 1), adjacency="replace_one"
    )
    assert nb.with_canary.X["age"].iloc[-1] == 99.5
    assert nb.without.X["age"].dtype == nb.with_canary.X["age"].dtype == np.float64


# -- a value None is a record's value, not a missing record ---------------------


def test_a_none_canary_value_is_appended_as_a_missing_value():
    X = np.zeros((4, 2))
    y = np.array([0.0, 1.0, 0.0, 1.0])
    g = np.array(["a", "b", None, "a"], dtype=object)
    # No target: stored as a missing target, one row like X's.
    nb = make_neighbours(X, y, canary=(np.array([5.0, 0.0]), None))
    assert nb.with_canary.X.shape == (5, 2) and nb.with_canary.y.shape == (5,)
    assert np.isnan(nb.with_canary.y[-1]) and nb.without.y is y
    # A missing group under add/remove: world 1 is world 0 plus the canary.
    kw = {"fit_params": {"sensitive_features": g}}
    nb = make_neighbours(
        X,
        y,
        canary=(np.array([5.0, 0.0]), 1.0),
        canary_fit_params={"sensitive_features": None},
        **kw,
    )
    s1 = nb.with_canary.fit_params["sensitive_features"]
    assert len(s1) == len(nb.with_canary.y) == 5 and s1[-1] is None
    assert nb.without.fit_params["sensitive_features"] is g
    # Under replace_one both worlds hold five records and differ in the last.
    nb = make_neighbours(
        X,
        y,
        canary=(np.array([5.0, 0.0]), 1.0),
        adjacency="replace_one",
        canary_fit_params={"sensitive_features": None},
        **kw,
    )
    s0 = nb.without.fit_params["sensitive_features"]
    s1 = nb.with_canary.fit_params["sensitive_features"]
    assert len(s0) == len(s1) == nb.without.X.shape[0] == nb.with_canary.X.shape[0]
    assert (s0[-1], s1[-1]) == ("a", None)
    # A replacement without a target, likewise.
    nb = make_neighbours(
        X,
        y,
        canary=(np.array([5.0, 0.0]), 1.0),
        adjacency="replace_one",
        replacement=(np.ones(2), None, {"sensitive_features": "b"}),
        canary_fit_params={"sensitive_features": "a"},
        **kw,
    )
    assert nb.without.y.shape == nb.with_canary.y.shape == (5,)
    assert np.isnan(nb.without.y[-1]) and nb.with_canary.y[-1] == 1.0


def test_attribute_pairs_may_change_a_group_to_missing():
    X = np.zeros((4, 2))
    y = np.array([0, 1, 0, 1])
    g = np.array(["a", "b", None, "a"], dtype=object)
    kw = {
        "canary": (np.array([5.0, 0.0]), 1),
        "adjacency": "attribute",
        "fit_params": {"sensitive_features": g},
        "attribute": "sensitive_features",
    }
    nb = make_neighbours(
        X,
        y,
        canary_fit_params={"sensitive_features": "a"},
        alternative_value=None,
        **kw,
    )
    s0 = nb.without.fit_params["sensitive_features"]
    s1 = nb.with_canary.fit_params["sensitive_features"]
    assert len(s0) == len(s1) == 5 and (s0[-1], s1[-1]) == ("a", None)
    # And from missing to a group.
    nb = make_neighbours(
        X,
        y,
        canary_fit_params={"sensitive_features": None},
        alternative_value="b",
        **kw,
    )
    s0 = nb.without.fit_params["sensitive_features"]
    s1 = nb.with_canary.fit_params["sensitive_features"]
    assert (s0[-1], s1[-1]) == (None, "b")
    # A pair that changes nothing, or no alternative at all, is refused.
    with pytest.raises(ValueError, match="alternative_value=None must be"):
        make_neighbours(
            X,
            y,
            canary_fit_params={"sensitive_features": None},
            alternative_value=None,
            **kw,
        )
    with pytest.raises(ValueError, match="alternative_value"):
        make_neighbours(X, y, canary_fit_params={"sensitive_features": "a"}, **kw)


def test_a_none_canary_value_in_pandas_columns():
    X = pd.DataFrame({"u": [0.0, 1.0, 2.0], "v": [1.0, 0.0, 1.0]})
    y = pd.Series([0.5, 1.5, 2.5], name="target")
    g = pd.Series(pd.Categorical(["a", "b", "a"]), name="group")
    nb = make_neighbours(
        X,
        y,
        canary=([5.0, None], None),
        fit_params={"sensitive_features": g},
        canary_fit_params={"sensitive_features": None},
    )
    world = nb.with_canary
    assert world.X.shape == (4, 2) and len(world.y) == 4
    assert np.isnan(world.X["v"].iloc[-1]) and np.isnan(world.y.iloc[-1])
    s1 = world.fit_params["sensitive_features"]
    # A missing value fits a categorical column: it stays categorical.
    assert len(s1) == 4 and pd.isna(s1.iloc[-1]) and s1.dtype == g.dtype


# -- make_canary keeps X's float dtype ---------------------------------------------


def test_make_canary_keeps_float32_worlds_float32():
    import warnings

    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3)).astype(np.float32)
    y = rng.normal(size=20).astype(np.float32)
    canary = make_canary(X, y)
    assert canary[0].dtype == np.float32 and np.asarray(canary[1]).dtype == np.float32
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no dtype change to warn about
        for adjacency in ("add_remove", "replace_one"):
            nb = make_neighbours(X, y, canary=canary, adjacency=adjacency)
            for world in (nb.without, nb.with_canary):
                assert world.X.dtype == world.y.dtype == np.float32
            assert nb.canary_X.dtype == np.float32
            np.testing.assert_array_equal(nb.with_canary.X[-1], canary[0])
        # A DataFrame of float32 columns, likewise.
        df = pd.DataFrame(X, columns=["a", "b", "c"])
        nb = make_neighbours(df, y, canary=make_canary(df, y))
        assert set(nb.with_canary.X.dtypes) == {np.dtype(np.float32)}
        # The classifier's canary on float32 features.
        labels = (y > 0).astype(int)
        nb = make_neighbours(X, labels, canary=make_canary(X, labels))
        assert nb.with_canary.X.dtype == np.float32


def test_a_canary_value_a_float_column_cannot_hold_promotes_with_a_warning():
    X = np.zeros((4, 2), dtype=np.float32)
    y = np.array([0, 1, 0, 1])
    with pytest.warns(UserWarning, match=r"X .*float32 to float64"):
        nb = make_neighbours(X, y, canary=(np.array([0.1, 0.0]), 1))
    # Stored exactly, in both worlds alike.
    assert nb.without.X.dtype == nb.with_canary.X.dtype == np.float64
    assert nb.with_canary.X[-1, 0] == 0.1
    df = pd.DataFrame({"a": X[:, 0], "b": X[:, 1]})
    with pytest.warns(UserWarning, match=r"X column 'a'.*float32 to float64"):
        nb = make_neighbours(df, y, canary=([0.1, 0.0], 1), adjacency="replace_one")
    # Not rounded to float32 (NumPy 2 finds np.float32(0.1) == 0.1).
    assert nb.with_canary.X["a"].iloc[-1] == 0.1
    assert nb.with_canary.X.dtypes.tolist() == [np.float64, np.float32]
    assert nb.without.X.dtypes.tolist() == [np.float64, np.float32]


# -- a named canary is read by name --------------------------------------------------


def _named_frame():
    X = pd.DataFrame({"income": [1.0, 2.0, 3.0], "age": [30.0, 40.0, 50.0]})
    return X, np.array([0, 1, 0])


@pytest.mark.parametrize(
    "canary",
    [
        pd.Series({"age": 1000.0, "income": 5.0}),
        pd.DataFrame([{"age": 1000.0, "income": 5.0}]),
        {"age": 1000.0, "income": 5.0},
    ],
)
@pytest.mark.parametrize("adjacency", ["add_remove", "replace_one"])
def test_a_named_canary_is_stored_by_column_name(canary, adjacency):
    X, y = _named_frame()
    nb = make_neighbours(X, y, canary=(canary, 1), adjacency=adjacency)
    assert nb.with_canary.X.iloc[-1].to_dict() == {"income": 5.0, "age": 1000.0}
    assert nb.canary_X.iloc[0].to_dict() == {"income": 5.0, "age": 1000.0}


@pytest.mark.parametrize(
    "canary, match",
    [
        (
            pd.Series({"age": 1000.0, "salary": 5.0}),
            r"missing \['income'\].*\['salary'\]",
        ),
        (pd.Series({"age": 1000.0}), r"missing \['income'\]"),
        (pd.DataFrame([{"age": 1.0, "income": 5.0}] * 2), "one row"),
        ({"age": 1000.0}, r"missing \['income'\]"),
        ({"age": 1.0, "income": 5.0, "salary": 2.0}, r"missing \[\].*\['salary'\]"),
    ],
)
def test_a_named_canary_must_name_each_column_once(canary, match):
    X, y = _named_frame()
    with pytest.raises(ValueError, match=rf"canary\[0\].*{match}"):
        make_neighbours(X, y, canary=(canary, 1))


def test_a_named_replacement_is_stored_by_column_name():
    X, y = _named_frame()
    replacement = (pd.Series({"age": 7.0, "income": 8.0}), 0, {})
    nb = make_neighbours(
        X,
        y,
        canary=([5.0, 1000.0], 1),
        adjacency="replace_one",
        replacement=replacement,
    )
    assert nb.without.X.iloc[-1].to_dict() == {"income": 8.0, "age": 7.0}


def test_a_dict_canary_for_an_x_without_column_names_is_refused():
    # An array's columns are positions: a dict's keys name none of them.
    with pytest.raises(TypeError, match=r"canary\[0\] is a mapping.*column order"):
        make_neighbours(np.zeros((3, 2)), None, canary=({"a": 1.0, "b": 2.0}, None))


# -- a dict for a per-record DataFrame fit parameter ----------------------------------


def _groups():
    X, y = np.arange(8.0).reshape(4, 2), np.array([0, 1, 0, 1])
    sf = pd.DataFrame({"sex": ["m", "f", "m", "f"], "race": ["w", "b", "w", "b"]})
    return X, y, sf


_CANARY_GROUPS = {"race": "b", "sex": "f"}


@pytest.mark.parametrize(
    "adjacency, extra, without_last, with_last",
    [
        ("add_remove", {}, None, {"sex": "f", "race": "b"}),
        (
            "replace_one",
            {
                "replacement": (
                    np.zeros(2),
                    0,
                    {"sensitive_features": {"race": "w", "sex": "m"}},
                )
            },
            {"sex": "m", "race": "w"},
            {"sex": "f", "race": "b"},
        ),
        (
            "attribute",
            {
                "attribute": "sensitive_features",
                "alternative_value": {"race": "b", "sex": "m"},
            },
            {"sex": "f", "race": "b"},
            {"sex": "m", "race": "b"},
        ),
    ],
)
def test_a_dict_value_of_a_dataframe_fit_param_is_read_by_column_name(
    adjacency, extra, without_last, with_last
):
    # The canary's groups {"race": "b", "sex": "f"} name the frame's columns
    # (sex, race): read by name, as a Series is, not by position.
    X, y, sf = _groups()
    nb = make_neighbours(
        X,
        y,
        canary=(np.ones(2), 1),
        adjacency=adjacency,
        fit_params={"sensitive_features": sf},
        canary_fit_params={"sensitive_features": _CANARY_GROUPS},
        **extra,
    )
    with_canary = nb.with_canary.fit_params["sensitive_features"]
    without = nb.without.fit_params["sensitive_features"]
    assert list(with_canary.columns) == ["sex", "race"]
    assert with_canary.iloc[-1].to_dict() == with_last
    if without_last is None:
        assert without.equals(sf)
    else:
        assert without.iloc[-1].to_dict() == without_last


@pytest.mark.parametrize(
    "value, match",
    [
        ({"sex": "f"}, r"missing \['race'\]"),
        ({"sex": "f", "race": "b", "age": 3}, r"not columns of .*\['age'\]"),
    ],
)
def test_a_dict_value_of_a_dataframe_fit_param_must_name_each_column_once(value, match):
    X, y, sf = _groups()
    with pytest.raises(
        ValueError,
        match=rf"canary_fit_params\['sensitive_features'\] must name each column "
        rf"of fit_params\['sensitive_features'\] once.*{match}",
    ):
        make_neighbours(
            X,
            y,
            canary=(np.ones(2), 1),
            fit_params={"sensitive_features": sf},
            canary_fit_params={"sensitive_features": value},
        )


def test_a_dict_value_of_a_2d_array_fit_param_is_refused_naming_it():
    X, y, sf = _groups()
    with pytest.raises(
        TypeError,
        match=r"canary_fit_params\['sensitive_features'\] is a mapping, but "
        r"fit_params\['sensitive_features'\] is 2-D without column names",
    ):
        make_neighbours(
            X,
            y,
            canary=(np.ones(2), 1),
            fit_params={"sensitive_features": sf.to_numpy()},
            canary_fit_params={"sensitive_features": {"sex": "f", "race": "b"}},
        )


# -- public status is not an attribute ------------------------------------------------


@pytest.mark.parametrize(
    "attribute, values, canary_value, alternative",
    [
        ("silos", np.arange(6) % 3, 0, 1),
        ("public_mask", np.arange(6) % 2 == 0, False, True),
    ],
)
def test_attribute_cannot_be_public_status(
    base, attribute, values, canary_value, alternative
):
    # Moving a record between silos, or making it public, is not a
    # neighbouring pair: neighbours share the records' public status.
    X, y, _ = base
    with pytest.raises(ValueError, match=rf"attribute='{attribute}' is public status"):
        make_neighbours(
            X,
            y,
            canary=(np.zeros(3), 1),
            adjacency="attribute",
            fit_params={attribute: values},
            canary_fit_params={attribute: canary_value},
            attribute=attribute,
            alternative_value=alternative,
        )


# -- a per-record DataFrame under replace-one ----------------------------------------


@pytest.mark.parametrize("replacement", [None, 2])
def test_replace_one_with_a_dataframe_fit_param(replacement):
    X, y = np.arange(8.0).reshape(4, 2), np.array([0, 1, 0, 1])
    sf = pd.DataFrame({"sex": ["m", "f", "m", "f"], "band": [1, 2, 3, 4]})
    nb = make_neighbours(
        X,
        y,
        canary=(np.ones(2), 1),
        adjacency="replace_one",
        replacement=replacement,
        fit_params={"sensitive_features": sf},
        canary_fit_params={"sensitive_features": ["f", 9]},
    )
    row = 0 if replacement is None else replacement
    without = nb.without.fit_params["sensitive_features"]
    assert without.iloc[-1].to_dict() == sf.iloc[row].to_dict()
    assert nb.with_canary.fit_params["sensitive_features"].iloc[-1].tolist() == [
        "f",
        9,
    ]
    np.testing.assert_array_equal(nb.without.X[-1], X[row])


# -- make_canary on NaN, inf, huge and text inputs ------------------------------------


def test_make_canary_ignores_nan_entries():
    X = np.array([[1.0, 0.5], [np.nan, 0.1], [2.0, 0.2]])
    cx, cy = make_canary(X, np.array([0, 1, 0]))
    # Column 1 is the least used; the outlier is 10 x the largest value, 2.
    assert cx.tolist() == [0.0, 20.0] and cy == 1
    _, target = make_canary(np.ones((3, 2)), np.array([1.0, np.nan, 2.0]))
    assert target == 20.0
    # A column without any value is never the canary's.
    cx, _ = make_canary(np.array([[np.nan, 5.0], [np.nan, 6.0]]))
    assert cx.tolist() == [0.0, 60.0]
    with pytest.raises(ValueError, match="every entry is NaN"):
        make_canary(np.full((2, 2), np.nan))


@pytest.mark.parametrize("dtype", ["Float64", "Int64"])
def test_make_canary_ignores_missing_entries_of_nullable_columns(dtype):
    # pd.NA, a nullable column's missing value, is a missing entry as NaN is.
    y = np.array([0, 1, 0])
    df = pd.DataFrame({"a": pd.array([1, None, 3], dtype=dtype), "b": [5.0, 6.0, 7.0]})
    cx, cy = make_canary(df, y)
    # Column "a" is the least used (mean 2 over its present values); the
    # outlier is 10 x the largest value, 7.
    assert cx.tolist() == [70.0, 0.0] and cy == 1


@pytest.mark.parametrize(
    "X, y, what",
    [
        (np.array([[1.0, 0.5], [np.inf, 0.1]]), None, "X"),
        (np.array([[1e308, 0.0], [1.0, 1.0]]), None, "X"),
        (np.ones((2, 2)), np.array([1.0, np.inf]), "y"),
    ],
)
def test_make_canary_refuses_a_canary_value_that_overflows(X, y, what):
    with pytest.raises(ValueError, match=rf"scale \* max\|{what}\| is not a finite"):
        make_canary(X, y)


@pytest.mark.parametrize(
    "scale, error",
    [
        ("10", TypeError),
        (None, TypeError),
        (True, TypeError),
        (0.0, ValueError),
        (-10.0, ValueError),
        (float("nan"), ValueError),
        (float("inf"), ValueError),
    ],
)
def test_make_canary_refuses_a_scale_that_is_no_positive_number(scale, error):
    # Zero would give an all-zero canary, no outlier at all.
    X = np.array([[1.0, 0.0], [2.0, 0.1], [1.0, 0.0]])
    with pytest.raises(error, match="scale"):
        make_canary(X, np.array([0, 0, 1]), scale=scale)


def test_make_canary_refuses_text_columns_naming_them():
    df = pd.DataFrame({"age": [30.0, 40.0, 50.0], "job": ["a", "b", "a"]})
    with pytest.raises(ValueError, match=r"columns \['job'\] are not numeric"):
        make_canary(df, np.array([0, 1, 0]))
    with pytest.raises(ValueError, match="numeric features"):
        make_canary(np.array([["a", 1.0]], dtype=object))


# -- sparse X ---------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_make_canary_reads_a_sparse_x_as_its_dense_values(fmt):
    import scipy.sparse as sp

    # Column 1 is the least used once the implicit zeros count as values;
    # a stored NaN is a missing entry, as in a dense X.
    X = np.array([[1.0, 0.0, 2.0], [0.0, 0.5, 0.0], [3.0, 0.0, np.nan]])
    y = np.array([0, 1, 0])
    cx, cy = make_canary(sp.coo_matrix(X).asformat(fmt), y)
    dense_x, dense_y = make_canary(X, y)
    assert cx.tolist() == dense_x.tolist() == [0.0, 30.0, 0.0]
    assert cy == dense_y == 1
    cx32, _ = make_canary(sp.csr_matrix(X.astype(np.float32)), y)
    assert cx32.dtype == np.float32
    with pytest.raises(ValueError, match="numeric features"):
        make_canary(sp.csr_matrix(np.ones((2, 2), dtype=complex)))


def test_make_canary_leaves_a_non_canonical_csc_x_as_it_was():
    import scipy.sparse as sp

    # Duplicate, unsorted entries: summing them must happen on a copy.
    data = np.array([1.0, 2.0, 3.0, 4.0])
    X = sp.csc_matrix((data, np.array([2, 0, 0, 1]), np.array([0, 3, 4])), shape=(3, 2))
    make_canary(X, np.array([0, 1, 0]))
    assert X.nnz == 4 and not X.has_canonical_format
    assert data.tolist() == [1.0, 2.0, 3.0, 4.0]
    assert X.data.tolist() == [1.0, 2.0, 3.0, 4.0]


@pytest.mark.parametrize("cls", ["csr_matrix", "csc_array"])
def test_sparse_neighbours_stay_sparse_and_differ_in_the_canary(cls):
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    X = rng.normal(size=(6, 3))
    X[X < 0] = 0.0
    y = np.array([0, 1, 0, 1, 1, 1])
    Xs = getattr(sp, cls)(X)
    canary = np.array([5.0, 0.0, 0.0])
    nb = make_neighbours(Xs, y, canary=(canary, 1))
    assert nb.without.X is Xs
    world = nb.with_canary.X
    assert type(world) is type(Xs) and world.format == Xs.format
    np.testing.assert_array_equal(world.toarray(), np.vstack([X, canary]))
    assert sp.issparse(nb.canary_X)
    np.testing.assert_array_equal(nb.canary_X.toarray(), [canary])
    # The default replacement is a copy of the first record.
    nb = make_neighbours(Xs, y, canary=(canary, 1), adjacency="replace_one")
    np.testing.assert_array_equal(nb.without.X.toarray(), np.vstack([X, X[0]]))
    np.testing.assert_array_equal(nb.with_canary.X.toarray(), np.vstack([X, canary]))
    # A sparse canary row is read as its dense values.
    nb = make_neighbours(Xs, y, canary=(sp.csr_matrix(canary), 1))
    np.testing.assert_array_equal(nb.with_canary.X.toarray()[-1], canary)


def test_a_sparse_integer_x_is_promoted_in_both_worlds_to_hold_the_canary():
    import scipy.sparse as sp

    Xi = sp.csr_matrix(np.array([[1, 0], [0, 2]], dtype=np.int64))
    nb = make_neighbours(Xi, np.array([0, 1]), canary=(np.array([0.5, 0.0]), 1))
    assert nb.without.X.dtype == nb.with_canary.X.dtype == np.float64
    np.testing.assert_array_equal(
        nb.with_canary.X.toarray(), [[1.0, 0.0], [0.0, 2.0], [0.5, 0.0]]
    )
