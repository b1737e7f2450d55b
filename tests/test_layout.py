# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The test tree has no packages: each test module needs a unique basename."""

import collections
import pathlib


def test_test_modules_have_unique_basenames():
    # pytest imports rootless test modules by basename: a second
    # test_plan.py stops the whole collection with an import mismatch.
    here = pathlib.Path(__file__).parent
    names = collections.Counter(p.name for p in here.rglob("test_*.py"))
    assert [name for name, n in names.items() if n > 1] == []
