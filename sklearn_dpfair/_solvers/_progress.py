# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Progress lines of a long fit (``verbose=``), from released values only.

scikit-learn's convention: with ``verbose > 0`` a fit prints one line per
epoch (or outer iteration) to stdout, with a loss proxy and the elapsed
time. A private fit may print only what it releases anyway: the proxy is
the norm of a released noisy gradient (or of the released update divided
by the step size), post-processing of the releases, so printing it costs no
privacy. No unreleased value (a loss, an accuracy, a clip count) is ever
printed. Solvers take a :class:`Progress` (or None) and call it once per
step; it prints once per ``every`` steps.
"""

import dataclasses
import math
import sys
import time

from ..utils._array_api import array_namespace

__all__ = ["Progress", "progress_printer"]


@dataclasses.dataclass
class Progress:
    """Print ``[name] unit k: released-gradient norm g, t s`` every ``every`` steps.

    Parameters
    ----------
    name : str
        Prefix of each line (the estimator's class name).
    unit : str
        What one line counts ("epoch", "Newton step").
    every : int, default=1
        Steps per line (the steps of one epoch for minibatch SGD).
    total : int or None, default=None
        The last step, always reported (it may end a partial epoch).
    stream : file-like or None, default=None
        Where lines go; None is ``sys.stdout`` at call time.
    lines : int or None, default=None
        Set by :meth:`per`: the number of lines over ``total`` steps, line
        ``k`` at the first step at or past ``k total / lines`` (an epoch of
        a non-whole number of steps ends mid-step).
    label_steps : bool, default=False
        Label a line by its step (rows visited) rather than its line number.

    Examples
    --------
    >>> from sklearn_dpfair._solvers._progress import Progress
    >>> progress = Progress("Model", "epoch", every=2, total=5, clock=lambda: 0.0)
    >>> for step in range(1, 6):
    ...     progress(step, 0.5)
    [Model] epoch 1: released-gradient norm 0.5, 0.00 s
    [Model] epoch 2: released-gradient norm 0.5, 0.00 s
    [Model] epoch 3: released-gradient norm 0.5, 0.00 s

    Three epochs of 7 steps in all (each 2.33 steps) print three lines:

    >>> progress = progress.per(7, 3)
    >>> for step in range(1, 8):
    ...     progress(step, 0.5)
    [Model] epoch 1: released-gradient norm 0.5, 0.00 s
    [Model] epoch 2: released-gradient norm 0.5, 0.00 s
    [Model] epoch 3: released-gradient norm 0.5, 0.00 s
    """

    name: str
    unit: str
    every: int = 1
    total: int | None = None
    stream: object = None
    clock: object = time.perf_counter
    lines: int | None = None
    label_steps: bool = False

    def __post_init__(self):
        self.start = self.clock()

    def per(self, n_steps, n_lines):
        """The same printer for ``n_steps`` steps in ``n_lines`` lines.

        ``every`` is the steps per line rounded up, for callers that
        accumulate between lines.
        """
        n_lines = max(1, int(n_lines))
        every = max(1, math.ceil(n_steps / n_lines))
        return dataclasses.replace(
            self, every=every, total=int(n_steps), lines=n_lines
        )

    def _line(self, step):
        """Line number that step ``step`` (1-based) prints, or None."""
        if self.lines is None or not self.total:
            if step % self.every and step != self.total:
                return None
            return -(-step // self.every)
        reached = step * self.lines // self.total
        if reached > (step - 1) * self.lines // self.total:
            return reached
        return max(reached, 1) if step == self.total else None

    def reports(self, step):
        """Whether step ``step`` (1-based) prints a line."""
        return self._line(step) is not None

    def moved(self, step, before, after, learning_rate):
        """Report step ``step`` with the released update's norm over the step size.

        ``before`` and ``after`` are the parameters around the step, as
        matching sequences of arrays of one array-API namespace (``(coef,
        intercept)``, or a network's layers); the norm is computed only for a
        step that prints.
        """
        if not self.reports(step):
            return
        xp = array_namespace(before[0])
        moved = sum(float(xp.sum((new - old) ** 2)) for new, old in zip(after, before))
        self(step, math.sqrt(moved) / learning_rate)

    def __call__(self, step, proxy):
        """Report step ``step`` (1-based) with the released proxy ``proxy``."""
        line = self._line(step)
        if line is None:
            return
        stream = sys.stdout if self.stream is None else self.stream
        elapsed = self.clock() - self.start
        label = step if self.label_steps else line
        print(
            f"[{self.name}] {self.unit} {label}: "
            f"released-gradient norm {proxy:.4g}, {elapsed:.2f} s",
            file=stream,
            flush=True,
        )


def progress_printer(verbose, name, unit):
    """A :class:`Progress` when ``verbose > 0``, else None (no cost).

    Examples
    --------
    >>> from sklearn_dpfair._solvers._progress import progress_printer
    >>> progress_printer(0, "Model", "epoch") is None
    True
    """
    if not verbose:
        return None
    return Progress(name, unit)
