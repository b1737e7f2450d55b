# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""UCI Adult as the benchmarks use it: one-hot + standardized, rows with '?' dropped.

The preprocessing statistics come from the training file (the protocol of the
published comparisons); they are outside the DP guarantee.
"""

import platform
import subprocess

from sklearn.compose import ColumnTransformer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from sklearn_dpfair.datasets import load_adult


def adult_arrays():
    """Return X_train, y_train, X_test, y_test, sex_train, sex_test (numpy)."""
    train, test = load_adult(), load_adult(subset="test")
    pre = make_pipeline(
        ColumnTransformer(
            [
                (
                    "cat",
                    OneHotEncoder(handle_unknown="ignore", sparse_output=False),
                    train.categorical_features,
                ),
                ("num", "passthrough", train.numeric_features),
            ]
        ),
        StandardScaler(),
    )
    return (
        pre.fit_transform(train.data),
        train.target.to_numpy(),
        pre.transform(test.data),
        test.target.to_numpy(),
        train.sensitive["sex"].to_numpy(),
        test.sensitive["sex"].to_numpy(),
    )


def machine_description():
    """One line naming the CPU, core count and Python version."""
    try:
        cpu = subprocess.run(
            ["sh", "-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"],
            capture_output=True,
            text=True,
        ).stdout.strip()
    except OSError:
        cpu = platform.processor()
    import os

    return f"{cpu or 'unknown CPU'}, {os.cpu_count()} cores, Python {platform.python_version()}"
