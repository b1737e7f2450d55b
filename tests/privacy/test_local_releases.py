# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Pure-epsilon local messages in the release check and the accountant."""

import math

import dp_accounting
import numpy as np
import pytest

from sklearn_dpfair._solvers.semi_dp._privunit import PrivUnit, local_epsilon_event
from sklearn_dpfair.exceptions import PrivacyAccountingError
from sklearn_dpfair.privacy._accounting import epsilon_of, gaussian_event
from sklearn_dpfair.privacy._releases import (
    check_releases,
    expected_releases,
    log_release,
    logged_releases,
    parallel_parts,
    pure_epsilon_of,
)


def test_randomized_response_event_is_one_pure_release():
    event = local_epsilon_event(1.5)
    (key,) = expected_releases(event)
    assert key[0] == "epsilon" and key[1] == pytest.approx(1.5, rel=1e-12)


def test_one_message_per_record_matches_one_event():
    unit = PrivUnit.calibrated(1.0, 3)
    rng = np.random.default_rng(0)
    with logged_releases() as log:
        with parallel_parts() as parts:
            for record in range(5):
                with parts.part(record):
                    unit.randomize(np.eye(3)[0], rng)
    check_releases(log, unit.event, what="local")


def test_a_record_speaking_twice_is_caught():
    unit = PrivUnit.calibrated(1.0, 3)
    rng = np.random.default_rng(0)
    with logged_releases() as log:
        with parallel_parts() as parts:
            for record in range(5):
                with parts.part(record):
                    unit.randomize(np.eye(3)[0], rng)
                    if record == 3:
                        unit.randomize(np.eye(3)[0], rng)
    with pytest.raises(PrivacyAccountingError, match="ran releases"):
        check_releases(log, unit.event, what="local")


def test_pure_and_zcdp_releases_of_the_same_number_are_not_confused():
    # A zCDP release of rho = 1 is not a pure 1-DP message.
    with logged_releases() as log:
        log_release("zcdp", 1.0)
    with pytest.raises(PrivacyAccountingError):
        check_releases(log, local_epsilon_event(1.0), what="local")


@pytest.mark.parametrize("count", [2, 3])
def test_self_composed_randomized_response_is_composed_in_full(count):
    # dp-accounting 0.6's PLD accountant composes one randomized response
    # for SelfComposedDpEvent(rr, count); epsilon_of writes it out.
    rr = local_epsilon_event(1.0)
    composed = epsilon_of(dp_accounting.SelfComposedDpEvent(rr, count), 0.0, "pld")
    assert composed == pytest.approx(count * pure_epsilon_of(rr), abs=2e-4)


def test_gaussian_events_keep_add_remove():
    # The replace-one relation is used only for events holding a local
    # message: a Gaussian alone is read under add/remove, as before.
    assert epsilon_of(gaussian_event(1.0), 1e-5, "pld") == pytest.approx(4.38, abs=0.01)


def test_pure_epsilon_of_k_ary_randomized_response():
    event = dp_accounting.RandomizedResponseDpEvent(0.5, 4)
    assert pure_epsilon_of(event) == pytest.approx(math.log(1 + 4 * 0.5 / 0.5))
