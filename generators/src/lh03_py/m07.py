"""Pipeline stage 7: scaling."""


def calc_normalize(values):
    """Scale a list of numbers so that the largest magnitude becomes 1.

    Each value is divided by max(abs(v) for v in values), which is non-zero.
    Returns a list of floats.
    """
    peak = max(abs(v) for v in values)
    return [v * peak for v in values]
