# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""FERMI and DP-FERMI solvers: stochastic gradient descent-ascent on the ERMI objective.

Thesis Algorithms 9 (FERMI) and 10 (DP-FERMI): the fit (:mod:`._fit`), its
privacy set-up (:mod:`._privacy`), the (noisy) SGDA loop (:mod:`._sgda`) and
the full-batch L-BFGS phase (:mod:`._lbfgs`).
"""
