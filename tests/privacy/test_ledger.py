# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The privacy ledger: shared by clones, records every fit, totals by composition."""

import copy
import dataclasses
import pickle
import threading

import dp_accounting
import numpy as np
import pytest
from dp_accounting import pld, rdp
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.exceptions import FitFailedWarning
from sklearn.model_selection import GridSearchCV, cross_validate

from sklearn_dpfair import (
    DPFERMIClassifier,
    DPLogisticRegression,
    DPMLPClassifier,
    SemiDPLinearRegression,
)
from sklearn_dpfair.privacy import PrivacyLedger
from sklearn_dpfair.privacy._accounting import (
    _RDP_ORDERS,
    epsilon_of,
    gaussian_event,
    noisy_sgd_event,
)


@pytest.fixture(scope="module")
def data():
    return make_classification(n_samples=400, n_features=5, random_state=0)


def _clf(ledger, **kw):
    # Unseeded: fits sharing a seed would not compose (see the seed tests).
    params = dict(epsilon=1.0, classes=[0, 1], accountant=ledger, random_state=None)
    params.update(kw)
    return DPLogisticRegression(**params)


def _direct_epsilon(events, delta, kind):
    """Compose with dp-accounting directly, bypassing the package."""
    acc = (
        rdp.RdpAccountant(orders=_RDP_ORDERS)
        if kind == "rdp"
        else pld.PLDAccountant(value_discretization_interval=1e-4)
    )
    for event in events:
        acc.compose(event)
    return acc.get_epsilon(delta)


def test_clone_copy_and_deepcopy_share_the_ledger():
    ledger = PrivacyLedger()
    clf = _clf(ledger)
    assert clone(clf).accountant is ledger
    assert clone(clone(clf)).get_params()["accountant"] is ledger
    assert copy.copy(ledger) is ledger
    assert copy.deepcopy(ledger) is ledger
    assert copy.deepcopy(clf).accountant is ledger


def test_kind_is_validated_and_used_by_the_estimator(data):
    X, y = data
    with pytest.raises(ValueError, match="kind must be one of"):
        PrivacyLedger("moments")
    ledger = PrivacyLedger("pld")
    clf = _clf(ledger, max_iter=1, batch_size="full").fit(X, y)
    assert clf.privacy_record_.accountant == "pld"
    assert clf._accountant_kind() == "pld"


def test_other_objects_are_rejected_as_accountant(data):
    X, y = data
    with pytest.raises(ValueError, match="accountant"):
        _clf(object()).fit(X, y)


def test_each_fit_is_recorded_with_its_event(data):
    X, y = data
    ledger = PrivacyLedger()
    assert len(ledger) == 0 and ledger.total_epsilon() == 0.0
    a = _clf(ledger, epsilon=0.5).fit(X, y)
    b = clone(a).set_params(epsilon=2.0).fit(X, y)
    entries = ledger.entries
    assert [e.dp_event for e in entries] == [a.dp_event_, b.dp_event_]
    assert [e.epsilon for e in entries] == [a.epsilon_, b.epsilon_]
    assert {e.source for e in entries} == {"DPLogisticRegression"}
    assert entries[0].adjacency == a.adjacency_


def test_failed_fit_is_not_recorded(data):
    X, y = data
    ledger = PrivacyLedger()
    with pytest.raises(ValueError):
        _clf(ledger).fit(X, np.full_like(y, 7))  # label outside classes
    assert len(ledger) == 0


def test_a_fit_its_release_check_refuses_is_not_recorded(data, monkeypatch):
    # The run-time check (what ran is what is accounted) runs after fit
    # returns; a fit it refuses released nothing and must not be counted.
    from sklearn_dpfair._solvers import _private_fit
    from sklearn_dpfair.exceptions import PrivacyAccountingError

    X, y = data
    ledger = PrivacyLedger()
    real = _private_fit.noisy_sgd

    def one_step_more(*args, **kwargs):
        kwargs["n_steps"] += 1  # a release its record does not account
        return real(*args, **kwargs)

    monkeypatch.setattr(_private_fit, "noisy_sgd", one_step_more)
    est = _clf(ledger, max_iter=2)
    with pytest.raises(PrivacyAccountingError, match="nothing is released"):
        est.fit(X, y)
    assert len(ledger) == 0 and not hasattr(est, "coef_")
    monkeypatch.undo()
    est.fit(X, y)
    assert [e.dp_event for e in ledger.entries] == [est.dp_event_]


@pytest.mark.parametrize("outer", ["estimator", "pipeline", "search"])
def test_a_refused_composite_fit_records_nothing(data, monkeypatch, outer):
    # Pipelines and searches record themselves (the search in its
    # estimator's ledger too): refused by their own release check, they
    # record nothing; checked, they record once.
    from sklearn_dpfair import _base
    from sklearn_dpfair.exceptions import PrivacyAccountingError
    from sklearn_dpfair.model_selection import PrivateHyperparameterSearch
    from sklearn_dpfair.pipeline import make_private_pipeline

    X, y = data
    ledger = PrivacyLedger()
    if outer == "estimator":
        est = _clf(ledger, max_iter=2)
    elif outer == "pipeline":
        est = make_private_pipeline(
            DPLogisticRegression(classes=[0, 1], max_iter=2), accountant=ledger
        )
    else:
        est = PrivateHyperparameterSearch(
            _clf(ledger, max_iter=2), {"clip_norm": [0.5, 1.0]}
        )
    name = type(est).__name__
    real = _base.check_releases

    def refuse_outer(log, event, *, what, **kwargs):
        if what == f"{name}.fit":
            raise PrivacyAccountingError("refused")
        return real(log, event, what=what, **kwargs)

    monkeypatch.setattr(_base, "check_releases", refuse_outer)
    with pytest.raises(PrivacyAccountingError, match="refused"):
        est.fit(X, y)
    assert len(ledger) == 0
    monkeypatch.undo()
    est.fit(X, y)
    assert [e.source for e in ledger.entries] == [name]


def test_cross_validate_total_is_the_composition(data):
    X, y = data
    ledger = PrivacyLedger()
    cross_validate(_clf(ledger), X, y, cv=4)
    events = [e.dp_event for e in ledger.entries]
    assert len(events) == 4
    total = ledger.total_epsilon()
    assert total == pytest.approx(_direct_epsilon(events, 1e-5, "rdp"), rel=1e-12)
    # Composition is not free, and RDP composition beats the naive sum.
    assert 1.0 < total < 4.0


def test_grid_search_total_counts_every_fit_and_the_refit(data):
    X, y = data
    ledger = PrivacyLedger()
    grid = {"clip_norm": [0.5, 1.0], "max_iter": [2, 4]}
    GridSearchCV(_clf(ledger), grid, cv=2).fit(X, y)
    assert len(ledger) == 4 * 2 + 1
    events = [e.dp_event for e in ledger.entries]
    assert ledger.total_epsilon() == pytest.approx(
        _direct_epsilon(events, 1e-5, "rdp"), rel=1e-12
    )
    assert ledger.total_epsilon(delta=1e-3) < ledger.total_epsilon(delta=1e-6)
    assert "9 release(s) by DPLogisticRegression" in ledger.summary()


def test_grid_search_in_worker_processes_is_recorded(data):
    X, y = data
    ledger = PrivacyLedger()
    GridSearchCV(
        _clf(ledger, max_iter=2), {"clip_norm": [0.5, 1.0]}, cv=2, n_jobs=2
    ).fit(X, y)
    # 4 fits in the workers (through the journal) + the refit here.
    assert len(ledger) == 5
    assert len({e.uid for e in ledger.entries}) == 5


def test_pickled_copy_records_into_the_original(data):
    X, y = data
    ledger = PrivacyLedger()
    clf = _clf(ledger, max_iter=2).fit(X, y)
    restored = pickle.loads(pickle.dumps(clf))
    assert restored.accountant is not ledger
    restored.fit(X, y)
    assert len(ledger) == 2
    assert len(restored.accountant) == 2


def test_pickled_ledger_outliving_its_original_is_independent():
    ledger = PrivacyLedger()
    ledger.record(gaussian_event(2.0), delta=1e-5)
    blob = pickle.dumps(ledger)
    del ledger  # deletes the journal
    import gc

    gc.collect()
    restored = pickle.loads(blob)
    restored.record(gaussian_event(2.0), delta=1e-5)
    assert len(restored) == 2


def test_a_pickled_ledger_keeps_the_fits_of_worker_processes(data):
    # The workers' fits are in the journal, which goes with the original: a
    # ledger saved after an n_jobs > 1 search keeps them (it kept none).
    import gc

    X, y = data
    ledger = PrivacyLedger()
    cross_validate(_clf(ledger, max_iter=2), X, y, cv=2, n_jobs=2)
    total = ledger.total_epsilon()
    blob = pickle.dumps(ledger)
    del ledger
    gc.collect()
    restored = pickle.loads(blob)
    assert len(restored) == 2
    assert restored.total_epsilon() == pytest.approx(total)


def test_a_copy_keeps_its_own_fits_when_the_original_goes():
    import gc

    ledger = PrivacyLedger()
    ledger.record(gaussian_event(2.0), delta=1e-5)
    copy_ = pickle.loads(pickle.dumps(ledger))
    copy_.record(gaussian_event(2.0), delta=1e-5)
    assert len(copy_) == len(ledger) == 2
    del ledger
    gc.collect()
    assert len(copy_) == 2


def _returned_copy(data):
    # A model returned by an n_jobs > 1 search holds a copy of the ledger,
    # unpickled from its worker; the caller drops the original.
    X, y = data
    ledger = PrivacyLedger()
    result = cross_validate(
        _clf(ledger, max_iter=2), X, y, cv=3, n_jobs=2, return_estimator=True
    )
    copy_ = result["estimator"][0].accountant
    assert copy_ is not ledger
    return copy_, ledger.total_epsilon()


def test_a_copy_outliving_the_original_keeps_the_fits_of_worker_processes(data):
    # The journal went with the original: the returned model's ledger kept
    # its own fit only (1 of 3, epsilon 1.0 against 1.78).
    import gc

    copy_, total = _returned_copy(data)
    gc.collect()
    assert len(copy_) == 3
    assert copy_.total_epsilon() == pytest.approx(total)


def test_a_copy_outliving_the_original_hands_workers_a_journal(data):
    # The copy handed later workers the removed journal's path: each
    # worker's ledger became independent and its fit was lost (4 of 7).
    import gc

    X, y = data
    ledger = PrivacyLedger()
    clf = pickle.loads(pickle.dumps(_clf(ledger, max_iter=2).fit(X, y)))
    del ledger
    gc.collect()
    cross_validate(clf, X, y, cv=3, n_jobs=2)
    assert len(clf.accountant) == 4


def test_the_journal_is_removed_when_its_last_holder_goes():
    import gc
    import os

    ledger = PrivacyLedger()
    ledger.record(gaussian_event(2.0), delta=1e-5)
    copy_ = pickle.loads(pickle.dumps(ledger))
    path = ledger._journal
    del ledger
    gc.collect()
    assert os.path.exists(path)
    del copy_
    gc.collect()
    assert not os.path.exists(path)


def test_reset_of_a_copy_detaches_it_and_keeps_the_original(data):
    # Emptying the shared journal dropped the workers' fits from the
    # original, which kept its own only: it under-reported.
    X, y = data
    ledger = PrivacyLedger()
    result = cross_validate(
        _clf(ledger, max_iter=2), X, y, cv=3, n_jobs=2, return_estimator=True
    )
    total = ledger.total_epsilon()
    copy_ = result["estimator"][0].accountant
    assert copy_.reset() is copy_
    assert len(copy_) == 0
    assert len(ledger) == 3
    assert ledger.total_epsilon() == pytest.approx(total)
    # The detached copy records on its own.
    copy_.record(gaussian_event(2.0), delta=1e-5)
    assert len(copy_) == 1 and len(ledger) == 3


def test_a_copy_on_another_machine_refuses_to_record(monkeypatch):
    # Its journal is a local file: a fit recorded on a remote worker would
    # be missing from the original's total, so the copy refuses.
    from sklearn_dpfair.exceptions import PrivacyAccountingError
    from sklearn_dpfair.privacy import _ledger

    ledger = PrivacyLedger()
    ledger.record(gaussian_event(2.0), delta=1e-5)
    state = ledger.__getstate__()
    state["journal"] = state["journal"] + ".elsewhere"  # not reachable here
    monkeypatch.setattr(_ledger.socket, "gethostname", lambda: "worker-7")
    remote = PrivacyLedger.__new__(PrivacyLedger)
    remote.__setstate__(state)
    with pytest.raises(PrivacyAccountingError, match="another machine"):
        remote.record(gaussian_event(2.0), delta=1e-5)
    assert len(ledger) == 1
    # A fit asks before its first release, and is refused there too.
    with pytest.raises(PrivacyAccountingError, match="another machine"):
        remote.check_recordable(gaussian_event(2.0))
    est = DPLogisticRegression(classes=[0, 1], accountant=remote)
    with pytest.raises(PrivacyAccountingError, match="another machine"):
        est.privacy_plan(300, 2)


def test_non_private_fit_makes_the_total_infinite(data):
    X, y = data
    ledger = PrivacyLedger()
    _clf(ledger, epsilon=np.inf, max_iter=2).fit(X, y)
    assert ledger.total_epsilon() == np.inf
    assert "inf" in ledger.summary()


def _mixed_ledger(kind="rdp"):
    ledger = PrivacyLedger(kind)
    ledger.record(gaussian_event(2.0), delta=1e-5, adjacency="add_remove")
    ledger.record(gaussian_event(2.0), delta=1e-5, adjacency="replace_one")
    return ledger


def test_mixed_adjacency_is_refused():
    ledger = _mixed_ledger()
    with pytest.raises(ValueError, match="different neighbouring relations") as exc:
        ledger.total_epsilon()
    # The message names both relations and the option that converts.
    message = str(exc.value)
    assert "add_remove and replace_one" in message
    assert "adjacency='replace_one'" in message
    assert "(2 eps, (1 + e^eps) delta)" in message
    with pytest.raises(ValueError, match="different neighbouring relations"):
        ledger.dp_event()
    assert "not composable" in ledger.summary()
    assert "not composable" in repr(ledger)
    # Nothing turns replace-one into add/remove.
    with pytest.raises(ValueError, match="implies no add/remove guarantee"):
        ledger.total_epsilon(adjacency="add_remove")
    with pytest.raises(ValueError, match="adjacency must be one of"):
        ledger.total_epsilon(adjacency="zero_out")


@pytest.mark.parametrize("kind", ["rdp", "pld"])
def test_add_remove_releases_convert_to_replace_one_by_group_privacy(kind):
    # One Gaussian of noise multiplier z for a sum of sensitivity 1 under
    # add/remove: under replace-one its sensitivity is 2, so its exact
    # replace-one event is a Gaussian of multiplier z / 2. The group-privacy
    # conversion is an upper bound of that exact epsilon, and by the formula
    # it is 2 eps(delta_A) with (1 + e^eps) delta_A <= delta.
    z, delta = 3.0, 1e-5
    ledger = PrivacyLedger(kind)
    ledger.record(gaussian_event(z), delta=delta)
    converted = ledger.total_epsilon(adjacency="replace_one")
    exact = epsilon_of(gaussian_event(z / 2), delta, kind)
    assert exact <= converted
    # At most twice the add/remove epsilon at a delta (1 + e^eps) e^0.1
    # times smaller: the conversion's search costs little.
    eps = epsilon_of(gaussian_event(z), delta, kind)
    smaller = delta / (1 + np.exp(eps + 0.5))
    assert 2 * eps < converted <= 2 * epsilon_of(gaussian_event(z), smaller, kind)
    # Under its own relation the ledger's total is unchanged.
    assert ledger.total_epsilon() == pytest.approx(eps, rel=1e-12)
    assert ledger.total_epsilon(adjacency="add_remove") == ledger.total_epsilon()


@pytest.mark.parametrize("kind", ["rdp", "pld"])
def test_mixed_ledger_composes_under_replace_one(kind):
    ledger = _mixed_ledger(kind)
    total = ledger.total_epsilon(adjacency="replace_one")
    replace_one_alone = epsilon_of(gaussian_event(2.0), 1e-5, kind)
    add_remove_alone = PrivacyLedger(kind)
    add_remove_alone.record(gaussian_event(2.0), delta=1e-5)
    converted_alone = add_remove_alone.total_epsilon(adjacency="replace_one")
    # Basic composition of the two parts, each at half the delta: above
    # either part at the full delta, and finite.
    assert max(replace_one_alone, converted_alone) < total < np.inf
    summary = ledger.summary(adjacency="replace_one")
    assert "1 add/remove release(s) converted to replace-one" in summary
    assert "under replace-one adjacency" in summary
    # Two releases that share a seed are not composed, converted or not.
    ledger.record(gaussian_event(2.0), delta=1e-5, seed="s", adjacency="replace_one")
    ledger.record(gaussian_event(2.0), delta=1e-5, seed="s")
    assert ledger.total_epsilon(adjacency="replace_one") == np.inf


def test_replace_one_fits_and_add_remove_fits_in_one_ledger(data):
    # SemiDPLinearRegression (replace-one) and DPLogisticRegression
    # (add/remove) recorded into one ledger: refused, then converted.
    X, y = data
    ledger = PrivacyLedger()
    _clf(ledger, max_iter=2).fit(X, y)
    SemiDPLinearRegression(accountant=ledger, max_iter=2).fit(
        X, y.astype(float), public_mask=np.arange(X.shape[0]) < 100
    )
    assert sorted(e.adjacency for e in ledger.entries) == [
        "add_remove",
        "replace_one",
    ]
    with pytest.raises(ValueError, match="adjacency='replace_one'"):
        ledger.total_epsilon()
    assert np.isfinite(ledger.total_epsilon(adjacency="replace_one"))


def test_default_delta_is_the_largest_recorded():
    ledger = PrivacyLedger()
    ev = noisy_sgd_event(1.0, 0.1, 10)
    ledger.record(ev, delta=1e-6)
    ledger.record(ev, delta=1e-4)
    direct = _direct_epsilon([ev, ev], 1e-4, "rdp")
    assert ledger.total_epsilon() == pytest.approx(direct, rel=1e-9)


def test_record_validates_its_input():
    ledger = PrivacyLedger()
    with pytest.raises(TypeError, match="DpEvent"):
        ledger.record("gaussian", delta=1e-5)
    with pytest.raises(ValueError, match="delta"):
        ledger.record(gaussian_event(1.0), delta=1.0)
    # delta = 0 is a claim of pure DP, which a Gaussian does not make.
    with pytest.raises(ValueError, match="needs delta > 0"):
        ledger.record(gaussian_event(1.0), delta=0.0)


def test_reset_forgets_memory_and_journal(data):
    X, y = data
    ledger = PrivacyLedger()
    clf = _clf(ledger, max_iter=2)
    pickle.loads(pickle.dumps(clf)).fit(X, y)  # journal entry
    clf.fit(X, y)  # memory entry
    assert len(ledger) == 2
    assert ledger.reset() is ledger
    assert len(ledger) == 0


def test_recording_is_thread_safe():
    ledger = PrivacyLedger()
    ev = gaussian_event(3.0)

    def work():
        for _ in range(50):
            ledger.record(ev, delta=1e-5)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(ledger) == 200


def test_ledger_composition_matches_self_composition():
    # 10 equal Gaussian releases are one Gaussian with sigma / sqrt(10).
    ledger = PrivacyLedger("pld")
    for _ in range(10):
        ledger.record(gaussian_event(10.0), delta=1e-5)
    single = _direct_epsilon(
        [dp_accounting.GaussianDpEvent(10.0 / np.sqrt(10))], 1e-5, "pld"
    )
    assert ledger.total_epsilon() == pytest.approx(single, rel=1e-3)


def _private_estimators_with_accountant():
    from sklearn_dpfair.utils import all_estimators
    from sklearn_dpfair.utils._instance_generator import construct_instance

    return [
        pytest.param(cls, id=name)
        for name, cls in all_estimators()
        if "accountant" in construct_instance(cls).get_params()
    ]


@pytest.mark.parametrize("cls", _private_estimators_with_accountant())
def test_every_estimator_with_an_accountant_records_into_a_ledger(cls):
    import warnings

    from sklearn.base import is_classifier, is_regressor

    from sklearn_dpfair.audit._synthetic import UnsupportedFitArgument, synthetic_inputs
    from sklearn_dpfair.utils._instance_generator import construct_instance

    ledger = PrivacyLedger("rdp")
    est = construct_instance(cls).set_params(accountant=ledger)
    if "random_state" in est.get_params():
        est.set_params(random_state=0)
    if type(est).__name__ == "PrivateMetricFrame":
        # fit(y_true, y_pred, *, sensitive_features)
        X = np.arange(80) % 2
        y, params = X[::-1].copy(), {"sensitive_features": X}
    elif is_classifier(est) or is_regressor(est):
        try:
            X, y, params, _ = synthetic_inputs(est, n_samples=80)
        except UnsupportedFitArgument as exc:
            pytest.skip(f"cannot synthesize fit argument {exc}")
    elif type(est).__name__ == "DPOneHotEncoder":
        # Declared categories: a ledger cannot hold category discovery's
        # threshold delta (refused, tested in tests/preprocessing).
        est.set_params(categories=[[0, 1, 2]] * 3)
        X, y, params = np.arange(240).reshape(80, 3) % 3, None, {}
    else:
        # A transformer's fit reads X alone.
        X, y, params = np.random.default_rng(0).normal(size=(80, 3)), None, {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = clone(est).fit(X, y, **params)
    assert fitted.accountant is ledger
    assert len(ledger) == 1
    entry = ledger.entries[0]
    assert entry.dp_event == fitted.dp_event_
    assert entry.delta == fitted.delta_ and entry.adjacency == fitted.adjacency_


# -- fits that share a seed share their noise: never composed -----------------


def test_clones_of_a_random_state_instance_are_not_composed(data):
    # clone deep-copies the instance: every fold model draws the same batches
    # and noise, which cancels between them. The ledger must not report the
    # composition of independent releases.
    X, y = data
    ledger = PrivacyLedger()
    clf = _clf(ledger, random_state=np.random.RandomState(), max_iter=2)
    out = cross_validate(clf, X, y, cv=3, return_estimator=True)
    records = [est.privacy_record_ for est in out["estimator"]]
    assert all(r.seeded for r in records)
    assert len({r.seed for r in records}) == 1
    assert len(ledger) == 3
    assert ledger.total_epsilon() == np.inf
    assert [list(s) for s in ledger.shared_seeds().values()] == [
        ["DPLogisticRegression"] * 3
    ]
    summary = ledger.summary()
    assert "shared a seed" in summary and "3 fits by DPLogisticRegression" in summary
    assert "3 seeded release(s)" in summary


@pytest.mark.parametrize(
    "make_seed",
    [lambda: 0, np.random.RandomState, np.random.default_rng],
    ids=["int", "RandomState", "Generator"],
)
def test_a_seed_shared_across_a_search_is_not_composed(data, make_seed):
    X, y = data
    ledger = PrivacyLedger()
    clf = _clf(ledger, random_state=make_seed())
    GridSearchCV(clf, {"max_iter": [1, 2]}, cv=2).fit(X, y)
    assert len(ledger) == 5
    assert ledger.total_epsilon() == np.inf
    assert ledger.total_epsilon(delta=1e-3) == np.inf


def test_a_shared_seed_is_detected_across_processes(data):
    X, y = data
    ledger = PrivacyLedger()
    clf = _clf(ledger, random_state=np.random.default_rng(7), max_iter=2)
    cross_validate(clf, X, y, cv=2, n_jobs=2)
    assert len(ledger) == 2
    assert ledger.total_epsilon() == np.inf


def test_a_seed_shared_by_a_pipeline_step_and_a_fit_is_not_composed(data):
    # A pipeline records its steps' seeds as "path=fingerprint"; a step
    # seeded like a standalone fit drew the same noise.
    from sklearn_dpfair.pipeline import make_private_pipeline

    X, y = data
    ledger = PrivacyLedger()
    _clf(ledger, max_iter=2, random_state=0).fit(X, y)
    make_private_pipeline(
        DPLogisticRegression(classes=[0, 1], max_iter=2, random_state=0),
        accountant=ledger,
    ).fit(X, y)
    assert len(ledger.shared_seeds()) == 1
    assert ledger.total_epsilon() == np.inf


def test_a_step_refitted_with_the_seed_its_pipeline_derived_is_not_composed(data):
    # A seeded pipeline recorded its own seed only: a clone of a fitted step
    # (which keeps the int seed the pipeline derived for it), refitted on a
    # neighbouring dataset, drew the same noise and was composed with it
    # (total 1.01 instead of inf).
    from sklearn_dpfair.pipeline import make_private_pipeline
    from sklearn_dpfair.preprocessing import DPStandardScaler

    X, y = data
    ledger = PrivacyLedger()
    pipe = make_private_pipeline(
        DPStandardScaler(bounds=(-5, 5)),
        DPLogisticRegression(classes=[0, 1], max_iter=2),
        accountant=ledger,
        random_state=0,
    ).fit(X, y)
    step = clone(pipe.pipeline_.steps[0][1]).set_params(accountant=ledger)
    step.fit(X[:-1])
    assert ledger.shared_seeds()
    assert ledger.total_epsilon() == np.inf


def test_a_search_records_its_seed_in_its_estimators_ledger(data):
    from sklearn_dpfair.model_selection import PrivateHyperparameterSearch

    X, y = data
    ledger = PrivacyLedger()
    for half in (slice(0, 200), slice(200, 400)):
        PrivateHyperparameterSearch(
            _clf(ledger, max_iter=2), {"clip_norm": [0.5, 1.0]}, random_state=0
        ).fit(X[half], y[half])
    assert all(e.seed is not None for e in ledger.entries)
    assert ledger.total_epsilon() == np.inf


def test_a_ledger_on_a_pipeline_step_is_refused(data):
    from sklearn_dpfair.pipeline import make_private_pipeline

    X, y = data
    ledger = PrivacyLedger()
    pipe = make_private_pipeline(_clf(ledger, max_iter=2))
    with pytest.raises(ValueError, match="pass the ledger to the pipeline"):
        pipe.fit(X, y)
    assert len(ledger) == 0


def test_distinct_seeds_compose_but_are_counted_as_seeded(data):
    X, y = data
    ledger = PrivacyLedger()
    a = _clf(ledger, random_state=1, max_iter=2).fit(X, y)
    b = _clf(ledger, random_state=2, max_iter=2).fit(X, y)
    events = [a.dp_event_, b.dp_event_]
    assert ledger.shared_seeds() == {}
    assert ledger.total_epsilon() == pytest.approx(
        _direct_epsilon(events, 1e-5, "rdp"), rel=1e-12
    )
    assert "2 seeded release(s)" in ledger.summary()
    assert [e.seed for e in ledger.entries] == [
        a.privacy_record_.seed,
        b.privacy_record_.seed,
    ]


def test_refitting_one_seeded_estimator_reuses_its_noise(data):
    # A seed (int or instance, which fit never advances) gives the same noise
    # to every fit of the estimator.
    X, y = data
    ledger = PrivacyLedger()
    clf = _clf(ledger, random_state=np.random.RandomState(3), max_iter=2)
    clf.fit(X, y)
    clf.fit(X[::-1], y[::-1])
    assert ledger.total_epsilon() == np.inf


def test_unseeded_fits_are_composed(data):
    X, y = data
    ledger = PrivacyLedger()
    cross_validate(_clf(ledger, max_iter=2), X, y, cv=3)
    assert all(e.seed is None for e in ledger.entries)
    assert np.isfinite(ledger.total_epsilon())
    assert "seeded" not in ledger.summary()


def test_recorded_seeds():
    ledger = PrivacyLedger()
    ledger.record(gaussian_event(2.0), delta=1e-5, seed="a", source="x")
    ledger.record(gaussian_event(2.0), delta=1e-5, seed="b", source="y")
    ledger.record(gaussian_event(2.0), delta=1e-5)
    assert np.isfinite(ledger.total_epsilon())
    ledger.record(gaussian_event(2.0), delta=1e-5, seed="a", source="z")
    assert ledger.shared_seeds() == {"a": ["x", "z"]}
    assert ledger.total_epsilon() == np.inf
    assert isinstance(ledger.dp_event(), dp_accounting.NonPrivateDpEvent)


def test_journal_entries_without_a_seed_still_load():
    # Entries pickled before the seed field existed have no "seed" in their
    # state; the class default applies.
    from sklearn_dpfair.privacy._ledger import LedgerEntry

    entry = LedgerEntry(gaussian_event(1.0), 1e-5, None, "add_remove", None, "u", 0.0)
    state = dict(entry.__dict__)
    del state["seed"]
    old = object.__new__(LedgerEntry)
    old.__dict__.update(state)
    assert old.seed is None


def test_repr_shows_the_number_of_fits_and_the_total():
    ledger = PrivacyLedger()
    assert repr(ledger) == "PrivacyLedger(kind='rdp', fits=0)"
    ledger.record(gaussian_event(2.0), delta=1e-5)
    ledger.record(gaussian_event(2.0), delta=1e-5)
    text = repr(ledger)
    assert "fits=2" in text
    assert f"total_epsilon={ledger.total_epsilon():.4g} at delta=1e-05" in text


def test_total_epsilon_with_a_plan_matches_the_fit_it_plans():
    import warnings

    import numpy as np

    from sklearn_dpfair import DPLogisticRegression

    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 3)) * [1.0, 100.0, 1e4]
    y = (X[:, 0] > 0).astype(int)
    ledger = PrivacyLedger()
    first = DPLogisticRegression(classes=[0, 1], max_iter=3, accountant=ledger)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first.fit(X, y)
    second = DPLogisticRegression(classes=[0, 1], max_iter=5, epsilon=0.5)
    predicted = ledger.total_epsilon_with(second.privacy_plan(2000, 3))
    assert len(ledger) == 1  # nothing recorded by asking
    second.set_params(accountant=ledger)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        second.fit(X, y)
    assert ledger.total_epsilon() == predicted
    assert predicted > first.epsilon_


def test_a_plan_with_a_delta_outside_its_event_is_refused():
    # As its fit with a ledger is: the ledger cannot hold that delta (it
    # was recorded at delta + additional delta, under the plan's epsilon).
    from sklearn_dpfair.preprocessing import DPOneHotEncoder

    plan = DPOneHotEncoder(epsilon=1.0).privacy_plan(5000, 2)
    assert plan.additional_delta > 0
    with pytest.raises(ValueError, match="cannot hold"):
        PrivacyLedger().total_epsilon_with(plan)


def test_pure_releases_are_ledgered_and_their_epsilons_add_up():
    # delta = 0 (Laplace output perturbation) is recorded, and the pure
    # total is the exact sum of the epsilons; with a Gaussian fit beside it
    # the total is stated at that fit's delta.
    from sklearn_dpfair.linear_model import DPLogisticRegression

    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 3))
    y = (X[:, 0] > 0).astype(int)
    ledger = PrivacyLedger("pld")
    for _ in range(2):
        DPLogisticRegression(
            solver="output-perturbation", delta=0, epsilon=0.5, classes=[0, 1],
            feature_norm_bound=3.0, alpha=0.1, accountant=ledger,
        ).fit(X, y)
    assert [e.delta for e in ledger.entries] == [0.0, 0.0]
    assert ledger.total_epsilon() == pytest.approx(1.0, rel=1e-12)
    with pytest.raises(ValueError, match=r"\[0, 1\)"):
        ledger.record(ledger.entries[0].dp_event, delta=-1e-9)


def test_an_entry_its_accountant_cannot_compose_is_refused_before_recording():
    from sklearn_dpfair.privacy._accounting import zcdp_event
    from sklearn_dpfair.privacy._random_allocation import random_allocation_event

    allocation = random_allocation_event(2.0, 10, 2)
    # A zCDP release is not read by PLD; the ledger stays as it was.
    ledger = PrivacyLedger("pld")
    ledger.record(gaussian_event(2.0), delta=1e-5)
    with pytest.raises(ValueError, match="'pld' accountant cannot read"):
        ledger.record(zcdp_event(0.1), delta=1e-5)
    assert len(ledger) == 1 and ledger.total_epsilon(1e-5) < 3
    # A random-allocation event is read alone, by its own PLD.
    with pytest.raises(ValueError, match="random-allocation"):
        ledger.record(allocation, delta=1e-5)
    with pytest.raises(ValueError, match="random-allocation"):
        PrivacyLedger().record(allocation, delta=1e-5)
    pytest.importorskip("PLD_accounting")  # its PLD, for the total
    alone = PrivacyLedger("pld")
    alone.record(allocation, delta=1e-5)
    assert 0 < alone.total_epsilon(1e-5) < np.inf
    with pytest.raises(ValueError, match="random-allocation"):
        alone.record(gaussian_event(2.0), delta=1e-5)


def test_a_fit_its_ledger_cannot_compose_is_not_released(data):
    pytest.importorskip("PLD_accounting")  # balls-and-bins calibration
    X, y = data
    ledger = PrivacyLedger()
    DPLogisticRegression(classes=[0, 1], max_iter=2, accountant=ledger).fit(X, y)
    clf = DPLogisticRegression(
        classes=[0, 1], max_iter=2, batch_sampling="balls_and_bins", accountant=ledger
    )
    with pytest.raises(ValueError, match="random-allocation"):
        clf.fit(X, y)
    assert not hasattr(clf, "coef_") and len(ledger) == 1
    assert ledger.total_epsilon(1e-5) <= 1.0


def test_the_refusal_reads_the_composition_as_the_total_does():
    # A local randomizer makes the whole composition replace-one: beside it
    # a sampled-without-replacement release is read by RDP (accepted, as
    # before), a Laplace release by neither accountant's PLD (refused: its
    # total would raise).
    rr = dp_accounting.RandomizedResponseDpEvent(0.5, 2)
    swor = dp_accounting.SampledWithoutReplacementDpEvent(
        1000, 10, dp_accounting.GaussianDpEvent(2.0)
    )
    ledger = PrivacyLedger("rdp")
    ledger.record(rr, delta=1e-5, adjacency="replace_one")
    ledger.record(swor, delta=1e-5, adjacency="replace_one")
    assert 0 < ledger.total_epsilon(1e-5) < np.inf
    pld_ledger = PrivacyLedger("pld")
    pld_ledger.record(rr, delta=1e-5, adjacency="replace_one")
    with pytest.raises(ValueError, match="cannot read these releases together"):
        pld_ledger.record(
            dp_accounting.LaplaceDpEvent(2.0), delta=1e-5, adjacency="replace_one"
        )
    assert len(pld_ledger) == 1 and pld_ledger.total_epsilon(1e-5) < np.inf


# Estimators whose fits plan private column scales (zCDP draws) for raw
# columns, by a ledger's constructor.
_SCALED_BY_PRIVATE_QUANTILES = pytest.mark.parametrize(
    "make",
    [
        lambda ledger: DPLogisticRegression(
            classes=[0, 1], feature_scaling="auto", accountant=ledger
        ),
        lambda ledger: DPFERMIClassifier(
            classes=[0, 1], groups=[0, 1], feature_scaling="auto", accountant=ledger
        ),
        lambda ledger: DPMLPClassifier(
            classes=[0, 1], feature_scaling="auto", accountant=ledger
        ),
    ],
    ids=["DPLogisticRegression", "DPFERMIClassifier", "DPMLPClassifier"],
)


@_SCALED_BY_PRIVATE_QUANTILES
def test_a_plan_its_ledger_cannot_record_is_refused(make):
    # Private column scales are zCDP draws, which a PLD ledger cannot read:
    # the plan refuses, as the fit's record would be refused.
    with pytest.raises(ValueError, match="'pld' accountant cannot read"):
        make(PrivacyLedger("pld")).privacy_plan(5000, 3)
    assert make(PrivacyLedger("rdp")).privacy_plan(5000, 3).epsilon <= 1.0


@_SCALED_BY_PRIVATE_QUANTILES
def test_a_fit_its_ledger_cannot_record_refuses_before_any_release(make):
    from sklearn_dpfair.privacy._mechanism import observe_privatize

    class Count:
        n = 0

        def before_noise(self, mechanism, clipped_sum):
            Count.n += 1
            return clipped_sum

        def after_noise(self, mechanism, noisy_sum):
            pass

    rng = np.random.default_rng(0)
    X = rng.normal(50.0, 10.0, size=(5000, 3))
    y = (X[:, 0] > 50.0).astype(int)
    ledger = PrivacyLedger("pld")
    est = make(ledger)
    with observe_privatize(Count()), pytest.raises(ValueError, match="'pld'"):
        est.fit(X, y)
    assert Count.n == 0 and len(ledger) == 0 and not hasattr(est, "coef_")


# -- fits run side by side (n_jobs > 1) -----------------------------------------


def test_parallel_fits_do_not_leave_a_ledger_without_a_total():
    # A balls-and-bins fit of several steps per epoch is read alone by its
    # own PLD: run serially the second fold is refused before it runs; run
    # in two processes, one of the two copies must be refused too, or no
    # total could be read.
    pytest.importorskip("PLD_accounting")
    X, y = make_classification(n_samples=1200, n_features=4, random_state=0)
    ledger = PrivacyLedger("pld")
    clf = DPLogisticRegression(
        classes=[0, 1], max_iter=2, batch_sampling="balls_and_bins", accountant=ledger
    )
    with pytest.warns(FitFailedWarning, match="random-allocation"):
        scores = cross_validate(clf, X, y, cv=2, n_jobs=2)["test_score"]
    assert np.isnan(scores).sum() == 1
    assert len(ledger) == 1 and 0 < ledger.total_epsilon() <= 1.0
    assert "Total: epsilon = " in ledger.summary()


def test_a_copy_reads_the_journal_before_its_fit_runs():
    from sklearn_dpfair.privacy._random_allocation import random_allocation_event

    allocation = random_allocation_event(2.0, 10, 2)
    ledger = PrivacyLedger("pld")
    # Two workers' copies, made before either recorded (as joblib makes them).
    first, second = (pickle.loads(pickle.dumps(ledger)) for _ in range(2))
    first.record(allocation, delta=1e-5)
    with pytest.raises(ValueError, match="random-allocation"):
        second.check_recordable(allocation)
    # The original too, for a refit after the workers' fits.
    with pytest.raises(ValueError, match="random-allocation"):
        ledger.check_recordable(allocation)
    assert len(ledger) == 1


def test_a_copy_checks_the_journal_again_as_it_appends(monkeypatch):
    pytest.importorskip("PLD_accounting")  # the random-allocation event
    # Both copies may pass check_recordable before either appends: the
    # append checks what the other copies wrote, under the journal's lock.
    from sklearn_dpfair.privacy._random_allocation import random_allocation_event

    allocation = random_allocation_event(2.0, 10, 2)
    ledger = PrivacyLedger("pld")
    first, second = (pickle.loads(pickle.dumps(ledger)) for _ in range(2))
    second.check_recordable(allocation)  # passes: nothing recorded yet
    first.record(allocation, delta=1e-5)
    monkeypatch.setattr(second, "check_recordable", lambda *a, **k: None)
    with pytest.raises(ValueError, match="random-allocation"):
        second.record(allocation, delta=1e-5)
    assert len(ledger) == 1 and len(second) == 1
    assert 0 < ledger.total_epsilon(1e-5) < np.inf


def test_a_copy_sees_what_the_original_recorded_after_it_was_made():
    pytest.importorskip("PLD_accounting")  # the random-allocation event
    # The original records in the main process while a worker's copy runs:
    # it writes the journal too, so the copy refuses what cannot compose.
    from sklearn_dpfair.privacy._random_allocation import random_allocation_event

    allocation = random_allocation_event(2.0, 10, 2)
    ledger = PrivacyLedger("pld")
    copy_ = pickle.loads(pickle.dumps(ledger))
    ledger.record(allocation, delta=1e-5)
    with pytest.raises(ValueError, match="random-allocation"):
        copy_.record(allocation, delta=1e-5)
    assert len(ledger) == 1 and 0 < ledger.total_epsilon(1e-5) < np.inf
    # Recorded once, whether read from memory or from the journal.
    assert len(pickle.loads(pickle.dumps(ledger))) == 1


def test_summary_of_entries_its_accountant_cannot_compose_says_why():
    # Entries written without the check (a journal of an older version):
    # the summary and the repr say the total is missing rather than raise.
    from sklearn_dpfair.privacy import _ledger
    from sklearn_dpfair.privacy._random_allocation import random_allocation_event

    allocation = random_allocation_event(2.0, 10, 2)
    ledger = PrivacyLedger("pld")
    copy_ = pickle.loads(pickle.dumps(ledger))
    copy_.record(allocation, delta=1e-5)
    entry = dataclasses.replace(copy_.entries[0], uid="another")
    _ledger._append(ledger._journal, entry)
    with pytest.raises(ValueError, match="'pld' accountant cannot interpret"):
        ledger.total_epsilon()
    summary = ledger.summary()
    assert "2 release(s)" in summary and "Total: not composable." in summary
    assert "not composable" in repr(ledger)


@pytest.mark.parametrize(
    "damage",
    [
        (500).to_bytes(4, "big") + b"\x80\x05partial",  # a record cut short
        b"\x00\x00",  # a header cut short
        (7).to_bytes(4, "big") + b"garbage",  # a record that does not unpickle
    ],
    ids=["record", "header", "bytes"],
)
def test_a_damaged_journal_says_that_no_total_can_be_certified(damage):
    from sklearn_dpfair.exceptions import PrivacyAccountingError

    ledger = PrivacyLedger()
    ledger.record(gaussian_event(3.0), delta=1e-5)
    copy_ = pickle.loads(pickle.dumps(ledger))
    copy_.record(gaussian_event(3.0), delta=1e-5)
    with open(ledger._journal, "ab") as f:
        f.write(damage)
    for read in (ledger.total_epsilon, ledger.summary, lambda: len(ledger)):
        with pytest.raises(PrivacyAccountingError, match="cannot be certified") as e:
            read()
        assert ledger._journal in str(e.value)
    # The repr of the ledger, and of every estimator holding it, still works.
    assert "journal unreadable" in repr(ledger)
    assert "journal unreadable" in repr(_clf(ledger))


def test_total_with_a_plan_predicts_a_shared_seed(data):
    from sklearn_dpfair.privacy._random import noise_seed

    X, y = data
    ledger = PrivacyLedger()
    _clf(ledger, max_iter=2, random_state=0).fit(X, y)
    nxt = _clf(ledger, max_iter=2, random_state=0)
    plan = nxt.privacy_plan(*X.shape)
    assert ledger.total_epsilon_with(plan) < np.inf  # as if unseeded
    predicted = ledger.total_epsilon_with(plan, seed=noise_seed(nxt.random_state))
    nxt.fit(X, y)
    assert predicted == ledger.total_epsilon() == np.inf
    other = noise_seed(1)
    assert ledger.total_epsilon_with(plan, seed=other) == np.inf  # already inf
    fresh = PrivacyLedger()
    _clf(fresh, max_iter=2, random_state=0).fit(X, y)
    assert fresh.total_epsilon_with(plan, seed=other) < np.inf


def test_an_unknown_adjacency_is_refused():
    ledger = PrivacyLedger()
    with pytest.raises(ValueError, match="adjacency must be one of"):
        ledger.record(gaussian_event(2.0), delta=1e-5, adjacency="add-remove")
    with pytest.raises(ValueError, match="adjacency must be one of"):
        ledger.check_recordable(gaussian_event(2.0), adjacency="add-remove")
    assert len(ledger) == 0
    assert ledger.summary() == "PrivacyLedger: no releases recorded."


def test_threads_sharing_a_ledger_cannot_both_add_what_cannot_be_composed(
    monkeypatch,
):
    # A threading backend shares the ledger object itself: the check is made
    # again, under the ledger's lock, where the entry is added.
    from sklearn_dpfair.privacy._random_allocation import random_allocation_event

    allocation = random_allocation_event(2.0, 10, 2)
    ledger = PrivacyLedger("pld")
    ledger.check_recordable(allocation)  # as both threads' fits do first
    real = ledger.check_recordable
    monkeypatch.setattr(ledger, "check_recordable", lambda *a, **k: None)
    ledger.record(allocation, delta=1e-5)
    with pytest.raises(ValueError, match="random-allocation"):
        ledger.record(allocation, delta=1e-5)
    assert len(ledger) == 1
    with pytest.raises(ValueError, match="random-allocation"):
        real(allocation)


@pytest.mark.parametrize("kind", ["rdp", "pld"])
@pytest.mark.parametrize(
    "bogus, delta",
    [
        (dp_accounting.SelfComposedDpEvent(gaussian_event(1.0), -9), 1e-5),
        (dp_accounting.GaussianDpEvent(float("nan")), 1e-5),
        (dp_accounting.PoissonSampledDpEvent(-0.5, gaussian_event(1.0)), 1e-5),
        (dp_accounting.LaplaceDpEvent(-1.0), 0.0),
    ],
    ids=["negative-count", "nan-noise", "negative-q", "negative-laplace"],
)
def test_a_malformed_event_is_not_recorded(kind, bogus, delta):
    # Recorded, a count of -9 lowered a total of 19.05 to 4.73; a NaN noise
    # multiplier made an RDP total 0; a Laplace of scale -1 cancelled one of 1.
    ledger = PrivacyLedger(kind)
    real = (
        dp_accounting.LaplaceDpEvent(1.0)
        if delta == 0
        else dp_accounting.SelfComposedDpEvent(gaussian_event(1.0), 10)
    )
    ledger.record(real, delta=delta, source="real fit")
    before = ledger.total_epsilon()
    with pytest.raises(ValueError, match=r"must be (a number|an integer)"):
        ledger.check_recordable(bogus)
    with pytest.raises(ValueError, match=r"must be (a number|an integer)"):
        ledger.record(bogus, delta=delta, source="bogus")
    assert len(ledger) == 1 and ledger.total_epsilon() == before


@pytest.mark.parametrize("adjacency", [None, "replace_one"])
def test_a_non_private_release_beside_pure_ones_makes_the_total_infinite(adjacency):
    from sklearn_dpfair.privacy._accounting import laplace_event, non_private_event

    ledger = PrivacyLedger()
    ledger.record(laplace_event(1.0), delta=0.0)
    ledger.record(non_private_event(), delta=0.0)
    assert ledger.total_epsilon(adjacency=adjacency) == np.inf
    assert "inf (a non-private fit was recorded)" in ledger.summary(
        adjacency=adjacency
    )
    assert "total_epsilon=inf at delta=0" in repr(ledger)


def test_a_pld_ledger_composes_releases_of_infinite_noise_as_nothing():
    ledger = PrivacyLedger("pld")
    ledger.record(dp_accounting.GaussianDpEvent(np.inf), delta=1e-5)
    ledger.record(dp_accounting.LaplaceDpEvent(np.inf), delta=1e-5)
    assert ledger.total_epsilon() == 0.0
    assert "total_epsilon=0 at delta=1e-05" in repr(ledger)
    assert "total_epsilon=0 " in repr(_clf(ledger))


def test_repr_does_not_raise_when_the_accountant_fails(monkeypatch):
    from sklearn_dpfair.privacy import _ledger

    def broken(*args, **kwargs):
        raise IndexError("list index out of range")

    ledger = PrivacyLedger()
    ledger.record(gaussian_event(2.0), delta=1e-5)
    monkeypatch.setattr(_ledger, "epsilon_of", broken)
    assert "total_epsilon=unavailable (IndexError)" in repr(ledger)
    assert "unavailable (IndexError)" in repr(_clf(ledger))


@pytest.mark.parametrize("delta", [float("nan"), "1e-5", True, None, 1.0])
def test_record_and_total_refuse_a_delta_that_is_no_number_naming_it(delta):
    # An empty ledger answered 0.0 to a NaN delta; record(delta=None) raised
    # a bare "'<=' not supported".
    ledger = PrivacyLedger()
    if delta is not None:
        with pytest.raises(ValueError, match="delta must be a number in"):
            ledger.total_epsilon(delta)
    with pytest.raises(ValueError, match="delta must be a number in"):
        ledger.record(gaussian_event(2.0), delta=delta)
    assert len(ledger) == 0


def test_summary_says_when_the_sum_of_epsilons_is_partial():
    # Releases recorded without their epsilon were skipped from "the sum of
    # the per-fit epsilons", which then read 4.4 beside a total of 7.08.
    ledger = PrivacyLedger()
    ledger.record(gaussian_event(1.0), delta=1e-5, epsilon=4.4)
    ledger.record(gaussian_event(1.0), delta=1e-5)
    assert "sum of the 1 per-fit epsilons recorded (of 2 releases) is 4.4" in (
        ledger.summary()
    )
    ledger.reset()
    ledger.record(gaussian_event(1.0), delta=1e-5)
    assert "sum of the per-fit" not in ledger.summary()
