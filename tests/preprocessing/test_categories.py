# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
import pickle

import numpy as np
import pandas as pd

from sklearn_dpfair.preprocessing._categories import MISSING, canonical_order, key_of


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
