# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""From scores to a lower bound: validity (no false alarms) and power."""

import re

import dp_accounting
import numpy as np
import pytest
from scipy.stats import norm

from sklearn_dpfair.audit import audit_scores
from sklearn_dpfair.audit._claims import DEFAULT_AUDIT_DELTAS, claimed_profile
from sklearn_dpfair.privacy._accounting import epsilon_of, gaussian_event


def _gaussian_scores(mu, n, seed):
    rng = np.random.default_rng(seed)
    return rng.normal(0.0, 1.0, n), rng.normal(mu, 1.0, n)


def test_correct_gaussian_claim_is_not_refuted():
    # N(0,1) vs N(1/z, 1) is exactly the Gaussian mechanism with multiplier z.
    z = 1.0
    violations = 0
    for seed in range(20):
        s0, s1 = _gaussian_scores(1 / z, 500, seed)
        r = audit_scores(s0, s1, delta=1e-5, dp_event=gaussian_event(z))
        violations += r.violation
        assert r.epsilon_lower_bound <= r.epsilon_claimed + 0.3
    # At 95% confidence, 20 honest audits flag at most a few by chance;
    # in practice none.
    assert violations <= 1


def test_halved_noise_is_refuted():
    z = 1.0
    s0, s1 = _gaussian_scores(2 / z, 500, 0)
    r = audit_scores(s0, s1, delta=1e-5, dp_event=gaussian_event(z))
    assert r.violation
    assert r.epsilon_lower_bound > r.epsilon_claimed
    assert r.audit_delta in (1e-5, *DEFAULT_AUDIT_DELTAS)
    assert r.claim_epsilon == pytest.approx(epsilon_of(gaussian_event(z), 1e-5, "pld"))


def test_bound_only_at_the_nominal_delta_when_only_epsilon_is_claimed():
    s0, s1 = _gaussian_scores(6.0, 200, 0)
    r = audit_scores(s0, s1, delta=1e-5, epsilon=1.0)
    assert r.audit_delta == 1e-5 and r.epsilon_claimed == 1.0
    # Well-separated outputs: about log(n_eval / 3) is the most 100 runs show.
    assert 2.5 < r.epsilon_lower_bound < np.log(100)
    assert r.violation


def test_direction_is_chosen_by_the_selection_runs():
    s0, s1 = _gaussian_scores(-6.0, 200, 1)
    r = audit_scores(s0, s1, delta=1e-5, epsilon=1.0)
    assert r.direction == "less" and r.violation


def test_selection_and_evaluation_runs_are_disjoint():
    # Selection runs are separable, evaluation runs identical: no violation
    # can come from choosing the test on the same runs that evaluate it.
    rng = np.random.default_rng(0)
    noise = rng.normal(size=100)
    s0 = np.r_[np.zeros(100), noise]
    s1 = np.r_[np.full(100, 10.0), noise]
    r = audit_scores(s0, s1, delta=1e-5, epsilon=0.1)
    assert r.n_selection == r.n_evaluation == 100
    assert not r.violation and r.epsilon_lower_bound == 0.0


def test_no_claim_no_violation():
    s0, s1 = _gaussian_scores(10.0, 100, 0)
    r = audit_scores(s0, s1, delta=1e-5, epsilon=np.inf)
    assert not r.violation


def test_ties_and_discrete_statistics():
    # A 0/1 statistic (membership guessed by prediction) still works.
    rng = np.random.default_rng(0)
    s0 = rng.permutation(np.r_[np.zeros(180), np.ones(20)])
    s1 = rng.permutation(np.r_[np.ones(180), np.zeros(20)])
    r = audit_scores(s0, s1, delta=1e-5, epsilon=0.5)
    # FPR ~ 0.1, TPR ~ 0.9: epsilon >= log(9) ~ 2.2 minus sampling slack.
    assert r.violation and r.epsilon_lower_bound > 1.0


def test_bad_inputs_are_explained():
    with pytest.raises(ValueError, match="finite"):
        audit_scores(
            [0.0, np.nan, 1.0, 2.0], [1.0, 2.0, 3.0, 4.0], delta=1e-5, epsilon=1
        )
    with pytest.raises(ValueError, match="Too few runs"):
        audit_scores([0.0], [1.0], delta=1e-5, epsilon=1.0)
    with pytest.raises(ValueError, match="dp_event or epsilon"):
        audit_scores([0.0] * 4, [1.0] * 4, delta=1e-5)
    with pytest.raises(TypeError, match="DpEvent"):
        audit_scores([0.0] * 4, [1.0] * 4, delta=1e-5, dp_event="gaussian")
    with pytest.raises(ValueError, match="selection_fraction"):
        audit_scores([0.0] * 4, [1.0] * 4, delta=1e-5, epsilon=1, selection_fraction=1)


def test_claimed_profile_is_the_events_curve():
    ev = gaussian_event(2.0)
    prof = claimed_profile([ev], 1e-5)
    assert list(prof) == sorted(prof)
    values = list(prof.values())
    assert all(
        a >= b for a, b in zip(values, values[1:], strict=False)
    )  # falls with delta
    # Largest claim over the worlds counts.
    prof2 = claimed_profile([ev, gaussian_event(1.0)], 1e-5)
    assert all(prof2[d] >= prof[d] for d in prof)
    # A bare epsilon claim says nothing below its delta.
    assert claimed_profile([1.0], 1e-3, [1e-5, 1e-3, 0.1]) == {
        1e-5: np.inf,
        1e-3: 1.0,
        0.1: 1.0,
    }
    # Against the Gaussian mechanism's analytic profile (Balle & Wang 2018).
    d = 0.1
    eps = prof[d]
    mu = 0.5
    analytic_delta = norm.cdf(-eps / mu + mu / 2) - np.exp(eps) * norm.cdf(
        -eps / mu - mu / 2
    )
    assert analytic_delta == pytest.approx(d, rel=2e-2)


def test_invalid_claims_are_refused_naming_the_parameter():
    s0, s1 = _gaussian_scores(0.01, 200, 0)
    # A negative epsilon is "violated" by every mechanism, a NaN one by none.
    # Text and booleans are no claim, though float() reads "1.0" and True.
    for epsilon in (-1.0, np.nan, "one", "1.0", True):
        with pytest.raises(ValueError, match="epsilon must be a number >= 0"):
            audit_scores(s0, s1, delta=1e-5, epsilon=epsilon)
    for delta in (-0.1, 1.0, np.nan, "1e-5", True):
        with pytest.raises(ValueError, match=r"delta must be .*\[0, 1\)"):
            audit_scores(s0, s1, delta=delta, epsilon=1.0)
    # Two claims: neither is silently ignored.
    with pytest.raises(ValueError, match="not both"):
        audit_scores(s0, s1, delta=1e-5, epsilon=0.001, dp_event=gaussian_event(100.0))


def test_audit_mechanism_refuses_an_invalid_claim_before_running():
    from sklearn_dpfair.audit import audit_mechanism

    def never(data, rng):
        raise AssertionError("the mechanism ran")

    with pytest.raises(ValueError, match="epsilon must be"):
        audit_mechanism(never, 0.0, 1.0, delta=1e-5, epsilon=-1.0, n_runs=8)


def test_a_delta_of_zero_claims_inf_for_an_event_with_no_pure_epsilon():
    # A Gaussian release is (epsilon, 0)-DP for no finite epsilon; a
    # Laplace release is pure.
    prof = claimed_profile([gaussian_event(1.0)], 1e-5, [0.0, 1e-5])
    assert prof[0.0] == np.inf and np.isfinite(prof[1e-5])
    laplace = dp_accounting.LaplaceDpEvent(0.5)
    assert claimed_profile([laplace], 0.0, [0.0]) == {0.0: 2.0}
    # A malformed event is still refused at delta = 0.
    with pytest.raises(ValueError, match="noise_multiplier"):
        claimed_profile([dp_accounting.GaussianDpEvent(np.nan)], 1e-5, [0.0])
    # Nothing finite is claimed at delta = 0 alone: nothing can be violated.
    s0, s1 = _gaussian_scores(10.0, 200, 0)
    r = audit_scores(s0, s1, delta=1e-5, dp_event=gaussian_event(1.0), deltas=[0.0])
    assert not r.violation
    assert r.audit_delta == 0.0 and r.epsilon_claimed == np.inf
    # A Gaussian release of infinite noise releases nothing: beside a
    # Laplace release the claim at delta = 0 is the Laplace's, as the
    # accountant reads it, not inf (a claim no test could break).
    composed = dp_accounting.ComposedDpEvent(
        [laplace, dp_accounting.GaussianDpEvent(np.inf)]
    )
    assert claimed_profile([composed], 0.0, [0.0]) == {0.0: 2.0}


def test_audit_mechanism_with_a_delta_of_zero_audits_the_other_deltas():
    from sklearn_dpfair.audit import audit_mechanism

    def release(data, rng):
        return float(np.sum(data) + rng.normal())

    r = audit_mechanism(
        release,
        [0.0],
        [0.0, 1.0],
        delta=1e-5,
        dp_event=gaussian_event(1.0),
        deltas=[0.0, 1e-5],
        n_runs=40,
    )
    assert r.audit_delta == 1e-5 and np.isfinite(r.epsilon_claimed)


def test_audit_mechanism_refuses_an_unevaluable_claim_before_running():
    from sklearn_dpfair.audit import audit_mechanism

    def never(data, rng):
        raise AssertionError("the mechanism ran before the claim was evaluated")

    # A well-typed event the accountant refuses (a NaN noise multiplier).
    with pytest.raises(ValueError, match="noise_multiplier"):
        audit_mechanism(
            never,
            0.0,
            1.0,
            delta=1e-5,
            dp_event=dp_accounting.GaussianDpEvent(np.nan),
            n_runs=8,
        )


def test_unequal_worlds_report_each_worlds_run_counts():
    from sklearn_dpfair.audit import epsilon_ceiling

    rng = np.random.default_rng(0)
    s0, s1 = rng.normal(0, 1, 400), rng.normal(0, 1, 40)
    r = audit_scores(s0, s1, delta=1e-5, epsilon=1.0)
    assert (r.n_selection, r.n_evaluation) == (200, 200)
    assert (r.n_selection_with, r.n_evaluation_with) == (20, 20)
    assert r.false_positives <= r.n_evaluation
    assert r.false_negatives <= r.n_evaluation_with
    assert "in 200 held-out runs without the canary" in str(r)
    assert "in 20 with it (200 + 20 runs chose the test)" in str(r)
    assert r.epsilon_ceiling == pytest.approx(epsilon_ceiling(200, 20, r.audit_delta))
    # Equal worlds: one count, as before.
    s0, s1 = _gaussian_scores(1.0, 100, 0)
    r = audit_scores(s0, s1, delta=1e-5, epsilon=1.0)
    assert r.n_evaluation == r.n_evaluation_with == 50


# -- options -------------------------------------------------------------------------


@pytest.mark.parametrize("confidence", [0.0, -0.5, -0.9, 1.0, 95, float("nan")])
def test_a_confidence_outside_0_1_is_refused_as_given(confidence):
    # At confidence -0.9 the "bounds" hold with no probability: a correct
    # 1-DP randomized response was flagged in 199 audits of 200.
    s0, s1 = _gaussian_scores(1.0, 200, 0)
    given = re.escape(repr(confidence))
    with pytest.raises(ValueError, match=rf"confidence .*got {given}\."):
        audit_scores(s0, s1, delta=1e-5, epsilon=1.0, confidence=confidence)


def test_a_correct_randomized_response_is_not_refuted_at_a_valid_confidence():
    eps = 1.0
    p = np.exp(eps) / (1 + np.exp(eps))
    violations = 0
    for seed in range(20):
        rng = np.random.default_rng(seed)
        s0 = (rng.random(1000) > p).astype(float)
        s1 = (rng.random(1000) < p).astype(float)
        violations += audit_scores(s0, s1, delta=0.0, epsilon=eps).violation
    assert violations <= 1


@pytest.mark.parametrize("deltas", ["all", [2.0], [], [-0.1], ["x"]])
def test_invalid_deltas_are_refused(deltas):
    s0, s1 = _gaussian_scores(1.0, 200, 0)
    with pytest.raises(ValueError, match="deltas must be 'auto' or a"):
        audit_scores(s0, s1, delta=1e-5, epsilon=1.0, deltas=deltas)


@pytest.mark.parametrize(
    "claim, deltas",
    [
        ({"epsilon": 1.0}, [1e-6]),  # a bare epsilon claims nothing below delta
        ({"epsilon": np.inf}, [0.1]),
        ({"dp_event": dp_accounting.NonPrivateDpEvent()}, [0.1]),
    ],
)
def test_deltas_without_the_nominal_one_and_no_finite_claim(claim, deltas):
    # Nothing is claimed at the given deltas: nothing can be violated, and
    # the result is stated at one of them (not a KeyError on the nominal).
    s0, s1 = _gaussian_scores(1.0, 200, 0)
    r = audit_scores(s0, s1, delta=1e-5, deltas=deltas, **claim)
    assert not r.violation
    assert r.audit_delta == deltas[0] and r.epsilon_claimed == np.inf


def test_a_delta_spent_outside_the_event_shifts_the_claimed_profile():
    # A partition-selection threshold leaves the event with probability at
    # most additional_delta: at audit delta d the claim is the event's
    # epsilon at d - additional_delta, and nothing below additional_delta.
    from sklearn_dpfair.audit._distinguish import claimed_epsilons

    ev = gaussian_event(1.0)
    profile, claim_epsilon = claimed_epsilons(
        0.2, ev, deltas=[0.05, 0.1, 0.2, 0.5], additional_delta=0.1
    )
    assert profile[0.05] == np.inf
    event_profile = claimed_profile([ev], 1e-5, [0.0, 0.1, 0.4])
    assert profile[0.1] == event_profile[0.0] == np.inf
    assert profile[0.2] == pytest.approx(claim_epsilon)
    assert claim_epsilon == pytest.approx(event_profile[0.1])
    assert profile[0.5] == pytest.approx(event_profile[0.4])
    # A bare epsilon is stated at the whole delta already: unchanged.
    assert claimed_epsilons(0.2, epsilon=1.0, additional_delta=0.1) == (
        {0.2: 1.0},
        1.0,
    )


def test_a_threshold_release_is_audited_against_its_whole_delta():
    # The canary's category is released with probability 0.3, never without
    # it: a (0, 0.3)-DP threshold on top of a near-silent event. Against
    # the event alone (delta_ = 1e-5) that is a violation; against the
    # whole claim (delta 0.3 + 1e-5, the threshold's 0.3 included) it is not.
    rng = np.random.default_rng(0)
    s0 = np.zeros(400)
    s1 = (rng.random(400) < 0.3).astype(float)
    ev = gaussian_event(10.0)
    assert audit_scores(s0, s1, delta=1e-5, dp_event=ev).violation
    r = audit_scores(s0, s1, delta=0.3 + 1e-5, dp_event=ev, additional_delta=0.3)
    assert not r.violation, str(r)
    assert r.claim_delta == 0.3 + 1e-5 and r.additional_delta == 0.3
    assert r.to_dict()["additional_delta"] == 0.3
    assert "partition-selection threshold" in str(r)
    assert "threshold" not in str(audit_scores(s0, s1, delta=1e-5, dp_event=ev))


@pytest.mark.parametrize("additional_delta", [-0.1, 0.5, np.nan, "x"])
def test_an_additional_delta_outside_0_delta_is_refused(additional_delta):
    s0, s1 = _gaussian_scores(1.0, 200, 0)
    with pytest.raises(ValueError, match="additional_delta must be"):
        audit_scores(
            s0,
            s1,
            delta=0.2,
            dp_event=gaussian_event(1.0),
            additional_delta=additional_delta,
        )
