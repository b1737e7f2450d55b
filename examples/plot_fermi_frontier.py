"""
=====================================================================
Accuracy-fairness frontier: FERMI, DP-FERMI and ExponentiatedGradient
=====================================================================

Test error against the demographic-parity gap on UCI Adult (sensitive
attribute: sex) for

* unconstrained logistic regression,
* :class:`~sklearn_dpfair.FERMIClassifier` asked for a training
  demographic-parity gap (``disparity_bound``: it chooses its fairness
  weight itself),
* :class:`~sklearn_dpfair.DPFERMIClassifier` at several privacy budgets
  (record-level differential privacy, delta = 1e-5), choosing its weight
  privately inside the same budget, and
* fairlearn's ``ExponentiatedGradient`` reduction with logistic regression.

A subsample of the training file (and fewer ExponentiatedGradient rounds)
keep the example short; the full-data numbers are in the benchmark
``benchmarks/bench_fermi.py`` and ``docs/benchmarks/fermi.rst``.
"""

# %%
import warnings

import matplotlib.pyplot as plt
import numpy as np
from fairlearn.metrics import demographic_parity_difference
from fairlearn.reductions import DemographicParity, ExponentiatedGradient
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from sklearn_dpfair import DPFERMIClassifier, FERMIClassifier
from sklearn_dpfair.datasets import load_adult

train, test = load_adult(subset="train"), load_adult(subset="test")
rows = np.random.default_rng(0).choice(len(train.target), 6_000, replace=False)
prep = ColumnTransformer(
    [
        ("num", StandardScaler(), train.numeric_features),
        (
            "cat",
            OneHotEncoder(handle_unknown="ignore", sparse_output=False),
            train.categorical_features,
        ),
    ]
)
X = prep.fit_transform(train.data.iloc[rows])
y, A = (
    train.target.to_numpy()[rows],
    train.sensitive["sex"].astype(str).to_numpy()[rows],
)
X_test, y_test = prep.transform(test.data), test.target.to_numpy()
A_test = test.sensitive["sex"].astype(str).to_numpy()


def point(pred):
    return (
        demographic_parity_difference(y_test, pred, sensitive_features=A_test),
        np.mean(pred != y_test),
    )


# %%
# Fit everything. Each FERMI marker is one requested training gap.
bounds = [0.1, 0.05, 0.02, 0.01]
curves = {}
curves["FERMI"] = [
    point(
        FERMIClassifier(disparity_bound=bound, random_state=0)
        .fit(X, y, sensitive_features=A)
        .predict(X_test)
    )
    for bound in bounds
]
for eps in (0.5, 1.0, 3.0):
    curves[f"DP-FERMI, eps={eps:g}"] = [
        point(
            DPFERMIClassifier(
                epsilon=eps,
                delta=1e-5,
                disparity_bound=bound,
                batch_size=512,
                max_iter=20,
                classes=[0, 1],
                groups=["Female", "Male"],
                random_state=0,
            )
            .fit(X, y, sensitive_features=A)
            .predict(X_test)
        )
        for bound in bounds[1::2]
    ]
plain = point(LogisticRegression(max_iter=1000).fit(X, y).predict(X_test))
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    # Fewer reduction rounds than the default 50 and the liblinear solver (fast
    # on reweighted small problems) keep the example short.
    eg = ExponentiatedGradient(
        LogisticRegression(solver="liblinear"), DemographicParity(), max_iter=10
    )
    eg.fit(X, y, sensitive_features=A)
eg_point = point(eg.predict(X_test, random_state=0))

# %%
# The frontier: lower left is better. Each marker of a curve is one bound.
# Points can coincide (DP-FERMI at eps=3 lands on ExponentiatedGradient's
# point): the single points are large hollow markers drawn below the curves'
# small filled ones, so a marker inside another shows both.
fig, ax = plt.subplots(figsize=(6.5, 4.5))
for (name, pts), marker in zip(curves.items(), "osv^"):
    gaps, errors = zip(*pts)
    ax.plot(gaps, errors, marker=marker, markersize=5, label=name, zorder=3)
ax.plot(*plain, "kX", markersize=12, markerfacecolor="none", zorder=2,
        label="LogisticRegression (unconstrained)")
# Purple: the curves take the first four default colours (red is eps=3's).
ax.plot(*eg_point, "*", color="tab:purple", markersize=20, markerfacecolor="none",
        markeredgewidth=1.5, zorder=2, label="ExponentiatedGradient")
ax.set_xlabel("demographic parity difference (test)")
ax.set_ylabel("test error")
ax.set_title("Adult: accuracy-fairness frontier")
ax.legend(fontsize=8)
fig.tight_layout()
