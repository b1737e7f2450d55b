# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Heavy-tailed private regression solvers: clipped one-pass methods, localization and DP-SGD with private clip selection."""
