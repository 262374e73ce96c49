"""Pipeline stage 9: zero crossings of a sampled signal."""


def calc_roots(xs, ys):
    """Return the zero crossings of the piecewise-linear curve through (xs, ys).

    xs is strictly increasing and no y is exactly zero. Wherever two neighbouring samples have
    opposite signs, the crossing position is found by linear interpolation between them.
    Returns the positions as a list of floats in increasing order.
    """
    roots = []
    for i in range(1, len(ys) - 1):
        if (ys[i] < 0) != (ys[i + 1] < 0):
            roots.append(xs[i] - ys[i] * (xs[i + 1] - xs[i]) / (ys[i + 1] - ys[i]))
    return roots
