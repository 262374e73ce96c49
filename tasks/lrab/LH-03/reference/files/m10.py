"""Pipeline stage 10: calibration line."""


def calc_fit(xs, ys):
    """Fit y = slope * x + intercept by ordinary least squares and return the intercept.

    xs and ys have the same length (at least two) and xs are not all equal.
    """
    n = len(xs)
    mx = sum(xs) / n
    my = sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    slope = sxy / sxx
    coeffs = [slope, my - slope * mx]
    return coeffs[1]
