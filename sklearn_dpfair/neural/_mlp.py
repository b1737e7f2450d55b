# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Differentially private multilayer perceptron classifier (DP-SGD)."""

import dataclasses
import math
from collections.abc import Mapping
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .._base import (
    CLIP_NORM_CONSTRAINT,
    DELTA_CONSTRAINT,
    EPSILON_CONSTRAINT,
    PRIVACY_PARAMETER_CONSTRAINTS,
    PrivateEstimatorMixin,
    ScoreClassifierMixin,
    charged_if_raised_after_releases,
)
from .._loss import BinaryLogisticLoss, SoftmaxLoss
from .._solvers._feature_scaling import (
    plan_feature_scaling,
    public_feature_scaling,
    public_scaling_plan,
    require_public_bounds,
    warn_unscaled_columns,
)
from .._solvers._progress import progress_printer
from .._solvers._schedules import check_sgd_steps
from ..federated._fit import (
    SiloOptions,
    check_silo_plan,
    plan_fit_silos,
    plan_silos,
    silo_attributes,
    warn_unused_params,
    warn_unused_silo_options,
)
from ..federated._spider import SpiderSchedule
from ..privacy import PrivacyBudget
from ..privacy._random import check_noise_generator
from ..utils._array_api import (
    DEVICE_OPTIONS,
    detached_input,
    input_float_dtypes,
    resolve_backend,
    to_numpy,
)
from ..utils._dask import refuse_dask_input
from ..utils._sklearn_compat import Interval, Options, StrOptions, _fit_context
from ..utils._validation import (
    check_classifier_metadata,
    planned_class_count,
    refuse_weights_with_silos,
    validate_data,
)
from ._federated import fit_network_silos
from ._fit import MLPParams, fit_dp_network, network_setup
from ._network import ACTIVATIONS, check_hidden_layer_sizes, network_scores

__all__ = ["DPMLPClassifier"]

# The parameters that only a federated fit reads (execution="dask" without
# silos is refused instead), and those that only its SPIDER rounds read.
_SPIDER_OPTIONS = ("spider_period", "spider_smoothness")
_SILO_OPTIONS = (
    "silo_epsilon",
    "silo_delta",
    "server_weights",
    "secure_aggregation",
    "silo_algorithm",
    *_SPIDER_OPTIONS,
)


class DPMLPClassifier(ScoreClassifierMixin, PrivateEstimatorMixin, BaseEstimator):
    """Multilayer perceptron classifier trained with (epsilon, delta)-DP-SGD.

    A dense feed-forward network (scikit-learn's ``MLPClassifier``
    architecture: ``hidden_layer_sizes``, ``activation``, a logistic output
    for two classes and a softmax output for more) trained by DP-SGD with
    Poisson sampling: every example's gradient with respect to *all* the
    weights and biases jointly is clipped to ``clip_norm``, and Gaussian noise
    calibrated by dp-accounting is added to every batch sum. The per-example
    gradient norms are computed by the ghost-norm identity
    ``||a delta^T|| = ||a|| ||delta||`` layer by layer, so no per-example
    gradient is ever materialized. Needs no bound on the data: ``epsilon``
    and ``delta`` are the only privacy inputs. Guarantee under add/remove-one
    adjacency.

    Read more in the :ref:`User Guide <neural>`.

    Parameters
    ----------
    hidden_layer_sizes : array-like of int, default=(64,)
        Width of every hidden layer; ``()`` is a linear (logistic) model.
        The network's parameters must fit in one float64 numpy array (about
        1.15e18 of them), else a ``ValueError`` before any row is read.
    activation : {"identity", "logistic", "tanh", "relu"}, default="relu"
        Activation of the hidden layers.
    epsilon : float, default=1.0
        Privacy budget. ``np.inf`` (without ``noise_multiplier``) trains the
        same minibatch SGD without noise or clipping.
    delta : float, default=1e-5
        Privacy parameter delta in (0, 1); keep it well below ``1/n_samples``.
    clip_norm : float, default=1.0
        Bound on every example's full gradient (all layers stacked), the
        sensitivity of each batch sum. Public; never derived from the data.
    noise_multiplier : float, default=None
        Override the calibrated noise multiplier. The budget is still
        enforced: a fit whose noise spends more than ``epsilon`` raises
        :class:`~sklearn_dpfair.exceptions.PrivacyBudgetError`.
    batch_size : int, "auto" or "full", default="auto"
        Expected Poisson batch size. "auto" uses 5% of the rows (at least
        256); "full" runs noisy full-batch gradient descent.
    max_iter : int, default=30
        Number of epochs. The number of noisy steps is ``ceil(max_iter / q)``
        with ``q = batch_size / n_samples``, fixed before the data are read
        (no early stopping on private data), and at most ``10**6`` (the
        package's bound on a fit's steps): a larger count is a ``ValueError``
        naming ``max_iter`` before any row is read, in :meth:`fit` and
        :meth:`privacy_plan` alike.
    learning_rate : float or "auto", default="auto"
        Constant step size. "auto" sets it from public quantities only:
        ``min(4, 0.5 / r)`` with ``r = sigma sqrt(n_params) / (q n)`` the
        noise on the averaged gradient relative to ``clip_norm``; capped at
        ``1 / alpha``. Tuned once on UCI Adult, never on the data at hand.
        A given rate needs ``learning_rate * alpha < 2``, else the penalty's
        step diverges (a ``ValueError`` before the data are read). In the
        non-private limit (``epsilon=inf`` without ``noise_multiplier``,
        also every silo of a federation) the gradient is not clipped and
        "auto" starts at 1.0 on the exactly standardized columns; nothing is
        released there, so the run is checked on the data: when the
        penalized training loss at the end of epochs 1, 2, 4, ... or of the
        returned average is not finite or exceeds the initialization's, the
        run restarts from the same initialization and batches at half the
        step (at most 10 halvings, then a ``ValueError``). A given rate that
        diverges there is a ``ValueError`` naming ``learning_rate``. A
        private fit runs its planned step whatever the data.
    alpha : float, default=1e-4
        L2 penalty ``alpha/2 ||W||^2`` on the weights (not the biases); data
        independent, so free.
    classes : array-like of shape (n_classes,), default=None
        The public label set. If None it is inferred from ``y`` with a
        :class:`~sklearn_dpfair.exceptions.PrivacyLeakWarning`, and the
        guarantee does not cover which labels occur. ``classes_`` holds it
        sorted whatever the declared order, as in scikit-learn.
    accountant : {"rdp", "pld"} or PrivacyLedger, default="rdp"
        dp-accounting accountant for calibration and the record ("rdp"
        where private column scales are drawn, see ``feature_scaling``).
    random_state : None, int, numpy.random.RandomState or numpy.random.Generator, \
default=None
        None (the default) draws the initialization, the batches and the
        noise from fresh OS entropy: the only setting for a private release.
        Anything else is a seed, for tests and experiments; the privacy
        record of a seeded fit says that it is not a private release.
    device : {"cpu", "cuda", "auto"}, default="cpu"
        Where the training loop runs: "cpu" is numpy, "cuda" PyTorch on the
        current GPU (optional extra ``sklearn-dpfair[torch]``), "auto" CUDA
        when PyTorch sees a GPU, else numpy. With
        ``sklearn.set_config(array_api_dispatch=True)`` and an array-API ``X``
        (e.g. a torch tensor, on the CPU or a GPU) the fit runs where ``X``
        lives. The initialization, batches and noise are drawn on the host
        from the same generator on every backend, so a seed gives the same
        network up to floating-point round-off.
    feature_scaling : {"auto"} or None, default=None
        "auto" maps every column to unit scale before training, as
        :class:`~sklearn_dpfair.linear_model.DPLogisticRegression` does: by
        the declared ``feature_bounds`` (public, no budget), else by private
        robust location and scale (private quantiles on a public grid,
        10% of the zCDP budget, composed into ``dp_event_`` and accounted
        with RDP whatever ``accountant`` says, since PLD cannot read their
        zCDP events (``privacy_record_.accountant`` says so); none where the
        rows are too few for the budget to resolve a quantile, a public rule
        of ``n``, ``epsilon`` and the number of columns, which the raw-column
        warning then names); the first layer is mapped back so the network
        reads raw columns. None trains
        on the columns as given (scale them publicly first; a private fit
        warns when more than a quarter of a column's values lie beyond +-5,
        an input check outside the guarantee that shows no value). Without
        privacy a central fit always standardizes the columns exactly, and
        so does a federation whose silos are all non-private (every silo's
        ``epsilon`` ``inf``, no ``noise_multiplier``). With ``silos`` only the public map of ``feature_bounds`` applies
        (a ``ValueError`` without them: private scales would need a
        distributed private quantile): every silo maps its rows by it, at
        any ``epsilon``, and ``dp_event_`` is that of the unscaled fit.
    feature_bounds : array-like of shape (n_features, 2), default=None
        Public per-column ``(lower, upper)`` used by
        ``feature_scaling="auto"`` instead of private scales: each column is
        mapped by its midpoint and half-width (no budget spent; values
        outside are not clipped by the map, the gradient clip bounds their
        influence).
    silo_epsilon : float or dict, default=None
        Federated mode (``fit(X, y, silos=...)``) only: the budget of every
        silo, or a dict from silo id to budget; None uses ``epsilon``. Each
        silo's messages are ``(silo_epsilon, silo_delta)``-DP in its own
        records against an untrusted server (ISRL-DP). A central fit (no
        ``silos``) ignores the federated-only parameters, with a
        ``UserWarning`` naming those set away from their defaults.
    silo_delta : float or dict, default=None
        Federated mode only: delta of every silo (or dict per silo), each
        below ``1 / n_i``; None uses ``delta``.
    server_weights : {"uniform", "size"} or dict, default="uniform"
        Federated mode only: public weights of the silos' messages in the
        server's average: equal, proportional to the silo sizes (public
        metadata), or a dict from silo id to a positive weight.
    execution : {"local", "dask"}, default="local"
        Federated mode only: run the silos in this process, or as actors on
        the workers of the current ``dask.distributed`` client.
    secure_aggregation : bool, default=False
        Federated mode only: also report ``central_epsilon_``, the guarantee
        that holds *if* the server only sees the weighted sum of the silos'
        messages (conditional; ``epsilon_`` stays the ISRL-DP one).
    silo_algorithm : {"mb-sgd", "spider"}, default="mb-sgd"
        Federated mode only: "mb-sgd" is noisy ISRL-DP minibatch SGD; "spider"
        is ISRL-DP FedProx-SPIDER (Lowy's thesis, Alg. 4, without a prox
        term): every ``spider_period``-th round each silo sends its noisy
        clipped mean gradient, the rounds between send the noisy mean of its
        records' gradient *changes* since the previous round, and the server
        steps along the running sum (a variance-reduced gradient estimate).
        Not with ``secure_aggregation``.
    spider_period : int, default=4
        Federated SPIDER only: phase length ``q`` (rounds between two full
        gradients; 1 is minibatch SGD's rounds).
    spider_smoothness : float, default=0.3
        Federated SPIDER only: public smoothness ``beta`` (``inf`` allowed).
        Each record's gradient change is clipped to ``min(beta ||w_r -
        w_{r-1}||, 2 clip_norm)`` and noised in proportion; a smaller ``beta``
        adds less noise and clips more. Public, never estimated from the
        data. The defaults ``(4, 0.3)`` did best on a validation split of
        scikit-learn's digits in 5 silos (``benchmarks/bench_neural.py
        --spider``), never on the data at hand.
    verbose : int, default=0
        With ``verbose > 0`` print one line per epoch (central fits): the
        norm of the released noisy update divided by the step size and the
        elapsed time; released quantities only, so free of privacy cost.

    Attributes
    ----------
    coefs_ : list of ndarray
        ``coefs_[l]`` of shape ``(n_{l}, n_{l+1})``: the weights of layer
        ``l + 1`` (scikit-learn's ``MLPClassifier`` layout).
    intercepts_ : list of ndarray
        ``intercepts_[l]`` of shape ``(n_{l+1},)``.
    classes_ : ndarray of shape (n_classes,)
        The label set (declared, or inferred with a warning).
    n_layers_ : int
        Number of layers, input and output included.
    n_outputs_ : int
        Output units: 1 for two classes, else the number of classes.
    out_activation_ : {"logistic", "softmax"}
        Output activation.
    n_iter_ : int
        Epochs (``max_iter``).
    t_ : int
        Number of noisy steps.
    epsilon_ : float
        Epsilon spent, computed by dp-accounting from ``dp_event_``.
    delta_ : float
        Delta of the guarantee.
    noise_multiplier_ : float
        Noise standard deviation in units of ``clip_norm``.
    dp_event_ : dp_accounting.DpEvent
        Description of the mechanism; ``epsilon_`` can be recomputed from it.
    adjacency_ : str
        ``"add_remove"``.
    privacy_record_ : PrivacyRecord
        All of the above, with sampling rate, steps and caveats.
    privacy_caveats_ : list of str
        What was read from the private data outside the guarantee.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during fit, when X has string column names.
    silos_ : list or None
        Silo ids of a federated fit, sorted; None for a central fit (as are
        the federated attributes below).
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
    shuffle_epsilon_, shuffle_privacy_record_ : None
        Always None: the shuffle model's amplified guarantee is
        :class:`~sklearn_dpfair.linear_model.DPLogisticRegression`'s
        (``shuffle=True``); the attributes keep the federated fits' records
        alike.

    See Also
    --------
    sklearn.neural_network.MLPClassifier : The non-private model.
    DPLogisticRegression : The private linear model.

    Notes
    -----
    Every step ``t = 1..T`` samples a Poisson batch (each row with
    probability ``q``), computes each example's full gradient norm as
    ``sqrt(sum_l (||a_{l-1}||^2 + 1) ||delta_l||^2)`` from the layers'
    inputs ``a`` and backpropagated errors ``delta`` (Goodfellow, 2015), and
    releases ``sum_i c_i a~_{l-1,i} delta_{l,i}^T + N(0, sigma^2 C^2 I)`` with
    ``c_i = min(1, C / ||g_i||)``, divided by the expected batch size ``q n``
    (Abadi et al., 2016). A public sample weight multiplies each example's
    loss derivative before clipping, so a record moves a sum by at most
    ``clip_norm`` whatever its weight. The returned parameters are the
    average of the last half of the iterates (post-processing).

    Whatever one record holds (features of ``1e300``, say), its clipped
    gradient is finite with norm at most ``clip_norm``: pre-activations that
    overflow are recomputed and saturated, the norms are overflow- and
    underflow-safe (the privacy core's), and a record whose gradient norm is
    not finite contributes 0. Predictions are finite for any finite
    input.

    The initialization (Glorot uniform, as scikit-learn's) and the step
    size are public choices that read the layer widths, ``n`` and the
    budget only.

    With ``fit(X, y, silos=...)`` the network is trained across silos with
    inter-silo record-level DP (Noisy ISRL-DP minibatch SGD, Lowy's thesis,
    Alg. 14, the phase-length-1 case of its non-convex ISRL-DP
    FedProx-SPIDER, Sec. 3.3): every round each silo clips its records'
    full gradients as above, adds its own noise (its own accountant,
    Poisson rate ``q`` and ``ceil(max_iter / q)`` rounds, as the central
    schedule on the pooled ``n``) and sends the noisy mean; the untrusted
    server averages the messages with public weights and steps from the
    same initialization a central fit would use. ``epsilon_``/``delta_``
    then hold for a record of any silo (the worst silo at the largest
    delta); :meth:`privacy_plan` plans it with ``n_silos=``. With
    ``silo_algorithm="spider"`` the rounds are ISRL-DP FedProx-SPIDER's
    (Lowy's thesis, Alg. 4): anchor rounds as above (noise multiplier
    ``z1``) and difference rounds, each record's
    ``clip_C(g(w_r)) - clip_C(g(w_{r-1}))`` clipped to ``c_r = min(beta
    ||w_r - w_{r-1}||, 2C)`` (public: the models are broadcast) with noise
    std ``z2 c_r``, ``z2 = sqrt(spider_period) z1`` (the thesis's
    ``sqrt(q)``, its ``q`` the phase length, not the Poisson rate); each
    silo's event composes both kinds (dp-accounting) and
    ``noise_multiplier_`` is ``z1``.

    References
    ----------
    .. [1] Abadi et al., "Deep Learning with Differential Privacy", CCS 2016.
    .. [2] I. Goodfellow, "Efficient Per-Example Gradient Computations",
       arXiv:1510.01799, 2015.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from sklearn_dpfair.neural import DPMLPClassifier
    >>> X, y = make_moons(n_samples=2000, noise=0.2, random_state=0)
    >>> clf = DPMLPClassifier(epsilon=3.0, classes=[0, 1], random_state=0)
    >>> clf = clf.fit(X, y)
    >>> clf.epsilon_ <= 3.0
    True
    >>> clf.score(X, y) > 0.8
    True
    """

    _parameter_constraints = {
        **PRIVACY_PARAMETER_CONSTRAINTS,
        "hidden_layer_sizes": [
            "array-like",
            Interval(Integral, 1, None, closed="left"),
        ],
        "activation": [StrOptions(set(ACTIVATIONS))],
        "clip_norm": [CLIP_NORM_CONSTRAINT],
        "noise_multiplier": [Interval(Real, 0, None, closed="left"), None],
        "batch_size": [
            Interval(Integral, 1, None, closed="left"),
            StrOptions({"auto", "full"}),
        ],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [
            Interval(Real, 0, None, closed="neither"),
            StrOptions({"auto"}),
        ],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "classes": ["array-like", None],
        "device": [StrOptions(set(DEVICE_OPTIONS))],
        "feature_scaling": [StrOptions({"auto"}), None],
        "feature_bounds": ["array-like", None],
        "silo_epsilon": [*EPSILON_CONSTRAINT, Mapping, None],
        "silo_delta": [*DELTA_CONSTRAINT, Mapping, None],
        "server_weights": [StrOptions({"uniform", "size"}), Mapping],
        "execution": [StrOptions({"local", "dask"})],
        "secure_aggregation": ["boolean"],
        "silo_algorithm": [StrOptions({"mb-sgd", "spider"})],
        "spider_period": [Interval(Integral, 1, None, closed="left")],
        "spider_smoothness": [
            Interval(Real, 0, None, closed="neither"),
            Options(Real, {math.inf}),
        ],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        hidden_layer_sizes=(64,),
        activation="relu",
        *,
        epsilon=1.0,
        delta=1e-5,
        clip_norm=1.0,
        noise_multiplier=None,
        batch_size="auto",
        max_iter=30,
        learning_rate="auto",
        alpha=1e-4,
        classes=None,
        accountant="rdp",
        random_state=None,
        device="cpu",
        feature_scaling=None,
        feature_bounds=None,
        silo_epsilon=None,
        silo_delta=None,
        server_weights="uniform",
        execution="local",
        secure_aggregation=False,
        silo_algorithm="mb-sgd",
        spider_period=4,
        spider_smoothness=0.3,
        verbose=0,
    ):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.epsilon = epsilon
        self.delta = delta
        self.clip_norm = clip_norm
        self.noise_multiplier = noise_multiplier
        self.batch_size = batch_size
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.alpha = alpha
        self.classes = classes
        self.accountant = accountant
        self.random_state = random_state
        self.device = device
        self.feature_scaling = feature_scaling
        self.feature_bounds = feature_bounds
        self.silo_epsilon = silo_epsilon
        self.silo_delta = silo_delta
        self.server_weights = server_weights
        self.execution = execution
        self.secure_aggregation = secure_aggregation
        self.silo_algorithm = silo_algorithm
        self.spider_period = spider_period
        self.spider_smoothness = spider_smoothness
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None, *, silos=None):
        """Fit the network with differential privacy.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data (raw columns are fine for privacy: the gradients
            are clipped, not the features).
        y : array-like of shape (n_samples,)
            Target labels; must lie in ``classes`` when it is declared.
        sample_weight : array-like of shape (n_samples,), default=None
            Public non-negative weights, used as given in a private fit: each
            record's loss derivative is multiplied by its weight *before* its
            gradient is clipped, so one record moves a noisy sum by at most
            ``clip_norm`` whatever its weight. Rescaled to mean 1 at
            ``epsilon=inf``. Not with ``silos``.
        silos : array-like of shape (n_samples,), default=None
            Silo id of every row (public metadata). If given, the network is
            trained across silos with inter-silo record-level DP (see
            ``silo_epsilon``); route it with ``set_fit_request(silos=True)``.

        Returns
        -------
        self : DPMLPClassifier
            The fitted estimator.
        """
        refuse_dask_input(
            type(self).__name__, X=X, y=y, sample_weight=sample_weight, silos=silos
        )
        hidden = self._hidden_layer_sizes()
        # A count of steps no fit can run is refused before the data are read.
        params = self._params(hidden)
        check_sgd_steps(None, params.batch_size, params.epochs)
        if silos is not None and self.device == "cuda":
            raise ValueError("silos run on the CPU (numpy); use device='cpu'.")
        self._check_scaling(silos is not None)
        if silos is None and self.execution == "dask":
            raise ValueError(
                "execution='dask' runs the silos of a federated fit; pass silos=."
            )
        if silos is None:
            warn_unused_silo_options(self, _SILO_OPTIONS)
        elif self.silo_algorithm != "spider":
            warn_unused_params(
                self,
                _SPIDER_OPTIONS,
                used_by="silo_algorithm='spider'",
                ignored_by=f"silo_algorithm={self.silo_algorithm!r}",
            )
        # Silos train on the host (to_numpy below) whatever the backend,
        # which only places the fitted attributes: with "auto" where X lives.
        backend = resolve_backend(X, self.device, array_api_solver=True)
        # Detached before validation (see detached_input): no autograd graph
        # of the training rows, and no torch warning from validate_data's copy.
        X, y = detached_input(X), detached_input(y)
        X, y = validate_data(self, X, y, dtype=backend.input_float_dtypes, order="C")
        weights, classes, y_encoded, caveats = check_classifier_metadata(
            self, X, y, sample_weight, silos
        )
        loss = self._loss_for(classes)
        rng = check_noise_generator(self.random_state)
        federated = None
        if silos is not None:
            budget, options = self._budget(caveats), self._silo_options()
            params = self._params(hidden)
            # The rounds follow the central schedule on the pooled rows.
            check_sgd_steps(X.shape[0], params.batch_size, params.epochs)
            plan = check_silo_plan(self, X, params, budget, options, silos=silos)
            with charged_if_raised_after_releases(self, plan.record):
                federated, result = fit_network_silos(
                    to_numpy(X),
                    np.asarray(y_encoded, dtype=np.float64),
                    loss,
                    params,
                    budget,
                    options,
                    silos=silos,
                    rng=rng,
                    seeded=self.random_state is not None,
                    # Every silo maps its rows by the same public map.
                    scaling=public_feature_scaling(
                        public_scaling_plan(
                            self.feature_scaling,
                            self.feature_bounds,
                            X.shape[1],
                            where="silos=",
                        )
                    ),
                )
            # The silos train on the host; the fitted attributes follow the
            # input's namespace, as a central fit's do.
            result = dataclasses.replace(
                result,
                weights=[backend.to_output(backend.asarray(W)) for W in result.weights],
                biases=[backend.to_output(backend.asarray(b)) for b in result.biases],
            )
        else:
            # The plan of the fit, by the method privacy_plan() calls.
            setup = self._network_setup(
                *X.shape,
                loss.n_outputs,
                caveats=caveats,
                weighted=weights is not None,
            )
            # A ledger that cannot record the planned event refuses now,
            # before the first release, rather than after the whole fit.
            self._check_ledger_accepts(setup.record.dp_event, setup.record.adjacency)
            warn_unscaled_columns(
                X, self, setup.budget.is_private, scaling=setup.scaling
            )
            result = fit_dp_network(
                X,
                y_encoded,
                loss,
                setup,
                self._params(hidden),
                rng=rng,
                backend=backend,
                sample_weight=weights,
                progress=progress_printer(self.verbose, type(self).__name__, "epoch"),
            )
        self.classes_ = classes
        self.coefs_ = result.weights
        self.intercepts_ = result.biases
        self.n_layers_ = len(hidden) + 2
        self.n_outputs_ = loss.n_outputs
        self.out_activation_ = "logistic" if loss.n_outputs == 1 else "softmax"
        self.n_iter_ = self.max_iter
        self.t_ = result.n_steps
        self._set_privacy_record(result.record)
        for name, value in silo_attributes(federated).items():
            setattr(self, name, value)
        return self

    _plan_public_counts = ("n_classes", "n_silos")

    def _planned_record(self, n_samples, n_features, n_classes=None, n_silos=None):
        """The record a fit on ``n_samples`` rows will set, from public inputs.

        Built by the set-up :meth:`fit` accounts with; read through
        :meth:`privacy_plan`. ``n_classes`` (public) is the size of the label
        set: that of ``classes`` when it is declared, else 2 unless given.
        ``n_silos`` plans a federated fit (``fit(..., silos=...)``) on that
        many silos, by the federated fit's own accounting; it needs one
        ``silo_epsilon`` and ``silo_delta`` for every silo. The event depends
        on the schedule and the budget only, not on the architecture, the
        number of features or the number of classes.
        """
        n_classes = planned_class_count(self.classes, n_classes)
        self._check_scaling(n_silos is not None)
        if n_silos is not None:
            params = self._params(self._hidden_layer_sizes())
            check_sgd_steps(n_samples, params.batch_size, params.epochs)
            return plan_silos(
                n_samples,
                params,
                self._budget(()),
                self._silo_options(),
                n_silos=n_silos,
                # The public map the fit's silos apply (its record names it).
                scaling=public_feature_scaling(
                    public_scaling_plan(
                        self.feature_scaling,
                        self.feature_bounds,
                        n_features,
                        where="silos=",
                    )
                ),
            )
        return self._network_setup(
            n_samples, n_features, self._loss_for(np.arange(n_classes)).n_outputs
        ).record

    def _network_setup(
        self, n_samples, n_features, n_outputs, *, caveats=(), weighted=False
    ):
        """The plan of a central fit, from public inputs (for fit and the plan).

        Whether public weights were passed and the label set's caveats only
        change the record's caveats, never its event.
        """
        budget = self._budget(caveats)
        return network_setup(
            n_samples,
            n_features,
            n_outputs,
            self._params(self._hidden_layer_sizes()),
            budget,
            weighted=weighted,
            prior=self._scaling_plan(n_features, budget, n_samples),
        )

    def _check_scaling(self, federated):
        """Private column scales are drawn by central fits only; silos take bounds."""
        require_public_bounds(
            self.feature_scaling, self.feature_bounds, "silos=" if federated else None
        )

    def _scaling_plan(self, n_features, budget, n_samples=None):
        """How the central fit scales its columns (public inputs only)."""
        return plan_feature_scaling(
            self.feature_scaling,
            self.feature_bounds,
            n_features,
            budget,
            n_samples=n_samples,
        )

    def _hidden_layer_sizes(self):
        """``hidden_layer_sizes`` as a tuple of positive ints (``()``: linear)."""
        return check_hidden_layer_sizes(self.hidden_layer_sizes)

    def _planned_silo_fit(self, n_samples, silos, sample_weight=None):
        """The plan of ``fit(X, y, silos=silos)``, from public inputs only.

        Raises what that fit raises for the silos (a silo too small for the
        sampling rate or too large for its delta, ``sample_weight`` with
        silos, a schedule of no step) before any row is read: a private
        pipeline asks it before its earlier steps release.
        """
        refuse_weights_with_silos(sample_weight, silos)
        params = self._params(self._hidden_layer_sizes())
        check_sgd_steps(n_samples, params.batch_size, params.epochs)
        return plan_fit_silos(
            n_samples, params, self._budget(()), self._silo_options(), silos=silos
        )

    def _params(self, hidden):
        return MLPParams(
            hidden_layer_sizes=hidden,
            activation=self.activation,
            clip_norm=self.clip_norm,
            batch_size=self.batch_size,
            epochs=self.max_iter,
            learning_rate=self.learning_rate,
            alpha=self.alpha,
        )

    def _silo_options(self):
        return SiloOptions(
            silo_epsilon=self.silo_epsilon,
            silo_delta=self.silo_delta,
            server_weights=self.server_weights,
            execution=self.execution,
            secure_aggregation=self.secure_aggregation,
            spider=(
                SpiderSchedule(self.spider_period, float(self.spider_smoothness))
                if self.silo_algorithm == "spider"
                else None
            ),
        )

    def _budget(self, caveats):
        return PrivacyBudget(
            self.epsilon,
            self.delta,
            self._accountant_kind(),
            self.noise_multiplier,
            tuple(caveats),
        )

    @staticmethod
    def _loss_for(classes):
        return BinaryLogisticLoss() if classes.size == 2 else SoftmaxLoss(classes.size)

    def _raw(self, X):
        check_is_fitted(self)
        # Scores of input that requires grad carry no autograd graph.
        X = detached_input(X)
        X = validate_data(self, X, reset=False, dtype=input_float_dtypes(X))
        return network_scores(X, self.coefs_, self.intercepts_, self.activation)

    def _loss_for_prediction(self):
        return self._loss_for(self.classes_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # The default budget cannot always reach the accuracy thresholds of
        # scikit-learn's common checks on their tiny datasets.
        tags.classifier_tags.poor_score = True
        return tags
