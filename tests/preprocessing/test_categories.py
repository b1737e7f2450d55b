# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
import datetime
import pickle
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pandas as pd

from sklearn_dpfair.preprocessing._categories import (
    MISSING,
    canonical_order,
    key_of,
    public_value,
)


def test_every_missing_value_is_one_category():
    for value in (None, np.nan, float("nan"), pd.NA, np.float32("nan")):
        assert key_of(value) is MISSING
    assert pickle.loads(pickle.dumps(MISSING)) is MISSING


def test_canonical_order_depends_on_the_set_only():
    keys = ["b", 2, MISSING, "a", 1.5]
    assert (
        canonical_order(keys)
        == canonical_order(reversed(keys))
        == [1.5, 2, "a", "b", MISSING]
    )


def test_equal_values_have_one_key_written_one_way():
    groups = [
        (0.0, -0.0, 0, np.float32(-0.0), np.int8(0)),
        (Decimal(0), Decimal("-0"), Decimal("0.00")),
        (Decimal("1.10"), Decimal("1.1")),
        (Decimal(100), Decimal("1E+2"), Decimal("100.00")),
        # Normalised exactly, whatever the exponent (no overflow, no int).
        (Decimal("1E+999999999"), Decimal("10E+999999998")),
        (1, 1.0, np.float64(1.0), np.uint64(1), Fraction(1)),
        (0.5, Fraction(1, 2), np.float16(0.5)),
        (2**60, float(2**60), np.int64(2**60)),
        (True, np.bool_(True)),
        # One instant in two time zones (pandas' and Python's datetimes).
        (
            pd.Timestamp("2024-01-01 12:00", tz="UTC"),
            pd.Timestamp("2024-01-01 13:00", tz="Europe/Paris"),
            datetime.datetime(2024, 1, 1, 7, tzinfo=datetime.timezone(
                datetime.timedelta(hours=-5))),
        ),
        (
            pd.Timestamp("2024-01-01"),
            datetime.datetime(2024, 1, 1),
            np.datetime64("2024-01-01T00:00:00.000000000"),
        ),
    ]
    for group in groups:
        keys = [key_of(v) for v in group]
        assert len({repr(k) for k in keys}) == 1, keys
        assert len({type(k) for k in keys}) == 1, keys
    # A bool is a category of its own, never the number 1.
    assert key_of(True) != key_of(1) and key_of(False) != key_of(0)
    assert len({key_of(v) for v in (True, 1, 1.0)}) == 2
    assert key_of(np.datetime64("NaT")) is MISSING and key_of(pd.NaT) is MISSING
    assert key_of(Decimal("NaN")) is MISSING and key_of(complex(np.nan, 0)) is MISSING
    assert repr(key_of(complex(1, -0.0))) == repr(key_of(complex(1, 0.0)))
    # The written value depends on the keys and the column's dtype only.
    assert str(public_value([key_of(-0.0)], np.dtype(np.float64))[0]) == "0.0"
    assert public_value([key_of(True), key_of(1)]).tolist() == [True, 1]
    assert pickle.loads(pickle.dumps(key_of(True))) == key_of(True)


def test_decimals_are_ordered_by_value_with_the_numbers():
    keys = [key_of(Decimal(v)) for v in ("10", "9", "9.5", "-1")] + [MISSING]
    assert canonical_order(keys) == canonical_order(reversed(keys))
    assert canonical_order(keys) == [
        Decimal(-1), Decimal(9), Decimal("9.5"), Decimal(10), MISSING
    ]


def test_numbers_without_a_dtype_are_written_without_merging_or_rounding():
    # A float cast would write 2**53 + 1 as 2**53 (two categories, one name).
    keys = [key_of(v) for v in (0.5, 2**53, 2**53 + 1)]
    written = public_value(keys)
    assert written.dtype == object
    assert written.tolist() == [0.5, 2**53, 2**53 + 1]
    assert [type(v) for v in written.tolist()] == [float, int, int]
    with_missing = public_value([2**53, 2**53 + 1, MISSING])
    assert str(with_missing.tolist()) == str([2**53, 2**53 + 1, np.nan])
    # An integral float beyond int64 (its key an int) is that float again.
    assert public_value([key_of(0.5), key_of(1e300)]).tolist() == [0.5, 1e300]
    assert public_value([key_of(2.0**64), MISSING]).dtype == np.float64
    assert public_value([1, 2]).dtype == np.int64
    assert public_value([1, 2.5, MISSING]).dtype == np.float64
    # A dtype whose cast would merge two keys writes them as they are.
    merged = public_value([2**53, 2**53 + 1, MISSING], np.dtype(np.int64))
    assert merged.tolist()[:2] == [2**53, 2**53 + 1]


def test_no_keys_are_written_in_the_column_dtype_or_as_objects():
    # Nothing released in a string column (object, as scikit-learn holds a
    # string column's categories), or in a numeric one (its own dtype).
    assert public_value([]).dtype == object
    for dtype in (np.float32, np.int16, np.bool_):
        assert public_value([], np.dtype(dtype)).dtype == dtype
