# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
import subprocess
import sys

import pytest

from sklearn_dpfair._cli import main
from sklearn_dpfair._demo import DEMO_ROWS, REFERENCE_ROWS


def test_demo_prints_a_row_per_model_and_budget(capsys):
    assert main(["demo", "--epsilon", "1", "--seed", "0"]) == 0
    out = capsys.readouterr().out
    assert "sklearn LogisticRegression (non-private)" in out
    for row in DEMO_ROWS + REFERENCE_ROWS:
        assert row.name in out
    n_jobs = len(DEMO_ROWS) + len(REFERENCE_ROWS)
    assert f"[{n_jobs}/{n_jobs}]" in out  # progress indication
    dp_line = next(line for line in out.splitlines() if line.startswith("DPLogistic"))
    accuracy = float(dp_line.split()[3])
    assert accuracy > 0.83


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
