# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
import math
import warnings

import numpy as np
import pytest
from sklearn.preprocessing import QuantileTransformer

from sklearn_dpfair.preprocessing import DPQuantileTransformer
from sklearn_dpfair.privacy._accounting import epsilon_of
from sklearn_dpfair.privacy._quantile import quantile_sensitivity

BOUNDS = (0.0, 100.0)


def test_utilities_move_by_at_most_their_sensitivity(
    selection_scores, selection_sensitivities, neighbours
):
    for Z in neighbours:
        DPQuantileTransformer(bounds=BOUNDS, n_quantiles=5, random_state=0).fit(Z)
    n = len(selection_scores) // 2
    levels = [0.25, 0.5, 0.75] * 3
    assert n == 9
    for k in range(n):
        assert selection_sensitivities[k] == quantile_sensitivity(
            levels[k], "add_remove"
        )
        moved = np.max(np.abs(selection_scores[n + k] - selection_scores[k]))
        assert moved <= selection_sensitivities[k] + 1e-12


def test_epsilon_recomputed_from_the_event_meets_the_target(missing_data):
    qt = DPQuantileTransformer(bounds=BOUNDS, epsilon=0.5).fit(missing_data)
    assert epsilon_of(qt.dp_event_, qt.delta_, "rdp") == pytest.approx(
        qt.epsilon_, rel=1e-9
    )
    assert qt.epsilon_ <= 0.5 * (1 + 1e-9)
    assert qt.dp_event_.count == 8 * 3


def _fitted_pair(distribution):
    """Lognormal rows within BOUNDS, ours at epsilon=inf and scikit-learn's, fitted."""
    rng = np.random.default_rng(0)
    X = rng.lognormal(3.0, 0.5, size=(500, 2))
    kwargs = {"n_quantiles": 20, "output_distribution": distribution}
    ours = DPQuantileTransformer(bounds=BOUNDS, epsilon=np.inf, **kwargs).fit(X)
    return rng, X, kwargs, ours, QuantileTransformer(**kwargs).fit(X)


@pytest.mark.parametrize("distribution", ["uniform", "normal"])
def test_epsilon_inf_is_scikit_learn_on_data_within_the_bounds(distribution):
    rng, _, _, ours, ref = _fitted_pair(distribution)
    np.testing.assert_allclose(ours.quantiles_, ref.quantiles_, rtol=1e-12)
    test = rng.lognormal(3.0, 0.6, size=(200, 2))
    np.testing.assert_allclose(ours.transform(test), ref.transform(test), atol=1e-9)
    assert math.isinf(ours.epsilon_)


def test_loose_public_bounds_still_give_useful_quantiles():
    # Income-like column, public range [0, 1e7]: the median is found within
    # a few percent although the range is 200 times the median.
    rng = np.random.default_rng(1)
    income = rng.lognormal(10.8, 0.8, size=(5000, 1))
    errors = []
    for seed in range(5):
        qt = DPQuantileTransformer(
            bounds=(0.0, 1e7), n_quantiles=5, epsilon=1.0, random_state=seed
        ).fit(income)
        errors.append(abs(math.log(qt.quantiles_[2, 0] / np.median(income))))
    assert np.median(errors) < 0.05


def test_utility_rises_with_epsilon():
    rng = np.random.default_rng(2)
    X = rng.normal(50.0, 10.0, size=(2000, 1))
    exact = np.quantile(X, np.linspace(0, 1, 5)[1:-1])
    errors = [
        np.mean(
            [
                np.abs(
                    DPQuantileTransformer(
                        bounds=BOUNDS, n_quantiles=5, epsilon=eps, random_state=s
                    )
                    .fit(X)
                    .quantiles_[1:-1, 0]
                    - exact
                ).mean()
                for s in range(10)
            ]
        )
        for eps in (0.01, 0.1, 1.0)
    ]
    assert errors[0] > errors[1] > errors[2]


@pytest.mark.parametrize("distribution", ["uniform", "normal"])
def test_output_is_within_the_declared_bounds(distribution, ordinary_data):
    qt = DPQuantileTransformer(
        bounds=BOUNDS, output_distribution=distribution, random_state=0
    ).fit(ordinary_data)
    out = qt.transform(np.array([[-1e300, 1e300, 50.0], [0.0, 100.0, np.nan]]))
    finite = out[~np.isnan(out)]
    assert np.all(finite >= qt.output_bounds_[0, 0])
    assert np.all(finite <= qt.output_bounds_[0, 1])
    assert np.isnan(out[1, 2])


def test_pld_is_refused():
    with pytest.raises(ValueError, match="accountant"):
        DPQuantileTransformer(bounds=BOUNDS, accountant="pld").fit(np.ones((5, 1)))


@pytest.mark.parametrize("distribution", ["uniform", "normal"])
def test_inverse_transform_is_scikit_learn_at_epsilon_inf(distribution):
    rng, X, kwargs, ours, ref = _fitted_pair(distribution)
    test = rng.lognormal(3.0, 0.6, size=(200, 2))
    Y = ref.transform(test)
    Y[:4, 0] = [np.nan, -10.0, 10.0, 0.0]
    Y[:2, 1] = [1.0, 1e-9]
    np.testing.assert_allclose(
        ours.inverse_transform(Y), ref.inverse_transform(Y), rtol=1e-9, atol=1e-9
    )
    # Post-processing of the released quantiles: within them, at any epsilon.
    private = DPQuantileTransformer(bounds=BOUNDS, random_state=0, **kwargs).fit(X)
    back = private.inverse_transform(private.transform(test))
    assert np.all(back >= private.quantiles_[0])
    assert np.all(back <= private.quantiles_[-1])
    with pytest.raises(ValueError, match="features"):
        private.inverse_transform(Y[:, :1])


@pytest.mark.parametrize("distribution", ["uniform", "normal"])
def test_round_trip_gives_the_end_points_back_as_scikit_learn(distribution):
    # The normal output was clipped at ppf(1 - 1e-7), whose CDF rounds to
    # just inside the inverse's band of 1e-7: the largest value came back
    # 0.3 short of 1e6 (scikit-learn clips one spacing beyond, and returns
    # it exactly). The clipped ends are scikit-learn's outputs too.
    X = np.array([[0.0], [1.0], [2.0], [1e6]])
    kwargs = {"n_quantiles": 4, "output_distribution": distribution}
    ours = DPQuantileTransformer((-1e7, 1e7), epsilon=np.inf, **kwargs).fit(X)
    ref = QuantileTransformer(**kwargs).fit(X)
    np.testing.assert_allclose(
        ours.inverse_transform(ours.transform(X)), X, rtol=1e-12, atol=1e-12
    )
    outside = np.array([[-5.0], [5e6]])
    np.testing.assert_allclose(
        ours.transform(outside), ref.transform(outside), rtol=1e-12
    )
    assert ours.output_bounds_[0, 0] <= ours.transform(outside)[0, 0]
    assert ours.transform(outside)[1, 0] <= ours.output_bounds_[0, 1]


@pytest.mark.parametrize("bounds", [(-1e-320, 1e-320), (0.0, 1e-300)])
@pytest.mark.parametrize("epsilon", [1.0, np.inf])
def test_bounds_of_subnormal_scale_give_finite_outputs(bounds, epsilon):
    # Quantiles a subnormal apart overflow the interpolation's slopes
    # unless it is computed in rescaled units.
    lo, hi = bounds
    rng = np.random.default_rng(0)
    X = np.sort(lo + (hi - lo) * rng.uniform(size=(300, 1)), axis=0)
    qt = DPQuantileTransformer(bounds, n_quantiles=5, epsilon=epsilon, random_state=0)
    out = qt.fit(X).transform(X)
    assert np.isfinite(out).all()
    assert ((out >= 0.0) & (out <= 1.0)).all()
    assert (np.diff(out[:, 0]) >= 0.0).all()


def test_epsilon_inf_tiny_bounds_are_the_rescaled_fit():
    # A power of two scales data, bounds and quantiles exactly: the map of
    # tiny values is that of the same values at ordinary scale.
    X = np.random.default_rng(0).uniform(0.0, 1.0, size=(300, 1))
    scale = 2.0**-997
    tiny = DPQuantileTransformer((0.0, scale), n_quantiles=5, epsilon=np.inf)
    ordinary = DPQuantileTransformer((0.0, 1.0), n_quantiles=5, epsilon=np.inf)
    np.testing.assert_allclose(
        tiny.fit(X * scale).transform(X * scale),
        ordinary.fit(X).transform(X),
        rtol=1e-12,
        atol=1e-12,
    )


@pytest.mark.parametrize("n_quantiles", [3, 5])
@pytest.mark.parametrize("distribution", ["uniform", "normal"])
def test_epsilon_inf_huge_bounds_are_the_rescaled_fit(distribution, n_quantiles):
    # Quantiles near the largest float overflow the interpolation's
    # differences and slopes unless it is computed in rescaled units: the
    # maps of huge values are those of the same values at ordinary scale.
    # With 3 quantiles, -1e308 and 1e308 are adjacent (rows ordered so that
    # no running sum overflows in validation).
    X = np.array([[-1.0], [1.0], [-1.0], [1.0], [-1.0], [0.5], [-1.0]])
    T = np.array([[-1.0], [1.0], [-0.7], [0.9], [-0.2], [0.3], [0.0], [0.5]])
    Y = np.array([[0.0], [0.3], [0.6], [0.75], [0.999], [1.0], [np.nan]])
    if distribution == "normal":
        Y = np.array([[-10.0], [-0.5], [0.2], [0.7], [3.0], [10.0], [np.nan]])
    kwargs = {"n_quantiles": n_quantiles, "output_distribution": distribution}
    huge = DPQuantileTransformer((-1e308, 1e308), epsilon=np.inf, **kwargs)
    ordinary = DPQuantileTransformer((-1.0, 1.0), epsilon=np.inf, **kwargs)
    huge.fit(X * 1e308)
    ordinary.fit(X)
    np.testing.assert_allclose(
        huge.transform(T * 1e308), ordinary.transform(T), rtol=1e-12, atol=1e-12
    )
    back = huge.inverse_transform(Y)
    np.testing.assert_allclose(
        back / 1e308, ordinary.inverse_transform(Y), rtol=1e-12, atol=1e-12
    )
    # Post-processing of the released quantiles: within them, at any epsilon.
    private = DPQuantileTransformer((-1e308, 1e308), random_state=0, **kwargs)
    for fitted in (huge, private.fit(X * 1e308)):
        back = fitted.inverse_transform(Y)[:-1]
        assert (back >= fitted.quantiles_[0]).all()
        assert (back <= fitted.quantiles_[-1]).all()


def test_inverse_transform_after_a_dataframe_fit_does_not_warn():
    # Its input is transform's ndarray output: scikit-learn's inverse
    # transforms do not check feature names, nor does this one.
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"a": np.arange(20.0), "b": np.arange(20.0) ** 2})
    qt = DPQuantileTransformer(bounds=(0.0, 400.0), epsilon=np.inf).fit(df)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        back = qt.inverse_transform(qt.transform(df))
    assert back.shape == df.shape
    with pytest.raises(ValueError, match="X has 1 features, but DPQuantileTransformer"):
        qt.inverse_transform(np.zeros((2, 1)))
