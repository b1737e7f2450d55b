# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Empirical privacy audits: can a test tell a canary's presence apart?

An audit builds two neighbouring datasets that differ in one *canary* record
(:func:`make_neighbours`), runs the mechanism or fits the estimator many times
on each (:func:`audit_mechanism`, :func:`audit_estimator`), and turns the
errors of a distinguishing test into a Clopper-Pearson lower bound on epsilon
at a stated confidence (:func:`audit_scores`). A bound above the claimed
epsilon refutes the claim; a bound below it means only that this audit found
no violation, and only when the audit was *conclusive*: its
``epsilon_ceiling`` (the bound a test with no error at all would give with
this many runs) must exceed the claim. The same audit flags deliberately
broken variants (halved noise, clipping disabled), which is how its power is
checked.

:func:`audit_gradient_canary` is the white-box audit of the DP-SGD-type
solvers: a crafted gradient (a Dirac canary) inserted into every noisy step
and observed there (Nasr et al., 2023), with far more power per fit than a
canary record seen through the final model.
"""

from ._audit import audit_estimator, audit_mechanism, canary_statistic
from ._bounds import clopper_pearson, epsilon_ceiling, epsilon_from_error_bounds
from ._distinguish import audit_scores
from ._gradient_canary import (
    audit_gradient_canary,
    canary_allocation_log_likelihood_ratio,
    canary_log_likelihood_ratio,
)
from ._neighbours import Dataset, Neighbours, make_canary, make_neighbours
from ._result import AuditResult

__all__ = [
    "AuditResult",
    "Dataset",
    "Neighbours",
    "audit_estimator",
    "audit_gradient_canary",
    "audit_mechanism",
    "audit_scores",
    "canary_allocation_log_likelihood_ratio",
    "canary_log_likelihood_ratio",
    "canary_statistic",
    "clopper_pearson",
    "epsilon_ceiling",
    "epsilon_from_error_bounds",
    "make_canary",
    "make_neighbours",
]
