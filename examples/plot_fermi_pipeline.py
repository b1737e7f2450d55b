"""
==========================================================================
Tuning a fair classifier in a pipeline: GridSearchCV, routing, MetricFrame
==========================================================================

:class:`~sklearn_dpfair.FERMIClassifier` takes the sensitive features as a
keyword-only argument of ``fit``, fairlearn style, so scikit-learn's
*metadata routing* can carry them through a ``Pipeline`` and the folds of
``GridSearchCV``. Here we

1. preprocess UCI Adult with a ``ColumnTransformer``,
2. tune the requested training gap (``disparity_bound``: each fit chooses
   its fairness weight itself) with a scorer that rewards accuracy and
   penalizes the demographic-parity gap on each validation fold, and
3. evaluate the chosen model per group with fairlearn's ``MetricFrame``.

Prediction never needs the sensitive features.
"""

# %%
# Data: Adult, with ``sex`` as the sensitive attribute (kept out of ``X``).
import matplotlib.pyplot as plt
import numpy as np
import sklearn
from fairlearn.metrics import MetricFrame, selection_rate
from sklearn.compose import ColumnTransformer
from sklearn.metrics import accuracy_score
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from sklearn_dpfair import FERMIClassifier
from sklearn_dpfair.datasets import load_adult
from sklearn_dpfair.metrics import make_fairness_scorer

train, test = load_adult(subset="train"), load_adult(subset="test")
rng = np.random.default_rng(0)
rows = rng.choice(len(train.target), 10_000, replace=False)  # keep the example fast
X, y, A = (
    train.data.iloc[rows],
    train.target.iloc[rows],
    train.sensitive["sex"].iloc[rows],
)

# %%
# Routing: the classifier requests ``sensitive_features`` for ``fit``; the
# scorer made by :func:`~sklearn_dpfair.metrics.make_fairness_scorer` already
# requests them for scoring.
sklearn.set_config(enable_metadata_routing=True)

preprocess = ColumnTransformer(
    [
        ("num", StandardScaler(), train.numeric_features),
        (
            "cat",
            OneHotEncoder(handle_unknown="ignore", sparse_output=False),
            train.categorical_features,
        ),
    ]
)
pipe = Pipeline(
    [
        ("prep", preprocess),
        (
            "fermi",
            FERMIClassifier(
                batch_size=512, max_iter=10, random_state=0
            ).set_fit_request(sensitive_features=True),
        ),
    ]
)

# Accuracy minus 2 points per point of demographic-parity gap above 0.02.
fair_accuracy = make_fairness_scorer(
    "demographic_parity_difference",
    base_metric="accuracy",
    fairness_penalty=2.0,
    tolerance=0.02,
)
search = GridSearchCV(
    pipe,
    {"fermi__disparity_bound": [None, 0.05, 0.02, 0.01]},
    scoring={
        "fair_accuracy": fair_accuracy,
        "accuracy": "accuracy",
        "dp_gap": make_fairness_scorer("demographic_parity_difference"),
    },
    refit="fair_accuracy",
    cv=3,
)
search.fit(X, y, sensitive_features=A)
print("chosen:", search.best_params_)
for bound, acc, gap in zip(
    search.cv_results_["param_fermi__disparity_bound"],
    search.cv_results_["mean_test_accuracy"],
    -search.cv_results_["mean_test_dp_gap"],
):
    print(f"disparity_bound={bound!s:5}  CV accuracy {acc:.3f}  CV DP gap {gap:.3f}")
fermi = search.best_estimator_.named_steps["fermi"]
print("fairness weight chosen by the refit:", round(fermi.fairness_weight_, 2))

# %%
# Per-group evaluation on the official test file with ``MetricFrame``.
y_pred = search.predict(test.data)
frame = MetricFrame(
    metrics={"accuracy": accuracy_score, "selection rate": selection_rate},
    y_true=test.target,
    y_pred=y_pred,
    sensitive_features=test.sensitive["sex"],
)
print(frame.by_group)
print("selection-rate gap:", round(frame.difference()["selection rate"], 3))

fig, ax = plt.subplots(figsize=(5, 3))
frame.by_group["selection rate"].plot.bar(ax=ax, rot=0)
ax.set_ylabel("selection rate (test)")
ax.set_title(f"FERMI, disparity_bound={search.best_params_['fermi__disparity_bound']}")
fig.tight_layout()
sklearn.set_config(enable_metadata_routing=False)
