"""SPIDER's difference rounds when the public clip ``c_r`` is too small to noise."""

import math
import warnings

import numpy as np

from sklearn_dpfair.federated._spider import SpiderSchedule
from sklearn_dpfair.neural import DPMLPClassifier
from sklearn_dpfair.privacy import GaussianMechanism, _mechanism


def test_a_clip_whose_noise_is_subnormal_releases_zero():
    # z2 c_r below the smallest normal float64: no such Gaussian can be
    # drawn, so every difference is clipped to 0 (a sum of 0, no noise).
    anchor = GaussianMechanism(1.0, 1.5)
    tiny = SpiderSchedule(period=4, smoothness=1e-310)
    mechanism = tiny.difference_mechanism(anchor, np.ones(2), np.zeros(2))
    assert mechanism.clip_norm == 0.0
    assert mechanism.noise_multiplier == 3.0
    # A usual smoothness keeps min(beta ||w_r - w_{r-1}||, 2C).
    usual = SpiderSchedule(period=4, smoothness=0.5)
    mechanism = usual.difference_mechanism(anchor, np.ones(2), np.zeros(2))
    assert mechanism.clip_norm == 0.5 * math.sqrt(2.0)
    # The non-private limit neither clips nor adds noise.
    free = GaussianMechanism(math.inf, 0.0)
    assert tiny.difference_mechanism(free, np.ones(2), np.zeros(2)).clip_norm == (
        math.inf
    )


def test_a_tiny_spider_smoothness_fits_and_logs_every_planned_release(monkeypatch):
    # It once failed mid-fit, after the first anchor releases, blaming
    # clip_norm. Every round still makes its one logged release.
    logged = []
    log_release = _mechanism.log_release

    def counted(kind, level):
        logged.append((kind, level))
        return log_release(kind, level)

    monkeypatch.setattr(_mechanism, "log_release", counted)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 3))
    y = (X[:, 0] > 0).astype(int)
    est = DPMLPClassifier(
        hidden_layer_sizes=(4,),
        classes=[0, 1],
        silo_algorithm="spider",
        spider_period=3,
        spider_smoothness=1e-310,
        max_iter=2,
        epsilon=2.0,
        delta=1e-4,
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y, silos=np.repeat(["a", "b", "c"], 200))
    assert est.epsilon_ <= 2.0
    assert all(np.isfinite(W).all() for W in est.coefs_)
    assert len(logged) == sum(est.silo_rounds_.values())
    # Each silo's releases are those its event composes: ceil(R / q) of z1
    # and the rest (the difference rounds, clipped to 0) of z2 = z1 sqrt(q).
    anchors, differences = SpiderSchedule(3, 1e-310).counts(est.silo_rounds_["a"])
    z1 = est.silo_noise_multiplier_["a"]
    assert logged.count(("gaussian", z1)) == 3 * anchors
    assert logged.count(("gaussian", z1 * math.sqrt(3))) == 3 * differences
