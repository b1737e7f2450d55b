# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Validation of privacy parameters and of declared public label sets."""

import warnings

import numpy as np

from ..exceptions import PrivacyLeakWarning

__all__ = ["check_delta_for_n", "resolve_classes"]

# Messages are constants so tests can match them exactly.
_CLASSES_INFERRED = (
    "classes was not given, so the label set was read from the private y. "
    "The label set (including which rare labels occur) is then not covered by "
    "the differential privacy guarantee. Pass classes=[...] to declare it."
)


def check_delta_for_n(delta, n_samples):
    """Warn when ``delta >= 1/n``: such a delta allows publishing a record outright."""
    if delta * n_samples >= 1.0:
        warnings.warn(
            f"delta={delta:g} is not smaller than 1/n_samples={1 / n_samples:g}; "
            "a mechanism with this delta may reveal an entire record. Use "
            "delta well below 1/n (for example 1/n^1.1 or 1e-5 for n < 1e5).",
            UserWarning,
            stacklevel=3,
        )


def resolve_classes(classes, y):
    """Return ``(classes_, y_encoded, caveats)`` for a classifier.

    If ``classes`` is declared, it is the public label set: labels of ``y``
    outside it raise ``ValueError``, and classes absent from ``y`` are kept
    (``np.unique(y)`` is never consulted for the order). Otherwise the label
    set is inferred from ``y`` with a :class:`PrivacyLeakWarning`.
    """
    caveats = []
    if classes is not None:
        classes_ = np.asarray(classes)
        if classes_.ndim != 1 or classes_.size < 2:
            raise ValueError(
                "classes must be a 1-d array-like of at least two labels; got "
                f"{classes!r}."
            )
        if np.unique(classes_).size != classes_.size:
            raise ValueError(f"classes contains duplicate labels: {classes!r}.")
        order = np.argsort(classes_, kind="stable")
        sorted_classes = classes_[order]
        pos = np.searchsorted(sorted_classes, y)
        pos = np.clip(pos, 0, sorted_classes.size - 1)
        unknown = sorted_classes[pos] != y
        if np.any(unknown):
            raise ValueError(
                "y contains labels that are not in the declared classes: "
                f"{np.unique(y[unknown])[:10].tolist()}."
            )
        return classes_, order[pos], caveats

    warnings.warn(_CLASSES_INFERRED, PrivacyLeakWarning, stacklevel=3)
    caveats.append("label set inferred from the private data")
    classes_, y_encoded = np.unique(y, return_inverse=True)
    if classes_.size < 2:
        raise ValueError(
            "y contains only one class "
            f"({classes_[0]!r}); a classifier needs at least two. Declare the "
            "label set with classes=[...] if other labels are possible."
        )
    return classes_, y_encoded, caveats
