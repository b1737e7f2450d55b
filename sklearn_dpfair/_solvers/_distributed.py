# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Central DP-SGD over Dask collections: the rows stay on the workers.

DP-SGD (Abadi et al., CCS 2016, Alg. 1) with Poisson sampling decomposes
over the rows: every record joins a batch by its own coin with probability
``q``, and the clipped sum of a batch is the sum of the clipped sums of its
parts. So each partition of a Dask collection

1. is validated, encoded and persisted once on its worker (features, encoded
   labels, public weights and the row norms ``||[x_i, s]||``);
2. per step, receives the coefficients from the driver, draws its own rows
   of the batch (each with probability ``q``), clips each example's gradient
   to ``clip_norm`` and returns one ``(d + 1) x K`` clipped sum.

The driver adds the partition sums, adds the Gaussian noise *once* through
the fit's :class:`~sklearn_dpfair.privacy.GaussianMechanism`, divides by the
*expected* batch size ``q n`` and updates. The released coefficients are the
same function of the same noisy sums as in the in-memory fit, so the
guarantee, the event and the record are those of
:func:`~sklearn_dpfair._solvers._private_fit.fit_dp_sgd` (add/remove
adjacency).

Trust model: the driver sees the *un-noised* partition sums, as the
in-memory solver sees its own batch sums; the workers see their rows. Both
are inside the trust boundary of the central model; only the fitted model
is differentially private. (Federated ``silos=`` fits are the other trust
model: there each silo noises its own messages.)

Randomness: the driver's generator (OS entropy, or the user's seed) draws
128 bits of root entropy; the generator of partition ``p`` at step ``t`` is
seeded by ``SeedSequence(root, spawn_key=(p, t))``, i.e. the child
``root.spawn(P)[p].spawn(T)[t]``: independent streams across partitions and
steps, and a deterministic one for a task that Dask re-runs after losing a
worker (the retry draws the same batch rows, so a recovered fit releases
the same model with the same accounting as an undisturbed one).
"""

import concurrent.futures
import math
import numbers
from dataclasses import dataclass, replace

import numpy as np
from sklearn.exceptions import DataConversionWarning
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_array, column_or_1d, validate_data

from ..fairness import encode_sensitive_features
from ..utils._dask import (
    is_dask_collection,
    refuse_dask_beside_in_memory_x,
    refuse_dask_input,
)
from ..utils._numeric import constant_columns, power_of_two_magnitudes
from ..utils._redact import redacting_errors
from ..utils._validation import (
    assert_all_finite,
    check_delta_for_n,
    resolve_classes,
    warn_at_caller,
)
from ._constant_choice import comparison_from_counts
from ._feature_scaling import (
    BOUNDS_DESCRIPTION,
    EXACT_SCALING_DESCRIPTION,
    FeatureScaling,
    count_beyond_unit_scale,
    in_user_units,
    off_unit_scale,
    penalty_in_scaled_units,
    scale_check_step,
)
from ._intercept_only import label_counts
from ._linear import LinearModel, take_rows, weighted_raw_gradient
from ._non_private import _SMALLEST_SPREAD
from ._private_fit import LinearFit, check_planned_shape
from ._sampling import poisson_batch
from ._schedules import resolve_epochs
from ._sgd import sgd_loop

__all__ = [
    "DaskTrainingData",
    "NOISELESS_STEPS_DESCRIPTION",
    "as_run_record",
    "distribute_training_data",
    "exact_column_scaling",
    "fit_dp_sgd_dask",
    "is_dask_collection",
    "partition_clipped_sum",
    "partition_columns_off_unit_scale",
    "partition_rng",
    "refuse_dask_beside_in_memory_x",
    "refuse_dask_input",
    "set_dask_input_features",
    "sum_over_partitions",
]

#: The record's mechanism for a Dask fit without privacy (``{private}``: the
#: mechanism it stands for).
NOISELESS_STEPS_DESCRIPTION = (
    "non-private limit (epsilon=inf, no noise_multiplier): the private "
    "mechanism's steps on the workers, Poisson batches included, with no "
    "clipping and no noise (nothing is released); the mechanism it stands "
    "for: {private}"
)

_DASK_MISSING = (
    "fitting on Dask collections needs dask.distributed, an optional "
    "dependency: install it with `pip install 'sklearn-dpfair[dask]'`."
)
_NO_CLIENT = (
    "X is a Dask collection: the fit runs on the current dask.distributed "
    "Client, and there is none. Create one first (for example "
    "`client = Client(LocalCluster())`), or pass in-memory arrays."
)
# The in-memory DPFERMIClassifier's message (the one fit that passes
# sensitive_features here).
_MISSING_GROUPS = (
    "sensitive_features has missing values (None/NaN). DPFERMIClassifier "
    "has no private treatment of missing sensitive values: drop or impute "
    "those rows (FERMIClassifier handles them by reweighting)."
)
_WORKER_LOST = (
    "a Dask worker was lost during the private fit and its work could not be "
    "recomputed; no model is released. Nothing was published, so a new fit "
    "(from fresh OS entropy) spends its budget afresh."
)


@dataclass(frozen=True)
class _Partition:
    """One persisted partition: what its worker keeps for the whole fit."""

    X: np.ndarray
    y: np.ndarray
    weights: np.ndarray | None
    row_norms: np.ndarray
    codes: np.ndarray | None = None  # group codes (fair fits), public set


@dataclass
class DaskTrainingData:
    """The training data of a distributed fit: persisted partitions and public facts.

    ``partitions`` are futures of the persisted partitions (in row order),
    ``sizes`` their row counts (public, as ``n`` is under add/remove
    adjacency), ``classes`` the label set and ``caveats`` what it cost.
    """

    client: object
    partitions: list
    sizes: list
    n_features: int
    dtype: np.dtype
    classes: np.ndarray
    caveats: tuple
    weighted: bool
    max_weight: float = 1.0  # the weights' bound for the auto dual step
    groups: np.ndarray | None = None  # the group set (fair fits)
    #: The public column map every partition applied (FeatureScaling or None):
    #: a model fitted on the partitions is in its scaled units.
    scaling: object = None
    # Whether ``scaling`` is the exact standardization of a non-private fit.
    exact_scaling: bool = False
    # Whether the fit adds noise (False: epsilon = inf without a multiplier).
    private: bool = True

    @property
    def n_samples(self):
        return int(sum(self.sizes))

    def release(self):
        """Drop the persisted partitions from the workers."""
        partitions, self.partitions = self.partitions, []
        self.client.cancel(partitions)


def _refuse_no_rows(shape, estimator_name=None):
    """Raise scikit-learn's ``check_array`` error for an ``X`` of no rows.

    The in-memory fit's message, word for word (``by <estimator>`` where
    the name is known): a Dask ``X`` of 0 rows would otherwise reach the
    schedule, which divides by ``n``.
    """
    by = f" by {estimator_name}" if estimator_name else ""
    shape = tuple(int(n) for n in shape)
    raise ValueError(
        f"Found array with 0 sample(s) (shape={shape}) while a minimum of 1 "
        f"is required{by}."
    )


def set_dask_input_features(estimator, X):
    """``n_features_in_`` and ``feature_names_in_`` of a Dask ``X`` (no data read).

    scikit-learn reads the column names of eager dataframes only; a Dask
    DataFrame's (string) column names are public metadata, recorded here as
    ``validate_data`` would record a pandas DataFrame's. A 1-D ``X`` (a Dask
    Series or 1-D array) is refused here, before anything reads its number
    of columns; one whose number of rows is known to be 0 is refused with
    scikit-learn's message (one whose rows are not counted yet, a filtered
    array's or a DataFrame's, by :func:`distribute_training_data`).
    """
    if X.ndim != 2:
        got = (
            f"a Dask array of shape {X.shape}"
            if hasattr(X, "chunks")
            else f"a Dask {type(X).__name__}"
        )
        raise ValueError(f"X must be 2-d; got {got}.")
    if hasattr(X, "chunks") and X.shape[0] == 0:
        _refuse_no_rows(X.shape, type(estimator).__name__)
    # A Dask DataFrame is read through an empty pandas frame of its
    # columns: scikit-learn's feature-name check skips lazy frames.
    if hasattr(X, "columns"):
        import pandas as pd

        header = pd.DataFrame(columns=X.columns)
    else:
        header = X
    validate_data(estimator, header, reset=True, skip_check_array=True)


def _current_client():
    try:
        import distributed
    except ImportError as exc:
        raise ImportError(_DASK_MISSING) from exc
    try:
        return distributed.get_client()
    except ValueError as exc:
        raise ValueError(_NO_CLIENT) from exc


def _has_string_extension_dtype(obj):
    """Whether a Dask Series or DataFrame holds a pandas string extension dtype."""
    import pandas as pd

    dtypes = [obj.dtype] if obj.ndim == 1 else list(obj.dtypes)
    return any(
        pd.api.types.is_extension_array_dtype(t) and pd.api.types.is_string_dtype(t)
        for t in dtypes
    )


def _nullable_numeric_columns(obj):
    """Columns of a Dask frame in a pandas nullable numeric or boolean dtype.

    ``Float64``, ``Int64``, ``boolean``: Dask turns them into object arrays
    that hold ``pd.NA``, which ``check_array`` cannot parse; in memory
    scikit-learn reads them as floats, a missing value as NaN.
    """
    import pandas as pd

    dtypes = {None: obj.dtype} if obj.ndim == 1 else dict(obj.dtypes)
    return [
        column
        for column, dtype in dtypes.items()
        if pd.api.types.is_extension_array_dtype(dtype)
        and (
            pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)
        )
    ]


def _frame_lengths(*objs):
    """Partition lengths of the Dask DataFrames and Series among ``objs``.

    Computed together, in one pass: ``X`` and ``y`` taken from one frame
    share its partitions, which are then read once rather than once per
    input. Keyed by ``id``; other inputs are absent. Partition lengths are
    public row counts: computing them reads no value of the records.
    """
    import dask

    frames = [obj for obj in objs if hasattr(obj, "to_dask_array")]
    lengths = dask.compute(*[obj.map_partitions(len) for obj in frames])
    return {
        id(obj): tuple(int(n) for n in counts)
        for obj, counts in zip(frames, lengths)
    }


def _as_dask_array(obj, name, row_chunks=None, lengths=None):
    """A Dask array of ``obj`` (a Dask array, DataFrame or Series, or in-memory).

    ``lengths`` maps ``id(obj)`` of a Dask DataFrame or Series to its
    partition lengths (:func:`_frame_lengths`); one not in it computes them.
    """
    import dask.array as da

    if hasattr(obj, "to_dask_array"):
        known = (lengths or {}).get(id(obj), True)
        if _has_string_extension_dtype(obj):
            # pandas >= 3 stores strings in an extension dtype, which Dask
            # converts to object with a warning: convert first, as it would.
            obj = obj.astype(object)
        # Group labels (sensitive_features) keep their values; the numeric
        # inputs are read as scikit-learn reads them in memory.
        nullable = (
            _nullable_numeric_columns(obj)
            if name in ("X", "y", "sample_weight")
            else []
        )
        if nullable:
            # As scikit-learn reads them in memory: floats, pd.NA as NaN
            # (then refused as in memory: by the partitions' check_array
            # naming X, as "Input y contains NaN", as non-finite weights).
            obj = (
                obj.astype("float64")
                if obj.ndim == 1
                else obj.astype({column: "float64" for column in nullable})
            )
        # Partition lengths are public row counts; computing them reads no
        # value of the records.
        obj = obj.to_dask_array(lengths=known)
    elif not isinstance(obj, da.Array):
        if row_chunks is None:
            raise TypeError(f"{name} must be a Dask array or DataFrame.")
        # Small public inputs given in memory (labels, weights) are cut like X.
        obj = np.asarray(obj)
        n_rows = sum(row_chunks)
        if obj.ndim == 0:
            raise ValueError(f"{name} must have {n_rows} rows, as X; got a scalar.")
        if obj.shape[0] != n_rows:
            # Before from_array, whose error ("Chunks do not add up to
            # shape") names no input.
            raise ValueError(f"{name} has {obj.shape[0]} rows, X has {n_rows}.")
        obj = da.from_array(obj, chunks=(row_chunks,) + (-1,) * (obj.ndim - 1))
    if any(math.isnan(c) for c in obj.chunks[0]):
        obj = _with_known_chunks(obj)
    if row_chunks is not None:
        if obj.shape[0] != sum(row_chunks):
            raise ValueError(
                f"{name} has {obj.shape[0]} rows, X has {sum(row_chunks)}."
            )
        obj = obj.rechunk({0: row_chunks})
    return obj


def _weights_as_dask_array(sample_weight, row_chunks, lengths):
    """``sample_weight`` as a float64 Dask array cut like ``X``'s rows.

    scikit-learn's rule (``_check_sample_weight``): a number is every row's
    weight, and an array must be 1-D, its message word for word; a
    several-column array would otherwise be raveled by the partitions, the
    rows taking other rows' weights. A number becomes a lazy constant
    array, built on the workers, never ``n`` values on the driver.
    """
    import dask.array as da

    n_samples = int(sum(row_chunks))
    if isinstance(sample_weight, numbers.Number):
        return da.full(
            (n_samples,), sample_weight, chunks=(row_chunks,), dtype=np.float64
        )
    # np.ndim reads a Dask collection's ndim attribute, not its values.
    ndim = np.ndim(sample_weight)
    if ndim != 1:
        raise ValueError(
            f"Sample weights must be 1D array or scalar, got {ndim}D array. "
            f"Expected either a scalar value or a 1D array of length {n_samples}."
        )
    w = _as_dask_array(sample_weight, "sample_weight", row_chunks, lengths)
    # Converted block by block on the workers, redacting a failure's message
    # there (a string weight is quoted in it, and the worker logs it).
    return w.map_blocks(_as_float64, dtype=np.float64, input_name="sample_weight")


def _with_known_chunks(obj):
    """``obj`` with its chunk sizes computed (a boolean-masked array's are unknown).

    What ``compute_chunk_sizes`` computes (the blocks' shapes, public row
    counts), without changing ``obj`` in place and on the graph as given,
    not optimized: ``compute_chunk_sizes`` submits the optimized graph, in
    which the mask's tasks are renamed (fused) under their keys, while the
    partitions are then loaded from the unoptimized one
    (``to_delayed(optimize_graph=False)``); the same key with two
    definitions made the distributed scheduler warn ("Detected different
    `run_spec`"), a conflict that it says can deadlock.
    """
    import dask
    import dask.array as da

    blocks = obj.to_delayed(optimize_graph=False)
    shapes = dask.compute(
        *[dask.delayed(np.shape, pure=True)(block) for block in blocks.ravel()],
        optimize_graph=False,
    )
    # Along each axis, the sizes of the blocks in the first row of the others.
    first = np.zeros(obj.ndim, dtype=np.intp)
    chunks = []
    for axis in range(obj.ndim):
        sizes = []
        for i in range(blocks.shape[axis]):
            first[axis] = i
            sizes.append(int(shapes[np.ravel_multi_index(first, blocks.shape)][axis]))
        first[axis] = 0
        chunks.append(tuple(sizes))
    return da.Array(obj.dask, obj.name, tuple(chunks), meta=obj._meta)


# Runs on a worker, whose scheduler logs a failed task's exception there.
@redacting_errors
def _load_partition(
    X,
    y,
    weights,
    classes,
    weight_scale,
    intercept_scaling,
    sensitive=None,
    groups=None,
    scaling=None,
):
    """Validate, encode and keep one partition on its worker."""
    # An empty partition (a filtered frame's) is validated, then dropped.
    # Without numpy's floating-point warnings: the finiteness check sums X
    # first, and rows of +1.7e308 and -1.7e308 made it warn (inf - inf).
    with np.errstate(over="ignore", invalid="ignore"):
        X = check_array(
            X,
            dtype=(np.float64, np.float32),
            order="C",
            input_name="X",
            ensure_min_samples=0,
        )
    if scaling is not None:
        # The same public map on every partition (no data read).
        X = np.ascontiguousarray(scaling.transform(X))
    y = column_or_1d(y)
    if y.shape[0] != X.shape[0]:
        raise ValueError(
            f"y has {y.shape[0]} rows in a partition where X has {X.shape[0]}."
        )
    # A missing label is refused as scikit-learn's _check_y refuses it in
    # memory ("Input y contains NaN."), before the membership check, which
    # would report NaN as an undeclared label.
    assert_all_finite(y, input_name="y")
    # Declared (or already inferred) classes: encoding only, labels outside
    # the set raise as in the in-memory fit.
    _, y_encoded, _ = resolve_classes(classes, y)
    if weights is not None:
        weights = np.asarray(weights, dtype=np.float64)
        if weights.shape != (X.shape[0],):
            # One weight per row: raveling a block of several columns would
            # give the rows other rows' weights.
            raise ValueError(
                f"sample_weight has shape {weights.shape} in a partition where "
                f"X has {X.shape[0]} rows; expected ({X.shape[0]},)."
            )
        if not np.all(np.isfinite(weights)) or np.any(weights < 0):
            raise ValueError("sample_weight must be finite and non-negative.")
        # fit_weights' rule: (1, 1) under privacy (as given); without it the
        # in-memory rescaling to mean 1, w / max(w) * n / sum(w / max(w)).
        weights = weights / weight_scale[0] * weight_scale[1]
    codes = None
    if groups is not None:
        # The group set is declared (or was inferred once, for all
        # partitions): the codes agree across partitions.
        codes = encode_sensitive_features(
            sensitive, n_samples=X.shape[0], groups=groups
        ).codes
        if np.any(codes < 0):
            raise ValueError(_MISSING_GROUPS)
    return _Partition(
        X=X,
        y=np.asarray(y_encoded, dtype=X.dtype),
        weights=weights,
        row_norms=LinearModel(1, intercept_scaling).row_norms(X),
        codes=codes,
    )


def as_run_record(record, data):
    """``record`` as the workers ran it on ``data``.

    Without privacy (``epsilon=inf`` and no noise multiplier) the steps are
    the private mechanism's, Poisson batches included, with no clipping and
    no noise: the mechanism text and the clip norm (inf) say so (the event,
    non-private, is unchanged), and the text names the exact
    standardization where ``data`` has it.
    """
    if record is None or data.private:
        return record
    private = record.mechanism
    if data.exact_scaling:
        # The workers standardized exactly in place of the declared bounds'
        # map the plan names (nothing is released: the moments are free).
        private = private.replace(f"; {BOUNDS_DESCRIPTION}", "")
    mechanism = NOISELESS_STEPS_DESCRIPTION.format(private=private)
    if data.exact_scaling:
        mechanism = f"{mechanism}; {EXACT_SCALING_DESCRIPTION}"
    return replace(record, mechanism=mechanism, clip_norm=math.inf)


# Runs on a worker: the distinct labels come back, never a row.
@redacting_errors
def _block_distinct(block):
    """The distinct values of one block, in their order of appearance."""
    import pandas as pd

    return pd.unique(np.asarray(block).ravel())


def _distinct_values(values):
    """The distinct values of a Dask array, in their order of appearance.

    Each block's distinct values (``pandas.unique``: hashed, never sorted,
    so labels of mixed types, ``[1, "b"]``, or with a missing value are
    read as they are in memory, where ``da.unique`` would sort and fail with
    a ``TypeError``), then those of their concatenation in block order: the
    order of first appearance in the rows, which the in-memory encodings
    keep for labels that do not sort.
    """
    import dask
    import pandas as pd

    blocks = dask.compute(
        *[
            dask.delayed(_block_distinct, pure=True)(block)
            for block in values.to_delayed(optimize_graph=False).ravel()
        ],
        optimize_graph=False,
    )
    distinct = pd.unique(np.concatenate([np.asarray(b) for b in blocks]))
    # pandas may hand back fixed-width strings as objects: the input's
    # dtype, as da.unique returned it.
    return np.asarray(
        distinct, dtype=None if values.dtype == object else values.dtype
    )


@redacting_errors
def _as_float64(block, input_name="X"):
    # check_array names the input, as the partitions' validation does: a
    # string cell's redacted message says "Input X:" (or "Input
    # sample_weight:", whose blocks are 1-D) as in memory. Non-finite
    # values are refused there, by the partitions.
    return check_array(
        block,
        dtype=np.float64,
        input_name=input_name,
        ensure_2d=input_name == "X",
        ensure_all_finite=False,
        ensure_min_samples=0,
    )


def _positive_rows(block, weights):
    """The rows of ``block`` of positive weight, and their weights.

    ``weights`` None: every row, weights None (each of weight 1). A row of
    weight 0 is absent, as in memory (where it multiplies its terms by 0):
    here it is dropped before any of its values is read, so that neither
    its magnitude nor a non-finite value enters a moment.
    """
    if weights is None:
        return block, None
    weights = np.asarray(weights, dtype=np.float64).ravel()
    positive = weights > 0
    return block[positive], weights[positive]


# Run on the workers: np.errstate on the driver does not reach their
# threads, so each block function sets its own.
@redacting_errors
def _block_abs_max(block, weights=None):
    """Each column's largest ``|x|`` over the rows of positive weight, ``(1, d)``."""
    block, _ = _positive_rows(np.asarray(block, dtype=np.float64), weights)
    with np.errstate(invalid="ignore"):
        return np.max(np.abs(block), axis=0, initial=0.0)[None, :]


@redacting_errors
def _block_weighted_sums(block, weights, magnitude, mean):
    """Total weight, weighted sums and squares of ``x / magnitude - mean``.

    One block, as a ``(1, 1 + 2 d)`` array. With ``magnitude`` a power of
    two above each column's largest ``|x|`` every term is below 2 in
    absolute value (16 for a column at float64's largest): no square
    overflows, whatever the column's units (a record at 1e300).
    """
    block, weights = _positive_rows(np.asarray(block, dtype=np.float64), weights)
    with np.errstate(all="ignore"):
        z = block / magnitude - mean
        if weights is None:
            total, sums, squares = z.shape[0], z.sum(axis=0), (z * z).sum(axis=0)
        else:
            total, sums, squares = weights.sum(), weights @ z, weights @ (z * z)
    return np.concatenate([[total], sums, squares])[None, :]


def _weighted_sums(X, weights, magnitude, mean):
    """Total weight, weighted sums and squares of ``X / magnitude - mean``."""
    import dask
    import dask.array as da

    d = X.shape[1]
    blocks = da.map_blocks(
        _block_weighted_sums,
        X,
        weights,
        magnitude,
        mean,
        chunks=((1,) * X.numblocks[0], (1 + 2 * d,)),
        dtype=np.float64,
    )
    (totals,) = dask.compute(blocks.sum(axis=0), optimize_graph=False)
    totals = np.asarray(totals, dtype=np.float64)
    return totals[0], totals[1 : 1 + d], totals[1 + d :]


def exact_column_scaling(X, sample_weight=None, *, center=True):
    """Every column's exact weighted mean and standard deviation, on the cluster.

    The map of a non-private Dask fit, the in-memory one's
    (:func:`~sklearn_dpfair._solvers._feature_scaling.exact_feature_scaling`,
    :func:`~sklearn_dpfair._solvers._non_private.column_moments`) computed
    from the partitions' sums. Nothing is released without privacy, and the
    noiseless steps keep the public step size sized for columns of unit
    scale: on raw columns (a year near 2000, a price near 1e5) their
    gradients would otherwise never reach the minimizer (log-loss 137
    against lbfgs's 0.527 on the raw columns of the tests).
    Weighted as the fit weighs its rows, so that integer weights and
    repeated rows give the same columns, and a row of weight 0 is absent (an
    outlier of weight 0 does not stretch its column). Three passes, as in
    memory: each column's largest ``|x|`` over the rows of positive weight,
    divided by the power of two above it
    (:func:`~sklearn_dpfair.utils._numeric.power_of_two_magnitudes`, exact)
    so that a record at 1e300 overflows neither a square nor a sum; then
    the means; then the centred squares, so that a column at 1e5 with a
    spread of 1e-3 keeps its spread. Without ``center`` (no intercept: a
    centred model would need one) the columns are scaled by their root mean
    squares. A column constant within rounding
    (:func:`~sklearn_dpfair.utils._numeric.constant_columns`), or of a
    spread below the smallest normal float's root or beyond the largest
    float, keeps scale 1; one whose largest ``|x|`` is not finite (an
    ``inf`` or ``nan``, which the partitions then refuse as the in-memory
    fit does) keeps location 0 and scale 1.

    Parameters
    ----------
    X : dask.array.Array of shape (n_samples, n_features)
    sample_weight : dask.array.Array of shape (n_samples,) or None, default=None
        Finite, non-negative weights, not all 0, cut into the row chunks of
        ``X``; only their ratios matter. None: every row of weight 1.
    center : bool, default=True

    Returns
    -------
    scaling : FeatureScaling
    """
    import dask
    import dask.array as da

    # Whole rows in a block (one partial sum per block), converted block by
    # block on the workers, redacting a failure's message there (a string
    # cell is quoted in it).
    X = X.rechunk({1: -1}).map_blocks(_as_float64, dtype=np.float64)
    weights = None
    if sample_weight is not None:
        weights = sample_weight.astype(np.float64).rechunk((X.chunks[0],))[:, None]
    n, d = X.shape
    (largest,) = dask.compute(
        da.map_blocks(
            _block_abs_max,
            X,
            weights,
            chunks=((1,) * X.numblocks[0], (d,)),
            dtype=np.float64,
        ).max(axis=0),
        optimize_graph=False,
    )
    largest = np.asarray(largest, dtype=np.float64)
    magnitude = power_of_two_magnitudes(largest)
    mean = np.zeros(d)
    if center:
        total, sums, _ = _weighted_sums(X, weights, magnitude, mean)
        mean = sums / total
    total, _, second = _weighted_sums(X, weights, magnitude, mean)
    # column_moments' rule, on the same moments of the same scaled columns.
    var = np.maximum(second, 0.0) / total
    constant = constant_columns(var, mean, n) if center else var == 0
    with np.errstate(over="ignore", invalid="ignore"):
        scale = np.sqrt(var) * magnitude
        location = mean * magnitude
    tiny = ~(scale >= _SMALLEST_SPREAD)
    scale[constant | tiny | ~np.isfinite(scale)] = 1.0
    unusable = ~np.isfinite(largest) | ~np.isfinite(location)
    location[unusable] = 0.0
    scale[unusable] = 1.0
    return FeatureScaling(location, scale)


def distribute_training_data(
    X,
    y,
    sample_weight,
    *,
    classes,
    delta,
    fit_intercept,
    private,
    sensitive_features=None,
    groups=None,
    scaling=None,
    estimator_name=None,
):
    """Persist the partitions of a Dask fit, each once on its worker.

    Nothing row-sized comes back to the driver: the label set (when it is
    inferred, with a ``PrivacyLeakWarning``), the range of the public
    weights (their validation; without privacy also their sum), the
    partition lengths and, without privacy, the
    columns' exact scaling (:func:`exact_column_scaling`: per column its
    largest magnitude, mean and spread, d values each) are the only values
    computed.

    Parameters
    ----------
    X : dask.array.Array or dask.dataframe.DataFrame of shape (n_samples, n_features)
    y : dask or in-memory array-like of shape (n_samples,)
    sample_weight : dask or in-memory array-like of shape (n_samples,), float or None
        Public weights, used as given by a private fit and rescaled to mean
        1 without privacy (:func:`~sklearn_dpfair.privacy.fit_weights`);
        weights that are the unweighted fit are dropped. A number is every
        row's weight, as in scikit-learn; an array must be 1-D.
    classes : array-like or None
        The public label set; None infers it from ``y``, with a warning.
    delta : float
        Checked against ``1/n``.
    fit_intercept : bool
        Whether the rows are augmented with ``s = 1``.
    private : bool
        Whether the fit is private: it then reads nothing from the weights.
    sensitive_features : dask or in-memory array-like of shape (n_samples,) \
            or (n_samples, n_columns), default=None
        Group membership of a fair fit, encoded on the workers against
        ``groups``; a missing value raises. None: no group codes.
    groups : array-like or None, default=None
        The public group set; None infers it from a one-column
        ``sensitive_features`` (the caller warns: it is read from the
        private data).
    scaling : FeatureScaling or None, default=None
        A public column map (of declared ``feature_bounds``) every worker
        applies to its partition as it loads it; the data record it
        (``data.scaling``) so that the fit reports the model in the user's
        units. Without privacy the columns are standardized by their exact
        moments instead (:func:`exact_column_scaling`), weighted by
        ``sample_weight``, map or not: nothing is released, and columns
        mapped by bounds of ``+-w`` standard deviations spread over ``1/w``
        of the unit scale the steps are sized for, so that the epochs would
        stop far from the minimizer.
    estimator_name : str or None, default=None
        Named by the error that refuses an ``X`` of no rows, as
        scikit-learn's ``check_array`` names the estimator.

    Returns
    -------
    data : DaskTrainingData
    """
    import dask
    import distributed
    import pandas as pd

    client = _current_client()
    lengths = _frame_lengths(X, y, sample_weight, sensitive_features)
    X = _as_dask_array(X, "X", lengths=lengths)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-d; got a Dask array of shape {X.shape}.")
    # Whole rows in every block: a partition is a set of records.
    X = X.rechunk({1: -1})
    row_chunks = X.chunks[0]
    n_samples = int(sum(row_chunks))
    if n_samples == 0:
        # As in memory, before anything is planned or persisted (the
        # schedule divides by n).
        _refuse_no_rows(X.shape, estimator_name)
    y = _as_dask_array(y, "y", row_chunks, lengths)
    # As scikit-learn's column_or_1d reads y in memory, from its public
    # shape: a column vector is raveled with a warning, more columns are
    # refused (the blocks of a y chunked along its columns would otherwise
    # pair with other rows' blocks of X).
    if y.ndim == 2 and y.shape[1] == 1:
        warn_at_caller(
            "A column-vector y was passed when a 1d array was expected. "
            "Please change the shape of y to (n_samples, ), for example "
            "using ravel().",
            DataConversionWarning,
        )
        y = y[:, 0]
    elif y.ndim != 1:
        raise ValueError(
            f"y should be a 1d array, got an array of shape {y.shape} instead."
        )
    caveats = ()
    if classes is None:
        # The label set is a few values, computed on the cluster, in their
        # order of appearance (labels of mixed types do not sort).
        observed = _distinct_values(y)
        # As a classifier's fit in memory: a continuous or missing label is
        # refused (the distinct values tell as all of y would); a missing
        # one first, as _check_y refuses it, before the target type's
        # integer cast of NaN warns.
        assert_all_finite(observed, input_name="y")
        check_classification_targets(observed)
        classes, _, inferred = resolve_classes(None, observed)
        caveats = tuple(inferred)
    else:
        classes, _, _ = resolve_classes(classes, np.asarray(classes))
    check_delta_for_n(delta, n_samples)
    weight_blocks = [None] * len(row_chunks)
    weight_scale = None
    # The weights of the exact scaling (None: unweighted).
    scaling_weights = None
    if sample_weight is not None:
        w = _weights_as_dask_array(sample_weight, row_chunks, lengths)
        # Not optimized, as the partitions are loaded: the same keys with
        # the same tasks.
        w_max, w_min = dask.compute(w.max(), w.min(), optimize_graph=False)
        if not (np.isfinite(w_max) and np.isfinite(w_min) and w_min >= 0):
            raise ValueError("sample_weight must be finite and non-negative.")
        if not w_max > 0:
            raise ValueError("sample_weight are all zero: there is nothing to fit.")
        if private and not (w_min == w_max == 1.0):
            # As given (fit_weights): nothing the analysis fixes is read
            # from the weights.
            weight_scale = (1.0, 1.0)
            weight_blocks = list(w.to_delayed(optimize_graph=False).ravel())
        elif not private and w_min != w_max:
            # Without privacy, the in-memory rescaling to mean 1.
            scaling_weights = w / w_max
            w_sum = float(scaling_weights.sum().compute(optimize_graph=False))
            weight_scale = (float(w_max), n_samples / w_sum)
            weight_blocks = list(w.to_delayed(optimize_graph=False).ravel())
    exact_scaling = not private
    if exact_scaling:
        # Read after the weights are validated: weighted as the fit weighs
        # its rows (a row of weight 0 is absent), as in memory.
        scaling = exact_column_scaling(X, scaling_weights, center=fit_intercept)
    sensitive_blocks = [None] * len(row_chunks)
    if sensitive_features is not None:
        sf = _as_dask_array(
            sensitive_features, "sensitive_features", row_chunks, lengths
        )
        if groups is None:
            if sf.ndim != 1 and not (sf.ndim == 2 and sf.shape[1] == 1):
                raise ValueError(
                    "Dask sensitive_features with several columns need "
                    "groups=[...] declared (the intersectional groups)."
                )
            # The group set is a few values, computed on the cluster in
            # their order of appearance, and encoded as in memory (sorted
            # where they sort, as they came otherwise).
            observed = _distinct_values(sf)
            if np.any(pd.isna(observed)):
                raise ValueError(_MISSING_GROUPS)
            groups = encode_sensitive_features(observed).groups
        else:
            groups = encode_sensitive_features(
                np.asarray(groups, dtype=object)[:0], groups=groups
            ).groups
        if sf.ndim == 2:
            sf = sf.rechunk({1: -1})
        sensitive_blocks = list(sf.to_delayed(optimize_graph=False).ravel())
    s = 1.0 if fit_intercept else 0.0
    # Every block below is taken with optimize_graph=False: each array's own
    # optimization would rename (fuse) the tasks it shares with the others,
    # and one compute would then run the shared upstream work (reading or
    # drawing a block that yields both X and y) once per array.
    # Keys unique to this fit: a previous fit on the same data releasing its
    # partitions must not cancel these.
    load = dask.delayed(_load_partition, pure=False)
    parts = [
        load(xb, yb, wb, classes, weight_scale, s, sb, groups, scaling)
        for xb, yb, wb, sb in zip(
            X.to_delayed(optimize_graph=False).ravel(),
            y.to_delayed(optimize_graph=False).ravel(),
            weight_blocks,
            sensitive_blocks,
        )
    ]
    futures = client.compute(parts)
    sizes = [int(c) for c in row_chunks]
    dtype = np.dtype(np.float32 if X.dtype == np.float32 else np.float64)
    # Wait for them where they are (gathering would bring the rows here);
    # input errors surface now, once, from the first partition that failed.
    distributed.wait(futures)
    failed = [f for f in futures if f.status == "error"]
    if failed:
        try:
            failed[0].result()
        finally:
            client.cancel(futures)
    # Keep the non-empty partitions.
    kept = [(f, n) for f, n in zip(futures, sizes) if n > 0]
    client.cancel([f for f, n in zip(futures, sizes) if n == 0])
    return DaskTrainingData(
        client=client,
        partitions=[f for f, _ in kept],
        sizes=[n for _, n in kept],
        n_features=int(X.shape[1]),
        dtype=dtype,
        classes=classes,
        caveats=caveats,
        # Passed (public), not "not all 1": the record may not depend on them.
        weighted=sample_weight is not None,
        # The auto dual step's bound on the weights: 1 under privacy (the
        # data's largest weight is never read), the rescaled maximum without.
        max_weight=1.0 if weight_scale is None or private else weight_scale[1],
        groups=None if sensitive_features is None else groups,
        scaling=scaling,
        exact_scaling=exact_scaling,
        private=bool(private),
    )


@dataclass(frozen=True)
class _StepConfig:
    """Public constants every partition step needs (sent with each step)."""

    model: LinearModel
    loss: object
    sampling_probability: float
    clip_norm: float
    entropy: int


def partition_clipped_sum(part, coef, w0, *, model, loss, sampling_probability,
                          clip_norm, rng):
    """Clipped gradient sum of one partition's Poisson-sampled rows.

    Every row of ``part`` joins the batch independently with probability
    ``sampling_probability`` (drawn from ``rng``); the per-example gradients
    ``r_i [x_i, s]`` of those rows (times their public weights) are clipped
    to ``clip_norm`` and summed by the linear-model layer ``model``, the
    same code as the in-memory DP-SGD step. Whatever one record holds, its
    term is finite and within the clip norm.

    Returns
    -------
    coef_block, intercept_block : ndarray
        Shapes ``(n_features, n_outputs)`` and ``(n_outputs,)``.
    """
    if sampling_probability >= 1.0:
        Xb, yb, norms_b, wb = part.X, part.y, part.row_norms, part.weights
    else:
        idx = poisson_batch(rng, part.X.shape[0], sampling_probability)
        Xb, yb, norms_b = take_rows(part.X, idx), part.y[idx], part.row_norms[idx]
        wb = None if part.weights is None else part.weights[idx]
    raw_grad = weighted_raw_gradient(
        loss.raw_gradient(yb, model.raw_predictions(Xb, coef, w0)), wb
    )
    return model.clipped_gradient_sum(Xb, raw_grad, norms_b, clip_norm)


def partition_rng(entropy, index, step):
    """The generator of partition ``index`` at step ``step`` of a fit.

    ``SeedSequence(entropy, spawn_key=(index, step))``: the ``[index][step]``
    child of the fit's root entropy, independent across partitions and
    steps, and the same when Dask re-runs the task after losing a worker.

    Examples
    --------
    >>> from sklearn_dpfair._solvers._distributed import partition_rng
    >>> a, b = partition_rng(7, 0, 1).random(), partition_rng(7, 0, 1).random()
    >>> a == b != partition_rng(7, 1, 1).random()
    True
    """
    return np.random.default_rng(
        np.random.SeedSequence(entropy, spawn_key=(index, step))
    )


def _partition_step(part, index, *, coef, w0, step, config):
    """Worker task: the clipped sum of partition ``index`` at step ``step``."""
    return partition_clipped_sum(
        part,
        coef,
        w0,
        model=config.model,
        loss=config.loss,
        sampling_probability=config.sampling_probability,
        clip_norm=config.clip_norm,
        rng=partition_rng(config.entropy, index, step),
    )


def sum_over_partitions(data, task, **kwargs):
    """Run ``task(part, index, **kwargs)`` on every partition; add the results.

    One task per partition, scheduled where the partition lives; the keyword
    arguments (public parameters, ``O(d K)``) travel with the tasks. Each
    task returns a tuple of arrays; the tuples are added element-wise on the
    driver in partition order (a fixed summation order). A worker lost for
    good raises ``RuntimeError`` (no model is released).
    """
    from distributed import KilledWorker

    futures = data.client.map(
        task,
        data.partitions,
        range(len(data.partitions)),
        **kwargs,
        pure=False,
    )
    try:
        sums = data.client.gather(futures)
    except (KilledWorker, concurrent.futures.CancelledError) as exc:
        raise RuntimeError(_WORKER_LOST) from exc
    total = [np.array(a, copy=True) for a in sums[0]]
    for part in sums[1:]:
        for acc, a in zip(total, part):
            acc += a
    return tuple(total)


def _label_counts(part, index, *, n_classes):
    """Worker task: the (weighted) class counts of one partition."""
    return (label_counts(part.y, n_classes, part.weights),)


def partition_label_counts(data, n_classes):
    """The exact class counts of the whole collection, added up on the driver.

    What the intercept-only release privatizes
    (:mod:`._intercept_only`); only ``n_classes`` numbers per partition
    travel.
    """
    return sum_over_partitions(data, _label_counts, n_classes=n_classes)[0]


def _beyond_unit_scale(part, index, *, step):
    """Worker task: per column, the read rows beyond the unit-scale limit."""
    rows = part.X[::step]
    return count_beyond_unit_scale(rows), np.array([rows.shape[0]])


def partition_columns_off_unit_scale(data):
    """:func:`._feature_scaling.columns_off_unit_scale` of the whole collection.

    Every partition counts every ``step``-th of its rows, the stride that
    reads at most 10,000 rows of the whole, and only ``n_features + 1``
    counts per partition travel; the driver adds them.
    """
    counts, rows = sum_over_partitions(
        data, _beyond_unit_scale, step=scale_check_step(data.n_samples)
    )
    return off_unit_scale(counts, int(rows[0]))


def _errors_and_counts(part, index, *, model, coef, w0, n_classes):
    """Worker task: a linear model's training errors and the class counts."""
    predicted = np.argmax(model.raw_predictions(part.X, coef, w0), axis=1)
    y = part.y.astype(np.intp)
    return (
        np.array([np.count_nonzero(predicted != y)], dtype=np.float64),
        label_counts(y, n_classes),
    )


def partition_constant_comparison(data, model, coef, w0, n_classes):
    """The private choice's exact comparison of a model with ``n_classes`` logits.

    :func:`._constant_choice.constant_comparison` of the whole collection:
    its workers count the model's errors (the class of the largest logit of
    ``model.raw_predictions``) and the classes of their rows, and the driver
    adds the counts up.
    """
    errors, counts = sum_over_partitions(
        data, _errors_and_counts, model=model, coef=coef, w0=w0, n_classes=n_classes
    )
    return comparison_from_counts(errors[0], counts, data.n_samples)


def _clipped_sum(data, coef, w0, step, config):
    """Broadcast the parameters, gather one clipped sum per partition, add them."""
    return sum_over_partitions(
        data, _partition_step, coef=coef, w0=w0, step=step, config=config
    )


def fit_dp_sgd_dask(data, loss, setup, *, rng, progress=None):
    """DP-SGD on persisted Dask partitions; noise added once on the driver.

    Executes the same set-up (schedule, mechanism, record) and update as
    :func:`~sklearn_dpfair._solvers._private_fit.fit_dp_sgd`: ``T =
    ceil(epochs / q)`` steps, each the Gaussian mechanism on the sum of the
    partitions' clipped sums, divided by the expected batch size ``q n``;
    the coefficients are the average of the last half of the iterates.

    Without privacy (``data.private`` False) the steps run on mapped
    columns (``data.scaling``: the exact standardization, or declared
    bounds) and minimize the documented objective in the user's units,
    the mean (weighted) loss plus ``(alpha/2) ||w||^2`` of the returned
    coefficients ``w``: the penalty on the fitted coefficients is
    :func:`~._feature_scaling.penalty_in_scaled_units`, taken by its exact proximal step
    (:func:`~sklearn_dpfair._solvers._sgd.sgd_loop`'s ``column_alpha``). The
    rows stay on the workers (the in-memory fit's exact L-BFGS-B solve
    would need them on the driver), so the result is the tail average of
    the noiseless, still clipped, steps: within the epochs' convergence of
    the minimizer, not at it. A private fit penalizes the coefficients of
    the mapped columns, as its plan and the in-memory private fit do.

    Parameters
    ----------
    data : DaskTrainingData
        From :func:`distribute_training_data`.
    loss : object
        Pointwise loss with ``n_outputs`` and ``raw_gradient(y, raw)``.
    setup : DPSGDSetup
        The plan of the fit
        (:func:`~sklearn_dpfair._solvers._private_fit.dp_sgd_setup` for
        ``data.n_samples`` rows of ``data.n_features`` columns, with the
        caveats of ``data``, the label set's).
    rng : numpy.random.Generator
        The fit's generator: the noise, and the root of the partitions'
        streams.
    progress : Progress or None, default=None
        Told after every epoch, from released quantities only, as in the
        in-memory fit (:func:`~sklearn_dpfair._solvers._sgd.sgd_loop`).

    Returns
    -------
    fit : LinearFit
    """
    check_planned_shape(setup, (data.n_samples, data.n_features))
    params = setup.params
    if setup.batches_per_epoch is not None:
        # The workers draw Poisson batches only.
        raise ValueError(
            "A Dask fit samples Poisson batches; use batch_sampling='poisson'."
        )
    model = LinearModel(
        loss.n_outputs, intercept_scaling=1.0 if params.fit_intercept else 0.0
    )
    config = _StepConfig(
        model=model,
        loss=loss,
        sampling_probability=setup.sampling_probability,
        clip_norm=setup.mechanism.clip_norm,
        # Root of every partition's stream, from the fit's private generator.
        entropy=int.from_bytes(rng.bytes(16), "little"),
    )
    coef = np.zeros((data.n_features, loss.n_outputs), dtype=data.dtype)
    w0 = np.zeros(loss.n_outputs, dtype=data.dtype)
    alpha, column_alpha = params.alpha, None
    if not data.private and data.scaling is not None and alpha > 0:
        # The penalty of the documented objective, (alpha/2) ||w||^2, is on
        # the coefficients in the user's units, w_j = v_j / scale_j: on the
        # fitted ones v it is (alpha / scale_j^2) / 2 v_j^2 (a column in
        # units of 0.01 at alpha = 0.01: 100), taken by its exact proximal
        # step (sgd_loop), which a tiny scale cannot make diverge. A private
        # fit keeps its steps as planned (the penalty on the scaled
        # coefficients, as in memory).
        alpha, column_alpha = 0.0, penalty_in_scaled_units(
            params.alpha, data.scaling
        )

    def clipped_sum(t, coef, w0):
        # The workers' part of the step; the noise (added once, on the
        # driver), the division by q n and the update are the in-memory
        # loop's.
        return _clipped_sum(data, coef, w0, t, config)

    result = sgd_loop(
        clipped_sum,
        model,
        coef,
        w0,
        mechanism=setup.mechanism,
        n_steps=setup.n_steps,
        denominator=setup.sampling_probability * data.n_samples,
        learning_rate=setup.learning_rate,
        alpha=alpha,
        rng=rng,
        column_alpha=column_alpha,
        progress=(
            None
            if progress is None
            else progress.per(
                setup.n_steps, resolve_epochs(params.epochs, data.n_samples)
            )
        ),
    )
    # Partitions mapped by a public scaling: the model back in raw units.
    return in_user_units(
        LinearFit(
            result.coef.T,
            result.intercept,
            setup.n_steps,
            as_run_record(setup.record, data),
        ),
        data.scaling,
    )
