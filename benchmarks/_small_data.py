# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Small tabular benchmarks: COMPAS, German credit and synthetic logistic data.

Each loader returns ``X, y, s`` (numpy; y in {0, 1}, s the group codes):
one-hot categorical columns and standardized numeric ones, the statistics
taken on the whole file (a benchmark protocol, outside any DP guarantee).
Files are those under ``../shared/data`` beside the repository (or
``$SKDPFAIR_DATA``).
"""

import os

import numpy as np
import pandas as pd

DATA = os.environ.get(
    "SKDPFAIR_DATA",
    os.path.join(
        os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "shared", "data"
    ),
)


def _encode(frame, categorical, numeric):
    parts = [pd.get_dummies(frame[c].astype(str), prefix=c, dtype=float) for c in categorical]
    num = frame[numeric].astype(float)
    parts.append((num - num.mean()) / num.std(ddof=0))
    X = pd.concat(parts, axis=1).to_numpy(dtype=float)
    # Standardize the indicators too (as the Adult benchmark does).
    sd = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


def load_compas():
    """ProPublica's two-year recidivism file with its usual filters; groups: race (6)."""
    df = pd.read_csv(os.path.join(DATA, "compas-scores-two-years.csv.gz"))
    df = df[
        (df.days_b_screening_arrest <= 30)
        & (df.days_b_screening_arrest >= -30)
        & (df.is_recid != -1)
        & (df.c_charge_degree != "O")
        & (df.score_text != "N/A")
    ]
    X = _encode(
        df,
        ["c_charge_degree", "sex", "age_cat"],
        ["age", "priors_count", "juv_fel_count", "juv_misd_count", "juv_other_count"],
    )
    y = df.two_year_recid.to_numpy().astype(int)
    s = pd.factorize(df.race)[0]
    return X, y, s


def load_german():
    """Statlog German credit (1,000 rows); y = 1 good risk; groups: sex from A9x."""
    df = pd.read_csv(os.path.join(DATA, "german.data.gz"), sep=" ", header=None)
    numeric = [1, 4, 7, 10, 12, 15, 17]
    categorical = [c for c in range(20) if c not in numeric]
    X = _encode(df, categorical, numeric)
    y = (df[20] == 1).to_numpy().astype(int)
    s = df[8].isin(["A92", "A95"]).to_numpy().astype(int)
    return X, y, s


def make_synthetic(n, d, *, signal=1.0, seed=0):
    """Logistic data: ``P(y=1|x) = sigmoid(signal * x . w)``, ``||w|| = 1``, a group shifting x."""
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    X = rng.normal(size=(n, d)) + 0.5 * s[:, None] / np.sqrt(d)
    w = rng.normal(size=d)
    w /= np.linalg.norm(w)
    p = 1.0 / (1.0 + np.exp(-signal * 2.0 * (X @ w)))
    y = (rng.random(n) < p).astype(int)
    return X, y, s
