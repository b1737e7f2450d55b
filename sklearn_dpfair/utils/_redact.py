# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Error messages of third-party validation that would echo private values.

A private fit validates its input with scikit-learn and numpy, whose
messages sometimes print the offending data: ``check_array`` prints a 1-D
``X`` whole ("Expected 2D array, got 1D array instead: array=[...]"), and a
string that does not parse as a number is quoted ("could not convert string
to float: 'x'"). Such a message leaves the fit in tracebacks and logs, where
the guarantee does not reach. The fit's wrapper
(:func:`sklearn_dpfair._base._releases_checked`) passes every such message
through :func:`redact_private_values` before it leaves ``fit``; the messages
this package writes itself never print a private value. Code that validates
rows where the fit's wrapper does not run (a Dask worker, whose scheduler
logs every failed task's exception) redacts there
(:func:`redacting_errors`).

The value a number-parsing message quotes is its only locator; once it is
removed, the redacted message names the argument that held it instead
("Input y: could not convert string to float: ..."), read from the
validation that raised (:func:`_validated_input`).
"""

import functools
import re

__all__ = ["redact_private_values", "redacted_error", "redacting_errors"]

_NOT_SHOWN = "(not shown: private values)"

_PATTERNS = (
    # sklearn.utils.check_array on 1-D or scalar input.
    (re.compile(r"array=.*?\.\n(?=Reshape)", re.S), f"array={_NOT_SHOWN}.\n"),
    # sklearn.utils.check_array on complex input prints the array.
    (
        re.compile(r"Complex data not supported\n.*", re.S),
        f"Complex data not supported: {_NOT_SHOWN}.",
    ),
    # numpy and Python number parsing.
    (
        re.compile(
            r"(could not convert string to (?:float|int|complex)"
            r"|invalid literal for \w+\(\) with base \d+): .+"
        ),
        rf"\1: {_NOT_SHOWN}",
    ),
    # numpy's dtype conversion of a torch tensor prints the tensor.
    (
        re.compile(r"Could not convert tensor\(.*?\) to a NumPy dtype", re.S),
        f"Could not convert a tensor {_NOT_SHOWN} to a NumPy dtype",
    ),
    # scikit-learn's label checks (unique_labels, behind the metrics) print
    # the labels of both columns, or the columns themselves.
    (
        re.compile(r"(Mix of label input types \(string and number\));? Got .*", re.S),
        rf"\1: {_NOT_SHOWN}",
    ),
    (
        re.compile(r"Unknown label type: \((?:array|\[).*", re.S),
        f"Unknown label type: {_NOT_SHOWN}",
    ),
    # scikit-learn's encoders with declared categories and
    # handle_unknown="error" list the undeclared values they found.
    (
        re.compile(r"Found unknown categories .+? (in column \d+ during \w+)", re.S),
        rf"Found unknown categories {_NOT_SHOWN} \1",
    ),
)


def redact_private_values(message, what=None):
    """``message`` with the private values known messages print replaced.

    Parameters
    ----------
    message : str
    what : str, default=None
        Name of the argument that held the values (``"X"``, ``"y"``): where
        a value is removed, the message is prefixed with ``"Input {what}: "``
        so that it still says where the offending value is.

    Returns
    -------
    redacted : str
        The same text where no pattern matched.

    Examples
    --------
    >>> from sklearn_dpfair.utils._redact import redact_private_values
    >>> redact_private_values("could not convert string to float: 'Alice'")
    'could not convert string to float: (not shown: private values)'
    >>> redact_private_values(
    ...     "Found unknown categories ['Alice'] in column 0 during fit")
    'Found unknown categories (not shown: private values) in column 0 during fit'
    >>> print(redact_private_values(
    ...     "Expected 2D array, got 1D array instead:\\narray=[52. 17.].\\n"
    ...     "Reshape your data either using array.reshape(-1, 1)"))
    Expected 2D array, got 1D array instead:
    array=(not shown: private values).
    Reshape your data either using array.reshape(-1, 1)
    >>> redact_private_values(
    ...     "Mix of label input types (string and number); Got ['a' 'b'] and [0 1].")
    'Mix of label input types (string and number): (not shown: private values)'
    >>> redact_private_values("could not convert string to float: 'n/a'", what="y")
    'Input y: could not convert string to float: (not shown: private values)'
    """
    redacted = message
    for pattern, replacement in _PATTERNS:
        redacted = pattern.sub(replacement, redacted)
    if what and redacted != message:
        redacted = f"Input {what}: {redacted}"
    return redacted


# scikit-learn's validation functions whose frames say which input they
# check: check_array by its ``input_name`` parameter (which check_X_y,
# column_or_1d and _check_sample_weight set), _check_y by being y's.
_VALIDATION_MODULE = "sklearn.utils.validation"


def _validated_input(traceback):
    """Name of the input scikit-learn was validating where ``traceback`` ends.

    The innermost frame of :func:`sklearn.utils.check_array` that names its
    input (``input_name``), or of ``sklearn.utils.validation._check_y``
    (``"y"``, whose conversion of an object ``y`` to float runs outside
    check_array), or None: the error did not come from that validation,
    and the message is then left without a locator. Only the parameter's
    name is read, never the data.
    """
    name = None
    while traceback is not None:
        frame = traceback.tb_frame
        if frame.f_globals.get("__name__") == _VALIDATION_MODULE:
            function = frame.f_code.co_name
            if function == "_check_y":
                name = "y"
            elif function == "check_array":
                given = frame.f_locals.get("input_name")
                if isinstance(given, str) and given.isidentifier():
                    name = given
        traceback = traceback.tb_next
    return name


def redacted_error(exc):
    """An exception like ``exc`` whose message is redacted, or None if unchanged.

    Its type is ``exc``'s where that type takes a message alone, else the
    nearest of ValueError and TypeError. Where ``exc`` was raised while
    scikit-learn validated a named input (``X``, ``y``, ``sample_weight``),
    the redacted message names it.
    """
    message = str(exc)
    redacted = redact_private_values(
        message, what=_validated_input(exc.__traceback__)
    )
    if redacted == message:
        return None
    try:
        return type(exc)(redacted)
    except Exception:
        return (TypeError if isinstance(exc, TypeError) else ValueError)(redacted)


def redacting_errors(func):
    """``func``, raising a redacted copy of any ``ValueError``/``TypeError``.

    For functions that validate private rows away from the fit's wrapper: on
    a Dask worker, ``distributed`` logs a failed task's exception where it
    is raised, before the driver sees it.

    Examples
    --------
    >>> from sklearn_dpfair.utils._redact import redacting_errors
    >>> @redacting_errors
    ... def parse(value):
    ...     return float(value)
    >>> parse("Alice")
    Traceback (most recent call last):
    ...
    ValueError: could not convert string to float: (not shown: private values)
    """

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except (ValueError, TypeError) as exc:
            redacted = redacted_error(exc)
            if redacted is None:
                raise
        # Outside the handler: the original, chained, would print the values.
        raise redacted

    return wrapper
