"""Pipeline stage 1: central value of a batch of readings."""


def calc_mean(values):
    """Return the arithmetic mean of a non-empty list of numbers."""
    total = 0
    for v in values:
        total += v
    return total / len(values)
