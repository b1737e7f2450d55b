# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""FERMIClassifier and DPFERMIClassifier: golden values and the torch backend.

Golden values: coefficients, intercepts, dual matrices (and curves) recorded
with the numpy-only SGDA loop, before it was rewritten against the array API.
The rewrite keeps the numpy path bit-for-bit identical on the reference
machine (checked with SHA-256 of the fitted arrays when the values were
recorded); the tolerance only allows another CPU's BLAS to sum in another
order. A change of the random stream (batch or noise order) or of the update
moves the values by far more. Every private configuration passes
``noise_multiplier`` explicitly (with ``epsilon=inf``), so the values pin the
solver, not the calibration.

Re-recorded once, when Poisson batches came to be drawn through geometric
gaps (a new random stream, same distribution); with the old sampler, the
rewritten fused dual norms and one-scatter dual sums still matched the old
values at ``rtol=1e-9``. The configurations with a dual clip norm or dual
noise were re-recorded again when the dual's release became the clipped
cell sums of the predictions (the same noise draws, a new update).

Torch (CPU here; CUDA where visible): for the same seed both backends draw
the same batches and noise on the host, spend the identical epsilon and
return coefficients equal up to round-off (``atol=1e-10`` in float64).
"""

import sys
import warnings

import numpy as np
import pytest
import sklearn
from namespace_prediction import check_prediction_follows_input
from sklearn.exceptions import ConvergenceWarning

from sklearn_dpfair import DPFERMIClassifier, FERMIClassifier
from sklearn_dpfair.linear_model import _fermi
from sklearn_dpfair.privacy import epsilon_of


def _data(seed, n_classes, n_groups, dtype, missing=False, n=600, d=4):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, n_groups, n)
    X = rng.normal(size=(n, d)) + 0.8 * s[:, None]
    logits = X @ rng.normal(size=(d, n_classes))
    y = np.argmax(logits + rng.gumbel(size=logits.shape), axis=1)
    sens = s.astype(object)
    if missing:
        sens[rng.random(n) < 0.1] = None
    return X.astype(dtype), y, sens


# name: (estimator, data (seed, n_classes, n_groups, dtype[, missing]), params)
_CONFIGS = {
    "dp_binary_dp": (
        DPFERMIClassifier,
        (0, 2, 3, "float64"),
        {
            "epsilon": np.inf,
            "noise_multiplier": 1.0,
            "marginal_noise_multiplier": 20.0,
            "classes": [0, 1],
            "groups": [0, 1, 2],
            "batch_size": 100,
            "max_iter": 4,
            "fairness_weight": 8.0,
            "random_state": 0,
        },
    ),
    "dp_eo_three_curves": (
        DPFERMIClassifier,
        (1, 3, 2, "float64"),
        {
            "epsilon": np.inf,
            "noise_multiplier": 0.7,
            "marginal_noise_multiplier": 5.0,
            "constraint": "equalized_odds",
            "classes": [0, 1, 2],
            "groups": [0, 1],
            "batch_size": 150,
            "max_iter": 3,
            "dual_clip_norm": 0.5,
            "alpha": 0.01,
            "record_training_loss": True,
            "random_state": 3,
            # Golden values of the solver with every cell in the penalty.
            "min_group_size": 0,
        },
    ),
    "dp_eopp_public_f32": (
        DPFERMIClassifier,
        (2, 2, 2, "float32"),
        {
            "epsilon": np.inf,
            "noise_multiplier": 1.5,
            "constraint": "equal_opportunity",
            "classes": [0, 1],
            "groups": [0, 1],
            "group_marginals": [[0.3, 0.2], [0.25, 0.25]],
            "fit_intercept": False,
            "return_iterate": "last",
            "dual_projection": None,
            "dual_clip_norm": 1.0,
            "batch_size": 120,
            "max_iter": 3,
            "random_state": 5,
        },
    ),
    "fermi_binary": (
        FERMIClassifier,
        (3, 2, 2, "float64"),
        # The SGDA loop alone (golden values of the loop; no full-batch phase).
        {
            "batch_size": 128,
            "max_iter": 4,
            "fairness_weight": 4.0,
            "random_state": 0,
            "full_batch_phase": None,
        },
    ),
    "fermi_eo_exact_full": (
        FERMIClassifier,
        (4, 3, 3, "float64"),
        {
            "constraint": "equalized_odds",
            "batch_size": "full",
            "dual_update": "exact",
            "max_iter": 15,
            "fairness_weight": 2.0,
            "random_state": 1,
            "full_batch_phase": None,
            # Golden values of the solver with every cell in the penalty.
            "min_group_size": 0,
        },
    ),
    "fermi_missing_clipped_f32": (
        FERMIClassifier,
        (5, 3, 2, "float32", True),
        {
            "clip_norm": 1.0,
            "dual_clip_norm": 0.3,
            "alpha": 0.01,
            "batch_size": 100,
            "max_iter": 3,
            "return_iterate": "last",
            "random_state": 2,
            "full_batch_phase": None,
        },
    ),
}

# Recorded with the numpy-only loop (see the module docstring).
_GOLDEN = {
    "dp_binary_dp": {
        "coef_": [
            [
                -0.3096552517688852,
                0.39508733434746324,
                0.19879549842933866,
                0.017945667419753043
            ]
        ],
        "dual_coef_": [
            [
                0.5240733889546605,
                0.5293589394623626
            ],
            [
                0.4688519259904119,
                0.5123826159245423
            ],
            [
                0.4622718828566817,
                0.6191312869477494
            ]
        ],
        "intercept_": [
            0.659476647154261
        ],
    },
    "dp_eo_three_curves": {
        "coef_": [
            [
                0.13121139702553192,
                0.3245761849487842,
                -0.11139873177954081,
                0.19464701766646578
            ],
            [
                0.02824337709366981,
                -0.47362026730337736,
                -0.1312501080896657,
                -0.2518339530975942
            ],
            [
                -0.11931238617640237,
                0.13078710119625309,
                0.15213220544727443,
                0.09531773822400935
            ]
        ],
        "dual_coef_": [
            [
                [
                    0.18495779568340107,
                    0.12713285485894754,
                    0.14794934945448796
                ],
                [
                    0.3078789459228711,
                    0.12943318252100983,
                    0.2189319040433362
                ]
            ],
            [
                [
                    0.11197921593523372,
                    0.16689991362066744,
                    0.11788925540249962
                ],
                [
                    0.07257015388315717,
                    0.07235951236836537,
                    0.0693486479396177
                ]
            ],
            [
                [
                    0.12311881897658976,
                    0.11839314336972727,
                    0.12584545194178562
                ],
                [
                    0.15476984420232587,
                    0.07884571114500874,
                    0.1270727696687058
                ]
            ]
        ],
        "fairness_curve_": [
            0.008780796281032347,
            0.015971569820636543,
            0.011904978105684198
        ],
        "intercept_": [
            -0.06690720848370002,
            0.11147350577560093,
            -0.03993185354789427
        ],
        "loss_curve_": [
            0.9503313773369543,
            0.8680626318350069,
            0.8958378675754446
        ],
    },
    "dp_eopp_public_f32": {
        "coef_": [
            [
                -0.25343942642211914,
                -0.34934377670288086,
                -0.43947556614875793,
                0.17016452550888062
            ]
        ],
        "dual_coef_": [
            [
                0.44525966646810505,
                0.6483295376858299
            ],
            [
                0.22355085916915038,
                0.1829706642902922
            ]
        ],
        "intercept_": [
            0.0
        ],
    },
    "fermi_binary": {
        "coef_": [
            [
                -0.29669803174589904,
                1.3906963658456637,
                0.6288271559061984,
                -1.3899053645357105,
            ]
        ],
        "dual_coef_": [
            [0.6552893338302241, 0.5745925760208601],
            [0.5435779008838677, 0.6601132521111928],
        ],
        "fairness_curve_": [
            0.004364370499856163,
            0.00953142469449797,
            0.005677698057122038,
            0.007133444495769137,
        ],
        "intercept_": [0.05571973099052612],
        "loss_curve_": [
            0.484058039290149,
            0.4373552056614377,
            0.3789664511486297,
            0.3965755752409666,
        ],
    },
    "fermi_eo_exact_full": {
        "coef_": [
            [
                0.7724508388476452,
                -0.30276431895372136,
                0.13073315606689195,
                -0.5044020103673952,
            ],
            [
                -0.5548738194793613,
                -0.07955630290046828,
                0.24920577812002906,
                -0.7877910042097661,
            ],
            [
                -0.21757701936828383,
                0.38232062185418914,
                -0.3799389341869211,
                1.2921930145771616,
            ],
        ],
        "dual_coef_": [
            [
                [0.5943142976123187, 0.7916323652589298, 0.5065043669952469],
                [0.5968484330664203, 0.7054596032998467, 0.5876867345516895],
                [0.539220435511994, 0.1953765878688639, 0.6474104437167502],
            ],
            [
                [0.8499466595959815, 0.881443697123242, 0.8811459468451982],
                [0.48987965824925445, 0.4443334838892083, 0.4728209751950768],
                [0.20581366385571295, 0.16217805372618282, 0.07386674840291418],
            ],
            [
                [0.38011340623025497, 0.9131447530677282, 0.42634852173111426],
                [0.6153248793617839, 0.7552031676172384, 0.5353960349818971],
                [0.6958574413376761, 0.2498780855794024, 0.7300777728398632],
            ],
        ],
        "fairness_curve_": [
            0.0,
            0.14132646671639829,
            0.04809547080767719,
            0.06061312827171291,
            0.02964872017648174,
            0.05760152997085383,
            0.0218284577542709,
            0.034051079946518036,
            0.02013996612773354,
            0.02704945333641076,
            0.020023137366868393,
            0.023957979473841276,
            0.020627867218797245,
            0.0228424402107223,
            0.021394249295339965,
        ],
        "intercept_": [-0.1048921614175775, -0.33355479259982945, 0.43844695401740663],
        "loss_curve_": [
            1.0986122886681096,
            0.7616534253949656,
            0.6093810951977032,
            0.5763317484638151,
            0.6047155812101984,
            0.5898300333579769,
            0.552174386316453,
            0.5275641067287161,
            0.5249735184121735,
            0.5047831242181083,
            0.5054768764185351,
            0.49224786592012965,
            0.49315688391119483,
            0.48540197277649794,
            0.4854924948775177,
        ],
    },
    "fermi_missing_clipped_f32": {
        "coef_": [
            [
                -0.6658776998519897,
                -0.06397457420825958,
                -0.3171022832393646,
                0.233683243393898
            ],
            [
                0.4633392095565796,
                -0.07819375395774841,
                0.652479887008667,
                -0.6847267150878906
            ],
            [
                0.20253849029541016,
                0.1421683430671692,
                -0.33537763357162476,
                0.45104342699050903
            ]
        ],
        "dual_coef_": [
            [
                0.30762750811399847,
                0.3221043807986536,
                0.28490505337040256
            ],
            [
                0.18024268621384495,
                0.35427379968456507,
                0.2768779880793821
            ]
        ],
        "fairness_curve_": [
            0.012316211747666348,
            0.028789177281043275,
            0.022398676262455716
        ],
        "intercept_": [
            0.10478672385215759,
            -0.026199307292699814,
            -0.07858748733997345
        ],
        "loss_curve_": [
            0.9720116956734363,
            0.8898848566515692,
            0.8506534453361265
        ],
    },
}


def _fit(name, X=None, **extra):
    cls, data_args, params = _CONFIGS[name]
    X_np, y, s = _data(*data_args)
    with warnings.catch_warnings():
        # Inferred-label and floored-marginal warnings are tested elsewhere.
        warnings.simplefilter("ignore")
        return cls(**params, **extra).fit(
            X_np if X is None else X(X_np), y, sensitive_features=s
        )


@pytest.mark.parametrize("name", sorted(_CONFIGS))
def test_numpy_golden_values(name):
    est = _fit(name)
    float32 = est.coef_.dtype != np.float64
    rtol = 1e-5 if float32 else 1e-9
    for attr, expected in _GOLDEN[name].items():
        got = np.asarray(getattr(est, attr))
        assert got.shape == np.shape(expected), attr
        # float32 parameters round at the scale of the largest one: an entry
        # near 0 (an intercept of 1.6e-3 beside coefficients of 0.7) moves by
        # a few float32 ulps of that scale, not of itself.
        atol = 4 * np.finfo(np.float32).eps * np.max(np.abs(expected)) if float32 else 1e-12
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, err_msg=attr)
    assert isinstance(est.coef_, np.ndarray)
    assert isinstance(est.dual_coef_, np.ndarray)


def test_device_cpu_never_imports_torch_and_matches_default():
    default = _fit("fermi_binary")
    cpu = _fit("fermi_binary", device="cpu")
    np.testing.assert_array_equal(default.coef_, cpu.coef_)


@pytest.mark.parametrize("cls", [FERMIClassifier, DPFERMIClassifier])
def test_unknown_device_is_a_parameter_error(cls):
    X, y, s = _data(0, 2, 2, "float64")
    with pytest.raises(ValueError, match="device"):
        cls(device="gpu").fit(X, y, sensitive_features=s)


@pytest.mark.parametrize("cls", [FERMIClassifier, DPFERMIClassifier])
def test_cuda_without_torch_names_the_extra(cls, monkeypatch):
    for name in ("torch", "array_api_compat"):
        monkeypatch.setitem(sys.modules, name, None)
    X, y, s = _data(0, 2, 2, "float64")
    with pytest.raises(ImportError, match=r"sklearn-dpfair\[torch\]"):
        cls(device="cuda").fit(X, y, sensitive_features=s)


# -- torch ------------------------------------------------------------------


@pytest.fixture
def torch():
    torch = pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    # Small problems: torch's threads only add barrier waits on 2 cores.
    n_threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield torch
    torch.set_num_threads(n_threads)


@pytest.fixture
def torch_cpu_backend(torch, monkeypatch):
    """Make ``device="cuda"`` resolve to torch on the CPU, numpy outputs.

    The code path of a GPU fit without dispatch (numpy in, numpy out, the
    solver in torch), runnable on a machine without a GPU.
    """
    import array_api_compat.torch as xp_torch

    from sklearn_dpfair.utils._array_api import ArrayBackend, resolve_backend

    backend = ArrayBackend(xp_torch, torch.device("cpu"), np)

    def fake(X, device="cpu", **kwargs):
        return backend if device == "cuda" else resolve_backend(X, device, **kwargs)

    monkeypatch.setattr(_fermi, "resolve_backend", fake)
    return backend


def _assert_same_privacy(a, b):
    if isinstance(a, DPFERMIClassifier):
        assert a.epsilon_ == b.epsilon_
        assert a.dp_event_ == b.dp_event_
        assert a.noise_multiplier_ == b.noise_multiplier_
        np.testing.assert_array_equal(a.group_marginals_, b.group_marginals_)


@pytest.mark.parametrize("name", sorted(_CONFIGS))
def test_torch_cpu_matches_numpy(name, torch_cpu_backend):
    ref = _fit(name)
    est = _fit(name, device="cuda")  # torch on the CPU, see the fixture
    atol = 1e-10 if ref.coef_.dtype == np.float64 else 1e-4
    for attr in ("coef_", "intercept_", "dual_coef_"):
        got = getattr(est, attr)
        assert isinstance(got, np.ndarray), attr
        assert got.dtype == getattr(ref, attr).dtype, attr
        np.testing.assert_allclose(got, getattr(ref, attr), rtol=0, atol=atol)
    for attr in ("loss_curve_", "fairness_curve_"):
        if getattr(ref, attr) is not None:
            np.testing.assert_allclose(
                getattr(est, attr), getattr(ref, attr), rtol=1e-9, atol=atol
            )
    _assert_same_privacy(ref, est)
    np.testing.assert_array_equal(
        est.predict(_data(*_CONFIGS[name][1])[0]),
        ref.predict(_data(*_CONFIGS[name][1])[0]),
    )


@pytest.mark.parametrize("name", ["dp_eo_three_curves", "fermi_binary"])
def test_torch_tensors_under_dispatch(name, torch, dispatch):
    with sklearn.config_context(array_api_dispatch=False):
        ref = _fit(name)
    est = _fit(name, X=torch.from_numpy, device="auto")
    # scikit-learn's rule under dispatch: fitted arrays in X's namespace.
    assert isinstance(est.coef_, torch.Tensor)
    assert isinstance(est.dual_coef_, torch.Tensor)
    np.testing.assert_allclose(est.coef_.numpy(), ref.coef_, rtol=0, atol=1e-10)
    np.testing.assert_allclose(est.intercept_.numpy(), ref.intercept_, atol=1e-10)
    np.testing.assert_allclose(est.dual_coef_.numpy(), ref.dual_coef_, atol=1e-10)
    _assert_same_privacy(ref, est)
    X = torch.from_numpy(_data(*_CONFIGS[name][1])[0])
    np.testing.assert_array_equal(np.asarray(est.predict(X)), ref.predict(X.numpy()))


@pytest.mark.parametrize(
    "make",
    [
        lambda: FERMIClassifier(
            hidden_layer_sizes=(8,), max_iter=3, full_batch_phase=None
        ),
        lambda: DPFERMIClassifier(
            hidden_layer_sizes=(8,), epsilon=np.inf, classes=[0, 1],
            groups=[0, 1], max_iter=3,
        ),
    ],
    ids=["FERMIClassifier", "DPFERMIClassifier-inf"],
)
def test_non_private_network_on_torch_tensors_under_dispatch(make, torch, dispatch):
    # The non-private network standardizes its columns by their exact
    # moments, which numpy computed on the tensor (a crash whose message
    # printed the rows). The SGDA steps match numpy's; a full-batch L-BFGS
    # phase on a non-convex objective may stop elsewhere from a start
    # 1e-16 away, so there only the accuracy is compared.
    X, y, groups = _data(0, 2, 2, np.float64, n=300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # 3 epochs
        with sklearn.config_context(array_api_dispatch=False):
            ref = make().set_params(random_state=0)
            ref.fit(X, y, sensitive_features=groups)
        est = make().set_params(random_state=0)
        est.fit(torch.from_numpy(X), torch.from_numpy(y), sensitive_features=groups)
    proba = est.predict_proba(torch.from_numpy(X))
    assert isinstance(proba, torch.Tensor)
    if isinstance(est, FERMIClassifier) and not isinstance(est, DPFERMIClassifier):
        np.testing.assert_allclose(proba.numpy(), ref.predict_proba(X), atol=1e-10)
    else:
        accuracy = np.mean(np.argmax(proba.numpy(), axis=1) == y)
        assert accuracy > ref.score(X, y) - 0.05


def test_network_predicts_in_the_namespace_of_its_input(torch, dispatch):
    # A numpy-fitted network scores torch input in torch, and a torch-fitted
    # one numpy input in numpy (both raised "Multiple namespaces").
    X, y, groups = _data(0, 2, 2, np.float64, n=300)
    kw = {"hidden_layer_sizes": (4,), "max_iter": 2, "full_batch_phase": None,
          "random_state": 0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # 2 epochs
        with sklearn.config_context(array_api_dispatch=False):
            numpy_fit = FERMIClassifier(**kw).fit(X, y, sensitive_features=groups)
        torch_fit = FERMIClassifier(**kw).fit(
            torch.from_numpy(X), torch.from_numpy(y), sensitive_features=groups
        )
    check_prediction_follows_input(numpy_fit, torch_fit, X)


def test_epsilon_recomputed_from_event_on_torch(torch_cpu_backend):
    est = _fit("dp_binary_dp", device="cuda")
    assert np.isfinite(est.epsilon_)
    assert epsilon_of(est.dp_event_, est.delta_, est.accountant_) == est.epsilon_


@pytest.mark.parametrize("cls", [FERMIClassifier, DPFERMIClassifier])
def test_auto_without_gpu_is_the_numpy_fit(cls, torch):
    if torch.cuda.is_available():
        pytest.skip("a GPU is visible: 'auto' selects it")
    X, y, s = _data(0, 2, 2, "float64")
    params = {"random_state": 3, "max_iter": 2}
    if cls is DPFERMIClassifier:
        params.update(classes=[0, 1], groups=[0, 1])
    a = cls(**params, device="auto").fit(X, y, sensitive_features=s)
    b = cls(**params).fit(X, y, sensitive_features=s)
    np.testing.assert_array_equal(a.coef_, b.coef_)


@pytest.mark.parametrize("cls", [FERMIClassifier, DPFERMIClassifier])
def test_cuda_without_gpu_raises(cls, torch):
    if torch.cuda.is_available():
        pytest.skip("a GPU is visible")
    X, y, s = _data(0, 2, 2, "float64")
    with pytest.raises(ValueError, match="sees no CUDA device"):
        cls(device="cuda").fit(X, y, sensitive_features=s)


@pytest.mark.parametrize("name", ["dp_binary_dp", "fermi_eo_exact_full"])
def test_cuda_matches_numpy(name, torch):
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    ref = _fit(name)
    est = _fit(name, device="cuda")
    assert isinstance(est.coef_, np.ndarray)
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=0, atol=1e-10)
    np.testing.assert_allclose(est.dual_coef_, ref.dual_coef_, rtol=0, atol=1e-10)
    _assert_same_privacy(ref, est)


@pytest.mark.parametrize("cls", [FERMIClassifier, DPFERMIClassifier])
def test_sensitive_features_tensor_is_read_as_a_host_copy(cls, torch, dispatch):
    # numpy's implicit conversion refuses a tensor that requires grad (and
    # a CUDA tensor): sensitive_features is copied to the host explicitly.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    groups = (np.arange(200) % 2).astype(np.float64)
    params = {"max_iter": 2, "random_state": 0}
    if cls is DPFERMIClassifier:
        params.update(classes=[0, 1], groups=[0.0, 1.0])
    Xt, yt = torch.from_numpy(X), torch.from_numpy(y)
    ref = cls(**params).fit(Xt, yt, sensitive_features=groups)
    g_grad = torch.from_numpy(groups).requires_grad_()
    est = cls(**params).fit(Xt, yt, sensitive_features=g_grad)
    np.testing.assert_allclose(est.coef_.numpy(), ref.coef_.numpy(), rtol=1e-12)
    assert g_grad.grad is None
