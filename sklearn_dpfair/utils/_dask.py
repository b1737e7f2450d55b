# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Dask collections as inputs: recognised without importing Dask, or refused.

Only the fits that run on the workers (``DPLogisticRegression`` with
``solver="dp-sgd"`` and ``DPFERMIClassifier``) take Dask collections; every
other fit refuses them rather than gather the rows onto the driver.
"""

import sys

__all__ = ["is_dask_collection", "refuse_dask_beside_in_memory_x", "refuse_dask_input"]


def is_dask_collection(obj):
    """Whether ``obj`` is a Dask collection (without importing Dask).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.utils._dask import is_dask_collection
    >>> is_dask_collection(np.zeros(3))
    False
    """
    dask = sys.modules.get("dask")
    if dask is None:
        # Nothing can be a Dask collection before Dask was imported.
        return False
    from dask.base import is_dask_collection as _is_collection

    return bool(_is_collection(obj))


_DASK_REFUSED = (
    "{name} does not accept Dask collections ({what}): it would gather them "
    "onto the driver. DPLogisticRegression (solver='dp-sgd') and "
    "DPFERMIClassifier fit Dask arrays and DataFrames on their workers; "
    "otherwise compute the collection first (e.g. X.compute())."
)


_DASK_BESIDE_IN_MEMORY_X = (
    "{name} fits Dask collections on their workers only when X is one: "
    "{what} {verb} a Dask collection while X is in memory, and the fit would "
    "gather {pronoun} onto the driver. Pass X as a Dask array or DataFrame "
    "too, or compute {what} first (e.g. {first}.compute())."
)


def _dask_inputs(inputs):
    """Names of the ``inputs`` that are Dask collections, in their order."""
    return [key for key, value in inputs.items() if is_dask_collection(value)]


def refuse_dask_beside_in_memory_x(name, **inputs):
    """Raise ``TypeError`` if an input beside an in-memory ``X`` is a Dask collection.

    For the estimators that fit Dask collections on their workers when
    ``X`` is one: with ``X`` in memory their fit runs in this process and
    would pull a Dask ``y``, ``sample_weight`` or ``sensitive_features``
    onto the driver through ``np.asarray``. The message names them.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.utils._dask import refuse_dask_beside_in_memory_x
    >>> refuse_dask_beside_in_memory_x("DPLogisticRegression", y=np.zeros(2))
    """
    found = _dask_inputs(inputs)
    if found:
        raise TypeError(
            _DASK_BESIDE_IN_MEMORY_X.format(
                name=name,
                what=", ".join(found),
                verb="is" if len(found) == 1 else "are",
                pronoun="it" if len(found) == 1 else "them",
                first=found[0],
            )
        )


def refuse_dask_input(name, **inputs):
    """Raise ``TypeError`` if an input of estimator ``name`` is a Dask collection.

    For the estimators whose fit would pull a Dask collection onto the
    driver through ``np.asarray``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.utils._dask import refuse_dask_input
    >>> refuse_dask_input("FERMIClassifier", X=np.zeros((2, 1)), y=None)
    """
    found = _dask_inputs(inputs)
    if found:
        raise TypeError(_DASK_REFUSED.format(name=name, what=", ".join(found)))
