# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Public-only hyperparameters for :class:`SemiDPLinearRegression`."""

import math
from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_X_y

from .._base import CLIP_NORM_CONSTRAINT, DELTA_CONSTRAINT, EPSILON_CONSTRAINT
from .._solvers.semi_dp import SemiDPParams, public_hyperparameters, semidp_setup
from .._solvers.semi_dp._fit import float_parameters, untuned_public_choice
from .._solvers.semi_dp._public_geometry import geometry_estimable
from .._solvers.semi_dp._scaling import (
    PUBLIC_ROWS_MODE,
    fit_semidp_scaling,
    scaled_rows,
)
from ..privacy import PrivacyBudget
from ..utils._sklearn_compat import Interval, StrOptions, validate_params

__all__ = ["semidp_hyperparameters"]


@validate_params(
    {
        "X_public": ["array-like"],
        "y_public": ["array-like"],
        "n_private": [Interval(Integral, 1, None, closed="left")],
        "epsilon": EPSILON_CONSTRAINT,
        "delta": DELTA_CONSTRAINT,
        "clip_norm": [CLIP_NORM_CONSTRAINT],
        "fit_intercept": ["boolean"],
        "adjacency": [StrOptions({"replace_one", "add_remove"})],
        "accountant": [StrOptions({"pld", "rdp"})],
        "public_ridge": [Interval(Real, 0, None, closed="left")],
        "feature_scaling": [StrOptions({"auto"}), None],
        "feature_bounds": ["array-like", None],
    },
    prefer_skip_nested_validation=True,
)
def semidp_hyperparameters(
    X_public,
    y_public,
    *,
    n_private,
    epsilon=1.0,
    delta=1e-5,
    clip_norm=1.0,
    fit_intercept=True,
    adjacency="replace_one",
    accountant="pld",
    public_ridge=1e-6,
    feature_scaling="auto",
    feature_bounds=None,
):
    """Choose ``alpha``, ``learning_rate`` and ``max_iter`` from public rows only.

    This is what ``SemiDPLinearRegression(solver="semidp-gd")`` does inside
    ``fit`` when those parameters are ``"auto"``, exposed so that the choice
    can be inspected, or fixed once and reused. It reads only the public
    rows and public numbers (``n_private``, the budget), so it costs no
    privacy; tuning on private training or validation loss would.

    The candidates (steps in {10, 20, 40}, step sizes in {0.25, 0.5, 1} Newton
    steps, 55 values of ``alpha``) are ranked by a linear-Gaussian model of
    the preconditioned iteration: the inverse-variance combination of the
    public and the noisy private estimates along each eigenvector of the
    public second-moment matrix, with the curvature of clipped gradients at
    the noise level estimated from the public residuals. It assumes that
    public and private rows share a distribution; under a shift, pass
    ``alpha`` yourself.

    With no more public rows than parameters (``n_features`` plus the
    intercept) the rows cannot estimate that geometry and the fit does not
    tune: it takes the thesis's inverse-variance weight, the plain step
    (capped where the public gradient would expand) and 20 steps. The
    helper then returns that same choice, with ``predicted_test_mse`` NaN.

    With ``feature_scaling="auto"``, no ``feature_bounds`` and fewer public
    rows than public column scales need (5), a private fit scales the
    columns by private statistics and reads its public rows in those
    units, which no public helper can repeat: what it would choose from
    them is returned as ``"auto"`` (every value where it tunes, the step
    where it does not), so that ``SemiDPLinearRegression(**params)`` makes
    the fit's own choice.

    Parameters
    ----------
    X_public : array-like of shape (n_public, n_features)
        The public rows.
    y_public : array-like of shape (n_public,)
        Their targets.
    n_private : int
        Number of private rows of the fit (public under semi-DP).
    epsilon : float, default=1.0
        Privacy budget of the fit.
    delta : float, default=1e-5
        Privacy parameter delta.
    clip_norm : float, default=1.0
        Per-row clip threshold of the fit.
    fit_intercept : bool, default=True
        Whether the fit has an intercept.
    adjacency : {"replace_one", "add_remove"}, default="replace_one"
        Neighbouring relation of the fit.
    accountant : {"pld", "rdp"}, default="pld"
        Accountant used to calibrate the noise of each candidate.
    public_ridge : float, default=1e-6
        Ridge of the public warm start.
    feature_scaling : {"auto"} or None, default="auto"
        The fit's ``feature_scaling``: the candidates are ranked on the
        public rows in the columns the fit solves in, scaled by
        ``feature_bounds`` when given, else by the public rows' mean and
        standard deviation (when the fit would draw private scales, from
        fewer public rows than it needs, see above). Pass the value the
        fit will use; the choice is not transferable between scaled and
        unscaled fits.
    feature_bounds : array-like of shape (n_features, 2), default=None
        The fit's public ``(lower, upper)`` of every column.

    Returns
    -------
    params : dict
        ``alpha``, ``learning_rate``, ``max_iter`` (the estimator's
        parameters: numbers, or ``"auto"`` where the fit's choice reads
        private scales) and ``predicted_test_mse``, the model's prediction of
        the test MSE of the fit (NaN where the public rows are too few for
        the model), which is not one: pop it before
        ``SemiDPLinearRegression(**params)``.

    Raises
    ------
    ValueError
        If ``clip_norm`` is too large or too small for the model's
        ``clip_norm**2`` and ``1 / clip_norm**2`` in float64, as the fit
        refuses it.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.linear_model import semidp_hyperparameters
    >>> rng = np.random.default_rng(0)
    >>> X_pub = rng.standard_normal((500, 5))
    >>> y_pub = X_pub @ np.ones(5) + 0.5 * rng.standard_normal(500)
    >>> params = semidp_hyperparameters(X_pub, y_pub, n_private=10_000)
    >>> sorted(params)
    ['alpha', 'learning_rate', 'max_iter', 'predicted_test_mse']
    >>> 0 < params["alpha"] < 1
    True
    >>> from sklearn_dpfair.linear_model import SemiDPLinearRegression
    >>> predicted = params.pop("predicted_test_mse")
    >>> model = SemiDPLinearRegression(epsilon=1.0, **params)
    """
    # An int beyond float64's range is refused naming its parameter (the
    # budget refuses epsilon and delta so).
    float_parameters(
        clip_norm=clip_norm, public_ridge=public_ridge, n_private=n_private
    )
    X_public, y_public = check_X_y(X_public, y_public, dtype=np.float64, y_numeric=True)
    params = SemiDPParams(
        budget=PrivacyBudget(epsilon, delta, accountant),
        clip_norm=clip_norm,
        public_ridge=public_ridge,
        fit_intercept=fit_intercept,
        adjacency=adjacency,
        feature_scaling=feature_scaling,
        feature_bounds=feature_bounds,
    )
    # The fit's own set-up (its plan's refusals, its scaling, its steps and
    # noise), from the public counts.
    n_public, n_features = X_public.shape
    setup = semidp_setup(
        params, n_private=n_private, n_public=n_public, n_features=n_features
    )
    # The fit ranks its candidates on its scaled public rows: scale these
    # as its plan says (bounds or public-row statistics, both free).
    plan = setup.scaling
    # (With fewer public rows than the public-row scales need, the fit also
    # scales the target by private statistics, which no helper can repeat.)
    columns = plan.column_plan() if getattr(plan, "target", False) else plan
    if columns.mode in ("bounds", PUBLIC_ROWS_MODE):
        scales, _ = fit_semidp_scaling(
            X_public, y_public, np.ones(n_public, dtype=bool), columns, rng=None
        )
        X_public = scaled_rows(X_public, scales)
    # Fewer public rows than public scales need: the fit reads its public
    # rows in columns scaled by private statistics, which no public helper
    # can repeat. What it chooses from those rows is left to it ("auto").
    private_columns = params.budget.is_private and columns.mode == "private"
    if params.budget.is_private and not geometry_estimable(
        n_public, n_features + int(fit_intercept)
    ):
        # Too few public rows: the fit does not tune (fit_semidp), and
        # neither does its helper.
        alpha, learning_rate, max_iter = untuned_public_choice(
            X_public, y_public, setup
        )
        return {
            "alpha": alpha,
            # The step is capped where the scaled public gradient expands.
            "learning_rate": "auto" if private_columns else learning_rate,
            "max_iter": max_iter,
            "predicted_test_mse": math.nan,
        }
    if private_columns:
        return {
            "alpha": "auto",
            "learning_rate": "auto",
            "max_iter": "auto",
            "predicted_test_mse": math.nan,
        }
    geometry, choice = public_hyperparameters(
        X_public, y_public, n_private=n_private, params=params
    )
    return {
        "alpha": choice.alpha,
        "learning_rate": choice.learning_rate,
        "max_iter": choice.max_iter,
        "predicted_test_mse": geometry.noise_variance + choice.predicted_excess_risk,
    }
