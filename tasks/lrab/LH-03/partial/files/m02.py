"""Pipeline stage 2: robust central value of a batch of readings."""


def calc_median(values):
    """Return the median of a non-empty list of numbers.

    For an odd count this is the middle element of the sorted values; for an even count it is
    the mean of the two middle elements.
    """
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2 == 1:
        return float(ordered[mid])
    return (ordered[mid - 1] + ordered[mid]) / 2
