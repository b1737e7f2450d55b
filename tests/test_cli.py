# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
import io
import math
import subprocess
import sys

import pytest

from sklearn_dpfair import _demo
from sklearn_dpfair._cli import main
from sklearn_dpfair._demo import (
    DEMO_ROWS,
    N_FEATURES,
    N_TRAIN,
    RAW_COLUMNS,
    REFERENCE_ROWS,
    SMALLEST_EPSILON,
    DemoBudgetError,
    _spent_text,
    plan_demo,
    planned_raw_pipeline,
    run_demo,
)
from sklearn_dpfair.datasets import load_adult, make_adult_preprocessor


def test_demo_prints_a_row_per_model_and_budget(capsys):
    assert main(["demo", "--epsilon", "1", "--seed", "0", "--runs", "2"]) == 0
    out = capsys.readouterr().out
    assert "sklearn LogisticRegression (non-private)" in out
    for row in DEMO_ROWS + REFERENCE_ROWS:
        assert row.name in out
    n_jobs = len(DEMO_ROWS) + len(REFERENCE_ROWS)
    assert f"[{n_jobs}/{n_jobs}]" in out  # progress indication
    dp_line = next(line for line in out.splitlines() if line.startswith("DPLogistic"))
    # model, epsilon, spent, runs, accuracy mean +- sd, dp_gap mean +- sd, time
    _, eps, spent, runs, acc_mean, pm, acc_sd = dp_line.split()[:7]
    assert (float(eps), int(runs), pm) == (1.0, 2, "+-")
    assert float(acc_mean) > 0.83 and 0.0 <= float(acc_sd) < 0.01
    # The spent epsilon reads differently from the target (it is below it).
    assert spent != eps and float(spent) < 1.0
    # The comparison with scikit-learn is explained, and the spread named.
    assert "sampling noise" in out and "over 2 runs" in out
    # The private pipeline reads other features than scikit-learn's row: its
    # edge is not put down to privacy acting as a regularizer.
    assert "regularization" not in out
    assert "builds its own features" in out and "not from privacy" in out


def test_demo_rows_are_one_per_fit_and_seeded_runs_differ():
    rows = run_demo(epsilons=[1.0], random_state=0, file=io.StringIO(), n_runs=2)
    dp = [r for r in rows if r["model"] == DEMO_ROWS[0].name]
    assert [r["run"] for r in dp] == [0, 1]
    # Runs 0 and 1 use seeds 0 and 1: different noise, the same plan.
    assert dp[0]["accuracy"] != dp[1]["accuracy"]
    assert dp[0]["epsilon_spent"] == dp[1]["epsilon_spent"] <= 1.0
    with pytest.raises(ValueError, match="n_runs"):
        run_demo(epsilons=[1.0], file=io.StringIO(), n_runs=0)


@pytest.mark.parametrize(
    "spent, target, text",
    [
        (0.09999999999870923, 0.1, "0.099999999999"),
        (0.9998885629515197, 1.0, "0.9999"),
        (3.999999488291308, 4.0, "3.999999"),
        (0.5, 0.5, "0.5"),
        (math.inf, math.inf, "inf"),
    ],
)
def test_spent_epsilon_is_printed_until_it_departs_from_the_target(spent, target, text):
    assert _spent_text(spent, target) == text


def test_module_entry_point_shows_help():
    result = subprocess.run(
        [sys.executable, "-m", "sklearn_dpfair", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "demo" in result.stdout


def test_unknown_command_fails():
    with pytest.raises(SystemExit):
        main(["train"])


@pytest.mark.parametrize(
    "args, option",
    [
        (["--epsilon", "0"], "--epsilon"),
        (["--epsilon", "-1"], "--epsilon"),
        (["--epsilon", "nan"], "--epsilon"),
        (["--seed", "-1"], "--seed"),
        (["--seed", "4294967296"], "--seed"),
        (["--runs", "0"], "--runs"),
        # Positive, but too small for a plan of the private pipeline.
        (["--epsilon", "0.001"], "--epsilon"),
        (["--epsilon", "1e-300"], "--epsilon"),
    ],
)
def test_bad_demo_options_are_usage_errors_before_any_work(
    args, option, capsys, monkeypatch
):
    # Exit status 2 with the option named, before the data is loaded.
    def no_data(*args, **kwargs):
        raise AssertionError("the data were loaded")

    monkeypatch.setattr(_demo, "load_adult", no_data)
    with pytest.raises(SystemExit) as info:
        main(["demo", *args])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {option}" in err
    if option == "--epsilon" and float(args[1]) > 0:
        assert f"use --epsilon {SMALLEST_EPSILON:g} or more" in err


def test_every_demo_row_has_a_plan_at_the_smallest_budget_named():
    planned = plan_demo([SMALLEST_EPSILON])
    assert len(planned) == len(DEMO_ROWS)


def test_run_demo_refuses_a_budget_without_a_plan_before_any_work(monkeypatch):
    def no_data(*args, **kwargs):
        raise AssertionError("the data were loaded")

    monkeypatch.setattr(_demo, "load_adult", no_data)
    with pytest.raises(DemoBudgetError, match="epsilons: .* epsilon=1e-300") as info:
        run_demo(epsilons=[1e-300], file=io.StringIO())
    assert isinstance(info.value, ValueError) and info.value.epsilon == 1e-300


def test_a_seed_whose_last_run_is_no_seed_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as info:
        main(["demo", "--seed", "4294967295", "--runs", "2"])
    assert info.value.code == 2
    assert "--seed 4294967295 with 2 runs" in capsys.readouterr().err


def test_the_public_shape_is_the_bundled_tables():
    train = load_adult()
    assert list(train.data.columns) == RAW_COLUMNS and len(train.data) == N_TRAIN
    features = make_adult_preprocessor().fit_transform(train.data.head(5))
    assert features.shape[1] == N_FEATURES


@pytest.mark.parametrize("epsilon, accountant", [(0.05, "pld"), (0.01, "pld"),
                                                 (0.1, "rdp"), (4.0, "rdp")])
def test_small_budgets_plan_the_raw_pipeline_with_pld(epsilon, accountant):
    # RDP cannot certify the encoder's share of a budget below about 0.09;
    # the choice is made from the public shape, before any row is read.
    pipeline = planned_raw_pipeline(epsilon)
    assert pipeline.accountant == accountant
    plan = pipeline.privacy_plan(N_TRAIN, len(RAW_COLUMNS), feature_names=RAW_COLUMNS)
    assert plan.epsilon <= epsilon


def test_a_budget_given_twice_is_one_row(monkeypatch):
    monkeypatch.setattr(_demo, "DEMO_ROWS", DEMO_ROWS[1:2])
    monkeypatch.setattr(_demo, "REFERENCE_ROWS", [])
    rows = run_demo(epsilons=[4, 4.0], random_state=0, file=io.StringIO(), n_runs=1)
    assert [r["epsilon"] for r in rows[1:]] == [4.0]
