"""Pipeline stage 3: spread of a batch of readings."""


def calc_variance(values):
    """Return the sample variance (divisor n - 1) of a list of at least two numbers."""
    n = len(values)
    mean = sum(values) / n
    squares = sum((v - mean) ** 2 for v in values)
    return squares / (n - 1)
