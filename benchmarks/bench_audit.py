# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Empirical privacy audits of every private estimator.

For each audit: 1,000 fits (500 per world, ``--runs``), half of them choosing
the distinguishing test and half evaluating it; Clopper-Pearson bounds at 95%
confidence. Three groups of rows:

1. The Gaussian mechanism on a clipped sum, correct and deliberately broken
   (halved noise; clipping disabled), claimed epsilon 1, 2 and 4; 20,000
   runs, since each costs microseconds.
2. DP-SGD (``DPLogisticRegression``, one full-batch step) with a canary that
   no other record can mask, correct and broken, at epsilon 1, 2 and 4. This
   is the near-worst case in which the final model *is* the Gaussian
   mechanism, so the audit can be tight.
3. Every private estimator found by ``all_estimators()``, at its defaults
   (epsilon = 1 or its default), on synthetic data with the default canary
   of ``make_canary``, correct and with the two broken variants applied to
   the shared privacy core (``GaussianMechanism`` noise halved;
   ``clip_factors_from_norms`` returning 1 for every finite norm, in every
   module that holds it). The broken variants patch the running
   process, so they run sequentially, and only for estimators whose 1,000
   fits take under two minutes. These canaries are not worst-case: a
   broken variant that is *not* flagged here only shows the limits of a
   generic canary, which is why group 2 exists.

4. White-box audits (``audit_gradient_canary``, after Nasr et al., 2023) of
   the three DP-SGD-type estimators at their defaults (``DPLogisticRegression``,
   ``DPFERMIClassifier``, ``HeavyTailDPRegressor``) on n = 1,000 synthetic
   rows: Dirac gradient canaries in appended all-zero columns, inserted into
   every noisy step with the Poisson rate and observed there; correct and
   with halved noise. 1,000 fits (``--wb-runs``) with 400 canaries each
   (``--canaries``; half in, half out), plus one row with one canary per fit
   (no reliance on the independence of the canaries' noise), which shows why
   the many canaries are needed at epsilon = 1.

A violation is a lower bound above the claimed epsilon at the audit delta
(the delta of the claimed privacy profile chosen on the selection runs). The
*ceiling* of an audit is the bound a test with no error at all would give with
its evaluation runs: an audit whose ceiling is not above the claim is
inconclusive.

Writes ``docs/benchmarks/audit.rst`` and ``docs/benchmarks/audit_margins.png``.

Usage: python benchmarks/bench_audit.py [--quick] [--runs 1000] [--jobs 2]
       [--wb-runs 1000] [--canaries 400] [--only white-box]
       [--estimators NAME[,NAME]] [--variants VARIANT[,VARIANT]]
"""

import argparse
import contextlib
import datetime
import importlib
import os
import sys
import time
import warnings

import numpy as np
from sklearn.base import clone

sys.path.insert(0, os.path.dirname(__file__))
from _adult import machine_description  # noqa: E402

from sklearn_dpfair import (  # noqa: E402
    DPFERMIClassifier,
    DPLogisticRegression,
    HeavyTailDPRegressor,
)
from sklearn_dpfair.audit import (  # noqa: E402
    audit_estimator,
    audit_gradient_canary,
    audit_mechanism,
    make_canary,
    make_neighbours,
)
from sklearn_dpfair.audit._synthetic import (  # noqa: E402
    UnsupportedFitArgument,
    synthetic_inputs,
)
from sklearn_dpfair.privacy import GaussianMechanism, _clipping  # noqa: E402
from sklearn_dpfair.privacy._accounting import gaussian_event  # noqa: E402
from sklearn_dpfair.privacy._calibration import (  # noqa: E402
    noise_multiplier_for_gaussian,
)
from sklearn_dpfair.utils import all_estimators  # noqa: E402
from sklearn_dpfair.utils._array_api import array_namespace  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "..", "docs", "benchmarks")
# Runs of the bare Gaussian-mechanism audits: microseconds each, so many.
MECHANISM_RUNS = 20_000
VARIANTS = ("correct", "halved noise", "no clipping")
COMMAND = "python benchmarks/bench_audit.py"
# Audits left out of this run, and why (written into the page).
SKIPPED = []


# The modules that clip through the privacy core's clip factor (the row
# layer, the network's layers, DP-FERMI's dual cell sums, the heavy-tail
# mean oracle and curvature), imported here so that the "no clipping"
# variant finds them in ``sys.modules`` and patches every one.
CLIPPING_MODULES = (
    "sklearn_dpfair._solvers._rows",
    "sklearn_dpfair.neural._network",
    "sklearn_dpfair._solvers.fermi._sgda",
    "sklearn_dpfair._solvers.heavy_tail._mean_oracle",
    "sklearn_dpfair._solvers.heavy_tail._private_curvature",
)
# Those the "no clipping" variant must reach: a move of the clip factor out
# of them fails the benchmark instead of silently auditing unbroken fits.
REQUIRED_CLIPPING_MODULES = CLIPPING_MODULES[:3]
for _name in CLIPPING_MODULES:
    importlib.import_module(_name)


def _unclipped_factors(saved):
    """``clip_factors_from_norms`` that never clips: 1 for a finite norm, else 0.

    In the namespace, dtype and device of the real factors (it calls the real
    function for them, then overwrites them), so the fits run unchanged except
    for the clip; a non-finite norm keeps the factor 0 the core gives it.
    """

    def factors(norms, clip_norm, *, margin=None):
        real = saved(norms, clip_norm, margin=margin)
        xp = array_namespace(real)
        if isinstance(real, np.ndarray):
            return np.where(np.isfinite(norms), 1.0, 0.0).astype(real.dtype)
        finite = xp.isfinite(norms)
        return xp.where(finite, xp.ones_like(real), xp.zeros_like(real))

    return factors


@contextlib.contextmanager
def broken(variant):
    """The deliberately broken variants, applied to the shared privacy core."""
    saved_std = GaussianMechanism.noise_std
    saved_clip = _clipping.clip_factors_from_norms
    # The privacy core's clip factor, in every module that holds it (they
    # import it by name): every clipped per-example term goes through it.
    holders = [
        (name, module)
        for name, module in list(sys.modules.items())
        if name.startswith("sklearn_dpfair")
        and getattr(module, "clip_factors_from_norms", None) is saved_clip
    ]
    if variant == "halved noise":
        GaussianMechanism.noise_std = property(
            lambda self: 0.5 * self.noise_multiplier * self.clip_norm
        )
    elif variant == "no clipping":
        missing = set(REQUIRED_CLIPPING_MODULES) - {name for name, _ in holders}
        if missing:
            raise RuntimeError(f"no clipping would not reach {sorted(missing)}")
        unclipped = _unclipped_factors(saved_clip)
        for _, module in holders:
            module.clip_factors_from_norms = unclipped
    try:
        yield
    finally:
        GaussianMechanism.noise_std = saved_std
        for _, module in holders:
            module.clip_factors_from_norms = saved_clip


def row(group, subject, variant, result, seconds):
    return {
        "group": group,
        "subject": subject,
        "variant": variant,
        "claim": f"({result.claim_epsilon:.3g}, {result.claim_delta:.0e})",
        "runs": result.n_selection
        + result.n_evaluation
        + result.n_selection_with
        + result.n_evaluation_with,
        "audit_delta": result.audit_delta,
        "claimed": result.epsilon_claimed,
        "lower": result.epsilon_lower_bound,
        "nominal_lower": result.nominal_epsilon_lower_bound,
        "violation": result.violation,
        "ceiling": result.epsilon_ceiling,
        "conclusive": result.conclusive,
        "seconds": seconds,
    }


def flagged(r):
    if r["violation"]:
        return "**yes**"
    return "no" if r["conclusive"] else "no (inconclusive)"


def gaussian_rows(n_runs):
    rows = []
    for eps in (1.0, 2.0, 4.0):
        z = noise_multiplier_for_gaussian(eps, 1e-5)
        for variant in VARIANTS:
            clip = np.inf if variant == "no clipping" else 1.0

            def release(data, rng, clip=clip, z=z):
                clipped = np.clip(np.asarray(data, float), -clip, clip)
                mech = GaussianMechanism(clip_norm=1.0, noise_multiplier=z)
                return float(mech.privatize(np.array([clipped.sum()]), rng)[0])

            start = time.perf_counter()
            with broken("halved noise" if variant == "halved noise" else "correct"):
                result = audit_mechanism(
                    release,
                    [0.0] * 10,
                    [0.0] * 10 + [5.0],
                    delta=1e-5,
                    dp_event=gaussian_event(z),
                    n_runs=n_runs,
                )
            rows.append(
                row(
                    "Gaussian mechanism",
                    f"sum, eps={eps:g}",
                    variant,
                    result,
                    time.perf_counter() - start,
                )
            )
            print(rows[-1], flush=True)
    return rows


def dpsgd_rows(n_runs):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    X[:, 0] = 0.0
    y = (X[:, 1] > 0).astype(int)
    nb = make_neighbours(X, y, canary=(np.array([1e3, 0.0, 0.0]), 1))
    rows = []
    for eps in (1.0, 2.0, 4.0):
        clf = DPLogisticRegression(
            epsilon=eps, classes=[0, 1], batch_size="full", max_iter=1
        )
        for variant in VARIANTS:
            start = time.perf_counter()
            with broken(variant):
                # Sequential: the broken variants patch this process only.
                result = audit_estimator(clf, nb, n_runs=n_runs)
            rows.append(
                row(
                    "DP-SGD, isolated canary",
                    f"DPLogisticRegression 1 step, eps={eps:g}",
                    variant,
                    result,
                    time.perf_counter() - start,
                )
            )
            print(rows[-1], flush=True)
    return rows


def estimator_rows(n_runs, n_jobs, names=None, variants=VARIANTS):
    rows = []
    for name, cls in all_estimators():
        if names is not None and name not in names:
            continue
        est = cls()
        if "random_state" in est.get_params():
            est.set_params(random_state=0)
        try:
            X, y, params, canary_params = synthetic_inputs(est, n_samples=100)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                probe = clone(est).fit(X, y, **params)
        except (UnsupportedFitArgument, ValueError, TypeError) as exc:
            print(f"skipping {name}: {type(exc).__name__}: {exc}", flush=True)
            continue
        if not hasattr(probe, "dp_event_") or not np.isfinite(probe.epsilon_):
            print(f"skipping {name}: no finite privacy claim", flush=True)
            continue
        if probe.adjacency_ not in ("add_remove", "replace_one"):
            print(f"skipping {name}: adjacency {probe.adjacency_!r}", flush=True)
            continue
        nb = make_neighbours(
            X,
            y,
            canary=make_canary(X, y),
            adjacency=probe.adjacency_,
            fit_params=params,
            canary_fit_params=canary_params,
        )
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clone(est).fit(X, y, **params)
        fit_seconds = time.perf_counter() - start
        for variant in variants:
            # The broken variants patch this process only, so they run
            # sequentially; skipped where that would take over ~2 minutes.
            if variant != "correct" and fit_seconds * n_runs > 120:
                print(f"{name} {variant}: skipped ({fit_seconds:.2f} s per fit)")
                SKIPPED.append(f"{name} ({variant}; {fit_seconds:.2f} s per fit)")
                continue
            start = time.perf_counter()
            try:
                with broken(variant):
                    result = audit_estimator(
                        est,
                        nb,
                        n_runs=n_runs,
                        n_jobs=n_jobs if variant == "correct" else None,
                    )
            except (ValueError, TypeError) as exc:
                # e.g. a broken variant that makes the fit itself fail.
                print(f"{name} {variant}: {type(exc).__name__}: {exc}", flush=True)
                continue
            rows.append(
                row(
                    "every estimator, default canary",
                    f"{name} (defaults)",
                    variant,
                    result,
                    time.perf_counter() - start,
                )
            )
            print(rows[-1], flush=True)
    return rows


WHITE_BOX_ESTIMATORS = (DPLogisticRegression, DPFERMIClassifier, HeavyTailDPRegressor)


def whitebox_rows(n_runs, n_canaries):
    """Gradient-canary audits of the DP-SGD-type estimators at their defaults."""
    rows = []
    plan = [
        (cls, variant, n_canaries)
        for cls in WHITE_BOX_ESTIMATORS
        for variant in ("correct", "halved noise")
    ]
    # One canary per fit: the audit that does not rely on independent
    # canaries within a fit, at the same number of fits.
    plan.append((DPLogisticRegression, "halved noise", 1))
    for cls, variant, k in plan:
        est = cls()
        X, y, params, _ = synthetic_inputs(est, n_samples=1000)
        start = time.perf_counter()
        with broken(variant):
            # Sequential: the broken variant patches this process only.
            result = audit_gradient_canary(
                est, X, y, fit_params=params, n_runs=n_runs, n_canaries=k
            )
        r = row(
            "white-box, gradient canaries",
            f"{cls.__name__} (defaults), {k} canar{'ies' if k > 1 else 'y'} per fit",
            variant,
            result,
            time.perf_counter() - start,
        )
        r["runs"] = n_runs
        r["trials"] = n_runs * k // 2 if k > 1 else n_runs // 2
        rows.append(r)
        print(r, flush=True)
    return rows


def table_lines(r):
    """One row of the page's black-box table (list-table lines)."""
    return [
        f"   * - {r['group']}",
        f"     - {r['subject']}",
        f"     - {r['variant']}",
        f"     - {r['claim']}",
        f"     - {r['audit_delta']:.0e}",
        f"     - {r['claimed']:.3f}",
        f"     - {r['lower']:.3f}",
        f"     - {r['nominal_lower']:.3f}",
        f"     - {r['ceiling']:.2f}",
        f"     - {flagged(r)}",
        f"     - {r['seconds']:.1f}",
    ]


def write_rst(rows, wb_rows, n_runs, wb_runs, n_canaries, wall):
    lines = [
        "Empirical privacy audits",
        "========================",
        "",
        f"Measured {datetime.date.today()} on {machine_description()}, with "
        "other benchmarks sharing the cores (times are indicative); "
        f"{n_runs} fits per estimator audit and {MECHANISM_RUNS:,} runs per "
        "Gaussian-mechanism audit (half per world; of each half, half choose the "
        "test and half evaluate it); Clopper-Pearson bounds at 95% confidence; "
        "run seeds from ``numpy.random.SeedSequence(0)``; total wall time "
        f"{wall / 60:.1f} min. Produced by ``{COMMAND}``.",
        "",
        "*lower bound* is the audit's lower confidence bound on epsilon at the "
        "*audit delta* (chosen on the selection runs among the claim's delta and "
        "larger deltas of the claimed privacy profile); *claimed* is the "
        "epsilon the recorded DpEvent claims at that delta (PLD). The nominal "
        "claim's epsilon is also the event's PLD epsilon, so it can be below an "
        "estimator's ``epsilon_`` computed with RDP. A violation "
        "(lower bound > claimed) refutes the claim. *bound at claim delta* is "
        "a second, separately chosen test at the nominal delta: it shows how far "
        "below the nominal epsilon a thousand runs can see. *ceiling* is the "
        "bound a test with no error at all would give at the audit delta with "
        "these evaluation runs (the audit's power): where it is not above the "
        "claim the audit is *inconclusive* (it could not have flagged anything).",
        "",
        ".. list-table::",
        "   :header-rows: 1",
        "",
        "   * - audit group",
        "     - subject",
        "     - variant",
        "     - nominal claim (eps, delta)",
        "     - audit delta",
        "     - claimed eps there",
        "     - lower bound (95%)",
        "     - bound at claim delta",
        "     - ceiling",
        "     - flagged",
        "     - seconds",
    ]
    for r in rows:
        lines += table_lines(r)
    correct = [r for r in rows if r["variant"] == "correct"]
    broken_rows = [r for r in rows if r["variant"] != "correct"]
    false_alarms = sum(r["violation"] for r in correct)
    caught = sum(r["violation"] for r in broken_rows)
    missed = [
        f"{r['subject']} ({r['variant']})" for r in broken_rows if not r["violation"]
    ]
    lines += [
        "",
        f"Correct variants flagged: {false_alarms} of {len(correct)} (target: 0). "
        f"Broken variants flagged: {caught} of {len(broken_rows)}. Not flagged: "
        f"{'; '.join(missed) if missed else 'none'}."
        + (
            " Not run (the broken variants run sequentially and are skipped "
            "where 1,000 fits would take over two minutes on this machine): "
            f"{'; '.join(SKIPPED)}."
            if SKIPPED
            else ""
        ),
        "",
        "How to read the misses: at a claimed epsilon of 1 the Gaussian "
        "mechanism with halved noise is still close to indistinguishable (its "
        "total variation is about 0.2), so a thousand runs cannot separate its "
        "privacy curve from the claimed one; the mechanism rows use "
        f"{MECHANISM_RUNS:,} runs (they cost microseconds) to show that the same "
        "test flags it given enough runs. With the generic default canary on "
        "multi-step estimators, the canary's influence is diluted across many "
        "noisy steps and only the last iterate is observed: a broken variant "
        "that is not flagged there shows the looseness of black-box auditing "
        "with a thousand runs, not a privacy property. The one-step DP-SGD rows "
        "are the near-worst case in which the audit is tight; the white-box "
        "audits below close the gap for the multi-step estimators.",
        "",
    ]
    lines += whitebox_section(wb_rows, wb_runs, n_canaries)
    lines += [
        ".. image:: audit_margins.png",
        "",
    ]
    with open(os.path.join(OUT, "audit.rst"), "w") as fh:
        fh.write("\n".join(lines))


def whitebox_section(wb_rows, wb_runs, n_canaries):
    if not wb_rows:
        return []
    lines = [
        "White-box audits: gradient canaries",
        "-----------------------------------",
        "",
        "``audit_gradient_canary`` (after Nasr et al., 2023, *Tight auditing of "
        "differentially private machine learning*) appends all-zero feature "
        "columns to ``X`` (no record has a gradient there, whatever the loss "
        "and the clipping) and, through an observer of "
        "``GaussianMechanism.privatize`` that is inert outside audits, adds a "
        "Dirac gradient canary (norm = the step's clip norm, in one such "
        "column) to the clipped gradient sum of every step with the step's "
        "Poisson probability when the canary is *in*, and nothing when it is "
        "*out*; it reads the canary's noisy coordinate after the noise, which "
        "is what the released iterates reveal (``w_{t+1} - w_t`` with the "
        "public learning rate and L2 term). The statistic is the "
        "log-likelihood ratio of the whole trace with the *declared* noise "
        "multiplier; the claim is the estimator's own ``dp_event_`` (it "
        "accounts every intermediate noisy sum, and its extra parts such as "
        "private medians or group marginals only make it larger).",
        "",
        f"Setup: the estimators at their defaults (epsilon = 1, delta = 1e-5) "
        f"on ``synthetic_inputs(n_samples=1000)`` (4 features) plus the canary "
        f"columns; {wb_runs:,} fits per audit with {n_canaries} canaries each, "
        "half in and half out, so each world has "
        f"{wb_runs * n_canaries // 2:,} trials (half choose the test, half "
        "evaluate it); Clopper-Pearson at 95%. The canaries of one fit are "
        "independent trials because the mechanism's noise is independent "
        "across coordinates, as it declares; the last row uses one canary per "
        "fit (fits alternate in and out), which needs no such assumption.",
        "",
        ".. list-table::",
        "   :header-rows: 1",
        "",
        "   * - estimator, canaries per fit",
        "     - variant",
        "     - fits",
        "     - trials per world",
        "     - nominal claim (eps, delta)",
        "     - audit delta",
        "     - claimed eps there",
        "     - lower bound (95%)",
        "     - ceiling",
        "     - flagged",
        "     - seconds",
    ]
    for r in wb_rows:
        lines += [
            f"   * - {r['subject']}",
            f"     - {r['variant']}",
            f"     - {r['runs']:,}",
            f"     - {r['trials']:,}",
            f"     - {r['claim']}",
            f"     - {r['audit_delta']:.0e}",
            f"     - {r['claimed']:.3f}",
            f"     - {r['lower']:.3f}",
            f"     - {r['ceiling']:.2f}",
            f"     - {flagged(r)}",
            f"     - {r['seconds']:.1f}",
        ]
    many = [r for r in wb_rows if r["trials"] > r["runs"]]
    correct = [r for r in many if r["variant"] == "correct"]
    halved = [r for r in many if r["variant"] != "correct"]
    lines += [
        "",
        f"With {n_canaries} canaries per fit: correct variants flagged "
        f"{sum(r['violation'] for r in correct)} of {len(correct)} (target: 0); "
        f"halved noise flagged {sum(r['violation'] for r in halved)} of "
        f"{len(halved)}, each with at most {wb_runs:,} fits.",
        "",
        "How to read it: at epsilon = 1 the halved-noise mechanisms are close to "
        "the claimed ones (in the central-limit regime of DP-SGD the whole run "
        "behaves like a Gaussian mechanism whose parameter only doubles, about "
        "0.25 to 0.5), so a few hundred trials per world cannot separate them "
        "whatever the test: the one-canary row is *conclusive* (its ceiling is "
        "far above the claim) but finds nothing, exactly like the black-box "
        "rows above. Tens of thousands of trials can, and the white-box view "
        "gets them cheaply: every canary of a fit is a trial. "
        "``DPFERMIClassifier`` is the hardest: the auditor observes the primal "
        "block only, whose noise is sqrt(2) times the effective noise the "
        "claim is computed with at the default ``dual_noise_ratio=1`` (the dual "
        "block carries the rest), so halving it brings the observed part only "
        "a factor sqrt(2) below the claim. What "
        "this audit cannot see: the clipping (the canary is crafted at the "
        "clip norm; the black-box *no clipping* rows cover it), the sampling "
        "(the auditor inserts the canary at the recorded rate) and the private "
        "preprocessing outside the noisy gradient sums.",
        "",
    ]
    return lines


def plot(rows):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 0.28 * len(rows) + 1.5))
    labels = [
        f"{r['subject']} | {r['variant']}".replace(" (defaults),", ",")
        for r in rows
    ]
    labels = [label.replace(" per fit", "/fit") for label in labels]
    margins = [r["lower"] - r["claimed"] for r in rows]
    colors = ["tab:red" if r["violation"] else "tab:blue" for r in rows]
    ax.barh(range(len(rows)), margins, color=colors)
    ax.axvline(0, color="k", lw=1)
    ax.set_yticks(range(len(rows)), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("lower bound - claimed epsilon at the audit delta (red: flagged)")
    fig.tight_layout()
    fig.savefig(os.path.join(OUT, "audit_margins.png"), dpi=110)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="100 runs, no file")
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--wb-runs", type=int, default=1000)
    parser.add_argument("--canaries", type=int, default=400)
    parser.add_argument(
        "--only", choices=["all", "white-box"], default="all",
        help="white-box: only group 4, printed, no file",
    )
    parser.add_argument(
        "--estimators",
        help="comma-separated estimator names: only their group-3 rows, "
        "printed as table rows, no file",
    )
    parser.add_argument(
        "--variants",
        default=",".join(VARIANTS),
        help="comma-separated variants for --estimators (default: all three)",
    )
    args = parser.parse_args()
    if args.estimators:
        variants = tuple(v.strip() for v in args.variants.split(","))
        unknown = set(variants) - set(VARIANTS)
        if unknown:
            parser.error(f"--variants: unknown {sorted(unknown)}; use {VARIANTS}")
        names = {n.strip() for n in args.estimators.split(",")}
        start = time.perf_counter()
        rows = estimator_rows(
            100 if args.quick else args.runs, args.jobs, names, variants
        )
        print("\n".join(line for r in rows for line in table_lines(r)))
        print(f"done in {(time.perf_counter() - start) / 60:.1f} min")
        return
    global COMMAND
    COMMAND = " ".join(["python benchmarks/bench_audit.py"] + sys.argv[1:])
    n_runs = 100 if args.quick else args.runs
    wb_runs = 100 if args.quick else args.wb_runs
    start = time.perf_counter()
    rows = []
    if args.only == "all":
        rows += gaussian_rows(
            max(n_runs, MECHANISM_RUNS) if not args.quick else n_runs
        )
        rows += dpsgd_rows(n_runs)
        rows += estimator_rows(n_runs, args.jobs)
    wb_rows = whitebox_rows(wb_runs, args.canaries)
    wall = time.perf_counter() - start
    if not args.quick and args.only == "all":
        os.makedirs(OUT, exist_ok=True)
        write_rst(rows, wb_rows, n_runs, wb_runs, args.canaries, wall)
        plot(rows + wb_rows)
    print(f"done in {wall / 60:.1f} min")


if __name__ == "__main__":
    main()
