# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Differentially private logistic regression (binary and multinomial)."""

import math
from collections.abc import Mapping
from dataclasses import replace
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from .._base import (
    CLIP_NORM_CONSTRAINT,
    DELTA_CONSTRAINT,
    DELTA_OR_ZERO_CONSTRAINT,
    EPSILON_CONSTRAINT,
    PRIVACY_PARAMETER_CONSTRAINTS,
    LinearClassifierMixin,
    PrivateEstimatorMixin,
    charged_if_raised_after_releases,
)
from .._loss import BinaryLogisticLoss, SoftmaxLoss
from .._solvers._distributed import (
    distribute_training_data,
    fit_dp_sgd_dask,
    is_dask_collection,
    partition_columns_off_unit_scale,
    partition_label_counts,
    refuse_dask_beside_in_memory_x,
    set_dask_input_features,
)
from .._solvers._feature_scaling import (
    plan_feature_scaling,
    public_feature_scaling,
    public_scaling_plan,
    require_public_bounds,
    warn_unscaled_columns,
)
from .._solvers._frank_wolfe import resolve_feature_inf_bound
from .._solvers._intercept_only import (
    InterceptOnlySetup,
    affords_model,
    intercept_only_model,
    intercept_only_setup,
    label_counts,
    small_budget_message,
)
from .._solvers._newton import NewtonParams
from .._solvers._private_fit import (
    DPSGDParams,
    FrankWolfeParams,
    LinearFit,
    OutputPerturbationParams,
    _numpy_dtype,
    dp_newton_setup,
    dp_sgd_setup,
    fit_dp_frank_wolfe,
    fit_dp_newton,
    fit_dp_sgd,
    fit_output_perturbation,
    frank_wolfe_setup,
    output_perturbation_setup,
)
from .._solvers._progress import progress_printer
from .._solvers._schedules import check_sgd_steps, resolve_epochs
from ..federated._fit import (
    SiloOptions,
    check_silo_plan,
    fit_silos,
    plan_fit_silos,
    plan_silos,
    silo_attributes,
    warn_unused_silo_options,
)
from ..privacy import PrivacyBudget
from ..privacy._ledger import PrivacyLedger
from ..privacy._random import check_noise_generator
from ..privacy._record import WEIGHTS_CAVEAT
from ..utils._array_api import (
    DEVICE_OPTIONS,
    detached_input,
    resolve_backend,
    to_numpy,
)
from ..utils._sklearn_compat import Interval, StrOptions, _fit_context
from ..utils._validation import (
    check_classifier_metadata,
    check_sparse_sums_finite,
    planned_class_count,
    refuse_weights_with_silos,
    validate_data,
    warn_at_caller,
)

__all__ = ["DPLogisticRegression"]


# records per free parameter below which small_budget="auto" releases the
# intercept-only model (benchmarks/bench_fermi_small.py, DPLogisticRegression
# rows: with 5 no cell of Adult, German credit or COMPAS subsamples predicted
# worse than the majority class; 15 cost up to 0.078 on real data).
_RECORDS_PER_PARAMETER = 5.0

# The parameters that only a federated fit reads (execution="dask" without
# silos is refused instead: it would say where the silos run).
_SILO_OPTIONS = (
    "silo_epsilon",
    "silo_delta",
    "server_weights",
    "secure_aggregation",
    "shuffle",
)


class DPLogisticRegression(LinearClassifierMixin, PrivateEstimatorMixin, BaseEstimator):
    """Logistic regression with (epsilon, delta)-differential privacy.

    Binary problems fit one logit; three or more classes fit a multinomial
    (softmax) model jointly, never one-vs-rest with a split budget.

    Four solvers:

    * ``"dp-sgd"`` (default): noisy clipped minibatch SGD with Poisson
      sampling. Each example's gradient is clipped to ``clip_norm`` and
      Gaussian noise calibrated by dp-accounting is added to every batch sum.
      Needs no bound on the data, so ``epsilon`` and ``delta`` are the only
      privacy inputs. Guarantee under add/remove-one adjacency.
    * ``"output-perturbation"``: a certified L2-regularized ERM solve, then
      one Gaussian on the coefficients. Rows are clipped to
      ``feature_norm_bound`` and ``alpha > 0`` is required (it sets the
      sensitivity). Guarantee under replace-one adjacency.
    * ``"dp-frank-wolfe"``: full-batch Frank-Wolfe over the l1 ball of
      radius ``l1_radius``, each step's vertex chosen by the exponential
      mechanism; features are clipped coordinate-wise to
      ``feature_inf_bound``. Error grows with ``log(n_features)``, not its
      square root, and ``coef_`` has at most ``fw_steps`` nonzeros: for wide
      (one-hot, hashed) data with a sparse truth. Accepts scipy.sparse ``X``
      without densifying it. Guarantee under add/remove adjacency.
    * ``"dp-newton"``: a few full-batch private Newton steps by the
      double-noise mechanism (Ganesh, Haghifam, Steinke and Thakurta,
      NeurIPS 2023): each step releases a noisy gradient, a noisy Hessian
      trace (which sets the shift ``lambda``) and a noisy regularized Newton
      direction. Rows are clipped to ``feature_norm_bound`` (required).
      Binary problems only. ``newton_steps`` passes over the data instead of
      DP-SGD's ``max_iter`` epochs of random row gathers: at ``n = 1e6``,
      ``d = 100`` it fits several times faster than DP-SGD with the same
      accuracy; on small data (UCI Adult) or small ``epsilon n`` DP-SGD is
      more accurate. Guarantee under add/remove adjacency.

    Read more in the :ref:`User Guide <dplogreg>`.

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy budget. ``np.inf`` (without ``noise_multiplier``) gives the
        non-private fit: with "dp-sgd", the full-batch L-BFGS-B minimizer of
        the same objective on any columns' scales (no noise, no clipping, no
        step size; a ``ConvergenceWarning`` if it stops short); the other
        solvers run their own exact solvers without noise.
    delta : float, default=1e-5
        Privacy parameter delta in [0, 1); keep it well below ``1/n_samples``.
        ``delta=0`` asks for pure epsilon-DP, which
        ``solver="output-perturbation"`` gives with Laplace noise (the
        other solvers need ``delta > 0``).
    solver : {"dp-sgd", "output-perturbation", "dp-frank-wolfe", "dp-newton"}, \
default="dp-sgd"
        Private training algorithm. Every solver accepts scipy.sparse
        ``X`` without densifying it.
    clip_norm : float, default=1.0
        Per-example gradient clip threshold (dp-sgd), the sensitivity of each
        batch sum. Public; never derived from the data.
    noise_multiplier : float, default=None
        Override the calibrated noise multiplier (dp-sgd). The budget is still
        enforced: a fit whose noise spends more than ``epsilon`` raises
        :class:`~sklearn_dpfair.exceptions.PrivacyBudgetError`. The other
        solvers calibrate their noise from ``epsilon`` and ``delta`` and
        refuse it (a ``ValueError`` before the data are read, from ``fit``
        and ``privacy_plan`` alike).
    batch_size : int, "auto" or "full", default="auto"
        Expected Poisson batch size (dp-sgd). "auto" uses 5% of the rows (at
        least 256); "full" runs noisy full-batch gradient descent.
    max_iter : int or "auto", default="auto"
        Number of epochs (dp-sgd). The number of noisy steps is
        ``ceil(max_iter / q)`` with ``q = batch_size / n_samples``; it is fixed
        before the data are read (no early stopping on private data).
        "auto" takes ``min(20, max(2, ceil(1e6 / n_samples)))`` epochs: 20 up
        to 50,000 rows (tuned on UCI Adult), fewer beyond, where the noise
        and the batches are small enough that few passes converge (2 from
        500,000 rows; see :ref:`the scale benchmark <bench_scale>`). Only
        the public ``n_samples`` is read. A schedule of more than 10**6
        noisy steps is refused before the fit (pass a larger ``batch_size``
        or a smaller ``max_iter``).
    batch_sampling : {"poisson", "balls_and_bins"}, default="poisson"
        How dp-sgd draws its batches, and so how it is accounted.
        "poisson": each row joins each step with probability ``q``
        (Poisson-subsampled Gaussian). "balls_and_bins": every epoch places
        each row in exactly one of its ``t = round(1 / q)`` steps, uniformly
        and independently of the other rows, and the run is accounted
        exactly as a Gaussian *random allocation* (Feldman and Shenfeld,
        ICML 2026) by the optional package ``pld-accounting``
        (``pip install pld-accounting==2.0``), with its PLD whatever
        ``accountant`` says (with ``t = 1``, every row in every step: the
        self-composed Gaussian, by dp-accounting's PLD); whole epochs
        (``max_iter`` rounded up). Often a
        smaller noise for the same budget at larger epsilon (1.43 instead of
        1.73 with RDP and 1.59 with PLD at epsilon = 1, delta = 1e-5, 20
        steps per epoch, 2 epochs), the same at
        small epsilon; the same cost per epoch (see
        :ref:`the scale benchmark <bench_scale>`). Not a fixed-size shuffle,
        which has no tight analysis. Central in-memory fits only, without
        private feature scales.
    learning_rate : float or "auto", default="auto"
        Constant step size (dp-sgd). "auto" sets it from public quantities
        only: ``min(8, 0.2 / r)`` with ``r = sigma sqrt(n_params) / (q n)`` the
        noise on the averaged gradient relative to ``clip_norm`` (1.0 when
        ``epsilon=inf``), capped at ``1 / alpha``. Tuned once on UCI Adult,
        never on the data at hand. A given rate needs
        ``learning_rate * alpha < 2``, else the penalty's step diverges (a
        ``ValueError`` before the data are read).
    alpha : float, default=0.0
        L2 penalty ``alpha/2 ||w||^2``. Free for dp-sgd and dp-frank-wolfe
        (it is data independent); required positive for output-perturbation,
        where the noise scales as ``1/(alpha n)`` and the penalty covers the
        intercept too, ``alpha/2 (||w||^2 + b^2)`` (its sensitivity needs
        strong convexity in every coordinate), at ``epsilon=np.inf`` as well.
        ``w`` are the coefficients the solver fits: with
        ``feature_scaling="auto"`` a private fit penalizes those of the
        mapped columns (unit scale; the plan's sensitivities assume them),
        so its limit as ``epsilon`` grows is not the ``epsilon=np.inf`` fit,
        which penalizes the coefficients in the user's units.
    fit_intercept : bool, default=True
        Whether to fit an intercept (through a constant feature of value 1;
        the data are never centred by their exact mean, which would leak
        it: see ``feature_scaling``).
    classes : array-like of shape (n_classes,), default=None
        The public label set. If None it is inferred from ``y`` with a
        :class:`~sklearn_dpfair.exceptions.PrivacyLeakWarning`, and the
        guarantee does not cover which labels occur. ``classes_`` holds it
        sorted whatever the declared order, as in scikit-learn.
    feature_norm_bound : float, default=None
        Public bound ``R`` on the row norms, enforced by clipping rows
        (output-perturbation and dp-newton; required there). With
        ``feature_scaling="auto"`` it bounds the rows of the columns mapped
        by ``feature_bounds`` (``sqrt(n_features)`` holds every row within
        the bounds).
    l1_radius : float, default=None
        Radius ``r`` of the constraint ``||w||_1 <= r`` over the coefficients
        (dp-frank-wolfe; required there; the intercept has its own bound
        ``|b| <= 5``). Public: it sets the sensitivity of every selection, so
        choose it without looking at the data.
    feature_inf_bound : float, default=None
        Public bound ``B`` on ``|x_ij|`` (dp-frank-wolfe): every feature is
        clipped to ``[-B, B]`` before use. If None it is read from ``X`` with
        a :class:`~sklearn_dpfair.exceptions.PrivacyLeakWarning` and the
        guarantee does not cover it. With ``feature_scaling="auto"`` it
        bounds the columns mapped by ``feature_bounds`` and is required.
    fw_steps : int, default=None
        Number of Frank-Wolfe steps ``T`` (dp-frank-wolfe); ``coef_`` has at
        most ``T`` nonzeros. None sets it from the rate formula
        ``T = 0.08 (B r n sqrt(8 rho) / ln J)^(2/3)``, with ``rho`` the zCDP
        budget of the selections and ``J`` the number of vertices, capped at
        1000: public quantities only (``n`` is public). At most 10,000.
    newton_steps : int, default=10
        Number of private Newton steps (dp-newton), each one pass over the
        data and three Gaussian releases; fixed before the data are read.
        On synthetic data (n = 1e4 to 1e5, d = 20 or 100, epsilon = 1) 10
        steps were more accurate than 3 or 5 and within 0.001 of 15. At
        most 10,000.
    curvature : {"upper-bound", "hessian"}, default="upper-bound"
        Curvature matrix of the Newton steps (dp-newton). "upper-bound": the
        logistic curvature bound ``X^T X / (4 n)``, computed once, so every
        later step costs two matrix-vector products; "hessian": the Hessian
        at each iterate (one ``n d^2`` product per step, fewer steps needed
        at large ``epsilon``). Same privacy cost.
    tol : float, default=1e-6
        Certified distance of the solve to the exact minimizer
        (output-perturbation); it adds ``2 tol`` to the sensitivity.
    feature_scaling : {"auto"} or None, default=None
        ``"auto"`` maps every column to unit scale before the solver runs
        and reports ``coef_`` and ``intercept_`` in the user's units: by
        ``feature_bounds`` when given (public, no budget), else by
        private robust statistics (a median, then quantiles of the centred
        column, on a public log-scale grid) that spend 10% of the zCDP
        budget, composed into the same ``dp_event_`` (the steps' noise is
        calibrated to the rest; accounted with RDP). Use it on raw columns
        (ages, incomes, years): with the fixed clip norm and step size of
        DP-SGD, or the fixed row bounds of the other solvers, a column of
        large magnitude otherwise saturates every clipped gradient (or
        clipped row). Where the rows are too few for the budget to resolve
        a quantile (a public rule of ``n``, ``epsilon`` and the number of
        columns: at ``epsilon = 1`` and 6 columns, 2,000 rows are too few),
        no statistics are drawn and the columns are used as given, with the
        warning below on raw columns: declare ``feature_bounds`` there.
        Private statistics are drawn by central in-memory
        ``"dp-sgd"`` fits only; every other fit path takes
        ``feature_bounds`` (a ``ValueError`` naming them otherwise): the
        federated fit (``silos=``, every silo maps its own rows by the same
        public map when some silo is private; a silo at ``epsilon``
        ``inf`` without ``noise_multiplier`` among private ones takes its
        steps without noise or clipping, so a value far outside the bounds
        moves the model; a federation whose silos are all non-private
        standardizes the columns by their exact moments instead, whatever
        the bounds), a Dask collection (every partition maps its rows at
        any finite ``epsilon``; the non-private limit standardizes them by
        their exact moments, bounds or not), and the ``"dp-newton"``,
        ``"output-perturbation"`` and ``"dp-frank-wolfe"`` solvers, whose
        public bounds
        (``feature_norm_bound``, ``feature_inf_bound``, ``l1_radius``) then
        apply to the *scaled* columns and coefficients; ``"dp-frank-wolfe"``
        then needs ``feature_inf_bound`` (1 bounds every value within
        ``feature_bounds``). The non-private limit of the central solvers
        (``epsilon=np.inf``, an exact solve on any scale) maps nothing; on
        a Dask collection, bounds or not, it standardizes the columns by
        their exact moments (nothing is released) and runs the noiseless
        steps on them; with ``fit_intercept=False`` it only divides them
        by their root mean squares, so offset columns stay nearly
        collinear and the default epochs may stop short of the minimizer
        (pass a larger ``max_iter``).
        Sparse ``X`` needs ``feature_bounds`` (a ``ValueError`` otherwise,
        decided from the layout alone). The private statistics' public grid
        spans ``[-1e8, 1e8]``: values beyond are clipped to it, and a column
        whose released median lies at its edge (a Unix timestamp) is scaled
        by about ``1e8`` with a warning; declare its bounds. A spread below
        the location's resolution (a year near 2000 is located to within
        about 1) is scaled by that resolution, and by at least 1.
        None: the columns are used as given (right for columns already on a
        unit scale: on Adult's 97 standardized columns the private scales
        cost up to 0.0014 accuracy at epsilon = 0.3 to 3). A private DP-SGD
        fit then warns when more than a quarter of a column's values lie
        beyond +-5 (an input check, outside the guarantee; no value shown).
    feature_bounds : array-like of shape (n_features, 2), default=None
        Public ``(lower, upper)`` range of every column, for
        ``feature_scaling="auto"``: the column is mapped by its midpoint and
        half-width (without an intercept, or for sparse ``X``, divided by
        its largest magnitude and not centred: a sparse column whose range
        lies away from 0 keeps its offset, and the fit warns; subtract a
        public value first). Invalid bounds (``lower >= upper``, a bound
        that is not finite, a wrong shape) raise a ``ValueError`` at every
        ``epsilon``, ``inf`` included. The map is public: it reads
        no data and spends no budget, so ``dp_event_`` is that of the
        unscaled fit. Values outside are not clipped by the map (a value
        beyond the float range is rounded to the largest float); the
        solver's own clip (gradient norm, ``feature_norm_bound``,
        ``feature_inf_bound``) bounds their influence, as it bounds any
        record.
    accountant : {"rdp", "pld"}, default="rdp"
        dp-accounting accountant for DP-SGD and dp-newton. Output perturbation (one
        Gaussian) is always accounted with PLD, which is exact for it;
        dp-frank-wolfe (zCDP selections) always with RDP, so a
        ``PrivacyLedger`` passed with it must be of kind "rdp"; so is a fit
        that draws private column scales (``feature_scaling``: zCDP
        quantiles, which PLD cannot read; ``privacy_record_.accountant``
        says "rdp").
    random_state : None, int, numpy.random.RandomState or numpy.random.Generator, \
default=None
        None (the default) draws the noise and the batches from fresh OS
        entropy: the only setting for a private release. Anything else is a
        seed, for tests and experiments: an int, or a ``RandomState`` or
        ``Generator`` instance, read (never advanced) as the seed its current
        state gives. Whoever knows a seed knows the noise, and fits given the
        same seed (clones in ``GridSearchCV`` or ``cross_validate`` included)
        draw the same noise: the privacy record of a seeded fit says that it
        is not a private release, and a ``PrivacyLedger`` refuses to compose
        fits that share a seed (its total is inf).
    device : {"cpu", "cuda", "auto"}, default="cpu"
        Where the dp-sgd solver runs. "cpu" is numpy. "cuda" runs the same
        solver in PyTorch on the current GPU; it needs the optional extra
        (``pip install 'sklearn-dpfair[torch]'``; without it an
        ``ImportError`` names the extra). "auto" is "cuda" when PyTorch sees a
        GPU, else "cpu". Fitted arrays are numpy either way, so a model
        trained on a GPU pickles and predicts anywhere. With
        ``sklearn.set_config(array_api_dispatch=True)`` and an array-API ``X``
        (e.g. a torch tensor), the fit runs where ``X`` lives and ``coef_``
        and ``intercept_`` are arrays of X's namespace on X's device;
        ``device`` must then be "auto" or X's device type. Batches and noise
        are drawn on the host from the same generator on every backend, so a
        seed gives the same coefficients up to floating-point round-off.
        The private fits of "dp-newton", "output-perturbation" and
        "dp-frank-wolfe" run on the CPU only ("auto" selects it there;
        tensors under dispatch and "cuda" raise a ValueError); their
        ``epsilon=np.inf`` limit, an exact scipy solve on host copies, takes
        tensors as dp-sgd's does.
        Sparse ``X`` runs on the CPU ("auto" selects it, "cuda" raises a
        TypeError).
    silo_epsilon : float or dict, default=None
        Federated mode (``fit(X, y, silos=...)``) only: the budget of every
        silo, or a dict from silo id to budget; None uses ``epsilon``. Each
        silo's messages are ``(silo_epsilon, silo_delta)``-DP in its own
        records against an untrusted server (ISRL-DP). A central fit (no
        ``silos``) ignores the federated-only parameters, with a
        ``UserWarning`` naming those set away from their defaults.
    silo_delta : float or dict, default=None
        Federated mode only: delta of every silo (or dict per silo), each
        below ``1/n_i``; None uses ``delta``.
    server_weights : {"uniform", "size"} or dict, default="uniform"
        Federated mode only: public weights of the silos' messages in the
        server's average: equal, proportional to the silo sizes (public
        metadata), or a dict from silo id to a positive weight.
    execution : {"local", "dask"}, default="local"
        Federated mode only: run the silos in this process, or as actors on
        the current ``dask.distributed`` client (optional extra
        ``pip install 'sklearn-dpfair[dask]'``); each silo's rows are placed
        once on a worker and only the model and the noisy messages travel.
        (A Dask collection ``X`` needs no setting: it is fitted by central
        DP-SGD on the current client's workers, see ``fit``.)
    secure_aggregation : bool, default=False
        Federated mode only: also report ``central_epsilon_``, the guarantee
        that holds *if* the server sees only the weighted sum of the messages
        (secure aggregation deployed; not provided by this library).
    shuffle : bool, default=False
        Federated mode only: the shuffle-model protocol (one Laplace-noised
        record per silo per round, reports shuffled by a trusted shuffler);
        ``shuffle_epsilon_`` reports the amplified guarantee beside the
        ISRL-DP one. Both are for replace-one adjacency (one record of a
        silo replaced), not the add/remove adjacency of the other modes:
        ``privacy_record_.adjacency`` says so. See
        :mod:`sklearn_dpfair.federated`.
    small_budget : {"auto", "fit"}, default="auto"
        What a budget too small to buy a useful model does. "auto": when
        ``n_samples * epsilon < 5 * (n_features + 1) * (n_classes - 1)`` (a
        public rule, decided before the data are read; below it the noisy
        model predicted worse on held-out data than the majority class in 6
        of 48 cells of Adult, German credit and COMPAS subsamples, and with
        it in none), a central fit releases the intercept-only model
        instead: the label counts through one Gaussian mechanism calibrated
        to the whole ``(epsilon, delta)`` (sensitivity 1 under add/remove
        adjacency; calibrated and recorded with the PLD accountant, exact
        for one Gaussian, whatever ``accountant``), ``coef_`` 0, the
        intercepts the log-frequencies of the noisy counts,
        ``intercept_only_`` True and a ``UserWarning`` naming
        the rule. ``privacy_plan`` plans the same release. "fit" always fits
        the model. The rule does not apply to ``solver="dp-frank-wolfe"``
        (its error grows with ``log(n_features)``, not with the number of
        parameters), nor with ``epsilon=np.inf``, a given
        ``noise_multiplier``, ``delta=0``, ``silos`` or
        ``fit_intercept=False`` (no intercept to release). A Dask fit makes
        the same release from its workers' class counts.
    verbose : int, default=0
        With ``verbose > 0`` the central private dp-sgd and dp-newton fits
        print one line per epoch (or Newton step) to stdout: the step, the
        norm of the released noisy gradient (a loss proxy computed from
        released values only, so it costs no privacy) and the elapsed time.
        Nothing private is printed. Fits across ``silos`` and at
        ``epsilon=np.inf`` print nothing.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        Coefficients; one row for binary problems (logit of ``classes_[1]``).
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Intercepts.
    classes_ : ndarray of shape (n_classes,)
        The label set (declared, or inferred with a warning).
    epsilon_ : float
        Epsilon spent, computed by dp-accounting from ``dp_event_``.
    delta_ : float
        Delta of the guarantee.
    noise_multiplier_ : float or None
        Noise standard deviation in units of the sensitivity. None for
        dp-newton, whose three releases a step have three multipliers
        (the record's mechanism text lists them; ``dp_event_`` holds them).
    dp_event_ : dp_accounting.DpEvent
        Description of the mechanism; ``epsilon_`` can be recomputed from it.
    adjacency_ : {"add_remove", "replace_one"}
        Neighbouring relation of the guarantee.
    privacy_record_ : PrivacyRecord
        All of the above, with sampling rate, steps and caveats.
    privacy_caveats_ : list of str
        What was read from the private data outside the guarantee.
    n_iter_ : int or None
        Iterations of the solver that ran: for dp-sgd the epochs, or passes
        over the data (``max_iter`` resolved; federated and Dask fits run
        them at every ``epsilon``); for dp-newton and dp-frank-wolfe the
        steps, each a full pass; None for output perturbation, whose
        data-dependent solver iteration count is not released. In the
        non-private limit of a central in-memory fit (``epsilon=inf``
        without ``noise_multiplier``) the exact L-BFGS-B solve runs
        instead, whatever the solver, and ``n_iter_`` is its iterations
        (as ``t_``). 0 for the intercept-only release.
    t_ : int or None
        Number of noisy steps (dp-sgd) or of private selections
        (dp-frank-wolfe); at ``epsilon=inf``, the iterations of the exact
        solver that ran instead.
    n_nonzero_ : int
        Number of nonzero entries of ``coef_`` (at most ``t_`` for a
        private dp-frank-wolfe fit).
    intercept_only_ : bool
        Whether ``small_budget="auto"`` released the intercept-only model.
    silos_ : list or None
        Silo ids of a federated fit, sorted; None for a central fit.
    silo_epsilon_ : dict or None
        Epsilon each silo spent (at its own delta), from its own accountant.
    silo_delta_ : dict or None
        Delta of each silo.
    silo_noise_multiplier_ : dict or None
        Noise multiplier of each silo.
    silo_rounds_ : dict or None
        Messages each silo sent (rounds it took part in).
    silo_privacy_records_ : dict or None
        The full :class:`~sklearn_dpfair.privacy.PrivacyRecord` of each silo.
    server_weights_ : dict or None
        Normalized public weight of each silo.
    central_epsilon_ : float or None
        With ``secure_aggregation=True``: the central epsilon (at ``delta_``)
        that holds only if the server sees nothing but the aggregate.
    central_privacy_record_ : PrivacyRecord or None
        The record of that conditional guarantee.
    shuffle_epsilon_ : float or None
        With ``shuffle=True``: the epsilon (at ``delta_``) that holds only
        with a trusted shuffler; ``epsilon_`` is then the ISRL-DP one.
    shuffle_privacy_record_ : ShuffleRecord or None
        The record of that conditional guarantee.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when X has string column names.

    See Also
    --------
    sklearn.linear_model.LogisticRegression : The non-private model.

    Notes
    -----
    DP-SGD takes ``T = ceil(max_iter / q)`` steps; at each, every row joins
    the batch independently with probability ``q``, per-example gradients
    ``r_i [x_i, 1]`` are clipped to ``clip_norm`` using the factorized norm
    ``||r_i|| ||[x_i, 1]||``, and noise ``N(0, sigma^2 C^2 I)`` is added to the
    sum, which is divided by the expected batch size ``q n``. ``sigma`` is the
    smallest value for which dp-accounting certifies ``(epsilon, delta)``. The
    returned coefficients are the average of the last half of the iterates.

    Whatever one record holds (features of ``1e308``, say), its clipped
    gradient is finite with norm at most ``clip_norm``: a prediction that
    overflows is recomputed from the rescaled row and saturated, and a
    gradient that is still not finite contributes 0. Predictions of the
    fitted model are finite for any finite input. See
    :ref:`adversarial_records`.

    With ``fit(X, y, silos=...)`` the same noisy step runs inside every silo
    with the silo's own noise multiplier (its own accountant, Poisson
    sampling at the common rate ``q = batch_size / n_samples``), and an
    untrusted server averages the silos' noisy mean gradients (Noisy ISRL-DP
    minibatch SGD, Lowy's thesis, Alg. 14/19). ``epsilon_``/``delta_`` then
    hold for a record of any silo (the worst silo at the largest delta).
    See :mod:`sklearn_dpfair.federated`.

    References
    ----------
    .. [1] Abadi et al., "Deep Learning with Differential Privacy", CCS 2016.
    .. [2] A. Lowy, "Private Learning: ...", PhD thesis, USC, 2023.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn_dpfair import DPLogisticRegression
    >>> X, y = make_classification(n_samples=2000, random_state=0)
    >>> clf = DPLogisticRegression(epsilon=1.0, classes=[0, 1], random_state=0)
    >>> clf = clf.fit(X, y)
    >>> clf.epsilon_ <= 1.0
    True
    >>> clf.score(X, y) > 0.8
    True
    """

    _parameter_constraints = {
        **PRIVACY_PARAMETER_CONSTRAINTS,
        # 0: pure epsilon-DP (output perturbation only; checked in fit).
        "delta": DELTA_OR_ZERO_CONSTRAINT,
        "solver": [
            StrOptions({"dp-sgd", "output-perturbation", "dp-frank-wolfe", "dp-newton"})
        ],
        "clip_norm": [CLIP_NORM_CONSTRAINT],
        "noise_multiplier": [Interval(Real, 0, None, closed="left"), None],
        "batch_size": [
            Interval(Integral, 1, None, closed="left"),
            StrOptions({"auto", "full"}),
        ],
        "max_iter": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "batch_sampling": [StrOptions({"poisson", "balls_and_bins"})],
        "learning_rate": [
            Interval(Real, 0, None, closed="neither"),
            StrOptions({"auto"}),
        ],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "fit_intercept": ["boolean"],
        "classes": ["array-like", None],
        "feature_norm_bound": [Interval(Real, 0, None, closed="neither"), None],
        "l1_radius": [Interval(Real, 0, None, closed="neither"), None],
        "feature_inf_bound": [Interval(Real, 0, None, closed="neither"), None],
        "fw_steps": [Interval(Integral, 1, None, closed="left"), None],
        "newton_steps": [Interval(Integral, 1, None, closed="left")],
        "curvature": [StrOptions({"upper-bound", "hessian"})],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "feature_scaling": [StrOptions({"auto"}), None],
        "feature_bounds": ["array-like", None],
        "device": [StrOptions(set(DEVICE_OPTIONS))],
        "silo_epsilon": [*EPSILON_CONSTRAINT, Mapping, None],
        "silo_delta": [*DELTA_CONSTRAINT, Mapping, None],
        "server_weights": [StrOptions({"uniform", "size"}), Mapping],
        "execution": [StrOptions({"local", "dask"})],
        "secure_aggregation": ["boolean"],
        "shuffle": ["boolean"],
        "small_budget": [StrOptions({"auto", "fit"})],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=1e-5,
        solver="dp-sgd",
        clip_norm=1.0,
        noise_multiplier=None,
        batch_size="auto",
        max_iter="auto",
        batch_sampling="poisson",
        learning_rate="auto",
        alpha=0.0,
        fit_intercept=True,
        classes=None,
        feature_norm_bound=None,
        l1_radius=None,
        feature_inf_bound=None,
        fw_steps=None,
        newton_steps=10,
        curvature="upper-bound",
        tol=1e-6,
        feature_scaling=None,
        feature_bounds=None,
        accountant="rdp",
        random_state=None,
        device="cpu",
        silo_epsilon=None,
        silo_delta=None,
        server_weights="uniform",
        execution="local",
        secure_aggregation=False,
        shuffle=False,
        small_budget="auto",
        verbose=0,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.solver = solver
        self.clip_norm = clip_norm
        self.noise_multiplier = noise_multiplier
        self.batch_size = batch_size
        self.max_iter = max_iter
        self.batch_sampling = batch_sampling
        self.learning_rate = learning_rate
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.classes = classes
        self.feature_norm_bound = feature_norm_bound
        self.l1_radius = l1_radius
        self.feature_inf_bound = feature_inf_bound
        self.fw_steps = fw_steps
        self.newton_steps = newton_steps
        self.curvature = curvature
        self.tol = tol
        self.feature_scaling = feature_scaling
        self.feature_bounds = feature_bounds
        self.accountant = accountant
        self.random_state = random_state
        self.device = device
        self.silo_epsilon = silo_epsilon
        self.silo_delta = silo_delta
        self.server_weights = server_weights
        self.execution = execution
        self.secure_aggregation = secure_aggregation
        self.shuffle = shuffle
        self.small_budget = small_budget
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None, *, silos=None):
        """Fit the model with differential privacy.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data, dense or sparse (CSR/CSC).
            A Dask array or DataFrame (with a running ``dask.distributed``
            client) is fitted by DP-SGD on its workers: the rows stay there,
            the guarantee and record are the in-memory ones
            (:ref:`User Guide <dask_central>`). ``y`` and ``sample_weight``
            may then be Dask collections too.
        y : array-like of shape (n_samples,)
            Target labels; must lie in ``classes`` when it is declared.
        sample_weight : array-like of shape (n_samples,), default=None
            Public non-negative weights, used as given in a private fit
            (rescaled to mean 1 only at ``epsilon=inf``). Each record's
            gradient is multiplied by its weight *before* it is clipped, so
            one record moves a noisy sum by at most ``clip_norm`` whatever
            its weight (the guarantee is per record, not per unit of
            weight). Weights of 1 give exactly the unweighted fit.
            With "dp-frank-wolfe" the weighted raw gradients are clipped
            back to ``[-1, 1]``; with "output-perturbation" each weight is
            capped at 1 (the sensitivity is the unweighted one, whatever
            the weights). Not with ``silos``.
        silos : array-like of shape (n_samples,), default=None
            Silo id of every row (public metadata). If given, the model is
            trained across silos with inter-silo record-level DP (see
            ``silo_epsilon``); route it with ``set_fit_request(silos=True)``.

        Returns
        -------
        self : DPLogisticRegression
            The fitted estimator.
        """
        self._check_pure(silos)
        self._check_noise_multiplier()
        self._check_scaling(self._scaling_path(silos is not None, is_dask_collection(X)))
        self._check_batch_sampling(silos is not None or is_dask_collection(X))
        if silos is None:
            warn_unused_silo_options(self, _SILO_OPTIONS)
        if silos is not None and self.solver != "dp-sgd":
            raise ValueError("silos= needs solver='dp-sgd' (federated DP-SGD).")
        if silos is not None and self.device == "cuda":
            raise ValueError("silos run on the CPU (numpy); use device='cpu'.")
        if is_dask_collection(X):
            return self._fit_dask(X, y, sample_weight, silos)
        # With X in memory the fit runs here: a Dask y, sample_weight or
        # silos would be gathered onto the driver.
        refuse_dask_beside_in_memory_x(
            type(self).__name__, y=y, sample_weight=sample_weight, silos=silos
        )
        if silos is None and self.execution == "dask":
            raise ValueError(
                "execution='dask' runs the silos of a federated fit; pass silos=, "
                "or pass X as a Dask collection (central DP-SGD on its workers)."
            )
        if self.solver == "dp-newton" and self.feature_norm_bound is None:
            raise ValueError(
                "solver='dp-newton' needs feature_norm_bound, a public bound on "
                "the row norms (rows are clipped to it; it sets the sensitivity "
                "of the gradient and of the Hessian)."
            )
        if self.solver == "output-perturbation":
            if self.alpha <= 0:
                raise ValueError(
                    "solver='output-perturbation' needs alpha > 0: the noise is "
                    "calibrated to the sensitivity 2L/(alpha n)."
                )
            if self.feature_norm_bound is None:
                raise ValueError(
                    "solver='output-perturbation' needs feature_norm_bound, a "
                    "public bound on the row norms (rows are clipped to it)."
                )
        frank_wolfe = self.solver == "dp-frank-wolfe"
        if frank_wolfe and self.feature_scaling is not None and (
            self.feature_inf_bound is None
        ):
            # A bound read from the data would be read from the raw columns.
            raise ValueError(
                "solver='dp-frank-wolfe' with feature_scaling='auto' needs "
                "feature_inf_bound, the public bound of the scaled columns (1 "
                "when every value lies within feature_bounds)."
            )
        if frank_wolfe and self.l1_radius is None:
            raise ValueError(
                "solver='dp-frank-wolfe' needs l1_radius, the public radius of "
                "the l1 ball the coefficients are constrained to."
            )
        if frank_wolfe and isinstance(self.accountant, PrivacyLedger):
            if self.accountant.kind != "rdp":
                # Its zCDP events have no PLD interpretation in dp-accounting.
                raise ValueError(
                    "solver='dp-frank-wolfe' is accounted with RDP (one zCDP "
                    "event per selection); record it in a "
                    "PrivacyLedger(kind='rdp')."
                )
        if sp.issparse(X) and silos is not None:
            raise TypeError("silos= (federated DP-SGD) does not accept sparse X.")
        # Sparse X runs on the host (resolve_backend refuses "cuda" for it).
        # The non-private limit of every solver is an exact scipy solve on
        # host copies of the rows (DP-SGD's included), so every solver takes
        # array-API input there; its private fits are numpy code, except
        # DP-SGD's.
        non_private = math.isinf(self.epsilon) and self.noise_multiplier is None
        backend = resolve_backend(
            X,
            self.device,
            array_api_solver=self.solver == "dp-sgd" or non_private,
        )
        # Detached before validation (see detached_input): no autograd graph
        # of the training rows, and no torch warning from validate_data's copy.
        X, y = detached_input(X), detached_input(y)
        X, y = validate_data(
            self,
            X,
            y,
            dtype=backend.input_float_dtypes,
            # CSC becomes CSR once (at most 2x the sparse storage): DP-SGD
            # gathers batch rows, Frank-Wolfe and output perturbation take
            # row products.
            accept_sparse="csr",
            # One C-ordered copy up front (at most 2x the data) when X is
            # F-ordered, as DataFrames give: the solvers gather batch rows.
            order="C",
        )
        check_sparse_sums_finite(X)
        weights, classes, y_encoded, caveats = check_classifier_metadata(
            self, X, y, sample_weight, silos
        )
        loss = self._loss_for(classes)
        y_encoded = backend.asarray(y_encoded, dtype=X.dtype)
        rng = check_noise_generator(self.random_state)

        if silos is not None:
            budget, options = self._dp_sgd_budget(caveats), self._silo_options()
            params = self._dp_sgd_params()
            plan = check_silo_plan(self, X, params, budget, options, silos=silos)
            with charged_if_raised_after_releases(self, plan.record):
                result = fit_silos(
                    to_numpy(X),
                    to_numpy(y_encoded),
                    loss,
                    params,
                    budget,
                    options,
                    silos=silos,
                    rng=rng,
                    seeded=self.random_state is not None,
                    # Every silo maps its rows by the same public map.
                    scaling=public_feature_scaling(
                        self._scaling_plan(X.shape[1], None, where="silos=")
                    ),
                )
            return self._set_fitted(
                classes, result, resolve_epochs(self.max_iter, X.shape[0]), backend
            )
        if self.solver != "dp-sgd":
            # Host solvers: array-API input reaches them at epsilon=inf only
            # (resolve_backend above); they read host copies, and
            # _set_fitted returns the arrays to the input's namespace.
            if not sp.issparse(X):
                X = to_numpy(X)
            y_encoded = to_numpy(y_encoded)
        feature_inf_bound, bound_caveats = None, ()
        if frank_wolfe:
            # A bound read from X (feature_inf_bound=None) is a documented
            # leak: a PrivacyLeakWarning and a caveat in the record.
            feature_inf_bound, bound_caveats = resolve_feature_inf_bound(
                self.feature_inf_bound, X
            )
        # The plan of the fit, from public quantities (the shape, the number
        # of classes, whether weights were passed), made by the same method
        # as privacy_plan(); the solver executes it and nothing else.
        setup = self._solver_setup(
            *X.shape,
            loss,
            weighted=weights is not None,
            caveats=(*caveats, *bound_caveats),
            sparse=sp.issparse(X),
            dtype=X.dtype,
            feature_inf_bound=feature_inf_bound,
        )
        # A ledger that cannot record the planned event refuses now, before
        # the first release, rather than after the whole fit.
        self._check_ledger_accepts(setup.record.dp_event, setup.record.adjacency)
        if isinstance(setup, InterceptOnlySetup):
            counts = label_counts(to_numpy(y_encoded), setup.n_classes, weights)
            result = self._fit_intercept_only(setup, X.shape, X.dtype, counts, rng)
            n_iter = 0
        elif self.solver == "dp-sgd":
            # The other solvers clip the rows to their declared public
            # bounds, which the user sized for the columns.
            warn_unscaled_columns(
                X, self, setup.budget.is_private, scaling=setup.scaling
            )
            result = fit_dp_sgd(
                X,
                y_encoded,
                loss,
                setup,
                rng=rng,
                backend=backend,
                sample_weight=weights,
                progress=progress_printer(self.verbose, type(self).__name__, "epoch"),
            )
            # The epochs ran only under privacy; the non-private limit ran
            # the full-batch L-BFGS-B solve instead, whose iterations count.
            n_iter = (
                resolve_epochs(self.max_iter, X.shape[0])
                if setup.budget.is_private
                else result.n_steps
            )
        elif self.solver == "dp-newton":
            result = fit_dp_newton(
                X if sp.issparse(X) else to_numpy(X),
                to_numpy(y_encoded),
                loss,
                setup,
                rng=rng,
                sample_weight=weights,
                progress=progress_printer(
                    self.verbose, type(self).__name__, "Newton step"
                ),
            )
            n_iter = result.n_steps  # each step is one pass over the data
        elif frank_wolfe:
            result = fit_dp_frank_wolfe(
                X, y_encoded, loss, setup, rng=rng, sample_weight=weights
            )
            n_iter = result.n_steps  # each step is one pass over the data
        else:
            result = fit_output_perturbation(
                X, y_encoded, loss, setup, rng=rng, sample_weight=weights
            )
            # None under privacy (the certified solve's data-dependent
            # iteration count is not released); the exact solver's
            # iterations in the non-private limit, where nothing is private.
            n_iter = result.n_steps

        return self._set_fitted(
            classes,
            result,
            n_iter,
            backend,
            intercept_only=isinstance(setup, InterceptOnlySetup),
        )

    def _silo_options(self):
        """The federated fit's public options (``silos=``)."""
        return SiloOptions(
            silo_epsilon=self.silo_epsilon,
            silo_delta=self.silo_delta,
            server_weights=self.server_weights,
            execution=self.execution,
            secure_aggregation=self.secure_aggregation,
            shuffle=self.shuffle,
        )

    def _planned_silo_fit(self, n_samples, silos, sample_weight=None):
        """The plan of ``fit(X, y, silos=silos)``, from public inputs only.

        Raises what that fit raises for the silos (a silo too small for the
        sampling rate or too large for its delta, ``sample_weight`` with
        silos) before any row is read: a private pipeline asks it before
        its earlier steps release.
        """
        refuse_weights_with_silos(sample_weight, silos)
        return plan_fit_silos(
            n_samples, self._dp_sgd_params(), self._dp_sgd_budget(()),
            self._silo_options(), silos=silos,
        )

    def _dp_sgd_params(self):
        """Public hyperparameters of the central DP-SGD fits (in memory, Dask)."""
        return DPSGDParams(
            clip_norm=self.clip_norm,
            batch_size=self.batch_size,
            epochs=self.max_iter,
            learning_rate=self.learning_rate,
            alpha=self.alpha,
            fit_intercept=self.fit_intercept,
            batch_sampling=self.batch_sampling,
        )

    def _check_batch_sampling(self, distributed=False):
        """Balls-and-bins batches are drawn by central in-memory DP-SGD only."""
        if self.batch_sampling != "poisson" and (distributed or self.solver != "dp-sgd"):
            # The other fits sample otherwise (or not at all): refused rather
            # than accounted for batches they do not draw.
            raise ValueError(
                f"batch_sampling={self.batch_sampling!r} applies to central "
                "in-memory fits with solver='dp-sgd' (no silos=, no Dask "
                "collection); use batch_sampling='poisson'."
            )

    def _newton_params(self):
        """Public hyperparameters of the dp-newton fit."""
        return NewtonParams(
            feature_norm_bound=self.feature_norm_bound,
            n_steps=self.newton_steps,
            alpha=self.alpha,
            fit_intercept=self.fit_intercept,
            curvature=self.curvature,
        )

    def _scaling_path(self, silos=False, dask=False):
        """The fit path for the scaling's refusal; None: central in-memory DP-SGD.

        Only that path draws private scales; every other one (silos, Dask,
        the full-batch solvers) maps the columns by public ``feature_bounds``.
        """
        if silos:
            return "silos="
        if dask:
            return "a Dask collection X"
        if self.solver != "dp-sgd":
            return f"solver={self.solver!r}"
        return None

    def _check_scaling(self, where):
        """Refuse private scales where only public bounds apply (parameters only)."""
        require_public_bounds(self.feature_scaling, self.feature_bounds, where)

    def _check_noise_multiplier(self):
        """Refuse a noise multiplier that ``solver`` would not use (parameters only).

        Only DP-SGD takes a user's noise multiplier; the other solvers
        calibrate their releases from ``(epsilon, delta)`` themselves. Checked
        before anything is read or planned: a multiplier that is accepted but
        not used would still count as user-calibrated noise (the
        small-budget rule skips such budgets), so the fit would release a
        model under a rule other than the one its budget calls for.
        """
        if self.noise_multiplier is None or self.solver == "dp-sgd":
            return
        reason = {
            "output-perturbation": "its one release is",
            "dp-frank-wolfe": "its selections are",
            "dp-newton": "its three releases per step are",
        }[self.solver]
        raise ValueError(
            f"noise_multiplier does not apply to solver={self.solver!r}: "
            f"{reason} calibrated from epsilon and delta; leave "
            "noise_multiplier=None (it applies to solver='dp-sgd')."
        )

    def _check_pure(self, silos=None):
        """delta = 0 (pure epsilon-DP) only where a Laplace release gives it."""
        if self.delta == 0 and (self.solver != "output-perturbation" or silos is not None):
            raise ValueError(
                "delta=0 (pure epsilon-DP) is available with "
                "solver='output-perturbation' only (Laplace noise); the other "
                "solvers' Gaussian or zCDP releases need delta > 0."
            )

    def _scaling_plan(
        self, n_features, budget, sparse=False, n_samples=None, *, where=None
    ):
        """How a fit scales its columns (public inputs only).

        ``where`` (:meth:`_scaling_path`) None: central DP-SGD, public bounds
        or private scales. Otherwise public bounds only; ``budget`` None (a
        federated or Dask fit) maps them at any epsilon (a fit that adds no
        noise, no silo private, standardizes the columns by their exact
        moments instead: :func:`~sklearn_dpfair.federated._fit.fit_silos`,
        :func:`~sklearn_dpfair._solvers._distributed.distribute_training_data`),
        a full-batch solver's budget maps them under privacy only (its
        non-private limit solves exactly on any scale).
        """
        if where is not None:
            return public_scaling_plan(
                self.feature_scaling,
                self.feature_bounds,
                n_features,
                where=where,
                fit_intercept=self.fit_intercept,
                sparse=sparse,
                private=budget is None or budget.is_private,
            )
        return plan_feature_scaling(
            self.feature_scaling,
            self.feature_bounds,
            n_features,
            budget,
            sparse=sparse,
            fit_intercept=self.fit_intercept,
            n_samples=n_samples,
        )

    def _frank_wolfe_params(self):
        """Public hyperparameters of the private Frank-Wolfe fit."""
        return FrankWolfeParams(
            l1_radius=self.l1_radius,
            feature_inf_bound=self.feature_inf_bound,
            n_steps=self.fw_steps,
            alpha=self.alpha,
            fit_intercept=self.fit_intercept,
        )

    def _output_perturbation_params(self):
        """Public hyperparameters of the output-perturbation fit."""
        return OutputPerturbationParams(
            feature_norm_bound=self.feature_norm_bound,
            alpha=self.alpha,
            tol=self.tol,
            fit_intercept=self.fit_intercept,
        )

    _plan_public_counts = ("n_classes", "n_silos")
    # Private column scales need dense rows: the plan reads the layout.
    _plan_reads_layout = True

    def _planned_record(
        self, n_samples, n_features, n_classes=None, n_silos=None, *, sparse=False
    ):
        """The record of a fit, by the set-up functions of :meth:`fit`.

        ``sparse`` is the layout of ``X``: private column scales need dense
        rows, so a sparse plan with ``feature_scaling="auto"`` and no
        ``feature_bounds`` is refused, as its fit would be; so is a sparse
        plan with ``n_silos`` (the federated fit refuses sparse ``X``).

        ``n_classes`` (public) is the size of the label set: that of
        ``classes`` when it is declared, else 2 unless given. ``n_silos``
        plans a federated fit (``fit(..., silos=...)``) on that many silos by
        the federated fit's own accounting
        (:func:`~sklearn_dpfair.federated._fit.plan_silos`); it needs one
        ``silo_epsilon`` and ``silo_delta`` for every silo.
        """
        self._check_pure(None if n_silos is None else "silos")
        self._check_noise_multiplier()
        self._check_scaling(self._scaling_path(silos=n_silos is not None))
        self._check_batch_sampling(n_silos is not None)
        if n_silos is not None:
            if self.solver != "dp-sgd":
                raise ValueError("silos= needs solver='dp-sgd' (federated DP-SGD).")
            if sparse:
                # The silos gather dense rows: the fit refuses sparse X.
                raise TypeError("silos= (federated DP-SGD) does not accept sparse X.")
            return plan_silos(
                n_samples,
                self._dp_sgd_params(),
                self._dp_sgd_budget(()),
                self._silo_options(),
                n_silos=n_silos,
                # The public map the fit's silos apply (its record names it).
                scaling=public_feature_scaling(
                    self._scaling_plan(n_features, None, where="silos=")
                ),
            )
        n_classes = planned_class_count(self.classes, n_classes)
        if self.solver == "dp-newton":
            if self.feature_norm_bound is None:
                raise ValueError(
                    "A plan of solver='dp-newton' needs feature_norm_bound."
                )
            if n_classes != 2:
                # scikit-learn's wording for a binary-only classifier (its
                # check_classifier_not_supporting_multiclass matches it).
                raise ValueError(
                    "Only binary classification is supported by "
                    f"solver='dp-newton': the plan is for {n_classes} classes "
                    "and dp-newton fits binary problems only. Use "
                    "solver='dp-sgd' for three or more classes."
                )
        if self.solver == "dp-frank-wolfe" and (
            self.l1_radius is None or self.feature_inf_bound is None
        ):
            raise ValueError(
                "A plan of solver='dp-frank-wolfe' needs l1_radius and "
                "feature_inf_bound: with feature_inf_bound=None the step "
                "count is read from the data."
            )
        if self.solver == "output-perturbation" and (
            self.alpha <= 0 or self.feature_norm_bound is None
        ):
            raise ValueError(
                "A plan of solver='output-perturbation' needs alpha > 0 and "
                "feature_norm_bound."
            )
        return self._solver_setup(
            n_samples, n_features, self._loss_for(np.arange(n_classes)), sparse=sparse
        ).record

    def _solver_setup(
        self,
        n_samples,
        n_features,
        loss,
        *,
        weighted=False,
        caveats=(),
        sparse=False,
        dtype=np.float64,
        feature_inf_bound=None,
        dask=False,
    ):
        """The solver-level plan of a central fit, from public quantities only.

        One method for :meth:`fit` and :meth:`privacy_plan`, so that what
        runs is what was planned: the shape, the loss (the number of
        classes), whether public weights were passed, the caveats of the
        label set, whether X is sparse and its dtype (for the clipping
        margin of output perturbation), and the resolved Frank-Wolfe feature
        bound (and ``dask``: whether the rows are a Dask collection's, which
        maps the columns by public bounds only). A budget the public rule of
        ``small_budget`` finds too small
        plans the intercept-only release instead
        (:func:`~sklearn_dpfair._solvers._intercept_only.affords_model`).
        The rule is decided first, from public counts: only what will run is
        calibrated. The solver's own set-up still validates its parameters
        then, without privacy (``validate_only``: no noise is calibrated
        for a model that is not released).
        """
        setup_args = (n_samples, n_features, loss)
        setup_kwargs = {
            "weighted": weighted,
            "caveats": caveats,
            "sparse": sparse,
            "dtype": dtype,
            "feature_inf_bound": feature_inf_bound,
            "where": self._scaling_path(dask=dask),
        }
        n_classes = max(loss.n_outputs, 2)
        small = self._dp_sgd_budget(caveats)
        if (
            self.small_budget == "auto"
            # Without an intercept there is no intercept-only model to
            # release instead: the model is fitted.
            and self.fit_intercept
            and self.delta > 0
            # The rule counts the parameters, whose number sets the noise of
            # a noisy gradient (sqrt(d)); private Frank-Wolfe's error grows
            # with log d (Talwar, Thakurta and Zhang, 2015), and it is the
            # solver for wide data, which the rule would always refuse.
            and self.solver != "dp-frank-wolfe"
            and not affords_model(
                n_samples, n_features, n_classes, small, _RECORDS_PER_PARAMETER
            )
        ):
            self._model_setup(*setup_args, **setup_kwargs, validate_only=True)
            # The counts are weighted (each weight capped at 1): said, as
            # the model's record says it.
            return intercept_only_setup(
                small, n_classes, caveats=(WEIGHTS_CAVEAT,) if weighted else ()
            )
        return self._model_setup(*setup_args, **setup_kwargs)

    def _model_setup(
        self,
        n_samples,
        n_features,
        loss,
        *,
        weighted,
        caveats,
        sparse,
        dtype,
        feature_inf_bound,
        where,
        validate_only=False,
    ):
        """The set-up of the model fit of ``solver`` (see :meth:`_solver_setup`).

        ``validate_only``: the set-up at ``epsilon = inf`` (the parameters'
        checks, no calibration), for a fit that releases something else.
        """
        epsilon = math.inf if validate_only else self.epsilon
        budget = replace(self._dp_sgd_budget(caveats), epsilon=epsilon)
        if self.solver == "dp-sgd":
            return dp_sgd_setup(
                n_samples,
                n_features,
                loss.n_outputs,
                self._dp_sgd_params(),
                budget,
                weighted=weighted,
                prior=self._scaling_plan(
                    n_features,
                    # A Dask fit plans the mapped steps at any epsilon (its
                    # workers standardize exactly where nothing is noised).
                    None if where is not None else budget,
                    sparse,
                    n_samples,
                    where=where,
                ),
            )
        # The full-batch solvers: public bounds, mapped under privacy only.
        scaling = self._scaling_plan(n_features, budget, sparse, where=where)
        if self.solver == "dp-newton":
            # Checked here, before the small-budget rule's choice, so that
            # a fit refuses three classes at any budget, as its plan does.
            if loss.n_outputs != 1:
                # scikit-learn's wording for a binary-only classifier (its
                # check_classifier_not_supporting_multiclass matches it). No
                # count: without declared classes, it is read from y.
                raise ValueError(
                    "Only binary classification is supported by "
                    "solver='dp-newton'. The type of the target is "
                    "multiclass (three or more classes, declared or read from "
                    "y), and dp-newton fits binary problems only. Use "
                    "solver='dp-sgd' for three or more classes."
                )
            # A noise_multiplier is refused (by _check_noise_multiplier, and
            # by the plan: it calibrates its three releases per step itself).
            return dp_newton_setup(
                n_samples,
                n_features,
                self._newton_params(),
                budget,
                weighted=weighted,
                scaling=scaling,
            )
        if self.solver == "dp-frank-wolfe":
            params = self._frank_wolfe_params()
            if feature_inf_bound is not None:
                params = replace(params, feature_inf_bound=feature_inf_bound)
            return frank_wolfe_setup(
                n_samples,
                n_features,
                loss.n_outputs,
                params,
                self._calibrated_budget(epsilon, caveats),
                weighted=weighted,
                scaling=scaling,
            )
        return output_perturbation_setup(
            n_samples,
            n_features,
            loss,
            self._output_perturbation_params(),
            self._calibrated_budget(epsilon, caveats),
            weighted=weighted,
            dtype=dtype,
            scaling=scaling,
        )

    def _calibrated_budget(self, epsilon, caveats):
        """Privacy inputs of output perturbation and Frank-Wolfe.

        The accountant is left at its default: these set-ups account with
        their own (see ``accountant``). The user's ``noise_multiplier`` is
        passed on, so that their set-ups refuse it too
        (:meth:`_check_noise_multiplier` refuses it first).
        """
        return PrivacyBudget(
            epsilon,
            self.delta,
            noise_multiplier=self.noise_multiplier,
            caveats=tuple(caveats),
        )

    def _dp_sgd_budget(self, caveats):
        """Privacy inputs of the central DP-SGD fits."""
        return PrivacyBudget(
            self.epsilon,
            self.delta,
            self._accountant_kind(),
            self.noise_multiplier,
            tuple(caveats),
        )

    def _fit_dask(self, X, y, sample_weight, silos):
        """Central DP-SGD on a Dask collection; its rows stay on the workers."""
        if silos is not None or self.solver != "dp-sgd" or self.device == "cuda":
            raise ValueError(
                "A Dask collection X is fitted by central DP-SGD on its workers: "
                "it needs solver='dp-sgd', device='cpu' or 'auto', and no silos=."
            )
        set_dask_input_features(self, X)
        data = distribute_training_data(
            X,
            y,
            sample_weight,
            classes=self.classes,
            delta=self.delta,
            fit_intercept=self.fit_intercept,
            private=not (math.isinf(self.epsilon) and self.noise_multiplier is None),
            # Every partition maps its rows by the same public map.
            scaling=public_feature_scaling(
                self._scaling_plan(
                    self.n_features_in_, None, where=self._scaling_path(dask=True)
                )
            ),
            estimator_name=type(self).__name__,
        )
        try:
            loss = self._loss_for(data.classes)
            setup = self._solver_setup(
                data.n_samples,
                data.n_features,
                loss,
                weighted=data.weighted,
                caveats=data.caveats,
                dask=True,
            )
            # As in memory: a ledger that cannot record the planned event
            # refuses before the first partition round.
            self._check_ledger_accepts(setup.record.dp_event, setup.record.adjacency)
            # The workers run the planned steps even without noise (the
            # in-memory limit is L-BFGS): the private fits' step cap, from
            # public counts.
            check_sgd_steps(data.n_samples, self.batch_size, self.max_iter)
            if isinstance(setup, InterceptOnlySetup):
                # The planned label histogram: the workers count their rows'
                # classes, the driver adds the counts and makes the release.
                result = self._fit_intercept_only(
                    setup,
                    (data.n_samples, data.n_features),
                    data.dtype,
                    partition_label_counts(data, setup.n_classes),
                    check_noise_generator(self.random_state),
                )
                return self._set_fitted(
                    data.classes, result, 0, intercept_only=True
                )
            warn_unscaled_columns(
                data, self, data.private, off_scale=partition_columns_off_unit_scale
            )
            result = fit_dp_sgd_dask(
                data,
                loss,
                setup,
                rng=check_noise_generator(self.random_state),
                progress=progress_printer(self.verbose, type(self).__name__, "epoch"),
            )
        finally:
            data.release()
        return self._set_fitted(
            data.classes, result, resolve_epochs(self.max_iter, data.n_samples)
        )

    def _fit_intercept_only(self, setup, shape, dtype, counts, rng):
        """The planned label histogram, as a linear model with zero coefficients.

        ``counts`` are the exact class counts, in memory or added up over a
        Dask collection's partitions.
        """
        coef, intercepts = intercept_only_model(setup, counts, rng, shape[1])
        n_features = shape[1]
        # Public inputs only: the rule decided before the data were read.
        warn_at_caller(
            small_budget_message(
                type(self).__name__,
                n_features,
                setup.n_classes,
                _RECORDS_PER_PARAMETER,
            ),
            UserWarning,
        )
        # The model is made on the host: X's dtype may be torch's (under
        # array API dispatch), which numpy's astype does not read.
        dtype = _numpy_dtype(dtype)
        return LinearFit(
            coef.astype(dtype), intercepts.astype(dtype), None, setup.record
        )

    def _set_fitted(
        self, classes, result, n_iter, backend=None, *, intercept_only=False
    ):
        # Said by the caller: an exact solver that starts at its optimum also
        # takes 0 iterations.
        self.intercept_only_ = intercept_only
        self.classes_ = classes
        self.coef_, self.intercept_ = result.coef, result.intercept
        if backend is not None:
            # The solvers that run on the host (silos, dp-newton) return
            # numpy: the fitted attributes follow the input's namespace.
            self.coef_, self.intercept_ = (
                backend.to_output(backend.asarray(a))
                for a in (result.coef, result.intercept)
            )
        self.n_iter_ = n_iter
        self.t_ = result.n_steps
        self.n_nonzero_ = int(np.count_nonzero(to_numpy(self.coef_)))
        self._set_privacy_record(result.record)
        for name, value in silo_attributes(result).items():
            setattr(self, name, value)
        return self

    @staticmethod
    def _loss_for(classes):
        return BinaryLogisticLoss() if classes.size == 2 else SoftmaxLoss(classes.size)

    def _loss_for_prediction(self):
        return self._loss_for(self.classes_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # The default budget (epsilon = 1) cannot always reach the accuracy
        # thresholds of scikit-learn's common checks on their tiny datasets.
        tags.classifier_tags.poor_score = True
        # Every solver takes sparse X (without densifying it).
        tags.input_tags.sparse = True
        # The double-noise Newton method (Ganesh, Haghifam, Steinke and
        # Thakurta, NeurIPS 2023) is implemented for the binary logistic loss
        # only: dp-newton refuses three classes, so it does not claim them
        # (the other solvers fit the multinomial loss).
        tags.classifier_tags.multi_class = self.solver != "dp-newton"
        return tags
