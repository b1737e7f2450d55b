# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Neighbouring datasets for the fits that map columns by public feature_bounds.

The full-batch solvers (dp-newton, output perturbation, Frank-Wolfe) and
the federated fits (silos) map every column by the midpoint and half-width
of declared ``feature_bounds`` before their public clips; the map is affine,
not a clip, so a record far outside the bounds (up to the largest float)
becomes a huge scaled row. The checks of ``test_neighbours_property`` (same
ending, finite release, same record, the first release within its
sensitivity, same warnings) are run on those worlds: every per-example term
stays within its bound whatever the record holds. The half-width 1e-3 of the
first column makes the map overflow on a huge record (rounded to the
largest float, then clipped).
"""

import pytest

from sklearn_dpfair import DPFERMIClassifier, DPLogisticRegression, DPMLPClassifier
from test_neighbours_property import (
    _FERMI,
    _NEWTON,
    _OP,
    _SGD,
    NEIGHBOUR_CHECKS,
    RAW_SCENARIO,
    SCENARIOS,
    Config,
    neighbour_findings,
)

BOUNDS = dict(feature_scaling="auto", feature_bounds=[(-1e-3, 1e-3), (-1.0, 1.0)])
_FW = dict(
    solver="dp-frank-wolfe", epsilon=8.0, l1_radius=5.0, feature_inf_bound=1.0,
    fw_steps=10,
)


def _lr(**kw):
    return lambda: DPLogisticRegression(random_state=0, classes=[0, 1], **BOUNDS, **kw)


CONFIGS = [
    # Central DP-SGD, the network and DP-FERMI map by the same FeatureScaling.
    Config("lr-dpsgd-bounds", _lr(**_SGD), "binary", "add_remove", first_release=2),
    Config(
        "mlp-bounds",
        lambda: DPMLPClassifier((4,), classes=[0, 1], random_state=0, **BOUNDS, **_SGD),
        "binary",
        "add_remove",
        first_release=4,
    ),
    Config(
        "dpfermi-bounds",
        lambda: DPFERMIClassifier(
            classes=[0, 1], groups=[0, 1], group_marginals=[0.5, 0.5],
            dual_clip_norm=2.0, **BOUNDS, **_FERMI,
        ),
        "binary",
        "add_remove",
        per_record="sensitive_features",
        first_release=3,
    ),
    Config("lr-outpert-bounds", _lr(**_OP), "binary", "replace_one"),
    Config("lr-fw-bounds", _lr(**_FW), "binary", "add_remove"),
    Config("lr-newton-bounds", _lr(**_NEWTON), "binary", "add_remove", first_release=2),
    Config(
        "lr-silos-bounds", _lr(**_SGD), "binary", "add_remove",
        per_record="silos", first_release=2,
    ),
    Config(
        "mlp-silos-bounds",
        lambda: DPMLPClassifier((4,), classes=[0, 1], random_state=0, **BOUNDS, **_SGD),
        "binary",
        "add_remove",
        per_record="silos",
        first_release=4,
    ),
]

NAMED = {
    name: SCENARIOS[name]
    for name in ("huge-record", "huge-vs-huge", "square-overflows", "raw-scale-huge-record")
}
NAMED["raw-scale"] = RAW_SCENARIO


@pytest.mark.parametrize("scenario", NAMED.values(), ids=list(NAMED))
@pytest.mark.parametrize("config", CONFIGS, ids=[c.name for c in CONFIGS])
def test_bounded_fit_keeps_every_term_within_its_bound(config, scenario):
    outcomes, found = neighbour_findings(config, scenario)
    failed = [f"  [{check}] {m}" for check in NEIGHBOUR_CHECKS for m in found[check]]
    assert not failed, f"{config.name}:\n" + "\n".join(failed)
    for tag, out in outcomes.items():
        assert out.error is None, f"{config.name} [{tag}]: {out.error}"
