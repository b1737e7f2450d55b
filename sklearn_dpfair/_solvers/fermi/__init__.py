# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""FERMI and DP-FERMI solvers (Lowy et al., 2023): stochastic gradient descent-ascent on the ERMI objective."""
