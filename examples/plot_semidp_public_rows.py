"""
==============================================================
Semi-private linear regression: using the rows that are public
==============================================================

Sometimes part of the training data is public: records of people who
consented, or data already released. :class:`~sklearn_dpfair.linear_model.SemiDPLinearRegression`
uses those rows without privacy cost and spends the budget only on the
private rows (Lowy's thesis, chapter 2). This example shows

* a :class:`~sklearn.pipeline.Pipeline` whose preprocessing is fitted on the
  public rows only, with ``public_mask`` routed to the regressor;
* hyperparameters chosen from public rows only (free), and what a
  :class:`~sklearn.model_selection.GridSearchCV` that scores on public rows
  only still costs when its fits read the private rows;
* test error against the fraction of public rows.
"""

# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause

# %%
# Data: 20,000 rows with 100 features, 4 % of them public
# --------------------------------------------------------
# Features on different scales with an offset, a linear target with noise of
# standard deviation 1 (so the best possible test MSE is 1).
import numpy as np

rng = np.random.default_rng(0)
n, d = 20_000, 100
scales = rng.uniform(0.5, 20.0, d)
w_true = rng.standard_normal(d) / scales


def draw(m):
    X = rng.standard_normal((m, d)) * scales + 5.0
    return X, X @ w_true + 2.0 + rng.standard_normal(m)


X, y = draw(n)
X_test, y_test = draw(10_000)
public = np.zeros(n, dtype=bool)
public[rng.permutation(n)[: int(0.04 * n)]] = True

# %%
# A pipeline fitted without leaking private statistics
# ----------------------------------------------------
# A :class:`~sklearn.preprocessing.StandardScaler` fitted on all rows would
# publish the private rows' means and variances. Routing
# ``sample_weight=public`` makes it use the public rows only (private rows get
# weight 0); the regressor receives ``public_mask``. Its ``alpha``, learning
# rate and number of steps are ``"auto"``: chosen from the public rows only.
import sklearn
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_dpfair import SemiDPLinearRegression

sklearn.set_config(enable_metadata_routing=True)


def make_model(**params):
    return make_pipeline(
        StandardScaler().set_fit_request(sample_weight=True),
        # The scaler's public-row weights are not the regressor's weights.
        SemiDPLinearRegression(**{"random_state": 0, **params}).set_fit_request(
            public_mask=True, sample_weight=False
        ),
    )


def test_mse(model):
    return np.mean((model.predict(X_test) - y_test) ** 2)


model = make_model(epsilon=1.0)
model.fit(X, y, sample_weight=public.astype(float), public_mask=public)
reg = model[-1]
print(reg.privacy_summary())
print(
    f"alpha={reg.alpha_:.3f}  learning_rate={reg.learning_rate_}  steps={reg.n_iter_}"
    f"  test MSE={test_mse(model):.3f}"
)

# %%
# Grid search that splits only on public rows, and what it costs
# ---------------------------------------------------------------
# Hyperparameters the public model does not choose (here the clip norm) can
# be tuned with cross-validation whose *test* folds are public rows only:
# every private row stays in every training fold and no model is ever scored
# on private rows. The fits themselves still read the private rows, so each
# one is a release. A shared :class:`~sklearn_dpfair.privacy.PrivacyLedger`
# (passed as ``accountant``) records all of them: the search spends the
# composition of its fits, not one epsilon. The fits are unseeded: fits that
# share a seed share their noise, and the ledger would not compose them.
from sklearn.metrics import make_scorer, mean_squared_error
from sklearn.model_selection import GridSearchCV, KFold

from sklearn_dpfair.privacy import PrivacyLedger

public_idx, private_idx = np.flatnonzero(public), np.flatnonzero(~public)
public_folds = [
    (np.concatenate([private_idx, public_idx[tr]]), public_idx[te])
    for tr, te in KFold(3, shuffle=True, random_state=0).split(public_idx)
]
ledger = PrivacyLedger(kind="pld")
search = GridSearchCV(
    make_model(epsilon=1.0, accountant=ledger, random_state=None),
    {"semidplinearregression__clip_norm": [0.3, 1.0, 3.0]},
    cv=public_folds,
    # The held-out public rows are scored unweighted.
    scoring=make_scorer(mean_squared_error, greater_is_better=False).set_score_request(
        sample_weight=False
    ),
)
search.fit(X, y, sample_weight=public.astype(float), public_mask=public)
print("best:", search.best_params_, f"test MSE={test_mse(search):.3f}")
print(f"{len(ledger)} private fits, total epsilon {ledger.total_epsilon(1e-5):.2f}")

# %%
# Test error against the fraction of public rows
# ----------------------------------------------
# The semi-private fit (defaults) against DP gradient descent that treats the
# public rows as private, and against throwing the private rows away.
import matplotlib.pyplot as plt

fractions = [0.006, 0.01, 0.02, 0.05, 0.1, 0.2]
solvers = {"semidp-gd (auto)": {}, "dp-gd": {"solver": "dp-gd"},
           "public-only": {"solver": "public-only"}}
# Curves can coincide (at epsilon = 0.5, semidp-gd lies on dp-gd): large
# hollow circles under small filled squares on a dashed line show both.
styles = {
    "semidp-gd (auto)": dict(marker="o", markersize=10, markerfacecolor="none",
                             linewidth=2.5, zorder=2),
    "dp-gd": dict(marker="s", markersize=4, linestyle="--", zorder=3),
    "public-only": dict(marker="^", markersize=6, linestyle=":", zorder=3),
}
fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
for ax, eps in zip(axes, [0.1, 0.5]):
    for label, params in solvers.items():
        errors = []
        for frac in fractions:
            mask = np.zeros(n, dtype=bool)
            mask[: int(frac * n)] = True
            model = make_model(epsilon=eps, **params)
            model.fit(X, y, sample_weight=mask.astype(float), public_mask=mask)
            errors.append(test_mse(model))
        ax.plot(fractions, errors, label=label, **styles[label])
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("fraction of public rows")
    ax.set_title(f"epsilon = {eps}")
axes[0].set_ylabel("test MSE (best possible: 1)")
axes[0].legend()
fig.tight_layout()
plt.show()

sklearn.set_config(enable_metadata_routing=False)
