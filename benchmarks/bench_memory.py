# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Peak memory of fitting every estimator on 1e6 x 100 data.

Target: the fit runs within twice the memory of its input, i.e. the peak
resident memory of the process, minus what it held before the data were
created, is at most 2 x ``X.nbytes`` (X float64, 800 MB at 1e6 x 100).

Each estimator runs in its own subprocess. After the data are built, the
kernel's peak counter is reset (``/proc/self/clear_refs``), so the peak
(``VmHWM``) covers the fit alone; it is compared with the resident memory
before the data existed. Linux only.

Writes ``docs/benchmarks/memory.rst``.

Usage: python benchmarks/bench_memory.py [--quick] [--rows 1000000] [--features 100]
"""

import argparse
import datetime
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from _adult import machine_description  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "..", "docs", "benchmarks")

_CHILD = r"""
import json, sys, time, warnings
warnings.simplefilter("ignore")

def status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
name, n, d = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
import numpy as np
from sklearn_dpfair.utils import all_estimators
from sklearn_dpfair.audit._synthetic import synthetic_inputs
cls = dict(all_estimators())[name]
est = cls()
if "random_state" in est.get_params():
    est.set_params(random_state=0)
before = status("VmRSS")
X, y, params, _ = synthetic_inputs(est, n_samples=n, n_features=d)
data_bytes = X.nbytes + y.nbytes + sum(np.asarray(v).nbytes for v in params.values())
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # reset VmHWM to the current RSS
start = time.perf_counter()
est.fit(X, y, **params)
seconds = time.perf_counter() - start
peak = status("VmHWM")
print(json.dumps({"before": before, "peak": peak, "x_bytes": X.nbytes,
                  "data_bytes": data_bytes, "seconds": seconds}))
"""


def run(name, n, d, timeout):
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _CHILD, name, str(n), str(d)],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout} s"}
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1][:150]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def write_rst(rows, n, d, wall):
    lines = [
        "Memory of a fit on 1e6 x 100 data",
        "=================================",
        "",
        f"Measured {datetime.date.today()} on {machine_description()}; "
        f"{n:,} rows x {d} features (float64), synthetic data from "
        "``sklearn_dpfair.audit._synthetic`` (seed 0), each estimator at its "
        "defaults in a fresh process. *peak above baseline* is the process's "
        "peak resident memory during ``fit`` (``VmHWM`` after resetting it once "
        "the data exist) minus its resident memory before the data were "
        "created; the target is at most 2 x the size of X. Fit times were "
        "measured while another benchmark used both cores, so they are "
        f"indicative only. Total wall time {wall / 60:.1f} min. Produced by "
        "``benchmarks/bench_memory.py``.",
        "",
        ".. list-table::",
        "   :header-rows: 1",
        "",
        "   * - estimator",
        "     - X size (MB)",
        "     - peak above baseline (MB)",
        "     - peak / X size",
        "     - within 2x",
        "     - fit time (s)",
    ]
    for name, r in rows:
        if "error" in r:
            lines += [
                f"   * - {name}",
                "     - ",
                f"     - failed: {r['error']}",
                "     - ",
                "     - no",
                "     - ",
            ]
            continue
        ratio = (r["peak"] - r["before"]) / r["x_bytes"]
        lines += [
            f"   * - {name}",
            f"     - {r['x_bytes'] / 1e6:.0f}",
            f"     - {(r['peak'] - r['before']) / 1e6:.0f}",
            f"     - {ratio:.2f}",
            f"     - {'yes' if ratio <= 2 else '**no**'}",
            f"     - {r['seconds']:.1f}",
        ]
    ok = [
        name
        for name, r in rows
        if "error" not in r and (r["peak"] - r["before"]) <= 2 * r["x_bytes"]
    ]
    missed = [name for name, _ in rows if name not in ok]
    lines += [
        "",
        f"Within 2x: {len(ok)} of {len(rows)} estimators. "
        + (f"Target missed by: {', '.join(missed)}." if missed else "No miss."),
        "",
    ]
    with open(os.path.join(OUT, "memory.rst"), "w") as fh:
        fh.write("\n".join(lines))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="1e4 x 10, no file")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--features", type=int, default=100)
    parser.add_argument("--timeout", type=int, default=900)
    args = parser.parse_args()
    n, d = (10_000, 10) if args.quick else (args.rows, args.features)
    from sklearn_dpfair.utils import all_estimators

    start = time.perf_counter()
    rows = []
    for name, _ in all_estimators():
        result = run(name, n, d, args.timeout)
        print(name, result, flush=True)
        rows.append((name, result))
        if not args.quick:  # rewritten after each estimator: partial runs count
            os.makedirs(OUT, exist_ok=True)
            write_rst(rows, n, d, time.perf_counter() - start)


if __name__ == "__main__":
    main()
