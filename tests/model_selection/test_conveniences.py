# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""What the private search offers at no privacy cost, and scikit-learn's searches."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.model_selection import GridSearchCV, cross_validate

from sklearn_dpfair import (
    DPLogisticRegression,
    HeavyTailDPRegressor,
    PrivateHyperparameterSearch,
    SemiDPLinearRegression,
    privacy_report,
)
from sklearn_dpfair.model_selection import _runs
from sklearn_dpfair.privacy._accounting import epsilon_of


@pytest.fixture(scope="module")
def data():
    return make_classification(n_samples=1200, n_features=5, random_state=0)


def _search(**kwargs):
    params = {"epsilon": 2.0, "random_state": 0, "n_runs": 4.0}
    params.update(kwargs)
    return PrivateHyperparameterSearch(
        DPLogisticRegression(classes=[0, 1], batch_size="full", max_iter=2),
        {"clip_norm": [0.25, 0.5, 1.0, 2.0]},
        **params,
    )


def _fit(search, X, y, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return search.fit(X, y, **params)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_n_jobs_does_not_change_a_seeded_selection(data, seed):
    X, y = data
    one = _fit(_search(random_state=seed, n_jobs=1), X, y)
    two = _fit(_search(random_state=seed, n_jobs=2), X, y)
    assert one.best_params_ == two.best_params_
    # The same draws on the same rows: same fits, same noise (rounding of the
    # same operations in the same order, so equal bit for bit).
    assert one.best_score_ == two.best_score_
    np.testing.assert_array_equal(one.best_estimator_.coef_, two.best_estimator_.coef_)
    assert one.dp_event_ == two.dp_event_


@pytest.mark.parametrize(
    "n_jobs, config_n_jobs", [(2, None), (-1, None), (None, 2)]
)
def test_runs_in_threads_are_refused_before_any_row_is_read(
    data, n_jobs, config_n_jobs, monkeypatch
):
    # Each run records its warnings inside warnings.catch_warnings, which
    # is process-wide: runs in threads recorded each other's warnings (a
    # non-selected run's warning could leave with the selected one, telling
    # that it ran). The threading backend was documented as unsupported but
    # ran; it is refused, before any row is read.
    import joblib

    from sklearn_dpfair.model_selection import _search as search_module

    X, y = data
    read = []
    monkeypatch.setattr(search_module, "draw_split", lambda *a, **k: read.append(1))
    search = _search(n_jobs=n_jobs)
    with joblib.parallel_config(backend="threading", n_jobs=config_n_jobs):
        with pytest.raises(ValueError, match=r"n_jobs=.* in threads .*loky"):
            search.fit(X, y)
    assert read == [] and not hasattr(search, "best_estimator_")
    assert search.n_jobs == n_jobs
    # One job under threading, and processes, run.
    monkeypatch.undo()
    with joblib.parallel_config(backend="threading"):
        assert _fit(_search(n_jobs=1), X, y).best_params_
    with joblib.parallel_config(backend="loky", n_jobs=config_n_jobs):
        assert _fit(_search(n_jobs=n_jobs), X, y).best_params_


def test_the_runs_are_drawn_before_any_of_them_starts(monkeypatch):
    # Every run's candidate and seeds are fixed by draw_runs: what a run
    # does cannot move another run's randomness.
    rng = np.random.default_rng(0)
    seeds = np.random.SeedSequence(0)
    runs = _runs.draw_runs(5, 3, rng, seeds)
    again = _runs.draw_runs(5, 3, np.random.default_rng(0), np.random.SeedSequence(0))
    assert [r.candidate for r in runs] == [r.candidate for r in again]
    assert [r.fit_seed for r in runs] == [r.fit_seed for r in again]
    assert len({r.fit_seed for r in runs}) == 5
    noise = [np.random.default_rng(r.noise_seed).normal() for r in runs]
    assert noise == [np.random.default_rng(r.noise_seed).normal() for r in again]
    # Unseeded: OS entropy for the noise, None for the fits.
    fresh = _runs.draw_runs(3, 3, rng, None)
    assert all(r.fit_seed is None for r in fresh)
    assert len({r.noise_seed for r in fresh}) == 3


def test_candidate_table_before_and_after_fit(data):
    pd = pytest.importorskip("pandas")
    X, y = data
    search = PrivateHyperparameterSearch(
        DPLogisticRegression(classes=[0, 1], batch_size="full"),
        {"max_iter": [1, 3], "clip_norm": [0.5, 1.0]},
        epsilon=2.0,
        n_runs=2,
        random_state=0,
    )
    before = search.candidate_plans(*X.shape)
    frame = pd.DataFrame(before)
    assert len(frame) == 4
    # ParameterGrid's order: sorted names, the last varying fastest.
    assert list(frame["param_clip_norm"]) == [0.5, 0.5, 1.0, 1.0]
    assert list(frame["param_max_iter"]) == [1, 3, 1, 3]
    assert set(frame["adjacency"]) == {"add_remove"}
    assert (frame["delta"] == 1e-5).all()
    # Every candidate is calibrated to the per-run budget (its noise, not
    # its epsilon, depends on max_iter): each spends at most, and close to, it.
    eps, run = frame["epsilon"].to_numpy(), frame["run_epsilon"].to_numpy()
    assert np.all(eps <= run * (1 + 1e-9)) and np.all(eps >= 0.99 * run)
    assert eps[0] == eps[2] and eps[1] == eps[3]
    plan = search.privacy_plan(*X.shape)
    _fit(search, X, y)
    after = search.candidate_plans_
    for key in before:
        if key != "params":
            np.testing.assert_array_equal(before[key], after[key])
    assert list(after["params"]) == list(before["params"])
    # Each row is that candidate fit's own epsilon at the per-run budget;
    # the whole search's epsilon is the plan's.
    i = list(after["params"]).index(search.best_params_)
    assert after["epsilon"][i] == epsilon_of(
        search.best_estimator_.dp_event_, search.delta, "rdp"
    )
    assert plan.epsilon == search.epsilon_
    with pytest.raises(TypeError, match="n_classes"):
        search.candidate_plans(100, 5, n_classes=2)


@pytest.mark.parametrize(
    "n_samples, error",
    [(399.9, TypeError), (True, TypeError), (np.nan, TypeError),
     (np.inf, TypeError), (0, ValueError)],
)
def test_candidate_plans_checks_the_counts_as_privacy_plan_does(n_samples, error):
    # int() read 399.9 rows as 399 and True as 1; NaN and inf raised bare
    # errors that did not name the parameter.
    search = _search()
    for plan in (search.privacy_plan, search.candidate_plans):
        with pytest.raises(error, match="n_samples"):
            plan(n_samples, 5)


def test_candidate_plans_reads_a_numpy_public_count_as_an_int():
    # n_public=np.int8(3) overflowed where a count of 400 met it.
    search = PrivateHyperparameterSearch(
        SemiDPLinearRegression(adjacency="add_remove", max_iter=2),
        {"clip_norm": [0.5, 2.0]}, epsilon=1.0, score_bound=5.0,
    )
    table = search.candidate_plans(400, 3, n_public=np.int8(3))
    reference = search.candidate_plans(400, 3, n_public=3)
    assert list(table["params"]) == list(reference["params"])
    for key in table:
        if key != "params":
            np.testing.assert_array_equal(table[key], reference[key])


def test_no_refit_the_selected_run_is_returned(data):
    X, y = data
    search = _fit(_search(), X, y)
    # Trained with the per-run budget; its event is inside the search's (the
    # released run), and nothing else was fitted: no refit on all rows.
    assert search.best_estimator_.dp_event_ in search.dp_event_.event.events
    assert search.best_estimator_.epsilon_ <= search.run_epsilon_ * (1 + 1e-9)
    assert not hasattr(search, "refit_time_")


# -- scikit-learn's own searches keep working on the private estimators -------


@pytest.mark.parametrize(
    "estimator, grid",
    [
        (
            SemiDPLinearRegression(adjacency="add_remove", max_iter=3),
            {"clip_norm": [0.5, 1.0]},
        ),
        (HeavyTailDPRegressor(max_iter=20), {"loss": ["squared_error", "huber"]}),
    ],
)
def test_grid_search_and_cross_validate_on_regressors_say_selection_is_a_release(
    estimator, grid
):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 3))
    y = X @ [1.0, -2.0, 0.5] + rng.normal(size=600)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search = GridSearchCV(estimator, grid, cv=2).fit(X, y)
        scores = cross_validate(estimator, X, y, cv=2)["test_score"]
    assert search.best_score_ > 0.0 and np.all(scores > 0.0)  # R^2
    # The report says what no accountant covers: the noiseless held-out
    # scores and the selection.
    (note,) = [n for n in privacy_report(search).notes if "GridSearchCV" in n]
    assert "2 candidates x 2 folds" in note
    assert "no ledger accounts for" in note
    assert "sklearn_dpfair.model_selection" in note
