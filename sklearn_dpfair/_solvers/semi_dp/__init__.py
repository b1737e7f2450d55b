# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Semi-private linear regression: private solvers preconditioned and tuned on public rows."""
