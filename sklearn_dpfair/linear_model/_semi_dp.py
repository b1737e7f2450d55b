# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Semi-differentially private linear regression: DP with some public rows."""

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
from .._solvers._feature_scaling import warn_unscaled_columns
from .._solvers._progress import progress_printer
from .._solvers.semi_dp import (
    SEMIDP_HYPERPARAMETERS,
    SEMIDP_SOLVERS,
    SemiDPParams,
    fit_semidp,
    planned_record,
    semidp_setup,
)
from .._solvers.semi_dp._fit import float_parameters
from .._solvers.semi_dp._public_tuning import check_clip_norm_range
from ..privacy import PrivacyBudget, check_noise_generator
from ..privacy._record import PUBLIC_ROWS_CAVEAT, weights_caveats
from ..utils._array_api import (
    DEVICE_OPTIONS,
    detached_input,
    resolve_backend,
    to_numpy,
)
from ..utils._dask import refuse_dask_input
from ..utils._sklearn_compat import Interval, StrOptions, _fit_context
from ..utils._validation import (
    check_delta_for_n,
    check_public_weights,
    check_sparse_sums_finite,
    float64_target,
    validate_data,
    warn_at_caller,
)

__all__ = ["SemiDPLinearRegression"]

# Messages are constants so tests can match them exactly.
NO_PUBLIC_MASK = (
    "public_mask was not given: every row is treated as private, so the fit "
    "is plain DP gradient descent from zero without a public warm start. Pass "
    "public_mask=... (True for rows that may be used without privacy)."
)

# The rule, not this fit's numbers: one cause warns once across the folds
# and candidates of a search (warnings are shown once per text).
TARGET_LEFT_AS_GIVEN = (
    "target_scaling='auto': with fewer than 5 public rows the target would be "
    "scaled by private statistics, but at this number of rows and epsilon "
    "their share of the budget cannot locate it (more rows or a larger "
    "epsilon would), so the target is used as given. A target far from 0 in "
    "its units (an age near 40, a price) is then out of the clipped steps' "
    "reach: bring it near unit scale with "
    "public constants (TransformedTargetRegressor), mark at least 5 rows "
    "public, or pass target_scaling=None if it already is."
)


#: Underscore spellings of the solver names, deprecated (removed in the next
#: release): each maps to its hyphenated name.
DEPRECATED_SOLVER_NAMES = {
    name.replace("-", "_"): name for name in SEMIDP_SOLVERS if "-" in name
}


def canonical_solver(solver):
    """The hyphenated name of ``solver``; underscores warn (FutureWarning).

    Examples
    --------
    >>> from sklearn_dpfair.linear_model._semi_dp import canonical_solver
    >>> canonical_solver("semidp-gd")
    'semidp-gd'
    """
    if solver not in DEPRECATED_SOLVER_NAMES:
        return solver
    new = DEPRECATED_SOLVER_NAMES[solver]
    warn_at_caller(
        f"solver={solver!r} is deprecated and will be removed in the next "
        f"release; use solver={new!r} (the same solver).",
        FutureWarning,
    )
    return new


def check_public_mask(public_mask, n_samples, *, private=True):
    """Validate ``public_mask``: boolean, one entry per sample.

    None marks every row private; a private fit (``private``) warns then
    that it runs without a public start. A non-private one
    (``epsilon=inf``, a public parameter) fits least squares on all rows
    whatever the mask, so the warning would describe a fit that does not
    run.

    Examples
    --------
    >>> from sklearn_dpfair.linear_model._semi_dp import check_public_mask
    >>> check_public_mask(None, 3, private=False)
    array([False, False, False])
    """
    if public_mask is None:
        if private:
            warn_at_caller(NO_PUBLIC_MASK, UserWarning)
        return np.zeros(n_samples, dtype=bool)
    # An array-API array (a CUDA tensor, a tensor that requires grad) is
    # copied to the host explicitly; numpy's implicit conversion refuses both.
    mask = np.asarray(to_numpy(public_mask))
    if mask.dtype != bool:
        raise TypeError(
            "public_mask must be a boolean array (True for public rows); got "
            f"dtype {mask.dtype}. Convert it with np.asarray(mask, dtype=bool) "
            "if it holds 0/1 flags."
        )
    if mask.ndim != 1 or mask.shape[0] != n_samples:
        raise ValueError(
            f"public_mask has shape {mask.shape}, but X has {n_samples} "
            "samples; it needs one entry per sample."
        )
    return mask


class SemiDPLinearRegression(
    LinearRegressorMixin, PrivateEstimatorMixin, BaseEstimator
):
    """Linear regression that is differentially private for its private rows only.

    Some rows are *public* (consented or already released) and may be used
    freely; only the *private* rows are protected, with
    (epsilon, delta)-semi-DP (Lowy's thesis, chapter 2). Mark public rows
    with ``fit(X, y, public_mask=...)``.

    The default solver, ``"semidp-gd"``, is the thesis's Algorithm 11 in full
    batch: noisy gradient descent on
    ``alpha * F_private + (1 - alpha) * F_public``, where the private mean
    gradient is per-row clipped and made private by Gaussian noise and the
    public mean gradient is exact. It starts at the public ridge solution,
    is preconditioned by the inverse model Hessian built from public rows
    (PDA-MD's idea), and returns the average of the last iterates. With
    ``alpha``, ``learning_rate`` and ``max_iter`` left at ``"auto"`` they are
    chosen by minimizing a model of the test error whose inputs are public
    (public rows, counts, budget): tuning costs no privacy.

    Read more in the :ref:`User Guide <semidp>`.

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy budget for the private rows. ``np.inf`` is the non-private
        limit: (weighted) least squares on all rows, solved by a full-batch
        L-BFGS-B in standardized columns (any columns' scales; a
        ``ConvergenceWarning`` if it stops short); ``alpha_`` and
        ``learning_rate_`` are then nan, and every row may be public. A
        private budget needs private rows (a ValueError otherwise) except
        with ``solver="public-only"``.
    delta : float, default=1e-5
        Privacy parameter delta in (0, 1).
    solver : {"semidp-gd", "semidp-sgd", "dp-gd", "public-only", "pda-md"}, \
            default="semidp-gd"
        * ``"semidp-gd"``: full-batch Algorithm 11 (exact accounting of ``T``
          composed Gaussians).
        * ``"semidp-sgd"``: the same with Poisson-sampled private batches of
          expected size ``batch_size`` (add/remove adjacency only).
        * ``"dp-gd"``: DP-GD on all rows, public rows treated as private in
          the noisy gradient (the thesis's baseline); equals ``semidp-gd``
          with ``alpha = n_private / n``, clipped public gradients and no
          preconditioner. The public rows still give its start, column
          scales and step size (as for every solver, the record says they
          are not protected).
        * ``"public-only"``: ridge on the public rows; private rows are
          discarded (epsilon 0).
        * ``"pda-md"``: public-data-assisted mirror descent (Amid et al.),
          DP-GD on private rows preconditioned by the normalized inverse
          public Hessian.

        The underscore spellings (``"semidp_gd"``, ...) are deprecated
        aliases of the same solvers (FutureWarning; removed in the next
        release).
        Every solver accepts sparse (CSR or CSC) ``X``, never densified:
        row norms, residuals and clipped sums are computed on the stored
        entries, by blocks of rows, and the public Gram matrix is a sparse
        product; the fit peaks below twice the sparse storage plus a few
        ``p x p`` matrices (``p = n_features + 1``).
    alpha : float in [0, 1] or "auto", default="auto"
        Weight of the private gradient. "auto": chosen from public rows by
        the error model (semidp solvers with the public preconditioner), or
        the inverse-variance rule of the thesis (Prop. 18) otherwise.
    clip_norm : float, default=1.0
        Per-row gradient clip threshold ``C``. Public; never derived from
        the data.
    public_clipping : {"clip"} or None, default=None
        Whether public gradients are clipped with ``C`` too (the thesis's
        experiments do). Unclipped public gradients make the fixed point the
        inverse-variance combination of the public and private estimates.
        semidp solvers only (dp-gd always clips, pda-md uses no public
        gradient).
    preconditioner : {"public"} or None, default="public"
        ``"public"``: the inverse model Hessian from public rows (semidp
        solvers). None: plain gradient steps (thesis Algorithm 11). dp-gd
        never preconditions; pda-md always uses its own mirror map.
    max_iter : int or "auto", default="auto"
        Number of passes over the private rows (epochs, as in
        :class:`~sklearn_dpfair.linear_model.DPLogisticRegression` and the
        FERMI estimators): one noisy full-batch step each (semidp-gd, dp-gd,
        pda-md), or an epoch of Poisson batches (semidp-sgd). Fixed before
        the private rows are read. A private fit takes at most ``10**6``
        noisy steps (``max_iter``, or about ``max_iter * n_private /
        batch_size`` for semidp-sgd): more is refused with a ValueError
        naming ``max_iter`` (and ``batch_size``), by ``fit`` and
        ``privacy_plan`` alike.
    learning_rate : float or "auto", default="auto"
        Step size. With ``preconditioner="public"`` it is in units of a full
        Newton step of the model; otherwise it multiplies the C-normalized
        mean gradient. "auto" picks it from public rows. Where the fit tunes
        on its public rows (the semidp solvers with the public
        preconditioner and more public rows than parameters), a given
        value of 2 or more is refused with a ValueError, by ``fit`` and
        ``privacy_plan`` alike: two Newton steps make the model's iteration
        expand in every direction. The unclipped
        public gradient is C-normalized too, so its part of a step is
        ``learning_rate * (1 - alpha) / C`` times the public rows'
        (preconditioned, weighted) second-moment matrix: a given
        ``learning_rate`` for which that exceeds 2 along some direction
        would make the iterates diverge, and is refused with a ValueError
        naming the largest safe value, before any private sum is taken (the
        check reads public rows, public weights and parameters only); an
        "auto" step is capped at the inverse of its largest eigenvalue
        (which the tuned step of unweighted rows never exceeds).
    batch_size : int or "auto", default="auto"
        Expected Poisson batch of private rows (semidp-sgd only); "auto" is
        5 % of the private rows, at least 256.
    public_ridge : float, default=1e-6
        Ridge penalty of the public warm start, on standardized coefficients.
    fit_intercept : bool, default=True
        Fit an intercept through a constant column inside the clipped
        gradient (no centring with private means).
    adjacency : {"replace_one", "add_remove"}, default="replace_one"
        Neighbouring relation on private rows. "replace_one" (the thesis's
        Definition 14) doubles the sensitivity, hence the noise.
    n_private : int or None, default=None
        The declared, public number of private records. None (the
        convention of every estimator here): the count of private rows in
        the data is treated as public, and the fit divides its noisy sums
        by it, derives ``alpha``, the tuning and semidp-sgd's sampling rate
        from it. Under ``adjacency="add_remove"`` an added or removed row
        changes that count, which the guarantee does not cover (see
        "Counts treated as public" in the User Guide: at a claimed
        ``epsilon = 1`` one step is in truth ``epsilon`` 2.2 to 3 or more).
        An int is used instead for every division, ``alpha``, the tuning
        and the sampling rate, whatever the data hold, so no count is read
        from the data and the guarantee is exactly the stated one; the
        record says so. Poisson batches still sample each private row with
        the rate ``batch_size / n_private``, and ``n_private_`` is the
        declared value. A declared value far from the true count only costs
        utility (the mean gradient is scaled by the ratio). The warning for
        ``delta >= 1/n`` compares ``delta`` with it plus the public rows.
    feature_scaling : {"auto"} or None, default="auto"
        How the columns are brought to a common scale before the clipped
        steps (raw columns such as ages, incomes or years otherwise let the
        column of largest magnitude saturate every clip). ``"auto"``:

        * by ``feature_bounds`` when given (midpoint and half-width; public,
          no budget);
        * else by the mean and standard deviation of the public rows when
          there are at least 5 of them: public rows are public by this
          estimator's contract, so their statistics cost no privacy (like
          the public warm start and preconditioner);
        * else (fewer public rows) by private robust statistics (a private
          median, then private quantiles of the centred column, on a public
          log-scale grid) that spend 10% of the zCDP budget, composed into
          the same ``dp_event_`` (the steps' noise is calibrated to the rest
          and accounted with RDP) and named in the record, where the rows
          and budget can resolve them (a public rule of ``n``, ``epsilon``
          and the number of columns); otherwise none are drawn, the columns
          are used as given, and a warning names those far from unit scale
          (read from every training row: whether it is raised is outside
          the guarantee, see Notes).

        With fewer than 5 public rows the target is scaled as well (see
        ``target_scaling``).

        The model is fitted on the scaled columns and ``coef_``,
        ``intercept_`` and ``coef_public_`` are reported in the user's units.
        Sparse ``X`` is scaled by ``feature_bounds`` only, without centring
        (a scaled copy of its stored values otherwise would break the sparse
        fit's memory bound): on raw sparse columns of large magnitude every
        clip saturates, and a column constant on the public rows can make
        the fit diverge (User Guide), so declare bounds. None: the columns
        are used as given. No
        effect with ``epsilon=np.inf`` (the non-private solver is
        scale-free) or ``solver="public-only"``.
    feature_bounds : array-like of shape (n_features, 2), default=None
        Public ``(lower, upper)`` range of every column, for
        ``feature_scaling="auto"`` (values outside are not clipped; the
        gradient clip bounds their influence). The columns are divided by
        the half-widths (the largest magnitudes for sparse ``X`` or without
        an intercept) in ``X``'s dtype: a range whose half-width is below
        that dtype's smallest normal number (``1.2e-38`` for float32), or
        whose midpoint or half-width is beyond its largest float, is
        refused.
    target_scaling : {"auto"} or None, default="auto"
        ``"auto"``: with fewer than 5 public rows, the target is brought to
        unit scale by private robust statistics (its private median and a
        private quantile of the centred target) and the model reported in
        its units: without a public warm start a target far from 0 (an age
        near 40, a price near 3e5) is out of the clipped steps' reach. The
        draws come from the 10% zCDP share of the private column scales (as
        one more column) or, beside declared ``feature_bounds``, unscaled
        columns (``feature_scaling=None``) or a sparse ``X``, take it alone;
        composed into the same ``dp_event_`` and named in the record. With
        5 public rows or more the public warm start anchors the target and
        nothing is spent. Where the share cannot resolve a spread on so few
        rows (a public rule of the counts and the budget: German credit's
        750 rows at ``epsilon=1``), the target is used as given, with a
        warning. None: the target as given (a target already centred and of
        unit scale), silently. No effect with ``epsilon=np.inf`` or
        ``solver="public-only"``.
    device : {"cpu", "cuda", "auto"}, default="cpu"
        Where the sums over rows of the private solvers run. "cpu" is
        numpy. "cuda" runs the same solver through the array API in PyTorch
        on the current GPU (optional extra
        ``pip install 'sklearn-dpfair[torch]'``); "auto" is "cuda" when
        PyTorch sees a GPU, else "cpu". The public statistics, the Poisson
        batches and the noise are computed or drawn on the host from the
        same generator on every backend, so a seed gives the same
        coefficients up to floating-point round-off. Fitted arrays are numpy
        either way. Sparse ``X`` runs on the CPU ("auto" selects it, "cuda"
        raises a TypeError); ``epsilon=np.inf`` and "public-only" run on the
        CPU.
    verbose : int, default=0
        With ``verbose > 0`` the private solvers print one line per epoch
        to stdout: the epoch, the norm of the released step gradient (the
        noisy private mean gradient combined with the public one: released
        values only, so printing it costs no privacy) and the elapsed time.
    accountant : {"pld", "rdp"} or PrivacyLedger, default="pld"
        dp-accounting accountant; PLD is exact for composed Gaussians.
        Private feature scales (see ``feature_scaling``) are accounted with
        RDP, which reads their zCDP events.
    random_state : None, int, numpy.random.RandomState or numpy.random.Generator, \
default=None
        None (the default) draws the noise from fresh OS entropy: the only
        setting for a private release. Anything else is a seed, for tests and
        experiments: an int, or a ``RandomState`` or ``Generator`` instance,
        read (never advanced) as the seed its current state gives. Whoever
        knows a seed knows the noise, and fits given the same seed (clones in
        ``GridSearchCV`` or ``cross_validate`` included) draw the same noise:
        the privacy record of a seeded fit says that it is not a private
        release, and a ``PrivacyLedger`` refuses to compose fits that share a
        seed (its total is inf).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Coefficients, of the dtype of ``X`` (float32 or float64).
    intercept_ : float
        Intercept (0.0 if ``fit_intercept=False``).
    coef_public_ : ndarray of shape (n_features,)
        Coefficients of the public warm start (in the user's units, like
        ``coef_``).
    solver_ : str
        The solver that ran, by its hyphenated name (also when ``solver``
        was given in a deprecated underscore spelling).
    alpha_ : float
        Private weight used (NaN for ``public-only``).
    learning_rate_ : float
        Step size used (NaN for ``public-only``).
    n_iter_ : int
        Passes over the private rows (``max_iter``'s unit): the noisy steps
        of the full-batch solvers, the epochs of semidp-sgd.
    t_ : int
        Number of noisy steps (the record's ``steps``; ``ceil(n_iter_ / q)``
        for semidp-sgd), as in the other estimators.
    predicted_excess_risk_ : float or None
        The public error model's prediction of the excess test MSE of the
        chosen configuration (None when the model was not used).
    n_public_ : int
        Number of public rows.
    n_private_ : int
        Number of private records the fit used: the declared ``n_private``
        when given (the data's count is then never released), else the
        private rows of the data.
    epsilon_ : float
        Epsilon spent on the private rows, computed from ``dp_event_``.
    delta_ : float
        Delta of the guarantee.
    noise_multiplier_ : float
        Noise standard deviation in units of the sensitivity of each sum.
    dp_event_ : dp_accounting.DpEvent
        Description of the mechanism; ``epsilon_`` can be recomputed from it.
    adjacency_ : {"add_remove", "replace_one"}
        Neighbouring relation of the guarantee (on private rows).
    privacy_record_ : PrivacyRecord
        All of the above, with sensitivity, sampling rate and steps: exactly
        what the accountant was given, ``dp_event_ ==
        noisy_sgd_event(noise_multiplier, sampling_probability or 1, steps)``
        (a no-op event when ``steps == 0``, ``solver="public-only"``, whose
        ``clip_norm`` is then None). ``clip_norm`` is the sensitivity of one
        released sum, ``C`` or ``2 C``; ``inf`` with ``epsilon=np.inf``,
        where nothing is clipped.
    privacy_caveats_ : list of str
        What the guarantee does not cover: the rows ``public_mask`` marks
        public (when it marks any) and public ``sample_weight`` (when
        given); empty otherwise.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when X has string column names.

    See Also
    --------
    sklearn_dpfair.linear_model.semidp_hyperparameters : The public-only choice.
    sklearn.linear_model.Ridge : The non-private model.

    Notes
    -----
    One step of ``semidp-gd`` computes, with ``psi_i`` the gradient of row
    ``i`` clipped to norm ``C``,
    ``g = alpha (sum_priv psi_i + N(0, (z Delta)^2 I)) / (C n_priv)
    + (1 - alpha) sum_pub grad_i / (C n_pub)`` and ``w <- w - eta P g``, with
    ``Delta = C`` (add/remove) or ``2 C`` (replace-one) and ``z`` the smallest
    noise multiplier for which dp-accounting certifies ``T`` composed
    Gaussians at ``(epsilon, delta)``. ``P`` and the warm start depend on
    public rows only, so they are free.

    Preprocessing fitted on all rows (e.g. a ``StandardScaler`` in a
    ``Pipeline``) leaks private statistics: fit it on public rows only (for
    ``StandardScaler``, route ``sample_weight=public_mask``).

    Sparse and float32 ``X``: see the ``solver`` parameter and the User
    Guide. With float32 data the iterates are float32 and the clipped sums
    are accumulated in float64 by row blocks (no float64 copy of ``X``), so
    one record moves a sum by at most the clip, as in float64. The target
    stays float64 (a private target beyond float32's range is then a huge
    finite residual, clipped like any other); a public fit whose
    coefficients do not fit in float32 (public targets near 1e38 or beyond)
    is refused with a ValueError before any private sum is taken (pass
    float64 ``X``).

    Adversarial records. Each private row's term ``psi_i`` is finite with
    norm at most ``C`` whatever the row holds: norms are computed without
    overflow, a prediction ``x~_i^T w`` that overflows is saturated to the
    largest float (features near the float64 limit; the row is then
    clipped like any other), and a row whose residual is still not finite
    contributes exactly 0 to that step's sum (public rows likewise). With
    the default ``feature_scaling``, a scaled value beyond the float range
    is saturated the same way. Input validation (shapes,
    NaN/inf, ``public_mask``) and the checks of the solver options read only
    shapes, counts, parameters and public rows; after them no exception or
    warning depends on the private rows, but for one input check: where
    ``feature_scaling="auto"`` draws no private scales (a public rule of
    the counts and the budget, see ``feature_scaling``), the warning that
    names the columns far from unit scale reads every training row, the
    private ones included, before any release. It shows no value, but
    whether it is raised, and which columns it names, is outside the
    guarantee (pass ``feature_bounds`` to avoid it).

    References
    ----------
    .. [1] A. Lowy, Z. Li, T. Huang, M. Razaviyayn, "Optimal differentially
       private learning with public data", arXiv:2306.15056 (thesis ch. 2).
    .. [2] E. Amid et al., "Public data-assisted mirror descent for private
       model training", ICML 2022.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair import SemiDPLinearRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((5000, 5))
    >>> y = X @ np.arange(1.0, 6.0) + 0.5 * rng.standard_normal(5000)
    >>> public = np.arange(5000) < 500
    >>> reg = SemiDPLinearRegression(epsilon=1.0, random_state=0)
    >>> reg = reg.fit(X, y, public_mask=public)
    >>> reg.epsilon_ <= 1.0
    True
    >>> np.round(reg.coef_).tolist()
    [1.0, 2.0, 3.0, 4.0, 5.0]
    """

    _parameter_constraints = {
        **PRIVACY_PARAMETER_CONSTRAINTS,
        "solver": [
            StrOptions(
                {*SEMIDP_SOLVERS, *DEPRECATED_SOLVER_NAMES},
                deprecated=set(DEPRECATED_SOLVER_NAMES),
            )
        ],
        "alpha": [Interval(Real, 0, 1, closed="both"), StrOptions({"auto"})],
        "clip_norm": [CLIP_NORM_CONSTRAINT],
        "public_clipping": [StrOptions({"clip"}), None],
        "preconditioner": [StrOptions({"public"}), None],
        "max_iter": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "learning_rate": [
            Interval(Real, 0, None, closed="neither"),
            StrOptions({"auto"}),
        ],
        "batch_size": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "public_ridge": [Interval(Real, 0, None, closed="left")],
        "fit_intercept": ["boolean"],
        "adjacency": [StrOptions({"replace_one", "add_remove"})],
        "n_private": [Interval(Integral, 1, None, closed="left"), None],
        "feature_scaling": [StrOptions({"auto"}), None],
        "feature_bounds": ["array-like", None],
        "target_scaling": [StrOptions({"auto"}), None],
        "device": [StrOptions(set(DEVICE_OPTIONS))],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=1e-5,
        solver="semidp-gd",
        alpha="auto",
        clip_norm=1.0,
        public_clipping=None,
        preconditioner="public",
        max_iter="auto",
        learning_rate="auto",
        batch_size="auto",
        public_ridge=1e-6,
        fit_intercept=True,
        adjacency="replace_one",
        n_private=None,
        feature_scaling="auto",
        feature_bounds=None,
        target_scaling="auto",
        device="cpu",
        verbose=0,
        accountant="pld",
        random_state=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.solver = solver
        self.alpha = alpha
        self.clip_norm = clip_norm
        self.public_clipping = public_clipping
        self.preconditioner = preconditioner
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.public_ridge = public_ridge
        self.fit_intercept = fit_intercept
        self.adjacency = adjacency
        self.n_private = n_private
        self.feature_scaling = feature_scaling
        self.feature_bounds = feature_bounds
        self.target_scaling = target_scaling
        self.device = device
        self.verbose = verbose
        self.accountant = accountant
        self.random_state = random_state

    def _check_float_range(self):
        """Refuse an int parameter beyond float64's range, naming it.

        The set-up computes with every real parameter (and the declared
        ``n_private``) as a float; ``max_iter`` and ``batch_size`` are
        compared as ints (:data:`~sklearn_dpfair._solvers.semi_dp._fit.MAX_STEPS`).
        Reads the parameters only.
        """
        names = (
            "epsilon", "delta", "alpha", "clip_norm", "learning_rate",
            "public_ridge", "n_private",
        )
        float_parameters(**{name: getattr(self, name) for name in names})

    def _check_clip_norm(self):
        """Refuse a ``clip_norm`` whose square or inverse square leaves float64.

        Every private solver models its clipped gradients on the public rows
        (the step size, alpha) through ``clip_norm**2``; a non-private fit
        (``epsilon=inf``) and ``solver="public-only"`` do not clip. Checked
        before the data are read.
        """
        solver = DEPRECATED_SOLVER_NAMES.get(self.solver, self.solver)
        if solver == "public-only" or math.isinf(self.epsilon):
            return
        check_clip_norm_range(self.clip_norm)

    def _check_solver_options(self, solver, n_public, n_private):
        if solver == "public-only":
            if n_public == 0:
                raise ValueError(
                    "solver='public-only' needs public rows, but public_mask "
                    "marks none (or was not given)."
                )
            return
        # epsilon=inf is least squares on all rows (no private sum is
        # taken), which needs no private row.
        if n_private == 0 and not math.isinf(self.epsilon):
            raise ValueError(
                f"solver={solver!r} needs private rows, but public_mask "
                "marks every row public; use solver='public-only' (or Ridge)."
            )
        if solver == "pda-md" and n_public == 0:
            raise ValueError("solver='pda-md' needs public rows for its mirror map.")
        if solver == "dp-gd" and self.alpha != "auto":
            raise ValueError(
                "solver='dp-gd' treats public rows as private, so its alpha is "
                f"n_private / n; leave alpha='auto' (got alpha={self.alpha!r})."
            )
        if solver == "pda-md" and self.alpha != "auto":
            raise ValueError(
                "solver='pda-md' uses private gradients only (alpha = 1); leave "
                f"alpha='auto' (got alpha={self.alpha!r})."
            )
        if solver == "semidp-sgd" and self.adjacency == "replace_one":
            raise ValueError(
                "solver='semidp-sgd' uses Poisson subsampling, which is "
                "accounted under add/remove adjacency only; use "
                "adjacency='add_remove' or the full-batch solver='semidp-gd'."
            )

    def _semidp_params(self, solver, n_public):
        """The public inputs of the fit (:class:`SemiDPParams`)."""
        # Every public hyperparameter of the fit is the estimator parameter
        # of the same name; the solver is given by its current name.
        hyperparameters = {
            name: getattr(self, name) for name in SEMIDP_HYPERPARAMETERS
        }
        return SemiDPParams(
            budget=PrivacyBudget(
                self.epsilon,
                self.delta,
                self._accountant_kind(),
                # dp-gd treats the public rows as private in its noisy
                # gradient, but they still give its start, column scales and
                # step size exactly, as they do every other solver's.
                caveats=(PUBLIC_ROWS_CAVEAT,) if n_public else (),
            ),
            **{**hyperparameters, "solver": solver},
        )

    _plan_public_counts = ("n_public",)
    # Sparse X gets no private quantiles (public bounds only), so the event
    # depends on the layout.
    _plan_reads_layout = True

    def _planned_record(self, n_samples, n_features, n_public=0, *, sparse=False):
        """The record of a fit on ``n_samples`` rows, ``n_public`` of them public.

        By the schedule, mechanism and account of the fit
        (:func:`~sklearn_dpfair._solvers.semi_dp.planned_record`); a step
        count tuned on the public rows (``max_iter="auto"`` with the public
        preconditioner) cannot be planned from counts and raises.
        """
        if n_public > n_samples:
            raise ValueError(
                f"n_public={n_public} exceeds n_samples={n_samples}."
            )
        solver = canonical_solver(self.solver)
        n_private = n_samples - n_public
        self._check_float_range()
        self._check_clip_norm()
        self._check_solver_options(solver, n_public, n_private)
        params = self._semidp_params(solver, n_public)
        return planned_record(
            params,
            n_private=params.private_count(n_private),
            n_public=n_public,
            n_features=n_features,
            sparse=sparse,
        )

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None, *, public_mask=None):
        """Fit the model; only rows with ``public_mask == False`` are protected.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; float32 stays float32 (``coef_`` too).
        y : array-like of shape (n_samples,)
            Targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Public non-negative weights, used as given in a private fit
            (rescaled to mean 1 only at ``epsilon=inf``). Each row's
            residual is multiplied by its weight *before* it is clipped, so
            one private row moves a noisy sum by at most the clip norm
            whatever its weight; the iterations converge to the minimizer
            of the weighted objective. The public warm start, preconditioner and
            tuning stay unweighted (solver "public-only" refuses
            sample_weight). Weights of 1 give exactly the unweighted fit.
        public_mask : array-like of bool, shape (n_samples,), default=None
            True for public rows. Routable with
            ``set_fit_request(public_mask=True)``, so CV splitters slice it
            with X and y. None: every row is private (with a warning,
            but at ``epsilon=inf``, which fits all rows alike).

        Returns
        -------
        self : SemiDPLinearRegression
            The fitted estimator.
        """
        refuse_dask_input(
            "SemiDPLinearRegression",
            X=X,
            y=y,
            sample_weight=sample_weight,
            public_mask=public_mask,
        )
        self._check_float_range()
        self._check_clip_norm()
        # One C-ordered copy up front (at most 2x the data) when X is
        # F-ordered, as DataFrames give: the solvers gather batch rows. Sparse
        # X becomes CSR once (at most 2x the sparse storage); float32 stays
        # float32.
        # Sparse X runs on the host (resolve_backend refuses "cuda" for it).
        backend = resolve_backend(X, self.device)
        # Detached before validation (see detached_input): no autograd graph
        # of the training rows, and no torch warning from validate_data's copy.
        X, y = detached_input(X), detached_input(y)
        X, y = validate_data(
            self,
            X,
            y,
            accept_sparse="csr",
            dtype=backend.input_float_dtypes,
            y_numeric=True,
            order="C",
        )
        check_sparse_sums_finite(X)
        # The public statistics, the scales and the step run on the host;
        # the solver moves the rows to the backend's device once.
        if not sp.issparse(X):
            X, y = to_numpy(X), to_numpy(y)
        # The target stays float64 whatever X's dtype (as HeavyTailDPRegressor
        # keeps it): a cast to float32 would turn a finite target beyond its
        # range into inf, with numpy's warning, after validation; one private
        # record would decide that warning. Numeric strings are parsed and
        # checked finite there.
        y = float64_target(y)
        mask = check_public_mask(
            public_mask, X.shape[0], private=not math.isinf(self.epsilon)
        )
        weights = check_public_weights(sample_weight, X)
        n_public = int(mask.sum())
        n_private = X.shape[0] - n_public
        solver = canonical_solver(self.solver)
        self._check_solver_options(solver, n_public, n_private)
        rng = check_noise_generator(self.random_state)

        params = self._semidp_params(solver, n_public)
        # Against the count the fit divides by: with n_private declared, the
        # private rows in the data are not a public count under add/remove
        # adjacency, and a warning read from them would tell a neighbour.
        check_delta_for_n(self.delta, params.private_count(n_private) + n_public)
        # The plan of the fit, by the function privacy_plan() reads.
        setup = semidp_setup(
            params,
            n_private=params.private_count(n_private),
            n_public=n_public,
            n_features=X.shape[1],
            sparse=sp.issparse(X),
            caveats=weights_caveats(weights),
            dtype=X.dtype,
        )
        if setup.target_left_as_given:
            # A rule of the counts and the budget: no private value decides it.
            warn_at_caller(TARGET_LEFT_AS_GIVEN, UserWarning)
        if setup.scaling.unaffordable:
            # A public rule of n, epsilon and the number of columns drew no
            # private scales: say so when the columns are far from unit
            # scale (an input check, outside the guarantee, as the others).
            warn_unscaled_columns(X, self, True, scaling=setup.scaling)
        result = fit_semidp(
            X,
            y,
            mask,
            setup,
            rng=rng,
            sample_weight=weights,
            backend=backend,
            progress=progress_printer(self.verbose, type(self).__name__, "epoch"),
        )

        self.solver_ = solver
        self.coef_ = result.coef
        self.intercept_ = result.intercept
        self.coef_public_ = result.warm_start_coef
        self.alpha_ = result.alpha
        self.learning_rate_ = result.learning_rate
        self.n_iter_ = result.n_epochs
        self.t_ = result.n_steps
        self.predicted_excess_risk_ = (
            None if result.choice is None else result.choice.predicted_excess_risk
        )
        self.n_public_ = n_public
        self.n_private_ = params.private_count(n_private)
        self._set_privacy_record(result.record)
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Without public rows (the common checks pass none) the default fit
        # is 20 noisy steps from zero on datasets of ~20-100 rows.
        tags.regressor_tags.poor_score = True
        tags.input_tags.sparse = True
        return tags
