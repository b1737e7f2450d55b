# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Semi-local DP linear regression: local DP for private rows, public rows as given."""

import math
from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator

from .._base import (
    CLIP_NORM_CONSTRAINT,
    EPSILON_CONSTRAINT,
    RANDOM_STATE_CONSTRAINT,
    LinearRegressorMixin,
    PrivateEstimatorMixin,
)
from .._solvers._progress import progress_printer
from .._solvers.semi_dp._local import (
    LocalParams,
    check_local_epsilon,
    fit_semi_local,
    local_setup,
)
from ..privacy import check_noise_generator
from ..utils._array_api import host_input
from ..utils._dask import refuse_dask_input
from ..utils._sklearn_compat import Interval, StrOptions, _fit_context
from ..utils._validation import (
    check_public_weights,
    float64_target,
    validate_data,
)
from ._semi_dp import check_public_mask

__all__ = ["SemiLocalDPLinearRegression"]


class SemiLocalDPLinearRegression(
    LinearRegressorMixin, PrivateEstimatorMixin, BaseEstimator
):
    """Linear regression that is locally private for its private rows only.

    The trust model of semi-local DP (Lowy's thesis, §2.3, Definition 24):
    nobody is trusted with a private row, not even the server that trains.
    Each private person randomizes their one message (a clipped gradient)
    on their own with PrivUnit, an ``epsilon``-DP randomizer, before it
    leaves them; rows marked public in ``fit(X, y, public_mask=...)`` are
    used as they are. The fit is the thesis's Semi-LDP-SGD (Algorithm 13):
    one pass of SGD in random order from the public least-squares solution,
    with its step size, returning the average of the iterates.

    Compared with :class:`SemiDPLinearRegression` (central semi-DP: a
    trusted curator adds Gaussian noise to sums of private gradients), the
    guarantee is stronger and the error larger: ``d / epsilon^2`` per
    private row rather than per dataset. A separate estimator rather than a
    ``privacy_model=`` switch, since the two share neither their
    parameters (no ``delta``, no adjacency or ``n_private`` choice, no
    Gaussian noise, no Newton preconditioner or multi-pass schedule here)
    nor their record.

    Read more in the :ref:`User Guide <semi_local_dp>`.

    Parameters
    ----------
    epsilon : float, default=1.0
        Local budget of each private record: its message is
        ``epsilon``-DP (pure, ``delta = 0``). ``np.inf`` is the non-private
        limit: least squares on all rows (not the one-pass SGD). Finite
        values from 1e-4 (the resolution of the accountant that certifies
        the messages) to 300.
    clip_norm : float, default=1.0
        Clip threshold ``C`` of a private gradient; every private message
        has norm exactly ``C / m`` (``m`` of PrivUnit, public). Public.
    learning_rate : float or "auto", default="auto"
        Step size ``eta``. "auto": the thesis's choice (proof of
        Proposition 30), ``radius / sqrt(n_private (C/m)^2 + n_public
        G_pub^2)``, from public quantities only.
    radius : float or "auto", default="auto"
        ``D``, the distance from the start to the minimizer, which sets the
        step. "auto": estimated from the public rows alone (the public
        least-squares standard error); 1.0 with fewer public rows than
        the coefficients plus 2 (``n_features + 3`` with an intercept,
        ``n_features + 2`` without).
    public_gradient : {"clip", "rescale", "raw"}, default="clip"
        A public row's step: its gradient clipped to ``C`` ("clip"),
        rescaled to the norm ``C / m`` of a private message ("rescale", the
        variant of the thesis's experiments), or as it is ("raw", the
        thesis's Algorithm 13; its step size then assumes a norm ``C``).
    fit_intercept : bool, default=True
        Fit an intercept through a constant column inside each gradient.
    public_ridge : float or "auto", default="auto"
        Ridge of the public warm start, relative to the public Gram
        matrix's mean diagonal (columns scaled by their public maximum; the
        intercept is not penalized). "auto": chosen by generalized
        cross-validation on the public rows (free). The thesis starts from
        public least squares, which ``public_ridge`` near 0 gives; with
        barely more public rows than coefficients it overfits.
    random_state : None, int, numpy.random.RandomState or numpy.random.Generator, \
default=None
        None (the default) draws the randomizers' coins from fresh OS
        entropy: the only setting for a private release. Anything else is
        a seed for tests and experiments (the record says so).
    feature_scaling : {"auto"} or None, default="auto"
        ``"auto"``: every column is mapped to ``(x - location) / scale``
        before the pass, by ``feature_bounds`` when given (midpoint and
        half-width), else by the mean and standard deviation of the public
        rows when there are at least 5 of them (public by this estimator's
        contract: no budget); ``coef_``, ``intercept_``, ``coef_public_``
        and ``intercept_public_`` are reported in the user's units. Raw
        columns (a year, an income) otherwise make one column dominate every
        unit gradient direction. With fewer public rows and no bounds the
        columns are used as given: no curator may compute private quantiles
        under the local trust model. None: never scaled. No effect with
        ``epsilon=np.inf``. The target is used as given, for the same
        reason: without public rows a target far from 0 is out of the
        clipped steps' reach (an age-like target, 40 +- 12, on 20,000
        standardized rows at ``epsilon=4``: RMSE 3.3-3.4 times least
        squares', 3 seeds; 1.00 times once mapped to ``(y - 40) / 12`` by a
        ``TransformedTargetRegressor`` with those public constants, or with
        50 public rows).
    feature_bounds : array-like of shape (n_features, 2), default=None
        Public ``(lower, upper)`` range of every column, for
        ``feature_scaling="auto"``.
    verbose : int, default=0
        With ``verbose > 0`` the fit prints about ten lines over its one
        pass to stdout: the rows visited, the norm of the mean step since
        the previous line (private messages are released by their senders
        and public steps are public: printing it costs no privacy) and the
        elapsed time.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Coefficients, in the units of ``X``'s columns.
    intercept_ : float
        Intercept (0.0 if ``fit_intercept=False``).
    coef_public_ : ndarray of shape (n_features,)
        Coefficients of the public start (least squares on the public rows;
        the fitted model at ``epsilon=np.inf``).
    intercept_public_ : float
        Intercept of the public start.
    public_ridge_ : float
        The relative ridge of the public start (nan at ``epsilon=np.inf``).
    learning_rate_ : float
        Step size used (nan at ``epsilon=np.inf``).
    radius_ : float
        ``D`` used (nan at ``epsilon=np.inf``).
    message_norm_ : float
        Norm ``C / m`` of every private message (nan at ``epsilon=np.inf``).
    n_public_ : int
        Number of public rows.
    n_private_ : int
        Number of private rows: one message each.
    epsilon_ : float
        Epsilon of each private record's transcript, computed by
        dp-accounting's PLD accountant under replace-one from ``dp_event_``
        (the only accountant that interprets it; there is no
        ``accountant`` parameter, and no ``PrivacyLedger``, which records
        releases at a delta in (0, 1), while this guarantee is pure).
    delta_ : float
        0.0: PrivUnit is pure DP.
    noise_multiplier_ : float
        0.0: no Gaussian noise (the randomizer is described by the record).
    dp_event_ : dp_accounting.DpEvent
        One record's transcript, ``RandomizedResponseDpEvent(2 / (1 +
        e^eps), 2)``, the pair that dominates every ``eps``-DP message
        (a no-op without private rows, non-private at ``epsilon=np.inf``).
    adjacency_ : str
        "replace_one", in the local model (see ``privacy_summary()``).
    privacy_record_ : PrivacyRecord
        All of the above; its texts state the local trust model.
    privacy_caveats_ : list of str
        The public rows (and public weights) are not protected.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when X has string column names.

    See Also
    --------
    SemiDPLinearRegression : Central semi-DP (a trusted curator).

    Notes
    -----
    Each person speaks once (sequentially interactive, ``T = 1`` in
    Definition 24), so the record's event is that of one message. A private
    row's gradient ``g`` is sent as ``C * PrivUnit(s g / ||g||) / m`` with a
    sign ``s`` of mean ``min(||g|| / C, 1)``, unbiased for the clipped
    gradient; a row whose residual is not a number sends a fair coin's
    direction. After input validation nothing raises or warns on the
    private rows. Scale the columns with public information (fit a scaler
    on the public rows only).

    References
    ----------
    .. [1] A. Lowy, "Private and fair machine learning" (thesis), §2.3 and
       Appendix A.3: Definition 24, Algorithms 12 and 13, Proposition 30.
    .. [2] A. Bhowmick, J. Duchi, J. Freudiger, G. Kapoor, R. Rogers,
       "Protection against reconstruction and its applications in private
       federated learning", 2018 (PrivUnit).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.linear_model import SemiLocalDPLinearRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((2000, 3))
    >>> y = X @ np.array([1.0, -2.0, 0.5]) + 0.5 * rng.standard_normal(2000)
    >>> public = np.arange(2000) < 200
    >>> reg = SemiLocalDPLinearRegression(epsilon=4.0, clip_norm=2.0, random_state=0)
    >>> reg = reg.fit(X, y, public_mask=public)
    >>> reg.epsilon_ <= 4.0, reg.delta_
    (True, 0.0)
    >>> np.round(reg.coef_, 1).tolist()  # the truth is [1.0, -2.0, 0.5]
    [1.0, -2.0, 0.5]
    """

    _parameter_constraints = {
        "epsilon": EPSILON_CONSTRAINT,
        "clip_norm": [CLIP_NORM_CONSTRAINT],
        "learning_rate": [
            Interval(Real, 0, None, closed="neither"),
            StrOptions({"auto"}),
        ],
        "radius": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "public_gradient": [StrOptions({"clip", "rescale", "raw"})],
        "fit_intercept": ["boolean"],
        "public_ridge": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
        "random_state": RANDOM_STATE_CONSTRAINT,
        "feature_scaling": [StrOptions({"auto"}), None],
        "feature_bounds": ["array-like", None],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        *,
        epsilon=1.0,
        clip_norm=1.0,
        learning_rate="auto",
        radius="auto",
        public_gradient="clip",
        fit_intercept=True,
        public_ridge="auto",
        random_state=None,
        feature_scaling="auto",
        feature_bounds=None,
        verbose=0,
    ):
        self.epsilon = epsilon
        self.clip_norm = clip_norm
        self.learning_rate = learning_rate
        self.radius = radius
        self.public_gradient = public_gradient
        self.fit_intercept = fit_intercept
        self.public_ridge = public_ridge
        self.random_state = random_state
        self.feature_scaling = feature_scaling
        self.feature_bounds = feature_bounds
        self.verbose = verbose

    _plan_public_counts = ("n_public",)

    def _params(self):
        """The public inputs of the fit; real values as Python floats (an int
        beyond float64's range is refused naming its parameter)."""
        return LocalParams(
            epsilon=self.epsilon,
            clip_norm=self.clip_norm,
            learning_rate=self.learning_rate,
            radius=self.radius,
            public_gradient=self.public_gradient,
            fit_intercept=self.fit_intercept,
            public_ridge=self.public_ridge,
            feature_scaling=self.feature_scaling,
            feature_bounds=self.feature_bounds,
        )

    def _planned_record(self, n_samples, n_features, n_public=0):
        """The record of a fit on ``n_samples`` rows, ``n_public`` of them public.

        From the parameters and the public counts only: one message per
        private record (unweighted; a weighted fit adds the weights caveat
        to the same event).
        """
        if n_public > n_samples:
            raise ValueError(f"n_public={n_public} exceeds n_samples={n_samples}.")
        return self._local_setup(n_samples, n_features, n_public).record

    def _local_setup(self, n_samples, n_features, n_public, weighted=False):
        """The set-up :meth:`fit` runs and :meth:`privacy_plan` reads (public inputs)."""
        params = self._params()
        check_local_epsilon(params.epsilon)
        return local_setup(
            params,
            n_samples - n_public,
            n_public,
            n_features,
            weighted=weighted,
        )

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None, *, public_mask=None):
        """Fit the model; only rows with ``public_mask == False`` are protected.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data (dense).
        y : array-like of shape (n_samples,)
            Targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Public non-negative weights, used as given (rescaled to mean 1
            only at ``epsilon=inf``): a person's randomizer reads no other
            person's weight. Each multiplies its row's residual before the
            row's gradient is clipped and randomized, so a weighted record
            still sends one message of the same norm. The record then
            carries the weights caveat.
        public_mask : array-like of bool, shape (n_samples,), default=None
            True for public rows. None: every row is private (with a
            warning), i.e. plain local DP from zero; at ``epsilon=inf``
            (least squares on all rows) without the warning.

        Returns
        -------
        self : SemiLocalDPLinearRegression
            The fitted estimator.
        """
        refuse_dask_input(
            "SemiLocalDPLinearRegression",
            X=X,
            y=y,
            sample_weight=sample_weight,
            public_mask=public_mask,
        )
        # The parameters as the set-up reads them (Python floats; an int
        # beyond float64's range is refused naming it), before a row is read.
        epsilon = self._params().epsilon
        # The fit runs on the host (numpy): torch input under array API
        # dispatch is read as a numpy copy, as it is without dispatch, and
        # the fitted arrays are numpy.
        X, y = validate_data(
            self, host_input(X), host_input(y), dtype=np.float64, y_numeric=True
        )
        # validate_data casts X only (and y only from object dtype, after its
        # finiteness check): a target of numeric strings is parsed and
        # checked finite here, as the other semi-private estimators do; the
        # errors name y and show no value.
        y = float64_target(y)
        mask = check_public_mask(
            host_input(public_mask), X.shape[0],
            private=not math.isinf(epsilon),
        )
        weights = check_public_weights(host_input(sample_weight), X)
        setup = self._local_setup(
            X.shape[0],
            X.shape[1],
            int(np.count_nonzero(mask)),
            weighted=weights is not None,
        )
        rng = check_noise_generator(self.random_state)
        result = fit_semi_local(
            X,
            y,
            mask,
            setup,
            rng=rng,
            sample_weight=weights,
            progress=progress_printer(self.verbose, type(self).__name__, "row"),
        )
        self.coef_ = result.coef
        self.intercept_ = result.intercept
        self.coef_public_ = result.warm_start
        self.intercept_public_ = result.warm_start_intercept
        self.public_ridge_ = result.public_ridge
        self.learning_rate_ = result.learning_rate
        self.radius_ = result.radius
        self.message_norm_ = result.message_norm
        self.n_public_ = int(mask.sum())
        self.n_private_ = X.shape[0] - self.n_public_
        self._set_privacy_record(result.record)
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Without public rows (the common checks pass none) the default fit
        # is one noisy pass from zero over 20-100 rows.
        tags.regressor_tags.poor_score = True
        return tags
