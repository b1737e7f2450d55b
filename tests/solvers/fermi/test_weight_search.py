"""Tolerances of the non-private weight path (_weight_search.bounded_path)."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from sklearn_dpfair import FERMIClassifier
from sklearn_dpfair._solvers.fermi import _weight_search
from sklearn_dpfair._solvers.fermi._problem import FairProblem


def _synthetic(seed, n=2000, correlation=1.5):
    # The label and a proxy feature depend on a binary group.
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    u = rng.normal(size=n) + correlation * (s - 0.5)
    y = (u + 0.5 * rng.normal(size=n) > 0).astype(int)
    X = np.column_stack(
        [u + 0.3 * rng.normal(size=n), rng.normal(size=n) + correlation * s,
         rng.normal(size=(n, 3))]
    )
    return X, y, s


@pytest.mark.parametrize("constraint", ["demographic_parity", "equalized_odds"])
def test_doublings_are_solved_looser_and_the_chosen_weight_to_tol(
    monkeypatch, constraint
):
    # The doubling weights only bracket the bound: solved to
    # DOUBLING_TOLERANCE * tol; weight 0 and the bisection's midpoints to
    # PATH_TOLERANCE * tol; the returned weight is polished to tol.
    calls = []
    refine = FairProblem.refine

    def spy(self, lam, coef, w0, tol=None, **options):
        calls.append((float(lam), tol / self.params.tol))
        # Only the polish at tol searches in the Hessian's metric.
        assert options.get("second_order", False) == (tol == self.params.tol)
        return refine(self, lam, coef, w0, tol=tol, **options)

    monkeypatch.setattr(FairProblem, "refine", spy)
    X, y, s = _synthetic(0)
    est = FERMIClassifier(
        constraint=constraint, disparity_bound=0.01, random_state=0
    ).fit(X, y, sensitive_features=s)
    assert est.bound_met_
    assert est.stationarity_ <= est.tol
    ratios = {
        "doubling": _weight_search.DOUBLING_TOLERANCE,
        "path": _weight_search.PATH_TOLERANCE,
        "polish": 1.0,
    }
    assert ratios["doubling"] > ratios["path"] > ratios["polish"]
    assert calls[0] == (0.0, pytest.approx(ratios["path"]))
    # The doublings: 1/2, 1, 2, ... up to where the bound was bracketed.
    lam, i = _weight_search.BOUND_START, 1
    while i < len(calls) and calls[i][0] == lam:
        assert calls[i][1] == pytest.approx(ratios["doubling"]), calls
        lam, i = 2.0 * lam, i + 1
    assert i > 1, calls
    # Then the bisection (weights strictly inside the bracket, at the path
    # tolerance) and the polish of the chosen weight at tol.
    rest = calls[i:]
    polished = [c for c in rest if c[1] == pytest.approx(ratios["polish"])]
    assert polished and est.fairness_weight_ in [c[0] for c in polished]
    for c in rest:
        assert c in polished or c[1] == pytest.approx(ratios["path"]), calls


def test_an_unmet_bound_returns_the_least_gap_model_polished_to_tol():
    # Three classes (no threshold to fall back on) and a bound no weight
    # meets: the model of least training disparity is returned, polished to
    # tol as a feasible one would be, not as the doubling left it (40 tol).
    rng = np.random.default_rng(0)
    n = 3000
    s = rng.integers(0, 3, n)
    X = rng.normal(size=(n, 4))
    X[:, 0] += 0.5 * s
    y = np.digitize(X @ [1, -0.5, 0.8, 0.3] + rng.normal(size=n), [-0.7, 0.7])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = FERMIClassifier(
            constraint="equalized_odds", disparity_bound=0.03, random_state=0
        ).fit(X, y, sensitive_features=s)
    assert est.bound_met_ is False
    assert [w for w in caught if "is not met" in str(w.message)]
    assert not [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert est.stationarity_ <= est.tol
    (chosen,) = [
        p for p in est.weight_path_ if p["fairness_weight"] == est.fairness_weight_
    ]
    assert chosen["tol"] == est.tol and chosen["converged"]
    assert chosen["training_disparity"] == est.training_disparity_
    assert est.training_disparity_ == min(
        p["training_disparity"] for p in est.weight_path_
    )
    # converged means the fit's tol, whatever tolerance a point was solved to.
    for p in est.weight_path_:
        assert p["converged"] == (p["stationarity"] <= est.tol)
        assert p["tol"] >= est.tol
    # The weight fitted directly reaches the same model, up to tol.
    direct = FERMIClassifier(
        constraint="equalized_odds",
        fairness_weight=est.fairness_weight_,
        random_state=0,
    ).fit(X, y, sensitive_features=s)
    np.testing.assert_allclose(est.coef_, direct.coef_, atol=1e-2)


class _ScriptedPath:
    """A problem whose weight path is scripted: the search logic alone.

    Weights below 1.1 miss the bound of 0.1; the training error is the
    weight over 1000, plus 0.05 for the feasible weights (so that the
    bisection runs all its steps), and a model polished to tol
    (``second_order``) is ``polish_cost`` less accurate, and also
    infeasible when ``polish_breaks_bound``. Three classes: no decision
    threshold.
    """

    n_classes, n_groups = 3, 2

    def __init__(self, polish_breaks_bound, polish_cost):
        self.polish_breaks_bound = polish_breaks_bound
        self.polish_cost = polish_cost
        self.params = type("P", (), {"tol": 1e-4})()

    def start(self):
        return np.zeros(2), np.zeros(1)

    def refine(self, lam, coef, w0, tol=None, second_order=False):
        return type("Fit", (), {
            "coef": np.array([lam, float(second_order)]), "w0": w0,
            "stationarity": tol, "n_iter": 1, "at_limit": False,
        })()

    def measure(self, coef, w0):
        lam, polished = coef
        infeasible = lam < 1.1 or (polished and self.polish_breaks_bound)
        error = lam / 1000 + 0.05 * (lam >= 1.1) + self.polish_cost * polished
        return error, 0.2 if infeasible else 0.05

    def dual_at(self, lam, coef, w0):
        return None


@pytest.mark.parametrize(
    "polish_breaks_bound, polish_cost, polished, n_polished",
    [
        # Feasible and within POLISH_GAIN: the polished models replace
        # their points, the POLISHES polishes go to the two most accurate
        # weights and a third, never polished, is returned at the path's
        # tolerance.
        (False, 1e-3, False, 2),
        # Over the bound, or feasible but far less accurate: dropped, the
        # first weight is returned, polished and found worse.
        (True, 0.0, True, 0),
        (False, 0.5, True, 0),
    ],
)
def test_the_returned_weight_says_whether_it_was_polished(
    polish_breaks_bound, polish_cost, polished, n_polished
):
    # The warning's remedy reads which.
    problem = _ScriptedPath(polish_breaks_bound, polish_cost)
    *_, extra = _weight_search.bounded_path(problem, 0.1)
    assert extra["unpolished"] and extra["bound_met"]
    assert extra["polished"] is polished
    polished_weights = [
        p["fairness_weight"] for p in extra["path"] if p["tol"] == 1e-4
    ]
    assert len(polished_weights) == n_polished
    assert extra["fairness_weight"] not in polished_weights


def test_a_far_less_accurate_polished_model_does_not_replace_a_feasible_one():
    # A polished model that meets the bound only at a much larger training
    # error is dropped: the most accurate feasible path model is returned
    # (at the path's tolerance), not the polished one nor a neighbour chosen
    # after it.
    problem = _ScriptedPath(polish_breaks_bound=False, polish_cost=0.5)
    *_, extra = _weight_search.bounded_path(problem, 0.1)
    feasible = [p for p in extra["path"] if p["training_disparity"] <= 0.1]
    assert extra["disparity"] <= 0.1
    best = min(p["training_error"] for p in feasible)
    chosen = [
        p for p in extra["path"] if p["fairness_weight"] == extra["fairness_weight"]
    ]
    assert chosen[0]["training_error"] == best < 0.1
    # Every point of the path is a model the search held: none polished.
    assert all(p["tol"] > 1e-4 for p in extra["path"])


def test_the_returned_model_is_nearly_the_most_accurate_feasible_one(monkeypatch):
    # Wide columns on two groups and a tight bound: polishing the chosen
    # weight lost feasible rows, and its polished model (feasible, 3e-3 less
    # accurate) replaced it. Every feasible model the search measured is
    # recorded; the returned one is within POLISH_GAIN of the best.
    seen = []
    best_threshold = FairProblem.best_threshold

    def spy(self, coef, w0, bound):
        shift, error, disparity = best_threshold(self, coef, w0, bound)
        if disparity <= bound:
            seen.append(error)
        return shift, error, disparity

    monkeypatch.setattr(FairProblem, "best_threshold", spy)
    rng = np.random.default_rng(5)
    n = 1000
    s = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 2)) * 10 + 3 * s[:, None]
    y = (X[:, 0] + rng.normal(size=n) * 0.5 > 0.5).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = FERMIClassifier(disparity_bound=0.001, random_state=0).fit(
            X, y, sensitive_features=s
        )
    assert est.bound_met_ and seen
    error = np.mean(est.predict(X) != y)
    assert error <= min(seen) + _weight_search.POLISH_GAIN + 1e-12
