"""
=======================================
The privacy cost of a grid search
=======================================

Every fit on the private data spends privacy budget, not only the one whose
model is finally released. A :class:`~sklearn.model_selection.GridSearchCV`
over 6 candidates with 3-fold cross-validation fits 19 models (18 fold fits
and the refit); if each is (1, 1e-5)-DP, what is the search as a whole?

A :class:`~sklearn_dpfair.privacy.PrivacyLedger` answers part of it. Passed
as the ``accountant`` of the estimator, it is shared by every clone the search
makes (``clone`` returns the same ledger, never a copy), records the
``dp_event_`` of each fit, including fits run in worker processes, and
composes them with dp-accounting. That is the cost of the *training* fits
only: the search also scores every fold model without noise on private
held-out rows and selects with those scores, and neither the selection nor
``cv_results_`` is covered by any accounted fit.

This example compares, at the same total budget, (a) the default
hyperparameters, (b) the naive ``GridSearchCV`` (each fit at that budget;
true total unknown) and (c)
:class:`~sklearn_dpfair.model_selection.PrivateHyperparameterSearch`, whose
guarantee covers training, scoring, selection and the returned model.
"""

# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause

# %%
# A private model and a ledger
# ----------------------------
# Synthetic data keep the example fast; nothing below depends on it. The
# label set is declared (``classes``), so it is not read from the data.
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_classification
from sklearn.model_selection import GridSearchCV, train_test_split

from sklearn_dpfair import DPLogisticRegression
from sklearn_dpfair.model_selection import PrivateHyperparameterSearch
from sklearn_dpfair.privacy import PrivacyLedger

X, y = make_classification(
    n_samples=12_000, n_features=20, n_informative=8, random_state=0
)
# The test rows stand for future data: they only measure the released model.
X, X_test, y, y_test = train_test_split(X, y, test_size=2_000, random_state=0)
ledger = PrivacyLedger(kind="rdp")
clf = DPLogisticRegression(epsilon=1.0, delta=1e-5, classes=[0, 1], accountant=ledger)

# %%
# Tune it
# -------
# Six candidates (clip norm x number of epochs), three folds.
grid = {"clip_norm": [0.1, 1.0, 10.0], "max_iter": [5, 20]}
search = GridSearchCV(clf, grid, cv=3, n_jobs=2).fit(X, y)
print("best parameters:", search.best_params_)
# This score is computed without noise on private held-out rows: releasing
# it (or cv_results_) is a further, unaccounted release.
print(f"best cross-validated accuracy: {search.best_score_:.3f}")

# %%
# What the search spent
# ---------------------
# Each fit is (1, 1e-5)-DP; the whole search is not. The ledger composes the
# 19 recorded training events with the RDP accountant, which is far tighter
# than adding the epsilons up, but still a multiple of the per-fit budget;
# and it is only a lower bound on what the search released, because the
# noiseless validation scores and the selection are not recorded events.
print(ledger.summary())
per_fit = [entry.epsilon for entry in ledger.entries]

# %%
# The total as the search proceeds
# --------------------------------
# Composing the first k recorded fits, for k = 1 .. 19, shows how the cost
# grows: roughly like sqrt(k) under RDP composition, against k for the naive
# sum of the per-fit epsilons.
totals = []
for k in range(1, len(ledger) + 1):
    partial = PrivacyLedger(kind="rdp")
    for entry in ledger.entries[:k]:
        partial.record(entry.dp_event, delta=entry.delta)
    totals.append(partial.total_epsilon())

k = np.arange(1, len(totals) + 1)
fig, ax = plt.subplots(figsize=(6, 4))
ax.plot(k, np.cumsum(per_fit), "o--", label="sum of per-fit epsilons")
ax.plot(k, totals, "o-", label="training fits composed (RDP), selection not included")
ax.axhline(1.0, color="grey", lw=1, label="the budget of one fit")
ax.set_xlabel("number of fits on the private data")
ax.set_ylabel("total epsilon at delta = 1e-5")
ax.set_title("Cost of a 6-candidate, 3-fold grid search")
ax.legend()
fig.tight_layout()

# %%
# The same budget, three ways
# ---------------------------
# (a) The defaults: one fit at epsilon = 1, nothing else released.
# (b) The naive search above: each fit at epsilon = 1; its training fits
#     alone compose to the ledger's total, and its selection is on top.
# (c) A private search at *total* epsilon = 1: Papernot and Steinke's
#     selection with a random number of runs, each a uniformly chosen
#     candidate trained with a calibrated share of the budget and scored with
#     Gaussian noise on a validation split; only the best run is released.
defaults = DPLogisticRegression(epsilon=1.0, classes=[0, 1]).fit(X, y)
private = PrivateHyperparameterSearch(
    DPLogisticRegression(classes=[0, 1]), grid, epsilon=1.0, delta=1e-5
).fit(X, y)
print("private search chose", private.best_params_)
print(f"each of its runs was trained with epsilon = {private.run_epsilon_:.3f}")
print(private.privacy_summary())

methods = {
    "(a) defaults": (defaults.epsilon_, defaults.score(X_test, y_test)),
    "(b) GridSearchCV": (ledger.total_epsilon(), search.score(X_test, y_test)),
    "(c) private search": (private.epsilon_, private.score(X_test, y_test)),
}
for name, (eps, acc) in methods.items():
    print(f"{name:20s} total epsilon {eps:6.2f}  test accuracy {acc:.3f}")

fig, ax = plt.subplots(figsize=(6, 3.5))
names = list(methods)
totals = [methods[name][0] for name in names]
bars = ax.bar(names, totals, color=["C0", "C3", "C2"])
ax.bar_label(
    bars,
    labels=[
        f"{methods[n][0]:.2f}" + (" + selection" if n.startswith("(b)") else "")
        + f"\nacc {methods[n][1]:.3f}"
        for n in names
    ],
)
ax.set_ylabel("total epsilon at delta = 1e-5")
ax.set_title("What each method releases for one model")
ax.set_ylim(0, max(totals) * 1.35)
fig.tight_layout()

# %%
# What to do with it
# ------------------
# * Report the total, not the per-fit epsilon, when the selected model is
#   released after tuning on the same private data; for a ``GridSearchCV``
#   even the ledger's total leaves out the selection and ``cv_results_``.
# * Prefer the defaults, or tune on public or synthetic data and fit once on
#   the private data.
# * If you must tune on the private data, use
#   :class:`~sklearn_dpfair.model_selection.PrivateHyperparameterSearch`:
#   one budget for everything it releases.
