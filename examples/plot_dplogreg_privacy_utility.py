"""
==========================================================
Privacy-utility curve of DPLogisticRegression on UCI Adult
==========================================================

How much test accuracy does differential privacy cost? We fit
:class:`~sklearn_dpfair.linear_model.DPLogisticRegression` on the bundled UCI
Adult census data at privacy budgets from epsilon = 0.05 to 8 (delta = 1e-5)
and compare it with scikit-learn's non-private
:class:`~sklearn.linear_model.LogisticRegression` on the same features.

Two solvers are shown:

* ``"dp-sgd"`` (the default): noisy clipped minibatch SGD. It needs no bound
  on the data; only epsilon and delta are set.
* ``"output-perturbation"``: one exact L2-regularized solve, then Gaussian
  noise on the coefficients. It needs a public bound on the row norms and a
  regularization strength ``alpha``, which sets the noise.
"""

# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause

# %%
# Preprocessing from public information only
# -------------------------------------------
# Under differential privacy, anything the preprocessing learns from the
# training rows is outside the guarantee: a
# :class:`~sklearn.preprocessing.StandardScaler` would publish their means
# and standard deviations. So the features are
# prepared from public knowledge: the category lists of the Adult codebook
# (``adult.names``, shipped as ``DESCR``) and the documented ranges of the
# census variables (ages 17-90, 16 education levels, hours top-coded at 99,
# capital amounts top-coded at 99,999). ``fnlwgt`` is a survey weight, not an
# attribute of the person, and is dropped. Every row then has norm at most
# sqrt(11): five numeric features in [-1, 1] plus six one-hot blocks.
import numpy as np

from sklearn_dpfair.datasets import load_adult, make_adult_preprocessor

train = load_adult(subset="train")
test = load_adult(subset="test")
preprocess = make_adult_preprocessor()
# Nothing is learned here: the fit only checks the columns.
X_train = preprocess.fit_transform(train.data)
X_test = preprocess.transform(test.data)
y_train, y_test = train.target.to_numpy(), test.target.to_numpy()
ROW_NORM_BOUND = np.sqrt(5 + len(train.categorical_features))
print(f"{X_train.shape[0]} training rows, {X_train.shape[1]} features")
print(
    f"largest row norm {np.linalg.norm(X_train, axis=1).max():.2f} "
    f"<= public bound {ROW_NORM_BOUND:.2f}"
)

# %%
# The non-private reference
# -------------------------
from sklearn.linear_model import LogisticRegression

reference = LogisticRegression(max_iter=1000).fit(X_train, y_train)
reference_accuracy = reference.score(X_test, y_test)
print(f"non-private LogisticRegression: test accuracy {reference_accuracy:.4f}")

# %%
# Accuracy against epsilon
# ------------------------
# DP-SGD runs at its default hyperparameters: the number of steps, the
# batch size, the learning rate and the clip norm are all fixed before the
# data are seen, so choosing them costs no privacy. The noise multiplier is
# calibrated by dp-accounting for each epsilon. Three seeds per point show
# the spread due to the noise; the label set ``classes`` is declared, as the
# guarantee requires.
#
# Output perturbation uses ``alpha = 0.01`` (a smaller ``alpha`` means more
# noise, ``noise ~ 1 / (alpha n epsilon)``) and the public row-norm bound
# computed above.
from sklearn_dpfair import DPLogisticRegression

epsilons = [0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 8.0]
seeds = [0, 1, 2]

models = {
    (eps, seed): DPLogisticRegression(
        epsilon=eps, delta=1e-5, classes=[0, 1], random_state=seed
    ).fit(X_train, y_train)
    for eps in epsilons
    for seed in seeds
}
sgd_accuracy = np.array(
    [[models[eps, s].score(X_test, y_test) for s in seeds] for eps in epsilons]
)
perturbation_epsilons = [0.1, 1.0, 8.0]
perturbation_accuracy = [
    DPLogisticRegression(
        epsilon=eps,
        solver="output-perturbation",
        alpha=0.01,
        feature_norm_bound=ROW_NORM_BOUND,
        classes=[0, 1],
        random_state=0,
    )
    .fit(X_train, y_train)
    .score(X_test, y_test)
    for eps in perturbation_epsilons
]
for eps, accs in zip(epsilons, sgd_accuracy):
    print(f"dp-sgd  epsilon={eps:<5} accuracy {accs.mean():.4f} +/- {accs.std():.4f}")
for eps, acc in zip(perturbation_epsilons, perturbation_accuracy):
    print(f"output-perturbation epsilon={eps:<5} accuracy {acc:.4f}")

# %%
import matplotlib.pyplot as plt

fig, ax = plt.subplots(figsize=(7, 4.5))
ax.errorbar(
    epsilons,
    sgd_accuracy.mean(axis=1),
    yerr=sgd_accuracy.std(axis=1),
    marker="o",
    capsize=3,
    label="DPLogisticRegression, dp-sgd (defaults)",
)
ax.plot(
    perturbation_epsilons,
    perturbation_accuracy,
    marker="s",
    linestyle="--",
    label="DPLogisticRegression, output-perturbation (alpha=0.01)",
)
ax.axhline(
    reference_accuracy,
    color="black",
    linestyle=":",
    label="non-private LogisticRegression",
)
ax.axhline(1 - y_test.mean(), color="gray", linestyle="-.", label="majority class")
ax.set_xscale("log")
ax.set_xlabel("privacy budget epsilon (delta = 1e-5)")
ax.set_ylabel("test accuracy")
ax.set_title("Privacy-utility trade-off on UCI Adult")
ax.legend(loc="lower right", fontsize="small")
fig.tight_layout()

# %%
# What each fit guarantees
# ------------------------
# :func:`~sklearn_dpfair.report.privacy_report` reads what a fitted model
# recorded about its guarantee. Concatenating the one-row summaries compares
# models side by side; a smaller epsilon buys its privacy with a larger noise
# multiplier.
import pandas as pd

from sklearn_dpfair.report import privacy_report

reports = [
    privacy_report(
        models[eps, 0], X_test, y_test, sensitive_features=test.sensitive["sex"]
    )
    for eps in (0.1, 1.0)
]
columns = [
    "epsilon",
    "delta",
    "noise_multiplier",
    "steps",
    "sampling_rate",
    "accuracy",
    "demographic_parity_difference",
]
table = pd.concat([r.to_frame() for r in reports])[columns]
print(
    table.round(
        {
            "epsilon": 3,
            "noise_multiplier": 2,
            "accuracy": 4,
            "demographic_parity_difference": 4,
        }
    ).to_string()
)

# %%
# The full report of one model, with its metrics per group of the ``sex``
# attribute (DP-SGD does not try to be fair: the selection rates differ
# between groups much as for the non-private model).
print(reports[1])
