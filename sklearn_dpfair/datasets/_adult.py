# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""UCI Adult (Census Income), bundled so that examples and tests run offline."""

import gzip
from importlib import resources

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

__all__ = ["load_adult"]

_COLUMNS = [
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
]
_NUMERIC = [
    "age",
    "fnlwgt",
    "education-num",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
]
_SENSITIVE = ["sex", "race"]
_FILES = {"train": "adult.data.gz", "test": "adult.test.gz"}


def _read(filename):
    path = resources.files("sklearn_dpfair.datasets").joinpath("data", filename)
    with path.open("rb") as raw, gzip.open(raw, "rt") as fh:
        frame = pd.read_csv(
            fh,
            header=None,
            names=_COLUMNS,
            sep=",",
            skipinitialspace=True,
            na_values="?",
            comment="|",  # adult.test starts with "|1x3 Cross validator"
        )
    frame = frame.dropna(how="all")
    # The test file writes labels with a trailing dot (">50K.").
    frame["income"] = frame["income"].str.rstrip(".")
    return frame


def _check_flags(**flags):
    """Refuse a flag that is not a bool (``as_frame="no"`` would read as True)."""
    for name, value in flags.items():
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"{name} must be True or False; got {value!r}.")


def load_adult(
    *, subset="train", as_frame=True, return_X_y=False, dropna=True, drop_sensitive=True
):
    """Load the UCI Adult census income dataset (binary: income > 50K).

    The files ``adult.data`` (32,561 rows) and ``adult.test`` (16,281 rows)
    from the UCI repository are shipped inside the package. The sensitive
    attributes ``sex`` and ``race`` are returned separately, fairlearn style.

    Parameters
    ----------
    subset : {"train", "test", "all"}, default="train"
        Which of the two official files to load.
    as_frame : bool, default=True
        Return pandas objects (categorical columns as ``category`` dtype).
        If False, ``data`` is a numpy object array.
    return_X_y : bool, default=False
        Return ``(X, y)`` instead of a Bunch (use the Bunch to get the
        sensitive attributes).
    dropna : bool, default=True
        Drop the rows with a missing value (``?`` in the raw files).
    drop_sensitive : bool, default=True
        Remove ``sex`` and ``race`` from ``data`` (they stay in
        ``sensitive``).

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data`` (features), ``target`` (1 if income > 50K),
        ``sensitive`` (DataFrame with ``sex`` and ``race``), ``feature_names``,
        ``categorical_features``, ``numeric_features``, ``frame`` (the whole
        table as a DataFrame; None when ``as_frame`` is False, as in
        scikit-learn's loaders), ``DESCR``.
    (X, y) : tuple
        If ``return_X_y`` is True.

    Examples
    --------
    >>> from sklearn_dpfair.datasets import load_adult
    >>> adult = load_adult()
    >>> adult.data.shape, adult.sensitive.columns.tolist()
    ((30162, 12), ['sex', 'race'])
    >>> round(float(adult.target.mean()), 3)
    0.249
    """
    if subset not in ("train", "test", "all"):
        raise ValueError(f"subset must be 'train', 'test' or 'all'; got {subset!r}.")
    _check_flags(
        as_frame=as_frame,
        return_X_y=return_X_y,
        dropna=dropna,
        drop_sensitive=drop_sensitive,
    )
    names = ["train", "test"] if subset == "all" else [subset]
    frame = pd.concat([_read(_FILES[name]) for name in names], ignore_index=True)
    if dropna:
        frame = frame.dropna().reset_index(drop=True)
    for col in frame.columns:
        if col not in _NUMERIC:
            frame[col] = frame[col].astype("category")
    target = (frame["income"] == ">50K").astype(np.int64).rename("income")
    sensitive = frame[_SENSITIVE].copy()
    feature_cols = [c for c in _COLUMNS[:-1] if not (drop_sensitive and c in _SENSITIVE)]
    X = frame[feature_cols]
    if not as_frame:
        X, target, sensitive = X.to_numpy(), target.to_numpy(), sensitive.to_numpy()
        frame = None
    if return_X_y:
        return X, target
    descr = resources.files("sklearn_dpfair.datasets").joinpath(
        "data", "adult.names"
    ).read_text()
    return Bunch(
        data=X,
        target=target,
        sensitive=sensitive,
        frame=frame,
        feature_names=feature_cols,
        categorical_features=[c for c in feature_cols if c not in _NUMERIC],
        numeric_features=[c for c in feature_cols if c in _NUMERIC],
        DESCR=descr,
    )
