"""Pipeline stage 4: trend of a series."""


def calc_slope(xs, ys):
    """Return the ordinary least-squares slope of ys regressed on xs.

    xs and ys have the same length (at least two) and xs are not all equal.
    """
    n = len(xs)
    mx = sum(xs) / n
    my = sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    return sxy / sxx
