# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""The counts a fit divides by, samples at or tunes from: the one convention.

A private fit reads counts: it divides a noisy sum by the number of records
(DP-SGD by its expected batch ``q n``, the semi-DP solvers by the number of
private rows), derives its sampling rate from it (``q = batch_size / n``)
and tunes from it (the semi-DP ``alpha`` and step schedule). Under
replace-one adjacency the count is the same in both neighbouring datasets.
Under add/remove it is not, and the package follows the common convention
of DP-SGD implementations: the count is **treated as public**. The
accounted mechanism is the noisy sum; what is derived from the count is
computed on the count of the data at hand. The cost of the convention is
quantified in the User Guide ("Counts treated as public"): the released
average of one step at a claimed ``epsilon = 1`` has a true add/remove
``epsilon`` of 2.2 (large ``n``) to 3 or more (``n = 20``).

An estimator may instead take every such count as a *declared* public
value (``SemiDPLinearRegression(n_private=...)``): then no count is read
from the data, and its record says so (:func:`adjacency_text`).
"""

__all__ = ["COUNTS_TREATED_AS_PUBLIC", "adjacency_text"]

#: How every record states the convention under add/remove adjacency.
COUNTS_TREATED_AS_PUBLIC = "n treated as public"

_ADJACENCY = {
    "add_remove": "adding or removing one record",
    "replace_one": "replacing one record",
}


def adjacency_text(adjacency, declared_counts=()):
    """The neighbouring relation as a record's summary states it.

    Parameters
    ----------
    adjacency : {"add_remove", "replace_one"}
    declared_counts : tuple of (str, int) pairs, default=()
        The counts the fit took as declared public values (parameter name,
        value) instead of reading them from the data. Empty: the counts are
        read from the data (treated as public under add/remove; under
        replace-one they are the same in both neighbours).

    Returns
    -------
    text : str

    Examples
    --------
    >>> from sklearn_dpfair.privacy._counts import adjacency_text
    >>> adjacency_text("add_remove")
    'adding or removing one record (n treated as public)'
    >>> adjacency_text("add_remove", (("n_private", 1000),))
    'adding or removing one record (counts declared public: n_private=1000; no count is read from the data)'
    """
    if declared_counts:
        declared = ", ".join(f"{name}={value}" for name, value in declared_counts)
        counts = f"counts declared public: {declared}; no count is read from the data"
    elif adjacency == "add_remove":
        counts = COUNTS_TREATED_AS_PUBLIC
    else:
        counts = "n public"
    return f"{_ADJACENCY[adjacency]} ({counts})"
