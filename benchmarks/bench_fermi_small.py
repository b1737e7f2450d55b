# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""DP-FERMI and DPLogisticRegression at small ``n epsilon`` against the constant.

For each dataset (Adult with ``sex``, COMPAS with race, German credit with
sex, synthetic logistic data of 5, 20 and 100 columns), ``n`` training rows
drawn at random and the rest held out, and ``epsilon`` in {0.3, 1, 3}: the
held-out error of ``DPFERMIClassifier`` with its defaults and
``small_budget="fit"`` (the model always), with ``small_budget="auto"`` (the
public rule of ``sklearn_dpfair._solvers._intercept_only``, and above it the
private choice of ``sklearn_dpfair._solvers._constant_choice``), of
``DPLogisticRegression``'s defaults and with ``small_budget="fit"``, and of
the training majority class, averaged over seeds, the worst seed's
difference from the majority class, and the worst seed's difference over
its held-out standard error (``z``: of the mean of the held-out rows'
paired differences in error; above 2 a loss the held-out noise does not
explain). ``r = n epsilon / ((d + 1)(K - 1))`` is the rules' statistic
(DP-FERMI falls back below 15, and chooses privately up to ``n epsilon =
2500 (K - 1)``).

Writes ``docs/benchmarks/fermi_small_budget.inc``.

``--ideas`` measures, on seeds 100 to 111 (disjoint from the table's), what
three remedies for the cells where the defaults lose to the majority class
would do, with each fit's held-out DP gap beside its error (the constant has
gap 0, so a remedy that gains error by dropping fairness is no remedy):
fewer epochs (``max_iter=3``), a smaller dual step
(``dual_learning_rate=0.01``), and a private choice between the model and
the constant: the two-vector ``(M - n_1, M - n_0)`` (``M`` the model's
training errors, ``n_c`` the count of class ``c``; L2 sensitivity 1 under
add/remove: a record of class ``c`` moves the coordinate of the other
constant by ``-1`` if the model is right on it, and its own by ``+1`` if
not) released through a Gaussian of multiplier
``sigma_1 / sqrt(f)`` (``sigma_1``: one Gaussian's multiplier for the
whole budget), the model fitted at the ``epsilon`` that leaves the
composition at the budget (bisection on dp-accounting's RDP epsilon of the
composed event), the better constant released when its noisy coordinate
is above 0. The non-private fit (``epsilon = inf``, same ``fairness_weight``) is the
reference. Writes ``docs/benchmarks/fermi_small_ideas.inc``.

``--epochs`` measures DP-FERMI's defaults (``small_budget="auto"``) at 3 to
30 epochs (``max_iter``), on seeds 0-11 and 100-111, in the cells where the
private choice is made: fewer epochs mean less noise per step and fewer
steps for the dual, so the table gives the held-out DP gap beside the
error and the count of seeds that lose by more than twice their held-out
standard error, with the non-private fit at the same weight. Writes
``docs/benchmarks/fermi_small_epochs.inc``.

``--margins`` applies to the same released comparison of each fit (the
library's choice held back) the rule that releases the constant only when
the model does not win by ``k`` noise standard deviations, for several
``k``, on seeds 100-111 and 0-19. Writes
``docs/benchmarks/fermi_small_margins.inc``.

Usage::

    python benchmarks/bench_fermi_small.py            # 5 seeds (about 3 min)
    python benchmarks/bench_fermi_small.py --quick    # 1 seed
    python benchmarks/bench_fermi_small.py --datasets COMPAS --out /tmp/c.inc
    python benchmarks/bench_fermi_small.py --ideas    # about 10 min
    python benchmarks/bench_fermi_small.py --margins  # about 2 min
    python benchmarks/bench_fermi_small.py --epochs   # about 4 min
"""

import argparse
import os
import warnings

import numpy as np
from _adult import adult_arrays
from _small_data import load_compas, load_german, make_synthetic

from sklearn_dpfair import DPFERMIClassifier, DPLogisticRegression
from sklearn_dpfair._solvers._constant_choice import CHOICE_RECORDS
from sklearn_dpfair._solvers.fermi._plan import RECORDS_PER_PARAMETER
from sklearn_dpfair.privacy import noise_multiplier_for_gaussian
from sklearn_dpfair.privacy._accounting import epsilon_of, gaussian_event

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "docs", "benchmarks", "fermi_small_budget.inc")
IDEAS_OUT = os.path.join(HERE, "..", "docs", "benchmarks", "fermi_small_ideas.inc")
IDEAS_SEEDS = range(100, 112)
IDEAS_CELLS = (
    ("COMPAS", 300, 1.0), ("COMPAS", 700, 0.3), ("COMPAS", 700, 1.0),
    ("COMPAS", 2000, 0.3), ("German", 700, 3.0), ("Adult", 700, 3.0),
    ("Adult", 3000, 1.0),
)
SELECTION_SHARES = (0.1, 0.25)
DELTA = 1e-5


def datasets():
    a = adult_arrays()
    sex = np.concatenate([a[4], a[5]])
    yield "Adult", np.vstack([a[0], a[2]]), np.concatenate([a[1], a[3]]), (sex == sex[0]).astype(int)
    yield ("COMPAS", *load_compas())
    yield ("German", *load_german())
    for d in (5, 20, 100):
        yield (f"synthetic d={d}", *make_synthetic(12000, d, seed=1))


def run(seeds, ns=(300, 700, 2000), epsilons=(0.3, 1.0, 3.0), names=None):
    rows = []
    for name, X, y, s in datasets():
        if names is not None and name not in names:
            continue
        groups = list(range(int(s.max()) + 1))
        for n in ns:
            if n > 0.75 * len(y):
                continue
            for eps in epsilons:
                errs = {k: [] for k in ("fit", "auto", "logreg", "lr_fit", "const")}
                # Per seed, the held-out noise of (method - majority): the
                # standard error of the mean of the rows' paired differences.
                z = {k: [] for k in ("fit", "auto", "logreg", "lr_fit")}
                fell_back, chose = False, None
                for seed in seeds:
                    perm = np.random.default_rng(seed).permutation(len(y))
                    tr, te = perm[:n], perm[n:]
                    const_wrong = y[te] != int(np.mean(y[tr]) >= 0.5)
                    errs["const"].append(np.mean(const_wrong))

                    def record(key, est):
                        wrong = est.predict(X[te]) != y[te]
                        errs[key].append(np.mean(wrong))
                        paired = wrong.astype(float) - const_wrong
                        se = np.std(paired) / np.sqrt(len(paired))
                        z[key].append(np.mean(paired) / se if se > 0 else 0.0)

                    for mode in ("fit", "auto"):
                        est = DPFERMIClassifier(
                            epsilon=eps, classes=[0, 1], groups=groups,
                            small_budget=mode, random_state=seed,
                        ).fit(X[tr], y[tr], sensitive_features=s[tr])
                        record(mode, est)
                        if mode == "auto" and est.constant_comparison_ is not None:
                            chose = (chose or 0) + int(est.intercept_only_)
                        elif mode == "auto":
                            fell_back |= bool(est.intercept_only_)
                    for mode, key in (("auto", "logreg"), ("fit", "lr_fit")):
                        est = DPLogisticRegression(
                            epsilon=eps, classes=[0, 1], small_budget=mode,
                            random_state=seed,
                        ).fit(X[tr], y[tr])
                        record(key, est)
                r = n * eps / (X.shape[1] + 1)

                def worst_of(key):
                    return float(np.max(np.subtract(errs[key], errs["const"])))

                rows.append(
                    (name, X.shape[1], n, eps, r, fell_back, chose,
                     *(float(np.mean(errs[k])) for k in ("fit", "auto", "logreg", "const")),
                     worst_of("fit"), worst_of("auto"),
                     float(np.mean(errs["lr_fit"])), worst_of("lr_fit"),
                     worst_of("logreg"),
                     *(float(np.max(z[k])) for k in ("auto", "logreg")))
                )
                print(rows[-1], flush=True)
    return rows


def write(rows, n_seeds, out=OUT):
    head = (
        "dataset", "d", "n", "epsilon", "r", "auto falls back",
        "auto: constant chosen (seeds)",
        "DP-FERMI (fit)", "DP-FERMI (auto)", "DPLogisticRegression (auto)", "majority",
        "worst (fit - majority)", "worst (auto - majority)",
        "DPLogisticRegression (fit)", "LR worst (fit - majority)",
        "LR worst (auto - majority)", "worst z: DP-FERMI (auto)",
        "worst z: LR (auto)",
    )
    lines = [
        ".. Generated by benchmarks/bench_fermi_small.py; do not edit.",
        "",
        ".. rubric:: Small budgets: the intercept-only fallback (``small_budget``)",
        "",
        f"Held-out error, mean of {n_seeds} seeds (training rows drawn at random, "
        f"the rest held out). ``r = n epsilon / (d + 1)``; ``small_budget=\"auto\"`` "
        f"releases the intercept-only model when ``r < {RECORDS_PER_PARAMETER:g}``, "
        f"and up to ``n epsilon < {CHOICE_RECORDS:g}`` trains the model, then "
        "chooses privately between it and the constants (the number of seeds in "
        "which a constant was chosen; blank: no choice made). "
        "``worst``: the largest per-seed difference from the majority class. "
        "``worst z``: the largest per-seed difference divided by its held-out "
        "standard error (of the mean of the held-out rows' paired differences "
        "in error from the majority class): above 2, a loss larger than the "
        "held-out noise; the rows not drawn for training are the held-out set "
        "(German credit: 700 and 300 of them).",
        "",
        ".. list-table::",
        "   :header-rows: 1",
        "",
        "   * - " + "\n     - ".join(head),
    ]
    for (name, d, n, eps, r, fb, chose, fit, auto, lr, const, worst, worst_auto,
         lr_fit, lr_worst_fit, lr_worst_auto, z_auto, z_lr) in rows:
        cells = (name, str(d), str(n), f"{eps:g}", f"{r:.1f}", "yes" if fb else "no",
                 "" if chose is None else str(chose),
                 f"{fit:.3f}", f"{auto:.3f}", f"{lr:.3f}", f"{const:.3f}", f"{worst:+.3f}",
                 f"{worst_auto:+.3f}", f"{lr_fit:.3f}", f"{lr_worst_fit:+.3f}",
                 f"{lr_worst_auto:+.3f}", f"{z_auto:+.1f}", f"{z_lr:+.1f}")
        lines.append("   * - " + "\n     - ".join(cells))
    real = [r for r in rows if not r[0].startswith("synthetic")]
    synthetic = [r for r in rows if r[0].startswith("synthetic")]

    def worst(cells, a, b):
        return max(cells, key=lambda r: r[a] - r[b])

    if not ([r for r in real if r[0] != "COMPAS"] and synthetic):
        # A subset of the datasets (--datasets): the table alone.
        with open(out, "w") as f:
            f.write("\n".join(lines) + "\n")
        return
    # Row fields: 5 falls back, 6 constants chosen, 7 fit, 8 auto, 9 logreg,
    # 10 majority, 11 worst fit, 12 worst auto.
    w_auto = worst([r for r in real if r[0] != "COMPAS"], 8, 10)
    w_fit = worst(real, 7, 10)
    cost = worst(synthetic, 8, 7)
    gap = w_auto[8] - w_auto[10]
    compas = [r for r in rows if r[0] == "COMPAS" and not r[5]]
    c_mean = [r for r in compas if r[8] > r[10]]
    c_worst = [r for r in compas if r[12] > 0]
    fitted = [r for r in rows if not r[5]]
    a_mean = [r for r in fitted if r[8] > r[10]]
    a_worst = [r for r in fitted if r[12] > 0]

    def cells(rs):
        return "; ".join(f"{r[0]} n={r[2]} epsilon={r[3]:g}" for r in rs) or "none"

    lines += [
        "",
        (
            "On Adult and German credit, ``small_budget=\"auto\"`` is never worse "
            "than the majority class (mean of seeds) in any cell; "
            if gap <= 0
            else f"On Adult and German credit, ``small_budget=\"auto\"`` is at "
            f"most {gap:+.3f} from the majority class in every cell (worst: "
            f"{w_auto[0]}, n={w_auto[2]}, epsilon={w_auto[3]:g}); "
        )
        + "the model "
        f"alone (``\"fit\"``) is up to {w_fit[7] - w_fit[10]:+.3f} "
        f"({w_fit[0]}, n={w_fit[2]}, epsilon={w_fit[3]:g}). On COMPAS (six race "
        "groups, two of fewer than 35 rows in the whole file; a group whose "
        "released count is below ``min_group_size=30`` leaves the fairness "
        "penalty) the defaults, where they train a model, lose to the majority "
        + (
            f"class in the mean of seeds at {cells(c_mean)}"
            + (f" (by up to {max(r[8] - r[10] for r in c_mean):+.3f})" if c_mean else "")
            + f" and in their worst seed at {cells(c_worst)}"
            + (f" (by up to {max(r[12] for r in c_worst):+.3f})" if c_worst else "")
            if c_mean or c_worst
            else "class in no cell, neither in the mean of seeds nor in any seed"
        )
        + ". Over every dataset, where the defaults train a model they lose to "
        "the majority class in the mean of seeds at "
        + cells(a_mean)
        + " and in some seed at "
        + cells(a_worst)
        + (f" (by up to {max(r[12] for r in a_worst):+.3f})" if a_worst else "")
        + ". On the synthetic data, whose "
        "signal is strong, the fallback costs up to "
        f"{cost[8] - cost[7]:.3f} ({cost[0]}, n={cost[2]}, epsilon={cost[3]:g}): "
        "a public rule cannot see the signal. DPLogisticRegression's defaults "
        "cross the majority class near ``r = 5`` on these data. "
        + _logreg_summary(rows, cells),
    ]
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


def _logreg_summary(rows, cells):
    """The worst seeds of both estimators' defaults, against the held-out noise."""
    # Row fields: 13 LR fit mean, 14 LR worst fit, 15 LR worst auto, 16 worst
    # z of DP-FERMI auto, 17 worst z of LR auto.
    lose_fit = [r for r in rows if r[14] > 0]
    lose_auto = [r for r in rows if r[15] > 0]
    mean_auto = [r for r in rows if r[9] > r[10]]
    beyond = [r for r in rows if r[17] > 2]
    fermi_beyond = [r for r in rows if r[16] > 2]

    def by(rs, k):
        return f" (by up to {max(r[k] for r in rs):+.3f})" if rs else ""

    def z_of(rs, k):
        return f" (z up to {max(r[k] for r in rs):+.1f})" if rs else ""

    return (
        "DPLogisticRegression with ``small_budget=\"fit\"`` loses to the "
        f"majority class in some seed at {cells(lose_fit)}{by(lose_fit, 14)}; "
        "with its defaults (the intercept-only model below ``r = 5``) at "
        f"{cells(lose_auto)}{by(lose_auto, 15)}, in the mean of seeds at "
        f"{cells(mean_auto)}, and by more than twice the held-out standard "
        f"error at {cells(beyond)}{z_of(beyond, 17)}. DP-FERMI's defaults lose "
        "by more than twice the held-out standard error in some seed at "
        f"{cells(fermi_beyond)}{z_of(fermi_beyond, 16)}."
    )


def _test_gap(y_pred, s, min_rows=30):
    """Largest difference of positive rates between held-out groups of >= 30 rows."""
    rates = [y_pred[s == g].mean() for g in np.unique(s) if np.sum(s == g) >= min_rows]
    return float(max(rates) - min(rates))


def _selection_epsilon(fermi, n, d, n_groups, eps, share):
    """The model's epsilon and the selection's multiplier composing to ``eps``.

    The selection's Gaussian gets ``sigma_1 / sqrt(share)``; the model's
    epsilon is bisected so that dp-accounting's RDP epsilon of the composed
    events (the model's planned event, then the Gaussian) is at most ``eps``.
    """
    import dp_accounting

    sigma = noise_multiplier_for_gaussian(eps, DELTA) / np.sqrt(share)

    def composed(eps_model):
        plan = fermi.set_params(epsilon=eps_model).privacy_plan(
            n, d, n_groups=n_groups, n_classes=2
        )
        event = dp_accounting.ComposedDpEvent([plan.dp_event, gaussian_event(sigma)])
        return epsilon_of(event, DELTA, accountant="rdp")

    lo, hi = 1e-3 * eps, eps
    for _ in range(30):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if composed(mid) <= eps else (lo, mid)
    return lo, sigma


def run_ideas(seeds=IDEAS_SEEDS, cells=IDEAS_CELLS):
    data = {name: (X, y, s) for name, X, y, s in datasets()}
    variants = [("defaults", {}), ("max_iter=3", {"max_iter": 3}),
                ("dual_learning_rate=0.01", {"dual_learning_rate": 0.01}),
                ("epsilon=inf (reference)", {"epsilon": np.inf})]
    rows = []
    for name, n, eps in cells:
        X, y, s = data[name]
        groups = list(range(int(s.max()) + 1))
        out = {v: ([], []) for v, _ in variants}
        out.update({f"private choice, f={f:g}": ([], []) for f in SELECTION_SHARES})
        chosen_constant = dict.fromkeys(SELECTION_SHARES, 0)
        split = {
            f: _selection_epsilon(
                DPFERMIClassifier(classes=[0, 1], groups=groups, small_budget="fit",
                                  delta=DELTA),
                n, X.shape[1], len(groups), eps, f,
            )
            for f in SELECTION_SHARES
        }
        for seed in seeds:
            perm = np.random.default_rng(seed).permutation(len(y))
            tr, te = perm[:n], perm[n:]
            majority = int(np.mean(y[tr]) >= 0.5)
            const_err = {c: float(np.mean(y[te] != c)) for c in (0, 1)}

            def fit(**params):
                return DPFERMIClassifier(
                    **{"epsilon": eps, **params}, classes=[0, 1], groups=groups,
                    small_budget="fit", delta=DELTA, random_state=seed,
                ).fit(X[tr], y[tr], sensitive_features=s[tr])

            for v, params in variants:
                pred = fit(**params).predict(X[te])
                out[v][0].append(np.mean(pred != y[te]) - const_err[majority])
                out[v][1].append(_test_gap(pred, s[te]))
            noise = np.random.default_rng([seed, 7])
            for f in SELECTION_SHARES:
                eps_model, sigma = split[f]
                model = fit(epsilon=eps_model)
                errors = np.sum(model.predict(X[tr]) != y[tr])
                n1 = int(np.sum(y[tr]))
                released = np.array([errors - n1, errors - (n - n1)]) + sigma * noise.normal(size=2)
                # Coordinate c is the model's errors minus constant c's: the
                # constant of the largest is the best, and beats the model
                # when that coordinate is positive.
                c = int(np.argmax(released))
                key = f"private choice, f={f:g}"
                if released[c] > 0:
                    chosen_constant[f] += 1
                    out[key][0].append(const_err[c] - const_err[majority])
                    out[key][1].append(0.0)
                else:
                    pred = model.predict(X[te])
                    out[key][0].append(np.mean(pred != y[te]) - const_err[majority])
                    out[key][1].append(_test_gap(pred, s[te]))
        for v, (diff, gap) in out.items():
            note = ""
            if v.startswith("private choice"):
                f = float(v.split("=")[1])
                note = (f"model at epsilon {split[f][0]:.3g}, selection multiplier "
                        f"{split[f][1]:.3g}; constant chosen in {chosen_constant[f]} "
                        f"of {len(seeds)}")
            rows.append((name, n, eps, v, float(np.mean(diff)), float(np.max(diff)),
                         float(np.mean(np.asarray(diff) > 0)), float(np.mean(gap)), note))
            print(rows[-1], flush=True)
    return rows


def _write_list_table(out, preamble, head, rows):
    """Write ``preamble`` lines, then a list-table of ``head`` and ``rows`` (strings)."""
    lines = [*preamble, "", ".. list-table::", "   :header-rows: 1", "",
             "   * - " + "\n     - ".join(head)]
    lines += ["   * - " + "\n     - ".join(cells) for cells in rows]
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


def write_ideas(rows, n_seeds, out=IDEAS_OUT):
    head = ("dataset", "n", "epsilon", "fit", "mean (model - majority)",
            "worst seed", "share of seeds that lose", "held-out DP gap", "note")
    lines = [
        ".. Generated by benchmarks/bench_fermi_small.py --ideas; do not edit.",
        "",
        ".. rubric:: Small budgets: remedies measured (the private choice at f = 0.1 "
        "adopted as ``small_budget=\"auto\"``'s)",
        "",
        f"DP-FERMI's defaults (``fairness_weight=8``, ``small_budget=\"fit\"``) and "
        f"three remedies, {n_seeds} seeds (100 to {99 + n_seeds}, disjoint from the "
        "table above), held-out error minus the training majority class's and the "
        "held-out demographic-parity gap over groups of at least 30 held-out rows "
        "(the constant's gap is 0). ``epsilon=inf`` is the non-private fit at the "
        "same weight. The private choice releases the model's and the constants' "
        "training errors (one Gaussian, sensitivity 1, composed with the model's "
        "event inside the same epsilon by dp-accounting) and keeps the constant "
        "when it looks better.",
    ]
    _write_list_table(out, lines, head, [
        (name, str(n), f"{eps:g}", v, f"{mean:+.3f}", f"{worst:+.3f}",
         f"{lose:.2f}", f"{gap:.3f}", note or "")
        for name, n, eps, v, mean, worst, lose, gap, note in rows
    ])


MARGINS_OUT = os.path.join(HERE, "..", "docs", "benchmarks", "fermi_small_margins.inc")
MARGINS = (0.0, 0.5, 1.0, 1.5, 2.0)
MARGIN_CELLS = (
    ("COMPAS", 300, 1.0), ("COMPAS", 700, 0.3), ("COMPAS", 700, 1.0),
    ("COMPAS", 2000, 0.3), ("German", 700, 3.0), ("Adult", 700, 3.0),
    ("synthetic d=5", 300, 0.3),
)


def run_margins(seed_sets, cells=MARGIN_CELLS):
    """The library's private choice, decided with a margin (post-processing).

    Each fit is ``DPFERMIClassifier``'s defaults with the choice's outcome
    held back: the released comparison ``S`` is kept (``constant_comparison_``)
    and so is the trained model, so that every rule below is applied to the
    same release. Rule ``k``: release the constant ``argmax S`` when
    ``max S > -k sigma`` (``sigma`` the comparison's noise, in counts),
    else the model; ``k = 0`` is the library's rule. A larger ``k`` asks the
    model to win by ``k`` noise standard deviations.
    """
    from sklearn_dpfair._solvers import _constant_choice
    from sklearn_dpfair._solvers.fermi import _fit as fermi_fit

    def keep_model(noisy, n):
        choice = _constant_choice.choose_constant(noisy, n)
        return _constant_choice.ConstantChoice(None, choice.counts, choice.comparison)

    data = {name: (X, y, s) for name, X, y, s in datasets()}
    rows = []
    original = fermi_fit.choose_constant
    fermi_fit.choose_constant = keep_model
    try:
        for label, seeds in seed_sets:
            for name, n, eps in cells:
                X, y, s = data[name]
                groups = list(range(int(s.max()) + 1))
                diffs = {k: [] for k in (None, *MARGINS)}
                for seed in seeds:
                    perm = np.random.default_rng(seed).permutation(len(y))
                    tr, te = perm[:n], perm[n:]
                    const_err = [np.mean(y[te] != c) for c in (0, 1)]
                    majority = const_err[int(np.mean(y[tr]) >= 0.5)]
                    est = DPFERMIClassifier(
                        epsilon=eps, classes=[0, 1], groups=groups, random_state=seed
                    ).fit(X[tr], y[tr], sensitive_features=s[tr])
                    S = est.constant_comparison_
                    model = np.mean(est.predict(X[te]) != y[te])
                    for k in diffs:
                        if k is None or S.max() <= -k * est.choice_noise_multiplier_:
                            err = model
                        else:
                            err = const_err[int(np.argmax(S))]
                        diffs[k].append(err - majority)
                for k, d in diffs.items():
                    d = np.asarray(d)
                    rows.append((label, name, n, eps, k, float(d.mean()),
                                 float(d.max()), float(np.mean(d > 0))))
                    print(rows[-1], flush=True)
    finally:
        fermi_fit.choose_constant = original
    return rows


def write_margins(rows, out=MARGINS_OUT):
    head = ("seeds", "dataset", "n", "epsilon", "rule", "mean (released - majority)",
            "worst seed", "share of seeds that lose")
    lines = [
        ".. Generated by benchmarks/bench_fermi_small.py --margins; do not edit.",
        "",
        ".. rubric:: Small budgets: the private choice with a margin (measured, "
        "not adopted)",
        "",
        "DP-FERMI's defaults in the cells where it makes the private choice; "
        "every rule reads the same released comparison ``S`` of each fit: "
        "``model`` always releases the trained model, ``k`` releases the "
        "constant ``argmax S`` when ``max S > -k sigma`` (``sigma`` the "
        "comparison's noise standard deviation in counts; ``k = 0`` is "
        "``small_budget=\"auto\"``'s rule). Held-out error minus the training "
        "majority class's.",
    ]
    _write_list_table(out, lines, head, [
        (label, name, str(n), f"{eps:g}", "model" if k is None else f"k = {k:g}",
         f"{mean:+.3f}", f"{worst:+.3f}", f"{lose:.2f}")
        for label, name, n, eps, k, mean, worst, lose in rows
    ])


EPOCHS_OUT = os.path.join(HERE, "..", "docs", "benchmarks", "fermi_small_epochs.inc")
EPOCHS = (3, 5, 8, 12, 20, 30)
EPOCH_SEEDS = (*range(12), *IDEAS_SEEDS)
EPOCH_CELLS = (
    ("COMPAS", 300, 1.0), ("COMPAS", 700, 0.3), ("COMPAS", 700, 1.0),
    ("COMPAS", 2000, 0.3), ("German", 700, 3.0), ("Adult", 700, 3.0),
    ("Adult", 2000, 1.0), ("synthetic d=5", 300, 0.3),
)


def run_epochs(seeds=EPOCH_SEEDS, cells=EPOCH_CELLS):
    """DP-FERMI's defaults at several epoch counts, and the non-private fit."""
    data = {name: (X, y, s) for name, X, y, s in datasets()}
    rows = []
    for name, n, eps in cells:
        X, y, s = data[name]
        groups = list(range(int(s.max()) + 1))
        for epochs in (*EPOCHS, None):
            diff, z, gap = [], [], []
            for seed in seeds:
                perm = np.random.default_rng(seed).permutation(len(y))
                tr, te = perm[:n], perm[n:]
                const_wrong = y[te] != int(np.mean(y[tr]) >= 0.5)
                est = DPFERMIClassifier(
                    epsilon=np.inf if epochs is None else eps,
                    max_iter=30 if epochs is None else epochs,
                    classes=[0, 1], groups=groups, random_state=seed,
                ).fit(X[tr], y[tr], sensitive_features=s[tr])
                pred = est.predict(X[te])
                paired = (pred != y[te]).astype(float) - const_wrong
                se = np.std(paired) / np.sqrt(len(paired))
                diff.append(float(np.mean(paired)))
                z.append(float(np.mean(paired) / se) if se > 0 else 0.0)
                gap.append(_test_gap(pred, s[te]))
            rows.append((name, n, eps, epochs, float(np.mean(diff)), float(np.max(diff)),
                         int(np.sum(np.asarray(z) > 2)), float(np.mean(gap))))
            print(rows[-1], flush=True)
    return rows


def write_epochs(rows, n_seeds, out=EPOCHS_OUT):
    head = ("dataset", "n", "epsilon", "epochs", "mean (released - majority)",
            "worst seed", "seeds losing by > 2 SE", "held-out DP gap")
    lines = [
        ".. Generated by benchmarks/bench_fermi_small.py --epochs; do not edit.",
        "",
        ".. rubric:: Small budgets: fewer epochs (measured, not adopted)",
        "",
        f"DP-FERMI's defaults (``fairness_weight=8``, ``small_budget=\"auto\"``, "
        f"so the private choice included) at ``max_iter`` epochs, {n_seeds} seeds "
        "(0-11 and 100-111), held-out error minus the training majority class's, "
        "the number of seeds whose loss to it exceeds twice its held-out standard "
        "error, and the held-out demographic-parity gap over groups of at least 30 "
        "held-out rows (the constant's is 0). ``inf``: the non-private fit at the "
        "same weight (30 epochs, then its full-batch phase).",
    ]
    _write_list_table(out, lines, head, [
        (name, str(n), f"{eps:g}", "inf" if epochs is None else str(epochs),
         f"{mean:+.3f}", f"{worst:+.3f}", str(losing), f"{gap:.3f}")
        for name, n, eps, epochs, mean, worst, losing, gap in rows
    ])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--datasets", default=None,
                        help="comma-separated names to run (default: all)")
    parser.add_argument("--out", default=None)
    parser.add_argument("--ideas", action="store_true",
                        help="measure the remedies (writes fermi_small_ideas.inc)")
    parser.add_argument("--margins", action="store_true",
                        help="the private choice with a margin (writes "
                        "fermi_small_margins.inc)")
    parser.add_argument("--epochs", action="store_true",
                        help="the defaults at 3 to 30 epochs (writes "
                        "fermi_small_epochs.inc)")
    args = parser.parse_args()
    # Each extra page: (how its rows are measured, how they are written).
    pages = {
        "epochs": (run_epochs, lambda rows, out: write_epochs(
            rows, len(EPOCH_SEEDS), out or EPOCHS_OUT)),
        "margins": (lambda: run_margins([("100-111", IDEAS_SEEDS), ("0-19", range(20))]),
                    lambda rows, out: write_margins(rows, out or MARGINS_OUT)),
        "ideas": (run_ideas, lambda rows, out: write_ideas(
            rows, len(IDEAS_SEEDS), out or IDEAS_OUT)),
    }
    for page, (measure, write_page) in pages.items():
        if getattr(args, page):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rows = measure()
            write_page(rows, args.out)
            return
    seeds = range(1 if args.quick else 5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = run(seeds, names=None if args.datasets is None else args.datasets.split(","))
    write(rows, len(seeds), args.out or OUT)


if __name__ == "__main__":
    main()
