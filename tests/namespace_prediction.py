# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""A model predicts in the namespace of its input, wherever it was fitted."""

import numpy as np
import sklearn


def check_prediction_follows_input(numpy_fit, torch_fit, X):
    """Check both directions: numpy model, torch input; torch model, numpy input.

    ``numpy_fit`` was fitted on numpy, ``torch_fit`` on torch tensors under
    array API dispatch (which the caller has on); ``X`` is a float64 numpy
    array. Before the model moved to its input, both raised "Multiple
    namespaces".
    """
    import torch

    expected = numpy_fit.predict_proba(X)
    for dtype, atol in ((torch.float64, 1e-12), (torch.float32, 1e-5)):
        proba = numpy_fit.predict_proba(torch.as_tensor(X, dtype=dtype))
        assert torch.is_tensor(proba) and proba.dtype == dtype
        np.testing.assert_allclose(proba.numpy(), expected, rtol=0, atol=atol)
    np.testing.assert_array_equal(
        np.asarray(numpy_fit.predict(torch.from_numpy(X))), numpy_fit.predict(X)
    )
    for dispatch_on in (True, False):
        with sklearn.config_context(array_api_dispatch=dispatch_on):
            proba = torch_fit.predict_proba(X)
            labels = torch_fit.predict(X)
        assert isinstance(proba, np.ndarray)
        np.testing.assert_allclose(
            proba, torch_fit.predict_proba(torch.from_numpy(X)).numpy(), atol=1e-12
        )
        np.testing.assert_array_equal(
            labels, np.asarray(torch_fit.predict(torch.from_numpy(X)))
        )
