# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
import os

import pytest


def _seeds():
    # As scikit-learn's global_random_seed: one seed by default, all of
    # 0..99 with DPFAIR_FULL=1 (or a given list in DPFAIR_SEEDS="0,1,2").
    if os.environ.get("DPFAIR_SEEDS"):
        return [int(s) for s in os.environ["DPFAIR_SEEDS"].split(",")]
    if os.environ.get("DPFAIR_FULL"):
        return list(range(100))
    return [42]


@pytest.fixture(params=_seeds())
def global_random_seed(request):
    return request.param


@pytest.fixture(scope="module")
def dask_client():
    """A dask.distributed Client on a LocalCluster of two worker processes.

    One per test module (the module's fits share its workers); skipped
    where dask.distributed is not installed.
    """
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=2, processes=True, threads_per_worker=1,
        # Any free port: None still binds the default 8787, and warns
        # where another cluster holds it.
        dashboard_address=":0",
    )
    with distributed.Client(cluster) as client:
        yield client
    cluster.close()


@pytest.fixture(scope="session")
def adult_split():
    """UCI Adult, one-hot + standardized (fit on the training rows).

    ``(X_train, y_train, X_test, y_test, sex_train, sex_test)``, the
    benchmarks' protocol (``benchmarks/_adult.py``).
    """
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    from sklearn_dpfair.datasets import load_adult

    train, test = load_adult(), load_adult(subset="test")
    pre = make_pipeline(
        ColumnTransformer(
            [
                (
                    "cat",
                    OneHotEncoder(handle_unknown="ignore", sparse_output=False),
                    train.categorical_features,
                ),
                ("num", "passthrough", train.numeric_features),
            ]
        ),
        StandardScaler(),
    )
    return (
        pre.fit_transform(train.data),
        train.target.to_numpy(),
        pre.transform(test.data),
        test.target.to_numpy(),
        train.sensitive["sex"].to_numpy(),
        test.sensitive["sex"].to_numpy(),
    )


@pytest.fixture(scope="session")
def adult(adult_split):
    """``(X_train, y_train, X_test, y_test)`` of :func:`adult_split`."""
    return adult_split[:4]


@pytest.fixture
def no_driver_arrays(monkeypatch):
    """Any conversion of a Dask collection to numpy on the driver raises."""
    da = pytest.importorskip("dask.array")

    def refuse(self, *args, **kwargs):
        raise AssertionError("a Dask collection was converted to numpy on the driver")

    monkeypatch.setattr(da.Array, "__array__", refuse)
    try:
        import dask.dataframe as dd
    except ImportError:
        return
    for cls in (dd.DataFrame, dd.Series):
        monkeypatch.setattr(cls, "__array__", refuse, raising=False)


def _recorded_calls(monkeypatch, cls, method, record):
    """Wrap ``cls.method(self, value, rng)``: each call appends ``record(self, value)``."""
    seen = []
    original = getattr(cls, method)

    def spy(self, value, rng):
        seen.append(record(self, value))
        return original(self, value, rng)

    monkeypatch.setattr(cls, method, spy)
    return seen


@pytest.fixture
def filter_swaps(monkeypatch):
    """The package modules that enter ``warnings.catch_warnings`` in the test.

    That block swaps the process-wide filter list: two threads' overlapping
    blocks can leave a filter installed for good, so a fit must not enter
    one. A list filled as blocks are entered (the entering module's name;
    its ``threads`` attribute, the entering thread's name, in the same
    order); blocks of tests, scikit-learn or numpy are not recorded.
    """
    import sys
    import threading
    import warnings

    class Entered(list):
        threads = None

    entered = Entered()
    entered.threads = []
    original = warnings.catch_warnings

    class Recording(original):
        def __enter__(self):
            module = sys._getframe(1).f_globals.get("__name__", "")
            if module.partition(".")[0] == "sklearn_dpfair":
                entered.append(module)
                entered.threads.append(threading.current_thread().name)
            return super().__enter__()

    monkeypatch.setattr(warnings, "catch_warnings", Recording)
    return entered


@pytest.fixture
def privatized_sums(monkeypatch):
    """Every sum a ``GaussianMechanism`` privatizes in the test, before its noise.

    A list filled as fits run (float64 copies, in order), for the
    neighbouring-dataset tests that compare the clipped sums themselves.
    """
    import numpy as np

    from sklearn_dpfair.privacy import GaussianMechanism

    return _recorded_calls(
        monkeypatch, GaussianMechanism, "privatize",
        lambda _, clipped_sum: np.array(clipped_sum, dtype=float),
    )


@pytest.fixture
def selection_sensitivities(monkeypatch):
    """The utility sensitivity of every ``ExponentialMechanism`` draw in the test."""
    from sklearn_dpfair.privacy._exponential import ExponentialMechanism

    return _recorded_calls(
        monkeypatch, ExponentialMechanism, "select", lambda self, _: self.sensitivity
    )


@pytest.fixture
def selection_scores(monkeypatch):
    """The scores (utilities) of every ``ExponentialMechanism`` draw in the test."""
    import numpy as np

    from sklearn_dpfair.privacy._exponential import ExponentialMechanism

    return _recorded_calls(
        monkeypatch, ExponentialMechanism, "select",
        lambda _, scores: np.array(scores, dtype=float),
    )


@pytest.fixture
def dispatch(monkeypatch):
    """scikit-learn's array API dispatch, as a user turns it on."""
    import sklearn

    # scikit-learn refuses dispatch unless scipy's flag is set; our code never
    # hands non-numpy arrays to scipy, so setting it late is harmless here.
    monkeypatch.setenv("SCIPY_ARRAY_API", "1")
    try:
        context = sklearn.config_context(array_api_dispatch=True)
        context.__enter__()
    except ImportError as exc:  # no array-api-compat, or scipy too old
        pytest.skip(f"scikit-learn cannot dispatch here: {exc}")
    try:
        yield
    finally:
        context.__exit__(None, None, None)


@pytest.fixture
def single_torch_thread():
    """One torch thread for the test (restored after it).

    Small problems: torch's OpenMP threads only add barrier waits (~40 ms per
    matmul on a loaded 2-core CI machine).
    """
    torch = pytest.importorskip("torch")
    n_threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n_threads)
