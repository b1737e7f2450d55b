# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The partition-level clipped sums of DP-SGD on Dask.

One LocalCluster with two worker processes (the ``dask_client`` fixture)
serves the whole module.
"""

import warnings

import numpy as np
import pytest

from sklearn_dpfair._loss import BinaryLogisticLoss, SoftmaxLoss
from sklearn_dpfair._solvers import _distributed
from sklearn_dpfair._solvers._distributed import (
    distribute_training_data,
    is_dask_collection,
    partition_clipped_sum,
)
from sklearn_dpfair._solvers._linear import (
    LinearModel,
    augmented_row_norms,
    clipped_gradient_sum,
)

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1000, 6)) * rng.uniform(0.1, 5, size=6)
    X[3] = [1e300, -1e300, 1e200, 0.0, 1.0, 2.0]  # a huge record
    y = rng.integers(0, 3, size=1000)
    return X, y


def _config(loss, q, clip_norm, s=1.0, entropy=123):
    return _distributed._StepConfig(
        model=LinearModel(loss.n_outputs, s),
        loss=loss,
        sampling_probability=q,
        clip_norm=clip_norm,
        entropy=entropy,
    )


def _persist(X, y, chunks, **kw):
    kw = {
        "classes": [0, 1, 2], "delta": 1e-5, "fit_intercept": True, "private": True,
        **kw,
    }
    return distribute_training_data(
        da.from_array(X, chunks=(chunks, -1)),
        da.from_array(y, chunks=chunks),
        None,
        **kw,
    )


@pytest.mark.parametrize("chunks", [1000, 333, 250])
def test_full_batch_sum_equals_in_memory_clipped_sum(dask_client, data, chunks):
    X, y = data
    loss = SoftmaxLoss(3)
    coef = np.random.default_rng(1).normal(size=(6, 3)) * 1e-3
    w0 = np.array([0.1, -0.2, 0.05])
    parts = _persist(X, y, chunks)
    try:
        got = _distributed._clipped_sum(parts, coef, w0, 0, _config(loss, 1.0, 1.0))
    finally:
        parts.release()
    with np.errstate(over="ignore", invalid="ignore"):
        raw = X @ coef + w0
    from sklearn_dpfair.utils._array_api import finite_linear_scores

    raw = finite_linear_scores(raw, X, coef, w0)
    expected = clipped_gradient_sum(
        X,
        loss.raw_gradient(y.astype(float), raw),
        augmented_row_norms(X, 1.0),
        1.0,
        1.0,
    )
    np.testing.assert_allclose(got[0], expected[0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(got[1], expected[1], rtol=0, atol=1e-12)


def test_partition_streams_are_independent_and_deterministic(dask_client):
    # Two identical partitions: the same rows, so the same sum iff the same
    # Poisson draw. Their streams must differ, but a re-run of a step (a
    # task Dask retries after losing a worker) must draw the same rows.
    X = np.tile(np.random.default_rng(2).normal(size=(500, 3)), (2, 1))
    y = np.tile(np.arange(500) % 2, 2)
    loss = BinaryLogisticLoss()
    parts = _persist(X, y, 500, classes=[0, 1])
    coef, w0 = np.full((3, 1), 0.3), np.zeros(1)
    config = _config(loss, 0.3, 1.0)
    try:
        sums = [
            dask_client.submit(
                _distributed._partition_step,
                part,
                p,
                coef=coef,
                w0=w0,
                step=0,
                config=config,
            )
            .result()[0]
            for p, part in enumerate(parts.partitions)
        ]
        again = dask_client.submit(
            _distributed._partition_step,
            parts.partitions[0],
            0,
            coef=coef,
            w0=w0,
            step=0,
            config=config,
        ).result()[0]
        next_step = dask_client.submit(
            _distributed._partition_step,
            parts.partitions[0],
            0,
            coef=coef,
            w0=w0,
            step=1,
            config=config,
        ).result()[0]
    finally:
        parts.release()
    assert not np.allclose(sums[0], sums[1])
    assert not np.allclose(sums[0], next_step)
    np.testing.assert_array_equal(sums[0], again)


def test_every_clipped_term_within_clip_norm():
    # A one-row partition sampled with q = 1: its sum is its clipped term,
    # finite and within the clip norm whatever the row holds.
    loss = BinaryLogisticLoss()
    for row in ([1e308, -1e308, 1.0], [0.0, 0.0, 0.0], [5e-324, 1.0, 1e300]):
        X = np.array([row])
        part = _distributed._Partition(
            X=X, y=np.ones(1), weights=np.array([1e300]),
            row_norms=augmented_row_norms(X, 1.0),
        )
        g, b = partition_clipped_sum(
            part, np.full((3, 1), 2.0), np.zeros(1), model=LinearModel(1, 1.0),
            loss=loss, sampling_probability=1.0, clip_norm=0.5,
            rng=np.random.default_rng(0),
        )
        norm = np.sqrt(np.sum(g**2) + np.sum(b**2))
        assert np.isfinite(norm) and norm <= 0.5 * (1 + 1e-12)


def test_lost_partitions_raise_a_clear_error(dask_client, data):
    X, y = data
    parts = _persist(X, y, 500)
    # Data that cannot be recomputed (cancelled futures) is a lost fit.
    dask_client.cancel(parts.partitions)
    with pytest.raises(RuntimeError, match="worker was lost"):
        _distributed._clipped_sum(
            parts, np.zeros((6, 3)), np.zeros(3), 0, _config(SoftmaxLoss(3), 0.5, 1.0)
        )


def test_persisted_once_and_nothing_row_sized_on_the_driver(dask_client, data):
    X, y = data
    parts = _persist(X, y, 250)
    try:
        assert len(parts.partitions) == 4 and parts.sizes == [250] * 4
        # Each partition lives on exactly one worker.
        who = dask_client.who_has(parts.partitions)
        assert all(len(w) == 1 for w in who.values())
    finally:
        parts.release()


def test_is_dask_collection():
    assert is_dask_collection(da.zeros((3, 2)))
    assert not is_dask_collection(np.zeros((3, 2)))
    assert not is_dask_collection([[1.0]])


@pytest.mark.parametrize("chunks", [1000, 333])
def test_partition_counts_add_up_to_the_in_memory_ones(dask_client, data, chunks):
    # The small-budget releases' statistics, counted on the workers and
    # added on the driver (integer counts: exact).
    from sklearn_dpfair._solvers._constant_choice import constant_comparison
    from sklearn_dpfair._solvers._intercept_only import label_counts

    X, y = data
    model = LinearModel(3, 1.0)
    coef = np.random.default_rng(2).normal(size=(6, 3))
    w0 = np.array([0.3, -0.1, 0.0])
    parts = _persist(X, y, chunks)
    try:
        counts = _distributed.partition_label_counts(parts, 3)
        comparison = _distributed.partition_constant_comparison(
            parts, model, coef, w0, 3
        )
    finally:
        parts.release()
    np.testing.assert_array_equal(counts, label_counts(y, 3))
    with np.errstate(over="ignore", invalid="ignore"):
        predicted = np.argmax(model.raw_predictions(X, coef, w0), axis=1)
    np.testing.assert_array_equal(comparison, constant_comparison(y, predicted, 3))


def _scaling_data():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(600, 3)) * [1.0, 100.0, 1e-3] + [500.0, 0.0, 1e5]
    w = rng.integers(0, 4, size=600).astype(float)
    return X, w


def _dask_scaling(X, w, center):
    import dask

    with dask.config.set(scheduler="synchronous"):
        return _distributed.exact_column_scaling(
            da.from_array(X, chunks=(150, -1)),
            da.from_array(w, chunks=150),
            center=center,
        )


def _assert_same_scaling(a, b):
    np.testing.assert_allclose(a.location, b.location, rtol=1e-10)
    np.testing.assert_allclose(a.scale, b.scale, rtol=1e-10)


@pytest.mark.parametrize("center", [True, False])
def test_exact_column_scaling_is_weighted_as_in_memory(center):
    from sklearn_dpfair._solvers._feature_scaling import exact_feature_scaling

    X, w = _scaling_data()
    # An outlier of weight 0 is absent, as in memory: it stretched its
    # column (every row was read unweighted), and the model lost it.
    X[7], w[7] = [1e8, 0.0, 0.0], 0.0
    scaling = _dask_scaling(X, w, center)
    _assert_same_scaling(scaling, exact_feature_scaling(X, w, center=center))
    kept = w > 0
    _assert_same_scaling(
        scaling, exact_feature_scaling(X[kept], w[kept], center=center)
    )
    # Integer weights standardize as repeated rows do.
    repeated = np.repeat(X, w.astype(int), axis=0)
    _assert_same_scaling(scaling, exact_feature_scaling(repeated, center=center))
    # Whatever its magnitude: the rows of weight 0 are dropped before any
    # of their values is read.
    X[9], w[9] = [0.0, -1e300, np.nan], 0.0
    kept = w > 0
    _assert_same_scaling(
        _dask_scaling(X, w, center),
        exact_feature_scaling(X[kept], w[kept], center=center),
    )


def test_distinct_values_keep_their_order_of_appearance():
    import dask

    labels = np.array([2, "b", 2, None, 1, "b", 3.5], dtype=object)
    with dask.config.set(scheduler="synchronous"):
        # Mixed types do not sort: da.unique raised a TypeError.
        observed = _distributed._distinct_values(da.from_array(labels, chunks=3))
        numbers = _distributed._distinct_values(
            da.from_array(np.array([3, 1, 3, 2]), chunks=2)
        )
    assert observed.tolist() == [2, "b", None, 1, 3.5]
    assert numbers.tolist() == [3, 1, 2] and numbers.dtype == np.int64


def test_unknown_chunk_sizes_are_counted_without_a_key_conflict():
    # compute_chunk_sizes submitted the optimized graph (the mask's tasks
    # renamed under their keys), the partitions the unoptimized one: the
    # scheduler warned of one key with two definitions, which it says can
    # deadlock.
    import logging

    class Collect(logging.Handler):
        def __init__(self):
            super().__init__(logging.WARNING)
            self.messages = []

        def emit(self, record):
            self.messages.append(record.getMessage())

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] > 0).astype(int)
    handler = Collect()
    logger = logging.getLogger("distributed.scheduler")
    logger.addHandler(handler)
    try:
        with distributed.Client(
            processes=False, n_workers=1, threads_per_worker=1, dashboard_address=":0"
        ):
            Xd = da.from_array(X, chunks=(77, -1))
            keep = Xd[:, 0] > -100
            Xk, yk = Xd[keep], da.from_array(y, chunks=77)[keep]
            data = distribute_training_data(
                Xk, yk, None, classes=[0, 1], delta=1e-5, fit_intercept=True,
                private=True,
            )
            assert data.sizes == [77, 77, 77, 69]
            data.release()
    finally:
        logger.removeHandler(handler)
    assert not [m for m in handler.messages if "run_spec" in m]
    # The caller's array is not changed in place.
    assert np.isnan(Xk.chunks[0][0])


def test_x_of_no_rows_or_one_dimension_is_refused_before_anything_runs():
    from sklearn_dpfair import DPLogisticRegression

    X = np.zeros((0, 3))
    clf = DPLogisticRegression(classes=[0, 1])
    with pytest.raises(
        ValueError,
        match=r"^Found array with 0 sample\(s\) \(shape=\(0, 3\)\) while a minimum "
        r"of 1 is required by DPLogisticRegression\.$",
    ):
        _distributed.set_dask_input_features(clf, da.from_array(X, chunks=(5, -1)))
    with pytest.raises(ValueError, match=r"^X must be 2-d; got a Dask array of shape"):
        _distributed.set_dask_input_features(clf, da.from_array(np.zeros(4), chunks=2))
    assert not hasattr(clf, "n_features_in_")


def _small_rows(n=40):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(n, 2))
    return X, (X[:, 0] > 0).astype(int)


def _distribute(X, y, sample_weight=None, chunks=20, **kw):
    kw = {
        "classes": [0, 1], "delta": 1e-5, "fit_intercept": True, "private": True,
        **kw,
    }
    if not is_dask_collection(X):
        X = da.from_array(X, chunks=(chunks, -1))
    if isinstance(y, np.ndarray):
        y = da.from_array(y, chunks=chunks)
    return distribute_training_data(X, y, sample_weight, **kw)


def _weights_of(client, data):
    return np.concatenate([p.weights for p in client.gather(data.partitions)])


@pytest.mark.parametrize("on_dask", [False, True])
@pytest.mark.parametrize("shape", [(40, 2), (40, 1), ()])
def test_sample_weight_not_1d_is_refused_as_in_memory(dask_client, on_dask, shape):
    # Raveled by the partitions, an (n, 2) array gave row i the weight
    # W.ravel()[i], another row's.
    X, y = _small_rows()
    w = np.ones(shape)
    if on_dask and shape:
        w = da.from_array(w, chunks=(10, -1))
    with pytest.raises(
        ValueError,
        match=rf"^Sample weights must be 1D array or scalar, got {len(shape)}D "
        r"array\. Expected either a scalar value or a 1D array of length 40\.$",
    ):
        _distribute(X, y, w)


def test_partition_refuses_weights_that_are_not_one_per_row():
    X, y = _small_rows(4)
    with pytest.raises(ValueError, match=r"^sample_weight has shape \(4, 2\) in a"):
        _distributed._load_partition(
            X, y, np.ones((4, 2)), np.array([0, 1]), (1.0, 1.0), 1.0
        )


def test_scalar_sample_weight_is_every_rows_weight(dask_client):
    # As scikit-learn's _check_sample_weight: a number is every row's
    # weight (it raised an IndexError, a number having no rows to cut).
    X, y = _small_rows()
    data = _distribute(X, y, 2.0)
    try:
        assert data.weighted
        np.testing.assert_array_equal(
            _weights_of(dask_client, data), np.full(40, 2.0)
        )
    finally:
        data.release()


@pytest.mark.parametrize("which", ["y", "sample_weight", "sensitive_features"])
def test_in_memory_input_of_another_length_is_named(dask_client, which):
    # da.from_array's "Chunks do not add up to shape" named no input.
    X, y = _small_rows()
    inputs = {"y": y, "sample_weight": None, "sensitive_features": None}
    # A list stays in memory (_distribute cuts numpy labels into chunks).
    inputs[which] = [1] * 39
    with pytest.raises(ValueError, match=rf"^{which} has 39 rows, X has 40\.$"):
        _distribute(
            X, inputs["y"], inputs["sample_weight"],
            sensitive_features=inputs["sensitive_features"], groups=[0, 1],
        )


def test_missing_label_with_declared_classes_is_refused_as_in_memory(dask_client):
    # It was reported as a label outside the declared classes.
    X, y = _small_rows()
    y = y.astype(float)
    y[13] = np.nan
    with pytest.raises(ValueError, match=r"^Input y contains NaN\.$"):
        _distributed._load_partition(X, y, None, np.array([0, 1]), None, 1.0)
    with pytest.raises(ValueError, match=r"^Input y contains NaN\.$"):
        _distribute(X, y)


@pytest.mark.parametrize("dtype", ["Int64", "boolean"])
def test_nullable_y_is_read_as_floats_as_in_memory(dtype):
    # Dask turns a nullable column into objects holding pd.NA, whose
    # inferred label set was refused as "Unknown label type: unknown";
    # scikit-learn reads it as floats in memory, pd.NA as NaN.
    import dask

    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    from sklearn.utils.multiclass import check_classification_targets

    X, y = _small_rows()
    labels = pd.Series(y.astype(bool) if dtype == "boolean" else y).astype(dtype)
    missing = labels.copy()
    missing[7] = pd.NA
    with dask.config.set(scheduler="synchronous"):
        observed = _distributed._distinct_values(
            _distributed._as_dask_array(
                dd.from_pandas(labels, npartitions=2), "y", (20, 20)
            )
        )
        yd = _distributed._as_dask_array(
            dd.from_pandas(missing, npartitions=2), "y", (20, 20)
        )
        assert yd.dtype == np.float64
        values = yd.compute()
    np.testing.assert_array_equal(np.isnan(values), np.arange(40) == 7)
    check_classification_targets(observed)
    assert sorted(observed.tolist()) == [0.0, 1.0]
    with pytest.raises(ValueError, match=r"^Input y contains NaN\.$"):
        _distributed._load_partition(X, values, None, np.array([0, 1]), None, 1.0)


def test_partition_rows_summing_to_inf_minus_inf_raise_no_numpy_warning():
    # scikit-learn's finiteness check sums X first: rows of +1.7e308 and
    # -1.7e308 made numpy warn "invalid value encountered in reduce".
    X = np.ones((4, 2))
    X[0], X[1] = 1.7e308, -1.7e308
    y = np.array([0.0, 1.0, 0.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        _distributed._load_partition(X, y, None, np.array([0, 1]), None, 1.0)


def test_a_weight_that_is_no_number_is_not_quoted_on_the_workers():
    # The weights were converted by a Dask astype task, whose failure the
    # worker logs with numpy's message ("could not convert string to float:
    # 'SECRET_W'") before the driver redacts it. The task now redacts it.
    import dask

    weights = np.ones(10, dtype=object)
    weights[3] = "SECRET_W"
    lazy = _distributed._weights_as_dask_array(
        da.from_array(weights, chunks=5), (5, 5), None
    )
    with dask.config.set(scheduler="sync"):
        with pytest.raises(ValueError) as raised:
            lazy.compute()
    assert "SECRET" not in str(raised.value)
    assert str(raised.value).startswith("Input sample_weight: could not convert")
