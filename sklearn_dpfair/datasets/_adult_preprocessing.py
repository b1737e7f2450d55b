# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Preprocessing of UCI Adult from public information only.

A :class:`~sklearn.preprocessing.StandardScaler` or a data-driven
:class:`~sklearn.preprocessing.OneHotEncoder` fit on private rows publishes
their means, spreads and category sets, none of which a differential privacy
guarantee covers. This transformer learns nothing from the rows: categories
come from the codebook ``adult.names`` (shipped with the package) and numeric
columns are scaled by documented census ranges.
"""

from importlib import resources

import numpy as np
from sklearn.compose import make_column_transformer
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder

from ..utils._redact import redacting_errors

__all__ = ["make_adult_preprocessor"]

# Documented ranges of the census variables (Adult codebook and the Census
# Bureau's top-coding): ages 17-90, 16 education levels, hours top-coded at
# 99. Each is mapped to [-1, 1].
PUBLIC_RANGES = {"age": (17, 90), "education-num": (1, 16), "hours-per-week": (1, 99)}
# Capital amounts are top-coded at 99,999 and heavily skewed: log1p-scaled to
# [0, 1].
CAPITAL_COLUMNS = ("capital-gain", "capital-loss")
CAPITAL_TOP_CODE = 99_999


def codebook_categories():
    """Category lists of every categorical column, read from ``adult.names``.

    Returns
    -------
    schema : dict of str to list of str
        Column name to its categories, in codebook order.

    Examples
    --------
    >>> from sklearn_dpfair.datasets._adult_preprocessing import codebook_categories
    >>> codebook_categories()["sex"]
    ['Female', 'Male']
    """
    descr = (
        resources.files("sklearn_dpfair.datasets")
        .joinpath("data", "adult.names")
        .read_text()
    )
    schema = {}
    for line in descr.splitlines():
        name, sep, values = line.partition(": ")
        if sep and not line.startswith("|") and values.strip() != "continuous.":
            schema[name] = [v.strip() for v in values.strip().rstrip(".").split(",")]
    return schema


# The rows scaled here are private: numpy's parsing error quotes a cell that
# is not a number ("could not convert string to float: '...'"), so the
# message is redacted as in the package's own fits.
@redacting_errors
def _scale_public(frame):
    """The numeric columns mapped by their public ranges (one output each)."""
    ranged = [
        2 * (frame[col].to_numpy(float).clip(lo, hi) - lo) / (hi - lo) - 1
        for col, (lo, hi) in PUBLIC_RANGES.items()
    ]
    capital = [
        np.log1p(frame[col].to_numpy(float).clip(0, CAPITAL_TOP_CODE))
        / np.log1p(CAPITAL_TOP_CODE)
        for col in CAPITAL_COLUMNS
    ]
    return np.column_stack(ranged + capital)


def make_adult_preprocessor(categorical_features=None):
    """Column transformer for :func:`load_adult` frames that learns nothing.

    Numeric columns are mapped by public ranges (age, education-num and
    hours-per-week to [-1, 1]; capital gain and loss by ``log1p`` to [0, 1]);
    categorical columns are one-hot encoded over the codebook's categories
    (unknown values become all-zero rows); ``fnlwgt``, a survey weight, is
    dropped. Every output row has norm at most
    ``sqrt(5 + n_categorical_features)``, a public bound.

    Parameters
    ----------
    categorical_features : list of str, default=None
        Categorical columns to encode; by default those of
        ``load_adult().categorical_features`` (sex and race excluded).

    Returns
    -------
    preprocessor : sklearn.compose.ColumnTransformer
        Unfitted; fitting it only checks the columns. Once fitted, its
        ``get_feature_names_out`` names the numeric columns after their
        inputs and the one-hot columns after their categories.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.datasets import load_adult, make_adult_preprocessor
    >>> adult = load_adult()
    >>> X = make_adult_preprocessor().fit_transform(adult.data)
    >>> X.shape
    (30162, 97)
    >>> bool(np.linalg.norm(X, axis=1).max() <= np.sqrt(5 + 6))
    True
    >>> make_adult_preprocessor().fit(adult.data).get_feature_names_out()[:2]
    array(['functiontransformer__age', 'functiontransformer__education-num'],
          dtype=object)
    """
    schema = codebook_categories()
    if categorical_features is None:
        categorical_features = [
            "workclass",
            "education",
            "marital-status",
            "occupation",
            "relationship",
            "native-country",
        ]
    if isinstance(categorical_features, str):
        raise TypeError(
            "categorical_features must be a list of column names, got the "
            f"string {categorical_features!r}; pass [{categorical_features!r}]."
        )
    categorical_features = list(categorical_features)
    unknown = [col for col in categorical_features if col not in schema]
    if unknown:
        raise ValueError(
            f"categorical_features has columns {unknown} that are not categorical "
            f"columns of the Adult codebook; choose from {sorted(schema)}."
        )
    return make_column_transformer(
        (
            # One output column per input column, in the input's order.
            FunctionTransformer(_scale_public, feature_names_out="one-to-one"),
            [*PUBLIC_RANGES, *CAPITAL_COLUMNS],
        ),
        (
            OneHotEncoder(
                categories=[schema[col] for col in categorical_features],
                handle_unknown="ignore",
                sparse_output=False,
            ),
            categorical_features,
        ),
    )
