"""
==============================================================
Heavy-tailed DP regression: the adaptive clip threshold
==============================================================

Differentially private gradient methods clip every per-sample gradient at a
threshold ``C``. With heavy-tailed features or noise the right ``C`` is hard to
guess: too small and the clipped gradients are biased (skewed noise), too
large and the Gaussian noise, which scales with ``C``, swamps the signal. And
the right ``C`` is in the units of the data: change the units of ``y`` and it
moves with them.

:class:`~sklearn_dpfair.HeavyTailDPRegressor` sets ``C`` by itself, in units it
estimates privately (the median and median absolute deviation of ``y``, the
median row norm), times a factor that grows with the signal-to-noise ratio as
the theory of Lowy's thesis (chapter 4) prescribes. This example compares its
exact excess risk with the same solver run with hand-set clips, on data with
Student-t features and skewed Pareto noise, once with ``y`` in its own units and
once with ``y`` a hundred times larger.
"""

# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause

# %%
# Data with heavy tails and a known population risk
# -------------------------------------------------
# Standardized t(4.5) features and centred Pareto(2.5) noise: the population
# second moment of ``[x, 1]`` is the identity, so the excess risk of ``(w, b)``
# is exactly ``1/2 (||w - w*||^2 + (b - b*)^2)`` (divided by the square of
# the unit factor when ``y`` is rescaled).
import matplotlib.pyplot as plt
import numpy as np

from sklearn_dpfair import HeavyTailDPRegressor

rng = np.random.default_rng(0)
n, d = 10_000, 5
w_star = rng.normal(size=d)
w_star *= 2 / np.linalg.norm(w_star)


def make_data(seed, unit):
    r = np.random.default_rng(seed)
    X = r.standard_t(4.5, size=(n, d)) / np.sqrt(4.5 / 2.5)
    noise = (r.pareto(2.5, size=n) + 1) - 2.5 / 1.5
    return X, unit * (X @ w_star + 1.0 + noise)


def excess_risk(model, unit):
    coef, intercept = model.coef_ / unit, model.intercept_ / unit
    return 0.5 * (np.sum((coef - w_star) ** 2) + (intercept - 1.0) ** 2)


# %%
# Adaptive clip versus hand-set clips
# -----------------------------------
# Every fit uses the same solver ("dp-sgd") and the same private units; only
# the clip threshold differs. A float clip is in the units of ``y`` times
# ``x``. Medians over 3 seeds.
epsilons = [0.5, 1.0, 2.0, 4.0]
clips = {"adaptive (default)": "auto", "C = 0.3": 0.3, "C = 3": 3.0, "C = 30": 30.0}
units = [1.0, 100.0]
results = {}
for unit in units:
    for name, clip in clips.items():
        medians = []
        for eps in epsilons:
            risks = []
            for seed in range(3):
                X, y = make_data(seed, unit)
                model = HeavyTailDPRegressor(
                    epsilon=eps, clip_norm=clip, random_state=seed
                ).fit(X, y)
                risks.append(excess_risk(model, unit))
            medians.append(np.median(risks))
        results[unit, name] = medians

fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
for ax, unit in zip(axes, units):
    for name in clips:
        style = "o-" if name.startswith("adaptive") else ".--"
        ax.plot(epsilons, results[unit, name], style, label=name)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("epsilon (delta = 1e-5)")
    ax.set_title(f"y in units of {unit:g}")
axes[0].set_ylabel("median excess risk (in units of y)")
axes[0].legend()
fig.suptitle("HeavyTailDPRegressor, t features, skewed Pareto noise")
fig.tight_layout()

# %%
# Reading the plot
# ----------------
# A well-chosen fixed clip can beat the adaptive rule. On this data
# (symmetric t features, skewed noise) the clips of 0.3 and 3 in the first
# panel are 1.3x to 2.2x better than the adaptive rule (the printed medians
# below). Skewed noise biases the intercept of clipped steps, the more so
# the smaller the clip; every fit here (a hand-set clip too) ends with a
# private step that corrects the intercept with a clipped mean of the
# residuals, so a small clip's lower noise wins on this data. The adaptive
# rule spends part of the budget on its private units and does not know the
# best clip: it lands near a typical gradient. The clip of 30 is 2.4x to 9x
# worse than it. What a fixed clip cannot do is follow the data: with ``y``
# a hundred times larger (second panel) the same clips are a hundred times
# too small (the clip of 3 is now 38x to 88x worse than the adaptive rule,
# the clip of 0.3 thousands of times; the clip of 30 now plays the part of
# the clip of 0.3), while the adaptive rule's curve does not move.
for (unit, name), risks in results.items():
    print(f"unit {unit:>5g} {name:>20}: " + ", ".join(f"{r:.2e}" for r in risks))

# %%
# What was spent where
# --------------------
# Each private estimate has its own share of the zCDP budget (the private
# scales and the intercept step here); the DP-SGD steps are accounted under
# RDP, and dp-accounting converts the composition of all parts to
# (epsilon, delta).
model = HeavyTailDPRegressor(epsilon=1.0, random_state=0).fit(*make_data(0, 1.0))
print(model.rho_spent_)
print(model.privacy_summary())
print(
    f"clip norm chosen: {model.clip_norm_:.3g}, target location "
    f"{model.target_location_:.3g}, scale {model.target_scale_:.3g}"
)
