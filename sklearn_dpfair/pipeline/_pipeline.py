# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""A pipeline whose private steps share one (epsilon, delta), planned before the fit."""

import contextlib
import math
import sys
from dataclasses import dataclass, replace

import dp_accounting
import numpy as np
from sklearn.base import clone, is_classifier, is_regressor
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import FeatureUnion, Pipeline, _name_estimators
from sklearn.utils import Bunch, get_tags
from sklearn.utils._metadata_requests import (
    MetadataRouter,
    MethodMapping,
    _routing_enabled,
    process_routing,
)
from sklearn.utils._set_output import _safe_set_output
from sklearn.utils.metaestimators import _BaseComposition, available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    check_array,
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
)

from .._base import (
    PRIVACY_PARAMETER_CONSTRAINTS,
    PrivateEstimatorMixin,
    charged_if_raised_after_releases,
)
from .._solvers._feature_scaling import UNSCALED_COLUMNS_WARNING
from ..exceptions import PrivacyAccountingError, PrivacyBudgetError
from ..fairness._sensitive import encode_sensitive_features
from ..federated._silos import split_by_silo
from ..linear_model._semi_dp import check_public_mask
from ..privacy._ledger import PrivacyLedger
from ..privacy._plan import PrivacyPlan, check_public_count, check_public_layout
from ..privacy._random import check_noise_generator, noise_seed, step_seeds
from ..privacy._record import PrivacyRecord
from ..privacy._releases import log_release, logged_releases, mark_unchecked
from ..utils._array_api import _is_array_api_array, to_numpy
from ..utils._dask import refuse_dask_input
from ..utils._validation import (
    _ONE_CLASS,
    assert_all_finite,
    check_declared_groups,
    check_delta_for_n,
    check_fit_keywords,
    check_public_targets,
    check_public_weights,
    check_sample_aligned,
    is_sparse_frame,
    is_sparse_layout,
    suppressed_warnings,
    warn_at_caller,
)
from ._bounds import (
    declared_output_bound,
    declares_output_bound,
    flowing_bound,
    last_step,
)
from ._budget_split import (
    calibrate_scale,
    compose_plans,
    releases_noise,
    replace_one_release,
    resolve_shares,
)
from ._input_checks import check_raw_input
from ._steps import (
    composite_paths,
    fitted_part,
    is_passthrough,
    pin_selections,
    walk_steps,
)

__all__ = ["PrivatePipeline", "make_private_pipeline"]

# Two widths (and two bounds) at which a part whose input is only known after
# an upstream fit is planned: equal events mean the plan does not read it.
_PROBE_WIDTHS = (1, 7)
_PROBE_BOUNDS = (1.0, 10.0)
#: What a part's plan records as its width when no public input fixes it (an
#: earlier step's private release, a selection the schema does not resolve).
_WIDTH_UNKNOWN = "unknown before the fit"

#: The warning of a step whose delta (its share) is not below 1/n: the
#: pipeline warns once, with its own delta (check_delta_for_n's text).
_STEP_DELTA_WARNING = r"delta=\S+ is not smaller than 1/n_samples"

#: The public counts of the final estimator's plan that the pipeline counts
#: from the fit's metadata (:meth:`PrivatePipeline._final_counts`), as the
#: estimator's fit counts them. A final step whose plan takes another is
#: refused before any row is read.
_SUPPLIED_COUNTS = ("n_public", "n_classes", "n_groups", "n_silos")

# The values of small_budget whose plan reads no width, in order of
# preference: "choose" keeps DP-FERMI's private choice against the constants;
# the other estimators take "fit" only.
_SMALL_BUDGET_FALLBACKS = ("choose", "fit")

# Public parameters whose value makes a step's plan read its number of input
# columns: (parameter, the value that reads it, values that may not, in order
# of preference, what to tell the user given the first that does not). A
# step's width error names those whose change alone makes its plan width-free.
_WIDTH_READERS = (
    (
        "feature_scaling",
        "auto",
        (None,),
        "feature_scaling='auto' without feature_bounds splits its budget "
        "into private quantiles of every column: give feature_bounds, or "
        "scale the columns upstream (DPStandardScaler) and set "
        "feature_scaling=None",
    ),
    (
        "feature_bounds",
        "auto",
        (None,),
        "feature_bounds='auto' spends part of its budget on a private location "
        "and scale of every column: scale the columns upstream "
        "(DPStandardScaler) and set feature_bounds=None",
    ),
    (
        "small_budget",
        "auto",
        _SMALL_BUDGET_FALLBACKS,
        "small_budget='auto' compares n_samples * epsilon with the model's "
        "number of parameters to choose the intercept-only model: set "
        "small_budget={value!r} (or raise epsilon)",
    ),
    (
        "fw_steps",
        None,
        (100,),
        "fw_steps=None sets the number of Frank-Wolfe steps from the number "
        "of vertices (2 per column and class): set fw_steps",
    ),
)


@dataclass
class _Layout:
    """The budgeted plan of one fit: per-part budgets, plans and the composition."""

    plan: PrivacyPlan
    budgets: dict
    params: dict
    flowing: tuple | None
    scale: float
    final_sparse: bool | None = None
    #: Whether the final step (a private part) was planned at a probe width:
    #: its number of input columns is known only after an earlier step's fit.
    final_width_probed: bool = False


def _cloned(steps):
    """A scikit-learn Pipeline of clones of ``steps`` (strings and None kept)."""
    return Pipeline(
        [
            (name, est if isinstance(est, str) or est is None else clone(est))
            for name, est in steps
        ]
    )


def _shape_and_layout(X):
    """Rows, columns and whether ``X`` is sparse; the steps validate its columns.

    A DataFrame is not converted: a frame that mixes nullable (``Int64``,
    ``boolean``) and categorical columns of strings cannot be cast to one
    array, and its steps each read their own columns. One of sparse columns
    only is the sparse matrix the steps' validation makes of it.
    """
    if hasattr(X, "columns") and not is_sparse_frame(X):
        n_samples, n_features = X.shape
        if n_samples < 1 or n_features < 1:
            raise ValueError(
                f"X has shape {X.shape}: a private pipeline needs at least one "
                "row and one column."
            )
        return n_samples, n_features, False
    # Shape and emptiness only.
    checked = check_array(
        X,
        accept_sparse=True,
        dtype=None,
        ensure_all_finite=False,
        ensure_min_samples=1,
        ensure_min_features=1,
    )
    return *checked.shape, is_sparse_layout(checked)


def _no_output_bound(final_name, final, param):
    """The refusal of a final step that takes its ``param`` from no bound."""
    return (
        f"The final step {final_name!r} ({type(final).__name__}) has "
        f"{param}=None and the step before it declares no output bound (only "
        "the private transformers, OneHotEncoder, and Pipelines, "
        "PrivatePipelines, ColumnTransformers and FeatureUnions of these do); "
        f"set {param} on the final step."
    )


def _check_final_target(final, X, y):
    """Refuse ``y`` where the supervised ``final`` step's validation would.

    As scikit-learn's ``validate_data(X, y)`` in the final step's fit, with
    its messages: ``y`` given, one value per row of ``X``, 1-D (a column
    vector is left to the step, which ravels it with a warning), finite;
    then the step's own check of its targets (:func:`check_public_targets`:
    a label outside its declared ``classes``, a regressor's target that is
    not a number; without declared ``classes``, labels that are not classes
    and a single label). ``X`` is only counted: its rows are the earlier
    steps'.
    """
    if y is None:
        raise ValueError(
            f"This {type(final).__name__} estimator requires y to be passed, "
            "but the target y is None."
        )
    check_consistent_length(X, y)
    if _is_array_api_array(y):
        # Labels are public metadata checked on the host, as the steps do.
        y = to_numpy(y)
    y = check_array(
        y,
        ensure_2d=False,
        dtype=None,
        ensure_all_finite=False,
        ensure_min_samples=0,
        input_name="y",
    )
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    y = column_or_1d(y)
    assert_all_finite(y, input_name="y")
    if is_classifier(final):
        classes = getattr(final, "classes", None)
        if classes is not None:
            check_public_targets(y, "classification", [classes])
        elif "classes" in final.get_params(deep=False):
            # An undeclared label set is read by the step itself, which
            # warns once (not here): its refusals are checked without it,
            # in its order (resolve_classification_targets): the kind of
            # target (scikit-learn's check), then at least two labels.
            check_classification_targets(y)
            if np.unique(y).size < 2:
                raise ValueError(_ONE_CLASS)
    elif is_regressor(final):
        check_public_targets(y, "regression")


def _plans_as_planned(final, Xt, counts, planned):
    """Whether ``final``'s plan on ``Xt``'s shape and layout is ``planned``'s event.

    Both are public (``Xt`` is what the earlier steps released); a
    parameter value the step does not take, or a plan it cannot make
    there, is not.
    """
    try:
        plan = final.privacy_plan(*np.shape(Xt), sparse=is_sparse_layout(Xt), **counts)
    except (TypeError, ValueError):
        return False
    return plan.dp_event == planned.dp_event


def _empty_frame(X):
    """``X`` with no row, where it is a pandas or polars DataFrame, else None.

    A callable selection is called on what scikit-learn would call it on: a
    frame of ``X``'s own kind, with its columns and dtypes, and no row.
    polars is looked for only where it is already imported (``X`` could not
    be one otherwise).
    """
    import pandas as pd

    if isinstance(X, pd.DataFrame):
        return X.iloc[:0]
    polars = sys.modules.get("polars")
    if polars is not None and isinstance(X, polars.DataFrame):
        return X.head(0)
    return None


def _column_schema(columns):
    """The public schema a ``ColumnTransformer``'s selections are resolved by.

    A pandas or polars DataFrame gives its columns' names and dtypes (no row
    is read); a sequence of names, or another container with ``columns``,
    gives the names only, and a selection by dtype then stays unresolved
    (``"dtypes_known"``).
    """
    import pandas as pd

    if hasattr(columns, "columns"):
        frame = _empty_frame(columns)
        if frame is not None:
            return {"columns": list(columns.columns), "frame": frame}
    names = list(columns.columns if hasattr(columns, "columns") else columns)
    return {
        "columns": names,
        "frame": pd.DataFrame(columns=names),
        "dtypes_known": False,
    }


def _final_has(attr):
    def check(self):
        final = self.steps[-1][1]
        return hasattr(final, attr)

    return check


def _every_step_has(attr):
    # As scikit-learn's Pipeline offers inverse_transform: a passthrough step
    # (None or "passthrough") is skipped.
    def check(self):
        return all(
            is_passthrough(est) or hasattr(est, attr) for _, est in self.steps
        )

    return check


def _nested_parts(est, fitted=False):
    """The parts a composite hands its rows to, or None for a leaf.

    A ``Pipeline``'s steps, a ``ColumnTransformer``'s blocks and remainder,
    a ``FeatureUnion``'s parts (strings such as ``"passthrough"`` included).
    ``fitted``: a fitted ``ColumnTransformer``'s fitted clones
    (``transformers_``, the remainder among them) instead of its
    parameters; the other composites fit their parts in place.
    """
    if isinstance(est, (Pipeline, PrivatePipeline)):
        return [step for _, step in est.steps]
    if isinstance(est, ColumnTransformer):
        if fitted:
            return [block for _, block, _ in est.transformers_]
        return [block for _, block, _ in est.transformers] + [est.remainder]
    if isinstance(est, FeatureUnion):
        return [part for _, part in est.transformer_list]
    return None


def _routed_parts(est, params, path):
    """``(name, part, params)`` for each part of the composite ``est``.

    The fit parameters each part receives when ``est`` is fitted with
    ``params``, as it routes them: by ``step__param`` in a ``Pipeline``
    (every parameter to each part of a ``FeatureUnion``), and by the parts'
    requests under metadata routing. A parameter it would refuse is refused
    here, naming the step's ``path``.
    """
    if isinstance(est, PrivatePipeline):
        routed = est._route(params)
        return [(name, step, routed[name]) for name, step in est.steps]
    if _routing_enabled():
        if isinstance(est, ColumnTransformer):
            parts = [(name, sub) for name, sub, _ in est.transformers]
            parts.append(("remainder", est.remainder))
        elif isinstance(est, FeatureUnion):
            parts = list(est.transformer_list)
        else:
            parts = list(est.steps)
        # The composite is fitted by fit_transform; each part by its
        # fit_transform, or else fit.
        routed = process_routing(est, "fit_transform", **params)
        found = []
        for name, part in parts:
            if isinstance(part, str) or part is None:
                continue
            try:
                methods = routed[name]
            except (KeyError, AttributeError):
                continue
            method = "fit_transform" if hasattr(part, "fit_transform") else "fit"
            found.append((name, part, dict(methods.get(method, {}))))
        return found
    if isinstance(est, Pipeline):
        per_step = {name: {} for name, _ in est.steps}
        for key, value in params.items():
            step, sep, param = key.partition("__")
            if not sep or step not in per_step:
                raise ValueError(
                    f"{path}__{key}: the Pipeline {path!r} routes fit "
                    "parameters to its steps as stepname__parameter, and it "
                    f"has no step {step!r}; its steps are {list(per_step)}."
                )
            per_step[step][param] = value
        return [(name, step, per_step[name]) for name, step in est.steps]
    if isinstance(est, ColumnTransformer):
        raise ValueError(
            f"The ColumnTransformer {path!r} takes fit parameters only with "
            "metadata routing enabled (sklearn.set_config("
            "enable_metadata_routing=True)); got "
            f"{sorted(f'{path}__{key}' for key in params)}."
        )
    # A FeatureUnion hands every parameter to each of its parts.
    return [(name, part, dict(params)) for name, part in est.transformer_list]


def _check_nested_params(est, params, path, X):
    """Refuse what the parts of the composite step ``est`` would refuse.

    Each part's keywords (its ``fit``'s signature) and a private part's
    ``sample_weight`` (length, sign, finite, not all zero), at any depth,
    as the parts check them when their fit runs.
    """
    routing = _routing_enabled()
    for name, part, part_params in _routed_parts(est, params, path):
        if not part_params or is_passthrough(part) or isinstance(part, str):
            continue
        sub = f"{path}__{name}"
        if _nested_parts(part) is not None:
            _check_nested_params(part, part_params, sub, X)
            continue
        if not routing:
            check_fit_keywords(part, part_params)
        weights = part_params.get("sample_weight")
        if weights is not None and isinstance(part, PrivateEstimatorMixin):
            shown = "sample_weight" if routing else f"{sub}__sample_weight"
            check_public_weights(weights, X, name=shown)


def _imputes(est):
    """Whether ``est`` is, or nests at any depth, an imputer."""
    if "Imputer" in type(est).__name__:
        return True
    parts = _nested_parts(est)
    return parts is not None and any(_imputes(part) for part in parts)


def _takes_nan(est):
    """Whether ``est`` takes missing values, its nested parts looked into.

    A ``ColumnTransformer`` or ``FeatureUnion`` hands the values to its
    parts, a ``Pipeline`` to its first step: their own tags do not say.
    """
    if is_passthrough(est) or (isinstance(est, str) and est == "drop"):
        return True
    parts = _nested_parts(est)
    if parts is None:
        return get_tags(est).input_tags.allow_nan
    if isinstance(est, (Pipeline, PrivatePipeline)):
        steps = [step for step in parts if not is_passthrough(step)]
        return _takes_nan(steps[0]) if steps else True
    return all(_takes_nan(part) for part in parts)


class PrivatePipeline(PrivateEstimatorMixin, _BaseComposition):
    """A pipeline whose private steps share one (epsilon, delta) budget.

    Before any row is read (from ``n_samples`` and the columns only), the
    budget is split over the private steps: each gets ``delta`` times its
    share, and ``epsilon`` times its share times a common scale, the
    largest for which the sequential composition of every step's planned
    ``DpEvent``, interpreted by one accountant, spends at most
    ``epsilon`` (composition, not the sum of the steps' epsilons, so the
    scale is usually above 1). The fit then runs on clones of the steps
    with these budgets, checks that each step released exactly what it
    planned (``PrivacyPlan.check_fitted``) and that the releases of the
    whole fit are those of the composed event ``dp_event_``.

    Steps whose fit reads no row are free: ``"passthrough"``, a
    ``FunctionTransformer``, ``OneHotEncoder`` / ``OrdinalEncoder`` with
    declared categories, ``SplineTransformer`` with declared knots,
    ``PolynomialFeatures``, and ``Pipeline`` / ``ColumnTransformer`` /
    ``FeatureUnion`` of free and private steps (the private transformers of
    a ``ColumnTransformer`` or a ``FeatureUnion`` read the same rows, so
    they compose sequentially, each with its own share). The fit's clones
    are made independent of the rows where scikit-learn would read them: a
    ``ColumnTransformer`` stacks its blocks densely (``sparse_threshold=0``:
    scikit-learn would stack sparse blocks sparsely when the rows' density
    is below the threshold), and a callable column selection is called on
    the input's public schema (an empty frame with its columns and dtypes),
    never on the rows, its result taking its place (without a schema, as
    for numpy input or a ``ColumnTransformer`` after another step, such a
    callable is refused; a ``make_column_selector`` or a list of columns is
    not). A step that learns
    from the rows without a plan (``StandardScaler``, ``PCA``, a
    ``OneHotEncoder`` with ``categories="auto"``, ...) is refused, naming
    its private replacement.

    Read more in the :ref:`User Guide <pipeline>`.

    Parameters
    ----------
    steps : list of (str, estimator)
        As in :class:`sklearn.pipeline.Pipeline`; the last one is the final
        estimator, which is planned and checked as a step of this pipeline:
        not a ``Pipeline`` or a ``PrivatePipeline`` (flatten it:
        ``[..., *inner.steps]``), nor a
        :class:`~sklearn_dpfair.model_selection.PrivateHyperparameterSearch`,
        whose fit draws the size it trains on (search over the private
        pipeline instead). The objects are never modified: the fit uses
        clones.
    epsilon : float, default=1.0
        Total epsilon of the whole fit (``np.inf``: every step non-private).
    delta : float, default=1e-5
        Total delta, the steps' additional deltas (the threshold of a
        private category discovery) included.
    budget_shares : dict or None, default=None
        ``{step name or path: share}`` (a path such as
        ``"columns__num"`` addresses a block of a ``ColumnTransformer``; a
        step's share is split evenly among its private blocks); normalized
        to sum to 1, every private step must have one. A share of a
        private part that spends nothing at any budget (a
        ``DPOneHotEncoder`` with declared categories) is accepted and
        unused: the other shares are normalized without it. None: the final
        estimator gets 85% when private preprocessing precedes it, the
        preprocessing steps share the rest evenly.
    accountant : {"rdp", "pld"} or PrivacyLedger, default="rdp"
        The accountant that calibrates every step and interprets the
        composition (``"rdp"`` interprets every event kind of the package;
        ``"pld"`` cannot interpret private quantiles). A ledger records the
        composed fit once.
    random_state : None, int, RandomState or Generator, default=None
        None: every step draws its noise as its own ``random_state`` says
        (OS entropy at their defaults: a release). Anything else is a seed
        from which a seed for each private step is drawn: the fit is then
        seeded, not a private release.

    Attributes
    ----------
    pipeline_ : sklearn.pipeline.Pipeline
        The fitted clones of the steps, with their budgets.
    step_budgets_ : dict
        Per private step (by path): its ``share``, ``epsilon``, ``delta``
        and ``plan`` (its :class:`~sklearn_dpfair.privacy.PrivacyPlan`).
        A federated final step's own ``silo_epsilon`` (``silo_delta``)
        replaces its share: its ``epsilon`` (``delta``) is what its plan
        spends, its ``share`` None where ``silo_epsilon`` is set, and the
        step keeps its own ``epsilon`` (``delta``) parameter.
    epsilon_, delta_, dp_event_, adjacency_, privacy_record_
        The guarantee of the whole fit: ``dp_event_`` is the composition of
        the steps' events, ``epsilon_`` what the accountant gives for it at
        ``delta_`` (the total delta less the steps' additional deltas).
    noise_multiplier_ : None
        No single multiplier describes the steps' releases; each private
        step's fitted clone in ``pipeline_`` has its own.
    privacy_caveats_ : list of str
        What the steps read from the private data outside the guarantee:
        the caveats of the steps' fits, each listed once.
    additional_delta_ : float
        Delta spent outside ``dp_event_``; the fit is
        ``(epsilon_, delta_ + additional_delta_)``-DP.
    budget_scale_ : float
        The common scale of the steps' epsilons.
    classes_ : ndarray
        The final estimator's classes (classifiers).
    n_features_in_ : int
    feature_names_in_ : ndarray

    See Also
    --------
    make_private_pipeline : Build one, naming the steps after their classes.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.linear_model import DPLogisticRegression
    >>> from sklearn_dpfair.pipeline import make_private_pipeline
    >>> from sklearn_dpfair.preprocessing import DPStandardScaler
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 3)) * [1, 10, 100] + [500, 0, 0]
    >>> y = (X[:, 0] > 500).astype(int)
    >>> pipe = make_private_pipeline(
    ...     DPStandardScaler(bounds=[(490, 510), (-40, 40), (-400, 400)]),
    ...     DPLogisticRegression(classes=[0, 1]),
    ...     epsilon=1.0, delta=1e-5).fit(X, y)
    >>> pipe.epsilon_ <= 1.0
    True
    >>> sorted(pipe.step_budgets_)
    ['dplogisticregression', 'dpstandardscaler']
    """

    _parameter_constraints = {
        "steps": [list],
        "epsilon": PRIVACY_PARAMETER_CONSTRAINTS["epsilon"],
        "delta": PRIVACY_PARAMETER_CONSTRAINTS["delta"],
        "budget_shares": [dict, None],
        "accountant": PRIVACY_PARAMETER_CONSTRAINTS["accountant"],
        "random_state": PRIVACY_PARAMETER_CONSTRAINTS["random_state"],
    }

    def __init__(
        self,
        steps,
        *,
        epsilon=1.0,
        delta=1e-5,
        budget_shares=None,
        accountant="rdp",
        random_state=None,
    ):
        self.steps = steps
        self.epsilon = epsilon
        self.delta = delta
        self.budget_shares = budget_shares
        self.accountant = accountant
        self.random_state = random_state

    # -- parameters, as sklearn's Pipeline ---------------------------------

    def get_params(self, deep=True):
        """Parameters of the pipeline and, with ``deep``, of its steps (``step__param``).

        Parameters
        ----------
        deep : bool, default=True
            Also return the parameters of the steps.

        Returns
        -------
        params : dict
            Parameter names mapped to their values.
        """
        return self._get_params("steps", deep=deep)

    def set_params(self, **params):
        """Set parameters, those of the steps addressed as ``step__param``.

        Parameters
        ----------
        **params : dict
            Parameters of the pipeline, or of a step as ``step__param``.

        Returns
        -------
        self : PrivatePipeline
            This pipeline.
        """
        self._set_params("steps", **params)
        return self

    @property
    def named_steps(self):
        """The steps (as given, unfitted) by name."""
        return Bunch(**dict(self.steps))

    def __len__(self):
        """The number of steps."""
        return len(self.steps)

    def __getitem__(self, ind):
        """A fitted step, or a fitted sub-pipeline for a slice.

        As ``Pipeline`` indexing, but over the fitted clones (``pipeline_``):
        the fit never touches the steps as given, which ``steps`` and
        ``named_steps`` return. ``pipe[-1].coef_`` is the final estimator's,
        ``pipe[:-1].transform(X)`` runs the fitted preprocessing (a
        scikit-learn ``Pipeline``, outside the private pipeline's record).

        Parameters
        ----------
        ind : int, str or slice
            Position, name or slice of steps.

        Returns
        -------
        step : estimator or sklearn.pipeline.Pipeline
            The fitted step, or a ``Pipeline`` of the fitted steps.
        """
        check_is_fitted(
            self,
            msg=(
                "Indexing a PrivatePipeline returns its fitted steps; call fit "
                "first (the steps as given are in steps and named_steps)."
            ),
        )
        return self.pipeline_[ind]

    def set_output(self, *, transform=None):
        """Set the output container of every step's ``transform``.

        As ``Pipeline.set_output``: it configures the steps as given (the
        fit's clones keep their configuration) and, once fitted, the fitted
        steps (``pipe[:-1].transform`` returns the container set after the
        fit, as with a scikit-learn ``Pipeline``, whose fitted steps are the
        steps as given).

        Parameters
        ----------
        transform : {"default", "pandas", "polars"} or None, default=None
            Output container of ``transform``; None leaves it unchanged.

        Returns
        -------
        self : PrivatePipeline
            This pipeline.
        """
        for _, step in self.steps:
            if not is_passthrough(step):
                _safe_set_output(step, transform=transform)
        if hasattr(self, "pipeline_"):
            self.pipeline_.set_output(transform=transform)
        return self

    def _check_steps(self):
        names, estimators = zip(*self.steps) if self.steps else ((), ())
        if not self.steps:
            raise ValueError("steps must hold at least one (name, estimator) pair.")
        self._validate_names(names)
        for name, est in self.steps[:-1]:
            if is_passthrough(est):
                continue
            if not (hasattr(est, "fit") and hasattr(est, "transform")):
                raise TypeError(
                    f"Step {name!r} ({type(est).__name__}) is not a transformer "
                    "(fit and transform): every step but the last must be one."
                )
        final = estimators[-1]
        if is_passthrough(final) or not hasattr(final, "fit"):
            raise TypeError(
                f"The last step {names[-1]!r} must be an estimator with fit; got "
                f"{final!r}."
            )
        if isinstance(final, (Pipeline, PrivatePipeline)):
            # The final step is re-planned on the width the earlier steps
            # released, takes their output bound and the public counts of
            # the fit's metadata: all of it acts on the final estimator
            # itself, which a nested pipeline hides (a private one too: its
            # plan would be made without them, and its fit would count them).
            kind = type(final).__name__
            raise ValueError(
                f"The last step {names[-1]!r} is a {kind}: a private pipeline "
                "checks and plans its final estimator itself, which a nested "
                "pipeline hides. Flatten it: PrivatePipeline([..., "
                f"*{names[-1]}.steps]) (a {kind} is allowed as any earlier step)."
            )
        unsupplied = [
            count
            for count in getattr(final, "_plan_public_counts", ())
            if count not in _SUPPLIED_COUNTS
        ]
        if unsupplied:
            # A count the final step's own fit draws (a search's training
            # size, drawn from its own generator before it reads a row) is
            # not known when the pipeline plans: the step would be planned
            # at a default and record another event, after every release.
            raise ValueError(
                f"The last step {names[-1]!r} ({type(final).__name__}) is "
                f"planned from {', '.join(unsupplied)}, which its own fit "
                "draws at random (a search's training part size): the "
                "pipeline does not know it when it plans, and the events of "
                "some candidates (DP-SGD's sampling rate) depend on it. "
                "Search over the "
                "private pipeline instead: PrivateHyperparameterSearch("
                "PrivatePipeline([..., ('model', estimator)]), "
                "{'model__param': [...]}), whose runs each fit the whole "
                "pipeline, its preprocessing included."
            )

    # -- the plan ------------------------------------------------------------

    def _kind(self):
        return getattr(self.accountant, "kind", self.accountant)

    def _layout(
        self, n_samples, n_features, schema, final_counts, sparse=False, pins=None
    ):
        """Split the budget and plan every private part (public inputs only).

        ``sparse``: whether the input is a sparse matrix (public: the
        container's layout), which with the steps' public parameters fixes
        the layout each part receives. ``pins``: for a fit, a dict that
        receives the callable column selections resolved on the schema
        (:func:`walk_steps`).
        """
        units, _ = walk_steps(
            self.steps, n_features, names=schema, sparse=sparse, pins=pins
        )
        kind = self._kind()
        final_name = self.steps[-1][0]
        planners = {}
        flowing = None
        for unit in units:
            est = clone(unit.estimator)
            if not hasattr(est, "privacy_plan"):  # pragma: no cover - mixin has it
                raise ValueError(f"Step {unit.path!r} has no privacy_plan.")
            if "delta" not in est.get_params(deep=False):
                # A local-DP estimator (each record randomized before it
                # leaves its holder, pure epsilon) protects against the
                # server, a guarantee of another kind than the steps'
                # central (epsilon, delta): they do not share one budget.
                raise ValueError(
                    f"Step {unit.path!r} ({type(est).__name__}) is a local-DP "
                    "estimator with no delta: its guarantee is not a share of "
                    "the pipeline's central (epsilon, delta) budget. Fit it "
                    "outside a private pipeline, on features prepared from "
                    "public information."
                )
            counts = final_counts if unit.final else {}
            extra = {}
            if unit.final and len(self.steps) > 1:
                flowing = flowing_bound(est)
                if flowing is not None:
                    # Refused now where the step before it cannot declare
                    # the bound whatever its fit (a FunctionTransformer):
                    # the fit would fail only after its releases.
                    previous = last_step(self.steps[:-1])
                    if not declares_output_bound(
                        previous, *self._input_of(previous, n_features, schema)
                    ):
                        raise ValueError(
                            _no_output_bound(final_name, est, flowing[0])
                        )
                    extra = {flowing[0]: _PROBE_BOUNDS[0]}
            planners[unit.path] = _Planner(unit, est, n_samples, counts, kind, extra)
        # Parts that spend nothing at any budget (declared categories) are
        # planned at their own parameters and get no share.
        budgeted = [u for u in units if not planners[u.path].is_free(self.delta)]
        free = [u.path for u in units if u not in budgeted]
        shares = resolve_shares(budgeted, self.budget_shares, free)
        for unit in budgeted:
            planner = planners[unit.path]
            # At the share of epsilon the part will be planned with: at
            # epsilon=inf its event is non-private whatever the width,
            # layout or bound, as its fit's is (a rule of a finite budget,
            # such as small_budget's, does not apply there).
            probe = (self.epsilon * shares[unit.path], self.delta * shares[unit.path])
            if unit.n_features is None:
                planner.check_width_free(*probe)
            if unit.sparse is None:
                planner.check_layout_free(*probe)
            if unit.final and flowing is not None:
                planner.check_bound_free(flowing[0], *probe)
            _check_own_budget_fits(
                planner, self.epsilon, self.delta, probe[1], kind
            )
        scale, named, composed = calibrate_scale(
            lambda path, eps, delta: planners[path].plan(eps, delta),
            shares,
            self.epsilon,
            self.delta,
            kind,
        )
        plans = dict(named)
        budgets = {}
        params = {}
        seeds = (
            None
            if self.random_state is None
            else check_noise_generator(self.random_state)
        )
        if seeds is None:
            _check_distinct_step_seeds(budgeted)
        for unit in units:
            planner = planners[unit.path]
            if unit.path in shares:
                share = shares[unit.path]
                eps_i = scale * share * self.epsilon
                delta_i = share * self.delta
                plan = plans[unit.path]
                # A federated step's own silo_epsilon (silo_delta) is what
                # its fit spends, not its share: the step was planned at its
                # own parameters, which its fit keeps (a share set as its
                # epsilon would have no effect), and records what it spends.
                if "epsilon" in planner.fixed:
                    share, eps_i = None, plan.epsilon
                else:
                    params[f"{unit.path}__epsilon"] = eps_i
                if "delta" in planner.fixed:
                    delta_i = plan.delta
                else:
                    params[f"{unit.path}__delta"] = delta_i
            else:
                # A free part (declared categories) releases nothing: it
                # spends (0, 0) whatever its own epsilon and delta say.
                share, eps_i, delta_i = 0.0, 0.0, 0.0
                plan = planner.own_plan()
            own = unit.estimator.get_params(deep=False)
            if isinstance(own.get("accountant"), PrivacyLedger):
                # The step's fit is a part of the pipeline's release, which
                # the pipeline records once, as a whole.
                raise ValueError(
                    f"Step {unit.path!r} ({type(unit.estimator).__name__}) holds "
                    "a PrivacyLedger as its accountant; a private pipeline records "
                    "its whole fit once: pass the ledger to the pipeline "
                    "(make_private_pipeline(..., accountant=ledger)) and leave "
                    "the steps' accountant as 'rdp' or 'pld'."
                )
            if "accountant" in own:
                params[f"{unit.path}__accountant"] = kind
            if seeds is not None and "random_state" in own:
                params[f"{unit.path}__random_state"] = int(seeds.integers(0, 2**32))
            budgets[unit.path] = {
                "share": share,
                "epsilon": eps_i,
                "delta": delta_i,
                "plan": plan,
            }
        named_all = [(path, b["plan"]) for path, b in budgets.items()]
        event, adjacency, accounting_delta, additional, _ = composed
        if any(b["share"] == 0.0 for b in budgets.values()):
            # Free parts planned at their own parameters join the composition
            # (their events are no-ops, which the composition drops).
            event, adjacency, accounting_delta, additional, _ = compose_plans(
                named_all, self.delta, kind
            )
        if isinstance(self.accountant, PrivacyLedger) and additional > 0:
            raise ValueError(
                "accountant: a PrivacyLedger cannot hold the additional delta of a "
                "private category discovery; pass 'rdp' or 'pld', or declare the "
                "categories."
            )
        mechanism = _describe(budgets, adjacency, additional)
        plan = PrivacyPlan(
            estimator=type(self).__name__,
            dp_event=event,
            delta=accounting_delta,
            accountant=kind,
            adjacency=adjacency,
            mechanism=mechanism,
            public=(
                ("n_samples", n_samples),
                ("n_features", n_features),
                *((("sparse", True),) if sparse else ()),
                *sorted(final_counts.items()),
            ),
            steps=tuple(named_all),
            additional_delta=additional,
        )
        if plan.epsilon > self.epsilon * (1 + 1e-9):  # pragma: no cover - a bug
            raise PrivacyBudgetError(
                f"The pipeline's plan spends epsilon={plan.epsilon:.6g}, more than "
                f"{self.epsilon:g}; this is a bug, please report it."
            )
        # The layout the final step was planned with, where the final step
        # is itself a private part (not a nested pipeline) and it is known.
        final_sparse = next(
            (u.sparse for u in units if u.final and u.path == final_name), None
        )
        probed = any(
            u.final and u.path == final_name and u.n_features is None for u in units
        )
        layout = _Layout(plan, budgets, params, flowing, scale, final_sparse, probed)
        return layout, final_name

    def _input_of(self, step, n_features, schema):
        """The public width and schema of what the step ``step`` reads.

        The width is None where only an earlier fit tells it; the schema is
        the input's where only passthroughs precede the step.
        """
        found = [i for i, (_, est) in enumerate(self.steps) if est is step]
        if step is None or not found:
            return None, None
        before = self.steps[: found[-1]]
        _, width = walk_steps(before, n_features, names=schema, final=False)
        if not all(is_passthrough(est) for _, est in before):
            schema = None
        return width, schema

    def privacy_plan(
        self, n_samples, n_features, *, sparse=False, feature_names=None, **public_counts
    ):
        """The composed privacy event a fit on ``n_samples`` rows will record.

        Parameters
        ----------
        n_samples : int
            Number of training rows.
        n_features : int
            Number of input columns.
        sparse : bool, default=False
            Whether ``X`` will be a scipy sparse matrix, or a DataFrame
            whose columns are all pandas ``SparseDtype`` (which the steps'
            validation makes one): a public property of the container.
            With the steps' public parameters (``sparse_output``) it fixes
            the layout each private step receives, which some final steps' events
            depend on (see ``privacy_plan`` of the estimators). A
            ``ColumnTransformer``'s output is dense: the fit sets its
            ``sparse_threshold`` to 0, so that the rows' density does not
            decide it.
        feature_names : sequence of str, DataFrame or None, default=None
            Column names (one per input column, ``n_features`` of them),
            where a ``ColumnTransformer`` selects by name; a
            pandas or polars DataFrame gives its columns' names and dtypes
            (its rows are not read: ``X.iloc[:0]``, ``X.head(0)``), where it
            selects by dtype
            (``make_column_selector(dtype_include=...)``) or by a callable
            (called on that empty frame), which names alone leave
            unresolved.
        **public_counts : int
            Public counts of the final estimator (``n_classes``,
            ``n_groups``, ``n_public``, ``n_silos``), as :meth:`fit` counts
            them from its metadata.

        Returns
        -------
        plan : PrivacyPlan
            Its ``steps`` hold each private step's plan at its budget.

        Examples
        --------
        >>> from sklearn.preprocessing import OneHotEncoder
        >>> from sklearn_dpfair.linear_model import HeavyTailDPRegressor
        >>> from sklearn_dpfair.pipeline import make_private_pipeline
        >>> pipe = make_private_pipeline(
        ...     OneHotEncoder(categories=[[0, 1, 2]]), HeavyTailDPRegressor())
        >>> # The encoder outputs a sparse matrix (sparse_output=True): the
        >>> # regressor is planned as fitted on it, without private scales.
        >>> plan = pipe.privacy_plan(5000, 1)
        >>> plan.dp_event == HeavyTailDPRegressor().privacy_plan(
        ...     5000, 3, sparse=True).dp_event
        True
        """
        self._validate_params()
        self._check_steps()
        n_samples = check_public_count(n_samples, "n_samples")
        n_features = check_public_count(n_features, "n_features")
        sparse = check_public_layout(sparse)
        schema = None if feature_names is None else _column_schema(feature_names)
        if schema is not None and len(schema["columns"]) != n_features:
            # The plan would be made for one width and resolve the column
            # selections by names of another.
            raise ValueError(
                f"feature_names has {len(schema['columns'])} names but "
                f"n_features is {n_features}: give one name per input column."
            )
        layout, _ = self._layout(
            n_samples, n_features, schema, dict(public_counts), bool(sparse)
        )
        return layout.plan

    # -- fit -----------------------------------------------------------------

    def _route(self, params):
        names = [name for name, _ in self.steps]
        final = names[-1]
        if _routing_enabled():
            routed = process_routing(self, "fit", **params)
            # .get, not "in": without parameters scikit-learn returns an
            # object with __getitem__ but no __contains__, on which "in"
            # probes 0, 1, 2, ... and never ends.
            return {
                name: dict(step.fit) if (step := routed.get(name)) is not None else {}
                for name in names
            }
        routed = {name: {} for name in names}
        for key, value in params.items():
            step, sep, param = key.partition("__")
            if sep and step in routed:
                routed[step][param] = value
            else:
                # Plain keywords (sensitive_features, public_mask,
                # sample_weight) go to the final estimator.
                routed[final][key] = value
        return routed

    def _final_counts(self, y, final_params, n_samples):
        """Public counts the final estimator's plan takes, as its fit will see them.

        Each is counted by the function the estimator's fit counts it with,
        so that the plan is made at the count the fit records.
        """
        final = self.steps[-1][1]
        accepted = getattr(final, "_plan_public_counts", ())
        counts = {}
        mask = final_params.get("public_mask")
        if "n_public" in accepted and mask is not None:
            # The estimators' own validator refuses a mask that is not
            # boolean (strings, a nullable mask with missing values), which a
            # count of its nonzero entries would read as something else.
            counts["n_public"] = int(
                np.count_nonzero(check_public_mask(mask, n_samples, private=False))
            )
        # Undeclared label or group sets are read by the estimator itself,
        # which warns and records the caveat; its plan must count the same.
        if (
            "n_classes" in accepted
            and getattr(final, "classes", None) is None
            and y is not None
        ):
            counts["n_classes"] = max(len(np.unique(np.asarray(y))), 2)
        groups = final_params.get("sensitive_features")
        if "n_groups" in accepted and groups is None:
            # No sensitive features reach the estimator (none passed, or
            # not requested under metadata routing): it fits one group,
            # whatever groups it declares.
            counts["n_groups"] = 1
        elif "n_groups" in accepted and getattr(final, "groups", None) is None:
            # The estimator's own encoding: intersectional groups of several
            # columns (object or mixed dtypes alike), missing values in no
            # group.
            counts["n_groups"] = encode_sensitive_features(
                groups, n_samples=n_samples
            ).n_groups
        silos = final_params.get("silos")
        if "n_silos" in accepted and silos is not None:
            # Silo membership is public metadata; the federated fit splits
            # the rows by split_by_silo, which also validates the ids.
            counts["n_silos"] = len(split_by_silo(silos, n_samples)[0])
        return counts

    def _check_fit_metadata(self, X, y, routed, n_samples):
        """Refuse, before the first step reads a row, what a step's fit would refuse.

        Each step checks its own ``y`` and metadata when its fit runs: the
        final step's refusal of a misspelled keyword, a short
        ``sample_weight``, a label outside its declared classes or an
        undeclared group would otherwise come after the earlier steps'
        private releases, spent for a fit that fails. The keywords, the
        public shapes (one value per row) and the values the steps refuse
        are checked here on every row, by the steps' own checks and with
        their messages, as a private search checks its candidates' before
        its split (the shared checks of :mod:`sklearn_dpfair.utils._validation`);
        the parts of a composite step at any depth too. ``y`` is checked
        before (:func:`_check_final_target`), as its labels are counted.
        ``routed``: :meth:`_route`'s parameters of each step.
        """
        final_name, final = self.steps[-1]
        if not _routing_enabled():
            # Under metadata routing, process_routing has already refused a
            # parameter that no step requests.
            for name, est in self.steps:
                if routed[name] and not is_passthrough(est):
                    check_fit_keywords(est, routed[name])
        for name, est in self.steps:
            weights = routed[name].get("sample_weight")
            # A private step's own check of its public weights (length, sign,
            # finite, not all zero); a composite routes its parts' under
            # their own names.
            if weights is not None and isinstance(est, PrivateEstimatorMixin):
                shown = "sample_weight"
                if name != final_name and not _routing_enabled():
                    shown = f"{name}__sample_weight"
                check_public_weights(weights, X, name=shown)
        for name, est in self.steps:
            if routed[name] and _nested_parts(est) is not None:
                # The parts of a composite step check their own parameters
                # only when the composite fits them, after its earlier
                # parts' (and steps') releases.
                _check_nested_params(est, routed[name], name, X)
        final_params = routed[final_name]
        if final_params.get("sensitive_features") is not None:
            check_declared_groups(
                final_params["sensitive_features"],
                n_samples,
                [getattr(final, "groups", None)],
                f"the final step {final_name!r} ({type(final).__name__}) refuses",
            )
        # Any other value the final step takes one per row.
        check_sample_aligned(final_params, n_samples)

    def fit(self, X, y=None, **params):
        """Plan the budget, then fit clones of the steps with their budgets.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Private training rows (raw: strings and missing values are for
            the transformers to handle). A value a part that reads its
            column after a private part would refuse (a string where it
            takes numbers, an infinite value, a missing value with no
            imputer on the way) is refused before the first step reads a
            row; where a column's route is not public, by the strictest
            part it may reach.
        y : array-like of shape (n_samples,), default=None
            Targets, for a supervised final step. What the final step
            would refuse (another length than ``X``, a label outside its
            declared ``classes``, a single label or labels that are not
            classes without them, a target that is not finite) is refused
            before the first step reads a row.
        **params : dict
            ``step__param`` for a step's fit; other keywords
            (``sensitive_features``, ``public_mask``, ``sample_weight``,
            ``silos``) go to the final estimator. With metadata routing
            enabled, the steps' ``set_fit_request`` decide. A keyword a
            step's fit does not take, a value of another length than ``X``,
            an invalid ``sample_weight`` of a private step (a part of a
            composite step included), and ``sensitive_features`` with an
            undeclared or missing group are refused before the first step
            reads a row.

        Returns
        -------
        self : PrivatePipeline
            This pipeline.

        Notes
        -----
        A final estimator alone warns when more than a quarter of a
        column's values lie far from unit scale and it trains on the
        columns as given (an input check, outside its guarantee). After a
        step that released something, its input is that step's output, and
        whether the warning fires could turn on one record after budget was
        spent: the pipeline drops it there.
        """
        self._validate_params()
        self._check_steps()
        # Its steps run in this process: a Dask collection would be gathered.
        refuse_dask_input(type(self).__name__, X=X, y=y, **params)
        routed = self._route(params)
        n_samples, n_features, sparse = _shape_and_layout(X)
        schema = _column_schema(X) if hasattr(X, "columns") else None
        final_name = self.steps[-1][0]
        final = self.steps[-1][1]
        if get_tags(final).target_tags.required:
            # Checked as the final step checks them before they are counted:
            # a count of labels numpy cannot sort (a string among numbers)
            # would fail with a TypeError of its own.
            _check_final_target(final, X, y)
        # The layout is the container's (a DataFrame of sparse columns is
        # read as the sparse matrix the steps' validation makes of it).
        final_counts = self._final_counts(y, routed[final_name], n_samples)
        self._check_fit_metadata(X, y, routed, n_samples)
        pins = {}
        layout, _ = self._layout(
            n_samples, n_features, schema, final_counts, sparse, pins=pins
        )
        plan = layout.plan
        pipeline = _cloned(self.steps)
        # A callable selection runs on the schema, never on the rows.
        pin_selections(pipeline, pins)
        pipeline.set_params(**layout.params)
        # Blocks fitted in other processes or threads, or steps loaded from
        # a cache of an earlier fit, would release outside this fit's
        # release log (a context variable, which joblib's workers do not
        # share), or not release at all: every ColumnTransformer's blocks
        # and every FeatureUnion's parts run here, in this thread
        # (n_jobs=1: None would take the n_jobs of an enclosing
        # joblib.parallel_config), and every nested Pipeline fits its steps
        # anew. A ColumnTransformer stacks its sparse blocks sparsely
        # when the rows' density is below sparse_threshold, which one record
        # can flip: its output is made dense, whatever the rows.
        column_transformers, pipelines, unions = composite_paths(pipeline)
        pipeline.set_params(
            **{f"{path}__n_jobs": 1 for path in column_transformers + unions},
            **{f"{path}__sparse_threshold": 0 for path in column_transformers},
            **{f"{path}__memory": None for path in pipelines},
        )
        # What a part would refuse in X (a string, an infinite or missing
        # value), refused on every row before any part reads one: a later
        # block's or step's refusal would come after the earlier releases.
        check_raw_input(X, n_features, pipeline.steps, schema)
        silos = routed[final_name].get("silos")
        planned_silo_fit = getattr(pipeline.steps[-1][1], "_planned_silo_fit", None)
        if silos is not None and planned_silo_fit is not None:
            # Likewise what the federated final step, at its share of the
            # budget, refuses of the silos themselves (sizes, weights).
            planned_silo_fit(
                n_samples, silos, routed[final_name].get("sample_weight")
            )
        # The guarantee's delta is the pipeline's, warned about once; each
        # step would warn about its share of it, the same cause.
        check_delta_for_n(self.delta, n_samples)
        # A step that raises after an earlier step's releases (a federated
        # final step whose rounds diverge, a width refused once an encoder
        # released its categories) leaves the pipeline's ledger charged with
        # its plan.
        with charged_if_raised_after_releases(self, plan):
            # A step's delta is a share of the pipeline's: it warns only
            # where the pipeline has.
            with _suppressed_if(self.delta * n_samples >= 1.0, _STEP_DELTA_WARNING):
                self._fit_steps(pipeline, X, y, routed, layout, final_counts)
            for path, budget in layout.budgets.items():
                fitted = fitted_part(pipeline, path)
                try:
                    budget["plan"].check_fitted(fitted)
                except PrivacyAccountingError as exc:
                    raise PrivacyAccountingError(
                        f"Step {path!r} of the pipeline: {exc}"
                    ) from exc
        self.pipeline_ = pipeline
        self.step_budgets_ = layout.budgets
        self.budget_scale_ = layout.scale
        self.additional_delta_ = plan.additional_delta
        self._set_privacy_record(self._record(plan, pipeline))
        return self

    def _refuse_raw_input(self, X):
        """Refuse, on every row, an ``X`` that :meth:`fit` would refuse.

        The check :meth:`fit` makes before its first step
        (:func:`~sklearn_dpfair.pipeline._input_checks.check_raw_input`),
        without a plan: a private search runs it on all its rows before it
        splits them, so that a value a step would refuse is refused the same
        whichever part the split puts its row in.

        Raises
        ------
        ValueError
            Naming the column and the part, never a value.
        """
        _, n_features, sparse = _shape_and_layout(X)
        schema = _column_schema(X) if hasattr(X, "columns") else None
        pins = {}
        walk_steps(self.steps, n_features, names=schema, sparse=sparse, pins=pins)
        pipeline = _cloned(self.steps)
        pin_selections(pipeline, pins)
        check_raw_input(X, n_features, pipeline.steps, schema)

    def _fit_steps(self, pipeline, X, y, routed, layout, final_counts):
        """Fit the clones in ``pipeline``, each step on its predecessor's output."""
        plan = layout.plan
        final_name = self.steps[-1][0]
        convert = plan.adjacency == "replace_one"
        Xt = X
        released = False
        for name, step in pipeline.steps[:-1]:
            if is_passthrough(step):
                continue
            step_convert = convert and any(
                b["plan"].adjacency != plan.adjacency
                for path, b in layout.budgets.items()
                if path == name or path.startswith(f"{name}__")
            )
            with logged_releases(propagate=not step_convert) as log:
                Xt = step.fit_transform(Xt, y, **routed[name])
            released = released or bool(log.counts)
            if step_convert:
                _relog_replace_one(log)
        final = pipeline.steps[-1][1]
        if layout.flowing is not None:
            self._set_flowing_bound(pipeline, final, layout.flowing)
        if (
            layout.final_sparse is not None
            and is_sparse_layout(Xt) != layout.final_sparse
        ):
            self._check_final_layout(final, Xt, layout, final_name, final_counts)
        if layout.final_width_probed:
            self._check_final_width(final, Xt, layout, final_name, final_counts)
        # The final step's warning about columns far from unit scale reads
        # its input's rows: after a release, the output of releases, so that
        # whether it fires could turn on one record, after budget was spent.
        with _suppressed_if(released, UNSCALED_COLUMNS_WARNING):
            final.fit(Xt, y, **routed[final_name])

    @staticmethod
    def _check_final_layout(final, Xt, layout, final_name, counts):
        """Refuse, before it reads a row, a final step whose plan the layout changes.

        A FunctionTransformer's func is taken to keep its input's layout;
        where it does not, the final step runs as planned only if its plan
        on the layout it gets (a public property of ``Xt``'s container) is
        the same event.
        """
        sparse = is_sparse_layout(Xt)
        if not _plans_as_planned(final, Xt, counts, layout.budgets[final_name]["plan"]):
            got, was = ("sparse", "dense") if sparse else ("dense", "sparse")
            raise ValueError(
                f"The final step {final_name!r} was planned on a {was} input "
                "(the input's layout, carried by the steps' public parameters), "
                f"but the steps before it output a {got} one, on which its "
                "plan differs: a FunctionTransformer's func must return the "
                "layout it is given."
            )

    @staticmethod
    def _check_final_width(final, Xt, layout, final_name, counts):
        """Run the final step as planned when its width was not public.

        Its plan was made at a probe width, found to give the same event as
        another: ``Xt``'s number of columns is now known (the output of the
        earlier steps' private releases, or of a data-independent function:
        public either way), so the step is re-planned on it before it reads a
        row. A different event is refused, except for one rule: where
        ``small_budget="auto"`` would now release the intercept-only model
        (more columns than the budget affords), the planned fit runs instead
        (``small_budget="choose"``: the model, then the private choice
        between it and the constants, where the step has it; else "fit"),
        with a warning, so that what runs is what the pipeline accounted.
        """
        planned = layout.budgets[final_name]["plan"]
        width = np.shape(Xt)[1]
        if _plans_as_planned(final, Xt, counts, planned):
            return
        if final.get_params(deep=False).get("small_budget") == "auto":
            for fallback in _SMALL_BUDGET_FALLBACKS:
                final.set_params(small_budget=fallback)
                if _plans_as_planned(final, Xt, counts, planned):
                    warn_at_caller(
                        f"The final step {final_name!r} ({type(final).__name__}) "
                        "was planned before its number of input columns was "
                        f"known; on the {width} columns the earlier steps "
                        "released, small_budget='auto' would release the "
                        "intercept-only model, which the pipeline did not plan, "
                        f"so the planned fit runs (small_budget={fallback!r}). "
                        "Declare the categories (or the columns) upstream for "
                        "the rule to apply, or set small_budget on the step."
                    )
                    return
        raise ValueError(
            f"The final step {final_name!r} ({type(final).__name__}) was planned "
            "before its number of input columns was known, and its plan on the "
            f"{width} columns the earlier steps released differs. Declare the "
            "categories (or the columns) upstream, so the width is public."
        )

    def _set_flowing_bound(self, pipeline, final, flowing):
        param, kind = flowing
        previous = last_step(pipeline.steps[:-1])
        bound = None if previous is None else declared_output_bound(previous)
        if bound is None or not math.isfinite(bound[kind]) or bound[kind] <= 0:
            raise ValueError(_no_output_bound(pipeline.steps[-1][0], final, param))
        final.set_params(**{param: bound[kind]})

    def _record(self, plan, pipeline):
        caveats = []
        seeds = {}
        # Each part described as its fit ran it (at epsilon=inf the non-private
        # limit, not the private mechanism its plan names): same events.
        described = {}
        for path, budget in self.step_budgets_.items():
            fitted = fitted_part(pipeline, path)
            fitted_record = getattr(fitted, "privacy_record_", None)
            described[path] = dict(budget)
            if fitted_record is not None:
                described[path]["plan"] = replace(
                    budget["plan"], mechanism=fitted_record.mechanism
                )
            for caveat in getattr(fitted, "privacy_caveats_", ()):
                if caveat not in caveats:
                    caveats.append(caveat)
            seed = getattr(getattr(fitted, "privacy_record_", None), "seed", None)
            if seed is not None:
                seeds[path] = seed
        record = PrivacyRecord.from_event(
            plan.dp_event,
            delta=plan.delta,
            accountant=plan.accountant,
            adjacency=plan.adjacency,
            mechanism=_describe(described, plan.adjacency, plan.additional_delta),
            # Its steps' mechanisms differ: no one multiplier (0 would
            # read as "no noise").
            noise_multiplier=None,
            caveats=tuple(caveats),
            additional_delta=plan.additional_delta,
            # The pipeline's own seed, and those it derived for its steps:
            # a step cloned from ``pipeline_`` keeps its derived seed, and a
            # ledger must see that its refit draws this fit's noise.
            seed=step_seeds({"pipeline": noise_seed(self.random_state), **seeds})
            if self.random_state is not None
            else step_seeds(seeds),
        )
        return record

    def _set_privacy_record(self, record):
        # The record's seed is the pipeline's, or else its steps' (set in
        # _record), not noise_seed(random_state=None).
        self.privacy_record_ = record
        self.epsilon_ = record.epsilon
        self.delta_ = record.delta
        self.dp_event_ = record.dp_event
        self.noise_multiplier_ = record.noise_multiplier
        self.adjacency_ = record.adjacency
        self.privacy_caveats_ = list(record.caveats)
        if isinstance(self.accountant, PrivacyLedger):
            self._record_in_ledger(self.accountant, record, seed=record.seed)

    def privacy_summary(self):
        """The guarantee of the whole fit, then the budget of each private step.

        Returns
        -------
        summary : str
            The record's summary, then one line per private step.
        """
        check_is_fitted(self, "privacy_record_")
        lines = [str(self.privacy_record_), "", "Budget per step:"]
        for path, budget in self.step_budgets_.items():
            plan = budget["plan"]
            # The step as its fit ran it (at epsilon=inf its non-private
            # limit), as in the composed record, not the plan's mechanism.
            fitted = getattr(fitted_part(self.pipeline_, path), "privacy_record_", None)
            mechanism = plan.mechanism if fitted is None else fitted.mechanism
            share = (
                "its own silo_epsilon"
                if budget["share"] is None
                else f"share {budget['share']:.3g}"
            )
            lines.append(
                f"  {path}: {share}, epsilon {budget['epsilon']:.4g}, "
                f"delta {budget['delta']:.3g} (alone: ({plan.epsilon:.4g}, "
                f"{plan.total_delta:.3g})-DP, {plan.adjacency}) -- {mechanism}"
            )
        return "\n".join(lines)

    # -- metadata routing ----------------------------------------------------

    def get_metadata_routing(self):
        """Route ``fit`` metadata to the steps that request it.

        Returns
        -------
        routing : MetadataRouter
            Where ``fit`` and ``score`` metadata go.
        """
        router = MetadataRouter(owner=self)
        for name, est in self.steps:
            if is_passthrough(est) or isinstance(est, str):
                continue
            mapping = MethodMapping().add(caller="fit", callee="fit")
            if name == self.steps[-1][0]:
                mapping = mapping.add(caller="score", callee="score")
            router.add(**{name: est}, method_mapping=mapping)
        return router

    # -- delegation ------------------------------------------------------------

    def __sklearn_is_fitted__(self):
        return hasattr(self, "pipeline_")

    @available_if(_final_has("predict"))
    def predict(self, X, **params):
        """Predict with the fitted pipeline.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows in the input format of the first step.
        **params : dict
            Passed to the final estimator's ``predict``.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The final estimator's predictions.
        """
        check_is_fitted(self)
        return self.pipeline_.predict(X, **params)

    @available_if(_final_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities of the fitted pipeline.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows in the input format of the first step.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Probability of each class, ordered as ``classes_``.
        """
        check_is_fitted(self)
        return self.pipeline_.predict_proba(X)

    @available_if(_final_has("predict_log_proba"))
    def predict_log_proba(self, X):
        """Log class probabilities of the fitted pipeline.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows in the input format of the first step.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Log-probability of each class.
        """
        check_is_fitted(self)
        return self.pipeline_.predict_log_proba(X)

    @available_if(_final_has("decision_function"))
    def decision_function(self, X):
        """Decision function of the fitted pipeline.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows in the input format of the first step.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            The final estimator's decision function.
        """
        check_is_fitted(self)
        return self.pipeline_.decision_function(X)

    @available_if(_final_has("transform"))
    def transform(self, X):
        """Transform with every fitted step.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows in the input format of the first step.

        Returns
        -------
        Xt : ndarray of shape (n_samples, n_features_out)
            The transformed rows.
        """
        check_is_fitted(self)
        return self.pipeline_.transform(X)

    @available_if(_every_step_has("inverse_transform"))
    def inverse_transform(self, X):
        """Apply every fitted step's ``inverse_transform``, last step first.

        Post-processing of the released steps: no privacy cost.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features_out)
            Rows in the output format of the last step.

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
            Rows in the input format of the first step.
        """
        check_is_fitted(self)
        return self.pipeline_.inverse_transform(X)

    @available_if(_final_has("transform"))
    def fit_transform(self, X, y=None, **params):
        """Fit (as :meth:`fit`), then transform ``X`` with every fitted step.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows in the input format of the first step.
        y : array-like of shape (n_samples,), default=None
            Targets, for a supervised final step.
        **params : dict
            As in :meth:`fit`.

        Returns
        -------
        Xt : ndarray of shape (n_samples, n_features_out)
            The transformed rows.
        """
        return self.fit(X, y, **params).transform(X)

    @available_if(_final_has("score"))
    def score(self, X, y=None, sample_weight=None):
        """Score of the final estimator on the transformed ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows in the input format of the first step.
        y : array-like of shape (n_samples,), default=None
            Targets, for a supervised final step.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the final estimator's score.

        Returns
        -------
        score : float
            The final estimator's score.
        """
        check_is_fitted(self)
        if sample_weight is None:
            return self.pipeline_.score(X, y)
        return self.pipeline_.score(X, y, sample_weight=sample_weight)

    def get_feature_names_out(self, input_features=None):
        """Output feature names of the fitted pipeline (transformers).

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Input column names; None: those seen in ``fit``.

        Returns
        -------
        names : ndarray of str
            Names of the output columns.
        """
        check_is_fitted(self)
        return self.pipeline_.get_feature_names_out(input_features)

    @property
    def classes_(self):
        """The final estimator's classes."""
        return self.pipeline_.steps[-1][1].classes_

    @property
    def n_features_in_(self):
        """Number of input columns seen in ``fit``."""
        return self.pipeline_.n_features_in_

    @property
    def feature_names_in_(self):
        """Input column names seen in ``fit`` (DataFrame input)."""
        return self.pipeline_.feature_names_in_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        try:
            final, first = self.steps[-1][1], self.steps[0][1]
        except (IndexError, KeyError, TypeError, ValueError):
            # No steps, or steps that are not (name, estimator) pairs, which
            # fit refuses: the base tags, as scikit-learn's Pipeline gives.
            return tags
        if not is_passthrough(final):
            # A classifier, regressor or transformer as its final step is.
            final_tags = get_tags(final)
            tags.estimator_type = final_tags.estimator_type
            tags.classifier_tags = final_tags.classifier_tags
            tags.regressor_tags = final_tags.regressor_tags
            tags.transformer_tags = final_tags.transformer_tags
            tags.target_tags.required = final_tags.target_tags.required
        if not is_passthrough(first):
            # Missing values and strings are for the first step to take, and
            # missing values must be imputed before a final step that
            # refuses them.
            imputed = any(_imputes(est) for _, est in self.steps[:-1])
            tags.input_tags.allow_nan = _takes_nan(first) and (
                imputed
                or is_passthrough(final)
                or get_tags(final).input_tags.allow_nan
            )
            tags.input_tags.string = get_tags(first).input_tags.string
            # Sparse X where the first step takes it (the plan carries the
            # layout through the steps).
            tags.input_tags.sparse = get_tags(first).input_tags.sparse
        return tags


class _Planner:
    """Plans of one private part at any budget, on a private clone."""

    def __init__(self, unit, estimator, n_samples, counts, kind, extra):
        self.unit = unit
        self.estimator = estimator
        self.n_samples = n_samples
        self.counts = counts
        self.kind = kind
        self.extra = extra
        self.width = (
            unit.n_features if unit.n_features is not None else _PROBE_WIDTHS[0]
        )
        self.fixed = _own_budget(estimator, counts)

    def _plan(self, width=None, sparse=None, **params):
        est = self.estimator
        # A budget the step sets itself stays its own, in every plan as in
        # its fit.
        params = {k: v for k, v in params.items() if k not in self.fixed}
        if "accountant" in est.get_params(deep=False):
            params["accountant"] = self.kind
        est.set_params(**self.extra, **params)
        # An unknown layout (None) is planned dense once check_layout_free
        # has found that the event does not depend on it.
        sparse = bool(self.unit.sparse) if sparse is None else sparse
        try:
            plan = est.privacy_plan(
                self.n_samples,
                self.width if width is None else width,
                **({"sparse": True} if sparse else {}),
                **self.counts,
            )
        except TypeError as exc:
            if not sparse:
                raise
            raise TypeError(
                f"Step {self.unit.path!r} ({type(est).__name__}) receives a "
                f"sparse matrix: {exc}"
            ) from exc
        except NotImplementedError as exc:
            raise ValueError(
                f"Step {self.unit.path!r} ({type(est).__name__}) has no privacy "
                "plan yet, so its budget cannot be composed before the fit; fit "
                "it outside a private pipeline."
            ) from exc
        except ValueError as exc:
            # A configuration whose event depends on the data, or a share too
            # small to calibrate: say which step, and what the pipeline takes.
            hint = ""
            if self.kind == "rdp" and "accountant='pld'" in str(exc):
                hint = (
                    " The pipeline sets every step's accountant: pass "
                    "accountant='pld' to the pipeline, or give this step a "
                    "larger share with budget_shares."
                )
            raise ValueError(
                f"Step {self.unit.path!r} ({type(est).__name__}) has no privacy "
                f"plan before the fit: {exc}{hint}"
            ) from exc
        if width is None and self.unit.n_features is None:
            # Planned at a probe width, which check_width_free found the
            # event not to depend on: the record names no width it was not
            # given.
            plan = replace(
                plan,
                public=tuple(
                    (name, _WIDTH_UNKNOWN if name == "n_features" else v)
                    for name, v in plan.public
                ),
            )
        return plan

    def own_plan(self):
        original = self.unit.estimator
        return self._plan(epsilon=original.epsilon, delta=original.delta)

    def is_free(self, delta):
        """Whether the part spends nothing at any budget (reads no row).

        A part is free when its plan is a no-op whatever its budget: such a
        part (declared categories) takes no share and runs at its own
        parameters, so its plan at them must be the no-op too. Freeness is
        first decided at ``epsilon=inf`` (and the pipeline's ``delta``), a
        public probe at which no noise is calibrated, so no plan fails for
        want of budget: a part that reads a row plans a non-private event
        there, not a no-op. Its own ``epsilon`` and ``delta``, which the
        pipeline replaces by its share when it is not free, are read only
        once the probe has found it free: too small to calibrate, they
        would otherwise refuse a part that runs at its share.
        """
        probe = self._plan(epsilon=math.inf, delta=delta).dp_event
        if not isinstance(probe, dp_accounting.NoOpDpEvent):
            return False
        return isinstance(self.own_plan().dp_event, dp_accounting.NoOpDpEvent)

    def plan(self, epsilon, delta):
        return self._plan(epsilon=epsilon, delta=delta)

    def _width_free(self, epsilon, delta, **params):
        events = [
            self._plan(width=w, epsilon=epsilon, delta=delta, **params).dp_event
            for w in _PROBE_WIDTHS
        ]
        return events[0] == events[1]

    def _width_readers(self, epsilon, delta):
        """Hints of the step's parameters that alone make its plan read the width."""
        est = self.estimator
        own = est.get_params(deep=False)
        hints = []
        for param, reads, alternatives, hint in _WIDTH_READERS:
            if param not in own or own[param] != reads:
                continue
            for value in alternatives:
                try:
                    if self._width_free(epsilon, delta, **{param: value}):
                        hints.append(hint.format(value=value))
                        break
                except (ValueError, TypeError):
                    # A value the step does not take (scikit-learn's
                    # InvalidParameterError is both), or no plan there.
                    pass
                finally:
                    est.set_params(**{param: own[param]})
        return hints

    def check_width_free(self, epsilon, delta):
        if self._width_free(epsilon, delta):
            return
        hints = self._width_readers(epsilon, delta)
        raise ValueError(
            f"Step {self.unit.path!r} ({type(self.estimator).__name__}) is "
            "planned from its number of input columns, which is only known "
            "after an earlier step's private fit (categories discovered by "
            "DPOneHotEncoder(categories='auto'), a FunctionTransformer with "
            "a func, a selection the schema does not resolve). "
            + "".join(f"Its {hint}. " for hint in hints)
            + "Or declare the categories (or the columns) upstream, so the "
            "width is public."
        )

    def check_layout_free(self, epsilon, delta):
        dense = self._plan(sparse=False, epsilon=epsilon, delta=delta).dp_event
        try:
            csr = self._plan(sparse=True, epsilon=epsilon, delta=delta).dp_event
        except TypeError:
            # It refuses sparse X: a sparse input fails in its own fit, before
            # it reads a row, and a dense one runs the dense plan.
            return
        if dense != csr:
            raise ValueError(
                f"Step {self.unit.path!r} ({type(self.estimator).__name__}) is "
                "planned from the layout of its input (dense or sparse), which "
                "an earlier step decides only during its fit. Make the layout "
                "public (sparse_output=False on the encoders), or give the "
                "step public feature_bounds."
            )

    def check_bound_free(self, param, epsilon, delta):
        events = []
        for bound in _PROBE_BOUNDS:
            self.extra = {param: bound}
            events.append(self._plan(epsilon=epsilon, delta=delta).dp_event)
        self.extra = {param: _PROBE_BOUNDS[0]}
        if events[0] != events[1]:
            raise ValueError(
                f"The final step {self.unit.path!r} ({type(self.estimator).__name__})"
                f" has {param}=None, but its plan depends on {param}, which the "
                "step before it declares only after its private fit. Set "
                f"{param} on the final step."
            )


def _own_budget(estimator, counts):
    """The budget parameters a step's own federated budget replaces.

    A federated fit (planned with ``n_silos``) calibrates every silo's
    messages by ``silo_epsilon`` and ``silo_delta`` (ISRL-DP), the step's
    ``epsilon`` and ``delta`` being only their defaults: where the step
    sets one, the pipeline's share of it would not be spent.

    Parameters
    ----------
    estimator : estimator
        The step.
    counts : dict
        The public counts it is planned with.

    Returns
    -------
    fixed : tuple of str
        Among ``"epsilon"`` and ``"delta"``, those the step sets itself.
    """
    if counts.get("n_silos") is None:
        return ()
    own = estimator.get_params(deep=False)
    return tuple(
        name
        for name, param in (("epsilon", "silo_epsilon"), ("delta", "silo_delta"))
        if own.get(param) is not None
    )


def _check_own_budget_fits(planner, epsilon, delta, share_delta, accountant):
    """Refuse a step whose own federated budget alone exceeds the pipeline's.

    Such a step spends its ``silo_epsilon`` (``silo_delta``) whatever share
    of epsilon it is given (:func:`_own_budget`); its delta is its
    ``silo_delta``, or else its share of the pipeline's, ``share_delta``.
    When its event at those, read by the pipeline's accountant at the
    pipeline's ``delta`` as the composition reads it, is above ``epsilon``,
    no split of the budget can hold it: say which parameter, rather than
    the failed search for a split that the composition would otherwise end
    in.
    """
    if "epsilon" not in planner.fixed:
        return
    name = planner.unit.path
    own = planner.plan(epsilon, share_delta)
    alone = compose_plans([(name, own)], delta, accountant)
    if alone[-1] > epsilon:
        given = planner.unit.estimator.get_params(deep=False)
        raise ValueError(
            f"Step {name!r} ({type(planner.unit.estimator).__name__}) spends "
            f"its own silo_epsilon={given['silo_epsilon']:g} whatever its "
            f"share, which the pipeline's accountant reads as epsilon "
            f"{alone[-1]:.4g} at the pipeline's delta={delta:g}: above its "
            f"epsilon={epsilon:g} before any other step spends anything. "
            "Lower silo_epsilon, or leave it unset so that the step spends "
            "its share of the pipeline's epsilon."
        )


def _relog_replace_one(log):
    """Hand the enclosing fit ``log``'s releases as their replace-one conversions."""
    if log.unchecked is not None:
        mark_unchecked(log.unchecked)
    for (kind, level), count in log.counts.items():
        kind, level = replace_one_release(kind, level)
        for _ in range(count):
            log_release(kind, level)


def _check_distinct_step_seeds(units):
    """Refuse private steps seeded alike: their noise would be the same.

    The pipeline composes its steps' events as independent releases; two
    steps whose noise comes from one seed (the same int, or copies of one
    random-state instance) drew the same noise, which no composition of
    independent events covers.
    """
    seen = {}
    for unit in units:
        fingerprints = _noise_fingerprints(unit.estimator)
        for fingerprint in fingerprints:
            if fingerprint in seen:
                raise ValueError(
                    f"Steps {seen[fingerprint]!r} and {unit.path!r} have the "
                    "same random_state (at any depth): their noise would be "
                    "the same, and the pipeline composes its steps as "
                    "independent releases. Give them different seeds, or set "
                    "random_state on the pipeline (it seeds every step)."
                )
        for fingerprint in fingerprints:
            seen[fingerprint] = unit.path


def _noise_fingerprints(estimator):
    """Fingerprints of the seeds a private part draws its noise from.

    A nested private pipeline seeds its steps from its own ``random_state``
    when it is set, and else leaves each its own; any other part draws from
    every ``random_state`` among its parameters, at any depth.
    """
    if isinstance(estimator, PrivatePipeline) and estimator.random_state is not None:
        parts = []
    else:
        parts = _nested_parts(estimator)
    if parts is not None:
        fingerprints = {noise_seed(getattr(estimator, "random_state", None))}
        for part in parts:
            if hasattr(part, "get_params"):
                fingerprints |= _noise_fingerprints(part)
        return fingerprints - {None}
    return {
        noise_seed(value)
        for key, value in estimator.get_params(deep=True).items()
        if key == "random_state" or key.endswith("__random_state")
    } - {None}


def _describe(budgets, adjacency, additional):
    parts = []
    for path, budget in budgets.items():
        parts.append(
            f"{path} (epsilon {budget['epsilon']:.4g}, delta {budget['delta']:.3g}: "
            f"{budget['plan'].mechanism})"
        )
    text = "Private pipeline, sequential composition of: " + "; ".join(
        parts or ["nothing"]
    )
    # Group privacy converts only what is released: a step whose event is a
    # no-op or non-private (epsilon=inf, no noise) has no noise to rescale.
    if adjacency == "replace_one" and any(
        b["plan"].adjacency == "add_remove" and releases_noise(b["plan"].dp_event)
        for b in budgets.values()
    ):
        text += (
            "; the add/remove steps converted to replace-one by group privacy of "
            "two records (Gaussian noise multiplier halved, zCDP rho times 4)"
        )
    if additional:
        text += (
            f"; a further delta of {additional:.3g} is spent outside the event "
            "(category thresholds): the fit is (epsilon, delta + "
            f"{additional:.3g})-DP"
        )
    return text


def make_private_pipeline(
    *steps,
    epsilon=1.0,
    delta=1e-5,
    budget_shares=None,
    accountant="rdp",
    random_state=None,
):
    """Build a :class:`PrivatePipeline`, naming the steps after their classes.

    Parameters
    ----------
    *steps : estimators
        The steps, the last one the final estimator.
    epsilon : float, default=1.0
        Total epsilon of the whole fit.
    delta : float, default=1e-5
        Total delta of the whole fit.
    budget_shares : dict or None, default=None
        ``{step name: share}`` (names are the lower-cased class names).
    accountant : {"rdp", "pld"} or PrivacyLedger, default="rdp"
        The accountant of every step and of the composition.
    random_state : None, int, RandomState or Generator, default=None
        None: each step's own; else the seed of every private step's seed.

    Returns
    -------
    pipeline : PrivatePipeline
        The unfitted pipeline.

    Examples
    --------
    >>> from sklearn_dpfair.linear_model import DPLogisticRegression
    >>> from sklearn_dpfair.pipeline import make_private_pipeline
    >>> from sklearn_dpfair.preprocessing import DPStandardScaler
    >>> pipe = make_private_pipeline(
    ...     DPStandardScaler(bounds=(-10, 10)), DPLogisticRegression(classes=[0, 1]))
    >>> [name for name, _ in pipe.steps]
    ['dpstandardscaler', 'dplogisticregression']
    >>> plan = pipe.privacy_plan(5000, 4)
    >>> plan.epsilon <= 1.0, [name for name, _ in plan.steps]
    (True, ['dpstandardscaler', 'dplogisticregression'])
    """
    return PrivatePipeline(
        _name_estimators(steps),
        epsilon=epsilon,
        delta=delta,
        budget_shares=budget_shares,
        accountant=accountant,
        random_state=random_state,
    )


def _suppressed_if(condition, pattern):
    """:func:`suppressed_warnings` of ``pattern`` where ``condition`` holds."""
    return suppressed_warnings(pattern) if condition else contextlib.nullcontext()
