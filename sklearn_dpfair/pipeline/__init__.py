# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Private pipelines: one (epsilon, delta) for the preprocessing and the model.

:class:`PrivatePipeline` splits its budget over its private steps before any
row is read, composes their planned events into one ``dp_event_`` and checks
after the fit that every step released what it planned.
"""

from ._pipeline import PrivatePipeline, make_private_pipeline

__all__ = ["PrivatePipeline", "make_private_pipeline"]
