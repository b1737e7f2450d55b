# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Calibrate, choose, solve, describe: the fit behind ``SemiDPLinearRegression``.

Order of work, so that nothing private is read before it is needed:

1. copy the public rows out by the (public) mask; the private rows stay in
   place, addressed by the mask (no copy of them, so peak memory stays
   within twice the data); a sparse public block stays sparse (its Gram
   matrix is a sparse product), and no row is ever densified;
2. public statistics, warm start and the "auto" hyperparameters from the
   public rows only (``_public_geometry``, ``_public_tuning``);
3. the Gaussian mechanism of the private sums, its noise multiplier
   calibrated from the :class:`~sklearn_dpfair.privacy.PrivacyBudget`, the
   sampling rate and the number of steps (:func:`semidp_noise_multiplier`);
4. the semi-DP iteration (``_solver``), where private rows enter only
   through noisy clipped sums;
5. :meth:`PrivacyBudget.account <sklearn_dpfair.privacy.PrivacyBudget.account>`:
   the :class:`~sklearn_dpfair.privacy.PrivacyRecord` of the run, checked
   against the budget.

Adjacency. Only private rows are protected (semi-DP, thesis Definition 14);
which rows are public is public. The number of private rows is treated as
public (the package's one convention, ``privacy/_counts.py``) unless the
params declare it (``n_private``): then every division, ``alpha``, the
tuning and the sampling rate use the declared value and no count is read
from the data. Under ``"replace_one"``
one private row moves a clipped sum by ``2 C``, under ``"add_remove"`` by
``C``. The noise std is ``z * sensitivity`` and the event is
``GaussianDpEvent(z)`` accounted under add/remove, i.e. the factor 2 is
folded into the sensitivity as ``privacy/_accounting.py`` prescribes.

The :class:`~sklearn_dpfair.privacy.PrivacyRecord` describes exactly the
event given to the accountant: ``noisy_sgd_event(noise_multiplier,
sampling_probability or 1, steps)``, or a no-op when ``steps == 0``
(``"public-only"``: no private sum is released, ``clip_norm`` is None). Its
``clip_norm`` is the sensitivity of one released sum (``C`` or ``2 C``;
``inf`` for ``epsilon = inf``, where the private rows are not clipped).

No exception or warning after input validation depends on the private rows:
the checks read the public rows, the counts and the parameters only (among
them the refusal of a given step size along which the unclipped public
gradient's step expands, :func:`check_public_step`), and the solver maps a
private row whose terms overflow to the fixed contribution 0.
"""

import contextlib
import functools
import math
from dataclasses import dataclass, field, fields, replace

import numpy as np
import scipy.sparse as sp

from ..._loss import SquaredLoss
from ...exceptions import PrivacyAccountingError
from ...privacy import (
    GaussianMechanism,
    PrivacyBudget,
    PrivacyRecord,
    calibrate_noise_multiplier,
    fit_weights,
)
from ...privacy._accounting import (
    composed_event,
    gaussian_event,
    no_op_event,
    noisy_sgd_event,
)
from ...privacy._calibration import calibrate_noise
from ...privacy._releases import joint_release
from ...privacy._zcdp import ZCDP_ACCOUNTANT
from ...utils._array_api import NUMPY_BACKEND
from ...utils._numeric import public_float
from ...utils._validation import warn_at_caller
from .._feature_scaling import ScalingPlan
from .._non_private import minimize_linear, non_private_record
from .._schedules import MAX_STEPS
from ._public_geometry import (
    geometry_estimable,
    newton_preconditioner,
    pda_md_preconditioner,
    public_geometry,
    public_step_curvature,
    public_warm_start,
    uninformative_geometry,
)
from ._public_tuning import (
    TAIL_FRACTION,
    HyperparameterChoice,
    check_clip_norm_range,
    choose_hyperparameters,
    clipped_gradient_moments,
    inverse_variance_weight,
    norm_quantiles,
)
from ._scaling import (
    check_bounds_in_dtype,
    fit_semidp_scaling,
    plan_semidp_scaling,
    scaled_rows,
    target_in_user_units,
    target_left_as_given,
)
from ._scaling import describe as describe_scaling
from ._solver import SemiDPData, semidp_gradient_descent

__all__ = [
    "SEMIDP_HYPERPARAMETERS",
    "SEMIDP_SOLVERS",
    "SENSITIVITY_FACTOR",
    "SemiDPFit",
    "SemiDPParams",
    "SemiDPSetup",
    "fit_semidp",
    "planned_record",
    "public_hyperparameters",
    "semidp_noise_multiplier",
    "semidp_setup",
]

#: Sensitivity of a clipped sum in units of the clip norm, per adjacency.
SENSITIVITY_FACTOR = {"add_remove": 1.0, "replace_one": 2.0}

_TOO_FEW_PUBLIC_ROWS = (
    "Only {n} public rows for {p} parameters: too few to estimate a warm "
    "start, a preconditioner or the 'auto' step, weight and number of steps "
    "(their model interpolates the rows), so the private fit starts from "
    "zero coefficients and their mean target as the intercept and takes "
    "the plain steps of a fit without public rows; the rows still enter "
    "its public gradient. Mark more than {p} rows public to use them fully."
)

#: The solvers of a semi-private linear regression, by name.
SEMIDP_SOLVERS = ("semidp-gd", "semidp-sgd", "dp-gd", "public-only", "pda-md")

_MECHANISM_NAME = {
    "semidp-gd": "semi-DP noisy full-batch GD (thesis Algorithm 11, Gaussian)",
    "semidp-sgd": "semi-DP noisy SGD, Poisson-sampled private rows (Algorithm 11)",
    # semidp-sgd whose expected batch holds every private row (q = 1).
    "semidp-sgd-full": (
        "semi-DP noisy SGD with sampling rate 1: every private row in every "
        "step, i.e. full-batch GD (thesis Algorithm 11, Gaussian)"
    ),
    "dp-gd": (
        "DP-GD on all rows, public rows treated as private in the noisy gradient"
    ),
    "pda-md": "PDA-MD: DP-GD on private rows, public-Hessian mirror map",
    "public-only": "public rows only (private rows discarded)",
}

# Defaults when no public row can inform a choice. 20 full-batch steps: the
# total privacy noise does not depend on T (GDP composition), and 20 steps
# converge from the warm start on the benchmark. Without public rows there is
# no curvature estimate, so the plain step is 1 (a clipped, C-normalized
# gradient has norm <= 1).
DEFAULT_MAX_ITER = 20
DEFAULT_EPOCHS = 5
DEFAULT_PLAIN_LEARNING_RATE = 1.0
# Plain (identity-preconditioned) solvers step half of the model's Newton
# step 1/k: the model curvature is that at the optimum, larger than the
# curvature far from it, so a full step would overshoot near convergence.
PLAIN_NEWTON_FRACTION = 0.5
# semidp-sgd's default expected private batch: 5 % of the private rows, at
# least 256 (as DPLogisticRegression's "auto").
AUTO_BATCH_FRACTION, AUTO_BATCH_MIN = 0.05, 256
# The most noisy steps a private fit takes (``max_iter`` full-batch steps,
# or ``max_iter`` epochs of Poisson batches for semidp-sgd): the solver and
# the public error model (:func:`~._public_tuning.predicted_excess_risk`)
# loop over the steps in Python, and the calibration composes them, so a
# larger count would not finish; the package's one cap on steps
# (``_schedules.MAX_STEPS``). Refused at plan and fit alike.
#: A given step of the public Newton preconditioner, in units of a full
#: Newton step of the model, must stay below this: each step multiplies the
#: model's distance to its fixed point by ``1 - learning_rate`` along every
#: direction, which expands from 2 on (and the stationary spread of the
#: tail-averaged iterates, ``eta / (2 - eta)``, has no finite value).
NEWTON_STEP_LIMIT = 2.0


def float_parameters(**values):
    """The real parameters as Python floats; strings and None pass as given.

    Each through :func:`~sklearn_dpfair.utils._numeric.public_float`: a
    numpy ``float32`` parameter keeps the products it enters in float32
    (NumPy 2 promotes a float32 scalar times a Python float to float32), so
    a value near float32's largest overflowed where the equal float64 did
    not; an int is exact but one beyond float64's range (``10**400``) has
    no float to compute with. Reads the parameters only.

    Returns
    -------
    floats : dict
        The same names, each value ``float(value)`` or as given.

    Raises
    ------
    ValueError
        Naming the parameter, for an int beyond float64's range.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers.semi_dp._fit import float_parameters
    >>> float_parameters(public_ridge=np.float32(0.5), radius="auto", n=10**30)
    {'public_ridge': 0.5, 'radius': 'auto', 'n': 1e+30}
    >>> float_parameters(epsilon=10**400)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: epsilon is beyond the largest float ...
    """
    return {
        name: value if value is None or isinstance(value, str)
        else public_float(value, name)
        for name, value in values.items()
    }


@dataclass(frozen=True)
class SemiDPParams:
    """The public hyperparameters of one semi-private fit.

    The fields are those of
    :class:`~sklearn_dpfair.linear_model.SemiDPLinearRegression` (validated,
    ``solver`` in its hyphenated spelling), plus the
    :class:`~sklearn_dpfair.privacy.PrivacyBudget` of the private rows.

    Examples
    --------
    >>> from sklearn_dpfair._solvers.semi_dp import SemiDPParams
    >>> from sklearn_dpfair.privacy import PrivacyBudget
    >>> params = SemiDPParams(budget=PrivacyBudget(1.0, 1e-5, "pld"))
    >>> params.solver, params.sensitivity
    ('semidp-gd', 2.0)
    """

    budget: PrivacyBudget
    solver: str = "semidp-gd"
    alpha: float | str = "auto"
    clip_norm: float = 1.0
    public_clipping: str | None = None
    preconditioner: str | None = "public"
    max_iter: int | str = "auto"
    learning_rate: float | str = "auto"
    batch_size: int | str = "auto"
    public_ridge: float = 1e-6
    fit_intercept: bool = True
    adjacency: str = "replace_one"
    n_private: int | None = None
    #: ``"auto"``: columns scaled before the solve (``_scaling``); None: not.
    feature_scaling: str | None = None
    #: Public ``(lower, upper)`` of every column, or None.
    feature_bounds: object = field(default=None, compare=False)
    #: ``"auto"``: with fewer public rows than anchor it, the target is
    #: scaled by private robust statistics (``_scaling``); None: as given.
    target_scaling: str | None = "auto"

    @property
    def clip(self):
        """The clip threshold applied: ``inf`` (no clipping) without privacy."""
        return float(self.clip_norm) if self.budget.is_private else math.inf

    def private_count(self, n_private_rows):
        """The count of private records every division and choice uses.

        The declared ``n_private`` when given (a public value: no count is
        read from the data); otherwise the rows in the data, treated as
        public (:mod:`~sklearn_dpfair.privacy._counts`).
        """
        return n_private_rows if self.n_private is None else int(self.n_private)

    @property
    def declared_counts(self):
        """The record's declared counts: ``(("n_private", n),)`` or empty."""
        return () if self.n_private is None else (("n_private", int(self.n_private)),)

    @property
    def sensitivity(self):
        """Sensitivity of one released private sum (``C`` or ``2 C``)."""
        return SENSITIVITY_FACTOR[self.adjacency] * self.clip


#: Names of the public hyperparameters (every field but the budget).
SEMIDP_HYPERPARAMETERS = tuple(
    field.name for field in fields(SemiDPParams) if field.name != "budget"
)


@dataclass
class SemiDPFit:
    """Result of :func:`fit_semidp`."""

    coef: np.ndarray
    intercept: float
    warm_start_coef: np.ndarray
    alpha: float
    learning_rate: float
    n_steps: int
    #: Passes over the private rows: ``n_steps`` for the full-batch solvers,
    #: the epochs of semidp-sgd (``max_iter``'s unit in both cases).
    n_epochs: int
    record: PrivacyRecord
    choice: HyperparameterChoice | None


@functools.lru_cache(maxsize=1024)
def semidp_noise_multiplier(budget, sampling_probability, steps):
    """Calibrated noise multiplier of ``steps`` (sub)sampled Gaussian sums.

    Full batch: ``T`` composed Gaussians of multiplier ``z`` are exactly one
    Gaussian of multiplier ``z / sqrt(T)`` (GDP composition; both
    accountants agree), so one calibration serves every ``T``. The fit's
    :meth:`~sklearn_dpfair.privacy.PrivacyBudget.account` then checks the
    composed event itself against the budget.

    Parameters
    ----------
    budget : PrivacyBudget
    sampling_probability : float
        Poisson rate of the private rows in each sum (1: full batch).
    steps : int
        Number of noisy sums.

    Returns
    -------
    noise_multiplier : float
        0 when the budget is not private.

    Examples
    --------
    >>> from sklearn_dpfair._solvers.semi_dp import semidp_noise_multiplier
    >>> from sklearn_dpfair.privacy import PrivacyBudget, calibrate_noise_multiplier
    >>> budget = PrivacyBudget(1.0, 1e-5, "pld")
    >>> z = semidp_noise_multiplier(budget, 1.0, 4)
    >>> z == 2 * calibrate_noise_multiplier(1.0, 1e-5, 1.0, 1, "pld")
    True
    """
    if not budget.is_private:
        return 0.0
    if budget.noise_multiplier is not None:
        return float(budget.noise_multiplier)
    if sampling_probability >= 1.0:
        single = calibrate_noise_multiplier(
            budget.epsilon, budget.delta, 1.0, 1, budget.accountant
        )
        return math.sqrt(steps) * single
    return calibrate_noise_multiplier(
        budget.epsilon, budget.delta, sampling_probability, steps, budget.accountant
    )


def _step_noise_variance(geometry, q, n_private, adjacency, noise_multiplier_of):
    """``T -> tau^2``: the per-coordinate variance of the privacy noise on the
    C-normalized private mean gradient, in the scale-free coordinates of the
    model (public inputs only)."""
    scale = float(np.mean(1.0 / geometry.scale))
    factor = SENSITIVITY_FACTOR[adjacency]

    def step_noise_var(steps):
        z = noise_multiplier_of(steps)
        return (factor * z / (q * n_private)) ** 2 * scale

    return step_noise_var


@dataclass(frozen=True)
class SemiDPSetup:
    """What a semi-private fit fixes before it reads a private value.

    Built by :func:`semidp_setup` from parameters and public counts only;
    the fit and the estimator's plan both obtain it there.

    Attributes
    ----------
    params : SemiDPParams
    scaling : ScalingPlan
        How the columns are scaled (``_scaling``); its event, if any, is
        composed into the record's.
    sampling_probability : float
        Poisson rate of the private rows in each step (1: full batch).
    n_steps : int or None
        Number of noisy steps; None while it is still to be tuned on the
        public rows (the full-batch event does not depend on it).
    mechanism : GaussianMechanism or None
        The Gaussian mechanism of each private sum (None without steps).
    record : PrivacyRecord or None
        Exactly what the accountant is given (None until the steps are
        known, when a fixed noise multiplier makes the event depend on them).
    single_multiplier : float or None
        Full batch: the noise multiplier of the one Gaussian the ``T`` steps
        compose to (what ``joint_release`` checks); None otherwise.
    """

    params: SemiDPParams
    scaling: ScalingPlan
    sampling_probability: float
    n_steps: int | None
    mechanism: GaussianMechanism | None
    record: PrivacyRecord
    single_multiplier: float | None = None
    n_private: int | None = None
    n_public: int | None = None
    n_features: int | None = None
    caveats: tuple = ()

    @property
    def target_left_as_given(self):
        """Whether the target's private scales were asked for but not afforded."""
        return target_left_as_given(self.params, self.n_public or 0, self.scaling)

    def noise_multiplier_of(self, steps):
        """The per-step noise multiplier of a run of ``steps`` steps."""
        return _noise_multiplier(self.params, self.scaling, self.sampling_probability, steps)

    def for_steps(self, steps):
        """The same set-up once the number of steps is known (tuned)."""
        finished = _finish(
            self.params, self.scaling, self.sampling_probability, steps, self.caveats
        )
        return replace(
            finished,
            n_private=self.n_private,
            n_public=self.n_public,
            n_features=self.n_features,
            caveats=self.caveats,
        )

    def check_data(self, X, public_mask):
        """Raise unless ``X`` and its mask have the counts this set-up planned,
        and ``X``'s dtype can hold the map of ``feature_bounds``."""
        n_public = int(np.count_nonzero(public_mask))
        counts = (
            self.params.private_count(X.shape[0] - n_public),
            n_public,
            X.shape[1],
        )
        planned = (self.n_private, self.n_public, self.n_features)
        if counts != planned:
            raise PrivacyAccountingError(
                f"The fit was planned for (n_private, n_public, n_features) = "
                f"{planned} but received {counts}: its releases would not be "
                "the accounted ones. This is a bug: please report it."
            )
        if self.params.feature_scaling is not None:
            # X's dtype (public) against the bounds' map, before a row is
            # read, whatever dtype the set-up was made for.
            check_bounds_in_dtype(
                self.params.feature_bounds,
                X.shape[1],
                X.dtype,
                center=bool(self.params.fit_intercept) and not sp.issparse(X),
            )


def _prior_budget(params, scaling):
    """The budget the steps are accounted under: RDP when private scales
    (zCDP events) come first, else the params' own."""
    if scaling.event is None:
        return params.budget
    return replace(params.budget, accountant=ZCDP_ACCOUNTANT)


def _noise_multiplier(params, scaling, q, steps):
    """Per-step noise multiplier of ``steps`` sums at rate ``q``, after the
    scaling's releases (if any)."""
    budget = params.budget
    if scaling.event is None:
        return semidp_noise_multiplier(budget, q, steps)
    if q >= 1.0:
        return math.sqrt(steps) * _single_after(params, scaling)
    prior = scaling.event
    return calibrate_noise(
        lambda z: composed_event([prior, noisy_sgd_event(z, q, steps)]),
        budget.epsilon,
        budget.delta,
        ZCDP_ACCOUNTANT,
    )


def _single_after(params, scaling):
    """Full batch: the one Gaussian's multiplier after the scaling's releases."""
    budget = params.budget
    if scaling.event is None:
        return semidp_noise_multiplier(budget, 1.0, 1)
    key = (budget, scaling.n_quantiles, scaling.quantile_rho, scaling.share)
    if key not in _SINGLE_CACHE:
        prior = scaling.event
        _SINGLE_CACHE[key] = calibrate_noise(
            lambda z: composed_event([prior, gaussian_event(z)]),
            budget.epsilon,
            budget.delta,
            ZCDP_ACCOUNTANT,
        )
    return _SINGLE_CACHE[key]


# The full-batch calibration after private scales, by budget and plan (the
# RDP search is the slow part of a small fit's set-up, and the tuning asks
# for several step counts).
_SINGLE_CACHE = {}


def _full_batch_event(params, scaling, steps):
    """The event of ``steps`` full-batch Gaussian sums of one fit.

    ``T`` Gaussian releases of multiplier ``z sqrt(T)`` are exactly one
    Gaussian release of multiplier ``z`` (Gaussian DP composes as
    ``mu = sqrt(sum mu_t^2)``: Dong, Roth and Su 2022, Corollary 3.3), so
    the fit is accounted as that one release: the event does not depend on
    ``T``, which a fit may tune on its public rows. ``steps=None`` (not
    known yet) needs a calibrated budget.
    """
    budget = params.budget
    if budget.noise_multiplier is None:
        z = _single_after(params, scaling)
    else:
        z = float(budget.noise_multiplier) / math.sqrt(steps)
    return gaussian_event(z)


def _account(params, mechanism, q, steps, caveats=(), scaling=None):
    """The record of the run: exactly the event given to the accountant."""
    name = params.solver
    scaling = ScalingPlan("none", 0) if scaling is None else scaling
    budget = _prior_budget(params, scaling)
    dp_event = None
    if name == "public-only":
        # The output does not depend on private rows: a no-op (epsilon 0),
        # no private sum released, hence no sensitivity.
        mechanism = GaussianMechanism(clip_norm=None, noise_multiplier=0.0)
        dp_event = no_op_event()
    elif params.budget.is_private and q >= 1.0:
        dp_event = _full_batch_event(params, scaling, steps)
        if name == "semidp-sgd":
            name = "semidp-sgd-full"
    description = _MECHANISM_NAME[name]
    if dp_event is not None and name != "public-only":
        description += (
            "; its full-batch Gaussian steps are accounted as the one Gaussian "
            f"of multiplier {dp_event.noise_multiplier:.4g} they compose to"
        )
    if describe_scaling(scaling):
        description += "; " + describe_scaling(scaling)
    if scaling.event is not None:
        steps_event = (
            dp_event
            if dp_event is not None
            else mechanism.event(sampling_probability=q, steps=steps)
        )
        # The private scales are released first, then the steps.
        dp_event = composed_event([scaling.event, steps_event])
    return budget.account(
        mechanism,
        description=description,
        adjacency=params.adjacency,
        # Full batch involves no sampling; the summary then omits the rate.
        sampling_probability=q if q < 1.0 else None,
        steps=steps,
        dp_event=dp_event,
        caveats=caveats,
        declared_counts=params.declared_counts,
    )


def _mechanism(params, scaling, q, steps):
    """The Gaussian mechanism of ``steps`` private sums at Poisson rate ``q``."""
    return GaussianMechanism(
        clip_norm=params.sensitivity,
        noise_multiplier=_noise_multiplier(params, scaling, q, steps),
    )


def _tunes_on_public_rows(params, n_public, n_features):
    """Whether the fit chooses alpha, the step size and T on its public rows.

    Only where they can estimate the public geometry (more rows than
    parameters, :func:`geometry_estimable`): a rule of public counts.
    """
    n_params = n_features + int(params.fit_intercept)
    return bool(
        params.solver in ("semidp-gd", "semidp-sgd")
        and params.preconditioner == "public"
        and geometry_estimable(n_public, n_params)
    )


def semidp_setup(
    params, *, n_private, n_public, n_features, sparse=False, caveats=(),
    dtype=np.float64,
):
    """The :class:`SemiDPSetup` of a fit, from public inputs only.

    It keeps the counts and caveats it was made from: :func:`fit_semidp`
    executes it on data of these counts only.

    The one place where the scaling, the schedule, the mechanism and the
    record of a semi-private fit are decided: :func:`fit_semidp` and the
    estimator's plan (:func:`planned_record`) both call it.

    Parameters
    ----------
    params : SemiDPParams
        Public hyperparameters and the budget.
    n_private, n_public, n_features : int
        The counts of the fit (``n_private`` the one it divides by: the
        declared one when ``params.n_private`` is set).
    sparse : bool, default=False
        Whether ``X`` is sparse (a public layout; it decides the scaling).
    caveats : tuple of str, default=()
        Caveats of the fit besides the budget's (sample weights).
    dtype : numpy dtype, default=np.float64
        ``X``'s floating dtype (public): ``feature_bounds`` whose map is not
        finite in it are refused
        (:func:`~._scaling.check_bounds_in_dtype`).

    Returns
    -------
    setup : SemiDPSetup
        ``n_steps`` is None when the steps are tuned on the public rows
        (then :meth:`SemiDPSetup.for_steps` completes it).

        Its ``record`` is None too when, besides, a fixed noise multiplier
        makes the event depend on the tuned steps.
    """
    setup = _semidp_setup(
        params,
        n_private=n_private,
        n_public=n_public,
        n_features=n_features,
        sparse=sparse,
        caveats=caveats,
        dtype=dtype,
    )
    return replace(
        setup,
        n_private=n_private,
        n_public=n_public,
        n_features=n_features,
        caveats=tuple(caveats),
    )


def _semidp_setup(params, *, n_private, n_public, n_features, sparse, caveats, dtype):
    """The body of :func:`semidp_setup` (without the counts it records)."""
    scaling = plan_semidp_scaling(
        params, n_features, n_public, sparse=sparse, n_samples=n_private + n_public,
        dtype=dtype,
    )
    solver = params.solver
    if solver == "public-only":
        return SemiDPSetup(
            params, scaling, 1.0, 0, None, _account(params, None, 1.0, 0, caveats)
        )
    if not params.budget.is_private:
        record = non_private_record(
            _account(
                params, params.budget.gaussian(params.sensitivity), 1.0, None, caveats
            ),
            0,
        )
        return SemiDPSetup(params, scaling, 1.0, None, None, record)
    # Every private solver models its clipped gradients through C^2 and
    # 1 / C^2: refused here, from the parameter, by the fit and its plan.
    check_clip_norm_range(params.clip)
    tuned = _tunes_on_public_rows(params, n_public, n_features)
    if tuned and params.learning_rate != "auto":
        # A rule of the parameter and the public counts: the plan refuses
        # what the fit would.
        check_newton_learning_rate(params.learning_rate)
    q, steps = _schedule(params, n_private)
    if steps is None and not tuned:
        steps = DEFAULT_MAX_ITER
    if steps is not None:
        return _finish(params, scaling, q, steps, caveats)
    if params.budget.noise_multiplier is not None:
        # With a fixed multiplier the event depends on the tuned steps: the
        # record waits for them (SemiDPSetup.for_steps).
        return SemiDPSetup(params, scaling, 1.0, None, None, None)
    # The step count is tuned on the public rows, but the full-batch event
    # does not depend on it (_full_batch_event).
    single = GaussianMechanism(
        clip_norm=params.sensitivity,
        noise_multiplier=_single_after(params, scaling),
    )
    record = _account(params, single, 1.0, None, caveats, scaling)
    return SemiDPSetup(
        params, scaling, 1.0, None, None, record, single.noise_multiplier
    )


def _finish(params, scaling, q, steps, caveats):
    """The set-up of ``steps`` noisy sums at rate ``q``."""
    mechanism = _mechanism(params, scaling, q, steps)
    record = _account(params, mechanism, q, steps, caveats, scaling)
    single = _single_after(params, scaling) if q >= 1.0 else None
    if single is not None and params.budget.noise_multiplier is not None:
        single = float(params.budget.noise_multiplier) / math.sqrt(steps)
    return SemiDPSetup(params, scaling, q, steps, mechanism, record, single)


def planned_record(params, *, n_private, n_public, n_features=1, sparse=False):
    """The record of :func:`fit_semidp`, from public inputs only.

    The :attr:`SemiDPSetup.record` of :func:`semidp_setup`, for
    ``n_private`` private and ``n_public`` public rows (``n_private`` is the
    count the fit divides by: the declared one when ``params.n_private`` is
    set) of dense or sparse data.

    Parameters
    ----------
    params : SemiDPParams
        Public hyperparameters and the budget.
    n_private, n_public : int
        The counts of the fit.
    n_features : int, default=1
        The number of columns (the private scales draw quantiles of each).
    sparse : bool, default=False
        Whether X is sparse (a public layout: sparse columns get no private
        quantiles).

    Returns
    -------
    record : PrivacyRecord

    Raises
    ------
    ValueError
        When the number of steps is tuned on the public rows
        (``max_iter="auto"`` with the public preconditioner) and a fixed
        noise multiplier makes the event depend on it.
    """
    record = semidp_setup(
        params,
        n_private=n_private,
        n_public=n_public,
        n_features=n_features,
        sparse=sparse,
    ).record
    if record is None:
        raise ValueError(
            "max_iter='auto' is chosen from the public rows, and with a "
            "fixed noise_multiplier the event depends on it: set max_iter "
            "to an int to plan this fit from counts."
        )
    return record


def _plain_learning_rate(geometry, clip_norm):
    """Half a Newton step of the clipped curvature at the public noise level.

    The default step where that curvature says nothing: 0 (a public noise
    variance that overflowed to ``inf``, public targets near 1e154 or
    beyond, clips every residual in the model) or a product that is not a
    positive finite number. Public rows only.
    """
    if geometry.eigvecs is None:  # no public rows, or too few
        return DEFAULT_PLAIN_LEARNING_RATE
    k, _ = clipped_gradient_moments(
        np.array([math.sqrt(geometry.noise_variance)]),
        norm_quantiles(geometry.row_norms),
        clip_norm,
    )
    with np.errstate(over="ignore", under="ignore"):
        curvature = float(k[0] * np.mean(geometry.scale))
    if not (math.isfinite(curvature) and curvature > 0.0):
        return DEFAULT_PLAIN_LEARNING_RATE
    step = PLAIN_NEWTON_FRACTION / curvature
    return step if math.isfinite(step) else DEFAULT_PLAIN_LEARNING_RATE


def public_step_curvature_of(X_public, s, alpha, clip_norm, *, weights, preconditioner):
    """Largest eigenvalue of the public gradient's part of one step, per unit step.

    The solver adds ``(1 - alpha) / C`` times the unclipped public mean
    gradient (De et al.'s normalization by ``C``; 1 without clipping), so
    this is ``(1 - alpha) / C`` times
    :func:`~._public_geometry.public_step_curvature`. Public inputs only.
    """
    scale = clip_norm if math.isfinite(clip_norm) else 1.0
    if alpha >= 1.0:
        return 0.0
    return (1.0 - alpha) / scale * public_step_curvature(
        X_public, s, weights=weights, preconditioner=preconditioner
    )


def check_public_step(learning_rate, curvature, params, alpha):
    """Refuse a given step size along which the public gradient's step expands.

    Each step multiplies the distance to the public fixed point by
    ``I - learning_rate * M`` with ``M`` the public part of the step
    (:func:`public_step_curvature_of`, largest eigenvalue ``curvature``):
    at ``learning_rate * curvature >= 2`` the iterates grow geometrically
    until they overflow, whatever the private rows hold (the clipped
    private term moves a step by a bounded amount). Every input is public
    (with private column scales, the public rows are read in the scaled
    units: post-processing of that accounted release), so the refusal
    reveals nothing else about the private rows.

    Examples
    --------
    >>> from sklearn_dpfair._solvers.semi_dp._fit import check_public_step
    >>> from sklearn_dpfair._solvers.semi_dp import SemiDPParams
    >>> from sklearn_dpfair.privacy import PrivacyBudget
    >>> params = SemiDPParams(budget=PrivacyBudget(1.0, 1e-5, "pld"))
    >>> check_public_step(1.0, 1.5, params, 0.5)
    >>> check_public_step(1.0, 50.0, params, 0.5)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: learning_rate=1.0 is too large for the public gradient ...
    """
    if learning_rate * curvature < 2.0:
        return
    bound = 2.0 / curvature
    other = ", preconditioner='public'" if params.preconditioner is None else ""
    raise ValueError(
        f"learning_rate={learning_rate!r} is too large for the public gradient "
        f"of this fit: with alpha={alpha:.4g}, clip_norm={params.clip_norm!r} "
        f"and preconditioner={params.preconditioner!r}, each step multiplies "
        "the distance to the public rows' fit by up to "
        f"|1 - learning_rate * {curvature:.4g}| > 1 ((1 - alpha) / clip_norm "
        "times the largest eigenvalue of the public rows' (preconditioned) "
        "second moments), so the iterates would diverge. Pass a "
        f"learning_rate below {bound:.4g} (or learning_rate='auto', capped "
        f"there), a larger alpha or clip_norm{other}, or "
        "public_clipping='clip'. The check reads the public rows and the "
        "parameters only."
    )


def _thesis_alpha(geometry, *, step_noise_var, n_steps, n_private):
    """Inverse-variance weight (thesis Prop. 18) for Algorithm 11 in full batch.

    ``v_pub = V2 / n_pub``, ``v_priv = V2 / n_priv + p tau^2 / T`` with ``V2``
    the trace variance of one clipped, C-normalized gradient (at most 1; the
    model's per-coordinate variance times ``p``).
    """
    # Each clipped, C-normalized gradient has norm <= 1, and in the clipped
    # regime (the thesis's benchmark) its trace variance is close to 1.
    v2 = 1.0
    v_pub = v2 / geometry.n_public
    v_priv = v2 / n_private + geometry.n_params * step_noise_var / n_steps
    return inverse_variance_weight(v_pub, v_priv)[0]


def _untuned_hyperparameters(
    params, geometry, *, alpha, steps, n_private, step_noise_var
):
    """``(alpha, learning_rate)`` of a fit that does not tune on its public rows.

    ``alpha`` None takes the thesis's inverse-variance weight
    (:func:`_thesis_alpha`) for ``steps`` full-batch steps; the step is the
    given one or the plain one (:func:`_plain_learning_rate`). Public inputs
    only.
    """
    if alpha is None:
        alpha = _thesis_alpha(
            geometry,
            step_noise_var=step_noise_var(steps),
            n_steps=steps,
            n_private=n_private,
        )
    learning_rate = (
        _plain_learning_rate(geometry, params.clip)
        if params.learning_rate == "auto"
        else float(params.learning_rate)
    )
    return alpha, learning_rate


def check_newton_learning_rate(learning_rate):
    """Refuse a given step of 2 or more full Newton steps of the public model.

    With the public Newton preconditioner (the fits that tune on their
    public rows) ``learning_rate`` is in units of a full Newton step of the
    model: a step multiplies the model's distance to its fixed point by
    ``1 - learning_rate`` in every direction, which expands from
    :data:`NEWTON_STEP_LIMIT` on, where the error model of the tuning
    (:func:`~._public_tuning.predicted_excess_risk`) has no finite
    prediction and gave no usable preconditioner (a step of ``1e100`` then
    moved nothing). Reads the parameter only.

    Examples
    --------
    >>> from sklearn_dpfair._solvers.semi_dp._fit import check_newton_learning_rate
    >>> check_newton_learning_rate(1.5)
    >>> check_newton_learning_rate(2.0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: learning_rate=2.0 is too large for preconditioner='public': ...
    """
    if learning_rate < NEWTON_STEP_LIMIT:
        return
    raise ValueError(
        f"learning_rate={float(learning_rate)!r} is too large for "
        "preconditioner='public': it is in units of a full Newton step of the "
        "public rows' model, and from 2 on each step multiplies the model's "
        "distance to its fixed point by |1 - learning_rate| >= 1, so the "
        "iterates would not settle and the tuning's error model has no finite "
        "value. Pass a learning_rate below 2 (or learning_rate='auto'), or "
        "preconditioner=None for plain gradient steps. The check reads the "
        "parameters and the public counts only."
    )


def _bounded_learning_rate(learning_rate, public_step, params, alpha):
    """A given step checked against the public gradient's expansion
    (:func:`check_public_step`), an "auto" one capped at its Newton step
    ``1 / public_step``."""
    if params.learning_rate != "auto":
        check_public_step(learning_rate, public_step, params, alpha)
        return learning_rate
    return min(learning_rate, 1.0 / public_step) if public_step > 0 else learning_rate


def untuned_public_choice(X_public, y_public, setup):
    """``(alpha, learning_rate, max_iter)`` of a fit too few public rows tune.

    What :func:`fit_semidp` chooses for ``setup`` (a ``"semidp-gd"`` set-up
    with the public preconditioner, unweighted) when its public rows are
    too few to estimate the public geometry
    (:func:`~._public_geometry.geometry_estimable`): the same weight, step
    and step count, by the fit's own functions, from the public rows in the
    units they are given in. Public inputs only.
    """
    params = setup.params
    s = 1.0 if params.fit_intercept else 0.0
    n_params = X_public.shape[1] + int(params.fit_intercept)
    geometry = uninformative_geometry(
        n_params, setup.n_public, y_public=y_public, intercept_scaling=s
    )
    step_noise_var = _step_noise_variance(
        geometry,
        setup.sampling_probability,
        setup.n_private,
        params.adjacency,
        setup.noise_multiplier_of,
    )
    alpha, learning_rate = _untuned_hyperparameters(
        params,
        geometry,
        alpha=_fixed_alpha(params, setup.n_private, setup.n_public),
        steps=setup.n_steps,
        n_private=setup.n_private,
        step_noise_var=step_noise_var,
    )
    public_step = public_step_curvature_of(
        _float64_public(X_public), s, alpha, params.clip,
        weights=None, preconditioner=None,
    )
    learning_rate = _bounded_learning_rate(learning_rate, public_step, params, alpha)
    return alpha, learning_rate, setup.n_steps


def public_hyperparameters(X_public, y_public, *, n_private, params):
    """Choose ``alpha``, the learning rate and the steps from public rows only.

    The full-batch choice of ``"semidp-gd"`` with the public preconditioner
    and unclipped public gradients, for ``params``'s budget, clip norm,
    adjacency and public ridge.

    Returns
    -------
    geometry : PublicGeometry
    choice : HyperparameterChoice
    """
    geometry = public_geometry(
        X_public,
        y_public,
        intercept_scaling=1.0 if params.fit_intercept else 0.0,
        ridge=params.public_ridge,
        n_features=X_public.shape[1],
    )
    choice = choose_hyperparameters(
        geometry,
        clip_norm=params.clip,
        public_clipping=False,
        n_private=n_private,
        step_noise_var_of=_step_noise_variance(
            geometry,
            1.0,
            n_private,
            params.adjacency,
            functools.partial(semidp_noise_multiplier, params.budget, 1.0),
        ),
    )
    return geometry, choice


def _schedule(params, n_private):
    """Sampling rate and fixed number of steps (None: "auto") of the run.

    Raises
    ------
    ValueError
        If the run would take more than :data:`MAX_STEPS` noisy steps
        (naming ``max_iter``, and ``batch_size`` for semidp-sgd).
    """
    if params.max_iter != "auto" and params.max_iter > MAX_STEPS:
        # Compared as given (an int), before any float division by it.
        digits = str(int(params.max_iter))
        given = (
            f"max_iter={digits}" if len(digits) <= 20
            else f"max_iter (an int of {len(digits)} digits)"
        )
        raise ValueError(
            f"{given} is too large: a private fit takes at "
            f"most {MAX_STEPS} noisy steps (each one a Python-level step of "
            "the solver and of the public error model). Pass a smaller "
            "max_iter."
        )
    if params.solver == "semidp-sgd":
        batch = (
            max(AUTO_BATCH_MIN, AUTO_BATCH_FRACTION * n_private)
            if params.batch_size == "auto"
            else params.batch_size
        )
        # The comparison first: an int batch beyond float64's range would
        # overflow the division, and its rate is 1 anyway.
        q = 1.0 if batch >= n_private else min(1.0, batch / n_private)
        steps = max(1, math.ceil(_sgd_epochs(params) / q - 1e-9))
        if steps > MAX_STEPS:
            raise ValueError(
                f"semidp-sgd would take {steps} noisy steps ({_sgd_epochs(params)} "
                f"epochs of Poisson batches at rate {q:.3g} = batch_size / "
                f"n_private), more than the {MAX_STEPS} a private fit takes: "
                "pass a larger batch_size or a smaller max_iter."
            )
        return q, steps
    return 1.0, None if params.max_iter == "auto" else int(params.max_iter)


def _sgd_epochs(params):
    """The epochs of a semidp-sgd run (``max_iter``, or the default)."""
    return DEFAULT_EPOCHS if params.max_iter == "auto" else int(params.max_iter)


def _fixed_alpha(params, n_private, n_public):
    """The private weight when it is not tuned (None: tune it)."""
    if params.solver == "dp-gd":
        return n_private / (n_private + n_public)
    if params.solver == "pda-md" or not n_public:
        return 1.0
    return None if params.alpha == "auto" else float(params.alpha)


def fit_semidp(
    X,
    y,
    public_mask,
    setup,
    *,
    rng,
    sample_weight=None,
    backend=NUMPY_BACKEND,
    progress=None,
):
    """Fit a semi-private linear regression; see ``SemiDPLinearRegression``.

    Parameters
    ----------
    X : ndarray or scipy.sparse CSR matrix of shape (n_samples, n_features)
        Every row; the private ones are read through the mask, never copied.
    y : ndarray of shape (n_samples,)
    public_mask : ndarray of bool of shape (n_samples,)
        True for the public rows.
    setup : SemiDPSetup
        The plan of the fit (:func:`semidp_setup`, from the parameters, the
        counts and whether weights were passed): the scaling, schedule,
        mechanism and record; data of other counts are refused.
    rng : numpy.random.Generator
        Source of the noise and of the Poisson batches.
    sample_weight : ndarray of shape (n_samples,) or None, default=None
        Public weights, used as given under privacy (rescaled to mean 1
        without it, :func:`~sklearn_dpfair.privacy.fit_weights`); each multiplies its row's
        residual before it is clipped, in the private and the public
        gradient sums, so the iterations converge to the minimizer of the
        weighted objective and one private row still moves a sum by at most
        the clip. The public statistics (warm start, preconditioner, tuning)
        are unweighted: they shape the path, not the fixed point; hence
        "public-only", whose output *is* the warm start, refuses
        sample_weight.
    backend : ArrayBackend, default=NUMPY_BACKEND
        Where the private and public sums of the steps run
        (:func:`~sklearn_dpfair.utils._array_api.resolve_backend`); the
        public statistics, the noise, the batches and the step run on the
        host for every backend, so a seed gives the same noise and batches.
    progress : Progress or None, default=None
        Prints the norm of each released step gradient (``verbose``).

    Returns
    -------
    fit : SemiDPFit
    """
    params = setup.params
    solver = params.solver
    # Whether weights were passed (public), never what they hold, decides
    # the refusal and the record.
    if sample_weight is not None and solver == "public-only":
        raise ValueError(
            "solver='public-only' does not take sample_weight (its output is "
            "the unweighted public warm start)."
        )
    setup.check_data(X, public_mask)
    # The count every division, the sampling rate and the tuning use: the
    # declared n_private, or the private rows of the data treated as public.
    n_private, n_public = setup.n_private, setup.n_public
    if not params.budget.is_private and solver != "public-only":
        # The non-private limit: OLS on all rows by the full-batch solver.
        return _non_private_fit(X, y, public_mask, params, sample_weight, setup)
    weights = fit_weights(
        sample_weight, X.shape[0], private=params.budget.is_private
    )
    # Scale the columns first (public rows, public bounds, or the planned
    # private quantiles); the model is mapped back to the user's units.
    scales, target = fit_semidp_scaling(X, y, public_mask, setup.scaling, rng)
    if scales is not None:
        # One scaled copy of the rows (the fit's peak memory is then about
        # twice the data).
        X = scaled_rows(X, scales)
    if target is not None:
        # The target as one more column: the same finite map.
        y = scaled_rows(y[:, None], target)[:, 0]
    # Only the public block is copied (the public statistics need it); the
    # private rows are read from X through the mask by the solver.
    Xp, yp = X[public_mask], y[public_mask]
    s = 1.0 if params.fit_intercept else 0.0
    n_params = X.shape[1] + int(params.fit_intercept)
    # A private fit on too few public rows takes only their mean target
    # from them (its intercept's start): no warm start, preconditioner or
    # tuning rests on what they cannot estimate. "public-only" keeps all it
    # is asked for. The rows still enter the public gradient.
    too_few = (
        n_public
        and solver != "public-only"
        and not geometry_estimable(n_public, n_params)
    )
    if too_few:
        warn_at_caller(
            _TOO_FEW_PUBLIC_ROWS.format(n=n_public, p=n_params), UserWarning
        )
        geometry = uninformative_geometry(
            n_params, n_public, y_public=yp, intercept_scaling=s
        )
    else:
        geometry = public_geometry(
            _float64_public(Xp), np.asarray(yp, dtype=np.float64),
            intercept_scaling=s, ridge=params.public_ridge, n_features=X.shape[1],
        )
    clip = params.clip
    _check_warm_start_fits(
        geometry, s, X.dtype, scales, target, iterated=solver != "public-only"
    )

    if solver == "public-only":
        return _result(
            geometry.warm_start, geometry, s, np.nan, np.nan, (0, 0), setup.record,
            None, X.dtype, scales, target,
        )

    q, fixed_steps = setup.sampling_probability, setup.n_steps
    step_noise_var = _step_noise_variance(
        geometry, q, n_private, params.adjacency, setup.noise_multiplier_of
    )
    use_public_gradient = solver in ("semidp-gd", "semidp-sgd", "dp-gd") and n_public
    public_clip = solver == "dp-gd" or params.public_clipping == "clip"
    choice = None
    P = None
    a = _fixed_alpha(params, n_private, n_public)

    if _tunes_on_public_rows(params, n_public, X.shape[1]):
        choice = choose_hyperparameters(
            geometry,
            clip_norm=clip,
            public_clipping=public_clip,
            n_private=n_private,
            step_noise_var_of=step_noise_var,
            alphas=None if a is None else [a],
            learning_rates=(
                None if params.learning_rate == "auto" else [params.learning_rate]
            ),
            max_iters=[fixed_steps] if fixed_steps is not None else None,
        )
        a, lr, steps = choice.alpha, choice.learning_rate, choice.max_iter
        public_curv = choice.curvature if public_clip else (
            1.0 / clip if math.isfinite(clip) else 1.0
        )
        P = newton_preconditioner(geometry, [a], [choice.curvature], public_curv)
    else:
        steps = fixed_steps
        a, lr = _untuned_hyperparameters(
            params,
            geometry,
            alpha=a,
            steps=steps,
            n_private=n_private,
            step_noise_var=step_noise_var,
        )
        if solver == "pda-md" and n_public and not too_few:
            # Too few rows for the public Hessian: its mirror map would be
            # that of a rank-deficient Gram matrix (a spectrum near 0.0025
            # along every direction they see, so those coordinates barely
            # move), not the geometry Amid et al. (2022) precondition with.
            P = pda_md_preconditioner(_float64_public(Xp), s, 1)
    # The unclipped public gradient's part of a step, from public rows and
    # weights only (and the scales, public or an accounted release): a
    # given step that makes it expand is refused before any private sum is
    # taken; an "auto" step is capped at its Newton step (the tuned one of
    # unweighted rows is at most a full Newton step of a model whose public
    # curvature is this one, hence below the cap already; public weights
    # above 1 raise the curvature beyond the model's).
    public_step = (
        public_step_curvature_of(
            _float64_public(Xp), s, a, clip,
            weights=None if weights is None else weights[public_mask],
            preconditioner=P,
        )
        if use_public_gradient
        and not public_clip
        # The tuned step of unweighted rows is below the cap by construction.
        and (params.learning_rate != "auto" or choice is None or weights is not None)
        else 0.0
    )
    lr = _bounded_learning_rate(lr, public_step, params, a)

    if setup.n_steps is None:
        # The steps were tuned on the public rows: the same set-up, completed.
        setup = setup.for_steps(steps)
    record = setup.record
    data = SemiDPData(
        X_private=X,
        y_private=y,
        X_public=Xp if use_public_gradient else Xp[:0],
        y_public=yp if use_public_gradient else yp[:0],
        intercept_scaling=s,
        # None when every row is private: no masking pass is needed then.
        private_rows=~public_mask if n_public else None,
        private_weights=weights,
        public_weights=None if weights is None else weights[public_mask],
    )
    full_batch = q >= 1.0 and params.budget.is_private
    epochs = _sgd_epochs(params) if solver == "semidp-sgd" else steps
    with (
        # The T full-batch Gaussian sums are accounted as the one Gaussian
        # they compose to (_full_batch_event).
        joint_release(accounted=setup.single_multiplier)
        if full_batch
        else contextlib.nullcontext()
    ):
        result = semidp_gradient_descent(
            data,
            geometry.warm_start[:, None],
            mechanisms=[setup.mechanism],
            alpha=np.array([a]),
            learning_rate=np.array([lr]),
            n_steps=np.array([steps]),
            clip_norm=clip,
            public_clipping=public_clip,
            sampling_probability=q,
            preconditioner=P,
            rngs=[rng],
            tail_fraction=TAIL_FRACTION,
            private_count=n_private,
            backend=backend,
            progress=None if progress is None else progress.per(steps, epochs),
        )
    return _result(
        result.params[:, 0], geometry, s, a, lr, (steps, epochs), record, choice,
        X.dtype, scales, target,
    )


def _float64_public(X_public):
    """The public rows in float64, for the public statistics.

    They need the public Gram matrix (and its eigen-decomposition) in full
    precision. A dense block is promoted; a sparse (CSR) block stays sparse,
    only its stored values are promoted (the index arrays are shared), so
    neither the public nor the private rows are ever densified.
    """
    if sp.issparse(X_public):
        if X_public.dtype == np.float64:
            return X_public
        return sp.csr_matrix(
            (X_public.data.astype(np.float64), X_public.indices, X_public.indptr),
            shape=X_public.shape,
            copy=False,
        )
    return np.asarray(X_public, dtype=np.float64)


def _warm_start_in_user_units(geometry, s, scales=None, target=None):
    """The public warm start's coefficients in the user's units (float64)."""
    n_coef = geometry.warm_start.shape[0] - (1 if s else 0)
    warm_coef = geometry.warm_start[:n_coef]
    if scales is not None:
        warm_coef = scales.coefficients_in_user_units(
            warm_coef[None, :], [0.0]
        )[0][0]
    if target is not None:
        warm_coef, _ = target_in_user_units(warm_coef, 0.0, target)
    return warm_coef


def _check_warm_start_fits(
    geometry, s, dtype, scales=None, target=None, *, iterated=True
):
    """Refuse a public warm start that the data's dtype cannot hold.

    A float32 ``X`` keeps float32 iterates (the warm start in the scaled
    columns, ``iterated``) and ``coef_`` (in the user's units; the intercept
    is a float64 number): public targets near or beyond float32's range (the
    target itself is kept in float64) give a public fit that overflows them,
    and the fit would return ``inf`` or ``nan``. The check reads the public
    rows and the column scales (public, or an accounted release) only,
    before any private sum is taken.
    """
    if dtype == np.float64:
        return
    big = float(np.finfo(dtype).max)
    with np.errstate(over="ignore", invalid="ignore"):
        values = _warm_start_in_user_units(geometry, s, scales, target)
        if iterated:
            values = np.concatenate([geometry.warm_start, values])
        fits = bool(np.all(np.abs(values) <= big))
    if not fits:
        raise ValueError(
            f"The public rows' fit has coefficients beyond the range of X's "
            f"dtype {np.dtype(dtype).name} (public targets or features near "
            f"its largest value, {big:.3g}), in which the iterates and coef_ "
            "are computed: pass X as float64, or rescale the target. The check "
            "reads the public rows and the column scales only."
        )


def _result(
    params, geometry, s, a, lr, schedule, record, choice, dtype, scales=None,
    target=None,
):
    """``schedule`` is ``(n_steps, n_epochs)``; ``scales`` and ``target``
    map the model of the scaled columns and target back to the user's units."""
    steps, epochs = schedule
    n_coef = params.shape[0] - (1 if s else 0)
    coef, intercept = params[:n_coef], float(s * params[n_coef]) if s else 0.0
    warm_coef = _warm_start_in_user_units(geometry, s, scales, target)
    if scales is not None:
        coef, (intercept,) = scales.coefficients_in_user_units(
            np.asarray(coef, dtype=np.float64)[None, :], [intercept]
        )
        coef = coef[0]
    if target is not None:
        coef, intercept = target_in_user_units(coef, intercept, target)
    intercept = float(intercept) if s else 0.0
    return SemiDPFit(
        coef=np.asarray(coef).astype(dtype, copy=True),
        intercept=intercept,
        warm_start_coef=np.asarray(warm_coef).astype(dtype, copy=True),
        alpha=float(a),
        learning_rate=float(lr),
        n_steps=int(steps),
        n_epochs=int(epochs),
        record=record,
        choice=choice,
    )


def _non_private_fit(X, y, public_mask, params, sample_weight, setup):
    """The non-private limit: the weighted least squares of all rows."""
    weights = fit_weights(sample_weight, X.shape[0], private=False)
    s = 1.0 if params.fit_intercept else 0.0
    d = X.shape[1]
    # Only the public warm start is used (a start of the full-batch solver;
    # nothing is tuned): the rest of the public geometry, and its checks
    # and warnings, would be about statistics no step reads.
    warm_start = public_warm_start(
        _float64_public(X[public_mask]),
        np.asarray(y[public_mask], dtype=np.float64),
        intercept_scaling=s, ridge=params.public_ridge, n_features=d,
    )
    n_public = int(np.count_nonzero(public_mask))
    geometry = replace(
        uninformative_geometry(warm_start.shape[0], n_public), warm_start=warm_start
    )
    fit = minimize_linear(
        X, np.asarray(y, dtype=np.float64), SquaredLoss(),
        fit_intercept=bool(s), sample_weight=weights,
        coef_init=geometry.warm_start[:d],
        intercept_init=[s * geometry.warm_start[d]] if s else None,
    )
    # The set-up's record, with the iterations the full-batch solver ran.
    record = replace(setup.record, steps=fit.n_iter)
    result = _result(
        np.append(fit.coef[:, 0], fit.intercept[0] if s else []), geometry, s,
        np.nan, np.nan, (fit.n_iter, fit.n_iter), record, None, X.dtype,
    )
    return result
