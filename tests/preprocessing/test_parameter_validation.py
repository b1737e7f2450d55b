# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Parameters are validated when ``fit`` starts, once, before the data is read.

A bad value must raise an error that names the parameter (scikit-learn's
InvalidParameterError), not a Python error from midway through the fit
(``"5" + 1``, ``len(3)``), and leave the estimator as it was.
"""

import re
import warnings

import numpy as np
import pytest
from sklearn.base import clone

from sklearn_dpfair.preprocessing import (
    DPKBinsDiscretizer,
    DPOneHotEncoder,
    DPQuantileTransformer,
    DPSimpleImputer,
    DPSplineTransformer,
    DPStandardScaler,
)
from sklearn_dpfair.utils._numeric import MAX_FLOAT64_ENTRIES

BOUNDS = (0.0, 100.0)

#: A bad value of every privacy parameter the transformers share.
PRIVACY_BAD = {
    "epsilon": "1.0",
    "delta": 1.5,
    "accountant": "gdp",
    "random_state": "seed",
}

#: One bad value of every parameter of ``bounds="auto"`` transformers.
AUTO_BOUNDS_BAD = {
    "bounds": "wide",
    "auto_share": "0.2",
    "auto_quantiles": "iqr",
    "auto_fence": -1.0,
}

#: ``(estimator factory, {parameter: one bad value})`` of every transformer.
TRANSFORMERS = {
    "DPStandardScaler": (
        lambda **kw: DPStandardScaler(**{"bounds": BOUNDS, **kw}),
        {**AUTO_BOUNDS_BAD, "with_mean": "yes", "with_std": 1.0, **PRIVACY_BAD},
    ),
    "DPSimpleImputer": (
        lambda **kw: DPSimpleImputer(**{"bounds": BOUNDS, **kw}),
        {**AUTO_BOUNDS_BAD, "strategy": "mode", **PRIVACY_BAD},
    ),
    "DPKBinsDiscretizer": (
        lambda **kw: DPKBinsDiscretizer(**{"bounds": BOUNDS, **kw}),
        {
            "bounds": None,
            "n_bins": "5",
            "encode": "onehot",
            "strategy": "kmeans",
            **PRIVACY_BAD,
        },
    ),
    "DPQuantileTransformer": (
        lambda **kw: DPQuantileTransformer(**{"bounds": BOUNDS, **kw}),
        {
            "bounds": 100.0,
            "n_quantiles": 2.5,
            "output_distribution": "lognormal",
            **PRIVACY_BAD,
        },
    ),
    "DPSplineTransformer": (
        lambda **kw: DPSplineTransformer(**{"bounds": BOUNDS, **kw}),
        {
            "bounds": "wide",
            "n_knots": "5",
            "degree": -1,
            "knots": "random",
            "include_bias": "yes",
            **PRIVACY_BAD,
        },
    ),
    "DPOneHotEncoder": (
        DPOneHotEncoder,
        {
            "categories": 3,
            "handle_unknown": "error",
            "min_frequency": "5",
            "max_categories": 0,
            **PRIVACY_BAD,
        },
    ),
}

CASES = [
    pytest.param(name, param, value, id=f"{name}-{param}")
    for name, (_, bad) in TRANSFORMERS.items()
    for param, value in bad.items()
]
# categories=None: the NoneType twin of categories=3.
CASES.append(
    pytest.param("DPOneHotEncoder", "categories", None, id="DPOneHotEncoder-None")
)


def _data(name):
    rng = np.random.default_rng(0)
    if name == "DPOneHotEncoder":
        return rng.integers(0, 3, size=(60, 3))
    return rng.uniform(10.0, 90.0, size=(60, 3))


def _fitted_attributes(est):
    return sorted(k for k in vars(est) if k.endswith("_") and not k.startswith("__"))


@pytest.mark.parametrize("name", list(TRANSFORMERS))
def test_every_parameter_has_a_bad_value(name):
    make, bad = TRANSFORMERS[name]
    assert set(bad) == set(make().get_params())
    assert set(bad) == set(type(make())._parameter_constraints)


@pytest.mark.parametrize("method", ["fit", "fit_transform"])
@pytest.mark.parametrize("name, param, value", CASES)
def test_a_bad_parameter_is_named_before_the_fit_starts(name, param, value, method):
    make, _ = TRANSFORMERS[name]
    est = make(**{param: value})
    before = dict(vars(est))
    with pytest.raises((ValueError, TypeError), match=rf"\b{re.escape(param)}\b"):
        getattr(est, method)(_data(name))
    assert _fitted_attributes(est) == []
    assert vars(est).keys() == before.keys()


@pytest.mark.parametrize("name, param, value", CASES)
def test_parameters_are_validated_before_the_data(name, param, value):
    # X is bad too (1-D): the parameter's error comes first, as in
    # scikit-learn, before any row is read.
    make, _ = TRANSFORMERS[name]
    X = _data(name)[:, 0]
    with pytest.raises((ValueError, TypeError), match=rf"\b{re.escape(param)}\b"):
        make(**{param: value}).fit(X)


@pytest.mark.parametrize("name, param, value", CASES)
def test_the_plan_names_a_bad_parameter(name, param, value):
    make, _ = TRANSFORMERS[name]
    est = make(**{param: value})
    with pytest.raises((ValueError, TypeError), match=rf"\b{re.escape(param)}\b"):
        est.privacy_plan(60, 3)
    assert _fitted_attributes(est) == []


#: Parameters that make each transformer read the data more (private
#: bounds, discovered categories, quantile edges) and less.
VARIANTS = [
    pytest.param(name, kwargs, id=f"{name}-{label}")
    for name, variants in {
        "DPStandardScaler": {"declared": {}, "auto": {"bounds": "auto"}},
        "DPSimpleImputer": {
            "declared": {},
            "auto-median": {"bounds": "auto", "strategy": "median"},
        },
        "DPKBinsDiscretizer": {"quantile": {}, "uniform": {"strategy": "uniform"}},
        "DPQuantileTransformer": {"quantile": {}},
        "DPSplineTransformer": {"quantile": {}, "uniform": {"knots": "uniform"}},
        "DPOneHotEncoder": {
            "discovered": {},
            "declared": {"categories": [[0, 1, 2]] * 3},
        },
    }.items()
    for label, kwargs in variants.items()
]


@pytest.mark.parametrize("name, kwargs", VARIANTS)
def test_parameters_are_validated_once_per_fit_and_plan(name, kwargs, monkeypatch):
    make, _ = TRANSFORMERS[name]
    est = make(random_state=0, **kwargs)
    calls = []
    validate = type(est)._validate_params

    def counting(self):
        calls.append(type(self).__name__)
        return validate(self)

    monkeypatch.setattr(type(est), "_validate_params", counting)
    est.fit(_data(name))
    assert calls == [name]
    calls.clear()
    est.privacy_plan(60, 3)
    assert calls == [name]


@pytest.mark.parametrize(
    "categories",
    [[0, 1, 2], ["abc", "ab", "a"], [None, None, None], [{0: 1}, [0], [0]]],
)
def test_categories_need_one_array_like_per_column(categories):
    # ["a", "b"] for two columns would declare one category in each.
    est = DPOneHotEncoder(categories=categories)
    with pytest.raises(ValueError, match=r"categories .* per column.* column 0"):
        est.fit(_data("DPOneHotEncoder"))
    assert _fitted_attributes(est) == []
    with pytest.raises(ValueError, match=r"categories .* per column"):
        est.privacy_plan(60, 3)
    # One array-like per column, of any kind, is accepted.
    declared = [np.array([0, 1, 2]), (0, 1, 2), [0, 1, 2]]
    enc = DPOneHotEncoder(categories=declared).fit(_data("DPOneHotEncoder"))
    assert [list(c) for c in enc.categories_] == [[0, 1, 2]] * 3


#: Transformers whose fit takes sample_weight, with each way they cut.
_WEIGHTED = [
    DPStandardScaler(bounds=BOUNDS),
    DPKBinsDiscretizer(bounds=BOUNDS, strategy="quantile"),
    DPKBinsDiscretizer(bounds=BOUNDS, strategy="uniform"),
    DPSplineTransformer(bounds=BOUNDS, knots="quantile"),
    DPSplineTransformer(bounds=BOUNDS, knots="uniform"),
]


@pytest.mark.parametrize("transformer", _WEIGHTED, ids=repr)
@pytest.mark.parametrize(
    "sample_weight, message",
    [
        ([1.0, 2.0], "sample_weight"),
        (-np.ones(60), "[Nn]egative.*sample_weight|sample_weight.*[Nn]egative"),
        (np.zeros(60), "[Ss]ample.weight"),
        (["a"] * 60, "sample_weight"),
        (np.full(60, np.inf), "sample_weight"),
    ],
)
def test_bad_weights_are_refused_before_anything_is_released(
    selection_scores, ordinary_data, transformer, sample_weight, message
):
    est = clone(transformer).set_params(random_state=0)
    with pytest.raises(ValueError, match=message):
        est.fit(ordinary_data, sample_weight=sample_weight)
    assert not selection_scores
    assert not [name for name in vars(est) if name.endswith("_")]


@pytest.mark.parametrize("name", list(TRANSFORMERS))
def test_an_int_epsilon_beyond_numpy_fits_as_its_float(name):
    # 10**30 is a valid epsilon, but too large an int for numpy's ufuncs
    # (np.isfinite raised a TypeError after the rows were read).
    make, _ = TRANSFORMERS[name]
    X = _data(name)
    ours = make(epsilon=10**30, random_state=0).fit(X)
    ref = make(epsilon=1e30, random_state=0).fit(X)
    assert ours.epsilon_ == ref.epsilon_
    assert ours.privacy_plan(60, 3).epsilon == ours.epsilon_
    np.testing.assert_allclose(ours.transform(X), ref.transform(X), rtol=1e-12)


@pytest.mark.parametrize("name", list(TRANSFORMERS))
def test_an_int_epsilon_beyond_the_largest_float_is_named(name):
    make, _ = TRANSFORMERS[name]
    est = make(epsilon=10**400, random_state=0)
    # Refused by the epsilon constraint every private estimator shares.
    with pytest.raises(ValueError, match=r"^The 'epsilon' parameter"):
        est.privacy_plan(60, 3)
    with pytest.raises(ValueError, match=r"^The 'epsilon' parameter"):
        est.fit(_data(name))
    assert _fitted_attributes(est) == []


@pytest.mark.parametrize(
    "name", [name for name in TRANSFORMERS if name != "DPOneHotEncoder"]
)
@pytest.mark.parametrize(
    "bounds", [(0, 10**400), [(-(10**5000), 1)] * 3], ids=["pair", "per-column"]
)
def test_a_bound_beyond_float64_is_named_by_fit_and_plan(name, bounds):
    # numpy's OverflowError ("int too large to convert to float") named no
    # parameter; the bound's digits are not printed (str() of an int of more
    # than 4300 digits raises).
    make, _ = TRANSFORMERS[name]
    est = make(bounds=bounds, random_state=0)
    with pytest.raises(ValueError, match=r"^bounds must be finite"):
        est.privacy_plan(60, 3)
    with pytest.raises(ValueError, match=r"^bounds must be finite"):
        est.fit(_data(name))
    assert _fitted_attributes(est) == []


#: Size parameters whose arrays no numpy array can hold, for one column.
HUGE_SIZES = [
    pytest.param(name, param, id=f"{name}-{param}")
    for name, param in [
        ("DPKBinsDiscretizer", "n_bins"),
        ("DPQuantileTransformer", "n_quantiles"),
        ("DPSplineTransformer", "n_knots"),
        ("DPSplineTransformer", "degree"),
    ]
]


@pytest.mark.parametrize("name, param", HUGE_SIZES)
@pytest.mark.parametrize("value", [10**30, MAX_FLOAT64_ENTRIES + 1])
def test_a_size_no_array_can_hold_is_named_by_fit_and_plan(name, param, value):
    # numpy's "Maximum allowed size exceeded" named no parameter, and the
    # plan accepted what the fit refused.
    make, _ = TRANSFORMERS[name]
    est = make(**{param: value}, random_state=0)
    match = rf"\b{param}={value}\b.* too large: .* one numpy array"
    with pytest.raises(ValueError, match=match):
        est.privacy_plan(60, 3)
    with pytest.raises(ValueError, match=match):
        est.fit(_data(name))
    # Before the data: a 1-D X would be refused too.
    with pytest.raises(ValueError, match=match):
        est.fit(_data(name)[:, 0])
    assert _fitted_attributes(est) == []


@pytest.mark.parametrize(
    "name, param, size",
    [
        # (n_bins + 1) edges and n_quantiles quantiles: half the cap.
        ("DPKBinsDiscretizer", "n_bins", MAX_FLOAT64_ENTRIES // 2 - 1),
        ("DPQuantileTransformer", "n_quantiles", MAX_FLOAT64_ENTRIES // 2),
    ],
)
def test_the_size_cap_is_of_all_the_columns_together(name, param, size):
    # One column's edges fit in an array, three columns' do not.
    make, _ = TRANSFORMERS[name]
    est = make(**{param: size}, random_state=0)
    assert est.privacy_plan(60, 1).epsilon > 0
    match = rf"\b{param}={size}\b.* too large"
    with pytest.raises(ValueError, match=match):
        est.privacy_plan(60, 3)
    with pytest.raises(ValueError, match=match):
        est.fit(_data(name))
    assert _fitted_attributes(est) == []


@pytest.mark.parametrize("name", list(TRANSFORMERS))
@pytest.mark.parametrize(
    "param, value",
    [
        ("epsilon", np.float32(0.3)),
        ("delta", np.float32(1e-5)),
        ("delta", np.float32(1e-45)),
    ],
)
def test_float32_privacy_parameters_fit_as_the_equal_float(name, param, value):
    # The encoder halved a float32 delta in float32: 1e-45 to 0 (an
    # infinite threshold), and other deltas to a rounded threshold.
    make, _ = TRANSFORMERS[name]
    X = _data(name)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        ours = make(**{param: value}, random_state=0).fit(X)
    ref = make(**{param: float(value)}, random_state=0).fit(X)
    assert (ours.epsilon_, ours.delta_) == (ref.epsilon_, ref.delta_)
    # Scalar arithmetic only (ndtri of the share): the same float.
    assert getattr(ours, "threshold_", None) == getattr(ref, "threshold_", None)
    np.testing.assert_allclose(ours.transform(X), ref.transform(X), rtol=1e-12)
