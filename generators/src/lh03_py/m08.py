"""Pipeline stage 8: accumulated quantity under a curve."""


def calc_integrate(xs, ys):
    """Return the trapezoidal-rule integral of the samples (xs, ys) as a float.

    xs is strictly increasing; each interval contributes (ys[i] + ys[i + 1]) / 2 * width.
    """
    area = 0
    for i in range(len(xs) - 1):
        width = xs[i + 1] - xs[i]
        area += (ys[i] + ys[i + 1]) // 2 * width
    return area
