"""Where the package's warnings point, and how often they are shown."""

import inspect
import warnings
from collections import Counter

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from sklearn_dpfair import (
    DPFERMIClassifier,
    DPLogisticRegression,
    FERMIClassifier,
    SemiDPLinearRegression,
)
from sklearn_dpfair.exceptions import PrivacyLeakWarning
from sklearn_dpfair.pipeline import PrivatePipeline
from sklearn_dpfair.preprocessing import DPStandardScaler
from sklearn_dpfair.utils._validation import (
    check_fit_keywords,
    check_public_weights,
    is_sparse_layout,
    warn_at_caller,
)


def _data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] > 0).astype(int)
    return X, y


def _leaks(record):
    return [w for w in record if issubclass(w.category, PrivacyLeakWarning)]


def test_grid_search_warns_once_at_the_callers_line():
    X, y = _data()
    search = GridSearchCV(
        DPLogisticRegression(epsilon=1.0, delta=1e-5, max_iter=2, random_state=0),
        {"epsilon": [1.0]},
        cv=5,
    )
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("default")
        search.fit(X, y)  # 5 fits and a refit, all with classes=None
    leaks = _leaks(record)
    assert len(leaks) == 1
    assert leaks[0].filename == __file__
    assert "classes was not given" in str(leaks[0].message)


def test_direct_fit_and_pipeline_point_at_the_callers_line():
    X, y = _data()
    for make in (
        lambda: DPLogisticRegression(epsilon=1.0, delta=1e-5, random_state=0),
        lambda: make_pipeline(
            FunctionTransformer(),
            DPLogisticRegression(epsilon=1.0, delta=1e-5, random_state=0),
        ),
    ):
        with pytest.warns(PrivacyLeakWarning, match="classes was not given") as rec:
            make().fit(X, y)
        assert [w.filename for w in _leaks(rec)] == [__file__]


def test_fermi_group_warning_points_at_the_caller():
    X, y = _data()
    sex = np.where(X[:, 1] > 0, "a", "b")
    clf = DPFERMIClassifier(
        epsilon=1.0, delta=1e-5, classes=[0, 1], max_iter=2, random_state=0
    )
    with pytest.warns(PrivacyLeakWarning, match="group") as rec:
        clf.fit(X, y, sensitive_features=sex)
    assert {w.filename for w in _leaks(rec)} == {__file__}


def test_always_and_error_filters_are_honoured():
    X, y = _data()
    est = DPLogisticRegression(epsilon=1.0, delta=1e-5, max_iter=2, random_state=0)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        cross_validate(est, X, y, cv=3)
    assert len(_leaks(record)) == 3
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        with pytest.raises(PrivacyLeakWarning):
            est.fit(X, y)


def test_warn_at_caller_outside_a_loop_behaves_as_warnings_warn():
    # A direct call keeps Python's rules: once per location within a block,
    # and again in each new catch_warnings block (the package's own memory
    # of what it showed hid the warning from every later block).
    def call():
        warn_at_caller("same cause", UserWarning)

    counts = []
    for _ in range(3):
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("default")
            call()
            call()
        counts.append(len(record))
    assert counts == [1, 1, 1]
    X, y = _data()
    leaks = []
    for _ in range(2):
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("default")
            DPLogisticRegression(max_iter=2, random_state=0).fit(X, y)
        leaks.append(len(_leaks(record)))
    assert leaks == [1, 1]


def _private_pipeline():
    return PrivatePipeline(
        [
            ("sc", DPStandardScaler(bounds=(-5, 5))),
            ("clf", DPLogisticRegression(max_iter=2)),
        ],
        random_state=0,
    )


def _grid_search():
    return GridSearchCV(
        DPLogisticRegression(max_iter=2, random_state=0), {"alpha": [0.0]}, cv=2
    )


@pytest.mark.parametrize("make", [_private_pipeline, _grid_search])
def test_each_call_of_a_loop_shows_its_warnings_again(make):
    # The memory that keeps a loop of fits from repeating a warning lasts one
    # call: a later call, in a new catch_warnings block, shows it again, as
    # a direct fit's warning is (it hid the warning for the whole process).
    X, y = _data()

    def fit():
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("default")
            make().fit(X, y)  # one line, new estimator each time
        return _leaks(record)

    first, second = fit(), fit()
    assert len(first) == len(second) == 1
    assert second[0].filename == __file__
    assert "classes was not given" in str(second[0].message)


def test_one_search_shows_each_cause_once():
    # 3 folds x 2 candidates and the refit: 7 fits, each with two causes
    # (the label set read from y, bounds given without scaling).
    X, y = _data(n=150)
    search = GridSearchCV(
        DPLogisticRegression(
            max_iter=2,
            random_state=0,
            feature_scaling=None,
            feature_bounds=[(-5, 5)] * 3,
        ),
        {"alpha": [0.0, 0.1]},
        cv=3,
    )
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("default")
        search.fit(X, y)
    ours = Counter(
        (w.category, str(w.message)) for w in record if w.filename == __file__
    )
    causes = {
        (PrivacyLeakWarning, "classes was not given"),
        (UserWarning, "feature_bounds is ignored"),
    }
    for category, text in causes:
        assert [
            n for (c, m), n in ours.items() if c is category and text in m
        ] == [1], ours
    assert set(ours.values()) == {1}, ours


def test_a_search_in_worker_threads_warns_once_at_the_callers_line():
    # Under joblib's threading backend each task's outermost loop frame is
    # the task's own: a memory kept there showed the warning once per fit
    # (10 of 10 fits). A task's stack ends in the thread pool, so the
    # warning pointed at multiprocessing/pool.py, and the refit (on the main
    # thread) showed it a second time, here. The user's line and the call's
    # memory are on the thread that dispatched the tasks.
    import joblib

    X, y = _data(n=150)
    search = GridSearchCV(
        DPLogisticRegression(max_iter=2, random_state=0),
        {"alpha": [0.0, 0.1, 1.0]},
        cv=3,
        n_jobs=2,
    )
    with joblib.parallel_backend("threading", n_jobs=2):
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("default")
            line = inspect.currentframe().f_lineno + 1
            search.fit(X, y)
    leaks = [(w.filename, w.lineno) for w in record if w.category is PrivacyLeakWarning]
    assert leaks == [(__file__, line)]


def test_a_fit_in_a_users_thread_warns_at_the_line_in_that_thread():
    # The user's line is on the worker's own stack: nothing to reroute to
    # the thread that waits for it.
    from concurrent.futures import ThreadPoolExecutor

    X, y = _data(n=150)
    lines = []

    def fit():
        lines.append(inspect.currentframe().f_lineno + 1)
        DPLogisticRegression(max_iter=2, random_state=0).fit(X, y)

    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        with ThreadPoolExecutor(1) as pool:
            pool.submit(fit).result()
    leaks = [(w.filename, w.lineno) for w in record if w.category is PrivacyLeakWarning]
    assert leaks == [(__file__, lines[0])]


@pytest.mark.parametrize(
    "estimator, target, text",
    [
        (SemiDPLinearRegression(random_state=0), float, "public_mask was not given"),
        (FERMIClassifier(max_iter=2), int, "sensitive"),
    ],
)
def test_other_estimator_warnings_point_at_the_caller(estimator, target, text):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 3))
    y = (X[:, 0] > 0).astype(target)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        estimator.fit(X, y)
    ours = [w for w in caught if text in str(w.message)]
    assert ours, [str(w.message) for w in caught]
    assert all(w.filename == __file__ for w in ours)


def test_a_missing_nullable_label_is_undeclared_not_ambiguous():
    # pd.NA compared with a declared label raised pandas' TypeError "boolean
    # value of NA is ambiguous"; it is a label outside the declared set.
    pd = pytest.importorskip("pandas")
    from sklearn_dpfair.utils._validation import resolve_classes

    y = pd.Series(["no", "yes", None], dtype="string")
    with pytest.raises(ValueError, match="not in the declared classes") as info:
        resolve_classes(["no", "yes"], np.asarray(y))
    assert "<NA>" not in str(info.value)
    # The other rows are still located.
    classes_, codes, _ = resolve_classes(["no", "yes"], np.asarray(y[:2]))
    assert codes.tolist() == [0, 1]
    # Declared, it is a missing class, as None and NaN are.
    with pytest.raises(ValueError, match="classes contains a missing value"):
        resolve_classes(np.array(["no", pd.NA], dtype=object), np.asarray(y[:2]))


def test_declared_classes_are_copied_not_aliased():
    from sklearn_dpfair.utils._validation import resolve_classes

    classes = np.array([0, 1])
    classes_, _, _ = resolve_classes(classes, np.array([1, 0, 1]))
    classes_[:] = [7, 8]
    assert classes.tolist() == [0, 1]


@pytest.mark.parametrize(
    "weights",
    [np.array(["a", "b"]), np.array([1 + 1j, 2.0]), [1 + 1j, 2.0], [{}, 1.0]],
    ids=["str", "complex", "complex-list", "dict-list"],
)
def test_non_numeric_weights_name_sample_weight(weights):
    # The weights are public: the message names the parameter, not "private
    # values" (the redaction applied to a conversion message of the rows).
    with pytest.raises(ValueError, match="sample_weight must be real numbers"):
        check_public_weights(weights, np.zeros((2, 1)))


@pytest.mark.parametrize(
    "weights",
    [np.ones((2, 1)), np.zeros(2), [[1.0], [2.0]], [0, 0]],
    ids=["2-D", "all-zero", "2-D list", "all-zero list"],
)
@pytest.mark.parametrize("name", ["sample_weight", "clf__sample_weight"])
def test_every_refused_weight_names_its_parameter(weights, name):
    # scikit-learn says "Sample weights must be 1D array or scalar" and
    # (from 1.7) "Sample weights must contain at least one non-zero number":
    # the message now starts with the parameter the caller passed.
    match = f"^{name}(: Sample weights must| are all zero)"
    with pytest.raises(ValueError, match=match):
        check_public_weights(weights, np.zeros((2, 1)), name=name)


def _weight_forms(torch, weights):
    import pandas as pd

    return {
        "list": weights.tolist(),
        "tuple": tuple(weights.tolist()),
        "Series": pd.Series(weights),
        "tensor": torch.from_numpy(weights),
        "requires_grad": torch.from_numpy(weights).requires_grad_(),
    }


def test_public_weights_of_any_form_with_torch_x_are_host_numpy(dispatch):
    # scikit-learn moves the weights to X's namespace under dispatch: a
    # list, tuple or Series raised AttributeError ('strides'), and a tensor
    # that requires grad could not be read as numpy.
    torch = pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    weights = np.array([1.0, 0.5, 2.0])
    X = torch.zeros(3, 2, dtype=torch.float32)
    for form, given in _weight_forms(torch, weights).items():
        got = check_public_weights(given, X)
        assert isinstance(got, np.ndarray) and got.dtype == np.float64, form
        np.testing.assert_array_equal(got, weights)
    assert not torch.from_numpy(weights).requires_grad  # nothing changed


@pytest.mark.parametrize(
    "weights, match",
    [
        ([1.0, 2.0], r"sample_weight\.shape"),
        ([1.0, -1.0, 2.0], "sample_weight"),
        ([0.0, 0.0, 0.0], "(?i)sample.weight"),
        (["a", 1.0, 2.0], "sample_weight must be real numbers"),
    ],
    ids=["length", "negative", "all-zero", "str"],
)
def test_invalid_public_weights_with_torch_x_name_sample_weight(
    dispatch, weights, match
):
    torch = pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    X = torch.zeros(3, 2)
    with pytest.raises(ValueError, match=match):
        check_public_weights(weights, X)
    if not isinstance(weights[0], str):
        with pytest.raises(ValueError, match=match):
            check_public_weights(torch.tensor(weights, requires_grad=True), X)


def test_a_frame_is_a_sparse_layout_only_when_every_column_is_sparse():
    # scikit-learn's check_array makes a frame of SparseDtype columns only a
    # sparse matrix; a frame mixing them with dense columns becomes dense.
    import pandas as pd
    import scipy.sparse as sp

    csr = sp.csr_matrix(np.eye(3))
    frame = pd.DataFrame.sparse.from_spmatrix(csr, columns=list("abc"))
    mixed = frame.assign(c=np.ones(3))
    assert is_sparse_layout(csr) and is_sparse_layout(frame)
    assert not is_sparse_layout(mixed)
    assert not is_sparse_layout(pd.DataFrame())
    assert not is_sparse_layout(np.eye(3))


def test_fit_keywords_are_read_from_the_signature():
    class Open:
        def fit(self, X, y=None, **params):
            return self

    check_fit_keywords(Open(), {"anything": 1})
    check_fit_keywords(DPLogisticRegression(), {"sample_weight": None})
    with pytest.raises(TypeError, match="unexpected keyword argument 'X'"):
        # Positional-only names are not keywords.
        class Positional:
            def fit(self, X, /, y=None):
                return self

        check_fit_keywords(Positional(), {"X": 1})


def test_warn_at_caller_passes_through_a_numpy_errstate_decorator():
    # The package's solvers are decorated with @np.errstate(...), which calls
    # them through numpy's wrapper: the warning pointed at numpy's
    # _ufunc_config.py, not at the user's line.
    import os

    import sklearn_dpfair

    package_file = os.path.join(os.path.dirname(sklearn_dpfair.__file__), "_x.py")
    namespace = {"warn_at_caller": warn_at_caller}
    source = "def solver():\n    warn_at_caller('from a solver', UserWarning)\n"
    exec(compile(source, package_file, "exec"), namespace)
    solver = np.errstate(over="ignore")(namespace["solver"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        solver()
    [warning] = caught
    assert warning.filename == __file__


def test_the_delta_warning_has_one_text_for_every_fold_size():
    # It named 1/n_samples, so a cross-validation with folds of two sizes
    # warned twice for one cause.
    from sklearn_dpfair.utils._validation import check_delta_for_n

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_delta_for_n(0.007, 162)
        check_delta_for_n(0.007, 163)
    assert len({str(w.message) for w in caught}) == 1
    assert "delta=0.007 is not smaller than 1/n_samples" in str(caught[0].message)


@pytest.mark.parametrize(
    "classes", [[0, "yes"], np.array([0, "yes"], dtype=object), ("no", 1.5)]
)
def test_declared_classes_of_strings_and_numbers_are_refused_naming_classes(classes):
    # numpy made '0' of 0: labels 0 in y were then "not in the declared
    # classes", a message that hid the cause.
    from sklearn_dpfair.utils._validation import check_declared_classes

    with pytest.raises(ValueError, match="classes mixes strings and numbers"):
        check_declared_classes(classes)


def test_concurrent_pipeline_fits_leave_the_warning_filters_as_they_were():
    # Each fit silenced its steps' delta warnings in a warnings.catch_warnings
    # block, which swaps the process-wide filter list: overlapping blocks in
    # threads left the "ignore" filter installed, and every later fit in the
    # process lost its delta warning.
    from concurrent.futures import ThreadPoolExecutor

    X, y = _data(n=400)

    def fit(_):
        steps = [("scale", DPStandardScaler(bounds=(-5.0, 5.0)))]
        return PrivatePipeline(steps, delta=0.01).fit(X)

    with warnings.catch_warnings():
        warnings.simplefilter("default")
        before = list(warnings.filters)
        for _ in range(3):
            with ThreadPoolExecutor(8) as pool:
                list(pool.map(fit, range(32)))
            assert warnings.filters == before
        with warnings.catch_warnings(record=True) as record:
            DPLogisticRegression(classes=[0, 1], max_iter=3, delta=0.01).fit(X, y)
    assert any("is not smaller than 1/n_samples" in str(w.message) for w in record)


def test_a_fit_in_a_worker_thread_warns_again_in_a_new_block():
    # Worker threads kept what they had shown for the whole process: a second
    # fit in a new warnings.catch_warnings block showed nothing.
    from concurrent.futures import ThreadPoolExecutor

    X, y = _data(n=150)

    def fit():
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("default")
            DPLogisticRegression(max_iter=2, random_state=0).fit(X, y)
        return [w for w in record if w.category is PrivacyLeakWarning]

    with ThreadPoolExecutor(1) as pool:
        shown = [pool.submit(fit).result() for _ in range(2)]
    assert [len(s) for s in shown] == [1, 1]
