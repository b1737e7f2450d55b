# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Command line: ``sklearn-dpfair demo`` / ``python -m sklearn_dpfair demo``."""

import argparse
import math

__all__ = ["main"]


def _positive_budget(text):
    """An epsilon: a positive number, ``inf`` included (argparse type)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if math.isnan(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number")
    return value


#: The largest seed the estimators take (numpy's legacy seeds are 32-bit).
MAX_SEED = 2**32 - 1


def _count(minimum, maximum=None):
    """An integer in ``[minimum, maximum]`` (argparse type)."""

    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{text!r} is below {minimum}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"{text!r} is above {maximum}")
        return value

    return parse


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
        type=_positive_budget,
        nargs="+",
        default=None,
        help="privacy budgets to train at (default: 0.1 1 4)",
    )
    demo.add_argument(
        "--seed", type=_count(0, MAX_SEED), default=None,
        help="seed of the first run, run r uses seed + r (default: OS entropy)",
    )
    demo.add_argument(
        "--runs", type=_count(1), default=None,
        help="fits of each private model, for a mean and spread (default: 3)",
    )
    args = parser.parse_args(argv)
    if args.command == "demo":
        from ._demo import DEFAULT_EPSILONS, N_RUNS, DemoBudgetError, run_demo

        n_runs = N_RUNS if args.runs is None else args.runs
        # Run r uses seed + r: the last one must still be a seed.
        if args.seed is not None and args.seed + n_runs - 1 > MAX_SEED:
            demo.error(
                f"--seed {args.seed} with {n_runs} runs goes past {MAX_SEED} "
                "(run r uses seed + r)"
            )
        try:
            # run_demo plans every private model before it reads a row, so
            # a budget without a plan is refused before any work.
            run_demo(
                epsilons=args.epsilon or DEFAULT_EPSILONS,
                random_state=args.seed,
                n_runs=n_runs,
            )
        except DemoBudgetError as exc:
            demo.error(_budget_usage(exc))
    return 0


def _budget_usage(exc):
    """The usage error of an ``--epsilon`` that a demo row cannot be planned at."""
    from ._demo import SMALLEST_EPSILON

    return (
        f"argument --epsilon: the demo's {exc.row_name!r} has no privacy plan "
        f"at epsilon {exc.epsilon:g}; use --epsilon {SMALLEST_EPSILON:g} or "
        "more"
    )
