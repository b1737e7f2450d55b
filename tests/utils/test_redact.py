# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Third-party error messages that would print private values, redacted."""

import numpy as np
import pytest
from sklearn.utils.validation import _check_sample_weight, check_array, check_X_y

from sklearn_dpfair.utils._redact import (
    redact_private_values,
    redacted_error,
    redacting_errors,
)


def _message_of(call):
    with pytest.raises((ValueError, TypeError)) as info:
        call()
    return str(info.value)


def test_check_array_on_one_column_prints_no_value():
    raw = _message_of(lambda: check_array(np.array([4242.5, 4243.5])))
    assert "4242.5" in raw  # scikit-learn's own message prints the rows
    redacted = redact_private_values(raw)
    assert "4242" not in redacted
    assert redacted.startswith("Expected 2D array, got 1D array instead")
    assert "Reshape your data" in redacted


def test_check_array_on_complex_input_prints_no_value():
    raw = _message_of(lambda: check_array(np.array([[4242.5 + 0j], [1.0 + 0j]])))
    assert "4.2425e+03" in raw
    redacted = redact_private_values(raw)
    assert "4.2425" not in redacted and redacted.startswith("Complex data not")


@pytest.mark.parametrize(
    "call",
    [
        lambda: np.array(["1.5", "Alice Smith"]).astype(float),
        lambda: float("Alice Smith"),
        lambda: int("Alice Smith"),
    ],
)
def test_unparsable_strings_are_not_quoted(call):
    raw = _message_of(call)
    assert "Alice" in raw
    assert "Alice" not in redact_private_values(raw)


@pytest.mark.parametrize("encoder", ["OneHotEncoder", "OrdinalEncoder"])
def test_undeclared_categories_are_not_listed(encoder):
    import sklearn.preprocessing

    est = getattr(sklearn.preprocessing, encoder)(categories=[["a", "b"]])
    raw = _message_of(lambda: est.fit(np.array([["a"], ["Alice Smith"]])))
    assert "Alice" in raw
    redacted = redact_private_values(raw)
    assert "Alice" not in redacted
    assert redacted.startswith("Found unknown categories")
    assert redacted.endswith("in column 0 during fit")


def test_a_tensor_numpy_cannot_convert_is_not_printed():
    torch = pytest.importorskip("torch")
    X = torch.asarray(np.array([[4242.5, 1.0], [2.0, 3.0]]))
    raw = _message_of(lambda: np.result_type(X, np.ones(2)))
    assert "4.2425e+03" in raw
    redacted = redact_private_values(raw)
    assert "4.2425" not in redacted and "to a NumPy dtype" in redacted


def test_other_messages_pass_unchanged():
    message = "Input X contains NaN.\nDPLogisticRegression does not accept it."
    assert redact_private_values(message) == message
    assert redacted_error(ValueError(message)) is None


def test_redacted_error_keeps_the_type_where_it_can():
    error = redacted_error(TypeError("could not convert string to float: 'x'"))
    assert type(error) is TypeError and "'x'" not in str(error)

    class Picky(ValueError):
        def __init__(self, a, b):
            super().__init__(f"could not convert string to float: {a}{b}")

    error = redacted_error(Picky("'se", "cret'"))
    assert type(error) is ValueError and "secret" not in str(error)


def test_redacting_errors_raises_the_redacted_copy_alone():
    # On a Dask worker the task's exception is logged as raised: neither it
    # nor a chained original may quote the value.
    @redacting_errors
    def parse(value):
        return float(value)

    with pytest.raises(ValueError) as info:
        parse("Alice Smith")
    assert "Alice" not in str(info.value)
    assert info.value.__context__ is None and info.value.__cause__ is None
    assert parse("2.5") == 2.5

    @redacting_errors
    def refuse():
        raise ValueError("X has 3 features; expected 2.")

    with pytest.raises(ValueError, match="X has 3 features"):
        refuse()


def _raised(call):
    with pytest.raises((ValueError, TypeError)) as info:
        call()
    return info.value


@pytest.mark.parametrize("where", ["X", "y", "sample_weight"])
def test_a_redacted_parsing_error_names_the_input_that_held_the_value(where):
    # The quoted value was the message's only locator: once removed, the
    # message names the argument scikit-learn was validating instead.
    X = np.ones((3, 2), dtype=object)
    y = np.ones(3, dtype=object)
    w = np.ones(3, dtype=object)
    {"X": X[1], "y": y, "sample_weight": w}[where][1] = "Alice Smith"
    if where == "sample_weight":
        exc = _raised(lambda: _check_sample_weight(w, X))
    else:
        exc = _raised(lambda: check_X_y(X, y, y_numeric=True))
    error = redacted_error(exc)
    assert "Alice" not in str(error)
    assert str(error) == (
        f"Input {where}: could not convert string to float: "
        "(not shown: private values)"
    )


def test_an_error_outside_scikit_learn_validation_is_not_located():
    error = redacted_error(_raised(lambda: float("Alice Smith")))
    assert str(error) == (
        "could not convert string to float: (not shown: private values)"
    )


def test_mixed_label_types_are_not_listed():
    # scikit-learn's unique_labels (behind accuracy_score and the metrics)
    # prints the labels of both columns (from scikit-learn 1.7; 1.6 names
    # the mix only, or accepts it).
    message = (
        "Mix of label input types (string and number); "
        "Got ['0' '1' 'SECRET_LABEL'] and [0 1]."
    )
    assert redact_private_values(message) == (
        "Mix of label input types (string and number): (not shown: private values)"
    )
    assert redact_private_values("Unknown label type: (array([1.5, 'SECRET'],)") == (
        "Unknown label type: (not shown: private values)"
    )
    assert redact_private_values("Unknown label type: 'continuous'. Maybe") == (
        "Unknown label type: 'continuous'. Maybe"
    )
