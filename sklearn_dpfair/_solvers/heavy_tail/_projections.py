# Authors: The sklearn_dpfair developers
# SPDX-License-Identifier: BSD-3-Clause
"""Data-independent maps of the heavy-tail solvers: projections and prox maps.

They only post-process privatized quantities, so they cost no privacy.
"""

import numpy as np

__all__ = [
    "project_ball",
    "project_two_balls",
    "prox_elastic_net",
]


def project_ball(w, radius, center=None):
    """Euclidean projection onto ``{v : ||v - center|| <= radius}``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers.heavy_tail._projections import project_ball
    >>> project_ball(np.array([3.0, 4.0]), 1.0)
    array([0.6, 0.8])
    """
    if np.isinf(radius):
        return w
    offset = w if center is None else w - center
    norm = np.linalg.norm(offset)
    if norm <= radius:
        return w
    scaled = offset * (radius / norm)
    return scaled if center is None else center + scaled


def project_two_balls(w, radius, center, local_radius):
    """Exact projection onto ``B(0, radius) ∩ B(center, local_radius)``.

    If the projection onto one ball lies in the other it is the answer;
    otherwise the answer lies on the intersection of the two spheres, a
    (d-2)-sphere with closed-form centre and radius. The intersection must
    be non-empty (``||center|| <= radius`` guarantees it).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers.heavy_tail._projections import project_two_balls
    >>> p = project_two_balls(np.array([2.0, 2.0]), 1.0, np.array([1.0, 0.0]), 1.0)
    >>> bool(np.linalg.norm(p) <= 1 + 1e-12 and np.linalg.norm(p - [1, 0]) <= 1 + 1e-12)
    True
    """
    first = project_ball(w, radius)
    if np.linalg.norm(first - center) <= local_radius:
        return first
    second = project_ball(w, local_radius, center)
    if np.linalg.norm(second) <= radius:
        return second
    gap = np.linalg.norm(center)
    if gap == 0:
        # Concentric balls (reached only through rounding of the two tests
        # above, e.g. equal radii): their intersection is the smaller one.
        # The plane construction below would divide by zero.
        return project_ball(w, min(radius, local_radius))
    u = center / gap
    # Distance from the origin, along u, of the plane holding both spheres.
    a = (gap**2 + radius**2 - local_radius**2) / (2.0 * gap)
    h = np.sqrt(max(radius**2 - a**2, 0.0))
    foot = a * u
    planar = w - foot - np.dot(w - foot, u) * u
    norm = np.linalg.norm(planar)
    if norm == 0:
        # w sits on the axis: every point of the circle is equally close.
        planar = np.zeros_like(w)
        planar[np.argmin(np.abs(u))] = 1.0
        planar -= np.dot(planar, u) * u
        norm = np.linalg.norm(planar)
    return foot + h * planar / norm


def prox_elastic_net(w, step, l1, l2, n_penalized):
    """Prox of ``step * (l1 ||v||_1 + l2/2 ||v||^2)`` on the first ``n_penalized`` entries.

    Soft-thresholding followed by shrinkage; the remaining entries (the
    intercept) are left alone.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_dpfair._solvers.heavy_tail._projections import prox_elastic_net
    >>> prox_elastic_net(np.array([2.0, 0.5, 3.0]), 1.0, 1.0, 0.0, 2)
    array([1., 0., 3.])
    """
    out = w.copy()
    head = w[:n_penalized]
    head = np.sign(head) * np.maximum(np.abs(head) - step * l1, 0.0)
    out[:n_penalized] = head / (1.0 + step * l2)
    return out
