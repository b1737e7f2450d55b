# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""DPFERMIClassifier on Dask collections: the in-memory model and guarantee.

The data stay on the workers. One LocalCluster with two worker processes
(the ``dask_client`` fixture) serves the whole module.
"""

import os
import signal
import warnings

import numpy as np
import pytest
from refusing_ledger import RefusingLedger
from release_observer import Releases

from sklearn_dpfair import DPFERMIClassifier, FERMIClassifier
from sklearn_dpfair._solvers import _distributed
from sklearn_dpfair._solvers._linear import LinearModel
from sklearn_dpfair._solvers.fermi import _dask as fermi_dask
from sklearn_dpfair._solvers.fermi._dask import _FairStepConfig, partition_sgda_sums
from sklearn_dpfair.exceptions import PrivacyAccountingError, PrivacyLeakWarning
from sklearn_dpfair.fairness import make_constraint
from sklearn_dpfair.fairness._ermi import ERMIRegularizer
from sklearn_dpfair.metrics import demographic_parity_linf
from sklearn_dpfair.privacy._mechanism import observe_privatize

da = pytest.importorskip("dask.array")
pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(0)
    n = 3000
    X = rng.normal(size=(n, 5))
    s = rng.integers(0, 2, size=n)
    y = (X[:, 0] + s + 0.5 * rng.normal(size=n) > 0.5).astype(int)
    w = rng.uniform(0.2, 3.0, size=n)
    return X, y, s, w


def _dask(*arrays, chunks=700):
    return [
        da.from_array(a, chunks=(chunks,) + (-1,) * (a.ndim - 1)) for a in arrays
    ]


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize(
    "n_classes, constraint", [(2, "demographic_parity"), (3, "equalized_odds")]
)
def test_non_private_full_batch_equals_in_memory(
    dask_client, small, weighted, n_classes, constraint
):
    # No noise, no sampling: the same primal and dual sums, added up in
    # another order; the same exact (un-noised) marginals.
    X, y, s, w = small
    y = y + (X[:, 2] > 1) if n_classes == 3 else y
    w = w if weighted else None
    kw = dict(
        # noise_multiplier=0: the SGDA loop (epsilon = inf alone ends the
        # in-memory fit with a full-batch solve, which a Dask fit does not run).
        epsilon=np.inf,
        noise_multiplier=0.0,
        batch_size="full",
        max_iter=8,
        classes=np.arange(n_classes),
        groups=[0, 1],
        constraint=constraint,
        clip_norm=1.0,
        dual_learning_rate="auto",
    )
    memory = DPFERMIClassifier(**kw).fit(X, y, sample_weight=w, sensitive_features=s)
    Xd, yd, sd = _dask(X, y, s)
    wd = None if w is None else _dask(w)[0]
    dask = DPFERMIClassifier(**kw).fit(Xd, yd, sample_weight=wd, sensitive_features=sd)
    for name in ("coef_", "intercept_", "dual_coef_", "group_marginals_"):
        np.testing.assert_allclose(
            getattr(dask, name), getattr(memory, name), rtol=0, atol=1e-10
        )
    assert dask.dual_learning_rate_ == pytest.approx(memory.dual_learning_rate_)
    assert dask.privacy_record_ == memory.privacy_record_


def test_non_private_limit_weighs_the_group_marginals_as_in_memory(
    dask_client, small
):
    # Without privacy a weight of 2 is a duplicated row, in the marginals of
    # the fairness term too, on a Dask collection as in memory.
    X, y, s, w = small
    kw = dict(epsilon=np.inf, classes=[0, 1], groups=[0, 1], max_iter=2)
    memory = DPFERMIClassifier(**kw).fit(X, y, sample_weight=w, sensitive_features=s)
    Xd, yd, sd, wd = _dask(X, y, s, w)
    dask = DPFERMIClassifier(**kw).fit(Xd, yd, sample_weight=wd, sensitive_features=sd)
    np.testing.assert_allclose(
        dask.group_marginals_, memory.group_marginals_, rtol=1e-12
    )
    weighted_share = np.sum(w[s == 1]) / np.sum(w)
    assert memory.group_marginals_[1] == pytest.approx(weighted_share)


def test_non_private_limit_on_raw_columns_is_the_in_memory_objective(dask_client):
    # epsilon = inf alone on Dask: the noiseless SGDA on columns the
    # cluster standardizes by their exact moments (log-loss 166 before),
    # against the in-memory limit's exact solve, at weights 0 and 8.
    from sklearn.metrics import log_loss

    from sklearn_dpfair.metrics import ermi_score

    rng = np.random.default_rng(0)
    Z = rng.standard_normal((3000, 4))
    y = (rng.random(3000) < 1 / (1 + np.exp(-(Z @ [1.0, -0.8, 0.6, 0.4])))).astype(int)
    X = Z * [100.0, 1e4, 1e-3, 1.0] + [500.0, 0.0, 1e5, 0.0]
    s = (Z[:, 3] > 0).astype(int)
    for weight in (0.0, 8.0):
        kw = dict(
            epsilon=np.inf, fairness_weight=weight, classes=[0, 1], groups=[0, 1],
            random_state=0,
        )
        objective = []
        for data in ((X, y, s), _dask(X, y, s)):
            X_fit, y_fit, s_fit = data
            clf = DPFERMIClassifier(**kw).fit(X_fit, y_fit, sensitive_features=s_fit)
            proba = clf.predict_proba(X)
            ermi = ermi_score(None, y_proba=proba, sensitive_features=s)
            objective.append(log_loss(y, proba) + weight * ermi)
        memory, dask = objective
        assert dask <= 1.01 * memory
        assert "exact means" in clf.privacy_record_.mechanism
        assert clf.privacy_record_.mechanism.startswith("non-private limit")


def test_same_record_as_in_memory(dask_client, small):
    X, y, s, w = small
    kw = dict(
        epsilon=0.8, delta=1e-6, classes=[0, 1], groups=[0, 1], batch_size=300,
        max_iter=3, small_budget="fit",  # the model's own record (no choice)
    )
    memory = DPFERMIClassifier(**kw).fit(X, y, sample_weight=w, sensitive_features=s)
    Xd, yd, sd, wd = _dask(X, y, s, w)
    dask = DPFERMIClassifier(**kw).fit(Xd, yd, sample_weight=wd, sensitive_features=sd)
    assert dask.privacy_record_ == memory.privacy_record_
    assert dask.dp_event_ == memory.dp_event_
    assert dask.epsilon_ == memory.epsilon_ <= 0.8
    assert dask.t_ == memory.t_ == 30
    for name in (
        "noise_multiplier_",
        "dual_noise_multiplier_",
        "marginal_noise_multiplier_",
        "effective_noise_multiplier_",
        "sampling_probability_",
    ):
        assert getattr(dask, name) == getattr(memory, name)
    # The private marginals are the released histogram's: noisy, near the
    # exact ones (sensitivity 1, noise 20 on counts of ~1500).
    np.testing.assert_allclose(dask.group_marginals_, [0.5, 0.5], atol=0.05)


def test_never_converted_to_numpy_on_the_driver(dask_client, small, no_driver_arrays):
    X, y, s, w = small
    Xd, yd, sd, wd = _dask(X, y, s, w)
    clf = DPFERMIClassifier(classes=[0, 1], groups=[0, 1], max_iter=2).fit(
        Xd, yd, sample_weight=wd, sensitive_features=sd
    )
    assert clf.score(X, y) > 0.7
    # Inferring the label and group sets computes their few values only.
    with pytest.warns(PrivacyLeakWarning, match="groups was not given"):
        DPFERMIClassifier(classes=[0, 1], max_iter=1).fit(
            Xd, yd, sensitive_features=sd
        )


# The Adult arrays are built on the driver and shipped in the graph (22 MiB),
# which Dask advises against; this test compares with in-memory fits, so the
# data start in memory on purpose.
@pytest.mark.filterwarnings("ignore:Sending large graph:UserWarning")
def test_adult_accuracy_and_fairness_match_in_memory(dask_client, adult_split):
    X, y, X_test, y_test, s, s_test = adult_split
    kw = dict(epsilon=1.0, classes=[0, 1], groups=["Female", "Male"], max_iter=3)
    Xd, yd, sd = _dask(X, y, s.astype(object), chunks=8000)
    result = {"memory": [], "dask": []}
    for seed in (0, 1):
        for where, args in (("memory", (X, y, s)), ("dask", (Xd, yd, sd))):
            clf = DPFERMIClassifier(random_state=seed, **kw).fit(
                args[0], args[1], sensitive_features=args[2]
            )
            pred = clf.predict(X_test)
            result[where].append(
                (
                    np.mean(pred == y_test),
                    demographic_parity_linf(
                        y_test, pred, sensitive_features=s_test
                    ),
                )
            )
    memory, dask = np.mean(result["memory"], axis=0), np.mean(result["dask"], axis=0)
    # Different batches and noise, the same distribution: within noise.
    assert dask[0] > 0.8
    assert abs(dask[0] - memory[0]) < 0.015
    assert abs(dask[1] - memory[1]) < 0.05


# String group labels in a pandas >= 3 string dtype: no conversion warning.
@pytest.mark.filterwarnings("error::UserWarning")
def test_dataframe_input(dask_client, small, no_driver_arrays):
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    X, y, s, _ = small
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    Xd = dd.from_pandas(frame, npartitions=3)
    yd = dd.from_pandas(pd.Series(y), npartitions=3)
    sd = dd.from_pandas(pd.Series(np.where(s == 1, "b", "a")), npartitions=3)
    clf = DPFERMIClassifier(classes=[0, 1], groups=["a", "b"], max_iter=2).fit(
        Xd, yd, sensitive_features=sd
    )
    assert list(clf.feature_names_in_) == list(frame.columns)
    assert list(clf.groups_) == ["a", "b"]
    assert clf.score(frame, y) > 0.7


def test_one_group_fits_without_fairness_term(dask_client, small):
    X, y, _, _ = small
    Xd, yd = _dask(X, y)
    with pytest.warns(UserWarning, match="sensitive_features is None"):
        clf = DPFERMIClassifier(classes=[0, 1], max_iter=1).fit(Xd, yd)
    assert clf.group_marginals_ is None
    np.testing.assert_array_equal(clf.dual_coef_, 0.0)


def test_declared_groups_without_sensitive_features_fit_one_group(
    dask_client, small
):
    # As in memory: no sensitive features, one group, whatever is declared.
    X, y, _, _ = small
    kw = dict(classes=[0, 1], groups=[0, 1], max_iter=1, random_state=0)
    with pytest.warns(UserWarning, match="sensitive_features is None"):
        memory = DPFERMIClassifier(**kw).fit(X, y)
    with pytest.warns(UserWarning, match="sensitive_features is None"):
        dask = DPFERMIClassifier(**kw).fit(*_dask(X, y))
    assert list(dask.groups_) == list(memory.groups_) == [None]
    assert dask.dp_event_ == memory.dp_event_
    assert dask.dp_event_ == DPFERMIClassifier(**kw).privacy_plan(
        len(y), X.shape[1], n_groups=1
    ).dp_event


def test_options_that_read_the_whole_set_are_refused(dask_client, small):
    X, y, s, _ = small
    Xd, yd, sd = _dask(X, y, s)
    for kw, what in (
        (dict(disparity_bound=0.05), "disparity_bound"),
        (dict(record_training_loss=True), "record_training_loss"),
    ):
        with pytest.raises(ValueError, match=what):
            DPFERMIClassifier(groups=[0, 1], **kw).fit(Xd, yd, sensitive_features=sd)
    bad = s.astype(object)
    bad[2000] = None
    with pytest.raises(ValueError, match="missing values"):
        DPFERMIClassifier(classes=[0, 1], groups=[0, 1]).fit(
            Xd, yd, sensitive_features=_dask(bad)[0]
        )
    with pytest.raises(ValueError, match="not in the declared"):
        DPFERMIClassifier(classes=[0, 1], groups=[0, 2]).fit(
            Xd, yd, sensitive_features=sd
        )


def test_a_planned_intercept_only_fit_releases_the_histogram(dask_client, small):
    # 3000 * 0.01 < 15 * 6: small_budget="auto" plans the intercept-only
    # release; the workers count the classes, the driver makes the release:
    # the in-memory fit's record, warning and (same seed, same draw) model.
    X, y, s, _ = small
    Xd, yd, sd = _dask(X, y, s)
    kw = dict(epsilon=0.01, classes=[0, 1], groups=[0, 1], max_iter=1, random_state=0)
    with pytest.warns(UserWarning, match="intercept-only"):
        dask = DPFERMIClassifier(**kw).fit(Xd, yd, sensitive_features=sd)
    with pytest.warns(UserWarning, match="intercept-only"):
        memory = DPFERMIClassifier(**kw).fit(X, y, sensitive_features=s)
    assert dask.intercept_only_ and not np.any(dask.coef_)
    assert dask.privacy_record_ == memory.privacy_record_
    # Integer counts, the same noise draw: the same intercepts.
    np.testing.assert_allclose(dask.intercept_, memory.intercept_, rtol=1e-12)
    assert dask.privacy_plan(3000, X.shape[1]).dp_event == dask.dp_event_
    est = DPFERMIClassifier(small_budget="fit", **kw).fit(Xd, yd, sensitive_features=sd)
    assert est.intercept_only_ is False


def test_fermi_classifier_refuses_dask_input(small):
    # No client needed: the refusal comes before any computation.
    X, y, s, _ = small
    Xd, sd = _dask(X, s)
    with pytest.raises(TypeError, match="FERMIClassifier does not accept Dask"):
        FERMIClassifier().fit(Xd, y, sensitive_features=s)
    with pytest.raises(TypeError, match="sensitive_features"):
        FERMIClassifier().fit(X, y, sensitive_features=sd)


def test_partition_sums_within_both_clip_norms(small):
    # Every partition's clipped sums move by at most the clip norm when one
    # record (here a huge one) is removed: primal C, dual C_w.
    X, y, s, _ = small
    X = X.copy()
    X[5] = [1e300, -1e300, 1e200, 0.0, 3.0]
    reg = ERMIRegularizer(np.array([[0.5, 0.5]]), np.array([1.0]), 2)
    config = _FairStepConfig(
        model=LinearModel(2, 1.0),
        regularizer=reg,
        constraint=make_constraint("demographic_parity"),
        fairness_weight=8.0,
        weight_scale=1.0,
        sampling_probability=1.0,
        clip_norm=1.0,
        dual_clip_norm=0.5,
        entropy=1,
    )
    rng = np.random.default_rng(0)
    coef, w0 = rng.normal(size=(5, 2)), rng.normal(size=2)
    W = reg.project(np.abs(rng.normal(size=(1, 2, 2))))

    def sums(rows):
        part = _distributed._Partition(
            X=X[rows],
            y=y[rows].astype(float),
            weights=None,
            row_norms=LinearModel(1, 1.0).row_norms(X[rows]),
            codes=s[rows],
        )
        return partition_sgda_sums(part, coef, w0, W, config=config, rng=rng)

    rows = np.arange(50)
    for i in (0, 5, 17):
        full, less = sums(rows), sums(np.delete(rows, i))
        primal = np.sqrt(
            np.sum((full[0] - less[0]) ** 2) + np.sum((full[1] - less[1]) ** 2)
        )
        assert primal <= 1.0 + 1e-12
        assert np.sqrt(np.sum((full[2] - less[2]) ** 2)) <= 0.5 + 1e-12
        assert all(np.all(np.isfinite(a)) for a in full)


@pytest.mark.parametrize("fairness_weight", [0.0, 8.0])
def test_float32_partition_saturates_a_huge_weight_as_in_memory(fairness_weight):
    # A weight of 1e300 cast to float32 was inf: the record's term, no
    # longer finite, counted for nothing, where the in-memory loop
    # saturates it at float32's largest value (weights_in_dtype) and clips
    # it like any other huge term.
    rng = np.random.default_rng(0)
    n = 30
    X = rng.normal(size=(n, 3)).astype(np.float32)
    y = (X[:, 0] > 0).astype(np.float32)
    s = rng.integers(0, 2, size=n)
    reg = ERMIRegularizer(np.array([[0.5, 0.5]]), np.array([1.0]), 2)
    config = _FairStepConfig(
        model=LinearModel(2, 1.0),
        regularizer=reg if fairness_weight else None,
        constraint=make_constraint("demographic_parity"),
        fairness_weight=fairness_weight,
        weight_scale=1.0,
        sampling_probability=1.0,
        clip_norm=1.0,
        dual_clip_norm=0.5,
        entropy=1,
    )
    coef, w0 = np.full((3, 2), 0.1, dtype=np.float32), np.zeros(2, np.float32)
    W = np.zeros((1, 2, 2) if fairness_weight else (0, 0, 2), dtype=np.float32)

    def sums(rows, huge):
        w = np.ones(n)
        w[5] = huge
        part = _distributed._Partition(
            X=X[rows],
            y=y[rows],
            weights=w[rows],
            row_norms=LinearModel(1, 1.0).row_norms(X[rows]),
            codes=s[rows],
        )
        return partition_sgda_sums(part, coef, w0, W, config=config, rng=rng)

    rows = np.arange(n)
    largest = float(np.finfo(np.float32).max)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        saturated, given = sums(rows, largest), sums(rows, 1e300)
    for a, b in zip(saturated, given):
        np.testing.assert_array_equal(a, b)
    less = sums(np.delete(rows, 5), 1e300)
    moved = np.sqrt(
        np.sum((given[0] - less[0]) ** 2) + np.sum((given[1] - less[1]) ** 2)
    )
    assert 0.5 < moved <= 1.0 + 1e-5


def test_worker_loss_recovers_with_the_same_model_and_record(
    dask_client, small, monkeypatch
):
    # A worker killed between two steps: Dask recomputes its partitions and
    # re-runs the step; every partition's rows come from
    # SeedSequence(root, (p, t)), so the recovered fit is the undisturbed one.
    X, y, s, _ = small
    kw = dict(
        classes=[0, 1], groups=[0, 1], batch_size=600, max_iter=2, random_state=3
    )
    Xd, yd, sd = _dask(X, y, s, chunks=500)
    reference = DPFERMIClassifier(**kw).fit(Xd, yd, sensitive_features=sd)

    summed = fermi_dask.sum_over_partitions
    killed = []

    def kill_at_step_3(data, task, **kwargs):
        if kwargs.get("step") == 3 and not killed:
            who = dask_client.who_has([data.partitions[0]])
            holder = next(iter(who.values()))[0]
            pid = dask_client.run(os.getpid, workers=[holder])[holder]
            os.kill(pid, signal.SIGKILL)
            killed.append(holder)
        return summed(data, task, **kwargs)

    monkeypatch.setattr(fermi_dask, "sum_over_partitions", kill_at_step_3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        recovered = DPFERMIClassifier(**kw).fit(Xd, yd, sensitive_features=sd)
    assert killed
    np.testing.assert_allclose(recovered.coef_, reference.coef_, rtol=1e-12)
    np.testing.assert_allclose(recovered.dual_coef_, reference.dual_coef_, rtol=1e-12)
    assert recovered.privacy_record_ == reference.privacy_record_
    dask_client.wait_for_workers(2, timeout=30)


def test_intersectional_groups_from_several_columns(dask_client, small):
    # Two sensitive columns: the declared intersectional groups encode the
    # rows on the workers as in memory (same codes, so the same model).
    X, y, s, _ = small
    sf = np.column_stack([np.where(s == 1, "F", "M"), np.where(X[:, 3] > 0, "a", "b")])
    sf = sf.astype(object)
    groups = [("F", "a"), ("F", "b"), ("M", "a"), ("M", "b")]
    kw = dict(
        epsilon=np.inf, noise_multiplier=0.0, batch_size="full", max_iter=3,
        classes=[0, 1], groups=groups, clip_norm=1.0,
    )
    memory = DPFERMIClassifier(**kw).fit(X, y, sensitive_features=sf)
    Xd, yd, sfd = _dask(X, y, sf)
    dask = DPFERMIClassifier(**kw).fit(Xd, yd, sensitive_features=sfd)
    np.testing.assert_allclose(dask.coef_, memory.coef_, rtol=0, atol=1e-10)
    np.testing.assert_allclose(dask.dual_coef_, memory.dual_coef_, rtol=0, atol=1e-10)
    assert [tuple(g) for g in dask.groups_] == groups
    with pytest.warns(PrivacyLeakWarning), pytest.raises(ValueError, match="declared"):
        DPFERMIClassifier(classes=[0, 1]).fit(Xd, yd, sensitive_features=sfd)


def test_float32_stays_float32(dask_client, small):
    X, y, s, _ = small
    Xd, yd, sd = _dask(X.astype(np.float32), y, s)
    clf = DPFERMIClassifier(classes=[0, 1], groups=[0, 1], max_iter=1, random_state=0)
    clf.fit(Xd, yd, sensitive_features=sd)
    assert clf.coef_.dtype == clf.intercept_.dtype == np.float32
    assert np.all(np.isfinite(clf.coef_))


def test_verbose_prints_about_one_line_per_epoch_and_changes_nothing(
    dask_client, small, capsys
):
    X, y, s, _ = small
    Xd, yd, sd = _dask(X, y, s)
    kw = dict(classes=[0, 1], groups=[0, 1], max_iter=3, random_state=0)
    quiet = DPFERMIClassifier(**kw).fit(Xd, yd, sensitive_features=sd)
    assert capsys.readouterr().out == ""
    loud = DPFERMIClassifier(verbose=1, **kw).fit(Xd, yd, sensitive_features=sd)
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == [
        f"[DPFERMIClassifier] epoch {e}" for e in (1, 2, 3)
    ]
    # Printing reads released quantities only: the same seeded fit.
    np.testing.assert_allclose(loud.coef_, quiet.coef_, rtol=1e-12, atol=1e-15)


def test_a_planned_private_choice_is_made(dask_client, small):
    # Between 15 records of n * epsilon per parameter and n * epsilon = 2500,
    # "auto" trains the model, then compares it privately with the
    # constants: the in-memory fit's record, from the workers' counts.
    X, y, s, _ = small
    Xd, yd, sd = _dask(X, y, s)
    n_params = X.shape[1] + 1
    epsilon = 50 * n_params / X.shape[0]
    kw = dict(epsilon=epsilon, classes=[0, 1], groups=[0, 1], max_iter=1, random_state=0)
    dask = DPFERMIClassifier(**kw).fit(Xd, yd, sensitive_features=sd)
    memory = DPFERMIClassifier(**kw).fit(X, y, sensitive_features=s)
    assert dask.constant_comparison_.shape == (2,)
    assert dask.choice_noise_multiplier_ == memory.choice_noise_multiplier_ > 0
    assert dask.privacy_record_ == memory.privacy_record_
    assert dask.privacy_plan(3000, X.shape[1]).dp_event == dask.dp_event_
    # Labels a function of the features: the trained model beats the
    # constants by far, and is kept.
    assert not dask.intercept_only_ and np.max(dask.constant_comparison_) < 0
    est = DPFERMIClassifier(small_budget="fit", **kw).fit(Xd, yd, sensitive_features=sd)
    assert est.constant_comparison_ is None
    # "choose" where "auto" releases the constant outright (10 records of
    # n * epsilon per parameter): the model and the choice, as in memory.
    kw.update(epsilon=10 * n_params / X.shape[0], small_budget="choose")
    dask = DPFERMIClassifier(**kw).fit(Xd, yd, sensitive_features=sd)
    memory = DPFERMIClassifier(**kw).fit(X, y, sensitive_features=s)
    assert dask.t_ > 0 and dask.constant_comparison_.shape == (2,)
    assert dask.privacy_record_ == memory.privacy_record_
    assert dask.privacy_plan(3000, X.shape[1]).dp_event == dask.dp_event_


@pytest.mark.parametrize("missing", [None, np.nan])
def test_a_missing_sensitive_value_raises_as_in_memory(dask_client, small, missing):
    # Read with the group set (distinct values per block, never sorted):
    # da.unique of labels mixed with None failed with a TypeError naming no
    # argument.
    X, y, s, _ = small
    sf = np.where(s == 1, "F", "M").astype(object)
    sf[5] = missing
    kw = dict(epsilon=1.0, classes=[0, 1], random_state=0, max_iter=1)
    with pytest.raises(ValueError) as in_memory, warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        DPFERMIClassifier(**kw).fit(X, y, sensitive_features=sf)
    with pytest.raises(ValueError) as on_dask, warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        Xd, yd, sfd = _dask(X, y, sf)
        DPFERMIClassifier(**kw).fit(Xd, yd, sensitive_features=sfd)
    assert str(on_dask.value) == str(in_memory.value)
    assert "sensitive_features has missing values" in str(on_dask.value)


def test_inferred_groups_of_mixed_types_are_those_in_memory(dask_client, small):
    # Labels that do not sort keep their order of appearance, as in memory;
    # da.unique sorted them and failed with a TypeError.
    X, y, s, _ = small
    sf = np.array([1 if v else "b" for v in s], dtype=object)
    kw = dict(classes=[0, 1], epsilon=np.inf, batch_size="full", max_iter=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        memory = DPFERMIClassifier(**kw).fit(X, y, sensitive_features=sf)
        Xd, yd, sfd = _dask(X, y, sf)
        on_dask = DPFERMIClassifier(**kw).fit(Xd, yd, sensitive_features=sfd)
    first, other = sf[0], sf[s != s[0]][0]
    assert on_dask.groups_.tolist() == memory.groups_.tolist() == [first, other]


def _offset_and_tiny_unit_columns(n=600):
    # A column near 500 in units of 100, one in units of 0.01, and a group
    # correlated with the first (so that a fairness weight moves the model).
    rng = np.random.default_rng(0)
    Z = rng.standard_normal((n, 3))
    y = (rng.random(n) < 1 / (1 + np.exp(-(Z @ [1.0, -0.8, 0.6])))).astype(int)
    s = (Z[:, 0] + Z[:, 2] > 0).astype(int)
    return Z[:, :2] * [100.0, 0.01] + [500.0, 0.0], y, s, rng.uniform(0.2, 3.0, n)


def _fair_objective(clf, X, y, s, alpha, weight, w=None):
    """The documented objective: mean (weighted) log-loss, the binary
    layout's alpha/4 ||coef_||^2 and the weight times the soft ERMI."""
    from sklearn_dpfair.metrics import ermi_score

    z = X @ clf.coef_.ravel() + clf.intercept_[0]
    loss = np.average(np.logaddexp(0.0, z) - y * z, weights=w)
    ermi = ermi_score(None, y_proba=clf.predict_proba(X), sensitive_features=s)
    return loss + 0.25 * alpha * np.sum(clf.coef_**2) + weight * ermi


@pytest.mark.parametrize("weight, weighted", [(0.0, False), (8.0, True)])
def test_non_private_limit_penalizes_the_coefficients_in_user_units(
    dask_client, weight, weighted
):
    # alpha's penalty is on the model in the user's units; the noiseless
    # steps run on the exactly standardized columns, where it is alpha /
    # scale_j^2 on coefficient j. Penalizing the standardized coefficients
    # gave the column in units of 0.01 a coefficient 260 times too large
    # (objective 12.7 against the in-memory limit's 0.606 at n = 4000).
    # Full batches: deterministic, 30 steps to within 2e-5 of the in-memory
    # minimum (the first coefficient, which the group shrinks to ~1e-3,
    # is the least determined: only the small-unit one is compared).
    X, y, s, w = _offset_and_tiny_unit_columns()
    w = w if weighted else None
    alpha = 1e-2
    kw = dict(
        epsilon=np.inf, alpha=alpha, fairness_weight=weight, classes=[0, 1],
        groups=[0, 1], random_state=0,
    )
    memory = DPFERMIClassifier(**kw).fit(X, y, sample_weight=w, sensitive_features=s)
    Xd, yd, sd = _dask(X, y, s, chunks=300)
    wd = None if w is None else _dask(w, chunks=300)[0]
    clf = DPFERMIClassifier(batch_size="full", max_iter=30, **kw).fit(
        Xd, yd, sample_weight=wd, sensitive_features=sd
    )
    best = _fair_objective(memory, X, y, s, alpha, weight, w)
    assert _fair_objective(clf, X, y, s, alpha, weight, w) <= best + 2e-4
    np.testing.assert_allclose(clf.coef_[0, 1], memory.coef_[0, 1], rtol=0.02)


def test_non_private_limit_on_declared_bounds_penalizes_user_units(dask_client):
    # The same with the columns mapped by feature_bounds: the small-unit
    # column's coefficient is that of the penalty on the user's model.
    X, y, s, _ = _offset_and_tiny_unit_columns()
    kw = dict(epsilon=np.inf, alpha=1e-2, classes=[0, 1], groups=[0, 1])
    memory = DPFERMIClassifier(**kw).fit(X, y, sensitive_features=s)
    clf = DPFERMIClassifier(
        batch_size="full", max_iter=20, random_state=0, feature_scaling="auto",
        feature_bounds=[(200.0, 800.0), (-0.05, 0.05)], **kw,
    )
    Xd, yd, sd = _dask(X, y, s, chunks=300)
    clf.fit(Xd, yd, sensitive_features=sd)
    np.testing.assert_allclose(clf.coef_[0, 1], memory.coef_[0, 1], rtol=0.05)


def test_non_private_limit_clips_nothing(dask_client):
    # Nothing is released at epsilon=inf, so nothing is clipped, as in
    # DP-SGD's limit on Dask: with no full-batch phase to finish the fit, a
    # clip of 0.01 left the steps at log-loss 0.659 against 0.529.
    X, y, s, _ = _offset_and_tiny_unit_columns()
    Xd, yd, sd = _dask(X, y, s, chunks=300)
    fits = [
        DPFERMIClassifier(
            epsilon=np.inf, clip_norm=clip, classes=[0, 1], groups=[0, 1],
            batch_size="full", max_iter=5, random_state=0,
        ).fit(Xd, yd, sensitive_features=sd)
        for clip in (0.01, 1e6)
    ]
    np.testing.assert_allclose(fits[0].coef_, fits[1].coef_, rtol=1e-12)
    assert fits[0].privacy_record_.clip_norm == np.inf
    assert "no clipping" in fits[0].privacy_record_.mechanism


def test_a_ledger_that_cannot_record_refuses_before_the_first_release(
    dask_client, small, capsys
):
    # As in memory: the refusal comes before any partition round, so no
    # noisy step is released (or printed by verbose=) outside the ledger.
    X, y, s, _ = small
    Xd, yd, sd = _dask(X, y, s)
    est = DPFERMIClassifier(
        classes=[0, 1],
        groups=[0, 1],
        max_iter=3,
        verbose=1,
        accountant=RefusingLedger(),
    )
    releases = Releases()
    with observe_privatize(releases):
        with pytest.raises(PrivacyAccountingError, match="refuses the fit"):
            est.fit(Xd, yd, sensitive_features=sd)
    assert releases.seen == []
    assert capsys.readouterr().out == ""


def test_inferred_groups_are_named_by_position_as_in_memory(dask_client, small):
    # A group set read from the private data is not printed by the
    # min_group_size warning (positions in groups_), as in memory.
    X, y, s, _ = small
    sf = np.where(s == 0, "Zq-secret", "b")
    kw = dict(classes=[0, 1], epsilon=1.0, min_group_size=10_000, random_state=0)
    texts = []
    for data in ((X, y, sf), _dask(X, y, sf)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            DPFERMIClassifier(**kw).fit(data[0], data[1], sensitive_features=data[2])
        texts.append(
            [str(w.message) for w in caught if "min_group_size" in str(w.message)]
        )
    for small_warnings in texts:
        assert len(small_warnings) == 1
        assert "groups_[" in small_warnings[0]
        assert "Zq-secret" not in small_warnings[0]
