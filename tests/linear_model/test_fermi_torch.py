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

Torch (CPU here; CUDA where visible): for the same seed both backends draw
the same batches and noise on the host, spend the identical epsilon and
return coefficients equal up to round-off (``atol=1e-10`` in float64).
"""

import sys
import warnings

import numpy as np
import pytest
import sklearn

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
        {"batch_size": 128, "max_iter": 4, "fairness_weight": 4.0, "random_state": 0},
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
        },
    ),
}

# Recorded with the numpy-only loop (see the module docstring).
_GOLDEN = {
    "dp_binary_dp": {
        "coef_": [
            [
                -0.35067684150317535,
                0.3262646796310603,
                0.29110373172482606,
                -0.05062645883779278,
            ]
        ],
        "dual_coef_": [
            [0.5144058458092038, 0.48832689758448083],
            [0.5012555637756454, 0.5266957308616041],
            [0.4550495431400641, 0.6474987699218056],
        ],
        "intercept_": [0.7395854648654989],
    },
    "dp_eo_three_curves": {
        "coef_": [
            [
                0.1934887764465304,
                0.34927435928931816,
                -0.04242788233702736,
                0.2636237045349661,
            ],
            [
                -0.1464840181497508,
                -0.5439623765719722,
                -0.16535432975075037,
                -0.3180272651673059,
            ],
            [
                -0.0651238184982567,
                0.03429480049226327,
                0.26600058031707163,
                0.19148533543892762,
            ],
        ],
        "dual_coef_": [
            [
                [0.0715828718308886, 0.04301841820312495, 0.05415084082256839],
                [0.13900705523679074, 0.04256427202211793, 0.08976772705207793],
            ],
            [
                [0.04922553476276406, 0.08391530563216817, 0.0558367300462689],
                [0.017125958790728733, 0.014957381189681037, 0.01657185001226772],
            ],
            [
                [0.04784642714832977, 0.042268346642165215, 0.048751949941182565],
                [0.0675382352163986, 0.025787904256937447, 0.0520114958858273],
            ],
        ],
        "fairness_curve_": [
            0.012212809116369166,
            0.020965284346149006,
            0.030915124942893696,
        ],
        "intercept_": [
            -0.07925845841493333,
            0.015065140204093752,
            0.010903408680204103,
        ],
        "loss_curve_": [0.9479932790330639, 0.8521555700475636, 0.839352105604726],
    },
    "dp_eopp_public_f32": {
        "coef_": [
            [
                -0.6402311325073242,
                -0.8328644633293152,
                -0.6473957896232605,
                -0.00911158137023449,
            ]
        ],
        "dual_coef_": [
            [0.1940704943517122, 0.3085126296253557],
            [0.08655100957545683, 0.07353201688567369],
        ],
        "intercept_": [0.0],
    },
    "fermi_binary": {
        "coef_": [
            [
                -0.2640639470173526,
                1.3930167303014378,
                0.6531717291411299,
                -1.465004207674792,
            ]
        ],
        "dual_coef_": [
            [0.6648033395191193, 0.5989049018074921],
            [0.5439198216984986, 0.6411649125536218],
        ],
        "fairness_curve_": [
            0.00977886856180632,
            0.007934001759222209,
            0.004548314656878771,
            0.0020141009616105876,
        ],
        "intercept_": [0.12634666011004286],
        "loss_curve_": [
            0.5068578682890903,
            0.39618775203037626,
            0.3798546455643021,
            0.41556535689035207,
        ],
    },
    "fermi_eo_exact_full": {
        "coef_": [
            [
                0.772450838847645,
                -0.30276431895372125,
                0.130733156066892,
                -0.5044020103673954,
            ],
            [
                -0.554873819479361,
                -0.07955630290046807,
                0.24920577812002895,
                -0.787791004209766,
            ],
            [
                -0.21757701936828397,
                0.38232062185418947,
                -0.37993893418692104,
                1.2921930145771614,
            ],
        ],
        "dual_coef_": [
            [
                [0.5943142976123185, 0.7916323652589295, 0.5065043669952463],
                [0.5968484330664203, 0.7054596032998464, 0.5876867345516888],
                [0.5392204355119941, 0.19537658786886386, 0.6474104437167498],
            ],
            [
                [0.8499466595959813, 0.8814436971232427, 0.8811459468451981],
                [0.48987965824925456, 0.4443334838892084, 0.47282097519507715],
                [0.20581366385571304, 0.16217805372618294, 0.07386674840291421],
            ],
            [
                [0.3801134062302549, 0.9131447530677281, 0.42634852173111404],
                [0.6153248793617835, 0.7552031676172389, 0.5353960349818973],
                [0.6958574413376762, 0.2498780855794025, 0.7300777728398632],
            ],
        ],
        "fairness_curve_": [
            0.0,
            0.14132646671639826,
            0.048095470807677156,
            0.06061312827171291,
            0.029648720176481704,
            0.057601529970853826,
            0.02182845775427103,
            0.034051079946517945,
            0.02013996612773351,
            0.0270494533364109,
            0.02002313736686839,
            0.023957979473841255,
            0.020627867218797245,
            0.022842440210722396,
            0.02139424929534002,
        ],
        "intercept_": [-0.10489216141757726, -0.33355479259982834, 0.4384469540174068],
        "loss_curve_": [
            1.0986122886681096,
            0.7616534253949657,
            0.6093810951977031,
            0.5763317484638151,
            0.6047155812101984,
            0.589830033357977,
            0.5521743863164529,
            0.527564106728716,
            0.5249735184121734,
            0.5047831242181083,
            0.5054768764185351,
            0.49224786592012965,
            0.49315688391119483,
            0.48540197277649794,
            0.4854924948775178,
        ],
    },
    "fermi_missing_clipped_f32": {
        "coef_": [
            [
                -0.7262133955955505,
                -0.12020425498485565,
                -0.4899477958679199,
                0.10266740620136261,
            ],
            [
                0.5633955597877502,
                -0.0916549414396286,
                0.7231461405754089,
                -0.6418002843856812,
            ],
            [
                0.16281795501708984,
                0.21185918152332306,
                -0.23319841921329498,
                0.5391330122947693,
            ],
        ],
        "dual_coef_": [
            [0.13646625382225763, 0.15763556449194485, 0.12076298975971901],
            [0.05465710708972106, 0.150583034095367, 0.11557085294040055],
        ],
        "fairness_curve_": [
            0.018736499630294005,
            0.039697696326229166,
            0.062245449522243944,
        ],
        "intercept_": [
            -0.008102625608444214,
            0.020913001149892807,
            -0.01281038299202919,
        ],
        "loss_curve_": [0.9555483068626441, 0.8476795994378383, 0.8603445319590426],
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
    rtol = 1e-9 if est.coef_.dtype == np.float64 else 1e-5
    for attr, expected in _GOLDEN[name].items():
        got = np.asarray(getattr(est, attr))
        assert got.shape == np.shape(expected), attr
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=1e-12, err_msg=attr)
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


@pytest.fixture
def dispatch(monkeypatch):
    # scikit-learn refuses dispatch unless scipy's flag is set; the solver
    # never hands non-numpy arrays to scipy.
    monkeypatch.setenv("SCIPY_ARRAY_API", "1")
    with sklearn.config_context(array_api_dispatch=True):
        yield


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
