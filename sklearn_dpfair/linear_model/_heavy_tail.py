# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Differentially private linear regression that stays accurate on heavy-tailed data."""

import math
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from .._base import (
    CLIP_NORM_CONSTRAINT,
    PRIVACY_PARAMETER_CONSTRAINTS,
    LinearRegressorMixin,
    PrivateEstimatorMixin,
)
from .._loss import AbsoluteLoss, HuberLoss, PinballLoss, SquaredLoss
from .._solvers._progress import progress_printer
from .._solvers.heavy_tail._fit import (
    ONE_PASS_RADIUS,
    RHO_RANGE,
    HeavyTailConfig,
    fit_heavy_tail,
    heavy_tail_setup,
    solver_runs_dpsgd,
    zcdp_budget,
)
from .._solvers.semi_dp._scaling import check_bounds_in_dtype
from ..preprocessing._bounds import check_bounds
from ..privacy import PrivacyBudget, PrivacyRecord
from ..privacy._random import check_noise_generator
from ..privacy._record import weights_caveats
from ..privacy._zcdp import ZCDP_ACCOUNTANT
from ..utils._array_api import (
    DEVICE_OPTIONS,
    detached_input,
    resolve_backend,
    to_numpy,
)
from ..utils._dask import refuse_dask_input
from ..utils._sklearn_compat import Interval, Options, StrOptions, _fit_context
from ..utils._validation import (
    check_delta_for_n,
    check_public_weights,
    check_sparse_sums_finite,
    float64_target,
    validate_data,
    warn_at_caller,
)

__all__ = ["HeavyTailDPRegressor"]

# The solvers need two disjoint batches at least (Algorithm 27 uses T + 1).
_MIN_SAMPLES = 2
# scikit-learn's deprecation cycle: removed two minor releases after the one
# that deprecates it.
_RHO_DEPRECATED_IN, _RHO_REMOVED_IN = "0.1.0", "0.3.0"


class HeavyTailDPRegressor(
    PrivateEstimatorMixin, LinearRegressorMixin, BaseEstimator
):
    """Linear regression under zCDP that needs no worst-case gradient bound.

    Clips per-sample gradients at a scale that adapts *privately* to the
    data (Lowy's thesis, chapter 4), so the excess risk depends on a moment
    of the gradient norms instead of their worst case, which is huge or
    infinite with outliers and heavy-tailed features or targets.

    The default solver ("dp-sgd", chosen by ``solver="auto"``) is
    multi-pass DP-SGD (Poisson sampling, per-example clipping, noise
    calibrated numerically with dp-accounting's RDP accountant, tail
    averaging) run in *private units*: the target is centred and scaled by
    its private median and median absolute deviation (``target_location_``,
    ``target_scale_``), each column of a dense ``X`` likewise
    (``feature_location_``, ``feature_scale_``: the steps run on the
    standardized columns and the coefficients are reported in the user's
    units; ``feature_bounds`` declares them instead, at no cost), the clip is
    a typical row's gradient in those units (from a private median of the
    squared row norms, which also sets the step size), and no bound on the
    coefficients is needed, so raw-scale columns and targets (a year, an
    income, a lab value) are fitted as well as standardized ones. With the squared loss
    and an intercept, one private Newton step then corrects the intercept
    for the clipping bias of skewed residuals (a clipped mean of the
    residuals with a larger one-dimensional clip, Gaussian mechanism, on its
    own share of the budget, "intercept_mean" in ``rho_spent_``; skipped
    where its noise would exceed a twentieth of the target's scale). Below
    a public minimum of ``epsilon * n_samples`` it releases the public zero
    model with a warning instead (see Notes). The one-pass solvers of the thesis
    ("sgd", "acsa", "prox", "localized") use every row at most once (disjoint
    batches) and are rho-zCDP under replace-one adjacency.

    By default nothing about the data has to be declared. Each private
    estimate spends its own part of a share (``tuning_fraction``) of the budget,
    recorded in ``rho_spent_`` (with the one-pass solvers the values sum to
    ``rho_``; with "dp-sgd" the DP-SGD steps are not a zCDP release and have
    no entry, see ``optimizer_epsilon_``).

    The guarantee is reported as (``epsilon_``, ``delta_``)-DP through
    dp-accounting, under the adjacency in ``adjacency_`` (add/remove for
    "dp-sgd", replace-one for the one-pass solvers; ``n`` public).

    Read more in the :ref:`User Guide <heavytail>`.

    Parameters
    ----------
    epsilon : float, default=1.0
        Target epsilon of (epsilon, delta)-DP. The zCDP budget is the largest
        rho that dp-accounting certifies for it. ``np.inf`` fits without
        privacy: with every solver the same objective (loss and penalty) is
        minimized by a full-batch solver (L-BFGS-B, or the
        quantile-regression linear program for the absolute and quantile
        losses) on any columns' scales, with a ``ConvergenceWarning`` if it
        stops short; the one-pass solvers' default radius does not apply
        (a declared ``radius`` projects the solution, as with "dp-sgd").
        Ignored when ``rho`` is set.
    delta : float, default=1e-5
        Target delta in (0, 1); keep it well below ``1/n_samples``.
    rho : float, default=None
        The zCDP budget, used directly instead of (``epsilon``, ``delta``):
        the fit's budget is then the (epsilon, ``delta``) that dp-accounting
        certifies for ``rho``-zCDP, split in shares of ``rho``. A finite
        ``rho`` must lie in [1e-100, 1e38] (epsilon about 1e-95 to 2e37):
        far beyond, the noise multipliers and the epsilon derived from it
        overflow float64.

        .. deprecated:: 0.1.0
           ``rho`` is deprecated in 0.1.0 and will be removed in 0.3.0 (a
           ``FutureWarning`` says so when it is set). Pass ``epsilon`` and
           ``delta``, the budget every estimator takes: zCDP stays the
           accountant's internal unit for splitting it.
    loss : {"squared_error", "huber", "absolute_error", "quantile"}, \
            default="squared_error"
        Per-sample loss. ``"huber"`` bounds the gradient's dependence on
        ``y`` and is recommended for heavy-tailed targets; ``"quantile"``
        fits the ``quantile``-th conditional quantile.
    huber_threshold : float, default=1.0
        Residual where the Huber loss turns linear: in units of the private
        target scale ``target_scale_`` (about the standard deviation of
        ``y``) with "dp-sgd", in units of ``y`` with the one-pass solvers.
        Also the public half-width ``h`` (units of ``y``) over which the
        one-pass solvers "sgd", "acsa" and "prox" smooth the
        ``"absolute_error"`` and ``"quantile"`` losses when
        ``smoothness="auto"`` (see ``smoothness``).
    quantile : float, default=0.5
        Level in (0, 1) of the quantile loss.
    penalty : {"l2", "l1", "elasticnet"} or None, default=None
        Penalty on the coefficients (never on the intercept). It is public,
        so it is never clipped; ``"l1"`` and ``"elasticnet"`` need the
        proximal solver.
    alpha : float, default=0.0
        Penalty strength, on the coefficients in the units of ``X``
        (``"l2"``: ``(alpha / 2) ||coef_||^2`` added to the mean loss,
        scikit-learn's ``Ridge(alpha=alpha * n_samples)`` for the squared
        loss) with every solver, whatever scales "dp-sgd" divides the
        columns by.
    l1_ratio : float, default=0.15
        Share of l1 in the elastic-net penalty.
    solver : {"auto", "dp-sgd", "sgd", "acsa", "prox", "localized"}, \
            default="auto"
        ``"dp-sgd"``: multi-pass DP-SGD with Poisson sampling (expected
        batch ``max(256, n / 50)``, 20 epochs) and the private clip and step
        size described above; the composition of its private scales and
        its steps is calibrated to (``epsilon``, ``delta``) under RDP.
        ``"sgd"``: noisy clipped SGD (Alg. 27), for strongly convex smooth
        risks. ``"acsa"``: noisy clipped accelerated SGD (Alg. 8, practical
        step size), for smooth convex risks. ``"prox"``: noisy clipped
        proximal SGD (Alg. 29), for l1/elastic-net penalties.
        ``"localized"`` (experimental, about ``n^2 log n`` work): the
        localized subgradient method (Alg. 7) for nonsmooth losses. ``"auto"``
        takes "prox" with an l1/elastic-net penalty, else "dp-sgd", which
        was better than the one-pass solvers everywhere on the benchmark of
        ``docs/benchmarks/heavytail.rst``.
    fit_intercept : bool, default=True
        Fit an intercept, as a coordinate with constant feature 1 that is
        clipped with the rest (the data are never centred, which would leak
        their mean).
    radius : float, default=None
        Public radius of the l2 ball (coefficients and intercept together)
        the model is projected on. None: no bound with "dp-sgd" (its privacy
        never relied on one), and 10 (in the data's units: put the data on a
        known scale) for the one-pass solvers, which project every iterate
        (not without privacy, see ``epsilon``). "dp-sgd" projects its
        averaged iterate (post-processing). When the
        released model lies on the ball, a warning says so: the check reads
        only the released coefficients.
    moment_order : float, default=2.0
        Moment order ``k >= 2`` of the gradient norms assumed finite; sets
        the exponent ``1/k`` of the clip rule.
    moment_bound : float, default=None
        Bound ``r_k`` on the k-th moment of the gradient norms; needed for
        ``clip_norm="theory"`` and ``mode="theory"`` only.
    clip_norm : float, "auto" or "theory", default="auto"
        Per-sample gradient clip ``C``. ``"auto"``: with "dp-sgd", the
        loss's gradient at one target-scale unit times the square root of
        the private median squared row norm times
        ``max(1, f / 5000)^(1/k)`` with ``f = eps n / sqrt(d + 1)`` (``eps``
        capped, once the calibrated noise multiplier is at its floor 0.1,
        at the epsilon the planned steps attain there: past it a larger
        clip only adds noise), in the units of the scaled target
        (``clip_norm_`` reports it in the units a float clip is given
        in); with the
        one-pass solvers, that median times ``max(1, f / clip_ref)^(1/k)``,
        where ``f`` is the solver's signal-to-noise factor (e.g.
        ``eps n / sqrt(d T)``; for "acsa" in practical mode at most
        ``n^(k/(2k-2))``, ``n`` for ``k = 2``, past which the thesis' bound
        for it no longer improves). ``"theory"``: the thesis' rule
        ``moment_bound * f^(1/k)``, very conservative on real data (one-pass
        solvers only: with "dp-sgd" under a finite budget ``fit`` and
        ``privacy_plan`` raise a ``ValueError``). A float is used as is
        (``np.inf`` only without privacy), in the units of ``y`` times the
        columns the steps see: ``x`` itself, or, where "dp-sgd" scales the
        columns by declared ``feature_bounds``, ``(x - centre) / half-width``
        (so that one clip suits columns in any units; an auto clip's
        private column scales the same). Within float64's range: under
        privacy the one-pass solvers refuse (``fit`` and ``privacy_plan``
        alike, before reading the data) a clip, or a ``"theory"`` rule's
        largest one, whose square or noise standard deviation squared
        overflows, and a ``moment_bound`` (or float clip) standing for the
        gradient scale whose square leaves the normal range; "dp-sgd"
        runs a float above ``sqrt(M) / (n + sigma)`` units of the private
        target scale (``M`` the largest float of the steps' dtype,
        ``sigma`` the noise multiplier) at that clip, and one below
        ``m / min(1, sigma)`` units (``m`` float64's smallest normal
        number, under which the Gaussian mechanism draws no noise) at that
        one, which ``clip_norm_`` reports: whether the fit runs never
        depends on the target's scale. The same name as in the other
        estimators.
    clip_ref : float, default=300.0
        Constant ``c0`` of the one-pass auto clip rule. A value of 100 was 1.2-2x
        worse than 300 on the symmetric and contaminated benchmark data and
        1.5x better on skewed noise (seeds disjoint from the recorded
        benchmark); larger values clip harder.
    smoothness : float or "auto", default="auto"
        Smoothness ``beta`` of the population risk of the data term (used by
        the one-pass solvers "sgd", "acsa" and "prox"). "auto" estimates it
        privately: the largest eigenvalue of the rows' second moment (a
        private estimate on a part of ``tuning_fraction``) times the loss's
        largest curvature. The absolute and quantile losses have none (their
        risk's curvature is the unknown noise density), so with "auto" these
        solvers minimize the loss smoothed by a uniform kernel of public
        half-width ``h = huber_threshold`` (equal to the loss wherever
        ``|y - x^T w| >= h``, quadratic between; Fernandes, Guerre and Horta
        2021), whose curvature is ``1 / h`` (absolute) or ``1 / (2 h)``
        (quantile); a float keeps the unsmoothed loss.
    strong_convexity : float or "auto", default="auto"
        Strong convexity ``mu`` of the population risk of the data term.
        "auto" estimates it privately for the squared and Huber losses; for
        the absolute and quantile losses (whose curvature from below is the
        unknown noise density) it is 0, so that ``mu`` is the L2 penalty's
        ``alpha`` only. The L2 penalty's strength is added to either value.
    max_iter : int or "auto", default="auto"
        Number of noisy *steps* ``T`` (not epochs, unlike the estimators
        whose ``max_iter`` counts passes over the data): the number of
        Poisson-sampled DP-SGD steps for "dp-sgd" ("auto": 20 expected
        epochs), the number of noisy queries for "sgd", "acsa" and "prox"
        (each on its own disjoint batch, so at most about one pass), and a
        cap on the steps of each phase for "localized" ("auto": the
        solver's formula). One-pass steps are capped so that every batch
        has at least ``max(16, 4 sqrt(d) / eps)`` rows (practical mode).
    tuning_fraction : float, default=0.1
        Share of the budget spent on the private auto estimates. One-pass
        solvers: split equally between the clip scale (if
        ``clip_norm="auto"``) and the curvature (if "auto"). "dp-sgd":
        raised to ``150 / (epsilon n)`` (at most 0.5) on small samples, and
        split in parts between the private scales: the range of ``y``
        (one), its median (three), its median absolute deviation (one), the
        median squared row norm (one) and, where the per-column scales are
        planned (``feature_bounds``), the columns' ranges (five), medians
        (one) and median absolute deviations (one), each shared by the
        columns: thirteen parts, or six (:meth:`PrivacyBudget.split
        <sklearn_dpfair.privacy.PrivacyBudget.split>` hands them out). The
        private intercept step of "dp-sgd" has its own fixed share of the
        budget, outside this one.
    mode : {"practical", "theory"}, default="practical"
        ``"theory"`` uses the thesis' exact constants (needs
        ``moment_bound``); ``"practical"`` anchors them on private estimates
        and caps the number of steps. One-pass solvers only: "dp-sgd" (the
        one "auto" runs without an l1 or elastic-net penalty) ignores it,
        its schedule and clip rule being its own (a ``moment_bound`` is
        still required with ``"theory"``).
    random_state : None, int, numpy.random.RandomState or numpy.random.Generator, \
default=None
        None (the default) draws the noise, the batches and the private
        estimates from fresh OS entropy: the only setting for a private
        release. Anything else is a seed, for tests and experiments: an int,
        or a ``RandomState`` or ``Generator`` instance, read (never advanced)
        as the seed its current state gives. Whoever knows a seed knows the
        noise, and fits given the same seed (clones in ``GridSearchCV`` or
        ``cross_validate`` included) draw the same noise: the privacy record
        of a seeded fit says that it is not a private release, and a
        ``PrivacyLedger`` refuses to compose fits that share a seed (its total
        is inf).
    clip_threshold : float, "auto" or "theory", default=None
        Deprecated alias of ``clip_norm``, removed in the next release;
        passing it warns (``FutureWarning``), passing both raises.
    feature_bounds : "auto", array-like of shape (2,) or (n_features, 2), \
or None, default="auto"
        How "dp-sgd" puts the columns on one scale before its steps.
        ``"auto"``: a private location and scale of each column of a dense
        ``X`` (the median and median absolute deviation of the column on
        grids placed by a noisy decade histogram of it: three zCDP releases a
        column, robust to outliers, recorded as "feature_range",
        "feature_location" and "feature_scale" in ``rho_spent_``, each the
        total over the columns, on a declared part of ``tuning_fraction``);
        planned only where ``epsilon * n_samples`` is large enough for those
        histograms to show the data (see Notes), with ``clip_norm="auto"``
        (a float clip is in the units of ``x``) and never for a sparse
        ``X`` (centring would densify it). Public ``(lower, upper)`` bounds
        of every column, or of each: the centre and half-width are the
        location and scale (a sparse ``X`` is divided by the largest
        absolute bound), and no budget is spent; values outside them are
        not clipped. Bounds whose half-width (largest magnitude for a
        sparse ``X`` or without an intercept) lies outside the normal range
        of float64 (the steps' dtype), or whose centre is beyond its largest
        float, are
        refused before any row is read (by every "dp-sgd" fit, whatever
        the budget). None: the columns as given. Ignored by the one-pass
        solvers and without privacy (the full-batch solver is
        scale-free).
    device : {"cpu", "cuda", "auto"}, default="cpu"
        Where the "dp-sgd" steps run, as in ``DPLogisticRegression``: "cpu"
        is numpy, "cuda" the same loop in PyTorch on the current GPU (the
        optional extra ``sklearn-dpfair[torch]``), "auto" "cuda" when
        PyTorch sees a GPU, else "cpu". The private scales, the intercept
        step and the non-private limit run on the host (a few passes over
        the data against the steps' twenty); the batches and the noise are
        drawn on the host from the same generator on every backend, so a
        seed gives the same coefficients up to floating-point round-off.
        With ``sklearn.set_config(array_api_dispatch=True)`` and an
        array-API ``X`` (e.g. a torch tensor) the steps run where ``X``
        lives, and ``device`` must be "auto" or X's device type. Fitted
        arrays are numpy. The one-pass solvers ("sgd", "acsa", "prox",
        "localized") run on the CPU only: "cuda" (or dispatched non-numpy
        input) raises a ValueError naming the solver, and "auto" selects
        the CPU for them. Sparse ``X`` runs on the CPU.
    verbose : int, default=0
        With ``verbose > 0`` the fit prints one line per expected epoch of
        "dp-sgd" (one per query of "sgd", "acsa" and "prox"): the norm of
        the released noisy update and the elapsed time, post-processing of
        the releases only (no loss, no clip count).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Coefficients.
    intercept_ : float
        Intercept (0.0 when ``fit_intercept=False``).
    solver_ : str
        The solver used ("dp-sgd", "sgd", "acsa", "prox" or "localized").
    n_iter_ : int
        Number of noisy steps ``T``.
    batch_size_ : float
        Rows per noisy query (the first phase's rows for "localized", the
        expected Poisson batch size for "dp-sgd").
    clip_norm_ : float
        The clip norm ``C`` used, in the units of ``y`` times the columns
        the steps saw (``x``, or ``x`` scaled by declared ``feature_bounds``
        or by an auto clip's private column scales; see ``clip_norm``; 0.0
        for the intercept-only and zero models). ``clip_threshold_``
        is its deprecated alias.
    noise_std_ : float
        Per-coordinate noise standard deviation of each noisy mean gradient.
    smoothness_ : float or None
        Smoothness used by the solver (declared or private), penalty
        included; None for "dp-sgd".
    strong_convexity_ : float or None
        Strong convexity used by the solver (declared or private); None for
        "dp-sgd".
    target_location_ : float
        "dp-sgd": private median of ``y`` (0.0 without intercept or for the
        public zero model; the intercept itself for the intercept-only
        model); the fit runs on ``(y - target_location_) /
        target_scale_``. 0.0 for the one-pass solvers.
    target_scale_ : float
        "dp-sgd": private median absolute deviation of ``y`` / 0.6745 (about
        its standard deviation); 1.0 for the one-pass solvers and the
        intercept-only and zero models.
    feature_location_ : ndarray of shape (n_features,)
        "dp-sgd": the location each column was centred at (private, or the
        centre of ``feature_bounds``); 0 where the columns were used as
        given.
    feature_scale_ : ndarray of shape (n_features,)
        "dp-sgd": the scale each column was divided by (its private median
        absolute deviation / 0.6745, or the half-width of
        ``feature_bounds``); 1 where the columns were used as given. With
        ``penalty="l2"`` the steps divide a column by
        ``max(feature_scale_, sqrt(alpha))`` instead, so that its penalty,
        ``alpha / divisor^2`` on the standardized coefficient (``alpha`` on
        the raw one), is at most 1: the objective is unchanged.
    radius_hit_ : str or None
        When the released ``[coef_, intercept_]`` lies on or near (at 90% or
        more of) the public radius (the declared ``radius``, or the one-pass
        solvers' default 10), the warning that said so: the fit is capped
        (an average of projected iterates lies inside the ball even when
        every iterate was capped). None otherwise (always
        None for "dp-sgd" without a radius). Post-processing of the release.
    rho_ : float
        zCDP budget the fit was planned in (the largest rho dp-accounting
        certifies for (``epsilon``, ``delta``), the unit
        :meth:`PrivacyBudget.split <sklearn_dpfair.privacy.PrivacyBudget.split>`
        hands shares of; or the deprecated ``rho``). The one-pass
        solvers' fits are ``rho_``-zCDP. With "dp-sgd" it only fixes the
        medians' shares and the calibration target: the fit's guarantee is
        (``epsilon_``, ``delta_``), not a zCDP bound.
    rho_spent_ : dict of str to float
        rho of each zCDP release of the fit: the private estimates and, for
        the one-pass solvers, the "optimizer" (its queries read disjoint
        rows, so it is rho-zCDP by parallel composition); the values then
        sum to ``rho_``. With "dp-sgd" only the private scales have an
        entry ("target_range", "target_location" (with an intercept),
        "target_scale", "row_norm_histogram", the columns' "feature_range",
        "feature_location" (with an intercept) and "feature_scale" (each the
        sum of one release per column) where they are planned, and
        "intercept_mean" for the
        private intercept step (squared loss with an intercept, where it is
        taken); "target_range" and "target_location" alone for the
        intercept-only model, none for the public zero model): the
        Poisson-subsampled Gaussian steps are accounted under RDP
        (their own epsilon is ``optimizer_epsilon_``), their noise being
        calibrated so that the composition of all steps meets (``epsilon``,
        ``delta``).
    optimizer_epsilon_ : float
        Epsilon at ``delta_`` of the optimizer's event alone (the last part
        of ``dp_event_``), computed by dp-accounting.
    epsilon_ : float
        Epsilon at ``delta_``, computed by dp-accounting from ``dp_event_``.
    epsilon_spent_ : float
        Deprecated alias of ``epsilon_`` (removed in the next release).
    delta_ : float
        Delta of the guarantee.
    noise_multiplier_ : float
        Noise std of each optimizer query in units of its sensitivity
        (``2 C`` for the one-pass solvers, ``C`` for "dp-sgd"); for
        "localized", that of the phase the event describes.
    dp_event_ : dp_accounting.DpEvent
        One ``ZCDpEvent`` per private estimate (with "dp-sgd", also one
        for the private intercept step, released after the steps: the
        composition is adaptive), composed with the
        optimizer's event, which the record's ``noise_multiplier``,
        ``clip_norm`` (the sensitivity), ``sampling_probability`` and
        ``steps`` describe: for "dp-sgd" the Poisson-subsampled Gaussian
        steps; for "sgd", "acsa" and "prox" one Gaussian release (the
        ``n_iter_`` queries read disjoint batches, so one record enters one
        query: parallel composition); for "localized" the self-composed
        Gaussian steps of one phase (the phases read disjoint rows, and each
        is rho-zCDP).
    adjacency_ : str
        "add_remove" for "dp-sgd", "replace_one" for the one-pass solvers.
    privacy_record_ : PrivacyRecord
        All of the above.
    privacy_caveats_ : list of str
        What was read from the private data outside the guarantee.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when X has string column names.

    See Also
    --------
    sklearn.linear_model.LinearRegression : Non-private least squares.
    sklearn.linear_model.HuberRegressor : Non-private Huber regression.

    Notes
    -----
    Validation errors (non-finite values, too few samples, negative
    ``sample_weight``) are a function of the data and are outside the
    guarantee, as for every estimator.

    ``sample_weight`` is public. A private fit uses the weights as given
    (nothing is read from them) and clips each record's *weighted* gradient
    (every solver; for the one-pass solvers' private curvature, each
    weighted second-moment term too), so one record moves a noisy sum by at
    most its clip bound whatever its weight (the guarantee is per record,
    not per unit of weight); the private medians and scales count each
    record with its weight capped at 1. Weights of 1 give exactly the
    unweighted fit; without privacy they are rescaled to mean 1. Pass
    weights on the scale of 1: weights summing to 1 shrink every record's
    term by ``n`` against the same noise (on 20,000 rows at ``epsilon=1``
    the fit returns the zero model). With
    "dp-sgd" and without privacy (``epsilon=np.inf``) nothing is clipped and
    a weight of 2 is a duplicated row (up to the solver's tolerance).

    Small samples: "dp-sgd" needs ``epsilon * n_samples >= max(100,
    10 (n_features + 1))`` (a public rule) to fit a model; below it the
    fit releases, with a warning, the intercept-only model: ``coef_ = 0``
    and ``intercept_`` a private quantile of ``y`` (the median, or the
    pinball loss's ``quantile``) on the whole budget, or 0 if its range
    histogram shows no bin above the noise. A ``quantile`` far from 1/2 is
    moved toward the median as far as the budget needs to draw it near the
    data (a public rule on ``epsilon``, ``n_samples`` and the grid): at
    ``quantile=0.9``, ``n_samples = 90``, ``epsilon = 1`` the drawn 0.9
    quantile had a median error of 530 target standard deviations over 40
    fits, the level the rule gives (0.64) 1.2. Without an intercept it
    releases the public zero model (``coef_ = 0``, ``epsilon_ = 0``)
    without reading the data. scikit-learn's sample-weight checks fit 15
    rows: both fits release an intercept of 0 (no bin rises above the
    noise). Above it, on 30 seeds of small
    data sets (``docs/benchmarks/heavytail_small.rst``), the test error at
    ``epsilon = 1`` stayed within 1.5x that of the constant predictor for
    n >= 300. After validation nothing depends on
    the data's content: whatever one record holds (huge finite values, a
    constant column, duplicated rows), the fit ends without an error or
    warning, each per-example term that enters a noisy sum is finite and
    within its clip bound (a term that cannot be computed in floating point,
    such as the gradient of an overflowed prediction, contributes 0), and
    the private medians count a non-finite norm as above their public grid.
    Where the private median of the squared row norms (public bins to 1e40)
    lies beyond that grid, as for columns used as given in units beyond
    about 1e19, no step size is safe: the steps run at step size 0 and the
    fit releases the intercept-only model with a warning that reads only
    that release (post-processing). The one-pass solvers draw their
    private medians (the clip's gradient norms, the curvature's squared
    row norms) on the same bins: a median beyond 1e40 makes them run no
    query and release the zero model, with a warning that reads only that
    release. Never fit a
    non-private scaler on the private data in front of this estimator: the
    preprocessing of a Pipeline must itself be private or public.

    Raw columns ("dp-sgd", ``feature_bounds="auto"``): each column's range is
    the fullest bin of a noisy decade histogram (and the contiguous bins
    above 4 noise standard deviations ``sigma``); the per-column scales are
    planned only when ``n_samples >= 6 sigma`` for the column's share of
    the budget (a public rule on ``epsilon``, ``n_samples``,
    ``n_features`` and ``tuning_fraction``: about ``epsilon = 1`` for 300
    rows and 10 columns), else the columns are used as given. A scale is
    drawn among the bins of a linear grid, at least a 242nd of the
    column's range (a column tied at one value for half its rows or more,
    an indicator, gets no smaller one; a year, whose spread is far below
    its decade's width, gets the bin that holds its spread), and a column
    whose bulk is 0 is left as is: declare such columns' ranges with
    ``feature_bounds`` where they are known. On scikit-learn's
    ``load_diabetes(scaled=False)`` at ``epsilon = 1`` the median test
    error of 7 fits fell from 1.04x to 0.77x that of the constant predictor
    (``docs/benchmarks/raw.rst``).

    References
    ----------
    .. [1] A. Lowy, "Private Learning: ...", PhD thesis, USC, 2023, chapter 4
       ("Private stochastic optimization with large worst-case Lipschitz
       parameter"), Algorithms 7, 8, 27 and 29.
    .. [2] M. Bun and T. Steinke, "Concentrated Differential Privacy:
       Simplifications, Extensions, and Lower Bounds", TCC 2016.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair import HeavyTailDPRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_t(5, size=(20000, 3))
    >>> y = X @ np.array([1.0, -1.0, 0.5]) + 1.0 + rng.standard_t(3, size=20000)
    >>> reg = HeavyTailDPRegressor(epsilon=1.0, random_state=0).fit(X, y)
    >>> reg.epsilon_ <= 1.0
    True
    >>> bool(np.allclose(reg.coef_, [1.0, -1.0, 0.5], atol=0.3))
    True
    >>> for name in sorted(reg.rho_spent_):  # zCDP; DP-SGD is under RDP
    ...     print(name)
    feature_location
    feature_range
    feature_scale
    intercept_mean
    row_norm_histogram
    target_location
    target_range
    target_scale
    """

    _parameter_constraints = {
        "epsilon": PRIVACY_PARAMETER_CONSTRAINTS["epsilon"],
        "delta": PRIVACY_PARAMETER_CONSTRAINTS["delta"],
        "random_state": PRIVACY_PARAMETER_CONSTRAINTS["random_state"],
        # Beyond RHO_RANGE the noise multipliers and the epsilon derived
        # from rho overflow float64 (see RHO_RANGE). A budget, so True (read
        # as rho=1) is refused, as it is for epsilon and delta.
        "rho": [
            Interval(Real, *RHO_RANGE, closed="both"),
            Options(Real, {math.inf}),
            None,
        ],
        "loss": [StrOptions({"squared_error", "huber", "absolute_error", "quantile"})],
        "huber_threshold": [Interval(Real, 0, None, closed="neither")],
        "quantile": [Interval(Real, 0, 1, closed="neither")],
        "penalty": [StrOptions({"l2", "l1", "elasticnet"}), None],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "l1_ratio": [Interval(Real, 0, 1, closed="both")],
        "solver": [StrOptions({"auto", "dp-sgd", "sgd", "acsa", "prox", "localized"})],
        "fit_intercept": ["boolean"],
        "radius": [Interval(Real, 0, None, closed="neither"), None],
        "moment_order": [Interval(Real, 2, None, closed="left")],
        "moment_bound": [Interval(Real, 0, None, closed="neither"), None],
        "clip_norm": [
            CLIP_NORM_CONSTRAINT,
            Options(Real, {math.inf}),
            StrOptions({"auto", "theory"}),
        ],
        # The deprecated alias takes exactly what clip_norm takes.
        "clip_threshold": [
            CLIP_NORM_CONSTRAINT,
            Options(Real, {math.inf}),
            StrOptions({"auto", "theory"}),
            None,
        ],
        "clip_ref": [Interval(Real, 0, None, closed="neither")],
        "smoothness": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "strong_convexity": [
            Interval(Real, 0, None, closed="left"),
            StrOptions({"auto"}),
        ],
        "max_iter": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "tuning_fraction": [Interval(Real, 0, 1, closed="left")],
        "mode": [StrOptions({"practical", "theory"})],
        "feature_bounds": ["array-like", StrOptions({"auto"}), None],
        "device": [StrOptions(set(DEVICE_OPTIONS))],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=1e-5,
        rho=None,
        loss="squared_error",
        huber_threshold=1.0,
        quantile=0.5,
        penalty=None,
        alpha=0.0,
        l1_ratio=0.15,
        solver="auto",
        fit_intercept=True,
        radius=None,
        moment_order=2.0,
        moment_bound=None,
        clip_norm="auto",
        clip_ref=300.0,
        smoothness="auto",
        strong_convexity="auto",
        max_iter="auto",
        tuning_fraction=0.1,
        mode="practical",
        random_state=None,
        clip_threshold=None,
        feature_bounds="auto",
        device="cpu",
        verbose=0,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.rho = rho
        self.loss = loss
        self.huber_threshold = huber_threshold
        self.quantile = quantile
        self.penalty = penalty
        self.alpha = alpha
        self.l1_ratio = l1_ratio
        self.solver = solver
        self.fit_intercept = fit_intercept
        self.radius = radius
        self.moment_order = moment_order
        self.moment_bound = moment_bound
        self.clip_norm = clip_norm
        self.clip_ref = clip_ref
        self.smoothness = smoothness
        self.strong_convexity = strong_convexity
        self.max_iter = max_iter
        self.tuning_fraction = tuning_fraction
        self.mode = mode
        self.random_state = random_state
        self.clip_threshold = clip_threshold
        self.feature_bounds = feature_bounds
        self.device = device
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the model with zero-concentrated differential privacy.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Public non-negative weights (see Notes): each record's weighted
            gradient is clipped, so a heavy record's influence stays within
            the clip, with every solver.

        Returns
        -------
        self : HeavyTailDPRegressor
            The fitted estimator.
        """
        refuse_dask_input(
            "HeavyTailDPRegressor", X=X, y=y, sample_weight=sample_weight
        )
        clip_norm = self._clip_norm()
        self._check_public_parameters(clip_norm)
        backend = self._backend(X)
        # One C-ordered copy up front (at most 2x the data) when X is
        # F-ordered, as DataFrames give, and CSC becomes CSR once: the
        # solvers gather batch rows. float32 X stays float32 (coef_ too); the
        # targets' private scales are computed in float64.
        # Detached before validation (see detached_input): no autograd graph
        # of the training rows, and no torch warning from validate_data's copy.
        X, y = detached_input(X), detached_input(y)
        X, y = validate_data(
            self,
            X,
            y,
            dtype=backend.input_float_dtypes,
            accept_sparse="csr",
            y_numeric=True,
            order="C",
        )
        # The private scales, the intercept step and the non-private limit
        # run on the host; only the steps move to the backend's device.
        if not sp.issparse(X):
            X = to_numpy(X)
        check_sparse_sums_finite(X)
        # Numeric strings are parsed and checked finite (validate_data does
        # not for a string target); the errors name y and show no value.
        y = float64_target(to_numpy(y))
        n_samples = X.shape[0]
        if n_samples < _MIN_SAMPLES:
            raise ValueError(
                f"HeavyTailDPRegressor needs at least {_MIN_SAMPLES} samples; "
                f"got n_samples = {n_samples}."
            )
        weights = check_public_weights(sample_weight, X)
        # No check of the data's content after validation (a constant X, a
        # constant y, duplicated rows all fit): an error raised in one world
        # and not in its neighbour would reveal the record.
        check_delta_for_n(self.delta, n_samples)

        setup = self._setup(
            clip_norm,
            n_samples,
            X.shape[1],
            sparse=sp.issparse(X),
            caveats=weights_caveats(weights),
        )
        result = fit_heavy_tail(
            X,
            y,
            self._make_loss(),
            setup,
            check_noise_generator(self.random_state),
            sample_weight=weights,
            backend=backend,
            progress=progress_printer(
                self.verbose,
                type(self).__name__,
                "epoch" if setup.solver == "dp-sgd" else "query",
            ),
        )
        if result.fallback is not None:
            warn_at_caller(
                result.fallback[0].upper() + result.fallback[1:] + ".",
                UserWarning,
            )
        hit = _radius_hit(result, setup.config, setup.is_private)
        self.radius_hit_ = hit
        if hit is not None:
            # A function of the released coefficients only (post-processing):
            # the warning reads nothing else, so it is no privacy caveat.
            warn_at_caller(hit, UserWarning)

        self.coef_ = np.asarray(result.coef).astype(X.dtype, copy=False)
        self.intercept_ = result.intercept
        self.solver_ = result.solver
        self.n_iter_ = result.n_iter
        self.batch_size_ = result.batch_size
        self.clip_norm_ = result.clip_norm
        self.noise_std_ = result.noise_std
        self.smoothness_ = result.smoothness
        self.strong_convexity_ = result.strong_convexity
        self.rho_ = setup.total_rho
        self.rho_spent_ = result.rho_spent
        self.optimizer_epsilon_ = result.optimizer_epsilon
        self.target_location_ = result.target_location
        self.target_scale_ = result.target_scale
        d = X.shape[1]
        self.feature_location_ = (
            np.zeros(d) if result.feature_location is None
            else np.asarray(result.feature_location, dtype=np.float64)
        )
        self.feature_scale_ = (
            np.ones(d) if result.feature_scale is None
            else np.asarray(result.feature_scale, dtype=np.float64)
        )
        self._set_privacy_record(result.record)
        return self

    def _backend(self, X):
        """Where the steps run: ``device`` for "dp-sgd", the CPU for the others."""
        sparse = sp.issparse(X)
        if sparse and self.device == "cuda":
            raise TypeError(
                "Sparse input X runs on the CPU only; use device='cpu' or "
                "pass a dense array."
            )
        on_array_api = solver_runs_dpsgd(self.solver, self.penalty)
        if not on_array_api and self.device == "cuda":
            raise ValueError(
                f"device='cuda': solver={self._one_pass_name()!r} runs on the "
                "CPU only (its disjoint-batch queries and private curvature "
                "are numpy code); use device='cpu' or 'auto', or "
                "solver='dp-sgd', which runs on GPUs."
            )
        try:
            # Sparse X runs on the host: "auto" picks the CPU for it.
            return resolve_backend(
                X, "cpu" if sparse else self.device, array_api_solver=on_array_api
            )
        except ValueError as exc:
            if on_array_api:
                raise
            raise ValueError(
                f"solver={self._one_pass_name()!r} runs on the CPU only: {exc}"
            ) from exc

    def _one_pass_name(self):
        # "auto" picks "prox" when it does not pick "dp-sgd".
        return "prox" if self.solver == "auto" else self.solver

    def _privacy_plan_event(self, n_samples, n_features, *, sparse=False):
        """The ``DpEvent`` a fit on ``n_samples`` x ``n_features`` will record.

        From the parameters and these public counts only (and whether ``X``
        is sparse, which decides whether the columns are centred and
        scaled privately): the plan the fit runs (:meth:`_setup`, see
        Notes).

        Parameters
        ----------
        n_samples, n_features : int
        sparse : bool, default=False

        Returns
        -------
        event : dp_accounting.DpEvent
        """
        return self._planned_setup(n_samples, n_features, sparse=sparse).event

    def _planned_setup(self, n_samples, n_features, *, sparse=False):
        if int(n_samples) < _MIN_SAMPLES:
            # The fit refuses so few rows: a plan of them would promise a
            # fit that cannot run (a search planning a one-row training
            # part would fail only once the candidate trained).
            raise ValueError(
                f"HeavyTailDPRegressor needs at least {_MIN_SAMPLES} samples; "
                f"got n_samples = {int(n_samples)}."
            )
        clip_norm = self._clip_norm()
        self._check_public_parameters(clip_norm)
        return self._setup(clip_norm, int(n_samples), int(n_features), sparse=sparse)

    def _setup(self, clip_norm, n_samples, n_features, *, sparse=False, caveats=()):
        """The set-up of a fit (config, budget, split, event): fit and plan alike.

        The one place where the parameters become a
        :class:`~sklearn_dpfair._solvers.heavy_tail._fit.HeavyTailSetup`,
        from public quantities only.
        """
        config = self._config(clip_norm, n_features)
        if solver_runs_dpsgd(self.solver, self.penalty) and not (
            config.feature_bounds is None or isinstance(config.feature_bounds, str)
        ):
            # "dp-sgd" divides each column by the bounds' half-width (or,
            # uncentred, their largest magnitude), in float64 whatever X's
            # dtype (standardized): one below float64's smallest normal
            # number makes the standardized rows overflow whatever they
            # hold. Refused from the parameter alone, before any row is
            # read, whatever the budget.
            check_bounds_in_dtype(
                self.feature_bounds,
                n_features,
                np.float64,
                center=config.fit_intercept and not sparse,
            )
        budget = self._budget(caveats)
        return heavy_tail_setup(n_samples, n_features, config, budget, sparse=sparse)

    def _budget(self, caveats=()):
        """The fit's (epsilon, delta) :class:`~sklearn_dpfair.privacy.PrivacyBudget`."""
        if self.rho is None:
            return PrivacyBudget(
                float(self.epsilon),
                float(self.delta),
                ZCDP_ACCOUNTANT,
                caveats=tuple(caveats),
            )
        warn_at_caller(
            "The parameter 'rho' of HeavyTailDPRegressor is deprecated in "
            f"{_RHO_DEPRECATED_IN} and will be removed in {_RHO_REMOVED_IN}; "
            # Without the value: a search over rho warns once.
            "pass epsilon and delta instead (rho is fitted as the (epsilon, "
            "delta) budget that dp-accounting certifies for it).",
            FutureWarning,
        )
        return zcdp_budget(float(self.rho), float(self.delta), caveats=caveats)

    # Sparse X is scaled by public bounds only (no private location and
    # scale), so the event depends on the layout.
    _plan_reads_layout = True

    def _planned_record(self, n_samples, n_features, *, sparse=False):
        """The record's event of a fit (:meth:`_setup`, as the fit's)."""
        setup = self._planned_setup(n_samples, n_features, sparse=sparse)
        return PrivacyRecord.from_event(
            setup.event,
            delta=float(self.delta),
            accountant=ZCDP_ACCOUNTANT,
            # DP-SGD's Poisson steps are add/remove; the one-pass solvers'
            # disjoint batches replace one record.
            adjacency=setup.adjacency,
            mechanism=f"HeavyTailDPRegressor ({setup.solver}): planned releases",
            # Several estimates of different noise: the fit's record names
            # its gradient steps' multiplier; the plan names none.
            noise_multiplier=None,
        )

    def _clip_norm(self):
        """``clip_norm``, or the deprecated ``clip_threshold`` (with a warning)."""
        if self.clip_threshold is None:
            return self.clip_norm
        if self.clip_norm != "auto":
            raise ValueError(
                "Pass clip_norm only: clip_threshold is its deprecated alias, "
                f"and both were given (clip_norm={self.clip_norm!r}, "
                f"clip_threshold={self.clip_threshold!r})."
            )
        warn_at_caller(
            "clip_threshold is deprecated and will be removed in the next "
            "release; use clip_norm (the name every estimator of the package "
            "uses).",
            FutureWarning,
        )
        return self.clip_threshold

    @property
    def epsilon_spent_(self):
        """Deprecated alias of ``epsilon_``."""
        if not hasattr(self, "epsilon_"):
            raise AttributeError("epsilon_spent_")
        warn_at_caller(
            "epsilon_spent_ is deprecated and will be removed in the next "
            "release; use epsilon_ (the name every estimator uses).",
            FutureWarning,
        )
        return self.epsilon_

    @property
    def clip_threshold_(self):
        """Deprecated alias of ``clip_norm_``."""
        if not hasattr(self, "clip_norm_"):
            raise AttributeError("clip_threshold_")
        warn_at_caller(
            "clip_threshold_ is deprecated and will be removed in the next "
            "release; use clip_norm_.",
            FutureWarning,
        )
        return self.clip_norm_

    def _check_public_parameters(self, clip_norm):
        # The messages name the parameter the user set: clip_norm, or its
        # deprecated alias clip_threshold (which _clip_norm returned).
        clip_name = "clip_norm" if self.clip_threshold is None else "clip_threshold"
        needs_bound = self.mode == "theory" or clip_norm == "theory"
        if needs_bound and self.moment_bound is None:
            raise ValueError(
                "moment_bound is required with mode='theory' or "
                f"{clip_name}='theory': the thesis' constants use the "
                "gradient-norm moment r_k."
            )
        if self.penalty in ("l1", "elasticnet") and self.solver not in ("auto", "prox"):
            raise ValueError(
                f"penalty={self.penalty!r} needs solver='prox' (or 'auto'); "
                f"solver={self.solver!r} handles only smooth penalties."
            )
        budget = self.rho if self.rho is not None else self.epsilon
        if (
            clip_norm == "theory"
            and solver_runs_dpsgd(self.solver, self.penalty)
            and not math.isinf(budget)
        ):
            # The thesis' rule sets the one-pass solvers' clip; "dp-sgd"
            # clips in the units of its private scales. Refused here, where
            # privacy_plan and fit check alike, before any data access.
            solver = (
                "'auto' (which runs 'dp-sgd')"
                if self.solver == "auto"
                else "'dp-sgd'"
            )
            raise ValueError(
                f"{clip_name}='theory' belongs to the one-pass solvers "
                "('sgd', 'acsa', 'prox', 'localized'); with "
                f"solver={solver} use {clip_name}='auto' or a float."
            )
        fixed_clip = clip_norm not in ("auto", "theory")
        if fixed_clip and math.isinf(clip_norm) and not math.isinf(budget):
            raise ValueError(
                f"{clip_name}=inf needs infinite noise under a finite "
                "budget; use it only with epsilon=inf or rho=inf."
            )

    def _make_loss(self):
        if self.loss == "squared_error":
            return SquaredLoss()
        if self.loss == "huber":
            return HuberLoss(self.huber_threshold)
        if self.loss == "absolute_error":
            return AbsoluteLoss()
        return PinballLoss(self.quantile)

    def _config(self, clip_norm, n_features):
        bounds = self.feature_bounds
        if bounds is not None and not isinstance(bounds, str):
            bounds = check_bounds(bounds, n_features, "feature_bounds")
        return HeavyTailConfig(
            loss_name=self.loss,
            solver=self.solver,
            clip_norm=clip_norm,
            radius=None if self.radius is None else float(self.radius),
            moment_order=float(self.moment_order),
            moment_bound=self.moment_bound,
            clip_ref=float(self.clip_ref),
            smoothness=self.smoothness,
            strong_convexity=self.strong_convexity,
            max_iter=self.max_iter,
            tuning_fraction=float(self.tuning_fraction),
            mode=self.mode,
            penalty=self.penalty,
            alpha=float(self.alpha),
            l1_ratio=float(self.l1_ratio),
            fit_intercept=bool(self.fit_intercept),
            feature_bounds=bounds,
            smoothing_width=float(self.huber_threshold),
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # The default budget cannot always reach the R^2 thresholds of
        # scikit-learn's common checks on their tiny datasets.
        tags.regressor_tags.poor_score = True
        # CSR/CSC X: every solver works on the stored entries only.
        tags.input_tags.sparse = True
        return tags


# The one-pass solvers release an average of projected iterates, which lies
# strictly inside the ball even when every iterate was capped (an "sgd" fit
# of a raw target with intercept 150 released a norm of 9.95 of 10, the
# non-private one 9.59): a model this close to the radius is reported as
# capped. The check reads only the released coefficients.
_NEAR_RADIUS = 0.9


def _radius_hit(result, config, private):
    """The warning text when the released model lies on the public radius, else None."""
    if config.radius is None and (result.solver == "dp-sgd" or not private):
        # No bound: "dp-sgd" needs none, and the non-private limit of the
        # one-pass solvers drops their default one.
        return None
    radius = config.radius
    which = "public"
    if radius is None:
        radius = ONE_PASS_RADIUS
        which = f"one-pass solver {result.solver!r}'s default"
    s = 1.0 if config.fit_intercept else 0.0
    full = np.append(result.coef, result.intercept / s if s else 0.0)
    norm = float(np.linalg.norm(full))
    if norm < _NEAR_RADIUS * radius:
        return None
    # The rule, not this fit's norm: one cause warns once across the folds
    # of a search (a warning shows once per text).
    return (
        f"the released coefficients lie on or near the {which} "
        f"radius={radius:g} (||[coef_, intercept_]|| >= "
        f"{_NEAR_RADIUS:g} radius): the fit is capped, and its "
        "predictions may be far from the data's scale; pass a larger radius, "
        "or radius=None with solver='dp-sgd', which needs no bound (this "
        "check reads only the released coefficients: post-processing)"
    )
