# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Semi-local DP linear regression: Semi-LDP-SGD (thesis Algorithm 13).

The trust model (Lowy's thesis, §2.3, Definition 24): no curator is
trusted. Each private person randomizes what they send on their own, and
the algorithm is ``(epsilon, 0)``-semi-LDP when the full transcript of
messages is ``epsilon``-DP for every private record, under replacing that
record. Public rows are used as they are.

Algorithm 13 (Appendix A.3.2.1), one pass in a uniformly random order
(sampling without replacement, so every row is visited exactly once):

* a private row ``x_t`` sends one message,
  ``g~_t = C * PrivUnit(u_t) / m`` (line 6), where ``u_t`` is its gradient
  ``grad f(w_t, x_t)`` made a unit vector (below);
* a public row's gradient is used as it is (line 8), or clipped to ``C``,
  or rescaled to the norm ``C / m`` of a private message (the variant of
  the thesis's experiments, Appendix A.4.3), per ``public_gradient``;
* ``w_{t+1} = w_t - eta g~_t`` (line 10, with ``W = R^d``) and the output is
  the average of the iterates ``w_1 ... w_n`` (line 12).

Accounting: each private person speaks once (``T = 1``: sequentially
interactive, §2.3), so the transcript of one record is one PrivUnit
message, ``epsilon``-DP whatever the record holds; it is accounted as
``RandomizedResponseDpEvent(2 / (1 + e^eps), 2)`` (the dominating pair of
every ``epsilon``-DP mechanism) under replace-one. Messages of different
persons are on disjoint records: the fit logs each message in its own part
of :func:`~sklearn_dpfair.privacy._releases.parallel_parts`, so a record
that spoke twice would show up as two releases and fail the run-time
check. The model, computed from the transcript and the public rows, is a
post-processing of it.

From a gradient to a unit vector. PrivUnit randomizes unit vectors;
Algorithm 13 applies it to ``clip_C(g)``, of norm at most ``C``. The
direction ``g / ||g||`` is flipped with probability ``(1 - r) / 2``,
``r = min(||g|| / C, 1)``, so that ``E[C * sign * g / ||g||] = clip_C(g)``
(the sign trick of Duchi, Jordan and Wainwright's LDP-SGD, the thesis's
reference [85]): every message is then unbiased for the clipped gradient
and spends nothing on its norm. A zero gradient (or one whose residual is
not a number) gets a fixed direction with a fair sign. The step only reads
its own record, so the unit vector is what the randomizer sees, whatever
the record holds: the sensitivity is the whole sphere, which PrivUnit's
epsilon covers.

Step size (proof of Proposition 30, Appendix A.3.2.1): with ``D`` the
distance from the start to the minimizer and ``G_a^2``, ``G_b^2`` the
second moments of private and public steps, the excess risk is at most
``D^2 / (eta n) + eta (n_priv G_a^2 + n_pub G_b^2) / n``, minimized by
``eta = D / sqrt(n_priv G_a^2 + n_pub G_b^2)``. Here ``G_a = C / m``
exactly (every message has that norm) and ``G_b = C`` (clipped public
gradients; also the value assumed for raw ones) or ``C / m`` (rescaled).
``D`` is ``radius``; "auto" estimates it from the public rows alone:
``sqrt(s^2 tr((X_pub' X_pub)^-1))``, the expected distance from the public
least-squares start to the population minimizer (``s^2`` the public
residual variance), when there are enough public rows, else 1.
"""

import math
from dataclasses import dataclass, field, replace

import numpy as np

from ...exceptions import PrivacyAccountingError
from ...privacy import PrivacyRecord
from ...privacy._accounting import no_op_event, non_private_event
from ...privacy._counts import adjacency_text
from ...privacy._record import (
    ADJACENCY_CONVERSION,
    SEEDED_TEXT,
    PUBLIC_ROWS_CAVEAT,
    WEIGHTS_CAVEAT,
    check_budget,
    plain_language,
)
from ...privacy._releases import parallel_parts
from ...privacy._weights import fit_weights
from .._feature_scaling import check_feature_bounds, warn_ignored_bounds
from .._non_private import column_moments
from ._privunit import (
    MAX_LOCAL_EPSILON,
    MIN_LOCAL_EPSILON,
    PrivUnit,
    local_epsilon_event,
)
from ._fit import float_parameters
from ._scaling import public_scaling, scaled_rows

__all__ = [
    "DEFAULT_RADIUS",
    "LOCAL_ADJACENCY_TEXT",
    "LocalParams",
    "LocalPrivacyRecord",
    "LocalSetup",
    "check_local_epsilon",
    "fit_semi_local",
    "local_plan_event",
    "local_setup",
    "unit_direction",
]

#: ``D`` when the public rows cannot estimate it (fewer than the number of
#: coefficients plus 2, the intercept included).
DEFAULT_RADIUS = 1.0

#: How the record states its neighbouring relation.
LOCAL_ADJACENCY_TEXT = (
    "replacing one private record, in the local model: each private "
    "person's full transcript of messages (one message: sequentially "
    "interactive, T = 1) is randomized by that person, so the guarantee "
    "holds against the server and anyone who sees the messages, not only "
    "against those who see the model (semi-local DP, Lowy's thesis "
    "Definition 24)"
)

_MECHANISM = (
    "Semi-LDP-SGD (Lowy's thesis, Algorithm 13): one pass in random order; "
    "each private record sends one PrivUnit message (Algorithm 12) of its "
    "clipped gradient, public rows' gradients are used directly"
)


class LocalPrivacyRecord(PrivacyRecord):
    """A :class:`~sklearn_dpfair.privacy.PrivacyRecord` that states the local model.

    ``adjacency`` stays ``"replace_one"`` (an ``epsilon``-semi-LDP transcript
    makes the model ``epsilon``-DP under replace-one by post-processing,
    which is what a ledger composes); the texts say that the guarantee is
    local.
    """

    def plain_language(self):
        """The guarantee in plain words, saying that no one is trusted."""
        text = plain_language(
            self.epsilon, self.delta, self.adjacency, self.caveats, self.seeded
        )
        if math.isinf(self.epsilon):
            return text
        return text.replace(
            "against anyone who sees the released model or its outputs",
            "locally: each person randomizes their own message before it "
            "leaves them, so the guarantee holds against the server that "
            "collects the messages as well as anyone who sees the released "
            "model",
        )

    def technical_text(self):
        """The technical record, with the local adjacency and the randomizer."""
        if math.isinf(self.epsilon):
            head = "No differential privacy (epsilon = inf): non-private fit."
        else:
            head = (
                f"({self.epsilon:.4g}, {self.delta:.3g})-differential privacy "
                f"with respect to {LOCAL_ADJACENCY_TEXT} "
                f"[{adjacency_text(self.adjacency, self.declared_counts)}]."
            )
        lines = [head]
        if not math.isinf(self.epsilon):
            lines.append(ADJACENCY_CONVERSION)
        if self.seeded:
            lines.append(SEEDED_TEXT)
        lines.append(f"Mechanism: {self.mechanism}.")
        if self.steps is not None:
            lines.append(
                f"{self.steps} private messages, one per private record, each "
                f"of norm C / m with C = clip_norm = {self.clip_norm:.4g}."
            )
        if not math.isinf(self.epsilon):
            lines.append(
                f"Accounted with dp-accounting ({self.accountant.upper()}, "
                "replace-one) as binary randomized response per record."
            )
        for caveat in self.caveats:
            if "guarantee" in caveat or "not protected" in caveat:
                lines.append(f"Caveat: {caveat}.")
            else:
                lines.append(f"Caveat: {caveat} (not covered by the guarantee).")
        return "\n".join(lines)


@dataclass(frozen=True)
class LocalParams:
    """Public hyperparameters of a semi-local fit."""

    epsilon: float
    clip_norm: float = 1.0
    learning_rate: object = "auto"
    radius: object = "auto"
    public_gradient: str = "clip"
    fit_intercept: bool = True
    public_ridge: object = "auto"
    #: ``"auto"``: columns scaled by declared bounds or the public rows
    #: (free; no central private quantiles under the local trust model).
    feature_scaling: object = None
    feature_bounds: object = field(default=None, compare=False)

    def __post_init__(self):
        # Python floats from here on: a numpy float32 public_ridge of 3e38
        # made the public ridge (times the Gram matrix's mean diagonal) inf
        # in float32, and the warm start's SVD failed after rows were read.
        names = ("epsilon", "clip_norm", "learning_rate", "radius", "public_ridge")
        floats = float_parameters(**{name: getattr(self, name) for name in names})
        for name, value in floats.items():
            object.__setattr__(self, name, value)


@dataclass
class LocalFit:
    """What :func:`fit_semi_local` returns."""

    coef: np.ndarray
    intercept: float
    warm_start: np.ndarray
    learning_rate: float
    radius: float
    message_norm: float
    record: PrivacyRecord
    warm_start_intercept: float = 0.0
    public_ridge: float = math.nan
    randomizer: object = None
    extras: dict = field(default_factory=dict)


def local_plan_event(epsilon, n_private):
    """The event a fit on ``n_private`` private records records (public inputs).

    Examples
    --------
    >>> from sklearn_dpfair._solvers.semi_dp._local import local_plan_event
    >>> local_plan_event(1.0, 100).num_buckets
    2
    >>> type(local_plan_event(1.0, 0)).__name__
    'NoOpDpEvent'
    """
    if math.isinf(epsilon):
        return non_private_event()
    if n_private == 0:
        return no_op_event()
    return local_epsilon_event(_randomizer_epsilon(epsilon))


@dataclass(frozen=True)
class LocalSetup:
    """What a semi-local fit fixes before it reads a row (:func:`local_setup`).

    The public counts and width it was made for, whether public weights are
    passed, the calibrated randomizer (None without private rows or at
    ``epsilon = inf``) and the record: :func:`fit_semi_local` runs this
    randomizer, records this record and refuses data of other counts.
    """

    params: LocalParams
    n_private: int
    n_public: int
    n_features: int
    weighted: bool
    randomizer: object
    record: PrivacyRecord

    def check_data(self, X, public_mask, sample_weight):
        """Raise unless the data have the counts the set-up was made for.

        ``public_mask`` is public (which rows are public is the caller's
        declaration), so counting it reads nothing private.

        Raises
        ------
        PrivacyAccountingError
            If they differ (a bug of the caller, never a property of the
            data's values).
        """
        n_public = int(np.count_nonzero(public_mask))
        received = (
            X.shape[0] - n_public, n_public, X.shape[1], sample_weight is not None
        )
        planned = (self.n_private, self.n_public, self.n_features, self.weighted)
        if received != planned:
            raise PrivacyAccountingError(
                "The semi-local fit was planned for (n_private, n_public, "
                f"n_features, weighted) = {planned} but received {received}: its "
                "record would not be the accounted one. This is a bug: please "
                "report it."
            )


def local_setup(params, n_private, n_public, n_features, *, weighted=False):
    """The set-up of a fit with ``params`` on these counts (public inputs only).

    The randomizer's parameters depend on ``epsilon`` and the width
    ``n_features`` (plus the intercept column) only; ``weighted`` (whether
    public weights are passed, never what they hold) adds the weights caveat.

    Examples
    --------
    >>> from sklearn_dpfair._solvers.semi_dp._local import LocalParams, local_setup
    >>> setup = local_setup(LocalParams(epsilon=1.0), 90, 10, 2)
    >>> setup.record.epsilon, setup.record.delta, setup.record.steps
    (1.0, 0.0, 90)
    """
    epsilon = float(params.epsilon)
    dim = n_features + int(params.fit_intercept)
    # Every fit, the non-private limit included, refuses what the private
    # one's column scaling refuses (as SemiDPLinearRegression's plan does),
    # before any branch and before a row is read.
    warn_ignored_bounds(params.feature_scaling, params.feature_bounds)
    if params.feature_scaling is not None:
        check_feature_bounds(params.feature_bounds, n_features)
    caveats = (PUBLIC_ROWS_CAVEAT,) if n_public else ()
    if weighted:
        caveats += (WEIGHTS_CAVEAT,)
    mechanism = _MECHANISM
    unit = None
    if n_private and not math.isinf(epsilon):
        unit = PrivUnit.calibrated(epsilon, dim)
        mechanism += (
            f"; PrivUnit in dimension {dim} with p = {unit.p:.6g}, "
            f"gamma = {unit.gamma:.6g}, m = {unit.m:.6g}"
        )
    if not math.isinf(epsilon):
        _check_magnitudes(params, unit, n_private, n_public)
    record = LocalPrivacyRecord.from_event(
        local_plan_event(epsilon, n_private),
        delta=0.0,
        accountant="pld",
        adjacency="replace_one",
        mechanism=mechanism,
        noise_multiplier=0.0,
        clip_norm=float(params.clip_norm),
        steps=n_private,
        caveats=caveats,
    )
    if math.isinf(epsilon):
        record = replace(
            record,
            mechanism="non-private limit: least squares on all rows",
            clip_norm=None,
            steps=None,
        )
    return LocalSetup(
        params=params,
        n_private=int(n_private),
        n_public=int(n_public),
        n_features=int(n_features),
        weighted=bool(weighted),
        randomizer=unit,
        record=record,
    )


def _step_norms(params, unit):
    """``(G_a, G_b)``: the norm of a private message and of a public step."""
    C = float(params.clip_norm)
    message_norm = C / unit.m if unit is not None else C
    public_norm = message_norm if params.public_gradient == "rescale" else C
    return message_norm, public_norm


def _step_moment(params, unit, n_private, n_public):
    """``n_priv G_a^2 + n_pub G_b^2``, the denominator of the "auto" step.

    Products, not ``**``: a float square that overflows raises there.
    """
    message_norm, public_norm = _step_norms(params, unit)
    return n_private * (message_norm * message_norm) + n_public * (
        public_norm * public_norm
    )


def _check_magnitudes(params, unit, n_private, n_public):
    """Refuse parameters the pass would overflow or divide by zero on.

    From public inputs only, so that the fit (and ``privacy_plan``) refuses
    before a row is read, naming the parameter, rather than failing inside
    the pass.

    Raises
    ------
    ValueError
        If the "auto" step's ``n_priv G_a^2 + n_pub G_b^2`` overflows float64
        or underflows to 0 (``clip_norm``); if the coefficients could leave
        float64 over the pass (``learning_rate``, or ``radius`` with the
        "auto" step); or if the public ridge can overflow (``public_ridge``).
    """
    message_norm, public_norm = _step_norms(params, unit)
    clip = float(params.clip_norm)
    eta = None
    if params.learning_rate == "auto":
        total = _step_moment(params, unit, n_private, n_public)
        if not math.isfinite(total):
            raise ValueError(
                "clip_norm is too large: the automatic step size divides by "
                "sqrt(n_private (C/m)^2 + n_public G_pub^2), which overflows "
                f"float64 for C = clip_norm = {clip:g}. Use a clip norm of the "
                "size of the per-example gradients."
            )
        if (n_private or n_public) and not total > 0:
            raise ValueError(
                "clip_norm is too small: the automatic step size divides by "
                "sqrt(n_private (C/m)^2 + n_public G_pub^2), which underflows "
                f"to 0 in float64 for C = clip_norm = {clip:g}. Use a clip norm "
                "of the size of the per-example gradients."
            )
        if params.radius != "auto" and total > 0:
            eta = float(params.radius) / math.sqrt(total)
    else:
        eta = float(params.learning_rate)
    if eta is not None:
        # Every step moves the coefficients by eta times its norm: C / m
        # for a message, G_pub for a clipped or rescaled public gradient (a
        # raw one is used only while finite); the output sums the n
        # iterates. Both must stay in float64 whatever the rows hold.
        n = n_private + n_public
        drift = eta * (n_private * message_norm + n_public * public_norm)
        if not math.isfinite(n * drift):
            if params.learning_rate == "auto":
                name = f"radius={float(params.radius):g}"
                cause = (
                    "the automatic step radius / sqrt(n_private (C/m)^2 + "
                    "n_public G_pub^2)"
                )
            else:
                name = f"learning_rate={eta:g}"
                cause = "the step learning_rate"
            raise ValueError(
                f"{name} is too large: {cause} times the step norms (C/m = "
                f"{message_norm:.4g} per message, {public_norm:.4g} per public "
                f"row, with C = clip_norm = {clip:g}) over {n} steps and the "
                "average of the iterates can overflow float64. Use a "
                "smaller value."
            )
    if params.public_ridge != "auto" and n_public:
        # The ridge is public_ridge times the public Gram matrix's mean
        # diagonal, on columns scaled into [-1, 1]: at most n_public. Twice
        # that bound leaves room for the rounding of the trace.
        if not math.isfinite(2.0 * float(params.public_ridge) * n_public):
            raise ValueError(
                "public_ridge is too large: the ridge of the public warm start, "
                "public_ridge times the public Gram matrix's mean diagonal (up "
                f"to n_public={n_public}), overflows float64 for public_ridge="
                f"{float(params.public_ridge):g}. A public_ridge of 1e10 already "
                "gives a warm start of about 0."
            )


def _randomizer_epsilon(epsilon):
    # The calibration depends on epsilon only (not on the dimension).
    return PrivUnit.calibrated(epsilon, 1).epsilon


def unit_direction(x, scale, clip_norm):
    """``(u, r)``: unit direction of ``scale * x`` and ``min(||scale x|| / C, 1)``.

    Computed without forming ``scale * x`` (which may overflow): ``u`` is
    ``sign(scale) x / ||x||`` and the norm is compared with ``C`` in logs.
    ``u`` is None for a zero or non-finite gradient.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers.semi_dp._local import unit_direction
    >>> u, r = unit_direction(np.array([3.0, 4.0]), -1e300, 1.0)
    >>> np.round(u, 12).tolist(), r
    ([-0.6, -0.8], 1.0)
    """
    if not math.isfinite(scale) and not math.isinf(scale):
        return None, 0.0
    big = float(np.max(np.abs(x))) if x.size else 0.0
    if scale == 0 or big == 0 or not math.isfinite(big):
        return None, 0.0
    y = x / big
    ny = float(np.sqrt(np.dot(y, y)))
    u = (math.copysign(1.0, scale) / ny) * y
    if math.isinf(scale):
        return u, 1.0
    log_norm = math.log(abs(scale)) + math.log(big) + math.log(ny)
    r = 1.0 if log_norm >= math.log(clip_norm) else math.exp(log_norm - math.log(clip_norm))
    return u, min(r, 1.0)


def _augment(X, fit_intercept):
    if not fit_intercept:
        return X
    return np.hstack([X, np.ones((X.shape[0], 1), dtype=X.dtype)])


#: Relative ridges ``public_ridge="auto"`` chooses among (times the public
#: Gram matrix's mean diagonal, on columns scaled by their public maximum).
PUBLIC_RIDGE_GRID = (1e-6, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0)


def _public_start(Xp, yp, params, dim, fit_intercept=False):
    """Public ridge start, its relative ridge, and the public estimate of ``D``.

    Public rows only. Columns are scaled by their largest public magnitude
    before the Gram matrix is formed, so huge public values do not
    overflow; a public block that still gives no finite solution starts
    from zero. ``public_ridge="auto"`` picks the ridge by generalized
    cross-validation on the public rows (Golub, Heath and Wahba, 1979): the
    thesis starts from public least squares (Appendix A.4.1.3, "warm
    start"), which overfits when public rows barely outnumber the
    coefficients. The intercept column is not penalized. ``D`` is None
    with fewer than ``dim + 2`` public rows.
    """
    n_pub = Xp.shape[0]
    grid = PUBLIC_RIDGE_GRID if params.public_ridge == "auto" else (params.public_ridge,)
    if n_pub == 0:
        return np.zeros(dim), float(grid[0]), None
    scale = np.max(np.abs(Xp), axis=0)
    scale[~(scale > 0) | ~np.isfinite(scale)] = 1.0
    penalty = np.ones(dim)
    if fit_intercept:
        penalty[-1] = 0.0
    with np.errstate(all="ignore"):
        Z = Xp / scale
        gram = Z.T @ Z
        if not np.isfinite(gram).all() or not np.isfinite(yp).all():
            return np.zeros(dim), float(grid[0]), None
        base = max(float(np.trace(gram)) / dim, 1e-300)
        best = None
        for relative in grid:
            inv = np.linalg.pinv(gram + relative * base * np.diag(penalty))
            v = inv @ (Z.T @ yp)
            resid = yp - Z @ v
            dof = float(np.trace(inv @ gram))
            rss = float(resid @ resid)
            gcv = n_pub * rss / (n_pub - dof) ** 2 if n_pub - dof > 0.5 else math.inf
            if best is None or gcv < best[0]:
                best = (gcv, relative, inv, v, rss, dof)
        _, relative, inv, v, rss, dof = best
        w0 = v / scale
        if not np.isfinite(w0).all():
            return np.zeros(dim), float(relative), None
        if n_pub < dim + 2:
            return w0, float(relative), None
        s2 = rss / max(n_pub - dof, 1.0)
        # tr((X' X + ridge)^-1) in the original units: inv is for X / scale.
        radius = math.sqrt(max(s2 * float(np.sum(np.diag(inv) / scale**2)), 0.0))
    radius = radius if radius > 0 and math.isfinite(radius) else None
    return w0, float(relative), radius


def _least_squares(X, y, weights, fit_intercept):
    """(Weighted) least squares on raw columns, centred as ``LinearRegression``.

    The columns are standardized by their (weighted) means and standard
    deviations (:func:`~sklearn_dpfair._solvers._non_private.column_moments`,
    two passes, no overflow) before ``lstsq``, and the coefficients mapped
    back: its default cutoff drops singular values below ``eps * n`` of the
    largest, so that, on raw columns, a feature in units of ``1e-6`` beside
    one in units of ``1e6`` lost its coefficient once ``n`` reached a few
    thousand rows. A column constant on the weighted rows (a zero scaled
    mean square after centring: rounding noise) is left at 0, the intercept
    holding it; without an intercept only an all-zero column is.
    """
    w = np.ones(X.shape[0]) if weights is None else weights
    total = float(w.sum())
    mean, scale = column_moments(X, weights, center=fit_intercept)
    if fit_intercept:
        y_mean = float(w @ y / total)
    else:
        mean, y_mean = np.zeros(X.shape[1]), 0.0
    Z = X - mean
    Z /= scale
    varying = np.einsum("ij,ij,i->j", Z, Z, w) / total > 0.5
    sw = np.sqrt(w)
    Z = Z[:, varying]
    Z *= sw[:, None]
    coef = np.zeros(X.shape[1])
    beta = np.linalg.lstsq(Z, (y - y_mean) * sw, rcond=None)[0]
    coef[varying] = beta / scale[varying]
    return coef, y_mean - float(mean @ coef)


# Lines printed by a verbose fit over its one pass.
_PROGRESS_LINES = 10


def fit_semi_local(
    X, y, public_mask, setup, *, rng, sample_weight=None, progress=None
):
    """Run Algorithm 13 on ``X, y`` (float64) as ``setup`` planned it.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    public_mask : ndarray of bool
    setup : LocalSetup
        From :func:`local_setup` on the public counts, before any row is
        read: its randomizer runs and its record is the fit's. Data of
        other counts are refused.
    rng : numpy.random.Generator
    sample_weight : ndarray or None
        Public weights, used as given (rescaled to mean 1 only at ``epsilon
        = inf``); each multiplies its row's residual before the row's
        gradient is clipped and randomized.
    progress : Progress or None, default=None
        Prints, about ten times in the pass, the norm of the mean step
        since the previous line: private messages are released by their
        senders and public steps are public, so it costs no privacy.

    Returns
    -------
    fit : LocalFit
    """
    setup.check_data(X, public_mask, sample_weight)
    params, record, unit = setup.params, setup.record, setup.randomizer
    n, n_features = X.shape
    n_private, n_public = setup.n_private, setup.n_public
    epsilon = float(params.epsilon)
    # Used as given under privacy: a normalizer such as mean(w) would make
    # every person's randomizer read the others' weights (fit_weights).
    weights = fit_weights(sample_weight, n, private=not math.isinf(epsilon))
    dim = n_features + int(params.fit_intercept)
    if math.isinf(epsilon):
        coef, intercept = _least_squares(X, y, weights, params.fit_intercept)
        return LocalFit(
            coef, intercept, coef, math.nan, math.nan, math.nan, record, intercept
        )

    # Raw columns: scaled by declared bounds or the public rows (free), so
    # that no column saturates every clipped gradient; the model is mapped
    # back to the user's units at the end.
    # (feature_bounds were validated, and warned about when ignored, by
    # local_setup.)
    scales = (
        None
        if params.feature_scaling is None
        else public_scaling(
            X,
            public_mask,
            feature_scaling=params.feature_scaling,
            feature_bounds=params.feature_bounds,
            fit_intercept=params.fit_intercept,
        )
    )
    if scales is not None:
        X = scaled_rows(X, scales)
    Xa = _augment(X, params.fit_intercept)
    w0, ridge, public_radius = _public_start(
        Xa[public_mask], y[public_mask], params, dim, params.fit_intercept
    )
    radius = (
        float(params.radius)
        if params.radius != "auto"
        else (DEFAULT_RADIUS if public_radius is None else public_radius)
    )
    C = float(params.clip_norm)
    message_norm, public_norm = _step_norms(params, unit)
    if params.learning_rate == "auto":
        # Positive and finite: refused at set-up otherwise (_check_magnitudes).
        eta = radius / math.sqrt(_step_moment(params, unit, n_private, n_public))
    else:
        eta = float(params.learning_rate)

    fixed = np.zeros(dim)
    fixed[0] = 1.0
    # The largest coefficient a raw public step may leave, far inside
    # float64: the next step's w - eta * g and the average stay finite.
    largest = np.finfo(np.float64).max / (2 * n)
    w = w0.copy()
    # The average of the iterates, accumulated as a sum of w / n: a sum of
    # the iterates themselves overflows (a warning that depends on the rows)
    # when the public start is near float64's limit, as a public target of
    # 1e308 makes it.
    average = np.zeros(dim)
    order = rng.permutation(n)
    if progress is not None:
        # Each line says how many rows have been visited.
        progress = progress.per(n, _PROGRESS_LINES)
        progress.label_steps = True
        block, block_steps = np.zeros(dim), 0
    with parallel_parts() as parts:
        for position, i in enumerate(order, start=1):
            x = Xa[i]
            # A residual or weighted residual beyond float64 is inf (or nan),
            # which unit_direction maps to a unit vector, without a warning
            # that would depend on the record.
            with np.errstate(over="ignore", invalid="ignore"):
                residual = float(np.dot(w, x)) - float(y[i])
                if weights is not None:
                    residual = float(residual * weights[i])
            u, r = unit_direction(x, residual, C)
            if public_mask[i]:
                if u is None:
                    step = None
                elif params.public_gradient == "raw":
                    # Nothing bounds a raw public gradient (_check_magnitudes
                    # bounds the other steps): one that would carry a
                    # coefficient past `largest` (or out of float64) is
                    # skipped, so the sum of the n iterates stays finite and
                    # no overflow warning depends on the rows.
                    with np.errstate(over="ignore", invalid="ignore"):
                        step = residual * x
                        moved = np.abs(w - eta * step).max()
                    step = step if moved <= largest else None
                elif params.public_gradient == "rescale":
                    step = public_norm * u
                else:
                    step = (C * r) * u
            else:
                # Algorithm 13, line 6: the person's own randomizer. The sign
                # makes the message unbiased for clip_C(g).
                if u is None:
                    u, r = fixed, 0.0
                sign = 1.0 if rng.random() < (1.0 + r) / 2.0 else -1.0
                with parts.part(int(i)):
                    step = C * unit.randomize(sign * u, rng)
            if step is not None:
                w = w - eta * step
            average += w / n
            if progress is not None:
                if step is not None:
                    block += step
                block_steps += 1
                if progress.reports(position):
                    progress(position, float(np.linalg.norm(block)) / block_steps)
                    block, block_steps = np.zeros(dim), 0
    w_bar = average
    if params.fit_intercept:
        coef, intercept = w_bar[:-1], float(w_bar[-1])
        start, start_intercept = w0[:-1], float(w0[-1])
    else:
        coef, intercept, start, start_intercept = w_bar, 0.0, w0, 0.0
    if scales is not None:
        (coef,), (intercept,) = scales.coefficients_in_user_units(
            coef[None, :], [intercept]
        )
        (start,), (start_intercept,) = scales.coefficients_in_user_units(
            np.asarray(start)[None, :], [start_intercept]
        )
        intercept, start_intercept = float(intercept), float(start_intercept)
        if not params.fit_intercept:
            intercept = start_intercept = 0.0
    check_budget(record, epsilon, calibrated=True)
    return LocalFit(
        coef,
        intercept,
        start,
        eta,
        radius,
        message_norm,
        record,
        start_intercept,
        public_ridge=ridge,
        randomizer=unit,
    )


def check_local_epsilon(epsilon):
    """Raise ValueError for an epsilon PrivUnit cannot run or be certified at."""
    if epsilon < MIN_LOCAL_EPSILON:
        raise ValueError(
            f"epsilon={epsilon:g} is below {MIN_LOCAL_EPSILON:g}, the resolution "
            "of the accountant (dp-accounting's PLD) that certifies every local "
            "message: no smaller budget can be certified."
        )
    if not math.isinf(epsilon) and epsilon > MAX_LOCAL_EPSILON:
        raise ValueError(
            f"epsilon={epsilon:g} is above the largest finite local budget "
            f"{MAX_LOCAL_EPSILON:g} a PrivUnit message can spend in float64; use "
            "epsilon=np.inf for the non-private limit."
        )
