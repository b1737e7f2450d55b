# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""DPLogisticRegression on Dask collections: the in-memory model and guarantee.

The data stay on the workers.

One LocalCluster with two worker processes (the ``dask_client`` fixture)
serves the whole module.
"""

import os
import signal
import warnings

import numpy as np
import pytest
from refusing_ledger import RefusingLedger
from release_observer import Releases
from sklearn.exceptions import DataConversionWarning

from sklearn_dpfair import DPLogisticRegression
from sklearn_dpfair._solvers import _distributed
from sklearn_dpfair._solvers._feature_scaling import EXACT_SCALING_DESCRIPTION
from sklearn_dpfair.exceptions import PrivacyAccountingError, PrivacyLeakWarning
from sklearn_dpfair.privacy._mechanism import observe_privatize

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 5))
    y = (X[:, 0] - 0.5 * X[:, 1] + 0.3 * rng.normal(size=3000) > 0).astype(int)
    w = rng.uniform(0.2, 3.0, size=3000)
    return X, y, w


def _dask(*arrays, chunks=700):
    return [
        da.from_array(a, chunks=(chunks,) + (-1,) * (a.ndim - 1)) for a in arrays
    ]


# The Adult arrays are built on the driver and shipped in the graph (22 MiB),
# which Dask advises against; this test compares with in-memory fits, so the
# data start in memory on purpose.
@pytest.mark.filterwarnings("ignore:Sending large graph:UserWarning")
def test_adult_accuracy_matches_in_memory(dask_client, adult):
    X, y, X_test, y_test = adult
    kw = dict(epsilon=1.0, classes=[0, 1], max_iter=3)
    Xd, yd = _dask(X, y, chunks=8000)
    scores = {"memory": [], "dask": []}
    for seed in (0, 1):
        scores["memory"].append(
            DPLogisticRegression(random_state=seed, **kw)
            .fit(X, y)
            .score(X_test, y_test)
        )
        scores["dask"].append(
            DPLogisticRegression(random_state=seed, **kw)
            .fit(Xd, yd)
            .score(X_test, y_test)
        )
    # Different batches and noise, the same distribution: within noise of
    # each other (seed to seed, the in-memory accuracy varies by ~0.005).
    assert np.mean(scores["dask"]) > 0.83
    assert abs(np.mean(scores["dask"]) - np.mean(scores["memory"])) < 0.01


def test_never_converted_to_numpy_on_the_driver(dask_client, small, no_driver_arrays):
    X, y, w = small
    Xd, yd, wd = _dask(X, y, w)
    clf = DPLogisticRegression(classes=[0, 1], max_iter=2).fit(
        Xd, yd, sample_weight=wd
    )
    assert clf.score(X, y) > 0.8
    with pytest.warns(PrivacyLeakWarning):
        # Inferring the label set computes the few labels, not the column.
        DPLogisticRegression(max_iter=1).fit(Xd, yd)


def test_same_record_as_in_memory(dask_client, small):
    X, y, _ = small
    kw = dict(epsilon=0.8, delta=1e-6, classes=[0, 1], batch_size=300, max_iter=3)
    memory = DPLogisticRegression(**kw).fit(X, y)
    dask = DPLogisticRegression(**kw).fit(*_dask(X, y))
    assert dask.privacy_record_ == memory.privacy_record_
    assert dask.dp_event_ == memory.dp_event_
    assert dask.epsilon_ == memory.epsilon_ <= 0.8
    assert dask.t_ == memory.t_ == 30


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_non_private_full_batch_equals_in_memory(
    dask_client, small, weighted, n_classes
):
    # No noise, no sampling: the same gradient sums, added in another order.
    # (noise_multiplier=0: the DP-SGD loop; epsilon = inf alone is the
    # in-memory full-batch solve, which a Dask fit does not run.)
    X, y, w = small
    y = y + (X[:, 2] > 1) if n_classes == 3 else y
    w = w if weighted else None
    kw = dict(
        epsilon=np.inf,
        noise_multiplier=0.0,
        batch_size="full",
        max_iter=8,
        classes=np.arange(n_classes),
    )
    memory = DPLogisticRegression(**kw).fit(X, y, sample_weight=w)
    Xd, yd = _dask(X, y)
    wd = None if w is None else _dask(w)[0]
    dask = DPLogisticRegression(**kw).fit(Xd, yd, sample_weight=wd)
    np.testing.assert_allclose(dask.coef_, memory.coef_, rtol=0, atol=1e-12)
    np.testing.assert_allclose(dask.intercept_, memory.intercept_, rtol=0, atol=1e-12)
    assert dask.privacy_caveats_ == memory.privacy_caveats_


@pytest.mark.parametrize("batch_size", [512, "full"])
def test_non_private_limit_on_raw_columns_is_lbfgs(dask_client, batch_size):
    # epsilon = inf alone: the noiseless steps, on columns the cluster
    # standardizes by their exact moments (log-loss 136.9 before, 18.5 with
    # full batches, against lbfgs's 0.527: the clipped steps never reached
    # a column at 1e5 with a spread of 1e-3).
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import log_loss
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(0)
    Z = rng.standard_normal((3000, 4))
    y = (rng.random(3000) < 1 / (1 + np.exp(-(Z @ [1.0, -0.8, 0.6, 0.4])))).astype(int)
    X = Z * [100.0, 1e4, 1e-3, 1.0] + [500.0, 0.0, 1e5, 0.0]
    clf = DPLogisticRegression(
        epsilon=np.inf, batch_size=batch_size, classes=[0, 1], random_state=0
    ).fit(*_dask(X, y))
    reference = make_pipeline(StandardScaler(), LogisticRegression(C=np.inf))
    reference.fit(X, y)
    ours = log_loss(y, clf.predict_proba(X))
    assert ours <= 1.01 * log_loss(y, reference.predict_proba(X))
    assert EXACT_SCALING_DESCRIPTION in clf.privacy_record_.mechanism
    # The steps ran without noise, and the record says so first (it read
    # "DP-SGD (Poisson-subsampled Gaussian ...)" before).
    assert clf.privacy_record_.mechanism.startswith("non-private limit")


def test_float32_stays_float32(dask_client, small):
    X, y, _ = small
    clf = DPLogisticRegression(classes=[0, 1], max_iter=1, random_state=0)
    clf.fit(*_dask(X.astype(np.float32), y))
    assert clf.coef_.dtype == np.float32


def test_worker_loss_recovers_with_the_same_model_and_record(
    dask_client, small, monkeypatch
):
    # A worker killed between two steps: Dask recomputes its partitions from
    # the graph and re-runs the step; every partition's rows come from
    # SeedSequence(root, (p, t)), so the recovered fit is the undisturbed one.
    X, y, _ = small
    kw = dict(epsilon=1.0, classes=[0, 1], batch_size=600, max_iter=2, random_state=3)
    Xd, yd = _dask(X, y, chunks=500)
    reference = DPLogisticRegression(**kw).fit(Xd, yd)

    clipped_sum = _distributed._clipped_sum
    killed = []

    def kill_at_step_3(data, coef, w0, step, config):
        if step == 3:
            who = dask_client.who_has([data.partitions[0]])
            holder = next(iter(who.values()))[0]
            pid = dask_client.run(os.getpid, workers=[holder])[holder]
            os.kill(pid, signal.SIGKILL)
            killed.append(holder)
        return clipped_sum(data, coef, w0, step, config)

    monkeypatch.setattr(_distributed, "_clipped_sum", kill_at_step_3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        recovered = DPLogisticRegression(**kw).fit(Xd, yd)
    assert killed
    np.testing.assert_allclose(recovered.coef_, reference.coef_, rtol=1e-12)
    np.testing.assert_allclose(recovered.intercept_, reference.intercept_, rtol=1e-12)
    assert recovered.privacy_record_ == reference.privacy_record_
    dask_client.wait_for_workers(2, timeout=30)


@pytest.mark.parametrize("column_chunks", [1, -1])
def test_a_y_of_two_columns_is_refused_however_it_is_chunked(
    dask_client, small, column_chunks
):
    # Chunked along its columns, its blocks paired with other rows' blocks
    # of X and the fit ran on misaligned labels.
    X, y, _ = small
    Xd = _dask(X)[0]
    Y = da.from_array(np.column_stack([y, 1 - y]), chunks=(700, column_chunks))
    with pytest.raises(ValueError, match=r"1d array, got an array of shape"):
        DPLogisticRegression(classes=[0, 1], max_iter=1).fit(Xd, Y)


def test_a_column_vector_y_warns_once_and_fits_as_raveled(dask_client, small):
    X, y, _ = small
    Xd, yd = _dask(X, y)
    kw = dict(classes=[0, 1], max_iter=1, random_state=0)
    flat = DPLogisticRegression(**kw).fit(Xd, yd)
    with pytest.warns(DataConversionWarning, match="column-vector y") as record:
        column = DPLogisticRegression(**kw).fit(Xd, yd[:, None])
    assert len(record) == 1 and record[0].filename == __file__
    np.testing.assert_allclose(column.coef_, flat.coef_, rtol=1e-12, atol=1e-15)


def test_input_errors(dask_client, small, monkeypatch):
    X, y, _ = small
    Xd, yd = _dask(X, y)
    with pytest.raises(ValueError, match="not in the declared classes"):
        DPLogisticRegression(classes=[0, 2], max_iter=1).fit(Xd, yd)
    with pytest.raises(ValueError, match="central DP-SGD"):
        DPLogisticRegression(
            solver="output-perturbation", alpha=1.0, feature_norm_bound=1.0
        ).fit(Xd, yd)
    Xbad = X.copy()
    Xbad[2000, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        DPLogisticRegression(classes=[0, 1], max_iter=1).fit(*_dask(Xbad, y))
    with pytest.raises(ValueError, match="rows"):
        DPLogisticRegression(classes=[0, 1], max_iter=1).fit(Xd, yd[:-1])

    for bad in (-1.0, np.nan, np.inf):
        w = np.ones(X.shape[0])
        w[1234] = bad
        with pytest.raises(ValueError, match="finite and non-negative"):
            DPLogisticRegression(classes=[0, 1]).fit(Xd, yd, sample_weight=_dask(w)[0])
    with pytest.raises(ValueError, match="all zero"):
        DPLogisticRegression(classes=[0, 1]).fit(
            Xd, yd, sample_weight=_dask(np.zeros(X.shape[0]))[0]
        )

    def no_client():
        raise ValueError("No clients found")

    monkeypatch.setattr(distributed, "get_client", no_client)
    with pytest.raises(ValueError, match="current dask.distributed Client"):
        DPLogisticRegression(classes=[0, 1]).fit(Xd, yd)


def test_dataframe_input(dask_client, small, no_driver_arrays):
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X, y, _ = small
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    Xd = dd.from_pandas(frame, npartitions=3)
    yd = dd.from_pandas(pd.Series(y), npartitions=3)
    clf = DPLogisticRegression(classes=[0, 1], max_iter=2).fit(Xd, yd)
    assert list(clf.feature_names_in_) == list(frame.columns)
    assert clf.score(frame, y) > 0.8


def test_nullable_dtypes_read_as_in_memory(dask_client, small):
    # pandas' Float64/Int64/boolean columns: the same model as float64
    # columns, and a missing value refused as in memory ("contains NaN").
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X, y, _ = small
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    nullable = frame.astype("Float64").assign(
        f3=(frame["f3"] > 0).astype("boolean"), f4=frame["f4"].round().astype("Int64")
    )
    plain = nullable.astype("float64")
    yd = dd.from_pandas(pd.Series(y), npartitions=3)
    kw = dict(classes=[0, 1], max_iter=2, random_state=0)
    fitted = DPLogisticRegression(**kw).fit(dd.from_pandas(nullable, npartitions=3), yd)
    reference = DPLogisticRegression(**kw).fit(dd.from_pandas(plain, npartitions=3), yd)
    np.testing.assert_allclose(fitted.coef_, reference.coef_, rtol=1e-12, atol=1e-12)
    nullable.iloc[2500, 1] = pd.NA
    with pytest.raises(ValueError, match="Input X contains NaN"):
        DPLogisticRegression(**kw).fit(dd.from_pandas(nullable, npartitions=3), yd)


def test_driver_memory_does_not_grow_with_n(dask_client):
    # 400,000 x 40 float64 rows (128 MB, four 32 MB partitions) generated on
    # the workers: the driver's allocations during the fit stay O(d), far
    # below one partition. The bound (16 MB, half a partition) leaves room
    # for the scheduler, which runs in this process and whose bookkeeping
    # tracemalloc counts too (about 1.5 MB here, more on a loaded machine).
    import tracemalloc

    rng = da.random.default_rng(0)
    X = rng.standard_normal((400_000, 40), chunks=(100_000, 40))
    y = (X[:, 0] > 0).astype(int)
    partition_bytes = 100_000 * 40 * 8
    tracemalloc.start()
    try:
        DPLogisticRegression(
            classes=[0, 1], max_iter=1, batch_size=40_000, delta=1e-7
        ).fit(X, y)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < partition_bytes / 2, peak


def test_verbose_prints_one_line_per_epoch_and_changes_nothing(
    dask_client, small, capsys
):
    X, y, _ = small
    Xd, yd = _dask(X, y)
    kw = dict(classes=[0, 1], max_iter=3, random_state=0)
    quiet = DPLogisticRegression(**kw).fit(Xd, yd)
    assert capsys.readouterr().out == ""
    loud = DPLogisticRegression(verbose=1, **kw).fit(Xd, yd)
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == [
        f"[DPLogisticRegression] epoch {e}" for e in (1, 2, 3)
    ]
    # Printing reads released quantities only: the same seeded fit.
    np.testing.assert_allclose(loud.coef_, quiet.coef_, rtol=1e-12, atol=1e-15)


def test_shared_upstream_of_X_and_y_is_computed_once(dask_client, tmp_path):
    # One task per block yields both X and y (a file read once for both, as
    # a DataFrame's partitions do): the fit must run it once per block, not
    # once per array.
    dask = pytest.importorskip("dask")
    log = tmp_path / "calls"

    def block(i):
        # A closure: shipped to the worker processes by value.
        with open(log, "a") as f:
            f.write(f"{i}\n")
        X = np.random.default_rng(i).normal(size=(500, 3))
        return X, (X[:, 0] > 0).astype(int)

    pairs = [dask.delayed(block, nout=2, pure=False)(i) for i in range(4)]
    Xd = da.concatenate([da.from_delayed(p[0], (500, 3), float) for p in pairs])
    yd = da.concatenate([da.from_delayed(p[1], (500,), int) for p in pairs])
    DPLogisticRegression(classes=[0, 1], max_iter=1, random_state=0).fit(Xd, yd)
    assert sorted(log.read_text().split()) == ["0", "1", "2", "3"]


def test_dataframe_partitions_are_read_once_for_their_lengths(dask_client, tmp_path):
    # X and y taken from one Dask DataFrame: their partition lengths are
    # counted in one pass (one read per partition), then the fit reads each
    # partition once per projected input (X's columns, y's column).
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    log = tmp_path / "reads"

    def read(i):
        # A closure: shipped to the worker processes by value.
        with open(log, "a") as f:
            f.write(f"{i}\n")
        rng = np.random.default_rng(i)
        frame = pd.DataFrame(rng.normal(size=(500, 3)), columns=["a", "b", "c"])
        frame["y"] = (frame["a"] > 0).astype(int)
        return frame

    frame = dd.from_map(read, range(4))
    log.unlink(missing_ok=True)  # the metadata read at construction
    DPLogisticRegression(classes=[0, 1], max_iter=1, random_state=0).fit(
        frame[["a", "b", "c"]], frame["y"]
    )
    reads = log.read_text().split()
    assert sorted(set(reads)) == ["0", "1", "2", "3"]
    assert len(reads) <= 3 * 4


def test_a_planned_intercept_only_fit_releases_the_histogram(dask_client, small):
    # 200 * 0.1 < 5 * 6: small_budget="auto" plans the intercept-only
    # release; the workers count the classes, the driver makes the release:
    # the in-memory fit's record, warning and (same seed, same draw) model.
    X, y = small[0][:200], small[1][:200]
    kw = dict(epsilon=0.1, delta=1e-3, classes=[0, 1], random_state=0)
    with pytest.warns(UserWarning, match="intercept-only"):
        dask = DPLogisticRegression(**kw).fit(*_dask(X, y, chunks=50))
    with pytest.warns(UserWarning, match="intercept-only"):
        memory = DPLogisticRegression(**kw).fit(X, y)
    assert dask.intercept_only_ and not np.any(dask.coef_) and dask.n_iter_ == 0
    assert dask.privacy_record_ == memory.privacy_record_
    np.testing.assert_allclose(dask.intercept_, memory.intercept_, rtol=1e-12)


def test_a_weighted_intercept_only_fit_counts_as_in_memory(dask_client, small):
    # The partitions' class counts are weighted (each weight capped at 1)
    # as the in-memory histogram is: same record, same seeded draw.
    X, y = small[0][:200], small[1][:200]
    w = np.random.default_rng(2).uniform(0.0, 3.0, 200)
    kw = dict(epsilon=0.1, delta=1e-3, classes=[0, 1], random_state=0)
    with pytest.warns(UserWarning, match="intercept-only"):
        dask = DPLogisticRegression(**kw).fit(
            *_dask(X, y, chunks=50), sample_weight=_dask(w, chunks=50)[0]
        )
    with pytest.warns(UserWarning, match="intercept-only"):
        memory = DPLogisticRegression(**kw).fit(X, y, sample_weight=w)
    with pytest.warns(UserWarning, match="intercept-only"):
        unweighted = DPLogisticRegression(**kw).fit(X, y)
    assert dask.privacy_record_ == memory.privacy_record_
    np.testing.assert_allclose(dask.intercept_, memory.intercept_, rtol=1e-12)
    assert memory.intercept_[0] != unweighted.intercept_[0]


@pytest.mark.parametrize("epsilon", [1.0, np.inf])
def test_empty_partitions_are_dropped(dask_client, small, epsilon):
    # A filtered frame leaves partitions without rows: they hold no record.
    X, y, _ = small
    rows = (1500, 0, 1500)
    kw = dict(epsilon=epsilon, classes=[0, 1], max_iter=2, random_state=0)
    fitted = DPLogisticRegression(**kw).fit(
        da.from_array(X, chunks=(rows, -1)), da.from_array(y, chunks=(rows,))
    )
    memory = DPLogisticRegression(**kw).fit(X, y)
    assert fitted.dp_event_ == memory.dp_event_
    assert fitted.score(X, y) > 0.8


def test_worker_side_validation_never_quotes_a_value():
    # A worker's scheduler logs the exception a task raises, before the
    # driver's fit can redact it: the worker functions redact it themselves.
    X = np.zeros((4, 2), dtype=object)
    X[1, 1] = "Alice Smith, HIV+"
    with pytest.raises(ValueError, match="not shown") as raised:
        _distributed._load_partition(X, np.zeros(4), None, [0, 1], None, 1.0)
    assert "Alice" not in str(raised.value) and raised.value.__context__ is None
    with pytest.raises(ValueError, match="not shown") as raised:
        _distributed._as_float64(X)
    assert "Alice" not in str(raised.value)


@pytest.mark.parametrize("y_kind", ["continuous", "nan"])
def test_labels_a_classifier_refuses_in_memory_are_refused(dask_client, small, y_kind):
    # As in memory (without declared classes): a continuous target, or a
    # missing label, is refused, not fitted as many classes.
    X, y, _ = small
    y = X[:, 0].copy() if y_kind == "continuous" else y.astype(float)
    if y_kind == "nan":
        y[17] = np.nan
    match = "Unknown label type" if y_kind == "continuous" else "contains NaN"
    with pytest.raises(ValueError, match=match), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        DPLogisticRegression(max_iter=1).fit(*_dask(X, y))


def test_exact_scaling_of_a_record_at_1e300_is_finite_and_silent():
    # The moments are taken on the workers on each column divided by its
    # largest |x|: the squares of a record at 1e300 overflowed there (the
    # driver's np.errstate does not reach the workers), and its column kept
    # a location of 3e296 with the scale 1 of an infinite spread.
    import dask

    rng = np.random.default_rng(0)
    X = rng.standard_normal((3000, 2))
    X[0, 0] = 1e300
    with dask.config.set(scheduler="synchronous"), warnings.catch_warnings():
        warnings.simplefilter("error")
        scaling = _distributed.exact_column_scaling(_dask(X)[0])
    assert np.all(np.isfinite(scaling.location)) and np.all(np.isfinite(scaling.scale))
    # The column's own mean and spread, 1e300 / 3000 and about 1e300 / 55.
    np.testing.assert_allclose(scaling.location[0], 1e300 / 3000, rtol=1e-6)
    np.testing.assert_allclose(
        scaling.scale[0], 1e300 * np.sqrt(2999) / 3000, rtol=1e-6
    )
    np.testing.assert_allclose(scaling.location[1], X[:, 1].mean(), rtol=1e-10)
    np.testing.assert_allclose(scaling.scale[1], X[:, 1].std(), rtol=1e-10)


def test_exact_scaling_of_columns_at_the_largest_floats_is_finite():
    import dask

    X = np.array([[1.7e308, 1.0], [-1.7e308, 2.0], [0.0, 3.0]])
    with dask.config.set(scheduler="synchronous"), warnings.catch_warnings():
        warnings.simplefilter("error")
        scaling = _distributed.exact_column_scaling(da.from_array(X, chunks=(2, 2)))
    # Their squares overflowed: the spread read as infinite, hence scale 1.
    np.testing.assert_allclose(scaling.location, [0.0, 2.0], atol=1e-12)
    np.testing.assert_allclose(
        scaling.scale, [1.7e308 * np.sqrt(2 / 3), np.sqrt(2 / 3)]
    )


def test_non_private_limit_with_a_record_at_1e300_fits_the_other_column(dask_client):
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import log_loss

    rng = np.random.default_rng(0)
    Z = rng.standard_normal((3000, 2))
    y = (rng.random(3000) < 1 / (1 + np.exp(-(Z @ [1.0, -1.0])))).astype(int)
    X = Z.copy()
    X[0, 0] = 1e300
    clf = DPLogisticRegression(epsilon=np.inf, classes=[0, 1], random_state=0)
    clf.fit(*_dask(X, y))
    rest = slice(1, None)
    # Column 0 is one huge record and noise in standardized units: the best
    # the fit can do is the model on column 1 (log-loss 18.09 before).
    reference = LogisticRegression(C=np.inf).fit(X[rest, 1:], y[rest])
    best = log_loss(y[rest], reference.predict_proba(X[rest, 1:]))
    assert log_loss(y[rest], clf.predict_proba(X[rest])) <= 1.02 * best


def test_a_row_of_weight_zero_is_absent_from_the_non_private_limit(dask_client):
    # The exact standardization read every row unweighted: an outlier of
    # weight 0 stretched its column's scale by 1e8, and the model lost
    # the column (log-loss 0.27 -> 0.62).
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] - 0.5 * X[:, 1] + 0.3 * rng.normal(size=300) > 0).astype(int)
    Xw, yw = np.vstack([X, [[1e8, 0.0, 0.0]]]), np.r_[y, 1]
    w = np.r_[np.ones(300), 0.0]
    kw = dict(
        epsilon=np.inf, classes=[0, 1], random_state=0, batch_size="full", max_iter=5
    )
    without = DPLogisticRegression(**kw).fit(*_dask(X, y, chunks=100))
    weighted = DPLogisticRegression(**kw).fit(
        *_dask(Xw, yw, chunks=100), sample_weight=_dask(w, chunks=100)[0]
    )
    np.testing.assert_allclose(weighted.coef_, without.coef_, rtol=1e-6)
    np.testing.assert_allclose(weighted.intercept_, without.intercept_, rtol=1e-6)


def test_x_without_rows_or_columns_axis_is_refused_as_in_memory(dask_client, small):
    X, y, _ = small
    Xd, yd = _dask(X, y)
    clf = DPLogisticRegression(classes=[0, 1], max_iter=1).fit(Xd, yd)
    coef = clf.coef_.copy()
    # A filter that keeps no row: its rows are counted on the cluster (the
    # schedule divided by n = 0).
    nothing = Xd[:, 0] > 100
    with pytest.raises(
        ValueError,
        match=r"^Found array with 0 sample\(s\) \(shape=\(0, 5\)\) while a minimum "
        r"of 1 is required by DPLogisticRegression\.$",
    ):
        clf.fit(Xd[nothing], yd[nothing])
    with pytest.raises(ValueError, match=r"^X must be 2-d"):
        clf.fit(Xd[:, 0], yd)
    # Nothing half-fitted: the previous model is whole.
    np.testing.assert_array_equal(clf.coef_, coef)
    assert clf.n_features_in_ == 5


def test_messages_of_labels_and_strings_are_the_in_memory_ones(dask_client, small):
    X, y, _ = small
    y_mixed = y.astype(object)
    y_mixed[3] = "Bob"
    X_text = X.astype(object)
    X_text[2000, 1] = "Alice"
    cases = [
        # Labels of mixed types (da.unique sorted them: a TypeError).
        (dict(max_iter=1), X, y_mixed),
        # A string cell at epsilon=inf: the exact scaling reads it first.
        (dict(classes=[0, 1], epsilon=np.inf, max_iter=1), X_text, y),
    ]
    for kw, X_case, y_case in cases:
        with pytest.raises(ValueError) as in_memory, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            DPLogisticRegression(**kw).fit(X_case, y_case)
        with pytest.raises(ValueError) as on_dask, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            DPLogisticRegression(**kw).fit(*_dask(X_case, y_case))
        assert str(on_dask.value) == str(in_memory.value)
    assert str(on_dask.value).startswith("Input X: could not convert")
    assert "Alice" not in str(on_dask.value)


def _penalized_log_loss(clf, X, y, alpha, w=None):
    """The documented objective: mean (weighted) log-loss + alpha/2 ||w||^2."""
    z = X @ clf.coef_.ravel() + clf.intercept_[0]
    losses = np.logaddexp(0.0, z) - y * z
    return np.average(losses, weights=w) + 0.5 * alpha * np.sum(clf.coef_**2)


def _offset_and_tiny_unit_columns(n=600):
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((n, 2))
    y = (rng.random(n) < 1 / (1 + np.exp(-(Z @ [1.0, -0.8])))).astype(int)
    return Z * [100.0, 0.01] + [500.0, 0.0], y, rng.uniform(0.2, 3.0, n)


@pytest.mark.parametrize("weighted", [False, True])
def test_non_private_limit_penalizes_the_coefficients_in_user_units(
    dask_client, weighted
):
    # alpha/2 ||w||^2 is on the model in the user's units; the noiseless
    # steps run on the exactly standardized columns, where it is alpha /
    # scale_j^2 on coefficient j. Penalizing the standardized coefficients
    # gave the column in units of 0.01 a coefficient 480 times too large
    # (objective 19.3 against the minimum's 0.625). Full batches: deterministic,
    # 30 steps to within ~1.5% of the minimizer.
    from sklearn.linear_model import LogisticRegression

    X, y, w = _offset_and_tiny_unit_columns()
    w = w if weighted else None
    n, alpha = X.shape[0], 1e-2
    kw = dict(epsilon=np.inf, alpha=alpha, classes=[0, 1])
    memory = DPLogisticRegression(**kw).fit(X, y, sample_weight=w)
    # scikit-learn's C sums the weighted losses: weights of mean 1.
    reference = LogisticRegression(
        C=1 / (alpha * n), solver="newton-cholesky", tol=1e-10, max_iter=100
    )
    reference.fit(X, y, sample_weight=None if w is None else w * n / w.sum())
    Xd, yd = _dask(X, y, chunks=300)
    wd = None if w is None else _dask(w, chunks=300)[0]
    clf = DPLogisticRegression(
        batch_size="full", max_iter=30, random_state=0, **kw
    ).fit(Xd, yd, sample_weight=wd)
    best = _penalized_log_loss(reference, X, y, alpha, w)
    assert _penalized_log_loss(memory, X, y, alpha, w) <= best + 1e-8
    assert _penalized_log_loss(clf, X, y, alpha, w) <= best + 1e-4
    np.testing.assert_allclose(clf.coef_, memory.coef_, rtol=0.03)
    np.testing.assert_allclose(clf.intercept_, memory.intercept_, rtol=0.03)


def test_non_private_limit_on_declared_bounds_penalizes_user_units(dask_client):
    # The same with the columns mapped by feature_bounds: the small-unit
    # column's coefficient is that of the penalty on the user's model (it
    # was 56 times larger with the penalty on the mapped one).
    X, y, _ = _offset_and_tiny_unit_columns()
    kw = dict(epsilon=np.inf, alpha=1e-2, classes=[0, 1])
    memory = DPLogisticRegression(**kw).fit(X, y)
    clf = DPLogisticRegression(
        batch_size="full", max_iter=20, random_state=0, feature_scaling="auto",
        feature_bounds=[(200.0, 800.0), (-0.05, 0.05)], **kw,
    ).fit(*_dask(X, y, chunks=300))
    np.testing.assert_allclose(clf.coef_[0, 1], memory.coef_[0, 1], rtol=0.05)


def test_a_ledger_that_cannot_record_refuses_before_the_first_release(
    dask_client, small, capsys
):
    # As in memory: the refusal comes before any partition round, so no
    # noisy step is released (or printed by verbose=) outside the ledger.
    X, y, _ = small
    Xd, yd = _dask(X, y)
    est = DPLogisticRegression(
        classes=[0, 1], max_iter=3, verbose=1, accountant=RefusingLedger()
    )
    releases = Releases()
    with observe_privatize(releases):
        with pytest.raises(PrivacyAccountingError, match="refuses the fit"):
            est.fit(Xd, yd)
    assert releases.seen == []
    assert capsys.readouterr().out == ""


def test_the_non_private_limit_refuses_steps_beyond_the_cap(dask_client, small):
    # The workers run the planned steps without noise too (in memory the
    # limit is L-BFGS): max_iter=10**7 epochs would never finish.
    X, y, _ = small
    Xd, yd = _dask(X, y)
    est = DPLogisticRegression(classes=[0, 1], epsilon=np.inf, max_iter=10**7)
    with pytest.raises(ValueError, match=r"max_iter=10000000 epochs .*smaller max_iter"):
        est.fit(Xd, yd)
