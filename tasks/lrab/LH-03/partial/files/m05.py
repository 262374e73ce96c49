"""Pipeline stage 5: resampling a series onto new positions."""


def calc_interp(xs, ys, queries):
    """Linearly interpolate the points (xs, ys) at each query position.

    xs is strictly increasing and every query lies within [xs[0], xs[-1]]. Returns a list of
    floats, one per query, in the order of the queries.
    """
    result = []
    for q in queries:
        value = None
        for i in range(len(xs) - 1):
            if xs[i] <= q <= xs[i + 1]:
                t = (q - xs[i]) / (xs[i + 1] - xs[i])
                value = ys[i] + t * (ys[i + 1] - ys[i])
                break
        result.append(value)
    return result
