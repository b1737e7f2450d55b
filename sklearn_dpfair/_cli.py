# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Command line: ``sklearn-dpfair demo`` / ``python -m sklearn_dpfair demo``."""

import argparse

__all__ = ["main"]


def main(argv=None):
    """Entry point of the ``sklearn-dpfair`` command.

    Parameters
    ----------
    argv : list of str, default=None
        Arguments (``sys.argv[1:]`` when None).

    Returns
    -------
    status : int
        Exit status (0 on success).
    """
    parser = argparse.ArgumentParser(
        prog="sklearn-dpfair",
        description="Differentially private and fair estimators for scikit-learn.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser(
        "demo", help="train private models on the bundled UCI Adult data"
    )
    demo.add_argument(
        "--epsilon",
        type=float,
        nargs="+",
        default=None,
        help="privacy budgets to train at (default: 0.1 1 4)",
    )
    demo.add_argument(
        "--seed", type=int, default=None,
        help="seed of the first run, run r uses seed + r (default: OS entropy)",
    )
    demo.add_argument(
        "--runs", type=int, default=None,
        help="fits of each private model, for a mean and spread (default: 3)",
    )
    args = parser.parse_args(argv)
    if args.command == "demo":
        from ._demo import DEFAULT_EPSILONS, N_RUNS, run_demo

        run_demo(
            epsilons=args.epsilon or DEFAULT_EPSILONS,
            random_state=args.seed,
            n_runs=N_RUNS if args.runs is None else args.runs,
        )
    return 0
