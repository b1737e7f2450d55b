# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""One budget language: the heavy-tail solvers take a PrivacyBudget and its split.

zCDP's ``rho`` is the unit in which :meth:`PrivacyBudget.split` hands out
parts, never a second parameter path: the deprecated ``rho=`` of the
estimator becomes the (epsilon, delta) budget it certifies, and every
Gaussian mechanism of the solvers comes from a budget (its split parts, or
the noise multiplier the "dp-sgd" plan calibrated on the composed event).
"""

import ast
import math
import pathlib
import warnings

import numpy as np
import pytest

from sklearn_dpfair import HeavyTailDPRegressor
from sklearn_dpfair._solvers.heavy_tail import _fit
from sklearn_dpfair._solvers.heavy_tail._fit import heavy_tail_setup, zcdp_budget
from sklearn_dpfair.privacy import PrivacyBudget, epsilon_of
from sklearn_dpfair.privacy._accounting import zcdp_event

from heavy_tail_config import dpsgd_config

_SOLVERS = pathlib.Path(_fit.__file__).parent


def _data(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_t(3, size=(n, 4))
    return X, X @ np.array([1.0, -1.0, 0.5, 0.0]) + rng.standard_t(2, size=n)


def test_no_solver_builds_its_own_gaussian_mechanism():
    # Structural: every mechanism comes from a PrivacyBudget (gaussian() of
    # a split part, or of the budget with the plan's calibrated noise).
    built = []
    for path in sorted(_SOLVERS.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", getattr(node.func, "attr", None))
                if name == "GaussianMechanism":
                    built.append(f"{path.name}:{node.lineno}")
    assert built == []


def test_config_holds_no_budget():
    assert "rho" not in {f for f in _fit.HeavyTailConfig.__dataclass_fields__}


def test_rho_is_deprecated_and_names_its_removal():
    X, y = _data()
    reg = HeavyTailDPRegressor(rho=0.05, solver="sgd", random_state=0)
    with pytest.warns(FutureWarning, match=r"'rho'.*deprecated.*removed in 0\.3\.0"):
        reg.fit(X, y)
    # Behaviour unchanged while deprecated: planned in rho itself, and the
    # target is what dp-accounting certifies for rho-zCDP.
    assert reg.rho_ == 0.05
    assert sum(reg.rho_spent_.values()) == pytest.approx(0.05, rel=1e-12)
    assert reg.epsilon_ <= epsilon_of(zcdp_event(0.05), 1e-5, "rdp") * (1 + 1e-9)
    with pytest.warns(FutureWarning, match="'rho'"):
        reg.privacy_plan(*X.shape)


def test_the_rho_deprecation_warning_has_one_text_across_a_search():
    # Without the value of rho: a search over rho warns once.
    texts = set()
    for rho in (0.05, 0.2):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            HeavyTailDPRegressor(rho=rho, solver="sgd").privacy_plan(1000, 3)
        texts |= {str(w.message) for w in caught if "'rho'" in str(w.message)}
    assert len(texts) == 1


def test_no_warning_without_rho():
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        HeavyTailDPRegressor(solver="sgd", random_state=0).fit(X, y)


def test_deprecated_rho_fits_as_its_budget():
    # rho= and the budget zcdp_budget(rho) are one fit: the same noise.
    X, y = _data()
    with pytest.warns(FutureWarning):
        reg = HeavyTailDPRegressor(rho=0.05, random_state=1).fit(X, y)
    budget = zcdp_budget(0.05, 1e-5)
    assert reg.epsilon_ <= budget.epsilon * (1 + 1e-9)
    setup = heavy_tail_setup(*X.shape, dpsgd_config(), budget)
    assert setup.event == reg.dp_event_


@pytest.mark.parametrize("solver", ["sgd", "acsa", "localized"])
def test_one_pass_parts_are_the_budget_split(solver):
    budget = PrivacyBudget(1.0, 1e-5)
    config = dpsgd_config(solver=solver, radius=None)
    setup = heavy_tail_setup(4000, 4, config, budget)
    total = budget.split({"all": 1.0})["all"].rho
    # The parts sum to the budget's rho (zCDP composes additively).
    assert math.fsum(setup.spent.values()) == pytest.approx(total, rel=1e-12)
    assert setup.spent["clip_median"] == pytest.approx(0.05 * total, rel=1e-12)
    assert setup.adjacency == "replace_one"
    # Every solver's event is planned, the localized one's from the
    # phases' public step counts: the tuning parts, then the optimizer's.
    assert setup.event is not None
    assert setup.event.events[0] == zcdp_event(setup.spent["clip_median"])


def test_fit_and_plan_share_one_setup(monkeypatch):
    # The estimator's fit and its privacy plan obtain their set-up from one
    # method: counting its calls proves neither derives it another way.
    calls = []
    original = HeavyTailDPRegressor._setup

    def spy(self, *args, **kwargs):
        calls.append(args[1:3])
        return original(self, *args, **kwargs)

    monkeypatch.setattr(HeavyTailDPRegressor, "_setup", spy)
    X, y = _data()
    reg = HeavyTailDPRegressor(solver="sgd", random_state=0)
    plan = reg.privacy_plan(*X.shape)
    reg.fit(X, y)
    assert calls == [X.shape, X.shape]
    assert plan.dp_event == reg.dp_event_


@pytest.mark.parametrize("rho", [1e-320, 1e-101, 1e39, 1e308])
def test_zcdp_budget_refuses_rho_whose_noise_or_epsilon_overflows(rho):
    with pytest.raises(ValueError, match=r"rho must be in \[1e-100, 1e\+38\]"):
        zcdp_budget(rho, 1e-5)


def test_zcdp_budget_keeps_the_ends_of_its_range():
    for rho in (1e-100, 1e38):
        assert zcdp_budget(rho, 1e-5).split({"all": 1.0})["all"].rho == rho
    assert math.isinf(zcdp_budget(math.inf, 1e-5).epsilon)
