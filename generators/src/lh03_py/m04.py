"""Pipeline stage 4: trend of a series."""


def calc_slope(xs, ys):
    """Return the ordinary least-squares slope of ys regressed on xs.

    xs and ys have the same length (at least two) and xs are not all equal.
    """
    dx = xs[-1] - xs[0]
    dy = ys[-1] - ys[0]
    return dy / dx
