# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The shared linear prediction mixins: finite predictions for any finite input."""

import contextlib
import functools
import inspect
import os
import warnings

import numpy as np
import pytest

import sklearn_dpfair
from sklearn_dpfair._base import LinearClassifierMixin, LinearRegressorMixin
from sklearn_dpfair.utils._instance_generator import construct_instance
from sklearn_dpfair.utils.discovery import all_estimators

BIG = np.finfo(np.float64).max

# Ordinary rows first, then rows whose plain scores overflow (inf), are
# inf - inf (nan), or underflow.
ORDINARY = np.array([[0.5, -1.0, 2.0], [0.0, 0.0, 0.0], [3.0, 1.0, -0.5]])
EXTREME = np.array(
    [
        [1.7e308, 0.0, 0.0],
        [-1.7e308, 1.7e308, 0.0],
        [1e300, 1e300, 1e300],
        [-BIG, -BIG, BIG],
        [5e-324, -5e-324, 0.0],
    ]
)


@contextlib.contextmanager
def _no_warning_from_the_package():
    # scikit-learn's input check sums X (which may overflow and warn); the
    # package's own arithmetic must not warn about handled overflows.
    package = os.path.dirname(sklearn_dpfair.__file__)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    ours = [w for w in caught if w.filename.startswith(package)]
    assert not ours, [str(w.message) for w in ours]


def _mixin_users(mixin):
    found = [(n, c) for n, c in all_estimators() if issubclass(c, mixin)]
    assert found, f"no estimator uses {mixin.__name__}"
    return found


def _fitted(cls, n_outputs):
    # The mixins read only these attributes: a model with large coefficients
    # (scores of 1e308 * 3 overflow) without running a fit.
    est = construct_instance(cls)
    rng = np.random.default_rng(0)
    coef = rng.choice([-3.0, -1.5, 2.0, 4.0], size=(n_outputs, 3))
    if issubclass(cls, LinearClassifierMixin):
        est.classes_ = np.arange(max(n_outputs, 2))
        est.coef_ = coef
        est.intercept_ = np.linspace(-1.0, 1.0, n_outputs)
    else:
        est.coef_ = coef[0]
        est.intercept_ = 0.25
    est.n_features_in_ = 3
    return est


@pytest.mark.parametrize("n_outputs", [1, 3], ids=["binary", "multiclass"])
@pytest.mark.parametrize(
    "name, cls", _mixin_users(LinearClassifierMixin), ids=lambda v: str(v)
)
def test_classifier_predictions_are_finite_for_any_finite_input(name, cls, n_outputs):
    est = _fitted(cls, n_outputs)
    X = np.vstack([ORDINARY, EXTREME])
    with _no_warning_from_the_package():
        scores = est.decision_function(X)
        proba = est.predict_proba(X)
        log_proba = est.predict_log_proba(X)
        labels = est.predict(X)
    for out in (scores, proba, log_proba):
        assert np.isfinite(out).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    assert np.all(log_proba <= 0.0)
    assert set(labels) <= set(est.classes_)
    # Ordinary rows: exactly the plain formulas, bit for bit. Legitimate
    # although the scores are products computed on another stack of rows:
    # every term (small dyadic features times coefficients of -3 .. 4) and
    # every partial sum is exact, so no summation order can change them.
    n = ORDINARY.shape[0]
    plain = ORDINARY @ est.coef_.T + est.intercept_
    if n_outputs == 1:
        plain = plain.ravel()
    np.testing.assert_array_equal(scores[:n], plain)
    np.testing.assert_array_equal(log_proba[:n], np.log(proba[:n]))


@pytest.mark.parametrize(
    "name, cls", _mixin_users(LinearRegressorMixin), ids=lambda v: str(v)
)
def test_regressor_predictions_are_finite_for_any_finite_input(name, cls):
    est = _fitted(cls, 1)
    X = np.vstack([ORDINARY, EXTREME])
    with _no_warning_from_the_package():
        pred = est.predict(X)
    assert pred.shape == (X.shape[0],) and np.isfinite(pred).all()
    n = ORDINARY.shape[0]
    # Bit for bit: exact terms and partial sums, as for the classifiers.
    np.testing.assert_array_equal(pred[:n], ORDINARY @ est.coef_ + est.intercept_)
    # Saturated beyond the largest float, accurate below it.
    assert pred[n] == -BIG or pred[n] == BIG
    expected = 1e300 * est.coef_.sum() + est.intercept_
    np.testing.assert_allclose(pred[n + 2], expected, rtol=1e-12)


def test_float32_input_predictions_are_finite():
    name, cls = _mixin_users(LinearClassifierMixin)[0]
    est = _fitted(cls, 3)
    est.coef_ = est.coef_.astype(np.float32)
    est.intercept_ = est.intercept_.astype(np.float32)
    big = np.finfo(np.float32).max
    X = np.array([[big, 0.0, 0.0], [-big, big, 0.0], [1.0, 2.0, 3.0]], np.float32)
    with _no_warning_from_the_package():
        for predict in ("decision_function", "predict_proba", "predict_log_proba"):
            out = getattr(est, predict)(X)
            assert out.dtype == np.float32 and np.isfinite(out).all()


# Every private estimator and transformer: the rows of a badly shaped or
# unparsable X never appear in what fit raises (the traceback included).
def _private_instances():
    from sklearn_dpfair._base import PrivateEstimatorMixin
    found = [
        construct_instance(c)
        for _, c in all_estimators()
        if issubclass(c, PrivateEstimatorMixin)
    ]
    assert len(found) >= 5
    return found


@pytest.mark.parametrize(
    "estimator", _private_instances(), ids=lambda e: type(e).__name__
)
@pytest.mark.parametrize(
    "X",
    [np.full(40, 4242.5), np.array([["1.5", "Alice Smith"]] * 40, dtype=object)],
    ids=["1-D", "strings"],
)
def test_fit_errors_print_no_private_value(estimator, X):
    import traceback

    if X.dtype == object and type(estimator).__name__ == "DPOneHotEncoder":
        pytest.skip("strings are the encoder's input")
    y = np.arange(40) % 2
    kwargs = {}
    if "sensitive_features" in type(estimator).fit.__code__.co_varnames:
        kwargs["sensitive_features"] = y
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises((ValueError, TypeError)) as info:
            estimator.fit(X, y, **kwargs)
    text = "".join(traceback.format_exception(info.value))
    assert "4242" not in text and "Alice" not in text
    # Nor does an exception still attached to it (hidden from printed
    # tracebacks by ``from None``, but reachable as __context__).
    chained = info.value.__cause__ or info.value.__context__
    while chained is not None:
        assert "4242" not in str(chained) and "Alice" not in str(chained)
        chained = chained.__cause__ or chained.__context__


@pytest.mark.parametrize(
    "estimator", _private_instances(), ids=lambda e: type(e).__name__
)
def test_a_failed_refit_keeps_the_previous_fit_whole(estimator):
    # A refit that raises (here: a negative epsilon, checked after the
    # input) leaves the attributes of the previous fit, not a new
    # n_features_in_ beside the old model.
    from sklearn.base import clone

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 3)), np.arange(60) % 2
    kwargs = {}
    if "sensitive_features" in inspect.signature(type(estimator).fit).parameters:
        kwargs["sensitive_features"] = y
    if type(estimator).__name__ == "DPOneHotEncoder":
        X = (X > 0).astype(int)
    first, second = (X, y), (X[:, :2], y)
    if type(estimator).__name__ == "PrivateMetricFrame":
        # fit(y_true, y_pred): labels, and predictions of them.
        first, second = (y, 1 - y), (y, y)
    fitted = clone(estimator).set_params(random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted.fit(*first, **kwargs)
        before = {k: v for k, v in vars(fitted).items() if k.endswith("_")}
        fitted.set_params(epsilon=-1.0)
        with pytest.raises(ValueError, match="epsilon"):
            fitted.fit(*second, **kwargs)
    after = {k: v for k, v in vars(fitted).items() if k.endswith("_")}
    assert after.keys() == before.keys()
    assert all(after[k] is before[k] for k in before)


def test_a_failed_fermi_refit_keeps_the_previous_fit_whole():
    # FERMIClassifier is not private, so it is not wrapped by the private
    # mixin; its fit restores the previous model on failure all the same
    # (here the groups' length is refused after X was validated).
    from sklearn_dpfair import FERMIClassifier

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 3)), np.arange(60) % 2
    clf = FERMIClassifier(max_iter=2, random_state=0).fit(
        X, y, sensitive_features=y
    )
    before = {k: v for k, v in vars(clf).items() if k.endswith("_")}
    with pytest.raises(ValueError, match="sensitive_features"):
        clf.fit(np.hstack([X, X]), y, sensitive_features=y[:10])
    after = {k: v for k, v in vars(clf).items() if k.endswith("_")}
    assert after.keys() == before.keys()
    assert all(after[k] is before[k] for k in before)
    assert clf.predict(X).shape == (60,)


def test_seeded_private_estimators_are_deterministic_by_their_tags():
    # scikit-learn's non_deterministic means "not deterministic given a
    # fixed random_state", which would skip the checks of subset and order
    # invariance and of pipeline consistency; a seeded private fit is
    # reproducible bit for bit (tests/test_robustness.py).
    from sklearn.utils import get_tags

    for estimator in _private_instances():
        assert not get_tags(estimator).non_deterministic, type(estimator).__name__


def test_a_float64_regressor_scores_float32_input_in_float64():
    # As scikit-learn's linear models do; the shared move of the model to
    # X's namespace once cast it down to float32.
    from sklearn_dpfair import SemiDPLinearRegression

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3)) * [1.0, 10.0, 100.0] + 2000.0
    y = X @ [1.0, -0.5, 0.25] + rng.normal(size=200)
    model = SemiDPLinearRegression(epsilon=np.inf, random_state=0).fit(X, y)
    X32 = X.astype(np.float32)
    predicted = model.predict(X32)
    assert predicted.dtype == np.float64
    np.testing.assert_allclose(
        predicted, X32.astype(np.float64) @ model.coef_ + model.intercept_, rtol=1e-12
    )


@pytest.mark.parametrize(
    "name, cls", _mixin_users(LinearRegressorMixin), ids=lambda v: str(v)
)
def test_a_float32_regressor_scores_float32_csr_rows_in_float32(name, cls):
    # As scikit-learn's linear models, and as the same rows dense: the
    # intercept (a Python float) once became a float64 array on the sparse
    # path and promoted every score.
    import scipy.sparse as sp

    est = _fitted(cls, 1)
    est.coef_ = est.coef_.astype(np.float32)
    X = ORDINARY.astype(np.float32)
    dense, sparse = est.predict(X), est.predict(sp.csr_matrix(X))
    assert dense.dtype == sparse.dtype == np.float32
    np.testing.assert_allclose(sparse, dense, rtol=1e-6)


#: The estimators that clip a per-example term to ``clip_norm``.
_CLIPPING = [
    "DPLogisticRegression",
    "DPFERMIClassifier",
    "HeavyTailDPRegressor",
    "SemiDPLinearRegression",
    "SemiLocalDPLinearRegression",
    "DPMLPClassifier",
]


@pytest.mark.parametrize("name", _CLIPPING)
def test_a_subnormal_clip_norm_is_refused_by_every_estimator(name):
    # Below the smallest normal float a clipped term's subnormal entries
    # round past the clip (5e-324 gave terms of norm 2 C).
    from sklearn.utils._param_validation import InvalidParameterError

    estimator = dict(all_estimators())[name](clip_norm=5e-324)
    X, y = np.ones((4, 2)), np.array([0, 1, 0, 1])
    with pytest.raises(InvalidParameterError, match="clip_norm"):
        estimator.fit(X, y)


class _UnreadRows:
    """Array-like whose rows must not be read: reading them fails the test."""

    shape = (200, 3)

    def __len__(self):
        return self.shape[0]

    def __array__(self, dtype=None, copy=None):
        raise AssertionError("the rows were read before a parameter check")


#: The transformers whose one required argument is the public bounds.
_BOUNDED_TRANSFORMERS = [
    "DPKBinsDiscretizer",
    "DPQuantileTransformer",
    "DPSimpleImputer",
    "DPSplineTransformer",
    "DPStandardScaler",
]


def _with_params(name, **params):
    from sklearn_dpfair.metrics import PrivateMetricFrame
    from sklearn_dpfair.preprocessing import DPStandardScaler

    if name in _BOUNDED_TRANSFORMERS:
        from sklearn_dpfair import preprocessing

        return getattr(preprocessing, name)([(-1.0, 1.0)] * 3, **params)
    if name == "PrivatePipeline":
        from sklearn_dpfair.pipeline import PrivatePipeline

        steps = [("scale", DPStandardScaler([(-1.0, 1.0)] * 3))]
        return PrivatePipeline(steps, **params)
    if name == "PrivateMetricFrame":
        return PrivateMetricFrame([0, 1], **params)
    if name == "PrivateHyperparameterSearch":
        from sklearn_dpfair.linear_model import DPLogisticRegression
        from sklearn_dpfair.model_selection import PrivateHyperparameterSearch

        return PrivateHyperparameterSearch(
            DPLogisticRegression(classes=[0, 1]), {"alpha": [0.0, 0.1]}, **params
        )
    return dict(all_estimators())[name](**params)


def _refused_by_validation(estimator, param):
    """``privacy_plan`` and ``fit`` refuse ``param``, before any row is read."""
    from sklearn.utils._param_validation import InvalidParameterError

    if hasattr(estimator, "privacy_plan"):
        with pytest.raises(InvalidParameterError, match=f"'{param}'"):
            estimator.privacy_plan(200, 3)
    rows = _UnreadRows()
    with pytest.raises(InvalidParameterError, match=f"'{param}'"):
        if type(estimator).__name__ == "PrivateMetricFrame":
            estimator.fit(rows, rows, sensitive_features=rows)
        elif type(estimator).__name__ in _BOUNDED_TRANSFORMERS:
            estimator.fit(rows)
        else:
            estimator.fit(rows, rows)


#: The estimators and transformers that take a privacy budget.
_BUDGETED = [
    *_CLIPPING,
    "DPStandardScaler",
    "PrivateMetricFrame",
    "PrivateHyperparameterSearch",
]


@pytest.mark.parametrize("value", [True, False, np.True_])
@pytest.mark.parametrize("name", [*_BUDGETED, "FERMIClassifier"])
def test_a_bool_random_state_is_refused_by_parameter_validation(name, value):
    # A bool is an Integral, so scikit-learn's "random_state" constraint
    # takes it as a seed; the noise generator refuses it. Parameter
    # validation refuses it now: privacy_plan and fit alike, naming
    # random_state, before any row is read.
    _refused_by_validation(_with_params(name, random_state=value), "random_state")


@pytest.mark.parametrize(
    "param, value",
    [
        pytest.param("epsilon", 10**400, id="epsilon-1e400"),
        ("epsilon", True),
        ("delta", False),
        ("rho", True),
    ],
)
@pytest.mark.parametrize("name", _BUDGETED)
def test_a_budget_beyond_floats_or_a_bool_is_refused_naming_it(name, param, value):
    # An int beyond the largest float is a Real in (0, inf), but the privacy
    # core's float(epsilon) and math.isinf(epsilon) raise OverflowError on
    # it, and a bool would be read as the budget 1. Parameter validation
    # refuses both, naming the parameter, before any row is read.
    estimator = _with_params(name)
    if param not in estimator.get_params():
        pytest.skip(f"{name} has no {param}")
    _refused_by_validation(estimator.set_params(**{param: value}), param)


def _numeric_parameters():
    """(estimator, parameter) pairs whose constraints hold a number interval, no flag."""
    from sklearn_dpfair.utils._sklearn_compat import Interval

    pairs = []
    for name, cls in all_estimators():
        for param, constraints in getattr(cls, "_parameter_constraints", {}).items():
            flags = [c for c in constraints if c in ("boolean", "verbose", bool)]
            if not flags and any(isinstance(c, Interval) for c in constraints):
                pairs.append((name, param))
    return pairs


@pytest.mark.parametrize("value", [True, np.False_])
@pytest.mark.parametrize("name, param", _numeric_parameters())
def test_a_bool_is_refused_where_a_number_is_expected(name, param, value):
    # A bool is an Integral, so scikit-learn's Interval took clip_norm=True
    # as the clip norm 1 and max_iter=True as one pass, recorded as
    # n_iter_ = True. Refused naming the parameter, before any row is read.
    _refused_by_validation(_with_params(name, **{param: value}), param)


@pytest.mark.parametrize(
    "value, accepted",
    [
        (None, True),
        (0, True),
        (np.int64(7), True),
        (2**32 - 1, True),
        (np.random.RandomState(0), True),
        (np.random.default_rng(0), True),
        (True, False),
        (np.True_, False),
        (-1, False),
        (2**32, False),
        (1.0, False),
    ],
)
def test_random_state_constraint_keeps_every_seed_it_took(value, accepted):
    from sklearn.utils._param_validation import (
        InvalidParameterError,
        validate_parameter_constraints,
    )

    from sklearn_dpfair._base import RANDOM_STATE_CONSTRAINT

    check = functools.partial(
        validate_parameter_constraints,
        {"random_state": RANDOM_STATE_CONSTRAINT},
        caller_name="estimator",
    )
    if accepted:
        check({"random_state": value})
    else:
        with pytest.raises(InvalidParameterError, match="'random_state'"):
            check({"random_state": value})


@pytest.mark.parametrize("name", ["DPLogisticRegression", "DPMLPClassifier"])
@pytest.mark.parametrize(
    "param, value",
    [
        pytest.param("silo_epsilon", 10**400, id="silo_epsilon-1e400"),
        ("silo_epsilon", True),
        ("silo_delta", True),
    ],
)
def test_a_silo_budget_beyond_floats_or_a_bool_is_refused_naming_it(
    name, param, value
):
    # silo_epsilon=10**400 raised OverflowError inside the federated driver,
    # and True was refused only at fit, without naming the parameter.
    from sklearn.utils._param_validation import InvalidParameterError

    estimator = dict(all_estimators())[name](**{param: value})
    with pytest.raises(InvalidParameterError, match=f"'{param}'"):
        estimator.fit(np.ones((4, 2)), np.array([0, 1, 0, 1]), silos=[0, 0, 1, 1])
