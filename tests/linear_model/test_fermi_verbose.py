"""verbose= of the FERMI estimators: one line an SGDA epoch, released values only."""

import numpy as np
import pytest

from sklearn_dpfair import DPFERMIClassifier, FERMIClassifier


def _data(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 3)) + s[:, None]
    y = (X[:, 0] > 0.5).astype(int)
    return X, y, s


@pytest.mark.parametrize(
    "est",
    [
        FERMIClassifier(max_iter=3, random_state=0),
        DPFERMIClassifier(max_iter=3, classes=[0, 1], groups=[0, 1], random_state=0),
    ],
    ids=["FERMIClassifier", "DPFERMIClassifier"],
)
def test_one_line_per_epoch_and_same_model(est, capsys):
    X, y, s = _data()
    quiet = est.fit(X, y, sensitive_features=s).coef_.copy()
    assert capsys.readouterr().out == ""
    loud = est.set_params(verbose=1).fit(X, y, sensitive_features=s).coef_
    lines = capsys.readouterr().out.splitlines()
    name = type(est).__name__
    assert [line.split(":")[0] for line in lines] == [
        f"[{name}] epoch {k}" for k in (1, 2, 3)
    ]
    assert all("released-gradient norm" in line for line in lines)
    # Printing reads released values only: the fit is unchanged.
    np.testing.assert_array_equal(loud, quiet)
