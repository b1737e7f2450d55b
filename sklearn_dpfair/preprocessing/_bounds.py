# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Public per-column bounds and the public candidate grids built from them.

A transformer's bounds are public: the user declares them (a census range,
a unit's physical limits) or spends budget on private quantiles to choose
them (:mod:`._quantiles`). The candidate grid of a private quantile must be
public too; :func:`bounded_grid` builds it from the bounds alone, dense in
both linear and logarithmic scale so that a loose range (income in
``[0, 1e7]``) still resolves a median of 5e4 to a few percent: the
exponential mechanism pays ``log(#candidates)`` in rank error, not the
width of the range (Smith, 2011; Gillenwater, Joseph and Kulesza, 2021).
"""

import numpy as np

__all__ = [
    "AUTO_GRID",
    "AUTO_RANGE",
    "bounded_grid",
    "bounds_linspace",
    "centre_and_half_width",
    "check_bounds",
    "tiny_exponent",
]

#: The public range of ``bounds="auto"``: values beyond it are clipped.
AUTO_RANGE = (-1e8, 1e8)

_SMALLEST = np.finfo(np.float64).smallest_subnormal

# Points of each sub-grid of bounded_grid: uniform, and geometric from each
# end (relative resolution ~1.4% over 6 decades of the width).
_LINEAR_POINTS = 1001
_GEOMETRIC_POINTS = 1001
_DECADES = 6


def check_bounds(bounds, n_features, name="bounds"):
    """Per-column public ``(lower, upper)`` bounds as two float arrays.

    Parameters
    ----------
    bounds : array-like of shape (2,) or (n_features, 2)
        One pair for every column, or a pair per column.
    n_features : int
        Number of columns.
    name : str, default="bounds"
        The parameter's name, for messages.

    Returns
    -------
    lower, upper : ndarray of shape (n_features,)

    Raises
    ------
    ValueError
        If the shape is wrong, a bound is not finite or ``lower >= upper``.

    Examples
    --------
    >>> from sklearn_dpfair.preprocessing._bounds import check_bounds
    >>> check_bounds((0, 10), 2)
    (array([0., 0.]), array([10., 10.]))
    """
    if bounds is None:
        raise ValueError(
            f"{name} is required: the public (lower, upper) range of the "
            "columns, one pair for all or one per column; it is never read "
            "from the data (where a transformer offers bounds='auto', that "
            "spends part of its budget on private ones)."
        )
    try:
        b = np.asarray(bounds, dtype=np.float64)
    except OverflowError as exc:
        # A Python int beyond float64 (10**400): not shown, as its digits
        # can exceed what str() of an int may print.
        raise ValueError(
            f"{name} must be finite: a bound is an integer beyond float64's "
            "range (about 1.8e308)."
        ) from exc
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"{name} must be numeric (lower, upper) pairs, got {bounds!r}."
        ) from exc
    if b.shape == (2,):
        b = np.tile(b, (n_features, 1))
    if b.shape != (n_features, 2):
        raise ValueError(
            f"{name} must have shape (2,) or (n_features, 2) = ({n_features}, 2), "
            f"got {b.shape}."
        )
    if not np.isfinite(b).all():
        raise ValueError(f"{name} must be finite.")
    if not (b[:, 0] < b[:, 1]).all():
        raise ValueError(f"{name} must have lower < upper in every column.")
    return b[:, 0].copy(), b[:, 1].copy()


def centre_and_half_width(lower, upper):
    """Midpoint and half-width of public bounds: ``x = centre + half * u``, ``u`` in [-1, 1].

    Both are finite for all finite bounds: ``upper - lower`` overflows for
    bounds such as ``(-1e308, 1e308)`` (its statistics were then -inf and
    NaN), the halves never do. Halving is exact for normal floats, so
    ``lower / 2 + upper / 2`` is ``(lower + upper) / 2`` rounded once, as
    before, wherever the latter is finite. The half-width is at least the
    smallest float: bounds one subnormal apart would halve to 0 (and
    divide by it).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.preprocessing._bounds import centre_and_half_width
    >>> centre_and_half_width(np.array([0.0]), np.array([10.0]))
    (array([5.]), array([5.]))
    >>> centre_and_half_width(np.array([-1e308]), np.array([1e308]))
    (array([0.]), array([1.e+308]))
    """
    lower, upper = (
        np.asarray(lower, dtype=np.float64),
        np.asarray(upper, dtype=np.float64),
    )
    centre = lower / 2.0 + upper / 2.0
    half = np.maximum(upper / 2.0 - lower / 2.0, _SMALLEST)
    return centre, half


#: Magnitudes below this are computed in rescaled units (:func:`tiny_exponent`).
_TINY = 2.0**-900


def tiny_exponent(values):
    """A power-of-two exponent that brings tiny public values to order 1, or 0.

    Interpolation and B-splines divide by differences of knots; knots a
    subnormal apart (bounds such as ``(0, 1e-300)``) make those quotients
    overflow, and every output NaN. Both maps are invariant under scaling
    their inputs and knots together, and scaling by a power of two is exact
    (short of overflow, which values brought below 1 cannot reach): values
    whose largest magnitude is below ``2**-900`` are computed times
    ``2**k``, with their largest magnitude in ``[0.5, 1)``. Any other
    values get ``k = 0`` and are computed as they are.

    Parameters
    ----------
    values : array-like
        Public values (bounds, released knots or quantiles).

    Returns
    -------
    k : int

    Examples
    --------
    >>> from sklearn_dpfair.preprocessing._bounds import tiny_exponent
    >>> tiny_exponent([0.0, 10.0]), tiny_exponent([0.0, 1e-300])
    (0, 996)
    """
    largest = float(np.max(np.abs(values)))
    if largest == 0.0 or largest >= _TINY:
        return 0
    return -int(np.frexp(largest)[1])


def bounds_linspace(lower, upper, num):
    """``numpy.linspace(lower, upper, num)``, finite however wide the bounds.

    ``linspace`` steps by ``(upper - lower) / (num - 1)``, which overflows
    for bounds wider than the largest float; on the halves it does not, and
    doubling is exact, so the points are linspace's wherever its are finite.

    Examples
    --------
    >>> from sklearn_dpfair.preprocessing._bounds import bounds_linspace
    >>> bounds_linspace(-1e308, 1e308, 3)
    array([-1.e+308,  0.e+000,  1.e+308])
    """
    # linspace's last step can round past the largest float before it sets
    # the end point; doubled, a point an ulp past the largest float's half
    # would overflow: the bounds hold it back.
    with np.errstate(over="ignore"):
        points = np.linspace(np.divide(lower, 2.0), np.divide(upper, 2.0), num)
        return np.clip(2.0 * points, lower, upper)


def bounded_grid(lower, upper):
    """Public sorted candidates in ``[lower, upper]``, fine in linear and log scale.

    The union of a uniform grid, geometric grids from each end (down to a
    millionth of the width), and a symmetric geometric grid around 0 when 0
    lies inside. It depends on the bounds only.

    Parameters
    ----------
    lower, upper : float
        Public bounds, ``lower < upper``.

    Returns
    -------
    grid : ndarray
        Sorted, unique, within ``[lower, upper]``, both ends included.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair.preprocessing._bounds import bounded_grid
    >>> grid = bounded_grid(0.0, 1e7)
    >>> bool(grid[0] == 0 and grid[-1] == 1e7)
    True
    >>> near = grid[np.argmin(np.abs(grid - 5e4))]
    >>> bool(abs(near / 5e4 - 1) < 0.02)
    True
    """
    lower, upper = float(lower), float(upper)
    # Computed on halves (then doubled, exactly) so that bounds wider than
    # the largest float give a finite grid: the same points otherwise.
    half_steps = (upper / 2.0 - lower / 2.0) * np.geomspace(
        10.0**-_DECADES, 1.0, _GEOMETRIC_POINTS
    )
    parts = [
        bounds_linspace(lower, upper, _LINEAR_POINTS),
        2.0 * (lower / 2.0 + half_steps),
        2.0 * (upper / 2.0 - half_steps),
    ]
    if lower < 0.0 < upper:
        around_zero = max(-lower, upper) * np.geomspace(
            10.0**-_DECADES, 1.0, _GEOMETRIC_POINTS
        )
        parts += [around_zero, -around_zero, [0.0]]
    grid = np.unique(np.concatenate(parts))
    return grid[(grid >= lower) & (grid <= upper)]


#: Candidates of ``bounds="auto"``: signed, 1e-8 to 1e8 in magnitude, 50 a
#: decade, and 0.
AUTO_GRID = np.unique(
    np.concatenate([-np.geomspace(1e-8, 1e8, 801), [0.0], np.geomspace(1e-8, 1e8, 801)])
)
